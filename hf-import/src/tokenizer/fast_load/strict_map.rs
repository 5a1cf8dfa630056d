//! A model's map as the library reads it from a `serde_json::Value`: each key once, values that the
//! model skips are still parsed.

use serde::de::value::StrDeserializer;
use serde::de::{DeserializeSeed, Error as _, MapAccess};

/// Wraps the `MapAccess` of a model object so that its model's visitor reads it as the library's
/// `Value` would give it: a key given twice is an error (the `Value` would keep only the last one),
/// and a value the visitor does not read is parsed into a `Value` (whose errors, such as a number
/// out of range, the library would meet) instead of breaking serde_json's parse.
pub(super) struct StrictMap<A> {
    inner: A,
    seen: Vec<String>,
    unread: bool,
}

impl<A> StrictMap<A> {
    pub(super) fn new(inner: A) -> Self {
        StrictMap { inner, seen: Vec::new(), unread: false }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StrictMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        if std::mem::take(&mut self.unread) {
            self.inner.next_value::<serde_json::Value>()?;
        }
        let Some(key) = self.inner.next_key::<String>()? else {
            return Ok(None);
        };
        if self.seen.contains(&key) {
            return Err(A::Error::custom(format!("duplicate field `{key}`")));
        }
        let value = seed.deserialize(StrDeserializer::<A::Error>::new(&key))?;
        self.seen.push(key);
        self.unread = true;
        Ok(Some(value))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.unread = false;
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}
