//! `F.interpolate(..., antialias=True)` (`interpolate_with` / `Tensor::interpolate_antialias`) and
//! the full `F.embedding(...)` (`embedding_with`, and the `Embedding` module's
//! `scale_grad_by_freq`) against PyTorch: the values of every case of `nn_aa_embedding_golden.rs`
//! (written by `nn/tests/make_nn_aa_embedding_golden.py`), float64 gradients, the rows max_norm
//! renormalises in place, and torch's errors in its words.

use oxtorch_nn::functional as F;
use oxtorch_nn::{Embedding, Forward};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, int64, ramp, T};

/// One antialiased interpolation: its arguments, torch's output and (float64) input gradient of
/// `(out * c).sum()` with `c = 1, 2, 3, ...`.
struct Interp {
    name: &'static str,
    mode: &'static str,
    /// `"f64"`, `"f32"` or `"u8"`
    dtype: &'static str,
    size: Option<&'static [usize]>,
    scale: Option<&'static [f64]>,
    align: Option<bool>,
    recompute: Option<bool>,
    input: T,
    out: T,
    grad: Option<T>,
    /// whether torch's antialiased output equals its plain interpolation (float64 bilinear and
    /// bicubic cases)
    same_as_plain: Option<bool>,
}

/// One `F.embedding` call in float64: its arguments, torch's output, `weight`'s gradient of
/// `(out * c).sum()` and `weight` after the call.
struct Embed {
    name: &'static str,
    indices: T,
    weight: T,
    padding_idx: Option<i64>,
    max_norm: Option<f64>,
    norm_type: f64,
    scale_grad_by_freq: bool,
    sparse: bool,
    out: T,
    grad: T,
    weight_after: T,
}

/// One call torch refuses, and its message.
struct ErrCase {
    name: &'static str,
    dims: &'static [usize],
    dtype: &'static str,
    mode: &'static str,
    size: Option<&'static [usize]>,
    scale: Option<&'static [f64]>,
    align: Option<bool>,
    recompute: Option<bool>,
    antialias: bool,
    msg: &'static str,
}

include!("nn_aa_embedding_golden.rs");

fn dtype_of(name: &str) -> DType {
    match name {
        "f64" => DType::F64,
        "f32" => DType::F32,
        "u8" => DType::U8,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "i64" => DType::I64,
        other => panic!("no dtype {other}"),
    }
}

/// A case's input in its dtype (uint8 values are whole numbers in the file).
fn input_of(c: &Interp) -> Tensor {
    match c.dtype {
        "u8" => {
            Tensor::from_vec(c.input.data.iter().map(|&x| x as u8).collect::<Vec<_>>(), c.input.dims).unwrap()
        }
        d => float64(&c.input).to_dtype(dtype_of(d)).unwrap(),
    }
}

/// The largest elementwise difference between two tensors of one shape.
fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.dims(), b.dims());
    let (a, b) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn options(c: &Interp, antialias: bool) -> F::InterpolateOptions {
    F::InterpolateOptions { align_corners: c.align, recompute_scale_factor: c.recompute, antialias }
}

/// float64 is torch's arithmetic (the same weights, summed in the same order); float32 rounds
/// the weights as torch but sums each pass in f64, rounding once; uint8 is torch's fixed-point
/// arithmetic exactly.
fn tol(dtype: &str) -> f64 {
    match dtype {
        "f64" => 1e-12,
        "f32" => 1e-5,
        _ => 0.0,
    }
}

#[test]
fn interpolate_antialias_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(INTERP.len(), 69, "the golden file's case count changed");
    for c in INTERP {
        let x = input_of(c);
        let x = if c.grad.is_some() { x.requires_grad_(true)? } else { x };
        let out = F::interpolate_with(&x, c.size, c.scale, c.mode, options(c, true))
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(out.dtype(), x.dtype(), "{}: dtype", c.name);
        assert_close_as_f64(&format!("{}.out", c.name), &out, &c.out, tol(c.dtype));
        if let Some(want) = &c.grad {
            out.mul(ramp(&out))?.sum_all()?.backward()?;
            let got = x.grad().unwrap_or_else(|| panic!("{}: no gradient", c.name));
            if c.name.contains("_same_h") {
                // torch 2.15's forward copies a dim whose size does not change (here the height,
                // 5 · 1.1 → 5) but its backward resamples it with the 1.1 scale's weights: torch's
                // gradient is not the transpose of its forward. oxtorch's is (the height's part is
                // the identity), so it is checked against the same input sized without the factor.
                let sized = x.detach().requires_grad_(true)?;
                let plain_size = [c.out.dims[2], c.out.dims[3]];
                let y = F::interpolate_with(&sized, Some(&plain_size[..]), None, c.mode, options(c, true))?;
                y.mul(ramp(&y))?.sum_all()?.backward()?;
                let d = max_diff(&got, &sized.grad().unwrap());
                assert!(d < 1e-12, "{}: gradient differs from the size-given one by {d}", c.name);
            } else {
                assert_close_as_f64(&format!("{}.grad", c.name), &got, want, 1e-12);
            }
        }
        if let Some(same) = c.same_as_plain {
            let plain = F::interpolate_with(&x.detach(), c.size, c.scale, c.mode, options(c, false))?;
            if same {
                assert_close_as_f64(&format!("{}.plain", c.name), &plain, &c.out, 1e-12);
            } else {
                let d = max_diff(&plain, &out.detach());
                assert!(d > 1e-6, "{}: antialiased equals plain (max diff {d}), torch's do not", c.name);
            }
        }
    }
    Ok(())
}

/// Upsampling: antialiasing changes nothing for bilinear without align_corners (torch's own
/// outputs agree), and something for bicubic (its antialiased cubic is Keys' with a = -0.5) and
/// with align_corners.
#[test]
fn interpolate_antialias_upsampling_parity() -> Result<()> {
    let parity: Vec<(&str, bool)> = INTERP
        .iter()
        .filter(|c| c.name.contains("_up"))
        .filter_map(|c| Some((c.name, c.same_as_plain?)))
        .collect();
    assert_eq!(parity.len(), 8);
    for (name, same) in parity {
        assert_eq!(same, name.starts_with("bl_") && name.ends_with("_al0"), "{name}");
    }
    // Also on another input: bilinear upsampling, by size and by factor.
    let x = Tensor::from_vec((0..30).map(|i| ((i * 7) % 11) as f64 - 4.5).collect::<Vec<_>>(), [1, 2, 3, 5])?;
    for (size, scale) in [(Some(&[5usize, 12][..]), None), (None, Some(&[2.5f64, 1.5][..]))] {
        let aa = x.interpolate_antialias(size, scale, "bilinear", Some(false))?;
        let plain = x.interpolate(size, scale, "bilinear", Some(false))?;
        assert!(max_diff(&aa, &plain) < 1e-12);
        let aa = x.interpolate_antialias(size, scale, "bicubic", None)?;
        let plain = x.interpolate(size, scale, "bicubic", None)?;
        assert!(max_diff(&aa, &plain) > 1e-3);
    }
    Ok(())
}

/// `Tensor::interpolate_antialias` is the op behind `interpolate_with(antialias: true)`; its
/// float32 result is float32, its uint8 result uint8 and not differentiable.
#[test]
fn interpolate_antialias_tensor_method() -> Result<()> {
    for name in ["bc_down_frac_al1", "bl_down_frac_al0_u8c3", "la_sf", "bl_down_sf_al1_f32"] {
        let c = INTERP.iter().find(|c| c.name == name).expect("a golden case");
        let x = input_of(c);
        let out = x.interpolate_antialias(c.size, c.scale, c.mode, c.align)?;
        assert_eq!(out.dtype(), x.dtype());
        assert_close_as_f64(name, &out, &c.out, tol(c.dtype));
    }
    // The result is laid out contiguously, as torch's.
    let c = INTERP.iter().find(|c| c.name == "bl_mixed_al0").expect("a golden case");
    let out = input_of(c).interpolate_antialias(c.size, c.scale, c.mode, c.align)?;
    assert!(out.is_contiguous());
    // A transposed (non-contiguous) input gives the same values.
    let c = INTERP.iter().find(|c| c.name == "bc_down_sf_al0").expect("a golden case");
    let xt = input_of(c).transpose(2, 3)?.contiguous()?.transpose(2, 3)?;
    assert!(!xt.is_contiguous());
    let out = xt.interpolate_antialias(c.size, c.scale, c.mode, c.align)?;
    assert_close_as_f64("transposed input", &out, &c.out, 1e-12);
    Ok(())
}

#[test]
fn interpolate_antialias_errors_are_torchs() -> Result<()> {
    assert_eq!(ERRORS.len(), 17);
    for c in ERRORS {
        let x = Tensor::zeros(c.dims.to_vec(), dtype_of(c.dtype))?;
        let o = F::InterpolateOptions {
            align_corners: c.align,
            recompute_scale_factor: c.recompute,
            antialias: c.antialias,
        };
        let e = F::interpolate_with(&x, c.size, c.scale, c.mode, o)
            .err()
            .unwrap_or_else(|| panic!("{}: no error", c.name))
            .to_string();
        assert_eq!(e, c.msg, "{}", c.name);
    }
    Ok(())
}

/// `F.embedding` with the case's options.
fn embed_options(c: &Embed) -> F::EmbeddingOptions {
    F::EmbeddingOptions {
        padding_idx: c.padding_idx,
        max_norm: c.max_norm,
        norm_type: c.norm_type,
        scale_grad_by_freq: c.scale_grad_by_freq,
        sparse: c.sparse,
    }
}

/// The case through `embedding_with` (int64 or int32 indices) or through the `Embedding` module.
fn embed_call(c: &Embed, via: &str, weight: &Tensor) -> Result<Tensor> {
    let idx = int64(&c.indices);
    match via {
        "functional" => F::embedding_with(&idx, weight, embed_options(c)),
        "functional_i32" => F::embedding_with(&idx.to_dtype(DType::I32)?, weight, embed_options(c)),
        "module" => {
            let m = Embedding {
                max_norm: c.max_norm,
                norm_type: c.norm_type,
                ..Embedding::from_weights(weight.clone(), c.padding_idx)
            }
            .with_scale_grad_by_freq(c.scale_grad_by_freq)
            .with_sparse(c.sparse);
            m.forward(&idx)
        }
        other => panic!("no call {other}"),
    }
}

#[test]
fn embedding_with_matches_pytorch_values_gradients_and_renorm() -> Result<()> {
    assert_eq!(EMBED.len(), 14, "the golden file's case count changed");
    for c in EMBED {
        for via in ["functional", "functional_i32", "module"] {
            let what = format!("{}/{via}", c.name);
            let w = float64(&c.weight).requires_grad_(true)?;
            let out = embed_call(c, via, &w).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_close_as_f64(&format!("{what}.out"), &out, &c.out, 1e-12);
            // max_norm rescales the rows looked up, in place, outside the graph.
            assert_close_as_f64(&format!("{what}.weight_after"), &w, &c.weight_after, 1e-12);
            assert!(w.is_leaf() && w.requires_grad(), "{what}: the renormalisation is not recorded");
            if c.scale_grad_by_freq {
                assert_eq!(out.grad_fn().expect("a grad_fn").name(), "EmbeddingBackward0", "{what}");
            }
            out.mul(ramp(&out))?.sum_all()?.backward()?;
            let g = w.grad().unwrap_or_else(|| panic!("{what}: no gradient"));
            assert_close_as_f64(&format!("{what}.grad"), &g, &c.grad, 1e-12);
        }
    }
    Ok(())
}

/// scale_grad_by_freq divides by the count of each row: changing the gradient of a row seen
/// once changes nothing, and a row seen three times gets a third of the plain gradient.
#[test]
fn embedding_scale_grad_by_freq_against_plain() -> Result<()> {
    let w = Tensor::from_vec((0..12).map(|i| i as f64 * 0.25 - 1.0).collect::<Vec<_>>(), [4, 3])?;
    let idx = Tensor::from_vec(vec![2i64, 0, 2, 2, 1], [5])?;
    let grad = |freq: bool| -> Result<Vec<f64>> {
        let w = w.detach().requires_grad_(true)?;
        let o = F::EmbeddingOptions { scale_grad_by_freq: freq, ..Default::default() };
        let out = F::embedding_with(&idx, &w, o)?;
        out.mul(ramp(&out))?.sum_all()?.backward()?;
        w.grad().expect("a gradient").to_f64_vec()
    };
    let (plain, scaled) = (grad(false)?, grad(true)?);
    for col in 0..3 {
        assert_eq!(scaled[col], plain[col], "row 0 is seen once");
        assert_eq!(scaled[3 + col], plain[3 + col], "row 1 is seen once");
        assert!((scaled[6 + col] - plain[6 + col] / 3.0).abs() < 1e-12, "row 2 is seen three times");
        assert_eq!((scaled[9 + col], plain[9 + col]), (0.0, 0.0), "row 3 is not seen");
    }
    // Without a gradient to scale, the output is the plain lookup.
    let o = F::EmbeddingOptions { scale_grad_by_freq: true, ..Default::default() };
    assert!(F::embedding_with(&idx, &w, o)?.equal(&F::embedding(&idx, &w, None)?)?);
    // The module's default leaves it off.
    let m = Embedding::from_weights(w.clone(), None);
    assert!(!m.scale_grad_by_freq && !m.sparse);
    assert_eq!(m.options(), F::EmbeddingOptions::default());
    Ok(())
}

#[test]
fn embedding_with_errors_are_torchs() -> Result<()> {
    let w = Tensor::from_vec((0..30).map(|i| i as f64 * 0.1 - 1.0).collect::<Vec<_>>(), [10, 3])?;
    let one = Tensor::from_vec(vec![1i64], [1])?;
    let float_one = Tensor::from_vec(vec![1f32], [1])?;
    let pad = |p| F::EmbeddingOptions { padding_idx: Some(p), ..Default::default() };
    let max_norm = F::EmbeddingOptions { max_norm: Some(1.0), ..Default::default() };
    let msg = |name: &str| EMB_ERRORS.iter().find(|(n, _)| *n == name).expect("a golden message").1;
    let err = |r: Result<Tensor>| r.expect_err("an error").to_string();
    assert_eq!(err(F::embedding_with(&one, &w, pad(10))), msg("emb_pad_high"));
    assert_eq!(err(F::embedding_with(&one, &w, pad(-11))), msg("emb_pad_low"));
    assert_eq!(err(F::embedding_with(&float_one, &w, Default::default())), msg("emb_float_indices"));
    assert_eq!(err(F::embedding_with(&float_one, &w, max_norm)), msg("emb_float_indices_max_norm"));
    let ten = Tensor::from_vec(vec![10i64], [1])?;
    assert_eq!(err(F::embedding_with(&ten, &w, Default::default())), msg("emb_out_of_range"));
    let w1 = Tensor::zeros([10], DType::F64)?;
    assert_eq!(err(F::embedding_with(&one, &w1, Default::default())), msg("emb_weight_1d"));
    // pad(9) and pad(-10) are in range.
    assert!(F::embedding_with(&one, &w, pad(9)).is_ok() && F::embedding_with(&one, &w, pad(-10)).is_ok());
    // sparse with scale_grad_by_freq: the lookup works, torch's backward refuses.
    let wg = w.detach().requires_grad_(true)?;
    let o = F::EmbeddingOptions { scale_grad_by_freq: true, sparse: true, ..Default::default() };
    let idx = Tensor::from_vec(vec![1i64, 1, 2], [3])?;
    let out = F::embedding_with(&idx, &wg, o)?;
    assert!(out.equal(&F::embedding(&idx, &w, None)?)?);
    let e = out.sum_all()?.backward().expect_err("an error").to_string();
    assert!(e.contains(msg("emb_sparse_freq_backward")), "{e}");
    Ok(())
}
