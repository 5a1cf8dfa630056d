//! oxtorch's own CPU kernels inside XLA programs on the CPU plugin: matrix products run as
//! `stablehlo.custom_call`s to the CPU backend's gemm and matrix-vector kernels, registered with
//! the plugin through its FFI extension.
//!
//! Why: the CPU plugin's XLA emits a batch-1 product (every `linear` of a decode step) as a loop
//! fusion that reads its weight at 20–29 GB/s, where the CPU backend's kernel reads 37; and its
//! gemms trail the CPU backend's on this machine's 2 cores. A program for another platform (a TPU,
//! a GPU) keeps `dot_general`. `OXTORCH_XLA_HOST_KERNELS=0` turns the custom calls off.
//!
//! A product's operands arrive row-major; the target name says which of them the kernel reads
//! transposed (`_nt`: the right one, a `linear` weight), so no transposing copy is made.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use oxtorch_backend_cpu::{matmul_slices, SliceMatmul};
use oxtorch_core::{Device, DeviceKind, Layout};

use super::host_ffi::{self, BufferRef, Failure};
use super::registry;
use crate::pjrt::{ElementType, FfiHandler, Plugin};
use crate::stablehlo::host_matmul_target;

/// A float type a host product runs in: its XLA FFI data type and its name in target names.
trait HostFloat: SliceMatmul {
    const FFI_DTYPE: c_int;
    const NAME: &'static str;
}

impl HostFloat for f32 {
    const FFI_DTYPE: c_int = host_ffi::F32;
    const NAME: &'static str = "f32";
}

impl HostFloat for f64 {
    const FFI_DTYPE: c_int = host_ffi::F64;
    const NAME: &'static str = "f64";
}

/// The logical `[..., rows, cols]` view of a row-major buffer stored with `dims`, its last two
/// dims swapped when `transposed`.
fn view(dims: &[usize], transposed: bool) -> Result<Layout, Failure> {
    let r = dims.len();
    if r < 2 {
        return Err(Failure(format!("oxtorch matmul: an operand of rank {r}")));
    }
    let layout = Layout::contiguous(dims.to_vec());
    if transposed {
        layout.transpose(r as isize - 2, r as isize - 1).map_err(|e| Failure(e.to_string()))
    } else {
        Ok(layout)
    }
}

/// The elements of `b` as a slice of `T`, after checking its data type.
///
/// # Safety
/// `b` must describe a live XLA buffer of `b.numel()` elements of its data type.
unsafe fn elements<'a, T: HostFloat>(b: &BufferRef) -> Result<&'a [T], Failure> {
    if b.dtype != T::FFI_DTYPE {
        return Err(Failure(format!(
            "oxtorch matmul: a buffer of XLA type {}, expected {}",
            b.dtype,
            T::NAME
        )));
    }
    let n = b.numel();
    // SAFETY: the caller guarantees `n` elements at `data` (NULL only when `n` is 0).
    Ok(if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(b.data as *const T, n) } })
}

/// The product of the two buffer arguments into the result buffer.
///
/// # Safety
/// As [`elements`], for every argument and result.
unsafe fn matmul_kernel<T: HostFloat, const TA: bool, const TB: bool>(
    args: &[BufferRef],
    rets: &[BufferRef],
) -> Result<(), Failure> {
    let ([a, b], [out]) = (args, rets) else {
        return Err(Failure("oxtorch matmul: expected two operands and one result".into()));
    };
    let (la, lb) = (view(&a.dims, TA)?, view(&b.dims, TB)?);
    // SAFETY: XLA's buffers of the call, described by their own dims.
    let (x, y) = unsafe { (elements::<T>(a)?, elements::<T>(b)?) };
    let product = matmul_slices(x, &la, y, &lb).map_err(|e| Failure(e.to_string()))?;
    if out.dtype != T::FFI_DTYPE || out.numel() != product.len() {
        return Err(Failure(format!(
            "oxtorch matmul: a result of {} elements for a product of {}",
            out.numel(),
            product.len()
        )));
    }
    if !product.is_empty() {
        // SAFETY: the result buffer holds `product.len()` elements of `T` and does not overlap
        // the freshly computed product.
        unsafe { std::ptr::copy_nonoverlapping(product.as_ptr(), out.data as *mut T, product.len()) };
    }
    oxtorch_backend_cpu::pool::give(product);
    super::metrics::record_host_kernel_call();
    Ok(())
}

/// The XLA FFI handler of one product target.
unsafe extern "C" fn matmul_handler<T: HostFloat, const TA: bool, const TB: bool>(
    frame: *mut c_void,
) -> *mut c_void {
    // SAFETY: XLA calls a registered handler with its call frame; the kernel reads the frame's
    // buffers as described.
    unsafe { host_ffi::call(frame.cast(), |args, rets| matmul_kernel::<T, TA, TB>(args, rets)) }
}

/// Every product target with its handler.
fn handlers() -> Vec<(String, FfiHandler)> {
    fn four<T: HostFloat>(et: ElementType, out: &mut Vec<(String, FfiHandler)>) {
        let name = |ta, tb| host_matmul_target(et, ta, tb).expect("a host float");
        out.push((name(false, false), matmul_handler::<T, false, false>));
        out.push((name(false, true), matmul_handler::<T, false, true>));
        out.push((name(true, false), matmul_handler::<T, true, false>));
        out.push((name(true, true), matmul_handler::<T, true, true>));
    }
    let mut out = Vec::new();
    four::<f32>(ElementType::F32, &mut out);
    four::<f64>(ElementType::F64, &mut out);
    out
}

/// Registers every handler with `plugin` for its host platform.
fn register(plugin: &'static Plugin) -> crate::pjrt::Result<()> {
    for (target, handler) in handlers() {
        // SAFETY: `matmul_handler` follows the XLA FFI convention (`host_ffi::call`) and is a
        // plain function, callable for the life of the process.
        unsafe { plugin.register_ffi_handler(&target, "Host", handler)? };
    }
    Ok(())
}

/// Whether programs for `device` call the host kernels: on the CPU plugin, once its handlers are
/// registered, unless `OXTORCH_XLA_HOST_KERNELS=0`. Decided once per device kind.
pub(crate) fn enabled(device: Device) -> bool {
    static KINDS: [OnceLock<bool>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = &KINDS[usize::from(device.kind() == DeviceKind::Tpu)];
    *slot.get_or_init(|| {
        if std::env::var("OXTORCH_XLA_HOST_KERNELS").is_ok_and(|v| v == "0") {
            return false;
        }
        let Ok(client) = registry::client(device.kind()) else { return false };
        if !client.platform_name().eq_ignore_ascii_case("cpu") {
            return false;
        }
        match register(client.plugin()) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("oxtorch: xla products use XLA's own kernels: {e}");
                false
            }
        }
    })
}
