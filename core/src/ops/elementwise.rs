//! Elementwise prims: unary math, binary arithmetic, comparisons.

use crate::dtype::DType;

/// Elementwise ops of one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
        )
    }

    /// The output dtype for an input of dtype `input` (after any promotion).
    pub const fn output_dtype(self, input: DType) -> DType {
        match self {
            UnaryOp::IsNan => DType::Bool,
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
