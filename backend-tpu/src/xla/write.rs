//! In-place writes through a view: the new flat buffer is computed by a program (a
//! `dynamic_update_slice` for a contiguous view, a `select` over an `iota`-derived mask otherwise)
//! and replaces the storage's buffer. Views that overlap themselves, and casts without a lowering,
//! are written on the host, with the CPU backend's semantics.

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::{BackendStorage, DType, Error, Layout, Result, Scalar};

use super::cache::{Compiled, Input, Op};
use super::execute::{cached, launch, offset_buffers, upload_scalar};
use super::storage::XlaStorage;
use super::{lazy, metrics, program};

fn input<'a>(s: &XlaStorage, layout: &'a Layout) -> Input<'a> {
    Input { dtype: s.dtype, len: s.len, layout }
}

/// The layout without its stride-0 dims (for a fill, every copy of an element gets one value).
fn without_broadcast(layout: &Layout) -> Result<Layout> {
    let (dims, strides): (Vec<usize>, Vec<usize>) = layout
        .dims()
        .iter()
        .zip(layout.strides())
        .filter(|(&n, &s)| s != 0 || n <= 1)
        .map(|(&n, &s)| (n, s))
        .unzip();
    Layout::new(dims, strides, layout.offset())
}

/// `dst[dst_layout] = src[src_layout]`, cast to dst's dtype.
pub(crate) fn copy_into(
    dst: &mut XlaStorage,
    dst_layout: &Layout,
    src: &XlaStorage,
    src_layout: &Layout,
) -> Result<()> {
    if dst.device != src.device {
        return Err(Error::msg(format!(
            "copy_: expected both tensors on the same device, got {} and {}",
            dst.device, src.device
        )));
    }
    if dst_layout.numel() == 0 {
        return Ok(());
    }
    if dst_layout.may_overlap() {
        return host_write(dst, "copy_", |host| {
            let src_host = src.to_cpu()?;
            host.copy_from(dst_layout, &src_host, src_layout)
        });
    }
    if lazy::deferring() {
        return lazy::record_copy_into(dst, dst_layout, src, src_layout);
    }
    let keys = [input(dst, dst_layout), input(src, src_layout)];
    let dtype = dst.dtype;
    let compiled = cached(Op::CopyInto, &keys, dst.device, || {
        Ok((program::copy_program(keys[0], keys[1])?, vec![dtype]))
    })?;
    match compiled {
        Compiled::Exe(p) => {
            let offsets = offset_buffers(&keys, dst.device)?;
            let (dst_buffer, src_buffer) = (dst.exact_buffer()?, src.exact_buffer()?);
            let mut args = vec![&*dst_buffer, &*src_buffer];
            args.extend(offsets.iter());
            replace(dst, launch(&p, &args, dst.device)?)
        }
        Compiled::Host => host_write(dst, "copy_", |host| {
            let src_host = src.to_cpu()?;
            host.copy_from(dst_layout, &src_host, src_layout)
        }),
    }
}

/// `dst[layout] = value`, converted with torch's casting rules.
pub(crate) fn fill(dst: &mut XlaStorage, layout: &Layout, value: Scalar) -> Result<()> {
    if layout.numel() == 0 {
        return Ok(());
    }
    let layout = without_broadcast(layout)?;
    if layout.may_overlap() {
        return host_write(dst, "fill_", |host| host.fill(&layout, value));
    }
    if lazy::deferring() {
        return lazy::record_fill(dst, &layout, value);
    }
    let keys = [input(dst, &layout)];
    let dtype = dst.dtype;
    let compiled =
        cached(Op::FillInto, &keys, dst.device, || Ok((program::fill_program(keys[0]), vec![dtype])))?;
    match compiled {
        Compiled::Exe(p) => {
            let scalar = upload_scalar(value, dtype, dst.device)?;
            let offsets = offset_buffers(&keys, dst.device)?;
            let dst_buffer = dst.exact_buffer()?;
            let mut args = vec![&*dst_buffer, &scalar];
            args.extend(offsets.iter());
            replace(dst, launch(&p, &args, dst.device)?)
        }
        Compiled::Host => host_write(dst, "fill_", |host| host.fill(&layout, value)),
    }
}

fn replace(dst: &mut XlaStorage, mut outputs: Vec<XlaStorage>) -> Result<()> {
    let new = outputs.pop().ok_or_else(|| Error::msg("copy_: the write program returned nothing"))?;
    if new.len != dst.len || new.dtype != dst.dtype {
        return Err(Error::msg("copy_: the write program returned a buffer of another size"));
    }
    dst.data = new.data;
    Ok(())
}

/// Downloads `dst`, applies `write` with the CPU backend, and uploads the result.
fn host_write(
    dst: &mut XlaStorage,
    name: &'static str,
    write: impl FnOnce(&mut CpuStorage) -> Result<()>,
) -> Result<()> {
    metrics::record_fallback(name);
    let mut host = dst.to_cpu()?;
    write(&mut host)?;
    let dtype: DType = host.dtype();
    let new = XlaStorage::from_cpu(&host, dst.device)?;
    debug_assert_eq!(dtype, dst.dtype);
    dst.data = new.data;
    Ok(())
}
