//! Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's images: the vision tower's features for the image
//! tokens (and Qwen3-VL's deepstack features, see [`super::qwen_vl_vision`]) and the prompts'
//! multimodal RoPE positions (transformers' `get_rope_index`, the same for the three).
//!
//! A prompt's positions run in three streams (temporal, height, width). Its text tokens count on
//! in all three alike; an image's `t · h · w / merge²` tokens (a run of image tokens, one run per
//! image of `image_grid_thw`, in order over the prompts) take the position where the image starts
//! plus their frame, row and column among the merged patches, and the text after the image goes
//! on from that start plus the larger of its merged rows and columns. Padding (`attention_mask`
//! 0) is left out of the count and takes position 0. The runs are read from `mm_token_type_ids`
//! (1: image, 2: video), as the processor writes them, or where they are not given from the image
//! tokens themselves.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::check_input_dtype;
use super::image_inputs::{ImageInputs, TextWithImages};
use super::llava_images::vars_with;
use super::qwen_vl_vision::{grids_of, Kind, QwenVisionOutput, QwenVisionTower};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// The inputs of a forward pass with Qwen's images.
const INPUTS: &[&str] =
    &["input_ids", "attention_mask", "position_ids", "pixel_values", "image_grid_thw", "mm_token_type_ids"];

/// The tower and the tokens its features replace.
#[derive(Debug, Clone)]
pub(crate) struct QwenImages {
    tower: QwenVisionTower,
    image_token: i64,
    video_token: i64,
}

impl QwenImages {
    /// The image path of a Qwen2-VL, Qwen2.5-VL or Qwen3-VL checkpoint (the tower `kind`),
    /// `None` where it has no vision tower; its features must be `text_hidden` wide.
    pub(crate) fn load(
        cfg: &Config,
        weights: &Weights,
        kind: Kind,
        text_hidden: usize,
    ) -> Result<Option<Self>> {
        let Some(vars) = vars_with(weights, &["model.visual.", "visual."], "patch_embed.proj.weight") else {
            return Ok(None);
        };
        let vision = match cfg.get("vision_config") {
            Some(serde_json::Value::Object(m)) => Config::from_map(m.clone()),
            None | Some(serde_json::Value::Null) => Config::from_map(Default::default()),
            Some(v) => return Err(Error::Config(format!("\"vision_config\" must be an object, got {v}"))),
        };
        let tower = QwenVisionTower::load(&vars, &vision, kind)?;
        if tower.out_width() != text_hidden {
            return Err(Error::Config(format!(
                "the vision tower's features are {} wide, the language model's embeddings {text_hidden}",
                tower.out_width()
            )));
        }
        let token = |key: &str, default: i64| -> Result<i64> {
            match cfg.get(key) {
                None | Some(serde_json::Value::Null) => Ok(default),
                Some(v) => {
                    v.as_i64().ok_or_else(|| Error::Config(format!("\"{key}\" must be an integer, got {v}")))
                }
            }
        };
        Ok(Some(QwenImages {
            tower,
            image_token: token("image_token_id", 151_655)?,
            video_token: token("video_token_id", 151_656)?,
        }))
    }

    /// The token whose embeddings the features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// The images of `images` (`pixel_values` and `image_grid_thw`) through the tower.
    fn encode(&self, images: &ImageInputs<'_>) -> Result<QwenVisionOutput> {
        let grid = images.image_grid_thw.ok_or_else(|| {
            Error::Input(
                "missing input 'image_grid_thw': Qwen's pixel_values are patches of grids it gives".into(),
            )
        })?;
        let grids = grids_of(grid, self.tower.merge())?;
        self.tower.forward(images.pixel_values, &grids)
    }

    /// The rows that replace the image tokens' embeddings, `[features, hidden]` in `dtype` (image
    /// after image), and Qwen3-VL's deepstack rows added after the first layers (one such tensor
    /// per layer).
    pub(crate) fn rows(&self, images: &ImageInputs<'_>, dtype: DType) -> Result<(Tensor, Vec<Tensor>)> {
        let out = self.encode(images)?;
        let all = |per_image: &[Tensor]| -> Result<Tensor> {
            Ok(Tensor::cat(&per_image.iter().collect::<Vec<_>>(), 0)?.to_dtype(dtype)?)
        };
        Ok((all(&out.features)?, out.deepstack.iter().map(|d| all(d)).collect::<Result<_>>()?))
    }

    /// The multimodal RoPE positions `[3, batch, seq]` (int64) of prompts `input_ids` with the
    /// images of `image_grid_thw` (see the module docs).
    pub(crate) fn positions(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        mm_token_type_ids: Option<&Tensor>,
        image_grid_thw: &Tensor,
    ) -> Result<Tensor> {
        let ids = super::ids_as_i64("input_ids", input_ids)?;
        let &[b, s] = ids.dims() else {
            return Err(Error::Input(format!("input_ids must be [batch, seq], got {:?}", ids.dims())));
        };
        let rows_of = |name: &str, t: &Tensor| -> Result<Vec<Vec<i64>>> {
            check_input_dtype(name, t)?;
            if t.dims() != [b, s] {
                return Err(Error::Input(format!(
                    "input '{name}' has shape {:?}, which does not fit input_ids of shape [{b}, {s}]",
                    t.dims()
                )));
            }
            Ok(t.to_dtype(DType::I64)?.to_vec2::<i64>()?)
        };
        let ids = ids.to_vec2::<i64>()?;
        let kept = attention_mask.map(|m| rows_of("attention_mask", m)).transpose()?;
        let types = match mm_token_type_ids {
            Some(t) => rows_of("mm_token_type_ids", t)?,
            None => ids
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|&id| i64::from(id == self.image_token) + 2 * i64::from(id == self.video_token))
                        .collect()
                })
                .collect(),
        };
        let grids = grids_of(image_grid_thw, self.tower.merge())?;
        let positions = rope_index(&types, kept.as_deref(), &grids, self.tower.merge())?;
        Ok(Tensor::from_vec(positions, [3, b, s])?)
    }

    /// [`super::AutoModel::forward_named`] with images: the outputs of `lm` on the prompts, the
    /// image tokens' embeddings replaced by the images' features (Qwen3-VL's deepstack features
    /// added after the first layers), at their multimodal positions (`position_ids` where given),
    /// and the tower's under `image_outputs` (`last_hidden_state`, with `output_hidden_states` its
    /// `hidden_states.N`, each image's features as `pooler_output.N`, Qwen3-VL's as
    /// `deepstack_features.K.N`).
    pub(crate) fn forward_named(
        &self,
        lm: &super::decoder::CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let text = TextWithImages::checked(inputs, INPUTS)?;
        let images = ImageInputs::from_named(inputs).expect("inputs with pixel_values");
        let out = self.encode(&images)?;
        let grid = images.image_grid_thw.expect("encoded images have their grids");
        let text = match inputs.get("position_ids") {
            Some(_) => text,
            None => {
                let ids = &inputs["input_ids"];
                let types = inputs.get("mm_token_type_ids");
                text.at(self.positions(ids, inputs.get("attention_mask"), types, grid)?)
            }
        };
        let all = |per_image: &[Tensor]| -> Result<Tensor> {
            Ok(Tensor::cat(&per_image.iter().collect::<Vec<_>>(), 0)?.to_dtype(lm.dtype())?)
        };
        let rows = all(&out.features)?;
        let added = out.deepstack.iter().map(|d| all(d)).collect::<Result<Vec<_>>>()?;
        let mut named =
            text.outputs_adding(lm, &rows, &added, self.image_token, None, output_hidden_states)?;
        named.push(("image_outputs.last_hidden_state".into(), out.last_hidden_state));
        if output_hidden_states {
            let states = out.hidden_states.into_iter().enumerate();
            named.extend(states.map(|(i, t)| (format!("image_outputs.hidden_states.{i}"), t)));
        }
        let per_image = out.features.into_iter().enumerate();
        named.extend(per_image.map(|(i, f)| (format!("image_outputs.pooler_output.{i}"), f)));
        for (k, layer) in out.deepstack.into_iter().enumerate() {
            let per_image = layer.into_iter().enumerate();
            named.extend(per_image.map(|(i, f)| (format!("image_outputs.deepstack_features.{k}.{i}"), f)));
        }
        Ok(named)
    }
}

/// The positions `[3 · batch · seq]` (streams, then prompts, then tokens) of prompts whose tokens
/// have the modality `types` (0 text, 1 image, 2 video), with `kept` (1: a token, 0: padding) and
/// the images' `grids`; see the module docs.
fn rope_index(
    types: &[Vec<i64>],
    kept: Option<&[Vec<i64>]>,
    grids: &[[usize; 3]],
    merge: usize,
) -> Result<Vec<i64>> {
    let (b, s) = (types.len(), types.first().map_or(0, Vec::len));
    let mut out = vec![0i64; 3 * b * s];
    let mut grids = grids.iter();
    let mut image = 0usize;
    for (r, row) in types.iter().enumerate() {
        let columns: Vec<usize> = (0..s).filter(|&c| kept.is_none_or(|k| k[r][c] != 0)).collect();
        let mut at = 0;
        let mut next = 0i64;
        while at < columns.len() {
            let kind = row[columns[at]];
            let run = columns[at..].iter().take_while(|&&c| row[c] == kind).count();
            let cols = &columns[at..at + run];
            match kind {
                0 => {
                    for (i, &c) in cols.iter().enumerate() {
                        for k in 0..3 {
                            out[(k * b + r) * s + c] = next + i as i64;
                        }
                    }
                    next += run as i64;
                }
                1 => {
                    let &[t, h, w] = grids.next().ok_or_else(|| {
                        Error::Input(format!(
                            "prompt {r} has more runs of image tokens than image_grid_thw has images ({image})"
                        ))
                    })?;
                    let (gh, gw) = (h / merge, w / merge);
                    if run != t * gh * gw {
                        return Err(Error::Input(format!(
                            "image {image} (grid [{t}, {h}, {w}]) has {} features, but its run of image tokens in \
                             prompt {r} has {run} tokens",
                            t * gh * gw
                        )));
                    }
                    for (i, &c) in cols.iter().enumerate() {
                        let (f, rest) = (i / (gh * gw), i % (gh * gw));
                        let stream = [f, rest / gw, rest % gw];
                        for (k, v) in stream.iter().enumerate() {
                            out[(k * b + r) * s + c] = next + *v as i64;
                        }
                    }
                    next += gh.max(gw) as i64;
                    image += 1;
                }
                2 => {
                    return Err(Error::Unsupported(
                        "videos (mm_token_type_ids 2) are not supported: hf-import takes images".into(),
                    ))
                }
                k => {
                    return Err(Error::Input(format!(
                        "input 'mm_token_type_ids' must be 0 (text), 1 (image) or 2 (video), got {k}"
                    )))
                }
            }
            at += run;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_get_rope_index() {
        // Text, an image of 2 × 4 merged patches (grid [1, 4, 8], merge 2), text: the text after
        // it goes on from its start plus 4.
        let types = vec![vec![0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0]];
        let p = rope_index(&types, None, &[[1, 4, 8]], 2).unwrap();
        assert_eq!(&p[..11], &[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 6]);
        assert_eq!(&p[11..22], &[0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 6]);
        assert_eq!(&p[22..], &[0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 6]);
        // Left padding is skipped (position 0); a video token is refused.
        let p = rope_index(&[vec![0, 0, 1, 0]], Some(&[vec![0, 1, 1, 1]]), &[[1, 2, 2]], 2).unwrap();
        assert_eq!(&p[..4], &[0, 0, 1, 2]);
        assert!(rope_index(&[vec![2]], None, &[], 2).is_err());
        // A run that does not fit its grid, and a run past the grids, are errors.
        assert!(rope_index(&[vec![1, 1]], None, &[[1, 2, 2]], 2).is_err());
        assert!(rope_index(&[vec![1, 0, 1]], None, &[[1, 2, 2]], 2).is_err());
    }
}
