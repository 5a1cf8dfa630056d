//! The decoder families against transformers (the later ones; `families.rs` has the first, and
//! the encoders): GPT-2, GPT-NeoX, the mixtures of experts, StarCoder2, Falcon, OLMo, Granite,
//! StableLM, GPT-J, OPT, Cohere and SmolLM3, on the tiny checkpoints of `make_fixtures.py`.

use std::collections::BTreeMap;

use crate::common;

use common::{assert_close, check, check_with, check_within, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

/// GPT-2: learned positions, layer norms, `Conv1D` weights, a fused `c_attn`, the tied head; and
/// the OpenAI upload's layout (no `transformer.` prefix, causal-mask buffers) with an untied head,
/// `n_inner`, plain GELU and scores divided by the layer's number.
#[test]
fn gpt2_learned_positions_and_conv1d_weights() {
    check("gpt2");
    check("gpt2_openai");
}

/// GPT-2's family takes `token_type_ids`, their rows of the token table added to the inputs'
/// embeddings (GPT-2 and its classifiers, GPT-Neo, GPT-J, CodeGen, GPTBigCode): the outputs on
/// typed inputs match transformers', and differ from the untyped ones.
#[test]
fn gpt2_family_takes_token_types() {
    let inputs = ["input_ids", "attention_mask", "token_type_ids"];
    for name in ["gpt2", "gpt2_cls", "gpt2_tok", "gpt_neo", "gptj", "codegen", "gpt_bigcode"] {
        let dir = fixture(name);
        let model =
            AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
        let all = common::read_all(&dir.join("expected_types.safetensors"));
        let (typed, expected): (BTreeMap<_, _>, BTreeMap<_, _>) =
            all.into_iter().partition(|(k, _)| inputs.contains(&k.as_str()));
        let outputs = model.forward_named(&typed, true).unwrap();
        assert_eq!(outputs.len(), expected.len(), "{name}: outputs");
        for (key, actual) in &outputs {
            assert_close(&format!("{name} typed {key}"), actual, &expected[key], 1e-4, 1e-4);
        }
        let mut untyped = typed.clone();
        untyped.remove("token_type_ids");
        let plain = model.forward_named(&untyped, false).unwrap();
        let diff = plain[0].1.sub(&expected[&plain[0].0]).unwrap().abs().unwrap().max().unwrap();
        assert!(diff.to_vec::<f32>().unwrap()[0] > 1e-3, "{name}: the token types changed nothing");
    }
    // Another decoder refuses them.
    let dir = fixture("llama");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("llama");
    inputs.insert("token_type_ids".into(), inputs["input_ids"].zeros_like().unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("unexpected input 'token_type_ids'"), "{err}");
}

/// GPT-NeoX (Pythia): RoPE over half of each head, parallel residuals, `query_key_value` interleaved
/// per head, the untied `embed_out`, from the transformers 5 and the 4.x keys (`rotary_pct`,
/// `rotary_emb_base`); sequential residuals without attention biases over whole heads.
#[test]
fn gpt_neox_parallel_residuals_and_partial_rotary() {
    check("gpt_neox");
    let dir = fixture("gpt_neox");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("rope_parameters").is_none() && v4.get("rotary_pct").is_some());
    check_with("gpt_neox", &v4, &Weights::load(&dir, None).unwrap());
    check("gpt_neox_sequential");
}

/// Mixtures of experts: Mixtral (renormalised top-2 of 4 on every layer, `block_sparse_moe` names)
/// and Qwen3-MoE (top-2 of 4 weighted by the raw probabilities, a dense layer in `mlp_only_layers`).
#[test]
fn mixtral_and_qwen3_moe_route_tokens_to_their_experts() {
    check("mixtral");
    check("qwen3_moe");
    // Qwen2-MoE: renormalised top-3, sparse every second layer, the gated shared expert.
    check("qwen2_moe");
}

/// StarCoder2: layer norms, biases, the ungated `c_fc`/`c_proj` MLP, a sliding window, tied head.
#[test]
fn starcoder2_layer_norms_and_window() {
    check("starcoder2");
}

/// Phi: one layer norm for attention and MLP in parallel, half-head RoPE, the LM head's bias.
/// Falcon's three `query_key_value` layouts (multi-query, grouped, per head) and blocks (parallel
/// on one norm, on two, sequential).
#[test]
fn falcon_layouts() {
    for name in ["falcon", "falcon_40b", "falcon_seq"] {
        check(name);
    }
}

/// transformers' `FalconForSequenceClassification` takes no `position_ids` (its positions count
/// from 0 whatever is passed): given, they are an error naming the inputs it takes, not ignored.
#[test]
fn falcon_classifier_takes_no_position_ids() {
    let dir = fixture("falcon");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["architectures"] = serde_json::json!(["FalconForSequenceClassification"]);
    json["pad_token_id"] = 0.into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let mut tensors: Vec<(String, Tensor)> =
        Weights::load(&dir, None).unwrap().iter().map(|t| t.map(|(k, t)| (k.clone(), t)).unwrap()).collect();
    let hidden = json["hidden_size"].as_u64().unwrap() as usize;
    tensors.push(("score.weight".into(), Tensor::ones([2, hidden], DType::F32).unwrap()));
    let model = AutoModel::load(&cfg, &Weights::from_tensors(tensors)).unwrap();
    let ids = Tensor::ones([1, 4], DType::I64).unwrap();
    let mut inputs = std::collections::BTreeMap::from([("input_ids".to_string(), ids.clone())]);
    assert_eq!(model.forward_named(&inputs, false).unwrap()[0].1.dims(), [1, 2]);
    inputs.insert("position_ids".into(), Tensor::arange(4i64, ()).unwrap().unsqueeze(0).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(
        err.contains("unexpected input 'position_ids' (this model takes input_ids, attention_mask)"),
        "{err}"
    );
}

/// OLMo's parameterless norms and clamped q/k/v; OLMo 2's post-norms and whole-projection q/k norms;
/// OLMo 3's sliding and full layers with RoPE parameters of their own, from per-type dicts and
/// from a 4.x config (its `rope_theta` and scaling on the full layers only).
#[test]
fn olmo_olmo2_and_olmo3() {
    check("olmo");
    check("olmo2");
    check("olmo3");
    check("olmo3_v4");
}

/// Granite's multipliers: embeddings, attention scale, residual branches, logits.
#[test]
fn granite() {
    check("granite");
}

/// StableLM: layer norms, RoPE over a quarter of each head; q/k/v biases, per-head q/k layer norms,
/// the parallel block and half the head rotated; its sequence classifier.
#[test]
fn stablelm() {
    for name in ["stablelm", "stablelm_qk", "stablelm_cls"] {
        check(name);
    }
}

/// GPT-J: the parallel block on one layer norm, interleaved RoPE over part of each head (all of it
/// with `rotary_dim` null), the MLP's and LM head's biases; its sequence classifier.
#[test]
fn gptj() {
    for name in ["gptj_full", "gptj", "gptj_cls"] {
        check(name);
    }
}

/// GPT-Neo: unscaled scores, q/k/v without biases, global and local layers (a window crossed by
/// the inputs) from `attention_types`; an untied head and a gelu MLP; its sequence classifier.
#[test]
fn gpt_neo() {
    for name in ["gpt_neo", "gpt_neo_local", "gpt_neo_cls"] {
        check(name);
    }
}

/// BLOOM: ALiBi over the kept tokens, the embeddings' norm, the per-head fused `query_key_value`;
/// six heads (slopes past a power of two), residuals after the norms and an untied head; its
/// sequence classifier; the checkpoint without `transformer.`, as bigscience's uploads have it.
#[test]
fn bloom() {
    for name in ["bloom", "bloom_post", "bloom_cls"] {
        check(name);
    }
    let dir = fixture("bloom");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    let bare = weights.renamed(|n| Some(n.strip_prefix("transformer.").unwrap_or(n).to_string()));
    assert!(bare.contains("word_embeddings.weight") && !bare.contains("lm_head.weight"));
    check_with("bloom", &cfg, &bare);
    // BLOOM reads no positions: position_ids are ignored, as transformers ignores them.
    let model = AutoModel::load(&cfg, &weights).unwrap();
    let (mut inputs, _) = golden("bloom");
    let plain = model.forward_named(&inputs, false).unwrap();
    inputs.insert("position_ids".into(), Tensor::from_vec((0..14i64).rev().collect(), [2, 7]).unwrap());
    let shifted = model.forward_named(&inputs, false).unwrap();
    assert_close("bloom with position_ids", &shifted[0].1, &plain[0].1, 0.0, 0.0);
}

/// GPTBigCode: multi-query attention from the fused `c_attn`, learned positions; the per-head
/// layout without `multi_query`, unscaled scores and an untied head; its sequence classifier.
#[test]
fn gpt_bigcode() {
    for name in ["gpt_bigcode", "gpt_bigcode_mha", "gpt_bigcode_cls"] {
        check(name);
    }
}

/// MPT: ALiBi by column, bias-free norms and projections; six heads, `clip_qkv`, a
/// `softmax_scale` and an untied head; its sequence classifier.
#[test]
fn mpt() {
    for name in ["mpt", "mpt_clip", "mpt_cls"] {
        check(name);
    }
}

/// CodeGen: GPT-J's block from the four-shard `qkv_proj`, with partial and whole-head rotary dims.
#[test]
fn codegen() {
    for name in ["codegen", "codegen_wide"] {
        check(name);
    }
}

/// OLMoE: whole-projection q/k norms, `clip_qkv` after them, a mixture of experts in every layer;
/// renormalised top-k probabilities.
#[test]
fn olmoe() {
    for name in ["olmoe", "olmoe_norm"] {
        check(name);
    }
}

/// Granite-MoE: Granite's multipliers with a mixture in every layer, from transformers 5's names
/// and from the original ones (`block_sparse_moe.router.layer`, `input_linear`, `output_linear`).
#[test]
fn granitemoe() {
    check("granitemoe");
    let dir = fixture("granitemoe_v4");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    assert!(weights.contains("model.layers.0.block_sparse_moe.input_linear.weight"));
    check_with("granitemoe", &cfg, &weights);
}

/// Nemotron: LayerNorm1P norms, the squared-ReLU MLP, RoPE over half of each head; the whole head
/// with biases and a wider head_dim; its sequence classifier.
#[test]
fn nemotron() {
    for name in ["nemotron", "nemotron_full", "nemotron_cls"] {
        check(name);
    }
}

/// GLM: q/k/v biases, the fused gate_up_proj, interleaved RoPE over half of each head; GLM-4's
/// branch-closing norms with the whole head rotated; GLM's sequence classifier.
#[test]
fn glm() {
    for name in ["glm", "glm4", "glm_cls"] {
        check(name);
    }
}

/// BioGPT: pre-norm layer norms, a GELU MLP, scaled embeddings, learned positions offset by 2;
/// unscaled with a ReLU MLP and an untied head; its sequence classifier.
#[test]
fn biogpt() {
    for name in ["biogpt", "biogpt_plain", "biogpt_cls"] {
        check(name);
    }
}

/// XGLM: pre-norm layer norms, a GELU MLP, scaled embeddings, fairseq's sinusoidal positions;
/// unscaled with a ReLU MLP and a padding id whose zeroed row the positions reach.
#[test]
fn xglm() {
    for name in ["xglm", "xglm_plain"] {
        check(name);
    }
}

/// Arcee: Llama with the ungated squared-ReLU MLP; its sequence classifier.
#[test]
fn arcee() {
    for name in ["arcee", "arcee_cls"] {
        check(name);
    }
}

/// ERNIE 4.5: interleaved whole-head RoPE; biases on every projection and an untied head.
#[test]
fn ernie4_5() {
    for name in ["ernie4_5", "ernie4_5_bias"] {
        check(name);
    }
}

/// DeepSeek-V3: latent attention with a low-rank q and values narrower than the keys, interleaved
/// RoPE under YaRN (scores scaled by mscale²), a dense layer then a mixture routed by biased sigmoid
/// scores within the best groups, renormalised and scaled, with a shared expert; a full q_proj,
/// wider values, half-split RoPE and attention biases from a bf16 checkpoint; its classifier.
/// DeepSeek-V2: complex RoPE, greedy softmax routing, two shared experts; group-limited routing.
#[test]
fn deepseek() {
    for name in ["deepseek_v3", "deepseek_v3_plain", "deepseek_v3_cls", "deepseek_v2", "deepseek_v2_group"] {
        check(name);
    }
    // More experts a token than its kept groups hold (2 of 4 groups of 2) is refused: transformers
    // would weigh experts of masked groups, in its top-k's order among equal scores.
    let dir = fixture("deepseek_v3");
    let mut json = Config::load(&dir).unwrap().json().clone();
    json.insert("num_experts_per_tok".into(), 5.into());
    let err = AutoModel::load(&Config::from_map(json), &Weights::load(&dir, None).unwrap()).unwrap_err();
    let err = err.to_string();
    assert!(err.contains("num_experts_per_tok (5) is more than the 4 experts"), "{err}");
}

/// gpt-oss: attention sinks, q/k/v/o biases, a sliding layer then a full one, YaRN RoPE, a mixture
/// with a biased router (softmax over the top-k logits) and biased experts under the clamped
/// SwiGLU (clamping at a low limit); without attention biases, the layers the other way round,
/// from a bf16 checkpoint; its classifier.
#[test]
fn gpt_oss() {
    for name in ["gpt_oss", "gpt_oss_bf16", "gpt_oss_cls"] {
        check(name);
    }
}

/// GLM-4-MoE: half-split partial RoPE, q/k/v biases and per-head q/k norms, a dense layer then
/// DeepSeek-V3's grouped sigmoid routing with a shared expert; without biases, norms or groups.
/// dots.llm1: Qwen3's attention with a window on its second layer and that mixture. ERNIE 4.5
/// MoE: softmax routing biased by `moe_statics`, biases on all but the routed experts, the LM
/// head's too. FlexOLMo: OLMo 2's blocks with OLMoE's mixture.
#[test]
fn glm4_moe_and_dots1() {
    for name in ["glm4_moe", "glm4_moe_plain", "dots1", "ernie4_5_moe", "flex_olmo"] {
        check(name);
    }
}

/// VaultGemma: Gemma 2's attention in plain pre-norm blocks. HunYuan dense: q/k norms after
/// RoPE, NTK-alpha RoPE; its classifier. Granite-MoE-Shared: Granite-MoE plus a shared MLP.
/// Apertus: q/k norms and the ungated MLP under xIELU with each layer's scalars.
#[test]
fn vaultgemma_and_hunyuan() {
    for name in ["vaultgemma", "hunyuan", "hunyuan_cls", "hunyuan_moe", "granitemoeshared", "apertus"] {
        check(name);
    }
}

/// EXAONE 3/3.5: Llama under GPT-2-style names, from transformers 5's config (naming
/// `LlamaForCausalLM`) and from the remote code's (`ExaoneForCausalLM`, its own keys).
#[test]
fn exaone() {
    check("exaone");
    let dir = fixture("exaone");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("num_layers").is_some() && v4.get("architectures").unwrap()[0] == "ExaoneForCausalLM");
    check_with("exaone", &v4, &Weights::load(&dir, None).unwrap());
}

/// InternLM3 and IQuestCoder: Llama on their own config classes; InternLM3's biases, also under
/// the remote code's names (`qkv_bias`, `bias`).
#[test]
fn internlm3_and_iquestcoder() {
    check("internlm3");
    let dir = fixture("internlm3");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("qkv_bias").is_some() && v4.get("architectures").unwrap()[0] == "InternLM3ForCausalLM");
    check_with("internlm3", &v4, &Weights::load(&dir, None).unwrap());
    check("iquestcoder");
}

/// Ministral 3: the rotated queries scaled by position (the scale steps every 4 tokens here, every
/// 3 in the windowed classifiers); the goldens differ from the unscaled model's.
#[test]
fn ministral3_scales_queries_by_position() {
    check("ministral3");
    check("ministral3_cls");
    let dir = fixture("ministral3");
    let mut json = Config::load(&dir).unwrap().json().clone();
    json["rope_parameters"]["llama_4_scaling_beta"] = 0.0.into();
    let unscaled = AutoModel::load(&Config::from_map(json), &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, expected) = golden("ministral3");
    let logits = unscaled.forward_named(&inputs, false).unwrap().remove(0).1;
    let diff = logits.sub(&expected["logits"]).unwrap().abs().unwrap().max().unwrap();
    assert!(diff.to_vec::<f32>().unwrap()[0] > 1e-2, "the query scale changed nothing");
}

/// Mistral 3 multimodal checkpoints on text: a Mistral text model under the names
/// `save_pretrained` writes, with its own head; a Ministral 3 one tied by the outer flag. An image
/// for a prompt without image tokens is an error (Mistral 3 with images: `images.rs`).
#[test]
fn mistral3_multimodal_on_text() {
    check("mistral3");
    check("mistral3_ministral3");
    let dir = fixture("mistral3");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("mistral3");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 32, 32], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("Image features and image tokens do not match, tokens: 0, features: 4"), "{err}");
}

/// Qwen's vision-language checkpoints on text: Qwen2-VL and Qwen2.5-VL as Qwen2 (the head tied by
/// the nested flag), Qwen3-VL as Qwen3, Qwen3-VL-MoE as Qwen3-MoE; a 4.x Qwen2-VL config (flat,
/// `mrope`) and Qwen3-VL-MoE's experts stored transposed. A grid without its pixels is refused
/// (their images and videos: `images.rs`).
#[test]
fn qwen_vl_on_text() {
    for name in ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen2_vl_v4", "qwen3_vl_moe_hub"] {
        check(name);
    }
    let dir = fixture("qwen3_vl");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("qwen3_vl");
    inputs.insert("image_grid_thw".into(), Tensor::from_vec(vec![1i64, 2, 2], [1, 3]).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    let want = "unexpected input 'image_grid_thw' (Qwen3VLForConditionalGeneration takes its images as pixel_values)";
    assert!(err.contains(want), "{err}");
}

/// Vision-language classes on text, each over a language model of its own model type: LLaVA
/// (Llama), LLaVA-OneVision (Qwen2, tied by the text config's flag), Aya Vision (Cohere 2, its
/// logit scale not applied by the class's head), SmolVLM (`model.text_model.*`), InternVL
/// (Qwen2), LFM2-VL (LFM2), Llama 3.2 Vision (Llama without its cross-attention layers),
/// PaliGemma 2 (Gemma 2, soft-capped); the audio-language Qwen2-Audio (Qwen2) and Voxtral
/// (Llama). Qwen2-Audio's image inputs are refused (the classes that take images:
/// `images.rs`).
#[test]
fn vision_language_on_text() {
    for name in [
        "llava",
        "llava_onevision",
        "aya_vision",
        "smolvlm",
        "internvl",
        "lfm2_vl",
        "mllama",
        "paligemma",
        "qwen2_audio",
        "voxtral",
    ] {
        check(name);
    }
    let dir = fixture("qwen2_audio");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("qwen2_audio");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 8, 8], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    let want =
        "image and video inputs are not supported for Qwen2AudioForConditionalGeneration (it takes audio as \
                input_features)";
    assert!(err.contains(want), "{err}");
    // Llama 3.2 Vision's images need their tiles' layouts.
    let dir = fixture("mllama");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("mllama");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 1, 4, 3, 8, 8], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("missing input 'aspect_ratio_ids' (the images' tile layouts)"), "{err}");
    // LFM2-VL's images need their sizes.
    let dir = fixture("lfm2_vl");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("lfm2_vl");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 4, 48], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("missing input 'spatial_shapes' (LFM2-VL's images of their own sizes)"), "{err}");
}

/// Sarvam's mixtures: Sarvam-MLA (DeepSeek-V3 on its config class's defaults), also from the
/// remote code's config (`deepseek_yarn`, `num_experts`); Sarvam-MoE (GLM-4-MoE with whole-head
/// RoPE) under the remote code's names (a fused `query_key_value`), as transformers saves it, and
/// under transformers' module names with the remote code's config keys (`use_qkv_bias`).
#[test]
fn sarvam_mla_and_moe() {
    check("sarvam_mla");
    let dir = fixture("sarvam_mla");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(
        v4.get("rope_scaling").is_some() && v4.get("architectures").unwrap()[0] == "SarvamMLAForCausalLM"
    );
    check_with("sarvam_mla", &v4, &Weights::load(&dir, None).unwrap());
    check("sarvam_moe");
    check("sarvam_moe_names");
}

/// NanoChat: weightless RMS norms (on the embeddings too), q/k norms after its reversed RoPE, the
/// ungated relu² MLP, the final soft-capping; with attention biases.
#[test]
fn nanochat_weightless_norms_and_reversed_rope() {
    check("nanochat");
    check("nanochat_biased");
}

/// GLM-4.7-Flash: DeepSeek-V3's latent attention with GLM-4-MoE's mixture, the first layer dense
/// by default; the layer kinds from `mlp_layer_types`, half-split RoPE, a full q_proj, from bf16.
#[test]
fn glm4_moe_lite_latent_attention_and_layer_kinds() {
    check("glm4_moe_lite");
    check("glm4_moe_lite_typed");
}

/// LFM2-MoE: LFM2's convolutions and attention with sigmoid-routed mixtures after the dense
/// layers, chosen with the block's expert bias, renormalised and scaled; without either.
#[test]
fn lfm2_moe_sigmoid_routing() {
    check("lfm2_moe");
    check("lfm2_moe_plain");
}

/// MiniMax-M2: q/k norms over whole projections, RoPE over `rotary_dim`, a sigmoid-routed mixture
/// chosen with the block's score correction, under Mixtral's names.
#[test]
fn minimax_m2_whole_projection_norms_and_biased_routing() {
    check("minimax_m2");
}

/// OpenAI GPT: GPT-2's block post-norm without a final norm, the tied head; its sequence
/// classifier on each row's last kept token.
#[test]
fn openai_gpt_post_norm_blocks() {
    check("openai_gpt");
    check("openai_gpt_cls");
}

/// CWM: a full-attention layer then windowed ones (the config class's pattern), the class's llama3
/// RoPE where the config names none.
#[test]
fn cwm_windows_and_default_rope() {
    check("cwm");
}

/// Jais 2: layer norms with biases and the ungated relu² MLP, biases everywhere.
#[test]
fn jais2_layer_norms_and_relu_squared() {
    check("jais2");
}

/// HyperCLOVA X: Granite's multipliers with a norm closing each branch before its residual
/// multiplier and the logits multiplied; without the post norms, with an attention multiplier.
#[test]
fn hyperclovax_peri_layer_norms() {
    check("hyperclovax");
    check("hyperclovax_plain");
}

/// Solar Open: Llama's attention with GLM-4-MoE's grouped sigmoid mixture in every layer.
#[test]
fn solar_open_mixture_in_every_layer() {
    check("solar_open");
}

/// Youtu-LLM: DeepSeek-V3's latent attention under YaRN with dense MLPs, tied.
#[test]
fn youtu_latent_attention_dense() {
    check("youtu");
}

/// Mellum 2: Qwen3-MoE's attention windowed on the sliding layers, RoPE per layer type, a dense MLP
/// then softmax mixtures by `mlp_layer_types`; the class's layer types and RoPE, unnormalised, bf16.
#[test]
fn mellum_rope_per_layer_type() {
    check("mellum");
    check("mellum_full");
}

/// Laguna: per-layer head counts, a softplus output gate per head, half-head RoPE on full layers,
/// sigmoid mixtures of soft-capped logits beside a shared expert; a gate per channel, bf16.
#[test]
fn laguna_gated_attention_and_mixture() {
    check("laguna");
    check("laguna_element");
}

/// AFMoE: a sigmoid output gate, RoPE on the sliding layers alone, norms around attention and the
/// MLP, sigmoid mixtures steered by the block's `expert_bias` beside shared experts, µP's
/// embedding scale; layer types given, no dense layer, biased projections, bf16.
#[test]
fn afmoe_gated_attention_and_mixture() {
    check("afmoe");
    check("afmoe_plain");
}

/// MiMo-V2-Flash: narrower value heads scaled, sliding layers with twice the key/value heads and
/// sinks, RoPE per layer type over a third of each head, DeepSeek-V3's grouped mixture; layer and
/// MLP kinds given, q/k/v biases, bf16; an odd third of each head rotated as one more dim.
#[test]
fn mimo_v2_flash_attention_and_mixture() {
    check("mimo_v2_flash");
    check("mimo_v2_flash_typed");
    check("mimo_v2_flash_odd");
}

/// Persimmon: layer norms, a per-head fused `query_key_value`, per-head q/k layer norms before
/// RoPE over half of each head, biases everywhere; its sequence and token classifiers; Fuyu's Persimmon
/// language model on text (image inputs refused).
#[test]
fn persimmon_and_fuyu() {
    check("persimmon");
    check("persimmon_cls");
    check("persimmon_tok");
    check("fuyu");
    let dir = fixture("fuyu");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("fuyu");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 8, 8], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("image inputs are not supported for FuyuForCausalLM"), "{err}");
}

/// DBRX: bias-free layer norms, a clamped fused `Wqkv`, mixtures in every layer from the stacked
/// `w1`/`v1`/`w2`, RoPE from `rope_parameters` alone; one expert a token unnormalised, gelu, bf16.
#[test]
fn dbrx_mixtures() {
    check("dbrx");
    check("dbrx_plain");
}

/// MiniCPM3: DeepSeek-V2's latent attention with half-split RoPE under MiniCPM's embedding,
/// residual and logit scales; without a low-rank q under YaRN's attention scale; its sequence
/// classifier.
#[test]
fn minicpm3_latent_attention_and_scales() {
    check("minicpm3");
    check("minicpm3_yarn");
    check("minicpm3_cls");
}

/// Granite-SWA: Granite's multipliers with attention sinks, windows on all but every fourth layer
/// and a RoPE base per layer (none, or one of two); the global base everywhere, bf16; Granite-MoE-SWA
/// with its mixture and shared MLP.
#[test]
fn granite_swa_sinks_and_bases() {
    check("granite_swa");
    check("granite_swa_plain");
    check("granitemoe_swa");
}

/// Cohere 2 MoE: Cohere 2's parallel blocks with a dense first layer keeping RoPE, then mixtures
/// weighted by a softmax over the top logits and averaged with a shared expert; RMS norms, sigmoid
/// weights renormalised, shared experts summed, bf16.
#[test]
fn cohere2_moe_mixtures() {
    check("cohere2_moe");
    check("cohere2_moe_sigmoid");
}

/// Hunyuan 3: q/k norms, DeepSeek-V3-style sigmoid mixtures in float32 steered by the block's bias
/// beside shared experts, under the checkpoint's names; layer kinds given, the shared MLP at
/// `intermediate_size` without a count, bf16.
#[test]
fn hy_v3_mixtures() {
    check("hy_v3");
    check("hy_v3_typed");
}

/// Llama 4: interleaved RoPE, weightless q/k norms after it and chunked attention on the RoPE
/// layers, the query temperature on the others, mixtures whose sigmoid weights scale the experts'
/// inputs beside a shared expert; Llama4ForConditionalGeneration on text (llama3 RoPE, no norms).
#[test]
fn llama4_chunks_temperature_and_mixtures() {
    check("llama4");
    check("llama4_mm");
    let dir = fixture("llama4_mm");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (mut inputs, _) = golden("llama4_mm");
    inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 16, 16], DType::F32).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("image inputs are not supported for Llama4ForConditionalGeneration"), "{err}");
}

/// EXAONE-MoE: EXAONE 4's attention in pre-norm blocks, a dense layer, then DeepSeek-V3's grouped
/// sigmoid routing, scaled, with a shared expert; layer kinds from `mlp_layer_types`, raw weights,
/// from bf16.
#[test]
fn exaone_moe() {
    for name in ["exaone_moe", "exaone_moe_global"] {
        check(name);
    }
}

/// Falcon-H1: Mamba-2 beside the attention in every layer, every µP multiplier folded in, the
/// grouped norm before the gate, biases everywhere; the defaults (no norm) under a tied head.
#[test]
fn falcon_h1() {
    for name in ["falcon_h1", "falcon_h1_plain"] {
        check(name);
    }
}

/// PhiMoE: layer norms, q/k/v/o and LM-head biases, the sparsemixer's two experts, LongRoPE with
/// its mscales (the short one here, the long one in the classifier's forward); without biases,
/// from a bf16 checkpoint; its classifier.
#[test]
fn phimoe() {
    for name in ["phimoe", "phimoe_bf16", "phimoe_cls"] {
        check(name);
    }
}

/// Ministral's per-layer windows; Seed-OSS's q/k/v, output and MLP biases, its classifier;
/// Helium's interleaved RoPE and float32 norm scales; EXAONE 4's post-norm blocks with q/k norms,
/// a sliding layer and a global one without RoPE, its classifier.
#[test]
fn llama_variants() {
    for name in ["ministral", "seed_oss", "seed_oss_cls", "helium", "exaone4", "exaone4_cls"] {
        check(name);
    }
}

/// OPT: layer norms and biases, the ReLU MLP, learned positions offset by 2 and counted over each
/// row's kept tokens; without biases or norm parameters; its sequence classifier; opt-350m's
/// post-norm blocks and projected embeddings, with its classifier; the projections on pre-norm
/// blocks without the final norm.
#[test]
fn opt() {
    for name in ["opt", "opt_plain", "opt_cls", "opt_350m", "opt_350m_cls", "opt_proj"] {
        check(name);
    }
}

/// Cohere: the parallel block on one weight-only layer norm, interleaved RoPE, the logit scale,
/// tied embeddings; per-head q/k norms with biases and an untied head from a bf16 checkpoint.
/// Cohere 2: windowed layers with RoPE and full ones without, from `layer_types` or, without them,
/// from `sliding_window_pattern`.
#[test]
fn cohere() {
    check("cohere");
    check("cohere_qk");
    check("cohere2");
    let dir = fixture("cohere2");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("layer_types");
    json["sliding_window_pattern"] = 3.into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, expected) = golden("cohere2");
    let outputs = model.forward_named(&inputs, false).unwrap();
    assert_close("cohere2 by pattern", &outputs[0].1, &expected["logits"], 1e-4, 1e-4);
    // Every layer windowed (no full layer, so every layer rotated) is another model.
    json["sliding_window_pattern"] = 4.into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let other = model.forward_named(&inputs, false).unwrap();
    let diff =
        other[0].1.sub(&expected["logits"]).unwrap().abs().unwrap().max().unwrap().item::<f32>().unwrap();
    assert!(diff > 1e-3, "pattern 4 should differ, max diff {diff}");
}

/// SmolLM3's NoPE layers (no rotation), and windows on them with `use_sliding_window`.
#[test]
fn smollm3() {
    check("smollm3");
    check("smollm3_swa");
}

/// The decoders' token classifiers: the generic `score` (biased, or not through
/// `token_classification_bias`) on Llama, Qwen2, Gemma 2, Mixtral and Apertus, and the
/// GPT-2-style `classifier` under each family's own prefix.
#[test]
fn decoder_token_classifiers() {
    for name in [
        "llama_tok",
        "qwen2_tok",
        "gemma2_tok",
        "mixtral_tok",
        "apertus_tok",
        "gpt2_tok",
        "gpt_neo_tok",
        "gpt_neox_tok",
        "gpt_bigcode_tok",
        "bloom_tok",
        "falcon_tok",
        "mpt_tok",
        "biogpt_tok",
        "ministral3_tok",
    ] {
        check(name);
    }
}

/// Falcon's token classifier takes no `position_ids` (transformers' drops them and counts from 0;
/// the error names the inputs it takes); Llama's, BLOOM's and MPT's take them.
#[test]
fn decoder_token_classifier_inputs() {
    for (name, labels) in [("bloom_tok", 3), ("falcon_tok", 0), ("mpt_tok", 3), ("llama_tok", 5)] {
        let dir = fixture(name);
        let model =
            AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
        let mut inputs = std::collections::BTreeMap::new();
        inputs.insert("input_ids".to_string(), Tensor::from_vec(vec![1i64, 5, 7], [1, 3]).unwrap());
        inputs.insert("position_ids".to_string(), Tensor::from_vec(vec![0i64, 1, 2], [1, 3]).unwrap());
        let got = model.forward_named(&inputs, false);
        if labels > 0 {
            let out = got.unwrap();
            assert_eq!(out[0].0, "logits");
            assert_eq!(out[0].1.dims(), &[1, 3, labels], "{name}");
        } else {
            let e = got.unwrap_err().to_string();
            assert!(
                e.contains("unexpected input 'position_ids'") && e.contains("input_ids, attention_mask"),
                "{e}"
            );
        }
    }
}

/// Mamba: the selective state-space mixer (the causal convolution, the step sizes, the scan),
/// tied embeddings, the float32 residual stream; with biased projections, no convolution bias,
/// an explicit rank, the residual in the model's dtype and an untied head; the base model;
/// Falcon-Mamba's weightless norms on the step sizes, B and C. Mamba-2: heads and groups, the
/// gated grouped norm, clamped step sizes; its config as 4.x wrote it (a bare `Infinity`).
#[test]
fn mamba_and_falcon_mamba() {
    for name in ["mamba", "mamba_biased", "mamba_base", "falcon_mamba", "mamba2", "mamba2_limited"] {
        check(name);
    }
    let dir = fixture("mamba2");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    check_with("mamba2", &v4, &Weights::load(&dir, None).unwrap());
}

/// Granite 4.0's hybrid and Bamba: Mamba-2 layers around NoPE attention, Granite's multipliers, the
/// mixture and the shared MLP; without experts (the shared MLP alone) with RoPE, biased
/// projections and clamped step sizes. The legacy layer type names (`mamba`, `attention`) load
/// the same model.
#[test]
fn granite_hybrid() {
    for name in ["granite_hybrid", "granite_hybrid_dense", "bamba", "bamba_full_rope"] {
        check(name);
    }
    let dir = fixture("granite_hybrid");
    let cfg = Config::load(&dir).unwrap();
    let mut json = cfg.json().clone();
    json.insert("layer_types".into(), serde_json::json!(["mamba", "attention", "mamba"]));
    check_with("granite_hybrid", &Config::from_map(json), &Weights::load(&dir, None).unwrap());
}

/// LFM2: gated short convolutions around attention with per-head q/k norms, the derived SwiGLU
/// width, tied embeddings, and the same model from the older keys (`full_attn_idxs`,
/// `block_ff_dim`, `tie_embedding`); biased convolutions with an untied head.
#[test]
fn lfm2() {
    check("lfm2");
    check("lfm2_biased");
    let dir = fixture("lfm2");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("layer_types").is_none() && v4.get("full_attn_idxs").is_some());
    check_with("lfm2", &v4, &Weights::load(&dir, None).unwrap());
}

/// Jamba: Mamba layers with learned norms on the step sizes, B and C, attention without positions,
/// mixtures of experts on every other layer; its sequence classifier; a dense one with biased
/// projections and an explicit rank.
#[test]
fn jamba() {
    for name in ["jamba", "jamba_cls", "jamba_dense"] {
        check(name);
    }
}

/// Nemotron-H: blocks of one part each (Mamba-2 with step sizes clamped below by
/// `time_step_min`, attention without positions, the squared-ReLU MLP), from the current keys and
/// from the older ones (`hybrid_override_pattern`, `mamba_*`); the mixture-of-experts blocks.
#[test]
fn nemotron_h() {
    check("nemotron_h");
    let dir = fixture("nemotron_h");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("hybrid_override_pattern").is_some() && v4.get("layers_block_type").is_none());
    check_with("nemotron_h", &v4, &Weights::load(&dir, None).unwrap());
    // Nemotron 3's MoE blocks: ungated experts under DeepSeek-V3's grouped routing with the shared
    // expert; in a latent width between biased projections, from bf16.
    check("nemotron_h_moe");
    check("nemotron_h_moe_latent");
}

/// Qwen3.5's language model: gated delta nets around gated attention with q/k norms and RoPE over
/// a quarter of each head, Gemma's norms; the layer types from the default interval, attention
/// biases, tied embeddings; a multimodal checkpoint run on text.
#[test]
fn qwen3_5() {
    // (An ill-conditioned fixture: transformers' float32 logits are 5.5e-5 from its float64 ones,
    // ours 1.1e-4 on an AVX2 machine, where they are 1.3e-4 to 1.7e-4 from the golden.)
    check_within("qwen3_5", 3e-4);
    check("qwen3_5_interval");
    // The multimodal checkpoint's language model, on text.
    check("qwen3_5_mm");
    // Qwen3-Next: the mixture with its gated shared expert, the grouped delta-net projections.
    check("qwen3_next");
    // Qwen3.5-MoE: a mixture on every layer.
    check("qwen3_5_moe");
}
