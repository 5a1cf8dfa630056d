//! Byte-level BPE folders with `vocab.json` and `merges.txt` but no `tokenizer.json` (OPT's
//! checkpoints, older GPT-2, RoBERTa and BART fine-tunes), built as transformers 5 builds
//! `GPT2Tokenizer`, `RobertaTokenizer` (`BartTokenizer`), `BlenderbotTokenizer` and
//! `DebertaTokenizer` (DeBERTa v1, its `[CLS] A [SEP]`) from them: a
//! BPE (no unknown token) behind a byte-level pre-tokenizer (`add_prefix_space` as configured) and
//! decoder; the special tokens and the declared ones added; GPT-2's and Blenderbot's texts framed
//! per `add_bos_token` / `add_eos_token`, RoBERTa's `<s> A </s>` (pairs `<s> A </s></s> B </s>`).

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::roberta::RobertaProcessing;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

use super::folder::Folder;
use crate::error::{Error, Result};

/// The vocabulary's file name.
pub(super) const VOCAB_FILE: &str = "vocab.json";
/// The merges' file name.
const MERGES_FILE: &str = "merges.txt";

/// The classes built here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `GPT2Tokenizer`
    Gpt2,
    /// `RobertaTokenizer` (and `BartTokenizer`, its alias)
    Roberta,
    /// `BlenderbotTokenizer`: RoBERTa's tokens, a prefix space by default, `<mask>` stripping the
    /// space before it, GPT-2's framing (nothing unless `add_bos_token` / `add_eos_token`)
    Blenderbot,
    /// `DebertaTokenizer` (DeBERTa v1): BERT's tokens, `[CLS] A [SEP]` and `[CLS] A [SEP] [SEP] B
    /// [SEP]`
    Deberta,
}

/// Model types whose tokenizer is `GPT2Tokenizer` (transformers' `TOKENIZER_MAPPING_NAMES`).
const GPT2_MODEL_TYPES: &[&str] =
    &["gpt2", "gpt_neo", "gptj", "codegen", "opt", "phi", "starcoder2", "dbrx", "jais2", "blip-2", "emu3"];
/// Model types whose tokenizer is `RobertaTokenizer`.
const ROBERTA_MODEL_TYPES: &[&str] = &[
    "roberta",
    "roberta-prelayernorm",
    "bart",
    "longformer",
    "data2vec-text",
    "ibert",
    "mega",
    "mra",
    "lilt",
    "clap",
    "bridgetower",
];

/// The folder's class: the one `tokenizer_config.json` names (with or without `Fast`), or without
/// one, its model type's; `None` for any other.
fn class_of(folder: &Folder) -> Result<Option<Class>> {
    Ok(match folder.class().map(|c| c.strip_suffix("Fast").unwrap_or(c)) {
        Some("GPT2Tokenizer") => Some(Class::Gpt2),
        Some("RobertaTokenizer" | "BartTokenizer") => Some(Class::Roberta),
        Some("BlenderbotTokenizer") => Some(Class::Blenderbot),
        Some("DebertaTokenizer") => Some(Class::Deberta),
        Some(_) => None,
        None => match folder.model_type()? {
            Some(t) if GPT2_MODEL_TYPES.contains(&t) => Some(Class::Gpt2),
            Some(t) if ROBERTA_MODEL_TYPES.contains(&t) => Some(Class::Roberta),
            Some("blenderbot") => Some(Class::Blenderbot),
            Some("deberta") => Some(Class::Deberta),
            _ => None,
        },
    })
}

/// Whether the folder holds `vocab.json` and `merges.txt` of a class built here.
pub(super) fn is_byte_level_bpe(folder: &Folder) -> Result<bool> {
    Ok(folder.dir.join(VOCAB_FILE).is_file()
        && folder.dir.join(MERGES_FILE).is_file()
        && class_of(folder)?.is_some())
}

/// The folder's tokenizer from `vocab.json` and `merges.txt`, with its class's pad token
/// (RoBERTa's `<pad>`; GPT-2 has none); `None` when it holds none of a class built here.
pub(super) fn from_vocab_and_merges(folder: &Folder) -> Result<Option<(Tokenizer, Option<&'static str>)>> {
    if !is_byte_level_bpe(folder)? {
        return Ok(None);
    }
    let Some(class) = class_of(folder)? else { return Ok(None) };
    let (vocab, merges) = (folder.dir.join(VOCAB_FILE), folder.dir.join(MERGES_FILE));
    let path_str =
        |p: &std::path::Path| p.to_str().map(str::to_string).ok_or_else(|| Error::format(p, "is not UTF-8"));
    let bpe = BPE::from_file(&path_str(&vocab)?, &path_str(&merges)?).build().map_err(|e| {
        Error::format(folder.dir, format!("{VOCAB_FILE} and {MERGES_FILE} do not make a BPE: {e}"))
    })?;
    let mut tokenizer = Tokenizer::new(bpe);
    let add_prefix_space = folder.flag("add_prefix_space")?.unwrap_or(class == Class::Blenderbot);
    let trim_offsets = folder.flag("trim_offsets")?.unwrap_or(true);
    tokenizer.with_pre_tokenizer(Some(ByteLevel::new(add_prefix_space, trim_offsets, true)));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    let defaults: &[(&'static str, &str)] = match class {
        Class::Gpt2 => {
            &[("bos_token", "<|endoftext|>"), ("eos_token", "<|endoftext|>"), ("unk_token", "<|endoftext|>")]
        }
        Class::Roberta | Class::Blenderbot => super::unigram_spm::ROBERTA_SPECIALS,
        Class::Deberta => super::deberta_v2::SPECIAL_TOKENS,
    };
    let mut specials: Vec<(&'static str, String)> = Vec::new();
    for &(key, default) in defaults {
        specials.push((key, folder.token(key)?.unwrap_or(default).to_string()));
    }
    if class == Class::Gpt2 {
        specials.extend(folder.token("pad_token")?.map(|p| ("pad_token", p.to_string())));
    }
    super::deberta_v2::add_declared_tokens(folder, &mut tokenizer, &specials)?;
    if class == Class::Blenderbot {
        // The class makes a mask token given as a plain string (not an object, not declared in
        // `added_tokens_decoder`) one that strips the space before it.
        let mask =
            specials.iter().find(|(k, _)| *k == "mask_token").map(|(_, t)| t.clone()).unwrap_or_default();
        let object = matches!(folder.config.get("mask_token"), Some(serde_json::Value::Object(_)));
        let declared =
            super::deberta_v2::declared_tokens(folder, &specials)?.iter().any(|(_, t)| t.content == mask);
        if !object && !declared {
            tokenizer.add_special_tokens(&[tokenizers::AddedToken::from(mask, true)
                .lstrip(true)
                .normalized(false)]);
        }
    }
    let token =
        |key: &str| specials.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone()).unwrap_or_default();
    match class {
        Class::Gpt2 | Class::Blenderbot => {
            let template = super::llama_spm::bos_eos_template(
                folder,
                &tokenizer,
                &token("bos_token"),
                &token("eos_token"),
            )?;
            tokenizer.with_post_processor(Some(template));
        }
        Class::Roberta | Class::Deberta => {
            let id = |key: &str| -> Result<(String, u32)> {
                let t = token(key);
                let id = tokenizer.token_to_id(&t).ok_or_else(|| {
                    Error::format(&folder.config_path, format!("the {key} {t:?} is not in the vocabulary"))
                })?;
                Ok((t, id))
            };
            let (sep, cls) = (id("sep_token")?, id("cls_token")?);
            if class == Class::Roberta {
                let processing = RobertaProcessing::new(sep, cls)
                    .trim_offsets(trim_offsets)
                    .add_prefix_space(add_prefix_space);
                tokenizer.with_post_processor(Some(processing));
            } else {
                let (s, c) = (&sep.0, &cls.0);
                let bad = |e: String| Error::format(&folder.config_path, e);
                let template = TemplateProcessing::builder()
                    .try_single(format!("{c} $A {s}"))
                    .and_then(|b| b.try_pair(format!("{c} $A {s} {s} $B {s}")))
                    .map_err(bad)?
                    .special_tokens(vec![cls.clone(), sep.clone()])
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                tokenizer.with_post_processor(Some(template));
            }
        }
    }
    let pad = match class {
        Class::Gpt2 => None,
        Class::Roberta | Class::Blenderbot => Some("<pad>"),
        Class::Deberta => Some("[PAD]"),
    };
    Ok(Some((tokenizer, pad)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::tokenizer::golden_check::{check_against, golden, golden_folder, texts};
    use crate::tokenizer::HfTokenizer;

    /// A small byte-level BPE's `vocab.json` and `merges.txt` alone in folders of GPT-2 (plain, with
    /// a prefix space, `add_eos_token` and a pad token), OPT (by model type: `</s>` first), RoBERTa
    /// (by class, by model type with a `special_tokens_map.json`) and BART (a word added past the
    /// vocabulary): single texts, a padded batch, padded pairs and decoded ids as transformers 5.24
    /// gives them (`make_byte_level_bpe_tokenizer_golden.py`).
    #[test]
    fn vocab_and_merges_alone_tokenize_as_transformers_5() {
        let golden = golden("byte_level_bpe_tokenizer_expected.json");
        let texts = texts(&golden);
        let pairs: Vec<(&str, &str)> = golden["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap(), p[1].as_str().unwrap()))
            .collect();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/byte_level_bpe");
        for name in golden["configs"].as_object().unwrap().keys() {
            let dir = golden_folder(&golden, &source, name, &["vocab.json", "merges.txt"]);
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let tok = HfTokenizer::load(&dir, None).unwrap();
            let want = &golden["ids"][name];
            check_against(&tok, &texts, want, name);
            if !want["pairs"].is_null() {
                let batch = tok.encode_pairs(&pairs).unwrap();
                for (key, got) in [("input_ids", &batch.input_ids), ("attention_mask", &batch.attention_mask)]
                {
                    let rows: Vec<Vec<i64>> = serde_json::from_value(want["pairs"][key].clone()).unwrap();
                    assert_eq!(got.to_vec2::<i64>().unwrap(), rows, "{name} pairs {key}");
                }
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// Merges that name pieces outside the vocabulary, or a malformed line, are errors naming the
    /// folder's files.
    #[test]
    fn bad_merges_are_errors() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/byte_level_bpe");
        let dir = std::env::temp_dir().join(format!("oxtorch-byte-level-bpe-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(source.join("vocab.json"), dir.join("vocab.json")).unwrap();
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"tokenizer_class": "GPT2Tokenizer"}"#).unwrap();
        for merges in ["#version: 0.2\nzzz qqq\n", "#version: 0.2\none-part-only\n"] {
            std::fs::write(dir.join("merges.txt"), merges).unwrap();
            let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
            assert!(err.contains("merges.txt"), "{err}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
