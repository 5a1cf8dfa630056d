//! Conversion to and from `ndarray` arrays (cargo feature `ndarray`).

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use oxtorch_backend_cpu::CpuElement;
use oxtorch_core::{Error, Result};

use crate::Tensor;

impl Tensor {
    /// Copies an ndarray array (any dimensionality and memory order) into a cpu tensor.
    pub fn from_ndarray<T, S, D>(array: &ArrayBase<S, D>) -> Result<Tensor>
    where
        T: CpuElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let shape = array.shape().to_vec();
        Tensor::from_vec(array.iter().copied().collect(), shape)
    }

    /// Copies this tensor into a dynamic-dimensional ndarray array of `T` (which must be its dtype).
    pub fn to_ndarray<T: CpuElement>(&self) -> Result<ArrayD<T>> {
        let data = self.to_vec::<T>()?;
        ArrayD::from_shape_vec(IxDyn(self.dims()), data).map_err(|e| Error::msg(format!("to_ndarray: {e}")))
    }
}

impl<T: CpuElement, S: Data<Elem = T>, D: Dimension> TryFrom<&ArrayBase<S, D>> for Tensor {
    type Error = Error;
    fn try_from(array: &ArrayBase<S, D>) -> Result<Tensor> {
        Tensor::from_ndarray(array)
    }
}
