//! CPU kernels for [`IndexOp`] prims.

use oxtorch_core::ops::IndexOp;
use oxtorch_core::{Layout, Result};

use crate::CpuStorage;

/// Runs one [`IndexOp`] on its inputs.
pub fn execute(op: &IndexOp, _inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    match *op {}
}
