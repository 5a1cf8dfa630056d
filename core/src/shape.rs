//! Shapes, dimension wrapping and broadcasting.

use std::fmt;

use smallvec::SmallVec;

use crate::error::{Error, Result};

/// Sizes or strides, inline up to six dimensions (no allocation for the shapes of almost every
/// tensor: creating a tensor is on the path of every op).
pub(crate) type DimVec = SmallVec<[usize; 6]>;

/// The sizes of a tensor's dimensions (torch's `torch.Size`).
#[derive(PartialEq, Eq, Hash, Default)]
pub struct Shape(DimVec);

impl Clone for Shape {
    /// An inline copy (SmallVec's own clone goes through its generic `extend`).
    #[inline]
    fn clone(&self) -> Self {
        Shape(clone_dims(&self.0))
    }
}

/// A copy of `dims`, without the generic `extend` path for the inline case.
#[inline]
pub(crate) fn clone_dims(dims: &[usize]) -> DimVec {
    const INLINE: usize = 6;
    if dims.len() > INLINE {
        return DimVec::from_slice(dims);
    }
    let mut buf = [0usize; INLINE];
    for (b, &d) in buf.iter_mut().zip(dims) {
        *b = d;
    }
    DimVec::from_buf_and_len(buf, dims.len())
}

impl Shape {
    /// A shape from its sizes.
    pub fn new(dims: Vec<usize>) -> Self {
        Shape(DimVec::from_vec(dims))
    }

    /// The empty shape of a 0-dim tensor.
    #[inline]
    pub fn scalar() -> Self {
        Shape(DimVec::new())
    }

    /// The sizes.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The sizes, owned.
    pub fn into_dims(self) -> Vec<usize> {
        self.0.into_vec()
    }

    /// Number of dimensions.
    #[inline]
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for a 0-dim tensor).
    #[inline]
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// Number of elements, or torch's overflow error when the product does not fit in `usize`.
    pub fn checked_numel(&self) -> Result<usize> {
        checked_numel(&self.0)
    }

    /// Row-major (C-contiguous) strides of this shape.
    pub fn contiguous_strides(&self) -> Vec<usize> {
        contiguous_strides(&self.0)
    }

    /// [`Shape::contiguous_strides`], inline.
    pub(crate) fn contiguous_dim_strides(&self) -> DimVec {
        contiguous_dim_strides(&self.0)
    }
}

/// The product of `dims`, or an error when it overflows `usize` (the element count of any tensor
/// must be representable: every kernel's bounds depend on it).
pub fn checked_numel(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::shape(format!("Storage size calculation overflowed with sizes={dims:?}")))
}

/// Row-major strides for `dims` (zero-size dims count as 1, as torch's; the products saturate,
/// which only an empty tensor with huge other dims reaches, and its strides address nothing).
pub fn contiguous_strides(dims: &[usize]) -> Vec<usize> {
    contiguous_dim_strides(dims).into_vec()
}

/// [`contiguous_strides`], inline.
pub(crate) fn contiguous_dim_strides(dims: &[usize]) -> DimVec {
    const INLINE: usize = 6;
    if dims.len() > INLINE {
        let mut strides = DimVec::from_elem(0, dims.len());
        let mut acc = 1usize;
        for i in (0..dims.len()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(dims[i].max(1));
        }
        return strides;
    }
    // Most shapes: fill a fixed array, then one inline copy.
    let mut strides = [0usize; INLINE];
    let mut acc = 1usize;
    for (s, &d) in strides[..dims.len()].iter_mut().zip(dims).rev() {
        *s = acc;
        acc = acc.saturating_mul(d.max(1));
    }
    DimVec::from_buf_and_len(strides, dims.len())
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl fmt::Display for Shape {
    /// torch's `torch.Size([2, 3])` form, without the prefix: `[2, 3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::ops::Deref for Shape {
    type Target = [usize];
    #[inline]
    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Self {
        Shape::new(v)
    }
}
impl From<&Vec<usize>> for Shape {
    fn from(v: &Vec<usize>) -> Self {
        Shape(DimVec::from_slice(v))
    }
}
impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Self {
        Shape(DimVec::from_slice(v))
    }
}
impl<const N: usize> From<[usize; N]> for Shape {
    fn from(v: [usize; N]) -> Self {
        Shape(DimVec::from_slice(&v))
    }
}
impl<const N: usize> From<&[usize; N]> for Shape {
    fn from(v: &[usize; N]) -> Self {
        Shape(DimVec::from_slice(v))
    }
}
impl From<&Shape> for Shape {
    fn from(s: &Shape) -> Self {
        s.clone()
    }
}
impl From<()> for Shape {
    fn from(_: ()) -> Self {
        Shape::scalar()
    }
}
impl From<usize> for Shape {
    fn from(v: usize) -> Self {
        Shape(DimVec::from_slice(&[v]))
    }
}
impl From<(usize, usize)> for Shape {
    fn from(v: (usize, usize)) -> Self {
        Shape(DimVec::from_slice(&[v.0, v.1]))
    }
}
impl From<(usize, usize, usize)> for Shape {
    fn from(v: (usize, usize, usize)) -> Self {
        Shape(DimVec::from_slice(&[v.0, v.1, v.2]))
    }
}
impl From<(usize, usize, usize, usize)> for Shape {
    fn from(v: (usize, usize, usize, usize)) -> Self {
        Shape(DimVec::from_slice(&[v.0, v.1, v.2, v.3]))
    }
}

/// A dimension argument: non-negative counts from the front, negative from the back (as in torch).
pub type Dim = isize;

/// Wraps a possibly negative `dim` into `0..rank`, with torch's message when it is out of range.
///
/// A 0-dim tensor accepts dims -1 and 0, as torch does.
pub fn wrap_dim(dim: Dim, rank: usize) -> Result<usize> {
    let r = rank.max(1) as isize;
    if dim < -r || dim >= r {
        return Err(Error::DimOutOfRange { dim, min: -r, max: r - 1 });
    }
    Ok(if dim < 0 { (dim + r) as usize } else { dim as usize })
}

/// The broadcast shape of `a` and `b` (numpy/torch rules), or torch's mismatch error.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let da = if i + a.len() >= rank { a[i + a.len() - rank] } else { 1 };
        let db = if i + b.len() >= rank { b[i + b.len() - rank] } else { 1 };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::BroadcastMismatch { a: da, b: db, dim: i });
        };
    }
    Ok(out)
}
