//! Gemma 4's mixture of experts beside a layer's dense MLP: both read the residual after
//! attention, and their normed outputs are summed before the layer's last feed-forward norm.

use oxtorch_tensor::Tensor;

use crate::error::Result;
use crate::layers::{rms_normalized, DecoderNorm, SparseMoe};

/// The mixture and its norms (`router`, `experts`, `pre_feedforward_layernorm_2`,
/// `post_feedforward_layernorm_1` and `_2`).
#[derive(Debug, Clone)]
pub(super) struct ExpertsBeside {
    /// the experts, routed by a softmax over the router's logits, the chosen weights renormalised
    /// and scaled per expert (`router.per_expert_scale`)
    pub moe: SparseMoe,
    /// `router.scale` `[hidden]`
    pub router_scale: Tensor,
    /// the norm before the experts
    pub pre_norm: DecoderNorm,
    /// the norm after the dense MLP
    pub post_norm_dense: DecoderNorm,
    /// the norm after the experts
    pub post_norm_experts: DecoderNorm,
    /// the epsilon of the router's unscaled norm
    pub eps: f64,
}

impl ExpertsBeside {
    /// The sum of the dense MLP's output `dense` and the experts', both normed, for the residual
    /// `h` `[batch, seq, hidden]` both read.
    pub fn combine(&self, h: &Tensor, dense: &Tensor) -> Result<Tensor> {
        let hidden = *h.dims().last().unwrap_or(&1) as f64;
        // The router reads the residual normed without a scale, times `scale / sqrt(hidden)`.
        let routed = rms_normalized(h, self.eps)?.mul(&self.router_scale)?.mul(hidden.powf(-0.5))?;
        let experts = self.moe.forward_routed(&routed, &self.pre_norm.forward(h)?)?;
        Ok(self.post_norm_dense.forward(dense)?.add(&self.post_norm_experts.forward(&experts)?)?)
    }
}
