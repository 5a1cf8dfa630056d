//! Errors of the PJRT layer.

use std::fmt;
use std::path::PathBuf;

/// A `PJRT_Error_Code` (absl status code) returned by a plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `UNKNOWN`: what the plugins return for StableHLO parse and verification failures.
    pub const UNKNOWN: ErrorCode = ErrorCode(2);
    /// `INVALID_ARGUMENT`.
    pub const INVALID_ARGUMENT: ErrorCode = ErrorCode(3);
    /// `NOT_FOUND`: what libtpu returns when the machine has no TPU.
    pub const NOT_FOUND: ErrorCode = ErrorCode(5);
    /// `FAILED_PRECONDITION`: what the CUDA plugin returns when no GPU is visible.
    pub const FAILED_PRECONDITION: ErrorCode = ErrorCode(9);

    /// The status name, e.g. `INVALID_ARGUMENT`.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 17] = [
            "OK",
            "CANCELLED",
            "UNKNOWN",
            "INVALID_ARGUMENT",
            "DEADLINE_EXCEEDED",
            "NOT_FOUND",
            "ALREADY_EXISTS",
            "PERMISSION_DENIED",
            "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION",
            "ABORTED",
            "OUT_OF_RANGE",
            "UNIMPLEMENTED",
            "INTERNAL",
            "UNAVAILABLE",
            "DATA_LOSS",
            "UNAUTHENTICATED",
        ];
        usize::try_from(self.0).ok().and_then(|i| NAMES.get(i)).copied().unwrap_or("UNRECOGNIZED")
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, self.name())
    }
}

/// Everything that can go wrong in the PJRT layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shared library could not be opened or has no `GetPjrtApi`.
    #[error("could not load the PJRT plugin {path}: {reason}")]
    Load {
        /// The plugin path as given.
        path: PathBuf,
        /// Why (the loader's message).
        reason: String,
    },
    /// The plugin speaks an incompatible PJRT C API, or lacks an entry point oxtorch needs.
    #[error("the PJRT plugin {path} is incompatible: {reason}")]
    Incompatible {
        /// The plugin path.
        path: PathBuf,
        /// Which check failed.
        reason: String,
    },
    /// No plugin was found for a device kind.
    #[error("{0}")]
    NotFound(String),
    /// A plugin call returned a `PJRT_Error`.
    #[error("{function} failed [{code}]: {message}")]
    Plugin {
        /// The C API function that failed, e.g. `PJRT_Client_Compile`.
        function: &'static str,
        /// Its status code.
        code: ErrorCode,
        /// Its full message.
        message: String,
    },
    /// Input rejected by oxtorch before reaching the plugin.
    #[error("{0}")]
    InvalidArgument(String),
    /// A prim (or a prim on a dtype) that has no StableHLO lowering yet; the runtime may run it on
    /// the host instead.
    #[error("{0}")]
    Unsupported(String),
}

impl Error {
    /// The plugin's status code, when the error came from the plugin.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Plugin { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Results of the PJRT layer.
pub type Result<T> = std::result::Result<T, Error>;
