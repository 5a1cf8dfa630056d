//! `nonzero`: row-major flat positions of the non-zero elements.

use oxtorch_core::{DType, Layout, Result};

use crate::copy::to_contiguous;
use crate::storage::CpuStorage;

/// Flat positions (int64) of the elements of `(s, l)` that are not zero (NaN counts as non-zero).
pub(super) fn nonzero(s: &CpuStorage, l: &Layout) -> Result<CpuStorage> {
    let flags = to_contiguous(s, l, DType::Bool)?;
    let flags = flags.as_slice::<bool>()?;
    let pos: Vec<i64> = flags.iter().enumerate().filter(|(_, &f)| f).map(|(i, _)| i as i64).collect();
    Ok(CpuStorage::from_vec(pos))
}
