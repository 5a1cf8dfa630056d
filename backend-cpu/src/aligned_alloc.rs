//! A global allocator that places large blocks on 64-byte boundaries, as PyTorch's CPU allocator
//! places every tensor.
//!
//! A CPU storage is a `Vec`, so its alignment is the global allocator's: glibc's `malloc` gives 16
//! bytes. Some kernels read an operand in place only when its rows start on cache lines: the AMX
//! bf16 product reads a row-major A without packing it when each 64-byte tile row is one cache line
//! (`gemm_amx`; measured `[4096, 768] · [768, 768]` 2 400 → 2 650 GFLOP/s,
//! `[128, 2048] · [2048, 128]` 770 → 2 700), and falls back to packing elsewhere. A binary opts in
//! with
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: oxtorch_backend_cpu::AlignedAllocator = oxtorch_backend_cpu::AlignedAllocator;
//!
//! fn main() {
//!     let v = vec![0f32; 4096];
//!     assert_eq!(v.as_ptr() as usize % 64, 0);
//! }
//! ```
//!
//! Blocks under [`MIN_BYTES`] keep their own alignment (small allocations cost no more). Large
//! zeroed blocks are `posix_memalign` + `memset` rather than `calloc`, so their pages are touched
//! when allocated (a `calloc` from a fresh mapping would fault them in lazily); under
//! [`crate::malloc::tune_process_allocator`], which these binaries call too, large blocks come from
//! the heap and are cleared either way. Growing a large block always moves it.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes are aligned to [`ALIGN`].
pub const MIN_BYTES: usize = 4096;

/// The alignment of large blocks: one cache line (and one AVX-512 vector).
pub const ALIGN: usize = 64;

/// The system allocator, with blocks of at least [`MIN_BYTES`] on [`ALIGN`]-byte boundaries.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlignedAllocator;

/// The layout `System` sees for a block of `layout`: the same, with the alignment raised to
/// [`ALIGN`] for large blocks. `None` when the raised layout does not exist (a size within `ALIGN`
/// of `isize::MAX`), which the allocation reports as a failure.
fn system_layout(layout: Layout) -> Option<Layout> {
    if layout.size() >= MIN_BYTES && layout.align() < ALIGN {
        Layout::from_size_align(layout.size(), ALIGN).ok()
    } else {
        Some(layout)
    }
}

// SAFETY: every block is allocated and freed by `System` under the layout `system_layout` gives for
// the caller's layout, which depends only on that layout (so a block is freed under the layout it
// was allocated with), and is at least as aligned as the caller asked. `realloc` keeps that pairing:
// where the old and new sizes map to different alignments, it moves the block itself.
unsafe impl GlobalAlloc for AlignedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match system_layout(layout) {
            // SAFETY: `l` has the caller's non-zero size.
            Some(l) => unsafe { System.alloc(l) },
            None => std::ptr::null_mut(),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match system_layout(layout) {
            // SAFETY: as in `alloc`.
            Some(l) => unsafe { System.alloc_zeroed(l) },
            None => std::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` under this layout, so `System` allocated it under
        // `system_layout(layout)`, which existed then and is the same now.
        unsafe { System.dealloc(ptr, system_layout(layout).unwrap_unchecked()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY (all three blocks): `ptr` is a live block of `layout` (the caller's contract), so
        // `System` holds it under `old`; `new_size` is non-zero and, rounded up to `layout.align()`,
        // at most `isize::MAX` — and rounded up to `old.align()` too where `new` (which has that
        // alignment when the branch below reallocates in place) exists.
        let old = unsafe { system_layout(layout).unwrap_unchecked() };
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let Some(new) = system_layout(new_layout) else {
            return std::ptr::null_mut();
        };
        if new.align() == old.align() {
            return unsafe { System.realloc(ptr, old, new_size) };
        }
        // The block crosses `MIN_BYTES`: move it to a block of the other alignment.
        let moved = unsafe { System.alloc(new) };
        if !moved.is_null() {
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                System.dealloc(ptr, old);
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size on either side of `MIN_BYTES` through alloc, alloc_zeroed and realloc (growing
    /// and shrinking across the threshold): large blocks aligned, contents kept, zeroes zero.
    #[test]
    fn large_blocks_are_cache_line_aligned_and_reallocs_keep_contents() {
        let a = AlignedAllocator;
        for size in [1, 15, 100, MIN_BYTES - 1, MIN_BYTES, MIN_BYTES + 3, 1 << 20] {
            for align in [1, 2, 8, 16, 128] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; each block is freed once under its current layout.
                unsafe {
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    a.dealloc(z, layout);
                    let p = a.alloc(layout);
                    assert!(!p.is_null() && (p as usize).is_multiple_of(align));
                    if size >= MIN_BYTES {
                        assert_eq!(p as usize % ALIGN, 0, "a block of {size} bytes at {p:?}");
                    }
                    for i in 0..size {
                        *p.add(i) = (i % 251) as u8;
                    }
                    let mut p = p;
                    let mut layout = layout;
                    for new_size in [size + MIN_BYTES, 7, 2 * MIN_BYTES + 1, size] {
                        let kept = layout.size().min(new_size);
                        p = a.realloc(p, layout, new_size);
                        assert!(!p.is_null() && (p as usize).is_multiple_of(align));
                        if new_size >= MIN_BYTES {
                            assert_eq!(p as usize % ALIGN, 0, "{size} → {new_size} bytes at {p:?}");
                        }
                        for i in 0..kept {
                            assert_eq!(*p.add(i), (i % 251) as u8, "{size} → {new_size}: byte {i}");
                        }
                        for i in kept..new_size {
                            *p.add(i) = (i % 251) as u8;
                        }
                        layout = Layout::from_size_align(new_size, align).unwrap();
                    }
                    a.dealloc(p, layout);
                }
            }
        }
    }
}
