//! Pointwise ops composed from primitives, each with torch's values at its edges and torch's
//! gradient: NaN-ignoring extrema (fmax, fmin), `x·log(y)` that is 0 at `x = 0` (xlogy, xlog1py),
//! closeness tests (isclose, allclose), fused multiply/divide-adds (addcmul, addcdiv), heaviside,
//! signbit, float_power, sinc, entr, ndtr and mvlgamma.

use std::f64::consts::PI;

use oxtorch_core::ops::BinaryOp;
use oxtorch_core::{DType, Error, Result, ResultTypeState, Scalar};

use crate::autograd::{Function, FunctionCtx};
use crate::ops::elementwise::{binary_dtype, prepare_pair};
use crate::ops::Operand;
use crate::Tensor;

/// The dtype a float-computing op returns for `a` and `b` (integers promote to the default float),
/// and the dtype it computes in (f32 for half types, as torch's kernels do).
fn float_dtypes(a: &Tensor, b: &Operand) -> (DType, DType) {
    let dtype = binary_dtype(BinaryOp::Div, a, b);
    let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
    (dtype, acc)
}

impl Tensor {
    /// The elementwise maximum ignoring NaN (torch's `fmax`): NaN only where both are NaN. The
    /// gradient goes to `self` where `self >= other` or `other` is NaN, else to `other`.
    pub fn fmax(&self, other: &Tensor) -> Result<Tensor> {
        self.nan_ignoring_extremum(other, true)
    }

    /// The elementwise minimum ignoring NaN (torch's `fmin`), with [`Tensor::fmax`]'s conventions.
    pub fn fmin(&self, other: &Tensor) -> Result<Tensor> {
        self.nan_ignoring_extremum(other, false)
    }

    fn nan_ignoring_extremum(&self, other: &Tensor, max: bool) -> Result<Tensor> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(other.dtype(), other.rank())
            .result();
        let (a, b) = prepare_pair(self, &Operand::from(other), dtype)?;
        let f = if max {
            BinaryFn { value: fmax_value, grads: fmax_grads, name: "FmaxBackward0" }
        } else {
            BinaryFn { value: fmin_value, grads: fmin_grads, name: "FminBackward0" }
        };
        Ok(f.apply(&[a, b])?.remove(0))
    }

    /// `self · ln(other)`, 0 where `self` is 0 unless `other` is NaN (torch's `xlogy`); integers
    /// promote to the default float dtype.
    pub fn xlogy(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.x_log_y(other.into(), false)
    }

    /// `self · ln(1 + other)`, with [`Tensor::xlogy`]'s conventions (torch's `special.xlog1py`).
    pub fn xlog1py(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.x_log_y(other.into(), true)
    }

    /// xlogy/xlog1py in the computing dtype (f32 for half types), with torch's gradients.
    fn x_log_y(&self, other: Operand, log1p: bool) -> Result<Tensor> {
        let (dtype, acc) = float_dtypes(self, &other);
        let (x, y) = prepare_pair(self, &other, acc)?;
        let f = if log1p {
            BinaryFn { value: xlog1py_value, grads: xlog1py_grads, name: "SpecialXlog1PyBackward0" }
        } else {
            BinaryFn { value: xlogy_value, grads: xlogy_grads, name: "XlogyBackward0" }
        };
        f.apply(&[x, y])?.remove(0).to_dtype(dtype)
    }

    /// Elementwise `|self - other| <= atol + rtol · |other|`, with equal values (infinities
    /// included) close and NaNs close to each other when `equal_nan` (torch's `isclose`). Both
    /// tensors must have one dtype.
    pub fn isclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        if self.dtype() != other.dtype() {
            return Err(Error::msg(format!(
                "{} did not match {}",
                self.dtype().scalar_type_name(),
                other.dtype().scalar_type_name()
            )));
        }
        for (name, v) in [("rtol", rtol), ("atol", atol)] {
            if v.is_nan() || v < 0.0 {
                return Err(Error::msg(format!("{name} must be greater than or equal to zero, but got {v}")));
            }
        }
        let mut close = self.eq(other)?;
        if equal_nan && self.is_floating_point() {
            close = close.logical_or(&self.isnan()?.logical_and(&other.isnan()?)?)?;
        }
        if rtol == 0.0 && atol == 0.0 {
            return Ok(close);
        }
        // Integers and bool are compared in the default float dtype (no wrapping differences).
        let (a, b) = if !self.is_floating_point() {
            (self.to_dtype(DType::default_float())?, other.to_dtype(DType::default_float())?)
        } else {
            (self.clone(), other.clone())
        };
        let allowed = b.mul(rtol)?.abs()?.add(atol)?;
        let actual = a.sub(&b)?.abs()?;
        close.logical_or(&actual.isfinite()?.logical_and(&actual.le(&allowed)?)?)
    }

    /// True when every element is [`Tensor::isclose`] to `other`'s (torch's `allclose`); the
    /// shapes must broadcast.
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        self.isclose(other, rtol, atol, equal_nan)?.all()?.item::<bool>()
    }

    /// `self + value · tensor1 · tensor2` (torch's `addcmul`), in the promoted dtype of the three.
    pub fn addcmul(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        self.add_product(tensor1, tensor2, value.into(), false)
    }

    /// `self + value · tensor1 / tensor2` (torch's `addcdiv`); integer `tensor1` and `tensor2` are
    /// torch's error.
    pub fn addcdiv(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        if !tensor1.is_floating_point() && !tensor2.is_floating_point() {
            return Err(Error::msg(
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
            ));
        }
        self.add_product(tensor1, tensor2, value.into(), true)
    }

    /// torch's addcmul/addcdiv kernel: `self + (value · t1) ∘ t2` in the promoted dtype, f16/bf16
    /// in f32 with one rounding.
    fn add_product(&self, t1: &Tensor, t2: &Tensor, value: Scalar, divide: bool) -> Result<Tensor> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(t1.dtype(), t1.rank())
            .tensor(t2.dtype(), t2.rank())
            .result();
        // torch converts the value to the computing type: truncated for integers.
        let value = match value {
            Scalar::Float(v) if !dtype.is_float() => Scalar::Int(v.trunc() as i64),
            v => v,
        };
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        let scaled = t1.to_dtype(acc)?.mul(value)?;
        let t2 = t2.to_dtype(acc)?;
        let term = if divide { scaled.div(&t2)? } else { scaled.mul(&t2)? };
        term.add(&self.to_dtype(acc)?)?.to_dtype(dtype)
    }

    /// The Heaviside step (torch's `heaviside`): 0 below zero (and for NaN), 1 above, `values`
    /// at zero. Both tensors must have one dtype; not differentiable.
    pub fn heaviside(&self, values: &Tensor) -> Result<Tensor> {
        if self.dtype() != values.dtype() {
            return Err(Error::msg("heaviside is not yet implemented for tensors with different dtypes."));
        }
        let step = self.gt(0.0)?.to_dtype(self.dtype())?;
        Tensor::where_cond(&self.eq(0.0)?, values.detach(), &step)
    }

    /// True where the sign bit is set (torch's `signbit`): negative numbers, -0.0 and negative
    /// NaNs; false for bool.
    pub fn signbit(&self) -> Result<Tensor> {
        match self.dtype() {
            DType::Bool => self.zeros_like(),
            d if d.is_float() => self.ones_like()?.copysign(self)?.lt(0.0),
            _ => self.lt(0),
        }
    }

    /// `self ** exponent` in float64 (torch's `float_power`): both operands are cast to double.
    pub fn float_power(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let base = self.to_dtype(DType::F64)?;
        match exponent.into() {
            Operand::Tensor(e) => base.pow(&e.to_dtype(DType::F64)?),
            Operand::Scalar(s) => base.pow(Scalar::Float(s.to_f64())),
        }
    }

    /// The normalised sinc `sin(πx) / (πx)`, 1 at 0 (torch's `sinc`); integers promote to the
    /// default float dtype. The gradient at 0 is 0.
    pub fn sinc(&self) -> Result<Tensor> {
        // Half types compute in f32 and round once, as torch's kernel does.
        let x = self.as_float()?;
        let acc = if matches!(x.dtype(), DType::F16 | DType::BF16) { DType::F32 } else { x.dtype() };
        let f = PointwiseFn { value: sinc_value, derivative: sinc_derivative, name: "SincBackward0" };
        f.apply(&[x.to_dtype(acc)?])?.remove(0).to_dtype(x.dtype())
    }

    /// The entropy term `-x ln x` (torch's `special.entr`): 0 at 0, -∞ below, NaN for NaN, with
    /// torch's gradient `-(1 + ln x)`.
    pub fn entr(&self) -> Result<Tensor> {
        let f = PointwiseFn { value: entr_value, derivative: entr_derivative, name: "SpecialEntrBackward0" };
        Ok(f.apply(&[self.as_float()?])?.remove(0))
    }

    /// The standard normal CDF `(1 + erf(x / √2)) / 2` (torch's `special.ndtr`).
    pub fn ndtr(&self) -> Result<Tensor> {
        self.as_float()?.mul(std::f64::consts::FRAC_1_SQRT_2)?.erf()?.add(1.0)?.mul(0.5)
    }

    /// The log of the multivariate gamma function of dimension `p` (torch's `mvlgamma`):
    /// `p(p-1)/4 · ln π + Σ_{i<p} lgamma(x - i/2)`.
    pub fn mvlgamma(&self, p: i64) -> Result<Tensor> {
        if p < 1 {
            return Err(Error::msg("p has to be greater than or equal to 1"));
        }
        if self.dtype() == DType::Bool {
            return Err(Error::msg("The input tensor may not be a boolean tensor."));
        }
        let x = self.as_float()?;
        let offsets = Tensor::arange_step(-(p as f64 - 1.0) / 2.0, 0.5, 0.5, (x.dtype(), x.device()))?;
        let args = x.unsqueeze(-1)?.add(&offsets)?;
        args.lgamma()?.sum(-1, false)?.add((p * (p - 1)) as f64 * PI.ln() / 4.0)
    }

    /// This tensor, with integers and bool promoted to the default float dtype.
    fn as_float(&self) -> Result<Tensor> {
        if self.is_floating_point() {
            Ok(self.clone())
        } else {
            self.to_dtype(DType::default_float())
        }
    }
}

/// A unary op whose gradient is `g · derivative(x)` with torch's formula, for composites whose
/// chain rule through their pieces would give NaN where torch's formula gives a number.
struct PointwiseFn {
    value: fn(&Tensor) -> Result<Tensor>,
    derivative: fn(&Tensor) -> Result<Tensor>,
    name: &'static str,
}

impl Function for PointwiseFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        Ok(vec![(self.value)(&inputs[0])?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        Ok(vec![Some(grads[0].mul(&(self.derivative)(x)?)?)])
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

/// torch's sinc kernel: `sin(πx) / (πx)` with `πx` rounded in the input's dtype, 1 at 0.
fn sinc_value(x: &Tensor) -> Result<Tensor> {
    let product = x.mul(PI)?;
    Tensor::where_cond(&x.eq(0.0)?, 1.0, &product.sin()?.div(&product)?)
}

/// `(πx cos(πx) - sin(πx)) / (x² π)`, 0 where `x² π` is 0 (torch's `sinc_backward`: also for
/// tiny `x` whose square underflows).
fn sinc_derivative(x: &Tensor) -> Result<Tensor> {
    let product = x.mul(PI)?;
    let squared = x.mul(x)?.mul(PI)?;
    let d = product.mul(&product.cos()?)?.sub(&product.sin()?)?.div(&squared)?;
    Tensor::where_cond(&squared.eq(0.0)?, 0.0, &d)
}

/// `-x ln x` for `x > 0`, 0 at 0, -∞ below, NaN for NaN.
fn entr_value(x: &Tensor) -> Result<Tensor> {
    let positive = x.mul(&x.log()?)?.neg()?;
    let rest = Tensor::where_cond(&x.eq(0.0)?, &x.zeros_like()?, &x.full_like(f64::NEG_INFINITY)?)?;
    let rest = Tensor::where_cond(&x.isnan()?, x, &rest)?;
    Tensor::where_cond(&x.gt(0.0)?, &positive, &rest)
}

/// `-(1 + ln x)`
fn entr_derivative(x: &Tensor) -> Result<Tensor> {
    x.log()?.add(1.0)?.neg()
}

/// A binary op on operands of one shape and dtype whose gradients are torch's formulas
/// (`grads(x, y, g)`), for ops whose chain rule through their pieces differs from torch's at ties,
/// zeros or NaN.
struct BinaryFn {
    value: fn(&Tensor, &Tensor) -> Result<Tensor>,
    grads: fn(&Tensor, &Tensor, &Tensor) -> Result<(Tensor, Tensor)>,
    name: &'static str,
}

impl Function for BinaryFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0], &inputs[1]]);
        Ok(vec![(self.value)(&inputs[0], &inputs[1])?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (gx, gy) = (self.grads)(&saved[0], &saved[1], &grads[0])?;
        Ok(vec![Some(gx), Some(gy)])
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

/// fmax's selection: `x` where `x >= y` or `y` is NaN.
fn fmax_value(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    Tensor::where_cond(&x.ge(y)?.logical_or(&y.isnan()?)?, x, y)
}

/// fmin's selection: `x` where `x <= y` or `y` is NaN.
fn fmin_value(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    Tensor::where_cond(&x.le(y)?.logical_or(&y.isnan()?)?, x, y)
}

/// torch's fmax/fmin backward: ties split the gradient in half; otherwise it follows the forward
/// selection (`x_wins` where `x` is chosen, `y_strictly` where `y` gets nothing).
fn extremum_grads(
    x: &Tensor,
    y: &Tensor,
    g: &Tensor,
    x_wins: Tensor,
    x_strictly: Tensor,
) -> Result<(Tensor, Tensor)> {
    let split = Tensor::where_cond(&x.eq(y)?, &g.div(2.0)?, g)?;
    let y_nan = y.isnan()?;
    let gx = Tensor::where_cond(&x_wins.logical_or(&y_nan)?, &split, 0.0)?;
    let gy = Tensor::where_cond(&x_strictly.logical_or(&y_nan)?, 0.0, &split)?;
    Ok((gx, gy))
}

fn fmax_grads(x: &Tensor, y: &Tensor, g: &Tensor) -> Result<(Tensor, Tensor)> {
    extremum_grads(x, y, g, x.ge(y)?, x.gt(y)?)
}

fn fmin_grads(x: &Tensor, y: &Tensor, g: &Tensor) -> Result<(Tensor, Tensor)> {
    extremum_grads(x, y, g, x.le(y)?, x.lt(y)?)
}

/// `x · log(y)`, +0 where `x == 0` and `y` is not NaN (torch's kernel).
fn xlogy_value(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let zero = x.eq(0.0)?.logical_and(&y.isnan()?.logical_not()?)?;
    Tensor::where_cond(&zero, 0.0, &x.mul(&y.log()?)?)
}

/// `x · log1p(y)`, +0 where `x == 0` and `y` is not NaN (torch's kernel).
fn xlog1py_value(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let zero = x.eq(0.0)?.logical_and(&y.isnan()?.logical_not()?)?;
    Tensor::where_cond(&zero, 0.0, &x.mul(&y.log1p()?)?)
}

/// torch's xlogy backward: `xlogy(g, y)` for `x` (0 where `x == 0` and `y <= 0`), `g x / y` for `y`.
fn xlogy_grads(x: &Tensor, y: &Tensor, g: &Tensor) -> Result<(Tensor, Tensor)> {
    let masked = x.eq(0.0)?.logical_and(&y.le(0.0)?)?;
    let gx = Tensor::where_cond(&masked, 0.0, &xlogy_value(g, y)?)?;
    Ok((gx, g.mul(x)?.div(y)?))
}

/// torch's xlog1py backward: `xlog1py(g, y)` for `x` (0 where `x == 0` and `y <= -1`),
/// `g x / (y + 1)` for `y`.
fn xlog1py_grads(x: &Tensor, y: &Tensor, g: &Tensor) -> Result<(Tensor, Tensor)> {
    let masked = x.eq(0.0)?.logical_and(&y.le(-1.0)?)?;
    let gx = Tensor::where_cond(&masked, 0.0, &xlog1py_value(g, y)?)?;
    Ok((gx, g.mul(x)?.div(&y.add(1.0)?)?))
}
