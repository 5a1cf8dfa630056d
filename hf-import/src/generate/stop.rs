//! Stop strings: a sequence ends once its text ends in one of them (transformers'
//! `StopStringCriteria`).
//!
//! transformers matches on each token's own text (its "clean" string) rather than on the decoded
//! sequence: a stop string must end inside the last token (it may start in any earlier one, or
//! inside the last one too, and the last token may run on past it), so a match is found the step
//! it is completed and never again. A token's text is its bytes for a byte-level vocabulary
//! (`Ġ`-style characters mapped back), a `<0xNN>` byte-fallback token's byte, and otherwise what the
//! decoder makes of it after a fixed prefix (so that a word-start marker becomes its space).

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::tokenizer::HfTokenizer;

/// The text that each token's is read after, then cut off (transformers' `static_prefix`).
const STATIC_PREFIX: &str = "abcdef";

/// How token texts are compared (transformers' `stop_string_matching_mode`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// tokens are decoded, texts compared as characters
    Text,
    /// the vocabulary spells bytes as characters (GPT-2's `bytes_to_unicode`)
    ByteLevel,
    /// `<0xNN>` tokens stand for single bytes
    ByteFallback,
}

/// Stop strings prepared for one tokenizer.
pub(crate) struct StopStrings<'t> {
    tokenizer: &'t HfTokenizer,
    mode: Mode,
    strings: Vec<Vec<u8>>,
    /// the most tokens a match can span: the longest stop string's length (in characters when
    /// texts are compared as characters, else in bytes), as transformers looks back
    window: usize,
    /// the ids of [`STATIC_PREFIX`]
    prefix_ids: Vec<u32>,
    /// GPT-2's byte decoder (byte-level mode)
    byte_of: HashMap<char, u8>,
    /// each token's text, as it is first needed (`None`: not a token of the vocabulary)
    pieces: HashMap<i64, Option<Vec<u8>>>,
}

impl<'t> StopStrings<'t> {
    /// Prepares `strings` for `tokenizer`; `None` when there are none. An empty stop string is an
    /// error.
    pub(crate) fn new(tokenizer: &'t HfTokenizer, strings: &[String]) -> Result<Option<Self>> {
        if strings.is_empty() {
            return Ok(None);
        }
        if strings.iter().any(String::is_empty) {
            return Err(Error::Input("stop_strings must not contain an empty string".into()));
        }
        let mode = matching_mode(tokenizer)?;
        let window = strings
            .iter()
            .map(|s| if mode == Mode::Text { s.chars().count() } else { s.len() })
            .max()
            .unwrap_or(0);
        Ok(Some(StopStrings {
            tokenizer,
            mode,
            strings: strings.iter().map(|s| s.as_bytes().to_vec()).collect(),
            window,
            prefix_ids: tokenizer.encode(STATIC_PREFIX, false)?,
            byte_of: if mode == Mode::ByteLevel { byte_decoder() } else { HashMap::new() },
            pieces: HashMap::new(),
        }))
    }

    /// Whether `tokens` (a whole sequence, its newest token last) now ends a stop string: one ends
    /// inside the newest token's text.
    pub(crate) fn matches(&mut self, tokens: &[i64]) -> bool {
        let recent = &tokens[tokens.len().saturating_sub(self.window)..];
        let mut texts: Vec<&[u8]> = Vec::with_capacity(recent.len());
        for &t in recent {
            self.piece(t);
        }
        // A token outside the vocabulary matches nothing: a match starts after the last one.
        for &t in recent.iter().rev() {
            match self.pieces.get(&t).and_then(Option::as_deref) {
                Some(text) => texts.push(text),
                None => break,
            }
        }
        let Some(last) = texts.first().map(|t| t.len()) else { return false };
        let text: Vec<u8> = texts.iter().rev().flat_map(|t| t.iter().copied()).collect();
        // Where a stop string may start so that it ends inside the last token.
        self.strings.iter().any(|s| {
            let Some(latest) = text.len().checked_sub(s.len()) else { return false };
            let earliest = (text.len() + 1).saturating_sub(last + s.len());
            (earliest..=latest).any(|i| text[i..i + s.len()] == s[..])
        })
    }

    /// Computes the text of token `id` once.
    fn piece(&mut self, id: i64) {
        if self.pieces.contains_key(&id) {
            return;
        }
        let text = u32::try_from(id).ok().and_then(|id| self.text_of(id));
        self.pieces.insert(id, text);
    }

    /// The text of token `id` as transformers' `clean_tokenizer_vocab` makes it.
    fn text_of(&self, id: u32) -> Option<Vec<u8>> {
        let token = self.tokenizer.id_to_token(id)?;
        match self.mode {
            Mode::ByteLevel => {
                if let Some(bytes) = token.chars().map(|c| self.byte_of.get(&c).copied()).collect() {
                    return Some(bytes);
                }
            }
            Mode::ByteFallback => {
                let hex = token.strip_prefix("<0x").and_then(|h| h.strip_suffix('>'));
                if let Some(byte) = hex.filter(|h| h.len() == 2).and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    return Some(vec![byte]);
                }
            }
            Mode::Text => {}
        }
        let mut ids = self.prefix_ids.clone();
        ids.push(id);
        let text = self.tokenizer.decode(&ids, false).ok()?;
        // transformers cuts at the prefix's first occurrence (and fails without one: here the
        // token's own text).
        match text.find(STATIC_PREFIX) {
            Some(at) => Some(text.as_bytes()[at + STATIC_PREFIX.len()..].to_vec()),
            None => Some(self.tokenizer.decode(&[id], false).ok()?.into_bytes()),
        }
    }
}

/// transformers' choice of comparison from the tokenizer's decoder: byte fallback where a
/// `ByteFallback` decoder is present (even next to a byte-level one), bytes where a `ByteLevel`
/// one is, else characters.
fn matching_mode(tokenizer: &HfTokenizer) -> Result<Mode> {
    let Some(decoder) = tokenizer.inner().get_decoder() else { return Ok(Mode::Text) };
    let json = serde_json::to_value(decoder).map_err(|e| Error::Input(format!("tokenizer decoder: {e}")))?;
    Ok(if has_type(&json, "ByteFallback") {
        Mode::ByteFallback
    } else if has_type(&json, "ByteLevel") {
        Mode::ByteLevel
    } else {
        Mode::Text
    })
}

/// Whether a decoder's JSON (nested sequences included) has a part of type `kind`.
fn has_type(v: &Value, kind: &str) -> bool {
    match v {
        Value::Object(o) => {
            o.get("type").and_then(Value::as_str) == Some(kind) || o.values().any(|v| has_type(v, kind))
        }
        Value::Array(a) => a.iter().any(|v| has_type(v, kind)),
        _ => false,
    }
}

/// GPT-2's `bytes_to_unicode`, inverted: printable Latin-1 bytes stand for themselves, the others
/// for the characters from U+0100 on, in byte order.
fn byte_decoder() -> HashMap<char, u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut next = 256u32;
    (0..=255u8)
        .map(|b| {
            let c = if printable(b) {
                char::from(b)
            } else {
                next += 1;
                char::from_u32(next - 1).expect("U+0100 to U+0143 are characters")
            };
            (c, b)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::StopStrings;
    use crate::tokenizer::HfTokenizer;

    /// transformers' `StopStringCriteria` after every prefix of texts holding the stop strings
    /// (split over tokens, overhanging a token, inside one) and of random ids, for byte-level,
    /// byte-fallback, Unigram and WordPiece vocabularies (`tests/make_stop_golden.py`).
    #[test]
    fn stops_where_transformers_stops() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures.join("stop_strings_expected.json")).unwrap(),
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("oxtorch-stop-{}", std::process::id()));
        let mut checked = 0;
        for case in golden.as_array().unwrap() {
            let name = case["tokenizer"].as_str().unwrap();
            let sub = dir.join(name);
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::copy(fixtures.join(format!("tokenizers/{name}.json")), sub.join("tokenizer.json"))
                .unwrap();
            let tok = HfTokenizer::load(&sub, None).unwrap();
            let strings: Vec<String> = case["stop_strings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            let mut stop = StopStrings::new(&tok, &strings).unwrap().unwrap();
            let seqs = case["ids"].as_array().unwrap();
            for (ids, stopped) in seqs.iter().zip(case["stopped"].as_array().unwrap()) {
                let ids: Vec<i64> = ids.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
                for (n, want) in stopped.as_array().unwrap().iter().enumerate() {
                    let got = stop.matches(&ids[..=n]);
                    assert_eq!(got, want.as_bool().unwrap(), "{name} {strings:?} after {:?}", &ids[..=n]);
                    checked += usize::from(got);
                }
            }
        }
        assert!(checked > 100, "the goldens stop often enough to test something: {checked}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_byte_decoder_inverts_gpt2s_byte_characters() {
        let d = super::byte_decoder();
        assert_eq!(d.len(), 256);
        assert_eq!((d[&'Ġ'], d[&'Ċ'], d[&'a'], d[&'é']), (b' ', b'\n', b'a', 0xE9));
    }
}
