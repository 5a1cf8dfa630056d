//! A `{"token": id, ...}` vocabulary read into a hash map sized once.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use tokenizers::models::bpe::Vocab;

/// The vocabulary of a BPE, WordPiece or WordLevel model. serde's own map reader grows (and so
/// rehashes) the map as it reads, for lack of a length from serde_json; here the entries are read
/// first and hashed once. As there, a token given twice keeps its last id.
pub(super) struct VocabMap(pub(super) Vocab);

impl<'de> Deserialize<'de> for VocabMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(VocabVisitor)
    }
}

struct VocabVisitor;

impl<'de> Visitor<'de> for VocabVisitor {
    type Value = VocabMap;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VocabMap, A::Error> {
        let mut entries: Vec<(String, u32)> = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        let mut vocab = Vocab::with_capacity(entries.len());
        vocab.extend(entries);
        Ok(VocabMap(vocab))
    }
}
