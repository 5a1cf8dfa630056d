//! tril/triu: a `where` against a mask built from row and column positions.

use oxtorch_core::{DType, Error, Result};

use crate::Tensor;

impl Tensor {
    /// Keeps the entries of the last two dims with `col - row` accepted by `keep`, zeroes the rest.
    fn triangle(&self, name: &str, diagonal: i64, lower: bool) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg(format!("{name}: input tensor must have at least 2 dimensions")));
        }
        let (m, n) = (self.dims()[self.rank() - 2], self.dims()[self.rank() - 1]);
        let rows = Tensor::arange(m as i64, (DType::I64, self.device()))?.reshape([m, 1])?;
        let cols = Tensor::arange(n as i64, (DType::I64, self.device()))?.reshape([1, n])?;
        let diff = cols.sub(&rows)?;
        let keep = if lower { diff.le(diagonal)? } else { diff.ge(diagonal)? };
        let zero = Tensor::zeros((), self.same_options())?;
        Tensor::where_cond(&keep, self, &zero)
    }

    /// `self.tril(diagonal)`: the lower triangle of the last two dims (entries with
    /// `col - row <= diagonal`), zero elsewhere.
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("tril", diagonal, true)
    }

    /// `self.triu(diagonal)`: the upper triangle of the last two dims (entries with
    /// `col - row >= diagonal`), zero elsewhere.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("triu", diagonal, false)
    }
}
