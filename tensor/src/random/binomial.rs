//! `binomial`: one draw from `Binomial(count, prob)` per element, by torch's algorithms (inversion
//! by summed geometric waiting times below `count · min(p, 1 - p) = 10`, Hörmann's BTRS transformed
//! rejection from 10 on).
//!
//! As `poisson`, element `i` reserves block `start + i` of the stream and reads its sub-blocks
//! (Philox counter words 2 and 3), so the values do not depend on threads.

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{broadcast_shapes, DType, Error, Result};
use rayon::prelude::*;

use super::uniforms::Uniforms;
use super::{gen_or_default, Generator};
use crate::create::from_cpu;
use crate::Tensor;

/// torch's `stirling_approx_tail`: `ln(k!) - [(k + ½) ln(k + 1) - (k + 1) + ½ ln(2π)]`.
fn stirling_tail(k: f64) -> f64 {
    #[allow(clippy::excessive_precision)]
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    if k <= 9.0 {
        return TAIL[k as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

/// torch's `btrs` (Hörmann 1993) for `count · prob ≥ 10`, `prob ≤ ½`.
fn btrs(count: f64, prob: f64, u: &mut Uniforms) -> f64 {
    let stddev = (count * prob * (1.0 - prob)).sqrt();
    let b = 1.15 + 2.53 * stddev;
    let a = -0.0873 + 0.0248 * b + 0.01 * prob;
    let c = count * prob + 0.5;
    let v_r = 0.92 - 4.2 / b;
    let r = prob / (1.0 - prob);
    let alpha = (2.83 + 5.1 / b) * stddev;
    let m = ((count + 1.0) * prob).floor();
    loop {
        let uu = u.next() - 0.5;
        let v = u.next();
        let us = 0.5 - uu.abs();
        let k = ((2.0 * a / us + b) * uu + c).floor();
        if k < 0.0 || k > count {
            continue;
        }
        if us >= 0.07 && v <= v_r {
            return k;
        }
        let v = (v * alpha / (a / (us * us) + b)).ln();
        let upper = (m + 0.5) * ((m + 1.0) / (r * (count - m + 1.0))).ln()
            + (count + 1.0) * ((count - m + 1.0) / (count - k + 1.0)).ln()
            + (k + 0.5) * (r * (count - k + 1.0) / (k + 1.0)).ln()
            + stirling_tail(m)
            + stirling_tail(count - m)
            - stirling_tail(k)
            - stirling_tail(count - k);
        if v <= upper {
            return k;
        }
    }
}

/// torch's `binomial_inversion` for `count · prob < 10`: the number of geometric waiting times
/// that fit in `count` trials.
fn inversion(count: f64, prob: f64, u: &mut Uniforms) -> f64 {
    let logprob = (-prob).ln_1p();
    let mut geom_sum = 0.0;
    let mut num_geom = 0.0;
    loop {
        let geom = (u.next().ln() / logprob).ceil();
        geom_sum += geom;
        if geom_sum > count {
            return num_geom;
        }
        num_geom += 1.0;
    }
}

/// torch's `sample_binomial` for one element.
fn sample(count: f64, prob: f64, u: &mut Uniforms) -> f64 {
    if count <= 0.0 || prob <= 0.0 {
        0.0
    } else if prob >= 1.0 {
        count
    } else if prob.is_nan() || !count.is_finite() {
        // torch: NaN for a NaN probability; its loops never end for a NaN or infinite count.
        f64::NAN
    } else if prob <= 0.5 {
        if count * prob >= 10.0 {
            btrs(count, prob, u)
        } else {
            inversion(count, prob, u)
        }
    } else {
        let q = 1.0 - prob;
        if count * q >= 10.0 {
            count - btrs(count, q, u)
        } else {
            count - inversion(count, q, u)
        }
    }
}

impl Tensor {
    /// `torch.binomial(count, prob)`: one draw from `Binomial(count, prob)` per element of the
    /// broadcast of `count` (`self`) and `prob`, in `count`'s dtype (float32/float64; `prob` must
    /// have the same dtype). As torch's kernel, nothing is validated: `count ≤ 0` or `prob ≤ 0`
    /// draws 0, `prob ≥ 1` draws `count` (a non-integer count is returned as it is), a NaN
    /// `prob` draws NaN (and so does a NaN or infinite count, where torch never returns). The
    /// result is not differentiable.
    pub fn binomial(&self, prob: &Tensor) -> Result<Tensor> {
        self.binomial_with(prob, None)
    }

    /// [`Tensor::binomial`] from `generator`.
    pub fn binomial_with(&self, prob: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
        let dtype = self.dtype();
        if !dtype.is_float() {
            return Err(Error::msg(format!(
                "binomial only supports floating-point dtypes for count, got: {}",
                dtype.scalar_type_name()
            )));
        }
        if prob.dtype() != dtype {
            return Err(Error::msg(format!(
                "Found dtype {} but expected {}",
                prob.dtype().scalar_type_name(),
                dtype.scalar_type_name()
            )));
        }
        if matches!(dtype, DType::F16 | DType::BF16) {
            return Err(Error::UnsupportedDType { op: "binomial_cpu", dtype });
        }
        if prob.device() != self.device() {
            return Err(Error::msg(format!(
                "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                self.device(),
                prob.device()
            )));
        }
        let shape = broadcast_shapes(self.dims(), prob.dims())?;
        let counts = self.detach().broadcast_to(shape.as_slice())?.to_f64_vec()?;
        let probs = prob.detach().broadcast_to(shape.as_slice())?.to_f64_vec()?;
        let (seed, start) = gen_or_default(generator).reserve(counts.len() as u64);
        let draws: Vec<f64> = counts
            .par_iter()
            .zip(probs.par_iter())
            .with_min_len(1 << 12)
            .enumerate()
            .map(|(i, (&n, &p))| sample(n, p, &mut Uniforms::new(seed, start.wrapping_add(i as u64))))
            .collect();
        from_cpu(CpuStorage::from_vec(draws), shape, self.device())?.to_dtype(dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stirling_tail_is_continuous_at_the_table_end() {
        // The series at 9 agrees with the tabulated value to well below its own error.
        let kp1sq = 100.0f64;
        let series = (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / 10.0;
        assert!((series - stirling_tail(9.0)).abs() < 1e-9);
        assert!(stirling_tail(10.0) < stirling_tail(9.0));
    }
}
