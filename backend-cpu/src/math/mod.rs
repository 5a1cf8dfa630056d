//! Float math beyond the basic kernels: special functions, activations and softmax.

pub(crate) mod activation;
pub(crate) mod fast;
pub(crate) mod gamma;
pub(crate) mod softmax;
pub(crate) mod softmax_row;
mod softmax_row_avx2;
pub(crate) mod special;
