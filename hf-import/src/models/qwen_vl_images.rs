//! Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's images and videos: the
//! vision tower's features for the image and video tokens (and Qwen3-VL's deepstack features, see
//! [`super::qwen_vl_vision`]) and the prompts' multimodal RoPE positions (transformers'
//! `get_rope_index`).
//!
//! A prompt's positions run in three streams (temporal, height, width). Its text tokens count on
//! in all three alike; an image's `t · h · w / merge²` tokens (a run of image tokens, one run per
//! image of `image_grid_thw`, in order over the prompts) take the position where the image starts
//! plus their frame, row and column among the merged patches, and the text after the image goes
//! on from that start plus the larger of its merged rows and columns. A video (`pixel_values_videos`
//! with `video_grid_thw`, through the same tower) is such a grid of frames whose temporal positions
//! are its frames 1 apart for Qwen2-VL, and for Qwen2.5-VL `tokens_per_second` ×
//! `second_per_grid_ts` apart (float32, truncated); Qwen3-VL's processor puts each frame's tokens
//! after a timestamp's text, each frame then positioned as an image of one frame. Padding (`attention_mask`
//! 0) is left out of the count and takes position 0. The runs are read from `mm_token_type_ids`
//! (1: image, 2: video), as the processor writes them, or where they are not given from the image
//! tokens themselves.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};

use super::check_input_dtype;
use super::image_inputs::{in_order, media_order, ImageInputs, TextWithImages};
use super::llava_images::{vars_with, vision_config};
use super::qwen_vl_vision::{grids_of, Kind, QwenVisionOutput, QwenVisionTower};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::PromptMedia;
use crate::weights::Weights;

/// The inputs of a forward pass with Qwen's images and videos.
const INPUTS: &[&str] = &[
    "input_ids",
    "attention_mask",
    "position_ids",
    "pixel_values",
    "image_grid_thw",
    "mm_token_type_ids",
    "pixel_values_videos",
    "video_grid_thw",
    "second_per_grid_ts",
];

/// The largest temporal position a video's frames may reach (far from overflowing the positions).
const MAX_POSITION: f32 = 1e9;

/// A video's grid of patches and the spacing of its frames' temporal positions.
type VideoGrid = ([usize; 3], f32);

/// The images and videos of a forward pass through the tower, and their features in the order
/// of their tokens.
struct Media {
    /// the images' outputs and grids
    images: Option<(QwenVisionOutput, Vec<[usize; 3]>)>,
    /// the videos' outputs and grids
    videos: Option<(QwenVisionOutput, Vec<VideoGrid>)>,
    /// `[batch, seq]` bool: the image and video tokens
    mask: Tensor,
    /// `[tokens, hidden]`: their features in order
    rows: Tensor,
    /// Qwen3-VL's deepstack features in the same order, one per layer
    added: Vec<Tensor>,
}

/// The tower and the tokens its features replace.
#[derive(Debug, Clone)]
pub(crate) struct QwenImages {
    tower: QwenVisionTower,
    image_token: i64,
    video_token: i64,
    kind: Kind,
    /// Qwen2.5-VL's temporal positions per second of video
    tokens_per_second: f32,
}

impl QwenImages {
    /// The image path of a Qwen2-VL, Qwen2.5-VL or Qwen3-VL checkpoint (the tower `kind`),
    /// `None` where it has no vision tower. (Features of another width than the language model's
    /// are an error when images come, not at load: such a checkpoint still runs on text, as in
    /// transformers.)
    pub(crate) fn load(cfg: &Config, weights: &Weights, kind: Kind) -> Result<Option<Self>> {
        let Some(vars) = vars_with(weights, &["model.visual.", "visual."], "patch_embed.proj.weight") else {
            return Ok(None);
        };
        let vision = vision_config(cfg)?;
        let tower = QwenVisionTower::load(&vars, &vision, kind)?;
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
            kind,
            tokens_per_second: match vision.f64_or("tokens_per_second", 4.0)? {
                t if t.is_finite() && t >= 0.0 => t as f32,
                t => {
                    return Err(Error::Config(format!(
                        "tokens_per_second must be finite and not negative, got {t}"
                    )))
                }
            },
        }))
    }

    /// The token whose embeddings the features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// The images of `images` (`pixel_values` and `image_grid_thw`) through the tower.
    fn encode(&self, images: &ImageInputs<'_>) -> Result<QwenVisionOutput> {
        Ok(self.encode_grids(images.pixel_values, images.image_grid_thw, "image_grid_thw")?.0)
    }

    /// The patches `pixels` of the grids of input `name` (`grid`) through the tower, and the grids.
    fn encode_grids(
        &self,
        pixels: &Tensor,
        grid: Option<&Tensor>,
        name: &str,
    ) -> Result<(QwenVisionOutput, Vec<[usize; 3]>)> {
        let grid = grid.ok_or_else(|| {
            Error::Input(format!("missing input '{name}': Qwen's pixel values are patches of grids it gives"))
        })?;
        let grids = grids_of(grid, self.tower.merge())?;
        Ok((self.tower.forward(pixels, &grids)?, grids))
    }

    /// The videos' grids with their frames' temporal spacing (`second_per_grid_ts` `[videos]`,
    /// Qwen2.5-VL's; 1 second each where not given).
    fn video_grids(&self, grids: &[[usize; 3]], seconds: Option<&Tensor>) -> Result<Vec<VideoGrid>> {
        if self.kind == Kind::Qwen3 {
            // (Each frame its own run of tokens after its timestamp: a grid of one frame.)
            if seconds.is_some() {
                return Err(Error::Input("unexpected input 'second_per_grid_ts' (Qwen2.5-VL's)".into()));
            }
            return Ok(grids
                .iter()
                .flat_map(|&[t, h, w]| std::iter::repeat_n(([1, h, w], 1.0), t))
                .collect());
        }
        let seconds = match seconds {
            Some(t) if self.kind == Kind::Qwen2_5 => {
                let v = t.to_dtype(DType::F32)?.flatten(0, -1)?.to_vec::<f32>()?;
                if v.len() < grids.len() {
                    return Err(Error::Input(format!(
                        "input 'second_per_grid_ts' has {} values for {} videos",
                        v.len(),
                        grids.len()
                    )));
                }
                v
            }
            Some(_) => {
                return Err(Error::Input("unexpected input 'second_per_grid_ts' (Qwen2.5-VL's)".into()))
            }
            None => vec![1.0; grids.len()],
        };
        let spacing = |s: f32| if self.kind == Kind::Qwen2_5 { self.tokens_per_second * s } else { 1.0 };
        grids
            .iter()
            .zip(seconds)
            .map(|(&g, s)| {
                // (A video's last frame's temporal position stays far from overflowing.)
                let last = spacing(s) * g[0] as f32;
                if !s.is_finite() || s < 0.0 || !(0.0..=MAX_POSITION).contains(&last) {
                    return Err(Error::Input(format!(
                        "input 'second_per_grid_ts' has {s} for a video of {} frames: each must be finite, not negative, and \
                         keep the frames' temporal positions below {MAX_POSITION}",
                        g[0]
                    )));
                }
                Ok((g, spacing(s)))
            })
            .collect()
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
        self.positions_with(input_ids, attention_mask, mm_token_type_ids, Some(image_grid_thw), &[])
    }

    /// [`Self::positions`] of prompts with images (`image_grid_thw`, if any) and `videos`.
    fn positions_with(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        mm_token_type_ids: Option<&Tensor>,
        image_grid_thw: Option<&Tensor>,
        videos: &[VideoGrid],
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
        // (Any non-zero mask value is a token, as the decoder's masks read it.)
        let kept = attention_mask.map(|m| rows_of("attention_mask", &m.ne(0.0)?)).transpose()?;
        let types = match mm_token_type_ids {
            Some(t) => {
                let types = rows_of("mm_token_type_ids", t)?;
                let marks =
                    |id: i64| i64::from(id == self.image_token) + 2 * i64::from(id == self.video_token);
                let agree =
                    ids.iter().zip(&types).all(|(i, t)| i.iter().zip(t).all(|(&id, &k)| marks(id) == k));
                if !agree {
                    return Err(Error::Input(format!(
                        "input 'mm_token_type_ids' must be 1 at the image tokens ({}), 2 at the video tokens ({}) and 0 \
                         elsewhere",
                        self.image_token, self.video_token
                    )));
                }
                types
            }
            None => ids
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|&id| i64::from(id == self.image_token) + 2 * i64::from(id == self.video_token))
                        .collect()
                })
                .collect(),
        };
        let grids = image_grid_thw.map(|g| grids_of(g, self.tower.merge())).transpose()?.unwrap_or_default();
        let positions = rope_index(&types, kept.as_deref(), &grids, videos, self.tower.merge())?;
        Ok(Tensor::from_vec(positions, [3, b, s])?)
    }

    /// [`super::AutoModel::forward_named`] with images and videos: the outputs of `lm` on the
    /// prompts, the image and video tokens' embeddings replaced by their features (Qwen3-VL's
    /// deepstack features added after the first layers), at their multimodal positions
    /// (`position_ids` where given), and the tower's under `image_outputs` and `video_outputs`
    /// (`last_hidden_state`, with `output_hidden_states` its `hidden_states.N`, each image's or
    /// video's features as `pooler_output.N`, Qwen3-VL's as `deepstack_features.K.N`).
    pub(crate) fn forward_named(
        &self,
        lm: &super::decoder::CausalLm,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let text = TextWithImages::checked(inputs, INPUTS)?;
        let media = self.media(inputs, lm.dtype())?;
        let text = match inputs.get("position_ids") {
            Some(_) => text,
            None => text.at(self.media_positions(inputs, &media)?),
        };
        let Media { images, videos, mask, rows, added } = media;
        let mut named = text.outputs_replacing(lm, &mask, &rows, &added, output_hidden_states)?;
        for (what, out) in [("image", images.map(|(o, _)| o)), ("video", videos.map(|(o, _)| o))] {
            let Some(out) = out else { continue };
            named.push((format!("{what}_outputs.last_hidden_state"), out.last_hidden_state));
            if output_hidden_states {
                let states = out.hidden_states.into_iter().enumerate();
                named.extend(states.map(|(i, t)| (format!("{what}_outputs.hidden_states.{i}"), t)));
            }
            let per_image = out.features.into_iter().enumerate();
            named.extend(per_image.map(|(i, f)| (format!("{what}_outputs.pooler_output.{i}"), f)));
            for (k, layer) in out.deepstack.into_iter().enumerate() {
                let per_image = layer.into_iter().enumerate();
                named.extend(
                    per_image.map(|(i, f)| (format!("{what}_outputs.deepstack_features.{k}.{i}"), f)),
                );
            }
        }
        Ok(named)
    }

    /// The images and videos of `inputs` (`pixel_values` with `image_grid_thw`,
    /// `pixel_values_videos` with `video_grid_thw` and `second_per_grid_ts`) through the tower,
    /// their features (in `dtype`) in the order of their tokens in `input_ids`.
    fn media(&self, inputs: &BTreeMap<String, Tensor>, dtype: DType) -> Result<Media> {
        let grid = |name: &str| inputs.get(name);
        let images = match inputs.get("pixel_values") {
            Some(p) => Some(self.encode_grids(p, grid("image_grid_thw"), "image_grid_thw")?),
            None => None,
        };
        let videos = match inputs.get("pixel_values_videos") {
            Some(p) => {
                let (out, grids) = self.encode_grids(p, grid("video_grid_thw"), "video_grid_thw")?;
                Some((out, self.video_grids(&grids, inputs.get("second_per_grid_ts"))?))
            }
            None => None,
        };
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let all = |per_image: &[Tensor]| -> Result<Option<Tensor>> {
            if per_image.is_empty() {
                return Ok(None);
            }
            Ok(Some(Tensor::cat(&per_image.iter().collect::<Vec<_>>(), 0)?.to_dtype(dtype)?))
        };
        let image_rows = images.as_ref().map(|(o, _)| all(&o.features)).transpose()?.flatten();
        let video_rows = videos.as_ref().map(|(o, _)| all(&o.features)).transpose()?.flatten();
        let count = |rows: &Option<Tensor>| rows.as_ref().map(|r| r.dims()[0]);
        let (mask, index) =
            media_order(ids, (self.image_token, count(&image_rows)), (self.video_token, count(&video_rows)))?;
        let rows = in_order(&index, image_rows.as_ref(), video_rows.as_ref())?;
        // (Qwen3-VL's deepstack features, block by block, of the images and videos in the same order.)
        let outs = [images.as_ref().map(|(o, _)| o), videos.as_ref().map(|(o, _)| o)];
        let blocks = outs.iter().flatten().map(|o| o.deepstack.len()).max().unwrap_or(0);
        let block = |o: Option<&QwenVisionOutput>, k: usize| -> Result<Option<Tensor>> {
            match o.and_then(|o| o.deepstack.get(k)) {
                Some(per_image) => all(per_image),
                None => Ok(None),
            }
        };
        let added = (0..blocks)
            .map(|k| in_order(&index, block(outs[0], k)?.as_ref(), block(outs[1], k)?.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Media { images, videos, mask, rows, added })
    }

    /// The multimodal RoPE positions of the prompts of `inputs` with `media`.
    fn media_positions(&self, inputs: &BTreeMap<String, Tensor>, media: &Media) -> Result<Tensor> {
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let video_grids = media.videos.as_ref().map_or(&[][..], |(_, g)| g);
        let image_grid = media.images.as_ref().and(inputs.get("image_grid_thw"));
        let (mask, types) = (inputs.get("attention_mask"), inputs.get("mm_token_type_ids"));
        self.positions_with(ids, mask, types, image_grid, video_grids)
    }

    /// What generation takes of prompts with images and videos (see [`PromptMedia`]).
    pub(crate) fn prompt_media(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        dtype: DType,
    ) -> Result<PromptMedia> {
        let media = self.media(inputs, dtype)?;
        let positions = self.media_positions(inputs, &media)?;
        let video_token = media.videos.is_some().then_some(self.video_token);
        Ok(PromptMedia {
            video_token,
            deepstack: media.added,
            positions: Some(positions),
            ..PromptMedia::new(self.image_token, media.rows)
        })
    }
}

/// The positions `[3 · batch · seq]` (streams, then prompts, then tokens) of prompts whose tokens
/// have the modality `types` (0 text, 1 image, 2 video), with `kept` (1: a token, 0: padding), the
/// images' `grids` and the `videos`; see the module docs.
fn rope_index(
    types: &[Vec<i64>],
    kept: Option<&[Vec<i64>]>,
    grids: &[[usize; 3]],
    videos: &[VideoGrid],
    merge: usize,
) -> Result<Vec<i64>> {
    let (b, s) = (types.len(), types.first().map_or(0, Vec::len));
    let mut out = vec![0i64; 3 * b * s];
    let mut grids = grids.iter().map(|&g| (g, 1.0f32));
    let mut videos = videos.iter().copied();
    let (mut image, mut video) = (0usize, 0usize);
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
                1 | 2 => {
                    let (what, n, inputs) = if kind == 1 {
                        ("image", &mut image, "image_grid_thw")
                    } else {
                        ("video", &mut video, "video_grid_thw")
                    };
                    let next_grid = if kind == 1 { grids.next() } else { videos.next() };
                    let ([t, h, w], spacing) = next_grid.ok_or_else(|| {
                        Error::Input(format!(
                            "prompt {r} has more runs of {what} tokens than {inputs} has {what}s ({n})"
                        ))
                    })?;
                    let (gh, gw) = (h / merge, w / merge);
                    if run != t * gh * gw {
                        return Err(Error::Input(format!(
                            "{what} {n} (grid [{t}, {h}, {w}]) has {} features, but its run of {what} tokens in \
                             prompt {r} has {run} tokens",
                            t * gh * gw
                        )));
                    }
                    for (i, &c) in cols.iter().enumerate() {
                        let (f, rest) = (i / (gh * gw), i % (gh * gw));
                        // (float32, truncated, as transformers' `(arange(t) * interval).long()`)
                        let frame = (f as f32 * spacing) as i64;
                        let stream = [frame, (rest / gw) as i64, (rest % gw) as i64];
                        for (k, v) in stream.iter().enumerate() {
                            out[(k * b + r) * s + c] = next + v;
                        }
                    }
                    next += gh.max(gw) as i64;
                    *n += 1;
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
        let p = rope_index(&types, None, &[[1, 4, 8]], &[], 2).unwrap();
        assert_eq!(&p[..11], &[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 6]);
        assert_eq!(&p[11..22], &[0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 6]);
        assert_eq!(&p[22..], &[0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 6]);
        // Left padding is skipped (position 0); a video token without a video is an error.
        let p = rope_index(&[vec![0, 0, 1, 0]], Some(&[vec![0, 1, 1, 1]]), &[[1, 2, 2]], &[], 2).unwrap();
        assert_eq!(&p[..4], &[0, 0, 1, 2]);
        assert!(rope_index(&[vec![2]], None, &[], &[], 2).is_err());
        // A video of 3 frames 1.2 apart: temporal positions 0, 1, 2 (truncated), after the text.
        let p = rope_index(&[vec![0, 2, 2, 2]], None, &[], &[([3, 2, 2], 1.2)], 2).unwrap();
        assert_eq!(&p[..4], &[0, 1, 2, 3]);
        assert_eq!(&p[4..8], &[0, 1, 1, 1]);
        // A run that does not fit its grid, and a run past the grids, are errors.
        assert!(rope_index(&[vec![1, 1]], None, &[[1, 2, 2]], &[], 2).is_err());
        assert!(rope_index(&[vec![1, 0, 1]], None, &[[1, 2, 2]], &[], 2).is_err());
    }
}
