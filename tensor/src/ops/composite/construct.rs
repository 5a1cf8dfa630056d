//! Constructors: vander, tril_indices/triu_indices, cartesian_prod, combinations, block_diag,
//! diag_embed.

use oxtorch_core::{promote_types, wrap_dim, DType, Device, Error, Result, ResultTypeState};

use crate::Tensor;

/// The flattened index tuples of `r` picks from `0..n` in lexicographic order: strictly
/// increasing (`itertools.combinations`) or non-decreasing (`with_replacement`).
fn index_combinations(n: usize, r: usize, with_replacement: bool) -> Vec<i64> {
    let mut out = Vec::new();
    if n == 0 || (!with_replacement && r > n) {
        return out;
    }
    // The largest index position `k` may hold.
    let limit = |k: usize| if with_replacement { n - 1 } else { n - r + k };
    let mut idx: Vec<usize> = if with_replacement { vec![0; r] } else { (0..r).collect() };
    loop {
        out.extend(idx.iter().map(|&i| i as i64));
        // The rightmost position that can still grow, then the smallest tuple after it.
        let Some(k) = (0..r).rev().find(|&k| idx[k] < limit(k)) else {
            return out;
        };
        let base = idx[k] + 1;
        for (offset, slot) in idx[k..].iter_mut().enumerate() {
            *slot = if with_replacement { base } else { base + offset };
        }
    }
}

/// The message for a tensor that had to be 1-d.
fn not_a_vector(t: &Tensor) -> Error {
    Error::msg(format!("Expect a 1D vector, but got shape {:?}", t.dims()))
}

/// Checks torch's `tril_indices`/`triu_indices` sizes.
fn check_trilu(row: i64, col: i64) -> Result<()> {
    if row < 0 {
        return Err(Error::msg(format!("row must be non-negative, got{row}")));
    }
    if col < 0 {
        return Err(Error::msg(format!("col must be non-negative, got{col}")));
    }
    Ok(())
}

/// Two empty index lists with room for `count` entries each: torch's size error for a count that
/// cannot be allocated (never an abort), before any row is visited.
fn reserve_pairs(op: &str, count: i128) -> Result<(Vec<i64>, Vec<i64>)> {
    let refuse =
        || Error::msg(format!("{op}: the result would have {count} index pairs, too many to allocate"));
    let n = usize::try_from(count).ok().filter(|&n| n <= isize::MAX as usize / 16).ok_or_else(refuse)?;
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    // (`index_pairs` appends the columns to the rows)
    rows.try_reserve_exact(2 * n).map_err(|_| refuse())?;
    cols.try_reserve_exact(n).map_err(|_| refuse())?;
    Ok((rows, cols))
}

/// `lo + (lo + 1) + ... + hi` (0 when `hi < lo`).
fn range_sum(lo: i128, hi: i128) -> i128 {
    if hi < lo {
        0
    } else {
        (lo + hi) * (hi - lo + 1) / 2
    }
}

/// `[rows; cols]` as an int64 `[2, n]` tensor on `device`.
fn index_pairs(rows: Vec<i64>, cols: Vec<i64>, device: Device) -> Result<Tensor> {
    let n = rows.len();
    let mut data = rows;
    data.extend(cols);
    Tensor::from_vec_on(data, [2, n], device)
}

impl Tensor {
    /// `torch.vander(x, N, increasing)`: the Vandermonde matrix of the 1-d `x`, `[len(x), N]`
    /// (`N` defaults to `len(x)`), columns `x^(N-1), ..., x^1, x^0` (ascending powers when
    /// `increasing`), built with a cumulative product. Integer and bool inputs give int64.
    pub fn vander(x: &Tensor, n: Option<i64>, increasing: bool) -> Result<Tensor> {
        if x.rank() != 1 {
            return Err(Error::msg("x must be a one-dimensional tensor."));
        }
        let m = x.dims()[0];
        let n = match n {
            Some(n) if n < 0 => return Err(Error::msg("N must be non-negative.")),
            Some(n) => usize::try_from(n).map_err(|_| Error::msg(format!("N = {n} is too large")))?,
            None => m,
        };
        let dtype = promote_types(x.dtype(), DType::I64);
        let ones = Tensor::ones([m, n.min(1)], (dtype, x.device()))?;
        let out = if n > 1 {
            let powers = x.to_dtype(dtype)?.unsqueeze(1)?.broadcast_to(&[m, n - 1])?.cumprod(1, None)?;
            Tensor::cat(&[&ones, &powers], 1)?
        } else {
            ones
        };
        if increasing {
            Ok(out)
        } else {
            out.flip([1])
        }
    }

    /// `torch.tril_indices(row, col, offset)`: the (row, column) indices of the lower triangle of a
    /// `row × col` matrix (entries with `column - row <= offset`), row by row, as an int64
    /// `[2, n]` tensor on `device`.
    pub fn tril_indices(row: i64, col: i64, offset: i64, device: Device) -> Result<Tensor> {
        check_trilu(row, col)?;
        // Rows from `first` on hold `min(i + offset + 1, col)` entries (at least one); those
        // before hold none and are not visited.
        let first = offset.checked_neg().map_or(row, |n| n.max(0)).min(row);
        let (row_w, col_w, off_w) = (i128::from(row), i128::from(col), i128::from(offset));
        let (lo, hi) = (i128::from(first) + off_w + 1, row_w + off_w);
        let count = if col == 0 {
            0
        } else {
            range_sum(lo, hi.min(col_w - 1)) + (hi - lo.max(col_w) + 1).max(0) * col_w
        };
        let (mut rows, mut cols) = reserve_pairs("tril_indices", count)?;
        if col > 0 {
            for i in first..row {
                let last = i.saturating_add(offset).min(col - 1);
                for j in 0..=last {
                    rows.push(i);
                    cols.push(j);
                }
            }
        }
        debug_assert_eq!(rows.len() as i128, count);
        index_pairs(rows, cols, device)
    }

    /// `torch.triu_indices(row, col, offset)`: the (row, column) indices of the upper triangle of a
    /// `row × col` matrix (entries with `column - row >= offset`), row by row, as an int64
    /// `[2, n]` tensor on `device`.
    pub fn triu_indices(row: i64, col: i64, offset: i64, device: Device) -> Result<Tensor> {
        check_trilu(row, col)?;
        // Rows before `end` hold `col - max(i + offset, 0)` entries (at least one); those after
        // hold none and are not visited.
        let (row_w, col_w, off_w) = (i128::from(row), i128::from(col), i128::from(offset));
        let end_w = row_w.min(col_w - off_w).max(0);
        let full = (1 - off_w).clamp(0, end_w); // rows whose entries start at column 0
        let count = full * col_w + (end_w - full) * col_w - range_sum(full + off_w, end_w - 1 + off_w);
        let (mut rows, mut cols) = reserve_pairs("triu_indices", count)?;
        let end = i64::try_from(end_w).expect("at most `row`");
        for i in 0..end {
            for j in i.saturating_add(offset).max(0)..col {
                rows.push(i);
                cols.push(j);
            }
        }
        debug_assert_eq!(rows.len() as i128, count);
        index_pairs(rows, cols, device)
    }

    /// `torch.cartesian_prod(*tensors)`: every combination of one element from each 1-d tensor (of
    /// one dtype), as the rows of a `[prod(len), len(tensors)]` tensor in `itertools.product`
    /// order; a single tensor is returned as it is.
    pub fn cartesian_prod(tensors: &[&Tensor]) -> Result<Tensor> {
        if let Some(t) = tensors.iter().find(|t| t.rank() != 1) {
            return Err(not_a_vector(t));
        }
        match tensors {
            [] => Err(Error::msg("meshgrid expects a non-empty TensorList")),
            [one] => Ok((*one).clone()),
            _ => {
                let grids = Tensor::meshgrid(tensors, "ij")?;
                let flat: Vec<Tensor> = grids.iter().map(|g| g.reshape([-1])).collect::<Result<_>>()?;
                let refs: Vec<&Tensor> = flat.iter().collect();
                Tensor::stack(&refs, 1)
            }
        }
    }

    /// `torch.combinations(self, r, with_replacement)`: the length-`r` combinations of the elements
    /// of the 1-d `self` (`itertools.combinations`, or `combinations_with_replacement`), as the rows
    /// of a `[count, r]` tensor; `r = 0` gives an empty 1-d tensor.
    pub fn combinations(&self, r: i64, with_replacement: bool) -> Result<Tensor> {
        if self.rank() != 1 {
            return Err(not_a_vector(self));
        }
        if r < 0 {
            return Err(Error::msg(format!("Expect a non-negative number, but got {r}")));
        }
        if r == 0 {
            return Tensor::zeros([0], self.same_options());
        }
        let r = usize::try_from(r).map_err(|_| Error::msg(format!("r = {r} is too large")))?;
        let picks = index_combinations(self.dims()[0], r, with_replacement);
        let count = picks.len() / r;
        let index = Tensor::from_vec_on(picks, [count * r], self.device())?;
        self.index_select(0, &index)?.reshape([count, r])
    }

    /// `torch.block_diag(*tensors)`: the tensors (0-d, 1-d as a row, or 2-d) placed along the
    /// diagonal of a zero matrix, in torch's promoted dtype; no tensors give a float `[1, 0]`.
    pub fn block_diag(tensors: &[&Tensor]) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Tensor::zeros([1, 0], DType::default_float());
        };
        let device = first.device();
        if let Some((i, t)) = tensors.iter().enumerate().find(|(_, t)| t.device() != device) {
            return Err(Error::msg(format!(
                "torch.block_diag: input tensors must all be on the same device. Input 0 is on device {device} and input {i} is on device {}",
                t.device()
            )));
        }
        let dtype =
            tensors.iter().fold(ResultTypeState::default(), |s, t| s.tensor(t.dtype(), t.rank())).result();
        let mut blocks = Vec::with_capacity(tensors.len());
        for (i, t) in tensors.iter().enumerate() {
            let block = match t.rank() {
                0 => t.reshape([1, 1])?,
                1 => t.unsqueeze(0)?,
                2 => (*t).clone(),
                r => {
                    return Err(Error::msg(format!(
                        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {r} dimensions"
                    )))
                }
            };
            blocks.push(block.to_dtype(dtype)?);
        }
        let cols: usize = blocks.iter().map(|b| b.dims()[1]).sum();
        let mut rows = Vec::with_capacity(blocks.len());
        let mut start = 0;
        for b in &blocks {
            let (h, w) = (b.dims()[0], b.dims()[1]);
            let left = Tensor::zeros([h, start], (dtype, device))?;
            let right = Tensor::zeros([h, cols - start - w], (dtype, device))?;
            rows.push(Tensor::cat(&[&left, b, &right], 1)?);
            start += w;
        }
        let refs: Vec<&Tensor> = rows.iter().collect();
        Tensor::cat(&refs, 0)
    }

    /// `torch.diag_embed(self, offset, dim1, dim2)`: each vector along the last dim of `self` placed
    /// on the `offset` diagonal (above the main one when positive) of the matrices in dims `dim1`
    /// and `dim2` of the result (one rank more than `self`), zeros elsewhere.
    pub fn diag_embed(&self, offset: i64, dim1: isize, dim2: isize) -> Result<Tensor> {
        let rank = self.rank() + 1;
        let (mut d1, mut d2) = (wrap_dim(dim1, rank)?, wrap_dim(dim2, rank)?);
        let mut offset = offset;
        if d1 > d2 {
            std::mem::swap(&mut d1, &mut d2);
            offset = offset
                .checked_neg()
                .ok_or_else(|| Error::msg(format!("diag_embed: offset {offset} is too large")))?;
        }
        if d1 == d2 {
            return Err(Error::msg(format!("diagonal dimensions cannot be identical {dim1}, {dim2}")));
        }
        let shift = usize::try_from(offset.unsigned_abs())
            .map_err(|_| Error::msg(format!("diag_embed: offset {offset} is too large")))?;
        let mut t = self.clone();
        let mut len = self.size(-1)?;
        if shift != 0 {
            let mut pad_shape = self.dims().to_vec();
            if let Some(last) = pad_shape.last_mut() {
                *last = shift;
            }
            let pad = Tensor::zeros(pad_shape, self.same_options())?;
            t = if offset > 0 { Tensor::cat(&[&pad, &t], -1)? } else { Tensor::cat(&[&t, &pad], -1)? };
            len += shift;
        }
        // The vector along `d2`, size 1 at `d1`; the mask keeps (i, i + offset) of (d1, d2).
        let t = t.unsqueeze(d1 as isize)?.movedim(-1, d2 as isize)?;
        let opts = (DType::I64, self.device());
        let cols = Tensor::arange(len as i64, opts)?;
        let rows = Tensor::arange_step(offset, len as i64 + offset, 1, opts)?;
        let mut mask_shape = vec![1usize; rank];
        mask_shape[d1] = len;
        mask_shape[d2] = len;
        let mask = cols.eq(&rows.unsqueeze(-1)?)?.reshape(mask_shape)?;
        let zero = Tensor::zeros((), self.same_options())?;
        let out = Tensor::where_cond(&mask, &t, &zero)?;
        Ok(self.named(out, "DiagEmbedBackward0"))
    }
}
