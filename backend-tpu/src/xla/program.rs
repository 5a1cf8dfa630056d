//! The StableHLO text of the eager runtime's programs. Each takes flat 1-D buffers (one per
//! input, of the storage's length), materialises the inputs' views (except where a host kernel
//! reads a view in place: products and the cross-entropy on the CPU plugin), and returns flat
//! outputs.

use oxtorch_core::ops::{NnOp, Prim, UnaryOp};
use oxtorch_core::{DType, Layout};

use super::cache::Input;
use super::grid_box::grid_box;
use super::materialize::{
    broadcast, compact_dims, dynamic_slice_1d, gather_1d, index_type, int_const, iota, materialize,
    offset_value, reshape, slice_1d,
};
use crate::pjrt::{ElementType, Result, TensorType};
use crate::stablehlo::{
    host_cross_entropy, host_cross_entropy_target, host_matmul_target, host_product, lower, FunctionBuilder,
    HostOffset, HostOperand, HostView, Value,
};

fn flat_type(dtype: DType, len: usize) -> TensorType {
    TensorType::new(ElementType::from(dtype), &[len as i64])
}

/// The 0-d type of the runtime storage offset of an input (see [`Input::has_offset`]).
pub(crate) fn offset_type(input: &Input<'_>) -> TensorType {
    TensorType::new(index_type(input.len), &[])
}

/// Argument types: the flat buffers, then `extra`, then the offsets of the inputs that have one.
fn arg_types(inputs: &[Input<'_>], extra: &[TensorType]) -> Vec<TensorType> {
    let mut types: Vec<TensorType> = inputs.iter().map(|i| flat_type(i.dtype, i.len)).collect();
    types.extend_from_slice(extra);
    types.extend(inputs.iter().filter(|i| i.has_offset()).map(offset_type));
    types
}

/// The runtime offset value of each input (`None` for offset 0), from the trailing arguments.
fn offset_args<'v>(inputs: &[Input<'_>], args: &'v [Value]) -> Vec<Option<&'v Value>> {
    let mut next = args.len() - inputs.iter().filter(|i| i.has_offset()).count();
    inputs
        .iter()
        .map(|i| {
            i.has_offset().then(|| {
                next += 1;
                &args[next - 1]
            })
        })
        .collect()
}

fn flatten(b: &mut FunctionBuilder, v: &Value) -> Value {
    let n: i64 = v.ty().dims.iter().product();
    reshape(b, v, &[n.max(0) as usize])
}

/// `prim` on strided inputs; its products call oxtorch's host kernels when `host_kernels` (a
/// program for the CPU plugin). Fails with `Error::Unsupported` when the prim has no lowering.
pub(crate) fn prim_program(prim: &Prim, inputs: &[Input<'_>], host_kernels: bool) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(&arg_types(inputs, &[]));
    b.set_host_kernels(host_kernels);
    let starts = offset_args(inputs, &args);
    let flat = emit_prim(&mut b, prim, inputs, &args[..inputs.len()], &starts, true)?;
    let refs: Vec<&Value> = flat.iter().collect();
    Ok(b.finish(&refs))
}

/// Emits `prim` on the flat buffers `flat` seen through `inputs`' views (runtime offsets
/// `starts`) and returns its outputs, flattened. Shared by the eager programs and the fused ones.
/// `may_run_flat` lets an elementwise prim on dense blocks skip the reshapes ([`runs_flat`]).
pub(crate) fn emit_prim(
    b: &mut FunctionBuilder,
    prim: &Prim,
    inputs: &[Input<'_>],
    flat: &[Value],
    starts: &[Option<&Value>],
    may_run_flat: bool,
) -> Result<Vec<Value>> {
    match prim {
        Prim::MatMul => {
            if let Some(out) = strided_product(b, inputs, flat, starts) {
                return Ok(vec![flatten(b, &out)]);
            }
        }
        Prim::Nn(NnOp::CrossEntropy { ignore_index }) => {
            if let Some(outs) = strided_cross_entropy(b, inputs, flat, starts, *ignore_index) {
                return Ok(outs);
            }
        }
        _ => {}
    }
    let values: Vec<Value> = if may_run_flat && runs_flat(prim, inputs) {
        inputs.iter().zip(flat).zip(starts).map(|((i, a), s)| flat_operand(b, a, i.layout, *s)).collect()
    } else {
        inputs.iter().zip(flat).zip(starts).map(|((i, a), s)| materialize(b, a, i.layout, *s)).collect()
    };
    let outputs = match prim {
        Prim::Copy => values,
        Prim::Cast(d) if *d == inputs[0].dtype => values,
        _ => lower(b, prim, &values)?,
    };
    let outputs: Vec<Value> = outputs.iter().map(|v| flatten(b, v)).collect();
    if let (Prim::Copy, [input]) = (prim, inputs) {
        if b.host_kernels() && !input.layout.is_contiguous() && !flat.contains(&outputs[0]) {
            let source = host_operand(b, &flat[0], input.layout, starts[0]);
            b.record_copy(&outputs[0], source);
        }
    }
    Ok(outputs)
}

/// The cross-entropy forward as the host kernel, reading the logits' rows in place (see
/// [`logit_rows`]); its outputs flattened. `None` where [`lower`] emits it instead: without host
/// kernels, for an element type without a kernel, for no rows or no classes.
fn strided_cross_entropy(
    b: &mut FunctionBuilder,
    inputs: &[Input<'_>],
    flat: &[Value],
    starts: &[Option<&Value>],
    ignore_index: i64,
) -> Option<Vec<Value>> {
    let [x, t] = inputs else { return None };
    let (dims, et) = (x.layout.dims(), ElementType::from(x.dtype));
    if !b.host_kernels()
        || host_cross_entropy_target(et).is_none()
        || t.dtype != DType::I64
        || dims.len() != 2
    {
        return None;
    }
    let (n, c) = (dims[0], dims[1]);
    if n == 0 || c == 0 || t.layout.dims() != [n] {
        return None;
    }
    let logits = logit_rows(b, &flat[0], x, starts[0], c)?;
    let target = materialize(b, &flat[1], t.layout, starts[1]);
    let outs = host_cross_entropy(b, &logits, &target, ignore_index)?;
    Some(outs.iter().map(|v| flatten(b, v)).collect())
}

/// The logits' rows (`c` classes each) as the cross-entropy kernel reads them: when the input is
/// a whole dense copy of a strided view whose rows are rows of classes (a language model's logits
/// narrowed to the predicting positions, then flattened to `[N, C]`), that view, so the copy
/// goes unread; otherwise the input's own view when its classes are adjacent. `None` when
/// neither holds.
fn logit_rows(
    b: &FunctionBuilder,
    flat: &Value,
    x: &Input<'_>,
    start: Option<&Value>,
    c: usize,
) -> Option<HostOperand> {
    let l = x.layout;
    if start.is_none() && l.offset() == 0 && l.is_contiguous() && l.numel() == x.len {
        if let Some(source) = b.copy_source(flat) {
            let v = &source.view;
            if v.dims.last() == Some(&(c as i64)) && (c == 1 || v.strides.last() == Some(&1)) {
                return Some(source.clone());
            }
        }
    }
    (c == 1 || l.strides()[1] == 1).then(|| host_operand(b, flat, l, start))
}

/// A product whose operands the host kernel reads as the views they are, with no copy of a
/// transposed, permuted or sliced operand (see `stablehlo::host_product`): f32 and f64 products in
/// a program for the CPU plugin. `None` for anything else, which [`lower`] then emits (or rejects).
fn strided_product(
    b: &mut FunctionBuilder,
    inputs: &[Input<'_>],
    flat: &[Value],
    starts: &[Option<&Value>],
) -> Option<Value> {
    let [a, c] = inputs else { return None };
    let et = ElementType::from(a.dtype);
    if !b.host_kernels() || c.dtype != a.dtype || host_matmul_target(et).is_none() {
        return None;
    }
    let (da, dc) = (a.layout.dims(), c.layout.dims());
    let r = da.len();
    if r < 2 || dc.len() != r || da[..r - 2] != dc[..r - 2] || da[r - 1] != dc[r - 2] {
        return None;
    }
    let operand = |i: usize| host_operand(b, &flat[i], inputs[i].layout, starts[i]);
    let operands = [operand(0), operand(1)];
    let mut dims: Vec<i64> = da[..r - 1].iter().map(|&d| d as i64).collect();
    dims.push(dc[r - 1] as i64);
    host_product(b, operands, TensorType::new(et, &dims))
}

/// What a host kernel reads of an input: its storage (as the value it was reshaped from, if any:
/// the same elements in the same order) and its view, with the offset a runtime value when the
/// program takes it as one.
fn host_operand(b: &FunctionBuilder, flat: &Value, layout: &Layout, start: Option<&Value>) -> HostOperand {
    let offset = match start {
        Some(s) => HostOffset::Runtime(s.clone()),
        None => HostOffset::Static(layout.offset() as i64),
    };
    HostOperand {
        storage: b.row_major_source(flat).unwrap_or(flat).clone(),
        view: HostView::strided(layout.dims(), layout.strides(), offset),
    }
}

/// Whether `prim` is elementwise and its inputs are dense row-major blocks of one shape, or single
/// values broadcast to that shape (a scalar operand): it can then run on the flat blocks as they
/// are, with no reshape around it. That lets XLA write a donated buffer in place: a reshape
/// between a parameter and its new value (an optimizer's state updated with `mul_`/`add_`) made
/// XLA copy the parameter first.
///
/// Fused programs run flat only the ops that read program arguments (or other flat ops), and the
/// ops only flat ops read: a flat op right after a matmul lets XLA fuse the two into an output
/// fusion that wants the weight transposed, copying it on every call (a 3x slower decode step).
pub(crate) fn runs_flat(prim: &Prim, inputs: &[Input<'_>]) -> bool {
    let elementwise = match prim {
        // Softmax normalises along a dim: not elementwise.
        Prim::Unary(op) => !matches!(op, UnaryOp::Softmax { .. }),
        Prim::Binary(_) | Prim::Compare(_) | Prim::Where | Prim::Cast(_) | Prim::Copy => true,
        _ => false,
    };
    let Some(first) = inputs.first() else { return false };
    elementwise
        && first.layout.numel() > 0
        && inputs.iter().any(|i| i.layout.is_contiguous())
        && inputs.iter().all(|i| {
            i.layout.dims() == first.layout.dims() && (i.layout.is_contiguous() || is_splat(i.layout))
        })
}

/// Whether every element of the view is the same storage element (a 0-d value broadcast).
fn is_splat(layout: &Layout) -> bool {
    layout.dims().iter().zip(layout.strides()).all(|(&d, &s)| d == 1 || s == 0)
}

/// An operand of a flat elementwise op (see [`runs_flat`]): a dense view's block, or a broadcast
/// value's element repeated to the block's length.
fn flat_operand(b: &mut FunctionBuilder, flat: &Value, layout: &Layout, start: Option<&Value>) -> Value {
    if layout.is_contiguous() {
        return dense_block(b, flat, layout, start);
    }
    let one = match start {
        Some(s) => dynamic_slice_1d(b, flat, s, 1),
        None => slice_1d(b, flat, layout.offset(), 1),
    };
    let scalar = reshape(b, &one, &[]);
    b.broadcast_scalar(&scalar, &[layout.numel() as i64])
}

/// The `layout.numel()` elements of a contiguous view, as a 1-D value (the buffer itself when the
/// view is all of it).
fn dense_block(b: &mut FunctionBuilder, flat: &Value, layout: &Layout, start: Option<&Value>) -> Value {
    match start {
        Some(s) => dynamic_slice_1d(b, flat, s, layout.numel()),
        None => slice_1d(b, flat, layout.offset(), layout.numel()),
    }
}

/// A flat tensor of `numel` elements of `dtype`, all equal to a 0-d input.
pub(crate) fn full_program(numel: usize, dtype: DType) -> String {
    let scalar = TensorType::new(ElementType::from(dtype), &[]);
    let (mut b, args) = FunctionBuilder::new(&[scalar]);
    let out = emit_full(&mut b, &args[0], numel);
    b.finish(&[&out])
}

/// A flat value of `numel` copies of the 0-d `value`.
pub(crate) fn emit_full(b: &mut FunctionBuilder, value: &Value, numel: usize) -> Value {
    broadcast(b, value, &[numel], &[])
}

/// For each position `j` of a flat buffer of `len` elements: whether the (non-overlapping) view
/// `layout` covers it, and the row-major index of the view element there.
fn inverse_map(
    b: &mut FunctionBuilder,
    layout: &Layout,
    len: usize,
    start: Option<&Value>,
) -> (Value, Value) {
    // A non-overlapping view has at most `len` elements.
    let it = index_type(len);
    let ty = TensorType::new(it, &[len as i64]);
    let j = iota(b, it, &[len], 0);
    let zero = int_const(b, &ty, 0);
    let offset = offset_value(b, &ty, start, layout.offset());
    let shifted = b.same("stablehlo.subtract", &[&j, &offset]);
    let mut valid = b.compare("GE", &shifted, &zero);
    let mut rest = b.same("stablehlo.maximum", &[&shifted, &zero]);
    let mut index = zero.clone();
    let row_major = Layout::contiguous(layout.dims().to_vec());
    let mut dims = compact_dims(layout);
    dims.sort_by_key(|d| std::cmp::Reverse(d.2));
    for (d, n, s) in dims {
        let stride = int_const(b, &ty, s);
        let q = b.same("stablehlo.divide", &[&rest, &stride]);
        let qs = b.same("stablehlo.multiply", &[&q, &stride]);
        rest = b.same("stablehlo.subtract", &[&rest, &qs]);
        let size = int_const(b, &ty, n);
        let inside = b.compare("LT", &q, &size);
        valid = b.same("stablehlo.and", &[&valid, &inside]);
        let m = int_const(b, &ty, row_major.strides()[d]);
        let part = b.same("stablehlo.multiply", &[&q, &m]);
        index = b.same("stablehlo.add", &[&index, &part]);
    }
    let exact = b.compare("EQ", &rest, &zero);
    valid = b.same("stablehlo.and", &[&valid, &exact]);
    (valid, index)
}

/// Writes the row-major `values` (of `dst_layout`'s shape, dst's dtype) into the flat `dst`.
fn write_values(
    b: &mut FunctionBuilder,
    dst: &Value,
    dst_layout: &Layout,
    start: Option<&Value>,
    values: &Value,
) -> Value {
    let len = dst.ty().dims[0] as usize;
    let numel = dst_layout.numel();
    let flat = flatten(b, values);
    if numel == 0 {
        return dst.clone();
    }
    if dst_layout.is_contiguous() {
        if dst_layout.offset() == 0 && numel == len {
            return flat;
        }
        let at = match start {
            Some(s) => s.clone(),
            None => int_const(b, &TensorType::new(index_type(len), &[]), dst_layout.offset()),
        };
        let ty = dst.ty().clone();
        return b.op("stablehlo.dynamic_update_slice", &[dst, &flat, &at], "", ty);
    }
    if let Some(grid) = grid_box(dst_layout, len) {
        let compact_sizes: Vec<usize> = compact_dims(dst_layout).iter().map(|c| c.1).collect();
        return grid.write(b, dst, start, dst_layout.offset(), values, &compact_sizes);
    }
    let (valid, index) = inverse_map(b, dst_layout, len, start);
    let gathered = gather_1d(b, &flat, &index);
    b.select(&valid, &gathered, dst)
}

/// `dst[dst_layout] = cast(src[src_layout])`: inputs (dst, src, their offsets), output the new flat dst. The dst
/// view must not overlap itself. Fails with `Error::Unsupported` when the cast has no lowering.
pub(crate) fn copy_program(dst: Input<'_>, src: Input<'_>) -> Result<String> {
    let inputs = [dst, src];
    let (mut b, args) = FunctionBuilder::new(&arg_types(&inputs, &[]));
    let starts = offset_args(&inputs, &args);
    let out = emit_copy(&mut b, dst, src, [&args[0], &args[1]], [starts[0], starts[1]])?;
    Ok(b.finish(&[&out]))
}

/// Emits `dst[dst_layout] = cast(src[src_layout])` on the flat values `flat` (dst, src) with
/// runtime offsets `starts`; returns the new flat dst.
pub(crate) fn emit_copy(
    b: &mut FunctionBuilder,
    dst: Input<'_>,
    src: Input<'_>,
    flat: [&Value; 2],
    starts: [Option<&Value>; 2],
) -> Result<Value> {
    // Dense onto dense of one shape (an in-place update's result): the flat block as it is.
    let dense =
        dst.layout.is_contiguous() && src.layout.is_contiguous() && dst.layout.dims() == src.layout.dims();
    let mut values = if dense {
        dense_block(b, flat[1], src.layout, starts[1])
    } else {
        materialize(b, flat[1], src.layout, starts[1])
    };
    if src.dtype != dst.dtype {
        values = lower(b, &Prim::Cast(dst.dtype), &[values])?.swap_remove(0);
    }
    Ok(write_values(b, flat[0], dst.layout, starts[0], &values))
}

/// `dst[dst_layout] = value`: inputs (dst, 0-d value of dst's dtype, dst's offset), output the new
/// flat dst.
/// Dims of stride 0 are ignored (every copy gets the same value); the rest must not overlap.
pub(crate) fn fill_program(dst: Input<'_>) -> String {
    let scalar = TensorType::new(ElementType::from(dst.dtype), &[]);
    let inputs = [dst];
    let (mut b, args) = FunctionBuilder::new(&arg_types(&inputs, &[scalar]));
    let starts = offset_args(&inputs, &args);
    let out = emit_fill(&mut b, dst, &args[0], &args[1], starts[0]);
    b.finish(&[&out])
}

/// Emits `dst[dst_layout] = value` (a 0-d value of dst's dtype) on the flat `flat`; returns the
/// new flat dst.
pub(crate) fn emit_fill(
    b: &mut FunctionBuilder,
    dst: Input<'_>,
    flat: &Value,
    value: &Value,
    start: Option<&Value>,
) -> Value {
    let values = broadcast(b, value, dst.layout.dims(), &[]);
    write_values(b, flat, dst.layout, start, &values)
}

#[cfg(test)]
mod tests {
    use oxtorch_core::ops::BinaryOp;

    use super::*;

    fn input(layout: &Layout) -> Input<'_> {
        Input { dtype: DType::F32, len: 20, layout }
    }

    #[test]
    fn elementwise_prims_on_dense_blocks_run_flat() {
        let add = Prim::Binary(BinaryOp::Add);
        let dense = Layout::contiguous(vec![4, 5]);
        let text = prim_program(&add, &[input(&dense), input(&dense)], false).unwrap();
        assert!(!text.contains("reshape"), "a flat add reshaped its inputs:\n{text}");
        assert!(text.contains("tensor<20xf32>"), "{text}");
        // A block at an offset is sliced, still without reshapes.
        let tail = Layout::new(vec![2, 5], vec![5, 1], 10).unwrap();
        let text = prim_program(&add, &[input(&tail), input(&tail)], false).unwrap();
        assert!(text.contains("stablehlo.dynamic_slice") && !text.contains("reshape"), "{text}");
        // A transposed input, a broadcast or softmax take the shaped path.
        let transposed = dense.transpose(0, 1).unwrap();
        let text = prim_program(&add, &[input(&transposed), input(&transposed)], false).unwrap();
        assert!(text.contains("transpose"), "{text}");
        let softmax = Prim::Unary(UnaryOp::Softmax { dim: 1, log: false });
        let text = prim_program(&softmax, &[input(&dense)], false).unwrap();
        assert!(text.contains("tensor<4x5xf32>"), "{text}");
    }

    /// With host kernels, a product reads attention's heads (permuted slices of one packed
    /// `[b, t, 3, h, d]` projection) and a transposed view as they are: no transpose, slice or
    /// gather before the call, and the listing carries each view, with a runtime offset spliced
    /// in. f16 still materialises its operands for the f32 kernel.
    #[test]
    fn host_products_read_strided_operands_in_place() {
        let packed = Layout::contiguous(vec![2, 3, 3, 2, 4]); // [b, t, 3, h, d]
        let heads = packed.permute(&[2, 0, 3, 1, 4]).unwrap(); // [3, b, h, t, d]
        let (q, k) = (heads.select(0, 0).unwrap(), heads.select(0, 1).unwrap());
        let kt = k.transpose(2, 3).unwrap();
        let len = packed.numel();
        let inputs =
            [Input { dtype: DType::F32, len, layout: &q }, Input { dtype: DType::F32, len, layout: &kt }];
        assert!(
            inputs.iter().all(Input::has_offset),
            "a view smaller than its buffer takes its offset at run time"
        );
        let text = prim_program(&Prim::MatMul, &inputs, true).unwrap();
        let calls: Vec<&str> = text.lines().filter(|l| l.contains("custom_call")).collect();
        assert_eq!(calls.len(), 1, "{text}");
        for op in ["transpose", "gather", "stablehlo.slice", "dynamic_slice"] {
            assert!(!text.contains(op), "an operand was copied ({op}):\n{text}");
        }
        assert!(calls[0].contains("(%arg0, %arg1, %"), "{}", calls[0]);
        assert!(text.contains("stablehlo.concatenate"), "the runtime offsets are spliced in:\n{text}");
        // q: [2, 2, 3, 4] with strides [72, 4, 24, 1]; kᵀ: [2, 2, 4, 3], strides [72, 4, 1, 24].
        assert!(text.contains("dense<[4, 2, 2, 3, 4, 72, 4, 24, 1]>"), "{text}");
        assert!(text.contains("dense<[4, 2, 2, 4, 3, 72, 4, 1, 24]>"), "{text}");
        // Without host kernels the operands are materialised for `dot_general`.
        let text = prim_program(&Prim::MatMul, &inputs, false).unwrap();
        assert!(text.contains("dot_general") && text.contains("transpose"), "{text}");
        let half =
            [Input { dtype: DType::F16, len, layout: &q }, Input { dtype: DType::F16, len, layout: &kt }];
        let text = prim_program(&Prim::MatMul, &half, true).unwrap();
        assert!(text.contains("transpose") && text.contains("custom_call"), "{text}");
    }

    /// A cross-entropy whose logits are a dense copy of a narrowed view (a language model's
    /// logits without the last position, flattened to `[N, C]`) reads the view itself: its call
    /// takes the narrowed view's storage, the listing holds that view, and the copy is left for
    /// XLA to drop. Without host kernels nothing is recorded.
    #[test]
    fn cross_entropy_reads_through_a_copy_of_narrowed_logits() {
        let full = Layout::contiguous(vec![2, 4, 5]);
        let narrowed = full.narrow(1, 0, 3).unwrap(); // [2, 3, 5], row stride 5, batch stride 20
        let dense = Layout::contiguous(vec![6, 5]);
        let targets = Layout::contiguous(vec![6]);
        for host in [true, false] {
            let (mut b, args) = FunctionBuilder::new(&[
                TensorType::new(ElementType::F32, &[40]),
                TensorType::new(ElementType::S64, &[6]),
            ]);
            b.set_host_kernels(host);
            let copy_in = [Input { dtype: DType::F32, len: 40, layout: &narrowed }];
            let copied = emit_prim(&mut b, &Prim::Copy, &copy_in, &args[..1], &[None], false).unwrap();
            assert_eq!(b.copy_source(&copied[0]).is_some(), host);
            let ce_in = [
                Input { dtype: DType::F32, len: 30, layout: &dense },
                Input { dtype: DType::I64, len: 6, layout: &targets },
            ];
            let ce = Prim::Nn(NnOp::CrossEntropy { ignore_index: -100 });
            let flat = [copied[0].clone(), args[1].clone()];
            let outs = emit_prim(&mut b, &ce, &ce_in, &flat, &[None, None], false).unwrap();
            let text = b.finish(&[&outs[0], &outs[1]]);
            let calls: Vec<&str> = text.lines().filter(|l| l.contains("oxtorch_cross_entropy_f32")).collect();
            if host {
                assert_eq!(calls.len(), 1, "{text}");
                assert!(
                    calls[0].contains("(%arg0, %arg1, %"),
                    "the call reads the narrowed storage:\n{text}"
                );
                assert!(text.contains("dense<[0, 3, 2, 3, 5, 20, 5, 1]>"), "{text}");
            } else {
                assert!(calls.is_empty(), "{text}");
            }
        }
        // Not through the copy: a copy whose classes are not adjacent in its source (the copy
        // itself is read), and a cross-entropy reading only part of the copy (its own view).
        let transposed = Layout::contiguous(vec![5, 6]).transpose(0, 1).unwrap(); // [6, 5]
        let first_rows = Layout::contiguous(vec![4, 5]);
        for (source, ce_view, ce_rows) in [(&transposed, &dense, 6), (&narrowed, &first_rows, 4)] {
            let (mut b, args) = FunctionBuilder::new(&[
                TensorType::new(ElementType::F32, &[40]),
                TensorType::new(ElementType::S64, &[ce_rows as i64]),
            ]);
            b.set_host_kernels(true);
            let copy_in = [Input { dtype: DType::F32, len: 40, layout: source }];
            let copied = emit_prim(&mut b, &Prim::Copy, &copy_in, &args[..1], &[None], false).unwrap();
            let rows = Layout::contiguous(vec![ce_rows]);
            let ce_in = [
                Input { dtype: DType::F32, len: 30, layout: ce_view },
                Input { dtype: DType::I64, len: ce_rows, layout: &rows },
            ];
            let ce = Prim::Nn(NnOp::CrossEntropy { ignore_index: -100 });
            let flat = [copied[0].clone(), args[1].clone()];
            let outs = emit_prim(&mut b, &ce, &ce_in, &flat, &[None, None], false).unwrap();
            let text = b.finish(&[&outs[0], &outs[1]]);
            let call = text.lines().find(|l| l.contains("oxtorch_cross_entropy_f32")).expect("a host call");
            assert!(!call.contains("(%arg0,"), "read through a copy it may not:\n{text}");
        }
    }
}
