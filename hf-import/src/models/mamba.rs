//! Mamba (transformers' `MambaForCausalLM` and `MambaModel`: state-spaces/mamba-130m-hf and up)
//! and Falcon-Mamba (`FalconMambaForCausalLM`, `FalconMambaModel`: tiiuae/falcon-mamba-7b, the
//! same blocks with weightless RMS norms on the step sizes, `B` and `C`). No attention: each block
//! is an RMS norm, then the selective state-space mixer, then the residual:
//!
//! - `in_proj` to the channels `x` and the gate `z` (`expand × hidden` each);
//! - a causal depthwise convolution of `x` over `conv_kernel` tokens and the activation;
//! - `x_proj` to the step-size rank, `B` and `C`; the step sizes `Δ = softplus(dt_proj(...))`;
//! - the selective scan ([`selective_scan`]) from `A = -exp(A_log)` and `D`, gated by `silu(z)`;
//! - `out_proj` back to the hidden size.
//!
//! The attention mask zeroes the padded tokens' inputs and their convolved channels, as
//! transformers' `apply_mask_to_padding_states`. Generation keeps a [`MambaState`] per layer (the
//! convolution's last inputs and the scan's states) instead of a KV cache: each new token costs the
//! same whatever the length. The residual stream is float32 with `residual_in_fp32` (the default).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::seq2seq_io::{check_inputs, ids_and_mask};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::Recurrent;
use crate::layers::{selective_scan, Activation, Embedding, Linear, RmsNorm, RmsNormStyle, ScanInputs};
use crate::weights::{Vars, Weights};

/// The inputs a Mamba model takes.
const INPUTS: &[&str] = &["input_ids", "attention_mask"];

/// The sizes every mixer shares.
#[derive(Debug, Clone, Copy)]
struct Dims {
    hidden: usize,
    /// the channels (`expand × hidden`)
    channels: usize,
    /// the scan's states per channel (`state_size`)
    states: usize,
    /// the step sizes' rank (`time_step_rank`)
    rank: usize,
    /// the convolution's width (`conv_kernel`)
    kernel: usize,
}

/// What a generation carries from token to token, per layer: the convolution's last
/// `conv_kernel - 1` inputs `[batch, channels, kernel - 1]` and the scan's states
/// `[batch, channels, states]` (float32).
#[derive(Debug, Clone)]
pub struct MambaState {
    conv: Vec<Tensor>,
    ssm: Vec<Tensor>,
}

impl MambaState {
    /// Moves the rows: row `r` becomes what row `from[r]` was (beam search).
    pub fn reorder(&mut self, from: &Tensor) -> Result<()> {
        for t in self.conv.iter_mut().chain(self.ssm.iter_mut()) {
            *t = t.index_select(0, &from.to(t.device())?)?;
        }
        Ok(())
    }
}

/// One block's selective state-space mixer.
#[derive(Debug, Clone)]
struct Mixer {
    in_proj: Linear,
    /// `[channels, 1, kernel]`
    conv_weight: Tensor,
    conv_bias: Option<Tensor>,
    act: Activation,
    x_proj: Linear,
    /// `dt_proj`'s weight (its bias is added in float32, after the product)
    dt_weight: Tensor,
    dt_bias: Tensor,
    /// `-exp(A_log)` `[channels, states]`, float32
    a: Tensor,
    /// `D` `[channels]`, float32
    d: Tensor,
    out_proj: Linear,
    /// Falcon-Mamba's weightless RMS norms on the step sizes, `B` and `C` (their epsilon)
    bcdt_norm_eps: Option<f64>,
}

impl Mixer {
    fn load(v: &Vars<'_>, cfg: &MambaConfig) -> Result<Self> {
        let Dims { hidden, channels, states, rank, kernel } = cfg.dims;
        let dt_proj = Linear::load(&v.pp("dt_proj"), rank, channels, true)?;
        let a_log = v.get_as_stored("A_log", &[channels, states])?.to_dtype(DType::F32)?;
        Ok(Mixer {
            in_proj: Linear::load(&v.pp("in_proj"), hidden, 2 * channels, cfg.use_bias)?,
            conv_weight: v.get("conv1d.weight", &[channels, 1, kernel])?,
            conv_bias: if cfg.use_conv_bias { Some(v.get("conv1d.bias", &[channels])?) } else { None },
            act: cfg.act,
            x_proj: Linear::load(&v.pp("x_proj"), channels, rank + 2 * states, false)?,
            dt_weight: dt_proj.weight,
            dt_bias: dt_proj.bias.expect("loaded with a bias").to_dtype(DType::F32)?,
            a: a_log.exp()?.neg()?,
            d: v.get_as_stored("D", &[channels])?.to_dtype(DType::F32)?,
            out_proj: Linear::load(&v.pp("out_proj"), channels, hidden, cfg.use_bias)?,
            bcdt_norm_eps: cfg.bcdt_norm_eps,
        })
    }

    /// The mixer on `h` `[batch, seq, hidden]` after the tokens `conv` and `ssm` hold, which it
    /// advances past these.
    fn forward(
        &self,
        h: &Tensor,
        mask: Option<&Tensor>,
        conv: &mut Tensor,
        ssm: &mut Tensor,
    ) -> Result<Tensor> {
        let dtype = h.dtype();
        let (seq, channels) = (h.dims()[1], self.d.dims()[0]);
        let kept = |t: Tensor| -> Result<Tensor> {
            match mask {
                Some(m) => Ok(t.mul(&m.to_dtype(t.dtype())?.unsqueeze(-1)?)?),
                None => Ok(t),
            }
        };
        // [batch, 2 × channels, seq]
        let projected = self.in_proj.forward(&kept(h.clone())?)?.transpose(1, 2)?;
        let (x, z) = (projected.narrow(1, 0, channels)?, projected.narrow(1, channels as isize, channels)?);
        // The convolution over the previous inputs, then these; the state keeps the newest.
        let joined = Tensor::cat(&[&*conv, &x.to_dtype(conv.dtype())?], 2)?;
        let keep = conv.dims()[2];
        *conv = joined.narrow(2, seq as isize, keep)?.contiguous()?;
        let x = joined.conv1d(&self.conv_weight, self.conv_bias.as_ref(), &[1], 0, &[1], channels)?;
        // [batch, seq, channels]
        let x = kept(self.act.forward(&x)?.transpose(1, 2)?)?;
        let params = self.x_proj.forward(&x)?;
        let (rank, states) = (self.dt_weight.dims()[1], self.a.dims()[1]);
        let mut step = params.narrow(-1, 0, rank)?;
        let mut b = params.narrow(-1, rank as isize, states)?;
        let mut c = params.narrow(-1, (rank + states) as isize, states)?;
        if let Some(eps) = self.bcdt_norm_eps {
            let norm = |t: &Tensor| -> Result<Tensor> {
                let t32 = t.to_dtype(DType::F32)?;
                let rms = t32.square()?.mean(-1, true)?.add(eps)?.rsqrt()?;
                Ok(t32.mul(&rms)?.to_dtype(t.dtype())?)
            };
            (step, b, c) = (norm(&step)?, norm(&b)?, norm(&c)?);
        }
        // Δ: the product in the model's dtype, its bias and softplus in float32.
        let dt = step
            .matmul(&self.dt_weight.t()?)?
            .to_dtype(DType::F32)?
            .add(&self.dt_bias)?
            .softplus(1.0, 20.0)?;
        let (x_t, dt_t, z) = (x.transpose(1, 2)?, dt.transpose(1, 2)?, z);
        let y = selective_scan(
            &ScanInputs { x: &x_t, dt: &dt_t, z: &z, b: &b, c: &c, a: &self.a, d: &self.d },
            ssm,
        )?;
        self.out_proj.forward(&y.transpose(1, 2)?.to_dtype(dtype)?)
    }
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
    dims: Dims,
    layers: usize,
    vocab: usize,
    eps: f64,
    use_bias: bool,
    use_conv_bias: bool,
    act: Activation,
    residual_in_fp32: bool,
    tie_word_embeddings: bool,
    bcdt_norm_eps: Option<f64>,
}

impl MambaConfig {
    fn read(cfg: &Config) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let expand = cfg.f64_or("expand", 2.0)?;
        let rank = match cfg.get("time_step_rank") {
            None => hidden.div_ceil(16),
            Some(v) if v.as_str() == Some("auto") => hidden.div_ceil(16),
            Some(v) => v.as_u64().map(|r| r as usize).ok_or_else(|| {
                Error::Config(format!("\"time_step_rank\" must be \"auto\" or a positive integer, got {v}"))
            })?,
        };
        let dims = Dims {
            hidden,
            channels: (expand * hidden as f64) as usize,
            states: cfg.usize_or("state_size", 16)?,
            rank,
            kernel: cfg.usize_or("conv_kernel", 4)?,
        };
        if dims.hidden == 0 || dims.channels == 0 || dims.states == 0 || dims.rank == 0 || dims.kernel == 0 {
            return Err(Error::Config(format!(
                "a Mamba model needs positive sizes, got hidden_size {hidden}, expand {expand}, state_size {}, \
                 time_step_rank {rank}, conv_kernel {}",
                dims.states, dims.kernel
            )));
        }
        let falcon = cfg.model_type()? == "falcon_mamba";
        Ok(MambaConfig {
            dims,
            layers: cfg.usize_or("num_hidden_layers", 32)?,
            vocab: cfg.usize_or("vocab_size", 50280)?,
            eps: cfg.f64_or("layer_norm_epsilon", 1e-5)?,
            use_bias: cfg.bool_or("use_bias", false)?,
            use_conv_bias: cfg.bool_or("use_conv_bias", true)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
            residual_in_fp32: cfg.bool_or("residual_in_fp32", true)?,
            tie_word_embeddings: cfg.bool_or("tie_word_embeddings", true)?,
            bcdt_norm_eps: if falcon { Some(cfg.f64_or("mixer_rms_eps", 1e-6)?) } else { None },
        })
    }
}

/// A Mamba or Falcon-Mamba model: the causal LM, or the base model without its head.
#[derive(Debug, Clone)]
pub struct Mamba {
    embeddings: Embedding,
    layers: Vec<Block>,
    norm_f: RmsNorm,
    /// the LM head (`None`: the base model)
    lm_head: Option<Linear>,
    dims: Dims,
    residual_in_fp32: bool,
}

impl Mamba {
    /// Loads `arch` (`MambaForCausalLM`, `MambaModel`, or their `FalconMamba*` names): the
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
        let embeddings = Embedding::load(&backbone.pp(embed_name), c.vocab, c.dims.hidden)?;
        let layers = (0..c.layers)
            .map(|i| {
                let v = backbone.pp("layers").pp(i);
                Ok(Block {
                    norm: RmsNorm::load(&v.pp("norm"), c.dims.hidden, c.eps, RmsNormStyle::Llama)?,
                    mixer: Mixer::load(&v.pp("mixer"), &c)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let norm_f = RmsNorm::load(&backbone.pp("norm_f"), c.dims.hidden, c.eps, RmsNormStyle::Llama)?;
        let lm_head = if arch.ends_with("ForCausalLM") {
            let weight = match root.get_matrix_opt("lm_head.weight", &[c.vocab, c.dims.hidden])? {
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
        Ok(Mamba { embeddings, layers, norm_f, lm_head, dims: c.dims, residual_in_fp32: c.residual_in_fp32 })
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
        let Dims { channels, states, kernel, .. } = self.dims;
        let (device, dtype) = (self.device(), self.embeddings.weight.dtype());
        let zeros = |shape: [usize; 3], dtype: DType| -> Result<Tensor> {
            Ok(Tensor::zeros(shape, dtype)?.to(device)?)
        };
        let n = self.layers.len();
        Ok(MambaState {
            conv: (0..n).map(|_| zeros([batch, channels, kernel - 1], dtype)).collect::<Result<_>>()?,
            ssm: (0..n).map(|_| zeros([batch, channels, states], DType::F32)).collect::<Result<_>>()?,
        })
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
        if state.conv.first().is_some_and(|c| c.dims()[0] != batch) {
            return Err(Error::Input(format!(
                "the generation state holds {} rows, but input_ids has {batch}",
                state.conv[0].dims()[0]
            )));
        }
        let dtype = self.embeddings.weight.dtype();
        let mut h = self.embeddings.forward(&ids)?;
        let mut all = Vec::new();
        for (i, block) in self.layers.iter().enumerate() {
            let normed = block.norm.forward(&h.to_dtype(dtype)?)?;
            let residual = if self.residual_in_fp32 { h.to_dtype(DType::F32)? } else { h };
            let mixed = block.mixer.forward(&normed, mask.as_ref(), &mut state.conv[i], &mut state.ssm[i])?;
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
