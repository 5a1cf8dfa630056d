//! Golden tests for the ordering, scan and statistical-reduction ops against torch.
//!
//! `tests/golden/sortstats.safetensors` is written by `tests/golden/make_golden_sortstats.py`; see its
//! docstring for the case layout (the same as `golden.rs`'s). Every case runs; failures are collected
//! and reported together.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

use common::{case_inputs, compare, panic_message, quietly, tensor_of, tolerance, Golden, Json};
use oxtorch_tensor::{DType, Operand, Result, Scalar, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/sortstats.safetensors");

/// The fewest cases the file may hold and the fewest that must pass (guards against a vacuous run).
const MIN_CASES: usize = 1000;
/// The fewest error cases (torch raises) that must be checked.
const MIN_ERROR_CASES: usize = 200;

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
    get(meta, "dim").map(|v| v.as_i64().expect("an integer dim") as isize)
}

/// `dims` as a list (`null` means all dims, which oxtorch spells as an empty list).
fn m_dims(meta: &Json) -> Vec<isize> {
    get(meta, "dims")
        .map(|v| v.as_arr().expect("a list").iter().map(|d| d.as_i64().expect("a dim") as isize).collect())
        .unwrap_or_default()
}

fn m_dtype(meta: &Json) -> DType {
    DType::from_str(m_str(meta, "dtype")).expect("a dtype name")
}

fn m_scalar(meta: &Json) -> Scalar {
    let v = get(meta, "scalar").expect("a scalar");
    match m_str(meta, "scalar_type") {
        "int" => Scalar::Int(v.as_i64().expect("an int")),
        "float" => Scalar::Float(v.as_f64().expect("a float")),
        other => panic!("unknown scalar type {other}"),
    }
}

fn apply_view(t: Tensor, view: Option<&str>) -> Result<Tensor> {
    match view {
        None => Ok(t),
        Some("transpose") => t.transpose(0, 1),
        Some("step") => t.slice(-1, .., 2),
        Some(other) => panic!("unknown view {other}"),
    }
}

fn pair(r: Result<(Tensor, Tensor)>) -> Result<Vec<Tensor>> {
    r.map(|(a, b)| vec![a, b])
}

fn opt3(r: Result<(Tensor, Option<Tensor>, Option<Tensor>)>) -> Result<Vec<Tensor>> {
    r.map(|(a, b, c)| std::iter::once(a).chain(b).chain(c).collect())
}

/// Runs one case's op in oxtorch.
fn run_op(meta: &Json, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    let x = &ins[0];
    let keepdim = m_bool(meta, "keepdim");
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    match m_str(meta, "op") {
        "sort" => pair(x.sort(m_dim(meta), m_bool(meta, "descending"))),
        "argsort" => one(x.argsort(m_dim(meta), m_bool(meta, "descending"))),
        "msort" => one(x.msort()),
        "topk" => {
            pair(x.topk(m_i64(meta, "k"), m_dim(meta), m_bool(meta, "largest"), m_bool(meta, "sorted")))
        }
        "kthvalue" => pair(x.kthvalue(m_i64(meta, "k"), m_dim(meta), keepdim)),
        "median_all" => one(x.median_all()),
        "median" => pair(x.median(m_dim(meta), keepdim)),
        "mode" => pair(x.mode(m_dim(meta), keepdim)),
        "nanmedian_all" => one(x.nanmedian_all()),
        "nanmedian" => pair(x.nanmedian(m_dim(meta), keepdim)),
        "quantile" => {
            let q = if ins.len() > 1 { Operand::from(&ins[1]) } else { Operand::from(m_f64(meta, "q")) };
            one(x.quantile(q, m_opt_dim(meta), keepdim, m_str(meta, "interpolation")))
        }
        "cumsum" => one(x.cumsum(m_dim(meta), get(meta, "dtype").map(|_| m_dtype(meta)))),
        "cumprod" => one(x.cumprod(m_dim(meta), get(meta, "dtype").map(|_| m_dtype(meta)))),
        "cummax" => pair(x.cummax(m_dim(meta))),
        "cummin" => pair(x.cummin(m_dim(meta))),
        "logcumsumexp" => one(x.logcumsumexp(m_dim(meta))),
        "unique" => opt3(x.unique(true, m_bool(meta, "return_inverse"), m_bool(meta, "return_counts"))),
        "unique_consecutive" => {
            opt3(x.unique_consecutive(m_bool(meta, "return_inverse"), m_bool(meta, "return_counts")))
        }
        "searchsorted" => {
            let side = get(meta, "side").and_then(Json::as_str);
            one(x.searchsorted(&ins[1], m_bool(meta, "right"), side, m_bool(meta, "out_int32")))
        }
        "searchsorted_scalar" => {
            one(x.searchsorted(m_scalar(meta), m_bool(meta, "right"), None, m_bool(meta, "out_int32")))
        }
        "bucketize_scalar" => {
            one(Tensor::bucketize_scalar(m_scalar(meta), x, m_bool(meta, "out_int32"), m_bool(meta, "right")))
        }
        "bucketize" => one(x.bucketize(&ins[1], m_bool(meta, "out_int32"), m_bool(meta, "right"))),
        "histc" => one(x.histc(m_i64(meta, "bins"), m_f64(meta, "min"), m_f64(meta, "max"))),
        "bincount" => one(x.bincount(ins.get(1), m_i64(meta, "minlength"))),
        "var" => one(x.var(m_dims(meta), m_f64(meta, "correction"), keepdim)),
        "std" => one(x.std(m_dims(meta), m_f64(meta, "correction"), keepdim)),
        "var_mean" => pair(x.var_mean(m_dims(meta), m_f64(meta, "correction"), keepdim)),
        "std_mean" => pair(x.std_mean(m_dims(meta), m_f64(meta, "correction"), keepdim)),
        "norm" => one(x.norm(m_f64(meta, "p"), m_dims(meta), keepdim)),
        "logsumexp" => one(x.logsumexp(m_dims(meta), keepdim)),
        "count_nonzero" => one(x.count_nonzero(m_dims(meta))),
        "sum_dtype" => one(x.sum_dtype(m_dims(meta), keepdim, m_dtype(meta))),
        "prod_dtype" => one(x.prod_dtype(m_dims(meta), keepdim, m_dtype(meta))),
        "mean_dtype" => one(x.mean_dtype(m_dims(meta), keepdim, m_dtype(meta))),
        other => panic!("unknown op {other}"),
    }
}

/// Runs one case and checks it against torch; `Err` describes the mismatch.
fn check_case(st: &SafeTensors<'_>, name: &str, meta: &Json) -> std::result::Result<(), String> {
    let ins = case_inputs(st, name, meta, m_i64(meta, "n_in") as usize, apply_view)?;
    let result = catch_unwind(AssertUnwindSafe(|| run_op(meta, &ins)))
        .map_err(|payload| format!("panicked: {}", panic_message(&*payload)))?;
    if m_bool(meta, "error") {
        return match result {
            Err(_) => Ok(()),
            Ok(outs) => {
                let desc: Vec<String> =
                    outs.iter().map(|t| format!("{} {:?}", t.dtype().name(), t.dims())).collect();
                Err(format!("torch raises, oxtorch returns Ok ({})", desc.join(", ")))
            }
        };
    }
    let mut outs = result.map_err(|e| format!("torch succeeds, oxtorch returns Err: {e}"))?;
    if m_bool(meta, "values_only") {
        outs.truncate(1);
    }
    for (i, got) in outs.iter().enumerate() {
        let key = if i == 0 { format!("{name}.out") } else { format!("{name}.out{i}") };
        let want = tensor_of(&st.tensor(&key).map_err(|e| format!("missing expected output {key}: {e}"))?);
        let (rtol, atol) = tolerance(want.dtype());
        compare(got, &want, rtol, atol).map_err(|e| format!("output {i}: {e}"))?;
    }
    if st.tensor(&format!("{name}.out{}", outs.len())).is_ok() {
        return Err(format!("torch gives more than {} outputs", outs.len()));
    }
    Ok(())
}

#[test]
fn golden_sortstats_match_torch() {
    let golden = Golden::read(GOLDEN, "tests/golden/make_golden_sortstats.py", MIN_CASES);
    let (st, cases) = (golden.tensors(), golden.cases());

    let results: Vec<(&str, bool, std::result::Result<(), String>)> = quietly(|| {
        cases.iter().map(|(name, meta)| (*name, m_bool(meta, "error"), check_case(&st, name, meta))).collect()
    });

    let passed = results.iter().filter(|r| r.2.is_ok()).count();
    let errors_checked = results.iter().filter(|r| r.1 && r.2.is_ok()).count();
    let failures: Vec<String> =
        results.iter().filter_map(|(n, _, r)| r.as_ref().err().map(|e| format!("{n}: {e}"))).collect();
    println!(
        "golden sortstats: {} cases run, {passed} passed ({errors_checked} of them error cases), {} failed",
        results.len(),
        failures.len()
    );
    for f in &failures {
        println!("  FAILED {f}");
    }
    assert!(failures.is_empty(), "{} golden cases differ from torch (listed above)", failures.len());
    assert!(passed >= MIN_CASES, "only {passed} golden cases passed; the test must not pass vacuously");
    assert!(errors_checked >= MIN_ERROR_CASES, "only {errors_checked} error cases passed");
}

/// Sorting many long rows runs them in parallel; the result must still be each row's stable sort.
#[test]
fn parallel_sort_matches_a_sequential_stable_sort() {
    let (rows, n) = (8usize, 9000usize);
    let data: Vec<i32> = (0..rows * n).map(|i| ((i * 7919) % 1013) as i32 % 97).collect();
    let x = Tensor::from_vec(data.clone(), [rows, n]).unwrap();
    for descending in [false, true] {
        let (v, i) = x.sort(-1, descending).unwrap();
        let (v, i) = (v.to_vec::<i32>().unwrap(), i.to_vec::<i64>().unwrap());
        for r in 0..rows {
            let row = &data[r * n..(r + 1) * n];
            let mut want: Vec<(i32, i64)> = row.iter().enumerate().map(|(j, &x)| (x, j as i64)).collect();
            if descending {
                want.sort_by_key(|e| std::cmp::Reverse(e.0));
            } else {
                want.sort_by_key(|e| e.0);
            }
            let got: Vec<(i32, i64)> = (0..n).map(|j| (v[r * n + j], i[r * n + j])).collect();
            assert_eq!(got, want, "row {r}, descending {descending}");
        }
    }
    // Along dim 0 of the transpose: strided rows, same answer.
    let (vt, _) = x.t().unwrap().sort(0, false).unwrap();
    let (v, _) = x.sort(1, false).unwrap();
    assert!(vt.t().unwrap().equal(&v).unwrap());
}

/// Values out of the declared bin range and other bad arguments are errors, never panics.
#[test]
fn bad_arguments_are_errors() {
    let x = Tensor::from_vec(vec![3i64, 1, 2], [3]).unwrap();
    assert!(x.topk(4, 0, true, true).is_err());
    assert!(x.kthvalue(0, 0, false).is_err());
    assert!(x.sort(1, false).is_err());
    assert!(x.cumsum(-2, None).is_err());
    assert!(x.bincount(None, -1).is_err());
    let f = x.to_dtype(DType::F32).unwrap();
    assert!(f.quantile(0.5, Some(0), false, "cubic").is_err());
    assert!(f.histc(0, 0.0, 1.0).is_err());
    assert!(f.searchsorted(&f, true, Some("left"), false).is_err());
    assert!(f.searchsorted(&f, false, Some("middle"), false).is_err());
}
