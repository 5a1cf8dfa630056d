//! Normalising functions of `torch.nn.functional`: `normalize`, `cosine_similarity`,
//! `local_response_norm` and `instance_norm`, composed of tensor ops (batch norm for the last).

use oxtorch_tensor::{no_grad, Error, Result, Tensor};

/// `x / max(‖x‖_p, eps)` along `dim` (torch's defaults: `p` 2, `dim` 1, `eps` 1e-12).
pub fn normalize(input: &Tensor, p: f64, dim: isize, eps: f64) -> Result<Tensor> {
    let norm = input.norm(p, [dim], true)?;
    input.div(&norm.clamp_min(eps)?)
}

/// The cosine of the angle between `x1` and `x2` along `dim` after broadcasting (torch's
/// defaults: `dim` 1, `eps` 1e-8): `sum(x1 / max(‖x1‖, eps) * x2 / max(‖x2‖, eps))`. As torch
/// clamps the norms outside autograd, the gradient flows through a norm below `eps` as if it were
/// not clamped.
pub fn cosine_similarity(x1: &Tensor, x2: &Tensor, dim: isize, eps: f64) -> Result<Tensor> {
    let both = Tensor::broadcast_tensors(&[x1, x2])?;
    let (x1, x2) = (&both[0], &both[1]);
    let unit = |x: &Tensor| -> Result<Tensor> {
        let norm = x.norm(2.0, [dim], true)?;
        // the clamped value, with the unclamped norm's gradient
        let lift = no_grad(|| norm.clamp_min(eps)?.sub(&norm))?;
        x.div(&norm.add(&lift)?)
    };
    unit(x1)?.mul(&unit(x2)?)?.sum([dim], false)
}

/// Local response normalisation over channels (dim 1; torch's defaults `alpha` 1e-4, `beta` 0.75,
/// `k` 1): `x / (k + alpha * mean of x² over `size` neighbouring channels)^beta`, the window padded
/// with zeros (`size / 2` channels before, `(size - 1) / 2` after).
pub fn local_response_norm(input: &Tensor, size: usize, alpha: f64, beta: f64, k: f64) -> Result<Tensor> {
    if input.rank() < 3 {
        return Err(Error::msg(format!(
            "Expected 3D or higher dimensionality input (got {} dimensions)",
            input.rank()
        )));
    }
    if size == 0 {
        return Err(Error::msg("kernel size should be greater than zero, but got kH: 0 kW: 1"));
    }
    if input.numel() == 0 {
        return Ok(input.clone());
    }
    let c = input.dims()[1];
    let mut pad = vec![0isize; 2 * (input.rank() - 2)];
    pad.extend([(size / 2) as isize, ((size - 1) / 2) as isize]);
    let squares = input.mul(input)?.pad(&pad, "constant", Some(0.0))?;
    let mut sum = squares.narrow(1, 0, c)?;
    for j in 1..size {
        sum = sum.add(&squares.narrow(1, j as isize, c)?)?;
    }
    let div = sum.div(size as f64)?.mul(alpha)?.add(k)?.pow(beta)?;
    input.div(&div)
}

/// Instance normalisation (torch's `instance_norm`): each (sample, channel) normalised over its
/// spatial dims, then scaled by `weight` and shifted by `bias` per channel. With
/// `use_input_stats` false the running statistics normalise instead; with it, given running
/// statistics are updated with the batch's mean over samples (`momentum`).
#[allow(clippy::too_many_arguments)]
pub fn instance_norm(
    input: &Tensor,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    use_input_stats: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    let dims = input.dims().to_vec();
    if dims.len() < 3 {
        return Err(Error::msg(format!(
            "instance_norm: expected an input with a batch, a channel and spatial dims, got shape {dims:?}"
        )));
    }
    let (n, c) = (dims[0], dims[1]);
    if use_input_stats && dims[2..].iter().product::<usize>() == 1 {
        return Err(Error::msg(format!(
            "Expected more than 1 spatial element when training, got input size {dims:?}"
        )));
    }
    // One batch of `n * c` channels, the per-channel tensors repeated for each sample.
    let mut flat = vec![1, n * c];
    flat.extend(&dims[2..]);
    let repeat = |t: Option<&Tensor>| t.map(|t| t.repeat([n as isize])).transpose();
    let (rm, rv) = (repeat(running_mean)?, repeat(running_var)?);
    let out = input.reshape(flat)?.batch_norm(
        rm.as_ref(),
        rv.as_ref(),
        repeat(weight)?.as_ref(),
        repeat(bias)?.as_ref(),
        use_input_stats,
        momentum,
        eps,
    )?;
    if use_input_stats {
        // The running statistics take the samples' mean.
        no_grad(|| -> Result<()> {
            for (running, updated) in [(running_mean, &rm), (running_var, &rv)] {
                if let (Some(running), Some(updated)) = (running, updated) {
                    running.copy_(&updated.reshape([n, c])?.mean([0], false)?)?;
                }
            }
            Ok(())
        })?;
    }
    out.reshape(dims)
}
