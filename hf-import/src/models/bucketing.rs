//! Sequence-length bucketing on devices that compile a program per shape (xla, tpu).
//!
//! `forward` and sentence embeddings pad the sequence to a [`bucket`] (16, 32, ..., 512, then
//! multiples of 512) and mask the padding: every length of a bucket runs the same programs, so the
//! lengths 1 to 512 compile at most 6 forward programs, and a later process finds them in the
//! persistent cache. Outputs along the sequence are cut back to the real length. On the cpu
//! nothing is padded.
//!
//! Padding is invisible to the real tokens: an encoder's attention never reads a masked key, and a
//! decoder's causal attention never reads a later position. Padding slots hold the model's padding
//! token (RoBERTa counts positions over non-padding tokens, so they add no position), and an
//! encoder's width never passes its table of learned positions.

use oxtorch_backend_tpu::xla::{Mode, ModeGuard};
use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::Result;
use crate::layers::{bucket, fixed_shapes};

/// The width `seq` tokens are padded to on `device`: `seq` on the cpu, else its bucket, capped at
/// `max_positions` (never below `seq`).
pub(crate) fn padded_width(device: Device, seq: usize, max_positions: Option<usize>) -> usize {
    if !fixed_shapes(device) || seq == 0 {
        return seq;
    }
    let width = bucket(seq);
    max_positions.map_or(width, |m| width.min(m)).max(seq)
}

/// `t` (`[batch, seq]`, integer) right-padded with `value` to `[batch, width]`, as int64.
pub(crate) fn pad_columns(t: &Tensor, width: usize, value: i64) -> Result<Tensor> {
    let t = t.to_dtype(DType::I64)?;
    let dims = t.dims().to_vec();
    if dims.len() != 2 || dims[1] >= width {
        return Ok(t);
    }
    let pad = Tensor::full([dims[0], width - dims[1]], value, (DType::I64, t.device()))?;
    Ok(Tensor::cat(&[&t, &pad], 1)?)
}

/// `t` (`[batch, ...]`) on `device`, its batch marked dynamic there when the device compiles
/// programs per shape (`Tensor::mark_dynamic`): the rows are padded to a power of two, so every
/// batch size of a bucket runs the same programs (1 to 64 texts: 7 buckets). On the cpu, `t`
/// moved.
pub(crate) fn batch_on(t: &Tensor, device: Device) -> Result<Tensor> {
    let t = t.to(device)?;
    match t.dims().first() {
        Some(&batch) if fixed_shapes(device) && batch > 0 => {
            Ok(t.mark_dynamic(0, batch.next_power_of_two())?)
        }
        _ => Ok(t),
    }
}

/// Position ids `[batch, width]`: `0..seq` in every row, then `seq - 1` repeated over the padding.
pub(crate) fn positions_to_width(batch: usize, seq: usize, width: usize, device: Device) -> Result<Tensor> {
    let row: Vec<i64> = (0..width).map(|c| c.min(seq.saturating_sub(1)) as i64).collect();
    Ok(Tensor::from_vec(row, [1, width])?.expand([batch, width])?.contiguous()?.to(device)?)
}

/// An attention mask `[batch, width]`: `mask` (all ones when absent) followed by zeros.
pub(crate) fn padded_mask(
    mask: Option<&Tensor>,
    batch: usize,
    seq: usize,
    width: usize,
    device: Device,
) -> Result<Tensor> {
    match mask {
        Some(m) => pad_columns(m, width, 0),
        None => {
            let ones = Tensor::ones([batch, seq], (DType::I64, device))?;
            pad_columns(&ones, width, 0)
        }
    }
}

/// `t` cut back to `seq` along `dim` when it is a per-token output (`[batch, width, ...]` with
/// `dim` 1; Gemma 3n's hidden streams `[n, batch, width, hidden]` with `dim` 2).
pub(crate) fn trim(t: Tensor, seq: usize, width: usize, dim: usize) -> Result<Tensor> {
    if width != seq && t.dims().len() >= dim + 2 && t.dims()[dim] == width {
        Ok(t.narrow(dim as isize, 0, seq)?)
    } else {
        Ok(t)
    }
}

/// On a compiling device, records the ops of one forward pass into a single fused program (run
/// when its outputs are read), unless `OXTORCH_XLA_MODE` chose a mode; nothing on the cpu.
pub(crate) fn fuse_forward(device: Device) -> Option<ModeGuard> {
    (fixed_shapes(device) && std::env::var_os("OXTORCH_XLA_MODE").is_none())
        .then(|| ModeGuard::new(Mode::Fused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_buckets_on_compiling_devices_only() {
        let xla = Device::Xla(0);
        assert_eq!(padded_width(Device::Cpu, 7, None), 7);
        assert_eq!(padded_width(xla, 7, None), 16);
        assert_eq!(padded_width(xla, 300, None), 512);
        assert_eq!(padded_width(xla, 300, Some(400)), 400);
        assert_eq!(padded_width(xla, 600, Some(512)), 600);
        assert_eq!(padded_width(xla, 0, None), 0);
    }

    #[test]
    fn padding_and_trimming() -> Result<()> {
        let ids = Tensor::from_vec(vec![5i64, 6, 7, 8], [2, 2])?;
        assert_eq!(pad_columns(&ids, 4, 1)?.to_vec2::<i64>()?, vec![vec![5, 6, 1, 1], vec![7, 8, 1, 1]]);
        let mask = padded_mask(None, 2, 2, 3, Device::Cpu)?;
        assert_eq!(mask.to_vec2::<i64>()?, vec![vec![1, 1, 0], vec![1, 1, 0]]);
        let h = Tensor::zeros([2, 4, 3], ())?;
        assert_eq!(trim(h, 2, 4, 1)?.dims(), [2, 2, 3]);
        let pooled = Tensor::zeros([2, 4], ())?;
        assert_eq!(trim(pooled, 2, 4, 1)?.dims(), [2, 4]);
        let streams = Tensor::zeros([3, 2, 4, 5], ())?;
        assert_eq!(trim(streams, 2, 4, 2)?.dims(), [3, 2, 2, 5]);
        Ok(())
    }
}
