//! The inputs of a forward pass with images: the images' own (`pixel_values` and what describes
//! them, [`ImageInputs`]) and the prompts' ([`TextWithImages`]), checked.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::decoder::{AttentionBlocks, CausalLm, DecoderOutput, ReplacedRows};
use super::{check_input_dtype, check_input_shapes, ids_as_i64};
use crate::error::{Error, Result};
use crate::layers::CrossAttentionStates;

/// The image inputs of a vision-language model: `pixel_values`, and for LLaVA-NeXT and
/// LLaVA-OneVision the `image_sizes` (`[images, 2]`, `(height, width)`) that say how each image
/// was tiled, and OneVision's `batch_num_images` (images per prompt: the images of prompts with
/// several are not tiled).
#[derive(Debug, Clone, Copy)]
pub struct ImageInputs<'a> {
    /// `[images, channels, height, width]`, or LLaVA-NeXT's `[images, tiles, channels, height,
    /// width]` (each image's tiles first, padded to the most tiles) or `[all tiles, channels,
    /// height, width]`
    pub pixel_values: &'a Tensor,
    /// `image_sizes` `[images, 2]`
    pub image_sizes: Option<&'a Tensor>,
    /// `batch_num_images` `[prompts]`
    pub batch_num_images: Option<&'a Tensor>,
    /// Idefics3's `pixel_attention_mask` `[prompts, images, height, width]`
    pub pixel_attention_mask: Option<&'a Tensor>,
    /// Qwen2-VL's `image_grid_thw` `[images, 3]`: each image's patches (frames, rows, columns)
    pub image_grid_thw: Option<&'a Tensor>,
    /// LFM2-VL's `spatial_shapes` `[images, 2]`: each image's rows and columns of patches
    pub spatial_shapes: Option<&'a Tensor>,
}

impl<'a> ImageInputs<'a> {
    /// The images of `pixel_values` alone.
    pub fn pixels(pixel_values: &'a Tensor) -> Self {
        ImageInputs {
            pixel_values,
            image_sizes: None,
            batch_num_images: None,
            pixel_attention_mask: None,
            image_grid_thw: None,
            spatial_shapes: None,
        }
    }

    /// The image inputs among named ones (`None` without `pixel_values`).
    pub fn from_named(inputs: &'a BTreeMap<String, Tensor>) -> Option<Self> {
        Some(ImageInputs {
            pixel_values: inputs.get("pixel_values")?,
            image_sizes: inputs.get("image_sizes"),
            batch_num_images: inputs.get("batch_num_images"),
            pixel_attention_mask: inputs.get("pixel_attention_mask"),
            image_grid_thw: inputs.get("image_grid_thw"),
            spatial_shapes: inputs.get("spatial_shapes"),
        })
    }
}

/// Whether each of `images` images is tiled, from OneVision's `batch_num_images` (`[prompts]`):
/// those of prompts with one image are, those of prompts with several are not.
pub(crate) fn images_tiled(per_prompt: &Tensor, images: usize) -> Result<Vec<bool>> {
    check_input_dtype("batch_num_images", per_prompt)?;
    let counts = per_prompt.to_dtype(DType::I64)?.flatten(0, -1)?.to_vec::<i64>()?;
    if counts.iter().any(|&n| n < 0) || counts.iter().sum::<i64>() != images as i64 {
        return Err(Error::Input(format!(
            "input 'batch_num_images' {counts:?} must count the {images} images of 'image_sizes'"
        )));
    }
    Ok(counts.iter().flat_map(|&n| std::iter::repeat_n(n == 1, n as usize)).collect())
}

/// The tiles of `pixel_values` that `counts` (tiles per image) read: the first ones of each image
/// of `[images, max tiles, channels, height, width]`, or all of `[tiles, channels, height, width]`.
pub(crate) fn tiles(pixel_values: &Tensor, counts: &[usize]) -> Result<Tensor> {
    let dims = pixel_values.dims();
    let total: usize = counts.iter().sum();
    match dims.len() {
        5 if dims[0] == counts.len() && counts.iter().all(|&n| n <= dims[1]) => {
            let per_image = counts
                .iter()
                .enumerate()
                .map(|(i, &n)| pixel_values.select(0, i as isize)?.narrow(0, 0, n))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(Tensor::cat(&per_image.iter().collect::<Vec<_>>(), 0)?)
        }
        4 if dims[0] == total => Ok(pixel_values.clone()),
        4 | 5 => Err(Error::Input(format!(
            "input 'pixel_values' of shape {dims:?} does not hold the images' tiles: their sizes make {counts:?} tiles"
        ))),
        _ => Err(Error::Input(format!("pixel_values of shape {dims:?}, expect to be of 4 or 5 dimensions"))),
    }
}

/// The inputs that describe the images or audios (checked by their path), not the prompts' tokens.
const IMAGE_ONLY: [&str; 14] = [
    "input_features",
    "feature_attention_mask",
    "aspect_ratio_ids",
    "aspect_ratio_mask",
    "cross_attention_mask",
    "spatial_shapes",
    "pixel_values",
    "image_sizes",
    "batch_num_images",
    "pixel_attention_mask",
    "image_grid_thw",
    "pixel_values_videos",
    "video_grid_thw",
    "second_per_grid_ts",
];

/// The text inputs of a forward pass with images (`input_ids`, `attention_mask`,
/// `position_ids`), checked with the others' names against `takes`.
pub(crate) struct TextWithImages {
    /// `input_ids`, int64
    ids: Tensor,
    /// `attention_mask` as int64 ones and zeros
    mask: Option<Tensor>,
    positions: Option<Tensor>,
}

impl TextWithImages {
    /// The text inputs of `inputs`, whose names must be among `takes`; the integer inputs'
    /// dtypes and shapes checked (`pixel_values` is the image path's to check).
    pub(crate) fn checked(inputs: &BTreeMap<String, Tensor>, takes: &[&str]) -> Result<Self> {
        for (name, t) in inputs {
            if !takes.contains(&name.as_str()) {
                return Err(Error::Input(format!(
                    "unexpected input '{name}' (this model takes {})",
                    takes.join(", ")
                )));
            }
            if !IMAGE_ONLY.contains(&name.as_str()) {
                check_input_dtype(name, t)?;
            }
        }
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let text: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| !IMAGE_ONLY.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        check_input_shapes(&text)?;
        let mask = inputs.get("attention_mask").map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        Ok(TextWithImages {
            ids: ids_as_i64("input_ids", ids)?,
            mask,
            positions: inputs.get("position_ids").cloned(),
        })
    }

    /// These inputs at `positions` (a multimodal RoPE's `[3, batch, seq]`, computed for them).
    pub(crate) fn at(self, positions: Tensor) -> Self {
        TextWithImages { positions: Some(positions), ..self }
    }

    /// `lm` on these inputs, the rows of `features` (`[.., hidden]`, image after image) in place
    /// of the embeddings of `token` (looked up as id 0 when past the vocabulary), with `blocks`: its
    /// `logits` and, with `output_hidden_states`, its `hidden_states.N`.
    pub(crate) fn outputs(
        &self,
        lm: &CausalLm,
        features: &Tensor,
        token: i64,
        blocks: Option<AttentionBlocks<'_>>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let h = features.dims()[features.rank() - 1];
        let rows = features.reshape([features.numel() / h.max(1), h])?;
        let mask = self.ids.eq(token as f64)?;
        let ids = lm.ids_in_vocabulary(&self.ids, token)?;
        let replaced = ReplacedRows { mask: &mask, rows: &rows, blocks, added: &[] };
        self.run(lm, &ids, replaced, output_hidden_states)
    }

    /// [`Self::outputs`] with `rows` `[n, hidden]` in place of the embeddings of the `n` tokens
    /// `mask` marks (`[batch, seq]` bool), and `added` (`[n, hidden]` each) added there after the
    /// first layers (Qwen3-VL's deepstack features).
    pub(crate) fn outputs_replacing(
        &self,
        lm: &CausalLm,
        mask: &Tensor,
        rows: &Tensor,
        added: &[Tensor],
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let replaced = ReplacedRows { mask, rows, blocks: None, added };
        self.run(lm, &self.ids, replaced, output_hidden_states)
    }

    /// `lm` on these inputs, its cross-attention layers attending to `cross`, with `token_row`'s
    /// token embedded as its row `[hidden]` (Llama 3.2 Vision's image token, past the vocabulary,
    /// whose row is among the embedding table's extra ones): `logits` and `hidden_states.N`.
    pub(crate) fn outputs_attending(
        &self,
        lm: &CausalLm,
        cross: &CrossAttentionStates,
        token_row: Option<(i64, &Tensor)>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let replacing = match token_row {
            Some((token, row)) => {
                let mask = self.ids.eq(token as f64)?;
                let count = mask.to_dtype(DType::I64)?.sum_all()?.to_vec::<i64>()?[0] as usize;
                let rows = row.unsqueeze(0)?.expand([count, row.dims()[0]])?;
                Some((lm.ids_in_vocabulary(&self.ids, token)?, mask, rows))
            }
            None => None,
        };
        let replaced =
            replacing.as_ref().map(|(_, mask, rows)| ReplacedRows { mask, rows, blocks: None, added: &[] });
        let ids = replacing.as_ref().map_or(&self.ids, |(ids, _, _)| ids);
        let out = lm.forward_attending(
            ids,
            replaced,
            cross,
            self.mask.as_ref(),
            self.positions.as_ref(),
            output_hidden_states,
        )?;
        Ok(named_outputs(out))
    }

    /// `lm` on `ids` (these inputs' ids) with `replaced`: `logits` and `hidden_states.N`.
    fn run(
        &self,
        lm: &CausalLm,
        ids: &Tensor,
        replaced: ReplacedRows<'_>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let out = lm.forward_with_rows(
            ids,
            replaced,
            self.mask.as_ref(),
            self.positions.as_ref(),
            output_hidden_states,
        )?;
        Ok(named_outputs(out))
    }
}

/// A decoder's outputs under transformers' names: `logits` and `hidden_states.N`.
fn named_outputs(out: DecoderOutput) -> Vec<(String, Tensor)> {
    let mut named = vec![("logits".to_string(), out.logits)];
    let states = out.hidden_states.into_iter().enumerate();
    named.extend(states.map(|(i, t)| (format!("hidden_states.{i}"), t)));
    named
}

/// The image and video tokens of `input_ids` (`[batch, seq]` bool) and, for each in order, its
/// row of `[image rows; video rows]`: each image token's the next of the `images.1` rows, each
/// video token's the next of the `videos.1` rows (each must count its tokens `images.0`,
/// `videos.0`, transformers' errors otherwise; `None`: not replaced).
pub(crate) fn media_order(
    input_ids: &Tensor,
    images: (i64, Option<usize>),
    videos: (i64, Option<usize>),
) -> Result<(Tensor, Tensor)> {
    let ids = ids_as_i64("input_ids", input_ids)?;
    let flat = ids.flatten(0, -1)?.to_vec::<i64>()?;
    let count = |token: i64| flat.iter().filter(|&&id| id == token).count();
    for (what, (token, rows)) in [("Image", images), ("Video", videos)] {
        let tokens = count(token);
        if let Some(features) = rows.filter(|&n| n != tokens) {
            return Err(Error::Input(format!(
                "{what} features and {} tokens do not match, tokens: {tokens}, features: {features}",
                what.to_lowercase()
            )));
        }
    }
    let (mut next_image, mut next_video) = (0i64, images.1.unwrap_or(0) as i64);
    let mut marked = Vec::with_capacity(flat.len());
    let mut index = Vec::new();
    for &id in &flat {
        let next = if images.1.is_some() && id == images.0 {
            Some(&mut next_image)
        } else if videos.1.is_some() && id == videos.0 {
            Some(&mut next_video)
        } else {
            None
        };
        marked.push(next.is_some());
        if let Some(next) = next {
            index.push(*next);
            *next += 1;
        }
    }
    let n = index.len();
    Ok((Tensor::from_vec(marked, ids.dims().to_vec())?, Tensor::from_vec(index, [n])?))
}

/// The rows of `[images; videos]` at `index` (see [`media_order`]).
pub(crate) fn in_order(index: &Tensor, images: Option<&Tensor>, videos: Option<&Tensor>) -> Result<Tensor> {
    let parts: Vec<&Tensor> = images.into_iter().chain(videos).collect();
    let all = Tensor::cat(&parts, 0)?;
    Ok(all.index_select(0, &index.to(all.device())?)?)
}
