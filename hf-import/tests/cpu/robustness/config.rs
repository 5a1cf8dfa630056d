//! The `config.json` sweep: keys set to hostile values (nested ones too), keys removed, the
//! file truncated, empty, not JSON, not an object, nested 5000 deep, a folder, unknown
//! `model_type` or `architectures`.

use super::*;

/// Keys swept in every `config.json` that has them; others are sampled.
const CORE_KEYS: &[&str] = &[
    "num_hidden_layers",
    "n_layers",
    "vocab_size",
    "max_position_embeddings",
    "num_attention_heads",
    "n_heads",
    "n_layer",
    "n_head",
    "n_embd",
    "n_positions",
    "num_local_experts",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "image_size",
    "patch_size",
    "num_channels",
    "num_layers",
    "num_decoder_layers",
    "num_heads",
    "d_kv",
    "d_ff",
    "relative_attention_num_buckets",
    "encoder_layers",
    "decoder_layers",
    "encoder_attention_heads",
    "decoder_ffn_dim",
    "d_model",
    "num_mel_bins",
    "max_source_positions",
    "max_target_positions",
    "num_kv_heads",
    "ffn_hidden_size",
];
/// How many other numeric keys (nested ones included), and how many non-numeric ones, are swept
/// per `config.json` (all of them with `ROBUSTNESS_FULL=1`).
const SAMPLED_NUMERIC: usize = 2;
const SAMPLED_OTHER: usize = 2;
/// How many top-level keys are removed, one at a time, per `config.json`.
const SAMPLED_REMOVED: usize = 3;
/// The fixtures whose `config.json` is swept.
const CONFIG_FIXTURES: &[&str] = &[
    "llama",
    "llama_tied",
    "qwen2_yarn",
    "phi3_longrope",
    "gemma3",
    "gemma3_mm",
    "llama_dynamic",
    "bert",
    "roberta",
    "distilbert_mlm",
    "sentence_tiny",
    "sentence_mpnet",
    "gpt2",
    "gpt_neox",
    "mixtral",
    "qwen3_moe",
    "phi",
    "llama_cls",
    "modernbert_cls_mean",
    "vit_cls",
    "clip",
    "t5",
    "bart",
    "whisper",
    "marian_split",
    "falcon_40b",
    "olmo",
    "siglip",
    "dinov2_cls",
    "mamba",
    "mamba2",
    "granite_hybrid",
    "jamba",
    "lfm2",
    "nemotron_h",
    "qwen3_5",
    "qwen3_next",
    "falcon_h1",
    "phimoe",
    // A fused q/k/v under hub names; a vision-language wrapper over a nested text config.
    "gte",
    "llava",
    // Images: a pooled SigLIP projector and its token count, beside a nested text config.
    "gemma3_images",
    // Tiled images: the pinpoints, the tower's tile, OneVision's `anyres_max_N`.
    "llava_onevision_images",
    // Images of their own sizes: Pixtral's tower, Mistral 3's merger.
    "mistral3_images",
    // Flattened patches of grids: Qwen2.5-VL's windows, merger and multimodal RoPE sections;
    // Qwen3-VL's position table and deepstack mergers.
    "qwen2_5_vl_images",
    "qwen3_vl_images",
    // SigLIP2's NaFlex table and LFM2-VL's unshuffle factor.
    "lfm2_vl_images",
    // Llama 3.2 Vision's tiles, aspect ratios and cross-attention layers.
    "mllama_images",
    // Qwen2-Audio's Whisper-style tower, its mel bins and frames.
    "qwen2_audio_audio",
    "wavlm_xvector",
    "swin_cls",
    "beit_cls_shared",
    // Dense prediction: Depth Anything's nested backbone and stage list, DPT's neck and readout.
    "depth_anything",
    "dpt_seg",
    "dpt_hybrid_depth",
    "dpt_dinov2",
    // SEW's squeeze around wav2vec 2.0's blocks.
    "sew_ctc",
    // MobileNet's width rounding, strides and dilations.
    "mobilenet_v2_seg",
    "mobilevit_seg",
    "vit_mae_pretrain",
    "cvt_cls",
    "levit_teacher",
    "yolos_det",
    "mobilevitv2_seg",
    "pvt_v2_cls",
    "efficientnet_cls",
    "regnet_cls",
    "glpn_depth",
    "bit",
    "poolformer_cls",
];

/// The corruptions of a `config.json` (`json`, `bytes` as written): chosen keys set to each
/// hostile value, keys removed, and the file broken.
fn config_cases(json: &Value, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let all = nodes(json, false);
    let (numeric, other): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, v)| is_numeric(v));
    // A core key at the top, or in a multimodal config's `text_config` / `vision_config`.
    let core = |p: &JsonPath| match p.split_last() {
        Some((Seg::Key(k), above)) => {
            CORE_KEYS.contains(&k.as_str())
                && above
                    .iter()
                    .all(|s| matches!(s, Seg::Key(t) if t == "text_config" || t == "vision_config"))
        }
        _ => false,
    };
    let mut chosen: Vec<JsonPath> = numeric.iter().filter(|(p, _)| core(p)).map(|(p, _)| p.clone()).collect();
    let rest: Vec<JsonPath> = numeric.iter().filter(|(p, _)| !core(p)).map(|(p, _)| p.clone()).collect();
    let other: Vec<JsonPath> = other.into_iter().map(|(p, _)| p).collect();
    let (n_numeric, n_other) =
        if full() { (usize::MAX, usize::MAX) } else { (SAMPLED_NUMERIC, SAMPLED_OTHER) };
    chosen.extend(rng.sample(&rest, n_numeric));
    chosen.extend(rng.sample(&other, n_other));
    let mut cases = Vec::new();
    for path in &chosen {
        let keys = path_keys(path);
        for text in HOSTILE {
            let mutated = with_value(json, path, hostile(text));
            let label = format!("{}={text}", path_label(path));
            cases.push(Case::write(label, "config.json", json_bytes(&mutated), &keys));
        }
    }
    let top: Vec<JsonPath> =
        json.as_object().into_iter().flatten().map(|(k, _)| vec![Seg::Key(k.clone())]).collect();
    let n_removed = if full() { usize::MAX } else { SAMPLED_REMOVED };
    for path in rng.sample(&top, n_removed) {
        let label = format!("{} removed", path_label(&path));
        cases.push(Case::write(label, "config.json", json_bytes(&without(json, &path)), &path_keys(&path)));
    }
    let set = |key: &str, v: Value| json_bytes(&with_value(json, &[Seg::Key(key.into())], v));
    let encoder = matches!(json["model_type"].as_str(), Some("bert" | "roberta" | "distilbert"));
    let other_family = if encoder { json!(["LlamaForCausalLM"]) } else { json!(["BertModel"]) };
    let c = "config.json";
    cases.extend([
        Case::of("config.json removed", vec![Edit::Remove(c.into())], &[]),
        Case::of("config.json a folder", vec![Edit::MakeDir(c.into())], &[]),
        Case::write("config.json empty", c, Vec::new(), &[]),
        Case::write("config.json truncated", c, half(bytes), &[]),
        Case::write("config.json not JSON", c, b"{\"model_type\": llama".to_vec(), &[]),
        Case::write("config.json a list", c, b"[]".to_vec(), &[]),
        Case::write("config.json a number", c, b"5".to_vec(), &[]),
        Case::write("config.json null", c, b"null".to_vec(), &[]),
        Case::write("config.json an empty object", c, b"{}".to_vec(), &["model_type"]),
        Case::write(
            "config.json not UTF-8",
            c,
            [b"{\"a\": \"".as_slice(), &[0xFF, 0xFE], b"\"}"].concat(),
            &[],
        ),
        Case::write("config.json after a BOM", c, ["\u{FEFF}".as_bytes(), bytes].concat(), &[]),
        Case::write(
            "config.json nested 5000 deep",
            c,
            format!("{{\"model_type\": \"llama\", \"rope_parameters\": {}}}", deep_nesting(5000)),
            &[],
        ),
        Case::write("model_type unknown", c, set("model_type", json!("t5")), &["model_type"]),
        Case::write(
            "architectures unknown",
            c,
            set("architectures", json!(["FooForBar"])),
            &["architecture"],
        ),
        Case::write(
            "architectures a string",
            c,
            set("architectures", json!("LlamaForCausalLM")),
            &["architecture"],
        ),
        Case::write("architectures [5]", c, set("architectures", json!([5])), &["architecture"]),
        Case::write("architectures [\"\"]", c, set("architectures", json!([""])), &["architecture"]),
        Case::write(
            "architectures of another family",
            c,
            set("architectures", other_family),
            &["architecture"],
        ),
    ]);
    cases
}

#[test]
fn corrupt_config_json_never_panics() {
    let root = ScratchRoot::new("config");
    let mut rng = Rng(SEED);
    let mut s = Sweep::default();
    for name in CONFIG_FIXTURES {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let bytes = sc.original("config.json");
        let cases = config_cases(&original_json(&sc, "config.json"), &bytes, &mut rng);
        sweep_cases(&mut s, &mut rng, &mut sc, name, cases);
    }
    s.finish("robustness config.json sweep", 2000);
}
