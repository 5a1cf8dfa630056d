//! Shape ops that move data: cat, stack, flip, roll, rot90, repeat, tile, repeat_interleave,
//! tril/triu, pad; and their view relatives: tensor_split, unfold, movedim, meshgrid,
//! broadcast_tensors. `cat` is the one prim ([`ShapeOp::Cat`]); the others are compositions of views,
//! `cat`, gathers and `where`, so that they run on every backend.

mod pad;

use oxtorch_core::ops::{Prim, ShapeOp};
use oxtorch_core::{promote_types, wrap_dim, DType, Error, Result, Scalar};

use crate::dims::IntoDims;
use crate::dispatch::apply1;
use crate::Tensor;

/// Wraps `dims` for a tensor of `rank`, failing on a repeated dim with `dup`'s message.
fn unique_dims(dims: &[isize], rank: usize, dup: impl Fn(usize) -> String) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, rank)?;
        if out.contains(&w) {
            return Err(Error::msg(dup(w)));
        }
        out.push(w);
    }
    Ok(out)
}

/// The tensors as references (for the `&[&Tensor]` APIs).
fn refs(v: &[Tensor]) -> Vec<&Tensor> {
    v.iter().collect()
}

impl Tensor {
    /// `torch.cat(tensors, dim)`: joins tensors (same rank, same sizes except at `dim`) along `dim`.
    /// The result dtype promotes across inputs; 1-d empty tensors are skipped, as in torch.
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(Error::msg("torch.cat(): expected a non-empty list of Tensors"));
        };
        let mut dtype = first.dtype();
        for (i, t) in tensors.iter().enumerate() {
            if t.rank() == 0 {
                return Err(Error::shape(format!(
                    "zero-dimensional tensor (at position {i}) cannot be concatenated"
                )));
            }
            dtype = promote_types(dtype, t.dtype());
        }
        let kept: Vec<(usize, &Tensor)> =
            tensors.iter().copied().enumerate().filter(|(_, t)| !(t.rank() == 1 && t.numel() == 0)).collect();
        let Some(&(_, reference)) = kept.first() else {
            return first.to_dtype(dtype)?.contiguous_copy();
        };
        let d = wrap_dim(dim, reference.rank())?;
        for &(i, t) in &kept {
            if t.rank() != reference.rank() {
                return Err(Error::shape(format!(
                    "Tensors must have same number of dimensions: got {} and {}",
                    reference.rank(),
                    t.rank()
                )));
            }
            for k in (0..t.rank()).filter(|&k| k != d) {
                if t.dims()[k] != reference.dims()[k] {
                    return Err(Error::shape(format!(
                        "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                        reference.dims()[k],
                        t.dims()[k]
                    )));
                }
            }
        }
        let cast: Vec<Tensor> = kept.iter().map(|(_, t)| t.to_dtype(dtype)).collect::<Result<_>>()?;
        let prim = Prim::Shape(ShapeOp::Cat { dim: d, n: cast.len() });
        apply1(&prim, &refs(&cast), reference.device())
    }

    /// A contiguous copy that never aliases self (even when self is already contiguous).
    fn contiguous_copy(&self) -> Result<Tensor> {
        self.copy()
    }

    /// `torch.concat`: the same as [`Tensor::cat`].
    pub fn concat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::cat(tensors, dim)
    }

    /// `torch.stack(tensors, dim)`: joins equally shaped tensors along a new dim `dim`.
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(Error::msg("stack expects a non-empty TensorList"));
        };
        for (i, t) in tensors.iter().enumerate() {
            if t.dims() != first.dims() {
                return Err(Error::shape(format!(
                    "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {i}",
                    first.dims(),
                    t.dims()
                )));
            }
        }
        let d = wrap_dim(dim, first.rank() + 1)?;
        let parts: Vec<Tensor> = tensors.iter().map(|t| t.unsqueeze(d as isize)).collect::<Result<_>>()?;
        Tensor::cat(&refs(&parts), d as isize)
    }

    /// `torch.atleast_1d`: 0-d tensors become `[1]`; others are returned as they are.
    pub fn atleast_1d(&self) -> Result<Tensor> {
        if self.rank() == 0 {
            self.reshape([1])
        } else {
            Ok(self.clone())
        }
    }

    /// `torch.atleast_2d`: `[]` and `[n]` become `[1, 1]` and `[1, n]`.
    pub fn atleast_2d(&self) -> Result<Tensor> {
        match self.rank() {
            0 => self.reshape([1, 1]),
            1 => self.unsqueeze(0),
            _ => Ok(self.clone()),
        }
    }

    /// `torch.atleast_3d`: `[]`, `[n]`, `[m, n]` become `[1, 1, 1]`, `[1, n, 1]`, `[m, n, 1]`.
    pub fn atleast_3d(&self) -> Result<Tensor> {
        match self.rank() {
            0 => self.reshape([1, 1, 1]),
            1 => self.unsqueeze(0)?.unsqueeze(2),
            2 => self.unsqueeze(2),
            _ => Ok(self.clone()),
        }
    }

    fn stack_like(
        tensors: &[&Tensor],
        name: &str,
        prep: fn(&Tensor) -> Result<Tensor>,
        dim: impl Fn(&Tensor) -> isize,
    ) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::msg(format!("{name} expects a non-empty TensorList")));
        }
        let parts: Vec<Tensor> = tensors.iter().map(|t| prep(t)).collect::<Result<_>>()?;
        Tensor::cat(&refs(&parts), dim(&parts[0]))
    }

    /// `torch.hstack`: concatenation along dim 1 (dim 0 for 1-d inputs), after `atleast_1d`.
    pub fn hstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "hstack", Tensor::atleast_1d, |t| if t.rank() == 1 { 0 } else { 1 })
    }

    /// `torch.vstack`: concatenation along dim 0 after `atleast_2d`.
    pub fn vstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "vstack", Tensor::atleast_2d, |_| 0)
    }

    /// `torch.dstack`: concatenation along dim 2 after `atleast_3d`.
    pub fn dstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "dstack", Tensor::atleast_3d, |_| 2)
    }

    fn check_split_rank(&self) -> Result<()> {
        if self.rank() == 0 {
            return Err(Error::msg(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
            ));
        }
        Ok(())
    }

    /// `self.tensor_split(sections, dim)`: `sections` views along `dim`, the first `size % sections`
    /// one element longer.
    pub fn tensor_split(&self, sections: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.check_split_rank()?;
        if sections == 0 {
            return Err(Error::msg("number of sections must be larger than 0, got 0"));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.dims()[d];
        let (base, extra) = (size / sections, size % sections);
        let mut start = 0;
        (0..sections)
            .map(|i| {
                let len = base + usize::from(i < extra);
                let t = self.narrow(d as isize, start as isize, len);
                start += len;
                t
            })
            .collect()
    }

    /// `self.tensor_split(indices, dim)`: views `[..i0], [i0..i1], ..., [ik..]` along `dim` (Python
    /// slice semantics: negative indices count from the end, out-of-range ones clamp).
    pub fn tensor_split_indices(&self, indices: &[isize], dim: isize) -> Result<Vec<Tensor>> {
        self.check_split_rank()?;
        let d = wrap_dim(dim, self.rank())? as isize;
        let mut bounds = vec![None];
        bounds.extend(indices.iter().map(|&i| Some(i)));
        bounds.push(None);
        bounds.windows(2).map(|w| Ok(self.with_layout(self.layout().slice(d, w[0], w[1], 1)?))).collect()
    }

    /// `self.repeat(repeats)`: tiles self `repeats[i]` times along dim `i` (leading repeats add dims).
    pub fn repeat(&self, repeats: impl IntoDims) -> Result<Tensor> {
        let reps = repeats.into_dims();
        if reps.len() < self.rank() {
            return Err(Error::msg(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        let lead = reps.len() - self.rank();
        let mut padded = vec![1usize; lead];
        padded.extend_from_slice(self.dims());
        let out: Vec<isize> = reps.iter().zip(&padded).map(|(&r, &s)| r * s as isize).collect();
        if let Some(&neg) = out.iter().find(|&&s| s < 0) {
            return Err(Error::msg(format!(
                "Trying to create tensor with negative dimension {neg}: {out:?}"
            )));
        }
        let mut view = Vec::with_capacity(2 * reps.len());
        let mut expanded = Vec::with_capacity(2 * reps.len());
        for (&r, &s) in reps.iter().zip(&padded) {
            view.extend([1, s]);
            expanded.extend([r, s as isize]);
        }
        let x = self.reshape(view)?.expand(expanded)?;
        x.contiguous()?.reshape(out)
    }

    /// `self.tile(dims)`: [`Tensor::repeat`] with `dims` padded by leading ones to self's rank.
    pub fn tile(&self, dims: impl IntoDims) -> Result<Tensor> {
        let mut reps = dims.into_dims();
        if reps.len() < self.rank() {
            let mut padded = vec![1isize; self.rank() - reps.len()];
            padded.extend(reps);
            reps = padded;
        }
        self.repeat(reps)
    }

    /// `self.repeat_interleave(repeats, dim)`: every element repeated `repeats` times along `dim`
    /// (of the flattened tensor when `dim` is `None`).
    pub fn repeat_interleave(&self, repeats: i64, dim: Option<isize>) -> Result<Tensor> {
        if repeats < 0 {
            return Err(Error::msg("Repeats must be non-negative"));
        }
        let (x, d) = match dim {
            None => (self.reshape([-1])?, 0),
            Some(d) => (self.clone(), wrap_dim(d, self.rank())?),
        };
        let x = x.atleast_1d()?;
        let mut expanded: Vec<isize> = x.dims().iter().map(|&s| s as isize).collect();
        expanded.insert(d + 1, repeats as isize);
        let mut out: Vec<usize> = x.dims().to_vec();
        out[d] *= repeats as usize;
        x.unsqueeze(d as isize + 1)?.expand(expanded)?.contiguous()?.reshape(out)
    }

    /// `self.repeat_interleave(repeats_tensor, dim)`: element `i` along `dim` repeated `repeats[i]`
    /// times (a one-element `repeats` applies to all).
    pub fn repeat_interleave_tensor(&self, repeats: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        if !matches!(repeats.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "\"repeat_interleave_cpu\" not implemented for '{}'",
                repeats.dtype().scalar_type_name()
            )));
        }
        if repeats.rank() > 1 {
            return Err(Error::msg("repeats must be 0-dim or 1-dim tensor"));
        }
        let reps = repeats.to_dtype(DType::I64)?.to_vec::<i64>()?;
        if reps.len() == 1 {
            return self.repeat_interleave(reps[0], dim);
        }
        let (x, d) = match dim {
            None => (self.reshape([-1])?, 0),
            Some(d) => (self.clone(), wrap_dim(d, self.rank())?),
        };
        let x = x.atleast_1d()?;
        if reps.len() != x.dims()[d] {
            return Err(Error::msg(format!(
                "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {}",
                reps.len(),
                x.dims()[d]
            )));
        }
        x.index_select(d as isize, &Tensor::repeat_interleave_index(&reps)?)
    }

    /// `torch.repeat_interleave(repeats)`: `i` repeated `repeats[i]` times, for a 1-d int tensor.
    pub fn repeat_interleave_self(repeats: &Tensor) -> Result<Tensor> {
        if !matches!(repeats.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "\"repeat_interleave_cpu\" not implemented for '{}'",
                repeats.dtype().scalar_type_name()
            )));
        }
        if repeats.rank() != 1 {
            return Err(Error::msg("repeat_interleave only accept 1D vector as repeat"));
        }
        let idx = Tensor::repeat_interleave_index(&repeats.to_dtype(DType::I64)?.to_vec::<i64>()?)?;
        idx.to_dtype(repeats.dtype())
    }

    /// `[0; r0] ++ [1; r1] ++ ...` as an int64 tensor, refusing negative counts.
    fn repeat_interleave_index(reps: &[i64]) -> Result<Tensor> {
        if reps.iter().any(|&r| r < 0) {
            return Err(Error::msg("repeats can not be negative"));
        }
        let idx: Vec<i64> =
            reps.iter().enumerate().flat_map(|(i, &r)| std::iter::repeat_n(i as i64, r as usize)).collect();
        let n = idx.len();
        Tensor::from_vec(idx, [n])
    }

    /// `self.flip(dims)`: a copy with the order of entries reversed along each of `dims`.
    pub fn flip(&self, dims: impl IntoDims) -> Result<Tensor> {
        let dims = unique_dims(&dims.into_dims(), self.rank(), |d| {
            format!("dim {d} appears multiple times in the list of dims")
        })?;
        let mut out = self.copy()?;
        for d in dims {
            let size = out.dims().get(d).copied().unwrap_or(1);
            if size > 1 {
                let rev: Vec<i64> = (0..size as i64).rev().collect();
                out = out.gather_along(d, &Tensor::from_vec(rev, [size])?)?;
            }
        }
        Ok(out)
    }

    /// Entries `index` (int64, in range) along `dim`, without the checks of `index_select`.
    fn gather_along(&self, dim: usize, index: &Tensor) -> Result<Tensor> {
        let mut shape = self.dims().to_vec();
        shape[dim] = index.numel();
        let mut view = vec![1usize; shape.len()];
        view[dim] = index.numel();
        self.gather_raw(dim, &index.reshape(view)?.broadcast_to(&shape)?)
    }

    /// `self.fliplr()`: flips dim 1 (needs at least 2 dims).
    pub fn fliplr(&self) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg("Input must be >= 2-d."));
        }
        self.flip(1)
    }

    /// `self.flipud()`: flips dim 0 (needs at least 1 dim).
    pub fn flipud(&self) -> Result<Tensor> {
        if self.rank() < 1 {
            return Err(Error::msg("Input must be >= 1-d."));
        }
        self.flip(0)
    }

    /// `self.roll(shifts, dims)`: entries shifted cyclically by `shifts[i]` along `dims[i]`; with no
    /// dims, the flattened tensor rolls by the single shift and keeps its shape.
    pub fn roll(&self, shifts: impl IntoDims, dims: impl IntoDims) -> Result<Tensor> {
        let (shifts, dims) = (shifts.into_dims(), dims.into_dims());
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::msg(format!(
                    "shifts and dimensions must align. shifts: {}, dims:0",
                    shifts.len()
                )));
            }
            return self.reshape([-1])?.roll(shifts, [0])?.reshape(self.dims().to_vec());
        }
        if shifts.len() != dims.len() {
            return Err(Error::msg(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let mut out = self.copy()?;
        for (&shift, &dim) in shifts.iter().zip(&dims) {
            let d = wrap_dim(dim, self.rank())?;
            let size = out.dims().get(d).copied().unwrap_or(1) as isize;
            if size == 0 || self.rank() == 0 {
                continue;
            }
            let s = shift.rem_euclid(size);
            if s == 0 {
                continue;
            }
            let tail = out.narrow(d as isize, size - s, s as usize)?;
            let head = out.narrow(d as isize, 0, (size - s) as usize)?;
            out = Tensor::cat(&[&tail, &head], d as isize)?;
        }
        Ok(out)
    }

    /// `self.rot90(k, dims)`: rotation by 90° `k` times in the plane of `dims` (from the first
    /// towards the second).
    pub fn rot90(&self, k: i64, dims: impl IntoDims) -> Result<Tensor> {
        let dims = dims.into_dims();
        if dims.len() != 2 {
            return Err(Error::msg(format!(
                "expected total rotation dims == 2, but got dims = {}",
                dims.len()
            )));
        }
        if self.rank() < 2 {
            return Err(Error::msg(format!(
                "expected total dims >= 2, but got total dims = {}",
                self.rank()
            )));
        }
        let (d0, d1) = (wrap_dim(dims[0], self.rank())?, wrap_dim(dims[1], self.rank())?);
        if d0 == d1 {
            return Err(Error::msg(format!(
                "expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
            )));
        }
        let (a, b) = (d0 as isize, d1 as isize);
        match k.rem_euclid(4) {
            1 => self.flip(b)?.transpose(a, b),
            2 => self.flip([a, b]),
            3 => self.flip(a)?.transpose(a, b),
            _ => self.copy(),
        }
    }

    /// Keeps the entries of the last two dims with `col - row` accepted by `keep`, zeroes the rest.
    fn triangle(&self, name: &str, diagonal: i64, lower: bool) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg(format!("{name}: input tensor must have at least 2 dimensions")));
        }
        let (m, n) = (self.dims()[self.rank() - 2], self.dims()[self.rank() - 1]);
        let rows = Tensor::arange(m as i64, DType::I64)?.reshape([m, 1])?;
        let cols = Tensor::arange(n as i64, DType::I64)?.reshape([1, n])?;
        let diff = cols.sub(&rows)?;
        let keep = if lower { diff.le(diagonal)? } else { diff.ge(diagonal)? };
        let zero = Tensor::zeros((), self.same_options())?;
        Tensor::where_cond(&keep, self, &zero)
    }

    /// `self.tril(diagonal)`: the lower triangle of the last two dims (entries with
    /// `col - row <= diagonal`), zero elsewhere.
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("tril", diagonal, true)
    }

    /// `self.triu(diagonal)`: the upper triangle of the last two dims (entries with
    /// `col - row >= diagonal`), zero elsewhere.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("triu", diagonal, false)
    }

    /// `self.unfold(dimension, size, step)`: a view with every window of `size` entries along
    /// `dimension` (taken every `step`), the window as a new last dim.
    pub fn unfold(&self, dimension: isize, size: usize, step: usize) -> Result<Tensor> {
        let d = wrap_dim(dimension, self.rank())?;
        let len = self.dims().get(d).copied().unwrap_or(1);
        if size > len {
            return Err(Error::msg(format!(
                "maximum size for tensor at dimension {d} is {len} but size is {size}"
            )));
        }
        if step == 0 {
            return Err(Error::msg("step is 0 but must be > 0"));
        }
        let (mut sizes, mut strides) = (self.dims().to_vec(), self.strides().to_vec());
        if self.rank() == 0 {
            return self.as_strided(&[size], &[1], None);
        }
        let stride = strides[d];
        sizes[d] = (len - size) / step + 1;
        strides[d] = stride * step;
        sizes.push(size);
        strides.push(stride);
        self.as_strided(&sizes, &strides, None)
    }

    /// `torch.meshgrid(tensors, indexing)`: coordinate grids (expanded views) of 0-d/1-d tensors of
    /// one dtype; `indexing` is "ij" (matrix) or "xy" (Cartesian: the first two dims swapped).
    pub fn meshgrid(tensors: &[&Tensor], indexing: &str) -> Result<Vec<Tensor>> {
        if indexing != "ij" && indexing != "xy" {
            return Err(Error::msg(format!(
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}"
            )));
        }
        if tensors.is_empty() {
            return Err(Error::msg("torch.meshgrid: Expected at least one tensor"));
        }
        for t in tensors {
            if t.rank() > 1 {
                return Err(Error::msg("torch.meshgrid: Expected 0D or 1D tensor in the tensor list"));
            }
            if t.dtype() != tensors[0].dtype() {
                return Err(Error::msg("meshgrid expects all tensors to have the same dtype"));
            }
        }
        let swap = indexing == "xy" && tensors.len() >= 2;
        let mut order: Vec<&Tensor> = tensors.to_vec();
        if swap {
            order.swap(0, 1);
        }
        let shape: Vec<usize> = order.iter().map(|t| t.numel()).collect();
        let mut grids = order
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut view = vec![1usize; shape.len()];
                view[i] = shape[i];
                t.reshape(view)?.broadcast_to(&shape)
            })
            .collect::<Result<Vec<_>>>()?;
        if swap {
            grids.swap(0, 1);
        }
        Ok(grids)
    }

    /// `torch.broadcast_tensors`: every tensor expanded (as a view) to the common broadcast shape.
    pub fn broadcast_tensors(tensors: &[&Tensor]) -> Result<Vec<Tensor>> {
        let mut shape: Vec<usize> = Vec::new();
        for t in tensors {
            shape = oxtorch_core::broadcast_shapes(&shape, t.dims())?;
        }
        tensors.iter().map(|t| t.broadcast_to(&shape)).collect()
    }

    /// `self.movedim(source, destination)`: a view with dims `source` moved to positions
    /// `destination`, the others keeping their order.
    pub fn movedim(&self, source: impl IntoDims, destination: impl IntoDims) -> Result<Tensor> {
        let (src, dst) = (source.into_dims(), destination.into_dims());
        if src.len() != dst.len() {
            return Err(Error::msg(format!(
                "movedim: Invalid source or destination dims: source ({src:?} dims) should contain the same number of dims as destination ({dst:?} dims)"
            )));
        }
        let r = self.rank();
        let s = unique_dims(&src, r, |_| format!("movedim: repeated dim in `source` ({src:?})"))?;
        let d = unique_dims(&dst, r, |_| format!("movedim: repeated dim in `destination` ({dst:?})"))?;
        let mut perm: Vec<Option<usize>> = vec![None; r.max(1)];
        for (&si, &di) in s.iter().zip(&d) {
            perm[di] = Some(si);
        }
        let mut rest = (0..r).filter(|k| !s.contains(k));
        let perm: Vec<isize> =
            perm.into_iter().take(r).map(|p| p.or_else(|| rest.next()).unwrap_or(0) as isize).collect();
        self.permute(perm)
    }

    /// `self.moveaxis(source, destination)`: the same as [`Tensor::movedim`].
    pub fn moveaxis(&self, source: impl IntoDims, destination: impl IntoDims) -> Result<Tensor> {
        self.movedim(source, destination)
    }

    /// `self.swapaxes(d0, d1)`: the same as [`Tensor::transpose`].
    pub fn swapaxes(&self, d0: isize, d1: isize) -> Result<Tensor> {
        self.transpose(d0, d1)
    }

    /// `self.swapdims(d0, d1)`: the same as [`Tensor::transpose`].
    pub fn swapdims(&self, d0: isize, d1: isize) -> Result<Tensor> {
        self.transpose(d0, d1)
    }

    /// `torch.nn.functional.pad(self, pad, mode, value)`: `pad` lists `(before, after)` pairs from
    /// the last dim backwards. `mode` is "constant" (negative pads crop; `value` defaults to 0),
    /// "reflect", "replicate" or "circular" (which pad the last 1, 2 or 3 dims of a tensor with one
    /// or two more dims, as torch).
    pub fn pad(&self, pad: &[isize], mode: &str, value: Option<f64>) -> Result<Tensor> {
        pad::pad(self, pad, mode, value.map(Scalar::Float))
    }
}
