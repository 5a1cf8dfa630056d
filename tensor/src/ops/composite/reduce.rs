//! Differences and integration along a dim (diff, trapezoid, cumulative_trapezoid) and the
//! NaN-aware and paired reductions (nansum, nanmean, aminmax).

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::dims::IntoDims;
use crate::Tensor;

/// The size of the sampled dim `d` of `y`, refusing a 0-d `y` as torch's `size(dim)` does.
fn sample_count(y: &Tensor, dim: isize) -> Result<usize> {
    if y.rank() == 0 {
        return Err(Error::msg(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    y.size(dim)
}

/// `y` without its first / last entry along `d` (Python's `y[1:]` and `y[:-1]` there).
fn ends_dropped(y: &Tensor, d: isize) -> Result<(Tensor, Tensor)> {
    Ok((y.slice_bounds(d, Some(1), None, 1)?, y.slice_bounds(d, Some(0), Some(-1), 1)?))
}

/// Zeros shaped as `y` without dim `d`, of `y`'s dtype (torch's integral of no samples).
fn zeros_without(y: &Tensor, d: usize) -> Result<Tensor> {
    let mut shape = y.dims().to_vec();
    shape.remove(d);
    Tensor::zeros(shape, y.same_options())
}

/// The sample spacings `x[1:] - x[:-1]` along `d`, with `x` viewed as torch's trapezoid rules do:
/// a 1-d `x` (one value per sample) along `d`, a lower-rank `x` with leading size-1 dims.
fn spacings(y: &Tensor, x: &Tensor, d: usize, op: &str) -> Result<Tensor> {
    let viewed = if x.rank() == 1 {
        if x.dims()[0] != sample_count(y, d as isize)? {
            return Err(Error::msg(format!("{op}: There must be one `x` value for each sample point")));
        }
        let mut shape = vec![1usize; y.rank()];
        shape[d] = x.dims()[0];
        x.reshape(shape)?
    } else if x.rank() < y.rank() {
        let mut shape = vec![1usize; y.rank() - x.rank()];
        shape.extend_from_slice(x.dims());
        x.reshape(shape)?
    } else {
        x.clone()
    };
    let (right, left) = ends_dropped(&viewed, d as isize)?;
    right.sub(&left)
}

impl Tensor {
    /// `torch.diff(self, n, dim, prepend, append)`: the `n`-th forward difference along `dim`
    /// (`out[i] = x[i + 1] - x[i]`, applied `n` times), after concatenating `prepend` and `append`
    /// (same rank, same sizes outside `dim`) on either side. Bool inputs use `logical_xor`. `n = 0`
    /// returns a copy of `self` (without `prepend`/`append`, as torch); an `n` at least the length
    /// gives an empty dim.
    pub fn diff(
        &self,
        n: i64,
        dim: isize,
        prepend: Option<&Tensor>,
        append: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::msg("diff expects input to be at least one-dimensional"));
        }
        if n < 0 {
            return Err(Error::msg(format!("order must be non-negative but got {n}")));
        }
        for other in prepend.iter().chain(append.iter()) {
            let d = wrap_dim(dim, self.rank())?;
            if other.rank() != self.rank() {
                return Err(Error::msg("diff expects prepend or append to be the same dimension as input"));
            }
            if let Some(i) = (0..self.rank()).find(|&i| i != d && other.dims()[i] != self.dims()[i]) {
                return Err(Error::msg(format!(
                    "diff expects the shape of tensor to prepend or append to match that of input except along the differencing dimension; input.size({i}) = {}, but got tensor.size({i}) = {}",
                    self.dims()[i],
                    other.dims()[i]
                )));
            }
        }
        if n == 0 {
            return self.copy();
        }
        let joined = if prepend.is_some() || append.is_some() {
            let parts: Vec<&Tensor> =
                prepend.into_iter().chain(std::iter::once(self)).chain(append).collect();
            Tensor::cat(&parts, dim)?
        } else {
            self.clone()
        };
        let d = wrap_dim(dim, joined.rank())?;
        let size = joined.dims()[d];
        let steps = usize::try_from(n).unwrap_or(usize::MAX).min(size);
        let logical = joined.dtype() == DType::Bool;
        let mut out = joined;
        for i in 0..steps {
            let len = size - 1 - i;
            let (hi, lo) = (out.narrow(d as isize, 1, len)?, out.narrow(d as isize, 0, len)?);
            out = if logical { hi.logical_xor(&lo)? } else { hi.sub(&lo)? };
        }
        Ok(out)
    }

    /// `torch.trapezoid(self, dx=dx, dim=dim)`: the trapezoidal rule along `dim` with samples `dx`
    /// apart, `(sum(y) - (y[0] + y[-1]) / 2) * dx`. An empty `dim` integrates to zeros; integer
    /// inputs give the default float dtype; bool is refused.
    pub fn trapezoid_dx(&self, dx: f64, dim: isize) -> Result<Tensor> {
        let n = sample_count(self, dim)?;
        let d = wrap_dim(dim, self.rank())?;
        if n == 0 {
            return zeros_without(self, d);
        }
        if self.dtype() == DType::Bool {
            return Err(Error::msg("trapezoid: received a bool input for `y`, but bool is not supported"));
        }
        let ends = self.select(d as isize, 0)?.add(&self.select(d as isize, -1)?)?.mul(0.5)?;
        self.sum([d], false)?.sub(&ends)?.mul(dx)
    }

    /// `torch.trapezoid(self, x, dim=dim)`: the trapezoidal rule along `dim` at sample points `x`,
    /// `sum((x[1:] - x[:-1]) * (y[1:] + y[:-1])) / 2`. A 1-d `x` holds one point per sample; other
    /// shapes broadcast against `y` after the differences are taken (numpy's rule).
    pub fn trapezoid_x(&self, x: &Tensor, dim: isize) -> Result<Tensor> {
        let d = wrap_dim(dim, self.rank())?;
        if sample_count(self, d as isize)? == 0 {
            return zeros_without(self, d);
        }
        if self.dtype() == DType::Bool || x.dtype() == DType::Bool {
            return Err(Error::msg(
                "trapezoid: received a bool input for `x` or `y`, but bool is not supported",
            ));
        }
        let dx = spacings(self, x, d, "trapezoid")?;
        let (right, left) = ends_dropped(self, d as isize)?;
        dx.mul(&right.add(&left)?)?.sum([d], false)?.div(2.0)
    }

    /// `torch.cumulative_trapezoid(self, dx=dx, dim=dim)`: the running trapezoidal integral along
    /// `dim` (one entry fewer than `dim`'s length), `cumsum(dx / 2 * (y[1:] + y[:-1]))`.
    pub fn cumulative_trapezoid_dx(&self, dx: f64, dim: isize) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::msg(
                "cumulative_trapezoid: received a bool input for `y`, but bool is not supported",
            ));
        }
        let (right, left) = ends_dropped(self, dim)?;
        right.add(&left)?.mul(dx / 2.0)?.cumsum(dim, None)
    }

    /// `torch.cumulative_trapezoid(self, x, dim=dim)`: the running trapezoidal integral along `dim`
    /// at sample points `x` (viewed as in [`Tensor::trapezoid_x`]),
    /// `cumsum((x[1:] - x[:-1]) * (y[1:] + y[:-1])) / 2`.
    pub fn cumulative_trapezoid_x(&self, x: &Tensor, dim: isize) -> Result<Tensor> {
        let d = wrap_dim(dim, self.rank())?;
        if self.dtype() == DType::Bool || x.dtype() == DType::Bool {
            return Err(Error::msg(
                "cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported",
            ));
        }
        let dx = spacings(self, x, d, "cumulative_trapezoid")?;
        let (right, left) = ends_dropped(self, d as isize)?;
        dx.mul(&right.add(&left)?)?.cumsum(d as isize, None)?.div(2.0)
    }

    /// `torch.nansum(self, dims, keepdim)`: the sum over `dims` (an empty list means all) with NaN
    /// counted as zero (and given no gradient). Integer and bool inputs are summed as by
    /// [`Tensor::sum`] (int64).
    pub fn nansum(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return self.sum(dims, keepdim);
        }
        let zeroed = Tensor::where_cond(&self.isnan()?, 0.0, self)?;
        Ok(self.named(zeroed.sum(dims, keepdim)?, "NansumBackward0"))
    }

    /// `torch.nanmean(self, dims, keepdim)`: the mean over `dims` (an empty list means all) of the
    /// non-NaN elements, `nansum / count` (NaN where every element is NaN). Float inputs only.
    pub fn nanmean(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::msg(format!(
                "nanmean(): expected input to have floating point or complex dtype but got {}",
                self.dtype().scalar_type_name()
            )));
        }
        let dims = dims.into_dims();
        let count = self.isnan()?.logical_not()?.sum(dims.clone(), keepdim)?;
        self.nansum(dims, keepdim)?.div(&count)
    }

    /// `torch.aminmax(self, dim=dim, keepdim=keepdim)`: `(amin, amax)` along `dim`, or over every
    /// element when `dim` is `None` (then `keepdim` keeps every dim as size 1). Gradients go to the
    /// extreme elements, shared evenly among ties, as [`Tensor::amin`]/[`Tensor::amax`].
    pub fn aminmax(&self, dim: Option<isize>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dims = match dim {
            None => {
                if self.numel() == 0 {
                    return Err(Error::msg(
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
                    ));
                }
                Vec::new()
            }
            Some(dim) => {
                let d = wrap_dim(dim, self.rank())?;
                if self.rank() > 0 && self.dims()[d] == 0 {
                    return Err(Error::msg(format!(
                        "aminmax: Expected reduction dim {d} to have non-zero size."
                    )));
                }
                vec![dim]
            }
        };
        Ok((self.amin(dims.clone(), keepdim)?, self.amax(dims, keepdim)?))
    }
}
