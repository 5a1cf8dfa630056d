//! A Pegasus tokenizer folder with a SentencePiece `spiece.model` and no `tokenizer.json`
//! (google/pegasus-*), built as transformers 5 builds it (`PegasusConverter.convert_from_spm`, then
//! `PegasusTokenizer.__init__`): a Unigram over `<pad>`, `</s>`, the two mask tokens (the config's
//! `mask_token`, default `<mask_1>`, then its `mask_token_sent`, default `<mask_2>`), the fillers
//! `<unk_2>` … `<unk_{offset-1}>` (score -100) and the model's pieces after its first two, the
//! unknown piece the class's `unk_token`; the precompiled charsmap (else newlines made spaces) and
//! space runs made one; `Metaspace` splitting and decoding; `A </s>` and `A B </s>`; all of those
//! tokens special.

use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::{NormalizerWrapper, Sequence};
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

use super::folder::Folder;
use super::sentencepiece::{SpmModel, SpmModelType};
use crate::error::{Error, Result};

/// The SentencePiece model's file name.
const SPM_FILE: &str = "spiece.model";

/// The pad token of the class.
pub(super) const PAD: &str = "<pad>";

/// Whether the folder's tokenizer is a `PegasusTokenizer`: the class named, or without one,
/// `config.json`'s model type `pegasus` or `pegasus_x`.
fn is_pegasus(folder: &Folder) -> Result<bool> {
    folder.is_class(&["PegasusTokenizer", "PegasusTokenizerFast"], &["pegasus", "pegasus_x"])
}

/// Whether the folder holds a Pegasus `spiece.model` that [`from_spm`] reads.
pub(super) fn is_pegasus_spm(folder: &Folder) -> Result<bool> {
    Ok(folder.dir.join(SPM_FILE).is_file() && is_pegasus(folder)?)
}

/// The tokenizer of a Pegasus folder without `tokenizer.json`, from its `spiece.model`; `None`
/// when the folder has no such model or its tokenizer is of another class.
pub(super) fn from_spm(folder: &Folder) -> Result<Option<Tokenizer>> {
    if !is_pegasus_spm(folder)? {
        return Ok(None);
    }
    let path = folder.dir.join(SPM_FILE);
    let spm = SpmModel::read(&path)?;
    if spm.model_type != SpmModelType::Unigram {
        return Err(Error::format(&path, "PegasusTokenizer needs a Unigram SentencePiece model"));
    }
    let named = |key: &str, default: &str| -> Result<String> {
        Ok(folder.token(key)?.unwrap_or(default).to_string())
    };
    let (pad, eos, unk) =
        (named("pad_token", PAD)?, named("eos_token", "</s>")?, named("unk_token", "<unk>")?);
    // (`convert_from_spm`'s defaults, the other way round from the class's.)
    let (mask, mask_sent) = (named("mask_token", "<mask_1>")?, named("mask_token_sent", "<mask_2>")?);
    let offset = match folder.config.get("offset") {
        None | Some(serde_json::Value::Null) => 103,
        Some(v) => v.as_u64().filter(|&o| o <= 100_000).ok_or_else(|| {
            Error::format(
                &folder.config_path,
                format!("\"offset\" must be a small non-negative integer, got {v}"),
            )
        })?,
    };
    let mut vocab: Vec<(String, f64)> = vec![(pad.clone(), 0.0), (eos.clone(), 0.0)];
    if mask != "None" {
        vocab.push((mask.clone(), 0.0));
    }
    if mask_sent != "None" && mask_sent != mask {
        vocab.push((mask_sent.clone(), 0.0));
    }
    let fillers: Vec<String> = (2..offset).map(|i| format!("<unk_{i}>")).collect();
    vocab.extend(fillers.iter().map(|f| (f.clone(), -100.0)));
    vocab.extend(spm.pieces.iter().skip(2).map(|p| (p.piece.clone(), f64::from(p.score))));
    let unk_id =
        vocab.iter().skip(1).position(|(p, s)| *p == unk && *s == 0.0).map(|i| i + 1).ok_or_else(|| {
            Error::format(
                &path,
                format!("the unk_token {unk:?} (tokenizer_config.json's, else <unk>) is not among the model's pieces with score 0"),
            )
        })?;
    let unigram =
        Unigram::from(vocab, Some(unk_id), false).map_err(|e| Error::format(&path, e.to_string()))?;
    let mut tokenizer = Tokenizer::new(unigram);
    let bad = |e: Box<dyn std::error::Error + Send + Sync>| Error::format(&path, e.to_string());
    let spaces = Replace::new(ReplacePattern::Regex(" {2,}".into()), " ").map_err(bad)?;
    let first = if spm.precompiled_charsmap.is_empty() {
        NormalizerWrapper::Replace(Replace::new(ReplacePattern::Regex("\n".into()), " ").map_err(bad)?)
    } else {
        let charsmap = Precompiled::from(&spm.precompiled_charsmap)
            .map_err(|e| Error::format(&path, format!("its precompiled charsmap: {e}")))?;
        NormalizerWrapper::Precompiled(charsmap)
    };
    tokenizer.with_normalizer(Some(NormalizerWrapper::Sequence(Sequence::new(vec![
        first,
        NormalizerWrapper::Replace(spaces),
    ]))));
    tokenizer.with_pre_tokenizer(Some(Metaspace::new('▁', PrependScheme::Always, true)));
    tokenizer.with_decoder(Some(DecoderWrapper::Metaspace(Metaspace::new('▁', PrependScheme::Always, true))));
    let mut specials: Vec<(&'static str, String)> = vec![
        ("pad_token", pad),
        ("eos_token", eos.clone()),
        ("unk_token", unk),
        ("mask_token", mask),
        ("mask_token_sent", mask_sent),
    ];
    specials.retain(|(_, t)| t != "None");
    specials.extend(fillers.into_iter().map(|f| ("additional_special_tokens", f)));
    super::deberta_v2::add_declared_tokens(folder, &mut tokenizer, &specials)?;
    let eos_id = tokenizer.token_to_id(&eos).ok_or_else(|| {
        Error::format(&folder.config_path, format!("the eos_token {eos:?} is not in the vocabulary"))
    })?;
    let template = TemplateProcessing::builder()
        .try_single(format!("$A {eos}"))
        .and_then(|b| b.try_pair(format!("$A $B {eos}")))
        .map_err(|e| Error::format(&folder.config_path, e))?
        .special_tokens(vec![(eos, eos_id)])
        .build()
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    Ok(Some(tokenizer))
}
