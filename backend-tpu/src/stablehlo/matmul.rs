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
    let mut dims = da[..r - 1].to_vec();
    dims.push(db[r - 1]);
    if b.host_kernels() && host_matmul_target(compute).is_some() {
        let (xs, x_view) = host_operand(b, x);
        let (ys, y_view) = host_operand(b, y);
        let (xs, ys) = (b.convert(&xs, compute), b.convert(&ys, compute));
        let result = TensorType::new(compute, &dims);
        let operands =
            [HostOperand { storage: &xs, view: x_view }, HostOperand { storage: &ys, view: y_view }];
        let out = host_product(b, operands, result).expect("a host float");
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

/// The offset of a host operand's element 0 in its storage: known when the program is built, or
/// a 0-d integer value the program takes at run time.
#[derive(Clone, Debug)]
pub enum HostOffset<'a> {
    /// An offset known when the program is built.
    Static(i64),
    /// A 0-d integer value of the program.
    Runtime(&'a Value),
}

/// The strided view a host product reads of its operand's storage: `dims` `[..., rows, cols]`,
/// `strides` in elements (0 for a broadcast dim), and the offset of element 0. This is the CPU
/// backend's `Layout`, so the kernel reads a transposed weight, attention's heads (a permuted,
/// sliced view of a packed q/k/v projection) or a narrowed cache in place.
#[derive(Clone, Debug)]
pub struct HostView<'a> {
    /// sizes
    pub dims: Vec<i64>,
    /// strides, in elements
    pub strides: Vec<i64>,
    /// offset of element 0
    pub offset: HostOffset<'a>,
}

/// One operand of a host product: a value holding the storage (its elements in row-major order,
/// whatever its dims) and the view of it the product reads.
#[derive(Clone, Debug)]
pub struct HostOperand<'a> {
    /// the storage
    pub storage: &'a Value,
    /// what the product reads of it
    pub view: HostView<'a>,
}

/// A product as a call to the host kernel: `result` (`[..., m, n]`, row-major) of the operands'
/// views. A third operand lists the views,
/// `[offset_a, rank_a, dims_a..., strides_a..., offset_b, rank_b, dims_b..., strides_b...]`; a
/// runtime offset is spliced into it with a `concatenate`. `None` when the result's element type
/// has no host kernel.
pub fn host_product(
    b: &mut FunctionBuilder,
    operands: [HostOperand<'_>; 2],
    result: TensorType,
) -> Option<Value> {
    let target = host_matmul_target(result.element_type)?;
    let layout = |rank: usize| {
        let dims: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        format!("dense<[{}]> : tensor<{rank}xindex>", dims.join(", "))
    };
    // The listing in pieces: runs of constants, and runtime offsets as 1-element values.
    let mut pieces: Vec<Value> = Vec::new();
    let mut run: Vec<i64> = Vec::new();
    let s64 = ElementType::S64;
    for op in &operands {
        let v = &op.view;
        match v.offset {
            HostOffset::Static(o) => run.push(o),
            HostOffset::Runtime(start) => {
                if !run.is_empty() {
                    pieces.push(s64_constant(b, &std::mem::take(&mut run)));
                }
                let wide = b.convert(start, s64);
                pieces.push(b.reshape(&wide, &[1]));
            }
        }
        run.push(v.dims.len() as i64);
        run.extend_from_slice(&v.dims);
        run.extend_from_slice(&v.strides);
    }
    pieces.push(s64_constant(b, &run));
    let refs: Vec<&Value> = pieces.iter().collect();
    let listing = b.concat(&refs, 0);
    let values = [operands[0].storage, operands[1].storage, &listing];
    let layouts: Vec<String> = values.iter().map(|v| layout(v.ty().dims.len())).collect();
    let attrs = format!(
        "api_version = 4 : i32, backend_config = {{}}, call_target_name = \"{target}\", \
         operand_layouts = [{}], result_layouts = [{}]",
        layouts.join(", "),
        layout(result.dims.len()),
    );
    Some(b.op("stablehlo.custom_call", &values, &attrs, result))
}

/// A 1-D s64 constant of `values`.
fn s64_constant(b: &mut FunctionBuilder, values: &[i64]) -> Value {
    let n = values.len() as i64;
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    let attrs = format!("value = dense<[{}]> : tensor<{n}xi64>", items.join(", "));
    b.op("stablehlo.constant", &[], &attrs, TensorType::new(ElementType::S64, &[n]))
}

/// What a host product reads for operand `v`: a value holding its storage, and the view of it.
/// Reshapes and unit-dim broadcasts are looked through to the value they came from, and so is a
/// transpose of the last two dims. The kernel then reads, say, a KV cache just written, in
/// place: given the reshaped value instead, XLA fuses the cache update once per reader and copies
/// the cache to keep the program's output apart.
fn host_operand<'a>(b: &FunctionBuilder, v: &Value) -> (Value, HostView<'a>) {
    let dims = v.ty().dims.clone();
    let r = dims.len();
    let root = |x: &Value| b.row_major_source(x).unwrap_or(x).clone();
    let row_major = |dims: &[i64]| {
        let mut strides = vec![1i64; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1].max(1);
        }
        strides
    };
    let seen = b.row_major_source(v).unwrap_or(v);
    if let Some((src, perm)) = b.transpose_of(seen) {
        let (sd, sr) = (&seen.ty().dims, perm.len());
        if swaps_last_two(perm) && sd[sr - 2..] == dims[r - 2..] {
            // Stored as `dims` with the last two swapped; read through swapped strides.
            let mut stored = dims.clone();
            stored.swap(r - 2, r - 1);
            let mut strides = row_major(&stored);
            strides.swap(r - 2, r - 1);
            return (root(src), HostView { dims, strides, offset: HostOffset::Static(0) });
        }
    }
    let strides = row_major(&dims);
    (root(v), HostView { dims, strides, offset: HostOffset::Static(0) })
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
