//! torch's type promotion: `promote_types` and the three-category `result_type` rule.

use crate::dtype::DType;
use crate::scalar::Scalar;

/// The smallest dtype both `a` and `b` convert to without losing their category (torch.promote_types).
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (F16, BF16) | (BF16, F16) => F32,
        (x, y) if x.is_float() && y.is_float() => x.max(y),
        (x, _) if x.is_float() => x,
        (_, y) if y.is_float() => y,
        // both integers
        (U8, x) | (x, U8) => {
            if x == I8 {
                I16
            } else {
                x
            }
        }
        (x, y) => x.max(y),
    }
}

/// Accumulates the operands of an op to find its result dtype (torch's `at::result_type`).
///
/// Operands fall into three priority classes: tensors with dimensions, 0-dim tensors, and wrapped
/// scalars. A lower class only changes the result when it is of a higher category (bool < integer < float).
#[derive(Clone, Copy, Debug, Default)]
pub struct ResultTypeState {
    dim: Option<DType>,
    zero_dim: Option<DType>,
    wrapped: Option<DType>,
}

fn promote_opt(a: Option<DType>, b: DType) -> Option<DType> {
    Some(match a {
        None => b,
        Some(a) => promote_types(a, b),
    })
}

fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (Some(h), _) if h.is_float() => Some(h),
        (Some(h), Some(l)) if h.is_bool() || l.is_float() => Some(promote_types(h, l)),
        (Some(h), _) => Some(h),
        (None, l) => l,
    }
}

impl ResultTypeState {
    /// Adds a tensor operand of `rank` dims.
    pub fn tensor(mut self, dtype: DType, rank: usize) -> Self {
        if rank > 0 {
            self.dim = promote_opt(self.dim, dtype);
        } else {
            self.zero_dim = promote_opt(self.zero_dim, dtype);
        }
        self
    }

    /// Adds a scalar operand (a Python number).
    pub fn scalar(mut self, s: Scalar) -> Self {
        self.wrapped = promote_opt(self.wrapped, s.wrapped_dtype());
        self
    }

    /// The result dtype (bool when there were no operands).
    pub fn result(self) -> DType {
        combine(self.dim, combine(self.zero_dim, self.wrapped)).unwrap_or(DType::Bool)
    }
}
