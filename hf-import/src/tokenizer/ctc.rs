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
    /// token by id
    tokens: HashMap<u64, String>,
    /// the CTC blank (none where the tokenizer has no padding token)
    pad_token: Option<String>,
    unk_token: String,
    word_delimiter: Option<String>,
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
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io(&path, e)),
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
        let mut tokens: HashMap<u64, String> = HashMap::new();
        for (token, id) in entries {
            let id = id.as_u64().ok_or_else(|| {
                Error::format(&vocab_path, format!("token {token:?} has id {id}, not an integer"))
            })?;
            tokens.insert(id, token.clone());
        }
        let config = read("tokenizer_config.json")?.unwrap_or(Value::Null);
        // As transformers 5: a config with `added_tokens_decoder` is the whole story; an older
        // one is overridden by `special_tokens_map.json` and extended by `added_tokens.json`.
        let added = config.get("added_tokens_decoder").and_then(Value::as_object);
        let special = match added {
            Some(_) => Value::Null,
            None => read("special_tokens_map.json")?.unwrap_or(Value::Null),
        };
        match added {
            Some(added) => {
                for (id, t) in added {
                    if let (Ok(id), Some(content)) =
                        (id.parse::<u64>(), t.get("content").and_then(Value::as_str))
                    {
                        tokens.entry(id).or_insert_with(|| content.to_string());
                    }
                }
            }
            None => {
                if let Some(Value::Object(added)) = read("added_tokens.json")? {
                    for (token, id) in added {
                        if let Some(id) = id.as_u64() {
                            tokens.entry(id).or_insert(token);
                        }
                    }
                }
            }
        }
        // A token setting: a string, an added token's `{"content": ...}`, or null (none).
        let token = |key: &str, default: &str| -> Option<String> {
            match [&special, &config].iter().find_map(|j| j.get(key)) {
                None => Some(default.to_string()),
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).map(str::to_string),
                Some(_) => None,
            }
        };
        let flag = |key: &str, default: bool| config.get(key).and_then(Value::as_bool).unwrap_or(default);
        Ok(CtcTokenizer {
            tokens,
            pad_token: token("pad_token", "<pad>"),
            unk_token: token("unk_token", "<unk>").unwrap_or_default(),
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
            u64::try_from(id).ok().and_then(|i| self.tokens.get(&i)).map_or(&self.unk_token, String::as_str)
        };
        let mut text = String::new();
        let mut last: Option<&str> = None;
        for &id in ids {
            let t = token(id);
            if last == Some(t) {
                continue;
            }
            last = Some(t);
            if self.pad_token.as_deref() == Some(t) {
                continue;
            }
            let delimiter = self.word_delimiter.as_deref() == Some(t);
            text.push_str(if delimiter { &self.replace_word_delimiter } else { t });
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
        // Without `added_tokens_decoder`: special_tokens_map.json overrides the config (a null pad
        // token: no blank), added_tokens.json extends the vocabulary.
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"word_delimiter_token": "B"}"#).unwrap();
        std::fs::write(
            dir.join("special_tokens_map.json"),
            r#"{"pad_token": null, "word_delimiter_token": "|"}"#,
        )
        .unwrap();
        std::fs::write(dir.join("added_tokens.json"), r#"{"<s>": 5}"#).unwrap();
        let tok = CtcTokenizer::from_model_dir(&dir).unwrap();
        assert_eq!(tok.decode(&[3, 0, 0, 2, 4, 5]), "A<pad> B<s>");
        // With it, the config alone decides.
        std::fs::write(
            dir.join("tokenizer_config.json"),
            r#"{"added_tokens_decoder": {"6": {"content": "</s>"}}, "word_delimiter_token": "B"}"#,
        )
        .unwrap();
        let tok = CtcTokenizer::from_model_dir(&dir).unwrap();
        assert_eq!(tok.decode(&[3, 0, 4, 6, 5]), "A </s><unk>");
        std::fs::write(dir.join("vocab.json"), r#"{"eng": {"<pad>": 0}}"#).unwrap();
        assert!(CtcTokenizer::from_model_dir(&dir).unwrap_err().to_string().contains("target_lang"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
