//! Tier-3 composites against torch (tier3_golden.rs, from make_tier3_golden.py): i0, i0e, i1, i1e
//! (both Chebyshev branches, 0, ±inf, NaN, empty, int64 promotion, float64 gradients), ldexp and
//! the window functions (lengths 0, 1 and more, periodic and symmetric, float32 and float64).

use oxtorch_tensor::{DType, Result, Tensor};

use crate::tier3_golden::{GRADS, LDEXP, UNARY, UNARY_INT, WINDOWS};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("unknown dtype {other}"),
    }
}

/// Float64 1e-14 relative (torch's kernels may fuse multiply-adds), float32 some 16 ulps.
fn rtol(dtype: DType) -> f64 {
    if dtype == DType::F64 {
        1e-14
    } else {
        2e-6
    }
}

/// Checks `got` against `want` elementwise: NaN where NaN, equal infinities, equal signs of
/// zero, else within `rtol` relative (and a tiny absolute floor).
fn check(what: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || w == 0.0 {
            g == w && g.is_sign_negative() == w.is_sign_negative()
        } else {
            (g - w).abs() <= rtol * w.abs() + 1e-300
        };
        assert!(ok, "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

fn bessel(op: &str, x: &Tensor) -> Result<Tensor> {
    match op {
        "i0" => x.i0(),
        "i0e" => x.i0e(),
        "i1" => x.i1(),
        "i1e" => x.i1e(),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn bessel_values_match_torch() -> Result<()> {
    for &(op, dt, x, want) in UNARY {
        let dtype = dtype_of(dt);
        let x = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype)?;
        let y = bessel(op, &x)?;
        assert_eq!(y.dtype(), dtype, "{op} {dt}: dtype");
        assert_eq!(y.dims(), x.dims(), "{op} {dt}: shape");
        check(&format!("{op} {dt}"), &values(&y)?, want, rtol(dtype));
    }
    Ok(())
}

#[test]
fn bessel_integers_promote_to_float32() -> Result<()> {
    for &(op, x, want) in UNARY_INT {
        let ints: Vec<i64> = x.iter().map(|&v| v as i64).collect();
        let y = bessel(op, &Tensor::from_slice(&ints, [ints.len()])?)?;
        assert_eq!(y.dtype(), DType::F32, "{op}: dtype");
        check(&format!("{op} int64"), &values(&y)?, want, rtol(DType::F32));
    }
    Ok(())
}

#[test]
fn bessel_half_types_round_the_float32_value() -> Result<()> {
    let x = Tensor::from_slice(&[0.0, 1.5, -4.0, 9.0], [4])?;
    for op in ["i0", "i0e", "i1", "i1e"] {
        for dtype in [DType::F16, DType::BF16] {
            let got = bessel(op, &x.to_dtype(dtype)?)?;
            assert_eq!(got.dtype(), dtype);
            let want = bessel(op, &x.to_dtype(DType::F32)?)?.to_dtype(dtype)?;
            assert_eq!(values(&got)?, values(&want)?, "{op} {dtype:?}");
        }
    }
    Ok(())
}

#[test]
fn bessel_gradients_match_torch() -> Result<()> {
    for &(op, x, want) in GRADS {
        let x = Tensor::from_slice(x, [x.len()])?.requires_grad_(true)?;
        bessel(op, &x)?.sum_all()?.backward()?;
        let g = x.grad().expect("gradient");
        check(&format!("d{op}"), &values(&g)?, want, 1e-13);
    }
    Ok(())
}

#[test]
fn ldexp_matches_torch() -> Result<()> {
    for &(dt, x, e, integer, want, result) in LDEXP {
        let dtype = dtype_of(dt);
        let xs = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype)?;
        let es = if integer {
            let ints: Vec<i64> = e.iter().map(|&v| v as i64).collect();
            Tensor::from_slice(&ints, [ints.len()])?
        } else {
            Tensor::from_slice(e, [e.len()])?.to_dtype(dtype)?
        };
        let y = xs.ldexp(&es)?;
        assert_eq!(y.dtype(), dtype_of(result), "ldexp {dt} integer={integer}: dtype");
        check(&format!("ldexp {dt} integer={integer}"), &values(&y)?, want, rtol(y.dtype()));
    }
    Ok(())
}

#[test]
fn windows_match_torch() -> Result<()> {
    for &(name, n, periodic, dt, p1, p2, want) in WINDOWS {
        let dtype = dtype_of(dt);
        let w = match name {
            "hann" => Tensor::hann_window(n, periodic, dtype)?,
            "hamming" => Tensor::hamming_window(n, periodic, p1, p2, dtype)?,
            "blackman" => Tensor::blackman_window(n, periodic, dtype)?,
            "bartlett" => Tensor::bartlett_window(n, periodic, dtype)?,
            "kaiser" => Tensor::kaiser_window(n, periodic, p1, dtype)?,
            other => panic!("unknown window {other}"),
        };
        assert_eq!(w.dtype(), dtype, "{name}({n}, {periodic}) {dt}: dtype");
        assert_eq!(w.dims(), &[n as usize], "{name}({n}, {periodic}) {dt}: shape");
        // Windows cross zero (cos near π/2): an absolute floor of a few ulps of 1.
        let got = values(&w)?;
        let floor = if dtype == DType::F64 { 1e-15 } else { 3e-7 };
        for (i, (&g, &v)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - v).abs() <= rtol(dtype) * v.abs() + floor,
                "{name}({n}, {periodic}, {p1}, {p2}) {dt}[{i}]: got {g:e}, torch {v:e}"
            );
        }
    }
    Ok(())
}

#[test]
fn window_defaults_and_errors_follow_torch() -> Result<()> {
    assert_eq!(Tensor::hann_window(4, true, ())?.dtype(), DType::F32);
    let err = Tensor::hann_window(3, true, DType::I64).unwrap_err().to_string();
    assert!(
        err.contains(
            "hann_window expects floating point dtypes, got: TensorOptions(dtype=long int, device=cpu"
        ),
        "{err}"
    );
    let err = Tensor::kaiser_window(-1, true, 12.0, ()).unwrap_err().to_string();
    assert!(err.contains("kaiser_window requires non-negative window_length, got window_length=-1"), "{err}");
    let err = Tensor::bartlett_window(2, false, DType::Bool).unwrap_err().to_string();
    assert!(err.contains("bartlett_window expects floating point dtypes"), "{err}");
    Ok(())
}
