//! Helpers shared by the distributions that torch builds as `TransformedDistribution`s and
//! oxtorch writes out in closed form (Gumbel, Weibull, Pareto, Kumaraswamy, InverseGamma; the
//! same values up to rounding): `log_prob` is the base's `log_prob` at the inverted value minus
//! the transforms' `log_abs_det_jacobian`, `cdf`/`icdf` the base's through the (monotonized)
//! transforms and `rsample` the base's draw pushed through the transforms.

use oxtorch_tensor::{Generator, Result, Tensor};

use super::like;

/// The Euler–Mascheroni constant (torch's `euler_constant`).
pub(super) const EULER: f64 = 0.577_215_664_901_532_9;

/// torch's `TransformedDistribution._monotonize_cdf` for a tensor `sign` of the transforms
/// (`sign * (value - 0.5) + 0.5`, with the elementwise sign `+1` or `-1`).
pub(super) fn monotonize_cdf(value: &Tensor, increasing: bool) -> Result<Tensor> {
    let centered = value.sub(0.5)?;
    if increasing {
        centered.add(0.5)
    } else {
        centered.neg()?.add(0.5)
    }
}

/// A standard exponential draw of `shape` like `t` (torch's `Exponential(1).rsample`).
pub(super) fn std_exponential(
    shape: Vec<usize>,
    t: &Tensor,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    let e = Tensor::zeros(shape, like(t))?;
    e.exponential_with_(1.0, generator)?;
    Ok(e)
}
