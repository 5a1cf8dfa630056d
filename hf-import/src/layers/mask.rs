//! Additive attention masks: 0 where a query may attend, the dtype's lowest value elsewhere.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::{Error, Result};

/// The value a masked score gets: the dtype's lowest (finite) number.
pub(crate) fn lowest(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => -65504.0,
        DType::BF16 => -3.3895313892515355e38,
        DType::F64 => f64::MIN,
        _ => f32::MIN as f64,
    }
}

/// `[batch, 1, 1, keys]` for an encoder: keys where `attention_mask` (`[batch, keys]`, 1 = token) is 0
/// are masked. The mask is made on `attention_mask`'s device.
pub fn padding_mask(attention_mask: &Tensor, dtype: DType) -> Result<Tensor> {
    additive(&attention_mask.eq(0)?.unsqueeze(1)?.unsqueeze(1)?, dtype)
}

/// `[batch, 1, queries, keys]` for a decoder (batch 1 without `attention_mask`): query `i`, at slot
/// `past + i`, sees key slot `j` when `j <= past + i`, `j > past + i - window` (sliding window), and
/// `attention_mask[b, j]` (`[batch, keys]`) is 1. `keys` is at least `past + queries`: the slots past
/// the last query are hidden by causality (the empty end of a fixed-shape KV cache). The mask is made
/// on `device` (where `attention_mask` must be); only `past` changes between decode steps, and it is
/// data, so the shapes of the programs that build the mask do not.
pub fn causal_mask(
    attention_mask: Option<&Tensor>,
    queries: usize,
    past: usize,
    keys: usize,
    window: Option<usize>,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    if keys < past + queries {
        return Err(Error::Input(format!(
            "causal_mask: {keys} keys cannot hold {past} past and {queries} new positions"
        )));
    }
    let q = Tensor::arange_step(past as i64, (past + queries) as i64, 1, (DType::I64, device))?
        .reshape([queries, 1])?;
    let k = Tensor::arange(keys as i64, (DType::I64, device))?.reshape([1, keys])?;
    let mut blocked = k.gt(&q)?;
    if let Some(w) = window {
        blocked = blocked.logical_or(&k.le(&q.sub(w as i64)?)?)?;
    }
    let mut blocked = blocked.reshape([1, 1, queries, keys])?;
    if let Some(m) = attention_mask {
        let batch = m.dims()[0];
        blocked = blocked.logical_or(&m.eq(0)?.reshape([batch, 1, 1, keys])?)?;
    }
    additive(&blocked, dtype)
}

/// [`causal_mask`] where tokens of one block also see each other both ways: `blocks` `[batch,
/// past + queries]` holds each token's block (int64, -1 outside any); query `i` sees key `j` when
/// `attention_mask` keeps it and `j` is not past `i` or both are in one block. A window
/// (`j > past + i - window`) hides keys too: with `blocks_within_window` every pair (Gemma 3's
/// images, transformers' `create_masks_for_vision_model`: the window never hides a later key),
/// else only pairs of no common block (PaliGemma's prefix, `create_sliding_window_causal_mask`
/// with `block_sequence_ids`).
#[allow(clippy::too_many_arguments)]
pub fn block_causal_mask(
    attention_mask: Option<&Tensor>,
    blocks: &Tensor,
    queries: usize,
    past: usize,
    keys: usize,
    window: Option<usize>,
    blocks_within_window: bool,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let batch = blocks.dims()[0];
    if keys < past + queries || blocks.dims() != [batch, past + queries] {
        return Err(Error::Input(format!(
            "block_causal_mask: blocks of shape {:?} for {past} past and {queries} new positions in {keys} keys",
            blocks.dims()
        )));
    }
    let blocks = blocks.to(device)?.to_dtype(DType::I64)?;
    let outside = Tensor::full([batch, keys - past - queries], -1i64, (DType::I64, device))?;
    let key_blocks = Tensor::cat(&[&blocks, &outside], 1)?.reshape([batch, 1, 1, keys])?;
    let query_blocks = blocks.narrow(1, past as isize, queries)?.reshape([batch, 1, queries, 1])?;
    let same = query_blocks.eq(&key_blocks)?.logical_and(&query_blocks.ge(0)?)?;
    let q = Tensor::arange_step(past as i64, (past + queries) as i64, 1, (DType::I64, device))?
        .reshape([1, 1, queries, 1])?;
    let k = Tensor::arange(keys as i64, (DType::I64, device))?.reshape([1, 1, 1, keys])?;
    let mut blocked = k.gt(&q)?;
    if let (Some(w), false) = (window, blocks_within_window) {
        blocked = blocked.logical_or(&k.le(&q.sub(w as i64)?)?)?;
    }
    blocked = blocked.logical_and(&same.logical_not()?)?;
    if let (Some(w), true) = (window, blocks_within_window) {
        blocked = blocked.logical_or(&k.le(&q.sub(w as i64)?)?)?;
    }
    if let Some(m) = attention_mask {
        blocked = blocked.logical_or(&m.eq(0)?.reshape([batch, 1, 1, keys])?)?;
    }
    additive(&blocked, dtype)
}

/// [`causal_mask`] without a window for Llama 4's chunked layers: query `q` (at `past + i`) also
/// sees only the keys of its own chunk of `chunk` columns, the chunks counted from each row's first
/// kept token (`(k − left) div chunk == (q − left) div chunk`, `left` the row's leading padding).
pub fn chunked_causal_mask(
    attention_mask: Option<&Tensor>,
    queries: usize,
    past: usize,
    keys: usize,
    chunk: usize,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    if chunk == 0 {
        return Err(Error::Input("chunked_causal_mask: the chunk size must be positive".into()));
    }
    let causal = causal_mask(attention_mask, queries, past, keys, None, dtype, device)?;
    let q = Tensor::arange_step(past as i64, (past + queries) as i64, 1, (DType::I64, device))?
        .reshape([1, 1, queries, 1])?;
    let k = Tensor::arange(keys as i64, (DType::I64, device))?.reshape([1, 1, 1, keys])?;
    // Each row's leading padding: its columns before the first kept token.
    let (q, k) = match attention_mask {
        Some(m) => {
            let batch = m.dims()[0];
            let left = m.to_dtype(DType::I64)?.cumsum(1, None)?.eq(0)?.to_dtype(DType::I64)?.sum(1, false)?;
            let left = left.reshape([batch, 1, 1, 1])?;
            (q.sub(&left)?, k.sub(&left)?)
        }
        None => (q, k),
    };
    let other_chunk = k.floor_divide(chunk as i64)?.ne(&q.floor_divide(chunk as i64)?)?;
    // (One mask value where either hides a key, never two added.)
    let blocked = other_chunk.logical_or(&causal.ne(0.0)?)?;
    additive(&blocked, dtype)
}

/// `[batch, 1, seq, seq]` (batch 1 without `attention_mask`) for a decoder run both ways (Gemma
/// 3's `use_bidirectional_attention`): query `i` sees key `j` when `attention_mask[b, j]` is 1 and,
/// with a sliding window, `|i − j| ≤ window / 2` (transformers' `|i − j| < window // 2 + 1`).
/// Padding and window are one mask value, never two added, as transformers' masks.
pub fn bidirectional_mask(
    attention_mask: Option<&Tensor>,
    seq: usize,
    window: Option<usize>,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let mut blocked = Tensor::zeros([1, 1, seq, seq], (DType::Bool, device))?;
    if let Some(w) = window {
        let q = Tensor::arange(seq as i64, (DType::I64, device))?.reshape([seq, 1])?;
        let k = Tensor::arange(seq as i64, (DType::I64, device))?.reshape([1, seq])?;
        blocked = q.sub(&k)?.abs()?.gt((w / 2) as f64)?.reshape([1, 1, seq, seq])?;
    }
    if let Some(m) = attention_mask {
        let batch = m.dims()[0];
        blocked = blocked.logical_or(&m.eq(0)?.reshape([batch, 1, 1, seq])?)?;
    }
    additive(&blocked, dtype)
}

/// `[1, 1, n, n]` for one row of a packed batch ([`super::PackedRows`]) whose `n` tokens sat at
/// `positions` (increasing) of the padded row, the padding left out. Causally, token `i` sees
/// token `j` when `positions[j] <= positions[i]` and, with a sliding window,
/// `positions[j] > positions[i] - window` ([`causal_mask`]'s rule); `bidirectional`ly, when
/// `|positions[i] − positions[j]| ≤ window / 2` ([`bidirectional_mask`]'s rule), or always
/// without a window. Made on `device`.
pub fn packed_row_mask(
    positions: &[usize],
    window: Option<usize>,
    bidirectional: bool,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let n = positions.len();
    let blocked = lowest(dtype);
    let mut mask = Vec::with_capacity(n * n);
    for &q in positions {
        mask.extend(positions.iter().map(|&k| {
            let seen = if bidirectional {
                window.is_none_or(|w| q.abs_diff(k) <= w / 2)
            } else {
                k <= q && window.is_none_or(|w| k + w > q)
            };
            if seen {
                0.0
            } else {
                blocked
            }
        }));
    }
    Ok(Tensor::from_vec(mask, [1, 1, n, n])?.to_dtype(dtype)?.to(device)?)
}

/// `[batch, 1, seq, seq]` for DeBERTa: query `i` sees key `j` only when `attention_mask` (`[batch,
/// seq]`, 1 = token) keeps both, as its `get_attention_mask` builds it (a padded query sees nothing,
/// and its softmax over equal masked scores is uniform, as transformers'). Made on the mask's device.
pub fn pair_padding_mask(attention_mask: &Tensor, dtype: DType) -> Result<Tensor> {
    let kept = attention_mask.ne(0)?;
    let both = kept.unsqueeze(2)?.logical_and(&kept.unsqueeze(1)?)?;
    additive(&both.logical_not()?.unsqueeze(1)?, dtype)
}

/// The additive mask of `blocked`: 0 where false, the dtype's lowest value where true.
/// `[1, 1, n, n]` for `n` tokens of several sequences packed into one (`block_ids` `[n]`, each
/// token's sequence): token `i` sees token `j` when they are of one sequence. Made on the ids'
/// device.
pub fn block_diagonal_mask(block_ids: &Tensor, dtype: DType) -> Result<Tensor> {
    let n = block_ids.numel();
    let ids = block_ids.reshape([n])?;
    let blocked = ids.reshape([n, 1])?.ne(&ids.reshape([1, n])?)?;
    additive(&blocked.reshape([1, 1, n, n])?, dtype)
}

fn additive(blocked: &Tensor, dtype: DType) -> Result<Tensor> {
    let zeros = Tensor::zeros(blocked.dims().to_vec(), (dtype, blocked.device()))?;
    Ok(blocked.where_self(lowest(dtype), &zeros)?)
}
