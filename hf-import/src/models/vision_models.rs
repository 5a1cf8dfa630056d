//! [`AutoModel`]'s image models: their one input, `pixel_values`, and their named outputs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::vision::pixel_values;
use super::{bucketing, AutoModel};
use crate::error::{Error, Result};

/// The input names the image models take.
pub(super) const IMAGE_INPUTS: &[&str] = &["pixel_values"];

impl AutoModel {
    /// Whether this is an image model (its input is `pixel_values`, not token ids).
    pub fn is_image_model(&self) -> bool {
        matches!(self, AutoModel::ViT(_) | AutoModel::ViTForImageClassification(_))
    }

    /// The `[channels, height, width]` of the `pixel_values` an image model takes (`None` for the
    /// text models).
    pub fn image_shape(&self) -> Option<[usize; 3]> {
        match self {
            AutoModel::ViT(m) => Some(m.image_shape()),
            AutoModel::ViTForImageClassification(m) => Some(m.vit.image_shape()),
            _ => None,
        }
    }

    /// The device of an image model's weights.
    pub(super) fn image_device(&self) -> Device {
        match self {
            AutoModel::ViT(m) => m.device(),
            AutoModel::ViTForImageClassification(m) => m.vit.device(),
            _ => unreachable!("not an image model"),
        }
    }

    /// The error of a token-ids call on an image model.
    pub(super) fn no_token_inputs(&self) -> Error {
        Error::Input("this is an image model: it takes pixel_values, not input_ids".into())
    }

    /// [`AutoModel::forward_named`] of an image model: `pixel_values` (float, `[batch, channels,
    /// height, width]`) to `last_hidden_state` and `pooler_output` (`ViTModel`) or `logits`
    /// (`ViTForImageClassification`), and `hidden_states.*`.
    pub(super) fn forward_images(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        // On a compiling device the pass is one fused program; the batch is marked dynamic, so
        // every batch size of a power-of-two bucket runs the same one.
        let device = self.image_device();
        let _fused = bucketing::fuse_forward(device);
        let batched = |dtype| bucketing::batch_on(&pixel_values(inputs, dtype)?, device);
        let mut out = Vec::new();
        let enc = match self {
            AutoModel::ViT(m) => {
                let enc = m.forward(&batched(m.dtype())?, output_hidden_states)?;
                out.push(("last_hidden_state".to_string(), enc.last_hidden_state.clone()));
                if let Some(p) = &enc.pooler_output {
                    out.push(("pooler_output".to_string(), p.clone()));
                }
                enc
            }
            AutoModel::ViTForImageClassification(m) => {
                let (logits, enc) = m.forward(&batched(m.vit.dtype())?, output_hidden_states)?;
                out.push(("logits".to_string(), logits));
                enc
            }
            _ => unreachable!("not an image model"),
        };
        out.extend(enc.hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}
