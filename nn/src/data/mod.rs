//! `torch.utils.data`: map-style and iterable datasets, samplers, collation and a batching loader
//! with seeded shuffling, a background prefetch thread and parallel workers.
//!
//! - [`Dataset`] (map-style) and [`TensorDataset`]; [`Subset`], [`random_split`], [`ConcatDataset`]
//!   and [`StackDataset`] combine datasets.
//! - [`Sampler`]s give an epoch's sample order from a base seed and the epoch number (torch's
//!   `set_epoch`, without mutable state): [`SequentialSampler`], [`RandomSampler`],
//!   [`SubsetRandomSampler`], [`WeightedRandomSampler`]; [`BatchSampler`] groups them in batches.
//! - [`DataLoader`] batches a map-style dataset; [`IterableLoader`] batches an
//!   [`IterableDataset`]; both collate samples with [`default_collate`] or a `collate_fn`.
//! - A [`DataLoader`]'s worker threads are torch's workers: each has its own default generator
//!   seeded `base_seed + id` (reproducible random augmentation, the consuming thread's stream
//!   untouched), its [`WorkerInfo`] from [`get_worker_info`], and a `worker_init_fn`.

mod batch_sampler;
mod collate;
mod combine;
mod dataset;
mod iterable;
mod loader;
mod sampler;
mod split;
mod workers;

pub use batch_sampler::BatchSampler;
pub use collate::{default_collate, default_convert, CollateFn};
pub use combine::{ChainDataset, ConcatDataset, StackDataset};
pub use dataset::{Dataset, TensorDataset};
pub use iterable::{IterableDataset, IterableLoader};
pub use loader::DataLoader;
pub use sampler::{RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler};
pub use split::{random_split, Subset};
pub use workers::{get_worker_info, Batches, WorkerInfo, WorkerInitFn};
