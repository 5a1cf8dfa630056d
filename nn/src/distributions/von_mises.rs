//! `VonMises` with torch's formulas: `log_prob` through the modified Bessel function `I0`,
//! sampling by torch's rejection algorithm.

use std::any::Any;
use std::f64::consts::PI;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

use super::common_methods::common;
use super::{
    broadcast_all, check_params, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
};

// ---------------------------------------------------------------------------------------------
// VonMises
// ---------------------------------------------------------------------------------------------

const I0_COEF_SMALL: [f64; 7] = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2];
const I0_COEF_LARGE: [f64; 9] = [
    0.39894228,
    0.1328592e-1,
    0.225319e-2,
    -0.157565e-2,
    0.916281e-2,
    -0.2057706e-1,
    0.2635537e-1,
    -0.1647633e-1,
    0.392377e-2,
];
const I1_COEF_SMALL: [f64; 7] =
    [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3];
const I1_COEF_LARGE: [f64; 9] = [
    0.39894228,
    -0.3988024e-1,
    -0.362018e-2,
    0.163801e-2,
    -0.1031555e-1,
    0.2282967e-1,
    -0.2895312e-1,
    0.1787654e-1,
    -0.420059e-2,
];

/// torch's `_eval_poly`: Horner's rule on the coefficients (lowest order first).
fn eval_poly(y: &Tensor, coef: &[f64]) -> Result<Tensor> {
    let (last, rest) = coef.split_last().ok_or_else(|| Error::msg("empty polynomial"))?;
    let mut result = y.full_like(*last)?;
    for c in rest.iter().rev() {
        result = y.mul(&result)?.add(*c)?;
    }
    Ok(result)
}

/// torch's `_log_modified_bessel_fn`: `log(I_order(x))` for `x > 0`, `order` 0 or 1, by the
/// polynomial approximations of Abramowitz & Stegun (as torch, differentiable).
pub(crate) fn log_modified_bessel_fn(x: &Tensor, order: usize) -> Result<Tensor> {
    if order > 1 {
        return Err(Error::msg(format!("order must be 0 or 1, got {order}")));
    }
    let (cs, cl): (&[f64], &[f64]) =
        if order == 0 { (&I0_COEF_SMALL, &I0_COEF_LARGE) } else { (&I1_COEF_SMALL, &I1_COEF_LARGE) };
    let y = x.div(3.75)?.square()?;
    let mut small = eval_poly(&y, cs)?;
    if order == 1 {
        small = x.abs()?.mul(&small)?;
    }
    let small = small.log()?;
    let y = x.reciprocal()?.mul(3.75)?;
    let large = x.sub(&x.log()?.mul(0.5)?)?.add(&eval_poly(&y, cl)?.log()?)?;
    Tensor::where_cond(&x.lt(3.75)?, &small, &large)
}

/// The circular von Mises distribution (torch's `VonMises`); `loc` and values are angles in
/// radians, samples lie in `[-π, π)` (Best & Fisher's rejection sampler, in float64 as torch's).
#[derive(Clone)]
pub struct VonMises {
    /// The mean direction.
    pub loc: Tensor,
    /// The concentration `κ`.
    pub concentration: Tensor,
    validate: bool,
}

impl VonMises {
    /// `VonMises(loc, concentration)`, validated by default.
    pub fn new(loc: &Tensor, concentration: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, concentration, None)
    }

    /// `VonMises(loc, concentration, validate_args=validate_args)`.
    pub fn with_validate_args(
        loc: &Tensor,
        concentration: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[loc, concentration])?;
        let d = VonMises {
            loc: b[0].clone(),
            concentration: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "VonMises",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("concentration", &d.concentration, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for VonMises {
    common!("VonMises", loc);
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("concentration", self.concentration.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Real
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let n: usize = shape.iter().product();
        let loc =
            self.loc.detach().to_dtype(DType::F64)?.expand(shape.clone())?.contiguous()?.to_f64_vec()?;
        let kappa = self
            .concentration
            .detach()
            .to_dtype(DType::F64)?
            .expand(shape.clone())?
            .contiguous()?
            .to_f64_vec()?;
        let r: Vec<f64> = kappa
            .iter()
            .map(|&k| {
                if k < 1e-5 {
                    1.0 / k + k
                } else {
                    let tau = 1.0 + (1.0 + 4.0 * k * k).sqrt();
                    let rho = (tau - (2.0 * tau).sqrt()) / (2.0 * k);
                    (1.0 + rho * rho) / (2.0 * rho)
                }
            })
            .collect();
        let mut x = vec![0.0f64; n];
        let mut done = vec![false; n];
        while done.iter().any(|d| !d) {
            let u = Tensor::rand_with([3, n], DType::F64, generator)?.to_f64_vec()?;
            for i in 0..n {
                let (u1, u2, u3) = (u[i], u[n + i], u[2 * n + i]);
                let z = (PI * u1).cos();
                let f = (1.0 + r[i] * z) / (r[i] + z);
                let c = kappa[i] * (r[i] - f);
                let accept = (c * (2.0 - c) - u2) > 0.0 || ((c / u2).ln() + 1.0 - c) >= 0.0;
                if accept {
                    let s = u3 - 0.5;
                    let sign = if s > 0.0 {
                        1.0
                    } else if s < 0.0 {
                        -1.0
                    } else {
                        0.0
                    };
                    x[i] = sign * f.acos();
                    done[i] = true;
                }
            }
        }
        let out: Vec<f64> =
            x.iter().zip(&loc).map(|(xi, li)| (xi + PI + li).rem_euclid(2.0 * PI) - PI).collect();
        Tensor::from_vec(out, shape)?.to_dtype(self.loc.dtype())
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let lp = self.concentration.mul(&value.sub(&self.loc)?.cos()?)?;
        lp.sub((2.0 * PI).ln())?.sub(&log_modified_bessel_fn(&self.concentration, 0)?)
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    /// The circular variance `1 - I₁(κ) / I₀(κ)`.
    fn variance(&self) -> Result<Tensor> {
        let k = &self.concentration;
        log_modified_bessel_fn(k, 1)?.sub(&log_modified_bessel_fn(k, 0)?)?.exp()?.rsub(1.0)
    }
}
