//! Decoder LMs without their padding (`CausalLm::last_hidden_state_packed`, what sentence
//! embeddings of decoder-based models run on the CPU): at every token the mask keeps, the same
//! values as the full padded forward (which matches transformers, `families.rs`); zeros at padded
//! positions. Every decoder family's fixture: sliding windows (Mistral, Gemma 2/3, Phi-3), local
//! and global RoPE (Gemma 3), position-dependent frequencies (dynamic NTK, LongRoPE past its
//! original length), soft-capping (Gemma 2), q/k norms (Qwen3), biases (Qwen2); masks with right
//! and left padding, holes (where packed and padded distances differ), a row of padding only.

use crate::packed_encoder::{check, ids, load, MASKS, SEQ};

use oxtorch_hf_import::AutoModel;
use oxtorch_tensor::{DType, Tensor};

/// Every decoder fixture (the multimodal Gemma 3 runs its text model).
const DECODERS: [&str; 13] = [
    "llama",
    "llama_dynamic",
    "llama_tied",
    "mistral",
    "qwen2",
    "qwen2_yarn",
    "qwen3",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_mm",
    "phi3",
    "phi3_longrope",
];

#[test]
fn kept_tokens_equal_the_padded_forward_for_every_decoder_family() {
    for name in DECODERS {
        let model = load(name, None);
        let mask: Vec<i64> = MASKS.concat();
        let worst = check(&model, &mask, MASKS.len(), SEQ, false, 1e-5);
        eprintln!("{name}: max abs diff {worst:.2e}");
        for row in MASKS {
            check(&model, &row, 1, SEQ, false, 1e-5);
        }
    }
}

/// The hidden state an embedding model pools is the forward's last `hidden_states` entry, now
/// computed without the LM head.
#[test]
fn the_last_hidden_state_is_the_forwards_last_hidden_state() {
    for name in ["llama", "gemma2", "qwen3"] {
        let model = load(name, None);
        let input_ids = ids(2, SEQ);
        let mask = Tensor::from_vec(MASKS[..2].concat(), [2, SEQ]).unwrap();
        let got = model.last_hidden_state(&input_ids, Some(&mask), None).unwrap();
        let lm = model.causal_lm().unwrap();
        let want =
            lm.forward(&input_ids, Some(&mask), None, None, true).unwrap().hidden_states.pop().unwrap();
        let f32s = |t: Tensor| t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(f32s(got), f32s(want), "{name}");
    }
}

#[test]
fn decoder_rows_without_tokens_are_zero_and_leave_the_others_alone() {
    let model = load("mistral", None);
    let mut mask: Vec<i64> = MASKS[1..3].concat();
    mask.extend([0; SEQ]);
    check(&model, &mask, 3, SEQ, false, 1e-5);
    check(&model, &[0; SEQ * 2], 2, SEQ, false, 1e-5);
}

#[test]
fn half_precision_decoders_match_within_their_rounding() {
    for (name, dtype) in [("qwen3", DType::BF16), ("gemma3", DType::F16)] {
        let model = load(name, Some(dtype));
        let mask: Vec<i64> = MASKS.concat();
        // RMS-normed outputs (values of order 1, Gemma's scaled by its weights): a few units of
        // the last place.
        let worst = check(&model, &mask, MASKS.len(), SEQ, false, 0.05);
        eprintln!("{name} {dtype:?}: max abs diff {worst:.2e}");
    }
}

#[test]
fn bad_decoder_inputs_are_errors() {
    let model: AutoModel = load("llama", None);
    let input_ids = ids(2, SEQ);
    let short = Tensor::ones([2, SEQ - 1], DType::I64).unwrap();
    let err = model.last_hidden_state_at_tokens(&input_ids, &short, None).unwrap_err().to_string();
    assert!(err.contains("attention_mask must have shape [2, 9]"), "{err}");
    let mask = Tensor::from_vec(MASKS[..2].concat(), [2, SEQ]).unwrap();
    let out_of_range = Tensor::full([2, SEQ], 100.0, DType::I64).unwrap();
    let err = model.last_hidden_state_at_tokens(&out_of_range, &mask, None).unwrap_err().to_string();
    assert!(err.contains("index out of range") || err.contains("100"), "{err}");
    let floats = Tensor::zeros([2, SEQ], DType::F32).unwrap();
    assert!(model.last_hidden_state_at_tokens(&floats, &mask, None).is_err());
}
