//! transformers 5 rebuilds a BERT tokenizer's normalizer from `tokenizer_config.json` (its
//! `BertTokenizer.__init__`), whatever `tokenizer.json` holds: lowercasing unless
//! `do_lower_case` is false, `strip_accents`, `tokenize_chinese_chars`; and its decoder is always
//! WordPiece's (joining `##` pieces, tidying the spaces before punctuation).

use tokenizers::decoders::wordpiece::WordPiece;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::{BertNormalizer, NormalizerWrapper};
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// The WordPiece tokenizer classes whose normalizer transformers 5 rebuilds from the config
/// (`BertTokenizer` and its subclasses, `MPNetTokenizer`), with their pad token (which wins over
/// the file's when `tokenizer_config.json` names none).
/// (`ElectraTokenizer`, a name older ELECTRA folders give, is `BertTokenizer` to transformers 5.)
const CLASSES: &[(&str, &str)] = &[
    ("BertTokenizer", "[PAD]"),
    ("DistilBertTokenizer", "[PAD]"),
    ("ElectraTokenizer", "[PAD]"),
    ("MPNetTokenizer", "<pad>"),
];

/// The model types whose tokenizer is one of [`CLASSES`] when `tokenizer_config.json` names none.
const MODEL_TYPES: &[(&str, &str)] = &[
    ("bert", "BertTokenizer"),
    ("distilbert", "DistilBertTokenizer"),
    ("electra", "BertTokenizer"),
    ("mpnet", "MPNetTokenizer"),
];

/// The entry of [`CLASSES`] (class, pad token) transformers builds for `folder`:
/// `tokenizer_config.json`'s `tokenizer_class` (with or without `Fast`), or (without one)
/// `config.json`'s `model_type`'s.
fn class_of(folder: &Folder) -> Result<Option<&'static (&'static str, &'static str)>> {
    let class = match folder.class() {
        Some(class) => Some(class.strip_suffix("Fast").unwrap_or(class)),
        None => {
            let model_type = folder.model_type()?;
            MODEL_TYPES.iter().find(|(t, _)| Some(*t) == model_type).map(|(_, c)| *c)
        }
    };
    Ok(class.and_then(|class| CLASSES.iter().find(|(c, _)| *c == class)))
}

/// `BertTokenizer`'s pad token.
pub(super) const PAD: &str = "[PAD]";

/// Whether `folder` holds a tokenizer transformers builds as `BertTokenizer` (or a subclass).
fn is_bert_folder(folder: &Folder) -> Result<bool> {
    Ok(matches!(class_of(folder)?, Some(("BertTokenizer" | "DistilBertTokenizer" | "ElectraTokenizer", _))))
}

/// Whether `folder` has a `vocab.txt` of a BERT tokenizer ([`from_vocab_txt`] builds one).
pub(super) fn is_vocab_folder(folder: &Folder) -> Result<bool> {
    Ok(folder.dir.join("vocab.txt").is_file() && is_bert_folder(folder)?)
}

/// A BERT tokenizer built from `vocab.txt` (one token per line, ids in order) and
/// `tokenizer_config.json`, as transformers 5's `BertTokenizer` does for a folder without
/// `tokenizer.json`: WordPiece, the config's normalizer, `[CLS] A [SEP] (B [SEP])` with the
/// config's special tokens. `None` when the folder is not a BERT tokenizer's or has no vocab.txt.
pub(super) fn from_vocab_txt(folder: &Folder) -> Result<Option<Tokenizer>> {
    let vocab_path = folder.dir.join("vocab.txt");
    if !vocab_path.is_file() || !is_bert_folder(folder)? {
        return Ok(None);
    }
    let bad = |e: tokenizers::Error| Error::format(&vocab_path, e.to_string());
    let vocab_file = vocab_path.to_str().ok_or_else(|| Error::format(&vocab_path, "not a UTF-8 path"))?;
    let vocab = tokenizers::models::wordpiece::WordPiece::read_file(vocab_file).map_err(bad)?;
    let token = |key: &str, default: &str| -> Result<String> {
        Ok(folder.token(key)?.unwrap_or(default).to_string())
    };
    let (unk, cls, sep) =
        (token("unk_token", "[UNK]")?, token("cls_token", "[CLS]")?, token("sep_token", "[SEP]")?);
    let (pad, mask) = (token("pad_token", PAD)?, token("mask_token", "[MASK]")?);
    let id = |t: &str| {
        vocab.get(t).copied().ok_or_else(|| {
            Error::format(&vocab_path, format!("the special token {t} is not in the vocabulary"))
        })
    };
    // (The pad token need not be: the special tokens below add it, as transformers does.)
    let (cls_id, sep_id) = (id(&cls)?, id(&sep)?);
    let model = tokenizers::models::wordpiece::WordPiece::builder()
        .vocab(vocab)
        .unk_token(unk.clone())
        .build()
        .map_err(bad)?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer.with_pre_tokenizer(Some(tokenizers::pre_tokenizers::bert::BertPreTokenizer));
    let template = tokenizers::processors::template::TemplateProcessing::builder()
        .try_single(format!("{cls}:0 $A:0 {sep}:0"))
        .and_then(|b| b.try_pair(format!("{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1")))
        .map_err(|e| Error::format(&vocab_path, e.to_string()))?
        .special_tokens(vec![(cls.clone(), cls_id), (sep.clone(), sep_id)])
        .build()
        .map_err(|e| Error::format(&vocab_path, e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    let specials: Vec<tokenizers::AddedToken> = [&pad, &unk, &cls, &sep, &mask]
        .iter()
        .map(|t| tokenizers::AddedToken::from(t.to_string(), true))
        .collect();
    tokenizer.add_special_tokens(&specials);
    rebuild_normalizer(folder, &mut tokenizer)?;
    Ok(Some(tokenizer))
}

/// Gives a WordPiece tokenizer of a BERT-tokenizer folder the normalizer and decoder transformers
/// 5 builds (the decoder: WordPiece with prefix `##` and cleanup). The normalizer is
/// `BertNormalizer(clean_text, handle_chinese_chars = tokenize_chinese_chars (true), strip_accents,
/// lowercase = do_lower_case (true))` from `tokenizer_config.json`. The class is the config's
/// `tokenizer_class`, else the one of `config.json`'s `model_type`.
/// Returns the class's pad token when it did (`None`: not one of these classes).
pub(super) fn rebuild_normalizer(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<Option<&'static str>> {
    if !matches!(tokenizer.get_model(), ModelWrapper::WordPiece(_)) {
        return Ok(None);
    }
    let Some(&(_, pad)) = class_of(folder)? else { return Ok(None) };
    let normalizer = BertNormalizer::new(
        true,
        folder.flag("tokenize_chinese_chars")?.unwrap_or(true),
        folder.flag("strip_accents")?,
        folder.flag("do_lower_case")?.unwrap_or(true),
    );
    tokenizer.with_normalizer(Some(NormalizerWrapper::BertNormalizer(normalizer)));
    tokenizer.with_decoder(Some(DecoderWrapper::WordPiece(WordPiece::new("##".into(), true))));
    Ok(Some(pad))
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

    /// A folder with `vocab.txt` and no `tokenizer.json`: transformers 5's `BertTokenizer`
    /// (ids, mask, padding and decoding as it gives them for the same vocabulary).
    #[test]
    fn a_vocab_txt_folder_is_a_bert_tokenizer() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sentence_tiny");
        let dir = std::env::temp_dir().join(format!("oxtorch-vocab-txt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(src.join("tokenizer.json")).unwrap()).unwrap();
        let vocab = json["model"]["vocab"].as_object().unwrap();
        let mut words: Vec<(&String, u64)> = vocab.iter().map(|(w, i)| (w, i.as_u64().unwrap())).collect();
        words.sort_by_key(|&(_, i)| i);
        let lines: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
        std::fs::write(dir.join("vocab.txt"), lines.join("\n") + "\n").unwrap();
        std::fs::copy(src.join("config.json"), dir.join("config.json")).unwrap();
        std::fs::write(
            dir.join("tokenizer_config.json"),
            r#"{"tokenizer_class": "BertTokenizer", "do_lower_case": true, "model_max_length": 16}"#,
        )
        .unwrap();
        let tok = HfTokenizer::load(&dir, None).unwrap();
        let batch = tok.encode_batch(&["The cat, sits on the mat!", "xyz qqq ##a"]).unwrap();
        let ids = batch.input_ids.to_vec2::<i64>().unwrap();
        assert_eq!(ids, vec![vec![2, 5, 7, 71, 9, 11, 5, 13, 72, 3], vec![2, 1, 1, 1, 1, 6, 3, 0, 0, 0]]);
        let mask = batch.attention_mask.to_vec2::<i64>().unwrap();
        assert_eq!(mask[1], vec![1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
        let first: Vec<u32> = ids[0].iter().map(|&i| i as u32).collect();
        assert_eq!(tok.decode(&first, true).unwrap(), "the cat, sits on the mat!");
        // Not a BERT tokenizer's folder: no tokenizer.
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"tokenizer_class": "T5Tokenizer"}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("no tokenizer.json"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
