//! Arguments that name dimensions or sizes, accepting Rust's integer literals naturally.

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// One or more dimension indices or sizes (negative values count from the end, or mean "infer"
/// in `view`/`reshape`): `1`, `-1`, `[0, 2]`, `&[2, -1][..]`, `vec![3, 4]`.
pub trait IntoDims {
    /// The values as `isize`.
    fn into_dims(self) -> Vec<isize>;
}

macro_rules! into_dims {
    ($($t:ty),*) => {$(
        impl IntoDims for $t {
            fn into_dims(self) -> Vec<isize> { vec![self as isize] }
        }
        impl<const N: usize> IntoDims for [$t; N] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| d as isize).collect() }
        }
        impl<const N: usize> IntoDims for &[$t; N] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| d as isize).collect() }
        }
        impl IntoDims for &[$t] {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| d as isize).collect() }
        }
        impl IntoDims for Vec<$t> {
            fn into_dims(self) -> Vec<isize> { self.into_iter().map(|d| d as isize).collect() }
        }
        impl IntoDims for &Vec<$t> {
            fn into_dims(self) -> Vec<isize> { self.iter().map(|&d| d as isize).collect() }
        }
    )*};
}
into_dims!(i32, i64, isize, usize);

impl IntoDims for &oxtorch_core::Shape {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|&d| d as isize).collect()
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
            fn bounds(self) -> (Option<isize>, Option<isize>) { (Some(self.start as isize), Some(self.end as isize)) }
        }
        impl SliceRange for RangeFrom<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) { (Some(self.start as isize), None) }
        }
        impl SliceRange for RangeTo<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) { (None, Some(self.end as isize)) }
        }
        impl SliceRange for RangeInclusive<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) {
                let end = *self.end() as isize;
                (Some(*self.start() as isize), if end == -1 { None } else { Some(end + 1) })
            }
        }
        impl SliceRange for RangeToInclusive<$t> {
            fn bounds(self) -> (Option<isize>, Option<isize>) {
                let end = self.end as isize;
                (None, if end == -1 { None } else { Some(end + 1) })
            }
        }
    )*};
}
slice_range!(i32, i64, isize, usize);
