//! The WordPiece and WordLevel models read like tokenizers' `WordPieceVisitor` and
//! `WordLevelVisitor`, with the vocabulary read by [`VocabMap`].

use std::collections::HashSet;
use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::Deserializer;
use tokenizers::models::wordlevel::{WordLevel, WordLevelBuilder};
use tokenizers::models::wordpiece::{WordPiece, WordPieceBuilder};

use super::vocab::VocabMap;

/// The WordPiece model of the fields of a `"type": "WordPiece"` model object.
pub(super) fn word_piece<'de, D: Deserializer<'de>>(deserializer: D) -> Result<WordPiece, D::Error> {
    deserializer.deserialize_map(WordPieceVisitor)
}

/// The WordLevel model of the fields of a `"type": "WordLevel"` model object.
pub(super) fn word_level<'de, D: Deserializer<'de>>(deserializer: D) -> Result<WordLevel, D::Error> {
    deserializer.deserialize_map(WordLevelVisitor)
}

/// Checks a repeated `type` (which `StrictMap` already rejects) as the library does.
fn check_type<'de, A: MapAccess<'de>>(map: &mut A, expected: &str) -> Result<(), A::Error> {
    let kind: String = map.next_value()?;
    if kind != expected {
        return Err(A::Error::custom(format!("model type `{kind}` is not {expected}")));
    }
    Ok(())
}

/// Fails on the first of `required` (all of them mandatory, as in the library) not in `seen`.
fn check_required<E: serde::de::Error>(required: &[&'static str], seen: &HashSet<String>) -> Result<(), E> {
    match required.iter().find(|f| !seen.contains(**f)) {
        Some(field) => Err(E::missing_field(field)),
        None => Ok(()),
    }
}

struct WordPieceVisitor;

impl<'de> Visitor<'de> for WordPieceVisitor {
    type Value = WordPiece;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct WordPiece")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WordPiece, A::Error> {
        let mut builder = WordPieceBuilder::new();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "unk_token" => builder = builder.unk_token(map.next_value()?),
                "continuing_subword_prefix" => builder = builder.continuing_subword_prefix(map.next_value()?),
                "max_input_chars_per_word" => builder = builder.max_input_chars_per_word(map.next_value()?),
                "vocab" => builder = builder.vocab(map.next_value::<VocabMap>()?.0),
                "type" => check_type(&mut map, "WordPiece")?,
                _ => {}
            }
            seen.insert(key);
        }
        let required = ["unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"];
        check_required(&required, &seen)?;
        builder.build().map_err(A::Error::custom)
    }
}

struct WordLevelVisitor;

impl<'de> Visitor<'de> for WordLevelVisitor {
    type Value = WordLevel;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct WordLevel")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WordLevel, A::Error> {
        let mut builder = WordLevelBuilder::new();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "vocab" => builder = builder.vocab(map.next_value::<VocabMap>()?.0),
                "unk_token" => builder = builder.unk_token(map.next_value()?),
                "type" => check_type(&mut map, "WordLevel")?,
                _ => {}
            }
            seen.insert(key);
        }
        check_required(&["unk_token", "vocab"], &seen)?;
        builder.build().map_err(A::Error::custom)
    }
}
