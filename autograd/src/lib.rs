//! # oxtorch-autograd
//!
//! torch's reverse-mode autograd for oxtorch: `backward`, `grad`, hooks, `no_grad`, higher-order
//! gradients and custom functions.
//!
//! How it plugs in (see `ARCHITECTURE.md`): every tensor op runs through one function,
//! `oxtorch_tensor::dispatch::apply`, as a primitive op ([`oxtorch_tensor::UnaryOp`], ...). When an
//! input requires grad, `apply` records a graph node holding the prim, its saved inputs and their
//! storage versions. The derivative formula of each prim is written in tensor ops, so a backward
//! pass is itself recorded and can be differentiated again (higher-order gradients), and runs on
//! whatever device the tensors live on. This crate holds the user-facing API over that graph.
