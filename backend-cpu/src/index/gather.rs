//! `gather`: one element of the source per element of the index.

use oxtorch_core::{Error, Layout, Result};

use super::coords::{check_indices, offset_without, Odometer};
use crate::storage::{CpuElement, CpuStorage};
use crate::walk::par_collect;
use crate::with_storage;

fn typed<T: CpuElement>(src: &[T], sl: &Layout, idx: &[i64], il: &Layout, dim: usize) -> Vec<T> {
    let dims = il.dims();
    par_collect(il.numel(), |start, out| {
        let mut od = Odometer::new(dims, start);
        for slot in out.iter_mut() {
            let c = od.coords();
            let i = idx[offset_without(c, il.strides(), il.offset(), usize::MAX)] as usize;
            let s = offset_without(c, sl.strides(), sl.offset(), dim) + i * sl.strides()[dim];
            slot.write(src[s]);
            od.advance();
        }
    })
}

/// `out[p] = src[p with p[dim] = index[p]]` over index's shape (checked, see [`super::execute`]).
pub(super) fn gather(
    src: &CpuStorage,
    sl: &Layout,
    idx: &CpuStorage,
    il: &Layout,
    dim: usize,
) -> Result<CpuStorage> {
    let CpuStorage::I64(idx) = idx else {
        return Err(Error::msg("gather(): Expected dtype int64 for index"));
    };
    super::check_shapes(sl, il, dim)?;
    check_indices(idx, il, dim, sl.dims()[dim])?;
    Ok(with_storage!(src, v => CpuStorage::from_vec(typed(v, sl, idx, il, dim))))
}
