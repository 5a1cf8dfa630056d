//! Comparisons of two inputs of the same dtype and shape; bool output.

use oxtorch_core::ops::CmpOp;
use oxtorch_core::{Layout, Result};

use crate::binary::dtype_mismatch;
use crate::storage::{CpuElement, CpuStorage};
use crate::walk::map2;

fn cmp_typed<T: CpuElement>(op: CmpOp, a: &[T], la: &Layout, b: &[T], lb: &Layout) -> CpuStorage {
    let v = match op {
        CmpOp::Eq => map2(a, la, b, lb, |x: T, y: T| x == y),
        CmpOp::Ne => map2(a, la, b, lb, |x: T, y: T| x != y),
        CmpOp::Lt => map2(a, la, b, lb, |x: T, y: T| x < y),
        CmpOp::Le => map2(a, la, b, lb, |x: T, y: T| x <= y),
        CmpOp::Gt => map2(a, la, b, lb, |x: T, y: T| x > y),
        CmpOp::Ge => map2(a, la, b, lb, |x: T, y: T| x >= y),
    };
    CpuStorage::from_vec(v)
}

/// Compares two operands elementwise.
pub fn compare(
    op: CmpOp,
    (a, la): (&CpuStorage, &Layout),
    (b, lb): (&CpuStorage, &Layout),
) -> Result<CpuStorage> {
    use CpuStorage as S;
    Ok(match (a, b) {
        (S::Bool(x), S::Bool(y)) => cmp_typed(op, x, la, y, lb),
        (S::U8(x), S::U8(y)) => cmp_typed(op, x, la, y, lb),
        (S::I8(x), S::I8(y)) => cmp_typed(op, x, la, y, lb),
        (S::I16(x), S::I16(y)) => cmp_typed(op, x, la, y, lb),
        (S::I32(x), S::I32(y)) => cmp_typed(op, x, la, y, lb),
        (S::I64(x), S::I64(y)) => cmp_typed(op, x, la, y, lb),
        (S::F16(x), S::F16(y)) => cmp_typed(op, x, la, y, lb),
        (S::BF16(x), S::BF16(y)) => cmp_typed(op, x, la, y, lb),
        (S::F32(x), S::F32(y)) => cmp_typed(op, x, la, y, lb),
        (S::F64(x), S::F64(y)) => cmp_typed(op, x, la, y, lb),
        _ => return Err(dtype_mismatch(op.name(), a, b)),
    })
}
