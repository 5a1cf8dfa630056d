//! The right-hand side of a binary op: a tensor or a Python-like number.

use oxtorch_core::{DType, Device, Result, ResultTypeState, Scalar};

use crate::Tensor;

/// A tensor or a scalar, as torch's binary ops accept (`a + b`, `a + 2.5`).
#[derive(Clone)]
pub enum Operand {
    /// A tensor operand.
    Tensor(Tensor),
    /// A number operand (a "wrapped number" in type promotion).
    Scalar(Scalar),
}

impl Operand {
    /// Adds this operand to a result-type computation.
    pub(crate) fn promote(&self, state: ResultTypeState) -> ResultTypeState {
        match self {
            Operand::Tensor(t) => state.tensor(t.dtype(), t.rank()),
            Operand::Scalar(s) => state.scalar(*s),
        }
    }

    /// The operand as a tensor of `dtype` on `device` (scalars become 0-dim tensors).
    pub(crate) fn to_tensor(&self, dtype: DType, device: Device) -> Result<Tensor> {
        match self {
            Operand::Tensor(t) => t.to_dtype(dtype),
            Operand::Scalar(s) => Tensor::full_unchecked((), *s, (dtype, device)),
        }
    }
}

impl From<&Tensor> for Operand {
    fn from(t: &Tensor) -> Self {
        Operand::Tensor(t.clone())
    }
}
impl From<Tensor> for Operand {
    fn from(t: Tensor) -> Self {
        Operand::Tensor(t)
    }
}
impl From<&&Tensor> for Operand {
    fn from(t: &&Tensor) -> Self {
        Operand::Tensor((*t).clone())
    }
}
impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Self { Operand::Scalar(v.into()) }
        }
    )*};
}
scalar_operand!(bool, u8, i8, i16, i32, i64, u32, usize, f32, f64, half::f16, half::bf16);
