//! # oxtorch-nn
//!
//! `torch.nn` for oxtorch: the [`Module`] tree with torch's state-dict names (define a module with
//! `#[derive(Module)]`), layers, `functional`, `init`, and checkpoints as safetensors files that
//! PyTorch reads. Everything is written in tensor ops, so it runs on every device and autograd
//! differentiates it.
//!
//! ```
//! use oxtorch_nn::{Forward, Linear, Module, ModuleExt, ReLU};
//! use oxtorch_tensor::{Result, Tensor};
//!
//! #[derive(Module)]
//! struct Mlp {
//!     fc1: Linear,
//!     act: ReLU,
//!     fc2: Linear,
//! }
//!
//! impl Forward for Mlp {
//!     fn forward(&self, x: &Tensor) -> Result<Tensor> {
//!         self.fc2.forward(&self.act.forward(&self.fc1.forward(x)?)?)
//!     }
//! }
//!
//! # fn main() -> Result<()> {
//! let mlp = Mlp { fc1: Linear::new(4, 8, true)?, act: ReLU {}, fc2: Linear::new(8, 2, true)? };
//! let names: Vec<String> = mlp.named_parameters().into_iter().map(|(n, _)| n).collect();
//! assert_eq!(names, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
//! let y = mlp.forward(&Tensor::randn([3, 4], ())?)?;
//! y.sum_all()?.backward()?;
//! assert!(mlp.fc1.weight.grad().is_some());
//! # Ok(()) }
//! ```

extern crate self as oxtorch_nn;

pub mod amp;
pub mod data;
pub mod distributions;
pub mod functional;
pub mod hooks;
pub mod init;
mod layers;
pub mod loss;
mod module;
pub mod optim;
mod state_dict;
pub mod utils;

/// Held by the unit tests that draw from the process-wide RNG: one that seeds and expects the
/// same draws again must not see another test draw in between.
#[cfg(test)]
pub(crate) fn rng_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub use layers::*;
pub use loss::modules::*;
pub use loss::{
    GaussianNLLLoss, HingeEmbeddingLoss, LinearCrossEntropyLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SharedDistanceFn, SoftMarginLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss,
};
pub use module::skip_init;
pub use module::{
    py_bool, py_float, py_tuple, Buffer, DisplayModule, Forward, IncompatibleKeys, Layer, Member, MemberMut,
    Module, ModuleExt, ModuleField, NonPersistentBuffer,
};
pub use oxtorch_nn_derive::Module;
pub use state_dict::{write_atomic, StateDict};
