//! The generation loop's tests: masks inferred from the pad token, lengths, penalties and bans
//! against transformers, the cache's growth, stop strings, settings checks.

/// Prompts without a mask: padding inferred from a pad token that occurs and is not an EOS
/// (`GenerationConfig::inferred_mask`; transformers' cases in `generate/config.rs`).
#[test]
fn a_missing_mask_is_inferred_from_the_pad_token() {
    let g =
        GenerationConfig { pad_token_id: Some(5), eos_token_ids: vec![17], ..GenerationConfig::default() };
    assert_eq!(g.inferred_mask(&[5, 5, 3, 4]), vec![0, 0, 1, 1]);
    assert_eq!(g.inferred_mask(&[1, 2, 3, 4]), vec![1; 4]);
    let pad_is_eos = GenerationConfig { pad_token_id: Some(17), ..g.clone() };
    assert_eq!(pad_is_eos.inferred_mask(&[17, 2, 3, 4]), vec![1; 4]);
    // A pad token without any EOS token still masks, as transformers (`eos_token_id is None`).
    let no_eos = GenerationConfig { eos_token_ids: Vec::new(), ..g.clone() };
    assert_eq!(no_eos.inferred_mask(&[5, 5, 3, 4]), vec![0, 0, 1, 1]);
    // No pad or EOS configured: token 0 is a token like any other.
    assert_eq!(GenerationConfig::default().inferred_mask(&[0, 2, 3, 4]), vec![1; 4]);
}

/// Left-padded prompts given without a mask generate what they do with the mask inferred from
/// the configured pad token; with the pad token unconfigured (the first EOS token pads) the
/// padding is attended to, as in transformers.
#[test]
fn prompts_without_a_mask_get_the_inferred_one() {
    let (model, g, golden) = load("llama");
    let lm = model.causal_lm().unwrap();
    let ids = golden["input_ids"].to_vec2::<i64>().unwrap();
    let mask = golden["attention_mask"].to_vec2::<i64>().unwrap();
    // The golden prompts with their padding slots holding token 7, the pad token.
    let padded: Vec<i64> = ids
        .iter()
        .zip(&mask)
        .flat_map(|(r, m)| r.iter().zip(m).map(|(&t, &m)| if m == 0 { 7 } else { t }))
        .collect();
    assert!(padded.contains(&7) && !ids.concat().contains(&7), "the fixture's prompts hold no token 7");
    let padded = Tensor::from_vec(padded, golden["input_ids"].dims().to_vec()).unwrap();
    let g = GenerationConfig { max_new_tokens: 6, eos_token_ids: Vec::new(), ..g };
    let run = |g: &GenerationConfig, mask: Option<&Tensor>| {
        generate(lm, &padded, mask, g, |_, _| {}).unwrap().to_vec2::<i64>().unwrap()
    };
    let with_pad = GenerationConfig { pad_token_id: Some(7), ..g.clone() };
    assert_eq!(run(&with_pad, None), run(&with_pad, Some(&golden["attention_mask"])));
    let pad_is_eos = GenerationConfig { eos_token_ids: vec![7], ..with_pad };
    let ones = Tensor::ones_like(&golden["attention_mask"]).unwrap();
    assert_eq!(run(&pad_is_eos, None), run(&pad_is_eos, Some(&ones)));
}

/// `max_length` from `generation_config.json` counts the prompt; `max_new_tokens` wins over it.
#[test]
fn max_length_counts_the_prompt() {
    let dir = std::env::temp_dir().join(format!("oxtorch-maxlen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"model_type": "llama", "eos_token_id": 2}"#).unwrap();
    std::fs::write(dir.join("generation_config.json"), r#"{"max_length": 12}"#).unwrap();
    let cfg = Config::load(&dir).unwrap();
    let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
    assert_eq!(g.max_length, Some(12));
    let mut too_long = g.clone();
    let err = too_long.resolve_length(12).unwrap_err().to_string();
    assert!(err.contains("Input length of input_ids is 12, but `max_length` is set to 12"), "{err}");
    g.resolve_length(5).unwrap();
    assert_eq!((g.max_length, g.max_new_tokens), (None, 7));
    std::fs::write(dir.join("generation_config.json"), r#"{"max_length": 12, "max_new_tokens": 3}"#).unwrap();
    let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
    assert_eq!((g.max_length, g.max_new_tokens), (None, 3));
    std::fs::remove_dir_all(&dir).ok();
}

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::config::Config;
use crate::models::AutoModel;
use crate::weights::{read_safetensors, Weights};

/// Decoder fixture `name` of `tests/fixtures` in float32, its generation settings and its
/// `generate.safetensors` (transformers' greedy `generate` on a left-padded batch).
fn load(name: &str) -> (AutoModel, GenerationConfig, BTreeMap<String, Tensor>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join(name);
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, Some(DType::F32)).unwrap()).unwrap();
    let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
    let mut golden = BTreeMap::new();
    read_safetensors(&dir.join("generate.safetensors"), |n, t| {
        golden.insert(n, t);
        Ok(())
    })
    .unwrap();
    (model, g, golden)
}

/// The repetition penalty applies once per distinct token (a token seen three times is not
/// penalised three times), as transformers' gather/scatter; top-k keeps ties with the k-th.
#[test]
fn penalties_and_filters_follow_transformers() {
    let g = GenerationConfig { repetition_penalty: 2.0, do_sample: false, ..GenerationConfig::default() };
    let mut rng = Rng(0);
    // Token 0 (logit 4, seen 3 times) is penalised once to 2, still above token 1 (1.5).
    let mut logits = vec![4.0f32, 1.5, -1.0];
    process(&mut logits, &[0, 0, 0], 0, 0, &g, &[]);
    assert_eq!(pick(&mut logits, &g, &mut rng), 0);
    assert_eq!(logits, vec![2.0, 1.5, -1.0]);
    let mut logits = vec![-1.0f32, -1.5, -3.0];
    process(&mut logits, &[0, 0], 0, 0, &g, &[]);
    assert_eq!(logits[0], -2.0);
    // top_k = 1 with a tie at the top: both tied tokens stay candidates.
    let g = GenerationConfig { top_k: 1, do_sample: true, temperature: 1.0, ..GenerationConfig::default() };
    let picks: std::collections::BTreeSet<i64> =
        (0..64).map(|_| pick(&mut [1.0f32, 3.0, 3.0, 0.0], &g, &mut rng)).collect();
    assert_eq!(picks, [1, 2].into_iter().collect());
}

#[test]
fn the_cache_is_first_allocated_for_the_first_new_tokens() {
    assert_eq!(first_capacity(7, 10, FIRST_NEW_SLOTS).unwrap(), 17);
    assert_eq!(first_capacity(7, 1 << 40, FIRST_NEW_SLOTS).unwrap(), 7 + FIRST_NEW_SLOTS);
    let err = first_capacity(7, usize::MAX, FIRST_NEW_SLOTS).unwrap_err().to_string();
    assert!(err.contains(&format!("max_new_tokens ({}) is too large", usize::MAX)), "{err}");
}

/// A cache first allocated for 2 new tokens grows several times (and the padded batch's mask
/// with it) on both kinds of cache, through sliding windows and Phi-3's recomputed cache, and
/// gives the tokens of a cache allocated for all of them; the first ones are transformers'.
#[test]
fn a_growing_cache_gives_the_tokens_of_one_allocated_up_front() {
    for name in ["llama", "gemma3", "phi3_longrope"] {
        let (model, g, golden) = load(name);
        let lm = model.causal_lm().unwrap();
        let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        for cache in [CacheImplementation::Dynamic, CacheImplementation::Static] {
            let g = GenerationConfig {
                max_new_tokens: 40,
                pad_token_id: Some(0),
                cache_implementation: cache,
                ..g.clone()
            };
            let run = |g: &GenerationConfig, first: usize| {
                generate_with(lm, ids, mask, g, None, None, first, |_, _| {})
                    .unwrap()
                    .to_vec2::<i64>()
                    .unwrap()
            };
            let grown = run(&g, 2);
            for (row, want) in grown.iter().zip(&want) {
                assert_eq!(&row[..want.len()], &want[..], "{name} ({cache:?} cache) vs transformers");
            }
            // Without EOS tokens every row runs all 40 steps.
            let endless = GenerationConfig { eos_token_ids: Vec::new(), ..g.clone() };
            let grown = run(&endless, 2);
            assert_eq!(grown[0].len(), ids.dims()[1] + 40);
            assert_eq!(grown, run(&endless, 40), "{name} ({cache:?} cache)");
        }
    }
}

/// A row ends at the token that completes a stop string (kept), the others go on; without the
/// tokenizer, stop strings are transformers' error. As in transformers, a finished row is padded
/// only when EOS tokens are configured: without them it goes on with its own tokens, and the
/// batch stops once every row has finished.
#[test]
fn rows_end_where_a_stop_string_is_completed() {
    let (model, g, golden) = load("llama");
    let lm = model.causal_lm().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers");
    let dir = std::env::temp_dir().join(format!("oxtorch-stop-generate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixtures.join("bpe_byte_level.json"), dir.join("tokenizer.json")).unwrap();
    let tok = HfTokenizer::load(&dir, None).unwrap();
    let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
    let endless =
        GenerationConfig { eos_token_ids: Vec::new(), max_new_tokens: 12, pad_token_id: Some(0), ..g };
    let all = generate(lm, ids, mask, &endless, |_, _| {}).unwrap().to_vec2::<i64>().unwrap();
    let width = ids.dims()[1];
    // The text of the first row's sixth new token, as a stop string.
    let text = tok.decode(&[all[0][width + 5] as u32], false).unwrap();
    let g = GenerationConfig { stop_strings: vec![text.clone()], ..endless.clone() };
    let err = generate(lm, ids, mask, &g, |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("could not locate a tokenizer"), "{err}");
    let mut stop = StopStrings::new(&tok, &g.stop_strings).unwrap().unwrap();
    // Where each row of the unstopped run completes the stop string (its length then).
    let mut ends = Vec::new();
    for full in &all {
        let end = (width..full.len()).find(|&n| stop.matches(&full[..=n]));
        ends.push(end.map_or(full.len(), |n| n + 1));
    }
    assert!(ends[0] <= width + 6, "the first row stops by its sixth new token: {ends:?}");
    let last = *ends.iter().max().unwrap();
    // Without EOS tokens nothing is padded: every row runs until the last one has finished.
    let out = generate_with_tokenizer(lm, ids, mask, &g, &tok, |_, _| {}).unwrap().to_vec2::<i64>().unwrap();
    let cut: Vec<Vec<i64>> = all.iter().map(|row| row[..last].to_vec()).collect();
    assert_eq!(out, cut, "{text:?}");
    // With an EOS token (one the run never generates), a finished row is padded.
    let unused = (3..100).find(|t| !all.concat().contains(t)).unwrap();
    let with_eos = GenerationConfig { eos_token_ids: vec![unused], ..g.clone() };
    let out =
        generate_with_tokenizer(lm, ids, mask, &with_eos, &tok, |_, _| {}).unwrap().to_vec2::<i64>().unwrap();
    for (row, (full, &end)) in out.iter().zip(all.iter().zip(&ends)) {
        assert_eq!(row.len(), last, "{row:?}");
        assert_eq!(row[..end], full[..end], "{text:?}");
        assert!(row[end..].iter().all(|&t| t == 0), "padded after the stop: {row:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Batched greedy generation with stop strings, with and without EOS and pad tokens, gives
/// transformers' `output_ids` (`tests/make_stop_generate_golden.py`): a finished row is padded
/// (with the pad token, else the first EOS token) only when an EOS token is configured, else it
/// keeps its own tokens; the batch stops once every row has finished either way.
#[test]
fn batched_stop_strings_pad_rows_as_transformers() {
    let (model, g, _) = load("llama");
    let lm = model.causal_lm().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = std::env::temp_dir().join(format!("oxtorch-stop-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixtures.join("tokenizers/bpe_byte_level.json"), dir.join("tokenizer.json")).unwrap();
    let tok = HfTokenizer::load(&dir, None).unwrap();
    let golden: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("stop_strings_generate.json")).unwrap())
            .unwrap();
    let rows_of = |v: &serde_json::Value| -> Vec<Vec<i64>> { serde_json::from_value(v.clone()).unwrap() };
    let tensor = |rows: Vec<Vec<i64>>| {
        let dims = [rows.len(), rows[0].len()];
        Tensor::from_vec(rows.concat(), dims).unwrap()
    };
    let ids = tensor(rows_of(&golden["input_ids"]));
    let mask = tensor(rows_of(&golden["attention_mask"]));
    let max_new_tokens = usize::try_from(golden["max_new_tokens"].as_u64().unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let stop_strings: Vec<String> = serde_json::from_value(case["stop_strings"].clone()).unwrap();
        let eos: Option<Vec<i64>> = serde_json::from_value(case["eos_token_id"].clone()).unwrap();
        let pad_token_id: Option<i64> = serde_json::from_value(case["pad_token_id"].clone()).unwrap();
        let g = GenerationConfig {
            max_new_tokens,
            stop_strings,
            eos_token_ids: eos.unwrap_or_default(),
            pad_token_id,
            do_sample: false,
            ..g.clone()
        };
        let out = generate_with_tokenizer(lm, &ids, Some(&mask), &g, &tok, |_, _| {})
            .unwrap()
            .to_vec2::<i64>()
            .unwrap();
        assert_eq!(out, rows_of(&case["output_ids"]), "{case}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A KV cache the machine cannot hold is an error from the forward that would allocate it, not
/// the allocator's panic.
#[test]
fn a_cache_no_memory_holds_is_an_error() {
    let (model, _, _) = load("llama");
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::from_vec(vec![1i64, 17, 42], [1, 3]).unwrap();
    let mut cache = KvCache::with_capacity(lm.num_layers(), 1 << 50);
    let err = lm.forward(&ids, None, None, Some(&mut cache), false).unwrap_err().to_string();
    assert!(err.contains("a KV cache of 1125899906842624 positions cannot be allocated"), "{err}");
    // The model is unharmed: a cache that fits works.
    let mut cache = KvCache::with_capacity(lm.num_layers(), 8);
    lm.forward(&ids, None, None, Some(&mut cache), false).unwrap();
    assert_eq!(cache.len(), 3);
}

/// Sizes a config asks for that the checkpoint does not hold (a vocabulary of 10^12 or 2^64 - 1
/// tokens, a hidden size of 10^15) are a weight error before anything of their size is
/// allocated.
#[test]
fn absurd_config_sizes_are_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("llama");
    let text = std::fs::read_to_string(dir.join("config.json")).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    for (from, to, needle) in [
        (
            "\"vocab_size\": 100",
            "\"vocab_size\": 1000000000000",
            "tensor 'model.embed_tokens.weight' has shape [100, 32] in the checkpoint, but the config implies [1000000000000, 32]",
        ),
        (
            "\"vocab_size\": 100",
            "\"vocab_size\": 18446744073709551615",
            "tensor 'model.embed_tokens.weight' has shape [100, 32] in the checkpoint",
        ),
        (
            "\"hidden_size\": 32",
            "\"hidden_size\": 1000000000000000",
            "tensor 'model.embed_tokens.weight' has shape [100, 32] in the checkpoint",
        ),
    ] {
        assert!(text.contains(from));
        let cfg = Config::from_json_str(&text.replace(from, to)).unwrap();
        let err = AutoModel::load(&cfg, &weights).unwrap_err().to_string();
        assert!(err.contains(needle), "{to}: {err}");
    }
}

#[test]
fn huge_or_zero_max_new_tokens() {
    let (model, _, _) = load("llama");
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::from_vec(vec![1i64, 17, 42], [1, 3]).unwrap();
    let g = |max_new_tokens: usize| GenerationConfig { max_new_tokens, ..Default::default() };
    let out = generate(lm, &ids, None, &g(0), |_, _| panic!("no token")).unwrap();
    assert_eq!(out.to_vec2::<i64>().unwrap(), vec![vec![1i64, 17, 42]], "the prompt back");
    let err = generate(lm, &ids, None, &g(usize::MAX), |_, _| {}).unwrap_err().to_string();
    let want = "is too large: with the prompt's 3 tokens, the sequence length overflows";
    assert!(err.contains(want), "{err}");
    // A huge budget that an EOS token ends at once allocates nothing for the rest (every token of
    // the vocabulary of 100 is an EOS).
    let stop = GenerationConfig { eos_token_ids: (0..100).collect(), ..g(usize::MAX / 2) };
    assert_eq!(generate(lm, &ids, None, &stop, |_, _| {}).unwrap().dims(), [1, 4]);
}

/// `generation_config.json` holding `json`, read with an empty model config.
fn read(json: &str) -> Result<GenerationConfig> {
    let dir = std::env::temp_dir().join(format!("oxtorch-genconfig-{}-{}", std::process::id(), json.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("generation_config.json"), json).unwrap();
    let g = GenerationConfig::from_model_dir(&dir, &Config::from_json_str("{}").unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    g
}

#[test]
fn generation_config_values_of_the_wrong_type_are_errors() {
    let g = read(r#"{"do_sample": true, "temperature": 0.7, "top_k": 5, "eos_token_id": [2, 3]}"#).unwrap();
    assert!(g.do_sample);
    assert_eq!(
        (g.temperature, g.top_k, g.eos_token_ids.clone(), g.pad_token_id, g.pad_token()),
        (0.7, 5, vec![2, 3], None, 2)
    );
    assert_eq!(read(r#"{"stop_strings": "<end>"}"#).unwrap().stop_strings, ["<end>"]);
    assert_eq!(read(r#"{"stop_strings": ["a", "b"]}"#).unwrap().stop_strings, ["a", "b"]);
    let empty = read(r#"{"stop_strings": [""]}"#).unwrap();
    assert!(empty.validate().unwrap_err().to_string().contains("empty string"));
    for (json, needle) in [
        (r#"{"eos_token_id": "x"}"#, r#""eos_token_id" must be a token id or a list of token ids, got "x""#),
        (r#"{"eos_token_id": [2, 1.5]}"#, "\"eos_token_id\" must be a token id"),
        (r#"{"pad_token_id": true}"#, "\"pad_token_id\" must be a token id"),
        (r#"{"temperature": "hot"}"#, r#""temperature" must be a number, got "hot""#),
        (r#"{"do_sample": "yes"}"#, r#""do_sample" must be a boolean"#),
        (r#"{"top_k": -1}"#, r#""top_k" must be a non-negative integer, got -1"#),
        (r#"{"stop_strings": ["a", 1]}"#, r#""stop_strings" must be a string or a list of strings"#),
    ] {
        let e = read(json).unwrap_err().to_string();
        assert!(e.contains("generation_config.json") && e.contains(needle), "{json}: {e}");
    }
}

#[test]
fn settings_are_validated_as_transformers_does() {
    let ok =
        GenerationConfig { do_sample: true, temperature: 0.5, top_p: 0.9, min_p: 0.1, ..Default::default() };
    assert!(ok.validate().is_ok());
    // Greedy decoding does not read the sampling settings.
    assert!(GenerationConfig { temperature: 0.0, top_p: 7.0, ..Default::default() }.validate().is_ok());
    for (g, needle) in [
        (
            GenerationConfig { temperature: 0.0, ..ok.clone() },
            "`temperature` (=0) has to be a strictly positive float",
        ),
        (GenerationConfig { temperature: f64::NAN, ..ok.clone() }, "`temperature`"),
        (
            GenerationConfig { top_p: 1.5, ..ok.clone() },
            "`top_p` has to be a float in the [0, 1] interval, but is 1.5",
        ),
        (GenerationConfig { min_p: -2.0, ..ok.clone() }, "`min_p` has to be a float in the [0, 1] interval"),
        (
            GenerationConfig { repetition_penalty: 0.0, do_sample: false, ..ok.clone() },
            "`repetition_penalty` has to be a strictly positive float, but is 0",
        ),
        (
            GenerationConfig { num_beams: 3, ..ok.clone() },
            "num_beams = 3 with do_sample asks for beam sampling",
        ),
    ] {
        let e = g.validate().unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
}
