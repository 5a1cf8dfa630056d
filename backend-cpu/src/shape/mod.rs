//! CPU kernels for [`ShapeOp`] prims.

use oxtorch_core::ops::ShapeOp;
use oxtorch_core::{Layout, Result};

use crate::CpuStorage;

/// Runs one [`ShapeOp`] on its inputs.
pub fn execute(op: &ShapeOp, _inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    match *op {}
}
