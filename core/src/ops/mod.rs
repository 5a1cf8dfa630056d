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

mod elementwise;
mod index;
mod nn;
mod reduce;
mod shape;
mod sort;

pub use elementwise::{BinaryOp, CmpOp, UnaryOp};
pub use index::IndexOp;
pub use nn::NnOp;
pub use reduce::{ArgReduceOp, ReduceOp};
pub use shape::ShapeOp;
pub use sort::SortOp;

use crate::dtype::DType;
use crate::scalar::Scalar;

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
    /// An indexing op (gather, scatter, masked ops, ...).
    Index(IndexOp),
    /// A data-moving shape op (cat, flip, pad, ...).
    Shape(ShapeOp),
    /// An ordering op (sort, topk, unique, cumulative scans, ...).
    Sort(SortOp),
    /// A neural-network kernel (convolution, pooling, normalisation, ...).
    Nn(NnOp),
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
            Prim::Index(op) => op.name(),
            Prim::Shape(op) => op.name(),
            Prim::Sort(op) => op.name(),
            Prim::Nn(op) => op.name(),
        }
    }

    /// Number of tensor inputs the prim takes.
    pub fn arity(&self) -> usize {
        match self {
            Prim::Full { .. } => 0,
            Prim::Unary(_) | Prim::Reduce { .. } | Prim::ArgReduce { .. } | Prim::Cast(_) | Prim::Copy => 1,
            Prim::Binary(_) | Prim::Compare(_) | Prim::MatMul => 2,
            Prim::Where => 3,
            Prim::Index(op) => op.arity(),
            Prim::Shape(op) => op.arity(),
            Prim::Sort(op) => op.arity(),
            Prim::Nn(op) => op.arity(),
        }
    }
}

impl Prim {
    /// The shape of each output, given the input shapes. `output_lens` holds the element counts of
    /// the outputs the backend produced; only prims whose output size depends on the data (such as
    /// `nonzero`) read it.
    pub fn output_shapes(&self, inputs: &[&[usize]], output_lens: &[usize]) -> Vec<Vec<usize>> {
        let same = |s: Vec<usize>| vec![s; output_lens.len().max(1)];
        match self {
            Prim::Full { shape, .. } => same(shape.clone()),
            Prim::Reduce { dims, .. } => {
                let mut s = inputs[0].to_vec();
                for &d in dims {
                    if d < s.len() {
                        s[d] = 1;
                    }
                }
                same(s)
            }
            Prim::ArgReduce { dim, .. } => {
                let mut s = inputs[0].to_vec();
                if *dim < s.len() {
                    s[*dim] = 1;
                }
                same(s)
            }
            Prim::MatMul => {
                let (a, b) = (inputs[0], inputs[1]);
                let mut s = a[..a.len() - 1].to_vec();
                s.push(b[b.len() - 1]);
                same(s)
            }
            Prim::Where => same(inputs[1].to_vec()),
            Prim::Index(op) => op.output_shapes(inputs, output_lens),
            Prim::Shape(op) => op.output_shapes(inputs, output_lens),
            Prim::Sort(op) => op.output_shapes(inputs, output_lens),
            Prim::Nn(op) => op.output_shapes(inputs, output_lens),
            Prim::Unary(_) | Prim::Binary(_) | Prim::Compare(_) | Prim::Cast(_) | Prim::Copy => {
                same(inputs[0].to_vec())
            }
        }
    }
}
