//! frexp, nextafter, pdist against torch (frexp_nextafter_pdist_golden.rs, from make_frexp_nextafter_pdist_golden.py: every
//! float dtype, 0, ±0, ±inf, NaN, subnormals; pdist values and gradients for p = 0, 0.5, 1, 1.5,
//! 2, 3, inf with zero distances and ties), poisson's statistics, the in-place view ops, the
//! matrix properties (mT, mH, T, H, adjoint), narrow_copy, chain_matmul and ger, and torch's
//! messages for bad input.

use oxtorch_tensor::{DType, Generator, Result, Tensor};

use crate::frexp_nextafter_pdist_golden::{FREXP, FREXP_GRAD, NEXTAFTER, PDIST};

fn dtype_of(name: &str) -> DType {
    match name {
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("unknown dtype {other}"),
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

/// Bit-exact comparison in f64 (NaN matches NaN; zeros must have torch's sign).
fn exact(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() { g.is_nan() } else { g.to_bits() == w.to_bits() };
        assert!(ok, "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

/// Relative comparison (NaN where NaN, infinities and zeros equal).
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
fn frexp_matches_torch_for_every_float_dtype() -> Result<()> {
    for &(dt, x, mantissa, exponent) in FREXP {
        let dtype = dtype_of(dt);
        let x = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype)?;
        let (m, e) = x.frexp()?;
        assert_eq!(m.dtype(), dtype, "frexp {dt}: mantissa dtype");
        assert_eq!(e.dtype(), DType::I32, "frexp {dt}: exponent dtype");
        exact(&format!("frexp {dt} mantissa"), &values(&m)?, mantissa);
        exact(&format!("frexp {dt} exponent"), &values(&e)?, exponent);
    }
    Ok(())
}

#[test]
fn frexp_gradients_match_torch() -> Result<()> {
    for &(dt, x, want) in FREXP_GRAD {
        let dtype = dtype_of(dt);
        let x = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype)?.requires_grad_(true)?;
        let (m, e) = x.frexp()?;
        assert_eq!(m.grad_fn().unwrap().name(), "FrexpBackward0");
        assert!(!e.requires_grad());
        let w = Tensor::arange(want.len() as f64, dtype)?.add(1.0)?;
        m.mul(&w)?.sum_all()?.backward()?;
        close(&format!("dfrexp {dt}"), &values(&x.grad().unwrap())?, want, 1e-6, 0.0);
    }
    Ok(())
}

#[test]
fn frexp_refuses_integers_and_bool() -> Result<()> {
    for t in [Tensor::from_slice(&[1i64, 2], [2])?, Tensor::from_slice(&[true], [1])?] {
        assert_eq!(err(t.frexp()), "torch.frexp() only supports floating-point dtypes");
    }
    Ok(())
}

#[test]
fn nextafter_matches_torch_for_every_float_dtype() -> Result<()> {
    for &(dx, dy, x, y, want, result) in NEXTAFTER {
        let xs = Tensor::from_slice(x, [x.len()])?.to_dtype(dtype_of(dx))?;
        let ys = Tensor::from_slice(y, [y.len()])?.to_dtype(dtype_of(dy))?;
        let r = xs.nextafter(&ys)?;
        assert_eq!(r.dtype(), dtype_of(result), "nextafter {dx} {dy}: dtype");
        exact(&format!("nextafter {dx} {dy}"), &values(&r)?, want);
    }
    Ok(())
}

#[test]
fn nextafter_broadcasts_steps_in_place_and_has_torchs_gradient() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f32, 2.0], [2])?;
    let y = Tensor::from_slice(&[0.0f32, 3.0], [2, 1])?;
    let r = x.nextafter(&y)?;
    assert_eq!(r.dims(), &[2, 2]);
    assert_eq!(
        r.to_vec::<f32>()?,
        vec![1.0 - f32::EPSILON / 2.0, 2.0 - f32::EPSILON, 1.0 + f32::EPSILON, 2.0 + 2.0 * f32::EPSILON]
    );
    // In place: computed in the promoted float32, rounded back into float16 (1.0 again).
    let h = Tensor::from_slice(&[1.0f32], [1])?.to_dtype(DType::F16)?;
    h.nextafter_(&Tensor::from_slice(&[3.0f32], [1])?)?;
    assert_eq!(values(&h)?, vec![1.0]);
    let e = err(Tensor::from_slice(&[1.0f32], [1])?.nextafter_(&y));
    assert!(e.contains("output with shape [1] doesn't match the broadcast shape"), "{e}");
    // Integers are torch's dispatch error.
    let i = Tensor::from_slice(&[1i64], [1])?;
    assert_eq!(err(i.nextafter(&i)), "\"nextafter_cpu\" not implemented for 'Long'");
    // Gradient: grad where x != y for x, zero for y.
    let a = Tensor::from_slice(&[1.0f64, 2.0], [2])?.requires_grad_(true)?;
    let b = Tensor::from_slice(&[1.0f64, 3.0], [2])?.requires_grad_(true)?;
    let out = a.nextafter(&b)?;
    assert_eq!(out.grad_fn().unwrap().name(), "NextafterBackward0");
    out.sum_all()?.backward()?;
    assert_eq!(values(&a.grad().unwrap())?, vec![0.0, 1.0]);
    assert_eq!(values(&b.grad().unwrap())?, vec![0.0, 0.0]);
    Ok(())
}

#[test]
fn pdist_values_and_gradients_match_torch() -> Result<()> {
    for &(p, dt, n, m, x, want, grad) in PDIST {
        let dtype = dtype_of(dt);
        let xs = Tensor::from_slice(x, [n, m])?.to_dtype(dtype)?.requires_grad_(true)?;
        let out = xs.pdist(p)?;
        let what = format!("pdist p={p} {dt} [{n}, {m}]");
        assert_eq!(out.dtype(), dtype, "{what}: dtype");
        assert_eq!(out.dims(), &[want.len()], "{what}: shape");
        assert_eq!(out.grad_fn().unwrap().name(), "PdistBackward0", "{what}");
        let (rtol, atol) = if dtype == DType::F64 { (1e-12, 1e-14) } else { (1e-5, 1e-6) };
        close(&what, &values(&out)?, want, rtol, atol);
        let w = Tensor::arange(want.len() as f64, dtype)?.add(1.0)?;
        out.mul(&w)?.sum_all()?.backward()?;
        close(&format!("{what} grad"), &values(&xs.grad().unwrap())?, grad, rtol * 10.0, atol * 10.0);
    }
    Ok(())
}

#[test]
fn pdist_refuses_torchs_bad_inputs() -> Result<()> {
    let v = Tensor::from_slice(&[1.0f32, 2.0, 3.0], [3])?;
    assert_eq!(err(v.pdist(2.0)), "pdist only supports 2D tensors, got: 1D");
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 7.0], [3, 2])?;
    assert_eq!(err(x.pdist(-1.0)), "pdist only supports non-negative p values");
    assert_eq!(err(x.pdist(f64::NAN)), "pdist only supports non-negative p values");
    assert_eq!(err(x.to_dtype(DType::I64)?.pdist(2.0)), "pdist only supports floating-point dtypes");
    assert_eq!(err(x.to_dtype(DType::F16)?.pdist(2.0)), "\"pdist\" not implemented for 'Half'");
    assert_eq!(err(x.to_dtype(DType::BF16)?.pdist(2.0)), "\"pdist\" not implemented for 'BFloat16'");
    // torch answers these before looking at the dtype.
    assert_eq!(x.narrow(0, 0, 1)?.to_dtype(DType::F16)?.pdist(2.0)?.dims(), &[0]);
    // A non-contiguous input is fine.
    let t = x.t()?.contiguous()?.t()?;
    assert_eq!(values(&t.pdist(1.0)?)?, vec![4.0, 9.0, 5.0]);
    Ok(())
}

#[test]
fn poisson_draws_have_the_rates_as_means() -> Result<()> {
    let g = Generator::new(31);
    let rates = [0.0, 0.3, 3.0, 9.5, 10.0, 42.0, 1500.0];
    let n = 20_000;
    for &rate in &rates {
        let r = Tensor::full([n], rate, DType::F64)?;
        let draws = values(&r.poisson_with(Some(&g))?)?;
        assert!(draws.iter().all(|d| *d >= 0.0 && d.fract() == 0.0), "rate {rate}: non-negative integers");
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        // Five standard errors of the mean; the variance within 10 % (a Poisson's equals its mean).
        let tol = 5.0 * (rate / n as f64).sqrt();
        assert!((mean - rate).abs() <= tol, "rate {rate}: mean {mean}");
        if rate == 0.0 {
            assert_eq!(var, 0.0);
        } else {
            assert!((var - rate).abs() <= 0.1 * rate, "rate {rate}: variance {var}");
        }
    }
    // The generator decides the draws.
    let r = Tensor::full([100], 4.0, DType::F32)?;
    let a = r.poisson_with(Some(&Generator::new(5)))?;
    let b = r.poisson_with(Some(&Generator::new(5)))?;
    assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);
    Ok(())
}

#[test]
fn poisson_keeps_dtype_and_shape_and_refuses_bad_rates() -> Result<()> {
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let r = Tensor::from_slice(&[0.0f64, 2.0, 0.0, 12.0, 1.0, 0.0], [2, 3])?.to_dtype(dtype)?;
        let d = r.poisson()?;
        assert_eq!((d.dtype(), d.dims()), (dtype, &[2usize, 3][..]));
        let v = values(&d)?;
        assert_eq!((v[0], v[2], v[5]), (0.0, 0.0, 0.0), "{dtype:?}: rate 0 draws 0");
    }
    let msg = "invalid Poisson rate, expected rate to be non-negative";
    assert_eq!(err(Tensor::from_slice(&[1.0f32, -1.0], [2])?.poisson()), msg);
    assert_eq!(err(Tensor::from_slice(&[f32::NAN], [1])?.poisson()), msg);
    assert_eq!(
        err(Tensor::from_slice(&[1i64], [1])?.poisson()),
        "\"poisson_cpu\" not implemented for 'Long'"
    );
    // Differentiable with a zero gradient.
    let r = Tensor::from_slice(&[1.0f64, 2.0], [2])?.requires_grad_(true)?;
    let d = r.poisson()?;
    assert_eq!(d.grad_fn().unwrap().name(), "PoissonBackward0");
    d.sum_all()?.backward()?;
    assert_eq!(values(&r.grad().unwrap())?, vec![0.0, 0.0]);
    Ok(())
}

#[test]
fn inplace_views_change_the_handles_view_and_bump_the_version() -> Result<()> {
    let mut x = Tensor::arange(6.0, DType::F32)?.reshape([2, 3])?;
    let v0 = x.version();
    x.t_()?;
    assert_eq!((x.dims(), x.strides()), (&[3usize, 2][..], &[1usize, 3][..]));
    assert_eq!(x.version(), v0 + 1);
    assert_eq!(x.to_vec::<f32>()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    x.transpose_(0, 1)?.unsqueeze_(1)?;
    assert_eq!(x.dims(), &[2, 1, 3]);
    x.swapdims_(0, 2)?.swapaxes_(0, 1)?;
    assert_eq!(x.dims(), &[1, 3, 2]);
    x.squeeze_dim_(0)?;
    assert_eq!(x.dims(), &[3, 2]);
    x.unsqueeze_(-1)?.unsqueeze_(0)?;
    x.squeeze_dims_([0, -1])?;
    assert_eq!(x.dims(), &[3, 2]);
    x.unsqueeze_(0)?.squeeze_()?;
    assert_eq!(x.dims(), &[3, 2]);
    x.as_strided_(&[2, 2], &[1, 2], Some(1))?;
    assert_eq!((x.dims(), x.strides(), x.storage_offset()), (&[2usize, 2][..], &[1usize, 2][..], 1));
    assert_eq!(x.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
    // torch's messages.
    let mut y = Tensor::zeros([2, 3, 4], DType::F32)?;
    assert_eq!(err(y.t_()), "t_() expects a tensor with <= 2 dimensions, but self is 3D");
    assert!(err(y.squeeze_dim_(5))
        .contains("Dimension out of range (expected to be in range of [-3, 2], but got 5)"));
    assert_eq!(err(y.squeeze_dims_([0, 0])), "dim 0 appears multiple times in the list of dims");
    assert!(err(y.as_strided_(&[30, 2], &[1, 2], None)).contains("out of bounds"));
    assert_eq!(y.dims(), &[2, 3, 4], "a failed op keeps the view");
    // 0-d and 1-d `t_` keep the shape.
    let mut s = Tensor::zeros([3], DType::F32)?;
    s.t_()?;
    assert_eq!(s.dims(), &[3]);
    // A clone is another handle: it keeps its view, and shares the storage.
    let z = Tensor::zeros([2, 3], DType::F32)?;
    let mut w = z.clone();
    w.t_()?;
    w.select(0, 2)?.fill_(1.0)?;
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(z.to_vec::<f32>()?, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    Ok(())
}

#[test]
fn inplace_views_follow_torchs_autograd() -> Result<()> {
    // A leaf that requires grad, and a view of one, are refused.
    let mut leaf = Tensor::zeros([2, 3], DType::F64)?.requires_grad_(true)?;
    assert_eq!(err(leaf.t_()), "a leaf Variable that requires grad is being used in an in-place operation.");
    assert_eq!(
        err(leaf.unsqueeze_(0)),
        "a leaf Variable that requires grad is being used in an in-place operation."
    );
    let mut view = leaf.narrow(0, 0, 1)?;
    assert_eq!(
        err(view.t_()),
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    );
    // Under no_grad a leaf may change its view and stays a leaf that requires grad.
    oxtorch_tensor::no_grad(|| leaf.t_().map(|_| ()))?;
    assert_eq!(leaf.dims(), &[3, 2]);
    assert!(leaf.requires_grad() && leaf.is_leaf());
    // A non-leaf records torch's node; the gradient flows back through it.
    let x = Tensor::arange(6.0, DType::F64)?.reshape([2, 3])?.requires_grad_(true)?;
    let mut y = x.mul(1.0)?;
    y.t_()?;
    assert_eq!(y.grad_fn().unwrap().name(), "TBackward1");
    y.mul(&Tensor::arange(6.0, DType::F64)?.reshape([3, 2])?)?.sum_all()?.backward()?;
    assert_eq!(values(&x.grad().unwrap())?, vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
    let names = |f: fn(&mut Tensor) -> Result<()>| -> Result<String> {
        let x = Tensor::zeros([2, 1, 3], DType::F64)?.requires_grad_(true)?;
        let mut y = x.mul(2.0)?;
        f(&mut y)?;
        Ok(y.grad_fn().unwrap().name().to_string())
    };
    assert_eq!(names(|y| y.transpose_(0, 2).map(|_| ()))?, "TransposeBackward1");
    assert_eq!(names(|y| y.unsqueeze_(0).map(|_| ()))?, "UnsqueezeBackward1");
    assert_eq!(names(|y| y.squeeze_().map(|_| ()))?, "SqueezeBackward3");
    assert_eq!(names(|y| y.squeeze_dim_(1).map(|_| ()))?, "SqueezeBackward4");
    assert_eq!(names(|y| y.squeeze_dims_([1]).map(|_| ()))?, "SqueezeBackward5");
    assert_eq!(names(|y| y.as_strided_(&[3, 2], &[1, 3], None).map(|_| ()))?, "AsStridedBackward1");
    // A view stays a view of its base: an in-place write through it reaches the base's history.
    let b = Tensor::zeros([4, 3], DType::F64)?;
    let w = Tensor::ones([3, 2], DType::F64)?.requires_grad_(true)?;
    let mut v = b.narrow(0, 1, 2)?;
    v.t_()?;
    v.add_(&w)?;
    assert_eq!(values(&b)?, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    b.mul(&Tensor::arange(12.0, DType::F64)?.reshape([4, 3])?)?.sum_all()?.backward()?;
    assert_eq!(values(&w.grad().unwrap())?, vec![3.0, 6.0, 4.0, 7.0, 5.0, 8.0]);
    Ok(())
}

#[test]
fn matrix_properties_follow_torch() -> Result<()> {
    let a = Tensor::arange(24.0, DType::F32)?.reshape([2, 3, 4])?;
    assert_eq!(a.mT()?.dims(), &[2, 4, 3]);
    assert_eq!(a.mH()?.dims(), &[2, 4, 3]);
    assert_eq!(a.adjoint()?.dims(), &[2, 4, 3]);
    assert_eq!(a.T()?.dims(), &[4, 3, 2]);
    assert!(a.T()?.shares_storage(&a));
    assert_eq!(a.T()?.strides(), &[1, 4, 12]);
    let m = a.select(0, 1)?;
    assert_eq!(m.H()?.to_vec::<f32>()?, m.t()?.to_vec::<f32>()?);
    let s = Tensor::scalar_tensor(2.0, DType::F32)?;
    for t in [s.mT()?, s.mH()?, s.T()?, s.H()?, s.adjoint()?] {
        assert_eq!(t.dims(), &[] as &[usize]);
    }
    let v = Tensor::zeros([3], DType::F32)?;
    assert_eq!(v.T()?.dims(), &[3]);
    assert_eq!(
        err(v.mT()),
        "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
    );
    assert_eq!(
        err(v.mH()),
        "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor."
    );
    assert_eq!(
        err(v.adjoint()),
        "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."
    );
    assert_eq!(err(v.H()), "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor.");
    assert_eq!(
        err(a.H()),
        "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, consider using tensor.mH"
    );
    let x = Tensor::arange(6.0, DType::F64)?.reshape([2, 3])?.requires_grad_(true)?;
    assert_eq!(x.mT()?.grad_fn().unwrap().name(), "TransposeBackward0");
    assert_eq!(x.T()?.grad_fn().unwrap().name(), "PermuteBackward0");
    Ok(())
}

#[test]
fn narrow_copy_chain_matmul_and_ger_follow_torch() -> Result<()> {
    let x = Tensor::arange(10.0, DType::F32)?.reshape([2, 5])?;
    let c = x.narrow_copy(1, -2, 2)?;
    assert_eq!(c.to_vec::<f32>()?, vec![3.0, 4.0, 8.0, 9.0]);
    assert!(!c.shares_storage(&x) && c.is_contiguous());
    assert!(x.narrow_copy(1, 4, 2).is_err());
    let xg = x.to_dtype(DType::F64)?.requires_grad_(true)?;
    let n = xg.narrow_copy(1, 0, 2)?;
    assert_eq!(n.grad_fn().unwrap().name(), "NarrowCopyBackward0");
    n.sum_all()?.backward()?;
    assert_eq!(values(&xg.grad().unwrap())?, vec![1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]);

    let a = Tensor::arange(6.0, DType::F64)?.reshape([2, 3])?;
    let b = Tensor::arange(12.0, DType::F64)?.reshape([3, 4])?;
    let d = Tensor::arange(8.0, DType::F64)?.reshape([4, 2])?;
    let want = a.matmul(&b)?.matmul(&d)?;
    assert_eq!(values(&Tensor::chain_matmul(&[&a, &b, &d])?)?, values(&want)?);
    let one = Tensor::chain_matmul(&[&a])?;
    assert!(!one.shares_storage(&a));
    assert_eq!(values(&one)?, values(&a)?);
    assert_eq!(err(Tensor::chain_matmul(&[])), "chain_matmul(): Expected one or more matrices");
    let v = Tensor::zeros([3], DType::F64)?;
    assert_eq!(err(Tensor::chain_matmul(&[&a, &v])), "Tensor dimension is 1, expected 2 instead.");
    let e = err(Tensor::chain_matmul(&[&a, &d]));
    assert!(
        e.contains("multi_dot(): tensors 0 and 1 with shapes [2, 3] and [4, 2] cannot be multiplied"),
        "{e}"
    );

    let p = Tensor::from_slice(&[1i64, 2, 3], [3])?;
    let q = Tensor::from_slice(&[1.0f32, -1.0], [2])?;
    let o = p.ger(&q)?;
    assert_eq!(o.dtype(), DType::F32);
    assert_eq!(o.to_vec::<f32>()?, vec![1.0, -1.0, 2.0, -2.0, 3.0, -3.0]);
    assert!(err(a.ger(&q)).contains("outer: Expected 1-D argument self, but got 2-D"));
    Ok(())
}

/// torch's per-pair gradient with respect to the first row, straight from its per-`p` formulas.
fn pdist_pair_grad(p: f64, d: &[f64], dist: f64, g: f64) -> Vec<f64> {
    let sign = |v: f64| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    d.iter()
        .map(|&v| {
            if p == 0.0 {
                0.0
            } else if p == 1.0 {
                g * sign(v)
            } else if p.is_infinite() {
                if v.abs() == dist {
                    g * sign(v)
                } else {
                    0.0
                }
            } else if dist == 0.0 || (p < 1.0 && v == 0.0) {
                0.0
            } else if p < 2.0 {
                g * sign(v) * v.abs().powf(p - 1.0) / dist.powf(p - 1.0)
            } else if p == 2.0 {
                g * v / dist
            } else {
                g * v * v.abs().powf(p - 2.0) / dist.powf(p - 1.0)
            }
        })
        .collect()
}

#[test]
fn pdist_in_row_blocks_matches_the_pairwise_formulas_and_the_single_block() -> Result<()> {
    // Row 3 repeats row 0 (a zero distance), rows 0 and 1 share a coordinate (d = 0), and rows 0
    // and 4 tie three ways for p = inf.
    let rows: [[f64; 3]; 7] = [
        [0.5, -1.0, 2.0],
        [1.5, -1.0, 0.0],
        [-0.25, 3.0, 1.0],
        [0.5, -1.0, 2.0],
        [2.5, 1.0, 0.0],
        [-1.0, 2.0, -0.5],
        [1.0, 1.0, 1.0],
    ];
    let (n, m) = (rows.len(), rows[0].len());
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    for p in [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, f64::INFINITY] {
        // The formulas, pair by pair, with the gradient weights k + 1.
        let (mut want, mut want_grad) = (Vec::new(), vec![0.0; n * m]);
        for i in 0..n {
            for j in i + 1..n {
                let d: Vec<f64> = (0..m).map(|c| rows[i][c] - rows[j][c]).collect();
                let dist = if p == 0.0 {
                    d.iter().filter(|v| **v != 0.0).count() as f64
                } else if p.is_infinite() {
                    d.iter().fold(0.0f64, |a, v| a.max(v.abs()))
                } else {
                    d.iter().map(|v| v.abs().powf(p)).sum::<f64>().powf(1.0 / p)
                };
                let per = pdist_pair_grad(p, &d, dist, (want.len() + 1) as f64);
                for c in 0..m {
                    want_grad[i * m + c] += per[c];
                    want_grad[j * m + c] -= per[c];
                }
                want.push(dist);
            }
        }
        for dtype in [DType::F64, DType::F32] {
            let (rtol, atol) = if dtype == DType::F64 { (1e-12, 1e-14) } else { (1e-4, 1e-4) };
            let run = |block: Option<usize>| -> Result<(Vec<f64>, Vec<f64>)> {
                let x = Tensor::from_slice(&flat, [n, m])?.to_dtype(dtype)?.requires_grad_(true)?;
                let out = match block {
                    Some(b) => x.pdist_blocked(p, b)?,
                    None => x.pdist(p)?,
                };
                assert_eq!(out.grad_fn().unwrap().name(), "PdistBackward0");
                let w = Tensor::arange(out.numel() as f64, dtype)?.add(1.0)?;
                out.mul(&w)?.sum_all()?.backward()?;
                Ok((values(&out)?, values(&x.grad().unwrap())?))
            };
            let (whole, whole_grad) = run(None)?;
            let what = format!("pdist p={p} {dtype}");
            close(&what, &whole, &want, rtol, atol);
            close(&format!("{what} grad"), &whole_grad, &want_grad, rtol * 10.0, atol * 10.0);
            // One row a block; then blocks of 1, 2 and 3 rows; then 3 and 3 rows.
            for block in [1, 30, 45] {
                let (got, got_grad) = run(Some(block))?;
                exact(&format!("{what} in blocks of {block}"), &got, &whole);
                exact(&format!("{what} grad in blocks of {block}"), &got_grad, &whole_grad);
            }
        }
    }
    // The blocked backward stays differentiable (a double backward through it).
    for p in [1.5, 2.0, 3.0] {
        let second = |block: Option<usize>| -> Result<Vec<f64>> {
            let x = Tensor::from_slice(&flat, [n, m])?.requires_grad_(true)?;
            let out = match block {
                Some(b) => x.pdist_blocked(p, b)?,
                None => x.pdist(p)?,
            };
            let w = Tensor::arange(out.numel() as f64, DType::F64)?.add(1.0)?;
            let y = out.mul(&w)?.sum_all()?;
            let g = oxtorch_tensor::grad(&[y], std::slice::from_ref(&x), None, true, true, false)?;
            let g = g[0].clone().unwrap();
            let y2 = g.pow(2.0)?.sum_all()?;
            let gg = oxtorch_tensor::grad(&[y2], std::slice::from_ref(&x), None, false, false, false)?;
            values(gg[0].as_ref().unwrap())
        };
        let whole = second(None)?;
        assert!(whole.iter().any(|v| *v != 0.0), "p={p}: a second derivative");
        close(&format!("pdist p={p} double backward in blocks"), &second(Some(1))?, &whole, 1e-12, 1e-12);
    }
    Ok(())
}
