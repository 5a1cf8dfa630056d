//! Python-style tensor indexing: `t[1, 1:3, None, ..., idx]` as `t.i((1, 1..3, NewAxis, Ellipsis, &idx))`.
//!
//! * integers select (removing the dim; negative counts from the end), ranges slice (see
//!   [`TensorIndex::slice`] for steps), [`NewAxis`] inserts a size-1 dim and [`Ellipsis`] stands for
//!   as many full slices as needed: these *basic* indices return views sharing self's storage;
//! * int64/int32 tensors and bool (mask) tensors are *advanced* indices: they are broadcast
//!   together, and the result's indexed dims are replaced by the broadcast shape, in place when the
//!   advanced indices are adjacent and at the front otherwise (NumPy's and torch's rule); the result
//!   is a copy.
//!
//! [`Tensor::index_put_`] assigns (or accumulates) through any such index.
//!
//! ```
//! use oxtorch_tensor::{tensor, Tensor, NewAxis, Ellipsis, TensorIndex};
//! # fn main() -> oxtorch_tensor::Result<()> {
//! let t = Tensor::arange(24, oxtorch_tensor::DType::I64)?.reshape([2, 3, 4])?;
//! let v = t.i((1, 1..3, NewAxis))?;                     // a view of shape [2, 1, 4]
//! assert_eq!(v.dims(), &[2, 1, 4]);
//! let idx = tensor!([2i64, 0]);
//! assert_eq!(t.i((Ellipsis, &idx))?.dims(), &[2, 3, 2]);
//! assert_eq!(t.i((.., TensorIndex::slice(.., 2)))?.dims(), &[2, 2, 4]);
//! # Ok(()) }
//! ```

mod advanced;
mod args;
pub(crate) mod checks;
mod masked;
mod put;

pub use args::IntoIndices;
pub(crate) use checks::{broadcast_pair, checked_indices, index_as_i64, oob, IndexDTypes};

use crate::dims::SliceRange;
use crate::Tensor;
use oxtorch_core::{Error, Result};

/// One entry of an index expression.
#[derive(Clone, Debug)]
pub enum TensorIndex {
    /// Selects one entry, removing the dim (`t[3]`, `t[-1]`).
    Int(isize),
    /// A Python slice `start:stop:step` (`step > 0`).
    Slice {
        /// first entry (`None`: from the start)
        start: Option<isize>,
        /// end, exclusive (`None`: to the end)
        stop: Option<isize>,
        /// stride
        step: usize,
    },
    /// `None` / `np.newaxis`: a new dim of size 1.
    NewAxis,
    /// `...`: as many full slices as the other entries leave.
    Ellipsis,
    /// An int64/int32 index tensor or a bool mask (advanced indexing).
    Tensor(Tensor),
}

/// `None` in a Python index: a new dim of size 1.
#[derive(Clone, Copy, Debug)]
pub struct NewAxis;

/// `...` in a Python index.
#[derive(Clone, Copy, Debug)]
pub struct Ellipsis;

impl TensorIndex {
    /// A slice with a step: `TensorIndex::slice(1..7, 2)` is Python's `1:7:2`.
    pub fn slice(range: impl SliceRange, step: usize) -> TensorIndex {
        let (start, stop) = range.bounds();
        TensorIndex::Slice { start, stop, step }
    }

    /// Number of self's dims the entry consumes.
    fn consumed(&self) -> usize {
        match self {
            TensorIndex::Int(_) | TensorIndex::Slice { .. } => 1,
            TensorIndex::NewAxis | TensorIndex::Ellipsis => 0,
            TensorIndex::Tensor(t) if is_mask(t) => t.rank(),
            TensorIndex::Tensor(_) => 1,
        }
    }
}

/// True for the index tensors torch treats as masks (bool, and the deprecated uint8).
fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), oxtorch_core::DType::Bool | oxtorch_core::DType::U8)
}

/// The result of the basic part of an index: a view, plus the advanced indices found, each with the
/// dim of the view it indexes.
pub(crate) struct Basic {
    pub(crate) view: Tensor,
    pub(crate) advanced: Vec<(usize, Tensor)>,
}

/// Applies the basic entries of `indices` to `t` (as views) and collects the advanced ones.
pub(crate) fn apply_basic(t: &Tensor, indices: &[TensorIndex]) -> Result<Basic> {
    let consumed: usize = indices.iter().map(TensorIndex::consumed).sum();
    if consumed > t.rank() {
        return Err(Error::msg(format!("too many indices for tensor of dimension {}", t.rank())));
    }
    let mut view = t.clone();
    let mut advanced = Vec::new();
    let mut d = 0usize;
    let mut seen_ellipsis = false;
    let select = |view: &Tensor, d: usize, i: isize| -> Result<Tensor> {
        let size = view.dims()[d] as isize;
        if i < -size || i >= size {
            return Err(Error::msg(format!("index {i} is out of bounds for dimension {d} with size {size}")));
        }
        view.select(d as isize, i)
    };
    for entry in indices {
        match entry {
            TensorIndex::Int(i) => view = select(&view, d, *i)?,
            TensorIndex::Slice { start, stop, step } => {
                if *step == 0 {
                    return Err(Error::msg("slice step cannot be zero"));
                }
                view = view.slice_bounds(d as isize, *start, *stop, *step)?;
                d += 1;
            }
            TensorIndex::NewAxis => {
                view = view.unsqueeze(d as isize)?;
                d += 1;
            }
            // Only the first ellipsis expands (torch accepts `t[..., ...]`).
            TensorIndex::Ellipsis if !seen_ellipsis => {
                d += t.rank() - consumed;
                seen_ellipsis = true;
            }
            TensorIndex::Ellipsis => {}
            TensorIndex::Tensor(m) if is_mask(m) => {
                let m = m.to_dtype(oxtorch_core::DType::Bool)?;
                if m.rank() == 0 {
                    // A 0-d mask adds a dim of size 1 indexed by [0] (true) or [] (false).
                    view = view.unsqueeze(d as isize)?;
                    let idx = if m.item::<bool>()? { vec![0i64] } else { vec![] };
                    let n = idx.len();
                    advanced.push((d, Tensor::from_vec_on(idx, [n], t.device())?));
                    d += 1;
                    continue;
                }
                for k in 0..m.rank() {
                    if m.dims()[k] != view.dims()[d + k] {
                        return Err(Error::msg(format!(
                            "The shape of the mask {:?} at index {k} does not match the shape of the indexed tensor {:?} at index {}",
                            m.dims(),
                            view.dims(),
                            d + k
                        )));
                    }
                }
                for (k, coord) in m.nonzero_tuple()?.into_iter().enumerate() {
                    advanced.push((d + k, coord));
                }
                d += m.rank();
            }
            TensorIndex::Tensor(ix) => {
                if ix.rank() == 0 && ix.dtype().is_int() && ix.dtype() != oxtorch_core::DType::U8 {
                    // torch takes a 0-d integer tensor (of any signed width) as the integer: a
                    // select (a view), not an advanced index (which would move the result's dims
                    // and copy).
                    view = select(&view, d, ix.to_dtype(oxtorch_core::DType::I64)?.item::<i64>()? as isize)?;
                    continue;
                }
                if !matches!(ix.dtype(), oxtorch_core::DType::I64 | oxtorch_core::DType::I32) {
                    return Err(Error::msg(
                        "tensors used as indices must be long, int, byte or bool tensors",
                    ));
                }
                advanced.push((d, ix.to_dtype(oxtorch_core::DType::I64)?));
                d += 1;
            }
        }
    }
    Ok(Basic { view, advanced })
}

impl Tensor {
    /// `self[indices]` with Python's rules (see the [module docs](crate::indexing)): a view for
    /// basic indices, a copy when an index tensor or mask takes part.
    pub fn i(&self, indices: impl IntoIndices) -> Result<Tensor> {
        let Basic { view, advanced } = apply_basic(self, &indices.into_indices())?;
        if advanced.is_empty() {
            return Ok(view);
        }
        advanced::gather_advanced(&view, &advanced)
    }
}
