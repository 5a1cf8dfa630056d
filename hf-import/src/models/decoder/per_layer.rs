//! Gemma 4's and Gemma 3n's per-layer embeddings: every layer gets an input of its own, made once
//! from the tokens and their embeddings, which a small gated block adds to that layer's output
//! (Gemma 3n: to its streams but the first).

use oxtorch_tensor::Tensor;

use crate::error::Result;
use crate::layers::{Activation, DecoderNorm, Embedding, Linear};

/// The per-layer inputs of a forward: `(context + tokens) / sqrt(2)`, where `tokens` are rows of
/// `embed_tokens_per_layer` scaled by `sqrt(width)` and `context` is
/// `per_layer_projection_norm(per_layer_model_projection(embeddings) / sqrt(hidden))`, both
/// `[batch, seq, layers, width]`.
#[derive(Debug, Clone)]
pub(super) struct PerLayerInputs {
    /// `embed_tokens_per_layer` `[vocab, layers · width]`
    pub embed: Embedding,
    /// `per_layer_model_projection` `[layers · width, hidden]`
    pub projection: Linear,
    /// `per_layer_projection_norm` `[width]`
    pub norm: DecoderNorm,
    /// the number of layers
    pub layers: usize,
    /// each layer's input width
    pub width: usize,
    /// ids outside the table read its row 0 (see [`super::PerLayerInputsSpec::clamp_ids`])
    pub clamp_ids: bool,
}

impl PerLayerInputs {
    /// The inputs `[batch, seq, layers, width]` of the tokens `ids` `[batch, seq]` whose (scaled)
    /// embeddings are `embeds` `[batch, seq, hidden]`.
    pub fn forward(&self, ids: &Tensor, embeds: &Tensor) -> Result<Tensor> {
        let (b, s, hidden) = (embeds.dims()[0], embeds.dims()[1], embeds.dims()[2]);
        let shape = [b, s, self.layers, self.width];
        // (The table's scale rounded to its dtype, as `Gemma4TextScaledWordEmbedding` applies it.)
        let scale = Tensor::full([], (self.width as f64).sqrt(), (embeds.dtype(), embeds.device()))?;
        let ids = if self.clamp_ids {
            let rows = self.embed.weight.dims()[0] as i64;
            let inside = ids.ge(0)?.logical_and(&ids.lt(rows)?)?;
            Tensor::where_cond(&inside, ids, &ids.zeros_like()?)?
        } else {
            ids.clone()
        };
        let tokens = self.embed.forward(&ids)?.mul(&scale)?.reshape(shape)?;
        let context = self.projection.forward(embeds)?.mul((hidden as f64).powf(-0.5))?.reshape(shape)?;
        let context = self.norm.forward(&context)?;
        Ok(context.add(&tokens)?.mul(0.5f64.sqrt())?)
    }
}

/// A layer's use of its input: `h + norm(projection(act(gate(h)) · input))`
/// (`per_layer_input_gate`, `per_layer_projection`, `post_per_layer_input_norm`).
#[derive(Debug, Clone)]
pub(super) struct PerLayerBlock {
    /// `per_layer_input_gate` `[width, hidden]`
    pub gate: Linear,
    /// `per_layer_projection` `[hidden, width]`
    pub projection: Linear,
    /// `post_per_layer_input_norm` `[hidden]`
    pub norm: DecoderNorm,
    /// the model's activation
    pub act: Activation,
}

impl PerLayerBlock {
    /// `h` `[batch, seq, hidden]` with the layer's `input` `[batch, seq, width]` added.
    pub fn forward(&self, h: &Tensor, input: &Tensor) -> Result<Tensor> {
        Ok(h.add(&self.delta(h, input)?)?)
    }

    /// What the block adds to `h`: `norm(projection(act(gate(h)) · input))`.
    pub fn delta(&self, h: &Tensor, input: &Tensor) -> Result<Tensor> {
        let gated = self.act.forward(&self.gate.forward(h)?)?.mul(input)?;
        self.norm.forward(&self.projection.forward(&gated)?)
    }
}
