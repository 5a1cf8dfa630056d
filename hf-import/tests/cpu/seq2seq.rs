//! The encoder-decoder models against transformers (`make_seq2seq_fixtures.py`): T5's, mT5's, BART's
//! and mBART's
//! `logits` (or the decoder's `last_hidden_state`), `encoder_last_hidden_state` and every encoder
//! and decoder hidden state at atol = rtol = 1e-4 (f32), and the errors their inputs get.

use std::collections::BTreeMap;

use crate::common;

use common::{check, fixture};
use oxtorch_hf_import::{generate_seq2seq, AutoModel, Config, GenerationConfig, Weights};
use oxtorch_tensor::{DType, Tensor};

#[test]
fn t5_relu_tied_head_scaled_outputs() {
    check("t5");
}

#[test]
fn t5_v1_1_gated_gelu_own_lm_head_narrow_heads() {
    check("t5_v11");
}

#[test]
fn t5_encoder_model_gated_silu() {
    check("t5_encoder");
}

#[test]
fn mt5_model_with_a_deeper_decoder() {
    check("mt5");
}

/// UMT5: each block's own relative-position bias table (its own LM head, no output scaling; an
/// encoder alone with ReLU).
#[test]
fn umt5_bias_table_per_block() {
    check("umt5");
    check("umt5_encoder");
}

/// `T5ForTokenClassification`: a `T5EncoderModel` under `transformer.`, `classifier` on each state.
#[test]
fn t5_token_classifier() {
    check("t5_tok");
}

/// `T5ForQuestionAnswering`: the decoder on the sources shifted right, `start_logits` and
/// `end_logits` on its states.
#[test]
fn t5_question_answering() {
    check("t5_qa");
}

/// `T5ForSequenceClassification`: its `T5Model` under `transformer.`, the decoder on the sources
/// shifted right, the classification head at each row's last EOS; rows with different numbers of
/// EOS tokens are an error, as in transformers.
#[test]
fn t5_sequence_classifier_reads_the_last_eos() {
    check("t5_cls");
    let dir = fixture("t5_cls");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let ids = Tensor::from_vec(vec![5i64, 1, 7, 1, 5, 6, 7, 1], [2, 4]).unwrap();
    let inputs = std::collections::BTreeMap::from([("input_ids".to_string(), ids)]);
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("all examples must have the same number of <eos> tokens (id 1): [2, 1]"), "{err}");
}

/// T5's inputs get errors naming the problem: no `decoder_input_ids` for the decoder, float ids, a
/// mask that does not fit its ids, an input the model does not take.
#[test]
fn t5_bad_inputs_get_clear_errors() {
    let dir = fixture("t5");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    assert_eq!(
        model.input_names(),
        ["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask"]
    );
    let run = |inputs: Vec<(&str, Tensor)>| {
        let named: BTreeMap<String, Tensor> = inputs.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
        model.forward_named(&named, false).map(|_| ()).unwrap_err().to_string()
    };
    let ids = || Tensor::ones([2, 4], DType::I64).unwrap();
    let err = run(vec![("input_ids", ids())]);
    assert!(err.contains("missing input 'decoder_input_ids'"), "{err}");
    let err =
        run(vec![("input_ids", ids()), ("decoder_input_ids", Tensor::ones([2, 3], DType::F32).unwrap())]);
    assert!(err.contains("input 'decoder_input_ids' must be an integer tensor"), "{err}");
    let err = run(vec![
        ("input_ids", ids()),
        ("decoder_input_ids", ids()),
        ("decoder_attention_mask", Tensor::ones([2, 3], DType::I64).unwrap()),
    ]);
    assert!(err.contains("'decoder_attention_mask' has shape [2, 3]") && err.contains("[2, 4]"), "{err}");
    let err = run(vec![("input_ids", ids()), ("decoder_input_ids", ids()), ("pixel_values", ids())]);
    assert!(err.contains("unexpected input 'pixel_values'"), "{err}");
    let err = run(vec![
        ("input_ids", ids()),
        ("decoder_input_ids", Tensor::full([2, 2], 100.0, DType::I64).unwrap()),
    ]);
    assert!(err.contains("id 100 is out of range"), "{err}");
    let err = run(vec![("decoder_input_ids", ids())]);
    assert!(err.contains("missing input 'input_ids'"), "{err}");
}

/// Buckets that leave no log-spaced ones work on the sequences the exact ones cover and give an
/// error on longer ones (transformers fails to index its table there); a `feed_forward_proj`
/// transformers refuses is refused when loading.
#[test]
fn t5_config_errors() {
    let dir = fixture("t5");
    let weights = Weights::load(&dir, None).unwrap();
    let mut json = Config::load(&dir).unwrap().json().clone();
    json.insert("relative_attention_max_distance".into(), 2.into());
    let model = AutoModel::load(&Config::from_map(json.clone()), &weights).unwrap();
    // 8 buckets: distances 0 and 1 exact on each side; 2 would need the log-spaced ones.
    let short = BTreeMap::from([("input_ids".to_string(), Tensor::ones([1, 2], DType::I64).unwrap())]);
    model.last_hidden_state(&short["input_ids"], None, None).unwrap();
    let err = model
        .last_hidden_state(&Tensor::ones([1, 4], DType::I64).unwrap(), None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("relative_attention_max_distance (2)") && err.contains("transformers"), "{err}");
    json.insert("relative_attention_max_distance".into(), 10.into());
    json.insert("feed_forward_proj".into(), "gated-gelu-x".into());
    let err = AutoModel::load(&Config::from_map(json), &weights).unwrap_err().to_string();
    assert!(err.contains("feed_forward_proj \"gated-gelu-x\""), "{err}");
}

/// transformers 4.x configs have no `scale_decoder_outputs`: T5 v1.1 and Flan-T5 say
/// `tie_word_embeddings: false` (no scaling), original T5 nothing (scaling).
#[test]
fn t5_output_scaling_from_4x_configs() {
    for (name, tie) in [("t5_v11", Some(false)), ("t5", None)] {
        let dir = fixture(name);
        let mut json = Config::load(&dir).unwrap().json().clone();
        json.remove("scale_decoder_outputs");
        json.remove("tie_word_embeddings");
        if let Some(tie) = tie {
            json.insert("tie_word_embeddings".into(), tie.into());
        }
        common::check_with(name, &Config::from_map(json), &Weights::load(&dir, Some(DType::F32)).unwrap());
    }
}

/// Greedy generation equals transformers' `generate` token for token (sources right-padded), the
/// streamed tokens are the new ones up to each row's EOS, and the CLI writes the same ids.
#[test]
fn t5_greedy_generate_matches_transformers() {
    for name in ["t5", "t5_v11", "umt5"] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
        let AutoModel::T5(t5) = &model else { panic!("{name}: not T5") };
        let golden = common::read_all(&dir.join("generate.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        g.max_new_tokens = 8;
        let mut streamed = vec![Vec::new(); 2];
        let out =
            generate_seq2seq(t5, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |r, t| {
                streamed[r].push(t)
            })
            .unwrap();
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name}");
        for (r, row) in want.iter().enumerate() {
            let end =
                row.iter().skip(1).position(|&t| g.eos_token_ids.contains(&t)).map_or(row.len(), |i| i + 2);
            assert_eq!(streamed[r], row[1..end], "{name} row {r} streamed");
        }
    }
}

#[test]
fn bart_post_norm_with_final_logits_bias() {
    check("bart");
}

/// Without `decoder_input_ids` BART's decoder reads `input_ids` shifted right behind the start token
/// and mBART's behind each row's last token, as transformers does.
#[test]
fn bart_and_mbart_shift_input_ids_without_decoder_inputs() {
    check("bart_base");
    check("mbart");
}

/// Greedy generation equals transformers' (`no_repeat_ngram_size` and the forced EOS at the last
/// token for BART; mBART's forced first token and repetition penalty), all from the fixtures'
/// generation_config.json.
#[test]
fn bart_and_mbart_greedy_generate_match_transformers() {
    for name in ["bart", "mbart"] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
        let AutoModel::Bart(bart) = &model else { panic!("{name}: not BART") };
        let golden = common::read_all(&dir.join("generate.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        g.max_new_tokens = 8;
        let out = generate_seq2seq(
            bart,
            &golden["input_ids"],
            Some(&golden["attention_mask"]),
            &g,
            None,
            |_, _| {},
        )
        .unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
    }
}

/// Whisper's convolutions over the mel features, stored encoder positions, pre-norm blocks without
/// a `k_proj` bias, and its decoder: both heads against transformers.
#[test]
fn whisper_generation_model_and_base_model() {
    check("whisper");
    check("whisper_base");
}

/// Whisper's inputs get errors naming the problem: features of the wrong length (transformers
/// requires twice `max_source_positions` frames) or bin count, ids, a missing decoder input.
#[test]
fn whisper_bad_inputs_get_clear_errors() {
    let dir = fixture("whisper");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    assert_eq!(model.input_names(), ["input_features", "decoder_input_ids", "decoder_attention_mask"]);
    let run = |inputs: Vec<(&str, Tensor)>| {
        let named: BTreeMap<String, Tensor> = inputs.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
        model.forward_named(&named, false).map(|_| ()).unwrap_err().to_string()
    };
    let ids = || Tensor::ones([1, 3], DType::I64).unwrap();
    let err = run(vec![
        ("input_features", Tensor::zeros([1, 8, 10], DType::F32).unwrap()),
        ("decoder_input_ids", ids()),
    ]);
    assert!(err.contains("mel input features to be of length 12, but found 10"), "{err}");
    let err = run(vec![
        ("input_features", Tensor::zeros([1, 80, 12], DType::F32).unwrap()),
        ("decoder_input_ids", ids()),
    ]);
    assert!(err.contains("80 mel bins") && err.contains("num_mel_bins is 8"), "{err}");
    let err = run(vec![
        ("input_features", Tensor::zeros([1, 8, 12], DType::I64).unwrap()),
        ("decoder_input_ids", ids()),
    ]);
    assert!(err.contains("must be a floating-point tensor"), "{err}");
    let err = run(vec![("input_features", Tensor::zeros([1, 8, 12], DType::F32).unwrap())]);
    assert!(err.contains("missing input 'decoder_input_ids'"), "{err}");
    let err = run(vec![("input_ids", ids())]);
    assert!(err.contains("unexpected input 'input_ids'"), "{err}");
    let err = run(vec![
        ("input_features", Tensor::zeros([2, 8, 12], DType::F32).unwrap()),
        ("decoder_input_ids", ids()),
    ]);
    assert!(err.contains("has 1 rows, but input_features has 2"), "{err}");
    let err = model.last_hidden_state(&ids(), None, None).unwrap_err().to_string();
    assert!(err.contains("speech model") && err.contains("input_features"), "{err}");
}

/// BART's sequence classifier (bart-large-mnli's head) reads the decoder's state at each row's last
/// EOS; rows with different EOS counts, or none, are an error as in transformers.
#[test]
fn bart_for_sequence_classification_at_the_last_eos() {
    check("bart_cls");
    let dir = fixture("bart_cls");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let run = |rows: Vec<i64>| {
        let ids = Tensor::from_vec(rows, [2, 4]).unwrap();
        let named = BTreeMap::from([("input_ids".to_string(), ids)]);
        model.forward_named(&named, false).map(|_| ()).unwrap_err().to_string()
    };
    let err = run(vec![0, 5, 2, 2, 0, 5, 6, 2]);
    assert!(err.contains("same number of <eos> tokens") && err.contains("[2, 1]"), "{err}");
    let err = run(vec![0, 5, 6, 7, 0, 5, 6, 7]);
    assert!(err.contains("at least one <eos>"), "{err}");
}

/// Beam search equals transformers' `generate(num_beams=...)` token for token: plain (T5), with a
/// length penalty and early stopping (T5 v1.1, BART with its n-gram ban), and `early_stopping =
/// "never"` with mBART's forced first token and repetition penalty.
#[test]
fn beam_search_matches_transformers() {
    use oxtorch_hf_import::generate::EarlyStopping;
    let cases = [
        ("t5", 3, 1.0, EarlyStopping::Heuristic),
        ("t5_v11", 4, 0.6, EarlyStopping::WhenFull),
        ("bart", 4, 2.0, EarlyStopping::WhenFull),
        ("mbart", 2, 0.5, EarlyStopping::Never),
        ("marian", 4, 1.0, EarlyStopping::Heuristic),
        ("m2m_100", 3, 1.5, EarlyStopping::Heuristic),
    ];
    for (name, beams, length_penalty, early_stopping) in cases {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
        let golden = common::read_all(&dir.join("beam.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        g.max_new_tokens = 10;
        g.num_beams = beams;
        g.length_penalty = length_penalty;
        g.early_stopping = early_stopping;
        // (BART's golden keeps its two best hypotheses per source.)
        if let Some(n) = common::read_metadata(&dir.join("beam.safetensors")).get("num_return_sequences") {
            g.num_return_sequences = n.as_u64().unwrap() as usize;
        }
        let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
        let out = match &model {
            AutoModel::T5(m) => generate_seq2seq(m, ids, mask, &g, None, |_, _| {}),
            AutoModel::Bart(m) => generate_seq2seq(m, ids, mask, &g, None, |_, _| {}),
            _ => panic!("{name}: not an encoder-decoder"),
        }
        .unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
    }
}

/// Marian (OPUS-MT): sinusoidal positions rebuilt as transformers does (not saved), swish, scaled
/// embeddings; one with its own decoder vocabulary and table, one with its tokenizer folder
/// (`opus_mt`, the CLI's translation test). Pegasus: pre-norm with final norms over stored
/// sinusoidal positions.
#[test]
fn marian_and_pegasus() {
    check("marian");
    check("marian_split");
    check("opus_mt");
    check("pegasus");
}

/// M2M100 (NLLB-200): fairseq's sinusoidal positions, counted from the non-padding tokens (the base
/// model's sources padded on the left and inside, its decoder inputs inside and on the right), of an
/// odd width in the base model (the sinusoids' zero column); one with its tokenizer folder
/// (`m2m_100_spm`, the CLI's translation test).
#[test]
fn m2m_100_positions_from_the_non_padding_tokens() {
    check("m2m_100");
    check("m2m_100_base");
    check("m2m_100_spm");
}

/// M2M100's greedy generation, forced to a target-language token as NLLB is run
/// (`forced_bos_token_id` in the fixture's generation_config.json), equals transformers'.
#[test]
fn m2m_100_greedy_generate_matches_transformers() {
    let dir = fixture("m2m_100");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let AutoModel::Bart(m2m) = &model else { panic!("m2m_100: not BART-like") };
    let golden = common::read_all(&dir.join("generate.safetensors"));
    let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
    assert_eq!(g.forced_bos_token_id, Some(7));
    g.max_new_tokens = 8;
    let out =
        generate_seq2seq(m2m, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
            .unwrap();
    assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap());
}

/// PLBart (BART's layout, scaled embeddings, mBART's shift of `input_ids` as the decoder's input,
/// the classifier at the last eos), Blenderbot (pre-norm, positions from row 0) and
/// BlenderbotSmall (its decoder's embedding norm before the positions are added).
#[test]
fn plbart_and_blenderbot() {
    for name in ["plbart", "plbart_cls", "blenderbot", "blenderbot_small"] {
        check(name);
    }
}

/// Greedy generation of PLBart, Blenderbot (its config's `encoder_no_repeat_ngram_size`: no n-gram
/// of the source repeated) and BlenderbotSmall equals transformers'.
#[test]
fn plbart_and_blenderbot_greedy_generate_match_transformers() {
    for name in ["plbart", "blenderbot", "blenderbot_small"] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
        let AutoModel::Bart(m) = &model else { panic!("{name}: not BART-like") };
        let golden = common::read_all(&dir.join("generate.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        g.max_new_tokens = 8;
        let out =
            generate_seq2seq(m, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
                .unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
    }
}

/// `encoder_no_repeat_ngram_size` (Blenderbot's generation default): no n-gram of the source is
/// completed, greedy (sizes 1 and 2) and under beam search, as transformers'
/// `EncoderNoRepeatNGramLogitsProcessor`.
#[test]
fn encoder_ngrams_are_not_repeated_as_in_transformers() {
    let dir = fixture("blenderbot");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let AutoModel::Bart(m) = &model else { panic!("blenderbot: not BART-like") };
    let path = dir.join("encoder_ngram.safetensors");
    let golden = common::read_all(&path);
    for (case, settings) in common::read_metadata(&path) {
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        assert_eq!(g.encoder_no_repeat_ngram_size, 3, "the config's");
        g.max_new_tokens = 8;
        g.encoder_no_repeat_ngram_size = settings["encoder_no_repeat_ngram_size"].as_u64().unwrap() as usize;
        g.num_beams = settings["num_beams"].as_u64().unwrap_or(1) as usize;
        let out =
            generate_seq2seq(m, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
                .unwrap();
        let want = golden[&format!("output_ids.{case}")].to_vec2::<i64>().unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{case}");
    }
}

/// NLLB-200 end to end (`make_seq2seq_fixtures.py nllb`): the prompt framed with its source language
/// as transformers' `NllbTokenizer` frames it, and the translation into a target language forced as
/// the first new token, token for token as transformers' `generate`.
#[test]
fn nllb_translation_matches_transformers() {
    use oxtorch_hf_import::HfTokenizer;
    let dir = fixture("nllb");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let AutoModel::Bart(m2m) = &model else { panic!("nllb: not BART-like") };
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("translate.json")).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let mut tok = HfTokenizer::load(&dir, None).unwrap();
        if let Some(source) = case["src_lang"].as_str() {
            tok.set_source_language(source).unwrap();
        }
        let ids: Vec<i64> =
            tok.encode(case["prompt"].as_str().unwrap(), true).unwrap().into_iter().map(i64::from).collect();
        let want: Vec<i64> = serde_json::from_value(case["input_ids"].clone()).unwrap();
        assert_eq!(ids, want, "{case}");
        let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        g.max_new_tokens = 8;
        g.forced_bos_token_id = tok.token_to_id(case["tgt_lang"].as_str().unwrap()).map(i64::from);
        let n = ids.len();
        let out = generate_seq2seq(m2m, &Tensor::from_vec(ids, [1, n]).unwrap(), None, &g, None, |_, _| {})
            .unwrap();
        let want: Vec<i64> = serde_json::from_value(case["output_ids"].clone()).unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), [want], "{case}");
    }
    let mut tok = HfTokenizer::load(&dir, None).unwrap();
    let err = tok.set_source_language("xx_Latn").unwrap_err().to_string();
    assert!(err.contains("\"xx_Latn\" is not a token"), "{err}");
}

/// Whisper's generation equals transformers' `generate` on each recorded case: the language
/// detected per row from the audio (the older `forced_decoder_ids` leaving it open), given as a
/// name with a task, as a code (the task defaulting to transcribe), as a token; `max_length`
/// counting the prompt tokens or `max_new_tokens`; suppressed tokens; EOS and padding stripped as
/// transformers strips them (pad = EOS, and a pad token of its own); beam search (with a given and
/// a detected language); an English-only checkpoint.
#[test]
fn whisper_generation_matches_transformers() {
    use oxtorch_hf_import::generate::{generate_whisper, WhisperPrompt};
    let cases = [
        ("whisper_gen", ["detect", "french_translate", "de", "max_new", "beams", "beams_detect"].as_slice()),
        ("whisper_en", ["plain", "max_new"].as_slice()),
    ];
    for (name, files) in cases {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
        let AutoModel::Whisper(whisper) = &model else { panic!("{name}: not Whisper") };
        for case in files {
            let path = dir.join(format!("generate_{case}.safetensors"));
            let golden = common::read_all(&path);
            let mut prompt = WhisperPrompt::from_model_dir(&dir, &cfg).unwrap();
            let mut g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
            for (key, value) in common::read_metadata(&path) {
                match key.as_str() {
                    "language" => prompt.language = value.as_str().map(str::to_string),
                    "task" => prompt.task = value.as_str().map(str::to_string),
                    "max_new_tokens" => {
                        g.max_new_tokens = value.as_u64().unwrap() as usize;
                        g.max_length = None;
                    }
                    "num_beams" => g.num_beams = value.as_u64().unwrap() as usize,
                    other => panic!("{name}/{case}: setting {other} not applied by this test"),
                }
            }
            let mut streamed = vec![Vec::new(); 2];
            let out =
                generate_whisper(whisper, &golden["input_features"], &prompt, &g, |r, t| streamed[r].push(t))
                    .unwrap();
            let want = golden["output_ids"].to_vec2::<i64>().unwrap();
            assert_eq!(out.to_vec2::<i64>().unwrap(), want, "{name}/{case}");
            assert!(streamed.iter().zip(&want).all(|(s, w)| w.starts_with(s)), "{name}/{case}: {streamed:?}");
        }
    }
}

/// Whisper's settings are checked as transformers checks them, before any audio is encoded.
#[test]
fn whisper_generation_settings_are_checked() {
    use oxtorch_hf_import::generate::{generate_whisper, WhisperPrompt};
    let features = Tensor::zeros([1, 8, 12], DType::F32).unwrap();
    let run = |name: &str, edit: &dyn Fn(&mut WhisperPrompt)| {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let AutoModel::Whisper(whisper) = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap()
        else {
            panic!("not Whisper")
        };
        let mut prompt = WhisperPrompt::from_model_dir(&dir, &cfg).unwrap();
        edit(&mut prompt);
        let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        generate_whisper(&whisper, &features, &prompt, &g, |_, _| {}).unwrap_err().to_string()
    };
    let err = run("whisper_en", &|p| p.language = Some("fr".into()));
    assert!(err.contains("Cannot specify `task` or `language` for an English-only model"), "{err}");
    let err = run("whisper_gen", &|p| p.language = Some("klingon".into()));
    assert!(err.contains("Unsupported language: klingon"), "{err}");
    let err = run("whisper_gen", &|p| p.language = Some("es".into()));
    assert!(err.contains("<|es|> is not supported by this specific model"), "{err}");
    let err = run("whisper_gen", &|p| p.task = Some("summarize".into()));
    assert!(err.contains("The `summarize` task is not supported"), "{err}");
    let err = run("whisper_gen", &|p| p.return_timestamps = true);
    assert!(err.contains("timestamps"), "{err}");
}

/// Whisper's log-mel features of a WAV clip equal transformers' `WhisperFeatureExtractor`'s (80
/// bins, the clip padded with silence to its chunk), and so does the mel filter bank.
#[test]
fn whisper_features_of_a_wav_file_match_transformers() {
    use oxtorch_hf_import::audio::{mel_filter_bank, read_wav, WhisperFeatureExtractor};
    let dir = fixture("whisper_audio");
    let golden = common::read_all(&dir.join("features.safetensors"));
    let wav = read_wav(&dir.join("clip.wav")).unwrap();
    assert_eq!((wav.sampling_rate, wav.samples.len()), (16000, 12800));
    let extractor = WhisperFeatureExtractor { chunk_length: 1, ..Default::default() };
    let features = extractor.batch(&[wav.samples]).unwrap();
    let worst = common::assert_close("whisper features", &features, &golden["input_features"], 1e-4, 1e-4);
    println!("whisper features: max abs diff {worst:.2e}");
    let filters = Tensor::from_vec(mel_filter_bank(201, 80, 0.0, 8000.0, 16000), [201, 80]).unwrap();
    common::assert_close("mel filters", &filters, &golden["mel_filters"], 1e-7, 1e-5);
    // The tiny model's extractor (preprocessor_config.json: 8 bins, 12 frames a chunk) on its clips.
    let gen = fixture("whisper_gen");
    let extractor = WhisperFeatureExtractor::from_model_dir(&gen).unwrap();
    assert_eq!((extractor.feature_size, extractor.frames()), (8, 12));
    let clips: Vec<Vec<f32>> =
        ["clip0.wav", "clip1.wav"].iter().map(|f| read_wav(&gen.join(f)).unwrap().samples).collect();
    let golden = common::read_all(&gen.join("audio_fr.safetensors"));
    common::assert_close(
        "tiny features",
        &extractor.batch(&clips).unwrap(),
        &golden["input_features"],
        1e-4,
        1e-4,
    );
}
