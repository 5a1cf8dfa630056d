//! The elements behind a [`crate::CpuStorage`]: a vector the storage owns, or a read-only window on
//! memory that another owner keeps alive (a memory-mapped checkpoint), so that loading weights copies
//! nothing.
//!
//! Reads see a slice either way. The first write to a window copies it into an owned vector
//! (copy-on-write), so a tensor loaded zero-copy behaves like any other: in-place ops, optimizer steps
//! and `copy_` work, and the file is never written.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use oxtorch_core::{DType, Error, Result};

use crate::CpuElement;

/// Bytes that outlive every tensor viewing them and never change while they live: a read-only
/// memory map of a checkpoint file, say.
pub trait SharedBytes: Send + Sync {
    /// The bytes.
    fn bytes(&self) -> &[u8];

    /// Says that `range` of the bytes will not be read soon, so that their pages may leave this
    /// process's resident memory (a memory map reads them back from its file on the next access).
    /// Never changes the bytes. Does nothing unless the owner can do that.
    fn release(&self, range: std::ops::Range<usize>) {
        let _ = range;
    }
}

/// A CPU storage's elements: owned, or shared read-only with copy-on-write.
pub enum Buffer<T> {
    /// A vector this storage owns.
    Owned(Vec<T>),
    /// A window on bytes kept alive by `owner`.
    Shared(SharedSlice<T>),
}

/// `len` elements of `T` at byte `offset` of `owner`'s bytes, checked in range and aligned.
pub struct SharedSlice<T> {
    owner: Arc<dyn SharedBytes>,
    ptr: *const T,
    len: usize,
}

// SAFETY: the slice is only ever read, through `&self`; `owner` (Send + Sync) keeps the memory
// alive, and the element types are plain data that is Send + Sync itself.
unsafe impl<T: Sync> Send for SharedSlice<T> {}
// SAFETY: as above: shared access is read-only.
unsafe impl<T: Sync> Sync for SharedSlice<T> {}

impl<T: CpuElement> Buffer<T> {
    /// A zero-copy window of `len` elements at byte `offset` of `owner`'s bytes (native endianness),
    /// or an error saying why not: out of range, misaligned for `T`, or (bool) a byte other than 0 or 1.
    /// Callers fall back to copying.
    pub fn shared(owner: Arc<dyn SharedBytes>, offset: usize, len: usize) -> Result<Self> {
        let bytes = owner.bytes();
        let size = std::mem::size_of::<T>();
        let end = len.checked_mul(size).and_then(|n| n.checked_add(offset));
        let Some(window) = end.and_then(|end| bytes.get(offset..end)) else {
            return Err(Error::msg(format!(
                "shared buffer: {len} elements of {} at byte {offset} run past the {} bytes available",
                T::DTYPE,
                bytes.len()
            )));
        };
        if !(window.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(Error::msg(format!(
                "shared buffer: byte {offset} is not aligned for {} elements",
                T::DTYPE
            )));
        }
        // Every bit pattern is a valid integer or float; a bool must be 0 or 1.
        if T::DTYPE == DType::Bool && window.iter().any(|&b| b > 1) {
            return Err(Error::msg("shared buffer: a bool element is neither 0 nor 1"));
        }
        let ptr = window.as_ptr() as *const T;
        Ok(Buffer::Shared(SharedSlice { owner, ptr, len }))
    }
}

impl<T> Buffer<T> {
    /// True when the elements are a window on shared memory (not yet written).
    pub fn is_shared(&self) -> bool {
        matches!(self, Buffer::Shared(_))
    }

    /// For a shared window: lets its owner drop the pages behind `elements` (indices into this
    /// window, clamped to it) from resident memory ([`SharedBytes::release`]); they come back on
    /// the next read. Nothing for owned elements.
    pub fn release_pages(&self, elements: std::ops::Range<usize>) {
        if let Buffer::Shared(s) = self {
            let (first, end) = (elements.start.min(s.len), elements.end.min(s.len));
            if first >= end {
                return;
            }
            let size = std::mem::size_of::<T>();
            let start = s.ptr as usize - s.owner.bytes().as_ptr() as usize;
            s.owner.release(start + first * size..start + end * size);
        }
    }

    /// The elements as a vector: moved when owned, copied when shared.
    pub fn into_vec(self) -> Vec<T>
    where
        T: Clone,
    {
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(s) => s.deref().to_vec(),
        }
    }
}

impl<T> Deref for SharedSlice<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `Buffer::shared` checked that the window lies inside `owner`'s bytes, is aligned
        // for `T` and holds valid `T`s; `owner` keeps it alive and unchanged for our lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(s) => s,
        }
    }
}

impl<T: Clone> DerefMut for Buffer<T> {
    /// The elements, mutably: a shared window is copied into an owned vector first.
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        if let Buffer::Shared(s) = self {
            *self = Buffer::Owned(s.deref().to_vec());
        }
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(_) => unreachable!("a shared window was just copied"),
        }
    }
}

impl<T> From<Vec<T>> for Buffer<T> {
    fn from(v: Vec<T>) -> Self {
        Buffer::Owned(v)
    }
}

impl<T> FromIterator<T> for Buffer<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Buffer::Owned(iter.into_iter().collect())
    }
}

impl<T> Default for Buffer<T> {
    fn default() -> Self {
        Buffer::Owned(Vec::new())
    }
}

impl<T: Clone> Clone for Buffer<T> {
    /// Owned elements are copied; a shared window is shared again (writes copy it anyway).
    fn clone(&self) -> Self {
        match self {
            Buffer::Owned(v) => Buffer::Owned(v.clone()),
            Buffer::Shared(s) => {
                Buffer::Shared(SharedSlice { owner: Arc::clone(&s.owner), ptr: s.ptr, len: s.len })
            }
        }
    }
}

impl<T: PartialEq> PartialEq for Buffer<T> {
    fn eq(&self, other: &Self) -> bool {
        self.deref() == other.deref()
    }
}

impl<T: fmt::Debug> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_shared() {
            f.write_str("shared ")?;
        }
        fmt::Debug::fmt(self.deref(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytes(Vec<u8>);
    impl SharedBytes for Bytes {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
    }

    fn owner(bytes: Vec<u8>) -> Arc<dyn SharedBytes> {
        Arc::new(Bytes(bytes))
    }

    #[test]
    fn reads_without_copying_and_copies_on_first_write() {
        let data: Vec<u8> = [1.5f32, -2.0, 3.25].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let o = owner(data);
        let base = o.bytes().as_ptr();
        let mut b = Buffer::<f32>::shared(o.clone(), 4, 2).unwrap();
        assert!(b.is_shared());
        assert_eq!(&*b, &[-2.0, 3.25]);
        assert_eq!(b.as_ptr() as usize, base as usize + 4, "the window must not be a copy");
        let c = b.clone();
        b[0] = 7.0;
        assert!(!b.is_shared());
        assert_eq!(&*b, &[7.0, 3.25]);
        assert_eq!(&*c, &[-2.0, 3.25], "a clone must not see the write");
        assert_eq!(&o.bytes()[4..8], &(-2.0f32).to_ne_bytes(), "the owner's bytes must never change");
    }

    #[test]
    fn out_of_range_misaligned_and_invalid_bools_are_errors() {
        let o = owner(vec![0u8; 16]);
        assert!(Buffer::<f32>::shared(o.clone(), 8, 3).is_err());
        assert!(Buffer::<f32>::shared(o.clone(), usize::MAX, 1).is_err());
        assert!(Buffer::<f32>::shared(o.clone(), 0, usize::MAX).is_err());
        // A Vec<u8>'s data is at least 8-aligned with the system allocator here, so byte 2 is not
        // 4-aligned.
        if (o.bytes().as_ptr() as usize).is_multiple_of(4) {
            assert!(Buffer::<f32>::shared(o.clone(), 2, 1).is_err());
        }
        assert!(Buffer::<bool>::shared(owner(vec![0, 1, 2]), 0, 3).is_err());
        assert_eq!(&*Buffer::<bool>::shared(owner(vec![0, 1, 1]), 0, 3).unwrap(), &[false, true, true]);
    }
}
