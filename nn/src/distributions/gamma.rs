//! `torch.distributions.Gamma` and the standard-gamma sampler behind Gamma, Dirichlet and Beta.
//!
//! torch reparameterizes `Gamma.rsample` through `_standard_gamma`'s implicit gradient; oxtorch
//! has no differentiable standard-gamma sampler yet, so Gamma (and Dirichlet, Beta) draw with
//! `sample` only and `rsample` is an error.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{DType, Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, finfo_tiny, resolve_validate, validate_sample, Constraint, Distribution,
    NONNEGATIVE, POSITIVE,
};

/// Draws `Gamma(alpha, 1)` for every element of `alpha` (no gradient), by Marsaglia and Tsang's
/// rejection method (with the `u^(1/alpha)` boost for `alpha < 1`), as torch's `_standard_gamma`
/// kernel; a negative or NaN `alpha` gives NaN (zero gives `tiny`, as torch). Values are at least `finfo(dtype).tiny`.
pub fn standard_gamma(alpha: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
    let a = alpha.detach().to_dtype(DType::F64)?.contiguous()?.to_f64_vec()?;
    // (torch clamps a zero concentration's draw up to `tiny` too; negative or NaN ones give NaN)
    let mut out: Vec<f64> = a.iter().map(|&x| if x == 0.0 { 0.0 } else { f64::NAN }).collect();
    let mut pending: Vec<usize> = (0..a.len()).filter(|&i| a[i] > 0.0).collect();
    let small: Vec<usize> = pending.iter().copied().filter(|&i| a[i] < 1.0).collect();
    while !pending.is_empty() {
        let m = pending.len();
        let z = Tensor::randn_with([m], DType::F64, generator)?.to_f64_vec()?;
        let u = Tensor::rand_with([m], DType::F64, generator)?.to_f64_vec()?;
        let mut next = Vec::new();
        for (k, &i) in pending.iter().enumerate() {
            let aa = if a[i] < 1.0 { a[i] + 1.0 } else { a[i] };
            let d = aa - 1.0 / 3.0;
            let c = 1.0 / (9.0 * d).sqrt();
            let v = (1.0 + c * z[k]).powi(3);
            if v > 0.0 && u[k].ln() < 0.5 * z[k] * z[k] + d - d * v + d * v.ln() {
                out[i] = d * v;
            } else {
                next.push(i);
            }
        }
        pending = next;
    }
    if !small.is_empty() {
        let u = Tensor::rand_with([small.len()], DType::F64, generator)?.to_f64_vec()?;
        for (k, &i) in small.iter().enumerate() {
            out[i] *= u[k].powf(1.0 / a[i]);
        }
    }
    let t = Tensor::from_vec(out, alpha.dims().to_vec())?.to_dtype(alpha.dtype())?;
    t.clamp_min(finfo_tiny(alpha.dtype()))
}

/// The gamma distribution with shape `concentration` and rate `rate` (torch's `Gamma`).
#[derive(Clone)]
pub struct Gamma {
    /// The shape `α`.
    pub concentration: Tensor,
    /// The rate `β` (`1 / scale`).
    pub rate: Tensor,
    validate: bool,
}

impl Gamma {
    /// `Gamma(concentration, rate)`, validated by default.
    pub fn new(concentration: &Tensor, rate: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration, rate, None)
    }

    /// `Gamma(concentration, rate, validate_args=validate_args)`.
    pub fn with_validate_args(
        concentration: &Tensor,
        rate: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[concentration, rate])?;
        let d = Gamma {
            concentration: b[0].clone(),
            rate: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "Gamma",
                &d.params(),
                &[("concentration", &d.concentration, POSITIVE), ("rate", &d.rate, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Gamma {
    fn name(&self) -> &'static str {
        "Gamma"
    }
    fn has_rsample(&self) -> bool {
        true
    }
    /// Reparameterized as torch's: the draw's gradient with respect to the concentration is
    /// torch's implicit `_standard_gamma_grad`.
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        super::gamma_rsample::gamma_rsample(
            &self.concentration,
            &self.rate,
            &self.extended_shape(sample_shape),
            generator,
        )
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.rate.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("concentration", self.concentration.clone()), ("rate", self.rate.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Gamma {
            concentration: self.concentration.expand(batch_shape)?,
            rate: self.rate.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let g = standard_gamma(&self.concentration.detach().expand(shape.clone())?, generator)?;
        g.div(&self.rate.detach().expand(shape)?)?.clamp_min(finfo_tiny(self.rate.dtype()))
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let (a, b) = (&self.concentration, &self.rate);
        a.xlogy(b)?.add(&a.sub(1.0)?.xlogy(value)?)?.sub(&b.mul(value)?)?.sub(&a.lgamma()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        let a = &self.concentration;
        a.sub(&self.rate.log()?)?.add(&a.lgamma()?)?.add(&a.rsub(1.0)?.mul(&a.digamma()?)?)
    }
    fn mean(&self) -> Result<Tensor> {
        self.concentration.div(&self.rate)
    }
    fn mode(&self) -> Result<Tensor> {
        self.concentration.sub(1.0)?.div(&self.rate)?.clamp_min(0.0)
    }
    fn variance(&self) -> Result<Tensor> {
        self.concentration.div(&self.rate.square()?)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.concentration.special_gammainc(&self.rate.mul(value)?)
    }
}
