//! The in-place matrix products, in-place aliases, sgn/positive, split-by-indices, trapz,
//! empty_strided, new_tensor, cpu() and x.where(cond, y) against torch (inplace_products_and_aliases_golden.rs, from
//! make_inplace_products_and_aliases_golden.py); cauchy_/geometric_ statistics and checks; the process-wide determinism
//! and matmul-precision settings; torch's messages for bad input.

use std::sync::Mutex;

use oxtorch_tensor::{DType, Device, Result, Tensor};

use crate::inplace_products_and_aliases_golden::{
    BINARY_INPLACE, EMPTY_STRIDED, MATMUL_INPLACE, MVLGAMMA, NEW_TENSOR_I32, SPLITS, TRAPZ, UNARY_INPLACE,
    WHERE,
};

/// Serializes the tests that change process-wide settings.
static SETTINGS: Mutex<()> = Mutex::new(());

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.contiguous()?.to_vec::<f64>()
}

fn f32_tensor(data: &[f64], shape: &[usize]) -> Result<Tensor> {
    Tensor::from_slice(data, shape.to_vec())?.to_dtype(DType::F32)
}

/// Relative comparison (NaN where NaN, infinities equal).
fn close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) {
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

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn inplace_matrix_products_match_torch() -> Result<()> {
    for &(op, s, s_shape, a, a_shape, b, b_shape, beta, alpha, want) in MATMUL_INPLACE {
        let x = f32_tensor(s, s_shape)?;
        let (a, b) = (f32_tensor(a, a_shape)?, f32_tensor(b, b_shape)?);
        let returned = match op {
            "addmm" => x.addmm_(&a, &b, beta, alpha)?,
            "addmv" => x.addmv_(&a, &b, beta, alpha)?,
            "addr" => x.addr_(&a, &b, beta, alpha)?,
            "baddbmm" => x.baddbmm_(&a, &b, beta, alpha)?,
            other => panic!("unknown op {other}"),
        };
        assert_eq!(returned.dims(), s_shape, "{op}_ keeps self's shape");
        close(&format!("{op}_"), &values(&x)?, want, 1e-5, 1e-6);
    }
    Ok(())
}

#[test]
fn inplace_matrix_products_reject_like_torch() -> Result<()> {
    let ones = |shape: &[usize]| Tensor::ones(shape.to_vec(), DType::F32);
    let e = err(ones(&[1, 3])?.addmm_(&ones(&[2, 2])?, &ones(&[2, 3])?, 1.0, 1.0));
    assert!(
        e.contains("Bad in-place call: input tensor size [1, 3] and output tensor size [2, 3] should match"),
        "{e}"
    );
    let e = err(ones(&[1])?.addmv_(&ones(&[3, 2])?, &ones(&[2])?, 1.0, 1.0));
    assert!(e.contains("input tensor size [1] and output tensor size [3] should match"), "{e}");
    let e = err(ones(&[3])?.addr_(&ones(&[2])?, &ones(&[3])?, 1.0, 1.0));
    assert!(e.contains("2D tensor expected, got 1D tensor for input"), "{e}");
    let e = err(ones(&[3, 1])?.addr_(&ones(&[3])?, &ones(&[2])?, 1.0, 1.0));
    assert!(e.contains("size mismatch, input: [3, 1], v1: [3], v2: [2]"), "{e}");
    let e = err(ones(&[2, 3])?.baddbmm_(&ones(&[2, 2, 2])?, &ones(&[2, 2, 3])?, 1.0, 1.0));
    assert!(e.contains("input tensor size [2, 3] and output tensor size [2, 2, 3] should match"), "{e}");
    // A float result cannot be written into an integer self.
    let int = Tensor::from_slice(&[1i64, 2, 3], [3])?;
    let e = err(int.i0_());
    assert!(e.contains("result type Float can't be cast to the desired output type Long"), "{e}");
    let e = err(int.deg2rad_());
    assert!(e.contains("result type Float can't be cast to the desired output type Long"), "{e}");
    let e = err(int.multiply_(1.5));
    assert!(e.contains("result type Float can't be cast to the desired output type Long"), "{e}");
    let e = err(int.ldexp_(&Tensor::from_slice(&[2i64, 2, 2], [3])?));
    assert!(e.contains("ldexp can't be cast to the desired output type Long"), "{e}");
    Ok(())
}

#[test]
fn inplace_aliases_match_torch() -> Result<()> {
    for &(op, input, want) in UNARY_INPLACE {
        let x = f32_tensor(input, &[input.len()])?;
        match op {
            "absolute" => x.absolute_()?,
            "negative" => x.negative_()?,
            "fix" => x.fix_()?,
            "arccos" => x.arccos_()?,
            "arcsin" => x.arcsin_()?,
            "arctan" => x.arctan_()?,
            "arccosh" => x.arccosh_()?,
            "arcsinh" => x.arcsinh_()?,
            "arctanh" => x.arctanh_()?,
            "deg2rad" => x.deg2rad_()?,
            "rad2deg" => x.rad2deg_()?,
            "i0" => x.i0_()?,
            "sgn" => x.sgn_()?,
            other => panic!("unknown op {other}"),
        };
        assert_eq!(x.dtype(), DType::F32);
        close(&format!("{op}_"), &values(&x)?, want, 1e-6, 1e-7);
    }
    for &(op, xs, ys, want) in BINARY_INPLACE {
        let x = f32_tensor(xs, &[xs.len()])?;
        let y = if op == "ldexp" {
            Tensor::from_slice(ys, [ys.len()])?.to_dtype(DType::I64)?
        } else {
            f32_tensor(ys, &[ys.len()])?
        };
        match op {
            "arctan2" => x.arctan2_(&y)?,
            "divide" => x.divide_(&y)?,
            "multiply" => x.multiply_(&y)?,
            "subtract" => x.subtract_(&y)?,
            "greater" => x.greater_(&y)?,
            "greater_equal" => x.greater_equal_(&y)?,
            "less" => x.less_(&y)?,
            "less_equal" => x.less_equal_(&y)?,
            "not_equal" => x.not_equal_(&y)?,
            "ldexp" => x.ldexp_(&y)?,
            other => panic!("unknown op {other}"),
        };
        assert_eq!(x.dtype(), DType::F32, "{op}_ keeps self's dtype");
        close(&format!("{op}_"), &values(&x)?, want, 1e-6, 1e-7);
    }
    for &(p, input, want) in MVLGAMMA {
        let x = f32_tensor(input, &[input.len()])?;
        x.mvlgamma_(p)?;
        close(&format!("mvlgamma_({p})"), &values(&x)?, want, 1e-5, 1e-6);
    }
    let e = err(Tensor::zeros([2], DType::F32)?.mvlgamma_(0));
    assert!(e.contains("p has to be greater than or equal to 1"), "{e}");
    Ok(())
}

#[test]
fn sgn_and_positive() -> Result<()> {
    let x = Tensor::from_slice(&[-2i64, 0, 3], [3])?;
    assert_eq!(x.sgn()?.to_vec::<i64>()?, vec![-1, 0, 1]);
    let b = Tensor::from_slice(&[true, false], [2])?;
    assert_eq!(b.sgn()?.to_vec::<bool>()?, vec![true, false]);
    assert_eq!(x.positive()?.to_vec::<i64>()?, vec![-2, 0, 3]);
    let e = err(b.positive());
    assert!(e.contains("The `+` operator, on a bool tensor is not supported."), "{e}");
    Ok(())
}

#[test]
fn splits_by_indices_match_torch() -> Result<()> {
    for &(which, shape, indices, piece_shapes, want) in SPLITS {
        let n: usize = shape.iter().product();
        let x = Tensor::arange(n as i64, DType::F32)?.reshape(shape.to_vec())?;
        let parts = match which {
            "hsplit" => x.hsplit_indices(indices)?,
            "vsplit" => x.vsplit_indices(indices)?,
            "dsplit" => x.dsplit_indices(indices)?,
            other => panic!("unknown split {other}"),
        };
        let shapes: Vec<&[usize]> = parts.iter().map(|p| p.dims()).collect();
        assert_eq!(shapes, piece_shapes.to_vec(), "{which}{indices:?} shapes");
        let mut got = Vec::new();
        for p in &parts {
            got.extend(values(p)?);
        }
        close(&format!("{which}{indices:?}"), &got, want, 0.0, 0.0);
    }
    let e = err(Tensor::zeros([4], DType::F32)?.vsplit_indices(&[1, 3]));
    assert!(e.contains(
        "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!"
    ));
    let e = err(Tensor::zeros([4, 4], DType::F32)?.dsplit_indices(&[1]));
    assert!(e.contains(
        "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!"
    ));
    Ok(())
}

#[test]
fn trapz_matches_torch() -> Result<()> {
    for &(shape, y, dim, want, x, want_x) in TRAPZ {
        let y = f32_tensor(y, shape)?;
        close(&format!("trapz(dim={dim})"), &values(&y.trapz(dim)?)?, want, 1e-6, 1e-7);
        if !x.is_empty() {
            let x = f32_tensor(x, &[x.len()])?;
            close(&format!("trapz(x, dim={dim})"), &values(&y.trapz_x(&x, dim)?)?, want_x, 1e-6, 1e-7);
        }
    }
    Ok(())
}

#[test]
fn empty_strided_has_torch_strides_and_storage() -> Result<()> {
    for &(size, stride, storage) in EMPTY_STRIDED {
        let t = Tensor::empty_strided(size, stride, DType::F64)?;
        assert_eq!(t.dims(), size);
        assert_eq!(t.strides(), stride, "strides of {size:?}");
        assert_eq!(t.dtype(), DType::F64);
        // The storage holds exactly the addressed elements: the last one is reachable.
        if storage > 0 {
            let base = t.as_strided(&[storage], &[1], Some(0))?;
            assert_eq!(base.numel(), storage);
        }
    }
    let like = Tensor::ones([2], DType::I32)?.new_empty_strided(&[2, 2], &[1, 2])?;
    assert_eq!((like.dtype(), like.strides()), (DType::I32, &[1usize, 2][..]));
    let default = Tensor::empty_strided(&[3], &[1], oxtorch_tensor::TensorOptions::default())?;
    assert_eq!(default.dtype(), DType::default_float());
    let e = err(Tensor::empty_strided(&[2, 3], &[1], DType::F32));
    assert_eq!(e, "dimensionality of sizes (2) must match dimensionality of strides (1)");
    Ok(())
}

#[test]
fn new_tensor_cpu_and_where() -> Result<()> {
    let t = Tensor::from_slice(&[1i32, 2], [2])?;
    let n = t.new_tensor_from_vec(vec![1.5f64, -2.7, 3.99], [3])?;
    assert_eq!(n.dtype(), DType::I32);
    close("new_tensor", &values(&n)?, NEW_TENSOR_I32, 0.0, 0.0);
    let c = t.cpu()?;
    assert_eq!(c.device(), Device::Cpu);
    assert_eq!(c.to_vec::<i32>()?, vec![1, 2]);

    let (x, cond, y, want, want_scalar) = WHERE;
    let x = f32_tensor(x, &[x.len()])?;
    let cond = Tensor::from_slice(cond, [cond.len()])?;
    let y = f32_tensor(y, &[y.len()])?;
    close("x.where(cond, y)", &values(&x.r#where(&cond, &y)?)?, want, 0.0, 0.0);
    close("x.where(cond, 0.5)", &values(&x.r#where(&cond, 0.5)?)?, want_scalar, 0.0, 0.0);
    // where_self keeps its receiver-is-the-condition meaning.
    close("cond.where_self(x, y)", &values(&cond.where_self(&x, &y)?)?, want, 0.0, 0.0);
    Ok(())
}

#[test]
fn cauchy_and_geometric_draws() -> Result<()> {
    let g = oxtorch_tensor::Generator::new(32);
    let c = Tensor::zeros([20000], DType::F64)?;
    c.cauchy_with_(1.0, 2.0, Some(&g))?;
    let mut v = values(&c)?;
    v.sort_by(f64::total_cmp);
    // Median 1, quartiles median ± sigma.
    close("cauchy median", &[v[10000]], &[1.0], 0.0, 0.1);
    close("cauchy q1", &[v[5000]], &[-1.0], 0.0, 0.15);
    close("cauchy q3", &[v[15000]], &[3.0], 0.0, 0.15);

    let geo = Tensor::zeros([20000], DType::I64)?;
    geo.geometric_with_(0.25, Some(&g))?;
    let draws = geo.to_vec::<i64>()?;
    assert!(draws.iter().all(|&k| k >= 1), "geometric draws are at least 1");
    let mean = draws.iter().sum::<i64>() as f64 / draws.len() as f64;
    close("geometric mean 1/p", &[mean], &[4.0], 0.0, 0.1);
    let ones = draws.iter().filter(|&&k| k == 1).count() as f64 / draws.len() as f64;
    close("geometric P(1) = p", &[ones], &[0.25], 0.0, 0.015);
    // Same generator state, same draws.
    let (a, b) = (Tensor::zeros([5], DType::F32)?, Tensor::zeros([5], DType::F32)?);
    a.geometric_with_(0.5, Some(&oxtorch_tensor::Generator::new(7)))?;
    b.geometric_with_(0.5, Some(&oxtorch_tensor::Generator::new(7)))?;
    assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);

    let e = err(Tensor::zeros([3], DType::F32)?.cauchy_(0.0, 0.0));
    assert!(e.contains("cauchy_ expects sigma > 0.0, but found sigma=0"), "{e}");
    let e = err(Tensor::zeros([3], DType::I64)?.cauchy_(0.0, 1.0));
    assert!(e.contains("dtype must be a floating point but you specified long int"), "{e}");
    let e = err(Tensor::zeros([3], DType::F32)?.geometric_(1.0));
    assert!(e.contains("geometric_ expects p to be in (0, 1), but got p=1"), "{e}");
    let e = err(Tensor::zeros([3], DType::Bool)?.geometric_(0.5));
    assert!(e.contains("\"geometric_cpu\" not implemented for 'Bool'"), "{e}");
    Ok(())
}

#[test]
fn seed_reseeds_the_default_generator() {
    let _lock = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let s = oxtorch_tensor::random::seed();
    assert_eq!(oxtorch_tensor::default_generator().initial_seed(), s);
    let t = oxtorch_tensor::random::seed();
    assert_ne!(s, t, "two nondeterministic seeds differ");
}

#[test]
fn determinism_and_matmul_precision_settings() -> Result<()> {
    use oxtorch_tensor::determinism::*;
    let _lock = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(get_deterministic_debug_mode(), 0);
    use_deterministic_algorithms(true, true);
    assert!(are_deterministic_algorithms_enabled() && is_deterministic_algorithms_warn_only_enabled());
    assert_eq!(get_deterministic_debug_mode(), 1);
    set_deterministic_debug_mode("error")?;
    assert_eq!((get_deterministic_debug_mode(), are_deterministic_algorithms_enabled()), (2, true));
    assert!(!is_deterministic_algorithms_warn_only_enabled());
    set_deterministic_debug_mode(1)?;
    assert_eq!(get_deterministic_debug_mode(), 1);
    let e = err(set_deterministic_debug_mode("bad"));
    assert!(
        e.contains("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got bad")
    );
    let e = err(set_deterministic_debug_mode(3));
    assert!(e.contains("invalid value of debug_mode, expected 0, 1, or 2, but got 3"), "{e}");
    assert_eq!(get_deterministic_debug_mode(), 1, "a bad mode changes nothing");
    set_deterministic_debug_mode(0)?;
    assert!(!are_deterministic_algorithms_enabled() && !is_deterministic_algorithms_warn_only_enabled());

    assert_eq!(get_float32_matmul_precision(), "highest");
    set_float32_matmul_precision("medium")?;
    assert_eq!(get_float32_matmul_precision(), "medium");
    let e = err(set_float32_matmul_precision("bad"));
    assert!(e.contains("bad is not one of 'highest', 'high', or 'medium'"), "{e}");
    assert_eq!(get_float32_matmul_precision(), "medium");
    set_float32_matmul_precision("highest")?;
    Ok(())
}

#[test]
fn ldexp_with_integer_exponents_scales_exactly() -> Result<()> {
    // torch 2.15: the integer-exponent kernel keeps self's dtype and scales exactly.
    let f16 = Tensor::from_slice(&[1e-3f32], [1])?.to_dtype(DType::F16)?;
    let y = f16.ldexp(&Tensor::from_slice(&[20i64], [1])?)?;
    assert_eq!(y.dtype(), DType::F16);
    assert_eq!(y.to_dtype(DType::F64)?.to_vec::<f64>()?, vec![1049.0]);
    let y = Tensor::from_slice(&[1.0f64], [1])?.ldexp(&Tensor::from_slice(&[200i64], [1])?)?;
    assert_eq!(y.to_vec::<f64>()?, vec![2f64.powi(200)]);
    let y = Tensor::from_slice(&[1e-30f32], [1])?.ldexp(&Tensor::from_slice(&[130i64], [1])?)?;
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.to_vec::<f32>()?, vec![(1e-30f64 * 2f64.powi(130)) as f32]);
    let y = Tensor::from_slice(&[3i64], [1])?.ldexp(&Tensor::from_slice(&[2i64], [1])?)?;
    assert_eq!((y.dtype(), y.to_vec::<f32>()?), (DType::F32, vec![12.0]));
    let e = err(Tensor::from_slice(&[1.5f32], [1])?.ldexp(&Tensor::from_slice(&[true], [1])?));
    assert_eq!(e, "\"ldexp_cpu_exp\" not implemented for 'Bool'");
    let x = Tensor::from_slice(&[1.5f64], [1])?.requires_grad_(true)?;
    x.ldexp(&Tensor::from_slice(&[3i64], [1])?)?.sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![8.0]);
    Ok(())
}

#[test]
fn addr_keeps_a_float_self_with_integer_vectors() -> Result<()> {
    // torch: full((2,2), 0.5).addr(long ones(2), long ones(2)) is [[1.5, 1.5], [1.5, 1.5]] float32.
    let s = Tensor::full([2, 2], 0.5, DType::F32)?;
    let v = Tensor::ones([2], DType::I64)?;
    let out = s.addr(&v, &v, 1, 1)?;
    assert_eq!((out.dtype(), out.to_vec::<f32>()?), (DType::F32, vec![1.5; 4]));
    s.addr_(&v, &v, 1, 1)?;
    assert_eq!(s.to_vec::<f32>()?, vec![1.5; 4]);
    Ok(())
}

#[test]
fn empty_strided_overflow_is_torchs_error() {
    let e = err(Tensor::empty_strided(&[1 << 62], &[8], DType::F32));
    assert_eq!(e, "Storage size calculation overflowed with sizes=[4611686018427387904] and strides=[8]");
    let e = err(Tensor::empty_strided(&[usize::MAX, 2], &[1, 1], DType::F32));
    assert!(e.starts_with("Storage size calculation overflowed"), "{e}");
    let e = err(Tensor::empty_strided(&[2, 2], &[1], DType::F32));
    assert_eq!(e, "dimensionality of sizes (2) must match dimensionality of strides (1)");
}
