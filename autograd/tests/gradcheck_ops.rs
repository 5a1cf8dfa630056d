//! Numerical gradient checks (f64, central differences) of every differentiable op, one test per
//! family; `gradgradcheck` on a representative subset; torch's conventions for the
//! non-differentiable ops.

#[path = "gradcheck_ops/activations.rs"]
mod activations;
#[path = "gradcheck_ops/common.rs"]
mod common;
#[path = "gradcheck_ops/indexing.rs"]
mod indexing;
#[path = "gradcheck_ops/linalg.rs"]
mod linalg;
#[path = "gradcheck_ops/math.rs"]
mod math;
#[path = "gradcheck_ops/nn.rs"]
mod nn;
#[path = "gradcheck_ops/non_differentiable.rs"]
mod non_differentiable;
#[path = "gradcheck_ops/reductions.rs"]
mod reductions;
#[path = "gradcheck_ops/second_order.rs"]
mod second_order;
#[path = "gradcheck_ops/shape.rs"]
mod shape;
