//! torch's `nn.utils.fusion`: folding an evaluation-mode batch norm into the convolution or linear
//! layer before it.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use crate::{BatchNorm, ConvNd, Linear};

/// The running statistics of an evaluation-mode batch norm, with torch's errors.
fn eval_stats(bn: &BatchNorm) -> Result<(Tensor, Tensor)> {
    if bn.training {
        return Err(Error::msg("Fusion only for eval!"));
    }
    match (&bn.running_mean, &bn.running_var) {
        (Some(m), Some(v)) => Ok((m.0.clone(), v.0.clone())),
        _ => Err(Error::msg("bn.running_mean and bn.running_var must not be None")),
    }
}

/// torch's `fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b,
/// transpose=False)`: `(conv_w * (bn_w / sqrt(bn_rv + eps)).reshape(-1, 1, ...),
/// (conv_b - bn_rm) / sqrt(bn_rv + eps) * bn_w + bn_b)` (`[1, -1, ...]` for a transposed
/// convolution), new leaves in the dtypes of `conv_w` and `conv_b` (`conv_w`'s without a bias), each
/// requiring grad as `conv_w` and `conv_b` do (a bias made from none does not). A missing bias,
/// batch-norm weight or bias counts as zeros, ones, zeros.
#[allow(clippy::too_many_arguments)]
pub fn fuse_conv_bn_weights(
    conv_w: &Tensor,
    conv_b: Option<&Tensor>,
    bn_rm: &Tensor,
    bn_rv: &Tensor,
    bn_eps: f64,
    bn_w: Option<&Tensor>,
    bn_b: Option<&Tensor>,
    transpose: bool,
) -> Result<(Tensor, Tensor)> {
    let weight_dtype = conv_w.dtype();
    let bias_dtype = conv_b.map_or(weight_dtype, Tensor::dtype);
    let bias_requires_grad = conv_b.is_some_and(Tensor::requires_grad);
    let (w, b) = no_grad(|| {
        let conv_b = match conv_b {
            Some(b) => b.clone(),
            None => bn_rm.zeros_like()?,
        };
        let bn_w = match bn_w {
            Some(w) => w.clone(),
            None => bn_rm.ones_like()?,
        };
        let bn_b = match bn_b {
            Some(b) => b.clone(),
            None => bn_rm.zeros_like()?,
        };
        let rsqrt = bn_rv.add(bn_eps)?.rsqrt()?;
        let mut shape: Vec<isize> = if transpose { vec![1, -1] } else { vec![-1, 1] };
        shape.resize(conv_w.rank().max(2), 1);
        let w = conv_w.mul(&bn_w.mul(&rsqrt)?.reshape(shape)?)?.to_dtype(weight_dtype)?;
        let b = conv_b.sub(bn_rm)?.mul(&rsqrt)?.mul(&bn_w)?.add(&bn_b)?.to_dtype(bias_dtype)?;
        Ok::<_, Error>((w.detach(), b.detach()))
    })?;
    Ok((w.requires_grad_(conv_w.requires_grad())?, b.requires_grad_(bias_requires_grad)?))
}

/// torch's `fuse_conv_bn_eval(conv, bn, transpose=False)`: a new convolution (the same options)
/// whose weight and bias fold in `bn`'s running statistics and affine parameters, so that it
/// computes `bn(conv(x))` of evaluation mode. `bn` must be in evaluation mode with running
/// statistics (torch's `AssertionError`s, in its words). oxtorch's convolutions have no training
/// flag, so only `bn`'s is checked.
pub fn fuse_conv_bn_eval<const N: usize>(
    conv: &ConvNd<N>,
    bn: &BatchNorm,
    transpose: bool,
) -> Result<ConvNd<N>> {
    let (rm, rv) = eval_stats(bn)?;
    let (weight, bias) = fuse_conv_bn_weights(
        &conv.weight,
        conv.bias.as_ref(),
        &rm,
        &rv,
        bn.eps,
        bn.weight.as_ref(),
        bn.bias.as_ref(),
        transpose,
    )?;
    Ok(ConvNd { weight, bias: Some(bias), options: conv.options.clone() })
}

/// torch's `fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)`:
/// `(linear_w * (bn_w / sqrt(bn_rv + eps)).unsqueeze(-1), (linear_b - bn_rm) * bn_w /
/// sqrt(bn_rv + eps) + bn_b)`, new leaves as [`fuse_conv_bn_weights`]'s. torch requires `bn_w` and
/// `bn_b` here; `None` counts as ones and zeros.
pub fn fuse_linear_bn_weights(
    linear_w: &Tensor,
    linear_b: Option<&Tensor>,
    bn_rm: &Tensor,
    bn_rv: &Tensor,
    bn_eps: f64,
    bn_w: Option<&Tensor>,
    bn_b: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let weight_dtype = linear_w.dtype();
    let bias_dtype = linear_b.map_or(weight_dtype, Tensor::dtype);
    let bias_requires_grad = linear_b.is_some_and(Tensor::requires_grad);
    let (w, b) = no_grad(|| {
        let linear_b = match linear_b {
            Some(b) => b.clone(),
            None => bn_rm.zeros_like()?,
        };
        let bn_w = match bn_w {
            Some(w) => w.clone(),
            None => bn_rm.ones_like()?,
        };
        let bn_b = match bn_b {
            Some(b) => b.clone(),
            None => bn_rm.zeros_like()?,
        };
        let scale = bn_w.mul(&bn_rv.add(bn_eps)?.rsqrt()?)?;
        let w = linear_w.mul(&scale.unsqueeze(-1)?.to_dtype(weight_dtype)?)?;
        let b = linear_b.sub(bn_rm)?.mul(&scale)?.add(&bn_b)?.to_dtype(bias_dtype)?;
        Ok::<_, Error>((w.detach(), b.detach()))
    })?;
    Ok((w.requires_grad_(linear_w.requires_grad())?, b.requires_grad_(bias_requires_grad)?))
}

/// torch's `fuse_linear_bn_eval(linear, bn)`: a new linear layer computing `bn(linear(x))` of
/// evaluation mode. `bn` must be in evaluation mode with running statistics, and have as many
/// features as the layer's outputs or one (torch's errors, in its words).
pub fn fuse_linear_bn_eval(linear: &Linear, bn: &BatchNorm) -> Result<Linear> {
    if bn.training {
        return Err(Error::msg("Fusion only for eval!"));
    }
    let out_features = linear.weight.dims()[0];
    let num_features = bn.running_mean.as_ref().map(|m| m.numel()).or(bn.weight.as_ref().map(Tensor::numel));
    if let Some(num_features) = num_features {
        if out_features != num_features && num_features != 1 {
            return Err(Error::msg(format!(
                "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got linear.out_features={out_features} and bn.num_features={num_features}"
            )));
        }
    }
    let (rm, rv) = eval_stats(bn)?;
    let (weight, bias) = fuse_linear_bn_weights(
        &linear.weight,
        linear.bias.as_ref(),
        &rm,
        &rv,
        bn.eps,
        bn.weight.as_ref(),
        bn.bias.as_ref(),
    )?;
    Ok(Linear { weight, bias: Some(bias) })
}
