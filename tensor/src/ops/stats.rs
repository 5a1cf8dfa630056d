//! Statistical reductions: var, std, var_mean, std_mean, norm, logsumexp, count_nonzero, median,
//! mode, quantile.
//!
//! var/std/norm/logsumexp are compositions of elementwise ops and sums (so autograd and other
//! backends get them for free); f16/bf16 inputs compute in f32 and round once, as torch's CPU
//! kernels accumulate in f32. median/mode/quantile run [`SortOp`] prims.

use oxtorch_core::ops::{Prim, SortOp};
use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::autograd::{Function, FunctionCtx};
use crate::dims::IntoDims;
use crate::dispatch::apply1;
use crate::{Operand, Tensor};

/// The interpolation names `quantile` accepts, as static strings for the prim.
const INTERPOLATIONS: [&str; 5] = ["linear", "lower", "higher", "midpoint", "nearest"];

impl Tensor {
    /// The dtype half-precision floats compute in (f32), and the input cast to it.
    pub(crate) fn upcast(&self) -> Result<(Tensor, DType)> {
        let dt = self.dtype();
        let x =
            if matches!(dt, DType::F16 | DType::BF16) { self.to_dtype(DType::F32)? } else { self.clone() };
        Ok((x, dt))
    }

    /// Number of elements reduced over `dims` (wrapped).
    fn reduced_count(&self, dims: &[usize]) -> usize {
        dims.iter().map(|&d| self.dims()[d]).product()
    }

    /// `(var, mean)` computed as torch's CPU kernels do, left in the wide type they accumulate in
    /// on the cpu (f64 for f32 and f64, f32 for f16/bf16) for the caller to round once: Welford's totals in
    /// that type, except that `var`/`std` of a single output from f32/f64 (`own_mean`) take the
    /// mean in the input's own precision first (torch's `std_var_all_cpu`).
    fn var_wide(
        &self,
        dims: Vec<isize>,
        correction: f64,
        keepdim: bool,
        own_mean: bool,
    ) -> Result<(Tensor, Tensor)> {
        if !self.dtype().is_float() {
            return Err(Error::msg("std and var only support floating point and complex dtypes"));
        }
        let wrapped = self.reduction_dims(dims.clone())?;
        let n = self.reduced_count(&wrapped) as f64;
        let dt = self.dtype();
        // (f32 on compiling devices, which compute in f32 as torch_xla does: TPUs have no f64)
        let wide = match dt {
            DType::F16 | DType::BF16 => DType::F32,
            DType::F32 if !self.device().is_cpu() => DType::F32,
            _ => DType::F64,
        };
        let x = self.to_dtype(wide)?;
        let single = self.numel() / self.reduced_count(&wrapped).max(1) <= 1;
        let mean = if own_mean && single && matches!(dt, DType::F32 | DType::F64) {
            self.sum(dims.clone(), true)?.div(n)?.to_dtype(wide)?
        } else {
            x.sum(dims.clone(), true)?.div(n)?
        };
        let dev = x.sub(&mean)?;
        let var = dev.mul(&dev)?.sum(dims, keepdim)?.div((n - correction).max(0.0))?;
        let mean = Self::finish_reduction(mean, &wrapped, keepdim)?;
        Ok((var, mean))
    }

    /// Variance over `dims` (an empty list means all) with Bessel's `correction` (torch's default is
    /// 1): `sum((x - mean)^2) / max(0, n - correction)`, so `n <= correction` gives inf or NaN as in
    /// torch. Float inputs only.
    pub fn var(&self, dims: impl IntoDims, correction: f64, keepdim: bool) -> Result<Tensor> {
        let var = self.var_wide(dims.into_dims(), correction, keepdim, true)?.0.to_dtype(self.dtype())?;
        Ok(self.named(var, "VarBackward0"))
    }

    /// Standard deviation: the square root of [`Tensor::var`] (taken before rounding, as torch).
    pub fn std(&self, dims: impl IntoDims, correction: f64, keepdim: bool) -> Result<Tensor> {
        let var = self.var_wide(dims.into_dims(), correction, keepdim, true)?.0;
        Ok(self.named(root_zero_grad(&var, 0.5)?.to_dtype(self.dtype())?, "StdBackward0"))
    }

    /// `(var, mean)` over `dims`, as torch's `var_mean`.
    pub fn var_mean(&self, dims: impl IntoDims, correction: f64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let (var, mean) = self.var_wide(dims.into_dims(), correction, keepdim, false)?;
        Ok((var.to_dtype(self.dtype())?, mean.to_dtype(self.dtype())?))
    }

    /// `(std, mean)` over `dims`, as torch's `std_mean`.
    pub fn std_mean(&self, dims: impl IntoDims, correction: f64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let (var, mean) = self.var_wide(dims.into_dims(), correction, keepdim, false)?;
        Ok((root_zero_grad(&var, 0.5)?.to_dtype(self.dtype())?, mean.to_dtype(self.dtype())?))
    }

    /// The vector `p`-norm over `dims` (an empty list means all), as `torch.linalg.vector_norm`:
    /// `p = 2` (torch's default), 1, inf (max |x|), -inf (min |x|), 0 (count of non-zeros), or any
    /// other `p` as `sum(|x|^p)^(1/p)`. Float inputs only.
    pub fn norm(&self, p: f64, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::msg(format!(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                self.dtype().scalar_type_name()
            )));
        }
        let dims = dims.into_dims();
        let wrapped = self.reduction_dims(dims.clone())?;
        let (x, dt) = self.upcast()?;
        let a = x.abs()?;
        // Norms without an identity (p = inf or p < 0) of nothing are torch's errors.
        if self.numel() == 0 && (p < 0.0 || p == f64::INFINITY) {
            let which = if p.is_infinite() {
                if p > 0.0 {
                    "inf".to_string()
                } else {
                    "-inf".to_string()
                }
            } else {
                p.to_string()
            };
            if dims.is_empty() {
                return Err(Error::msg(format!(
                    "linalg.vector_norm cannot compute the {which} norm on an empty tensor because the operation does not have an identity"
                )));
            }
            if let Some(&d) = wrapped.iter().find(|&&d| self.dims()[d] == 0) {
                return Err(Error::msg(format!(
                    "linalg.vector_norm cannot compute the {which} norm on the dimension {d}because this dimension is empty and the operation does not have an identity"
                )));
            }
        }
        let out = if p.is_infinite() {
            if p > 0.0 {
                a.amax(dims, keepdim)?
            } else {
                a.amin(dims, keepdim)?
            }
        } else if p == 0.0 {
            a.ne(0.0)?.to_dtype(a.dtype())?.sum(dims, keepdim)?
        } else if p == 1.0 {
            a.sum(dims, keepdim)?
        } else if p == 2.0 {
            root_zero_grad(&a.mul(&a)?.sum(dims, keepdim)?, 0.5)?
        } else if p < 1.0 {
            // |x|^p has an infinite slope at 0 for p < 1, which times abs's zero slope would be
            // NaN: torch's gradient there is 0 (the constant 0^p, the power taken elsewhere).
            let zero = a.eq(0.0)?;
            let powered = zero.where_self(0f64.powf(p), &zero.where_self(1.0, &a)?.pow(p)?)?;
            root_zero_grad(&powered.sum(dims, keepdim)?, 1.0 / p)?
        } else {
            root_zero_grad(&a.pow(p)?.sum(dims, keepdim)?, 1.0 / p)?
        };
        Ok(self.named(out.to_dtype(dt)?, "LinalgVectorNormBackward0"))
    }

    /// `log(sum(exp(x)))` over `dims` (an empty list means all), computed stably by subtracting the
    /// maximum. Integer and bool inputs give the default float dtype.
    pub fn logsumexp(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        let dims = dims.into_dims();
        let wrapped = self.reduction_dims(dims.clone())?;
        let x = if self.dtype().is_float() { self.clone() } else { self.to_dtype(DType::default_float())? };
        let (x, dt) = x.upcast()?;
        if x.numel() == 0 {
            return x.exp()?.sum(dims, keepdim)?.log()?.to_dtype(dt);
        }
        // The shift: the value does not depend on it, so it is cut from the graph.
        let m = x.amax(dims.clone(), true)?.detach();
        let m = m.abs()?.eq(f64::INFINITY)?.where_self(0.0, &m)?;
        let s = x.sub(&m)?.exp()?.sum(dims, keepdim)?.log()?;
        let m = Self::finish_reduction(m, &wrapped, keepdim)?;
        Ok(self.named(s.add(&m)?.to_dtype(dt)?, "LogsumexpBackward0"))
    }

    /// Number of non-zero elements over `dims` (an empty list means all), int64.
    pub fn count_nonzero(&self, dims: impl IntoDims) -> Result<Tensor> {
        self.ne(0)?.sum(dims, false)
    }

    /// The lower median of all elements (NaN if any element is NaN; NaN for an empty input).
    pub fn median_all(&self) -> Result<Tensor> {
        self.refuse_bool("median_cpu")?;
        if self.numel() == 0 {
            return Tensor::full_unchecked((), f64::NAN, (self.dtype(), self.device()));
        }
        let (v, _) = self.reshape([-1])?.median(0, false)?;
        evenly_distributed_as(self, v, "MedianBackward0")
    }

    /// The lower median along `dim` and its index: NaN and the first NaN's index if the row has NaN,
    /// else (among equal values) the index a stable sort puts at the middle.
    pub fn median(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.row_reduce("median", Some("median_cpu"), dim, keepdim, |dim| SortOp::Median {
            dim,
            ignore_nan: false,
        })
    }

    /// The lower median of the non-NaN elements (NaN when all are NaN or the input is empty).
    pub fn nanmedian_all(&self) -> Result<Tensor> {
        self.refuse_bool("nanmedian_cpu")?;
        if self.numel() == 0 {
            return Tensor::full_unchecked((), f64::NAN, (self.dtype(), self.device()));
        }
        let (v, _) = self.reshape([-1])?.nanmedian(0, false)?;
        evenly_distributed_as(self, v, "NanmedianBackward0")
    }

    /// The lower median along `dim` ignoring NaN, with torch's index among equal values (NaN for an
    /// all-NaN row).
    pub fn nanmedian(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.row_reduce("nanmedian", Some("nanmedian_cpu"), dim, keepdim, |dim| SortOp::Median {
            dim,
            ignore_nan: true,
        })
    }

    /// The most frequent value along `dim` (the smallest among equally frequent ones) and torch's
    /// index for it (the last occurrence for rows of up to 16 elements).
    pub fn mode(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.row_reduce("mode", None, dim, keepdim, |dim| SortOp::Mode { dim })
    }

    fn row_reduce(
        &self,
        name: &str,
        bool_kernel: Option<&str>,
        dim: isize,
        keepdim: bool,
        op: impl Fn(usize) -> SortOp,
    ) -> Result<(Tensor, Tensor)> {
        if let Some(kernel) = bool_kernel {
            self.refuse_bool(kernel)?;
        }
        let (x, d) = self.as_rows(dim)?;
        if x.dims()[d] == 0 {
            return Err(Error::msg(format!("{name}(): Expected reduction dim {d} to have non-zero size.")));
        }
        let (v, i) = self.row_pair(&x, op(d))?;
        self.finish_keepdim(v, i, d, keepdim)
    }

    /// The `q`-quantiles (a number or a 1-D tensor of the input's dtype, each in `[0, 1]`) along `dim`
    /// (`None`: of the flattened input), with torch's `interpolation`: "linear", "lower", "higher",
    /// "midpoint" or "nearest". A tensor `q` adds a leading dim of its length. A row holding NaN gives
    /// NaN. f32/f64 inputs only.
    pub fn quantile(
        &self,
        q: impl Into<Operand>,
        dim: Option<isize>,
        keepdim: bool,
        interpolation: &str,
    ) -> Result<Tensor> {
        if !matches!(self.dtype(), DType::F32 | DType::F64) {
            return Err(Error::msg("quantile() input tensor must be either float or double dtype"));
        }
        let q = q.into();
        let qt = match &q {
            Operand::Scalar(s) => Tensor::full_unchecked([1], *s, (self.dtype(), self.device()))?,
            Operand::Tensor(t) => {
                if t.rank() > 1 {
                    return Err(Error::msg("quantile() q must be a scalar or 1D tensor"));
                }
                if t.dtype() != self.dtype() {
                    return Err(Error::msg("quantile() q tensor must be same dtype as the input tensor"));
                }
                t.reshape([-1])?
            }
        };
        for v in qt.to_dtype(DType::F64)?.to_vec::<f64>()? {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::msg(format!("quantile() q must be in the range [0, 1] but got {v}")));
            }
        }
        if self.numel() == 0 {
            return Err(Error::msg("quantile() input tensor must be non-empty"));
        }
        let Some(&interp) = INTERPOLATIONS.iter().find(|&&s| s == interpolation) else {
            return Err(Error::msg(format!(
                "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
            )));
        };
        let (x, d) = match dim {
            Some(dim) => {
                let d = wrap_dim(dim, self.rank())?;
                (if self.rank() == 0 { self.reshape([1])? } else { self.clone() }, d)
            }
            None => (self.reshape([-1])?, 0),
        };
        let out =
            apply1(&Prim::Sort(SortOp::Quantile { dim: d, interpolation: interp }), &[&x, &qt], x.device())?;
        // out: [nq] + x's shape with d = 1.
        let mut shape: Vec<usize> = Vec::new();
        if matches!(q, Operand::Tensor(ref t) if t.rank() == 1) {
            shape.push(qt.numel());
        }
        match dim {
            Some(_) if self.rank() > 0 => {
                for (i, &s) in x.dims().iter().enumerate() {
                    if i != d {
                        shape.push(s);
                    } else if keepdim {
                        shape.push(1);
                    }
                }
            }
            Some(_) => {}
            None if keepdim => shape.extend(std::iter::repeat_n(1, self.rank())),
            None => {}
        }
        out.reshape(shape)
    }
}

/// True when an op on `t` is recorded for autograd.
fn recording(t: &Tensor) -> bool {
    t.requires_grad() && crate::autograd::is_recording()
}

/// `t^e` for `e` in (0, 1) whose gradient at zero is zero rather than infinite: torch's norm and
/// std backward mask a zero result (the plain root only where no gradient is recorded).
fn root_zero_grad(t: &Tensor, e: f64) -> Result<Tensor> {
    let root = |t: &Tensor| if e == 0.5 { t.sqrt() } else { t.pow(e) };
    if !recording(t) {
        return root(t);
    }
    let zero = t.eq(0.0)?;
    let r = root(&Tensor::where_cond(&zero, 1.0, t)?)?;
    Tensor::where_cond(&zero, 0.0, &r)
}

/// `v`, a whole-tensor max, min or median of `x`, recorded with torch's
/// `evenly_distribute_backward`: the gradient shared by the elements equal to `v` (the NaN ones
/// when `v` is NaN), whatever their value (an infinite median too).
pub(crate) fn evenly_distributed_as(x: &Tensor, v: Tensor, name: &'static str) -> Result<Tensor> {
    if !recording(x) {
        return Ok(v);
    }
    let share = EvenlyDistributed { value: v.detach(), name };
    Ok(share.apply(std::slice::from_ref(x))?.remove(0))
}

/// See [`evenly_distributed_as`]; holds the value detached (the output itself would make a cycle
/// through its node).
struct EvenlyDistributed {
    value: Tensor,
    name: &'static str,
}

impl Function for EvenlyDistributed {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        Ok(vec![self.value.copy()?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        // (on the device: no read-back of whether the value is NaN)
        let mask = Tensor::where_cond(&self.value.isnan()?, &x.isnan()?, &x.eq(&self.value)?)?;
        let count = mask.to_dtype(grads[0].dtype())?.sum_all()?;
        Ok(vec![Some(Tensor::where_cond(&mask, &grads[0].div(&count)?, 0.0)?)])
    }

    fn name(&self) -> &'static str {
        self.name
    }
}
