//! Golden tests for the composite ops (diff, trapezoid, nansum/nanmean/nanquantile, aminmax, dist,
//! cdist, logaddexp, cross, cov/corrcoef, vander, tril/triu_indices, cartesian_prod, combinations,
//! block_diag, diag_embed) against torch: values, input gradients and error messages.
//!
//! `tests/golden/composite.safetensors` is written by `tests/golden/make_golden_composite.py`; see its
//! docstring for the case layout (that of `golden_sortstats.rs`, plus `<case>.w<k>` output weights
//! and `<case>.grad<i>` gradients of `sum_k (out_k * w_k).sum()`). Every case runs; failures are
//! collected and reported together.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{
    case_inputs, compare, panic_message, quietly, strided_view, tensor_of, tolerance, Golden, Json,
};
use oxtorch_tensor::{DType, Device, Operand, Result, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/composite.safetensors");

/// The fewest cases the file may hold and the fewest that must pass (guards against a vacuous run).
const MIN_CASES: usize = 350;
/// The fewest error cases (torch raises, with its message) that must be checked.
const MIN_ERROR_CASES: usize = 90;
/// The fewest cases whose gradients must be checked.
const MIN_GRAD_CASES: usize = 180;

fn get<'a>(meta: &'a Json, key: &str) -> Option<&'a Json> {
    meta.get(key).filter(|v| !v.is_null())
}

fn m_str<'a>(meta: &'a Json, key: &str) -> &'a str {
    get(meta, key).and_then(Json::as_str).unwrap_or_else(|| panic!("metadata lacks string '{key}'"))
}

fn m_bool(meta: &Json, key: &str) -> bool {
    get(meta, key).and_then(Json::as_bool).unwrap_or(false)
}

fn m_i64(meta: &Json, key: &str) -> i64 {
    get(meta, key).and_then(Json::as_i64).unwrap_or_else(|| panic!("metadata lacks integer '{key}'"))
}

fn m_opt_i64(meta: &Json, key: &str) -> Option<i64> {
    get(meta, key).map(|v| v.as_i64().unwrap_or_else(|| panic!("'{key}' is not an integer")))
}

/// A float parameter; the script writes non-finite ones as the strings "inf", "-inf" and "nan".
fn m_f64(meta: &Json, key: &str) -> f64 {
    match get(meta, key).unwrap_or_else(|| panic!("metadata lacks number '{key}'")) {
        Json::Num(n) | Json::Str(n) => n.parse().unwrap_or_else(|_| panic!("bad number {n}")),
        other => panic!("'{key}' is not a number: {other:?}"),
    }
}

fn m_dim(meta: &Json) -> isize {
    m_i64(meta, "dim") as isize
}

fn m_opt_dim(meta: &Json) -> Option<isize> {
    m_opt_i64(meta, "dim").map(|d| d as isize)
}

/// `dims` as a list (`null` means all dims, which oxtorch spells as an empty list).
fn m_dims(meta: &Json) -> Vec<isize> {
    get(meta, "dims")
        .map(|v| v.as_arr().expect("a list").iter().map(|d| d.as_i64().expect("a dim") as isize).collect())
        .unwrap_or_default()
}

/// The input indices a case differentiates (none when it has no gradients).
fn m_grad(meta: &Json) -> Vec<usize> {
    get(meta, "grad")
        .map(|v| v.as_arr().expect("a list").iter().map(|i| i.as_i64().expect("an index") as usize).collect())
        .unwrap_or_default()
}

fn pair(r: Result<(Tensor, Tensor)>) -> Result<Vec<Tensor>> {
    r.map(|(a, b)| vec![a, b])
}

/// Values at 1e-12 for float64 (these ops are short compositions), torch's defaults otherwise.
fn tol(dtype: DType) -> (f64, f64) {
    if dtype == DType::F64 {
        (1e-12, 1e-12)
    } else {
        tolerance(dtype)
    }
}

/// Runs one case's op in oxtorch.
fn run_op(meta: &Json, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    let keepdim = m_bool(meta, "keepdim");
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    let all: Vec<&Tensor> = ins.iter().collect();
    // Optional tensor arguments follow the first input in the order the metadata flags them.
    let mut rest = ins.iter().skip(1);
    let mut optional = |flag: &str| if m_bool(meta, flag) { rest.next() } else { None };
    match m_str(meta, "op") {
        "diff" => {
            let prepend = optional("has_prepend");
            let append = optional("has_append");
            one(ins[0].diff(m_i64(meta, "n"), m_dim(meta), prepend, append))
        }
        "trapezoid_dx" => one(ins[0].trapezoid_dx(m_f64(meta, "dx"), m_dim(meta))),
        "trapezoid_x" => one(ins[0].trapezoid_x(&ins[1], m_dim(meta))),
        "cumulative_trapezoid_dx" => one(ins[0].cumulative_trapezoid_dx(m_f64(meta, "dx"), m_dim(meta))),
        "cumulative_trapezoid_x" => one(ins[0].cumulative_trapezoid_x(&ins[1], m_dim(meta))),
        "nansum" => one(ins[0].nansum(m_dims(meta), keepdim)),
        "nanmean" => one(ins[0].nanmean(m_dims(meta), keepdim)),
        "aminmax" => pair(ins[0].aminmax(m_opt_dim(meta), keepdim)),
        "dist" => one(ins[0].dist(&ins[1], m_f64(meta, "p"))),
        "cdist" => one(ins[0].cdist(&ins[1], m_f64(meta, "p"))),
        "logaddexp" => one(ins[0].logaddexp(&ins[1])),
        "logaddexp2" => one(ins[0].logaddexp2(&ins[1])),
        "linalg_cross" => one(ins[0].linalg_cross(&ins[1], m_dim(meta))),
        "cross" => one(ins[0].cross(&ins[1], m_opt_dim(meta))),
        "cov" => {
            let fweights = optional("has_fweights");
            let aweights = optional("has_aweights");
            one(ins[0].cov(m_i64(meta, "correction"), fweights, aweights))
        }
        "corrcoef" => one(ins[0].corrcoef()),
        "vander" => one(Tensor::vander(&ins[0], m_opt_i64(meta, "N"), m_bool(meta, "increasing"))),
        "tril_indices" => one(Tensor::tril_indices(
            m_i64(meta, "row"),
            m_i64(meta, "col"),
            m_i64(meta, "offset"),
            Device::Cpu,
        )),
        "triu_indices" => one(Tensor::triu_indices(
            m_i64(meta, "row"),
            m_i64(meta, "col"),
            m_i64(meta, "offset"),
            Device::Cpu,
        )),
        "cartesian_prod" => one(Tensor::cartesian_prod(&all)),
        "combinations" => one(ins[0].combinations(m_i64(meta, "r"), m_bool(meta, "with_replacement"))),
        "block_diag" => one(Tensor::block_diag(&all)),
        "diag_embed" => one(ins[0].diag_embed(
            m_i64(meta, "offset"),
            m_i64(meta, "dim1") as isize,
            m_i64(meta, "dim2") as isize,
        )),
        "nanquantile" => {
            let q = if ins.len() > 1 { Operand::from(&ins[1]) } else { Operand::from(m_f64(meta, "q")) };
            one(ins[0].nanquantile(q, m_opt_dim(meta), keepdim, m_str(meta, "interpolation")))
        }
        other => panic!("unknown op {other}"),
    }
}

/// The gradients of `sum_k (out_k * w_k).sum()` with respect to `leaves`, compared with torch's
/// `<name>.grad<i>`.
fn check_grads(
    st: &SafeTensors<'_>,
    name: &str,
    outs: &[Tensor],
    grad: &[usize],
    ins: &[Tensor],
) -> std::result::Result<(), String> {
    let mut loss: Option<Tensor> = None;
    for (k, out) in outs.iter().enumerate() {
        let Ok(w) = st.tensor(&format!("{name}.w{k}")) else { continue };
        let term = out.mul(tensor_of(&w)).and_then(|t| t.sum_all()).map_err(|e| format!("loss: {e}"))?;
        loss = Some(match loss {
            Some(l) => l.add(&term).map_err(|e| format!("loss: {e}"))?,
            None => term,
        });
    }
    let loss = loss.ok_or("torch has weights for no output")?;
    let leaves: Vec<Tensor> = grad.iter().map(|&i| ins[i].clone()).collect();
    let grads = oxtorch_tensor::autograd::grad_materialized(&[loss], &leaves, None, false, false)
        .map_err(|e| format!("backward: {e}"))?;
    for (&i, got) in grad.iter().zip(&grads) {
        let key = format!("{name}.grad{i}");
        let want = tensor_of(&st.tensor(&key).map_err(|e| format!("missing gradient {key}: {e}"))?);
        let (rtol, atol) = tol(want.dtype());
        compare(got, &want, rtol, atol).map_err(|e| format!("gradient of input {i}: {e}"))?;
    }
    Ok(())
}

/// Runs one case and checks it against torch; `Err` describes the mismatch.
fn check_case(st: &SafeTensors<'_>, name: &str, meta: &Json) -> std::result::Result<(), String> {
    let ins = case_inputs(st, name, meta, m_i64(meta, "n_in") as usize, strided_view)?;
    let grad = m_grad(meta);
    for &i in &grad {
        ins[i].requires_grad_(true).map_err(|e| format!("requires_grad_ on input {i}: {e}"))?;
    }
    let result = catch_unwind(AssertUnwindSafe(|| run_op(meta, &ins)))
        .map_err(|payload| format!("panicked: {}", panic_message(&*payload)))?;
    if m_bool(meta, "error") {
        let want = m_str(meta, "message");
        return match result {
            Err(e) if e.to_string() == want => Ok(()),
            Err(e) => Err(format!("message: torch {want:?}, oxtorch {:?}", e.to_string())),
            Ok(outs) => {
                let desc: Vec<String> =
                    outs.iter().map(|t| format!("{} {:?}", t.dtype().name(), t.dims())).collect();
                Err(format!("torch raises {want:?}, oxtorch returns Ok ({})", desc.join(", ")))
            }
        };
    }
    let outs = result.map_err(|e| format!("torch succeeds, oxtorch returns Err: {e}"))?;
    for (i, got) in outs.iter().enumerate() {
        let key = if i == 0 { format!("{name}.out") } else { format!("{name}.out{i}") };
        let want = tensor_of(&st.tensor(&key).map_err(|e| format!("missing expected output {key}: {e}"))?);
        let (rtol, atol) = tol(want.dtype());
        compare(got, &want, rtol, atol).map_err(|e| format!("output {i}: {e}"))?;
    }
    if st.tensor(&format!("{name}.out{}", outs.len())).is_ok() {
        return Err(format!("torch gives more than {} outputs", outs.len()));
    }
    if !grad.is_empty() {
        check_grads(st, name, &outs, &grad, &ins)?;
    }
    Ok(())
}

#[test]
fn golden_composite_ops_match_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden_composite.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());

    let results: Vec<(&str, bool, bool, std::result::Result<(), String>)> = quietly(|| {
        cases
            .iter()
            .map(|(name, meta)| {
                (*name, m_bool(meta, "error"), !m_grad(meta).is_empty(), check_case(&st, name, meta))
            })
            .collect()
    });

    let passed = results.iter().filter(|r| r.3.is_ok()).count();
    let errors_checked = results.iter().filter(|r| r.1 && r.3.is_ok()).count();
    let grads_checked = results.iter().filter(|r| r.2 && r.3.is_ok()).count();
    let failures: Vec<String> =
        results.iter().filter_map(|(n, _, _, r)| r.as_ref().err().map(|e| format!("{n}: {e}"))).collect();
    println!(
        "golden composite: {} cases run, {passed} passed ({errors_checked} error cases, {grads_checked} with gradients), {} failed",
        results.len(),
        failures.len()
    );
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(failures.is_empty(), "{} golden cases differ from torch (listed above)", failures.len());
    assert!(passed >= MIN_CASES, "only {passed} golden cases passed; the test must not pass vacuously");
    assert!(errors_checked >= MIN_ERROR_CASES, "only {errors_checked} error cases passed");
    assert!(grads_checked >= MIN_GRAD_CASES, "only {grads_checked} gradient cases passed");
}

/// The message of `r`'s error (panics when `r` is `Ok`).
fn message<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// A few bad arguments, with torch's messages spelled out.
#[test]
fn bad_arguments_give_torchs_messages() {
    let v = Tensor::from_vec(vec![1.0f64, 3.0, 6.0, 10.0], [4]).unwrap();
    let m = Tensor::from_vec((0..8).map(f64::from).collect::<Vec<_>>(), [2, 4]).unwrap();
    assert_eq!(message(m.cross(&m, None)), "no dimension of size 3 in input");
    assert_eq!(
        message(m.linalg_cross(&m, -1)),
        "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"
    );
    assert_eq!(message(v.diff(-1, 0, None, None)), "order must be non-negative but got -1");
    assert_eq!(message(m.cdist(&m, -1.0)), "cdist only supports non-negative p values");
    assert_eq!(message(m.cdist(&v, 2.0)), "cdist only supports at least 2D tensors, X2 got: 1D");
    let ints = Tensor::from_vec(vec![1i64, 2, 3], [3]).unwrap();
    assert_eq!(
        message(ints.nanmean(Vec::<isize>::new(), false)),
        "nanmean(): expected input to have floating point or complex dtype but got Long"
    );
    assert_eq!(message(ints.logaddexp(&ints)), "\"logaddexp_cpu\" not implemented for 'Long'");
    let negative = Tensor::from_vec(vec![1i64, -1, 1, 1], [4]).unwrap();
    assert_eq!(message(m.cov(1, Some(&negative), None)), "cov(): fweights cannot be negative");
    assert_eq!(message(m.diag_embed(0, 1, 1)), "diagonal dimensions cannot be identical 1, 1");
    assert_eq!(message(Tensor::tril_indices(-1, 3, 0, Device::Cpu)), "row must be non-negative, got-1");
    assert_eq!(message(ints.combinations(-2, false)), "Expect a non-negative number, but got -2");
    assert_eq!(message(Tensor::vander(&m, None, false)), "x must be a one-dimensional tensor.");
    assert_eq!(
        message(v.nanquantile(1.5, None, false, "linear")),
        "quantile() q must be in the range [0, 1] but got 1.5"
    );
}

/// Without NaN, nanquantile (a composition) agrees with quantile (a kernel).
#[test]
fn nanquantile_without_nan_matches_quantile() {
    let data: Vec<f64> = (0..60).map(|i| ((i * 37 % 61) as f64 - 30.0) / 7.0).collect();
    let x = Tensor::from_vec(data, [5, 12]).unwrap();
    let q = Tensor::from_vec(vec![0.0f64, 0.1, 0.5, 0.77, 1.0], [5]).unwrap();
    for interpolation in ["linear", "lower", "higher", "midpoint", "nearest"] {
        for dim in [None, Some(0), Some(1)] {
            let a = x.nanquantile(&q, dim, true, interpolation).unwrap();
            let b = x.quantile(&q, dim, true, interpolation).unwrap();
            compare(&a, &b, 1e-12, 1e-12).unwrap_or_else(|e| panic!("{interpolation} {dim:?}: {e}"));
        }
    }
}

/// `unique(dim=...)` and `unique_consecutive(dim=...)` as torch 2.15 gives them (a row holding NaN
/// is distinct from every other).
#[test]
fn unique_slices_follow_torch() -> Result<()> {
    let x = Tensor::from_vec(vec![1i64, 2, 0, 5, 1, 2, 0, 3], [4, 2])?;
    let all = |r: (Tensor, Option<Tensor>, Option<Tensor>)| -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        Ok((r.0.to_dtype(DType::I64)?.to_vec()?, r.1.unwrap().to_vec()?, r.2.unwrap().to_vec()?))
    };
    assert_eq!(all(x.unique_dim(0, true, true)?)?, (vec![0, 3, 0, 5, 1, 2], vec![2, 1, 2, 0], vec![1, 1, 2]));
    assert_eq!(all(x.unique_dim(1, true, true)?)?, (x.to_vec()?, vec![0, 1], vec![1, 1]));
    assert_eq!(all(x.unique_consecutive_dim(0, true, true)?)?, (x.to_vec()?, vec![0, 1, 2, 3], vec![1; 4]));
    let y = Tensor::from_vec(vec![1.0f32, f32::NAN, 1.0, f32::NAN, 0.0, 1.0], [3, 2])?;
    let (v, inv, counts) = y.unique_dim(0, true, true)?;
    let v = v.to_vec::<f32>()?;
    assert_eq!((v[0], v[1], v[2], v[4]), (0.0, 1.0, 1.0, 1.0));
    assert!(v[3].is_nan() && v[5].is_nan());
    assert_eq!(
        (inv.unwrap().to_vec::<i64>()?, counts.unwrap().to_vec::<i64>()?),
        (vec![1, 2, 0], vec![1, 1, 1])
    );
    let (v, inv, _) = Tensor::zeros([0, 3], ())?.unique_dim(0, true, false)?;
    assert_eq!((v.dims(), inv.unwrap().dims()), (&[0usize, 3][..], &[0usize][..]));
    let e = Tensor::zeros([2, 0], ())?.unique_dim(0, false, false).unwrap_err().to_string();
    assert!(e.contains("There are 0 sized dimensions, and they aren't selected"), "{e}");
    let b = Tensor::from_vec(vec![true, false, false, false, true, false], [3, 2])?;
    assert_eq!(b.unique_dim(0, false, false)?.0.to_vec::<bool>()?, vec![false, false, true, false]);
    Ok(())
}

/// Rows holding NaN among many others sort without a comparator panic (a total order), each
/// NaN row distinct.
#[test]
fn unique_rows_with_many_nans() -> Result<()> {
    let v: Vec<f32> = (0..64).map(|i| if i % 2 == 0 { f32::NAN } else { (i % 7) as f32 }).collect();
    let (values, _, counts) = Tensor::from_vec(v, [32, 2])?.unique_dim(0, false, true)?;
    assert_eq!(counts.unwrap().sum_all()?.item::<i64>()?, 32);
    assert_eq!(values.dims()[1], 2);
    Ok(())
}
