//! A seeded random fuzz of ~120 tensor ops against torch (op_fuzz_golden.rs, from
//! make_op_fuzz_golden.py): random dtypes, shapes (0-d, empty, size-1, broadcasting pairs),
//! non-contiguous inputs (transposed, permuted, step-sliced, expanded) and special values. Every
//! case is replayed; all mismatches are collected and reported together at the end.
//!
//! The XLA binary `xla_opfuzz.rs` replays the same cases on `xla:0` through [`replay`].

use oxtorch_tensor::{DType, Device, Operand, Result, Tensor};

use crate::common::{panic_message, quietly};
use crate::op_fuzz_golden::{Case, In, Out, CASES};

fn dtype_of(name: &str) -> DType {
    match name {
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i8" => DType::I8,
        "u8" => DType::U8,
        "i16" => DType::I16,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn nums(text: &str) -> Vec<i64> {
    text.split(',').filter(|s| !s.is_empty()).map(|s| s.trim().parse().expect("an integer")).collect()
}

/// Rebuilds one input: the contiguous base tensor, then its layout ops.
fn build(i: &In) -> Result<Tensor> {
    let mut t = Tensor::from_slice(i.vals, i.base.to_vec())?.to_dtype(dtype_of(i.dtype))?;
    for op in i.layout.split('|').filter(|s| !s.is_empty()) {
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
}

/// A number operand in the input's kind (an integer for integer and bool tensors).
fn number(x: &Tensor, v: f64) -> Operand {
    if x.dtype().is_float() {
        Operand::from(v)
    } else {
        Operand::from(v as i64)
    }
}

fn pair((a, b): (Tensor, Tensor)) -> Vec<Tensor> {
    vec![a, b]
}

fn triple((a, b, c): (Tensor, Option<Tensor>, Option<Tensor>)) -> Vec<Tensor> {
    let mut out = vec![a];
    out.extend(b);
    out.extend(c);
    out
}

/// Runs the case's op on its inputs. `None`: oxtorch has no such op.
fn run(case: &Case, x: &[Tensor]) -> Option<Result<Vec<Tensor>>> {
    let a = Args::parse(case.args);
    let one = |r: Result<Tensor>| Some(r.map(|t| vec![t]));
    let x0 = &x[0];
    let binary_other = || -> Operand {
        if a.has("scalar") {
            let v = a.f("scalar");
            if a.s("kind") == "f" {
                Operand::from(v)
            } else {
                Operand::from(v as i64)
            }
        } else {
            Operand::from(&x[1])
        }
    };
    match case.op {
        "add" => one(x0.add(binary_other())),
        "sub" => one(x0.sub(binary_other())),
        "mul" => one(x0.mul(binary_other())),
        "div" => one(x0.div(binary_other())),
        "div_trunc" => one(x0.div_rounding(binary_other(), Some("trunc"))),
        "div_floor" => one(x0.div_rounding(binary_other(), Some("floor"))),
        "pow" => one(x0.pow(binary_other())),
        "fmod" => one(x0.fmod(binary_other())),
        "remainder" => one(x0.remainder(binary_other())),
        "floor_divide" => one(x0.floor_divide(binary_other())),
        "atan2" => one(x0.atan2(binary_other())),
        "hypot" => one(x0.hypot(binary_other())),
        "copysign" => one(x0.copysign(binary_other())),
        "maximum" => one(x0.maximum(binary_other())),
        "minimum" => one(x0.minimum(binary_other())),
        "fmax" => one(x0.fmax(&x[1])),
        "fmin" => one(x0.fmin(&x[1])),
        "eq" => one(x0.eq(binary_other())),
        "ne" => one(x0.ne(binary_other())),
        "lt" => one(x0.lt(binary_other())),
        "le" => one(x0.le(binary_other())),
        "gt" => one(x0.gt(binary_other())),
        "ge" => one(x0.ge(binary_other())),
        "bitwise_and" => one(x0.bitwise_and(binary_other())),
        "bitwise_or" => one(x0.bitwise_or(binary_other())),
        "bitwise_xor" => one(x0.bitwise_xor(binary_other())),
        "bitwise_left_shift" => one(x0.bitwise_left_shift(binary_other())),
        "bitwise_right_shift" => one(x0.bitwise_right_shift(binary_other())),
        "abs" => one(x0.abs()),
        "neg" => one(x0.neg()),
        "sign" => one(x0.sign()),
        "floor" => one(x0.floor()),
        "ceil" => one(x0.ceil()),
        "trunc" => one(x0.trunc()),
        "frac" => one(x0.frac()),
        "round" => one(x0.round()),
        "sqrt" => one(x0.sqrt()),
        "exp" => one(x0.exp()),
        "log" => one(x0.log()),
        "sigmoid" => one(x0.sigmoid()),
        "reciprocal" => one(x0.reciprocal()),
        "expm1" => one(x0.expm1()),
        "log1p" => one(x0.log1p()),
        "sin" => one(x0.sin()),
        "isnan" => one(x0.isnan()),
        "bitwise_not" => one(x0.bitwise_not()),
        "round_decimals" => one(x0.round_decimals(a.i("decimals"))),
        "nan_to_num" => one(x0.nan_to_num(a.opt_f("nan"), a.opt_f("posinf"), a.opt_f("neginf"))),
        "logit" => one(x0.logit(a.opt_f("eps"))),
        "lerp" => {
            if x.len() == 3 {
                one(x0.lerp(&x[1], &x[2]))
            } else {
                one(x0.lerp(&x[1], a.f("w")))
            }
        }
        "clamp" => {
            let mode = a.s("mode");
            let (lo, hi) = match mode {
                "tt" => (Some(Operand::from(&x[1])), Some(Operand::from(&x[2]))),
                "tn" => (Some(Operand::from(&x[1])), None),
                "nt" => (None, Some(Operand::from(&x[1]))),
                _ => (Some(number(x0, a.f("lo"))), a.opt_f("hi").map(|h| number(x0, h))),
            };
            one(x0.clamp(lo, hi))
        }
        "where" => one(Tensor::where_cond(x0, &x[1], &x[2])),
        "to_dtype" => one(x0.to_dtype(dtype_of(a.s("to")))),
        "sum" => {
            let dims = a.dims("dims");
            if dims.is_empty() {
                one(x0.sum_all())
            } else {
                one(x0.sum(dims, a.b("keepdim")))
            }
        }
        "prod" => {
            let dims = a.dims("dims");
            let keep = !dims.is_empty() && a.b("keepdim");
            one(x0.prod(dims, keep))
        }
        "mean" => {
            let dims = a.dims("dims");
            let keep = !dims.is_empty() && a.b("keepdim");
            one(x0.mean(dims, keep))
        }
        "std" => one(x0.std(a.dims("dims"), a.f("correction"), a.b("keepdim"))),
        "var" => one(x0.var(a.dims("dims"), a.f("correction"), a.b("keepdim"))),
        "norm" => one(x0.norm(a.f("p"), a.dims("dims"), a.b("keepdim"))),
        "logsumexp" => one(x0.logsumexp(a.dims("dims"), a.b("keepdim"))),
        "amax" => one(x0.amax(a.dims("dims"), a.b("keepdim"))),
        "amin" => one(x0.amin(a.dims("dims"), a.b("keepdim"))),
        "count_nonzero" => one(x0.count_nonzero(a.dims("dims"))),
        "all_dim" | "any_dim" => {
            let dims = a.dims("dims");
            match (case.op, dims.is_empty()) {
                ("all_dim", true) => one(x0.all()),
                ("any_dim", true) => one(x0.any()),
                ("all_dim", false) => one(x0.all_dim(dims, a.b("keepdim"))),
                _ => one(x0.any_dim(dims, a.b("keepdim"))),
            }
        }
        "max_all" => one(x0.max()),
        "min_all" => one(x0.min()),
        "all" => one(x0.all()),
        "any" => one(x0.any()),
        "max_dim" => Some(x0.max_dim(a.d("dim"), a.b("keepdim")).map(pair)),
        "min_dim" => Some(x0.min_dim(a.d("dim"), a.b("keepdim")).map(pair)),
        "median" => Some(x0.median(a.d("dim"), a.b("keepdim")).map(pair)),
        "nanmedian" => Some(x0.nanmedian(a.d("dim"), a.b("keepdim")).map(pair)),
        "mode" => Some(x0.mode(a.d("dim"), a.b("keepdim")).map(pair)),
        "argmax" => one(x0.argmax(a.opt_d("dim"), a.b("keepdim"))),
        "argmin" => one(x0.argmin(a.opt_d("dim"), a.b("keepdim"))),
        "cumsum" => {
            let dt = a.s("dtype");
            one(x0.cumsum(a.d("dim"), (dt != "none").then(|| dtype_of(dt))))
        }
        "cumprod" => {
            let dt = a.s("dtype");
            one(x0.cumprod(a.d("dim"), (dt != "none").then(|| dtype_of(dt))))
        }
        "cummax" => Some(x0.cummax(a.d("dim")).map(pair)),
        "cummin" => Some(x0.cummin(a.d("dim")).map(pair)),
        "logcumsumexp" => one(x0.logcumsumexp(a.d("dim"))),
        "quantile" => one(x0.quantile(a.f("q"), a.opt_d("dim"), a.b("keepdim"), a.s("interp"))),
        "nanquantile" => one(x0.nanquantile(a.f("q"), a.opt_d("dim"), a.b("keepdim"), a.s("interp"))),
        "gather" => one(x0.gather(a.d("dim"), &x[1])),
        "take_along_dim" => one(x0.take_along_dim(&x[1], Some(a.d("dim")))),
        "scatter" => one(x0.scatter(a.d("dim"), &x[1], &x[2])),
        "scatter_add" => one(x0.scatter_add(a.d("dim"), &x[1], &x[2])),
        "scatter_reduce" => {
            one(x0.scatter_reduce(a.d("dim"), &x[1], &x[2], a.s("reduce"), a.b("include_self")))
        }
        "index_select" => one(x0.index_select(a.d("dim"), &x[1])),
        "index_fill" => one(x0.index_fill(a.d("dim"), &x[1], a.f("value"))),
        "index_copy" => one(x0.index_copy(a.d("dim"), &x[1], &x[2])),
        "index_add" => {
            let alpha = a.f("alpha");
            if x0.dtype().is_float() {
                one(x0.index_add(a.d("dim"), &x[1], &x[2], alpha))
            } else {
                one(x0.index_add(a.d("dim"), &x[1], &x[2], alpha as i64))
            }
        }
        "index_put" => {
            let n = a.i("nidx") as usize;
            let idx: Vec<Tensor> = x[1..=n].to_vec();
            one(x0.index_put(idx, &x[n + 1], a.b("accumulate")))
        }
        "masked_fill" => one(x0.masked_fill(&x[1], number(x0, a.f("value")))),
        "masked_select" => one(x0.masked_select(&x[1])),
        "nonzero" => one(x0.nonzero()),
        "take" => one(x0.take(&x[1])),
        "cat" => one(Tensor::cat(&x.iter().collect::<Vec<_>>(), a.d("dim"))),
        "stack" => one(Tensor::stack(&x.iter().collect::<Vec<_>>(), a.d("dim"))),
        "split" => Some(x0.split(a.i("size") as usize, a.d("dim"))),
        "tensor_split" => Some(x0.tensor_split(a.i("sections") as usize, a.d("dim"))),
        "repeat_interleave" => one(x0.repeat_interleave(a.i("repeats"), a.opt_d("dim"))),
        "tile" => one(x0.tile(a.dims("reps"))),
        "flip" => one(x0.flip(a.dims("dims"))),
        "roll" => one(x0.roll(vec![a.d("shift")], a.dims("dims"))),
        "rot90" => one(x0.rot90(a.i("k"), a.dims("dims"))),
        "tril" => one(x0.tril(a.i("k"))),
        "triu" => one(x0.triu(a.i("k"))),
        "diagonal" => one(x0.diagonal(a.d("offset"), a.d("d1"), a.d("d2"))),
        "unfold" => one(x0.unfold(a.d("dim"), a.i("size") as usize, a.i("step") as usize)),
        "sort" => Some(x0.sort(a.d("dim"), a.b("descending")).map(pair)),
        "argsort" => one(x0.argsort(a.d("dim"), a.b("descending"))),
        "msort" => one(x0.msort()),
        "topk" => Some(x0.topk(a.i("k"), a.d("dim"), a.b("largest"), true).map(pair)),
        "kthvalue" => Some(x0.kthvalue(a.i("k"), a.d("dim"), a.b("keepdim")).map(pair)),
        "unique" => Some(x0.unique(true, a.b("inverse"), a.b("counts")).map(triple)),
        "unique_dim" => Some(x0.unique_dim(a.d("dim"), a.b("inverse"), a.b("counts")).map(triple)),
        "searchsorted" => {
            if x.len() == 3 {
                one(x0.searchsorted_with_sorter(&x[1], a.b("right"), None, false, &x[2]))
            } else {
                one(x0.searchsorted(&x[1], a.b("right"), None, false))
            }
        }
        "bucketize" => one(x0.bucketize(&x[1], a.b("out_int32"), a.b("right"))),
        "histc" => one(x0.histc(a.i("bins"), a.f("min"), a.f("max"))),
        "bincount" => one(x0.bincount(x.get(1), a.i("minlength"))),
        _ => None,
    }
}

/// The ops whose float results sum many terms: their absolute tolerance scales with the inputs.
const ACCUMULATING: &[&str] = &[
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "norm",
    "logsumexp",
    "cumsum",
    "cumprod",
    "logcumsumexp",
    "quantile",
    "nanquantile",
    "scatter_add",
    "scatter_reduce",
    "index_add",
    "index_put",
    "lerp",
    "bincount",
    "histc",
];

fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F64 => (1e-9, 1e-12),
        DType::F32 => (2e-5, 1e-6),
        DType::F16 => (2e-3, 1e-3),
        DType::BF16 => (1.6e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

fn short(name: DType) -> &'static str {
    match name {
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I8 => "i8",
        DType::U8 => "u8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::Bool => "bool",
    }
}

fn preview(v: &[f64]) -> String {
    let head: Vec<String> = v.iter().take(12).map(|x| format!("{x:?}")).collect();
    format!("[{}{}]", head.join(", "), if v.len() > 12 { ", ..." } else { "" })
}

/// Compares one output; `Err` describes the first difference.
fn compare(case: &Case, got: &Tensor, want: &Out) -> std::result::Result<(), String> {
    if short(got.dtype()) != want.dtype {
        return Err(format!("dtype {} vs torch {}", short(got.dtype()), want.dtype));
    }
    if got.dims() != want.shape {
        return Err(format!("shape {:?} vs torch {:?}", got.dims(), want.shape));
    }
    let vals = got
        .contiguous()
        .and_then(|t| t.to_dtype(DType::F64))
        .and_then(|t| t.to_vec::<f64>())
        .map_err(|e| format!("reading the result failed: {e}"))?;
    let (rtol, mut atol) = tolerance(got.dtype());
    if ACCUMULATING.contains(&case.op) {
        atol += rtol * case.scale * 4.0;
    }
    for (i, (&g, &w)) in vals.iter().zip(want.vals).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || rtol == 0.0 {
            g == w
        } else {
            (g - w).abs() <= rtol * w.abs() + atol
        };
        if !ok {
            return Err(format!(
                "[{i}]: got {g:?}, torch {w:?}; got {} want {}",
                preview(&vals),
                preview(want.vals)
            ));
        }
    }
    Ok(())
}

fn describe(case: &Case) -> String {
    let ins: Vec<String> = case
        .inputs
        .iter()
        .map(|i| format!("{}{:?}{}", i.dtype, i.base, if i.layout.is_empty() { "" } else { "+" }))
        .collect();
    format!("#{} {}({}) [{}]", case.id, case.op, case.args, ins.join(", "))
}

/// Replays one case with its inputs moved to `device`; `None` when it matches torch.
fn check(case: &Case, device: Device) -> Option<String> {
    let inputs =
        match case.inputs.iter().map(|i| build(i).and_then(|t| t.to(device))).collect::<Result<Vec<_>>>() {
            Ok(v) => v,
            Err(e) => return Some(format!("building the inputs failed: {e}")),
        };
    let Some(result) = run(case, &inputs) else {
        return Some("no replay for this op".to_string());
    };
    // Read the results back (on a lazy device this is where deferred errors surface).
    let result = result.and_then(|got| got.iter().map(|t| t.to(Device::Cpu)).collect::<Result<Vec<_>>>());
    match (result, case.outputs) {
        (Err(_), None) => None,
        (Ok(got), None) => {
            let shapes: Vec<_> = got.iter().map(|t| (short(t.dtype()), t.dims().to_vec())).collect();
            Some(format!("torch raised, oxtorch returned {shapes:?}"))
        }
        (Err(e), Some(_)) => Some(format!("oxtorch raised: {e}")),
        (Ok(got), Some(want)) => {
            if got.len() != want.len() {
                return Some(format!("{} outputs vs torch {}", got.len(), want.len()));
            }
            got.iter()
                .zip(want)
                .enumerate()
                .find_map(|(k, (g, w))| compare(case, g, w).err().map(|e| format!("output {k}: {e}")))
        }
    }
}

/// Replays every case on `device` and returns the cases that differ from torch, each with a line
/// that describes the difference.
pub fn replay(device: Device) -> Vec<(&'static Case, String)> {
    let mut failures = Vec::new();
    let mut skipped = std::collections::BTreeSet::new();
    for case in CASES {
        if !KNOWN.contains(&case.op) {
            skipped.insert(case.op);
            continue;
        }
        match quietly(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case, device)))) {
            Ok(None) => {}
            Ok(Some(msg)) => failures.push((case, format!("{}: {msg}", describe(case)))),
            Err(p) => failures.push((case, format!("{}: PANIC {}", describe(case), panic_message(&*p)))),
        }
    }
    assert!(skipped.is_empty(), "ops without a replay: {skipped:?}");
    failures
}

#[test]
fn random_op_cases_match_torch() {
    let failures: Vec<String> = replay(Device::Cpu).into_iter().map(|(_, line)| line).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from torch:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// The ops [`run`] replays.
const KNOWN: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "div_trunc",
    "div_floor",
    "pow",
    "fmod",
    "remainder",
    "floor_divide",
    "atan2",
    "hypot",
    "copysign",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "abs",
    "neg",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "frac",
    "round",
    "sqrt",
    "exp",
    "log",
    "sigmoid",
    "reciprocal",
    "expm1",
    "log1p",
    "sin",
    "isnan",
    "bitwise_not",
    "round_decimals",
    "nan_to_num",
    "logit",
    "lerp",
    "clamp",
    "where",
    "to_dtype",
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "norm",
    "logsumexp",
    "amax",
    "amin",
    "count_nonzero",
    "all_dim",
    "any_dim",
    "max_all",
    "min_all",
    "all",
    "any",
    "max_dim",
    "min_dim",
    "median",
    "nanmedian",
    "mode",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
    "quantile",
    "nanquantile",
    "gather",
    "take_along_dim",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_select",
    "index_fill",
    "index_copy",
    "index_add",
    "index_put",
    "masked_fill",
    "masked_select",
    "nonzero",
    "take",
    "cat",
    "stack",
    "split",
    "tensor_split",
    "repeat_interleave",
    "tile",
    "flip",
    "roll",
    "rot90",
    "tril",
    "triu",
    "diagonal",
    "unfold",
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "unique",
    "unique_dim",
    "searchsorted",
    "bucketize",
    "histc",
    "bincount",
];
