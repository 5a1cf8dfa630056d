//! Reordering entries: flip, fliplr/flipud, roll, rot90 (gathers and `cat`).

use oxtorch_core::{wrap_dim, Error, Result};

use super::unique_dims;
use crate::dims::IntoDims;
use crate::Tensor;

impl Tensor {
    /// `self.flip(dims)`: a copy with the order of entries reversed along each of `dims`.
    pub fn flip(&self, dims: impl IntoDims) -> Result<Tensor> {
        let dims = unique_dims(&dims.into_dims(), self.rank(), |d| {
            format!("dim {d} appears multiple times in the list of dims")
        })?;
        let mut out = self.copy()?;
        for d in dims {
            let size = out.dims().get(d).copied().unwrap_or(1);
            if size > 1 {
                let rev: Vec<i64> = (0..size as i64).rev().collect();
                out = out.gather_along(d, &Tensor::from_vec_on(rev, [size], out.device())?)?;
            }
        }
        Ok(out)
    }

    /// Entries `index` (int64, in range) along `dim`, without the checks of `index_select`.
    fn gather_along(&self, dim: usize, index: &Tensor) -> Result<Tensor> {
        let mut shape = self.dims().to_vec();
        shape[dim] = index.numel();
        let mut view = vec![1usize; shape.len()];
        view[dim] = index.numel();
        self.gather_raw(dim, &index.reshape(view)?.broadcast_to(&shape)?)
    }

    /// `self.fliplr()`: flips dim 1 (needs at least 2 dims).
    pub fn fliplr(&self) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg("Input must be >= 2-d."));
        }
        self.flip(1)
    }

    /// `self.flipud()`: flips dim 0 (needs at least 1 dim).
    pub fn flipud(&self) -> Result<Tensor> {
        if self.rank() < 1 {
            return Err(Error::msg("Input must be >= 1-d."));
        }
        self.flip(0)
    }

    /// `self.roll(shifts, dims)`: entries shifted cyclically by `shifts[i]` along `dims[i]`; with no
    /// dims, the flattened tensor rolls by the single shift and keeps its shape.
    pub fn roll(&self, shifts: impl IntoDims, dims: impl IntoDims) -> Result<Tensor> {
        let (shifts, dims) = (shifts.into_dims(), dims.into_dims());
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::msg(format!(
                    "shifts and dimensions must align. shifts: {}, dims:0",
                    shifts.len()
                )));
            }
            return self.reshape([-1])?.roll(shifts, [0])?.reshape(self.dims().to_vec());
        }
        if shifts.len() != dims.len() {
            return Err(Error::msg(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let mut out = self.copy()?;
        for (&shift, &dim) in shifts.iter().zip(&dims) {
            let d = wrap_dim(dim, self.rank())?;
            let size = out.dims().get(d).copied().unwrap_or(1) as isize;
            if size == 0 || self.rank() == 0 {
                continue;
            }
            let s = shift.rem_euclid(size);
            if s == 0 {
                continue;
            }
            let tail = out.narrow(d as isize, size - s, s as usize)?;
            let head = out.narrow(d as isize, 0, (size - s) as usize)?;
            out = Tensor::cat(&[&tail, &head], d as isize)?;
        }
        Ok(out)
    }

    /// `self.rot90(k, dims)`: rotation by 90° `k` times in the plane of `dims` (from the first
    /// towards the second).
    pub fn rot90(&self, k: i64, dims: impl IntoDims) -> Result<Tensor> {
        let dims = dims.into_dims();
        if dims.len() != 2 {
            return Err(Error::msg(format!(
                "expected total rotation dims == 2, but got dims = {}",
                dims.len()
            )));
        }
        if self.rank() < 2 {
            return Err(Error::msg(format!(
                "expected total dims >= 2, but got total dims = {}",
                self.rank()
            )));
        }
        let (d0, d1) = (wrap_dim(dims[0], self.rank())?, wrap_dim(dims[1], self.rank())?);
        if d0 == d1 {
            return Err(Error::msg(format!(
                "expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
            )));
        }
        let (a, b) = (d0 as isize, d1 as isize);
        match k.rem_euclid(4) {
            1 => self.flip(b)?.transpose(a, b),
            2 => self.flip([a, b]),
            3 => self.flip(a)?.transpose(a, b),
            _ => self.copy(),
        }
    }
}
