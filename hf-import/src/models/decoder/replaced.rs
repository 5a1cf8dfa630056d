//! Token embeddings replaced by other features before the decoder runs (a vision-language
//! model's image features in place of its image tokens' embeddings), and the blocks of tokens
//! that then attend to each other both ways.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::{Error, Result};

/// Token embeddings replaced by other features, as a vision-language model puts its image features
/// in place of its image tokens' embeddings (transformers' `inputs_embeds.masked_scatter`).
#[derive(Debug, Clone, Copy)]
pub struct ReplacedRows<'a> {
    /// `[batch, seq]` bool: the tokens whose embeddings are replaced
    pub mask: &'a Tensor,
    /// `[n, hidden]`: the features, in the order of the masked tokens (row by row); `n` is the
    /// number of masked tokens
    pub rows: &'a Tensor,
    /// blocks of tokens that see each other both ways (Gemma 3's images, PaliGemma's prefix);
    /// `None`: causal attention alone
    pub blocks: Option<AttentionBlocks<'a>>,
    /// features `[n, hidden]` added to the marked tokens' hidden states after the first layers,
    /// one per layer (Qwen3-VL's deepstack features); empty for none
    pub added: &'a [Tensor],
}

/// Blocks of tokens that attend to each other both ways (see [`crate::layers::block_causal_mask`]).
#[derive(Debug, Clone, Copy)]
pub struct AttentionBlocks<'a> {
    /// `[batch, seq]` int64: each token's block, -1 for none
    pub ids: &'a Tensor,
    /// a sliding window hides the keys of a token's own block too (Gemma 3), else only others
    /// (PaliGemma 2)
    pub within_window: bool,
}

/// `h` after decoder layer `layer` (`None`: before the first): plus `replaced.added[layer]` at
/// the marked tokens where there is one (Qwen3-VL's deepstack), else `h` itself.
pub(super) fn add_rows_after(
    replaced: Option<ReplacedRows<'_>>,
    layer: Option<usize>,
    h: Tensor,
) -> Result<Tensor> {
    match (replaced, layer) {
        (Some(r), Some(layer)) if layer < r.added.len() => add_rows(&h, r.mask, &r.added[layer]),
        _ => Ok(h),
    }
}

/// `h` `[batch, seq, hidden]` plus `rows` `[n, hidden]` at the `n` rows `mask` marks, in order
/// (Qwen3-VL's `_deepstack_process`; the other rows are added zeros).
fn add_rows(h: &Tensor, mask: &Tensor, rows: &Tensor) -> Result<Tensor> {
    let (b, s, hidden) = (h.dims()[0], h.dims()[1], h.dims()[2]);
    let marked = mask.to(Device::Cpu)?.contiguous()?.to_vec::<bool>()?;
    let tokens = marked.iter().filter(|&&m| m).count();
    if rows.dims() != [tokens, hidden] {
        return Err(Error::Input(format!(
            "the features added at the {tokens} image tokens must be [{tokens}, {hidden}], got {:?}",
            rows.dims()
        )));
    }
    let mut next = 0;
    let index: Vec<i64> = marked
        .iter()
        .map(|&m| {
            next += usize::from(m);
            if m {
                next as i64
            } else {
                0
            }
        })
        .collect();
    let index = Tensor::from_vec(index, [b * s])?.to(h.device())?;
    let zero = Tensor::zeros([1, hidden], (h.dtype(), h.device()))?;
    let rows = Tensor::cat(&[&zero, &rows.to(h.device())?.to_dtype(h.dtype())?], 0)?;
    Ok(h.add(&rows.index_select(0, &index)?.reshape([b, s, hidden])?)?)
}

/// `h` `[batch, seq, hidden]` with the rows `replaced.mask` marks replaced by `replaced.rows`, in
/// order; the counts must agree (transformers' error otherwise).
pub(super) fn replace_rows(h: &Tensor, replaced: ReplacedRows<'_>) -> Result<Tensor> {
    let ReplacedRows { mask, rows, .. } = replaced;
    let (b, s, hidden) = (h.dims()[0], h.dims()[1], h.dims()[2]);
    if mask.dims() != [b, s] || mask.dtype() != DType::Bool {
        return Err(Error::Input(format!(
            "the replaced tokens' mask must be a bool tensor of shape [{b}, {s}], got {:?} of dtype {:?}",
            mask.dims(),
            mask.dtype()
        )));
    }
    let marked = mask.to(Device::Cpu)?.contiguous()?.to_vec::<bool>()?;
    let tokens = marked.iter().filter(|&&m| m).count();
    let features = rows.dims().first().copied().unwrap_or(0);
    if rows.dims().len() != 2 || rows.dims()[1] != hidden || features != tokens {
        return Err(Error::Input(format!(
            "Image features and image tokens do not match, tokens: {tokens}, features: {features} \
             (features of shape {:?}, the embeddings' width {hidden})",
            rows.dims()
        )));
    }
    // Each token's row of `[embeddings; features]`: its own, or the next feature where marked (a
    // gather, which every device runs, where transformers scatters).
    let mut next = b * s;
    let index: Vec<i64> = marked
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let row = if m { next } else { i };
            next += usize::from(m);
            row as i64
        })
        .collect();
    let index = Tensor::from_vec(index, [b * s])?.to(h.device())?;
    let rows = rows.to(h.device())?.to_dtype(h.dtype())?;
    let all = Tensor::cat(&[&h.reshape([b * s, hidden])?, &rows], 0)?;
    Ok(all.index_select(0, &index)?.reshape([b, s, hidden])?)
}
