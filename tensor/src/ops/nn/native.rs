//! torch's aten-level normalisation, padding and convolution entry points:
//! `torch.native_layer_norm`, `torch.native_batch_norm`, `torch.native_group_norm` (each also
//! returning the saved statistics), `torch.constant_pad_nd` and `torch.convolution`.
//!
//! The outputs come from the existing differentiable ops ([`Tensor::layer_norm`],
//! [`Tensor::batch_norm`], [`Tensor::group_norm`], [`Tensor::pad`], [`Tensor::conv_nd`],
//! [`Tensor::conv_transpose_nd`]), so their gradients are those ops'. The saved statistics
//! (means and inverse standard deviations) are computed alongside in the half-precision inputs'
//! f32 "opmath", rounded to the input's dtype and, as torch's, do not require grad.

use oxtorch_core::{DType, Error, Result};

use crate::ops::linalg::opmath;
use crate::Tensor;

/// The mean and `1 / sqrt(biased variance + eps)` of `x` over `dims` (kept), in `dtype` (computed
/// in the opmath of `like`'s dtype); detached unless `differentiable` (torch differentiates group
/// norm's statistics, not layer or batch norm's).
fn stats(
    x: &Tensor,
    like: &Tensor,
    dtype: DType,
    dims: &[isize],
    eps: f64,
    differentiable: bool,
) -> Result<(Tensor, Tensor)> {
    let x = if differentiable { x.clone() } else { x.detach() };
    let x = x.to_dtype(opmath(like.dtype()))?;
    let mean = x.mean(dims, true)?;
    let var = x.sub(&mean)?.square()?.mean(dims, true)?;
    let rstd = var.add(eps)?.rsqrt()?;
    Ok((mean.to_dtype(dtype)?, rstd.to_dtype(dtype)?))
}

/// torch's check of a convolution parameter list against the number of spatial dims.
fn conv_param(name: &str, v: &[usize], n: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        _ => Err(Error::shape(format!(
            "expected {name} to be a single integer value or a list of {n} values to match the convolution dimensions, but got {name}={v:?}"
        ))),
    }
}

impl Tensor {
    /// `torch.native_layer_norm(input, normalized_shape, weight, bias, eps)`: `(out, mean, rstd)`
    /// with `out` [`Tensor::layer_norm`]'s and `mean`/`rstd` (shape `[*batch, 1, ..., 1]`, one
    /// trailing 1 per normalized dim, the input's dtype, no grad) the statistics it normalised by.
    pub fn native_layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let out = self.layer_norm(normalized_shape, weight, bias, eps)?;
        let first = self.rank() - normalized_shape.len();
        let dims: Vec<isize> = (first..self.rank()).map(|d| d as isize).collect();
        let (mean, rstd) = stats(self, self, self.dtype(), &dims, eps, false)?;
        Ok((out, mean, rstd))
    }

    /// `torch.native_batch_norm(input, weight, bias, running_mean, running_var, training,
    /// momentum, eps)`: `(out, save_mean, save_invstd)` with `out` [`Tensor::batch_norm`]'s (which
    /// updates the running statistics in training). In training `save_mean`/`save_invstd` are the
    /// per-channel batch mean and `1 / sqrt(biased var + eps)` (`[C]`, no grad); in evaluation they
    /// are empty (`[0]`), as torch's CPU kernel returns. They are in the input's dtype, or float32
    /// for torch's CPU "mixed" case (a bfloat16/float16 input whose first given parameter or
    /// running statistic is float32; then all must be). Unlike [`Tensor::batch_norm`], one value
    /// per channel in training is no error, as torch's: the output is `bias` (0 without) and the
    /// running variance becomes NaN (the unbiased variance `0 * 1 / 0`).
    #[allow(clippy::too_many_arguments)]
    pub fn native_batch_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        if self.numel() == 0 {
            return Err(Error::msg(format!(
                "input tensor must have at least one element, but got input_sizes = {:?}",
                self.dims()
            )));
        }
        // torch's `is_mixed_type` / `check_mixed_data_type` (CPU).
        let given = [weight, bias, running_mean, running_var];
        let first = given.iter().flatten().next().map(|p| p.dtype());
        let mixed = first.is_some_and(|d| d != self.dtype());
        if mixed {
            if given.iter().flatten().any(|p| p.dtype() != DType::F32) {
                return Err(Error::msg("mixed dtype (CPU): expect parameter to have scalar type of Float"));
            }
            if !matches!(self.dtype(), DType::BF16 | DType::F16) {
                return Err(Error::msg("mixed dtype (CPU): all inputs must share same datatype."));
            }
        }
        let save_dtype = if mixed { DType::F32 } else { self.dtype() };
        let single = training && self.rank() >= 2 && self.numel() == self.dims()[1];
        let out = if single {
            self.batch_norm_single(weight, bias, running_mean, running_var, momentum, eps)?
        } else {
            self.batch_norm(running_mean, running_var, weight, bias, training, momentum, eps)?
        };
        if !training {
            let empty = Tensor::zeros([0usize], (save_dtype, self.device()))?;
            return Ok((out, empty.clone(), empty));
        }
        let c = self.dims()[1];
        let dims: Vec<isize> = (0..self.rank()).filter(|&d| d != 1).map(|d| d as isize).collect();
        let (mean, invstd) = stats(self, self, save_dtype, &dims, eps, false)?;
        Ok((out, mean.reshape([c])?, invstd.reshape([c])?))
    }

    /// Training batch norm of an input with one value per channel (`[1, C, 1, ...]`), which
    /// [`Tensor::batch_norm`] refuses and torch's `native_batch_norm` runs: the input is stacked
    /// twice along the batch (the same mean, a zero variance, so the same output and gradient:
    /// `(x - x) * invstd` then the affine) for [`Tensor::batch_norm`]'s checks and output, and the
    /// running statistics are updated as torch's (the mean with `x`, the variance with
    /// `0 * 1 / 0 = NaN`).
    fn batch_norm_single(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        momentum: f64,
        eps: f64,
    ) -> Result<Tensor> {
        let twice = Tensor::cat(&[self, self], 0)?;
        let out = twice.batch_norm(None, None, weight, bias, true, momentum, eps)?.narrow(0, 0, 1)?;
        let c = self.dims()[1];
        let _no_grad = crate::autograd::NoGradGuard::new();
        let x = self.detach().to_dtype(opmath(self.dtype()))?.reshape([c])?;
        if let Some(rm) = running_mean {
            let upd = rm.to_dtype(x.dtype())?.mul(1.0 - momentum)?.add(&x.mul(momentum)?)?;
            rm.copy_(&upd)?;
        }
        if let Some(rv) = running_var {
            // The unbiased variance of one value: 0 * (1 / 0), NaN as torch's.
            let unbiased = x.mul(0.0)?.mul(f64::INFINITY)?;
            let upd = rv.to_dtype(x.dtype())?.mul(1.0 - momentum)?.add(&unbiased.mul(momentum)?)?;
            rv.copy_(&upd)?;
        }
        Ok(out)
    }

    /// `torch.native_group_norm(input, weight, bias, N, C, HxW, group, eps)`: `(out, mean, rstd)`
    /// for `input` holding `N * C * HxW` elements read as `[N, C, HxW]`: `out` (the input's
    /// shape) is [`Tensor::group_norm`]'s, `mean`/`rstd` `[N, group]` its statistics (the input's
    /// dtype, differentiable as torch's).
    #[allow(clippy::too_many_arguments)]
    pub fn native_group_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        n: usize,
        c: usize,
        hxw: usize,
        group: usize,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "GroupNormKernelImpl", dtype: self.dtype() });
        }
        if self.numel() != n * c * hxw {
            return Err(Error::shape(
                "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
            ));
        }
        let x = self.reshape([n, c, hxw])?;
        let out = x.group_norm(group, weight, bias, eps)?.reshape(self.dims())?;
        let (mean, rstd) = if n * group == 0 {
            let z = Tensor::zeros([n, group], self.same_options())?;
            (z.clone(), z)
        } else {
            let grouped = x.reshape([n, group, c / group * hxw])?;
            let (mean, rstd) = stats(&grouped, self, self.dtype(), &[2], eps, true)?;
            (mean.reshape([n, group])?, rstd.reshape([n, group])?)
        };
        Ok((out, mean, rstd))
    }

    /// `torch.constant_pad_nd(input, pad, value=0)`: `pad` lists `(before, after)` pairs from the
    /// last dim backwards; negative pads crop. See [`Tensor::pad`] (mode `"constant"`).
    pub fn constant_pad_nd(&self, pad: &[isize], value: f64) -> Result<Tensor> {
        if !pad.len().is_multiple_of(2) {
            return Err(Error::msg(format!(
                "Length of pad must be even but instead it equals {}",
                pad.len()
            )));
        }
        if pad.len() / 2 > self.rank() {
            return Err(Error::msg(format!(
                "Length of pad should be no more than twice the number of dimensions of the input. Pad length is {}while the input has {}dimensions.",
                pad.len(),
                self.rank()
            )));
        }
        // `pad` crops each negative pad first and refuses to crop more than a dim holds, as torch.
        self.pad(pad, "constant", Some(value))
    }

    /// `torch.convolution(input, weight, bias, stride, padding, dilation, transposed,
    /// output_padding, groups)`: the N-d convolution (`N = weight.dim() - 2`) of a batched
    /// `input` `[B, C_in, *spatial]`, [`Tensor::conv_nd`] or, with `transposed`,
    /// [`Tensor::conv_transpose_nd`] (whose weight is `[C_in, C_out / groups, *kernel]`). Each
    /// list holds one value or `N`.
    #[allow(clippy::too_many_arguments)]
    pub fn convolution(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: &[usize],
        dilation: &[usize],
        transposed: bool,
        output_padding: &[usize],
        groups: usize,
    ) -> Result<Tensor> {
        let k = weight.rank();
        if k < 3 {
            return Err(Error::shape(format!(
                "weight should have at least three dimensions, but got weight of size {:?}",
                weight.dims()
            )));
        }
        if self.rank() != k {
            return Err(Error::shape(format!(
                "Expected {k}-dimensional input for {k}-dimensional weight {:?}, but got {}-dimensional input of size {:?} instead",
                weight.dims(),
                self.rank(),
                self.dims()
            )));
        }
        let n = k - 2;
        let stride = conv_param("stride", stride, n)?;
        let padding = conv_param("padding", padding, n)?;
        let dilation = conv_param("dilation", dilation, n)?;
        if transposed {
            let output_padding = conv_param("output_padding", output_padding, n)?;
            self.conv_transpose_nd(n, weight, bias, &stride, &padding, &output_padding, groups, &dilation)
        } else {
            self.conv_nd(n, weight, bias, &stride, padding.as_slice(), &dilation, groups)
        }
    }
}
