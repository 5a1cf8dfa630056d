//! The feed-forward block of a decoder layer: dense ([`GatedMlp`]) or a sparse mixture of experts
//! (Mixtral, Qwen2-MoE, Qwen3-MoE), whose router sends each token to its `top_k` experts.

use oxtorch_tensor::{DType, Device, Tensor};

use super::{Activation, Arena, GatedMlp, Linear};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// A decoder layer's feed-forward block.
#[derive(Debug, Clone)]
pub enum FeedForward {
    /// one gated (or plain) MLP
    Dense(GatedMlp),
    /// a mixture of experts
    Sparse(SparseMoe),
}

impl FeedForward {
    /// The matrices the CPU's packed buffer holds (a mixture keeps its own).
    pub fn matrices(&self) -> Vec<&Tensor> {
        match self {
            FeedForward::Dense(m) => m.matrices(),
            FeedForward::Sparse(_) => Vec::new(),
        }
    }

    /// Takes the matrices back from `arena` (see [`GatedMlp::unpack`]).
    pub fn unpack(&mut self, arena: &mut Arena) -> Result<()> {
        match self {
            FeedForward::Dense(m) => m.unpack(arena),
            FeedForward::Sparse(_) => Ok(()),
        }
    }

    /// The block on `x` `[..., hidden]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            FeedForward::Dense(m) => m.forward(x),
            FeedForward::Sparse(m) => m.forward(x),
        }
    }
}

/// How a mixture weighs its experts' outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routing {
    /// experts per token
    pub top_k: usize,
    /// the chosen probabilities rescaled to sum to one (Mixtral always; Qwen3-MoE with
    /// `norm_topk_prob`)
    pub normalize: bool,
    /// the weights rounded to the model dtype before they scale the experts' outputs (Qwen3-MoE);
    /// else the product is taken in float32 and rounded once (Mixtral)
    pub round_weights: bool,
}

/// A sparse mixture of experts: `gate` (the router, no bias) scores the experts, a softmax in
/// float32 gives their probabilities, each token runs through its `top_k` most probable experts
/// (gated MLPs `experts.{j}.{gate,up,down}_proj`) and gets their outputs weighted by those
/// probabilities, summed in the experts' order.
#[derive(Debug, Clone)]
pub struct SparseMoe {
    router: Linear,
    experts: Vec<GatedMlp>,
    routing: Routing,
    /// Qwen2-MoE's `shared_expert`, which every token runs, scaled by
    /// `sigmoid(shared_expert_gate(x))`
    shared: Option<(GatedMlp, Linear)>,
}

impl SparseMoe {
    /// Loads `vars.gate` and the experts: `vars.experts.{0..experts}.{gate,up,down}_proj` as
    /// checkpoints store them, or transformers 5's fused `vars.experts.gate_up_proj`
    /// `[experts, 2 · intermediate, hidden]` and `vars.experts.down_proj`
    /// `[experts, hidden, intermediate]` (what its in-memory state dict holds).
    pub fn load(
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        experts: usize,
        routing: Routing,
        act: Activation,
    ) -> Result<Self> {
        if routing.top_k == 0 || routing.top_k > experts {
            return Err(Error::Config(format!(
                "num_experts_per_tok ({}) must be between 1 and the number of experts ({experts})",
                routing.top_k
            )));
        }
        let router = Linear::load(&vars.pp("gate"), hidden, experts, false)?;
        let all = vars.pp("experts");
        let experts = if all.contains("gate_up_proj") {
            let fused = intermediate.checked_mul(2).ok_or_else(|| {
                Error::Config(format!("the experts' intermediate size ({intermediate}) is too large"))
            })?;
            let gate_up = all.get("gate_up_proj", &[experts, fused, hidden])?;
            let down = all.get("down_proj", &[experts, hidden, intermediate])?;
            (0..experts)
                .map(|j| {
                    let part = |t: &Tensor| -> Result<Tensor> { Ok(t.select(0, j as isize)?.contiguous()?) };
                    Ok(GatedMlp::from_fused(part(&gate_up)?, part(&down)?, act))
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            (0..experts)
                .map(|j| GatedMlp::load(&all.pp(j), hidden, intermediate, act, false))
                .collect::<Result<Vec<_>>>()?
        };
        Ok(SparseMoe { router, experts, routing, shared: None })
    }

    /// Adds Qwen2-MoE's shared expert: `vars.shared_expert.{gate,up,down}_proj` of
    /// `intermediate` and `vars.shared_expert_gate` `[1, hidden]`.
    pub fn with_shared_expert(
        mut self,
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
    ) -> Result<Self> {
        let expert = GatedMlp::load(&vars.pp("shared_expert"), hidden, intermediate, act, false)?;
        let gate = Linear::load(&vars.pp("shared_expert_gate"), hidden, 1, false)?;
        self.shared = Some((expert, gate));
        Ok(self)
    }

    /// The block on `x` `[..., hidden]`. The routing is read back to the host, which groups the
    /// tokens of each expert.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims().to_vec();
        let hidden = *dims.last().unwrap_or(&0);
        let tokens = x.numel().checked_div(hidden).unwrap_or(0);
        let (dtype, device) = (x.dtype(), x.device());
        let flat = x.reshape([tokens, hidden])?;
        let n = self.experts.len();
        let probs = self.router.forward(&flat)?.to_dtype(DType::F32)?.softmax(-1, None)?;
        let probs = probs.to(Device::Cpu)?.contiguous()?.to_vec::<f32>()?;
        // Each expert's tokens and their weights, in token order.
        let mut rows: Vec<Vec<i64>> = vec![Vec::new(); n];
        let mut weights: Vec<Vec<f32>> = vec![Vec::new(); n];
        let k = self.routing.top_k;
        for (t, p) in probs.chunks(n.max(1)).enumerate().take(tokens) {
            let mut order: Vec<usize> = (0..n).collect();
            // (Stable: ties go to the lower index.)
            order.sort_by(|&a, &b| p[b].total_cmp(&p[a]));
            let chosen = &order[..k];
            let sum: f32 = chosen.iter().map(|&e| p[e]).sum();
            for &e in chosen {
                rows[e].push(t as i64);
                weights[e].push(if self.routing.normalize { p[e] / sum } else { p[e] });
            }
        }
        let mut out = Tensor::zeros([tokens, hidden], (dtype, device))?;
        for (e, expert) in self.experts.iter().enumerate() {
            if rows[e].is_empty() {
                continue;
            }
            let m = rows[e].len();
            let index = Tensor::from_vec(std::mem::take(&mut rows[e]), [m])?.to(device)?;
            let y = expert.forward(&flat.index_select(0, &index)?)?;
            let w = Tensor::from_vec(std::mem::take(&mut weights[e]), [m, 1])?.to(device)?;
            let y = if self.routing.round_weights {
                y.mul(&w.to_dtype(dtype)?)?
            } else {
                y.to_dtype(DType::F32)?.mul(&w)?.to_dtype(dtype)?
            };
            out = out.index_add(0, &index, &y, 1.0)?;
        }
        if let Some((expert, gate)) = &self.shared {
            let scale = gate.forward(&flat)?.sigmoid()?;
            out = out.add(&expert.forward(&flat)?.mul(&scale)?)?;
        }
        Ok(out.reshape(dims)?)
    }
}
