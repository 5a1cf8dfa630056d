//! Greedy generation with the KV cache matches transformers' `generate` token for token (left-padded
//! batch, sliding windows crossed), and cached decoding gives the logits of a full forward pass.

use crate::common;
use crate::decoder_fixtures::DECODERS;

use common::{assert_close, fixture, read_all, ImagePrompt};
use oxtorch_hf_import::layers::KvCache;
use std::collections::BTreeMap;

use oxtorch_hf_import::{
    generate, generate_recurrent, generate_with_images, AutoModel, CacheImplementation, Config,
    GenerationConfig, PromptImages, Weights,
};
use oxtorch_tensor::{DType, Tensor};

/// Every decoder fixture: [`DECODERS`] and the untied Gemma 3 multimodal checkpoint (which the
/// packed tests leave out).
fn decoders() -> impl Iterator<Item = &'static str> {
    DECODERS.into_iter().chain(["gemma3_mm_untied"])
}

fn load(name: &str) -> (Config, AutoModel) {
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, Some(DType::F32)).unwrap()).unwrap();
    (cfg, model)
}

#[test]
fn greedy_generate_matches_transformers() {
    greedy_generate_with(CacheImplementation::Auto);
}

/// The static cache (bucket-padded prompt, fixed-shape masked attention) on the cpu, as xla runs it.
#[test]
fn greedy_generate_with_a_static_cache_matches_transformers() {
    greedy_generate_with(CacheImplementation::Static);
}

fn greedy_generate_with(cache: CacheImplementation) {
    for name in decoders() {
        let (cfg, model) = load(name);
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        g.max_new_tokens = 10;
        g.pad_token_id = Some(0);
        g.cache_implementation = cache;
        let mut streamed = vec![Vec::new(); 2];
        let lm = model.causal_lm().unwrap();
        let out = generate(lm, &golden["input_ids"], Some(&golden["attention_mask"]), &g, |r, t| {
            streamed[r].push(t)
        })
        .unwrap();
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name} ({cache:?} cache)");
        for (r, row) in want.iter().enumerate() {
            // Streaming ends with a row's EOS; the padding after it is not streamed.
            let new = &row[7..];
            let end = new.iter().position(|t| g.eos_token_ids.contains(t)).map_or(new.len(), |i| i + 1);
            assert_eq!(streamed[r], new[..end].to_vec(), "{name}: streamed tokens of row {r}");
        }
    }
}

/// The classes with images generating from prompts with images (their features in the prefill,
/// left padding, two images; Qwen2-VL's at their multimodal RoPE positions, the new tokens going
/// on from each stream's last; Llama 3.2 Vision's attended to at every step, a new token seeing
/// the tiles the prompt's last sees) equal transformers' greedy `generate(pixel_values=...)`, with the
/// dynamic and the static cache; images that do not match the prompts' image tokens are an error.
#[test]
fn greedy_generate_with_images_matches_transformers() {
    let names =
        ["llava_images", "llava_siglip_images", "vipllava_images", "gemma3_images", "paligemma_images"];
    let anyres = ["llava_next_images", "llava_next_video_images", "llava_onevision_images"];
    let anyres = anyres.into_iter().chain([
        "idefics3_images",
        "smolvlm_images",
        "internvl_images",
        "llava_pixtral_images",
        "mistral3_images",
        "qwen2_vl_images",
        "qwen2_5_vl_images",
        "qwen3_vl_images",
        "qwen3_vl_moe_images",
        "lfm2_vl_images",
        "mllama_images",
        "qwen2_audio_audio",
        "voxtral_audio",
        "llava_next_video_video",
        "llava_onevision_video",
    ]);
    for name in names.into_iter().chain(["paligemma2_images", "aya_vision_images"]).chain(anyres) {
        let (cfg, model) = load(name);
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        // (Gemma 3's and PaliGemma's goldens are of prompts with `token_type_ids`: each image, or
        // the prefix, attends both ways.)
        let prompt = ImagePrompt::of(&model, &golden);
        let (lm, images) = (prompt.lm, prompt.images());
        for cache in [CacheImplementation::Auto, CacheImplementation::Static] {
            let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
            g.max_new_tokens = 10;
            g.pad_token_id = Some(0);
            g.cache_implementation = cache;
            let mask = Some(&golden["attention_mask"]);
            let out =
                generate_with_images(lm, &golden["input_ids"], mask, images, &g, None, |_, _| {}).unwrap();
            let want = golden["output_ids"].to_vec2::<i64>().unwrap();
            assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name} ({cache:?} cache)");
        }
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        g.max_new_tokens = 2;
        let fewer = prompt.media.rows.dims()[0].saturating_sub(1).min(4);
        let half = prompt.media.rows.narrow(0, 0, fewer).unwrap();
        let images = PromptImages { rows: &half, ..images };
        let err =
            generate_with_images(lm, &golden["input_ids"], None, images, &g, None, |_, _| {}).unwrap_err();
        // (The rows follow the image and the video tokens alike.)
        let count = |t: i64| {
            let marked = golden["input_ids"].eq(t as f64).unwrap().to_dtype(DType::I64).unwrap();
            marked.sum_all().unwrap().item::<i64>().unwrap()
        };
        let tokens = count(prompt.media.token) + prompt.media.video_token.map_or(0, count);
        let want =
            format!("Image features and image tokens do not match, tokens: {tokens}, features: {fewer}");
        assert!(err.to_string().contains(&want), "{err}");
    }
}

/// Qwen2-VL, Qwen2.5-VL and Qwen3-VL generating from prompts with a video and an image (their
/// features in their tokens' order, the video's frames at their own temporal positions, Qwen3-VL's
/// deepstack rows) equal transformers' greedy `generate(pixel_values_videos=...)`, with the dynamic
/// and the static cache.
#[test]
fn greedy_generate_with_videos_matches_transformers() {
    for name in ["qwen2_vl_video", "qwen2_5_vl_video", "qwen3_vl_video"] {
        let (cfg, model) = load(name);
        let AutoModel::VisionLanguage(m) = &model else { panic!("{name} is not a vision-language model") };
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let media = m.prompt_media(&golden).unwrap().expect("prompts with a video");
        assert_eq!(media.video_token, Some(98), "{name}");
        for cache in [CacheImplementation::Auto, CacheImplementation::Static] {
            let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
            g.max_new_tokens = 10;
            g.pad_token_id = Some(0);
            g.cache_implementation = cache;
            let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
            let out = generate_with_images(m, ids, mask, media.as_prompt(), &g, None, |_, _| {}).unwrap();
            let want = golden["output_ids"].to_vec2::<i64>().unwrap();
            assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name} ({cache:?} cache)");
        }
    }
}

/// Beam search equals transformers' `generate(num_beams=...)` token for token, with the dynamic and
/// the static cache, on the settings `make_fixtures.py` recorded in `beam.safetensors`: EOS hits
/// (two EOS ids; finished hypotheses padded with the first), length penalties (0, 0.6, 2),
/// `early_stopping` true and `"never"`, repetition penalty and n-gram bans, a left-padded prompt,
/// mixtures of experts, and Phi-3's LongRoPE switch (the cache recomputed mid-search).
#[test]
fn beam_search_matches_transformers() {
    for name in
        ["llama", "gpt2", "qwen3", "mixtral", "gemma2", "phi3_longrope", "olmo2", "granite_hybrid", "lfm2"]
    {
        let (cfg, model) = load(name);
        let (mut g, golden) = beam_settings(name, &cfg);
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        for cache in [CacheImplementation::Dynamic, CacheImplementation::Static] {
            g.cache_implementation = cache;
            let mut streamed = vec![Vec::new(); want.len()];
            let lm = model.causal_lm().unwrap();
            let out = generate(lm, &golden["input_ids"], Some(&golden["attention_mask"]), &g, |r, t| {
                streamed[r].push(t)
            })
            .unwrap();
            assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name} ({cache:?} cache)");
            for (r, row) in want.iter().enumerate() {
                // A hypothesis' tokens up to its EOS; the padding after it is not streamed.
                let new = &row[7..];
                let end = new.iter().position(|t| g.eos_token_ids.contains(t)).map_or(new.len(), |i| i + 1);
                assert_eq!(streamed[r], new[..end].to_vec(), "{name}: streamed tokens of row {r}");
            }
        }
    }
}

/// Settings transformers refuses with `num_return_sequences` are errors; sampling returns that many
/// sequences per prompt.
#[test]
fn num_return_sequences_as_transformers() {
    let (_, model) = load("llama");
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::from_vec(vec![1i64, 17, 42, 5, 9, 8], [2, 3]).unwrap();
    let base = GenerationConfig { max_new_tokens: 4, num_return_sequences: 3, ..GenerationConfig::default() };
    let err = generate(lm, &ids, None, &base, |_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains("Greedy methods without beam search do not support `num_return_sequences`"),
        "{err}"
    );
    let beams = GenerationConfig { num_beams: 2, ..base.clone() };
    let err = generate(lm, &ids, None, &beams, |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("`num_return_sequences` has to be smaller or equal to `num_beams`"), "{err}");
    let sampled = GenerationConfig { do_sample: true, seed: 3, ..base };
    let out = generate(lm, &ids, None, &sampled, |_, _| {}).unwrap().to_vec2::<i64>().unwrap();
    assert_eq!(out.len(), 6);
    for (r, row) in out.iter().enumerate() {
        assert_eq!(row[..3], [[1, 17, 42], [5, 9, 8]][r / 3], "row {r} continues its prompt");
    }
}

#[test]
fn cached_decoding_equals_full_forward() {
    // A growing cache, a preallocated one, and a fixed-shape one (16 slots, all read, masked).
    let caches: [fn(usize) -> KvCache; 3] =
        [KvCache::new, |n| KvCache::with_capacity(n, 10), |n| KvCache::fixed(n, 7)];
    for (name, make) in
        ["llama", "mistral", "gemma2", "gemma3"].into_iter().flat_map(|n| caches.map(|c| (n, c)))
    {
        let (_, model) = load(name);
        let lm = model.causal_lm().unwrap();
        let ids = Tensor::from_vec(vec![1i64, 17, 42, 5, 99, 23, 8, 60, 61, 2], [1, 10]).unwrap();
        let full = lm.forward(&ids, None, None, None, false).unwrap().logits;
        let mut cache = make(lm.num_layers());
        let mut parts = vec![
            lm.forward(&ids.narrow(1, 0, 6).unwrap(), None, None, Some(&mut cache), false).unwrap().logits,
        ];
        for t in 6..10 {
            let step = ids.narrow(1, t, 1).unwrap();
            parts.push(lm.forward(&step, None, None, Some(&mut cache), false).unwrap().logits);
        }
        assert_eq!(cache.len(), 10);
        let stitched = Tensor::cat(&parts.iter().collect::<Vec<_>>(), 1).unwrap();
        assert_close(&format!("{name} (fixed: {})", cache.is_fixed()), &stitched, &full, 1e-5, 1e-5);
    }
}

#[test]
fn sampling_is_seeded_and_respects_eos() {
    let (cfg, model) = load("llama");
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::from_vec(vec![1i64, 17, 42], [1, 3]).unwrap();
    let mut g = GenerationConfig::from_model_dir(&fixture("llama"), &cfg).unwrap();
    assert_eq!(g.eos_token_ids, vec![2]);
    g.do_sample = true;
    g.max_new_tokens = 12;
    g.temperature = 0.8;
    g.top_k = 20;
    g.top_p = 0.9;
    g.min_p = 0.05;
    g.repetition_penalty = 1.3;
    g.seed = 7;
    let a = generate(lm, &ids, None, &g, |_, _| {}).unwrap().to_vec::<i64>().unwrap();
    let b = generate(lm, &ids, None, &g, |_, _| {}).unwrap().to_vec::<i64>().unwrap();
    assert_eq!(a, b, "same seed, same tokens");
    g.seed = 8;
    let c = generate(lm, &ids, None, &g, |_, _| {}).unwrap().to_vec::<i64>().unwrap();
    assert_ne!(a, c, "another seed, other tokens");
    // Every token that the greedy run picks first becomes the EOS: generation stops after it.
    let greedy = GenerationConfig { max_new_tokens: 5, ..GenerationConfig::default() };
    let first = generate(lm, &ids, None, &greedy, |_, _| {}).unwrap().to_vec::<i64>().unwrap()[3];
    let stop = GenerationConfig { eos_token_ids: vec![first], ..greedy.clone() };
    assert_eq!(generate(lm, &ids, None, &stop, |_, _| {}).unwrap().dims(), [1, 4]);
    // With min_new_tokens the EOS cannot come first: three new tokens at least, none of them the
    // EOS before the third.
    let at_least = GenerationConfig { min_new_tokens: 3, ..stop };
    let out = generate(lm, &ids, None, &at_least, |_, _| {}).unwrap().to_vec::<i64>().unwrap();
    assert!(out.len() >= 6, "{out:?}");
    assert!(!out[3..5].contains(&first), "{out:?}");
}

#[test]
fn chat_template_renders_as_transformers() {
    use oxtorch_hf_import::{ChatTemplate, Message};
    let dir = fixture("llama_tied");
    let golden: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("chat_expected.json")).unwrap()).unwrap();
    let messages: Vec<Message> = serde_json::from_value(golden["messages"].clone()).unwrap();
    let template = ChatTemplate::from_model_dir(&dir).unwrap().expect("a chat template");
    assert_eq!(template.render(&messages, true).unwrap(), golden["text"].as_str().unwrap());
    let odd = [Message::new("robot", "hi")];
    let err = template.render(&odd, true).unwrap_err().to_string();
    assert!(err.contains("Unknown role: robot"), "{err}");
    assert!(ChatTemplate::from_model_dir(&fixture("llama")).unwrap().is_none());
}

/// The processors that ban tokens give transformers' greedy tokens: `no_repeat_ngram_size` (over
/// the prompt, its left padding included), `bad_words_ids` (one token, and a bigram),
/// `suppress_tokens`, `begin_suppress_tokens`, and `forced_eos_token_id` at the last step with
/// `min_new_tokens` and a repetition penalty (`make_processor_golden.py`).
#[test]
fn token_bans_match_transformers() {
    let (cfg, model) = load("llama");
    let golden = read_all(&fixture("llama").join("generate_processors.safetensors"));
    let ids = |k: &str| golden[k].to_vec::<i64>().unwrap();
    let mut base = GenerationConfig::from_model_dir(&fixture("llama"), &cfg).unwrap();
    base.max_new_tokens = 12;
    base.pad_token_id = Some(0);
    let cases = [
        ("plain", base.clone()),
        ("ngram", GenerationConfig { no_repeat_ngram_size: 2, ..base.clone() }),
        (
            "bans",
            GenerationConfig {
                begin_suppress_tokens: ids("begin_suppress_tokens"),
                suppress_tokens: ids("suppress_tokens"),
                bad_words_ids: vec![ids("bad_words_ids.0"), ids("bad_words_ids.1")],
                ..base.clone()
            },
        ),
        (
            "forced",
            GenerationConfig {
                forced_eos_token_ids: ids("forced_eos_token_id"),
                min_new_tokens: 5,
                repetition_penalty: 1.5,
                ..base.clone()
            },
        ),
    ];
    let lm = model.causal_lm().unwrap();
    let plain = golden["output_ids.plain"].to_vec2::<i64>().unwrap();
    for (case, g) in cases {
        let out = generate(lm, &golden["input_ids"], Some(&golden["attention_mask"]), &g, |_, _| {}).unwrap();
        let want = golden[&format!("output_ids.{case}")].to_vec2::<i64>().unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{case}");
        if case != "plain" {
            assert_ne!(want, plain, "{case} changes the tokens");
        }
    }
}

/// The generation settings `make_fixtures.py` recorded in fixture `name`'s `beam.safetensors`, and
/// its tensors (the prompts and transformers' `output_ids`).
fn beam_settings(name: &str, cfg: &Config) -> (GenerationConfig, BTreeMap<String, Tensor>) {
    use oxtorch_hf_import::generate::EarlyStopping;
    let path = fixture(name).join("beam.safetensors");
    let golden = read_all(&path);
    let mut g = GenerationConfig::from_model_dir(&fixture(name), cfg).unwrap();
    g.pad_token_id = Some(0);
    for (key, value) in common::read_metadata(&path) {
        match key.as_str() {
            "num_beams" => g.num_beams = value.as_u64().unwrap() as usize,
            "num_return_sequences" => g.num_return_sequences = value.as_u64().unwrap() as usize,
            "max_new_tokens" => g.max_new_tokens = value.as_u64().unwrap() as usize,
            "no_repeat_ngram_size" => g.no_repeat_ngram_size = value.as_u64().unwrap() as usize,
            "length_penalty" => g.length_penalty = value.as_f64().unwrap(),
            "repetition_penalty" => g.repetition_penalty = value.as_f64().unwrap(),
            "eos_token_id" => {
                g.eos_token_ids = value.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect()
            }
            "early_stopping" => {
                g.early_stopping = match value {
                    serde_json::Value::Bool(true) => EarlyStopping::WhenFull,
                    serde_json::Value::Bool(false) => EarlyStopping::Heuristic,
                    _ => EarlyStopping::Never,
                }
            }
            other => panic!("{name}: setting {other} not applied by this test"),
        }
    }
    (g, golden)
}

/// Mamba, Falcon-Mamba and Mamba-2 generate from their recurrent state (the prompt with its mask, then a
/// token at a time) as transformers' `generate`: greedy on left-padded prompts, and beam search
/// (the states reordered with the beams; a repetition penalty).
#[test]
fn recurrent_generate_matches_transformers() {
    for name in ["mamba", "mamba_biased", "falcon_mamba", "mamba2", "mamba2_limited"] {
        let (cfg, model) = load(name);
        let AutoModel::Mamba(m) = &model else { panic!("{name} is not a Mamba model") };
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        g.max_new_tokens = 10;
        g.pad_token_id = Some(0);
        let mut streamed = vec![Vec::new(); 2];
        let out =
            generate_recurrent(m, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |r, t| {
                streamed[r].push(t)
            })
            .unwrap();
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name}");
        for (r, row) in want.iter().enumerate() {
            // Streaming ends with a row's EOS; the padding after it is not streamed.
            let new = &row[7..];
            let end = new.iter().position(|t| g.eos_token_ids.contains(t)).map_or(new.len(), |i| i + 1);
            assert_eq!(streamed[r], new[..end].to_vec(), "{name}: streamed tokens of row {r}");
        }
    }
    for name in ["mamba", "falcon_mamba", "mamba2"] {
        let (cfg, model) = load(name);
        let AutoModel::Mamba(m) = &model else { panic!("{name} is not a Mamba model") };
        let (g, golden) = beam_settings(name, &cfg);
        let out =
            generate_recurrent(m, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
                .unwrap();
        assert_eq!(
            out.to_vec2::<i64>().unwrap(),
            golden["output_ids"].to_vec2::<i64>().unwrap(),
            "{name} beams"
        );
    }
}

/// Llama 3.2 Vision's beam search from prompts with images (the beams reorder the cache, the
/// images' keys and values with it) equals transformers' two best of three beams.
#[test]
fn beam_search_with_cross_attention_matches_transformers() {
    let name = "mllama_images";
    let (cfg, model) = load(name);
    let golden = read_all(&fixture(name).join("generate.safetensors"));
    let prompt = ImagePrompt::of(&model, &golden);
    let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
    (g.max_new_tokens, g.num_beams, g.num_return_sequences, g.pad_token_id) = (6, 3, 2, Some(0));
    let mask = Some(&golden["attention_mask"]);
    let images = prompt.images();
    let out =
        generate_with_images(prompt.lm, &golden["input_ids"], mask, images, &g, None, |_, _| {}).unwrap();
    assert_eq!(out.to_vec2::<i64>().unwrap(), golden["beam_ids"].to_vec2::<i64>().unwrap());
    // Sampling each prompt twice repeats its images' states.
    (g.num_beams, g.do_sample, g.seed) = (1, true, 7);
    let out =
        generate_with_images(prompt.lm, &golden["input_ids"], mask, images, &g, None, |_, _| {}).unwrap();
    assert_eq!(out.dims(), [4, golden["input_ids"].dims()[1] + 6]);
    // A cross-attention mask for other prompts than these is an error.
    let shorter = golden["input_ids"].narrow(1, 1, golden["input_ids"].dims()[1] - 1).unwrap();
    let err = generate_with_images(prompt.lm, &shorter, None, images, &g, None, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("the cross-attention mask has 8 rows, the prompts 7 tokens"), "{err}");
    // The prompts alone: the image tokens embedded as their row, the cross-attention layers skipped.
    let AutoModel::VisionLanguage(m) = &model else { panic!("{name} is a vision-language model") };
    let text: BTreeMap<String, Tensor> =
        ["input_ids", "attention_mask"].iter().map(|k| (k.to_string(), golden[*k].clone())).collect();
    let media = m.prompt_media(&text).unwrap().expect("prompts with the image token");
    (g.num_return_sequences, g.do_sample) = (1, false);
    let out =
        generate_with_images(m, &golden["input_ids"], mask, media.as_prompt(), &g, None, |_, _| {}).unwrap();
    assert_eq!(out.to_vec2::<i64>().unwrap(), golden["text_output_ids"].to_vec2::<i64>().unwrap());
}
