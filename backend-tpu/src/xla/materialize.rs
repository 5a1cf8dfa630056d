//! Emitting a strided view of a flat buffer as a dense value: the program-side half of
//! "storage = flat buffer + layout".
//!
//! A view's elements are `flat[offset + Σ index_d · stride_d]`. Dims of size 1 and stride 0
//! (broadcast) are dropped first and restored at the end with one `broadcast_in_dim`. What remains is
//! a permutation of a contiguous block (a `slice` of the flat buffer, a `reshape` and a
//! `transpose`: free or cheap in XLA), a box of the buffer's grid (`grid_box`: a `dynamic_slice` of
//! the reshaped buffer), another stepped view whose strides nest (`x[:, ::2]`, a column:
//! `slice(reshape(block))`), or anything else, including overlapping views, which is a `gather` at
//! flat indices computed from `iota`s.

use oxtorch_core::Layout;

use super::grid_box::grid_box;
use crate::pjrt::{ElementType, TensorType};
use crate::stablehlo::{FunctionBuilder, Value};

/// `array<i64: a, b, ...>` (or `array<i64>` when empty), as StableHLO's integer-list attributes.
pub(crate) fn i64_array(values: impl IntoIterator<Item = i64>) -> String {
    let items: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    if items.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", items.join(", "))
    }
}

fn dims_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| d as i64).collect()
}

/// `reshape(x)` to `dims` (nothing when the shape already matches).
pub(crate) fn reshape(b: &mut FunctionBuilder, x: &Value, dims: &[usize]) -> Value {
    b.reshape(x, &dims_i64(dims))
}

/// `x[start..start + n]` of a 1-D value (nothing when that is all of it).
pub(crate) fn slice_1d(b: &mut FunctionBuilder, x: &Value, start: usize, n: usize) -> Value {
    if start == 0 && x.ty().dims == [n as i64] {
        return x.clone();
    }
    let attrs = format!(
        "start_indices = {}, limit_indices = {}, strides = {}",
        i64_array([start as i64]),
        i64_array([(start + n) as i64]),
        i64_array([1])
    );
    b.op("stablehlo.slice", &[x], &attrs, TensorType::new(x.ty().element_type, &[n as i64]))
}

/// `broadcast_in_dim(x)` to `dims`, operand dim `i` becoming result dim `mapping[i]`.
pub(crate) fn broadcast(b: &mut FunctionBuilder, x: &Value, dims: &[usize], mapping: &[usize]) -> Value {
    let map: Vec<i64> = mapping.iter().map(|&m| m as i64).collect();
    b.broadcast(x, &dims_i64(dims), &map)
}

/// The integer type flat indices into `extent` elements need.
pub(crate) fn index_type(extent: usize) -> ElementType {
    if extent <= i32::MAX as usize {
        ElementType::S32
    } else {
        ElementType::S64
    }
}

/// An integer constant of type `ty` (0-d or any shape).
pub(crate) fn int_const(b: &mut FunctionBuilder, ty: &TensorType, value: usize) -> Value {
    b.splat(ty, value as f64)
}

/// `iota` along `dim` of an integer tensor of `dims`.
pub(crate) fn iota(b: &mut FunctionBuilder, et: ElementType, dims: &[usize], dim: usize) -> Value {
    let attrs = format!("iota_dimension = {dim} : i64");
    b.op("stablehlo.iota", &[], &attrs, TensorType::new(et, &dims_i64(dims)))
}

/// `flat[indices]` of a 1-D `flat`; the result has the shape of `indices`.
pub(crate) fn gather_1d(b: &mut FunctionBuilder, flat: &Value, indices: &Value) -> Value {
    let rank = indices.ty().dims.len();
    let attrs = format!(
        "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], \
         index_vector_dim = {rank}>, slice_sizes = {}, indices_are_sorted = false",
        i64_array([1])
    );
    let ty = TensorType { element_type: flat.ty().element_type, dims: indices.ty().dims.clone() };
    b.op("stablehlo.gather", &[flat, indices], &attrs, ty)
}

/// The dims of a layout that matter: size > 1 and stride > 0, as `(dim, size, stride)`.
pub(crate) fn compact_dims(layout: &Layout) -> Vec<(usize, usize, usize)> {
    layout
        .dims()
        .iter()
        .zip(layout.strides())
        .enumerate()
        .filter(|(_, (&n, &s))| n > 1 && s > 0)
        .map(|(d, (&n, &s))| (d, n, s))
        .collect()
}

/// `x[start..start + n]` of a 1-D value, `start` a 0-d integer runtime value.
pub(crate) fn dynamic_slice_1d(b: &mut FunctionBuilder, x: &Value, start: &Value, n: usize) -> Value {
    let attrs = format!("slice_sizes = {}", i64_array([n as i64]));
    b.op("stablehlo.dynamic_slice", &[x, start], &attrs, TensorType::new(x.ty().element_type, &[n as i64]))
}

/// The storage offset as a value of `ty`: the runtime `start` (a 0-d integer) broadcast, or the
/// layout's offset as a constant.
pub(crate) fn offset_value(
    b: &mut FunctionBuilder,
    ty: &TensorType,
    start: Option<&Value>,
    offset: usize,
) -> Value {
    match start {
        Some(s) => {
            let dims: Vec<usize> = ty.dims.iter().map(|&d| d as usize).collect();
            broadcast(b, s, &dims, &[])
        }
        None => int_const(b, ty, offset),
    }
}

/// Whether dims sorted by decreasing stride (`(size, stride)`) nest: each stride a multiple of the
/// next, and each dim fitting inside one step of the dim before (a stepped slice such as
/// `x[:, ::2]`, a column, every other row).
pub(crate) fn nested(sorted: &[(usize, usize)]) -> bool {
    !sorted.is_empty() && sorted.windows(2).all(|w| w[0].1 % w[1].1 == 0 && w[1].0 * w[1].1 <= w[0].1)
}

/// A nested view (see [`nested`]) as `slice(reshape(block))`: the block of `size₀ · stride₀`
/// elements from the offset, reshaped to `[size₀, stride₀/stride₁, ..., stride_last]`, and the
/// first `size_k` entries of each dim (entry 0 of the last) kept. The buffer is padded at its end
/// when the block runs past it (a runtime offset always pads by `stride₀`, which is enough).
fn nested_view(
    b: &mut FunctionBuilder,
    flat: &Value,
    sorted: &[(usize, usize)],
    offset: usize,
    start: Option<&Value>,
) -> Value {
    let et = flat.ty().element_type;
    let len = flat.ty().dims[0] as usize;
    let (n0, s0) = sorted[0];
    let block_len = n0 * s0;
    let pad = match start {
        Some(_) => s0,
        None => (offset + block_len).saturating_sub(len),
    };
    let source = if pad == 0 {
        flat.clone()
    } else {
        let zero = b.splat(&TensorType::new(et, &[]), 0.0);
        let attrs = format!(
            "edge_padding_low = {}, edge_padding_high = {}, interior_padding = {}",
            i64_array([0]),
            i64_array([pad as i64]),
            i64_array([0])
        );
        b.op("stablehlo.pad", &[flat, &zero], &attrs, TensorType::new(et, &[(len + pad) as i64]))
    };
    let block = match start {
        Some(s) => dynamic_slice_1d(b, &source, s, block_len),
        None => slice_1d(b, &source, offset, block_len),
    };
    let mut grid = vec![n0];
    grid.extend(sorted.windows(2).map(|w| w[0].1 / w[1].1));
    grid.push(sorted[sorted.len() - 1].1);
    let gridded = reshape(b, &block, &grid);
    let mut limits: Vec<usize> = sorted.iter().map(|d| d.0).collect();
    limits.push(1);
    let attrs = format!(
        "start_indices = {}, limit_indices = {}, strides = {}",
        i64_array(limits.iter().map(|_| 0)),
        i64_array(limits.iter().map(|&l| l as i64)),
        i64_array(limits.iter().map(|_| 1))
    );
    let picked = if limits == grid {
        gridded
    } else {
        b.op("stablehlo.slice", &[&gridded], &attrs, TensorType::new(et, &dims_i64(&limits)))
    };
    reshape(b, &picked, &limits[..limits.len() - 1])
}

/// Emits the elements `layout` selects from the 1-D value `flat` as a dense value of the layout's
/// shape (row-major). `start`, when given, is the storage offset as a 0-d runtime value (of type
/// [`index_type`] of the buffer's length) and replaces `layout.offset()`.
pub(crate) fn materialize(
    b: &mut FunctionBuilder,
    flat: &Value,
    layout: &Layout,
    start: Option<&Value>,
) -> Value {
    let et = flat.ty().element_type;
    let dims = layout.dims();
    if layout.numel() == 0 {
        return b.splat(&TensorType::new(et, &dims_i64(dims)), 0.0);
    }
    let compact = compact_dims(layout);
    let compact_sizes: Vec<usize> = compact.iter().map(|c| c.1).collect();
    let compact_numel: usize = compact_sizes.iter().product();
    // Dims by decreasing stride: a permuted contiguous block when each stride is the product of
    // the sizes after it.
    let mut order: Vec<usize> = (0..compact.len()).collect();
    order.sort_by(|&a, &b| compact[b].2.cmp(&compact[a].2));
    let mut expected = 1usize;
    let mut dense = true;
    for &k in order.iter().rev() {
        dense &= compact[k].2 == expected;
        expected = expected.saturating_mul(compact[k].1);
    }
    let offset = layout.offset();
    let sorted: Vec<(usize, usize)> = order.iter().map(|&k| (compact[k].1, compact[k].2)).collect();
    let sorted_sizes: Vec<usize> = sorted.iter().map(|d| d.0).collect();
    let shaped = if dense {
        let block = match start {
            Some(s) => dynamic_slice_1d(b, flat, s, compact_numel),
            None => slice_1d(b, flat, offset, compact_numel),
        };
        Some(reshape(b, &block, &sorted_sizes))
    } else if let Some(grid) = grid_box(layout, flat.ty().dims[0] as usize) {
        Some(grid.read(b, flat, start, offset))
    } else if nested(&sorted) {
        Some(nested_view(b, flat, &sorted, offset, start))
    } else {
        None
    };
    let value = if let Some(shaped) = shaped {
        if order.iter().enumerate().all(|(i, &k)| i == k) {
            shaped
        } else {
            // Result dim i is compact dim i, found at sorted position `position[i]`.
            let mut position = vec![0usize; order.len()];
            for (p, &k) in order.iter().enumerate() {
                position[k] = p;
            }
            let perm: Vec<i64> = position.iter().map(|&p| p as i64).collect();
            b.transpose(&shaped, &perm)
        }
    } else {
        let it = match start {
            Some(s) => s.ty().element_type,
            None => index_type(layout.storage_extent()),
        };
        let index_ty = TensorType::new(it, &dims_i64(&compact_sizes));
        let mut index = offset_value(b, &index_ty, start, offset);
        for (i, &(_, _, stride)) in compact.iter().enumerate() {
            let step = iota(b, it, &compact_sizes, i);
            let s = int_const(b, &index_ty, stride);
            let scaled = b.same("stablehlo.multiply", &[&step, &s]);
            index = b.same("stablehlo.add", &[&index, &scaled]);
        }
        gather_1d(b, flat, &index)
    };
    let mapping: Vec<usize> = compact.iter().map(|c| c.0).collect();
    broadcast(b, &value, dims, &mapping)
}
