//! `torch.utils.data`: datasets and a batching loader with seeded shuffling and a background
//! prefetch thread.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

/// A map-style dataset: `len` samples, each a tuple of tensors (torch's `Dataset`).
pub trait Dataset: Send + Sync {
    /// Number of samples.
    fn len(&self) -> usize;

    /// True when empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sample `index` (each field a tensor; fields of a batch are stacked).
    fn get(&self, index: usize) -> Result<Vec<Tensor>>;

    /// The batch of samples `indices`, each field stacked along a new first dim (torch's
    /// `__getitems__`). The default stacks [`Dataset::get`]'s samples; a dataset that can gather
    /// a whole batch at once (as [`TensorDataset`] does) overrides it.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let samples = indices.iter().map(|&i| self.get(i)).collect::<Result<Vec<_>>>()?;
        let fields = samples.first().map_or(0, Vec::len);
        if samples.iter().any(|s| s.len() != fields) {
            return Err(Error::msg("each element in list of batch should be of equal size"));
        }
        (0..fields)
            .map(|f| {
                let parts: Vec<&Tensor> = samples.iter().map(|s| &s[f]).collect();
                Tensor::stack(&parts, 0)
            })
            .collect()
    }
}

/// Tensors indexed along their first dim (torch's `TensorDataset`).
pub struct TensorDataset {
    tensors: Vec<Tensor>,
}

impl TensorDataset {
    /// All tensors must have the same first-dim size.
    pub fn new(tensors: Vec<Tensor>) -> Result<Self> {
        if tensors.iter().any(|t| t.rank() == 0) {
            return Err(Error::msg("Dimension specified as 0 but tensor has no dimensions"));
        }
        let n = tensors.first().map(|t| t.dims().first().copied().unwrap_or(0));
        if tensors.iter().any(|t| t.dims().first().copied() != n) {
            return Err(Error::msg("Size mismatch between tensors"));
        }
        Ok(TensorDataset { tensors })
    }
}

impl Dataset for TensorDataset {
    fn len(&self) -> usize {
        self.tensors.first().map_or(0, |t| t.dims().first().copied().unwrap_or(0))
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        self.tensors.iter().map(|t| t.select(0, index as isize)).collect()
    }

    /// One `index_select` per tensor: on an XLA device a batch is one gather of the same program
    /// whatever the indices, not a stack of views.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let n = self.len();
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(Error::msg(format!("index {bad} is out of range for a dataset of {n} samples")));
        }
        let ids: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
        let ids = Tensor::from_vec(ids, [indices.len()])?;
        self.tensors.iter().map(|t| t.index_select(0, &ids.to(t.device())?)).collect()
    }
}

/// Batches of a dataset (torch's `DataLoader`): `batch_size`, `shuffle` with a seed (a different,
/// reproducible order each epoch), `drop_last`, and batches assembled `prefetch` ahead on a
/// background thread.
pub struct DataLoader<D: Dataset + 'static> {
    dataset: Arc<D>,
    /// samples per batch
    pub batch_size: usize,
    /// reshuffle every epoch
    pub shuffle: bool,
    /// base seed of the shuffling
    pub seed: u64,
    /// drop the last incomplete batch
    pub drop_last: bool,
    /// batches prepared ahead (0: assemble on the calling thread)
    pub prefetch: usize,
}

impl<D: Dataset + 'static> DataLoader<D> {
    /// A loader with torch's defaults (`shuffle = false`, `drop_last = false`) and 2 batches of prefetch.
    pub fn new(dataset: D, batch_size: usize) -> Result<Self> {
        if batch_size == 0 {
            return Err(Error::msg("batch_size should be a positive integer value, but got batch_size=0"));
        }
        Ok(DataLoader {
            dataset: Arc::new(dataset),
            batch_size,
            shuffle: false,
            seed: 0,
            drop_last: false,
            prefetch: 2,
        })
    }

    /// Enables seeded shuffling.
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

    /// The dataset.
    pub fn dataset(&self) -> &D {
        &self.dataset
    }

    /// Number of batches per epoch.
    pub fn len(&self) -> usize {
        let n = self.dataset.len();
        if self.drop_last {
            n / self.batch_size
        } else {
            n.div_ceil(self.batch_size)
        }
    }

    /// True when an epoch has no batch.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sample order of `epoch`.
    fn order(&self, epoch: u64) -> Result<Vec<usize>> {
        let n = self.dataset.len();
        if !self.shuffle {
            return Ok((0..n).collect());
        }
        if n == 0 {
            // torch's RandomSampler
            return Err(Error::msg("num_samples should be a positive integer value, but got num_samples=0"));
        }
        let gen = Generator::new(self.seed.wrapping_add(epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        // Sorting random keys: f64 ones (53 bits), so that ties, which a stable sort leaves in
        // index order, stay negligible even for very large datasets.
        let keys = Tensor::rand_with([n], DType::F64, Some(&gen))?.argsort(0, false)?;
        Ok(keys.to_vec::<i64>()?.into_iter().map(|i| i as usize).collect())
    }

    /// The batches of `epoch` (each a vector of stacked fields).
    pub fn epoch(&self, epoch: u64) -> Result<Batches> {
        let order = self.order(epoch)?;
        let mut chunks: Vec<Vec<usize>> = order.chunks(self.batch_size).map(<[usize]>::to_vec).collect();
        if self.drop_last && chunks.last().is_some_and(|c| c.len() < self.batch_size) {
            chunks.pop();
        }
        let dataset = self.dataset.clone();
        let make = move |idx: &[usize]| dataset.get_batch(idx);
        if self.prefetch == 0 {
            return Ok(Batches {
                inner: BatchesInner::Inline(Box::new(chunks.into_iter().map(move |c| make(&c)))),
                thread: None,
            });
        }
        let (tx, rx) = sync_channel(self.prefetch);
        let thread = std::thread::spawn(move || {
            for c in chunks {
                if tx.send(make(&c)).is_err() {
                    break;
                }
            }
        });
        Ok(Batches { inner: BatchesInner::Thread(rx), thread: Some(thread) })
    }
}

enum BatchesInner {
    Inline(Box<dyn Iterator<Item = Result<Vec<Tensor>>>>),
    Thread(Receiver<Result<Vec<Tensor>>>),
}

/// The batches of one epoch.
pub struct Batches {
    inner: BatchesInner,
    thread: Option<JoinHandle<()>>,
}

impl Iterator for Batches {
    type Item = Result<Vec<Tensor>>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            BatchesInner::Inline(it) => it.next(),
            BatchesInner::Thread(rx) => match rx.recv() {
                Ok(batch) => Some(batch),
                // The producer is gone: the epoch ended, or the dataset panicked on the prefetch
                // thread, which is raised here as without prefetching (never a short epoch).
                Err(_) => {
                    if let Some(Err(panic)) = self.thread.take().map(JoinHandle::join) {
                        std::panic::resume_unwind(panic);
                    }
                    None
                }
            },
        }
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        // Closing the channel stops the producer; wait for it so no thread outlives the epoch.
        self.inner = BatchesInner::Inline(Box::new(std::iter::empty()));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
