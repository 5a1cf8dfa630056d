//! [`IterableDataset`] and its loader, [`IterableLoader`].

use std::sync::Arc;

use oxtorch_tensor::{Error, Result, Tensor};

use super::collate::{default_collate, CollateFn};
use super::workers::Batches;

/// A stream of samples, each a tuple of tensors (torch's `IterableDataset`).
pub trait IterableDataset: Send + Sync {
    /// A new pass over the samples (torch's `__iter__`); an error ends the pass.
    fn iter(&self) -> Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send>;
}

/// Batches of an [`IterableDataset`] (torch's `DataLoader` over one): consecutive samples in
/// batches of `batch_size`, the last one short unless `drop_last`, merged by
/// [`default_collate`](super::default_collate) or a `collate_fn`. Batches are assembled on the
/// calling thread (torch's workers would each replay the stream, which needs sharding by the
/// dataset).
pub struct IterableLoader<D: IterableDataset + 'static> {
    dataset: Arc<D>,
    /// samples per batch
    pub batch_size: usize,
    /// drop the last incomplete batch
    pub drop_last: bool,
    collate_fn: Option<Arc<CollateFn>>,
}

impl<D: IterableDataset + 'static> IterableLoader<D> {
    /// A loader with `drop_last = false`; a zero `batch_size` is torch's error.
    pub fn new(dataset: D, batch_size: usize) -> Result<Self> {
        if batch_size == 0 {
            return Err(Error::msg(format!(
                "batch_size should be a positive integer value, but got batch_size={batch_size}"
            )));
        }
        Ok(IterableLoader { dataset: Arc::new(dataset), batch_size, drop_last: false, collate_fn: None })
    }

    /// Sets `drop_last`.
    pub fn drop_last(mut self, drop_last: bool) -> Self {
        self.drop_last = drop_last;
        self
    }

    /// Merges a batch's samples with `collate_fn` instead of [`default_collate`].
    pub fn collate_fn(
        mut self,
        collate_fn: impl Fn(Vec<Vec<Tensor>>) -> Result<Vec<Tensor>> + Send + Sync + 'static,
    ) -> Self {
        self.collate_fn = Some(Arc::new(collate_fn));
        self
    }

    /// The dataset.
    pub fn dataset(&self) -> &D {
        &self.dataset
    }

    /// The batches of one pass over the dataset. An error of the stream is yielded in place of
    /// its batch and ends the pass.
    pub fn iter(&self) -> Result<Batches> {
        if self.batch_size == 0 {
            return Err(Error::msg("batch_size should be a positive integer value, but got batch_size=0"));
        }
        Ok(Batches::inline(Chunks {
            samples: self.dataset.iter(),
            batch_size: self.batch_size,
            drop_last: self.drop_last,
            collate: self.collate_fn.clone(),
            done: false,
        }))
    }
}

/// A sample stream in collated batches.
struct Chunks {
    samples: Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send>,
    batch_size: usize,
    drop_last: bool,
    collate: Option<Arc<CollateFn>>,
    done: bool,
}

impl Iterator for Chunks {
    type Item = Result<Vec<Tensor>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut batch = Vec::with_capacity(self.batch_size);
        while batch.len() < self.batch_size {
            match self.samples.next() {
                Some(Ok(sample)) => batch.push(sample),
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    self.done = true;
                    break;
                }
            }
        }
        if batch.is_empty() || (self.drop_last && batch.len() < self.batch_size) {
            return None;
        }
        Some(match &self.collate {
            Some(collate) => collate(batch),
            None => default_collate(batch),
        })
    }
}
