//! transformers 5 rebuilds a Llama tokenizer's pipeline in `LlamaTokenizer.__init__`, whatever
//! `tokenizer.json` holds: no normalizer, a `Metaspace` pre-tokenizer that prepends `▁` to the first
//! piece of text only (to every piece between special tokens with `legacy: true`; to none with
//! `add_prefix_space: false`), and the SentencePiece decoder. Older files prepend `▁` in the
//! normalizer, to every piece: `[INST] Hi` then tokenizes differently (chat templates do this).

use std::path::Path;

use serde_json::Value;
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

use super::bert::read_json;
use crate::error::{Error, Result};

/// The tokenizer classes built as `LlamaTokenizer`.
const LLAMA_CLASSES: &[&str] = &["LlamaTokenizer", "LlamaTokenizerFast"];

/// The model types whose tokenizer is a `LlamaTokenizer` when `tokenizer_config.json` names none.
const LLAMA_MODEL_TYPES: &[&str] = &["llama", "mistral"];

/// Gives a BPE tokenizer of a Llama-tokenizer folder the pipeline transformers 5 builds (see the
/// module docs), from `tokenizer_config.json`'s `legacy` (default false) and `add_prefix_space`
/// (default true).
pub(super) fn rebuild_pipeline(dir: &Path, tokenizer: &mut Tokenizer) -> Result<()> {
    if !matches!(tokenizer.get_model(), ModelWrapper::BPE(_)) {
        return Ok(());
    }
    let config_path = dir.join("tokenizer_config.json");
    let config = read_json(&config_path)?.unwrap_or(Value::Null);
    let is_llama = match config.get("tokenizer_class").and_then(Value::as_str) {
        Some(class) => LLAMA_CLASSES.contains(&class),
        None => read_json(&dir.join("config.json"))?
            .and_then(|c| c.get("model_type").and_then(Value::as_str).map(str::to_owned))
            .is_some_and(|t| LLAMA_MODEL_TYPES.contains(&t.as_str())),
    };
    if !is_llama {
        return Ok(());
    }
    let flag = |key: &str| -> Result<Option<bool>> {
        match config.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(Error::format(&config_path, format!("\"{key}\" must be a boolean, got {v}"))),
        }
    };
    let add_prefix_space = flag("add_prefix_space")?.unwrap_or(true);
    let legacy = flag("legacy")?.unwrap_or(false);
    let scheme = match (add_prefix_space, legacy) {
        (false, _) => PrependScheme::Never,
        (true, true) => PrependScheme::Always,
        (true, false) => PrependScheme::First,
    };
    tokenizer.with_normalizer(None::<tokenizers::NormalizerWrapper>);
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Metaspace(Metaspace::new('▁', scheme, false))));
    let bad = |e: tokenizers::Error| Error::format(&config_path, e.to_string());
    let mut steps = vec![
        DecoderWrapper::Replace(Replace::new("▁", " ").map_err(bad)?),
        DecoderWrapper::ByteFallback(ByteFallback::new()),
        DecoderWrapper::Fuse(Fuse::new()),
    ];
    if add_prefix_space {
        steps.push(DecoderWrapper::Strip(Strip::new(' ', 1, 0)));
    }
    tokenizer.with_decoder(Some(DecoderWrapper::Sequence(Sequence::new(steps))));
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::tokenizer::HfTokenizer;

    /// The old-style Llama 2 `tokenizer.json` fixture under three `tokenizer_config.json`s: ids
    /// as transformers 5.24 gives them (`make_llama_tokenizer_golden.py`).
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
            let tok = HfTokenizer::load(&dir, None).unwrap();
            for (kind, special) in [("plain", false), ("special", true)] {
                for (i, text) in texts.iter().enumerate() {
                    let want: Vec<u32> =
                        serde_json::from_value(golden["ids"][name][kind][i].clone()).unwrap();
                    assert_eq!(tok.encode(text, special).unwrap(), want, "{name} {kind} {text:?}");
                }
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
