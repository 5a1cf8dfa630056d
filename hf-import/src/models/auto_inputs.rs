//! The inputs an [`AutoModel`] takes: their names per kind of model, and the checks of their dtypes
//! and shapes.

use super::*;

/// The input names each kind of model accepts.
const ENCODER_INPUTS: &[&str] = &["input_ids", "attention_mask", "token_type_ids", "position_ids"];
const DECODER_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids"];
/// GPT-2's family takes token types too (see [`CausalLm::takes_token_types`]).
const TYPED_DECODER_INPUTS: &[&str] = &["input_ids", "attention_mask", "token_type_ids", "position_ids"];
const DISTILBERT_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids"];
const IDS_AND_MASK: &[&str] = &["input_ids", "attention_mask"];

/// Inputs that index a table (token, token type and position ids): integer tensors, not bool, as
/// torch's embedding lookup requires. `attention_mask` may also be bool.
const ID_INPUTS: &[&str] = &["input_ids", "token_type_ids", "position_ids"];

/// Checks that input `name` may hold ids: an integer tensor (bool and float ones are an error, not
/// cast), or for `attention_mask` also a bool or float one.
pub(crate) fn check_input_dtype(name: &str, t: &Tensor) -> Result<()> {
    let dtype = t.dtype();
    // A float attention mask (ones and zeros) is accepted, as transformers does.
    if (dtype.is_float() && name != "attention_mask") || (dtype == DType::Bool && ID_INPUTS.contains(&name)) {
        return Err(Error::Input(format!("input '{name}' must be an integer tensor, got {dtype:?}")));
    }
    Ok(())
}

/// Checks the inputs' shapes against `input_ids` (`[batch, seq]`, `seq` > 0): `attention_mask`
/// and `token_type_ids` are `[batch, seq]`, `position_ids` `[batch, seq]`, `[1, seq]` or `[seq]`; the error
/// names the input.
pub(super) fn check_input_shapes(inputs: &BTreeMap<String, Tensor>) -> Result<()> {
    let Some(ids) = inputs.get("input_ids") else { return Ok(()) };
    let (b, s) = match ids.dims() {
        &[b, s] if s > 0 => (b, s),
        d => {
            return Err(Error::Input(format!(
                "input 'input_ids' must be [batch, seq] with seq > 0, got {d:?}"
            )))
        }
    };
    for (name, t) in inputs {
        let fits = match (name.as_str(), t.dims()) {
            ("input_ids", _) => true,
            ("position_ids", &[rows, cols]) => cols == s && (rows == b || rows == 1),
            ("position_ids", &[cols]) => cols == s,
            // (A multimodal RoPE's streams; the model checks it takes them.)
            ("position_ids", &[3 | 4, rows, cols]) => rows == b && cols == s,
            (_, &[rows, cols]) => rows == b && cols == s,
            _ => false,
        };
        if !fits {
            return Err(Error::Input(format!(
                "input '{name}' has shape {:?}, which does not fit input_ids of shape [{b}, {s}]",
                t.dims()
            )));
        }
    }
    Ok(())
}

/// Ids input `name` as int64, after [`check_input_dtype`].
pub(crate) fn ids_as_i64(name: &str, t: &Tensor) -> Result<Tensor> {
    check_input_dtype(name, t)?;
    Ok(t.to_dtype(DType::I64)?)
}

impl AutoModel {
    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        match self {
            AutoModel::DistilBert(_)
            | AutoModel::DistilBertForMaskedLM(_)
            | AutoModel::MPNet(_)
            | AutoModel::MPNetForMaskedLM(_)
            | AutoModel::ModernBert(_)
            | AutoModel::ModernBertForMaskedLM(_)
            | AutoModel::Esm(_)
            | AutoModel::EsmForMaskedLM(_) => DISTILBERT_INPUTS,
            AutoModel::SequenceClassifier(m) if !m.takes_token_types() => DISTILBERT_INPUTS,
            AutoModel::TokenClassifier(m) if !m.takes_token_types() => DISTILBERT_INPUTS,
            AutoModel::DecoderClassifier(m) if !m.takes_position_ids() => IDS_AND_MASK,
            AutoModel::DecoderTokenClassifier(m) if !m.takes_position_ids() => IDS_AND_MASK,
            AutoModel::Gemma3ForConditionalGeneration(_) => gemma3_multimodal::INPUTS,
            _ if self.runs_own_inputs() => self.own_input_names(),
            _ if self.decoder().is_some_and(CausalLm::takes_token_types) => TYPED_DECODER_INPUTS,
            _ if self.decoder().is_some() => DECODER_INPUTS,
            _ => ENCODER_INPUTS,
        }
    }
}
