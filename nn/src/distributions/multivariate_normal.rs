//! `torch.distributions.MultivariateNormal`.

use std::any::Any;
use std::f64::consts::PI;

use oxtorch_tensor::linalg::{cholesky, inv, solve_triangular};
use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{
    broadcast_shapes, check_params, like, resolve_validate, validate_sample, Constraint, Distribution,
};

/// The multivariate normal distribution (torch's `MultivariateNormal`), by exactly one of a
/// covariance matrix, a precision matrix or a lower-triangular `scale_tril`; everything is
/// computed from the Cholesky factor `L` (`Σ = L Lᵀ`), `rsample` is `loc + L eps`.
#[derive(Clone)]
pub struct MultivariateNormal {
    /// The mean, `batch_shape + [n]`.
    pub loc: Tensor,
    /// The Cholesky factor before broadcasting to the batch shape (torch's
    /// `_unbroadcasted_scale_tril`).
    pub unbroadcasted_scale_tril: Tensor,
    batch: Vec<usize>,
    given: (&'static str, Tensor),
    validate: bool,
}

/// `‖L⁻¹ x‖²` over the last dim of `x` (torch's `_batch_mahalanobis`).
pub(crate) fn batch_mahalanobis(l: &Tensor, x: &Tensor) -> Result<Tensor> {
    let sol = solve_triangular(l, &x.unsqueeze(-1)?, false, true, false)?;
    sol.squeeze_dim_copy(-1)?.square()?.sum(-1isize, false)
}

impl MultivariateNormal {
    /// `MultivariateNormal(loc, covariance_matrix=...)`, validated by default.
    pub fn from_covariance(loc: &Tensor, covariance_matrix: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, Some(covariance_matrix), None, None, None)
    }

    /// `MultivariateNormal(loc, precision_matrix=...)`, validated by default.
    pub fn from_precision(loc: &Tensor, precision_matrix: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, None, Some(precision_matrix), None, None)
    }

    /// `MultivariateNormal(loc, scale_tril=...)`, validated by default.
    pub fn from_scale_tril(loc: &Tensor, scale_tril: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, None, None, Some(scale_tril), None)
    }

    /// `MultivariateNormal(loc, covariance_matrix, precision_matrix, scale_tril, validate_args)`.
    pub fn with_validate_args(
        loc: &Tensor,
        covariance_matrix: Option<&Tensor>,
        precision_matrix: Option<&Tensor>,
        scale_tril: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        if loc.rank() < 1 {
            return Err(Error::msg("loc must be at least one-dimensional."));
        }
        let (name, m) =
            match (covariance_matrix, precision_matrix, scale_tril) {
                (Some(c), None, None) => ("covariance_matrix", c),
                (None, Some(p), None) => ("precision_matrix", p),
                (None, None, Some(l)) => ("scale_tril", l),
                _ => return Err(Error::msg(
                    "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.",
                )),
            };
        if m.rank() < 2 {
            return Err(Error::msg(format!(
                "{} must be at least two-dimensional, with optional leading batch dimensions",
                if name == "scale_tril" { "scale_tril matrix" } else { name }
            )));
        }
        let (md, ld) = (m.dims(), loc.dims());
        let batch = broadcast_shapes(&md[..md.len() - 2], &ld[..ld.len() - 1])?;
        let n = md[md.len() - 1];
        let mut mshape = batch.clone();
        mshape.extend([md[md.len() - 2], n]);
        let mut lshape = batch.clone();
        lshape.push(ld[ld.len() - 1]);
        let expanded = m.expand(mshape)?;
        let loc = loc.expand(lshape)?;
        let validate = resolve_validate(validate_args);
        let constraint =
            if name == "scale_tril" { Constraint::LowerCholesky } else { Constraint::PositiveDefinite };
        if validate {
            let params = vec![("loc", loc.clone()), (name, expanded.clone())];
            let real_vector = Constraint::Independent(Box::new(Constraint::Real), 1);
            check_params(
                "MultivariateNormal",
                &params,
                &[("loc", &loc, real_vector), (name, &expanded, constraint)],
            )?;
        }
        let l = match name {
            "scale_tril" => m.clone(),
            "covariance_matrix" => cholesky(m, false)?,
            _ => cholesky(&inv(m)?, false)?,
        };
        Ok(MultivariateNormal { loc, unbroadcasted_scale_tril: l, batch, given: (name, expanded), validate })
    }

    /// The size `n` of the event.
    fn n(&self) -> usize {
        self.loc.dims()[self.loc.rank() - 1]
    }

    /// The Cholesky factor broadcast to `batch_shape + [n, n]` (torch's `scale_tril`).
    pub fn scale_tril(&self) -> Result<Tensor> {
        let mut s = self.batch.clone();
        s.extend([self.n(), self.n()]);
        self.unbroadcasted_scale_tril.expand(s)
    }

    /// `L Lᵀ` broadcast to `batch_shape + [n, n]` (torch's `covariance_matrix`).
    pub fn covariance_matrix(&self) -> Result<Tensor> {
        let l = &self.unbroadcasted_scale_tril;
        let mut s = self.batch.clone();
        s.extend([self.n(), self.n()]);
        l.matmul(&l.transpose(-2, -1)?)?.expand(s)
    }
}

impl Distribution for MultivariateNormal {
    fn name(&self) -> &'static str {
        "MultivariateNormal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.batch.clone()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.n()]
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), (self.given.0, self.given.1.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Independent(Box::new(Constraint::Real), 1)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let eps = Tensor::randn_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        let mv = self.unbroadcasted_scale_tril.matmul(&eps.unsqueeze(-1)?)?.squeeze_dim_copy(-1)?;
        self.loc.add(&mv)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let diff = value.sub(&self.loc)?;
        let m = batch_mahalanobis(&self.unbroadcasted_scale_tril, &diff)?;
        let half_log_det = self.unbroadcasted_scale_tril.diagonal(0, -2, -1)?.log()?.sum(-1isize, false)?;
        m.add(self.n() as f64 * (2.0 * PI).ln())?.mul(-0.5)?.sub(&half_log_det)
    }
    fn entropy(&self) -> Result<Tensor> {
        let half_log_det = self.unbroadcasted_scale_tril.diagonal(0, -2, -1)?.log()?.sum(-1isize, false)?;
        let h = half_log_det.add(0.5 * self.n() as f64 * (1.0 + (2.0 * PI).ln()))?;
        if self.batch.is_empty() {
            Ok(h)
        } else {
            h.expand(self.batch.clone())
        }
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let mut s = self.batch.clone();
        s.push(self.n());
        self.unbroadcasted_scale_tril.square()?.sum(-1isize, false)?.expand(s)
    }
}
