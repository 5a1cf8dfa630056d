//! A decoder's hidden states without the padding (what embedding models built on a decoder pool).

use oxtorch_tensor::{DType, Tensor};

use super::{batch_seq, CausalLm};
use crate::error::{Error, Result};
use crate::layers::{packed_causal_mask, Rotary};

impl CausalLm {
    /// [`CausalLm::last_hidden_state`] (positions `0..seq` in every row) at the tokens
    /// `attention_mask` keeps, computed without the padding: the kept tokens of every row are packed
    /// into one `[1, tokens, hidden]` sequence for the projections and MLPs, and attention runs row
    /// by row over that row's tokens, each at its position in the padded row (its rotary angle, and
    /// what causality and a sliding window compare: [`packed_causal_mask`]). A kept token never
    /// attends to padding, so its values are the padded forward's; padded positions (and rows that
    /// keep no token) are zero. Pooling that reads kept tokens only (sentence embeddings) gets the
    /// padded result for the cost of the real tokens alone.
    pub fn last_hidden_state_packed(&self, input_ids: &Tensor, attention_mask: &Tensor) -> Result<Tensor> {
        let (b, s) = batch_seq(input_ids)?;
        if attention_mask.dims() != [b, s] {
            return Err(Error::Input(format!(
                "attention_mask must have shape [{b}, {s}], got {:?}",
                attention_mask.dims()
            )));
        }
        let kept = attention_mask.ne(0)?.to_dtype(DType::I64)?.to_vec::<i64>()?;
        if kept.iter().all(|&k| k != 0) {
            // Nothing to leave out: the batched forward.
            return self.last_hidden_state(input_ids, Some(attention_mask), None);
        }
        // The flat positions `row * s + column` of the kept tokens, each row's run among them, and
        // the columns its tokens sat in.
        let mut index = Vec::with_capacity(kept.len());
        let mut rows = Vec::with_capacity(b);
        let mut columns = Vec::with_capacity(b);
        for (r, row) in kept.chunks(s).enumerate() {
            let kept_columns: Vec<usize> = (0..s).filter(|&c| row[c] != 0).collect();
            if !kept_columns.is_empty() {
                rows.push((index.len(), kept_columns.len()));
                index.extend(kept_columns.iter().map(|&c| (r * s + c) as i64));
                columns.push(kept_columns);
            }
        }
        let device = self.device();
        if rows.is_empty() {
            return Ok(Tensor::zeros([b, s, self.hidden], (self.dtype, device))?);
        }
        let tokens = index.len();
        let index = Tensor::from_vec(index, [tokens])?.to(device)?;
        let ids = input_ids.to(device)?.reshape([b * s])?.index_select(0, &index)?.unsqueeze(0)?;
        let mut h = self.embed.forward(&ids)?;
        if self.spec.scale_embeddings {
            let normalizer = Tensor::full([], (self.hidden as f64).sqrt(), (self.dtype, device))?;
            h = h.mul(&normalizer)?;
        }
        // The padded forward's angles (positions `0..seq` in every row: a dynamic or long-context
        // RoPE picks its frequencies from them), at the kept tokens.
        let positions =
            Tensor::arange(s as i64, (DType::I64, device))?.unsqueeze(0)?.expand([b, s])?.contiguous()?;
        let at_tokens = |t: Tensor| -> Result<Tensor> {
            let width = t.dims()[2];
            Ok(t.reshape([b * s, width])?.index_select(0, &index)?.unsqueeze(0)?)
        };
        let angles = |rotary: &Rotary| -> Result<(Tensor, Tensor)> {
            let (cos, sin) = rotary.cos_sin(&positions, self.dtype)?;
            Ok((at_tokens(cos)?, at_tokens(sin)?))
        };
        let (cos_g, sin_g) = angles(&self.rotary_global)?;
        let (cos_l, sin_l) = if self.spec.uses_local_rope() {
            angles(&self.rotary_local)?
        } else {
            (cos_g.clone(), sin_g.clone())
        };
        // Each row's mask, per window (layers of one window share them).
        let mut masks: Vec<(Option<usize>, Vec<Tensor>)> = Vec::new();
        for layer in &self.layers {
            let at = match masks.iter().position(|(w, _)| *w == layer.window) {
                Some(at) => at,
                None => {
                    let row_masks = columns
                        .iter()
                        .map(|c| {
                            packed_causal_mask(c, layer.window, self.spec.bidirectional, self.dtype, device)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    masks.push((layer.window, row_masks));
                    masks.len() - 1
                }
            };
            let (cos, sin) = if layer.local_rope { (&cos_l, &sin_l) } else { (&cos_g, &sin_g) };
            let x = layer.input_norm.forward(&h)?;
            let attn = layer.attn.forward_packed(&x, cos, sin, &rows, &masks[at].1)?;
            h = layer.after_attention(&h, &attn)?;
        }
        let h = self.norm.forward(&h)?.reshape([tokens, self.hidden])?;
        let out = Tensor::zeros([b * s, self.hidden], (h.dtype(), device))?.index_copy(0, &index, &h)?;
        Ok(out.reshape([b, s, self.hidden])?)
    }
}
