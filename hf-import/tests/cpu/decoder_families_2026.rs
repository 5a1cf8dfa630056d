//! More decoder families against transformers (`decoder_families.rs` has the earlier ones): Gemma 4
//! and 3n (and their multimodal checkpoints on text), Mistral 4, Flint, A.X K1, Kolibri-1, LFM3 and
//! DiffLlama, on the tiny checkpoints of `make_fixtures.py`.

use crate::common;

use common::{check, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

/// Gemma 4: full layers of their own head width with values from their keys, proportional RoPE,
/// unscaled attention with value norms, per-layer inputs, the last layers reading earlier layers'
/// keys and values with double-wide MLPs, layer scalars; a mixture beside each dense MLP (bf16,
/// the widths as transformers 5.5 wrote them); attention both ways (its sliding layers' window
/// one wider than Gemma 3's); Gemma4ForConditionalGeneration on text.
#[test]
fn gemma4_shared_kv_per_layer_inputs_and_mixtures() {
    check("gemma4");
    check("gemma4_moe");
    check("gemma4_mm");
    check("gemma4_bidir");
    let dir = fixture("gemma4_mm");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("gemma4_mm");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 16, 16], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("image inputs are not supported for Gemma4ForConditionalGeneration"), "{err}");
}

/// Gemma 3n: hidden streams with alternating updates and low-rank residuals, per-layer inputs
/// whose table is smaller than the vocabulary, shared keys and values, MLP widths per layer and
/// activation sparsity (the hidden states are the streams, the last one before their mean); four
/// streams with the second active, from bf16, with 4.x-style RoPE bases; Gemma3nForConditionalGeneration
/// on text, refusing media inputs and the multimodal embedders' ids.
#[test]
fn gemma3n_streams_and_sparse_activations() {
    check("gemma3n");
    check("gemma3n_typed");
    check("gemma3n_mm");
    let dir = fixture("gemma3n_mm");
    let weights = Weights::load(&dir, None).unwrap();
    let (mut inputs, _) = golden("gemma3n_mm");
    // (The fixture's vision tokens start at 200; from 50, its id 99 is one.)
    let cfg = Config::load(&dir).unwrap();
    let mut json = cfg.json().clone();
    json["vision_config"]["vocab_offset"] = serde_json::json!(50);
    let model = AutoModel::load(&Config::from_map(json), &weights).unwrap();
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("input_ids hold 99, an id of the multimodal embedders (from 50)"), "{err}");
    let model = AutoModel::load(&cfg, &weights).unwrap();
    inputs.insert("input_features".into(), Tensor::zeros([1, 8, 128], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(
        err.contains("image and audio inputs are not supported for Gemma3nForConditionalGeneration"),
        "{err}"
    );
}

/// Mistral 4: DeepSeek-V3's latent attention with Ministral 3's query scale under YaRN, a softmax
/// router over groups, scaled, beside a shared expert; at full query rank with RoPE over halves,
/// from bf16.
#[test]
fn mistral4_latent_attention_and_grouped_softmax() {
    check("mistral4");
    check("mistral4_plain");
}

/// Flint: sinks everywhere, RoPE on the sliding layers alone, float32 sigmoid routing beside an
/// ungated shared expert (the sinks under the checkpoints' `softmax_offset`); the layer kinds
/// given, not renormalised, from bf16.
#[test]
fn flint_sinks_and_sigmoid_mixture() {
    check("flint");
    check("flint_typed");
}

/// A.X-K1: DeepSeek-V3's blocks with the mixture's output normed (the norm at the layer, as
/// checkpoints keep it), one dense first layer by the legacy default; the layer kinds given, RoPE
/// over halves, from bf16.
#[test]
fn axk1_normed_mixture() {
    check("axk1");
    check("axk1_typed");
}

/// Kolibri-1: GLM-4's sandwich norms, EXAONE 4's attention, a mixture on every layer choosing by
/// biased float32 logits and weighting by their sigmoids, beside a shared expert (checkpoints'
/// names); a full layer then a sliding one, not renormalised, from bf16.
#[test]
fn kolibri1_logit_biased_mixture() {
    check("kolibri1");
    check("kolibri1_typed");
}

/// LFM3: short convolutions, full layers with proportional RoPE and sliding ones, per-head attention
/// gates, sandwich norms (checkpoints' `gate_proj`); neither gates nor sandwich norms, layer types
/// given, from bf16.
#[test]
fn lfm3_convolutions_gates_and_sandwich_norms() {
    check("lfm3");
    check("lfm3_plain");
}

/// DiffLlama: differential attention over grouped key/value heads; as many key/value heads as
/// heads, with biases, from bf16.
#[test]
fn diffllama_differential_attention() {
    check("diffllama");
    check("diffllama_mha");
}

/// BitNet b1.58: Llama's blocks with ReLU² and norms before `o_proj` and `down_proj`, unquantized;
/// its weights as transformers' BitNet integration stores them, against transformers'
/// `BitLinear` / `AutoBitLinear` (int8 activations): 2-bit packed rows divided by their scale,
/// packed rows multiplied by it, full weights made ternary when loaded.
#[test]
fn bitnet_ternary_weights_and_int8_activations() {
    for name in ["bitnet", "bitnet_packed", "bitnet_autobit", "bitnet_online"] {
        check(name);
    }
}

/// A BitNet checkpoint's quantization settings that transformers would not read the same way are
/// errors naming them: another method, projections left unquantized, a quantized head, packed rows
/// of another dtype.
#[test]
fn bitnet_quantization_settings_are_checked() {
    let dir = fixture("bitnet_packed");
    let weights = Weights::load(&dir, None).unwrap();
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let load = |quant: serde_json::Value, weights: &Weights| {
        let mut cfg = base.clone();
        cfg["quantization_config"] = quant;
        let cfg = Config::from_json_str(&cfg.to_string()).unwrap();
        AutoModel::load(&cfg, weights).map(|_| ()).unwrap_err().to_string()
    };
    let err = load(serde_json::json!({"quant_method": "gptq"}), &weights);
    assert!(err.contains("\"gptq\""), "{err}");
    let err = load(
        serde_json::json!({"quant_method": "bitnet", "modules_to_not_convert": ["lm_head", "mlp.down_proj"]}),
        &weights,
    );
    assert!(err.contains("unquantized"), "{err}");
    let err = load(serde_json::json!({"quant_method": "bitnet", "modules_to_not_convert": []}), &weights);
    assert!(err.contains("LM head"), "{err}");
    let err = load(serde_json::json!({"quant_method": "bitnet", "use_rms_norm": true}), &weights);
    assert!(err.contains("use_rms_norm"), "{err}");
    let floats = Weights::load(&fixture("bitnet"), None).unwrap();
    let err = load(serde_json::json!({"quant_method": "bitnet"}), &floats);
    assert!(err.contains("packed uint8") && err.contains("down_proj.weight"), "{err}");
}

/// The ModernBERT decoder (Ettin): normed embeddings, the first layer without its input norm,
/// global and windowed (`local_attention / 2`) layers with a RoPE base each, a GLU MLP, the
/// prediction head before the tied decoder with its bias; with biases everywhere, an untied
/// decoder without bias and a SiLU head; and the first as transformers 4.x wrote its config
/// (`global_attn_every_n_layers`, `global_rope_theta`, `local_rope_theta`); its sequence
/// classifier (the prediction head before `classifier`, at the last non-padding token).
#[test]
fn modernbert_decoder_causal_modernbert_layers() {
    for name in
        ["modernbert_decoder", "modernbert_decoder_bias", "modernbert_decoder_v4", "modernbert_decoder_cls"]
    {
        check(name);
    }
}

/// EuroBERT: Llama's layers attending both ways; its masked LM with biases.
#[test]
fn eurobert_bidirectional_llama() {
    check("eurobert");
    check("eurobert_mlm");
    // Its classifiers: the first token, the kept tokens' mean, or the mean of every token's logits;
    // every token's labels.
    for name in ["eurobert_cls_bos", "eurobert_cls_mean", "eurobert_cls_late", "eurobert_tok"] {
        check(name);
    }
}
