//! The random ops of `torch.nn.functional` beyond `dropout`: alpha dropout (for SELU networks),
//! its channel-wise form, and the Gumbel-softmax. They draw from the default generator, as
//! [`Tensor::dropout`] does: the distributions are torch's, the individual draws are not.

use oxtorch_tensor::{DType, Error, Result, Tensor};

/// SELU's `scale * alpha` (torch's `alpha` in its dropout kernel): `selu` saturates at `-ALPHA`,
/// the value alpha dropout gives a dropped element before its affine correction.
const ALPHA: f64 = 1.7580993408473766;

/// torch's `_dropout_impl` with `alpha_dropout`: a kept element becomes `a * x + ALPHA * a * p`,
/// a dropped one `ALPHA * a * (p - 1)`, with `a = ((ALPHA² p + 1)(1 - p))^-1/2`, so that inputs of
/// mean 0 and variance 1 keep them. With `feature`, whole `[n, c]` slices are kept or dropped.
fn alpha_dropout_impl(input: &Tensor, p: f64, training: bool, feature: bool) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::msg(format!("dropout probability has to be between 0 and 1, but got {p}")));
    }
    if p == 0.0 || !training || input.numel() == 0 {
        return Ok(input.clone());
    }
    if p == 1.0 {
        // (torch multiplies by a zero of the input's own type: integers and bools keep their
        // dtype, NaN stays NaN; not the dropped value)
        return input.mul(&Tensor::zeros((), input.same_options())?);
    }
    let noise_shape = if feature {
        if input.rank() < 2 {
            return Err(Error::shape("Feature dropout requires at least 2 dimensions in the input"));
        }
        let mut shape = vec![1usize; input.rank()];
        shape[..2].copy_from_slice(&input.dims()[..2]);
        shape
    } else {
        input.dims().to_vec()
    };
    if !input.is_floating_point() {
        // torch's mask has the input's dtype (a bool one becomes int64 at `noise - 1`), and the
        // float correction cannot be written back into it.
        let to = if input.dtype() == DType::Bool { DType::I64 } else { input.dtype() };
        return Err(Error::msg(format!(
            "result type Float can't be cast to the desired output type {}",
            to.scalar_type_name()
        )));
    }
    let keep = Tensor::rand(noise_shape, (DType::F32, input.device()))?.lt(1.0 - p)?;
    // As torch, in the input's dtype: b = (noise - 1) * ALPHA a + ALPHA a p, out = x * (noise a) + b.
    let noise = keep.to_dtype(input.dtype())?;
    let a = 1.0 / ((ALPHA * ALPHA * p + 1.0) * (1.0 - p)).sqrt();
    let b = noise.sub(1.0)?.mul(ALPHA * a)?.add(ALPHA * a * p)?;
    input.mul(&noise.mul(a)?)?.add(&b)
}

/// torch's `alpha_dropout(input, p=0.5, training=False)`: in training, each element is dropped
/// with probability `p` to SELU's saturation value and the result is scaled and shifted so that
/// inputs of mean 0 and variance 1 keep them (a kept `x` becomes `a x + 1.7581 a p`, a dropped
/// one `1.7581 a (p - 1)`, `a = ((1.7581² p + 1)(1 - p))^-1/2`). The input unchanged when not
/// `training` or at `p = 0`; zeros (`input * 0`) at `p = 1`.
pub fn alpha_dropout(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    alpha_dropout_impl(input, p, training, false)
}

/// torch's `feature_alpha_dropout(input, p=0.5, training=False)`: [`alpha_dropout`] keeping or
/// dropping whole channels (each `[n, c]` slice of an input of two or more dims) together.
pub fn feature_alpha_dropout(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    alpha_dropout_impl(input, p, training, true)
}

/// The distance from 1 to the next larger value of a float dtype (torch's `finfo.eps`).
fn machine_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        DType::F16 => 2f64.powi(-10),
        DType::BF16 => 2f64.powi(-7),
        _ => f32::EPSILON as f64,
    }
}

/// torch's `gumbel_softmax(logits, tau=1, hard=False, dim=-1)` (its `eps` is deprecated and
/// unused): `softmax((logits + g) / tau, dim)` with `g = -log(e)` Gumbel noise, `e` drawn from
/// Exponential(1) in the logits' dtype. With `hard`, the one-hot of each argmax along `dim` (the
/// first on a tie) in the forward pass, with the soft sample's gradient (`y_hard - y_soft.detach()
/// + y_soft`).
pub fn gumbel_softmax(logits: &Tensor, tau: f64, hard: bool, dim: isize) -> Result<Tensor> {
    let dtype = logits.dtype();
    if !logits.is_floating_point() {
        return Err(Error::msg(format!(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
            dtype.scalar_type_name()
        )));
    }
    // Exponential(1) draws -ln(1 - u), u uniform in [0, 1); a draw of 0 (u = 0) is raised to half
    // the dtype's epsilon, as torch's kernels keep the draws positive (a Gumbel of +inf would make
    // the softmax NaN).
    let u = Tensor::rand(logits.dims().to_vec(), (dtype, logits.device()))?;
    let exponentials = u.neg()?.add(1.0)?.log()?.neg()?.clamp_min(machine_eps(dtype) / 2.0)?;
    let gumbels = exponentials.log()?.neg()?;
    let y_soft = logits.add(&gumbels)?.div(tau)?.softmax(dim, None)?;
    if !hard {
        return Ok(y_soft);
    }
    let (_, index) = y_soft.max_dim(dim, true)?;
    let y_hard = logits.zeros_like()?.scatter_value(dim, &index, 1.0)?;
    y_hard.sub(y_soft.detach())?.add(&y_soft)
}
