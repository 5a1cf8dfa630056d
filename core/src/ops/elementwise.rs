//! Elementwise prims: unary math, binary arithmetic, comparisons.

use crate::dtype::DType;

/// Elementwise ops of one input.
///
/// Parameterised variants carry their parameters as `f64` (so the enum is `PartialEq` but not `Eq`).
/// `Softmax` is the one variant that is not pointwise: it normalises along a dim of its input (the
/// output still has the input's shape, which is why it rides on `Prim::Unary`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `|x|`
    Abs,
    /// -1, 0 or 1 (0 for NaN, as in torch)
    Sign,
    /// `x * x`
    Square,
    /// `e^x`
    Exp,
    /// `ln x`
    Log,
    /// `√x`
    Sqrt,
    /// `1/√x`
    Rsqrt,
    /// `1/x`
    Reciprocal,
    /// sine
    Sin,
    /// cosine
    Cos,
    /// hyperbolic tangent
    Tanh,
    /// `1 / (1 + e^-x)`
    Sigmoid,
    /// `max(x, 0)`
    Relu,
    /// round toward -∞
    Floor,
    /// round toward +∞
    Ceil,
    /// round half to even
    Round,
    /// round toward zero
    Trunc,
    /// bitwise not (logical not for bool)
    BitNot,
    /// `x != x` (bool output)
    IsNan,
    /// `2^x`
    Exp2,
    /// `e^x - 1`
    Expm1,
    /// base-2 logarithm
    Log2,
    /// base-10 logarithm
    Log10,
    /// `ln(1 + x)`
    Log1p,
    /// tangent
    Tan,
    /// arcsine
    Asin,
    /// arccosine
    Acos,
    /// arctangent
    Atan,
    /// hyperbolic sine
    Sinh,
    /// hyperbolic cosine
    Cosh,
    /// inverse hyperbolic sine
    Asinh,
    /// inverse hyperbolic cosine
    Acosh,
    /// inverse hyperbolic tangent
    Atanh,
    /// error function
    Erf,
    /// complementary error function `1 - erf(x)`
    Erfc,
    /// inverse error function
    Erfinv,
    /// `ln |Γ(x)|`
    Lgamma,
    /// `ψ⁽ⁿ⁾(x)`, the n-th derivative of the digamma function `ψ = Γ'/Γ` (`n = 0`: digamma)
    Polygamma(u32),
    /// `x - trunc(x)`
    Frac,
    /// `ln(z / (1 - z))` with `z = clamp(x, eps, 1 - eps)` when `eps` is given
    Logit {
        /// clamping bound, `None` for no clamping
        eps: Option<f64>,
    },
    /// round half to even at `decimals` decimal places (negative: left of the point)
    RoundDecimals(i32),
    /// NaN and infinities replaced by finite values (the tensor layer resolves torch's defaults)
    NanToNum {
        /// replacement for NaN
        nan: f64,
        /// replacement for +∞
        posinf: f64,
        /// replacement for -∞
        neginf: f64,
    },
    /// ±∞ test (bool output)
    IsInf,
    /// +∞ test (bool output)
    IsPosInf,
    /// -∞ test (bool output)
    IsNegInf,
    /// finite test (bool output)
    IsFinite,
    /// `x` for `x > 0`, `slope * x` otherwise
    LeakyRelu(f64),
    /// `scale * (x > 0 ? x : alpha * (e^(x * input_scale) - 1))`: elu, selu and celu
    Elu {
        /// the negative branch's factor
        alpha: f64,
        /// the output factor (selu's λ)
        scale: f64,
        /// the factor applied to the input of the exponential (celu's `1/alpha`)
        input_scale: f64,
    },
    /// `x * Φ(x)` with the exact erf form
    Gelu,
    /// gelu's tanh approximation
    GeluTanh,
    /// `x * sigmoid(x)`
    Silu,
    /// `x * tanh(softplus(x))`
    Mish,
    /// `ln(1 + e^(beta x)) / beta`, linear where `beta x > threshold`
    Softplus {
        /// the slope factor
        beta: f64,
        /// above this `beta x` the result is `x`
        threshold: f64,
    },
    /// `min(max(x, min), max)` (NaN propagates)
    Hardtanh {
        /// lower bound
        min: f64,
        /// upper bound
        max: f64,
    },
    /// `relu6(x + 3) / 6`
    Hardsigmoid,
    /// `x * relu6(x + 3) / 6`
    Hardswish,
    /// softmax (or log-softmax) along `dim`, numerically stable; f16/bf16 compute in f32
    Softmax {
        /// the normalised dim
        dim: usize,
        /// log-softmax instead of softmax
        log: bool,
    },
}

impl UnaryOp {
    /// torch's name for the op.
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sign => "sign",
            UnaryOp::Square => "square",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Reciprocal => "reciprocal",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Relu => "relu",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
            UnaryOp::Trunc => "trunc",
            UnaryOp::BitNot => "bitwise_not",
            UnaryOp::IsNan => "isnan",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log2 => "log2",
            UnaryOp::Log10 => "log10",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Tan => "tan",
            UnaryOp::Asin => "asin",
            UnaryOp::Acos => "acos",
            UnaryOp::Atan => "atan",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Asinh => "asinh",
            UnaryOp::Acosh => "acosh",
            UnaryOp::Atanh => "atanh",
            UnaryOp::Erf => "erf",
            UnaryOp::Erfc => "erfc",
            UnaryOp::Erfinv => "erfinv",
            UnaryOp::Lgamma => "lgamma",
            UnaryOp::Polygamma(0) => "digamma",
            UnaryOp::Polygamma(_) => "polygamma",
            UnaryOp::Frac => "frac",
            UnaryOp::Logit { .. } => "logit",
            UnaryOp::RoundDecimals(_) => "round",
            UnaryOp::NanToNum { .. } => "nan_to_num",
            UnaryOp::IsInf => "isinf",
            UnaryOp::IsPosInf => "isposinf",
            UnaryOp::IsNegInf => "isneginf",
            UnaryOp::IsFinite => "isfinite",
            UnaryOp::LeakyRelu(_) => "leaky_relu",
            UnaryOp::Elu { .. } => "elu",
            UnaryOp::Gelu | UnaryOp::GeluTanh => "gelu",
            UnaryOp::Silu => "silu",
            UnaryOp::Mish => "mish",
            UnaryOp::Softplus { .. } => "softplus",
            UnaryOp::Hardtanh { .. } => "hardtanh",
            UnaryOp::Hardsigmoid => "hardsigmoid",
            UnaryOp::Hardswish => "hardswish",
            UnaryOp::Softmax { log: false, .. } => "softmax",
            UnaryOp::Softmax { log: true, .. } => "log_softmax",
        }
    }

    /// Ops that compute in floating point: integer and bool inputs are promoted to the default float
    /// dtype first (as `torch.exp(int_tensor)` does).
    pub const fn promotes_int_to_float(self) -> bool {
        matches!(
            self,
            UnaryOp::Exp
                | UnaryOp::Log
                | UnaryOp::Sqrt
                | UnaryOp::Rsqrt
                | UnaryOp::Reciprocal
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tanh
                | UnaryOp::Sigmoid
                | UnaryOp::Exp2
                | UnaryOp::Expm1
                | UnaryOp::Log2
                | UnaryOp::Log10
                | UnaryOp::Log1p
                | UnaryOp::Tan
                | UnaryOp::Asin
                | UnaryOp::Acos
                | UnaryOp::Atan
                | UnaryOp::Sinh
                | UnaryOp::Cosh
                | UnaryOp::Asinh
                | UnaryOp::Acosh
                | UnaryOp::Atanh
                | UnaryOp::Erf
                | UnaryOp::Erfc
                | UnaryOp::Erfinv
                | UnaryOp::Lgamma
                | UnaryOp::Polygamma(_)
                | UnaryOp::Logit { .. }
        )
    }

    /// The output dtype for an input of dtype `input` (after any promotion).
    pub const fn output_dtype(self, input: DType) -> DType {
        match self {
            UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsPosInf | UnaryOp::IsNegInf | UnaryOp::IsFinite => {
                DType::Bool
            }
            _ => input,
        }
    }
}

/// Elementwise ops of two inputs of the same dtype and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// true division `a / b` (inputs are float; integer division is `FloorDivide`)
    Div,
    /// `a ** b`
    Pow,
    /// elementwise maximum, NaN-propagating
    Maximum,
    /// elementwise minimum, NaN-propagating
    Minimum,
    /// Python's `%`: the result has the sign of `b`
    Remainder,
    /// Python's `//`: floor of the quotient
    FloorDivide,
    /// bitwise and (logical for bool)
    BitAnd,
    /// bitwise or (logical for bool)
    BitOr,
    /// bitwise xor (logical for bool)
    BitXor,
    /// `atan2(a, b)`, the angle of the point `(b, a)`
    Atan2,
    /// C's `fmod`: the remainder has the sign of `a`
    Fmod,
    /// `√(a² + b²)` without undue overflow
    Hypot,
    /// magnitude of `a` with the sign of `b`
    CopySign,
    /// `a << b` (0 when `b` is negative or at least the bit width)
    ShiftLeft,
    /// `a >> b`, arithmetic for signed types (sign fill when `b` is out of range)
    ShiftRight,
}

impl BinaryOp {
    /// torch's name for the op.
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Pow => "pow",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Remainder => "remainder",
            BinaryOp::FloorDivide => "floor_divide",
            BinaryOp::BitAnd => "bitwise_and",
            BinaryOp::BitOr => "bitwise_or",
            BinaryOp::BitXor => "bitwise_xor",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Fmod => "fmod",
            BinaryOp::Hypot => "hypot",
            BinaryOp::CopySign => "copysign",
            BinaryOp::ShiftLeft => "bitwise_left_shift",
            BinaryOp::ShiftRight => "bitwise_right_shift",
        }
    }
}

/// Comparisons; the output is bool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// torch's name for the op.
    pub const fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}
