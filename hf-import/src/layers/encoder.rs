//! The encoder block of BERT-style models, post-norm as BERT's
//! (`x = norm(x + attn(x)); x = norm(x + out(act(inner(x))))`) or pre-norm as RoBERTa-PreLayerNorm's,
//! XLM-R XL's and Megatron-BERT's (`x = x + attn(norm(x)); x = x + out(act(inner(norm(x))))`).

use oxtorch_tensor::Tensor;

use super::{attend_rows, eager_attention, Activation, LayerNorm, Linear};
use crate::error::Result;

/// One encoder block with bidirectional multi-head attention, its norms after each residual
/// (BERT's) or before each branch (`pre_norm`).
#[derive(Debug, Clone)]
pub struct EncoderLayer {
    /// query projection
    pub query: Linear,
    /// key projection
    pub key: Linear,
    /// value projection
    pub value: Linear,
    /// attention output projection
    pub attn_out: Linear,
    /// norm closing the attention branch (with `pre_norm`: opening it)
    pub attn_norm: LayerNorm,
    /// MLP expansion
    pub inner: Linear,
    /// MLP projection back
    pub out: Linear,
    /// norm closing the MLP branch (with `pre_norm`: opening it)
    pub out_norm: LayerNorm,
    /// whether the norms open their branches (their residuals left unnormed) rather than close them
    pub pre_norm: bool,
}

impl EncoderLayer {
    /// `x` `[batch, seq, hidden]` with the additive `mask` `[batch, 1, 1, seq]` (or, with MPNet's
    /// relative-position bias, `[batch, heads, seq, seq]`).
    pub fn forward(&self, x: &Tensor, mask: &Tensor, heads: usize, act: Activation) -> Result<Tensor> {
        self.forward_masked_by(x, heads, act, |_| Ok(mask.clone()))
    }

    /// [`EncoderLayer::forward`] with the additive mask that `mask_of` makes of the attention's
    /// input (the block's input, normed first with `pre_norm`): WavLM's position bias, gated by it.
    pub fn forward_masked_by(
        &self,
        x: &Tensor,
        heads: usize,
        act: Activation,
        mask_of: impl FnOnce(&Tensor) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let (b, s, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / heads;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([b, s, heads, d])?.transpose(1, 2)?) };
        let input = self.attention_input(x)?;
        let mask = mask_of(&input)?;
        let q = split(self.query.forward(&input)?)?;
        let k = split(self.key.forward(&input)?)?;
        let v = split(self.value.forward(&input)?)?;
        let ctx = eager_attention(&q, &k, &v, Some(&mask), 1.0 / (d as f64).sqrt(), None)?;
        let ctx = ctx.transpose(1, 2)?.reshape([b, s, h])?;
        self.after_attention(&ctx, x, act)
    }

    /// [`EncoderLayer::forward`] of several sequences' tokens packed into one `x` `[tokens, hidden]`,
    /// without padding: `rows` gives each sequence's `(first token, token count)` in `x`. The
    /// projections and the MLP run once over all tokens; attention runs per sequence, over its own
    /// tokens (as a padding mask would have it, without the masked keys), with `biases[row]` (an
    /// additive `[1, heads, count, count]`, MPNet's relative positions) when given.
    pub fn forward_packed(
        &self,
        x: &Tensor,
        rows: &[(usize, usize)],
        biases: Option<&[Tensor]>,
        heads: usize,
        act: Activation,
    ) -> Result<Tensor> {
        let (tokens, h) = (x.dims()[0], x.dims()[1]);
        let d = h / heads;
        // `[1, heads, tokens, head_dim]` views of the projections.
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([1, tokens, heads, d])?.transpose(1, 2)?) };
        let input = self.attention_input(x)?;
        let (q, k, v) = (
            split(self.query.forward(&input)?)?,
            split(self.key.forward(&input)?)?,
            split(self.value.forward(&input)?)?,
        );
        let scale = 1.0 / (d as f64).sqrt();
        let ctx = attend_rows(&q, &k, &v, rows, biases, scale, None)?.reshape([tokens, h])?;
        self.after_attention(&ctx, x, act)
    }

    /// What the attention projections read: the block's input `x`, normed first with `pre_norm`.
    fn attention_input(&self, x: &Tensor) -> Result<Tensor> {
        match self.pre_norm {
            true => self.attn_norm.forward(x),
            false => Ok(x.clone()),
        }
    }

    /// The block after its attention: the output projection of the attention context `ctx`
    /// `[batch, seq, hidden]` added to the block's input `x` (and normed), then the MLP with its
    /// residual (and norm) — the norms after the residuals, or with `pre_norm` the MLP's before
    /// its branch (for families whose attention scores differ from BERT's: DeBERTa).
    pub(crate) fn after_attention(&self, ctx: &Tensor, x: &Tensor, act: Activation) -> Result<Tensor> {
        let x = self.attn_out.forward(ctx)?.add(x)?;
        if self.pre_norm {
            let inner = act.forward(&self.inner.forward(&self.out_norm.forward(&x)?)?)?;
            return Ok(self.out.forward(&inner)?.add(&x)?);
        }
        let x = self.attn_norm.forward(&x)?;
        let inner = act.forward(&self.inner.forward(&x)?)?;
        self.out_norm.forward(&self.out.forward(&inner)?.add(&x)?)
    }
}
