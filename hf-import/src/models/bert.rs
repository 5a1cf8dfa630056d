//! BERT (`BertModel` with its pooler, `BertForMaskedLM`): learned absolute positions, token types,
//! post-norm encoder blocks (or pre-norm ones and a last norm: [`NormLayout`]), bidirectional
//! attention over the non-padded tokens.

use oxtorch_tensor::{DType, Device, Tensor};

use super::encoder_inputs::EncoderInputs;
use super::pre_norm_bert::NormLayout;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    padding_mask, Activation, Embedding, EncoderLayer, LayerNorm, Linear, PackedRows, RelativeBias,
};
use crate::weights::{Vars, Weights};

/// The sizes of a BERT-style encoder.
#[derive(Debug, Clone)]
pub struct BertConfig {
    /// model width
    pub hidden: usize,
    /// embedding width (ELECTRA's `embedding_size`; the hidden width elsewhere), projected to
    /// `hidden` when they differ
    pub embedding: usize,
    /// attention heads
    pub heads: usize,
    /// MLP width
    pub intermediate: usize,
    /// number of blocks
    pub layers: usize,
    /// vocabulary size
    pub vocab: usize,
    /// learned positions
    pub max_positions: usize,
    /// token types (0 for none)
    pub type_vocab: usize,
    /// layer norm epsilon
    pub eps: f64,
    /// MLP activation
    pub act: Activation,
    /// where the layer norms sit (by the model type)
    pub norms: NormLayout,
}

impl BertConfig {
    /// Reads the BERT keys of `cfg`.
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let kind = cfg.str_or("position_embedding_type", "absolute")?;
        if kind != "absolute" {
            return Err(Error::Unsupported(format!(
                "position_embedding_type \"{kind}\" is not supported (supported: absolute)"
            )));
        }
        // transformers runs a decoder-configured BERT/RoBERTa with causal self-attention (and
        // cross-attention with `add_cross_attention`); refused rather than run bidirectionally.
        if cfg.bool_or("is_decoder", false)? || cfg.bool_or("add_cross_attention", false)? {
            return Err(Error::Unsupported(
                "BERT-style models configured as decoders (is_decoder / add_cross_attention) are not supported"
                    .into(),
            ));
        }
        let hidden = cfg.usize("hidden_size")?;
        let model_type = cfg.str_or("model_type", "")?;
        let c = BertConfig {
            hidden,
            embedding: hidden,
            heads: cfg.usize("num_attention_heads")?,
            intermediate: cfg.usize("intermediate_size")?,
            layers: cfg.layers("num_hidden_layers")?,
            vocab: cfg.usize("vocab_size")?,
            max_positions: cfg.usize_or("max_position_embeddings", 512)?,
            type_vocab: cfg.usize_or("type_vocab_size", 2)?,
            // (XLM-RoBERTa-XL's config class alone defaults to 1e-5.)
            eps: cfg.f64_or("layer_norm_eps", if model_type == "xlm-roberta-xl" { 1e-5 } else { 1e-12 })?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            norms: NormLayout::of_model_type(model_type),
        };
        if c.heads == 0 || !c.hidden.is_multiple_of(c.heads) {
            return Err(Error::Config(format!(
                "hidden_size ({}) must be a multiple of num_attention_heads ({})",
                c.hidden, c.heads
            )));
        }
        Ok(c)
    }
}

/// Word, position and token-type embeddings, summed and layer-normed (not by the pre-norm
/// encoders but RoBERTa-PreLayerNorm; then projected to the hidden width, for ELECTRA's narrower
/// embeddings).
#[derive(Debug, Clone)]
struct BertEmbeddings {
    word: Embedding,
    position: Embedding,
    token_type: Option<Embedding>,
    norm: Option<LayerNorm>,
    /// ELECTRA's `embeddings_project`
    project: Option<Linear>,
}

/// Loads BERT's names for one block: `attention.self.{query,key,value}`, `attention.output.*`,
/// `intermediate.dense`, `output.*` (a pre-norm block's norms under its layout's names).
fn load_layer(v: &Vars<'_>, c: &BertConfig) -> Result<EncoderLayer> {
    let h = c.hidden;
    let att = v.pp("attention");
    let (attn_norm, out_norm) = match c.norms {
        NormLayout::PostNorm => (att.pp("output").pp("LayerNorm"), v.pp("output").pp("LayerNorm")),
        NormLayout::PreNorm(names) => (v.pp(names.attention), v.pp(names.mlp)),
    };
    Ok(EncoderLayer {
        query: Linear::load(&att.pp("self").pp("query"), h, h, true)?,
        key: Linear::load(&att.pp("self").pp("key"), h, h, true)?,
        value: Linear::load(&att.pp("self").pp("value"), h, h, true)?,
        attn_out: Linear::load(&att.pp("output").pp("dense"), h, h, true)?,
        attn_norm: LayerNorm::load(&attn_norm, h, c.eps)?,
        inner: Linear::load(&v.pp("intermediate").pp("dense"), h, c.intermediate, true)?,
        out: Linear::load(&v.pp("output").pp("dense"), c.intermediate, h, true)?,
        out_norm: LayerNorm::load(&out_norm, h, c.eps)?,
        pre_norm: matches!(c.norms, NormLayout::PreNorm(_)),
    })
}

/// How position ids are made when none are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positions {
    /// `0..seq` (BERT).
    Absolute,
    /// `padding_idx + 1 + (index among non-padding tokens)`, `padding_idx` on padding (RoBERTa).
    AfterPadding {
        /// the padding token id
        padding_idx: i64,
    },
}

/// Outputs of [`BertModel::forward`].
#[derive(Debug, Clone)]
pub struct BertOutput {
    /// `[batch, seq, hidden]`
    pub last_hidden_state: Tensor,
    /// `tanh(dense(first token))`, `[batch, hidden]`, when the model has a pooler
    pub pooler_output: Option<Tensor>,
    /// With `output_hidden_states`: the embeddings, then each layer's output (the last one normed,
    /// for the pre-norm encoders).
    pub hidden_states: Vec<Tensor>,
}

/// transformers' `BertModel`.
#[derive(Debug, Clone)]
pub struct BertModel {
    embeddings: BertEmbeddings,
    layers: Vec<EncoderLayer>,
    /// the pre-norm encoders' norm after the last block
    last_norm: Option<LayerNorm>,
    pooler: Option<Linear>,
    cfg: BertConfig,
    positions: Positions,
    /// MPNet's relative-position bias, added to every layer's attention scores
    relative_bias: Option<RelativeBias>,
}

impl BertModel {
    /// Loads the encoder from `cfg` and `weights` (names with or without a `bert.` prefix); the
    /// pooler is loaded when the checkpoint has one.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = BertConfig::from_config(cfg)?;
        let root = weights.vars("");
        let v =
            if weights.contains("bert.embeddings.word_embeddings.weight") { root.pp("bert") } else { root };
        Self::load_vars(&v, c, Positions::Absolute)
    }

    /// Loads the encoder from the tensors under `v` (BERT's names), making default positions as
    /// `positions` says. Embeddings narrower than the model (`c.embedding`, ELECTRA's) are
    /// projected by `embeddings_project`.
    pub fn load_vars(v: &Vars<'_>, c: BertConfig, positions: Positions) -> Result<Self> {
        let (e, width) = (v.pp("embeddings"), c.embedding);
        let embeddings = BertEmbeddings {
            word: Embedding::load(&e.pp("word_embeddings"), c.vocab, width)?,
            position: Embedding::load(&e.pp("position_embeddings"), c.max_positions, width)?,
            token_type: if c.type_vocab > 0 {
                Some(Embedding::load(&e.pp("token_type_embeddings"), c.type_vocab, width)?)
            } else {
                None
            },
            norm: match c.norms.embedding_norm() {
                true => Some(LayerNorm::load(&e.pp("LayerNorm"), width, c.eps)?),
                false => None,
            },
            project: if width != c.hidden {
                Some(Linear::load(&v.pp("embeddings_project"), width, c.hidden, true)?)
            } else {
                None
            },
        };
        let layers = (0..c.layers)
            .map(|i| load_layer(&v.pp("encoder").pp("layer").pp(i), &c))
            .collect::<Result<_>>()?;
        let last_norm = match c.norms {
            NormLayout::PostNorm => None,
            NormLayout::PreNorm(names) => Some(LayerNorm::load(&v.pp(names.last), c.hidden, c.eps)?),
        };
        let pooler = if v.pp("pooler").pp("dense").contains("weight") {
            Some(Linear::load(&v.pp("pooler").pp("dense"), c.hidden, c.hidden, true)?)
        } else {
            None
        };
        Ok(BertModel { embeddings, layers, last_norm, pooler, cfg: c, positions, relative_bias: None })
    }

    /// An encoder from loaded parts (for the families that store BERT's structure under other names).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        word: Embedding,
        position: Embedding,
        token_type: Option<Embedding>,
        norm: LayerNorm,
        layers: Vec<EncoderLayer>,
        pooler: Option<Linear>,
        cfg: BertConfig,
        positions: Positions,
    ) -> Self {
        let embeddings = BertEmbeddings { word, position, token_type, norm: Some(norm), project: None };
        BertModel { embeddings, layers, last_norm: None, pooler, cfg, positions, relative_bias: None }
    }

    /// The encoder with its embeddings projected to the hidden width by `project` (ALBERT's
    /// `embedding_hidden_mapping_in`).
    pub(crate) fn with_projection(mut self, project: Linear) -> Self {
        self.embeddings.project = Some(project);
        self
    }

    /// The encoder with a relative-position bias added to every layer's attention scores (MPNet).
    pub(crate) fn with_relative_bias(self, relative_bias: RelativeBias) -> Self {
        BertModel { relative_bias: Some(relative_bias), ..self }
    }

    /// Whether the checkpoint has the pooler (`pooler.dense`), which gives `pooler_output`.
    pub fn has_pooler(&self) -> bool {
        self.pooler.is_some()
    }

    /// The model's sizes.
    pub fn config(&self) -> &BertConfig {
        &self.cfg
    }

    /// How position ids are made when none are given.
    pub fn positions(&self) -> Positions {
        self.positions
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.embeddings.word.weight.dtype()
    }

    /// The word embedding table `[vocab, embedding width]` (what tied LM heads reuse).
    pub fn word_embeddings(&self) -> &Tensor {
        &self.embeddings.word.weight
    }

    /// The device of the weights, where inputs are moved and outputs are.
    pub fn device(&self) -> Device {
        self.embeddings.word.weight.device()
    }

    /// Encodes `input_ids` `[batch, seq]`; `attention_mask` (1 = token) defaults to all ones,
    /// `token_type_ids` to zeros, `position_ids` to `0..seq`. Inputs are moved to the weights' device,
    /// where the outputs stay.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let (mut h, attention_mask) = self.embed(input_ids, attention_mask, token_type_ids, position_ids)?;
        let mask = self.attention_mask(&attention_mask, &h)?;
        let mut hidden_states = Vec::new();
        for layer in &self.layers {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            h = layer.forward(&h, &mask, self.cfg.heads, self.cfg.act)?;
        }
        h = self.after_last_layer(h)?;
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let pooler_output = self.pooler_output(&h)?;
        Ok(BertOutput { last_hidden_state: h, pooler_output, hidden_states })
    }

    /// The pooler's output `tanh(dense(h[:, 0]))` `[batch, hidden]` of a last hidden state
    /// `[batch, seq, hidden]`, when the checkpoint has a pooler.
    pub fn pooler_output(&self, last_hidden_state: &Tensor) -> Result<Option<Tensor>> {
        match &self.pooler {
            Some(p) => Ok(Some(p.forward(&last_hidden_state.select(1, 0)?)?.tanh()?)),
            None => Ok(None),
        }
    }

    /// The last hidden state `[batch, seq, hidden]` at the tokens `attention_mask` keeps, computed
    /// without the padding: the kept tokens of every row are packed into one `[tokens, hidden]`
    /// matrix for the projections and MLPs, and attention runs row by row over that row's tokens
    /// ([`EncoderLayer::forward_packed`]). A kept token never attends to padding, so its values are
    /// [`BertModel::forward`]'s; padded positions (and rows that keep no token) are zero instead of
    /// what transformers computes there. Pooling that reads kept tokens only (sentence embeddings)
    /// gets `forward`'s result for the cost of the real tokens alone.
    pub fn last_hidden_state_packed(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (h, attention_mask) = self.embed(input_ids, Some(attention_mask), token_type_ids, None)?;
        let (b, s, hidden) = (h.dims()[0], h.dims()[1], h.dims()[2]);
        let Some(packed) = PackedRows::new(&attention_mask, b, s, self.device())? else {
            // Nothing to leave out: the batched layers.
            let mask = self.attention_mask(&attention_mask, &h)?;
            let h = self
                .layers
                .iter()
                .try_fold(h, |h, layer| layer.forward(&h, &mask, self.cfg.heads, self.cfg.act))?;
            return self.after_last_layer(h);
        };
        if packed.rows.is_empty() {
            return Ok(Tensor::zeros([b, s, hidden], (h.dtype(), self.device()))?);
        }
        // MPNet's bias between each row's tokens, at their padded places.
        let biases = match &self.relative_bias {
            Some(bias) => {
                Some(packed.columns.iter().map(|c| bias.bias_at(c, h.dtype())).collect::<Result<Vec<_>>>()?)
            }
            None => None,
        };
        let mut x = packed.gather(&h)?;
        for layer in &self.layers {
            x = layer.forward_packed(&x, &packed.rows, biases.as_deref(), self.cfg.heads, self.cfg.act)?;
        }
        packed.scatter(&self.after_last_layer(x)?)
    }

    /// The last block's output `h`, normed once more by the pre-norm encoders.
    fn after_last_layer(&self, h: Tensor) -> Result<Tensor> {
        match &self.last_norm {
            Some(norm) => norm.forward(&h),
            None => Ok(h),
        }
    }

    /// The additive attention mask of the layers: the padding's `[batch, 1, 1, seq]`, plus MPNet's
    /// relative-position bias (`[1, heads, seq, seq]`, the sum `[batch, heads, seq, seq]`) when
    /// the model has one.
    fn attention_mask(&self, attention_mask: &Tensor, h: &Tensor) -> Result<Tensor> {
        let mask = padding_mask(attention_mask, h.dtype())?;
        match &self.relative_bias {
            Some(bias) => Ok(mask.add(&bias.bias(h.dims()[1], h.dtype())?)?),
            None => Ok(mask),
        }
    }

    /// The embeddings' output `[batch, seq, hidden]` (word, token-type and position embeddings,
    /// summed, normalised and, for ELECTRA, projected) and the attention mask `[batch, seq]` (all ones when none is given),
    /// both on the weights' device, after checking the inputs' shapes and position range.
    fn embed(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor)> {
        let device = self.device();
        let inputs = EncoderInputs::on(device, input_ids, attention_mask, token_type_ids, position_ids)?;
        let EncoderInputs { batch: b, seq: s, attention_mask, token_type_ids, position_ids, .. } = inputs;
        let input_ids = &inputs.input_ids;
        let e = &self.embeddings;
        let positions = match (position_ids, self.positions) {
            (Some(p), _) => p.to_dtype(DType::I64)?,
            (None, Positions::Absolute) => Tensor::arange(s as i64, (DType::I64, device))?.unsqueeze(0)?,
            (None, Positions::AfterPadding { padding_idx }) => {
                let real = input_ids.ne(padding_idx)?.to_dtype(DType::I64)?;
                real.cumsum(1, None)?.mul(&real)?.add(padding_idx)?
            }
        };
        let last = if positions.numel() > 0 { positions.max()?.item::<i64>()? } else { 0 };
        if last < 0 || last as usize >= self.cfg.max_positions {
            return Err(Error::Input(format!(
                "position id {last} is out of range for max_position_embeddings ({})",
                self.cfg.max_positions
            )));
        }
        let mut h = e.word.forward(input_ids)?;
        if let Some(tt) = &e.token_type {
            let types = match token_type_ids {
                Some(t) => t.to_dtype(DType::I64)?,
                // One row, broadcast over the batch by the add.
                None => Tensor::zeros([1, s], (DType::I64, device))?,
            };
            h = h.add(&tt.forward(&types)?)?;
        }
        h = h.add(&e.position.forward(&positions)?)?;
        let attention_mask = match attention_mask {
            Some(m) => m,
            None => Tensor::ones([b, s], (DType::I64, device))?,
        };
        let h = match &e.norm {
            Some(norm) => norm.forward(&h)?,
            None => h,
        };
        let h = match &e.project {
            Some(project) => project.forward(&h)?,
            None => h,
        };
        Ok((h, attention_mask))
    }
}

/// A masked-LM head's `decoder` under `p` (`[vocab, width]`): tied, the word `embeddings` with
/// `p.bias` (transformers ties `decoder.bias` to it only with tied embeddings); untied, the
/// checkpoint's `decoder.weight` and the decoder's own bias, the one its forward adds (BERT,
/// RoBERTa, ALBERT).
pub(super) fn mlm_decoder(
    p: &Vars<'_>,
    tied: bool,
    embeddings: &Tensor,
    vocab: usize,
    width: usize,
) -> Result<Linear> {
    let weight = match p.pp("decoder").get_opt("weight", &[vocab, width])? {
        Some(w) if !tied => w,
        _ if tied => embeddings.clone(),
        _ => {
            return Err(Error::Weight(format!(
                "tensor '{}' is missing from the checkpoint",
                p.path("decoder.weight")
            )))
        }
    };
    let (first, second) = if tied { ("bias", "decoder.bias") } else { ("decoder.bias", "bias") };
    let bias = match p.get_opt(first, &[vocab])? {
        Some(b) => b,
        None => p.get(second, &[vocab])?,
    };
    Ok(Linear { weight, bias: Some(bias) })
}

/// A masked-LM prediction head: `decoder(norm(act(dense(h))))`, the decoder's rows being the
/// vocabulary (tied to the word embeddings unless the checkpoint stores its own).
#[derive(Debug, Clone)]
pub(super) struct MlmHead {
    dense: Linear,
    norm: LayerNorm,
    act: Activation,
    decoder: Linear,
}

impl MlmHead {
    /// BERT's `cls.predictions` (`transform.dense`, `transform.LayerNorm`, `decoder`, `bias`) over
    /// the encoder `bert`.
    pub(super) fn load_bert(cfg: &Config, weights: &Weights, bert: &BertModel) -> Result<Self> {
        let c = &bert.cfg;
        let p = weights.vars("cls.predictions");
        let tied = cfg.bool_or("tie_word_embeddings", true)?;
        Ok(MlmHead {
            dense: Linear::load(&p.pp("transform").pp("dense"), c.hidden, c.hidden, true)?,
            norm: LayerNorm::load(&p.pp("transform").pp("LayerNorm"), c.hidden, c.eps)?,
            act: c.act,
            decoder: mlm_decoder(&p, tied, bert.word_embeddings(), c.vocab, c.hidden)?,
        })
    }

    /// ALBERT's `predictions` (`dense` from the hidden to the embedding width, `LayerNorm`,
    /// `decoder`, `bias`) over the encoder `albert`.
    pub(super) fn load_albert(cfg: &Config, weights: &Weights, albert: &BertModel) -> Result<Self> {
        let c = &albert.cfg;
        let p = weights.vars("predictions");
        let tied = cfg.bool_or("tie_word_embeddings", true)?;
        Ok(MlmHead {
            dense: Linear::load(&p.pp("dense"), c.hidden, c.embedding, true)?,
            norm: LayerNorm::load(&p.pp("LayerNorm"), c.embedding, c.eps)?,
            act: c.act,
            decoder: mlm_decoder(&p, tied, albert.word_embeddings(), c.vocab, c.embedding)?,
        })
    }

    /// The vocabulary logits `[batch, seq, vocab]` of the last hidden state `h`.
    pub(super) fn forward(&self, h: &Tensor) -> Result<Tensor> {
        let h = self.act.forward(&self.dense.forward(h)?)?;
        self.decoder.forward(&self.norm.forward(&h)?)
    }
}

/// transformers' `BertForMaskedLM`: the encoder and `cls.predictions` (dense, activation, layer norm,
/// decoder tied to the word embeddings unless the checkpoint stores its own).
#[derive(Debug, Clone)]
pub struct BertForMaskedLM {
    /// the encoder
    pub bert: BertModel,
    head: MlmHead,
}

impl BertForMaskedLM {
    /// Loads `bert.*` and `cls.predictions.*`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let bert = BertModel::load(cfg, weights)?;
        Ok(BertForMaskedLM { head: MlmHead::load_bert(cfg, weights, &bert)?, bert })
    }

    /// Masked-LM logits `[batch, seq, vocab]` and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.bert.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        Ok((self.head.forward(&out.last_hidden_state)?, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<BertConfig> {
        BertConfig::from_config(&Config::from_json_str(json).unwrap())
    }

    /// A decoder-configured BERT runs causally in transformers: refused, never run bidirectionally.
    #[test]
    fn decoder_configured_berts_are_refused() {
        let base = r#""hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 16,
            "num_hidden_layers": 1, "vocab_size": 10"#;
        assert!(read(&format!("{{{base}}}")).is_ok());
        for extra in [r#""is_decoder": true"#, r#""add_cross_attention": true"#] {
            let err = read(&format!("{{{base}, {extra}}}")).err().unwrap().to_string();
            assert!(err.contains("configured as decoders"), "{err}");
        }
        let err = read(&format!(r#"{{{base}, "position_embedding_type": "relative_key"}}"#)).err().unwrap();
        assert!(err.to_string().contains("relative_key"));
    }
}
