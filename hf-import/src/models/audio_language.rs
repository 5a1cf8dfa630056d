//! The audio of the audio-language classes: Qwen2-Audio (`Qwen2AudioForConditionalGeneration`)
//! and Voxtral (`VoxtralForConditionalGeneration`), whose audio features replace the audio
//! tokens' embeddings (one token per feature, as their processors expand them).
//!
//! Both towers are Whisper's encoder ([`super::audio_tower`]) over `input_features` `[audios, mel
//! bins, frames]`. Qwen2-Audio's takes `feature_attention_mask` `[audios, frames]` (the real
//! frames of each audio): the positions past each audio's length after the strided convolution
//! are hidden as keys, the output averaged in pairs before the final norm, projected by
//! `multi_modal_projector.linear`, and each audio keeps its first `((length - 1) / 2 + 1 - 2) / 2 +
//! 1` features. Voxtral's sees every frame; its output, read as rows of `intermediate_size` values
//! (consecutive frames side by side), goes through `linear_1`, the activation and `linear_2`.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::audio_tower::{audio_stack_config, AudioTower};
use super::decoder::{batch_seq, CausalLm};
use super::image_inputs::TextWithImages;
use super::llava_images::vars_with;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::PromptMedia;
use crate::layers::{Activation, Linear};
use crate::weights::Weights;

/// The projector of a class.
#[derive(Debug, Clone)]
enum Projector {
    /// Qwen2-Audio's `linear`
    Qwen2 { linear: Linear },
    /// Voxtral's `linear_1`, activation, `linear_2`, over rows of `width` values
    Voxtral { linear_1: Linear, act: Activation, linear_2: Linear, width: usize },
}

/// The audio path of an audio-language class (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct AudioLanguage {
    tower: AudioTower,
    projector: Projector,
    /// `None` where the config names none (Voxtral's default): audio is then an error
    audio_token: Option<i64>,
}

impl AudioLanguage {
    /// The audio path of a `qwen2_audio` or `voxtral` checkpoint (`audio_tower.*`,
    /// `multi_modal_projector.*`, or under `model.`), `None` when it has no audio tower; `lm` is
    /// the language model the features go to.
    pub(crate) fn load(cfg: &Config, weights: &Weights, lm: &CausalLm) -> Result<Option<Self>> {
        let hidden = lm.embedding_width();
        let model_type = cfg.model_type()?;
        let qwen2 = model_type == "qwen2_audio";
        let probe = "conv1.weight";
        let Some(vars) = vars_with(weights, &["audio_tower.", "model.audio_tower."], probe) else {
            return Ok(None);
        };
        let audio = match cfg.get("audio_config") {
            None | Some(serde_json::Value::Null) => Config::from_map(Default::default()),
            Some(serde_json::Value::Object(m)) => Config::from_map(m.clone()),
            Some(v) => return Err(Error::Config(format!("\"audio_config\" must be an object, got {v}"))),
        };
        let (stack, mel) = audio_stack_config(&audio)?;
        let (d, ffn) = (stack.d_model, stack.ffn);
        let name = if qwen2 { "Qwen2Audio" } else { "Voxtral" };
        let tower = AudioTower::load(&vars, stack, mel, name, lm.dtype())?;
        let probe = if qwen2 { "linear.weight" } else { "linear_1.weight" };
        let p = vars_with(weights, &["multi_modal_projector.", "model.multi_modal_projector."], probe)
            .ok_or_else(|| {
                Error::Config("the checkpoint has an audio tower but no multi_modal_projector".into())
            })?;
        let projector = if qwen2 {
            Projector::Qwen2 { linear: Linear::load(&p.pp("linear"), d, hidden, true)? }
        } else {
            Projector::Voxtral {
                linear_1: Linear::load(&p.pp("linear_1"), ffn, hidden, false)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&p.pp("linear_2"), hidden, hidden, false)?,
                width: ffn,
            }
        };
        let named = ["audio_token_index", "audio_token_id"].into_iter().filter_map(|k| cfg.get(k));
        let token =
            match named.clone().find(|v| !v.is_null()) {
                Some(v) => Some(v.as_i64().ok_or_else(|| {
                    Error::Config(format!("\"audio_token_id\" must be an integer, got {v}"))
                })?),
                None if qwen2 => Some(151_646),
                None => None,
            };
        Ok(Some(AudioLanguage { tower, projector, audio_token: token }))
    }

    /// The audio token, where the config names one.
    pub(crate) fn audio_token(&self) -> Option<i64> {
        self.audio_token
    }

    /// The audio token, or the error for a config that names none.
    fn token(&self) -> Result<i64> {
        self.audio_token.ok_or_else(|| {
            Error::Config("the config names no audio_token_id: the prompts' audio tokens are unknown".into())
        })
    }

    /// The input names a forward pass with audio takes.
    fn inputs(&self) -> &'static [&'static str] {
        match self.projector {
            Projector::Qwen2 { .. } => {
                &["input_ids", "attention_mask", "position_ids", "input_features", "feature_attention_mask"]
            }
            Projector::Voxtral { .. } => &["input_ids", "attention_mask", "position_ids", "input_features"],
        }
    }

    /// The audios' features `[features, hidden]` (audio after audio) for `inputs`, to be put in
    /// place of the audio tokens of `input_ids`, whose number they must match.
    pub(crate) fn rows(&self, inputs: &BTreeMap<String, Tensor>, dtype: DType) -> Result<Tensor> {
        let features = inputs.get("input_features").ok_or_else(|| {
            Error::Input("missing input 'input_features' (the audios' log-mel features)".into())
        })?;
        let rows = match &self.projector {
            Projector::Qwen2 { linear } => {
                let mask = inputs.get("feature_attention_mask").ok_or_else(|| {
                    Error::Input("missing input 'feature_attention_mask' (the audios' real frames)".into())
                })?;
                let [_, frames] = self.tower.features_shape();
                let audios = features.dims().first().copied().unwrap_or(0);
                if mask.dims() != [audios, frames] {
                    return Err(Error::Input(format!(
                        "feature_attention_mask must be [{audios}, {frames}] (each audio's real frames), \
                         got {:?} of dtype {:?}",
                        mask.dims(),
                        mask.dtype()
                    )));
                }
                let ones = mask.eq(1.0)?;
                if !ones.logical_or(&mask.eq(0.0)?)?.all()?.item::<bool>()? {
                    return Err(Error::Input(
                        "input 'feature_attention_mask' must hold ones and zeros".into(),
                    ));
                }
                let lengths: Vec<i64> = ones.to_dtype(DType::I64)?.sum(-1, false)?.to_vec()?;
                // (After the strided convolution, then after the pooling: transformers' lengths.)
                let after_conv: Vec<i64> = lengths.iter().map(|&n| (n - 1).div_euclid(2) + 1).collect();
                let kept: Vec<i64> = after_conv.iter().map(|&n| (n - 2).div_euclid(2) + 1).collect();
                let pooled = linear.forward(&self.tower.encode_pooled(features, &after_conv)?)?;
                let per_audio = kept
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        let n = n.clamp(0, pooled.dims()[1] as i64) as usize;
                        Ok(pooled.select(0, i as isize)?.narrow(0, 0, n)?)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Tensor::cat(&per_audio.iter().collect::<Vec<_>>(), 0)?
            }
            Projector::Voxtral { linear_1, act, linear_2, width } => {
                let states = self.tower.encode(features, false)?.last_hidden_state;
                let values = states.numel();
                if *width == 0 || values % width != 0 {
                    return Err(Error::Config(format!(
                        "the audio tower's {values} output values do not split into rows of intermediate_size {width}"
                    )));
                }
                let rows = states.reshape([values / width, *width])?;
                linear_2.forward(&act.forward(&linear_1.forward(&rows)?)?)?
            }
        };
        Ok(rows.to_dtype(dtype)?)
    }

    /// The features for the audio tokens of `inputs`, checked against their number (transformers'
    /// error otherwise).
    fn checked_rows(&self, inputs: &BTreeMap<String, Tensor>, dtype: DType) -> Result<Tensor> {
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        batch_seq(ids)?;
        let audio = ids.eq(self.token()? as f64)?;
        let tokens = audio.to_dtype(DType::I64)?.sum_all()?.to_vec::<i64>()?[0] as usize;
        // (Qwen2-Audio's prompts with no two audio tokens side by side are transformers' legacy
        // ones, which it expands itself: the same where each audio has one feature.)
        let s = ids.dims()[1];
        let adjacent = s > 1
            && audio.narrow(1, 0, s - 1)?.logical_and(&audio.narrow(1, 1, s - 1)?)?.any()?.item::<bool>()?;
        let legacy = matches!(self.projector, Projector::Qwen2 { .. }) && tokens > 0 && !adjacent;
        let rows = self.rows(inputs, dtype)?;
        let features = rows.dims()[0];
        if features != tokens {
            if legacy {
                return Err(Error::Unsupported(
                    "prompts with one audio token per audio (transformers' legacy expansion) are not supported: \
                     expand each audio token to its features' number, as the processor does"
                        .into(),
                ));
            }
            return Err(Error::Input(format!(
                "Audio features and audio tokens do not match, tokens: {tokens}, features: {features}"
            )));
        }
        Ok(rows)
    }

    /// transformers' outputs of the class on `inputs` with audio: `logits` and `hidden_states.N`.
    pub(crate) fn forward_named(
        &self,
        lm: &CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let text = TextWithImages::checked(inputs, self.inputs())?;
        let rows = self.checked_rows(inputs, lm.dtype())?;
        text.outputs(lm, &rows, self.token()?, None, output_hidden_states)
    }

    /// What generation takes of prompts with audio: the features of their audio tokens.
    pub(crate) fn prompt_media(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        dtype: DType,
    ) -> Result<PromptMedia> {
        let rows = self.checked_rows(inputs, dtype)?;
        Ok(PromptMedia::new(self.token()?, rows))
    }
}
