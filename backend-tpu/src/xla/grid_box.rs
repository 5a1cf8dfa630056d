//! Strided views read and written as boxes of their buffer's grid.
//!
//! A view whose strides nest (sorted by decreasing stride, each a multiple of the next, each dim
//! fitting inside one step of the dim before: rows, columns, a KV cache position of every head) in
//! a buffer whose length is a multiple of the outer stride `s₀` is a box of the buffer reshaped to
//! the grid `[len / s₀, s₀ / s₁, ..., s_last]`: sizes `[n₀, ..., n_last, 1]`, placed at the grid
//! coordinates of the view's offset, provided the box does not run past the end of a grid row
//! there (a view of part of a tensor never does; a view cut across the rows of its storage can).
//! Reading it is one `dynamic_slice` of the reshaped buffer and writing it one
//! `dynamic_update_slice`, which XLA does in place: no padded copy of the buffer, no gather of
//! every element, no select over the whole buffer. Whether a view is such a box depends on its
//! offset, so the program caches' keys record it ([`in_grid`]).

use oxtorch_core::Layout;

use super::materialize::{compact_dims, i64_array, index_type, int_const, nested, reshape};
use crate::pjrt::TensorType;
use crate::stablehlo::{FunctionBuilder, Value};

/// A view as a box of its buffer's grid (see the module docs).
pub(crate) struct GridBox {
    /// The view's compact dims (indices into [`compact_dims`]) by decreasing stride.
    pub order: Vec<usize>,
    /// The grid's sizes: `[len / s₀, s₀ / s₁, ..., s_last]`.
    grid: Vec<usize>,
    /// Each grid dim's stride in the flat buffer: `[s₀, ..., s_last, 1]`.
    strides: Vec<usize>,
    /// The box's sizes: the sorted view sizes, then 1.
    sizes: Vec<usize>,
}

/// Whether the view `layout` of a buffer of `len` elements is a box of the buffer's grid at its
/// current offset: a bit of the program caches' keys, since the emitted program depends on it.
/// Contiguous views never take the grid path (they are one slice), so for them it is `false`
/// without the work: the eager dispatch of every op asks.
pub(crate) fn in_grid(layout: &Layout, len: usize) -> bool {
    !layout.is_contiguous() && grid_box(layout, len).is_some()
}

/// The view `layout` of a buffer of `len` elements as a box of the buffer's grid, when it is one
/// at its current offset. Views with broadcast dims (stride 0, size > 1) or no dim of size > 1 are
/// not.
pub(crate) fn grid_box(layout: &Layout, len: usize) -> Option<GridBox> {
    if layout.numel() <= 1 || layout.dims().iter().zip(layout.strides()).any(|(&n, &s)| n > 1 && s == 0) {
        return None;
    }
    let compact = compact_dims(layout);
    let mut order: Vec<usize> = (0..compact.len()).collect();
    order.sort_by(|&a, &b| compact[b].2.cmp(&compact[a].2));
    let sorted: Vec<(usize, usize)> = order.iter().map(|&k| (compact[k].1, compact[k].2)).collect();
    let s0 = sorted[0].1;
    if !nested(&sorted) || !len.is_multiple_of(s0) {
        return None;
    }
    let mut grid = vec![len / s0];
    grid.extend(sorted.windows(2).map(|w| w[0].1 / w[1].1));
    grid.push(sorted[sorted.len() - 1].1);
    let mut strides: Vec<usize> = sorted.iter().map(|d| d.1).collect();
    strides.push(1);
    let mut sizes: Vec<usize> = sorted.iter().map(|d| d.0).collect();
    sizes.push(1);
    let offset = layout.offset();
    let fits = (0..grid.len()).all(|i| (offset / strides[i]) % grid[i] + sizes[i] <= grid[i]);
    fits.then_some(GridBox { order, grid, strides, sizes })
}

impl GridBox {
    /// The box's start in each grid dim: constants from `offset`, or computed from the runtime
    /// offset `start` (a 0-d integer) as `(start / stride) % size`.
    fn starts(
        &self,
        b: &mut FunctionBuilder,
        start: Option<&Value>,
        offset: usize,
        len: usize,
    ) -> Vec<Value> {
        let index = TensorType::new(start.map_or(index_type(len), |s| s.ty().element_type), &[]);
        (0..self.grid.len())
            .map(|i| match start {
                None => int_const(b, &index, (offset / self.strides[i]) % self.grid[i]),
                Some(s) => {
                    let mut v = s.clone();
                    if self.strides[i] > 1 {
                        let stride = int_const(b, &index, self.strides[i]);
                        v = b.same("stablehlo.divide", &[&v, &stride]);
                    }
                    if i > 0 {
                        let size = int_const(b, &index, self.grid[i]);
                        v = b.same("stablehlo.remainder", &[&v, &size]);
                    }
                    v
                }
            })
            .collect()
    }

    /// The view's elements from the 1-D `flat`, shaped as its compact dims by decreasing stride.
    pub fn read(&self, b: &mut FunctionBuilder, flat: &Value, start: Option<&Value>, offset: usize) -> Value {
        let len = flat.ty().dims[0] as usize;
        let gridded = reshape(b, flat, &self.grid);
        let starts = self.starts(b, start, offset, len);
        let mut operands = vec![&gridded];
        operands.extend(starts.iter());
        let attrs = format!("slice_sizes = {}", i64_array(self.sizes.iter().map(|&n| n as i64)));
        let ty = TensorType::new(
            flat.ty().element_type,
            &self.sizes.iter().map(|&n| n as i64).collect::<Vec<_>>(),
        );
        let boxed = b.op("stablehlo.dynamic_slice", &operands, &attrs, ty);
        reshape(b, &boxed, &self.sizes[..self.sizes.len() - 1])
    }

    /// The 1-D `flat` with the view's elements replaced by `values`, given in the layout's compact
    /// dims order (`compact_sizes`: their sizes).
    pub fn write(
        &self,
        b: &mut FunctionBuilder,
        flat: &Value,
        start: Option<&Value>,
        offset: usize,
        values: &Value,
        compact_sizes: &[usize],
    ) -> Value {
        let len = flat.ty().dims[0] as usize;
        let mut update = reshape(b, values, compact_sizes);
        if self.order.iter().enumerate().any(|(i, &k)| i != k) {
            let perm: Vec<i64> = self.order.iter().map(|&k| k as i64).collect();
            update = b.transpose(&update, &perm);
        }
        let update = reshape(b, &update, &self.sizes);
        let gridded = reshape(b, flat, &self.grid);
        let starts = self.starts(b, start, offset, len);
        let mut operands = vec![&gridded, &update];
        operands.extend(starts.iter());
        let written = b.op("stablehlo.dynamic_update_slice", &operands, "", gridded.ty().clone());
        reshape(b, &written, &[len])
    }
}
