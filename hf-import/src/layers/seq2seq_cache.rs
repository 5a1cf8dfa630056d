//! The keys and values an encoder-decoder keeps while generating: the decoder's own in a
//! [`KvCache`] (the filled prefix on the cpu; fixed, bucketed shapes on compiling devices, so that
//! every step of a bucket runs the same programs), and the cross-attention's over the encoder's
//! states, computed once.

use oxtorch_tensor::{DType, Device, Tensor};

use super::kv_cache::KvCache;
use crate::error::Result;

/// The decoder slots a generation's cache is first allocated with (it grows as tokens come).
const FIRST_SLOTS: usize = 16;

/// A generation's cache for a decoder with cross-attention.
#[derive(Debug)]
pub struct EncoderDecoderCache {
    /// per layer: the self-attention's keys and values so far
    own: KvCache,
    /// per layer: the cross-attention's keys and values of the encoder's states
    pub cross: Vec<(Tensor, Tensor)>,
    /// the additive mask of the encoder's padding, `[batch, 1, 1, source]`
    pub cross_mask: Tensor,
}

/// What one decoder step reads from the cache.
#[derive(Debug)]
pub struct Step {
    /// the new token's position (tokens decoded before it)
    pub past: usize,
    /// the key slots attention reads (the new one included)
    pub keys: usize,
    /// `[1, 1, 1, keys]`: hides the empty slots of a fixed-shape cache (`None`: every slot read is filled)
    pub mask: Option<Tensor>,
}

impl EncoderDecoderCache {
    /// A cache before the first token, over the cross-attention keys and values `cross` (one pair
    /// per layer) and the encoder's padding `cross_mask`, its own keys kept as suits `device`.
    pub fn new(cross: Vec<(Tensor, Tensor)>, cross_mask: Tensor, device: Device) -> Self {
        let own = KvCache::for_device(cross.len(), FIRST_SLOTS, device);
        EncoderDecoderCache { own, cross, cross_mask }
    }

    /// A cache over the encoder's `states` `[batch, source, d]`, where `states_mask`
    /// `[batch, source]` (int64, optional) keeps, with each layer's cross-attention keys and
    /// values `cross`.
    pub fn over_states(
        cross: Vec<(Tensor, Tensor)>,
        states: &Tensor,
        states_mask: Option<&Tensor>,
    ) -> Result<Self> {
        let (b, source) = (states.dims()[0], states.dims()[1]);
        let cross_mask = match states_mask {
            Some(m) => super::padding_mask(m, states.dtype())?,
            None => Tensor::zeros([b, 1, 1, source], (states.dtype(), states.device()))?,
        };
        Ok(Self::new(cross, cross_mask, states.device()))
    }

    /// Tokens decoded so far.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    /// Whether no token has been decoded yet.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// Makes room for one more token and says what its step reads, the mask made in `dtype` on
    /// `device`.
    pub fn begin_step(&mut self, dtype: DType, device: Device) -> Result<Step> {
        let past = self.own.len();
        let keys = self.own.prepare(1);
        let mask = if keys > past + 1 {
            // A fixed-shape cache: the slots past the new token are empty.
            let lowest = super::mask::lowest(dtype);
            let row: Vec<f64> = (0..keys).map(|j| if j <= past { 0.0 } else { lowest }).collect();
            Some(Tensor::from_vec(row, [1, 1, 1, keys])?.to_dtype(dtype)?.to(device)?)
        } else {
            None
        };
        Ok(Step { past, keys, mask })
    }

    /// Writes layer `layer`'s keys and values of the new token (`[batch, heads, 1, head_dim]`) and
    /// returns the ones attention reads ([`Step::keys`] of them).
    pub fn append(&mut self, layer: usize, k: Tensor, v: Tensor) -> Result<(Tensor, Tensor)> {
        self.own.layers[layer].update(k, v)
    }

    /// Keeps, as row `i` of the decoder's own keys and values, what row `rows[i]` held (beam
    /// search's reordering: the beams that go on, each as often as it was picked). The
    /// cross-attention rows stay: beams only move within their own source's rows.
    pub fn reorder(&mut self, rows: &[i64]) -> Result<()> {
        self.own.reorder_rows(&Tensor::from_vec(rows.to_vec(), [rows.len()])?)
    }
}
