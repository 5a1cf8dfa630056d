//! `tokenizer.json` through the `tokenizers` crate, batches padded to the longest sequence.

mod bert;
mod byte_level_bpe;
mod ctc;
mod deberta_v2;
mod fast_load;
mod folder;
mod gemma;
#[cfg(test)]
mod golden_check;
mod llama;
mod llama_spm;
mod mbart;
mod nllb;
mod pegasus_spm;
mod sentencepiece;
mod unigram_classes;
mod unigram_spm;
mod vocab_spm;

use std::path::Path;

use oxtorch_tensor::Tensor;
use tokenizers::normalizers::{Lowercase, NormalizerWrapper, Sequence};
use tokenizers::{PaddingParams, PaddingStrategy, PostProcessor, Tokenizer, TruncationParams};

use crate::error::{Error, Result};

pub use ctc::CtcTokenizer;

/// Token ids of a batch of texts, as int64 `[batch, seq]` tensors.
#[derive(Debug, Clone)]
pub struct Batch {
    /// token ids
    pub input_ids: Tensor,
    /// 1 for tokens, 0 for padding
    pub attention_mask: Tensor,
    /// segment ids
    pub token_type_ids: Tensor,
}

/// A Hugging Face fast tokenizer.
#[derive(Clone)]
pub struct HfTokenizer {
    /// the pipeline, without padding (single texts are never padded)
    inner: Tokenizer,
    /// how [`HfTokenizer::encode_batch`] pads: to the longest text, with `tokenizer_config.json`'s
    /// pad token and side, else the file's
    padding: PaddingParams,
    /// how an NLLB tokenizer frames texts with their source language
    language_frame: Option<nllb::LanguageFrame>,
    /// a slow SentencePiece tokenizer with a vocabulary of its own (Marian's, M2M100's), which
    /// encodes and decodes in place of `inner` (then its SentencePiece segmentation alone)
    vocab_spm: Option<Box<vocab_spm::VocabSpm>>,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer").field("vocab_size", &self.inner.get_vocab_size(true)).finish()
    }
}

impl HfTokenizer {
    /// Reads `dir/tokenizer.json` (with the pipelines transformers 5 rebuilds from
    /// `tokenizer_config.json` for the BERT, Llama, Gemma, XLM-RoBERTa, CamemBERT, T5, ALBERT,
    /// DeBERTa-v2, NLLB and mBART tokenizer classes), or without one, a BERT tokenizer's
    /// `vocab.txt`, a DeBERTa-v2, Llama, T5 or Pegasus tokenizer's SentencePiece model, a GPT-2 or RoBERTa
    /// (BART, OPT) tokenizer's `vocab.json` and `merges.txt`, or a Marian or M2M100 folder
    /// (SentencePiece models and a `vocab.json`). Batches are padded to their
    /// longest text (the file's own fixed padding is replaced, as transformers does for
    /// `padding=True`) and truncated to `max_length` tokens when given.
    pub fn load(dir: &Path, max_length: Option<usize>) -> Result<Self> {
        let path = dir.join("tokenizer.json");
        let folder = folder::Folder::read(dir)?;
        if !path.is_file() {
            if let Some(slow) = vocab_spm::VocabSpm::load(&folder, max_length)? {
                let added = slow.framing_length();
                if let Some(max_length) = max_length.filter(|&m| m < added) {
                    return Err(Error::format(
                        &folder.config_path,
                        format!("a maximum length of {max_length} tokens cannot hold the {added} special tokens each text gets"),
                    ));
                }
                return Ok(HfTokenizer {
                    inner: slow.segmenter().clone(),
                    padding: slow.padding(&folder)?,
                    language_frame: None,
                    vocab_spm: Some(Box::new(slow)),
                });
            }
        }
        let class: ClassDefaults;
        let mut language_frame = None;
        let mut inner = if path.is_file() {
            // As `Tokenizer::from_file`, only faster.
            let json = std::fs::read_to_string(&path).map_err(|e| Error::format(&path, e.to_string()))?;
            let mut inner =
                fast_load::tokenizer_from_json(&json).map_err(|e| Error::format(&path, e.to_string()))?;
            class = if let Some(pad) = bert::rebuild_normalizer(&folder, &mut inner)? {
                ClassDefaults { pad_token: Some(pad), left: false }
            } else if llama::rebuild_pipeline(&folder, &json, &mut inner)? {
                ClassDefaults { pad_token: None, left: true }
            } else if gemma::rebuild_pipeline(&folder, &mut inner)? {
                ClassDefaults { pad_token: Some(gemma::PAD), left: true }
            } else if unigram_classes::rebuild_pipeline(&folder, &mut inner)? {
                ClassDefaults { pad_token: Some(unigram_classes::PAD), left: false }
            } else if deberta_v2::rebuild_pipeline(&folder, &mut inner)? {
                ClassDefaults { pad_token: Some(deberta_v2::PAD), left: false }
            } else if let Some(frame) = nllb::rebuild_pipeline(&folder, &mut inner)? {
                language_frame = Some(frame);
                ClassDefaults { pad_token: Some(nllb::PAD), left: false }
            } else if let Some(frame) = mbart::rebuild_pipeline(&folder, &mut inner)? {
                language_frame = Some(frame);
                ClassDefaults { pad_token: Some(mbart::PAD), left: false }
            } else {
                ClassDefaults::of_class(&folder)?
            };
            inner
        } else if let Some(inner) = deberta_v2::from_spm(&folder)? {
            class = ClassDefaults { pad_token: Some(deberta_v2::PAD), left: false };
            inner
        } else if let Some(inner) = llama_spm::from_spm(&folder)? {
            class = ClassDefaults { pad_token: None, left: true };
            inner
        } else if let Some(inner) = unigram_spm::from_spm(&folder)? {
            class = ClassDefaults { pad_token: Some(unigram_classes::PAD), left: false };
            inner
        } else if let Some(inner) = pegasus_spm::from_spm(&folder)? {
            class = ClassDefaults { pad_token: Some(pegasus_spm::PAD), left: false };
            inner
        } else if let Some((inner, pad_token)) = byte_level_bpe::from_vocab_and_merges(&folder)? {
            class = ClassDefaults { pad_token, left: false };
            inner
        } else {
            class = ClassDefaults { pad_token: Some(bert::PAD), left: false };
            bert::from_vocab_txt(&folder)?.ok_or_else(|| {
                Error::format(
                    dir,
                    "no tokenizer.json (nor a BERT tokenizer's vocab.txt, DeBERTa-v2's spm.model, a Llama tokenizer's tokenizer.model, T5's or Pegasus's spiece.model, GPT-2's or RoBERTa's vocab.json and merges.txt, Marian's source.spm or M2M100's sentencepiece.bpe.model)",
                )
            })?
        };
        if let Some(p) = inner.get_post_processor() {
            // The processor alone, serialized back: far smaller than the file.
            let value = serde_json::to_value(p).map_err(|e| Error::format(&path, e.to_string()))?;
            check_post_processor(&value).map_err(|e| Error::format(&path, e))?;
        }
        let padding = padding(&folder, class, &mut inner)?;
        inner.with_padding(None);
        // The tokenizers crate subtracts the special tokens from the length unchecked.
        let added = inner.get_post_processor().map_or(0, |p| p.added_tokens(false));
        if let Some(max_length) = max_length.filter(|&m| m < added) {
            return Err(Error::format(
                &path,
                format!("a maximum length of {max_length} tokens cannot hold the {added} special tokens each text gets"),
            ));
        }
        let truncation = max_length.map(|max_length| TruncationParams { max_length, ..Default::default() });
        inner.with_truncation(truncation).map_err(|e| Error::format(&path, e.to_string()))?;
        Ok(HfTokenizer { inner, padding, language_frame, vocab_spm: None })
    }

    /// Whether `dir` has no `tokenizer.json` but a `vocab.txt` that [`HfTokenizer::load`] reads as
    /// a BERT tokenizer's.
    pub fn bert_vocab_folder(dir: &Path) -> Result<bool> {
        Ok(!dir.join("tokenizer.json").is_file()
            && dir.join("vocab.txt").is_file()
            && bert::is_vocab_folder(&folder::Folder::read(dir)?)?)
    }

    /// Whether `dir` holds a tokenizer [`HfTokenizer::load`] reads: `tokenizer.json`, a BERT
    /// tokenizer's `vocab.txt`, a DeBERTa-v2, Llama, T5 or Pegasus tokenizer's SentencePiece model, a GPT-2
    /// or RoBERTa tokenizer's `vocab.json` and `merges.txt`, or a Marian or M2M100 folder.
    pub fn in_folder(dir: &Path) -> Result<bool> {
        if dir.join("tokenizer.json").is_file() {
            return Ok(true);
        }
        let folder = folder::Folder::read(dir)?;
        Ok((dir.join("vocab.txt").is_file() && bert::is_vocab_folder(&folder)?)
            || (dir.join(deberta_v2::SPM_FILE).is_file() && deberta_v2::is_deberta_v2(&folder)?)
            || (dir.join(llama_spm::SPM_FILE).is_file() && llama_spm::is_llama(&folder)?)
            || unigram_spm::is_unigram_spm(&folder)?
            || pegasus_spm::is_pegasus_spm(&folder)?
            || byte_level_bpe::is_byte_level_bpe(&folder)?
            || vocab_spm::is_marian(&folder)?
            || vocab_spm::is_m2m_100(&folder)?)
    }

    /// Frames texts with the source language `code` (a language-code token such as `fra_Latn`, or
    /// M2M100's code `fr`), as transformers' `tokenizer.src_lang = code`: an error for a tokenizer
    /// without source languages (NLLB's, mBART's and M2M100's have them) or a code that is not one
    /// of its languages.
    pub fn set_source_language(&mut self, code: &str) -> Result<()> {
        if let Some(slow) = &mut self.vocab_spm {
            return slow.set_source_language(code);
        }
        match &self.language_frame {
            Some(frame) => frame.set_source(&mut self.inner, code),
            None => Err(Error::Input(format!(
                "this tokenizer has no source language to set to {code:?} (NLLB's and mBART's have)"
            ))),
        }
    }

    /// Whether texts name their target language themselves (Marian's `>>fra<<` codes, read at the
    /// start of a text) rather than the generation forcing it.
    pub fn takes_target_language_in_text(&self) -> bool {
        self.vocab_spm.as_ref().is_some_and(|t| t.takes_target_language_in_text())
    }

    /// Lowercases texts before the file's own normalizer runs (sentence-transformers'
    /// `do_lower_case`: a `Lowercase` normalizer put first, unless the normalizer is one or a
    /// sequence holding one).
    pub fn lowercase_inputs(&mut self) {
        let is_lowercase = |n: &NormalizerWrapper| matches!(n, NormalizerWrapper::Lowercase(_));
        let mut chain = vec![NormalizerWrapper::Lowercase(Lowercase)];
        match self.inner.get_normalizer() {
            Some(NormalizerWrapper::Sequence(seq)) => {
                let steps: &[NormalizerWrapper] = seq.as_ref();
                if steps.iter().any(is_lowercase) {
                    return;
                }
                chain.extend(steps.iter().cloned());
            }
            Some(n) if is_lowercase(n) => return,
            Some(n) => chain.push(n.clone()),
            None => {}
        }
        self.inner.with_normalizer(Some(NormalizerWrapper::Sequence(Sequence::new(chain))));
    }

    /// The ids of `texts` with special tokens, padded to the longest.
    pub fn encode_batch(&self, texts: &[&str]) -> Result<Batch> {
        if let Some(slow) = &self.vocab_spm {
            return self.padded(texts.iter().map(|t| slow.encode(t, None, true)).collect());
        }
        self.padded(
            self.inner
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| Error::Input(format!("tokenizer: {e}"))),
        )
    }

    /// The ids of text pairs with special tokens (`tokenizer(firsts, seconds)`, as a
    /// cross-encoder reads a query and a passage): each pair framed by the file's pair template
    /// (BERT's `[CLS] A [SEP] B [SEP]` with token types 0 then 1), padded to the longest; with a
    /// maximum length, the longer text of a pair is truncated first.
    pub fn encode_pairs(&self, pairs: &[(&str, &str)]) -> Result<Batch> {
        // The tokenizers crate subtracts a pair's special tokens from the length unchecked.
        if let Some(max_length) = self.inner.get_truncation().map(|t| t.max_length) {
            let added = self.inner.get_post_processor().map_or(0, |p| p.added_tokens(true));
            if max_length < added {
                return Err(Error::Input(format!(
                    "a maximum length of {max_length} tokens cannot hold the {added} special tokens each pair gets"
                )));
            }
        }
        if let Some(slow) = &self.vocab_spm {
            return self.padded(pairs.iter().map(|&(a, b)| slow.encode(a, Some(b), true)).collect());
        }
        let inputs: Vec<tokenizers::EncodeInput> = pairs.iter().map(|&(a, b)| (a, b).into()).collect();
        self.padded(
            self.inner.encode_batch(inputs, true).map_err(|e| Error::Input(format!("tokenizer: {e}"))),
        )
    }

    /// A batch of encodings padded to the longest, as int64 tensors.
    fn padded(&self, enc: Result<Vec<tokenizers::Encoding>>) -> Result<Batch> {
        let mut enc = enc?;
        tokenizers::utils::padding::pad_encodings(&mut enc, &self.padding)
            .map_err(|e| Error::Input(format!("tokenizer: {e}")))?;
        let n = enc.len();
        let s = enc.first().map_or(0, |e| e.get_ids().len());
        let collect = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<i64>| -> Result<Tensor> {
            let data: Vec<i64> = enc.iter().flat_map(f).collect();
            Ok(Tensor::from_vec(data, [n, s])?)
        };
        Ok(Batch {
            input_ids: collect(&|e| e.get_ids().iter().map(|&i| i64::from(i)).collect())?,
            attention_mask: collect(&|e| e.get_attention_mask().iter().map(|&i| i64::from(i)).collect())?,
            token_type_ids: collect(&|e| e.get_type_ids().iter().map(|&i| i64::from(i)).collect())?,
        })
    }

    /// The ids of one text, without padding.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        if let Some(slow) = &self.vocab_spm {
            return Ok(slow.encode(text, None, add_special_tokens)?.get_ids().to_vec());
        }
        let enc = self
            .inner
            .encode(text, add_special_tokens)
            .map_err(|e| Error::Input(format!("tokenizer: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The text of `ids`.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        if let Some(slow) = &self.vocab_spm {
            return slow.decode(ids, skip_special_tokens);
        }
        if ids.is_empty() {
            return Ok(String::new());
        }
        // Some of the library's decoders index `len - 1` of the token list, which underflows (a
        // panic in debug builds) when every id was a skipped special token: an error, never a crash.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.inner.decode(ids, skip_special_tokens)
        }));
        match decoded {
            Ok(text) => text.map_err(|e| Error::Input(format!("tokenizer: {e}"))),
            Err(_) => Err(Error::Input(format!("tokenizer: cannot decode ids {ids:?}"))),
        }
    }

    /// The id of a token, if in the vocabulary.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match &self.vocab_spm {
            Some(slow) => slow.token_to_id(token),
            None => self.inner.token_to_id(token),
        }
    }

    /// The token of an id, if in the vocabulary.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match &self.vocab_spm {
            Some(slow) => slow.id_to_token(id),
            None => self.inner.id_to_token(id),
        }
    }

    /// The underlying `tokenizers` tokenizer (for a Marian tokenizer, its source model's
    /// segmentation alone, whose ids are not the model's).
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }
}

/// Checks that every special token a `TemplateProcessing` post-processor (alone or in a
/// `Sequence`) places is one of its `special_tokens` (the tokenizers crate would panic on the
/// first text otherwise).
fn check_post_processor(post_processor: &serde_json::Value) -> std::result::Result<(), String> {
    fn check(p: &serde_json::Value) -> std::result::Result<(), String> {
        match p.get("type").and_then(|t| t.as_str()) {
            Some("Sequence") => {
                p.get("processors").and_then(|v| v.as_array()).into_iter().flatten().try_for_each(check)
            }
            Some("TemplateProcessing") => {
                let known = p.get("special_tokens").and_then(|v| v.as_object());
                for piece in ["single", "pair"].iter().filter_map(|k| p.get(*k)?.as_array()).flatten() {
                    let Some(id) =
                        piece.get("SpecialToken").and_then(|t| t.get("id")).and_then(|i| i.as_str())
                    else {
                        continue;
                    };
                    if !known.is_some_and(|k| k.contains_key(id)) {
                        return Err(format!(
                            "the post-processor's template uses the special token \"{id}\", which its special_tokens do not define"
                        ));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    check(post_processor)
}

/// The padding defaults of the tokenizer class transformers 5 builds for a folder.
#[derive(Debug, Clone, Copy, Default)]
struct ClassDefaults {
    /// the class's `pad_token` (which wins over `tokenizer.json`'s)
    pad_token: Option<&'static str>,
    /// the class pads on the left (`LlamaTokenizer`)
    left: bool,
}

/// Tokenizer classes with padding defaults of their own, among those whose pipeline
/// [`HfTokenizer::load`] takes from `tokenizer.json` as it is: (class, pad token, pads left).
const CLASS_PADDING: &[(&str, Option<&str>, bool)] = &[("Qwen2Tokenizer", Some("<|endoftext|>"), false)];

/// The tokenizer class of a model type (transformers' `TOKENIZER_MAPPING_NAMES`), for the classes
/// of [`CLASS_PADDING`].
const MODEL_TYPE_CLASSES: &[(&str, &str)] = &[
    ("qwen2", "Qwen2Tokenizer"),
    ("qwen2_moe", "Qwen2Tokenizer"),
    ("qwen3", "Qwen2Tokenizer"),
    ("qwen3_moe", "Qwen2Tokenizer"),
];

impl ClassDefaults {
    /// The defaults of the class `tokenizer_config.json` names (with or without `Fast`), or
    /// without one, of `config.json`'s model type's class, as `AutoTokenizer` picks it.
    fn of_class(folder: &folder::Folder) -> Result<Self> {
        let class = match folder.class() {
            Some(class) => Some(class.strip_suffix("Fast").unwrap_or(class)),
            None => {
                let model_type = folder.model_type()?;
                MODEL_TYPE_CLASSES.iter().find(|(t, _)| Some(*t) == model_type).map(|(_, c)| *c)
            }
        };
        Ok(match CLASS_PADDING.iter().find(|(c, _, _)| Some(*c) == class) {
            Some(&(_, pad_token, left)) => ClassDefaults { pad_token, left },
            None => ClassDefaults::default(),
        })
    }
}

/// How transformers pads a batch (`padding=True`): to its longest text, whatever length or
/// multiple the file pads to (a single text, `padding=False`, is not padded at all), token types
/// with 0. The pad token is `tokenizer_config.json`'s `pad_token`, else the tokenizer class's,
/// else the file's (else id 0); its id is looked up (a token outside the vocabulary is added to it
/// as a special token, as transformers adds it, so that texts holding it tokenize it as one token).
/// The side is the config's `padding_side`, else the file's, else the class's, else right.
fn padding(
    folder: &folder::Folder,
    class: ClassDefaults,
    tokenizer: &mut Tokenizer,
) -> Result<PaddingParams> {
    let file = tokenizer.get_padding().cloned();
    let mut padding = PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        direction: match &file {
            Some(f) => f.direction,
            None if class.left => tokenizers::PaddingDirection::Left,
            None => tokenizers::PaddingDirection::Right,
        },
        pad_to_multiple_of: None,
        pad_type_id: 0,
        ..PaddingParams::default()
    };
    let pad = match folder.token("pad_token")? {
        Some(pad) => Some(pad.to_string()),
        None => class.pad_token.map(str::to_string).or_else(|| file.map(|f| f.pad_token)),
    };
    if let Some(pad) = pad {
        let id = match tokenizer.token_to_id(&pad) {
            Some(id) => id,
            None => {
                tokenizer.add_special_tokens(&[tokenizers::AddedToken::from(pad.clone(), true)]);
                tokenizer.token_to_id(&pad).ok_or_else(|| {
                    Error::format(
                        &folder.config_path,
                        format!("cannot add the pad_token {pad:?} to the vocabulary"),
                    )
                })?
            }
        };
        padding.pad_id = id;
        padding.pad_token = pad;
    }
    if let Some(side) = padding_side(folder)? {
        padding.direction = side;
    }
    Ok(padding)
}

/// `tokenizer_config.json`'s `padding_side`, when set.
fn padding_side(folder: &folder::Folder) -> Result<Option<tokenizers::PaddingDirection>> {
    use serde_json::Value;
    match folder.config.get("padding_side") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(side)) if side == "right" => Ok(Some(tokenizers::PaddingDirection::Right)),
        Some(Value::String(side)) if side == "left" => Ok(Some(tokenizers::PaddingDirection::Left)),
        Some(other) => Err(Error::format(
            &folder.config_path,
            format!("padding_side must be \"left\" or \"right\", got {other}"),
        )),
    }
}

#[cfg(test)]
mod post_processor_tests {
    use super::check_post_processor;

    /// A template that places a special token its `special_tokens` lack is refused at load (the
    /// tokenizers crate panics on the first text).
    #[test]
    fn templates_must_define_their_special_tokens() {
        let template = |tokens: &str| {
            serde_json::from_str::<serde_json::Value>(&format!(
                r#"{{"type": "TemplateProcessing",
                    "single": [{{"SpecialToken": {{"id": "[CLS]", "type_id": 0}}}}, {{"Sequence": {{"id": "A", "type_id": 0}}}}],
                    "pair": [], "special_tokens": {tokens}}}"#
            ))
            .unwrap()
        };
        let good = template(r#"{"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]}}"#);
        assert!(check_post_processor(&good).is_ok());
        let bad = template("{}");
        assert!(check_post_processor(&bad).unwrap_err().contains("\"[CLS]\""));
        let nested = serde_json::json!({"type": "Sequence", "processors": [{"type": "ByteLevel"}, bad]});
        assert!(check_post_processor(&nested).is_err());
    }
}

#[cfg(test)]
mod padding_tests {
    use super::HfTokenizer;

    /// A file that pads to a multiple of 8: transformers pads a batch (`padding=True`) to its
    /// longest text only and a single text not at all (transformers 5.24: `['abcdef', 'The quick
    /// brown fox jumps']` gives 8 + 2 pads and 10 ids, `'abcdef'` alone its 8 ids).
    #[test]
    fn single_texts_are_not_padded_and_batches_only_to_the_longest() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers");
        let dir = std::env::temp_dir().join(format!("oxtorch-padding-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixtures.join("word_piece_prefix.json"), dir.join("tokenizer.json")).unwrap();
        let tok = HfTokenizer::load(&dir, None).unwrap();
        assert_eq!(tok.encode("abcdef", true).unwrap(), [2, 28, 101, 121, 103, 102, 159, 3]);
        let batch = tok.encode_batch(&["abcdef", "The quick brown fox jumps"]).unwrap();
        assert_eq!(
            batch.input_ids.to_vec2::<i64>().unwrap(),
            [
                vec![2, 28, 101, 121, 103, 102, 159, 3, 0, 0],
                vec![2, 227, 187, 188, 197, 105, 235, 186, 107, 3]
            ]
        );
        assert_eq!(batch.attention_mask.to_vec2::<i64>().unwrap()[0], [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        let batch = tok.encode_batch(&["ab", "The"]).unwrap();
        assert_eq!(batch.input_ids.to_vec2::<i64>().unwrap(), [vec![2, 28, 101, 3], vec![2, 227, 3, 0]]);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `tokenizer.json`'s padding section against `tokenizer_config.json`'s `pad_token` and
    /// `padding_side` and the tokenizer classes' defaults (the config wins, then the class's pad
    /// token, then the file's; a pad token outside the vocabulary is added to it; token types pad
    /// with 0): batches and a text holding the pad token's string as transformers 5.24 gives them
    /// (`make_padding_golden.py`).
    #[test]
    fn padding_follows_tokenizer_config_over_the_file() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures.join("tokenizer_padding_expected.json")).unwrap(),
        )
        .unwrap();
        let texts: Vec<&str> =
            golden["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let rows = |v: &serde_json::Value| -> Vec<Vec<i64>> { serde_json::from_value(v.clone()).unwrap() };
        for (name, case) in golden["cases"].as_object().unwrap() {
            let dir = std::env::temp_dir().join(format!("oxtorch-padding-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let mut file: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(fixtures.join(case["source"].as_str().unwrap())).unwrap(),
            )
            .unwrap();
            file["padding"] = case["file_padding"].clone();
            std::fs::write(dir.join("tokenizer.json"), file.to_string()).unwrap();
            std::fs::write(dir.join("tokenizer_config.json"), case["tokenizer_config"].to_string()).unwrap();
            let tok = HfTokenizer::load(&dir, None).unwrap();
            let batch = tok.encode_batch(&texts).unwrap();
            assert_eq!(batch.input_ids.to_vec2::<i64>().unwrap(), rows(&case["input_ids"]), "{name}");
            assert_eq!(
                batch.attention_mask.to_vec2::<i64>().unwrap(),
                rows(&case["attention_mask"]),
                "{name}"
            );
            assert_eq!(
                batch.token_type_ids.to_vec2::<i64>().unwrap(),
                rows(&case["token_type_ids"]),
                "{name}"
            );
            let want: Vec<u32> = serde_json::from_value(case["pad_text_ids"].clone()).unwrap();
            assert_eq!(tok.encode(case["pad_text"].as_str().unwrap(), true).unwrap(), want, "{name}");
            std::fs::remove_dir_all(&dir).ok();
        }
        let source = fixtures.join("tokenizers/word_piece_prefix.json");
        // A padding side transformers does not know is an error naming the file.
        let dir = std::env::temp_dir().join(format!("oxtorch-padding-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&source, dir.join("tokenizer.json")).unwrap();
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"padding_side": "up"}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("tokenizer_config.json") && err.contains("padding_side"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
