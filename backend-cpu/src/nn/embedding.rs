//! Embedding lookup: rows of a weight matrix gathered by validated indices.

use oxtorch_core::{BackendStorage, Error, Layout, Result};
use rayon::prelude::*;

use crate::storage::CpuElement;
use crate::{with_storage, CpuStorage};

type Operand<'a> = (&'a CpuStorage, &'a Layout);

fn gather<T: CpuElement>(w: &[T], d: usize, idx: &[i64]) -> Vec<T> {
    let mut out = crate::pool::filled(idx.len() * d, T::ZERO);
    if d > 0 {
        out.par_chunks_mut(d).zip(idx).for_each(|(row, &i)| {
            let i = i as usize;
            row.copy_from_slice(&w[i * d..(i + 1) * d]);
        });
    }
    out
}

/// `weight[indices]` for a `[V, D]` weight and i64 indices in `[0, V)`.
pub fn embedding((w, lw): Operand, (i, li): Operand) -> Result<CpuStorage> {
    if lw.rank() != 2 {
        return Err(Error::shape(format!("'weight' must be 2-D, got {}", lw.shape())));
    }
    let (v, d) = (lw.dims()[0], lw.dims()[1]);
    let idx = crate::copy::to_contiguous(i, li, oxtorch_core::DType::I64)?;
    let idx = idx.as_slice::<i64>()?;
    if let Some(&bad) = idx.iter().find(|&&x| x < 0 || x as usize >= v) {
        return Err(Error::msg(format!("index out of range in self: {bad} not in [0, {v})")));
    }
    // A contiguous table (the usual case) is read in place: copying it would move the whole
    // vocabulary (hundreds of MB) to gather a few rows.
    if let Some(range) = lw.contiguous_range() {
        return Ok(with_storage!(w, s => CpuStorage::from_vec(gather(&s[range], d, idx))));
    }
    let wc = crate::copy::to_contiguous(w, lw, w.dtype())?;
    Ok(with_storage!(&wc, s => CpuStorage::from_vec(gather(s, d, idx))))
}
