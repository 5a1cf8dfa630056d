//! Neural-network kernels: convolution, pooling, interpolation, normalisation, attention, ...

/// Neural-network kernels: convolution, pooling, interpolation, normalisation, attention, ...
///
/// Each variant carries its parameters; inputs are listed in the variant's doc.
#[derive(Clone, Debug, PartialEq)]
pub enum NnOp {}

impl NnOp {
    /// torch's name for the op.
    pub fn name(&self) -> &'static str {
        match *self {}
    }

    /// Number of tensor inputs.
    pub fn arity(&self) -> usize {
        match *self {}
    }

    /// Shapes of the outputs given the input shapes; `output_lens` (element counts of the outputs the
    /// backend produced) serves the ops whose output size depends on the data, such as `nonzero`.
    pub fn output_shapes(&self, _inputs: &[&[usize]], _output_lens: &[usize]) -> Vec<Vec<usize>> {
        match *self {}
    }
}
