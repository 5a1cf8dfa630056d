//! The torch.special functions of special_ops.rs against torch (special_functions_golden.rs, from
//! make_special_functions_golden.py): values in float32 and float64 at special points (0, ±0, poles,
//! branch boundaries of the kernels, large arguments, ±inf, NaN), the polynomials over a grid of
//! degrees (negative, fractional, NaN, past Hermite's limits), gradients, and torch's refusals.

use oxtorch_tensor::{DType, Result, Tensor};

use crate::special_functions_golden::{BINARY, GRADS, POLY_INT_N, UNARY};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("unknown dtype {other}"),
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

/// Relative comparison (NaN where NaN, infinities equal), with each dtype's tolerance.
fn close(what: &str, dtype: DType, got: &[f64], want: &[f64]) {
    let (rtol, atol) = if dtype == DType::F64 { (1e-12, 1e-300) } else { (1e-5, 1e-35) };
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= rtol * w.abs() + atol
        };
        assert!(ok, "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

fn unary(name: &str, x: &Tensor) -> Result<Tensor> {
    match name {
        "erfcx" => x.special_erfcx(),
        "log_ndtr" => x.special_log_ndtr(),
        "ndtri" => x.special_ndtri(),
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
        other => panic!("unknown function {other}"),
    }
}

fn binary(name: &str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    match name {
        "zeta" => a.special_zeta(b),
        "gammainc" => a.special_gammainc(b),
        "gammaincc" => a.special_gammaincc(b),
        "chebyshev_polynomial_t" => a.special_chebyshev_polynomial_t(b),
        "chebyshev_polynomial_u" => a.special_chebyshev_polynomial_u(b),
        "chebyshev_polynomial_v" => a.special_chebyshev_polynomial_v(b),
        "chebyshev_polynomial_w" => a.special_chebyshev_polynomial_w(b),
        "shifted_chebyshev_polynomial_t" => a.special_shifted_chebyshev_polynomial_t(b),
        "shifted_chebyshev_polynomial_u" => a.special_shifted_chebyshev_polynomial_u(b),
        "shifted_chebyshev_polynomial_v" => a.special_shifted_chebyshev_polynomial_v(b),
        "shifted_chebyshev_polynomial_w" => a.special_shifted_chebyshev_polynomial_w(b),
        "hermite_polynomial_h" => a.special_hermite_polynomial_h(b),
        "hermite_polynomial_he" => a.special_hermite_polynomial_he(b),
        "laguerre_polynomial_l" => a.special_laguerre_polynomial_l(b),
        "legendre_polynomial_p" => a.special_legendre_polynomial_p(b),
        other => panic!("unknown function {other}"),
    }
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unary_special_functions_match_torch() -> Result<()> {
    for &(name, dt, x, want) in UNARY {
        let dtype = dtype_of(dt);
        let x = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype)?;
        let y = unary(name, &x)?;
        assert_eq!(y.dtype(), dtype, "{name} {dt}");
        close(&format!("{name} {dt}"), dtype, &values(&y)?, want);
    }
    Ok(())
}

#[test]
fn binary_special_functions_and_polynomials_match_torch() -> Result<()> {
    for &(name, dt, a, b, want) in BINARY {
        let dtype = dtype_of(dt);
        let a = Tensor::from_slice(a, [a.len()])?.to_dtype(dtype)?;
        let b = Tensor::from_slice(b, [b.len()])?.to_dtype(dtype)?;
        let y = binary(name, &a, &b)?;
        assert_eq!(y.dtype(), dtype, "{name} {dt}");
        close(&format!("{name} {dt}"), dtype, &values(&y)?, want);
    }
    Ok(())
}

#[test]
fn polynomials_take_an_integer_degree() -> Result<()> {
    for &(name, x, n, want) in POLY_INT_N {
        let x = Tensor::from_slice(x, [x.len()])?.to_dtype(DType::F32)?;
        let y = match name {
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
            other => panic!("unknown function {other}"),
        }?;
        assert_eq!(y.dtype(), DType::F32, "{name}");
        close(&format!("{name} n={n}"), DType::F32, &values(&y)?, want);
    }
    // An integer x promotes to the default float dtype.
    let y = Tensor::from_slice(&[0i64, 1, 2], [3])?.special_legendre_polynomial_p(2)?;
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(values(&y)?, vec![-0.5, 1.0, 5.5]);
    Ok(())
}

#[test]
fn gradients_match_torch() -> Result<()> {
    for &(name, x, want) in GRADS {
        let xt = Tensor::from_slice(x, [x.len()])?.requires_grad_(true)?;
        unary(name, &xt)?.sum_all()?.backward()?;
        let g = values(&xt.grad().expect("a gradient"))?;
        assert_eq!(g.len(), want.len());
        for (i, (&g, &w)) in g.iter().zip(want).enumerate() {
            let ok = if w.is_nan() {
                g.is_nan()
            } else if w.is_infinite() {
                g == w
            } else {
                (g - w).abs() <= 1e-10 * w.abs() + 1e-300
            };
            assert!(ok, "{name} grad[{i}]: got {g:e}, torch {w:e}");
        }
    }
    Ok(())
}

#[test]
fn refusals_and_non_differentiable_inputs_follow_torch() -> Result<()> {
    let h = Tensor::from_slice(&[0.5f32], [1])?.to_dtype(DType::F16)?;
    let b = h.to_dtype(DType::BF16)?;
    assert_eq!(err(h.special_erfcx()), "\"erfcx_cpu\" not implemented for 'Half'");
    assert_eq!(err(b.special_bessel_j0()), "\"bessel_j0_cpu\" not implemented for 'BFloat16'");
    assert_eq!(err(h.special_airy_ai()), "\"airy_ai_cpu\" not implemented for 'Half'");
    assert_eq!(err(h.special_zeta(&h)), "\"zeta_cpu\" not implemented for 'Half'");
    assert_eq!(
        err(h.special_hermite_polynomial_h(&h)),
        "\"hermite_polynomial_h_cpu\" not implemented for 'Half'"
    );
    let i = Tensor::from_slice(&[1i64, 2], [2])?;
    assert_eq!(err(i.special_gammainc(&i)), "\"igamma_cpu\" not implemented for 'Long'");
    assert_eq!(err(i.special_gammaincc(&i)), "\"igammac_cpu\" not implemented for 'Long'");
    // Integers promote to the default float dtype.
    assert_eq!(i.special_ndtri()?.dtype(), DType::F32);
    assert_eq!(i.special_zeta(&i)?.dtype(), DType::F32);
    // gammainc computes half types in float32 and rounds.
    let a = Tensor::from_slice(&[0.5f32, 2.0, 7.0], [3])?;
    let x = Tensor::from_slice(&[0.3f32, 1.05, 9.0], [3])?;
    let (a, x) = (a.to_dtype(DType::F16)?, x.to_dtype(DType::F16)?);
    let full = a.to_dtype(DType::F32)?.special_gammainc(&x.to_dtype(DType::F32)?)?;
    let half = a.special_gammainc(&x)?;
    assert_eq!(half.dtype(), DType::F16);
    assert_eq!(values(&half)?, values(&full.to_dtype(DType::F16)?)?);
    // Only the second input is differentiable for zeta and the incomplete gamma functions.
    let s = Tensor::from_slice(&[2.0f64, 3.0], [2])?.requires_grad_(true)?;
    let q = Tensor::from_slice(&[1.5f64, 2.5], [2])?;
    let msg = err(s.special_zeta(&q)?.sum_all()?.backward());
    assert!(msg.contains("the derivative for 'zeta' is not implemented."), "{msg}");
    let msg = err(s.special_gammainc(&q)?.sum_all()?.backward());
    assert!(msg.contains("the derivative for 'igamma: input' is not implemented."), "{msg}");
    let msg = err(s.special_gammaincc(&q)?.sum_all()?.backward());
    assert!(msg.contains("the derivative for 'igammac: input' is not implemented."), "{msg}");
    // zeta of a number and a tensor
    let z = Tensor::special_zeta_scalar(2.0, &Tensor::from_slice(&[1.0f64], [1])?)?;
    assert!((values(&z)?[0] - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-15);
    // The functions torch does not differentiate return tensors without history.
    for y in [
        s.special_airy_ai()?,
        s.special_spherical_bessel_j0()?,
        s.special_scaled_modified_bessel_k0()?,
        s.special_scaled_modified_bessel_k1()?,
        s.special_chebyshev_polynomial_t(3)?,
        s.special_hermite_polynomial_he(&q)?,
    ] {
        assert!(!y.requires_grad());
    }
    Ok(())
}
