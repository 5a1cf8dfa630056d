//! Parallel loops that a thread outside rayon's pool takes part in.
//!
//! A rayon parallel loop started from a foreign thread (an XLA program's thread calling a host
//! kernel) injects the whole loop into the pool and blocks on a condition variable until the
//! pool's workers, woken from sleep, have run every task: the caller sits idle, and each loop pays
//! two wake-ups before and after its work. [`for_each_task`] lets the caller start on the tasks at
//! once while helpers posted to the pool join in whenever they wake. Tasks are claimed one at a
//! time from a shared counter, so a helper that wakes late simply finds fewer left; the caller
//! never waits for a helper to start, only for one to finish the task it has claimed.
//!
//! Inside the pool the loop is an ordinary rayon one.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

/// `state`'s low bit: the loop is over, helpers that arrive now must not touch the task.
const CLOSED: usize = 1;
/// `state` counts the helpers running tasks in units of this.
const HELPER: usize = 2;

/// Runs `task(i)` for every `i` in `0..count`, in parallel on rayon's threads and the calling one.
///
/// A panic in a task is re-raised on the calling thread once no task is running.
pub fn for_each_task(count: usize, task: &(dyn Fn(usize) + Sync)) {
    let threads = rayon::current_num_threads();
    if count <= 1 || threads == 1 {
        (0..count).for_each(task);
    } else if rayon::current_thread_index().is_some() {
        (0..count).into_par_iter().for_each(task);
    } else {
        foreign(count, threads.min(count) - 1, task);
    }
}

/// Runs `task(i, chunk)` for each `chunk`-long piece of `out` (the last may be shorter), as
/// [`for_each_task`].
pub fn for_each_chunk_mut<T: Send>(out: &mut [T], chunk: usize, task: &(dyn Fn(usize, &mut [T]) + Sync)) {
    assert!(chunk > 0, "for_each_chunk_mut: a chunk of 0 elements");
    let (len, base) = (out.len(), SendPtr(out.as_mut_ptr()));
    for_each_task(len.div_ceil(chunk), &|i| {
        let start = i * chunk;
        let end = len.min(start + chunk);
        // SAFETY: the chunks are disjoint ranges of `out`, which stays mutably borrowed for the loop,
        // and each index runs once.
        task(i, unsafe { std::slice::from_raw_parts_mut(base.get().add(start), end - start) });
    });
}

/// A pointer into a buffer that the tasks of one parallel loop write in disjoint parts.
pub(crate) struct SendPtr<T>(pub(crate) *mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SendPtr<T> {}

// SAFETY: its users (`for_each_chunk_mut`, the AVX2 gemm's row blocks) have their tasks touch
// disjoint parts of a buffer of `T: Send`.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

/// What the caller and its helpers share.
struct Shared {
    /// The next task to claim.
    next: AtomicUsize,
    /// How many tasks there are.
    count: usize,
    /// [`CLOSED`], plus [`HELPER`] for each helper inside the loop.
    state: AtomicUsize,
    /// Whether a helper's task panicked.
    panicked: AtomicBool,
    /// The task, its lifetime erased: only dereferenced by a helper admitted before [`CLOSED`],
    /// which the caller waits out before returning (see [`foreign`]).
    task: *const (dyn Fn(usize) + Sync),
}

// SAFETY: `task` points at a `Sync` closure, and is only used while the caller keeps it alive
// (see `Shared::task`); the other fields are atomics.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    /// Claims and runs tasks until none are left.
    ///
    /// # Safety
    /// `self.task` must be alive: the caller's, or a helper's admitted by [`Shared::enter`].
    unsafe fn drain(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.count {
                return;
            }
            // SAFETY: alive, as the caller of `drain` guarantees.
            unsafe { (*self.task)(i) };
        }
    }

    /// Admits a helper unless the loop is closed.
    fn enter(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & CLOSED != 0 {
                return false;
            }
            match self.state.compare_exchange_weak(s, s + HELPER, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// A helper posted to the pool: runs tasks if it arrives before the loop is closed.
    fn help(self: Arc<Self>) {
        if !self.enter() {
            return;
        }
        // SAFETY: admitted before `CLOSED`, so the caller is still waiting (see `foreign`).
        let result = catch_unwind(AssertUnwindSafe(|| unsafe { self.drain() }));
        if result.is_err() {
            self.panicked.store(true, Ordering::Relaxed);
        }
        // Release: the task's writes happen before the caller sees this helper gone.
        self.state.fetch_sub(HELPER, Ordering::Release);
    }

    /// Closes the loop to late helpers and waits for the admitted ones to finish their tasks.
    fn close(&self) {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut spins = 0u32;
        while self.state.load(Ordering::Acquire) != CLOSED {
            if spins < 1 << 12 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Closes the loop when the caller leaves [`foreign`], by return or by unwinding, so that no
/// helper can run the task after the caller's borrow of it ends.
struct CloseOnDrop(Arc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The loop on a thread outside the pool, with `helpers` helpers posted to it.
fn foreign(count: usize, helpers: usize, task: &(dyn Fn(usize) + Sync)) {
    // SAFETY (of the lifetime erasure): `CloseOnDrop` keeps this frame until every admitted helper
    // has left, and helpers admitted later find the loop closed.
    let task: *const (dyn Fn(usize) + Sync + '_) = task;
    let task: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(task) };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        count,
        state: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        task,
    });
    let guard = CloseOnDrop(shared.clone());
    for _ in 0..helpers {
        let s = shared.clone();
        rayon::spawn(move || s.help());
    }
    // SAFETY: the caller's own borrow of the task is alive here.
    unsafe { shared.drain() };
    drop(guard);
    if shared.panicked.load(Ordering::Relaxed) {
        resume_unwind(Box::new("a parallel task panicked on a helper thread"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index runs exactly once, from a foreign thread and from inside the pool.
    #[test]
    fn each_task_runs_once() {
        let check = || {
            for count in [0, 1, 2, 3, 17, 1000] {
                let hits: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
                for_each_task(count, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "count {count}");
            }
        };
        std::thread::spawn(check).join().unwrap();
        rayon::scope(|_| check());
    }

    /// Writes made by helpers are visible to the caller when the loop returns, many times over
    /// (late helpers of earlier loops arrive while later loops run).
    #[test]
    fn helpers_writes_are_visible() {
        std::thread::spawn(|| {
            for round in 0..2000usize {
                let out: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
                for_each_task(8, &|i| out[i].store(round + i, Ordering::Relaxed));
                for (i, o) in out.iter().enumerate() {
                    assert_eq!(o.load(Ordering::Relaxed), round + i);
                }
            }
        })
        .join()
        .unwrap();
    }

    /// A panicking task reaches the caller, and no task runs after the loop returns.
    #[test]
    fn a_panic_reaches_the_caller() {
        let result = std::thread::spawn(|| {
            catch_unwind(|| {
                for_each_task(64, &|i| {
                    if i == 40 {
                        panic!("task 40");
                    }
                })
            })
        })
        .join()
        .unwrap();
        assert!(result.is_err());
    }
}
