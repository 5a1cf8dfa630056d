//! Sequence classification on the decoders (transformers' `LlamaForSequenceClassification`,
//! `MistralForSequenceClassification`, `Qwen2ForSequenceClassification`,
//! `Qwen3ForSequenceClassification`, `GemmaForSequenceClassification`,
//! `Gemma2ForSequenceClassification`, `Phi3ForSequenceClassification`,
//! `GPT2ForSequenceClassification`, `GPTNeoXForSequenceClassification`,
//! `MixtralForSequenceClassification`, `Qwen3MoeForSequenceClassification`,
//! `Qwen2MoeForSequenceClassification`, `PhiForSequenceClassification`: reward models and
//! classifiers built on a causal LM). `score` (no bias) on the final hidden state of each row's
//! last token that is not `pad_token_id` (with left or right padding alike), or of the last token
//! when the config has no padding id, which then allows one row only, as transformers'.
//!
//! EuroBERT's (`EuroBertForSequenceClassification`) pools its bidirectional states instead:
//! `classifier(gelu(dense(pool(h))))` with the first token (`classifier_pooling` `bos`) or the
//! kept tokens' mean (`mean`), or (`late`, the default) the kept tokens' mean of every token's
//! `classifier(gelu(dense(h)))`.

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::decoder::CausalLm;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Weights;

/// The padding id of a config without a `pad_token_id` key: its transformers config class's
/// default (an explicit `null` is none).
fn default_pad_token_id(model_type: &str) -> Option<usize> {
    match model_type {
        "gemma" | "gemma2" | "gemma3_text" | "vaultgemma" | "hunyuan_v1_dense" | "jamba" => Some(0),
        "seed_oss" | "biogpt" | "olmo" | "olmo2" | "olmo3" | "opt" => Some(1),
        "glm" | "glm4" => Some(151329),
        "smollm3" => Some(128004),
        "helium" => Some(3),
        "phi3" => Some(32000),
        _ => None,
    }
}

/// A decoder with a sequence classification head (see the module docs).
#[derive(Debug, Clone)]
pub struct DecoderForSequenceClassification {
    /// the decoder (without an LM head)
    pub model: CausalLm,
    score: Linear,
    pad_token_id: Option<i64>,
    /// Whether the family's classifier takes `position_ids` (transformers'
    /// `FalconForSequenceClassification` has none: its positions always count from 0).
    takes_position_ids: bool,
    /// EuroBERT's pooling and `dense` layer (`score` is then its `classifier`); `None`: the
    /// last token's state
    pooled: Option<(Pooling, Linear)>,
}

/// What EuroBERT's classifier pools (`classifier_pooling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    /// the first token's state
    Bos,
    /// the kept tokens' mean state
    Mean,
    /// the kept tokens' mean of every token's logits
    Late,
}

impl DecoderForSequenceClassification {
    /// The head `score.weight` `[num_labels, hidden]` over `model`, the decoder loaded from the
    /// checkpoint's `model.*` (GPT-2's `transformer.*`; `n_embd` is its hidden size).
    pub fn load(model: CausalLm, cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = model.hidden_size();
        let bias = weights.contains("score.bias");
        let score = Linear::load(&weights.vars("score"), hidden, num_labels(cfg)?, bias)?;
        let default_pad = default_pad_token_id(cfg.model_type()?);
        let pad_token_id = match cfg.nullable_usize_or("pad_token_id", default_pad)? {
            Some(id) => Some(
                i64::try_from(id).map_err(|_| Error::Config(format!("pad_token_id {id} is too large")))?,
            ),
            None => None,
        };
        let takes_position_ids = cfg.model_type()? != "falcon";
        Ok(DecoderForSequenceClassification { model, score, pad_token_id, takes_position_ids, pooled: None })
    }

    /// EuroBERT's head over `model` (its bidirectional base model): `dense` and `classifier`,
    /// pooled as `classifier_pooling` says (see the module docs).
    pub fn load_eurobert(model: CausalLm, cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = model.hidden_size();
        let pooling = match cfg.str_or("classifier_pooling", "late")? {
            "bos" => Pooling::Bos,
            "mean" => Pooling::Mean,
            "late" => Pooling::Late,
            other => {
                return Err(Error::Config(format!(
                    "classifier_pooling must be \"bos\", \"mean\" or \"late\", got \"{other}\""
                )))
            }
        };
        let dense = Linear::load(&weights.vars("dense"), hidden, hidden, true)?;
        let score = Linear::load(&weights.vars("classifier"), hidden, num_labels(cfg)?, true)?;
        let pooled = Some((pooling, dense));
        Ok(DecoderForSequenceClassification {
            model,
            score,
            pad_token_id: None,
            takes_position_ids: true,
            pooled,
        })
    }

    /// Whether the model takes `position_ids` (not Falcon's, as in transformers).
    pub fn takes_position_ids(&self) -> bool {
        self.takes_position_ids
    }

    /// The number of labels (the logits' last dim).
    pub fn num_labels(&self) -> usize {
        self.score.weight.dims()[0]
    }

    /// Logits `[batch, num_labels]` and, with `output_hidden_states`, the decoder's hidden states
    /// (the embeddings, then each layer's output, the last after the final norm).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        if position_ids.is_some() && !self.takes_position_ids {
            return Err(Error::Input(
                "this classifier takes no position_ids (transformers' FalconForSequenceClassification counts positions from 0)"
                    .into(),
            ));
        }
        if let Some((pooling, dense)) = &self.pooled {
            let (h, hidden_states) =
                self.model.hidden_states(input_ids, attention_mask, position_ids, output_hidden_states)?;
            return Ok((self.pooled_logits(&h, *pooling, dense, attention_mask)?, hidden_states));
        }
        let rows = self.scored_tokens(input_ids)?;
        let (h, hidden_states) = self.model.hidden_states_with_token_types(
            input_ids,
            token_type_ids,
            attention_mask,
            position_ids,
            output_hidden_states,
        )?;
        let (b, s, hidden) = match h.dims() {
            &[b, s, hidden] => (b, s, hidden),
            dims => {
                return Err(Error::Input(format!(
                    "expected hidden states [batch, seq, hidden], got {dims:?}"
                )))
            }
        };
        let flat: Vec<i64> = rows.iter().enumerate().map(|(i, &t)| (i * s + t) as i64).collect();
        let index = Tensor::from_vec(flat, [b])?.to(h.device())?;
        let picked = h.reshape([b * s, hidden])?.index_select(0, &index)?;
        Ok((self.score.forward(&self.model.head_transformed(&picked)?)?, hidden_states))
    }

    /// EuroBERT's logits `[batch, num_labels]` of the final states `h` (see the module docs).
    fn pooled_logits(
        &self,
        h: &Tensor,
        pooling: Pooling,
        dense: &Linear,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        // The kept tokens' mean over the sequence (every token's without a mask).
        let mean = |x: &Tensor| -> Result<Tensor> {
            let Some(mask) = mask else { return Ok(x.mean(1, false)?) };
            let m = mask.to(x.device())?.to_dtype(x.dtype())?.unsqueeze(-1)?;
            Ok(x.mul(&m)?.sum(1, false)?.div(&m.sum(1, false)?)?)
        };
        let head = |x: &Tensor| -> Result<Tensor> { self.score.forward(&dense.forward(x)?.gelu("none")?) };
        match pooling {
            Pooling::Bos => head(&h.select(1, 0)?),
            Pooling::Mean => head(&mean(h)?),
            Pooling::Late => mean(&head(h)?),
        }
    }

    /// The token each row is scored at: the last one whose id is not the padding id (0 when all
    /// are), or the last token when the config has none (one row only).
    fn scored_tokens(&self, input_ids: &Tensor) -> Result<Vec<usize>> {
        let (b, s) = match input_ids.dims() {
            &[b, s] if s > 0 => (b, s),
            dims => {
                return Err(Error::Input(format!(
                    "input_ids must have shape [batch, seq] with seq > 0, got {dims:?}"
                )))
            }
        };
        let Some(pad) = self.pad_token_id else {
            if b != 1 {
                return Err(Error::Input(format!(
                    "Cannot handle batch sizes > 1 if no padding token is defined (config.json has no pad_token_id; got a batch of {b})"
                )));
            }
            return Ok(vec![s - 1]);
        };
        let ids = input_ids.to(Device::Cpu)?.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()?;
        Ok(ids.chunks(s).map(|row| row.iter().rposition(|&id| id != pad).unwrap_or(0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config classes' `pad_token_id` defaults (transformers 5.24), for configs that omit it.
    #[test]
    fn absent_pad_ids_take_the_config_class_default() {
        for (model_type, pad) in [
            ("gemma2", Some(0)),
            ("hunyuan_v1_dense", Some(0)),
            ("opt", Some(1)),
            ("glm4", Some(151329)),
            ("smollm3", Some(128004)),
            ("helium", Some(3)),
            ("phi3", Some(32000)),
            ("llama", None),
            ("gpt2", None),
        ] {
            assert_eq!(default_pad_token_id(model_type), pad, "{model_type}");
        }
    }
}
