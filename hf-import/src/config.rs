//! `config.json`, read in both the transformers 5 key style (`dtype`, `rope_parameters`) and the 4.x
//! one (`torch_dtype`, `rope_theta`, `rope_scaling`).

use std::path::Path;

use oxtorch_tensor::DType;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod class_defaults;
mod python_floats;
mod rope;

pub use python_floats::float_of;
pub use rope::{RopeParams, RopeScaling};

/// The most layers a config may declare: far above any published model (a few hundred), far below
/// what would exhaust memory in per-layer bookkeeping.
pub const MAX_LAYERS: usize = 1 << 14;

/// A model's `config.json`, with typed getters that name the missing or mistyped key.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    json: Map<String, Value>,
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
        // (Python's bare `Infinity` and `NaN` read as transformers 5 writes them.)
        match serde_json::from_str::<Value>(&python_floats::with_tagged_floats(text)) {
            Ok(Value::Object(mut json)) => {
                class_defaults::fill(&mut json);
                Ok(Config { json })
            }
            Ok(_) => Err(Error::Config("config.json is not a JSON object".into())),
            Err(e) => Err(Error::Config(format!("invalid JSON: {e}"))),
        }
    }

    /// A config from a JSON object already parsed (a nested config, such as a multimodal
    /// checkpoint's `text_config`).
    pub fn from_map(mut json: Map<String, Value>) -> Self {
        class_defaults::fill(&mut json);
        Config { json }
    }

    /// The whole JSON object.
    pub fn json(&self) -> &Map<String, Value> {
        &self.json
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

    /// The layer count at `key` (`num_hidden_layers`, `n_layers`): at most [`MAX_LAYERS`], so that a
    /// corrupt config fails here instead of in a per-layer allocation the machine cannot hold.
    pub fn layers(&self, key: &str) -> Result<usize> {
        let n = self.usize(key)?;
        if n > MAX_LAYERS {
            return Err(Error::Config(format!(
                "\"{key}\" is {n}; at most {MAX_LAYERS} layers are supported"
            )));
        }
        Ok(n)
    }

    /// The non-negative integer at `key` of a field that may be null, as a config class with
    /// `key: int | None = default` reads it: `default` when the key is absent, `None` when it is null.
    pub fn nullable_usize_or(&self, key: &str, default: Option<usize>) -> Result<Option<usize>> {
        if self.json.contains_key(key) {
            self.opt_usize(key)
        } else {
            Ok(default)
        }
    }

    /// The number at `key` of a field that may be null (`key: float | None = default`): `default`
    /// when the key is absent, `None` when it is null.
    pub fn nullable_f64_or(&self, key: &str, default: Option<f64>) -> Result<Option<f64>> {
        if self.json.contains_key(key) {
            self.opt_f64(key)
        } else {
            Ok(default)
        }
    }

    /// The non-empty list of integers, each at least `min`, at `key` (`conv_dim`, `depths`, ...),
    /// or `default` where the key is absent or null.
    pub fn usize_list_or(&self, key: &str, default: &[usize], min: usize) -> Result<Vec<usize>> {
        let Some(v) = self.get(key).filter(|v| !v.is_null()) else { return Ok(default.to_vec()) };
        let bad = || Error::Config(format!("{key} must be a list of integers of at least {min}, got {v}"));
        let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
        items
            .iter()
            .map(|x| x.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|&n| n >= min).ok_or_else(bad))
            .collect()
    }

    /// The non-negative integer at `key`, or `default`.
    pub fn usize_or(&self, key: &str, default: usize) -> Result<usize> {
        Ok(self.opt_usize(key)?.unwrap_or(default))
    }

    /// The non-negative integer at `key`, else at `alias` (the name a config class's
    /// `attribute_map` gives it: `hidden_size` for GPT-2's `n_embd`), else `default`.
    pub fn usize_aliased(&self, key: &str, alias: &str, default: usize) -> Result<usize> {
        match (self.get(key), self.get(alias)) {
            (Some(_), _) => self.usize(key),
            (None, Some(_)) => self.usize(alias),
            (None, None) => Ok(default),
        }
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
    fn errors_name_the_key() {
        let cfg = Config::from_json_str(r#"{"hidden_size": "big"}"#).unwrap();
        assert_eq!(
            cfg.usize("hidden_size").unwrap_err().to_string(),
            "config: \"hidden_size\" must be a non-negative integer, got \"big\""
        );
        assert_eq!(cfg.usize("vocab_size").unwrap_err().to_string(), "config: missing key \"vocab_size\"");
        assert!(Config::from_json_str("[1]").is_err());
    }

    #[test]
    fn layer_counts_are_bounded() {
        let cfg = Config::from_json_str(r#"{"a": 12, "b": 16384, "c": 16385, "d": 1000000000000}"#).unwrap();
        assert_eq!(cfg.layers("a").unwrap(), 12);
        assert_eq!(cfg.layers("b").unwrap(), MAX_LAYERS);
        assert_eq!(
            cfg.layers("c").unwrap_err().to_string(),
            "config: \"c\" is 16385; at most 16384 layers are supported"
        );
        assert!(cfg.layers("d").is_err());
    }

    #[test]
    fn nullable_fields_default_only_when_absent() {
        let cfg = Config::from_json_str(r#"{"null": null, "set": 3}"#).unwrap();
        assert_eq!(cfg.nullable_usize_or("absent", Some(4096)).unwrap(), Some(4096));
        assert_eq!(cfg.nullable_usize_or("null", Some(4096)).unwrap(), None);
        assert_eq!(cfg.nullable_usize_or("set", Some(4096)).unwrap(), Some(3));
    }
}
