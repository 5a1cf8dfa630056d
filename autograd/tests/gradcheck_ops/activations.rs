//! Activations, softmax and log_softmax over every dim, glu.

use oxtorch_tensor::{DType, Tensor};

use crate::common::*;

/// The `activations` cases.
pub fn activations_cases() -> Vec<Case> {
    let s = [2, 4];
    vec![
        case("relu", vec![away(&s, 1)], |x| x[0].relu()),
        case("relu6", vec![avoid(&s, -2.0, 8.0, &[0.0, 6.0], 2)], |x| x[0].relu6()),
        case("leaky_relu", vec![away(&s, 3)], |x| x[0].leaky_relu(0.1)),
        case("elu", vec![away(&s, 4)], |x| x[0].elu(1.0)),
        case("elu_alpha", vec![away(&s, 5)], |x| x[0].elu(0.5)),
        case("selu", vec![away(&s, 6)], |x| x[0].selu()),
        case("celu", vec![away(&s, 7)], |x| x[0].celu(0.7)),
        case("gelu", vec![smooth(&s, 8)], |x| x[0].gelu("none")),
        case("gelu_tanh", vec![smooth(&s, 9)], |x| x[0].gelu("tanh")),
        case("silu", vec![smooth(&s, 10)], |x| x[0].silu()),
        case("mish", vec![smooth(&s, 11)], |x| x[0].mish()),
        case("softplus", vec![smooth(&s, 12)], |x| x[0].softplus(1.0, 20.0)),
        // beta * x crosses the threshold inside the input range.
        case("softplus_threshold", vec![avoid(&s, -2.0, 2.0, &[0.5], 13)], |x| x[0].softplus(2.0, 1.0)),
        case("hardtanh", vec![avoid(&s, -2.0, 2.0, &[-0.5, 0.8], 14)], |x| x[0].hardtanh(-0.5, 0.8)),
        case("hardsigmoid", vec![avoid(&s, -5.0, 5.0, &[-3.0, 3.0], 15)], |x| x[0].hardsigmoid()),
        case("hardswish", vec![avoid(&s, -5.0, 5.0, &[-3.0, 3.0], 16)], |x| x[0].hardswish()),
        case("glu_last", vec![smooth(&s, 17)], |x| x[0].glu(-1)),
        case("glu_first", vec![smooth(&[4, 3], 18)], |x| x[0].glu(0)),
        case("sigmoid_noncontiguous", vec![smooth(&[4, 2], 19)], |x| x[0].t()?.sigmoid()),
    ]
}

#[test]
fn activations() {
    run_family("activations", Check::Grad);
}

/// The `softmax_family` cases.
pub fn softmax_family_cases() -> Vec<Case> {
    let s = [2, 3, 4];
    let mut cases = Vec::new();
    for (k, d) in [0isize, 1, 2, -1].into_iter().enumerate() {
        let seed = 10 + k as u64;
        cases.push(case(&format!("softmax_dim{d}"), vec![smooth(&s, seed)], move |x| x[0].softmax(d, None)));
        cases.push(case(&format!("log_softmax_dim{d}"), vec![smooth(&s, seed + 10)], move |x| {
            x[0].log_softmax(d, None)
        }));
    }
    cases.push(case("softmax_dtype", vec![smooth(&[3, 4], 1)], |x| x[0].softmax(1, Some(DType::F64))));
    cases.push(case("log_softmax_noncontiguous", vec![smooth(&[4, 3], 2)], |x| {
        x[0].t()?.log_softmax(1, None)
    }));
    cases.push(case(
        "softmax_weighted",
        vec![smooth(&[3, 4], 3), constant(&[3, 4], 4).requires_grad_(false).unwrap()],
        |x| x[0].softmax(-1, None)?.mul(&x[1]),
    ));
    cases.push(case("softmax_0d", vec![leaf(Tensor::from_slice(&[0.7f64], ()).unwrap())], |x| {
        x[0].softmax(0, None)
    }));
    cases
}

#[test]
fn softmax_family() {
    run_family("softmax_family", Check::Grad);
}
