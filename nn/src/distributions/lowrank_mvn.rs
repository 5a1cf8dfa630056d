//! `torch.distributions.LowRankMultivariateNormal`.

use std::any::Any;
use std::f64::consts::PI;

use oxtorch_tensor::linalg::{cholesky, solve_triangular};
use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::multivariate_normal::batch_mahalanobis;
use super::{
    broadcast_all, check_params, like, resolve_validate, torch_size, validate_sample, Constraint,
    Distribution, POSITIVE,
};

/// The multivariate normal distribution with covariance `W Wᵀ + diag(D)` for a low-rank
/// `cov_factor` `W` (`n × m`) and a positive `cov_diag` `D` (torch's
/// `LowRankMultivariateNormal`): `log_prob` and `entropy` go through the `m × m` capacitance
/// matrix `I + Wᵀ D⁻¹ W` (Woodbury identity and matrix determinant lemma), `rsample` is
/// `loc + W eps_W + sqrt(D) eps_D`.
#[derive(Clone)]
pub struct LowRankMultivariateNormal {
    /// The mean, `batch_shape + [n]`.
    pub loc: Tensor,
    /// The covariance factor broadcast to `batch_shape + [n, m]`.
    pub cov_factor: Tensor,
    /// The covariance diagonal broadcast to `batch_shape + [n]`.
    pub cov_diag: Tensor,
    unbroadcasted_cov_factor: Tensor,
    unbroadcasted_cov_diag: Tensor,
    capacitance_tril: Tensor,
    validate: bool,
}

/// `matmul(m, v.unsqueeze(-1)).squeeze(-1)` (torch's `_batch_mv`).
fn batch_mv(m: &Tensor, v: &Tensor) -> Result<Tensor> {
    m.matmul(&v.unsqueeze(-1)?)?.squeeze_dim_copy(-1)
}

/// `Wᵀ / D` (`Wᵀ D⁻¹`).
pub(crate) fn wt_dinv(w: &Tensor, d: &Tensor) -> Result<Tensor> {
    w.transpose(-2, -1)?.div(&d.unsqueeze(-2)?)
}

/// torch's `_batch_capacitance_tril`: the Cholesky factor of `I + Wᵀ D⁻¹ W`.
fn batch_capacitance_tril(w: &Tensor, d: &Tensor) -> Result<Tensor> {
    let m = w.dims()[w.rank() - 1];
    let k = wt_dinv(w, d)?.matmul(w)?.add(&Tensor::eye(m, None, like(w))?)?;
    cholesky(&k, false)
}

/// torch's `_batch_lowrank_logdet`: `log|W Wᵀ + D| = 2 Σ log diag(C) + Σ log D`.
pub(crate) fn batch_lowrank_logdet(d: &Tensor, capacitance_tril: &Tensor) -> Result<Tensor> {
    let c = capacitance_tril.diagonal(0, -2, -1)?.log()?.sum(-1isize, false)?.mul(2.0)?;
    c.add(&d.log()?.sum(-1isize, false)?)
}

/// torch's `_batch_lowrank_mahalanobis`: `xᵀ (W Wᵀ + D)⁻¹ x` by the Woodbury identity.
pub(crate) fn batch_lowrank_mahalanobis(
    w: &Tensor,
    d: &Tensor,
    x: &Tensor,
    capacitance_tril: &Tensor,
) -> Result<Tensor> {
    let wt_dinv_x = batch_mv(&wt_dinv(w, d)?, x)?;
    let term1 = x.square()?.div(d)?.sum(-1isize, false)?;
    let term2 = batch_mahalanobis(capacitance_tril, &wt_dinv_x)?;
    term1.sub(&term2)
}

impl LowRankMultivariateNormal {
    /// `LowRankMultivariateNormal(loc, cov_factor, cov_diag)`, validated by default.
    pub fn new(loc: &Tensor, cov_factor: &Tensor, cov_diag: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, cov_factor, cov_diag, None)
    }

    /// `LowRankMultivariateNormal(loc, cov_factor, cov_diag, validate_args=validate_args)`.
    pub fn with_validate_args(
        loc: &Tensor,
        cov_factor: &Tensor,
        cov_diag: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        if loc.rank() < 1 {
            return Err(Error::msg("loc must be at least one-dimensional."));
        }
        let n = loc.dims()[loc.rank() - 1];
        if cov_factor.rank() < 2 {
            return Err(Error::msg(
                "cov_factor must be at least two-dimensional, with optional leading batch dimensions",
            ));
        }
        if cov_factor.dims()[cov_factor.rank() - 2] != n {
            return Err(Error::msg(format!("cov_factor must be a batch of matrices with shape {n} x m")));
        }
        if cov_diag.rank() < 1 || cov_diag.dims()[cov_diag.rank() - 1] != n {
            return Err(Error::msg(format!(
                "cov_diag must be a batch of vectors with shape {}",
                torch_size(&[n])
            )));
        }
        let b =
            broadcast_all(&[&loc.unsqueeze(-1)?, cov_factor, &cov_diag.unsqueeze(-1)?]).map_err(|_| {
                Error::msg(format!(
                    "Incompatible batch shapes: loc {}, cov_factor {}, cov_diag {}",
                    torch_size(loc.dims()),
                    torch_size(cov_factor.dims()),
                    torch_size(cov_diag.dims())
                ))
            })?;
        let d = LowRankMultivariateNormal {
            loc: b[0].select(-1, 0)?,
            cov_factor: b[1].clone(),
            cov_diag: b[2].select(-1, 0)?,
            unbroadcasted_cov_factor: cov_factor.clone(),
            unbroadcasted_cov_diag: cov_diag.clone(),
            capacitance_tril: batch_capacitance_tril(cov_factor, cov_diag)?,
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            let real = |n| Constraint::Independent(Box::new(Constraint::Real), n);
            check_params(
                "LowRankMultivariateNormal",
                &d.params(),
                &[
                    ("loc", &d.loc, real(1)),
                    ("cov_factor", &d.cov_factor, real(2)),
                    ("cov_diag", &d.cov_diag, Constraint::Independent(Box::new(POSITIVE), 1)),
                ],
            )?;
        }
        Ok(d)
    }

    fn n(&self) -> usize {
        self.loc.dims()[self.loc.rank() - 1]
    }

    fn matrix_shape(&self) -> Vec<usize> {
        let mut s = self.batch_shape();
        s.extend([self.n(), self.n()]);
        s
    }

    /// `W Wᵀ + diag(D)` broadcast to `batch_shape + [n, n]` (torch's `covariance_matrix`).
    pub fn covariance_matrix(&self) -> Result<Tensor> {
        let w = &self.unbroadcasted_cov_factor;
        let c = w.matmul(&w.transpose(-2, -1)?)?.add(&self.unbroadcasted_cov_diag.diag_embed(0, -2, -1)?)?;
        c.expand(self.matrix_shape())
    }

    /// `D⁻¹ - Aᵀ A` with `A = C⁻¹ Wᵀ D⁻¹` (torch's `precision_matrix`).
    pub fn precision_matrix(&self) -> Result<Tensor> {
        let w_d = wt_dinv(&self.unbroadcasted_cov_factor, &self.unbroadcasted_cov_diag)?;
        let a = solve_triangular(&self.capacitance_tril, &w_d, false, true, false)?;
        let p = self
            .unbroadcasted_cov_diag
            .reciprocal()?
            .diag_embed(0, -2, -1)?
            .sub(&a.transpose(-2, -1)?.matmul(&a)?)?;
        p.expand(self.matrix_shape())
    }

    /// `sqrt(D) · cholesky(I + D^-½ W Wᵀ D^-½)` (torch's `scale_tril`).
    pub fn scale_tril(&self) -> Result<Tensor> {
        let n = self.n();
        let dsq = self.unbroadcasted_cov_diag.sqrt()?.unsqueeze(-1)?;
        let dw = self.unbroadcasted_cov_factor.div(&dsq)?;
        let k = dw.matmul(&dw.transpose(-2, -1)?)?.add(&Tensor::eye(n, None, like(&dw))?)?;
        dsq.mul(&cholesky(&k, false)?)?.expand(self.matrix_shape())
    }
}

impl Distribution for LowRankMultivariateNormal {
    fn name(&self) -> &'static str {
        "LowRankMultivariateNormal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.loc.dims()[..self.loc.rank() - 1].to_vec()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.n()]
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![
            ("loc", self.loc.clone()),
            ("cov_factor", self.cov_factor.clone()),
            ("cov_diag", self.cov_diag.clone()),
        ]
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
        let shape = self.extended_shape(sample_shape);
        let mut w_shape = shape[..shape.len() - 1].to_vec();
        w_shape.push(self.cov_factor.dims()[self.cov_factor.rank() - 1]);
        let eps_w = Tensor::randn_with(w_shape, like(&self.loc), generator)?;
        let eps_d = Tensor::randn_with(shape, like(&self.loc), generator)?;
        self.loc
            .add(&batch_mv(&self.unbroadcasted_cov_factor, &eps_w)?)?
            .add(&self.unbroadcasted_cov_diag.sqrt()?.mul(&eps_d)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let diff = value.sub(&self.loc)?;
        let (w, d, c) =
            (&self.unbroadcasted_cov_factor, &self.unbroadcasted_cov_diag, &self.capacitance_tril);
        let m = batch_lowrank_mahalanobis(w, d, &diff, c)?;
        let log_det = batch_lowrank_logdet(d, c)?;
        m.add(&log_det)?.add(self.n() as f64 * (2.0 * PI).ln())?.mul(-0.5)
    }
    fn entropy(&self) -> Result<Tensor> {
        let log_det = batch_lowrank_logdet(&self.unbroadcasted_cov_diag, &self.capacitance_tril)?;
        let h = log_det.add(self.n() as f64 * (1.0 + (2.0 * PI).ln()))?.mul(0.5)?;
        let batch = self.batch_shape();
        if batch.is_empty() {
            Ok(h)
        } else {
            h.expand(batch)
        }
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let v =
            self.unbroadcasted_cov_factor.square()?.sum(-1isize, false)?.add(&self.unbroadcasted_cov_diag)?;
        v.expand(self.loc.dims().to_vec())
    }
}

/// The pieces `kl.rs` needs: `(W, D, capacitance_tril)` before broadcasting.
impl LowRankMultivariateNormal {
    pub(crate) fn unbroadcasted(&self) -> (&Tensor, &Tensor, &Tensor) {
        (&self.unbroadcasted_cov_factor, &self.unbroadcasted_cov_diag, &self.capacitance_tril)
    }
}
