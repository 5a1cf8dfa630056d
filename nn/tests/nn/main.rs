//! The nn crate's tests, one binary (each test binary links the whole stack, so fewer binaries
//! build faster and take a fraction of the disk): layers, losses and optimizers against PyTorch,
//! the module tree and checkpoints, data loading and autocast.

mod containers32;
mod data32;
mod data32b;
mod data_and_autocast;
mod distributions32;
mod distributions32b;
mod distributions33;
mod distributions33b;
mod functional32;
mod functional_extra;
mod golden_case;
mod hooks32;
mod layers;
mod layers_extra;
mod losses;
mod losses_extra;
mod memory_format31;
mod modfuzz33;
mod module;
mod module32;
mod nn33;
mod nn_aa_embedding;
mod nn_adafactor;
mod nn_extra30;
mod nn_extra31;
mod nn_optim30;
mod nn_packed30;
mod nn_prune;
mod nn_tier3;
mod nn_utils30;
mod nn_vision30;
mod nnfuzz33;
mod norm_extra;
mod optim;
mod optim32;
mod optim_extra32;
mod optim_more;
mod optimfuzz33;
mod repr32;
mod repr32b;
mod review31;
mod review32;
mod rnn33;
mod schedulers;
