//! What every golden test does around its cases: read the golden file and its cases' metadata,
//! and run the cases with their panics caught and kept quiet.
//!
//! The golden tests share one test binary and run on concurrent threads, so the panic hook is
//! never swapped per test (two tests swapping it in turn can leave it silenced for good): one hook,
//! installed once, stays quiet on the threads that are inside [`quietly`] and reports as before on
//! every other thread.

use std::any::Any;
use std::cell::Cell;
use std::collections::BTreeMap;

use safetensors::SafeTensors;

use oxtorch_tensor::Tensor;

use super::{tensor_of, Json};

/// A golden file: its bytes and each case's metadata (case name → JSON).
pub struct Golden {
    bytes: Vec<u8>,
    cases: BTreeMap<String, Json>,
}

impl Golden {
    /// Reads the golden file at `path`, written by the dev-time `script`; panics naming both when
    /// the file is missing or malformed, or holds fewer than `min_cases` cases (a truncated file or
    /// a metadata mix-up).
    pub fn read(path: &str, script: &str, min_cases: usize) -> Golden {
        let bytes = std::fs::read(path)
            .unwrap_or_else(|e| panic!("cannot read {path} ({e}); regenerate it with {script}"));
        let (_, header) = SafeTensors::read_metadata(&bytes)
            .unwrap_or_else(|e| panic!("{path}: not a safetensors file ({e}); regenerate it with {script}"));
        let cases: BTreeMap<String, Json> = header
            .metadata()
            .as_ref()
            .unwrap_or_else(|| panic!("{path} has no case metadata; regenerate it with {script}"))
            .iter()
            .map(|(k, v)| {
                (k.clone(), Json::parse(v).unwrap_or_else(|e| panic!("{path}: metadata of {k}: {e}")))
            })
            .collect();
        assert!(
            cases.len() >= min_cases,
            "only {} cases in {path}, expected at least {min_cases}",
            cases.len()
        );
        Golden { bytes, cases }
    }

    /// The file's tensors: each case's inputs and torch's outputs.
    pub fn tensors(&self) -> SafeTensors<'_> {
        SafeTensors::deserialize(&self.bytes).expect("a safetensors file (its header was read)")
    }

    /// Each case's metadata by case name, in name order.
    pub fn cases(&self) -> BTreeMap<&str, &Json> {
        self.cases.iter().map(|(name, meta)| (name.as_str(), meta)).collect()
    }
}

thread_local! {
    /// Whether this thread's panics are expected, caught and reported by the test itself.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread's panic messages unprinted: a golden test catches each case's panic
/// and reports it as that case's failure, so the default hook's line per panic is only noise.
/// Other threads (other tests) keep the hook as it was.
pub fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    /// Puts the thread's previous state back, also when `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(self.0));
        }
    }
    let _restore = Restore(QUIET.with(|q| q.replace(true)));
    f()
}

/// The `n_in` stored inputs of case `name` (`{name}.in{i}`), each seen through the view its
/// metadata names (`in{i}_view`, none when absent) as `view` makes it.
pub fn case_inputs(
    st: &SafeTensors<'_>,
    name: &str,
    meta: &Json,
    n_in: usize,
    view: fn(Tensor, Option<&str>) -> oxtorch_tensor::Result<Tensor>,
) -> Result<Vec<Tensor>, String> {
    (0..n_in)
        .map(|i| {
            let stored =
                st.tensor(&format!("{name}.in{i}")).map_err(|e| format!("missing input {i}: {e}"))?;
            view(tensor_of(&stored), meta.get(&format!("in{i}_view")).and_then(Json::as_str))
                .map_err(|e| format!("applying the view to input {i}: {e}"))
        })
        .collect()
}

/// The non-contiguous view of a stored input that a case names: `transpose` (dims 0 and 1), `step`
/// (every other element of the last dim) or `expand` (to `[3, 4]`).
pub fn strided_view(t: Tensor, view: Option<&str>) -> oxtorch_tensor::Result<Tensor> {
    let v = match view {
        None => return Ok(t),
        Some("transpose") => t.transpose(0, 1)?,
        Some("step") => t.slice(-1, .., 2)?,
        Some("expand") => t.expand([3, 4])?,
        Some(other) => panic!("unknown view {other}"),
    };
    assert!(
        !v.is_contiguous() && v.shares_storage(&t),
        "a '{}' view must be a non-contiguous view",
        view.unwrap()
    );
    Ok(v)
}

/// The message a caught panic carried (empty when its payload is not a string).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Whether this thread's panics are unprinted right now.
fn is_quiet() -> bool {
    QUIET.with(Cell::get)
}

#[test]
fn quietly_is_scoped_to_its_thread_and_call_and_survives_a_panic() {
    assert!(!is_quiet());
    let caught = quietly(|| {
        assert!(is_quiet());
        // Another thread (another test) is not quieted.
        assert!(!std::thread::spawn(is_quiet).join().unwrap());
        // Nested calls keep the outer state when they end.
        quietly(|| assert!(is_quiet()));
        assert!(is_quiet());
        std::panic::catch_unwind(|| quietly(|| panic!("a case's panic")))
    });
    assert_eq!(panic_message(&*caught.unwrap_err()), "a case's panic");
    assert!(!is_quiet(), "the thread stays quiet after a panic inside `quietly`");
}
