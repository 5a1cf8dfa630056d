//! LFM2-VL's images (`Lfm2VlForConditionalGeneration`): the SigLIP2 NaFlex tower's last hidden
//! state (see [`super::siglip2_vision`]), each image's patches in blocks of `downsample_factor` ×
//! `downsample_factor` (an odd last row or column left out), each block's patches concatenated row
//! by row (transformers' gather and `pixel_unshuffle`), then the projector's layer norm
//! (`projector_use_layernorm`), linear, activation and linear into the language model's width: an
//! image's features in place of its image tokens.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::check_input_dtype;
use super::image_inputs::{ImageInputs, TextWithImages};
use super::llava_images::{image_token, vars_with, vision_config};
use super::siglip2_vision::{Siglip2Output, Siglip2VisionTower};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear};
use crate::weights::Weights;

/// The inputs of a forward pass with LFM2-VL's images.
const INPUTS: &[&str] = &[
    "input_ids",
    "attention_mask",
    "position_ids",
    "pixel_values",
    "spatial_shapes",
    "pixel_attention_mask",
];

/// The tower, the projector and the token the features replace.
#[derive(Debug, Clone)]
pub(crate) struct Lfm2VlImages {
    tower: Siglip2VisionTower,
    factor: usize,
    norm: Option<LayerNorm>,
    linear_1: Linear,
    act: Activation,
    linear_2: Linear,
    image_token: i64,
}

impl Lfm2VlImages {
    /// The image path of an LFM2-VL checkpoint (`None` where it has no vision tower); its features
    /// must be `text_hidden` wide.
    pub(crate) fn load(cfg: &Config, weights: &Weights, text_hidden: usize) -> Result<Option<Self>> {
        let probe = "embeddings.patch_embedding.weight";
        let prefixes = ["model.vision_tower.", "vision_tower.", "model.vision_tower.vision_model."];
        let Some(vars) = vars_with(weights, &prefixes, probe) else { return Ok(None) };
        let vision = vision_config(cfg)?;
        let tower = Siglip2VisionTower::load(&vars, &vision)?;
        let factor = cfg.usize_or("downsample_factor", 2)?;
        let merged =
            tower.hidden().checked_mul(factor).and_then(|n| n.checked_mul(factor)).filter(|&n| n > 0);
        let Some(merged) = merged else {
            return Err(Error::Config(format!("downsample_factor {factor} must be positive")));
        };
        let inner = cfg.usize_or("projector_hidden_size", 2560)?;
        let bias = cfg.bool_or("projector_bias", true)?;
        let p = vars_with(
            weights,
            &["model.multi_modal_projector.", "multi_modal_projector."],
            "linear_1.weight",
        )
        .ok_or_else(|| {
            Error::Config("the checkpoint has a vision tower but no multi_modal_projector".into())
        })?;
        let norm = if cfg.bool_or("projector_use_layernorm", true)? {
            Some(LayerNorm::load(&p.pp("layer_norm"), merged, 1e-5)?)
        } else {
            None
        };
        let image_token = image_token(cfg, 396)?;
        Ok(Some(Lfm2VlImages {
            tower,
            factor,
            norm,
            linear_1: Linear::load(&p.pp("linear_1"), merged, inner, bias)?,
            act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
            linear_2: Linear::load(&p.pp("linear_2"), inner, text_hidden, bias)?,
            image_token,
        }))
    }

    /// The token whose embeddings the features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// The images through the tower and the projector: the tower's outputs and each image's
    /// features `[tokens, hidden]`.
    fn encode(&self, images: &ImageInputs<'_>) -> Result<(Siglip2Output, Vec<Tensor>)> {
        let missing = |name: &str| {
            Error::Input(format!("missing input '{name}' (LFM2-VL's images of their own sizes)"))
        };
        let shapes = images.spatial_shapes.ok_or_else(|| missing("spatial_shapes"))?;
        let kept = images.pixel_attention_mask.ok_or_else(|| missing("pixel_attention_mask"))?;
        check_input_dtype("spatial_shapes", shapes)?;
        check_input_dtype("pixel_attention_mask", kept)?;
        let n = images.pixel_values.dims().first().copied().unwrap_or(0);
        if shapes.dims() != [n, 2] {
            return Err(Error::Input(format!(
                "input 'spatial_shapes' must be [{n}, 2] (each image's rows and columns of patches), got {:?}",
                shapes.dims()
            )));
        }
        let shapes: Vec<(usize, usize)> = shapes
            .to_dtype(DType::I64)?
            .to_vec2::<i64>()?
            .iter()
            .map(|s| (usize::try_from(s[0]).unwrap_or(0), usize::try_from(s[1]).unwrap_or(0)))
            .collect();
        let out = self.tower.forward(images.pixel_values, &shapes, kept)?;
        let (hidden, patches) = (self.tower.hidden(), images.pixel_values.dims()[1]);
        let f = self.factor;
        // Each token's block of f × f patches, row by row (transformers' gather and unshuffle).
        let mut index = Vec::new();
        let mut counts = Vec::with_capacity(shapes.len());
        for (i, &(h, w)) in shapes.iter().enumerate() {
            let (rows, cols) = (h / f, w / f);
            counts.push(rows * cols);
            for t in 0..rows * cols {
                let (br, bc) = (t / cols, t % cols);
                for a in 0..f {
                    index.extend((0..f).map(|c| (i * patches + (br * f + a) * w + bc * f + c) as i64));
                }
            }
        }
        let total: usize = counts.iter().sum();
        let states = out.last_hidden_state.reshape([shapes.len() * patches, hidden])?;
        let index = Tensor::from_vec(index, [total * f * f])?.to(states.device())?;
        let mut x = states.index_select(0, &index)?.reshape([total, f * f * hidden])?;
        if let Some(norm) = &self.norm {
            x = norm.forward(&x)?;
        }
        let x = self.linear_2.forward(&self.act.forward(&self.linear_1.forward(&x)?)?)?;
        let mut at = 0;
        let features = counts
            .iter()
            .map(|&c| {
                at += c;
                Ok(x.narrow(0, (at - c) as isize, c)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((out, features))
    }

    /// The rows that replace the image tokens' embeddings: `[features, hidden]` in `dtype`, image
    /// after image.
    pub(crate) fn rows(&self, images: &ImageInputs<'_>, dtype: DType) -> Result<Tensor> {
        let (_, features) = self.encode(images)?;
        Ok(Tensor::cat(&features.iter().collect::<Vec<_>>(), 0)?.to_dtype(dtype)?)
    }

    /// [`super::AutoModel::forward_named`] with images: `lm`'s outputs with the features in place
    /// of the image tokens, and the tower's `image_outputs.last_hidden_state` and each image's
    /// features as `image_outputs.pooler_output.N`.
    pub(crate) fn forward_named(
        &self,
        lm: &super::decoder::CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let text = TextWithImages::checked(inputs, INPUTS)?;
        let images = ImageInputs::from_named(inputs).expect("inputs with pixel_values");
        let (out, features) = self.encode(&images)?;
        let rows = Tensor::cat(&features.iter().collect::<Vec<_>>(), 0)?.to_dtype(lm.dtype())?;
        let mut named = text.outputs(lm, &rows, self.image_token, None, output_hidden_states)?;
        named.push(("image_outputs.last_hidden_state".into(), out.last_hidden_state));
        named.extend(
            features.into_iter().enumerate().map(|(i, f)| (format!("image_outputs.pooler_output.{i}"), f)),
        );
        Ok(named)
    }
}
