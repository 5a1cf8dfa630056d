//! The videos of LLaVA-NeXT-Video (`llava_next_video`) and LLaVA-OneVision (`llava_onevision`):
//! `pixel_values_videos` `[videos, frames, channels, height, width]`, every frame through the
//! image path's tower and feature selection (see [`super::llava_images`]). LLaVA-NeXT-Video pools
//! each frame's grid of selected features (`spatial_pool_mode` average or max, by
//! `spatial_pool_stride`) before the projector; LLaVA-OneVision projects them, resizes each
//! frame's grid bilinearly to half its sides (rounded up), and puts `image_newline` after each
//! video's frames. A video's features are its frames' in order, in place of its video tokens.

use oxtorch_tensor::Tensor;

use crate::config::Config;
use crate::error::{Error, Result};

/// How a frame's features are reduced.
#[derive(Debug, Clone, Copy)]
enum Pooling {
    /// LLaVA-NeXT-Video's before the projector: average (or max) over squares of `stride`
    Squares { stride: usize, max: bool },
    /// LLaVA-OneVision's after the projector: bilinear to half the `grid` × `grid` sides
    Bilinear { grid: usize },
    /// a config whose videos cannot run here (its images and text still do): why
    Unusable(&'static str),
}

/// A class's video path (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct VideoPath {
    /// the token whose embeddings the features replace
    pub(crate) token: i64,
    pooling: Pooling,
}

impl VideoPath {
    /// The video path of `cfg` (`llava_next_video`, `llava_onevision`; `None` for the other
    /// classes), whose tower's images are `image` pixels in patches of `patch`.
    pub(crate) fn from_config(cfg: &Config, image: usize, patch: usize) -> Result<Option<Self>> {
        let (pooling, default_token) = match cfg.model_type()? {
            "llava_next_video" => {
                let stride = cfg.usize_or("spatial_pool_stride", 2)?;
                let pooling = match cfg.str_or("spatial_pool_mode", "average")? {
                    _ if stride == 0 => Pooling::Unusable("spatial_pool_stride must be positive"),
                    "average" => Pooling::Squares { stride, max: false },
                    "max" => Pooling::Squares { stride, max: true },
                    _ => Pooling::Unusable("spatial_pool_mode is not supported (average, max)"),
                };
                (pooling, 32_000)
            }
            "llava_onevision" => (Pooling::Bilinear { grid: image / patch.max(1) }, 151_647),
            _ => return Ok(None),
        };
        let named = ["video_token_index", "video_token_id"].into_iter().filter_map(|k| cfg.get(k));
        let token = match named.clone().find(|v| !v.is_null()) {
            Some(v) => v
                .as_i64()
                .ok_or_else(|| Error::Config(format!("\"video_token_index\" must be an integer, got {v}")))?,
            _ => default_token,
        };
        Ok(Some(VideoPath { token, pooling }))
    }

    /// The frames `[videos, frames, channels, height, width]` as images `[videos · frames,
    /// channels, height, width]`, and the videos' and frames' numbers.
    pub(crate) fn frames(pixel_values_videos: &Tensor) -> Result<(Tensor, usize, usize)> {
        match *pixel_values_videos.dims() {
            [v, f, c, h, w] if v > 0 && f > 0 => Ok((pixel_values_videos.reshape([v * f, c, h, w])?, v, f)),
            ref d => Err(Error::Input(format!(
                "pixel_values_videos must be [videos, frames, channels, height, width] with videos and frames, got {d:?}"
            ))),
        }
    }

    /// The frames' selected features `[frames, tokens, width]` as the projector takes them
    /// (LLaVA-NeXT-Video's pooled squares).
    pub(crate) fn before_projector(&self, selected: &Tensor) -> Result<Tensor> {
        if let Pooling::Unusable(why) = self.pooling {
            return Err(Error::Unsupported(format!("the videos of this config cannot run: {why}")));
        }
        let Pooling::Squares { stride, max } = self.pooling else { return Ok(selected.clone()) };
        let (n, tokens, d) = (selected.dims()[0], selected.dims()[1], selected.dims()[2]);
        let side = tokens.isqrt();
        if side * side != tokens {
            return Err(Error::Input(format!(
                "a frame's {tokens} features are not a square grid (LLaVA-NeXT-Video's pooling)"
            )));
        }
        let grid = selected.reshape([n, side, side, d])?.permute([0, 3, 1, 2])?;
        let k = [stride, stride];
        let pooled = match max {
            true => grid.max_pool2d(&k, Some(&k), &[0, 0], &[1, 1], false)?,
            false => grid.avg_pool2d(&k, Some(&k), &[0, 0], false, true, None)?,
        };
        let out = pooled.dims()[2] * pooled.dims()[3];
        Ok(pooled.reshape([n, d, out])?.transpose(1, 2)?.contiguous()?)
    }

    /// The frames' projected features `[frames, tokens, hidden]` as the prompts take them
    /// (LLaVA-OneVision's resized grids).
    pub(crate) fn after_projector(&self, projected: &Tensor) -> Result<Tensor> {
        let Pooling::Bilinear { grid } = self.pooling else { return Ok(projected.clone()) };
        let (n, tokens, d) = (projected.dims()[0], projected.dims()[1], projected.dims()[2]);
        if grid * grid != tokens {
            return Err(Error::Input(format!(
                "a frame's {tokens} features are not the tower's {grid} × {grid} grid (LLaVA-OneVision's pooling)"
            )));
        }
        let half = grid.div_ceil(2);
        let x = projected.reshape([n, grid, grid, d])?.permute([0, 3, 1, 2])?.contiguous()?;
        let x = x.interpolate(Some(&[half, half]), None, "bilinear", None)?;
        Ok(x.permute([0, 2, 3, 1])?.reshape([n, half * half, d])?)
    }

    /// Whether `image_newline` follows each video's frames (LLaVA-OneVision).
    pub(crate) fn appends_newline(&self) -> bool {
        matches!(self.pooling, Pooling::Bilinear { .. })
    }
}
