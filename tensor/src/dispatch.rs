//! The one path every computation takes: a [`Prim`] applied to input tensors.
//!
//! `apply` checks that the inputs share a device, locks their storages, hands the prim to the
//! device's backend and wraps the outputs as tensors. This is the place autograd records graph nodes
//! and tracing records program ops, so that every op is seen by both.

use std::sync::Arc;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, Device, Error, Layout, Result};
use smallvec::SmallVec;

use crate::autograd::record;
use crate::storage::{Storage, StorageCell};
use crate::Tensor;

/// Runs `prim` on `inputs` (all on `device`) and returns its outputs.
pub(crate) fn apply(prim: &Prim, inputs: &[&Tensor], device: Device) -> Result<Vec<Tensor>> {
    apply_reshaped(prim, inputs, device, None)
}

/// [`apply`], with the (contiguous) outputs then seen with other shapes of the same sizes, as one
/// recorded op: a reduction without keepdim records one `SumBackward` node, not a sum and a view.
pub(crate) fn apply_reshaped(
    prim: &Prim,
    inputs: &[&Tensor],
    device: Device,
    view_shapes: Option<&[Vec<usize>]>,
) -> Result<Vec<Tensor>> {
    if let Some(t) = inputs.iter().find(|t| t.device() != device) {
        return Err(Error::msg(format!(
            "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
            device,
            t.device()
        )));
    }

    // Lock each distinct storage once (an input may appear twice, as in `x * x`), in address order
    // (as `write_into` does) so that concurrent ops cannot deadlock.
    let mut cells: SmallVec<[&Arc<StorageCell>; 4]> = SmallVec::new();
    for t in inputs {
        if !cells.iter().any(|c| Arc::ptr_eq(c, t.storage())) {
            cells.push(t.storage());
        }
    }
    cells.sort_unstable_by_key(|c| Arc::as_ptr(c));
    let slot: SmallVec<[usize; 4]> = inputs
        .iter()
        .map(|t| {
            cells.iter().position(|c| Arc::ptr_eq(c, t.storage())).expect("every input's cell is listed")
        })
        .collect();
    let guards: SmallVec<[_; 4]> = cells.iter().map(|c| c.read()).collect();
    let outputs = match device {
        Device::Cpu => {
            let args = inputs
                .iter()
                .zip(&slot)
                .map(|(t, &i)| match &*guards[i] {
                    Storage::Cpu(s) => Ok((s, t.layout())),
                    other => Err(misplaced(other, device)),
                })
                .collect::<Result<SmallVec<[(&CpuStorage, &Layout); 4]>>>()?;
            CpuStorage::execute(prim, &args)?.into_iter().map(Storage::Cpu).collect::<Vec<_>>()
        }
        Device::Xla(_) | Device::Tpu(_) => match prim {
            // No input to take the device from: the runtime creates it on `device`.
            Prim::Full { shape, value, dtype } => {
                vec![Storage::Xla(XlaStorage::full(shape, *value, *dtype, device)?)]
            }
            _ => {
                let args = inputs
                    .iter()
                    .zip(&slot)
                    .map(|(t, &i)| match &*guards[i] {
                        Storage::Xla(s) => Ok((s, t.layout())),
                        other => Err(misplaced(other, device)),
                    })
                    .collect::<Result<SmallVec<[(&XlaStorage, &Layout); 4]>>>()?;
                XlaStorage::execute(prim, &args)?.into_iter().map(Storage::Xla).collect::<Vec<_>>()
            }
        },
    };
    drop(guards);
    let shapes: SmallVec<[&[usize]; 4]> = inputs.iter().map(|t| t.dims()).collect();
    let lens: SmallVec<[usize; 2]> = outputs.iter().map(Storage::len).collect();
    let out_shapes = prim.output_shapes(&shapes, &lens);
    for (shape, &len) in out_shapes.iter().zip(&lens) {
        if oxtorch_core::checked_numel(shape)? != len {
            return Err(Error::msg(format!(
                "{}: the backend returned {len} elements for an output of shape {shape:?}",
                prim.name()
            )));
        }
    }
    let (outputs, prim_dims): (Vec<Tensor>, _) = match view_shapes {
        None => (
            outputs.into_iter().zip(out_shapes).map(|(s, shape)| Tensor::from_storage(s, shape)).collect(),
            None,
        ),
        Some(shapes) => {
            for (shape, &len) in shapes.iter().zip(&lens) {
                if oxtorch_core::checked_numel(shape)? != len {
                    return Err(Error::msg(format!(
                        "{}: cannot view {len} elements as {shape:?}",
                        prim.name()
                    )));
                }
            }
            (
                outputs
                    .into_iter()
                    .zip(shapes)
                    .map(|(s, shape)| Tensor::from_storage(s, shape.clone()))
                    .collect(),
                Some(out_shapes),
            )
        }
    };
    if record::needs_recording(inputs) {
        record::record_prim(prim, inputs, &outputs, prim_dims);
    }
    Ok(outputs)
}

/// Runs a single-output prim.
pub(crate) fn apply1(prim: &Prim, inputs: &[&Tensor], device: Device) -> Result<Tensor> {
    Ok(apply(prim, inputs, device)?.swap_remove(0))
}

/// The error for a storage that is not on the device its tensor claims (an internal invariant).
fn misplaced(storage: &Storage, device: Device) -> Error {
    Error::msg(format!("internal error: a tensor on {device} holds a storage on {}", storage.device()))
}

/// Writes `src` (same shape as `dst`, any dtype) into `dst`'s elements in place and bumps the version.
pub(crate) fn write_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.device() != src.device() {
        return Err(Error::msg(format!(
            "copy_: expected both tensors on the same device, got {} and {}",
            dst.device(),
            src.device()
        )));
    }
    // A source that shares dst's storage is materialised first, so reads never see partial writes.
    let src = if dst.shares_storage(src) { apply1(&Prim::Copy, &[src], src.device())? } else { src.clone() };
    let (dcell, scell) = (dst.storage(), src.storage());
    // Lock in address order so that two threads copying in opposite directions cannot deadlock.
    let dst_first = Arc::as_ptr(dcell) < Arc::as_ptr(scell);
    let (mut d, s) = if dst_first {
        let d = dcell.write();
        (d, scell.read())
    } else {
        let s = scell.read();
        (dcell.write(), s)
    };
    match (&mut *d, &*s) {
        (Storage::Cpu(d), Storage::Cpu(s)) => d.copy_from(dst.layout(), s, src.layout())?,
        (Storage::Xla(d), Storage::Xla(s)) => d.copy_from(dst.layout(), s, src.layout())?,
        (d, s) => {
            return Err(Error::msg(format!(
                "copy_: expected both tensors on the same device, got {} and {}",
                d.device(),
                s.device()
            )))
        }
    }
    dcell.bump_version();
    Ok(())
}

/// Sets `dst`'s elements to `value` in place and bumps the version.
pub(crate) fn fill_in_place(dst: &Tensor, value: oxtorch_core::Scalar) -> Result<()> {
    let cell = dst.storage();
    match &mut *cell.write() {
        Storage::Cpu(s) => s.fill(dst.layout(), value)?,
        Storage::Xla(s) => s.fill(dst.layout(), value)?,
    }
    cell.bump_version();
    Ok(())
}
