//! `torch.nn.utils.rnn`: batching variable-length sequences for the recurrent layers, padded
//! ([`pad_sequence`]) or packed ([`PackedSequence`], [`pack_padded_sequence`], ...).

use oxtorch_tensor::{Error, Result, Scalar, Tensor};

pub use super::packed::{
    invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence, unpack_sequence,
    unpad_sequence, PackedSequence, SequenceLengths,
};

/// The broadcast of `src` into a destination of shape `dst`, as `dst.copy_(src)` checks it in
/// torch: the sizes must broadcast (torch's `infer_size` message, tensor a the destination), and
/// the broadcast shape must be the destination's.
fn check_copy_shape(dst: &[usize], src: &[usize]) -> Result<()> {
    let ndim = dst.len().max(src.len());
    let mut shape = vec![0; ndim];
    for i in (0..ndim).rev() {
        let offset = ndim - 1 - i;
        let a = if offset < dst.len() { dst[dst.len() - 1 - offset] } else { 1 };
        let b = if offset < src.len() { src[src.len() - 1 - offset] } else { 1 };
        if a != b && a != 1 && b != 1 {
            return Err(Error::BroadcastMismatch { a, b, dim: i });
        }
        shape[i] = if a == 1 { b } else { a };
    }
    if shape != dst {
        return Err(Error::shape(format!(
            "output with shape {dst:?} doesn't match the broadcast shape {shape:?}"
        )));
    }
    Ok(())
}

/// torch's `pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right")`:
/// stacks sequences of shapes `[L_i, *]` into `[T, B, *]` (`[B, T, *]` with `batch_first`), `T` the
/// longest `L_i`, filling the rest of each shorter sequence with `padding_value` after it
/// (`"right"`) or before it (`"left"`).
///
/// As in torch, the output has the first sequence's trailing dims, dtype and device; the others
/// are cast to them and broadcast to `[L_i, *]` (with torch's errors when they do not fit), and
/// the gradient reaches every sequence.
pub fn pad_sequence(
    sequences: &[Tensor],
    batch_first: bool,
    padding_value: f64,
    padding_side: &str,
) -> Result<Tensor> {
    let Some(first) = sequences.first() else {
        return Err(Error::msg("received an empty list of sequences"));
    };
    if padding_side != "left" && padding_side != "right" {
        return Err(Error::msg(format!(
            "Expected padding_side to be one of left or right, but got {padding_side}."
        )));
    }
    if first.rank() == 0 {
        return Err(Error::shape("ArrayRef: invalid slice, N = 1; size = 0"));
    }
    let trailing = &first.dims()[1..];
    let mut max_len = 0;
    for s in sequences {
        let Some(&len) = s.dims().first() else {
            return Err(Error::shape("Dimension specified as 0 but tensor has no dimensions"));
        };
        max_len = max_len.max(len);
    }
    let (dtype, device) = (first.dtype(), first.device());
    Scalar::Float(padding_value).check_fits(dtype)?;
    let left = padding_side == "left";
    let mut padded = Vec::with_capacity(sequences.len());
    for s in sequences {
        let len = s.dims()[0];
        let mut dst = vec![len];
        dst.extend_from_slice(trailing);
        check_copy_shape(&dst, s.dims())?;
        let x = if s.device() == device { s.clone() } else { s.to(device)? };
        let x = x.to_dtype(dtype)?.broadcast_to(&dst)?;
        let fill = max_len - len;
        padded.push(if fill == 0 {
            x
        } else {
            let mut shape = dst.clone();
            shape[0] = fill;
            let block = Tensor::full(shape, padding_value, first.same_options())?;
            let parts = if left { [&block, &x] } else { [&x, &block] };
            Tensor::cat(&parts, 0)?
        });
    }
    let refs: Vec<&Tensor> = padded.iter().collect();
    Tensor::stack(&refs, if batch_first { 0 } else { 1 })
}
