//! Gemma 3n's alternating updates (AltUp): the hidden state is `n` streams `[n, batch, seq,
//! hidden]`; each layer runs on one of them (the active stream), predicted from all of them, and
//! its output corrects every stream. Each layer also has a low-rank residual beside its attention
//! (LAuReL).

use oxtorch_tensor::{DType, Tensor};

use crate::error::Result;
use crate::layers::{DecoderNorm, Linear};

/// The model-level projections into and out of the streams (`altup_projections`,
/// `altup_unembed_projections`: one per stream after the first).
#[derive(Debug, Clone)]
pub(super) struct AltUpStreams {
    /// the embeddings into streams `1..n`
    pub projections: Vec<Linear>,
    /// streams `1..n` back before they are averaged
    pub unembed: Vec<Linear>,
}

/// `x` rescaled to the RMS magnitude `target` `[..., 1]` (its own clamped at 1e-5 in mean square).
fn to_magnitude(x: &Tensor, target: &Tensor) -> Result<Tensor> {
    let own = x.square()?.mean(-1, true)?.clamp(Some(1e-5.into()), None)?.sqrt()?;
    Ok(x.mul(target)?.div(&own)?)
}

/// The RMS magnitude of `x` over its last dim, `[..., 1]`.
fn magnitude(x: &Tensor) -> Result<Tensor> {
    Ok(x.square()?.mean(-1, true)?.pow(0.5)?)
}

impl AltUpStreams {
    /// The streams `[n, batch, seq, hidden]` of the embeddings `h`: `h` itself, then each
    /// projection of it rescaled to `h`'s magnitude.
    pub fn expand(&self, h: &Tensor) -> Result<Tensor> {
        let target = magnitude(h)?;
        let mut streams = vec![h.clone()];
        for p in &self.projections {
            streams.push(to_magnitude(&p.forward(h)?, &target)?);
        }
        Ok(Tensor::stack(&streams.iter().collect::<Vec<_>>(), 0)?)
    }

    /// The hidden state `[batch, seq, hidden]` of the streams: their mean, streams `1..n`
    /// through their unembedding projections rescaled to the first stream's magnitude.
    pub fn collapse(&self, streams: &Tensor) -> Result<Tensor> {
        let first = streams.select(0, 0)?;
        let target = magnitude(&first)?;
        let mut all = vec![first];
        for (i, p) in self.unembed.iter().enumerate() {
            all.push(to_magnitude(&p.forward(&streams.select(0, (i + 1) as isize)?)?, &target)?);
        }
        Ok(Tensor::stack(&all.iter().collect::<Vec<_>>(), 0)?.mean(0, false)?)
    }
}

/// One layer's AltUp (`altup.*`) and LAuReL (`laurel.*`) weights.
#[derive(Debug, Clone)]
pub(super) struct AltUpLayer {
    /// `altup.prediction_coefs` `[n², n]`
    pub prediction_coefs: Linear,
    /// `altup.correction_coefs` `[n, n]`
    pub correction_coefs: Linear,
    /// `altup.modality_router` `[n, hidden]`
    pub router: Linear,
    /// `altup.router_norm`
    pub router_norm: DecoderNorm,
    /// `altup.correct_output_scale` `[hidden]`, applied to the active stream before the per-layer
    /// input's block when `altup_correct_scale`
    pub output_scale: Option<Tensor>,
    /// `laurel.linear_left` `[rank, hidden]`
    pub laurel_left: Linear,
    /// `laurel.linear_right` `[hidden, rank]`
    pub laurel_right: Linear,
    /// `laurel.post_laurel_norm`
    pub laurel_norm: DecoderNorm,
    /// the stream the layer runs on (`altup_active_idx`)
    pub active: usize,
}

impl AltUpLayer {
    /// The router's `tanh` weights per stream `[batch, seq, n]` of one stream `x`.
    fn modalities(&self, x: &Tensor) -> Result<Tensor> {
        let hidden = *x.dims().last().unwrap_or(&1) as f64;
        // (`router_input_scale` is a float32 scalar: it multiplies in `x`'s dtype.)
        let scale = Tensor::full([], 1.0 / hidden, (x.dtype(), x.device()))?;
        let routed = self.router.forward(&self.router_norm.forward(x)?.mul(&scale)?)?;
        Ok(routed.to_dtype(DType::F32)?.tanh()?.to_dtype(x.dtype())?)
    }

    /// The predicted streams `[n, batch, seq, hidden]` of `streams`: each plus a mix of all,
    /// weighted by coefficients the active stream routes.
    pub fn predict(&self, streams: &Tensor) -> Result<Tensor> {
        let n = streams.dims()[0];
        let m = self.modalities(&streams.select(0, self.active as isize)?)?;
        let (b, s) = (m.dims()[0], m.dims()[1]);
        let coefs = self.prediction_coefs.forward(&m)?.reshape([b, s, n, n])?.permute([0, 1, 3, 2])?;
        let mixed = streams.permute([1, 2, 3, 0])?.matmul(&coefs)?.permute([3, 0, 1, 2])?;
        Ok(mixed.add(streams)?)
    }

    /// The corrected streams: `predictions` plus, per stream, the layer's innovation
    /// (`activated` less the active prediction) weighted by `1 +` coefficients `activated` routes.
    pub fn correct(&self, predictions: &Tensor, activated: &Tensor) -> Result<Tensor> {
        let m = self.modalities(activated)?;
        let innovation = activated.sub(&predictions.select(0, self.active as isize)?)?;
        let coefs = self.correction_coefs.forward(&m)?.add(1.0)?.permute([2, 0, 1])?.unsqueeze(-1)?;
        Ok(innovation.unsqueeze(0)?.mul(&coefs)?.add(predictions)?)
    }

    /// LAuReL's residual of the normed active stream `x`: `x + norm(right(left(x)))`.
    pub fn laurel(&self, x: &Tensor) -> Result<Tensor> {
        let low = self.laurel_right.forward(&self.laurel_left.forward(x)?)?;
        Ok(x.add(&self.laurel_norm.forward(&low)?)?)
    }

    /// The corrected active stream as the per-layer input's block reads it (scaled by
    /// `correct_output_scale` where the model says so, in the scale's dtype).
    pub fn scaled_active(&self, corrected: &Tensor) -> Result<Tensor> {
        let active = corrected.select(0, self.active as isize)?;
        match &self.output_scale {
            Some(scale) => Ok(active.to_dtype(scale.dtype())?.mul(scale)?.to_dtype(active.dtype())?),
            None => Ok(active),
        }
    }
}
