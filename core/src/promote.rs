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

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    /// torch.promote_types for every pair, in `DType::ALL` order (generated with torch 2.15).
    const TORCH_PROMOTE: [[DType; 10]; 10] = [
        [Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64],
        [U8, U8, I16, I16, I32, I64, F16, BF16, F32, F64],
        [I8, I16, I8, I16, I32, I64, F16, BF16, F32, F64],
        [I16, I16, I16, I16, I32, I64, F16, BF16, F32, F64],
        [I32, I32, I32, I32, I32, I64, F16, BF16, F32, F64],
        [I64, I64, I64, I64, I64, I64, F16, BF16, F32, F64],
        [F16, F16, F16, F16, F16, F16, F16, F32, F32, F64],
        [BF16, BF16, BF16, BF16, BF16, BF16, F32, BF16, F32, F64],
        [F32, F32, F32, F32, F32, F32, F32, F32, F32, F64],
        [F64, F64, F64, F64, F64, F64, F64, F64, F64, F64],
    ];

    #[test]
    fn promote_types_matches_torch_table() {
        for (i, &a) in DType::ALL.iter().enumerate() {
            for (j, &b) in DType::ALL.iter().enumerate() {
                assert_eq!(promote_types(a, b), TORCH_PROMOTE[i][j], "promote_types({a}, {b})");
            }
        }
    }

    #[test]
    fn wrapped_scalars_match_torch_result_type() {
        let cases = [
            (DType::Bool, Scalar::Bool(true), DType::Bool),
            (DType::Bool, Scalar::Int(2), DType::I64),
            (DType::Bool, Scalar::Float(2.5), DType::F32),
            (DType::U8, Scalar::Bool(true), DType::U8),
            (DType::U8, Scalar::Int(2), DType::U8),
            (DType::U8, Scalar::Float(2.5), DType::F32),
            (DType::I8, Scalar::Bool(true), DType::I8),
            (DType::I8, Scalar::Int(2), DType::I8),
            (DType::I8, Scalar::Float(2.5), DType::F32),
            (DType::I16, Scalar::Bool(true), DType::I16),
            (DType::I16, Scalar::Int(2), DType::I16),
            (DType::I16, Scalar::Float(2.5), DType::F32),
            (DType::I32, Scalar::Bool(true), DType::I32),
            (DType::I32, Scalar::Int(2), DType::I32),
            (DType::I32, Scalar::Float(2.5), DType::F32),
            (DType::I64, Scalar::Bool(true), DType::I64),
            (DType::I64, Scalar::Int(2), DType::I64),
            (DType::I64, Scalar::Float(2.5), DType::F32),
            (DType::F16, Scalar::Bool(true), DType::F16),
            (DType::F16, Scalar::Int(2), DType::F16),
            (DType::F16, Scalar::Float(2.5), DType::F16),
            (DType::BF16, Scalar::Bool(true), DType::BF16),
            (DType::BF16, Scalar::Int(2), DType::BF16),
            (DType::BF16, Scalar::Float(2.5), DType::BF16),
            (DType::F32, Scalar::Bool(true), DType::F32),
            (DType::F32, Scalar::Int(2), DType::F32),
            (DType::F32, Scalar::Float(2.5), DType::F32),
            (DType::F64, Scalar::Bool(true), DType::F64),
            (DType::F64, Scalar::Int(2), DType::F64),
            (DType::F64, Scalar::Float(2.5), DType::F64),
        ];
        for (t, s, expected) in cases {
            let got = ResultTypeState::default().tensor(t, 1).scalar(s).result();
            assert_eq!(got, expected, "result_type({t} tensor, {s:?})");
        }
    }

    #[test]
    fn zero_dim_tensors_match_torch_result_type() {
        // (dimensioned tensor dtype, 0-dim tensor dtype, torch.result_type)
        let cases = [
            (DType::Bool, DType::Bool, DType::Bool),
            (DType::Bool, DType::U8, DType::U8),
            (DType::Bool, DType::I8, DType::I8),
            (DType::Bool, DType::I16, DType::I16),
            (DType::Bool, DType::I32, DType::I32),
            (DType::Bool, DType::I64, DType::I64),
            (DType::Bool, DType::F16, DType::F16),
            (DType::Bool, DType::BF16, DType::BF16),
            (DType::Bool, DType::F32, DType::F32),
            (DType::Bool, DType::F64, DType::F64),
            (DType::U8, DType::Bool, DType::U8),
            (DType::U8, DType::U8, DType::U8),
            (DType::U8, DType::I8, DType::U8),
            (DType::U8, DType::I16, DType::U8),
            (DType::U8, DType::I32, DType::U8),
            (DType::U8, DType::I64, DType::U8),
            (DType::U8, DType::F16, DType::F16),
            (DType::U8, DType::BF16, DType::BF16),
            (DType::U8, DType::F32, DType::F32),
            (DType::U8, DType::F64, DType::F64),
            (DType::I8, DType::Bool, DType::I8),
            (DType::I8, DType::U8, DType::I8),
            (DType::I8, DType::I8, DType::I8),
            (DType::I8, DType::I16, DType::I8),
            (DType::I8, DType::I32, DType::I8),
            (DType::I8, DType::I64, DType::I8),
            (DType::I8, DType::F16, DType::F16),
            (DType::I8, DType::BF16, DType::BF16),
            (DType::I8, DType::F32, DType::F32),
            (DType::I8, DType::F64, DType::F64),
            (DType::I16, DType::Bool, DType::I16),
            (DType::I16, DType::U8, DType::I16),
            (DType::I16, DType::I8, DType::I16),
            (DType::I16, DType::I16, DType::I16),
            (DType::I16, DType::I32, DType::I16),
            (DType::I16, DType::I64, DType::I16),
            (DType::I16, DType::F16, DType::F16),
            (DType::I16, DType::BF16, DType::BF16),
            (DType::I16, DType::F32, DType::F32),
            (DType::I16, DType::F64, DType::F64),
            (DType::I32, DType::Bool, DType::I32),
            (DType::I32, DType::U8, DType::I32),
            (DType::I32, DType::I8, DType::I32),
            (DType::I32, DType::I16, DType::I32),
            (DType::I32, DType::I32, DType::I32),
            (DType::I32, DType::I64, DType::I32),
            (DType::I32, DType::F16, DType::F16),
            (DType::I32, DType::BF16, DType::BF16),
            (DType::I32, DType::F32, DType::F32),
            (DType::I32, DType::F64, DType::F64),
            (DType::I64, DType::Bool, DType::I64),
            (DType::I64, DType::U8, DType::I64),
            (DType::I64, DType::I8, DType::I64),
            (DType::I64, DType::I16, DType::I64),
            (DType::I64, DType::I32, DType::I64),
            (DType::I64, DType::I64, DType::I64),
            (DType::I64, DType::F16, DType::F16),
            (DType::I64, DType::BF16, DType::BF16),
            (DType::I64, DType::F32, DType::F32),
            (DType::I64, DType::F64, DType::F64),
            (DType::F16, DType::Bool, DType::F16),
            (DType::F16, DType::U8, DType::F16),
            (DType::F16, DType::I8, DType::F16),
            (DType::F16, DType::I16, DType::F16),
            (DType::F16, DType::I32, DType::F16),
            (DType::F16, DType::I64, DType::F16),
            (DType::F16, DType::F16, DType::F16),
            (DType::F16, DType::BF16, DType::F16),
            (DType::F16, DType::F32, DType::F16),
            (DType::F16, DType::F64, DType::F16),
            (DType::BF16, DType::Bool, DType::BF16),
            (DType::BF16, DType::U8, DType::BF16),
            (DType::BF16, DType::I8, DType::BF16),
            (DType::BF16, DType::I16, DType::BF16),
            (DType::BF16, DType::I32, DType::BF16),
            (DType::BF16, DType::I64, DType::BF16),
            (DType::BF16, DType::F16, DType::BF16),
            (DType::BF16, DType::BF16, DType::BF16),
            (DType::BF16, DType::F32, DType::BF16),
            (DType::BF16, DType::F64, DType::BF16),
            (DType::F32, DType::Bool, DType::F32),
            (DType::F32, DType::U8, DType::F32),
            (DType::F32, DType::I8, DType::F32),
            (DType::F32, DType::I16, DType::F32),
            (DType::F32, DType::I32, DType::F32),
            (DType::F32, DType::I64, DType::F32),
            (DType::F32, DType::F16, DType::F32),
            (DType::F32, DType::BF16, DType::F32),
            (DType::F32, DType::F32, DType::F32),
            (DType::F32, DType::F64, DType::F32),
            (DType::F64, DType::Bool, DType::F64),
            (DType::F64, DType::U8, DType::F64),
            (DType::F64, DType::I8, DType::F64),
            (DType::F64, DType::I16, DType::F64),
            (DType::F64, DType::I32, DType::F64),
            (DType::F64, DType::I64, DType::F64),
            (DType::F64, DType::F16, DType::F64),
            (DType::F64, DType::BF16, DType::F64),
            (DType::F64, DType::F32, DType::F64),
            (DType::F64, DType::F64, DType::F64),
        ];
        for (t, z, expected) in cases {
            let got = ResultTypeState::default().tensor(t, 1).tensor(z, 0).result();
            assert_eq!(got, expected, "result_type({t} tensor, {z} 0-dim)");
        }
    }
}
