//! Indexing by dim: gather/scatter (with reductions), index_select/add/copy/fill, take,
//! take_along_dim. Masked ops, nonzero and `t[...]` indexing live in `crate::indexing`.
//!
//! Every op here runs one [`IndexOp::Gather`] or [`IndexOp::Scatter`] prim; the index values are
//! checked (and, for the ops torch lets wrap, negative ones wrapped) here with torch's messages.

use oxtorch_core::ops::{IndexOp, Prim, ReduceOp};
use oxtorch_core::{wrap_dim, DType, Error, Result, Scalar};

use crate::dispatch::apply1;
use crate::indexing::{checked_indices, index_as_i64, oob, IndexDTypes};
use crate::Tensor;

/// A 0-d tensor seen as 1-d (torch's gather/scatter treat them alike).
fn at_least_1d(t: &Tensor) -> Result<Tensor> {
    if t.rank() == 0 {
        t.reshape([1])
    } else {
        Ok(t.clone())
    }
}

/// `index` (1-d, `n` entries) viewed as `[1, .., n, .., 1]` and expanded to `shape` (`n` at `dim`).
fn expand_along(index: &Tensor, dim: usize, shape: &[usize]) -> Result<Tensor> {
    let mut view = vec![1usize; shape.len()];
    view[dim] = index.numel();
    index.reshape(view)?.broadcast_to(shape)
}

/// Checks that `index` is a vector (0-d or 1-d) as the index_* ops need.
fn check_vector(index: &Tensor, op: &str) -> Result<()> {
    if index.rank() > 1 {
        return Err(Error::msg(format!("{op}(): Index is supposed to be a vector")));
    }
    Ok(())
}

impl Tensor {
    /// Runs the gather prim (indices already int64 and in range for `dim`).
    pub(crate) fn gather_raw(&self, dim: usize, index: &Tensor) -> Result<Tensor> {
        apply1(&Prim::Index(IndexOp::Gather { dim }), &[self, index], self.device())
    }

    /// Runs the scatter prim (`src` of self's dtype, indices int64).
    pub(crate) fn scatter_raw(
        &self,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        reduce: Option<ReduceOp>,
        include_self: bool,
    ) -> Result<Tensor> {
        let prim = Prim::Index(IndexOp::Scatter { dim, reduce, include_self });
        apply1(&prim, &[self, index, src], self.device())
    }

    /// `torch.gather(self, dim, index)`: `out[i][j][k] = self[i][index[i][j][k]][k]` (for `dim = 1`).
    /// `index` is int64 (or int32) with self's rank and no larger than self in the other dims.
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let index = index_as_i64(index, IndexDTypes::Int("gather(): Expected dtype int32/int64 for index"))?;
        let d = wrap_dim(dim, self.rank())?;
        if index.rank().max(1) != self.rank().max(1) {
            return Err(Error::msg("Index tensor must have the same number of dimensions as input tensor"));
        }
        let out_shape = index.dims().to_vec();
        let (src, idx) = (at_least_1d(self)?, at_least_1d(&index)?);
        if let Some(k) = larger_dim(idx.dims(), src.dims(), d) {
            return Err(Error::shape(format!(
                "Size does not match at dimension {k} expected index {:?} to be no larger than self {:?} apart from dimension {d}",
                idx.dims(),
                src.dims()
            )));
        }
        let idx = device_checked(&idx, src.dims()[d], d)?;
        src.gather_raw(d, &idx)?.reshape(out_shape)
    }

    fn scatter_impl(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: Option<ReduceOp>,
        include_self: bool,
    ) -> Result<Tensor> {
        let index = index_as_i64(index, IndexDTypes::Int("scatter(): Expected dtype int32/int64 for index"))?;
        let d = wrap_dim(dim, self.rank())?;
        if src.dtype() != self.dtype() {
            return Err(Error::msg("scatter(): Expected self.dtype to be equal to src.dtype"));
        }
        if matches!(reduce, Some(ReduceOp::Sum | ReduceOp::Prod))
            && matches!(self.dtype(), DType::F16 | DType::BF16)
        {
            // torch accumulates reduced-precision sums and products in f32 and rounds once
            // (2048 + 1 + 1 is 2050 in float16, not 2048).
            let (me, src32) = (self.to_dtype(DType::F32)?, src.to_dtype(DType::F32)?);
            return me.scatter_impl(dim, &index, &src32, reduce, include_self)?.to_dtype(self.dtype());
        }
        if index.rank().max(1) != self.rank().max(1) {
            return Err(Error::msg("Index tensor must have the same number of dimensions as input tensor"));
        }
        if index.numel() == 0 {
            return self.copy();
        }
        let (me, idx, src) = (at_least_1d(self)?, at_least_1d(&index)?, at_least_1d(src)?);
        let larger_than_src =
            idx.rank() == src.rank() && idx.dims().iter().zip(src.dims()).any(|(i, s)| i > s);
        if larger_dim(idx.dims(), me.dims(), d).is_some() || larger_than_src {
            return Err(Error::shape(format!(
                "Expected index {:?} to be no larger than self {:?} apart from dimension {d} and to be no larger size than src {:?}",
                idx.dims(),
                me.dims(),
                src.dims()
            )));
        }
        let idx = device_checked(&idx, me.dims()[d], d)?;
        me.scatter_raw(d, &idx, &src, reduce, include_self)?.reshape(self.dims().to_vec())
    }

    /// `self.scatter(dim, index, src)`: a copy of self with `out[index[i][j]][j] = src[i][j]` (dim 0).
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_impl(dim, index, src, None, true)
    }

    /// `self.scatter(dim, index, value)`: like [`Tensor::scatter`] with every source value `value`.
    pub fn scatter_value(&self, dim: isize, index: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let src = Tensor::full((), value.into(), self.same_options())?;
        let shape = index.dims().to_vec();
        if let Ok(d) = wrap_dim(dim, self.rank()) {
            let me = self.dims();
            if shape.len() == me.len() && (0..me.len()).any(|k| k != d && shape[k] > me[k]) {
                return Err(Error::shape(format!(
                    "Expected index {shape:?} to be no larger than self {me:?} apart from dimension {d}"
                )));
            }
        }
        self.scatter_impl(dim, index, &src.broadcast_to(&shape)?, None, true)
    }

    /// `self.scatter_add(dim, index, src)`: sums source values into a copy of self.
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_impl(dim, index, src, Some(ReduceOp::Sum), true)
    }

    /// `self.scatter_reduce(dim, index, src, reduce, include_self)` with `reduce` one of "sum",
    /// "prod", "mean", "amax", "amin". "mean" divides by the number of values reduced (floor
    /// division for integers).
    pub fn scatter_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<Tensor> {
        let op = match reduce {
            "sum" => ReduceOp::Sum,
            "prod" => ReduceOp::Prod,
            "amax" | "max" => ReduceOp::Max,
            "amin" | "min" => ReduceOp::Min,
            "mean" => return self.scatter_mean(dim, index, src, include_self),
            other => {
                return Err(Error::msg(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {other}"
                )))
            }
        };
        self.scatter_impl(dim, index, src, Some(op), include_self)
    }

    /// `scatter_reduce(.., "mean", ..)`: a scattered sum divided by a scattered count.
    fn scatter_mean(&self, dim: isize, index: &Tensor, src: &Tensor, include_self: bool) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::msg("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"));
        }
        if matches!(self.dtype(), DType::F16 | DType::BF16) {
            // torch accumulates reduced-precision means in f32 and rounds once.
            let (me, src) = (self.to_dtype(DType::F32)?, src.to_dtype(DType::F32)?);
            return me.scatter_mean(dim, index, &src, include_self)?.to_dtype(self.dtype());
        }
        let sum = self.scatter_impl(dim, index, src, Some(ReduceOp::Sum), include_self)?;
        let start = if include_self { self.ones_like()? } else { self.zeros_like()? };
        let ones = Tensor::ones((), self.same_options())?.broadcast_to(src.dims())?;
        let count = start.scatter_impl(dim, index, &ones, Some(ReduceOp::Sum), true)?;
        let count = Tensor::where_cond(&count.eq(0)?, Scalar::Int(1), &count)?.to_dtype(self.dtype())?;
        if self.is_floating_point() {
            sum.div(&count)
        } else {
            sum.floor_divide(&count)
        }
    }

    /// `self.index_select(dim, index)`: the entries `index` (a vector of int64/int32) along `dim`.
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let index =
            index_as_i64(index, IndexDTypes::Int("index_select(): Expected dtype int32 or int64 for index"))?;
        check_vector(&index, "index_select")?;
        let d = wrap_dim(dim, self.rank())?;
        if self.rank() == 0 && index.numel() != 1 {
            return Err(Error::msg(format!(
                "index_select(): Index to scalar can have only 1 value, got {} value(s)",
                index.numel()
            )));
        }
        let me = at_least_1d(self)?;
        let size = me.dims()[d];
        let idx = checked_indices(&index, size, false, |v| {
            Error::msg(format!("INDICES element is out of DATA bounds, id={v} axis_dim={size}"))
        })?;
        let mut shape = me.dims().to_vec();
        shape[d] = idx.numel();
        let out = me.gather_raw(d, &expand_along(&idx, d, &shape)?)?;
        if self.rank() == 0 {
            out.reshape(Vec::<usize>::new())
        } else {
            Ok(out)
        }
    }

    /// Shape checks shared by index_add and index_copy: `source` has self's shape with `index.numel()`
    /// at `dim`.
    fn check_index_source(&self, d: usize, index: &Tensor, source: &Tensor, op: &str) -> Result<()> {
        if source.dtype() != self.dtype() {
            return Err(Error::msg(format!(
                "{op}(): self ({}) and source ({}) must have the same scalar type",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        let mut want = at_least_1d(self)?.dims().to_vec();
        want[d] = index.numel();
        let got = at_least_1d(source)?.dims().to_vec();
        if op == "index_add_" && got.len() == want.len() {
            let me = at_least_1d(self)?;
            if (0..got.len()).any(|k| k != d && got[k] != me.dims()[k]) {
                return Err(Error::shape(format!(
                    "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {:?} source.shape = {:?}",
                    self.dims(),
                    source.dims()
                )));
            }
            if got[d] != index.numel() {
                return Err(Error::shape(format!(
                    "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {d}",
                    index.numel(),
                    got[d]
                )));
            }
        }
        if op == "index_copy_" && got.len() == want.len() {
            let slice = |s: &[usize]| -> String {
                let v: Vec<String> = (0..s.len()).filter(|&k| k != d).map(|k| s[k].to_string()).collect();
                v.join(", ")
            };
            let me = at_least_1d(self)?;
            let (ds, ss) = (slice(me.dims()), slice(&got));
            if ds != ss {
                return Err(Error::shape(format!(
                    "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: {ds} at dimension {d} and source slice shape: {ss} at dimension 0."
                )));
            }
            if got[d] != index.numel() {
                return Err(Error::shape(format!(
                    "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})",
                    index.numel(),
                    got[d]
                )));
            }
        }
        if got != want {
            return Err(Error::shape(format!(
                "{op}(): source has shape {:?} but self with dimension {d} of size {} has shape {want:?}",
                source.dims(),
                index.numel()
            )));
        }
        Ok(())
    }

    /// `self.index_add(dim, index, source, alpha)`: adds `alpha * source[.., i, ..]` to the entries
    /// `index[i]` of a copy of self along `dim` (duplicates accumulate).
    pub fn index_add(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        let index =
            index_as_i64(index, IndexDTypes::Int("index_add_(): Expected dtype int32/int64 for index"))?;
        check_vector(&index, "index_add_")?;
        let d = wrap_dim(dim, self.rank())?;
        self.check_index_source(d, &index, source, "index_add_")?;
        let alpha = alpha.into();
        let me = at_least_1d(self)?;
        let idx = checked_indices(&index, me.dims()[d], false, |v| oob(v, d, me.dims()[d]))?;
        let src = at_least_1d(source)?;
        // alpha takes self's dtype first (torch: 1.5 is 1 for an integer self).
        // (Converted on the host: reading a device scalar back would be a sync.)
        let alpha_host =
            Tensor::full_unchecked((), alpha, (self.dtype(), oxtorch_core::Device::Cpu))?.item_scalar()?;
        let src = if alpha_host.to_f64() == 1.0 {
            src
        } else {
            src.mul(&Tensor::full_unchecked((), alpha_host, self.same_options())?)?
        };
        let idx = expand_along(&idx, d, src.dims())?;
        let (rank, unit_alpha) = (self.rank(), alpha_host.to_f64() == 1.0);
        if rank >= 2
            && unit_alpha
            && (d == 0 || d == rank - 1)
            && matches!(self.dtype(), DType::F16 | DType::BF16)
        {
            // torch's kernel for a matrix's first or last dim with alpha 1 sums reduced-precision
            // values in f32 and rounds once; its other paths (vectors, middle dims, a scaled
            // source) round at each addition.
            let (me32, src32) = (me.to_dtype(DType::F32)?, src.to_dtype(DType::F32)?);
            let out = me32.scatter_raw(d, &idx, &src32, Some(ReduceOp::Sum), true)?;
            return out.to_dtype(self.dtype())?.reshape(self.dims().to_vec());
        }
        me.scatter_raw(d, &idx, &src, Some(ReduceOp::Sum), true)?.reshape(self.dims().to_vec())
    }

    /// `self.index_copy(dim, index, source)`: copies `source[.., i, ..]` into the entries `index[i]`
    /// of a copy of self along `dim` (int64 indices).
    pub fn index_copy(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        let index = index_as_i64(
            index,
            IndexDTypes::Long("index_copy_(): Expected a long tensor for index, but got {}"),
        )?;
        check_vector(&index, "index_copy_")?;
        let d = wrap_dim(dim, self.rank())?;
        self.check_index_source(d, &index, source, "index_copy_")?;
        let me = at_least_1d(self)?;
        let size = me.dims()[d];
        let idx = checked_indices(&index, size, false, |v| {
            Error::msg(format!(
                "index_copy_(): index {v} is out of bounds for dimension {d} with size {size}"
            ))
        })?;
        let src = at_least_1d(source)?;
        let idx = expand_along(&idx, d, src.dims())?;
        me.scatter_raw(d, &idx, &src, None, true)?.reshape(self.dims().to_vec())
    }

    /// `self.index_fill(dim, index, value)`: sets the entries `index` (int64, negative wrap) along
    /// `dim` of a copy of self to `value`.
    pub fn index_fill(&self, dim: isize, index: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let index = index_as_i64(index, IndexDTypes::Long("index_fill_(): Expected dtype int64 for index."))?;
        if index.rank() > 1 {
            return Err(Error::msg("Index has to be a vector/scalar"));
        }
        let d = wrap_dim(dim, self.rank())?;
        let me = at_least_1d(self)?;
        let size = me.dims()[d];
        let idx = checked_indices(&index, size, true, |v| oob(v, d, size))?;
        let mut shape = me.dims().to_vec();
        shape[d] = idx.numel();
        let value = value.into();
        value.check_converts(self.dtype())?;
        let src = Tensor::full((), value, self.same_options())?.broadcast_to(&shape)?;
        let idx = expand_along(&idx, d, &shape)?;
        me.scatter_raw(d, &idx, &src, None, true)?.reshape(self.dims().to_vec())
    }

    /// `self.take(index)`: elements of the flattened self at `index` (int64; negative wrap), in
    /// index's shape.
    pub fn take(&self, index: &Tensor) -> Result<Tensor> {
        let index =
            index_as_i64(index, IndexDTypes::Long("take(): Expected a long tensor for index, but got {}"))?;
        let n = self.numel();
        let idx = checked_indices(&index, n, true, |v| {
            Error::msg(format!("out of range: tried to access index {v} on a tensor of {n} elements."))
        })?;
        self.reshape([-1])?.gather_raw(0, &idx.reshape([-1])?)?.reshape(index.dims().to_vec())
    }

    /// `torch.take_along_dim(self, indices, dim)`: gathers along `dim` after broadcasting self and
    /// indices in the other dims; with `dim = None` both are flattened first. Negative indices wrap.
    pub fn take_along_dim(&self, indices: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        let indices = index_as_i64(
            indices,
            IndexDTypes::Long("torch.take_along_dim(): dtype of indices should be Long but got {}"),
        )?;
        let Some(dim) = dim else {
            // torch flattens both and gathers: no wrapping of negative indices here.
            return self.reshape([-1])?.gather(0, &indices.reshape([-1])?);
        };
        if self.rank() == 0 {
            return Err(Error::msg(format!("Dimension specified as {dim} but tensor has no dimensions")));
        }
        if self.rank() != indices.rank() {
            return Err(Error::msg(format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                self.rank(),
                indices.rank()
            )));
        }
        let d = wrap_dim(dim, self.rank())?;
        let me = at_least_1d(self)?;
        let size = me.dims()[d];
        let idx = checked_indices(&at_least_1d(&indices)?, size, true, |v| oob(v, d, size))?;
        let (mut sa, mut si) = (me.dims().to_vec(), idx.dims().to_vec());
        sa[d] = 1;
        si[d] = 1;
        let b = oxtorch_core::broadcast_shapes(&sa, &si)?;
        let (mut ta, mut ti) = (b.clone(), b);
        ta[d] = me.dims()[d];
        ti[d] = idx.dims()[d];
        let out = me.broadcast_to(&ta)?.gather_raw(d, &idx.broadcast_to(&ti)?)?;
        if self.rank() == 0 {
            out.reshape(Vec::<usize>::new())
        } else {
            Ok(out)
        }
    }
}

/// The first dim other than `dim` where `index` is larger than `data` (torch's gather and scatter
/// shape check).
fn larger_dim(index: &[usize], data: &[usize], dim: usize) -> Option<usize> {
    (0..index.len().min(data.len())).find(|&k| k != dim && index[k] > data[k])
}

/// Gather/scatter indices checked against `size` on devices whose kernels do not check them
/// (XLA clamps or drops an index out of range): torch's error instead of a silent answer (one
/// read-back of the index range). The cpu kernels check as they go; indices the library computes
/// itself (backward formulas, argmax positions) run under [`trusted_indices`], unchecked.
fn device_checked(index: &Tensor, size: usize, dim: usize) -> Result<Tensor> {
    if index.device().is_cpu() || TRUSTED.with(std::cell::Cell::get) {
        return Ok(index.clone());
    }
    checked_indices(index, size, false, |v| oob(v, dim, size))
}

thread_local! {
    /// Set inside [`trusted_indices`].
    static TRUSTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the device-side range check of gather/scatter indices skipped, for indices the
/// caller computed in range itself (an argmax, a sort's permutation): no read-back of their range,
/// so a fused program is not cut in two. Backward passes run so. On the cpu the kernels check
/// regardless.
pub fn trusted_indices<R>(f: impl FnOnce() -> R) -> R {
    with_trust(true, f)
}

/// Runs `f` with the device-side range check on again (a custom function's backward, inside a
/// backward pass that trusts its own formulas).
pub(crate) fn untrusted_indices<R>(f: impl FnOnce() -> R) -> R {
    with_trust(false, f)
}

/// Runs `f` with the trust flag set to `trusted`, restored afterwards even if `f` panics.
fn with_trust<R>(trusted: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            TRUSTED.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(TRUSTED.with(|t| t.replace(trusted)));
    f()
}
