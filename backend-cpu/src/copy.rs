//! Copies, casts and fills.

use oxtorch_core::{DType, Element, Layout, Result, Scalar};
use rayon::prelude::*;

use crate::storage::{CpuElement, CpuStorage};
use crate::walk::{chunk_len, map1, Plan};
use crate::{with_dtype, with_storage};

/// A new contiguous buffer holding the view `(s, l)` converted to `dtype`.
pub fn to_contiguous(s: &CpuStorage, l: &Layout, dtype: DType) -> Result<CpuStorage> {
    Ok(with_dtype!(dtype, D => with_storage!(s, v => CpuStorage::from_vec(map1(v, l, D::cast_from)))))
}

fn copy_typed<D: CpuElement, S: CpuElement>(dst: &mut [D], dl: &Layout, src: &[S], sl: &Layout) {
    if let Some(range) = dl.contiguous_range() {
        // Contiguous destination: disjoint chunks, filled in parallel.
        let d = &mut dst[range];
        let plan = Plan::new([sl]);
        let [ss] = plan.inner_strides();
        let chunk = chunk_len(d.len());
        d.par_chunks_mut(chunk).enumerate().for_each(|(ci, out)| {
            let start = ci * chunk;
            let mut o = 0;
            plan.for_runs(start, start + out.len(), |[os], len| {
                for (i, x) in out[o..o + len].iter_mut().enumerate() {
                    *x = D::cast_from(src[os + i * ss]);
                }
                o += len;
            });
        });
        return;
    }
    let plan = Plan::new([dl, sl]);
    let [sd, ss] = plan.inner_strides();
    plan.for_runs(0, plan.numel(), |[od, os], len| {
        for i in 0..len {
            dst[od + i * sd] = D::cast_from(src[os + i * ss]);
        }
    });
}

/// Writes the view `(src, sl)`, cast to `dst`'s dtype, into the elements of `dst` selected by `dl`.
pub fn copy_from(dst: &mut CpuStorage, dl: &Layout, src: &CpuStorage, sl: &Layout) -> Result<()> {
    with_storage!(dst, d => with_storage!(src, s => copy_typed(d, dl, s, sl)));
    Ok(())
}

fn fill_typed<T: Element>(v: &mut [T], l: &Layout, x: T) {
    if let Some(range) = l.contiguous_range() {
        let d = &mut v[range];
        let chunk = chunk_len(d.len());
        d.par_chunks_mut(chunk).for_each(|c| c.fill(x));
        return;
    }
    let plan = Plan::new([l]);
    let [s] = plan.inner_strides();
    plan.for_runs(0, plan.numel(), |[o], len| {
        for i in 0..len {
            v[o + i * s] = x;
        }
    });
}

/// Sets the elements selected by `l` to `value`.
pub fn fill(dst: &mut CpuStorage, l: &Layout, value: Scalar) -> Result<()> {
    with_storage!(dst, v => fill_typed(v, l, Element::from_scalar(value)));
    Ok(())
}
