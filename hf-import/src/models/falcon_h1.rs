//! Falcon-H1 (`FalconH1ForCausalLM`, `FalconH1Model`: tiiuae/Falcon-H1-0.5B to 34B): every layer
//! runs a Mamba-2 mixer (`mamba`) beside its attention, both on the same normed input, and adds
//! their outputs before the residual; then `pre_ff_layernorm` and the gated MLP `feed_forward`.
//! The final norm is `final_layernorm`.
//!
//! Its µP multipliers are constants on linear maps, folded into the matrices at load:
//! `attention_in_multiplier` (q/k/v), `key_multiplier` (k), `attention_out_multiplier` (o),
//! `ssm_in_multiplier` and the five `ssm_multipliers` (the rows of `in_proj` that make the gate,
//! x, B, C and the step sizes), `ssm_out_multiplier` (`out_proj`), `mlp_multipliers` (gate and
//! down projections); `embedding_multiplier` scales the embeddings, `lm_head_multiplier` the
//! logits. The mixer's channels are `mamba_d_ssm` (else `mamba_expand × hidden_size`), its output
//! gated by `silu(gate)`, under a grouped RMS norm only with `mamba_rms_norm` (before the gate with
//! `mamba_norm_before_gate`); `in_proj` has a bias with `mamba_proj_bias`, `out_proj` with
//! `projectors_bias`.

use oxtorch_tensor::{DType, Tensor};

use super::decoder::{CausalLm, DecoderSpec, HybridMixer, HybridSpec};
use super::family::causal_lm_newtype;
use super::mamba::time_step_limit;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, GatedNorm, Mamba2Dims};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `FalconH1ForCausalLM`.
    FalconH1ForCausalLM
);

impl FalconH1ForCausalLM {
    /// Loads the model: its tensors renamed to the decoder's (`feed_forward` → `mlp`,
    /// `pre_ff_layernorm` → `post_attention_layernorm`, `final_layernorm` → `norm`) and the
    /// multipliers folded in.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let dims = mamba_dims(cfg)?;
        let mut spec = DecoderSpec::llama(cfg)?;
        let layers = cfg.layers("num_hidden_layers")?;
        spec.default_rms_norm_eps = 1e-5;
        spec.default_kv_heads = Some(8);
        let embedding = multiplier(cfg, "embedding_multiplier")?;
        spec.embedding_multiplier = (embedding != 1.0).then_some(embedding);
        spec.embedding_multiplier_on_ids = true;
        let lm_head = multiplier(cfg, "lm_head_multiplier")?;
        if lm_head == 0.0 {
            return Err(Error::Config("\"lm_head_multiplier\" must not be 0".into()));
        }
        spec.logits_scaling = (lm_head != 1.0).then_some(1.0 / lm_head);
        spec.mamba = Some(HybridSpec {
            dims: HybridMixer::Mamba2(dims),
            layers: vec![true; layers],
            prefix: "mamba",
            beside_attention: true,
        });
        let scales = Multipliers::read(cfg, &dims)?;
        let weights = weights.renamed(|n| Some(decoder_name(n))).replaced(|name, t| scales.fold(name, t))?;
        Ok(FalconH1ForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// The Mamba-2 mixer `FalconH1Config` describes (see the module doc).
fn mamba_dims(cfg: &Config) -> Result<Mamba2Dims> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize_or("mamba_n_heads", 128)?;
    let channels = match cfg.nullable_usize_or("mamba_d_ssm", Some(1024))? {
        Some(d) => d,
        None => cfg.usize_or("mamba_expand", 2)?.checked_mul(hidden).unwrap_or(0),
    };
    let head_dim = match cfg.get("mamba_d_head") {
        Some(v) if !v.is_null() && v.as_str() != Some("auto") => v.as_u64().map_or(0, |d| d as usize),
        _ => channels / heads.max(1),
    };
    if heads == 0 || head_dim.checked_mul(heads) != Some(channels) {
        return Err(Error::Config(format!(
            "mamba_n_heads × mamba_d_head ({heads} × {head_dim}) must equal the mixer's channels ({channels}: \
             mamba_d_ssm, or mamba_expand × hidden_size)"
        )));
    }
    let gated_norm =
        match (cfg.bool_or("mamba_rms_norm", false)?, cfg.bool_or("mamba_norm_before_gate", true)?) {
            (false, _) => GatedNorm::GateOnly,
            (true, true) => GatedNorm::NormThenGate,
            (true, false) => GatedNorm::GateThenNorm,
        };
    let dims = Mamba2Dims {
        hidden,
        heads,
        head_dim,
        groups: cfg.usize_or("mamba_n_groups", 1)?,
        states: cfg.usize_or("mamba_d_state", 256)?,
        kernel: cfg.usize_or("mamba_d_conv", 4)?,
        proj_bias: cfg.bool_or("mamba_proj_bias", false)?,
        out_bias: cfg.bool_or("projectors_bias", false)?,
        gated_norm,
        conv_bias: cfg.bool_or("mamba_conv_bias", true)?,
        act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
        eps: cfg.f64_or("rms_norm_eps", 1e-5)?,
        dt_limit: time_step_limit(cfg)?,
    };
    dims.check()?;
    Ok(dims)
}

/// A multiplier `key` of the config, 1 when absent or null.
fn multiplier(cfg: &Config, key: &str) -> Result<f64> {
    match cfg.get(key) {
        None => Ok(1.0),
        Some(v) if v.is_null() => Ok(1.0),
        Some(v) => v.as_f64().ok_or_else(|| Error::Config(format!("\"{key}\" must be a number, got {v}"))),
    }
}

/// A list of `n` multipliers `key`, ones when absent or null.
fn multipliers(cfg: &Config, key: &str, n: usize) -> Result<Vec<f64>> {
    match cfg.get(key) {
        None => Ok(vec![1.0; n]),
        Some(v) if v.is_null() => Ok(vec![1.0; n]),
        Some(v) => v
            .as_array()
            .filter(|a| a.len() == n)
            .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<_>>>())
            .ok_or_else(|| Error::Config(format!("\"{key}\" must be a list of {n} numbers, got {v}"))),
    }
}

/// Falcon-H1's constant multipliers, as they fold into its tensors.
struct Multipliers {
    attention_in: f64,
    key: f64,
    attention_out: f64,
    ssm_in: f64,
    ssm_out: f64,
    /// `in_proj`'s row groups (gate, x, B, C, step sizes) and their `ssm_multipliers`
    in_proj_groups: [(usize, f64); 5],
    mlp_gate: f64,
    mlp_down: f64,
}

impl Multipliers {
    fn read(cfg: &Config, dims: &Mamba2Dims) -> Result<Self> {
        let ssm = multipliers(cfg, "ssm_multipliers", 5)?;
        let mlp = multipliers(cfg, "mlp_multipliers", 2)?;
        // (Sizes `Mamba2Dims::check` found representable.)
        let (channels, bc) = (dims.channels(), dims.groups * dims.states);
        let widths = [channels, channels, bc, bc, dims.heads];
        let in_proj_groups = std::array::from_fn(|i| (widths[i], ssm[i]));
        Ok(Multipliers {
            attention_in: multiplier(cfg, "attention_in_multiplier")?,
            key: multiplier(cfg, "key_multiplier")?,
            attention_out: multiplier(cfg, "attention_out_multiplier")?,
            ssm_in: multiplier(cfg, "ssm_in_multiplier")?,
            ssm_out: multiplier(cfg, "ssm_out_multiplier")?,
            in_proj_groups,
            mlp_gate: mlp[0],
            mlp_down: mlp[1],
        })
    }

    /// The tensor `name` (as the decoder names it) with its multipliers folded in, in its own dtype;
    /// `None` for a tensor no multiplier touches.
    fn fold(&self, name: &str, t: &Tensor) -> Result<Option<Tensor>> {
        let Some((_, leaf)) = name.split_once(".layers.").and_then(|(_, rest)| rest.split_once('.')) else {
            return Ok(None);
        };
        let scale = |s: f64| -> Result<Option<Tensor>> {
            if s == 1.0 {
                return Ok(None);
            }
            Ok(Some(t.to_dtype(DType::F32)?.mul(s)?.to_dtype(t.dtype())?))
        };
        match leaf {
            "self_attn.q_proj.weight" | "self_attn.v_proj.weight" => scale(self.attention_in),
            "self_attn.k_proj.weight" => scale(self.attention_in * self.key),
            "self_attn.k_proj.bias" => scale(self.key),
            "self_attn.o_proj.weight" | "self_attn.o_proj.bias" => scale(self.attention_out),
            "mamba.out_proj.weight" | "mamba.out_proj.bias" => scale(self.ssm_out),
            "mlp.gate_proj.weight" | "mlp.gate_proj.bias" => scale(self.mlp_gate),
            "mlp.down_proj.weight" | "mlp.down_proj.bias" => scale(self.mlp_down),
            "mamba.in_proj.weight" | "mamba.in_proj.bias" => {
                let rows: usize = self.in_proj_groups.iter().map(|(w, _)| w).sum();
                if t.dims().first() != Some(&rows) {
                    return Err(Error::Weight(format!(
                        "tensor '{name}' has shape {:?}; the Mamba-2 mixer's in_proj needs {rows} rows",
                        t.dims()
                    )));
                }
                // (The tensor holds `rows` rows: a vector as long is no larger than it.)
                let input = if leaf.ends_with("weight") { self.ssm_in as f32 } else { 1.0 };
                let factors: Vec<f32> = self
                    .in_proj_groups
                    .iter()
                    .flat_map(|&(w, m)| std::iter::repeat_n(m as f32 * input, w))
                    .collect();
                if factors.iter().all(|&f| f == 1.0) {
                    return Ok(None);
                }
                let shape: Vec<usize> =
                    std::iter::once(rows).chain(std::iter::repeat_n(1, t.dims().len() - 1)).collect();
                let factors = Tensor::from_vec(factors, shape)?.to(t.device())?;
                Ok(Some(t.to_dtype(DType::F32)?.mul(&factors)?.to_dtype(t.dtype())?))
            }
            _ => Ok(None),
        }
    }
}

/// A Falcon-H1 tensor's name in the common decoder.
fn decoder_name(name: &str) -> String {
    if name == "model.final_layernorm.weight" || name == "final_layernorm.weight" {
        return name.replace("final_layernorm", "norm");
    }
    name.replacen(".feed_forward.", ".mlp.", 1).replacen(
        ".pre_ff_layernorm.",
        ".post_attention_layernorm.",
        1,
    )
}
