//! The map-style [`Dataset`] trait and [`TensorDataset`].

use std::sync::Arc;

use oxtorch_tensor::{Error, Result, Tensor};

use super::collate::default_collate;

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
    /// `__getitems__`). The default stacks [`Dataset::get`]'s samples with
    /// [`default_collate`](super::default_collate); a dataset that can gather a whole batch at
    /// once (as [`TensorDataset`] does) overrides it.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let samples = indices.iter().map(|&i| self.get(i)).collect::<Result<Vec<_>>>()?;
        default_collate(samples)
    }
}

/// A shared dataset is a dataset (so that several [`Subset`](super::Subset)s, loaders or
/// combinations can hold one).
impl<D: Dataset + ?Sized> Dataset for Arc<D> {
    fn len(&self) -> usize {
        (**self).len()
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        (**self).get(index)
    }

    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        (**self).get_batch(indices)
    }
}

/// A boxed dataset is a dataset.
impl<D: Dataset + ?Sized> Dataset for Box<D> {
    fn len(&self) -> usize {
        (**self).len()
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        (**self).get(index)
    }

    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        (**self).get_batch(indices)
    }
}

/// The error of an index past a dataset's end.
pub(crate) fn out_of_range(index: usize, n: usize) -> Error {
    Error::msg(format!("index {index} is out of range for a dataset of {n} samples"))
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
        let n = self.len();
        if index >= n {
            return Err(Error::msg(format!("index {index} is out of range for a dataset of {n} samples")));
        }
        self.tensors.iter().map(|t| t.select(0, index as isize)).collect()
    }

    /// One `index_select` per tensor: on an XLA device a batch is one gather of the same program
    /// whatever the indices, not a stack of views.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let n = self.len();
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(out_of_range(bad, n));
        }
        let ids: Vec<i64> = indices.iter().map(|&i| i as i64).collect();
        let ids = Tensor::from_vec(ids, [indices.len()])?;
        self.tensors.iter().map(|t| t.index_select(0, &ids.to(t.device())?)).collect()
    }
}
