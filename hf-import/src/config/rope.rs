//! RoPE settings from `config.json`: `rope_parameters` (transformers 5, possibly one set per layer
//! type) or `rope_theta` + `rope_scaling` (4.x), resolved the way transformers'
//! `standardize_rope_params` and `ROPE_INIT_FUNCTIONS` read them.

use serde_json::{Map, Value};

use super::Config;
use crate::error::{Error, Result};

/// How RoPE frequencies are scaled (`rope_type`).
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    /// Plain RoPE.
    Default,
    /// Positions divided by `factor`.
    Linear {
        /// the divisor
        factor: f64,
    },
    /// Llama 3's frequency-dependent scaling.
    Llama3 {
        /// scaling of the low frequencies
        factor: f64,
        /// wavelength bound (in units of the original context) of the low frequencies
        low_freq_factor: f64,
        /// wavelength bound of the high frequencies
        high_freq_factor: f64,
        /// the context length the model was trained on
        original_max_position_embeddings: f64,
    },
    /// Dynamic NTK scaling: once a forward's positions pass `max_position_embeddings`, the base
    /// grows with the sequence length (`max(position_ids) + 1`).
    Dynamic {
        /// the stretch applied at the sequence length
        factor: f64,
        /// the length up to which plain RoPE is used
        max_position_embeddings: f64,
    },
    /// YaRN: each frequency blends its interpolated (divided by `factor`) and original value,
    /// by where its wavelength falls between `beta_fast` and `beta_slow` rotations of the
    /// original context; cos and sin are scaled by `attention_factor`.
    Yarn {
        /// the interpolation divisor
        factor: f64,
        /// the context length the model was trained on
        original_max_position_embeddings: f64,
        /// rotations above which a frequency is kept as is
        beta_fast: f64,
        /// rotations below which a frequency is fully interpolated
        beta_slow: f64,
        /// whether the blend's bounds are rounded to whole dimensions
        truncate: bool,
        /// the factor on cos and sin
        attention_factor: f64,
    },
    /// LongRoPE (Phi-3 long-context models): each frequency divided by its own factor, from
    /// `long_factor` once a forward's positions pass `original_max_position_embeddings` and from
    /// `short_factor` before; cos and sin are scaled by `attention_factor`.
    LongRope {
        /// per-frequency divisors for sequences within the original context
        short_factor: Vec<f64>,
        /// per-frequency divisors for longer sequences
        long_factor: Vec<f64>,
        /// the context length the model was trained on
        original_max_position_embeddings: f64,
        /// the factor on cos and sin
        attention_factor: f64,
        /// PhiMoE's `(short_mscale, long_mscale)`: its rotary embedding divides by the short
        /// factors at every length and scales cos and sin by the first, or by the second once a
        /// forward's positions pass the original length (`attention_factor` unused)
        mscales: Option<(f64, f64)>,
    },
    /// Gemma 4's proportional RoPE: angles over the whole head, the first
    /// `floor(share · head_dim / 2)` of them at the frequencies `base^(-2i / head_dim) / factor`, the
    /// others zero (those dims pass unrotated).
    Proportional {
        /// the divisor of the frequencies (`factor`, default 1)
        factor: f64,
        /// the share of the angles that turn (the dict's `partial_rotary_factor`)
        share: f64,
    },
}

/// RoPE parameters for one kind of attention layer.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeParams {
    /// The base of the frequencies (`rope_theta`).
    pub theta: f64,
    /// The frequency scaling.
    pub scaling: RopeScaling,
    /// The fraction of each head that is rotated.
    pub partial_rotary_factor: f64,
    /// An odd number of rotated dims takes one more, as the families that rotate as many dims as
    /// their frequencies cover (`cos.shape[-1]`: Laguna, MiMo-V2-Flash) do; else it is refused.
    pub odd_rounds_up: bool,
}

/// The supported `rope_type`s, for error messages.
const SUPPORTED: &str = "default, linear, llama3, dynamic, yarn, longrope, proportional";

impl Config {
    /// RoPE parameters, for layers of `layer_type` when the config has one set per layer type
    /// (Gemma 3). Reads the rope dict transformers standardises (see `Config::rope_dict`); the
    /// dict's own `rope_theta` and `partial_rotary_factor` win over the top-level keys.
    pub fn rope(&self, layer_type: Option<&str>) -> Result<RopeParams> {
        self.check_rope_dicts()?;
        let top = self.rope_dict().unwrap_or_default();
        let none = Map::new();
        let (params, nested) = match layer_type.and_then(|lt| top.get(lt)) {
            Some(Value::Object(inner)) => (inner, true),
            // Gemma 3 reads its per-layer-type dicts only: keys of a flat dict are not used.
            _ if self.rope_per_layer_type() => (&none, true),
            _ => (&top, false),
        };
        let theta = match params.get("rope_theta") {
            Some(v) if !v.is_null() => v
                .as_f64()
                .ok_or_else(|| Error::Config(format!("rope \"rope_theta\" must be a number, got {v}")))?,
            _ => self.default_theta(layer_type)?,
        };
        let partial = match params.get("partial_rotary_factor").and_then(Value::as_f64) {
            Some(p) => p,
            // (`BambaConfig` rotates half of each head unless its rope dict says otherwise.)
            None if self.get("model_type").and_then(Value::as_str) == Some("bamba") => 0.5,
            // (`MiMoV2FlashRotaryEmbedding`'s default.)
            None if self.get("model_type").and_then(Value::as_str) == Some("mimo_v2_flash") => 0.334,
            // (`PersimmonConfig`'s default, its 4.x configs naming it at the top level.)
            None if self.get("model_type").and_then(Value::as_str) == Some("persimmon") => {
                self.f64_or("partial_rotary_factor", 0.5)?
            }
            // (`Qwen3_5TextConfig` rotates a quarter of each head unless its rope dict says otherwise.)
            None if matches!(
                self.get("model_type").and_then(Value::as_str),
                Some("qwen3_5_text" | "qwen3_next" | "qwen3_5_moe_text")
            ) =>
            {
                self.f64_or("partial_rotary_factor", 0.25)?
            }
            None => self.f64_or("partial_rotary_factor", 1.0)?,
        };
        let scaling = self.parse_scaling(params, nested, &top)?;
        // (Mistral 4's dict names the rotated share of its latent heads, `qk_rope_head_dim /
        // head_dim`: its rotary width is that share already.)
        let partial =
            if self.get("model_type").and_then(Value::as_str) == Some("mistral4") { 1.0 } else { partial };
        // (Proportional RoPE rotates the whole head, the share being of its angles that turn.)
        let (scaling, partial) = match scaling {
            RopeScaling::Proportional { factor, .. } if (0.0..=1.0).contains(&partial) => {
                (RopeScaling::Proportional { factor, share: partial }, 1.0)
            }
            scaling => (scaling, partial),
        };
        let phi3 = self.get("model_type").and_then(Value::as_str) == Some("phi3");
        if phi3 && !matches!(scaling, RopeScaling::Default | RopeScaling::LongRope { .. }) {
            // Phi3Config's validation
            return Err(Error::Config(
                "Phi-3's rope scaling must be \"longrope\" (or its older names \"su\" and \"yarn\")".into(),
            ));
        }
        let phimoe = self.get("model_type").and_then(Value::as_str) == Some("phimoe");
        if phimoe && !matches!(scaling, RopeScaling::Default | RopeScaling::LongRope { .. }) {
            // (PhiMoE's rotary embedding recomputes its frequencies without the sequence length
            // and scales them by `short_mscale`/`long_mscale`: only LongRoPE is what it meant.)
            return Err(Error::Unsupported("PhiMoE's rope scaling must be \"longrope\" or none".into()));
        }
        // Of the supported families only Phi, Phi-3, GPT-NeoX, GPT-J, CodeGen, StableLM, Nemotron,
        // GLM, GLM-4-MoE (and Sarvam-MoE), MiniMax-M2, Bamba, Qwen3.5, Laguna, Persimmon and MiMo-V2-Flash rotate part of each head; the others
        // rotate the whole head whatever the config says, except that transformers cannot run a
        // scaled RoPE with a partial factor (its frequencies are then too few).
        let neox = matches!(
            self.get("model_type").and_then(Value::as_str),
            Some(
                "gpt_neox"
                    | "phi"
                    | "gptj"
                    | "codegen"
                    | "stablelm"
                    | "nemotron"
                    | "glm"
                    | "glm4"
                    | "glm4_moe"
                    | "sarvam_moe"
                    | "minimax_m2"
                    | "bamba"
                    | "qwen3_5_text"
                    | "qwen3_next"
                    | "qwen3_5_moe_text"
                    | "laguna"
                    | "persimmon"
                    | "mimo_v2_flash"
            )
        );
        let partial = if phi3 || neox {
            partial
        } else if partial < 1.0 && scaling != RopeScaling::Default {
            return Err(Error::Config(format!(
                "\"partial_rotary_factor\" {partial} with a scaled RoPE: this family rotates whole heads, and \
                 transformers cannot run this combination"
            )));
        } else {
            1.0
        };
        if !(theta > 0.0 && theta.is_finite()) {
            // (transformers would run on and give NaN everywhere)
            return Err(Error::Config(format!("\"rope_theta\" must be a positive number, got {theta}")));
        }
        if !(partial > 0.0 && partial <= 1.0) {
            return Err(Error::Config(format!(
                "\"partial_rotary_factor\" must be in (0, 1] (the share of each head RoPE rotates), got {partial}"
            )));
        }
        let odd_rounds_up =
            matches!(self.get("model_type").and_then(Value::as_str), Some("laguna" | "mimo_v2_flash"));
        Ok(RopeParams { theta, scaling, partial_rotary_factor: partial, odd_rounds_up })
    }

    /// The config with `rope` as its `rope_parameters` where it names none (no `rope_parameters`
    /// and no non-empty `rope_scaling`), as config classes that set their own RoPE in
    /// `__post_init__` do (CWM, Ministral 3); a top-level `rope_theta` is then dropped, as they
    /// ignore it.
    pub fn with_class_rope(&self, rope: Value) -> Config {
        let scaling = matches!(self.get("rope_scaling"), Some(Value::Object(m)) if !m.is_empty());
        if self.get("rope_parameters").is_some() || scaling {
            return self.clone();
        }
        let mut json = self.json().clone();
        json.remove("rope_theta");
        json.insert("rope_parameters".into(), rope);
        Config::from_map(json)
    }

    /// The entry `key` of the rope dict (see `Config::rope_dict`), for a family that reads more of
    /// it than the frequencies (DeepSeek's attention scale); `None` when absent or null.
    pub fn rope_entry(&self, key: &str) -> Option<Value> {
        self.rope_dict().and_then(|d| d.get(key).cloned()).filter(|v| !v.is_null())
    }

    /// The rope dict transformers builds in `convert_rope_params_to_dict`: the 4.x `rope_scaling` when
    /// it is a non-empty dict, else `rope_parameters` (`rope_scaling or rope_parameters`). Gemma 3
    /// (`Gemma3TextConfig`) instead merges `rope_scaling` into `rope_parameters["full_attention"]`,
    /// its per-layer-type dicts otherwise defaulting. `None` when there is no dict at all.
    fn rope_dict(&self) -> Option<Map<String, Value>> {
        // (a rope dict that is not an object is refused by `check_rope_dicts`)
        let object = |key: &str| match self.get(key) {
            Some(Value::Object(m)) => Some(m.clone()),
            _ => None,
        };
        let scaling = object("rope_scaling").filter(|m| !m.is_empty());
        if !self.rope_per_layer_type() {
            return scaling.or_else(|| object("rope_parameters"));
        }
        // (`MellumConfig` and `LagunaConfig` read no 4.x `rope_scaling`; Granite-SWA's is in its dicts.)
        let scaling = scaling.filter(|_| !self.rope_dicts_only());
        let mut dict = object("rope_parameters").unwrap_or_default();
        if let Some(scaling) = scaling {
            let full = dict.entry("full_attention").or_insert_with(|| Value::Object(Map::new()));
            if !full.is_object() {
                *full = Value::Object(Map::new());
            }
            if let Value::Object(full) = full {
                full.extend(scaling);
            }
        }
        Some(dict)
    }

    /// `rope_scaling` and `rope_parameters` are objects or null when present.
    fn check_rope_dicts(&self) -> Result<()> {
        for key in ["rope_scaling", "rope_parameters"] {
            match self.get(key) {
                None | Some(Value::Null) | Some(Value::Object(_)) => {}
                Some(v) => return Err(Error::Config(format!("\"{key}\" must be an object, got {v}"))),
            }
        }
        Ok(())
    }

    /// Whether this is a Gemma 3 text config, whose sliding and global layers have RoPE bases of
    /// their own.
    fn is_gemma3(&self) -> bool {
        matches!(self.get("model_type").and_then(Value::as_str), Some("gemma3_text" | "gemma3n_text"))
    }

    /// Whether this is an OLMo 3 config (per-layer-type RoPE as Gemma 3's).
    fn is_olmo3(&self) -> bool {
        self.get("model_type").and_then(Value::as_str) == Some("olmo3")
    }

    /// Whether this is a Laguna, Mellum or MiMo-V2-Flash config (per-layer-type RoPE as Gemma 3's,
    /// each dict with its own `partial_rotary_factor`; no 4.x `rope_scaling`).
    fn is_laguna_like(&self) -> bool {
        matches!(self.get("model_type").and_then(Value::as_str), Some("laguna" | "mellum" | "mimo_v2_flash"))
    }

    /// Whether this is a Gemma 4 text or LFM3 config (per-layer-type RoPE dicts alone, 4.x
    /// `rope_scaling` not read: their config classes keep the dicts as given; default bases 1e4 on
    /// sliding layers, 1e6 on full ones).
    fn is_gemma4(&self) -> bool {
        matches!(self.get("model_type").and_then(Value::as_str), Some("gemma4_text" | "lfm3"))
    }

    /// Whether the rope dicts are per layer type alone, no 4.x `rope_scaling` merged: Laguna's and
    /// Mellum's, and the decoder config hf-import writes for Granite-SWA (its two RoPE bases as
    /// the two layer types' dicts).
    fn rope_dicts_only(&self) -> bool {
        self.is_laguna_like()
            || self.is_gemma4()
            || matches!(
                self.get("model_type").and_then(Value::as_str),
                Some("granite_swa" | "granitemoe_swa")
            )
    }

    /// Whether the config class keeps one rope dict per layer type, merging a 4.x `rope_scaling`
    /// into the `full_attention` one (Gemma 3, OLMo 3; Laguna, Mellum and Granite-SWA without the
    /// merge).
    fn rope_per_layer_type(&self) -> bool {
        self.is_gemma3() || self.is_olmo3() || self.rope_dicts_only()
    }

    /// The RoPE base of layers of `layer_type` whose rope dict names none, as the config classes
    /// set it: for Gemma 3 (`Gemma3TextConfig.default_theta`), `rope_local_base_freq` (default
    /// 10000) on sliding layers and `rope_theta` (default 1e6) on the others; else `rope_theta`
    /// (default the class's: 10000, Mixtral's 1e6, Cohere's and ERNIE 4.5's 5e5, SmolLM3's 2e6,
    /// NomicBERT's 1000).
    fn default_theta(&self, layer_type: Option<&str>) -> Result<f64> {
        let modernbert = matches!(
            self.get("model_type").and_then(Value::as_str),
            Some("modernbert" | "modernbert-decoder")
        );
        match layer_type {
            // `ModernBertConfig.default_theta` (4.x configs name them `local_rope_theta` and
            // `global_rope_theta`).
            Some("sliding_attention") if modernbert => self.f64_or("local_rope_theta", 10_000.0),
            _ if modernbert => self.f64_or("global_rope_theta", 160_000.0),
            Some("sliding_attention") if self.is_gemma3() => self.f64_or("rope_local_base_freq", 10_000.0),
            _ if self.is_gemma3() => self.f64_or("rope_theta", 1_000_000.0),
            // `Olmo3Config.convert_rope_params_to_dict`: the full layers take `rope_theta`, which
            // it pops, so the sliding ones get `default_theta` (500000) whatever `rope_theta` is.
            Some("sliding_attention") if self.is_olmo3() => Ok(500_000.0),
            _ if self.is_olmo3() => self.f64_or("rope_theta", 500_000.0),
            // (`LagunaConfig` and `MellumConfig` name both in their default dicts.)
            Some("sliding_attention") if self.is_laguna_like() || self.is_gemma4() => Ok(10_000.0),
            // (`Gemma4TextConfig`'s default dicts.)
            _ if self.is_gemma4() => Ok(1_000_000.0),
            _ if self.get("model_type").and_then(Value::as_str) == Some("mimo_v2_flash") => Ok(5_000_000.0),
            _ if self.is_laguna_like() => Ok(500_000.0),
            // The `default_theta` of `MixtralConfig`, `PhimoeConfig`, `CohereConfig`, `Ernie4_5Config`,
            // `SmolLM3Config`, `GptOssConfig`, `HeliumConfig`, `FlexOlmoConfig`, `Lfm2Config`,
            // `CwmConfig`, `SolarOpenConfig`, `SarvamMoEConfig`, `MiniMaxM2Config`, `Llama4TextConfig`, `HYV3Config`
            // and `BitNetConfig`.
            _ => {
                let default = match self.get("model_type").and_then(Value::as_str) {
                    Some("mixtral" | "phimoe") => 1_000_000.0,
                    Some("cohere" | "ernie4_5" | "ernie4_5_moe" | "exaone" | "bitnet") => 500_000.0,
                    Some("smollm3") => 2_000_000.0,
                    Some("gpt_oss") => 150_000.0,
                    Some("helium") => 100_000.0,
                    Some("flex_olmo") => 500_000.0,
                    Some("lfm2" | "lfm2_moe" | "cwm" | "solar_open") => 1_000_000.0,
                    Some("sarvam_moe") => 8_000_000.0,
                    Some("minimax_m2") => 5_000_000.0,
                    Some("llama4_text") => 500_000.0,
                    Some("hy_v3") => 11_158_840.0,
                    Some("nomic_bert") => 1_000.0,
                    Some("gte") => 160_000.0,
                    _ => 10_000.0,
                };
                self.f64_or("rope_theta", default)
            }
        }
    }

    /// The scaling described by one rope dict `s` (nested: one of several per-layer-type dicts within
    /// `top`, the whole rope dict; else `s` is `top`).
    fn parse_scaling(
        &self,
        s: &Map<String, Value>,
        nested: bool,
        top: &Map<String, Value>,
    ) -> Result<RopeScaling> {
        let mut kind =
            s.get("rope_type").or_else(|| s.get("type")).and_then(Value::as_str).unwrap_or("default");
        // Phi-3's configuration class renames its older names for LongRoPE.
        if self.get("model_type").and_then(Value::as_str) == Some("phi3") && matches!(kind, "su" | "yarn") {
            kind = "longrope";
        }
        let opt = |k: &str| -> Result<Option<f64>> {
            match s.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                    Error::Config(format!("rope scaling \"{kind}\": \"{k}\" must be a number, got {v}"))
                }),
            }
        };
        let num = |k: &str| {
            opt(k)?.ok_or_else(|| Error::Config(format!("rope scaling \"{kind}\" needs a number \"{k}\"")))
        };
        let max_positions = || {
            self.opt_f64("max_position_embeddings")?.ok_or_else(|| {
                Error::Config(format!("rope scaling \"{kind}\" needs \"max_position_embeddings\""))
            })
        };
        // As `standardize_rope_params`: a top-level `original_max_position_embeddings` (Phi-3 keeps
        // it there, default 4096) wins over the rope dict's, which defaults to the model's maximum.
        let original_max = || -> Result<f64> {
            if !nested {
                if let Some(v) = self.opt_f64("original_max_position_embeddings")? {
                    return Ok(v);
                }
                if self.get("model_type").and_then(Value::as_str) == Some("phi3") {
                    return Ok(4096.0);
                }
            }
            match opt("original_max_position_embeddings")? {
                Some(v) => Ok(v),
                None => max_positions(),
            }
        };
        Ok(match kind {
            "default" => RopeScaling::Default,
            "linear" => RopeScaling::Linear { factor: num("factor")? },
            "llama3" => RopeScaling::Llama3 {
                factor: num("factor")?,
                low_freq_factor: num("low_freq_factor")?,
                high_freq_factor: num("high_freq_factor")?,
                original_max_position_embeddings: original_max()?,
            },
            "proportional" => {
                let factor = opt("factor")?.unwrap_or(1.0);
                if !(factor > 0.0 && factor.is_finite()) {
                    return Err(Error::Config(format!(
                        "rope scaling \"proportional\": \"factor\" must be a positive number, got {factor}"
                    )));
                }
                RopeScaling::Proportional { factor, share: 1.0 }
            }
            "dynamic" => {
                RopeScaling::Dynamic { factor: num("factor")?, max_position_embeddings: max_positions()? }
            }
            "yarn" => {
                let original = original_max()?;
                let factor = match opt("factor")? {
                    Some(f) => f,
                    None => max_positions()? / original,
                };
                let mscale = |scale: f64, m: f64| if scale <= 1.0 { 1.0 } else { 0.1 * m * scale.ln() + 1.0 };
                let attention_factor = match opt("attention_factor")? {
                    Some(a) => a,
                    None => match (opt("mscale")?, opt("mscale_all_dim")?) {
                        (Some(m), Some(all)) if m != 0.0 && all != 0.0 => {
                            mscale(factor, m) / mscale(factor, all)
                        }
                        _ => mscale(factor, 1.0),
                    },
                };
                let truncate = yarn_truncate(top)?;
                // `or 32` / `or 1`: a zero counts as unset.
                let beta = |k: &str, default: f64| {
                    Ok::<f64, Error>(opt(k)?.filter(|b| *b != 0.0).unwrap_or(default))
                };
                RopeScaling::Yarn {
                    factor,
                    original_max_position_embeddings: original,
                    beta_fast: beta("beta_fast", 32.0)?,
                    beta_slow: beta("beta_slow", 1.0)?,
                    truncate,
                    attention_factor,
                }
            }
            "longrope" => {
                let original = original_max()?;
                let factors = |k: &str| -> Result<Vec<f64>> {
                    let list = s.get(k).and_then(Value::as_array).ok_or_else(|| {
                        Error::Config(format!("rope scaling \"longrope\" needs a list of numbers \"{k}\""))
                    })?;
                    list.iter()
                        .map(|v| {
                            v.as_f64().ok_or_else(|| {
                                Error::Config(format!(
                                    "rope scaling \"longrope\": \"{k}\" holds {v}, not a number"
                                ))
                            })
                        })
                        .collect()
                };
                let factor = match opt("factor")? {
                    Some(f) => f,
                    None => max_positions()? / original,
                };
                let attention_factor = match opt("attention_factor")? {
                    Some(a) => a,
                    None if factor <= 1.0 => 1.0,
                    None => (1.0 + factor.ln() / original.ln()).sqrt(),
                };
                let mscales = if self.get("model_type").and_then(Value::as_str) == Some("phimoe") {
                    Some((num("short_mscale")?, num("long_mscale")?))
                } else {
                    None
                };
                RopeScaling::LongRope {
                    short_factor: factors("short_factor")?,
                    long_factor: factors("long_factor")?,
                    original_max_position_embeddings: original,
                    attention_factor,
                    mscales,
                }
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "rope_type \"{other}\" is not supported (supported: {SUPPORTED})"
                )))
            }
        })
    }
}

/// YaRN's `truncate` as `_compute_yarn_parameters` reads it: `config.rope_parameters.get("truncate",
/// True)`, from the top level of the whole rope dict `top` (with per-layer-type dicts, beside them,
/// not inside), true when absent and false when null.
fn yarn_truncate(top: &Map<String, Value>) -> Result<bool> {
    match top.get("truncate") {
        None => Ok(true),
        Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => {
            Err(Error::Config(format!("rope scaling \"yarn\": \"truncate\" must be a boolean, got {v}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DType;

    #[test]
    fn partial_rotary_factor_must_be_a_share_of_the_head() {
        for (json, ok) in [
            (r#"{"model_type": "phi3", "partial_rotary_factor": 0.5}"#, true),
            (
                r#"{"model_type": "phi3", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 1.0}}"#,
                true,
            ),
            (r#"{"model_type": "phi3", "partial_rotary_factor": 0.0}"#, false),
            (r#"{"model_type": "phi3", "partial_rotary_factor": 1000000000000.0}"#, false),
            (
                r#"{"model_type": "phi3", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": -1.0}}"#,
                false,
            ),
        ] {
            let rope = Config::from_json_str(json).unwrap().rope(None);
            match rope {
                Ok(_) => assert!(ok, "{json} was accepted"),
                Err(e) => {
                    assert!(!ok, "{json}: {e}");
                    assert!(e.to_string().contains("\"partial_rotary_factor\" must be in (0, 1]"), "{e}");
                }
            }
        }
    }

    /// A base that is not a positive number, or a rope dict that is not an object, is a config
    /// error (transformers would run on and give NaN or ignore it).
    #[test]
    fn rope_bases_and_dicts_are_checked() {
        for (json, needle) in [
            (r#"{"rope_theta": 0.0}"#, "\"rope_theta\" must be a positive number, got 0"),
            (r#"{"rope_parameters": {"rope_type": "default", "rope_theta": -5.0}}"#, "got -5"),
            (r#"{"rope_parameters": "x"}"#, "\"rope_parameters\" must be an object"),
            (r#"{"rope_scaling": [1]}"#, "\"rope_scaling\" must be an object"),
        ] {
            let e = Config::from_json_str(json).unwrap().rope(None).unwrap_err().to_string();
            assert!(e.contains(needle), "{json}: {e}");
        }
        assert!(Config::from_json_str(r#"{"rope_scaling": null}"#).unwrap().rope(None).is_ok());
    }

    #[test]
    fn gemma3_rope_in_both_key_styles() {
        let v4 = Config::from_json_str(
            r#"{"model_type": "gemma3_text", "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "torch_dtype": "bfloat16"}"#,
        )
        .unwrap();
        let v5 = Config::from_json_str(
            r#"{"model_type": "gemma3_text", "dtype": "bfloat16", "rope_parameters": {
                "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}"#,
        )
        .unwrap();
        for cfg in [&v4, &v5] {
            let global = cfg.rope(Some("full_attention")).unwrap();
            assert_eq!(global.theta, 1e6);
            assert_eq!(global.scaling, RopeScaling::Linear { factor: 8.0 });
            let local = cfg.rope(Some("sliding_attention")).unwrap();
            assert_eq!((local.theta, local.scaling), (1e4, RopeScaling::Default));
            assert_eq!(cfg.dtype(), Some(DType::BF16));
        }
    }

    /// The config classes' `default_theta` where a config names no base (a rope dict without
    /// `rope_theta` too): Mixtral's 1e6, Cohere's and ERNIE 4.5's 5e5, SmolLM3's 2e6, Cohere 2's
    /// (and Llama's) 1e4.
    #[test]
    fn class_default_rope_bases() {
        for (model_type, theta) in [
            ("mixtral", 1e6),
            ("cohere", 5e5),
            ("ernie4_5", 5e5),
            ("smollm3", 2e6),
            ("nomic_bert", 1e3),
            ("gte", 1.6e5),
            ("cohere2", 1e4),
            ("llama", 1e4),
        ] {
            for json in [
                format!(r#"{{"model_type": "{model_type}"}}"#),
                format!(r#"{{"model_type": "{model_type}", "rope_parameters": {{"rope_type": "default"}}}}"#),
            ] {
                let cfg = Config::from_json_str(&json).unwrap();
                assert_eq!(cfg.rope(None).unwrap().theta, theta, "{json}");
            }
            let set =
                Config::from_json_str(&format!(r#"{{"model_type": "{model_type}", "rope_theta": 7.0}}"#));
            assert_eq!(set.unwrap().rope(None).unwrap().theta, 7.0, "{model_type}");
        }
    }

    /// `Gemma3TextConfig.default_theta`: 1e6 for global layers, 10000 for sliding ones, in both key
    /// styles; the 4.x `rope_scaling` applies to global layers only.
    #[test]
    fn gemma3_rope_bases_default_as_transformers() {
        let v4 = Config::from_json_str(
            r#"{"model_type": "gemma3_text", "rope_scaling": {"rope_type": "linear", "factor": 8.0}}"#,
        )
        .unwrap();
        let v5 = Config::from_json_str(
            r#"{"model_type": "gemma3_text", "rope_parameters": {
                "full_attention": {"rope_type": "linear", "factor": 8.0},
                "sliding_attention": {"rope_type": "default"}}}"#,
        )
        .unwrap();
        for cfg in [&v4, &v5] {
            let global = cfg.rope(Some("full_attention")).unwrap();
            assert_eq!((global.theta, global.scaling), (1e6, RopeScaling::Linear { factor: 8.0 }));
            let local = cfg.rope(Some("sliding_attention")).unwrap();
            assert_eq!((local.theta, local.scaling), (1e4, RopeScaling::Default));
        }
        // Only the key that is set changes.
        let theta_only =
            Config::from_json_str(r#"{"model_type": "gemma3_text", "rope_theta": 5e5}"#).unwrap();
        assert_eq!(theta_only.rope(Some("full_attention")).unwrap().theta, 5e5);
        assert_eq!(theta_only.rope(Some("sliding_attention")).unwrap().theta, 1e4);
        let local_only =
            Config::from_json_str(r#"{"model_type": "gemma3_text", "rope_local_base_freq": 2e4}"#).unwrap();
        assert_eq!(local_only.rope(Some("full_attention")).unwrap().theta, 1e6);
        assert_eq!(local_only.rope(Some("sliding_attention")).unwrap().theta, 2e4);
        // Other models keep transformers' usual default.
        let llama = Config::from_json_str(r#"{"model_type": "llama"}"#).unwrap();
        assert_eq!(llama.rope(Some("full_attention")).unwrap().theta, 1e4);
    }

    /// transformers 5.24: only Phi-3 rotates part of each head (a Llama, Qwen or Gemma config's
    /// `partial_rotary_factor` 0.5 leaves the logits unchanged, and with a scaled RoPE fails on a
    /// shape mismatch); Phi-3 takes no scaling but LongRoPE; Gemma 3 ignores a flat
    /// `rope_parameters` dict (only its per-layer-type dicts count).
    #[test]
    fn partial_rotation_is_phi3s_and_gemma3_reads_per_layer_type_dicts_only() {
        let rope = |json: &str, lt: Option<&str>| Config::from_json_str(json).unwrap().rope(lt);
        for json in [
            r#"{"model_type": "llama", "partial_rotary_factor": 0.5}"#,
            r#"{"model_type": "qwen3", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}}"#,
        ] {
            assert_eq!(rope(json, Some("full_attention")).unwrap().partial_rotary_factor, 1.0, "{json}");
        }
        let phi3 = r#"{"model_type": "phi3", "partial_rotary_factor": 0.5}"#;
        assert_eq!(rope(phi3, None).unwrap().partial_rotary_factor, 0.5);
        let scaled = r#"{"model_type": "llama", "partial_rotary_factor": 0.5,
                         "rope_scaling": {"rope_type": "linear", "factor": 2.0}}"#;
        assert!(rope(scaled, None).unwrap_err().to_string().contains("partial_rotary_factor"));
        let phi3_linear = r#"{"model_type": "phi3", "rope_scaling": {"rope_type": "linear", "factor": 2.0}}"#;
        assert!(rope(phi3_linear, None).unwrap_err().to_string().contains("longrope"));
        let flat = r#"{"model_type": "gemma3_text",
                       "rope_parameters": {"rope_type": "linear", "factor": 8.0, "rope_theta": 5.0}}"#;
        let global = rope(flat, Some("full_attention")).unwrap();
        assert_eq!((global.theta, global.scaling), (1e6, RopeScaling::Default));
        assert_eq!(rope(flat, Some("sliding_attention")).unwrap().theta, 1e4);
    }

    #[test]
    fn phi3_longrope_reads_the_top_level_original_length_and_old_type_names() {
        let cfg = Config::from_json_str(
            r#"{"model_type": "phi3", "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                "rope_scaling": {"type": "su", "short_factor": [1.0, 2.0], "long_factor": [3.0, 4.0]}}"#,
        )
        .unwrap();
        let RopeScaling::LongRope { original_max_position_embeddings, attention_factor, long_factor, .. } =
            cfg.rope(None).unwrap().scaling
        else {
            panic!("not longrope")
        };
        assert_eq!(original_max_position_embeddings, 4096.0);
        assert_eq!(long_factor, vec![3.0, 4.0]);
        // sqrt(1 + ln(32) / ln(4096)), as transformers computes it
        assert!((attention_factor - (1.0f64 + 32f64.ln() / 4096f64.ln()).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn yarn_defaults_follow_transformers() {
        let cfg = Config::from_json_str(
            r#"{"model_type": "qwen2", "max_position_embeddings": 32768,
                "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}"#,
        )
        .unwrap();
        let RopeScaling::Yarn { beta_fast, beta_slow, truncate, attention_factor, .. } =
            cfg.rope(None).unwrap().scaling
        else {
            panic!("not yarn")
        };
        assert_eq!((beta_fast, beta_slow, truncate), (32.0, 1.0, true));
        assert!((attention_factor - (0.1 * 4f64.ln() + 1.0)).abs() < 1e-15);
    }

    /// `convert_rope_params_to_dict`: `rope_scaling or rope_parameters`, the chosen dict's own
    /// `rope_theta` winning over the top-level one; an empty `rope_scaling` does not count.
    #[test]
    fn rope_scaling_wins_over_rope_parameters() {
        let both = Config::from_json_str(
            r#"{"rope_theta": 5e5, "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4},
                "rope_scaling": {"rope_type": "linear", "factor": 4.0}}"#,
        )
        .unwrap();
        let rope = both.rope(Some("full_attention")).unwrap();
        assert_eq!((rope.theta, rope.scaling), (5e5, RopeScaling::Linear { factor: 4.0 }));
        let empty = Config::from_json_str(
            r#"{"rope_theta": 5e5, "rope_parameters": {"rope_type": "linear", "factor": 2.0}, "rope_scaling": {}}"#,
        )
        .unwrap();
        let rope = empty.rope(None).unwrap();
        assert_eq!((rope.theta, rope.scaling), (5e5, RopeScaling::Linear { factor: 2.0 }));
        let own = Config::from_json_str(
            r#"{"model_type": "phi3", "rope_theta": 5e5, "partial_rotary_factor": 0.5,
                "rope_scaling": {"rope_type": "default", "rope_theta": 7.0, "partial_rotary_factor": 0.25}}"#,
        )
        .unwrap();
        let rope = own.rope(None).unwrap();
        assert_eq!((rope.theta, rope.partial_rotary_factor), (7.0, 0.25));
    }

    /// `Gemma3TextConfig` merges a `rope_scaling` next to nested `rope_parameters` into
    /// `full_attention`.
    #[test]
    fn gemma3_merges_rope_scaling_into_the_global_parameters() {
        let cfg = Config::from_json_str(
            r#"{"model_type": "gemma3_text", "rope_scaling": {"rope_type": "linear", "factor": 8.0},
                "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 2e6},
                                    "sliding_attention": {"rope_type": "default", "rope_theta": 3e4}}}"#,
        )
        .unwrap();
        let global = cfg.rope(Some("full_attention")).unwrap();
        assert_eq!((global.theta, global.scaling), (2e6, RopeScaling::Linear { factor: 8.0 }));
        let local = cfg.rope(Some("sliding_attention")).unwrap();
        assert_eq!((local.theta, local.scaling), (3e4, RopeScaling::Default));
    }

    /// `truncate` comes from the top level of the dict in use: a 4.x `rope_scaling` too, but not from
    /// inside a per-layer-type dict.
    #[test]
    fn yarn_truncate_comes_from_the_dict_in_use() {
        fn truncate(json: &str, layer_type: Option<&str>) -> bool {
            let cfg = Config::from_json_str(json).unwrap();
            match cfg.rope(layer_type).unwrap().scaling {
                RopeScaling::Yarn { truncate, .. } => truncate,
                other => panic!("not yarn: {other:?}"),
            }
        }
        let yarn = r#""rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024"#;
        let v4 =
            format!(r#"{{"max_position_embeddings": 4096, "rope_scaling": {{{yarn}, "truncate": false}}}}"#);
        assert!(!truncate(&v4, None));
        let v5 = format!(
            r#"{{"max_position_embeddings": 4096, "rope_parameters": {{{yarn}, "truncate": false}}}}"#
        );
        assert!(!truncate(&v5, None));
        let null = format!(
            r#"{{"max_position_embeddings": 4096, "rope_parameters": {{{yarn}, "truncate": null}}}}"#
        );
        assert!(!truncate(&null, None));
        let nested = format!(
            r#"{{"model_type": "gemma3_text", "max_position_embeddings": 4096,
                "rope_parameters": {{"full_attention": {{{yarn}, "truncate": false}}}}}}"#
        );
        assert!(truncate(&nested, Some("full_attention")));
    }

    #[test]
    fn unknown_types_list_the_supported_ones() {
        let cfg = Config::from_json_str(r#"{"rope_scaling": {"rope_type": "fancy", "factor": 4}}"#).unwrap();
        let msg = cfg.rope(None).unwrap_err().to_string();
        assert!(
            msg.contains("rope_type \"fancy\" is not supported (supported: default, linear, llama3"),
            "{msg}"
        );
        let bad =
            Config::from_json_str(r#"{"rope_scaling": {"rope_type": "dynamic", "factor": 2}}"#).unwrap();
        assert!(bad.rope(None).unwrap_err().to_string().contains("max_position_embeddings"));
    }
}
