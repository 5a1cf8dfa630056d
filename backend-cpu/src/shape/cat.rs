//! `cat`: inputs copied one after another along a dim into a new contiguous buffer.

use oxtorch_core::{BackendStorage, Error, Layout, Result};

use crate::copy::copy_from;
use crate::storage::CpuStorage;

/// Concatenates the inputs (one dtype, equal sizes except along `dim`) along `dim`.
pub(super) fn cat(inputs: &[(&CpuStorage, &Layout)], dim: usize) -> Result<CpuStorage> {
    let Some(&(first, fl)) = inputs.first() else {
        return Err(Error::msg("torch.cat(): expected a non-empty list of Tensors"));
    };
    let mut shape = fl.dims().to_vec();
    if dim >= shape.len() {
        return Err(Error::shape(format!("cat: dim {dim} out of range for rank {}", shape.len())));
    }
    shape[dim] = 0;
    for &(s, l) in inputs {
        let ok = l.rank() == fl.rank() && (0..l.rank()).all(|d| d == dim || l.dims()[d] == fl.dims()[d]);
        if !ok || s.dtype() != first.dtype() {
            return Err(Error::shape(format!(
                "cat: inputs must share dtype and sizes except in dimension {dim}, got {:?} and {:?}",
                fl.dims(),
                l.dims()
            )));
        }
        shape[dim] += l.dims()[dim];
    }
    let out_layout = Layout::contiguous(shape.clone());
    let mut out = CpuStorage::zeros(first.dtype(), out_layout.numel());
    let mut start = 0;
    for &(s, l) in inputs {
        let len = l.dims()[dim];
        if len > 0 {
            let dst = out_layout.narrow(dim as isize, start as isize, len)?;
            copy_from(&mut out, &dst, s, l)?;
        }
        start += len;
    }
    Ok(out)
}
