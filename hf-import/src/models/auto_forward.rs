//! [`AutoModel`]'s forward passes on named inputs: the hidden states an embedding pools, and every
//! output under transformers' field names.

use super::*;

impl AutoModel {
    /// The token embeddings `[batch, seq, hidden]`: an encoder's `last_hidden_state`, or a decoder's
    /// last hidden state (after its final norm). `token_type_ids` is ignored by models without them.
    pub fn last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.runs_own_inputs() {
            return self.own_last_hidden_state(input_ids, attention_mask);
        }
        let ids = ids_as_i64("input_ids", input_ids)?;
        if let Some(types) = token_type_ids {
            check_input_dtype("token_type_ids", types)?;
        }
        let (mask, types) = (attention_mask, token_type_ids);
        let enc = match self {
            AutoModel::Bert(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::BertForMaskedLM(m) => m.bert.forward(&ids, mask, types, None, false)?,
            AutoModel::Roberta(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::MPNet(m) => m.forward(&ids, mask, None, None, false)?,
            AutoModel::MPNetForMaskedLM(m) => m.mpnet.forward(&ids, mask, None, None, false)?,
            AutoModel::ModernBert(m) => m.forward(&ids, mask, None, false)?,
            AutoModel::ModernBertForMaskedLM(m) => m.model.forward(&ids, mask, None, false)?,
            AutoModel::RobertaForMaskedLM(m) => m.roberta.forward(&ids, mask, types, None, false)?,
            AutoModel::ElectraWithHead(m) => m.electra.forward(&ids, mask, types, None, false)?,
            AutoModel::AlbertForMaskedLM(m) => m.albert.forward(&ids, mask, types, None, false)?,
            AutoModel::DebertaV2(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::NomicBert(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::Esm(m) => m.forward(&ids, mask, None, false)?,
            AutoModel::EsmForMaskedLM(m) => m.esm.forward(&ids, mask, None, false)?,
            AutoModel::DebertaV2ForMaskedLM(m) => m.deberta.forward(&ids, mask, types, None, false)?,
            AutoModel::DistilBert(m) => m.forward(&ids, mask, None, None, false)?,
            AutoModel::DistilBertForMaskedLM(m) => m.distilbert.forward(&ids, mask, None, None, false)?,
            AutoModel::SequenceClassifier(m) => m.encode(&ids, mask, types, None, false)?,
            AutoModel::TokenClassifier(m) => m.encode(&ids, mask, types, None, false)?,
            AutoModel::PreTraining(m) => m.encoder.forward(&ids, mask, types, None, false)?,
            _ => return self.decoder().expect("decoder variants").last_hidden_state(&ids, mask, None),
        };
        Ok(enc.last_hidden_state)
    }

    /// [`AutoModel::last_hidden_state`] of inputs right-padded to a bucket past their own `seq`
    /// tokens: a decoder whose RoPE reads the length (`max(position_ids) + 1`) gets the positions
    /// of the real length, the padding repeating the last.
    pub(crate) fn last_hidden_state_bucketed(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        seq: usize,
    ) -> Result<Tensor> {
        match (self.decoder(), input_ids.dims()) {
            (Some(lm), &[b, width]) if width > seq && !self.runs_own_inputs() && lm.rope_reads_length() => {
                let ids = ids_as_i64("input_ids", input_ids)?;
                let positions = bucketing::positions_to_width(b, seq, width, ids.device())?;
                lm.last_hidden_state(&ids, attention_mask, Some(&positions))
            }
            _ => self.last_hidden_state(input_ids, attention_mask, token_type_ids),
        }
    }

    /// The last hidden state `[batch, seq, hidden]` where pooling reads it: at the tokens
    /// `attention_mask` keeps. On the CPU every family computes it without the padding
    /// ([`BertModel::last_hidden_state_packed`] for BERT, RoBERTa, XLM-R, DistilBERT and MPNet,
    /// [`ModernBertModel::last_hidden_state_packed`], [`CausalLm::last_hidden_state_packed`]: the
    /// same values at kept tokens, zeros at padded ones); other devices give
    /// [`AutoModel::last_hidden_state`].
    pub fn last_hidden_state_at_tokens(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.device() != Device::Cpu {
            return self.last_hidden_state(input_ids, Some(attention_mask), token_type_ids);
        }
        let ids = ids_as_i64("input_ids", input_ids)?;
        check_input_dtype("attention_mask", attention_mask)?;
        if let Some(bert) = self.encoder() {
            // DistilBERT and MPNet have no token types (`last_hidden_state` ignores them too).
            let types = token_type_ids.filter(|_| self.input_names().contains(&"token_type_ids"));
            if let Some(types) = types {
                check_input_dtype("token_type_ids", types)?;
            }
            return bert.last_hidden_state_packed(&ids, attention_mask, types);
        }
        if let Some(modernbert) = self.modernbert() {
            return modernbert.last_hidden_state_packed(&ids, attention_mask);
        }
        match self.decoder() {
            Some(lm) => lm.last_hidden_state_packed(&ids, attention_mask),
            None => self.last_hidden_state(input_ids, Some(attention_mask), token_type_ids),
        }
    }

    /// Runs the model on named inputs (`input_ids` required; integer tensors, `attention_mask` also
    /// bool) and returns its outputs under transformers' field names, per-layer tuples flattened as
    /// `hidden_states.0`, ....
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut outputs = self.forward_named_model(inputs, output_hidden_states)?;
        if let AutoModel::VisionLanguage(m) = self {
            outputs.extend(m.extra_outputs(inputs)?);
        }
        Ok(outputs)
    }

    /// [`AutoModel::forward_named`]'s outputs of the model itself.
    fn forward_named_model(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        if self.runs_own_inputs() {
            return self.forward_own_inputs(inputs, output_hidden_states);
        }
        if let AutoModel::Gemma3ForConditionalGeneration(m) = self {
            if m.takes_images() && inputs.contains_key("pixel_values") {
                return m.forward_images(inputs, output_hidden_states);
            }
            // Image inputs get their own error (before the float `pixel_values` would get the dtype's).
            gemma3_multimodal::check_text_only(inputs)?;
        }
        if let AutoModel::VisionLanguage(m) = self {
            let videos = m.takes_videos() && inputs.contains_key("pixel_values_videos");
            let audio = m.takes_audio() && inputs.contains_key("input_features");
            if m.takes_images() && (inputs.contains_key("pixel_values") || videos) || audio {
                return m.forward_images(inputs, output_hidden_states);
            }
            m.check_text_only(inputs)?;
            if let Some(outputs) = m.forward_image_tokens(inputs, output_hidden_states)? {
                return Ok(outputs);
            }
        }
        if let AutoModel::Mistral3ForConditionalGeneration(_) = self {
            mistral3::check_text_only(inputs, "Mistral3ForConditionalGeneration")?;
        }
        if let AutoModel::Llama4ForConditionalGeneration(_) = self {
            mistral3::check_text_only(inputs, "Llama4ForConditionalGeneration")?;
        }
        if let AutoModel::Gemma3nForConditionalGeneration(m) = self {
            m.check_text_only(inputs)?;
        }
        if let AutoModel::Gemma4ForConditionalGeneration(_) = self {
            mistral3::check_text_only(inputs, "Gemma4ForConditionalGeneration")?;
        }
        if let AutoModel::Fuyu(_) = self {
            mistral3::check_text_only(inputs, "FuyuForCausalLM")?;
        }
        let accepted = self.input_names();
        for (name, t) in inputs {
            if !accepted.contains(&name.as_str()) {
                return Err(Error::Input(format!(
                    "unexpected input '{name}' (this model takes {})",
                    accepted.join(", ")
                )));
            }
            check_input_dtype(name, t)?;
        }
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        if matches!(self, AutoModel::SequenceClassifier(m) if m.is_multiple_choice()) {
            multiple_choice::check_input_shapes(inputs)?;
        } else {
            check_input_shapes(inputs)?;
        }
        // A float or bool mask as the int64 ones and zeros the models read.
        let mask_i64 = match inputs.get("attention_mask") {
            Some(m) if m.dtype() != DType::I64 => Some(m.ne(0.0)?.to_dtype(DType::I64)?),
            _ => None,
        };
        // Position ids `[seq]` or `[1, seq]` as one row per sequence: every input then has the
        // ids' batch (which a compiling device marks dynamic for all of them alike).
        let pos_rows = match (inputs.get("position_ids"), ids.dims()) {
            (Some(p), &[b, s]) if p.dims() != [b, s] => Some(p.broadcast_to(&[b, s])?.contiguous()?),
            _ => None,
        };
        let (mask, types, pos) = (
            mask_i64.as_ref().or(inputs.get("attention_mask")),
            inputs.get("token_type_ids"),
            pos_rows.as_ref().or(inputs.get("position_ids")),
        );
        // On a compiling device the sequence is padded to its bucket (and the pass fused), so
        // that every length of a bucket runs the same program; per-token outputs are cut back.
        // The batch is marked dynamic (`Tensor::mark_dynamic`), so batch sizes share them too.
        let device = self.device();
        let (batch, seq) = match ids.dims() {
            &[b, s] => (b, s),
            _ => (0, 0),
        };
        let width = bucketing::padded_width(device, seq, self.max_positions());
        let _fused = bucketing::fuse_forward(device);
        // (A decoder classifier reads the padding ids: it runs at the inputs' own length.)
        // (QA's per-token outputs are 2-D, which the cut back below does not know from a
        // classifier's logits: they run at their own length too.)
        // (So are ELECTRA's discriminator logits `[batch, seq]`.)
        let spans = matches!(self, AutoModel::TokenClassifier(m) if m.task() == TokenTask::Spans)
            || matches!(self, AutoModel::ElectraWithHead(m) if m.per_token_scalar());
        if device.is_cpu()
            || ids.dims().len() != 2
            || matches!(self, AutoModel::DecoderClassifier(_))
            || spans
        {
            // (Ids of another rank get the model's own error.)
            return self.forward_exact(&ids.to_dtype(DType::I64)?, mask, types, pos, output_hidden_states);
        }
        // Always with a mask here: a length equal to its bucket runs the padded lengths' program.
        let padded_ids = bucketing::pad_columns(ids, width, self.padding_token())?;
        let padded_mask = bucketing::padded_mask(mask, batch, seq, width, ids.device())?;
        let padded_types = types.map(|t| bucketing::pad_columns(t, width, 0)).transpose()?;
        let padded_pos = match pos {
            Some(t) => Some(bucketing::pad_columns(t, width, 0)?),
            // (The positions the decoder would count, the padding repeating the last, so that a
            // RoPE that reads the length, `max(position_ids) + 1`, reads the real one.)
            None if self.decoder().is_some_and(CausalLm::rope_reads_length) => {
                Some(bucketing::positions_to_width(batch, seq, width, ids.device())?)
            }
            None => None,
        };
        // The batch too: every batch size of a bucket runs the same programs.
        let padded_ids = bucketing::batch_on(&padded_ids, device)?;
        let padded_mask = bucketing::batch_on(&padded_mask, device)?;
        let padded_types = padded_types.map(|t| bucketing::batch_on(&t, device)).transpose()?;
        let padded_pos = padded_pos.map(|t| bucketing::batch_on(&t, device)).transpose()?;
        let out = self.forward_exact(
            &padded_ids,
            Some(&padded_mask),
            padded_types.as_ref(),
            padded_pos.as_ref(),
            output_hidden_states,
        )?;
        // (Gemma 3n's hidden states are its streams, the tokens their third dim.)
        let streams = self.decoder().is_some_and(CausalLm::has_hidden_streams);
        out.into_iter()
            .map(|(k, t)| {
                let dim = if streams && k.starts_with("hidden_states") { 2 } else { 1 };
                Ok((k, bucketing::trim(t, seq, width, dim)?))
            })
            .collect()
    }

    /// [`Self::forward_named`] on validated inputs at their own length.
    fn forward_exact(
        &self,
        ids: &Tensor,
        mask: Option<&Tensor>,
        types: Option<&Tensor>,
        pos: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut out = Vec::new();
        let push_hidden = |out: &mut Vec<(String, Tensor)>, hs: Vec<Tensor>| {
            out.extend(hs.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        };
        // The token types a decoder reads (GPT-2's family; Gemma 3's multimodal checkpoints take
        // text-only ones, checked and unused).
        let decoder_types = types.filter(|_| self.decoder().is_some_and(CausalLm::takes_token_types));
        if let AutoModel::BaseDecoder(lm) = self {
            let (h, hidden_states) =
                lm.hidden_states_with_token_types(ids, decoder_types, mask, pos, output_hidden_states)?;
            out.push(("last_hidden_state".into(), h));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let AutoModel::TokenClassifier(m) = self {
            let (named, enc) = m.forward(ids, mask, types, pos, output_hidden_states)?;
            out.extend(named);
            push_hidden(&mut out, enc.hidden_states);
            return Ok(out);
        }
        if let AutoModel::PreTraining(m) = self {
            let (named, enc) = m.forward(ids, mask, types, pos, output_hidden_states)?;
            out.extend(named);
            push_hidden(&mut out, enc.hidden_states);
            return Ok(out);
        }
        if let AutoModel::DecoderClassifier(m) = self {
            let (logits, hidden_states) = m.forward(ids, decoder_types, mask, pos, output_hidden_states)?;
            out.push(("logits".into(), logits));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let AutoModel::DecoderTokenClassifier(m) = self {
            let (logits, hidden_states) = m.forward(ids, decoder_types, mask, pos, output_hidden_states)?;
            out.push(("logits".into(), logits));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let Some(lm) = self.causal_lm() {
            let o = lm.forward_with_token_types(ids, decoder_types, mask, pos, output_hidden_states)?;
            out.push(("logits".into(), o.logits));
            push_hidden(&mut out, o.hidden_states);
            return Ok(out);
        }
        let h = output_hidden_states;
        let (logits, enc) = match self {
            AutoModel::Bert(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::Roberta(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::MPNet(m) => (None, m.forward(ids, mask, None, pos, h)?),
            AutoModel::MPNetForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::ModernBert(m) => (None, m.forward(ids, mask, pos, h)?),
            AutoModel::ModernBertForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::DistilBert(m) => (None, m.forward(ids, mask, None, pos, h)?),
            AutoModel::BertForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::RobertaForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::DistilBertForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::ElectraWithHead(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::AlbertForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::DebertaV2(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::NomicBert(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::Esm(m) => (None, m.forward(ids, mask, pos, h)?),
            AutoModel::EsmForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::DebertaV2ForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::SequenceClassifier(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            _ => unreachable!("decoders are handled above"),
        };
        match logits {
            Some(l) => out.push(("logits".into(), l)),
            None => {
                out.push(("last_hidden_state".into(), enc.last_hidden_state));
                if let Some(p) = enc.pooler_output {
                    out.push(("pooler_output".into(), p));
                }
            }
        }
        push_hidden(&mut out, enc.hidden_states);
        Ok(out)
    }
}
