//! `config.json`, read in both the transformers 5 key style (`dtype`, `rope_parameters`) and the 4.x
//! one (`torch_dtype`, `rope_theta`, `rope_scaling`).

use std::path::Path;

use oxtorch_tensor::DType;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A model's `config.json`, with typed getters that name the missing or mistyped key.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    json: Map<String, Value>,
}

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
}

impl Config {
    /// Reads `config.json` from a model folder.
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_file(&dir.join("config.json"))
    }

    /// Reads a config file.
    pub fn load_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json_str(&text).map_err(|e| Error::format(path, e.to_string()))
    }

    /// Parses the text of a config file.
    pub fn from_json_str(text: &str) -> Result<Self> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(json)) => Ok(Config { json }),
            Ok(_) => Err(Error::Config("config.json is not a JSON object".into())),
            Err(e) => Err(Error::Config(format!("invalid JSON: {e}"))),
        }
    }

    /// The raw value of `key`, `None` when absent or null.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.json.get(key).filter(|v| !v.is_null())
    }

    /// `model_type`.
    pub fn model_type(&self) -> Result<&str> {
        self.str("model_type")
    }

    /// `architectures` (empty when absent).
    pub fn architectures(&self) -> Vec<String> {
        self.get("architectures")
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }

    /// The string at `key`.
    pub fn str(&self, key: &str) -> Result<&str> {
        self.get(key)
            .ok_or_else(|| Error::Config(format!("missing key \"{key}\"")))?
            .as_str()
            .ok_or_else(|| Error::Config(format!("\"{key}\" must be a string")))
    }

    /// The string at `key`, or `default`.
    pub fn str_or<'a>(&'a self, key: &str, default: &'a str) -> Result<&'a str> {
        if self.get(key).is_some() {
            self.str(key)
        } else {
            Ok(default)
        }
    }

    /// The non-negative integer at `key`, `None` when absent or null.
    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => {
                v.as_u64().and_then(|n| usize::try_from(n).ok()).map(Some).ok_or_else(|| {
                    Error::Config(format!("\"{key}\" must be a non-negative integer, got {v}"))
                })
            }
        }
    }

    /// The non-negative integer at `key`.
    pub fn usize(&self, key: &str) -> Result<usize> {
        self.opt_usize(key)?.ok_or_else(|| Error::Config(format!("missing key \"{key}\"")))
    }

    /// The non-negative integer at `key`, or `default`.
    pub fn usize_or(&self, key: &str, default: usize) -> Result<usize> {
        Ok(self.opt_usize(key)?.unwrap_or(default))
    }

    /// The number at `key`, `None` when absent or null.
    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| Error::Config(format!("\"{key}\" must be a number, got {v}"))),
        }
    }

    /// The number at `key`, or `default`.
    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64> {
        Ok(self.opt_f64(key)?.unwrap_or(default))
    }

    /// The boolean at `key`, or `default`.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => {
                v.as_bool().ok_or_else(|| Error::Config(format!("\"{key}\" must be a boolean, got {v}")))
            }
        }
    }

    /// The dtype the checkpoint was saved in (`dtype`, or 4.x's `torch_dtype`).
    pub fn dtype(&self) -> Option<DType> {
        let name = self.get("dtype").or_else(|| self.get("torch_dtype"))?.as_str()?;
        parse_dtype(name)
    }

    /// The per-layer attention kinds (`layer_types`: `full_attention` / `sliding_attention`), if given.
    pub fn layer_types(&self) -> Option<Vec<String>> {
        let a = self.get("layer_types")?.as_array()?;
        a.iter().map(|v| v.as_str().map(str::to_string)).collect()
    }

    /// RoPE parameters, for layers of `layer_type` when the config has one set per layer type
    /// (Gemma 3). Reads `rope_parameters` (transformers 5) or `rope_theta` + `rope_scaling` (4.x).
    pub fn rope(&self, layer_type: Option<&str>) -> Result<RopeParams> {
        let mut partial = self.f64_or("partial_rotary_factor", 1.0)?;
        let (theta, scaling) = if let Some(Value::Object(params)) = self.get("rope_parameters") {
            let params = match layer_type.and_then(|lt| params.get(lt)) {
                Some(Value::Object(inner)) => inner,
                _ => params,
            };
            let theta = params.get("rope_theta").and_then(Value::as_f64).unwrap_or(10_000.0);
            if let Some(p) = params.get("partial_rotary_factor").and_then(Value::as_f64) {
                partial = p;
            }
            (theta, Some(params))
        } else {
            // Gemma 3 in 4.x style: sliding layers use `rope_local_base_freq` and no scaling.
            let local =
                self.opt_f64("rope_local_base_freq")?.filter(|_| layer_type == Some("sliding_attention"));
            let theta = local.unwrap_or(self.f64_or("rope_theta", 10_000.0)?);
            let scaling = match self.get("rope_scaling") {
                Some(Value::Object(s)) if local.is_none() => Some(s),
                _ => None,
            };
            (theta, scaling)
        };
        let scaling = match scaling {
            Some(s) => parse_scaling(s)?,
            None => RopeScaling::Default,
        };
        Ok(RopeParams { theta, scaling, partial_rotary_factor: partial })
    }
}

fn parse_scaling(s: &Map<String, Value>) -> Result<RopeScaling> {
    let kind = s.get("rope_type").or_else(|| s.get("type")).and_then(Value::as_str).unwrap_or("default");
    let num = |k: &str| {
        s.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| Error::Config(format!("rope scaling \"{kind}\" needs a number \"{k}\"")))
    };
    Ok(match kind {
        "default" => RopeScaling::Default,
        "linear" => RopeScaling::Linear { factor: num("factor")? },
        "llama3" => RopeScaling::Llama3 {
            factor: num("factor")?,
            low_freq_factor: num("low_freq_factor")?,
            high_freq_factor: num("high_freq_factor")?,
            original_max_position_embeddings: num("original_max_position_embeddings")?,
        },
        other => {
            return Err(Error::Unsupported(format!(
                "rope_type \"{other}\" is not supported (supported: default, linear, llama3)"
            )))
        }
    })
}

/// A dtype from its name in a config or on the command line (`bfloat16`, `bf16`, `torch.float32`, ...).
pub fn parse_dtype(name: &str) -> Option<DType> {
    Some(match name.trim_start_matches("torch.") {
        "float32" | "f32" | "float" | "fp32" => DType::F32,
        "bfloat16" | "bf16" => DType::BF16,
        "float16" | "f16" | "half" | "fp16" => DType::F16,
        "float64" | "f64" | "double" => DType::F64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn errors_name_the_key() {
        let cfg =
            Config::from_json_str(r#"{"hidden_size": "big", "rope_scaling": {"type": "yarn", "factor": 4}}"#)
                .unwrap();
        assert_eq!(
            cfg.usize("hidden_size").unwrap_err().to_string(),
            "config: \"hidden_size\" must be a non-negative integer, got \"big\""
        );
        assert_eq!(cfg.usize("vocab_size").unwrap_err().to_string(), "config: missing key \"vocab_size\"");
        assert!(cfg.rope(None).unwrap_err().to_string().contains("rope_type \"yarn\" is not supported"));
        assert!(Config::from_json_str("[1]").is_err());
    }
}
