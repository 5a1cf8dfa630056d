//! BART's encoder and decoder (Whisper's too): token embeddings (scaled by `sqrt(d_model)` with
//! `scale_embedding`) plus learned positions (offset by 2, BART's quirk), a layer norm on the
//! embeddings when the checkpoint has one, then post-norm blocks (BART) or pre-norm blocks with a
//! final norm (mBART, Whisper); the decoder's blocks attend causally to themselves, then to the
//! encoder's states.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::{Error, Result};
use crate::layers::{
    causal_mask, eager_attention, padding_mask, Activation, Embedding, EncoderDecoderCache, LayerNorm, Linear,
};
use crate::weights::Vars;

/// The sizes and layout of one stack.
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// `d_model`
    pub d_model: usize,
    /// attention heads (`encoder_attention_heads` / `decoder_attention_heads`)
    pub heads: usize,
    /// MLP width (`encoder_ffn_dim` / `decoder_ffn_dim`)
    pub ffn: usize,
    /// blocks (`encoder_layers` / `decoder_layers`)
    pub layers: usize,
    /// `max_position_embeddings`
    pub max_positions: usize,
    /// `activation_function`
    pub act: Activation,
    /// `sqrt(d_model)` with `scale_embedding`, else 1
    pub embed_scale: f64,
    /// norms before each sub-block and a final norm (mBART), else after (BART)
    pub pre_norm: bool,
    /// causal self-attention and cross-attention (the decoder)
    pub decoder: bool,
    /// where the positions come from
    pub positions: PositionKind,
    /// `k_proj` has a bias (not Whisper's)
    pub key_bias: bool,
    /// `layernorm_embedding` on the token embeddings before the positions are added
    /// (BlenderbotSmall's decoder), not after
    pub norm_before_positions: bool,
}

/// Where a stack's position embeddings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionKind {
    /// the checkpoint's learned table, position `p` at row `p + offset` (BART's offset 2,
    /// Whisper's 0)
    Learned {
        /// the table's row of position 0
        offset: usize,
    },
    /// fixed sinusoids (Marian, Pegasus), computed when the checkpoint leaves them out
    Sinusoidal,
    /// fairseq's sinusoids (M2M100, NLLB) at positions counted from the token ids: each token that
    /// is not `padding` at `padding + 1 +` the count of such tokens before it, padding at the zero
    /// row `padding`
    Fairseq {
        /// `pad_token_id`
        padding: i64,
    },
}

/// Rows `first..first + rows` of Marian's and Pegasus's fixed positions (float32; a table of any
/// length, computed for the positions a pass reads only): position `p`, frequency `i` of `dim / 2`
/// (rounded up) gives `sin(p / 10000^(2i / dim))` in the first half and the matching `cos` in the
/// second, computed in float64 as their `create_weight` does with numpy.
fn sinusoidal_rows(first: usize, rows: usize, dim: usize) -> Result<Tensor> {
    let half = dim.div_ceil(2);
    let mut out = vec![0f32; rows.saturating_mul(dim)];
    for (r, p) in (first..first + rows).enumerate() {
        for j in 0..dim {
            // numpy: `pos / np.power(10000, 2 * (j // 2) / dim)`; sines of the even columns,
            // cosines of the odd.
            let angle = p as f64 / 10000f64.powf((2 * (j / 2)) as f64 / dim as f64);
            let (col, value) = if j % 2 == 0 { (j / 2, angle.sin()) } else { (half + j / 2, angle.cos()) };
            out[r * dim + col] = value as f32;
        }
    }
    Ok(Tensor::from_vec(out, [rows, dim])?)
}

/// M2M100's (fairseq's) sinusoids at `positions` (float32 `[positions, dim]`): frequency `i` of
/// `half = dim / 2` is `exp(-i · ln(10000) / (half - 1))`, sines in the first half, cosines in
/// the second, a zero column last for an odd width, and the row of position `padding` zero. The
/// frequencies and angles are float32 products, as `get_embedding` computes them in torch.
fn fairseq_sinusoidal_rows(positions: &[i64], dim: usize, padding: i64) -> Result<Tensor> {
    let half = dim / 2;
    if half < 2 {
        return Err(Error::Config(format!("fairseq's sinusoidal positions need d_model >= 4, got {dim}")));
    }
    let step = -(10000f64.ln() / (half - 1) as f64) as f32;
    let freqs: Vec<f32> = (0..half).map(|i| f64::from(i as f32 * step).exp() as f32).collect();
    let mut out = vec![0f32; positions.len() * dim];
    for (row, &p) in out.chunks_mut(dim).zip(positions) {
        if p == padding {
            continue;
        }
        for (i, f) in freqs.iter().enumerate() {
            let angle = f64::from(p as f32 * f);
            row[i] = angle.sin() as f32;
            row[half + i] = angle.cos() as f32;
        }
    }
    Ok(Tensor::from_vec(out, [positions.len(), dim])?)
}

/// M2M100's position ids of the token `ids` `[batch, seq]` after `past` earlier ones (transformers'
/// `create_position_ids_from_input_ids`): each non-padding token's count among its row's non-padding
/// tokens so far, plus `past`, plus `padding`; `padding` itself for a padding token.
fn fairseq_position_ids(ids: &Tensor, past: usize, padding: i64) -> Result<Vec<i64>> {
    let rows = ids.to_dtype(DType::I64)?.to(Device::Cpu)?.to_vec2::<i64>()?;
    let mut out = Vec::with_capacity(rows.len() * rows.first().map_or(0, Vec::len));
    for row in rows {
        let mut count = past as i64;
        for id in row {
            if id == padding {
                out.push(padding);
            } else {
                count += 1;
                out.push(count + padding);
            }
        }
    }
    Ok(out)
}

/// One attention with biases, scaled by `head_dim^-0.5`.
#[derive(Debug, Clone)]
struct Attention {
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
}

impl Attention {
    fn load(vars: &Vars<'_>, d: usize, key_bias: bool) -> Result<Self> {
        Ok(Attention {
            q: Linear::load(&vars.pp("q_proj"), d, d, true)?,
            k: Linear::load(&vars.pp("k_proj"), d, d, key_bias)?,
            v: Linear::load(&vars.pp("v_proj"), d, d, true)?,
            out: Linear::load(&vars.pp("out_proj"), d, d, true)?,
        })
    }

    /// `[batch, n, d]` → `[batch, heads, n, head_dim]`.
    fn split(t: &Tensor, heads: usize) -> Result<Tensor> {
        let (b, n, d) = (t.dims()[0], t.dims()[1], t.dims()[2]);
        Ok(t.reshape([b, n, heads, d / heads])?.transpose(1, 2)?)
    }

    fn keys_values(&self, source: &Tensor, heads: usize) -> Result<(Tensor, Tensor)> {
        Ok((Self::split(&self.k.forward(source)?, heads)?, Self::split(&self.v.forward(source)?, heads)?))
    }

    fn attend(
        &self,
        x: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: Option<&Tensor>,
        heads: usize,
    ) -> Result<Tensor> {
        let (b, s, d) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let q = Self::split(&self.q.forward(x)?, heads)?;
        let ctx = eager_attention(&q, k, v, mask, ((d / heads) as f64).powf(-0.5), None)?;
        self.out.forward(&ctx.transpose(1, 2)?.reshape([b, s, d])?)
    }
}

/// A block: self-attention, the decoder's cross-attention, the MLP, each with its norm.
#[derive(Debug, Clone)]
struct Block {
    self_attn: Attention,
    self_norm: LayerNorm,
    cross: Option<(Attention, LayerNorm)>,
    fc1: Linear,
    fc2: Linear,
    final_norm: LayerNorm,
}

/// Where a stack's positions come from.
#[derive(Debug, Clone)]
enum Positions {
    /// the checkpoint's table `[max_positions + offset, d_model]`
    Table(Embedding),
    /// sinusoids computed for the positions read, in the weights' dtype and device (Marian's and
    /// Pegasus's, which transformers 5 does not save)
    Sinusoidal { dtype: DType, device: Device },
    /// fairseq's sinusoids at positions counted from the token ids (M2M100's, never saved)
    Fairseq { padding: i64, dtype: DType, device: Device },
}

/// A BART encoder or decoder.
#[derive(Debug, Clone)]
pub struct BartStack {
    config: StackConfig,
    positions: Positions,
    layernorm_embedding: Option<LayerNorm>,
    blocks: Vec<Block>,
    /// mBART's norm after the last block
    layer_norm: Option<LayerNorm>,
}

/// A stack's outputs.
#[derive(Debug, Clone)]
pub struct StackOutput {
    /// `[batch, seq, d_model]`
    pub last_hidden_state: Tensor,
    /// With `output_hidden_states`: the blocks' input, each block's output but the last, and
    /// `last_hidden_state` (transformers' convention).
    pub hidden_states: Vec<Tensor>,
}

impl BartStack {
    /// The stack under `vars` (`embed_positions`, `layernorm_embedding`, `layers.N.*`, `layer_norm`).
    pub fn load(vars: &Vars<'_>, config: StackConfig, dtype: DType, device: Device) -> Result<Self> {
        let c = &config;
        let d = c.d_model;
        if c.heads == 0 || !d.is_multiple_of(c.heads) {
            return Err(Error::Config(format!(
                "d_model ({d}) must be a multiple of the attention heads ({})",
                c.heads
            )));
        }
        let norm = |v: Vars<'_>| LayerNorm::load(&v, d, 1e-5);
        let blocks = (0..c.layers)
            .map(|i| {
                let l = vars.pp("layers").pp(i);
                let cross = if c.decoder {
                    Some((
                        Attention::load(&l.pp("encoder_attn"), d, c.key_bias)?,
                        norm(l.pp("encoder_attn_layer_norm"))?,
                    ))
                } else {
                    None
                };
                Ok(Block {
                    self_attn: Attention::load(&l.pp("self_attn"), d, c.key_bias)?,
                    self_norm: norm(l.pp("self_attn_layer_norm"))?,
                    cross,
                    fc1: Linear::load(&l.pp("fc1"), d, c.ffn, true)?,
                    fc2: Linear::load(&l.pp("fc2"), c.ffn, d, true)?,
                    final_norm: norm(l.pp("final_layer_norm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let table = |offset: usize| -> Result<Positions> {
            let rows = c.max_positions.checked_add(offset).ok_or_else(|| {
                Error::Config(format!("max_position_embeddings ({}) is too large", c.max_positions))
            })?;
            Ok(Positions::Table(Embedding::load(&vars.pp("embed_positions"), rows, d)?))
        };
        let positions = match c.positions {
            PositionKind::Learned { offset } => table(offset)?,
            PositionKind::Sinusoidal if vars.contains("embed_positions.weight") => table(0)?,
            // (transformers 5 does not save them: `_keys_to_ignore_on_save`.)
            PositionKind::Sinusoidal => Positions::Sinusoidal { dtype, device },
            PositionKind::Fairseq { padding } => {
                fairseq_sinusoidal_rows(&[], d, padding)?;
                Positions::Fairseq { padding, dtype, device }
            }
        };
        Ok(BartStack {
            positions,
            layernorm_embedding: match vars.contains("layernorm_embedding.weight") {
                true => Some(norm(vars.pp("layernorm_embedding"))?),
                false => None,
            },
            layer_norm: if c.pre_norm { Some(norm(vars.pp("layer_norm"))?) } else { None },
            blocks,
            config,
        })
    }

    /// The sizes this stack was built with.
    pub fn config(&self) -> &StackConfig {
        &self.config
    }

    /// The token embeddings `tokens` `[batch, seq, d]` (unscaled rows of the shared table, of the
    /// token `ids` where the stack counts positions from them) at positions `past..past + seq`:
    /// scaled, positions added, layer-normed.
    fn embed(&self, tokens: &Tensor, ids: Option<&Tensor>, past: usize) -> Result<Tensor> {
        let (b, s) = (tokens.dims()[0], tokens.dims()[1]);
        // (fairseq's sinusoids have no longest sequence: transformers grows their table.)
        let bounded = !matches!(self.positions, Positions::Fairseq { .. });
        if bounded && past + s > self.config.max_positions {
            return Err(Error::Input(format!(
                "sequence of {} tokens is longer than max_position_embeddings ({})",
                past + s,
                self.config.max_positions
            )));
        }
        let d = self.config.d_model;
        let pos = match &self.positions {
            Positions::Table(table) => {
                let offset = match self.config.positions {
                    PositionKind::Learned { offset } => offset,
                    _ => 0,
                };
                let first = (past + offset) as i64;
                let rows = table.forward(&Tensor::arange_step(
                    first,
                    first + s as i64,
                    1,
                    (DType::I64, tokens.device()),
                )?)?;
                rows.unsqueeze(0)?.expand([b, s, d])?
            }
            Positions::Sinusoidal { dtype, device } => {
                sinusoidal_rows(past, s, d)?.to_dtype(*dtype)?.to(*device)?.unsqueeze(0)?.expand([b, s, d])?
            }
            Positions::Fairseq { padding, dtype, device } => {
                let ids = ids.ok_or_else(|| {
                    Error::Input("this stack counts its positions from token ids, and was given none".into())
                })?;
                if ids.dims() != [b, s] {
                    return Err(Error::Input(format!(
                        "token ids of shape {:?} for embeddings of shape {:?}",
                        ids.dims(),
                        tokens.dims()
                    )));
                }
                // Each distinct position's row computed once, then gathered per token.
                let positions = fairseq_position_ids(ids, past, *padding)?;
                let mut distinct = positions.clone();
                distinct.sort_unstable();
                distinct.dedup();
                let index: Vec<i64> =
                    positions.iter().map(|p| distinct.partition_point(|q| q < p) as i64).collect();
                let rows = fairseq_sinusoidal_rows(&distinct, d, *padding)?;
                let rows = rows.index_select(0, &Tensor::from_vec(index, [b * s])?)?;
                rows.reshape([b, s, d])?.to_dtype(*dtype)?.to(*device)?
            }
        };
        let x = if self.config.embed_scale != 1.0 {
            tokens.mul(self.config.embed_scale)?
        } else {
            tokens.clone()
        };
        match (&self.layernorm_embedding, self.config.norm_before_positions) {
            (Some(n), true) => Ok(n.forward(&x)?.add(&pos.to_dtype(x.dtype())?)?),
            (Some(n), false) => n.forward(&x.add(&pos.to_dtype(x.dtype())?)?),
            (None, _) => Ok(x.add(&pos.to_dtype(x.dtype())?)?),
        }
    }

    /// One block on `x` with its self-attention mask and, in the decoder, the encoder's keys and
    /// values (and mask); `own` gives the self-attention's keys and values when cached.
    fn block(
        &self,
        block: &Block,
        x: &Tensor,
        self_mask: Option<&Tensor>,
        own: impl FnOnce(&Tensor) -> Result<(Tensor, Tensor)>,
        cross: Option<(&Tensor, &Tensor, &Tensor)>,
    ) -> Result<Tensor> {
        let (h, pre) = (self.config.heads, self.config.pre_norm);
        let sub = |x: &Tensor, norm: &LayerNorm, f: &dyn Fn(&Tensor) -> Result<Tensor>| -> Result<Tensor> {
            if pre {
                Ok(x.add(&f(&norm.forward(x)?)?)?)
            } else {
                norm.forward(&x.add(&f(x)?)?)
            }
        };
        let input = if pre { block.self_norm.forward(x)? } else { x.clone() };
        let (k, v) = own(&input)?;
        let attended = block.self_attn.attend(&input, &k, &v, self_mask, h)?;
        let mut x = if pre { x.add(&attended)? } else { block.self_norm.forward(&x.add(&attended)?)? };
        if let (Some((attn, norm)), Some((ck, cv, cmask))) = (&block.cross, cross) {
            x = sub(&x, norm, &|y| attn.attend(y, ck, cv, Some(cmask), h))?;
        }
        let act = self.config.act;
        sub(&x, &block.final_norm, &|y| block.fc2.forward(&act.forward(&block.fc1.forward(y)?)?))
    }

    /// Runs the stack on `tokens` (the shared table's rows of the `ids`, `[batch, seq, d]`; the
    /// ids are needed only by a stack that counts positions from them) with its
    /// `attention_mask` (int64 `[batch, seq]`, optional); the decoder attends to `encoder`'s states
    /// where its mask keeps.
    pub fn forward(
        &self,
        tokens: &Tensor,
        ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        encoder: Option<(&Tensor, Option<&Tensor>)>,
        output_hidden_states: bool,
    ) -> Result<StackOutput> {
        let (x, mut hidden_states) =
            self.blocks(tokens, ids, attention_mask, encoder, output_hidden_states)?;
        let last_hidden_state = self.final_norm(&x)?;
        if output_hidden_states {
            hidden_states.push(last_hidden_state.clone());
        }
        Ok(StackOutput { last_hidden_state, hidden_states })
    }

    /// An encoder's blocks on `tokens` (`[batch, seq, d]`, positions added here) with its
    /// `attention_mask` (int64 `[batch, seq]`: the keys each token attends to), without the final
    /// norm (see [`BartStack::final_norm`]).
    pub fn encode_before_norm(&self, tokens: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
        Ok(self.blocks(tokens, None, attention_mask, None, false)?.0)
    }

    /// The norm after the last block, where the stack has one (pre-norm stacks).
    pub fn final_norm(&self, x: &Tensor) -> Result<Tensor> {
        match &self.layer_norm {
            Some(n) => n.forward(x),
            None => Ok(x.clone()),
        }
    }

    /// The embeddings and blocks of [`BartStack::forward`]: the last block's output, and the
    /// hidden states before it.
    fn blocks(
        &self,
        tokens: &Tensor,
        ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        encoder: Option<(&Tensor, Option<&Tensor>)>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let c = &self.config;
        let (b, s) = (tokens.dims()[0], tokens.dims()[1]);
        let mut x = self.embed(tokens, ids, 0)?;
        let (dtype, device) = (x.dtype(), x.device());
        let self_mask = if c.decoder {
            Some(causal_mask(attention_mask, s, 0, s, None, dtype, device)?)
        } else {
            attention_mask.map(|m| padding_mask(m, dtype)).transpose()?
        };
        let cross_mask = match encoder {
            Some((_, Some(m))) => Some(padding_mask(m, dtype)?),
            Some((states, None)) => Some(Tensor::zeros([b, 1, 1, states.dims()[1]], (dtype, device))?),
            None => None,
        };
        let mut hidden_states = Vec::new();
        for block in &self.blocks {
            if output_hidden_states {
                hidden_states.push(x.clone());
            }
            let cross_kv = match (&block.cross, encoder) {
                (Some((attn, _)), Some((states, _))) => Some(attn.keys_values(states, c.heads)?),
                _ => None,
            };
            let cross = match (&cross_kv, &cross_mask) {
                (Some((k, v)), Some(m)) => Some((k, v, m)),
                _ => None,
            };
            x = self.block(
                block,
                &x,
                self_mask.as_ref(),
                |y| block.self_attn.keys_values(y, c.heads),
                cross,
            )?;
        }
        Ok((x, hidden_states))
    }

    /// A generation's cache over the encoder's `states` (where `states_mask` keeps).
    pub fn start_cache(&self, states: &Tensor, states_mask: Option<&Tensor>) -> Result<EncoderDecoderCache> {
        let cross = self
            .blocks
            .iter()
            .map(|block| match &block.cross {
                Some((attn, _)) => attn.keys_values(states, self.config.heads),
                None => Err(Error::Input("the encoder has no cross-attention".into())),
            })
            .collect::<Result<Vec<_>>>()?;
        EncoderDecoderCache::over_states(cross, states, states_mask)
    }

    /// The decoder on one more token per row (`tokens` `[batch, 1, d]`, the shared table's rows of
    /// `ids`) after those in `cache`, which it extends: the last hidden state `[batch, 1, d]`.
    pub fn step(
        &self,
        tokens: &Tensor,
        ids: Option<&Tensor>,
        cache: &mut EncoderDecoderCache,
    ) -> Result<Tensor> {
        let heads = self.config.heads;
        let step = cache.begin_step(tokens.dtype(), tokens.device())?;
        let mut x = self.embed(tokens, ids, step.past)?;
        for (i, block) in self.blocks.iter().enumerate() {
            let (ck, cv) = cache.cross[i].clone();
            let cmask = cache.cross_mask.clone();
            let cache_ref = &mut *cache;
            x = self.block(
                block,
                &x,
                step.mask.as_ref(),
                |y| {
                    let (k, v) = block.self_attn.keys_values(y, heads)?;
                    cache_ref.append(i, k, v)
                },
                Some((&ck, &cv, &cmask)),
            )?;
        }
        match &self.layer_norm {
            Some(n) => n.forward(&x),
            None => Ok(x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sinusoidal_rows;

    /// transformers' `MarianSinusoidalPositionalEmbedding(3, 5).create_weight()`: an odd width, the
    /// sines taking the extra column.
    #[test]
    fn sinusoidal_positions_match_marians() {
        #[rustfmt::skip]
        let want: [f32; 15] = [
            0.0, 0.0, 0.0, 1.0, 1.0,
            0.841_470_96, 0.025_116_222, 0.000_630_957_3, 0.540_302_3, 0.999_684_5,
            0.909_297_4, 0.050_216_6, 0.001_261_914_4, -0.416_146_84, 0.998_738_35,
        ];
        let got = sinusoidal_rows(0, 3, 5).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(sinusoidal_rows(1, 2, 5).unwrap().to_vec::<f32>().unwrap(), want[5..]);
        assert_eq!(got, want);
    }
}
