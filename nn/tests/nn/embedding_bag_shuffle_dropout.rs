//! `embedding_bag` / `EmbeddingBag`, `pixel_shuffle`, `pixel_unshuffle`, `channel_shuffle` and
//! their modules, `alpha_dropout` / `feature_alpha_dropout` / `AlphaDropout` /
//! `FeatureAlphaDropout`, and `gumbel_softmax`, against PyTorch: in float64, the outputs and
//! gradients of every case of `embedding_bag_shuffle_dropout_golden.rs` (written by
//! `nn/tests/make_embedding_bag_shuffle_dropout_golden.py`) and alpha dropout's values; for the random ops, their
//! distributions (the draws are oxtorch's, not torch's) and the deterministic edge cases; and
//! torch's argument errors, in its words.

use oxtorch_nn::functional as F;
use oxtorch_nn::{
    AlphaDropout, ChannelShuffle, EmbeddingBag, EmbeddingBagOptions, FeatureAlphaDropout, Forward, Module,
    ModuleExt, PixelShuffle, PixelUnshuffle,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, float64, int64, ramp, Golden, Inputs, T};

include!("embedding_bag_shuffle_dropout_golden.rs");

/// embedding_bag's options besides the mode, `offsets` and `per_sample_weights` (which come from
/// the case's inputs).
struct Eb {
    max_norm: Option<f64>,
    norm_type: f64,
    scale_grad_by_freq: bool,
    include_last_offset: bool,
    padding_idx: Option<i64>,
}

/// torch's defaults.
const PLAIN: Eb = Eb {
    max_norm: None,
    norm_type: 2.0,
    scale_grad_by_freq: false,
    include_last_offset: false,
    padding_idx: None,
};

/// `F.embedding_bag` on a case's inputs, the mode read from its name (`eb_<mode>_...`).
fn eb(name: &str, c: &Inputs, o: Eb) -> Result<Tensor> {
    let mode = name.split('_').nth(1).expect("eb_<mode>_...");
    F::embedding_bag(
        c.t("indices"),
        c.t("weight"),
        c.get("offsets"),
        o.max_norm,
        o.norm_type,
        o.scale_grad_by_freq,
        mode,
        false,
        c.get("psw"),
        o.include_last_offset,
        o.padding_idx,
    )
}

/// The call each case makes (the same arguments as the script's).
fn call(name: &str, c: &Inputs) -> Result<Tensor> {
    let input = || c.t("input");
    let last = Eb { include_last_offset: true, ..PLAIN };
    let pad = |p| Eb { padding_idx: Some(p), ..PLAIN };
    match name {
        "eb_sum_offsets"
        | "eb_mean_offsets"
        | "eb_max_offsets"
        | "eb_sum_2d"
        | "eb_mean_2d"
        | "eb_max_2d"
        | "eb_sum_psw_offsets"
        | "eb_sum_psw_2d"
        | "eb_mean_trailing_empty"
        | "eb_max_trailing_empty"
        | "eb_sum_empty_input"
        | "eb_mean_empty_input"
        | "eb_max_empty_input"
        | "eb_max_ties"
        | "eb_max_ties_repeat" => eb(name, c, PLAIN),
        "eb_sum_pad" | "eb_mean_pad" | "eb_max_pad" | "eb_sum_psw_pad" | "eb_max_pad_2d" => {
            eb(name, c, pad(2))
        }
        "eb_mean_pad_neg" => eb(name, c, pad(-8)),
        "eb_sum_last" | "eb_mean_last" | "eb_max_last" | "eb_sum_last_short" | "eb_sum_last_short_psw" => {
            eb(name, c, last)
        }
        "eb_mean_max_norm" => eb(name, c, Eb { max_norm: Some(1.0), ..PLAIN }),
        "eb_sum_max_norm_p1_2d" => eb(name, c, Eb { max_norm: Some(1.5), norm_type: 1.0, ..PLAIN }),
        "eb_max_max_norm" => eb(name, c, Eb { max_norm: Some(0.8), norm_type: 3.0, ..PLAIN }),
        "eb_sum_freq" | "eb_mean_freq" => eb(name, c, Eb { scale_grad_by_freq: true, ..PLAIN }),
        "eb_sum_psw_freq_pad" => eb(name, c, Eb { scale_grad_by_freq: true, padding_idx: Some(0), ..PLAIN }),
        "ps_4d_r2" | "ps_3d_r2" => F::pixel_shuffle(input(), 2),
        "ps_5d_r3" => F::pixel_shuffle(input(), 3),
        "ps_r1" => F::pixel_shuffle(input(), 1),
        "pu_4d_r2" | "pu_5d_r2" => F::pixel_unshuffle(input(), 2),
        "pu_3d_r3" => F::pixel_unshuffle(input(), 3),
        "cs_4d_g2" => F::channel_shuffle(input(), 2),
        "cs_3d_g4" => F::channel_shuffle(input(), 4),
        "cs_5d_g3" => F::channel_shuffle(input(), 3),
        "cs_g1" => F::channel_shuffle(input(), 1),
        "cs_g_channels" => F::channel_shuffle(input(), 6),
        other => panic!("no call for golden case {other}"),
    }
}

/// The shuffles are permutations: their values and gradients are exact. embedding_bag's sums
/// may round in another order than torch's kernel.
fn tol(name: &str) -> f64 {
    if name.starts_with("eb_") {
        1e-11
    } else {
        0.0
    }
}

fn golden(name: &str) -> &'static Golden {
    GOLDEN.iter().find(|g| g.name == name).unwrap_or_else(|| panic!("no golden case {name}"))
}

fn golden_input(name: &str, k: &str) -> &'static T {
    &golden(name).inputs.iter().find(|(n, _)| *n == k).unwrap_or_else(|| panic!("{name}: no {k}")).1
}

#[test]
fn embedding_bag_and_shuffles_match_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 44, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = g.input_tensors(&["indices", "offsets"]);
        let out = call(g.name, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_close(&format!("{}.out", g.name), &out, &g.out, tol(g.name));
        out.mul(ramp(&out))?.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            assert_close(&format!("{}.grad.{k}", g.name), &got, want, tol(g.name));
        }
    }
    Ok(())
}

/// Indices and offsets of other integer dtypes are promoted together, as torch: int32, or uint8
/// with int64 offsets, give the int64 result; a float32 table gives it in float32.
#[test]
fn embedding_bag_index_and_weight_dtypes() -> Result<()> {
    let g = golden("eb_sum_offsets");
    let (idx, off, w) = (
        int64(golden_input(g.name, "indices")),
        int64(golden_input(g.name, "offsets")),
        float64(golden_input(g.name, "weight")),
    );
    let sum = |i: &Tensor, o: &Tensor, w: &Tensor| {
        F::embedding_bag(i, w, Some(o), None, 2.0, false, "sum", false, None, false, None)
    };
    for (i, o) in [
        (idx.to_dtype(DType::I32)?, off.clone()),
        (idx.to_dtype(DType::I32)?, off.to_dtype(DType::I32)?),
        (idx.clone(), off.to_dtype(DType::I32)?),
        (idx.to_dtype(DType::U8)?, off.clone()),
    ] {
        let what = format!("{:?}/{:?} indices/offsets", i.dtype(), o.dtype());
        assert_close(&what, &sum(&i, &o, &w)?, &g.out, 1e-11);
    }
    let out32 = sum(&idx, &off, &w.to_dtype(DType::F32)?)?;
    assert_eq!(out32.dtype(), DType::F32);
    assert_close("float32 table", &out32.to_dtype(DType::F64)?, &g.out, 1e-6);
    // int16 with int16 stays int16: torch's error.
    let e = sum(&idx.to_dtype(DType::I16)?, &off.to_dtype(DType::I16)?, &w).unwrap_err().to_string();
    assert_eq!(
        e,
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.ShortTensor instead (while checking arguments for embedding_bag)"
    );
    Ok(())
}

fn err(r: Result<Tensor>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn embedding_bag_argument_errors_are_torchs() -> Result<()> {
    let w = Tensor::from_vec((0..30).map(|i| i as f64 * 0.1 - 1.0).collect::<Vec<_>>(), [10, 3])?;
    let idx = Tensor::from_vec(vec![1i64, 2, 4, 5, 4, 3, 2, 0], [8])?;
    let off = Tensor::from_vec(vec![0i64, 4], [2])?;
    let ones8 = Tensor::ones([8], DType::F64)?;
    let call = |input: &Tensor,
                weight: &Tensor,
                offsets: Option<&Tensor>,
                mode: &str,
                psw: Option<&Tensor>,
                last: bool,
                pad: Option<i64>| {
        F::embedding_bag(input, weight, offsets, None, 2.0, false, mode, false, psw, last, pad)
    };
    // torch: ValueError: input has to be 1D or 2D Tensor, but got Tensor of dimension 3
    assert_eq!(
        err(call(&idx.reshape([2, 2, 2])?, &w, None, "mean", None, false, None)),
        "input has to be 1D or 2D Tensor, but got Tensor of dimension 3"
    );
    assert_eq!(
        err(call(&idx, &w, None, "mean", None, false, None)),
        "offsets has to be a 1D Tensor but got None"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&off.reshape([1, 2])?), "mean", None, false, None)),
        "offsets has to be a 1D Tensor"
    );
    assert_eq!(
        err(call(&idx.reshape([2, 4])?, &w, Some(&off), "mean", None, false, None)),
        "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type <class 'torch.Tensor'>"
    );
    // torch's arange(0, numel, step=0) for [B, 0] bags
    assert_eq!(
        err(call(&Tensor::zeros([2, 0], DType::I64)?, &w, None, "mean", None, false, None)),
        "step must be nonzero"
    );
    assert_eq!(
        err(call(&idx, &w.reshape([30])?, Some(&off), "mean", None, false, None)),
        "weight has to be a 2D Tensor, but got Tensor of dimension 1"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&off), "sum", Some(&Tensor::ones([7], DType::F64)?), false, None)),
        "embedding_bag: If per_sample_weights (torch.Size([7])) is not None, then it must have the same shape as the input (torch.Size([8]))"
    );
    assert_eq!(
        err(call(&idx.reshape([2, 4])?, &w, None, "sum", Some(&ones8), false, None)),
        "embedding_bag: If per_sample_weights (torch.Size([8])) is not None, then it must have the same shape as the input (torch.Size([2, 4]))"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&off), "foo", None, false, None)),
        "mode has to be one of sum, mean or max"
    );
    let max_with = |freq: bool, sparse: bool| {
        F::embedding_bag(&idx, &w, Some(&off), None, 2.0, freq, "max", sparse, None, false, None)
    };
    assert_eq!(err(max_with(true, false)), "max mode does not support scaling the gradient by the frequency");
    assert_eq!(err(max_with(false, true)), "max mode does not support sparse weights");
    // `sparse` is accepted (and the gradient dense) for the other modes.
    let sparse_mean =
        F::embedding_bag(&idx, &w, Some(&off), None, 2.0, false, "mean", true, None, false, None)?;
    assert!(sparse_mean.equal(&call(&idx, &w, Some(&off), "mean", None, false, None)?)?);
    assert_eq!(
        err(call(&idx, &w, Some(&off), "mean", Some(&ones8), false, None)),
        "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='mean'). Please open a feature request on GitHub."
    );
    for p in [10i64, -11] {
        assert_eq!(
            err(call(&idx, &w, Some(&off), "sum", None, false, Some(p))),
            format!("padding_idx must be within the number of embeddings, -10 through 9, but got {p}")
        );
    }
    assert_eq!(
        err(call(&idx.to_dtype(DType::F32)?, &w, Some(&off), "mean", None, false, None)),
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding_bag)"
    );
    // The offsets are checked as the indices' promotion with them.
    assert_eq!(
        err(call(&idx.to_dtype(DType::I32)?, &w, Some(&off.to_dtype(DType::F64)?), "mean", None, false, None)),
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.DoubleTensor instead (while checking arguments for embedding_bag)"
    );
    assert_eq!(
        err(call(&idx, &w.to_dtype(DType::I64)?, Some(&off), "mean", None, false, None)),
        "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, Float, Double; but got torch.LongTensor instead (while checking arguments for embedding_bag)"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&Tensor::from_vec(vec![1i64, 4], [2])?), "mean", None, false, None)),
        "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&Tensor::from_vec(vec![0i64, 9], [2])?), "mean", None, false, None)),
        "offsets[-1] can not be greater than input's length 8 but got offsets[-1] of 9"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&off), "sum", Some(&ones8.to_dtype(DType::F32)?), false, None)),
        "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights'; but type torch.DoubleTensor does not equal torch.FloatTensor (while checking arguments for embedding_bag)"
    );
    assert_eq!(
        err(call(&idx, &w, Some(&Tensor::zeros([0], DType::I64)?), "sum", None, true, None)),
        "include_last_offset: number of offset should be at least 1"
    );
    for bad in [10i64, -1] {
        let i = Tensor::from_vec(vec![1i64, bad, 2], [3])?;
        for mode in ["sum", "mean", "max"] {
            assert_eq!(
                err(call(&i, &w, Some(&Tensor::from_vec(vec![0i64], [1])?), mode, None, false, None)),
                format!("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad}")
            );
        }
    }
    // With max_norm, torch's renormalisation meets the index first.
    let i = Tensor::from_vec(vec![1i64, 10], [2])?;
    let renorm =
        F::embedding_bag(&i, &w, Some(&off), Some(1.0), 2.0, false, "mean", false, None, false, None);
    assert_eq!(err(renorm), "select(): index 10 out of range for tensor of size [10, 3] at dimension 0");
    // Decreasing offsets (torch reads out of bounds): an error here.
    let e = err(call(&idx, &w, Some(&Tensor::from_vec(vec![0i64, 5, 3], [3])?), "sum", None, false, None));
    assert!(e.contains("non-decreasing"), "{e}");
    // No offsets, no indices: no bags.
    let none = call(
        &Tensor::zeros([0], DType::I64)?,
        &w,
        Some(&Tensor::zeros([0], DType::I64)?),
        "sum",
        None,
        false,
        None,
    )?;
    assert_eq!(none.dims(), &[0, 3]);
    assert_eq!(
        call(&Tensor::zeros([0, 4], DType::I64)?, &w, None, "max", None, false, None)?.dims(),
        &[0, 3]
    );
    Ok(())
}

/// `nn.EmbeddingBag`: torch's defaults, initialisation, state dict, padding row, the forward
/// passes, and `from_pretrained`.
#[test]
fn embedding_bag_module_as_pytorch() -> Result<()> {
    let m = EmbeddingBag::new(10, 3, EmbeddingBagOptions::default())?;
    assert_eq!(m.type_name(), "EmbeddingBag");
    assert_eq!((m.mode, m.max_norm, m.norm_type, m.padding_idx), ("mean", None, 2.0, None));
    assert!(!m.scale_grad_by_freq && !m.sparse && !m.include_last_offset);
    assert_eq!((m.weight.dims(), m.weight.dtype()), (&[10usize, 3][..], DType::F32));
    assert!(m.weight.requires_grad() && m.weight.is_leaf());
    let keys: Vec<String> = m.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["weight"]);
    assert_eq!(m.named_parameters().len(), 1);

    // N(0, 1), as torch's reset_parameters (init.normal_).
    let big = EmbeddingBag::new(400, 50, EmbeddingBagOptions { dtype: DType::F64, ..Default::default() })?;
    let v = big.weight.to_vec::<f64>()?;
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64;
    assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03, "mean {mean}, variance {var}");

    // The padding row (negative counts from the end) is zeroed by `new`.
    let p = EmbeddingBag::new(5, 2, EmbeddingBagOptions { padding_idx: Some(-1), ..Default::default() })?;
    assert_eq!(p.padding_idx, Some(4));
    assert_eq!(p.weight.select(0, 4)?.to_vec::<f32>()?, vec![0.0, 0.0]);
    for bad in [5i64, -6] {
        let o = EmbeddingBagOptions { padding_idx: Some(bad), ..Default::default() };
        let e = EmbeddingBag::new(5, 2, o).err().expect("an error").to_string();
        // torch: AssertionError: padding_idx must be within num_embeddings
        assert_eq!(e, "padding_idx must be within num_embeddings");
    }

    // from_pretrained over the golden table: the forward passes give torch's values.
    let g = golden("eb_sum_psw_offsets");
    let table = float64(golden_input(g.name, "weight"));
    let o = EmbeddingBagOptions { mode: "sum", ..Default::default() };
    let f = EmbeddingBag::from_pretrained(&table, true, o.clone())?;
    assert!(!f.weight.requires_grad());
    let (idx, off) = (int64(golden_input(g.name, "indices")), int64(golden_input(g.name, "offsets")));
    let psw = float64(golden_input(g.name, "psw"));
    assert_close(
        "forward_with_offsets",
        &f.forward_with_offsets(&idx, Some(&off), Some(&psw))?,
        &g.out,
        1e-11,
    );
    let g2 = golden("eb_mean_2d");
    let mean2d = EmbeddingBag::from_pretrained(&table, false, EmbeddingBagOptions::default())?;
    assert!(mean2d.weight.requires_grad() && mean2d.weight.is_leaf());
    assert_close("forward (2-D)", &mean2d.forward(&int64(golden_input(g2.name, "indices")))?, &g2.out, 1e-11);
    // A 1-D input needs offsets.
    let e = mean2d.forward(&idx).unwrap_err().to_string();
    assert_eq!(e, "offsets has to be a 1D Tensor but got None");
    // The weight shares the given tensor's storage; the padding row is not zeroed.
    let padded =
        EmbeddingBag::from_pretrained(&table, true, EmbeddingBagOptions { padding_idx: Some(2), ..o })?;
    assert!(padded.weight.equal(&table)?);
    table.mul_(2.0)?;
    assert!(padded.weight.equal(&table)?);
    let e =
        EmbeddingBag::from_pretrained(&Tensor::zeros([4], DType::F32)?, true, EmbeddingBagOptions::default())
            .err()
            .expect("an error")
            .to_string();
    assert_eq!(e, "Embeddings parameter is expected to be 2-dimensional");
    Ok(())
}

/// torch's alpha dropout on float64 ones: each element is the kept value or the dropped value of
/// `ALPHA`, with gradient `a` or 0; an input `x` kept becomes `a x + (kept - a)`.
#[test]
fn alpha_dropout_values_match_pytorch() -> Result<()> {
    for &(p, kept, dropped, a) in ALPHA {
        let data: Vec<f64> = (0..4000).map(|i| (i % 17) as f64 * 0.25 - 2.0).collect();
        let x = Tensor::from_vec(data.clone(), [40, 100])?.requires_grad_(true)?;
        let y = F::alpha_dropout(&x, p, true)?;
        assert_eq!((y.dims(), y.dtype()), (&[40usize, 100][..], DType::F64));
        let values = y.to_vec::<f64>()?;
        y.sum_all()?.backward()?;
        let grad = x.grad().expect("a gradient").to_vec::<f64>()?;
        let shift = kept - a;
        let mut n_dropped = 0;
        for (i, ((&xi, &yi), &gi)) in data.iter().zip(&values).zip(&grad).enumerate() {
            if gi == 0.0 {
                assert!((yi - dropped).abs() <= 1e-14, "p={p} [{i}]: dropped value {yi}, torch's {dropped}");
                n_dropped += 1;
            } else {
                assert!((gi - a).abs() <= 1e-14, "p={p} [{i}]: gradient {gi}, torch's {a}");
                let want = xi * a + shift;
                assert!((yi - want).abs() <= 1e-13 * (1.0 + want.abs()), "p={p} [{i}]: {yi}, torch's {want}");
            }
        }
        let frac = n_dropped as f64 / data.len() as f64;
        assert!((frac - p).abs() < 0.04, "p={p}: dropped fraction {frac}");
    }
    Ok(())
}

/// Inputs of mean 0 and variance 1 keep them (the point of alpha dropout), in float32 too.
#[test]
fn alpha_dropout_keeps_mean_zero_and_variance_one() -> Result<()> {
    for (p, dtype) in [(0.2, DType::F64), (0.5, DType::F32), (0.05, DType::F64)] {
        let x = Tensor::randn([200_000], dtype)?;
        let y = F::alpha_dropout(&x, p, true)?;
        assert_eq!(y.dtype(), dtype);
        let v = y.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.015, "p={p} {dtype:?}: mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "p={p} {dtype:?}: variance {var}");
    }
    Ok(())
}

/// The deterministic cases: evaluation and p = 0 return the input, p = 1 multiplies by zero
/// (NaN stays NaN, integers keep their dtype), empty inputs pass, and torch's errors.
#[test]
fn alpha_dropout_edge_cases_and_errors() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, f32::NAN, -2.0, 3.0, 4.0, 5.0], [2, 3])?;
    for f in [F::alpha_dropout, F::feature_alpha_dropout] {
        assert!(f(&x, 0.5, false)?
            .to_vec::<f32>()?
            .iter()
            .zip(x.to_vec::<f32>()?)
            .all(|(a, b)| *a == b || b.is_nan()));
        assert_eq!(f(&x, 0.0, true)?.dims(), &[2, 3]);
        let zero = f(&x, 1.0, true)?.to_vec::<f32>()?;
        // torch: tensor([[0., nan, -0.], [0., 0., 0.]])
        assert!(zero[1].is_nan());
        assert!(zero.iter().enumerate().all(|(i, v)| i == 1 || *v == 0.0), "{zero:?}");
        assert!(zero[2].is_sign_negative());
        // torch: ValueError: dropout probability has to be between 0 and 1, but got 1.5
        assert_eq!(err(f(&x, 1.5, false)), "dropout probability has to be between 0 and 1, but got 1.5");
        assert_eq!(err(f(&x, -0.1, true)), "dropout probability has to be between 0 and 1, but got -0.1");
        let ints = Tensor::from_vec(vec![1i64, 2, 3], [1, 3])?;
        let z = f(&ints, 1.0, true)?;
        assert_eq!((z.dtype(), z.to_vec::<i64>()?), (DType::I64, vec![0, 0, 0]));
        // torch: RuntimeError: result type Float can't be cast to the desired output type Long
        assert_eq!(
            err(f(&ints, 0.5, true)),
            "result type Float can't be cast to the desired output type Long"
        );
        assert_eq!(f(&Tensor::zeros([2, 0, 3], DType::F32)?, 0.5, true)?.dims(), &[2, 0, 3]);
    }
    let b = Tensor::from_vec(vec![true, false], [2])?;
    assert_eq!(
        err(F::alpha_dropout(&b, 0.5, true)),
        "result type Float can't be cast to the desired output type Long"
    );
    let i32s = Tensor::from_vec(vec![1i32, 2], [2])?;
    assert_eq!(
        err(F::alpha_dropout(&i32s, 0.5, true)),
        "result type Float can't be cast to the desired output type Int"
    );
    // The feature form needs two dims, except where it returns before drawing.
    let v = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])?;
    // torch: RuntimeError: Feature dropout requires at least 2 dimensions in the input
    assert_eq!(
        err(F::feature_alpha_dropout(&v, 0.5, true)),
        "Feature dropout requires at least 2 dimensions in the input"
    );
    assert_eq!(F::feature_alpha_dropout(&v, 1.0, true)?.to_vec::<f32>()?, vec![0.0, 0.0, 0.0]);
    assert_eq!(F::feature_alpha_dropout(&v, 0.5, false)?.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
    // A 0-d input is alpha-dropped too.
    let s = F::alpha_dropout(&Tensor::from_vec(vec![2.0f64], Vec::<usize>::new())?, 0.5, true)?;
    assert_eq!(s.rank(), 0);
    Ok(())
}

/// Feature alpha dropout keeps or drops each `[n, c]` slice whole, with alpha dropout's values.
#[test]
fn feature_alpha_dropout_drops_whole_channels() -> Result<()> {
    let (p, kept, dropped, _) = ALPHA[1];
    let x = Tensor::ones([8, 16, 3, 2], DType::F64)?;
    let y = F::feature_alpha_dropout(&x, p, true)?;
    assert_eq!(y.dims(), &[8, 16, 3, 2]);
    let v = y.to_vec::<f64>()?;
    let mut n_dropped = 0;
    for (k, ch) in v.chunks(6).enumerate() {
        assert!(ch.iter().all(|&t| t == ch[0]), "channel {k} not uniform: {ch:?}");
        if (ch[0] - dropped).abs() <= 1e-14 {
            n_dropped += 1;
        } else {
            assert!((ch[0] - kept).abs() <= 1e-14, "channel {k}: {}", ch[0]);
        }
    }
    assert!(n_dropped > 0 && n_dropped < 128, "{n_dropped} of 128 channels dropped");
    // A 2-D input: each element is its own channel.
    let y2 = F::feature_alpha_dropout(&Tensor::ones([64, 32], DType::F64)?, p, true)?.to_vec::<f64>()?;
    assert!(
        y2.iter().any(|&t| (t - dropped).abs() <= 1e-14) && y2.iter().any(|&t| (t - kept).abs() <= 1e-14)
    );
    Ok(())
}

/// `nn.AlphaDropout(p=0.5)` and `nn.FeatureAlphaDropout`: the functional forms in training, the
/// identity in evaluation, torch's check of `p`.
#[test]
fn alpha_dropout_modules() -> Result<()> {
    let x = Tensor::ones([4, 8, 5], DType::F64)?;
    let mut a = AlphaDropout::new(0.5)?;
    assert_eq!((a.type_name(), a.p, a.training), ("AlphaDropout", 0.5, true));
    let y = a.forward(&x)?.to_vec::<f64>()?;
    let (_, kept, dropped, _) = ALPHA[2];
    assert!(y.iter().all(|&t| (t - kept).abs() <= 1e-14 || (t - dropped).abs() <= 1e-14));
    a.eval();
    assert!(a.forward(&x)?.equal(&x)?);
    let mut f = FeatureAlphaDropout::new(0.2)?;
    assert_eq!((f.type_name(), f.p), ("FeatureAlphaDropout", 0.2));
    assert!(f.state_dict().keys().next().is_none());
    f.eval();
    assert!(f.forward(&x)?.equal(&x)?);
    let e = AlphaDropout::new(1.2).err().expect("an error").to_string();
    // torch: ValueError: dropout probability has to be between 0 and 1, but got 1.2
    assert_eq!(e, "dropout probability has to be between 0 and 1, but got 1.2");
    assert!(FeatureAlphaDropout::new(-0.5).is_err());
    Ok(())
}

/// Gumbel-softmax with equal logits: `softmax` of two Gumbel draws is the logistic function of
/// their difference, which is Logistic(0, 1), so the first probability is Uniform(0, 1).
#[test]
fn gumbel_softmax_noise_is_gumbel() -> Result<()> {
    let logits = Tensor::zeros([40_000, 2], DType::F64)?;
    let y = F::gumbel_softmax(&logits, 1.0, false, -1)?;
    assert_eq!((y.dims(), y.dtype()), (&[40_000usize, 2][..], DType::F64));
    let v = y.to_vec::<f64>()?;
    let first: Vec<f64> = v.chunks(2).map(|r| r[0]).collect();
    assert!(v.chunks(2).all(|r| (r[0] + r[1] - 1.0).abs() < 1e-12 && r[0] > 0.0 && r[1] > 0.0));
    let n = first.len() as f64;
    let mean = first.iter().sum::<f64>() / n;
    let var = first.iter().map(|u| (u - mean) * (u - mean)).sum::<f64>() / n;
    assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
    assert!((var - 1.0 / 12.0).abs() < 0.004, "variance {var}");
    // The quartiles of a uniform.
    let below = |q: f64| first.iter().filter(|&&u| u < q).count() as f64 / n;
    for q in [0.25, 0.5, 0.75] {
        assert!((below(q) - q).abs() < 0.015, "P(u < {q}) = {}", below(q));
    }
    Ok(())
}

/// With `hard`, one-hot samples whose argmax follows `softmax(logits)` (the Gumbel-max trick),
/// with the soft sample's gradient: the Jacobian of a softmax, whose rows sum to zero.
#[test]
fn gumbel_softmax_hard_samples_the_categorical() -> Result<()> {
    let probs = [0.1, 0.2, 0.3, 0.4];
    let rows = 20_000;
    let data: Vec<f64> = (0..rows).flat_map(|_| probs.iter().map(|p: &f64| p.ln())).collect();
    let logits = Tensor::from_vec(data, [rows, 4])?.requires_grad_(true)?;
    let y = F::gumbel_softmax(&logits, 0.5, true, 1)?;
    let v = y.to_vec::<f64>()?;
    let mut counts = [0usize; 4];
    for r in v.chunks(4) {
        let hot: Vec<usize> = (0..4).filter(|&j| (r[j] - 1.0).abs() < 1e-12).collect();
        assert_eq!(hot.len(), 1, "{r:?}");
        assert!((0..4).all(|j| j == hot[0] || r[j].abs() < 1e-12), "{r:?}");
        counts[hot[0]] += 1;
    }
    for (c, p) in counts.iter().zip(probs) {
        let f = *c as f64 / rows as f64;
        assert!((f - p).abs() < 0.015, "frequency {f} for probability {p}");
    }
    let w = Tensor::from_vec((0..rows * 4).map(|i| (i % 7) as f64 - 3.0).collect::<Vec<_>>(), [rows, 4])?;
    y.mul(&w)?.sum_all()?.backward()?;
    let g = logits.grad().expect("a gradient through the soft sample").to_vec::<f64>()?;
    assert!(g.chunks(4).all(|r| r.iter().sum::<f64>().abs() < 1e-9));
    assert!(g.iter().any(|&t| t.abs() > 1e-6));
    // A soft sample's gradient is its softmax Jacobian: y (w - sum(w y)) / tau.
    let x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0, 0.0, 0.3, 0.3], [2, 3])?.requires_grad_(true)?;
    let tau = 0.7;
    let s = F::gumbel_softmax(&x, tau, false, -1)?;
    let sw = [1.0, -2.0, 0.5, 3.0, 0.0, -1.0];
    s.mul(&Tensor::from_vec(sw.to_vec(), [2, 3])?)?.sum_all()?.backward()?;
    let (sv, gx) = (s.to_vec::<f64>()?, x.grad().expect("a gradient").to_vec::<f64>()?);
    for r in 0..2 {
        let dot: f64 = (0..3).map(|j| sw[3 * r + j] * sv[3 * r + j]).sum();
        for j in 0..3 {
            let want = sv[3 * r + j] * (sw[3 * r + j] - dot) / tau;
            assert!((gx[3 * r + j] - want).abs() < 1e-12, "[{r}][{j}]: {} vs {want}", gx[3 * r + j]);
        }
    }
    Ok(())
}

#[test]
fn gumbel_softmax_errors_and_dtypes() -> Result<()> {
    // torch: RuntimeError: Exponential distribution is a continuous probability distribution.
    // dtype must be a floating point but you specified Long
    assert_eq!(
        err(F::gumbel_softmax(&Tensor::from_vec(vec![1i64, 2, 3], [3])?, 1.0, false, -1)),
        "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Long"
    );
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [1, 3])?;
    assert_eq!(
        err(F::gumbel_softmax(&x, 1.0, false, 2)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let y = F::gumbel_softmax(&x.to_dtype(dtype)?, 1.0, true, -1)?;
        assert_eq!(y.dtype(), dtype);
        let v = y.to_dtype(DType::F64)?.to_vec::<f64>()?;
        assert_eq!(
            v.iter().filter(|&&t| t == 0.0).count() + v.iter().filter(|&&t| (t - 1.0).abs() < 1e-2).count(),
            3
        );
        let soft =
            F::gumbel_softmax(&x.to_dtype(dtype)?, 1.0, false, -1)?.to_dtype(DType::F64)?.to_vec::<f64>()?;
        assert!(
            soft.iter().all(|t| t.is_finite() && *t >= 0.0) && (soft.iter().sum::<f64>() - 1.0).abs() < 2e-2
        );
    }
    Ok(())
}

/// The shuffles' argument checks, in torch's words and order, empty inputs, and the modules.
#[test]
fn shuffle_errors_empty_inputs_and_modules() -> Result<()> {
    let x = Tensor::from_vec((0..96).map(|i| i as f32).collect::<Vec<_>>(), [2, 8, 2, 3])?;
    let m2 = Tensor::zeros([2, 3], DType::F32)?;
    assert_eq!(
        err(F::pixel_shuffle(&m2, 0)),
        "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)"
    );
    for r in [0, -2] {
        assert_eq!(
            err(F::pixel_shuffle(&x, r)),
            format!("pixel_shuffle expects a positive upscale_factor, but got {r}")
        );
    }
    assert_eq!(
        err(F::pixel_shuffle(&x, 3)),
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=8 is not divisible by 9"
    );
    assert_eq!(
        err(F::pixel_unshuffle(&m2, 0)),
        "pixel_unshuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)"
    );
    assert_eq!(
        err(F::pixel_unshuffle(&x, -1)),
        "pixel_unshuffle expects a positive downscale_factor, but got -1"
    );
    let odd = Tensor::zeros([2, 3, 3, 5], DType::F32)?;
    assert_eq!(
        err(F::pixel_unshuffle(&odd, 2)),
        "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=3 is not divisible by 2"
    );
    assert_eq!(
        err(F::pixel_unshuffle(&x, 2)),
        "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=3 is not divisible by 2"
    );
    assert_eq!(
        err(F::channel_shuffle(&m2, 0)),
        "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 3]"
    );
    assert_eq!(
        err(F::channel_shuffle(&Tensor::zeros(Vec::<usize>::new(), DType::F32)?, 2)),
        "channel_shuffle expects input with > 2 dims, but got input with sizes []"
    );
    assert_eq!(
        err(F::channel_shuffle(&x, 0)),
        "Number of groups to divide channels in must be positive. Value of groups:0"
    );
    assert_eq!(
        err(F::channel_shuffle(&x, 3)),
        "Number of channels must be divisible by groups. Got 8 channels and 3 groups."
    );
    // Empty inputs: torch's shapes (pixel_unshuffle returns an empty input as it is).
    let shape = |t: Result<Tensor>| t.unwrap().dims().to_vec();
    assert_eq!(shape(F::pixel_shuffle(&Tensor::zeros([0, 4, 2, 3], DType::F32)?, 2)), [0, 1, 4, 6]);
    assert_eq!(shape(F::pixel_shuffle(&Tensor::zeros([2, 0, 2, 3], DType::F32)?, 2)), [2, 0, 4, 6]);
    assert_eq!(shape(F::pixel_unshuffle(&Tensor::zeros([2, 3, 0, 6], DType::F32)?, 2)), [2, 3, 0, 6]);
    assert_eq!(shape(F::channel_shuffle(&Tensor::zeros([2, 0, 3], DType::F32)?, 3)), [2, 0, 3]);
    // Any dtype: a permutation of the elements.
    let ints = F::pixel_shuffle(&x.to_dtype(DType::I64)?, 2)?;
    assert_eq!(ints.dtype(), DType::I64);
    assert_eq!(F::pixel_unshuffle(&ints, 2)?.to_vec::<i64>()?, x.to_dtype(DType::I64)?.to_vec::<i64>()?);

    // The modules: no state, torch's names, the functional forms.
    let ps = PixelShuffle::new(2);
    let pu = PixelUnshuffle::new(2);
    let cs = ChannelShuffle::new(4);
    assert_eq!(
        (ps.type_name(), pu.type_name(), cs.type_name()),
        ("PixelShuffle", "PixelUnshuffle", "ChannelShuffle")
    );
    assert_eq!((ps.upscale_factor, pu.downscale_factor, cs.groups), (2, 2, 4));
    assert!(ps.state_dict().keys().next().is_none() && cs.named_parameters().is_empty());
    let up = ps.forward(&x)?;
    assert_eq!(up.dims(), &[2, 2, 4, 6]);
    assert!(pu.forward(&up)?.equal(&x)?);
    assert!(cs.forward(&x)?.equal(&F::channel_shuffle(&x, 4)?)?);
    // Like torch, a bad factor is an error at the forward pass, not at construction.
    assert!(ChannelShuffle::new(0).forward(&x).is_err());
    Ok(())
}

/// Max mode with one long bag among many short ones: the bags are grouped by length, so this
/// needs memory for the rows themselves (a `bags × longest × dim` block would be 20 000 × 20 000
/// × 4 values, 3 GB); the long bag's maximum is its rows' maximum, the gradient goes to each
/// maximum's first row.
#[test]
fn embedding_bag_max_with_one_long_bag() -> Result<()> {
    let weight = Tensor::arange(40, DType::F64)?.reshape([10, 4])?.requires_grad_(true)?;
    let bags = 20_000usize;
    // Bag 0 holds 20 000 indices (row 9 once, the rest rows 0..9); every other bag row 1.
    let mut idx: Vec<i64> = (0..20_000).map(|i| if i == 7 { 9 } else { i % 9 }).collect();
    idx.extend(std::iter::repeat_n(1, bags - 1));
    let mut offsets = vec![0i64];
    offsets.extend((0..bags as i64 - 1).map(|b| 20_000 + b));
    let input = Tensor::from_vec(idx, [20_000 + bags - 1])?;
    let offsets = Tensor::from_vec(offsets, [bags])?;
    let out =
        F::embedding_bag(&input, &weight, Some(&offsets), None, 2.0, false, "max", false, None, false, None)?;
    assert_eq!(out.dims(), &[bags, 4]);
    assert_eq!(
        out.narrow(0, 0, 2)?.to_vec2::<f64>()?,
        vec![vec![36.0, 37.0, 38.0, 39.0], vec![4.0, 5.0, 6.0, 7.0]]
    );
    out.sum_all()?.backward()?;
    let g = weight.grad().unwrap().to_vec2::<f64>()?;
    assert_eq!(g[9], vec![1.0; 4]);
    assert_eq!(g[1], vec![(bags - 1) as f64; 4]);
    Ok(())
}

/// torch refuses `sparse=True` with `scale_grad_by_freq=True` when the gradient is computed:
/// "embedding_backward: scale_grad_by_freq not supported with sparse gradients".
#[test]
fn embedding_bag_sparse_frequency_scaling_refused_at_backward() -> Result<()> {
    let w = Tensor::randn([5, 3], DType::F32)?.requires_grad_(true)?;
    let input = Tensor::from_vec(vec![1i64, 2, 1], [3])?;
    let offsets = Tensor::from_vec(vec![0i64, 2], [2])?;
    let out = F::embedding_bag(&input, &w, Some(&offsets), None, 2.0, true, "sum", true, None, false, None)?;
    let e = out.sum_all()?.backward().unwrap_err();
    assert!(
        e.to_string().contains("embedding_backward: scale_grad_by_freq not supported with sparse gradients"),
        "{e}"
    );
    Ok(())
}

/// Max mode keeps a value only when it is strictly greater, as torch's kernel: a NaN wins as a
/// bag's first row and is skipped later. torch: `[[3, nan], [nan, 5]]`.
#[test]
fn embedding_bag_max_nan_rule() -> Result<()> {
    let nan = f64::NAN;
    let w = Tensor::from_vec(vec![1.0, nan, nan, 5.0, 3.0, 2.0], [3, 2])?;
    let input = Tensor::from_vec(vec![0i64, 1, 2, 1, 0], [5])?;
    let offsets = Tensor::from_vec(vec![0i64, 3], [2])?;
    let out =
        F::embedding_bag(&input, &w, Some(&offsets), None, 2.0, false, "max", false, None, false, None)?;
    let v = out.to_f64_vec()?;
    assert!(v[0] == 3.0 && v[1].is_nan() && v[2].is_nan() && v[3] == 5.0, "{v:?}");
    Ok(())
}
