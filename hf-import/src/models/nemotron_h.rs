//! Nemotron-H (`NemotronHForCausalLM`: nvidia/Nemotron-H-8B/47B/56B, NVIDIA-Nemotron-Nano-9B-v2 and
//! 12B-v2): blocks of one part each, as `layers_block_type` (or the older
//! `hybrid_override_pattern`, `M`/`*`/`-`) lists them: a Mamba-2 mixer (`mamba_num_heads` heads
//! of `mamba_head_dim` in `n_groups` groups, `ssm_state_size` states, step sizes clamped below by
//! `time_step_min`), attention without positions, or an ungated MLP (`mlp_hidden_act`, squared
//! ReLU by default), or (Nemotron 3, `E`) a mixture of ungated experts routed as DeepSeek-V3
//! routes (biased sigmoid scores within `topk_group` of `n_group` groups, `norm_topk_prob`,
//! `routed_scaling_factor`) with an ungated shared expert (`moe_shared_expert_intermediate_size`)
//! and, with `moe_latent_size`, the routed experts between latent projections; each block is
//! `norm`, the part, the residual. The final norm is `norm_f`; the LM head is never tied.

use super::decoder::{
    BlockParts, CausalLm, DecoderSpec, HybridMixer, HybridSpec, MoeSpec, SharedExpert, UngatedExperts,
};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, GatedNorm, Glu, Mamba2Dims, Routing, Scoring};
use crate::weights::Weights;

/// A Nemotron-H block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Mamba,
    Attention,
    Mlp,
    Moe,
}

causal_lm_newtype!(
    /// transformers' `NemotronHForCausalLM`.
    NemotronHForCausalLM
);

impl NemotronHForCausalLM {
    /// Loads the model: `NemotronHConfig`'s keys (and their older `mamba_*` names) read as the
    /// common decoder's, each block's tensors renamed to its part's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let blocks = blocks(cfg)?;
        let hidden = cfg.usize("hidden_size")?;
        let either = |key: &str, old: &str, default: usize| match cfg.get(old) {
            Some(_) => cfg.usize(old),
            None => cfg.usize_or(key, default),
        };
        let eps = cfg.f64_or("layer_norm_epsilon", 1e-5)?;
        let time_step_min = match cfg.get("mamba_dt_min") {
            Some(_) => cfg.f64_or("mamba_dt_min", 0.001)?,
            None => cfg.f64_or("time_step_min", 0.001)?,
        };
        let dims = Mamba2Dims {
            hidden,
            heads: cfg.usize_or("mamba_num_heads", 128)?,
            head_dim: cfg.usize_or("mamba_head_dim", 64)?,
            groups: either("n_groups", "mamba_n_groups", 8)?,
            states: cfg.usize_or("ssm_state_size", 128)?,
            kernel: either("conv_kernel", "mamba_d_conv", 4)?,
            proj_bias: cfg.bool_or("use_bias", false)?,
            out_bias: cfg.bool_or("use_bias", false)?,
            gated_norm: GatedNorm::GateThenNorm,
            conv_bias: cfg.bool_or("use_conv_bias", true)?,
            act: Activation::from_name(cfg.str_or("mamba_hidden_act", "silu")?)?,
            eps,
            // (transformers' mixer clamps with `time_step_min`, not `time_step_limit`.)
            dt_limit: (time_step_min, f64::INFINITY),
        };
        let mut json = cfg.json().clone();
        json.insert("num_hidden_layers".into(), blocks.len().into());
        json.insert("rms_norm_eps".into(), eps.into());
        json.insert("hidden_act".into(), cfg.str_or("mlp_hidden_act", "relu2")?.into());
        let cfg = Config::from_map(json);
        let mut spec = DecoderSpec::llama(&cfg)?;
        spec.default_kv_heads = Some(8);
        spec.default_head_dim = Some(128);
        spec.plain_mlp = true;
        // (transformers' attention has no biases whatever `attention_bias` says, and its LM head is
        // never tied: `_tied_weights_keys` is empty.)
        (spec.qkv_bias, spec.o_bias, spec.tie_word_embeddings) = (false, false, false);
        spec.nope = vec![true; blocks.len()];
        spec.mamba = Some(HybridSpec {
            dims: HybridMixer::Mamba2(dims),
            layers: blocks.iter().map(|b| *b == Block::Mamba).collect(),
            prefix: "mamba",
            beside_attention: false,
        });
        spec.block_parts = Some(
            blocks
                .iter()
                .map(|b| match b {
                    Block::Mlp | Block::Moe => BlockParts::FeedForwardOnly,
                    _ => BlockParts::MixerOnly,
                })
                .collect(),
        );
        if blocks.contains(&Block::Moe) {
            spec.moe = Some(mixture(&cfg, &blocks)?);
        }
        let weights = weights.renamed(|n| Some(decoder_name(n, &blocks)));
        Ok(NemotronHForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The mixture of the `moe` blocks, with `NemotronHConfig`'s defaults (8 experts of 7688, 2 a
/// token, one group, renormalised, unscaled; the shared expert of 7688).
fn mixture(cfg: &Config, blocks: &[Block]) -> Result<MoeSpec> {
    let experts = match cfg.get("n_routed_experts") {
        Some(_) => cfg.usize("n_routed_experts")?,
        None => cfg.usize_or("num_local_experts", 8)?,
    };
    let groups = cfg.usize_or("n_group", 1)?;
    let top_groups = cfg.usize_or("topk_group", 1)?;
    let bias = cfg.bool_or("mlp_bias", false)?;
    Ok(MoeSpec {
        experts,
        intermediate: cfg.usize_or("moe_intermediate_size", 7688)?,
        routing: Routing {
            top_k: cfg.usize_or("num_experts_per_tok", 2)?,
            normalize: cfg.bool_or("norm_topk_prob", true)?,
            round_weights: false,
            scoring: Scoring::DeepseekV3 { groups, top_groups },
            scale: cfg.f64_or("routed_scaling_factor", 1.0)?,
        },
        sparse_layers: blocks.iter().map(|b| *b == Block::Moe).collect(),
        shared: Some(SharedExpert::Plain(cfg.usize_or("moe_shared_expert_intermediate_size", 7688)?)),
        biased: false,
        shared_bias: bias,
        glu: Glu::Product,
        ungated: Some(UngatedExperts { latent: cfg.nullable_usize_or("moe_latent_size", None)?, bias }),
    })
}

/// The blocks, from `layers_block_type` (or `layer_types`; `linear_attention`/`mamba`,
/// `full_attention`/`attention`, `mlp`) or the older `hybrid_override_pattern`.
fn blocks(cfg: &Config) -> Result<Vec<Block>> {
    let names: Vec<String> = match cfg.get("layers_block_type").or_else(|| cfg.get("layer_types")) {
        Some(v) => {
            v.as_array().and_then(|a| a.iter().map(|t| t.as_str().map(str::to_string)).collect()).ok_or_else(
                || Error::Config(format!("\"layers_block_type\" must be a list of block types, got {v}")),
            )?
        }
        None => match cfg.get("hybrid_override_pattern").and_then(|v| v.as_str()) {
            Some(pattern) => pattern
                .chars()
                .map(|c| match c {
                    'M' => Ok("mamba".to_string()),
                    '*' => Ok("attention".to_string()),
                    '-' => Ok("mlp".to_string()),
                    'E' => Ok("moe".to_string()),
                    other => Err(Error::Config(format!("hybrid_override_pattern: unknown block '{other}'"))),
                })
                .collect::<Result<_>>()?,
            None => return Err(Error::Config("a Nemotron-H config needs layers_block_type".into())),
        },
    };
    if names.is_empty() {
        return Err(Error::Config("layers_block_type is empty".into()));
    }
    names
        .iter()
        .map(|t| match t.as_str() {
            "mamba" | "linear_attention" => Ok(Block::Mamba),
            "attention" | "full_attention" => Ok(Block::Attention),
            "mlp" => Ok(Block::Mlp),
            "moe" => Ok(Block::Moe),
            other => Err(Error::Config(format!("unknown Nemotron-H block type \"{other}\""))),
        })
        .collect()
}

/// A Nemotron-H tensor's name in the common decoder: `backbone.`/`model.` as `model.`,
/// `embeddings` as `embed_tokens`, `norm_f` as `norm`, each block's `norm` and `mixer` as its
/// part's.
fn decoder_name(name: &str, blocks: &[Block]) -> String {
    let name =
        name.strip_prefix("backbone.").map_or_else(|| name.to_string(), |rest| format!("model.{rest}"));
    let name = match name.as_str() {
        "model.embeddings.weight" => return "model.embed_tokens.weight".into(),
        "model.norm_f.weight" => return "model.norm.weight".into(),
        _ => name,
    };
    let Some((index, part)) = name.strip_prefix("model.layers.").and_then(|r| r.split_once('.')) else {
        return name;
    };
    let Some(block) = index.parse::<usize>().ok().and_then(|i| blocks.get(i)) else { return name };
    let part = match (block, part.split_once('.')) {
        (Block::Mlp | Block::Moe, Some(("norm", rest))) => format!("post_attention_layernorm.{rest}"),
        (_, Some(("norm", rest))) => format!("input_layernorm.{rest}"),
        (Block::Mamba, Some(("mixer", rest))) => format!("mamba.{rest}"),
        (Block::Attention, Some(("mixer", rest))) => format!("self_attn.{rest}"),
        (Block::Mlp | Block::Moe, Some(("mixer", rest))) => format!("mlp.{rest}"),
        _ => part.to_string(),
    };
    format!("model.layers.{index}.{part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_blocks_tensors_land_on_its_part() {
        let blocks = [Block::Mamba, Block::Attention, Block::Mlp];
        for (from, to) in [
            ("backbone.embeddings.weight", "model.embed_tokens.weight"),
            ("model.norm_f.weight", "model.norm.weight"),
            ("model.layers.0.norm.weight", "model.layers.0.input_layernorm.weight"),
            ("model.layers.0.mixer.A_log", "model.layers.0.mamba.A_log"),
            ("backbone.layers.1.mixer.q_proj.weight", "model.layers.1.self_attn.q_proj.weight"),
            ("model.layers.2.norm.weight", "model.layers.2.post_attention_layernorm.weight"),
            ("model.layers.2.mixer.up_proj.weight", "model.layers.2.mlp.up_proj.weight"),
            ("lm_head.weight", "lm_head.weight"),
        ] {
            assert_eq!(decoder_name(from, &blocks), to);
        }
    }

    #[test]
    fn the_pattern_and_the_list_give_the_blocks() {
        let from = |json: &str| blocks(&Config::from_json_str(json).unwrap());
        let want = vec![Block::Mamba, Block::Mlp, Block::Attention];
        assert_eq!(from(r#"{"model_type": "nemotron_h", "hybrid_override_pattern": "M-*"}"#).unwrap(), want);
        let list = r#"{"model_type": "nemotron_h", "layers_block_type": ["linear_attention", "mlp", "full_attention"]}"#;
        assert_eq!(from(list).unwrap(), want);
        let moe = from(r#"{"model_type": "nemotron_h", "hybrid_override_pattern": "ME"}"#).unwrap();
        assert_eq!(moe, vec![Block::Mamba, Block::Moe]);
        assert!(from(r#"{"model_type": "nemotron_h", "hybrid_override_pattern": "MX"}"#).is_err());
    }
}
