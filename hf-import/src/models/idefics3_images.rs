//! The images of Idefics3 (`idefics3`) and SmolVLM (`smolvlm`) as their vision tower takes them:
//! `pixel_values` `[prompts, images, channels, height, width]` (each prompt's images padded with
//! images of zeros, which are dropped), and `pixel_attention_mask` `[prompts, images, height,
//! width]` (the pixels of each image that are not padding; absent: all). A patch is kept where
//! any of its pixels is; each image's kept patches take the rows of the position table of their
//! place in the kept grid, bucketed onto the table's grid (transformers'
//! `Idefics3VisionEmbeddings`: NaViT's fractional coordinates, in float32 as there), and the padded
//! patches are hidden as keys from every query.

use oxtorch_tensor::{DType, Tensor};

use crate::error::{Error, Result};
use crate::layers::padding_mask;

/// A batch of images as Idefics3's tower takes them (see the module docs).
#[derive(Debug)]
pub(crate) struct TowerBatch {
    /// the real images `[images, channels, height, width]`
    pub pixels: Tensor,
    /// the real images of each prompt
    pub per_prompt: Vec<usize>,
    /// each patch's row of the position table `[images, patches]`
    pub position_ids: Tensor,
    /// `[images, 1, 1, patches]` hiding the padded patches as keys, where there are some
    pub mask: Option<Tensor>,
}

/// The batch of `pixel_values` and `pixel_attention_mask` for a tower of `patch`-pixel patches
/// whose position table is `side × side`; `dtype` the mask's. With `keep_one` (SmolVLM), a batch
/// of padding images alone keeps its first.
pub(crate) fn tower_batch(
    pixel_values: &Tensor,
    pixel_mask: Option<&Tensor>,
    patch: usize,
    side: usize,
    keep_one: bool,
    dtype: DType,
) -> Result<TowerBatch> {
    let &[prompts, images, channels, height, width] = pixel_values.dims() else {
        return Err(Error::Input(format!(
            "input 'pixel_values' must be [batch, images, channels, height, width], got {:?}",
            pixel_values.dims()
        )));
    };
    let all = prompts * images;
    let flat = pixel_values.reshape([all, channels, height, width])?;
    // Padding images are all zeros (a NaN is not zero).
    let nonzero = flat.ne(0.0)?.to_dtype(DType::F32)?.reshape([all, channels * height * width])?;
    let mut real: Vec<bool> = nonzero.sum(1isize, false)?.to_vec::<f32>()?.iter().map(|&n| n > 0.0).collect();
    if keep_one && all > 0 && !real.contains(&true) {
        real[0] = true;
    }
    let kept: Vec<i64> = (0..all).filter(|&i| real[i]).map(|i| i as i64).collect();
    let index = Tensor::from_vec(kept.clone(), [kept.len()])?;
    let per_prompt = real.chunks(images.max(1)).map(|c| c.iter().filter(|&&r| r).count()).collect();
    let (rows, cols) = (height / patch, width / patch);
    let patches = match pixel_mask {
        None => vec![true; kept.len() * rows * cols],
        Some(mask) => {
            if mask.dtype().is_float() || mask.dims() != [prompts, images, height, width] {
                return Err(Error::Input(format!(
                    "input 'pixel_attention_mask' must be an integer or bool tensor of shape {:?}, got {:?} {:?}",
                    [prompts, images, height, width],
                    mask.dtype(),
                    mask.dims()
                )));
            }
            let m = mask.reshape([all, height, width])?.index_select(0, &index.to(mask.device())?)?;
            let m = m.narrow(1, 0, rows * patch)?.narrow(2, 0, cols * patch)?;
            let m = m.ne(0.0)?.to_dtype(DType::F32)?.reshape([kept.len(), rows, patch, cols, patch])?;
            m.sum(vec![2isize, 4], false)?.to_vec::<f32>()?.iter().map(|&n| n > 0.0).collect()
        }
    };
    let grid = rows * cols;
    let mut ids = Vec::with_capacity(patches.len());
    for image in patches.chunks(grid.max(1)).take(kept.len()) {
        ids.extend(position_ids(image, rows, cols, side));
    }
    let position_ids = Tensor::from_vec(ids, [kept.len(), grid])?;
    let mask = if patches.iter().all(|&p| p) {
        None
    } else {
        let keep: Vec<i64> = patches.iter().map(|&p| p as i64).collect();
        Some(padding_mask(&Tensor::from_vec(keep, [kept.len(), grid])?, dtype)?)
    };
    let pixels = flat.index_select(0, &index.to(flat.device())?)?;
    Ok(TowerBatch { pixels, per_prompt, position_ids, mask })
}

/// The position-table rows of one image's patches (`kept`, `rows × cols`, row by row): the kept
/// grid's fractional coordinates bucketed onto the table's `side × side` grid, 0 where padded.
fn position_ids(kept: &[bool], rows: usize, cols: usize, side: usize) -> Vec<i64> {
    let boundaries = arange_f32(1.0 / side as f64, 1.0);
    let kept_rows = (0..rows).filter(|&r| kept[r * cols]).count();
    let kept_cols = (0..cols).filter(|&c| kept[c]).count();
    let bucket = |i: usize, n: usize| -> usize {
        // (transformers: `arange * (1 / n)` in float32, clamped below 1, `bucketize(right=True)`.)
        let frac = (i as f32 * (1.0f32 / n as f32)).min((1.0 - 1e-6) as f32);
        boundaries.partition_point(|&b| b <= frac)
    };
    let mut ids = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let id = if kept[r * cols + c] { bucket(r, kept_rows) * side + bucket(c, kept_cols) } else { 0 };
            ids.push(id as i64);
        }
    }
    ids
}

/// torch's float32 `arange(step, end, step)` on the CPU, value for value: its kernel computes
/// `start + step · i` in double and rounds, except in the runs of 16 that its vector loop takes
/// (two vectors of 8 lanes, AVX2's), where each vector's first value is rounded and its others
/// are that float plus `step · lane`, rounded. (An AVX-512 build's vectors are 16 lanes, whose
/// values can differ in the last bit.)
fn arange_f32(step: f64, end: f64) -> Vec<f32> {
    const LANES: usize = 8;
    let count = ((end - step) / step).ceil().max(0.0) as usize;
    let vectorized = count / (2 * LANES) * (2 * LANES);
    (0..count)
        .map(|i| {
            if i < vectorized {
                let first = i / LANES * LANES;
                let base = (step + step * first as f64) as f32;
                (base as f64 + (i - first) as f64 * step) as f32
            } else {
                (step + step * i as f64) as f32
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept corner spreads its patches over the table, and a whole grid as large as the table
    /// takes its rows in order except where float32 rounding moves a coordinate below its
    /// boundary (torch's values for these grids).
    #[test]
    fn positions_bucket_as_torch() {
        let mut kept = [false; 16];
        for r in 0..3 {
            for c in 0..2 {
                kept[r * 4 + c] = true;
            }
        }
        let ids = position_ids(&kept, 4, 4, 4);
        assert_eq!(ids, vec![0, 2, 0, 0, 4, 6, 0, 0, 8, 10, 0, 0, 0, 0, 0, 0]);
        assert_eq!(position_ids(&[true; 16], 4, 4, 4), (0..16).collect::<Vec<i64>>());
        let torch_rows = |side: usize, want: &[i64]| {
            let ids = position_ids(&vec![true; side * side], side, side, side);
            let rows: Vec<i64> = ids.iter().step_by(side).map(|id| id / side as i64).collect();
            assert_eq!(rows, want, "side {side}");
        };
        // torch.arange(1 / 41, 1.0, 1 / 41)[10:20] on an AVX2 machine.
        let want = [
            0.26829269528388977f64,
            0.2926829159259796,
            0.31707316637039185,
            0.3414634168148041,
            0.3658536672592163,
            0.39024388790130615,
            0.4146341383457184,
            0.4390243887901306,
            0.46341463923454285,
            0.4878048598766327,
        ];
        let got: Vec<f64> = arange_f32(1.0 / 41.0, 1.0)[10..20].iter().map(|&x| x as f64).collect();
        assert_eq!(got, want);
        assert_eq!(arange_f32(1.0 / 19.0, 1.0).len(), 19);
        torch_rows(19, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11, 13, 14, 15, 16, 17, 18]);
        torch_rows(
            25,
            &[0, 1, 2, 3, 4, 4, 6, 7, 8, 8, 9, 10, 11, 12, 14, 14, 16, 17, 17, 19, 19, 21, 22, 22, 24],
        );
    }
}
