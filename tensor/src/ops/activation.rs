//! Activation functions (torch.nn.functional's pointwise activations, glu, softmax, log_softmax).
//!
//! Pointwise activations are `UnaryOp` prims with their parameters; softmax and log_softmax are one
//! fused `UnaryOp::Softmax` prim along a dim. Float dtypes only unless noted (torch refuses integers
//! for all of them but `relu6`/`hardtanh`).

use oxtorch_core::ops::UnaryOp;
use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::Tensor;

/// selu's α.
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
/// selu's λ.
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

impl Tensor {
    /// `min(max(self, min_val), max_val)`; integer tensors take the bounds converted to their dtype.
    pub fn hardtanh(&self, min_val: f64, max_val: f64) -> Result<Tensor> {
        if min_val > max_val {
            return Err(Error::msg("min_val cannot be greater than max_val"));
        }
        if self.dtype() == DType::Bool {
            return Err(Error::msg("Bool inputs not supported for hardtanh"));
        }
        self.unary(UnaryOp::Hardtanh { min: min_val, max: max_val })
    }

    /// `min(max(self, 0), 6)`.
    pub fn relu6(&self) -> Result<Tensor> {
        self.hardtanh(0.0, 6.0)
    }

    /// `self` where positive, `negative_slope * self` elsewhere (torch's default slope is 0.01).
    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Tensor> {
        self.unary(UnaryOp::LeakyRelu(negative_slope))
    }

    /// `self` where positive, `alpha * (e^self - 1)` elsewhere (torch's default alpha is 1).
    pub fn elu(&self, alpha: f64) -> Result<Tensor> {
        self.unary(UnaryOp::Elu { alpha, scale: 1.0, input_scale: 1.0 })
    }

    /// Scaled elu with the self-normalising constants.
    pub fn selu(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Elu { alpha: SELU_ALPHA, scale: SELU_SCALE, input_scale: 1.0 })
    }

    /// `max(0, x) + min(0, alpha * (e^(x / alpha) - 1))` (torch's default alpha is 1).
    pub fn celu(&self, alpha: f64) -> Result<Tensor> {
        if alpha == 0.0 {
            return Err(Error::msg("ZeroDivisionError: alpha cannot be 0 for CELU"));
        }
        self.unary(UnaryOp::Elu { alpha, scale: 1.0, input_scale: 1.0 / alpha })
    }

    /// `x * Φ(x)`: `approximate` is `"none"` (exact, with erf) or `"tanh"`.
    pub fn gelu(&self, approximate: &str) -> Result<Tensor> {
        match approximate {
            "none" => self.unary(UnaryOp::Gelu),
            "tanh" => self.unary(UnaryOp::GeluTanh),
            _ => Err(Error::msg("approximate argument must be either none or tanh.")),
        }
    }

    /// `x * sigmoid(x)`.
    pub fn silu(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Silu)
    }

    /// `x * tanh(softplus(x))`.
    pub fn mish(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Mish)
    }

    /// `ln(1 + e^(beta x)) / beta`, and `x` where `beta x > threshold` (torch's defaults: 1 and 20).
    pub fn softplus(&self, beta: f64, threshold: f64) -> Result<Tensor> {
        self.unary(UnaryOp::Softplus { beta, threshold })
    }

    /// `relu6(x + 3) / 6`.
    pub fn hardsigmoid(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Hardsigmoid)
    }

    /// `x * relu6(x + 3) / 6`.
    pub fn hardswish(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Hardswish)
    }

    /// Gated linear unit: splits `dim` in halves `a`, `b` and returns `a * sigmoid(b)`.
    pub fn glu(&self, dim: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::msg("glu does not support scalars because halving size must be even"));
        }
        let d = wrap_dim(dim, self.rank())?;
        let n = self.dims()[d];
        if !n.is_multiple_of(2) {
            return Err(Error::msg(format!("Halving dimension must be even, but dimension {d} is size {n}")));
        }
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "glu", dtype: self.dtype() });
        }
        let x = self.to_dtype(compute_dtype(self.dtype()))?;
        let (a, b) = (x.narrow(d as isize, 0, n / 2)?, x.narrow(d as isize, (n / 2) as isize, n / 2)?);
        a.mul(b.sigmoid()?)?.to_dtype(self.dtype())
    }

    /// Softmax along `dim`, computed in `dtype` when given (the input is cast first, as torch's
    /// `dtype` argument does). Integer inputs need a float `dtype`.
    pub fn softmax(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        self.softmax_impl(dim, dtype, false)
    }

    /// `log(softmax(self))`, computed stably in one pass.
    pub fn log_softmax(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        self.softmax_impl(dim, dtype, true)
    }

    fn softmax_impl(&self, dim: isize, dtype: Option<DType>, log: bool) -> Result<Tensor> {
        let d = wrap_dim(dim, self.rank())?;
        let x = match dtype {
            Some(t) => self.to_dtype(t)?,
            None => self.clone(),
        };
        if !x.dtype().is_float() {
            let last = self.rank() == 0 || d + 1 == self.rank();
            let op = match (log, last) {
                (false, true) => "softmax_lastdim_kernel_impl",
                (false, false) => "softmax_kernel_impl",
                (true, true) => "log_softmax_lastdim_kernel_impl",
                (true, false) => "log_softmax_kernel_impl",
            };
            return Err(Error::UnsupportedDType { op, dtype: x.dtype() });
        }
        x.unary(UnaryOp::Softmax { dim: d, log })
    }
}

/// The dtype a composite activation computes in: f32 for f16/bf16 (rounded once at the end).
fn compute_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}
