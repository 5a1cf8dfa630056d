//! The fused cross-entropy of logit rows against class indices ([`NnOp::CrossEntropy`] and its
//! gradient), with the CPU kernel's semantics: two reductions over the logits forward and one
//! elementwise pass backward, where the composition (`log_softmax` + `nll_loss`) took about ten
//! passes over a language model's `[tokens, vocab]` logits.
//!
//! [`NnOp::CrossEntropy`]: oxtorch_core::ops::NnOp::CrossEntropy

use super::builder::{FunctionBuilder, Value};
use super::host_call::{host_call, s64_constant, view_listing, HostOperand, HostView};
use super::index::gather;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// Checks `(logits [N, C] f32/f64, target [N] i64)`; returns `(N, C)`.
fn check(x: &Value, t: &Value) -> Result<(i64, i64)> {
    let (xd, td) = (&x.ty().dims, &t.ty().dims);
    if !matches!(x.ty().element_type, ElementType::F32 | ElementType::F64) {
        return Err(Error::Unsupported(format!("\"cross_entropy\" does not support {}", x.ty())));
    }
    if xd.len() != 2 || t.ty().element_type != ElementType::S64 || td.len() != 1 || td[0] != xd[0] {
        return Err(Error::InvalidArgument(format!(
            "cross_entropy expects [N, C] logits and [N] int64 targets, got {} and {}",
            x.ty(),
            t.ty()
        )));
    }
    Ok((xd[0], xd[1]))
}

/// Which rows are left out (`[N]` bool). The targets are validated to lie in `[0, C)` or equal
/// `ignore_index`, so an index that no f64 holds exactly (beyond ±2^53, hence outside `[0, C)`)
/// is found as a target outside the classes.
fn ignored(b: &mut FunctionBuilder, t: &Value, c: i64, ignore_index: i64) -> Value {
    if ignore_index.unsigned_abs() <= 1 << 53 {
        let ig = b.splat(t.ty(), ignore_index as f64);
        return b.compare("EQ", t, &ig);
    }
    let zero = b.splat(t.ty(), 0.0);
    let classes = b.splat(t.ty(), c as f64);
    let below = b.compare("LT", t, &zero);
    let above = b.compare("GE", t, &classes);
    b.same("stablehlo.or", &[&below, &above])
}

/// The host kernel target of the forward for `element_type` (f32 and f64), as the XLA backend
/// registers it with the CPU plugin.
pub fn host_cross_entropy_target(element_type: ElementType) -> Option<String> {
    match element_type {
        ElementType::F32 => Some("oxtorch_cross_entropy_f32".into()),
        ElementType::F64 => Some("oxtorch_cross_entropy_f64".into()),
        _ => None,
    }
}

/// The forward as a call to the host kernel: operands `(logits' storage, t, [ignore_index],
/// listing of the logits' view)`, results `(losses [N], statistics [N, 2])`. The view is
/// `[..., C]` with adjacent classes, one row per target, so a narrowed slice of a language model's
/// logits is read in place; the kernel reads each row once, in cache. `None` when the element
/// type has no host kernel.
pub fn host_cross_entropy(
    b: &mut FunctionBuilder,
    logits: &HostOperand,
    t: &Value,
    ignore_index: i64,
) -> Option<Vec<Value>> {
    let et = logits.storage.ty().element_type;
    let target = host_cross_entropy_target(et)?;
    let n = t.ty().dims.iter().product::<i64>();
    let ignore = s64_constant(b, &[ignore_index]);
    let listing = view_listing(b, &[&logits.view]);
    let results = [TensorType::new(et, &[n]), TensorType::new(et, &[n, 2])];
    Some(host_call(b, &target, &[&logits.storage, t, &ignore, &listing], &results))
}

/// `[N]` losses `-log_softmax(x)[t]` (0 where ignored) and `[N, 2]` statistics (the row maximum
/// and the log of the shifted exponentials' sum) for [`backward`].
pub fn forward(b: &mut FunctionBuilder, x: &Value, t: &Value, ignore_index: i64) -> Result<Vec<Value>> {
    let (n, c) = check(x, t)?;
    let et = x.ty().element_type;
    if n == 0 || c == 0 {
        // No classes: every target is ignored (validated), so every loss is 0, as on the CPU.
        return Ok(vec![
            b.splat(&TensorType::new(et, &[n]), 0.0),
            b.splat(&TensorType::new(et, &[n, 2]), 0.0),
        ]);
    }
    if b.host_kernels() {
        let storage = b.row_major_source(x).unwrap_or(x).clone();
        let logits = HostOperand { storage, view: HostView::row_major(&[n, c]) };
        if let Some(out) = host_cross_entropy(b, &logits, t, ignore_index) {
            return Ok(out);
        }
    }
    let dims = x.ty().dims.clone();
    let m = b.reduce_keep(x, "stablehlo.maximum", f64::NEG_INFINITY, &[1]);
    let mb = b.broadcast(&m, &dims, &[0, 1]);
    let shifted = b.same("stablehlo.subtract", &[x, &mb]);
    let e = b.same("stablehlo.exponential", &[&shifted]);
    let s = b.reduce_keep(&e, "stablehlo.add", 0.0, &[1]);
    let log_sum = b.same("stablehlo.log", &[&s]);
    // The target's logit; ignored rows read class 0 and are zeroed below.
    let skip = ignored(b, t, c, ignore_index);
    let zero_t = b.splat(t.ty(), 0.0);
    let safe = b.select(&skip, &zero_t, t);
    let safe = b.reshape(&safe, &[n, 1]);
    let picked = gather(b, x, &safe, 1)?;
    let logp = b.same("stablehlo.subtract", &[&picked, &m]);
    let logp = b.same("stablehlo.subtract", &[&logp, &log_sum]);
    let loss = b.same("stablehlo.negate", &[&logp]);
    let loss = b.reshape(&loss, &[n]);
    let zero = b.splat(loss.ty(), 0.0);
    let loss = b.select(&skip, &zero, &loss);
    let stats = b.concat(&[&m, &log_sum], 1);
    Ok(vec![loss, stats])
}

/// `(softmax(x) - onehot(t)) * g` for inputs `(logits [N, C], target [N], stats [N, 2], g [N])`;
/// an ignored row is `softmax(x) * 0`, as on the CPU.
pub fn backward(b: &mut FunctionBuilder, inputs: &[Value], ignore_index: i64) -> Result<Value> {
    let [x, t, stats, g] = inputs else {
        return Err(Error::InvalidArgument(format!(
            "cross_entropy_backward takes 4 inputs, got {}",
            inputs.len()
        )));
    };
    let (n, c) = check(x, t)?;
    let et = x.ty().element_type;
    if stats.ty().dims != [n, 2]
        || g.ty().dims != [n]
        || stats.ty().element_type != et
        || g.ty().element_type != et
    {
        return Err(Error::InvalidArgument(format!(
            "cross_entropy_backward: expected stats [{n}, 2] and grad [{n}] of {et:?}, got {} and {}",
            stats.ty(),
            g.ty()
        )));
    }
    let dims = x.ty().dims.clone();
    if n == 0 || c == 0 {
        return Ok(b.splat(x.ty(), 0.0));
    }
    let row = |b: &mut FunctionBuilder, v: &Value| b.broadcast(v, &dims, &[0, 1]);
    let m = b.slice_dim(stats, 1, 0, 1);
    let log_sum = b.slice_dim(stats, 1, 1, 2);
    let (m, log_sum) = (row(b, &m), row(b, &log_sum));
    let g2 = b.reshape(g, &[n, 1]);
    let g2 = row(b, &g2);
    let logp = b.same("stablehlo.subtract", &[x, &m]);
    let logp = b.same("stablehlo.subtract", &[&logp, &log_sum]);
    let p = b.same("stablehlo.exponential", &[&logp]);
    let pg = b.same("stablehlo.multiply", &[&p, &g2]);
    let hit_minus = b.same("stablehlo.subtract", &[&pg, &g2]);
    let classes = b.iota(&TensorType::new(ElementType::S64, &dims), 1);
    let t2 = b.reshape(t, &[n, 1]);
    let t2 = b.broadcast(&t2, &dims, &[0, 1]);
    let hit = b.compare("EQ", &classes, &t2);
    let out = b.select(&hit, &hit_minus, &pg);
    // An ignored row is torch's log-softmax gradient of a zero row, `0 - softmax(x) · 0`: zero,
    // or NaN where the row's softmax is NaN.
    let skip = ignored(b, t, c, ignore_index);
    let skip = b.reshape(&skip, &[n, 1]);
    let skip = b.broadcast(&skip, &dims, &[0, 1]);
    let zero = b.splat(x.ty(), 0.0);
    let p0 = b.same("stablehlo.multiply", &[&p, &zero]);
    Ok(b.select(&skip, &p0, &out))
}
