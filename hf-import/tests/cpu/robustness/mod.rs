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
/// Keys swept in every `config.json` that has them; others are sampled.
const CORE_KEYS: &[&str] = &[
    "num_hidden_layers",
    "n_layers",
    "vocab_size",
    "max_position_embeddings",
    "num_attention_heads",
    "n_heads",
];
/// How many other numeric keys (nested ones included), and how many non-numeric ones, are swept
/// per `config.json` (all of them with `ROBUSTNESS_FULL=1`).
const SAMPLED_NUMERIC: usize = 2;
const SAMPLED_OTHER: usize = 2;
/// How many top-level keys are removed, one at a time, per `config.json`.
const SAMPLED_REMOVED: usize = 3;
/// The fixtures whose `config.json` is swept.
const CONFIG_FIXTURES: &[&str] = &[
    "llama",
    "llama_tied",
    "qwen2_yarn",
    "phi3_longrope",
    "gemma3",
    "gemma3_mm",
    "llama_dynamic",
    "bert",
    "roberta",
    "distilbert_mlm",
    "sentence_tiny",
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
// Scratch copies of fixture folders.

/// A folder under the system's temp dir, removed (with everything in it) when dropped.
struct ScratchRoot(PathBuf);

impl ScratchRoot {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("oxtorch-robustness-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        ScratchRoot(dir)
    }
}

impl Drop for ScratchRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the folder `from` to `to`, without the golden outputs the sweep never reads.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("expected") || name.starts_with("generate") || name == "chat_expected.json" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(&name))?;
        } else {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

/// Removes the file or folder at `path`, if any.
fn remove_any(path: &Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes `bytes` to `path` through a new file renamed over it: a model of an earlier case that
/// still maps the old file (one left running by a hang) keeps its pages instead of having the file
/// cut under it.
fn replace_file(path: &Path, bytes: &[u8]) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!("{name}.robustness-tmp"));
    std::fs::write(&tmp, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", tmp.display()));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("renaming over {}: {e}", path.display()));
}

/// One change to a scratch folder (file names relative to it).
enum Edit {
    Write(String, Vec<u8>),
    Remove(String),
    MakeDir(String),
}

/// A case: its label, the edits that make it, and what its errors may name besides the usual.
struct Case {
    label: String,
    edits: Vec<Edit>,
    anchors: Vec<String>,
}

impl Case {
    fn write(label: impl Into<String>, file: &str, bytes: impl Into<Vec<u8>>, anchors: &[&str]) -> Self {
        Case::of(label, vec![Edit::Write(file.into(), bytes.into())], anchors)
    }

    fn of(label: impl Into<String>, edits: Vec<Edit>, anchors: &[&str]) -> Self {
        Case { label: label.into(), edits, anchors: anchors.iter().map(|a| a.to_string()).collect() }
    }

    fn anchors(&self) -> Vec<&str> {
        self.anchors.iter().map(String::as_str).collect()
    }
}

/// A private copy of a folder that cases change and [`Scratch::reset`] puts back.
struct Scratch {
    source: PathBuf,
    dir: PathBuf,
    touched: BTreeSet<String>,
}

impl Scratch {
    /// A copy of fixture `name` under `root`.
    fn fixture(root: &ScratchRoot, name: &str) -> Self {
        Scratch::copy_of(root, name, &fixture(name))
    }

    /// A copy of the folder `source` under `root`, called `label`.
    fn copy_of(root: &ScratchRoot, label: &str, source: &Path) -> Self {
        let dir = root.0.join(label.replace('/', "_"));
        copy_dir(source, &dir).unwrap_or_else(|e| panic!("copying {}: {e}", source.display()));
        Scratch { source: source.to_path_buf(), dir, touched: BTreeSet::new() }
    }

    /// The bytes of file `name` as the source folder has it.
    fn original(&self, name: &str) -> Vec<u8> {
        let path = self.source.join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    fn apply(&mut self, edits: &[Edit]) {
        for edit in edits {
            match edit {
                Edit::Write(name, bytes) => {
                    self.touched.insert(name.clone());
                    replace_file(&self.dir.join(name), bytes);
                }
                Edit::Remove(name) => {
                    self.touched.insert(name.clone());
                    remove_any(&self.dir.join(name));
                }
                Edit::MakeDir(name) => {
                    self.touched.insert(name.clone());
                    let path = self.dir.join(name);
                    remove_any(&path);
                    std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
        }
    }

    /// Puts every file a case changed back as the source has it.
    fn reset(&mut self) {
        for name in std::mem::take(&mut self.touched) {
            let target = self.dir.join(&name);
            remove_any(&target);
            let from = self.source.join(&name);
            if from.is_file() {
                replace_file(&target, &self.original(&name));
            }
        }
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

// ---------------------------------------------------------------------------------------------
// safetensors files, byte by byte.

/// One tensor of a safetensors file as the sweep rewrites it.
#[derive(Debug, Clone)]
struct StEntry {
    name: String,
    dtype: String,
    shape: Vec<u64>,
    data: Vec<u8>,
}

impl StEntry {
    fn numel(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }
}

/// The tensors of a (well-formed fixture) safetensors file in offset order, and its metadata.
fn read_st(bytes: &[u8]) -> (Vec<StEntry>, Option<Value>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: Map<String, Value> =
        serde_json::from_slice(&bytes[8..8 + n]).expect("a fixture's safetensors header");
    let data = &bytes[8 + n..];
    let mut meta = None;
    let mut entries: Vec<(u64, StEntry)> = Vec::new();
    for (name, info) in header {
        if name == "__metadata__" {
            meta = Some(info);
            continue;
        }
        let numbers = |key: &str| -> Vec<u64> {
            info[key].as_array().expect("a list").iter().map(|v| v.as_u64().expect("a number")).collect()
        };
        let (offsets, shape) = (numbers("data_offsets"), numbers("shape"));
        let dtype = info["dtype"].as_str().expect("a dtype").to_string();
        let data = data[offsets[0] as usize..offsets[1] as usize].to_vec();
        entries.push((offsets[0], StEntry { name, dtype, shape, data }));
    }
    entries.sort_by_key(|(offset, _)| *offset);
    (entries.into_iter().map(|(_, e)| e).collect(), meta)
}

/// The JSON header of `entries` laid out one after another, and their data.
fn st_layout(entries: &[StEntry], meta: Option<&Value>) -> (Map<String, Value>, Vec<u8>) {
    let mut header = Map::new();
    if let Some(meta) = meta {
        header.insert("__metadata__".into(), meta.clone());
    }
    let mut data = Vec::new();
    for e in entries {
        let range = [data.len(), data.len() + e.data.len()];
        header.insert(e.name.clone(), json!({"dtype": e.dtype, "shape": e.shape, "data_offsets": range}));
        data.extend_from_slice(&e.data);
    }
    (header, data)
}

/// A safetensors file: the header's length (8 bytes, little-endian), the header padded with
/// spaces to a multiple of 8 bytes, the data.
fn st_file(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut h = header.to_vec();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out
}

fn st_bytes(entries: &[StEntry], meta: Option<&Value>) -> Vec<u8> {
    let (header, data) = st_layout(entries, meta);
    st_file(Value::Object(header).to_string().as_bytes(), &data)
}

/// The corruptions of the safetensors file `bytes` (written as `file`): the tensors edited, the
/// header's length, offsets, shapes and text broken, the file cut or padded.
fn safetensors_cases(file: &str, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let (entries, meta) = read_st(bytes);
    let meta = meta.as_ref();
    let pick = rng.below(entries.len());
    let matrices: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].shape.len() == 2).collect();
    let m = if matrices.is_empty() { pick } else { rng.pick(&matrices) };
    let (name, mname) = (entries[pick].name.clone(), entries[m].name.clone());
    let edit = |f: &dyn Fn(&mut Vec<StEntry>)| {
        let mut e = entries.clone();
        f(&mut e);
        st_bytes(&e, meta)
    };
    let mut cases = vec![
        Case::write(format!("'{name}' removed"), file, edit(&|e| drop(e.remove(pick))), &[name.as_str()]),
        Case::write(
            "an unexpected extra tensor",
            file,
            edit(&|e| {
                let extra = StEntry {
                    name: "zz_robustness.unexpected".into(),
                    dtype: "F32".into(),
                    shape: vec![3],
                    data: vec![0; 12],
                };
                e.push(extra);
            }),
            &[],
        ),
        Case::write(
            format!("'{mname}' flattened"),
            file,
            edit(&|e| e[m].shape = vec![e[m].numel() as u64]),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{mname}' transposed"),
            file,
            edit(&|e| e[m].shape.reverse()),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{mname}' one row longer"),
            file,
            edit(&|e| {
                let row = e[m].data.len() / e[m].shape[0].max(1) as usize;
                e[m].shape[0] += 1;
                e[m].data.extend(vec![0u8; row]);
            }),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{name}' empty"),
            file,
            edit(&|e| {
                e[pick].shape = vec![0];
                e[pick].data.clear();
            }),
            &[name.as_str()],
        ),
        Case::write(
            format!("'{name}' all NaN"),
            file,
            edit(&|e| e[pick].data.iter_mut().for_each(|b| *b = 0xFF)),
            &[name.as_str()],
        ),
        Case::write(
            format!("'{name}' renamed '../../escape'"),
            file,
            edit(&|e| e[pick].name = "../../escape".into()),
            &[name.as_str()],
        ),
    ];
    // Stored as another dtype: integers, bools (bytes of 2, which are not bools), other floats,
    // a float8 oxtorch lacks, a name no reader knows.
    for (dtype, size, fill) in [
        ("I64", 8, 1u8),
        ("BOOL", 1, 2),
        ("U8", 1, 7),
        ("F16", 2, 0),
        ("F64", 8, 0),
        ("F8_E4M3", 1, 0),
        ("Q4_ROBUSTNESS", 1, 0),
    ] {
        let data = edit(&|e| {
            let n = e[pick].numel();
            e[pick].dtype = dtype.into();
            e[pick].data = vec![fill; n * size];
        });
        cases.push(Case::write(format!("'{name}' stored as {dtype}"), file, data, &[name.as_str()]));
    }
    // The header's length.
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let with_len = |n: u64| {
        let mut b = bytes.to_vec();
        b[..8].copy_from_slice(&n.to_le_bytes());
        b
    };
    for (label, n) in [
        ("past the end", bytes.len() as u64),
        ("u64::MAX", u64::MAX),
        ("2^63", 1 << 63),
        ("0", 0),
        ("7 (inside the JSON)", 7),
        ("one byte short", header_len - 1),
    ] {
        cases.push(Case::write(format!("header length {label}"), file, with_len(n), &[]));
    }
    // Offsets and shapes in the header.
    let (header, data) = st_layout(&entries, meta);
    let with_header = |f: &dyn Fn(&mut Map<String, Value>)| {
        let mut h = header.clone();
        f(&mut h);
        st_file(Value::Object(h).to_string().as_bytes(), &data)
    };
    let (first, second, last) =
        (entries[0].name.clone(), entries[1].name.clone(), entries[entries.len() - 1].name.clone());
    let offsets = |h: &Map<String, Value>, n: &str| h[n]["data_offsets"].clone();
    cases.extend([
        Case::write(
            format!("'{second}' overlapping '{first}'"),
            file,
            with_header(&|h| h[&second]["data_offsets"] = offsets(h, &first)),
            &[],
        ),
        Case::write(
            format!("'{last}' ending past the data"),
            file,
            with_header(&|h| {
                let end = h[&last]["data_offsets"][1].as_u64().unwrap_or(0);
                h[&last]["data_offsets"][1] = json!(end + 1000);
            }),
            &[],
        ),
        Case::write(
            format!("'{name}' offsets reversed"),
            file,
            with_header(&|h| {
                let o = offsets(h, &name);
                h[&name]["data_offsets"] = json!([o[1], o[0]]);
            }),
            &[],
        ),
        Case::write(
            format!("'{name}' ending at u64::MAX"),
            file,
            with_header(&|h| h[&name]["data_offsets"][1] = json!(u64::MAX)),
            &[],
        ),
        Case::write(
            format!("'{name}' of an overflowing shape"),
            file,
            with_header(&|h| h[&name]["shape"] = json!([1u64 << 62, 1u64 << 62, 16])),
            &[],
        ),
        Case::write(
            format!("'{name}' of a negative dim"),
            file,
            with_header(&|h| h[&name]["shape"] = json!([-1])),
            &[],
        ),
        Case::write(
            format!("'{name}' of dtype 5"),
            file,
            with_header(&|h| h[&name]["dtype"] = json!(5)),
            &[],
        ),
        Case::write(
            "a tensor entry that is a string",
            file,
            with_header(&|h| drop(h.insert("zz".into(), json!("x")))),
            &[],
        ),
        Case::write(
            "__metadata__ holding a number",
            file,
            with_header(&|h| drop(h.insert("__metadata__".into(), json!({"format": 5})))),
            &[],
        ),
        Case::write("an empty header", file, st_file(b"{}", &data), &[]),
        Case::write("a header that is a list", file, st_file(b"[]", &data), &[]),
        Case::write("a header that is not JSON", file, st_file(b"not json at all", &data), &[]),
        Case::write("a header that is not UTF-8", file, st_file(&[0xFF, 0xFE, 0xFD, 0x80], &data), &[]),
        Case::write(
            "a header nested 5000 deep",
            file,
            st_file(format!("{{\"a\": {}}}", deep_nesting(5000)).as_bytes(), &data),
            &[],
        ),
    ]);
    // A tensor named twice in the header's text (the second entry wins, or the offsets clash).
    let text = Value::Object(header.clone()).to_string();
    let twice = format!(
        "{},\"{first}\":{}}}",
        &text[..text.len() - 1],
        json!({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})
    );
    cases.push(Case::write(format!("'{first}' named twice"), file, st_file(twice.as_bytes(), &data), &[]));
    // The data misaligned: a header of odd length, not padded (tensors are copied, not viewed).
    let mut odd = text.into_bytes();
    if odd.len().is_multiple_of(2) {
        odd.push(b' ');
    }
    let mut misaligned = (odd.len() as u64).to_le_bytes().to_vec();
    misaligned.extend_from_slice(&odd);
    misaligned.extend_from_slice(&data);
    cases.push(Case::write("the data misaligned", file, misaligned, &[]));
    // The file cut, padded or replaced.
    cases.extend([
        Case::write("truncated to half", file, half(bytes), &[]),
        Case::write("truncated inside the header", file, bytes[..8 + header_len as usize / 2].to_vec(), &[]),
        Case::write("its last byte missing", file, bytes[..bytes.len() - 1].to_vec(), &[]),
        Case::write("trailing garbage", file, [bytes, b"garbage!".as_slice()].concat(), &[]),
        Case::write("4 bytes", file, bytes[..4].to_vec(), &[]),
        Case::write("0 bytes", file, Vec::new(), &[]),
        Case::of(format!("{file} removed"), vec![Edit::Remove(file.into())], &["no weights"]),
        Case::of(format!("{file} a folder"), vec![Edit::MakeDir(file.into())], &["no weights"]),
    ]);
    cases
}

// ---------------------------------------------------------------------------------------------
// What a service does with a model folder.

/// The ids of a short prompt that every fixture's vocabulary holds.
fn prompt() -> Result<Tensor> {
    Ok(Tensor::from_vec(vec![1i64, 5, 7], [1, 3])?)
}

/// `input_ids` alone.
fn ids_only(ids: Tensor) -> BTreeMap<String, Tensor> {
    BTreeMap::from([("input_ids".to_string(), ids)])
}

/// The decoder inside `model`, or an error.
fn decoder(model: &AutoModel) -> Result<&CausalLm> {
    model.causal_lm().ok_or_else(|| Error::Input("not a decoder".into()))
}

/// One of the dtypes weights are read as, chosen by `rng` (as stored, most often).
fn pick_dtype(rng: &mut Rng) -> Option<DType> {
    rng.pick(&[None, None, Some(DType::F32), Some(DType::BF16)])
}

/// The payload with which a generation's token callback stops it.
struct BudgetSpent;

/// What a guarded generation came to.
enum Generated {
    /// It ended by itself.
    Done,
    /// The sweep stopped it after this many tokens.
    Stopped(usize),
}

/// What a generation stopped past its token budget means.
#[derive(Clone, Copy, PartialEq)]
enum OnStop {
    /// Expected: the settings ask for that many tokens, and the sweep only checks they start.
    Fine,
    /// A printed note: settings read from a file ask for that many tokens.
    Note,
    /// A failure: the generation should have ended (at its `max_new_tokens`, or at the model's
    /// `max_position_embeddings` where `resolve_length` caps the length).
    Failure,
}

/// A generation to run: prompts, mask, settings, and the tokens after which it is stopped.
struct Gen {
    ids: Tensor,
    mask: Option<Tensor>,
    g: GenerationConfig,
    budget: usize,
    on_stop: OnStop,
}

impl Gen {
    fn new(ids: Tensor, mask: Option<Tensor>, g: GenerationConfig) -> Self {
        Gen { ids, mask, g, budget: 64, on_stop: OnStop::Failure }
    }
}

/// Generates as `gen` says, with the tokenizer when given (stop strings), stopping the generation
/// (a caught panic) once its rows produced more than `gen.budget` tokens.
fn generate_budgeted(model: &AutoModel, tok: Option<&HfTokenizer>, gen: &Gen) -> Result<Generated> {
    let lm = decoder(model)?;
    let count = Cell::new(0usize);
    let on_token = |_: usize, _: i64| {
        count.set(count.get() + 1);
        if count.get() > gen.budget {
            std::panic::panic_any(BudgetSpent);
        }
    };
    let run = catch_unwind(AssertUnwindSafe(|| match tok {
        Some(tok) => generate_with_tokenizer(lm, &gen.ids, gen.mask.as_ref(), &gen.g, tok, on_token),
        None => generate(lm, &gen.ids, gen.mask.as_ref(), &gen.g, on_token),
    }));
    match run {
        Ok(out) => out.map(|_| Generated::Done),
        Err(payload) if payload.is::<BudgetSpent>() => Ok(Generated::Stopped(count.get())),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Runs `gen` on `model` guarded, and judges a generation the sweep had to stop.
fn run_generation(
    s: &mut Sweep,
    case: &str,
    call: &str,
    model: &Arc<AutoModel>,
    tok: Option<&Arc<HfTokenizer>>,
    gen: Gen,
) {
    let on_stop = gen.on_stop;
    let (m, t) = (model.clone(), tok.cloned());
    let out = s.call(case, call, &[], move || generate_budgeted(&m, t.as_deref(), &gen));
    if let Some(Generated::Stopped(n)) = out {
        let what = format!("{case} | {call}: still generating after {n} tokens (stopped by the sweep)");
        match on_stop {
            OnStop::Fine => {}
            OnStop::Note => s.notes.push(what),
            OnStop::Failure => s.failures.push(what),
        }
    }
}

/// Everything a service does with the model folder `dir`, each step guarded: the config, the
/// weights (floats read as `dtype`), the model, a forward pass, the generation settings and a
/// short generation (decoders), the tokenizer, the chat template and the sentence-transformers
/// pipeline where the folder has them. `extra`: what a load error may name besides the usual.
/// Returns whether the model loaded.
fn exercise(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str], dtype: Option<DType>) -> bool {
    let d = dir.to_path_buf();
    let cfg = s.call(case, "Config::load", &anchored(extra, CONFIG_ANCHORS), move || Config::load(&d));
    let d = dir.to_path_buf();
    let weights =
        s.call(case, "Weights::load", &anchored(extra, WEIGHTS_ANCHORS), move || Weights::load(&d, dtype));
    let cfg = cfg.map(Arc::new);
    let model = match (&cfg, weights) {
        (Some(cfg), Some(weights)) => {
            let cfg = cfg.clone();
            s.call(case, "AutoModel::load", &anchored(extra, MODEL_ANCHORS), move || {
                AutoModel::load(&cfg, &weights)
            })
            .map(Arc::new)
        }
        _ => None,
    };
    let tok = if dir.join("tokenizer.json").is_file() {
        let d = dir.to_path_buf();
        s.call(case, "HfTokenizer::load", &anchored(extra, TOKENIZER_ANCHORS), move || {
            HfTokenizer::load(&d, None)
        })
        .map(Arc::new)
    } else {
        None
    };
    if let (Some(cfg), Some(model)) = (&cfg, &model) {
        run_model(s, case, dir, cfg, model, tok.as_ref());
    }
    if let Some(tok) = &tok {
        run_tokenizer(s, case, tok);
    }
    run_chat(s, case, dir, extra);
    if dir.join("modules.json").is_file() {
        run_sentence(s, case, dir, extra, dtype);
    }
    model.is_some()
}

/// A forward pass of a loaded model; for a decoder, its generation settings read from `dir` as
/// a service does (`from_model_dir`, `resolve_length`) and two new tokens.
fn run_model(
    s: &mut Sweep,
    case: &str,
    dir: &Path,
    cfg: &Arc<Config>,
    model: &Arc<AutoModel>,
    tok: Option<&Arc<HfTokenizer>>,
) {
    let m = model.clone();
    s.call(case, "forward_named([1, 3] ids)", &[], move || m.forward_named(&ids_only(prompt()?), false));
    if model.causal_lm().is_none() {
        let m = model.clone();
        s.call(case, "last_hidden_state", &[], move || m.last_hidden_state(&prompt()?, None, None));
        return;
    }
    let (d, c) = (dir.to_path_buf(), cfg.clone());
    let g = s.call(case, "GenerationConfig::from_model_dir", GENERATION_ANCHORS, move || {
        GenerationConfig::from_model_dir(&d, &c)
    });
    let Some(mut g) = g else { return };
    let resolved = s.call(case, "GenerationConfig::resolve_length(3)", &["max_length"], move || {
        g.resolve_length(3)?;
        Ok(g)
    });
    let Some(mut g) = resolved else { return };
    g.max_new_tokens = g.max_new_tokens.min(2);
    let ids = Tensor::from_vec(vec![1i64, 5, 7], [1, 3]).expect("a prompt");
    run_generation(s, case, "generate(2 new tokens)", model, tok, Gen::new(ids, None, g));
}

/// Encoding and decoding with a loaded tokenizer.
fn run_tokenizer(s: &mut Sweep, case: &str, tok: &Arc<HfTokenizer>) {
    let t = tok.clone();
    s.call(case, "HfTokenizer::encode", &[], move || {
        t.encode("Hello, world! ünïcödé 日本語 \u{0}\u{FFFD} [CLS] ##x <0x41>", true)
    });
    let t = tok.clone();
    s.call(case, "HfTokenizer::encode_batch", &[], move || t.encode_batch(&["a b c", "", "Hello world"]));
    let t = tok.clone();
    s.call(case, "HfTokenizer::decode", &[], move || t.decode(&[0, 1, 2, 3, 4, 5, 60, u32::MAX], false));
    let t = tok.clone();
    s.call(case, "HfTokenizer::decode(special ids, skipped)", &[], move || t.decode(&[0, 1, 2, 3, 4], true));
}

/// The chat template of `dir` (if any), rendered.
fn run_chat(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str]) {
    let d = dir.to_path_buf();
    let template = s.call(case, "ChatTemplate::from_model_dir", &anchored(extra, CHAT_ANCHORS), move || {
        ChatTemplate::from_model_dir(&d)
    });
    if let Some(Some(template)) = template {
        s.call(case, "ChatTemplate::render", &["chat template"], move || {
            template.render(&[Message::new("system", "Be brief."), Message::new("user", "Hi there")], true)
        });
    }
}

/// The sentence-transformers pipeline of `dir`: loaded, then encoding texts.
fn run_sentence(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str], dtype: Option<DType>) {
    let d = dir.to_path_buf();
    let loaded = s.call(case, "SentenceTransformer::load", &anchored(extra, SENTENCE_ANCHORS), move || {
        SentenceTransformer::load(&d, dtype)
    });
    let Some(st) = loaded.map(Arc::new) else { return };
    let m = st.clone();
    s.call(case, "SentenceTransformer::encode", &[], move || m.encode(&["hello world", "a"]));
    s.call(case, "SentenceTransformer::encode_with_prompt", &[], move || {
        st.encode_with_prompt(&["hello"], Some("query: "), None)
    });
}

/// Applies each case to `sc`, exercises the folder, and puts it back.
fn sweep_cases(s: &mut Sweep, rng: &mut Rng, sc: &mut Scratch, what: &str, cases: Vec<Case>) {
    for case in cases {
        sc.apply(&case.edits);
        let label = format!("{what} {}", case.label);
        exercise(s, &label, &sc.dir, &case.anchors(), pick_dtype(rng));
        sc.reset();
    }
}

/// `fixture` exercised as it is: it must load (else the cases built on it test nothing).
fn baseline(s: &mut Sweep, name: &str, dir: &Path) {
    if !exercise(s, &format!("{name} (as it is)"), dir, &[], None) {
        s.failures.push(format!("{name}: the fixture itself does not load"));
    }
}

// ---------------------------------------------------------------------------------------------
// config.json

/// The corruptions of a `config.json` (`json`, `bytes` as written): chosen keys set to each
/// hostile value, keys removed, and the file broken.
fn config_cases(json: &Value, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let all = nodes(json, false);
    let (numeric, other): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, v)| is_numeric(v));
    // A core key at the top, or in a multimodal config's `text_config`.
    let core = |p: &JsonPath| match p.split_last() {
        Some((Seg::Key(k), above)) => {
            CORE_KEYS.contains(&k.as_str())
                && above.iter().all(|s| matches!(s, Seg::Key(t) if t == "text_config"))
        }
        _ => false,
    };
    let mut chosen: Vec<JsonPath> = numeric.iter().filter(|(p, _)| core(p)).map(|(p, _)| p.clone()).collect();
    let rest: Vec<JsonPath> = numeric.iter().filter(|(p, _)| !core(p)).map(|(p, _)| p.clone()).collect();
    let other: Vec<JsonPath> = other.into_iter().map(|(p, _)| p).collect();
    let (n_numeric, n_other) =
        if full() { (usize::MAX, usize::MAX) } else { (SAMPLED_NUMERIC, SAMPLED_OTHER) };
    chosen.extend(rng.sample(&rest, n_numeric));
    chosen.extend(rng.sample(&other, n_other));
    let mut cases = Vec::new();
    for path in &chosen {
        let keys = path_keys(path);
        for text in HOSTILE {
            let mutated = with_value(json, path, hostile(text));
            let label = format!("{}={text}", path_label(path));
            cases.push(Case::write(label, "config.json", json_bytes(&mutated), &keys));
        }
    }
    let top: Vec<JsonPath> =
        json.as_object().into_iter().flatten().map(|(k, _)| vec![Seg::Key(k.clone())]).collect();
    let n_removed = if full() { usize::MAX } else { SAMPLED_REMOVED };
    for path in rng.sample(&top, n_removed) {
        let label = format!("{} removed", path_label(&path));
        cases.push(Case::write(label, "config.json", json_bytes(&without(json, &path)), &path_keys(&path)));
    }
    let set = |key: &str, v: Value| json_bytes(&with_value(json, &[Seg::Key(key.into())], v));
    let encoder = matches!(json["model_type"].as_str(), Some("bert" | "roberta" | "distilbert"));
    let other_family = if encoder { json!(["LlamaForCausalLM"]) } else { json!(["BertModel"]) };
    let c = "config.json";
    cases.extend([
        Case::of("config.json removed", vec![Edit::Remove(c.into())], &[]),
        Case::of("config.json a folder", vec![Edit::MakeDir(c.into())], &[]),
        Case::write("config.json empty", c, Vec::new(), &[]),
        Case::write("config.json truncated", c, half(bytes), &[]),
        Case::write("config.json not JSON", c, b"{\"model_type\": llama".to_vec(), &[]),
        Case::write("config.json a list", c, b"[]".to_vec(), &[]),
        Case::write("config.json a number", c, b"5".to_vec(), &[]),
        Case::write("config.json null", c, b"null".to_vec(), &[]),
        Case::write("config.json an empty object", c, b"{}".to_vec(), &["model_type"]),
        Case::write(
            "config.json not UTF-8",
            c,
            [b"{\"a\": \"".as_slice(), &[0xFF, 0xFE], b"\"}"].concat(),
            &[],
        ),
        Case::write("config.json after a BOM", c, ["\u{FEFF}".as_bytes(), bytes].concat(), &[]),
        Case::write(
            "config.json nested 5000 deep",
            c,
            format!("{{\"model_type\": \"llama\", \"rope_parameters\": {}}}", deep_nesting(5000)),
            &[],
        ),
        Case::write("model_type unknown", c, set("model_type", json!("t5")), &["model_type"]),
        Case::write(
            "architectures unknown",
            c,
            set("architectures", json!(["FooForBar"])),
            &["architecture"],
        ),
        Case::write(
            "architectures a string",
            c,
            set("architectures", json!("LlamaForCausalLM")),
            &["architecture"],
        ),
        Case::write("architectures [5]", c, set("architectures", json!([5])), &["architecture"]),
        Case::write("architectures [\"\"]", c, set("architectures", json!([""])), &["architecture"]),
        Case::write(
            "architectures of another family",
            c,
            set("architectures", other_family),
            &["architecture"],
        ),
    ]);
    cases
}

#[test]
fn corrupt_config_json_never_panics() {
    let root = ScratchRoot::new("config");
    let mut rng = Rng(SEED);
    let mut s = Sweep::default();
    for name in CONFIG_FIXTURES {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let bytes = sc.original("config.json");
        let cases = config_cases(&original_json(&sc, "config.json"), &bytes, &mut rng);
        sweep_cases(&mut s, &mut rng, &mut sc, name, cases);
    }
    s.finish("robustness config.json sweep", 2000);
}

// ---------------------------------------------------------------------------------------------
// Weights

/// The corruptions of a sharded checkpoint's index and shards.
fn sharded_cases(sc: &Scratch) -> Vec<Case> {
    let index = "model.safetensors.index.json";
    let json = original_json(sc, index);
    let map = json["weight_map"].as_object().expect("a weight_map");
    let (tensor, shard) =
        map.iter().next().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).expect("a tensor");
    let bytes = sc.original(index);
    let shard_bytes = sc.original(&shard);
    let set = |path: &[&str], v: Value| {
        let path: JsonPath = path.iter().map(|k| Seg::Key(k.to_string())).collect();
        json_bytes(&with_value(&json, &path, v))
    };
    let mut ghost = json.clone();
    ghost["weight_map"]["model.ghost.weight"] = json!(shard.clone());
    let mut broken_shard = shard_bytes.clone();
    broken_shard[..8].copy_from_slice(&(shard_bytes.len() as u64).to_le_bytes());
    vec![
        Case::of(format!("shard {shard} missing"), vec![Edit::Remove(shard.clone())], &[shard.as_str()]),
        Case::write(format!("shard {shard} empty"), &shard, Vec::new(), &[shard.as_str()]),
        Case::write(
            format!("shard {shard} with a header past its end"),
            &shard,
            broken_shard,
            &[shard.as_str()],
        ),
        Case::write(format!("shard {shard} truncated"), &shard, half(&shard_bytes), &[shard.as_str()]),
        Case::write("index not JSON", index, b"{\"weight_map\": ".to_vec(), &[index]),
        Case::write("index truncated", index, half(&bytes), &[index]),
        Case::write("index a list", index, b"[]".to_vec(), &[index]),
        Case::write("index without weight_map", index, b"{}".to_vec(), &[index]),
        Case::write("weight_map a string", index, set(&["weight_map"], json!("x")), &[index]),
        Case::write("weight_map empty", index, set(&["weight_map"], json!({})), &[]),
        Case::write(
            "a shard name that is a number",
            index,
            set(&["weight_map", tensor.as_str()], json!(5)),
            &[index],
        ),
        Case::write(
            "a shard name escaping",
            index,
            set(&["weight_map", tensor.as_str()], json!("../x.safetensors")),
            &[index],
        ),
        Case::write(
            "a shard name absolute",
            index,
            set(&["weight_map", tensor.as_str()], json!("/etc/hostname")),
            &[index],
        ),
        Case::write("a shard name empty", index, set(&["weight_map", tensor.as_str()], json!("")), &[]),
        Case::write(
            "a shard that is the index",
            index,
            set(&["weight_map", tensor.as_str()], json!(index)),
            &[index],
        ),
        Case::of(
            "a shard that is a folder",
            vec![
                Edit::MakeDir("sub".into()),
                Edit::Write(index.into(), set(&["weight_map", tensor.as_str()], json!("sub"))),
            ],
            &["sub"],
        ),
        Case::write(
            "a shard that does not exist",
            index,
            set(&["weight_map", tensor.as_str()], json!("nope.safetensors")),
            &[],
        ),
        Case::write("a tensor listed but absent", index, json_bytes(&ghost), &["model.ghost.weight"]),
    ]
}

/// The corruptions of a `pytorch_model.bin`.
fn pytorch_cases(bytes: &[u8]) -> Vec<Case> {
    let f = "pytorch_model.bin";
    let empty_zip = [b"PK\x05\x06".as_slice(), &[0u8; 18]].concat();
    let safetensors = st_bytes(
        &[StEntry { name: "w".into(), dtype: "F32".into(), shape: vec![1], data: vec![0; 4] }],
        None,
    );
    vec![
        Case::write("pytorch_model.bin truncated", f, half(bytes), &[]),
        Case::write("pytorch_model.bin empty", f, Vec::new(), &[]),
        Case::write("pytorch_model.bin garbage", f, vec![0xA5; 1024], &[]),
        Case::write("pytorch_model.bin an empty zip", f, empty_zip, &[]),
        Case::write("pytorch_model.bin a safetensors file", f, safetensors, &[]),
        Case::of("pytorch_model.bin removed", vec![Edit::Remove(f.into())], &["no weights"]),
    ]
}

#[test]
fn corrupt_weight_files_never_panic() {
    let root = ScratchRoot::new("weights");
    let mut rng = Rng(SEED ^ 1);
    let mut s = Sweep::default();
    for name in ["llama_tied", "gemma3", "gemma3_mm", "bert", "phi3_longrope"] {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let cases = safetensors_cases("model.safetensors", &sc.original("model.safetensors"), &mut rng);
        sweep_cases(&mut s, &mut rng, &mut sc, name, cases);
    }
    let mut sc = Scratch::fixture(&root, "qwen2");
    baseline(&mut s, "qwen2", &sc.dir);
    let cases = sharded_cases(&sc);
    sweep_cases(&mut s, &mut rng, &mut sc, "qwen2", cases);
    let mut sc = Scratch::fixture(&root, "llama");
    baseline(&mut s, "llama", &sc.dir);
    let cases = pytorch_cases(&sc.original("pytorch_model.bin"));
    sweep_cases(&mut s, &mut rng, &mut sc, "llama", cases);
    s.finish("robustness weights sweep", 900);
}

// ---------------------------------------------------------------------------------------------
// Tokenizers, chat templates, generation settings, sentence-transformers files

/// The corruptions of a `tokenizer.json`: the file broken, its parts of the wrong type, and
/// random values in it (the vocabulary, merges, settings) set to hostile ones.
fn tokenizer_cases(json: &Value, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let t = "tokenizer.json";
    let set = |path: &[Seg], v: Value| json_bytes(&with_value(json, path, v));
    let key = |k: &str| vec![Seg::Key(k.into())];
    let model = |k: &str| vec![Seg::Key("model".into()), Seg::Key(k.into())];
    let mut cases = vec![
        Case::of("tokenizer.json removed", vec![Edit::Remove(t.into())], &[]),
        Case::write("tokenizer.json truncated", t, half(bytes), &[]),
        Case::write("tokenizer.json empty", t, Vec::new(), &[]),
        Case::write("tokenizer.json garbage", t, vec![0xC3; 64], &[]),
        Case::write("tokenizer.json a list", t, b"[]".to_vec(), &[]),
        Case::write("tokenizer.json an empty object", t, b"{}".to_vec(), &[]),
        Case::write(
            "tokenizer.json nested 5000 deep",
            t,
            format!("{{\"normalizer\": {}}}", deep_nesting(5000)),
            &[],
        ),
        Case::write("version 2.0", t, set(&key("version"), json!("2.0")), &[]),
        Case::write("model removed", t, json_bytes(&without(json, &key("model"))), &[]),
        Case::write("model type unknown", t, set(&model("type"), json!("Nope")), &[]),
        Case::write("model type removed", t, json_bytes(&without(json, &model("type"))), &[]),
        Case::write("model vocab a string", t, set(&model("vocab"), json!("x")), &[]),
        Case::write("model vocab empty", t, set(&model("vocab"), json!({})), &[]),
        Case::write("model vocab empty list", t, set(&model("vocab"), json!([])), &[]),
        Case::write(
            "model merges unknown tokens",
            t,
            set(&model("merges"), json!([["\u{1F600}", "zz"]])),
            &[],
        ),
        Case::write(
            "model unk_token not in the vocabulary",
            t,
            set(&model("unk_token"), json!("<nope>")),
            &[],
        ),
        Case::write("added_tokens a string", t, set(&key("added_tokens"), json!("x")), &[]),
        Case::write(
            "an added token of a huge id",
            t,
            set(&key("added_tokens"), json!([{"id": 4294967295u64, "content": "zz", "special": true}])),
            &[],
        ),
        Case::write(
            "an added token with empty content",
            t,
            set(&key("added_tokens"), json!([{"id": 0, "content": "", "special": true}])),
            &[],
        ),
        Case::write("normalizer unknown", t, set(&key("normalizer"), json!({"type": "Nope"})), &[]),
        Case::write("pre_tokenizer a number", t, set(&key("pre_tokenizer"), json!(5)), &[]),
        Case::write("decoder unknown", t, set(&key("decoder"), json!({"type": "Nope"})), &[]),
        Case::write(
            "a template with an undefined special token",
            t,
            set(
                &key("post_processor"),
                json!({"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[NOPE]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {}}),
            ),
            &[],
        ),
        Case::write(
            "a template special token of no ids",
            t,
            set(
                &key("post_processor"),
                json!({"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[X]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {"[X]": {"id": "[X]", "ids": [], "tokens": []}}}),
            ),
            &[],
        ),
        Case::write(
            "padding to a huge pad id",
            t,
            set(
                &key("padding"),
                json!({"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": 1000000,
                                        "pad_id": 4294967295u64, "pad_type_id": 7, "pad_token": "zz"}),
            ),
            &[],
        ),
        Case::write(
            "truncation of length 0",
            t,
            set(
                &key("truncation"),
                json!({"direction": "Right", "max_length": 0, "strategy": "LongestFirst", "stride": 5}),
            ),
            &[],
        ),
    ];
    let leaves: Vec<JsonPath> = nodes(json, true)
        .into_iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .map(|(p, _)| p)
        .collect();
    for path in rng.sample(&leaves, 6) {
        for text in rng.sample(HOSTILE, 4) {
            cases.push(Case::write(
                format!("{}={text}", path_label(&path)),
                t,
                set(&path, hostile(text)),
                &[],
            ));
        }
    }
    cases
}

/// Loads the tokenizer of `dir` (also with truncation to 1 token and to `usize::MAX`) and uses it.
fn exercise_tokenizer(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str]) {
    let d = dir.to_path_buf();
    let tok = s.call(case, "HfTokenizer::load", &anchored(extra, TOKENIZER_ANCHORS), move || {
        HfTokenizer::load(&d, None)
    });
    if let Some(tok) = tok {
        run_tokenizer(s, case, &Arc::new(tok));
    }
    for max in [1, usize::MAX] {
        let d = dir.to_path_buf();
        let call = format!("HfTokenizer::load(max_length {max})");
        let tok = s
            .call(case, &call, &anchored(extra, TOKENIZER_ANCHORS), move || HfTokenizer::load(&d, Some(max)));
        if let Some(tok) = tok {
            s.call(case, "HfTokenizer::encode(truncated)", &[], move || tok.encode("a b c d e f g h", true));
        }
    }
}

/// Chat templates that fail to parse, raise, loop for ever, recurse, or ask for huge strings.
const BAD_TEMPLATES: &[(&str, &str)] = &[
    ("a syntax error", "{% for %}{{ messages }}"),
    ("an unclosed block", "{% if messages %}x"),
    ("raise_exception", "{{ raise_exception('no chat here') }}"),
    ("an unknown filter", "{{ messages | nope }}"),
    ("a method of undefined", "{{ messages[10].content.strip() }}"),
    ("a method of none", "{{ none.strip() }}"),
    ("10^10 loop steps", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
    ("a range of 10^12", "{% for i in range(1000000000000) %}x{% endfor %}"),
    ("endless recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
    ("a string repeated 10^12 times", "{{ 'x' * 1000000000000 }}"),
    ("bos_token repeated 10^8 times", "{{ bos_token * 100000000 }}"),
    ("a list repeated 10^12 times", "{{ (messages * 1000000000000) | length }}"),
    ("a list repeated i64::MAX times", "{{ ([1, 2, 3] * 9223372036854775807) | length }}"),
    ("integer overflow", "{{ 9223372036854775807 + 1 }}{{ 9223372036854775807 * 9223372036854775807 }}"),
    ("division by zero", "{{ 1 // 0 }}{{ 1 % 0 }}{{ 1 / 0 }}"),
    (
        "tojson of huge floats",
        "{{ [1e308 * 10, -1e308 * 10, 1e-320, 0.1, 123456789012345678901234567890.0] | tojson }}",
    ),
    ("tojson with odd arguments", "{{ messages | tojson(indent='\\t', separators=[1, 2], sort_keys=5) }}"),
    ("tojson indented -5", "{{ messages | tojson(indent=-5) }}"),
    (
        "strftime_now of odd formats",
        "{{ strftime_now('%') }}{{ strftime_now('%Q%-d%%%') }}{{ strftime_now('') }}",
    ),
    ("a namespace chain", "{% set ns = namespace(a=1) %}{{ ns.a.b.c }}"),
    ("a NUL byte", "\u{0}{{ bos_token }}"),
];

/// The corruptions of `tokenizer_config.json`, `chat_template.jinja` and the template in it.
fn chat_and_tokenizer_config_cases(json: &Value, bytes: &[u8]) -> Vec<Case> {
    let tc = "tokenizer_config.json";
    let jinja = "chat_template.jinja";
    let set = |k: &str, v: Value| json_bytes(&with_value(json, &[Seg::Key(k.into())], v));
    let mut cases = vec![
        Case::write("tokenizer_config.json truncated", tc, half(bytes), &[tc]),
        Case::write("tokenizer_config.json garbage", tc, vec![0xFF; 16], &[tc]),
        Case::write("tokenizer_config.json a list", tc, b"[]".to_vec(), &[tc]),
        Case::write("tokenizer_config.json a number", tc, b"5".to_vec(), &[tc]),
    ];
    for (key, v) in [
        ("bos_token", json!(5)),
        ("bos_token", json!({"content": 7})),
        ("eos_token", json!([])),
        ("pad_token", json!({})),
        ("tokenizer_class", json!(5)),
        ("tokenizer_class", json!("T5Tokenizer")),
        ("tokenizer_class", json!("LlamaTokenizerFast")),
        ("do_lower_case", json!("x")),
        ("strip_accents", json!(5)),
        ("tokenize_chinese_chars", json!([])),
        ("model_max_length", json!(-1)),
        ("model_max_length", json!(1e30)),
        ("model_max_length", json!("x")),
        ("legacy", json!("x")),
        ("add_prefix_space", json!(5)),
    ] {
        cases.push(Case::write(format!("{key}={v}"), tc, set(key, v), &[key]));
    }
    // Templates from tokenizer_config.json (the .jinja file wins, so it is removed).
    for (label, v) in [
        ("a number", json!(5)),
        ("an empty list", json!([])),
        ("a list without a default", json!([{"name": "tool_use", "template": "x"}])),
        ("a default that is a number", json!([{"name": "default", "template": 5}])),
        ("failing", json!("{{ raise_exception('no') }}")),
    ] {
        let edits = vec![Edit::Remove(jinja.into()), Edit::Write(tc.into(), set("chat_template", v))];
        cases.push(Case::of(format!("chat_template {label}"), edits, &["chat_template"]));
    }
    cases.push(Case::write("chat_template.jinja not UTF-8", jinja, vec![0xFF, 0xFE, b'{'], &[jinja]));
    cases.push(Case::of("chat_template.jinja a folder", vec![Edit::MakeDir(jinja.into())], &[jinja]));
    for (label, template) in BAD_TEMPLATES {
        cases.push(Case::write(format!("chat template with {label}"), jinja, template.as_bytes(), &[]));
    }
    cases
}

/// `generation_config.json` files that are broken or ask for impossible or huge generations.
fn generation_config_cases() -> Vec<Case> {
    let g = "generation_config.json";
    let texts: &[&str] = &[
        r#"{"eos_token_id": "x"}"#,
        r#"{"eos_token_id": 1000000000000}"#,
        r#"{"eos_token_id": -1}"#,
        r#"{"eos_token_id": 9223372036854775808}"#,
        r#"{"eos_token_id": []}"#,
        r#"{"eos_token_id": [2, "x"]}"#,
        r#"{"eos_token_id": [[2]]}"#,
        r#"{"eos_token_id": 2.5}"#,
        r#"{"eos_token_id": [5, 6, 7], "pad_token_id": -9223372036854775808}"#,
        r#"{"eos_token_id": 5, "pad_token_id": 1000000000000}"#,
        r#"{"pad_token_id": "x"}"#,
        r#"{"bad_words_ids": [[1000000000000]]}"#,
        r#"{"bad_words_ids": [[]]}"#,
        r#"{"bad_words_ids": [3]}"#,
        r#"{"bad_words_ids": [[-1]]}"#,
        r#"{"bad_words_ids": "x"}"#,
        r#"{"suppress_tokens": [-1, 1000000000000, 9223372036854775807]}"#,
        r#"{"begin_suppress_tokens": "x"}"#,
        r#"{"forced_eos_token_id": 1000000000000}"#,
        r#"{"forced_eos_token_id": -1, "max_new_tokens": 1}"#,
        r#"{"max_new_tokens": 0}"#,
        r#"{"max_new_tokens": -1}"#,
        r#"{"max_new_tokens": "x"}"#,
        r#"{"max_new_tokens": 18446744073709551615}"#,
        r#"{"max_new_tokens": 1000000000000}"#,
        r#"{"max_new_tokens": 1000000000000, "cache_implementation": "static"}"#,
        r#"{"max_length": 0}"#,
        r#"{"max_length": 3}"#,
        r#"{"max_length": 1000000000000}"#,
        r#"{"min_length": 1000000000000}"#,
        r#"{"min_new_tokens": 1000000000000, "eos_token_id": 2}"#,
        r#"{"do_sample": true, "top_k": 0}"#,
        r#"{"do_sample": true, "top_k": 1000000000000}"#,
        r#"{"do_sample": true, "top_p": -1}"#,
        r#"{"do_sample": true, "top_p": 2}"#,
        r#"{"do_sample": true, "min_p": 2}"#,
        r#"{"do_sample": true, "temperature": 0}"#,
        r#"{"do_sample": true, "temperature": -1}"#,
        r#"{"do_sample": true, "temperature": 1e-300}"#,
        r#"{"do_sample": true, "temperature": 1e300}"#,
        r#"{"repetition_penalty": 0}"#,
        r#"{"repetition_penalty": 1e300}"#,
        r#"{"repetition_penalty": 1e-300}"#,
        r#"{"do_sample": "x"}"#,
        r#"{"num_beams": 4}"#,
        r#"{"num_beams": "x"}"#,
        r#"{"stop_strings": [""]}"#,
        r#"{"stop_strings": "x"}"#,
        r#"{"stop_strings": 5}"#,
        r###"{"stop_strings": ["\u0000", "##", "[SEP]"]}"###,
        r#"{"cache_implementation": "static"}"#,
        r#"{"cache_implementation": 5}"#,
        r#"{"no_repeat_ngram_size": 1}"#,
        r#"{"no_repeat_ngram_size": 1000000000000}"#,
        r#"{}"#,
        r#"[]"#,
        r#"null"#,
        r#"{"eos_token_id": "#,
    ];
    let mut cases: Vec<Case> = texts.iter().map(|t| Case::write(*t, g, t.as_bytes(), &[])).collect();
    cases.push(Case::write("generation_config.json garbage", g, vec![0xFF; 8], &[]));
    cases.push(Case::of("generation_config.json a folder", vec![Edit::MakeDir(g.into())], &[]));
    let every: Vec<i64> = (0..VOCAB).collect();
    let suppressed = json!({"suppress_tokens": every, "do_sample": true});
    cases.push(Case::write("every token suppressed, sampled", g, json_bytes(&suppressed), &[]));
    cases.push(Case::write(
        "stop string of 10000 characters",
        g,
        json_bytes(&json!({"stop_strings": ["a".repeat(10_000)]})),
        &[],
    ));
    cases
}

/// Reads the generation settings of `dir` as a service does and generates with them, batch 2
/// left-padded: the tokens are counted against the model's `max_position_embeddings`
/// (`max_positions`), a runaway a failure where `resolve_length` promised that cap.
fn exercise_generation(
    s: &mut Sweep,
    case: &str,
    dir: &Path,
    cfg: &Arc<Config>,
    model: &Arc<AutoModel>,
    tok: &Arc<HfTokenizer>,
    max_positions: usize,
) {
    let (d, c) = (dir.to_path_buf(), cfg.clone());
    let g = s.call(case, "GenerationConfig::from_model_dir", GENERATION_ANCHORS, move || {
        GenerationConfig::from_model_dir(&d, &c)
    });
    let Some(mut g) = g else { return };
    let capped = g.length_cap.is_some();
    let resolved = s.call(case, "GenerationConfig::resolve_length(3)", &["max_length"], move || {
        g.resolve_length(3)?;
        Ok(g)
    });
    let Some(g) = resolved else { return };
    let ids = Tensor::from_vec(vec![0i64, 5, 7, 4, 5, 6], [2, 3]).expect("prompts");
    let mask = Tensor::from_vec(vec![0i64, 1, 1, 1, 1, 1], [2, 3]).expect("a mask");
    let on_stop = if capped { OnStop::Failure } else { OnStop::Note };
    let gen = Gen { ids, mask: Some(mask), g, budget: 2 * max_positions, on_stop };
    run_generation(s, case, "generate_with_tokenizer(batch 2)", model, Some(tok), gen);
}

/// The corruptions of the sentence-transformers files of `sc` (a folder with `modules.json`).
fn sentence_cases(sc: &Scratch) -> Vec<Case> {
    let modules = original_json(sc, "modules.json");
    let set_module =
        |i: usize, k: &str, v: Value| json_bytes(&with_value(&modules, &[Seg::At(i), Seg::Key(k.into())], v));
    let m = "modules.json";
    let pooling = "1_Pooling/config.json";
    let st = "sentence_bert_config.json";
    let prompts = "config_sentence_transformers.json";
    let mut cases = vec![
        Case::write("modules.json truncated", m, half(&sc.original(m)), &[m]),
        Case::write("modules.json garbage", m, vec![0xFF; 8], &[m]),
        Case::write("modules.json an object", m, b"{}".to_vec(), &[]),
        Case::write("modules.json [5]", m, b"[5]".to_vec(), &[]),
        Case::write("a module of unknown type", m, set_module(1, "type", json!("Nope")), &[m]),
        Case::write("a module type that is a number", m, set_module(1, "type", json!(5)), &[m]),
        Case::write("the pooling path escaping", m, set_module(1, "path", json!("../../../../..")), &[]),
        Case::write(
            "the pooling path absolute",
            m,
            set_module(1, "path", json!("/nonexistent/robustness")),
            &[],
        ),
        Case::write("the pooling path a number", m, set_module(1, "path", json!(5)), &[]),
        Case::write(
            "a Dense module without its folder",
            m,
            set_module(1, "type", json!("sentence_transformers.models.Dense")),
            &["dense", "config.json"],
        ),
        Case::write(pooling, pooling, b"{\"pooling_mode\": ".to_vec(), &["Pooling"]),
        Case::of(format!("{pooling} removed"), vec![Edit::Remove(pooling.into())], &[]),
        Case::write(st, st, b"[1, 2".to_vec(), &[st]),
        Case::write(prompts, prompts, b"{\"prompts\": ".to_vec(), &[prompts]),
    ];
    for v in
        [json!("nope"), json!([5]), json!([]), json!(5), json!(["lasttoken", "cls", "weightedmean", "max"])]
    {
        let text = json_bytes(&json!({"pooling_mode": v, "include_prompt": true}));
        cases.push(Case::write(format!("pooling_mode {v}"), pooling, text, &["pooling"]));
    }
    for mode in ["cls", "lasttoken", "weightedmean", "max", "mean_sqrt_len_tokens"] {
        let text = json_bytes(&json!({"pooling_mode": mode, "include_prompt": false}));
        cases.push(Case::write(format!("pooling {mode} without the prompt"), pooling, text, &[]));
    }
    cases.push(Case::write(
        "include_prompt \"x\"",
        pooling,
        json_bytes(&json!({"include_prompt": "x"})),
        &["include_prompt"],
    ));
    for (key, v) in [
        ("max_seq_length", json!(0)),
        ("max_seq_length", json!(1)),
        ("max_seq_length", json!(2)),
        ("max_seq_length", json!(1000000000000u64)),
        ("max_seq_length", json!(-1)),
        ("max_seq_length", json!("x")),
        ("do_lower_case", json!("x")),
        ("processor_kwargs", json!({"model_max_length": 0})),
        ("processor_kwargs", json!({"model_max_length": "x"})),
    ] {
        let mut settings = Map::new();
        settings.insert(key.to_string(), v.clone());
        cases.push(Case::write(format!("{key}={v}"), st, json_bytes(&Value::Object(settings)), &[key]));
    }
    for (label, v) in [
        ("prompts a string", json!({"prompts": "x"})),
        ("a prompt that is a number", json!({"prompts": {"query": 5}})),
        ("default_prompt_name missing", json!({"prompts": {"query": "q: "}, "default_prompt_name": "nope"})),
        ("default_prompt_name a number", json!({"prompts": {}, "default_prompt_name": 5})),
        (
            "a long default prompt",
            json!({"prompts": {"query": "query: ".repeat(500)}, "default_prompt_name": "query"}),
        ),
    ] {
        cases.push(Case::write(label, prompts, json_bytes(&v), &["prompt"]));
    }
    cases
}

/// The corruptions of a sentence-transformers `Dense` module folder `dense` (`2_Dense`).
fn dense_cases(sc: &Scratch, dense: &str, rng: &mut Rng) -> Vec<Case> {
    let cfg_name = format!("{dense}/config.json");
    let cfg = original_json(sc, &cfg_name);
    let set = |k: &str, v: Value| json_bytes(&with_value(&cfg, &[Seg::Key(k.into())], v));
    let mut cases = Vec::new();
    for (key, v) in [
        ("in_features", json!(0)),
        ("in_features", json!(1000000000000u64)),
        ("in_features", json!("x")),
        ("out_features", json!(0)),
        ("out_features", json!(-1)),
        ("activation_function", json!("torch.nn.Nope")),
        ("activation_function", json!(5)),
        ("bias", json!("x")),
        ("bias", json!(false)),
        ("use_residual", json!(true)),
    ] {
        cases.push(Case::write(format!("{dense} {key}={v}"), &cfg_name, set(key, v), &[key, dense]));
    }
    let weights = format!("{dense}/model.safetensors");
    for case in safetensors_cases(&weights, &sc.original(&weights), rng).into_iter().step_by(3) {
        cases.push(Case { label: format!("{dense} {}", case.label), ..case });
    }
    cases
}

#[test]
fn corrupt_tokenizer_chat_generation_and_sentence_files_never_panic() {
    let root = ScratchRoot::new("text");
    let mut rng = Rng(SEED ^ 2);
    let mut s = Sweep::default();
    // tokenizer.json: the fixtures' tokenizers, and each of tests/fixtures/tokenizers alone (the
    // Llama one with the tokenizer_config.json that rebuilds its pipeline).
    let mut tokenizer_dirs =
        vec![Scratch::fixture(&root, "llama_tied"), Scratch::fixture(&root, "sentence_tiny")];
    let files = std::fs::read_dir(fixture("tokenizers")).expect("tests/fixtures/tokenizers");
    let mut names: Vec<String> =
        files.map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        let pristine = root.0.join(format!("pristine-{name}"));
        std::fs::create_dir_all(&pristine).expect("a pristine folder");
        std::fs::copy(fixture("tokenizers").join(&name), pristine.join("tokenizer.json"))
            .expect("a tokenizer");
        if name.contains("llama") {
            let config =
                r#"{"tokenizer_class": "LlamaTokenizerFast", "legacy": false, "add_prefix_space": true}"#;
            std::fs::write(pristine.join("tokenizer_config.json"), config).expect("a tokenizer config");
        }
        tokenizer_dirs.push(Scratch::copy_of(&root, &format!("tok-{name}"), &pristine));
    }
    for sc in &mut tokenizer_dirs {
        let what =
            format!("{} ", sc.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        exercise_tokenizer(&mut s, &format!("{what}(as it is)"), &sc.dir, &[]);
        let cases =
            tokenizer_cases(&original_json(sc, "tokenizer.json"), &sc.original("tokenizer.json"), &mut rng);
        for case in cases {
            sc.apply(&case.edits);
            exercise_tokenizer(&mut s, &format!("{what}{}", case.label), &sc.dir, &case.anchors());
            sc.reset();
        }
    }
    drop(tokenizer_dirs);
    // tokenizer_config.json and the chat template of llama_tied.
    let mut sc = Scratch::fixture(&root, "llama_tied");
    let cases = chat_and_tokenizer_config_cases(
        &original_json(&sc, "tokenizer_config.json"),
        &sc.original("tokenizer_config.json"),
    );
    for case in cases {
        sc.apply(&case.edits);
        let label = format!("llama_tied {}", case.label);
        exercise_tokenizer(&mut s, &label, &sc.dir, &case.anchors());
        run_chat(&mut s, &label, &sc.dir, &case.anchors());
        sc.reset();
    }
    // generation_config.json, with llama_tied loaded once.
    let dir = fixture("llama_tied");
    let loaded = s.call("llama_tied (as it is)", "load config, weights, model, tokenizer", &[], move || {
        let cfg = Config::load(&dir)?;
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None)?)?;
        Ok((Arc::new(cfg), Arc::new(model), Arc::new(HfTokenizer::load(&dir, None)?)))
    });
    if let Some((cfg, model, tok)) = loaded {
        exercise_generation(&mut s, "llama_tied (as it is)", &sc.dir, &cfg, &model, &tok, 64);
        for case in generation_config_cases() {
            sc.apply(&case.edits);
            let label = format!("llama_tied generation_config.json {}", case.label);
            exercise_generation(&mut s, &label, &sc.dir, &cfg, &model, &tok, 64);
            sc.reset();
        }
    }
    // sentence-transformers files.
    for name in ["sentence_tiny", "sentence_dense"] {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let mut cases = sentence_cases(&sc);
        if name == "sentence_dense" {
            cases.extend(dense_cases(&sc, "2_Dense", &mut rng));
        }
        for case in cases {
            sc.apply(&case.edits);
            run_sentence(
                &mut s,
                &format!("{name} {}", case.label),
                &sc.dir,
                &case.anchors(),
                pick_dtype(&mut rng),
            );
            sc.reset();
        }
    }
    s.finish("robustness tokenizer, chat, generation and sentence-transformers files sweep", 1500);
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// An int64 tensor.
fn ints(values: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).expect("an input")
}

/// A float32 tensor.
fn floats(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).expect("an input")
}

/// `t` cast to `dtype`.
fn cast(t: Tensor, dtype: DType) -> Tensor {
    t.to_dtype(dtype).expect("a cast input")
}

type Inputs = BTreeMap<String, Tensor>;

/// A named call of the API of `A` (closures coerce to the pointer).
type Call<A> = (&'static str, fn(&A) -> Result<()>);

fn named(pairs: Vec<(&str, Tensor)>) -> Inputs {
    pairs.into_iter().map(|(k, t)| (k.to_string(), t)).collect()
}

/// Hostile inputs of `forward_named` (the model's `max_position_embeddings` is `max_pos`).
fn forward_cases(max_pos: i64) -> Vec<(String, Inputs)> {
    let ids = || ints(&[1, 5, 7], &[1, 3]);
    let with = |name: &str, t: Tensor| named(vec![("input_ids", ids()), (name, t)]);
    let only = |t: Tensor| named(vec![("input_ids", t)]);
    let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
    let mut cases: Vec<(String, Inputs)> = vec![
        ("ids [1, 3]".into(), only(ids())),
        (format!("id {VOCAB} (past the vocabulary)"), only(ints(&[1, VOCAB, 7], &[1, 3]))),
        ("a negative id".into(), only(ints(&[1, -5, 7], &[1, 3]))),
        ("id i64::MAX".into(), only(ints(&[1, i64::MAX, 7], &[1, 3]))),
        ("id i64::MIN".into(), only(ints(&[i64::MIN, 5, 7], &[1, 3]))),
        ("an empty sequence".into(), only(ints(&[], &[1, 0]))),
        ("an empty batch".into(), only(ints(&[], &[0, 3]))),
        ("1-D ids".into(), only(ints(&[1, 5, 7], &[3]))),
        ("3-D ids".into(), only(ints(&[1, 5, 7], &[1, 1, 3]))),
        ("0-d ids".into(), only(ints(&[5], &[]))),
        ("300 ids".into(), only(ints(&long, &[1, 300]))),
        ("no input_ids".into(), named(vec![("attention_mask", ints(&[1, 1, 1], &[1, 3]))])),
        ("an unexpected input".into(), with("pixel_values", floats(&[0.0; 12], &[1, 1, 3, 4]))),
        ("a mask [1, 2]".into(), with("attention_mask", ints(&[1, 1], &[1, 2]))),
        ("a mask [1, 4]".into(), with("attention_mask", ints(&[1, 1, 1, 1], &[1, 4]))),
        ("a mask [2, 3]".into(), with("attention_mask", ints(&[1; 6], &[2, 3]))),
        ("a 1-D mask".into(), with("attention_mask", ints(&[1, 1, 1], &[3]))),
        ("a 3-D mask".into(), with("attention_mask", ints(&[1, 1, 1], &[1, 1, 3]))),
        ("an all-zero mask".into(), with("attention_mask", ints(&[0, 0, 0], &[1, 3]))),
        ("a mask of 5, -1, i64::MIN".into(), with("attention_mask", ints(&[5, -1, i64::MIN], &[1, 3]))),
        ("a float mask with NaN".into(), with("attention_mask", floats(&[1.0, f32::NAN, 0.5], &[1, 3]))),
        ("a bool mask".into(), with("attention_mask", cast(ints(&[1, 0, 1], &[1, 3]), DType::Bool))),
        ("positions past 10^9".into(), with("position_ids", ints(&[0, 1, 1_000_000_000], &[1, 3]))),
        (
            "positions past max_position_embeddings".into(),
            with("position_ids", ints(&[max_pos, max_pos + 1, max_pos + 2], &[1, 3])),
        ),
        ("negative positions".into(), with("position_ids", ints(&[0, -1, 2], &[1, 3]))),
        ("positions i64::MAX".into(), with("position_ids", ints(&[0, 1, i64::MAX], &[1, 3]))),
        ("positions i64::MIN".into(), with("position_ids", ints(&[i64::MIN, 0, 1], &[1, 3]))),
        ("1-D positions".into(), with("position_ids", ints(&[0, 1, 2], &[3]))),
        (
            "positions [2, 3] for a batch of 1".into(),
            with("position_ids", ints(&[0, 1, 2, 0, 1, 2], &[2, 3])),
        ),
        ("positions [1, 2]".into(), with("position_ids", ints(&[0, 1], &[1, 2]))),
        ("float positions".into(), with("position_ids", floats(&[0.5, f32::NAN, f32::INFINITY], &[1, 3]))),
        ("bool positions".into(), with("position_ids", cast(ints(&[0, 1, 1], &[1, 3]), DType::Bool))),
        ("u8 positions".into(), with("position_ids", cast(ints(&[0, 1, 2], &[1, 3]), DType::U8))),
        ("token types out of range".into(), with("token_type_ids", ints(&[0, 5, 1], &[1, 3]))),
        ("negative token types".into(), with("token_type_ids", ints(&[-1, 0, 0], &[1, 3]))),
        ("token types [1, 2]".into(), with("token_type_ids", ints(&[0, 0], &[1, 2]))),
        ("float token types".into(), with("token_type_ids", floats(&[0.0; 3], &[1, 3]))),
        (
            "a left-padded batch of 2".into(),
            named(vec![
                ("input_ids", ints(&[0, 5, 7, 4, 5, 6], &[2, 3])),
                ("attention_mask", ints(&[0, 1, 1, 1, 1, 1], &[2, 3])),
            ]),
        ),
        (
            "a batch of 2 with one row fully masked".into(),
            named(vec![
                ("input_ids", ints(&[0, 5, 7, 4, 5, 6], &[2, 3])),
                ("attention_mask", ints(&[0, 0, 0, 1, 1, 1], &[2, 3])),
                ("position_ids", ints(&[0, 1, 2], &[1, 3])),
            ]),
        ),
    ];
    for dtype in [
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::Bool,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ] {
        cases.push((format!("ids of dtype {dtype:?}"), only(cast(ids(), dtype))));
    }
    cases
}

/// Hostile generations (prompt, mask, settings) of a decoder; `tokenizer`: it has one.
fn generate_cases(tokenizer: bool) -> Vec<(String, Gen)> {
    let base = GenerationConfig { max_new_tokens: 3, ..GenerationConfig::default() };
    let g = |f: fn(&mut GenerationConfig)| {
        let mut g = base.clone();
        f(&mut g);
        g
    };
    let sampled = |f: fn(&mut GenerationConfig)| {
        let mut g = GenerationConfig { do_sample: true, seed: 35, ..base.clone() };
        f(&mut g);
        g
    };
    let ids = || ints(&[1, 5, 7], &[1, 3]);
    let batch = || ints(&[0, 5, 7, 4, 5, 6], &[2, 3]);
    let padded = || Some(ints(&[0, 1, 1, 1, 1, 1], &[2, 3]));
    let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
    let mut huge = Gen::new(ids(), None, g(|g| g.max_new_tokens = 1 << 40));
    (huge.budget, huge.on_stop) = (8, OnStop::Fine);
    // Asked for explicitly, with no `length_cap`: transformers generates them too.
    let mut almost_max = Gen::new(ids(), None, g(|g| g.max_new_tokens = usize::MAX - 3));
    (almost_max.budget, almost_max.on_stop) = (8, OnStop::Fine);
    let mut cases = vec![
        ("max_new_tokens 0".to_string(), Gen::new(ids(), None, g(|g| g.max_new_tokens = 0))),
        ("max_new_tokens usize::MAX".into(), Gen::new(ids(), None, g(|g| g.max_new_tokens = usize::MAX))),
        ("max_new_tokens usize::MAX - 3 (the first 8 tokens)".into(), almost_max),
        ("max_new_tokens 2^40 (the first 8 tokens)".into(), huge),
        ("a prompt of 300 tokens".into(), Gen::new(ints(&long, &[1, 300]), None, base.clone())),
        (
            "a prompt id past the vocabulary".into(),
            Gen::new(ints(&[1, VOCAB, 7], &[1, 3]), None, base.clone()),
        ),
        ("a negative prompt id".into(), Gen::new(ints(&[1, -1, 7], &[1, 3]), None, base.clone())),
        ("an empty prompt".into(), Gen::new(ints(&[], &[1, 0]), None, base.clone())),
        ("an empty batch".into(), Gen::new(ints(&[], &[0, 3]), None, base.clone())),
        ("a 1-D prompt".into(), Gen::new(ints(&[1, 5, 7], &[3]), None, base.clone())),
        ("a float prompt".into(), Gen::new(floats(&[1.0, 5.0, 7.0], &[1, 3]), None, base.clone())),
        ("a mask [1, 2]".into(), Gen::new(ids(), Some(ints(&[1, 1], &[1, 2])), base.clone())),
        ("an all-zero mask".into(), Gen::new(ids(), Some(ints(&[0, 0, 0], &[1, 3])), base.clone())),
        (
            "a float mask with NaN".into(),
            Gen::new(ids(), Some(floats(&[f32::NAN, 1.0, 1.0], &[1, 3])), base.clone()),
        ),
        ("a left-padded batch of 2".into(), Gen::new(batch(), padded(), base.clone())),
        (
            "a batch of 2 with one row fully masked".into(),
            Gen::new(batch(), Some(ints(&[0, 0, 0, 1, 1, 1], &[2, 3])), base.clone()),
        ),
        (
            "a static cache, batch of 2".into(),
            Gen::new(
                batch(),
                padded(),
                g(|g| g.cache_implementation = oxtorch_hf_import::CacheImplementation::Static),
            ),
        ),
        (
            "a static cache, 40 tokens".into(),
            Gen::new(
                ids(),
                None,
                g(|g| {
                    g.cache_implementation = oxtorch_hf_import::CacheImplementation::Static;
                    g.max_new_tokens = 40;
                }),
            ),
        ),
        ("temperature NaN".into(), Gen::new(ids(), None, sampled(|g| g.temperature = f64::NAN))),
        ("temperature 0".into(), Gen::new(ids(), None, sampled(|g| g.temperature = 0.0))),
        ("temperature -1".into(), Gen::new(ids(), None, sampled(|g| g.temperature = -1.0))),
        ("temperature inf".into(), Gen::new(ids(), None, sampled(|g| g.temperature = f64::INFINITY))),
        ("temperature 1e-30".into(), Gen::new(ids(), None, sampled(|g| g.temperature = 1e-30))),
        ("top_p NaN".into(), Gen::new(ids(), None, sampled(|g| g.top_p = f64::NAN))),
        ("top_p 0".into(), Gen::new(ids(), None, sampled(|g| g.top_p = 0.0))),
        ("min_p NaN".into(), Gen::new(ids(), None, sampled(|g| g.min_p = f64::NAN))),
        ("min_p 1".into(), Gen::new(ids(), None, sampled(|g| g.min_p = 1.0))),
        ("top_k usize::MAX".into(), Gen::new(ids(), None, sampled(|g| g.top_k = usize::MAX))),
        ("top_k 1".into(), Gen::new(ids(), None, sampled(|g| g.top_k = 1))),
        ("repetition_penalty NaN".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = f64::NAN))),
        ("repetition_penalty 0".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = 0.0))),
        ("repetition_penalty 1e-30".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = 1e-30))),
        ("seed u64::MAX".into(), Gen::new(ids(), None, sampled(|g| g.seed = u64::MAX))),
        (
            "EOS ids i64::MIN, -1, i64::MAX".into(),
            Gen::new(ids(), None, g(|g| g.eos_token_ids = vec![i64::MIN, -1, i64::MAX])),
        ),
        (
            "pad id i64::MIN, every token an EOS".into(),
            Gen::new(
                batch(),
                padded(),
                g(|g| {
                    g.pad_token_id = Some(i64::MIN);
                    g.eos_token_ids = (0..VOCAB).collect();
                }),
            ),
        ),
        (
            "every token suppressed".into(),
            Gen::new(ids(), None, g(|g| g.suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "every token suppressed, sampled".into(),
            Gen::new(ids(), None, sampled(|g| g.suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "every token suppressed first".into(),
            Gen::new(ids(), None, g(|g| g.begin_suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "forced EOS ids -1, i64::MAX".into(),
            Gen::new(ids(), None, g(|g| g.forced_eos_token_ids = vec![-1, i64::MAX])),
        ),
        (
            "bad words [[i64::MAX], [1..8]]".into(),
            Gen::new(ids(), None, g(|g| g.bad_words_ids = vec![vec![i64::MAX], (1..9).collect()])),
        ),
        ("no_repeat_ngram_size 1".into(), Gen::new(ids(), None, g(|g| g.no_repeat_ngram_size = 1))),
        (
            "no_repeat_ngram_size usize::MAX".into(),
            Gen::new(ids(), None, g(|g| g.no_repeat_ngram_size = usize::MAX)),
        ),
        (
            "min_new_tokens usize::MAX".into(),
            Gen::new(
                ids(),
                None,
                g(|g| {
                    g.min_new_tokens = usize::MAX;
                    g.eos_token_ids = vec![2];
                }),
            ),
        ),
        ("an empty stop string".into(), Gen::new(ids(), None, g(|g| g.stop_strings = vec![String::new()]))),
    ];
    let stops = [
        ("a stop string", vec!["x".to_string()]),
        ("odd stop strings", vec!["\u{0}".into(), "##".into(), "a".repeat(10_000)]),
    ];
    for (label, strings) in stops {
        let mut g = base.clone();
        g.stop_strings = strings;
        // Without a tokenizer, `generate` refuses stop strings.
        let label = if tokenizer { label.to_string() } else { format!("{label} without a tokenizer") };
        cases.push((label, Gen::new(ids(), None, g)));
    }
    cases
}

/// The model's `max_position_embeddings` (at the top of the config or in `text_config`).
fn max_positions(cfg: &Config) -> usize {
    let nested =
        cfg.get("text_config").and_then(|t| t.get("max_position_embeddings")).and_then(Value::as_u64);
    cfg.get("max_position_embeddings").and_then(Value::as_u64).or(nested).unwrap_or(64) as usize
}

/// The decoder API below `forward_named` with hostile caches and positions.
fn causal_lm_cases(s: &mut Sweep, case: &str, model: &Arc<AutoModel>) {
    let calls: &[Call<CausalLm>] = &[
        ("forward with a KV cache of another layer count", |lm| {
            let mut cache = KvCache::new(lm.num_layers() + 1);
            lm.forward(&prompt()?, None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a KV cache then another batch size", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            lm.forward(&ints(&[1, 2, 3, 4], &[2, 2]), None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward of 40 tokens into a fixed cache of 1", |lm| {
            let mut cache = KvCache::fixed(lm.num_layers(), 1);
            let ids: Vec<i64> = (0..40).collect();
            lm.forward(&ints(&ids, &[1, 40]), None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward into a cache of 2^52 slots", |lm| {
            let mut cache = KvCache::with_capacity(lm.num_layers(), 1 << 52);
            lm.forward(&prompt()?, None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a cache and a mask of the wrong width", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            let mask = ints(&[1; 9], &[1, 9]);
            lm.forward(&ints(&[4], &[1, 1]), Some(&mask), None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a cache and positions of the wrong shape", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            let pos = ints(&[3, 4], &[1, 2]);
            lm.forward(&ints(&[4], &[1, 1]), None, Some(&pos), Some(&mut cache), false).map(drop)
        }),
        ("logits_at(3) of 3 tokens", |lm| lm.logits_at(&prompt()?, None, None, None, 3).map(drop)),
        ("logits_at(usize::MAX)", |lm| lm.logits_at(&prompt()?, None, None, None, usize::MAX).map(drop)),
        ("logits_at with positions past 10^9", |lm| {
            let pos = ints(&[1_000_000_000, 1_000_000_001, i64::MAX], &[1, 3]);
            lm.logits_at(&prompt()?, None, Some(&pos), None, 2).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = model.clone();
        s.call(case, call, &[], move || f(decoder(&m)?));
    }
}

/// Hostile inputs of the encoder API below `forward_named`.
fn encoder_cases(s: &mut Sweep, case: &str, model: &Arc<AutoModel>) {
    let calls: &[Call<AutoModel>] = &[
        ("last_hidden_state with a mask [1, 2]", |m| {
            m.last_hidden_state(&prompt()?, Some(&ints(&[1, 1], &[1, 2])), None).map(drop)
        }),
        ("last_hidden_state with token types out of range", |m| {
            m.last_hidden_state(&prompt()?, None, Some(&ints(&[0, 9, 1], &[1, 3]))).map(drop)
        }),
        ("last_hidden_state with float token types", |m| {
            m.last_hidden_state(&prompt()?, None, Some(&floats(&[0.0; 3], &[1, 3]))).map(drop)
        }),
        ("last_hidden_state of 300 ids", |m| {
            let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
            m.last_hidden_state(&ints(&long, &[1, 300]), None, None).map(drop)
        }),
        ("last_hidden_state of ids [1, 0]", |m| {
            m.last_hidden_state(&ints(&[], &[1, 0]), None, None).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = model.clone();
        s.call(case, call, &[], move || f(&m));
    }
}

/// Hostile inputs of a sentence-transformers model and of the pooling functions.
fn sentence_input_cases(s: &mut Sweep, case: &str, st: &Arc<SentenceTransformer>) {
    let words = "word ".repeat(20_000);
    let texts: [(&str, Vec<String>); 4] = [
        ("encode of no texts", vec![]),
        ("encode of an empty text", vec![String::new()]),
        ("encode of 20000 words", vec![words]),
        ("encode of odd characters", vec!["\u{0}\u{FFFD}\u{1F600} [CLS] [SEP] [PAD] ##".into()]),
    ];
    for (call, texts) in texts {
        let m = st.clone();
        s.call(case, call, &[], move || m.encode(&texts.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    let calls: &[Call<SentenceTransformer>] = &[
        ("encode_with_prompt of an unknown prompt name", |m| {
            m.encode_with_prompt(&["a"], None, Some("nope")).map(drop)
        }),
        ("encode_with_prompt of a long prompt", |m| {
            m.encode_with_prompt(&["a"], Some(&"query: ".repeat(1000)), None).map(drop)
        }),
        ("embed_ids with a mask [1, 2]", |m| {
            m.embed_ids(&prompt()?, &ints(&[1, 1], &[1, 2]), None).map(drop)
        }),
        ("embed_ids with a 1-D mask", |m| m.embed_ids(&prompt()?, &ints(&[1, 1, 1], &[3]), None).map(drop)),
        ("embed_ids with an all-zero mask", |m| {
            m.embed_ids(&prompt()?, &ints(&[0, 0, 0], &[1, 3]), None).map(drop)
        }),
        ("embed_ids with a NaN mask", |m| {
            m.embed_ids(&prompt()?, &floats(&[f32::NAN, 1.0, 0.0], &[1, 3]), None).map(drop)
        }),
        ("embed_ids of 1-D ids", |m| {
            m.embed_ids(&ints(&[1, 5, 7], &[3]), &ints(&[1, 1, 1], &[3]), None).map(drop)
        }),
        ("embed_ids of ids [0, 0]", |m| {
            m.embed_ids(&ints(&[], &[0, 0]), &ints(&[], &[0, 0]), None).map(drop)
        }),
        ("embed_ids of ids past the vocabulary", |m| {
            m.embed_ids(&ints(&[1, VOCAB, 7], &[1, 3]), &ints(&[1, 1, 1], &[1, 3]), None).map(drop)
        }),
        ("embed_ids with token types out of range", |m| {
            m.embed_ids(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), Some(&ints(&[0, 7, -1], &[1, 3]))).map(drop)
        }),
        ("embed_ids_after_prompt(usize::MAX)", |m| {
            m.embed_ids_after_prompt(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), None, usize::MAX).map(drop)
        }),
        ("embed_ids_after_prompt(2^40)", |m| {
            m.embed_ids_after_prompt(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), None, 1 << 40).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = st.clone();
        s.call(case, call, &[], move || f(&m));
    }
}

/// Every pooling mode on token embeddings and masks of the wrong rank or shape.
fn pooling_cases(s: &mut Sweep) {
    let modes = [
        PoolingMode::Cls,
        PoolingMode::Max,
        PoolingMode::Mean,
        PoolingMode::MeanSqrtLen,
        PoolingMode::LastToken,
        PoolingMode::WeightedMean,
    ];
    let shapes: [(&str, &[usize], &[usize]); 6] = [
        ("tokens [2, 3, 4], mask [2, 3]", &[2, 3, 4], &[2, 3]),
        ("tokens [2, 4] (rank 2)", &[2, 4], &[2, 4]),
        ("tokens [4] (rank 1)", &[4], &[1, 4]),
        ("tokens [2, 3, 4], mask [2, 5]", &[2, 3, 4], &[2, 5]),
        ("tokens [2, 3, 4], mask [3]", &[2, 3, 4], &[3]),
        ("tokens [0, 3, 4], mask [0, 3]", &[0, 3, 4], &[0, 3]),
    ];
    for mode in modes {
        for (label, tokens, mask) in shapes {
            let (tokens, mask) = (tokens.to_vec(), mask.to_vec());
            s.call("PoolingMode", &format!("{mode:?}.pool({label})"), &[], move || {
                let t = Tensor::ones(tokens.as_slice(), DType::F32)?;
                let m = Tensor::ones(mask.as_slice(), DType::I64)?;
                mode.pool(&t, &m)
            });
        }
    }
}

/// Hostile chat messages rendered with a model's template.
fn chat_input_cases(s: &mut Sweep, case: &str, template: &Arc<ChatTemplate>) {
    let tools = json!([{"type": "function", "function": {"name": 5, "parameters": [1, {"a": null}]}}]);
    let messages: [(&str, Value); 10] = [
        ("messages that are a number", json!(5)),
        ("no messages", json!([])),
        ("a message without a role", json!([{"content": "x"}])),
        ("a role that is a number", json!([{"role": 5, "content": "x"}])),
        ("an unknown role", json!([{"role": "robot", "content": "x"}])),
        ("content null", json!([{"role": "user", "content": null}])),
        ("content a number", json!([{"role": "user", "content": 5}])),
        (
            "content a list of parts",
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]}]),
        ),
        (
            "content nested 100 deep",
            json!([{"role": "user", "content": serde_json::from_str::<Value>(&deep_nesting(100)).expect("nested lists")}]),
        ),
        (
            "tool calls",
            json!([{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}]),
        ),
    ];
    for (call, messages) in messages {
        let (t, tools) = (template.clone(), tools.clone());
        s.call(case, &format!("ChatTemplate::render_json({call})"), &["chat"], move || {
            let args = ChatArgs { add_generation_prompt: true, tools: Some(&tools), ..ChatArgs::default() };
            t.render_json(&messages, &args)
        });
    }
}

#[test]
fn hostile_inputs_never_panic() {
    let mut s = Sweep::default();
    let decoders =
        ["llama_tied", "phi3_longrope", "gemma3", "gemma3_mm", "qwen2_yarn", "llama_dynamic", "mistral"];
    let encoders = ["bert", "roberta", "distilbert_mlm"];
    for name in decoders.iter().chain(&encoders) {
        let dir = fixture(name);
        let case = format!("{name} input");
        let loaded = s.call(name, "load config and model", &[], move || {
            let cfg = Config::load(&dir)?;
            let model = AutoModel::load(&cfg, &Weights::load(&dir, None)?)?;
            let tok = if dir.join("tokenizer.json").is_file() {
                Some(Arc::new(HfTokenizer::load(&dir, None)?))
            } else {
                None
            };
            Ok((Arc::new(cfg), Arc::new(model), tok))
        });
        let Some((cfg, model, tok)) = loaded else { continue };
        let max_pos = max_positions(&cfg);
        for (label, inputs) in forward_cases(max_pos as i64) {
            let m = model.clone();
            s.call(&case, &format!("forward_named({label})"), &[], move || m.forward_named(&inputs, true));
        }
        if model.causal_lm().is_none() {
            encoder_cases(&mut s, &case, &model);
            continue;
        }
        causal_lm_cases(&mut s, &case, &model);
        // The full set of generations on three decoders, a few on the others.
        let all = matches!(*name, "llama_tied" | "phi3_longrope" | "gemma3");
        for (i, (label, gen)) in generate_cases(tok.is_some()).into_iter().enumerate() {
            if all || i.is_multiple_of(8) {
                run_generation(&mut s, &case, &format!("generate({label})"), &model, tok.as_ref(), gen);
            }
        }
        // As a service bounds a generation: the settings of the model folder, a huge
        // max_new_tokens, and `resolve_length`, which caps the length at max_position_embeddings.
        for (label, max_new, prompt_len) in
            [("2^40", 1usize << 40, 3usize), ("usize::MAX", usize::MAX, 3), ("20", 20, 300)]
        {
            let (d, c) = (fixture(name), cfg.clone());
            let call = format!("from_model_dir, max_new_tokens {label}, resolve_length({prompt_len})");
            let g = s.call(&case, &call, &["max_length"], move || {
                let mut g = GenerationConfig::from_model_dir(&d, &c)?;
                g.max_new_tokens = max_new;
                g.resolve_length(prompt_len)?;
                Ok(g)
            });
            if let Some(g) = g {
                let ids: Vec<i64> = (0..prompt_len as i64).map(|i| i % VOCAB).collect();
                let gen = Gen {
                    ids: ints(&ids, &[1, prompt_len]),
                    mask: None,
                    g,
                    budget: max_pos,
                    on_stop: OnStop::Failure,
                };
                run_generation(&mut s, &case, &format!("generate after {call}"), &model, tok.as_ref(), gen);
            }
        }
        // Phi-3 recomputes its cache past its original length (8): cross it, batch of 2.
        if *name == "phi3_longrope" {
            let g = GenerationConfig { max_new_tokens: 12, ..GenerationConfig::default() };
            let gen =
                Gen::new(ints(&[0, 5, 7, 4, 5, 6], &[2, 3]), Some(ints(&[0, 1, 1, 1, 1, 1], &[2, 3])), g);
            run_generation(
                &mut s,
                &case,
                "generate(12 tokens across the cache recompute)",
                &model,
                None,
                gen,
            );
        }
    }
    // Tokenizer, chat template and sentence-transformers inputs.
    let dir = fixture("llama_tied");
    let tok = s.call("llama_tied", "HfTokenizer::load", &[], move || HfTokenizer::load(&dir, None));
    if let Some(tok) = tok.map(Arc::new) {
        let calls: &[Call<HfTokenizer>] = &[
            ("encode of an empty text", |t| t.encode("", true).map(drop)),
            ("encode of 1 MB", |t| t.encode(&"ab ".repeat(350_000), true).map(drop)),
            ("encode_batch of no texts", |t| t.encode_batch(&[]).map(drop)),
            ("decode of no ids", |t| t.decode(&[], true).map(drop)),
            ("decode of u32::MAX", |t| t.decode(&[u32::MAX, u32::MAX - 1], false).map(drop)),
            ("decode of special ids only, skipped", |t| t.decode(&[0, 2, 3], true).map(drop)),
        ];
        for (call, f) in calls {
            let t = tok.clone();
            s.call("llama_tied tokenizer", call, &[], move || f(&t));
        }
    }
    let dir = fixture("llama_tied");
    let template =
        s.call("llama_tied", "ChatTemplate::from_model_dir", &[], move || ChatTemplate::from_model_dir(&dir));
    if let Some(Some(template)) = template {
        chat_input_cases(&mut s, "llama_tied chat", &Arc::new(template));
    }
    for name in ["sentence_tiny", "sentence_dense"] {
        let dir = fixture(name);
        let st =
            s.call(name, "SentenceTransformer::load", &[], move || SentenceTransformer::load(&dir, None));
        if let Some(st) = st {
            sentence_input_cases(&mut s, &format!("{name} input"), &Arc::new(st));
        }
    }
    pooling_cases(&mut s);
    s.finish("robustness hostile inputs sweep", 700);
}

// ---------------------------------------------------------------------------------------------
// Errors stay on one line

/// Values holding a line break, where hf-import quotes them in an error: every such error must
/// still be one line (a service logs one line per failure; a log line must not be forgeable).
#[test]
fn errors_stay_on_one_line_with_line_breaks_in_values() {
    let root = ScratchRoot::new("lines");
    let mut rng = Rng(SEED ^ 3);
    let mut s = Sweep::default();
    let nl = |v: &str| json!(format!("{v}\nrobust35: forged line"));
    let config_case = |sc: &Scratch, path: &[&str], v: Value| {
        let path: JsonPath = path.iter().map(|k| Seg::Key(k.to_string())).collect();
        let json = with_value(&original_json(sc, "config.json"), &path, v);
        Case::write(format!("{}=<a line break>", path_label(&path)), "config.json", json_bytes(&json), &[])
    };
    let mut sc = Scratch::fixture(&root, "llama_tied");
    let mut cases = vec![
        config_case(&sc, &["model_type"], nl("llama")),
        config_case(&sc, &["architectures"], json!(["Llama\nForCausalLM"])),
        config_case(&sc, &["hidden_act"], nl("silu")),
        config_case(&sc, &["rope_parameters", "rope_type"], nl("default")),
        Case::write(
            "tokenizer.json version",
            "tokenizer.json",
            json_bytes(&with_value(
                &original_json(&sc, "tokenizer.json"),
                &[Seg::Key("version".into())],
                nl("1.0"),
            )),
            &[],
        ),
        Case::write(
            "chat template raising a line break",
            "chat_template.jinja",
            "{{ raise_exception('bad\\nrobust35: forged line') }}",
            &[],
        ),
    ];
    let (mut entries, meta) = read_st(&sc.original("model.safetensors"));
    let pick = rng.below(entries.len());
    entries[pick].name = "model.bad\nrobust35: forged line".into();
    entries[pick].dtype = "F8_E4M3".into();
    entries[pick].data = vec![0; entries[pick].numel()];
    cases.push(Case::write(
        "a tensor name with a line break",
        "model.safetensors",
        st_bytes(&entries, meta.as_ref()),
        &[],
    ));
    sweep_cases(&mut s, &mut rng, &mut sc, "llama_tied", cases);
    let dir = fixture("llama_tied");
    let template =
        s.call("llama_tied", "ChatTemplate::from_model_dir", &[], move || ChatTemplate::from_model_dir(&dir));
    if let Some(Some(template)) = template {
        s.call("llama_tied chat", "render(a role with a line break)", &[], move || {
            template.render(&[Message::new("user\nrobust35: forged line", "hi")], true)
        });
    }
    let mut sc = Scratch::fixture(&root, "bert");
    let cases = vec![config_case(&sc, &["position_embedding_type"], nl("absolute"))];
    sweep_cases(&mut s, &mut rng, &mut sc, "bert", cases);
    let mut sc = Scratch::fixture(&root, "sentence_dense");
    let modules = original_json(&sc, "modules.json");
    let cases = vec![
        Case::write(
            "pooling_mode",
            "1_Pooling/config.json",
            json_bytes(&json!({"pooling_mode": nl("mean")})),
            &[],
        ),
        Case::write(
            "a module type",
            "modules.json",
            json_bytes(&with_value(&modules, &[Seg::At(2), Seg::Key("type".into())], nl("Nope"))),
            &[],
        ),
        Case::write(
            "a Dense activation",
            "2_Dense/config.json",
            json_bytes(&with_value(
                &original_json(&sc, "2_Dense/config.json"),
                &[Seg::Key("activation_function".into())],
                nl("Nope"),
            )),
            &[],
        ),
    ];
    sweep_cases(&mut s, &mut rng, &mut sc, "sentence_dense", cases);
    let dir = fixture("sentence_tiny");
    let st = s.call("sentence_tiny", "SentenceTransformer::load", &[], move || {
        SentenceTransformer::load(&dir, None)
    });
    if let Some(st) = st {
        s.call(
            "sentence_tiny input",
            "encode_with_prompt(a prompt name with a line break)",
            &[],
            move || st.encode_with_prompt(&["a"], None, Some("nope\nrobust35: forged line")),
        );
    }
    s.finish("robustness one-line errors", 20);
}

/// Chat templates that ask for allocations no service survives: `tojson` indents of `i64::MAX`
/// and 10^12 spaces (refused above 1024 characters), and list repetition whose length overflows
/// (minijinja's arithmetic, contained by `render_json`).
#[test]
fn template_allocation_bombs_are_refused() {
    let mut s = Sweep::default();
    for (label, source) in [
        ("tojson indented i64::MAX", "{{ messages | tojson(indent=9223372036854775807) }}"),
        ("tojson indented 10^12", "{{ messages | tojson(indent=1000000000000) }}"),
        ("tojson indented by a long string", "{{ messages | tojson(indent='          ' * 200) }}"),
        ("a list repeated i64::MAX times", "{{ ([1, 2, 3] * 9223372036854775807) | length }}"),
    ] {
        let template = ChatTemplate::new(source, "<s>", "</s>");
        s.call("chat template", label, &["chat template"], move || {
            template.render(&[Message::new("user", "hi")], true)
        });
    }
    s.finish("robustness template allocation bombs", 4);
}
