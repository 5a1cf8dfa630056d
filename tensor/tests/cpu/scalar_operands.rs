//! Numbers as operands, as torch 2.15 takes them: `add(alpha=...)` in the promoted dtype,
//! `pow`'s shortcuts for common exponents, checked conversions (`pow`, `where`, `clamp`,
//! `masked_fill`), `number - tensor`, and trunc division of bool and half operands. Expected
//! values are torch's outputs (quoted in each test).

use oxtorch_tensor::{tensor, DType, Result, Tensor};

fn bits(t: &Tensor) -> Vec<u64> {
    t.to_f64_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

/// `torch.add(u8[0], i8[100], alpha=2)` is int16 200 (not i8's wrapped -56); `add(f32[0],
/// f16[1000], alpha=100)` is 100000 (not f16's inf); a float alpha on integers, a bool alpha on
/// numbers and an alpha beyond uint8 are torch's errors.
#[test]
fn add_with_alpha_computes_in_the_promoted_dtype() -> Result<()> {
    let u = Tensor::from_vec(vec![0u8], [1])?;
    let i = Tensor::from_vec(vec![100i8], [1])?;
    let out = u.add_scaled(&i, 2)?;
    assert_eq!((out.dtype(), out.to_f64_vec()?), (DType::I16, vec![200.0]));
    let h = tensor!([1000.0]).to_dtype(DType::F16)?;
    assert_eq!(tensor!([0.0]).add_scaled(&h, 100)?.to_f64_vec()?, [100000.0]);
    let ints = Tensor::from_vec(vec![1i64], [1])?;
    let e = ints.add_scaled(&ints, 0.5).unwrap_err().to_string();
    assert!(e.contains("argument alpha must not be a floating point number"), "{e}");
    let e = ints.add_scaled(&ints, true).unwrap_err().to_string();
    assert!(e.contains("Boolean alpha only supported for Boolean results"), "{e}");
    assert!(u.add_scaled(&u, 300).unwrap_err().to_string().contains("uint8_t without overflow"));
    Ok(())
}

/// torch's float32/float64/bfloat16 `pow` by 0.5, -0.5, -1, -2 and 3 is sqrt, rsqrt, reciprocal,
/// `1/(x*x)` and `x*x*x`: `[-0.0, -inf, 4] ** 0.5` is `[-0.0, nan, 2]`, `** -0.5` `[-inf, nan,
/// 0.5]`; `[1.1, -2.3, 3.7] ** 3` in f32 is `x*x*x` (-12.166999816894531, where pow in f64 rounds
/// to -12.166998863220215). float16 keeps pow (`(-0.0) ** 0.5` is 0).
#[test]
fn pow_by_common_numbers_takes_torchs_shortcuts() -> Result<()> {
    let x = tensor!([-0.0, f64::NEG_INFINITY, 4.0]);
    let sq = x.pow(0.5)?.to_f64_vec()?;
    assert!(sq[0] == 0.0 && sq[0].is_sign_negative() && sq[1].is_nan() && sq[2] == 2.0, "{sq:?}");
    let r = x.pow(-0.5)?.to_f64_vec()?;
    assert!(r[0] == f64::NEG_INFINITY && r[1].is_nan() && r[2] == 0.5, "{r:?}");
    for dt in [DType::F64, DType::BF16] {
        let v = x.to_dtype(dt)?.pow(0.5)?.to_f64_vec()?;
        assert!(v[0].is_sign_negative() && v[1].is_nan(), "{dt:?}: {v:?}");
    }
    let h = x.to_dtype(DType::F16)?.pow(0.5)?.to_f64_vec()?;
    assert!(h[0] == 0.0 && h[0].is_sign_positive() && h[1] == f64::INFINITY, "{h:?}");
    assert_eq!(tensor!([-0.0, 2.0]).pow(-1)?.to_f64_vec()?, [f64::NEG_INFINITY, 0.5]);
    assert_eq!(tensor!([-0.0, 2.0]).pow(-2.0)?.to_f64_vec()?, [f64::INFINITY, 0.25]);
    let cube = tensor!([1.1, -2.3, 3.7]).pow(3)?;
    let want: Vec<f64> = [1.3310000896453857f64, -12.166999816894531, 50.65300369262695].into();
    assert_eq!(bits(&cube), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // The gradient is pow's: 3 x^2, and 0.5 / sqrt(x).
    let x = tensor!([2.0, 3.0]).requires_grad_(true)?;
    x.pow(3)?.sum(Vec::<isize>::new(), false)?.backward()?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, [12.0, 27.0]);
    Ok(())
}

/// torch converts these numbers checked: `u8 ** 256`, `f16 ** 1e5`, `where(c, u8, 300)`,
/// `clamp(f32, max=1e39)`, `clamp(f16, min=1e6)`, `f16.masked_fill(m, 1e5)` overflow; `f32 ** 1e39`
/// is inf, `where(c, u8, -1)` wraps to 255 and `u8 + 300` wraps to 44.
#[test]
fn numbers_that_do_not_convert_are_overflow_errors() -> Result<()> {
    let overflow = |r: Result<Tensor>| r.unwrap_err().to_string().contains("without overflow");
    let u = Tensor::from_vec(vec![1u8, 2], [2])?;
    let h = tensor!([1.0, 2.0]).to_dtype(DType::F16)?;
    let c = Tensor::from_vec(vec![true, false], [2])?;
    assert!(overflow(u.pow(256)));
    assert!(overflow(h.pow(1e5)));
    assert!(overflow(h.to_dtype(DType::BF16)?.pow(1e39)));
    assert_eq!(tensor!([2.0]).pow(1e39)?.to_f64_vec()?, [f64::INFINITY]);
    assert!(overflow(Tensor::where_cond(&c, &u, 300)));
    assert_eq!(Tensor::where_cond(&c, &u, -1)?.to_f64_vec()?, [1.0, 255.0]);
    assert!(overflow(tensor!([1.0, 2.0]).clamp_max(1e39)));
    assert!(overflow(h.clamp_min(1e6)));
    assert!(overflow(h.masked_fill(&c, 1e5)));
    assert_eq!(u.add(300)?.to_f64_vec()?, [45.0, 46.0]);
    Ok(())
}

/// `2.5 - u8[1, 200]` is `[1.5, -197.5]`, `1.0 - i32[-2^31]` is 2147483648 (f32 2.1475e9), and `3 -
/// u8[1, 200]` wraps in uint8 to `[2, 59]`.
#[test]
fn a_number_minus_a_tensor_promotes_before_subtracting() {
    let u = Tensor::from_vec(vec![1u8, 200], [2]).unwrap();
    assert_eq!((2.5f64 - &u).to_f64_vec().unwrap(), [1.5, -197.5]);
    let u3 = 3i64 - &u;
    assert_eq!((u3.dtype(), u3.to_f64_vec().unwrap()), (DType::U8, vec![2.0, 59.0]));
    let min = Tensor::from_vec(vec![i32::MIN], [1]).unwrap();
    assert_eq!((1.0f64 - &min).to_f64_vec().unwrap(), [2147483648.0]);
}

/// `div(bool[T, F], 2, rounding_mode='trunc')` is int64 `[0, 0]` (bool ÷ bool is "div_trunc_cpu" not
/// implemented); a float16 quotient is truncated in f32 before rounding (`52.375 / 4.76171875` is
/// 10, not 11); a repeated dim of a 0-d tensor is an error.
#[test]
fn trunc_division_of_bool_and_half_operands() -> Result<()> {
    let b = Tensor::from_vec(vec![true, false], [2])?;
    let q = b.div_rounding(2, Some("trunc"))?;
    assert_eq!((q.dtype(), q.to_f64_vec()?), (DType::I64, vec![0.0, 0.0]));
    let two_one = Tensor::from_vec(vec![2i64, 1], [2])?;
    assert_eq!(b.div_rounding(&two_one, Some("trunc"))?.to_f64_vec()?, [0.0, 0.0]);
    assert!(b
        .div_rounding(&b, Some("trunc"))
        .unwrap_err()
        .to_string()
        .contains("not implemented for 'Bool'"));
    let n = tensor!([52.375]).to_dtype(DType::F16)?;
    let d = tensor!([4.76171875]).to_dtype(DType::F16)?;
    assert_eq!(n.div_rounding(&d, Some("trunc"))?.to_f64_vec()?, [10.0]);
    let e = Tensor::zeros((), DType::F32)?.sum(vec![0, -1], false).unwrap_err().to_string();
    assert!(e.contains("dim 0 appears multiple times"), "{e}");
    Ok(())
}
