//! `where(cond, a, b)`.

use oxtorch_core::{BackendStorage, Error, Layout, Result};

use crate::binary::dtype_mismatch;
use crate::storage::{CpuElement, CpuStorage};
use crate::walk::map3;

type Operand<'a> = (&'a CpuStorage, &'a Layout);

fn typed<T: CpuElement>(c: &[bool], lc: &Layout, a: &[T], la: &Layout, b: &[T], lb: &Layout) -> CpuStorage {
    CpuStorage::from_vec(map3((c, lc), (a, la), (b, lb), |c, x, y| if c { x } else { y }))
}

/// Picks from `a` where `cond` is true and from `b` elsewhere; all three share one shape.
pub fn where_cond((c, lc): Operand, (a, la): Operand, (b, lb): Operand) -> Result<CpuStorage> {
    let CpuStorage::Bool(c) = c else {
        return Err(Error::msg(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            c.dtype().scalar_type_name()
        )));
    };
    use CpuStorage as S;
    Ok(match (a, b) {
        (S::Bool(x), S::Bool(y)) => typed(c, lc, x, la, y, lb),
        (S::U8(x), S::U8(y)) => typed(c, lc, x, la, y, lb),
        (S::I8(x), S::I8(y)) => typed(c, lc, x, la, y, lb),
        (S::I16(x), S::I16(y)) => typed(c, lc, x, la, y, lb),
        (S::I32(x), S::I32(y)) => typed(c, lc, x, la, y, lb),
        (S::I64(x), S::I64(y)) => typed(c, lc, x, la, y, lb),
        (S::F16(x), S::F16(y)) => typed(c, lc, x, la, y, lb),
        (S::BF16(x), S::BF16(y)) => typed(c, lc, x, la, y, lb),
        (S::F32(x), S::F32(y)) => typed(c, lc, x, la, y, lb),
        (S::F64(x), S::F64(y)) => typed(c, lc, x, la, y, lb),
        _ => return Err(dtype_mismatch("where", a, b)),
    })
}
