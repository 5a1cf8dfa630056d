//! transformers 5 rebuilds a BERT tokenizer's normalizer from `tokenizer_config.json` (its
//! `BertTokenizer.__init__`), whatever `tokenizer.json` holds: lowercasing unless
//! `do_lower_case` is false, `strip_accents`, `tokenize_chinese_chars`; and its decoder is always
//! WordPiece's (joining `##` pieces, tidying the spaces before punctuation).

use std::path::Path;

use serde_json::Value;
use tokenizers::decoders::wordpiece::WordPiece;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::{BertNormalizer, NormalizerWrapper};
use tokenizers::Tokenizer;

use crate::error::{Error, Result};

/// The tokenizer classes built as `BertTokenizer` (their normalizer from the config).
const BERT_CLASSES: &[&str] =
    &["BertTokenizer", "BertTokenizerFast", "DistilBertTokenizer", "DistilBertTokenizerFast"];

/// The model types whose tokenizer is a `BertTokenizer` when `tokenizer_config.json` names none.
const BERT_MODEL_TYPES: &[&str] = &["bert", "distilbert"];

/// Reads a JSON object file, `None` when absent.
fn read_json(path: &Path) -> Result<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| Error::format(path, e.to_string())),
        Err(_) => Ok(None),
    }
}

/// Gives a WordPiece tokenizer of a BERT-tokenizer folder the normalizer and decoder transformers
/// 5 builds (the decoder: WordPiece with prefix `##` and cleanup). The normalizer is
/// `BertNormalizer(clean_text, handle_chinese_chars = tokenize_chinese_chars (true), strip_accents,
/// lowercase = do_lower_case (true))` from `tokenizer_config.json`. The class is the config's
/// `tokenizer_class`, else the one of `config.json`'s `model_type`.
pub(super) fn rebuild_normalizer(dir: &Path, tokenizer: &mut Tokenizer) -> Result<()> {
    if !matches!(tokenizer.get_model(), ModelWrapper::WordPiece(_)) {
        return Ok(());
    }
    let config_path = dir.join("tokenizer_config.json");
    let config = read_json(&config_path)?.unwrap_or(Value::Null);
    let is_bert = match config.get("tokenizer_class").and_then(Value::as_str) {
        Some(class) => BERT_CLASSES.contains(&class),
        None => read_json(&dir.join("config.json"))?
            .and_then(|c| c.get("model_type").and_then(Value::as_str).map(str::to_owned))
            .is_some_and(|t| BERT_MODEL_TYPES.contains(&t.as_str())),
    };
    if !is_bert {
        return Ok(());
    }
    let flag = |key: &str| -> Result<Option<bool>> {
        match config.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(Error::format(&config_path, format!("\"{key}\" must be a boolean, got {v}"))),
        }
    };
    let normalizer = BertNormalizer::new(
        true,
        flag("tokenize_chinese_chars")?.unwrap_or(true),
        flag("strip_accents")?,
        flag("do_lower_case")?.unwrap_or(true),
    );
    tokenizer.with_normalizer(Some(NormalizerWrapper::BertNormalizer(normalizer)));
    tokenizer.with_decoder(Some(DecoderWrapper::WordPiece(WordPiece::new("##".into(), true))));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tokenizer::HfTokenizer;

    /// `sentence_tiny`'s tokenizer with a cased normalizer in `tokenizer.json`, under three
    /// `tokenizer_config.json`s: ids of "The Cat sits" as transformers 5.24 gives them.
    #[test]
    fn bert_normalizer_follows_tokenizer_config() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sentence_tiny");
        let dir = std::env::temp_dir().join(format!("oxtorch-bert-normalizer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(src.join("tokenizer.json")).unwrap()).unwrap();
        json["normalizer"]["lowercase"] = false.into();
        std::fs::write(dir.join("tokenizer.json"), json.to_string()).unwrap();
        std::fs::copy(src.join("config.json"), dir.join("config.json")).unwrap();
        let ids = |config: Option<&str>| {
            let path = dir.join("tokenizer_config.json");
            match config {
                Some(c) => std::fs::write(&path, c).unwrap(),
                None => std::fs::remove_file(&path).unwrap_or(()),
            }
            HfTokenizer::load(&dir, None).unwrap().encode("The Cat sits", true).unwrap()
        };
        // No tokenizer_config.json: a `bert` model's BertTokenizer, lowercasing by default.
        assert_eq!(ids(None), vec![2, 5, 7, 9, 3]);
        let cased = r#"{"tokenizer_class": "BertTokenizer", "do_lower_case": false, "strip_accents": true,
            "tokenize_chinese_chars": false}"#;
        assert_eq!(ids(Some(cased)), vec![2, 1, 1, 9, 3]);
        assert_eq!(ids(Some(r#"{"tokenizer_class": "BertTokenizer"}"#)), vec![2, 5, 7, 9, 3]);
        // A generic fast tokenizer keeps tokenizer.json's normalizer.
        assert_eq!(ids(Some(r#"{"tokenizer_class": "PreTrainedTokenizerFast"}"#)), vec![2, 1, 1, 9, 3]);
        // Without a decoder in tokenizer.json, BertTokenizer's WordPiece decoder.
        json["decoder"] = serde_json::Value::Null;
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"tokenizer_class": "BertTokenizer"}"#).unwrap();
        std::fs::write(dir.join("tokenizer.json"), json.to_string()).unwrap();
        let tok = HfTokenizer::load(&dir, None).unwrap();
        let ids = [2, 5, 7, 71, 9, 11, 5, 13, 70, 36, 35, 39, 72, 3];
        assert_eq!(tok.decode(&ids, true).unwrap(), "the cat, sits on the mat. it is red!");
        std::fs::remove_dir_all(&dir).ok();
    }
}
