//! The primitive op vocabulary.
//!
//! Every computation oxtorch performs is one of the [`Prim`]s below, applied to inputs that already
//! share one dtype and (for elementwise ops) one broadcast shape. Composite ops (`mean`, `softmax`,
//! `linear`, ...) are written in terms of prims by the tensor crate; type promotion and broadcasting are
//! prims too (`Cast`, and the `expand` view). This one table is what
//!
//! * each backend executes ([`crate::BackendStorage::execute`]),
//! * the XLA backend lowers to StableHLO,
//! * tracing records into a program,
//! * autograd writes its derivative formulas against.

use crate::dtype::DType;
use crate::scalar::Scalar;

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

/// Reductions over a set of dims; the output keeps the reduced dims with size 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// sum (f16/bf16 accumulate in f32)
    Sum,
    /// product
    Prod,
    /// maximum (NaN-propagating)
    Max,
    /// minimum (NaN-propagating)
    Min,
    /// logical and, bool output
    All,
    /// logical or, bool output
    Any,
}

impl ReduceOp {
    /// torch's name for the op.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
        }
    }
}

/// Reductions along one dim that also return the position (int64) of the chosen element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgReduceOp {
    /// maximum and the index of its first occurrence (NaN counts as maximal)
    Max,
    /// minimum and the index of its first occurrence (NaN counts as minimal)
    Min,
}

/// One primitive op with its parameters.
///
/// Inputs of a prim share one dtype (except `Where`'s bool condition) and, for elementwise prims, one
/// shape; the tensor crate inserts `Cast` prims and `expand` views to get there. Outputs are new
/// contiguous storages.
#[derive(Clone, Debug, PartialEq)]
pub enum Prim {
    /// `op(x)`.
    Unary(UnaryOp),
    /// `op(a, b)`.
    Binary(BinaryOp),
    /// `op(a, b)`, bool output.
    Compare(CmpOp),
    /// `cond ? a : b` with inputs `(cond, a, b)`.
    Where,
    /// Reduction over `dims`, keeping them with size 1.
    Reduce {
        /// the reduction
        op: ReduceOp,
        /// dims to reduce (sorted, unique)
        dims: Vec<usize>,
    },
    /// Reduction along `dim` with indices; two outputs `(values, indices)`, keepdim.
    ArgReduce {
        /// the reduction
        op: ArgReduceOp,
        /// the dim reduced
        dim: usize,
    },
    /// Batched matrix product of `[..., m, k]` and `[..., k, n]` with equal batch dims.
    MatMul,
    /// Conversion to another dtype.
    Cast(DType),
    /// A contiguous copy of the input.
    Copy,
    /// A new tensor of `shape` filled with `value` (no inputs).
    Full {
        /// output sizes
        shape: Vec<usize>,
        /// fill value
        value: Scalar,
        /// output dtype
        dtype: DType,
    },
}

impl Prim {
    /// A short name for messages and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            Prim::Unary(op) => op.name(),
            Prim::Binary(op) => op.name(),
            Prim::Compare(op) => op.name(),
            Prim::Where => "where",
            Prim::Reduce { op, .. } => op.name(),
            Prim::ArgReduce { op: ArgReduceOp::Max, .. } => "max",
            Prim::ArgReduce { op: ArgReduceOp::Min, .. } => "min",
            Prim::MatMul => "matmul",
            Prim::Cast(_) => "to",
            Prim::Copy => "contiguous",
            Prim::Full { .. } => "full",
        }
    }
}

impl Prim {
    /// The shape of every output, given the input shapes (all outputs of a prim share one shape).
    pub fn output_shape(&self, inputs: &[&[usize]]) -> Vec<usize> {
        match self {
            Prim::Full { shape, .. } => shape.clone(),
            Prim::Reduce { dims, .. } => {
                let mut s = inputs[0].to_vec();
                for &d in dims {
                    if d < s.len() {
                        s[d] = 1;
                    }
                }
                s
            }
            Prim::ArgReduce { dim, .. } => {
                let mut s = inputs[0].to_vec();
                if *dim < s.len() {
                    s[*dim] = 1;
                }
                s
            }
            Prim::MatMul => {
                let (a, b) = (inputs[0], inputs[1]);
                let mut s = a[..a.len() - 1].to_vec();
                s.push(b[b.len() - 1]);
                s
            }
            Prim::Where => inputs[1].to_vec(),
            _ => inputs[0].to_vec(),
        }
    }
}
