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

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use oxtorch_nn::functional::{
    self as F, EmbeddingOptions, InterpolateOptions, LinearCrossEntropyOptions, MhaForwardOptions,
};
use oxtorch_nn::optim::lr_scheduler::{
    ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR, LinearLR,
    MultiStepLR, MultiplicativeLR, OneCycleLR, PolynomialLR, ReduceLROnPlateau, StepLR,
};
use oxtorch_nn::optim::{
    Adadelta, AdadeltaOptions, Adagrad, AdagradOptions, Adam, AdamOptions, AdamW, Adamax, AdamaxOptions,
    AsgdOptions, NAdam, NAdamOptions, Optimizer, OptimizerState, RAdam, RAdamOptions, RMSprop,
    RMSpropOptions, Rprop, RpropOptions, SgdOptions, ASGD, SGD,
};
use oxtorch_nn::{
    BatchNorm, Conv2d, ConvOptions, Embedding, Forward, GroupNorm, LayerNorm, Linear, ModuleExt,
    MultiheadAttention, MultiheadAttentionOptions, RMSNorm, RnnOptions, StateDict, TransformerEncoderLayer,
    TransformerLayerOptions, GRU, LSTM, RNN,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

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

// ---------------------------------------------------------------------------------------------
// nn::functional
// ---------------------------------------------------------------------------------------------

/// A padding argument: "same", "valid", or explicit sizes.
fn padding(rng: &mut Rng, n: usize) -> Padding {
    match rng.arg(&[2, 2, 2, 2, 0, 1], 4) {
        0 => Padding::Same,
        1 => Padding::Valid,
        _ => Padding::Explicit(list(rng, n, &PADS, 4)),
    }
}

/// Convolutions and transposed convolutions: bad strides, paddings, dilations, groups, weights.
fn convolutions(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let c_in = x.t.rank().checked_sub(n + 1).map_or(1, |i| x.t.dims()[i]);
    let groups = rng.arg(&[1usize, 1, 1, c_in.max(1), 2, 3, 0, usize::MAX], 4);
    // (a multiple of the groups when they are few, so the channels can divide)
    let c_out = if groups <= 4 { groups.max(1) } else { 1 } * rng.arg(&[1usize, 2, 3, 0], 3);
    let k = rng.arg(&[1usize, 2, 3, 1, 0], 4);
    let mut wshape = vec![c_out, rng.arg(&[c_in / groups.max(1), c_in / groups.max(1), c_in, 0], 2)];
    wshape.extend(std::iter::repeat_n(k, n));
    let w = shaped_as(rng, &wshape, x.t.dtype());
    let b = maybe(rng, &[c_out], x.t.dtype());
    let (st, pd, dl) = (list(rng, n, &STRIDES, 4), padding(rng, n), list(rng, n, &DILATIONS, 3));
    let args = || {
        format!(
            "{}, {}, bias {}, stride {st:?}, {pd:?}, dilation {dl:?}, groups {groups}",
            x.desc,
            w.desc,
            od(&b)
        )
    };
    let name = ["conv1d", "conv2d", "conv3d"][n - 1];
    s.call(name, args, || match n {
        1 => F::conv1d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
        2 => F::conv2d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
        _ => F::conv3d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
    });

    // Transposed: the output grows with stride and dilation, so the input stays float (two bytes
    // or more per element: a `usize::MAX / 2` stride then always overflows the byte count).
    let xt = {
        let shape = x.t.dims().to_vec();
        let d = rng.pick(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::BF16]);
        build(rng, d, &shape)
    };
    let mut wt_shape = vec![c_in, rng.arg(&[c_out / groups.max(1), c_out, 0], 1)];
    wt_shape.extend(std::iter::repeat_n(k, n));
    let wt = shaped_as(rng, &wt_shape, xt.t.dtype());
    let bt = maybe(rng, &[c_out], xt.t.dtype());
    let t_strides = [1usize, 1, 2, 3, 0, usize::MAX / 2, usize::MAX];
    let (st, pd, op, dl) = (
        list(rng, n, &t_strides, 4),
        list(rng, n, &[0, 0, 1, 2, usize::MAX / 2, usize::MAX], 4),
        list(rng, n, &[0, 0, 1, 2, usize::MAX], 2),
        list(rng, n, &[1, 1, 2, 0, usize::MAX / 2, usize::MAX], 3),
    );
    let args = || {
        format!(
            "{}, {}, bias {}, stride {st:?}, padding {pd:?}, output_padding {op:?}, groups {groups}, dilation {dl:?}",
            xt.desc,
            wt.desc,
            od(&bt)
        )
    };
    let name = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"][n - 1];
    s.call(name, args, || match n {
        1 => F::conv_transpose1d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
        2 => F::conv_transpose2d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
        _ => F::conv_transpose3d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
    });

    // Linear and bilinear with mismatched operands.
    let a = if rng.tame { shaped(rng, &[2, 3]) } else { any(rng) };
    let lw = shaped(rng, &[2, a.t.dims().last().copied().unwrap_or(1)]);
    let lb = maybe(rng, &[2], lw.t.dtype());
    s.call("linear", || format!("{}, {}, {}", a.desc, lw.desc, od(&lb)), || F::linear(&a.t, &lw.t, ot(&lb)));
    let (x1, x2) = (shaped(rng, &[2, 3]), shaped(rng, &[2, 4]));
    let bw = shaped(rng, &[5, 3, 4]);
    let bb = maybe(rng, &[5], bw.t.dtype());
    s.call(
        "bilinear",
        || format!("{}, {}, {}, {}", x1.desc, x2.desc, bw.desc, od(&bb)),
        || F::bilinear(&x1.t, &x2.t, &bw.t, ot(&bb)),
    );
}

/// Max, average, power-average, adaptive and fractional pools, and max-unpooling.
fn pools(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let (k, st) = (list(rng, n, &KERNELS, 4), list(rng, n, &STRIDES, 4));
    let stride: Option<Vec<usize>> = if rng.one_in(3) { None } else { Some(st) };
    // (torch: the padding at most half the kernel)
    let (pd, dl) = (list(rng, n, &PADS, 2), list(rng, n, &DILATIONS, 3));
    let ceil = rng.coin();
    let so = stride.as_deref();
    let args = || {
        format!("{}, kernel {k:?}, stride {stride:?}, padding {pd:?}, dilation {dl:?}, ceil {ceil}", x.desc)
    };
    match n {
        1 => {
            s.call("max_pool1d", args, || F::max_pool1d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool1d_with_indices", args, || {
                F::max_pool1d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
        2 => {
            s.call("max_pool2d", args, || F::max_pool2d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool2d_with_indices", args, || {
                F::max_pool2d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
        _ => {
            s.call("max_pool3d", args, || F::max_pool3d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool3d_with_indices", args, || {
                F::max_pool3d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
    }
    let cip = rng.coin();
    let div = rng.arg(&[None, None, Some(3i64), Some(0), Some(-1), Some(i64::MIN)], 3);
    let args = || {
        format!("{}, kernel {k:?}, stride {stride:?}, padding {pd:?}, ceil {ceil}, {cip}, {div:?}", x.desc)
    };
    match n {
        1 => s.call("avg_pool1d", args, || F::avg_pool1d(&x.t, &k, so, &pd, ceil, cip)),
        2 => s.call("avg_pool2d", args, || F::avg_pool2d(&x.t, &k, so, &pd, ceil, cip, div)),
        _ => s.call("avg_pool3d", args, || F::avg_pool3d(&x.t, &k, so, &pd, ceil, cip, div)),
    }
    let p = rng.arg(&PNORMS, 4);
    let args = || format!("{}, norm_type {p}, kernel {k:?}, stride {stride:?}, ceil {ceil}", x.desc);
    match n {
        1 => s.call("lp_pool1d", args, || F::lp_pool1d(&x.t, p, &k, so, ceil)),
        2 => s.call("lp_pool2d", args, || F::lp_pool2d(&x.t, p, &k, so, ceil)),
        _ => s.call("lp_pool3d", args, || F::lp_pool3d(&x.t, p, &k, so, ceil)),
    }

    // Adaptive pools: output sizes 0, small, or overflowing.
    let os = out_sizes(rng, n);
    let args = || format!("{}, output_size {os:?}", x.desc);
    match n {
        1 => {
            let o = os.first().copied().unwrap_or(0);
            s.call("adaptive_avg_pool1d", args, || F::adaptive_avg_pool1d(&x.t, o));
            s.call("adaptive_max_pool1d", args, || F::adaptive_max_pool1d(&x.t, o));
            s.call("adaptive_max_pool1d_with_indices", args, || F::adaptive_max_pool1d_with_indices(&x.t, o));
        }
        2 => {
            s.call("adaptive_avg_pool2d", args, || F::adaptive_avg_pool2d(&x.t, &os));
            s.call("adaptive_max_pool2d", args, || F::adaptive_max_pool2d(&x.t, &os));
            s.call("adaptive_max_pool2d_with_indices", args, || {
                F::adaptive_max_pool2d_with_indices(&x.t, &os)
            });
        }
        _ => {
            s.call("adaptive_avg_pool3d", args, || F::adaptive_avg_pool3d(&x.t, &os));
            s.call("adaptive_max_pool3d", args, || F::adaptive_max_pool3d(&x.t, &os));
            s.call("adaptive_max_pool3d_with_indices", args, || {
                F::adaptive_max_pool3d_with_indices(&x.t, &os)
            });
        }
    }

    // Fractional max pooling (2-D or 3-D): kernel, output size or ratio, samples.
    let m = 2 + rng.below(2);
    let y = batch(rng, m);
    let fk = list(rng, m, &[1, 2, 2, 3, 0, usize::MAX, 1 << 40], 3);
    let (fo, fr): (Option<Vec<usize>>, Option<Vec<f64>>) = match rng.arg(&[2, 3, 0, 1], 2) {
        0 => (None, None),
        1 => (Some(out_sizes(rng, m)), Some(vec![0.5])),
        2 => (
            None,
            Some(
                (0..rng.arg(&[1, m, m + 1], 2))
                    .map(|_| rng.arg(&[0.5, 0.7, 0.2, 0.0, 1.0, -0.1, f64::NAN, f64::INFINITY], 3))
                    .collect(),
            ),
        ),
        _ => (Some(list(rng, m, &[1, 2, 3, 0, 5], 3)), None),
    };
    let lead: Vec<usize> = y.t.dims().iter().take(y.t.rank().saturating_sub(m)).copied().collect();
    let mut sshape = lead;
    sshape.push(m);
    let samples = if rng.coin() {
        None
    } else if rng.tame {
        // (torch's samples: values in [0, 1), the input's dtype)
        let v: Vec<f64> = (0..sshape.iter().product()).map(|_| rng.pick(&[0.0, 0.25, 0.5, 0.9])).collect();
        let d = y.t.dtype();
        let t = Tensor::from_vec(v.clone(), sshape.clone()).and_then(|t| t.to_dtype(d)).expect("samples");
        Some(Input { t, desc: format!("{d:?}{sshape:?} {v:?}") })
    } else {
        Some(shaped_as(rng, &sshape, y.t.dtype()))
    };
    let args =
        || format!("{}, kernel {fk:?}, output_size {fo:?}, ratio {fr:?}, samples {}", y.desc, od(&samples));
    let (fo_, fr_) = (fo.as_deref(), fr.as_deref());
    if m == 2 {
        s.call("fractional_max_pool2d", args, || F::fractional_max_pool2d(&y.t, &fk, fo_, fr_, ot(&samples)));
        s.call("fractional_max_pool2d_with_indices", args, || {
            F::fractional_max_pool2d_with_indices(&y.t, &fk, fo_, fr_, ot(&samples))
        });
    } else {
        s.call("fractional_max_pool3d", args, || F::fractional_max_pool3d(&y.t, &fk, fo_, fr_, ot(&samples)));
        s.call("fractional_max_pool3d_with_indices", args, || {
            F::fractional_max_pool3d_with_indices(&y.t, &fk, fo_, fr_, ot(&samples))
        });
    }

    // Max-unpooling: indices of the input's shape (or not), bad kernel/stride/padding/output size.
    let u = batch(rng, n);
    // (no `1 << 40`: one such dim next to small ones is a representable terabyte)
    let uk = list(rng, n, &[1, 2, 3, 0, usize::MAX, usize::MAX / 2], 3);
    let ust = if rng.coin() { None } else { Some(list(rng, n, &[1, 2, 0, usize::MAX, usize::MAX / 2], 2)) };
    let upd = list(rng, n, &[0, 0, 1, usize::MAX / 2, usize::MAX], 1);
    // Tame: what the pool with the same sizes gave; wild: indices of any value.
    let pooled = if rng.tame { pooled(n, &u, &uk, ust.as_deref(), &upd) } else { None };
    let (u, idx) = match pooled {
        Some(p) => p,
        None => {
            let idx = index(rng, u.t.dims(), 16);
            (u, idx)
        }
    };
    let uos = match rng.arg(&[0, 2, 1], 2) {
        0 => None,
        1 => Some(out_sizes(rng, n)),
        _ => Some(u.t.dims().to_vec()),
    };
    let args = || {
        format!(
            "{}, {}, kernel {uk:?}, stride {ust:?}, padding {upd:?}, output_size {uos:?}",
            u.desc, idx.desc
        )
    };
    let (ust_, uos_) = (ust.as_deref(), uos.as_deref());
    match n {
        1 => s.call("max_unpool1d", args, || F::max_unpool1d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
        2 => s.call("max_unpool2d", args, || F::max_unpool2d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
        _ => s.call("max_unpool3d", args, || F::max_unpool3d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
    }
    // Unpooling what a pool gave, with a stride too large to be representable.
    let img = ones(&[1, 1, 4, 4]);
    let bad = rng.pick(&[usize::MAX / 2, usize::MAX, 1 << 40, 0]);
    s.call(
        "max_unpool2d(pooled)",
        || format!("F32[1, 1, 4, 4] pooled k2, kernel [2], stride [{bad}], padding [{bad}]"),
        || {
            let (v, i) = F::max_pool2d_with_indices(&img, &[2], None, &[0], &[1], false)?;
            F::max_unpool2d(&v, &i, &[2], Some(&[bad][..]), &[0], None)?;
            F::max_unpool2d(&v, &i, &[2], None, &[bad], None)?;
            F::max_unpool2d(&v, &i, &[bad], None, &[0], None)
        },
    );
}

/// The `(kernel taps, blocks)` of an unfold of a 2-D `output_size` with these sizes (one value or
/// two each), `None` if they do not fit or overflow.
fn fold_columns(o: &[usize], k: &[usize], d: &[usize], p: &[usize], s: &[usize]) -> Option<(usize, usize)> {
    let at = |v: &[usize], i: usize| if v.len() == 1 { v.first().copied() } else { v.get(i).copied() };
    let (mut taps, mut blocks) = (1usize, 1usize);
    for i in 0..2 {
        let (o, k, d, p, s) = (at(o, i)?, at(k, i)?, at(d, i)?, at(p, i)?, at(s, i)?);
        let span = d.checked_mul(k.checked_sub(1)?)?.checked_add(1)?;
        let room = o.checked_add(p.checked_mul(2)?)?.checked_sub(span)?;
        taps = taps.checked_mul(k)?;
        blocks = blocks.checked_mul(room.checked_div(s)?.checked_add(1)?)?;
    }
    (taps <= 64 && blocks <= 64).then_some((taps, blocks))
}

/// `max_pool{n}d_with_indices` of `x` (values and indices as inputs), `None` where it fails.
fn pooled(n: usize, x: &Input, k: &[usize], st: Option<&[usize]>, pd: &[usize]) -> Option<(Input, Input)> {
    let run = || match n {
        1 => F::max_pool1d_with_indices(&x.t, k, st, pd, &[1], false),
        2 => F::max_pool2d_with_indices(&x.t, k, st, pd, &[1], false),
        _ => F::max_pool3d_with_indices(&x.t, k, st, pd, &[1], false),
    };
    let (v, i) = quietly(|| catch_unwind(AssertUnwindSafe(run))).ok()?.ok()?;
    let desc = format!("max_pool{n}d_with_indices({}, kernel {k:?}, stride {st:?}, padding {pd:?})", x.desc);
    Some((Input { t: v, desc: format!("{desc}.0") }, Input { t: i, desc: format!("{desc}.1") }))
}

/// Interpolation, padding, grid sampling, unfold/fold and the shuffles.
fn resampling(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let modes = [
        "nearest",
        "nearest-exact",
        "linear",
        "bilinear",
        "bicubic",
        "trilinear",
        "area",
        "lanczos",
        "bogus",
    ];
    // (tame: a mode for the input's rank, align_corners only where it means something)
    let for_rank = [
        ["nearest", "area", "linear"],
        ["nearest-exact", "bilinear", "bicubic"],
        ["nearest", "area", "trilinear"],
    ];
    let mode = if rng.tame { rng.pick(&for_rank[n - 1]) } else { rng.pick(&modes) };
    let scales = [2.0, 0.5, 1.5, f64::NAN, 0.0, -1.0, f64::NEG_INFINITY, 1e-300, -0.0];
    let (size, scale): (Option<Vec<usize>>, Option<Vec<f64>>) = match rng.arg(&[2, 3, 4, 0, 1], 3) {
        0 => (None, None),
        1 => (Some(out_sizes(rng, n)), Some(vec![2.0])),
        2 => (Some(out_sizes(rng, n)), None),
        _ => (None, Some((0..rng.arg(&[1, n, n + 1, 0], 2)).map(|_| rng.arg(&scales, 3)).collect())),
    };
    let ac = if rng.tame && matches!(mode, "nearest" | "nearest-exact" | "area") {
        None
    } else {
        rng.pick(&[None, Some(true), Some(false)])
    };
    let args = || format!("{}, size {size:?}, scale {scale:?}, {mode:?}, align_corners {ac:?}", x.desc);
    let (sz, sc) = (size.as_deref(), scale.as_deref());
    s.call("interpolate", args, || F::interpolate(&x.t, sz, sc, mode, ac));
    let opts = InterpolateOptions {
        align_corners: ac,
        recompute_scale_factor: rng.pick(&[None, Some(true), Some(false)]),
        antialias: rng.coin() && (!rng.tame || matches!(mode, "bilinear" | "bicubic")),
    };
    s.call(
        "interpolate_with",
        || format!("{}, {opts:?}", args()),
        || F::interpolate_with(&x.t, sz, sc, mode, opts),
    );

    // Pad: every mode, negative, overflowing, reflect wider than the dim.
    let a = if rng.tame { batch(rng, 2) } else { any(rng) };
    let pads: [&[isize]; 14] = [
        &[1, 1],
        &[0, 2],
        &[-1, 0],
        &[2, -1, 1, 1],
        &[3, 3],
        &[1],
        &[],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        &[isize::MAX, isize::MAX],
        &[isize::MIN, 0],
        &[-5, -5],
        &[isize::MAX, 1, 1, isize::MAX],
        &[isize::MIN, isize::MIN],
        &[5, 0],
    ];
    let pad = rng.arg(&pads, 4);
    let pmode = rng.arg(&["constant", "reflect", "replicate", "circular", "bogus", ""], 4);
    let value = rng.arg(&[None, Some(2.0), Some(f64::NAN), Some(1e300), Some(f64::NEG_INFINITY)], 2);
    s.call(
        "pad",
        || format!("{}, {pad:?}, {pmode:?}, {value:?}", a.desc),
        || F::pad(&a.t, pad, pmode, value),
    );
    let img = batch(rng, 2);
    s.call("pad(image)", || format!("{}, {pad:?}, {pmode:?}", img.desc), || F::pad(&img.t, pad, pmode, None));

    // grid_sample / affine_grid.
    let g = batch(rng, 2);
    let gn = g.t.dims().first().copied().unwrap_or(1);
    let grid = shaped(rng, &[gn, 2, 3, 2]);
    let gmode = rng.arg(&["bilinear", "nearest", "bicubic", "bogus"], 3);
    let gpad = rng.arg(&["zeros", "border", "reflection", "bogus"], 3);
    let gac = rng.coin();
    s.call(
        "grid_sample",
        || format!("{}, {}, {gmode:?}, {gpad:?}, {gac}", g.desc, grid.desc),
        || F::grid_sample(&g.t, &grid.t, gmode, gpad, gac),
    );
    let g5 = batch(rng, 3);
    let grid5 = shaped(rng, &[g5.t.dims().first().copied().unwrap_or(1), 2, 2, 2, 3]);
    s.call(
        "grid_sample(3d)",
        || format!("{}, {}, {gmode:?}, {gpad:?}, {gac}", g5.desc, grid5.desc),
        || F::grid_sample(&g5.t, &grid5.t, gmode, gpad, gac),
    );
    let nd = rng.pick(&[2usize, 3]);
    let tshape = [2, rng.arg(&[nd, 5 - nd], 1), rng.arg(&[nd + 1, 7 - nd], 1)];
    let theta = shaped(rng, &tshape);
    let asize = match rng.arg(&[0, 0, 1, 2], 2) {
        0 if nd == 2 => vec![2, 1, 3, 3],
        0 => vec![2, 1, 2, 3, 3],
        1 => out_sizes(rng, 2),
        _ => rng.pick(&[
            vec![2, 1, usize::MAX, usize::MAX],
            vec![2, 1, 1 << 62, 1 << 62],
            vec![2, 1, 1 << 21, 1 << 21, 1 << 21],
            vec![],
            vec![2, 1, 0, 3],
        ]),
    };
    s.call(
        "affine_grid",
        || format!("{}, {asize:?}, {gac}", theta.desc),
        || F::affine_grid(&theta.t, &asize, gac),
    );

    // unfold / fold.
    let u = batch(rng, 2);
    let (k, dl, pd, st) = (
        list(rng, 2, &KERNELS, 4),
        list(rng, 2, &DILATIONS, 3),
        list(rng, 2, &PADS, 4),
        list(rng, 2, &STRIDES, 4),
    );
    let args = || format!("{}, kernel {k:?}, dilation {dl:?}, padding {pd:?}, stride {st:?}", u.desc);
    s.call("unfold", args, || F::unfold(&u.t, &k, &dl, &pd, &st));
    let fos = if rng.tame || rng.coin() { list(rng, 2, &[2, 3, 4, 0], 3) } else { out_sizes(rng, 2) };
    // (tame: as many columns as `unfold` of that output size makes)
    let cshape = match fold_columns(&fos, &k, &dl, &pd, &st) {
        Some(c) if rng.tame => vec![1, 2 * c.0, c.1],
        _ => vec![1, 4 * rng.pick(&[1, 2, 3]), rng.pick(&[1, 4, 9, 0])],
    };
    let cols = shaped(rng, &cshape);
    s.call(
        "fold",
        || {
            format!(
                "{}, output_size {fos:?}, kernel {k:?}, dilation {dl:?}, padding {pd:?}, stride {st:?}",
                cols.desc
            )
        },
        || F::fold(&cols.t, &fos, &k, &dl, &pd, &st),
    );

    // Shuffles: factor 0, negative, not dividing, huge.
    let sh = if rng.tame { shaped(rng, &[1, 4, 2, 2]) } else { any(rng) };
    let f = rng.arg(&[1i64, 2, 3, 0, -1, i64::MAX, i64::MIN, 1 << 32], 3);
    s.call("pixel_shuffle", || format!("{}, {f}", sh.desc), || F::pixel_shuffle(&sh.t, f));
    s.call("pixel_unshuffle", || format!("{}, {f}", sh.desc), || F::pixel_unshuffle(&sh.t, f));
    s.call("channel_shuffle", || format!("{}, {f}", sh.desc), || F::channel_shuffle(&sh.t, f));
    let img = batch(rng, 2);
    s.call("pixel_shuffle(image)", || format!("{}, {f}", img.desc), || F::pixel_shuffle(&img.t, f));
    s.call("pixel_unshuffle(image)", || format!("{}, {f}", img.desc), || F::pixel_unshuffle(&img.t, f));
}

/// Layer, group, batch, instance, RMS and local-response norms and `normalize`.
fn norms(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x = if !rng.tame && rng.coin() { any(rng) } else { batch(rng, 2) };
    let dims = x.t.dims().to_vec();
    let d = x.t.dtype();
    let eps = rng.arg(&EPSS, 2);
    let tail: Vec<usize> = dims.iter().skip(dims.len().saturating_sub(1 + rng.below(2))).copied().collect();
    let ns = match rng.arg(&[3, 4, 5, 0, 1, 2], 3) {
        0 => vec![],
        1 => vec![usize::MAX],
        2 => vec![1 << 62, 1 << 62],
        _ => perturb(rng, &tail),
    };
    // (affine parameters of the normalized shape, unless that shape is one of the overflowing ones)
    let small = ns.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).is_some_and(|n| n <= 256);
    let wshape = if small { ns.clone() } else { vec![3] };
    let (w, b) = (maybe(rng, &wshape, d), maybe(rng, &wshape, d));
    s.call(
        "layer_norm",
        || format!("{}, {ns:?}, {}, {}, eps {eps}", x.desc, od(&w), od(&b)),
        || F::layer_norm(&x.t, &ns, ot(&w), ot(&b), eps),
    );
    let reps = rng.pick(&[None, Some(eps)]);
    s.call(
        "rms_norm",
        || format!("{}, {ns:?}, {}, {reps:?}", x.desc, od(&w)),
        || F::rms_norm(&x.t, &ns, ot(&w), reps),
    );
    let c = dims.get(1).copied().unwrap_or(1);
    let groups = rng.arg(&[1usize, c, 2, 3, 0, usize::MAX], 2);
    let (gw, gb) = (maybe(rng, &[c], d), maybe(rng, &[c], d));
    s.call(
        "group_norm",
        || format!("{}, groups {groups}, {}, {}, eps {eps}", x.desc, od(&gw), od(&gb)),
        || F::group_norm(&x.t, groups, ot(&gw), ot(&gb), eps),
    );
    // Running statistics: updated in place in training (a broadcast one cannot be).
    let (rm, rv) = (maybe(rng, &[c], d), maybe(rng, &[c], d));
    let (training, use_stats) = (rng.coin(), rng.coin());
    let momentum = rng.arg(&[0.1, 0.0, 1.0, -1.0, f64::NAN, 2.0], 3);
    s.call(
        "batch_norm",
        || {
            format!(
                "{}, mean {}, var {}, {}, {}, training {training}, momentum {momentum}, eps {eps}",
                x.desc,
                od(&rm),
                od(&rv),
                od(&gw),
                od(&gb)
            )
        },
        || F::batch_norm(&x.t, ot(&rm), ot(&rv), ot(&gw), ot(&gb), training, momentum, eps),
    );
    s.call(
        "instance_norm",
        || {
            format!(
                "{}, mean {}, var {}, {}, {}, use_input_stats {use_stats}, momentum {momentum}, eps {eps}",
                x.desc,
                od(&rm),
                od(&rv),
                od(&gw),
                od(&gb)
            )
        },
        || F::instance_norm(&x.t, ot(&rm), ot(&rv), ot(&gw), ot(&gb), use_stats, momentum, eps),
    );
    let size = rng.arg(&[1usize, 2, 5, 0, usize::MAX], 3);
    let (alpha, beta, k) = (rng.arg(&F64S, 2), rng.arg(&F64S, 2), rng.arg(&F64S, 2));
    s.call(
        "local_response_norm",
        || format!("{}, size {size}, alpha {alpha}, beta {beta}, k {k}", x.desc),
        || F::local_response_norm(&x.t, size, alpha, beta, k),
    );
    let p = rng.arg(&PNORMS, 4);
    let dim = rng.arg(&DIMS, 3);
    s.call(
        "normalize",
        || format!("{}, p {p}, dim {dim}, eps {eps}", x.desc),
        || F::normalize(&x.t, p, dim, eps),
    );
}

/// Embedding, embedding with options, embedding bags and one-hot encoding.
fn embeddings(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let rows = rng.arg(&[5usize, 5, 1, 0], 3);
    let weight = shaped(rng, &[rows, 3]);
    let ishape = rng.pick(&SHAPES).to_vec();
    let idx = index(rng, &ishape, rows as i64);
    let pidx = rng
        .arg(&[None, Some(0i64), Some(-1), Some(5), Some(-6), Some(-100), Some(i64::MAX), Some(i64::MIN)], 3);
    s.call(
        "embedding",
        || format!("{}, {}, padding_idx {pidx:?}", idx.desc, weight.desc),
        || F::embedding(&idx.t, &weight.t, pidx),
    );
    let opts = EmbeddingOptions {
        padding_idx: pidx,
        max_norm: rng.arg(&[None, Some(1.0), Some(0.0), Some(-1.0), Some(f64::NAN), Some(f64::INFINITY)], 3),
        norm_type: rng.arg(&[2.0, 1.0, 0.0, -1.0, f64::NAN, f64::INFINITY], 2),
        scale_grad_by_freq: rng.coin(),
        sparse: rng.coin(),
    };
    s.call(
        "embedding_with",
        || format!("{}, {}, {opts:?}", idx.desc, weight.desc),
        || F::embedding_with(&idx.t, &weight.t, opts),
    );

    // Bags: 1-D input with offsets (unsorted, out of range, negative), or 2-D without.
    let two_d = rng.coin();
    let bag_in = if two_d { index(rng, &[2, 3], rows as i64) } else { index(rng, &[5], rows as i64) };
    let offsets = if two_d || rng.odd(4) {
        None
    } else {
        let vals = rng.arg(
            &[vec![0i64, 2], vec![3, 1], vec![0, 9], vec![-1, 0], vec![], vec![0], vec![0, i64::MAX]],
            1,
        );
        let od_ = rng.arg(&[DType::I64, DType::I64, DType::I32, DType::F32], 3);
        let t = Tensor::from_vec(vals.clone(), [vals.len()]).and_then(|t| t.to_dtype(od_)).expect("offsets");
        Some(Input { t, desc: format!("offsets {od_:?} {vals:?}") })
    };
    let mode = rng.arg(&["sum", "mean", "max", "bogus"], 3);
    let max_norm = rng.arg(&[None, Some(1.0), Some(f64::NAN), Some(-1.0)], 2);
    let norm_type = rng.arg(&[2.0, 0.0, f64::NAN], 1);
    let (sgf, sparse, ilo) = (rng.coin(), rng.coin(), rng.coin());
    // (per-sample weights: torch's "sum" mode only)
    let psw = if rng.coin() || (rng.tame && mode != "sum") {
        None
    } else {
        Some(shaped_as(rng, bag_in.t.dims(), weight.t.dtype()))
    };
    s.call(
        "embedding_bag",
        || {
            format!(
                "{}, {}, {}, max_norm {max_norm:?}, norm_type {norm_type}, scale_grad {sgf}, {mode:?}, sparse {sparse}, psw {}, include_last_offset {ilo}, padding_idx {pidx:?}",
                bag_in.desc,
                weight.desc,
                od(&offsets),
                od(&psw)
            )
        },
        || {
            F::embedding_bag(
                &bag_in.t,
                &weight.t,
                ot(&offsets),
                max_norm,
                norm_type,
                sgf,
                mode,
                sparse,
                ot(&psw),
                ilo,
                pidx,
            )
        },
    );

    let classes = rng.arg(&[-1i64, 8, 0, 1, 3, -2, i64::MIN, i64::MAX], 2);
    let oh = index(rng, &ishape, 4);
    s.call("one_hot", || format!("{}, {classes}", oh.desc), || F::one_hot(&oh.t, classes));
}

/// Activations, softmaxes, dropout and the in-place variants.
fn activations(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x = if rng.tame { batch(rng, 1) } else { any(rng) };
    let (t, d) = (&x.t, x.desc.as_str());
    let dim = rng.arg(&DIMS, 3);
    let dt =
        rng.arg(&[None, None, Some(DType::F32), Some(DType::I64), Some(DType::Bool), Some(DType::F16)], 3);
    s.call("softmax", || format!("{d}, {dim}, {dt:?}"), || F::softmax(t, dim, dt));
    s.call("log_softmax", || format!("{d}, {dim}, {dt:?}"), || F::log_softmax(t, dim, dt));
    s.call("softmin", || format!("{d}, {dim}, {dt:?}"), || F::softmin(t, dim, dt));
    let tau = rng.arg(&[1.0, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300], 2);
    let hard = rng.coin();
    s.call(
        "gumbel_softmax",
        || format!("{d}, tau {tau}, hard {hard}, {dim}"),
        || F::gumbel_softmax(t, tau, hard, dim),
    );
    s.call("glu", || format!("{d}, {dim}"), || F::glu(t, dim));
    let (a, b) = (rng.arg(&F64S, 2), rng.arg(&F64S, 2));
    let training = rng.coin();
    let c = t.dims().get(1).copied().unwrap_or(1);
    let pshape = [rng.arg(&[1, c, 3, 2], 2)];
    let pw = shaped(rng, &pshape);
    s.call("prelu", || format!("{d}, {}", pw.desc), || F::prelu(t, &pw.t));
    s.call("rrelu", || format!("{d}, {a}, {b}, {training}"), || F::rrelu(t, a, b, training));
    s.call("hardshrink", || format!("{d}, {a}"), || F::hardshrink(t, a));
    s.call("softshrink", || format!("{d}, {a}"), || F::softshrink(t, a));
    s.call("threshold", || format!("{d}, {a}, {b}"), || F::threshold(t, a, b));
    s.call("hardtanh", || format!("{d}, {a}, {b}"), || F::hardtanh(t, a, b));
    s.call("softplus", || format!("{d}, {a}, {b}"), || F::softplus(t, a, b));
    s.call("elu", || format!("{d}, {a}"), || F::elu(t, a));
    s.call("celu", || format!("{d}, {a}"), || F::celu(t, a));
    s.call("leaky_relu", || format!("{d}, {a}"), || F::leaky_relu(t, a));
    let approx = rng.pick(&["none", "tanh", "bogus", ""]);
    s.call("gelu", || format!("{d}, {approx:?}"), || F::gelu(t, approx));
    s.call("logsigmoid", || d.to_string(), || F::logsigmoid(t));
    s.call("softsign", || d.to_string(), || F::softsign(t));
    s.call("tanhshrink", || d.to_string(), || F::tanhshrink(t));
    s.call("mish", || d.to_string(), || F::mish(t));
    s.call("hardswish", || d.to_string(), || F::hardswish(t));

    // Dropout family: p out of [0, 1] or NaN, every rank.
    let p = rng.arg(&PROBS, 3);
    s.call("dropout", || format!("{d}, {p}, {training}"), || F::dropout(t, p, training));
    s.call("dropout1d", || format!("{d}, {p}, {training}"), || F::dropout1d(t, p, training));
    s.call("dropout2d", || format!("{d}, {p}, {training}"), || F::dropout2d(t, p, training));
    s.call("dropout3d", || format!("{d}, {p}, {training}"), || F::dropout3d(t, p, training));
    s.call("alpha_dropout", || format!("{d}, {p}, {training}"), || F::alpha_dropout(t, p, training));
    s.call(
        "feature_alpha_dropout",
        || format!("{d}, {p}, {training}"),
        || F::feature_alpha_dropout(t, p, training),
    );

    // In place, on a fresh input each (an expanded one overlaps itself).
    let y = if rng.tame { batch(rng, 1) } else { any(rng) };
    let (u, e) = (&y.t, y.desc.as_str());
    match rng.below(11) {
        0 => s.call("relu_", || e.to_string(), || F::relu_(u)),
        1 => s.call("elu_", || format!("{e}, {a}"), || F::elu_(u, a)),
        2 => s.call("leaky_relu_", || format!("{e}, {a}"), || F::leaky_relu_(u, a)),
        3 => s.call("hardtanh_", || format!("{e}, {a}, {b}"), || F::hardtanh_(u, a, b)),
        4 => s.call("selu_", || e.to_string(), || F::selu_(u)),
        5 => s.call("celu_", || format!("{e}, {a}"), || F::celu_(u, a)),
        6 => s.call("threshold_", || format!("{e}, {a}, {b}"), || F::threshold_(u, a, b)),
        7 => s.call("rrelu_", || format!("{e}, {a}, {b}, {training}"), || F::rrelu_(u, a, b, training)),
        8 => s.call("dropout_", || format!("{e}, {p}, {training}"), || F::dropout_(u, p, training)),
        9 => {
            s.call("alpha_dropout_", || format!("{e}, {p}, {training}"), || F::alpha_dropout_(u, p, training))
        }
        _ => s.call(
            "feature_alpha_dropout_",
            || format!("{e}, {p}, {training}"),
            || F::feature_alpha_dropout_(u, p, training),
        ),
    }
}

/// Scaled dot-product attention and the functional multi-head attention.
fn attention(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (b, h, l, e) =
        (rng.arg(&[1usize, 2, 0], 2), rng.pick(&[1usize, 2, 4]), rng.arg(&[1usize, 3, 0], 2), 4);
    let hk = rng.arg(&[h, h, 1, 3], 2);
    let sl = rng.arg(&[2usize, 3, 0], 2);
    let q = shaped(rng, &[b, h, l, e]);
    let k = shaped_as(rng, &[b, hk, sl, e], q.t.dtype());
    let vshape = [b, hk, sl, rng.pick(&[e, 2])];
    let v = shaped_as(rng, &vshape, q.t.dtype());
    let m = if rng.coin() { None } else { Some(mask(rng, &[l, sl])) };
    let dp = rng.arg(&[0.0, 0.0, 0.5, 1.0, -1.0, f64::NAN], 4);
    let causal = rng.coin();
    let scale =
        rng.arg(&[None, None, Some(0.5), Some(f64::NAN), Some(0.0), Some(-1.0), Some(f64::INFINITY)], 3);
    let gqa = rng.coin();
    s.call(
        "scaled_dot_product_attention",
        || {
            format!(
                "{}, {}, {}, {}, {dp}, causal {causal}, scale {scale:?}, gqa {gqa}",
                q.desc,
                k.desc,
                v.desc,
                od(&m)
            )
        },
        || F::scaled_dot_product_attention(&q.t, &k.t, &v.t, ot(&m), dp, causal, scale, gqa),
    );

    // multi_head_attention_forward: [L, N, E] query, packed or separate projections.
    let ed = rng.arg(&[4usize, 4, 6, 0], 3);
    let heads = rng.arg(&[1usize, 2, 2, 3, 0, usize::MAX], 3);
    let check = rng.arg(&[ed, ed, ed + 1], 2);
    let n = rng.pick(&[1usize, 2]);
    let separate = rng.one_in(3);
    let qm = shaped(rng, &[l.max(1), n, ed]);
    let km = shaped_as(rng, &[sl.max(1), n, ed], qm.t.dtype());
    let vm = shaped_as(rng, &[sl.max(1), n, ed], qm.t.dtype());
    // (tame: the packed projection unless separate ones are used, both key/value biases or none)
    let ipw = if rng.tame && !separate {
        Some(shaped_as(rng, &[3 * ed, ed], qm.t.dtype()))
    } else {
        maybe(rng, &[3 * ed, ed], qm.t.dtype())
    };
    let ipb = maybe(rng, &[3 * ed], qm.t.dtype());
    let (bk, bv) = if rng.coin() {
        (None, None)
    } else if rng.tame {
        (Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())), Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())))
    } else {
        (Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())), maybe(rng, &[1, 1, ed], qm.t.dtype()))
    };
    let opw = shaped_as(rng, &[ed, ed], qm.t.dtype());
    let opb = maybe(rng, &[ed], qm.t.dtype());
    let zero_attn = rng.coin();
    let kpm = if rng.coin() { None } else { Some(mask(rng, &[n, sl.max(1)])) };
    let am = if rng.coin() { None } else { Some(mask(rng, &[l.max(1), sl.max(1)])) };
    let (qw, kw, vw) = if separate && rng.tame {
        let d = qm.t.dtype();
        (
            Some(shaped_as(rng, &[ed, ed], d)),
            Some(shaped_as(rng, &[ed, ed], d)),
            Some(shaped_as(rng, &[ed, ed], d)),
        )
    } else if separate {
        (
            maybe(rng, &[ed, ed], qm.t.dtype()),
            maybe(rng, &[ed, ed], qm.t.dtype()),
            maybe(rng, &[ed, ed], qm.t.dtype()),
        )
    } else {
        (None, None, None)
    };
    let hd = if heads == 0 || heads == usize::MAX { 1 } else { (ed / heads).max(1) };
    let sk = if rng.odd(4) {
        Some(shaped_as(rng, &[n * heads.min(4), sl.max(1), hd], qm.t.dtype()))
    } else {
        None
    };
    let (training, need, avg, causal2) = (rng.coin(), rng.coin(), rng.coin(), rng.one_in(4));
    let args = || {
        format!(
            "q {}, k {}, v {}, embed_dim_to_check {check}, heads {heads}, in_proj {} + {}, bias_k {}, bias_v {}, \
             zero_attn {zero_attn}, dropout {dp}, out_proj {} + {}, training {training}, key_padding_mask {}, \
             need_weights {need}, attn_mask {}, separate {separate} ({}, {}, {}), static_k {}, average {avg}, \
             is_causal {causal2}",
            qm.desc,
            km.desc,
            vm.desc,
            od(&ipw),
            od(&ipb),
            od(&bk),
            od(&bv),
            opw.desc,
            od(&opb),
            od(&kpm),
            od(&am),
            od(&qw),
            od(&kw),
            od(&vw),
            od(&sk)
        )
    };
    s.call("multi_head_attention_forward", args, || {
        let opts = MhaForwardOptions {
            training,
            key_padding_mask: ot(&kpm),
            need_weights: need,
            attn_mask: ot(&am),
            use_separate_proj_weight: separate,
            q_proj_weight: ot(&qw),
            k_proj_weight: ot(&kw),
            v_proj_weight: ot(&vw),
            static_k: ot(&sk),
            static_v: ot(&sk),
            average_attn_weights: avg,
            is_causal: causal2,
        };
        F::multi_head_attention_forward(
            &qm.t,
            &km.t,
            &vm.t,
            check,
            heads,
            ot(&ipw),
            ot(&ipb),
            ot(&bk),
            ot(&bv),
            zero_attn,
            dp,
            &opw.t,
            ot(&opb),
            &opts,
        )
    });
}

/// RNN cells and the sequence functions with mismatched sizes.
fn recurrent(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (bsz, i, h) = (rng.arg(&[1usize, 2, 0], 2), 3usize, rng.arg(&[4usize, 4, 1, 0], 3));
    let d = dtype(rng);
    // Cells: each with its own gate count (wild: sometimes another one's).
    for (name, own) in [("lstm_cell", 4usize), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)] {
        let gates = rng.arg(&[own, own, own, 4, 3, 1], 3);
        let x = shaped_as(rng, &[bsz, i], d);
        let hx = shaped_as(rng, &[bsz, h], d);
        let cx = shaped_as(rng, &[bsz, h], d);
        let w_ih = shaped_as(rng, &[gates * h, i], d);
        let w_hh = shaped_as(rng, &[gates * h, h], d);
        let (b_ih, b_hh) = (maybe(rng, &[gates * h], d), maybe(rng, &[gates * h], d));
        let args = || {
            format!(
                "{}, h {}, c {}, w_ih {}, w_hh {}, b_ih {}, b_hh {}",
                x.desc,
                hx.desc,
                cx.desc,
                w_ih.desc,
                w_hh.desc,
                od(&b_ih),
                od(&b_hh)
            )
        };
        let (b1, b2) = (ot(&b_ih), ot(&b_hh));
        s.call(name, args, || match own {
            4 => F::lstm_cell(&x.t, (&hx.t, &cx.t), &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
            3 => F::gru_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
            _ if name == "rnn_tanh_cell" => {
                F::rnn_tanh_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ())
            }
            _ => F::rnn_relu_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
        });
    }

    // Sequences: flat parameter lists of a wrong length or shapes, bad layer counts.
    let t_len = rng.arg(&[2usize, 1, 0], 2);
    let layers = rng.arg(&[1usize, 1, 2, 0, usize::MAX], 3);
    let (bidir, bias, batch_first, train) = (rng.one_in(3), rng.coin(), rng.one_in(4), rng.coin());
    let seq =
        if batch_first { shaped_as(rng, &[bsz, t_len, i], d) } else { shaped_as(rng, &[t_len, bsz, i], d) };
    let dirs = if bidir { 2 } else { 1 };
    let drop = rng.arg(&PROBS, 3);
    let h0 = shaped_as(rng, &[layers.min(2) * dirs, bsz, h], d);
    let c0 = shaped_as(rng, &[layers.min(2) * dirs, bsz, h], d);
    for (name, own) in [("lstm", 4usize), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)] {
        let gates = rng.arg(&[own, own, own, 4, 3, 1], 3);
        let mut params = Vec::new();
        for layer in 0..layers.min(2) * dirs {
            let input = if layer < dirs { i } else { h * dirs };
            params.push(shaped_as(rng, &[gates * h, input], d));
            params.push(shaped_as(rng, &[gates * h, h], d));
            if bias {
                params.push(shaped_as(rng, &[gates * h], d));
                params.push(shaped_as(rng, &[gates * h], d));
            }
        }
        match rng.arg(&[2, 0, 1, 3], 1) {
            0 if !params.is_empty() => {
                params.pop();
            }
            1 => params.push(any(rng)),
            _ => {}
        }
        let ps: Vec<Tensor> = params.iter().map(|p| p.t.clone()).collect();
        let pdesc: Vec<&str> = params.iter().map(|p| p.desc.as_str()).collect();
        let args = || {
            format!(
                "{}, h0 {}, c0 {}, params {pdesc:?}, bias {bias}, layers {layers}, dropout {drop}, train {train}, \
                 bidirectional {bidir}, batch_first {batch_first}",
                seq.desc,
                h0.desc,
                c0.desc
            )
        };
        let hxs = [h0.t.clone(), c0.t.clone()];
        let (x, h0) = (&seq.t, &h0.t);
        s.call(name, args, || match name {
            "lstm" => F::lstm(x, &hxs, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            "gru" => F::gru(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            "rnn_tanh" => F::rnn_tanh(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            _ => F::rnn_relu(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
        });
    }
}

/// Cosine similarity, pairwise distance, cdist.
fn distances(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x1 = if rng.tame { shaped(rng, &[2, 3]) } else { any(rng) };
    let x2 = if rng.tame || rng.coin() { shaped(rng, x1.t.dims()) } else { any(rng) };
    let dim = rng.arg(&DIMS, 3);
    let eps = rng.arg(&EPSS, 2);
    let p = rng.arg(&PNORMS, 4);
    let keep = rng.coin();
    s.call(
        "cosine_similarity",
        || format!("{}, {}, {dim}, {eps}", x1.desc, x2.desc),
        || F::cosine_similarity(&x1.t, &x2.t, dim, eps),
    );
    s.call(
        "pairwise_distance",
        || format!("{}, {}, p {p}, {eps}, keepdim {keep}", x1.desc, x2.desc),
        || F::pairwise_distance(&x1.t, &x2.t, p, eps, keep),
    );
    s.call("cdist", || format!("{}, {}, p {p}", x1.desc, x2.desc), || x1.t.cdist(&x2.t, p));
}

// ---------------------------------------------------------------------------------------------
// Losses
// ---------------------------------------------------------------------------------------------

/// The losses with class indices, probabilities, bad weights, margins, betas and reductions.
fn losses(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (n, c) = (rng.arg(&[2usize, 3, 1, 0], 3), rng.arg(&[3usize, 3, 1, 0], 3));
    let lshape = match rng.below(5) {
        0 => vec![c],
        1 => vec![n, c, 2],
        _ => vec![n, c],
    };
    let logits = shaped(rng, &lshape);
    let d = logits.t.dtype();
    let tshape: Vec<usize> = match lshape.len() {
        1 => vec![],
        2 => vec![n],
        _ => vec![n, 2],
    };
    let target = if rng.one_in(4) { shaped_as(rng, &lshape, d) } else { index(rng, &tshape, c as i64) };
    let weight = maybe(rng, &[c], d);
    let ii = rng.arg(&[-100i64, -100, -1, 0, i64::MIN, i64::MAX], 4);
    let red = rng.arg(&REDUCTIONS, 3);
    let ls = rng.arg(&[0.0, 0.0, 0.1, 1.0, -0.1, 1.5, f64::NAN], 4);
    s.call(
        "cross_entropy",
        || format!("{}, {}, {}, ignore {ii}, {red:?}, smoothing {ls}", logits.desc, target.desc, od(&weight)),
        || F::cross_entropy(&logits.t, &target.t, ot(&weight), ii, red, ls),
    );
    s.call(
        "nll_loss",
        || format!("{}, {}, {}, ignore {ii}, {red:?}", logits.desc, target.desc, od(&weight)),
        || F::nll_loss(&logits.t, &target.t, ot(&weight), ii, red),
    );
    let lw = shaped_as(rng, &[c, 4], d);
    let feats = shaped_as(rng, &[n, 4], d);
    let lb = maybe(rng, &[c], d);
    let lce_opts = LinearCrossEntropyOptions {
        allow_retain_graph: rng.coin(),
        batch_chunk_size: rng.arg(&[None, Some(1), Some(0), Some(usize::MAX)], 2),
        chunking_method: rng
            .arg(&[Some("auto"), None, Some("aspect_ratio:0"), Some("aspect_ratio:x"), Some("bogus")], 2)
            .map(str::to_string),
        acc_policy: rng.arg(&["auto", "accurate", "compact", "bogus"], 3).to_string(),
        acc_dtype: rng.arg(&[None, Some(DType::F32), Some(DType::I64), Some(DType::Bool)], 2),
    };
    let lii = rng.pick(&[None, Some(ii)]);
    let tn = index(rng, &[n], c as i64);
    s.call(
        "linear_cross_entropy",
        || {
            format!(
                "{}, {}, {}, bias {}, weight {}, {red:?}, ignore {lii:?}, smoothing {ls}, {lce_opts:?}",
                feats.desc,
                lw.desc,
                tn.desc,
                od(&lb),
                od(&weight)
            )
        },
        || {
            F::linear_cross_entropy(
                &feats.t,
                &lw.t,
                &tn.t,
                ot(&lb),
                ot(&weight),
                red,
                lii,
                ls,
                Some(&lce_opts),
            )
        },
    );

    // Regression losses: mismatched shapes broadcast or fail; beta/delta out of range.
    let x = if rng.tame {
        let shape = rng.pick(&[vec![4], vec![2, 3]]);
        shaped(rng, &shape)
    } else {
        any(rng)
    };
    let y = if rng.tame || rng.coin() { shaped(rng, x.t.dims()) } else { any(rng) };
    let (a, b) = (&x.t, &y.t);
    let args2 = || format!("{}, {}, {red:?}", x.desc, y.desc);
    let beta = rng.arg(&[1.0, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY], 2);
    s.call("mse_loss", args2, || F::mse_loss(a, b, red));
    s.call("l1_loss", args2, || F::l1_loss(a, b, red));
    s.call("smooth_l1_loss", || format!("{}, beta {beta}", args2()), || F::smooth_l1_loss(a, b, red, beta));
    s.call("huber_loss", || format!("{}, delta {beta}", args2()), || F::huber_loss(a, b, red, beta));
    s.call("soft_margin_loss", args2, || F::soft_margin_loss(a, b, red));
    let log_target = rng.coin();
    s.call("kl_div", || format!("{}, log_target {log_target}", args2()), || F::kl_div(a, b, red, log_target));
    let bw = maybe(rng, x.t.dims(), x.t.dtype());
    // (tame: probabilities, as torch requires: the sigmoids of both)
    let sigm = rng.tame;
    let sig = |t: &Tensor| if sigm { t.sigmoid().ok() } else { None };
    let (pa, pb) = (sig(a), sig(b));
    let (pa, pb) = (pa.as_ref().unwrap_or(a), pb.as_ref().unwrap_or(b));
    s.call(
        "binary_cross_entropy",
        || format!("{}, weight {}, sigmoids of both first {sigm}", args2(), od(&bw)),
        || F::binary_cross_entropy(pa, pb, ot(&bw), red),
    );
    let pw = maybe(rng, &[x.t.dims().last().copied().unwrap_or(1)], x.t.dtype());
    s.call(
        "binary_cross_entropy_with_logits",
        || format!("{}, weight {}, pos_weight {}", args2(), od(&bw), od(&pw)),
        || F::binary_cross_entropy_with_logits(a, b, ot(&bw), red, ot(&pw)),
    );
    let (log_input, full) = (rng.coin(), rng.coin());
    let eps = rng.arg(&EPSS, 2);
    s.call(
        "poisson_nll_loss",
        || format!("{}, log_input {log_input}, full {full}, eps {eps}", args2()),
        || F::poisson_nll_loss(a, b, log_input, full, eps, red),
    );
    let var = if rng.tame {
        let (shape, d) = (x.t.dims().to_vec(), x.t.dtype());
        Input { t: Tensor::ones(shape.clone(), d).expect("a variance"), desc: format!("ones {d:?}{shape:?}") }
    } else if rng.coin() {
        shaped(rng, x.t.dims())
    } else {
        any(rng)
    };
    s.call(
        "gaussian_nll_loss",
        || format!("{}, var {}, full {full}, eps {eps}", args2(), var.desc),
        || F::gaussian_nll_loss(a, b, &var.t, full, eps, red),
    );
    let sv = rng.arg(&[1.0, -1.0, 0.0, f64::NAN], 1);
    s.call(
        "gaussian_nll_loss(scalar var)",
        || format!("{}, var {sv}, eps {eps}", args2()),
        || F::gaussian_nll_loss(a, b, sv, full, eps, red),
    );

    // Margin and embedding losses: targets of ±1 (or not), margins non-finite.
    let margin = rng.arg(&F64S, 3);
    let z = if rng.tame || rng.coin() { shaped(rng, x.t.dims()) } else { any(rng) };
    // (targets: of the inputs' shape for the ranking loss, one per row for the cosine one)
    let pm = shaped(rng, x.t.dims());
    let pc = shaped(rng, &[x.t.dims().first().copied().unwrap_or(1)]);
    s.call(
        "hinge_embedding_loss",
        || format!("{}, margin {margin}", args2()),
        || F::hinge_embedding_loss(a, b, margin, red),
    );
    s.call(
        "margin_ranking_loss",
        || format!("{}, {}, {}, margin {margin}, {red:?}", x.desc, y.desc, pm.desc),
        || F::margin_ranking_loss(a, b, &pm.t, margin, red),
    );
    s.call(
        "cosine_embedding_loss",
        || format!("{}, {}, {}, margin {margin}, {red:?}", x.desc, z.desc, pc.desc),
        || F::cosine_embedding_loss(a, &z.t, &pc.t, margin, red),
    );
    let (pn, swap) = (rng.arg(&[2.0, 1.0, 0.0, -1.0, f64::NAN], 2), rng.coin());
    s.call(
        "triplet_margin_loss",
        || {
            format!(
                "{}, {}, {}, margin {margin}, p {pn}, eps {eps}, swap {swap}, {red:?}",
                x.desc, y.desc, z.desc
            )
        },
        || F::triplet_margin_loss(a, b, &z.t, margin, pn, eps, swap, red),
    );
    s.call(
        "triplet_margin_with_distance_loss",
        || format!("{}, {}, {}, None, margin {margin}, swap {swap}, {red:?}", x.desc, y.desc, z.desc),
        || F::triplet_margin_with_distance_loss(a, b, &z.t, None, margin, swap, red),
    );

    // Multi-label and multi-class margins.
    let mi = shaped(rng, &[n, c]);
    let mt = index(rng, &[n, c], c as i64);
    let mw = maybe(rng, &[c], mi.t.dtype());
    let ms = shaped(rng, &[n, c]);
    let mp = rng.arg(&[1i64, 2, 0, 3, -1, i64::MAX], 2);
    s.call(
        "multilabel_margin_loss",
        || format!("{}, {}, {red:?}", mi.desc, mt.desc),
        || F::multilabel_margin_loss(&mi.t, &mt.t, red),
    );
    s.call(
        "multilabel_soft_margin_loss",
        || format!("{}, {}, {}, {red:?}", mi.desc, ms.desc, od(&mw)),
        || F::multilabel_soft_margin_loss(&mi.t, &ms.t, ot(&mw), red),
    );
    let mc = index(rng, &[n], c as i64);
    s.call(
        "multi_margin_loss",
        || format!("{}, {}, p {mp}, margin {margin}, {}, {red:?}", mi.desc, mc.desc, od(&mw)),
        || F::multi_margin_loss(&mi.t, &mc.t, mp, margin, ot(&mw), red),
    );
}

/// CTC: targets longer than the input, blanks out of range, lengths that do not match (on a
/// thread of its own: its recursion runs over the frames).
fn ctc(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (t, n, c) =
        (rng.arg(&[3usize, 5, 1, 0], 3), rng.arg(&[1usize, 2, 0], 2), rng.arg(&[3usize, 3, 1, 0], 2));
    let lp_shape = if rng.odd(5) { vec![t, c] } else { perturb(rng, &[t, n, c]) };
    let lp_dtype = rng.arg(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::I64], 3);
    let lp_vals = fill(rng, lp_shape.iter().product(), true);
    let s_len = rng.arg(&[1usize, 2, 0, 4], 3);
    let two_d = rng.coin();
    let t_shape = if two_d { vec![n, s_len] } else { vec![n * s_len] };
    let t_vals: Vec<i64> = (0..t_shape.iter().product::<usize>())
        .map(|_| rng.arg(&[1, 2, 1, 2, 0, c as i64, -1, i64::MAX], 2))
        .collect();
    let lens = |rng: &mut Rng, top: i64| -> Vec<i64> {
        let len = rng.arg(&[n, n, n + 1, 0], 2);
        (0..len).map(|_| rng.arg(&[top, top, 0, 1, top + 1, -1, i64::MAX, i64::MIN], 2)).collect()
    };
    let il = lens(rng, t as i64);
    let tl = lens(rng, s_len as i64);
    let len_dtype = rng.arg(&[DType::I64, DType::I64, DType::I32, DType::F32], 3);
    let blank = rng.arg(&[0usize, 0, 1, c, c.saturating_sub(1), usize::MAX], 2);
    let red = rng.arg(&REDUCTIONS, 3);
    let zi = rng.coin();
    let args = format!(
        "log_probs {lp_dtype:?}{lp_shape:?} {}, targets {t_shape:?} {t_vals:?}, input_lengths {len_dtype:?} {il:?}, \
         target_lengths {tl:?}, blank {blank}, {red:?}, zero_infinity {zi}",
        show(&lp_vals)
    );
    s.timed("ctc_loss", args, move || {
        let lp = Tensor::from_vec(lp_vals, lp_shape)?.to_dtype(lp_dtype)?;
        let targets = Tensor::from_vec(t_vals, t_shape)?;
        let il = Tensor::from_vec(il.clone(), [il.len()])?.to_dtype(len_dtype)?;
        let tl = Tensor::from_vec(tl.clone(), [tl.len()])?.to_dtype(len_dtype)?;
        F::ctc_loss(&lp, &targets, &il, &tl, blank, red, zi).map(|_| ())
    });
}

// ---------------------------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------------------------

/// Constructors with zero and overflowing sizes (only pairs whose element counts overflow: a
/// representable terabyte is for the ignored test), bad options.
fn constructors(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let pairs = [
        (0usize, 0usize),
        (3, 0),
        (0, 3),
        (3, 2),
        (usize::MAX, 2),
        (2, usize::MAX),
        (1 << 62, 1 << 62),
        (usize::MAX, usize::MAX),
        (1 << 62, 8),
    ];
    let (a, b) = rng.arg(&pairs, 4);
    let bias = rng.coin();
    let dt = rng.arg(&[DType::F32, DType::F64, DType::F16, DType::I64, DType::Bool], 3);
    s.call("Linear::new", || format!("{a}, {b}, {bias}"), || Linear::new(a, b, bias));
    s.call("Linear::with_dtype", || format!("3, 2, {bias}, {dt:?}"), || Linear::with_dtype(3, 2, bias, dt));
    let (ea, eb) = rng.arg(
        &[
            (0usize, 0usize),
            (3, 2),
            (0, 4),
            (3, 0),
            (usize::MAX, 2),
            (2, usize::MAX),
            (1 << 62, 1 << 62),
            (usize::MAX, 0),
        ],
        4,
    );
    let pidx = rng.arg(&[None, Some(0i64), Some(-1), Some(3), Some(-4), Some(i64::MAX), Some(i64::MIN)], 3);
    s.call("Embedding::new", || format!("{ea}, {eb}, {pidx:?}"), || Embedding::new(ea, eb, pidx));

    let (ci, co) = rng.arg(&[(2usize, 4usize), (3, 3), (0, 0), (usize::MAX, 1), (1 << 62, 1 << 62)], 3);
    let kernels: [&[usize]; 7] =
        [&[3], &[2, 3], &[0], &[1, 1, 1], &[usize::MAX, 2], &[1 << 62, 1 << 62], &[]];
    let kernel = rng.arg(&kernels, 3);
    let opts = ConvOptions {
        stride: rng.arg(&[vec![1], vec![2, 1], vec![0], vec![usize::MAX], vec![1, 1, 1], vec![]], 2),
        padding: padding(rng, 2),
        dilation: rng.arg(&[vec![1], vec![2, 2], vec![0], vec![usize::MAX]], 2),
        groups: rng.arg(&[1, 1, 0, 3, usize::MAX], 2),
        bias: rng.coin(),
        padding_mode: rng.arg(&["zeros", "reflect", "replicate", "circular", "bogus"], 4),
        dtype: rng.arg(&[DType::F32, DType::F64, DType::I64], 2),
    };
    let desc = format!("{ci}, {co}, {kernel:?}, {opts:?}");
    s.call("Conv2d::new", || desc.clone(), || Conv2d::new(ci, co, kernel, opts.clone()));

    let (ri, rh) = rng.arg(
        &[(3usize, 4usize), (0, 4), (3, 0), (usize::MAX, 2), (2, usize::MAX / 4), (1 << 62, 1 << 62)],
        3,
    );
    // (at most 2 layers here: a huge count of small layers is a long loop of small allocations)
    let ropts = RnnOptions {
        num_layers: rng.pick(&[0, 1, 2]),
        bias: rng.coin(),
        batch_first: rng.coin(),
        dropout: rng.arg(&PROBS, 3),
        bidirectional: rng.coin(),
        proj_size: rng.arg(&[0, 0, 1, rh, usize::MAX], 2),
    };
    let desc = format!("{ri}, {rh}, {ropts:?}");
    s.call("LSTM::new", || desc.clone(), || LSTM::new(ri, rh, ropts.clone()));
    let gopts = RnnOptions { proj_size: 0, ..ropts.clone() };
    s.call("GRU::new", || desc.clone(), || GRU::new(ri, rh, gopts.clone()));
    let nl = rng.arg(&["tanh", "relu", "bogus"], 2);
    s.call("RNN::new", || format!("{desc}, {nl:?}"), || RNN::new(ri, rh, nl, gopts.clone()));

    let ed = rng.arg(&[4usize, 6, 0, usize::MAX, 1 << 62, usize::MAX / 3 + 1], 2);
    let heads = rng.arg(&[1usize, 2, 0, 3, usize::MAX], 2);
    let mopts = MultiheadAttentionOptions {
        dropout: rng.arg(&PROBS, 3),
        bias: rng.coin(),
        kdim: rng.arg(&[None, None, Some(3), Some(0), Some(usize::MAX)], 3),
        vdim: rng.arg(&[None, None, Some(5), Some(0), Some(usize::MAX)], 3),
        batch_first: rng.coin(),
        add_bias_kv: rng.coin(),
        add_zero_attn: rng.coin(),
    };
    let desc = format!("{ed}, {heads}, {mopts:?}");
    s.call("MultiheadAttention::new", || desc.clone(), || MultiheadAttention::new(ed, heads, mopts.clone()));

    let dm = rng.arg(&[4usize, 6, 0, usize::MAX], 2);
    let topts = TransformerLayerOptions {
        dim_feedforward: rng.arg(&[8, 0, usize::MAX, usize::MAX / 2], 2),
        dropout: rng.arg(&PROBS, 3),
        activation: rng.arg(&["relu", "gelu", "bogus", ""], 2),
        layer_norm_eps: rng.arg(&EPSS, 2),
        batch_first: rng.coin(),
        norm_first: rng.coin(),
        bias: rng.coin(),
        activation_fn: None,
    };
    let desc = format!("{dm}, {heads}, {topts:?}");
    s.call(
        "TransformerEncoderLayer::new",
        || desc.clone(),
        || TransformerEncoderLayer::new(dm, heads, topts.clone()),
    );

    let nf = rng.arg(&[3usize, 0, usize::MAX], 2);
    let eps = rng.arg(&EPSS, 2);
    let mom = rng.arg(&[None, Some(0.1), Some(f64::NAN), Some(-1.0), Some(2.0)], 2);
    let (affine, track) = (rng.coin(), rng.coin());
    s.call(
        "BatchNorm::new",
        || format!("{nf}, {eps}, {mom:?}, {affine}, {track}"),
        || BatchNorm::new(nf, eps, mom, affine, track),
    );
    let (g, ch) = (rng.arg(&[1usize, 2, 0, 3, usize::MAX], 2), rng.arg(&[4usize, 0, 3, usize::MAX], 2));
    s.call("GroupNorm::new", || format!("{g}, {ch}, {eps}, {affine}"), || GroupNorm::new(g, ch, eps, affine));
    let ns: [&[usize]; 6] = [&[4], &[2, 3], &[], &[0], &[usize::MAX], &[1 << 62, 1 << 62]];
    let ns = rng.arg(&ns, 2);
    s.call(
        "LayerNorm::new",
        || format!("{ns:?}, {eps}, {affine}, {track}"),
        || LayerNorm::new(ns, eps, affine, track),
    );
    let reps = rng.pick(&[None, Some(eps)]);
    s.call("RMSNorm::new", || format!("{ns:?}, {reps:?}, {affine}"), || RMSNorm::new(ns, reps, affine));
}

/// Small well-formed modules, built once per round.
struct Modules {
    linear: Linear,
    conv: Conv2d,
    lstm: LSTM,
    gru: GRU,
    mha: MultiheadAttention,
    encoder: TransformerEncoderLayer,
    embedding: Embedding,
    batch_norm: BatchNorm,
    layer_norm: LayerNorm,
    group_norm: GroupNorm,
}

impl Modules {
    fn new() -> Result<Modules> {
        let conv_opts = ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() };
        let enc_opts = TransformerLayerOptions { dim_feedforward: 8, dropout: 0.0, ..Default::default() };
        Ok(Modules {
            linear: Linear::new(3, 2, true)?,
            conv: Conv2d::new(2, 4, &[3], conv_opts)?,
            lstm: LSTM::new(3, 4, RnnOptions { num_layers: 2, ..Default::default() })?,
            gru: GRU::new(3, 4, RnnOptions { bidirectional: true, ..Default::default() })?,
            mha: MultiheadAttention::new(4, 2, MultiheadAttentionOptions::default())?,
            encoder: TransformerEncoderLayer::new(4, 2, enc_opts)?,
            embedding: Embedding::new(5, 3, Some(0))?,
            batch_norm: BatchNorm::new_2d(2)?,
            layer_norm: LayerNorm::new(&[3], 1e-5, true, true)?,
            group_norm: GroupNorm::new(2, 4, 1e-5, true)?,
        })
    }
}

/// Forward passes on inputs of a wrong rank, size or dtype.
fn forwards(s: &mut Sweep, rng: &mut Rng, m: &Modules) {
    rng.mood();
    let x = if !rng.tame && rng.coin() { any(rng) } else { shaped(rng, &[2, 3]) };
    s.call("Linear::forward", || x.desc.clone(), || m.linear.forward(&x.t));
    s.call("LayerNorm::forward", || x.desc.clone(), || m.layer_norm.forward(&x.t));
    let img = if !rng.tame && rng.coin() { batch(rng, 2) } else { shaped(rng, &[1, 2, 4, 4]) };
    s.call("Conv2d::forward", || img.desc.clone(), || m.conv.forward(&img.t));
    s.call("BatchNorm2d::forward", || img.desc.clone(), || m.batch_norm.forward(&img.t));
    let img4 = if !rng.tame && rng.coin() { batch(rng, 2) } else { shaped(rng, &[2, 4, 3, 3]) };
    s.call("GroupNorm::forward", || img4.desc.clone(), || m.group_norm.forward(&img4.t));
    let ishape = rng.pick(&SHAPES);
    let idx = index(rng, ishape, 5);
    s.call("Embedding::forward", || idx.desc.clone(), || m.embedding.forward(&idx.t));

    let sshape = [rng.arg(&[2, 1, 0], 2), rng.pick(&[1, 2]), 3];
    let seq = shaped(rng, &sshape);
    let (bsz, d) = (seq.t.dims().get(1).copied().unwrap_or(1), seq.t.dtype());
    let h0 = shaped_as(rng, &[2, bsz, 4], d);
    let c0 = shaped_as(rng, &[2, bsz, 4], d);
    let with_state = rng.coin();
    s.call(
        "LSTM::forward",
        || format!("{}, state {with_state}: {}, {}", seq.desc, h0.desc, c0.desc),
        || m.lstm.forward(&seq.t, if with_state { Some((&h0.t, &c0.t)) } else { None }),
    );
    s.call(
        "GRU::forward",
        || format!("{}, state {with_state}: {}", seq.desc, h0.desc),
        || m.gru.forward(&seq.t, if with_state { Some(&h0.t) } else { None }),
    );

    let qshape = [rng.arg(&[3, 1, 0], 1), rng.pick(&[1, 2]), 4];
    let q = shaped(rng, &qshape);
    let kshape = [rng.arg(&[2, 3], 1), q.t.dims().get(1).copied().unwrap_or(1), 4];
    let k = shaped_as(rng, &kshape, q.t.dtype());
    let kpm = if rng.coin() { None } else { Some(mask(rng, &[k.t.dims().get(1).copied().unwrap_or(1), 2])) };
    let am = if rng.coin() { None } else { Some(mask(rng, &[3, 2])) };
    let (need, avg) = (rng.coin(), rng.coin());
    s.call(
        "MultiheadAttention::forward",
        || {
            format!(
                "q {}, k=v {}, key_padding_mask {}, need_weights {need}, attn_mask {}, average {avg}",
                q.desc,
                k.desc,
                od(&kpm),
                od(&am)
            )
        },
        || m.mha.forward(&q.t, &k.t, &k.t, ot(&kpm), need, ot(&am), avg),
    );
    // (self-attention: an [L, L] mask and an [N, L] key padding mask)
    let (l, n) = (q.t.dims().first().copied().unwrap_or(1), q.t.dims().get(1).copied().unwrap_or(1));
    let sm = if rng.coin() { None } else { Some(mask(rng, &[l, l])) };
    let skpm = if rng.coin() { None } else { Some(mask(rng, &[n, l])) };
    s.call(
        "TransformerEncoderLayer::forward_masked",
        || format!("{}, mask {}, key_padding_mask {}", q.desc, od(&sm), od(&skpm)),
        || m.encoder.forward_masked(&q.t, ot(&sm), ot(&skpm)),
    );
    let src = if rng.coin() { &q } else { &x };
    s.call("TransformerEncoderLayer::forward", || src.desc.clone(), || m.encoder.forward(&src.t));
}

// ---------------------------------------------------------------------------------------------
// Optimizers, schedulers, state dicts
// ---------------------------------------------------------------------------------------------

/// A parameter set, as values: `(shape, dtype, grad)` with a gradient of the parameter's shape
/// and dtype, of another, or none.
#[derive(Clone, Debug)]
struct ParamSpec {
    shape: Vec<usize>,
    dtype: DType,
    grad: Option<(Vec<usize>, DType)>,
}

fn param_specs(rng: &mut Rng) -> Vec<ParamSpec> {
    let count = rng.pick(&[0usize, 1, 2, 2]);
    (0..count)
        .map(|_| {
            let shape = rng.pick(&[vec![2, 3], vec![3], vec![], vec![0]]);
            let dtype = rng.pick(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::BF16]);
            let grad = match rng.arg(&[2, 2, 0, 1], 3) {
                0 => None,
                1 => Some((perturb(rng, &shape), rng.pick(&DType::ALL))),
                _ => Some((shape.clone(), dtype)),
            };
            ParamSpec { shape, dtype, grad }
        })
        .collect()
}

/// The parameters of `specs` with their gradients (a gradient that cannot be set is left out).
fn params(specs: &[ParamSpec]) -> Result<Vec<Tensor>> {
    specs
        .iter()
        .map(|p| {
            let t = Tensor::ones(p.shape.clone(), p.dtype)?.mul(0.5)?.requires_grad_(true)?;
            if let Some((shape, dtype)) = &p.grad {
                let g = Tensor::ones(shape.clone(), *dtype)?;
                let _ = t.set_grad(Some(g));
            }
            Ok(t)
        })
        .collect()
}

/// Hyper-parameters for any optimizer: valid, zero, negative, out of range, NaN.
#[derive(Clone, Copy, Debug)]
struct Hyper {
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
    momentum: f64,
    dampening: f64,
    nesterov: bool,
    other: f64,
    flag: bool,
}

fn hyper(rng: &mut Rng) -> Hyper {
    let odd = [f64::NAN, -1.0, 0.0, 1.0, 2.0, f64::INFINITY, -0.0];
    let mut pick = |normal: f64| if rng.odd(3) { rng.pick(&odd) } else { normal };
    let h = Hyper {
        lr: pick(1e-2),
        betas: (pick(0.9), pick(0.999)),
        eps: pick(1e-8),
        weight_decay: pick(0.0),
        momentum: pick(0.9),
        dampening: pick(0.0),
        nesterov: false,
        other: pick(0.5),
        flag: false,
    };
    Hyper { nesterov: rng.coin(), flag: rng.coin(), ..h }
}

/// The optimizer `kind` over `ps` with `h` (fields an optimizer lacks are ignored).
fn optimizer(kind: usize, ps: Vec<Tensor>, h: Hyper) -> Result<Box<dyn Optimizer>> {
    Ok(match kind {
        0 => Box::new(SGD::new(
            ps,
            SgdOptions {
                lr: h.lr,
                momentum: h.momentum,
                dampening: h.dampening,
                weight_decay: h.weight_decay,
                nesterov: h.nesterov,
                maximize: h.flag,
            },
        )?),
        1 => Box::new(Adam::new(
            ps,
            AdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                amsgrad: h.flag,
                maximize: h.nesterov,
            },
        )?),
        2 => Box::new(AdamW::new(
            ps,
            AdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                amsgrad: h.flag,
                maximize: false,
            },
        )?),
        3 => Box::new(RMSprop::new(
            ps,
            RMSpropOptions {
                lr: h.lr,
                alpha: h.other,
                eps: h.eps,
                weight_decay: h.weight_decay,
                momentum: h.momentum,
                centered: h.flag,
                maximize: h.nesterov,
            },
        )?),
        4 => Box::new(Adagrad::new(
            ps,
            AdagradOptions {
                lr: h.lr,
                lr_decay: h.other,
                weight_decay: h.weight_decay,
                initial_accumulator_value: h.dampening,
                eps: h.eps,
                maximize: h.flag,
            },
        )?),
        5 => Box::new(Adadelta::new(
            ps,
            AdadeltaOptions {
                lr: h.lr,
                rho: h.other,
                eps: h.eps,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
        6 => Box::new(NAdam::new(
            ps,
            NAdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                momentum_decay: h.other,
                decoupled_weight_decay: h.flag,
                maximize: h.nesterov,
            },
        )?),
        7 => Box::new(RAdam::new(
            ps,
            RAdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                decoupled_weight_decay: h.flag,
                maximize: h.nesterov,
            },
        )?),
        8 => Box::new(Adamax::new(
            ps,
            AdamaxOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
        9 => Box::new(Rprop::new(
            ps,
            RpropOptions { lr: h.lr, etas: h.betas, step_sizes: (h.eps, h.other), maximize: h.flag },
        )?),
        _ => Box::new(ASGD::new(
            ps,
            AsgdOptions {
                lr: h.lr,
                lambd: h.eps,
                alpha: h.other,
                t0: h.momentum,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
    })
}

const OPTIMIZERS: [&str; 11] =
    ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "NAdam", "RAdam", "Adamax", "Rprop", "ASGD"];

/// The per-parameter state names the optimizers use.
const STATE_NAMES: [&str; 12] = [
    "momentum_buffer",
    "exp_avg",
    "exp_avg_sq",
    "max_exp_avg_sq",
    "step",
    "square_avg",
    "grad_avg",
    "sum",
    "acc_delta",
    "exp_inf",
    "prev",
    "mu_product",
];

/// A state dict that does not fit: wrong group counts and sizes, absurd hyper-parameters, state
/// tensors of another shape or dtype, a group index that overflows.
fn bad_state(rng: &mut Rng) -> (String, OptimizerState) {
    let mut st = OptimizerState::default();
    let mut desc = Vec::new();
    for _ in 0..rng.pick(&[0usize, 1, 2, 3]) {
        let (g, name, v) = (
            rng.pick(&[0usize, 0, 1, 7, usize::MAX]),
            rng.pick(&[
                "lr",
                "num_params",
                "momentum",
                "betas.0",
                "initial_lr",
                "weight_decay",
                "amsgrad",
                "bogus",
            ]),
            rng.pick(&[f64::NAN, -1.0, 1e300, 0.0, 2.0, 99.0, f64::INFINITY]),
        );
        st.set_hyper(g, name, v);
        desc.push(format!("param_groups.{g}.{name}={v}"));
    }
    for _ in 0..rng.pick(&[0usize, 1, 2, 3]) {
        let (i, name) = (rng.pick(&[0usize, 0, 1, 5, usize::MAX]), rng.pick(&STATE_NAMES));
        let shape = rng.pick(&[vec![2, 3], vec![3], vec![], vec![7], vec![0]]);
        let d = rng.pick(&DType::ALL);
        if let Ok(t) = Tensor::ones(shape.clone(), d) {
            let _ = st.set_tensor(i, name, &t);
            desc.push(format!("state.{i}.{name}={d:?}{shape:?}"));
        }
    }
    (desc.join(", "), st)
}

/// Optimizers: construction, steps with odd gradients, bad state dicts, added groups and
/// hyper-parameters set by name.
fn optimizers(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let kind = rng.below(OPTIMIZERS.len());
    let name = OPTIMIZERS[kind];
    let h = hyper(rng);
    let specs = param_specs(rng);
    let args = || format!("{name}, {h:?}, params {specs:?}");
    s.call("optimizer::new", args, || optimizer(kind, params(&specs)?, h));
    s.call("optimizer::step", args, || {
        let mut o = optimizer(kind, params(&specs)?, h)?;
        o.step()?;
        o.step()?;
        o.zero_grad()
    });
    let (sdesc, st) = bad_state(rng);
    s.call(
        "optimizer::load_state_dict",
        || format!("{}, state {sdesc}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.load_state_dict(&st)?;
            o.step()
        },
    );
    // A state saved by another optimizer, or by this one over other parameters.
    let (kind2, specs2) = (rng.below(OPTIMIZERS.len()), param_specs(rng));
    s.call(
        "optimizer::load_state_dict(foreign)",
        || format!("{}, from {} over {specs2:?}", args(), OPTIMIZERS[kind2]),
        || {
            let mut from = optimizer(kind2, params(&specs2)?, Hyper { lr: 0.1, ..h })?;
            from.step()?;
            let saved = from.state_dict()?;
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.load_state_dict(&saved)?;
            o.step()
        },
    );
    let group: Vec<(&str, f64)> = (0..rng.below(3))
        .map(|_| {
            (
                rng.pick(&["lr", "momentum", "betas.0", "betas.1", "eps", "weight_decay", "bogus", ""]),
                rng.pick(&[f64::NAN, -1.0, 0.5, 2.0, f64::INFINITY]),
            )
        })
        .collect();
    let gspecs = param_specs(rng);
    s.call(
        "optimizer::add_param_group",
        || format!("{}, group {gspecs:?} {group:?}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            let extra = params(&gspecs)?;
            // (the same parameters again, as torch refuses)
            let again = params(&specs)?;
            o.add_param_group(extra, &group)?;
            o.add_param_group(again, &[])?;
            o.step()
        },
    );
    let gi = rng.pick(&[0usize, 1, usize::MAX]);
    let hname = rng.pick(&["lr", "momentum", "betas.0", "amsgrad", "centered", "initial_lr", "bogus", ""]);
    let hv = rng.pick(&[f64::NAN, -1.0, 1.0, 2.0, f64::INFINITY]);
    s.call(
        "optimizer::set_group_hyper",
        || format!("{}, group {gi}, {hname:?} = {hv}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.step()?;
            o.set_group_hyper(gi, hname, hv)?;
            o.step()
        },
    );
}

/// One SGD (with momentum) over two small parameters with gradients: the optimizer a schedule
/// drives.
fn sgd(lr: f64) -> Result<SGD> {
    let p = Tensor::ones([3], DType::F32)?.requires_grad_(true)?;
    p.set_grad(Some(Tensor::ones([3], DType::F32)?))?;
    SGD::new(vec![p], SgdOptions { lr, momentum: 0.9, ..Default::default() })
}

/// LR schedulers: bad constructor arguments, steps past the end, epochs non-finite or huge,
/// state dicts with absurd counters. On threads of their own (a schedule could loop over epochs).
fn schedulers(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let lr = rng.arg(&[0.1, 0.0, -1.0, f64::NAN, f64::INFINITY], 2);
    let gamma = rng.arg(&[0.1, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY, 2.0], 2);
    let size = rng.arg(&[3usize, 1, 0, usize::MAX], 2);
    let epoch =
        rng.arg(&[1.0, 0.0, 1.5, 1e18, 1e300, f64::NAN, -1.0, f64::INFINITY, 9.223_372_036_854_776e18], 2);
    let steps = rng.pick(&[1usize, 3]);
    let which = rng.below(10);
    let args = format!(
        "lr {lr}, gamma {gamma}, size {size}, schedule {which}, then {steps} steps, step_epoch({epoch})"
    );
    s.timed("scheduler", args, move || {
        let mut o = sgd(lr)?;
        let mut sched = match which {
            0 => StepLR::new(&mut o, size, gamma),
            1 => MultiStepLR::new(&mut o, vec![i64::MIN, -1, 0, 2, i64::MAX], gamma),
            2 => ExponentialLR::new(&mut o, gamma),
            3 => CosineAnnealingLR::new(&mut o, size, gamma),
            4 => PolynomialLR::new(&mut o, size, gamma),
            5 => LinearLR::new(&mut o, gamma, 0.5, size)?,
            6 => ConstantLR::new(&mut o, gamma, size)?,
            7 => MultiplicativeLR::new(&mut o, move |_| gamma),
            8 => CosineAnnealingWarmRestarts::new(&mut o, size, size, gamma)?,
            _ => OneCycleLR::new(&mut o, lr, size, gamma, "cos", 25.0, 1e4, false)?,
        };
        for _ in 0..steps {
            o.step()?;
            sched.step(&mut o)?;
        }
        sched.step_epoch(&mut o, epoch)?;
        sched.step(&mut o)
    });

    let (up, down) = (
        rng.arg(&[2usize, 1, 0, usize::MAX], 2),
        rng.arg(&[None, Some(3usize), Some(0), Some(usize::MAX)], 2),
    );
    let mode = rng.arg(&["triangular", "triangular2", "exp_range", "bogus"], 3);
    let (base, max) = (rng.arg(&[0.01, 0.0, -1.0, f64::NAN], 2), rng.arg(&[0.1, 0.0, f64::INFINITY], 1));
    let args = format!("CyclicLR ({base}, {max}), up {up}, down {down:?}, {mode:?}, gamma {gamma}, 3 steps");
    s.timed("CyclicLR", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = CyclicLR::new(&mut o, (base, max), up, down, mode, gamma)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
    let (pct, anneal, div, fdiv, three) = (
        rng.arg(&[0.3, 0.5, 0.0, 1.0, -1.0, f64::NAN, 2.0], 2),
        rng.arg(&["cos", "linear", "bogus"], 2),
        rng.arg(&[25.0, 0.0, -1.0, f64::NAN], 1),
        rng.arg(&[1e4, 0.0, f64::INFINITY], 1),
        rng.coin(),
    );
    let args = format!(
        "OneCycleLR max_lr {lr}, total {size}, pct {pct}, {anneal:?}, div {div}, final {fdiv}, three {three}"
    );
    s.timed("OneCycleLR", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = OneCycleLR::new(&mut o, lr, size, pct, anneal, div, fdiv, three)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
    let pmode = rng.arg(&["min", "max", "bogus"], 2);
    let tmode = rng.arg(&["rel", "abs", "bogus"], 2);
    let (factor, patience, cooldown) = (
        rng.arg(&[0.1, 0.5, 1.0, 2.0, f64::NAN, -1.0, 0.0], 2),
        rng.arg(&[2usize, 0, usize::MAX], 2),
        rng.arg(&[0usize, 1, usize::MAX], 2),
    );
    let metric = rng.arg(&[1.0, -1e300, f64::NAN, f64::INFINITY], 2);
    let args = format!(
        "ReduceLROnPlateau {pmode:?}, factor {factor}, patience {patience}, threshold {gamma}, {tmode:?}, cooldown {cooldown}, min_lr {lr}, eps {epoch}, metric {metric} x3"
    );
    s.timed("ReduceLROnPlateau", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched =
            ReduceLROnPlateau::new(&o, pmode, factor, patience, gamma, tmode, cooldown, lr, epoch)?;
        for _ in 0..3 {
            sched.try_step(&mut o, metric)?;
        }
        Ok(())
    });

    // State dicts with counters past i64/usize, non-finite rates, missing keys.
    let counter =
        rng.arg(&[3.0, 1e300, -1e300, f64::NAN, 9.223_372_036_854_776e18, -9.3e18, f64::INFINITY], 1);
    let rate = rng.arg(&[0.1, 0.0, f64::NAN, -1.0], 2);
    let period = rng.arg(&[5.0, 0.0, f64::NAN, -1.0, f64::INFINITY], 1);
    let missing = rng.odd(5);
    let which = rng.below(4);
    let args = format!(
        "schedule {which}: load_state_dict(last_epoch {counter}, base_lrs.0 {rate}, _last_lr.0 {rate}, T_cur {period}, T_i {period}, missing keys {missing}) then 2 steps"
    );
    s.timed("Scheduler::load_state_dict", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = match which {
            0 => StepLR::new(&mut o, 2, 0.5),
            1 => MultiplicativeLR::new(&mut o, |_| 0.9),
            2 => CosineAnnealingWarmRestarts::new(&mut o, 2, 2, 0.0)?,
            _ => OneCycleLR::new(&mut o, 0.1, 10, 0.3, "cos", 25.0, 1e4, false)?,
        };
        let mut state = vec![
            ("last_epoch".to_string(), counter),
            ("T_cur".to_string(), period),
            ("T_i".to_string(), period),
        ];
        if !missing {
            state.push(("base_lrs.0".to_string(), rate));
            state.push(("_last_lr.0".to_string(), rate));
        }
        sched.load_state_dict(&state)?;
        sched.step(&mut o)?;
        sched.step(&mut o)
    });
    let args = format!("ReduceLROnPlateau load_state_dict(num_bad_epochs {counter}, cooldown_counter {counter}, last_epoch {counter}, best {rate}) then try_step(1.0) x2");
    s.timed("ReduceLROnPlateau::load_state_dict", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = ReduceLROnPlateau::new(&o, "min", 0.5, 1, 1e-4, "rel", 0, 0.0, 1e-8)?;
        let state: [(String, f64); 4] = [
            ("best".into(), rate),
            ("num_bad_epochs".into(), counter),
            ("cooldown_counter".into(), counter),
            ("last_epoch".into(), counter),
        ];
        sched.load_state_dict(&state)?;
        sched.try_step(&mut o, 1.0)?;
        sched.try_step(&mut o, 1.0)
    });
}

/// Safetensors bytes: truncated, lying header lengths, overflowing shapes and offsets, bad
/// dtypes. Module state dicts with tensors of the wrong shape or dtype.
fn state_dicts(s: &mut Sweep, rng: &mut Rng, m: &mut Modules) {
    let headers = [
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}}"#,
        r#"{"a":{"dtype":"X99","shape":[2],"data_offsets":[0,8]}}"#,
        r#"{"a":{"dtype":"BOOL","shape":[8],"data_offsets":[0,8]}}"#,
        r#"{"__metadata__":{"format":1},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}"#,
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
        r#"{"a":"#,
        r#"[]"#,
        "",
    ];
    let header = rng.pick(&headers);
    let lie = rng.pick(&[None, Some(u64::MAX), Some(1 << 40), Some(0), Some(3)]);
    let data = rng.pick(&[0usize, 4, 8, 12]);
    let mut bytes = lie.unwrap_or(header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0x3Fu8, data));
    if rng.one_in(6) {
        bytes.truncate(rng.below(bytes.len() + 1));
    }
    s.call(
        "StateDict::from_safetensors_bytes",
        || {
            format!(
                "header length {lie:?}, header {header:?}, {data} data bytes, total {} bytes",
                bytes.len()
            )
        },
        || StateDict::from_safetensors_bytes(&bytes),
    );

    // Module state dicts: wrong shapes, dtypes, extra and missing keys, strict or not.
    let strict = rng.coin();
    let mut sd = StateDict::new();
    let mut desc = Vec::new();
    for key in ["weight", "bias", "running_mean", "running_var", "num_batches_tracked", "extra.key", ""] {
        if rng.coin() {
            let shape = rng.pick(&[vec![2, 3], vec![2], vec![3], vec![], vec![2, 3, 1], vec![0]]);
            let d = rng.pick(&DType::ALL);
            if let Ok(t) = Tensor::ones(shape.clone(), d) {
                sd.insert(key, t);
                desc.push(format!("{key:?}: {d:?}{shape:?}"));
            }
        }
    }
    let args = || format!("{{{}}}, strict {strict}", desc.join(", "));
    s.call("Linear::load_state_dict", args, || m.linear.load_state_dict(&sd, strict));
    s.call("BatchNorm::load_state_dict", args, || m.batch_norm.load_state_dict(&sd, strict));
    s.call("Embedding::load_state_dict", args, || m.embedding.load_state_dict(&sd, strict));
    // Forward after a (possibly partial) load must still answer.
    let x = shaped(rng, &[2, 3]);
    s.call(
        "Linear::forward(after load)",
        || format!("{}, after {}", x.desc, args()),
        || m.linear.forward(&x.t),
    );
    let path = rng.pick(&["", ".", "weight", "0", "a.b..c", "layers.99999999999999999999", "\u{0}"]);
    s.call("get_submodule", || format!("{path:?}"), || m.encoder.get_submodule(path).map(|_| ()));
    s.call("get_parameter", || format!("{path:?}"), || m.encoder.get_parameter(path));
}

/// Fixed cases, once per sweep: overflowing counts and sizes that the random draws reach only
/// rarely (sums and products of lengths, layer and gate counts, epoch counters).
fn pinned(s: &mut Sweep) {
    let lp = || Tensor::zeros([2usize, 2, 3], DType::F32);
    s.call("ctc_loss(target lengths overflow)", || "F32[2, 2, 3], targets I64[2] [1, 2], input_lengths [2, 2], target_lengths [i64::MAX, i64::MAX], 1-D".into(), || {
        let tg = Tensor::from_vec(vec![1i64, 2], [2])?;
        let il = Tensor::from_vec(vec![2i64, 2], [2])?;
        let tl = Tensor::from_vec(vec![i64::MAX, i64::MAX], [2])?;
        F::ctc_loss(&lp()?, &tg, &il, &tl, 0, "mean", false)
    });
    s.call(
        "ctc_loss(target length i64::MAX)",
        || "F32[2, 2, 3], targets I64[2, 2], target_lengths [i64::MAX, 0]".into(),
        || {
            let tg = Tensor::from_vec(vec![1i64, 2, 1, 2], [2, 2])?;
            let il = Tensor::from_vec(vec![2i64, 2], [2])?;
            let tl = Tensor::from_vec(vec![i64::MAX, 0], [2])?;
            F::ctc_loss(&lp()?, &tg, &il, &tl, 0, "sum", true)
        },
    );
    let img = ones(&[1, 1, 4, 4]);
    s.call(
        "max_unpool2d(stride overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [2], stride [usize::MAX / 2]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[2], Some(&[usize::MAX / 2][..]), &[0], None)
        },
    );
    s.call(
        "max_unpool2d(padding overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [2], padding [usize::MAX / 2]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[2], None, &[usize::MAX / 2], None)
        },
    );
    s.call(
        "max_unpool2d(size product overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [1 << 33]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[1 << 33], Some(&[1][..]), &[0], None)
        },
    );
    s.call(
        "max_unpool1d(output_size overflow)",
        || "F32[1, 1, 4], output_size [usize::MAX]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4], DType::I64)?;
            F::max_unpool1d(&ones(&[1, 1, 4]), &idx, &[2], None, &[0], Some(&[usize::MAX][..]))
        },
    );
    let v = Tensor::from_vec(vec![i64::MAX], [1]).expect("a value");
    s.call("one_hot(i64::MAX, -1)", || "I64[1] [i64::MAX], -1".into(), || F::one_hot(&v, -1));
    s.call("one_hot(i64::MAX classes)", || "I64[1] [i64::MAX], i64::MAX".into(), || F::one_hot(&v, i64::MAX));
    let e = ones(&[5, 3]);
    s.call(
        "embedding_bag(offset i64::MAX)",
        || "I64[4] [0, 1, 2, 3], F32[5, 3], offsets [0, i64::MAX], sum".into(),
        || {
            let input = Tensor::from_vec(vec![0i64, 1, 2, 3], [4])?;
            let offsets = Tensor::from_vec(vec![0i64, i64::MAX], [2])?;
            F::embedding_bag(&input, &e, Some(&offsets), None, 2.0, false, "sum", false, None, false, None)
        },
    );
    s.call(
        "embedding_bag(offset i64::MIN)",
        || "I64[4], F32[5, 3], offsets [i64::MIN, 2], mean, include_last_offset".into(),
        || {
            let input = Tensor::from_vec(vec![0i64, 1, 2, 3], [4])?;
            let offsets = Tensor::from_vec(vec![i64::MIN, 2], [2])?;
            F::embedding_bag(&input, &e, Some(&offsets), None, 2.0, false, "mean", false, None, true, None)
        },
    );
    s.call(
        "embedding(padding_idx i64::MIN)",
        || "I64[2] [0, 1], F32[5, 3], Some(i64::MIN)".into(),
        || F::embedding(&Tensor::from_vec(vec![0i64, 1], [2])?, &e, Some(i64::MIN)),
    );
    let seq = ones(&[2, 1, 3]);
    s.call(
        "lstm(num_layers usize::MAX)",
        || "F32[2, 1, 3], no params, num_layers usize::MAX".into(),
        || {
            F::lstm(
                &seq,
                &[ones(&[1, 1, 4]), ones(&[1, 1, 4])],
                &[],
                true,
                usize::MAX,
                0.0,
                false,
                true,
                false,
            )
        },
    );
    s.call(
        "gru(num_layers usize::MAX)",
        || "F32[2, 1, 3], no params, num_layers usize::MAX".into(),
        || F::gru(&seq, &ones(&[1, 1, 4]), &[], false, usize::MAX, 0.0, false, true, false),
    );
    s.call(
        "pixel_shuffle(empty, i64::MAX)",
        || "F32[1, 0, 2, 2], i64::MAX".into(),
        || F::pixel_shuffle(&ones(&[1, 0, 2, 2]), i64::MAX),
    );
    s.call(
        "pixel_unshuffle(empty, i64::MAX)",
        || "F32[1, 0, 0, 0], i64::MAX".into(),
        || F::pixel_unshuffle(&ones(&[1, 0, 0, 0]), i64::MAX),
    );
    s.call(
        "interpolate(size overflow)",
        || "F32[1, 1, 4, 4], size [usize::MAX, usize::MAX], bilinear".into(),
        || F::interpolate(&img, Some(&[usize::MAX, usize::MAX][..]), None, "bilinear", Some(false)),
    );
    s.call(
        "pad(isize::MAX both sides)",
        || "F32[2, 3], [isize::MAX, isize::MAX], constant".into(),
        || F::pad(&ones(&[2, 3]), &[isize::MAX, isize::MAX], "constant", None),
    );
    s.call(
        "pad(empty dim, isize::MAX twice)",
        || "F32[2, 1, 0, 3], [isize::MAX, 1, 1, isize::MAX], constant".into(),
        || F::pad(&ones(&[2, 1, 0, 3]), &[isize::MAX, 1, 1, isize::MAX], "constant", None),
    );
    s.call(
        "Conv2d::new(no channels, kernel overflows)",
        || "0, 0, [usize::MAX, 2]".into(),
        || Conv2d::new(0, 0, &[usize::MAX, 2], ConvOptions::default()),
    );
    s.call(
        "LSTM::new(4 * hidden overflows)",
        || "3, usize::MAX / 4 + 1".into(),
        || LSTM::new(3, usize::MAX / 4 + 1, RnnOptions::default()),
    );
    s.call(
        "GRU::new(3 * hidden overflows)",
        || "3, usize::MAX / 3 + 1".into(),
        || GRU::new(3, usize::MAX / 3 + 1, RnnOptions::default()),
    );
    s.call(
        "MultiheadAttention::new(3 * embed overflows)",
        || "usize::MAX / 3 + 1, 1".into(),
        || MultiheadAttention::new(usize::MAX / 3 + 1, 1, MultiheadAttentionOptions::default()),
    );
    s.call(
        "MultiheadAttention::new(0 heads)",
        || "4, 0".into(),
        || MultiheadAttention::new(4, 0, MultiheadAttentionOptions::default()),
    );
    s.call(
        "Embedding::new(usize::MAX, 0, -1)",
        || "usize::MAX, 0, Some(-1)".into(),
        || Embedding::new(usize::MAX, 0, Some(-1)),
    );
    s.call("GroupNorm::new(0 groups)", || "0, 4, 1e-5, true".into(), || GroupNorm::new(0, 4, 1e-5, true));
    let lce = LinearCrossEntropyOptions { batch_chunk_size: Some(0), ..Default::default() };
    s.call(
        "linear_cross_entropy(chunk 0)",
        || format!("F32[2, 4], F32[3, 4], I64[2] [0, 1], {lce:?}"),
        || {
            let t = Tensor::from_vec(vec![0i64, 1], [2])?;
            F::linear_cross_entropy(
                &ones(&[2, 4]),
                &ones(&[3, 4]),
                &t,
                None,
                None,
                "mean",
                None,
                0.0,
                Some(&lce),
            )
        },
    );

    // Optimizer and scheduler counters.
    s.call(
        "optimizer::load_state_dict(group usize::MAX)",
        || "SGD, state param_groups.18446744073709551615.lr = 0.1".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut st = OptimizerState::default();
            st.set_hyper(usize::MAX, "lr", 0.1);
            o.load_state_dict(&st)?;
            o.step()
        },
    );
    s.timed(
        "Scheduler::step after step_epoch(9.3e18)",
        "StepLR(2, 0.5), step_epoch(9.3e18), step".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = StepLR::new(&mut o, 2, 0.5);
            sched.step_epoch(&mut o, 9.3e18)?;
            sched.step(&mut o)
        },
    );
    s.timed(
        "Scheduler::step after load_state_dict(last_epoch 1e300)",
        "ExponentialLR(0.5), load last_epoch 1e300, step".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = ExponentialLR::new(&mut o, 0.5);
            let state = [
                ("last_epoch".to_string(), 1e300),
                ("base_lrs.0".to_string(), 0.1),
                ("_last_lr.0".to_string(), 0.1),
            ];
            sched.load_state_dict(&state)?;
            sched.step(&mut o)
        },
    );
    s.timed(
        "ReduceLROnPlateau::try_step after load(1e300)",
        "min, num_bad_epochs 1e300, last_epoch 1e300, try_step(NaN)".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = ReduceLROnPlateau::new(&o, "min", 0.5, usize::MAX, 1e-4, "rel", 0, 0.0, 1e-8)?;
            let state: [(String, f64); 4] = [
                ("best".into(), 1.0),
                ("num_bad_epochs".into(), 1e300),
                ("cooldown_counter".into(), 0.0),
                ("last_epoch".into(), 1e300),
            ];
            sched.load_state_dict(&state)?;
            sched.try_step(&mut o, f64::NAN)
        },
    );
    s.timed("OneCycleLR(total usize::MAX)", "max_lr 0.1, total usize::MAX, 3 steps".into(), || {
        let mut o = sgd(0.1)?;
        let mut sched = OneCycleLR::new(&mut o, 0.1, usize::MAX, 0.3, "cos", 25.0, 1e4, true)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
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
