//! `torch.nn.utils`: padding sequences into batches ([`rnn::pad_sequence`]) and packing them for the
//! recurrent layers ([`rnn::pack_padded_sequence`], [`rnn::PackedSequence`]), flattening parameters
//! into one vector and back, and gradient clipping (also found in [`crate::optim`]).

mod call_guard;
mod clip_grad;
mod convert_parameters;
mod fusion;
mod memory_format;
mod mirror;
pub mod orthogonal;
mod packed;
pub mod parametrizations;
pub mod parametrize;
pub mod prune;
pub mod rnn;
mod stateless;

pub use crate::optim::{clip_grad_norm_, clip_grad_value_};
pub use clip_grad::{clip_grads_with_norm_, get_total_norm};
pub use convert_parameters::{parameters_to_vector, vector_to_parameters};
pub use fusion::{fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights};
pub use memory_format::to_memory_format;
pub use stateless::{functional_call, functional_call_forward, functional_call_with, FunctionalCallOptions};
