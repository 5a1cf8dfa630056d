//! transformers 5 rebuilds the pipeline of the SentencePiece Unigram tokenizer classes in their
//! `__init__`, whatever `tokenizer.json` holds. Of the file they keep the Unigram vocabulary (with
//! its added tokens; the unknown piece is the class's: id 3 for XLM-R, 2 for T5, 1 for ALBERT,
//! CamemBERT's `unk_token`'s, and no byte fallback) and the `Precompiled` normalizer step (only
//! that step: without one there is none); texts are split on whitespace before the `Metaspace` pre-tokenizer (so trailing or
//! repeated whitespace makes no `▁` piece of its own, which the file's own pipeline would). Per
//! class:
//! - `XLMRobertaTokenizer` and `CamembertTokenizer`: `▁` prepended to every word unless
//!   `add_prefix_space` is false; `<s> A </s>` and `<s> A </s> </s> B </s>` (the config's
//!   `bos_token` and `eos_token`), every token of type 0;
//! - `T5Tokenizer`: `▁` always prepended; `A </s>` and `A </s> B </s>` (its `eos_token`), type 0;
//! - `AlbertTokenizer`: ``` `` ``` and `''` as `"`, NFKD and accents stripped unless
//!   `keep_accents`, lowercased unless `do_lower_case` is false, before the `Precompiled` step;
//!   `▁` prepended unless `add_prefix_space` is false; the file's post-processor, or without one
//!   `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]` (its `cls_token` and `sep_token`), B's tokens of
//!   type 1.

use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::unigram::Unigram;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::Replace;
use tokenizers::normalizers::strip::StripAccents;
use tokenizers::normalizers::unicode::NFKD;
use tokenizers::normalizers::utils::{Lowercase, Sequence as NormalizerSequence};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// The pad token of these classes when `tokenizer_config.json` names none.
pub(super) const PAD: &str = "<pad>";

/// A tokenizer class whose pipeline transformers 5 rebuilds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// `XLMRobertaTokenizer`
    XlmRoberta,
    /// `CamembertTokenizer` (XLM-R's pipeline, its own unknown piece)
    Camembert,
    /// `T5Tokenizer`
    T5,
    /// `AlbertTokenizer`
    Albert,
}

/// The class names (with and without `Fast`) and the model types (`config.json`) whose tokenizer is
/// that class when `tokenizer_config.json` names none (transformers 5.24's `TOKENIZER_MAPPING_NAMES`).
const CLASSES: &[(Class, &[&str], &[&str])] = &[
    (
        Class::XlmRoberta,
        &["XLMRobertaTokenizer", "XLMRobertaTokenizerFast"],
        &["xlm-roberta", "gte", "jina_embeddings_v3", "metaclip_2", "trocr", "xmod"],
    ),
    (Class::Camembert, &["CamembertTokenizer", "CamembertTokenizerFast"], &["camembert"]),
    (
        Class::T5,
        &["T5Tokenizer", "T5TokenizerFast"],
        &["t5", "mt5", "musicgen", "musicgen_melody", "switch_transformers"],
    ),
    (Class::Albert, &["AlbertTokenizer", "AlbertTokenizerFast"], &["albert", "yoso"]),
];

/// The class of the folder's tokenizer, when it is one of [`CLASSES`]: the one
/// `tokenizer_config.json` names, or without one, the model type's.
pub(super) fn class_of(folder: &Folder) -> Result<Option<Class>> {
    Ok(match folder.class() {
        Some(name) => CLASSES.iter().find(|(_, names, _)| names.contains(&name)).map(|c| c.0),
        None => {
            let model_type = folder.model_type()?;
            CLASSES.iter().find(|(_, _, types)| model_type.is_some_and(|t| types.contains(&t))).map(|c| c.0)
        }
    })
}

/// Gives a Unigram tokenizer of a folder of one of these classes the pipeline transformers 5
/// builds (see the module docs). Returns whether it did (the folder's tokenizer is then of that
/// class, which pads with [`PAD`] on the right).
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<bool> {
    if !matches!(tokenizer.get_model(), ModelWrapper::Unigram(_)) {
        return Ok(false);
    }
    let Some(class) = class_of(folder)? else { return Ok(false) };
    let unk_id = match class {
        Class::XlmRoberta => 3,
        Class::T5 => 2,
        Class::Albert => 1,
        Class::Camembert => {
            let unk = folder.token("unk_token")?.unwrap_or("<unk>");
            unigram_vocab(tokenizer).iter().position(|(piece, _)| piece == unk).unwrap_or(0)
        }
    };
    set_unigram_unk_id(folder, tokenizer, unk_id)?;
    let add_prefix_space = class == Class::T5 || folder.flag("add_prefix_space")?.unwrap_or(true);
    let scheme = if add_prefix_space { PrependScheme::Always } else { PrependScheme::Never };
    let precompiled = precompiled_step(tokenizer);
    let normalizer = match class {
        Class::Albert => {
            let replace = |from: &str| {
                Replace::new(from, "\"").map_err(|e| Error::format(&folder.config_path, e.to_string()))
            };
            let mut steps =
                vec![NormalizerWrapper::Replace(replace("``")?), NormalizerWrapper::Replace(replace("''")?)];
            if !folder.flag("keep_accents")?.unwrap_or(false) {
                steps.push(NormalizerWrapper::NFKD(NFKD));
                steps.push(NormalizerWrapper::StripAccents(StripAccents));
            }
            if folder.flag("do_lower_case")?.unwrap_or(true) {
                steps.push(NormalizerWrapper::Lowercase(Lowercase));
            }
            steps.extend(precompiled);
            Some(NormalizerWrapper::Sequence(NormalizerSequence::new(steps)))
        }
        _ => precompiled,
    };
    tokenizer.with_normalizer(normalizer);
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
        PreTokenizerWrapper::WhitespaceSplit(WhitespaceSplit),
        PreTokenizerWrapper::Metaspace(Metaspace::new('▁', scheme, true)),
    ]))));
    tokenizer.with_decoder(Some(DecoderWrapper::Metaspace(Metaspace::new('▁', scheme, true))));
    // The special tokens are strings or `AddedToken` objects (`{"content": ...}`).
    let token = |key: &str, default: &str| -> Result<(String, u32)> {
        let name = folder.token(key)?.unwrap_or(default);
        let id = tokenizer.token_to_id(name).ok_or_else(|| {
            Error::format(&folder.config_path, format!("the {key} {name:?} is not in the vocabulary"))
        })?;
        Ok((name.to_string(), id))
    };
    let (single, pair, specials) = match class {
        Class::XlmRoberta | Class::Camembert => {
            let (bos, eos) = (token("bos_token", "<s>")?, token("eos_token", "</s>")?);
            let single = format!("{}:0 $A:0 {}:0", bos.0, eos.0);
            (single, format!("{0}:0 $A:0 {1}:0 {1}:0 $B:0 {1}:0", bos.0, eos.0), vec![bos, eos])
        }
        Class::T5 => {
            let eos = token("eos_token", "</s>")?;
            (format!("$A:0 {}:0", eos.0), format!("$A:0 {0}:0 $B:0 {0}:0", eos.0), vec![eos])
        }
        // `AlbertTokenizer` sets its template before the backend's `__init__`, which puts the file's
        // post-processor back: the template only frames texts for a file without one.
        Class::Albert if tokenizer.get_post_processor().is_some() => return Ok(true),
        Class::Albert => {
            // (transformers names them `[CLS]` and `[SEP]` in the template, at the tokens' ids.)
            let (cls, sep) = (token("cls_token", "[CLS]")?, token("sep_token", "[SEP]")?);
            let specials = vec![("[CLS]".to_string(), cls.1), ("[SEP]".to_string(), sep.1)];
            ("[CLS]:0 $A:0 [SEP]:0".to_string(), "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1".to_string(), specials)
        }
    };
    let template = TemplateProcessing::builder()
        .try_single(single)
        .and_then(|b| b.try_pair(pair))
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?
        .special_tokens(specials)
        .build()
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    Ok(true)
}

/// The `Precompiled` step of `tokenizer`'s normalizer (the normalizer itself, or a step of its
/// sequence), which the classes rebuilt from a file keep.
pub(super) fn precompiled_step(tokenizer: &Tokenizer) -> Option<NormalizerWrapper> {
    match tokenizer.get_normalizer() {
        Some(n @ NormalizerWrapper::Precompiled(_)) => Some(n.clone()),
        Some(NormalizerWrapper::Sequence(steps)) => {
            let steps: &[NormalizerWrapper] = steps.as_ref();
            steps.iter().find(|n| matches!(n, NormalizerWrapper::Precompiled(_))).cloned()
        }
        _ => None,
    }
}

/// The Unigram vocabulary of `tokenizer` (empty for another model).
pub(super) fn unigram_vocab(tokenizer: &Tokenizer) -> Vec<(String, f64)> {
    match tokenizer.get_model() {
        ModelWrapper::Unigram(u) => u.iter().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Rebuilds the Unigram model of `tokenizer` from its vocabulary with `unk_id` as the unknown piece
/// and no byte fallback, as the classes' `__init__` build it (the added tokens stay).
pub(super) fn set_unigram_unk_id(folder: &Folder, tokenizer: &mut Tokenizer, unk_id: usize) -> Result<()> {
    let vocab = unigram_vocab(tokenizer);
    if unk_id >= vocab.len() {
        return Err(Error::format(
            &folder.config_path,
            format!("the unknown piece's id {unk_id} is past the {} pieces of the vocabulary", vocab.len()),
        ));
    }
    let model = Unigram::from(vocab, Some(unk_id), false)
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    tokenizer.with_model(model);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use crate::tokenizer::{Batch, HfTokenizer};

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    fn golden() -> Value {
        let text = std::fs::read_to_string(fixtures().join("xlmr_tokenizer_expected.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn rows(v: &Value) -> Vec<Vec<i64>> {
        serde_json::from_value(v.clone()).unwrap()
    }

    /// `batch`'s three tensors against the golden's, by name.
    fn check_batch(what: &str, batch: &Batch, want: &Value) {
        for (key, got) in [
            ("input_ids", &batch.input_ids),
            ("attention_mask", &batch.attention_mask),
            ("token_type_ids", &batch.token_type_ids),
        ] {
            assert_eq!(got.to_vec2::<i64>().unwrap(), rows(&want[key]), "{what} {key}");
        }
    }

    /// A small XLM-R-style Unigram `tokenizer.json` (Precompiled and Replace normalizer, bare
    /// `Metaspace`) under several `tokenizer_config.json`s and model types: single texts and padded
    /// pairs as transformers 5.24 tokenizes them (`make_xlmr_tokenizer_golden.py`). The generic
    /// class keeps the file's pipeline; the others get the XLM-R, CamemBERT, T5 and ALBERT
    /// classes' (their unknown pieces, T5's frame, ALBERT's lowercasing and accents).
    #[test]
    fn xlm_roberta_tokenizers_tokenize_as_transformers_5() {
        let golden = golden();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let pairs: Vec<(&str, &str)> = golden["pairs"]["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap(), p[1].as_str().unwrap()))
            .collect();
        for (name, config) in golden["configs"].as_object().unwrap() {
            let dir = std::env::temp_dir().join(format!("oxtorch-xlmr-tok-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(fixtures().join("tokenizers/xlmr_unigram.json"), dir.join("tokenizer.json"))
                .unwrap();
            std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
            if let Some(model_type) = golden["model_types"][name].as_str() {
                std::fs::write(dir.join("config.json"), format!(r#"{{"model_type": "{model_type}"}}"#))
                    .unwrap();
            }
            let tok = HfTokenizer::load(&dir, None).unwrap();
            for (kind, special) in [("plain", false), ("special", true)] {
                for (i, text) in texts.iter().enumerate() {
                    let want: Vec<u32> =
                        serde_json::from_value(golden["ids"][name][kind][i].clone()).unwrap();
                    assert_eq!(tok.encode(text, special).unwrap(), want, "{name} {kind} {text:?}");
                }
            }
            check_batch(name, &tok.encode_pairs(&pairs).unwrap(), &golden["pairs"]["ids"][name]);
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// BERT's pairs: `[CLS] A [SEP] B [SEP]`, token types 0 then 1, padded to the longest.
    #[test]
    fn bert_pairs_tokenize_as_transformers_5() {
        let golden = golden();
        let want = &golden["bert_pairs"];
        let dir = fixtures().join(want["dir"].as_str().unwrap());
        let pairs: Vec<(&str, &str)> = want["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap(), p[1].as_str().unwrap()))
            .collect();
        let tok = HfTokenizer::load(&dir, None).unwrap();
        check_batch("bert pairs", &tok.encode_pairs(&pairs).unwrap(), want);
        // Room for a single text's two special tokens but not a pair's three: an error, not the
        // tokenizers crate's unchecked subtraction.
        let tight = HfTokenizer::load(&dir, Some(2)).unwrap();
        let err = tight.encode_pairs(&pairs).unwrap_err().to_string();
        assert!(err.contains("cannot hold the 3 special tokens each pair gets"), "{err}");
    }
}
