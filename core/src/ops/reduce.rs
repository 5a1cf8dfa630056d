//! Reduction prims.

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
