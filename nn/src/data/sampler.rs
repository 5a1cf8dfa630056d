//! Samplers: the order in which an epoch visits a dataset's indices (torch's `Sampler`s).
//!
//! A sampler holds a base seed; [`Sampler::indices`] takes the epoch, so each epoch has its own
//! order, reproducible from the seed and the epoch alone (torch's `DistributedSampler.set_epoch`
//! scheme, without mutable state). Random streams are oxtorch's (Philox), not torch's.

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

/// The order of an epoch's sample indices (torch's `Sampler`).
pub trait Sampler: Send + Sync {
    /// Number of indices per epoch.
    fn len(&self) -> usize;

    /// True when an epoch has no index.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The indices of `epoch`, in order (`len` of them).
    fn indices(&self, epoch: u64) -> Result<Vec<usize>>;
}

/// A shared sampler samples as the one it points to.
impl<S: Sampler + ?Sized> Sampler for std::sync::Arc<S> {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn indices(&self, epoch: u64) -> Result<Vec<usize>> {
        (**self).indices(epoch)
    }
}

/// A boxed sampler samples as the one it holds.
impl<S: Sampler + ?Sized> Sampler for Box<S> {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn indices(&self, epoch: u64) -> Result<Vec<usize>> {
        (**self).indices(epoch)
    }
}

/// The generator of `epoch` from a base `seed`.
pub(crate) fn epoch_generator(seed: u64, epoch: u64) -> Generator {
    Generator::new(seed.wrapping_add(epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// A random permutation of `0..n` from `gen`: sorted random keys, f64 ones (53 bits), so that
/// ties, which a stable sort leaves in index order, stay negligible even for very large datasets.
fn permutation(n: usize, gen: &Generator) -> Result<Vec<usize>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let keys = Tensor::rand_with([n], DType::F64, Some(gen))?.argsort(0, false)?;
    Ok(keys.to_vec::<i64>()?.into_iter().map(|i| i as usize).collect())
}

fn num_samples_error(num_samples: usize) -> Error {
    Error::msg(format!("num_samples should be a positive integer value, but got num_samples={num_samples}"))
}

/// `0..n` in order (torch's `SequentialSampler`).
#[derive(Clone, Debug)]
pub struct SequentialSampler {
    n: usize,
}

impl SequentialSampler {
    /// The indices of a dataset of `n` samples.
    pub fn new(n: usize) -> Self {
        SequentialSampler { n }
    }
}

impl Sampler for SequentialSampler {
    fn len(&self) -> usize {
        self.n
    }

    fn indices(&self, _epoch: u64) -> Result<Vec<usize>> {
        Ok((0..self.n).collect())
    }
}

/// Random indices of a dataset of `n` samples (torch's `RandomSampler`): without replacement a
/// new permutation each epoch (for `num_samples > n`, whole permutations then part of one, as
/// torch); with replacement `num_samples` uniform draws.
#[derive(Clone, Debug)]
pub struct RandomSampler {
    n: usize,
    replacement: bool,
    num_samples: usize,
    seed: u64,
}

impl RandomSampler {
    /// torch's `RandomSampler(data_source, replacement, num_samples, generator)`: `n` the
    /// dataset's length, `num_samples` defaulting to `n`, `seed` the base seed of the epochs.
    /// Zero samples is torch's error.
    pub fn new(n: usize, replacement: bool, num_samples: Option<usize>, seed: u64) -> Result<Self> {
        let num_samples = num_samples.unwrap_or(n);
        if num_samples == 0 {
            return Err(num_samples_error(num_samples));
        }
        Ok(RandomSampler { n, replacement, num_samples, seed })
    }

    /// A permutation of `0..n` each epoch (torch's `RandomSampler(data_source)`).
    pub fn shuffled(n: usize, seed: u64) -> Result<Self> {
        RandomSampler::new(n, false, None, seed)
    }
}

impl Sampler for RandomSampler {
    fn len(&self) -> usize {
        self.num_samples
    }

    fn indices(&self, epoch: u64) -> Result<Vec<usize>> {
        let gen = epoch_generator(self.seed, epoch);
        if self.n == 0 {
            return Err(Error::msg("cannot sample from an empty dataset (RandomSampler with n=0)"));
        }
        if self.replacement {
            let draws = Tensor::randint_with(0, self.n as i64, [self.num_samples], DType::I64, Some(&gen))?;
            return Ok(draws.to_vec::<i64>()?.into_iter().map(|i| i as usize).collect());
        }
        let mut out = Vec::with_capacity(self.num_samples);
        while out.len() < self.num_samples {
            let perm = permutation(self.n, &gen)?;
            let take = (self.num_samples - out.len()).min(self.n);
            out.extend_from_slice(&perm[..take]);
        }
        Ok(out)
    }
}

/// The given indices in a new random order each epoch (torch's `SubsetRandomSampler`).
#[derive(Clone, Debug)]
pub struct SubsetRandomSampler {
    indices: Vec<usize>,
    seed: u64,
}

impl SubsetRandomSampler {
    /// Permutes `indices` each epoch from the base `seed`.
    pub fn new(indices: Vec<usize>, seed: u64) -> Self {
        SubsetRandomSampler { indices, seed }
    }
}

impl Sampler for SubsetRandomSampler {
    fn len(&self) -> usize {
        self.indices.len()
    }

    fn indices(&self, epoch: u64) -> Result<Vec<usize>> {
        let perm = permutation(self.indices.len(), &epoch_generator(self.seed, epoch))?;
        Ok(perm.into_iter().map(|i| self.indices[i]).collect())
    }
}

/// Indices drawn with probabilities proportional to `weights` (torch's `WeightedRandomSampler`,
/// through `multinomial`): with replacement zero-weight indices are never drawn; without, the
/// indices of an epoch are distinct.
#[derive(Clone, Debug)]
pub struct WeightedRandomSampler {
    weights: Vec<f64>,
    num_samples: usize,
    replacement: bool,
    seed: u64,
}

impl WeightedRandomSampler {
    /// torch's `WeightedRandomSampler(weights, num_samples, replacement, generator)`. torch's
    /// checks, made here rather than at the first epoch: `num_samples` positive, weights finite
    /// and non-negative with a positive sum, and without replacement at most `weights.len()`
    /// samples.
    pub fn new(weights: Vec<f64>, num_samples: usize, replacement: bool, seed: u64) -> Result<Self> {
        if num_samples == 0 {
            return Err(num_samples_error(num_samples));
        }
        if weights.is_empty() {
            return Err(Error::msg("invalid multinomial distribution (sum of probabilities <= 0)"));
        }
        if !replacement && num_samples > weights.len() {
            return Err(Error::msg(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
            ));
        }
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::msg("probability tensor contains either `inf`, `nan` or element < 0"));
        }
        if weights.iter().sum::<f64>() <= 0.0 {
            return Err(Error::msg("invalid multinomial distribution (sum of probabilities <= 0)"));
        }
        Ok(WeightedRandomSampler { weights, num_samples, replacement, seed })
    }
}

impl Sampler for WeightedRandomSampler {
    fn len(&self) -> usize {
        self.num_samples
    }

    fn indices(&self, epoch: u64) -> Result<Vec<usize>> {
        let gen = epoch_generator(self.seed, epoch);
        let weights = Tensor::from_vec(self.weights.clone(), [self.weights.len()])?;
        let draws = weights.multinomial_with(self.num_samples, self.replacement, Some(&gen))?;
        Ok(draws.to_vec::<i64>()?.into_iter().map(|i| i as usize).collect())
    }
}
