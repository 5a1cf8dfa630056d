//! Index validation shared by every indexing op: accepted dtypes, bounds with torch's messages,
//! wrapping of negative indices.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use oxtorch_core::{DType, Error, Layout, Result};

use crate::storage::StorageCell;
use crate::Tensor;

/// Which index dtypes an op accepts, and its message for the others.
#[derive(Clone, Copy)]
pub(crate) enum IndexDTypes {
    /// int64 and int32, with `message` for the others
    Int(&'static str),
    /// int64 only, with `message` (`{}` is replaced by the dtype's scalar type name)
    Long(&'static str),
}

/// The index as int64 after checking its dtype.
pub(crate) fn index_as_i64(index: &Tensor, accepted: IndexDTypes) -> Result<Tensor> {
    let ok = match accepted {
        IndexDTypes::Int(_) => matches!(index.dtype(), DType::I64 | DType::I32),
        IndexDTypes::Long(_) => index.dtype() == DType::I64,
    };
    if !ok {
        let (IndexDTypes::Int(m) | IndexDTypes::Long(m)) = accepted;
        return Err(Error::msg(m.replace("{}", index.dtype().scalar_type_name())));
    }
    index.to_dtype(DType::I64)
}

/// A contiguous int64 copy of `index` (int64 already) whose values are checked against `0..size`;
/// negative values are wrapped first when `wrap` (values below `-size` stay errors). `err` builds
/// the error for an offending original value.
pub(crate) fn checked_indices(
    index: &Tensor,
    size: usize,
    wrap: bool,
    err: impl Fn(i64) -> Error,
) -> Result<Tensor> {
    if !index.device().is_cpu() && index.numel() > 0 {
        // On a device, read only the range (one small download) and wrap there; the host path
        // below runs only to name the offending index.
        let (lo, hi) = min_max(index)?;
        let n = size as i64;
        let lowest = if wrap { -n } else { 0 };
        if lo >= lowest && hi < n {
            return if wrap && lo < 0 {
                Tensor::where_cond(&index.lt(0)?, &index.add(n)?, index)
            } else {
                Ok(index.clone())
            };
        }
    }
    let mut v = index.to_vec::<i64>()?;
    let n = size as i64;
    for x in v.iter_mut() {
        let w = if wrap && *x < 0 { *x + n } else { *x };
        if w < 0 || w >= n {
            return Err(err(*x));
        }
        *x = w;
    }
    Tensor::from_vec_on(v, index.dims().to_vec(), index.device())
}

/// The smallest and largest value of a non-empty integer tensor, read in one download (on an XLA
/// device, one small program instead of two). Device results are remembered per (storage,
/// version, view) for the last few tensors, so checking the same indices again (an embedding's
/// backward after its forward) reads nothing: a sync point fewer in fused mode.
pub(crate) fn min_max(t: &Tensor) -> Result<(i64, i64)> {
    type Seen = (Weak<StorageCell>, u64, Layout, (i64, i64));
    thread_local! {
        static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
    }
    let remember = !t.device().is_cpu();
    let same = |(w, version, layout, _): &Seen| {
        w.upgrade().is_some_and(|s| Arc::ptr_eq(&s, t.storage()))
            && *version == t.version()
            && layout == t.layout()
    };
    if remember {
        if let Some(range) = SEEN.with(|seen| seen.borrow().iter().find(|s| same(s)).map(|s| s.3)) {
            return Ok(range);
        }
    }
    let both = Tensor::stack(&[&t.min()?.to_dtype(DType::I64)?, &t.max()?.to_dtype(DType::I64)?], 0)?
        .to_vec::<i64>()?;
    let range = (both[0], both[1]);
    if remember {
        SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            seen.retain(|(w, ..)| w.strong_count() > 0);
            if seen.len() >= 8 {
                seen.remove(0);
            }
            seen.push((Arc::downgrade(t.storage()), t.version(), t.layout().clone(), range));
        });
    }
    Ok(range)
}

/// torch's common out-of-bounds message.
pub(crate) fn oob(index: i64, dim: usize, size: usize) -> Error {
    Error::msg(format!("index {index} is out of bounds for dimension {dim} with size {size}"))
}

/// The broadcast shape of `a` and `b`, reporting the first mismatch from the last dim as torch's
/// `infer_size` does ("The size of tensor a (..) must match the size of tensor b (..) at
/// non-singleton dimension ..").
pub(crate) fn broadcast_pair(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    for i in (0..rank).rev() {
        let da = if i + a.len() >= rank { a[i + a.len() - rank] } else { 1 };
        let db = if i + b.len() >= rank { b[i + b.len() - rank] } else { 1 };
        if da != db && da != 1 && db != 1 {
            return Err(Error::shape(format!(
                "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )));
        }
    }
    oxtorch_core::broadcast_shapes(a, b)
}
