//! A decoder's hidden states without the padding (what embedding models built on a decoder pool).

use oxtorch_tensor::Tensor;

use super::{batch_seq, CausalLm};
use crate::error::Result;
use crate::layers::{packed_row_mask, PackedRows};

impl CausalLm {
    /// [`CausalLm::last_hidden_state`] (positions `0..seq` in every row) at the tokens
    /// `attention_mask` keeps, computed without the padding: the kept tokens of every row are packed
    /// into one `[1, tokens, hidden]` sequence for the projections and MLPs, and attention runs row
    /// by row over that row's tokens, each at its position in the padded row (its rotary angle, and
    /// what causality and a sliding window compare: [`packed_row_mask`]). A kept token never
    /// attends to padding, so its values are the padded forward's; padded positions (and rows that
    /// keep no token) are zero. Pooling that reads kept tokens only (sentence embeddings) gets the
    /// padded result for the cost of the real tokens alone.
    pub fn last_hidden_state_packed(&self, input_ids: &Tensor, attention_mask: &Tensor) -> Result<Tensor> {
        let (b, s) = batch_seq(input_ids)?;
        let device = self.device();
        let sinks = self.per_layer_inputs.is_some()
            || self.streams.is_some()
            || self.layers.iter().any(|l| {
                l.beside.is_some()
                    || l.chunk.is_some()
                    || l.kv_source.is_some()
                    || l.experts_beside.is_some()
                    || l.scalar.is_some()
                    || l.mixer.attention().is_none_or(|a| a.has_sinks())
            });
        if sinks {
            // Attention sinks, Llama 4's chunks, Gemma 4's layers (and a hybrid's Mamba-2 layers,
            // which read each row's tokens in order) are taken by the batched forward only: its
            // states, padding zeroed.
            let h = self.last_hidden_state(input_ids, Some(attention_mask), None)?;
            let kept = attention_mask.to(device)?.to_dtype(self.dtype)?.unsqueeze(-1)?;
            return Ok(Tensor::where_cond(&kept.ne(0.0)?, &h, &h.zeros_like()?)?);
        }
        let Some(packed) = PackedRows::new(attention_mask, b, s, device)? else {
            // Nothing to leave out: the batched forward.
            return self.last_hidden_state(input_ids, Some(attention_mask), None);
        };
        if packed.rows.is_empty() {
            return Ok(Tensor::zeros([b, s, self.hidden_size()], (self.dtype, device))?);
        }
        let h = self.embed_tokens(&packed.gather(&input_ids.to(device)?)?.unsqueeze(0)?, false)?;
        // Each token at its place in the padded row (learned positions; RoPE reads the same places),
        // or, for positions from the mask, at its index among the row's kept tokens.
        let places = if self.spec.positions_from_mask {
            let ranks: Vec<i64> = packed.rows.iter().flat_map(|&(_, count)| 0..count as i64).collect();
            Tensor::from_vec(ranks, [1, packed.tokens()])?.to(device)?
        } else {
            packed.places()?
        };
        let h = self.add_positions(h, &places)?;
        let (cos_g, sin_g) = packed.angles(&self.rotary_global, self.dtype)?;
        let (cos_l, sin_l) = if self.spec.uses_local_rope() {
            packed.angles(&self.rotary_local, self.dtype)?
        } else {
            (cos_g.clone(), sin_g.clone())
        };
        let identity = self.identity_rotation(&cos_g)?;
        let q_scale = self.query_scale(&places)?;
        // Each row's mask, per window (layers of one window share them).
        let mut masks: Vec<(Option<usize>, Vec<Tensor>)> = Vec::new();
        let mut h = h;
        for layer in &self.layers {
            let at = match masks.iter().position(|(w, _)| *w == layer.window) {
                Some(at) => at,
                None => {
                    let row_mask = |c: &Vec<usize>| {
                        let m =
                            packed_row_mask(c, layer.window, self.spec.bidirectional, self.dtype, device)?;
                        // (ALiBi's positions: the row's kept tokens `0..n`, or their columns.)
                        let Some(slopes) = &self.alibi_slopes else { return Ok(m) };
                        let positions: Vec<i64> = if self.alibi_by_kept_tokens {
                            (0..c.len() as i64).collect()
                        } else {
                            c.iter().map(|&p| p as i64).collect()
                        };
                        let positions = Tensor::from_vec(positions, [1, c.len()])?.to(device)?;
                        Ok(m.add(&super::alibi::biased(slopes, &positions, self.dtype)?)?)
                    };
                    masks.push((
                        layer.window,
                        packed.columns.iter().map(row_mask).collect::<Result<Vec<_>>>()?,
                    ));
                    masks.len() - 1
                }
            };
            let (cos, sin) = match &identity {
                Some((one, zero)) if layer.nope => (one, zero),
                _ if layer.local_rope => (&cos_l, &sin_l),
                _ => (&cos_g, &sin_g),
            };
            let x = layer.input_norm.forward(&h)?;
            let attn = layer.mixer.attention().expect("no Mamba-2 layer here").forward_packed(
                &x,
                cos,
                sin,
                q_scale.as_ref(),
                &packed.rows,
                &masks[at].1,
            )?;
            h = layer.after_attention(&h, &attn)?;
        }
        packed.scatter(&self.final_states(&h)?.reshape([packed.tokens(), self.hidden_size()])?)
    }
}
