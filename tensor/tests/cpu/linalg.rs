//! `oxtorch_tensor::linalg` against PyTorch: the outputs, the gradients of a weighted-sum loss and
//! the error messages of every case of `linalg_golden.rs` (written by
//! `tensor/tests/make_linalg_golden.py`, whose docstring describes the cases), then properties
//! that need no golden values: reconstructions and orthogonality on larger matrices, `grad_fn`
//! names, determinism.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_tensor::linalg::{self as la, NormOrd};
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

include!("linalg_golden.rs");

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

fn number(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

fn int(s: &str) -> isize {
    s.parse().unwrap_or_else(|_| panic!("not an integer: {s}"))
}

fn opt_number(s: &str) -> Option<f64> {
    (s != "none").then(|| number(s))
}

/// A dim list: `None` for `"none"`, empty for `""`.
fn dims(s: &str) -> Option<Vec<isize>> {
    match s {
        "none" => None,
        "" => Some(Vec::new()),
        s => Some(s.split(',').map(int).collect()),
    }
}

fn opt_dtype(s: &str) -> Option<DType> {
    (s != "none").then(|| dtype(s))
}

fn ord(s: &str) -> NormOrd {
    s.parse::<f64>().map(NormOrd::P).unwrap_or_else(|_| NormOrd::from(s))
}

/// The call of a kind (the same as the script's `run`).
fn run(kind: &str, p: &[(&str, &str)], x: &Inputs) -> Result<Vec<Tensor>> {
    let a = x.t("A");
    let b = || x.t("B");
    Ok(match kind {
        "inv" => vec![la::inv(a)?],
        "inverse" => vec![a.inverse()?],
        "det" => vec![la::det(a)?],
        "Tdet" => vec![a.det()?],
        "slogdet" => {
            let (sign, log) = la::slogdet(a)?;
            vec![sign, log]
        }
        "logdet" => vec![a.logdet()?],
        "solve" => vec![la::solve(a, b(), flag(p, "left"))?],
        "cholesky" => vec![la::cholesky(a, flag(p, "upper"))?],
        "qr" => {
            let (q, r) = la::qr(a, param(p, "mode"))?;
            vec![q, r]
        }
        "eigh" => {
            let (w, v) = la::eigh(a, param(p, "uplo"))?;
            vec![w, v.mul(&v)?]
        }
        "eigvalsh" => vec![la::eigvalsh(a, param(p, "uplo"))?],
        "svd" => {
            let (u, s, vh) = la::svd(a, flag(p, "full"))?;
            let k = s.size(-1)?;
            let (uk, vk) = (u.narrow(-1, 0, k)?, vh.narrow(-2, 0, k)?);
            let recon = uk.mul(&s.unsqueeze(-2)?)?.matmul(&vk)?;
            let (utu, vvt) = (u.transpose(-2, -1)?.matmul(&u)?, vh.matmul(&vh.transpose(-2, -1)?)?);
            vec![s, uk.mul(&uk)?, vk.mul(&vk)?, recon, utu, vvt]
        }
        "svdvals" => vec![la::svdvals(a)?],
        "pinv" | "matrix_rank" => {
            let (atol, rtol) = (opt_number(param(p, "atol")), opt_number(param(p, "rtol")));
            let hermitian = flag(p, "hermitian");
            if kind == "pinv" {
                vec![la::pinv(a, atol, rtol, hermitian)?]
            } else {
                vec![la::matrix_rank(a, atol, rtol, hermitian)?]
            }
        }
        "vector_norm" => {
            let d = dims(param(p, "dim")).unwrap_or_default();
            let dt = opt_dtype(param(p, "dtype"));
            vec![la::vector_norm(a, number(param(p, "ord")), d, flag(p, "keepdim"), dt)?]
        }
        "matrix_norm" => {
            let d = dims(param(p, "dim")).expect("matrix_norm cases give dims");
            let dt = opt_dtype(param(p, "dtype"));
            vec![la::matrix_norm(a, ord(param(p, "ord")), d, flag(p, "keepdim"), dt)?]
        }
        "norm" => {
            let o = (param(p, "ord") != "none").then(|| ord(param(p, "ord")));
            let d = dims(param(p, "dim"));
            vec![la::norm(a, o, d.as_deref(), flag(p, "keepdim"), None)?]
        }
        "vecdot" => vec![la::vecdot(a, b(), int(param(p, "dim")))?],
        "cross" => vec![la::cross(a, b(), int(param(p, "dim")))?],
        "diagonal" => {
            let (offset, d1, d2) = (int(param(p, "offset")), int(param(p, "dim1")), int(param(p, "dim2")));
            vec![la::diagonal(a, offset, d1, d2)?]
        }
        "matmul" => vec![la::matmul(a, b())?],
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
fn every_linalg_case_matches_pytorch_values_and_gradients() {
    assert_eq!(GOLDEN.len(), 110, "the golden file's case count changed");
    run_all("linalg golden cases", GOLDEN, check_case);
}

#[test]
fn every_linalg_refusal_is_pytorchs_error() {
    assert_eq!(FAILURES.len(), 86, "the golden file's failure count changed");
    run_all("linalg failures", FAILURES, check_failure);
}

/// A deterministic, irregular `rows × cols` f64 matrix.
fn matrix(rows: usize, cols: usize, seed: f64) -> Tensor {
    let v: Vec<f64> =
        (0..rows * cols).map(|i| ((i as f64 + 1.0) * seed).sin() + 0.1 * (i % 7) as f64).collect();
    Tensor::from_vec(v, [rows, cols]).unwrap()
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    a.sub(b).unwrap().abs().unwrap().to_f64_vec().unwrap().into_iter().fold(0.0, f64::max)
}

fn eye(n: usize) -> Tensor {
    Tensor::eye(n, None, DType::F64).unwrap()
}

/// Larger matrices than the golden cases: Jacobi converges and the factors fit together.
#[test]
fn factorizations_of_larger_matrices_reconstruct() -> Result<()> {
    for (m, n) in [(14, 9), (9, 14), (12, 12)] {
        let a = matrix(m, n, 0.37);
        let k = m.min(n);
        let (u, s, vh) = la::svd(&a, true)?;
        let recon = u.narrow(-1, 0, k)?.mul(&s.unsqueeze(0)?)?.matmul(&vh.narrow(0, 0, k)?)?;
        assert!(max_abs_diff(&recon, &a) < 1e-12, "svd {m}x{n}: reconstruction");
        assert!(max_abs_diff(&u.t()?.matmul(&u)?, &eye(m)) < 1e-12, "svd {m}x{n}: U orthogonal");
        assert!(max_abs_diff(&vh.matmul(&vh.t()?)?, &eye(n)) < 1e-12, "svd {m}x{n}: Vh orthogonal");
        let sv = s.to_vec::<f64>()?;
        assert!(sv.windows(2).all(|w| w[0] >= w[1]), "svd {m}x{n}: descending {sv:?}");
        let (q, r) = la::qr(&a, "complete")?;
        assert!(max_abs_diff(&q.matmul(&r)?, &a) < 1e-12, "qr {m}x{n}: reconstruction");
        assert_eq!(r.to_vec::<f64>()?, r.triu(0)?.to_vec::<f64>()?, "qr {m}x{n}: R upper triangular");
    }
    let x = matrix(12, 12, 0.91);
    let sym = x.add(&x.t()?)?;
    let (w, v) = la::eigh(&sym, "L")?;
    let recon = v.mul(&w.unsqueeze(0)?)?.matmul(&v.t()?)?;
    assert!(max_abs_diff(&recon, &sym) < 1e-12, "eigh: reconstruction");
    assert!(max_abs_diff(&v.t()?.matmul(&v)?, &eye(12)) < 1e-12, "eigh: orthogonal");
    let wv = w.to_vec::<f64>()?;
    assert!(wv.windows(2).all(|p| p[0] <= p[1]), "eigh: ascending {wv:?}");
    let spd = x.matmul(&x.t()?)?.add(eye(12))?;
    let l = la::cholesky(&spd, false)?;
    assert!(max_abs_diff(&l.matmul(&l.t()?)?, &spd) < 1e-10, "cholesky: reconstruction");
    let inv = la::inv(&spd)?;
    assert!(max_abs_diff(&inv.matmul(&spd)?, &eye(12)) < 1e-9, "inv: A⁻¹ A = I");
    let p = la::pinv(&matrix(14, 9, 0.37), None, None, false)?;
    let a = matrix(14, 9, 0.37);
    assert!(max_abs_diff(&a.matmul(&p)?.matmul(&a)?, &a) < 1e-10, "pinv: A A⁺ A = A");
    Ok(())
}

/// The decompositions are deterministic (signs included), and give torch's `grad_fn` names.
#[test]
fn decompositions_are_deterministic_and_named_as_torch() -> Result<()> {
    let a = matrix(4, 3, 1.3).requires_grad_(true)?;
    let (u1, _, _) = la::svd(&a, false)?;
    let (u2, _, _) = la::svd(&a, false)?;
    assert_eq!(u1.to_vec::<f64>()?, u2.to_vec::<f64>()?);
    let sq = matrix(3, 3, 0.7).add(&eye(3).mul(3.0)?)?.requires_grad_(true)?;
    let name = |t: &Tensor| t.grad_fn().map(|g| g.name().to_string()).unwrap_or_default();
    assert_eq!(name(&la::inv(&sq)?), "LinalgInvExBackward0");
    assert_eq!(name(&la::det(&sq)?), "LinalgDetBackward0");
    assert_eq!(name(&la::slogdet(&sq)?.1), "LinalgSlogdetBackward0");
    assert!(la::slogdet(&sq)?.0.grad_fn().is_none(), "slogdet's sign is not differentiable");
    assert_eq!(name(&la::solve(&sq, &sq, true)?), "LinalgSolveExBackward0");
    assert_eq!(name(&la::cholesky(&sq.matmul(&sq.t()?)?, false)?), "LinalgCholeskyExBackward0");
    assert_eq!(name(&la::qr(&a, "reduced")?.0), "LinalgQrBackward0");
    assert_eq!(name(&la::eigh(&sq, "L")?.1), "LinalgEighBackward0");
    assert_eq!(name(&la::svd(&a, true)?.0), "LinalgSvdBackward0");
    assert_eq!(name(&la::pinv(&a, None, None, false)?), "LinalgPinvBackward0");
    assert_eq!(la::matrix_rank(&a, None, None, false)?.dtype(), DType::I64);
    Ok(())
}

/// torch 2.15 removed `Tensor.cholesky`; the method returns its error.
#[test]
fn tensor_cholesky_is_torchs_removal_error() {
    let err = eye(2).cholesky(false).unwrap_err().to_string();
    assert_eq!(
        err,
        "This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`."
    );
}
