//! Reusable scratch buffers whose first element sits on a 64-byte boundary (a cache line, and
//! the row of an AMX tile: a tile row that straddles two lines costs two loads).

use std::marker::PhantomData;

/// Element types an [`Aligned`] buffer may hold: plain integers, for which all-zero bytes are a
/// value and any 64-byte-aligned address is aligned.
///
/// # Safety
/// Implementors have no padding, no invalid bit patterns and an alignment dividing 64.
pub(crate) unsafe trait Plain: Copy {}
// SAFETY: plain integers.
unsafe impl Plain for u16 {}
// SAFETY: plain integers.
unsafe impl Plain for u32 {}

/// One cache line of storage.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// A growable buffer of `T` starting on a 64-byte boundary, kept between calls.
pub(crate) struct Aligned<T: Plain> {
    lines: Vec<Line>,
    _elem: PhantomData<T>,
}

impl<T: Plain> Aligned<T> {
    /// An empty buffer (allocates nothing).
    pub(crate) const fn new() -> Self {
        Aligned { lines: Vec::new(), _elem: PhantomData }
    }

    /// The first `len` elements, growing the buffer if it is shorter (new space zeroed, what was
    /// there kept).
    pub(crate) fn slice(&mut self, len: usize) -> &mut [T] {
        let lines = (len * std::mem::size_of::<T>()).div_ceil(64);
        if self.lines.len() < lines {
            self.lines.resize(lines, Line([0; 64]));
        }
        // SAFETY: the lines hold at least `len` elements' bytes, all initialised; `T: Plain` makes
        // any bytes a value and the 64-byte alignment suits it; the borrow of `self` guards them.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut T, len) }
    }

    /// The buffer as elements (its whole length).
    pub(crate) fn as_slice(&self) -> &[T] {
        let len = self.lines.len() * 64 / std::mem::size_of::<T>();
        // SAFETY: as in `slice`.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const T, len) }
    }
}

impl<T: Plain> Default for Aligned<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_line_and_keeps_its_contents_when_growing() {
        let mut buf = Aligned::<u16>::new();
        buf.slice(3).copy_from_slice(&[1, 2, 3]);
        let grown = buf.slice(1000);
        assert_eq!(grown.as_ptr() as usize % 64, 0);
        assert_eq!(&grown[..4], &[1, 2, 3, 0]);
        assert!(grown[3..].iter().all(|&x| x == 0));
        assert!(buf.as_slice().len() >= 1000);
    }
}
