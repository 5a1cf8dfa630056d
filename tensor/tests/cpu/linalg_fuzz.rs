//! A seeded randomized differential test of the `torch.linalg` surface and the matrix functions on
//! Tensor (linalg_fuzz_golden.rs, from make_linalg_fuzz_golden.py): float32 and float64, batch
//! dims (empty batches and 0x0 matrices too), transposed (column-major) inputs, well-conditioned,
//! ill-conditioned and exactly singular matrices, SPD and non-SPD input for Cholesky, torch's
//! errors and messages, and float64 gradients (`autograd::grad` with random upstream gradients).
//!
//! Decompositions whose factors are unique only up to a gauge (signs or rotations of singular
//! vectors and eigenvectors, the signs of QR's rows) are compared through invariant quantities,
//! computed the same way here and in the generator: QR gives `Q R`, `Qᵀ Q`, `|R|`; SVD gives
//! `(U S) Vh`, `S`, `Uᵀ U`, `Vh Vhᵀ`; eigh gives the eigenvalues, `(V L) Vᵀ`, `Vᵀ V`. Gradients
//! are taken only of these invariant outputs. All mismatches are collected and reported at the end;
//! a panic counts as a failure.

use oxtorch_tensor::linalg::{self as la, NormOrd};
use oxtorch_tensor::{DType, Result, Tensor};

use crate::common::{panic_message, quietly};
use crate::linalg_fuzz_golden::{Case, In, Out, CASES};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn short(d: DType) -> &'static str {
    match d {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::Bool => "bool",
        _ => "other",
    }
}

fn nums(text: &str) -> Vec<i64> {
    text.split(',').filter(|s| !s.is_empty()).map(|s| s.trim().parse().expect("an integer")).collect()
}

/// Rebuilds one input: the contiguous base tensor, then its layout ops (`t a,b`: a transpose).
fn build(i: &In) -> Result<Tensor> {
    let mut t = Tensor::from_slice(i.vals, i.base.to_vec())?.to_dtype(dtype_of(i.dtype))?;
    for op in i.layout.split('|').filter(|s| !s.is_empty()) {
        let (kind, rest) = op.split_at(1);
        let n = nums(rest.trim());
        t = match kind {
            "t" => t.transpose(n[0] as isize, n[1] as isize)?,
            other => panic!("unknown layout op {other}"),
        };
    }
    Ok(t)
}

fn from_out(o: &Out) -> Result<Tensor> {
    Tensor::from_slice(o.vals, o.shape.to_vec())?.to_dtype(dtype_of(o.dtype))
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

    fn b(&self, key: &str) -> bool {
        self.s(key) == "1"
    }

    /// A dim list, `None` for `none`.
    fn opt_dims(&self, key: &str) -> Option<Vec<isize>> {
        let v = self.s(key);
        (v != "none").then(|| nums(v).into_iter().map(|d| d as isize).collect())
    }

    fn opt_dtype(&self, key: &str) -> Option<DType> {
        let v = self.s(key);
        (v != "none").then(|| dtype_of(v))
    }

    /// A norm order: `none`, `fro`, `nuc` or a number (`inf`, `-inf` included).
    fn ord(&self, key: &str) -> Option<NormOrd> {
        match self.s(key) {
            "none" => None,
            "fro" | "nuc" => Some(NormOrd::from(self.s(key))),
            v => Some(NormOrd::P(v.parse().expect("a number"))),
        }
    }
}

fn pair((a, b): (Tensor, Tensor)) -> Vec<Tensor> {
    vec![a, b]
}

fn triple((a, b, c): (Tensor, Tensor, Tensor)) -> Vec<Tensor> {
    vec![a, b, c]
}

/// QR's invariants: `Q R`, `Qᵀ Q`, `|R|` (`|R|` alone for mode `r`).
fn post_qr((q, r): (Tensor, Tensor), mode: &str) -> Result<Vec<Tensor>> {
    if mode == "r" {
        return Ok(vec![r.abs()?]);
    }
    Ok(vec![q.matmul(&r)?, q.mT()?.matmul(&q)?, r.abs()?])
}

/// SVD's invariants: `(U S) Vh` (the first `k` columns / rows), `S`, `Uᵀ U`, `Vh Vhᵀ`.
fn post_svd((u, s, vh): (Tensor, Tensor, Tensor)) -> Result<Vec<Tensor>> {
    let k = s.dims()[s.rank() - 1];
    let us = u.narrow(-1, 0, k)?.mul(&s.unsqueeze(-2)?)?;
    let rebuilt = us.matmul(&vh.narrow(-2, 0, k)?)?;
    Ok(vec![rebuilt, s, u.mT()?.matmul(&u)?, vh.matmul(&vh.mT()?)?])
}

/// eigh's invariants: the eigenvalues, `(V L) Vᵀ`, `Vᵀ V`.
fn post_eigh((l, v): (Tensor, Tensor)) -> Result<Vec<Tensor>> {
    let rebuilt = v.mul(&l.unsqueeze(-2)?)?.matmul(&v.mT()?)?;
    Ok(vec![l, rebuilt, v.mT()?.matmul(&v)?])
}

/// Runs the case's op (and its post-processing) on `x`. `None`: no replay for this op.
fn run(case: &Case, x: &[Tensor]) -> Option<Result<Vec<Tensor>>> {
    let a = Args::parse(case.args);
    let one = |r: Result<Tensor>| Some(r.map(|t| vec![t]));
    let x0 = &x[0];
    let only_info = || a.s("only_info") == "1";
    match case.op {
        "det" => one(la::det(x0)),
        "Tensor.det" => one(x0.det()),
        "slogdet" => Some(la::slogdet(x0).map(pair)),
        "logdet" => one(x0.logdet()),
        "inv" => one(la::inv(x0)),
        "Tensor.inverse" => one(x0.inverse()),
        "inv_ex" => {
            Some(la::inv_ex(x0).map(|(inv, info)| if only_info() { vec![info] } else { vec![inv, info] }))
        }
        "solve" => one(la::solve(x0, &x[1], a.b("left"))),
        "solve_ex" => Some(la::solve_ex(x0, &x[1], a.b("left")).map(|(sol, info)| {
            if only_info() {
                vec![info]
            } else {
                vec![sol, info]
            }
        })),
        "solve_triangular" => {
            one(la::solve_triangular(x0, &x[1], a.b("upper"), a.b("left"), a.b("unitriangular")))
        }
        "lstsq" => {
            let driver = a.s("driver");
            let driver = (driver != "none").then_some(driver);
            Some(la::lstsq(x0, &x[1], None, driver).map(|(s, r, k, sv)| vec![s, r, k, sv]))
        }
        "cholesky" => one(la::cholesky(x0, a.b("upper"))),
        "cholesky_ex" => Some(la::cholesky_ex(x0, a.b("upper"), false).map(|(l, info)| {
            if only_info() {
                vec![info]
            } else {
                vec![l, info]
            }
        })),
        "qr" => Some(la::qr(x0, a.s("mode")).and_then(|qr| post_qr(qr, a.s("mode")))),
        "lu" => Some(la::lu(x0).map(triple)),
        "lu_factor" => Some(la::lu_factor(x0).map(pair)),
        "lu_factor_ex" => Some(la::lu_factor_ex(x0).map(triple)),
        "lu_solve" => one(la::lu_solve(x0, &x[1], &x[2], a.b("left"), a.b("adjoint"))),
        "lu_unpack" => Some(x0.lu_unpack(&x[1], true, true).map(triple)),
        "eigh" => Some(la::eigh(x0, a.s("uplo")).and_then(post_eigh)),
        "eigvalsh" => one(la::eigvalsh(x0, a.s("uplo"))),
        "svd" => Some(la::svd(x0, a.b("full_matrices")).and_then(post_svd)),
        "svdvals" => one(la::svdvals(x0)),
        "pinv" => one(la::pinv(x0, a.opt_f("atol"), a.opt_f("rtol"), a.b("hermitian"))),
        "matrix_rank" => one(la::matrix_rank(x0, a.opt_f("atol"), a.opt_f("rtol"), a.b("hermitian"))),
        "pinverse" => one(x0.pinverse(a.f("rcond"))),
        "matrix_norm" => {
            let ord = a.ord("ord").expect("an order");
            let dims = a.opt_dims("dim").expect("dims");
            one(la::matrix_norm(x0, ord, dims, a.b("keepdim"), a.opt_dtype("dtype")))
        }
        "vector_norm" => {
            let dims = a.opt_dims("dim").unwrap_or_default();
            one(la::vector_norm(x0, a.f("ord"), dims, a.b("keepdim"), a.opt_dtype("dtype")))
        }
        "norm" => {
            let dims = a.opt_dims("dim");
            one(la::norm(x0, a.ord("ord"), dims.as_deref(), a.b("keepdim"), None))
        }
        "cond" => one(la::cond(x0, a.ord("p"))),
        "matrix_power" => one(la::matrix_power(x0, a.i("n"))),
        "matrix_exp" => one(la::matrix_exp(x0)),
        "cross" => one(la::cross(x0, &x[1], a.d("dim"))),
        "vecdot" => one(la::vecdot(x0, &x[1], a.d("dim"))),
        "multi_dot" => one(la::multi_dot(&x.iter().collect::<Vec<_>>())),
        "householder_product" => one(la::householder_product(x0, &x[1])),
        "geqrf" => Some(x0.geqrf().map(pair)),
        "tensorinv" => one(la::tensorinv(x0, a.i("ind"))),
        "tensorsolve" => {
            let dims = a.opt_dims("dims");
            one(la::tensorsolve(x0, &x[1], dims.as_deref()))
        }
        "diagonal" => one(la::diagonal(x0, a.d("offset"), a.d("dim1"), a.d("dim2"))),
        "vander" => one(la::vander(x0, a.opt_f("N").map(|n| n as i64))),
        "cholesky_inverse" => one(la::cholesky_inverse(x0, a.b("upper"))),
        "cholesky_solve" => one(la::cholesky_solve(x0, &x[1], a.b("upper"))),
        "ldl_factor" => Some(la::ldl_factor(x0, false).map(pair)),
        "ldl_solve" => one(la::ldl_solve(x0, &x[1], &x[2], false)),
        "bad" => match a.s("which") {
            "inv" => one(la::inv(x0)),
            "det" => one(la::det(x0)),
            "cholesky" => one(la::cholesky(x0, false)),
            "solve" => one(la::solve(x0, &x[1], true)),
            "eigh" => one(la::eigvalsh(x0, "L")),
            "matrix_norm" => one(la::matrix_norm(x0, 3.0, [-2isize, -1], false, None)),
            "svd" => one(la::svdvals(x0)),
            "cross" => one(la::cross(x0, &x[1], -1)),
            _ => None,
        },
        _ => None,
    }
}

/// The relative tolerance of a dtype. float64: 1e-7, far above the rounding of a stable
/// algorithm on these small (n <= 6) matrices (~1e-15 relative) yet tight enough to catch a wrong
/// formula; oxtorch factors in float64 on the host (Jacobi SVD/eigh, not LAPACK's QR iteration),
/// so agreement to ~1e-13 is expected. float32: torch runs LAPACK in single precision (eps
/// 1.2e-7), oxtorch in float64 then rounds, so they differ by ~cond * 1e-7; 1e-3 leaves room for
/// condition numbers up to ~1e3 before the condition scaling below takes over.
fn rtol_of(dtype: &str) -> f64 {
    if dtype == "f32" {
        1e-3
    } else {
        1e-7
    }
}

/// The tolerance's scaling by the condition number `cond` of the case's matrix: results are
/// accurate to about `cond * eps` relative to their magnitude (`cond² * eps` for gradients, which
/// differentiate through an inverse), so the tolerance grows once a small multiple of that (10 for
/// float32, whose error is torch's alone; 100 for float64, where both sides round) exceeds `rtol`.
/// For an exactly singular matrix (`cond` 1e300) only shapes, dtypes, errors, integer outputs and
/// NaN/inf/zero pattern are effectively compared.
fn cond_factor(dtype: &str, cond: f64, gradient: bool) -> f64 {
    let (eps, k) = if dtype == "f32" { (f64::from(f32::EPSILON), 10.0) } else { (f64::EPSILON, 100.0) };
    let c = if gradient { cond * cond } else { cond };
    // Capped so that an exact zero (a singular matrix's determinant) still compares exactly.
    (1.0 + c * eps * k / rtol_of(dtype)).min(1e30)
}

fn preview(v: &[f64]) -> String {
    let head: Vec<String> = v.iter().take(10).map(|x| format!("{x:?}")).collect();
    format!("[{}{}]", head.join(", "), if v.len() > 10 { ", ..." } else { "" })
}

/// Compares one tensor with torch's: dtype, shape, then the values. Floats within
/// `rtol · factor · (|w| + max|want|)` (the magnitude term is the absolute tolerance of an output
/// whose entries cancel, e.g. the off-diagonal of `Qᵀ Q`); integers exactly; NaN and inf as such.
fn compare(got: &Tensor, want: &Out, factor: f64) -> std::result::Result<(), String> {
    if short(got.dtype()) != want.dtype {
        return Err(format!("dtype {} vs torch {}", short(got.dtype()), want.dtype));
    }
    if got.dims() != want.shape {
        return Err(format!("shape {:?} vs torch {:?}", got.dims(), want.shape));
    }
    let vals = got
        .detach()
        .contiguous()
        .and_then(|t| t.to_dtype(DType::F64))
        .and_then(|t| t.to_vec::<f64>())
        .map_err(|e| format!("reading the result failed: {e}"))?;
    let float = want.dtype.starts_with('f');
    let rtol = rtol_of(want.dtype) * factor;
    let mag = want.vals.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (&g, &w)) in vals.iter().zip(want.vals).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || !float {
            g == w
        } else {
            (g - w).abs() <= rtol * (w.abs() + mag)
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

fn compare_all(got: &[Tensor], want: &[Out], factor: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} outputs vs torch {}", got.len(), want.len()));
    }
    got.iter()
        .zip(want)
        .enumerate()
        .find_map(|(k, (g, w))| compare(g, w, factor).err().map(|e| format!("{k}: {e}")))
}

fn describe(case: &Case) -> String {
    let ins: Vec<String> = case
        .inputs
        .iter()
        .map(|i| format!("{}{:?}{}", i.dtype, i.base, if i.layout.is_empty() { "" } else { "ᵀ" }))
        .collect();
    format!("#{} {}({}) [{}] cond {:.1e}", case.id, case.op, case.args, ins.join(", "), case.cond)
}

/// torch's message must appear in oxtorch's (only its first line is recorded).
fn same_message(ours: &str, torch: &str) -> Option<String> {
    (!ours.contains(torch)).then(|| format!("message differs:\n    oxtorch: {ours}\n    torch:   {torch}"))
}

/// `grad(outs[gidx], floats, gouts)`, zeros for the inputs the outputs do not use.
fn grads_of(case: &Case, leaves: &[Tensor], floats: &[Tensor]) -> Result<Vec<Tensor>> {
    let outs = run(case, leaves).expect("a replay")?;
    let sel: Vec<Tensor> = case.gidx.iter().map(|&k| outs[k].clone()).collect();
    let gouts = case.gouts.iter().map(from_out).collect::<Result<Vec<_>>>()?;
    let grads = oxtorch_tensor::grad(&sel, floats, Some(gouts.as_slice()), false, false, true)?;
    grads
        .into_iter()
        .zip(floats)
        .map(|(g, f)| match g {
            Some(g) => Ok(g),
            None => f.zeros_like(),
        })
        .collect()
}

/// The gradient case: `grad(outs[gidx], float inputs, gouts)` against torch's.
fn check_grads(case: &Case, inputs: &[Tensor]) -> Option<String> {
    let leaves = match inputs
        .iter()
        .map(|t| if t.dtype().is_float() { t.detach().requires_grad_(true) } else { Ok(t.clone()) })
        .collect::<Result<Vec<_>>>()
    {
        Ok(v) => v,
        Err(e) => return Some(format!("making the leaves failed: {e}")),
    };
    let floats: Vec<Tensor> = leaves.iter().filter(|t| t.dtype().is_float()).cloned().collect();
    let result = grads_of(case, &leaves, &floats);
    let factor = cond_factor("f64", case.cond, true);
    match (result, case.grads) {
        (Err(_), Err(_)) => None,
        (Ok(_), Err(m)) => Some(format!("gradient: torch raised ({m}), oxtorch returned")),
        (Err(e), Ok(_)) => Some(format!("gradient: oxtorch raised: {e}")),
        (Ok(got), Ok(want)) => compare_all(&got, want, factor).map(|e| format!("gradient {e}")),
    }
}

/// Replays one case; `None` when it matches torch.
fn check(case: &Case) -> Option<String> {
    let inputs = match case.inputs.iter().map(build).collect::<Result<Vec<_>>>() {
        Ok(v) => v,
        Err(e) => return Some(format!("building the inputs failed: {e}")),
    };
    let Some(result) = run(case, &inputs) else {
        return Some("no replay for this op".to_string());
    };
    let dtype = case.inputs.iter().find(|i| i.dtype.starts_with('f')).map_or("f64", |i| i.dtype);
    let factor = cond_factor(dtype, case.cond, false);
    match (result, case.outputs) {
        (Err(e), Err(m)) => same_message(&e.to_string(), m),
        (Ok(got), Err(m)) => {
            let shapes: Vec<_> = got.iter().map(|t| (short(t.dtype()), t.dims().to_vec())).collect();
            Some(format!("torch raised ({m}), oxtorch returned {shapes:?}"))
        }
        (Err(e), Ok(_)) => Some(format!("oxtorch raised: {e}")),
        (Ok(got), Ok(want)) => compare_all(&got, want, factor).map(|e| format!("output {e}")).or_else(|| {
            if case.gidx.is_empty() {
                None
            } else {
                check_grads(case, &inputs)
            }
        }),
    }
}

#[test]
fn random_linalg_cases_match_torch() {
    let mut failures = Vec::new();
    for case in CASES {
        match quietly(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case)))) {
            Ok(None) => {}
            Ok(Some(msg)) => failures.push(format!("{}: {msg}", describe(case))),
            Err(p) => failures.push(format!("{}: PANIC {}", describe(case), panic_message(&*p))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from torch:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
