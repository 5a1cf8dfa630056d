//! transformers 5 rebuilds an XLM-RoBERTa tokenizer's pipeline in `XLMRobertaTokenizer.__init__`,
//! whatever `tokenizer.json` holds. Of the file it keeps the Unigram vocabulary and the
//! `Precompiled` normalizer step (only that step: without one there is no normalizer); texts are
//! split on whitespace before the `Metaspace` pre-tokenizer (so trailing or repeated whitespace
//! makes no `▁` piece of its own, which the file's own pipeline would), `▁` is prepended to every
//! word unless `add_prefix_space` is false, and texts are framed as `<s> A </s>` and
//! `<s> A </s> </s> B </s>` with the config's `bos_token` and `eos_token`.

use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// `XLMRobertaTokenizer`'s pad token when `tokenizer_config.json` names none.
pub(super) const PAD: &str = "<pad>";

/// The tokenizer classes built as `XLMRobertaTokenizer`.
const XLMR_CLASSES: &[&str] = &["XLMRobertaTokenizer", "XLMRobertaTokenizerFast"];

/// The model types (`config.json`) whose tokenizer is an `XLMRobertaTokenizer` when
/// `tokenizer_config.json` names no class (transformers 5.24's `TOKENIZER_MAPPING_NAMES`).
const XLMR_MODEL_TYPES: &[&str] =
    &["xlm-roberta", "gte", "jina_embeddings_v3", "metaclip_2", "trocr", "xmod"];

/// Gives a Unigram tokenizer of an XLM-RoBERTa-tokenizer folder the pipeline transformers 5
/// builds (see the module docs): when `tokenizer_config.json`'s `tokenizer_class` is XLM-R's, or
/// it names none and `config.json`'s `model_type` is one of [`XLMR_MODEL_TYPES`].
/// Returns whether it did (the folder's tokenizer is then an `XLMRobertaTokenizer`).
pub(super) fn rebuild_pipeline(folder: &Folder, tokenizer: &mut Tokenizer) -> Result<bool> {
    if !matches!(tokenizer.get_model(), ModelWrapper::Unigram(_)) {
        return Ok(false);
    }
    let is_xlmr = match folder.class() {
        Some(class) => XLMR_CLASSES.contains(&class),
        None => folder.model_type()?.is_some_and(|t| XLMR_MODEL_TYPES.contains(&t)),
    };
    if !is_xlmr {
        return Ok(false);
    }
    let add_prefix_space = folder.flag("add_prefix_space")?.unwrap_or(true);
    let scheme = if add_prefix_space { PrependScheme::Always } else { PrependScheme::Never };
    let precompiled = match tokenizer.get_normalizer() {
        Some(n @ NormalizerWrapper::Precompiled(_)) => Some(n.clone()),
        Some(NormalizerWrapper::Sequence(steps)) => {
            let steps: &[NormalizerWrapper] = steps.as_ref();
            steps.iter().find(|n| matches!(n, NormalizerWrapper::Precompiled(_))).cloned()
        }
        _ => None,
    };
    tokenizer.with_normalizer(precompiled);
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
    let (bos, eos) = (token("bos_token", "<s>")?, token("eos_token", "</s>")?);
    let template = TemplateProcessing::builder()
        .try_single(format!("{}:0 $A:0 {}:0", bos.0, eos.0))
        .and_then(|b| b.try_pair(format!("{0}:0 $A:0 {1}:0 {1}:0 $B:0 {1}:0", bos.0, eos.0)))
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?
        .special_tokens(vec![bos, eos])
        .build()
        .map_err(|e| Error::format(&folder.config_path, e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    Ok(true)
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
    /// class keeps the file's pipeline; the others get `XLMRobertaTokenizer`'s.
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
