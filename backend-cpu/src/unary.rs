//! Elementwise ops of one input.

use oxtorch_core::ops::UnaryOp;
use oxtorch_core::{DType, Error, Layout, Result};

use crate::float::{AccFloat, Float};
// Re-exported for the kernels that import it from here.
pub(crate) use crate::int::Int;
use crate::storage::CpuStorage;
use crate::walk::map1;

fn float_unary<T: Float>(op: UnaryOp, v: &[T], l: &Layout) -> Result<CpuStorage> {
    type A<T> = <T as Float>::Acc;
    macro_rules! m {
        ($f:expr) => {{
            let f = $f;
            CpuStorage::from_vec(map1(v, l, move |x: T| T::from_acc(f(x.to_acc()))))
        }};
    }
    Ok(match op {
        UnaryOp::Neg => m!(|x: A<T>| -x),
        UnaryOp::Abs => m!(|x: A<T>| x.abs()),
        // NaN has no sign: torch gives 0 for it.
        UnaryOp::Sign => m!(|x: A<T>| if x > A::<T>::ZERO {
            A::<T>::ONE
        } else if x < A::<T>::ZERO {
            -A::<T>::ONE
        } else {
            // NaN, and both zeros (torch's sign(-0.0) is +0.0).
            A::<T>::ZERO
        }),
        UnaryOp::Square => m!(|x: A<T>| x * x),
        UnaryOp::Exp => m!(|x: A<T>| x.exp()),
        UnaryOp::Log => m!(|x: A<T>| x.ln()),
        UnaryOp::Sqrt => m!(|x: A<T>| x.sqrt()),
        UnaryOp::Rsqrt => m!(|x: A<T>| A::<T>::ONE / x.sqrt()),
        UnaryOp::Reciprocal => m!(|x: A<T>| A::<T>::ONE / x),
        UnaryOp::Sin => m!(|x: A<T>| x.sin()),
        UnaryOp::Cos => m!(|x: A<T>| x.cos()),
        UnaryOp::Tanh => m!(|x: A<T>| x.tanh()),
        UnaryOp::Sigmoid => m!(|x: A<T>| A::<T>::ONE / (A::<T>::ONE + (-x).exp_fast())),
        // `x` unless below zero: NaN and -0.0 pass through, as torch's clamp_min(x, 0).
        UnaryOp::Relu => m!(|x: A<T>| if x < A::<T>::ZERO { A::<T>::ZERO } else { x }),
        UnaryOp::Floor => m!(|x: A<T>| x.floor()),
        UnaryOp::Ceil => m!(|x: A<T>| x.ceil()),
        UnaryOp::Round => m!(|x: A<T>| x.round_even()),
        UnaryOp::Trunc => m!(|x: A<T>| x.trunc()),
        UnaryOp::IsNan => CpuStorage::from_vec(map1(v, l, |x: T| x.is_nan_elem())),
        UnaryOp::Exp2 => m!(|x: A<T>| x.exp2()),
        UnaryOp::Expm1 => m!(|x: A<T>| x.exp_m1()),
        UnaryOp::Log2 => m!(|x: A<T>| x.log2()),
        UnaryOp::Log10 => m!(|x: A<T>| x.log10()),
        UnaryOp::Log1p => m!(|x: A<T>| x.ln_1p()),
        UnaryOp::Tan => m!(|x: A<T>| x.tan()),
        UnaryOp::Asin => m!(|x: A<T>| x.asin()),
        UnaryOp::Acos => m!(|x: A<T>| x.acos()),
        UnaryOp::Atan => m!(|x: A<T>| x.atan()),
        UnaryOp::Sinh => m!(|x: A<T>| x.sinh()),
        UnaryOp::Cosh => m!(|x: A<T>| x.cosh()),
        UnaryOp::Asinh => m!(|x: A<T>| x.asinh()),
        UnaryOp::Acosh => m!(|x: A<T>| x.acosh()),
        UnaryOp::Atanh => m!(|x: A<T>| x.atanh()),
        UnaryOp::Erf => m!(|x: A<T>| x.erf()),
        UnaryOp::Erfc => m!(|x: A<T>| x.erfc()),
        UnaryOp::Erfinv => m!(|x: A<T>| x.erfinv()),
        UnaryOp::Lgamma => m!(|x: A<T>| x.lgamma()),
        UnaryOp::Polygamma(n) => m!(move |x: A<T>| x.polygamma(n)),
        UnaryOp::Frac => m!(|x: A<T>| x - x.trunc()),
        // torch computes logit in the storage type (each step rounded, even for f16/bf16).
        UnaryOp::Logit { eps } => {
            let r = |v: A<T>| T::from_acc(v).to_acc();
            let one = A::<T>::ONE;
            match eps.filter(|e| *e >= 0.0) {
                None => m!(move |x: A<T>| r(r(x / r(one - x)).ln())),
                Some(e) => {
                    let (lo, hi) = (r(A::<T>::from_f64(e)), r(one - r(A::<T>::from_f64(e))));
                    m!(move |x: A<T>| {
                        let z = if x < lo {
                            lo
                        } else if x > hi {
                            hi
                        } else {
                            x
                        };
                        r(r(z / r(one - z)).ln())
                    })
                }
            }
        }
        UnaryOp::RoundDecimals(d) => {
            let p = A::<T>::from_f64(10f64.powi(d.unsigned_abs() as i32));
            if d < 0 {
                m!(move |x: A<T>| (x / p).round_even() * p)
            } else {
                m!(move |x: A<T>| (x * p).round_even() / p)
            }
        }
        UnaryOp::NanToNum { nan, posinf, neginf } => {
            let (n, p, q) = (T::from_f64(nan), T::from_f64(posinf), T::from_f64(neginf));
            CpuStorage::from_vec(map1(v, l, move |x: T| {
                let a = x.to_acc();
                if a.is_nan() {
                    n
                } else if a.is_infinite() {
                    if a > A::<T>::ZERO {
                        p
                    } else {
                        q
                    }
                } else {
                    x
                }
            }))
        }
        UnaryOp::IsInf => CpuStorage::from_vec(map1(v, l, |x: T| x.to_acc().is_infinite())),
        UnaryOp::IsPosInf => CpuStorage::from_vec(map1(v, l, |x: T| {
            let a = x.to_acc();
            a.is_infinite() && a > A::<T>::ZERO
        })),
        UnaryOp::IsNegInf => CpuStorage::from_vec(map1(v, l, |x: T| {
            let a = x.to_acc();
            a.is_infinite() && a < A::<T>::ZERO
        })),
        UnaryOp::IsFinite => CpuStorage::from_vec(map1(v, l, |x: T| {
            let a = x.to_acc();
            !a.is_infinite() && !a.is_nan()
        })),
        UnaryOp::Softmax { dim, log } => crate::math::softmax::softmax(v, l, dim, log)?,
        UnaryOp::LeakyRelu(_)
        | UnaryOp::Elu { .. }
        | UnaryOp::Gelu
        | UnaryOp::GeluTanh
        | UnaryOp::Silu
        | UnaryOp::Mish
        | UnaryOp::Softplus { .. }
        | UnaryOp::Hardtanh { .. }
        | UnaryOp::Hardsigmoid
        | UnaryOp::Hardswish => crate::math::activation::float_activation(op, v, l),
        UnaryOp::BitNot => return Err(Error::UnsupportedDType { op: "bitwise_not", dtype: T::DTYPE }),
    })
}

fn int_unary<T: Int>(op: UnaryOp, v: &[T], l: &Layout) -> Result<CpuStorage> {
    let zero = T::ZERO;
    Ok(match op {
        UnaryOp::Neg => CpuStorage::from_vec(map1(v, l, |x: T| x.wneg())),
        UnaryOp::Abs => CpuStorage::from_vec(map1(v, l, |x: T| x.wabs())),
        UnaryOp::Sign => CpuStorage::from_vec(map1(v, l, move |x: T| {
            if x > zero {
                T::ONE
            } else if x < zero {
                T::ONE.wneg()
            } else {
                zero
            }
        })),
        UnaryOp::Square => CpuStorage::from_vec(map1(v, l, |x: T| x.wmul(x))),
        UnaryOp::Relu => CpuStorage::from_vec(map1(v, l, move |x: T| x.max(zero))),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => {
            CpuStorage::from_vec(map1(v, l, |x: T| x))
        }
        UnaryOp::BitNot => CpuStorage::from_vec(map1(v, l, |x: T| x.not())),
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsPosInf | UnaryOp::IsNegInf => {
            CpuStorage::from_vec(map1(v, l, |_: T| false))
        }
        UnaryOp::IsFinite => CpuStorage::from_vec(map1(v, l, |_: T| true)),
        UnaryOp::NanToNum { .. } => CpuStorage::from_vec(map1(v, l, |x: T| x)),
        UnaryOp::Hardtanh { min, max } => {
            // torch saturates the bounds to the integer type's range.
            let lo = T::from_f64(min.clamp(T::MIN_F64, T::MAX_F64));
            let hi = T::from_f64(max.clamp(T::MIN_F64, T::MAX_F64));
            CpuStorage::from_vec(map1(v, l, move |x: T| x.max(lo).min(hi)))
        }
        _ => return Err(Error::UnsupportedDType { op: op.name(), dtype: T::DTYPE }),
    })
}

fn bool_unary(op: UnaryOp, v: &[bool], l: &Layout) -> Result<CpuStorage> {
    Ok(match op {
        UnaryOp::BitNot => CpuStorage::from_vec(map1(v, l, |x: bool| !x)),
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsPosInf | UnaryOp::IsNegInf => {
            CpuStorage::from_vec(map1(v, l, |_: bool| false))
        }
        UnaryOp::IsFinite => CpuStorage::from_vec(map1(v, l, |_: bool| true)),
        UnaryOp::NanToNum { .. } => CpuStorage::from_vec(map1(v, l, |x: bool| x)),
        UnaryOp::Sign => CpuStorage::from_vec(map1(v, l, |x: bool| x)),
        UnaryOp::Neg => {
            return Err(Error::msg(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ))
        }
        _ => return Err(Error::UnsupportedDType { op: op.name(), dtype: DType::Bool }),
    })
}

/// Runs a unary op; the output is contiguous with the layout's shape.
pub fn unary(op: UnaryOp, s: &CpuStorage, l: &Layout) -> Result<CpuStorage> {
    match s {
        CpuStorage::Bool(v) => bool_unary(op, v, l),
        CpuStorage::U8(v) => int_unary(op, v, l),
        CpuStorage::I8(v) => int_unary(op, v, l),
        CpuStorage::I16(v) => int_unary(op, v, l),
        CpuStorage::I32(v) => int_unary(op, v, l),
        CpuStorage::I64(v) => int_unary(op, v, l),
        CpuStorage::F16(v) => float_unary(op, v, l),
        CpuStorage::BF16(v) => float_unary(op, v, l),
        CpuStorage::F32(v) => float_unary(op, v, l),
        CpuStorage::F64(v) => float_unary(op, v, l),
    }
}
