//! The error type of every fallible hf-import call.

use std::fmt;
use std::path::{Path, PathBuf};

/// The result type of hf-import.
pub type Result<T> = std::result::Result<T, Error>;

/// An hf-import error: its `Display` is one line naming the file, tensor or key at fault. Line
/// breaks that come from the files or inputs (a `model_type` of `"a\nb"`) are shown escaped, so
/// that a service's log line cannot be split or forged by a model folder.
#[derive(Debug)]
pub enum Error {
    /// A file that could not be opened or read.
    Io {
        /// the file
        path: PathBuf,
        /// what the operating system said
        source: std::io::Error,
    },
    /// A model that is neither a local directory nor in the local Hugging Face cache.
    ModelNotFound {
        /// what was asked for
        model: String,
        /// every place searched
        looked: Vec<PathBuf>,
    },
    /// A checkpoint file that is corrupt or inconsistent.
    Format {
        /// the file
        path: PathBuf,
        /// what is wrong with it
        msg: String,
    },
    /// A config.json that lacks a key or has one of the wrong type.
    Config(String),
    /// A weight that is missing or disagrees with the config.
    Weight(String),
    /// Inputs that the model cannot take.
    Input(String),
    /// A `model_type` or architecture hf-import does not implement.
    Unsupported(String),
    /// An error from a tensor op.
    Tensor(oxtorch_tensor::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Error::Io { path, source } => format!("{}: {source}", path.display()),
            Error::ModelNotFound { model, looked } => format!(
                "model '{model}' not found: looked in {}",
                looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
            Error::Format { path, msg } => format!("{}: {msg}", path.display()),
            Error::Config(msg) => format!("config: {msg}"),
            Error::Weight(msg) | Error::Input(msg) | Error::Unsupported(msg) => msg.clone(),
            Error::Tensor(e) => e.to_string(),
        };
        f.write_str(&one_line(&text))
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Tensor(e) => e.source(),
            _ => None,
        }
    }
}

impl From<oxtorch_tensor::Error> for Error {
    fn from(e: oxtorch_tensor::Error) -> Self {
        Error::Tensor(e)
    }
}

/// `text` with its control characters escaped (`\n`, `\r`, `\t`, `\u{1b}`, ...; line breaks
/// and ANSI escapes from a file must not split or recolour a log line), trailing line breaks
/// dropped.
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    let text = text.trim_end_matches(['\n', '\r']);
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out.into()
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io { path: path.to_path_buf(), source }
    }

    /// An [`Error::Format`] for `path`.
    pub fn format(path: &Path, msg: impl Into<String>) -> Self {
        Error::Format { path: path.to_path_buf(), msg: msg.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        let e = Error::Unsupported("model_type \"a\nb\r\" is not supported\n".into());
        assert_eq!(e.to_string(), "model_type \"a\\nb\\r\" is not supported");
        let e = Error::Input("a\u{1b}[31mred\tx".into());
        assert_eq!(e.to_string(), "a\\u{1b}[31mred\\tx");
        let e = Error::format(Path::new("x.json"), "plain");
        assert_eq!(e.to_string(), "x.json: plain");
    }
}
