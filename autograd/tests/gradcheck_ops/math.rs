//! Elementwise math: unary functions, binary ops with broadcasting, clamp, lerp, pow.

use oxtorch_tensor::{Operand, Result, Tensor};

use crate::common::*;

/// A unary case: `name`, input, op.
fn unary(name: &str, x: Tensor, f: fn(&Tensor) -> Result<Tensor>) -> Case {
    case(name, vec![x], move |xs| f(&xs[0]))
}

/// The `unary_math` cases.
pub fn unary_math_cases() -> Vec<Case> {
    let s = [2, 3];
    vec![
        unary("abs", away(&s, 1), Tensor::abs),
        unary("neg", smooth(&s, 2), Tensor::neg),
        unary("square", smooth(&s, 3), Tensor::square),
        unary("sqrt", pos(&s, 4), Tensor::sqrt),
        unary("rsqrt", pos(&s, 5), Tensor::rsqrt),
        unary("reciprocal", away(&s, 6), Tensor::reciprocal),
        unary("exp", smooth(&s, 7), Tensor::exp),
        unary("exp2", smooth(&s, 8), Tensor::exp2),
        unary("expm1", smooth(&s, 9), Tensor::expm1),
        unary("log", pos(&s, 10), Tensor::log),
        unary("log2", pos(&s, 11), Tensor::log2),
        unary("log10", pos(&s, 12), Tensor::log10),
        unary("log1p", uniform(&s, -0.5, 2.0, 13), Tensor::log1p),
        unary("sin", smooth(&s, 14), Tensor::sin),
        unary("cos", smooth(&s, 15), Tensor::cos),
        unary("tan", uniform(&s, -1.2, 1.2, 16), Tensor::tan),
        unary("asin", uniform(&s, -0.9, 0.9, 17), Tensor::asin),
        unary("acos", uniform(&s, -0.9, 0.9, 18), Tensor::acos),
        unary("atan", smooth(&s, 19), Tensor::atan),
        unary("sinh", smooth(&s, 20), Tensor::sinh),
        unary("cosh", smooth(&s, 21), Tensor::cosh),
        unary("tanh", smooth(&s, 22), Tensor::tanh),
        unary("asinh", smooth(&s, 23), Tensor::asinh),
        unary("acosh", uniform(&s, 1.2, 3.0, 24), Tensor::acosh),
        unary("atanh", uniform(&s, -0.9, 0.9, 25), Tensor::atanh),
        unary("erf", smooth(&s, 26), Tensor::erf),
        unary("erfc", smooth(&s, 27), Tensor::erfc),
        unary("erfinv", uniform(&s, -0.9, 0.9, 28), Tensor::erfinv),
        unary("sigmoid", smooth(&s, 29), Tensor::sigmoid),
        case("logit", vec![uniform(&s, 0.1, 0.9, 30)], |x| x[0].logit(None)),
        // Inside and outside [eps, 1 - eps]: clamped entries get zero gradient.
        case("logit_eps", vec![leaf(t(&[0.02, 0.3, 0.5, 0.7, 0.97, 0.99], &s))], |x| x[0].logit(Some(0.05))),
        case("nan_to_num", vec![smooth(&s, 31)], |x| x[0].nan_to_num(Some(0.0), None, None)),
        // Piecewise constant away from their jumps: zero gradient, as torch.
        unary("sign", away(&s, 32), Tensor::sign),
        unary("floor", off_grid(&s, 33), Tensor::floor),
        unary("ceil", off_grid(&s, 34), Tensor::ceil),
        unary("round", off_grid(&s, 35), Tensor::round),
        unary("trunc", off_grid(&s, 36), Tensor::trunc),
        case("round_decimals", vec![off_grid(&s, 37)], |x| x[0].mul(0.1)?.round_decimals(1)),
        unary("frac", off_grid(&s, 38), Tensor::frac),
        // A strided (transposed) input.
        case("exp_noncontiguous", vec![smooth(&[3, 2], 39)], |x| x[0].t()?.exp()),
        case("sin_expanded", vec![smooth(&[3], 40)], |x| x[0].expand([2, 3])?.sin()),
    ]
}

#[test]
fn unary_math() {
    run_family("unary_math", Check::Grad);
}

/// The `binary_math` cases.
pub fn binary_math_cases() -> Vec<Case> {
    let s = [2, 3];
    vec![
        case("add", vec![smooth(&s, 1), smooth(&s, 2)], |x| x[0].add(&x[1])),
        case("add_broadcast", vec![smooth(&[2, 1, 3], 3), smooth(&[4, 1], 4)], |x| x[0].add(&x[1])),
        case("add_scalar", vec![smooth(&s, 5)], |x| x[0].add(2.5)),
        case("add_scaled", vec![smooth(&s, 6), smooth(&[3], 7)], |x| x[0].add_scaled(&x[1], -1.5)),
        case("sub", vec![smooth(&s, 8), smooth(&[3], 9)], |x| x[0].sub(&x[1])),
        case("mul", vec![smooth(&s, 10), smooth(&s, 11)], |x| x[0].mul(&x[1])),
        case("mul_broadcast", vec![smooth(&[2, 1], 12), smooth(&[1, 3], 13)], |x| x[0].mul(&x[1])),
        case("mul_self", vec![smooth(&s, 14)], |x| x[0].mul(&x[0])),
        case("div", vec![smooth(&s, 15), away(&s, 16)], |x| x[0].div(&x[1])),
        case("div_scalar", vec![smooth(&s, 17)], |x| x[0].div(3.0)),
        case("rdiv_broadcast", vec![smooth(&[3], 18), away(&[2, 1], 19)], |x| x[0].div(&x[1])),
        case("pow_scalar_int", vec![smooth(&s, 20)], |x| x[0].pow(3.0)),
        case("pow_scalar_frac", vec![pos(&s, 21)], |x| x[0].pow(2.5)),
        case("pow_scalar_neg", vec![pos(&s, 22)], |x| x[0].pow(-1.5)),
        case("pow_scalar_zero", vec![smooth(&s, 23)], |x| x[0].pow(0.0)),
        case("pow_tensor", vec![pos(&s, 24), smooth(&s, 25)], |x| x[0].pow(&x[1])),
        case("pow_scalar_base", vec![smooth(&s, 26)], |x| Tensor::pow_scalar_base(2.0, &x[0])),
        case("maximum", vec![distinct(&s, 27), distinct(&s, 28)], |x| x[0].maximum(&x[1])),
        case("minimum", vec![distinct(&s, 29), distinct(&s, 30)], |x| x[0].minimum(&x[1])),
        case("maximum_broadcast", vec![distinct(&s, 31), distinct(&[3], 32)], |x| x[0].maximum(&x[1])),
        case("atan2", vec![away(&s, 33), away(&s, 34)], |x| x[0].atan2(&x[1])),
        case("hypot", vec![away(&s, 35), away(&s, 36)], |x| x[0].hypot(&x[1])),
        case("copysign", vec![away(&s, 37), away(&s, 38)], |x| x[0].copysign(&x[1])),
        // fmod/remainder are smooth away from the multiples of the divisor.
        case(
            "fmod",
            vec![
                leaf(t(&[2.3, -2.3, 5.1, -0.4, 3.5, 1.7], &s)),
                leaf(t(&[1.5, 1.5, -2.0, 0.7, -1.1, 0.8], &s)),
            ],
            |x| x[0].fmod(&x[1]),
        ),
        case("fmod_scalar", vec![leaf(t(&[2.3, -2.3, 5.1, -0.4, 3.5, 1.7], &s))], |x| x[0].fmod(1.5)),
        case(
            "remainder",
            vec![
                leaf(t(&[2.3, -2.3, 5.1, -0.4, 3.5, 1.7], &s)),
                leaf(t(&[1.5, 1.5, -2.0, 0.7, -1.1, 0.8], &s)),
            ],
            |x| x[0].remainder(&x[1]),
        ),
        case("remainder_scalar", vec![leaf(t(&[2.3, -2.3, 5.1, -0.4, 3.5, 1.7], &s))], |x| {
            x[0].remainder(-1.5)
        }),
        case("clamp", vec![avoid(&s, -2.0, 2.0, &[-0.5, 0.7], 40)], |x| {
            x[0].clamp(Some(Operand::from(-0.5)), Some(Operand::from(0.7)))
        }),
        case("clamp_min", vec![avoid(&s, -2.0, 2.0, &[0.1], 41)], |x| x[0].clamp_min(0.1)),
        case("clamp_max", vec![avoid(&s, -2.0, 2.0, &[0.1], 42)], |x| x[0].clamp_max(0.1)),
        case(
            "clamp_tensor_bounds",
            vec![
                leaf(t(&[-2.0, -0.2, 0.1, 0.4, 1.5, 0.0], &s)),
                leaf(t(&[-1.0; 3], &[3])),
                leaf(t(&[1.0, 0.5, 0.2], &[3])),
            ],
            |x| x[0].clamp(Some(Operand::from(&x[1])), Some(Operand::from(&x[2]))),
        ),
        case("clip", vec![avoid(&s, -2.0, 2.0, &[-1.0, 1.0], 43)], |x| {
            x[0].clip(Some(Operand::from(-1.0)), Some(Operand::from(1.0)))
        }),
        case("lerp_scalar", vec![smooth(&s, 44), smooth(&s, 45)], |x| x[0].lerp(&x[1], 0.3)),
        case("lerp_tensor", vec![smooth(&s, 46), smooth(&s, 47), uniform(&s, 0.0, 1.0, 48)], |x| {
            x[0].lerp(&x[1], &x[2])
        }),
        case("where", vec![smooth(&s, 49), smooth(&[3], 50)], |x| {
            Tensor::where_cond(&mask(&[true, false, true, false, false, true], &[2, 3]), &x[0], &x[1])
        }),
        case("where_scalar", vec![smooth(&s, 51)], |x| {
            Tensor::where_cond(&mask(&[true, false, true, false, false, true], &[2, 3]), &x[0], 0.5)
        }),
    ]
}

#[test]
fn binary_math() {
    run_family("binary_math", Check::Grad);
}
