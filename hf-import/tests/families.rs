//! Every family against transformers: tiny random checkpoints from `make_fixtures.py`, with logits,
//! `last_hidden_state`, `pooler_output` and every hidden state compared at atol = rtol = 1e-4 (f32).

mod common;

use common::{assert_close, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::DType;

/// Loads fixture `name` (cast to float32), runs it on the golden inputs and compares every output.
fn check(name: &str) {
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    let model = AutoModel::load(&cfg, &weights).unwrap();
    let (inputs, expected) = golden(name);
    let outputs = model.forward_named(&inputs, true).unwrap();
    let names: Vec<_> = outputs.iter().map(|(k, _)| k.clone()).collect();
    let want: Vec<_> = expected.keys().cloned().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, want, "{name}: output names");
    let mut worst = 0.0f64;
    for (key, actual) in &outputs {
        worst = worst.max(assert_close(&format!("{name} {key}"), actual, &expected[key], 1e-4, 1e-4));
    }
    eprintln!("{name}: {} outputs, max abs diff {worst:.2e}", outputs.len());
}

#[test]
fn bert_model_with_pooler() {
    check("bert");
}

#[test]
fn bert_for_masked_lm() {
    check("bert_mlm");
}

#[test]
fn llama_llama3_rope_gqa_from_pytorch_bin() {
    check("llama");
}

#[test]
fn llama_tied_embeddings() {
    check("llama_tied");
}

#[test]
fn qwen2_sharded() {
    check("qwen2");
}

#[test]
fn qwen3_qk_norm_bf16_checkpoint() {
    check("qwen3");
}

#[test]
fn mistral_sliding_window() {
    check("mistral");
}
