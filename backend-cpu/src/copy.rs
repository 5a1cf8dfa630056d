//! Copies, casts and fills.

use std::mem::MaybeUninit;

use oxtorch_core::{BackendStorage, DType, Element, Layout, Result, Scalar};
use rayon::prelude::*;

use crate::storage::{CpuElement, CpuStorage};
use crate::transpose::Transposed;
use crate::walk::{chunk_len, map1, Plan};
use crate::{with_dtype, with_storage};

/// Converts one element with torch's CPU casting rules (as measured on x86-64 with torch 2.x):
///
/// * float to int64 and uint8: truncation toward int64; NaN, ±∞ and values outside int64 give
///   `i64::MIN` (the "integer indefinite" of `cvttsd2si`), then wrapping for uint8 (300.0 is 44,
///   2^40 + 7 is 7, NaN is 0);
/// * float to int32, int16, int8: truncation to int32 (NaN, ±∞ and values outside int32 give
///   `i32::MIN`), then wrapping to the narrower type;
/// * float64 to float16/bfloat16: through float32 (two roundings, as c10's `Half(float)` does);
/// * everything else as [`Element::cast_from`] (integers wrap, bool is `!= 0`, floats round to nearest).
#[inline(always)]
pub(crate) fn cast_elem<D: Element, S: Element>(v: S) -> D {
    // Decided at compile time (a call per element would keep the loops from vectorizing).
    if !const { S::DTYPE.is_float() } {
        return D::from_i64(v.to_i64());
    }
    let f = v.to_f64();
    match D::DTYPE {
        // c10 converts to uint8 through int64 (then wraps): 2^40 + 7 gives 7.
        DType::I64 | DType::U8 => {
            let in_range = (i64::MIN as f64..-(i64::MIN as f64)).contains(&f);
            D::from_i64(if in_range { f as i64 } else { i64::MIN })
        }
        DType::I8 | DType::I16 | DType::I32 => {
            let in_range = (i32::MIN as f64..-(i32::MIN as f64)).contains(&f);
            D::from_i64(if in_range { f as i64 } else { i32::MIN as i64 })
        }
        DType::F16 | DType::BF16 if const { matches!(S::DTYPE, DType::F64) } => D::from_f64(f as f32 as f64),
        _ => D::from_f64(f),
    }
}

/// A new contiguous buffer holding the view `(s, l)` converted to `dtype`.
pub fn to_contiguous(s: &CpuStorage, l: &Layout, dtype: DType) -> Result<CpuStorage> {
    if s.dtype() == dtype {
        return Ok(with_storage!(s, v => CpuStorage::from_vec(contiguous_same(v, l))));
    }
    Ok(with_dtype!(dtype, D => with_storage!(s, v => CpuStorage::from_vec(map1(v, l, cast_elem::<D, _>)))))
}

fn copy_typed<D: CpuElement, S: CpuElement>(dst: &mut [D], dl: &Layout, src: &[S], sl: &Layout) {
    if let Some(range) = dl.contiguous_range() {
        // Contiguous destination: disjoint chunks, filled in parallel.
        let d = &mut dst[range];
        let plan = Plan::new([sl]);
        if let Some(t) = Transposed::of(&plan) {
            // SAFETY: `MaybeUninit<D>` has `D`'s layout, and only initialised values are written.
            let d = unsafe { &mut *(d as *mut [D] as *mut [MaybeUninit<D>]) };
            t.run(src, d, cast_elem::<D, S>);
            return;
        }
        let [ss] = plan.inner_strides();
        let chunk = chunk_len(d.len());
        d.par_chunks_mut(chunk).enumerate().for_each(|(ci, out)| {
            let start = ci * chunk;
            let mut o = 0;
            plan.for_runs(start, start + out.len(), |[os], len| {
                let out = &mut out[o..o + len];
                match ss {
                    1 => {
                        for (x, &y) in out.iter_mut().zip(&src[os..os + len]) {
                            *x = cast_elem(y);
                        }
                    }
                    0 => out.fill(cast_elem(src[os])),
                    _ => {
                        for (i, x) in out.iter_mut().enumerate() {
                            *x = cast_elem(src[os + i * ss]);
                        }
                    }
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
            dst[od + i * sd] = cast_elem(src[os + i * ss]);
        }
    });
}

/// Writes the view `(src, sl)`, cast to `dst`'s dtype, into the elements of `dst` selected by `dl`.
pub fn copy_from(dst: &mut CpuStorage, dl: &Layout, src: &CpuStorage, sl: &Layout) -> Result<()> {
    if dst.dtype() == src.dtype() {
        with_storage!(dst, d => copy_same(d, dl, CpuElement::slice(src).expect("same dtype"), sl));
    } else {
        with_storage!(dst, d => with_storage!(src, s => copy_typed(d, dl, s, sl)));
    }
    Ok(())
}

/// A copy between buffers of one dtype: contiguous to contiguous is a parallel `memcpy`.
fn copy_same<T: CpuElement>(dst: &mut [T], dl: &Layout, src: &[T], sl: &Layout) {
    match (dl.contiguous_range(), sl.contiguous_range()) {
        (Some(rd), Some(rs)) => {
            let (d, s) = (&mut dst[rd], &src[rs]);
            let chunk = chunk_len(d.len());
            d.par_chunks_mut(chunk).zip(s.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
        }
        (Some(rd), None) => {
            let plan = Plan::new([sl]);
            match Transposed::of(&plan) {
                Some(t) => {
                    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and only initialised values are written.
                    let d = unsafe { &mut *(&mut dst[rd] as *mut [T] as *mut [MaybeUninit<T>]) };
                    t.copy(src, d);
                }
                None => copy_typed(dst, dl, src, sl),
            }
        }
        _ => copy_typed(dst, dl, src, sl),
    }
}

/// A contiguous copy of the view `(v, l)`, same dtype.
pub(crate) fn contiguous_same<T: CpuElement>(v: &[T], l: &Layout) -> Vec<T> {
    if l.contiguous_range().is_none() {
        let plan = Plan::new([l]);
        if let Some(t) = Transposed::of(&plan) {
            let n = plan.numel();
            let mut out: Vec<T> = crate::pool::take(n);
            t.copy(v, &mut out.spare_capacity_mut()[..n]);
            // SAFETY: `copy` wrote all `n` elements; `T: Copy` has no drop glue.
            unsafe { out.set_len(n) };
            return out;
        }
    }
    map1(v, l, |x| x)
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
