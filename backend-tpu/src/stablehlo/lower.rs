//! The lowering of every [`Prim`] to StableHLO: one entry point, [`lower`], that the eager runtime
//! (one program per prim) and the deferred and traced modes (many prims in one program) share.
//!
//! Inputs arrive as contiguous values of the prim's input types (the runtime materialises strided
//! views before calling this). A prim, or a prim on a dtype, without a lowering yet returns
//! [`Error::Unsupported`]; the eager runtime then runs it on the host, and counts that in its metrics.

use oxtorch_core::ops::Prim;

use super::builder::{FunctionBuilder, Value};
use super::cast::{element, lower_cast, lower_copy, lower_full, lower_where};
use super::elementwise::{lower_binary, lower_compare, lower_unary};
use super::index::lower_index;
use super::matmul::lower_matmul;
use super::nn::lower_nn;
use super::reduce::{lower_arg_reduce, lower_reduce};
use super::shape::lower_shape;
use super::sort::lower_sort;
use crate::pjrt::{Error, Result, TensorType};

/// Emits `prim` applied to `inputs` into `b` and returns its outputs.
pub fn lower(b: &mut FunctionBuilder, prim: &Prim, inputs: &[Value]) -> Result<Vec<Value>> {
    if inputs.len() != prim.arity() {
        return Err(Error::InvalidArgument(format!(
            "{} takes {} inputs, got {}",
            prim.name(),
            prim.arity(),
            inputs.len()
        )));
    }
    let out = match prim {
        Prim::Unary(op) => lower_unary(b, *op, &inputs[0])?,
        Prim::Binary(op) => lower_binary(b, *op, &inputs[0], &inputs[1])?,
        Prim::Compare(op) => lower_compare(b, *op, &inputs[0], &inputs[1]),
        Prim::Where => lower_where(b, &inputs[0], &inputs[1], &inputs[2]),
        Prim::Cast(dtype) => lower_cast(b, &inputs[0], element(*dtype)),
        Prim::Copy => lower_copy(&inputs[0]),
        Prim::Full { shape, value, dtype } => lower_full(b, shape, *value, *dtype)?,
        Prim::Reduce { op, dims } => lower_reduce(b, *op, &inputs[0], dims)?,
        Prim::ArgReduce { op, dim } => return lower_arg_reduce(b, *op, &inputs[0], *dim),
        Prim::MatMul => lower_matmul(b, &inputs[0], &inputs[1])?,
        Prim::Index(op) => return lower_index(b, op, inputs),
        Prim::Shape(op) => return lower_shape(b, op, inputs),
        Prim::Nn(op) => return lower_nn(b, op, inputs),
        Prim::Sort(op) => return lower_sort(b, op, inputs),
    };
    Ok(vec![out])
}

/// The text of a module whose `@main` takes `inputs` and returns `prim`'s outputs.
pub fn prim_program(prim: &Prim, inputs: &[TensorType]) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(inputs);
    let outs = lower(&mut b, prim, &args)?;
    let refs: Vec<&Value> = outs.iter().collect();
    Ok(b.finish(&refs))
}
