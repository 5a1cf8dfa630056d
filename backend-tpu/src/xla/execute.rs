//! Running one prim eagerly: look the program up in the cache (compiling it on a miss), launch it
//! on the inputs' flat buffers, and wrap the flat outputs. Prims without a lowering, and prims
//! whose output shape depends on the data, run on the host instead.

use std::sync::Arc;
use std::time::Instant;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::ops::{IndexOp, Prim, SortOp};
use oxtorch_core::{BackendStorage, DType, Device, Error, Layout, Result, Scalar};
use smallvec::SmallVec;

use super::cache::{self, Compiled, Input, Op, Program};
use super::storage::XlaStorage;
use super::{lazy, materialize, metrics, pjrt_err, program, registry, transfer};
use crate::compiler::{self, CompileSource};
use crate::pjrt::{Buffer, CompileOptions, ElementType, Error as PjrtError};

/// The key inputs of `inputs`, inline for up to 4.
pub(crate) fn key_inputs<'a>(inputs: &[(&XlaStorage, &'a Layout)]) -> SmallVec<[Input<'a>; 4]> {
    inputs.iter().map(|(s, l)| Input { dtype: s.dtype, len: s.len, layout: l }).collect()
}

/// The device all inputs are on, or torch's error.
fn common_device(inputs: &[(&XlaStorage, &Layout)]) -> Result<Device> {
    let device = inputs
        .first()
        .map(|(s, _)| s.device)
        .ok_or_else(|| Error::msg("the xla runtime runs ops without inputs through XlaStorage::full"))?;
    if let Some((s, _)) = inputs.iter().find(|(s, _)| s.device != device) {
        return Err(Error::msg(format!(
            "Expected all tensors to be on the same device, but found at least two devices, {device} and {}!",
            s.device
        )));
    }
    Ok(device)
}

/// Whether a prim's output shape depends on its input values (these always run on the host).
fn data_dependent(prim: &Prim) -> bool {
    matches!(prim, Prim::Index(IndexOp::Nonzero) | Prim::Sort(SortOp::Unique { .. }))
}

/// Compiles `text` for `device` (or loads it from the persistent cache), counting it in the metrics.
/// `what` names the op in `OXTORCH_LOG_COMPILES` lines.
pub(crate) fn compile(
    text: &str,
    device: Device,
    out_dtypes: Vec<DType>,
    what: &str,
) -> Result<Arc<Program>> {
    compile_explained(text, device, out_dtypes, what, || compiler::explain_recompile(what, text))
}

/// [`compile`] with the reason for the compile given by `why` (called only when logging).
pub(crate) fn compile_explained(
    text: &str,
    device: Device,
    out_dtypes: Vec<DType>,
    what: &str,
    why: impl FnOnce() -> String,
) -> Result<Arc<Program>> {
    let (client, pjrt_device) = registry::device(device)?;
    let options = CompileOptions::for_device(i64::from(pjrt_device.id()));
    let (exe, source) = compiler::compile(client, text, &options, what, why)
        .map_err(|e| Error::msg(format!("the xla backend could not compile a program: {e}\n{text}")))?;
    match source {
        CompileSource::Compiled(took) => metrics::record_compile(took),
        CompileSource::DiskCache(took) => metrics::record_persistent_cache_hit(took),
    }
    Ok(Arc::new(Program { exe, out_dtypes }))
}

/// The cached program for a key, built by `build` on a miss (`Unsupported` → run on the host).
pub(crate) fn cached(
    op: Op<'_>,
    inputs: &[Input<'_>],
    device: Device,
    build: impl FnOnce() -> crate::pjrt::Result<(String, Vec<DType>)>,
) -> Result<Compiled> {
    if let Some(hit) = cache::lookup(op, inputs, device) {
        metrics::record_cache_hit();
        return Ok(hit);
    }
    let compiled = match build() {
        Ok((text, out_dtypes)) => match compile(&text, device, out_dtypes, op.name()) {
            Ok(program) => Compiled::Exe(program),
            Err(e) => {
                // A program the plugin refuses is a backend bug; the op still gives the right
                // result on the host (counted as a fallback), and the bug is reported once per key.
                let message: String = e.to_string().chars().take(2000).collect();
                eprintln!(
                    "oxtorch: the xla backend could not compile {}; running it on the host: {message}",
                    op.name()
                );
                Compiled::Host
            }
        },
        Err(PjrtError::Unsupported(_)) => Compiled::Host,
        Err(e) => return Err(pjrt_err(e)),
    };
    cache::insert(op, inputs, device, compiled.clone());
    Ok(compiled)
}

/// Launches `program` on `args` without waiting for it: PJRT orders later work on the outputs
/// after it, and reading an output back waits for it.
pub(crate) fn launch(program: &Program, args: &[&Buffer], device: Device) -> Result<Vec<XlaStorage>> {
    let start = Instant::now();
    let (outputs, _done) = program.exe.execute_async(args).map_err(pjrt_err)?;
    metrics::record_execute(start.elapsed());
    Ok(outputs
        .into_iter()
        .zip(&program.out_dtypes)
        .map(|(buffer, &dtype)| XlaStorage::from_buffer(buffer, dtype, device))
        .collect())
}

/// The runtime storage offsets of the inputs that have one, as 0-d integer buffers, in input order
/// (the trailing arguments of every program, see `cache::Input::has_offset`).
pub(crate) fn offset_buffers(inputs: &[Input<'_>], device: Device) -> Result<SmallVec<[Buffer; 2]>> {
    if !inputs.iter().any(Input::has_offset) {
        return Ok(SmallVec::new());
    }
    let (client, pjrt_device) = registry::device(device)?;
    inputs
        .iter()
        .filter(|i| i.has_offset())
        .map(|i| {
            let offset = i.layout.offset();
            if materialize::index_type(i.len) == ElementType::S32 {
                transfer::upload(client, pjrt_device, &(offset as i32).to_le_bytes(), DType::I32, &[])
            } else {
                transfer::upload(client, pjrt_device, &(offset as i64).to_le_bytes(), DType::I64, &[])
            }
        })
        .collect()
}

/// The dtypes of a program's outputs, read from its text's signature.
fn out_dtypes(text: &str) -> crate::pjrt::Result<Vec<DType>> {
    let sig = crate::pjrt::parse_main_signature(text)?;
    sig.results
        .iter()
        .map(|t| {
            t.element_type.dtype().ok_or_else(|| {
                PjrtError::Unsupported(format!("the program returns {t}, which has no oxtorch dtype"))
            })
        })
        .collect()
}

/// Runs `prim` on device inputs; the outputs stay on the device.
pub(crate) fn execute(prim: &Prim, inputs: &[(&XlaStorage, &Layout)]) -> Result<Vec<XlaStorage>> {
    if let Prim::Full { shape, value, dtype } = prim {
        let device = common_device(inputs)?;
        return Ok(vec![full(shape, *value, *dtype, device)?]);
    }
    if inputs.len() != prim.arity() {
        return Err(Error::msg(format!(
            "{}: expected {} inputs but got {}",
            prim.name(),
            prim.arity(),
            inputs.len()
        )));
    }
    let device = common_device(inputs)?;
    if data_dependent(prim) {
        return host_fallback(prim, inputs, device);
    }
    let keys = key_inputs(inputs);
    if lazy::deferring() {
        if let Some(outputs) = lazy::record_prim(prim, inputs, &keys, device)? {
            return Ok(outputs);
        }
        return host_fallback(prim, inputs, device);
    }
    let compiled = cached(Op::Prim(prim), &keys, device, || {
        let text = program::prim_program(prim, &keys, super::host_kernels::enabled(device))?;
        let dtypes = out_dtypes(&text)?;
        Ok((text, dtypes))
    })?;
    match compiled {
        Compiled::Exe(p) => {
            let offsets = offset_buffers(&keys, device)?;
            let buffers: SmallVec<[Arc<Buffer>; 4]> =
                inputs.iter().map(|(s, _)| s.exact_buffer()).collect::<Result<_>>()?;
            let mut args: SmallVec<[&Buffer; 6]> = buffers.iter().map(|b| &**b).collect();
            args.extend(offsets.iter());
            launch(&p, &args, device)
        }
        Compiled::Host => host_fallback(prim, inputs, device),
    }
}

/// A 0-d buffer holding `value` as `dtype` (torch's casting rules), on `device`.
pub(crate) fn upload_scalar(value: Scalar, dtype: DType, device: Device) -> Result<Buffer> {
    let (client, pjrt_device) = registry::device(device)?;
    let host = CpuStorage::full(dtype, 1, value);
    transfer::upload(client, pjrt_device, host.as_bytes(), dtype, &[])
}

/// A flat buffer of `shape`'s element count, every element `value`. A one-element full (how
/// scalar operands such as `x + 2.5` reach a device) is uploaded directly; a larger one is a program taking the value as input, so a new value never
/// compiles again.
pub(crate) fn full(shape: &[usize], value: Scalar, dtype: DType, device: Device) -> Result<XlaStorage> {
    let numel = oxtorch_core::checked_numel(shape)?;
    if lazy::deferring() {
        return lazy::record_full(numel, value, dtype, device);
    }
    if numel == 1 {
        let (client, pjrt_device) = registry::device(device)?;
        let host = CpuStorage::full(dtype, 1, value);
        let buffer = transfer::upload(client, pjrt_device, host.as_bytes(), dtype, &[1])?;
        return Ok(XlaStorage::from_buffer(buffer, dtype, device));
    }
    let scalar = upload_scalar(value, dtype, device)?;
    let prim = Prim::Full { shape: shape.to_vec(), value, dtype };
    let compiled =
        cached(Op::Prim(&prim), &[], device, || Ok((program::full_program(numel, dtype), vec![dtype])))?;
    match compiled {
        Compiled::Exe(p) => Ok(launch(&p, &[&scalar], device)?.swap_remove(0)),
        Compiled::Host => Err(Error::msg("full: the xla backend has no program for it")),
    }
}

/// Runs `prim` on the host: downloads the inputs, runs the CPU kernel, uploads the outputs.
/// Counted per prim in the metrics.
pub(crate) fn host_fallback(
    prim: &Prim,
    inputs: &[(&XlaStorage, &Layout)],
    device: Device,
) -> Result<Vec<XlaStorage>> {
    metrics::record_fallback(prim.name());
    let host: Vec<CpuStorage> = inputs.iter().map(|(s, _)| s.to_cpu()).collect::<Result<_>>()?;
    let args: Vec<(&CpuStorage, &Layout)> = host.iter().zip(inputs).map(|(h, (_, l))| (h, *l)).collect();
    CpuStorage::execute(prim, &args)?.iter().map(|out| XlaStorage::from_cpu(out, device)).collect()
}
