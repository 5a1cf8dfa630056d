//! [`DataLoader`]: batches of a map-style dataset.

use std::sync::Arc;

use oxtorch_tensor::{Error, Result, Tensor};

use super::batch_sampler::BatchSampler;
use super::collate::CollateFn;
use super::dataset::Dataset;
use super::sampler::{RandomSampler, Sampler, SequentialSampler};
use super::workers::{Batches, MakeBatch};

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
/// With `prefetch > 0` (the default, 2) or `num_workers > 0`, the dataset's `get`/`get_batch`
/// and the `collate_fn` run on background threads: the thread-local modes (`no_grad`, autocast)
/// of the consuming thread do not apply there, and random draws made there from the default
/// generator interleave with the training thread's. For reproducible random augmentation,
/// draw from a [`oxtorch_tensor::Generator`] of the dataset's own (seeded per sample index), or
/// set `prefetch` to 0 without workers, which makes every batch on the calling thread as torch's
/// `num_workers=0` does.
pub struct DataLoader<D: Dataset + 'static> {
    dataset: Arc<D>,
    /// samples per batch (must stay 1, torch's default, with a `batch_sampler`)
    pub batch_size: usize,
    /// reshuffle every epoch
    pub shuffle: bool,
    /// base seed of the shuffling
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
    sampler: Option<Arc<dyn Sampler>>,
    batch_sampler: Option<BatchSampler>,
    collate_fn: Option<Arc<CollateFn>>,
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
            sampler: None,
            batch_sampler: None,
            collate_fn: None,
        })
    }

    /// Enables seeded shuffling (a [`RandomSampler`] reseeded from `seed` and the epoch).
    pub fn shuffle(mut self, seed: u64) -> Self {
        self.shuffle = true;
        self.seed = seed;
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

    /// The batches of `epoch` (each a vector of fields), after [`DataLoader::validate`].
    pub fn epoch(&self, epoch: u64) -> Result<Batches> {
        let tasks = self.batch_indices(epoch)?;
        let make = self.batch_maker();
        Ok(if self.num_workers > 0 {
            let in_flight = self.num_workers * self.prefetch_factor.unwrap_or(2);
            Batches::workers(make, tasks, self.num_workers, in_flight)
        } else if self.prefetch > 0 {
            Batches::workers(make, tasks, 1, self.prefetch)
        } else {
            Batches::inline(tasks.into_iter().map(move |t| make(t.as_slice())))
        })
    }
}

fn batch_size_error(batch_size: usize) -> Error {
    Error::msg(format!("batch_size should be a positive integer value, but got batch_size={batch_size}"))
}
