//! Indexing prims: gather, scatter (with reductions) and nonzero.
//!
//! The tensor crate builds every indexing op on these three: `index_select`, `take`,
//! `take_along_dim` and advanced indexing are gathers; `scatter_add`, `scatter_reduce`, `index_add`,
//! `index_copy`, `index_fill`, `index_put`, `masked_scatter` are scatters; `masked_select` and
//! `nonzero` start from `Nonzero`.

use super::ReduceOp;

/// Indexing prims: gather, scatter and nonzero.
///
/// Each variant carries its parameters; inputs are listed in the variant's doc. Index inputs are
/// int64; the kernels check every index against its dimension and fail with torch's
/// "index X is out of bounds for dimension D with size S" (negative indices are wrapped by the
/// tensor layer for the ops that allow them, never by the kernels).
#[derive(Clone, Debug, PartialEq)]
pub enum IndexOp {
    /// `out[p] = src[p with p[dim] replaced by index[p]]`; inputs `(src, index)`, output of index's
    /// shape. `index` has src's rank and no dim (other than `dim`) larger than src's.
    Gather {
        /// the indexed dim
        dim: usize,
    },
    /// A copy of `self` with `out[p with p[dim] = index[p]] (op)= src[p]` for every `p` in index's
    /// shape; inputs `(self, index, src)`, src sharing self's dtype and no dim smaller than index's.
    Scatter {
        /// the indexed dim
        dim: usize,
        /// how values combine: `None` overwrites; `Sum`, `Prod`, `Max`, `Min` (NaN propagating)
        /// reduce (`scatter_reduce`'s "mean" is a sum divided by a scattered count)
        reduce: Option<ReduceOp>,
        /// whether self's values take part in the reduction (false: a position hit by the scatter
        /// starts from its first scattered value)
        include_self: bool,
    },
    /// Row-major positions (flat indices into the logical shape) of the non-zero elements of the
    /// input, as a 1-D int64 tensor.
    Nonzero,
}

impl IndexOp {
    /// torch's name for the op.
    pub fn name(&self) -> &'static str {
        match self {
            IndexOp::Gather { .. } => "gather",
            IndexOp::Scatter { .. } => "scatter",
            IndexOp::Nonzero => "nonzero",
        }
    }

    /// Number of tensor inputs.
    pub fn arity(&self) -> usize {
        match self {
            IndexOp::Gather { .. } => 2,
            IndexOp::Scatter { .. } => 3,
            IndexOp::Nonzero => 1,
        }
    }

    /// Shapes of the outputs given the input shapes; `output_lens` (element counts of the outputs the
    /// backend produced) serves the ops whose output size depends on the data, such as `nonzero`.
    pub fn output_shapes(&self, inputs: &[&[usize]], output_lens: &[usize]) -> Vec<Vec<usize>> {
        match self {
            IndexOp::Gather { .. } => vec![inputs[1].to_vec()],
            IndexOp::Scatter { .. } => vec![inputs[0].to_vec()],
            IndexOp::Nonzero => vec![vec![output_lens.first().copied().unwrap_or(0)]],
        }
    }
}
