//! More of torch's small tensor methods: `stride(dim)` (as [`Tensor::stride_at`]), the complex
//! conveniences on real tensors (`is_complex`, `conj`, `resolve_conj`, `resolve_neg`, `is_conj`,
//! `is_neg`, `real`, `angle`), the `unsafe_chunk`/`unsafe_split` aliases, `as_strided_scatter`,
//! `empty_permuted` and `tolist` (as [`Tensor::to_nested`]).

use std::f64::consts::PI;

use oxtorch_core::{wrap_dim, DType, Error, Result, Scalar};

use crate::options::TensorOptions;
use crate::Tensor;

/// A tensor's values as nested lists (torch's `tolist()`): a number for a 0-dim tensor, else one
/// list level per dim.
#[derive(Clone, Debug, PartialEq)]
pub enum NestedList {
    /// One element: a Python `float` (float dtypes), `int` (integer dtypes) or `bool`.
    Scalar(Scalar),
    /// The entries along one dim.
    List(Vec<NestedList>),
}

/// Builds the nested lists of `values` (row-major) over `dims`.
fn nest(values: &[Scalar], dims: &[usize]) -> NestedList {
    match dims.split_first() {
        None => NestedList::Scalar(values[0]),
        Some((&n, rest)) => {
            let step: usize = rest.iter().product();
            NestedList::List((0..n).map(|i| nest(&values[i * step..(i + 1) * step], rest)).collect())
        }
    }
}

impl Tensor {
    /// torch's `Tensor.stride(dim)`: the stride of one dim (negative dims count from the end).
    pub fn stride_at(&self, dim: isize) -> Result<usize> {
        if self.rank() == 0 {
            return Err(Error::msg(format!("Dimension specified as {dim} but tensor has no dimensions")));
        }
        let d = wrap_dim(dim, self.rank())?;
        Ok(self.strides()[d])
    }

    /// torch's `is_complex()`: oxtorch has no complex dtypes, so always false.
    pub fn is_complex(&self) -> bool {
        false
    }

    /// torch's `conj()`: for a real tensor, the tensor itself (same storage, same autograd node).
    pub fn conj(&self) -> Tensor {
        self.clone()
    }

    /// torch's `resolve_conj()`: a real tensor never has its conjugate bit set; returns itself.
    pub fn resolve_conj(&self) -> Tensor {
        self.clone()
    }

    /// torch's `resolve_neg()`: a real tensor never has its negative bit set; returns itself.
    pub fn resolve_neg(&self) -> Tensor {
        self.clone()
    }

    /// torch's `is_conj()`: false (no conjugate views of real tensors).
    pub fn is_conj(&self) -> bool {
        false
    }

    /// torch's `is_neg()`: false (no negative views of real tensors).
    pub fn is_neg(&self) -> bool {
        false
    }

    /// torch's `real` of a real tensor: the tensor itself.
    pub fn real(&self) -> Tensor {
        self.clone()
    }

    /// torch's `angle()` of a real tensor: `0` for values `>= 0` (and `-0.0`), `pi` for negative
    /// ones, NaN for NaN. Integer and bool inputs give the default float dtype. Its gradient is
    /// zero, as torch's is for real inputs.
    pub fn angle(&self) -> Result<Tensor> {
        let x = if self.is_floating_point() { self.clone() } else { self.to_dtype(DType::default_float())? };
        let negative = x.lt(0.0)?.to_dtype(x.dtype())?.mul(PI)?;
        let out = Tensor::where_cond(&x.isnan()?, x.detach(), &negative)?;
        if !x.requires_grad() {
            return Ok(out);
        }
        // Connect the result to x with a zero gradient: a never-true condition picks `out`.
        let never = Tensor::zeros(x.dims().to_vec(), (DType::Bool, x.device()))?;
        Tensor::where_cond(&never, &x, &out)
    }

    /// torch's `unsafe_chunk`: [`Tensor::chunk`] (oxtorch's views need no unsafe variant).
    pub fn unsafe_chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.chunk(chunks, dim)
    }

    /// torch's `unsafe_split`: [`Tensor::split`].
    pub fn unsafe_split(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.split(split_size, dim)
    }

    /// torch's `unsafe_split_with_sizes`: [`Tensor::split_with_sizes`].
    pub fn unsafe_split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.split_with_sizes(sizes, dim)
    }

    /// torch's `as_strided_scatter(self, src, size, stride, storage_offset)`: a copy of self with
    /// `out.as_strided(size, stride, storage_offset) = src`, the view taken over torch's clone of
    /// self: positions count self's elements in memory order when self is dense (a transposed
    /// tensor's clone keeps its strides), else in row-major order; the offset defaults to 0.
    /// `src` must have shape `size` and is cast to self's dtype. Differentiable w.r.t. both self
    /// and src.
    pub fn as_strided_scatter(
        &self,
        src: &Tensor,
        size: &[usize],
        stride: &[usize],
        storage_offset: Option<usize>,
    ) -> Result<Tensor> {
        if size.len() != stride.len() {
            return Err(Error::msg(format!(
                "mismatch in length of strides and shape: size has {} dims but stride has {}",
                size.len(),
                stride.len()
            )));
        }
        let offset = storage_offset.unwrap_or(0);
        let item = self.dtype().size_in_bytes();
        let extent = if size.contains(&0) {
            Some(0)
        } else {
            size.iter().zip(stride).try_fold(1usize, |acc, (&n, &s)| (n - 1).checked_mul(s)?.checked_add(acc))
        };
        let needed = extent.and_then(|e| e.checked_add(offset)).and_then(|e| e.checked_mul(item));
        if needed.is_none_or(|bytes| bytes > self.numel() * item) {
            return Err(Error::shape(format!(
                "setStorage: sizes {size:?}, strides {stride:?}, storage offset {offset}, and itemsize {item} requiring a storage size of {} are out of bounds for storage of size {}",
                needed.map_or("more than usize::MAX".to_string(), |b| b.to_string()),
                self.numel() * item
            )));
        }
        let positions = Tensor::arange(self.numel() as i64, (DType::I64, self.device()))?;
        let view = positions.as_strided(size, stride, Some(offset))?;
        if view.dims() != src.dims() {
            return Err(Error::shape(format!(
                "expected src to have a size equal to the slice of self. src size = {:?}, slice size = {:?}",
                src.dims(),
                view.dims()
            )));
        }
        if view.numel() == 0 {
            return self.copy();
        }
        let idx = view.reshape([-1])?;
        let src = src.to_dtype(self.dtype())?.reshape([-1])?;
        // Dense but permuted: scatter over the elements in memory order (the dims by falling
        // stride), then permute back.
        let order = if self.is_non_overlapping_and_dense() { memory_order(self) } else { Vec::new() };
        if order.iter().enumerate().any(|(i, &d)| i != d) {
            let base = self.permute(order.clone())?;
            let out =
                base.reshape([-1])?.scatter_raw(0, &idx, &src, None, true)?.reshape(base.dims().to_vec())?;
            let mut inverse = vec![0; order.len()];
            for (i, &d) in order.iter().enumerate() {
                inverse[d] = i;
            }
            return out.permute(inverse);
        }
        self.reshape([-1])?.scatter_raw(0, &idx, &src, None, true)?.reshape(self.dims().to_vec())
    }

    /// torch's `empty_permuted(size, physical_layout)`: a (zero-filled) tensor of `size` whose
    /// dims are laid out in memory in the order `physical_layout` (outermost first): it is
    /// contiguous in `[size[p] for p in physical_layout]`, permuted back to `size`.
    pub fn empty_permuted(
        size: &[usize],
        physical_layout: &[usize],
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let n = size.len();
        if physical_layout.len() != n {
            return Err(Error::msg(format!(
                "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = {n} is not equal to len(physical_layout) = {}",
                physical_layout.len()
            )));
        }
        let mut seen = vec![false; n];
        for (i, &d) in physical_layout.iter().enumerate() {
            if d >= n {
                return Err(Error::msg(format!(
                    "Dimension out of range (expected to be between 0 and {}, but got {d} at index {i}).  NB: negative dims not currently supported; file an issue if you want it.",
                    n as isize - 1
                )));
            }
            if seen[d] {
                return Err(Error::msg("Duplicate dim not allowed"));
            }
            seen[d] = true;
        }
        let physical: Vec<usize> = physical_layout.iter().map(|&d| size[d]).collect();
        let mut inverse = vec![0isize; n];
        for (j, &d) in physical_layout.iter().enumerate() {
            inverse[d] = j as isize;
        }
        let opts: TensorOptions = opts.into();
        let opts = opts.dtype(opts.dtype_or(DType::default_float()));
        Tensor::empty(physical, opts)?.permute(inverse)
    }

    /// torch's `tolist()`: the values as nested lists, floats as `Scalar::Float`, integers as
    /// `Scalar::Int`, bools as `Scalar::Bool`.
    pub fn to_nested(&self) -> Result<NestedList> {
        let values: Vec<Scalar> = match self.dtype() {
            DType::Bool => {
                let v = self.to_dtype(DType::U8)?.to_vec::<u8>()?;
                v.into_iter().map(|b| Scalar::Bool(b != 0)).collect()
            }
            d if d.is_float() => {
                let v = self.to_dtype(DType::F64)?.to_vec::<f64>()?;
                v.into_iter().map(Scalar::Float).collect()
            }
            _ => self.to_dtype(DType::I64)?.to_vec::<i64>()?.into_iter().map(Scalar::Int).collect(),
        };
        if self.rank() == 0 {
            return Ok(NestedList::Scalar(values[0]));
        }
        Ok(nest(&values, self.dims()))
    }
}

/// The dims of `t` from the outermost in memory to the innermost (falling stride; size-1 dims,
/// whose stride says nothing, keep their place among equals).
fn memory_order(t: &Tensor) -> Vec<usize> {
    let mut order: Vec<usize> = (0..t.rank()).collect();
    let key = |d: usize| if t.dims()[d] == 1 { None } else { Some(std::cmp::Reverse(t.strides()[d])) };
    // Size-1 dims stay where they are; the others sort by falling stride around them.
    let movable: Vec<usize> = order.iter().copied().filter(|&d| key(d).is_some()).collect();
    let mut sorted = movable.clone();
    sorted.sort_by_key(|&d| key(d));
    for (slot, d) in movable.iter().zip(sorted) {
        order[*slot] = d;
    }
    order
}
