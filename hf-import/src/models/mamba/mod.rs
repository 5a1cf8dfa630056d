//! The state-space models: Mamba (transformers' `MambaForCausalLM` and `MambaModel`:
//! state-spaces/mamba-130m-hf and up), Falcon-Mamba (`FalconMambaForCausalLM`,
//! `FalconMambaModel`: tiiuae/falcon-mamba-7b, Mamba's blocks with weightless RMS norms on the
//! step sizes, `B` and `C`) and Mamba-2 (`Mamba2ForCausalLM`, `Mamba2Model`: Mamba-Codestral,
//! the mamba2-*-hf conversions). No attention: each block is an RMS norm, then the selective
//! state-space mixer, then the residual:
//!
//! - `in_proj` to the channels `x` and the gate `z` (`expand × hidden` each; Mamba-2's also to
//!   `B`, `C` and a step size per head);
//! - a causal depthwise convolution over `conv_kernel` tokens and the activation;
//! - Mamba's `x_proj` to the step-size rank, `B` and `C`, its step sizes `softplus(dt_proj(...))`;
//! - the selective scan ([`selective_scan`]) from `A = -exp(A_log)` and `D`, gated by `silu(z)`
//!   (Mamba-2: gated inside a grouped RMS norm after it);
//! - `out_proj` back to the hidden size.
//!
//! The attention mask zeroes the padded tokens' inputs and their convolved channels, as
//! transformers' `apply_mask_to_padding_states`. Generation keeps a [`MambaState`] per layer (the
//! convolution's last inputs and the scan's states) instead of a KV cache: each new token costs the
//! same whatever the length. The residual stream is float32 with `residual_in_fp32` (the default).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::seq2seq_io::{check_inputs, ids_and_mask};
use crate::config::{float_of, Config};
use crate::error::{Error, Result};
use crate::generate::Recurrent;
use crate::layers::{
    Activation, Embedding, GatedNorm, Linear, Mamba2Dims, Mamba2Mixer, MambaDims, MambaMixer, RmsNorm,
    RmsNormStyle, SsmState, StepNorms,
};
use crate::weights::Weights;

/// The inputs a Mamba model takes.
const INPUTS: &[&str] = &["input_ids", "attention_mask"];

/// What a generation carries from token to token: each layer's [`SsmState`] (the convolution's
/// last inputs and the scan's states), and how many tokens they have seen.
#[derive(Debug, Clone)]
pub struct MambaState {
    layers: Vec<SsmState>,
    seen: usize,
}

impl MambaState {
    /// Moves the rows: row `r` becomes what row `from[r]` was (beam search).
    pub fn reorder(&mut self, from: &Tensor) -> Result<()> {
        for layer in &mut self.layers {
            layer.reorder(from)?;
        }
        Ok(())
    }
}

/// A block's mixer.
#[derive(Debug, Clone)]
enum Mixer {
    Mamba(MambaMixer),
    Mamba2(Mamba2Mixer),
}

/// One block: norm, mixer, residual.
#[derive(Debug, Clone)]
struct Block {
    norm: RmsNorm,
    mixer: Mixer,
}

/// The config keys a Mamba model reads.
#[derive(Debug, Clone)]
struct MambaConfig {
    hidden: usize,
    /// each block's mixer
    mixer: MixerDims,
    layers: usize,
    vocab: usize,
    eps: f64,
    residual_in_fp32: bool,
    tie_word_embeddings: bool,
}

/// Which mixer the blocks have, and its sizes.
#[derive(Debug, Clone, Copy)]
enum MixerDims {
    Mamba(MambaDims),
    Mamba2(Mamba2Dims),
}

impl MambaConfig {
    fn read(cfg: &Config) -> Result<Self> {
        let model_type = cfg.model_type()?;
        let v2 = model_type == "mamba2";
        let hidden = cfg.usize_or("hidden_size", if v2 { 4096 } else { 768 })?;
        let expand = cfg.f64_or("expand", 2.0)?;
        let channels = (expand * hidden as f64) as usize;
        let states = cfg.usize_or("state_size", if v2 { 128 } else { 16 })?;
        let kernel = cfg.usize_or("conv_kernel", 4)?;
        let eps = cfg.f64_or("layer_norm_epsilon", 1e-5)?;
        let act = Activation::from_name(cfg.str_or("hidden_act", "silu")?)?;
        let (proj_bias, conv_bias) = (cfg.bool_or("use_bias", false)?, cfg.bool_or("use_conv_bias", true)?);
        let mixer = if v2 {
            let (heads, head_dim) = (cfg.usize_or("num_heads", 128)?, cfg.usize_or("head_dim", 64)?);
            if heads.checked_mul(head_dim) != Some(channels) {
                return Err(Error::Config(format!(
                    "num_heads × head_dim ({heads} × {head_dim}) must equal expand × hidden_size ({expand} × {hidden})"
                )));
            }
            MixerDims::Mamba2(Mamba2Dims {
                hidden,
                heads,
                head_dim,
                groups: cfg.usize_or("n_groups", 8)?,
                states,
                kernel,
                proj_bias,
                out_bias: proj_bias,
                gated_norm: GatedNorm::GateThenNorm,
                conv_bias,
                act,
                eps,
                dt_limit: time_step_limit(cfg)?,
            })
        } else {
            MixerDims::Mamba(MambaDims {
                hidden,
                channels,
                states,
                rank: dt_rank(cfg, "time_step_rank", hidden)?,
                kernel,
                proj_bias,
                conv_bias,
                act,
                step_norms: match model_type {
                    "falcon_mamba" => StepNorms::Weightless(cfg.f64_or("mixer_rms_eps", 1e-6)?),
                    _ => StepNorms::None,
                },
            })
        };
        Ok(MambaConfig {
            hidden,
            mixer,
            layers: cfg.usize_or("num_hidden_layers", if v2 { 64 } else { 32 })?,
            vocab: cfg.usize_or("vocab_size", if v2 { 32768 } else { 50280 })?,
            eps,
            residual_in_fp32: cfg.bool_or("residual_in_fp32", true)?,
            tie_word_embeddings: cfg.bool_or("tie_word_embeddings", !v2)?,
        })
    }
}

/// A Mamba mixer's step-size rank `key`: `"auto"` (or absent) is `ceil(hidden / 16)`.
pub(crate) fn dt_rank(cfg: &Config, key: &str, hidden: usize) -> Result<usize> {
    match cfg.get(key) {
        None => Ok(hidden.div_ceil(16)),
        Some(v) if v.as_str() == Some("auto") => Ok(hidden.div_ceil(16)),
        Some(v) => v.as_u64().map(|r| r as usize).ok_or_else(|| {
            Error::Config(format!("\"{key}\" must be \"auto\" or a positive integer, got {v}"))
        }),
    }
}

/// A Mamba, Falcon-Mamba or Mamba-2 model: the causal LM, or the base model without its head.
#[derive(Debug, Clone)]
pub struct Mamba {
    embeddings: Embedding,
    layers: Vec<Block>,
    norm_f: RmsNorm,
    /// the LM head (`None`: the base model)
    lm_head: Option<Linear>,
    residual_in_fp32: bool,
}

impl Mamba {
    /// Loads `arch` (`MambaForCausalLM`, `MambaModel`, or their `FalconMamba*` and `Mamba2*` names): the
    /// causal LM's `backbone.*` and `lm_head.weight` (tied to the embeddings by default), or the
    /// base model's tensors without the prefix. transformers' old `embedding.weight` name loads too.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = MambaConfig::read(cfg)?;
        let root = weights.vars("");
        let backbone =
            if weights.contains("backbone.norm_f.weight") { root.pp("backbone") } else { root.clone() };
        let embed_name = if backbone.contains("embedding.weight") && !backbone.contains("embeddings.weight") {
            "embedding"
        } else {
            "embeddings"
        };
        let embeddings = Embedding::load(&backbone.pp(embed_name), c.vocab, c.hidden)?;
        let layers = (0..c.layers)
            .map(|i| {
                let v = backbone.pp("layers").pp(i);
                Ok(Block {
                    norm: RmsNorm::load(&v.pp("norm"), c.hidden, c.eps, RmsNormStyle::Llama)?,
                    mixer: match &c.mixer {
                        MixerDims::Mamba2(dims) => Mixer::Mamba2(Mamba2Mixer::load(&v.pp("mixer"), dims)?),
                        MixerDims::Mamba(dims) => Mixer::Mamba(MambaMixer::load(&v.pp("mixer"), dims)?),
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let norm_f = RmsNorm::load(&backbone.pp("norm_f"), c.hidden, c.eps, RmsNormStyle::Llama)?;
        let lm_head = if arch.ends_with("ForCausalLM") {
            let weight = match root.get_matrix_opt("lm_head.weight", &[c.vocab, c.hidden])? {
                Some(w) if !c.tie_word_embeddings => w,
                _ if c.tie_word_embeddings => embeddings.weight.clone(),
                _ => {
                    return Err(Error::Weight(
                        "tensor 'lm_head.weight' is missing from the checkpoint".into(),
                    ))
                }
            };
            Some(Linear { weight, bias: None })
        } else {
            None
        };
        Ok(Mamba { embeddings, layers, norm_f, lm_head, residual_in_fp32: c.residual_in_fp32 })
    }

    /// The device of the weights.
    pub fn device(&self) -> oxtorch_tensor::Device {
        self.embeddings.weight.device()
    }

    /// The inputs the model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        INPUTS
    }

    /// Whether this is the causal LM (with its head), which generates.
    pub fn can_generate(&self) -> bool {
        self.lm_head.is_some()
    }

    /// An empty state for `batch` new sequences: zero convolution inputs and scan states.
    pub fn new_state(&self, batch: usize) -> Result<MambaState> {
        let dtype = self.embeddings.weight.dtype();
        let layers = self
            .layers
            .iter()
            .map(|block| match &block.mixer {
                Mixer::Mamba2(m) => m.new_state(batch, dtype),
                Mixer::Mamba(m) => m.new_state(batch, dtype),
            })
            .collect::<Result<_>>()?;
        Ok(MambaState { layers, seen: 0 })
    }

    /// The final hidden states `[batch, seq, hidden]` (after `norm_f`) of `input_ids` (int64
    /// `[batch, seq]`) after what `state` holds (an empty state when `None`), which it advances;
    /// with `output_hidden_states`, transformers' `hidden_states`: each block's output, then the
    /// final norm's (no embeddings entry).
    pub fn hidden_states(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        state: Option<&mut MambaState>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let batch = match input_ids.dims() {
            &[b, s] if s > 0 => b,
            d => return Err(Error::Input(format!("input_ids must be [batch, seq] with seq > 0, got {d:?}"))),
        };
        let device = self.device();
        let ids = input_ids.to(device)?;
        let mask = attention_mask.map(|m| m.to(device)).transpose()?;
        let mut fresh;
        let state = match state {
            Some(s) => s,
            None => {
                fresh = self.new_state(batch)?;
                &mut fresh
            }
        };
        if let Some(rows) = state.layers.first().map(|l| l.ssm.dims()[0]).filter(|&r| r != batch) {
            return Err(Error::Input(format!(
                "the generation state holds {rows} rows, but input_ids has {batch}"
            )));
        }
        let dtype = self.embeddings.weight.dtype();
        let seq = ids.dims()[1];
        let cached_step = state.seen > 0 && seq == 1;
        state.seen += seq;
        let mut h = self.embeddings.forward(&ids)?;
        let mut all = Vec::new();
        for (i, block) in self.layers.iter().enumerate() {
            let normed = block.norm.forward(&h.to_dtype(dtype)?)?;
            let residual = if self.residual_in_fp32 { h.to_dtype(DType::F32)? } else { h };
            let layer_state = &mut state.layers[i];
            let mixed = match &block.mixer {
                Mixer::Mamba(m) => m.forward(&normed, mask.as_ref(), layer_state)?,
                Mixer::Mamba2(m) => m.forward(&normed, mask.as_ref(), layer_state, cached_step)?,
            };
            h = residual.add(&mixed)?;
            if output_hidden_states {
                all.push(h.clone());
            }
        }
        let h = self.norm_f.forward(&h)?;
        if output_hidden_states {
            all.push(h.clone());
        }
        Ok((h, all))
    }

    /// The LM head's logits (float32) on hidden states `h`.
    pub fn logits(&self, h: &Tensor) -> Result<Tensor> {
        let head = self.lm_head.as_ref().ok_or_else(|| {
            Error::Input("this is a base model (MambaModel): it gives hidden states, not logits".into())
        })?;
        Ok(head.forward(&h.to_dtype(head.weight.dtype())?)?.to_dtype(DType::F32)?)
    }

    /// The next-token logits `[batch, vocab]` at the last position of `input_ids` after what
    /// `state` holds, which it advances (the prompt with its mask, then one token at a time
    /// without one, as transformers' `generate`).
    pub fn next_logits(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        state: &mut MambaState,
    ) -> Result<Tensor> {
        let (h, _) = self.hidden_states(input_ids, attention_mask, Some(state), false)?;
        let s = h.dims()[1];
        self.logits(&h.select(1, s as isize - 1)?)
    }

    /// `forward` on named inputs (`input_ids`, `attention_mask`): the causal LM's `logits`, or the
    /// base model's `last_hidden_state`, then `hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        check_inputs(inputs, INPUTS)?;
        let (ids, mask) = ids_and_mask(inputs, "input_ids", "attention_mask")?;
        let (h, hidden) = self.hidden_states(&ids, mask.as_ref(), None, output_hidden_states)?;
        let mut out = match &self.lm_head {
            Some(_) => vec![("logits".to_string(), self.logits(&h)?)],
            None => vec![("last_hidden_state".to_string(), h)],
        };
        out.extend(hidden.into_iter().enumerate().map(|(i, t)| (format!("hidden_states.{i}"), t)));
        Ok(out)
    }
}

impl Recurrent for Mamba {
    type State = MambaState;

    fn device(&self) -> oxtorch_tensor::Device {
        Mamba::device(self)
    }

    fn start(&self, input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<(Tensor, MambaState)> {
        let mut state = self.new_state(input_ids.dims()[0])?;
        let logits = self.next_logits(input_ids, attention_mask, &mut state)?;
        Ok((logits, state))
    }

    fn next_logits(&self, ids: &Tensor, state: &mut MambaState) -> Result<Tensor> {
        Mamba::next_logits(self, ids, None, state)
    }

    fn reorder(&self, state: &mut MambaState, from: &Tensor) -> Result<()> {
        state.reorder(from)
    }
}

/// `time_step_limit` (Mamba-2 and the hybrids: the step sizes' bounds over a sequence): two
/// numbers, Python's `Infinity` read (see [`float_of`]); `(0, inf)` when absent.
pub(crate) fn time_step_limit(cfg: &Config) -> Result<(f64, f64)> {
    match cfg.get("time_step_limit") {
        None => Ok((0.0, f64::INFINITY)),
        Some(v) => match v.as_array().map(|pair| pair.iter().map(float_of).collect::<Vec<_>>()).as_deref() {
            Some([Some(lo), Some(hi)]) => Ok((*lo, *hi)),
            _ => Err(Error::Config(format!("\"time_step_limit\" must be two numbers, got {v}"))),
        },
    }
}

/// The Mamba-2 mixers of the hybrid decoders (Granite 4.0, Bamba) from their `mamba_*` keys:
/// `mamba_n_heads` (128) heads of `mamba_d_head` (`"auto"`: `mamba_expand × hidden_size / heads`)
/// in `mamba_n_groups` (1) groups, `mamba_d_state` (256) states, a convolution of `mamba_d_conv`
/// (4) with `mamba_conv_bias`, `mamba_proj_bias`, `hidden_act`, `rms_norm_eps` (the config
/// class's `default_eps`) and `time_step_limit`.
pub(crate) fn hybrid_mamba_dims(cfg: &Config, default_eps: f64) -> Result<Mamba2Dims> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize_or("mamba_n_heads", 128)?;
    let channels = cfg.usize_or("mamba_expand", 2)?.checked_mul(hidden).unwrap_or(0);
    let head_dim = match cfg.get("mamba_d_head") {
        Some(v) if v.as_str() != Some("auto") => v.as_u64().map_or(0, |d| d as usize),
        _ => channels / heads.max(1),
    };
    if heads == 0 || head_dim.checked_mul(heads) != Some(channels) {
        return Err(Error::Config(format!(
            "mamba_n_heads × mamba_d_head ({heads} × {head_dim}) must equal mamba_expand × hidden_size ({channels})"
        )));
    }
    Ok(Mamba2Dims {
        hidden,
        heads,
        head_dim,
        groups: cfg.usize_or("mamba_n_groups", 1)?,
        states: cfg.usize_or("mamba_d_state", 256)?,
        kernel: cfg.usize_or("mamba_d_conv", 4)?,
        proj_bias: cfg.bool_or("mamba_proj_bias", false)?,
        out_bias: cfg.bool_or("mamba_proj_bias", false)?,
        gated_norm: GatedNorm::GateThenNorm,
        conv_bias: cfg.bool_or("mamba_conv_bias", true)?,
        act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
        eps: cfg.f64_or("rms_norm_eps", default_eps)?,
        dt_limit: time_step_limit(cfg)?,
    })
}
