//! Llama 3.2 Vision's images (`MllamaForConditionalGeneration` with `pixel_values`).
//!
//! The tiled tower ([`super::mllama_vision`]) turns each image's tiles into patch features,
//! `multi_modal_projector` projects them to the language model's width, and the decoder's
//! cross-attention layers attend to them (every image's tiles' patches of a prompt, in order):
//! unlike the LLaVA family, no token's embedding is replaced. `cross_attention_mask` `[batch, seq,
//! images, tiles]` says which tiles each token sees (the processor's: an image's tiles from its
//! `<|image|>` token on); a token that sees none keeps its self-attention layers' result alone (its
//! cross-attention MLP's output dropped). Without the mask every token sees every tile. The
//! `<|image|>` token itself is an ordinary token whose embedding is one of the table's 8 rows past
//! the vocabulary.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::decoder::{batch_seq, CausalLm};
use super::image_inputs::TextWithImages;
use super::llava_images::{image_token, vars_with, vision_config};
use super::mllama_vision::MllamaVisionTower;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::PromptMedia;
use crate::layers::{CrossAttentionStates, Linear};
use crate::weights::Weights;

/// The inputs of a forward pass with images.
const INPUTS: &[&str] = &[
    "input_ids",
    "attention_mask",
    "position_ids",
    "pixel_values",
    "aspect_ratio_ids",
    "aspect_ratio_mask",
    "cross_attention_mask",
];

/// The tower, the projector and the image token (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct MllamaImages {
    tower: MllamaVisionTower,
    projector: Linear,
    image_token: i64,
    /// the image token's embedding `[hidden]` (a row of the table, past the vocabulary); `None`
    /// where the config's token is no row of it (such ids are then an error, as in transformers)
    token_row: Option<Tensor>,
    /// the image token is past the decoder's table (the vocabulary)
    past_vocabulary: bool,
    /// the language model's width
    hidden: usize,
}

impl MllamaImages {
    /// The image path of an `mllama` checkpoint (`vision_model.*`, `multi_modal_projector.*`, or
    /// under `model.`), `None` when it has no vision tower; `embed_tokens` is the language model's
    /// whole embedding table, whose row the image token takes, `vocab` the decoder's part of it.
    pub(crate) fn load(
        cfg: &Config,
        weights: &Weights,
        embed_tokens: &Tensor,
        vocab: usize,
    ) -> Result<Option<Self>> {
        let probe = "patch_embedding.weight";
        let Some(vars) = vars_with(weights, &["vision_model.", "model.vision_model."], probe) else {
            return Ok(None);
        };
        let tower = MllamaVisionTower::load(&vars, &vision_config(cfg)?)?;
        let (rows, hidden) = (embed_tokens.dims()[0], embed_tokens.dims()[1]);
        let p = vars_with(weights, &["multi_modal_projector.", "model.multi_modal_projector."], "weight")
            .ok_or_else(|| {
                Error::Config("the checkpoint has a vision tower but no multi_modal_projector".into())
            })?;
        let image_token = image_token(cfg, 128_256)?;
        let token_row = match usize::try_from(image_token) {
            Ok(row) if row < rows => Some(embed_tokens.select(0, row as isize)?.contiguous()?),
            _ => None,
        };
        Ok(Some(MllamaImages {
            projector: Linear::load(&p, tower.output_dim(), hidden, true)?,
            tower,
            image_token,
            token_row,
            hidden,
            past_vocabulary: image_token as u64 >= vocab as u64,
        }))
    }

    /// The image token.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// What `lm`'s cross-attention layers attend to for the images of `inputs` (`pixel_values`,
    /// `aspect_ratio_ids`, `aspect_ratio_mask`, and `cross_attention_mask` where given, against
    /// `input_ids`), and the tower's output `[batch, images, tiles, patches, vision_output_dim]`.
    fn states(
        &self,
        lm: &CausalLm,
        inputs: &BTreeMap<String, Tensor>,
    ) -> Result<(CrossAttentionStates, Tensor)> {
        let input = |name: &str| {
            inputs
                .get(name)
                .ok_or_else(|| Error::Input(format!("missing input '{name}' (the images' {})", what(name))))
        };
        let (pixels, ratio_ids, ratio_mask) =
            (input("pixel_values")?, input("aspect_ratio_ids")?, input("aspect_ratio_mask")?);
        let (prompts, s) = batch_seq(input("input_ids")?)?;
        let ratio_mask = zeros_and_ones("aspect_ratio_mask", ratio_mask)?;
        let vision = self.tower.forward(pixels, ratio_ids, &ratio_mask)?;
        let &[b, images, tiles, patches, _] = vision.dims() else {
            unreachable!("the tower's output is 5-D")
        };
        if prompts != b {
            return Err(Error::Input(format!(
                "pixel_values has images for {b} prompts, input_ids {prompts}"
            )));
        }
        let hidden = self.hidden;
        let features = self.projector.forward(&vision.to_dtype(lm.dtype())?)?;
        let features = features.reshape([b, images * tiles * patches, hidden])?;
        let mask = match inputs.get("cross_attention_mask") {
            Some(m) => {
                if m.dims() != [b, s, images, tiles] {
                    return Err(Error::Input(format!(
                        "cross_attention_mask must be [{b}, {s}, {images}, {tiles}] (each token's view of \
                         each image's tiles), got {:?}",
                        m.dims()
                    )));
                }
                let seen = zeros_and_ones("cross_attention_mask", m)?;
                let seen = seen.unsqueeze(-1)?.expand([b, s, images, tiles, patches])?;
                Some(seen.reshape([b, s, images * tiles * patches])?)
            }
            None => None,
        };
        Ok((lm.cross_attention_states(&features, mask.as_ref())?, vision))
    }

    /// transformers' outputs of `MllamaForConditionalGeneration` on `inputs` with images:
    /// `logits`, `hidden_states.N` (the cross-attention layers' too) and
    /// `image_outputs.last_hidden_state`.
    pub(crate) fn forward_named(
        &self,
        lm: &CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let text = TextWithImages::checked(inputs, INPUTS)?;
        let (states, vision) = self.states(lm, inputs)?;
        let token = self.token_row.as_ref().map(|row| (self.image_token, row));
        let mut named = text.outputs_attending(lm, &states, token, output_hidden_states)?;
        named.push(("image_outputs.last_hidden_state".into(), vision));
        Ok(named)
    }

    /// transformers' outputs on text whose `input_ids` hold the image token but no images are
    /// given (the token embedded as its row, the cross-attention layers skipped); `None` when no
    /// token is the image token.
    pub(crate) fn forward_text(
        &self,
        lm: &CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Option<Vec<(String, Tensor)>>> {
        let Some(ids) = inputs.get("input_ids") else { return Ok(None) };
        let count = ids.eq(self.image_token as f64)?.to_dtype(DType::I64)?.sum_all()?.to_vec::<i64>()?[0];
        let Some(row) = self.token_row.as_ref().filter(|_| count > 0 && self.past_vocabulary) else {
            return Ok(None);
        };
        let text = TextWithImages::checked(inputs, &INPUTS[..3])?;
        let rows = row.unsqueeze(0)?.expand([count as usize, self.hidden])?;
        Ok(Some(text.outputs(lm, &rows, self.image_token, None, output_hidden_states)?))
    }

    /// What generation takes of prompts with images: the image tokens' embeddings (their row of
    /// the table) and the cross-attention states.
    /// Without `pixel_values`, prompts that hold the image token past the vocabulary take its
    /// row alone (`None` for other prompts).
    pub(crate) fn prompt_media(
        &self,
        lm: &CausalLm,
        inputs: &BTreeMap<String, Tensor>,
    ) -> Result<Option<PromptMedia>> {
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        batch_seq(ids)?;
        let states = match inputs.contains_key("pixel_values") {
            true => Some(self.states(lm, inputs)?.0),
            false if self.past_vocabulary && ids.eq(self.image_token as f64)?.any()?.item::<bool>()? => None,
            false => return Ok(None),
        };
        let count = ids.eq(self.image_token as f64)?.to_dtype(DType::I64)?.sum_all()?.to_vec::<i64>()?[0];
        let rows = match &self.token_row {
            Some(row) => row.unsqueeze(0)?.expand([count as usize, self.hidden])?.contiguous()?,
            None if count == 0 => {
                Tensor::zeros([0, self.hidden], (self.projector.weight.dtype(), ids.device()))?
            }
            None => {
                return Err(Error::Input(format!(
                    "input_ids hold the image token {}, which is no row of the embedding table",
                    self.image_token
                )))
            }
        };
        Ok(Some(PromptMedia { cross: states, ..PromptMedia::new(self.image_token, rows) }))
    }
}

/// `mask` (any dtype, transformers' masks of ones and zeros) as bool, an error where it holds
/// another value (which transformers' masks would read in ways of their own).
fn zeros_and_ones(name: &str, mask: &Tensor) -> Result<Tensor> {
    let ones = mask.eq(1.0)?;
    if !ones.logical_or(&mask.eq(0.0)?)?.all()?.item::<bool>()? {
        return Err(Error::Input(format!("input '{name}' must hold ones and zeros")));
    }
    Ok(ones)
}

/// What an image input describes, for its missing-input error.
fn what(name: &str) -> &'static str {
    match name {
        "aspect_ratio_ids" => "tile layouts",
        "aspect_ratio_mask" => "real tiles",
        _ => "pixels",
    }
}
