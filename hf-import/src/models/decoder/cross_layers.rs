//! Cross-attention layers among the decoder's own (Llama 3.2 Vision's: see
//! [`crate::layers::CrossAttentionLayer`]).
//!
//! Each runs before the decoder layer it precedes in the checkpoint's numbering (or after the
//! last), only in a pass that has states to attend to: the pass's own
//! ([`CausalLm::forward_attending`]) or its cache's (a generation's). Without them the model is
//! its self-attention layers alone, as transformers skips the cross-attention layers on text.
//! A layer that runs reports its input among the hidden states, as transformers records it.

use oxtorch_tensor::Tensor;

use super::{CausalLm, DecoderOutput, Pass, ReplacedRows};
use crate::error::{Error, Result};
use crate::layers::{CrossAttentionLayer, CrossAttentionPass, CrossAttentionStates};

impl CausalLm {
    /// The model with `layers` among its own, each with the index of the layer it runs before
    /// (the number of layers: after the last), in order.
    pub(crate) fn with_cross_attention_layers(
        mut self,
        layers: Vec<(usize, CrossAttentionLayer)>,
    ) -> Result<Self> {
        let in_order = layers.windows(2).all(|w| w[0].0 <= w[1].0);
        if !in_order || layers.iter().any(|(before, _)| *before > self.layers.len()) {
            return Err(Error::Config(format!(
                "cross-attention layers must come in order among the {} layers",
                self.layers.len()
            )));
        }
        self.cross_layers = layers;
        Ok(self)
    }

    /// Whether the model has cross-attention layers.
    pub fn has_cross_attention(&self) -> bool {
        !self.cross_layers.is_empty()
    }

    /// What the cross-attention layers attend to for `features` `[batch, keys, hidden]` (each
    /// layer's keys and values), with `mask` `[batch, seq, keys]` (bool: the keys each token sees;
    /// `None`: all of them).
    pub fn cross_attention_states(
        &self,
        features: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<CrossAttentionStates> {
        if !self.has_cross_attention() {
            return Err(Error::Input("the model has no cross-attention layers".into()));
        }
        let hidden = self.hidden;
        if features.rank() != 3 || features.dims()[2] != hidden {
            return Err(Error::Input(format!(
                "the cross-attention features must be [batch, keys, {hidden}], got {:?}",
                features.dims()
            )));
        }
        let layers: Vec<&CrossAttentionLayer> = self.cross_layers.iter().map(|(_, l)| l).collect();
        let features = features.to(self.device())?.to_dtype(self.dtype)?;
        CrossAttentionStates::new(&layers, &features, mask)
    }

    /// [`CausalLm::forward_with_rows`] (without a cache, `replaced` optional) whose
    /// cross-attention layers attend to `cross`.
    pub fn forward_attending(
        &self,
        input_ids: &Tensor,
        replaced: Option<ReplacedRows<'_>>,
        cross: &CrossAttentionStates,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<DecoderOutput> {
        let (_, s) = super::batch_seq(input_ids)?;
        if cross.mask_rows().is_some_and(|rows| rows != s) {
            return Err(Error::Input(format!(
                "the cross-attention mask has {} rows, input_ids {s} tokens",
                cross.mask_rows().unwrap_or(0)
            )));
        }
        let pass = Pass { output_hidden_states, replaced, cross: Some(cross), ..Pass::default() };
        let (h, hidden_states) = self.hidden(input_ids, attention_mask, position_ids, None, pass)?;
        Ok(DecoderOutput { logits: self.head(&h)?, hidden_states })
    }

    /// The cross-attention pass over `s` tokens after `past` of `states` (`None`: no states, the
    /// layers skipped).
    pub(super) fn cross_pass<'a>(
        &self,
        states: Option<&'a CrossAttentionStates>,
        past: usize,
        s: usize,
    ) -> Result<Option<CrossAttentionPass<'a>>> {
        let Some(states) = states else { return Ok(None) };
        if states.layers() != self.cross_layers.len() {
            return Err(Error::Input(format!(
                "cross-attention states for {} layers, the model has {}",
                states.layers(),
                self.cross_layers.len()
            )));
        }
        Ok(Some(CrossAttentionPass::new(states, past, s)?))
    }

    /// `h` after the cross-attention layers that run before layer `i` (none without `cross`), each
    /// one's input pushed to `hidden_states` where they are recorded.
    pub(super) fn cross_layers_before(
        &self,
        i: usize,
        cross: Option<&CrossAttentionPass<'_>>,
        mut h: Tensor,
        mut hidden_states: Option<&mut Vec<Tensor>>,
    ) -> Result<Tensor> {
        let Some(cross) = cross else { return Ok(h) };
        for (index, (_, layer)) in
            self.cross_layers.iter().enumerate().filter(|(_, (before, _))| *before == i)
        {
            if let Some(states) = hidden_states.as_deref_mut() {
                states.push(h.clone());
            }
            h = cross.forward(layer, index, &h)?;
        }
        Ok(h)
    }
}
