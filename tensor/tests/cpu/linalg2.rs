//! `oxtorch_tensor::linalg`'s triangular and LU solvers, `matrix_power`, `multi_dot` and the `_ex`
//! variants against PyTorch: the outputs, the gradients of a weighted-sum loss and the error
//! messages of every case of `linalg2_golden.rs` (written by `tensor/tests/make_linalg2_golden.py`),
//! then properties without golden values.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_tensor::linalg as la;
use oxtorch_tensor::{DType, Result, Tensor};

/// A tensor written out: its dtype, dims and row-major values.
struct T {
    dtype: &'static str,
    dims: &'static [usize],
    data: &'static [f64],
}

/// One golden case: the call (`kind` with `params`), its inputs (loss weights `w{i}` among them),
/// torch's outputs (those in `skip` are not compared) and the gradients of the loss.
struct Golden {
    name: &'static str,
    kind: &'static str,
    params: &'static [(&'static str, &'static str)],
    tol: f64,
    skip: &'static [usize],
    inputs: &'static [(&'static str, T)],
    outs: &'static [T],
    grads: &'static [(&'static str, T)],
}

/// A call torch refuses (in backward when `backward`), with its message.
struct Failure {
    name: &'static str,
    kind: &'static str,
    params: &'static [(&'static str, &'static str)],
    backward: bool,
    inputs: &'static [(&'static str, T)],
    message: &'static str,
}

include!("linalg2_golden.rs");

fn dtype(name: &str) -> DType {
    name.parse().unwrap_or_else(|e| panic!("{e}"))
}

fn tensor(v: &T, requires_grad: bool) -> Tensor {
    let t = Tensor::from_vec(v.data.to_vec(), v.dims).unwrap().to_dtype(dtype(v.dtype)).unwrap();
    t.requires_grad_(requires_grad).unwrap()
}

/// A case's input tensors by name.
struct Inputs(Vec<(&'static str, Tensor)>);

impl Inputs {
    fn new(inputs: &'static [(&'static str, T)], differentiated: impl Fn(&str) -> bool) -> Inputs {
        Inputs(inputs.iter().map(|(k, v)| (*k, tensor(v, differentiated(k)))).collect())
    }

    fn get(&self, k: &str) -> Option<&Tensor> {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, t)| t)
    }

    fn t(&self, k: &str) -> &Tensor {
        self.get(k).unwrap_or_else(|| panic!("no input {k}"))
    }
}

fn param<'a>(params: &'a [(&str, &str)], key: &str) -> &'a str {
    params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no param {key}"))
}

fn flag(params: &[(&str, &str)], key: &str) -> bool {
    param(params, key) == "true"
}

fn int(s: &str) -> isize {
    s.parse().unwrap_or_else(|_| panic!("not an integer: {s}"))
}

/// The call of a kind (the same as the script's `run`).
fn run(kind: &str, p: &[(&str, &str)], x: &Inputs) -> Result<Vec<Tensor>> {
    let a = x.t("A");
    let b = || x.t("B");
    Ok(match kind {
        "solve_triangular" => {
            vec![la::solve_triangular(a, b(), flag(p, "upper"), flag(p, "left"), flag(p, "unit"))?]
        }
        "cholesky_solve" => vec![la::cholesky_solve(b(), a, flag(p, "upper"))?],
        "lu_factor" => {
            let (lu, piv) = la::lu_factor(a)?;
            vec![lu, piv]
        }
        "lu_factor_ex" => {
            let (lu, piv, info) = la::lu_factor_ex(a)?;
            vec![lu, piv, info]
        }
        "lu" => {
            let (pm, l, u) = la::lu(a)?;
            vec![pm, l, u]
        }
        "lu_solve" => {
            let (lu, piv) = la::lu_factor(a)?;
            vec![la::lu_solve(&lu, &piv, b(), flag(p, "left"), flag(p, "adjoint"))?]
        }
        "lu_solve_raw" => vec![la::lu_solve(a, x.t("C"), b(), flag(p, "left"), flag(p, "adjoint"))?],
        "matrix_power" => vec![la::matrix_power(a, int(param(p, "n")) as i64)?],
        "multi_dot" => {
            let ts: Vec<&Tensor> = param(p, "names").split(',').map(|k| x.t(k)).collect();
            vec![la::multi_dot(&ts)?]
        }
        "inv_ex" => {
            let (inv, info) = la::inv_ex(a)?;
            vec![inv, info]
        }
        "solve_ex" => {
            let (r, info) = la::solve_ex(a, b(), flag(p, "left"))?;
            vec![r, info]
        }
        other => panic!("no kind {other}"),
    })
}

/// `sum_i sum(outs[i] * w_i)` over the outputs that have a weight input `w{i}`.
fn loss(outs: &[Tensor], x: &Inputs) -> Result<Option<Tensor>> {
    let mut total: Option<Tensor> = None;
    for (i, o) in outs.iter().enumerate() {
        if let Some(w) = x.get(&format!("w{i}")) {
            let term = o.mul(w)?.sum_all()?;
            total = Some(match total {
                Some(t) => t.add(&term)?,
                None => term,
            });
        }
    }
    Ok(total)
}

/// torch's `allclose` rule with `rtol = atol = tol`; infinities and NaNs must match exactly. The
/// dtype and shape must be torch's.
fn compare(what: &str, got: &Tensor, want: &T, tol: f64) -> std::result::Result<(), String> {
    if got.dims() != want.dims {
        return Err(format!("{what}: shape {:?}, PyTorch {:?}", got.dims(), want.dims));
    }
    if got.dtype() != dtype(want.dtype) {
        return Err(format!("{what}: dtype {}, PyTorch {}", got.dtype(), want.dtype));
    }
    let values = got.to_f64_vec().map_err(|e| format!("{what}: {e}"))?;
    for (i, (x, y)) in values.iter().zip(want.data).enumerate() {
        let ok = if y.is_finite() {
            (x - y).abs() <= tol * (1.0 + y.abs())
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        if !ok {
            return Err(format!("{what}[{i}]: got {x}, PyTorch {y}"));
        }
    }
    Ok(())
}

fn check_case(g: &Golden) -> std::result::Result<(), String> {
    let x = Inputs::new(g.inputs, |k| g.grads.iter().any(|(n, _)| *n == k));
    let outs = run(g.kind, g.params, &x).map_err(|e| format!("{}: {e}", g.name))?;
    if outs.len() != g.outs.len() {
        return Err(format!("{}: {} outputs, PyTorch {}", g.name, outs.len(), g.outs.len()));
    }
    for (i, (got, want)) in outs.iter().zip(g.outs).enumerate() {
        if !g.skip.contains(&i) {
            compare(&format!("{}.out{i}", g.name), got, want, g.tol)?;
        }
    }
    if g.grads.is_empty() {
        return Ok(());
    }
    let l = loss(&outs, &x).map_err(|e| format!("{}: loss: {e}", g.name))?.expect("a weighted output");
    l.backward().map_err(|e| format!("{}: backward: {e}", g.name))?;
    for (k, want) in g.grads {
        let got = x.t(k).grad().ok_or_else(|| format!("{}: no gradient for {k}", g.name))?;
        compare(&format!("{}.grad.{k}", g.name), &got, want, g.tol)?;
    }
    Ok(())
}

fn check_failure(f: &Failure) -> std::result::Result<(), String> {
    let x = Inputs::new(f.inputs, |k| f.backward && k == "A");
    let outcome = run(f.kind, f.params, &x).and_then(|outs| {
        if !f.backward {
            return Ok(());
        }
        loss(&outs, &x)?.expect("a weighted output").backward()
    });
    match outcome {
        Err(e) if e.to_string() == f.message => Ok(()),
        Err(e) => Err(format!("{}: error\n    {e}\n  PyTorch\n    {}", f.name, f.message)),
        Ok(()) => Err(format!("{}: no error; PyTorch: {}", f.name, f.message)),
    }
}

/// Runs every check (a panic counts as a failure), then fails listing all that failed.
fn run_all<C>(what: &str, cases: &[C], check: impl Fn(&C) -> std::result::Result<(), String>) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| match catch_unwind(AssertUnwindSafe(|| check(c))) {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(p) => Some(
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panicked".to_string()),
            ),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{what}: {} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_linalg2_case_matches_pytorch_values_and_gradients() {
    assert_eq!(GOLDEN.len(), 53, "the golden file's case count changed");
    run_all("linalg2 golden cases", GOLDEN, check_case);
}

#[test]
fn every_linalg2_refusal_is_pytorchs_error() {
    assert_eq!(FAILURES.len(), 33, "the golden file's failure count changed");
    run_all("linalg2 failures", FAILURES, check_failure);
}

/// A deterministic, irregular `rows × cols` f64 matrix, shifted to be well-conditioned when square.
fn matrix(rows: usize, cols: usize, seed: f64) -> Tensor {
    let v: Vec<f64> = (0..rows * cols)
        .map(|i| ((i as f64 + 1.0) * seed).sin() + if i / cols == i % cols { 3.0 } else { 0.0 })
        .collect();
    Tensor::from_vec(v, [rows, cols]).unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    a.sub(b).unwrap().abs().unwrap().to_f64_vec().unwrap().into_iter().fold(0.0, f64::max)
}

/// Larger matrices than the golden cases: the factors and solutions fit together.
#[test]
fn larger_lu_and_triangular_solves_reconstruct() -> Result<()> {
    for (m, n) in [(14, 9), (9, 14), (12, 12)] {
        let a = matrix(m, n, 0.37);
        let (p, l, u) = la::lu(&a)?;
        assert!(max_abs_diff(&p.matmul(&l)?.matmul(&u)?, &a) < 1e-12, "lu {m}x{n}: reconstruction");
        let (lu, piv) = la::lu_factor(&a)?;
        assert_eq!(piv.dtype(), DType::I32);
        assert_eq!(lu.dims(), a.dims());
    }
    let a = matrix(12, 12, 0.91);
    let b = matrix(12, 5, 0.53);
    let (lu, piv) = la::lu_factor(&a)?;
    let x = la::lu_solve(&lu, &piv, &b, true, false)?;
    assert!(max_abs_diff(&a.matmul(&x)?, &b) < 1e-10, "lu_solve");
    let t = a.triu(0)?;
    let x = la::solve_triangular(&a, &b, true, true, false)?;
    assert!(max_abs_diff(&t.matmul(&x)?, &b) < 1e-10, "solve_triangular reads the upper triangle only");
    let x = la::matrix_power(&a.div(4.0)?, 7)?;
    let mut want = a.div(4.0)?;
    for _ in 0..6 {
        want = want.matmul(&a.div(4.0)?)?;
    }
    assert!(max_abs_diff(&x, &want) < 1e-10, "matrix_power 7");
    Ok(())
}

#[test]
fn grad_fn_names_are_torchs() -> Result<()> {
    let a = matrix(3, 3, 0.2).requires_grad_(true)?;
    let b = matrix(3, 2, 0.7);
    let name = |t: &Tensor| t.grad_fn().map(|g| g.name().to_string()).unwrap_or_default();
    assert_eq!(name(&la::solve_triangular(&a, &b, true, true, false)?), "LinalgSolveTriangularBackward0");
    assert_eq!(name(&la::cholesky_solve(&b, &a, false)?), "CholeskySolveBackward0");
    assert_eq!(name(&la::lu(&a)?.1), "LinalgLuBackward0");
    assert_eq!(name(&la::lu_factor(&a)?.0), "LinalgLuFactorExBackward0");
    Ok(())
}
