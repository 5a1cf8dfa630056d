//! Ops on the binary representation of floats: `frexp` (mantissa and exponent) and `nextafter`
//! (the next representable value), computed exactly on the host from the dtype's own bits, with
//! torch's values at 0, ±inf, NaN and subnormals, and torch's gradients (derivatives.yaml).

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{bf16, f16, DType, Error, Result, ResultTypeState};

use crate::autograd::{Function, FunctionCtx};
use crate::create::from_cpu;
use crate::ops::elementwise::prepare_pair;
use crate::ops::Operand;
use crate::Tensor;

/// `x = m · 2^e` with `0.5 <= |m| < 1` (C's `frexp`, exact for every finite f64, subnormals
/// included); 0, ±inf and NaN give themselves with exponent 0 (glibc's values, torch's).
fn frexp_f64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // A subnormal: scale it into the normal range first (2^64 is exact).
        let (m, e) = frexp_f64(x * 18_446_744_073_709_551_616.0);
        return (m, e - 64);
    }
    // Keep the sign and fraction, set the biased exponent to 1022 (a value in [0.5, 1)).
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, biased - 1022)
}

/// The next value after `x` toward `y` in a float format whose bit patterns `to_bits`/`from_bits`
/// convert (`x` and `y` exactly representable in it): `y` when equal (so `-0 → +0` gives `+0`),
/// the smallest subnormal with `y`'s sign after a zero, NaN when either is NaN (c10's and
/// C's `nextafter`).
fn next_after(x: f64, y: f64, to_bits: impl Fn(f64) -> u64, from_bits: impl Fn(u64) -> f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        let tiny = from_bits(1);
        return if y > 0.0 { tiny } else { -tiny };
    }
    let b = to_bits(x);
    // The magnitude grows when moving away from zero.
    let away = (y > x) == (x > 0.0);
    from_bits(if away { b + 1 } else { b - 1 })
}

/// [`next_after`] elementwise in `dtype`'s format.
fn next_after_all(x: &[f64], y: &[f64], dtype: DType) -> Result<Vec<f64>> {
    let pairs = x.iter().zip(y);
    Ok(match dtype {
        DType::F64 => pairs.map(|(&a, &b)| next_after(a, b, f64::to_bits, f64::from_bits)).collect(),
        DType::F32 => pairs
            .map(|(&a, &b)| {
                next_after(a, b, |v| (v as f32).to_bits() as u64, |u| f32::from_bits(u as u32) as f64)
            })
            .collect(),
        DType::F16 => pairs
            .map(|(&a, &b)| {
                next_after(a, b, |v| f16::from_f64(v).to_bits() as u64, |u| f16::from_bits(u as u16).to_f64())
            })
            .collect(),
        DType::BF16 => pairs
            .map(|(&a, &b)| {
                next_after(
                    a,
                    b,
                    |v| bf16::from_f64(v).to_bits() as u64,
                    |u| bf16::from_bits(u as u16).to_f64(),
                )
            })
            .collect(),
        d => return Err(Error::UnsupportedDType { op: "nextafter_cpu", dtype: d }),
    })
}

/// `values` (exact in `dtype`) as a tensor of `shape`, `dtype` and `device` like `like`.
fn upload(values: Vec<f64>, like: &Tensor, dtype: DType) -> Result<Tensor> {
    from_cpu(CpuStorage::from_vec(values), like.dims(), like.device())?.to_dtype(dtype)
}

impl Tensor {
    /// Splits each element into a mantissa and an exponent, `self = mantissa · 2^exponent` with
    /// `0.5 <= |mantissa| < 1` (torch's `frexp`): the mantissa has this tensor's dtype, the
    /// exponent is int32. 0 (with its sign), ±inf and NaN give themselves with exponent 0;
    /// subnormals are exact. Float dtypes only. The mantissa's gradient is `grad / 2^exponent`
    /// (torch's formula, with 2^exponent in float32 as torch computes it).
    pub fn frexp(&self) -> Result<(Tensor, Tensor)> {
        if !self.is_floating_point() {
            return Err(Error::msg("torch.frexp() only supports floating-point dtypes"));
        }
        let mut outs = Frexp.apply(std::slice::from_ref(self))?;
        let exponent = outs.pop().ok_or_else(|| Error::msg("frexp: missing exponent"))?;
        let mantissa = outs.pop().ok_or_else(|| Error::msg("frexp: missing mantissa"))?;
        Ok((mantissa, exponent))
    }

    /// The next representable value after each element of `self` toward `other` (torch's
    /// `nextafter`), in the promoted float dtype of the two (f16 and bf16 step in their own
    /// formats); the operands broadcast. Integer and bool results are refused as torch's
    /// `"nextafter_cpu" not implemented` error. Gradient: `grad` to `self` where `self != other`,
    /// zero to `other` (torch's formula).
    pub fn nextafter(&self, other: &Tensor) -> Result<Tensor> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(other.dtype(), other.rank())
            .result();
        if !dtype.is_float() {
            return Err(Error::UnsupportedDType { op: "nextafter_cpu", dtype });
        }
        let (x, y) = prepare_pair(self, &Operand::from(other), dtype)?;
        Ok(NextAfter.apply(&[x, y])?.remove(0))
    }

    /// In-place [`Tensor::nextafter`] (torch's `nextafter_`): computed in the promoted dtype and
    /// rounded into `self`'s.
    pub fn nextafter_(&self, other: &Tensor) -> Result<&Tensor> {
        self.apply_(&[other], |x| x.nextafter(other))
    }
}

/// frexp's two outputs from the host values; the exponent is not differentiable.
struct Frexp;

impl Function for Frexp {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = &inputs[0];
        let (m, e): (Vec<f64>, Vec<i32>) = x.to_f64_vec()?.into_iter().map(frexp_f64).unzip();
        let mantissa = upload(m, x, x.dtype())?;
        let exponent = from_cpu(CpuStorage::from_vec(e), x.dims(), x.device())?;
        ctx.save_for_backward(&[&exponent]);
        ctx.mark_non_differentiable(&[&exponent]);
        Ok(vec![mantissa, exponent])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let exponent = &ctx.saved_tensors()?[0];
        let g = &grads[0];
        // torch: `grad / exponent.exp2()`, the int32 exponent's exp2 being float32.
        let scale = exponent.to_dtype(DType::F32)?.exp2()?;
        Ok(vec![Some(g.div(&scale)?.to_dtype(g.dtype())?)])
    }

    fn name(&self) -> &'static str {
        "FrexpBackward0"
    }
}

/// nextafter on two operands of one shape and dtype.
struct NextAfter;

impl Function for NextAfter {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        ctx.save_for_backward(&[x, y]);
        let values = next_after_all(&x.to_f64_vec()?, &y.to_f64_vec()?, x.dtype())?;
        Ok(vec![upload(values, x, x.dtype())?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (x, y) = (&saved[0], &saved[1]);
        let gx = Tensor::where_cond(&x.ne(y)?, &grads[0], 0.0)?;
        Ok(vec![Some(gx), Some(y.zeros_like()?)])
    }

    fn name(&self) -> &'static str {
        "NextafterBackward0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frexp_of_edges() {
        assert_eq!(frexp_f64(1.0), (0.5, 1));
        assert_eq!(frexp_f64(-3.0), (-0.75, 2));
        assert_eq!(frexp_f64(f64::from_bits(1)), (0.5, -1073));
        assert_eq!(frexp_f64(f64::MAX).1, 1024);
        let (m, e) = frexp_f64(-0.0);
        assert!(m == 0.0 && m.is_sign_negative() && e == 0);
        assert_eq!(frexp_f64(f64::NEG_INFINITY), (f64::NEG_INFINITY, 0));
        assert!(frexp_f64(f64::NAN).0.is_nan());
    }

    #[test]
    fn next_after_steps_one_ulp() {
        let f = |a: f64, b: f64| next_after(a, b, f64::to_bits, f64::from_bits);
        assert_eq!(f(1.0, 2.0), 1.0 + f64::EPSILON);
        assert_eq!(f(1.0, 0.0), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(f(0.0, -1.0), -f64::from_bits(1));
        assert_eq!(f(f64::INFINITY, 0.0), f64::MAX);
        assert_eq!(f(f64::MAX, f64::INFINITY), f64::INFINITY);
        assert!(f(-0.0, 0.0) == 0.0 && f(-0.0, 0.0).is_sign_positive());
        assert_eq!(f(-1.0, -2.0), -1.0 - f64::EPSILON);
    }
}
