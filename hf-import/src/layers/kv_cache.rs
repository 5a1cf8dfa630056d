//! The KV cache of decoder generation: per layer, key and value buffers
//! `[batch, kv_heads, capacity, head_dim]` allocated once and written in place at the current position.
//!
//! Two ways to read it, picked per device by [`KvCache::for_device`] (and by `generate`'s
//! `cache_implementation`):
//! - **prefix** (cpu): attention reads the filled slots only, a `narrow` view of the buffers, so a
//!   step costs no masking of empty slots and no copy of the cache;
//! - **fixed** (xla, tpu): attention reads every slot, and the causal mask hides the slots at or past
//!   the current length. Every decode step then has the same shapes, so its programs compile once;
//!   the moving write position is a view's storage offset, a runtime input of the write program.
//!
//! A cache given no capacity grows on demand (doubling, so appends stay amortised O(1)).
//!
//! In prefix mode the values are stored transposed, `[batch, kv_heads, head_dim, capacity]`, and handed
//! out as a transposed view: `probs · v` then reads each output column of `v` contiguously along the
//! keys, which the CPU backend runs as dot products without packing (one new position is a strided
//! write of `head_dim` elements per head).

use oxtorch_tensor::{DType, Device, Tensor};

use super::{CrossAttentionStates, SsmState};
use crate::error::{Error, Result};

/// The smallest bucket a length is rounded up to on fixed-shape devices.
const MIN_BUCKET: usize = 16;
/// Up to here buckets are powers of two; past it, multiples of it.
const POW2_BUCKETS_UP_TO: usize = 512;

/// `len` rounded up to a bucket: a power of two from 16 up to 512, then a multiple of 512. The
/// prompts of lengths 1..=512 fall into 6 buckets (16, 32, ..., 512), so a fixed-shape device
/// compiles at most 6 prefill program sets for them.
pub fn bucket(len: usize) -> usize {
    if len <= POW2_BUCKETS_UP_TO {
        len.max(MIN_BUCKET).next_power_of_two()
    } else {
        len.div_ceil(POW2_BUCKETS_UP_TO).saturating_mul(POW2_BUCKETS_UP_TO)
    }
}

/// Checks that a layer's key and value buffers, each `shape` of `dtype`, can be allocated on
/// `device`: their size must not overflow and, on the cpu, the allocator must grant it (asked for
/// once and released at once; the kernel refuses what it cannot back, which is what the CPU
/// backend's allocation would meet). A cache the machine cannot hold is then this error, not the
/// backend's out-of-memory panic. (Other devices report a failed allocation as an error already.)
fn check_fits(shape: [usize; 4], dtype: DType, device: Device) -> Result<()> {
    let bytes = shape.iter().try_fold(2 * dtype.size_in_bytes(), |n, &d| n.checked_mul(d));
    let fits = match bytes {
        Some(bytes) if bytes <= isize::MAX as usize => !device.is_cpu() || can_allocate(bytes),
        _ => false,
    };
    if fits {
        return Ok(());
    }
    let size = bytes.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string());
    Err(Error::Input(format!(
        "a KV cache of {} positions cannot be allocated: its {dtype:?} keys and values {shape:?} take {size} bytes per layer",
        shape[2]
    )))
}

/// Whether the allocator grants `bytes` now (allocated and freed at once, the pages never touched).
fn can_allocate(bytes: usize) -> bool {
    let mut probe: Vec<u8> = Vec::new();
    let granted = probe.try_reserve_exact(bytes).is_ok();
    // The buffer escapes, so the allocation is made: one nothing reads may be assumed to succeed.
    std::hint::black_box(&mut probe);
    granted
}

/// The cached keys and values of one layer. Not `Clone`: the buffers are written in place, so a
/// shared copy would see the other's writes; [`KvCache::try_clone`] copies them.
#[derive(Debug, Default)]
pub struct LayerCache {
    /// `[batch, kv_heads, allocated, head_dim]` key and value buffers, once the first keys came.
    buffers: Option<(Tensor, Tensor)>,
    /// Slots `0..len` hold keys and values.
    len: usize,
    /// Slots the buffers are (re)allocated with at the next write.
    capacity: usize,
    /// Attention reads all `capacity` slots (masked) instead of the filled prefix.
    fixed: bool,
    /// A recurrent (Mamba-2) layer's state, which it keeps in place of keys and values.
    recurrent: Option<SsmState>,
}

impl LayerCache {
    /// The number of positions cached.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A recurrent layer's state, made by `fresh` before its first tokens.
    pub(crate) fn recurrent_state(
        &mut self,
        fresh: impl FnOnce() -> Result<SsmState>,
    ) -> Result<&mut SsmState> {
        if self.recurrent.is_none() {
            self.recurrent = Some(fresh()?);
        }
        Ok(self.recurrent.as_mut().expect("set above"))
    }

    /// Counts `new` positions a recurrent layer has taken into its state.
    pub(crate) fn advance(&mut self, new: usize) {
        self.len += new;
    }

    /// Writes `k`, `v` (`[batch, kv_heads, new, head_dim]`) at slots `len..len + new` and returns the
    /// keys and values attention reads: the new ones alone when the cache was empty, else the filled
    /// prefix (prefix mode) or every slot (fixed mode, `[.., capacity, ..]`).
    pub(crate) fn update(&mut self, k: Tensor, v: Tensor) -> Result<(Tensor, Tensor)> {
        let (past, new) = (self.len, k.dims()[2]);
        let end = past + new;
        let (kb, vb) = self.reserve(&k, end)?;
        kb.narrow(2, past as isize, new)?.copy_(&k)?;
        self.value_slots(&vb, past, new)?.copy_(&v)?;
        self.len = end;
        if past == 0 {
            return Ok((k, v));
        }
        if self.fixed {
            return Ok((kb, vb));
        }
        Ok((kb.narrow(2, 0, end)?, self.value_slots(&vb, 0, end)?))
    }

    /// Value slots `start..start + len` of the value buffer `vb` as `[batch, kv_heads, len, head_dim]`
    /// (a transposed view in prefix mode, where `vb` is `[batch, kv_heads, head_dim, capacity]`).
    fn value_slots(&self, vb: &Tensor, start: usize, len: usize) -> Result<Tensor> {
        Ok(if self.fixed {
            vb.narrow(2, start as isize, len)?
        } else {
            vb.narrow(3, start as isize, len)?.transpose(2, 3)?
        })
    }

    /// Raises `capacity` to [`Self::grown_to`]`(end)`.
    fn grow_to(&mut self, end: usize) {
        self.capacity = self.grown_to(end);
    }

    /// The capacity that holds `end` slots: the next bucket in fixed mode, at least double in
    /// prefix mode (so that growing one position at a time stays amortised O(1)).
    fn grown_to(&self, end: usize) -> usize {
        if end > self.capacity {
            if self.fixed {
                bucket(end)
            } else {
                end.max(self.capacity.saturating_mul(2))
            }
        } else {
            self.capacity
        }
    }

    /// Allocates (or grows, keeping the filled slots) buffers shaped like `k` with room for `end`
    /// slots, `capacity` at least, and returns them.
    fn reserve(&mut self, k: &Tensor, end: usize) -> Result<(Tensor, Tensor)> {
        let d = k.dims();
        if let Some((kb, vb)) = &self.buffers {
            let b = kb.dims();
            if (b[0], b[1], b[3]) != (d[0], d[1], d[3])
                || kb.dtype() != k.dtype()
                || kb.device() != k.device()
            {
                return Err(Error::Input(format!(
                    "the KV cache holds {:?} {:?} keys on {}, got {:?} {:?} on {}",
                    b,
                    kb.dtype(),
                    kb.device(),
                    d,
                    k.dtype(),
                    k.device()
                )));
            }
            if b[2] >= end && b[2] >= self.capacity {
                return Ok((kb.clone(), vb.clone()));
            }
        }
        // the capacity changes only once the new buffers exist (a refused size leaves the cache
        // as it was)
        let capacity = self.grown_to(end);
        let (dtype, device) = (k.dtype(), k.device());
        check_fits([d[0], d[1], capacity, d[3]], dtype, device)?;
        let kb = Tensor::zeros([d[0], d[1], capacity, d[3]], (dtype, device))?;
        let vb = if self.fixed {
            Tensor::zeros([d[0], d[1], capacity, d[3]], (dtype, device))?
        } else {
            Tensor::zeros([d[0], d[1], d[3], capacity], (dtype, device))?
        };
        self.capacity = capacity;
        if let Some((old_k, old_v)) = &self.buffers {
            kb.narrow(2, 0, self.len)?.copy_(&old_k.narrow(2, 0, self.len)?)?;
            self.value_slots(&vb, 0, self.len)?.copy_(&self.value_slots(old_v, 0, self.len)?)?;
        }
        self.buffers = Some((kb.clone(), vb.clone()));
        Ok((kb, vb))
    }

    /// A copy with buffers of its own.
    fn try_clone(&self) -> Result<Self> {
        let buffers = match &self.buffers {
            Some((k, v)) => Some((k.copy()?, v.copy()?)),
            None => None,
        };
        Ok(LayerCache { buffers, recurrent: self.recurrent.clone(), ..*self })
    }
}

/// A KV cache for every layer of a decoder. Not `Clone` (see [`LayerCache`]): use
/// [`KvCache::try_clone`].
#[derive(Debug, Default)]
pub struct KvCache {
    /// one entry per layer
    pub layers: Vec<LayerCache>,
    /// what the cross-attention layers attend to, the same at every step (Llama 3.2 Vision's
    /// images: see [`KvCache::set_cross_attention`])
    cross: Option<CrossAttentionStates>,
}

impl KvCache {
    /// An empty prefix-mode cache for `layers` layers that grows as positions come.
    pub fn new(layers: usize) -> Self {
        Self::with_capacity(layers, 0)
    }

    /// An empty prefix-mode cache with room for `capacity` positions (allocated at the first write).
    pub fn with_capacity(layers: usize, capacity: usize) -> Self {
        let layers = (0..layers).map(|_| LayerCache { capacity, ..LayerCache::default() }).collect();
        KvCache { layers, cross: None }
    }

    /// An empty fixed-shape cache of `capacity` slots: attention reads all of them, masked, so every
    /// decode step has the same shapes. Writing past `capacity` grows it to the next [`bucket`].
    pub fn fixed(layers: usize, capacity: usize) -> Self {
        let layer = || LayerCache { capacity: bucket(capacity), fixed: true, ..LayerCache::default() };
        KvCache { layers: (0..layers).map(|_| layer()).collect(), cross: None }
    }

    /// The cache a model on `device` decodes best with: prefix mode with `capacity` slots on the
    /// cpu, fixed shapes with `capacity` rounded up to a [`bucket`] on compiling devices (xla, tpu).
    pub fn for_device(layers: usize, capacity: usize, device: Device) -> Self {
        if fixed_shapes(device) {
            Self::fixed(layers, capacity)
        } else {
            Self::with_capacity(layers, capacity)
        }
    }

    /// A copy with buffers of its own (torch's `copy.deepcopy` of a cache), e.g. to decode two
    /// continuations of one prompt.
    pub fn try_clone(&self) -> Result<Self> {
        let layers = self.layers.iter().map(LayerCache::try_clone).collect::<Result<_>>()?;
        Ok(KvCache { layers, cross: self.cross.clone() })
    }

    /// Keeps `states` for the model's cross-attention layers: every forward on this cache attends
    /// to them (as transformers' cache keeps Llama 3.2 Vision's image keys and values after the
    /// prefill).
    pub fn set_cross_attention(&mut self, states: CrossAttentionStates) {
        self.cross = Some(states);
    }

    /// The states the cross-attention layers attend to, where set.
    pub fn cross_attention(&self) -> Option<&CrossAttentionStates> {
        self.cross.as_ref()
    }

    /// The number of positions cached.
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, LayerCache::len)
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slots allocated (or to be allocated at the first write) per layer.
    pub fn capacity(&self) -> usize {
        self.layers.first().map_or(0, |l| l.capacity)
    }

    /// Whether attention reads every slot (fixed shapes) rather than the filled prefix.
    pub fn is_fixed(&self) -> bool {
        self.layers.first().is_some_and(|l| l.fixed)
    }

    /// Keeps, as row `i` of every layer's buffers, what row `rows[i]` held (beam search's
    /// reordering of its hypotheses, each within its prompt's rows: the cross-attention states,
    /// the same for those rows, are not moved).
    pub(crate) fn reorder_rows(&mut self, rows: &Tensor) -> Result<()> {
        for layer in &mut self.layers {
            if let Some((k, v)) = &layer.buffers {
                let rows = rows.to(k.device())?;
                layer.buffers = Some((k.index_select(0, &rows)?, v.index_select(0, &rows)?));
            }
            if let Some(state) = &mut layer.recurrent {
                state.reorder(rows)?;
            }
        }
        // (The cross-attention states stay: beam search reorders each prompt's beams among
        // themselves, whose states are the same.)
        Ok(())
    }

    /// Forgets the positions from `len` on (transformers' `DynamicCache.crop`); the slots stay
    /// allocated and are overwritten by the next positions. Used after a padded prefill. A
    /// recurrent layer's state cannot forget some positions: emptied at 0, it must otherwise
    /// keep them all (generation never pads a hybrid model's prefill).
    pub fn truncate(&mut self, len: usize) {
        for l in &mut self.layers {
            if l.recurrent.is_some() {
                debug_assert!(
                    len == 0 || len >= l.len,
                    "a recurrent state cannot be cut back to {len} positions"
                );
                if len == 0 {
                    l.recurrent = None;
                }
            }
            l.len = l.len.min(len);
        }
    }

    /// Makes room for `new` more positions and returns how many key slots attention then reads: the
    /// new ones alone on an empty cache, else the filled prefix (prefix mode) or every slot (fixed).
    /// The attention mask of the next forward covers that many keys.
    pub(crate) fn prepare(&mut self, new: usize) -> usize {
        let (past, end) = (self.len(), self.len() + new);
        self.layers.iter_mut().for_each(|l| l.grow_to(end));
        match (past, self.is_fixed()) {
            (0, _) => new,
            (_, true) => self.capacity(),
            (_, false) => end,
        }
    }
}

/// Whether `device` compiles a program per shape, so that generation should keep shapes fixed.
pub fn fixed_shapes(device: Device) -> bool {
    !matches!(device, Device::Cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two_then_multiples_of_512() {
        let got: Vec<usize> = [1, 16, 17, 100, 512, 513, 1100].map(bucket).to_vec();
        assert_eq!(got, [16, 16, 32, 128, 512, 1024, 1536]);
        let distinct: std::collections::BTreeSet<usize> = (1..=512).map(bucket).collect();
        assert_eq!(distinct.len(), 6);
    }

    /// A cache no memory could hold (2^57 bytes, past any address space; a size that overflows) is
    /// an error naming its size, in both modes, rather than the allocator's panic.
    #[test]
    fn a_cache_too_large_to_allocate_is_an_error() {
        let caches = [
            KvCache::with_capacity(1, 1 << 50),
            KvCache::fixed(1, 1 << 50),
            KvCache::with_capacity(1, usize::MAX / 2),
            KvCache::fixed(1, usize::MAX / 2),
        ];
        for mut c in caches {
            let k = Tensor::zeros([1, 2, 3, 8], ()).unwrap();
            let err = c.layers[0].update(k.clone(), k).unwrap_err().to_string();
            assert!(err.starts_with("a KV cache of ") && err.contains("cannot be allocated"), "{err}");
            assert!(c.is_empty());
        }
        let mut c = KvCache::with_capacity(1, 1 << 50);
        let k = Tensor::zeros([1, 2, 3, 8], ()).unwrap();
        let err = c.layers[0].update(k.clone(), k).unwrap_err().to_string();
        assert!(
            err.contains("keys and values [1, 2, 1125899906842624, 8] take 144115188075855872 bytes"),
            "{err}"
        );
        // A cache that fits still grows as before.
        let mut c = KvCache::with_capacity(1, 4);
        let k = Tensor::zeros([1, 2, 3, 8], ()).unwrap();
        c.layers[0].update(k.clone(), k).unwrap();
        assert_eq!((c.len(), c.capacity()), (3, 4));
    }

    #[test]
    fn prefix_cache_grows_and_keeps_its_slots() {
        let mut c = KvCache::new(1);
        let kv = |n: usize, at: f32| {
            Tensor::full([1, 2, n, 3], at, ()).map(|t| (t.clone(), t.mul(2.0).unwrap())).unwrap()
        };
        let mut values = None;
        for (step, n) in [3usize, 1, 1, 4].into_iter().enumerate() {
            let keys = c.prepare(n);
            let (k, v) = kv(n, step as f32);
            let (ka, va) = c.layers[0].update(k, v).unwrap();
            assert_eq!(ka.dims()[2], keys);
            assert_eq!(va.dims(), ka.dims());
            values = Some(va);
        }
        // The values (stored transposed) read back in slot order, across two reallocations.
        let va = values.unwrap().select(1, 1).unwrap().select(2, 2).unwrap();
        assert_eq!(va.to_vec::<f32>().unwrap(), [0.0, 0.0, 0.0, 2.0, 4.0, 6.0, 6.0, 6.0, 6.0]);
        assert_eq!(c.len(), 9);
        assert!(c.capacity() >= 9);
        let (k, _) = c.layers[0].buffers.clone().unwrap();
        let col: Vec<f32> = k.select(1, 0).unwrap().select(2, 0).unwrap().to_vec().unwrap();
        assert_eq!(&col[..9], &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0]);
        // A copy keeps its slots when the original is written.
        let copy = c.try_clone().unwrap();
        c.truncate(0);
        c.prepare(1);
        let (k, v) = kv(1, 9.0);
        c.layers[0].update(k, v).unwrap();
        let (k, _) = copy.layers[0].buffers.clone().unwrap();
        assert_eq!(k.select(1, 0).unwrap().select(2, 0).unwrap().to_vec::<f32>().unwrap()[0], 0.0);
        assert_eq!(copy.len(), 9);
    }

    #[test]
    fn fixed_cache_reads_every_slot_and_truncates() {
        let mut c = KvCache::fixed(2, 20);
        assert!(c.is_fixed());
        assert_eq!(c.capacity(), 32);
        assert_eq!(c.prepare(16), 16);
        let t = Tensor::ones([1, 1, 16, 2], ()).unwrap();
        for l in &mut c.layers {
            assert_eq!(l.update(t.clone(), t.clone()).unwrap().0.dims()[2], 16);
        }
        c.truncate(5);
        assert_eq!(c.len(), 5);
        assert_eq!(c.prepare(1), 32);
        let one = Tensor::ones([1, 1, 1, 2], ()).unwrap();
        let (k, _) = c.layers[0].update(one.clone(), one).unwrap();
        assert_eq!(k.dims(), [1, 1, 32, 2]);
        // Past its capacity a fixed cache grows to the next bucket, keeping its slots.
        let mut g = KvCache::fixed(1, 16);
        g.prepare(16);
        g.layers[0].update(t.clone(), t.clone()).unwrap();
        assert_eq!(g.prepare(4), 32);
        let four = Tensor::zeros([1, 1, 4, 2], ()).unwrap();
        let (k, _) = g.layers[0].update(four.clone(), four).unwrap();
        let sums: Vec<f32> = k.sum(-1, false).unwrap().flatten(0, -1).unwrap().to_vec().unwrap();
        assert_eq!(sums, [vec![2.0; 16], vec![0.0; 16]].concat());
        let bad = Tensor::ones([2, 1, 1, 2], ()).unwrap();
        let err = c.layers[0].update(bad.clone(), bad).unwrap_err().to_string();
        assert!(err.contains("KV cache holds"), "{err}");
    }
}
