//! finfo/iinfo, torch.testing (assert_close messages, make_tensor ranges and layouts), and the
//! small tensor methods of `strides_and_complex.rs` (stride_at, angle, the complex no-ops, unsafe_chunk/split,
//! as_strided_scatter with gradients, empty_permuted, to_nested) against torch
//! (dtype_info_and_testing_golden.rs, from make_dtype_info_and_testing_golden.py), with torch's messages for bad input.

use oxtorch_tensor::testing::{assert_close, assert_close_with, make_tensor, AssertCloseOptions};
use oxtorch_tensor::{DType, NestedList, Result, Scalar, Tensor};

use crate::dtype_info_and_testing_golden::{
    ANGLE, ASSERT_CLOSE, ASS_BOUNDS, ASS_SHAPE, AS_STRIDED_SCATTER, EMPTY_PERMUTED, FINFO, IINFO,
    INFO_ERRORS, MAKE_TENSOR_ERRORS, MAKE_TENSOR_INT_RANGES, MAKE_TENSOR_LAYOUT, ONLY_ATOL, ONLY_RTOL,
    STRIDE, STRIDE_AT,
};

fn dtype_of(name: &str) -> DType {
    match name {
        "bool" => DType::Bool,
        "u8" => DType::U8,
        "i8" => DType::I8,
        "i16" => DType::I16,
        "i32" => DType::I32,
        "i64" => DType::I64,
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

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn tensor(values: &[f64], shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::from_slice(values, shape)?.to_dtype(dtype)
}

#[test]
fn finfo_matches_torch() -> Result<()> {
    for &(dt, bits, eps, max, min, tiny, normal, resolution, repr) in FINFO {
        let f = oxtorch_core::finfo(dtype_of(dt))?;
        assert_eq!(f.bits, bits, "{dt}");
        exact(
            dt,
            &[f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution],
            &[eps, max, min, tiny, normal, resolution],
        );
        assert_eq!(f.dtype, dtype_of(dt));
        assert_eq!(f.to_string(), repr);
    }
    Ok(())
}

#[test]
fn iinfo_matches_torch() -> Result<()> {
    for &(dt, bits, max, min, repr) in IINFO {
        let i = oxtorch_core::iinfo(dtype_of(dt))?;
        assert_eq!((i.bits, i.max, i.min, i.dtype), (bits, max, min, dtype_of(dt)), "{dt}");
        assert_eq!(i.to_string(), repr);
    }
    Ok(())
}

#[test]
fn finfo_and_iinfo_reject_other_dtypes_with_torch_messages() {
    for &(dt, finfo_err, iinfo_err) in INFO_ERRORS {
        let dtype = dtype_of(dt);
        if finfo_err.is_empty() {
            assert!(oxtorch_core::finfo(dtype).is_ok(), "{dt}");
        } else {
            assert_eq!(err(oxtorch_core::finfo(dtype)), finfo_err, "{dt}");
        }
        if iinfo_err.is_empty() {
            assert!(oxtorch_core::iinfo(dtype).is_ok(), "{dt}");
        } else {
            assert_eq!(err(oxtorch_core::iinfo(dtype)), iinfo_err, "{dt}");
        }
    }
}

#[test]
fn assert_close_gives_torch_messages() -> Result<()> {
    for (case, &(ad, ash, av, ed, esh, ev, tol, equal_nan, check_dtype, message)) in
        ASSERT_CLOSE.iter().enumerate()
    {
        let a = tensor(av, ash, dtype_of(ad))?;
        let e = tensor(ev, esh, dtype_of(ed))?;
        let options = AssertCloseOptions {
            rtol: tol.map(|t| t.0),
            atol: tol.map(|t| t.1),
            equal_nan,
            check_dtype,
            ..AssertCloseOptions::default()
        };
        let got = assert_close_with(&a, &e, &options);
        if message.is_empty() {
            assert!(got.is_ok(), "case {case}: {:?}", got.err());
        } else {
            assert_eq!(err(got), message, "case {case}");
        }
    }
    Ok(())
}

#[test]
fn assert_close_defaults_tolerance_pairs_and_strides() -> Result<()> {
    let a = Tensor::from_slice(&[1.0f32, 2.0], [2])?;
    assert!(assert_close(&a, &a.copy()?).is_ok());
    let b = Tensor::from_slice(&[1.0f32, 2.5], [2])?;
    assert!(err(assert_close(&a, &b)).starts_with("Tensor-likes are not close!"));
    let only = |rtol, atol| AssertCloseOptions { rtol, atol, ..AssertCloseOptions::default() };
    assert_eq!(err(assert_close_with(&a, &a, &only(Some(0.1), None))), ONLY_RTOL);
    assert_eq!(err(assert_close_with(&a, &a, &only(None, Some(0.1)))), ONLY_ATOL);
    let t = Tensor::ones([2, 3], DType::F32)?.transpose(0, 1)?;
    let c = Tensor::ones([3, 2], DType::F32)?;
    assert!(assert_close(&t, &c).is_ok());
    let strided = AssertCloseOptions { check_stride: true, ..AssertCloseOptions::default() };
    assert_eq!(err(assert_close_with(&t, &c, &strided)), STRIDE);
    Ok(())
}

#[test]
fn make_tensor_integer_ranges_match_torch() -> Result<()> {
    for &(dt, low, high, min, max) in MAKE_TENSOR_INT_RANGES {
        let t = make_tensor(&[20000], dtype_of(dt), low, high, false, false)?;
        assert_eq!(t.dtype(), dtype_of(dt));
        let v = t.to_dtype(DType::I64)?.to_vec::<i64>()?;
        let (lo, hi) = (v.iter().min().copied(), v.iter().max().copied());
        assert_eq!((lo, hi), (Some(min), Some(max)), "{dt} low={low:?} high={high:?}");
    }
    Ok(())
}

#[test]
fn make_tensor_float_ranges() -> Result<()> {
    for dt in ["f16", "bf16", "f32", "f64"] {
        let v = values(&make_tensor(&[5000], dtype_of(dt), None, None, false, false)?)?;
        assert!(v.iter().all(|&x| (-9.0..=9.0).contains(&x)), "{dt}");
        assert!(v.iter().any(|&x| x < -8.0) && v.iter().any(|&x| x > 8.0), "{dt}: spread");
        let v = values(&make_tensor(&[1000], dtype_of(dt), Some(2.0), Some(3.0), false, false)?)?;
        assert!(v.iter().all(|&x| (2.0..=3.0).contains(&x)), "{dt}: [2, 3)");
    }
    // The whole float32 range: drawn at half scale and doubled, finite.
    let v = values(&make_tensor(&[1000], DType::F32, Some(-1e39), Some(1e39), false, false)?)?;
    assert!(v.iter().all(|x| x.is_finite()));
    assert!(v.iter().any(|&x| x.abs() > 1e37));
    let g = make_tensor(&[3], DType::F64, None, None, true, false)?;
    assert!(g.requires_grad() && g.is_leaf());
    Ok(())
}

#[test]
fn make_tensor_layouts_match_torch() -> Result<()> {
    for &(shape, dt, noncontiguous, strides, offset, contiguous) in MAKE_TENSOR_LAYOUT {
        let t = make_tensor(shape, dtype_of(dt), None, None, false, noncontiguous)?;
        assert_eq!(t.dims(), shape);
        assert_eq!(t.is_contiguous(), contiguous, "{shape:?}");
        if t.numel() > 0 {
            assert_eq!(t.strides(), strides, "{shape:?}");
            assert_eq!(t.storage_offset(), offset, "{shape:?}");
        }
    }
    let t = make_tensor(&[4, 5], DType::F32, None, None, true, true)?;
    assert!(t.requires_grad() && !t.is_contiguous());
    t.sum_all()?.backward()?;
    assert_eq!(values(&t.grad().unwrap())?, vec![1.0; 20]);
    Ok(())
}

#[test]
fn make_tensor_errors_match_torch() {
    for &(dt, low, high, requires_grad, message) in MAKE_TENSOR_ERRORS {
        assert_eq!(err(make_tensor(&[3], dtype_of(dt), low, high, requires_grad, false)), message, "{dt}");
    }
}

#[test]
fn angle_matches_torch() -> Result<()> {
    for &(dt, x, want, out_dtype) in ANGLE {
        let t = tensor(x, &[x.len()], dtype_of(dt))?;
        let r = t.angle()?;
        assert_eq!(r.dtype(), dtype_of(out_dtype), "{dt}");
        exact(&format!("angle {dt}"), &values(&r)?, want);
    }
    let x = Tensor::from_slice(&[-1.0f32, 2.0, -0.0], [3])?.requires_grad_(true)?;
    let y = x.angle()?;
    assert!(y.requires_grad());
    exact("angle grad value", &values(&y)?, &[std::f32::consts::PI as f64, 0.0, 0.0]);
    y.sum_all()?.backward()?;
    exact("angle grad", &values(&x.grad().unwrap())?, &[0.0, 0.0, 0.0]);
    Ok(())
}

#[test]
fn stride_at_matches_torch() -> Result<()> {
    for &(shape, dim, want, message) in STRIDE_AT {
        let mut t = Tensor::zeros(shape, DType::F32)?;
        if shape.len() > 1 {
            t = t.transpose(0, -1)?;
        }
        match want {
            Some(s) => assert_eq!(t.stride_at(dim)?, s, "{shape:?} {dim}"),
            None => assert_eq!(err(t.stride_at(dim)), message, "{shape:?} {dim}"),
        }
    }
    Ok(())
}

#[test]
fn complex_conveniences_are_identities_on_real_tensors() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0], [3])?;
    assert!(!x.is_complex() && !x.is_conj() && !x.is_neg());
    for y in [x.conj(), x.resolve_conj(), x.resolve_neg(), x.real()] {
        assert_eq!(y.dims(), x.dims());
        assert_eq!(values(&y)?, vec![1.0, -2.0, 3.0]);
        // The same storage: a write through x shows in y.
        assert_eq!(y.storage_offset(), x.storage_offset());
    }
    x.fill_(7.0)?;
    assert_eq!(values(&x.conj())?, vec![7.0; 3]);
    let i = Tensor::from_slice(&[1i64, 2], [2])?;
    assert_eq!(i.real().dtype(), DType::I64);
    Ok(())
}

#[test]
fn unsafe_chunk_and_split_are_chunk_and_split() -> Result<()> {
    let x = Tensor::arange(5, DType::F32)?;
    let sizes = |v: Vec<Tensor>| v.iter().map(|t| t.dims().to_vec()).collect::<Vec<_>>();
    assert_eq!(sizes(x.unsafe_chunk(2, 0)?), vec![vec![3], vec![2]]);
    assert_eq!(sizes(x.unsafe_split(2, 0)?), vec![vec![2], vec![2], vec![1]]);
    assert_eq!(sizes(x.unsafe_split_with_sizes(&[1, 4], -1)?), vec![vec![1], vec![4]]);
    assert_eq!(values(&x.unsafe_split(2, 0)?[2])?, vec![4.0]);
    assert!(x.unsafe_chunk(0, 0).is_err());
    Ok(())
}

#[test]
fn as_strided_scatter_matches_torch_with_gradients() -> Result<()> {
    for &(shape, src_shape, size, stride, offset, want, grad_self, grad_src) in AS_STRIDED_SCATTER {
        let n: usize = shape.iter().product();
        let m: usize = src_shape.iter().product();
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 1.5 - 2.0).collect();
        let ss: Vec<f64> = (1..=m).map(|i| -(i as f64)).collect();
        let x = Tensor::from_slice(&xs, shape)?.requires_grad_(true)?;
        let src = Tensor::from_slice(&ss, src_shape)?.requires_grad_(true)?;
        let out = x.as_strided_scatter(&src, size, stride, offset)?;
        assert_eq!(out.dims(), shape);
        exact(&format!("as_strided_scatter {shape:?}"), &values(&out)?, want);
        let w: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        out.mul(&Tensor::from_slice(&w, shape)?)?.sum_all()?.backward()?;
        exact(&format!("grad self {shape:?}"), &values(&x.grad().unwrap())?, grad_self);
        if m > 0 {
            exact(&format!("grad src {shape:?}"), &values(&src.grad().unwrap())?, grad_src);
        }
    }
    // src is cast to self's dtype; the offset defaults to 0.
    let x = Tensor::arange(4, DType::I64)?;
    let out = x.as_strided_scatter(&Tensor::from_slice(&[1.5f32, 2.5], [2])?, &[2], &[2], None)?;
    assert_eq!(out.dtype(), DType::I64);
    assert_eq!(out.to_vec::<i64>()?, vec![1, 1, 2, 3]);
    Ok(())
}

#[test]
fn as_strided_scatter_errors_match_torch() -> Result<()> {
    let a = Tensor::arange(9, DType::F32)?;
    let (three, two_by_two) = (Tensor::ones([3], DType::F32)?, Tensor::ones([2, 2], DType::F32)?);
    assert_eq!(err(a.as_strided_scatter(&three, &[2, 2], &[3, 1], Some(1))), ASS_SHAPE);
    assert_eq!(err(a.as_strided_scatter(&two_by_two, &[2, 2], &[3, 1], Some(8))), ASS_BOUNDS);
    assert!(a.as_strided_scatter(&Tensor::ones([2], DType::F32)?, &[2, 2], &[1], None).is_err());
    Ok(())
}

#[test]
fn empty_permuted_matches_torch() -> Result<()> {
    for &(size, layout, strides, message) in EMPTY_PERMUTED {
        let r = Tensor::empty_permuted(size, layout, DType::F32);
        if message.is_empty() {
            let t = r?;
            assert_eq!(t.dims(), size);
            assert_eq!(t.strides(), strides, "{size:?} {layout:?}");
            assert_eq!(t.dtype(), DType::F32);
        } else {
            assert_eq!(err(r), message, "{size:?} {layout:?}");
        }
    }
    assert_eq!(Tensor::empty_permuted(&[2], &[0], ())?.dtype(), DType::default_float());
    Ok(())
}

#[test]
fn to_nested_is_tolist() -> Result<()> {
    let f = |v: f64| NestedList::Scalar(Scalar::Float(v));
    let x = Tensor::from_slice(&[1.0f32, 2.5, -3.0, 4.0], [2, 2])?;
    assert_eq!(
        x.to_nested()?,
        NestedList::List(vec![
            NestedList::List(vec![f(1.0), f(2.5)]),
            NestedList::List(vec![f(-3.0), f(4.0)])
        ])
    );
    assert_eq!(Tensor::scalar_tensor(7i64, DType::I64)?.to_nested()?, NestedList::Scalar(Scalar::Int(7)));
    let b = Tensor::from_slice(&[1.0f32, 0.0], [2])?.to_dtype(DType::Bool)?;
    assert_eq!(
        b.to_nested()?,
        NestedList::List(vec![
            NestedList::Scalar(Scalar::Bool(true)),
            NestedList::Scalar(Scalar::Bool(false))
        ])
    );
    assert_eq!(
        Tensor::zeros([2, 0], DType::F32)?.to_nested()?,
        NestedList::List(vec![NestedList::List(vec![]), NestedList::List(vec![])])
    );
    // A transposed (non-contiguous) view lists in its logical order.
    let t = Tensor::from_slice(&[1i64, 2, 3, 4, 5, 6], [2, 3])?.transpose(0, 1)?;
    let i = |v: i64| NestedList::Scalar(Scalar::Int(v));
    assert_eq!(
        t.to_nested()?,
        NestedList::List(vec![
            NestedList::List(vec![i(1), i(4)]),
            NestedList::List(vec![i(2), i(5)]),
            NestedList::List(vec![i(3), i(6)]),
        ])
    );
    Ok(())
}

#[test]
fn as_strided_scatter_counts_a_dense_permuted_self_in_memory_order() -> Result<()> {
    // torch: as_strided_scatter(zeros(2, 3).t(), [1, 2], (2,), (1,)) = [[1, 0], [2, 0], [0, 0]].
    let z = Tensor::zeros([2, 3], DType::F32)?.t()?;
    let out = z.as_strided_scatter(&Tensor::from_vec(vec![1.0f32, 2.0], [2])?, &[2], &[1], None)?;
    assert_eq!(out.dims(), &[3, 2]);
    assert_eq!(out.to_f64_vec()?, vec![1.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    // A 3-d permutation: storage positions 1, 6, 11 (values 1, 6, 11) are overwritten.
    let x = Tensor::arange(24i64, DType::F64)?.reshape([2, 3, 4])?.permute(vec![2, 0, 1])?;
    let out = x.as_strided_scatter(&Tensor::full([3], -1.0, DType::F64)?, &[3], &[5], Some(1))?;
    let want: Vec<f64> =
        x.to_f64_vec()?.iter().map(|&v| if [1.0, 6.0, 11.0].contains(&v) { -1.0 } else { v }).collect();
    assert_eq!(out.to_f64_vec()?, want);
    Ok(())
}

#[test]
fn constant_pad_nd_crops_each_negative_pad_first() -> Result<()> {
    let x = Tensor::arange(3i64, DType::F32)?;
    for pad in [[2isize, -4], [-4, 2], [-2, -2]] {
        let err = x.constant_pad_nd(&pad, 0.0).unwrap_err().to_string();
        assert!(err.contains("narrow(): length must be non-negative."), "{pad:?}: {err}");
    }
    assert_eq!(x.constant_pad_nd(&[1, -2], 7.0)?.to_f64_vec()?, vec![7.0, 0.0]);
    Ok(())
}
