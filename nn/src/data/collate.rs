//! Merging samples into a batch (torch's `collate_fn`, `default_collate` and `default_convert`).

use oxtorch_tensor::{Error, Result, Tensor};

/// A `collate_fn`: the samples of a batch (each a tuple of tensor fields) to the batch's fields.
pub type CollateFn = dyn Fn(Vec<Vec<Tensor>>) -> Result<Vec<Tensor>> + Send + Sync;

/// torch's `default_collate` for samples that are tuples of tensors: each field stacked along a
/// new first dim. Samples with different numbers of fields are torch's error; an empty batch has
/// no fields.
pub fn default_collate(samples: Vec<Vec<Tensor>>) -> Result<Vec<Tensor>> {
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

/// torch's `default_convert`, the `collate_fn` of a loader without automatic batching: each
/// sample as it is. torch converts NumPy arrays (and NumPy scalars) inside a sample to tensors and
/// leaves tensors, numbers and strings alone; a sample here is already a tuple of tensors, so it
/// is returned unchanged (the same tensors, not copies).
pub fn default_convert(sample: Vec<Tensor>) -> Result<Vec<Tensor>> {
    Ok(sample)
}
