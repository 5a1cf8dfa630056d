//! Neural-network kernels: embedding, im2col/col2im, max/avg pooling and resampling over
//! precomputed windows.
//!
//! Windows are gathered dim by dim with constant position tables (`take`), so an element outside
//! a window never enters an arithmetic op (a NaN or ∞ there cannot leak through a zero weight);
//! positions outside the input are masked with constant validity tables.

use oxtorch_core::ops::NnOp;

/// One pooling window along one dim, `(start, step, len, divisor)` (`oxtorch_core`'s `PoolTap`).
type PoolTap = (isize, usize, usize, usize);

use super::builder::{FunctionBuilder, Value};
use super::cast::lower_cast;
use super::emit::{array, dims_i64, is_float, lowest};
use super::index::scatter_points;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// Emits a neural-network prim.
pub fn lower_nn(b: &mut FunctionBuilder, op: &NnOp, inputs: &[Value]) -> Result<Vec<Value>> {
    let x = &inputs[0];
    let refuse_bool = |op: &str| -> Result<()> {
        if x.ty().element_type == ElementType::Pred {
            return Err(Error::Unsupported(format!("\"{op}\" does not support bool")));
        }
        Ok(())
    };
    match op {
        NnOp::Embedding => Ok(vec![embedding(b, x, &inputs[1])?]),
        NnOp::CrossEntropy { ignore_index } => super::cross_entropy::forward(b, x, &inputs[1], *ignore_index),
        NnOp::CrossEntropyBackward { ignore_index } => {
            Ok(vec![super::cross_entropy::backward(b, inputs, *ignore_index)?])
        }
        // CPU-only fused kernels (the tensor layer composes them from other prims on devices).
        NnOp::GeluTanhBackward
        | NnOp::Conv2d { .. }
        | NnOp::Attention { .. }
        | NnOp::Linear
        | NnOp::LayerNorm { .. } => {
            Err(Error::Unsupported(format!("\"{}\" is fused on the CPU only", op.name())))
        }
        NnOp::Im2col { kernel, stride, padding, dilation } => {
            Ok(vec![im2col(b, x, kernel, stride, padding, dilation)?])
        }
        NnOp::Col2im { output_size, grid, kernel, stride, padding, dilation } => {
            refuse_bool("col2im")?;
            Ok(vec![col2im(b, x, output_size, grid, kernel, stride, padding, dilation)?])
        }
        NnOp::MaxPool { taps } => {
            refuse_bool("max_pool")?;
            max_pool(b, x, taps)
        }
        NnOp::AvgPool { taps, divisor_override } => {
            refuse_bool("avg_pool")?;
            Ok(vec![avg_pool(b, x, taps, *divisor_override)?])
        }
        NnOp::Resample { taps } => {
            refuse_bool("interpolate")?;
            Ok(vec![resample(b, x, taps)?])
        }
    }
}

/// Rows of `weight` `[V, D]` at int64 `ids` (any shape): `[*ids, D]`.
fn embedding(b: &mut FunctionBuilder, weight: &Value, ids: &Value) -> Result<Value> {
    let w = &weight.ty().dims;
    if w.len() != 2 || ids.ty().element_type != ElementType::S64 {
        return Err(Error::InvalidArgument(format!(
            "embedding: expected a [V, D] weight and int64 indices, got {} and {}",
            weight.ty(),
            ids.ty()
        )));
    }
    let r = ids.ty().dims.len();
    let mut dims = ids.ty().dims.clone();
    dims.push(w[1]);
    let attrs = format!(
        "dimension_numbers = #stablehlo.gather<offset_dims = [{r}], collapsed_slice_dims = [0], \
         start_index_map = [0], index_vector_dim = {r}>, slice_sizes = {}, indices_are_sorted = false",
        array(&[1, w[1]])
    );
    Ok(b.op("stablehlo.gather", &[weight, ids], &attrs, TensorType::new(weight.ty().element_type, &dims)))
}

/// One dim's window table: `rows × cols` input positions (clamped into range) and their validity.
struct Table {
    rows: usize,
    cols: usize,
    pos: Vec<i64>,
    valid: Vec<bool>,
}

impl Table {
    /// `rows × cols` entries from `f(row, col)` (`None` for outside the input).
    fn new(rows: usize, cols: usize, f: impl Fn(usize, usize) -> Option<i64>) -> Table {
        let mut pos = Vec::with_capacity(rows * cols);
        let mut valid = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                let p = f(r, c);
                pos.push(p.unwrap_or(0));
                valid.push(p.is_some());
            }
        }
        Table { rows, cols, pos, valid }
    }

    /// The table of pooling taps over a dim of `size`: one row per output position, `max len`
    /// columns.
    fn pool(taps: &[PoolTap], size: i64) -> Table {
        let cols = taps.iter().map(|t| t.2).max().unwrap_or(0).max(1);
        Table::new(taps.len(), cols, |o, j| {
            let (start, step, len, _) = taps[o];
            let i = start as i64 + (j * step) as i64;
            (j < len && i >= 0 && i < size).then_some(i)
        })
    }
}

/// Which gathered window positions fall inside the input (false over padding), shaped `dims`.
fn valid_mask(b: &mut FunctionBuilder, tables: &[Table], dims: &[i64]) -> Value {
    table_tensor(b, tables, dims, ElementType::Pred, |_, t, k| t.valid[k] as u8 as f64, "stablehlo.and")
}

/// Gathers the spatial dims of `x` (starting at `first`) through `tables`, each spatial dim `d`
/// becoming the two dims `(rows_d, cols_d)`; returns the gathered value and the dims it has.
fn gather_tables(b: &mut FunctionBuilder, x: &Value, first: usize, tables: &[Table]) -> Value {
    let mut g = x.clone();
    for (d, t) in tables.iter().enumerate() {
        let axis = first + 2 * d;
        g = b.take(&g, axis, &t.pos);
        let mut dims = g.ty().dims.clone();
        dims.splice(axis..=axis, [t.rows as i64, t.cols as i64]);
        g = b.reshape(&g, &dims);
    }
    g
}

/// A `[rows_0, cols_0, rows_1, cols_1, ...]` table combination (`f` per dim's entry, combined with
/// `join`) broadcast to `dims`, whose trailing `2 * tables.len()` dims those are.
fn table_tensor(
    b: &mut FunctionBuilder,
    tables: &[Table],
    dims: &[i64],
    et: ElementType,
    f: impl Fn(usize, &Table, usize) -> f64,
    join: &str,
) -> Value {
    let first = dims.len() - 2 * tables.len();
    let mut acc: Option<Value> = None;
    for (d, t) in tables.iter().enumerate() {
        let vals: Vec<f64> = (0..t.pos.len()).map(|k| f(d, t, k)).collect();
        let c = b.constant(&TensorType::new(et, &[t.rows as i64, t.cols as i64]), &vals);
        let axes = [(first + 2 * d) as i64, (first + 2 * d + 1) as i64];
        let c = b.broadcast(&c, dims, &axes);
        acc = Some(match acc {
            None => c,
            Some(a) => b.same(join, &[&a, &c]),
        });
    }
    acc.unwrap_or_else(|| b.splat(&TensorType::new(et, dims), 1.0))
}

/// Moves the `(rows_d, cols_d)` dim pairs after `first` into `[rows..., cols...]` and merges the
/// cols into one window dim: `[lead, rows..., W]`.
fn windows_last(b: &mut FunctionBuilder, g: &Value, first: usize, n: usize) -> Value {
    let mut perm: Vec<i64> = (0..first as i64).collect();
    perm.extend((0..n).map(|d| (first + 2 * d) as i64));
    perm.extend((0..n).map(|d| (first + 2 * d + 1) as i64));
    let t = b.transpose(g, &perm);
    let dims = t.ty().dims.clone();
    let mut out = dims[..first + n].to_vec();
    out.push(dims[first + n..].iter().product());
    b.reshape(&t, &out)
}

fn check_rank(op: &str, x: &Value, n: usize) -> Result<usize> {
    let rank = x.ty().dims.len();
    if rank < n {
        return Err(Error::InvalidArgument(format!("{op}: expected at least {n} dims, got {}", x.ty())));
    }
    Ok(rank - n)
}

/// Max pooling: values and the int64 flat spatial index of each window's maximum (the first
/// maximal element in window order; a NaN always wins, the last one seen, as on the CPU backend;
/// an empty window gives the lowest value and index 0).
fn max_pool(b: &mut FunctionBuilder, x: &Value, taps: &[Vec<PoolTap>]) -> Result<Vec<Value>> {
    let first = check_rank("max_pool", x, taps.len())?;
    let et = x.ty().element_type;
    let spatial = x.ty().dims[first..].to_vec();
    let tables: Vec<Table> = taps.iter().zip(&spatial).map(|(t, &s)| Table::pool(t, s)).collect();
    let n = tables.len();
    let mut strides = vec![1i64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * spatial[d + 1];
    }
    let g = gather_tables(b, x, first, &tables);
    let dims = g.ty().dims.clone();
    let valid = valid_mask(b, &tables, &dims);
    let flat = table_tensor(
        b,
        &tables,
        &dims,
        ElementType::S64,
        |d, t, k| (t.pos[k] * strides[d]) as f64,
        "stablehlo.add",
    );
    let low = b.full_like(&g, et, lowest(et));
    let never = b.full_like(&flat, ElementType::S64, i64::MAX as f64);
    let vals = b.select(&valid, &g, &low);
    let idx = b.select(&valid, &flat, &never);
    let vals = windows_last(b, &vals, first, n);
    let idx = windows_last(b, &idx, first, n);
    let w = vals.ty().dims.len() - 1;
    let init_v = b.scalar(et, lowest(et));
    let init_i = b.scalar(ElementType::S64, i64::MAX as f64);
    let float = is_float(et);
    let r = b.reduce(&[&vals, &idx], &[&init_v, &init_i], &[w], |b, a| {
        let (av, ai, bv, bi) = (&a[0], &a[1], &a[2], &a[3]);
        let greater = b.compare("GT", av, bv);
        let equal = b.compare("EQ", av, bv);
        let first = b.compare("LT", ai, bi);
        let tie_first = b.same("stablehlo.and", &[&equal, &first]);
        let mut a_better = b.same("stablehlo.or", &[&greater, &tie_first]);
        if float {
            let a_nan = b.compare("NE", av, av);
            let b_nan = b.compare("NE", bv, bv);
            let b_num = b.same("stablehlo.not", &[&b_nan]);
            let nan_wins = b.same("stablehlo.and", &[&a_nan, &b_num]);
            let later = b.compare("GT", ai, bi);
            let both = b.same("stablehlo.and", &[&a_nan, &b_nan]);
            let last_nan = b.same("stablehlo.and", &[&both, &later]);
            let any_nan = b.same("stablehlo.or", &[&a_nan, &b_nan]);
            let numbers = b.same("stablehlo.not", &[&any_nan]);
            let by_value = b.same("stablehlo.and", &[&numbers, &a_better]);
            let s = b.same("stablehlo.or", &[&nan_wins, &last_nan]);
            a_better = b.same("stablehlo.or", &[&s, &by_value]);
        }
        vec![b.select(&a_better, av, bv), b.select(&a_better, ai, bi)]
    });
    let never = b.full_like(&r[1], ElementType::S64, i64::MAX as f64);
    let empty = b.compare("EQ", &r[1], &never);
    let zero = b.full_like(&r[1], ElementType::S64, 0.0);
    let idx = b.select(&empty, &zero, &r[1]);
    // The CPU backend starts from the lowest int64 (or -∞) and narrows: an empty window of a
    // narrower integer type holds 0.
    let empty_value = if is_float(et) || et == ElementType::S64 { lowest(et) } else { 0.0 };
    let fill = b.full_like(&r[0], et, empty_value);
    let vals = b.select(&empty, &fill, &r[0]);
    Ok(vec![vals, idx])
}

/// The f64 (floats) or int64 (integers) type the CPU backend sums pools, resampling and col2im in.
fn wide(et: ElementType) -> ElementType {
    if is_float(et) {
        ElementType::F64
    } else {
        ElementType::S64
    }
}

/// Average pooling: window sums (f64 or int64) divided by the product of the taps' divisors (or
/// `divisor_override`); integers divide with truncation (0 for a zero divisor).
fn avg_pool(
    b: &mut FunctionBuilder,
    x: &Value,
    taps: &[Vec<PoolTap>],
    divisor_override: Option<i64>,
) -> Result<Value> {
    let first = check_rank("avg_pool", x, taps.len())?;
    let et = x.ty().element_type;
    let spatial = x.ty().dims[first..].to_vec();
    let tables: Vec<Table> = taps.iter().zip(&spatial).map(|(t, &s)| Table::pool(t, s)).collect();
    let n = tables.len();
    let acc = wide(et);
    let xw = lower_cast(b, x, acc);
    let g = gather_tables(b, &xw, first, &tables);
    let dims = g.ty().dims.clone();
    let valid = valid_mask(b, &tables, &dims);
    let zero = b.full_like(&g, acc, 0.0);
    let g = b.select(&valid, &g, &zero);
    let g = windows_last(b, &g, first, n);
    let w = g.ty().dims.len() - 1;
    let sum = b.reduce_keep(&g, "stablehlo.add", 0.0, &[w]);
    let out_dims: Vec<i64> = g.ty().dims[..w].to_vec();
    let sum = b.reshape(&sum, &out_dims);
    // Divisors per output position.
    let outs: Vec<usize> = taps.iter().map(Vec::len).collect();
    let count: usize = outs.iter().product();
    let mut divs = Vec::with_capacity(count);
    for flat in 0..count {
        let mut rest = flat;
        let mut o = vec![0; n];
        for d in (0..n).rev() {
            o[d] = rest % outs[d];
            rest /= outs[d];
        }
        let div = divisor_override.unwrap_or_else(|| (0..n).map(|d| taps[d][o[d]].3 as i64).product());
        divs.push(div as f64);
    }
    let div = b.constant(&TensorType::new(acc, &dims_i64(&outs)), &divs);
    let map: Vec<i64> = (first as i64..(first + n) as i64).collect();
    let div = b.broadcast(&div, &out_dims, &map);
    let out = if acc == ElementType::F64 {
        b.same("stablehlo.divide", &[&sum, &div])
    } else {
        let zero = b.full_like(&div, acc, 0.0);
        let one = b.full_like(&div, acc, 1.0);
        let is_zero = b.compare("EQ", &div, &zero);
        let safe = b.select(&is_zero, &one, &div);
        let q = b.same("stablehlo.divide", &[&sum, &safe]);
        b.select(&is_zero, &zero, &q)
    };
    Ok(lower_cast(b, &out, et))
}

/// Resampling in f64 with the CPU backend's exact arithmetic: each term is `(w_1 ⋯ w_n) · x`
/// (weights multiplied in dim order), summed sequentially over the innermost dim's taps first.
fn resample(b: &mut FunctionBuilder, x: &Value, taps: &[Vec<Vec<(usize, f64)>>]) -> Result<Value> {
    let first = check_rank("interpolate", x, taps.len())?;
    let et = x.ty().element_type;
    let n = taps.len();
    let spatial = x.ty().dims[first..].to_vec();
    let mut tables = Vec::with_capacity(n);
    let mut weights = Vec::with_capacity(n);
    for (d, t) in taps.iter().enumerate() {
        if t.iter().flatten().any(|&(i, _)| i as i64 >= spatial[d]) {
            return Err(Error::InvalidArgument("interpolate: a tap lies outside the input".into()));
        }
        let cols = t.iter().map(Vec::len).max().unwrap_or(0).max(1);
        tables.push(Table::new(t.len(), cols, |o, j| t[o].get(j).map(|&(i, _)| i as i64)));
        weights.push(
            (0..t.len())
                .flat_map(|o| (0..cols).map(move |j| t[o].get(j).map_or(0.0, |p| p.1)))
                .collect::<Vec<f64>>(),
        );
    }
    let x64 = lower_cast(b, x, ElementType::F64);
    let g = gather_tables(b, &x64, first, &tables);
    let dims = g.ty().dims.clone();
    let valid = valid_mask(b, &tables, &dims);
    let w = table_tensor(b, &tables, &dims, ElementType::F64, |d, _, k| weights[d][k], "stablehlo.multiply");
    let terms = b.same("stablehlo.multiply", &[&w, &g]);
    let zero = b.full_like(&terms, ElementType::F64, 0.0);
    let mut g = b.select(&valid, &terms, &zero);
    for d in (0..n).rev() {
        let axis = first + 2 * d + 1;
        let cols = g.ty().dims[axis];
        let mut acc = b.slice_dim(&g, axis, 0, 1);
        for j in 1..cols {
            let next = b.slice_dim(&g, axis, j, j + 1);
            acc = b.same("stablehlo.add", &[&acc, &next]);
        }
        let mut kept = acc.ty().dims.clone();
        kept.remove(axis);
        g = b.reshape(&acc, &kept);
    }
    if !is_float(et) {
        // Integer images round to nearest (half away from zero) and saturate to [0, 255], as
        // torch's uint8 resampling does.
        let r = b.same("stablehlo.round_nearest_afz", &[&g]);
        let lo = b.full_like(&r, ElementType::F64, 0.0);
        let hi = b.full_like(&r, ElementType::F64, 255.0);
        let r = b.same("stablehlo.clamp", &[&lo, &r, &hi]);
        let r = b.convert(&r, ElementType::S64);
        return Ok(b.convert(&r, et));
    }
    Ok(lower_cast(b, &g, et))
}

/// Window positions per spatial dim, and per dim the `kernel × positions` table of input positions.
fn conv_tables(
    image: &[i64],
    positions: &[usize],
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> Vec<Table> {
    (0..kernel.len())
        .map(|d| {
            Table::new(kernel[d], positions[d], |k, p| {
                let i = (p * stride[d] + k * dilation[d]) as i64 - padding[d] as i64;
                (i >= 0 && i < image[d]).then_some(i)
            })
        })
        .collect()
}

fn check_lens(op: &str, x: &Value, lens: &[usize]) -> Result<usize> {
    let n = lens[0];
    if lens.iter().any(|&l| l != n) || x.ty().dims.len() != n + 2 {
        return Err(Error::InvalidArgument(format!("{op}: inconsistent parameters for input {}", x.ty())));
    }
    Ok(n)
}

/// im2col: `[B, C, *spatial]` (zero padded) to `[B, C * prod(kernel), L]`.
fn im2col(
    b: &mut FunctionBuilder,
    x: &Value,
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> Result<Value> {
    let n = check_lens("im2col", x, &[kernel.len(), stride.len(), padding.len(), dilation.len()])?;
    let et = x.ty().element_type;
    let image = x.ty().dims[2..].to_vec();
    let positions: Vec<usize> = (0..n)
        .map(|d| NnOp::window_positions(image[d] as usize, kernel[d], stride[d], padding[d], dilation[d]))
        .collect();
    let tables = conv_tables(&image, &positions, kernel, stride, padding, dilation);
    let g = gather_tables(b, x, 2, &tables);
    let dims = g.ty().dims.clone();
    let valid = valid_mask(b, &tables, &dims);
    let zero = b.full_like(&g, et, 0.0);
    let g = b.select(&valid, &g, &zero);
    // [B, C, k_0, o_0, k_1, o_1, ...] -> [B, C, k..., L] -> [B, C * K, L]
    let g = windows_last(b, &g, 2, n);
    let k = kernel.iter().product::<usize>() as i64;
    let l = positions.iter().product::<usize>() as i64;
    Ok(b.reshape(&g, &[dims[0], dims[1] * k, l]))
}

/// col2im, the adjoint of im2col: `[B, C * K, L]` to `[B, C, *output_size]`, overlapping
/// contributions summed (f64 for floats except f16, which adds in f16 as the CPU backend does;
/// int64 for integers), positions in the padding dropped (scatter skips them).
#[allow(clippy::too_many_arguments)]
fn col2im(
    b: &mut FunctionBuilder,
    x: &Value,
    output_size: &[usize],
    grid: &[usize],
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> Result<Value> {
    let n = kernel.len();
    let et = x.ty().element_type;
    let xd = x.ty().dims.clone();
    let k: usize = kernel.iter().product();
    let l: usize = grid.iter().product();
    let lens = [output_size.len(), grid.len(), stride.len(), padding.len(), dilation.len()];
    if xd.len() != 3 || lens.iter().any(|&v| v != n) || k == 0 || xd[1] % k as i64 != 0 || xd[2] != l as i64 {
        return Err(Error::InvalidArgument(format!("col2im: inconsistent parameters for input {}", x.ty())));
    }
    let c = xd[1] / k as i64;
    let acc = if et == ElementType::F16 { et } else { wide(et) };
    let xw = lower_cast(b, x, acc);
    // [B, C, k..., o...]
    let mut udims = vec![xd[0], c];
    udims.extend(dims_i64(kernel));
    udims.extend(dims_i64(grid));
    let updates = b.reshape(&xw, &udims);
    let rank = udims.len();
    let idx_ty = TensorType::new(ElementType::S64, &udims);
    let mut comps = vec![b.iota(&idx_ty, 0), b.iota(&idx_ty, 1)];
    for d in 0..n {
        let vals: Vec<f64> = (0..kernel[d])
            .flat_map(|kk| {
                (0..grid[d]).map(move |p| {
                    let i = (p * stride[d] + kk * dilation[d]) as i64 - padding[d] as i64;
                    // Out of range (either side) is skipped by scatter; -1 stays negative.
                    i.max(-1) as f64
                })
            })
            .collect();
        let t = b.constant(&TensorType::new(ElementType::S64, &[kernel[d] as i64, grid[d] as i64]), &vals);
        comps.push(b.broadcast(&t, &udims, &[(2 + d) as i64, (2 + n + d) as i64]));
    }
    let mut one = udims.clone();
    one.push(1);
    let cols: Vec<Value> = comps.iter().map(|v| b.reshape(v, &one)).collect();
    let refs: Vec<&Value> = cols.iter().collect();
    let tuples = b.concat(&refs, rank);
    let mut out_dims = vec![xd[0], c];
    out_dims.extend(dims_i64(output_size));
    let target = b.splat(&TensorType::new(acc, &out_dims), 0.0);
    let out = scatter_points(b, &target, &tuples, &updates, Some("stablehlo.add"));
    Ok(lower_cast(b, &out, et))
}
