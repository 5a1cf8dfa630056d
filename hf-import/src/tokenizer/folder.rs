//! The files of a tokenizer folder that shape its pipeline besides `tokenizer.json`:
//! `tokenizer_config.json` (read once per load) and `config.json`'s `model_type` (read when a
//! rebuild first asks for it).

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};

/// A tokenizer folder's settings, as the pipeline rebuilds and the padding read them.
pub(super) struct Folder<'a> {
    /// the folder
    pub dir: &'a Path,
    /// `dir/tokenizer_config.json`, named by the errors about its values
    pub config_path: PathBuf,
    /// its contents (`Null` when the folder has none)
    pub config: Value,
    /// `special_tokens_map.json` and its contents, when the folder has one and the config declares
    /// no `added_tokens_decoder` (transformers then reads it, its tokens winning over the config's)
    legacy_map: Option<(PathBuf, Value)>,
    /// `config.json`'s `model_type`, once read
    model_type: OnceCell<Option<String>>,
}

impl<'a> Folder<'a> {
    /// Reads `dir/tokenizer_config.json` (an error when it is not JSON).
    pub fn read(dir: &'a Path) -> Result<Self> {
        let config_path = dir.join("tokenizer_config.json");
        let config = read_json(&config_path)?.unwrap_or(Value::Null);
        let map_path = dir.join("special_tokens_map.json");
        let legacy_map = match config.get("added_tokens_decoder") {
            None | Some(Value::Null) => read_json(&map_path)?.map(|map| (map_path, map)),
            Some(_) => None,
        };
        Ok(Folder { dir, config_path, config, legacy_map, model_type: OnceCell::new() })
    }

    /// `tokenizer_config.json`'s `tokenizer_class`.
    pub fn class(&self) -> Option<&str> {
        self.config.get("tokenizer_class").and_then(Value::as_str)
    }

    /// Whether the folder's tokenizer is of a class: `tokenizer_config.json` names one of `classes`,
    /// or names none and `config.json`'s model type is one of `model_types` (as `AutoTokenizer`
    /// picks the class).
    pub fn is_class(&self, classes: &[&str], model_types: &[&str]) -> Result<bool> {
        Ok(match self.class() {
            Some(class) => classes.contains(&class),
            None => self.model_type()?.is_some_and(|t| model_types.contains(&t)),
        })
    }

    /// `config.json`'s `model_type`, `None` without one (or without the file).
    pub fn model_type(&self) -> Result<Option<&str>> {
        if self.model_type.get().is_none() {
            let model_type = read_json(&self.dir.join("config.json"))?
                .and_then(|c| c.get("model_type").and_then(Value::as_str).map(str::to_owned));
            // (Set once: the cell was empty just above and nothing else fills it.)
            let _ = self.model_type.set(model_type);
        }
        Ok(self.model_type.get().and_then(Option::as_deref))
    }

    /// A boolean setting of `tokenizer_config.json`: `None` when absent or null, an error naming
    /// the file when it is not a boolean.
    pub fn flag(&self, key: &str) -> Result<Option<bool>> {
        match self.config.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(Error::format(&self.config_path, format!("\"{key}\" must be a boolean, got {v}"))),
        }
    }

    /// A special token (`pad_token`, `bos_token`, ...): a legacy `special_tokens_map.json`'s (see
    /// [`Folder::read`]), else `tokenizer_config.json`'s; a string or an `AddedToken` object's
    /// `content`; `None` when absent or null, an error naming the file for anything else.
    pub fn token(&self, key: &str) -> Result<Option<&str>> {
        let (path, value) = self.token_value(key);
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(Value::Object(o)) => match o.get("content") {
                Some(Value::String(s)) => Ok(Some(s)),
                _ => Err(Error::format(path, format!("\"{key}\" has no \"content\" string"))),
            },
            Some(v) => Err(Error::format(path, format!("\"{key}\" must be a token, got {v}"))),
        }
    }

    /// Where the special token `key` is read from, and its value there.
    fn token_value(&self, key: &str) -> (&Path, Option<&Value>) {
        match &self.legacy_map {
            Some((path, map)) if map.get(key).is_some_and(|v| !v.is_null()) => (path, map.get(key)),
            _ => (&self.config_path, self.config.get(key)),
        }
    }

    /// The special token `content` named `key` as an added token: with the `lstrip`, `rstrip`,
    /// `single_word` and `normalized` flags of `tokenizer_config.json`'s `AddedToken` object for
    /// `key` when it is one for `content` (as transformers 4.x saved them), else none of them.
    pub fn special_token(&self, key: &str, content: &str) -> Result<tokenizers::AddedToken> {
        let token = tokenizers::AddedToken::from(content.to_string(), true).normalized(false);
        let (path, value) = self.token_value(key);
        let Some(Value::Object(o)) = value else { return Ok(token) };
        if o.get("content").and_then(Value::as_str) != Some(content) {
            return Ok(token);
        }
        let flag = |name: &str| -> Result<bool> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(v) => Err(Error::format(path, format!("\"{key}\".{name} must be a boolean, got {v}"))),
            }
        };
        Ok(token
            .lstrip(flag("lstrip")?)
            .rstrip(flag("rstrip")?)
            .single_word(flag("single_word")?)
            .normalized(flag("normalized")?))
    }

    /// The extra special tokens of `tokenizer_config.json` (`additional_special_tokens`, and
    /// transformers 5's `extra_special_tokens`, a list or named ones), with those of a legacy
    /// `special_tokens_map.json` (read, as transformers reads it, when the config declares no
    /// `added_tokens_decoder`): strings or `AddedToken` objects' `content`s; an error naming the
    /// file and key for anything else.
    pub fn extra_special_tokens(&self) -> Result<Vec<String>> {
        let mut sources = vec![(self.config_path.as_path(), &self.config)];
        sources.extend(self.legacy_map.as_ref().map(|(path, map)| (path.as_path(), map)));
        let mut tokens = Vec::new();
        for (path, json) in sources {
            for key in ["additional_special_tokens", "extra_special_tokens"] {
                let values: Vec<&Value> = match json.get(key) {
                    None | Some(Value::Null) => continue,
                    Some(Value::Array(a)) => a.iter().collect(),
                    Some(Value::Object(o)) => o.values().collect(),
                    Some(v) => {
                        return Err(Error::format(path, format!("\"{key}\" must list tokens, got {v}")))
                    }
                };
                for v in values {
                    let token = match v {
                        Value::String(s) => Some(s.as_str()),
                        Value::Object(o) => o.get("content").and_then(Value::as_str),
                        _ => None,
                    };
                    let token = token.ok_or_else(|| {
                        Error::format(path, format!("\"{key}\" holds {v}, which is not a token"))
                    })?;
                    if !tokens.iter().any(|t| t == token) {
                        tokens.push(token.to_string());
                    }
                }
            }
        }
        Ok(tokens)
    }
}

/// Reads a JSON file, `None` when absent.
pub(super) fn read_json(path: &Path) -> Result<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| Error::format(path, e.to_string())),
        Err(_) => Ok(None),
    }
}
