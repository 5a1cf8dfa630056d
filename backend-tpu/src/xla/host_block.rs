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

/// Copies `bytes` into a fresh huge-page block and hands it to the CPU plugin as a buffer of
/// `element_type` with `dims` on `device` (whose memory is the host's).
pub(crate) fn upload(
    client: &Client,
    device: &Device,
    bytes: &[u8],
    element_type: ElementType,
    dims: &[i64],
) -> Result<Buffer> {
    let layout = Layout::from_size_align(bytes.len().max(1), HUGE).map_err(|e| {
        crate::pjrt::Error::InvalidArgument(format!("a host block of {} bytes: {e}", bytes.len()))
    })?;
    // SAFETY: `layout` has a non-zero size.
    let data = unsafe { std::alloc::alloc(layout) };
    if data.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    advise_huge_pages(data, layout.size());
    // SAFETY: `data` holds `layout.size() ≥ bytes.len()` fresh bytes, disjoint from `bytes`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
    let block = Box::into_raw(Box::new(HostBlock { data, layout }));
    // SAFETY: the block holds the array's bytes, 2 MiB-aligned, and nothing else uses it until
    // `release` runs; `release` frees exactly this block, from any thread.
    let view = unsafe {
        Buffer::view_of_memory(client, device, data.cast(), element_type, dims, Some(release), block.cast())
    };
    if view.is_err() {
        // The plugin never took the block: free it here.
        // SAFETY: `block` came from `Box::into_raw` above and was not handed over.
        unsafe { release(data.cast(), block.cast()) };
    }
    view
}

/// The `on_delete_callback` of a block's view: frees the block.
unsafe extern "C" fn release(_data: *mut c_void, block: *mut c_void) {
    // SAFETY: `block` is the `HostBlock` boxed by `upload`, released exactly once.
    let block = unsafe { Box::from_raw(block as *mut HostBlock) };
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
