//! The passes over the decoder that callers run: the logits of every position or of one, the
//! hidden states, with a KV cache or without, with the embeddings of some tokens replaced.

use oxtorch_tensor::Tensor;

use super::{batch_seq, CausalLm, DecoderOutput, Pass, ReplacedRows};
use crate::error::{Error, Result};
use crate::layers::KvCache;

impl CausalLm {
    /// A forward pass over `input_ids` `[batch, seq]` (int64). `attention_mask` (1 = token) and
    /// `position_ids` `[batch, seq]` are optional (positions default to `cached..cached + seq`); the
    /// mask is `[batch, cached + seq]`, or with a `cache` also `[batch, cache.capacity()]` (what
    /// [`generate`](fn@crate::generate) passes to keep shapes fixed; the entries past `cached + seq` are unused).
    /// With a `cache`, the new keys and values are written into it. Inputs on another device than the
    /// weights are moved there; the outputs stay on the weights' device.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        cache: Option<&mut KvCache>,
        output_hidden_states: bool,
    ) -> Result<DecoderOutput> {
        let pass = Pass { output_hidden_states, ..Pass::default() };
        let (h, hidden_states) = self.hidden(input_ids, attention_mask, position_ids, cache, pass)?;
        Ok(DecoderOutput { logits: self.head(&h)?, hidden_states })
    }

    /// [`CausalLm::forward`] without a cache, with `token_type_ids` `[batch, seq]` whose rows of
    /// the token embeddings are added to the inputs' (GPT-2's family: see
    /// [`CausalLm::takes_token_types`]; another model refuses them).
    pub fn forward_with_token_types(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<DecoderOutput> {
        let pass = Pass { output_hidden_states, token_type_ids, ..Pass::default() };
        let (h, hidden_states) = self.hidden(input_ids, attention_mask, position_ids, None, pass)?;
        Ok(DecoderOutput { logits: self.head(&h)?, hidden_states })
    }

    /// [`CausalLm::forward`] without a cache, the embeddings of the tokens `replaced.mask` marks
    /// replaced by `replaced.rows` (after the embedding table and its scale, before the model's
    /// own transforms of `inputs_embeds`, as transformers merges a vision-language model's image
    /// features).
    pub fn forward_with_rows(
        &self,
        input_ids: &Tensor,
        replaced: ReplacedRows<'_>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<DecoderOutput> {
        let pass = Pass { output_hidden_states, replaced: Some(replaced), ..Pass::default() };
        let (h, hidden_states) = self.hidden(input_ids, attention_mask, position_ids, None, pass)?;
        Ok(DecoderOutput { logits: self.head(&h)?, hidden_states })
    }

    /// [`CausalLm::logits_at`] with the embeddings of `replaced` (see
    /// [`CausalLm::forward_with_rows`]): a generation's prefill over a prompt with images.
    pub fn logits_at_with_rows(
        &self,
        input_ids: &Tensor,
        replaced: Option<ReplacedRows<'_>>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        cache: Option<&mut KvCache>,
        at: usize,
    ) -> Result<Tensor> {
        let (_, s) = batch_seq(input_ids)?;
        if at >= s {
            return Err(Error::Input(format!("logits_at: position {at} is out of range for {s} tokens")));
        }
        let pass = Pass { replaced, ..Pass::default() };
        let (h, _) = self.hidden(input_ids, attention_mask, position_ids, cache, pass)?;
        self.head(&h.select(1, at as isize)?)
    }

    /// The logits of position `at` alone, `[batch, vocab]`: [`CausalLm::forward`] with the LM head run
    /// on that one position (transformers' `logits_to_keep`), as generation's steps need.
    pub fn logits_at(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        cache: Option<&mut KvCache>,
        at: usize,
    ) -> Result<Tensor> {
        self.logits_at_with_rows(input_ids, None, attention_mask, position_ids, cache, at)
    }

    /// The logits `[batch, vocab]` after one token per row that the model picked itself: `ids`
    /// `[batch, 1]` is the argmax of its logits, so every id is a row of the embedding table (both
    /// have `vocab` rows) and is not read back to check, which on a device would wait for the step
    /// that computed them. What a generation loop on a device records while that step runs.
    pub(crate) fn logits_after_own_tokens(
        &self,
        ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: &Tensor,
        cache: &mut KvCache,
    ) -> Result<Tensor> {
        debug_assert!(
            self.lm_head.as_ref().is_none_or(|h| h.weight.dims()[0] == self.embed.weight.dims()[0]),
            "logits as wide as the table"
        );
        let pass = Pass { ids_in_range: true, ..Pass::default() };
        let (h, _) = self.hidden(ids, attention_mask, Some(position_ids), Some(cache), pass)?;
        self.head(&h.select(1, 0)?)
    }

    /// [`CausalLm::forward`] without a cache and without the LM head: the final hidden states
    /// `[batch, seq, hidden]` and, with `output_hidden_states`, transformers' `hidden_states` (the
    /// embeddings, each layer's output, the last one after the final norm), as a base model
    /// (`Qwen3Model`, ...) returns them.
    pub fn hidden_states(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        self.hidden_states_with_token_types(
            input_ids,
            None,
            attention_mask,
            position_ids,
            output_hidden_states,
        )
    }

    /// [`CausalLm::hidden_states`] with `token_type_ids` (see
    /// [`CausalLm::forward_with_token_types`]).
    pub fn hidden_states_with_token_types(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let pass = Pass { output_hidden_states, token_type_ids, ..Pass::default() };
        self.hidden(input_ids, attention_mask, position_ids, None, pass)
    }

    /// The final hidden states `[batch, seq, hidden]` (after the final norm) of
    /// [`CausalLm::forward`] without a cache, without running the LM head: what an embedding model
    /// built on a decoder pools.
    pub fn last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        Ok(self.hidden(input_ids, attention_mask, position_ids, None, Pass::default())?.0)
    }
}
