//! Ops on pairs of tensors or of rows: dist, cdist, logaddexp/logaddexp2, linalg_cross/cross,
//! cov and corrcoef.

use oxtorch_core::{broadcast_shapes, wrap_dim, DType, Error, Result, ResultTypeState};

use crate::{Operand, Tensor};

/// torch's message for a second operand whose dtype differs from the first's in a kernel that
/// reads both as one type.
fn dtype_mismatch(expected: DType, found: DType) -> Error {
    Error::msg(format!(
        "expected scalar type {} but found {}",
        expected.scalar_type_name(),
        found.scalar_type_name()
    ))
}

/// Zeros of `shape` and `x1`'s dtype that, as torch's empty `cdist`, are part of the graph when an
/// input requires grad (their gradients are zeros): an empty sum of each input is added in.
fn connected_zeros(shape: Vec<usize>, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
    let zeros = Tensor::zeros(shape, x1.same_options())?;
    let recorded = (x1.requires_grad() || x2.requires_grad()) && crate::autograd::is_recording();
    if !recorded {
        return Ok(zeros);
    }
    let none_of = |t: &Tensor| -> Result<Tensor> { t.reshape([-1])?.narrow(0, 0, 0)?.sum_all() };
    zeros.add(&none_of(x1)?)?.add(&none_of(x2)?)
}

impl Tensor {
    /// `torch.dist(self, other, p)`: the `p`-norm of `self - other` (broadcast), for any `p`
    /// (0 counts the non-zero differences, ±inf takes the largest/smallest magnitude; a negative
    /// or infinite `p` has no value for empty inputs). Float results only.
    pub fn dist(&self, other: &Tensor, p: f64) -> Result<Tensor> {
        let diff = self.sub(other)?;
        if !diff.dtype().is_float() {
            return Err(Error::msg(format!(
                "norm(): input dtype should be either floating point or complex. Got {} instead.",
                diff.dtype().scalar_type_name()
            )));
        }
        if diff.numel() == 0 && (p < 0.0 || p == f64::INFINITY) {
            return Err(Error::msg(format!(
                "linalg.vector_norm cannot compute the {p} norm on an empty tensor because the operation does not have an identity"
            )));
        }
        let out = diff.norm(p, Vec::<isize>::new(), false)?;
        Ok(self.named(out, "DistBackward0"))
    }

    /// `torch.cdist(self, x2, p)`: the `p`-norm distance between each row of `self` (`[.., P, M]`)
    /// and each row of `x2` (`[.., R, M]`), batch dims broadcast, giving `[.., P, R]`; `p >= 0`
    /// (0 counts differing coordinates, inf takes the largest). f32/f64 inputs of one dtype.
    ///
    /// Always computed directly as `norm(x1_i - x2_j, p)` (torch's
    /// `compute_mode="donot_use_mm_for_euclid_dist"`); torch's default switches to the less
    /// accurate matmul formula for `p = 2` when `P > 25` or `R > 25`, which differs from this in
    /// the last digits. The `[.., P, R, M]` differences are materialised. Gradients as torch's,
    /// except that with `p = inf` every tied largest coordinate gets a share where torch gives
    /// each the whole gradient, and `p = 0` records none (its gradient is zero).
    pub fn cdist(&self, x2: &Tensor, p: f64) -> Result<Tensor> {
        let x1 = self;
        for (name, t) in [("X1", x1), ("X2", x2)] {
            if t.rank() < 2 {
                return Err(Error::msg(format!(
                    "cdist only supports at least 2D tensors, {name} got: {}D",
                    t.rank()
                )));
            }
        }
        let (r1, r2) = (x1.rank(), x2.rank());
        let (c1, c2) = (x1.dims()[r1 - 1], x2.dims()[r2 - 1]);
        if c1 != c2 {
            return Err(Error::msg(format!(
                "X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"
            )));
        }
        for (name, t) in [("X1", x1), ("X2", x2)] {
            if !t.dtype().is_float() {
                return Err(Error::msg(format!(
                    "cdist only supports floating-point dtypes, {name} got: {}",
                    t.dtype().scalar_type_name()
                )));
            }
        }
        if p.is_nan() || p < 0.0 {
            return Err(Error::msg("cdist only supports non-negative p values"));
        }
        let (p1, p2) = (x1.dims()[r1 - 2], x2.dims()[r2 - 2]);
        let batch = broadcast_shapes(&x1.dims()[..r1 - 2], &x2.dims()[..r2 - 2])?;
        let mut out_shape = batch.clone();
        out_shape.extend([p1, p2]);
        if p1 == 0 || p2 == 0 || c1 == 0 || batch.contains(&0) {
            return connected_zeros(out_shape, x1, x2);
        }
        if matches!(x1.dtype(), DType::F16 | DType::BF16) {
            return Err(Error::UnsupportedDType { op: "cdist", dtype: x1.dtype() });
        }
        if x2.dtype() != x1.dtype() {
            return Err(dtype_mismatch(x1.dtype(), x2.dtype()));
        }
        let expanded = |t: &Tensor, rows: usize| {
            let mut shape = batch.clone();
            shape.extend([rows, c1]);
            t.broadcast_to(&shape)
        };
        let a = expanded(x1, p1)?.unsqueeze(-2)?;
        let b = expanded(x2, p2)?.unsqueeze(-3)?;
        let out = a.sub(&b)?.norm(p, [-1], false)?;
        Ok(self.named(out, "CdistBackward0"))
    }

    /// `log(exp(self) + exp(other))` (torch's `logaddexp`), computed stably as
    /// `max + log1p(exp(min - max))`; equal infinities give themselves (`-inf` with `-inf` is
    /// `-inf`). Both operands broadcast and promote; the result must be a float dtype
    /// (f16/bf16 compute in f32).
    pub fn logaddexp(&self, other: &Tensor) -> Result<Tensor> {
        self.log_add_exp(other, false)
    }

    /// `log2(2^self + 2^other)` (torch's `logaddexp2`), computed stably as
    /// `max + log1p(2^(min - max)) / ln 2`, with the conventions of [`Tensor::logaddexp`].
    pub fn logaddexp2(&self, other: &Tensor) -> Result<Tensor> {
        self.log_add_exp(other, true)
    }

    /// torch's reference `logaddexp`/`logaddexp2` (`base2`): the larger operand plus the
    /// correction from the smaller, equal infinities passed through.
    fn log_add_exp(&self, other: &Tensor, base2: bool) -> Result<Tensor> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(other.dtype(), other.rank())
            .result();
        if !dtype.is_float() {
            let op = if base2 { "logaddexp2_cpu" } else { "logaddexp_cpu" };
            return Err(Error::UnsupportedDType { op, dtype });
        }
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        let (a, b) = (self.to_dtype(acc)?, other.to_dtype(acc)?);
        let a_larger = a.ge(&b)?;
        let max = Tensor::where_cond(&a_larger, &a, &b)?;
        let min = Tensor::where_cond(&a_larger, &b, &a)?;
        let same_inf = a.isinf()?.logical_and(&a.eq(&b)?)?;
        let gap = min.sub(&max)?;
        let sum = if base2 {
            max.add(gap.exp2()?.log1p()?.mul(1.0 / std::f64::consts::LN_2)?)?
        } else {
            max.add(gap.exp()?.log1p()?)?
        };
        let out = Tensor::where_cond(&same_inf, &a, &sum)?.to_dtype(dtype)?;
        Ok(self.named(out, if base2 { "Logaddexp2Backward0" } else { "LogaddexpBackward0" }))
    }

    /// `torch.linalg.cross(self, other, dim)`: the cross product of the 3-vectors along `dim`
    /// (size 3 in both), the other dims broadcast. Both operands must have one rank and one dtype
    /// (not bool).
    pub fn linalg_cross(&self, other: &Tensor, dim: isize) -> Result<Tensor> {
        if self.rank() != other.rank() {
            return Err(Error::msg("linalg.cross: inputs must have the same number of dimensions."));
        }
        if self.rank() == 0 {
            return Err(Error::msg(format!("Dimension specified as {dim} but tensor has no dimensions")));
        }
        let (sa, sb) = (self.size(dim)?, other.size(dim)?);
        if sa != 3 || sb != 3 {
            return Err(Error::msg(format!(
                "linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}"
            )));
        }
        if other.dtype() != self.dtype() {
            return Err(dtype_mismatch(self.dtype(), other.dtype()));
        }
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType { op: "cross", dtype: DType::Bool });
        }
        let shape = broadcast_shapes(self.dims(), other.dims())?;
        let (a, b) = (self.broadcast_to(&shape)?, other.broadcast_to(&shape)?);
        let d = wrap_dim(dim, shape.len())? as isize;
        let parts = |t: &Tensor| -> Result<[Tensor; 3]> {
            Ok([t.narrow(d, 0, 1)?, t.narrow(d, 1, 1)?, t.narrow(d, 2, 1)?])
        };
        let ([a0, a1, a2], [b0, b1, b2]) = (parts(&a)?, parts(&b)?);
        let c0 = a1.mul(&b2)?.sub(&a2.mul(&b1)?)?;
        let c1 = a2.mul(&b0)?.sub(&a0.mul(&b2)?)?;
        let c2 = a0.mul(&b1)?.sub(&a1.mul(&b0)?)?;
        let out = Tensor::cat(&[&c0, &c1, &c2], d)?;
        Ok(self.named(out, "LinalgCrossBackward0"))
    }

    /// `torch.cross(self, other, dim)`: [`Tensor::linalg_cross`] along `dim`, or (`None`, torch's
    /// deprecated default) along the first dim of `self` of size 3.
    pub fn cross(&self, other: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        let dim = match dim {
            Some(d) => d,
            None => self
                .dims()
                .iter()
                .position(|&s| s == 3)
                .ok_or_else(|| Error::msg("no dimension of size 3 in input"))? as isize,
        };
        self.linalg_cross(other, dim)
    }

    /// `torch.cov(self, correction, fweights, aweights)`: the covariance matrix of the variables in
    /// the rows of `self` (a 1-d input is one variable; at most 2-d), observations in the columns,
    /// optionally weighted by integer frequencies `fweights` and float importance weights
    /// `aweights` (1-d, one per observation, non-negative). The sum of squares is divided by
    /// `w_sum - correction` (`w_sum - correction * sum(w * aweights) / w_sum` with `aweights`), and
    /// by zero when that is not positive (torch warns; the result is inf or NaN). Size-1 dims of
    /// the result are squeezed (one variable gives a 0-d variance). Integer inputs give the default
    /// float dtype; bool is refused.
    pub fn cov(
        &self,
        correction: i64,
        fweights: Option<&Tensor>,
        aweights: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.rank() > 2 {
            return Err(Error::msg(format!(
                "cov(): expected input to have two or fewer dimensions but got an input with {} dimensions",
                self.rank()
            )));
        }
        if self.dtype() == DType::Bool {
            return Err(Error::msg("cov(): bool dtype is not supported for input"));
        }
        let input = if self.rank() < 2 { self.reshape([1, -1])? } else { self.clone() };
        let observations = input.dims()[1];
        let check_weights = |w: &Tensor, which: &str, kind_ok: bool, kind: &str| -> Result<()> {
            if w.rank() > 1 {
                return Err(Error::msg(format!(
                    "cov(): expected {which} to have one or fewer dimensions but got {which} with {} dimensions",
                    w.rank()
                )));
            }
            if !kind_ok {
                return Err(Error::msg(format!(
                    "cov(): expected {which} to have {kind} dtype but got {which} with {} dtype",
                    w.dtype().scalar_type_name()
                )));
            }
            if w.numel() != observations {
                return Err(Error::msg(format!(
                    "cov(): expected {which} to have the same numel as there are observations in the input but got {} != {observations}",
                    w.numel()
                )));
            }
            if observations > 0 && !w.amin(Vec::<isize>::new(), false)?.ge(0)?.item::<bool>()? {
                return Err(Error::msg(format!("cov(): {which} cannot be negative")));
            }
            Ok(())
        };
        let mut w: Option<Tensor> = None;
        if let Some(fw) = fweights {
            check_weights(fw, "fweights", fw.dtype().is_int(), "integral")?;
            w = Some(fw.clone());
        }
        if let Some(aw) = aweights {
            check_weights(aw, "aweights", aw.dtype().is_float(), "floating point")?;
            w = Some(match w {
                Some(fw) => fw.mul(aw)?,
                None => aw.clone(),
            });
        }
        let w_sum = match &w {
            Some(w) => w.sum_all()?,
            None => Tensor::scalar_tensor(observations as i64, (DType::I64, self.device()))?,
        };
        if w.is_some() && !w_sum.ne(0)?.item::<bool>()? {
            return Err(Error::msg("cov(): weights sum to zero, can't be normalized"));
        }
        let weighted = |t: &Tensor| match &w {
            Some(w) => t.mul(w),
            None => Ok(t.clone()),
        };
        let avg = weighted(&input)?.sum([1], false)?.div(&w_sum)?;
        let norm_factor = match (&w, aweights) {
            (Some(w), Some(aw)) if correction != 0 => {
                w_sum.sub(&w.mul(aw)?.sum_all()?.mul(correction)?.div(&w_sum)?)?
            }
            _ => w_sum.sub(correction)?,
        };
        // torch warns that the degrees of freedom are <= 0 and divides by zero.
        let norm_factor =
            if norm_factor.le(0)?.item::<bool>()? { norm_factor.zeros_like()? } else { norm_factor };
        let centered = input.sub(&avg.unsqueeze(1)?)?;
        let c = centered.mm(&weighted(&centered)?.t()?)?;
        c.div(&norm_factor)?.squeeze()
    }

    /// `torch.corrcoef(self)`: Pearson's correlation coefficients of the variables in the rows of
    /// `self` ([`Tensor::cov`] normalised by the standard deviations, clipped to `[-1, 1]`); one
    /// variable gives `c / c` (1, or NaN for a constant one).
    pub fn corrcoef(&self) -> Result<Tensor> {
        if self.rank() > 2 {
            return Err(Error::msg(format!(
                "corrcoef(): expected input to have two or fewer dimensions but got an input with {} dimensions",
                self.rank()
            )));
        }
        let c = self.cov(1, None, None)?;
        if c.rank() == 0 {
            return c.div(&c);
        }
        let stddev = c.diagonal(0, 0, 1)?.sqrt()?;
        let c = c.div(&stddev.reshape([-1, 1])?)?.div(&stddev.reshape([1, -1])?)?;
        c.clip(Some(Operand::from(-1)), Some(Operand::from(1)))
    }
}
