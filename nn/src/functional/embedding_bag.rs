//! torch's `embedding_bag`: the sums, means or maxima of bags of rows of an embedding table,
//! written in tensor ops (`index_select`, `index_add`, a maximum over the bags laid out as a
//! padded block) so that autograd differentiates it.

use oxtorch_tensor::{promote_types, DType, Error, Result, Tensor};

use super::embedding_with::ScaleGrad;

/// How a bag's rows are combined.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sum,
    Mean,
    Max,
}

/// torch's `torch.Size([...])`, as its Python errors print a shape.
fn torch_size(dims: &[usize]) -> String {
    let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

/// torch's `embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
/// scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
/// include_last_offset=False, padding_idx=None)`: one row of `[bags, embedding_dim]` per bag of
/// indices into `weight` (`[num_embeddings, embedding_dim]`, a float dtype), the bag's rows
/// combined by `mode`: `"sum"`, `"mean"` or `"max"` (elementwise; the gradient goes to the row
/// holding the maximum, the first one in the bag on a tie, as torch's kernel).
///
/// - A 2-D `input` `[B, N]` is `B` bags of `N` indices (`offsets` must be `None`).
/// - A 1-D `input` is the bags one after the other, bag `b` starting at `offsets[b]` (int64 or
///   int32, non-decreasing, starting at 0) and running to the next offset; the last bag runs to the
///   end of `input`. With `include_last_offset`, `offsets` has one more element, which ends the
///   bags; the last bag still runs to the end of `input`, as torch's CPU kernel does for float64
///   weights and with `padding_idx` (its float32/half fast path stops a sum at the last offset,
///   while its mean still divides by the count to the end: not replicated).
/// - An empty bag gives zeros.
/// - `per_sample_weights` (the shape of `input`, the weight's dtype; `"sum"` only) scales each
///   row before the sum, and is differentiated too.
/// - Entries equal to `padding_idx` (negative counts from the end) are left out of their bag: a
///   mean divides by the count of the others, and the padding row gets no gradient.
/// - `max_norm` first renormalises in place, without recording it for autograd, the rows named in
///   `input` whose `norm_type`-norm exceeds it (as [`crate::Embedding`]).
/// - `scale_grad_by_freq` divides each row's gradient by the number of times it appears in
///   `input` (not with `"max"`).
/// - `sparse` asks torch for a sparse gradient; oxtorch has no sparse tensors, so it is accepted
///   (refused with `"max"`, as torch) and the gradient is dense, with the same values.
///
/// Errors are torch's, in its order. Offsets that decrease (undefined in torch, which reads out of
/// bounds) are an error here.
#[allow(clippy::too_many_arguments)]
pub fn embedding_bag(
    input: &Tensor,
    weight: &Tensor,
    offsets: Option<&Tensor>,
    max_norm: Option<f64>,
    norm_type: f64,
    scale_grad_by_freq: bool,
    mode: &str,
    sparse: bool,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<Tensor> {
    // torch's Python wrapper, in its order.
    if let Some(psw) = per_sample_weights {
        if psw.dims() != input.dims() {
            return Err(Error::shape(format!(
                "embedding_bag: If per_sample_weights ({}) is not None, then it must have the same shape as the input ({})",
                torch_size(psw.dims()),
                torch_size(input.dims())
            )));
        }
    }
    if weight.rank() != 2 {
        return Err(Error::shape(format!(
            "weight has to be a 2D Tensor, but got Tensor of dimension {}",
            weight.rank()
        )));
    }
    // The indices as one vector, the bags' starts (read back), the dtype torch checks the indices
    // and offsets as (their promotion), and the per-sample weights as one vector.
    let (indices, starts, index_dtype, psw, include_last_offset) = match input.rank() {
        2 => {
            if offsets.is_some() {
                return Err(Error::msg(
                    "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type <class 'torch.Tensor'>",
                ));
            }
            let (bags, len) = (input.dims()[0], input.dims()[1]);
            if len == 0 {
                // (torch's `arange(0, numel, step=N)`)
                return Err(Error::msg("step must be nonzero"));
            }
            let starts: Vec<i64> = (0..bags).map(|b| (b * len) as i64).collect();
            let psw = per_sample_weights.map(|p| p.reshape([-1])).transpose()?;
            (input.reshape([-1])?, Some(starts), input.dtype(), psw, false)
        }
        1 => {
            let Some(offsets) = offsets else {
                return Err(Error::msg("offsets has to be a 1D Tensor but got None"));
            };
            if offsets.rank() != 1 {
                return Err(Error::shape("offsets has to be a 1D Tensor"));
            }
            let dtype = promote_types(input.dtype(), offsets.dtype());
            (input.clone(), None, dtype, per_sample_weights.cloned(), include_last_offset)
        }
        r => {
            return Err(Error::shape(format!(
                "input has to be 1D or 2D Tensor, but got Tensor of dimension {r}"
            )))
        }
    };
    let mode = match mode {
        "sum" => Mode::Sum,
        "mean" => Mode::Mean,
        "max" => {
            if scale_grad_by_freq {
                return Err(Error::msg("max mode does not support scaling the gradient by the frequency"));
            }
            if sparse {
                return Err(Error::msg("max mode does not support sparse weights"));
            }
            Mode::Max
        }
        _ => return Err(Error::msg("mode has to be one of sum, mean or max")),
    };
    if let Some(max_norm) = max_norm {
        crate::Embedding::embedding_renorm_(weight, &indices, max_norm, norm_type)?;
    }
    if psw.is_some() && mode != Mode::Sum {
        let name = if mode == Mode::Mean { "mean" } else { "max" };
        return Err(Error::msg(format!(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='{name}'). Please open a feature request on GitHub."
        )));
    }

    // torch's C++ checks, in its order.
    let num_embeddings = weight.dims()[0];
    let n = num_embeddings as i64;
    let padding_idx = match padding_idx {
        Some(p) if p < -n || p >= n => {
            return Err(Error::msg(format!(
                "padding_idx must be within the number of embeddings, -{n} through {}, but got {p}",
                n - 1
            )))
        }
        Some(p) if p < 0 => Some(p + n),
        p => p,
    };
    if !matches!(index_dtype, DType::I64 | DType::I32) {
        return Err(Error::msg(format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding_bag)",
            index_dtype.scalar_type_name()
        )));
    }
    if !weight.is_floating_point() {
        return Err(Error::msg(format!(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, Float, Double; but got torch.{}Tensor instead (while checking arguments for embedding_bag)",
            weight.dtype().scalar_type_name()
        )));
    }
    let starts = match (starts, offsets) {
        (Some(s), _) => s,
        (None, Some(o)) => o.to_dtype(DType::I64)?.to_vec::<i64>()?,
        (None, None) => Vec::new(),
    };
    let numel = indices.numel();
    if let (Some(&first), Some(&last)) = (starts.first(), starts.last()) {
        if first != 0 {
            // (torch's message goes on with a second line, `[ torch.LongTensor{} ]`: ours is one)
            return Err(Error::msg(format!(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got {first}"
            )));
        }
        if last > numel as i64 {
            return Err(Error::msg(format!(
                "offsets[-1] can not be greater than input's length {numel} but got offsets[-1] of {last}"
            )));
        }
    }
    if let Some(psw) = &psw {
        if psw.dtype() != weight.dtype() {
            return Err(Error::msg(format!(
                "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights'; but type torch.{}Tensor does not equal torch.{}Tensor (while checking arguments for embedding_bag)",
                weight.dtype().scalar_type_name(),
                psw.dtype().scalar_type_name()
            )));
        }
    }
    if include_last_offset && starts.is_empty() {
        return Err(Error::msg("include_last_offset: number of offset should be at least 1"));
    }
    if let Some(i) = (1..starts.len()).find(|&i| starts[i] < starts[i - 1]) {
        return Err(Error::msg(format!(
            "embedding_bag: offsets must be non-decreasing, but got offsets[{}] = {} > offsets[{i}] = {}",
            i - 1,
            starts[i - 1],
            starts[i]
        )));
    }
    let idx: Vec<i64> = indices.to_dtype(DType::I64)?.to_vec::<i64>()?;
    if let Some(&bad) = idx.iter().find(|&&v| v < 0 || v >= n) {
        return Err(Error::msg(format!(
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad}"
        )));
    }

    // The bags: each entry that is not padding, in input order, with its bag.
    let bags = starts.len() - usize::from(include_last_offset);
    let dim = weight.dims()[1];
    let (device, opts) = (weight.device(), weight.same_options());
    let (mut kept_pos, mut kept_rows, mut kept_bag) = (Vec::new(), Vec::new(), Vec::new());
    let mut counts = vec![0usize; bags];
    for b in 0..bags {
        let start = starts[b] as usize;
        let end = if b + 1 < bags { starts[b + 1] as usize } else { numel };
        for (i, &row) in (start..end).zip(&idx[start..end]) {
            if Some(row) != padding_idx {
                kept_pos.push(i as i64);
                kept_rows.push(row);
                kept_bag.push(b as i64);
                counts[b] += 1;
            }
        }
    }
    let kept = kept_pos.len();
    if kept == 0 {
        // Every bag empty: zeros, still in the weight's graph (a zero gradient), as torch's.
        let none = Tensor::from_vec_on(Vec::<i64>::new(), [0], device)?;
        let zero = weight.index_select(0, &none)?.sum(0, true)?;
        return Tensor::zeros([bags, dim], opts)?.add(&zero);
    }
    if mode == Mode::Max {
        return bag_maxima(weight, &kept_bag, &kept_rows, &counts);
    }
    let mut rows = weight.index_select(0, &Tensor::from_vec_on(kept_rows.clone(), [kept], device)?)?;
    if scale_grad_by_freq && sparse && rows.requires_grad() {
        // torch refuses when the gradient is computed, not at the lookup.
        let msg = "embedding_backward: scale_grad_by_freq not supported with sparse gradients";
        let refuse = super::embedding_with::RefuseGrad { msg, name: "EmbeddingBagBackward0" };
        rows = oxtorch_tensor::autograd::Function::apply(refuse, std::slice::from_ref(&rows))?.swap_remove(0);
    } else if scale_grad_by_freq && rows.requires_grad() {
        let mut freq = vec![0u64; num_embeddings];
        for &v in &idx {
            freq[v as usize] += 1;
        }
        let scale: Vec<f64> = kept_rows.iter().map(|&r| 1.0 / freq[r as usize] as f64).collect();
        let scale = Tensor::from_vec_on(scale, [kept, 1], device)?.to_dtype(weight.dtype())?;
        rows = ScaleGrad::scale(&rows, scale, "EmbeddingBagBackward0")?;
    }
    if let Some(psw) = &psw {
        let pos = Tensor::from_vec_on(kept_pos, [kept], device)?;
        rows = rows.mul(&psw.index_select(0, &pos)?.unsqueeze(1)?)?;
    }
    let bag_of = Tensor::from_vec_on(kept_bag, [kept], device)?;
    let sums = Tensor::zeros([bags, dim], opts)?.index_add(0, &bag_of, &rows, 1.0)?;
    if mode == Mode::Sum {
        return Ok(sums);
    }
    let sizes: Vec<f64> = counts.iter().map(|&c| c.max(1) as f64).collect();
    sums.div(&Tensor::from_vec_on(sizes, [bags, 1], device)?.to_dtype(weight.dtype())?)
}

/// Each bag's elementwise maximum (zeros for an empty bag), the first maximum in the bag taking the
/// gradient, as torch's kernel. Bags of similar length go together (lengths up to a power of
/// two) into a block `[bags, longest, dim]`, their rows first and -inf after them, so the blocks
/// hold at most twice the bags' rows: one long bag among many short ones costs its own length,
/// not `bags × longest`.
fn bag_maxima(weight: &Tensor, kept_bag: &[i64], kept_rows: &[i64], counts: &[usize]) -> Result<Tensor> {
    let (bags, dim, device) = (counts.len(), weight.dims()[1], weight.device());
    let mut members: Vec<Vec<i64>> = vec![Vec::new(); bags];
    for (&b, &row) in kept_bag.iter().zip(kept_rows) {
        members[b as usize].push(row);
    }
    let mut buckets: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for (b, rows) in members.iter().enumerate().filter(|(_, rows)| !rows.is_empty()) {
        buckets.entry(rows.len().next_power_of_two()).or_default().push(b);
    }
    let mut out = Tensor::zeros([bags, dim], weight.same_options())?;
    for (longest, in_bucket) in buckets {
        let mut slot_rows = vec![0i64; in_bucket.len() * longest];
        let mut valid = vec![false; in_bucket.len() * longest];
        for (k, &b) in in_bucket.iter().enumerate() {
            for (j, &row) in members[b].iter().enumerate() {
                slot_rows[k * longest + j] = row;
                valid[k * longest + j] = true;
            }
        }
        let n = in_bucket.len();
        let slots = Tensor::from_vec_on(slot_rows, [n * longest], device)?;
        let block = weight.index_select(0, &slots)?.reshape([n, longest, dim])?;
        let valid = Tensor::from_vec_on(valid, [n, longest, 1], device)?;
        // torch's kernel keeps a value only when it is strictly greater: a NaN wins only as a
        // bag's first row, later NaNs are skipped (here: -inf, like the padding).
        let first =
            Tensor::from_vec_on((0..longest).map(|j| j == 0).collect::<Vec<_>>(), [1, longest, 1], device)?;
        let skipped = block.isnan()?.logical_and(&first.logical_not()?)?.logical_or(&valid.logical_not()?)?;
        let (maxima, _) = Tensor::where_cond(&skipped, f64::NEG_INFINITY, &block)?.max_dim(1, false)?;
        let targets =
            Tensor::from_vec_on(in_bucket.iter().map(|&b| b as i64).collect::<Vec<_>>(), [n], device)?;
        out = out.index_copy(0, &targets, &maxima)?;
    }
    Ok(out)
}
