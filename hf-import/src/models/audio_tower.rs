//! The Whisper-style audio encoder: log-mel `input_features` `[batch, mel bins, frames]` through
//! two convolutions (the second halving the frames) and GELUs, plus learned positions, into
//! pre-norm BART-style blocks with a final norm. Whisper's encoder (see [`super::whisper`]),
//! Voxtral's audio tower, and Qwen2-Audio's, which hides the padding frames from its attention
//! and averages the frames in pairs before the final norm (see [`super::audio_language`]).

use oxtorch_tensor::{DType, Tensor};

use super::bart::{BartStack, PositionKind, StackConfig, StackOutput};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Vars;

/// One `nn.Conv1d` with kernel 3, padding 1 and its stride.
#[derive(Debug, Clone)]
struct Conv {
    weight: Tensor,
    bias: Tensor,
    stride: usize,
}

impl Conv {
    fn load(vars: &Vars<'_>, inputs: usize, outputs: usize, stride: usize) -> Result<Self> {
        Ok(Conv {
            weight: vars.get("weight", &[outputs, inputs, 3])?,
            bias: vars.get("bias", &[outputs])?,
            stride,
        })
    }

    /// `gelu(conv(x))`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.conv1d(&self.weight, Some(&self.bias), &[self.stride], 1usize, &[1], 1)?.gelu("none")?)
    }
}

/// The encoder stack's config of an audio tower's config (`Qwen2AudioEncoderConfig`'s and
/// `VoxtralEncoderConfig`'s keys, under either's names, and defaults), and its mel bins.
pub(crate) fn audio_stack_config(cfg: &Config) -> Result<(StackConfig, usize)> {
    let either = |a: &str, b: &str, default: usize| -> Result<usize> {
        match cfg.get(a) {
            Some(v) if !v.is_null() => cfg.usize(a),
            _ => cfg.usize_or(b, default),
        }
    };
    let config = StackConfig {
        d_model: either("d_model", "hidden_size", 1280)?,
        heads: either("encoder_attention_heads", "num_attention_heads", 20)?,
        ffn: either("encoder_ffn_dim", "intermediate_size", 5120)?,
        layers: either("encoder_layers", "num_hidden_layers", 32)?,
        max_positions: cfg.usize_or("max_source_positions", 1500)?,
        act: Activation::from_name(cfg.str_or("activation_function", "gelu")?)?,
        // (The towers' `scale_embedding` is never applied by their modules.)
        embed_scale: 1.0,
        pre_norm: true,
        decoder: false,
        positions: PositionKind::Learned { offset: 0 },
        key_bias: false,
        norm_before_positions: false,
    };
    Ok((config, cfg.usize_or("num_mel_bins", 128)?))
}

/// The encoder (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct AudioTower {
    conv1: Conv,
    conv2: Conv,
    stack: BartStack,
    mel_bins: usize,
    /// the model's name in its input errors
    name: &'static str,
}

impl AudioTower {
    /// The tower under `vars` (`conv1`, `conv2`, `embed_positions`, `layers.N`, `layer_norm`).
    pub(crate) fn load(
        vars: &Vars<'_>,
        config: StackConfig,
        mel_bins: usize,
        name: &'static str,
        dtype: DType,
    ) -> Result<Self> {
        let d = config.d_model;
        let conv1 = Conv::load(&vars.pp("conv1"), mel_bins, d, 1)?;
        let device = conv1.weight.device();
        Ok(AudioTower {
            conv2: Conv::load(&vars.pp("conv2"), d, d, 2)?,
            conv1,
            stack: BartStack::load(vars, config, dtype, device)?,
            mel_bins,
            name,
        })
    }

    /// The stack's sizes.
    pub(crate) fn config(&self) -> &StackConfig {
        self.stack.config()
    }

    /// `[mel bins, frames]` of the `input_features` the tower takes (frames: twice
    /// `max_source_positions`, as transformers requires).
    pub(crate) fn features_shape(&self) -> [usize; 2] {
        [self.mel_bins, self.config().max_positions.saturating_mul(2)]
    }

    /// The convolutions on `input_features` (checked): `[batch, positions, d]`.
    fn embed(&self, input_features: &Tensor) -> Result<Tensor> {
        let [mel, frames] = self.features_shape();
        let name = self.name;
        match input_features.dims() {
            &[b, m, f] if b > 0 && m == mel && f == frames => {}
            &[_, m, _] if m != mel => {
                return Err(Error::Input(format!(
                    "input 'input_features' has {m} mel bins, but the model's num_mel_bins is {mel} (shape {:?})",
                    input_features.dims()
                )))
            }
            &[_, _, f] if f != frames => {
                return Err(Error::Input(format!(
                    "{name} expects the mel input features to be of length {frames}, but found {f}: pad them to {frames}"
                )))
            }
            d => {
                return Err(Error::Input(format!(
                    "input 'input_features' must be [batch, mel bins, frames] with batch > 0, got {d:?}"
                )))
            }
        }
        if !input_features.dtype().is_float() {
            return Err(Error::Input(format!(
                "input 'input_features' must be a floating-point tensor, got {:?}",
                input_features.dtype()
            )));
        }
        let x = input_features.to(self.conv1.weight.device())?.to_dtype(self.conv1.weight.dtype())?;
        Ok(self.conv2.forward(&self.conv1.forward(&x)?)?.transpose(1, 2)?.contiguous()?)
    }

    /// The encoder on `input_features` `[batch, mel bins, frames]` (float), every position seen.
    pub(crate) fn encode(&self, input_features: &Tensor, output_hidden_states: bool) -> Result<StackOutput> {
        self.stack.forward(&self.embed(input_features)?, None, None, None, output_hidden_states)
    }

    /// Qwen2-Audio's encoder: the positions past each row's `lengths` (after the convolutions)
    /// hidden as keys, the blocks' output averaged in pairs of positions (an odd last one
    /// dropped), then normed: `[batch, positions / 2, d]`.
    pub(crate) fn encode_pooled(&self, input_features: &Tensor, lengths: &[i64]) -> Result<Tensor> {
        let x = self.embed(input_features)?;
        let (b, positions, d) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let kept: Vec<i64> =
            lengths.iter().flat_map(|&n| (0..positions as i64).map(move |j| i64::from(j < n))).collect();
        let mask = Tensor::from_vec(kept, [b, positions])?.to(x.device())?;
        let x = self.stack.encode_before_norm(&x, Some(&mask))?;
        let pairs = positions / 2;
        let pooled = x.narrow(1, 0, pairs * 2)?.reshape([b, pairs, 2, d])?.mean(2, false)?;
        self.stack.final_norm(&pooled)
    }
}
