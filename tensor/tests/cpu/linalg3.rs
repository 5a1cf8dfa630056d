//! `oxtorch_tensor::linalg`'s `lstsq`, `matrix_exp`, `cond`, `tensorinv`, `tensorsolve`,
//! `cholesky_inverse`, `householder_product`, `vecdot` and `vander` against PyTorch: the outputs,
//! the gradients of a weighted-sum loss and the error messages of every case of
//! `linalg3_golden.rs` (written by `tensor/tests/make_linalg3_golden.py`), then properties without
//! golden values.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_tensor::linalg as la;
use oxtorch_tensor::linalg::NormOrd;
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

include!("linalg3_golden.rs");

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

/// `None` for `"none"`, else the parsed value.
fn opt<T>(s: &str, parse: impl Fn(&str) -> T) -> Option<T> {
    if s == "none" {
        None
    } else {
        Some(parse(s))
    }
}

/// A `cond` order: `"none"`, a number (`inf` included) or a string order.
fn norm_ord(s: &str) -> Option<NormOrd> {
    opt(s, |s| s.parse::<f64>().map_or_else(|_| NormOrd::from(s), NormOrd::P))
}

/// The call of a kind (the same as the script's `run`).
fn run(kind: &str, p: &[(&str, &str)], x: &Inputs) -> Result<Vec<Tensor>> {
    let a = x.t("A");
    let b = || x.t("B");
    Ok(match kind {
        "lstsq" => {
            let rcond = opt(param(p, "rcond"), |s| s.parse::<f64>().expect("a float rcond"));
            let driver = param(p, "driver");
            let driver = (driver != "none").then_some(driver);
            let (solution, residuals, rank, singular_values) = la::lstsq(a, b(), rcond, driver)?;
            vec![solution, residuals, rank, singular_values]
        }
        "matrix_exp" => vec![la::matrix_exp(a)?],
        "cond" => vec![la::cond(a, norm_ord(param(p, "p")))?],
        "tensorinv" => vec![la::tensorinv(a, int(param(p, "ind")) as i64)?],
        "tensorsolve" => {
            let dims: Option<Vec<isize>> = opt(param(p, "dims"), |s| s.split(',').map(int).collect());
            vec![la::tensorsolve(a, b(), dims.as_deref())?]
        }
        "cholesky_inverse" => vec![la::cholesky_inverse(a, flag(p, "upper"))?],
        "householder_product" => vec![la::householder_product(a, b())?],
        "vecdot" => vec![la::vecdot(a, b(), int(param(p, "dim")))?],
        "vander" => vec![la::vander(a, opt(param(p, "N"), |s| int(s) as i64))?],
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
fn every_linalg3_case_matches_pytorch_values_and_gradients() {
    assert_eq!(GOLDEN.len(), 63, "the golden file's case count changed");
    run_all("linalg3 golden cases", GOLDEN, check_case);
}

#[test]
fn every_linalg3_refusal_is_pytorchs_error() {
    assert_eq!(FAILURES.len(), 48, "the golden file's failure count changed");
    run_all("linalg3 failures", FAILURES, check_failure);
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

/// Larger matrices than the golden cases: the defining identities hold.
#[test]
fn larger_matrices_satisfy_the_identities() -> Result<()> {
    // exp(A) exp(-A) = I, through several squarings
    let a = matrix(9, 9, 0.43).mul(0.7)?;
    let e = a.matrix_exp()?;
    let eye = Tensor::eye(9, None, DType::F64)?;
    let prod = e.matmul(&la::matrix_exp(&a.neg()?)?)?;
    assert!(max_abs_diff(&prod, &eye) < 1e-9, "exp(A) exp(-A) = I");
    // least squares: the residual is orthogonal to the columns of A
    let a = matrix(12, 5, 0.61);
    let b = matrix(12, 3, 0.29);
    let (x, res, rank, sv) = la::lstsq(&a, &b, None, Some("gelsd"))?;
    let r = a.matmul(&x)?.sub(&b)?;
    assert!(
        max_abs_diff(&a.t()?.matmul(&r)?, &Tensor::zeros([5, 3], DType::F64)?) < 1e-10,
        "normal equations"
    );
    assert!(max_abs_diff(&r.square()?.sum([0isize], false)?, &res) < 1e-10, "residuals");
    assert_eq!(rank.item::<i64>()?, 5);
    assert_eq!(sv.dims(), &[5]);
    // tensorinv: tensordot(X, A, ind) = I
    let a = matrix(6, 6, 0.77).reshape([2, 3, 6])?;
    let inv = la::tensorinv(&a, 2)?;
    let id = inv.tensordot(&a, 2)?;
    assert!(max_abs_diff(&id, &Tensor::eye(6, None, DType::F64)?) < 1e-12, "tensorinv");
    // cholesky_inverse(L) = inv(L Lᵀ)
    let l = matrix(7, 7, 0.13).tril(0)?;
    let want = la::inv(&l.matmul(&l.t()?)?)?;
    assert!(max_abs_diff(&la::cholesky_inverse(&l, false)?, &want) < 1e-10, "cholesky_inverse");
    // householder_product with tau_i = 2 / |v_i|² multiplies reflections: orthonormal columns
    let h = matrix(6, 4, 0.37);
    let hv = h.to_f64_vec()?;
    let tau: Vec<f64> =
        (0..4).map(|i| 2.0 / (1.0 + (i + 1..6).map(|r| hv[r * 4 + i].powi(2)).sum::<f64>())).collect();
    let q = la::householder_product(&h, &Tensor::from_vec(tau, [4])?)?;
    let eye4 = Tensor::eye(4, None, DType::F64)?;
    assert!(max_abs_diff(&q.t()?.matmul(&q)?, &eye4) < 1e-12, "householder_product: orthonormal columns");
    Ok(())
}

#[test]
fn grad_fn_names_are_torchs() -> Result<()> {
    let a = matrix(3, 3, 0.2).requires_grad_(true)?;
    let name = |t: &Tensor| t.grad_fn().map(|g| g.name().to_string()).unwrap_or_default();
    assert_eq!(name(&la::matrix_exp(&a)?), "LinalgMatrixExpBackward0");
    assert_eq!(name(&la::cholesky_inverse(&a, false)?), "CholeskyInverseBackward0");
    Ok(())
}

/// torch 2.15: `lstsq(A [1,3,3], B [3,3])` is `[3,3,3]` (B's rows broadcast as a batch dim, each
/// solution `solve(A[0], B)`), `lstsq(A [3,3,3], B [3,5])` is `[3,3,5]`; `A [2,3,2]` with `B [3,4]`
/// is a broadcast error.
#[test]
fn lstsq_of_a_matrix_one_dim_shorter_broadcasts_as_torchs() -> Result<()> {
    let a = matrix(3, 3, 0.3).unsqueeze(0)?;
    let b = matrix(3, 3, 0.7);
    let (x, _, _, _) = la::lstsq(&a, &b, None, None)?;
    assert_eq!(x.dims(), &[3, 3, 3]);
    let want = la::solve(&a.select(0, 0)?, &b, true)?;
    for i in 0..3 {
        assert!(max_abs_diff(&x.select(0, i)?, &want) < 1e-12);
    }
    let a3 = a.expand([3, 3, 3])?.contiguous()?;
    let (x, _, _, _) = la::lstsq(&a3, &matrix(3, 5, 0.1), None, None)?;
    assert_eq!(x.dims(), &[3, 3, 5]);
    assert!(la::lstsq(&matrix(6, 2, 0.2).reshape([2, 3, 2])?, &matrix(3, 4, 0.5), None, None).is_err());
    Ok(())
}

/// torch 2.15: `gelsd` with `rcond = -1` uses machine precision (rank 1 for a rank-one `A`, no
/// residuals); `gels` of an empty `[3, 0]` `A` gives zero residuals.
#[test]
fn lstsq_negative_rcond_and_empty_gels_as_lapack() -> Result<()> {
    let a = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 0.0, 0.0, 0.0], [3, 2])?;
    let b = Tensor::ones([3, 1], DType::F64)?;
    let (_, residuals, rank, _) = la::lstsq(&a, &b, Some(-1.0), Some("gelsd"))?;
    assert_eq!(rank.to_vec::<i64>()?, vec![1]);
    assert_eq!(residuals.dims(), &[0]);
    let a = Tensor::zeros([3, 0], DType::F64)?;
    let (x, residuals, _, _) = la::lstsq(&a, &matrix(3, 2, 0.4), None, Some("gels"))?;
    assert_eq!(x.dims(), &[0, 2]);
    assert_eq!(residuals.to_vec::<f64>()?, vec![0.0, 0.0]);
    Ok(())
}
