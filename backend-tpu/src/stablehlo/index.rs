//! `Gather` and `Scatter` (with reductions) along one dim, as StableHLO gather/scatter over full
//! index tuples (or, for an index repeated along the other dims, whole windows). `Nonzero` has a data-dependent output size and stays on the host.
//!
//! The CPU backend checks every index and fails on one out of range; a compiled program cannot
//! fail, and StableHLO clamps gather starts and skips out-of-range scatter updates. The runtime
//! must range-check indices where it needs torch's error.

use oxtorch_core::ops::{IndexOp, ReduceOp};

use super::builder::{FunctionBuilder, Value};
use super::cast::unsupported;
use super::emit::{highest, lowest};
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// Emits an indexing prim.
pub fn lower_index(b: &mut FunctionBuilder, op: &IndexOp, inputs: &[Value]) -> Result<Vec<Value>> {
    match op {
        IndexOp::Gather { dim } => Ok(vec![gather(b, &inputs[0], &inputs[1], *dim)?]),
        IndexOp::Scatter { dim, reduce, include_self } => {
            Ok(vec![scatter(b, &inputs[0], &inputs[1], &inputs[2], *dim, *reduce, *include_self)?])
        }
        IndexOp::Nonzero => Err(Error::Unsupported(
            "nonzero has a data-dependent output size: the xla backend runs it on the host".into(),
        )),
    }
}

fn check_index(op: &str, index: &Value, rank: usize, dim: usize) -> Result<()> {
    if index.ty().element_type != ElementType::S64 || index.ty().dims.len() != rank || dim >= rank.max(1) {
        return Err(Error::InvalidArgument(format!(
            "{op}: expected an int64 index of rank {rank} and dim < rank, got {} and dim {dim}",
            index.ty()
        )));
    }
    Ok(())
}

/// `[*index.dims, rank]` int64 coordinates: `index` in component `dim`, each position's own
/// coordinate in the others.
pub fn index_tuples(b: &mut FunctionBuilder, index: &Value, dim: usize, rank: usize) -> Value {
    let shape = index.ty().dims.clone();
    let mut one = shape.clone();
    one.push(1);
    let parts: Vec<Value> = (0..rank)
        .map(|k| {
            let comp =
                if k == dim { index.clone() } else { b.iota(&TensorType::new(ElementType::S64, &shape), k) };
            b.reshape(&comp, &one)
        })
        .collect();
    let refs: Vec<&Value> = parts.iter().collect();
    b.concat(&refs, rank)
}

/// Gathers single elements of `src` at the coordinate tuples `tuples` (`[*out, rank]`).
fn gather_points(b: &mut FunctionBuilder, src: &Value, tuples: &Value) -> Value {
    let rank = src.ty().dims.len();
    let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
    let out = &tuples.ty().dims[..tuples.ty().dims.len() - 1];
    if src.ty().dims.contains(&0) {
        // No element to gather (a window of 1 does not fit a zero-size dim, and the plugin rejects
        // it): the output is empty too, since an index into an empty source is out of range,
        // which the runtime reports before launching.
        return b.splat(&TensorType::new(src.ty().element_type, out), 0.0);
    }
    let attrs = format!(
        "dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [{a}], \
         start_index_map = [{a}], index_vector_dim = {rank}>, slice_sizes = {}, indices_are_sorted = false",
        super::emit::array(&vec![1; rank]),
        a = all.join(", "),
    );
    b.op("stablehlo.gather", &[src, tuples], &attrs, TensorType::new(src.ty().element_type, out))
}

/// `out[p] = src[p with p[dim] = index[p]]`.
pub(super) fn gather(b: &mut FunctionBuilder, src: &Value, index: &Value, dim: usize) -> Result<Value> {
    let rank = src.ty().dims.len();
    check_index("gather", index, rank, dim)?;
    if rank == 0 {
        return Ok(src.clone());
    }
    let tuples = index_tuples(b, index, dim, rank);
    Ok(gather_points(b, src, &tuples))
}

/// Scatters `updates` (`[*tuples.dims[..-1]]`) into `target` at `tuples` with the update region
/// `combine` (`None`: the update replaces the element).
pub(super) fn scatter_points(
    b: &mut FunctionBuilder,
    target: &Value,
    tuples: &Value,
    updates: &Value,
    combine: Option<&str>,
) -> Value {
    let rank = target.ty().dims.len();
    let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
    let region = combine_region(b, target.ty().element_type, combine);
    let attrs = format!(
        "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [{a}], \
         scatter_dims_to_operand_dims = [{a}], index_vector_dim = {}>, indices_are_sorted = false, \
         unique_indices = false",
        tuples.ty().dims.len() - 1,
        a = all.join(", ")
    );
    b.op_regions("stablehlo.scatter", &[target, tuples, updates], &[region], &attrs, &[target.ty().clone()])
        .remove(0)
}

/// The update region of a scatter: `combine` (`None`: the update replaces the element).
fn combine_region(b: &mut FunctionBuilder, et: ElementType, combine: Option<&str>) -> String {
    let s = TensorType::new(et, &[]);
    b.region(&[s.clone(), s], |b, a| match combine {
        None => vec![a[1].clone()],
        Some("stablehlo.maximum") => vec![b.max_min(true, &a[0], &a[1])],
        Some("stablehlo.minimum") => vec![b.max_min(false, &a[0], &a[1])],
        Some(name) => vec![b.same(name, &[&a[0], &a[1]])],
    })
}

/// The `[n]` vector `v` when `index` is `v` repeated along every dim but `dim` (`index_add`'s
/// expanded index, or an embedding gradient's): `v` broadcast into `dim`, or a unit-dim reshape of
/// it broadcast in order.
fn repeated_vector(b: &mut FunctionBuilder, target: &Value, index: &Value, dim: usize) -> Option<Value> {
    let (src, map) = b.broadcast_of(index)?;
    let (src, map) = (src.clone(), map.to_vec());
    // The windows take the index's extent in the other dims: never beyond the target's. (torch
    // refuses a larger index; tuples skip its extra elements, where a window would not compile.)
    let (idims, tdims) = (&index.ty().dims, &target.ty().dims);
    if (0..idims.len()).any(|d| d != dim && idims[d] > tdims[d]) {
        return None;
    }
    let n = index.ty().dims[dim];
    let sd = &src.ty().dims;
    if sd.len() == 1 && map == [dim as i64] && sd[0] == n {
        return Some(src);
    }
    let in_order = map.iter().enumerate().all(|(i, &m)| m == i as i64);
    let only_dim = sd.iter().enumerate().all(|(k, &size)| if k == dim { size == n } else { size == 1 });
    (in_order && sd.len() == index.ty().dims.len() && only_dim).then(|| b.reshape(&src, &[n]))
}

/// `target` with `updates[.., i, ..]` combined into `target[.., rows[i], ..]` along `dim`: one
/// scatter of whole windows, the form of `index_add`, instead of one coordinate tuple per element
/// (which costs a `[*updates.dims, rank]` coordinate array and a scalar update per element).
fn scatter_windows(
    b: &mut FunctionBuilder,
    target: &Value,
    rows: &Value,
    updates: &Value,
    dim: usize,
    combine: &str,
) -> Value {
    let rank = target.ty().dims.len();
    let n = rows.ty().dims[0];
    let starts = b.reshape(rows, &[n, 1]);
    let window: Vec<String> = (0..rank).filter(|&d| d != dim).map(|d| d.to_string()).collect();
    let region = combine_region(b, target.ty().element_type, Some(combine));
    let attrs = format!(
        "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [{}], inserted_window_dims = [{dim}], \
         scatter_dims_to_operand_dims = [{dim}], index_vector_dim = 1>, indices_are_sorted = false, \
         unique_indices = false",
        window.join(", ")
    );
    b.op_regions("stablehlo.scatter", &[target, &starts, updates], &[region], &attrs, &[target.ty().clone()])
        .remove(0)
}

/// A copy of `target` with `out[p with p[dim] = index[p]] (op)= src[p]` over index's positions.
fn scatter(
    b: &mut FunctionBuilder,
    target: &Value,
    index: &Value,
    src: &Value,
    dim: usize,
    reduce: Option<ReduceOp>,
    include_self: bool,
) -> Result<Value> {
    let rank = target.ty().dims.len();
    check_index("scatter", index, rank, dim)?;
    let et = target.ty().element_type;
    let idx_dims = index.ty().dims.clone();
    if idx_dims.iter().product::<i64>() == 0 {
        return Ok(target.clone());
    }
    if rank == 0 {
        // One position: the update (combined with self unless it is replaced).
        return Ok(match reduce {
            None => src.clone(),
            Some(_) if !include_self => src.clone(),
            Some(op) => {
                let name = combine_op(op, et).ok_or_else(|| unsupported("scatter", target.ty()))?;
                match op {
                    ReduceOp::Max | ReduceOp::Min if et != ElementType::Pred => {
                        b.max_min(op == ReduceOp::Max, target, src)
                    }
                    _ => b.same(name, &[target, src]),
                }
            }
        });
    }
    let zeros = vec![0; rank];
    let strides = vec![1; rank];
    let updates = b.slice(src, &zeros, &idx_dims, &strides);
    if let (Some(op), true) = (reduce, include_self) {
        if let Some(rows) = repeated_vector(b, target, index, dim) {
            let name = combine_op(op, et).ok_or_else(|| unsupported("scatter", target.ty()))?;
            return Ok(scatter_windows(b, target, &rows, &updates, dim, name));
        }
    }
    let tuples = index_tuples(b, index, dim, rank);
    let Some(op) = reduce else {
        return Ok(scatter_last_wins(b, target, &tuples, &updates, dim));
    };
    let name = combine_op(op, et).ok_or_else(|| unsupported("scatter", target.ty()))?;
    if include_self {
        return Ok(scatter_points(b, target, &tuples, &updates, Some(name)));
    }
    let identity = match (op, et) {
        (ReduceOp::Sum | ReduceOp::Max, ElementType::Pred) => 0.0,
        (ReduceOp::Prod | ReduceOp::Min, ElementType::Pred) => 1.0,
        (ReduceOp::Sum, _) => -0.0,
        (ReduceOp::Prod, _) => 1.0,
        (ReduceOp::Max, _) => lowest(et),
        _ => highest(et),
    };
    let base = b.full_like(target, et, identity);
    let combined = scatter_points(b, &base, &tuples, &updates, Some(name));
    let none = b.full_like(target, ElementType::Pred, 0.0);
    let hits = b.full_like(&updates, ElementType::Pred, 1.0);
    let hit = scatter_points(b, &none, &tuples, &hits, None);
    Ok(b.select(&hit, &combined, target))
}

/// The update region's op for a scatter reduction (bool sums and maxima are `or`, products and
/// minima `and`, as the CPU backend's integer combine gives for 0/1).
fn combine_op(op: ReduceOp, et: ElementType) -> Option<&'static str> {
    Some(match (op, et) {
        (ReduceOp::Sum | ReduceOp::Max, ElementType::Pred) => "stablehlo.or",
        (ReduceOp::Prod | ReduceOp::Min, ElementType::Pred) => "stablehlo.and",
        (ReduceOp::Sum, _) => "stablehlo.add",
        (ReduceOp::Prod, _) => "stablehlo.multiply",
        (ReduceOp::Max, _) => "stablehlo.maximum",
        (ReduceOp::Min, _) => "stablehlo.minimum",
        _ => return None,
    })
}

/// Overwriting scatter where, as on the CPU backend, the last update (in row-major order of the
/// index) to a position wins: the winner per position is found with a max-scatter of update
/// numbers, and the other updates are sent out of range (which scatter skips).
fn scatter_last_wins(
    b: &mut FunctionBuilder,
    target: &Value,
    tuples: &Value,
    updates: &Value,
    dim: usize,
) -> Value {
    let idx_dims = updates.ty().dims.clone();
    let n: i64 = idx_dims.iter().product();
    let order_ty = TensorType::new(ElementType::S64, &[n]);
    let order = b.iota(&order_ty, 0);
    let order = b.reshape(&order, &idx_dims);
    let none = b.full_like(target, ElementType::S64, -1.0);
    let winners = scatter_points(b, &none, tuples, &order, Some("stablehlo.maximum"));
    let winner = gather_points(b, &winners, tuples);
    let wins = b.compare("EQ", &winner, &order);
    // Losers get coordinate `size` along `dim`: out of range, so skipped.
    let tdims = tuples.ty().dims.clone();
    let size = target.ty().dims[dim];
    let mut mask_dims = idx_dims.clone();
    mask_dims.push(1);
    let wins_col = b.reshape(&wins, &mask_dims);
    let all: Vec<i64> = (0..tdims.len() as i64).collect();
    let wins_all = b.broadcast(&wins_col, &tdims, &all);
    let far = b.full_like(tuples, ElementType::S64, size as f64);
    let moved = b.select(&wins_all, tuples, &far);
    scatter_points(b, target, &moved, updates, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `index_add` (a summing scatter whose index is one vector repeated along the other dims)
    /// scatters whole windows at `[n, 1]` row numbers; any other index keeps coordinate tuples.
    #[test]
    fn a_repeated_index_scatters_whole_windows() {
        let ty = |et: ElementType, d: &[i64]| TensorType::new(et, d);
        let (f, s) = (ElementType::F32, ElementType::S64);
        let (mut b, args) = FunctionBuilder::new(&[
            ty(f, &[8, 4]),
            ty(s, &[5]),
            ty(f, &[5, 4]),
            ty(f, &[4, 8]),
            ty(s, &[5, 4]),
        ]);
        // Rows: `index_add(0, rows, src)`'s index, `rows` along dim 0.
        let rows = b.broadcast(&args[1], &[5, 4], &[0]);
        let by_rows = scatter(&mut b, &args[0], &rows, &args[2], 0, Some(ReduceOp::Sum), true).unwrap();
        // Columns, through a unit-dim reshape: `index_add(1, cols, src^T)` into `[4, 8]`.
        let col = b.reshape(&args[1], &[1, 5]);
        let cols = b.broadcast(&col, &[4, 5], &[0, 1]);
        let src_t = b.transpose(&args[2], &[1, 0]);
        let by_cols = scatter(&mut b, &args[3], &cols, &src_t, 1, Some(ReduceOp::Max), true).unwrap();
        // An index of its own, and a scatter that leaves self out: coordinate tuples.
        let own = scatter(&mut b, &args[0], &args[4], &args[2], 0, Some(ReduceOp::Sum), true).unwrap();
        let no_self = scatter(&mut b, &args[0], &rows, &args[2], 0, Some(ReduceOp::Sum), false).unwrap();
        // An index wider than the target outside `dim` (torch refuses it): tuples, never a window
        // larger than the target.
        let wide = b.broadcast(&args[1], &[5, 6], &[0]);
        let wide_src = b.broadcast(&args[2], &[5, 4, 6], &[0, 1]);
        let wide_src = b.reshape(&wide_src, &[5, 24]);
        let too_wide = scatter(&mut b, &args[0], &wide, &wide_src, 0, Some(ReduceOp::Sum), true).unwrap();
        let text = b.finish(&[&by_rows, &by_cols, &own, &no_self, &too_wide]);
        let scatters: Vec<&str> = text.lines().filter(|l| l.contains("stablehlo.scatter")).collect();
        let windowed: Vec<&&str> = scatters.iter().filter(|l| l.contains("index_vector_dim = 1>")).collect();
        assert_eq!(windowed.len(), 2, "{text}");
        assert!(
            windowed[0].contains("update_window_dims = [1], inserted_window_dims = [0]"),
            "{}",
            windowed[0]
        );
        assert!(windowed[0].contains("tensor<5x1xi64>"), "{}", windowed[0]);
        assert!(
            windowed[1].contains("update_window_dims = [0], inserted_window_dims = [1]"),
            "{}",
            windowed[1]
        );
        assert!(
            scatters.iter().filter(|l| l.contains("inserted_window_dims = [0, 1]")).count() >= 3,
            "{text}"
        );
    }
}
