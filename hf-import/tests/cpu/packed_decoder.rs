//! Decoder LMs without their padding (`CausalLm::last_hidden_state_packed`, what sentence
//! embeddings of decoder-based models run on the CPU): at every token the mask keeps, the same
//! values as the full padded forward (which matches transformers, `families.rs`); zeros at padded
//! positions. Every decoder family's fixture: sliding windows (Mistral, Gemma 2/3, Phi-3), local
//! and global RoPE (Gemma 3), position-dependent frequencies (dynamic NTK, LongRoPE past its
//! original length), soft-capping (Gemma 2), q/k norms (Qwen3), biases (Qwen2); masks with right
//! and left padding, holes (where packed and padded distances differ), a row of padding only.

use crate::decoder_fixtures::DECODERS;
use crate::packed_encoder::{check, ids, load, MASKS, SEQ};

use oxtorch_hf_import::AutoModel;
use oxtorch_tensor::{DType, Tensor};

/// Every decoder fixture: [`DECODERS`] and the bidirectional Gemma 3 (EmbeddingGemma's) and
/// Gemma 4 ones (which cannot generate).
fn decoders() -> impl Iterator<Item = &'static str> {
    DECODERS.into_iter().chain(["gemma3_bidir", "gemma4_bidir"])
}

#[test]
fn kept_tokens_equal_the_padded_forward_for_every_decoder_family() {
    for name in decoders() {
        let model = load(name, None);
        // (A bfloat16 checkpoint runs in bfloat16: an attention over the row's kept keys or over
        // the padded row can round an output an ulp apart, which later layers carry; see
        // `random_masks_keep_the_padded_forwards_values`.)
        let bf16 = model.causal_lm().is_some_and(|lm| lm.dtype() == DType::BF16);
        let tol = if bf16 { 2e-2 } else { 1e-5 };
        let mask: Vec<i64> = MASKS.concat();
        let worst = check(&model, &mask, MASKS.len(), SEQ, false, tol);
        eprintln!("{name}: max abs diff {worst:.2e}");
        for row in MASKS {
            check(&model, &row, 1, SEQ, false, tol);
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

/// Seeded random batches (2 to 5 rows of up to 16 columns, each row a random mix of padding on
/// either side and holes) for every decoder fixture: the packed forward's kept tokens equal the
/// padded forward's.
#[test]
fn random_masks_keep_the_padded_forwards_values() {
    let mut state = 0x38u64;
    let mut next = move |n: u64| {
        // SplitMix64.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    };
    for name in decoders() {
        let model = load(name, None);
        // A bfloat16 checkpoint (qwen3) runs in bfloat16: an attention summed over the row's kept
        // keys or over the padded row can round an output an ulp apart, which later layers carry
        // (a few ulps, ~1e-2); float32 ones agree to rounding: to a few 1e-6 mostly, 1.6e-5 for
        // Gemma on one mask (its scaled embeddings make a large residual stream, whose rounding the
        // final norm divides by the row's RMS, not by each output's size).
        let bf16 = model.causal_lm().is_some_and(|lm| lm.dtype() == DType::BF16);
        let tol = if bf16 { 2e-2 } else { 4e-5 };
        for _ in 0..3 {
            let (rows, seq) = (2 + next(4) as usize, 4 + next(13) as usize);
            let mask: Vec<i64> = (0..rows)
                .flat_map(|_| {
                    let (start, end) = (next(seq as u64 / 2), seq as u64 - next(seq as u64 / 2));
                    let holes = next(3) == 0;
                    (0..seq as u64)
                        .map(|c| i64::from(c >= start && c < end && !(holes && next(4) == 0)))
                        .collect::<Vec<_>>()
                })
                .collect();
            check(&model, &mask, rows, seq, false, tol);
        }
    }
}
