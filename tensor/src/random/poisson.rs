//! `poisson`: one Poisson draw per element with that element's rate, by torch's algorithms
//! (products of uniforms below rate 10, Hörmann's transformed rejection PTRS from 10 on).
//!
//! A draw needs a varying number of uniforms: element `i` reserves block `start + i` of the
//! stream and reads its sub-blocks `j = 0, 1, ...` (Philox counter words 2 and 3, which the other
//! ops leave 0; sub-block 0 is the block itself), so the values do not depend on threads.

use std::sync::Mutex;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{Error, Result};
use rayon::prelude::*;

use super::uniforms::Uniforms;
use super::{gen_or_default, Generator};
use crate::autograd::{Function, FunctionCtx};
use crate::create::from_cpu;
use crate::Tensor;

/// `ln(k!)`: summed logs below 20, Stirling's series (error below 1e-13) above.
fn ln_factorial(k: i64) -> f64 {
    if k < 20 {
        return (2..=k.max(1)).map(|i| (i as f64).ln()).sum();
    }
    let x = (k + 1) as f64;
    let x2 = x * x;
    (x - 0.5) * x.ln() - x + 0.5 * std::f64::consts::TAU.ln() + 1.0 / (12.0 * x) - 1.0 / (360.0 * x * x2)
        + 1.0 / (1260.0 * x * x2 * x2)
}

/// C's conversion of a double to int64 on x86 (what torch's kernel does): out-of-range values and
/// NaN give `i64::MIN`.
fn to_i64(v: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// torch's `sample_poisson` for one rate.
fn sample(lambda: f64, u: &mut Uniforms) -> i64 {
    if lambda >= 10.0 {
        // Transformed rejection (Hörmann 1993), step by step as torch.
        let slam = lambda.sqrt();
        let loglam = lambda.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let uu = u.next() - 0.5;
            let v = u.next();
            let us = 0.5 - uu.abs();
            let k = to_i64(((2.0 * a / us + b) * uu + lambda + 0.43).floor());
            if us >= 0.07 && v <= vr {
                return k;
            }
            if k < 0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lambda + k as f64 * loglam - ln_factorial(k)
            {
                return k;
            }
        }
    } else if lambda == 0.0 {
        0
    } else {
        let enlam = (-lambda).exp();
        let mut x = 0;
        let mut prod = 1.0;
        loop {
            prod *= u.next();
            if prod > enlam {
                x += 1;
            } else {
                return x;
            }
        }
    }
}

impl Tensor {
    /// One draw from the Poisson distribution per element, with the element as its rate (torch's
    /// `torch.poisson`): same shape, dtype and device; rates must be non-negative (NaN refused),
    /// and rate 0 draws 0. Float dtypes only. The result is differentiable with a zero gradient
    /// (torch's `PoissonBackward0`).
    pub fn poisson(&self) -> Result<Tensor> {
        self.poisson_with(None)
    }

    /// [`Tensor::poisson`] from `generator`.
    pub fn poisson_with(&self, generator: Option<&Generator>) -> Result<Tensor> {
        if !self.is_floating_point() {
            return Err(Error::UnsupportedDType { op: "poisson_cpu", dtype: self.dtype() });
        }
        let rates = self.to_f64_vec()?;
        if rates.iter().any(|r| r.is_nan() || *r < 0.0) {
            return Err(Error::msg("invalid Poisson rate, expected rate to be non-negative"));
        }
        let (seed, start) = gen_or_default(generator).reserve(rates.len() as u64);
        let draws: Vec<f64> = rates
            .par_iter()
            .with_min_len(1 << 12)
            .enumerate()
            .map(|(i, &r)| sample(r, &mut Uniforms::new(seed, start.wrapping_add(i as u64))) as f64)
            .collect();
        let draws =
            from_cpu(CpuStorage::from_vec(draws), self.dims(), self.device())?.to_dtype(self.dtype())?;
        if !self.requires_grad() {
            return Ok(draws);
        }
        Ok(ZeroGradient { value: Mutex::new(Some(draws)) }.apply(std::slice::from_ref(self))?.remove(0))
    }
}

/// Returns a precomputed value (taken out in `forward`, so the node does not hold its own output)
/// with a zero gradient for the input.
struct ZeroGradient {
    value: Mutex<Option<Tensor>>,
}

impl Function for ZeroGradient {
    fn forward(&self, _ctx: &mut FunctionCtx, _inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let value = self.value.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(vec![value.ok_or_else(|| Error::msg("poisson: the draws were already taken"))?])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].zeros_like()?)])
    }

    fn name(&self) -> &'static str {
        "PoissonBackward0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_factorial_matches_the_product() {
        let mut f = 1.0f64;
        for k in 1..=40i64 {
            f *= k as f64;
            assert!((ln_factorial(k) - f.ln()).abs() < 1e-11 * f.ln().max(1.0), "{k}");
        }
        assert_eq!(ln_factorial(0), 0.0);
    }
}
