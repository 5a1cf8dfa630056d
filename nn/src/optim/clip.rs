//! Gradient clipping (torch's `torch.nn.utils.clip_grad_norm_` / `clip_grad_value_`).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

/// Scales the gradients of `params` so that their total `norm_type`-norm is at most `max_norm`;
/// returns the total norm before clipping, a 0-d tensor of the gradients' dtype (promoted across
/// them; f32 without gradients). As torch, each gradient's norm, the total and the factor
/// `min(1, max_norm / (total + 1e-6))` are computed in that dtype. `f64::INFINITY` is the max norm.
pub fn clip_grad_norm_(
    params: &[Tensor],
    max_norm: f64,
    norm_type: f64,
    error_if_nonfinite: bool,
) -> Result<Tensor> {
    no_grad(|| {
        let grads: Vec<Tensor> = params.iter().filter_map(Tensor::grad).collect();
        let Some(dtype) = grads.iter().map(Tensor::dtype).reduce(oxtorch_tensor::promote_types) else {
            return Tensor::scalar_tensor(0.0, DType::F32);
        };
        let norms: Vec<Tensor> = grads
            .iter()
            .map(|g| g.norm(norm_type, Vec::<isize>::new(), false)?.to_dtype(dtype))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = norms.iter().collect();
        let total = Tensor::stack(&refs, 0)?.norm(norm_type, Vec::<isize>::new(), false)?;
        if error_if_nonfinite && !total.item::<f64>()?.is_finite() {
            return Err(Error::msg(format!(
                "The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )));
        }
        let coef = total.full_like(max_norm)?.div(&total.add(1e-6)?)?.clamp_max(1.0)?;
        for g in &grads {
            g.mul_(&coef.to_dtype(g.dtype())?)?;
        }
        Ok(total)
    })
}

/// Clamps every gradient element of `params` to `[-clip_value, clip_value]`.
pub fn clip_grad_value_(params: &[Tensor], clip_value: f64) -> Result<()> {
    no_grad(|| {
        for g in params.iter().filter_map(Tensor::grad) {
            let c = g.clamp(Some((-clip_value).into()), Some(clip_value.into()))?;
            g.copy_(&c)?;
        }
        Ok(())
    })
}
