//! Random numbers: seeded generators and the random creation and in-place ops.
//!
//! A [`Generator`] is a Philox key (the seed) and a counter offset. Each random op reserves a range of
//! counter blocks and element `i` is computed from block `offset + i / k` alone, so results do not
//! depend on the number of threads, and the same stream can be produced on other devices.

mod binomial;
mod inplace_samplers;
mod philox;
mod poisson;
mod sampling;
mod uniforms;

use std::cell::Cell;
use std::sync::{Mutex, OnceLock};

use oxtorch_backend_cpu::{with_dtype, CpuStorage};
use oxtorch_core::{DType, Device, Element, Error, Result, Shape};
use rayon::prelude::*;

use crate::create::from_cpu;
use crate::options::TensorOptions;
use crate::Tensor;

pub use inplace_samplers::seed;
pub use philox::philox4x32_10;

/// torch's default seed.
const DEFAULT_SEED: u64 = 67_280_421_310_721;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    seed: u64,
    offset: u64,
}

/// A seeded source of random numbers (torch's `torch.Generator`). Thread-safe; share it by reference.
#[derive(Debug)]
pub struct Generator {
    state: Mutex<State>,
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new(DEFAULT_SEED)
    }
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Generator { state: Mutex::new(State { seed, offset: 0 }) }
    }

    /// Reseeds and restarts the stream.
    pub fn manual_seed(&self, seed: u64) -> &Self {
        *self.lock() = State { seed, offset: 0 };
        self
    }

    /// The seed in use.
    pub fn initial_seed(&self) -> u64 {
        self.lock().seed
    }

    /// The full state `(seed, offset)`, to save and restore a stream position.
    pub fn get_state(&self) -> (u64, u64) {
        let s = *self.lock();
        (s.seed, s.offset)
    }

    /// Restores a state from [`Generator::get_state`].
    pub fn set_state(&self, state: (u64, u64)) {
        *self.lock() = State { seed: state.0, offset: state.1 };
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves `blocks` counter blocks; returns `(seed, first block)`.
    fn reserve(&self, blocks: u64) -> (u64, u64) {
        let mut s = self.lock();
        let start = s.offset;
        s.offset = s.offset.wrapping_add(blocks);
        (s.seed, start)
    }
}

/// The process-wide default generator (seeded with torch's default seed).
fn global_generator() -> &'static Generator {
    static GEN: OnceLock<Generator> = OnceLock::new();
    GEN.get_or_init(Generator::default)
}

thread_local! {
    /// The generator [`with_thread_generator`] lent this thread, if it is running one.
    static THREAD_GENERATOR: Cell<Option<&'static Generator>> = const { Cell::new(None) };
}

/// Generators [`with_thread_generator`] lent and got back, for reuse: no more are ever made than
/// there are overrides running at once.
static SPARE_GENERATORS: Mutex<Vec<&'static Generator>> = Mutex::new(Vec::new());

/// The default generator of the calling thread: the process-wide one, unless the thread is inside
/// [`with_thread_generator`], whose generator then stands in for it. Every random op given no
/// generator draws from it, and [`manual_seed`] seeds it.
pub fn default_generator() -> &'static Generator {
    THREAD_GENERATOR.try_with(Cell::get).ok().flatten().unwrap_or_else(global_generator)
}

/// Runs `f` with `generator` as the calling thread's default generator (as a torch
/// `DataLoader` worker has its own `torch.manual_seed(base_seed + worker_id)`): inside `f`, on
/// this thread only, [`default_generator`] and every random op given no generator use
/// `generator`'s stream, and [`manual_seed`] reseeds that stream; other threads, and this one
/// after `f`, keep the process-wide generator untouched. Calls nest (the innermost wins).
///
/// The stream is lent: `generator`'s state is copied in before `f` and written back when `f`
/// returns or panics, so `generator` ends where the draws left it. Draws made from `generator`
/// itself (`Some(generator)`) during `f` start from the same state as the lent copy's, so they
/// repeat its values, and the write-back then drops them; the same holds for one generator lent
/// to several threads at once (each gets the same stream): lend one generator per thread. Threads `f` starts
/// (rayon tasks among them) keep the process-wide generator, and a reference from
/// [`default_generator`] kept past `f` no longer points at this stream.
pub fn with_thread_generator<R>(generator: &Generator, f: impl FnOnce() -> R) -> R {
    let spare = SPARE_GENERATORS.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let lent: &'static Generator = spare.unwrap_or_else(|| &*Box::leak(Box::new(Generator::default())));
    lent.set_state(generator.get_state());
    let previous = THREAD_GENERATOR.with(|g| g.replace(Some(lent)));
    let _restore = LentGenerator { owner: generator, lent, previous };
    f()
}

/// Gives back what [`with_thread_generator`] lent when its closure ends (returning or panicking).
struct LentGenerator<'a> {
    owner: &'a Generator,
    lent: &'static Generator,
    previous: Option<&'static Generator>,
}

impl Drop for LentGenerator<'_> {
    fn drop(&mut self) {
        self.owner.set_state(self.lent.get_state());
        // Fails only while the thread's locals are being destroyed, when nothing can draw anymore.
        let _ = THREAD_GENERATOR.try_with(|g| g.set(self.previous));
        SPARE_GENERATORS.lock().unwrap_or_else(|e| e.into_inner()).push(self.lent);
    }
}

/// Seeds the default generator (torch's `torch.manual_seed`).
pub fn manual_seed(seed: u64) {
    default_generator().manual_seed(seed);
}

fn gen_or_default(g: Option<&Generator>) -> &Generator {
    g.unwrap_or_else(|| default_generator())
}

/// `n` values where value `i` is `f(word)` for the `i`-th 32-bit word of the stream (4 per block).
fn words<T: Send>(g: &Generator, n: usize, f: impl Fn([u32; 4], usize) -> T + Sync) -> Vec<T> {
    let (seed, start) = g.reserve(n.div_ceil(4) as u64);
    (0..n)
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|i| f(philox::block(seed, start + (i / 4) as u64), i % 4))
        .collect()
}

/// `n` values where value `i` is `f(block)` for its own block (for draws that need 64+ bits).
fn blocks<T: Send>(g: &Generator, n: usize, f: impl Fn([u32; 4], usize) -> T + Sync) -> Vec<T> {
    let (seed, start) = g.reserve(n as u64);
    (0..n)
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|i| f(philox::block(seed, start + i as u64), i))
        .collect()
}

/// A uniform f64 in `[0, 1)` with 53 random bits.
#[inline]
fn unit_f64(hi: u32, lo: u32) -> f64 {
    ((((hi as u64) << 32) | lo as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform values in `[low, high)`: `low + span * u` with `u` of 53 random bits for f64, 24 for
/// the others (half precision rounds a float32 draw, as torch's: a draw of the type's own few bits
/// would put every value on a 256-point grid for bf16, zero among them), rounded to the dtype.
fn uniform_storage(g: &Generator, n: usize, dtype: DType, low: f64, high: f64) -> Result<CpuStorage> {
    crate::dispatch::check_allocatable(n.saturating_mul(dtype.size_in_bytes()))?;
    let bits = match dtype {
        DType::F64 => 53,
        DType::F32 | DType::F16 | DType::BF16 => 24,
        d => return Err(Error::UnsupportedDType { op: "uniform_", dtype: d }),
    };
    let span = high - low;
    // `low + span * u` may round up to `high`: torch then returns `low`, keeping `[low, high)`.
    Ok(if bits == 53 {
        CpuStorage::from_vec(blocks(g, n, |b, _| {
            let v = low + span * unit_f64(b[0], b[1]);
            if v == high && span > 0.0 {
                low
            } else {
                v
            }
        }))
    } else {
        with_dtype!(dtype, T => {
            let (lo, hi) = (T::from_f64(low), T::from_f64(high));
            CpuStorage::from_vec(words(g, n, |b, k| {
                let u = (b[k] >> (32 - bits)) as f64 / (1u64 << bits) as f64;
                let v = T::from_f64(low + span * u);
                if v == hi && span > 0.0 { lo } else { v }
            }))
        })
    })
}

/// Standard normal values via Box–Muller (each value from its own block, in f64, then rounded).
fn normal_storage(g: &Generator, n: usize, dtype: DType, mean: f64, std: f64) -> Result<CpuStorage> {
    crate::dispatch::check_allocatable(n.saturating_mul(dtype.size_in_bytes()))?;
    if !dtype.is_float() {
        return Err(Error::UnsupportedDType { op: "normal_", dtype });
    }
    Ok(with_dtype!(dtype, T => CpuStorage::from_vec(blocks(g, n, |b, _| {
        let u1 = 1.0 - unit_f64(b[0], b[1]);
        let u2 = unit_f64(b[2], b[3]);
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        T::from_f64(mean + std * z)
    }))))
}

fn float_dtype(opts: &TensorOptions) -> DType {
    opts.dtype_or(DType::default_float())
}

impl Tensor {
    /// Uniform values in `[0, 1)` from the default generator.
    pub fn rand(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        Self::rand_with(shape, opts, None)
    }

    /// Uniform values in `[0, 1)` from `generator` (or the default one).
    pub fn rand_with(
        shape: impl Into<Shape>,
        opts: impl Into<TensorOptions>,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let (shape, opts) = (shape.into(), opts.into());
        let s =
            uniform_storage(gen_or_default(generator), shape.checked_numel()?, float_dtype(&opts), 0.0, 1.0)?;
        from_cpu(s, shape, opts.device)
    }

    /// Standard normal values from the default generator.
    pub fn randn(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        Self::randn_with(shape, opts, None)
    }

    /// Standard normal values from `generator` (or the default one).
    pub fn randn_with(
        shape: impl Into<Shape>,
        opts: impl Into<TensorOptions>,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let (shape, opts) = (shape.into(), opts.into());
        let s =
            normal_storage(gen_or_default(generator), shape.checked_numel()?, float_dtype(&opts), 0.0, 1.0)?;
        from_cpu(s, shape, opts.device)
    }

    /// Integers uniform in `[low, high)` (int64 unless `opts` says otherwise).
    pub fn randint(
        low: i64,
        high: i64,
        shape: impl Into<Shape>,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        Self::randint_with(low, high, shape, opts, None)
    }

    /// Integers uniform in `[low, high)` from `generator` (or the default one).
    pub fn randint_with(
        low: i64,
        high: i64,
        shape: impl Into<Shape>,
        opts: impl Into<TensorOptions>,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let (shape, opts) = (shape.into(), opts.into());
        if high <= low {
            return Err(Error::msg(format!(
                "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )));
        }
        let range = (high as i128 - low as i128) as u64;
        let dtype = opts.dtype_or(DType::I64);
        // Bounds the dtype cannot hold are torch's errors (the draws would wrap).
        let held = |v: i64| match dtype {
            DType::Bool => (0..=1).contains(&v),
            DType::U8 => (0..=u8::MAX as i64).contains(&v),
            DType::I8 => (i8::MIN as i64..=i8::MAX as i64).contains(&v),
            DType::I16 => (i16::MIN as i64..=i16::MAX as i64).contains(&v),
            DType::I32 => (i32::MIN as i64..=i32::MAX as i64).contains(&v),
            _ => true,
        };
        let name = crate::ops::cpp_name(dtype);
        if !held(low) {
            return Err(Error::msg(format!("from is out of bounds for {name}")));
        }
        if !held(high - 1) {
            return Err(Error::msg(format!("to - 1 is out of bounds for {name}")));
        }
        let numel = shape.checked_numel()?;
        crate::dispatch::check_allocatable(numel.saturating_mul(8))?;
        let vals: Vec<i64> = blocks(gen_or_default(generator), numel, |b, _| {
            let r = (((b[0] as u64) << 32) | b[1] as u64) % range;
            (low as i128 + r as i128) as i64
        });
        let t = from_cpu(CpuStorage::from_vec(vals), shape, opts.device)?;
        t.to_dtype(dtype)
    }

    /// Uniform random values in `[0, 1)` with this tensor's shape, dtype and device.
    pub fn rand_like(&self) -> Result<Tensor> {
        Self::rand(self.shape(), self.same_options())
    }

    /// Standard normal values with this tensor's shape, dtype and device.
    pub fn randn_like(&self) -> Result<Tensor> {
        Self::randn(self.shape(), self.same_options())
    }

    /// Fills with values uniform in `[from, to)`.
    pub fn uniform_(&self, from: f64, to: f64) -> Result<&Tensor> {
        self.uniform_with_(from, to, None)
    }

    /// Fills with values uniform in `[from, to)` from `generator`.
    pub fn uniform_with_(&self, from: f64, to: f64, generator: Option<&Generator>) -> Result<&Tensor> {
        let name = crate::ops::cpp_name(self.dtype());
        if !from.is_finite() {
            return Err(Error::msg(format!("from is out of bounds for {name}")));
        }
        if !to.is_finite() {
            return Err(Error::msg(format!("to is out of bounds for {name}")));
        }
        if from > to {
            return Err(Error::msg(format!(
                "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
            )));
        }
        let s = uniform_storage(gen_or_default(generator), self.numel(), self.dtype(), from, to)?;
        self.copy_(&from_cpu(s, self.shape(), self.device())?)
    }

    /// Fills with normal values of the given mean and standard deviation.
    pub fn normal_(&self, mean: f64, std: f64) -> Result<&Tensor> {
        self.normal_with_(mean, std, None)
    }

    /// Fills with normal values from `generator`.
    pub fn normal_with_(&self, mean: f64, std: f64, generator: Option<&Generator>) -> Result<&Tensor> {
        if std.is_nan() || std < 0.0 {
            let shown = if std.is_nan() { "nan".to_string() } else { std.to_string() };
            return Err(Error::msg(format!("normal expects std >= 0.0, but found std {shown}")));
        }
        let s = normal_storage(gen_or_default(generator), self.numel(), self.dtype(), mean, std)?;
        self.copy_(&from_cpu(s, self.shape(), self.device())?)
    }

    /// 0/1 draws with success probabilities given by this tensor (same shape and dtype).
    pub fn bernoulli(&self) -> Result<Tensor> {
        self.bernoulli_with(None)
    }

    /// [`Tensor::bernoulli`] from `generator`.
    pub fn bernoulli_with(&self, generator: Option<&Generator>) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "bernoulli", dtype: self.dtype() });
        }
        let p = self.to_f64_vec()?;
        if p.iter().any(|&p| !(0.0..=1.0).contains(&p)) {
            return Err(Error::msg("Expected p_in >= 0 && p_in <= 1 to be true, but got false."));
        }
        let draws: Vec<f64> =
            blocks(gen_or_default(generator), p.len(), |b, i| (unit_f64(b[0], b[1]) < p[i]) as u8 as f64);
        from_cpu(CpuStorage::from_vec(draws), self.shape(), self.device())?.to_dtype(self.dtype())
    }

    /// Fills with 0/1 draws that are 1 with probability `p`.
    pub fn bernoulli_(&self, p: f64) -> Result<&Tensor> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::msg(format!("bernoulli_ expects p to be in [0, 1], but got p={p}")));
        }
        let probs = Tensor::full(self.shape(), p, (DType::F64, Device::Cpu))?;
        let draws = probs.bernoulli()?;
        self.copy_(&draws)
    }
}
