//! A padded batch's kept tokens packed into one sequence, as the `*_packed` forwards run them
//! (sentence embeddings on the CPU): projections and MLPs over the kept tokens only, attention
//! row by row ([`attend_rows`]). Not to be confused with the decoder's packed weights
//! ([`super::Arena`]).

use oxtorch_tensor::{DType, Device, Tensor};

use super::{eager_attention, Rotary};
use crate::error::{Error, Result};

/// Where a batch's kept tokens sit: each row's run among the packed tokens and the columns of
/// the padded row they came from.
#[derive(Debug, Clone)]
pub struct PackedRows {
    /// `(first token, token count)` of each row that keeps a token, in row order
    pub rows: Vec<(usize, usize)>,
    /// the kept columns of each of those rows (its tokens' places in the padded row)
    pub columns: Vec<Vec<usize>>,
    /// `row * seq + column` of every kept token (int64, on the model's device)
    index: Tensor,
    /// the kept tokens' columns (int64, on the model's device)
    column_index: Tensor,
    batch: usize,
    seq: usize,
}

impl PackedRows {
    /// The kept tokens of `attention_mask` `[batch, seq]` (nonzero = kept), `None` when every token
    /// is kept (the padded forward then does the same work). An error names a mask of another shape.
    pub fn new(attention_mask: &Tensor, batch: usize, seq: usize, device: Device) -> Result<Option<Self>> {
        if attention_mask.dims() != [batch, seq] {
            return Err(Error::Input(format!(
                "attention_mask must have shape [{batch}, {seq}], got {:?}",
                attention_mask.dims()
            )));
        }
        let kept = attention_mask.ne(0)?.to_dtype(DType::I64)?.to_vec::<i64>()?;
        if kept.iter().all(|&k| k != 0) {
            return Ok(None);
        }
        let (mut rows, mut columns, mut index) = (Vec::new(), Vec::new(), Vec::with_capacity(kept.len()));
        for (r, row) in kept.chunks(seq.max(1)).enumerate() {
            let kept_columns: Vec<usize> = (0..seq).filter(|&c| row[c] != 0).collect();
            if !kept_columns.is_empty() {
                rows.push((index.len(), kept_columns.len()));
                index.extend(kept_columns.iter().map(|&c| (r * seq + c) as i64));
                columns.push(kept_columns);
            }
        }
        let tokens = index.len();
        let column_index: Vec<i64> = columns.iter().flatten().map(|&c| c as i64).collect();
        Ok(Some(PackedRows {
            rows,
            columns,
            index: Tensor::from_vec(index, [tokens])?.to(device)?,
            column_index: Tensor::from_vec(column_index, [tokens])?.to(device)?,
            batch,
            seq,
        }))
    }

    /// How many tokens are kept.
    pub fn tokens(&self) -> usize {
        self.index.numel()
    }

    /// Each kept token's place in its padded row (its position), int64 `[1, tokens]`.
    pub fn places(&self) -> Result<Tensor> {
        Ok(self.column_index.unsqueeze(0)?)
    }

    /// The kept tokens of `t` `[batch, seq, ...]`: `[tokens, ...]`.
    pub fn gather(&self, t: &Tensor) -> Result<Tensor> {
        let mut flat = vec![self.batch * self.seq];
        flat.extend_from_slice(&t.dims()[2..]);
        Ok(t.reshape(flat)?.index_select(0, &self.index)?)
    }

    /// `x` `[tokens, width]` back at its padded places: `[batch, seq, width]`, zeros elsewhere.
    pub fn scatter(&self, x: &Tensor) -> Result<Tensor> {
        let width = x.dims()[1];
        let out = Tensor::zeros([self.batch * self.seq, width], (x.dtype(), x.device()))?;
        Ok(out.index_copy(0, &self.index, x)?.reshape([self.batch, self.seq, width])?)
    }

    /// `rotary`'s cos and sin `[1, tokens, dim]` at the kept tokens' places in the padded row
    /// (positions `0..seq`, as the padded forward's: a dynamic or long-context RoPE picks its
    /// frequencies from them).
    pub fn angles(&self, rotary: &Rotary, dtype: DType) -> Result<(Tensor, Tensor)> {
        let positions = Tensor::arange(self.seq as i64, (DType::I64, self.index.device()))?.unsqueeze(0)?;
        let (cos, sin) = rotary.cos_sin(&positions, dtype)?;
        let at_tokens = |t: Tensor| -> Result<Tensor> { Ok(t.index_select(1, &self.column_index)?) };
        Ok((at_tokens(cos)?, at_tokens(sin)?))
    }
}

/// Attention of packed tokens row by row: `q`, `k`, `v` `[1, heads, tokens, head_dim]` (k and v
/// may have fewer heads), each row over its own tokens with `masks[row]` (additive, `[1, heads or
/// 1, count, count]`) when given; the context `[1, tokens, heads, head_dim]`.
pub fn attend_rows(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    rows: &[(usize, usize)],
    masks: Option<&[Tensor]>,
    scale: f64,
    softcap: Option<f64>,
) -> Result<Tensor> {
    let parts = rows
        .iter()
        .enumerate()
        .map(|(r, &(start, n))| {
            let row = |t: &Tensor| t.narrow(2, start as isize, n);
            let mask = masks.map(|m| &m[r]);
            // `[1, count, heads, head_dim]`, a view: the concatenation below is the one copy.
            Ok(eager_attention(&row(q)?, &row(k)?, &row(v)?, mask, scale, softcap)?.transpose(1, 2)?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Tensor::cat(&parts.iter().collect::<Vec<_>>(), 1)?)
}
