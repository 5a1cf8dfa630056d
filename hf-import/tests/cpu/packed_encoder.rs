//! Encoders (BERT-style, MPNet, ModernBERT) without their padding (`AutoModel::last_hidden_state_at_tokens`, what
//! sentence embeddings run on the CPU): at every token the mask keeps, the same values as the full
//! padded forward (which matches transformers, `families.rs`); zeros at padded positions. Masks with
//! right and left padding, holes in the middle, a row of padding only, and none at all.

use crate::common;

use common::fixture;
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

/// Token ids `[rows, seq]` below the tiny fixtures' vocabulary of 100, none of them a pad id.
pub(crate) fn ids(rows: usize, seq: usize) -> Tensor {
    let data: Vec<i64> = (0..rows * seq).map(|i| 2 + (i as i64 * 37 + 11) % 97).collect();
    Tensor::from_vec(data, [rows, seq]).unwrap()
}

/// Compares the packed hidden state with the full forward's at kept positions (within `atol`, relative above 1) and
/// checks zeros at the others; returns the largest difference.
pub(crate) fn check(model: &AutoModel, mask: &[i64], rows: usize, seq: usize, types: bool, atol: f32) -> f32 {
    let input_ids = ids(rows, seq);
    let attention_mask = Tensor::from_vec(mask.to_vec(), [rows, seq]).unwrap();
    let token_types = types
        .then(|| Tensor::from_vec((0..rows * seq).map(|i| (i % 2) as i64).collect(), [rows, seq]).unwrap());
    let full = model.last_hidden_state(&input_ids, Some(&attention_mask), token_types.as_ref()).unwrap();
    let packed =
        model.last_hidden_state_at_tokens(&input_ids, &attention_mask, token_types.as_ref()).unwrap();
    assert_eq!(packed.dims(), full.dims());
    assert_eq!(packed.dtype(), full.dtype());
    let hidden = full.dims()[2];
    let full = full.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
    let packed = packed.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
    let mut worst = 0.0f32;
    let mut wrong = Vec::new();
    for (pos, &keep) in mask.iter().enumerate() {
        for j in 0..hidden {
            let (p, f) = (packed[pos * hidden + j], full[pos * hidden + j]);
            let bad = if keep != 0 {
                worst = worst.max((p - f).abs());
                // (Relative above 1: float32 rounding grows with the values, GPT-2's reach ±3.)
                (p - f).abs().is_nan() || (p - f).abs() > atol * f.abs().max(1.0)
            } else {
                p != 0.0
            };
            if bad && wrong.len() < 8 {
                wrong.push(format!("token {pos} (kept {keep}) feature {j}: packed {p}, full {f}"));
            }
        }
    }
    assert!(wrong.is_empty(), "the packed forward differs from the padded one:\n{}", wrong.join("\n"));
    worst
}

pub(crate) const SEQ: usize = 9;
/// Right padding, left padding, holes, everything kept.
pub(crate) const MASKS: [[i64; SEQ]; 4] = [
    [1, 1, 1, 1, 1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 1, 1, 1, 1],
    [1, 0, 1, 1, 0, 1, 0, 0, 1],
    [1, 1, 1, 1, 1, 1, 1, 1, 1],
];

pub(crate) fn load(name: &str, dtype: Option<DType>) -> AutoModel {
    let dir = fixture(name);
    AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, dtype).unwrap()).unwrap()
}

#[test]
fn kept_tokens_equal_the_padded_forward_for_every_encoder_family() {
    for name in [
        "bert",
        "roberta",
        "distilbert_mlm",
        "bert_mlm",
        "roberta_mlm",
        "xlm_roberta",
        "mpnet",
        "modernbert",
        "modernbert_biased",
        "modernbert_mlm",
        // The pre-norm encoders: their last norm after the packed layers.
        "roberta_prelayernorm",
        "xlm_roberta_xl",
        "megatron_bert_mlm",
    ] {
        let model = load(name, None);
        let mask: Vec<i64> = MASKS.concat();
        let types = name.starts_with("bert");
        let worst = check(&model, &mask, MASKS.len(), SEQ, types, 1e-5);
        eprintln!("{name}: max abs diff {worst:.2e}");
        // One row at a time too (a batch of one, with and without padding).
        for row in MASKS {
            check(&model, &row, 1, SEQ, types, 1e-5);
        }
    }
}

#[test]
fn rows_without_tokens_are_zero_and_leave_the_others_alone() {
    let model = load("bert", None);
    let mut mask: Vec<i64> = MASKS[..2].concat();
    mask.extend([0; SEQ]);
    check(&model, &mask, 3, SEQ, false, 1e-5);
    // Nothing kept at all: zeros throughout.
    check(&model, &[0; SEQ * 2], 2, SEQ, false, 1e-5);
}

#[test]
fn half_precision_weights_match_within_their_rounding() {
    for dtype in [DType::BF16, DType::F16] {
        let model = load("bert", Some(dtype));
        let mask: Vec<i64> = MASKS.concat();
        // The hidden state is layer-normed (values of order 1): a few units of the last place.
        let worst = check(&model, &mask, MASKS.len(), SEQ, true, 0.05);
        eprintln!("{dtype:?}: max abs diff {worst:.2e}");
    }
}

#[test]
fn bool_masks_and_bad_inputs_behave_as_the_padded_forward() {
    let model = load("bert", None);
    let input_ids = ids(2, SEQ);
    let mask = Tensor::from_vec(MASKS[..2].concat(), [2, SEQ]).unwrap();
    let as_bool = mask.ne(0).unwrap();
    let a = model.last_hidden_state_at_tokens(&input_ids, &mask, None).unwrap();
    let b = model.last_hidden_state_at_tokens(&input_ids, &as_bool, None).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let short = Tensor::ones([2, SEQ - 1], DType::I64).unwrap();
    let err = model.last_hidden_state_at_tokens(&input_ids, &short, None).unwrap_err().to_string();
    assert!(err.contains("attention_mask must have shape [2, 9]"), "{err}");
    let floats = Tensor::zeros([2, SEQ], DType::F32).unwrap();
    let err = model.last_hidden_state_at_tokens(&floats, &mask, None).unwrap_err().to_string();
    assert!(err.contains("input_ids"), "{err}");
}

/// A classifier's logits without the padding (`SequenceClassifier::logits`: packed when every
/// row's first token is kept or the head takes a mean, else the padded forward) equal its
/// forward's, for each head.
#[test]
fn classifier_logits_skip_the_padding_with_the_forwards_values() {
    use oxtorch_hf_import::SequenceClassifier;
    for name in [
        "bert_cls",
        "roberta_cls",
        "distilbert_cls",
        "xlm_roberta_cls",
        "mpnet_cls",
        "electra_cls",
        "albert_cls",
        "modernbert_cls",
        "xlm_roberta_xl_cls",
        // Mean pooling reads kept tokens only: packed for left padding too.
        "modernbert_cls_mean",
    ] {
        let AutoModel::SequenceClassifier(model) = load(name, None) else {
            panic!("{name}: not a classifier")
        };
        let model: &SequenceClassifier = &model;
        for (rows, mask) in [
            (2, [MASKS[0], MASKS[3]].concat()),           // right padding: packed
            (3, [MASKS[0], MASKS[2], MASKS[3]].concat()), // holes after a kept first token: packed
            (2, [MASKS[1], MASKS[3]].concat()),           // left padding: the padded forward
        ] {
            let input_ids = ids(rows, SEQ);
            let mask = Tensor::from_vec(mask, [rows, SEQ]).unwrap();
            // Token types where the model has two of them.
            let types = name.starts_with("bert").then(|| {
                Tensor::from_vec((0..rows * SEQ).map(|i| (i % 2) as i64).collect(), [rows, SEQ]).unwrap()
            });
            let want = model.forward(&input_ids, Some(&mask), types.as_ref(), None, false).unwrap().0;
            let got = model.logits(&input_ids, &mask, types.as_ref()).unwrap();
            assert_eq!(got.dims(), want.dims(), "{name}");
            for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(want.to_vec::<f32>().unwrap()) {
                assert!((g - w).abs() <= 1e-5, "{name}: logits {g} vs {w}");
            }
        }
    }
}

/// ModernBERT's sliding windows (2 here) and RoPE angles in the packed forward follow each
/// token's place in the padded row: rows of 20 columns with padding on either side and holes.
#[test]
fn modernbert_packed_rows_keep_their_padded_places() {
    for name in ["modernbert", "modernbert_biased"] {
        let model = load(name, None);
        let seq = 20;
        let mask: Vec<i64> = (0..4)
            .flat_map(|r| {
                (0..seq).map(move |c| match r {
                    0 => i64::from(c < 13),
                    1 => i64::from(c >= 6),
                    2 => i64::from(c % 4 != 1 && c < 17),
                    _ => 1,
                })
            })
            .collect();
        let worst = check(&model, &mask, 4, seq, false, 1e-5);
        eprintln!("{name}, 20 columns: max abs diff {worst:.2e}");
    }
}

/// MPNet's relative-position bias in the packed forward follows each token's place in the padded
/// row (holes included) over distances that reach its log-spaced buckets: rows of 40 columns with
/// padding on either side and holes.
#[test]
fn mpnet_packed_rows_keep_the_bias_of_their_padded_places() {
    let model = load("mpnet", None);
    let seq = 40;
    let mask: Vec<i64> = (0..4)
        .flat_map(|r| {
            (0..seq).map(move |c| match r {
                0 => i64::from(c < 31),
                1 => i64::from(c >= 12),
                2 => i64::from(c % 5 != 3 && c < 37),
                _ => 1,
            })
        })
        .collect();
    let worst = check(&model, &mask, 4, seq, false, 1e-5);
    eprintln!("mpnet, 40 columns: max abs diff {worst:.2e}");
}
