//! Ordering prims: stable sort, median, cumulative scans, searchsorted, histograms.
//!
//! `topk`, `kthvalue` and `mode` pick among equal values in the order of torch's C++ standard
//! library selection algorithms (unstable), and `unique` has a data-dependent output size: they
//! return [`Error::Unsupported`] and run on the host.

use oxtorch_core::ops::SortOp;

use super::builder::{FunctionBuilder, Value};
use super::cast::lower_cast;
use super::emit::{dims_i64, is_float};
use super::index::gather;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// Emits an ordering prim.
pub fn lower_sort(b: &mut FunctionBuilder, op: &SortOp, inputs: &[Value]) -> Result<Vec<Value>> {
    let x = &inputs[0];
    let rank = x.ty().dims.len();
    let check_dim = |dim: usize| -> Result<()> {
        if dim >= rank {
            return Err(Error::InvalidArgument(format!(
                "{}: dim {dim} out of range for {}",
                op.name(),
                x.ty()
            )));
        }
        Ok(())
    };
    let et = x.ty().element_type;
    let unsupported =
        || Error::Unsupported(format!("the xla backend does not lower \"{}\" for {}", op.name(), et));
    match *op {
        SortOp::Sort { dim, descending } => {
            check_dim(dim)?;
            let (v, i) = sort_pair(b, x, dim, descending);
            Ok(vec![v, i])
        }
        SortOp::Median { dim, ignore_nan } => {
            check_dim(dim)?;
            if x.ty().dims[dim] == 0 {
                return Err(unsupported());
            }
            median(b, x, dim, ignore_nan)
        }
        SortOp::CumSum { dim } | SortOp::CumProd { dim } => {
            check_dim(dim)?;
            if et == ElementType::Pred {
                return Err(unsupported());
            }
            let prod = matches!(op, SortOp::CumProd { .. });
            Ok(vec![cum(b, x, dim, prod)])
        }
        SortOp::CumMax { dim } | SortOp::CumMin { dim } => {
            check_dim(dim)?;
            Ok(cum_extreme(b, x, dim, matches!(op, SortOp::CumMax { .. })))
        }
        SortOp::LogCumSumExp { dim } => {
            check_dim(dim)?;
            if !is_float(et) {
                return Err(unsupported());
            }
            Ok(vec![logcumsumexp(b, x, dim)])
        }
        SortOp::SearchSorted { right } => Ok(vec![searchsorted(b, x, &inputs[1], right)?]),
        SortOp::Histc { bins, min, max } => {
            if !is_float(et)
                || rank > 8
                || bins == 0
                || min.partial_cmp(&max) != Some(std::cmp::Ordering::Less)
            {
                return Err(unsupported());
            }
            Ok(vec![histc(b, x, bins, min, max)])
        }
        SortOp::Bincount { length, weighted } => {
            if et == ElementType::Pred || is_float(et) || rank != 1 {
                return Err(unsupported());
            }
            let w = if weighted { Some(&inputs[1]) } else { None };
            if let Some(w) = w {
                if !matches!(w.ty().element_type, ElementType::F32 | ElementType::F64)
                    || w.ty().dims != x.ty().dims
                {
                    return Err(unsupported());
                }
            }
            Ok(vec![bincount(b, x, w, length)])
        }
        SortOp::Quantile { dim, interpolation } => {
            check_dim(dim)?;
            let known = ["linear", "lower", "higher", "midpoint", "nearest"].contains(&interpolation);
            if !is_float(et) || inputs[1].ty().element_type != et || x.ty().dims[dim] == 0 || !known {
                return Err(unsupported());
            }
            Ok(vec![quantile(b, x, &inputs[1], dim, interpolation)?])
        }
        SortOp::TopK { .. } | SortOp::KthValue { .. } | SortOp::Mode { .. } | SortOp::Unique { .. } => {
            Err(unsupported())
        }
    }
}

/// Stable sort of `x` along `dim` with NaN as the largest value; `(values, int64 indices)`.
pub fn sort_pair(b: &mut FunctionBuilder, x: &Value, dim: usize, descending: bool) -> (Value, Value) {
    let et = x.ty().element_type;
    // Bools sort as 0/1 bytes (comparisons on i1 are not ordered).
    let keys = if et == ElementType::Pred { b.convert(x, ElementType::U8) } else { x.clone() };
    let idx_ty = TensorType::new(ElementType::S64, &x.ty().dims);
    let iota = b.iota(&idx_ty, dim);
    let s = TensorType::new(keys.ty().element_type, &[]);
    let i = TensorType::new(ElementType::S64, &[]);
    let float = is_float(et);
    let region = b.region(&[s.clone(), s, i.clone(), i], |b, a| {
        let (l, r) = (&a[0], &a[1]);
        let dir = if descending { "GT" } else { "LT" };
        let c = b.compare(dir, l, r);
        if !float {
            return vec![c];
        }
        // NaN is the largest: first when descending, last otherwise.
        let l_nan = b.compare("NE", l, l);
        let r_nan = b.compare("NE", r, r);
        let nan_first = if descending {
            let r_num = b.same("stablehlo.not", &[&r_nan]);
            b.same("stablehlo.and", &[&l_nan, &r_num])
        } else {
            let l_num = b.same("stablehlo.not", &[&l_nan]);
            b.same("stablehlo.and", &[&l_num, &r_nan])
        };
        vec![b.same("stablehlo.or", &[&c, &nan_first])]
    });
    let attrs = format!("dimension = {dim} : i64, is_stable = true");
    let r = b.op_regions("stablehlo.sort", &[&keys, &iota], &[region], &attrs, &[keys.ty().clone(), idx_ty]);
    let v = if et == ElementType::Pred { b.convert(&r[0], et) } else { r[0].clone() };
    (v, r[1].clone())
}

/// The lower median along `dim` (positions in a stable ascending sort with NaN last): without
/// `ignore_nan`, a row with NaN gives its first NaN; with it, position `(non_nan - 1) / 2`
/// (C++ division) among the non-NaN values.
fn median(b: &mut FunctionBuilder, x: &Value, dim: usize, ignore_nan: bool) -> Result<Vec<Value>> {
    let dims = x.ty().dims.clone();
    let n = dims[dim];
    let (sv, si) = sort_pair(b, x, dim, false);
    let mut keep = dims.clone();
    keep[dim] = 1;
    let count_ty = TensorType::new(ElementType::S64, &keep);
    let nan_count = if is_float(x.ty().element_type) {
        let is_nan = b.compare("NE", x, x);
        let ones = b.convert(&is_nan, ElementType::S64);
        b.reduce_keep(&ones, "stablehlo.add", 0.0, &[dim])
    } else {
        b.splat(&count_ty, 0.0)
    };
    let total = b.splat(&count_ty, n as f64);
    let zero = b.splat(&count_ty, 0.0);
    let one = b.splat(&count_ty, 1.0);
    let two = b.splat(&count_ty, 2.0);
    let non_nan = b.same("stablehlo.subtract", &[&total, &nan_count]);
    let nm1 = b.same("stablehlo.subtract", &[&non_nan, &one]);
    let half = b.same("stablehlo.divide", &[&nm1, &two]);
    let pos = if ignore_nan {
        let none = b.compare("EQ", &non_nan, &zero);
        b.select(&none, &zero, &half)
    } else {
        let any_nan = b.compare("GT", &nan_count, &zero);
        let mid = b.splat(&count_ty, ((n - 1) / 2) as f64);
        b.select(&any_nan, &non_nan, &mid)
    };
    let v = gather(b, &sv, &pos, dim)?;
    let i = gather(b, &si, &pos, dim)?;
    Ok(vec![v, i])
}

/// Window, strides and padding of an inclusive scan along `dim` with `reduce_window`.
fn scan_window(x: &Value, dim: usize) -> (Vec<i64>, Vec<i64>, Vec<(i64, i64)>) {
    let rank = x.ty().dims.len();
    let n = x.ty().dims[dim];
    let mut window = vec![1; rank];
    window[dim] = n.max(1);
    let mut padding = vec![(0, 0); rank];
    padding[dim] = ((n - 1).max(0), 0);
    (window, vec![1; rank], padding)
}

/// Cumulative sum or product along `dim` (f16/bf16 accumulate in f32; integers wrap).
fn cum(b: &mut FunctionBuilder, x: &Value, dim: usize, prod: bool) -> Value {
    let et = x.ty().element_type;
    let half = matches!(et, ElementType::F16 | ElementType::BF16);
    let wide = if half { b.convert(x, ElementType::F32) } else { x.clone() };
    let (window, strides, padding) = scan_window(x, dim);
    let (name, init) = if prod { ("stablehlo.multiply", 1.0) } else { ("stablehlo.add", 0.0) };
    let r = b.reduce_window(&wide, name, init, &window, &strides, &padding);
    b.convert(&r, et)
}

/// Running maximum (or minimum) along `dim` with the index of the last extreme element so far;
/// NaN propagates (its index: the last NaN so far), as the CPU backend's scan.
fn cum_extreme(b: &mut FunctionBuilder, x: &Value, dim: usize, is_max: bool) -> Vec<Value> {
    let et = x.ty().element_type;
    let v = if et == ElementType::Pred { b.convert(x, ElementType::S32) } else { x.clone() };
    let vt = v.ty().element_type;
    let (window, strides, padding) = scan_window(x, dim);
    let (name, init) = if is_max {
        ("stablehlo.maximum", super::emit::lowest(vt))
    } else {
        ("stablehlo.minimum", super::emit::highest(vt))
    };
    let running = b.reduce_window(&v, name, init, &window, &strides, &padding);
    let idx_ty = TensorType::new(ElementType::S64, &x.ty().dims);
    let iota = b.iota(&idx_ty, dim);
    let none = b.splat(&idx_ty, -1.0);
    // Positions where the element equals the running extreme; the last one so far is the index.
    let hit = b.compare("EQ", &v, &running);
    let cand = b.select(&hit, &iota, &none);
    let mut idx = b.reduce_window(&cand, "stablehlo.maximum", -1.0, &window, &strides, &padding);
    let mut vals = running;
    if is_float(et) {
        let is_nan = b.compare("NE", &v, &v);
        let nan_pos = b.select(&is_nan, &iota, &none);
        let last_nan = b.reduce_window(&nan_pos, "stablehlo.maximum", -1.0, &window, &strides, &padding);
        let zero = b.splat(&idx_ty, 0.0);
        let seen = b.compare("GE", &last_nan, &zero);
        idx = b.select(&seen, &last_nan, &idx);
        let nan = b.full_like(&vals, et, f64::NAN);
        vals = b.select(&seen, &nan, &vals);
    }
    let vals = b.convert(&vals, et);
    vec![vals, idx]
}

/// `log(cumsum(exp(x)))` along `dim` with the CPU backend's pairwise `log_add_exp` (f16/bf16 in
/// f32).
fn logcumsumexp(b: &mut FunctionBuilder, x: &Value, dim: usize) -> Value {
    let et = x.ty().element_type;
    let half = matches!(et, ElementType::F16 | ElementType::BF16);
    let wide = if half { b.convert(x, ElementType::F32) } else { x.clone() };
    let (window, strides, padding) = scan_window(x, dim);
    let r = b.reduce_window_with(&wide, f64::NEG_INFINITY, &window, &strides, &padding, |b, a| {
        let (p, q) = (&a[0], &a[1]);
        let ct = p.ty().element_type;
        let p_nan = b.compare("NE", p, p);
        let q_nan = b.compare("NE", q, q);
        let lt = b.compare("LT", p, q);
        let mn = b.select(&lt, p, q);
        let mx = b.select(&lt, q, p);
        let d = b.same("stablehlo.subtract", &[&mn, &mx]);
        let e = b.same("stablehlo.exponential", &[&d]);
        let l = b.same("stablehlo.log_plus_one", &[&e]);
        let sum = b.same("stablehlo.add", &[&l, &mx]);
        let amn = b.same("stablehlo.abs", &[&mn]);
        let inf = b.scalar(ct, f64::INFINITY);
        let finite = b.compare("LT", &amn, &inf);
        let differ = b.compare("NE", &mn, &mx);
        let use_sum = b.same("stablehlo.or", &[&differ, &finite]);
        let r = b.select(&use_sum, &sum, p);
        let r = b.select(&p_nan, p, &r);
        b.select(&q_nan, q, &r)
    });
    b.convert(&r, et)
}

/// torch's binary search, unrolled: for each value, the first position in its row whose element
/// is `> value` (`right`) or `>= value`, with unordered (NaN) comparisons moving right.
fn searchsorted(b: &mut FunctionBuilder, seq: &Value, values: &Value, right: bool) -> Result<Value> {
    let sd = seq.ty().dims.clone();
    let vd = values.ty().dims.clone();
    let bad =
        || Error::InvalidArgument(format!("searchsorted: sequence {} and values {}", seq.ty(), values.ty()));
    if sd.is_empty() || (sd.len() > 1 && (sd.len() != vd.len() || sd[..sd.len() - 1] != vd[..vd.len() - 1])) {
        return Err(bad());
    }
    let m = *sd.last().unwrap_or(&0);
    let out_ty = TensorType::new(ElementType::S64, &vd);
    if m == 0 {
        return Ok(b.splat(&out_ty, 0.0));
    }
    let n: i64 = vd.iter().product();
    // 1-D sequences search every value: flatten the values.
    let (vals, dim) =
        if sd.len() == 1 { (b.reshape(values, &[n]), 0) } else { (values.clone(), vd.len() - 1) };
    let flat_ty = TensorType::new(ElementType::S64, &vals.ty().dims);
    let mut start = b.splat(&flat_ty, 0.0);
    let mut end = b.splat(&flat_ty, m as f64);
    let one = b.splat(&flat_ty, 1.0);
    let steps = 64 - (m as u64).leading_zeros() + 1;
    for _ in 0..steps {
        let active = b.compare("LT", &start, &end);
        let width = b.same("stablehlo.subtract", &[&end, &start]);
        let halfw = b.same("stablehlo.shift_right_logical", &[&width, &one]);
        let mid = b.same("stablehlo.add", &[&start, &halfw]);
        let last = b.splat(&flat_ty, (m - 1).max(0) as f64);
        let safe = b.same("stablehlo.minimum", &[&mid, &last]);
        let at = gather(b, seq, &safe, dim)?;
        // go right: right ? !(at > v) : !(at >= v)
        let stop = b.compare(if right { "GT" } else { "GE" }, &at, &vals);
        let go_right = b.same("stablehlo.not", &[&stop]);
        let mid1 = b.same("stablehlo.add", &[&mid, &one]);
        let go = b.same("stablehlo.and", &[&active, &go_right]);
        let left = b.same("stablehlo.not", &[&go_right]);
        let shrink = b.same("stablehlo.and", &[&active, &left]);
        start = b.select(&go, &mid1, &start);
        end = b.select(&shrink, &mid, &end);
    }
    Ok(b.reshape(&start, &vd))
}

/// `histc`: counts of the elements in `[min, max]` per equal-width bin, with the CPU backend's
/// arithmetic (every step rounded to the input type).
fn histc(b: &mut FunctionBuilder, x: &Value, bins: usize, min: f64, max: f64) -> Value {
    let et = x.ty().element_type;
    let acc = if matches!(et, ElementType::F16 | ElementType::BF16) { ElementType::F32 } else { et };
    let n: i64 = x.ty().dims.iter().product();
    let flat = b.reshape(x, &[n]);
    let ty = TensorType::new(et, &[n]);
    let lo = b.splat(&ty, min);
    let hi = b.splat(&ty, max);
    let ge = b.compare("GE", &flat, &lo);
    let le = b.compare("LE", &flat, &hi);
    let inside = b.same("stablehlo.and", &[&ge, &le]);
    // r(v): round to the input type and back.
    let r = |b: &mut FunctionBuilder, v: &Value| -> Value {
        let t = b.convert(v, et);
        b.convert(&t, acc)
    };
    let xa = b.convert(&flat, acc);
    let lo_a = b.convert(&lo, acc);
    let hi_a = b.convert(&hi, acc);
    let nb = b.splat(&TensorType::new(et, &[n]), bins as f64);
    let nb = b.convert(&nb, acc);
    let w = b.same("stablehlo.subtract", &[&hi_a, &lo_a]);
    let width = r(b, &w);
    let d = b.same("stablehlo.subtract", &[&xa, &lo_a]);
    let d = r(b, &d);
    let s = b.same("stablehlo.multiply", &[&d, &nb]);
    let s = r(b, &s);
    let q = b.same("stablehlo.divide", &[&s, &width]);
    let pos = r(b, &q);
    let p = lower_cast(b, &pos, ElementType::S64);
    let zero = b.splat(&TensorType::new(ElementType::S64, &[n]), 0.0);
    let top = b.splat(&TensorType::new(ElementType::S64, &[n]), (bins - 1) as f64);
    let p = b.same("stablehlo.maximum", &[&p, &zero]);
    let p = b.same("stablehlo.minimum", &[&p, &top]);
    let counts = one_hot_sum(b, &p, &inside, None, bins, ElementType::S64);
    lower_cast(b, &counts, et)
}

/// Sums over the `n` entries of 1-D `bin` (int64) where `take` holds: 1 each (or `weight`), per bin
/// `0..bins`, as `[bins]` of `out`.
fn one_hot_sum(
    b: &mut FunctionBuilder,
    bin: &Value,
    take: &Value,
    weight: Option<&Value>,
    bins: usize,
    out: ElementType,
) -> Value {
    let n = bin.ty().dims[0];
    let grid = [n, bins as i64];
    let ids = b.iota(&TensorType::new(ElementType::S64, &grid), 1);
    let bin2 = b.broadcast(bin, &grid, &[0]);
    let take2 = b.broadcast(take, &grid, &[0]);
    let eq = b.compare("EQ", &bin2, &ids);
    let hit = b.same("stablehlo.and", &[&eq, &take2]);
    let vals = match weight {
        Some(w) => {
            let w2 = b.broadcast(w, &grid, &[0]);
            let zero = b.full_like(&w2, out, 0.0);
            b.select(&hit, &w2, &zero)
        }
        None => b.convert(&hit, out),
    };
    let s = b.reduce_keep(&vals, "stablehlo.add", 0.0, &[0]);
    b.reshape(&s, &dims_i64(&[bins]))
}

/// `bincount` of a 1-D non-negative integer input into `length` bins (int64 counts, or the sums of
/// f32/f64 `weights`).
fn bincount(b: &mut FunctionBuilder, x: &Value, weights: Option<&Value>, length: usize) -> Value {
    let bin = lower_cast(b, x, ElementType::S64);
    let all = b.full_like(&bin, ElementType::Pred, 1.0);
    match weights {
        Some(w) => {
            let wt = w.ty().element_type;
            one_hot_sum(b, &bin, &all, Some(w), length, wt)
        }
        None => one_hot_sum(b, &bin, &all, None, length, ElementType::S64),
    }
}

/// The rounding error of the float32 product `x = a * c` (`a * c - x`, exact), by Dekker's
/// splitting (StableHLO has no fused multiply-add).
fn product_error(b: &mut FunctionBuilder, a: &Value, c: &Value, x: &Value) -> Value {
    let split = |b: &mut FunctionBuilder, v: &Value| {
        let factor = b.full_like(v, ElementType::F32, 4097.0);
        let t = b.same("stablehlo.multiply", &[&factor, v]);
        let d = b.same("stablehlo.subtract", &[&t, v]);
        let hi = b.same("stablehlo.subtract", &[&t, &d]);
        let lo = b.same("stablehlo.subtract", &[v, &hi]);
        (hi, lo)
    };
    let (ah, al) = split(b, a);
    let (ch, cl) = split(b, c);
    let hh = b.same("stablehlo.multiply", &[&ah, &ch]);
    let e = b.same("stablehlo.subtract", &[&hh, x]);
    let hl = b.same("stablehlo.multiply", &[&ah, &cl]);
    let e = b.same("stablehlo.add", &[&e, &hl]);
    let lh = b.same("stablehlo.multiply", &[&al, &ch]);
    let e = b.same("stablehlo.add", &[&e, &lh]);
    let ll = b.same("stablehlo.multiply", &[&al, &cl]);
    b.same("stablehlo.add", &[&e, &ll])
}

/// Quantiles of `x` along `dim` at the probabilities `q`, with the CPU backend's arithmetic: the
/// rank `q * (n - 1)` exact for float32 and float64 (as torch, which computes it in f64; float32
/// here without f64, which TPUs lack, from the rounded product and its exact error), rounded to the
/// input type for f16/bf16; torch's two-sided `lerp`. A row holding NaN gives NaN. Output
/// `[q.len(), *x.dims with dim = 1]`.
fn quantile(b: &mut FunctionBuilder, x: &Value, q: &Value, dim: usize, interpolation: &str) -> Result<Value> {
    let et = x.ty().element_type;
    let acc = if matches!(et, ElementType::F16 | ElementType::BF16) { ElementType::F32 } else { et };
    let dims = x.ty().dims.clone();
    let n = dims[dim];
    let nq: i64 = q.ty().dims.iter().product();
    let (sorted, _) = sort_pair(b, x, dim, false);
    let mut qdims = dims.clone();
    qdims[dim] = nq;
    let q1 = b.reshape(q, &[nq]);
    let q1 = b.convert(&q1, acc);
    let p = b.broadcast(&q1, &qdims, &[dim as i64]);
    // r(v): round to the input type and back.
    let round = |b: &mut FunctionBuilder, v: &Value| -> Value {
        let t = b.convert(v, et);
        b.convert(&t, acc)
    };
    let n1 = b.splat(&TensorType::new(et, &qdims), (n - 1) as f64);
    let n1 = b.convert(&n1, acc);
    let pr = b.same("stablehlo.multiply", &[&p, &n1]);
    let rank = round(b, &pr);
    // The exact rank is `rank + err`: zero but for float32 (Dekker's product error; float64's
    // product of a probability and a small count is exact).
    let err =
        if et == ElementType::F32 { product_error(b, &p, &n1, &pr) } else { b.full_like(&rank, acc, 0.0) };
    let zero = b.full_like(&rank, acc, 0.0);
    let one = b.full_like(&rank, acc, 1.0);
    let floor = b.same("stablehlo.floor", &[&rank]);
    let integral = b.compare("EQ", &rank, &floor);
    let err_neg = b.compare("LT", &err, &zero);
    let err_pos = b.compare("GT", &err, &zero);
    // floor/ceil of the exact rank: an integral rounded rank moves by one when the error says the
    // exact one is below / above it (a non-integral one is at least an ulp from any integer).
    let step_down = b.same("stablehlo.and", &[&integral, &err_neg]);
    let floor_minus = b.same("stablehlo.subtract", &[&floor, &one]);
    let below = b.select(&step_down, &floor_minus, &floor);
    let ceil = b.same("stablehlo.ceil", &[&rank]);
    let step_up = b.same("stablehlo.and", &[&integral, &err_pos]);
    let ceil_plus = b.same("stablehlo.add", &[&ceil, &one]);
    let above = b.select(&step_up, &ceil_plus, &ceil);
    // the exact rank's distance past `below`, rounded once
    let frac = b.same("stablehlo.subtract", &[&rank, &below]);
    let weight = b.same("stablehlo.add", &[&frac, &err]);
    let at = |b: &mut FunctionBuilder, r: &Value| -> Result<Value> {
        let rr = round(b, r);
        let zero = b.full_like(&rr, acc, 0.0);
        let bad_nan = b.compare("NE", &rr, &rr);
        let bad_neg = b.compare("LT", &rr, &zero);
        let bad = b.same("stablehlo.or", &[&bad_nan, &bad_neg]);
        let safe = b.select(&bad, &zero, &rr);
        let i = b.convert(&safe, ElementType::S64);
        let last = b.full_like(&i, ElementType::S64, (n - 1) as f64);
        let i = b.same("stablehlo.minimum", &[&i, &last]);
        let v = gather(b, &sorted, &i, dim)?;
        Ok(b.convert(&v, acc))
    };
    let lerp = |b: &mut FunctionBuilder, a: &Value, c: &Value, w: &Value| -> Value {
        let half = b.full_like(w, acc, 0.5);
        let one = b.full_like(w, acc, 1.0);
        let diff = b.same("stablehlo.subtract", &[c, a]);
        let aw = b.same("stablehlo.abs", &[w]);
        let small = b.compare("LT", &aw, &half);
        let wd = b.same("stablehlo.multiply", &[w, &diff]);
        let lo = b.same("stablehlo.add", &[a, &wd]);
        let omw = b.same("stablehlo.subtract", &[&one, w]);
        let dw = b.same("stablehlo.multiply", &[&diff, &omw]);
        let hi = b.same("stablehlo.subtract", &[c, &dw]);
        b.select(&small, &lo, &hi)
    };
    let r = match interpolation {
        "lower" => at(b, &below)?,
        "higher" => at(b, &above)?,
        "nearest" => {
            // Round half to even of the exact rank: past the half when `frac - 1/2` (exact) is
            // positive, or zero with a positive error; a tie only when both are zero.
            let half = b.full_like(&rank, acc, 0.5);
            let d = b.same("stablehlo.subtract", &[&frac, &half]);
            let d_zero = b.compare("EQ", &d, &zero);
            let d_pos = b.compare("GT", &d, &zero);
            let tie_up = b.same("stablehlo.and", &[&d_zero, &err_pos]);
            let up = b.same("stablehlo.or", &[&d_pos, &tie_up]);
            let err_zero = b.compare("EQ", &err, &zero);
            let tie = b.same("stablehlo.and", &[&d_zero, &err_zero]);
            let two = b.full_like(&rank, acc, 2.0);
            let halved = b.same("stablehlo.divide", &[&below, &two]);
            let halved_floor = b.same("stablehlo.floor", &[&halved]);
            let below_even = b.compare("EQ", &halved, &halved_floor);
            let tie_down = b.same("stablehlo.and", &[&tie, &below_even]);
            let not_tie_down = b.same("stablehlo.not", &[&tie_down]);
            let tie_odd = b.same("stablehlo.and", &[&tie, &not_tie_down]);
            let up = b.same("stablehlo.or", &[&up, &tie_odd]);
            let next = b.same("stablehlo.add", &[&below, &one]);
            let near = b.select(&up, &next, &below);
            at(b, &near)?
        }
        "midpoint" => {
            let (a, c) = (at(b, &below)?, at(b, &above)?);
            let w = b.full_like(&a, acc, 0.5);
            lerp(b, &a, &c, &w)
        }
        _ => {
            let (a, c) = (at(b, &below)?, at(b, &above)?);
            lerp(b, &a, &c, &weight)
        }
    };
    let r = b.convert(&r, et);
    // NaN rows.
    let is_nan = b.compare("NE", x, x);
    let any = b.reduce_keep(&is_nan, "stablehlo.or", 0.0, &[dim]);
    let any = b.broadcast(&any, &qdims, &(0..dims.len() as i64).collect::<Vec<_>>());
    let nan = b.full_like(&r, et, f64::NAN);
    let r = b.select(&any, &nan, &r);
    // [.., nq, ..] -> [nq, .., 1, ..]
    let mut perm = vec![dim as i64];
    perm.extend((0..dims.len() as i64).filter(|&d| d != dim as i64));
    let t = b.transpose(&r, &perm);
    let mut out = vec![nq];
    let mut keep = dims;
    keep[dim] = 1;
    out.extend(keep);
    Ok(b.reshape(&t, &out))
}
