//! wav2vec 2.0's CTC tokenizer (`Wav2Vec2CTCTokenizer`: `vocab.json` of characters, the `|` word
//! delimiter): a CTC head's per-frame ids to text as transformers' `batch_decode` gives it: runs
//! of one token grouped, the padding token (CTC's blank) dropped, the word delimiter read as a
//! space, the characters joined and stripped, lowercased with `do_lower_case`, and
//! `clean_up_tokenization_spaces` applied where `tokenizer_config.json` asks for it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// A character vocabulary and the special tokens CTC decoding reads.
#[derive(Debug, Clone)]
pub struct CtcTokenizer {
    /// token by id (`None` for an id no token has)
    tokens: Vec<Option<String>>,
    pad_token: String,
    unk_token: String,
    word_delimiter: String,
    replace_word_delimiter: String,
    do_lower_case: bool,
    clean_up_spaces: bool,
}

impl CtcTokenizer {
    /// `dir/vocab.json` and the settings of `dir/tokenizer_config.json` (and
    /// `special_tokens_map.json`), with `Wav2Vec2CTCTokenizer`'s defaults (`<pad>`, `<unk>`, `|`).
    pub fn from_model_dir(dir: &Path) -> Result<Self> {
        let read = |name: &str| -> Result<Option<Value>> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    Ok(Some(serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?))
                }
                Err(_) => Ok(None),
            }
        };
        let vocab_path = dir.join("vocab.json");
        let vocab = read("vocab.json")?.ok_or_else(|| {
            Error::Input(format!(
                "{} is missing: a CTC model decodes through its vocab.json",
                vocab_path.display()
            ))
        })?;
        let entries = vocab
            .as_object()
            .ok_or_else(|| Error::format(&vocab_path, "the vocabulary must be an object"))?;
        if entries.values().any(Value::is_object) {
            return Err(Error::Unsupported(format!(
                "{}: a vocabulary per language (MMS's target_lang) is not supported",
                vocab_path.display()
            )));
        }
        let mut by_id: HashMap<usize, String> = HashMap::new();
        for (token, id) in entries {
            let id = id.as_u64().and_then(|i| usize::try_from(i).ok()).filter(|&i| i < 1 << 24).ok_or_else(
                || Error::format(&vocab_path, format!("token {token:?} has id {id}, not a small integer")),
            )?;
            by_id.insert(id, token.clone());
        }
        let config = read("tokenizer_config.json")?.unwrap_or(Value::Null);
        let special = read("special_tokens_map.json")?.unwrap_or(Value::Null);
        // A token setting: a string, or an added token's `{"content": ...}`.
        let token = |key: &str, default: &str| -> String {
            [&config, &special]
                .iter()
                .find_map(|j| match j.get(key) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).map(str::to_string),
                    _ => None,
                })
                .unwrap_or_else(|| default.to_string())
        };
        // Added tokens past the vocabulary (`added_tokens_decoder`: id → {"content": ...}).
        if let Some(added) = config.get("added_tokens_decoder").and_then(Value::as_object) {
            for (id, t) in added {
                if let (Ok(id), Some(content)) =
                    (id.parse::<usize>(), t.get("content").and_then(Value::as_str))
                {
                    if id < 1 << 24 {
                        by_id.entry(id).or_insert_with(|| content.to_string());
                    }
                }
            }
        }
        let len = by_id.keys().max().map_or(0, |&m| m + 1);
        let mut tokens = vec![None; len];
        for (id, t) in by_id {
            tokens[id] = Some(t);
        }
        let flag = |key: &str, default: bool| config.get(key).and_then(Value::as_bool).unwrap_or(default);
        Ok(CtcTokenizer {
            tokens,
            pad_token: token("pad_token", "<pad>"),
            unk_token: token("unk_token", "<unk>"),
            word_delimiter: token("word_delimiter_token", "|"),
            replace_word_delimiter: config
                .get("replace_word_delimiter_char")
                .and_then(Value::as_str)
                .unwrap_or(" ")
                .to_string(),
            do_lower_case: flag("do_lower_case", false),
            clean_up_spaces: flag("clean_up_tokenization_spaces", false),
        })
    }

    /// The text of one row's per-frame ids (a CTC head's argmax over every frame).
    pub fn decode(&self, ids: &[i64]) -> String {
        let token = |id: i64| -> &str {
            usize::try_from(id)
                .ok()
                .and_then(|i| self.tokens.get(i))
                .and_then(Option::as_deref)
                .unwrap_or(&self.unk_token)
        };
        let mut text = String::new();
        let mut last: Option<&str> = None;
        for &id in ids {
            let t = token(id);
            if last == Some(t) {
                continue;
            }
            last = Some(t);
            if t == self.pad_token {
                continue;
            }
            text.push_str(if t == self.word_delimiter { &self.replace_word_delimiter } else { t });
        }
        let mut text = text.trim().to_string();
        if self.do_lower_case {
            text = text.to_lowercase();
        }
        if self.clean_up_spaces {
            for (from, to) in [
                (" .", "."),
                (" ?", "?"),
                (" !", "!"),
                (" ,", ","),
                (" ' ", "'"),
                (" n't", "n't"),
                (" 'm", "'m"),
                (" 's", "'s"),
                (" 've", "'ve"),
                (" 're", "'re"),
            ] {
                text = text.replace(from, to);
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_drops_blanks_and_spaces_words() {
        let dir = std::env::temp_dir().join(format!("ctc_tok_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("vocab.json"), r#"{"<pad>": 0, "<unk>": 1, "|": 2, "A": 3, "B": 4}"#)
            .unwrap();
        let tok = CtcTokenizer::from_model_dir(&dir).unwrap();
        // A A <pad> A | | B 9 (unknown) → "AA B<unk>"
        assert_eq!(tok.decode(&[3, 3, 0, 3, 2, 2, 4, 9]), "AA B<unk>");
        assert_eq!(tok.decode(&[2, 0, 3, 2]), "A");
        std::fs::write(
            dir.join("tokenizer_config.json"),
            r#"{"do_lower_case": true, "word_delimiter_token": "B"}"#,
        )
        .unwrap();
        let tok = CtcTokenizer::from_model_dir(&dir).unwrap();
        assert_eq!(tok.decode(&[3, 4, 3, 2]), "a a|");
        std::fs::write(dir.join("vocab.json"), r#"{"eng": {"<pad>": 0}}"#).unwrap();
        assert!(CtcTokenizer::from_model_dir(&dir).unwrap_err().to_string().contains("target_lang"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
