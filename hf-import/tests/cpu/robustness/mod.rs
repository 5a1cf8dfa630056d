//! A robustness sweep of the hf-import library (not the CLI) against corrupted model folders and
//! hostile inputs: a service embedding hf-import must get `Ok` or `Err` from every load and run
//! call, never a panic, an abort (a huge allocation), an integer overflow or a hang, and every
//! `Err` must be a non-empty single-line message; the errors of loading name the file, tensor or
//! key at fault. The ideas of `tests/fuzz_cli.py` (a dev-time sweep of the binary), ported.
//!
//! Fixture folders (`tests/fixtures`) are copied under the system's temp dir and mutated case by
//! case, a seeded SplitMix64 choosing what is mutated (the same cases every run):
//! - `config.json`: numeric keys (nested ones too: `rope_parameters`, `text_config`) set in turn
//!   to hostile values (0, 1, -1, 10^12, 2^63, 1e-300, 2.5, "x", null, true, [], {}), other keys
//!   too, keys removed, the file truncated, empty, not JSON, not an object, nested 5000 deep, a
//!   folder, unknown `model_type` or `architectures`;
//! - weights: safetensors files written byte by byte (8-byte little-endian header length, JSON
//!   header, data) with a tensor removed, added, reshaped or stored as another dtype, header
//!   lengths past the end, overlapping or out-of-range offsets, overflowing shapes, truncated,
//!   empty or garbage files; sharded indexes naming missing shards or holding bad JSON; a corrupt
//!   `pytorch_model.bin`;
//! - `tokenizer.json` (every tokenizer fixture), `tokenizer_config.json`, `chat_template.jinja`,
//!   `generation_config.json` and the sentence-transformers files: truncated, garbage, values of
//!   the wrong type or range, templates that fail to render or never end;
//! - inputs of models that loaded: ids out of range, of every dtype and rank, empty inputs, masks
//!   and positions of the wrong shape or range (past `max_position_embeddings`), KV caches that do
//!   not fit, huge `max_new_tokens`, NaN sampling settings, impossible token bans.
//!
//! Every call runs on a thread of its own under `catch_unwind` and a time limit. Generation counts
//! its tokens and is stopped past a budget (by a panic of the sweep's own, caught), so a runaway
//! generation is a finding rather than a stuck test: a failure where `resolve_length` promised to
//! stop at the model's `max_position_embeddings`, a printed note where the settings asked for that
//! many tokens. Failures are collected with the fixture, the mutation and the call; each test
//! asserts once at the end. `ROBUSTNESS_TRACE=1` prints every call and its outcome;
//! `ROBUSTNESS_FULL=1` sweeps every key of every `config.json` instead of a sample.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use oxtorch_hf_import::layers::KvCache;
use oxtorch_hf_import::{
    generate, generate_with_tokenizer, AutoModel, CausalLm, ChatArgs, ChatTemplate, Config, Error,
    GenerationConfig, HfTokenizer, Message, PoolingMode, Result, SentenceTransformer, Weights,
};
use oxtorch_tensor::{DType, Tensor};
use serde_json::{json, Map, Value};

use crate::common::fixture;

mod config;
mod errors;
mod images;
mod inputs;
mod safetensors;
mod scratch;
mod service;
mod tokenizer;
mod weights;

use self::safetensors::*;
use self::scratch::*;
use self::service::*;

/// The sweep's seed: the same cases every run.
const SEED: u64 = 0x5EED_0035;
/// How long one call may take before it counts as a hang. The models are tiny: a call takes
/// milliseconds, a debug build's generation of 64 tokens about a second.
const LIMIT: Duration = Duration::from_secs(30);
/// The vocabulary of every fixture model.
const VOCAB: i64 = 100;
/// The values each swept `config.json` key is set to in turn.
const HOSTILE: &[&str] = &[
    "0",
    "1",
    "-1",
    "1000000000000",
    "9223372036854775808",
    "1e-300",
    "2.5",
    "\"x\"",
    "null",
    "true",
    "[]",
    "{}",
];
/// What an error of each kind of loading may name (any one of them, case-insensitive), besides
/// the key or file a case mutated: the errors of hf-import name the file (its path), the
/// `tensor '...'`, or the config key, or say `config:` / `... is not supported`.
const CONFIG_ANCHORS: &[&str] = &["config.json"];
const WEIGHTS_ANCHORS: &[&str] = &["safetensors", "pytorch_model", "no weights"];
const MODEL_ANCHORS: &[&str] = &["tensor '", "config", "not supported"];
const TOKENIZER_ANCHORS: &[&str] = &["tokenizer.json", "tokenizer_config.json", "config.json", "vocab.txt"];
const GENERATION_ANCHORS: &[&str] = &["generation_config.json", "config.json"];
const CHAT_ANCHORS: &[&str] = &["tokenizer_config.json", "chat_template", "chat template"];
const SENTENCE_ANCHORS: &[&str] = &[
    "modules.json",
    "config.json",
    "pooling",
    "dense",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "prompt",
    "tokenizer",
    "tensor '",
    "safetensors",
    "config",
    "not supported",
];

// ---------------------------------------------------------------------------------------------
// The harness: a seeded generator, guarded calls, the collected failures.

/// SplitMix64: a tiny seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    /// `k` distinct elements of `xs` (all of them when `k` is larger), in their order in `xs`.
    fn sample<T: Clone>(&mut self, xs: &[T], k: usize) -> Vec<T> {
        let mut order: Vec<usize> = (0..xs.len()).collect();
        for i in 0..order.len() {
            let j = i + self.below(order.len() - i);
            order.swap(i, j);
        }
        let mut chosen: Vec<usize> = order.into_iter().take(k).collect();
        chosen.sort_unstable();
        chosen.into_iter().map(|i| xs[i].clone()).collect()
    }
}

/// Whether `ROBUSTNESS_TRACE` asks for every call to be printed.
fn tracing() -> bool {
    std::env::var_os("ROBUSTNESS_TRACE").is_some_and(|v| v != "0")
}

/// Whether `ROBUSTNESS_FULL` asks for every config key rather than a sample.
fn full() -> bool {
    std::env::var_os("ROBUSTNESS_FULL").is_some_and(|v| v != "0")
}

thread_local! {
    /// Whether this thread's panics are expected, caught and reported by the sweep itself.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread's panic messages unprinted: the sweep reports each panic as the
/// failure of its call. Other threads (other tests) keep the hook as it was.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.try_with(Cell::get).unwrap_or(false) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    f()
}

/// The message a caught panic carried.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(a panic without a message)".to_string())
}

/// What one guarded call came to.
enum Outcome<T> {
    Ok(T),
    Err(String),
    Panic(String),
    Hang,
}

/// Runs `f` on a thread of its own under `catch_unwind`, waiting at most [`LIMIT`] for it (a
/// thread that hangs is left behind).
fn guarded<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Outcome<T> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("robustness".into()).spawn(move || {
        let out = match quietly(|| catch_unwind(AssertUnwindSafe(f))) {
            Ok(Ok(value)) => Outcome::Ok(value),
            Ok(Err(e)) => Outcome::Err(e.to_string()),
            Err(payload) => Outcome::Panic(panic_message(&*payload)),
        };
        let _ = tx.send(out);
    });
    if let Err(e) = spawned {
        return Outcome::Panic(format!("the sweep could not start a thread: {e}"));
    }
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out,
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::Hang,
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Outcome::Panic("the call's thread ended without an answer".into())
        }
    }
}

/// Why the error message `msg` is not one a service can log: empty, several lines, or (with
/// `anchors`) naming none of them.
fn bad_error(msg: &str, anchors: &[&str]) -> Option<String> {
    if msg.trim().is_empty() {
        return Some("an Err with an empty message".into());
    }
    if msg.trim_end().contains(['\n', '\r']) {
        return Some("an Err message of several lines".into());
    }
    let lower = msg.to_lowercase();
    if !anchors.is_empty() && !anchors.iter().any(|a| lower.contains(&a.to_lowercase())) {
        return Some(format!("an Err naming none of {anchors:?}"));
    }
    None
}

/// `extra` (what a case mutated) followed by `generic` (what the errors of a call may name).
fn anchored<'a>(extra: &[&'a str], generic: &[&'a str]) -> Vec<&'a str> {
    extra.iter().chain(generic).copied().collect()
}

/// The collected failures of a sweep.
#[derive(Default)]
struct Sweep {
    failures: Vec<String>,
    /// Generations the sweep stopped where the settings asked for that many tokens.
    notes: Vec<String>,
    calls: usize,
    errs: usize,
}

impl Sweep {
    /// Runs one call guarded: a panic, a hang, or an `Err` that [`bad_error`] refuses is a
    /// failure. Returns the call's value when it succeeded.
    fn call<T: Send + 'static>(
        &mut self,
        case: &str,
        call: &str,
        anchors: &[&str],
        f: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Option<T> {
        self.calls += 1;
        let (value, outcome, failure) = match guarded(f) {
            Outcome::Ok(value) => (Some(value), "Ok".to_string(), None),
            Outcome::Err(msg) => {
                self.errs += 1;
                let failure = bad_error(&msg, anchors).map(|why| format!("{why}: {msg:?}"));
                (None, format!("Err: {msg}"), failure)
            }
            Outcome::Panic(m) => (None, format!("PANIC: {m}"), Some(format!("PANIC: {m}"))),
            Outcome::Hang => {
                let hang = format!("HANG (no answer within {} s)", LIMIT.as_secs());
                (None, hang.clone(), Some(hang))
            }
        };
        if tracing() {
            eprintln!("robustness: {case} | {call} -> {outcome}");
        }
        if let Some(failure) = failure {
            self.failures.push(format!("{case} | {call}: {failure}"));
        }
        value
    }

    /// Asserts that no call failed (and that the sweep made at least `min_calls`).
    fn finish(mut self, what: &str, min_calls: usize) {
        for note in &self.notes {
            eprintln!("robustness note: {note}");
        }
        if self.calls < min_calls {
            self.failures
                .push(format!("the sweep made {} calls, fewer than the {min_calls} expected", self.calls));
        }
        assert!(
            self.failures.is_empty(),
            "{what}: {} of {} calls failed ({} others returned a clean Err):\n  {}",
            self.failures.len(),
            self.calls,
            self.errs,
            self.failures.join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// JSON documents: paths to values, and changes at them.

/// A step into a JSON value.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    At(usize),
}

type JsonPath = Vec<Seg>;

/// `a.b[2]`.
fn path_label(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => out.push_str(&format!(".{k}")),
            Seg::At(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The keys along `path` (what an error about the value may name).
fn path_keys(path: &[Seg]) -> Vec<&str> {
    path.iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::At(_) => None,
        })
        .collect()
}

/// Every value below `root` with its path, containers too; arrays are entered only when `arrays`.
fn nodes(root: &Value, arrays: bool) -> Vec<(JsonPath, Value)> {
    fn walk(v: &Value, arrays: bool, at: &mut JsonPath, out: &mut Vec<(JsonPath, Value)>) {
        let children: Vec<(Seg, &Value)> = match v {
            Value::Object(m) => m.iter().map(|(k, x)| (Seg::Key(k.clone()), x)).collect(),
            Value::Array(a) if arrays => a.iter().enumerate().map(|(i, x)| (Seg::At(i), x)).collect(),
            _ => Vec::new(),
        };
        for (seg, child) in children {
            at.push(seg);
            out.push((at.clone(), child.clone()));
            walk(child, arrays, at, out);
            at.pop();
        }
    }
    let mut out = Vec::new();
    walk(root, arrays, &mut Vec::new(), &mut out);
    out
}

/// The value at `path`, if there is one.
fn value_at<'v>(root: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    let mut v = root;
    for seg in path {
        v = match seg {
            Seg::Key(k) => v.get_mut(k.as_str())?,
            Seg::At(i) => v.get_mut(*i)?,
        };
    }
    Some(v)
}

/// `root` with the value at `path` replaced by `value`.
fn with_value(root: &Value, path: &[Seg], value: Value) -> Value {
    let mut out = root.clone();
    if let Some(slot) = value_at(&mut out, path) {
        *slot = value;
    }
    out
}

/// `root` without the value at `path`.
fn without(root: &Value, path: &[Seg]) -> Value {
    let mut out = root.clone();
    let Some((last, parent)) = path.split_last() else { return out };
    match (value_at(&mut out, parent), last) {
        (Some(Value::Object(m)), Seg::Key(k)) => {
            m.remove(k.as_str());
        }
        (Some(Value::Array(a)), Seg::At(i)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
    out
}

/// A number, or a non-empty list of numbers (`long_factor`).
fn is_numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::Array(a) => !a.is_empty() && a.iter().all(Value::is_number),
        _ => false,
    }
}

/// The JSON of the hostile value `text`.
fn hostile(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("hostile value {text}: {e}"))
}

/// `text` cut to about half its bytes (at a byte, not a character: possibly not UTF-8).
fn half(bytes: &[u8]) -> Vec<u8> {
    bytes[..bytes.len() / 2].to_vec()
}

/// A JSON text nested `depth` lists deep.
fn deep_nesting(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// The JSON file `json` as bytes.
fn json_bytes(json: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(json).unwrap_or_else(|e| panic!("serializing a case: {e}"))
}

/// The JSON document `file` of `sc` as its source has it.
fn original_json(sc: &Scratch, file: &str) -> Value {
    serde_json::from_slice(&sc.original(file)).unwrap_or_else(|e| panic!("{file} of a fixture: {e}"))
}
