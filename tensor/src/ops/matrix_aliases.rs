//! torch's matrix properties and small aliases: `mT`, `mH`, `T`, `H`, `adjoint` (views),
//! `narrow_copy`, `chain_matmul` and `ger`, with torch's checks and messages.

use oxtorch_core::{Error, Result};

use crate::Tensor;

#[allow(non_snake_case)]
impl Tensor {
    /// The last two dims swapped, a view (torch's `Tensor.mT`): matrices or batches of them
    /// (a 0-d tensor is kept).
    pub fn mT(&self) -> Result<Tensor> {
        self.matrix_transpose("tensor.mT is only supported on matrices or batches of matrices.")
    }

    /// The conjugate transpose of the last two dims (torch's `Tensor.mH`); real dtypes only, so
    /// [`Tensor::mT`].
    pub fn mH(&self) -> Result<Tensor> {
        self.matrix_transpose("tensor.mH is only supported on matrices or batches of matrices.")
    }

    /// torch's `Tensor.adjoint()`: [`Tensor::mH`].
    pub fn adjoint(&self) -> Result<Tensor> {
        self.matrix_transpose("tensor.adjoint() is only supported on matrices or batches of matrices.")
    }

    /// All dims reversed, a view (torch's `Tensor.T`; torch deprecates it for ranks other than 2).
    pub fn T(&self) -> Result<Tensor> {
        let reversed: Vec<isize> = (0..self.rank() as isize).rev().collect();
        self.permute(reversed)
    }

    /// The conjugate transpose of a matrix (torch's `Tensor.H`): 2-D (or 0-d) only; real dtypes,
    /// so a transpose.
    pub fn H(&self) -> Result<Tensor> {
        match self.rank() {
            0 => self.transpose(0, 0),
            2 => self.transpose(0, 1),
            r => {
                let hint = if r > 2 { " For batches of matrices, consider using tensor.mH" } else { "" };
                Err(Error::shape(format!(
                    "tensor.H is only supported on matrices (2-D tensors). Got {r}-D tensor.{hint}"
                )))
            }
        }
    }

    fn matrix_transpose(&self, message: &str) -> Result<Tensor> {
        match self.rank() {
            0 => self.transpose(0, 0),
            1 => Err(Error::shape(format!("{message} Got 1-D tensor."))),
            _ => self.transpose(-2, -1),
        }
    }

    /// Elements `start..start+length` of `dim` as a new contiguous tensor (torch's
    /// `narrow_copy`): [`Tensor::narrow`]'s checks, then a copy.
    pub fn narrow_copy(&self, dim: isize, start: isize, length: usize) -> Result<Tensor> {
        let out = self.narrow(dim, start, length)?.copy()?;
        Ok(self.named(out, "NarrowCopyBackward0"))
    }

    /// torch's deprecated `chain_matmul(*matrices)`: the product of one or more 2-D matrices
    /// (one gives a copy), multiplied in the cheapest order as [`crate::linalg::multi_dot`].
    pub fn chain_matmul(matrices: &[&Tensor]) -> Result<Tensor> {
        if matrices.is_empty() {
            return Err(Error::msg("chain_matmul(): Expected one or more matrices"));
        }
        for m in matrices {
            if m.rank() != 2 {
                return Err(Error::shape(format!("Tensor dimension is {}, expected 2 instead.", m.rank())));
            }
        }
        if matrices.len() == 1 {
            return matrices[0].copy();
        }
        crate::linalg::multi_dot(matrices)
    }

    /// torch's deprecated alias `ger` of [`Tensor::outer`].
    pub fn ger(&self, vec2: &Tensor) -> Result<Tensor> {
        self.outer(vec2)
    }
}
