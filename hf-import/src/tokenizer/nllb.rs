//! transformers 5 rebuilds an NLLB-200 tokenizer's pipeline in `NllbTokenizer.__init__`, whatever
//! `tokenizer.json` holds: of the file it keeps the BPE vocabulary and merges (the model rebuilt
//! with fused unknowns, no byte fallback, no dropout), its added tokens and its `Precompiled`
//! normalizer step, followed by runs of spaces made one (no normalizer without that step); a
//! `Metaspace` pre-tokenizer and decoder that prepend `▁` to every word. Texts are framed by their
//! source language: `src_lang A </s>` (`src_lang` from `tokenizer_config.json`, `eng_Latn` by
//! default), or with `legacy_behaviour` `A </s> src_lang`, as the older files' template says.
//! [`LanguageFrame`] sets another source language later (the CLI's `--src-lang`).

use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::utils::Sequence as NormalizerSequence;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// The tokenizer classes built as `NllbTokenizer`.
const CLASSES: &[&str] = &["NllbTokenizer", "NllbTokenizerFast"];

/// `NllbTokenizer`'s pad token when `tokenizer_config.json` names none.
pub(super) const PAD: &str = "<pad>";

/// `NllbTokenizer`'s source language when `tokenizer_config.json` names none.
const DEFAULT_SOURCE: &str = "eng_Latn";

/// How an NLLB tokenizer frames a text with its source language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LanguageFrame {
    /// the end-of-sequence token and its id
    eos: (String, u32),
    /// `legacy_behaviour`: the language code after `</s>` rather than first
    legacy: bool,
}

impl LanguageFrame {
    /// The frame of a folder's tokenizer: its `eos_token` (`</s>` by default), the language code
    /// first or (`legacy`) last.
    pub fn of_folder(folder: &Folder, tokenizer: &Tokenizer, legacy: bool) -> Result<Self> {
        let eos = folder.token("eos_token")?.unwrap_or("</s>").to_string();
        let eos_id = tokenizer.token_to_id(&eos).ok_or_else(|| {
            Error::format(&folder.config_path, format!("the eos_token {eos:?} is not in the vocabulary"))
        })?;
        Ok(LanguageFrame { eos: (eos, eos_id), legacy })
    }

    /// `tokenizer_config.json`'s `src_lang`, `default` when absent or null.
    pub fn configured_source(folder: &Folder, default: &str) -> Result<String> {
        match folder.config.get("src_lang") {
            None | Some(serde_json::Value::Null) => Ok(default.to_string()),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(v) => {
                Err(Error::format(&folder.config_path, format!("\"src_lang\" must be a string, got {v}")))
            }
        }
    }

    /// Frames `tokenizer`'s texts with the language code `code` (a token of its vocabulary, such as
    /// `fra_Latn`), as `NllbTokenizer.set_src_lang_special_tokens`.
    pub fn set_source(&self, tokenizer: &mut Tokenizer, code: &str) -> Result<()> {
        let id = tokenizer.token_to_id(code).ok_or_else(|| {
            Error::Input(format!(
                "the source language {code:?} is not a token of the tokenizer (such as eng_Latn)"
            ))
        })?;
        let eos = &self.eos.0;
        let (single, pair) = if self.legacy {
            (format!("$A:0 {eos}:0 {code}:0"), format!("$A:0 $B:0 {eos}:0 {code}:0"))
        } else {
            (format!("{code}:0 $A:0 {eos}:0"), format!("{code}:0 $A:0 $B:0 {eos}:0"))
        };
        let bad = |e: String| Error::Input(format!("the source language {code:?}: {e}"));
        let template = TemplateProcessing::builder()
            .try_single(single)
            .and_then(|b| b.try_pair(pair))
            .map_err(bad)?
            .special_tokens(vec![self.eos.clone(), (code.to_string(), id)])
            .build()
            .map_err(|e| bad(e.to_string()))?;
        tokenizer.with_post_processor(Some(template));
        Ok(())
    }
}

/// Gives a BPE tokenizer of an `NllbTokenizer` folder the pipeline transformers 5 builds (see the
/// module docs). Returns its language frame when it did.
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<Option<LanguageFrame>> {
    let ModelWrapper::BPE(bpe) = tokenizer.get_model() else { return Ok(None) };
    if !folder.class().is_some_and(|c| CLASSES.contains(&c)) {
        return Ok(None);
    }
    let bad = |e: tokenizers::Error| Error::format(&folder.config_path, e.to_string());
    let mut bpe = bpe.clone();
    bpe.dropout = None;
    bpe.unk_token = Some(folder.token("unk_token")?.unwrap_or("<unk>").to_string());
    bpe.fuse_unk = true;
    bpe.byte_fallback = false;
    tokenizer.with_model(ModelWrapper::BPE(bpe));
    let precompiled = super::unigram_classes::precompiled_step(tokenizer);
    let normalizer = match precompiled {
        Some(p) => {
            let spaces = Replace::new(ReplacePattern::Regex(" {2,}".into()), " ").map_err(bad)?;
            Some(NormalizerWrapper::Sequence(NormalizerSequence::new(vec![
                p,
                NormalizerWrapper::Replace(spaces),
            ])))
        }
        None => None,
    };
    tokenizer.with_normalizer(normalizer);
    let metaspace = Metaspace::new('▁', PrependScheme::Always, true);
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Metaspace(metaspace.clone())));
    tokenizer.with_decoder(Some(DecoderWrapper::Metaspace(metaspace)));
    let frame =
        LanguageFrame::of_folder(folder, tokenizer, folder.flag("legacy_behaviour")?.unwrap_or(false))?;
    let source = LanguageFrame::configured_source(folder, DEFAULT_SOURCE)?;
    frame.set_source(tokenizer, &source).map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    Ok(Some(frame))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use crate::tokenizer::golden_check::check_against;
    use crate::tokenizer::HfTokenizer;

    /// A small NLLB-style BPE `tokenizer.json` (Precompiled and Replace normalizer, `Metaspace`,
    /// language codes as added tokens, the older suffix template) under several
    /// `tokenizer_config.json`s: single texts, a padded batch and decoded ids as transformers 5.24
    /// gives them (`make_nllb_tokenizer_golden.py`). The generic class keeps the file's pipeline;
    /// `NllbTokenizer` frames texts with its source language, first or (legacy) last.
    #[test]
    fn nllb_tokenizers_tokenize_as_transformers_5() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures.join("nllb_tokenizer_expected.json")).unwrap(),
        )
        .unwrap();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        for (name, config) in golden["configs"].as_object().unwrap() {
            let dir = std::env::temp_dir().join(format!("oxtorch-nllb-tok-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(fixtures.join("tokenizers/nllb_bpe.json"), dir.join("tokenizer.json")).unwrap();
            std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
            let tok = HfTokenizer::load(&dir, None).unwrap();
            check_against(&tok, &texts, &golden["ids"][name], name);
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
