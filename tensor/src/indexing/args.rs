//! Conversions into index expressions: integers, ranges, [`NewAxis`], [`Ellipsis`], tensors, and
//! tuples or lists of them.

use super::{Ellipsis, NewAxis, TensorIndex};
use crate::Tensor;

macro_rules! int_index {
    ($($t:ty),*) => {$(
        impl From<$t> for TensorIndex {
            fn from(v: $t) -> Self { TensorIndex::Int(crate::dims::sat(v)) }
        }
    )*};
}
int_index!(i32, i64, isize, usize);

macro_rules! range_index {
    ($($r:ty),*) => {$(
        impl From<$r> for TensorIndex {
            fn from(r: $r) -> Self { TensorIndex::slice(r, 1) }
        }
    )*};
}
range_index!(std::ops::RangeFull);
macro_rules! range_index_int {
    ($($t:ty),*) => {$(
        range_index!(
            std::ops::Range<$t>,
            std::ops::RangeFrom<$t>,
            std::ops::RangeTo<$t>,
            std::ops::RangeInclusive<$t>,
            std::ops::RangeToInclusive<$t>
        );
    )*};
}
range_index_int!(i32, i64, isize, usize);

impl From<NewAxis> for TensorIndex {
    fn from(_: NewAxis) -> Self {
        TensorIndex::NewAxis
    }
}
impl From<Ellipsis> for TensorIndex {
    fn from(_: Ellipsis) -> Self {
        TensorIndex::Ellipsis
    }
}
impl From<Tensor> for TensorIndex {
    fn from(t: Tensor) -> Self {
        TensorIndex::Tensor(t)
    }
}
impl From<&Tensor> for TensorIndex {
    fn from(t: &Tensor) -> Self {
        TensorIndex::Tensor(t.clone())
    }
}
impl From<Option<&Tensor>> for TensorIndex {
    /// `None` is a full slice, as in torch's `index_put` index tuples.
    fn from(t: Option<&Tensor>) -> Self {
        t.map_or(TensorIndex::slice(.., 1), |t| TensorIndex::Tensor(t.clone()))
    }
}

/// An index expression: one entry, a tuple of up to 8 entries, or a list.
pub trait IntoIndices {
    /// The entries.
    fn into_indices(self) -> Vec<TensorIndex>;
}

impl<T: Into<TensorIndex>> IntoIndices for Vec<T> {
    fn into_indices(self) -> Vec<TensorIndex> {
        self.into_iter().map(Into::into).collect()
    }
}
impl<T: Into<TensorIndex> + Clone> IntoIndices for &[T] {
    fn into_indices(self) -> Vec<TensorIndex> {
        self.iter().cloned().map(Into::into).collect()
    }
}
impl<T: Into<TensorIndex> + Clone, const N: usize> IntoIndices for &[T; N] {
    fn into_indices(self) -> Vec<TensorIndex> {
        self.iter().cloned().map(Into::into).collect()
    }
}
impl<T: Into<TensorIndex>, const N: usize> IntoIndices for [T; N] {
    fn into_indices(self) -> Vec<TensorIndex> {
        self.into_iter().map(Into::into).collect()
    }
}

macro_rules! single_index {
    ($($t:ty),*) => {$(
        impl IntoIndices for $t {
            fn into_indices(self) -> Vec<TensorIndex> { vec![self.into()] }
        }
    )*};
}
single_index!(i32, i64, isize, usize, NewAxis, Ellipsis, TensorIndex, &Tensor, std::ops::RangeFull);
macro_rules! single_range_index {
    ($($t:ty),*) => {$(
        single_index!(
            std::ops::Range<$t>,
            std::ops::RangeFrom<$t>,
            std::ops::RangeTo<$t>,
            std::ops::RangeInclusive<$t>,
            std::ops::RangeToInclusive<$t>
        );
    )*};
}
single_range_index!(i32, i64, isize, usize);

macro_rules! tuple_index {
    ($($T:ident $v:ident),+) => {
        impl<$($T: Into<TensorIndex>),+> IntoIndices for ($($T,)+) {
            fn into_indices(self) -> Vec<TensorIndex> {
                let ($($v,)+) = self;
                vec![$($v.into()),+]
            }
        }
    };
}
tuple_index!(A a);
tuple_index!(A a, B b);
tuple_index!(A a, B b, C c);
tuple_index!(A a, B b, C c, D d);
tuple_index!(A a, B b, C c, D d, E e);
tuple_index!(A a, B b, C c, D d, E e, F f);
tuple_index!(A a, B b, C c, D d, E e, F f, G g);
tuple_index!(A a, B b, C c, D d, E e, F f, G g, H h);
