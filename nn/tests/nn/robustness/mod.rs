//! A robustness sweep of the nn crate's Result-returning API under adversarial arguments: a
//! service embedding oxtorch must get `Ok` or `Err` from every call, never a panic, an abort (a
//! huge allocation), an integer overflow or a hang. A seeded SplitMix64 draws small inputs of
//! every dtype (f16/bf16, ints, bool), shape (0-d, empty, small batches) and layout (contiguous,
//! transposed, expanded, strided) and feeds `nn::functional` (convolutions, pools, resampling,
//! padding, normalisations, embeddings, activations and dropout, attention, RNN cells and
//! sequences, distances), the losses, module constructors and forward passes, the optimizers,
//! the LR schedulers and the state dicts with zero/overflowing sizes, out-of-range indices,
//! NaN/inf/negative hyper-parameters, bad strings and mismatched shapes and dtypes. Each section
//! is drawn *tame* (valid arguments, so that the computation itself runs on odd dtypes, layouts
//! and values) or *wild* (adversarial everywhere) at random; `pinned` adds fixed overflow cases.
//!
//! Each call runs under `catch_unwind`; every panic is collected with the call's number, its
//! arguments (each input as `dtype[shape]/layout <storage values>`, enough to rebuild it: see
//! [`make`]; the number with the fixed seed replays it) and where it was raised, and one assert
//! at the end lists them all. Errors must carry a non-empty, single-line message (but
//! `load_state_dict`'s report, several lines in torch too). `ROBUSTNESS_TRACE=1` prints every call
//! before it runs (with `--nocapture`, the last line names the culprit of an abort or a hang).
//!
//! Huge sizes in the main sweep are chosen so that the element count overflows `usize` (or the
//! byte count exceeds `isize::MAX`), which a size check refuses before any allocation; a huge
//! dim alone is `2^62` or more, so that a per-dim table of it cannot be allocated either. Sizes
//! that are huge but representable (terabytes) are in an `#[ignore]`d test: without a size check
//! they reach the allocator, whose failure may abort the process.

mod functional_layers;
mod functional_spatial;
mod losses;
mod modules;
mod optim;
mod pinned;
mod state_dict;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use oxtorch_nn::functional as F;
use oxtorch_nn::{
    BatchNorm, Conv2d, ConvOptions, Embedding, GroupNorm, LayerNorm, Linear, MultiheadAttention,
    MultiheadAttentionOptions, RnnOptions, TransformerEncoderLayer, TransformerLayerOptions, LSTM,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

use functional_layers::{activations, attention, distances, embeddings, norms, recurrent};
use functional_spatial::{convolutions, pools, resampling};
use losses::{ctc, losses};
use modules::{constructors, forwards, Modules};
use optim::{optimizers, schedulers};
use pinned::pinned;
use state_dict::state_dicts;

// ---------------------------------------------------------------------------------------------
// Harness: quiet panics, a seeded generator, inputs, the sweep.
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// Whether this thread's panics go unprinted (see [`quietly`]).
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// Where this thread's last unprinted panic was raised (`file:line`).
    static WHERE: Cell<Option<String>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's panic messages unprinted (their location is kept for
/// [`panic_message`]): the sweep catches each panic and reports it with its call, so the default
/// hook's line per panic is only noise. Other threads (other tests) keep the hook as it was.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                WHERE.with(|w| w.set(info.location().map(|l| format!("{}:{}", l.file(), l.line()))));
            } else {
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

/// The message a caught panic carried (empty when its payload is not a string), with where this
/// thread raised it.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    match WHERE.with(|w| w.take()) {
        Some(at) => format!("{msg} (at {at})"),
        None => msg,
    }
}

/// SplitMix64: a tiny seeded generator, with a mood: a *tame* draw keeps shapes, dtypes, list
/// lengths and hyper-parameters valid (see [`Rng::arg`]) so that a call reaches the computation,
/// a wild one is adversarial everywhere. Each section of the sweep flips the mood.
struct Rng {
    state: u64,
    tame: bool,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng { state: seed, tame: false }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// True once in `n` draws.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A value of `pool`, whose first `valid` values are the valid ones: only those when tame.
    fn arg<T: Clone>(&mut self, pool: &[T], valid: usize) -> T {
        let n = if self.tame { valid.clamp(1, pool.len()) } else { pool.len() };
        pool[self.below(n)].clone()
    }

    /// True once in `n` wild draws, never when tame.
    fn odd(&mut self, n: usize) -> bool {
        let hit = self.one_in(n);
        hit && !self.tame
    }

    /// Sets the mood for a section: tame half the time.
    fn mood(&mut self) {
        self.tame = self.coin();
    }
}

// (The pools list their valid values first: `rng.arg(&POOL, valid)` draws only those when tame.)

/// Dims: valid (3), negative, out of range and extreme.
const DIMS: [isize; 9] = [0, -1, 1, 2, -3, 5, isize::MAX, isize::MIN, -65];
/// Floats (4 ordinary) including the non-finite.
const F64S: [f64; 10] =
    [1.0, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e-300, 2.0];
/// Probabilities: valid (3), out of `[0, 1]` and non-finite.
const PROBS: [f64; 8] = [0.0, 0.5, 0.2, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY];
/// Epsilons: the usual (2), zero, negative, non-finite.
const EPSS: [f64; 6] = [1e-5, 1e-3, 0.0, -1.0, f64::NAN, f64::INFINITY];
/// Norm orders: the usual (4), zero, negative, NaN.
const PNORMS: [f64; 8] = [2.0, 1.0, 0.5, f64::INFINITY, 0.0, -1.0, f64::NAN, f64::NEG_INFINITY];
/// Values the inputs are filled from (non-finite ones only for float dtypes).
const VALUES: [f64; 12] =
    [0.0, 1.0, -1.0, 2.5, -3.75, 100.0, 7.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30];
/// Input shapes: 0-d, empty, vectors, matrices, batches.
const SHAPES: [&[usize]; 10] =
    [&[], &[0], &[3], &[1], &[2, 3], &[3, 3], &[2, 0, 3], &[1, 3, 1, 2], &[2, 3, 4], &[1, 2, 3, 3]];
/// Reductions, valid (3) and not.
const REDUCTIONS: [&str; 5] = ["mean", "sum", "none", "bogus", "batchmean"];
/// Strides of convolutions and pools, valid (4) and not (no mid-range values: with a huge padding
/// they would make outputs of terabytes instead of overflowing).
const STRIDES: [usize; 6] = [1, 1, 2, 3, 0, usize::MAX];
/// Paddings: small (4), or so large that `in + 2 * padding` overflows whatever `in` is.
const PADS: [usize; 6] = [0, 0, 1, 2, 1 << 63, usize::MAX];
/// Dilations: valid (3), zero, or so large that the kernel's extent overflows or exceeds the input.
const DILATIONS: [usize; 6] = [1, 1, 2, 0, 1 << 63, usize::MAX];
/// Kernel sizes: valid (4), zero, overflowing (no mid-range values: with a huge padding, a kernel
/// of `1 << 40` taps could make a representable terabyte of columns).
const KERNELS: [usize; 6] = [1, 2, 3, 2, 0, usize::MAX];

/// One input tensor with a description of how it was made.
struct Input {
    t: Tensor,
    desc: String,
}

/// A list of values, in full when short.
fn show(v: &[f64]) -> String {
    if v.len() <= 64 {
        format!("{v:?}")
    } else {
        format!("[{} values, first {:?}]", v.len(), &v[..8])
    }
}

/// The description of an optional input.
fn od(o: &Option<Input>) -> String {
    o.as_ref().map_or_else(|| "None".to_string(), |i| i.desc.clone())
}

/// The tensor of an optional input.
fn ot(o: &Option<Input>) -> Option<&Tensor> {
    o.as_ref().map(|i| &i.t)
}

/// Fills `n` storage values (non-finite and huge ones only for float dtypes).
fn fill(rng: &mut Rng, n: usize, float: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let v = rng.pick(&VALUES);
            if float || (v.is_finite() && v.abs() < 100.0) {
                v
            } else {
                3.0
            }
        })
        .collect()
}

/// A tensor of `dtype` and `shape` whose layout is `0` contiguous, `1` transposed (storage
/// shaped with the first and last dims swapped, then transposed back), `2` expanded (storage with
/// a size-1 first dim, broadcast) or `3` strided (every other element of a last dim twice as
/// long). The storage is `Tensor::from_vec(values, storage shape).to_dtype(dtype)`; the values
/// come back with it.
fn make(rng: &mut Rng, dtype: DType, shape: &[usize], layout: usize) -> Result<(Tensor, Vec<f64>)> {
    let float = dtype.is_float();
    let rank = shape.len();
    match layout {
        1 if rank >= 2 => {
            let mut s = shape.to_vec();
            s.swap(0, rank - 1);
            let v = fill(rng, s.iter().product(), float);
            let t = Tensor::from_vec(v.clone(), s)?.to_dtype(dtype)?.transpose(0, rank as isize - 1)?;
            Ok((t, v))
        }
        2 if rank >= 1 => {
            let mut s = shape.to_vec();
            s[0] = 1;
            let v = fill(rng, s.iter().product(), float);
            Ok((Tensor::from_vec(v.clone(), s)?.to_dtype(dtype)?.expand(shape)?, v))
        }
        3 if rank >= 1 => {
            let mut s = shape.to_vec();
            s[rank - 1] *= 2;
            let v = fill(rng, s.iter().product(), float);
            Ok((Tensor::from_vec(v.clone(), s)?.to_dtype(dtype)?.slice(-1, .., 2)?, v))
        }
        _ => {
            let v = fill(rng, shape.iter().product(), float);
            Ok((Tensor::from_vec(v.clone(), shape.to_vec())?.to_dtype(dtype)?, v))
        }
    }
}

const LAYOUTS: [&str; 4] = ["contiguous", "transposed", "expanded", "strided"];

/// A tensor of `dtype` and `shape` in a random layout (contiguous where the shape cannot take it).
fn build(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Input {
    let layout = if rng.coin() { 0 } else { rng.below(4) };
    let (layout, (t, v)) = match make(rng, dtype, shape, layout) {
        Ok(made) => (layout, made),
        Err(_) => (0, make(rng, dtype, shape, 0).expect("a contiguous input")),
    };
    Input { t, desc: format!("{dtype:?}{shape:?}/{} {}", LAYOUTS[layout], show(&v)) }
}

/// A dtype: mostly float32/float64, sometimes any (when wild).
fn dtype(rng: &mut Rng) -> DType {
    if rng.odd(4) {
        rng.pick(&DType::ALL)
    } else {
        rng.pick(&[DType::F32, DType::F32, DType::F32, DType::F64])
    }
}

/// `d` mostly, another dtype sometimes (when wild).
fn dtype_like(rng: &mut Rng, d: DType) -> DType {
    if rng.odd(5) {
        rng.pick(&DType::ALL)
    } else {
        d
    }
}

/// A small tensor of any dtype, shape and layout.
fn any(rng: &mut Rng) -> Input {
    let d = rng.pick(&DType::ALL);
    let shape = rng.pick(&SHAPES).to_vec();
    build(rng, d, &shape)
}

/// A tensor of `shape` (perturbed half the time) and a mostly-float dtype.
fn shaped(rng: &mut Rng, shape: &[usize]) -> Input {
    let shape = perturb(rng, shape);
    let d = dtype(rng);
    build(rng, d, &shape)
}

/// A tensor of `shape` (perturbed half the time) in `d` (another dtype sometimes).
fn shaped_as(rng: &mut Rng, shape: &[usize], d: DType) -> Input {
    let shape = perturb(rng, shape);
    let d = dtype_like(rng, d);
    build(rng, d, &shape)
}

/// `None` a third of the time, else [`shaped_as`].
fn maybe(rng: &mut Rng, shape: &[usize], d: DType) -> Option<Input> {
    if rng.one_in(3) {
        None
    } else {
        Some(shaped_as(rng, shape, d))
    }
}

/// `shape` unchanged when tame or half the time, else with a dim dropped, added, emptied or
/// resized.
fn perturb(rng: &mut Rng, shape: &[usize]) -> Vec<usize> {
    let mut s = shape.to_vec();
    if !rng.odd(2) {
        return s;
    }
    match rng.below(5) {
        0 if !s.is_empty() => {
            s.remove(rng.below(s.len()));
        }
        1 => s.insert(rng.below(s.len() + 1), rng.pick(&[1, 2])),
        2 if !s.is_empty() => {
            let i = rng.below(s.len());
            s[i] = 0;
        }
        3 if !s.is_empty() => {
            let i = rng.below(s.len());
            s[i] = rng.pick(&[1, 2, 5]);
        }
        _ => {}
    }
    s
}

/// A batch for an `n`-d spatial op: `[N, C, *spatial]` of sizes 1..=4 when tame; when wild,
/// sometimes unbatched or a dim short or long, sizes 0..=4.
fn batch(rng: &mut Rng, n: usize) -> Input {
    let rank = match rng.arg(&[2, 2, 2, 2, 2, 1, 0, 3], 5) {
        1 => n + 1,
        0 => n,
        3 => n + 3,
        _ => n + 2,
    };
    let shape: Vec<usize> = (0..rank).map(|_| rng.arg(&[3, 4, 2, 5, 1, 3, 0], 6)).collect();
    let d = dtype(rng);
    build(rng, d, &shape)
}

/// An index tensor of `shape`: int64 values in `[0, hi)` when tame; when wild, the shape perturbed
/// sometimes, values negative or out of range, another dtype.
fn index(rng: &mut Rng, shape: &[usize], hi: i64) -> Input {
    let shape = if rng.odd(3) { perturb(rng, shape) } else { shape.to_vec() };
    let n: usize = shape.iter().product();
    let vals: Vec<i64> = (0..n)
        .map(|_| {
            if rng.odd(3) {
                rng.pick(&[-1, -4, hi, hi + 3, i64::MAX, i64::MIN, -100])
            } else {
                rng.below(hi.max(1) as usize) as i64
            }
        })
        .collect();
    let d = rng.arg(
        &[DType::I64, DType::I64, DType::I64, DType::I64, DType::I32, DType::F32, DType::Bool, DType::U8],
        1,
    );
    let t =
        Tensor::from_vec(vals.clone(), shape.clone()).and_then(|t| t.to_dtype(d)).expect("an index tensor");
    Input { t, desc: format!("index {d:?}{shape:?} {vals:?}") }
}

/// A mask of `shape`, bool or float (additive), when tame; when wild, of a random (often
/// mismatched) shape, or int.
fn mask(rng: &mut Rng, shape: &[usize]) -> Input {
    let shape = if !rng.odd(2) { perturb(rng, shape) } else { rng.pick(&SHAPES).to_vec() };
    let n: usize = shape.iter().product();
    let vals: Vec<bool> = (0..n).map(|_| rng.coin()).collect();
    let d = rng.arg(&[DType::Bool, DType::Bool, DType::F32, DType::U8, DType::F16], 3);
    let t = Tensor::from_vec(vals.clone(), shape.clone()).and_then(|t| t.to_dtype(d)).expect("a mask");
    Input { t, desc: format!("mask {d:?}{shape:?} {vals:?}") }
}

/// A well-formed float32 tensor of ones (so the other arguments are what is tested).
fn ones(shape: &[usize]) -> Tensor {
    Tensor::ones(shape.to_vec(), DType::F32).expect("a tensor of ones")
}

/// `n` values drawn from `pool` whose first `valid` are valid (see [`Rng::arg`]): one value
/// repeated, or one per dim; when wild, sometimes of a wrong length.
fn list(rng: &mut Rng, n: usize, pool: &[usize], valid: usize) -> Vec<usize> {
    let len = match rng.arg(&[3, 2, 0, 1], 2) {
        0 => 0,
        1 => n + 1,
        2 => 1,
        _ => n,
    };
    if rng.coin() {
        vec![rng.arg(pool, valid); len]
    } else {
        (0..len).map(|_| rng.arg(pool, valid)).collect()
    }
}

/// Output sizes for `n` spatial dims: small (0 included), or so large that their product
/// overflows (a single dim: `usize::MAX`, beyond `isize::MAX` bytes). Each huge dim is `2^62` or
/// more (a per-dim table of it, built before the product is checked, cannot be allocated either:
/// a `1 << 32` dim would be a table of gigabytes), or `2^21` (three of them overflow).
fn out_sizes(rng: &mut Rng, n: usize) -> Vec<usize> {
    if rng.odd(4) {
        match n {
            1 => vec![usize::MAX],
            2 => rng.pick(&[vec![usize::MAX, usize::MAX], vec![1 << 62, 1 << 62], vec![1 << 62, 8]]),
            _ => rng.pick(&[vec![usize::MAX, 1, 1], vec![1 << 21, 1 << 21, 1 << 21], vec![2, 1 << 63, 4]]),
        }
    } else {
        list(rng, n, &[1, 2, 3, 7, 1, 0], 5)
    }
}

/// The calls whose torch message is a report of several lines by design (`load_state_dict`'s
/// "Error(s) in loading state_dict for ...:" with one tab-indented line per problem): their errors
/// may span lines.
const MULTI_LINE: [&str; 3] =
    ["Linear::load_state_dict", "BatchNorm::load_state_dict", "Embedding::load_state_dict"];

/// The reply of a timed call: `Ok(Ok(()))`, `Ok(Err(message))`, or `Err(panic message)`.
type Reply = std::result::Result<std::result::Result<(), String>, String>;

/// Collects the failures of the sweep.
#[derive(Default)]
struct Sweep {
    failures: Vec<String>,
    calls: usize,
    names: std::collections::BTreeSet<&'static str>,
}

impl Sweep {
    fn trace(&self, name: &str, args: &str) {
        if std::env::var_os("ROBUSTNESS_TRACE").is_some() {
            eprintln!("robustness: #{} {name}({args})", self.calls);
        }
    }

    /// Runs one call under `catch_unwind`: a panic, or an `Err` whose message is empty or spans
    /// lines, is a failure.
    fn call<T>(&mut self, name: &'static str, args: impl Fn() -> String, f: impl FnOnce() -> Result<T>) {
        self.calls += 1;
        self.names.insert(name);
        if std::env::var_os("ROBUSTNESS_TRACE").is_some() {
            self.trace(name, &args());
        }
        match quietly(|| catch_unwind(AssertUnwindSafe(f))) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let msg = e.to_string();
                if msg.trim().is_empty() {
                    self.failures.push(format!(
                        "#{} {name}({}): Err with an empty message",
                        self.calls,
                        args()
                    ));
                } else if msg.trim_end().contains('\n') && !MULTI_LINE.contains(&name) {
                    self.failures.push(format!(
                        "#{} {name}({}): Err message spans lines: {msg:?}",
                        self.calls,
                        args()
                    ));
                }
            }
            Err(payload) => {
                let m = panic_message(&*payload);
                self.failures.push(format!("#{} {name}({}): PANIC: {m}", self.calls, args()));
            }
        }
    }

    /// [`Sweep::call`] on a thread of its own with a timeout, for calls whose arguments could
    /// make a loop run for ages (the closure builds its own tensors and optimizers: only strings
    /// cross threads).
    fn timed(&mut self, name: &'static str, args: String, f: impl FnOnce() -> Result<()> + Send + 'static) {
        self.calls += 1;
        self.names.insert(name);
        self.trace(name, &args);
        let (tx, rx) = mpsc::channel::<Reply>();
        std::thread::spawn(move || {
            let r = quietly(|| catch_unwind(AssertUnwindSafe(f)));
            let out = match r {
                Ok(Ok(())) => Ok(Ok(())),
                Ok(Err(e)) => Ok(Err(e.to_string())),
                Err(p) => Err(panic_message(&*p)),
            };
            let _ = tx.send(out);
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(msg))) => {
                if msg.trim().is_empty() || (msg.trim_end().contains('\n') && !MULTI_LINE.contains(&name)) {
                    self.failures.push(format!("#{} {name}({args}): bad Err message {msg:?}", self.calls));
                }
            }
            Ok(Err(m)) => self.failures.push(format!("#{} {name}({args}): PANIC: {m}", self.calls)),
            Err(_) => self.failures.push(format!("#{} {name}({args}): HANG (no answer in 10 s)", self.calls)),
        }
    }

    fn finish(self, what: &str) {
        assert!(
            self.failures.is_empty(),
            "{what}: {} of {} calls ({} functions) failed:\n{}",
            self.failures.len(),
            self.calls,
            self.names.len(),
            self.failures.join("\n")
        );
    }
}

#[test]
fn adversarial_nn_arguments_never_panic() {
    let mut rng = Rng::new(0x5EED_0035);
    let mut s = Sweep::default();
    pinned(&mut s);
    for round in 0..36 {
        convolutions(&mut s, &mut rng);
        pools(&mut s, &mut rng);
        resampling(&mut s, &mut rng);
        norms(&mut s, &mut rng);
        embeddings(&mut s, &mut rng);
        activations(&mut s, &mut rng);
        attention(&mut s, &mut rng);
        recurrent(&mut s, &mut rng);
        distances(&mut s, &mut rng);
        losses(&mut s, &mut rng);
        ctc(&mut s, &mut rng);
        constructors(&mut s, &mut rng);
        // Fresh modules every few rounds (a load may leave one half-loaded, which is fine too).
        let mut modules = match Modules::new() {
            Ok(m) => m,
            Err(e) => panic!("round {round}: the well-formed modules cannot be built: {e}"),
        };
        forwards(&mut s, &mut rng, &modules);
        optimizers(&mut s, &mut rng);
        schedulers(&mut s, &mut rng);
        state_dicts(&mut s, &mut rng, &mut modules);
        forwards(&mut s, &mut rng, &modules);
    }
    assert!(s.names.len() >= 150, "the sweep covers {} functions", s.names.len());
    s.finish("robustness sweep");
}

/// Sizes that fit `usize` but not any machine (terabytes to exabytes). A correct implementation
/// refuses them with an `Err` from a size check; one that reaches the allocator panics with an
/// out-of-memory message at best and aborts (or is OOM-killed) at worst.
#[test]
#[ignore = "relies on the kernel refusing to reserve terabytes (vm.overcommit_memory 0 or 2); passes here"]
fn huge_allocations_are_refused() {
    let mut s = Sweep::default();
    let big = 1usize << 20;
    s.call("Linear::new", || "1 << 20, 1 << 20 (4 TiB)".into(), || Linear::new(big, big, true));
    s.call("Linear::new(1 << 40)", || "1 << 40, 1".into(), || Linear::new(1 << 40, 1, true));
    s.call("Embedding::new", || "1 << 40, 4".into(), || Embedding::new(1 << 40, 4, None));
    s.call(
        "Conv2d::new",
        || "1 << 16, 1 << 16, [64]".into(),
        || Conv2d::new(1 << 16, 1 << 16, &[64], ConvOptions::default()),
    );
    s.call("LSTM::new", || "1 << 18, 1 << 18".into(), || LSTM::new(1 << 18, 1 << 18, RnnOptions::default()));
    // (a count of small layers is a long loop of small allocations: on a thread with a timeout)
    for layers in [usize::MAX, 1 << 40] {
        s.timed("LSTM::new(layers)", format!("3, 4, num_layers {layers}"), move || {
            LSTM::new(3, 4, RnnOptions { num_layers: layers, ..Default::default() }).map(|_| ())
        });
    }
    s.call(
        "MultiheadAttention::new",
        || "1 << 20, 1".into(),
        || MultiheadAttention::new(1 << 20, 1, MultiheadAttentionOptions::default()),
    );
    s.call(
        "TransformerEncoderLayer::new",
        || "4, 2, dim_feedforward 1 << 40".into(),
        || {
            TransformerEncoderLayer::new(
                4,
                2,
                TransformerLayerOptions { dim_feedforward: 1 << 40, ..Default::default() },
            )
        },
    );
    s.call("BatchNorm::new", || "1 << 40".into(), || BatchNorm::new(1 << 40, 1e-5, Some(0.1), true, true));
    s.call("LayerNorm::new", || "[1 << 40]".into(), || LayerNorm::new(&[1 << 40], 1e-5, true, true));
    s.call("GroupNorm::new", || "1, 1 << 40".into(), || GroupNorm::new(1, 1 << 40, 1e-5, true));

    let img = ones(&[1, 1, 4, 4]);
    let seq = ones(&[1, 1, 4]);
    s.call(
        "interpolate(scale 1e12)",
        || "F32[1, 1, 4, 4], scale 1e12".into(),
        || F::interpolate(&img, None, Some(&[1e12, 1e12][..]), "nearest", None),
    );
    s.call(
        "interpolate(scale inf)",
        || "F32[1, 1, 4], scale inf".into(),
        || F::interpolate(&seq, None, Some(&[f64::INFINITY][..]), "linear", None),
    );
    s.call(
        "interpolate(scale 1e300)",
        || "F32[1, 1, 4, 4], scale 1e300".into(),
        || F::interpolate(&img, None, Some(&[1e300][..]), "bilinear", Some(true)),
    );
    s.call(
        "interpolate(size 1 << 40)",
        || "F32[1, 1, 4], size [1 << 40]".into(),
        || F::interpolate(&seq, Some(&[1 << 40][..]), None, "nearest", None),
    );
    s.call(
        "interpolate(size usize::MAX)",
        || "U8[1, 1, 4], size [usize::MAX]".into(),
        || F::interpolate(&seq.to_dtype(DType::U8)?, Some(&[usize::MAX][..]), None, "nearest", None),
    );
    s.call("pad", || "F32[1, 1, 4], [1 << 40, 0]".into(), || F::pad(&seq, &[1 << 40, 0], "constant", None));
    s.call(
        "pad(u8)",
        || "U8[0, 4], [isize::MAX - 10, 0]".into(),
        || F::pad(&Tensor::zeros([0usize, 4], DType::U8)?, &[isize::MAX - 10, 0, 1, 0], "constant", None),
    );
    s.call(
        "adaptive_avg_pool1d",
        || "F32[1, 1, 4], 1 << 40".into(),
        || F::adaptive_avg_pool1d(&seq, 1 << 40),
    );
    s.call(
        "adaptive_max_pool2d",
        || "F32[1, 1, 4, 4], [1 << 20, 1 << 20]".into(),
        || F::adaptive_max_pool2d(&img, &[1 << 20, 1 << 20]),
    );
    let ker = ones(&[1, 1, 1]);
    s.call(
        "conv1d(padding)",
        || "F32[1, 1, 4], padding [1 << 40]".into(),
        || F::conv1d(&seq, &ker, None, &[1], Padding::Explicit(vec![1 << 40]), &[1], 1),
    );
    s.call(
        "conv1d(same, dilation)",
        || "F32[1, 1, 4], kernel 3, same, dilation [1 << 40]".into(),
        || F::conv1d(&seq, &ones(&[1, 1, 3]), None, &[1], Padding::Same, &[1 << 40], 1),
    );
    s.call(
        "conv_transpose1d(stride)",
        || "F32[1, 1, 4], stride [1 << 40]".into(),
        || F::conv_transpose1d(&seq, &ker, None, &[1 << 40], &[0], &[0], 1, &[1]),
    );
    s.call(
        "conv_transpose1d(empty batch)",
        || "F32[0, 1, 4], stride [1 << 40]".into(),
        || F::conv_transpose1d(&ones(&[0, 1, 4]), &ker, None, &[1 << 40], &[0], &[0], 1, &[1]),
    );
    let v = Tensor::from_vec(vec![1i64 << 40], [1]).expect("a value");
    s.call("one_hot", || "[1 << 40], -1".into(), || F::one_hot(&v, -1));
    s.call("one_hot(classes)", || "[1], 1 << 40".into(), || F::one_hot(&v, 1 << 40));
    s.call(
        "affine_grid",
        || "[1, 1, 1 << 20, 1 << 20]".into(),
        || F::affine_grid(&ones(&[1, 2, 3]), &[1, 1, 1 << 20, 1 << 20], false),
    );
    // (the grid's size overflows, but each dim's coordinates, 16 GiB, are built before it is checked)
    s.call(
        "affine_grid(per-dim 1 << 32)",
        || "[1, 1, 1 << 32, 1 << 32]".into(),
        || F::affine_grid(&ones(&[1, 2, 3]), &[1, 1, 1 << 32, 1 << 32], true),
    );
    s.call(
        "interpolate(per-dim 1 << 32)",
        || "F32[1, 1, 4, 4], size [1 << 32, 1 << 32], bilinear".into(),
        || F::interpolate(&img, Some(&[1 << 32, 1 << 32][..]), None, "bilinear", Some(true)),
    );
    s.call(
        "fold",
        || "output_size [1 << 20, 1 << 20]".into(),
        || F::fold(&ones(&[1, 4, 1]), &[1 << 20, 1 << 20], &[2, 2], &[1, 1], &[0, 0], &[1 << 20, 1 << 20]),
    );
    let pooled = ones(&[1, 1, 2, 2]);
    let idx = Tensor::zeros([1usize, 1, 2, 2], DType::I64).expect("indices");
    s.call(
        "max_unpool2d",
        || "F32[1, 1, 2, 2], kernel [1 << 20]".into(),
        || F::max_unpool2d(&pooled, &idx, &[1 << 20], None, &[0], None),
    );
    s.call(
        "ctc_loss(lengths)",
        || "targets 1-D, target_lengths [i64::MAX, i64::MAX]".into(),
        || {
            let lp = Tensor::zeros([2usize, 2, 3], DType::F32)?;
            let tg = Tensor::from_vec(vec![1i64, 2], [2])?;
            let il = Tensor::from_vec(vec![2i64, 2], [2])?;
            let tl = Tensor::from_vec(vec![i64::MAX, i64::MAX], [2])?;
            F::ctc_loss(&lp, &tg, &il, &tl, 0, "mean", false)
        },
    );
    s.finish("robustness huge allocations");
}
