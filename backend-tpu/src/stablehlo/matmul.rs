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
    let (x0, (_, x_cols)) = in_place(b, x);
    let (y0, (y_rows, _)) = in_place(b, y);
    let xa = b.convert(&x0, compute);
    let ya = b.convert(&y0, compute);
    let mut dims = da[..r - 1].to_vec();
    dims.push(db[r - 1]);
    let host =
        b.host_kernels().then(|| host_matmul_target(compute, x_cols == r - 2, y_rows == r - 1)).flatten();
    if let Some(target) = host {
        let out = host_product(b, &target, [&xa, &ya], TensorType::new(compute, &dims));
        return Ok(b.convert(&out, et));
    }
    let batch: Vec<i64> = (0..r as i64 - 2).collect();
    let attrs = format!(
        "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [{b}], rhs_batching_dimensions = [{b}], \
         lhs_contracting_dimensions = [{x_cols}], rhs_contracting_dimensions = [{y_rows}]>, \
         precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
        b = batch.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
    );
    let out = b.op("stablehlo.dot_general", &[&xa, &ya], &attrs, TensorType::new(compute, &dims));
    Ok(b.convert(&out, et))
}

/// The custom-call target of oxtorch's host product kernel (see `xla::host_kernels`) for
/// `element_type` operands, the left one read transposed when `ta` (stored `[..., k, m]`), the
/// right one when `tb` (stored `[..., n, k]`); `None` for an element type without one.
pub fn host_matmul_target(element_type: ElementType, ta: bool, tb: bool) -> Option<String> {
    let name = match element_type {
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
        _ => return None,
    };
    let t = |x: bool| if x { 't' } else { 'n' };
    Some(format!("oxtorch_matmul_{name}_{}{}", t(ta), t(tb)))
}

/// A product as a call to the host kernel `target` (row-major operands and result).
fn host_product(b: &mut FunctionBuilder, target: &str, operands: [&Value; 2], result: TensorType) -> Value {
    let layout = |rank: usize| {
        let dims: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        format!("dense<[{}]> : tensor<{rank}xindex>", dims.join(", "))
    };
    let attrs = format!(
        "api_version = 4 : i32, backend_config = {{}}, call_target_name = \"{target}\", \
         operand_layouts = [{}, {}], result_layouts = [{}]",
        layout(operands[0].ty().dims.len()),
        layout(operands[1].ty().dims.len()),
        layout(result.dims.len()),
    );
    b.op("stablehlo.custom_call", &operands, &attrs, result)
}

/// The value a product reads for operand `v`, with the dims of `v`'s rows and columns in it: `v`
/// itself, or, when `v` is a transpose of the last two dims (a transposed weight in `linear`, `kᵀ`
/// in attention), the transpose's operand, so that `dot_general` contracts it in place. Given the
/// transpose instead, XLA's CPU compiler fuses a transposing copy of the matrix into the product
/// (one per weight in every decode step).
fn in_place(b: &FunctionBuilder, v: &Value) -> (Value, (usize, usize)) {
    let r = v.ty().dims.len();
    if let Some((src, perm)) = b.transpose_of(v) {
        let swaps_last_two = perm.len() == r
            && perm[..r - 2].iter().enumerate().all(|(i, &p)| p == i as i64)
            && perm[r - 2] == r as i64 - 1
            && perm[r - 1] == r as i64 - 2;
        if swaps_last_two {
            return (src.clone(), (r - 1, r - 2));
        }
    }
    (v.clone(), (r - 2, r - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A product of transposed operands reads them in place: the dims it contracts move, and no
    /// value of the transposes is an operand of `dot_general`.
    #[test]
    fn transposed_operands_are_contracted_in_place() {
        let f32 = |d: &[i64]| TensorType::new(ElementType::F32, d);
        let (mut b, args) =
            FunctionBuilder::new(&[f32(&[2, 3, 5]), f32(&[2, 4, 3]), f32(&[2, 5, 3]), f32(&[2, 3, 4])]);
        let xt = b.transpose(&args[0], &[0, 2, 1]); // [2, 5, 3]
        let wt = b.transpose(&args[1], &[0, 2, 1]); // [2, 3, 4]
        let mixed = b.transpose(&args[3], &[2, 1, 0]); // [4, 3, 2]: not a swap of the last two
        let out = lower_matmul(&mut b, &xt, &wt).unwrap();
        assert_eq!(out.ty().dims, vec![2, 5, 4]);
        let plain = lower_matmul(&mut b, &args[2], &args[3]).unwrap();
        assert_eq!(plain.ty().dims, vec![2, 5, 4]);
        assert_eq!(b.transpose_of(&mixed).map(|(_, p)| p.to_vec()), Some(vec![2, 1, 0]));
        let text = b.finish(&[&out, &plain]);
        let dots: Vec<&str> = text.lines().filter(|l| l.contains("dot_general")).collect();
        assert_eq!(dots.len(), 2, "{text}");
        assert!(dots[0].contains("(%arg0, %arg1)"), "{}", dots[0]);
        assert!(
            dots[0].contains("lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [2]"),
            "{}",
            dots[0]
        );
        assert!(dots[1].contains("(%arg2, %arg3)"), "{}", dots[1]);
        assert!(
            dots[1].contains("lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]"),
            "{}",
            dots[1]
        );
    }
}
