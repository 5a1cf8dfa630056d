//! The error type of every fallible hf-import call.

use std::path::{Path, PathBuf};

/// The result type of hf-import.
pub type Result<T> = std::result::Result<T, Error>;

/// An hf-import error: its `Display` is one line naming the file, tensor or key at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file that could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// the file
        path: PathBuf,
        /// what the operating system said
        source: std::io::Error,
    },
    /// A model that is neither a local directory nor in the local Hugging Face cache.
    #[error("model '{model}' not found: looked in {}", looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    ModelNotFound {
        /// what was asked for
        model: String,
        /// every place searched
        looked: Vec<PathBuf>,
    },
    /// A checkpoint file that is corrupt or inconsistent.
    #[error("{path}: {msg}")]
    Format {
        /// the file
        path: PathBuf,
        /// what is wrong with it
        msg: String,
    },
    /// A config.json that lacks a key or has one of the wrong type.
    #[error("config: {0}")]
    Config(String),
    /// A weight that is missing or disagrees with the config.
    #[error("{0}")]
    Weight(String),
    /// Inputs that the model cannot take.
    #[error("{0}")]
    Input(String),
    /// A `model_type` or architecture hf-import does not implement.
    #[error("{0}")]
    Unsupported(String),
    /// An error from a tensor op.
    #[error(transparent)]
    Tensor(#[from] oxtorch_tensor::Error),
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
