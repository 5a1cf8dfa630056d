//! Pointwise activation functions on float inputs (f16/bf16 compute in f32).

use oxtorch_core::ops::UnaryOp;
use oxtorch_core::Layout;

use crate::float::{AccFloat, Float};
use crate::storage::CpuStorage;
use crate::walk::map1;

/// `min(max(x, lo), hi)` with NaN propagating (torch's clamp).
#[inline(always)]
fn clamp<A: AccFloat>(x: A, lo: A, hi: A) -> A {
    let y = if x < lo { lo } else { x };
    if y > hi {
        hi
    } else {
        y
    }
}

/// Runs an activation `UnaryOp` over a float view (the caller routes only activations here).
pub(crate) fn float_activation<T: Float>(op: UnaryOp, v: &[T], l: &Layout) -> CpuStorage {
    type A<T> = <T as Float>::Acc;
    let c = |x: f64| A::<T>::from_f64(x);
    let (zero, one, half) = (A::<T>::ZERO, A::<T>::ONE, c(0.5));
    macro_rules! m {
        ($f:expr) => {{
            let f = $f;
            CpuStorage::from_vec(map1(v, l, move |x: T| T::from_acc(f(x.to_acc()))))
        }};
    }
    match op {
        UnaryOp::LeakyRelu(slope) => {
            let s = c(slope);
            m!(move |x: A<T>| if x > zero { x } else { x * s })
        }
        UnaryOp::Elu { alpha, scale, input_scale } => {
            let (neg, pos, inp) = (c(alpha * scale), c(scale), c(input_scale));
            m!(move |x: A<T>| if x <= zero { (x * inp).exp_m1() * neg } else { x * pos })
        }
        UnaryOp::Gelu => {
            let k = c(std::f64::consts::FRAC_1_SQRT_2);
            m!(move |x: A<T>| x * half * (one + (x * k).erf_gelu()))
        }
        UnaryOp::GeluTanh => {
            // ½x(1 + tanh u) = x / (1 + e^(-2u)): the same function, without tanh's libm call.
            let (k2, b) = (c(-2.0 * (2.0 / std::f64::consts::PI).sqrt()), c(0.044715));
            m!(move |x: A<T>| x / (one + (k2 * (x + b * x * x * x)).exp_fast()))
        }
        UnaryOp::Silu => m!(move |x: A<T>| x / (one + (-x).exp_fast())),
        // tanh(ln(1 + n)) = n(n + 2) / (n(n + 2) + 2) with n = e^x; past x = 20 the factor is 1 in
        // every float type (and n(n + 2) would overflow f32).
        UnaryOp::Mish => {
            let (two, cap) = (c(2.0), c(20.0));
            m!(move |x: A<T>| {
                let n = (if x < cap { x } else { cap }).exp_fast();
                let q = n * (n + two);
                x * q / (q + two)
            })
        }
        UnaryOp::Softplus { beta, threshold } => {
            let (b, t) = (c(beta), c(threshold));
            m!(move |x: A<T>| if x * b > t { x } else { (x * b).exp().ln_1p() / b })
        }
        UnaryOp::Hardtanh { min, max } => {
            let (lo, hi) = (c(min), c(max));
            m!(move |x: A<T>| clamp(x, lo, hi))
        }
        UnaryOp::Hardsigmoid => {
            let (three, six) = (c(3.0), c(6.0));
            m!(move |x: A<T>| clamp(x + three, zero, six) / six)
        }
        UnaryOp::Hardswish => {
            let (three, six) = (c(3.0), c(6.0));
            m!(move |x: A<T>| x * clamp(x + three, zero, six) / six)
        }
        other => unreachable!("{} is not an activation", other.name()),
    }
}
