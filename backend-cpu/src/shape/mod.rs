//! CPU kernels for [`ShapeOp`] prims.

mod cat;

use oxtorch_core::ops::ShapeOp;
use oxtorch_core::{Layout, Result};

use crate::CpuStorage;

/// Runs one [`ShapeOp`] on its inputs.
pub fn execute(op: &ShapeOp, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    match *op {
        ShapeOp::Cat { dim, .. } => Ok(vec![cat::cat(inputs, dim)?]),
    }
}
