//! The batches of an epoch ([`Batches`]): assembled on the calling thread, or by worker threads
//! delivered in order (torch's `in_order=True`) with a bounded number of batches in flight.

use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use oxtorch_tensor::{Error, Result, Tensor};

/// Makes the batch of some sample indices.
pub(crate) type MakeBatch = dyn Fn(&[usize]) -> Result<Vec<Tensor>> + Send + Sync;

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

    /// The batches of `tasks` made by `workers` threads, at most `in_flight` of them requested
    /// ahead of the consumer.
    pub(crate) fn workers(
        make: Arc<MakeBatch>,
        tasks: Vec<Vec<usize>>,
        workers: usize,
        in_flight: usize,
    ) -> Self {
        Batches { inner: Inner::Workers(Pool::start(make, tasks, workers, in_flight.max(1))) }
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
}

fn worker_gone() -> Error {
    Error::msg("DataLoader worker exited unexpectedly")
}

impl Pool {
    fn start(make: Arc<MakeBatch>, tasks: Vec<Vec<usize>>, workers: usize, in_flight: usize) -> Pool {
        let total = tasks.len();
        let (result_tx, results) = channel::<(usize, Outcome)>();
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        let cancelled = Arc::new(AtomicBool::new(false));
        for _ in 0..workers.max(1).min(total) {
            let (tx, rx) = channel::<(usize, Vec<usize>)>();
            let (make, result_tx, cancelled) = (make.clone(), result_tx.clone(), cancelled.clone());
            threads.push(std::thread::spawn(move || {
                // The queue closes when the consumer is done (or dropped early).
                while let Ok((i, indices)) = rx.recv() {
                    if cancelled.load(Ordering::Relaxed) {
                        break;
                    }
                    let outcome = catch_unwind(AssertUnwindSafe(|| make(indices.as_slice())));
                    if result_tx.send((i, outcome)).is_err() {
                        break;
                    }
                }
            }));
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
            match self.results.recv() {
                Ok((i, outcome)) => {
                    self.buffer.insert(i, outcome);
                }
                // Every worker is gone without this batch: the epoch ends with the error.
                Err(_) => {
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
        // for them so no thread outlives the epoch.
        self.cancelled.store(true, Ordering::Relaxed);
        self.senders.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
