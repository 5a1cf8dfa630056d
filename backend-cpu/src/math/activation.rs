//! Pointwise activation functions on float inputs (f16/bf16 compute in f32).

use oxtorch_core::ops::UnaryOp;
use oxtorch_core::{BackendStorage, Error, Layout, Result};

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

/// `grad * gelu_tanh'(x)` in one pass, with the formula and the order of operations of the composed
/// gradient (`s = sigmoid(2k(x + c x³))`, `s·(1 - x(s - 1)·w)` with `w = 2k(1 + 3c x²)`), so f32 and
/// f64 give its values bit for bit; f16/bf16 compute in f32 and round once.
pub(crate) fn gelu_tanh_backward(
    (g, lg): (&CpuStorage, &Layout),
    (x, lx): (&CpuStorage, &Layout),
) -> Result<CpuStorage> {
    if lg.dims() != lx.dims() {
        return Err(Error::shape(format!(
            "gelu_backward: grad {} and input {} differ",
            lg.shape(),
            lx.shape()
        )));
    }
    fn run<T: Float>(g: &[T], lg: &Layout, x: &[T], lx: &Layout) -> CpuStorage {
        type A<T> = <T as Float>::Acc;
        let c = |v: f64| A::<T>::from_f64(v);
        let k = (2.0 / std::f64::consts::PI).sqrt();
        let (a, b) = (c(2.0 * k * 0.044715), c(2.0 * k));
        let (ma, mb, one) = (c(-6.0 * k * 0.044715), c(-2.0 * k), A::<T>::ONE);
        CpuStorage::from_vec(crate::walk::map2(g, lg, x, lx, move |g: T, x: T| {
            let (g, x) = (g.to_acc(), x.to_acc());
            let x2 = x * x;
            let u = (x2 * a + b) * x;
            let s = one / (one + (-u).exp_fast());
            let minus_w = x2 * ma + mb;
            T::from_acc(g * ((((s - one) * x) * minus_w + one) * s))
        }))
    }
    match (g, x) {
        (CpuStorage::F32(g), CpuStorage::F32(x)) => Ok(run(g, lg, x, lx)),
        (CpuStorage::F64(g), CpuStorage::F64(x)) => Ok(run(g, lg, x, lx)),
        (CpuStorage::F16(g), CpuStorage::F16(x)) => Ok(run(g, lg, x, lx)),
        (CpuStorage::BF16(g), CpuStorage::BF16(x)) => Ok(run(g, lg, x, lx)),
        (g, x) if g.dtype() != x.dtype() => Err(Error::msg(format!(
            "gelu_backward: expected one dtype, got {} and {}",
            g.dtype().name(),
            x.dtype().name()
        ))),
        (_, x) => Err(Error::UnsupportedDType { op: "gelu_backward", dtype: x.dtype() }),
    }
}
