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
    let batch: Vec<i64> = (0..r as i64 - 2).collect();
    let mut dims = da[..r - 1].to_vec();
    dims.push(db[r - 1]);
    let attrs = format!(
        "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [{b}], rhs_batching_dimensions = [{b}], \
         lhs_contracting_dimensions = [{x_cols}], rhs_contracting_dimensions = [{y_rows}]>, \
         precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
        b = batch.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
    );
    let out = b.op("stablehlo.dot_general", &[&xa, &ya], &attrs, TensorType::new(compute, &dims));
    Ok(b.convert(&out, et))
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
