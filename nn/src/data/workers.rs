//! The batches of an epoch ([`Batches`]): assembled on the calling thread, or by worker threads
//! delivered in order (torch's `in_order=True`) with a bounded number of batches in flight.
//!
//! Each worker thread is a torch worker: its own default generator seeded `base_seed + id`
//! ([`with_thread_generator`]), its [`WorkerInfo`] for [`get_worker_info`], the thread-local modes
//! of the thread that started the epoch ([`ThreadModes`]), and the `worker_init_fn` run first.

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use oxtorch_tensor::autocast::{autocast_dtype, AutocastGuard};
use oxtorch_tensor::autograd::{is_grad_enabled, is_inference_mode_enabled, GradModeGuard, InferenceMode};
use oxtorch_tensor::random::with_thread_generator;
use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

/// Makes the batch of some sample indices.
pub(crate) type MakeBatch = dyn Fn(&[usize]) -> Result<Vec<Tensor>> + Send + Sync;

/// A `worker_init_fn`: called with the worker's id on each worker thread before its first batch.
pub type WorkerInitFn = dyn Fn(usize) + Send + Sync;

/// What a loader's worker thread knows of itself (torch's `WorkerInfo`, without its `dataset`
/// field): from [`get_worker_info`] in dataset, `collate_fn` and `worker_init_fn` code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerInfo {
    /// this worker's index, in `0..num_workers`
    pub id: usize,
    /// the number of workers of the epoch
    pub num_workers: usize,
    /// the seed of this worker's default generator: the epoch's base seed plus `id`
    pub seed: u64,
}

thread_local! {
    /// The [`WorkerInfo`] of a worker thread (none on other threads).
    static WORKER_INFO: Cell<Option<WorkerInfo>> = const { Cell::new(None) };
}

/// torch's `torch.utils.data.get_worker_info()`: on a loader's worker thread, its id, the number
/// of workers and its seed; `None` on any other thread (the one that iterates, as torch's main
/// process). A loader's prefetch thread (`prefetch > 0` without workers) is worker 0 of 1.
pub fn get_worker_info() -> Option<WorkerInfo> {
    WORKER_INFO.try_with(Cell::get).ok().flatten()
}

/// The thread-local modes of the thread that starts an epoch, which its worker threads take on:
/// torch's workers, forked from the main process when the epoch's iterator is made (Linux's
/// default start method), inherit its grad mode, inference mode and autocast state then (a
/// `no_grad` entered only after the iterator was made does not reach them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadModes {
    grad: bool,
    inference: bool,
    autocast: Option<DType>,
}

impl ThreadModes {
    /// The calling thread's modes.
    pub(crate) fn current() -> Self {
        ThreadModes {
            grad: is_grad_enabled(),
            inference: is_inference_mode_enabled(),
            autocast: autocast_dtype(),
        }
    }
}

/// How an epoch's worker threads start: the base seed of their generators, the
/// `worker_init_fn`, the modes they take on, and how long the consumer waits for a batch
/// (`None`: without limit).
pub(crate) struct WorkerSetup {
    pub(crate) base_seed: u64,
    pub(crate) init: Option<Arc<WorkerInitFn>>,
    pub(crate) modes: ThreadModes,
    /// the wait and the seconds it was given as (for the error)
    pub(crate) timeout: Option<(Duration, f64)>,
}

/// A batch as a worker made it: its result, or the panic it raised.
type Outcome = std::thread::Result<Result<Vec<Tensor>>>;

/// The batches of one epoch, each a vector of fields. With workers, a batch's error comes at
/// that batch's position and a panic while making it is raised again there (as without workers);
/// dropping the iterator early stops the workers and waits for them.
pub struct Batches {
    inner: Inner,
}

enum Inner {
    Inline(Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send>),
    Workers(Pool),
}

impl Batches {
    /// Batches made on the calling thread, as `batches` yields them.
    pub(crate) fn inline(batches: impl Iterator<Item = Result<Vec<Tensor>>> + Send + 'static) -> Self {
        Batches { inner: Inner::Inline(Box::new(batches)) }
    }

    /// The batches of `tasks` made by `workers` threads started as `setup` says, at most
    /// `in_flight` of them requested ahead of the consumer.
    pub(crate) fn workers(
        make: Arc<MakeBatch>,
        tasks: Vec<Vec<usize>>,
        workers: usize,
        in_flight: usize,
        setup: WorkerSetup,
    ) -> Self {
        Batches { inner: Inner::Workers(Pool::start(make, tasks, workers, in_flight.max(1), setup)) }
    }
}

impl Iterator for Batches {
    type Item = Result<Vec<Tensor>>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Inline(it) => it.next(),
            Inner::Workers(pool) => pool.next_batch(),
        }
    }
}

/// Worker threads, each with its own queue of tasks (batch `i` goes to worker `i % n`, as torch),
/// sharing one queue of results that the consumer puts back in order.
struct Pool {
    pending: std::vec::IntoIter<Vec<usize>>,
    total: usize,
    next_send: usize,
    next_yield: usize,
    in_flight: usize,
    senders: Vec<Sender<(usize, Vec<usize>)>>,
    results: Receiver<(usize, Outcome)>,
    buffer: HashMap<usize, Outcome>,
    threads: Vec<JoinHandle<()>>,
    /// Set when the consumer is dropped: workers skip the batches still queued.
    cancelled: Arc<AtomicBool>,
    timeout: Option<(Duration, f64)>,
    /// A wait timed out: a worker may be stuck, so dropping does not wait for the workers.
    timed_out: bool,
}

fn worker_gone() -> Error {
    Error::msg("DataLoader worker exited unexpectedly")
}

/// The timeout error, in torch's words.
fn timed_out(seconds: f64) -> Error {
    Error::msg(format!("DataLoader timed out after {seconds} seconds"))
}

/// A worker thread's life: its info, modes and generator set, the `worker_init_fn` run, then the
/// batches of its queue made in order until the queue closes (the consumer done or dropped
/// early). A panic of the `worker_init_fn` is the outcome of the worker's first batch (torch
/// raises the init's exception there), the next ones being made as usual.
fn work(
    info: WorkerInfo,
    init: Option<Arc<WorkerInitFn>>,
    modes: ThreadModes,
    make: Arc<MakeBatch>,
    tasks: Receiver<(usize, Vec<usize>)>,
    results: Sender<(usize, Outcome)>,
    cancelled: Arc<AtomicBool>,
) {
    WORKER_INFO.with(|w| w.set(Some(info)));
    // In this order: inference mode turns grad mode off, which `enable_grad` inside it turns on.
    let _inference = modes.inference.then(InferenceMode::new);
    let _grad = GradModeGuard::new(modes.grad);
    // The dtype was valid on the consuming thread, so this cannot fail.
    let _autocast = modes.autocast.and_then(|dtype| AutocastGuard::new(dtype, true).ok());
    let generator = Generator::new(info.seed);
    with_thread_generator(&generator, || {
        let mut init_panic = init.and_then(|f| catch_unwind(AssertUnwindSafe(|| f(info.id))).err());
        while let Ok((i, indices)) = tasks.recv() {
            if cancelled.load(Ordering::Relaxed) {
                break;
            }
            let outcome = match init_panic.take() {
                Some(panic) => Err(panic),
                None => catch_unwind(AssertUnwindSafe(|| make(indices.as_slice()))),
            };
            if results.send((i, outcome)).is_err() {
                break;
            }
        }
    });
    WORKER_INFO.with(|w| w.set(None));
}

impl Pool {
    fn start(
        make: Arc<MakeBatch>,
        tasks: Vec<Vec<usize>>,
        workers: usize,
        in_flight: usize,
        setup: WorkerSetup,
    ) -> Pool {
        let total = tasks.len();
        let (result_tx, results) = channel::<(usize, Outcome)>();
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        let cancelled = Arc::new(AtomicBool::new(false));
        // Every worker starts (and runs the `worker_init_fn`), even with fewer batches, as torch.
        let num_workers = workers.max(1);
        for id in 0..num_workers {
            let info = WorkerInfo { id, num_workers, seed: setup.base_seed.wrapping_add(id as u64) };
            let (tx, rx) = channel::<(usize, Vec<usize>)>();
            let (make, result_tx, cancelled) = (make.clone(), result_tx.clone(), cancelled.clone());
            let (init, modes) = (setup.init.clone(), setup.modes);
            threads.push(std::thread::spawn(move || work(info, init, modes, make, rx, result_tx, cancelled)));
            senders.push(tx);
        }
        let mut pool = Pool {
            pending: tasks.into_iter(),
            total,
            next_send: 0,
            next_yield: 0,
            in_flight,
            senders,
            results,
            buffer: HashMap::new(),
            threads,
            cancelled,
            timeout: setup.timeout,
            timed_out: false,
        };
        pool.dispatch();
        pool
    }

    /// Requests batches until `in_flight` are requested and not yet consumed.
    fn dispatch(&mut self) {
        while self.next_send - self.next_yield < self.in_flight {
            let Some(task) = self.pending.next() else { break };
            let i = self.next_send;
            if self.senders[i % self.senders.len()].send((i, task)).is_err() {
                self.buffer.insert(i, Ok(Err(worker_gone())));
            }
            self.next_send += 1;
        }
    }

    /// The next batch in order, waiting for it as needed.
    fn next_batch(&mut self) -> Option<Result<Vec<Tensor>>> {
        if self.next_yield == self.total {
            return None;
        }
        loop {
            if let Some(outcome) = self.buffer.remove(&self.next_yield) {
                self.next_yield += 1;
                self.dispatch();
                return Some(match outcome {
                    Ok(batch) => batch,
                    Err(panic) => resume_unwind(panic),
                });
            }
            let received = match self.timeout {
                None => self.results.recv().ok(),
                Some((wait, seconds)) => match self.results.recv_timeout(wait) {
                    Ok(r) => Some(r),
                    // The batch may still come: a later call waits for it again.
                    Err(RecvTimeoutError::Timeout) => {
                        self.timed_out = true;
                        return Some(Err(timed_out(seconds)));
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                },
            };
            match received {
                Some((i, outcome)) => {
                    self.buffer.insert(i, outcome);
                }
                // Every worker is gone without this batch: the epoch ends with the error.
                None => {
                    self.next_yield = self.total;
                    return Some(Err(worker_gone()));
                }
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Each worker stops after its current batch (the batches still queued are skipped); wait
        // for them so no thread outlives the epoch, unless a wait timed out: a worker may then be
        // stuck in the dataset for good, and it is left to finish (detached) rather than joined
        // (torch terminates such a worker process after a grace period).
        self.cancelled.store(true, Ordering::Relaxed);
        self.senders.clear();
        let threads = std::mem::take(&mut self.threads);
        if !self.timed_out {
            for t in threads {
                let _ = t.join();
            }
        }
    }
}
