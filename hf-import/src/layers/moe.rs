//! The feed-forward block of a decoder layer: dense ([`GatedMlp`]) or a sparse mixture of experts
//! (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3), whose router sends each token to its `top_k`
//! experts.

use std::cmp::Ordering;

use oxtorch_tensor::{DType, Device, Tensor};

use super::{Activation, Arena, DecoderNorm, GatedMlp, Glu, Linear};
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

/// How a router scores the experts and which it may choose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scoring {
    /// A softmax in float32 over the router's logits (computed in the model dtype); any expert.
    Softmax,
    /// gpt-oss: the `top_k` largest logits chosen, weighted by a softmax over those alone.
    SoftmaxOfTopK,
    /// DeepSeek-V2: the router in float32, a softmax; with `groups` `(n, k)` (`topk_method:
    /// "group_limited_greedy"`), the experts split into `n` groups and only those of the `k` groups
    /// with the best single scores may be chosen (the others score 0).
    DeepseekV2 {
        /// `(n_group, topk_group)` under group-limited routing
        groups: Option<(usize, usize)>,
    },
    /// ERNIE 4.5 MoE: the router in float32, a softmax; experts chosen by probability plus the
    /// router's `moe_statics.e_score_correction_bias`, weighted by their unbiased probabilities
    /// renormalised (the sum at least 1e-12, `moe_norm_min`'s default).
    BiasedSoftmax,
    /// DeepSeek-V3: the router in float32, sigmoid scores; experts are chosen by score plus the
    /// router's `e_score_correction_bias`, among the `top_groups` of `groups` groups whose two best
    /// biased scores sum highest, and weighted by their unbiased scores.
    DeepseekV3 {
        /// `n_group`
        groups: usize,
        /// `topk_group`
        top_groups: usize,
    },
    /// PhiMoE's sparsemixer (at inference): always two experts. The best logit's expert, weighed by
    /// a softmax over the logits within `2 · jitter_eps` of it (relative to the larger of each
    /// logit's size and the best); then the best of the others, weighed likewise against its own
    /// logit with the first expert left out. Computed in the model's dtype, not renormalised.
    SparseMixer {
        /// `router_jitter_noise`
        jitter_eps: f64,
    },
    /// LFM2-MoE: sigmoid scores of the router's logits (both in the model dtype); with `biased`
    /// (`use_expert_bias`), experts chosen by score plus the block's `expert_bias`, weighted by
    /// their unbiased scores; renormalised over `sum + 1e-6`.
    Sigmoid {
        /// `use_expert_bias`
        biased: bool,
    },
    /// Laguna and AFMoE: the router's logits in the model dtype, then in float32 soft-capped
    /// (`tanh(l / c) · c`, Laguna's `moe_router_logit_softcapping`) when `softcap` is given, and
    /// their sigmoid; experts chosen by score plus the router's `e_score_correction_bias`, weighted
    /// by their unbiased scores (renormalised over `sum + 1e-20`).
    BiasedSigmoid {
        /// the soft cap `c`
        softcap: Option<f64>,
    },
    /// Kolibri-1: the router in float32; experts chosen by logit plus `gate.e_score_correction_bias`,
    /// weighted by their logits' sigmoids (renormalised with `normalize`, no epsilon).
    LogitBiasedSigmoid,
    /// Flint: the router in float32 (its weight kept so), sigmoid scores, the `top_k` best
    /// weighted by them (renormalised with `normalize`).
    Float32Sigmoid,
    /// Mistral 4: a softmax of the router's logits (rounded to the model dtype); experts chosen
    /// among the `top_groups` of `groups` groups whose two best scores sum highest (the others'
    /// scores 0), weighted by their scores (renormalised over `sum + 1e-20`).
    GroupedSoftmax {
        /// `n_group`
        groups: usize,
        /// `topk_group`
        top_groups: usize,
    },
    /// Llama 4: the `top_k` largest logits (in the model dtype) chosen, each weighted by its
    /// sigmoid (in float32, rounded to the model dtype), the weight scaling the expert's input
    /// rather than its output.
    SigmoidOnInputs,
}

/// How a mixture weighs its experts' outputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Routing {
    /// experts per token
    pub top_k: usize,
    /// the chosen probabilities rescaled to sum to one (Mixtral always; Qwen3-MoE with
    /// `norm_topk_prob`)
    pub normalize: bool,
    /// the weights rounded to the model dtype before they scale the experts' outputs (Qwen3-MoE);
    /// else the product is taken in float32 and rounded once (Mixtral)
    pub round_weights: bool,
    /// how the router scores the experts
    pub scoring: Scoring,
    /// the chosen weights are multiplied by this (DeepSeek's `routed_scaling_factor`)
    pub scale: f64,
}

impl Routing {
    /// Softmax routing to `top_k` experts, unscaled.
    pub fn softmax(top_k: usize, normalize: bool, round_weights: bool) -> Self {
        Routing { top_k, normalize, round_weights, scoring: Scoring::Softmax, scale: 1.0 }
    }

    /// The experts token scores `p` (biased by `bias` for the choice, DeepSeek-V3) choose and
    /// their weights, in order of choice.
    fn choose(&self, p: &[f32], bias: Option<&[f32]>, dtype: DType) -> Vec<(usize, f32)> {
        if let Scoring::SparseMixer { jitter_eps } = self.scoring {
            return sparse_mixer(p, jitter_eps, dtype);
        }
        let n = p.len();
        let mut choice: Vec<f32> = match bias {
            Some(b) => p.iter().zip(b).map(|(s, b)| s + b).collect(),
            None => p.to_vec(),
        };
        // The groups a token may choose from, as the family's router picks them.
        let (groups, top_groups, hidden) = match self.scoring {
            Scoring::Softmax
            | Scoring::SoftmaxOfTopK
            | Scoring::SparseMixer { .. }
            | Scoring::BiasedSoftmax
            | Scoring::Sigmoid { .. }
            | Scoring::BiasedSigmoid { .. }
            | Scoring::SigmoidOnInputs
            | Scoring::Float32Sigmoid
            | Scoring::LogitBiasedSigmoid
            | Scoring::DeepseekV2 { groups: None } => (1, 1, 0.0),
            Scoring::DeepseekV2 { groups: Some((g, k)) } => (g, k, 0.0),
            Scoring::DeepseekV3 { groups, top_groups } => (groups, top_groups, f32::NEG_INFINITY),
            Scoring::GroupedSoftmax { groups, top_groups } => (groups, top_groups, 0.0),
        };
        if groups > 1 {
            let size = n / groups;
            let group_score = |g: &[f32]| -> f32 {
                match self.scoring {
                    // The sum of its two best (DeepSeek-V3, Mistral 4), else its best.
                    Scoring::DeepseekV3 { .. } | Scoring::GroupedSoftmax { .. } => {
                        let mut best = g.to_vec();
                        best.sort_by(|a, b| b.total_cmp(a));
                        best.iter().take(2).sum()
                    }
                    _ => g.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                }
            };
            let scores: Vec<f32> = choice.chunks(size).map(group_score).collect();
            let kept = top_indices(&scores, top_groups);
            for (g, chunk) in choice.chunks_mut(size).enumerate() {
                if !kept.contains(&g) {
                    chunk.fill(hidden);
                }
            }
        }
        let chosen = top_indices(&choice, self.top_k);
        if self.scoring == Scoring::LogitBiasedSigmoid {
            // (`p` holds the logits.)
            let sigmoid = |e: usize| 1.0 / (1.0 + (-p[e]).exp());
            let sum: f32 = chosen.iter().map(|&e| sigmoid(e)).sum();
            return chosen
                .into_iter()
                .map(|e| (e, if self.normalize { sigmoid(e) / sum } else { sigmoid(e) }))
                .collect();
        }
        if self.scoring == Scoring::SigmoidOnInputs {
            // (`p` holds the logits.)
            return chosen.into_iter().map(|e| (e, 1.0 / (1.0 + (-p[e]).exp()))).collect();
        }
        if self.scoring == Scoring::SoftmaxOfTopK {
            // (`p` holds the logits; the first chosen is the largest.)
            let top = chosen.first().map_or(0.0, |&e| p[e]);
            let exp: Vec<f32> = chosen.iter().map(|&e| (p[e] - top).exp()).collect();
            let sum: f32 = exp.iter().sum();
            return chosen.into_iter().zip(exp).map(|(e, x)| (e, x / sum)).collect();
        }
        // DeepSeek-V2 weighs by the masked scores, V3 (and Mistral 4) by the unbiased ones.
        let unmasked = bias.is_some() || matches!(self.scoring, Scoring::GroupedSoftmax { .. });
        let weight = |e: usize| if unmasked { p[e] } else { choice[e] };
        let sum: f32 = chosen.iter().map(|&e| weight(e)).sum();
        let denominator = match self.scoring {
            Scoring::DeepseekV3 { .. } | Scoring::BiasedSigmoid { .. } | Scoring::GroupedSoftmax { .. } => {
                sum + 1e-20
            }
            Scoring::Sigmoid { .. } => sum + 1e-6,
            Scoring::BiasedSoftmax => sum.max(1e-12),
            _ => sum,
        };
        chosen
            .into_iter()
            .map(|e| {
                let w = if self.normalize { weight(e) / denominator } else { weight(e) };
                (e, if self.scale == 1.0 { w } else { w * self.scale as f32 })
            })
            .collect()
    }
}

/// PhiMoE's sparsemixer on one token's router `logits` (see [`Scoring::SparseMixer`]), its
/// arithmetic rounded to `dtype` as transformers computes it in the model's dtype.
fn sparse_mixer(logits: &[f32], jitter_eps: f64, dtype: DType) -> Vec<(usize, f32)> {
    let round = |x: f32| match dtype {
        DType::BF16 => half::bf16::from_f32(x).to_f32(),
        DType::F16 => half::f16::from_f32(x).to_f32(),
        _ => x,
    };
    let threshold = round((2.0 * jitter_eps) as f32);
    // The best expert other than `excluded` (the first of equals) and its weight: a softmax over the
    // experts near it, of which it is the largest.
    let pick = |excluded: Option<usize>| -> (usize, f32) {
        let candidates = (0..logits.len()).filter(|&i| Some(i) != excluded);
        let best = candidates.clone().fold(None, |best: Option<usize>, i| match best {
            Some(b) if logits[i].partial_cmp(&logits[b]) != Some(Ordering::Greater) => Some(b),
            _ => Some(i),
        });
        let Some(best) = best else { return (0, 0.0) };
        let top = logits[best];
        // (A NaN distance, 0 / 0, keeps the expert, as the comparison does in torch.)
        let near = |i: usize| {
            let distance = round(round(top - logits[i]) / logits[i].abs().max(top));
            distance.partial_cmp(&threshold) != Some(Ordering::Greater)
        };
        let sum: f32 = candidates.filter(|&i| near(i)).map(|i| (logits[i] - top).exp()).sum();
        (best, round(1.0 / sum))
    };
    let first = pick(None);
    vec![first, pick(Some(first.0))]
}

/// The indices of the `k` largest of `values`, largest first (ties to the lower index).
fn top_indices(values: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    // (Stable: ties go to the lower index.)
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    order.truncate(k);
    order
}

/// A sparse mixture of experts: `gate` (the router, no bias) scores the experts (a softmax in
/// float32, or as [`Scoring`] says), each token runs through its `top_k` best experts (gated MLPs
/// `experts.{j}.{gate,up,down}_proj`) and gets their outputs weighted by those scores, summed in the
/// experts' order.
#[derive(Debug, Clone)]
pub struct SparseMoe {
    router: Linear,
    experts: Vec<GatedMlp>,
    routing: Routing,
    /// DeepSeek-V3's `gate.e_score_correction_bias` (float32), added to the scores to choose
    correction: Option<Vec<f32>>,
    /// The shared expert every token runs: Qwen2-MoE's `shared_expert`, scaled by
    /// `sigmoid(shared_expert_gate(x))`, or DeepSeek's `shared_experts`, unscaled
    shared: Option<(GatedMlp, Option<Linear>)>,
    /// Nemotron-H's latent projections around the routed experts (`fc1_latent_proj`,
    /// `fc2_latent_proj`)
    latent: Option<(Linear, Linear)>,
    /// The output is the mean of the routed experts' and the shared experts' (Cohere 2 MoE's
    /// `"average"` combination), not their sum
    shared_mean: bool,
    /// Each expert's weight is multiplied by its entry once chosen (Gemma 4's router's
    /// `per_expert_scale`, read as float32)
    expert_scale: Option<Vec<f32>>,
    /// A norm of the block's output, shared experts included (A.X-K1's `post_mlp_layernorm`)
    output_norm: Option<Box<DecoderNorm>>,
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
        biased: bool,
    ) -> Result<Self> {
        let (router, correction) = Self::router(vars, hidden, experts, routing, biased)?;
        let experts = Self::load_experts(&vars.pp("experts"), hidden, intermediate, experts, act, biased)?;
        Ok(Self::new(router, experts, routing, correction))
    }

    /// The mixture of `experts` that `router` (and DeepSeek-V3's `correction`) routes, alone.
    fn new(router: Linear, experts: Vec<GatedMlp>, routing: Routing, correction: Option<Vec<f32>>) -> Self {
        SparseMoe {
            router,
            experts,
            routing,
            correction,
            shared: None,
            latent: None,
            shared_mean: false,
            expert_scale: None,
            output_norm: None,
        }
    }

    /// A mixture of `experts` (see [`SparseMoe::load_experts`]) that `router` (no bias) scores,
    /// with softmax-style routing (what Gemma 4's layers hold besides their dense MLP).
    pub fn from_parts(router: Linear, experts: Vec<GatedMlp>, routing: Routing) -> Result<Self> {
        let n = experts.len();
        if routing.top_k == 0 || routing.top_k > n {
            return Err(Error::Config(format!(
                "the experts per token ({}) must be between 1 and the number of experts ({n})",
                routing.top_k
            )));
        }
        Ok(Self::new(router, experts, routing, None))
    }

    /// The mixture with its output normed by `norm` (A.X-K1's `post_mlp_layernorm`).
    pub fn with_output_norm(mut self, norm: DecoderNorm) -> Self {
        self.output_norm = Some(Box::new(norm));
        self
    }

    /// The mixture with each chosen expert's weight multiplied by its entry of `scale` (one per
    /// expert).
    pub fn with_expert_scale(mut self, scale: Vec<f32>) -> Self {
        self.expert_scale = Some(scale);
        self
    }

    /// `experts` gated experts of `intermediate`: `all.{0..experts}.{gate,up,down}_proj` as
    /// checkpoints store them, or transformers 5's fused `all.gate_up_proj`
    /// `[experts, 2 · intermediate, hidden]` and `all.down_proj` `[experts, hidden, intermediate]`.
    pub fn load_experts(
        all: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        experts: usize,
        act: Activation,
        biased: bool,
    ) -> Result<Vec<GatedMlp>> {
        Ok(if all.contains("gate_up_proj") {
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
                .map(|j| GatedMlp::load(&all.pp(j), hidden, intermediate, act, biased))
                .collect::<Result<Vec<_>>>()?
        })
    }

    /// A mixture of ungated experts, `down(act(up(x)))` without biases (Nemotron-H's): read as
    /// checkpoints store them (`vars.experts.{j}.{up,down}_proj`) or fused
    /// (`vars.experts.up_proj` `[experts, intermediate, width]`, `vars.experts.down_proj`
    /// `[experts, width, intermediate]`). With `latent` `(width, bias)`, the experts run in that
    /// width, between `vars.fc1_latent_proj` and `vars.fc2_latent_proj`; else in `hidden`.
    pub fn load_ungated(
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        experts: usize,
        routing: Routing,
        act: Activation,
        latent: Option<(usize, bool)>,
    ) -> Result<Self> {
        let (router, correction) = Self::router(vars, hidden, experts, routing, false)?;
        let (width, latent) = match latent {
            Some((width, bias)) => (
                width,
                Some((
                    Linear::load(&vars.pp("fc1_latent_proj"), hidden, width, bias)?,
                    Linear::load(&vars.pp("fc2_latent_proj"), width, hidden, bias)?,
                )),
            ),
            None => (hidden, None),
        };
        let all = vars.pp("experts");
        let experts = if all.contains("up_proj") {
            let up = all.get("up_proj", &[experts, intermediate, width])?;
            let down = all.get("down_proj", &[experts, width, intermediate])?;
            (0..experts)
                .map(|j| {
                    let part = |t: &Tensor| -> Result<Tensor> { Ok(t.select(0, j as isize)?.contiguous()?) };
                    Ok(GatedMlp::from_plain(part(&up)?, part(&down)?, act))
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            (0..experts)
                .map(|j| GatedMlp::load_plain(&all.pp(j), width, intermediate, act, false))
                .collect::<Result<Vec<_>>>()?
        };
        Ok(SparseMoe { latent, ..Self::new(router, experts, routing, correction) })
    }

    /// The router `vars.gate` (and DeepSeek-V3's score correction), its sizes and groups checked.
    fn router(
        vars: &Vars<'_>,
        hidden: usize,
        experts: usize,
        routing: Routing,
        biased: bool,
    ) -> Result<(Linear, Option<Vec<f32>>)> {
        if routing.top_k == 0 || routing.top_k > experts {
            return Err(Error::Config(format!(
                "num_experts_per_tok ({}) must be between 1 and the number of experts ({experts})",
                routing.top_k
            )));
        }
        let (router, correction) = match routing.scoring {
            Scoring::Softmax
            | Scoring::SoftmaxOfTopK
            | Scoring::SparseMixer { .. }
            | Scoring::SigmoidOnInputs
            | Scoring::GroupedSoftmax { .. } => {
                (Linear::load(&vars.pp("gate"), hidden, experts, biased)?, None)
            }
            Scoring::Sigmoid { biased: expert_bias } => {
                let correction = match expert_bias {
                    true => Some(
                        vars.get_as_stored("expert_bias", &[experts])?
                            .to_dtype(DType::F32)?
                            .to(Device::Cpu)?
                            .contiguous()?
                            .to_vec::<f32>()?,
                    ),
                    false => None,
                };
                (Linear::load(&vars.pp("gate"), hidden, experts, biased)?, correction)
            }
            Scoring::BiasedSigmoid { .. } => {
                let gate = vars.pp("gate");
                let correction = gate
                    .get_as_stored("e_score_correction_bias", &[experts])?
                    .to_dtype(DType::F32)?
                    .to(Device::Cpu)?
                    .contiguous()?
                    .to_vec::<f32>()?;
                (Linear::load(&gate, hidden, experts, biased)?, Some(correction))
            }
            // transformers keeps DeepSeek's router in float32 whatever the model's dtype.
            scoring => {
                let gate = vars.pp("gate");
                let weight = gate.get_as_stored("weight", &[experts, hidden])?.to_dtype(DType::F32)?;
                let correction = match scoring {
                    Scoring::DeepseekV3 { .. } | Scoring::BiasedSoftmax | Scoring::LogitBiasedSigmoid => {
                        Some(
                            if scoring == Scoring::BiasedSoftmax {
                                // (As checkpoints store it, or as transformers names it in memory.)
                                let statics = if vars.pp("moe_statics").contains("e_score_correction_bias") {
                                    vars.pp("moe_statics")
                                } else {
                                    gate.pp("moe_statics")
                                };
                                statics.get_as_stored("e_score_correction_bias", &[1, experts])?
                            } else {
                                gate.get_as_stored("e_score_correction_bias", &[experts])?
                            }
                            .to_dtype(DType::F32)?
                            .to(Device::Cpu)?
                            .contiguous()?
                            .to_vec::<f32>()?,
                        )
                    }
                    _ => None,
                };
                (Linear { weight, bias: None }, correction)
            }
        };
        if let Scoring::DeepseekV2 { groups: Some((n, k)) }
        | Scoring::DeepseekV3 { groups: n, top_groups: k }
        | Scoring::GroupedSoftmax { groups: n, top_groups: k } = routing.scoring
        {
            let two_best =
                matches!(routing.scoring, Scoring::DeepseekV3 { .. } | Scoring::GroupedSoftmax { .. });
            let fewest = if two_best { 2 } else { 1 };
            if n == 0 || !experts.is_multiple_of(n) || experts / n < fewest || k == 0 || k > n {
                return Err(Error::Config(format!(
                    "n_group ({n}) must divide the {experts} experts into groups of at least {fewest}, \
                     and topk_group ({k}) be between 1 and n_group"
                )));
            }
            // (transformers would then weigh experts of the groups it masked, picked among equal
            // masked scores (-inf, Mistral 4's 0) in an order of its top-k kernel's own.)
            if two_best && routing.top_k > k * (experts / n) {
                return Err(Error::Config(format!(
                    "num_experts_per_tok ({}) is more than the {} experts of the topk_group ({k}) groups a token \
                     may choose from",
                    routing.top_k,
                    k * (experts / n)
                )));
            }
        }
        Ok((router, correction))
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
        self.shared = Some((expert, Some(gate)));
        Ok(self)
    }

    /// The mixture with every expert's gate and up projections joined by `glu` (gpt-oss's clamped
    /// SwiGLU).
    pub fn with_expert_glu(mut self, glu: Glu) -> Self {
        self.experts = self.experts.into_iter().map(|e| e.with_glu(glu)).collect();
        self
    }

    /// Adds DeepSeek's shared experts, one gated MLP `vars.shared_experts.{gate,up,down}_proj` of
    /// `intermediate` (`n_shared_experts` times `moe_intermediate_size`), unscaled.
    pub fn with_shared_experts(
        mut self,
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
        bias: bool,
    ) -> Result<Self> {
        let expert = GatedMlp::load(&vars.pp("shared_experts"), hidden, intermediate, act, bias)?;
        self.shared = Some((expert, None));
        Ok(self)
    }

    /// The mixture whose output is the mean of the routed and the shared experts' (Cohere 2 MoE's
    /// `"average"` combination).
    pub fn averaged_with_shared(mut self) -> Self {
        self.shared_mean = true;
        self
    }

    /// Adds Nemotron-H's shared experts, one ungated MLP `vars.shared_experts.{up,down}_proj` of
    /// `intermediate`, unscaled.
    pub fn with_ungated_shared_experts(
        mut self,
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
        bias: bool,
    ) -> Result<Self> {
        let expert = GatedMlp::load_plain(&vars.pp("shared_experts"), hidden, intermediate, act, bias)?;
        self.shared = Some((expert, None));
        Ok(self)
    }

    /// The block on `x` `[..., hidden]`. The routing is read back to the host, which groups the
    /// tokens of each expert.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_routed(x, x)
    }

    /// The block on `x` `[..., hidden]`, the router reading `router_input` (of `x`'s shape)
    /// instead of `x` (Gemma 4 routes by the layer's residual, its experts taking it normed).
    pub fn forward_routed(&self, router_input: &Tensor, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims().to_vec();
        let hidden = *dims.last().unwrap_or(&0);
        let tokens = x.numel().checked_div(hidden).unwrap_or(0);
        let (dtype, device) = (x.dtype(), x.device());
        let flat = x.reshape([tokens, hidden])?;
        let routed = router_input.reshape([tokens, hidden])?;
        let n = self.experts.len();
        let probs = match self.routing.scoring {
            Scoring::Softmax => self.router.forward(&routed)?.to_dtype(DType::F32)?.softmax(-1, None)?,
            Scoring::SoftmaxOfTopK | Scoring::SparseMixer { .. } | Scoring::SigmoidOnInputs => {
                self.router.forward(&routed)?.to_dtype(DType::F32)?
            }
            Scoring::DeepseekV2 { .. } | Scoring::BiasedSoftmax => {
                self.router.forward(&routed.to_dtype(DType::F32)?)?.softmax(-1, None)?
            }
            Scoring::DeepseekV3 { .. } | Scoring::Float32Sigmoid => {
                self.router.forward(&routed.to_dtype(DType::F32)?)?.sigmoid()?
            }
            Scoring::LogitBiasedSigmoid => self.router.forward(&routed.to_dtype(DType::F32)?)?,
            Scoring::GroupedSoftmax { .. } => {
                let logits = self.router.forward(&routed)?;
                logits
                    .to_dtype(DType::F32)?
                    .softmax(-1, None)?
                    .to_dtype(logits.dtype())?
                    .to_dtype(DType::F32)?
            }
            Scoring::Sigmoid { .. } => self.router.forward(&routed)?.sigmoid()?.to_dtype(DType::F32)?,
            Scoring::BiasedSigmoid { softcap } => {
                let logits = self.router.forward(&routed)?.to_dtype(DType::F32)?;
                match softcap {
                    Some(c) => logits.div(c)?.tanh()?.mul(c)?.sigmoid()?,
                    None => logits.sigmoid()?,
                }
            }
        };
        let probs = probs.to(Device::Cpu)?.contiguous()?.to_vec::<f32>()?;
        // Each expert's tokens and their weights, in token order.
        let mut rows: Vec<Vec<i64>> = vec![Vec::new(); n];
        let mut weights: Vec<Vec<f32>> = vec![Vec::new(); n];
        for (t, p) in probs.chunks(n.max(1)).enumerate().take(tokens) {
            for (e, w) in self.routing.choose(p, self.correction.as_deref(), dtype) {
                rows[e].push(t as i64);
                weights[e].push(self.expert_scale.as_ref().map_or(w, |s| w * s[e]));
            }
        }
        // (The experts' input: the tokens, or their latent projection.)
        let input = match &self.latent {
            Some((fc1, _)) => fc1.forward(&flat)?,
            None => flat.clone(),
        };
        let width = input.dims()[1];
        let mut out = Tensor::zeros([tokens, width], (dtype, device))?;
        for (e, expert) in self.experts.iter().enumerate() {
            if rows[e].is_empty() {
                continue;
            }
            let m = rows[e].len();
            let index = Tensor::from_vec(std::mem::take(&mut rows[e]), [m])?.to(device)?;
            let w = Tensor::from_vec(std::mem::take(&mut weights[e]), [m, 1])?.to(device)?;
            let tokens_in = input.index_select(0, &index)?;
            if self.routing.scoring == Scoring::SigmoidOnInputs {
                let y = expert.forward(&tokens_in.mul(&w.to_dtype(dtype)?)?)?;
                out = out.index_add(0, &index, &y, 1.0)?;
                continue;
            }
            let y = expert.forward(&tokens_in)?;
            let y = if self.routing.round_weights {
                y.mul(&w.to_dtype(dtype)?)?
            } else {
                y.to_dtype(DType::F32)?.mul(&w)?.to_dtype(dtype)?
            };
            out = out.index_add(0, &index, &y, 1.0)?;
        }
        if let Some((_, fc2)) = &self.latent {
            out = fc2.forward(&out)?;
        }
        match &self.shared {
            Some((expert, Some(gate))) => {
                let scale = gate.forward(&flat)?.sigmoid()?;
                out = out.add(&expert.forward(&flat)?.mul(&scale)?)?;
            }
            Some((expert, None)) if self.shared_mean => out = out.add(&expert.forward(&flat)?)?.div(2.0)?,
            Some((expert, None)) => out = out.add(&expert.forward(&flat)?)?,
            None => {}
        }
        if let Some(norm) = &self.output_norm {
            out = norm.forward(&out)?;
        }
        Ok(out.reshape(dims)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sparsemixer keeps, for each of its two picks, the experts within `2 · jitter_eps`
    /// (relative) of the pick's logit: `[2.0, 1.9, 0.0, -1.0]` at jitter 0.1 weighs the first by a
    /// softmax over the first two, then the second alone; ties go to the lower index.
    #[test]
    fn sparse_mixer_weighs_each_pick_against_its_near_experts() {
        let picks = sparse_mixer(&[2.0, 1.9, 0.0, -1.0], 0.1, DType::F32);
        assert_eq!((picks[0].0, picks[1].0), (0, 1));
        assert!((picks[0].1 - 1.0 / (1.0 + (-0.1f32).exp())).abs() < 1e-6, "{picks:?}");
        assert_eq!(picks[1].1, 1.0);
        // A wider jitter keeps 0.0 near 1.9 in the second pick: (1.9 - 0) / 1.9 = 1 <= 2 · 0.6.
        let wide = sparse_mixer(&[2.0, 1.9, 0.0, -1.0], 0.6, DType::F32);
        assert!((wide[1].1 - 1.0 / (1.0 + (-1.9f32).exp())).abs() < 1e-6, "{wide:?}");
        let tied = sparse_mixer(&[0.5, 1.0, 1.0], 0.01, DType::F32);
        assert_eq!((tied[0].0, tied[1].0), (1, 2));
        // In bf16 the weights are rounded: 1 / (1 + e^-0.1) = 0.52498 → 0.525390625.
        let bf16 = sparse_mixer(&[2.0, 1.9, 0.0, -1.0], 0.1, DType::BF16);
        assert_eq!(bf16[0].1, half::bf16::from_f32(1.0 / (1.0 + (-0.1f32).exp())).to_f32());
    }
}
