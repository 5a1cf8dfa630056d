//! Kolibri-1 (`Kolibri1ForCausalLM`, model type `kolibri1`: Aleph-Alpha/Kolibri-1): GLM-4's blocks
//! (norms opening and closing both branches) with EXAONE 4's attention (per-head q/k norms; RoPE
//! on the sliding layers alone while a `sliding_window` is set; by default every fifth layer
//! full) and a mixture on every layer: the router in float32 choosing by logit plus its
//! `e_score_correction_bias`, weighting by the logits' sigmoids (renormalised with
//! `norm_topk_prob`), beside a shared expert (`shared_expert_intermediate_size`) added in full.

use super::decoder::{CausalLm, DecoderSpec, SharedExpert};
use super::family::causal_lm_newtype;
use super::glm::glm4_norm_name;
use super::moe::qwen_mixture;
use crate::config::Config;
use crate::error::Result;
use crate::layers::Scoring;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Kolibri1ForCausalLM`.
    Kolibri1ForCausalLM
);

impl Kolibri1ForCausalLM {
    /// Loads the model from a Kolibri-1 config and checkpoint (checkpoints' names, or
    /// transformers', with GLM-4's norms under the decoder's sandwich names).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| Some(glm4_norm_name(&transformers_name(n))));
        // (`Kolibri1Config` has no dense MLP width, every layer being the mixture: the decoder's is
        // never read.)
        let mut json = cfg.json().clone();
        json.entry("intermediate_size").or_insert_with(|| serde_json::Value::from(0));
        let cfg = Config::from_map(json);
        Ok(Kolibri1ForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// A checkpoint's tensor name as transformers names it (its conversion mapping for `kolibri1`).
fn transformers_name(name: &str) -> String {
    name.replace("moe.router.expert_bias", "mlp.gate.e_score_correction_bias")
        .replace("post_attn_norm", "post_self_attn_layernorm")
        .replace("post_ffn_norm", "post_mlp_layernorm")
}

/// Kolibri-1's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.qk_norm = true;
    spec.sandwich_norms = true;
    spec.default_kv_heads = Some(4);
    spec.default_head_dim = Some(128);
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| !(i + 1).is_multiple_of(5)).collect(),
    };
    let window = cfg.nullable_usize_or("sliding_window", Some(513))?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    // (EXAONE 4's attention: the full layers run without RoPE while the model has a window.)
    spec.nope = sliding.iter().map(|&s| window.is_some() && !s).collect();
    let shared = cfg.usize_or("shared_expert_intermediate_size", 512)?;
    let mut moe = qwen_mixture(cfg, 384, 512, 6, Some(SharedExpert::Plain(shared)))?;
    moe.sparse_layers = vec![true; layers];
    moe.routing.scoring = Scoring::LogitBiasedSigmoid;
    moe.routing.round_weights = false;
    spec.moe = Some(moe);
    Ok(spec)
}
