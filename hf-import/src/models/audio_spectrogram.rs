//! The Audio Spectrogram Transformer (model type `audio-spectrogram-transformer`: `ASTModel`,
//! `ASTForAudioClassification`; MIT/ast-finetuned-audioset-10-10-0.4593): a ViT over a log-mel
//! spectrogram `input_values` `[batch, max_length frames, num_mel_bins]`. Overlapping
//! `patch_size`² patches (strides `frequency_stride` × `time_stride`) of the spectrogram turned
//! frequency-first, a class and a distillation token before them, learned positions, ViT's
//! pre-norm blocks and final norm; `pooler_output` is the mean of the two tokens, and the
//! classifier a layer norm and a linear layer on it.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::classification::num_labels;
use super::seq2seq_io::check_inputs;
use super::vit::{load_hub_layer, load_layer, ViTConfig};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::Weights;

/// The input an AST takes.
const INPUTS: &[&str] = &["input_values"];

/// transformers' `ASTModel`, with `ASTForAudioClassification`'s head when loaded as that.
#[derive(Debug, Clone)]
pub struct AudioSpectrogramTransformer {
    config: ViTConfig,
    /// `[hidden, 1, patch, patch]` and its bias
    projection: (Tensor, Tensor),
    /// frequency and time strides
    strides: [usize; 2],
    /// `(max_length, num_mel_bins)`: the spectrogram the positions were made for
    shape: (usize, usize),
    /// `[1, 2, hidden]`: the class and distillation tokens
    tokens: Tensor,
    positions: Tensor,
    layers: Vec<PreNormEncoderLayer>,
    layernorm: LayerNorm,
    /// the classifier's norm and linear layer (none inside with 0 labels); `None` for the base model
    head: Option<(LayerNorm, Option<Linear>)>,
}

impl AudioSpectrogramTransformer {
    /// Loads `ASTModel` or `ASTForAudioClassification` (the encoder under
    /// `audio_spectrogram_transformer.` or unprefixed).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let patch = cfg.usize_or("patch_size", 16)?;
        let strides = [cfg.usize_or("frequency_stride", 10)?, cfg.usize_or("time_stride", 10)?];
        let shape = (cfg.usize_or("max_length", 1024)?, cfg.usize_or("num_mel_bins", 128)?);
        if patch == 0 || strides.contains(&0) || shape.1 < patch || shape.0 < patch {
            return Err(Error::Config(format!(
                "patch_size {patch} with strides {strides:?} makes no patches of {} frames of {} mel bins",
                shape.0, shape.1
            )));
        }
        let patches = ((shape.1 - patch) / strides[0] + 1) * ((shape.0 - patch) / strides[1] + 1);
        let root = weights.vars("");
        let prefix = "audio_spectrogram_transformer";
        let v = if weights.names().any(|n| n.starts_with(&format!("{prefix}."))) {
            root.pp(prefix)
        } else {
            root
        };
        let emb = v.pp("embeddings");
        let h = c.hidden;
        let proj = emb.pp("patch_embeddings").pp("projection");
        let projection = (proj.get("weight", &[h, 1, patch, patch])?, proj.get("bias", &[h])?);
        let tokens = Tensor::cat(
            &[&emb.get("cls_token", &[1, 1, h])?, &emb.get("distillation_token", &[1, 1, h])?],
            1,
        )?;
        let positions = emb.get("position_embeddings", &[1, patches.saturating_add(2), h])?;
        let hub_names = v.contains("encoder.layer.0.layernorm_before.weight")
            || !v.contains("layers.0.layernorm_before.weight");
        let layers = (0..c.layers)
            .map(|i| match hub_names {
                true => load_hub_layer(&v.pp("encoder.layer").pp(i), &c),
                false => load_layer(&v.pp("layers").pp(i), &c),
            })
            .collect::<Result<Vec<_>>>()?;
        let layernorm = LayerNorm::load(&v.pp("layernorm"), h, c.eps)?;
        let head = match arch {
            "ASTForAudioClassification" => {
                let cls = weights.vars("classifier");
                let dense = match num_labels(cfg)? {
                    0 => None,
                    n => Some(Linear::load(&cls.pp("dense"), h, n, true)?),
                };
                Some((LayerNorm::load(&cls.pp("layernorm"), h, c.eps)?, dense))
            }
            _ => None,
        };
        Ok(AudioSpectrogramTransformer {
            config: c,
            projection,
            strides,
            shape,
            tokens,
            positions,
            layers,
            layernorm,
            head,
        })
    }

    /// The input names: `input_values` (float `[batch, max_length, num_mel_bins]`).
    pub fn input_names(&self) -> &'static [&'static str] {
        INPUTS
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.projection.0.device()
    }

    /// Runs the model on `input_values`: `last_hidden_state` and `pooler_output`, or the
    /// classifier's `logits`; with `output_hidden_states`, `hidden_states.*` (the embeddings, then
    /// each block's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let others: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| k.as_str() != "input_values")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        check_inputs(&others, INPUTS)?;
        let x =
            inputs.get("input_values").ok_or_else(|| Error::Input("missing input 'input_values'".into()))?;
        let (frames, bins) = self.shape;
        if !x.dtype().is_float() || x.rank() != 3 || x.dims()[1..] != [frames, bins] || x.dims()[0] == 0 {
            return Err(Error::Input(format!(
                "input 'input_values' must be a float tensor [batch, {frames}, {bins}] (max_length frames of \
                 num_mel_bins), got {:?} {:?}",
                x.dtype(),
                x.dims()
            )));
        }
        let c = &self.config;
        let (w, b) = &self.projection;
        let x = x.to(self.device())?.to_dtype(w.dtype())?;
        // `[batch, 1, bins, frames]` → patches `[batch, patches, hidden]`.
        let p = x.unsqueeze(1)?.transpose(2, 3)?.conv2d(w, Some(b), &self.strides, 0, &[1], 1)?;
        let p = p.flatten(2, -1)?.transpose(1, 2)?;
        let batch = p.dims()[0];
        let mut h =
            Tensor::cat(&[&self.tokens.expand([batch, 2, c.hidden])?, &p], 1)?.add(&self.positions)?;
        let mut hidden_states = Vec::new();
        for layer in &self.layers {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            h = layer.forward(&h, None, c.heads, c.act)?;
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let last = self.layernorm.forward(&h)?;
        let pooled = last.select(1, 0)?.add(&last.select(1, 1)?)?.div(2.0)?;
        let mut out = Vec::new();
        match &self.head {
            Some((norm, dense)) => {
                let normed = norm.forward(&pooled)?;
                let logits = match dense {
                    Some(d) => d.forward(&normed)?,
                    None => normed,
                };
                out.push(("logits".to_string(), logits));
            }
            None => {
                out.push(("last_hidden_state".to_string(), last));
                out.push(("pooler_output".to_string(), pooled));
            }
        }
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}
