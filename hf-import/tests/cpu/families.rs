//! Every family against transformers: tiny random checkpoints from `make_fixtures.py`, with logits,
//! `last_hidden_state`, `pooler_output` and every hidden state compared at atol = rtol = 1e-4 (f32).
//! (The later decoder families are in `decoder_families.rs`.)

use crate::common;

use common::{assert_close, check, check_with, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

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

#[test]
fn roberta_positions_after_padding() {
    check("roberta");
}

#[test]
fn roberta_for_masked_lm_tied() {
    check("roberta_mlm");
}

#[test]
fn distilbert_for_masked_lm() {
    check("distilbert_mlm");
}

#[test]
fn bert_for_sequence_classification_through_the_pooler() {
    check("bert_cls");
}

#[test]
fn roberta_for_sequence_classification() {
    check("roberta_cls");
}

#[test]
fn distilbert_for_sequence_classification_default_two_labels() {
    check("distilbert_cls");
}

#[test]
fn xlm_roberta_model_mlm_and_classification() {
    check("xlm_roberta");
    check("xlm_roberta_mlm");
    check("xlm_roberta_cls");
}

/// MPNet: RoBERTa-style positions (the golden's first token is id 1, MPNet's padding id), no token
/// types, the relative-position bias; a 150-token row and a padded one (`expected_long`) reach the
/// bias's log-spaced buckets and its clipping, and every bucket of -200..=200 is transformers'.
#[test]
fn mpnet_relative_position_bias() {
    check("mpnet");
    // The masked-LM head (RoBERTa's, the decoder tied to the word embeddings).
    check("mpnet_mlm");
    let dir = fixture("mpnet");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let mut long = common::read_all(&dir.join("expected_long.safetensors"));
    let buckets = long.remove("buckets").unwrap().to_vec::<i64>().unwrap();
    let got: Vec<i64> = (-200..=200).map(|r| oxtorch_hf_import::layers::relative_bucket(r) as i64).collect();
    assert_eq!(got, buckets);
    let inputs: std::collections::BTreeMap<String, Tensor> =
        ["input_ids", "attention_mask"].iter().map(|k| (k.to_string(), long.remove(*k).unwrap())).collect();
    let outputs = model.forward_named(&inputs, true).unwrap();
    assert_eq!(outputs.len(), long.len(), "mpnet long: outputs");
    for (key, actual) in &outputs {
        assert_close(&format!("mpnet long {key}"), actual, &long[key], 1e-4, 1e-4);
    }
    // No token types, as transformers' MPNetModel.
    let mut typed = inputs.clone();
    typed.insert("token_type_ids".into(), Tensor::zeros([2, 150], DType::I64).unwrap());
    let err = model.forward_named(&typed, false).unwrap_err().to_string();
    assert!(err.contains("unexpected input 'token_type_ids'"), "{err}");
}

/// ModernBERT: its defaults (no biases, a global layer every 3, sliding window 2 over 7 tokens,
/// padding on the second row), every bias with other RoPE bases and layer types, from the
/// transformers 5 and the 4.x config keys (`global_attn_every_n_layers`, `*_rope_theta`), and
/// `ModernBertForMaskedLM`.
#[test]
fn modernbert_alternating_windows_and_bases() {
    check("modernbert");
    check("modernbert_biased");
    // The masked-LM head (dense, SiLU here, norm, the tied decoder with its bias).
    check("modernbert_mlm");
    let dir = fixture("modernbert_biased");
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("layer_types").is_none() && v4.get("rope_parameters").is_none());
    check_with("modernbert_biased", &v4, &Weights::load(&dir, None).unwrap());
}

/// MPNet's classifier (RoBERTa's head on `<s>`) and ModernBERT's (`head` then `classifier`) on the
/// first token with one label, as rerankers have, and on the mean over the kept tokens (the
/// golden's second row is padded) with a dense bias, norm shifts and ReLU.
#[test]
fn mpnet_and_modernbert_for_sequence_classification() {
    check("mpnet_cls");
    check("modernbert_cls");
    check("modernbert_cls_mean");
    let dir = fixture("modernbert_cls_mean");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["classifier_pooling"] = "max".into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let err = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("classifier_pooling must be \"cls\" or \"mean\", got \"max\""), "{err}");
}

/// ELECTRA: the base model with embeddings narrower than the model (projected by
/// `embeddings_project`), the discriminator (per-token logits `[batch, seq]`, embeddings as wide as
/// the model: no projection), the generator (tied LM head over the narrow embeddings), the GELU
/// sequence classifier, token classification and QA.
#[test]
fn electra() {
    for name in ["electra", "electra_disc", "electra_mlm", "electra_cls", "electra_tok", "electra_qa"] {
        check(name);
    }
    // `embedding_size` defaults to ElectraConfig's 128: without it the tables' width is wrong.
    let dir = fixture("electra");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("embedding_size");
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let err = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("word_embeddings") && err.contains("128"), "{err}");
}

/// ALBERT: one block shared by every layer, two groups of two blocks spread over three layers,
/// narrow embeddings mapped to the model's width, the pooler, the MLM head (tied, and untied with
/// the decoder's own bias), the classifier on
/// the pooler, token classification and QA.
#[test]
fn albert() {
    for name in [
        "albert",
        "albert_groups",
        "albert_mlm",
        "albert_mlm_untied",
        "albert_cls",
        "albert_tok",
        "albert_qa",
    ] {
        check(name);
    }
}

/// DeBERTa-v3 (relative positions alone, log-bucketed, the shared projections of the normed
/// relative embeddings), v2 (absolute positions, token types, narrow embeddings, separate
/// position projections, the grouped convolution), c2p or p2c alone, both masked-LM heads (legacy
/// `cls.predictions`, v3's `lm_predictions`), the classifier on the `ContextPooler`, token
/// classification and QA, padded rows included; v1 (the fused `in_proj` with its query and value
/// biases, unbucketed distances clamped to the table, every head); a 100-token row and a padded one
/// (`expected_long`) reach past the buckets and the table, and every bucket of -1100..=1100 with
/// 256 buckets over 512 positions is transformers'.
#[test]
fn deberta_v2_disentangled_attention() {
    for name in [
        "deberta_v3",
        "deberta_v2",
        "deberta_c2p",
        "deberta_p2c",
        "deberta_mlm",
        "deberta_v3_mlm",
        "deberta_cls",
        "deberta_tok",
        "deberta_qa",
        "deberta_v1",
        "deberta_v1_mlm",
        "deberta_v1_cls",
        "deberta_v1_qa",
    ] {
        check(name);
    }
    let dir = fixture("deberta_v3");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let mut long = common::read_all(&dir.join("expected_long.safetensors"));
    let buckets = long.remove("buckets").unwrap().to_vec::<i64>().unwrap();
    let got: Vec<i64> =
        (-1100..=1100).map(|r| oxtorch_hf_import::models::log_bucket_position(r, 256, 512)).collect();
    assert_eq!(got, buckets);
    let inputs: std::collections::BTreeMap<String, Tensor> =
        ["input_ids", "attention_mask"].iter().map(|k| (k.to_string(), long.remove(*k).unwrap())).collect();
    let outputs = model.forward_named(&inputs, true).unwrap();
    assert_eq!(outputs.len(), long.len(), "deberta long: outputs");
    for (key, actual) in &outputs {
        assert_close(&format!("deberta long {key}"), actual, &long[key], 1e-4, 1e-4);
    }
    // v3 has no position table: longer inputs than max_position_embeddings (64) run.
    let ids = Tensor::ones([1, 100], DType::I64).unwrap();
    assert_eq!(model.last_hidden_state(&ids, None, None).unwrap().dims(), [1, 100, 32]);
    // v2's does: past it is an error.
    let dir = fixture("deberta_v2");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let err = model.last_hidden_state(&Tensor::ones([1, 33], DType::I64).unwrap(), None, None).unwrap_err();
    assert!(err.to_string().contains("out of range for max_position_embeddings (32)"), "{err}");
    // A v3 pretraining checkpoint's `lm_predictions` head under a legacy config: told how to use it.
    let dir = fixture("deberta_v3_mlm");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["legacy"] = true.into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let err = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("\"legacy\": false"), "{err}");
}

/// ESM: ESM-2's pre-norm encoder with rotary positions and token dropout (a masked token in the
/// first row), its masked-LM head; a bfloat16 checkpoint (its stored, rounded rotary frequencies);
/// the base model with its pooler; ESM-1b's absolute positions after the padding id and the
/// embeddings' norm; the sequence classifier (RoBERTa's head on the first token) and the token
/// classifier.
#[test]
fn esm() {
    for name in ["esm", "esm_bf16", "esm_base", "esm1b", "esm_cls", "esm_tok"] {
        check(name);
    }
}

/// NomicBERT (nomic-embed-text): rotary positions, the fused `Wqkv`, SwiGLU, post-norms, from the
/// hub's tensor names; token types and a padded row.
#[test]
fn nomic_bert() {
    check("nomic_bert");
    // The same weights under transformers' module names (a `torch.save` of its state dict): the
    // fused `Wqkv` split, the norms and MLP renamed.
    let dir = fixture("nomic_bert");
    let mut internal = Vec::new();
    for item in Weights::load(&dir, None).unwrap().iter() {
        let (name, t) = item.unwrap();
        let name = name
            .replace("encoder.layers.", "layers.")
            .replace("emb_ln.", "embeddings.LayerNorm.")
            .replace(".attn.out_proj.", ".self_attn.o_proj.")
            .replace(".norm1.", ".post_attention_layernorm.")
            .replace(".norm2.", ".post_mlp_layernorm.")
            .replace(".mlp.fc11.", ".mlp.up_proj.")
            .replace(".mlp.fc12.", ".mlp.gate_proj.")
            .replace(".mlp.fc2.", ".mlp.down_proj.");
        match name.strip_suffix(".attn.Wqkv.weight") {
            Some(layer) => {
                for (part, t) in ["q_proj", "k_proj", "v_proj"].iter().zip(t.chunk(3, 0).unwrap()) {
                    internal.push((format!("{layer}.self_attn.{part}.weight"), t.contiguous().unwrap()));
                }
            }
            None => internal.push((name, t)),
        }
    }
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::from_tensors(internal)).unwrap();
    let (inputs, expected) = golden("nomic_bert");
    let outputs = model.forward_named(&inputs, false).unwrap();
    assert_close("nomic internal names", &outputs[0].1, &expected["last_hidden_state"], 1e-4, 1e-4);
}

/// Per-token heads: token classification (BERT with token types, MPNet) and extractive QA's start
/// and end logits (RoBERTa, DistilBERT, ModernBERT through its prediction head), at every token,
/// padded ones included, as transformers gives them.
#[test]
fn token_classification_and_question_answering() {
    for name in ["bert_tok", "mpnet_tok", "roberta_qa", "distilbert_qa", "modernbert_qa"] {
        check(name);
    }
    // QA heads have two outputs: a config with three labels is transformers' error.
    let dir = fixture("roberta_qa");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["num_labels"] = 3.into();
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let err = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("config.num_labels should be 2, but it is 3"), "{err}");
}

/// The decoders' sequence classifiers (reward models): `score` on each row's last token that is
/// not the padding id, untied (Llama, Qwen3 with one label) and tied (Gemma 2, without the LM
/// head's soft-capping).
#[test]
fn decoder_sequence_classification_at_the_last_token() {
    check("llama_cls");
    check("qwen3_cls");
    check("gemma2_cls");
    // GPT-2's (`transformer.*`, `score`) and GPT-NeoX's (`gpt_neox.*`).
    check("gpt2_cls");
    check("gpt_neox_cls");
}

/// The scored token is the last one whose id is not `pad_token_id`, whichever side is padded; a
/// config without a padding id scores the last token of a single row and refuses a batch.
#[test]
fn decoder_classifier_picks_the_last_non_padding_token() {
    let dir = fixture("llama_cls");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, None).unwrap();
    let model = AutoModel::load(&cfg, &weights).unwrap();
    let logits = |ids: Vec<i64>, mask: Vec<i64>, rows: usize| {
        let seq = ids.len() / rows;
        let inputs: std::collections::BTreeMap<String, Tensor> = [
            ("input_ids".to_string(), Tensor::from_vec(ids, [rows, seq]).unwrap()),
            ("attention_mask".to_string(), Tensor::from_vec(mask, [rows, seq]).unwrap()),
        ]
        .into_iter()
        .collect();
        let out = model.forward_named(&inputs, false).unwrap();
        assert_eq!(out[0].0, "logits");
        out[0].1.to_vec::<f32>().unwrap()
    };
    // The golden's second row (5 tokens, right-padded) alone, then left-padded: the same scores.
    let alone = logits(vec![3, 64, 12, 77, 30], vec![1; 5], 1);
    let left = logits(vec![0, 0, 3, 64, 12, 77, 30], vec![0, 0, 1, 1, 1, 1, 1], 1);
    for (a, l) in alone.iter().zip(&left) {
        assert!((a - l).abs() < 1e-4, "{alone:?} vs {left:?}");
    }
    let (_, expected) = golden("llama_cls");
    let want = expected["logits"].to_vec::<f32>().unwrap();
    for (a, w) in alone.iter().zip(&want[3..]) {
        assert!((a - w).abs() < 1e-4, "{alone:?} vs {want:?}");
    }
    // Without a padding id: the last token of one row; a batch is an error, as in transformers.
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("pad_token_id");
    let model = AutoModel::load(&Config::from_json_str(&json.to_string()).unwrap(), &weights).unwrap();
    let one: std::collections::BTreeMap<String, Tensor> =
        [("input_ids".to_string(), Tensor::from_vec(vec![3i64, 64, 12, 77, 30], [1, 5]).unwrap())]
            .into_iter()
            .collect();
    let got = model.forward_named(&one, false).unwrap()[0].1.to_vec::<f32>().unwrap();
    for (g, a) in got.iter().zip(&alone) {
        assert!((g - a).abs() < 1e-4, "{got:?} vs {alone:?}");
    }
    let two: std::collections::BTreeMap<String, Tensor> =
        [("input_ids".to_string(), Tensor::from_vec(vec![3i64, 64, 12, 77], [2, 2]).unwrap())]
            .into_iter()
            .collect();
    let err = model.forward_named(&two, false).unwrap_err().to_string();
    assert!(err.contains("Cannot handle batch sizes > 1 if no padding token is defined"), "{err}");
    // A Gemma config without the key has GemmaConfig's padding id, 0: the golden batch still runs.
    let dir = fixture("gemma2_cls");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    assert_eq!(json.as_object_mut().unwrap().remove("pad_token_id"), Some(0.into()));
    check_with(
        "gemma2_cls",
        &Config::from_json_str(&json.to_string()).unwrap(),
        &Weights::load(&dir, None).unwrap(),
    );
}

/// Label names come from `id2label` (`LABEL_i` without one), and a head whose size disagrees with
/// them, or a BERT classifier without its pooler, is an error naming the tensor.
#[test]
fn classifier_labels_and_checkpoint_errors() {
    use oxtorch_hf_import::models::label_names;
    let labels = |name: &str| label_names(&Config::load(&fixture(name)).unwrap()).unwrap();
    assert_eq!(labels("bert_cls").len(), 3);
    assert_eq!(labels("distilbert_cls"), ["LABEL_0", "LABEL_1"]);
    let model = |cfg: &Config, dir: &std::path::Path| {
        AutoModel::load(cfg, &Weights::load(dir, Some(DType::F32)).unwrap())
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let dir = fixture("roberta_cls");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["id2label"] = serde_json::json!({"0": "no", "1": "yes"});
    let err = model(&Config::from_json_str(&json.to_string()).unwrap(), &dir);
    assert!(err.contains("classifier.out_proj.weight"), "{err}");
    // A BERT classifier's checkpoint without the pooler it classifies.
    let bert = fixture("bert_cls");
    let weights = Weights::load(&bert, Some(DType::F32)).unwrap();
    let kept: Vec<(String, Tensor)> = weights
        .iter()
        .map(|r| r.map(|(n, t)| (n.clone(), t)).unwrap())
        .filter(|(n, _)| !n.contains("pooler"))
        .collect();
    let tmp = std::env::temp_dir().join(format!("oxtorch-cls-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(bert.join("config.json"), tmp.join("config.json")).unwrap();
    oxtorch_hf_import::weights::write_safetensors(&tmp.join("model.safetensors"), &kept, None).unwrap();
    let err = model(&Config::load(&tmp).unwrap(), &tmp);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert!(err.contains("pooler"), "{err}");
}

/// transformers' `DistilBertModel.forward` takes `position_ids` (by default `0..seq`) and embeds them.
#[test]
fn distilbert_takes_position_ids() {
    let dir = fixture("distilbert_mlm");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, Some(DType::F32)).unwrap()).unwrap();
    let (mut inputs, expected) = golden("distilbert_mlm");
    let (b, s) = (inputs["input_ids"].dims()[0], inputs["input_ids"].dims()[1]);
    let positions = |start: i64| {
        let rows: Vec<i64> = (0..b).flat_map(|_| start..start + s as i64).collect();
        Tensor::from_vec(rows, [b, s]).unwrap()
    };
    let logits = |inputs: &std::collections::BTreeMap<String, Tensor>| {
        let out = model.forward_named(inputs, false).unwrap();
        assert_eq!(out[0].0, "logits");
        out[0].1.clone()
    };
    inputs.insert("position_ids".into(), positions(0));
    assert_close("distilbert with default positions", &logits(&inputs), &expected["logits"], 1e-4, 1e-4);
    inputs.insert("position_ids".into(), positions(3));
    let shifted = logits(&inputs).to_vec::<f32>().unwrap();
    let want = expected["logits"].to_vec::<f32>().unwrap();
    let moved = shifted.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(moved > 1e-3, "shifted position ids changed the logits by {moved} only");
}

/// Ids index embedding tables: bool and float ids are an error naming the input, not a silent cast
/// (a bool attention mask is fine, as in transformers).
#[test]
fn bool_and_float_ids_are_rejected() {
    let dir = fixture("bert");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, _) = golden("bert");
    let ids = &inputs["input_ids"];
    for (name, dtype) in
        [("input_ids", DType::Bool), ("input_ids", DType::F32), ("token_type_ids", DType::Bool)]
    {
        let mut bad = inputs.clone();
        bad.insert(name.to_string(), ids.ne(0).unwrap().to_dtype(dtype).unwrap());
        let err = model.forward_named(&bad, false).unwrap_err().to_string();
        assert!(err.contains(&format!("input '{name}' must be an integer tensor, got {dtype:?}")), "{err}");
    }
    let bool_ids = ids.ne(0).unwrap();
    let err = model.last_hidden_state(&bool_ids, None, None).unwrap_err().to_string();
    assert!(err.contains("input 'input_ids' must be an integer tensor, got Bool"), "{err}");
    let mut bool_mask = inputs.clone();
    bool_mask.insert("attention_mask".into(), inputs["attention_mask"].ne(0).unwrap());
    assert!(model.forward_named(&bool_mask, false).is_ok());
    // A float mask of ones and zeros gives what the int64 one gives, as in transformers.
    let want = model.forward_named(&inputs, false).unwrap();
    let mut float_mask = inputs.clone();
    float_mask.insert("attention_mask".into(), inputs["attention_mask"].to_dtype(DType::F32).unwrap());
    let got = model.forward_named(&float_mask, false).unwrap();
    for ((n, a), (_, b)) in want.iter().zip(&got) {
        assert_eq!(a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap(), "{n}");
    }
    // 1-D position ids `[seq]` (the default positions here) are accepted and broadcast.
    let seq = ids.dims()[1];
    let mut flat_pos = inputs.clone();
    flat_pos.insert("position_ids".into(), Tensor::arange(seq as i64, DType::I64).unwrap());
    let got = model.forward_named(&flat_pos, false).unwrap();
    for ((n, a), (_, b)) in want.iter().zip(&got) {
        assert_eq!(a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap(), "{n} with 1-D position_ids");
    }
    // Shapes that do not fit input_ids are named.
    let mut short = inputs.clone();
    short.insert("token_type_ids".into(), ids.narrow(1, 0, 1).unwrap());
    let err = model.forward_named(&short, false).unwrap_err().to_string();
    assert!(
        err.contains("input 'token_type_ids' has shape") && err.contains("does not fit input_ids"),
        "{err}"
    );
    let mut empty = inputs.clone();
    empty.insert("input_ids".into(), ids.narrow(1, 0, 0).unwrap());
    let err = model.forward_named(&empty, false).unwrap_err().to_string();
    assert!(err.contains("input 'input_ids' must be [batch, seq] with seq > 0"), "{err}");
}

#[test]
fn gemma() {
    check("gemma");
}

#[test]
fn gemma2_softcapping_alternating_windows() {
    check("gemma2");
}

#[test]
fn gemma3_qk_norm_local_rope() {
    check("gemma3");
}

/// Gemma 3 multimodal (`model_type` `gemma3`, `Gemma3ForConditionalGeneration`) on a text-only
/// input: its language model, as transformers 5 saves the checkpoint (`language_model.model.*`, the
/// tied head absent, a SigLIP tower and projector that are not read).
/// EmbeddingGemma's attention: Gemma 3 with `use_bidirectional_attention` (full layers both ways,
/// sliding ones within half the window), on a right-padded batch; a KV cache (generation) is
/// refused.
#[test]
fn gemma3_bidirectional_attention() {
    check("gemma3_bidir");
    let dir = fixture("gemma3_bidir");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let lm = model.causal_lm().unwrap();
    let mut cache = oxtorch_hf_import::layers::KvCache::new(lm.num_layers());
    let ids = Tensor::from_vec(vec![1i64, 5, 7], [1, 3]).unwrap();
    let err = lm.forward(&ids, None, None, Some(&mut cache), false).unwrap_err().to_string();
    assert!(err.contains("use_bidirectional_attention"), "{err}");
}

/// Decoder base models (`Qwen3Model`; EmbeddingGemma's bidirectional `Gemma3TextModel`) saved
/// without the `model.` prefix or an LM head: `last_hidden_state` and `hidden_states` as
/// transformers' base models return them, no logits.
#[test]
fn decoder_base_models_give_hidden_states() {
    check("qwen3_base");
    check("gemma3_text_model");
    let dir = fixture("qwen3_base");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    assert!(matches!(model, AutoModel::BaseDecoder(_)));
}

/// data2vec-text: RoBERTa under `data2vec_text.`; its masked LM and sequence classifier.
#[test]
fn data2vec_text_as_roberta() {
    check("data2vec_text");
    check("data2vec_text_mlm");
    check("data2vec_text_cls");
}

/// The pre-norm encoders (each branch's input normed, the last block's output normed once more):
/// RoBERTa-PreLayerNorm, XLM-RoBERTa-XL and Megatron-BERT, their masked LMs and a classifier.
#[test]
fn pre_norm_encoders() {
    for name in [
        "roberta_prelayernorm",
        "roberta_prelayernorm_mlm",
        "xlm_roberta_xl",
        "xlm_roberta_xl_cls",
        "megatron_bert",
        "megatron_bert_mlm",
    ] {
        check(name);
    }
}

/// GTE: NomicBERT's rotary blocks with GTE's biases, under the hub's names (`save_pretrained`'s:
/// fused `qkv_proj`, `up_gate_proj`) or transformers' (a `.bin` state dict); the reranker.
#[test]
fn gte_as_a_rotary_encoder() {
    for name in ["gte", "gte_bin", "gte_cls"] {
        check(name);
    }
}

/// ERNIE: BERT under `ernie.` with the task-type embedding's row 0 added to every token (folded
/// into the token-type table at load); its masked LM and sequence classifier.
#[test]
fn ernie_task_type_embeddings() {
    check("ernie");
    check("ernie_mlm");
    check("ernie_cls");
}

#[test]
fn gemma3_multimodal_text_only() {
    check("gemma3_mm");
}

/// The module names (`model.language_model.*`, `lm_head.weight`), a head untied by the outer
/// `tie_word_embeddings: false` (the nested one is left true), a sparse 4.x-style `text_config`.
#[test]
fn gemma3_multimodal_untied_module_names_4x_config() {
    check("gemma3_mm_untied");
}

/// The untied checkpoint under the names `save_pretrained` writes (`language_model.lm_head.weight`);
/// and its head kept where the outer `tie_word_embeddings` (default true) says tied, as transformers
/// 5 keeps a checkpoint's head that differs from the embeddings.
#[test]
fn gemma3_multimodal_untied_head_under_its_saved_name_and_the_outer_tie_flag() {
    let dir = fixture("gemma3_mm_untied");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, None).unwrap();
    let saved_name = |name: &str| -> String {
        for (module, saved) in [
            ("model.language_model.", "language_model.model."),
            ("lm_head.", "language_model.lm_head."),
            ("model.vision_tower.", "vision_tower."),
            ("model.multi_modal_projector.", "multi_modal_projector."),
        ] {
            if let Some(rest) = name.strip_prefix(module) {
                return format!("{saved}{rest}");
            }
        }
        panic!("unexpected tensor {name}")
    };
    let saved = Weights::from_tensors(weights.iter().map(|r| {
        let (k, t) = r.unwrap();
        (saved_name(k), t)
    }));
    assert!(saved.contains("language_model.lm_head.weight") && !saved.contains("lm_head.weight"));
    check_with("gemma3_mm_untied", &cfg, &saved);
    // Tied by the outer flag (its default), untied in `text_config`: transformers 5 ties a head the
    // checkpoint holds only when it equals the embedding table, so this one is kept.
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("tie_word_embeddings");
    json["text_config"]["tie_word_embeddings"] = serde_json::Value::Bool(false);
    let tied = Config::from_json_str(&json.to_string()).unwrap();
    let (inputs, expected) = golden("gemma3_mm_untied");
    for w in [&weights, &saved] {
        let out = AutoModel::load(&tied, w).unwrap().forward_named(&inputs, false).unwrap();
        assert_eq!(out[0].0, "logits");
        assert_close("gemma3_mm_untied under the outer tie flag", &out[0].1, &expected["logits"], 1e-4, 1e-4);
    }
}

/// The whole checkpoint is read (the vision tower and projector take images), its language model
/// renamed as it loads; a missing text tensor is named as the file has it.
#[test]
fn gemma3_multimodal_reads_its_language_model_and_vision_tower() {
    let dir = fixture("gemma3_mm");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, None).unwrap();
    assert!(weights.iter().any(|r| r.unwrap().0.starts_with("vision_tower.")));
    assert!(weights.contains("multi_modal_projector.mm_input_projection_weight"));
    let used = AutoModel::weights_used(&cfg, weights.clone());
    assert_eq!(used.iter().count(), weights.iter().count());
    check_with("gemma3_mm", &cfg, &used);
    let model = AutoModel::load_on_device(&cfg, &weights, oxtorch_tensor::Device::Cpu).unwrap();
    assert!(matches!(model, AutoModel::Gemma3ForConditionalGeneration(_)));
    let all = || {
        weights.iter().map(|r| {
            let (k, t) = r.unwrap();
            (k.clone(), t)
        })
    };
    let without =
        Weights::from_tensors(all().filter(|(k, _)| k != "language_model.model.layers.1.mlp.up_proj.weight"));
    let err = AutoModel::load(&cfg, &without).unwrap_err().to_string();
    assert_eq!(
        err,
        "tensor 'language_model.model.layers.1.mlp.up_proj.weight' is missing from the checkpoint"
    );
    let vision_only = Weights::from_tensors(all().filter(|(k, _)| !k.starts_with("language_model.")));
    let err = AutoModel::load(&cfg, &vision_only).unwrap_err().to_string();
    assert!(err.contains("tensor 'language_model.model.embed_tokens.weight'"), "{err}");
}

/// Images the prompt has no tokens for are an error, as are images for a checkpoint without its
/// vision tower; `token_type_ids` (which Gemma 3's processor always returns) are accepted when all
/// text, and refused when they mark image tokens without the images.
#[test]
fn gemma3_multimodal_image_input_errors() {
    let dir = fixture("gemma3_mm");
    let weights = Weights::load(&dir, None).unwrap();
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &weights).unwrap();
    let (inputs, expected) = golden("gemma3_mm");
    assert_eq!(inputs["input_ids"].dims(), [2, 7]);
    let mut pixels = inputs.clone();
    pixels.insert("pixel_values".into(), Tensor::zeros([2, 3, 4, 4], DType::F32).unwrap());
    let err = model.forward_named(&pixels, false).unwrap_err().to_string();
    assert!(err.contains("Image features and image tokens do not match, tokens: 1, features: 8"), "{err}");
    let text_only = Weights::from_tensors(
        weights
            .iter()
            .map(|r| r.unwrap())
            .filter_map(|(k, t)| (!k.starts_with("vision_tower.")).then(|| (k.clone(), t))),
    );
    let without_tower = AutoModel::load(&Config::load(&dir).unwrap(), &text_only).unwrap();
    let err = without_tower.forward_named(&pixels, false).unwrap_err().to_string();
    assert_eq!(
        err,
        "input 'pixel_values': image inputs are not supported for Gemma3ForConditionalGeneration \
         (this checkpoint has no vision tower)"
    );
    let mut text_types = inputs.clone();
    text_types.insert("token_type_ids".into(), Tensor::zeros([2, 7], DType::I64).unwrap());
    let out = model.forward_named(&text_types, false).unwrap();
    assert_eq!(out[0].0, "logits");
    assert_close("gemma3_mm with text token_type_ids", &out[0].1, &expected["logits"], 1e-4, 1e-4);
    let mut image_types = inputs.clone();
    let marked: Vec<i64> = (0..14).map(|i| i64::from(i == 3 || i == 4)).collect();
    image_types.insert("token_type_ids".into(), Tensor::from_vec(marked, [2, 7]).unwrap());
    let err = model.forward_named(&image_types, false).unwrap_err().to_string();
    assert!(err.contains("input 'token_type_ids' marks image tokens (1)"), "{err}");
    // The text-only Gemma 3 keeps refusing token_type_ids, as any decoder.
    let text = AutoModel::load(
        &Config::load(&fixture("gemma3")).unwrap(),
        &Weights::load(&fixture("gemma3"), None).unwrap(),
    )
    .unwrap();
    let (mut inputs, _) = golden("gemma3");
    inputs.insert("token_type_ids".into(), Tensor::zeros([2, 7], DType::I64).unwrap());
    assert!(text
        .forward_named(&inputs, false)
        .unwrap_err()
        .to_string()
        .contains("unexpected input 'token_type_ids'"));
}

/// A `gemma3_text` config naming `Gemma3ForConditionalGeneration` runs `Gemma3ForCausalLM` (as
/// `AutoModelForCausalLM`, by model type), from the multimodal checkpoint's names or the text
/// model's own; the `gemma3` config also loads from the latter.
#[test]
fn gemma3_text_config_naming_the_multimodal_architecture() {
    let dir = fixture("gemma3_mm");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let mut text = json["text_config"].clone();
    text["architectures"] = serde_json::json!(["Gemma3ForConditionalGeneration"]);
    let cfg = Config::from_json_str(&text.to_string()).unwrap();
    assert_eq!(AutoModel::architecture_of(&cfg).unwrap(), "Gemma3ForCausalLM");
    let weights = Weights::load(&dir, None).unwrap();
    check_with("gemma3_mm", &cfg, &weights);
    let own_names = Weights::from_tensors(weights.iter().filter_map(|r| {
        let (k, t) = r.unwrap();
        k.strip_prefix("language_model.").map(|rest| (rest.to_string(), t))
    }));
    assert!(own_names.contains("model.embed_tokens.weight") && own_names.len() == 28);
    check_with("gemma3_mm", &cfg, &own_names);
    check_with("gemma3_mm", &Config::load(&dir).unwrap(), &own_names);
}

/// CamemBERT is RoBERTa's network under its own model type and class names.
#[test]
fn camembert_sequence_classifier() {
    check("camembert_cls");
}

#[test]
fn phi_parallel_block_and_head_bias() {
    check("phi");
}

#[test]
fn phi3_fused_projections_partial_rotary() {
    check("phi3");
}

#[test]
fn phi3_longrope_short_factors_and_attention_factor() {
    check("phi3_longrope");
}

#[test]
fn qwen2_yarn_rope() {
    check("qwen2_yarn");
}

#[test]
fn llama_dynamic_ntk_rope_past_max_positions() {
    check("llama_dynamic");
}

#[test]
fn transformers_4_config_keys_give_the_same_model() {
    let dir = fixture("llama");
    let v5 = Config::load(&dir).unwrap();
    let v4 = Config::load_file(&dir.join("config_v4.json")).unwrap();
    assert!(v4.get("rope_parameters").is_none() && v4.get("torch_dtype").is_some());
    assert_eq!(v4.rope(None).unwrap(), v5.rope(None).unwrap());
    assert_eq!(v4.dtype(), Some(DType::F32));
    assert!(matches!(v4.rope(None).unwrap().scaling, oxtorch_hf_import::config::RopeScaling::Llama3 { .. }));
    check_with("llama", &v4, &Weights::load(&dir, None).unwrap());
}

#[test]
fn extra_tensors_are_ignored_and_missing_ones_named() {
    let dir = fixture("bert");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, None).unwrap();
    let mut all: Vec<_> =
        weights.iter().map(|r| r.map(|(k, t)| (k.clone(), t))).collect::<Result<_, _>>().unwrap();
    let ids = oxtorch_tensor::Tensor::arange(32i64, DType::I64).unwrap().unsqueeze(0).unwrap();
    all.push(("embeddings.position_ids".into(), ids));
    all.push((
        "encoder.layer.0.attention.self.num_batches_tracked".into(),
        oxtorch_tensor::Tensor::zeros([], DType::I64).unwrap(),
    ));
    check_with("bert", &cfg, &Weights::from_tensors(all.clone()));
    let without: Vec<_> = all.into_iter().filter(|(k, _)| k != "encoder.layer.1.output.dense.bias").collect();
    let err = AutoModel::load(&cfg, &Weights::from_tensors(without)).unwrap_err().to_string();
    assert_eq!(err, "tensor 'encoder.layer.1.output.dense.bias' is missing from the checkpoint");
}

#[test]
fn bf16_checkpoint_runs_in_bf16_close_to_float32() {
    let dir = fixture("qwen3");
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, None).unwrap();
    assert_eq!(weights.checkpoint_dtype(), Some(DType::BF16));
    let model = AutoModel::load(&cfg, &weights).unwrap();
    let (inputs, expected) = golden("qwen3");
    let out = model.forward_named(&inputs, false).unwrap();
    assert_eq!(out[0].0, "logits");
    assert_eq!(out[0].1.dtype(), DType::BF16);
    assert_close("qwen3 bf16 logits", &out[0].1, &expected["logits"], 0.1, 0.05);
}

/// Loaded models can be shared across threads (`Arc<AutoModel>` in a server).
#[test]
fn models_are_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<AutoModel>();
    shareable::<Weights>();
    shareable::<oxtorch_hf_import::SentenceTransformer>();
    let dir = fixture("bert");
    let model = std::sync::Arc::new(
        AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap(),
    );
    let (inputs, _) = golden("bert");
    let sequential = model.forward_named(&inputs, false).unwrap();
    let inputs = std::sync::Arc::new(inputs);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (model, inputs) = (model.clone(), inputs.clone());
            std::thread::spawn(move || model.forward_named(&inputs, false).unwrap())
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        for ((k, a), (_, b)) in out.iter().zip(&sequential) {
            assert_eq!(
                a.to_vec::<f32>().unwrap(),
                b.to_vec::<f32>().unwrap(),
                "{k}: threads give what a sequential call gives"
            );
        }
    }
}

/// A cast asked for at load is made when the model reads its tensors, its packed matrices cast
/// straight into the packed buffer: the model equals one loaded from tensors cast beforehand.
#[test]
fn cast_on_read_gives_the_model_of_a_cast_checkpoint() {
    let dir = fixture("mistral");
    let cfg = Config::load(&dir).unwrap();
    let (inputs, _) = golden("mistral");
    let deferred = Weights::load(&dir, Some(DType::BF16)).unwrap();
    let stored = Weights::load(&dir, None).unwrap();
    let cast_first = Weights::from_tensors(stored.iter().map(|r| {
        let (k, t) = r.unwrap();
        let t = if t.dtype().is_float() { t.to_dtype(DType::BF16).unwrap() } else { t };
        (k.clone(), t)
    }));
    let a = AutoModel::load(&cfg, &deferred).unwrap().forward_named(&inputs, true).unwrap();
    let b = AutoModel::load(&cfg, &cast_first).unwrap().forward_named(&inputs, true).unwrap();
    assert_eq!(a.len(), b.len());
    for ((ka, ta), (kb, tb)) in a.iter().zip(&b) {
        assert_eq!(ka, kb);
        assert_eq!(ta.dtype(), DType::BF16, "{ka}");
        assert_eq!(
            ta.to_vec::<oxtorch_tensor::bf16>().unwrap(),
            tb.to_vec::<oxtorch_tensor::bf16>().unwrap(),
            "{ka}"
        );
    }
}

/// LlamaConfig's and Gemma3TextConfig's `validate_architecture`: a hidden size that is not a
/// multiple of the heads is refused even with an explicit `head_dim` (Mistral's config takes it).
#[test]
fn llama_and_gemma3_refuse_a_hidden_size_not_split_by_the_heads() {
    for (model_type, refused) in [("llama", true), ("gemma3_text", true), ("mistral", false)] {
        let cfg = Config::from_json_str(&format!(
            r#"{{"model_type": "{model_type}", "hidden_size": 10, "num_attention_heads": 4, "head_dim": 8,
                "num_key_value_heads": 2, "intermediate_size": 16, "num_hidden_layers": 1, "vocab_size": 32}}"#
        ))
        .unwrap();
        let err = AutoModel::load(&cfg, &Weights::from_tensors(Vec::new())).unwrap_err().to_string();
        let says =
            err.contains("The hidden size (10) is not a multiple of the number of attention heads (4).");
        assert_eq!(says, refused, "{model_type}: {err}");
    }
}
