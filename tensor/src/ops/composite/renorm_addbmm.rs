//! Composites over existing reductions and matmuls: renorm (cap the p-norm of each slice along a
//! dim), addbmm (a sum of batched matrix products added to self) and `bernoulli(input, p)` with a
//! fixed probability.

use oxtorch_core::{wrap_dim, DType, Error, Result, Scalar};

use crate::Tensor;

impl Tensor {
    /// `torch.renorm(self, p, dim, maxnorm)`: each slice `self.select(dim, i)` whose `p`-norm
    /// exceeds `maxnorm` is scaled by `maxnorm / (norm + 1e-7)`; the others are kept. Float
    /// tensors of at least 2 dims; `p > 0`, `maxnorm >= 0`. Half types compute in float32 and
    /// round once, as torch does. Differentiable through the norm.
    pub fn renorm(&self, p: f64, dim: isize, maxnorm: f64) -> Result<Tensor> {
        let d = wrap_dim(dim, self.rank())?;
        if p.is_nan() || p <= 0.0 {
            return Err(Error::msg("renorm: non-positive-norm not supported"));
        }
        if maxnorm.is_nan() || maxnorm < 0.0 {
            return Err(Error::msg(format!("renorm: expected maxnorm to be >= 0 but got {maxnorm}")));
        }
        if self.rank() < 2 {
            return Err(Error::msg(format!(
                "renorm: input needs at least 2 dimensions, got {} dimensions",
                self.rank()
            )));
        }
        if matches!(self.dtype(), DType::F16 | DType::BF16) {
            return self.to_dtype(DType::F32)?.renorm(p, dim, maxnorm)?.to_dtype(self.dtype());
        }
        let dims: Vec<isize> = (0..self.rank()).filter(|&k| k != d).map(|k| k as isize).collect();
        let norm = self.norm(p, dims, true)?;
        let scale = Tensor::full((), maxnorm, self.same_options())?;
        let factor = scale.div(&norm.add(1e-7)?)?;
        let factor = Tensor::where_cond(&norm.gt(maxnorm)?, &factor, Scalar::Float(1.0))?;
        self.mul(&factor)
    }

    /// In-place [`Tensor::renorm`] (torch's `renorm_`).
    pub fn renorm_(&self, p: f64, dim: isize, maxnorm: f64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.renorm(p, dim, maxnorm))
    }

    /// `torch.addbmm(self, batch1, batch2, beta, alpha)`: `beta · self + alpha · Σ_b batch1[b] @
    /// batch2[b]` for `batch1` `[b, n, m]` and `batch2` `[b, m, p]`; self broadcasts to `[n, p]`.
    /// Computed as one [`Tensor::addmm`] of `[n, b·m] @ [b·m, p]`, so beta = 0 ignores self's
    /// values (NaN included) and the dtype rules are addmm's.
    pub fn addbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        if batch1.rank() != 3 {
            return Err(Error::msg("batch1 must be a 3D tensor"));
        }
        if batch2.rank() != 3 {
            return Err(Error::msg("batch2 must be a 3D tensor"));
        }
        let (b1, b2) = (batch1.dims(), batch2.dims());
        if b1[0] != b2[0] {
            return Err(Error::msg(format!(
                "batch1 and batch2 must have same number of batches, got {} and {}",
                b1[0], b2[0]
            )));
        }
        if b1[2] != b2[1] {
            return Err(Error::shape(format!(
                "Incompatible matrix sizes for bmm ({}x{} and {}x{})",
                b1[1], b1[2], b2[1], b2[2]
            )));
        }
        let (b, n, m, p) = (b1[0], b1[1], b1[2], b2[2]);
        let mat1 = batch1.transpose(0, 1)?.reshape(vec![n, b * m])?;
        let mat2 = batch2.reshape(vec![b * m, p])?;
        self.addmm(&mat1, &mat2, beta, alpha)
    }

    /// In-place [`Tensor::addbmm`] (torch's `addbmm_`).
    pub fn addbmm_(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        self.apply_(&[batch1, batch2], |x| x.addbmm(batch1, batch2, beta, alpha))
    }

    /// `torch.bernoulli(self, p)`: a tensor of self's shape, dtype and device whose elements are
    /// 1 with probability `p` and 0 otherwise (self's values are ignored); `p` in `[0, 1]`. Not
    /// differentiable.
    pub fn bernoulli_p(&self, p: f64) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::msg(format!("bernoulli_ expects p to be in [0, 1], but got p={p}")));
        }
        let u = Tensor::rand(self.dims().to_vec(), (DType::F32, self.device()))?;
        u.lt(p)?.to_dtype(self.dtype())
    }
}
