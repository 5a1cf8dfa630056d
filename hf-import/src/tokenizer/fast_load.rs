//! `tokenizer.json` read 2-3x faster than `Tokenizer::from_str`, into the same [`Tokenizer`].
//!
//! The library reads the `model` through an untagged enum: serde buffers the whole model (the
//! vocabulary, the merges) into a generic tree, copies it into a `serde_json::Value`, and only then
//! builds the model from that. Here the model's `type`, which every serializer writes first, picks
//! the model at once, and its fields are read straight from the text: BPE by [`bpe`] (both formats of
//! `merges`, without buffering), WordPiece and WordLevel by [`word_models`] (vocabularies hashed once,
//! [`vocab`]), Unigram by its own `Deserialize`. Each mirrors the library's visitor for that model,
//! down to its defaults and checks, and ends in the same builder. Everything else follows the
//! library's `TokenizerVisitor` step by step (version check, builder, then `add_tokens` of the added
//! tokens in file order). What is left is mostly the library's own building of the model (its
//! reverse vocabulary, BPE's merge map) and one allocation per token.
//!
//! Whatever this path would not read exactly as the library does falls back to the library: a model
//! without `type` or with `type` not first, an unknown model, a key given twice in the model, and any
//! error. So the result, and every error message, is the library's.

mod bpe;
mod strict_map;
#[cfg(test)]
mod tests;
mod vocab;
mod word_models;

use std::fmt;
use std::str::FromStr;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use tokenizers::models::unigram::Unigram;
use tokenizers::{
    AddedToken, DecoderWrapper, ModelWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper,
    Tokenizer, TokenizerBuilder,
};

use strict_map::StrictMap;

/// The tokenizer of a `tokenizer.json` text, as `Tokenizer::from_str` builds it (and with its errors).
pub(crate) fn tokenizer_from_json(json: &str) -> tokenizers::Result<Tokenizer> {
    fast_tokenizer_from_json(json).or_else(|_| Tokenizer::from_str(json))
}

/// The fast path alone: an error means "ask the library", not that the file is bad.
fn fast_tokenizer_from_json(json: &str) -> serde_json::Result<Tokenizer> {
    serde_json::from_str::<FastTokenizer>(json).map(|t| t.0)
}

type Builder = TokenizerBuilder<
    ModelWrapper,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// A [`Tokenizer`] deserialized as the library's `TokenizerVisitor` does, but for the model.
struct FastTokenizer(Tokenizer);

impl<'de> Deserialize<'de> for FastTokenizer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const FIELDS: &[&str] = &[
            "version",
            "truncation",
            "padding",
            "added_tokens",
            "normalizer",
            "pre_tokenizer",
            "post_processor",
            "decoder",
            "model",
        ];
        deserializer.deserialize_struct("Tokenizer", FIELDS, TokenizerVisitor).map(FastTokenizer)
    }
}

/// An entry of `added_tokens` (the library's private `AddedTokenWithId`).
#[derive(Deserialize)]
struct AddedTokenWithId {
    /// Read and type-checked as the library does, which only logs a warning when it differs from
    /// the id the token gets.
    #[allow(dead_code)]
    id: u32,
    #[serde(flatten)]
    token: AddedToken,
}

struct TokenizerVisitor;

impl<'de> Visitor<'de> for TokenizerVisitor {
    type Value = Tokenizer;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct Tokenizer")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tokenizer, A::Error> {
        let mut builder = Builder::new();
        let mut tokens: Vec<AddedTokenWithId> = vec![];
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => {
                    let v: String = map.next_value()?;
                    if v != "1.0" {
                        return Err(A::Error::custom(format!("Unknown tokenizer version '{v}'")));
                    }
                }
                "truncation" => builder = builder.with_truncation(map.next_value()?),
                "padding" => builder = builder.with_padding(map.next_value()?),
                "added_tokens" => tokens = map.next_value()?,
                "normalizer" => builder = builder.with_normalizer(map.next_value()?),
                "pre_tokenizer" => builder = builder.with_pre_tokenizer(map.next_value()?),
                "model" => builder = builder.with_model(map.next_value_seed(ModelSeed)?),
                "decoder" => builder = builder.with_decoder(map.next_value()?),
                "post_processor" => builder = builder.with_post_processor(map.next_value()?),
                // The library does not read the value of an unknown key, so serde_json then fails
                // on it: leave the file to the library.
                _ => return Err(A::Error::custom(format!("unknown field `{key}`"))),
            }
        }
        let tokenizer = builder.build().map_err(|e| A::Error::custom(e.to_string()))?;
        let mut tokenizer = Tokenizer::from(tokenizer);
        let added: Vec<AddedToken> = tokens.into_iter().map(|t| t.token).collect();
        tokenizer.add_tokens(&added);
        Ok(tokenizer)
    }
}

/// The `model` object, read in one pass when its first key is `type`.
struct ModelSeed;

impl<'de> DeserializeSeed<'de> for ModelSeed {
    type Value = ModelWrapper;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ModelWrapper, D::Error> {
        deserializer.deserialize_map(ModelVisitor)
    }
}

struct ModelVisitor;

impl<'de> Visitor<'de> for ModelVisitor {
    type Value = ModelWrapper;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a model whose first field is `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ModelWrapper, A::Error> {
        let mut map = StrictMap::new(map);
        if map.next_key::<String>()?.as_deref() != Some("type") {
            return Err(A::Error::custom("the model's first field is not `type`"));
        }
        let kind: String = map.next_value()?;
        // The rest of the model, without `type`: what the library's models read from its `Value`.
        let rest = MapAccessDeserializer::new(map);
        Ok(match kind.as_str() {
            "BPE" => bpe::deserialize(rest)?.into(),
            "WordPiece" => word_models::word_piece(rest)?.into(),
            "WordLevel" => word_models::word_level(rest)?.into(),
            "Unigram" => Unigram::deserialize(rest)?.into(),
            other => return Err(A::Error::custom(format!("unknown model type `{other}`"))),
        })
    }
}
