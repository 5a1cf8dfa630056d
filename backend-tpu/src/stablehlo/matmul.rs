//! `MatMul`: batched `[..., m, k] × [..., k, n]` as one `dot_general`.

use super::builder::{FunctionBuilder, Value};
use super::cast::unsupported;
use super::host_call::{host_call, view_listing, HostOperand, HostView};
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
    let mut dims = da[..r - 1].to_vec();
    dims.push(db[r - 1]);
    if b.host_kernels() && host_matmul_target(compute).is_some() {
        let (mut xs, mut ys) = (host_operand(b, x), host_operand(b, y));
        xs.storage = b.convert(&xs.storage, compute);
        ys.storage = b.convert(&ys.storage, compute);
        let result = TensorType::new(compute, &dims);
        let out = host_product(b, [xs, ys], result).expect("a host float");
        return Ok(b.convert(&out, et));
    }
    let (x0, (_, x_cols)) = in_place(b, x);
    let (y0, (y_rows, _)) = in_place(b, y);
    let xa = b.convert(&x0, compute);
    let ya = b.convert(&y0, compute);
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
/// `element_type` operands; `None` for an element type without one.
pub fn host_matmul_target(element_type: ElementType) -> Option<String> {
    let name = match element_type {
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
        _ => return None,
    };
    Some(format!("oxtorch_matmul_{name}"))
}

/// A product as a call to the host kernel: `result` (`[..., m, n]`, row-major) of the operands'
/// views `[..., m, k]` and `[..., k, n]` (see `host_call`: a third operand lists them). `None`
/// when the result's element type has no host kernel.
pub fn host_product(
    b: &mut FunctionBuilder,
    operands: [HostOperand; 2],
    result: TensorType,
) -> Option<Value> {
    let target = host_matmul_target(result.element_type)?;
    let listing = view_listing(b, &[&operands[0].view, &operands[1].view]);
    let values = [&operands[0].storage, &operands[1].storage, &listing];
    Some(host_call(b, &target, &values, &[result]).remove(0))
}

/// What a host product reads for operand `v`: a value holding its storage, and the view of it.
/// Reshapes and unit-dim broadcasts are looked through to the value they came from, and so is a
/// transpose of the last two dims. The kernel then reads, say, a KV cache just written, in
/// place: given the reshaped value instead, XLA fuses the cache update once per reader and copies
/// the cache to keep the program's output apart.
fn host_operand(b: &FunctionBuilder, v: &Value) -> HostOperand {
    let dims = v.ty().dims.clone();
    let r = dims.len();
    let root = |x: &Value| b.row_major_source(x).unwrap_or(x).clone();
    let seen = b.row_major_source(v).unwrap_or(v);
    if let Some((src, perm)) = b.transpose_of(seen) {
        let (sd, sr) = (&seen.ty().dims, perm.len());
        if swaps_last_two(perm) && sd[sr - 2..] == dims[r - 2..] {
            // Stored as `dims` with the last two swapped; read through swapped strides.
            let mut stored = dims.clone();
            stored.swap(r - 2, r - 1);
            let mut view = HostView::row_major(&stored);
            view.dims = dims;
            view.strides.swap(r - 2, r - 1);
            return HostOperand { storage: root(src), view };
        }
    }
    HostOperand { storage: root(v), view: HostView::row_major(&dims) }
}

/// The value a product reads for operand `v`, with the dims of `v`'s rows and columns in it: `v`
/// itself, or, when `v` is a transpose of the last two dims (a transposed weight in `linear`, `kᵀ`
/// in attention), the transpose's operand, so that `dot_general` contracts it in place. Given the
/// transpose instead, XLA's CPU compiler fuses a transposing copy of the matrix into the product
/// (one per weight in every decode step).
fn in_place(b: &FunctionBuilder, v: &Value) -> (Value, (usize, usize)) {
    let r = v.ty().dims.len();
    if let Some((src, perm)) = b.transpose_of(v) {
        if perm.len() == r && swaps_last_two(perm) {
            return (src.clone(), (r - 1, r - 2));
        }
    }
    (v.clone(), (r - 2, r - 1))
}

/// Whether `perm` swaps the last two dims and keeps the others in place.
fn swaps_last_two(perm: &[i64]) -> bool {
    let r = perm.len();
    r >= 2
        && perm[..r - 2].iter().enumerate().all(|(i, &p)| p == i as i64)
        && perm[r - 2] == r as i64 - 1
        && perm[r - 1] == r as i64 - 2
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

    /// With host kernels, a product reads through reshapes, unit-dim broadcasts and a transpose
    /// of the last two dims to the value they came from (a flat KV cache, as attention reads it),
    /// and lists the views it reads (offset, dims, strides) in a third operand.
    #[test]
    fn host_products_read_reshaped_operands_at_their_source() {
        let f32 = |d: &[i64]| TensorType::new(ElementType::F32, d);
        let (mut b, args) = FunctionBuilder::new(&[f32(&[2, 3, 4]), f32(&[40]), f32(&[4, 5])]);
        b.set_host_kernels(true);
        // The cache: flat [40] seen as [2, 5, 4], transposed to [2, 4, 5], a unit dim in front.
        let cache = b.reshape(&args[1], &[2, 5, 4]);
        let kt = b.transpose(&cache, &[0, 2, 1]);
        let kt = b.broadcast(&kt, &[1, 2, 4, 5], &[1, 2, 3]);
        let q = b.broadcast(&args[0], &[1, 2, 3, 4], &[1, 2, 3]);
        let scores = lower_matmul(&mut b, &q, &kt).unwrap();
        assert_eq!(scores.ty().dims, vec![1, 2, 3, 5]);
        let x = b.reshape(&args[0], &[6, 4]);
        let plain = lower_matmul(&mut b, &x, &args[2]).unwrap();
        let text = b.finish(&[&scores, &plain]);
        let calls: Vec<&str> = text.lines().filter(|l| l.contains("custom_call")).collect();
        assert_eq!(calls.len(), 2, "{text}");
        assert!(calls.iter().all(|c| c.contains("\"oxtorch_matmul_f32\"")), "{text}");
        assert!(calls[0].contains("(%arg0, %arg1, %"), "{}", calls[0]);
        // q: [1, 2, 3, 4] row-major; kᵀ: the cache's [1, 2, 5, 4] read through swapped strides.
        let q_then_k =
            "dense<[0, 4, 1, 2, 3, 4, 24, 12, 4, 1, 0, 4, 1, 2, 4, 5, 40, 20, 1, 4]> : tensor<20xi64>";
        assert!(text.contains(q_then_k), "{text}");
        assert!(calls[1].contains("(%arg0, %arg2, %"), "{}", calls[1]);
        assert!(text.contains("dense<[0, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1]> : tensor<12xi64>"), "{text}");
    }
}
