//! Datasets of datasets: [`ConcatDataset`] (one after another), [`StackDataset`] (side by side)
//! and [`ChainDataset`] (streams one after another).

use std::sync::Arc;

use oxtorch_tensor::{Error, Result, Tensor};

use super::dataset::{out_of_range, Dataset};
use super::iterable::IterableDataset;

/// Several datasets one after another (torch's `ConcatDataset`).
pub struct ConcatDataset {
    datasets: Vec<Arc<dyn Dataset>>,
    cumulative_sizes: Vec<usize>,
}

impl ConcatDataset {
    /// The concatenation of `datasets`; none is torch's error.
    pub fn new(datasets: Vec<Arc<dyn Dataset>>) -> Result<Self> {
        if datasets.is_empty() {
            return Err(Error::msg("datasets should not be an empty iterable"));
        }
        let cumulative_sizes = datasets
            .iter()
            .scan(0, |total, d| {
                *total += d.len();
                Some(*total)
            })
            .collect();
        Ok(ConcatDataset { datasets, cumulative_sizes })
    }

    /// The running totals of the datasets' lengths (torch's `cumulative_sizes`).
    pub fn cumulative_sizes(&self) -> &[usize] {
        &self.cumulative_sizes
    }

    /// The datasets.
    pub fn datasets(&self) -> &[Arc<dyn Dataset>] {
        &self.datasets
    }

    /// The dataset of `index` and the index within it.
    fn locate(&self, index: usize) -> Result<(usize, usize)> {
        let d = self.cumulative_sizes.partition_point(|&c| c <= index);
        if d == self.datasets.len() {
            return Err(out_of_range(index, self.len()));
        }
        let start = if d == 0 { 0 } else { self.cumulative_sizes[d - 1] };
        Ok((d, index - start))
    }
}

impl Dataset for ConcatDataset {
    fn len(&self) -> usize {
        self.cumulative_sizes.last().copied().unwrap_or(0)
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        let (d, i) = self.locate(index)?;
        self.datasets[d].get(i)
    }

    /// A batch within one dataset is that dataset's batch; one across datasets stacks samples.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let located = indices.iter().map(|&i| self.locate(i)).collect::<Result<Vec<_>>>()?;
        match located.first() {
            Some(&(d, _)) if located.iter().all(|&(e, _)| e == d) => {
                let local: Vec<usize> = located.iter().map(|&(_, i)| i).collect();
                self.datasets[d].get_batch(&local)
            }
            _ => {
                let samples =
                    located.iter().map(|&(d, i)| self.datasets[d].get(i)).collect::<Result<Vec<_>>>()?;
                super::default_collate(samples)
            }
        }
    }
}

/// Several datasets of one length side by side: sample `i` is the fields of every dataset's
/// sample `i`, in order (torch's `StackDataset` of positional datasets).
pub struct StackDataset {
    datasets: Vec<Arc<dyn Dataset>>,
    len: usize,
}

impl StackDataset {
    /// The datasets side by side; none, or different lengths, are torch's errors.
    pub fn new(datasets: Vec<Arc<dyn Dataset>>) -> Result<Self> {
        let Some(first) = datasets.first() else {
            return Err(Error::msg("At least one dataset should be passed"));
        };
        let len = first.len();
        if datasets.iter().any(|d| d.len() != len) {
            return Err(Error::msg("Size mismatch between datasets"));
        }
        Ok(StackDataset { datasets, len })
    }

    /// The datasets.
    pub fn datasets(&self) -> &[Arc<dyn Dataset>] {
        &self.datasets
    }
}

impl Dataset for StackDataset {
    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        if index >= self.len {
            return Err(out_of_range(index, self.len));
        }
        let mut fields = Vec::new();
        for d in &self.datasets {
            fields.extend(d.get(index)?);
        }
        Ok(fields)
    }

    /// Each dataset's own batch, fields side by side.
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.len) {
            return Err(out_of_range(bad, self.len));
        }
        let mut fields = Vec::new();
        for d in &self.datasets {
            fields.extend(d.get_batch(indices)?);
        }
        Ok(fields)
    }
}

/// Several [`IterableDataset`]s one after another (torch's `ChainDataset`): a pass yields every
/// sample of the first dataset's pass, then of the second's, and so on, each stream started when
/// the previous one ends. An error of a stream is yielded in place of its sample (a loader then
/// ends the pass, as torch's exception does).
pub struct ChainDataset {
    datasets: Vec<Arc<dyn IterableDataset>>,
}

impl ChainDataset {
    /// The chain of `datasets` (none gives an empty stream, as torch's).
    pub fn new(datasets: Vec<Arc<dyn IterableDataset>>) -> Self {
        ChainDataset { datasets }
    }

    /// The datasets.
    pub fn datasets(&self) -> &[Arc<dyn IterableDataset>] {
        &self.datasets
    }
}

impl IterableDataset for ChainDataset {
    fn iter(&self) -> Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send> {
        let datasets = self.datasets.clone();
        Box::new(datasets.into_iter().flat_map(|d| d.iter()))
    }
}
