//! Marian (opus-mt) tokenizer folders: no `tokenizer.json`, but two SentencePiece models
//! (`source.spm`, `target.spm`) and a `vocab.json` (`target_vocab.json` too when the
//! vocabularies are separate), as transformers' `MarianTokenizer` reads them.
//!
//! Encoding: the text is split on the added tokens (`</s>`, `<unk>`, `<pad>`, the declared ones;
//! longest first, with their `lstrip` / `rstrip` / `single_word`); each other part loses a
//! leading `>>lang<<` code (kept as one token), is cut by the source model (SentencePiece's
//! normalizer and Unigram, unknown runs fused) and each piece is looked up in `vocab.json`, the
//! unknown token for the pieces it lacks; `</s>` ends the text. Decoding looks ids up in the
//! vocabulary (the target one when separate) and joins the pieces between special tokens as the
//! SentencePiece model (the target one when separate) joins them.

use std::collections::HashMap;
use std::path::Path;

use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::normalizers::replace::{Replace, ReplacePattern};
use tokenizers::normalizers::{NormalizerWrapper, Prepend, Sequence};
use tokenizers::{AddedToken, Encoding, PaddingDirection, PaddingParams, PaddingStrategy, Token, Tokenizer};

use super::folder::{read_json, Folder};
use super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use crate::error::{Error, Result};

/// The source SentencePiece model's file name.
pub(super) const SOURCE_SPM: &str = "source.spm";
/// The target SentencePiece model's file name.
const TARGET_SPM: &str = "target.spm";
/// The (source, or shared) vocabulary's file name.
const VOCAB: &str = "vocab.json";
/// The target vocabulary's file name (with `separate_vocabs`).
const TARGET_VOCAB: &str = "target_vocab.json";

/// Whether the folder's tokenizer is a `MarianTokenizer`: its class, or without one, `config.json`'s
/// model type.
pub(super) fn is_marian(folder: &Folder) -> Result<bool> {
    Ok(match folder.class() {
        Some(class) => class == "MarianTokenizer",
        None => folder.model_type()? == Some("marian"),
    })
}

/// A Marian tokenizer.
#[derive(Clone)]
pub(super) struct Marian {
    /// the source model's segmentation (SentencePiece's normalizer, its Unigram; nothing added)
    source: Tokenizer,
    /// `vocab.json`: piece → id
    encoder: HashMap<String, u32>,
    /// id → piece for decoding (`target_vocab.json`'s with separate vocabularies)
    decoder: HashMap<u32, String>,
    /// the model decoding joins pieces as (the target one with separate vocabularies)
    joiner: PieceJoiner,
    /// the added tokens and their ids, longest first (the order they are matched in)
    added: Vec<(u32, AddedToken)>,
    /// the special tokens (`all_special_tokens`: the named ones and the extra ones), which
    /// decoding skips when asked and never joins with pieces
    specials: Vec<String>,
    /// the unknown token's id
    unk: u32,
    /// the end-of-sequence token's id
    eos: u32,
    /// at most this many ids per text, `</s>` included
    max_length: Option<usize>,
}

impl Marian {
    /// The folder's Marian tokenizer; `None` when it has no `source.spm` or is of another class.
    pub fn load(folder: &Folder, max_length: Option<usize>) -> Result<Option<Self>> {
        if !folder.dir.join(SOURCE_SPM).is_file() || !is_marian(folder)? {
            return Ok(None);
        }
        let separate = folder.flag("separate_vocabs")?.unwrap_or(false);
        let source = SpmModel::read(&folder.dir.join(SOURCE_SPM))?;
        let target_path = folder.dir.join(TARGET_SPM);
        let target = if target_path.is_file() { Some(SpmModel::read(&target_path)?) } else { None };
        let encoder = read_vocab(&folder.dir.join(VOCAB))?;
        let decoder: HashMap<u32, String> = if separate {
            read_vocab(&folder.dir.join(TARGET_VOCAB))?.into_iter().map(|(p, i)| (i, p)).collect()
        } else {
            encoder.iter().map(|(p, &i)| (i, p.clone())).collect()
        };
        let joiner = match (&target, separate) {
            (Some(target), true) => PieceJoiner::new(target),
            (None, true) => {
                return Err(Error::format(&target_path, "separate_vocabs needs the target model"))
            }
            _ => PieceJoiner::new(&source),
        };
        let named = |key: &str, default: &str| -> Result<String> {
            Ok(folder.token(key)?.unwrap_or(default).to_string())
        };
        let specials = [
            ("eos_token", named("eos_token", "</s>")?),
            ("unk_token", named("unk_token", "<unk>")?),
            ("pad_token", named("pad_token", "<pad>")?),
        ];
        let unk_token = &specials[1].1;
        if !encoder.contains_key(unk_token) {
            return Err(Error::format(
                &folder.dir.join(VOCAB),
                format!("the unknown token {unk_token:?} must be in the vocabulary"),
            ));
        }
        let mut added = super::deberta_v2::declared_tokens(folder, &specials)?;
        let mut next = encoder.values().chain(added.iter().map(|(i, _)| i)).max().map_or(0, |&i| i + 1);
        let mut all_specials: Vec<String> = specials.iter().map(|(_, t)| t.clone()).collect();
        for key in ["bos_token", "sep_token", "cls_token", "mask_token"] {
            all_specials.extend(folder.token(key)?.map(str::to_string));
        }
        all_specials.extend(folder.extra_special_tokens()?);
        for content in &all_specials {
            if added.iter().any(|(_, t)| &t.content == content) {
                continue;
            }
            // transformers registers the special tokens at their vocabulary ids, the others after.
            let id = encoder.get(content).copied().unwrap_or_else(|| {
                next += 1;
                next - 1
            });
            added.push((id, AddedToken::from(content.clone(), true).normalized(false)));
        }
        added.sort_by_key(|(_, t)| std::cmp::Reverse(t.content.len()));
        let mut marian = Marian {
            source: segmenter(&source, &folder.dir.join(SOURCE_SPM))?,
            encoder,
            decoder,
            joiner,
            added,
            specials: all_specials,
            unk: 0,
            eos: 0,
            max_length,
        };
        marian.unk = marian.token_to_id(unk_token).unwrap_or(0);
        marian.eos = marian.token_to_id(&specials[0].1).unwrap_or(marian.unk);
        Ok(Some(marian))
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

    /// The id of a token: an added token's, else the vocabulary's.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match self.added.iter().find(|(_, t)| t.content == token) {
            Some((id, _)) => Some(*id),
            None => self.encoder.get(token).copied(),
        }
    }

    /// The token of an id: an added token's, else the decoding vocabulary's.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match self.added.iter().find(|(i, _)| *i == id) {
            Some((_, t)) => Some(t.content.clone()),
            None => self.decoder.get(&id).cloned(),
        }
    }

    /// The ids of `first` (and `second` after it), `</s>` last when `add_special_tokens`,
    /// truncated to the maximum length (the longer text first).
    pub fn encode(&self, first: &str, second: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let mut ids = self.ids(first)?;
        let mut pair = second.map(|s| self.ids(s)).transpose()?;
        if let Some(max) = self.max_length {
            let budget = max.saturating_sub(usize::from(add_special_tokens));
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
            ids.push(self.eos);
        }
        let tokens = ids.iter().map(|&id| Token::new(id, self.id_to_token(id).unwrap_or_default(), (0, 0)));
        Ok(Encoding::from_tokens(tokens.collect(), 0))
    }

    /// The ids of one text, without `</s>`.
    fn ids(&self, text: &str) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        for part in self.split(text) {
            match part {
                Part::Added(id) => ids.push(id),
                Part::Text(text) => {
                    let (code, text) = split_language_code(&text);
                    if let Some(code) = code {
                        ids.push(self.token_to_id(code).unwrap_or(self.unk));
                    }
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
            match self.added.iter().find(|(_, t)| !t.content.is_empty() && text[at..].starts_with(&t.content))
            {
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

    /// The text of `ids`, as `MarianTokenizer.decode`: special tokens (skipped when asked; those of
    /// `all_special_tokens`, not every added token flagged special) each
    /// followed by a space, the pieces between them joined by the SentencePiece model, `▁` made a
    /// space, the ends stripped.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let mut text = String::new();
        let mut run: Vec<String> = Vec::new();
        let skipped: Vec<u32> = match skip_special_tokens {
            true => self.specials.iter().filter_map(|t| self.token_to_id(t)).collect(),
            false => Vec::new(),
        };
        for &id in ids.iter().filter(|id| !skipped.contains(id)) {
            let token = self
                .id_to_token(id)
                .or_else(|| self.joiner.by_id.get(id as usize).cloned())
                .ok_or_else(|| {
                    Error::Input(format!("tokenizer: the id {id} is in neither the vocabulary nor the model"))
                })?;
            if self.specials.contains(&token) {
                text.push_str(&self.joiner.join(&run));
                text.push_str(&token);
                text.push(' ');
                run.clear();
            } else {
                run.push(token);
            }
        }
        text.push_str(&self.joiner.join(&run));
        Ok(text.replace('▁', " ").trim_matches(is_python_space).to_string())
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

/// A JSON vocabulary (piece → id).
fn read_vocab(path: &Path) -> Result<HashMap<String, u32>> {
    let Some(json) = read_json(path)? else {
        return Err(Error::format(path, "is missing (a Marian tokenizer needs it)"));
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

/// The source model's segmentation as SentencePiece cuts a text: its normalizer (the
/// precompiled charsmap; leading, trailing and repeated spaces dropped; a space put first; spaces
/// written `▁`, each as the model says), then a Viterbi pass of its Unigram over the whole text
/// (unknown runs fused, their text kept). Control and unused pieces are never matched, and
/// user-defined ones get SentencePiece's bonus.
fn segmenter(spm: &SpmModel, path: &Path) -> Result<Tokenizer> {
    if spm.model_type != SpmModelType::Unigram {
        return Err(Error::format(path, "MarianTokenizer needs a Unigram SentencePiece model"));
    }
    let max_score =
        spm.pieces.iter().filter(|p| p.kind == PieceKind::Normal).map(|p| p.score).fold(0f32, f32::max);
    let mut vocab: Vec<(String, f64)> = Vec::new();
    let mut unk_id = None;
    for piece in &spm.pieces {
        let score = match piece.kind {
            PieceKind::Normal | PieceKind::Byte => piece.score,
            PieceKind::UserDefined => piece.piece.chars().count() as f32 * max_score - 0.1,
            PieceKind::Unknown => {
                unk_id = Some(vocab.len());
                piece.score
            }
            PieceKind::Control | PieceKind::Unused => continue,
        };
        vocab.push((piece.piece.clone(), f64::from(score)));
    }
    let unk_id = unk_id.ok_or_else(|| Error::format(path, "the model has no unknown piece"))?;
    let unigram = Unigram::from(vocab, Some(unk_id), spm.byte_fallback)
        .map_err(|e| Error::format(path, e.to_string()))?;
    let mut tokenizer = Tokenizer::new(unigram);
    let regex = |pattern: &str, with: &str| -> Result<NormalizerWrapper> {
        Replace::new(ReplacePattern::Regex(pattern.into()), with)
            .map(NormalizerWrapper::Replace)
            .map_err(|e| Error::format(path, e.to_string()))
    };
    let mut steps = Vec::new();
    if !spm.precompiled_charsmap.is_empty() {
        let charsmap = Precompiled::from(&spm.precompiled_charsmap)
            .map_err(|e| Error::format(path, format!("its precompiled charsmap: {e}")))?;
        steps.push(NormalizerWrapper::Precompiled(charsmap));
    }
    if spm.whitespace.remove_extra {
        steps.push(regex(r"\A +| +\z", "")?);
        steps.push(regex(" {2,}", " ")?);
    }
    if spm.whitespace.add_dummy_prefix {
        steps.push(NormalizerWrapper::Prepend(Prepend::new(" ".into())));
    }
    if spm.whitespace.escape {
        steps.push(regex(" ", "▁")?);
    }
    tokenizer.with_normalizer(Some(NormalizerWrapper::Sequence(Sequence::new(steps))));
    Ok(tokenizer)
}

/// How a SentencePiece model joins pieces back into text (`DecodePieces`): its own pieces with
/// `▁` read as a space (the spaces before the first letter dropped when the model adds a dummy
/// prefix), control pieces as nothing, the unknown piece as ` ⁇ `, pieces it does not know as
/// written.
#[derive(Clone)]
struct PieceJoiner {
    /// the model's pieces' kinds
    kinds: HashMap<String, PieceKind>,
    /// its pieces by id (transformers' fallback for ids outside the vocabulary)
    by_id: Vec<String>,
    /// the model adds a dummy prefix (dropped again at the start)
    drops_leading_space: bool,
}

impl PieceJoiner {
    fn new(spm: &SpmModel) -> Self {
        PieceJoiner {
            kinds: spm.pieces.iter().map(|p| (p.piece.clone(), p.kind)).collect(),
            by_id: spm.pieces.iter().map(|p| p.piece.clone()).collect(),
            drops_leading_space: spm.whitespace.add_dummy_prefix,
        }
    }

    fn join(&self, pieces: &[String]) -> String {
        let mut text = String::new();
        let mut at_start = true;
        for piece in pieces {
            match self.kinds.get(piece) {
                None => {
                    text.push_str(piece);
                    at_start = false;
                }
                Some(PieceKind::Control) => {}
                Some(PieceKind::Unknown) => {
                    text.push_str(" \u{2047} ");
                    at_start = false;
                }
                Some(_) => {
                    let spaced = piece.replace('▁', " ");
                    let spaced = if at_start && self.drops_leading_space {
                        spaced.trim_start_matches(' ')
                    } else {
                        &spaced
                    };
                    at_start &= spaced.is_empty();
                    text.push_str(spaced);
                }
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use crate::tokenizer::golden_check::check_against;
    use crate::tokenizer::HfTokenizer;

    fn golden() -> Value {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/marian_tokenizer_expected.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A folder laid out for config `name` of the golden (its files, `tokenizer_config.json`, a
    /// `config.json` with its model type where it has one).
    fn folder(golden: &Value, name: &str, tag: &str) -> PathBuf {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/marian");
        let dir = std::env::temp_dir().join(format!("oxtorch-marian-{tag}-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for file in golden["files"][name].as_array().unwrap() {
            let file = file.as_str().unwrap();
            std::fs::copy(fixtures.join(file), dir.join(file)).unwrap();
        }
        std::fs::write(dir.join("tokenizer_config.json"), golden["configs"][name].to_string()).unwrap();
        if let Some(model_type) = golden["model_types"][name].as_str() {
            std::fs::write(dir.join("config.json"), format!(r#"{{"model_type": "{model_type}"}}"#)).unwrap();
        }
        dir
    }

    /// Marian folders (two small SentencePiece Unigrams, English and German, cut nmt_nfkc
    /// charsmaps; both models' pieces in one `vocab.json` in an order of its own; the target's alone
    /// in `target_vocab.json`) found by `config.json`'s model type or by class, with shared or
    /// separate vocabularies: texts with language codes (known, unknown, mid-text, after a special
    /// token), pieces only the target model has, unknown runs, special tokens and odd spaces, single
    /// and padded, and ids decoded with and without special tokens, as transformers 5.24 gives
    /// them (`make_marian_tokenizer_golden.py`).
    #[test]
    fn marian_folders_tokenize_as_transformers_5() {
        let golden = golden();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        for name in golden["configs"].as_object().unwrap().keys() {
            let dir = folder(&golden, name, "golden");
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let tok = HfTokenizer::load(&dir, None).unwrap();
            let want = &golden["ids"][name];
            check_against(&tok, &texts, want, name);
            if let Some(raw) = want["decoded_raw"].as_array() {
                for (i, text) in raw.iter().enumerate() {
                    let ids: Vec<u32> = serde_json::from_value(want["special"][i].clone()).unwrap();
                    assert_eq!(
                        tok.decode(&ids, false).unwrap(),
                        text.as_str().unwrap(),
                        "{name} {:?}",
                        texts[i]
                    );
                }
            }
            for (ids, text) in
                want["decode_ids"].as_array().unwrap().iter().zip(want["decoded_ids"].as_array().unwrap())
            {
                let ids: Vec<u32> = serde_json::from_value(ids.clone()).unwrap();
                assert_eq!(tok.decode(&ids, false).unwrap(), text.as_str().unwrap(), "{name} {ids:?}");
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A maximum length keeps the first ids and `</s>`; ids outside both the vocabulary and the
    /// model, a missing vocabulary or an unknown token it lacks are errors naming the file.
    #[test]
    fn truncation_and_bad_folders() {
        let golden = golden();
        let dir = folder(&golden, "marian", "bad");
        let full = HfTokenizer::load(&dir, None).unwrap().encode("Hello world again", true).unwrap();
        let cut = HfTokenizer::load(&dir, Some(4)).unwrap().encode("Hello world again", true).unwrap();
        assert_eq!(cut, [&full[..3], &[0]].concat());
        assert!(HfTokenizer::load(&dir, Some(0)).is_err());
        let tok = HfTokenizer::load(&dir, None).unwrap();
        assert!(tok.decode(&[100_000], false).unwrap_err().to_string().contains("100000"));
        std::fs::write(dir.join("vocab.json"), r#"{"</s>": 0, "a": 1}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json") && err.contains("<unk>"), "{err}");
        std::fs::write(dir.join("vocab.json"), r#"{"</s>": 0, "<unk>": -1}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json") && err.contains("\"<unk>\""), "{err}");
        std::fs::remove_file(dir.join("vocab.json")).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
