//! A seeded randomized differential test (seed 34) of the special functions (torch.special.* and
//! the math ops built on them) against torch (special_fuzz_golden.rs, from
//! make_special_fuzz_golden.py): wide input ranges (tiny, around 0 and negative, poles, large,
//! ±inf, NaN, -0.0), float32/float64 with some float16/bfloat16 and integer inputs, result dtypes,
//! float64 gradients and torch's refusals (with its message). All mismatches are collected and
//! reported at the end.
//!
//! A value matches when `|got - want| <= rtol·|want| + atol + slack`, where `slack` is the error a
//! backward-stable algorithm may make (4 eps · the function's condition, see the generator), or
//! when it is that close to the mpmath value (there torch's own algorithm is the less accurate
//! one). NaN must match NaN and ±inf must match exactly.

use oxtorch_tensor::{DType, Result, Tensor};

use crate::common::{panic_message, quietly};
use crate::special_fuzz_golden::{Case, CASES};

fn dtype_of(name: &str) -> DType {
    match name {
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn short(dtype: DType) -> String {
    match dtype {
        DType::F16 => "f16".to_string(),
        DType::BF16 => "bf16".to_string(),
        DType::F32 => "f32".to_string(),
        DType::F64 => "f64".to_string(),
        DType::I32 => "i32".to_string(),
        DType::I64 => "i64".to_string(),
        DType::Bool => "bool".to_string(),
        other => format!("{other:?}"),
    }
}

fn input(vals: &[f64], dtype: &str) -> Result<Tensor> {
    Tensor::from_slice(vals, [vals.len()])?.to_dtype(dtype_of(dtype))
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.contiguous()?.to_dtype(DType::F64)?.to_vec::<f64>()
}

/// Runs the case's function on `x` (and `y`).
fn run(case: &Case, x: &Tensor, y: Option<&Tensor>) -> Result<Tensor> {
    let second = || y.expect("a second input");
    let p = case.param;
    match case.kind {
        "b" => match case.func {
            "zeta" => x.special_zeta(second()),
            "gammainc" => x.special_gammainc(second()),
            "gammaincc" => x.special_gammaincc(second()),
            "xlogy" => x.xlogy(second()),
            "xlog1py" => x.xlog1py(second()),
            other => panic!("unknown binary function {other}"),
        },
        "poly" => poly(case.func, x, second()),
        "polyi" => polyi(case.func, x, p as i64),
        _ => match case.func {
            "lgamma" | "gammaln" => x.lgamma(),
            "digamma" => x.digamma(),
            "polygamma" => x.polygamma(p as i64),
            "multigammaln" => x.mvlgamma(p as i64),
            "erf" => x.erf(),
            "erfc" => x.erfc(),
            "erfinv" => x.erfinv(),
            "erfcx" => x.special_erfcx(),
            "ndtr" => x.ndtr(),
            "ndtri" => x.special_ndtri(),
            "log_ndtr" => x.special_log_ndtr(),
            "i0" => x.i0(),
            "i0e" => x.i0e(),
            "i1" => x.i1(),
            "i1e" => x.i1e(),
            "bessel_j0" => x.special_bessel_j0(),
            "bessel_j1" => x.special_bessel_j1(),
            "bessel_y0" => x.special_bessel_y0(),
            "bessel_y1" => x.special_bessel_y1(),
            "modified_bessel_i0" => x.special_modified_bessel_i0(),
            "modified_bessel_i1" => x.special_modified_bessel_i1(),
            "modified_bessel_k0" => x.special_modified_bessel_k0(),
            "modified_bessel_k1" => x.special_modified_bessel_k1(),
            "scaled_modified_bessel_k0" => x.special_scaled_modified_bessel_k0(),
            "scaled_modified_bessel_k1" => x.special_scaled_modified_bessel_k1(),
            "spherical_bessel_j0" => x.special_spherical_bessel_j0(),
            "airy_ai" => x.special_airy_ai(),
            "entr" => x.entr(),
            "sinc" => x.sinc(),
            "logit" => x.logit((!p.is_nan()).then_some(p)),
            "expit" => x.sigmoid(),
            "log1p" => x.log1p(),
            "expm1" => x.expm1(),
            "exp2" => x.exp2(),
            "logsumexp" => x.logsumexp(0isize, false),
            "softmax" => x.softmax(0, (p == 1.0).then_some(DType::F64)),
            "log_softmax" => x.log_softmax(0, (p == 1.0).then_some(DType::F64)),
            other => panic!("unknown unary function {other}"),
        },
    }
}

fn poly(name: &str, x: &Tensor, n: &Tensor) -> Result<Tensor> {
    match name {
        "chebyshev_polynomial_t" => x.special_chebyshev_polynomial_t(n),
        "chebyshev_polynomial_u" => x.special_chebyshev_polynomial_u(n),
        "chebyshev_polynomial_v" => x.special_chebyshev_polynomial_v(n),
        "chebyshev_polynomial_w" => x.special_chebyshev_polynomial_w(n),
        "shifted_chebyshev_polynomial_t" => x.special_shifted_chebyshev_polynomial_t(n),
        "shifted_chebyshev_polynomial_u" => x.special_shifted_chebyshev_polynomial_u(n),
        "shifted_chebyshev_polynomial_v" => x.special_shifted_chebyshev_polynomial_v(n),
        "shifted_chebyshev_polynomial_w" => x.special_shifted_chebyshev_polynomial_w(n),
        "hermite_polynomial_h" => x.special_hermite_polynomial_h(n),
        "hermite_polynomial_he" => x.special_hermite_polynomial_he(n),
        "laguerre_polynomial_l" => x.special_laguerre_polynomial_l(n),
        "legendre_polynomial_p" => x.special_legendre_polynomial_p(n),
        other => panic!("unknown polynomial {other}"),
    }
}

fn polyi(name: &str, x: &Tensor, n: i64) -> Result<Tensor> {
    match name {
        "chebyshev_polynomial_t" => x.special_chebyshev_polynomial_t(n),
        "chebyshev_polynomial_u" => x.special_chebyshev_polynomial_u(n),
        "chebyshev_polynomial_v" => x.special_chebyshev_polynomial_v(n),
        "chebyshev_polynomial_w" => x.special_chebyshev_polynomial_w(n),
        "shifted_chebyshev_polynomial_t" => x.special_shifted_chebyshev_polynomial_t(n),
        "shifted_chebyshev_polynomial_u" => x.special_shifted_chebyshev_polynomial_u(n),
        "shifted_chebyshev_polynomial_v" => x.special_shifted_chebyshev_polynomial_v(n),
        "shifted_chebyshev_polynomial_w" => x.special_shifted_chebyshev_polynomial_w(n),
        "hermite_polynomial_h" => x.special_hermite_polynomial_h(n),
        "hermite_polynomial_he" => x.special_hermite_polynomial_he(n),
        "laguerre_polynomial_l" => x.special_laguerre_polynomial_l(n),
        "legendre_polynomial_p" => x.special_legendre_polynomial_p(n),
        other => panic!("unknown polynomial {other}"),
    }
}

/// Whether `g` matches `w` within `rtol·|w| + atol + slack` (NaN for NaN, infinities exactly).
fn within(g: f64, w: f64, rtol: f64, atol: f64, slack: f64) -> bool {
    if w.is_nan() {
        g.is_nan()
    } else if w.is_infinite() {
        g == w
    } else {
        (g - w).abs() <= rtol * w.abs() + atol + slack
    }
}

/// Compares values; `Err` names the first element that matches neither torch nor the truth.
fn compare(
    case: &Case,
    got: &[f64],
    want: &[f64],
    slack: &[f64],
    truth: &[f64],
    rtol: f64,
) -> std::result::Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values vs torch {}", got.len(), want.len()));
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let s = slack.get(i).copied().unwrap_or(0.0);
        let t = truth.get(i).copied().unwrap_or(f64::NAN);
        let near_truth = w.is_finite() && t.is_finite() && within(g, t, rtol, case.atol, s);
        let ok = within(g, w, rtol, case.atol, s) || near_truth;
        if !ok {
            let xi = case.x.get(i).map_or(String::new(), |v| format!("x={v:e}"));
            let yi = case.y.get(i).map_or(String::new(), |v| format!(" y={v:e}"));
            return Err(format!(
                "[{i}] {xi}{yi}: got {g:e}, torch {w:e} (mpmath {t:e}, allowed {:e})",
                rtol * w.abs() + case.atol + s
            ));
        }
    }
    Ok(())
}

/// The gradient of `sum(f(x))` with respect to `x`.
fn gradient(case: &Case, x: &Tensor, y: Option<&Tensor>) -> Result<Vec<f64>> {
    let xt = x.requires_grad_(true)?;
    run(case, &xt, y)?.sum_all()?.backward()?;
    match xt.grad() {
        Some(g) => values(&g),
        None => Err(oxtorch_tensor::Error::msg("no gradient")),
    }
}

fn describe(case: &Case) -> String {
    let param = if case.param.is_nan() { String::new() } else { format!(" param={}", case.param) };
    format!("#{} {} {} [{}]{param}", case.id, case.func, case.kind, case.dtype)
}

/// Replays one case; `None` when it matches torch.
fn check(case: &Case) -> Option<String> {
    let x = match input(case.x, case.dtype) {
        Ok(t) => t,
        Err(e) => return Some(format!("building x failed: {e}")),
    };
    let y = if case.y.is_empty() {
        None
    } else {
        match input(case.y, case.dtype) {
            Ok(t) => Some(t),
            Err(e) => return Some(format!("building y failed: {e}")),
        }
    };
    let result = run(case, &x, y.as_ref());
    let value_err = match (result, case.want) {
        (Err(e), None) => {
            let msg = e.to_string();
            return (!msg.contains(case.error)).then(|| format!("error {msg:?}, torch {:?}", case.error));
        }
        (Ok(t), None) => {
            return Some(format!("torch raised, oxtorch returned a {} tensor", short(t.dtype())))
        }
        (Err(e), Some(_)) => return Some(format!("oxtorch raised: {e}")),
        (Ok(t), Some(want)) => {
            if short(t.dtype()) != case.out_dtype {
                return Some(format!("result dtype {} vs torch {}", short(t.dtype()), case.out_dtype));
            }
            match values(&t) {
                Ok(got) => compare(case, &got, want, case.slack, case.truth, case.rtol).err(),
                Err(e) => Some(format!("reading the result failed: {e}")),
            }
        }
    };
    if let Some(m) = value_err {
        return Some(format!("value {m}"));
    }
    if case.grad.is_empty() {
        return None;
    }
    match gradient(case, &x, y.as_ref()) {
        Err(e) => Some(format!("gradient failed: {e}")),
        Ok(g) => {
            compare(case, &g, case.grad, case.grad_slack, &[], 1e-9).err().map(|m| format!("gradient {m}"))
        }
    }
}

#[test]
fn special_functions_match_torch_on_random_wide_inputs() {
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
        "{} of {} special-function cases differ from torch:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
