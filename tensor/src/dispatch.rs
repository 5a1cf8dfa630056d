//! The one path every computation takes: a [`Prim`] applied to input tensors.
//!
//! `apply` checks that the inputs share a device, locks their storages, hands the prim to the
//! device's backend and wraps the outputs as tensors. This is the place autograd records graph nodes
//! and tracing records program ops, so that every op is seen by both.

use std::sync::Arc;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, Device, Error, Layout, Result, Shape};
use smallvec::SmallVec;

use crate::autograd::record;
use crate::storage::{Storage, StorageCell};
use crate::Tensor;

/// Runs `prim` on `inputs` (all on `device`) and returns its outputs.
pub(crate) fn apply(prim: &Prim, inputs: &[&Tensor], device: Device) -> Result<Vec<Tensor>> {
    Ok(run(prim, inputs, device, None)?.into_vec())
}

/// The outputs of one prim; inline, since most prims have one or two.
type Outputs<T> = SmallVec<[T; 2]>;

/// [`apply`], with the (contiguous) outputs then seen with other shapes of the same sizes, as one
/// recorded op: a reduction without keepdim records one `SumBackward` node, not a sum and a view.
pub(crate) fn apply_reshaped(
    prim: &Prim,
    inputs: &[&Tensor],
    device: Device,
    view_shapes: Option<&[Vec<usize>]>,
) -> Result<Vec<Tensor>> {
    Ok(run(prim, inputs, device, view_shapes)?.into_vec())
}

/// [`apply_reshaped`] without allocating the list of outputs: this is the path of every op, so a
/// tiny op's cost is mostly what happens here.
fn run(
    prim: &Prim,
    inputs: &[&Tensor],
    device: Device,
    view_shapes: Option<&[Vec<usize>]>,
) -> Result<Outputs<Tensor>> {
    if let Some(t) = inputs.iter().find(|t| t.device() != device) {
        return Err(Error::msg(format!(
            "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
            device,
            t.device()
        )));
    }
    if device == Device::Cpu && inputs.len() <= 2 && view_shapes.is_none() {
        return run_cpu_small(prim, inputs);
    }

    // Lock each distinct storage once (an input may appear twice, as in `x * x`), in address order
    // (as `write_into` does) so that concurrent ops cannot deadlock.
    let mut cells: SmallVec<[&Arc<StorageCell>; 4]> = SmallVec::new();
    for t in inputs {
        if !cells.iter().any(|c| Arc::ptr_eq(c, t.storage())) {
            cells.push(t.storage());
        }
    }
    if cells.len() > 1 {
        cells.sort_unstable_by_key(|c| Arc::as_ptr(c));
    }
    let mut guards: SmallVec<[_; 4]> = SmallVec::new();
    for c in &cells {
        guards.push(c.read());
    }
    // Input `i`'s storage, through the guard of its cell.
    let storage_of = |t: &Tensor| -> &Storage {
        let i = cells.iter().position(|c| Arc::ptr_eq(c, t.storage())).expect("every input's cell is listed");
        &guards[i]
    };
    let outputs: Outputs<Storage> = match device {
        Device::Cpu => {
            let mut args: SmallVec<[(&CpuStorage, &Layout); 4]> = SmallVec::new();
            for t in inputs {
                match storage_of(t) {
                    Storage::Cpu(s) => args.push((s, t.layout())),
                    other => return Err(misplaced(other, device)),
                }
            }
            run_on_cpu(prim, &args)?
        }
        Device::Xla(_) | Device::Tpu(_) => match prim {
            // No input to take the device from: the runtime creates it on `device`.
            Prim::Full { shape, value, dtype } => {
                smallvec::smallvec![Storage::Xla(XlaStorage::full(shape, *value, *dtype, device)?)]
            }
            _ => {
                let mut args: SmallVec<[(&XlaStorage, &Layout); 4]> = SmallVec::new();
                for t in inputs {
                    match storage_of(t) {
                        Storage::Xla(s) => args.push((s, t.layout())),
                        other => return Err(misplaced(other, device)),
                    }
                }
                XlaStorage::execute(prim, &args)?.into_iter().map(Storage::Xla).collect()
            }
        },
    };
    drop(guards);
    finish(prim, inputs, outputs, view_shapes)
}

/// Wraps a prim's output storages as tensors (checking their sizes) and records the op for autograd.
fn finish(
    prim: &Prim,
    inputs: &[&Tensor],
    outputs: Outputs<Storage>,
    view_shapes: Option<&[Vec<usize>]>,
) -> Result<Outputs<Tensor>> {
    if view_shapes.is_none() && outputs.len() == 1 && preserves_shape(prim) && !inputs.is_empty() {
        let storage = outputs.into_iter().next().expect("one output");
        return Ok(smallvec::smallvec![finish_one(prim, inputs, storage)?]);
    }
    let lens: SmallVec<[usize; 2]> = outputs.iter().map(Storage::len).collect();
    let out_shapes = output_shapes(prim, inputs, &lens);
    for (shape, &len) in out_shapes.iter().zip(&lens) {
        if shape.checked_numel()? != len {
            return Err(Error::msg(format!(
                "{}: the backend returned {len} elements for an output of shape {shape:?}",
                prim.name()
            )));
        }
    }
    let (outputs, prim_dims): (Outputs<Tensor>, _) = match view_shapes {
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
                Some(out_shapes.into_iter().map(Shape::into_dims).collect()),
            )
        }
    };
    if record::needs_recording(inputs) {
        record::record_prim(prim, inputs, &outputs, prim_dims);
    }
    Ok(outputs)
}

/// [`run`] for the commonest ops: on the CPU, with one or two inputs, outputs not reshaped.
fn run_cpu_small(prim: &Prim, inputs: &[&Tensor]) -> Result<Outputs<Tensor>> {
    let outputs: Outputs<Storage> = match *inputs {
        [] => run_on_cpu(prim, &[])?,
        [a] => {
            let g = a.storage().read();
            run_on_cpu(prim, &[(cpu(&g)?, a.layout())])?
        }
        [a, b] => {
            with_two_read(a, b, |sa, sb| run_on_cpu(prim, &[(cpu(sa)?, a.layout()), (cpu(sb)?, b.layout())]))?
        }
        _ => unreachable!("at most two inputs"),
    };
    finish(prim, inputs, outputs, None)
}

/// The CPU storage behind a guard.
fn cpu(s: &Storage) -> Result<&CpuStorage> {
    match s {
        Storage::Cpu(s) => Ok(s),
        other => Err(misplaced(other, Device::Cpu)),
    }
}

/// Runs `prim` on CPU storages, single-output prims without the backend's output list.
fn run_on_cpu(prim: &Prim, args: &[(&CpuStorage, &Layout)]) -> Result<Outputs<Storage>> {
    oom_as_error(|| {
        Ok(match CpuStorage::execute_single(prim, args) {
            Some(out) => smallvec::smallvec![Storage::Cpu(out?)],
            None => CpuStorage::execute(prim, args)?.into_iter().map(Storage::Cpu).collect(),
        })
    })
}

/// torch's out-of-memory error unless the address space for `bytes` can be reserved now: a probe
/// for buffers built outside the pool (creation functions, index tables), which touches no memory
/// (a map and an unmap).
pub(crate) fn check_allocatable(bytes: usize) -> Result<()> {
    if bytes <= isize::MAX as usize && Vec::<u8>::new().try_reserve_exact(bytes).is_ok() {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{}: you tried to allocate {bytes} bytes.",
        oxtorch_backend_cpu::pool::OUT_OF_MEMORY
    )))
}

/// Runs a cpu kernel, returning the buffer pool's out-of-memory panic (torch's "DefaultCPUAllocator:
/// not enough memory" error, raised where a kernel allocates its output) as that error, so that a
/// result too large for the machine is an `Err` of the op rather than a panic through the caller.
/// Other panics (bugs) propagate. The kernels only read their inputs, so nothing is left half
/// written.
fn oom_as_error<R>(kernel: impl FnOnce() -> Result<R>) -> Result<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(kernel)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or_default();
            if message.starts_with(oxtorch_backend_cpu::pool::OUT_OF_MEMORY) {
                Err(Error::msg(message.to_string()))
            } else {
                std::panic::resume_unwind(payload)
            }
        }
    }
}

/// Runs a single-output prim.
pub(crate) fn apply1(prim: &Prim, inputs: &[&Tensor], device: Device) -> Result<Tensor> {
    if let [a, rest @ ..] = inputs {
        if device == Device::Cpu
            && rest.len() <= 1
            && preserves_shape(prim)
            && inputs.iter().all(|t| t.device() == Device::Cpu)
        {
            // The path of a tiny elementwise op: no output lists at all.
            let out = match rest {
                [] => {
                    let g = a.storage().read();
                    execute_one(prim, &[(cpu(&g)?, a.layout())])?
                }
                [b] => with_two_read(a, b, |sa, sb| {
                    execute_one(prim, &[(cpu(sa)?, a.layout()), (cpu(sb)?, b.layout())])
                })?,
                _ => unreachable!("at most two inputs"),
            };
            return finish_one(prim, inputs, Storage::Cpu(out));
        }
    }
    Ok(run(prim, inputs, device, None)?.swap_remove(0))
}

/// Runs a single-output prim on CPU storages. Outputs of at least [`LARGE_OUTPUT`] elements run
/// under [`oom_as_error`] (an allocation the machine cannot hold is the op's error); smaller ones,
/// the tiny ops whose overhead is measured in nanoseconds, run as they are.
fn execute_one(prim: &Prim, args: &[(&CpuStorage, &Layout)]) -> Result<CpuStorage> {
    let kernel = || CpuStorage::execute_single(prim, args).expect("a shape-preserving prim has one output");
    if args[0].1.numel() < LARGE_OUTPUT {
        kernel()
    } else {
        oom_as_error(kernel)
    }
}

/// The element count from which [`execute_one`] guards the output's allocation.
const LARGE_OUTPUT: usize = 1 << 24;

/// Calls `f` with the storages of `a` and `b` read-locked: once when they share a storage, else in
/// address order (as `run` and `write_into` lock), so that concurrent ops cannot deadlock.
fn with_two_read<R>(a: &Tensor, b: &Tensor, f: impl FnOnce(&Storage, &Storage) -> R) -> R {
    if a.shares_storage(b) {
        let g = a.storage().read();
        return f(&g, &g);
    }
    let (ga, gb) = if Arc::as_ptr(a.storage()) < Arc::as_ptr(b.storage()) {
        let ga = a.storage().read();
        (ga, b.storage().read())
    } else {
        let gb = b.storage().read();
        (a.storage().read(), gb)
    };
    f(&ga, &gb)
}

/// Wraps the one output of a shape-preserving prim as a tensor and records the op for autograd.
fn finish_one(prim: &Prim, inputs: &[&Tensor], storage: Storage) -> Result<Tensor> {
    let shape = inputs[0].shape();
    if shape.numel() != storage.len() {
        return Err(Error::msg(format!(
            "{}: the backend returned {} elements for an output of shape {shape:?}",
            prim.name(),
            storage.len()
        )));
    }
    let out = Tensor::from_storage(storage, shape.clone());
    if record::needs_recording(inputs) {
        record::record_prim(prim, inputs, std::slice::from_ref(&out), None);
    }
    Ok(out)
}

/// The shapes of `prim`'s outputs: the first input's for the shape-preserving prims (whose inputs
/// share one shape), without the allocations of the general rule.
fn output_shapes(prim: &Prim, inputs: &[&Tensor], lens: &[usize]) -> Outputs<Shape> {
    if preserves_shape(prim) && !inputs.is_empty() {
        return smallvec::smallvec![inputs[0].shape().clone()];
    }
    let dims: SmallVec<[&[usize]; 4]> = inputs.iter().map(|t| t.dims()).collect();
    prim.output_shapes(&dims, lens).into_iter().map(Shape::new).collect()
}

/// True for prims whose one output has the shape of their first input (and whose inputs share one
/// shape).
fn preserves_shape(prim: &Prim) -> bool {
    matches!(prim, Prim::Unary(_) | Prim::Binary(_) | Prim::Compare(_) | Prim::Cast(_) | Prim::Copy)
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
