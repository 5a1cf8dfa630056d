//! CPU kernels for [`IndexOp`] prims.

mod coords;
mod gather;
mod nonzero;
mod scatter;

use oxtorch_core::ops::IndexOp;
use oxtorch_core::{Error, Layout, Result};

use crate::CpuStorage;

/// Runs one [`IndexOp`] on its inputs.
pub fn execute(op: &IndexOp, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    let out = match *op {
        IndexOp::Gather { dim } => gather::gather(inputs[0].0, inputs[0].1, inputs[1].0, inputs[1].1, dim)?,
        IndexOp::Scatter { dim, reduce, include_self } => {
            scatter::scatter(inputs[0], inputs[1], inputs[2], dim, reduce, include_self)?
        }
        IndexOp::Nonzero => nonzero::nonzero(inputs[0].0, inputs[0].1)?,
    };
    Ok(vec![out])
}

/// Checks that `index` has `data`'s rank and is no larger than it in any dim but `dim`.
fn check_shapes(data: &Layout, index: &Layout, dim: usize) -> Result<()> {
    let (d, i) = (data.dims(), index.dims());
    if d.len() != i.len() || dim >= d.len() {
        return Err(Error::shape("Index tensor must have the same number of dimensions as input tensor"));
    }
    for k in 0..d.len() {
        if k != dim && i[k] > d[k] {
            return Err(Error::shape(format!(
                "Size does not match at dimension {k} expected index {:?} to be no larger than self {:?} apart from dimension {dim}",
                i, d
            )));
        }
    }
    Ok(())
}
