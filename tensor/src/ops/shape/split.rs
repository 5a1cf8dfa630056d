//! tensor_split: views along a dim, by section count or by indices.

use oxtorch_core::{wrap_dim, Error, Result};

use crate::Tensor;

impl Tensor {
    fn check_split_rank(&self) -> Result<()> {
        if self.rank() == 0 {
            return Err(Error::msg(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
            ));
        }
        Ok(())
    }

    /// `self.tensor_split(sections, dim)`: `sections` views along `dim`, the first `size % sections`
    /// one element longer.
    pub fn tensor_split(&self, sections: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.check_split_rank()?;
        if sections == 0 {
            return Err(Error::msg("number of sections must be larger than 0, got 0"));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.dims()[d];
        let (base, extra) = (size / sections, size % sections);
        // One view per section, so the count must fit in memory (never abort on a huge one).
        let mut out = Vec::new();
        out.try_reserve_exact(sections).map_err(|_| {
            Error::msg(format!("tensor_split: cannot return {sections} sections (out of memory)"))
        })?;
        let mut start = 0;
        for i in 0..sections {
            let len = base + usize::from(i < extra);
            out.push(self.narrow(d as isize, start as isize, len)?);
            start += len;
        }
        Ok(out)
    }

    /// `self.tensor_split(indices, dim)`: views `[..i0], [i0..i1], ..., [ik..]` along `dim` (Python
    /// slice semantics: negative indices count from the end, out-of-range ones clamp).
    pub fn tensor_split_indices(&self, indices: &[isize], dim: isize) -> Result<Vec<Tensor>> {
        self.check_split_rank()?;
        let d = wrap_dim(dim, self.rank())? as isize;
        let mut bounds = vec![None];
        bounds.extend(indices.iter().map(|&i| Some(i)));
        bounds.push(None);
        bounds.windows(2).map(|w| self.slice_bounds(d, w[0], w[1], 1)).collect()
    }

    /// torch's `hsplit(sections)`: equal views along dim 1 (dim 0 of a vector).
    pub fn hsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        let dim = if self.rank() == 1 { 0 } else { 1 };
        self.split_equally("hsplit", 1, dim, sections)
    }

    /// torch's `vsplit(sections)`: equal views along dim 0 of a tensor of 2 or more dims.
    pub fn vsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        self.split_equally("vsplit", 2, 0, sections)
    }

    /// torch's `dsplit(sections)`: equal views along dim 2 of a tensor of 3 or more dims.
    pub fn dsplit(&self, sections: usize) -> Result<Vec<Tensor>> {
        self.split_equally("dsplit", 3, 2, sections)
    }

    /// `tensor_split` into `sections` equal parts, with torch's h/v/dsplit checks.
    fn split_equally(&self, name: &str, min_rank: usize, dim: usize, sections: usize) -> Result<Vec<Tensor>> {
        if self.rank() < min_rank {
            return Err(Error::msg(format!(
                "torch.{name} requires a tensor with at least {min_rank} dimension, but got a tensor with {} dimensions!",
                self.rank()
            )));
        }
        let size = self.dims()[dim];
        if sections == 0 || !size.is_multiple_of(sections) {
            return Err(Error::msg(format!(
                "torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} is not divisible by the split_size {sections}!"
            )));
        }
        self.tensor_split(sections, dim as isize)
    }
}
