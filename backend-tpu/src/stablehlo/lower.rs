//! The lowering of every [`Prim`] to StableHLO: one entry point, [`lower`], that the eager runtime
//! (one program per prim) and the deferred and traced modes (many prims in one program) share.
//!
//! Inputs arrive as contiguous values of the prim's input types (the runtime materialises strided
//! views before calling this). A prim, or a prim on a dtype, without a lowering yet returns
//! [`Error::Unsupported`]; the eager runtime then runs it on the host, and counts that in its metrics.

use oxtorch_core::ops::Prim;

use super::builder::{FunctionBuilder, Value};
use super::elementwise::{lower_binary, lower_compare, lower_unary};
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
        other => {
            return Err(Error::Unsupported(format!(
                "the xla backend does not lower \"{}\" yet",
                other.name()
            )))
        }
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
