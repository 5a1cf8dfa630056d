//! sentence-transformers prompts: texts prepended to the inputs (`"query: "`), named in
//! `config_sentence_transformers.json`, one of them applied by default (`default_prompt_name`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::tokenizer::HfTokenizer;

/// The prompts of a sentence-transformers folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompts {
    /// name → text
    named: BTreeMap<String, String>,
    /// the prompt applied when none is asked for
    default_name: Option<String>,
}

impl Prompts {
    /// Reads `prompts` and `default_prompt_name` of `config_sentence_transformers.json` in `dir`
    /// (none when the file is absent). A default name that is not a prompt is an error, as in
    /// sentence-transformers.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join("config_sentence_transformers.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(Self::default()) };
        let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
        let named = match json.get("prompts") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, text)| match text {
                    Value::String(t) => Ok((name.clone(), t.clone())),
                    other => {
                        Err(Error::format(&path, format!("prompt \"{name}\" must be a string, got {other}")))
                    }
                })
                .collect::<Result<_>>()?,
            Some(other) => {
                return Err(Error::format(&path, format!("\"prompts\" must be an object, got {other}")))
            }
        };
        let default_name = match json.get("default_prompt_name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(other) => {
                return Err(Error::format(
                    &path,
                    format!("\"default_prompt_name\" must be a string, got {other}"),
                ))
            }
        };
        let prompts = Prompts { named, default_name };
        if let Some(name) = &prompts.default_name {
            if !prompts.named.contains_key(name) {
                return Err(Error::format(
                    &path,
                    format!(
                        "Default prompt name '{name}' not found in the configured prompts dictionary with keys {:?}.",
                        prompts.names()
                    ),
                ));
            }
        }
        Ok(prompts)
    }

    /// The prompts' names.
    pub fn names(&self) -> Vec<&str> {
        self.named.keys().map(String::as_str).collect()
    }

    /// The text of prompt `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.named.get(name).map(String::as_str)
    }

    /// The name of the prompt applied when none is asked for.
    pub fn default_name(&self) -> Option<&str> {
        self.default_name.as_deref()
    }

    /// The prompt an `encode` call applies, as sentence-transformers resolves it: an explicit
    /// `prompt` wins, else the prompt named `prompt_name` (unknown: an error), else the default
    /// one. An empty prompt is none.
    pub fn resolve<'a>(
        &'a self,
        prompt: Option<&'a str>,
        prompt_name: Option<&str>,
    ) -> Result<Option<&'a str>> {
        let text = match (prompt, prompt_name) {
            (Some(text), _) => Some(text),
            (None, Some(name)) => Some(self.get(name).ok_or_else(|| {
                Error::Input(format!(
                    "Prompt name '{name}' not found in the configured prompts dictionary with keys {:?}.",
                    self.names()
                ))
            })?),
            (None, None) => self.default_name.as_deref().and_then(|n| self.get(n)),
        };
        Ok(text.filter(|t| !t.is_empty()))
    }
}

/// The number of leading tokens a prompt takes in a tokenized input, as sentence-transformers
/// counts them for pooling without the prompt: the prompt tokenized alone with special tokens,
/// less a trailing special token (`[SEP]`, EOS).
pub fn prompt_length(tokenizer: &HfTokenizer, prompt: &str) -> Result<usize> {
    let ids = tokenizer.encode(prompt, true)?;
    let special = |id: u32| tokenizer.inner().get_added_tokens_decoder().get(&id).is_some_and(|t| t.special);
    Ok(match ids.last() {
        Some(&last) if special(last) => ids.len() - 1,
        _ => ids.len(),
    })
}
