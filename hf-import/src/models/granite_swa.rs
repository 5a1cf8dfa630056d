//! Granite-SWA (`GraniteSWAForCausalLM`, model type `granite_swa`) and Granite-MoE-SWA
//! (`GraniteMoeSWAForCausalLM`, `granitemoe_swa`): Granite's and Granite-MoE-Shared's decoders
//! whose attention has a learned sink per head in every softmax (`self_attn.sinks`; transformers
//! scales each output by `sigmoid(logsumexp(scores) − sink)`, the same thing), a window of
//! `sliding_window` (128) on the `layer_types` marked `sliding_attention` (by default all but
//! every fourth layer from the first), and a RoPE base per layer (`layer_rope_theta`; 0: no RoPE;
//! by default the global one). The decoder takes at most two RoPE bases: they are read as the two
//! layer types' rope dicts (each with the global dict's scaling), the layers of the second taking
//! the local one; more than two distinct bases are refused.

use serde_json::{json, Map, Value};

use super::decoder::{CausalLm, DecoderSpec, SharedExpert};
use super::family::causal_lm_newtype;
use super::granite::{self, GraniteMoeForCausalLM};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `GraniteSWAForCausalLM`.
    GraniteSWAForCausalLM
);

impl GraniteSWAForCausalLM {
    /// Loads the model from a Granite-SWA config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, layers) = decoder_config(cfg)?;
        let mut spec = granite::spec(&cfg)?;
        // (`GraniteSWAConfig`'s defaults: 4 key/value heads, epsilon 1e-5, the head tied.)
        spec.default_kv_heads = Some(4);
        spec.default_rms_norm_eps = 1e-5;
        spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
        layers.apply(&mut spec);
        Ok(GraniteSWAForCausalLM(CausalLm::load(&cfg, weights, spec)?))
    }
}

/// transformers' `GraniteMoeSWAForCausalLM`.
#[derive(Debug, Clone)]
pub struct GraniteMoeSWAForCausalLM(pub CausalLm);

impl std::ops::Deref for GraniteMoeSWAForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GraniteMoeSWAForCausalLM {
    /// Loads the model from a Granite-MoE-SWA config and checkpoint: Granite-MoE-Shared's
    /// mixture (a shared MLP when `shared_intermediate_size` is not 0, its default).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, layers) = decoder_config(cfg)?;
        let width = cfg.usize_or("shared_intermediate_size", 0)?;
        let shared = (width > 0).then_some(SharedExpert::Plain(width));
        let lm = GraniteMoeForCausalLM::load_with(&cfg, weights, shared, |spec| layers.apply(spec))?;
        Ok(GraniteMoeSWAForCausalLM(lm.0))
    }
}

/// What each layer takes: its window, whether it rotates with the second base, or not at all.
struct SwaLayers {
    windows: Vec<Option<usize>>,
    second_base: Vec<bool>,
    nope: Vec<bool>,
}

impl SwaLayers {
    fn apply(self, spec: &mut DecoderSpec) {
        spec.windows = self.windows;
        spec.local_rope = self.second_base;
        spec.nope = self.nope;
        spec.sinks = true;
    }
}

/// The config with the layer types' default, and its one or two RoPE bases as the
/// `full_attention` and `sliding_attention` rope dicts; each layer's window and base.
fn decoder_config(cfg: &Config) -> Result<(Config, SwaLayers)> {
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| i % 4 != 0).collect(),
    };
    let windows =
        DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", Some(128))?)?;
    // The global rope dict, as the config class standardises it.
    let mut base: Map<String, Value> = match (cfg.get("rope_parameters"), cfg.get("rope_scaling")) {
        (_, Some(Value::Object(s))) if !s.is_empty() => s.clone(),
        (Some(Value::Object(p)), _) => p.clone(),
        _ => Map::new(),
    };
    if !base.contains_key("rope_type") {
        let kind = base.get("type").cloned().unwrap_or_else(|| Value::from("default"));
        base.insert("rope_type".into(), kind);
    }
    let global = match base.get("rope_theta") {
        Some(v) if !v.is_null() => {
            v.as_f64().ok_or_else(|| Error::Config(format!("\"rope_theta\" must be a number, got {v}")))?
        }
        _ => cfg.f64_or("rope_theta", 10_000.0)?,
    };
    let thetas: Vec<f64> = match cfg.get("layer_rope_theta") {
        None => vec![global; layers],
        Some(Value::Array(items)) if items.len() == layers => items
            .iter()
            .map(|v| v.as_f64().filter(|t| t.is_finite() && *t >= 0.0))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| {
                Error::Config(format!(
                    "\"layer_rope_theta\" must hold a base (0: none) per layer, got {}",
                    Value::Array(items.clone())
                ))
            })?,
        Some(v) => {
            return Err(Error::Config(format!(
                "\"layer_rope_theta\" must hold a base (0: none) for each of the {layers} layers, got {v}"
            )))
        }
    };
    let mut bases: Vec<f64> = thetas.iter().copied().filter(|&t| t != 0.0).collect();
    bases.sort_by(f64::total_cmp);
    bases.dedup();
    if bases.len() > 2 {
        return Err(Error::Unsupported(format!(
            "Granite-SWA with {} distinct RoPE bases in layer_rope_theta ({bases:?}): at most two are supported",
            bases.len()
        )));
    }
    let dict = |theta: f64| {
        let mut d = base.clone();
        d.insert("rope_theta".into(), json!(theta));
        Value::Object(d)
    };
    let first = bases.first().copied().unwrap_or(global);
    let second = bases.get(1).copied();
    let mut json = cfg.json().clone();
    json.remove("rope_scaling");
    json.insert(
        "rope_parameters".into(),
        json!({"full_attention": dict(first), "sliding_attention": dict(second.unwrap_or(first))}),
    );
    let layers = SwaLayers {
        windows,
        second_base: thetas.iter().map(|&t| Some(t) == second).collect(),
        nope: thetas.iter().map(|&t| t == 0.0).collect(),
    };
    Ok((Config::from_map(json), layers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// Every fourth layer full by default; two bases as the two dicts, 0 as no RoPE.
    #[test]
    fn layer_types_and_bases() {
        let (c, layers) = decoder_config(&cfg(
            r#"{"model_type": "granite_swa", "num_hidden_layers": 5, "rope_theta": 7.0}"#,
        ))
        .unwrap();
        let w = Some(128);
        assert_eq!(layers.windows, vec![None, w, w, w, None]);
        assert_eq!((layers.second_base, layers.nope), (vec![false; 5], vec![false; 5]));
        assert_eq!(c.rope(Some("full_attention")).unwrap().theta, 7.0);
        let (c, layers) = decoder_config(&cfg(
            r#"{"model_type": "granite_swa", "num_hidden_layers": 3, "layer_rope_theta": [0, 50, 3000]}"#,
        ))
        .unwrap();
        assert_eq!((layers.second_base, layers.nope), (vec![false, false, true], vec![true, false, false]));
        assert_eq!(c.rope(Some("full_attention")).unwrap().theta, 50.0);
        assert_eq!(c.rope(Some("sliding_attention")).unwrap().theta, 3000.0);
        let three = r#"{"model_type": "granite_swa", "num_hidden_layers": 3, "layer_rope_theta": [1, 2, 3]}"#;
        assert!(decoder_config(&cfg(three)).is_err());
    }
}
