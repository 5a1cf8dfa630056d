//! Data-moving shape prims that a view cannot express.
//!
//! Only `Cat` needs a kernel: flip, roll, repeat, tile, pad, tril/triu, rot90 and the stacking ops
//! are compositions of views, `Cat`, gathers and `where` in the tensor crate.

/// Data-moving shape prims that a view cannot express.
///
/// Each variant carries its parameters; inputs are listed in the variant's doc.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeOp {
    /// Concatenation of `n` inputs (one dtype, equal sizes except along `dim`) along `dim`.
    Cat {
        /// the dim the inputs are joined along
        dim: usize,
        /// number of inputs
        n: usize,
    },
}

impl ShapeOp {
    /// torch's name for the op.
    pub fn name(&self) -> &'static str {
        match self {
            ShapeOp::Cat { .. } => "cat",
        }
    }

    /// Number of tensor inputs.
    pub fn arity(&self) -> usize {
        match self {
            ShapeOp::Cat { n, .. } => *n,
        }
    }

    /// Shapes of the outputs given the input shapes; `output_lens` (element counts of the outputs the
    /// backend produced) serves the ops whose output size depends on the data, such as `nonzero`.
    pub fn output_shapes(&self, inputs: &[&[usize]], _output_lens: &[usize]) -> Vec<Vec<usize>> {
        match self {
            ShapeOp::Cat { dim, .. } => {
                let mut s = inputs[0].to_vec();
                if *dim < s.len() {
                    s[*dim] = inputs.iter().map(|i| i[*dim]).sum();
                }
                vec![s]
            }
        }
    }
}
