//! Chat templates: the Jinja template of `chat_template.jinja` or `tokenizer_config.json`, rendered
//! with minijinja (plus Python string methods) as transformers' `apply_chat_template(tokenize=False)`.

use std::path::Path;

use minijinja::{Environment, ErrorKind};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant`, ...
    pub role: String,
    /// the text
    pub content: String,
}

impl Message {
    /// A message from `role` saying `content`.
    pub fn new(role: &str, content: &str) -> Self {
        Message { role: role.to_string(), content: content.to_string() }
    }
}

/// A model's chat template and the special tokens it refers to.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    source: String,
    bos_token: String,
    eos_token: String,
}

/// A special token as `tokenizer_config.json` stores it: a string or `{"content": ...}`.
fn token_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

impl ChatTemplate {
    /// The template of the model in `dir`: `chat_template.jinja` (transformers 5), else the
    /// `chat_template` of `tokenizer_config.json` (a string, or a list of named templates of which
    /// `default` is taken); `None` when the model has none.
    pub fn from_model_dir(dir: &Path) -> Result<Option<Self>> {
        let cfg_path = dir.join("tokenizer_config.json");
        let cfg: Value = match std::fs::read_to_string(&cfg_path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| Error::format(&cfg_path, e.to_string()))?,
            Err(_) => Value::Null,
        };
        let jinja = dir.join("chat_template.jinja");
        let source = if jinja.is_file() {
            Some(std::fs::read_to_string(&jinja).map_err(|e| Error::io(&jinja, e))?)
        } else {
            match cfg.get("chat_template") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Array(named)) => named
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
                    .and_then(|t| t.get("template").and_then(Value::as_str))
                    .map(str::to_string),
                _ => None,
            }
        };
        Ok(source.map(|source| ChatTemplate {
            source,
            bos_token: token_text(cfg.get("bos_token")),
            eos_token: token_text(cfg.get("eos_token")),
        }))
    }

    /// A template from its source text.
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Self {
        ChatTemplate {
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
        }
    }

    /// The prompt text for `messages`, ending with the assistant's turn when `add_generation_prompt`.
    pub fn render(&self, messages: &[Message], add_generation_prompt: bool) -> Result<String> {
        let mut env = Environment::new();
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> std::result::Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_template("chat", &self.source).map_err(|e| Error::Input(format!("chat template: {e}")))?;
        let ctx = minijinja::context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token,
            eos_token => self.eos_token,
        };
        let tmpl = env.get_template("chat").map_err(|e| Error::Input(format!("chat template: {e}")))?;
        tmpl.render(ctx).map_err(|e| Error::Input(format!("chat template: {e}")))
    }
}
