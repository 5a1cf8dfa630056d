//! ModernBERT (`ModernBertModel`, the encoder of gte-modernbert and modernbert-embed): pre-norm
//! blocks (no norm before the first block's attention) with a fused `Wqkv`, RoPE (a global and a
//! local base), attention alternating between the whole sequence and a bidirectional sliding
//! window (`|query − key| ≤ local_attention / 2`), a GLU MLP (`act(input) · gate`), a final norm;
//! biases and norm shifts only where the config asks for them.

use oxtorch_tensor::{DType, Device, Tensor};

use super::bert::BertOutput;
use super::decoder::batch_seq;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    apply_rotary, attend_rows, bidirectional_mask, eager_attention, packed_row_mask, padding_mask,
    Activation, Embedding, LayerNorm, Linear, PackedRows, Rotary,
};
use crate::weights::{Vars, Weights};

/// One block: `x + Wo(attn(attn_norm(x)))`, then `x + mlp(mlp_norm(x))`.
#[derive(Debug, Clone)]
struct Block {
    /// `None` in the first block (transformers' `nn.Identity`)
    attn_norm: Option<LayerNorm>,
    wqkv: Linear,
    wo: Linear,
    mlp_norm: LayerNorm,
    wi: Linear,
    mlp_out: Linear,
    /// attends within the sliding window, with the local RoPE
    sliding: bool,
}

/// transformers' `ModernBertModel`.
#[derive(Debug, Clone)]
pub struct ModernBertModel {
    embed: Embedding,
    embed_norm: LayerNorm,
    blocks: Vec<Block>,
    final_norm: LayerNorm,
    rotary_global: Rotary,
    rotary_local: Rotary,
    heads: usize,
    head_dim: usize,
    /// the local attention span: a sliding layer's query sees keys at most half of it away
    local_attention: usize,
    act: Activation,
}

impl ModernBertModel {
    /// Loads the encoder (names with or without a `model.` prefix) with the sizes `cfg` gives, in
    /// the transformers 5 (`layer_types`, `rope_parameters` per layer type) or 4.x key style
    /// (`global_attn_every_n_layers`, `global_rope_theta`, `local_rope_theta`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = cfg.usize("hidden_size")?;
        let heads = cfg.usize("num_attention_heads")?;
        let inter = cfg.usize("intermediate_size")?;
        let n_layers = cfg.layers("num_hidden_layers")?;
        let vocab = cfg.usize("vocab_size")?;
        let eps = cfg.f64_or("norm_eps", 1e-5)?;
        let (attn_bias, mlp_bias) = (cfg.bool_or("attention_bias", false)?, cfg.bool_or("mlp_bias", false)?);
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "The hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})"
            )));
        }
        let head_dim = hidden / heads;
        // The fused widths must exist before any tensor is checked against them (a corrupt
        // config's 2^63 would overflow).
        let (qkv_width, wi_width) = match (hidden.checked_mul(3), inter.checked_mul(2)) {
            (Some(q), Some(w)) => (q, w),
            _ => {
                return Err(Error::Config(format!(
                    "hidden_size ({hidden}) or intermediate_size ({inter}) is too large"
                )))
            }
        };
        let sliding: Vec<bool> = match cfg.layer_types() {
            Some(types) if types.len() == n_layers => {
                types.iter().map(|t| t == "sliding_attention").collect()
            }
            Some(types) => {
                return Err(Error::Config(format!(
                    "\"layer_types\" has {} entries for {n_layers} layers",
                    types.len()
                )))
            }
            None => {
                let every = cfg.usize_or("global_attn_every_n_layers", 3)?.max(1);
                (0..n_layers).map(|i| i % every != 0).collect()
            }
        };
        let local_attention = cfg.usize_or("local_attention", 128)?;
        let root = weights.vars("");
        let v =
            if weights.contains("model.embeddings.tok_embeddings.weight") { root.pp("model") } else { root };
        let norm = |v: &Vars<'_>| LayerNorm::load(v, hidden, eps);
        let blocks = sliding
            .iter()
            .enumerate()
            .map(|(i, &sliding)| {
                let lv = v.pp("layers").pp(i);
                Ok(Block {
                    attn_norm: if i == 0 { None } else { Some(norm(&lv.pp("attn_norm"))?) },
                    wqkv: Linear::load(&lv.pp("attn").pp("Wqkv"), hidden, qkv_width, attn_bias)?,
                    wo: Linear::load(&lv.pp("attn").pp("Wo"), hidden, hidden, attn_bias)?,
                    mlp_norm: norm(&lv.pp("mlp_norm"))?,
                    wi: Linear::load(&lv.pp("mlp").pp("Wi"), hidden, wi_width, mlp_bias)?,
                    mlp_out: Linear::load(&lv.pp("mlp").pp("Wo"), inter, hidden, mlp_bias)?,
                    sliding,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = Embedding::load(&v.pp("embeddings").pp("tok_embeddings"), vocab, hidden)?;
        let device = embed.weight.device();
        Ok(ModernBertModel {
            embed_norm: norm(&v.pp("embeddings").pp("norm"))?,
            embed,
            blocks,
            final_norm: norm(&v.pp("final_norm"))?,
            rotary_global: Rotary::new(&cfg.rope(Some("full_attention"))?, head_dim)?.to_device(device)?,
            rotary_local: Rotary::new(&cfg.rope(Some("sliding_attention"))?, head_dim)?.to_device(device)?,
            heads,
            head_dim,
            local_attention,
            act: Activation::from_name(cfg.str_or("hidden_activation", "gelu")?)?,
        })
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.embed.weight.dtype()
    }

    /// The device of the weights, where inputs are moved and outputs are.
    pub fn device(&self) -> Device {
        self.embed.weight.device()
    }

    /// Encodes `input_ids` `[batch, seq]`; `attention_mask` (1 = token) defaults to all ones,
    /// `position_ids` to `0..seq`. `hidden_states` (with `output_hidden_states`) are transformers':
    /// the embeddings, each block's output, the last one after the final norm.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let (b, s) = batch_seq(input_ids)?;
        let device = self.device();
        let dtype = self.dtype();
        let attention_mask = match attention_mask {
            Some(m) if m.dims() != [b, s] => {
                return Err(Error::Input(format!(
                    "attention_mask must have shape [{b}, {s}], got {:?}",
                    m.dims()
                )))
            }
            Some(m) => m.to(device)?,
            None => Tensor::ones([b, s], (DType::I64, device))?,
        };
        let positions = match position_ids {
            Some(p) => p.to(device)?.to_dtype(DType::I64)?.expand([b, s])?,
            None => Tensor::arange(s as i64, (DType::I64, device))?.unsqueeze(0)?.expand([b, s])?,
        };
        // Sliding layers: padding and the keys past half the span blocked as one mask value (a
        // row that blocks every key stays finite, as transformers' masks do).
        let global = padding_mask(&attention_mask, dtype)?;
        let local = bidirectional_mask(Some(&attention_mask), s, Some(self.local_attention), dtype, device)?;
        let (cos_g, sin_g) = self.rotary_global.cos_sin(&positions, dtype)?;
        let (cos_l, sin_l) = self.rotary_local.cos_sin(&positions, dtype)?;
        let mut h = self.embed_norm.forward(&self.embed.forward(&input_ids.to(device)?)?)?;
        let mut hidden_states = Vec::new();
        for block in &self.blocks {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            let (mask, cos, sin) =
                if block.sliding { (&local, &cos_l, &sin_l) } else { (&global, &cos_g, &sin_g) };
            let scale = self.scale();
            h = self.block(block, &h, cos, sin, &|q, k, v| {
                Ok(eager_attention(q, k, v, Some(mask), scale, None)?.transpose(1, 2)?)
            })?;
        }
        let h = self.final_norm.forward(&h)?;
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        Ok(BertOutput { last_hidden_state: h, pooler_output: None, hidden_states })
    }
}

impl ModernBertModel {
    /// The attention's score scale, `head_dim^-0.5`.
    fn scale(&self) -> f64 {
        1.0 / (self.head_dim as f64).sqrt()
    }

    /// One block over `h` `[batch, seq, hidden]` (`cos`/`sin` `[batch, seq, head_dim]`), with
    /// `attend` mapping q, k, v `[batch, heads, seq, head_dim]` to the context
    /// `[batch, seq, heads, head_dim]`.
    fn block(
        &self,
        block: &Block,
        h: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        attend: &dyn Fn(&Tensor, &Tensor, &Tensor) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let (b, s) = (h.dims()[0], h.dims()[1]);
        let x = match &block.attn_norm {
            Some(norm) => norm.forward(h)?,
            None => h.clone(),
        };
        let qkv = block.wqkv.forward(&x)?.reshape([b, s, 3, self.heads, self.head_dim])?;
        let part = |i: isize| -> Result<Tensor> { Ok(qkv.select(2, i)?.transpose(1, 2)?) };
        // As transformers' ModernBERT: the rotation in float32 (the angles rounded to the model's
        // dtype first), rounded once.
        let rotate = |x: Tensor| -> Result<Tensor> {
            let f32 = |t: &Tensor| t.to_dtype(DType::F32);
            Ok(apply_rotary(&f32(&x)?, &f32(cos)?, &f32(sin)?)?.to_dtype(x.dtype())?)
        };
        let (q, k) = (rotate(part(0)?)?, rotate(part(1)?)?);
        let ctx = attend(&q, &k, &part(2)?)?.reshape([b, s, self.heads * self.head_dim])?;
        let h = h.add(&block.wo.forward(&ctx)?)?;
        let halves = block.wi.forward(&block.mlp_norm.forward(&h)?)?.chunk(2, -1)?;
        let glu = self.act.forward(&halves[0])?.mul(&halves[1])?;
        Ok(h.add(&block.mlp_out.forward(&glu)?)?)
    }

    /// The last hidden state `[batch, seq, hidden]` at the tokens `attention_mask` keeps (positions
    /// `0..seq`), computed without the padding: the kept tokens of every row are packed into one
    /// `[1, tokens, hidden]` sequence for the projections and MLPs, attention runs row by row over
    /// that row's tokens, each with the RoPE angle of its place in the padded row and, in sliding
    /// layers, the window measured there. Padded positions (and rows that keep no token) are zero.
    pub fn last_hidden_state_packed(&self, input_ids: &Tensor, attention_mask: &Tensor) -> Result<Tensor> {
        let (b, s) = batch_seq(input_ids)?;
        let (device, dtype) = (self.device(), self.dtype());
        let hidden = self.heads * self.head_dim;
        let Some(packed) = PackedRows::new(attention_mask, b, s, device)? else {
            return Ok(self.forward(input_ids, Some(attention_mask), None, false)?.last_hidden_state);
        };
        if packed.rows.is_empty() {
            return Ok(Tensor::zeros([b, s, hidden], (dtype, device))?);
        }
        // Each row's sliding-window mask between its tokens' padded places.
        let windows = packed
            .columns
            .iter()
            .map(|c| packed_row_mask(c, Some(self.local_attention), true, dtype, device))
            .collect::<Result<Vec<_>>>()?;
        let (cos_g, sin_g) = packed.angles(&self.rotary_global, dtype)?;
        let (cos_l, sin_l) = packed.angles(&self.rotary_local, dtype)?;
        let ids = packed.gather(&input_ids.to(device)?)?.unsqueeze(0)?;
        let mut h = self.embed_norm.forward(&self.embed.forward(&ids)?)?;
        for block in &self.blocks {
            let (cos, sin) = if block.sliding { (&cos_l, &sin_l) } else { (&cos_g, &sin_g) };
            let masks = block.sliding.then_some(windows.as_slice());
            h = self.block(block, &h, cos, sin, &|q, k, v| {
                attend_rows(q, k, v, &packed.rows, masks, self.scale(), None)
            })?;
        }
        packed.scatter(&self.final_norm.forward(&h)?.reshape([packed.tokens(), hidden])?)
    }
}

/// ModernBERT's `head` (transformers' `ModernBertPredictionHead`): `norm(act(dense(x)))` with the
/// config's `classifier_activation` and `classifier_bias`, under the masked-LM decoder and the
/// sequence classifier.
#[derive(Debug, Clone)]
pub(crate) struct PredictionHead {
    dense: Linear,
    act: Activation,
    norm: LayerNorm,
}

impl PredictionHead {
    /// Loads `vars.dense` and `vars.norm`.
    pub(crate) fn load(cfg: &Config, vars: &Vars<'_>) -> Result<Self> {
        let hidden = cfg.usize("hidden_size")?;
        Ok(PredictionHead {
            dense: Linear::load(&vars.pp("dense"), hidden, hidden, cfg.bool_or("classifier_bias", false)?)?,
            act: Activation::from_name(cfg.str_or("classifier_activation", "gelu")?)?,
            norm: LayerNorm::load(&vars.pp("norm"), hidden, cfg.f64_or("norm_eps", 1e-5)?)?,
        })
    }

    /// `norm(act(dense(x)))`.
    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.norm.forward(&self.act.forward(&self.dense.forward(x)?)?)
    }
}

/// transformers' `ModernBertForMaskedLM`: the encoder (`model.*`), `head` (`PredictionHead`) and
/// `decoder` (tied to the token embeddings unless the config unties them; a bias with
/// `decoder_bias`).
#[derive(Debug, Clone)]
pub struct ModernBertForMaskedLM {
    /// the encoder
    pub model: ModernBertModel,
    head: PredictionHead,
    decoder: Linear,
}

impl ModernBertForMaskedLM {
    /// Loads `model.*`, `head.*` and `decoder.*`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let model = ModernBertModel::load(cfg, weights)?;
        let (hidden, vocab) = (cfg.usize("hidden_size")?, cfg.usize("vocab_size")?);
        let root = weights.vars("");
        let tied = cfg.bool_or("tie_word_embeddings", true)?;
        let weight = match root.pp("decoder").get_opt("weight", &[vocab, hidden])? {
            Some(w) if !tied => w,
            _ if tied => model.embed.weight.clone(),
            _ => return Err(Error::Weight("tensor 'decoder.weight' is missing from the checkpoint".into())),
        };
        let bias = if cfg.bool_or("decoder_bias", true)? {
            Some(root.pp("decoder").get("bias", &[vocab])?)
        } else {
            None
        };
        Ok(ModernBertForMaskedLM {
            head: PredictionHead::load(cfg, &root.pp("head"))?,
            decoder: Linear { weight, bias },
            model,
        })
    }

    /// Masked-LM logits `[batch, seq, vocab]` and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.model.forward(input_ids, attention_mask, position_ids, output_hidden_states)?;
        let h = self.head.forward(&out.last_hidden_state)?;
        Ok((self.decoder.forward(&h)?, out))
    }
}
