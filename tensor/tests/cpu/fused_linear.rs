//! `linear` with a bias on f32 CPU tensors (`NnOp::Linear`: the bias added as the product's tiles
//! are first written where our AVX2 kernel runs the product, after it elsewhere) against the
//! composition that f64 tensors take: batched and 2-D inputs, products small enough for the
//! fallback and large enough for the kernel (several passes over k, partial tiles), non-contiguous
//! inputs, weights and biases, and gradients of first and second order.

use oxtorch_tensor::autograd::grad;
use oxtorch_tensor::{DType, Result, Tensor};

/// Asserts equal shapes and values within `tol` relative to 1 + the largest |value| (sums of
/// many f32 terms of either sign lose precision relative to their terms, not to the result).
fn assert_close(got: &Tensor, want: &Tensor, tol: f64, what: &str) -> Result<()> {
    assert_eq!(got.dims(), want.dims(), "{what}");
    let (a, e) = (got.to_f64_vec()?, want.to_f64_vec()?);
    assert!(!a.is_empty(), "{what}: empty");
    let scale = 1.0 + e.iter().fold(0f64, |m, x| m.max(x.abs()));
    for (i, (a, e)) in a.iter().zip(&e).enumerate() {
        assert!((a - e).abs() <= tol * scale, "{what}: element {i}: {a} vs {e}");
    }
    Ok(())
}

/// (input dims, out features): the last input dim is `in`.
const CASES: [(&[usize], usize); 5] = [
    (&[5, 7], 3),
    (&[2, 3, 9], 4),
    // the kernel's size: 200 rows, 140 columns, 450 values of k (two passes), partial tiles
    (&[2, 100, 450], 140),
    // just over the kernel's fewest multiply-adds (2^21)
    (&[97, 65], 333),
    (&[0, 8], 5),
];

/// The three operands in f64: contiguous, or each viewed through a transpose or a step.
fn operands(dims: &[usize], out: usize, strided: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let k = *dims.last().unwrap();
    let f64s = |d: Vec<usize>| Tensor::randn(d, ())?.to_dtype(DType::F64);
    if !strided {
        return Ok((f64s(dims.to_vec())?, f64s(vec![out, k])?, f64s(vec![out])?));
    }
    let mut rev = dims.to_vec();
    let r = rev.len();
    rev.swap(r - 2, r - 1);
    let x = f64s(rev)?.transpose(-1, -2)?;
    let w = f64s(vec![k, out])?.t()?;
    let b = f64s(vec![2 * out])?.slice(0, .., 2)?;
    Ok((x, w, b))
}

#[test]
fn fused_linear_matches_the_composition() -> Result<()> {
    oxtorch_tensor::manual_seed(31);
    for (dims, out) in CASES {
        for strided in [false, true] {
            let (x, w, b) = operands(dims, out, strided)?;
            if strided && x.numel() > 0 {
                assert!(!x.is_contiguous() && !w.is_contiguous() && !b.is_contiguous());
            }
            let want = x.linear(&w, Some(&b))?;
            let f32s = |t: &Tensor| t.to_dtype(DType::F32);
            let got = f32s(&x)?.linear(&f32s(&w)?, Some(&f32s(&b)?))?;
            assert_eq!(got.dtype(), DType::F32);
            if want.numel() == 0 {
                assert_eq!(got.dims(), want.dims());
                continue;
            }
            assert_close(&got, &want, 1e-5, &format!("{dims:?} -> {out}, strided {strided}"))?;
        }
    }
    Ok(())
}

#[test]
fn fused_linear_gradients_match_the_composition() -> Result<()> {
    oxtorch_tensor::manual_seed(32);
    for (dims, out) in CASES[..4].iter().copied() {
        let (x, w, b) = operands(dims, out, true)?;
        let mut ydims = dims.to_vec();
        *ydims.last_mut().unwrap() = out;
        let weights = Tensor::randn(ydims, ())?.to_dtype(DType::F64)?;
        // First-order gradients of a weighted sum, and the second-order ones of the squared
        // input gradient's sum (through the recorded backward).
        let grads = |dtype: DType| -> Result<Vec<Tensor>> {
            let leaf = |t: &Tensor| t.to_dtype(dtype)?.requires_grad_(true);
            let (x, w, b) = (leaf(&x)?, leaf(&w)?, leaf(&b)?);
            let y = x.linear(&w, Some(&b))?.to_dtype(DType::F64)?;
            let loss = y.mul(&weights)?.square()?.sum_all()?;
            let first = grad(&[loss], &[x.clone(), w.clone(), b.clone()], None, false, true, false)?;
            let first: Vec<Tensor> = first.into_iter().map(|g| g.expect("a gradient")).collect();
            let second = grad(&[first[0].square()?.sum_all()?], &[x, w], None, false, false, false)?;
            let mut all = first;
            all.extend(second.into_iter().map(|g| g.expect("a gradient")));
            all.into_iter().map(|g| g.to_dtype(DType::F64)).collect()
        };
        let (got, want) = (grads(DType::F32)?, grads(DType::F64)?);
        for (i, (a, e)) in got.iter().zip(&want).enumerate() {
            assert_close(a, e, 1e-4, &format!("{dims:?} -> {out}: gradient {i}"))?;
        }
    }
    Ok(())
}
