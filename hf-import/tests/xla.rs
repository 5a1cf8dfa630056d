//! hf-import on the XLA runtime (`xla:0`, the PJRT plugin named by `OXTORCH_PJRT_PLUGIN`): a decoder
//! (llama) and an encoder (bert) match transformers' goldens at the cpu tolerances (atol = rtol =
//! 1e-4), greedy generation matches token for token, `forward`/`generate`/`embed --device xla` write what
//! `--device cpu` writes, and the runtime's metrics show the work ran as device programs.
//!
//! Without `OXTORCH_PJRT_PLUGIN` every test prints a SKIPPED banner and returns (`scripts/test.sh`
//! always sets it).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_close, fixture, golden, read_all, xla};
use oxtorch_backend_tpu::xla::metrics;
use oxtorch_hf_import::weights::write_safetensors;
use oxtorch_hf_import::{generate, AutoModel, Config, GenerationConfig, SentenceTransformer, Weights};
use oxtorch_tensor::{DType, Device, Tensor};

/// Held by each test that uses the device in this process, so that no other test changes the
/// process-wide metrics between a test's reads.
static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lock on [`DEVICE`] (a failed test does not poison the others).
fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    DEVICE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Loads fixture `name` (float32) on `dev`, runs it on the golden inputs (on the host: the model
/// moves them) and compares every output with transformers'. Returns the number of host fallbacks.
fn check_family(name: &str, dev: Device) -> u64 {
    check_family_at(name, dev, false)
}

/// [`check_family`], comparing per-token outputs at the kept tokens only when `kept_only`: DeBERTa's
/// padded queries attend to every key alike in transformers, bucket padding included on xla.
fn check_family_at(name: &str, dev: Device, kept_only: bool) -> u64 {
    check_family_within(name, dev, kept_only, 1e-4)
}

/// [`check_family_at`] at `tol` (atol and rtol) in place of 1e-4 (see `common::check_within`).
fn check_family_within(name: &str, dev: Device, kept_only: bool, tol: f64) -> u64 {
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    let model = AutoModel::load_on_device(&cfg, &weights, dev).unwrap();
    assert_eq!(model.device(), dev, "{name}: the model's device");
    assert!(
        weights.iter().map(Result::unwrap).all(|(_, t)| t.device() == Device::Cpu),
        "{name}: the host weights moved"
    );
    let (inputs, expected) = golden(name);
    let before = metrics();
    let outputs = model.forward_named(&inputs, true).unwrap();
    // (An output under an input's name, Qwen2-Audio's `attention_mask`, echoes that input.)
    let outputs: Vec<_> = outputs.into_iter().filter(|(k, _)| !inputs.contains_key(k)).collect();
    let mut names: Vec<_> = outputs.iter().map(|(k, _)| k.clone()).collect();
    names.sort();
    assert_eq!(names, expected.keys().cloned().collect::<Vec<_>>(), "{name}: output names");
    let mut worst = 0.0f64;
    for (key, actual) in &outputs {
        assert_eq!(actual.device(), dev, "{name} {key}: the output left the device");
        let (actual, want) = match (&inputs.get("attention_mask"), actual.dims()) {
            (Some(mask), [b, seq, ..]) if kept_only && mask.dims() == [*b, *seq] => {
                let kept = |t: &Tensor| {
                    let mut m = mask.to_dtype(DType::F32).unwrap();
                    while m.rank() < t.rank() {
                        m = m.unsqueeze(-1).unwrap();
                    }
                    t.to(Device::Cpu).unwrap().mul(&m).unwrap()
                };
                (kept(actual), kept(&expected[key]))
            }
            _ => (actual.clone(), expected[key].clone()),
        };
        worst = worst.max(assert_close(&format!("{name} {key}"), &actual, &want, tol, tol));
    }
    // Read after the outputs: on xla the forward is recorded, and runs when they are read.
    let after = metrics();
    // A forward on xla is one fused program (plus the embeddings' range checks).
    let programs = after.executes - before.executes + after.fused_ops - before.fused_ops;
    let fallbacks = after.total_host_fallbacks() - before.total_host_fallbacks();
    eprintln!(
        "{name} on {dev}: {} outputs, max abs diff {worst:.2e}; {programs} ops ({} programs compiled), \
         host fallbacks {:?}",
        outputs.len(),
        after.new_programs() - before.new_programs(),
        after.host_fallbacks
    );
    // A layer is dozens of prims: a forward that ran as a handful of ops ran on the host.
    assert!(programs >= 50, "{name}: only {programs} ops ran on the device");
    fallbacks
}

#[test]
fn llama_bert_and_gpt2_forward_on_xla_match_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let fallbacks = check_family("llama", dev) + check_family("bert", dev) + check_family("gpt2", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // The pre-norm encoders' last norm.
    let fallbacks = check_family("megatron_bert_mlm", dev) + check_family("roberta_prelayernorm", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // The pre-training heads: per-token and per-sequence outputs of one padded forward.
    let fallbacks = check_family("megatron_bert_pretraining", dev) + check_family("albert_pretraining", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // GPT-Neo's local layers (windows inside the bucket; padded queries seeing only padding) and its
    // classifier (at its own length).
    let fallbacks =
        check_family("gpt_neo", dev) + check_family("gpt_neo_local", dev) + check_family("gpt_neo_cls", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // opt-350m's post-norm blocks and projections; BLOOM's ALiBi.
    let fallbacks = check_family("opt_350m", dev)
        + check_family("opt_350m_cls", dev)
        + check_family("bloom", dev)
        + check_family("bloom_cls", dev)
        + check_family("gpt_bigcode", dev)
        + check_family("gpt_bigcode_mha", dev)
        + check_family("mpt", dev)
        + check_family("mpt_clip", dev)
        + check_family("codegen_wide", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Mamba's mixers, Mamba-2's and Granite 4.0's hybrid (the selective scan runs on the host
    // between the device's products).
    let fallbacks = check_family("mamba", dev)
        + check_family("falcon_mamba", dev)
        + check_family("mamba2", dev)
        + check_family("granite_hybrid", dev)
        // (An ill-conditioned fixture: see the cpu test `qwen3_5`.)
        + check_family_within("qwen3_5", dev, false, 3e-4)
        + check_family("nemotron_h", dev)
        + check_family("nemotron_h_moe", dev)
        + check_family("falcon_h1", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // DeepSeek's latent attention (padded heads) and its routers.
    let fallbacks = check_family("deepseek_v3", dev)
        + check_family("deepseek_v3_plain", dev)
        + check_family("exaone_moe", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // gpt-oss's attention sinks (a key slot past the bucket's) and its experts.
    let fallbacks = check_family("gpt_oss", dev) + check_family("gpt_oss_cls", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // PhiMoE's sparsemixer and its mscale chosen by length on the device.
    let fallbacks = check_family("phimoe", dev) + check_family("phimoe_cls", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Per-token heads (token logits cut back from the bucket; QA's at their own length), the
    // decoders' token classifiers among them.
    let fallbacks = check_family("bert_tok", dev)
        + check_family("roberta_qa", dev)
        + check_family("llama_tok", dev)
        + check_family("bloom_tok", dev)
        + check_family("gpt2_tok", dev);
    assert!(fallbacks <= 4, "{fallbacks} prims fell back to the host");
    // ELECTRA: the projected embeddings and the generator's logits, cut back from the bucket; the
    // discriminator's `[batch, seq]` logits at their own length.
    let fallbacks = check_family("electra_mlm", dev) + check_family("electra_disc", dev);
    assert!(fallbacks <= 4, "{fallbacks} prims fell back to the host");
    // DeBERTa: the disentangled scores' gathers (host-made indices), the grouped convolution,
    // the classifier on the ContextPooler.
    let fallbacks = check_family_at("deberta_v3", dev, true)
        + check_family_at("deberta_v2", dev, true)
        + check_family_at("deberta_cls", dev, true)
        + check_family_at("deberta_v1", dev, true)
        + check_family("nomic_bert", dev)
        + check_family("esm", dev)
        + check_family("esm1b", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Multiple choice: `[batch, num_choices, seq]` inputs at their own length.
    let fallbacks = check_family("bert_mc", dev) + check_family("deberta_mc", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Image models (pixels in, no id lookups).
    let fallbacks = check_family("vit", dev)
        + check_family("vit_cls", dev)
        + check_family("clip", dev)
        + check_family("siglip", dev)
        + check_family("dinov2_cls", dev)
        + check_family("dinov2", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Encoder-decoders (the relative-position buckets are host-made indices).
    let fallbacks = check_family("t5", dev)
        + check_family("t5_v11", dev)
        + check_family("t5_cls", dev)
        + check_family("t5_tok", dev)
        + check_family("t5_qa", dev)
        + check_family("umt5", dev)
        + check_family("umt5_encoder", dev)
        + check_family("bart", dev)
        + check_family("whisper", dev)
        + check_family("marian", dev)
        + check_family("m2m_100", dev)
        + check_family("m2m_100_base", dev)
        + check_family("plbart", dev)
        + check_family("blenderbot", dev)
        + check_family("blenderbot_small", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // Speech encoders on raw audio: strided and grouped convolutions, group and layer norms,
    // WavLM's gated position bias, the x-vector heads' dilated convolutions and statistics.
    let fallbacks = check_family("wav2vec2_ctc", dev)
        + check_family("wav2vec2_ctc_stable", dev)
        + check_family("wav2vec2_cls", dev)
        + check_family("wavlm_ctc_stable", dev)
        + check_family("wavlm_xvector", dev)
        + check_family("unispeech_sat_xvector", dev)
        + check_family("wav2vec2_pretraining", dev)
        + check_family("wav2vec2_conformer_rel", dev)
        + check_family("wav2vec2_conformer_rope", dev)
        + check_family("sew_ctc", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
    // ResNet: convolutions, inference batch norms, the max pool; DeiT's two tokens and heads.
    let fallbacks = check_family("resnet", dev)
        + check_family("resnet_cls", dev)
        + check_family("deit_teacher", dev)
        + check_family("convnextv2_cls", dev)
        + check_family("ast_cls", dev)
        + check_family("swin", dev)
        + check_family("swin_cls", dev)
        + check_family("swinv2_cls", dev)
        + check_family("beit", dev)
        + check_family("beit_cls_shared", dev)
        + check_family("data2vec_vision_cls", dev)
        + check_family("segformer_cls", dev)
        + check_family("segformer_seg", dev)
        + check_family("dinov3", dev)
        + check_family("depth_anything", dev)
        + check_family("dpt_seg", dev)
        + check_family("dpt_hybrid_depth", dev)
        + check_family("dpt_dinov2", dev)
        + check_family("mobilevit_seg", dev)
        + check_family("mobilevit_cls", dev)
        + check_family("vit_mae_pretrain", dev)
        + check_family("cvt", dev)
        + check_family("levit_teacher", dev)
        + check_family("yolos_det", dev)
        + check_family("mobilevitv2_seg", dev)
        + check_family("pvt_v2_cls", dev)
        + check_family("ijepa_cls", dev)
        + check_family("mobilenet_v2_seg", dev)
        + check_family("efficientnet_cls", dev)
        + check_family("regnet_cls", dev)
        + check_family("glpn_depth", dev)
        + check_family("bit", dev)
        + check_family("poolformer_cls", dev);
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
}

/// The later decoder families on xla: CWM's windows, Jais 2's layer norms, HyperCLOVA X's post
/// norms, Youtu's latent attention, Ministral 3's per-position query scale (also inside Mistral 3),
/// NanoChat's weightless norms, GLM-4.7-Flash's latent attention with its mixture, MiniMax-M2's
/// whole-projection norms and biased sigmoid routing, Solar Open's and Sarvam's mixtures, LFM2-MoE's,
/// Mellum's RoPE per layer type, Laguna's per-layer heads and softplus gates, AFMoE's sigmoid gates,
/// Llama 4's chunked attention, query temperature and mixtures on the experts' inputs.
#[test]
fn later_decoder_families_forward_on_xla_match_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let names = [
        "cwm",
        "jais2",
        "hyperclovax",
        "youtu",
        "ministral3",
        "mistral3_ministral3",
        "nanochat",
        "glm4_moe_lite",
        "minimax_m2",
        "solar_open",
        "sarvam_mla",
        "sarvam_moe",
        "lfm2_moe",
        "mellum",
        "laguna",
        "afmoe",
        "llama4_mm",
        "hy_v3",
        "cohere2_moe",
        "granite_swa",
        "minicpm3",
        "dbrx",
        "persimmon",
        "mimo_v2_flash",
        "gemma4",
        "gemma4_moe",
        "gemma4_mm",
        "gemma3n",
        "gemma3n_typed",
        "gemma3n_mm",
        "mistral4",
        "mistral4_plain",
        "flint",
        "flint_typed",
        "axk1",
        "kolibri1",
        "lfm3",
        "diffllama",
        "bitnet_packed",
        "modernbert_decoder",
        "qwen2_vl",
        "qwen3_vl_moe_hub",
        "llava",
        "mllama",
        "paligemma",
        "eurobert_mlm",
        "llava_images",
        "gemma3_images",
        "paligemma2_images",
        "aya_vision_images",
        "llava_next_images",
        "llava_onevision_images",
        "idefics3_images",
        "internvl_rms_images",
        "llava_pixtral_images",
        "mistral3_images",
        "qwen2_vl_images",
        "qwen2_5_vl_images",
        "qwen3_vl_images",
        "lfm2_vl_images",
        "mllama_images",
        "qwen2_audio_audio",
        "voxtral_audio",
        "llava_next_video_video",
        "llava_onevision_video",
    ];
    let mut fallbacks: u64 = names.iter().map(|name| check_family(name, dev)).sum();
    // (A padded query whose chunk holds only padding attends to every key alike, as in transformers:
    // on xla the bucket's padding too, so Llama 4's are compared at the kept tokens.)
    fallbacks += check_family_at("llama4", dev, true);
    // (Likewise a padded query whose window holds only padding: the ModernBERT decoder's of two keys.)
    fallbacks += check_family_at("modernbert_decoder_bias", dev, true);
    // (Not `bitnet_online`: its online quantization rounds each activation to one of 255 levels of
    // its token's absolute maximum, and on the Intel AMX host XLA's CPU code lands activations at
    // rounding ties on the other level, layer after layer: 1.5e-2 in a logit. The cpu tests compare
    // it with transformers; `bitnet_packed` runs the same layers on xla.)
    assert!(fallbacks == 0, "{fallbacks} prims fell back to the host");
}

#[test]
fn llama_greedy_generate_on_xla_matches_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let name = "llama";
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    let model = AutoModel::load_on_device(&cfg, &weights, dev).unwrap();
    let lm = model.causal_lm().unwrap();
    let golden = read_all(&dir.join("generate.safetensors"));
    let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
    g.max_new_tokens = 10;
    g.pad_token_id = Some(0);
    let before = metrics();
    let out = generate(lm, &golden["input_ids"], Some(&golden["attention_mask"]), &g, |_, _| {}).unwrap();
    let after = metrics();
    assert_eq!(out.device(), Device::Cpu);
    assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
    let steps = out.dims()[1] as u64 - golden["input_ids"].dims()[1] as u64;
    let downloads = after.transfers_from_device - before.transfers_from_device;
    eprintln!(
        "generate on {dev}: {steps} steps, {} programs, {downloads} downloads, {} fallbacks",
        after.executes - before.executes,
        after.total_host_fallbacks() - before.total_host_fallbacks()
    );
    // Each step's forward runs on the device, fused into one program (generate defers on xla).
    let fused_ops = after.fused_ops - before.fused_ops;
    assert!(fused_ops >= 50 * steps, "only {fused_ops} ops ran fused on the device in {steps} steps");
    assert_eq!(after.total_host_fallbacks(), before.total_host_fallbacks(), "host fallbacks");
    // Per step: the last logits, plus the id range checks of hf-import's `Embedding` (min and max in
    // one read) and of `Tensor::embedding` (two reads).
    assert!(downloads <= 4 * steps, "{downloads} downloads in {steps} steps");
}

fn hf_import(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hf-import")).args(args).output().expect("the hf-import binary runs")
}

/// A fresh temporary folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxtorch-hf-xla-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `hf-import` with `args` then `--device device` and asserts success.
fn run_on(args: &[&str], device: &str) {
    let mut all = args.to_vec();
    all.extend(["--device", device]);
    let out = hf_import(&all);
    assert!(out.status.success(), "{all:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Every tensor of `a` equals the one of `b` of the same name (shape, dtype, values at 1e-5).
fn assert_same_files(what: &str, a: &Path, b: &Path) {
    let (a, b) = (read_all(a), read_all(b));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{what}: names");
    for (k, t) in &a {
        assert_eq!(t.dtype(), b[k].dtype(), "{what} {k}: dtype");
        assert_close(&format!("{what} {k}"), t, &b[k], 1e-5, 1e-5);
    }
}

#[test]
fn cli_forward_generate_embed_on_xla_write_what_cpu_writes() {
    if xla().is_none() {
        return;
    }
    let dir = scratch("cli");
    let p = |f: &str| dir.join(f).to_str().unwrap().to_string();

    // forward, llama and bert, with hidden states; also checked against transformers.
    for name in ["llama", "bert"] {
        let (inputs, expected) = golden(name);
        write_safetensors(&dir.join("in.safetensors"), &inputs.into_iter().collect::<Vec<_>>(), None)
            .unwrap();
        let model = fixture(name);
        for dev in ["cpu", "xla"] {
            let out = p(&format!("{name}-{dev}.safetensors"));
            let args =
                ["forward", model.to_str().unwrap(), "--inputs", &p("in.safetensors"), "--output", &out];
            run_on(&[&args[..], &["--hidden-states"]].concat(), dev);
        }
        let on_xla = dir.join(format!("{name}-xla.safetensors"));
        assert_same_files(name, &on_xla, &dir.join(format!("{name}-cpu.safetensors")));
        for (k, t) in read_all(&on_xla) {
            assert_eq!(t.dtype(), DType::F32, "{name} {k}");
            assert_close(&format!("{name} {k}"), &t, &expected[&k], 1e-4, 1e-4);
        }
    }

    // generate token ids, greedy, from transformers' left-padded prompts.
    let gen = read_all(&fixture("llama").join("generate.safetensors"));
    let prompts = ["input_ids", "attention_mask"].map(|k| (k.to_string(), gen[k].clone()));
    write_safetensors(&dir.join("prompts.safetensors"), &prompts, None).unwrap();
    for dev in ["cpu", "xla"] {
        let out = p(&format!("gen-{dev}.safetensors"));
        let llama = fixture("llama");
        let args = ["generate", llama.to_str().unwrap(), "--inputs", &p("prompts.safetensors")];
        run_on(&[&args[..], &["--output", &out, "--max-new-tokens", "4", "--greedy"]].concat(), dev);
    }
    let (cpu, xla) = (read_all(&dir.join("gen-cpu.safetensors")), read_all(&dir.join("gen-xla.safetensors")));
    let ids = &xla["output_ids"];
    assert_eq!(ids.dims(), cpu["output_ids"].dims());
    assert_eq!(ids.to_vec::<i64>().unwrap(), cpu["output_ids"].to_vec::<i64>().unwrap());
    let want = gen["output_ids"].narrow(1, 0, ids.dims()[1]).unwrap();
    assert_eq!(ids.to_vec2::<i64>().unwrap(), want.to_vec2::<i64>().unwrap(), "generate vs transformers");

    // embed.
    let st = fixture("sentence_tiny");
    for dev in ["cpu", "xla"] {
        let out = p(&format!("emb-{dev}.safetensors"));
        run_on(&["embed", st.to_str().unwrap(), "--output", &out, "a small test", "another one"], dev);
    }
    assert_same_files("embed", &dir.join("emb-xla.safetensors"), &dir.join("emb-cpu.safetensors"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sentence_transformer_on_xla_matches_the_host() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let dir = fixture("sentence_tiny");
    let texts = ["a small test", "another, longer sentence to pad the first"];
    let host = SentenceTransformer::load(&dir, None).unwrap().encode(&texts).unwrap();
    let st = SentenceTransformer::load_on_device(&dir, None, dev).unwrap();
    let emb = st.encode(&texts).unwrap();
    assert_eq!(emb.device(), dev);
    assert_close("embeddings", &emb.to(Device::Cpu).unwrap(), &host, 1e-5, 1e-5);
}

/// A decoder embedder whose RoPE reads the length (PhiMoE's mscale switches past 8 positions):
/// the bucket's padding (7 tokens to 16) leaves the real tokens rotated as on the host.
#[test]
fn sentence_embeddings_of_a_length_reading_rope_ignore_the_bucket_padding() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let dir = fixture("phimoe");
    let ids = Tensor::from_vec((1..=14).collect::<Vec<i64>>(), [2, 7]).unwrap();
    let mask = Tensor::ones([2, 7], DType::I64).unwrap();
    let host = SentenceTransformer::load(&dir, None).unwrap().embed_ids(&ids, &mask, None).unwrap();
    let st = SentenceTransformer::load_on_device(&dir, None, dev).unwrap();
    let emb = st.embed_ids(&ids, &mask, None).unwrap();
    assert_close("embeddings", &emb.to(Device::Cpu).unwrap(), &host, 1e-5, 1e-5);
}

#[test]
fn sentence_embeddings_of_every_batch_size_in_a_bucket_share_their_programs() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let dir = fixture("sentence_tiny");
    let host = SentenceTransformer::load(&dir, None).unwrap();
    let st = SentenceTransformer::load_on_device(&dir, None, dev).unwrap();
    let words = ["a", "small", "test", "of", "batches", "that", "grow", "longer", "each", "time"];
    let refused = metrics().dynamic_refusals;
    let mut built = Vec::new();
    // Batches of 5, 7 and 6 texts share the bucket 8 (and one length bucket).
    for batch in [5, 7, 6] {
        let texts: Vec<String> = (0..batch).map(|i| words[..2 + i % 4].join(" ")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let before = metrics().new_programs();
        let emb = st.encode(&texts).unwrap();
        built.push(metrics().new_programs() - before);
        assert_eq!(emb.dims(), [batch, host.encode(&texts[..1]).unwrap().dims()[1]]);
        assert_close(
            &format!("batch {batch}"),
            &emb.to(Device::Cpu).unwrap(),
            &host.encode(&texts).unwrap(),
            1e-5,
            1e-5,
        );
    }
    assert_eq!(built[1..], [0, 0], "batch sizes of one bucket compiled again ({built:?})");
    assert_eq!(metrics().dynamic_refusals, refused, "a graph of the forward was not generalized");
}

/// `[2, len]` token ids below `vocab`, and a mask that hides row 1's last token.
fn synthetic_inputs(len: usize, vocab: usize) -> BTreeMap<String, Tensor> {
    let ids: Vec<i64> = (0..2 * len).map(|i| 2 + (i as i64 * 7 + 3) % (vocab as i64 - 2)).collect();
    let mut mask = vec![1i64; 2 * len];
    mask[2 * len - 1] = 0;
    let mut inputs = BTreeMap::new();
    inputs.insert("input_ids".to_string(), Tensor::from_vec(ids, [2, len]).unwrap());
    inputs.insert("attention_mask".to_string(), Tensor::from_vec(mask, [2, len]).unwrap());
    inputs
}

#[test]
fn forward_on_xla_pads_every_length_of_a_bucket_to_one_program() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    for name in ["llama", "bert", "roberta"] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let vocab = cfg.usize_or("vocab_size", 0).unwrap();
        let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
        let host = AutoModel::load(&cfg, &weights).unwrap();
        let model = AutoModel::load_on_device(&cfg, &weights, dev).unwrap();
        // 3, 9 and 16 share the bucket 16; 20 is in the next one (RoBERTa's is capped at its 30
        // usable positions).
        let mut built = Vec::new();
        for len in [3, 9, 16, 20] {
            let inputs = synthetic_inputs(len, vocab);
            let before = metrics();
            let outputs = model.forward_named(&inputs, true).unwrap();
            built.push(metrics().new_programs() - before.new_programs());
            let expected: BTreeMap<String, Tensor> =
                host.forward_named(&inputs, true).unwrap().into_iter().collect();
            assert_eq!(outputs.len(), expected.len(), "{name} at {len}: outputs");
            for (key, actual) in &outputs {
                assert_close(&format!("{name} {key} at {len}"), actual, &expected[key], 1e-4, 1e-4);
            }
        }
        // Batches of 3 and 4 share the batch bucket 4 (at one length bucket).
        let mut by_batch = Vec::new();
        for batch in [3, 4] {
            let ids: Vec<i64> = (0..batch * 5).map(|i| 2 + (i as i64 * 5 + 1) % (vocab as i64 - 2)).collect();
            let mut inputs = BTreeMap::new();
            inputs.insert("input_ids".to_string(), Tensor::from_vec(ids, [batch, 5]).unwrap());
            let before = metrics();
            let outputs = model.forward_named(&inputs, false).unwrap();
            by_batch.push(metrics().new_programs() - before.new_programs());
            let expected: BTreeMap<String, Tensor> =
                host.forward_named(&inputs, false).unwrap().into_iter().collect();
            for (key, actual) in &outputs {
                assert_close(&format!("{name} {key} of batch {batch}"), actual, &expected[key], 1e-4, 1e-4);
            }
        }
        assert_eq!(by_batch[1], 0, "{name}: a batch size of the same bucket compiled again");
        eprintln!("{name}: programs built per length {built:?}");
        // (The first length may find its programs already built by another test of this process.)
        assert_eq!(built[1..3], [0, 0], "{name}: lengths of one bucket compiled again ({built:?})");
    }
}
