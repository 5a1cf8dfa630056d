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

/// The dyadic `n × n` matrix `((7i + 3j + 1) mod 11 - 5) / 8 · 2^e` (exact in f32 and f64; the
/// 4 × 4 one has 1-norm 1.625 · 2^e).
fn matrix_exp_input(n: usize, e: i32, dtype: DType) -> Tensor {
    let v: Vec<f64> = (0..n * n)
        .map(|k| (((7 * (k / n) + 3 * (k % n) + 1) % 11) as f64 - 5.0) / 8.0 * 2f64.powi(e))
        .collect();
    Tensor::from_vec(v, [n, n]).unwrap().to_dtype(dtype).unwrap()
}

/// The largest difference from `want`, relative to the largest `|want|`.
fn relative_error(got: &Tensor, want: &[f64]) -> f64 {
    let got = got.to_f64_vec().unwrap();
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    got.iter().zip(want).fold(0.0f64, |m, (g, w)| m.max((g - w).abs())) / scale
}

// torch 2.15 (`B = matrix_exp_input(4, 0)` above, as a float64 tensor):
//   for dt, es in [(torch.float64, [-53, -26, -13, -6, -3, -1, 1, 3]),
//                  (torch.float32, [-24, -12, -5, -2, -1, 0, 2, 4])]:
//       for e in es: torch.linalg.matrix_exp((B * 2.0**e).to(dt)).flatten().tolist()
// The exponents put the 1-norm 1.625 · 2^e in each of torch's degree bands (1, 2, 4, 8, 12, 18
// unscaled) and then two scaled-and-squared ones (θ₁₈ · (2, 4] and θ₁₈ · (8, 16]).
#[rustfmt::skip]
const MATRIX_EXP_BANDS_F64: &[(i32, &[f64])] = &[
    (-53, &[
        1.0, -1.3877787807814457e-17, 2.7755575615628914e-17, 6.938893903907228e-17,
        4.163336342344337e-17, 0.9999999999999999, -2.7755575615628914e-17, 1.3877787807814457e-17,
        -1.3877787807814457e-17, 2.7755575615628914e-17, 1.0, -4.163336342344337e-17,
        -6.938893903907228e-17, -2.7755575615628914e-17, 1.3877787807814457e-17, 1.0,
    ]),
    (-26, &[
        0.9999999925494194, -1.8626451440267866e-09, 3.725290314074425e-09, 9.31322573401172e-09,
        5.587935395651167e-09, 0.9999999906867743, -3.7252902863188497e-09, 1.8626451839254266e-09,
        -1.8626451145364875e-09, 3.725290310604978e-09, 1.0000000093132257, -5.587935499734575e-09,
        -9.31322575829785e-09, -3.7252902828494028e-09, 1.8626451544351275e-09, 1.0000000074505806,
    ]),
    (-13, &[
        0.9999389632139893, -1.5258439798178819e-05, 3.0518625865264957e-05, 7.629313033300866e-05,
        4.577287476396431e-05, 0.9999237079172877, -3.051676323965558e-05, 1.526111732452771e-05,
        -1.525646071165445e-05, 3.051839305416122e-05, 1.0000762958080027, -4.57798596832742e-05,
        -7.629476014751431e-05, -3.0516530389471994e-05, 1.5259138290109806e-05, 1.0000610335263815,
    ]),
    (-6, &[
        0.9921609103224324, -0.0019473644558683722, 0.003923421115837081, 0.00975212205631478,
        0.005802230252491213, 0.990264798443139, -0.00389294449651799, 0.0019911788647029942,
        -0.0019148848708829785, 0.003919647394354996, 1.0097962371921128, -0.005916671243221237,
        -0.009778824954151786, -0.0038890888186180737, 0.001958808554941375, 1.0077856843220891,
    ]),
    (-3, &[
        0.9358496939040793, -0.01523906720546735, 0.032351226410973585, 0.07719291967084185,
        0.0432515335461003, 0.9237807713604287, -0.030419003167167613, 0.018018823675494147,
        -0.013135812196642366, 0.03212805718476574, 1.0801274408925272, -0.050576050764377975,
        -0.07890197368843997, -0.03015387124549029, 0.01597151892729512, 1.0607340011305986,
    ]),
    (-1, &[
        0.7265616016196002, -0.05537771016670346, 0.14275843849808265, 0.29386727339387136,
        0.13135893001321747, 0.7158935777931879, -0.11283091411366392, 0.09853845427264882,
        -0.020361376031360928, 0.14019289149811467, 1.3471097849105376, -0.24862454737514927,
        -0.3212292507783221, -0.10757875328950314, 0.06710427190289665, 1.2191761437221935,
    ]),
    (1, &[
        -0.15741996482421544, -0.07649063565743634, 0.8017331860053759, 0.7226794122032694,
        -0.0320046013501214, 0.10227348164718753, -0.38114614452134704, 0.6901076128722611,
        0.5779145127946003, 0.8249538885047484, 3.030901755429709, -1.8700285871501698,
        -1.1664871561866703, -0.23112322945528885, 0.26669395450746547, 1.3885620134008225,
    ]),
    (3, &[
        10.09496155103639, 7.1259067422453946, 20.691914954313287, -17.573137132310723,
        -5.30997813511687, -3.4376572530859137, -10.690758276548014, 8.157410026488979,
        38.60517873464691, 27.057664342945575, 82.22952046895894, -64.83390500658692,
        1.2062310659131668, 0.3512499881978422, -0.11151842807501275, -1.4469814768671025,
    ]),
];
#[rustfmt::skip]
const MATRIX_EXP_BANDS_F32: &[(i32, &[f64])] = &[
    (-24, &[
        1.0, -7.450580596923828e-09, 1.4901161193847656e-08, 3.725290298461914e-08,
        2.2351741790771484e-08, 0.9999999403953552, -1.4901161193847656e-08, 7.450580596923828e-09,
        -7.450580596923828e-09, 1.4901161193847656e-08, 1.0, -2.2351741790771484e-08,
        -3.725290298461914e-08, -1.4901161193847656e-08, 7.450580596923828e-09, 1.0,
    ]),
    (-12, &[
        0.9998779296875, -3.0516181141138077e-05, 6.103934720158577e-05, 0.00015258463099598885,
        9.153876453638077e-05, 0.999847412109375, -6.1031896620988846e-05, 3.0526891350746155e-05,
        -3.0508264899253845e-05, 6.103841587901115e-05, 1.000152587890625, -9.156670421361923e-05,
        -0.00015259115025401115, -6.103096529841423e-05, 3.051897510886192e-05, 1.0001220703125,
    ]),
    (-5, &[
        0.9842690825462341, -0.003883053781464696, 0.007881204597651958, 0.0194766316562891,
        0.011490473523736, 0.9805900454521179, -0.007759461645036936, 0.004058093298226595,
        -0.0037529165856540203, 0.007866273634135723, 1.0196540355682373, -0.011948238126933575,
        -0.0195834431797266, -0.007743875030428171, 0.00392883038148284, 1.015517234802246,
    ]),
    (-2, &[
        0.8686398863792419, -0.029627317562699318, 0.06691577285528183, 0.15221133828163147,
        0.07940972596406937, 0.8511911630630493, -0.05926986038684845, 0.04063580557703972,
        -0.02110135741531849, 0.06610692292451859, 1.1644651889801025, -0.10871139913797379,
        -0.159048393368721, -0.05812527611851692, 0.03255748748779297, 1.1177148818969727,
    ]),
    (-1, &[
        0.7265615463256836, -0.05537771061062813, 0.14275842905044556, 0.2938672602176666,
        0.13135892152786255, 0.7158936858177185, -0.11283092200756073, 0.09853845834732056,
        -0.020361382514238358, 0.1401928961277008, 1.3471095561981201, -0.2486245185136795,
        -0.3212292492389679, -0.10757874697446823, 0.0671042650938034, 1.2191760540008545,
    ]),
    (0, &[
        0.4233119487762451, -0.09148002415895462, 0.3220021724700928, 0.5308386087417603,
        0.16012325882911682, 0.47881051898002625, -0.20740561187267303, 0.2573334276676178,
        0.05605822801589966, 0.3170926868915558, 1.7792961597442627, -0.630210816860199,
        -0.6405256986618042, -0.18097592890262604, 0.1384887993335724, 1.3647074699401855,
    ]),
    (2, &[
        -0.352434366941452, 0.4985831081867218, 2.5256543159484863, -0.6623294353485107,
        -1.0235068798065186, -0.4610200822353363, -1.0358093976974487, 1.7184624671936035,
        3.815589427947998, 2.9727272987365723, 8.836544036865234, -7.277570724487305,
        -1.274588942527771, -0.03533121943473816, 0.33152487874031067, 0.426883339881897,
    ]),
    (4, &[
        841.687744140625, 601.1415405273438, 1836.1480712890625, -1435.3807373046875,
        -438.2291259765625, -312.4225769042969, -953.1278686523438, 746.590576171875,
        3342.322509765625, 2384.2470703125, 7278.4677734375, -5695.13916015625,
        4.261167049407959, 3.8623504638671875, 12.195416450500488, -9.008090019226074,
    ]),
];
#[rustfmt::skip]
const MATRIX_EXP_BATCH: &[f64] = &[
    0.9999389632139891, -1.5258439798178817e-05, 3.0518625865264957e-05, 7.629313033300866e-05,
    4.577287476396432e-05, 0.9999237079172876, -3.0516763239655576e-05, 1.526111732452771e-05,
    -1.5256460711654449e-05, 3.051839305416122e-05, 1.0000762958080027, -4.5779859683274204e-05,
    -7.629476014751431e-05, -3.051653038947199e-05, 1.5259138290109806e-05, 1.0000610335263818,
    -0.3524339111675958, 0.498583099281649, 2.5256540520650144, -0.6623297350736015,
    -1.023506614006788, -0.46101997682072404, -1.035809284416271, 1.7184620443183012,
    3.815588837320681, 2.9727270929899143, 8.836545381687886, -7.277569708451681,
    -1.2745880735000417, -0.035331155327474606, 0.33152453296419787, 0.42688299357629544,
];

/// A single matrix with its 1-norm in each of torch's degree bands, float64 and float32: torch's
/// values (float64 within 1e-14 of the largest entry, 3e-14 after four squarings; float32 within
/// 1e-6, 1e-5 once squared).
#[test]
fn matrix_exp_in_each_degree_band_is_torchs() -> Result<()> {
    for (dtype, cases, tols) in [
        (DType::F64, MATRIX_EXP_BANDS_F64, [1e-14, 1e-14, 3e-14]),
        (DType::F32, MATRIX_EXP_BANDS_F32, [1e-6, 1e-5, 1e-5]),
    ] {
        for (k, &(e, want)) in cases.iter().enumerate() {
            let got = la::matrix_exp(&matrix_exp_input(4, e, dtype))?;
            assert_eq!(got.dtype(), dtype);
            assert_eq!(got.dims(), &[4, 4]);
            let tol = tols[k.saturating_sub(5).min(2)];
            let err = relative_error(&got, want);
            assert!(err <= tol, "{dtype:?} 2^{e}: relative error {err:e} > {tol:e}");
        }
    }
    Ok(())
}

/// torch 2.15: a batch of several matrices is scaled and squared with degree 18 throughout (also
/// its small-norm matrix): `torch.linalg.matrix_exp(torch.stack([B * 2.0**-13, B * 2.0**2]))`.
#[test]
fn matrix_exp_of_a_batch_is_torchs() -> Result<()> {
    let a = Tensor::stack(&[&matrix_exp_input(4, -13, DType::F64), &matrix_exp_input(4, 2, DType::F64)], 0)?;
    let got = la::matrix_exp(&a)?;
    assert_eq!(got.dims(), &[2, 4, 4]);
    let err = relative_error(&got.select(0, 0)?, &MATRIX_EXP_BATCH[..16]);
    assert!(err <= 1e-14, "small-norm matrix: relative error {err:e}");
    let err = relative_error(&got.select(0, 1)?, &MATRIX_EXP_BATCH[16..]);
    assert!(err <= 1e-14, "large-norm matrix: relative error {err:e}");
    Ok(())
}

/// torch 2.15, a 64 × 64 float64 matrix of 1-norm 5.5 (three squarings):
/// `E = torch.linalg.matrix_exp(B64 * 2.0**-2)` with `B64 = matrix_exp_input(64, 0)`;
/// `E.abs().max()` is 1.3858938850321496.
#[test]
fn matrix_exp_of_a_64x64_matrix_is_torchs() -> Result<()> {
    let e = la::matrix_exp(&matrix_exp_input(64, -2, DType::F64))?;
    let v = e.to_f64_vec()?;
    let largest = 1.3858938850321496;
    assert!((v.iter().fold(0.0f64, |m, x| m.max(x.abs())) - largest).abs() <= 1e-14 * largest);
    for (i, j, want) in [
        (0, 0, 0.8684615512405415),
        (5, 17, 0.11417113889522873),
        (31, 40, 0.18713815706441717),
        (63, 63, 0.9000483215702872),
        (40, 3, -0.1641295924983485),
    ] {
        let got = v[i * 64 + j];
        assert!((got - want).abs() <= 1e-14 * largest, "E[{i}, {j}] = {got}, torch {want}");
    }
    Ok(())
}
