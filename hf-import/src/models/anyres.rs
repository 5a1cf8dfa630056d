//! LLaVA-NeXT's "anyres" images (`llava_next`, `llava_next_video`, `llava_onevision`): the
//! processor resizes an image to the best of `image_grid_pinpoints` (the resolution that keeps the
//! most of it and wastes the least), cuts that into tiles of the vision tower's size and puts the
//! whole image, downscaled to one tile (the base), first. The tower and projector run on every
//! tile; the base's features come first, then the tiles' laid out as the image's grid of features,
//! the rows or columns of the resize's padding cut off (`unpad_image`), LLaVA-OneVision's resized
//! bilinearly to at most `anyres_max_N` tiles' worth, and `image_newline` after each row. An image
//! that is not tiled (OneVision's prompts of several images) is its base then one newline.
//!
//! The image sizes (`image_sizes`, `[images, 2]` as `(height, width)`) decide each image's tiles:
//! how many of the padded `pixel_values` `[images, max tiles, channels, height, width]` are read,
//! and the grid they form. transformers' `select_best_resolution`, `image_size_to_num_patches`,
//! `get_anyres_image_grid_shape`, `unpad_image` and `pack_image_features`.

use oxtorch_tensor::{DType, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};

/// How a LLaVA-NeXT checkpoint tiles and packs an image's features (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Anyres {
    /// `image_grid_pinpoints`: the `(height, width)` an image may be resized to before tiling
    pinpoints: Vec<(usize, usize)>,
    /// a tile's side in pixels (the vision tower's `image_size`)
    tile: usize,
    /// a tile's side in features (`image_size / patch_size`)
    side: usize,
    /// `image_newline` `[text hidden]`
    newline: Tensor,
    /// LLaVA-OneVision's `vision_aspect_ratio` `anyres_max_N`: N
    max_tiles: Option<usize>,
}

/// LLaVA-NeXT's default `image_grid_pinpoints`.
const NEXT_PINPOINTS: [(usize, usize); 5] = [(336, 672), (672, 336), (672, 672), (1008, 336), (336, 1008)];

impl Anyres {
    /// `image_newline` `[text hidden]`.
    pub(crate) fn newline(&self) -> &Tensor {
        &self.newline
    }

    /// The tiling of `cfg` (a LLaVA-NeXT or, with `onevision`, a LLaVA-OneVision config) for a
    /// tower of `tile` pixels and `patch`-pixel patches, with `newline`.
    pub(crate) fn from_config(
        cfg: &Config,
        onevision: bool,
        tile: usize,
        patch: usize,
        newline: Tensor,
    ) -> Result<Self> {
        let pinpoints = match cfg.get("image_grid_pinpoints") {
            None | Some(Value::Null) if onevision => {
                (1..=6).flat_map(|h| (1..=6).map(move |w| (384 * h, 384 * w))).collect()
            }
            None | Some(Value::Null) => NEXT_PINPOINTS.to_vec(),
            Some(v) => pinpoints(v)?,
        };
        let max_tiles = if onevision {
            let ratio = cfg.str_or("vision_aspect_ratio", "anyres_max_9")?;
            // (transformers: `int(ratio.strip("anyres_max_"))`.)
            let n = ratio.trim_matches(|c| "anyres_max_".contains(c)).parse::<usize>().ok();
            Some(n.filter(|&n| n > 0).ok_or_else(|| {
                Error::Config(format!("vision_aspect_ratio must be \"anyres_max_N\", got \"{ratio}\""))
            })?)
        } else {
            None
        };
        if patch == 0 || tile < patch {
            return Err(Error::Config(format!(
                "the vision tower's image_size {tile} and patch_size {patch}"
            )));
        }
        Ok(Anyres { pinpoints, tile, side: tile / patch, newline, max_tiles })
    }

    /// transformers' `select_best_resolution`: the pinpoint that keeps the most of an image of
    /// `(height, width)` resized into it, then wastes the least.
    fn best_resolution(&self, (height, width): (usize, usize)) -> Result<(usize, usize)> {
        let (oh, ow) = (height as f64, width as f64);
        let mut best = None;
        // (In i128: no product of two sizes overflows.)
        let (mut most_kept, mut least_wasted) = (0i128, i128::MAX);
        for &(h, w) in &self.pinpoints {
            let scale = (w as f64 / ow).min(h as f64 / oh);
            let (dw, dh) = ((ow * scale) as i128, (oh * scale) as i128);
            let kept = (dw * dh).min(height as i128 * width as i128);
            let wasted = h as i128 * w as i128 - kept;
            if kept > most_kept || (kept == most_kept && wasted < least_wasted) {
                (most_kept, least_wasted, best) = (kept, wasted, Some((h, w)));
            }
        }
        best.ok_or_else(|| {
            Error::Input(format!(
                "no image_grid_pinpoints resolution fits an image of size ({height}, {width})"
            ))
        })
    }

    /// The tiles of an image of `size` (transformers' `image_size_to_num_patches`): those of its
    /// best resolution, plus the base.
    fn tiles(&self, size: (usize, usize)) -> Result<usize> {
        let (h, w) = self.best_resolution(size)?;
        h.div_ceil(self.tile)
            .checked_mul(w.div_ceil(self.tile))
            .and_then(|n| n.checked_add(1))
            .ok_or_else(|| Error::Input(format!("an image of size {size:?} makes too many tiles at {h}×{w}")))
    }

    /// The number of tiles of each image (`image_sizes` `[images, 2]`), 1 where `tiled` says no.
    pub(crate) fn tile_counts(&self, sizes: &[(usize, usize)], tiled: &[bool]) -> Result<Vec<usize>> {
        sizes.iter().zip(tiled).map(|(&s, &t)| if t { self.tiles(s) } else { Ok(1) }).collect()
    }

    /// One image's rows `[tokens, text hidden]` from its tiles' features `[tiles, side², text
    /// hidden]` (the base first) and its `(height, width)`.
    pub(crate) fn pack(&self, features: &Tensor, size: (usize, usize)) -> Result<Tensor> {
        let (tiles, tokens, dim) = (features.dims()[0], features.dims()[1], features.dims()[2]);
        let newline = self.newline.to_dtype(features.dtype())?.reshape([1, dim])?;
        let base = features.select(0, 0)?;
        if tiles == 1 {
            return Ok(Tensor::cat(&[&base, &newline], 0)?);
        }
        let side = self.side;
        if tokens != side * side {
            return Err(Error::Input(format!(
                "The number of patches is not consistent with the image size: {tokens} features per tile, the tower's image_size and patch_size make {side}×{side}"
            )));
        }
        let (h, w) = self.best_resolution(size)?;
        let (rows, cols) = (h / self.tile, w / self.tile);
        if rows.checked_mul(cols) != Some(tiles - 1) {
            return Err(Error::Input(format!(
                "an image of size {size:?} is {rows}×{cols} tiles at its resolution {h}×{w}, but has {} tile(s) (the pinpoints must be multiples of the tower's image_size {})",
                tiles - 1,
                self.tile
            )));
        }
        // [rows, cols, side, side, dim] → [dim, rows · side, cols · side]
        let grid = features.narrow(0, 1, tiles - 1)?.reshape([rows, cols, side, side, dim])?;
        let grid = grid.permute([4, 0, 2, 1, 3])?.contiguous()?.reshape([dim, rows * side, cols * side])?;
        let grid = self.resized(unpadded(&grid, size)?)?;
        let (gh, gw) = (grid.dims()[1], grid.dims()[2]);
        let newlines = newline.reshape([dim, 1, 1])?.expand([dim, gh, 1])?;
        let grid = Tensor::cat(&[&grid, &newlines], 2)?.reshape([dim, gh * (gw + 1)])?;
        Ok(Tensor::cat(&[&base, &grid.transpose(0, 1)?], 0)?)
    }

    /// LLaVA-OneVision's resize of the grid `[dim, height, width]` to at most `anyres_max_N`
    /// tiles' worth of features (bilinear, past a tenth more); the grid as it is otherwise.
    fn resized(&self, grid: Tensor) -> Result<Tensor> {
        let Some(max) = self.max_tiles else { return Ok(grid) };
        let (h, w) = (grid.dims()[1] as f64, grid.dims()[2] as f64);
        let ratio = (h * w / (max as f64 * (self.side * self.side) as f64)).sqrt();
        if ratio <= 1.1 {
            return Ok(grid);
        }
        let size = [(h / ratio).floor() as usize, (w / ratio).floor() as usize];
        if size.contains(&0) {
            return Err(Error::Input(format!(
                "an image's {h}×{w} features resize to {size:?} under anyres_max_{max}"
            )));
        }
        let dtype = grid.dtype();
        let x = grid.to_dtype(DType::F32)?.unsqueeze(0)?;
        Ok(x.interpolate(Some(&size), None, "bilinear", Some(false))?.select(0, 0)?.to_dtype(dtype)?)
    }
}

/// transformers' `unpad_image` of `grid` `[dim, height, width]` for an image of `(height, width)`:
/// the rows (or columns) its resize into the grid's aspect padded, cut off.
fn unpadded(grid: &Tensor, (height, width): (usize, usize)) -> Result<Tensor> {
    let (ch, cw) = (grid.dims()[1], grid.dims()[2]);
    let (oh, ow) = (height as f64, width as f64);
    // (transformers: `int(round(x, 7))`.)
    let kept = |x: f64| ((x * 1e7).round() / 1e7).trunc() as usize;
    if ow / oh > cw as f64 / ch as f64 {
        let pad = ch.saturating_sub(kept(oh * (cw as f64 / ow))) / 2;
        Ok(grid.narrow(1, pad as isize, ch - 2 * pad)?)
    } else {
        let pad = cw.saturating_sub(kept(ow * (ch as f64 / oh))) / 2;
        Ok(grid.narrow(2, pad as isize, cw - 2 * pad)?)
    }
}

/// `image_grid_pinpoints`: a non-empty list of positive `[height, width]` pairs.
fn pinpoints(v: &Value) -> Result<Vec<(usize, usize)>> {
    let bad =
        || Error::Config(format!("image_grid_pinpoints must be a list of [height, width] pairs, got {v}"));
    let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
    items
        .iter()
        .map(|p| match p.as_array().map(|a| a.iter().map(Value::as_u64).collect::<Vec<_>>()) {
            Some(hw) if matches!(hw[..], [Some(h), Some(w)] if h > 0 && w > 0) => {
                Ok((hw[0].unwrap_or(0) as usize, hw[1].unwrap_or(0) as usize))
            }
            _ => Err(bad()),
        })
        .collect()
}

/// `image_sizes` `[images, 2]` (integers, `(height, width)`, positive) as pairs.
pub(crate) fn image_sizes(sizes: &Tensor) -> Result<Vec<(usize, usize)>> {
    if sizes.dtype().is_float() || sizes.dtype() == DType::Bool || sizes.rank() != 2 || sizes.dims()[1] != 2 {
        return Err(Error::Input(format!(
            "input 'image_sizes' must be an integer tensor of shape [images, 2], got {:?} {:?}",
            sizes.dtype(),
            sizes.dims()
        )));
    }
    let flat = sizes.to_dtype(DType::I64)?.to_vec::<i64>()?;
    flat.chunks(2)
        .map(|hw| match hw {
            [h, w] if *h > 0 && *w > 0 => Ok((*h as usize, *w as usize)),
            _ => Err(Error::Input(format!("input 'image_sizes' holds a size {hw:?}; sizes are positive"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anyres(pinpoints: Vec<(usize, usize)>) -> Anyres {
        let newline = Tensor::zeros([4], DType::F32).unwrap();
        Anyres { pinpoints, tile: 8, side: 4, newline, max_tiles: None }
    }

    /// transformers' `select_best_resolution` on the fixtures' pinpoints (the values its Python
    /// gives): the most kept, then the least wasted, the first of equals.
    #[test]
    fn best_resolution_keeps_most_then_wastes_least() {
        let a = anyres(vec![(8, 16), (16, 8), (16, 16), (8, 24)]);
        assert_eq!(a.best_resolution((5, 40)).unwrap(), (8, 24));
        assert_eq!(a.best_resolution((30, 20)).unwrap(), (16, 16));
        assert_eq!(a.best_resolution((12, 5)).unwrap(), (16, 8));
        assert_eq!(a.tiles((30, 20)).unwrap(), 5);
        let next = anyres(NEXT_PINPOINTS.to_vec());
        assert_eq!(next.best_resolution((480, 640)).unwrap(), (672, 672));
        assert_eq!(next.best_resolution((300, 1000)).unwrap(), (336, 1008));
    }

    /// `unpad_image`: the rows of a wide image's padding cut, columns of a tall one's.
    #[test]
    fn unpad_cuts_the_resize_padding() {
        let grid = Tensor::zeros([2, 4, 12], DType::F32).unwrap();
        assert_eq!(unpadded(&grid, (5, 40)).unwrap().dims(), [2, 2, 12]);
        let grid = Tensor::zeros([2, 8, 8], DType::F32).unwrap();
        assert_eq!(unpadded(&grid, (30, 20)).unwrap().dims(), [2, 8, 6]);
        assert_eq!(unpadded(&grid, (8, 8)).unwrap().dims(), [2, 8, 8]);
    }

    #[test]
    fn bad_sizes_and_pinpoints_are_errors() {
        let sizes = Tensor::from_vec(vec![3i64, 0], [1, 2]).unwrap();
        assert!(image_sizes(&sizes).unwrap_err().to_string().contains("sizes are positive"));
        let sizes = Tensor::from_vec(vec![3.0f32, 4.0], [1, 2]).unwrap();
        assert!(image_sizes(&sizes).unwrap_err().to_string().contains("integer tensor"));
        for v in [serde_json::json!([]), serde_json::json!([[1]]), serde_json::json!([[0, 8]])] {
            assert!(pinpoints(&v).is_err(), "{v}");
        }
    }
}
