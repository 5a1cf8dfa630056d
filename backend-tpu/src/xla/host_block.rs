//! Large uploads to the CPU plugin go into host memory that oxtorch allocates, backed by huge
//! pages, and that the plugin uses in place (a view buffer) until it frees it.
//!
//! Streaming memory backed by 4 KiB pages runs at about half the bandwidth of 2 MiB pages (the
//! hardware prefetchers stop at every page boundary; each page costs a TLB walk), and a batch-1
//! decode step streams every weight once per token. Linux backs memory with huge pages only where
//! asked (see the CPU backend's `hugepage`), and the plugin's own allocator never asks: a copy of
//! the weights in its buffers decoded at 0.6× of the CPU backend, most of it in the same
//! matrix-vector kernel. Blocks of at least [`MIN_BYTES`] are 2 MiB-aligned and advised before
//! their first touch, so the kernel backs them with huge pages where it can; elsewhere nothing
//! changes but who allocated the memory.

use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::pjrt::{Buffer, Client, Device, ElementType, Result};

/// Uploads smaller than this go through the plugin's own copy.
pub(crate) const MIN_BYTES: usize = 1 << 20;

/// The huge page size, and the blocks' alignment.
const HUGE: usize = 2 << 20;

/// A host allocation a view buffer reads; freed by [`release`] when the plugin is done with it.
struct HostBlock {
    data: *mut u8,
    layout: Layout,
}

/// Whether views are still tried: off after the plugin refused one (its block is then leaked,
/// once, rather than freed while the plugin might still call `release`).
static VIEWS: AtomicBool = AtomicBool::new(true);

/// Copies `bytes` into a fresh huge-page block and hands it to the CPU plugin as a buffer of
/// `element_type` with `dims` on `device` (whose memory is the host's). Falls back to the plugin's
/// own copy where a block cannot be had (no memory for it, bool data, a plugin without views).
pub(crate) fn upload(
    client: &Client,
    device: &Device,
    bytes: &[u8],
    element_type: ElementType,
    dims: &[i64],
) -> Result<Buffer> {
    let copy = || Buffer::from_host(client, device, bytes, element_type, dims);
    if element_type == ElementType::Pred
        || !VIEWS.load(Ordering::Relaxed)
        || !Buffer::client_makes_views(client)
    {
        return copy();
    }
    let Ok(layout) = Layout::from_size_align(bytes.len().max(1), HUGE) else { return copy() };
    // SAFETY: `layout` has a non-zero size.
    let data = unsafe { std::alloc::alloc(layout) };
    if data.is_null() {
        return copy();
    }
    advise_huge_pages(data, layout.size());
    // SAFETY: `data` holds `layout.size() ≥ bytes.len()` fresh bytes, disjoint from `bytes`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
    let block = Box::into_raw(Box::new(HostBlock { data, layout }));
    // SAFETY: the block holds the array's `bytes.len()` bytes, 2 MiB-aligned, and nothing else
    // uses it until `release` runs; `release` frees exactly this block, from any thread.
    let view = unsafe {
        Buffer::view_of_memory(
            client,
            device,
            data.cast(),
            bytes.len(),
            element_type,
            dims,
            (Some(release), block.cast()),
        )
    };
    match view {
        Ok(view) => {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
            Ok(view)
        }
        Err(crate::pjrt::Error::InvalidArgument(_)) => {
            // Refused by our own checks, before the plugin saw the block: it is ours to free.
            // SAFETY: `block` came from `Box::into_raw` above and was never handed over.
            unsafe { free(*Box::from_raw(block)) };
            copy()
        }
        Err(_) => {
            // The plugin may or may not call `release` later: leave the block to it (leaked
            // otherwise, once: views are not tried again).
            VIEWS.store(false, Ordering::Relaxed);
            copy()
        }
    }
}

/// Bytes of host blocks the plugin holds now.
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes of host blocks the CPU plugin holds now (uploads of at least [`MIN_BYTES`]).
pub(crate) fn live_bytes() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// The `on_delete_callback` of a block's view: frees the block.
unsafe extern "C" fn release(_data: *mut c_void, block: *mut c_void) {
    // SAFETY: `block` is the `HostBlock` boxed by `upload`, released exactly once.
    let block = unsafe { *Box::from_raw(block as *mut HostBlock) };
    LIVE_BYTES.fetch_sub(block.layout.size(), Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { free(block) };
}

/// Frees a block's memory.
///
/// # Safety
/// `block` must come from `upload`, and nothing may use its memory any more.
unsafe fn free(block: HostBlock) {
    // SAFETY: allocated by `upload` with this layout.
    unsafe { std::alloc::dealloc(block.data, block.layout) };
}

/// Asks Linux to back the whole (2 MiB-aligned) block with huge pages, before its first touch.
fn advise_huge_pages(data: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: i32 = 14;
        extern "C" {
            fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
        }
        // SAFETY: the range is the block's own, page-aligned; the advice only changes how the
        // kernel backs it. A refusal (no THP) leaves 4 KiB pages.
        unsafe { madvise(data.cast(), len, MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (data, len);
}
