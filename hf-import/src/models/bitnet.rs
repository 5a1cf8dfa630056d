//! BitNet b1.58 (`BitNetForCausalLM`, `BitNetModel`, model type `bitnet`:
//! microsoft/bitnet-b1.58-2B-4T): Llama's blocks with ReLU² MLPs and norms before `o_proj` and
//! `down_proj` (`attn_sub_norm`, `ffn_sub_norm`), and ternary projection weights. A checkpoint
//! quantized for transformers' BitNet integration (`quantization_config.quant_method: "bitnet"`) is
//! dequantized at load (see [`dequantized`]) and each projection's input fake-quantized to 8-bit
//! integers per row ([`crate::layers::fake_quant_int8`]): the float product then gives what the
//! integer product of transformers' `BitLinear` / `AutoBitLinear` scaled back gives. Without a
//! quantization config the projections are plain linear layers, as in transformers.

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// The projections transformers' BitNet integration quantizes (every `nn.Linear` of the blocks).
const PROJECTIONS: &[&str] = &[
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
];

/// How a checkpoint stores its quantized projections (`quantization_config`'s `linear_class` and
/// `quantization_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// `bitlinear`: 2-bit packed `uint8` rows, the product divided by `weight_scale`
    Packed,
    /// `autobitlinear` offline: ternary values (packed, or as floats), the product times
    /// `weight_scale`
    Scaled,
    /// `autobitlinear` online: full-precision weights, made ternary per tensor when used
    Online,
}

/// The storage `quantization_config` names; `None` without one.
fn storage(cfg: &Config) -> Result<Option<Storage>> {
    let Some(q) = cfg.get("quantization_config").filter(|q| !q.is_null()) else { return Ok(None) };
    if !q.is_object() {
        return Err(Error::Config(format!("quantization_config must be an object, got {q}")));
    }
    let text = |key: &str, default: &'static str| -> Result<String> {
        match q.get(key) {
            None | Some(Value::Null) => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(Error::Config(format!("quantization_config.{key} must be a string, got {v}"))),
        }
    };
    let method = text("quant_method", "")?;
    if method != "bitnet" {
        return Err(Error::Unsupported(format!(
            "quantization_config.quant_method {method:?}: a BitNet checkpoint is quantized with \"bitnet\""
        )));
    }
    if q.get("use_rms_norm").and_then(Value::as_bool) == Some(true) {
        return Err(Error::Unsupported(
            "BitNet projections with their own RMS norm (quantization_config.use_rms_norm)".into(),
        ));
    }
    if let Some(Value::Array(skipped)) = q.get("modules_to_not_convert") {
        let names: Vec<&str> = skipped.iter().filter_map(Value::as_str).collect();
        if names.iter().any(|n| PROJECTIONS.iter().any(|p| p.ends_with(n) || n.contains(p))) {
            return Err(Error::Unsupported(format!(
                "BitNet checkpoints that keep some projections unquantized (quantization_config.modules_to_not_convert {names:?})"
            )));
        }
        if !names.contains(&"lm_head") {
            return Err(Error::Unsupported(format!(
                "a BitNet checkpoint whose LM head is quantized too (quantization_config.modules_to_not_convert {names:?} leaves out lm_head)"
            )));
        }
    }
    let class = text("linear_class", "bitlinear")?;
    let mode = text("quantization_mode", "offline")?;
    Ok(Some(match (class.as_str(), mode.as_str()) {
        ("bitlinear", "offline") => Storage::Packed,
        ("autobitlinear", "offline") => Storage::Scaled,
        ("autobitlinear", "online") => Storage::Online,
        _ => {
            return Err(Error::Config(format!(
                "quantization_config: linear_class {class:?} with quantization_mode {mode:?} (bitlinear is offline; \
                 autobitlinear offline or online)"
            )))
        }
    }))
}

/// The ternary rows of a packed `[rows, in]` `uint8` matrix: `[4 · rows, in]` float32 in {-1, 0, 1},
/// row `i · rows + r` from bits `2i..2i+2` of stored row `r` (transformers' `unpack_weights`).
fn unpack(packed: &Tensor) -> Result<Tensor> {
    let (rows, cols) = (packed.dims()[0], packed.dims()[1]);
    let bytes = packed.to_vec::<u8>()?;
    let mut out = vec![0f32; 4 * rows * cols];
    for (i, part) in out.chunks_mut(rows * cols).enumerate() {
        for (o, b) in part.iter_mut().zip(&bytes) {
            *o = f32::from((b >> (2 * i)) & 3) - 1.0;
        }
    }
    Ok(Tensor::from_vec(out, [4 * rows, cols])?)
}

/// `w` made ternary per tensor, as transformers' `WeightQuant` (float32: `s = 1 / max(mean |w|,
/// 1e-5)`, `round(w · s)` clamped to `[-1, 1]`, divided by `s`).
fn ternary(w: &Tensor) -> Result<Tensor> {
    let wf = w.to_dtype(DType::F32)?;
    let mean = wf.abs()?.mean_all()?.clamp(Some(1e-5.into()), None)?;
    let scale = Tensor::full([], 1.0, (DType::F32, w.device()))?.div(&mean)?;
    Ok(wf.mul(&scale)?.round()?.clamp(Some((-1.0).into()), Some(1.0.into()))?.div(&scale)?)
}

/// `weights` with every quantized projection of the blocks as the float matrix it stands for
/// (in the dtype of its `weight_scale`, else of the checkpoint): packed `uint8` rows unpacked and
/// divided by (`bitlinear`) or multiplied by (`autobitlinear`) `weight_scale`; full-precision
/// weights of `autobitlinear`'s online mode made ternary. A stored shape or dtype that does not fit
/// the storage is an error naming the tensor.
pub fn dequantized(cfg: &Config, weights: &Weights) -> Result<Weights> {
    let Some(storage) = storage(cfg)? else { return Ok(weights.clone()) };
    let quantized = |name: &str| -> Option<String> {
        let module = name.strip_suffix(".weight")?;
        PROJECTIONS
            .iter()
            .any(|p| module.ends_with(p) && module.contains("layers."))
            .then(|| module.to_string())
    };
    weights.replaced(|name, held| {
        let Some(module) = quantized(name) else { return Ok(None) };
        let bad = |what: String| Error::Input(format!("tensor '{name}': {what}"));
        // (On the host, whatever device the weights are on; the result goes back there.)
        let device = held.device();
        let held = &held.to(Device::Cpu)?;
        let w = match (storage, held.dtype()) {
            (Storage::Packed | Storage::Scaled, DType::U8) if held.rank() == 2 => unpack(held)?,
            (Storage::Packed, d) => {
                return Err(bad(format!(
                    "bitlinear weights are packed uint8 [out / 4, in], got {d:?} {:?}",
                    held.dims()
                )))
            }
            (Storage::Scaled, d) if d.is_float() => held.to_dtype(DType::F32)?,
            (Storage::Online, d) if d.is_float() => ternary(held)?,
            (_, d) => {
                return Err(bad(format!("a BitNet projection of dtype {d:?}, shape {:?}", held.dims())))
            }
        };
        let scale = match storage {
            Storage::Online => None,
            _ => Some(
                weights
                    .get(&format!("{module}.weight_scale"))?
                    .ok_or_else(|| bad("a quantized BitNet projection needs its weight_scale".into()))?,
            ),
        };
        if let Some(s) = &scale {
            if s.numel() != 1 {
                return Err(bad(format!("weight_scale must hold one value, got shape {:?}", s.dims())));
            }
        }
        let dtype = scale.as_ref().map(Tensor::dtype).or(weights.cast_dtype()).unwrap_or(held.dtype());
        let dtype = if dtype.is_float() { dtype } else { DType::F32 };
        let s = scale.map(|s| -> Result<Tensor> {
            Ok(s.to_dtype(DType::F32)?.to(Device::Cpu)?.reshape([0usize; 0])?)
        });
        let w = match (storage, s.transpose()?) {
            (Storage::Packed, Some(s)) => w.div(&s)?,
            (Storage::Scaled, Some(s)) => w.mul(&s)?,
            _ => w,
        };
        Ok(Some(w.to_dtype(dtype)?.to(device)?))
    })
}

/// BitNet's decoder: Llama's with ReLU² (`hidden_act` "relu2"), `rms_norm_eps` 1e-5, the sub-norms,
/// and the activations quantized when the checkpoint is.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.act = Activation::from_name(cfg.str_or("hidden_act", "relu2")?)?;
    spec.default_rms_norm_eps = 1e-5;
    spec.sub_norms = true;
    spec.activation_quant = storage(cfg)?.is_some();
    Ok(spec)
}

causal_lm_newtype!(
    /// transformers' `BitNetForCausalLM`.
    BitNetForCausalLM
);

impl BitNetForCausalLM {
    /// Loads the model from a BitNet config and checkpoint, dequantizing its projections.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Ok(BitNetForCausalLM(CausalLm::load(cfg, &dequantized(cfg, weights)?, spec(cfg)?)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `unpack_weights` docstring example: `[[0b10100001, 0b00011000], [0b10010000,
    /// 0b00001010]]` unpacks to rows `[0, -1], [-1, 1], [-1, 1], [-1, 1], [1, 0], [0, -1], [1, -1],
    /// [1, -1]`.
    #[test]
    fn unpacks_as_transformers() {
        let packed =
            Tensor::from_vec(vec![0b1010_0001u8, 0b0001_1000, 0b1001_0000, 0b0000_1010], [2, 2]).unwrap();
        let got = unpack(&packed).unwrap().to_vec2::<f32>().unwrap();
        let want: [[f32; 2]; 8] =
            [[0., -1.], [-1., 1.], [-1., 1.], [-1., 1.], [1., 0.], [0., -1.], [1., -1.], [1., -1.]];
        assert_eq!(got, want);
    }
}
