//! Tokenizers transformers keeps only as slow (Python) classes, which cut texts with a
//! SentencePiece model and look the pieces up in a vocabulary of their own (`vocab.json`):
//! `MarianTokenizer` (OPUS-MT) and `M2M100Tokenizer` (M2M100, WMT21). Their folders hold no
//! `tokenizer.json`.
//!
//! Encoding: the text is split on the added tokens as the slow tokenizers split it (longest
//! first, with their `lstrip` / `rstrip` / `single_word`); each other part (less Marian's leading
//! `>>lang<<` code, kept as one token) is cut by the SentencePiece model ([`segmenter`]) and each
//! piece looked up (the added tokens, then the language tokens, then the vocabulary; else the
//! unknown token); the class frames the ids (`</s>` after; M2M100's source language before).
//! Decoding looks the ids up the other way and joins the pieces between special tokens as the
//! SentencePiece model joins them ([`segmenter::PieceJoiner`]).

mod charsmap;
mod m2m_100;
mod marian;
mod segmenter;

use std::collections::HashMap;
use std::path::Path;

use tokenizers::{AddedToken, Encoding, PaddingDirection, PaddingParams, PaddingStrategy, Token, Tokenizer};

use super::folder::{read_json, Folder};
use crate::error::{Error, Result};
use charsmap::Charsmap;
use segmenter::PieceJoiner;

pub(super) use m2m_100::is_m2m_100;
pub(super) use marian::is_marian;

/// The slow tokenizer classes read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `MarianTokenizer`: `>>lang<<` codes in the text, a space after each special token when
    /// decoding, `▁` read as a space, ids outside the vocabulary read as the model's pieces
    Marian,
    /// `M2M100Tokenizer`: the source language's token first, special tokens decoded without
    /// spaces, ids outside the vocabulary read as the unknown token
    M2M100,
}

/// A slow SentencePiece tokenizer with a vocabulary of its own.
#[derive(Clone)]
pub(super) struct VocabSpm {
    /// which one
    class: Class,
    /// the source model's segmentation (SentencePiece's normalizer and model; nothing added)
    source: Tokenizer,
    /// the source model's charsmap, applied before `source` as SentencePiece applies it
    charsmap: Option<Charsmap>,
    /// `vocab.json`: piece → id
    encoder: HashMap<String, u32>,
    /// id → piece for decoding (Marian's `target_vocab.json` with separate vocabularies)
    decoder: HashMap<u32, String>,
    /// tokens numbered after the vocabulary (M2M100's `__fr__` languages) with their ids
    languages: Vec<(String, u32)>,
    /// how the decoding model joins pieces
    joiner: PieceJoiner,
    /// the added tokens and their ids, longest first (the order they are matched in)
    added: Vec<(u32, AddedToken)>,
    /// the special tokens (`all_special_tokens`: the named ones and the extra ones), which
    /// decoding skips when asked and never joins with pieces
    specials: Vec<String>,
    /// the unknown token
    unk_token: String,
    /// its id
    unk: u32,
    /// the ids before a text (M2M100's source language) and after it (`</s>`)
    frame: (Vec<u32>, Vec<u32>),
    /// at most this many ids per text, the frame included
    max_length: Option<usize>,
}

/// What a loader gathers for [`VocabSpm::new`].
struct Parts {
    class: Class,
    source: (Tokenizer, Option<Charsmap>),
    encoder: HashMap<String, u32>,
    decoder: HashMap<u32, String>,
    languages: Vec<(String, u32)>,
    joiner: PieceJoiner,
    /// the class's named special tokens (with their defaults applied), the unknown one included
    named: Vec<(&'static str, String)>,
}

impl VocabSpm {
    /// The folder's slow SentencePiece tokenizer, `None` when it is of neither class (or lacks
    /// the class's model file).
    pub fn load(folder: &Folder, max_length: Option<usize>) -> Result<Option<Self>> {
        let tokenizer = match marian::load(folder)? {
            Some(t) => Some(t),
            None => m2m_100::load(folder)?,
        };
        Ok(tokenizer.map(|t| VocabSpm { max_length, ..t }))
    }

    /// Assembles a tokenizer: the added tokens (the declared ones at their ids, then the special
    /// tokens, named and extra, at the ids the lookup gives them, else after the others), the
    /// unknown and end-of-sequence ids, `</s>` after each text.
    fn new(folder: &Folder, parts: Parts) -> Result<Self> {
        let token = |key: &str| parts.named.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone());
        let unk_token = token("unk_token").unwrap_or_else(|| "<unk>".into());
        let mut tokenizer = VocabSpm {
            class: parts.class,
            source: parts.source.0,
            charsmap: parts.source.1,
            encoder: parts.encoder,
            decoder: parts.decoder,
            languages: parts.languages,
            joiner: parts.joiner,
            added: super::deberta_v2::declared_tokens(folder, &parts.named)?,
            specials: parts.named.iter().map(|(_, t)| t.clone()).collect(),
            unk_token: unk_token.clone(),
            unk: 0,
            frame: (Vec::new(), Vec::new()),
            max_length: None,
        };
        for key in ["bos_token", "sep_token", "cls_token", "mask_token"] {
            if token(key).is_none() {
                tokenizer.specials.extend(folder.token(key)?.map(str::to_string));
            }
        }
        tokenizer.specials.extend(folder.extra_special_tokens()?);
        let mut next = tokenizer
            .encoder
            .values()
            .chain(tokenizer.languages.iter().map(|(_, i)| i))
            .chain(tokenizer.added.iter().map(|(i, _)| i))
            .max()
            .map_or(0, |&i| i + 1);
        for content in tokenizer.specials.clone() {
            if tokenizer.added.iter().any(|(_, t)| t.content == content) {
                continue;
            }
            // transformers registers the special tokens at their ids, those without one after the rest.
            let id = tokenizer.token_to_id(&content).unwrap_or_else(|| {
                next += 1;
                next - 1
            });
            tokenizer.added.push((id, AddedToken::from(content, true).normalized(false)));
        }
        tokenizer.added.sort_by_key(|(_, t)| std::cmp::Reverse(t.content.len()));
        tokenizer.unk = tokenizer.token_to_id(&unk_token).unwrap_or(0);
        let eos = token("eos_token").and_then(|t| tokenizer.token_to_id(&t)).unwrap_or(tokenizer.unk);
        tokenizer.frame.1 = vec![eos];
        Ok(tokenizer)
    }

    /// The source model's segmentation (a `tokenizers` pipeline whose ids are the model's
    /// pieces', not the vocabulary's).
    pub fn segmenter(&self) -> &Tokenizer {
        &self.source
    }

    /// How batches pad: to the longest, with the pad token, on `padding_side` (right by default).
    pub fn padding(&self, folder: &Folder) -> Result<PaddingParams> {
        let pad_token = folder.token("pad_token")?.unwrap_or("<pad>").to_string();
        Ok(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            direction: super::padding_side(folder)?.unwrap_or(PaddingDirection::Right),
            pad_to_multiple_of: None,
            pad_id: self.token_to_id(&pad_token).unwrap_or(self.unk),
            pad_type_id: 0,
            pad_token,
        })
    }

    /// The number of ids the frame adds to each text.
    pub fn framing_length(&self) -> usize {
        self.frame.0.len() + self.frame.1.len()
    }

    /// Whether texts name their target language (Marian's `>>fra<<`).
    pub fn takes_target_language_in_text(&self) -> bool {
        self.class == Class::Marian
    }

    /// Frames texts with the source language `code` (M2M100's `fr`, or its token `__fr__`); an
    /// error for another class or a language it lacks.
    pub fn set_source_language(&mut self, code: &str) -> Result<()> {
        if self.class != Class::M2M100 {
            return Err(Error::Input(format!(
                "this tokenizer has no source language to set to {code:?} (a Marian model's is fixed)"
            )));
        }
        let token = if code.starts_with("__") { code.to_string() } else { format!("__{code}__") };
        let id = self.languages.iter().find(|(t, _)| *t == token).map(|(_, i)| *i);
        let id = id.ok_or_else(|| {
            Error::Input(format!("the source language {code:?} is not one of the tokenizer's languages"))
        })?;
        self.frame.0 = vec![id];
        Ok(())
    }

    /// The id of a token: an added token's, a language's, else the vocabulary's.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        let added = self.added.iter().find(|(_, t)| t.content == token).map(|(i, _)| *i);
        let language = || self.languages.iter().find(|(t, _)| t == token).map(|(_, i)| *i);
        added.or_else(language).or_else(|| self.encoder.get(token).copied())
    }

    /// The token of an id: an added token's, a language's, else the decoding vocabulary's.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        let added = self.added.iter().find(|(i, _)| *i == id).map(|(_, t)| t.content.clone());
        let language = || self.languages.iter().find(|(_, i)| *i == id).map(|(t, _)| t.clone());
        added.or_else(language).or_else(|| self.decoder.get(&id).cloned())
    }

    /// The ids of `first` (and `second` after it), framed when `add_special_tokens`, truncated to
    /// the maximum length (the longer text first).
    pub fn encode(&self, first: &str, second: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let mut ids = self.ids(first)?;
        let mut pair = second.map(|s| self.ids(s)).transpose()?;
        if let Some(max) = self.max_length {
            let budget = max.saturating_sub(if add_special_tokens { self.framing_length() } else { 0 });
            while ids.len() + pair.as_ref().map_or(0, Vec::len) > budget {
                match &mut pair {
                    // (transformers' `longest_first`: the first text while it is longer.)
                    Some(p) if p.len() >= ids.len() => p.pop(),
                    _ => ids.pop(),
                };
            }
        }
        ids.extend(pair.into_iter().flatten());
        if add_special_tokens {
            ids = [&self.frame.0[..], &ids, &self.frame.1].concat();
        }
        let tokens = ids.iter().map(|&id| Token::new(id, self.id_to_token(id).unwrap_or_default(), (0, 0)));
        Ok(Encoding::from_tokens(tokens.collect(), 0))
    }

    /// The ids of one text, unframed.
    fn ids(&self, text: &str) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        for part in self.split(text) {
            match part {
                Part::Added(id) => ids.push(id),
                Part::Text(text) => {
                    let (code, text) = match self.class {
                        Class::Marian => split_language_code(&text),
                        Class::M2M100 => (None, text.as_str()),
                    };
                    if let Some(code) = code {
                        ids.push(self.token_to_id(code).unwrap_or(self.unk));
                    }
                    let normalized;
                    let text = match &self.charsmap {
                        Some(charsmap) => {
                            normalized = charsmap.normalize(text);
                            normalized.as_str()
                        }
                        None => text,
                    };
                    let pieces = self
                        .source
                        .encode(text, false)
                        .map_err(|e| Error::Input(format!("tokenizer: {e}")))?;
                    ids.extend(pieces.get_tokens().iter().map(|p| self.token_to_id(p).unwrap_or(self.unk)));
                }
            }
        }
        Ok(ids)
    }

    /// The text split on the added tokens as transformers' slow tokenizers split it: each earliest,
    /// longest match, then the neighbours' spaces stripped (`lstrip` / `rstrip`) and tokens inside
    /// words given back to them (`single_word`); parts are compared by their text, as there.
    fn split(&self, text: &str) -> Vec<Part> {
        let mut parts: Vec<String> = Vec::new();
        let (mut plain, mut at) = (0, 0);
        while at < text.len() {
            let found =
                self.added.iter().find(|(_, t)| !t.content.is_empty() && text[at..].starts_with(&t.content));
            match found {
                Some((_, token)) => {
                    if plain < at {
                        parts.push(text[plain..at].to_string());
                    }
                    parts.push(token.content.clone());
                    at += token.content.len();
                    plain = at;
                }
                None => at += text[at..].chars().next().map_or(1, char::len_utf8),
            }
        }
        if plain < text.len() {
            parts.push(text[plain..].to_string());
        }
        let added = |part: &str| self.added.iter().find(|(_, t)| t.content == part);
        for i in 0..parts.len() {
            let Some((_, token)) = added(&parts[i]) else { continue };
            let left = if i > 0 { parts[i - 1].clone() } else { String::new() };
            let right = parts.get(i + 1).cloned().unwrap_or_default();
            if token.rstrip && !right.is_empty() {
                parts[i + 1] = right.trim_start_matches(is_python_space).to_string();
            }
            if token.lstrip && !left.is_empty() {
                parts[i - 1] = left.trim_end_matches(is_python_space).to_string();
            }
            if token.single_word {
                if !left.is_empty() && !left.ends_with(' ') {
                    parts[i - 1].push_str(&token.content);
                    parts[i].clear();
                } else if !right.is_empty() && !right.starts_with(' ') {
                    parts[i + 1].insert_str(0, &token.content);
                    parts[i].clear();
                }
            }
        }
        parts
            .into_iter()
            .filter(|part| !part.is_empty())
            .map(|part| match added(&part) {
                Some((id, _)) => Part::Added(*id),
                None => Part::Text(part),
            })
            .collect()
    }

    /// The text of `ids`, as the class's `decode`: special tokens (those of
    /// `all_special_tokens`, skipped when asked) kept whole, the pieces between them joined by the
    /// SentencePiece model, the ends stripped; Marian puts a space after each special token and
    /// reads every `▁` as a space.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let skipped: Vec<u32> = match skip_special_tokens {
            true => self.specials.iter().filter_map(|t| self.token_to_id(t)).collect(),
            false => Vec::new(),
        };
        let mut text = String::new();
        let mut run: Vec<String> = Vec::new();
        for &id in ids.iter().filter(|id| !skipped.contains(id)) {
            let token = match (self.id_to_token(id), self.class) {
                (Some(token), _) => token,
                (None, Class::M2M100) => self.unk_token.clone(),
                (None, Class::Marian) => self.joiner.by_id.get(id as usize).cloned().ok_or_else(|| {
                    Error::Input(format!("tokenizer: the id {id} is in neither the vocabulary nor the model"))
                })?,
            };
            if self.specials.contains(&token) {
                text.push_str(&self.joiner.join(&run));
                text.push_str(&token);
                if self.class == Class::Marian {
                    text.push(' ');
                }
                run.clear();
            } else {
                run.push(token);
            }
        }
        text.push_str(&self.joiner.join(&run));
        if self.class == Class::Marian {
            text = text.replace('▁', " ");
        }
        Ok(text.trim_matches(is_python_space).to_string())
    }
}

/// A part of a text split on the added tokens.
enum Part {
    /// an added token's id
    Added(u32),
    /// text between them
    Text(String),
}

/// `MarianTokenizer.remove_language_code`: a text starting `>>` keeps its start up to the first
/// `<<` as one token (a target-language code such as `>>fra<<`).
fn split_language_code(text: &str) -> (Option<&str>, &str) {
    if !text.starts_with(">>") {
        return (None, text);
    }
    match text.find("<<") {
        Some(at) => (Some(&text[..at + 2]), &text[at + 2..]),
        None => (None, text),
    }
}

/// Python's `str.isspace` (Unicode's whitespace and the four information separators).
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A JSON vocabulary (piece → id); an error naming the file when it is missing or malformed.
fn read_vocab(path: &Path) -> Result<HashMap<String, u32>> {
    let Some(json) = read_json(path)? else {
        return Err(Error::format(path, "is missing"));
    };
    let serde_json::Value::Object(map) = json else {
        return Err(Error::format(path, "must map pieces to ids"));
    };
    map.into_iter()
        .map(|(piece, id)| {
            let id = id.as_u64().and_then(|i| u32::try_from(i).ok());
            id.map(|id| (piece.clone(), id))
                .ok_or_else(|| Error::format(path, format!("the id of {piece:?} is not an id")))
        })
        .collect()
}

/// An error naming `vocab.json` unless it holds the unknown token `unk` (transformers refuses such
/// vocabularies).
fn check_unknown(encoder: &HashMap<String, u32>, vocab_path: &Path, unk: &str) -> Result<()> {
    match encoder.contains_key(unk) {
        true => Ok(()),
        false => Err(Error::format(
            vocab_path,
            format!(
                "the unk_token {unk:?} (tokenizer_config.json's, else the class's) must be in the vocabulary"
            ),
        )),
    }
}

/// The class's named special tokens: `tokenizer_config.json`'s, else the defaults.
fn named_tokens(folder: &Folder, defaults: &[(&'static str, &str)]) -> Result<Vec<(&'static str, String)>> {
    defaults
        .iter()
        .map(|&(key, default)| Ok((key, folder.token(key)?.unwrap_or(default).to_string())))
        .collect()
}

/// Checks decoded texts against a golden's `decoded_raw` (each text's framed ids, special tokens
/// kept) and `decode_ids` / `decoded_ids` (and `decoded_ids_skipped`, special tokens skipped).
#[cfg(test)]
fn check_decoding(tok: &super::HfTokenizer, texts: &[&str], want: &serde_json::Value, name: &str) {
    if let Some(raw) = want["decoded_raw"].as_array() {
        for (i, text) in raw.iter().enumerate() {
            let ids: Vec<u32> = serde_json::from_value(want["special"][i].clone()).unwrap();
            assert_eq!(tok.decode(&ids, false).unwrap(), text.as_str().unwrap(), "{name} {:?}", texts[i]);
        }
    }
    let lists = want["decode_ids"].as_array().unwrap();
    for (key, skip) in [("decoded_ids", false), ("decoded_ids_skipped", true)] {
        let Some(texts) = want[key].as_array() else { continue };
        for (ids, text) in lists.iter().zip(texts) {
            let ids: Vec<u32> = serde_json::from_value(ids.clone()).unwrap();
            assert_eq!(tok.decode(&ids, skip).unwrap(), text.as_str().unwrap(), "{name} {key} {ids:?}");
        }
    }
}
