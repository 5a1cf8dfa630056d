//! Elementwise ops of two inputs of the same dtype and shape.

use oxtorch_core::ops::BinaryOp;
use oxtorch_core::{DType, Error, Layout, Result};

use crate::float::{floor_div, remainder, AccFloat, Float};
use crate::int::Int;
use crate::storage::CpuStorage;
use crate::walk::map2;

type Operand<'a> = (&'a CpuStorage, &'a Layout);

fn float_binary<T: Float>(op: BinaryOp, a: &[T], la: &Layout, b: &[T], lb: &Layout) -> Result<CpuStorage> {
    type A<T> = <T as Float>::Acc;
    macro_rules! m {
        ($f:expr) => {{
            let f = $f;
            CpuStorage::from_vec(map2(a, la, b, lb, move |x: T, y: T| T::from_acc(f(x.to_acc(), y.to_acc()))))
        }};
    }
    Ok(match op {
        BinaryOp::Add => m!(|x: A<T>, y| x + y),
        BinaryOp::Sub => m!(|x: A<T>, y| x - y),
        BinaryOp::Mul => m!(|x: A<T>, y| x * y),
        BinaryOp::Div => m!(|x: A<T>, y| x / y),
        BinaryOp::Pow => m!(|x: A<T>, y| x.powf(y)),
        BinaryOp::Maximum => m!(|x: A<T>, y: A<T>| if x.is_nan() || x > y { x } else { y }),
        BinaryOp::Minimum => m!(|x: A<T>, y: A<T>| if x.is_nan() || x < y { x } else { y }),
        BinaryOp::Remainder => m!(|x: A<T>, y| remainder(x, y)),
        BinaryOp::FloorDivide => m!(|x: A<T>, y| floor_div(x, y)),
        BinaryOp::Atan2 => m!(|x: A<T>, y| x.atan2(y)),
        BinaryOp::Fmod => m!(|x: A<T>, y| x.fmod(y)),
        BinaryOp::Hypot => m!(|x: A<T>, y| x.hypot(y)),
        BinaryOp::CopySign => m!(|x: A<T>, y| x.copysign(y)),
        BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRight => return Err(Error::UnsupportedDType { op: op.name(), dtype: T::DTYPE }),
    })
}

fn check_no_zero<T: Int>(b: &[T], lb: &Layout) -> Result<()> {
    if lb.indices().any(|i| b[i] == T::ZERO) {
        return Err(Error::msg("ZeroDivisionError"));
    }
    Ok(())
}

fn int_binary<T: Int>(op: BinaryOp, a: &[T], la: &Layout, b: &[T], lb: &Layout) -> Result<CpuStorage> {
    macro_rules! m {
        ($f:expr) => {
            CpuStorage::from_vec(map2(a, la, b, lb, $f))
        };
    }
    Ok(match op {
        BinaryOp::Add => m!(|x: T, y: T| x.wadd(y)),
        BinaryOp::Sub => m!(|x: T, y: T| x.wsub(y)),
        BinaryOp::Mul => m!(|x: T, y: T| x.wmul(y)),
        BinaryOp::Maximum => m!(|x: T, y: T| x.max(y)),
        BinaryOp::Minimum => m!(|x: T, y: T| x.min(y)),
        BinaryOp::BitAnd => m!(|x: T, y: T| x.and(y)),
        BinaryOp::BitOr => m!(|x: T, y: T| x.or(y)),
        BinaryOp::BitXor => m!(|x: T, y: T| x.xor(y)),
        // A negative exponent gives 0, except for bases 1 and -1 (torch's integer pow).
        BinaryOp::Pow => m!(|x: T, y: T| if y >= T::ZERO {
            x.wpow(y)
        } else if x == T::ONE {
            T::ONE
        } else if x == T::ONE.wneg() && T::SIGNED {
            if y.and(T::ONE) == T::ONE {
                x
            } else {
                T::ONE
            }
        } else {
            T::ZERO
        }),
        BinaryOp::FloorDivide => {
            check_no_zero(b, lb)?;
            m!(|x: T, y: T| x.floor_div(y))
        }
        BinaryOp::Remainder => {
            check_no_zero(b, lb)?;
            m!(|x: T, y: T| x.py_rem(y))
        }
        BinaryOp::Fmod => {
            check_no_zero(b, lb)?;
            m!(|x: T, y: T| x.c_rem(y))
        }
        BinaryOp::ShiftLeft => m!(|x: T, y: T| x.shl_torch(y)),
        BinaryOp::ShiftRight => m!(|x: T, y: T| x.shr_torch(y)),
        BinaryOp::Div => {
            return Err(Error::msg(
                "div: integer inputs must be promoted to a float dtype before true division",
            ))
        }
        BinaryOp::Atan2 | BinaryOp::Hypot | BinaryOp::CopySign => {
            return Err(Error::UnsupportedDType { op: op.name(), dtype: T::DTYPE })
        }
    })
}

fn bool_binary(op: BinaryOp, a: &[bool], la: &Layout, b: &[bool], lb: &Layout) -> Result<CpuStorage> {
    macro_rules! m {
        ($f:expr) => {
            CpuStorage::from_vec(map2(a, la, b, lb, $f))
        };
    }
    Ok(match op {
        BinaryOp::Add | BinaryOp::BitOr | BinaryOp::Maximum => m!(|x: bool, y: bool| x | y),
        BinaryOp::Mul | BinaryOp::BitAnd | BinaryOp::Minimum => m!(|x: bool, y: bool| x & y),
        BinaryOp::BitXor => m!(|x: bool, y: bool| x ^ y),
        BinaryOp::Sub => {
            return Err(Error::msg(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
            ))
        }
        _ => return Err(Error::UnsupportedDType { op: op.name(), dtype: DType::Bool }),
    })
}

/// Runs a binary op on two operands of one dtype and one shape; the output is contiguous.
pub fn binary(op: BinaryOp, (a, la): Operand, (b, lb): Operand) -> Result<CpuStorage> {
    use CpuStorage as S;
    match (a, b) {
        (S::Bool(x), S::Bool(y)) => bool_binary(op, x, la, y, lb),
        (S::U8(x), S::U8(y)) => int_binary(op, x, la, y, lb),
        (S::I8(x), S::I8(y)) => int_binary(op, x, la, y, lb),
        (S::I16(x), S::I16(y)) => int_binary(op, x, la, y, lb),
        (S::I32(x), S::I32(y)) => int_binary(op, x, la, y, lb),
        (S::I64(x), S::I64(y)) => int_binary(op, x, la, y, lb),
        (S::F16(x), S::F16(y)) => float_binary(op, x, la, y, lb),
        (S::BF16(x), S::BF16(y)) => float_binary(op, x, la, y, lb),
        (S::F32(x), S::F32(y)) => float_binary(op, x, la, y, lb),
        (S::F64(x), S::F64(y)) => float_binary(op, x, la, y, lb),
        _ => Err(dtype_mismatch(op.name(), a, b)),
    }
}

pub(crate) fn dtype_mismatch(op: &'static str, a: &CpuStorage, b: &CpuStorage) -> Error {
    use oxtorch_core::BackendStorage;
    Error::DTypeMismatch { op, a: a.dtype(), b: b.dtype() }
}
