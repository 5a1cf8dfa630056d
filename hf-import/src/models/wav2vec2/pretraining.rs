//! The pre-training heads (`Wav2Vec2ForPreTraining`: facebook/wav2vec2-base, xls-r-300m;
//! `UniSpeechForPreTraining`, `UniSpeechSatForPreTraining`) at inference, as transformers runs
//! them in eval mode: the quantizer picks each frame's codevector per group by the argmax of a
//! projection of the normed convolution features (`extract_features`), and the outputs are the
//! projected encoder states, the projected quantized states and the codevectors' perplexity.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Vars;

/// Which family's pre-training head, as they differ in what they compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// `projected_states` = `project_hid(last_hidden_state)`, `projected_quantized_states` =
    /// `project_q(codevectors)`, the perplexity over the frames of `mask_time_indices` if given
    Wav2Vec2,
    /// `projected_states` = `last_hidden_state`, `projected_quantized_states` =
    /// `project_hid(project_q(codevectors))`, the perplexity over every frame
    UniSpeech,
    /// `logits` = `extract_features`, `projected_states` = `last_hidden_state` (no quantizer)
    UniSpeechSat,
}

/// The Gumbel quantizer at inference: `weight_proj` to `groups · per_group` scores per frame and
/// `codevectors` `[1, groups · per_group, codevector_dim / groups]`.
#[derive(Debug, Clone)]
struct Quantizer {
    weight_proj: Linear,
    codevectors: Tensor,
    groups: usize,
    per_group: usize,
}

/// A pre-training head (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct PreTraining {
    style: Style,
    quantizer: Option<Quantizer>,
    project_hid: Option<Linear>,
    project_q: Option<Linear>,
}

impl PreTraining {
    /// `quantizer`, `project_hid` and `project_q` under `vars` (none for UniSpeech-SAT), sized by
    /// `num_codevector_groups`, `num_codevectors_per_group`, `codevector_dim` and
    /// `proj_codevector_dim`, for `features` convolution channels and a `hidden`-wide encoder.
    pub(super) fn load(
        vars: &Vars<'_>,
        cfg: &Config,
        style: Style,
        features: usize,
        hidden: usize,
    ) -> Result<Self> {
        if style == Style::UniSpeechSat {
            return Ok(PreTraining { style, quantizer: None, project_hid: None, project_q: None });
        }
        let groups = cfg.usize_or("num_codevector_groups", 2)?;
        let per_group = cfg.usize_or("num_codevectors_per_group", 320)?;
        let dim = cfg.usize_or("codevector_dim", 256)?;
        let proj = cfg.usize_or("proj_codevector_dim", 256)?;
        if groups == 0 || per_group == 0 || dim % groups != 0 || groups.checked_mul(per_group).is_none() {
            return Err(Error::Config(format!(
                "codevector_dim ({dim}) must be a multiple of num_codevector_groups ({groups}), with \
                 num_codevectors_per_group ({per_group}) positive"
            )));
        }
        let q = vars.pp("quantizer");
        let quantizer = Quantizer {
            weight_proj: Linear::load(&q.pp("weight_proj"), features, groups * per_group, true)?,
            codevectors: q.get("codevectors", &[1, groups * per_group, dim / groups])?,
            groups,
            per_group,
        };
        let project_q = Linear::load(&vars.pp("project_q"), dim, proj, true)?;
        let project_hid = match style {
            Style::Wav2Vec2 => Linear::load(&vars.pp("project_hid"), hidden, proj, true)?,
            _ => Linear::load(&vars.pp("project_hid"), proj, hidden, true)?,
        };
        Ok(PreTraining {
            style,
            quantizer: Some(quantizer),
            project_hid: Some(project_hid),
            project_q: Some(project_q),
        })
    }

    /// The head's outputs, in transformers' order, from the encoder's `last` hidden state, the
    /// normed convolution features `features` `[batch, frames, channels]` and the frames
    /// `mask_time_indices` masks (`[batch, frames]`, nonzero where masked).
    pub(super) fn forward(
        &self,
        last: Tensor,
        features: &Tensor,
        mask_time_indices: Option<&Tensor>,
    ) -> Result<Vec<(String, Tensor)>> {
        let (Some(quantizer), Some(project_hid), Some(project_q)) =
            (&self.quantizer, &self.project_hid, &self.project_q)
        else {
            return Ok(vec![
                ("logits".to_string(), features.clone()),
                ("projected_states".to_string(), last),
            ]);
        };
        let (codevectors, perplexity) =
            quantizer.forward(features, mask_time_indices.filter(|_| self.style == Style::Wav2Vec2))?;
        let quantized = project_q.forward(&codevectors)?;
        let (projected, quantized) = match self.style {
            Style::Wav2Vec2 => (project_hid.forward(&last)?, quantized),
            _ => (last, project_hid.forward(&quantized)?),
        };
        Ok(vec![
            ("projected_states".to_string(), projected),
            ("projected_quantized_states".to_string(), quantized),
            ("codevector_perplexity".to_string(), perplexity),
        ])
    }
}

impl Quantizer {
    /// Each frame's codevectors `[batch, frames, codevector_dim]` (per group the one of the highest
    /// score, the first of equals) and their perplexity (a 0-d tensor in the features' dtype: per group
    /// `exp(−Σ p log p)` of the codevectors' frequencies over the frames, or over the masked ones,
    /// summed over the groups).
    fn forward(&self, features: &Tensor, mask: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let &[batch, frames, _] = features.dims() else { unreachable!("the features are 3-D") };
        let (groups, per_group) = (self.groups, self.per_group);
        let scores = self.weight_proj.forward(features)?.reshape([batch * frames * groups, per_group])?;
        let picks = scores.argmax(Some(-1), false)?.to_dtype(DType::I64)?;
        // Group g's pick v is row g · per_group + v of the codevectors.
        let offsets: Vec<i64> =
            (0..batch * frames * groups).map(|i| ((i % groups) * per_group) as i64).collect();
        let offsets = Tensor::from_vec(offsets, [batch * frames * groups])?.to(picks.device())?;
        let rows = picks.add(&offsets)?;
        let width = self.codevectors.dims()[2];
        let table = self.codevectors.reshape([groups * per_group, width])?;
        let codevectors = table.index_select(0, &rows)?.reshape([batch, frames, width * groups])?;

        let picks = picks.to(Device::Cpu)?.to_vec::<i64>()?;
        let counted: Vec<bool> = match mask {
            Some(m) => m
                .ne(0)?
                .to_dtype(DType::I64)?
                .to(Device::Cpu)?
                .to_vec::<i64>()?
                .iter()
                .map(|&v| v != 0)
                .collect(),
            None => vec![true; batch * frames],
        };
        let mut counts = vec![0f32; groups * per_group];
        for (i, &v) in picks.iter().enumerate() {
            if counted[i / groups] {
                counts[(i % groups) * per_group + v as usize] += 1.0;
            }
        }
        let n = counted.iter().filter(|&&c| c).count() as f32;
        let perplexity: f32 = counts
            .chunks(per_group)
            .map(|group| {
                let entropy: f32 =
                    group.iter().map(|&c| c / n).map(|p| if p == 0.0 { 0.0 } else { p * p.ln() }).sum();
                (-entropy).exp()
            })
            .sum();
        // (In the features' dtype, as transformers' one-hot probabilities are.)
        let perplexity =
            Tensor::from_vec(vec![perplexity], [])?.to_dtype(features.dtype())?.to(features.device())?;
        Ok((codevectors.to_dtype(features.dtype())?, perplexity))
    }
}
