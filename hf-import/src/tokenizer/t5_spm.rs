//! A T5 / mT5 tokenizer folder with a SentencePiece `spiece.model` and no `tokenizer.json`
//! (google/t5-v1_1-*, google/mt5-*), built as transformers 5 builds it: a Unigram over the model's
//! pieces and scores with `extra_ids` sentinels (`<extra_id_{n-1}>` … `<extra_id_0>`, score 0)
//! appended, the model's precompiled charsmap as its normalizer; control pieces and the sentinels
//! as special added tokens, user-defined pieces as plain ones, the declared added tokens at their
//! ids; then `T5Tokenizer`'s pipeline ([`super::unigram_classes::rebuild_pipeline`]).

use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::{AddedToken, Tokenizer};

use super::folder::Folder;
use super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use crate::error::{Error, Result};

/// The SentencePiece model's file name in a T5 tokenizer folder.
pub(super) const SPM_FILE: &str = "spiece.model";

/// The tokenizer of a T5 folder without `tokenizer.json`, from its `spiece.model`; `None` when
/// the folder has no such model or its tokenizer is of another class.
pub(super) fn from_spm(folder: &Folder) -> Result<Option<Tokenizer>> {
    let path = folder.dir.join(SPM_FILE);
    if !path.is_file() || !super::unigram_classes::is_t5(folder)? {
        return Ok(None);
    }
    let spm = SpmModel::read(&path)?;
    if spm.model_type != SpmModelType::Unigram {
        return Err(Error::format(&path, "T5Tokenizer needs a Unigram SentencePiece model"));
    }
    let extra_ids = match folder.config.get("extra_ids") {
        None | Some(serde_json::Value::Null) => 100,
        Some(v) => v.as_u64().and_then(|n| usize::try_from(n).ok()).ok_or_else(|| {
            Error::format(
                &folder.config_path,
                format!("\"extra_ids\" must be a non-negative integer, got {v}"),
            )
        })?,
    };
    let sentinels: Vec<String> = (0..extra_ids).map(|i| format!("<extra_id_{i}>")).collect();
    let mut vocab: Vec<(String, f64)> =
        spm.pieces.iter().map(|p| (p.piece.clone(), f64::from(p.score))).collect();
    vocab.extend(sentinels.iter().rev().map(|s| (s.clone(), 0.0)));
    // (`T5Tokenizer` sets the unknown piece at id 2; `rebuild_pipeline` checks it.)
    let unigram = Unigram::from(vocab, Some(2.min(spm.pieces.len() - 1)), false)
        .map_err(|e| Error::format(&path, e.to_string()))?;
    let mut tokenizer = Tokenizer::new(unigram);
    if !spm.precompiled_charsmap.is_empty() {
        let charsmap = Precompiled::from(&spm.precompiled_charsmap)
            .map_err(|e| Error::format(&path, format!("its precompiled charsmap: {e}")))?;
        tokenizer.with_normalizer(Some(NormalizerWrapper::Precompiled(charsmap)));
    }
    let pieces = spm.pieces.iter().filter(|p| matches!(p.kind, PieceKind::Control | PieceKind::UserDefined));
    for piece in pieces {
        let token = AddedToken::from(piece.piece.clone(), piece.kind == PieceKind::Control).normalized(false);
        if token.special {
            tokenizer.add_special_tokens(&[token]);
        } else {
            tokenizer.add_tokens(&[token]);
        }
    }
    let sentinels: Vec<AddedToken> =
        sentinels.into_iter().map(|s| AddedToken::from(s, true).normalized(false)).collect();
    tokenizer.add_special_tokens(&sentinels);
    let named = |key: &str, default: &str| -> Result<String> {
        Ok(folder.token(key)?.unwrap_or(default).to_string())
    };
    let specials = [
        ("eos_token", named("eos_token", "</s>")?),
        ("unk_token", named("unk_token", "<unk>")?),
        ("pad_token", named("pad_token", "<pad>")?),
    ];
    super::deberta_v2::add_declared_tokens(folder, &mut tokenizer, &specials)?;
    super::unigram_classes::rebuild_pipeline(folder, &mut tokenizer)?;
    Ok(Some(tokenizer))
}
