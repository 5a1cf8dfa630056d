//! [`BatchSampler`]: a sampler's indices grouped in batches.

use std::sync::Arc;

use oxtorch_tensor::{Error, Result};

use super::sampler::Sampler;

/// A sampler's indices in batches of `batch_size`, the last one short unless `drop_last`
/// (torch's `BatchSampler`).
#[derive(Clone)]
pub struct BatchSampler {
    sampler: Arc<dyn Sampler>,
    batch_size: usize,
    drop_last: bool,
}

impl BatchSampler {
    /// torch's `BatchSampler(sampler, batch_size, drop_last)`; a zero `batch_size` is torch's error.
    pub fn new(sampler: impl Sampler + 'static, batch_size: usize, drop_last: bool) -> Result<Self> {
        BatchSampler::from_arc(Arc::new(sampler), batch_size, drop_last)
    }

    /// [`BatchSampler::new`] from a shared sampler.
    pub fn from_arc(sampler: Arc<dyn Sampler>, batch_size: usize, drop_last: bool) -> Result<Self> {
        if batch_size == 0 {
            return Err(Error::msg(format!(
                "batch_size should be a positive integer value, but got batch_size={batch_size}"
            )));
        }
        Ok(BatchSampler { sampler, batch_size, drop_last })
    }

    /// Samples per batch.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Whether the last short batch is dropped.
    pub fn drop_last(&self) -> bool {
        self.drop_last
    }

    /// Number of batches per epoch.
    pub fn len(&self) -> usize {
        let n = self.sampler.len();
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

    /// The batches of `epoch`: the sampler's indices of that epoch, in chunks.
    pub fn batches(&self, epoch: u64) -> Result<Vec<Vec<usize>>> {
        let order = self.sampler.indices(epoch)?;
        let mut chunks: Vec<Vec<usize>> = order.chunks(self.batch_size).map(<[usize]>::to_vec).collect();
        if self.drop_last && chunks.last().is_some_and(|c| c.len() < self.batch_size) {
            chunks.pop();
        }
        Ok(chunks)
    }
}
