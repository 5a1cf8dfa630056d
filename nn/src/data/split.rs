//! [`Subset`] and [`random_split`].

use std::sync::Arc;

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::dataset::{out_of_range, Dataset};
use super::sampler::epoch_generator;

/// The samples `indices` of a dataset, in that order (torch's `Subset`).
pub struct Subset<D: Dataset + ?Sized> {
    dataset: Arc<D>,
    indices: Vec<usize>,
}

impl<D: Dataset + ?Sized> Subset<D> {
    /// The samples `indices` of `dataset` (checked when read, as torch).
    pub fn new(dataset: Arc<D>, indices: Vec<usize>) -> Self {
        Subset { dataset, indices }
    }

    /// The whole dataset.
    pub fn dataset(&self) -> &Arc<D> {
        &self.dataset
    }

    /// The dataset's indices of this subset's samples.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    fn map(&self, index: usize) -> Result<usize> {
        self.indices.get(index).copied().ok_or_else(|| out_of_range(index, self.indices.len()))
    }
}

impl<D: Dataset + ?Sized> Dataset for Subset<D> {
    fn len(&self) -> usize {
        self.indices.len()
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        self.dataset.get(self.map(index)?)
    }

    /// The dataset's own batch of the mapped indices (one gather for a
    /// [`TensorDataset`](super::TensorDataset)).
    fn get_batch(&self, indices: &[usize]) -> Result<Vec<Tensor>> {
        let mapped = indices.iter().map(|&i| self.map(i)).collect::<Result<Vec<_>>>()?;
        self.dataset.get_batch(&mapped)
    }
}

/// `math.isclose(a, b)` with Python's default relative tolerance.
fn isclose(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The split sizes of torch's `random_split` for a dataset of `n` samples: `lengths` summing to 1
/// (within `math.isclose`, and not above) are fractions, each floored, the remainder then given
/// one by one round-robin from the first split; other `lengths` are counts, which must sum to `n`.
fn split_lengths(n: usize, lengths: &[f64]) -> Result<Vec<usize>> {
    let sum: f64 = lengths.iter().sum();
    let counts: Vec<usize> = if isclose(sum, 1.0) && sum <= 1.0 {
        let mut counts = Vec::with_capacity(lengths.len());
        for (i, &frac) in lengths.iter().enumerate() {
            if !(0.0..=1.0).contains(&frac) {
                return Err(Error::msg(format!("Fraction at index {i} is not between 0 and 1")));
            }
            counts.push((n as f64 * frac).floor() as usize);
        }
        let remainder = n - counts.iter().sum::<usize>().min(n);
        for i in 0..remainder {
            let k = i % counts.len();
            counts[k] += 1;
        }
        counts
    } else {
        if let Some(bad) = lengths.iter().find(|l| !(l.is_finite() && **l >= 0.0 && l.fract() == 0.0)) {
            return Err(Error::msg(format!(
                "random_split: lengths must be non-negative whole counts or fractions summing to 1, got {bad}"
            )));
        }
        lengths.iter().map(|&l| l as usize).collect()
    };
    if counts.iter().sum::<usize>() != n {
        return Err(Error::msg("Sum of input lengths does not equal the length of the input dataset!"));
    }
    Ok(counts)
}

/// Splits `dataset` into non-overlapping random [`Subset`]s of the given `lengths` (torch's
/// `random_split`): counts summing to the dataset's length, or fractions summing to 1 (floored,
/// the remainder given round-robin, as torch). The permutation comes from `seed` (oxtorch's
/// random stream, not torch's).
pub fn random_split<D: Dataset + ?Sized>(
    dataset: Arc<D>,
    lengths: &[f64],
    seed: u64,
) -> Result<Vec<Subset<D>>> {
    let counts = split_lengths(dataset.len(), lengths)?;
    let n: usize = counts.iter().sum();
    let perm = Tensor::randperm_with(n, DType::I64, Some(&epoch_generator(seed, 0)))?;
    let perm: Vec<usize> = perm.to_vec::<i64>()?.into_iter().map(|i| i as usize).collect();
    let mut offset = 0;
    Ok(counts
        .into_iter()
        .map(|c| {
            let part = Subset::new(dataset.clone(), perm[offset..offset + c].to_vec());
            offset += c;
            part
        })
        .collect())
}
