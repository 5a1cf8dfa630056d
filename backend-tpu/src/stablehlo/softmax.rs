//! Softmax and log-softmax along one dim (numerically stable: the row maximum is subtracted first).

use super::builder::{FunctionBuilder, Value};

/// `softmax(x)` (or `log_softmax`) along `dim`; `x` is f32 or f64 (the caller widens f16/bf16).
/// `None` for a dim past the rank.
pub fn softmax(b: &mut FunctionBuilder, x: &Value, dim: usize, log: bool) -> Option<Value> {
    let dims = x.ty().dims.clone();
    if dims.is_empty() {
        // A 0-d input is one row of one element.
        let one_d = b.reshape(x, &[1]);
        let r = softmax(b, &one_d, 0, log)?;
        return Some(b.reshape(&r, &[]));
    }
    if dim >= dims.len() {
        return None;
    }
    let all: Vec<i64> = (0..dims.len() as i64).collect();
    let m = b.reduce_keep(x, "stablehlo.maximum", f64::NEG_INFINITY, &[dim]);
    let m = b.broadcast(&m, &dims, &all);
    let shifted = b.same("stablehlo.subtract", &[x, &m]);
    let e = b.same("stablehlo.exponential", &[&shifted]);
    let s = b.reduce_keep(&e, "stablehlo.add", 0.0, &[dim]);
    let s = b.broadcast(&s, &dims, &all);
    Some(if log {
        let l = b.same("stablehlo.log", &[&s]);
        b.same("stablehlo.subtract", &[&shifted, &l])
    } else {
        b.same("stablehlo.divide", &[&e, &s])
    })
}
