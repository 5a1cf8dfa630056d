//! Operator forms: `&a + &b`, `&a * 2.0`, `2.0 * &a`, `-&a`, `!&mask`, ... They panic with the same
//! message the fallible methods return; services that must not panic call the methods (`a.add(&b)?`).
//!
//! Operators are implemented for `&Tensor` only: were they implemented for owned `Tensor`, Rust's
//! method lookup would pick `std::ops::Add::add` over the inherent `Tensor::add` in chains such as
//! `x.matmul(&w)?.add(&b)?`, which return `Result`.

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use crate::ops::Operand;
use crate::Tensor;

fn unwrap(r: oxtorch_core::Result<Tensor>) -> Tensor {
    r.unwrap_or_else(|e| panic!("{e}"))
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $call:ident) => {
        impl<R: Into<Operand>> $trait<R> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: R) -> Tensor {
                unwrap(Tensor::$call(self, rhs))
            }
        }
    };
}
binary_operator!(Add, add, add);
binary_operator!(Sub, sub, sub);
binary_operator!(Mul, mul, mul);
binary_operator!(Div, div, div);
binary_operator!(Rem, rem, remainder);
binary_operator!(BitAnd, bitand, bitwise_and);
binary_operator!(BitOr, bitor, bitwise_or);
binary_operator!(BitXor, bitxor, bitwise_xor);

/// Scalars on the left: `2.0 * &t`, `1 - &t`.
macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        impl Add<&Tensor> for $t {
            type Output = Tensor;
            fn add(self, rhs: &Tensor) -> Tensor { unwrap(rhs.add(self)) }
        }
        impl Mul<&Tensor> for $t {
            type Output = Tensor;
            fn mul(self, rhs: &Tensor) -> Tensor { unwrap(rhs.mul(self)) }
        }
        impl Sub<&Tensor> for $t {
            type Output = Tensor;
            fn sub(self, rhs: &Tensor) -> Tensor { unwrap(rhs.rsub(self)) }
        }
        impl Div<&Tensor> for $t {
            type Output = Tensor;
            fn div(self, rhs: &Tensor) -> Tensor {
                // torch's `__rtruediv__`: the reciprocal times the number (a wrapped number, not a
                // float32 tensor, so that neither its range nor its precision is cut).
                unwrap(rhs.reciprocal().and_then(|r| r.mul(self)))
            }
        }
        impl Add<Tensor> for $t {
            type Output = Tensor;
            fn add(self, rhs: Tensor) -> Tensor { self + &rhs }
        }
        impl Mul<Tensor> for $t {
            type Output = Tensor;
            fn mul(self, rhs: Tensor) -> Tensor { self * &rhs }
        }
        impl Sub<Tensor> for $t {
            type Output = Tensor;
            fn sub(self, rhs: Tensor) -> Tensor { self - &rhs }
        }
        impl Div<Tensor> for $t {
            type Output = Tensor;
            fn div(self, rhs: Tensor) -> Tensor { self / &rhs }
        }
    )*};
}
scalar_lhs!(f32, f64, i32, i64);

impl Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        unwrap(Tensor::neg(self))
    }
}
impl Not for &Tensor {
    type Output = Tensor;
    fn not(self) -> Tensor {
        unwrap(self.bitwise_not())
    }
}
