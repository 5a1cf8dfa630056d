//! Layers with torch's names, constructor defaults, initialisation and state-dict keys.

mod activation;
mod container;
mod conv;
mod dropout;
mod embedding;
mod linear;
mod norm;

pub use activation::*;
pub use container::Sequential;
pub use conv::{Conv1d, Conv2d, Conv3d, ConvOptions};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use linear::{Flatten, Identity, Linear, Unflatten};
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm};
