//! `gather`: one element of the source per element of the index.

use oxtorch_core::{Error, Layout, Result};

use super::coords::{check_indices, offset_without, Odometer};
use crate::storage::{CpuElement, CpuStorage};
use crate::walk::par_collect;
use crate::with_storage;

fn typed<T: CpuElement>(src: &[T], sl: &Layout, idx: &[i64], il: &Layout, dim: usize) -> Vec<T> {
    let dims = il.dims();
    if dim + 1 == dims.len() && dims[dim] > 0 {
        return along_last(src, sl, idx, il);
    }
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

/// [`typed`] along the last dim: each output row's source and index rows are found once (the
/// per-element coordinate arithmetic of the general walk is what a gather of a broadcast index,
/// DeBERTa's relative-position scores, spends its time on).
fn along_last<T: CpuElement>(src: &[T], sl: &Layout, idx: &[i64], il: &Layout) -> Vec<T> {
    let dims = il.dims();
    let last = dims.len() - 1;
    let (row, s_step, i_step) = (dims[last], sl.strides()[last], il.strides()[last]);
    par_collect(il.numel(), |start, out| {
        let mut done = 0;
        while done < out.len() {
            let od = Odometer::new(dims, start + done);
            let c = od.coords();
            let s_base = offset_without(c, sl.strides(), sl.offset(), last);
            let i_base = offset_without(c, il.strides(), il.offset(), last);
            let n = (row - c[last]).min(out.len() - done);
            for (t, slot) in out[done..done + n].iter_mut().enumerate() {
                let i = idx[i_base + (c[last] + t) * i_step] as usize;
                slot.write(src[s_base + i * s_step]);
            }
            done += n;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The general walk, element by element (the reference for [`along_last`]).
    fn walked(src: &[f32], sl: &Layout, idx: &[i64], il: &Layout, dim: usize) -> Vec<f32> {
        let mut od = Odometer::new(il.dims(), 0);
        (0..il.numel())
            .map(|_| {
                let c = od.coords();
                let i = idx[offset_without(c, il.strides(), il.offset(), usize::MAX)] as usize;
                let v = src[offset_without(c, sl.strides(), sl.offset(), dim) + i * sl.strides()[dim]];
                od.advance();
                v
            })
            .collect()
    }

    /// Gathers along the last dim from a transposed, offset source with a broadcast index (stride 0
    /// over the leading dims, as DeBERTa's relative positions are gathered) and a strided one equal
    /// the general walk, however the work is split into chunks.
    #[test]
    fn gathers_along_the_last_dim_as_the_general_walk() {
        let src: Vec<f32> = (0..2 * 3 * 5 * 7 + 3).map(|v| v as f32).collect();
        // [2, 3, 7, 5] viewed transposed: last-dim stride 7, offset 3.
        let sl = Layout::new(vec![2, 3, 5, 7], vec![105, 35, 1, 5], 3).unwrap();
        let idx: Vec<i64> = (0..5 * 4).map(|v| (v * 3 % 5) as i64).collect();
        for il in [
            Layout::new(vec![2, 3, 5, 4], vec![0, 0, 4, 1], 0).unwrap(),
            Layout::new(vec![2, 3, 2, 4], vec![0, 0, 8, 1], 2).unwrap(),
            Layout::new(vec![2, 3, 4, 5], vec![0, 0, 1, 4], 0).unwrap(),
        ] {
            let last = il.rank() - 1;
            assert_eq!(along_last(&src, &sl, &idx, &il), walked(&src, &sl, &idx, &il, last), "{il:?}");
            check_indices(&idx, &il, last, 7).unwrap();
        }
        let bad = vec![0i64, 7, 1, 2];
        let il = Layout::new(vec![3, 4], vec![0, 1], 0).unwrap();
        assert!(check_indices(&bad, &il, 1, 7).is_err());
    }
}
