//! `Cat`: concatenation along one dim.

use oxtorch_core::ops::ShapeOp;

use super::builder::{FunctionBuilder, Value};
use crate::pjrt::{Error, Result};

/// Emits a shape prim.
pub fn lower_shape(b: &mut FunctionBuilder, op: &ShapeOp, inputs: &[Value]) -> Result<Vec<Value>> {
    match op {
        ShapeOp::Cat { dim, .. } => {
            let rank = inputs[0].ty().dims.len();
            let same = inputs.iter().all(|v| {
                v.ty().element_type == inputs[0].ty().element_type
                    && v.ty().dims.len() == rank
                    && (0..rank).all(|d| d == *dim || v.ty().dims[d] == inputs[0].ty().dims[d])
            });
            if *dim >= rank || !same {
                return Err(Error::InvalidArgument(format!(
                    "cat: inputs must share dtype and sizes except along dim {dim}"
                )));
            }
            let refs: Vec<&Value> = inputs.iter().collect();
            Ok(vec![b.concat(&refs, *dim)])
        }
    }
}
