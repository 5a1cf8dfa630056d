//! [`DataLoader`]: batches of a map-style dataset.

use std::sync::Arc;
use std::time::Duration;

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::batch_sampler::BatchSampler;
use super::collate::CollateFn;
use super::dataset::Dataset;
use super::sampler::{epoch_generator, RandomSampler, Sampler, SequentialSampler};
use super::workers::{Batches, MakeBatch, ThreadModes, WorkerInitFn, WorkerSetup};

/// Keeps the stream of the workers' base seeds apart from the shuffling's (same loader seed).
const BASE_SEED_STREAM: u64 = 0x5745_524B_4552_5345;

/// Batches of a dataset (torch's `DataLoader`): `batch_size`, `shuffle` with a seed (a different,
/// reproducible order each epoch), `drop_last`, or a custom [`Sampler`] or [`BatchSampler`]; a
/// `collate_fn`; and batches assembled ahead on a background thread (`prefetch`) or by
/// `num_workers` threads in parallel, delivered in order.
///
/// The builder methods cannot fail; torch's checks of the combination (`batch_sampler` exclusive
/// with `batch_size`, `shuffle`, `sampler` and `drop_last`; `sampler` exclusive with `shuffle`;
/// `prefetch_factor` only with workers) are made by [`DataLoader::validate`], which
/// [`DataLoader::epoch`] calls, so a bad combination is an error before any batch.
///
/// With `num_workers > 0`, the dataset's `get`/`get_batch` and the `collate_fn` run on worker
/// threads that behave as torch's worker processes: each epoch draws a base seed from the
/// loader's `seed` ([`DataLoader::base_seed`], as torch draws `base_seed` from the loader's
/// `generator` for each epoch iterator), and worker `id` runs with its own default generator
/// seeded `base_seed + id` ([`with_thread_generator`](oxtorch_tensor::random::with_thread_generator)),
/// so that random draws in dataset code (`Tensor::rand`, dropout, ...) give the same batches for
/// the same loader seed, whatever the threads' scheduling (batch `i` is made by worker
/// `i % num_workers`, each worker in order), and never advance the consuming thread's default
/// generator. On a worker, [`get_worker_info`](super::get_worker_info) gives its id, the number
/// of workers and its seed (`None` on the consuming thread), and the `worker_init_fn` runs first.
///
/// Without workers, `prefetch > 0` (the default, 2, which torch does not have: its
/// `num_workers=0` loads on the main process) makes the batches on one background thread, which
/// is worker 0 of 1 in every respect above (its own generator seeded `base_seed`, its worker
/// info, the `worker_init_fn`), so that the consuming thread's stream is untouched there too.
/// With `prefetch = 0` and no workers, every batch is made on the calling thread when the
/// iterator is advanced, from the calling thread's default generator, as torch's
/// `num_workers=0`: seed it with `manual_seed` for reproducible draws.
///
/// The background threads take on the grad mode, inference mode and autocast state that the
/// calling thread has when [`DataLoader::epoch`] is called, as torch's workers, forked when the
/// epoch's iterator is made, inherit them (Linux's default start method; torch forces neither
/// `no_grad` nor anything else there): `no_grad(|| loader.epoch(e))` gives batches made without
/// recording, while a `no_grad` entered only while iterating does not reach the workers. Their
/// default device is cpu. Rayon tasks that dataset code starts itself draw from the process-wide
/// generator.
///
/// `timeout` (seconds, 0: none) bounds each wait for a batch from background threads: past it
/// the batch's place yields torch's "DataLoader timed out after {timeout} seconds" (the batch is
/// waited for again on the next call). torch's `persistent_workers` is not offered: worker
/// threads are started for each epoch and joined when its iterator is done or dropped.
pub struct DataLoader<D: Dataset + 'static> {
    dataset: Arc<D>,
    /// samples per batch (must stay 1, torch's default, with a `batch_sampler`)
    pub batch_size: usize,
    /// reshuffle every epoch
    pub shuffle: bool,
    /// base seed of the shuffling and of the workers' generators ([`DataLoader::base_seed`])
    pub seed: u64,
    /// drop the last incomplete batch
    pub drop_last: bool,
    /// without workers, batches prepared ahead on one background thread (0: assemble on the
    /// calling thread); unused with workers
    pub prefetch: usize,
    /// worker threads assembling batches in parallel (0: none, as torch)
    pub num_workers: usize,
    /// batches requested ahead per worker (torch's `prefetch_factor`; `None`: 2 with workers)
    pub prefetch_factor: Option<usize>,
    /// seconds to wait for a batch from the background threads (torch's `timeout`; 0: no limit)
    pub timeout: f64,
    sampler: Option<Arc<dyn Sampler>>,
    batch_sampler: Option<BatchSampler>,
    collate_fn: Option<Arc<CollateFn>>,
    worker_init_fn: Option<Arc<WorkerInitFn>>,
    /// a seed was given (`seed`/`shuffle`): the workers' base seeds come from it, not from the
    /// default generator
    seeded: bool,
}

impl<D: Dataset + 'static> DataLoader<D> {
    /// A loader with torch's defaults (`shuffle = false`, `drop_last = false`, no workers) and 2
    /// batches of prefetch on a background thread.
    pub fn new(dataset: D, batch_size: usize) -> Result<Self> {
        if batch_size == 0 {
            return Err(batch_size_error(batch_size));
        }
        Ok(DataLoader {
            dataset: Arc::new(dataset),
            batch_size,
            shuffle: false,
            seed: 0,
            drop_last: false,
            prefetch: 2,
            num_workers: 0,
            prefetch_factor: None,
            timeout: 0.0,
            sampler: None,
            batch_sampler: None,
            collate_fn: None,
            worker_init_fn: None,
            seeded: false,
        })
    }

    /// Enables seeded shuffling (a [`RandomSampler`] reseeded from `seed` and the epoch).
    pub fn shuffle(mut self, seed: u64) -> Self {
        self.shuffle = true;
        self.seed = seed;
        self.seeded = true;
        self
    }

    /// Sets the seed (of the shuffling, if enabled, and of the workers' generators) without
    /// changing `shuffle` (torch's `generator=torch.Generator().manual_seed(seed)`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.seeded = true;
        self
    }

    /// Sets `drop_last`.
    pub fn drop_last(mut self, drop_last: bool) -> Self {
        self.drop_last = drop_last;
        self
    }

    /// Draws the samples in `sampler`'s order (torch's `sampler`; exclusive with `shuffle`).
    pub fn sampler(mut self, sampler: impl Sampler + 'static) -> Self {
        self.sampler = Some(Arc::new(sampler));
        self
    }

    /// Takes whole batches of indices from `batch_sampler` (torch's `batch_sampler`; exclusive
    /// with `batch_size` other than 1, `shuffle`, `sampler` and `drop_last`).
    pub fn batch_sampler(mut self, batch_sampler: BatchSampler) -> Self {
        self.batch_sampler = Some(batch_sampler);
        self
    }

    /// Merges a batch's samples (each [`Dataset::get`]'s fields) with `collate_fn` instead of
    /// [`Dataset::get_batch`] (whose default is [`default_collate`](super::default_collate)).
    pub fn collate_fn(
        mut self,
        collate_fn: impl Fn(Vec<Vec<Tensor>>) -> Result<Vec<Tensor>> + Send + Sync + 'static,
    ) -> Self {
        self.collate_fn = Some(Arc::new(collate_fn));
        self
    }

    /// Assembles batches on `num_workers` threads (0: none).
    pub fn num_workers(mut self, num_workers: usize) -> Self {
        self.num_workers = num_workers;
        self
    }

    /// Batches requested ahead per worker (torch's `prefetch_factor`; only with workers).
    pub fn prefetch_factor(mut self, prefetch_factor: usize) -> Self {
        self.prefetch_factor = Some(prefetch_factor);
        self
    }

    /// Calls `worker_init_fn(id)` on each worker thread (and on the prefetch thread, worker 0)
    /// when it starts, after its generator is seeded and before its first batch (torch's
    /// `worker_init_fn`). A panic there is raised again at that worker's first batch.
    pub fn worker_init_fn(mut self, worker_init_fn: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.worker_init_fn = Some(Arc::new(worker_init_fn));
        self
    }

    /// Sets `timeout`: seconds to wait for each batch from the background threads (0: no limit;
    /// negative is an error of [`DataLoader::validate`]).
    pub fn timeout(mut self, seconds: f64) -> Self {
        self.timeout = seconds;
        self
    }

    /// The dataset.
    pub fn dataset(&self) -> &D {
        &self.dataset
    }

    /// torch's checks of the loader's options (made by [`DataLoader::epoch`]).
    pub fn validate(&self) -> Result<()> {
        if self.batch_sampler.is_some()
            && (self.batch_size != 1 || self.shuffle || self.sampler.is_some() || self.drop_last)
        {
            return Err(Error::msg(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, \
                 and drop_last",
            ));
        }
        if self.sampler.is_some() && self.shuffle {
            return Err(Error::msg("sampler option is mutually exclusive with shuffle"));
        }
        if self.batch_size == 0 {
            return Err(batch_size_error(self.batch_size));
        }
        if self.timeout.is_nan() || self.timeout < 0.0 {
            return Err(Error::msg("timeout option should be non-negative"));
        }
        match self.prefetch_factor {
            Some(_) if self.num_workers == 0 => Err(Error::msg(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 \
                 to enable multiprocessing, otherwise set prefetch_factor to None.",
            )),
            Some(0) => Err(Error::msg(
                "prefetch_factor should be a positive integer value, but got prefetch_factor=0",
            )),
            _ => Ok(()),
        }
    }

    /// The number of indices an epoch samples (before batching).
    fn samples(&self) -> usize {
        self.sampler.as_ref().map_or_else(|| self.dataset.len(), |s| s.len())
    }

    /// Number of batches per epoch.
    pub fn len(&self) -> usize {
        if let Some(bs) = &self.batch_sampler {
            return bs.len();
        }
        let n = self.samples();
        match self.batch_size {
            0 => 0,
            b if self.drop_last => n / b,
            b => n.div_ceil(b),
        }
    }

    /// True when an epoch has no batch.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sample indices of each batch of `epoch`.
    pub fn batch_indices(&self, epoch: u64) -> Result<Vec<Vec<usize>>> {
        self.validate()?;
        if let Some(bs) = &self.batch_sampler {
            return bs.batches(epoch);
        }
        let n = self.dataset.len();
        let sampler: Arc<dyn Sampler> = match &self.sampler {
            Some(s) => s.clone(),
            None if self.shuffle => Arc::new(RandomSampler::shuffled(n, self.seed)?),
            None => Arc::new(SequentialSampler::new(n)),
        };
        BatchSampler::from_arc(sampler, self.batch_size, self.drop_last)?.batches(epoch)
    }

    /// Makes the batch of some indices: the dataset's `get_batch`, or its samples through the
    /// `collate_fn`.
    fn batch_maker(&self) -> Arc<MakeBatch> {
        let dataset = self.dataset.clone();
        let Some(collate) = self.collate_fn.clone() else {
            return Arc::new(move |indices: &[usize]| dataset.get_batch(indices));
        };
        Arc::new(move |indices: &[usize]| {
            let samples = indices.iter().map(|&i| dataset.get(i)).collect::<Result<Vec<_>>>()?;
            collate(samples)
        })
    }

    /// The base seed of `epoch`'s workers: worker `id` seeds its default generator with
    /// `base_seed + id` (wrapping). torch draws it for each epoch iterator as
    /// `torch.empty((), dtype=torch.int64).random_(generator=loader.generator)`; here it is a
    /// non-negative int64 drawn from a stream of the loader's `seed` and the epoch (apart from the
    /// shuffling's), so it is reproducible and draws nothing from the default generator, once a
    /// seed was given with [`DataLoader::seed`] or [`DataLoader::shuffle`]. Without one it is
    /// drawn from the calling thread's default generator at each call, as torch's loader without
    /// a `generator` does, so that `manual_seed` decides the workers' streams. The values are
    /// oxtorch's (Philox), not torch's.
    pub fn base_seed(&self, epoch: u64) -> Result<u64> {
        let gen = epoch_generator(self.seed ^ BASE_SEED_STREAM, epoch);
        let gen = if self.seeded { Some(&gen) } else { None };
        let draw = Tensor::randint_with(0, i64::MAX, [1usize], DType::I64, gen)?;
        Ok(draw.to_vec::<i64>()?[0] as u64)
    }

    /// The wait for a batch and its seconds, or `None` without limit.
    fn timeout_duration(&self) -> Option<(Duration, f64)> {
        if self.timeout > 0.0 {
            // An infinite timeout is no limit.
            Duration::try_from_secs_f64(self.timeout).ok().map(|d| (d, self.timeout))
        } else {
            None
        }
    }

    /// The batches of `epoch` (each a vector of fields), after [`DataLoader::validate`].
    pub fn epoch(&self, epoch: u64) -> Result<Batches> {
        let tasks = self.batch_indices(epoch)?;
        let make = self.batch_maker();
        let (workers, in_flight) = match (self.num_workers, self.prefetch) {
            (0, 0) => return Ok(Batches::inline(tasks.into_iter().map(move |t| make(t.as_slice())))),
            (0, prefetch) => (1, prefetch),
            (n, _) => (n, n * self.prefetch_factor.unwrap_or(2)),
        };
        let setup = WorkerSetup {
            base_seed: self.base_seed(epoch)?,
            init: self.worker_init_fn.clone(),
            modes: ThreadModes::current(),
            timeout: self.timeout_duration(),
        };
        Ok(Batches::workers(make, tasks, workers, in_flight, setup))
    }
}

fn batch_size_error(batch_size: usize) -> Error {
    Error::msg(format!("batch_size should be a positive integer value, but got batch_size={batch_size}"))
}
