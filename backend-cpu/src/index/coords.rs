//! Row-major coordinates, walked one element at a time from any starting flat index.

/// The coordinates of successive elements of a shape in row-major order.
pub(crate) struct Odometer<'a> {
    dims: &'a [usize],
    coords: Vec<usize>,
}

impl<'a> Odometer<'a> {
    /// Starts at the element with row-major flat index `start`.
    pub(crate) fn new(dims: &'a [usize], start: usize) -> Self {
        let mut coords = vec![0; dims.len()];
        let mut rest = start;
        for d in (0..dims.len()).rev() {
            if dims[d] > 0 {
                coords[d] = rest % dims[d];
                rest /= dims[d];
            }
        }
        Odometer { dims, coords }
    }

    /// The current coordinates.
    pub(crate) fn coords(&self) -> &[usize] {
        &self.coords
    }

    /// Moves to the next element (wrapping to all zeros after the last).
    pub(crate) fn advance(&mut self) {
        for d in (0..self.dims.len()).rev() {
            self.coords[d] += 1;
            if self.coords[d] < self.dims[d] {
                return;
            }
            self.coords[d] = 0;
        }
    }
}

/// `offset + Σ coords[d] * strides[d]`, with `coords[skip]` left out.
pub(crate) fn offset_without(coords: &[usize], strides: &[usize], offset: usize, skip: usize) -> usize {
    let mut o = offset;
    for d in 0..coords.len() {
        if d != skip {
            o += coords[d] * strides[d];
        }
    }
    o
}

/// torch's message for an index outside `0..size`.
pub(crate) fn out_of_bounds(index: i64, dim: usize, size: usize) -> oxtorch_core::Error {
    oxtorch_core::Error::msg(format!("index {index} is out of bounds for dimension {dim} with size {size}"))
}

/// Checks every index of the view `(idx, layout)` against `0..size`.
pub(crate) fn check_indices(
    idx: &[i64],
    layout: &oxtorch_core::Layout,
    dim: usize,
    size: usize,
) -> oxtorch_core::Result<()> {
    // A broadcast index (stride 0 along some dims) repeats its elements: each is checked once.
    let dims: Vec<usize> = layout
        .dims()
        .iter()
        .zip(layout.strides())
        .map(|(&n, &st)| if st == 0 { n.min(1) } else { n })
        .collect();
    let distinct = oxtorch_core::Layout::new(dims, layout.strides().to_vec(), layout.offset())?;
    let check = |v: i64| if v < 0 || v as usize >= size { Err(out_of_bounds(v, dim, size)) } else { Ok(()) };
    match distinct.contiguous_range() {
        Some(range) => idx[range].iter().try_for_each(|&v| check(v)),
        None => distinct.indices().try_for_each(|o| check(idx[o])),
    }
}
