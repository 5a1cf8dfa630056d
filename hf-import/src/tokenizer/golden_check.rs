//! Test support: a tokenizer against the ids transformers gave for one tokenizer config (the
//! goldens of `make_nllb_tokenizer_golden.py`, `make_spm_tokenizer_golden.py`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::HfTokenizer;

/// The golden file `name` of `tests/fixtures`, parsed.
pub(super) fn golden(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A golden's `"texts"`.
pub(super) fn texts(golden: &Value) -> Vec<&str> {
    golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect()
}

/// Checks `tok` (built from config `name`) against `want` (the golden's `ids[name]`): each text's ids
/// without (`plain`) and with (`special`) special tokens, the latter decoded without them where
/// the golden has `decoded`, and the texts as one padded batch where it has `batch`.
pub(super) fn check_against(tok: &HfTokenizer, texts: &[&str], want: &Value, name: &str) {
    for (kind, special) in [("plain", false), ("special", true)] {
        for (i, text) in texts.iter().enumerate() {
            let ids: Vec<u32> = serde_json::from_value(want[kind][i].clone()).unwrap();
            assert_eq!(tok.encode(text, special).unwrap(), ids, "{name} {kind} {text:?}");
            if let (true, Some(decoded)) = (special, want["decoded"][i].as_str()) {
                assert_eq!(tok.decode(&ids, true).unwrap(), decoded, "{name} decode {text:?}");
            }
        }
    }
    if !want["batch"].is_null() {
        let batch = tok.encode_batch(texts).unwrap();
        for (key, got) in [("input_ids", &batch.input_ids), ("attention_mask", &batch.attention_mask)] {
            let rows: Vec<Vec<i64>> = serde_json::from_value(want["batch"][key].clone()).unwrap();
            assert_eq!(got.to_vec2::<i64>().unwrap(), rows, "{name} batch {key}");
        }
    }
}

/// A folder laid out for config `name` of a tokenizer golden (`"configs"`, and where the golden
/// has them `"model_types"` and `"special_tokens_maps"`): its `files` copied from `source`,
/// `tokenizer_config.json`, `config.json` with the model type and `special_tokens_map.json`.
pub(super) fn golden_folder(
    golden: &serde_json::Value,
    source: &Path,
    name: &str,
    files: &[&str],
) -> PathBuf {
    // (A folder of its own per call: tests running at once may lay out the same config.)
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("oxtorch-tokenizer-golden-{name}-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for file in files {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    std::fs::write(dir.join("tokenizer_config.json"), golden["configs"][name].to_string()).unwrap();
    if let Some(model_type) = golden["model_types"][name].as_str() {
        std::fs::write(dir.join("config.json"), format!(r#"{{"model_type": "{model_type}"}}"#)).unwrap();
    }
    if let Some(map) = golden.get("special_tokens_maps").and_then(|m| m.get(name)) {
        std::fs::write(dir.join("special_tokens_map.json"), map.to_string()).unwrap();
    }
    dir
}

/// The Rust side of `tests/tokenizer_fuzz.py` (a differential fuzz against transformers): with
/// `TOKENIZER_FUZZ_DIR` set, reads its `spec.json` (`texts`, tokenizer `dirs`) and writes
/// `ours.json` (per folder each text's ids with special tokens, and those decoded without them).
/// Ignored unless asked for (`cargo test -p oxtorch-hf-import --lib tokenizer_fuzz_dump -- --ignored`).
#[test]
#[ignore]
fn tokenizer_fuzz_dump() {
    let root = PathBuf::from(std::env::var("TOKENIZER_FUZZ_DIR").expect("TOKENIZER_FUZZ_DIR"));
    let spec: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("spec.json")).unwrap()).unwrap();
    let texts = texts(&spec);
    let mut out = serde_json::Map::new();
    for dir in spec["dirs"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()) {
        let tok = HfTokenizer::load(Path::new(dir), None).unwrap();
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| tok.encode(t, true).unwrap()).collect();
        let decoded: Vec<String> = ids.iter().map(|i| tok.decode(i, true).unwrap()).collect();
        out.insert(dir.to_string(), serde_json::json!({"ids": ids, "decoded": decoded}));
    }
    std::fs::write(root.join("ours.json"), Value::Object(out).to_string()).unwrap();
}
