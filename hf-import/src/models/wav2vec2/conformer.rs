//! Wav2Vec2-Conformer's encoder (model type `wav2vec2-conformer`:
//! facebook/wav2vec2-conformer-rope-large-960h-ft, facebook/wav2vec2-conformer-rel-pos-large):
//! Conformer blocks in place of BERT's: a half-step feed-forward, self-attention with relative
//! (Transformer-XL: sinusoidal offsets projected, learned biases `pos_bias_u`/`pos_bias_v`) or
//! rotary positions (turning the block's normed input, which the queries and keys are read from),
//! a convolution module (pointwise, GLU, depthwise, batch norm, activation, pointwise), a second
//! half-step feed-forward, a closing norm. transformers builds the positional convolution but
//! never runs it; the block norms keep `nn.LayerNorm`'s default epsilon.

use oxtorch_tensor::{DType, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::Vars;

/// `nn.LayerNorm`'s default, which the blocks' norms keep.
const EPS: f64 = 1e-5;

/// How the attention knows positions (`position_embeddings_type`).
#[derive(Debug, Clone, PartialEq)]
enum Positions {
    /// `relative`: Transformer-XL's projected sinusoids and learned biases
    Relative,
    /// `rotary`: the inverse frequencies `[head_dim / 2]` (float32; the checkpoint's buffer
    /// `embed_positions.inv_freq` where it has one, as transformers loads it, else from
    /// `rotary_embedding_base`)
    Rotary(Vec<f32>),
    /// none
    None,
}

/// A feed-forward: `output_dense(act(intermediate_dense(x)))`.
#[derive(Debug, Clone)]
struct FeedForward {
    norm: LayerNorm,
    inner: Linear,
    out: Linear,
}

impl FeedForward {
    fn load(v: &Vars<'_>, norm: &str, ff: &str, hidden: usize, intermediate: usize) -> Result<Self> {
        Ok(FeedForward {
            norm: LayerNorm::load(&v.pp(norm), hidden, EPS)?,
            inner: Linear::load(&v.pp(ff).pp("intermediate_dense"), hidden, intermediate, true)?,
            out: Linear::load(&v.pp(ff).pp("output_dense"), intermediate, hidden, true)?,
        })
    }

    /// `x + ½ · ffn(norm(x))`.
    fn half_step(&self, x: &Tensor, act: Activation) -> Result<Tensor> {
        let h = self.out.forward(&act.forward(&self.inner.forward(&self.norm.forward(x)?)?)?)?;
        Ok(h.mul(0.5)?.add(x)?)
    }
}

/// One Conformer block.
#[derive(Debug, Clone)]
struct Block {
    ffn1: FeedForward,
    attn_norm: LayerNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
    /// `linear_pos` (no bias), `pos_bias_u`, `pos_bias_v` `[heads, head_dim]` (relative positions)
    relative: Option<(Linear, Tensor, Tensor)>,
    conv_norm: LayerNorm,
    /// `[2 · hidden, hidden, 1]`, no bias
    pointwise1: Tensor,
    /// `[hidden, 1, kernel]`, no bias
    depthwise: Tensor,
    /// the batch norm's weight, bias, running mean and variance
    batch_norm: [Tensor; 4],
    /// `[hidden, hidden, 1]`, no bias
    pointwise2: Tensor,
    ffn2: FeedForward,
    final_norm: LayerNorm,
}

/// The Conformer encoder's blocks and positions (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Conformer {
    blocks: Vec<Block>,
    positions: Positions,
    heads: usize,
}

impl Conformer {
    /// `layers.{i}` under the encoder's `vars`, sized by `cfg`.
    pub(super) fn load(
        vars: &Vars<'_>,
        cfg: &Config,
        hidden: usize,
        heads: usize,
        blocks: usize,
    ) -> Result<Self> {
        let intermediate = cfg.usize_or("intermediate_size", 3072)?;
        let kernel = cfg.usize_or("conv_depthwise_kernel_size", 31)?;
        if kernel % 2 == 0 {
            return Err(Error::Config(format!(
                "conv_depthwise_kernel_size ({kernel}) must be odd, for 'SAME' padding"
            )));
        }
        // (Absent: "relative"; null or any other value: none, as transformers builds it.)
        let positions = match cfg.json().get("position_embeddings_type") {
            None => Positions::Relative,
            Some(v) => match v.as_str() {
                Some("relative") => Positions::Relative,
                Some("rotary") => {
                    let d = hidden / heads;
                    Positions::Rotary(match vars.pp("embed_positions").get_opt("inv_freq", &[d / 2])? {
                        Some(t) => {
                            t.to_dtype(DType::F32)?.to(oxtorch_tensor::Device::Cpu)?.to_vec::<f32>()?
                        }
                        None => {
                            let base = cfg.f64_or("rotary_embedding_base", 10000.0)? as f32;
                            (0..d).step_by(2).map(|k| 1.0 / base.powf(k as f32 / d as f32)).collect()
                        }
                    })
                }
                _ => Positions::None,
            },
        };
        let d = hidden / heads;
        // (Rotary turns halves of each head; the relative sinusoids pair channels of the width.)
        if matches!(positions, Positions::Rotary(_)) && !d.is_multiple_of(2) {
            return Err(Error::Config(format!("the head width ({d}) must be even for rotary positions")));
        }
        if positions == Positions::Relative && !hidden.is_multiple_of(2) {
            return Err(Error::Config(format!("hidden_size ({hidden}) must be even for relative positions")));
        }
        let blocks = (0..blocks)
            .map(|i| {
                let l = vars.pp("layers").pp(i);
                let att = l.pp("self_attn");
                let conv = l.pp("conv_module");
                let bn = conv.pp("batch_norm");
                let relative = match positions {
                    Positions::Relative => Some((
                        Linear::load(&att.pp("linear_pos"), hidden, hidden, false)?,
                        att.get("pos_bias_u", &[heads, d])?,
                        att.get("pos_bias_v", &[heads, d])?,
                    )),
                    _ => None,
                };
                Ok(Block {
                    ffn1: FeedForward::load(&l, "ffn1_layer_norm", "ffn1", hidden, intermediate)?,
                    attn_norm: LayerNorm::load(&l.pp("self_attn_layer_norm"), hidden, EPS)?,
                    q: Linear::load(&att.pp("linear_q"), hidden, hidden, true)?,
                    k: Linear::load(&att.pp("linear_k"), hidden, hidden, true)?,
                    v: Linear::load(&att.pp("linear_v"), hidden, hidden, true)?,
                    out: Linear::load(&att.pp("linear_out"), hidden, hidden, true)?,
                    relative,
                    conv_norm: LayerNorm::load(&conv.pp("layer_norm"), hidden, EPS)?,
                    pointwise1: conv.pp("pointwise_conv1").get("weight", &[2 * hidden, hidden, 1])?,
                    depthwise: conv.pp("depthwise_conv").get("weight", &[hidden, 1, kernel])?,
                    batch_norm: [
                        bn.get("weight", &[hidden])?,
                        bn.get("bias", &[hidden])?,
                        bn.get("running_mean", &[hidden])?,
                        bn.get("running_var", &[hidden])?,
                    ],
                    pointwise2: conv.pp("pointwise_conv2").get("weight", &[hidden, hidden, 1])?,
                    ffn2: FeedForward::load(&l, "ffn2_layer_norm", "ffn2", hidden, intermediate)?,
                    final_norm: LayerNorm::load(&l.pp("final_layer_norm"), hidden, EPS)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Conformer { blocks, positions, heads })
    }

    /// The blocks over `h` `[batch, frames, hidden]` with the additive padding `mask`, each block's
    /// input pushed to `hidden_states` when `keep` (before the encoder's closing norm).
    pub(super) fn forward(
        &self,
        mut h: Tensor,
        mask: &Tensor,
        act: Activation,
        keep: bool,
        hidden_states: &mut Vec<Tensor>,
    ) -> Result<Tensor> {
        let (frames, hidden) = (h.dims()[1], h.dims()[2]);
        let d = hidden / self.heads;
        let dtype = h.dtype();
        let device = h.device();
        let table = match &self.positions {
            Positions::Relative => Some(relative_sinusoids(frames, hidden)?.to_dtype(dtype)?.to(device)?),
            Positions::Rotary(inv) => Some(rotary_table(frames, d, inv)?.to_dtype(dtype)?.to(device)?),
            Positions::None => None,
        };
        for block in &self.blocks {
            if keep {
                hidden_states.push(h.clone());
            }
            h = self.block(block, &h, mask, table.as_ref(), act)?;
        }
        // (Without blocks transformers records no hidden states.)
        if keep && !self.blocks.is_empty() {
            hidden_states.push(h.clone());
        }
        Ok(h)
    }

    fn block(
        &self,
        b: &Block,
        x: &Tensor,
        mask: &Tensor,
        table: Option<&Tensor>,
        act: Activation,
    ) -> Result<Tensor> {
        let (batch, t, hidden) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let (heads, d) = (self.heads, hidden / self.heads);
        let x = b.ffn1.half_step(x, act)?;
        // Self-attention.
        let normed = b.attn_norm.forward(&x)?;
        let qk_input = match (&self.positions, table) {
            (Positions::Rotary(_), Some(cs)) => rotate(&normed, cs, heads)?,
            _ => normed.clone(),
        };
        let split = |y: Tensor| -> Result<Tensor> { Ok(y.reshape([batch, t, heads, d])?.transpose(1, 2)?) };
        let (q, k, v) =
            (split(b.q.forward(&qk_input)?)?, split(b.k.forward(&qk_input)?)?, split(b.v.forward(&normed)?)?);
        let scale = 1.0 / (d as f64).sqrt();
        let (q, bias) = match (&b.relative, table) {
            (Some((linear_pos, u, bv)), Some(pe)) => {
                // `[1, heads, d, 2t − 1]` projected offsets (from t − 1 down to −(t − 1)).
                let p = linear_pos.forward(pe)?.reshape([1, 2 * t - 1, heads, d])?.permute([0, 2, 3, 1])?;
                let scores = q.add(&bv.reshape([1, heads, 1, d])?)?.matmul(&p)?;
                // Transformer-XL's shift: query i reads offset i − j.
                let shifted = scores
                    .pad(&[1, 0], "constant", None)?
                    .reshape([batch, heads, 2 * t, t])?
                    .narrow(2, 1, 2 * t - 1)?
                    .reshape([batch, heads, t, 2 * t - 1])?
                    .narrow(3, 0, t)?
                    .mul(scale)?;
                (q.add(&u.reshape([1, heads, 1, d])?)?, Some(shifted))
            }
            _ => (q, None),
        };
        let mask = match bias {
            Some(bias) => bias.add(mask)?,
            None => mask.clone(),
        };
        let ctx = eager_attention(&q, &k, &v, Some(&mask), scale, None)?;
        let x = b.out.forward(&ctx.transpose(1, 2)?.reshape([batch, t, hidden])?)?.add(&x)?;
        // The convolution module.
        let c = b.conv_norm.forward(&x)?.transpose(1, 2)?;
        let c = c.conv1d(&b.pointwise1, None, &[1], 0, &[1], 1)?;
        let (a, gate) = (c.narrow(1, 0, hidden)?, c.narrow(1, hidden as isize, hidden)?);
        let c = a.mul(&gate.sigmoid()?)?;
        let kernel = b.depthwise.dims()[2];
        let c = c.conv1d(&b.depthwise, None, &[1], (kernel - 1) / 2, &[1], hidden)?;
        let [w, bias, mean, var] = &b.batch_norm;
        let c =
            act.forward(&c.batch_norm(Some(mean), Some(var), Some(w), Some(bias), false, 0.1, 1e-5)?)?;
        let c = c.conv1d(&b.pointwise2, None, &[1], 0, &[1], 1)?.transpose(1, 2)?;
        let x = x.add(&c)?;
        let x = b.ffn2.half_step(&x, act)?;
        b.final_norm.forward(&x)
    }
}

/// The sinusoids of the offsets `t − 1, …, −(t − 1)` `[1, 2t − 1, hidden]` (sines at even
/// channels, cosines at odd), in float32 as transformers computes them.
fn relative_sinusoids(t: usize, hidden: usize) -> Result<Tensor> {
    let scale = -(10000f64.ln() / hidden as f64) as f32;
    let div: Vec<f32> = (0..hidden).step_by(2).map(|k| (k as f32 * scale).exp()).collect();
    let mut pe = Vec::with_capacity((2 * t - 1) * hidden);
    for p in 0..2 * t - 1 {
        let pos = t as i64 - 1 - p as i64;
        // (transformers computes the negative side as sin(−1 · position · div), the same values.)
        let (sign, magnitude) = (pos.signum() as f32, pos.unsigned_abs() as f32);
        for (c, _) in (0..hidden).enumerate() {
            let angle = magnitude * div[c / 2];
            pe.push(if c % 2 == 0 { sign * angle.sin() } else { angle.cos() });
        }
    }
    Ok(Tensor::from_vec(pe, [1, 2 * t - 1, hidden])?)
}

/// Rotary cosines and sines `[2, t, d]` of positions `0..t` over a head of width `d` with inverse
/// frequencies `inv`.
fn rotary_table(t: usize, d: usize, inv: &[f32]) -> Result<Tensor> {
    let (mut cos, mut sin) = (Vec::with_capacity(t * d), Vec::with_capacity(t * d));
    for p in 0..t {
        for c in 0..d {
            let angle = p as f32 * inv[c % (d / 2)];
            cos.push(angle.cos());
            sin.push(angle.sin());
        }
    }
    let cos = Tensor::from_vec(cos, [1, t, d])?;
    let sin = Tensor::from_vec(sin, [1, t, d])?;
    Ok(Tensor::cat(&[&cos, &sin], 0)?.to_dtype(DType::F32)?)
}

/// `x` `[batch, t, heads · d]` turned by the rotary table `[2, t, d]` per head (the halves of
/// each head rotated as `(−x₂, x₁)`).
fn rotate(x: &Tensor, table: &Tensor, heads: usize) -> Result<Tensor> {
    let (b, t, hidden) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    let d = hidden / heads;
    let x = x.reshape([b, t, heads, d])?;
    let cos = table.narrow(0, 0, 1)?.reshape([1, t, 1, d])?;
    let sin = table.narrow(0, 1, 1)?.reshape([1, t, 1, d])?;
    let (x1, x2) = (x.narrow(3, 0, d / 2)?, x.narrow(3, (d / 2) as isize, d / 2)?);
    let rotated = Tensor::cat(&[&x2.neg()?, &x1], 3)?;
    Ok(x.mul(&cos)?.add(&rotated.mul(&sin)?)?.reshape([b, t, hidden])?)
}
