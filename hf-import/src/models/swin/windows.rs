//! Swin's windows: the feature map cut into `window × window` squares that attend within
//! themselves (after a cyclic shift by half a window in every other block), the mask that keeps
//! the shifted windows' wrapped-around regions apart, and the index of each pair of positions in a
//! window into the relative position bias table.

use oxtorch_tensor::{DType, Tensor};

use crate::error::Result;

/// `x` `[batch, height, width, channels]` (both multiples of `window`) as its windows
/// `[batch · windows, window², channels]`, row-major over the windows and within each.
pub(super) fn partition(x: &Tensor, window: usize) -> Result<Tensor> {
    let &[b, h, w, c] = x.dims() else { unreachable!("a feature map is 4-D") };
    let x = x.reshape([b, h / window, window, w / window, window, c])?.transpose(2, 3)?;
    Ok(x.reshape([b * (h / window) * (w / window), window * window, c])?)
}

/// [`partition`] undone: windows `[batch · windows, window², channels]` back to
/// `[batch, height, width, channels]`.
pub(super) fn merge(windows: &Tensor, window: usize, height: usize, width: usize) -> Result<Tensor> {
    let c = windows.dims()[2];
    let (rows, cols) = (height / window, width / window);
    let b = windows.dims()[0] / (rows * cols);
    let x = windows.reshape([b, rows, cols, window, window, c])?.transpose(2, 3)?;
    Ok(x.reshape([b, height, width, c])?)
}

/// The additive mask of shifted windows `[windows, 1, window², window²]` over a padded
/// `height × width` map shifted by `shift`: positions from different regions of the wrapped map
/// (three bands along each axis: before `size − window`, before `size − shift`, the rest) get
/// −100, as transformers' `get_attn_mask`.
pub(super) fn shift_mask(
    height: usize,
    width: usize,
    window: usize,
    shift: usize,
    dtype: DType,
) -> Result<Tensor> {
    let band = |i: usize, size: usize| usize::from(i >= size - window) + usize::from(i >= size - shift);
    let (rows, cols, area) = (height / window, width / window, window * window);
    let mut mask = Vec::with_capacity(rows * cols * area * area);
    for wr in 0..rows {
        for wc in 0..cols {
            let region: Vec<usize> = (0..area)
                .map(|p| band(wr * window + p / window, height) * 3 + band(wc * window + p % window, width))
                .collect();
            for &i in &region {
                mask.extend(region.iter().map(|&j| if i == j { 0f32 } else { -100.0 }));
            }
        }
    }
    Ok(Tensor::from_vec(mask, [rows * cols, 1, area, area])?.to_dtype(dtype)?)
}

/// Each pair `(i, j)` of positions in a `window × window` window as its row of the relative
/// position bias table (`(2·window − 1)²` rows: the offset in rows, then in columns), flattened
/// `[window⁴]`.
pub(super) fn relative_index(window: usize) -> Vec<i64> {
    let area = window * window;
    let span = 2 * window as i64 - 1;
    let mut index = Vec::with_capacity(area * area);
    for i in 0..area {
        for j in 0..area {
            let dr = (i / window) as i64 - (j / window) as i64 + window as i64 - 1;
            let dc = (i % window) as i64 - (j % window) as i64 + window as i64 - 1;
            index.push(dr * span + dc);
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2×2 window: the pair (0, 0) is offset (0, 0), the table's middle row (4 of 9); (0, 3)
    /// is offset (−1, −1), row 0; (3, 0) offset (1, 1), row 8.
    #[test]
    fn relative_index_counts_rows_then_columns() {
        let index = relative_index(2);
        assert_eq!(index.len(), 16);
        assert_eq!((index[0], index[3], index[12], index[1]), (4, 0, 8, 3));
    }

    /// A 4×4 map in 2×2 windows shifted by 1: the last window mixes four regions, the first one.
    #[test]
    fn shift_mask_separates_the_wrapped_regions() {
        let m = shift_mask(4, 4, 2, 1, DType::F32).unwrap();
        assert_eq!(m.dims(), [4, 1, 4, 4]);
        let v = m.to_vec::<f32>().unwrap();
        assert!(v[..16].iter().all(|&x| x == 0.0));
        let last = &v[48..];
        assert_eq!(last.iter().filter(|&&x| x == 0.0).count(), 4);
    }

    /// Partitioning and merging are inverses.
    #[test]
    fn partition_and_merge_round_trip() {
        let x = Tensor::from_vec((0..144).map(|i| i as f32).collect::<Vec<_>>(), [2, 4, 6, 3]).unwrap();
        let w = partition(&x, 2).unwrap();
        assert_eq!(w.dims(), [12, 4, 3]);
        let back = merge(&w, 2, 4, 6).unwrap();
        assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    }
}
