//! A differentiable standard-gamma sampler (torch's `_standard_gamma` with the implicit
//! reparameterization gradient `_standard_gamma_grad`), behind `Gamma.rsample`.

use oxtorch_tensor::autograd::{Function, FunctionCtx};
use oxtorch_tensor::{DType, Generator, Result, Tensor};

use super::gamma::standard_gamma;

/// `d sample / d alpha` at one `(alpha, x)` (torch's `standard_gamma_grad_one`); `digamma_alpha`
/// is `digamma(alpha)`.
fn standard_gamma_grad_one(alpha: f64, x: f64, digamma_alpha: f64) -> f64 {
    // (torch compares with float literals: 0.8f, 0.9f, 1.1f widened to double)
    if x < f64::from(0.8f32) {
        let mut numer = 1.0;
        let mut denom = alpha;
        let mut series1 = numer / denom;
        let mut series2 = numer / (denom * denom);
        for i in 1..=5 {
            numer *= -x / i as f64;
            denom += 1.0;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }
        let pow_x_alpha = x.powf(alpha);
        let gamma_pdf = x.powf(alpha - 1.0) * (-x).exp();
        let gamma_cdf = pow_x_alpha * series1;
        let gamma_cdf_alpha = (x.ln() - digamma_alpha) * gamma_cdf - pow_x_alpha * series2;
        let result = -gamma_cdf_alpha / gamma_pdf;
        return if result.is_nan() { 0.0 } else { result };
    }
    if alpha > 8.0 {
        if f64::from(0.9f32) * alpha <= x && x <= f64::from(1.1f32) * alpha {
            let numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha);
            let numer_2 = 1440.0 * (alpha * alpha) + 6.0 * x * (53.0 - 120.0 * x) - 65.0 * x * x / alpha
                + alpha * (107.0 + 3600.0 * x);
            let denom = 1244160.0 * (alpha * alpha) * (alpha * alpha);
            return numer_1 * numer_2 / denom;
        }
        let denom = (8.0 * alpha).sqrt();
        let term2 = denom / (alpha - x);
        let term3 = (x - alpha - alpha * (x / alpha).ln()).powf(-1.5);
        let term23 = if x < alpha { term2 - term3 } else { term2 + term3 };
        let term1 =
            (x / alpha).ln() * term23 - (2.0 / alpha).sqrt() * (alpha + x) / ((alpha - x) * (alpha - x));
        let stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha));
        let numer = x * term1;
        return -stirling * numer / denom;
    }
    let u = (x / alpha).ln();
    let v = alpha.ln();
    const COEF_UV: [[f64; 8]; 3] = [
        [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1.0, 0.32668115, 0.10406089, 0.0014179084],
        [
            0.53487893,
            0.1298071,
            0.065735949,
            -0.0015649758,
            0.16639465,
            0.020070113,
            -0.0035938915,
            -0.00058392623,
        ],
        [
            0.040121004,
            -0.0065914022,
            -0.0026286047,
            -0.0013441777,
            0.017050642,
            -0.0021309326,
            0.00085092367,
            -1.5247877e-07,
        ],
    ];
    let mut coef_v = [0.0f64; 8];
    for (i, c) in coef_v.iter_mut().enumerate() {
        *c = COEF_UV[0][i] + u * (COEF_UV[1][i] + u * COEF_UV[2][i]);
    }
    let p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
    let q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
    (p / q).exp()
}

/// `torch._standard_gamma_grad(alpha, x)`: the reparameterized derivative `d x / d alpha` of a
/// standard-gamma draw `x ~ Gamma(alpha, 1)`, elementwise (same shapes; the result in `x`'s dtype).
pub fn standard_gamma_grad(alpha: &Tensor, x: &Tensor) -> Result<Tensor> {
    let b = Tensor::broadcast_tensors(&[alpha, x])?;
    let a64 = b[0].detach().to_dtype(DType::F64)?.contiguous()?;
    let dg = a64.digamma()?.to_f64_vec()?;
    let a = a64.to_f64_vec()?;
    let xs = b[1].detach().to_dtype(DType::F64)?.contiguous()?.to_f64_vec()?;
    let out: Vec<f64> = (0..a.len()).map(|i| standard_gamma_grad_one(a[i], xs[i], dg[i])).collect();
    Tensor::from_vec(out, b[1].dims().to_vec())?.to_dtype(x.dtype())
}

/// The sampler as an autograd function of `(alpha, drawn sample)`: forward passes the draw
/// through, backward is `grad * _standard_gamma_grad(alpha, x)` for `alpha`.
struct StandardGammaFn;

impl Function for StandardGammaFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = inputs[1].detach();
        ctx.save_for_backward(&[&inputs[0], &x]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        Ok(vec![Some(grads[0].mul(&standard_gamma_grad(&saved[0], &saved[1])?)?), None])
    }

    fn name(&self) -> &'static str {
        "StandardGammaBackward0"
    }
}

/// `torch._standard_gamma(alpha)` with its gradient: a `Gamma(alpha, 1)` draw per element,
/// differentiable with respect to `alpha` through [`standard_gamma_grad`].
pub fn standard_gamma_rsample(alpha: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
    let x = standard_gamma(alpha, generator)?;
    Ok(StandardGammaFn.apply(&[alpha.clone(), x])?.remove(0))
}

/// torch's `Gamma.rsample`: `_standard_gamma(concentration.expand(shape)) / rate.expand(shape)`,
/// clamped (without gradient effect) to at least `finfo(dtype).tiny`.
pub fn gamma_rsample(
    concentration: &Tensor,
    rate: &Tensor,
    shape: &[usize],
    g: Option<&Generator>,
) -> Result<Tensor> {
    let x = standard_gamma_rsample(&concentration.expand(shape.to_vec())?, g)?;
    let value = x.div(&rate.expand(shape.to_vec())?)?;
    let tiny = super::finfo_tiny(value.dtype());
    // value.detach().clamp_(min=tiny): the gradient flows as if unclamped.
    let fix = value.detach().clamp_min(tiny)?.sub(value.detach())?;
    value.add(&fix)
}
