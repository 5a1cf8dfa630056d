//! geqrf, orgqr, ormqr (values and gradients), linalg.ldl_factor_ex / ldl_factor / ldl_solve and
//! segment_reduce (values and gradients, every reduction, lengths and offsets, `initial`, empty
//! segments, NaN, ties) against torch (geqrf_ldl_segment_reduce_golden.rs, from make_geqrf_ldl_segment_reduce_golden.py), and
//! torch's messages for bad input.

use oxtorch_tensor::linalg as la;
use oxtorch_tensor::{DType, Result, Tensor};

use crate::geqrf_ldl_segment_reduce_golden::{GEQRF, LDL, ORMQR, SEGMENT};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("unknown dtype {other}"),
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.detach().to_dtype(DType::F64)?.contiguous()?.to_vec::<f64>()
}

fn ints(t: &Tensor) -> Result<Vec<i64>> {
    t.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()
}

fn make(v: &[f64], dims: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::from_slice(v, dims.to_vec())?.to_dtype(dtype)
}

/// The loss weights of the gradient cases (as `weights` in make_geqrf_ldl_segment_reduce_golden.py).
fn weights(dims: &[usize], dtype: DType) -> Result<Tensor> {
    let n: usize = dims.iter().product();
    let w: Vec<f64> = (0..n).map(|i| ((i * 7) % 11) as f64 / 11.0 - 0.5).collect();
    make(&w, dims, dtype)
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

/// (rtol, atol) for a dtype: float32 results of torch come from LAPACK's single precision.
fn tol(dtype: DType) -> (f64, f64) {
    if dtype == DType::F32 {
        (1e-4, 1e-5)
    } else {
        (1e-9, 1e-11)
    }
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn geqrf_matches_torch_tall_wide_batched() -> Result<()> {
    for &(dt, dims, x, want_a, want_tau) in GEQRF {
        let dtype = dtype_of(dt);
        let (rt, at) = tol(dtype);
        let x = make(x, dims, dtype)?;
        let (a, tau) = x.geqrf()?;
        assert_eq!(a.dims(), dims, "geqrf {dims:?}: a shape");
        assert_eq!(a.dtype(), dtype);
        let k = dims[dims.len() - 2].min(dims[dims.len() - 1]);
        let mut tau_dims = dims[..dims.len() - 2].to_vec();
        tau_dims.push(k);
        assert_eq!(tau.dims(), &tau_dims[..], "geqrf {dims:?}: tau shape");
        close(&format!("geqrf {dt} {dims:?} a"), &values(&a)?, want_a, rt, at);
        close(&format!("geqrf {dt} {dims:?} tau"), &values(&tau)?, want_tau, rt, at);
    }
    Ok(())
}

#[test]
fn geqrf_then_orgqr_rebuilds_the_input() -> Result<()> {
    for &(dt, dims, x, _, _) in GEQRF {
        let (m, n) = (dims[dims.len() - 2], dims[dims.len() - 1]);
        if m < n || dt != "f64" {
            continue;
        }
        let x = make(x, dims, DType::F64)?;
        let (a, tau) = x.geqrf()?;
        let q = a.orgqr(&tau)?;
        let r = a.triu(0)?.narrow(-2, 0, n)?;
        close(&format!("Q R {dims:?}"), &values(&q.matmul(&r)?)?, &values(&x)?, 1e-10, 1e-10);
    }
    Ok(())
}

#[test]
fn geqrf_records_a_node_whose_backward_is_torchs_error() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 7.0], [3, 2])?.requires_grad_(true)?;
    let (a, tau) = x.geqrf()?;
    assert!(a.requires_grad() && tau.requires_grad());
    assert_eq!(a.grad_fn().unwrap().name(), "GeqrfBackward0");
    let e = err(a.sum_all()?.backward());
    assert!(e.contains("the derivative for 'geqrf' is not implemented."), "{e}");
    Ok(())
}

#[test]
fn ormqr_matches_torch_values_and_gradients() -> Result<()> {
    for &(dt, left, transpose, ad, a, td, tau, od, other, want, ga, gt, go) in ORMQR {
        let dtype = dtype_of(dt);
        let (rt, at) = tol(dtype);
        let what = format!("ormqr {dt} {ad:?} left={left} transpose={transpose}");
        let a = make(a, ad, dtype)?.requires_grad_(true)?;
        let tau = make(tau, td, dtype)?.requires_grad_(true)?;
        let other = make(other, od, dtype)?.requires_grad_(true)?;
        let r = a.ormqr(&tau, &other, left, transpose)?;
        close(&format!("{what} value"), &values(&r)?, want, rt, at);
        r.mul(&weights(r.dims(), dtype)?)?.sum_all()?.backward()?;
        close(&format!("{what} d input"), &values(&a.grad().unwrap())?, ga, rt * 10.0, at * 10.0);
        close(&format!("{what} d tau"), &values(&tau.grad().unwrap())?, gt, rt * 10.0, at * 10.0);
        close(&format!("{what} d other"), &values(&other.grad().unwrap())?, go, rt * 10.0, at * 10.0);
    }
    Ok(())
}

#[test]
fn ormqr_gradient_matches_finite_differences() -> Result<()> {
    // A central-difference check of d/dinput, d/dtau, d/dother in float64.
    let x = Tensor::from_slice(&[0.3f64, -1.2, 0.7, 2.0, 0.1, -0.4, 1.1, 0.5, -0.9, 0.2, 0.6, -1.5], [4, 3])?;
    let (a0, tau0) = x.geqrf()?;
    let other0 = Tensor::from_slice(&[0.5f64, -0.25, 1.0, 2.0, -1.0, 0.75, 0.3, -0.6], [4, 2])?;
    let f = |a: &Tensor, tau: &Tensor, o: &Tensor| -> Result<Tensor> {
        a.ormqr(tau, o, true, true)?.mul(&weights(&[4, 2], DType::F64)?)?.sum_all()
    };
    let inputs = [a0.detach(), tau0.detach(), other0];
    let leaves: Vec<Tensor> = inputs.iter().map(|t| t.requires_grad_(true)).collect::<Result<_>>()?;
    f(&leaves[0], &leaves[1], &leaves[2])?.backward()?;
    let eps = 1e-6;
    for which in 0..3 {
        let analytic = values(&leaves[which].grad().unwrap())?;
        let base = values(&inputs[which])?;
        for i in 0..base.len() {
            let eval = |d: f64| -> Result<f64> {
                let mut v = base.clone();
                v[i] += d;
                let mut args = inputs.clone();
                args[which] = make(&v, inputs[which].dims(), DType::F64)?;
                f(&args[0], &args[1], &args[2])?.item::<f64>()
            };
            let numeric = (eval(eps)? - eval(-eps)?) / (2.0 * eps);
            assert!(
                (numeric - analytic[i]).abs() <= 1e-6 + 1e-6 * numeric.abs(),
                "ormqr gradcheck input {which}[{i}]: analytic {}, numeric {numeric}",
                analytic[i]
            );
        }
    }
    Ok(())
}

#[test]
fn ldl_factor_ex_and_solve_match_torch() -> Result<()> {
    for &(dt, ad, a, want_ld, want_piv, want_info, bd, b, want_x) in LDL {
        let dtype = dtype_of(dt);
        let (rt, at) = tol(dtype);
        let what = format!("ldl {dt} {ad:?}");
        let a = make(a, ad, dtype)?;
        let (ld, piv, info) = la::ldl_factor_ex(&a, false, false)?;
        assert_eq!(piv.dtype(), DType::I32, "{what}: pivots dtype");
        assert_eq!(info.dtype(), DType::I32, "{what}: info dtype");
        assert_eq!(ld.dims(), ad, "{what}: LD shape");
        assert_eq!(ints(&info)?, want_info, "{what}: info");
        assert_eq!(ints(&piv)?, want_piv, "{what}: pivots");
        if dtype == DType::F64 {
            // The port of LAPACK's dsytf2 reproduces torch bit for bit at these sizes.
            let got = values(&ld)?;
            for (i, (g, w)) in got.iter().zip(want_ld).enumerate() {
                assert!(g.to_bits() == w.to_bits(), "{what} LD[{i}]: got {g:e}, torch {w:e}");
            }
        } else {
            close(&format!("{what} LD"), &values(&ld)?, want_ld, rt, at);
        }
        let b = make(b, bd, dtype)?;
        let x = la::ldl_solve(&ld, &piv, &b, false)?;
        close(&format!("{what} X"), &values(&x)?, want_x, rt * 10.0, at * 10.0);
        // A X = B.
        let back = a.matmul(&x)?;
        close(&format!("{what} A X"), &values(&back)?, &values(&b)?, rt * 100.0, at * 100.0);
        let (ld2, piv2) = la::ldl_factor(&a, true)?;
        assert_eq!(values(&ld2)?, values(&ld)?, "{what}: ldl_factor LD");
        assert_eq!(ints(&piv2)?, ints(&piv)?, "{what}: ldl_factor pivots");
    }
    Ok(())
}

#[test]
fn ldl_singular_info_and_errors_are_torchs() -> Result<()> {
    let z = Tensor::zeros([2, 3, 3], DType::F64)?;
    let (ld, piv, info) = la::ldl_factor_ex(&z, false, false)?;
    assert_eq!(values(&ld)?, vec![0.0; 18]);
    assert_eq!(ints(&piv)?, vec![1, 2, 3, 1, 2, 3]);
    assert_eq!(ints(&info)?, vec![1, 1]);
    assert_eq!(err(la::ldl_factor(&z, false)), "torch.linalg.ldl_factor: Unknown error code: 1.");
    assert_eq!(err(la::ldl_factor_ex(&z, false, true)), "torch.linalg.ldl_factor_ex: Unknown error code: 1.");
    assert_eq!(
        err(la::ldl_factor_ex(&Tensor::zeros([3], DType::F32)?, false, false)),
        "torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions."
    );
    assert_eq!(
        err(la::ldl_factor_ex(&Tensor::zeros([3, 4], DType::F32)?, false, false)),
        "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 3 by 4 matrices"
    );
    assert_eq!(
        err(la::ldl_factor_ex(&Tensor::zeros([3, 3], DType::I32)?, false, false)),
        "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got Int"
    );
    assert_eq!(
        err(la::ldl_factor_ex(&Tensor::zeros([3, 3], DType::F16)?, false, false)),
        "\"ldl_factor_kernel_cpu\" not implemented for 'Half'"
    );

    let a = Tensor::from_slice(&[2.0f64, 1.0, 0.0, 1.0, -3.0, 0.5, 0.0, 0.5, 1.0], [3, 3])?;
    let (ld, piv) = la::ldl_factor(&a, false)?;
    let b = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2])?;
    assert_eq!(
        err(la::ldl_solve(&ld, &piv, &Tensor::zeros([3], DType::F64)?, false)),
        "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
    );
    assert_eq!(
        err(la::ldl_solve(&ld, &piv, &Tensor::zeros([4, 2], DType::F64)?, false)),
        "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 but each b matrix is 4 by 2"
    );
    assert_eq!(
        err(la::ldl_solve(&ld, &piv, &b.to_dtype(DType::F32)?, false)),
        "Expected b and A to have the same dtype, but found b of type Float and A of type Double instead."
    );
    assert_eq!(
        err(la::ldl_solve(&ld.narrow(0, 0, 2)?, &piv, &b, false)),
        "torch.linalg.ldl_solve: A must be batches of square matrices, but they are 2 by 3 matrices"
    );
    assert_eq!(
        err(la::ldl_solve(&ld, &piv.narrow(0, 0, 2)?, &b, false)),
        "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape [2] instead"
    );
    assert_eq!(
        err(la::ldl_solve(&ld, &piv.to_dtype(DType::F32)?, &b, false)),
        "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float"
    );
    // int64 pivots are accepted; the batch dims of LD and B broadcast.
    let x = la::ldl_solve(&ld, &piv.to_dtype(DType::I64)?, &b, true)?;
    close("ldl_solve int64 pivots", &values(&a.matmul(&x)?)?, &values(&b)?, 1e-12, 1e-12);
    let bb = Tensor::cat(&[&b.unsqueeze(0)?, &b.mul(2.0)?.unsqueeze(0)?], 0)?;
    let xb = la::ldl_solve(&ld, &piv, &bb, false)?;
    assert_eq!(xb.dims(), &[2, 3, 2]);
    close("ldl_solve broadcast", &values(&a.matmul(&xb)?)?, &values(&bb)?, 1e-12, 1e-12);

    // Not differentiable: torch's NotImplemented node.
    let x = a.requires_grad_(true)?;
    let (ld, piv, info) = la::ldl_factor_ex(&x, false, false)?;
    assert!(ld.requires_grad() && !piv.requires_grad() && !info.requires_grad());
    assert_eq!(ld.grad_fn().unwrap().name(), "NotImplemented");
    let e = err(ld.sum_all()?.backward());
    assert!(e.contains("derivative for aten::linalg_ldl_factor_ex is not implemented"), "{e}");
    let bg = b.requires_grad_(true)?;
    let xs = la::ldl_solve(&ld.detach(), &piv, &bg, false)?;
    assert!(xs.requires_grad());
    let e = err(xs.sum_all()?.backward());
    assert!(e.contains("derivative for aten::linalg_ldl_solve is not implemented"), "{e}");
    Ok(())
}

#[test]
fn segment_reduce_matches_torch_values_and_gradients() -> Result<()> {
    for &(reduce, dt, dd, data, ld, lengths, axis, initial, as_offsets, want, want_grad) in SEGMENT {
        let dtype = dtype_of(dt);
        let what = format!("segment_reduce {reduce} {dt} {dd:?} lengths={lengths:?} initial={initial:?}");
        let x = make(data, dd, dtype)?.requires_grad_(true)?;
        let lens = Tensor::from_slice(lengths, ld.to_vec())?;
        let out = if as_offsets {
            let mut head = ld.to_vec();
            *head.last_mut().unwrap() = 1;
            let zero = Tensor::zeros(head, DType::I64)?;
            let offsets = Tensor::cat(&[&zero, &lens.cumsum(-1, None)?], -1)?;
            x.segment_reduce(reduce, None, None, Some(&offsets), axis, false, initial)?
        } else {
            x.segment_reduce(reduce, Some(&lens), None, None, axis, false, initial)?
        };
        assert_eq!(out.dtype(), dtype, "{what}: dtype");
        assert_eq!(out.grad_fn().unwrap().name(), "SegmentReduceBackward0");
        close(&format!("{what} value"), &values(&out)?, want, 1e-6, 1e-6);
        out.mul(&weights(out.dims(), dtype)?)?.sum_all()?.backward()?;
        close(&format!("{what} grad"), &values(&x.grad().unwrap())?, want_grad, 1e-6, 1e-6);
    }
    Ok(())
}

#[test]
fn segment_reduce_refusals_are_torchs() -> Result<()> {
    let d = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0], [5])?;
    let l = Tensor::from_slice(&[2i64, 3], [2])?;
    assert_eq!(
        err(d.segment_reduce("sum", None, Some(&l), None, 0, false, None)),
        "segment_reduce(): indices based reduction is not supported yet."
    );
    assert_eq!(
        err(d.segment_reduce("sum", None, None, None, 0, false, None)),
        "segment_reduce(): Either lengths or offsets must be defined."
    );
    assert_eq!(
        err(d.segment_reduce("avg", Some(&l), None, None, 0, false, None)),
        "reduce argument must be either sum, prod, mean, amax or amin, got avg"
    );
    assert_eq!(
        err(d.segment_reduce("sum", Some(&Tensor::from_slice(&[2i64, 2], [2])?), None, None, 0, false, None)),
        "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe."
    );
    let negative = Tensor::from_slice(&[2i64, -1, 4], [3])?;
    assert_eq!(
        err(d.segment_reduce("sum", Some(&negative), None, None, 0, false, None)),
        "lengths contains negative value!"
    );
    assert_eq!(
        err(d.segment_reduce("sum", Some(&l.to_dtype(DType::F32)?), None, None, 0, false, None)),
        "\"_segment_reduce_lengths_cpu_kernel1\" not implemented for 'Float'"
    );
    let float_offsets = Tensor::from_slice(&[0.0f32, 2.0, 5.0], [3])?;
    assert_eq!(
        err(d.segment_reduce("sum", None, None, Some(&float_offsets), 0, false, None)),
        "\"_segment_reduce_offsets_cpu_kernel1\" not implemented for 'Float'"
    );
    assert_eq!(
        err(d.to_dtype(DType::I32)?.segment_reduce("sum", Some(&l), None, None, 0, false, None)),
        "\"_segment_reduce_cpu\" not implemented for 'Int'"
    );
    assert_eq!(
        err(d.segment_reduce("sum", Some(&Tensor::from_slice(&[5i64], ())?), None, None, 0, false, None)),
        "segment_reduce(): Expected axis to be the last dimension of lengths but got 0."
    );
    assert_eq!(
        err(d.reshape([1, 5])?.segment_reduce("sum", Some(&l), None, None, 1, false, None)),
        "segment_reduce(): Expected axis to be the last dimension of lengths but got 1."
    );
    assert_eq!(
        err(d.segment_reduce("sum", Some(&l), None, None, 1, false, None)),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    );
    // "amax"/"amin" are accepted, int32 lengths too; axis=-1 wraps.
    let r = d.segment_reduce("amax", Some(&l.to_dtype(DType::I32)?), None, None, -1, false, None)?;
    assert_eq!(values(&r)?, vec![2.0, 5.0]);
    Ok(())
}

#[test]
fn ormqr_and_geqrf_refusals_are_torchs() -> Result<()> {
    let x = Tensor::from_slice(&[0.3f64, -1.2, 0.7, 2.0, 0.1, -0.4, 1.1, 0.5, -0.9, 0.2, 0.6, -1.5], [4, 3])?;
    let (a, tau) = x.geqrf()?;
    let c = Tensor::zeros([4, 2], DType::F64)?;
    assert_eq!(
        err(Tensor::zeros([3], DType::F32)?.geqrf()),
        "torch.geqrf: input must have at least 2 dimensions."
    );
    assert_eq!(err(Tensor::zeros([3, 3], DType::I32)?.geqrf()), "\"geqrf_cpu\" not implemented for 'Int'");
    assert_eq!(err(Tensor::zeros([3, 3], DType::F16)?.geqrf()), "\"geqrf_cpu\" not implemented for 'Half'");
    let (e0, t0) = Tensor::zeros([0, 3], DType::F32)?.geqrf()?;
    assert_eq!((e0.dims(), t0.dims()), (&[0usize, 3][..], &[0usize][..]));
    assert_eq!(
        err(a.ormqr(&tau, &Tensor::zeros([3, 2], DType::F64)?, true, false)),
        "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]"
    );
    assert_eq!(
        err(a.ormqr(&tau, &c.to_dtype(DType::F32)?, true, false)),
        "torch.ormqr: Expected input and other to have the same dtype, but input has dtypeDouble and other has dtype Float"
    );
    assert_eq!(
        err(a.ormqr(&tau.to_dtype(DType::F32)?, &c, true, false)),
        "torch.ormqr: Expected input and tau to have the same dtype, but input has dtypeDouble and tau has dtype Float"
    );
    assert_eq!(
        err(a.ormqr(&tau.narrow(0, 0, 2)?, &c, true, false)),
        "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"
    );
    assert_eq!(
        err(a.ormqr(&tau.narrow(0, 0, 2)?, &c.transpose(0, 1)?, false, false)),
        "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-1], input.shape[-1])"
    );
    assert_eq!(
        err(a.ormqr(&tau, &Tensor::zeros([3], DType::F64)?, true, false)),
        "torch.ormqr: other must have at least 2 dimensions."
    );
    assert_eq!(
        err(a.ormqr(&tau.unsqueeze(0)?, &c, true, false)),
        "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to 2 and input.ndim is equal to 2"
    );
    let a3 = a.unsqueeze(0)?.expand([2, 4, 3])?;
    assert_eq!(
        err(a3.ormqr(&tau.unsqueeze(0)?.expand([3, 3])?, &c.unsqueeze(0)?.expand([2, 4, 2])?, true, false)),
        "torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got [3]"
    );
    assert_eq!(
        err(a3.ormqr(&tau.unsqueeze(0)?.expand([2, 3])?, &c.unsqueeze(0)?.expand([3, 4, 2])?, true, false)),
        "torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got [3]"
    );
    assert_eq!(
        err(a3.ormqr(&tau.unsqueeze(0)?.expand([2, 3])?, &c, true, false)),
        "torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal to 2 and input.ndim is equal to 3"
    );
    assert_eq!(
        err(a.to_dtype(DType::I32)?.ormqr(&tau.to_dtype(DType::I32)?, &c.to_dtype(DType::I32)?, true, false)),
        "\"ormqr_cpu\" not implemented for 'Int'"
    );
    assert_eq!(
        err(a.to_dtype(DType::I32)?.orgqr(&tau.to_dtype(DType::I32)?)),
        "\"orgqr_cpu\" not implemented for 'Int'"
    );
    Ok(())
}

#[test]
fn review_fixes_match_torch() -> Result<()> {
    // torch 2.15: initial is rounded to the data's dtype (f32 0.1 ties element 0).
    let d = Tensor::from_slice(&[0.1f32, 0.2], [2])?.requires_grad_(true)?;
    let lengths = Tensor::from_slice(&[2i64], [1])?;
    let o = d.segment_reduce("min", Some(&lengths), None, None, 0, false, Some(0.1))?;
    o.sum_all()?.backward()?;
    assert_eq!(d.grad().unwrap().to_vec::<f32>()?, vec![1.0, 0.0]);
    let e =
        d.segment_reduce("min", Some(&lengths), None, None, 0, false, Some(1e40)).unwrap_err().to_string();
    assert!(e.contains("without overflow"), "{e}");
    // An infinite gradient of a max reaches the maximum alone.
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0], [3])?.requires_grad_(true)?;
    let o = x.segment_reduce("max", Some(&Tensor::from_slice(&[3i64], [1])?), None, None, 0, false, None)?;
    o.backward_with(Some(&Tensor::from_slice(&[f64::INFINITY], [1])?), false, false)?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.0, f64::INFINITY]);
    // Huge lengths are an error, not a wrapped span.
    let huge = Tensor::from_slice(&[i64::MAX, i64::MAX, 4], [3])?;
    assert!(x.segment_reduce("sum", Some(&huge), None, None, 0, false, None).is_err());
    assert!(x.segment_reduce("sum", Some(&huge), None, None, 0, true, None).is_err());
    // geqrf: a -0.0 diagonal counts as positive, as LAPACK's SIGN.
    let (a, tau) = Tensor::from_slice(&[-0.0f64, 1.0, 3.0, 2.0], [2, 2])?.geqrf()?;
    assert_eq!(a.to_vec::<f64>()?, vec![-3.0, -2.0, 1.0, -1.0]);
    assert_eq!(tau.to_vec::<f64>()?, vec![1.0, 0.0]);
    Ok(())
}
