//! Test support: a tokenizer against the ids transformers gave for one tokenizer config (the
//! goldens of `make_nllb_tokenizer_golden.py`, `make_spm_tokenizer_golden.py`).

use serde_json::Value;

use super::HfTokenizer;

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
