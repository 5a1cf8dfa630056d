//! `Gather` and `Scatter` (with reductions) along one dim, as StableHLO gather/scatter over full
//! index tuples. `Nonzero` has a data-dependent output size and stays on the host.
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
    let s = TensorType::new(target.ty().element_type, &[]);
    let region = b.region(&[s.clone(), s], |b, a| match combine {
        None => vec![a[1].clone()],
        Some("stablehlo.maximum") => vec![b.max_min(true, &a[0], &a[1])],
        Some("stablehlo.minimum") => vec![b.max_min(false, &a[0], &a[1])],
        Some(name) => vec![b.same(name, &[&a[0], &a[1]])],
    });
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
