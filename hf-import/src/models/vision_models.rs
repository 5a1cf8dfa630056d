//! [`AutoModel`]'s image and image-text models (ViT, CLIP), which read their own inputs
//! (`pixel_values`, and CLIP's texts) and name their own outputs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::vision::pixel_values;
use super::{bucketing, AutoModel};
use crate::error::{Error, Result};

/// The input names the image models take.
const IMAGE_INPUTS: &[&str] = &["pixel_values"];

impl AutoModel {
    /// Whether this model takes images (`pixel_values`).
    pub fn is_image_model(&self) -> bool {
        self.runs_own_inputs() && self.input_names().contains(&"pixel_values")
    }

    /// Whether this is a ViT or CLIP model, whose inputs and outputs this file handles.
    pub(super) fn runs_own_inputs(&self) -> bool {
        matches!(self, AutoModel::ViT(_) | AutoModel::ViTForImageClassification(_) | AutoModel::Clip(_))
    }

    /// The `[channels, height, width]` of the `pixel_values` an image model takes (`None` for the
    /// text models).
    pub fn image_shape(&self) -> Option<[usize; 3]> {
        match self {
            AutoModel::ViT(m) => Some(m.image_shape()),
            AutoModel::ViTForImageClassification(m) => Some(m.vit.image_shape()),
            AutoModel::Clip(m) => m.vision().map(|v| v.image_shape()),
            _ => None,
        }
    }

    /// The device of a ViT's or CLIP's weights.
    pub(super) fn own_device(&self) -> Device {
        match self {
            AutoModel::ViT(m) => m.device(),
            AutoModel::ViTForImageClassification(m) => m.vit.device(),
            AutoModel::Clip(m) => m.device(),
            _ => unreachable!("not a ViT or CLIP model"),
        }
    }

    /// The input names of a ViT or CLIP model.
    pub(super) fn own_input_names(&self) -> &'static [&'static str] {
        match self {
            AutoModel::Clip(m) => m.input_names(),
            _ => IMAGE_INPUTS,
        }
    }

    /// [`AutoModel::last_hidden_state`] of a ViT or CLIP model: CLIP's text tower's; an error for
    /// the models without one.
    pub(super) fn own_last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let text = match self {
            AutoModel::Clip(m) => m.text_last_hidden_state(input_ids, attention_mask)?,
            _ => None,
        };
        text.ok_or_else(|| {
            Error::Input("this is an image model: it takes pixel_values, not input_ids".into())
        })
    }

    /// [`AutoModel::forward_named`] of a ViT or CLIP model: for ViT, `pixel_values` (float,
    /// `[batch, channels, height, width]`) to `last_hidden_state` and `pooler_output` (`ViTModel`)
    /// or `logits` (`ViTForImageClassification`), and `hidden_states.*`; for CLIP see
    /// [`super::Clip::forward_named`].
    pub(super) fn forward_own_inputs(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        // On a compiling device the pass is one fused program; the images' batch is marked
        // dynamic, so every batch size of a power-of-two bucket runs the same one.
        let device = self.own_device();
        let _fused = bucketing::fuse_forward(device);
        let on_device = |(k, t): (&String, &Tensor)| -> Result<(String, Tensor)> {
            let t = if k == "pixel_values" { bucketing::batch_on(t, device)? } else { t.to(device)? };
            Ok((k.clone(), t))
        };
        let inputs = inputs.iter().map(on_device).collect::<Result<BTreeMap<_, _>>>()?;
        let mut out = Vec::new();
        let enc = match self {
            AutoModel::Clip(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::ViT(m) => {
                let enc = m.forward(&pixel_values(&inputs, m.dtype())?, output_hidden_states)?;
                out.push(("last_hidden_state".to_string(), enc.last_hidden_state.clone()));
                if let Some(p) = &enc.pooler_output {
                    out.push(("pooler_output".to_string(), p.clone()));
                }
                enc
            }
            AutoModel::ViTForImageClassification(m) => {
                let (logits, enc) =
                    m.forward(&pixel_values(&inputs, m.vit.dtype())?, output_hidden_states)?;
                out.push(("logits".to_string(), logits));
                enc
            }
            _ => unreachable!("not a ViT or CLIP model"),
        };
        out.extend(enc.hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}
