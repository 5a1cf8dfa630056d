//! torch 2.6+'s split of `clip_grad_norm_`: [`get_total_norm`] of any tensors, and
//! [`clip_grads_with_norm_`] scaling gradients by a norm computed beforehand.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

/// torch's `nn.utils.get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False,
/// foreach=None)`: the `norm_type`-norm of the norms of `tensors` (as if they were one vector), a
/// 0-d tensor of their promoted dtype (a float32 0 for no tensors). `foreach` is accepted for
/// torch's signature; every device here takes either path, with the same result.
/// As torch's, it records no autograd history.
pub fn get_total_norm(
    tensors: &[Tensor],
    norm_type: f64,
    error_if_nonfinite: bool,
    foreach: Option<bool>,
) -> Result<Tensor> {
    let _ = foreach;
    no_grad(|| {
        let Some(dtype) = tensors.iter().map(Tensor::dtype).reduce(oxtorch_tensor::promote_types) else {
            return Tensor::scalar_tensor(0.0, DType::F32);
        };
        let norms: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.norm(norm_type, Vec::<isize>::new(), false)?.to_dtype(dtype))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = norms.iter().collect();
        let total = Tensor::stack(&refs, 0)?.norm(norm_type, Vec::<isize>::new(), false)?;
        if error_if_nonfinite && !total.item::<f64>()?.is_finite() {
            return Err(Error::msg(format!(
                "The total norm of order {norm_type:?} for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )));
        }
        Ok(total)
    })
}

/// torch's `nn.utils.clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None)`:
/// multiplies every gradient of `parameters` by `min(max_norm / (total_norm + 1e-6), 1)`, computed
/// in `total_norm`'s dtype (gradients are only ever scaled down). Parameters without a gradient
/// are skipped.
pub fn clip_grads_with_norm_(
    parameters: &[Tensor],
    max_norm: f64,
    total_norm: &Tensor,
    foreach: Option<bool>,
) -> Result<()> {
    let _ = foreach;
    no_grad(|| {
        let grads: Vec<Tensor> = parameters.iter().filter_map(Tensor::grad).collect();
        if grads.is_empty() {
            return Ok(());
        }
        let total = total_norm.detach();
        let coef = total.full_like(max_norm)?.div(&total.add(1e-6)?)?.clamp_max(1.0)?;
        for g in &grads {
            g.mul_(&coef.to_dtype(g.dtype())?)?;
        }
        Ok(())
    })
}
