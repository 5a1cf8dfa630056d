//! The pre-norm encoder block of ViT- and CLIP-style towers:
//! `x = x + attn(norm1(x)); x = x + fc2(act(fc1(norm2(x))))`.

use oxtorch_tensor::Tensor;

use super::{eager_attention, Activation, LayerNorm, Linear};
use crate::error::Result;

/// One pre-norm encoder block with multi-head self-attention (bidirectional, or as `mask` says).
#[derive(Debug, Clone)]
pub struct PreNormEncoderLayer {
    /// norm before attention (ViT's `layernorm_before`, CLIP's `layer_norm1`)
    pub norm1: LayerNorm,
    /// query projection
    pub query: Linear,
    /// key projection
    pub key: Linear,
    /// value projection
    pub value: Linear,
    /// attention output projection
    pub attn_out: Linear,
    /// norm before the MLP (ViT's `layernorm_after`, CLIP's `layer_norm2`)
    pub norm2: LayerNorm,
    /// MLP expansion
    pub fc1: Linear,
    /// MLP projection back
    pub fc2: Linear,
}

impl PreNormEncoderLayer {
    /// `x` `[batch, seq, hidden]`, with an additive `mask` broadcast against the scores
    /// `[batch, heads, seq, seq]` (none: every token sees every token).
    pub fn forward(
        &self,
        x: &Tensor,
        mask: Option<&Tensor>,
        heads: usize,
        act: Activation,
    ) -> Result<Tensor> {
        let (b, s, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / heads;
        let normed = self.norm1.forward(x)?;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([b, s, heads, d])?.transpose(1, 2)?) };
        let q = split(self.query.forward(&normed)?)?;
        let k = split(self.key.forward(&normed)?)?;
        let v = split(self.value.forward(&normed)?)?;
        let ctx = eager_attention(&q, &k, &v, mask, 1.0 / (d as f64).sqrt(), None)?;
        let ctx = ctx.transpose(1, 2)?.reshape([b, s, h])?;
        let x = self.attn_out.forward(&ctx)?.add(x)?;
        let inner = act.forward(&self.fc1.forward(&self.norm2.forward(&x)?)?)?;
        Ok(self.fc2.forward(&inner)?.add(&x)?)
    }
}
