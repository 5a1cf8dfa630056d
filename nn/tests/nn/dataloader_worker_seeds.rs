#![allow(clippy::type_complexity)]
//! torch's DataLoader worker semantics on oxtorch's worker threads: each worker (and the prefetch
//! thread, worker 0 of 1) draws from its own default generator seeded `base_seed + id`, so random
//! augmentation gives the same batches for the same loader seed and leaves the iterating thread's
//! stream alone; `get_worker_info`, `worker_init_fn`, the thread-local modes workers take from the
//! thread that starts the epoch, and `timeout`.
//!
//! torch's facts (which worker makes each batch, seeds as offsets from the base seed, the
//! `worker_init_fn` calls a worker has seen, the modes, the error messages) come from
//! nn/tests/make_dataloader_worker_seeds_golden.py (torch 2.15, forked workers). Random values are oxtorch's
//! (Philox): they are checked by replaying each worker's stream, not against torch.
//!
//! The tests of this binary run on parallel threads that may draw from the process-wide default
//! generator: where a test draws on its own thread, it lends that thread a generator of its own
//! (`with_thread_generator`), so that no other test's draws interleave with it.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oxtorch_nn::data::*;
use oxtorch_tensor::autocast::{autocast_dtype, AutocastGuard};
use oxtorch_tensor::autograd::{inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad};
use oxtorch_tensor::random::with_thread_generator;
use oxtorch_tensor::{default_generator, manual_seed, DType, Generator, Result, Tensor};

include!("dataloader_worker_seeds_golden.rs");

/// What one `get` saw on its thread.
#[derive(Clone, Debug)]
struct Seen {
    index: usize,
    info: Option<WorkerInfo>,
    init_calls: usize,
    grad: bool,
    inference: bool,
    autocast: bool,
    initial_seed: u64,
}

thread_local! {
    /// The `worker_init_fn` calls this thread has run (the golden script's per-process global).
    static INIT_CALLS: Cell<usize> = const { Cell::new(0) };
}

/// `n` samples, sample `i` being 3 uniform float64 draws from the default generator and `[i]`;
/// each `get` logs what it saw (the clones share the log).
#[derive(Clone)]
struct Noisy {
    n: usize,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Noisy {
    fn new(n: usize) -> Self {
        Noisy { n, log: Arc::new(Mutex::new(Vec::new())) }
    }

    /// The log in sample order.
    fn seen(&self) -> Vec<Seen> {
        let mut seen = self.log.lock().unwrap().clone();
        seen.sort_by_key(|s| s.index);
        seen
    }
}

impl Dataset for Noisy {
    fn len(&self) -> usize {
        self.n
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        self.log.lock().unwrap().push(Seen {
            index,
            info: get_worker_info(),
            init_calls: INIT_CALLS.with(Cell::get),
            grad: is_grad_enabled(),
            inference: is_inference_mode_enabled(),
            autocast: autocast_dtype().is_some(),
            initial_seed: default_generator().initial_seed(),
        });
        Ok(vec![Tensor::rand([3], DType::F64)?, Tensor::from_vec(vec![index as i64], [1])?])
    }
}

/// A loader of `n` noisy samples in batches of `bs`.
fn loader(n: usize, bs: usize, workers: usize, prefetch: usize, seed: u64) -> Result<DataLoader<Noisy>> {
    let mut l = DataLoader::new(Noisy::new(n), bs)?.num_workers(workers).seed(seed);
    l.prefetch = prefetch;
    Ok(l)
}

/// The random field of each batch.
fn draws(batches: Batches) -> Result<Vec<Vec<f64>>> {
    batches.map(|b| b?[0].to_vec::<f64>()).collect()
}

/// Takes every batch.
fn consume(batches: Batches) -> Result<()> {
    for b in batches {
        b?;
    }
    Ok(())
}

/// `samples` draws of a noisy sample from `g`, concatenated.
fn replay(g: &Generator, samples: usize) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..samples {
        out.extend(Tensor::rand_with([3], DType::F64, Some(g))?.to_vec::<f64>()?);
    }
    Ok(out)
}

fn err_text<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn random_draws_on_workers_are_reproducible_for_a_loader_seed() -> Result<()> {
    for (workers, prefetch) in [(1, 0), (1, 2), (3, 0), (3, 2), (0, 2), (0, 1)] {
        let run = |epoch: u64, seed: u64| draws(loader(10, 3, workers, prefetch, seed)?.epoch(epoch)?);
        let a = run(0, 5)?;
        assert_eq!(a.len(), 4);
        assert_eq!(a, run(0, 5)?, "{workers} workers, prefetch {prefetch}: the same batches again");
        assert_ne!(a, run(1, 5)?, "{workers} workers, prefetch {prefetch}: another epoch, other draws");
        assert_ne!(a, run(0, 6)?, "{workers} workers, prefetch {prefetch}: another seed, other draws");
    }
    // The prefetch thread is worker 0 of 1: the batches of one worker.
    assert_eq!(draws(loader(10, 3, 0, 2, 5)?.epoch(0)?)?, draws(loader(10, 3, 1, 0, 5)?.epoch(0)?)?);
    // Without workers nor prefetch, the batches are drawn on the calling thread from its default
    // generator (torch's num_workers=0): reproducible once that is seeded.
    let inline =
        |seed: u64| with_thread_generator(&Generator::new(seed), || draws(loader(10, 3, 0, 0, 5)?.epoch(0)?));
    let a = inline(11)?;
    assert_eq!(a, inline(11)?);
    assert_ne!(a, inline(12)?);
    let g = Generator::new(11);
    for (batch, n) in a.iter().zip([3, 3, 3, 1]) {
        assert_eq!(batch, &replay(&g, n)?, "the calling thread's stream, sample after sample");
    }
    Ok(())
}

#[test]
fn workers_draw_from_generators_seeded_base_seed_plus_id() -> Result<()> {
    for (workers, prefetch) in [(1, 0), (3, 0), (3, 2), (4, 1), (0, 2)] {
        let l = loader(11, 2, workers, prefetch, 21)?;
        let base = l.base_seed(0)?;
        assert_eq!(base, l.base_seed(0)?);
        assert_ne!(base, l.base_seed(1)?, "a base seed per epoch");
        assert!(base <= i64::MAX as u64, "a non-negative int64, as torch's");
        // The iterating thread's stream (lent, so that other tests cannot move it) stays put.
        let mine = Generator::new(0xDA7A_32B0);
        let got = with_thread_generator(&mine, || draws(l.epoch(0)?))?;
        assert_eq!(
            mine.get_state(),
            (0xDA7A_32B0, 0),
            "the workers leave the iterating thread's stream alone"
        );
        // Batch i is made by worker i % n, from the stream of `base + id`, each worker in order:
        // equal values also show that no draw went to another generator.
        let n = workers.max(1);
        let streams: Vec<Generator> = (0..n).map(|id| Generator::new(base.wrapping_add(id as u64))).collect();
        let batches = l.batch_indices(0)?;
        assert_eq!(got.len(), batches.len());
        for (i, (batch, indices)) in got.iter().zip(&batches).enumerate() {
            let want = replay(&streams[i % n], indices.len())?;
            assert_eq!(batch, &want, "{workers} workers, prefetch {prefetch}: batch {i}");
        }
    }
    Ok(())
}

#[test]
fn worker_info_and_worker_init_fn_match_torch() -> Result<()> {
    assert_eq!(get_worker_info().is_none(), MAIN_WORKER_INFO_IS_NONE);
    for &(n, facts) in WORKER_FACTS {
        let ds = Noisy::new(facts.len());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let log = calls.clone();
        let l = DataLoader::new(ds.clone(), 1)?.num_workers(n).seed(3).worker_init_fn(move |id| {
            INIT_CALLS.with(|c| c.set(c.get() + 1));
            log.lock().unwrap().push((id, get_worker_info()));
        });
        let base = l.base_seed(0)?;
        // torch's golden ran under no_grad: workers made then take it on.
        assert_eq!(no_grad(|| l.epoch(0))?.count(), facts.len());
        let seen = ds.seen();
        assert_eq!(seen.len(), facts.len());
        for (s, &(id, offset, init_calls, grad)) in seen.iter().zip(facts) {
            let info = s.info.expect("samples are made on workers");
            let at = format!("{n} workers, sample {}", s.index);
            assert_eq!(info, WorkerInfo { id, num_workers: n, seed: base.wrapping_add(offset) }, "{at}");
            assert_eq!(s.init_calls, init_calls, "{at}: worker_init_fn calls seen");
            assert_eq!(s.grad, grad, "{at}: grad mode");
            assert_eq!(s.initial_seed, info.seed, "{at}: torch.initial_seed() on a worker is its seed");
        }
        let mut calls = calls.lock().unwrap().clone();
        calls.sort_by_key(|c| c.0);
        let want: Vec<_> = (0..n)
            .map(|id| (id, Some(WorkerInfo { id, num_workers: n, seed: base.wrapping_add(id as u64) })))
            .collect();
        assert_eq!(calls, want, "worker_init_fn runs once on each worker, after its info is set");
    }
    assert!(get_worker_info().is_none(), "none on the iterating thread after the epochs");

    // Every worker starts, even with fewer batches than workers (as torch).
    let count = Arc::new(Mutex::new(0));
    let c = count.clone();
    let l = loader(1, 1, 3, 0, 0)?.worker_init_fn(move |_| *c.lock().unwrap() += 1);
    consume(l.epoch(0)?)?;
    assert_eq!(*count.lock().unwrap(), 3);

    // The prefetch thread is worker 0 of 1; without it, nothing runs off the calling thread.
    for prefetch in [2, 0] {
        let ids = Arc::new(Mutex::new(Vec::new()));
        let log = ids.clone();
        let l = loader(4, 2, 0, prefetch, 8)?.worker_init_fn(move |id| log.lock().unwrap().push(id));
        let base = l.base_seed(0)?;
        with_thread_generator(&Generator::new(1), || consume(l.epoch(0)?))?;
        let infos: Vec<_> = l.dataset().seen().iter().map(|s| s.info).collect();
        if prefetch > 0 {
            assert_eq!(*ids.lock().unwrap(), vec![0]);
            assert_eq!(infos, vec![Some(WorkerInfo { id: 0, num_workers: 1, seed: base }); 4]);
        } else {
            assert!(ids.lock().unwrap().is_empty(), "no worker_init_fn without a background thread");
            assert_eq!(infos, vec![None; 4]);
        }
    }
    Ok(())
}

#[test]
fn workers_take_the_modes_of_the_thread_that_starts_the_epoch() -> Result<()> {
    // (grad, inference, autocast) as the background threads saw them.
    let seen_with = |workers: usize, prefetch: usize, run: &dyn Fn(&DataLoader<Noisy>) -> Result<()>| {
        let l = loader(2, 1, workers, prefetch, 0)?;
        run(&l)?;
        let seen = l.dataset().seen();
        let modes: Vec<_> = seen.iter().map(|s| (s.grad, s.inference, s.autocast)).collect();
        assert_eq!(modes.len(), 2);
        assert_eq!(modes[0], modes[1]);
        Result::Ok(modes[0])
    };
    for (workers, prefetch) in [(1, 0), (2, 0), (0, 2)] {
        for &(scenario, grad, inference, autocast) in WORKER_MODES {
            let got = match scenario {
                "no_grad" => seen_with(workers, prefetch, &|l| no_grad(|| consume(l.epoch(0)?)))?,
                "made_outside_no_grad" => seen_with(workers, prefetch, &|l| {
                    let batches = l.epoch(0)?;
                    no_grad(|| consume(batches))
                })?,
                "inference_mode" => {
                    seen_with(workers, prefetch, &|l| inference_mode(|| consume(l.epoch(0)?)))?
                }
                "autocast" => seen_with(workers, prefetch, &|l| {
                    let _autocast = AutocastGuard::new(DType::BF16, true)?;
                    consume(l.epoch(0)?)
                })?,
                "plain" => seen_with(workers, prefetch, &|l| consume(l.epoch(0)?))?,
                other => panic!("unknown scenario {other}"),
            };
            assert_eq!(
                got,
                (grad, inference, autocast),
                "{scenario}, {workers} workers, prefetch {prefetch}"
            );
        }
    }
    assert!(is_grad_enabled() && !is_inference_mode_enabled() && autocast_dtype().is_none());
    Ok(())
}

/// Samples that take 600 ms each.
struct Sleepy;

impl Dataset for Sleepy {
    fn len(&self) -> usize {
        2
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        std::thread::sleep(Duration::from_millis(600));
        Ok(vec![Tensor::from_vec(vec![index as i64], [1])?])
    }
}

#[test]
fn timeout_is_torch_s() -> Result<()> {
    assert_eq!(err_text(DataLoader::new(Sleepy, 1)?.num_workers(1).timeout(-1.0).epoch(0)), TIMEOUT_NEGATIVE);
    assert_eq!(err_text(DataLoader::new(Sleepy, 1)?.timeout(f64::NAN).validate()), TIMEOUT_NEGATIVE);
    for (workers, prefetch) in [(1, 0), (0, 2)] {
        let mut l = DataLoader::new(Sleepy, 1)?.num_workers(workers).timeout(0.25);
        l.prefetch = prefetch;
        let mut it = l.epoch(0)?;
        assert_eq!(err_text(it.next().unwrap()), TIMED_OUT, "{workers} workers, prefetch {prefetch}");
        // The batch is waited for again on the next calls, and comes.
        let mut waits = 0;
        let first = loop {
            match it.next().unwrap() {
                Ok(b) => break b,
                Err(e) => assert_eq!(e.to_string(), TIMED_OUT),
            }
            waits += 1;
            assert!(waits < 40, "the batch never came");
        };
        assert_eq!(first[0].to_vec::<i64>()?, vec![0]);
    }
    // A timeout long enough changes nothing.
    let got: Vec<Vec<Tensor>> =
        DataLoader::new(Sleepy, 1)?.num_workers(2).timeout(30.0).epoch(0)?.collect::<Result<_>>()?;
    assert_eq!(got.len(), 2);
    Ok(())
}

#[test]
fn a_worker_init_fn_panic_surfaces_at_that_worker_s_first_batch() -> Result<()> {
    let l = loader(4, 1, 2, 0, 0)?.worker_init_fn(|id| assert!(id != 1, "worker {id} cannot start"));
    let mut it = l.epoch(0)?;
    assert!(it.next().unwrap().is_ok(), "batch 0, worker 0");
    let second = catch_unwind(AssertUnwindSafe(|| it.next()));
    assert!(second.is_err(), "batch 1 is worker 1's first: the init's panic");
    assert!(it.next().unwrap().is_ok(), "batch 2, worker 0");
    assert!(it.next().unwrap().is_ok(), "batch 3: worker 1 goes on, as torch's");
    assert!(it.next().is_none());
    Ok(())
}

#[test]
fn manual_seed_on_a_worker_reseeds_that_worker_only() -> Result<()> {
    let l = loader(3, 3, 1, 0, 0)?.worker_init_fn(|_| manual_seed(0xDA7A_32B2));
    let got = draws(l.epoch(0)?)?;
    assert_eq!(got, vec![replay(&Generator::new(0xDA7A_32B2), 3)?]);
    assert!(l.dataset().seen().iter().all(|s| s.initial_seed == 0xDA7A_32B2));
    assert_ne!(default_generator().initial_seed(), 0xDA7A_32B2, "the process-wide generator is not reseeded");
    Ok(())
}

#[test]
fn with_thread_generator_lends_a_stream_to_one_thread() -> Result<()> {
    let g = Generator::new(0xDA7A_32B3);
    let (inside, spawned, nested) = with_thread_generator(&g, || -> Result<_> {
        let inside = Tensor::rand([4], DType::F64)?.to_vec::<f64>()?;
        let spawned = std::thread::spawn(|| default_generator().initial_seed()).join().unwrap();
        let nested = with_thread_generator(&Generator::new(7), || default_generator().initial_seed());
        assert_eq!(
            default_generator().initial_seed(),
            0xDA7A_32B3,
            "the outer stream is back after a nested one"
        );
        Ok((inside, spawned, nested))
    })?;
    let want = Tensor::rand_with([4], DType::F64, Some(&Generator::new(0xDA7A_32B3)))?.to_vec::<f64>()?;
    assert_eq!(inside, want, "the thread's default draws come from the stream lent");
    assert_eq!(g.get_state(), (0xDA7A_32B3, 4), "the stream is written back where the draws left it");
    assert_ne!(spawned, 0xDA7A_32B3, "another thread keeps the process-wide generator");
    assert_eq!(nested, 7);
    assert_ne!(default_generator().initial_seed(), 0xDA7A_32B3, "the thread's own stream is back");
    // A panic in the closure gives the stream back too.
    let panicked =
        catch_unwind(|| with_thread_generator(&Generator::new(0xDA7A_32B4), || -> u8 { panic!("boom") }));
    assert!(panicked.is_err());
    assert_ne!(default_generator().initial_seed(), 0xDA7A_32B4);
    Ok(())
}
