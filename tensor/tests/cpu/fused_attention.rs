//! The CPU attention kernel (`NnOp::Attention`, taken by `scaled_dot_product_attention` on rank-4
//! f32, f16 and bf16 inputs without dropout, where autograd records nothing) against the
//! composition that f64 inputs take: masks (float, bool, broadcast, fully masked rows), causal
//! masking with fewer or more queries than keys, grouped key/value heads, non-contiguous inputs,
//! query blocks split across tasks, NaN. Under autograd the composition runs in f32 too: its values
//! must match the kernel's, and its gradients (first and second order) the f64 ones.

use oxtorch_tensor::autograd::grad;
use oxtorch_tensor::{DType, Result, Tensor};

/// One attention geometry: batch, query heads, key/value heads, queries, keys, head width, value width.
#[derive(Clone, Copy, Debug)]
struct Case {
    b: usize,
    h: usize,
    hk: usize,
    l: usize,
    s: usize,
    e: usize,
    ev: usize,
}

const fn case(b: usize, h: usize, hk: usize, l: usize, s: usize, e: usize, ev: usize) -> Case {
    Case { b, h, hk, l, s, e, ev }
}

const CASES: [Case; 8] = [
    // a BERT-like block, shrunk
    case(2, 3, 3, 16, 16, 8, 8),
    // rows that are not a multiple of the kernel's six, value width apart from the key width
    case(1, 2, 2, 7, 11, 5, 3),
    // several query blocks per head (at most 96 rows each)
    case(1, 1, 1, 200, 40, 16, 16),
    // long keys: query blocks of 24 rows
    case(1, 2, 2, 30, 1500, 4, 6),
    // grouped key/value heads
    case(2, 6, 2, 9, 13, 8, 8),
    // one query (decoding)
    case(2, 4, 2, 1, 37, 16, 16),
    // more queries than keys
    case(1, 2, 1, 12, 5, 4, 4),
    // one key
    case(1, 1, 1, 4, 1, 3, 2),
];

/// The mask variants: none, causal, a float padding mask `[B, 1, 1, S]`, a float `[L, S]`
/// mask, a bool `[B, 1, L, S]` mask.
const MASKS: [&str; 5] = ["none", "causal", "padding", "square", "bool"];

/// `(q, k, v, mask)` for `c`, in f64 (for the composition) from a seed.
fn inputs(c: &Case, mask: &str) -> Result<(Tensor, Tensor, Tensor, Option<Tensor>)> {
    let f64s = |dims: Vec<usize>| Tensor::randn(dims, ())?.to_dtype(DType::F64);
    let q = f64s(vec![c.b, c.h, c.l, c.e])?;
    let k = f64s(vec![c.b, c.hk, c.s, c.e])?;
    let v = f64s(vec![c.b, c.hk, c.s, c.ev])?;
    let m = match mask {
        "padding" => {
            // the last key of batch 0 padded, and with several keys, the first two of the last batch
            let mut m = vec![0.0; c.b * c.s];
            m[c.s - 1] = f64::NEG_INFINITY;
            if c.s > 2 {
                m[(c.b - 1) * c.s] = -1e9;
                m[(c.b - 1) * c.s + 1] = -1e9;
            }
            Some(Tensor::from_vec(m, [c.b, 1, 1, c.s])?)
        }
        "square" => Some(f64s(vec![c.l, c.s])?),
        "bool" => Some(Tensor::rand([c.b, 1, c.l, c.s], ())?.gt(0.3)?),
        _ => None,
    };
    Ok((q, k, v, m))
}

fn sdpa(q: &Tensor, k: &Tensor, v: &Tensor, m: Option<&Tensor>, causal: bool, c: &Case) -> Result<Tensor> {
    q.scaled_dot_product_attention(k, v, m, 0.0, causal, None, c.hk != c.h)
}

/// Asserts equal shapes and values within `tol` (relative to 1 + |value|), NaN matching NaN.
fn assert_close(got: &Tensor, want: &Tensor, tol: f64, what: &str) -> Result<()> {
    assert_eq!(got.dims(), want.dims(), "{what}");
    let (a, e) = (got.to_f64_vec()?, want.to_f64_vec()?);
    for (i, (a, e)) in a.iter().zip(&e).enumerate() {
        let ok = (a.is_nan() && e.is_nan()) || (a - e).abs() <= tol * (1.0 + e.abs());
        assert!(ok, "{what}: element {i}: fused {a} vs composed {e}");
    }
    Ok(())
}

#[test]
fn fused_attention_matches_the_composition() -> Result<()> {
    oxtorch_tensor::manual_seed(21);
    for c in &CASES {
        for mask in MASKS {
            let (q, k, v, m) = inputs(c, mask)?;
            let causal = mask == "causal";
            let want = sdpa(&q, &k, &v, m.as_ref(), causal, c)?;
            for (dtype, tol) in [(DType::F32, 1e-5), (DType::BF16, 3e-2), (DType::F16, 5e-3)] {
                let (qd, kd, vd) = (q.to_dtype(dtype)?, k.to_dtype(dtype)?, v.to_dtype(dtype)?);
                let md = match &m {
                    Some(m) if m.dtype() == DType::F64 => Some(m.to_dtype(dtype)?),
                    other => other.clone(),
                };
                let got = sdpa(&qd, &kd, &vd, md.as_ref(), causal, c)?;
                assert_eq!(got.dtype(), dtype);
                // The reference from inputs rounded the same way.
                let want = if dtype == DType::F32 {
                    want.clone()
                } else {
                    let r = |t: &Tensor| t.to_dtype(DType::F64);
                    let mr = md.as_ref().map(|m| if m.dtype() == DType::Bool { Ok(m.clone()) } else { r(m) });
                    sdpa(&r(&qd)?, &r(&kd)?, &r(&vd)?, mr.transpose()?.as_ref(), causal, c)?
                };
                assert_close(&got, &want, tol, &format!("{c:?} mask {mask} {dtype}"))?;
            }
        }
    }
    Ok(())
}

#[test]
fn fused_attention_reads_strided_inputs_and_masks_whole_rows() -> Result<()> {
    oxtorch_tensor::manual_seed(22);
    let c = case(2, 3, 3, 10, 14, 8, 6);
    let (q, k, v, _) = inputs(&c, "none")?;
    // `[B, L, H, E]` storage viewed as `[B, H, L, E]`, as a model's head split gives.
    let strided = |t: &Tensor| t.transpose(1, 2)?.contiguous()?.transpose(1, 2);
    let (qs, ks, vs) = (strided(&q)?, strided(&k)?, strided(&v)?);
    assert!(!qs.is_contiguous());
    // Query row 3 masked everywhere: zeros, as the composition's safe softmax gives.
    let mut m = vec![0.0; c.l * c.s];
    m[3 * c.s..4 * c.s].fill(f64::NEG_INFINITY);
    let m = Tensor::from_vec(m, [c.l, c.s])?;
    let want = sdpa(&q, &k, &v, Some(&m), false, &c)?;
    let f32s = |t: &Tensor| t.to_dtype(DType::F32);
    let got = sdpa(&f32s(&qs)?, &f32s(&ks)?, &f32s(&vs)?, Some(&f32s(&m)?), false, &c)?;
    assert_close(&got, &want, 1e-5, "strided")?;
    assert!(got.narrow(2, 3, 1)?.to_f64_vec()?.iter().all(|&x| x == 0.0));
    Ok(())
}

#[test]
fn fused_attention_propagates_nan_as_the_composition() -> Result<()> {
    oxtorch_tensor::manual_seed(23);
    let c = case(1, 2, 2, 8, 9, 4, 4);
    let (q, k, v, _) = inputs(&c, "none")?;
    // A NaN key poisons every row; a NaN query only its own row.
    for (which, at) in [("q", [0, 1, 2, 0]), ("k", [0, 0, 5, 3])] {
        let (q, k) =
            if which == "q" { (with_nan(&q, at)?, k.clone()) } else { (q.clone(), with_nan(&k, at)?) };
        let want = sdpa(&q, &k, &v, None, false, &c)?;
        let f32s = |t: &Tensor| t.to_dtype(DType::F32);
        let got = sdpa(&f32s(&q)?, &f32s(&k)?, &f32s(&v)?, None, false, &c)?;
        assert!(want.to_f64_vec()?.iter().any(|x| x.is_nan()), "the case has NaN");
        assert_close(&got, &want, 1e-5, &format!("NaN in {which}"))?;
    }
    Ok(())
}

#[test]
fn fused_attention_skips_hidden_keys_exactly() -> Result<()> {
    oxtorch_tensor::manual_seed(26);
    let lowest = f32::MIN as f64;
    // Keys `0..s`; batch 0 hides its first three (left padding, `-inf`), batch 1 its last four
    // (right padding, transformers' `finfo.min`) and one key in the middle.
    for c in [case(2, 2, 1, 30, 12, 8, 5), case(2, 3, 3, 130, 140, 4, 4)] {
        let (q, k, v, _) = inputs(&c, "none")?;
        let mut pad = vec![0.0; c.b * c.s];
        pad[..3].fill(f64::NEG_INFINITY);
        pad[2 * c.s - 4..].fill(lowest);
        pad[c.s + c.s / 2] = f64::NEG_INFINITY;
        let pad = Tensor::from_vec(pad.clone(), [c.b, 1, 1, c.s])?;
        // Per-row masks: the padding, plus row 1 of batch 1 hiding every key (a uniform average
        // with `finfo.min`) and row 2 of batch 0 seeing only key 5.
        let mut rows = pad.expand([c.b, 1, c.l, c.s])?.to_f64_vec()?;
        rows[(c.l + 1) * c.s..(c.l + 2) * c.s].fill(lowest);
        rows[2 * c.s..3 * c.s].fill(f64::NEG_INFINITY);
        rows[2 * c.s + 5] = 0.0;
        let rows = Tensor::from_vec(rows, [c.b, 1, c.l, c.s])?;
        for (what, m) in [("padding", pad), ("rows", rows)] {
            let want = sdpa(&q, &k, &v, Some(&m), false, &c)?;
            let f32s = |t: &Tensor| t.to_dtype(DType::F32);
            let got = sdpa(&f32s(&q)?, &f32s(&k)?, &f32s(&v)?, Some(&f32s(&m)?), false, &c)?;
            assert_close(&got, &want, 1e-5, &format!("{c:?} {what}"))?;
        }
    }
    Ok(())
}

#[test]
fn fused_attention_reads_hidden_keys_that_are_not_finite() -> Result<()> {
    oxtorch_tensor::manual_seed(27);
    let c = case(1, 2, 2, 8, 9, 4, 4);
    let (q, k, v, _) = inputs(&c, "none")?;
    // The last two keys padded: a NaN in a padded key or value, or an infinite query element
    // (an infinite score at a padded key) still poisons the rows, as in the composition
    // (`NaN + mask`, `0 · NaN`, `inf + mask`).
    let mut m = vec![0.0; c.s];
    m[c.s - 2..].fill(f64::NEG_INFINITY);
    let m = Tensor::from_vec(m, [1, 1, 1, c.s])?;
    let at = [0, 1, c.s - 1, 2];
    let inf_q = with_value(&q, [0, 1, 3, 2], f64::INFINITY)?;
    // Column 2 of the keys -1 where visible, +1 where padded: that query row's visible scores
    // are -inf (zeros if the padded keys were skipped), its padded ones +inf + mask = NaN.
    let mut signed = k.to_f64_vec()?;
    for (j, row) in signed.chunks_exact_mut(c.e).enumerate() {
        row[2] = if j % c.s < c.s - 2 { -1.0 } else { 1.0 };
    }
    let signed = Tensor::from_vec(signed, k.dims().to_vec())?;
    let cases = [
        ("k nan", q.clone(), with_nan(&k, at)?, v.clone()),
        ("v nan", q.clone(), k.clone(), with_nan(&v, at)?),
        ("q inf", inf_q, signed, v.clone()),
    ];
    for (what, q, k, v) in cases {
        let want = sdpa(&q, &k, &v, Some(&m), false, &c)?;
        assert!(want.to_f64_vec()?.iter().any(|x| x.is_nan()), "{what}: the case has NaN");
        let f32s = |t: &Tensor| t.to_dtype(DType::F32);
        let got = sdpa(&f32s(&q)?, &f32s(&k)?, &f32s(&v)?, Some(&f32s(&m)?), false, &c)?;
        assert_close(&got, &want, 1e-5, what)?;
    }
    Ok(())
}

/// A copy of `t` with element `at` set to NaN.
fn with_nan(t: &Tensor, at: [usize; 4]) -> Result<Tensor> {
    with_value(t, at, f64::NAN)
}

/// A copy of `t` with element `at` set to `x`.
fn with_value(t: &Tensor, at: [usize; 4], x: f64) -> Result<Tensor> {
    let mut v = t.to_f64_vec()?;
    let d = t.dims();
    v[((at[0] * d[1] + at[1]) * d[2] + at[2]) * d[3] + at[3]] = x;
    Tensor::from_vec(v, d.to_vec())
}

#[test]
fn recorded_attention_matches_the_kernel_and_f64_gradients() -> Result<()> {
    oxtorch_tensor::manual_seed(24);
    for c in [CASES[0], CASES[1], CASES[4], CASES[6]] {
        for mask in ["none", "causal", "square"] {
            let (q, k, v, m) = inputs(&c, mask)?;
            let causal = mask == "causal";
            let weights = Tensor::randn([c.b, c.h, c.l, c.ev], ())?.to_dtype(DType::F64)?;
            // Gradients of a weighted sum w.r.t. q, k, v (and the mask), in `dtype`.
            let grads = |dtype: DType| -> Result<Vec<Tensor>> {
                let leaf = |t: &Tensor| t.to_dtype(dtype)?.requires_grad_(true);
                let (q, k, v) = (leaf(&q)?, leaf(&k)?, leaf(&v)?);
                let m = m.as_ref().map(leaf).transpose()?;
                let y = sdpa(&q, &k, &v, m.as_ref(), causal, &c)?;
                let loss = y.to_dtype(DType::F64)?.mul(&weights)?.sum_all()?;
                let mut wrt = vec![q, k, v];
                wrt.extend(m);
                let gs = grad(&[loss], &wrt, None, false, false, false)?;
                gs.into_iter().map(|g| g.expect("a gradient").to_dtype(DType::F64)).collect()
            };
            // Recorded (the composition) and unrecorded (the kernel) f32 outputs agree.
            let f32s = |t: &Tensor| t.to_dtype(DType::F32);
            let (q32, k32, v32) = (f32s(&q)?.requires_grad_(true)?, f32s(&k)?, f32s(&v)?);
            let m32 = m.as_ref().map(f32s).transpose()?;
            let recorded = sdpa(&q32, &k32, &v32, m32.as_ref(), causal, &c)?;
            let fused =
                oxtorch_tensor::autograd::no_grad(|| sdpa(&q32, &k32, &v32, m32.as_ref(), causal, &c))?;
            assert!(recorded.requires_grad() && !fused.requires_grad());
            assert_close(&fused, &recorded, 1e-5, &format!("{c:?} mask {mask}: kernel vs recorded"))?;
            let (got, want) = (grads(DType::F32)?, grads(DType::F64)?);
            for (i, (a, e)) in got.iter().zip(&want).enumerate() {
                assert_close(a, e, 1e-4, &format!("{c:?} mask {mask}: grad of input {i}"))?;
            }
        }
    }
    Ok(())
}

#[test]
fn recorded_attention_second_order_gradients_match_f64() -> Result<()> {
    oxtorch_tensor::manual_seed(25);
    let c = case(1, 4, 2, 5, 6, 3, 3);
    let (q, k, v, _) = inputs(&c, "none")?;
    let second = |dtype: DType| -> Result<Vec<Tensor>> {
        let leaf = |t: &Tensor| t.to_dtype(dtype)?.requires_grad_(true);
        let (q, k, v) = (leaf(&q)?, leaf(&k)?, leaf(&v)?);
        let y = sdpa(&q, &k, &v, None, true, &c)?;
        let gq = grad(&[y.square()?.sum_all()?], std::slice::from_ref(&q), None, false, true, false)?;
        let gq = gq[0].clone().expect("a gradient");
        let gs = grad(&[gq.sum_all()?], &[q, k, v], None, false, false, false)?;
        gs.into_iter().map(|g| g.expect("a gradient").to_dtype(DType::F64)).collect()
    };
    let (got, want) = (second(DType::F32)?, second(DType::F64)?);
    for (i, (a, e)) in got.iter().zip(&want).enumerate() {
        assert_close(a, e, 1e-3, &format!("second-order grad of input {i}"))?;
    }
    Ok(())
}
