//! M2M100 folders (facebook/m2m100_418M, m2m100_1.2B, wmt21-dense-24-wide-*), as transformers'
//! `M2M100Tokenizer` reads them: a SentencePiece model (`sentencepiece.bpe.model`) and fairseq's
//! dictionary as `vocab.json`, the language tokens `__xx__` numbered after it; texts framed
//! `__src__ A </s>`.

use super::segmenter::{segmenter, PieceJoiner};
use super::{check_unknown, named_tokens, read_vocab, Class, Parts, VocabSpm};
use crate::error::{Error, Result};
use crate::tokenizer::folder::Folder;
use crate::tokenizer::sentencepiece::SpmModel;

/// The SentencePiece model's file name.
const SPM_FILE: &str = "sentencepiece.bpe.model";

/// fairseq's language codes of M2M100's checkpoints (`language_codes: "m2m100"`).
const M2M100_LANGUAGES: &[&str] = &[
    "af", "am", "ar", "ast", "az", "ba", "be", "bg", "bn", "br", "bs", "ca", "ceb", "cs", "cy", "da", "de",
    "el", "en", "es", "et", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr",
    "ht", "hu", "hy", "id", "ig", "ilo", "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "lb", "lg",
    "ln", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl", "no", "ns", "oc", "or",
    "pa", "pl", "ps", "pt", "ro", "ru", "sd", "si", "sk", "sl", "so", "sq", "sr", "ss", "su", "sv", "sw",
    "ta", "th", "tl", "tn", "tr", "uk", "ur", "uz", "vi", "wo", "xh", "yi", "yo", "zh", "zu",
];

/// The language codes of WMT21's checkpoints (`language_codes: "wmt21"`).
const WMT21_LANGUAGES: &[&str] = &["en", "ha", "is", "ja", "cs", "ru", "zh", "de"];

/// Whether the folder holds an `M2M100Tokenizer`: a `sentencepiece.bpe.model`, and the class
/// named, or without one, `config.json`'s model type `m2m_100`.
pub(in crate::tokenizer) fn is_m2m_100(folder: &Folder) -> Result<bool> {
    Ok(folder.dir.join(SPM_FILE).is_file() && folder.is_class(&["M2M100Tokenizer"], &["m2m_100"])?)
}

/// The folder's M2M100 tokenizer, `None` when it holds none.
pub(super) fn load(folder: &Folder) -> Result<Option<VocabSpm>> {
    if !is_m2m_100(folder)? {
        return Ok(None);
    }
    let path = folder.dir.join(SPM_FILE);
    let spm = SpmModel::read(&path)?;
    let vocab_path = folder.dir.join("vocab.json");
    let encoder = read_vocab(&vocab_path)?;
    let codes = match folder.config.get("language_codes").and_then(serde_json::Value::as_str) {
        None | Some("m2m100") => M2M100_LANGUAGES,
        Some("wmt21") => WMT21_LANGUAGES,
        Some(other) => {
            return Err(Error::format(
                &folder.config_path,
                format!("\"language_codes\" must be \"m2m100\" or \"wmt21\", got {other:?}"),
            ))
        }
    };
    let size = u32::try_from(encoder.len()).map_err(|_| Error::format(&vocab_path, "is too large"))?;
    let languages = codes.iter().zip(size..).map(|(code, id)| (format!("__{code}__"), id)).collect();
    let named = named_tokens(
        folder,
        &[
            ("bos_token", "<s>"),
            ("eos_token", "</s>"),
            ("sep_token", "</s>"),
            ("pad_token", "<pad>"),
            ("unk_token", "<unk>"),
        ],
    )?;
    let unk = &named[4].1;
    check_unknown(&encoder, &vocab_path, unk)?;
    let parts = Parts {
        class: Class::M2M100,
        source: segmenter(&spm, &path, unk)?,
        decoder: encoder.iter().map(|(p, &i)| (i, p.clone())).collect(),
        encoder,
        languages,
        joiner: PieceJoiner::new(&spm),
        named,
    };
    let mut tokenizer = VocabSpm::new(folder, parts)?;
    let source = match folder.config.get("src_lang") {
        None | Some(serde_json::Value::Null) => "en",
        Some(serde_json::Value::String(code)) => code,
        Some(other) => {
            return Err(Error::format(
                &folder.config_path,
                format!("\"src_lang\" must be a language code, got {other}"),
            ))
        }
    };
    tokenizer.set_source_language(source).map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    Ok(Some(tokenizer))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::tokenizer::golden_check::{check_against, golden, golden_folder, texts};
    use crate::tokenizer::vocab_spm::check_decoding;
    use crate::tokenizer::HfTokenizer;

    /// M2M100 folders (a small SentencePiece BPE, a cut nmt_nfkc charsmap; fairseq's dictionary
    /// in an order of its own as `vocab.json`) by class or by model type, with M2M100's or
    /// WMT21's languages, a source language configured, and the hub's `special_tokens_map.json`
    /// making the language tokens special: texts (language tokens in them, unknown runs, special
    /// tokens, odd spaces) single and padded, ids decoded with and without special tokens, and
    /// the source language set later, as transformers 5.24 gives them
    /// (`make_m2m100_tokenizer_golden.py`).
    #[test]
    fn m2m_100_folders_tokenize_as_transformers_5() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden = golden("m2m100_tokenizer_expected.json");
        let texts = texts(&golden);
        for name in golden["configs"].as_object().unwrap().keys() {
            let files = ["sentencepiece.bpe.model", "vocab.json"];
            let dir = golden_folder(&golden, &fixtures.join("tokenizers/m2m100"), name, &files);
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let mut tok = HfTokenizer::load(&dir, None).unwrap();
            let want = &golden["ids"][name];
            check_against(&tok, &texts, want, name);
            check_decoding(&tok, &texts, want, name);
            if let Some(french) = want["french"].as_array() {
                tok.set_source_language("fr").unwrap();
                for (text, ids) in texts.iter().zip(french) {
                    let ids: Vec<u32> = serde_json::from_value(ids.clone()).unwrap();
                    assert_eq!(tok.encode(text, true).unwrap(), ids, "{name} fr {text:?}");
                }
                assert!(tok.set_source_language("xx").unwrap_err().to_string().contains("\"xx\""));
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
