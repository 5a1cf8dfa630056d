//! transformers 5 rebuilds a Llama tokenizer's pipeline in `LlamaTokenizer.__init__`, whatever
//! `tokenizer.json` holds: no normalizer, a `Metaspace` pre-tokenizer that prepends `▁` to the first
//! piece of text only (to every piece between special tokens with `legacy: true`; to none with
//! `add_prefix_space: false`), and the SentencePiece decoder. Older files prepend `▁` in the
//! normalizer, to every piece: `[INST] Hi` then tokenizes differently (chat templates do this).

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence;
use tokenizers::decoders::strip::Strip;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::replace::Replace;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// The tokenizer classes built as `LlamaTokenizer`.
const LLAMA_CLASSES: &[&str] = &["LlamaTokenizer", "LlamaTokenizerFast"];

/// The model types (`config.json`) for which transformers 5 builds a named `LlamaTokenizer`; for
/// others (Mistral's family, Phi-3, ... map to its generic backend) the file is used as it is.
const LLAMA_MODEL_TYPES: &[&str] = &["llama"];

/// Gives a BPE tokenizer of a Llama-tokenizer folder the pipeline transformers 5 builds (see the
/// module docs), from `tokenizer_config.json`'s `legacy` (default false) and `add_prefix_space`
/// (default true). As transformers' `AutoTokenizer`: only when `tokenizer_class` is Llama's, the
/// model type (if any) is `llama`, and the file (`json`) is not a byte-level one.
/// Returns whether it did (the folder's tokenizer is then a `LlamaTokenizer`, which pads on the
/// left unless told otherwise).
pub(super) fn rebuild_pipeline(folder: &Folder, json: &str, tokenizer: &mut Tokenizer) -> Result<bool> {
    let ModelWrapper::BPE(bpe) = tokenizer.get_model() else { return Ok(false) };
    let is_llama = folder.class().is_some_and(|c| LLAMA_CLASSES.contains(&c))
        && folder.model_type()?.is_none_or(|t| LLAMA_MODEL_TYPES.contains(&t))
        && !json.contains("ByteLevel");
    if !is_llama {
        return Ok(false);
    }
    // `LlamaTokenizer.__init__` builds its BPE with byte fallback and fused unknowns, no dropout
    // (files written before tokenizers 0.13.3 have neither).
    if !bpe.byte_fallback || !bpe.fuse_unk || bpe.dropout.is_some() {
        let mut bpe = bpe.clone();
        bpe.byte_fallback = true;
        bpe.fuse_unk = true;
        bpe.dropout = None;
        tokenizer.with_model(ModelWrapper::BPE(bpe));
    }
    let add_prefix_space = folder.flag("add_prefix_space")?.unwrap_or(true);
    let legacy = folder.flag("legacy")?.unwrap_or(false);
    let scheme = match (add_prefix_space, legacy) {
        (false, _) => PrependScheme::Never,
        (true, true) => PrependScheme::Always,
        (true, false) => PrependScheme::First,
    };
    tokenizer.with_normalizer(None::<tokenizers::NormalizerWrapper>);
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Metaspace(Metaspace::new('▁', scheme, false))));
    let bad = |e: tokenizers::Error| Error::format(&folder.config_path, e.to_string());
    let mut steps = vec![
        DecoderWrapper::Replace(Replace::new("▁", " ").map_err(bad)?),
        DecoderWrapper::ByteFallback(ByteFallback::new()),
        DecoderWrapper::Fuse(Fuse::new()),
    ];
    if add_prefix_space {
        steps.push(DecoderWrapper::Strip(Strip::new(' ', 1, 0)));
    }
    tokenizer.with_decoder(Some(DecoderWrapper::Sequence(Sequence::new(steps))));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::tokenizer::HfTokenizer;

    /// The old-style Llama 2 `tokenizer.json` fixture under several `tokenizer_config.json`s and
    /// model types (Mistral's and Phi-3's keep the file's pipeline; Gemma's classes rebuild theirs
    /// and pad on the left with `<pad>`): ids and padded batches as transformers 5.24 gives them
    /// (`make_llama_tokenizer_golden.py`).
    #[test]
    fn llama_tokenizers_tokenize_as_transformers_5() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers");
        let golden: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures.join("../llama_v5_tokenizer_expected.json")).unwrap(),
        )
        .unwrap();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        for (name, config) in golden["configs"].as_object().unwrap() {
            let dir = std::env::temp_dir().join(format!("oxtorch-llama-tok-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(fixtures.join("bpe_llama2_byte_fallback.json"), dir.join("tokenizer.json"))
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
            // The texts as one padded batch, where transformers can pad (Gemma: on the left).
            let want = &golden["ids"][name]["batch"];
            if !want.is_null() {
                let batch = tok.encode_batch(&texts).unwrap();
                for (key, got) in [("input_ids", &batch.input_ids), ("attention_mask", &batch.attention_mask)]
                {
                    let want: Vec<Vec<i64>> = serde_json::from_value(want[key].clone()).unwrap();
                    assert_eq!(got.to_vec2::<i64>().unwrap(), want, "{name} batch {key}");
                }
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
