//! Bounded dynamism along the outermost dimension (`Tensor::mark_dynamic`).
//!
//! A tensor marked dynamic along dim 0 with `n` rows and an upper bound keeps its elements in a
//! buffer padded to the *bucket* of `n` (the next power of two, at most the bound): the first
//! `len` elements are the tensor's, the rest is padding. Because dim 0 is the outermost, the valid
//! elements are a prefix of the padded buffer, so the strides of every view stay what they are for
//! `n` rows; only the row count changes.
//!
//! A fused graph reading such buffers is *generalized* to the bucket (`lazy::generalize`): ops
//! that keep rows apart compute the padding rows too, ops across the rows (sums, products
//! contracting them, softmax along them) see the padding replaced by their neutral value, the
//! graph is emitted with the bucket's row count, its row-keeping results stay padded, and every
//! `n` of a bucket runs the same compiled program. A graph that cannot be generalized (a slice of
//! the rows) runs with its exact shapes, compiled per `n`: never a wrong result. Eager ops read
//! padded buffers through an exact copy (`XlaStorage::exact_buffer`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxtorch_core::{DType, Device, Error, Result};

use super::cache::Program;
use super::storage::XlaStorage;
use super::{execute, lazy, materialize, registry, transfer};
use crate::pjrt::{Buffer, ElementType, TensorType};
use crate::stablehlo::FunctionBuilder;

/// The rows of a dynamic buffer: `n` valid rows, padded to `bucket` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// The tensor's row count (its dim 0).
    pub n: usize,
    /// The padded row count: [`bucket`] of `n`.
    pub bucket: usize,
}

/// The bucket of `n` rows under the bound `max`: the next power of two, at most `max`. Every `n`
/// from 1 to 512 falls in one of 10 buckets.
pub fn bucket(n: usize, max: usize) -> usize {
    n.max(1).next_power_of_two().min(max)
}

impl XlaStorage {
    /// Whether the buffer holds more elements than the storage (a dynamic tensor's padding).
    pub fn extent(&self) -> Option<Extent> {
        self.data.extent()
    }

    /// A copy of this contiguous storage of `n` rows (dim 0 of its tensor) padded to the bucket of
    /// `n` under `max` (see the module docs). The rows are copied through the host once, so that no
    /// program is compiled per `n`.
    pub fn mark_dynamic(&self, n: usize, max: usize) -> Result<XlaStorage> {
        if n == 0 || n > max {
            return Err(Error::msg(format!(
                "mark_dynamic: dimension 0 has size {n}, outside the bound 1..={max}"
            )));
        }
        if !self.len.is_multiple_of(n) {
            return Err(Error::msg(format!(
                "mark_dynamic: a storage of {} elements is not {n} rows",
                self.len
            )));
        }
        let extent = Extent { n, bucket: bucket(n, max) };
        if self.extent() == Some(extent) {
            return Ok(XlaStorage { data: self.data.clone(), ..*self });
        }
        let row = self.len / n;
        let mut bytes = transfer::download(self.buffer()?)?;
        bytes.truncate(self.len * self.dtype.size_in_bytes());
        bytes.resize(extent.bucket * row * self.dtype.size_in_bytes(), 0);
        let (client, pjrt_device) = registry::device(self.device)?;
        let dims = [(extent.bucket * row) as i64];
        let buffer = transfer::upload(client, pjrt_device, &bytes, self.dtype, &dims)?;
        Ok(XlaStorage {
            data: lazy::Data::Ready(Arc::new(buffer), Some(extent)),
            dtype: self.dtype,
            device: self.device,
            len: self.len,
        })
    }

    /// The buffer holding exactly the storage's `len` elements: the buffer itself, or for a padded
    /// one its prefix, cut by a program (one per dtype and size) for eager ops, which take exact
    /// buffers.
    pub(crate) fn exact_buffer(&self) -> Result<Arc<Buffer>> {
        self.buffer()?;
        let buffer = self
            .data
            .ready()
            .cloned()
            .ok_or_else(|| Error::msg("xla: a pending tensor could not be computed"))?;
        if self.extent().is_none() {
            return Ok(buffer);
        }
        let padded = buffer.dims().iter().product::<i64>().max(0) as usize;
        let program = prefix_program(self.dtype, padded, self.len, self.device)?;
        let mut out = execute::launch(&program, &[&buffer], self.device)?;
        out.pop()
            .and_then(|s| s.data.ready().cloned())
            .ok_or_else(|| Error::msg("xla: the prefix program returned nothing"))
    }
}

/// Programs taking the first `len` of `padded` elements, by (dtype, padded, len, device).
type PrefixPrograms = HashMap<(DType, usize, usize, Device), Arc<Program>>;
static PREFIX: Mutex<Option<PrefixPrograms>> = Mutex::new(None);

fn prefix_program(dtype: DType, padded: usize, len: usize, device: Device) -> Result<Arc<Program>> {
    let key = (dtype, padded, len, device);
    if let Some(p) = PREFIX.lock().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&key)) {
        return Ok(p.clone());
    }
    let (mut b, args) = FunctionBuilder::new(&[TensorType::new(ElementType::from(dtype), &[padded as i64])]);
    let prefix = materialize::slice_1d(&mut b, &args[0], 0, len);
    let program =
        execute::compile(&b.finish(&[&prefix]), device, vec![dtype], "the rows of a dynamic tensor")?;
    PREFIX
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, program.clone());
    Ok(program)
}

/// Reports (under `OXTORCH_LOG_COMPILES`) why a graph reading dynamic tensors runs with its exact
/// shapes, and counts it in the metrics.
pub(crate) fn refused(reason: &str) {
    super::metrics::record_dynamic_refusal();
    if crate::compiler::log_compiles() {
        eprintln!(
            "[oxtorch xla] dynamic rows: the graph runs with exact shapes (compiled per row count): {reason}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets_are_powers_of_two_under_the_bound() {
        assert_eq!(bucket(1, 512), 1);
        assert_eq!(bucket(3, 512), 4);
        assert_eq!(bucket(64, 512), 64);
        assert_eq!(bucket(65, 100), 100);
        let distinct: std::collections::BTreeSet<usize> = (1..=512).map(|n| bucket(n, 512)).collect();
        assert_eq!(distinct.len(), 10);
    }
}
