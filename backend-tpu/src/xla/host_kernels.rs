//! oxtorch's own CPU kernels inside XLA programs on the CPU plugin: matrix products and the
//! cross-entropy forward run as `stablehlo.custom_call`s to the CPU backend's kernels, registered
//! with the plugin through its FFI extension.
//!
//! Why: the CPU plugin's XLA emits a batch-1 product (every `linear` of a decode step) as a loop
//! fusion that reads its weight at 20–29 GB/s, where the CPU backend's kernel reads 37; and its
//! gemms trail the CPU backend's on this machine's 2 cores. A program for another platform (a TPU,
//! a GPU) keeps `dot_general`. `OXTORCH_XLA_HOST_KERNELS=0` turns the custom calls off.
//!
//! The cross-entropy forward reads each logit row once, in cache, where XLA's CPU reductions
//! write `exp(x - max)` out in full (it fuses no elementwise producer into a reduction) and read
//! the logits three times.
//!
//! A product's operands arrive as their storage and the strided view of it the product reads (a
//! listing operand: offset, dims, strides), so a transposed weight, attention's heads (permuted
//! slices of one q/k/v projection) or a narrowed cache are read in place, with no copy.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use oxtorch_backend_cpu::{matmul_slices, matmul_slices_into, CrossEntropyRows, SliceMatmul};
use oxtorch_core::{Device, DeviceKind, Layout};

use super::host_ffi::{self, BufferRef, Failure};
use super::registry;
use crate::pjrt::{ElementType, FfiHandler, Plugin};
use crate::stablehlo::{host_cross_entropy_target, host_matmul_target};

/// A float type the host kernels run in: its XLA FFI data type and its name in target names.
trait HostFloat: SliceMatmul + CrossEntropyRows {
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

/// The elements of `b` as a slice of `T`, after checking its data type.
///
/// # Safety
/// `b` must describe a live XLA buffer of `b.numel()` elements of its data type.
unsafe fn elements<'a, T: HostFloat>(b: &BufferRef) -> Result<&'a [T], Failure> {
    if b.dtype != T::FFI_DTYPE {
        return Err(Failure(format!(
            "oxtorch host kernel: a buffer of XLA type {}, expected {}",
            b.dtype,
            T::NAME
        )));
    }
    let n = b.numel();
    // SAFETY: the caller guarantees `n` elements at `data` (NULL only when `n` is 0).
    Ok(if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(b.data as *const T, n) } })
}

/// The views a kernel reads its viewed operands as, from the listing operand
/// `[offset, rank, dims..., strides...]` per operand (see `stablehlo::host_call`). Each view is
/// checked to stay inside its operand's length in `lens`.
///
/// # Safety
/// `listing` must describe a live XLA buffer of its dims.
unsafe fn listed_views<const K: usize>(
    listing: &BufferRef,
    lens: [usize; K],
) -> Result<[Layout; K], Failure> {
    let bad = || Failure("oxtorch host kernel: a malformed view listing".into());
    if listing.dtype != host_ffi::S64 || listing.dims.len() != 1 {
        return Err(bad());
    }
    let n = listing.numel();
    // SAFETY: the caller guarantees `n` elements of i64 at `data` (NULL only when `n` is 0).
    let values: &[i64] =
        if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(listing.data as *const i64, n) } };
    let mut rest = values;
    let mut take = |len: usize| -> Result<Layout, Failure> {
        let [offset, rank, tail @ ..] = rest else { return Err(bad()) };
        let rank = usize::try_from(*rank).map_err(|_| bad())?;
        if tail.len() < 2 * rank {
            return Err(bad());
        }
        let unsigned = |xs: &[i64]| -> Result<Vec<usize>, Failure> {
            xs.iter().map(|&x| usize::try_from(x).map_err(|_| bad())).collect()
        };
        let (dims, strides) = (unsigned(&tail[..rank])?, unsigned(&tail[rank..2 * rank])?);
        let offset = usize::try_from(*offset).map_err(|_| bad())?;
        rest = &tail[2 * rank..];
        if dims.iter().try_fold(1usize, |p, &d| p.checked_mul(d)).is_none() {
            return Err(bad());
        }
        let layout = Layout::new(dims, strides, offset).map_err(|e| Failure(e.to_string()))?;
        let inside = layout.numel() == 0 || layout.checked_storage_extent().is_some_and(|e| e <= len);
        if !inside {
            return Err(Failure(format!(
                "oxtorch host kernel: view {layout:?} reaches outside its {len} elements"
            )));
        }
        Ok(layout)
    };
    let mut views = Vec::with_capacity(K);
    for len in lens {
        views.push(take(len)?);
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    views.try_into().map_err(|_| bad())
}

/// The product of the two operands' listed views into the result buffer.
///
/// # Safety
/// As [`elements`], for every argument and result.
unsafe fn matmul_kernel<T: HostFloat>(args: &[BufferRef], rets: &[BufferRef]) -> Result<(), Failure> {
    let ([a, b, listing], [out]) = (args, rets) else {
        return Err(Failure("oxtorch matmul: expected three operands and one result".into()));
    };
    // SAFETY: XLA's buffer of the call, described by its own dims.
    let [la, lb] = unsafe { listed_views(listing, [a.numel(), b.numel()])? };
    // SAFETY: XLA's buffers of the call, described by their own dims.
    let (x, y) = unsafe { (elements::<T>(a)?, elements::<T>(b)?) };
    if out.dtype != T::FFI_DTYPE {
        return Err(Failure(format!(
            "oxtorch matmul: a result of XLA type {}, expected {}",
            out.dtype,
            T::NAME
        )));
    }
    let n = out.numel();
    let bytes = n * std::mem::size_of::<T>();
    if overlaps(out.data as usize, bytes, x) || overlaps(out.data as usize, bytes, y) {
        // XLA never shares a custom call's result with its operands; computed aside if it did,
        // without a mutable view of the result while the operands are read.
        let product = matmul_slices(x, &la, y, &lb).map_err(|e| Failure(e.to_string()))?;
        if product.len() != n {
            return Err(Failure(format!(
                "oxtorch matmul: a result of {n} elements for a product of {}",
                product.len()
            )));
        }
        // SAFETY: the result buffer holds `n` elements of `T`; `product` is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(product.as_ptr(), out.data as *mut T, n) };
        oxtorch_backend_cpu::pool::give(product);
    } else {
        let dst: &mut [MaybeUninit<T>] = if n == 0 {
            &mut []
        } else {
            // SAFETY: XLA's result buffer of the call: `n` elements of `T` (checked above), apart
            // from both operands (checked just above), that no one else touches while the call runs.
            unsafe { std::slice::from_raw_parts_mut(out.data as *mut MaybeUninit<T>, n) }
        };
        matmul_slices_into(x, &la, y, &lb, dst).map_err(|e| Failure(e.to_string()))?;
    }
    super::metrics::record_host_kernel_call();
    Ok(())
}

/// Whether the `len` bytes at address `start` share any byte with `b`.
fn overlaps<T>(start: usize, len: usize, b: &[T]) -> bool {
    let b0 = b.as_ptr() as usize;
    len > 0 && !b.is_empty() && start < b0 + std::mem::size_of_val(b) && b0 < start + len
}

/// The XLA FFI handler of one product target.
unsafe extern "C" fn matmul_handler<T: HostFloat>(frame: *mut c_void) -> *mut c_void {
    // SAFETY: XLA calls a registered handler with its call frame; the kernel reads the frame's
    // buffers as described.
    unsafe { host_ffi::call(frame.cast(), |args, rets| matmul_kernel::<T>(args, rets)) }
}

/// The cross-entropy forward: operands `(logits storage, target [N] s64, [ignore_index] s64[1],
/// listing)`, the listing holding the logits' view (`[..., C]`, classes adjacent, one row per
/// target), results `(losses [N], statistics [N, 2])`, as [`NnOp::CrossEntropy`].
///
/// # Safety
/// As [`elements`], for every argument and result.
///
/// [`NnOp::CrossEntropy`]: oxtorch_core::ops::NnOp::CrossEntropy
unsafe fn cross_entropy_kernel<T: HostFloat>(args: &[BufferRef], rets: &[BufferRef]) -> Result<(), Failure> {
    let ([x, t, ignore, listing], [loss, stats]) = (args, rets) else {
        return Err(Failure("oxtorch cross_entropy: expected four operands and two results".into()));
    };
    // SAFETY: XLA's buffer of the call, described by its own dims.
    let [view] = unsafe { listed_views(listing, [x.numel()])? };
    let n = t.numel();
    let wanted = [
        (t, host_ffi::S64, n),
        (ignore, host_ffi::S64, 1),
        (loss, T::FFI_DTYPE, n),
        (stats, T::FFI_DTYPE, 2 * n),
    ];
    if let Some((b, _, len)) = wanted.iter().find(|(b, dtype, len)| b.dtype != *dtype || b.numel() != *len) {
        return Err(Failure(format!(
            "oxtorch cross_entropy: a buffer of XLA type {} with {} elements, expected {len}",
            b.dtype,
            b.numel()
        )));
    }
    // SAFETY: XLA's buffers of the call, described by their own dims and types (checked above).
    let ignore_at = ignore.data as *const c_void;
    let (x, t, ignore) = unsafe {
        let t: &[i64] = if n == 0 { &[] } else { std::slice::from_raw_parts(t.data as *const i64, n) };
        (elements::<T>(x)?, t, *(ignore.data as *const i64))
    };
    if n == 0 {
        return Ok(());
    }
    let size = std::mem::size_of::<T>();
    let span = |p: *const c_void, bytes: usize| (p as usize, bytes);
    let results = [span(loss.data, n * size), span(stats.data, 2 * n * size)];
    let operands = [
        span(x.as_ptr().cast(), std::mem::size_of_val(x)),
        span(t.as_ptr().cast(), 8 * n),
        span(ignore_at, 8),
    ];
    let clash = |(a, la): (usize, usize), (b, lb): (usize, usize)| a < b + lb && b < a + la;
    if results.iter().any(|&r| operands.iter().any(|&o| clash(r, o))) || clash(results[0], results[1]) {
        // XLA never shares a custom call's result with its operands or another result.
        return Err(Failure("oxtorch cross_entropy: a result shares memory with an operand".into()));
    }
    // SAFETY: XLA's result buffers of the call (`n` and `2n` elements of `T`, checked above),
    // apart from the operands and each other (checked just above), that no one else touches while
    // the call runs.
    let (loss, stats) = unsafe {
        (
            std::slice::from_raw_parts_mut(loss.data as *mut T, n),
            std::slice::from_raw_parts_mut(stats.data as *mut T, 2 * n),
        )
    };
    T::cross_entropy_rows(x, &view, t, ignore, loss, stats).map_err(|e| Failure(e.to_string()))?;
    super::metrics::record_host_kernel_call();
    Ok(())
}

/// The XLA FFI handler of the cross-entropy target.
unsafe extern "C" fn cross_entropy_handler<T: HostFloat>(frame: *mut c_void) -> *mut c_void {
    // SAFETY: XLA calls a registered handler with its call frame; the kernel reads the frame's
    // buffers as described.
    unsafe { host_ffi::call(frame.cast(), |args, rets| cross_entropy_kernel::<T>(args, rets)) }
}

/// Every host kernel target with its handler.
fn handlers() -> Vec<(String, FfiHandler)> {
    let mm = |et| host_matmul_target(et).expect("a host float");
    let mut out: Vec<(String, FfiHandler)> =
        vec![(mm(ElementType::F32), matmul_handler::<f32>), (mm(ElementType::F64), matmul_handler::<f64>)];
    let ce = |et| host_cross_entropy_target(et).expect("a host float");
    out.push((ce(ElementType::F32), cross_entropy_handler::<f32>));
    out.push((ce(ElementType::F64), cross_entropy_handler::<f64>));
    out
}

/// Registers every handler with `plugin` for its host platform.
fn register(plugin: &'static Plugin) -> crate::pjrt::Result<()> {
    for (target, handler) in handlers() {
        // SAFETY: every handler (`matmul_handler`, `cross_entropy_handler`) follows the XLA FFI
        // convention (`host_ffi::call`) and is a plain function, callable for the life of the process.
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
                eprintln!("oxtorch: xla programs use XLA's own ops, not oxtorch's host kernels: {e}");
                false
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing operand over `values`.
    fn listing(values: &mut [i64]) -> BufferRef {
        BufferRef { dtype: host_ffi::S64, data: values.as_mut_ptr().cast(), dims: vec![values.len()] }
    }

    /// The listing is read as `[offset_a, rank_a, dims_a..., strides_a..., offset_b, ...]`, and
    /// each view must stay inside its operand; anything else is an error, never a read past the
    /// listing's end or an operand's.
    #[test]
    fn listed_views_are_checked() {
        // A: 2 heads [2, 3, 4] of a [3, 2, 4] buffer (offset 0); B: a transposed [4, 5] at offset 1.
        let mut good = [0, 3, 2, 3, 4, 4, 8, 1, 1, 2, 4, 5, 1, 4];
        // SAFETY: each listing points at a live array of its length.
        let Ok([la, lb]) = (unsafe { listed_views(&listing(&mut good), [24, 21]) }) else {
            panic!("a good listing was refused")
        };
        assert_eq!((la.dims(), la.strides(), la.offset()), (&[2, 3, 4][..], &[4, 8, 1][..], 0));
        assert_eq!((lb.dims(), lb.strides(), lb.offset()), (&[4, 5][..], &[1, 4][..], 1));
        let cases: [(&mut [i64], usize, usize); 7] = [
            (&mut [0, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1], 23, 20), // A reaches element 23 of 23
            (&mut [1, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1], 24, 20), // offset 1 pushes A past its end
            (&mut [0, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1, 7], 24, 20), // a value after B's view
            (&mut [0, 2, 6, 4, 4, 1, 0, 3, 4, 5, 5, 1], 24, 20), // B's rank reaches past the end
            (&mut [0, -1, 6, 4], 24, 20),                        // a negative rank
            (&mut [0, 2, 6, -4, 4, 1, 0, 2, 4, 5, 5, 1], 24, 20), // a negative dim
            (&mut [-3, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1], 24, 20), // a negative offset
        ];
        for (values, a, b) in cases {
            let shown = format!("{values:?}");
            // SAFETY: as above.
            assert!(unsafe { listed_views(&listing(values), [a, b]) }.is_err(), "{shown}");
        }
        let mut wrong_type = [0i64, 2, 6, 4, 4, 1, 0, 2, 4, 5, 5, 1];
        let mut l = listing(&mut wrong_type);
        l.dtype = host_ffi::F64;
        // SAFETY: as above.
        assert!(unsafe { listed_views(&l, [24, 20]) }.is_err());
    }
}
