//! CPU kernels for [`SortOp`] prims.

use oxtorch_core::ops::SortOp;
use oxtorch_core::{Layout, Result};

use crate::CpuStorage;

/// Runs one [`SortOp`] on its inputs.
pub fn execute(op: &SortOp, _inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    match *op {}
}
