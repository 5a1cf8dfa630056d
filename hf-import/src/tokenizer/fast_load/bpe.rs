//! The BPE model read like the library's `BPEVisitor`, but `merges` straight from the text.
//!
//! The library tries `merges` as `[["a", "b"], ...]` and then as `["a b", ...]` through an untagged
//! enum, which first buffers the whole list; here each entry says which format it is in.

use std::fmt;

use serde::de::{Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use tokenizers::models::bpe::{BpeBuilder, Merges, Vocab, BPE};

use super::vocab::VocabMap;

/// The BPE model of the fields of a `"type": "BPE"` model object.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BPE, D::Error> {
    deserializer.deserialize_map(BpeVisitor)
}

struct BpeVisitor;

impl<'de> Visitor<'de> for BpeVisitor {
    type Value = BPE;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct BPE")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BPE, A::Error> {
        // Defaults and checks as in tokenizers' `BPEVisitor`: `null` keeps the builder's default.
        let mut builder = BpeBuilder::new();
        let mut vocab: Option<Vocab> = None;
        let mut merges: Option<Merges> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "dropout" => {
                    if let Some(dropout) = map.next_value()? {
                        builder = builder.dropout(dropout);
                    }
                }
                "unk_token" => {
                    if let Some(unk) = map.next_value()? {
                        builder = builder.unk_token(unk);
                    }
                }
                "continuing_subword_prefix" => {
                    if let Some(prefix) = map.next_value()? {
                        builder = builder.continuing_subword_prefix(prefix);
                    }
                }
                "end_of_word_suffix" => {
                    if let Some(suffix) = map.next_value()? {
                        builder = builder.end_of_word_suffix(suffix);
                    }
                }
                "fuse_unk" => {
                    if let Some(fuse_unk) = map.next_value()? {
                        builder = builder.fuse_unk(fuse_unk);
                    }
                }
                "byte_fallback" => {
                    if let Some(byte_fallback) = map.next_value()? {
                        builder = builder.byte_fallback(byte_fallback);
                    }
                }
                "ignore_merges" => {
                    if let Some(ignore_merges) = map.next_value()? {
                        builder = builder.ignore_merges(ignore_merges);
                    }
                }
                "vocab" => vocab = Some(map.next_value::<VocabMap>()?.0),
                "merges" => merges = Some(map.next_value::<MergeList>()?.0),
                "type" => {
                    let kind: String = map.next_value()?;
                    if kind != "BPE" {
                        return Err(A::Error::custom(format!("model type `{kind}` is not BPE")));
                    }
                }
                // Other keys are read (and so checked) by the `StrictMap` around this map.
                _ => {}
            }
        }
        match (vocab, merges) {
            (Some(vocab), Some(merges)) => {
                builder.vocab_and_merges(vocab, merges).build().map_err(A::Error::custom)
            }
            _ => Err(A::Error::custom("Missing vocab/merges")),
        }
    }
}

/// `merges` in either format, all entries in the same one: pairs `["a", "b"]`, or lines `"a b"`
/// (where, as in `merges.txt`, a line starting with `#version` is skipped).
struct MergeList(Merges);

impl<'de> Deserialize<'de> for MergeList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(MergeListVisitor)
    }
}

struct MergeListVisitor;

impl<'de> Visitor<'de> for MergeListVisitor {
    type Value = MergeList;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a list of merges")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<MergeList, S::Error> {
        let mut merges = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut lines: Option<bool> = None;
        while let Some(merge) = seq.next_element::<Merge>()? {
            let is_line = matches!(merge, Merge::Line(_));
            if *lines.get_or_insert(is_line) != is_line {
                return Err(S::Error::custom("merges mix pairs and lines"));
            }
            match merge {
                Merge::Pair(a, b) | Merge::Line(Some((a, b))) => merges.push((a, b)),
                Merge::Line(None) => {}
            }
        }
        Ok(MergeList(merges))
    }
}

/// One entry of `merges`: a pair, or a line (`None` for a `#version` line).
enum Merge {
    Pair(String, String),
    Line(Option<(String, String)>),
}

impl<'de> Deserialize<'de> for Merge {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MergeVisitor)
    }
}

struct MergeVisitor;

impl<'de> Visitor<'de> for MergeVisitor {
    type Value = Merge;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a merge: a pair of strings or a string \"a b\"")
    }

    fn visit_str<E: serde::de::Error>(self, line: &str) -> Result<Merge, E> {
        if line.starts_with("#version") {
            return Ok(Merge::Line(None));
        }
        let mut parts = line.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), None) => Ok(Merge::Line(Some((a.to_owned(), b.to_owned())))),
            _ => Err(E::custom(format!("merge `{line}` is not two tokens separated by a space"))),
        }
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Merge, S::Error> {
        let a: String = seq.next_element()?.ok_or_else(|| S::Error::invalid_length(0, &self))?;
        let b: String = seq.next_element()?.ok_or_else(|| S::Error::invalid_length(1, &self))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(S::Error::invalid_length(3, &self));
        }
        Ok(Merge::Pair(a, b))
    }
}
