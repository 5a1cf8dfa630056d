//! transformers 5 builds a DeBERTa-v2/v3 tokenizer's pipeline in `DebertaV2Tokenizer.__init__`,
//! whatever the files hold: of a `tokenizer.json` it keeps the Unigram vocabulary (and its added
//! tokens); a folder without one (microsoft/deberta-v3-base ships `spm.model` alone) gets the
//! vocabulary from the SentencePiece model, its control and user-defined pieces as added tokens.
//! The pipeline: `do_lower_case`'s lowercasing, runs of whitespace and each tab or line break as one
//! space, NFC, trailing whitespace stripped; `split_by_punct`'s isolated punctuation, then
//! `Metaspace` prepending `▁` to every word (to the first only with `add_prefix_space: false`);
//! texts framed as `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, B's tokens of type 1.

use serde_json::Value;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::unigram::Unigram;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::strip::Strip;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::normalizers::utils::{Lowercase, Sequence as NormalizerSequence};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::punctuation::Punctuation;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

use super::folder::{read_json, Folder};
use super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use crate::error::{Error, Result};

/// `DebertaV2Tokenizer`'s pad token when the folder names none.
pub(super) const PAD: &str = "[PAD]";

/// The tokenizer classes built as `DebertaV2Tokenizer`.
const CLASSES: &[&str] = &["DebertaV2Tokenizer", "DebertaV2TokenizerFast"];

/// The model types whose tokenizer is a `DebertaV2Tokenizer` when `tokenizer_config.json` names
/// no class (transformers 5.24's `TOKENIZER_MAPPING_NAMES`).
const MODEL_TYPES: &[&str] = &["deberta-v2"];

/// The SentencePiece model's file name in a DeBERTa-v2 folder.
pub(super) const SPM_FILE: &str = "spm.model";

/// The special tokens `DebertaV2Tokenizer` (and DeBERTa v1's `DebertaTokenizer`) registers, with its
/// defaults, in transformers' order.
pub(super) const SPECIAL_TOKENS: &[(&str, &str)] = &[
    ("bos_token", "[CLS]"),
    ("eos_token", "[SEP]"),
    ("unk_token", "[UNK]"),
    ("sep_token", "[SEP]"),
    ("pad_token", "[PAD]"),
    ("cls_token", "[CLS]"),
    ("mask_token", "[MASK]"),
];

/// Whether the folder's tokenizer is a `DebertaV2Tokenizer`: `tokenizer_config.json` names the
/// class, or names none and `config.json`'s model type is DeBERTa-v2's.
pub(super) fn is_deberta_v2(folder: &Folder) -> Result<bool> {
    folder.is_class(CLASSES, MODEL_TYPES)
}

/// Gives a Unigram tokenizer of a DeBERTa-v2 folder the pipeline transformers 5 builds (see the
/// module docs). Returns whether it did.
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<bool> {
    if !matches!(tokenizer.get_model(), ModelWrapper::Unigram(_)) || !is_deberta_v2(folder)? {
        return Ok(false);
    }
    // As `DebertaV2Tokenizer.__init__`: the unknown token's index when the vocabulary holds it
    // with a score of 0, else 1; no byte fallback.
    let unk = folder.token("unk_token")?.unwrap_or("[UNK]").to_string();
    let vocab = super::unigram_classes::unigram_vocab(tokenizer);
    let unk_id = vocab.iter().position(|(p, s)| *p == unk && *s == 0.0).unwrap_or(1);
    super::unigram_classes::set_unigram_unk_id(folder, tokenizer, unk_id)?;
    set_pipeline(folder, tokenizer)?;
    Ok(true)
}

/// The tokenizer of a DeBERTa-v2 folder without `tokenizer.json`, from its `spm.model`; `None`
/// when the folder has no such model or its tokenizer is of another class.
pub(super) fn from_spm(folder: &Folder) -> Result<Option<Tokenizer>> {
    let path = folder.dir.join(SPM_FILE);
    if !path.is_file() || !is_deberta_v2(folder)? {
        return Ok(None);
    }
    let spm = SpmModel::read(&path)?;
    if spm.model_type != SpmModelType::Unigram {
        return Err(Error::format(&path, "DebertaV2Tokenizer needs a Unigram SentencePiece model"));
    }
    let specials = special_tokens(folder)?;
    let unk = specials.iter().find(|(k, _)| *k == "unk_token").map(|(_, t)| t.as_str()).unwrap_or("[UNK]");
    // As `DebertaV2Tokenizer`: the unknown token's index when the vocabulary holds it with a score
    // of 0, else the model's `unk_id`.
    let unk_id = match spm.pieces.iter().position(|p| p.piece == unk && p.score == 0.0) {
        Some(i) => i,
        None => usize::try_from(spm.unk_id)
            .ok()
            .filter(|&i| i < spm.pieces.len())
            .ok_or_else(|| Error::format(&path, format!("unk_id {} is not a piece", spm.unk_id)))?,
    };
    let vocab = spm.pieces.iter().map(|p| (p.piece.clone(), f64::from(p.score))).collect();
    let unigram =
        Unigram::from(vocab, Some(unk_id), false).map_err(|e| Error::format(&path, e.to_string()))?;
    let mut tokenizer = Tokenizer::new(unigram);
    // Control pieces are special tokens, user-defined ones plain added tokens; both are matched on
    // the raw text.
    for piece in spm.pieces.iter().filter(|p| matches!(p.kind, PieceKind::Control | PieceKind::UserDefined)) {
        let control = piece.kind == PieceKind::Control;
        add(&mut tokenizer, AddedToken::from(piece.piece.clone(), control).normalized(false));
    }
    add_declared_tokens(folder, &mut tokenizer, &specials)?;
    set_pipeline(folder, &mut tokenizer)?;
    Ok(Some(tokenizer))
}

/// The special tokens by name: a legacy `special_tokens_map.json`'s, else
/// `tokenizer_config.json`'s, else the class defaults ([`Folder::token`]).
fn special_tokens(folder: &Folder) -> Result<Vec<(&'static str, String)>> {
    SPECIAL_TOKENS
        .iter()
        .map(|&(key, default)| Ok((key, folder.token(key)?.unwrap_or(default).to_string())))
        .collect()
}

/// Adds the tokens the folder declares beyond the model's pieces, at the ids it gives them
/// ([`declared_tokens`]), then the special tokens still missing, after them (as transformers
/// appends them).
pub(super) fn add_declared_tokens(
    folder: &Folder,
    tokenizer: &mut Tokenizer,
    specials: &[(&'static str, String)],
) -> Result<()> {
    let declared = declared_tokens(folder, specials)?;
    for (id, token) in declared.iter().cloned() {
        match tokenizer.token_to_id(&token.content) {
            Some(existing) if existing == id => {
                // A piece of the model: registered as an added token with the declared flags.
                add(tokenizer, token);
            }
            Some(existing) => {
                return Err(Error::format(
                    &folder.config_path,
                    format!(
                        "the added token {:?} has id {id}, but the vocabulary gives it {existing}",
                        token.content
                    ),
                ))
            }
            None => {
                let next = tokenizer.get_vocab_size(true) as u32;
                if id != next {
                    return Err(Error::format(
                        &folder.config_path,
                        format!(
                            "the added token {:?} has id {id}, but the next free id is {next}",
                            token.content
                        ),
                    ));
                }
                add(tokenizer, token);
            }
        }
    }
    let mut missing = Vec::new();
    for (key, content) in specials {
        if !declared.iter().any(|(_, t)| t.content == *content) {
            missing.push(folder.special_token(key, content)?);
        }
    }
    tokenizer.add_special_tokens(&missing);
    Ok(())
}

/// The tokens a folder declares with their ids, by id: `tokenizer_config.json`'s
/// `added_tokens_decoder` (with their flags), then `added_tokens.json`'s others (special when
/// one of `specials`).
pub(super) fn declared_tokens(
    folder: &Folder,
    specials: &[(&'static str, String)],
) -> Result<Vec<(u32, AddedToken)>> {
    let mut declared: Vec<(u32, AddedToken)> = Vec::new();
    if let Some(Value::Object(decoder)) = folder.config.get("added_tokens_decoder") {
        for (id, token) in decoder {
            let bad =
                || Error::format(&folder.config_path, format!("added_tokens_decoder[{id:?}] is not a token"));
            let id: u32 = id.parse().map_err(|_| bad())?;
            let content = token.get("content").and_then(Value::as_str).ok_or_else(bad)?;
            let flag = |k: &str, default: bool| token.get(k).and_then(Value::as_bool).unwrap_or(default);
            let added = AddedToken::from(content, flag("special", false))
                .normalized(flag("normalized", false))
                .lstrip(flag("lstrip", false))
                .rstrip(flag("rstrip", false))
                .single_word(flag("single_word", false));
            declared.push((id, added));
        }
    }
    let added_path = folder.dir.join("added_tokens.json");
    if let Some(added) = read_json(&added_path)? {
        let Value::Object(added) = added else {
            return Err(Error::format(&added_path, "must map tokens to ids"));
        };
        for (content, id) in added {
            let id = id
                .as_u64()
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| Error::format(&added_path, format!("the id of {content:?} is not an id")))?;
            if !declared.iter().any(|(_, t)| t.content == content) {
                let special = specials.iter().any(|(_, s)| *s == content);
                declared.push((id, AddedToken::from(content, special).normalized(false)));
            }
        }
    }
    declared.sort_by_key(|(id, _)| *id);
    Ok(declared)
}

/// Adds `token` as a special token or a plain one, as it says.
fn add(tokenizer: &mut Tokenizer, token: AddedToken) {
    if token.special {
        tokenizer.add_special_tokens(&[token]);
    } else {
        tokenizer.add_tokens(&[token]);
    }
}

/// `DebertaV2Tokenizer`'s normalizer, pre-tokenizer, decoder and post-processor.
fn set_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<()> {
    let lower = folder.flag("do_lower_case")?.unwrap_or(false);
    let split_by_punct = folder.flag("split_by_punct")?.unwrap_or(false);
    let scheme = if folder.flag("add_prefix_space")?.unwrap_or(true) {
        PrependScheme::Always
    } else {
        PrependScheme::First
    };
    let whitespace = Replace::new(ReplacePattern::Regex(r"\s{2,}|[\n\r\t]".into()), " ")
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    let mut normalizers = Vec::new();
    if lower {
        normalizers.push(NormalizerWrapper::Lowercase(Lowercase));
    }
    normalizers.extend([
        NormalizerWrapper::Replace(whitespace),
        NormalizerWrapper::NFC(NFC),
        NormalizerWrapper::StripNormalizer(Strip::new(false, true)),
    ]);
    tokenizer.with_normalizer(Some(NormalizerWrapper::Sequence(NormalizerSequence::new(normalizers))));
    let mut pre = Vec::new();
    if split_by_punct {
        pre.push(PreTokenizerWrapper::Punctuation(Punctuation::new(SplitDelimiterBehavior::Isolated)));
    }
    pre.push(PreTokenizerWrapper::Metaspace(Metaspace::new('▁', scheme, true)));
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(pre))));
    tokenizer.with_decoder(Some(DecoderWrapper::Metaspace(Metaspace::new('▁', scheme, true))));
    let specials = special_tokens(folder)?;
    let token = |key: &str| -> Result<(String, u32)> {
        let name = specials.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone()).unwrap_or_default();
        let id = tokenizer.token_to_id(&name).ok_or_else(|| {
            Error::format(&folder.config_path, format!("the {key} {name:?} is not in the vocabulary"))
        })?;
        Ok((name, id))
    };
    let (cls, sep) = (token("cls_token")?, token("sep_token")?);
    let template = TemplateProcessing::builder()
        .try_single(format!("{}:0 $A:0 {}:0", cls.0, sep.0))
        .and_then(|b| b.try_pair(format!("{0}:0 $A:0 {1}:0 $B:1 {1}:1", cls.0, sep.0)))
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?
        .special_tokens(vec![cls, sep])
        .build()
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use crate::tokenizer::HfTokenizer;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    fn rows(v: &Value) -> Vec<Vec<i64>> {
        serde_json::from_value(v.clone()).unwrap()
    }

    /// A small DeBERTa-v3-style SentencePiece model alone (as microsoft/deberta-v3-base ships it,
    /// with `special_tokens_map.json` and `added_tokens.json`), under `tokenizer_config.json`s
    /// lowercasing, splitting punctuation and not prefixing; and the same vocabulary as a
    /// `tokenizer.json` of another pipeline: single texts and padded pairs as transformers 5.24
    /// tokenizes them (`make_deberta_tokenizer_golden.py`).
    #[test]
    fn deberta_v2_tokenizers_tokenize_as_transformers_5() {
        let text = std::fs::read_to_string(fixtures().join("deberta_tokenizer_expected.json")).unwrap();
        let golden: Value = serde_json::from_str(&text).unwrap();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let pairs: Vec<(&str, &str)> = golden["pairs"]["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap(), p[1].as_str().unwrap()))
            .collect();
        for (name, case) in golden["cases"].as_object().unwrap() {
            let dir = std::env::temp_dir().join(format!("oxtorch-deberta-tok-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let tokenizers = fixtures().join("tokenizers");
            match case["files"].as_str().unwrap() {
                "spm" => std::fs::copy(tokenizers.join("deberta_spm.model"), dir.join("spm.model")).unwrap(),
                _ => std::fs::copy(tokenizers.join("deberta_unigram.json"), dir.join("tokenizer.json"))
                    .unwrap(),
            };
            for (file, content) in case["written"].as_object().unwrap() {
                std::fs::write(dir.join(file), content.to_string()).unwrap();
            }
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let tok = HfTokenizer::load(&dir, None).unwrap();
            for (kind, special) in [("plain", false), ("special", true)] {
                for (i, text) in texts.iter().enumerate() {
                    let want: Vec<u32> =
                        serde_json::from_value(golden["ids"][name][kind][i].clone()).unwrap();
                    assert_eq!(tok.encode(text, special).unwrap(), want, "{name} {kind} {text:?}");
                }
            }
            let batch = tok.encode_pairs(&pairs).unwrap();
            let want = &golden["pairs"]["ids"][name];
            for (key, got) in [
                ("input_ids", &batch.input_ids),
                ("attention_mask", &batch.attention_mask),
                ("token_type_ids", &batch.token_type_ids),
            ] {
                assert_eq!(got.to_vec2::<i64>().unwrap(), rows(&want[key]), "{name} {key}");
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A folder whose `spm.model` is not DeBERTa-v2's (no class, another model type) has no
    /// tokenizer here; a corrupt model is an error naming the file.
    #[test]
    fn other_and_corrupt_spm_folders() {
        let dir = std::env::temp_dir().join(format!("oxtorch-deberta-spm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixtures().join("tokenizers/deberta_spm.model"), dir.join("spm.model")).unwrap();
        std::fs::write(dir.join("config.json"), r#"{"model_type": "t5"}"#).unwrap();
        assert!(!HfTokenizer::in_folder(&dir).unwrap());
        assert!(HfTokenizer::load(&dir, None).unwrap_err().to_string().contains("no tokenizer.json"));
        std::fs::write(dir.join("config.json"), r#"{"model_type": "deberta-v2"}"#).unwrap();
        std::fs::write(dir.join("spm.model"), [0x0a, 0x05, 0x0a]).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("spm.model") && err.contains("not a SentencePiece model"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
