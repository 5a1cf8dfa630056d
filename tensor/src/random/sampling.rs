//! Random permutations and draws from given distributions: `randperm`, `multinomial`,
//! `exponential_`, `random_`.

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{DType, Error, Result};

use super::{blocks, gen_or_default, unit_f64, Generator};
use crate::create::from_cpu;
use crate::options::TensorOptions;
use crate::{Operand, Tensor};

/// A uniform integer in `0..bound` from 64 random bits (the modulo bias is below 2^-40 for any
/// bound a tensor can have).
fn below(b: [u32; 4], bound: u64) -> u64 {
    (((b[0] as u64) << 32) | b[1] as u64) % bound
}

/// torch's limits on `randperm(n, dtype)`: every value `0..n` representable.
fn check_randperm_range(n: usize, dtype: DType) -> Result<()> {
    let digits = match dtype {
        DType::Bool => return Err(Error::UnsupportedDType { op: "randperm", dtype }),
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F32 => 24,
        DType::F64 => 53,
        _ => {
            let (name, max) = match dtype {
                DType::U8 => ("uint8_t", u8::MAX as i64),
                DType::I8 => ("int8_t", i8::MAX as i64),
                DType::I16 => ("int16_t", i16::MAX as i64),
                DType::I32 => ("int", i32::MAX as i64),
                _ => ("int64_t", i64::MAX),
            };
            if n as i64 - 1 > max {
                return Err(Error::msg(format!("value cannot be converted to type {name} without overflow")));
            }
            return Ok(());
        }
    };
    let limit = (1u64 << digits) + 1;
    if n as u64 > limit {
        return Err(Error::msg(format!(
            "n cannot be greater than {limit} for {} type.",
            dtype.scalar_type_name()
        )));
    }
    Ok(())
}

/// torch's `random_(from, to)` range check for integer and bool tensors: `from` and `to - 1` must be
/// values of the dtype (named as torch's C type).
fn check_random_range(dtype: DType, from: i64, to: i64) -> Result<()> {
    let (name, lo, hi) = match dtype {
        DType::Bool => ("bool", 0, 1),
        DType::U8 => ("unsigned char", 0, u8::MAX as i64),
        DType::I8 => ("signed char", i8::MIN as i64, i8::MAX as i64),
        DType::I16 => ("short", i16::MIN as i64, i16::MAX as i64),
        DType::I32 => ("int", i32::MIN as i64, i32::MAX as i64),
        _ => return Ok(()),
    };
    if !(lo..=hi).contains(&from) {
        return Err(Error::msg(format!("from is out of bounds for {name}")));
    }
    if !(lo..=hi).contains(&(to - 1)) {
        return Err(Error::msg(format!("to - 1 is out of bounds for {name}")));
    }
    Ok(())
}

impl Tensor {
    /// A random permutation of `0..n` (torch's `randperm`; int64 unless `opts` says otherwise).
    pub fn randperm(n: usize, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        Tensor::randperm_with(n, opts, None)
    }

    /// [`Tensor::randperm`] from `generator`: a Fisher–Yates shuffle.
    pub fn randperm_with(
        n: usize,
        opts: impl Into<TensorOptions>,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let opts = opts.into();
        let dtype = opts.dtype_or(DType::I64);
        check_randperm_range(n, dtype)?;
        crate::dispatch::check_allocatable(n.saturating_mul(16))?;
        let draws = blocks(gen_or_default(generator), n, |b, i| below(b, i as u64 + 1));
        let mut perm: Vec<i64> = (0..n as i64).collect();
        for i in (1..n).rev() {
            perm.swap(i, draws[i] as usize);
        }
        from_cpu(CpuStorage::from_vec(perm), [n], opts.device)?.to_dtype(dtype)
    }

    /// Indices drawn from the categorical distributions in the rows of this 1-D or 2-D tensor of
    /// non-negative weights (torch's `multinomial`): int64 of shape `[num_samples]` or
    /// `[rows, num_samples]`; without replacement each index appears at most once per row.
    pub fn multinomial(&self, num_samples: usize, replacement: bool) -> Result<Tensor> {
        self.multinomial_with(num_samples, replacement, None)
    }

    /// [`Tensor::multinomial`] from `generator`. With replacement each draw searches the row's
    /// cumulative weights; without, the row's `num_samples` largest `w / e` for exponential draws
    /// `e` are taken (the exponential race, as torch does).
    pub fn multinomial_with(
        &self,
        num_samples: usize,
        replacement: bool,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        if !matches!(self.rank(), 1 | 2) {
            return Err(Error::msg("prob_dist must be 1 or 2 dim"));
        }
        if !self.is_floating_point() {
            return Err(Error::msg(format!(
                "multinomial only supports floating-point dtypes for input, got: {}",
                self.dtype().scalar_type_name()
            )));
        }
        if num_samples == 0 {
            return Err(Error::msg("cannot sample n_sample <= 0 samples"));
        }
        let categories = *self.dims().last().unwrap_or(&0);
        if categories == 0 {
            return Err(Error::msg("invalid multinomial distribution (sum of probabilities <= 0)"));
        }
        if !replacement && num_samples > categories {
            return Err(Error::msg(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
            ));
        }
        if categories > 1 << 24 {
            return Err(Error::msg("number of categories cannot exceed 2^24"));
        }
        let weights = self.to_f64_vec()?;
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::msg("probability tensor contains either `inf`, `nan` or element < 0"));
        }
        let rows = weights.len().checked_div(categories).unwrap_or(0);
        let n_draws = rows.checked_mul(num_samples.max(categories)).ok_or_else(|| {
            Error::msg(format!("multinomial: {rows} rows of {num_samples} samples overflow"))
        })?;
        // (the draws, then the samples: 16 bytes a draw at most)
        crate::dispatch::check_allocatable(n_draws.saturating_mul(16))?;
        let draws = blocks(gen_or_default(generator), n_draws, |b, _| unit_f64(b[0], b[1]));
        let mut out = Vec::with_capacity(rows * num_samples);
        for (r, row) in weights.chunks(categories.max(1)).take(rows).enumerate() {
            let total: f64 = row.iter().sum();
            if total <= 0.0 {
                return Err(Error::msg("invalid multinomial distribution (sum of probabilities <= 0)"));
            }
            let u = &draws[r * num_samples.max(categories)..];
            if replacement {
                let mut cumulative = Vec::with_capacity(categories);
                let mut acc = 0.0;
                for w in row {
                    acc += w / total;
                    cumulative.push(acc);
                }
                for &draw in &u[..num_samples] {
                    // The first category whose cumulative weight exceeds the draw, skipping
                    // zero-weight categories at ties.
                    let k = cumulative.partition_point(|&c| c <= draw).min(categories - 1);
                    let k = (k..categories).find(|&j| row[j] > 0.0).unwrap_or(k);
                    out.push(k as i64);
                }
            } else {
                let mut keys: Vec<(f64, usize)> = row
                    .iter()
                    .enumerate()
                    .map(|(j, &w)| {
                        let e = -(1.0 - u[j]).ln();
                        (w / e, j)
                    })
                    .collect();
                // Zero-weight categories come last (torch takes them too when it must).
                keys.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                out.extend(keys[..num_samples].iter().map(|&(_, j)| j as i64));
            }
        }
        let shape: Vec<usize> =
            if self.rank() == 1 { vec![num_samples] } else { vec![self.dims()[0], num_samples] };
        from_cpu(CpuStorage::from_vec(out), shape, self.device())
    }

    /// Fills with draws from the exponential distribution of rate `lambd` (torch's
    /// `exponential_`): `-ln(1 - u) / lambd`.
    pub fn exponential_(&self, lambd: f64) -> Result<&Tensor> {
        self.exponential_with_(lambd, None)
    }

    /// [`Tensor::exponential_`] from `generator`.
    pub fn exponential_with_(&self, lambd: f64, generator: Option<&Generator>) -> Result<&Tensor> {
        if !self.is_floating_point() {
            return Err(Error::UnsupportedDType { op: "exponential", dtype: self.dtype() });
        }
        if lambd.is_nan() || lambd <= 0.0 {
            return Err(Error::msg(format!("exponential_ expects lambda > 0.0, but found lambda={lambd}")));
        }
        let draws = blocks(gen_or_default(generator), self.numel(), |b, _| {
            -(1.0 - unit_f64(b[0], b[1])).ln() / lambd
        });
        self.copy_(&from_cpu(CpuStorage::from_vec(draws), self.shape(), self.device())?)
    }

    /// Fills with integers drawn uniformly from `from..to` (torch's `random_(from, to)`), exactly
    /// representable in this tensor's dtype.
    pub fn random_(&self, from: i64, to: i64) -> Result<&Tensor> {
        self.random_with_(from, to, None)
    }

    /// [`Tensor::random_`] from `generator`.
    pub fn random_with_(&self, from: i64, to: i64, generator: Option<&Generator>) -> Result<&Tensor> {
        if from >= to {
            return Err(Error::msg(format!(
                "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
            )));
        }
        check_random_range(self.dtype(), from, to)?;
        let span = (to as i128 - from as i128) as u64;
        let draws =
            blocks(gen_or_default(generator), self.numel(), |b, _| from.wrapping_add(below(b, span) as i64));
        let values = from_cpu(CpuStorage::from_vec(draws), self.shape(), self.device())?;
        self.copy_(&values.to_dtype(self.dtype())?)
    }

    /// Draws from normal distributions with elementwise means and standard deviations (torch's
    /// `normal(mean, std)`): tensors broadcast, numbers fill in; at least one must be a tensor.
    /// The result is not differentiable (torch's gradient to `mean` and `std` is zero).
    pub fn normal(mean: impl Into<Operand>, std: impl Into<Operand>) -> Result<Tensor> {
        Tensor::normal_with(mean, std, None)
    }

    /// [`Tensor::normal`] from `generator`.
    pub fn normal_with(
        mean: impl Into<Operand>,
        std: impl Into<Operand>,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let (mean, std) = (mean.into(), std.into());
        let (shape, device, dtype) = match (&mean, &std) {
            // torch's result takes the mean's dtype.
            (Operand::Tensor(m), Operand::Tensor(s)) => {
                (oxtorch_core::broadcast_shapes(m.dims(), s.dims())?, m.device(), m.dtype())
            }
            (Operand::Tensor(t), Operand::Scalar(_)) | (Operand::Scalar(_), Operand::Tensor(t)) => {
                (t.dims().to_vec(), t.device(), t.dtype())
            }
            _ => return Err(Error::msg("normal: one of mean and std must be a tensor (use Tensor::randn)")),
        };
        if !dtype.is_float() {
            return Err(Error::UnsupportedDType { op: "normal_kernel_cpu", dtype });
        }
        if let Operand::Tensor(s) = &std {
            if s.ge(0.0)?.logical_not()?.any()?.item::<bool>()? {
                return Err(Error::msg("normal expects all elements of std >= 0.0"));
            }
        } else if let Operand::Scalar(s) = &std {
            if s.to_f64().is_nan() || s.to_f64() < 0.0 {
                return Err(Error::msg(format!("normal expects std >= 0.0, but found std {}", s.to_f64())));
            }
        }
        let z = Tensor::zeros(&shape[..], (dtype, device))?;
        z.normal_with_(0.0, 1.0, generator)?;
        let as_tensor = |o: &Operand| -> Result<Tensor> {
            match o {
                Operand::Tensor(t) => Ok(t.detach().to_dtype(dtype)?),
                Operand::Scalar(s) => Tensor::full(&shape[..], s.to_f64(), (dtype, device)),
            }
        };
        z.mul(&as_tensor(&std)?)?.add(&as_tensor(&mean)?)
    }

    /// Fills with `exp(N(mean, std))` draws (torch's `log_normal_`).
    pub fn log_normal_(&self, mean: f64, std: f64) -> Result<&Tensor> {
        if std.is_nan() || std <= 0.0 {
            return Err(Error::msg(format!("log_normal_ expects std > 0.0, but found std={std}")));
        }
        let z = self.zeros_like()?;
        z.normal_(mean, std)?;
        self.copy_(&z.exp()?)
    }

    /// Integers drawn uniformly from `low..high` with this tensor's shape, dtype and device
    /// (torch's `randint_like`).
    pub fn randint_like(&self, low: i64, high: i64) -> Result<Tensor> {
        let out = self.zeros_like()?;
        out.random_(low, high)?;
        Ok(out)
    }
}
