//! Shapes, dimension wrapping and broadcasting.

use std::fmt;

use crate::error::{Error, Result};

/// The sizes of a tensor's dimensions (torch's `torch.Size`).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Vec<usize>);

impl Shape {
    /// A shape from its sizes.
    pub fn new(dims: Vec<usize>) -> Self {
        Shape(dims)
    }

    /// The empty shape of a 0-dim tensor.
    pub fn scalar() -> Self {
        Shape(Vec::new())
    }

    /// The sizes.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The sizes, owned.
    pub fn into_dims(self) -> Vec<usize> {
        self.0
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for a 0-dim tensor).
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
}

/// The product of `dims`, or an error when it overflows `usize` (the element count of any tensor
/// must be representable: every kernel's bounds depend on it).
pub fn checked_numel(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::shape(format!("Storage size calculation overflowed with sizes={dims:?}")))
}

/// Row-major strides for `dims`.
pub fn contiguous_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut acc = 1usize;
    for i in (0..dims.len()).rev() {
        strides[i] = acc;
        acc *= dims[i].max(1);
    }
    strides
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
    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Self {
        Shape(v)
    }
}
impl From<&Vec<usize>> for Shape {
    fn from(v: &Vec<usize>) -> Self {
        Shape(v.clone())
    }
}
impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Self {
        Shape(v.to_vec())
    }
}
impl<const N: usize> From<[usize; N]> for Shape {
    fn from(v: [usize; N]) -> Self {
        Shape(v.to_vec())
    }
}
impl<const N: usize> From<&[usize; N]> for Shape {
    fn from(v: &[usize; N]) -> Self {
        Shape(v.to_vec())
    }
}
impl From<&Shape> for Shape {
    fn from(s: &Shape) -> Self {
        s.clone()
    }
}
impl From<()> for Shape {
    fn from(_: ()) -> Self {
        Shape(Vec::new())
    }
}
impl From<usize> for Shape {
    fn from(v: usize) -> Self {
        Shape(vec![v])
    }
}
impl From<(usize, usize)> for Shape {
    fn from(v: (usize, usize)) -> Self {
        Shape(vec![v.0, v.1])
    }
}
impl From<(usize, usize, usize)> for Shape {
    fn from(v: (usize, usize, usize)) -> Self {
        Shape(vec![v.0, v.1, v.2])
    }
}
impl From<(usize, usize, usize, usize)> for Shape {
    fn from(v: (usize, usize, usize, usize)) -> Self {
        Shape(vec![v.0, v.1, v.2, v.3])
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
