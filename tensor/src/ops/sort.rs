//! Ordering: sort, argsort, msort, topk, kthvalue, unique, unique_consecutive, searchsorted,
//! bucketize, histc, bincount, and the cumulative scans (cumsum, cumprod, cummax, cummin,
//! logcumsumexp).
//!
//! Each op checks its arguments with torch's messages and runs one [`SortOp`] prim. Row ops see 0-d
//! inputs as `[1]` and give 0-d results back, as torch does.

use oxtorch_core::ops::{Prim, SortOp};
use oxtorch_core::{wrap_dim, DType, Error, Result, ResultTypeState};

use crate::dispatch::{apply, apply1};
use crate::{Operand, Tensor};

impl Tensor {
    /// The input as rank >= 1 (a 0-d tensor becomes `[1]`) and `dim` wrapped.
    pub(crate) fn as_rows(&self, dim: isize) -> Result<(Tensor, usize)> {
        let d = wrap_dim(dim, self.rank())?;
        let x = if self.rank() == 0 { self.reshape([1])? } else { self.clone() };
        Ok((x, d))
    }

    /// Runs a two-output row prim; outputs are reshaped back to 0-d for a 0-d input.
    pub(crate) fn row_pair(&self, x: &Tensor, op: SortOp) -> Result<(Tensor, Tensor)> {
        let mut outs = apply(&Prim::Sort(op), &[x], x.device())?;
        let i = outs.pop().expect("two outputs");
        let v = outs.pop().expect("two outputs");
        if self.rank() == 0 {
            return Ok((v.reshape(Vec::<isize>::new())?, i.reshape(Vec::<isize>::new())?));
        }
        Ok((v, i))
    }

    /// Runs a one-output row prim, reshaping back to 0-d for a 0-d input.
    fn row_one(&self, x: &Tensor, op: SortOp) -> Result<Tensor> {
        let out = apply1(&Prim::Sort(op), &[x], x.device())?;
        if self.rank() == 0 {
            return out.reshape(Vec::<isize>::new());
        }
        Ok(out)
    }

    /// Sorts along `dim` (torch's `sort(dim, descending, stable=True)`; NaN sorts as the largest
    /// value): `(values, int64 indices)`. Equal elements keep their order, also when `descending`.
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        let (x, dim) = self.as_rows(dim)?;
        self.row_pair(&x, SortOp::Sort { dim, descending })
    }

    /// The indices that sort along `dim` (stable).
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        Ok(self.sort(dim, descending)?.1)
    }

    /// The values sorted along dim 0 (torch's `msort`).
    pub fn msort(&self) -> Result<Tensor> {
        Ok(self.sort(0, false)?.0)
    }

    /// The `k` largest (or smallest) elements along `dim` and their indices, in torch's CPU order
    /// (for equal values too). `sorted = false` keeps torch's selection order.
    pub fn topk(&self, k: i64, dim: isize, largest: bool, sorted: bool) -> Result<(Tensor, Tensor)> {
        if self.dtype() == DType::Bool {
            return Err(Error::msg("topk does not support bool dtypes on CPU"));
        }
        let (x, dim) = self.as_rows(dim)?;
        if k < 0 || k as usize > x.dims()[dim] {
            return Err(Error::msg("selected index k out of range"));
        }
        if self.rank() == 0 && k == 0 {
            // torch gives a 0-d tensor back whole, with index 0, for k = 0 as for k = 1.
            return Ok((self.copy()?, Tensor::zeros([0usize; 0], (DType::I64, self.device()))?));
        }
        self.row_pair(&x, SortOp::TopK { k: k as usize, dim, largest, sorted })
    }

    /// The `k`-th smallest element (1-based) along `dim` and its index (torch's quickselect picks
    /// among equal values).
    pub fn kthvalue(&self, k: i64, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.refuse_bool("kthvalue_cpu")?;
        let (x, d) = self.as_rows(dim)?;
        let size = x.dims()[d];
        if size == 0 && x.numel() == 0 && self.rank() > 0 {
            return Err(Error::msg(format!("kthvalue(): Expected reduction dim {d} to have non-zero size.")));
        }
        if k < 1 || k as usize > size {
            return Err(Error::msg(format!("kthvalue(): selected number k out of range for dimension {d}")));
        }
        let (v, i) = self.row_pair(&x, SortOp::KthValue { k: k as usize, dim: d })?;
        self.finish_keepdim(v, i, d, keepdim)
    }

    /// `"<kernel>" not implemented for 'Bool'` for bool inputs.
    pub(crate) fn refuse_bool(&self, kernel: &str) -> Result<()> {
        if self.dtype() == DType::Bool {
            return Err(Error::msg(format!("\"{kernel}\" not implemented for 'Bool'")));
        }
        Ok(())
    }

    /// Drops the kept dim `d` of a `(values, indices)` pair unless `keepdim` (0-d inputs stay 0-d).
    pub(crate) fn finish_keepdim(
        &self,
        v: Tensor,
        i: Tensor,
        d: usize,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        if self.rank() == 0 {
            return Ok((v, i));
        }
        Ok((Self::finish_reduction(v, &[d], keepdim)?, Self::finish_reduction(i, &[d], keepdim)?))
    }

    /// Cumulative sum along `dim`; integer and bool inputs accumulate in int64 unless `dtype` is given
    /// (then the input is cast to `dtype` first, as torch does; a bool `dtype` is refused).
    pub fn cumsum(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        self.cum(dim, dtype, false)
    }

    /// Cumulative product along `dim`, with `cumsum`'s dtype rules.
    pub fn cumprod(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        self.cum(dim, dtype, true)
    }

    fn cum(&self, dim: isize, dtype: Option<DType>, prod: bool) -> Result<Tensor> {
        let target = dtype.unwrap_or(if self.dtype().is_float() { self.dtype() } else { DType::I64 });
        if target == DType::Bool {
            let name = if prod { "cumprod" } else { "cumsum" };
            return Err(Error::msg(format!("\"{name}_out_cpu\" not implemented for 'Bool'")));
        }
        let (x, dim) = self.as_rows(dim)?;
        let x = x.to_dtype(target)?;
        let op = if prod { SortOp::CumProd { dim } } else { SortOp::CumSum { dim } };
        self.row_one(&x, op)
    }

    /// Running maximum along `dim` and the index of the last maximal element so far (NaN propagates).
    pub fn cummax(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        let (x, dim) = self.as_rows(dim)?;
        self.row_pair(&x, SortOp::CumMax { dim })
    }

    /// Running minimum along `dim` and the index of the last minimal element so far.
    pub fn cummin(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        let (x, dim) = self.as_rows(dim)?;
        self.row_pair(&x, SortOp::CumMin { dim })
    }

    /// `log(cumsum(exp(x)))` along `dim`, computed stably (float inputs only).
    pub fn logcumsumexp(&self, dim: isize) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::msg(format!(
                "\"logcumsumexp_out_cpu\" not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        let (x, dim) = self.as_rows(dim)?;
        self.row_one(&x, SortOp::LogCumSumExp { dim })
    }

    /// The distinct elements, sorted ascending (torch's CPU `unique` sorts whether or not `sorted`
    /// is asked), with the inverse indices (shaped like the input) and the counts when asked.
    pub fn unique(
        &self,
        sorted: bool,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        let _ = sorted; // torch's CPU kernel sorts either way
        self.unique_impl(false, return_inverse, return_counts)
    }

    /// Collapses runs of equal consecutive elements of the flattened input, with inverse indices and
    /// run lengths when asked (`dim = None`).
    pub fn unique_consecutive(
        &self,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        self.unique_impl(true, return_inverse, return_counts)
    }

    fn unique_impl(
        &self,
        consecutive: bool,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        let mut outs = apply(&Prim::Sort(SortOp::Unique { consecutive }), &[self], self.device())?;
        let counts = outs.pop().expect("three outputs");
        let inverse = outs.pop().expect("three outputs");
        let values = outs.pop().expect("three outputs");
        Ok((values, return_inverse.then_some(inverse), return_counts.then_some(counts)))
    }

    /// [`Tensor::searchsorted`] on boundaries that `sorter` (int64 indices along the last dim, of
    /// the boundaries' shape) puts in ascending order, as torch's `sorter=` argument: the result
    /// indexes the sorted order.
    pub fn searchsorted_with_sorter(
        &self,
        values: impl Into<Operand>,
        right: bool,
        side: Option<&str>,
        out_int32: bool,
        sorter: &Tensor,
    ) -> Result<Tensor> {
        if sorter.dtype() != DType::I64 {
            return Err(Error::msg(format!(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
                sorter.dtype().scalar_type_name()
            )));
        }
        if sorter.dims() != self.dims() {
            return Err(Error::shape(format!(
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor {:?}and got sorter tensor {:?}",
                self.dims(),
                sorter.dims()
            )));
        }
        let last = self.rank().saturating_sub(1) as isize;
        let size = self.dims().last().copied().unwrap_or(1);
        crate::indexing::checked_indices(sorter, size, false, |_| {
            Error::msg("torch.searchsorted(): sorter index out of range")
        })?;
        // (the sorter was checked just above)
        let sorted = if self.rank() == 0 {
            self.clone()
        } else {
            crate::ops::trusted_indices(|| self.gather(last, sorter))?
        };
        sorted.searchsorted(values, right, side, out_int32)
    }

    /// For a sorted sequence `self` (1-D, or sorted along its last dim with leading dims equal to
    /// those of `values`), the index at which each of `values` would be inserted to keep it sorted:
    /// before equal elements, or after them when `right` (or `side == Some("right")`). int64, or
    /// int32 with `out_int32`.
    /// True where an element equals one of `test_elements` (torch's `isin`; both promoted to one
    /// dtype; NaN is in nothing), or where it does not when `invert`. The test elements are
    /// sorted once and searched, so the cost is `(n + m) log m`, not `n · m`.
    pub fn isin(&self, test_elements: &Tensor, invert: bool) -> Result<Tensor> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(test_elements.dtype(), test_elements.rank())
            .result();
        for d in [self.dtype(), test_elements.dtype()] {
            if d == DType::Bool {
                return Err(Error::msg("Unsupported input type encountered for isin(): Bool"));
            }
        }
        let x = self.to_dtype(dtype)?;
        let (sorted, _) = test_elements.to_dtype(dtype)?.reshape([-1])?.sort(0, false)?;
        // NaN (sorted last) matches nothing, and a binary search over it is meaningless.
        let numbers = if dtype.is_float() {
            sorted.isnan()?.logical_not()?.sum_all()?.item::<i64>()?
        } else {
            sorted.numel() as i64
        };
        let found = if numbers == 0 {
            Tensor::zeros(self.shape(), (DType::Bool, self.device()))?
        } else {
            let sorted = sorted.narrow(0, 0, numbers as usize)?;
            let last = numbers - 1;
            let at = sorted.searchsorted(&x, false, None, false)?.clamp_max(last)?;
            sorted.index_select(0, &at.reshape([-1])?)?.reshape(self.dims())?.eq(&x)?
        };
        if invert {
            found.logical_not()
        } else {
            Ok(found)
        }
    }

    /// [`Tensor::isin`] against one number (torch's `isin(elements, test_element)`).
    pub fn isin_scalar(&self, test_element: impl Into<oxtorch_core::Scalar>, invert: bool) -> Result<Tensor> {
        let test = Operand::Scalar(test_element.into());
        let dtype = test.promote(ResultTypeState::default().tensor(self.dtype(), self.rank())).result();
        self.isin(&test.to_tensor(dtype, self.device())?.reshape([1])?, invert)
    }

    /// Indices that keep `self` (a sorted 1-D tensor, or sorted rows) sorted when each value is
    /// inserted before them (torch's `searchsorted`).
    pub fn searchsorted(
        &self,
        values: impl Into<Operand>,
        right: bool,
        side: Option<&str>,
        out_int32: bool,
    ) -> Result<Tensor> {
        let values = values.into();
        let right = match side {
            None => right,
            Some("left") if right => {
                return Err(Error::msg(
                    "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True",
                ))
            }
            Some("left") => false,
            Some("right") => true,
            Some(other) => {
                return Err(Error::msg(format!(
                    "torch.searchsorted(): side can only be 'left' or 'right' but got {other}"
                )))
            }
        };
        if let Operand::Scalar(_) = values {
            if self.rank() != 1 {
                return Err(Error::msg(format!(
                    "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim({}) and input value's dim(0) numel(1)",
                    self.rank()
                )));
            }
        }
        let dtype = values.promote(ResultTypeState::default().tensor(self.dtype(), self.rank())).result();
        let vals = values.to_tensor(dtype, self.device())?;
        if self.rank() == 0
            || (self.rank() > 1
                && (vals.rank() != self.rank()
                    || vals.dims()[..vals.rank() - 1] != self.dims()[..self.rank() - 1]))
        {
            return Err(Error::msg(format!(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {:?} and input value tensor {:?}",
                self.dims(),
                vals.dims()
            )));
        }
        for (t, what) in [(self.dtype(), self.dtype()), (dtype, dtype)] {
            if t == DType::Bool {
                return Err(Error::msg(format!(
                    "\"searchsorted_out_cpu\" not implemented for '{}'",
                    what.scalar_type_name()
                )));
            }
        }
        let seq = self.to_dtype(dtype)?;
        let out = apply1(&Prim::Sort(SortOp::SearchSorted { right }), &[&seq, &vals], self.device())?;
        if out_int32 {
            out.to_dtype(DType::I32)
        } else {
            Ok(out)
        }
    }

    /// The index of the bucket of `boundaries` (1-D, sorted) each element falls in:
    /// `boundaries[i-1] < x <= boundaries[i]`, or `boundaries[i-1] <= x < boundaries[i]` when `right`.
    pub fn bucketize(&self, boundaries: &Tensor, out_int32: bool, right: bool) -> Result<Tensor> {
        if boundaries.rank() != 1 {
            return Err(Error::msg(format!(
                "boundaries tensor must be 1 dimension, but got dim({})",
                boundaries.rank()
            )));
        }
        boundaries.searchsorted(self, right, None, out_int32)
    }

    /// `torch.bucketize` of a Python number: the 0-d index of its bucket in `boundaries` (1-D).
    pub fn bucketize_scalar(
        value: impl Into<oxtorch_core::Scalar>,
        boundaries: &Tensor,
        out_int32: bool,
        right: bool,
    ) -> Result<Tensor> {
        if boundaries.rank() != 1 {
            return Err(Error::msg(format!(
                "boundaries tensor must be 1 dimension, but got dim({})",
                boundaries.rank()
            )));
        }
        boundaries.searchsorted(Operand::Scalar(value.into()), right, None, out_int32)
    }

    /// Histogram with `bins` equal-width bins over `[min, max]` (the data's range when
    /// `min == max`); elements outside the range and NaN are ignored. Float inputs only; the output
    /// has the input's dtype.
    pub fn histc(&self, bins: i64, min: f64, max: f64) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::msg(format!(
                "\"histogram_cpu\" not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        if bins <= 0 {
            return Err(Error::msg(format!(
                "torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
            )));
        }
        let (mut lo, mut hi) = (min, max);
        if lo == hi && self.numel() > 0 {
            lo = self.min()?.to_dtype(DType::F64)?.item::<f64>()?;
            hi = self.max()?.to_dtype(DType::F64)?.item::<f64>()?;
        }
        if lo == hi {
            lo -= 1.0;
            hi += 1.0;
        }
        if !lo.is_finite() || !hi.is_finite() {
            return Err(Error::msg(format!("torch.histc: range of [{lo}, {hi}] is not finite")));
        }
        if lo >= hi {
            return Err(Error::msg("torch.histc: max must be larger than min"));
        }
        check_bins("histc", bins as u64, self.dtype().size_in_bytes().max(8))?;
        apply1(&Prim::Sort(SortOp::Histc { bins: bins as usize, min: lo, max: hi }), &[self], self.device())
    }

    /// Counts of each value of a 1-D non-negative integer tensor (at least `minlength` bins); with
    /// `weights` (same length) their sums instead: float32 for float32 weights, float64 otherwise.
    pub fn bincount(&self, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor> {
        if self.dtype().is_float() || self.dtype() == DType::Bool {
            return Err(Error::msg(format!(
                "\"bincount_cpu\" not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        if minlength < 0 {
            return Err(Error::msg("minlength should be >= 0"));
        }
        if self.rank() != 1 || (self.numel() > 0 && self.min()?.to_dtype(DType::I64)?.item::<i64>()? < 0) {
            return Err(Error::msg("bincount only supports 1-d non-negative integral inputs."));
        }
        check_bins("bincount", minlength as u64, 8)?;
        if self.numel() == 0 {
            // torch returns before looking at the weights: int64 zeros.
            return Tensor::zeros([minlength as usize], (DType::I64, self.device()));
        }
        if let Some(w) = weights {
            if w.rank() != 1 || w.numel() != self.numel() {
                return Err(Error::msg("weights should be 1-d and have the same length as input"));
            }
        }
        // (`max + 1` as u64: the largest int64 value has no successor in int64)
        let top = self.max()?.to_dtype(DType::I64)?.item::<i64>()? as u64 + 1;
        let length = top.max(minlength as u64);
        check_bins("bincount", length, 8)?;
        let length = length as usize;
        match weights {
            None => apply1(&Prim::Sort(SortOp::Bincount { length, weighted: false }), &[self], self.device()),
            Some(w) => {
                let wd = if w.dtype() == DType::F32 { DType::F32 } else { DType::F64 };
                let w = w.to_dtype(wd)?;
                let op = Prim::Sort(SortOp::Bincount { length, weighted: true });
                apply1(&op, &[self, &w], self.device())
            }
        }
    }
}

/// Refuses `bins` counters of `itemsize` bytes that could not be allocated at all (more than
/// `isize::MAX` bytes), before the kernel allocates them.
fn check_bins(op: &str, bins: u64, itemsize: usize) -> Result<()> {
    if bins.checked_mul(itemsize as u64).is_some_and(|bytes| bytes <= isize::MAX as u64) {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{op}: cannot allocate {bins} bins of {itemsize} bytes (more than the maximum allocation size)"
    )))
}
