//! Golden tests: oxtorch's results against torch's, for every dtype.
//!
//! `tests/golden/ops.safetensors` (at the workspace root) holds inputs and torch's outputs, written by
//! `tests/golden/make_golden.py` (run it with a Python that has torch, safetensors and numpy). Each case
//! `<case>` has inputs `<case>.in0`, `<case>.in1`, ..., the expected output `<case>.out` (and
//! `<case>.out1`), and a JSON description under `<case>` in the file's metadata; see the script's
//! docstring for the fields. A case marked `"error": true` is one where torch raises: oxtorch must
//! return `Err` too.
//!
//! Every case runs, failures are collected, and the test fails at the end with all of them. Cases that
//! expose known library bugs are listed in [`KNOWN_FAILURES`]: they still run, are reported as
//! skipped, and the test fails if one of them starts to pass (so the list must be kept current).

use crate::common;

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

use common::{
    case_inputs, compare, panic_message, quietly, strided_view, tensor_of, tolerance, Golden, Json,
};
use oxtorch_tensor::{DType, Operand, Result, Scalar, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/ops.safetensors");

/// The fewest cases the file may hold; guards against a truncated file or a metadata mix-up.
const MIN_CASES: usize = 2500;

/// Cases whose oxtorch result currently differs from torch's (library bugs to fix). Remove an entry
/// once the library is fixed: the test fails while a listed case passes.
const KNOWN_FAILURES: &[&str] = &[];

fn meta_str<'a>(meta: &'a Json, key: &str) -> &'a str {
    meta.get(key).and_then(Json::as_str).unwrap_or_else(|| panic!("metadata lacks string '{key}'"))
}

fn meta_bool(meta: &Json, key: &str) -> bool {
    meta.get(key).and_then(Json::as_bool).unwrap_or(false)
}

/// `meta[key]` as an optional dim (`null` or absent means none).
fn meta_dim(meta: &Json, key: &str) -> Option<isize> {
    meta.get(key).filter(|v| !v.is_null()).map(|v| v.as_i64().expect("an integer dim") as isize)
}

/// `meta["dims"]` as an optional list of dims (`null` means all).
fn meta_dims(meta: &Json) -> Option<Vec<isize>> {
    let v = meta.get("dims").filter(|v| !v.is_null())?;
    Some(
        v.as_arr()
            .expect("a list of dims")
            .iter()
            .map(|d| d.as_i64().expect("an integer dim") as isize)
            .collect(),
    )
}

/// The Python number of a scalar case, with its Python type.
fn meta_scalar(meta: &Json) -> Scalar {
    let v = meta.get("scalar").expect("metadata lacks 'scalar'");
    match meta_str(meta, "scalar_type") {
        "bool" => Scalar::Bool(v.as_bool().expect("a bool scalar")),
        "int" => Scalar::Int(v.as_i64().expect("an int scalar")),
        "float" => Scalar::Float(v.as_f64().expect("a float scalar")),
        other => panic!("unknown scalar type {other}"),
    }
}

fn unary(op: &str, x: &Tensor) -> Result<Tensor> {
    match op {
        "neg" => x.neg(),
        "abs" => x.abs(),
        "sign" => x.sign(),
        "square" => x.square(),
        "exp" => x.exp(),
        "log" => x.log(),
        "sqrt" => x.sqrt(),
        "rsqrt" => x.rsqrt(),
        "reciprocal" => x.reciprocal(),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tanh" => x.tanh(),
        "sigmoid" => x.sigmoid(),
        "relu" => x.relu(),
        "floor" => x.floor(),
        "ceil" => x.ceil(),
        "round" => x.round(),
        "trunc" => x.trunc(),
        "bitwise_not" => x.bitwise_not(),
        "isnan" => x.isnan(),
        "logical_not" => x.logical_not(),
        other => panic!("unknown unary op {other}"),
    }
}

fn binary(op: &str, a: &Tensor, b: Operand) -> Result<Tensor> {
    let tensor = |b: Operand| match b {
        Operand::Tensor(t) => t,
        Operand::Scalar(_) => panic!("{op} takes a tensor operand"),
    };
    match op {
        "add" => a.add(b),
        "sub" => a.sub(b),
        "mul" => a.mul(b),
        "div" => a.div(b),
        "pow" => a.pow(b),
        "maximum" => a.maximum(b),
        "minimum" => a.minimum(b),
        "remainder" => a.remainder(b),
        "floor_divide" => a.floor_divide(b),
        "bitwise_and" => a.bitwise_and(b),
        "bitwise_or" => a.bitwise_or(b),
        "bitwise_xor" => a.bitwise_xor(b),
        "logical_and" => a.logical_and(&tensor(b)),
        "logical_or" => a.logical_or(&tensor(b)),
        "logical_xor" => a.logical_xor(&tensor(b)),
        "eq" => a.eq(b),
        "ne" => a.ne(b),
        "lt" => a.lt(b),
        "le" => a.le(b),
        "gt" => a.gt(b),
        "ge" => a.ge(b),
        other => panic!("unknown binary op {other}"),
    }
}

fn reduce(op: &str, x: &Tensor, dims: Option<Vec<isize>>, keepdim: bool) -> Result<Tensor> {
    match dims {
        None => match op {
            "sum" => x.sum_all(),
            "prod" => x.prod_all(),
            "mean" => x.mean_all(),
            "amax" => x.amax(Vec::<isize>::new(), false),
            "amin" => x.amin(Vec::<isize>::new(), false),
            "all" => x.all(),
            "any" => x.any(),
            other => panic!("unknown reduction {other}"),
        },
        Some(d) => match op {
            "sum" => x.sum(d, keepdim),
            "prod" => x.prod(d, keepdim),
            "mean" => x.mean(d, keepdim),
            "amax" => x.amax(d, keepdim),
            "amin" => x.amin(d, keepdim),
            "all" => x.all_dim(d, keepdim),
            "any" => x.any_dim(d, keepdim),
            other => panic!("unknown reduction {other}"),
        },
    }
}

/// Runs one case's op in oxtorch on its (viewed) inputs.
fn run_op(meta: &Json, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    let op = meta_str(meta, "op");
    let keepdim = meta_bool(meta, "keepdim");
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    match meta_str(meta, "kind") {
        "unary" => one(unary(op, &ins[0])),
        "binary" => one(binary(op, &ins[0], Operand::from(&ins[1]))),
        "scalar" => one(binary(op, &ins[0], Operand::from(meta_scalar(meta)))),
        "where" => {
            if meta.get("scalar").is_some() {
                let s = Operand::from(meta_scalar(meta));
                let x = Operand::from(&ins[1]);
                match meta_str(meta, "scalar_pos") {
                    "input" => one(Tensor::where_cond(&ins[0], s, x)),
                    "other" => one(Tensor::where_cond(&ins[0], x, s)),
                    other => panic!("unknown scalar position {other}"),
                }
            } else {
                one(Tensor::where_cond(&ins[0], &ins[1], &ins[2]))
            }
        }
        "reduce" => one(reduce(op, &ins[0], meta_dims(meta), keepdim)),
        "full" => match op {
            "max" => one(ins[0].max()),
            "min" => one(ins[0].min()),
            other => panic!("unknown full reduction {other}"),
        },
        "maxmin_dim" => {
            let dim = meta_dim(meta, "dim").expect("max_dim/min_dim need a dim");
            let (v, i) = match op {
                "max_dim" => ins[0].max_dim(dim, keepdim)?,
                "min_dim" => ins[0].min_dim(dim, keepdim)?,
                other => panic!("unknown op {other}"),
            };
            Ok(vec![v, i])
        }
        "arg" => {
            let dim = meta_dim(meta, "dim");
            match op {
                "argmax" => one(ins[0].argmax(dim, keepdim)),
                "argmin" => one(ins[0].argmin(dim, keepdim)),
                other => panic!("unknown op {other}"),
            }
        }
        "matmul" => one(ins[0].matmul(&ins[1])),
        "cast" => {
            let dtype = DType::from_str(meta_str(meta, "dtype")).expect("a dtype name");
            one(ins[0].to_dtype(dtype))
        }
        other => panic!("unknown case kind {other}"),
    }
}

/// Runs one case and checks it against torch; `Err` describes the mismatch.
fn check_case(st: &SafeTensors<'_>, name: &str, meta: &Json) -> std::result::Result<(), String> {
    let n_in = meta.get("n_in").and_then(Json::as_i64).expect("metadata lacks 'n_in'") as usize;
    let ins = case_inputs(st, name, meta, n_in, strided_view)?;
    let result = catch_unwind(AssertUnwindSafe(|| run_op(meta, &ins)))
        .map_err(|payload| format!("panicked: {}", panic_message(&*payload)))?;
    if meta_bool(meta, "error") {
        return match result {
            Err(e) => {
                if std::env::var_os("GOLDEN_VERBOSE").is_some() {
                    println!("  {name}: oxtorch errs as torch does: {e}");
                }
                Ok(())
            }
            Ok(outs) => {
                let desc: Vec<String> =
                    outs.iter().map(|t| format!("{} {:?}", t.dtype().name(), t.dims())).collect();
                Err(format!("torch raises, oxtorch returns Ok ({})", desc.join(", ")))
            }
        };
    }
    let outs = result.map_err(|e| format!("torch succeeds, oxtorch returns Err: {e}"))?;
    for (i, got) in outs.iter().enumerate() {
        let key = if i == 0 { format!("{name}.out") } else { format!("{name}.out{i}") };
        let want = tensor_of(&st.tensor(&key).map_err(|e| format!("missing expected output {key}: {e}"))?);
        let (rtol, atol) = tolerance(want.dtype());
        compare(got, &want, rtol, atol).map_err(|e| if i == 0 { e } else { format!("output {i}: {e}") })?;
    }
    if st.tensor(&format!("{name}.out{}", outs.len())).is_ok() {
        return Err(format!("torch gives more than {} outputs", outs.len()));
    }
    Ok(())
}

#[test]
fn golden_ops_match_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());
    let known: BTreeSet<&str> = KNOWN_FAILURES.iter().copied().collect();
    assert_eq!(known.len(), KNOWN_FAILURES.len(), "KNOWN_FAILURES has duplicates");
    let unknown: Vec<&&str> = known.iter().filter(|k| !cases.contains_key(*k)).collect();
    assert!(unknown.is_empty(), "KNOWN_FAILURES names cases that are not in the golden file: {unknown:?}");

    // Panics inside ops are caught and reported per case.
    let results: Vec<(&str, &Json, std::result::Result<(), String>)> =
        quietly(|| cases.iter().map(|(name, meta)| (*name, *meta, check_case(&st, name, meta))).collect());

    let (mut passed, mut errors_checked) = (0usize, 0usize);
    let (mut failures, mut skipped, mut stale) = (Vec::new(), Vec::new(), Vec::new());
    for (name, meta, outcome) in &results {
        match (outcome, known.contains(name)) {
            (Ok(()), false) => {
                passed += 1;
                if meta_bool(meta, "error") {
                    errors_checked += 1;
                }
            }
            (Ok(()), true) => stale.push(*name),
            (Err(e), true) => skipped.push(format!("{name} [{}]: {e}", meta_str(meta, "op"))),
            (Err(e), false) => failures.push(format!("{name} [{}]: {e}", meta_str(meta, "op"))),
        }
    }
    println!(
        "golden: {} cases run, {passed} passed ({errors_checked} of them error cases), {} known failures \
         skipped, {} failed",
        results.len(),
        skipped.len(),
        failures.len()
    );
    for s in &skipped {
        println!("  skipped (known failure) {s}");
    }
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(passed + skipped.len() + failures.len() + stale.len() == results.len());
    assert!(passed >= 2000, "only {passed} golden cases passed; the test must not pass vacuously");
    assert!(errors_checked >= 100, "only {errors_checked} error cases passed");
    assert!(stale.is_empty(), "these KNOWN_FAILURES cases now pass; remove them from the list: {stale:?}");
    assert!(failures.is_empty(), "{} golden cases differ from torch (listed above)", failures.len());
}
