//! Arguments that name dimensions or sizes, accepting Rust's integer literals naturally.

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// Converts an integer argument to `isize`, saturating values above `isize::MAX` (a size or index
/// that large is out of range for any tensor, so it fails the op's range checks instead of wrapping to
/// a negative, from-the-end value).
pub(crate) fn sat<T: TryInto<isize>>(v: T) -> isize {
    v.try_into().unwrap_or(isize::MAX)
}

/// One or more dimension indices or sizes (negative values count from the end, or mean "infer"
/// in `view`/`reshape`): `1`, `-1`, `[0, 2]`, `&[2, -1][..]`, `vec![3, 4]`.
pub trait IntoDims {
    /// The values as `isize`.
    fn into_dims(self) -> Vec<isize>;
}

macro_rules! into_dims {
    ($($t:ty),*) => {$(
        impl IntoDims for $t {
            fn into_dims(self) -> Vec<isize> { vec![sat(self)] }
        }
        impl<const N: usize> IntoDims for [$t; N] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| sat(d)).collect() }
        }
        impl<const N: usize> IntoDims for &[$t; N] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| sat(d)).collect() }
        }
        impl IntoDims for &[$t] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| sat(d)).collect() }
        }
        impl IntoDims for Vec<$t> {
            fn into_dims(self) -> Vec<isize> { self.into_iter().map(sat).collect() }
        }
        impl IntoDims for &Vec<$t> {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| sat(d)).collect() }
        }
    )*};
}
into_dims!(i32, i64, isize, usize);

impl IntoDims for &oxtorch_core::Shape {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|&d| sat(d)).collect()
    }
}

impl IntoDims for oxtorch_core::Shape {
    fn into_dims(self) -> Vec<isize> {
        (&self).into_dims()
    }
}

/// A Python-style slice bound pair written as a Rust range: `1..3`, `..`, `2..`, `..-1`, `1..=2`.
pub trait SliceRange {
    /// `(start, end)` with `None` for an open side; `end` is exclusive.
    fn bounds(self) -> (Option<isize>, Option<isize>);
}

impl SliceRange for RangeFull {
    fn bounds(self) -> (Option<isize>, Option<isize>) {
        (None, None)
    }
}

macro_rules! slice_range {
    ($($t:ty),*) => {$(
        impl SliceRange for Range<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) { (Some(sat(self.start)), Some(sat(self.end))) }
        }
        impl SliceRange for RangeFrom<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) { (Some(sat(self.start)), None) }
        }
        impl SliceRange for RangeTo<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) { (None, Some(sat(self.end))) }
        }
        impl SliceRange for RangeInclusive<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) {
                let end = sat(*self.end());
                (Some(sat(*self.start())), if end == -1 { None } else { Some(end.saturating_add(1)) })
            }
        }
        impl SliceRange for RangeToInclusive<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) {
                let end = sat(self.end);
                (None, if end == -1 { None } else { Some(end.saturating_add(1)) })
            }
        }
    )*};
}
slice_range!(i32, i64, isize, usize);
