//! CPU kernels for [`NnOp`] prims.

use oxtorch_core::ops::NnOp;
use oxtorch_core::{Layout, Result};

use crate::CpuStorage;

/// Runs one [`NnOp`] on its inputs.
pub fn execute(op: &NnOp, _inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    match *op {}
}
