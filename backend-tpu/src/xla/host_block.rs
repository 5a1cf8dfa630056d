//! Large uploads to the CPU plugin go into host memory that oxtorch allocates, backed by huge
//! pages, and that the plugin uses in place (a view buffer) until it frees it.
//!
//! Streaming memory backed by 4 KiB pages runs at about half the bandwidth of 2 MiB pages (the
//! hardware prefetchers stop at every page boundary; each page costs a TLB walk), and a batch-1
//! decode step streams every weight once per token. Linux backs memory with huge pages only where
//! asked (see the CPU backend's `hugepage`), and the plugin's own allocator never asks: a copy of
//! the weights in its buffers decoded at 0.6× of the CPU backend, most of it in the same
//! matrix-vector kernel. Blocks of at least [`MIN_BYTES`] are fresh anonymous mappings, 2
//! MiB-aligned and advised before their first touch, so the kernel backs them with huge pages
//! where it can; elsewhere nothing changes but who allocated the memory.
//!
//! They are mapped, never taken from the heap: with `tune_process_allocator` every large
//! allocation comes from glibc's main heap, whose memory freed earlier (a checkpoint's host
//! tensors, read and dropped just before their upload) is already backed by 4 KiB pages that
//! advice given now does not change. Taken from the heap, 280 of a 110M-parameter model's 480 MB
//! of weights had huge pages in the decode benchmark; mapped, 459 of the 470 MB resident (all
//! but the partial huge page at the end of each block).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::pjrt::{Buffer, Client, Device, ElementType, Result};

/// Uploads smaller than this go through the plugin's own copy.
pub(crate) const MIN_BYTES: usize = 1 << 20;

/// The huge page size, and the blocks' alignment.
const HUGE: usize = 2 << 20;

/// A host allocation a view buffer reads; freed by [`release`] when the plugin is done with it.
struct HostBlock {
    /// The first byte, 2 MiB-aligned.
    data: *mut u8,
    /// The bytes the upload holds.
    bytes: usize,
    /// The bytes allocated from `data` on (the upload's and, on Linux, untouched address space
    /// after them).
    len: usize,
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
    let Some(block) = allocate(bytes.len()) else { return copy() };
    let data = block.data;
    // SAFETY: `data` holds at least `bytes.len()` fresh bytes, disjoint from `bytes`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
    let block = Box::into_raw(Box::new(block));
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
            LIVE_BYTES.fetch_add(bytes.len(), Ordering::Relaxed);
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
    LIVE_BYTES.fetch_sub(block.bytes, Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { free(block) };
}

/// A fresh block for `bytes` bytes, 2 MiB-aligned and, on Linux, its whole huge pages asked to be
/// backed as such before their first touch (the last partial one keeps 4 KiB pages, so a block
/// holds no more memory than its bytes); `None` when the memory cannot be had.
fn allocate(bytes: usize) -> Option<HostBlock> {
    #[cfg(target_os = "linux")]
    {
        // Mapped with a huge page of slack; the part before the first 2 MiB boundary is given
        // back, the slack after the bytes is address space that is never touched.
        let span = bytes.max(1).checked_add(HUGE)?;
        // SAFETY: a new private anonymous mapping; it touches no existing memory.
        let base = unsafe {
            os::mmap(std::ptr::null_mut(), span, os::PROT_READ_WRITE, os::MAP_PRIVATE_ANONYMOUS, -1, 0)
        };
        if base == os::MAP_FAILED {
            return None;
        }
        let start = (base as usize).next_multiple_of(HUGE);
        let head = start - base as usize;
        let whole_pages = bytes / HUGE * HUGE;
        // SAFETY: the head (page-aligned: the mapping starts on a page, the block on a huge page)
        // is the start of the mapping just made, before the block. The advice only changes how
        // the kernel backs the block's pages; a refusal (no THP) leaves 4 KiB pages.
        unsafe {
            if head > 0 {
                os::munmap(base, head);
            }
            if whole_pages > 0 {
                os::madvise(start as *mut c_void, whole_pages, os::MADV_HUGEPAGE);
            }
        }
        Some(HostBlock { data: start as *mut u8, bytes, len: span - head })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), HUGE).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let data = unsafe { std::alloc::alloc(layout) };
        (!data.is_null()).then_some(HostBlock { data, bytes, len: layout.size() })
    }
}

/// Frees a block's memory.
///
/// # Safety
/// `block` must come from `upload`, and nothing may use its memory any more.
unsafe fn free(block: HostBlock) {
    #[cfg(target_os = "linux")]
    // SAFETY: the block is what is left of a mapping made by `allocate`, unused from here on.
    unsafe {
        os::munmap(block.data.cast(), block.len);
    }
    #[cfg(not(target_os = "linux"))]
    // SAFETY: allocated by `allocate` with this layout.
    unsafe {
        std::alloc::dealloc(block.data, std::alloc::Layout::from_size_align_unchecked(block.len, HUGE))
    };
}

/// The few Linux memory calls the blocks need (the flag values of x86-64, AArch64 and RISC-V).
#[cfg(target_os = "linux")]
mod os {
    use std::ffi::c_void;

    pub const PROT_READ_WRITE: i32 = 0x1 | 0x2;
    pub const MAP_PRIVATE_ANONYMOUS: i32 = 0x02 | 0x20;
    pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
    pub const MADV_HUGEPAGE: i32 = 14;

    extern "C" {
        pub fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            offset: i64,
        ) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> i32;
        pub fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks start on a huge page, hold every byte asked for, and go back to the OS whole.
    #[test]
    fn blocks_are_aligned_writable_and_freed() {
        for bytes in [1, 4096, HUGE - 1, HUGE, 3 * HUGE + 5] {
            let block = allocate(bytes).expect("a block");
            assert_eq!(block.data as usize % HUGE, 0, "{bytes} bytes");
            assert_eq!(block.bytes, bytes);
            assert!(block.len >= bytes);
            // SAFETY: the block holds `bytes` writable bytes that nothing else uses.
            let data = unsafe { std::slice::from_raw_parts_mut(block.data, bytes) };
            data.fill(0xA5);
            assert!(data.iter().all(|&b| b == 0xA5));
            // SAFETY: from `allocate`, unused from here on.
            unsafe { free(block) };
        }
    }
}
