//! The named inputs and outputs the encoder-decoders share (T5, BART and its kin, Whisper): the
//! checks on their inputs and transformers' names for their outputs.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::ids_as_i64;
use crate::error::{Error, Result};

/// Checks that every input is one of `accepted` and that the ids (every input but the masks and
/// `input_features`) are integer tensors.
pub(super) fn check_inputs(inputs: &BTreeMap<String, Tensor>, accepted: &[&str]) -> Result<()> {
    for (name, t) in inputs {
        if !accepted.contains(&name.as_str()) {
            return Err(Error::Input(format!(
                "unexpected input '{name}' (this model takes {})",
                accepted.join(", ")
            )));
        }
        let dtype = t.dtype();
        let ids = !name.ends_with("attention_mask") && name != "input_features";
        if ids && (dtype.is_float() || dtype == DType::Bool) {
            return Err(Error::Input(format!("input '{name}' must be an integer tensor, got {dtype:?}")));
        }
    }
    Ok(())
}

/// Ids input `ids` (`[batch, seq]`, seq > 0) as int64 and its mask `mask` (`[batch, seq]`) as int64
/// ones and zeros.
pub(super) fn ids_and_mask(
    inputs: &BTreeMap<String, Tensor>,
    ids: &str,
    mask: &str,
) -> Result<(Tensor, Option<Tensor>)> {
    let t = inputs.get(ids).ok_or_else(|| Error::Input(format!("missing input '{ids}'")))?;
    let (b, s) = match t.dims() {
        &[b, s] if s > 0 => (b, s),
        d => return Err(Error::Input(format!("input '{ids}' must be [batch, seq] with seq > 0, got {d:?}"))),
    };
    let m = match inputs.get(mask) {
        Some(m) if m.dims() != [b, s] => {
            return Err(Error::Input(format!(
                "input '{mask}' has shape {:?}, which does not fit {ids} of shape [{b}, {s}]",
                m.dims()
            )))
        }
        Some(m) => Some(m.ne(0.0)?.to_dtype(DType::I64)?),
        None => None,
    };
    Ok((ids_as_i64(ids, t)?, m))
}

/// An encoder-decoder's outputs under transformers' names: `logits` (with an LM or classification
/// head) or the decoder's `last_hidden_state`, then `decoder_hidden_states.*`,
/// `encoder_last_hidden_state` and `encoder_hidden_states.*`. `decoded` and `encoded` are each
/// stack's last hidden state and hidden states.
pub(super) fn outputs(
    logits: Option<Tensor>,
    decoded: (Tensor, Vec<Tensor>),
    encoded: (Tensor, Vec<Tensor>),
) -> Vec<(String, Tensor)> {
    let hidden = |prefix: &str, hs: Vec<Tensor>| {
        hs.into_iter()
            .enumerate()
            .map(move |(i, h)| (format!("{prefix}hidden_states.{i}"), h))
            .collect::<Vec<_>>()
    };
    let mut out = vec![match logits {
        Some(l) => ("logits".to_string(), l),
        None => ("last_hidden_state".to_string(), decoded.0),
    }];
    out.extend(hidden("decoder_", decoded.1));
    out.push(("encoder_last_hidden_state".to_string(), encoded.0));
    out.extend(hidden("encoder_", encoded.1));
    out
}

/// The decoder's states `h` `[batch, seq, d]` at each row's last `eos` of `ids`, as transformers'
/// sequence classifiers (BART's, T5's) read them: every row must hold as many EOS tokens, and at
/// least one.
pub(super) fn at_last_eos(ids: &Tensor, h: &Tensor, eos: Option<i64>) -> Result<Tensor> {
    let eos = eos.ok_or_else(|| Error::Config("the sequence classifier needs eos_token_id".into()))?;
    let rows = ids.to(Device::Cpu)?.to_vec2::<i64>()?;
    let counts: Vec<usize> = rows.iter().map(|r| r.iter().filter(|&&t| t == eos).count()).collect();
    if counts.iter().any(|&c| c != counts[0]) {
        return Err(Error::Input(format!(
            "all examples must have the same number of <eos> tokens (id {eos}): {counts:?}"
        )));
    }
    if counts.first().is_some_and(|&c| c == 0) {
        return Err(Error::Input(format!("each example must contain at least one <eos> token (id {eos})")));
    }
    let at: Vec<i64> = rows.iter().map(|r| r.iter().rposition(|&t| t == eos).unwrap_or(0) as i64).collect();
    let (b, d) = (h.dims()[0], h.dims()[2]);
    let index = Tensor::from_vec(at, [b, 1, 1])?.to(h.device())?.expand([b, 1, d])?;
    Ok(h.gather(1, &index)?.reshape([b, d])?)
}
