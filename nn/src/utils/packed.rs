//! `torch.nn.utils.rnn`'s packed sequences: [`PackedSequence`], [`pack_padded_sequence`],
//! [`pad_packed_sequence`], [`pack_sequence`], [`unpack_sequence`], [`unpad_sequence`] and
//! [`invert_permutation`].
//!
//! Packing and padding are gathers (`index_select` of the flattened batch, padding read from one
//! appended row), so autograd differentiates them end to end; the indices are computed on the host
//! from the lengths, which torch also keeps on the CPU.

use oxtorch_tensor::{DType, Device, Error, Result, Tensor};

use super::rnn::pad_sequence;

/// torch's `PackedSequence`: the steps of a batch of variable-length sequences, stored time step
/// by time step with each step holding only the sequences still running.
///
/// The sequences are ordered by decreasing length: `data[offset_t .. offset_t + batch_sizes[t]]`
/// are step `t` of the `batch_sizes[t]` longest sequences, `offset_t` the sum of the earlier batch
/// sizes. Built by [`pack_padded_sequence`] or [`pack_sequence`]; the recurrent layers take it in
/// `forward_packed`.
#[derive(Clone, Debug)]
pub struct PackedSequence {
    /// `[sum(lengths), *]`: the packed steps, of the input's dtype and device
    pub data: Tensor,
    /// int64 on the CPU, `[longest length]`: how many sequences run at each step (non-increasing)
    pub batch_sizes: Tensor,
    /// int64 on `data`'s device: sorted position `j` holds the caller's sequence
    /// `sorted_indices[j]` (`None` when the input was already sorted, `enforce_sorted`)
    pub sorted_indices: Option<Tensor>,
    /// int64 on `data`'s device, the inverse permutation: the caller's sequence `i` sits at sorted
    /// position `unsorted_indices[i]`
    pub unsorted_indices: Option<Tensor>,
}

impl PackedSequence {
    /// torch's `PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)`: when
    /// `unsorted_indices` is `None` it is the inverse of `sorted_indices` (torch does not check a
    /// given one). `batch_sizes` must be on the CPU, with torch's message.
    pub fn new(
        data: Tensor,
        batch_sizes: Tensor,
        sorted_indices: Option<Tensor>,
        unsorted_indices: Option<Tensor>,
    ) -> Result<Self> {
        if !batch_sizes.device().is_cpu() {
            return Err(Error::msg(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. They should be instantiated by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence",
            ));
        }
        let unsorted_indices = match (unsorted_indices, &sorted_indices) {
            (Some(u), _) => Some(u),
            (None, Some(s)) => Some(invert_permutation(s)?),
            (None, None) => None,
        };
        Ok(PackedSequence { data, batch_sizes, sorted_indices, unsorted_indices })
    }

    /// The batch sizes as host integers, checked as torch's kernels read them: a 1-D int64 CPU
    /// tensor (torch's message), every size positive and none larger than the one before.
    pub fn batch_sizes_vec(&self) -> Result<Vec<usize>> {
        let b = &self.batch_sizes;
        if b.rank() != 1 || !b.device().is_cpu() || b.dtype() != DType::I64 {
            return Err(long_tensor_error(b));
        }
        let sizes = b.to_vec::<i64>()?;
        let mut prev = i64::MAX;
        for &s in &sizes {
            if s <= 0 || s > prev {
                return Err(Error::msg(format!(
                    "batch_sizes must be positive and non-increasing, but got {sizes:?}"
                )));
            }
            prev = s;
        }
        if sizes.is_empty() {
            return Err(Error::msg("batch_sizes must not be empty"));
        }
        Ok(sizes.into_iter().map(|s| s as usize).collect())
    }

    /// torch's `PackedSequence.to(dtype)`: `data` converted, the indices kept.
    pub fn to_dtype(&self, dtype: DType) -> Result<Self> {
        Ok(PackedSequence { data: self.data.to_dtype(dtype)?, ..self.clone() })
    }
}

/// torch's `checkLongTensor` message, which its kernels give for `lengths` and `batch_sizes`.
fn long_tensor_error(t: &Tensor) -> Error {
    Error::msg(format!(
        "'lengths' argument should be a 1D CPU int64 tensor, but got {}D {} {} tensor",
        t.rank(),
        t.device(),
        t.dtype().scalar_type_name()
    ))
}

/// The `lengths` of [`pack_padded_sequence`] and [`unpad_sequence`]: integers (`&[3, 2, 1]`,
/// `vec![3i64, 2]`) or a tensor (torch's `Tensor | list[int]`).
pub trait SequenceLengths {
    /// The lengths as int64 values; a tensor is cast to int64 first (torch's
    /// `lengths.to(torch.int64)`, truncating floats) and must be 1-D on the CPU (torch's message).
    fn lengths(self) -> Result<Vec<i64>>;
}

/// An integer length as int64 (saturating: a length that large fails the checks anyway).
fn to_i64<T: Copy + TryInto<i64>>(v: &T) -> i64 {
    (*v).try_into().unwrap_or(i64::MAX)
}

macro_rules! sequence_lengths {
    ($($t:ty),*) => {$(
        impl<const N: usize> SequenceLengths for [$t; N] {
            fn lengths(self) -> Result<Vec<i64>> { Ok(self.iter().map(to_i64).collect()) }
        }
        impl<const N: usize> SequenceLengths for &[$t; N] {
            fn lengths(self) -> Result<Vec<i64>> { Ok(self.iter().map(to_i64).collect()) }
        }
        impl SequenceLengths for &[$t] {
            fn lengths(self) -> Result<Vec<i64>> { Ok(self.iter().map(to_i64).collect()) }
        }
        impl SequenceLengths for Vec<$t> {
            fn lengths(self) -> Result<Vec<i64>> { Ok(self.iter().map(to_i64).collect()) }
        }
        impl SequenceLengths for &Vec<$t> {
            fn lengths(self) -> Result<Vec<i64>> { Ok(self.iter().map(to_i64).collect()) }
        }
    )*};
}
sequence_lengths!(i32, i64, usize);

impl SequenceLengths for &Tensor {
    fn lengths(self) -> Result<Vec<i64>> {
        let t = self.to_dtype(DType::I64)?;
        if t.rank() != 1 || !t.device().is_cpu() {
            return Err(long_tensor_error(&t));
        }
        t.to_vec::<i64>()
    }
}

impl SequenceLengths for Tensor {
    fn lengths(self) -> Result<Vec<i64>> {
        (&self).lengths()
    }
}

/// torch's `invert_permutation(permutation)`: `out[permutation[i]] = i`, on the permutation's
/// device (int64). An entry out of range is torch's scatter error.
pub fn invert_permutation(permutation: &Tensor) -> Result<Tensor> {
    let p = permutation.to_dtype(DType::I64)?.to_vec::<i64>()?;
    let n = p.len();
    let mut out = vec![0i64; n];
    for (i, &v) in p.iter().enumerate() {
        if v < 0 || v as usize >= n {
            return Err(Error::msg(format!("index {v} is out of bounds for dimension 0 with size {n}")));
        }
        out[v as usize] = i as i64;
    }
    Tensor::from_vec_on(out, permutation.dims().to_vec(), permutation.device())
}

/// An int64 index vector on `device`.
fn index(values: Vec<i64>, device: Device) -> Result<Tensor> {
    let n = values.len();
    Tensor::from_vec_on(values, [n], device)
}

/// torch's `pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True)`: packs
/// the padded batch `input` (`[T, B, *]`, `[B, T, *]` with `batch_first`) of sequences of the
/// given lengths.
///
/// With `enforce_sorted` the lengths must not increase (torch's message) and the result has no
/// indices; otherwise the sequences are sorted by decreasing length first (a stable sort: equal
/// lengths keep their order, as torch's CPU sort for batches of up to 16) and `sorted_indices` /
/// `unsorted_indices` record the order. torch's errors for an empty input, a `lengths` of another
/// size than the batch, and a length `<= 0`; a length beyond `T` is an error here, where torch
/// builds a `PackedSequence` whose `data` is shorter than its batch sizes say.
pub fn pack_padded_sequence(
    input: &Tensor,
    lengths: impl SequenceLengths,
    batch_first: bool,
    enforce_sorted: bool,
) -> Result<PackedSequence> {
    let mut lengths = lengths.lengths()?;
    let mut input = input.clone();
    let sorted_indices = if enforce_sorted {
        None
    } else {
        // torch: `lengths, sorted_indices = torch.sort(lengths, descending=True)`, then
        // `input.index_select(batch_dim, sorted_indices)`.
        let mut order: Vec<usize> = (0..lengths.len()).collect();
        order.sort_by(|&a, &b| lengths[b].cmp(&lengths[a]));
        lengths = order.iter().map(|&i| lengths[i]).collect();
        let idx = index(order.iter().map(|&i| i as i64).collect(), input.device())?;
        input = input.index_select(if batch_first { 0 } else { 1 }, &idx)?;
        Some(idx)
    };
    let (data, batch_sizes) = pack_sorted(&input, &lengths, batch_first)?;
    PackedSequence::new(data, batch_sizes, sorted_indices, None)
}

/// torch's `_pack_padded_sequence` kernel: lengths sorted in decreasing order, checked with
/// torch's messages; one gather of the flattened batch.
fn pack_sorted(input: &Tensor, lengths: &[i64], batch_first: bool) -> Result<(Tensor, Tensor)> {
    // torch transposes a batch-first input first: a 1-D input fails there, before the emptiness
    // check.
    if batch_first {
        input.size(1)?;
    }
    if input.numel() == 0 {
        return Err(Error::msg("Cannot pack empty tensors."));
    }
    let (t_dim, b_dim) = if batch_first { (1, 0) } else { (0, 1) };
    let batch = input.size(b_dim)?;
    let steps = input.dims()[t_dim];
    if lengths.len() != batch {
        return Err(Error::msg(format!(
            "Expected `len(lengths)` to be equal to batch_size, but got {} (batch_size={batch})",
            lengths.len()
        )));
    }
    if lengths[batch - 1] <= 0 {
        return Err(Error::msg(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0",
        ));
    }
    if lengths.windows(2).any(|w| w[1] > w[0]) {
        return Err(Error::msg(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.",
        ));
    }
    let longest = lengths[0] as usize;
    if longest > steps {
        return Err(Error::msg(format!(
            "pack_padded_sequence: a sequence length ({longest}) is larger than the input's {steps} time steps"
        )));
    }
    let mut batch_sizes = Vec::with_capacity(longest);
    let mut rows = Vec::new();
    for t in 0..longest {
        let n = lengths.iter().take_while(|&&l| l as usize > t).count();
        batch_sizes.push(n as i64);
        for b in 0..n {
            // the row of (t, b) in the input with its first two dims flattened
            let row = if batch_first { b * steps + t } else { t * batch + b };
            rows.push(row as i64);
        }
    }
    let mut flat = vec![steps * batch];
    flat.extend_from_slice(&input.dims()[2..]);
    let data = input.reshape(flat)?.index_select(0, &index(rows, input.device())?)?;
    let n = batch_sizes.len();
    Ok((data, Tensor::from_vec(batch_sizes, [n])?))
}

/// torch's `pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None)`:
/// the padded batch `[T, B, *]` (`[B, T, *]` with `batch_first`) of a [`PackedSequence`], in the
/// caller's order (`unsorted_indices`), and the sequences' lengths (int64, CPU).
///
/// `T` is the longest length, or `total_length` (torch's message when it is shorter). Padding takes
/// `data`'s dtype (torch's overflow error for a value an integer dtype cannot hold). The gradient
/// reaches `data`.
pub fn pad_packed_sequence(
    sequence: &PackedSequence,
    batch_first: bool,
    padding_value: f64,
    total_length: Option<usize>,
) -> Result<(Tensor, Tensor)> {
    let b = &sequence.batch_sizes;
    let mut max_len = if b.rank() == 0 { 1 } else { b.dims()[0] };
    if let Some(total) = total_length {
        if total < max_len {
            return Err(Error::msg(format!(
                "Expected total_length to be at least the length of the longest sequence in input, but got total_length={total} and max sequence length being {max_len}"
            )));
        }
        max_len = total;
    }
    let sizes = sequence.batch_sizes_vec()?;
    let data = &sequence.data;
    let rows: usize = sizes.iter().sum();
    if data.rank() == 0 || data.dims()[0] != rows {
        return Err(Error::shape(format!(
            "pad_packed_sequence: data of shape {:?} does not hold the {rows} steps that batch_sizes count",
            data.dims()
        )));
    }
    let max_batch = sizes[0];
    // lengths[j]: the steps of sorted sequence j
    let sorted_lengths: Vec<i64> =
        (0..max_batch).map(|j| sizes.iter().take_while(|&&s| s > j).count() as i64).collect();
    // column b of the output is sorted sequence order[b]
    let order: Vec<usize> = match &sequence.unsorted_indices {
        None => (0..max_batch).collect(),
        Some(u) => {
            let u = u.to_dtype(DType::I64)?.to_vec::<i64>()?;
            let mut order = Vec::with_capacity(u.len());
            for v in u {
                if v < 0 || v as usize >= max_batch {
                    return Err(Error::msg(format!(
                        "INDICES element is out of DATA bounds, id={v} axis_dim={max_batch}"
                    )));
                }
                order.push(v as usize);
            }
            order
        }
    };
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut acc = 0;
    for &s in &sizes {
        offsets.push(acc);
        acc += s;
    }
    // out[t, b] (or out[b, t]) reads data row offsets[t] + order[b], or the padding row `rows`.
    let at = |t: usize, b: usize| -> i64 {
        let j = order[b];
        if t < sizes.len() && j < sizes[t] {
            (offsets[t] + j) as i64
        } else {
            rows as i64
        }
    };
    let batch = order.len();
    let mut idx = Vec::with_capacity(max_len * batch);
    if batch_first {
        for b in 0..batch {
            idx.extend((0..max_len).map(|t| at(t, b)));
        }
    } else {
        for t in 0..max_len {
            idx.extend((0..batch).map(|b| at(t, b)));
        }
    }
    let mut pad_shape = vec![1];
    pad_shape.extend_from_slice(&data.dims()[1..]);
    let pad = Tensor::full(pad_shape, padding_value, data.same_options())?;
    let padded = Tensor::cat(&[data, &pad], 0)?.index_select(0, &index(idx, data.device())?)?;
    let mut shape = if batch_first { vec![batch, max_len] } else { vec![max_len, batch] };
    shape.extend_from_slice(&data.dims()[1..]);
    let lengths: Vec<i64> = order.iter().map(|&j| sorted_lengths[j]).collect();
    Ok((padded.reshape(shape)?, Tensor::from_vec(lengths, [batch])?))
}

/// torch's `pack_sequence(sequences, enforce_sorted=True)`: [`pad_sequence`] then
/// [`pack_padded_sequence`] with the sequences' lengths (`[L_i, *]` each).
pub fn pack_sequence(sequences: &[Tensor], enforce_sorted: bool) -> Result<PackedSequence> {
    let mut lengths = Vec::with_capacity(sequences.len());
    for s in sequences {
        let Some(&len) = s.dims().first() else {
            return Err(Error::msg("Dimension specified as 0 but tensor has no dimensions"));
        };
        lengths.push(len as i64);
    }
    let padded = pad_sequence(sequences, false, 0.0, "right")?;
    pack_padded_sequence(&padded, lengths, false, enforce_sorted)
}

/// torch's `unpad_sequence(padded_sequences, lengths, batch_first=False)`: the first `lengths[b]`
/// steps of each sequence of the padded batch (`[T, B, *]`, `[B, T, *]` with `batch_first`), as
/// copies. As torch's mask, a length above `T` keeps all `T` steps and one below 0 none; the
/// lengths must be as many as the sequences (torch's `zip(strict=True)` messages). Unlike torch,
/// `padded_sequences` is not transposed in place.
pub fn unpad_sequence(
    padded_sequences: &Tensor,
    lengths: impl SequenceLengths,
    batch_first: bool,
) -> Result<Vec<Tensor>> {
    let (b_dim, t_dim) = if batch_first { (0, 1) } else { (1, 0) };
    let lengths = lengths.lengths()?;
    let batch = padded_sequences.size(b_dim)?;
    let steps = padded_sequences.size(t_dim)?;
    if lengths.len() < batch {
        return Err(Error::msg("zip() argument 2 is shorter than argument 1"));
    }
    if lengths.len() > batch {
        return Err(Error::msg("zip() argument 2 is longer than argument 1"));
    }
    let mut out = Vec::with_capacity(batch);
    for (b, &len) in lengths.iter().enumerate() {
        let seq = padded_sequences.select(b_dim, b as isize)?;
        // A copy, as torch's boolean-mask indexing gives (in-place edits stay in the piece).
        out.push(seq.narrow(0, 0, len.clamp(0, steps as i64) as usize)?.copy()?);
    }
    Ok(out)
}

/// torch's `unpack_sequence(packed_sequences)`: the sequences of a [`PackedSequence`], in the
/// caller's order, each `[L_i, *]` ([`pad_packed_sequence`] then [`unpad_sequence`]).
pub fn unpack_sequence(packed_sequences: &PackedSequence) -> Result<Vec<Tensor>> {
    let (padded, lengths) = pad_packed_sequence(packed_sequences, true, 0.0, None)?;
    unpad_sequence(&padded, &lengths, true)
}
