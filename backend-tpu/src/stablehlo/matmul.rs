//! `MatMul`: batched `[..., m, k] × [..., k, n]` as one `dot_general`.

use super::builder::{FunctionBuilder, Value};
use super::cast::unsupported;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// The batched product of `a` `[..., m, k]` and `b` `[..., k, n]` (equal batch dims). Floats use
/// full f32 precision (`HIGHEST`); f16/bf16 multiply in f32 and round once, as the CPU backend
/// does; integers wrap; bool is refused, as on the CPU.
pub fn lower_matmul(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Result<Value> {
    let et = x.ty().element_type;
    if et == ElementType::Pred {
        return Err(unsupported("matmul", x.ty()));
    }
    let (da, db) = (&x.ty().dims, &y.ty().dims);
    let r = da.len();
    if r < 2 || db.len() != r || da[..r - 2] != db[..r - 2] || da[r - 1] != db[r - 2] {
        return Err(Error::InvalidArgument(format!(
            "matmul: expected [..., m, k] and [..., k, n] with equal batch dims, got {da:?} and {db:?}"
        )));
    }
    let half = matches!(et, ElementType::F16 | ElementType::BF16);
    let compute = if half { ElementType::F32 } else { et };
    let xa = b.convert(x, compute);
    let ya = b.convert(y, compute);
    let batch: Vec<i64> = (0..r as i64 - 2).collect();
    let mut dims = da[..r - 1].to_vec();
    dims.push(db[r - 1]);
    let attrs = format!(
        "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [{b}], rhs_batching_dimensions = [{b}], \
         lhs_contracting_dimensions = [{}], rhs_contracting_dimensions = [{}]>, \
         precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
        r - 1,
        r - 2,
        b = batch.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
    );
    let out = b.op("stablehlo.dot_general", &[&xa, &ya], &attrs, TensorType::new(compute, &dims));
    Ok(b.convert(&out, et))
}
