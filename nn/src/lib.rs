//! # oxtorch-nn
//!
//! `torch.nn` and `torch.optim` for oxtorch. Modules, losses, initialisers, optimizers and schedulers
//! live here; they are written in tensor ops, so they run on every device and are differentiated by
//! autograd. So far this crate holds the functional forms that the tensor core already supports.

pub mod functional;
pub mod optim;
