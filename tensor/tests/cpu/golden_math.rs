//! Golden tests of the elementwise math and activation ops against torch, for every dtype.
//!
//! `tests/golden/math.safetensors` holds inputs and torch's outputs, written by
//! `tests/golden/make_golden_math.py` (see its docstring for the case metadata). A case marked
//! `"error": true` is one where torch raises: oxtorch must return `Err` too. Every case runs; the
//! test fails at the end listing all mismatches.

#[allow(dead_code)]
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

use common::{
    case_inputs, compare, panic_message, quietly, strided_view, tensor_of, tolerance, Golden, Json,
};
use oxtorch_tensor::{DType, Operand, Result, Scalar, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/math.safetensors");

/// The fewest cases the file may hold; guards against a truncated file or a metadata mix-up.
const MIN_CASES: usize = 2500;

fn meta_str<'a>(meta: &'a Json, key: &str) -> &'a str {
    meta.get(key).and_then(Json::as_str).unwrap_or_else(|| panic!("metadata lacks string '{key}'"))
}

fn meta_bool(meta: &Json, key: &str) -> bool {
    meta.get(key).and_then(Json::as_bool).unwrap_or(false)
}

/// A float parameter: a number, or "nan"/"inf"/"-inf".
fn num(v: &Json) -> f64 {
    match v.as_str() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        Some("-inf") => f64::NEG_INFINITY,
        Some(other) => panic!("not a number: {other}"),
        None => v.as_f64().expect("a number"),
    }
}

/// `args[key]` as a float (`None` when absent or null).
fn arg(meta: &Json, key: &str) -> Option<f64> {
    meta.get("args").and_then(|a| a.get(key)).filter(|v| !v.is_null()).map(num)
}

fn arg_or(meta: &Json, key: &str, default: f64) -> f64 {
    arg(meta, key).unwrap_or(default)
}

/// A Python number written as `{"v": value, "t": type}`.
fn scalar_of(v: &Json) -> Scalar {
    let value = v.get("v").expect("a scalar value");
    match v.get("t").and_then(Json::as_str).expect("a scalar type") {
        "bool" => Scalar::Bool(value.as_bool().expect("a bool")),
        "int" => Scalar::Int(value.as_i64().expect("an int")),
        "float" => Scalar::Float(num(value)),
        other => panic!("unknown scalar type {other}"),
    }
}

fn unary(op: &str, meta: &Json, x: &Tensor) -> Result<Tensor> {
    match op {
        "sign" => x.sign(),
        "exp2" => x.exp2(),
        "expm1" => x.expm1(),
        "log2" => x.log2(),
        "log10" => x.log10(),
        "log1p" => x.log1p(),
        "tan" => x.tan(),
        "asin" => x.asin(),
        "acos" => x.acos(),
        "atan" => x.atan(),
        "sinh" => x.sinh(),
        "cosh" => x.cosh(),
        "asinh" => x.asinh(),
        "acosh" => x.acosh(),
        "atanh" => x.atanh(),
        "erf" => x.erf(),
        "erfc" => x.erfc(),
        "erfinv" => x.erfinv(),
        "reciprocal" => x.reciprocal(),
        "frac" => x.frac(),
        "isinf" => x.isinf(),
        "isposinf" => x.isposinf(),
        "isneginf" => x.isneginf(),
        "isfinite" => x.isfinite(),
        "logical_not" => x.logical_not(),
        "nan_to_num" => x.nan_to_num(arg(meta, "nan"), arg(meta, "posinf"), arg(meta, "neginf")),
        "logit" => x.logit(arg(meta, "eps")),
        "round" => x.round_decimals(arg_or(meta, "decimals", 0.0) as i64),
        "relu6" => x.relu6(),
        "relu" => x.relu(),
        "sigmoid" => x.sigmoid(),
        "hardtanh" => x.hardtanh(arg_or(meta, "min_val", -1.0), arg_or(meta, "max_val", 1.0)),
        "leaky_relu" => x.leaky_relu(arg_or(meta, "negative_slope", 0.01)),
        "elu" => x.elu(arg_or(meta, "alpha", 1.0)),
        "selu" => x.selu(),
        "celu" => x.celu(arg_or(meta, "alpha", 1.0)),
        "gelu" => {
            let a = meta.get("args").and_then(|a| a.get("approximate")).and_then(Json::as_str);
            x.gelu(a.unwrap_or("none"))
        }
        "silu" => x.silu(),
        "mish" => x.mish(),
        "softplus" => x.softplus(arg_or(meta, "beta", 1.0), arg_or(meta, "threshold", 20.0)),
        "hardsigmoid" => x.hardsigmoid(),
        "hardswish" => x.hardswish(),
        "lgamma" => x.lgamma(),
        "digamma" => x.digamma(),
        "polygamma" => x.polygamma(arg_or(meta, "n", 0.0) as i64),
        "sinc" => x.sinc(),
        "signbit" => x.signbit(),
        "entr" => x.entr(),
        "ndtr" => x.ndtr(),
        "mvlgamma" => x.mvlgamma(arg_or(meta, "p", 1.0) as i64),
        other => panic!("unknown unary op {other}"),
    }
}

fn binary(op: &str, a: &Tensor, b: Operand) -> Result<Tensor> {
    let tensor = |b: Operand| match b {
        Operand::Tensor(t) => t,
        Operand::Scalar(s) => Tensor::scalar_tensor(s, s.natural_dtype()).expect("a scalar tensor"),
    };
    match op {
        "atan2" => a.atan2(b),
        "fmod" => a.fmod(b),
        "hypot" => a.hypot(b),
        "copysign" => a.copysign(b),
        "bitwise_left_shift" => a.bitwise_left_shift(b),
        "bitwise_right_shift" => a.bitwise_right_shift(b),
        "pow" => a.pow(b),
        "floor_divide" => a.floor_divide(b),
        "remainder" => a.remainder(b),
        "maximum" => a.maximum(b),
        "minimum" => a.minimum(b),
        "logical_and" => a.logical_and(&tensor(b)),
        "logical_or" => a.logical_or(&tensor(b)),
        "logical_xor" => a.logical_xor(&tensor(b)),
        "fmax" => a.fmax(&tensor(b)),
        "fmin" => a.fmin(&tensor(b)),
        "xlogy" => a.xlogy(b),
        "xlog1py" => a.xlog1py(b),
        "float_power" => a.float_power(b),
        "heaviside" => a.heaviside(&tensor(b)),
        other => panic!("unknown binary op {other}"),
    }
}

/// A clamp bound: absent, an input tensor, or a Python number.
fn bound(meta: &Json, key: &str, ins: &[Tensor]) -> Option<Operand> {
    let b = meta.get(key)?;
    Some(match b.get("tensor") {
        Some(i) => Operand::from(&ins[i.as_i64().expect("an input index") as usize]),
        None => Operand::from(scalar_of(b)),
    })
}

/// Runs one case's op in oxtorch on its (viewed) inputs.
fn run_op(meta: &Json, ins: &[Tensor]) -> Result<Tensor> {
    let op = meta_str(meta, "op");
    let dim = || meta.get("dim").and_then(Json::as_i64).expect("a dim") as isize;
    match meta_str(meta, "kind") {
        "unary" => unary(op, meta, &ins[0]),
        "binary" => match meta.get("scalar") {
            Some(s) => binary(op, &ins[0], Operand::from(scalar_of(s))),
            None => binary(op, &ins[0], Operand::from(&ins[1])),
        },
        "pow_scalar_base" => Tensor::pow_scalar_base(scalar_of(meta.get("scalar").unwrap()), &ins[0]),
        "clamp" => ins[0].clamp(bound(meta, "min", ins), bound(meta, "max", ins)),
        "lerp" => match meta.get("scalar") {
            Some(s) => ins[0].lerp(&ins[1], scalar_of(s)),
            None => ins[0].lerp(&ins[1], &ins[2]),
        },
        "softmax" => {
            let dtype =
                meta.get("dtype").and_then(Json::as_str).map(|d| DType::from_str(d).expect("a dtype name"));
            match op {
                "softmax" => ins[0].softmax(dim(), dtype),
                "log_softmax" => ins[0].log_softmax(dim(), dtype),
                other => panic!("unknown op {other}"),
            }
        }
        "glu" => ins[0].glu(dim()),
        "addc" => {
            let value = scalar_of(meta.get("scalar").expect("a value"));
            match op {
                "addcmul" => ins[0].addcmul(&ins[1], &ins[2], value),
                "addcdiv" => ins[0].addcdiv(&ins[1], &ins[2], value),
                other => panic!("unknown op {other}"),
            }
        }
        "isclose" => {
            let flag = meta.get("args").and_then(|a| a.get("equal_nan")).and_then(Json::as_bool);
            ins[0].isclose(
                &ins[1],
                arg_or(meta, "rtol", 1e-5),
                arg_or(meta, "atol", 1e-8),
                flag.unwrap_or(false),
            )
        }
        "cast" => ins[0].to_dtype(DType::from_str(meta_str(meta, "dtype")).expect("a dtype name")),
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
            Err(_) => Ok(()),
            Ok(t) => Err(format!("torch raises, oxtorch returns Ok ({} {:?})", t.dtype().name(), t.dims())),
        };
    }
    let got = result.map_err(|e| format!("torch succeeds, oxtorch returns Err: {e}"))?;
    let want = tensor_of(&st.tensor(&format!("{name}.out")).map_err(|e| format!("missing output: {e}"))?);
    // Casts are exact in torch (one rounding rule per pair of dtypes): compare them bit for bit.
    let (rtol, atol) = if meta_str(meta, "kind") == "cast" { (0.0, 0.0) } else { tolerance(want.dtype()) };
    compare(&got, &want, rtol, atol)
}

#[test]
fn golden_math_matches_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden_math.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());

    // Panics inside ops are caught and reported per case.
    let results: Vec<(&str, &Json, std::result::Result<(), String>)> =
        quietly(|| cases.iter().map(|(name, meta)| (*name, *meta, check_case(&st, name, meta))).collect());

    let (mut passed, mut errors_checked, mut failures) = (0usize, 0usize, Vec::new());
    for (name, meta, outcome) in &results {
        match outcome {
            Ok(()) => {
                passed += 1;
                errors_checked += usize::from(meta_bool(meta, "error"));
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "golden math: {} cases run, {passed} passed ({errors_checked} of them error cases), {} failed",
        results.len(),
        failures.len()
    );
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(passed >= MIN_CASES, "only {passed} golden cases passed; the test must not pass vacuously");
    assert!(errors_checked >= 300, "only {errors_checked} error cases passed");
    assert!(failures.is_empty(), "{} golden math cases differ from torch (listed above)", failures.len());
}

/// Fails with the first few elements of `got` that are not within `(rtol, atol)` of `want`.
fn assert_close(got: &Tensor, want: &Tensor, rtol: f64, atol: f64, what: &str) {
    if let Err(e) = compare(got, want, rtol, atol) {
        panic!("{what}: {e}");
    }
}

/// The fused softmax kernel on inputs big enough to be split across threads, against the same
/// softmax composed of reductions and elementwise ops in f64.
#[test]
fn fused_softmax_matches_composition_on_large_inputs() -> Result<()> {
    oxtorch_tensor::manual_seed(7);
    let x = Tensor::randn([300, 257], ())?.mul(4.0)?;
    for dim in [0isize, 1] {
        let x64 = x.to_dtype(DType::F64)?;
        let shifted = x64.sub(&x64.amax(dim, true)?)?;
        let e = shifted.exp()?;
        let sum = e.sum(dim, true)?;
        let want = e.div(&sum)?.to_dtype(DType::F32)?;
        assert_close(&x.softmax(dim, None)?, &want, 1e-5, 1e-7, "softmax");
        let want_log = shifted.sub(&sum.log()?)?.to_dtype(DType::F32)?;
        assert_close(&x.log_softmax(dim, None)?, &want_log, 1e-5, 1e-5, "log_softmax");
    }
    Ok(())
}

/// The vectorised f32 activation kernels on a large input, against the f64 kernels.
#[test]
fn f32_activations_match_f64_on_large_inputs() -> Result<()> {
    oxtorch_tensor::manual_seed(11);
    let x = Tensor::randn([200_000], ())?.mul(6.0)?;
    let x64 = x.to_dtype(DType::F64)?;
    type Act = fn(&Tensor) -> Result<Tensor>;
    let acts: [(&str, Act); 6] = [
        ("gelu", |t| t.gelu("none")),
        ("gelu_tanh", |t| t.gelu("tanh")),
        ("silu", Tensor::silu),
        ("mish", Tensor::mish),
        ("sigmoid", Tensor::sigmoid),
        ("softplus", |t| t.softplus(1.0, 20.0)),
    ];
    for (name, f) in acts {
        let want = f(&x64)?.to_dtype(DType::F32)?;
        assert_close(&f(&x)?, &want, 2e-6, 1e-6, name);
    }
    Ok(())
}
