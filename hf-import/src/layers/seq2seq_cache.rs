//! The keys and values an encoder-decoder keeps while generating: the decoder's own, a token
//! longer each step, and the cross-attention's over the encoder's states, computed once.

use oxtorch_tensor::Tensor;

use crate::error::Result;

/// A generation's cache for a decoder with cross-attention.
#[derive(Debug)]
pub struct EncoderDecoderCache {
    /// per layer: the self-attention's keys and values so far, `[batch, heads, len, head_dim]`
    own: Vec<Option<(Tensor, Tensor)>>,
    /// per layer: the cross-attention's keys and values of the encoder's states
    pub cross: Vec<(Tensor, Tensor)>,
    /// the additive mask of the encoder's padding, `[batch, 1, 1, source]`
    pub cross_mask: Tensor,
    /// tokens decoded so far
    len: usize,
}

impl EncoderDecoderCache {
    /// A cache before the first token, over the cross-attention keys and values `cross` (one pair
    /// per layer) and the encoder's padding `cross_mask`.
    pub fn new(cross: Vec<(Tensor, Tensor)>, cross_mask: Tensor) -> Self {
        EncoderDecoderCache { own: vec![None; cross.len()], cross, cross_mask, len: 0 }
    }

    /// Tokens decoded so far (the new token's position).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no token has been decoded yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends layer `layer`'s keys and values of the new token (`[batch, heads, 1, head_dim]`) and
    /// returns all of them so far.
    pub fn append(&mut self, layer: usize, k: Tensor, v: Tensor) -> Result<(Tensor, Tensor)> {
        let (k, v) = match self.own[layer].take() {
            Some((pk, pv)) => (Tensor::cat(&[&pk, &k], 2)?, Tensor::cat(&[&pv, &v], 2)?),
            None => (k, v),
        };
        self.own[layer] = Some((k.clone(), v.clone()));
        Ok((k, v))
    }

    /// Keeps, as row `i` of every layer's own keys and values, what row `rows[i]` held (beam
    /// search's reordering: the beams that go on, each as often as it was picked). The
    /// cross-attention rows stay: beams only move within their own source's rows.
    pub fn reorder(&mut self, rows: &[i64]) -> Result<()> {
        for kv in self.own.iter_mut().flatten() {
            let index = Tensor::from_vec(rows.to_vec(), [rows.len()])?.to(kv.0.device())?;
            *kv = (kv.0.index_select(0, &index)?, kv.1.index_select(0, &index)?);
        }
        Ok(())
    }

    /// Marks the step done: the next token is one position further.
    pub fn advance(&mut self) {
        self.len += 1;
    }
}
