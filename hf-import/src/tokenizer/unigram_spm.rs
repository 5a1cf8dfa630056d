//! Folders of the SentencePiece Unigram tokenizer classes with the model alone and no
//! `tokenizer.json` — T5 / mT5 (`spiece.model`: T5 v1.1, mT5), XLM-RoBERTa and CamemBERT
//! (`sentencepiece.bpe.model`), ALBERT (`spiece.model`) — built as transformers 5 builds them: a
//! Unigram over the model's pieces as the class's converter orders them (`convert_from_spm`),
//! the model's precompiled charsmap as its normalizer, the special tokens and the declared ones
//! added; then the class's pipeline ([`super::unigram_classes::rebuild_pipeline`]). Per class:
//! - T5: the pieces, then the `extra_ids` sentinels `<extra_id_{n-1}>` … `<extra_id_0>` (score 0),
//!   control pieces and sentinels special, user-defined pieces plain added tokens;
//! - XLM-R: `bos`, `pad`, `eos`, `unk`, the pieces after the model's first three, `mask`;
//! - CamemBERT: `<s>NOTUSED`, `pad`, `</s>NOTUSED`, `unk`, `<unk>NOTUSED` (score -100), the
//!   pieces after the model's first, `mask` (the space the class strips before it goes with the
//!   whitespace split anyway);
//! - ALBERT: the pieces as they are.

use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::{AddedToken, Tokenizer};

use super::folder::Folder;
use super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use super::unigram_classes::{class_of, Class};
use crate::error::{Error, Result};

/// The SentencePiece model's file name in a folder of `class`.
fn spm_file(class: Class) -> &'static str {
    match class {
        Class::T5 | Class::Albert => "spiece.model",
        Class::XlmRoberta | Class::Camembert => "sentencepiece.bpe.model",
    }
}

/// Whether the folder holds the SentencePiece model of one of these classes, which [`from_spm`]
/// reads.
pub(super) fn is_unigram_spm(folder: &Folder) -> Result<bool> {
    Ok(class_of(folder)?.is_some_and(|class| folder.dir.join(spm_file(class)).is_file()))
}

/// The tokenizer of a folder of one of these classes without `tokenizer.json`, from its
/// SentencePiece model; `None` when the folder has no such model or is of another class.
pub(super) fn from_spm(folder: &Folder) -> Result<Option<Tokenizer>> {
    let Some(class) = class_of(folder)? else { return Ok(None) };
    let path = folder.dir.join(spm_file(class));
    if !path.is_file() {
        return Ok(None);
    }
    let spm = SpmModel::read(&path)?;
    if spm.model_type != SpmModelType::Unigram {
        return Err(Error::format(
            &path,
            format!("{class:?}'s tokenizer needs a Unigram SentencePiece model"),
        ));
    }
    let named = |key: &'static str, default: &str| -> Result<(&'static str, String)> {
        Ok((key, folder.token(key)?.unwrap_or(default).to_string()))
    };
    let pieces = |from: usize| spm.pieces.iter().skip(from).map(|p| (p.piece.clone(), f64::from(p.score)));
    let specials: Vec<(&'static str, String)>;
    let mut extra: Vec<AddedToken> = Vec::new();
    let (vocab, unk_id): (Vec<(String, f64)>, usize) = match class {
        Class::T5 => {
            specials =
                vec![named("eos_token", "</s>")?, named("unk_token", "<unk>")?, named("pad_token", "<pad>")?];
            let sentinels = t5_sentinels(folder)?;
            let mut vocab: Vec<(String, f64)> = pieces(0).collect();
            vocab.extend(sentinels.iter().rev().map(|s| (s.clone(), 0.0)));
            // Control pieces are special tokens, user-defined ones plain; then the sentinels.
            let kinds = [PieceKind::Control, PieceKind::UserDefined];
            for piece in spm.pieces.iter().filter(|p| kinds.contains(&p.kind)) {
                extra.push(
                    AddedToken::from(piece.piece.clone(), piece.kind == PieceKind::Control).normalized(false),
                );
            }
            extra.extend(sentinels.into_iter().map(|s| AddedToken::from(s, true).normalized(false)));
            (vocab, 2.min(spm.pieces.len() - 1))
        }
        Class::XlmRoberta => {
            specials = roberta_specials(folder)?;
            let token = |key: &str| specials.iter().find(|(k, _)| *k == key).map(|(_, t)| (t.clone(), 0.0));
            let mut vocab: Vec<(String, f64)> = ["bos_token", "pad_token", "eos_token", "unk_token"]
                .iter()
                .filter_map(|k| token(k))
                .collect();
            vocab.extend(pieces(3));
            vocab.extend(token("mask_token"));
            (vocab, 3)
        }
        Class::Camembert => {
            specials = roberta_specials(folder)?;
            let token = |key: &str| {
                specials.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone()).unwrap_or_default()
            };
            let mut vocab = vec![
                ("<s>NOTUSED".to_string(), 0.0),
                (token("pad_token"), 0.0),
                ("</s>NOTUSED".to_string(), 0.0),
                (token("unk_token"), 0.0),
                ("<unk>NOTUSED".to_string(), -100.0),
            ];
            vocab.extend(pieces(1));
            vocab.push((token("mask_token"), 0.0));
            let unk = token("unk_token");
            let unk_id = vocab.iter().position(|(p, _)| *p == unk).unwrap_or(0);
            if folder.config.get("additional_special_tokens").is_none() {
                extra.extend(
                    ["<s>NOTUSED", "</s>NOTUSED", "<unk>NOTUSED"]
                        .map(|t| AddedToken::from(t, true).normalized(false)),
                );
            }
            (vocab, unk_id)
        }
        Class::Albert => {
            specials =
                ALBERT_SPECIALS.iter().map(|&(key, default)| named(key, default)).collect::<Result<_>>()?;
            (pieces(0).collect(), 1)
        }
    };
    let unigram =
        Unigram::from(vocab, Some(unk_id), false).map_err(|e| Error::format(&path, e.to_string()))?;
    let mut tokenizer = Tokenizer::new(unigram);
    if !spm.precompiled_charsmap.is_empty() {
        let charsmap = Precompiled::from(&spm.precompiled_charsmap)
            .map_err(|e| Error::format(&path, format!("its precompiled charsmap: {e}")))?;
        tokenizer.with_normalizer(Some(NormalizerWrapper::Precompiled(charsmap)));
    }
    for token in extra {
        if token.special {
            tokenizer.add_special_tokens(&[token]);
        } else {
            tokenizer.add_tokens(&[token]);
        }
    }
    super::deberta_v2::add_declared_tokens(folder, &mut tokenizer, &specials)?;
    super::unigram_classes::rebuild_pipeline(folder, &mut tokenizer)?;
    Ok(Some(tokenizer))
}

/// `AlbertTokenizer`'s named special tokens, with its defaults, in transformers' order.
const ALBERT_SPECIALS: &[(&str, &str)] = &[
    ("bos_token", "[CLS]"),
    ("eos_token", "[SEP]"),
    ("unk_token", "<unk>"),
    ("sep_token", "[SEP]"),
    ("pad_token", "<pad>"),
    ("cls_token", "[CLS]"),
    ("mask_token", "[MASK]"),
];

/// T5's sentinels `<extra_id_0>` … for `extra_ids` (default 100).
fn t5_sentinels(folder: &Folder) -> Result<Vec<String>> {
    let extra_ids = match folder.config.get("extra_ids") {
        None | Some(serde_json::Value::Null) => 100,
        Some(v) => {
            v.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|&n| n <= 100_000).ok_or_else(|| {
                Error::format(
                    &folder.config_path,
                    format!("\"extra_ids\" must be a non-negative integer, got {v}"),
                )
            })?
        }
    };
    Ok((0..extra_ids).map(|i| format!("<extra_id_{i}>")).collect())
}

/// The named special tokens of RoBERTa's family of classes (RoBERTa, BART, Blenderbot, XLM-R,
/// CamemBERT) with their defaults, in transformers' order of the attributes (the order it adds
/// those the vocabulary lacks in).
pub(super) const ROBERTA_SPECIALS: &[(&str, &str)] = &[
    ("bos_token", "<s>"),
    ("eos_token", "</s>"),
    ("unk_token", "<unk>"),
    ("sep_token", "</s>"),
    ("pad_token", "<pad>"),
    ("cls_token", "<s>"),
    ("mask_token", "<mask>"),
];

/// XLM-R's and CamemBERT's named special tokens ([`ROBERTA_SPECIALS`], as the folder sets them).
fn roberta_specials(folder: &Folder) -> Result<Vec<(&'static str, String)>> {
    ROBERTA_SPECIALS
        .iter()
        .map(|&(key, default)| Ok((key, folder.token(key)?.unwrap_or(default).to_string())))
        .collect()
}
