//! transformers 5 rebuilds the pipelines of mBART's tokenizer classes in their `__init__`, whatever
//! `tokenizer.json` holds. Of the file they keep the Unigram vocabulary (the unknown piece at id 3,
//! no byte fallback) and its added tokens; texts are framed by their source language (`src_lang`,
//! `en_XX` by default):
//! - `MBartTokenizer` (mbart-large-cc25): no normalizer at all (the file's charsmap is dropped),
//!   texts split on whitespace before a `Metaspace` that prepends `▁` to every word;
//!   `A </s> src_lang`, `A B </s> src_lang`;
//! - `MBart50Tokenizer` (mbart-large-50): the file's `Precompiled` step, then runs of spaces made
//!   one, `Metaspace` alone; `src_lang A </s>`, `src_lang A B </s>`.

use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::utils::Sequence as NormalizerSequence;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::Tokenizer;

use super::folder::Folder;
use super::nllb::LanguageFrame;
use crate::error::{Error, Result};

/// `MBartTokenizer`'s and `MBart50Tokenizer`'s pad token when the folder names none.
pub(super) const PAD: &str = "<pad>";

/// The classes, and the model types whose tokenizer they are when `tokenizer_config.json` names
/// none (transformers 5.24's `TOKENIZER_MAPPING_NAMES`).
const MBART: (&[&str], &str) = (&["MBartTokenizer", "MBartTokenizerFast"], "mbart");
const MBART50: (&[&str], &str) = (&["MBart50Tokenizer", "MBart50TokenizerFast"], "mbart50");

/// Gives a Unigram tokenizer of an mBART-tokenizer folder the pipeline transformers 5 builds (see
/// the module docs). Returns its language frame when it did.
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<Option<LanguageFrame>> {
    if !matches!(tokenizer.get_model(), ModelWrapper::Unigram(_)) {
        return Ok(None);
    }
    let is = |(classes, model_type): (&[&str], &str)| -> Result<bool> {
        Ok(match folder.class() {
            Some(class) => classes.contains(&class),
            None => folder.model_type()? == Some(model_type),
        })
    };
    let fifty = if is(MBART)? {
        false
    } else if is(MBART50)? {
        true
    } else {
        return Ok(None);
    };
    super::unigram_classes::set_unigram_unk_id(folder, tokenizer, 3)?;
    let bad = |e: tokenizers::Error| Error::format(&folder.config_path, e.to_string());
    let metaspace = Metaspace::new('▁', PrependScheme::Always, true);
    if fifty {
        let spaces = NormalizerWrapper::Replace(
            Replace::new(ReplacePattern::Regex(" {2,}".into()), " ").map_err(bad)?,
        );
        let steps = super::unigram_classes::precompiled_step(tokenizer).into_iter().chain([spaces]).collect();
        tokenizer.with_normalizer(Some(NormalizerWrapper::Sequence(NormalizerSequence::new(steps))));
        tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Metaspace(metaspace.clone())));
    } else {
        tokenizer.with_normalizer(None::<NormalizerWrapper>);
        tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
            PreTokenizerWrapper::WhitespaceSplit(WhitespaceSplit),
            PreTokenizerWrapper::Metaspace(metaspace.clone()),
        ]))));
    }
    tokenizer.with_decoder(Some(DecoderWrapper::Metaspace(metaspace)));
    let frame = LanguageFrame::of_folder(folder, tokenizer, !fifty)?;
    frame
        .set_source(tokenizer, &LanguageFrame::configured_source(folder, "en_XX")?)
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    Ok(Some(frame))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use crate::tokenizer::golden_check::check_against;
    use crate::tokenizer::HfTokenizer;

    /// A small mBART-style Unigram `tokenizer.json` (Precompiled and Replace normalizer,
    /// `Metaspace`, the fairseq language codes as added tokens, the `$A </s> en_XX` template) under
    /// `MBartTokenizer` and `MBart50Tokenizer` configs, with their default and another source
    /// language: single texts, a padded batch and decoded ids as transformers 5.24 gives them
    /// (`make_mbart_tokenizer_golden.py`); another source language set later frames as the config's.
    #[test]
    fn mbart_tokenizers_tokenize_as_transformers_5() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures.join("mbart_tokenizer_expected.json")).unwrap(),
        )
        .unwrap();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let load = |name: &str, config: &Value| {
            let dir = std::env::temp_dir().join(format!("oxtorch-mbart-tok-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(fixtures.join("tokenizers/mbart_unigram.json"), dir.join("tokenizer.json"))
                .unwrap();
            std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
            let tok = HfTokenizer::load(&dir, None).unwrap();
            std::fs::remove_dir_all(&dir).ok();
            tok
        };
        for (name, config) in golden["configs"].as_object().unwrap() {
            check_against(&load(name, config), &texts, &golden["ids"][name], name);
        }
        for (plain, language, framed) in [("mbart", "fr_XX", "mbart_fr"), ("mbart50", "de_DE", "mbart50_de")]
        {
            let mut tok = load(plain, &golden["configs"][plain]);
            tok.set_source_language(language).unwrap();
            check_against(&tok, &texts, &golden["ids"][framed], &format!("{plain} set to {language}"));
        }
    }
}
