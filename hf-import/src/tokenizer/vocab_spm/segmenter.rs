//! A SentencePiece model as the slow tokenizers run it: its segmentation (normalizer, then the
//! Unigram's Viterbi pass or the BPE's merges over the whole text) and its piece joining
//! (`DecodePieces`).

use std::collections::HashMap;
use std::path::Path;

use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::{NormalizerWrapper, Prepend, Sequence};
use tokenizers::Tokenizer;

use super::super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use super::charsmap::Charsmap;
use crate::error::{Error, Result};

/// The model's segmentation as SentencePiece cuts a text: its normalizer (the precompiled
/// charsmap, returned apart as SentencePiece applies it ([`Charsmap`]), for the caller to apply
/// first; then leading, trailing and repeated spaces dropped, a space put first, spaces written
/// `▁`, each as the model says), then its Unigram's Viterbi pass over the whole text (control and
/// unused pieces never matched, user-defined ones with SentencePiece's bonus) or its BPE's merges
/// (as transformers generates them from the pieces); unknown runs fused, their text kept (Unigram)
/// or `unk_token` (BPE).
pub(super) fn segmenter(
    spm: &SpmModel,
    path: &Path,
    unk_token: &str,
) -> Result<(Tokenizer, Option<Charsmap>)> {
    let mut tokenizer = match spm.model_type {
        SpmModelType::Unigram => Tokenizer::new(unigram(spm, path)?),
        SpmModelType::Bpe => {
            Tokenizer::new(super::super::llama_spm::bpe_model(spm, path, spm.byte_fallback, Some(unk_token))?)
        }
        SpmModelType::Other => {
            return Err(Error::format(path, "only Unigram and BPE SentencePiece models are supported"))
        }
    };
    let regex = |pattern: &str, with: &str| -> Result<NormalizerWrapper> {
        Replace::new(ReplacePattern::Regex(pattern.into()), with)
            .map(NormalizerWrapper::Replace)
            .map_err(|e| Error::format(path, e.to_string()))
    };
    let mut steps = Vec::new();
    let charsmap = match spm.precompiled_charsmap.is_empty() {
        true => None,
        false => Some(
            Charsmap::parse(&spm.precompiled_charsmap)
                .map_err(|e| Error::format(path, format!("its precompiled charsmap: {e}")))?,
        ),
    };
    if spm.whitespace.remove_extra {
        steps.push(regex(r"\A +| +\z", "")?);
        steps.push(regex(" {2,}", " ")?);
    }
    if spm.whitespace.add_dummy_prefix {
        steps.push(NormalizerWrapper::Prepend(Prepend::new(" ".into())));
    }
    if spm.whitespace.escape {
        steps.push(regex(" ", "▁")?);
    }
    tokenizer.with_normalizer(Some(NormalizerWrapper::Sequence(Sequence::new(steps))));
    Ok((tokenizer, charsmap))
}

/// The Unigram of a SentencePiece Unigram model: its normal and byte pieces with their scores,
/// user-defined ones with SentencePiece's bonus (the piece's length times the best score, less
/// 0.1), the unknown piece; control and unused pieces left out (never matched).
fn unigram(spm: &SpmModel, path: &Path) -> Result<Unigram> {
    let max_score =
        spm.pieces.iter().filter(|p| p.kind == PieceKind::Normal).map(|p| p.score).fold(0f32, f32::max);
    let mut vocab: Vec<(String, f64)> = Vec::new();
    let mut unk_id = None;
    for piece in &spm.pieces {
        let score = match piece.kind {
            PieceKind::Normal | PieceKind::Byte => piece.score,
            PieceKind::UserDefined => piece.piece.chars().count() as f32 * max_score - 0.1,
            PieceKind::Unknown => {
                unk_id = Some(vocab.len());
                piece.score
            }
            PieceKind::Control | PieceKind::Unused => continue,
        };
        vocab.push((piece.piece.clone(), f64::from(score)));
    }
    let unk_id = unk_id.ok_or_else(|| Error::format(path, "the model has no unknown piece"))?;
    Unigram::from(vocab, Some(unk_id), spm.byte_fallback).map_err(|e| Error::format(path, e.to_string()))
}

/// How a SentencePiece model joins pieces back into text (`DecodePieces`): its own pieces with
/// `▁` read as a space (the spaces before the first letter dropped when the model adds a dummy
/// prefix), control pieces as nothing, the unknown piece as ` ⁇ `, pieces it does not know as
/// written.
#[derive(Clone)]
pub(super) struct PieceJoiner {
    /// the model's pieces' kinds
    kinds: HashMap<String, PieceKind>,
    /// its pieces by id (Marian's fallback for ids outside its vocabulary)
    pub by_id: Vec<String>,
    /// the model adds a dummy prefix (dropped again at the start)
    drops_leading_space: bool,
}

impl PieceJoiner {
    pub fn new(spm: &SpmModel) -> Self {
        PieceJoiner {
            kinds: spm.pieces.iter().map(|p| (p.piece.clone(), p.kind)).collect(),
            by_id: spm.pieces.iter().map(|p| p.piece.clone()).collect(),
            drops_leading_space: spm.whitespace.add_dummy_prefix,
        }
    }

    /// The text of `pieces`.
    pub fn join(&self, pieces: &[String]) -> String {
        let mut text = String::new();
        let mut at_start = true;
        for piece in pieces {
            match self.kinds.get(piece) {
                None => {
                    text.push_str(piece);
                    at_start = false;
                }
                Some(PieceKind::Control) => {}
                Some(PieceKind::Unknown) => {
                    text.push_str(" \u{2047} ");
                    at_start = false;
                }
                Some(_) => {
                    let spaced = piece.replace('▁', " ");
                    let spaced = match at_start && self.drops_leading_space {
                        true => spaced.trim_start_matches(' '),
                        false => &spaced,
                    };
                    at_start &= spaced.is_empty();
                    text.push_str(spaced);
                }
            }
        }
        text
    }
}
