//! transformers 5 rebuilds a Gemma tokenizer's pipeline in `GemmaTokenizer.__init__`, whatever
//! `tokenizer.json` holds: spaces become `▁` (nothing is prepended), the text is split after each
//! space, the BPE has byte fallback and fused unknowns, and the decoder turns `▁` back into spaces
//! and bytes into characters. The file's post-processor is kept. `GemmaTokenizer` pads on the left
//! with `<pad>` unless told otherwise.

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::Replace;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::split::Split;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

use super::folder::Folder;
use crate::error::{Error, Result};

/// `GemmaTokenizer`'s pad token when `tokenizer_config.json` names none.
pub(super) const PAD: &str = "<pad>";

/// The tokenizer classes built as `GemmaTokenizer`.
const CLASSES: &[&str] = &["GemmaTokenizer", "GemmaTokenizerFast"];

/// The model types whose tokenizer is a `GemmaTokenizer` when `tokenizer_config.json` names no
/// class (transformers 5.24's `TOKENIZER_MAPPING_NAMES`).
const MODEL_TYPES: &[&str] = &["gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text"];

/// Gives a BPE tokenizer of a Gemma-tokenizer folder the pipeline transformers 5 builds (see the
/// module docs). Returns whether it did (the folder's tokenizer is then a `GemmaTokenizer`).
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<bool> {
    let ModelWrapper::BPE(bpe) = tokenizer.get_model() else { return Ok(false) };
    let is_gemma = match folder.class() {
        Some(class) => CLASSES.contains(&class),
        None => folder.model_type()?.is_some_and(|t| MODEL_TYPES.contains(&t)),
    };
    if !is_gemma {
        return Ok(false);
    }
    if !bpe.byte_fallback || !bpe.fuse_unk || bpe.dropout.is_some() {
        let mut bpe = bpe.clone();
        bpe.byte_fallback = true;
        bpe.fuse_unk = true;
        bpe.dropout = None;
        tokenizer.with_model(ModelWrapper::BPE(bpe));
    }
    let bad = |e: tokenizers::Error| Error::format(&folder.config_path, e.to_string());
    tokenizer.with_normalizer(Some(NormalizerWrapper::Replace(Replace::new(" ", "▁").map_err(bad)?)));
    let split = Split::new(" ", SplitDelimiterBehavior::MergedWithPrevious, false).map_err(bad)?;
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Split(split)));
    tokenizer.with_decoder(Some(DecoderWrapper::Sequence(Sequence::new(vec![
        DecoderWrapper::Replace(Replace::new("▁", " ").map_err(bad)?),
        DecoderWrapper::ByteFallback(ByteFallback::new()),
        DecoderWrapper::Fuse(Fuse::new()),
    ]))));
    Ok(true)
}
