//! Strided layouts: how a view's multi-index maps to an offset in its storage.
//!
//! Every view op of torch is a pure function from one layout to another; none of them touches data.
//! Each checks its arguments and returns torch's error message, so an invalid view can never address
//! memory outside its storage.

use crate::error::{Error, Result};
use crate::shape::{clone_dims, contiguous_strides, wrap_dim, Dim, DimVec, Shape};

/// Sizes, strides (in elements) and storage offset of a tensor view.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Shape,
    strides: DimVec,
    offset: usize,
}

impl Clone for Layout {
    #[inline]
    fn clone(&self) -> Self {
        Layout { shape: self.shape.clone(), strides: clone_dims(&self.strides), offset: self.offset }
    }
}

impl Layout {
    /// A row-major layout of `shape` starting at offset 0.
    #[inline]
    pub fn contiguous(shape: impl Into<Shape>) -> Self {
        let shape = shape.into();
        let strides = shape.contiguous_dim_strides();
        Layout { shape, strides, offset: 0 }
    }

    /// A layout from raw parts; checks that sizes and strides have the same rank.
    pub fn new(shape: impl Into<Shape>, strides: Vec<usize>, offset: usize) -> Result<Self> {
        let shape = shape.into();
        if shape.rank() != strides.len() {
            return Err(Error::shape(format!(
                "mismatch in length of strides and shape: shape {shape} has {} dims but got {} strides",
                shape.rank(),
                strides.len()
            )));
        }
        Ok(Layout { shape, strides: strides.into(), offset })
    }

    /// The sizes.
    #[inline]
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The sizes as a slice.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The strides, in elements.
    #[inline]
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The storage offset, in elements.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of dimensions.
    #[inline]
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// One past the largest storage index this layout reaches (its offset when it is empty), or
    /// `None` when that index does not fit in `usize`.
    pub fn checked_storage_extent(&self) -> Option<usize> {
        if self.numel() == 0 {
            return Some(self.offset);
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&d, &s)| (d - 1).checked_mul(s).and_then(|x| acc.checked_add(x)))?
            .checked_add(1)
    }

    /// One past the largest storage index this layout reaches (its offset when it is empty).
    ///
    /// Panics when that index overflows `usize`; layouts built by this module's checked
    /// constructors never do.
    pub fn storage_extent(&self) -> usize {
        self.checked_storage_extent().expect("layout extent overflows usize")
    }

    /// True when two indices may address the same element (a conservative check: false means
    /// the view never aliases itself).
    pub fn may_overlap(&self) -> bool {
        // Sorted by stride, each dim must step past everything the smaller dims span.
        let mut dims: Vec<(usize, usize)> =
            self.dims().iter().zip(&self.strides).filter(|(&d, _)| d > 1).map(|(&d, &s)| (s, d)).collect();
        dims.sort_unstable();
        let mut span = 0usize;
        for (stride, size) in dims {
            if stride <= span {
                return true;
            }
            span = span.saturating_add((size - 1).saturating_mul(stride));
        }
        false
    }

    /// True when the elements are laid out row-major without gaps (sizes-1 dims may have any stride).
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 {
                if s != expected {
                    return false;
                }
                expected *= d;
            }
        }
        true
    }

    /// If the layout is contiguous, the storage range it covers.
    #[inline]
    pub fn contiguous_range(&self) -> Option<std::ops::Range<usize>> {
        // One pass: `expected` ends as the element count when the layout is contiguous.
        let mut expected = 1usize;
        let mut contiguous = true;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d == 0 {
                // An empty view may sit past the end of its (possibly empty) storage.
                return Some(0..0);
            }
            if d != 1 {
                contiguous &= s == expected;
                expected = expected.saturating_mul(d);
            }
        }
        contiguous.then(|| self.offset..self.offset + expected)
    }

    /// Permutes the dimensions (`dims` must be a permutation of `0..rank`, negatives allowed).
    pub fn permute(&self, dims: &[Dim]) -> Result<Layout> {
        let rank = self.rank();
        if dims.len() != rank {
            return Err(Error::shape(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {rank} is not equal to len(dims) = {}",
                dims.len()
            )));
        }
        let mut seen = vec![false; rank];
        let mut shape = Vec::with_capacity(rank);
        let mut strides = DimVec::with_capacity(rank);
        for &d in dims {
            let d = wrap_dim(d, rank)?;
            if seen[d] {
                return Err(Error::shape("permute(): duplicate dims are not allowed."));
            }
            seen[d] = true;
            shape.push(self.shape[d]);
            strides.push(self.strides[d]);
        }
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    /// Swaps two dimensions.
    pub fn transpose(&self, d0: Dim, d1: Dim) -> Result<Layout> {
        if self.rank() == 0 {
            wrap_dim(d0, 0)?;
            wrap_dim(d1, 0)?;
            return Ok(self.clone());
        }
        let (a, b) = (wrap_dim(d0, self.rank())?, wrap_dim(d1, self.rank())?);
        let mut shape = self.shape.dims().to_vec();
        let mut strides = self.strides.clone();
        shape.swap(a, b);
        strides.swap(a, b);
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    /// Elements `start..start+len` of dimension `dim`.
    pub fn narrow(&self, dim: Dim, start: isize, len: usize) -> Result<Layout> {
        if self.rank() == 0 {
            return Err(Error::shape("narrow() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.shape[d];
        // (in i128: an empty tensor's other dims may exceed isize::MAX)
        let wrapped = if start < 0 { start as i128 + size as i128 } else { start as i128 };
        if wrapped < 0 || wrapped > size as i128 {
            return Err(Error::IndexOutOfRange { index: start, dim: d, size });
        }
        let start = wrapped as usize;
        if start.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::shape(format!(
                "start ({start}) + length ({len}) exceeds dimension size ({size})."
            )));
        }
        self.slice_range(d, start, start + len, 1)
    }

    /// Python slicing `[start:end:step]` along `dim`; out-of-range bounds are clamped as in Python.
    pub fn slice(&self, dim: Dim, start: Option<isize>, end: Option<isize>, step: usize) -> Result<Layout> {
        if self.rank() == 0 {
            return Err(Error::shape("slice() cannot be applied to a 0-dim tensor."));
        }
        if step == 0 {
            return Err(Error::msg("slice step must be positive"));
        }
        let d = wrap_dim(dim, self.rank())?;
        // (in i128: an empty tensor's other dims may exceed isize::MAX)
        let size = self.shape[d];
        let clamp = |v: isize| -> usize {
            let v = if v < 0 { v as i128 + size as i128 } else { v as i128 };
            v.clamp(0, size as i128) as usize
        };
        let start = start.map(clamp).unwrap_or(0);
        let end = end.map(clamp).unwrap_or(size).max(start);
        self.slice_range(d, start, end, step)
    }

    /// Elements `start..end` (both within the dim, `start <= end`) by `step` of dimension `d`.
    fn slice_range(&self, d: usize, start: usize, end: usize, step: usize) -> Result<Layout> {
        let len = (end - start).div_ceil(step);
        let mut shape = self.shape.dims().to_vec();
        let mut strides = self.strides.clone();
        // (the offset only overflows for an empty tensor whose other dims are huge: it reads
        // nothing, and keeps its own offset)
        let offset = if len == 0 {
            self.offset
        } else {
            start.checked_mul(self.strides[d]).and_then(|o| o.checked_add(self.offset)).unwrap_or(self.offset)
        };
        shape[d] = len;
        // A step past the dim's end leaves at most one element, whose stride is never used: keep
        // the dim's own rather than overflow (a step that would overflow with two is an error).
        strides[d] = match strides[d].checked_mul(step) {
            Some(stride) => stride,
            None if len <= 1 => strides[d],
            None => {
                return Err(Error::msg(format!(
                    "slice: stride {} times step {step} overflows at dimension {d}",
                    strides[d]
                )))
            }
        };
        Ok(Layout { shape: shape.into(), strides, offset })
    }

    /// Removes dimension `dim`, keeping index `index` of it.
    pub fn select(&self, dim: Dim, index: isize) -> Result<Layout> {
        if self.rank() == 0 {
            return Err(Error::shape("select() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.shape[d];
        let i = if index < 0 { index + size as isize } else { index };
        if i < 0 || i as usize >= size {
            return Err(Error::msg(format!(
                "select(): index {index} out of range for tensor of size {} at dimension {d}",
                self.shape
            )));
        }
        let mut shape = self.shape.dims().to_vec();
        let mut strides = self.strides.clone();
        let offset = self.offset + i as usize * strides[d];
        shape.remove(d);
        strides.remove(d);
        Ok(Layout { shape: shape.into(), strides, offset })
    }

    /// Broadcasts to `target` (leading dims added, size-1 dims repeated with stride 0).
    ///
    /// `target` entries of `-1` keep the current size, as in torch's `expand`.
    pub fn expand(&self, target: &[isize]) -> Result<Layout> {
        let rank = target.len();
        if rank < self.rank() {
            return Err(Error::shape(format!(
                "expand: the number of sizes provided ({rank}) must be greater or equal to the number of dimensions in the tensor ({})",
                self.rank()
            )));
        }
        let lead = rank - self.rank();
        let mut shape = vec![0; rank];
        let mut strides = DimVec::from_elem(0, rank);
        for i in 0..rank {
            let t = target[i];
            if i < lead {
                if t < 0 {
                    return Err(Error::shape(format!(
                        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                shape[i] = t as usize;
                strides[i] = 0;
            } else {
                let (d, s) = (self.shape[i - lead], self.strides[i - lead]);
                if t == -1 || t as usize == d {
                    shape[i] = d;
                    strides[i] = s;
                } else if d == 1 && t >= 0 {
                    shape[i] = t as usize;
                    strides[i] = 0;
                } else {
                    return Err(Error::shape(format!(
                        "The expanded size of the tensor ({t}) must match the existing size ({d}) at non-singleton dimension {i}.  Target sizes: {target:?}.  Tensor sizes: {}",
                        self.shape
                    )));
                }
            }
        }
        crate::shape::checked_numel(&shape)?;
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    /// Broadcasts to an exact shape.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        let target: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        self.expand(&target)
    }

    /// Inserts a size-1 dimension at `dim` (which may be `rank`).
    pub fn unsqueeze(&self, dim: Dim) -> Result<Layout> {
        let d = wrap_dim(dim, self.rank() + 1)?;
        let mut shape = self.shape.dims().to_vec();
        let mut strides = self.strides.clone();
        let stride = if d < self.rank() { self.shape[d] * self.strides[d] } else { 1 };
        shape.insert(d, 1);
        strides.insert(d, stride);
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    /// Removes the given dimensions where they have size 1 (others are left, as in torch).
    pub fn squeeze_dims(&self, dims: &[Dim]) -> Result<Layout> {
        let mut drop = vec![false; self.rank()];
        for &d in dims {
            let d = wrap_dim(d, self.rank())?;
            if self.rank() > 0 && self.shape[d] == 1 {
                drop[d] = true;
            }
        }
        self.drop_dims(&drop)
    }

    /// Removes every size-1 dimension.
    pub fn squeeze_all(&self) -> Layout {
        let drop: Vec<bool> = self.shape.iter().map(|&d| d == 1).collect();
        self.drop_dims(&drop).expect("dropping size-1 dims is always valid")
    }

    fn drop_dims(&self, drop: &[bool]) -> Result<Layout> {
        let kept = (0..self.rank()).filter(|&i| !drop[i]);
        let shape: Vec<usize> = kept.clone().map(|i| self.shape[i]).collect();
        let strides = kept.map(|i| self.strides[i]).collect();
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    /// A view with a new shape, or `None` when the strides cannot express it without a copy
    /// (torch's `view` rule; `reshape` copies in that case).
    pub fn view(&self, new_shape: &[usize]) -> Option<Layout> {
        let strides = view_strides(self.shape.dims(), &self.strides, new_shape)?;
        Some(Layout { shape: new_shape.into(), strides: strides.into(), offset: self.offset })
    }

    /// The diagonal of dims `d1`, `d2` with `offset` (positive: above the main diagonal), appended last.
    pub fn diagonal(&self, offset: isize, d1: Dim, d2: Dim) -> Result<Layout> {
        let (a, b) = (wrap_dim(d1, self.rank())?, wrap_dim(d2, self.rank())?);
        if a == b {
            return Err(Error::shape(format!("diagonal dimensions cannot be identical {d1}, {d2}")));
        }
        let (sa, sb) = (self.shape[a] as isize, self.shape[b] as isize);
        let len =
            if offset >= 0 { sa.min(sb.saturating_sub(offset)) } else { sb.min(sa.saturating_add(offset)) };
        let len = len.max(0) as usize;
        // Only a non-empty diagonal has a first element; its offset is then in bounds.
        let offset_elems = if len == 0 {
            self.offset
        } else if offset >= 0 {
            self.offset + offset as usize * self.strides[b]
        } else {
            self.offset + offset.unsigned_abs() * self.strides[a]
        };
        let mut shape = Vec::new();
        let mut strides = DimVec::new();
        for i in 0..self.rank() {
            if i != a && i != b {
                shape.push(self.shape[i]);
                strides.push(self.strides[i]);
            }
        }
        shape.push(len);
        strides.push(self.strides[a] + self.strides[b]);
        Ok(Layout { shape: shape.into(), strides, offset: offset_elems })
    }

    /// An arbitrary strided view; checked against the storage size so it never reaches outside.
    pub fn as_strided(
        shape: &[usize],
        strides: &[usize],
        offset: usize,
        storage_len: usize,
    ) -> Result<Layout> {
        let l = Layout::new(shape.to_vec(), strides.to_vec(), offset)?;
        crate::shape::checked_numel(shape)?;
        if l.checked_storage_extent().is_none_or(|e| e > storage_len) {
            return Err(Error::shape(format!(
                "setStorage: sizes {:?}, strides {strides:?}, storage offset {offset}, and itemsize requiring a storage size of {} are out of bounds for storage of size {storage_len}",
                shape,
                l.checked_storage_extent().map_or("more than usize::MAX".to_string(), |e| e.to_string())
            )));
        }
        Ok(l)
    }

    /// Storage indices of every element, in row-major order of the view.
    pub fn indices(&self) -> StridedIndices<'_> {
        StridedIndices::new(self)
    }
}

/// Strides for viewing `old` (with `old_strides`) as `new`, if no copy is needed.
///
/// Walks the old dims from the innermost out, grouping them into chunks that are contiguous with each
/// other; a view is possible when every chunk is split into new dims whose sizes multiply to the chunk's.
pub fn view_strides(old: &[usize], old_strides: &[usize], new: &[usize]) -> Option<Vec<usize>> {
    let numel: usize = old.iter().product();
    if numel != new.iter().product::<usize>() {
        return None;
    }
    if old.is_empty() {
        return Some(vec![1; new.len()]);
    }
    if numel == 0 {
        return Some(if old == new { old_strides.to_vec() } else { contiguous_strides(new) });
    }
    let mut out = vec![0usize; new.len()];
    let mut view_d = new.len() as isize - 1;
    let mut chunk_stride = *old_strides.last().unwrap();
    let (mut tensor_numel, mut view_numel) = (1usize, 1usize);
    for td in (0..old.len()).rev() {
        tensor_numel *= old[td];
        let chunk_ends = td == 0 || (old[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_stride);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                out[view_d as usize] = view_numel * chunk_stride;
                view_numel *= new[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if td > 0 {
                chunk_stride = old_strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(out)
}

/// Iterator over the storage indices of a layout in row-major order.
pub struct StridedIndices<'a> {
    layout: &'a Layout,
    index: Vec<usize>,
    next: Option<usize>,
}

impl<'a> StridedIndices<'a> {
    fn new(layout: &'a Layout) -> Self {
        let next = (layout.numel() > 0).then_some(layout.offset);
        StridedIndices { layout, index: vec![0; layout.rank()], next }
    }
}

impl Iterator for StridedIndices<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let cur = self.next?;
        let dims = self.layout.dims();
        let strides = self.layout.strides();
        let mut pos = cur;
        let mut d = dims.len();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            self.index[d] += 1;
            pos += strides[d];
            if self.index[d] < dims[d] {
                self.next = Some(pos);
                break;
            }
            pos -= strides[d] * dims[d];
            self.index[d] = 0;
        }
        Some(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_strides_follow_torch() {
        // Contiguous: any regrouping works.
        assert_eq!(view_strides(&[2, 3, 4], &[12, 4, 1], &[6, 4]), Some(vec![4, 1]));
        // A transposed matrix cannot be flattened without a copy.
        assert_eq!(view_strides(&[3, 2], &[1, 3], &[6]), None);
        // ... but its dims can be split.
        assert_eq!(view_strides(&[4, 2], &[1, 4], &[2, 2, 2]), Some(vec![2, 1, 4]));
        // Size-1 dims may be added anywhere.
        assert_eq!(view_strides(&[3], &[2], &[1, 3, 1]), Some(vec![6, 2, 2]));
        assert_eq!(view_strides(&[2, 3], &[3, 1], &[7]), None);
    }

    #[test]
    fn slices_clamp_like_python_and_diagonals_have_the_right_offsets() {
        let l = Layout::contiguous([10]);
        let s = l.slice(0, Some(-3), None, 2).unwrap();
        assert_eq!((s.dims(), s.strides(), s.offset()), (&[2usize][..], &[2usize][..], 7));
        let s = l.slice(0, Some(20), Some(30), 1).unwrap();
        assert_eq!(s.numel(), 0);
        let m = Layout::contiguous([3, 4]);
        let d = m.diagonal(1, 0, 1).unwrap();
        assert_eq!((d.dims(), d.strides(), d.offset()), (&[3usize][..], &[5usize][..], 1));
        let d = m.diagonal(-2, 0, 1).unwrap();
        assert_eq!((d.dims(), d.offset()), (&[1usize][..], 8));
        assert!(Layout::as_strided(&[2, 2], &[2, 1], 1, 4).is_err());
        assert_eq!(m.indices().collect::<Vec<_>>().len(), 12);
        assert_eq!(m.transpose(0, 1).unwrap().indices().take(4).collect::<Vec<_>>(), vec![0, 4, 8, 1]);
    }
}
