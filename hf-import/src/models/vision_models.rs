//! [`AutoModel`]'s image, image-text, speech and encoder-decoder models (ViT, CLIP, T5, BART,
//! Whisper), which read their own inputs (`pixel_values`, CLIP's texts, `decoder_input_ids`,
//! `input_features`) and name their own outputs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::vision::pixel_values;
use super::{bucketing, vit_mae, AutoModel};
use crate::error::{Error, Result};
use crate::generate::EncoderDecoder;

/// The input names the image models take.
const IMAGE_INPUTS: &[&str] = &["pixel_values"];

impl AutoModel {
    /// Whether this model takes images (`pixel_values`).
    pub fn is_image_model(&self) -> bool {
        self.runs_own_inputs() && self.input_names().contains(&"pixel_values")
    }

    /// Whether this is a ViT, CLIP, T5, BART or Whisper model, whose inputs and outputs this file handles.
    pub(super) fn runs_own_inputs(&self) -> bool {
        matches!(
            self,
            AutoModel::ViT(_)
                | AutoModel::ViTForImageClassification(_)
                | AutoModel::Clip(_)
                | AutoModel::T5(_)
                | AutoModel::Bart(_)
                | AutoModel::Whisper(_)
                | AutoModel::Wav2Vec2(_)
                | AutoModel::ResNet(_)
                | AutoModel::ConvNext(_)
                | AutoModel::Swin(_)
                | AutoModel::Beit(_)
                | AutoModel::Dinov3Vit(_)
                | AutoModel::Segformer(_)
                | AutoModel::DepthAnything(_)
                | AutoModel::Dpt(_)
                | AutoModel::MobileNet(_)
                | AutoModel::MobileVit(_)
                | AutoModel::Cvt(_)
                | AutoModel::Yolos(_)
                | AutoModel::Levit(_)
                | AutoModel::ViTMae(_)
                | AutoModel::EfficientNet(_)
                | AutoModel::RegNet(_)
                | AutoModel::Glpn(_)
                | AutoModel::Bit(_)
                | AutoModel::PoolFormer(_)
                | AutoModel::AudioSpectrogram(_)
                | AutoModel::Siglip(_)
                | AutoModel::Dinov2(_)
                | AutoModel::Dinov2ForImageClassification(_)
                | AutoModel::Mamba(_)
        )
    }

    /// The `[channels, height, width]` of the `pixel_values` an image model takes (`None` for the
    /// text models).
    pub fn image_shape(&self) -> Option<[usize; 3]> {
        match self {
            AutoModel::ViT(m) => Some(m.image_shape()),
            AutoModel::ViTForImageClassification(m) => Some(m.vit.image_shape()),
            AutoModel::Clip(m) => m.vision().map(|v| v.image_shape()),
            AutoModel::Siglip(m) => m.image_shape(),
            AutoModel::Dinov2(m) => Some(m.image_shape()),
            AutoModel::Dinov2ForImageClassification(m) => Some(m.dinov2.image_shape()),
            _ => None,
        }
    }

    /// The device of a ViT's, CLIP's, T5's, BART's or Whisper's weights.
    pub(super) fn own_device(&self) -> Device {
        match self {
            AutoModel::ViT(m) => m.device(),
            AutoModel::ViTForImageClassification(m) => m.vit.device(),
            AutoModel::Clip(m) => m.device(),
            AutoModel::T5(m) => EncoderDecoder::device(m),
            AutoModel::Bart(m) => EncoderDecoder::device(m),
            AutoModel::Whisper(m) => m.device(),
            AutoModel::Wav2Vec2(m) => m.device(),
            AutoModel::ResNet(m) => m.device(),
            AutoModel::ConvNext(m) => m.device(),
            AutoModel::Swin(m) => m.device(),
            AutoModel::Beit(m) => m.device(),
            AutoModel::Dinov3Vit(m) => m.device(),
            AutoModel::Segformer(m) => m.device(),
            AutoModel::DepthAnything(m) => m.device(),
            AutoModel::Dpt(m) => m.device(),
            AutoModel::MobileNet(m) => m.device(),
            AutoModel::MobileVit(m) => m.device(),
            AutoModel::Cvt(m) => m.device(),
            AutoModel::Yolos(m) => m.device(),
            AutoModel::Levit(m) => m.device(),
            AutoModel::ViTMae(m) => m.device(),
            AutoModel::EfficientNet(m) => m.device(),
            AutoModel::RegNet(m) => m.device(),
            AutoModel::Glpn(m) => m.device(),
            AutoModel::Bit(m) => m.device(),
            AutoModel::PoolFormer(m) => m.device(),
            AutoModel::AudioSpectrogram(m) => m.device(),
            AutoModel::Siglip(m) => m.device(),
            AutoModel::Dinov2(m) => m.device(),
            AutoModel::Dinov2ForImageClassification(m) => m.dinov2.device(),
            AutoModel::Mamba(m) => m.device(),
            _ => unreachable!("not a ViT, DINOv2, CLIP, SigLIP, T5, BART or Whisper model"),
        }
    }

    /// The input names of a ViT, CLIP, T5, BART or Whisper model.
    pub(super) fn own_input_names(&self) -> &'static [&'static str] {
        match self {
            AutoModel::Clip(m) => m.input_names(),
            AutoModel::T5(m) => m.input_names(),
            AutoModel::Bart(m) => m.input_names(),
            AutoModel::Whisper(m) => m.input_names(),
            AutoModel::Wav2Vec2(m) => m.input_names(),
            AutoModel::AudioSpectrogram(m) => m.input_names(),
            AutoModel::Siglip(m) => m.input_names(),
            AutoModel::Mamba(m) => m.input_names(),
            AutoModel::ViTMae(_) => vit_mae::INPUTS,
            _ => IMAGE_INPUTS,
        }
    }

    /// [`AutoModel::last_hidden_state`] of a ViT, CLIP, T5, BART or Whisper model: CLIP's text tower's, T5's
    /// encoder's; an error for the image models.
    pub(super) fn own_last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let text = match self {
            AutoModel::Clip(m) => m.text_last_hidden_state(input_ids, attention_mask)?,
            AutoModel::Siglip(m) => m.text_last_hidden_state(input_ids, attention_mask)?,
            AutoModel::T5(m) => {
                let (ids, mask) = ids_and_mask(input_ids, attention_mask)?;
                Some(m.encode(&ids, mask.as_ref(), false)?.last_hidden_state)
            }
            AutoModel::Bart(m) => {
                let (ids, mask) = ids_and_mask(input_ids, attention_mask)?;
                Some(m.encode(&ids, mask.as_ref(), false)?.last_hidden_state)
            }
            AutoModel::Mamba(m) => {
                let (ids, mask) = ids_and_mask(input_ids, attention_mask)?;
                Some(m.hidden_states(&ids, mask.as_ref(), None, false)?.0)
            }
            _ => None,
        };
        text.ok_or_else(|| match self {
            AutoModel::Whisper(_) => {
                Error::Input("this is a speech model: it takes input_features, not input_ids".into())
            }
            AutoModel::Wav2Vec2(_) | AutoModel::AudioSpectrogram(_) => {
                Error::Input("this is an audio model: it takes input_values, not input_ids".into())
            }
            _ => Error::Input("this is an image model: it takes pixel_values, not input_ids".into()),
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
            let batched = k == "pixel_values" || k == "noise";
            let t = if batched { bucketing::batch_on(t, device)? } else { t.to(device)? };
            Ok((k.clone(), t))
        };
        let inputs = inputs.iter().map(on_device).collect::<Result<BTreeMap<_, _>>>()?;
        let mut out = Vec::new();
        let enc = match self {
            AutoModel::Clip(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::T5(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Bart(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Whisper(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Wav2Vec2(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::ResNet(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::ConvNext(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Swin(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Beit(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Dinov3Vit(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Segformer(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::DepthAnything(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Dpt(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::MobileNet(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::MobileVit(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Cvt(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Yolos(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Levit(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::ViTMae(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::EfficientNet(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::RegNet(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Glpn(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Bit(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::PoolFormer(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::AudioSpectrogram(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Siglip(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::Mamba(m) => return m.forward_named(&inputs, output_hidden_states),
            AutoModel::ViT(m) => {
                let enc = m.forward(&pixel_values(&inputs, m.dtype())?, output_hidden_states)?;
                out.push(("last_hidden_state".to_string(), enc.last_hidden_state.clone()));
                if let Some(p) = &enc.pooler_output {
                    out.push(("pooler_output".to_string(), p.clone()));
                }
                enc
            }
            AutoModel::ViTForImageClassification(m) => {
                let (named, enc) =
                    m.forward_named(&pixel_values(&inputs, m.vit.dtype())?, output_hidden_states)?;
                out.extend(named);
                enc
            }
            AutoModel::Dinov2(m) => {
                let enc = m.forward(&pixel_values(&inputs, m.dtype())?, output_hidden_states)?;
                out.push(("last_hidden_state".to_string(), enc.last_hidden_state.clone()));
                if let Some(p) = &enc.pooler_output {
                    out.push(("pooler_output".to_string(), p.clone()));
                }
                enc
            }
            AutoModel::Dinov2ForImageClassification(m) => {
                let pixels = pixel_values(&inputs, m.dinov2.dtype())?;
                let (logits, enc) = m.forward(&pixels, output_hidden_states)?;
                out.push(("logits".to_string(), logits));
                enc
            }
            _ => unreachable!("not a ViT, DINOv2, CLIP, SigLIP, T5, BART or Whisper model"),
        };
        out.extend(enc.hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}

/// `input_ids` as int64 and `attention_mask` as int64 ones and zeros, for an encoder's states.
fn ids_and_mask(input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<(Tensor, Option<Tensor>)> {
    let ids = super::ids_as_i64("input_ids", input_ids)?;
    let mask = attention_mask.map(|m| m.ne(0.0)?.to_dtype(oxtorch_tensor::DType::I64)).transpose()?;
    Ok((ids, mask))
}
