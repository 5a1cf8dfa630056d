//! `cauchy_`, `geometric_` and torch's `seed()` (reseeding the default generator from a
//! nondeterministic source).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{DType, Error, Result};

use super::{blocks, default_generator, gen_or_default, unit_f64, Generator};
use crate::create::from_cpu;
use crate::Tensor;

/// Reseeds the default generator from a nondeterministic source and returns the seed (torch's
/// `torch.seed()`, a 64-bit number as torch's CPU seed).
pub fn seed() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    let seed = hasher.finish();
    default_generator().manual_seed(seed);
    seed
}

/// A number as torch's messages print it (`nan`, `inf`, `-inf` for the non-finite ones).
fn python_number(v: f64) -> String {
    match v {
        v if v.is_nan() => "nan".to_string(),
        v if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.to_string(),
        v => v.to_string(),
    }
}

/// torch's C++ type name of a dtype, as its Cauchy error message prints it.
fn cpp_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::I64 => "long int",
        DType::I32 => "int",
        DType::I16 => "short int",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        DType::Bool => "bool",
        _ => "float",
    }
}

impl Tensor {
    /// Fills with draws from the Cauchy distribution (torch's `cauchy_(median, sigma)`):
    /// `median + sigma · tan(π (u - 1/2))`. Floating tensors only; `sigma > 0`.
    pub fn cauchy_(&self, median: f64, sigma: f64) -> Result<&Tensor> {
        self.cauchy_with_(median, sigma, None)
    }

    /// [`Tensor::cauchy_`] from `generator`.
    pub fn cauchy_with_(&self, median: f64, sigma: f64, generator: Option<&Generator>) -> Result<&Tensor> {
        if !self.is_floating_point() {
            return Err(Error::msg(format!(
                "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
                cpp_type_name(self.dtype())
            )));
        }
        if sigma.is_nan() || sigma <= 0.0 {
            return Err(Error::msg(format!(
                "cauchy_ expects sigma > 0.0, but found sigma={}",
                python_number(sigma)
            )));
        }
        let draws = blocks(gen_or_default(generator), self.numel(), |b, _| {
            median + sigma * (std::f64::consts::PI * (unit_f64(b[0], b[1]) - 0.5)).tan()
        });
        self.copy_(&from_cpu(CpuStorage::from_vec(draws), self.shape(), self.device())?)
    }

    /// Fills with draws from the geometric distribution of success probability `p` (torch's
    /// `geometric_(p)`): the number of Bernoulli trials up to the first success, `ceil(ln u /
    /// ln(1 - p))` (at least 1). Float and integer tensors; `p` in `(0, 1)`.
    pub fn geometric_(&self, p: f64) -> Result<&Tensor> {
        self.geometric_with_(p, None)
    }

    /// [`Tensor::geometric_`] from `generator`.
    pub fn geometric_with_(&self, p: f64, generator: Option<&Generator>) -> Result<&Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType { op: "geometric_cpu", dtype: self.dtype() });
        }
        if !(p > 0.0 && p < 1.0) {
            return Err(Error::msg(format!(
                "geometric_ expects p to be in (0, 1), but got p={}",
                python_number(p)
            )));
        }
        let denominator = (-p).ln_1p();
        let draws = blocks(gen_or_default(generator), self.numel(), |b, _| {
            let u = 1.0 - unit_f64(b[0], b[1]);
            (u.ln() / denominator).ceil().max(1.0)
        });
        let values = from_cpu(CpuStorage::from_vec(draws), self.shape(), self.device())?;
        self.copy_(&values.to_dtype(self.dtype())?)
    }
}
