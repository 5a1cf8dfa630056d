//! `T5Stack`: the encoder or the decoder of T5 — pre-norm blocks (RMS norms without a shift),
//! attention without score scaling whose relative-position bias the first block's table gives
//! every block (UMT5: each block's own table), the decoder's cross-attention over the encoder's
//! states, a ReLU or gated MLP.

use oxtorch_tensor::{DType, Tensor};

use crate::error::{Error, Result};
use crate::layers::{
    causal_mask, eager_attention, padding_mask, t5_bucket, Activation, EncoderDecoderCache, Linear, RmsNorm,
    RmsNormStyle,
};
use crate::weights::Vars;

/// The sizes of a stack (`T5Config`'s keys, one stack's depth).
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// `d_model`
    pub d_model: usize,
    /// `d_kv`: the width of a head
    pub d_kv: usize,
    /// `d_ff`
    pub d_ff: usize,
    /// `num_heads`
    pub heads: usize,
    /// blocks in this stack (`num_layers` or `num_decoder_layers`)
    pub layers: usize,
    /// `relative_attention_num_buckets`
    pub buckets: usize,
    /// `relative_attention_max_distance`
    pub max_distance: usize,
    /// `layer_norm_epsilon`
    pub eps: f64,
    /// the MLP's activation (`feed_forward_proj`'s last part; `gated-gelu` is `gelu_new`)
    pub act: Activation,
    /// `feed_forward_proj` starts with `gated-`
    pub gated: bool,
    /// causal self-attention and cross-attention (the decoder)
    pub decoder: bool,
    /// each block has its own `relative_attention_bias` table (UMT5), not the first block's alone
    pub bias_per_block: bool,
}

/// One attention: `q`, `k`, `v`, `o`, no biases.
#[derive(Debug, Clone)]
struct Attention {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
}

impl Attention {
    fn load(vars: &Vars<'_>, c: &StackConfig) -> Result<Self> {
        let inner = c.heads * c.d_kv;
        Ok(Attention {
            q: Linear::load(&vars.pp("q"), c.d_model, inner, false)?,
            k: Linear::load(&vars.pp("k"), c.d_model, inner, false)?,
            v: Linear::load(&vars.pp("v"), c.d_model, inner, false)?,
            o: Linear::load(&vars.pp("o"), inner, c.d_model, false)?,
        })
    }

    /// `x` `[batch, queries, d_model]` attending to `source` `[batch, keys, d_model]` with the
    /// additive `mask` (bias included), scores unscaled.
    fn forward(&self, x: &Tensor, source: &Tensor, mask: &Tensor, c: &StackConfig) -> Result<Tensor> {
        let (k, v) = self.keys_values(source, c)?;
        self.attend(x, &k, &v, mask, c)
    }

    /// The keys and values of `source` `[batch, keys, d_model]`: `[batch, heads, keys, d_kv]` each.
    fn keys_values(&self, source: &Tensor, c: &StackConfig) -> Result<(Tensor, Tensor)> {
        Ok((split_heads(&self.k.forward(source)?, c)?, split_heads(&self.v.forward(source)?, c)?))
    }

    /// `x`'s queries attending to keys `k` and values `v` (`[batch, heads, keys, d_kv]`).
    fn attend(&self, x: &Tensor, k: &Tensor, v: &Tensor, mask: &Tensor, c: &StackConfig) -> Result<Tensor> {
        let (b, s) = (x.dims()[0], x.dims()[1]);
        let q = split_heads(&self.q.forward(x)?, c)?;
        let ctx = eager_attention(&q, k, v, Some(mask), 1.0, None)?;
        self.o.forward(&ctx.transpose(1, 2)?.reshape([b, s, c.heads * c.d_kv])?)
    }
}

/// `[batch, n, heads · d_kv]` → `[batch, heads, n, d_kv]`.
fn split_heads(t: &Tensor, c: &StackConfig) -> Result<Tensor> {
    let (b, n) = (t.dims()[0], t.dims()[1]);
    Ok(t.reshape([b, n, c.heads, c.d_kv])?.transpose(1, 2)?)
}

/// `DenseReluDense`: `wo(act(wi x))`, or gated `wo(act(wi_0 x) * wi_1 x)`.
#[derive(Debug, Clone)]
enum FeedForward {
    Dense { wi: Linear, wo: Linear },
    Gated { wi_0: Linear, wi_1: Linear, wo: Linear },
}

impl FeedForward {
    fn load(vars: &Vars<'_>, c: &StackConfig) -> Result<Self> {
        let (d, f) = (c.d_model, c.d_ff);
        let wo = Linear::load(&vars.pp("wo"), f, d, false)?;
        Ok(if c.gated {
            FeedForward::Gated {
                wi_0: Linear::load(&vars.pp("wi_0"), d, f, false)?,
                wi_1: Linear::load(&vars.pp("wi_1"), d, f, false)?,
                wo,
            }
        } else {
            FeedForward::Dense { wi: Linear::load(&vars.pp("wi"), d, f, false)?, wo }
        })
    }

    fn forward(&self, x: &Tensor, act: Activation) -> Result<Tensor> {
        match self {
            FeedForward::Dense { wi, wo } => wo.forward(&act.forward(&wi.forward(x)?)?),
            FeedForward::Gated { wi_0, wi_1, wo } => {
                wo.forward(&act.forward(&wi_0.forward(x)?)?.mul(&wi_1.forward(x)?)?)
            }
        }
    }
}

/// `T5Block`: `layer.0` self-attention, the decoder's `layer.1` cross-attention, then the MLP
/// (`layer.1` or `layer.2`), each behind its own norm and residual.
#[derive(Debug, Clone)]
struct Block {
    self_norm: RmsNorm,
    self_attn: Attention,
    cross: Option<(RmsNorm, Attention)>,
    ff_norm: RmsNorm,
    ff: FeedForward,
}

/// A T5 encoder or decoder stack.
#[derive(Debug, Clone)]
pub struct T5Stack {
    config: StackConfig,
    blocks: Vec<Block>,
    /// the first block's `relative_attention_bias` `[buckets, heads]`, or each block's (UMT5)
    relative_bias: Vec<Tensor>,
    final_norm: RmsNorm,
}

/// A stack's outputs.
#[derive(Debug, Clone)]
pub struct StackOutput {
    /// `[batch, seq, d_model]`, after the final norm
    pub last_hidden_state: Tensor,
    /// With `output_hidden_states`: the embeddings, each block's output but the last, and the
    /// final-normed output (transformers' convention for T5).
    pub hidden_states: Vec<Tensor>,
}

impl T5Stack {
    /// The stack under `vars` (`block.N.layer.M.*`, `final_layer_norm`).
    pub fn load(vars: &Vars<'_>, config: StackConfig) -> Result<Self> {
        let c = &config;
        let norm = |v: Vars<'_>| RmsNorm::load(&v.pp("layer_norm"), c.d_model, c.eps, RmsNormStyle::Llama);
        let blocks = (0..c.layers)
            .map(|i| {
                let layer = vars.pp("block").pp(i).pp("layer");
                let cross = if c.decoder {
                    Some((norm(layer.pp(1))?, Attention::load(&layer.pp(1).pp("EncDecAttention"), c)?))
                } else {
                    None
                };
                let ff = layer.pp(if c.decoder { 2 } else { 1 });
                Ok(Block {
                    self_norm: norm(layer.pp(0))?,
                    self_attn: Attention::load(&layer.pp(0).pp("SelfAttention"), c)?,
                    cross,
                    ff_norm: norm(ff.clone())?,
                    ff: FeedForward::load(&ff.pp("DenseReluDense"), c)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let tables = if c.bias_per_block { c.layers } else { c.layers.min(1) };
        let relative_bias = (0..tables)
            .map(|i| {
                vars.pp("block")
                    .pp(i)
                    .pp("layer.0.SelfAttention.relative_attention_bias")
                    .get("weight", &[c.buckets, c.heads])
            })
            .collect::<Result<Vec<_>>>()?;
        let final_norm = RmsNorm::load(&vars.pp("final_layer_norm"), c.d_model, c.eps, RmsNormStyle::Llama)?;
        Ok(T5Stack { config, blocks, relative_bias, final_norm })
    }

    /// The sizes this stack was built with.
    pub fn config(&self) -> &StackConfig {
        &self.config
    }

    /// Each bias table's `[1, heads, queries, keys]`: the bias of query `i` (at position `past + i`)
    /// attending to key `j`, plus `mask` (broadcast to it).
    fn position_biases(
        &self,
        queries: usize,
        keys: usize,
        past: usize,
        mask: Option<&Tensor>,
        dtype: DType,
    ) -> Result<Vec<Tensor>> {
        let c = &self.config;
        let index: Vec<i64> = (0..queries)
            .flat_map(|i| {
                (0..keys).map(move |j| {
                    t5_bucket(j as i64 - (past + i) as i64, !c.decoder, c.buckets, c.max_distance)
                })
            })
            .collect();
        if let Some(bad) = index.iter().find(|&&b| b < 0 || b >= c.buckets as i64) {
            return Err(Error::Input(format!(
                "relative position bucket {bad} is outside the {} buckets: relative_attention_num_buckets ({}) \
                 and relative_attention_max_distance ({}) do not cover a sequence of {keys} tokens (transformers \
                 fails on it too)",
                c.buckets, c.buckets, c.max_distance
            )));
        }
        let Some(first) = self.relative_bias.first() else { return Ok(Vec::new()) };
        let index = Tensor::from_vec(index, [queries * keys])?.to(first.device())?;
        self.relative_bias
            .iter()
            .map(|table| {
                let values = table.index_select(0, &index)?.reshape([queries, keys, c.heads])?;
                let bias = values.permute([2, 0, 1])?.unsqueeze(0)?.to_dtype(dtype)?;
                Ok(match mask {
                    Some(m) => bias.add(m)?,
                    None => bias,
                })
            })
            .collect()
    }

    /// Block `i`'s self-attention mask among `masks` (one per bias table).
    fn self_mask(masks: &[Tensor], i: usize) -> &Tensor {
        &masks[i.min(masks.len() - 1)]
    }

    /// Runs the stack on `embeds` `[batch, seq, d_model]` (the shared embedding's rows) with its
    /// `attention_mask` `[batch, seq]` (int64, optional); the decoder attends to `encoder`
    /// `[batch, source, d_model]` where `encoder_mask` `[batch, source]` keeps.
    pub fn forward(
        &self,
        embeds: &Tensor,
        attention_mask: Option<&Tensor>,
        encoder: Option<(&Tensor, Option<&Tensor>)>,
        output_hidden_states: bool,
    ) -> Result<StackOutput> {
        let c = &self.config;
        let (b, s) = (embeds.dims()[0], embeds.dims()[1]);
        let dtype = embeds.dtype();
        let device = embeds.device();
        let mask = if c.decoder {
            causal_mask(attention_mask, s, 0, s, None, dtype, device)?
        } else {
            match attention_mask {
                Some(m) => padding_mask(m, dtype)?,
                None => Tensor::zeros([b, 1, 1, s], (dtype, device))?,
            }
        };
        let self_masks = self.position_biases(s, s, 0, Some(&mask), dtype)?;
        let cross_mask = match encoder {
            Some((states, mask)) => Some(match mask {
                Some(m) => padding_mask(m, dtype)?,
                None => Tensor::zeros([b, 1, 1, states.dims()[1]], (dtype, device))?,
            }),
            None => None,
        };
        let mut x = embeds.clone();
        let mut hidden_states = Vec::new();
        for (i, block) in self.blocks.iter().enumerate() {
            if output_hidden_states {
                hidden_states.push(x.clone());
            }
            let masks = (Self::self_mask(&self_masks, i), cross_mask.as_ref());
            x = self.block_forward(block, &x, masks, encoder.map(|(e, _)| e))?;
        }
        let last_hidden_state = self.final_norm.forward(&x)?;
        if output_hidden_states {
            // transformers' T5 hands back the normed output as the last entry.
            // (The last block's output itself is not among them.)
            hidden_states.push(last_hidden_state.clone());
        }
        Ok(StackOutput { last_hidden_state, hidden_states })
    }

    /// A generation's cache over the encoder's `states` `[batch, source, d_model]` (where
    /// `states_mask` `[batch, source]` keeps), before the first token.
    pub fn start_cache(&self, states: &Tensor, states_mask: Option<&Tensor>) -> Result<EncoderDecoderCache> {
        let c = &self.config;
        let cross = self
            .blocks
            .iter()
            .map(|block| match &block.cross {
                Some((_, attn)) => attn.keys_values(states, c),
                None => Err(Error::Input("the encoder's stack has no cross-attention".into())),
            })
            .collect::<Result<Vec<_>>>()?;
        EncoderDecoderCache::over_states(cross, states, states_mask)
    }

    /// The decoder on one more token per row, `embeds` `[batch, 1, d_model]`, after the tokens in
    /// `cache` (which it extends): the final-normed state `[batch, 1, d_model]`.
    pub fn step(&self, embeds: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor> {
        let c = &self.config;
        let step = cache.begin_step(embeds.dtype(), embeds.device())?;
        // The new token sees every earlier one: the bias alone (and, in a fixed-shape cache, the
        // empty slots hidden).
        let self_masks = self.position_biases(1, step.keys, step.past, step.mask.as_ref(), embeds.dtype())?;
        let mut x = embeds.clone();
        for (i, block) in self.blocks.iter().enumerate() {
            let normed = block.self_norm.forward(&x)?;
            let (k, v) = block.self_attn.keys_values(&normed, c)?;
            let (k, v) = cache.append(i, k, v)?;
            x = x.add(&block.self_attn.attend(&normed, &k, &v, Self::self_mask(&self_masks, i), c)?)?;
            if let Some((norm, attn)) = &block.cross {
                let (ck, cv) = &cache.cross[i];
                x = x.add(&attn.attend(&norm.forward(&x)?, ck, cv, &cache.cross_mask, c)?)?;
            }
            x = x.add(&block.ff.forward(&block.ff_norm.forward(&x)?, c.act)?)?;
        }
        self.final_norm.forward(&x)
    }

    /// One block on `x` with its self-attention mask (the position bias included) and the
    /// decoder's cross-attention mask.
    fn block_forward(
        &self,
        block: &Block,
        x: &Tensor,
        (self_mask, cross_mask): (&Tensor, Option<&Tensor>),
        encoder: Option<&Tensor>,
    ) -> Result<Tensor> {
        let c = &self.config;
        let normed = block.self_norm.forward(x)?;
        let mut x = x.add(&block.self_attn.forward(&normed, &normed, self_mask, c)?)?;
        if let (Some((norm, attn)), Some(source), Some(mask)) = (&block.cross, encoder, cross_mask) {
            x = x.add(&attn.forward(&norm.forward(&x)?, source, mask, c)?)?;
        }
        x.add(&block.ff.forward(&block.ff_norm.forward(&x)?, c.act)?).map_err(Into::into)
    }
}
