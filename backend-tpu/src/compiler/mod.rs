//! Turning StableHLO text into a loaded executable: the one place every compile goes through, so
//! that the persistent cache, `OXTORCH_DUMP_HLO` and `OXTORCH_LOG_COMPILES` apply to the eager
//! runtime and to fused and traced programs alike.
//!
//! - `OXTORCH_DUMP_HLO=DIR` writes each program's text to `DIR/<hash>.mlir` before compiling it.
//! - `OXTORCH_LOG_COMPILES=1` logs one line per compile on stderr: what, why, where from, how long.
//! - The persistent cache ([`DiskCache`]) keeps serialized executables on disk, so that a second
//!   process running the same programs compiles nothing.

mod disk_cache;
mod explain;
mod fingerprint;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub use disk_cache::DiskCache;
pub use explain::{explain_recompile, explain_signature_change};
pub use fingerprint::Fingerprint;

use crate::pjrt::{Client, CompileOptions, Executable, Result};

/// Where an executable came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileSource {
    /// Compiled by the plugin, taking this long.
    Compiled(Duration),
    /// Loaded from the persistent cache, taking this long.
    DiskCache(Duration),
}

/// The settings read once from the environment.
#[derive(Debug)]
struct Settings {
    dump_dir: Option<PathBuf>,
    log: bool,
    cache: Option<DiskCache>,
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| Settings {
        dump_dir: std::env::var_os("OXTORCH_DUMP_HLO").filter(|v| !v.is_empty()).map(PathBuf::from),
        log: std::env::var("OXTORCH_LOG_COMPILES").is_ok_and(|v| !v.is_empty() && v != "0"),
        cache: DiskCache::from_env(),
    })
}

/// True when `OXTORCH_LOG_COMPILES` asks for a line per compile (callers can skip building
/// reasons otherwise).
pub fn log_compiles() -> bool {
    settings().log
}

/// Compiles `text` for `client`, or loads it from the persistent cache.
///
/// `what` names the program in logs (an op name, "fused graph", "compiled step"); `why` says what
/// made this compile necessary (a new shape, a failed guard) and is only called when logging.
pub fn compile(
    client: &Client,
    text: &str,
    options: &CompileOptions,
    what: &str,
    why: impl FnOnce() -> String,
) -> Result<(Executable, CompileSource)> {
    let s = settings();
    compile_with(client, text, options, s.cache.as_ref(), s.dump_dir.as_deref(), s.log.then_some((what, why)))
}

/// [`compile`] with explicit settings (tests use their own cache directory).
pub fn compile_with<W: FnOnce() -> String>(
    client: &Client,
    text: &str,
    options: &CompileOptions,
    cache: Option<&DiskCache>,
    dump_dir: Option<&std::path::Path>,
    log: Option<(&str, W)>,
) -> Result<(Executable, CompileSource)> {
    let start = Instant::now();
    let fingerprint = Fingerprint::of(client, text, options);
    if let Some(dir) = dump_dir {
        // Dumping is a debugging aid: a directory we cannot write to must not fail the compile.
        let _ = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join(format!("{}.mlir", fingerprint.hex())), text));
    }
    let cached = cache.and_then(|c| c.load(client, &fingerprint, text));
    let (exe, source) = match cached {
        Some(exe) => (exe, CompileSource::DiskCache(start.elapsed())),
        None => {
            let exe = Executable::compile(client, text, options)?;
            let took = start.elapsed();
            if let Some(c) = cache {
                c.store(&fingerprint, &exe);
            }
            (exe, CompileSource::Compiled(took))
        }
    };
    if let Some((what, why)) = log {
        let (verb, took) = match source {
            CompileSource::Compiled(t) => ("compiled", t),
            CompileSource::DiskCache(t) => ("loaded from the persistent cache", t),
        };
        eprintln!(
            "[oxtorch xla] {verb} {what} ({}) in {:.1} ms: {}\n    at {}",
            fingerprint.hex(),
            took.as_secs_f64() * 1e3,
            why(),
            caller_location()
        );
    }
    Ok((exe, source))
}

/// The first frame of the backtrace outside oxtorch's own crates and std: the user code whose op
/// caused the compile. A frame is ours when its symbol is (`oxtorch_*`, `std::`, ...) or when its
/// source file is in one of the library crates (inlined frames print bare function names).
pub(crate) fn caller_location() -> String {
    const OUR_SOURCES: [&str; 8] = [
        "/backend-tpu/src/",
        "/backend-cpu/src/",
        "/tensor/src/",
        "/core/src/",
        "/autograd/src/",
        "/nn/src/",
        "/hf-import/src/",
        "/rustc/",
    ];
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    let mut lines = bt.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        // Frames read "N: symbol", usually followed by "at file:line:col".
        let Some((_, symbol)) = line.split_once(": ") else { continue };
        let at = match lines.peek() {
            Some(l) if l.starts_with("at ") => lines.next().and_then(|l| l.strip_prefix("at ")).unwrap_or(""),
            _ => "",
        };
        let ours_symbol =
            ["oxtorch", "std::", "core::", "alloc::", "<", "__rust", "rust_begin", "caller_location"]
                .iter()
                .any(|p| symbol.starts_with(p));
        let ours_file = OUR_SOURCES.iter().any(|d| at.contains(d));
        if !ours_symbol && !ours_file {
            return if at.is_empty() { symbol.to_string() } else { format!("{symbol} ({at})") };
        }
    }
    "(no caller frame: build with debug line tables to see where)".to_string()
}
