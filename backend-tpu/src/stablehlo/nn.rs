//! Neural-network kernels: embedding, im2col/col2im, max/avg pooling and resampling over
//! precomputed windows.

use oxtorch_core::ops::NnOp;

use super::builder::{FunctionBuilder, Value};
use super::emit::array;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// Emits a neural-network prim.
pub fn lower_nn(b: &mut FunctionBuilder, op: &NnOp, inputs: &[Value]) -> Result<Vec<Value>> {
    match op {
        NnOp::Embedding => Ok(vec![embedding(b, &inputs[0], &inputs[1])?]),
        other => Err(Error::Unsupported(format!("the xla backend does not lower \"{}\" yet", other.name()))),
    }
}

/// Rows of `weight` `[V, D]` at int64 `ids` (any shape): `[*ids, D]`.
fn embedding(b: &mut FunctionBuilder, weight: &Value, ids: &Value) -> Result<Value> {
    let w = &weight.ty().dims;
    if w.len() != 2 || ids.ty().element_type != ElementType::S64 {
        return Err(Error::InvalidArgument(format!(
            "embedding: expected a [V, D] weight and int64 indices, got {} and {}",
            weight.ty(),
            ids.ty()
        )));
    }
    let r = ids.ty().dims.len();
    let mut dims = ids.ty().dims.clone();
    dims.push(w[1]);
    let attrs = format!(
        "dimension_numbers = #stablehlo.gather<offset_dims = [{r}], collapsed_slice_dims = [0], \
         start_index_map = [0], index_vector_dim = {r}>, slice_sizes = {}, indices_are_sorted = false",
        array(&[1, w[1]])
    );
    Ok(b.op("stablehlo.gather", &[weight, ids], &attrs, TensorType::new(weight.ty().element_type, &dims)))
}
