//! A seeded randomized differential test of the analytic gradients of ~150 differentiable tensor
//! ops against torch (grad_fuzz/golden.rs, from make_grad_fuzz_golden.py): float64 and float32
//! inputs of random shapes (0-d, size-1 and empty dims, broadcasting pairs), non-contiguous
//! layouts (transposed, permuted, step-sliced, expanded; the leaf being the view itself or its
//! contiguous base), a random subset of inputs requiring grad, random upstream gradients, and for
//! some float64 cases second-order gradients through `create_graph`. Every case is replayed inside
//! `catch_unwind`; all mismatches are collected and reported together at the end. The root test
//! `tests/xla_gradfuzz.rs` replays the same cases on `xla:0` ([`replay`]).

#[path = "grad_fuzz/golden.rs"]
mod golden;

use std::panic::{catch_unwind, AssertUnwindSafe};

use golden::{Case, In, ACCUMULATING, CASES, G};
use oxtorch_autograd::grad;
use oxtorch_tensor::{linalg, DType, Device, Operand, Result, Tensor};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn short(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I64 => "i64",
        DType::Bool => "bool",
        _ => "other",
    }
}

fn nums(text: &str) -> Vec<i64> {
    text.split(',').filter(|s| !s.is_empty()).map(|s| s.trim().parse().expect("an integer")).collect()
}

/// Applies an input's layout ops (`t a,b`, `p perm`, `s dim,start,end,step`, `e sizes`).
fn apply_layout(mut t: Tensor, layout: &str) -> Result<Tensor> {
    for op in layout.split('|').filter(|s| !s.is_empty()) {
        let (kind, rest) = op.split_at(1);
        let n = nums(rest.trim());
        t = match kind {
            "t" => t.transpose(n[0] as isize, n[1] as isize)?,
            "p" => t.permute(n.iter().map(|&d| d as isize).collect::<Vec<_>>())?,
            "s" => t.slice(n[0] as isize, n[1]..n[2], n[3] as usize)?,
            "e" => t.expand(n)?,
            other => panic!("unknown layout op {other}"),
        };
    }
    Ok(t)
}

/// Rebuilds one input on `device`: the tensor the op reads and, where it requires grad, the leaf
/// (the base for `of_base`, else the detached view).
fn build(i: &In, device: Device) -> Result<(Tensor, Option<Tensor>)> {
    let base = match i.dtype {
        "i64" => {
            let v: Vec<i64> = i.vals.iter().map(|&v| v as i64).collect();
            return Ok((Tensor::from_slice(&v[..], i.base.to_vec())?.to(device)?, None));
        }
        "bool" => {
            let v: Vec<bool> = i.vals.iter().map(|&v| v != 0.0).collect();
            return Ok((Tensor::from_slice(&v[..], i.base.to_vec())?.to(device)?, None));
        }
        dt => Tensor::from_slice(i.vals, i.base.to_vec())?.to((device, dtype_of(dt)))?,
    };
    if i.grad && i.of_base {
        let leaf = base.requires_grad_(true)?;
        let t = apply_layout(leaf.clone(), i.layout)?;
        return Ok((t, Some(leaf)));
    }
    let t = apply_layout(base, i.layout)?;
    if i.grad {
        let leaf = t.detach().requires_grad_(true)?;
        return Ok((leaf.clone(), Some(leaf)));
    }
    Ok((t, None))
}

/// The case's `key=value` arguments.
struct Args(Vec<(&'static str, &'static str)>);

impl Args {
    fn parse(text: &'static str) -> Args {
        Args(
            text.split(';')
                .filter(|s| !s.is_empty())
                .map(|kv| kv.split_once('=').expect("key=value"))
                .collect(),
        )
    }

    fn s(&self, key: &str) -> &'static str {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no argument {key}"))
    }

    fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| *k == key)
    }

    fn f(&self, key: &str) -> f64 {
        self.s(key).parse().expect("a number")
    }

    fn opt_f(&self, key: &str) -> Option<f64> {
        let v = self.s(key);
        (v != "none").then(|| v.parse().expect("a number"))
    }

    fn i(&self, key: &str) -> i64 {
        self.s(key).parse().expect("an integer")
    }

    fn u(&self, key: &str) -> usize {
        self.i(key) as usize
    }

    fn d(&self, key: &str) -> isize {
        self.i(key) as isize
    }

    fn opt_d(&self, key: &str) -> Option<isize> {
        let v = self.s(key);
        (v != "none").then(|| v.parse().expect("an integer"))
    }

    fn b(&self, key: &str) -> bool {
        self.s(key) == "1"
    }

    fn dims(&self, key: &str) -> Vec<isize> {
        nums(self.s(key)).into_iter().map(|d| d as isize).collect()
    }

    fn udims(&self, key: &str) -> Vec<usize> {
        nums(self.s(key)).into_iter().map(|d| d as usize).collect()
    }
}

/// Runs the case's op on its inputs; its outputs in torch's order. `None`: no replay for the op.
fn run(case: &Case, x: &[Tensor]) -> Option<Result<Vec<Tensor>>> {
    let a = Args::parse(case.args);
    let one = |r: Result<Tensor>| Some(r.map(|t| vec![t]));
    let first = |r: Result<(Tensor, Tensor)>| Some(r.map(|t| vec![t.0]));
    let x0 = &x[0];
    let other = || -> Operand {
        if a.has("scalar") {
            Operand::from(a.f("scalar"))
        } else {
            Operand::from(&x[1])
        }
    };
    let refs: Vec<&Tensor> = x.iter().collect();
    match case.op {
        // unary
        "exp" => one(x0.exp()),
        "log" => one(x0.log()),
        "sqrt" => one(x0.sqrt()),
        "rsqrt" => one(x0.rsqrt()),
        "sin" => one(x0.sin()),
        "cos" => one(x0.cos()),
        "tan" => one(x0.tan()),
        "tanh" => one(x0.tanh()),
        "sigmoid" => one(x0.sigmoid()),
        "erf" => one(x0.erf()),
        "erfinv" => one(x0.erfinv()),
        "atan" => one(x0.atan()),
        "asin" => one(x0.asin()),
        "acos" => one(x0.acos()),
        "sinh" => one(x0.sinh()),
        "cosh" => one(x0.cosh()),
        "asinh" => one(x0.asinh()),
        "acosh" => one(x0.acosh()),
        "atanh" => one(x0.atanh()),
        "expm1" => one(x0.expm1()),
        "log1p" => one(x0.log1p()),
        "reciprocal" => one(x0.reciprocal()),
        "abs" => one(x0.abs()),
        "neg" => one(x0.neg()),
        "square" => one(x0.square()),
        "relu" => one(x0.relu()),
        "mish" => one(x0.mish()),
        "silu" => one(x0.silu()),
        "selu" => one(x0.selu()),
        "hardswish" => one(x0.hardswish()),
        "hardsigmoid" => one(x0.hardsigmoid()),
        "relu6" => one(x0.relu6()),
        "exp2" => one(x0.exp2()),
        "log2" => one(x0.log2()),
        "log10" => one(x0.log10()),
        "sinc" => one(x0.sinc()),
        "logit" => one(x0.logit(a.opt_f("eps"))),
        "pow_scalar" => one(x0.pow(a.f("e"))),
        "pow_tensor" => one(x0.pow(&x[1])),
        "softplus" => one(x0.softplus(a.f("beta"), a.f("threshold"))),
        "gelu" => one(x0.gelu(a.s("approximate"))),
        "elu" => one(x0.elu(a.f("alpha"))),
        "celu" => one(x0.celu(a.f("alpha"))),
        "leaky_relu" => one(x0.leaky_relu(a.f("slope"))),
        "hardtanh" => one(x0.hardtanh(a.f("lo"), a.f("hi"))),
        // binary
        "add" => one(x0.add(other())),
        "sub" => one(x0.sub(other())),
        "mul" => one(x0.mul(other())),
        "div" => one(x0.div(other())),
        "fmod" => one(x0.fmod(other())),
        "remainder" => one(x0.remainder(other())),
        "atan2" => one(x0.atan2(&x[1])),
        "hypot" => one(x0.hypot(&x[1])),
        "maximum" => one(x0.maximum(&x[1])),
        "minimum" => one(x0.minimum(&x[1])),
        "xlogy" => one(x0.xlogy(&x[1])),
        "xlog1py" => one(x0.xlog1py(&x[1])),
        "copysign" => one(x0.copysign(&x[1])),
        "logaddexp" => one(x0.logaddexp(&x[1])),
        "float_power" => one(x0.float_power(&x[1])),
        "lerp" => {
            if x.len() == 3 {
                one(x0.lerp(&x[1], &x[2]))
            } else {
                one(x0.lerp(&x[1], a.f("w")))
            }
        }
        "where" => one(Tensor::where_cond(x0, &x[1], &x[2])),
        "clamp" => {
            let (lo, hi) = match a.s("mode") {
                "tt" => (Some(Operand::from(&x[1])), Some(Operand::from(&x[2]))),
                "tn" => (Some(Operand::from(&x[1])), None),
                "nt" => (None, Some(Operand::from(&x[1]))),
                _ => (Some(Operand::from(a.f("lo"))), Some(Operand::from(a.f("hi")))),
            };
            one(x0.clamp(lo, hi))
        }
        // reductions
        "sum" => {
            let dims = a.dims("dims");
            if dims.is_empty() {
                one(x0.sum_all())
            } else {
                one(x0.sum(dims, a.b("keepdim")))
            }
        }
        "mean" => {
            let dims = a.dims("dims");
            if dims.is_empty() {
                one(x0.mean_all())
            } else {
                one(x0.mean(dims, a.b("keepdim")))
            }
        }
        "prod" => match a.opt_d("dim") {
            None => one(x0.prod_all()),
            Some(d) => one(x0.prod(vec![d], a.b("keepdim"))),
        },
        "std" => one(x0.std(a.dims("dims"), a.f("correction"), a.b("keepdim"))),
        "var" => one(x0.var(a.dims("dims"), a.f("correction"), a.b("keepdim"))),
        "norm" => one(x0.norm(a.f("p"), a.dims("dims"), a.b("keepdim"))),
        "logsumexp" => one(x0.logsumexp(a.dims("dims"), a.b("keepdim"))),
        "amax" => one(x0.amax(a.dims("dims"), a.b("keepdim"))),
        "amin" => one(x0.amin(a.dims("dims"), a.b("keepdim"))),
        "max_all" => one(x0.max()),
        "min_all" => one(x0.min()),
        "max_dim" => first(x0.max_dim(a.d("dim"), a.b("keepdim"))),
        "min_dim" => first(x0.min_dim(a.d("dim"), a.b("keepdim"))),
        "median" => first(x0.median(a.d("dim"), a.b("keepdim"))),
        "median_all" => one(x0.median_all()),
        "cumsum" => one(x0.cumsum(a.d("dim"), None)),
        "cumprod" => one(x0.cumprod(a.d("dim"), None)),
        "logcumsumexp" => one(x0.logcumsumexp(a.d("dim"))),
        "softmax" => one(x0.softmax(a.d("dim"), None)),
        "log_softmax" => one(x0.log_softmax(a.d("dim"), None)),
        "kthvalue" => first(x0.kthvalue(a.i("k"), a.d("dim"), a.b("keepdim"))),
        "topk" => first(x0.topk(a.i("k"), a.d("dim"), a.b("largest"), true)),
        "sort" => first(x0.sort(a.d("dim"), a.b("descending"))),
        // shape and view ops
        "permute" => one(x0.permute(a.dims("perm"))),
        "transpose" => one(x0.transpose(a.d("d0"), a.d("d1"))),
        "reshape" => one(x0.reshape(a.dims("shape"))),
        "expand" => one(x0.expand(a.dims("sizes"))),
        "narrow" => one(x0.narrow(a.d("dim"), a.d("start"), a.u("len"))),
        "slice" => one(x0.slice(a.d("dim"), a.i("start")..a.i("end"), a.u("step"))),
        "unfold" => one(x0.unfold(a.d("dim"), a.u("size"), a.u("step"))),
        "flip" => one(x0.flip(a.dims("dims"))),
        "roll" => one(x0.roll(a.dims("shifts"), a.dims("dims"))),
        "repeat" => one(x0.repeat(a.dims("reps"))),
        "tile" => one(x0.tile(a.dims("reps"))),
        "repeat_interleave" => one(x0.repeat_interleave(a.i("repeats"), a.opt_d("dim"))),
        "cat" => one(Tensor::cat(&refs, a.d("dim"))),
        "stack" => one(Tensor::stack(&refs, a.d("dim"))),
        "split" => Some(x0.split(a.u("size"), a.d("dim"))),
        "split_with_sizes" => Some(x0.split_with_sizes(&a.udims("sizes"), a.d("dim"))),
        "chunk" => Some(x0.chunk(a.u("chunks"), a.d("dim"))),
        "unbind" => Some(x0.unbind(a.d("dim"))),
        "diagonal" => one(x0.diagonal(a.d("offset"), a.d("d1"), a.d("d2"))),
        "tril" => one(x0.tril(a.i("k"))),
        "triu" => one(x0.triu(a.i("k"))),
        "squeeze" => {
            if a.s("dims") == "all" {
                one(x0.squeeze())
            } else {
                one(x0.squeeze_dims(a.dims("dims")))
            }
        }
        "unsqueeze" => one(x0.unsqueeze(a.d("dim"))),
        "movedim" => one(x0.movedim(a.dims("src"), a.dims("dst"))),
        "flatten" => one(x0.flatten(a.d("start"), a.d("end"))),
        "as_strided" => one(x0.as_strided(&a.udims("size"), &a.udims("stride"), Some(a.u("offset")))),
        // indexing
        "gather" => one(x0.gather(a.d("dim"), &x[1])),
        "take_along_dim" => one(x0.take_along_dim(&x[1], Some(a.d("dim")))),
        "scatter" => one(x0.scatter(a.d("dim"), &x[1], &x[2])),
        "scatter_add" => one(x0.scatter_add(a.d("dim"), &x[1], &x[2])),
        "scatter_reduce" => {
            one(x0.scatter_reduce(a.d("dim"), &x[1], &x[2], a.s("reduce"), a.b("include_self")))
        }
        "index_select" => one(x0.index_select(a.d("dim"), &x[1])),
        "index_add" => one(x0.index_add(a.d("dim"), &x[1], &x[2], a.f("alpha"))),
        "index_copy" => one(x0.index_copy(a.d("dim"), &x[1], &x[2])),
        "index_fill" => one(x0.index_fill(a.d("dim"), &x[1], a.f("value"))),
        "index_put" => {
            let n = a.u("nidx");
            let idx: Vec<Tensor> = x[1..=n].to_vec();
            one(x0.index_put(idx, &x[n + 1], a.b("accumulate")))
        }
        "masked_fill" => one(x0.masked_fill(&x[1], a.f("value"))),
        "masked_select" => one(x0.masked_select(&x[1])),
        "masked_scatter" => one(x0.masked_scatter(&x[1], &x[2])),
        "take" => one(x0.take(&x[1])),
        // linalg
        "mm" => one(x0.mm(&x[1])),
        "bmm" => one(x0.bmm(&x[1])),
        "matmul" => one(x0.matmul(&x[1])),
        "addmm" => one(x0.addmm(&x[1], &x[2], a.f("beta"), a.f("alpha"))),
        "baddbmm" => one(x0.baddbmm(&x[1], &x[2], a.f("beta"), a.f("alpha"))),
        "einsum" => one(Tensor::einsum(a.s("eq"), &refs)),
        "outer" => one(x0.outer(&x[1])),
        "dot" => one(x0.dot(&x[1])),
        "tensordot" => one(x0.tensordot(&x[1], a.d("dims"))),
        "kron" => one(x0.kron(&x[1])),
        "det" => one(x0.det()),
        "inverse" => one(x0.inverse()),
        "solve" => one(linalg::solve(x0, &x[1], true)),
        "cholesky" => one(linalg::cholesky(x0, a.b("upper"))),
        "qr" => Some(linalg::qr(x0, a.s("mode")).map(|(q, r)| vec![q, r])),
        "trace" => one(x0.trace()),
        "cross" => one(linalg::cross(x0, &x[1], a.d("dim"))),
        // nn-ish
        "layer_norm" => one(x0.layer_norm(&a.udims("ns"), x.get(1), x.get(2), 1e-5)),
        "group_norm" => one(x0.group_norm(a.u("groups"), x.get(1), x.get(2), 1e-5)),
        "conv1d" => {
            let (s, p, d) = (a.u("stride"), a.u("padding"), a.u("dilation"));
            one(x0.conv1d(&x[1], x.get(2), &[s], [p], &[d], a.u("groups")))
        }
        "conv2d" => {
            let (s, p, d) = (a.u("stride"), a.u("padding"), a.u("dilation"));
            one(x0.conv2d(&x[1], x.get(2), &[s, s], [p, p], &[d, d], a.u("groups")))
        }
        "linear" => one(x0.linear(&x[1], x.get(2))),
        "embedding" => one(x0.embedding(&x[1], a.opt_d("padding_idx").map(|p| p as i64))),
        "pad" => one(x0.pad(&a.dims("pad"), a.s("mode"), a.opt_f("value"))),
        "cdist" => one(x0.cdist(&x[1], a.f("p"))),
        _ => None,
    }
}

/// The tolerance of the case: float32 if any input is float32.
fn tolerance(case: &Case) -> (f64, f64) {
    if case.inputs.iter().any(|i| i.dtype == "f32") {
        (1e-4, 1e-5)
    } else {
        (1e-7, 1e-9)
    }
}

fn preview(v: &[f64]) -> String {
    let head: Vec<String> = v.iter().take(10).map(|x| format!("{x:?}")).collect();
    format!("[{}{}]", head.join(", "), if v.len() > 10 { ", ..." } else { "" })
}

/// Compares one tensor with torch's; `Some` describes the first difference. `zero_is_none`: a
/// missing tensor matches an all-zero one (second order, where torch and oxtorch may differ in
/// which zero gradients they leave out).
fn compare(
    case: &Case,
    what: &str,
    got: Option<&Tensor>,
    want: Option<&G>,
    zero_is_none: bool,
) -> Option<String> {
    let (got, want) = match (got, want) {
        (None, None) => return None,
        (Some(g), None) => {
            if zero_is_none && g.to_f64_vec().is_ok_and(|v| v.iter().all(|&x| x == 0.0)) {
                return None;
            }
            return Some(format!("{what}: torch has None, got a tensor of shape {:?}", g.dims()));
        }
        (None, Some(w)) => {
            if zero_is_none && w.1.iter().all(|&x| x == 0.0) {
                return None;
            }
            return Some(format!("{what}: got None, torch has shape {:?} values {}", w.0, preview(w.1)));
        }
        (Some(g), Some(w)) => (g, w),
    };
    if got.dims() != want.0 {
        return Some(format!("{what}: shape {:?}, torch {:?}", got.dims(), want.0));
    }
    let vals = match got.contiguous().and_then(|t| t.to_f64_vec()) {
        Ok(v) => v,
        Err(e) => return Some(format!("{what}: reading the values failed: {e}")),
    };
    let (rtol, mut atol) = tolerance(case);
    if ACCUMULATING.contains(&case.op) {
        let scale = want.1.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
        atol += rtol * scale;
    }
    for (i, (&g, &w)) in vals.iter().zip(want.1).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= rtol * w.abs() + atol
        };
        if !ok {
            return Some(format!(
                "{what}[{i}]: got {g:?}, torch {w:?}; got {} torch {}",
                preview(&vals),
                preview(want.1)
            ));
        }
    }
    None
}

fn describe(case: &Case) -> String {
    let ins: Vec<String> = case
        .inputs
        .iter()
        .map(|i| {
            let lay = if i.layout.is_empty() {
                String::new()
            } else {
                format!(" <{}>{}", i.layout, if i.of_base { " of base" } else { "" })
            };
            format!("{}{:?}{}{}", i.dtype, i.base, lay, if i.grad { " grad" } else { "" })
        })
        .collect();
    format!("#{} {}({}) [{}]", case.id, case.op, case.args, ins.join(", "))
}

/// A golden literal as a tensor of `like`'s dtype on its device.
fn tensor_of(g: &G, like: &Tensor) -> Result<Tensor> {
    Tensor::from_slice(g.1, g.0.to_vec())?.to((like.device(), like.dtype()))
}

/// What differs from torch in one case run on `device` (`None` when it matches).
fn check(case: &Case, device: Device) -> Option<String> {
    let built = match case.inputs.iter().map(|i| build(i, device)).collect::<Result<Vec<_>>>() {
        Ok(v) => v,
        Err(e) => return Some(format!("building the inputs failed: {e}")),
    };
    let inputs: Vec<Tensor> = built.iter().map(|(t, _)| t.clone()).collect();
    let leaves: Vec<Tensor> = built.iter().filter_map(|(_, l)| l.clone()).collect();
    let Some(result) = run(case, &inputs) else {
        return Some("no replay for this op".to_string());
    };
    let outs = match (result, case.error) {
        (Err(_), Some(_)) => return None,
        (Err(e), None) => return Some(format!("oxtorch raised in the forward: {e}")),
        (Ok(_), Some(msg)) if msg.starts_with("forward:") => {
            return Some(format!("torch raised ({msg}), oxtorch did not"));
        }
        (Ok(outs), _) => outs,
    };
    if case.error.is_none() {
        if outs.len() != case.outputs.len() {
            return Some(format!("{} outputs, torch {}", outs.len(), case.outputs.len()));
        }
        for (k, (o, w)) in outs.iter().zip(case.outputs).enumerate() {
            if short(o.dtype()) != case.out_dtype {
                return Some(format!("output {k}: dtype {}, torch {}", short(o.dtype()), case.out_dtype));
            }
            if let Some(d) = compare(case, &format!("output {k}"), Some(o), Some(w), false) {
                return Some(d);
            }
        }
    }
    let Some(sel) = case.sel.iter().map(|&k| outs.get(k).cloned()).collect::<Option<Vec<Tensor>>>() else {
        return Some(format!("{} outputs, torch differentiates outputs {:?}", outs.len(), case.sel));
    };
    let second = case.second.is_some();
    let ups = match sel.iter().zip(case.ups).map(|(o, g)| tensor_of(g, o)).collect::<Result<Vec<_>>>() {
        Ok(u) => u,
        Err(e) => return Some(format!("building the upstream gradients failed: {e}")),
    };
    let first = match grad(&sel, &leaves, Some(ups.as_slice()), false, second, true) {
        Ok(g) => g,
        Err(e) => {
            return match case.error {
                Some(_) => None,
                None => Some(format!("oxtorch raised in the backward: {e}")),
            };
        }
    };
    if let Some(msg) = case.error {
        return Some(format!("torch raised ({msg}), oxtorch did not"));
    }
    if first.len() != case.grads.len() {
        return Some(format!("{} gradients, torch {}", first.len(), case.grads.len()));
    }
    let mut diffs = vec![];
    for (k, (g, w)) in first.iter().zip(case.grads).enumerate() {
        diffs.extend(compare(case, &format!("grad {k}"), g.as_ref(), w.as_ref(), false));
    }
    if let Some(want2) = case.second {
        match second_order(&first, case.vs, &leaves) {
            Err(e) => diffs.push(format!("second order raised: {e}")),
            Ok(got2) => {
                for (k, w) in want2.iter().enumerate() {
                    let g = got2.get(k).and_then(|g| g.as_ref());
                    diffs.extend(compare(case, &format!("second-order grad {k}"), g, w.as_ref(), true));
                }
            }
        }
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

/// `grad(sum_i (first_i * v_i).sum(), leaves, allow_unused=True)` over the first-order gradients
/// that require grad (all `None` when none does).
fn second_order(first: &[Option<Tensor>], vs: &[G], leaves: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
    let mut s: Option<Tensor> = None;
    for (g, v) in first.iter().zip(vs) {
        if let Some(g) = g.as_ref().filter(|g| g.requires_grad()) {
            let term = g.mul(&tensor_of(v, g)?)?.sum_all()?;
            s = Some(match s {
                None => term,
                Some(acc) => acc.add(&term)?,
            });
        }
    }
    match s {
        None => Ok(vec![None; leaves.len()]),
        Some(s) => grad(std::slice::from_ref(&s), leaves, None, false, false, true),
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

#[test]
fn every_op_in_the_golden_has_a_replay() {
    let mut missing = std::collections::BTreeSet::new();
    for case in CASES {
        let inputs: Vec<Tensor> = case
            .inputs
            .iter()
            .map(|i| build(i, Device::Cpu).map(|(t, _)| t))
            .collect::<Result<Vec<_>>>()
            .expect("the inputs build");
        // `run` matches on the name before running anything that could fail, so catch panics of
        // the op itself (they are reported by the other test).
        let known = catch_unwind(AssertUnwindSafe(|| run(case, &inputs).is_some())).unwrap_or(true);
        if !known {
            missing.insert(case.op);
        }
    }
    assert!(missing.is_empty(), "ops without a replay: {missing:?}");
}

/// Replays every case on `device`: one line per case that differs from torch.
pub fn replay(device: Device) -> Vec<String> {
    let mut report = vec![];
    for case in CASES {
        let diff = match catch_unwind(AssertUnwindSafe(|| check(case, device))) {
            Ok(d) => d,
            Err(p) => Some(format!("PANIC {}", panic_text(p))),
        };
        if let Some(d) = diff {
            report.push(format!("{}: {d}", describe(case)));
        }
    }
    report
}

#[test]
fn random_op_gradients_match_torch() {
    let report = replay(Device::Cpu);
    assert!(
        report.is_empty(),
        "{} of {} cases differ from torch:\n{}",
        report.len(),
        CASES.len(),
        report.join("\n")
    );
}
