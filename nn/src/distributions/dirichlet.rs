//! `torch.distributions.Dirichlet` and `Beta` (a two-class Dirichlet, as torch builds it).

use std::any::Any;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::dirichlet_grad::dirichlet_rsample_from;
use super::gamma::standard_gamma;
use super::{
    broadcast_all, check_params, finfo_tiny, resolve_validate, validate_sample, Constraint, Distribution,
    POSITIVE, UNIT_INTERVAL,
};

/// The Dirichlet distribution with `concentration` `[*batch, K]` (torch's `Dirichlet`); samples
/// are normalized standard-gamma draws, and `rsample` is differentiable with respect to the
/// concentration through torch's implicit gradient (torch's `_dirichlet_grad`).
#[derive(Clone)]
pub struct Dirichlet {
    /// The concentrations, `[*batch, K]`.
    pub concentration: Tensor,
    validate: bool,
}

impl Dirichlet {
    /// `Dirichlet(concentration)`, validated by default.
    pub fn new(concentration: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration, None)
    }

    /// `Dirichlet(concentration, validate_args=validate_args)`.
    pub fn with_validate_args(concentration: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        if concentration.rank() < 1 {
            return Err(Error::msg("`concentration` parameter must be at least one-dimensional."));
        }
        let d = Dirichlet { concentration: concentration.clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            let c = Constraint::Independent(Box::new(POSITIVE), 1);
            check_params("Dirichlet", &d.params(), &[("concentration", &d.concentration, c)])?;
        }
        Ok(d)
    }
}

impl Distribution for Dirichlet {
    fn name(&self) -> &'static str {
        "Dirichlet"
    }
    fn batch_shape(&self) -> Vec<usize> {
        let d = self.concentration.dims();
        d[..d.len() - 1].to_vec()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.concentration.dims()[self.concentration.rank() - 1]]
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("concentration", self.concentration.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Simplex
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let g = standard_gamma(&self.concentration.detach().expand(shape)?, generator)?;
        g.div(&g.sum(-1isize, true)?)?.clamp_min(finfo_tiny(self.concentration.dtype()))
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        // torch's `_Dirichlet.apply(concentration.expand(shape))`
        let concentration = self.concentration.expand(self.extended_shape(sample_shape))?;
        let x = self.sample_with(sample_shape, generator)?;
        dirichlet_rsample_from(&concentration, &x)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let c = &self.concentration;
        c.sub(1.0)?
            .xlogy(value)?
            .sum(-1isize, false)?
            .add(&c.sum(-1isize, false)?.lgamma()?)?
            .sub(&c.lgamma()?.sum(-1isize, false)?)
    }
    fn entropy(&self) -> Result<Tensor> {
        let c = &self.concentration;
        let k = c.dims()[c.rank() - 1] as f64;
        let a0 = c.sum(-1isize, false)?;
        c.lgamma()?
            .sum(-1isize, false)?
            .sub(&a0.lgamma()?)?
            .sub(&a0.rsub(k)?.mul(&a0.digamma()?)?)?
            .sub(&c.sub(1.0)?.mul(&c.digamma()?)?.sum(-1isize, false)?)
    }
    fn mean(&self) -> Result<Tensor> {
        self.concentration.div(&self.concentration.sum(-1isize, true)?)
    }
    fn mode(&self) -> Result<Tensor> {
        let c = &self.concentration;
        let k = c.dims()[c.rank() - 1] as i64;
        let concm1 = c.sub(1.0)?.clamp_min(0.0)?;
        let mode = concm1.div(&concm1.sum(-1isize, true)?)?;
        let mask = super::all_last(&c.lt(1.0)?)?.unsqueeze(-1)?;
        let one_hot = mode.argmax(Some(-1), false)?.one_hot(k)?.type_as(&mode)?;
        mask.where_self(&one_hot, &mode)
    }
    fn variance(&self) -> Result<Tensor> {
        let c = &self.concentration;
        let con0 = c.sum(-1isize, true)?;
        c.mul(&con0.sub(c)?)?.div(&con0.square()?.mul(&con0.add(1.0)?)?)
    }
}

/// The beta distribution with concentrations `concentration1` (α) and `concentration0` (β),
/// torch's `Beta`: a [`Dirichlet`] over `[α, β]` (whose `rsample` it selects from).
#[derive(Clone)]
pub struct Beta {
    /// α (broadcast with β).
    pub concentration1: Tensor,
    /// β (broadcast with α).
    pub concentration0: Tensor,
    /// The Dirichlet over `stack([α, β], -1)`.
    pub dirichlet: Dirichlet,
}

impl Beta {
    /// `Beta(concentration1, concentration0)`, validated by default.
    pub fn new(concentration1: &Tensor, concentration0: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration1, concentration0, None)
    }

    /// `Beta(concentration1, concentration0, validate_args=validate_args)`.
    pub fn with_validate_args(
        concentration1: &Tensor,
        concentration0: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[concentration1, concentration0])?;
        let validate = resolve_validate(validate_args);
        let stacked = Tensor::stack(&[&b[0], &b[1]], -1)?;
        let d = Beta {
            concentration1: b[0].clone(),
            concentration0: b[1].clone(),
            dirichlet: Dirichlet::with_validate_args(&stacked, Some(false))?,
        };
        if validate {
            check_params(
                "Beta",
                &d.params(),
                &[
                    ("concentration1", &d.concentration1, POSITIVE),
                    ("concentration0", &d.concentration0, POSITIVE),
                ],
            )?;
        }
        Ok(Beta { dirichlet: Dirichlet { validate, ..d.dirichlet }, ..d })
    }
}

impl Distribution for Beta {
    fn name(&self) -> &'static str {
        "Beta"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.concentration1.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("concentration1", self.concentration1.clone()), ("concentration0", self.concentration0.clone())]
    }
    fn support(&self) -> Constraint {
        UNIT_INTERVAL
    }
    fn validate_args(&self) -> bool {
        self.dirichlet.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.dirichlet.sample_with(sample_shape, generator)?.select(-1, 0)
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.dirichlet.rsample_with(sample_shape, generator)?.select(-1, 0)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let heads_tails = Tensor::stack(&[value, &value.rsub(1.0)?], -1)?;
        let d = Dirichlet { validate: false, ..self.dirichlet.clone() };
        d.log_prob(&heads_tails)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.dirichlet.entropy()
    }
    fn mean(&self) -> Result<Tensor> {
        self.concentration1.div(&self.concentration1.add(&self.concentration0)?)
    }
    fn mode(&self) -> Result<Tensor> {
        self.dirichlet.mode()?.select(-1, 0)
    }
    fn variance(&self) -> Result<Tensor> {
        let total = self.concentration1.add(&self.concentration0)?;
        self.concentration1.mul(&self.concentration0)?.div(&total.square()?.mul(&total.add(1.0)?)?)
    }
}
