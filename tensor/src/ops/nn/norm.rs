//! Normalisations as compositions: `layer_norm`, `group_norm`, `batch_norm`, `rms_norm`; on the
//! CPU, outside autograd, `layer_norm` is one kernel ([`NnOp::LayerNorm`]).
//!
//! Half-precision inputs compute in f32 and round once, as torch's CPU kernels do.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use crate::ops::linalg::opmath;
use crate::Tensor;

fn float_only(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType { op, dtype: x.dtype() })
    }
}

/// `x` normalised over `dims` (biased variance), in `x`'s dtype.
fn normalize(x: &Tensor, dims: &[isize], eps: f64) -> Result<Tensor> {
    let mean = x.mean(dims, true)?;
    let centered = x.sub(&mean)?;
    let var = centered.square()?.mean(dims, true)?;
    centered.mul(&var.add(eps)?.rsqrt()?)
}

/// Multiplies by `weight` and adds `bias` (both already shaped to broadcast), in `x`'s dtype.
fn affine(x: Tensor, weight: Option<Tensor>, bias: Option<Tensor>) -> Result<Tensor> {
    let x = match weight {
        Some(w) => x.mul(&w.to_dtype(x.dtype())?)?,
        None => x,
    };
    match bias {
        Some(b) => x.add(&b.to_dtype(x.dtype())?),
        None => Ok(x),
    }
}

/// [`Tensor::layer_norm`] as one [`NnOp::LayerNorm`] over the rows of `x` viewed as `[R, C]`
/// (`C` the product of `normalized_shape`, already checked against `x`'s trailing dims), in f32
/// (half inputs widen and round back, as the composition does). `None` where the composition runs:
/// under autograd (its formula is the composition's), on other devices, for f64.
fn layer_norm_on_cpu(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Option<Tensor>> {
    let operands: Vec<&Tensor> = [Some(x), weight, bias].into_iter().flatten().collect();
    if crate::autograd::record::needs_recording(&operands)
        || !operands.iter().all(|t| t.device().is_cpu())
        || opmath(x.dtype()) != DType::F32
    {
        return Ok(None);
    }
    let cols: usize = normalized_shape.iter().product();
    let rows: usize = x.dims()[..x.rank() - normalized_shape.len()].iter().product();
    let x32 = x.to_dtype(DType::F32)?.reshape([rows, cols])?;
    let param = |p: &Tensor| p.to_dtype(DType::F32)?.reshape([cols]);
    let (w, b) = (weight.map(param).transpose()?, bias.map(param).transpose()?);
    let prim = Prim::Nn(NnOp::LayerNorm { eps, weight: w.is_some(), bias: b.is_some() });
    let inputs: Vec<&Tensor> = [Some(&x32), w.as_ref(), b.as_ref()].into_iter().flatten().collect();
    let y = crate::dispatch::apply1(&prim, &inputs, x.device())?;
    Ok(Some(y.reshape(x.dims())?.to_dtype(x.dtype())?))
}

fn check_param(name: &str, p: Option<&Tensor>, shape: &[usize]) -> Result<()> {
    if let Some(p) = p {
        if p.dims() != shape {
            return Err(Error::shape(format!(
                "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {:?} and normalized_shape = {shape:?}",
                p.dims()
            )));
        }
    }
    Ok(())
}

/// The trailing dims of `x` named by `normalized_shape`, checked as torch does.
fn trailing(x: &Tensor, normalized_shape: &[usize]) -> Result<Vec<isize>> {
    let k = normalized_shape.len();
    if k == 0 || x.rank() < k || &x.dims()[x.rank() - k..] != normalized_shape {
        let mut want = vec!["*".to_string()];
        want.extend(normalized_shape.iter().map(|d| d.to_string()));
        return Err(Error::shape(format!(
            "Given normalized_shape={normalized_shape:?}, expected input with shape [{}], but got input of size{:?}",
            want.join(", "),
            x.dims()
        )));
    }
    Ok((x.rank() - k..x.rank()).map(|d| d as isize).collect())
}

impl Tensor {
    /// Layer normalisation over the trailing `normalized_shape` dims, then `* weight + bias`.
    pub fn layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        float_only("LayerNormKernelImpl", self)?;
        check_param("weight", weight, normalized_shape)?;
        check_param("bias", bias, normalized_shape)?;
        let dims = trailing(self, normalized_shape)?;
        if let Some(y) = layer_norm_on_cpu(self, normalized_shape, weight, bias, eps)? {
            return Ok(y);
        }
        let x = self.to_dtype(opmath(self.dtype()))?;
        let y = normalize(&x, &dims, eps)?;
        affine(y, weight.cloned(), bias.cloned())?.to_dtype(self.dtype())
    }

    /// RMS normalisation over the trailing dims: `x / sqrt(mean(x²) + eps) * weight`; `eps` `None`
    /// means the machine epsilon of the computation dtype (f32 for half inputs), torch's default.
    pub fn rms_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        eps: Option<f64>,
    ) -> Result<Tensor> {
        float_only("rms_norm", self)?;
        check_param("weight", weight, normalized_shape)?;
        let dims = trailing(self, normalized_shape)?;
        // torch's default is the machine epsilon of the computation type: f32's for f16/bf16/f32.
        let eps = eps.unwrap_or(match self.dtype() {
            DType::F64 => f64::EPSILON,
            _ => f32::EPSILON as f64,
        });
        let x = self.to_dtype(opmath(self.dtype()))?;
        let y = x.mul(&x.square()?.mean(dims, true)?.add(eps)?.rsqrt()?)?;
        affine(y, weight.cloned(), None)?.to_dtype(self.dtype())
    }

    /// Group normalisation of `[N, C, *]` over `num_groups` groups of channels, then per-channel
    /// `* weight + bias`.
    pub fn group_norm(
        &self,
        num_groups: usize,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        float_only("GroupNormKernelImpl", self)?;
        if self.rank() < 2 {
            return Err(Error::shape(format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                self.rank()
            )));
        }
        let (n, c) = (self.dims()[0], self.dims()[1]);
        if num_groups == 0 || c % num_groups != 0 {
            return Err(Error::shape(format!(
                "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={num_groups}",
                self.dims()
            )));
        }
        for (name, p) in [("weight", weight), ("bias", bias)] {
            if let Some(p) = p {
                if p.rank() != 1 || p.numel() != c {
                    return Err(Error::shape(format!(
                        "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {:?} and input of shape {:?}",
                        p.dims(),
                        self.dims()
                    )));
                }
            }
        }
        let x = self.to_dtype(opmath(self.dtype()))?;
        let group_len = c / num_groups * self.dims()[2..].iter().product::<usize>();
        let y = normalize(&x.reshape([n, num_groups, group_len])?, &[2], eps)?.reshape(self.dims())?;
        let mut pshape = vec![1usize; self.rank()];
        pshape[1] = c;
        let shaped = |p: Option<&Tensor>| p.map(|p| p.reshape(pshape.clone())).transpose();
        affine(y, shaped(weight)?, shaped(bias)?)?.to_dtype(self.dtype())
    }

    /// Batch normalisation of `[N, C, *]` per channel. In training the batch statistics normalise,
    /// and given running stats are updated in place
    /// (`running = (1 - momentum) * running + momentum * batch`, the variance unbiased); otherwise
    /// the running statistics (required) normalise.
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<Tensor> {
        float_only("batch_norm", self)?;
        if self.rank() < 2 {
            return Err(Error::shape(format!(
                "batch_norm: expected at least 2D input (got {}D input)",
                self.rank()
            )));
        }
        let c = self.dims()[1];
        for (name, p) in
            [("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)]
        {
            if let Some(p) = p {
                if p.numel() != c {
                    return Err(Error::shape(format!(
                        "{name} should contain {c} elements not {}",
                        p.numel()
                    )));
                }
            }
        }
        let mut pshape = vec![1usize; self.rank()];
        pshape[1] = c;
        let shaped = |p: Option<&Tensor>| p.map(|p| p.reshape(pshape.clone())).transpose();
        let x = self.to_dtype(opmath(self.dtype()))?;
        let dims: Vec<isize> = (0..self.rank()).filter(|&d| d != 1).map(|d| d as isize).collect();
        if !training {
            if running_mean.is_none() {
                return Err(Error::msg("running_mean must be defined in evaluation mode"));
            }
            if running_var.is_none() {
                return Err(Error::msg("running_var must be defined in evaluation mode"));
            }
        }
        let y = if training {
            let count = self.numel() / c.max(1);
            if count == 0 {
                // An empty batch: nothing to normalise, the running statistics as they were. As
                // torch, `input * weight[0] + bias[0]`, so that the parameters stay in the graph
                // (their gradients are zeros, not missing).
                let mut out = self.mul(1)?;
                if let Some(w) = weight.filter(|w| w.numel() > 0) {
                    out = out.mul(&w.select(0, 0)?)?;
                }
                if let Some(b) = bias.filter(|b| b.numel() > 0) {
                    out = out.add(&b.select(0, 0)?)?;
                }
                return Ok(out);
            }
            if count == 1 {
                return Err(Error::msg(format!(
                    "Expected more than 1 value per channel when training, got input size torch.Size({:?})",
                    self.dims()
                )));
            }
            let mean = x.mean(dims.as_slice(), true)?;
            let centered = x.sub(&mean)?;
            let var = centered.square()?.mean(dims.as_slice(), true)?;
            // Running statistics are state, not part of the graph (torch updates them without grad).
            let _no_grad = crate::autograd::NoGradGuard::new();
            if training {
                if let Some(rm) = running_mean {
                    let upd = rm
                        .to_dtype(x.dtype())?
                        .mul(1.0 - momentum)?
                        .add(&mean.reshape([c])?.mul(momentum)?)?;
                    rm.copy_(&upd)?;
                }
                if let Some(rv) = running_var {
                    let unbiased = var.reshape([c])?.mul(count as f64 / (count as f64 - 1.0))?;
                    let upd = rv.to_dtype(x.dtype())?.mul(1.0 - momentum)?.add(&unbiased.mul(momentum)?)?;
                    rv.copy_(&upd)?;
                }
            }
            drop(_no_grad);
            // torch keeps the batch mean and inverse std in the input's dtype (its saved stats).
            let round = |t: Tensor| t.to_dtype(self.dtype())?.to_dtype(x.dtype());
            let invstd = round(var.add(eps)?.rsqrt()?)?;
            x.sub(&round(mean)?)?.mul(&invstd)?
        } else {
            let rm = shaped(running_mean)?.expect("checked").to_dtype(x.dtype())?;
            let rv = shaped(running_var)?.expect("checked").to_dtype(x.dtype())?;
            x.sub(&rm)?.mul(&rv.add(eps)?.rsqrt()?)?
        };
        affine(y, shaped(weight)?, shaped(bias)?)?.to_dtype(self.dtype())
    }
}
