//! `torch.unique(dim=d)` and `torch.unique_consecutive(dim=d)`: distinct slices along a dim,
//! found on the host from the slices' values and gathered with `index_select` on the tensor's
//! device.

use std::cmp::Ordering;

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::Tensor;

/// The slices along a dim, flattened to rows of numbers that compare as the elements do.
enum Rows {
    /// floats (and half floats, exactly)
    Float(Vec<f64>, usize),
    /// integers and bools
    Int(Vec<i64>, usize),
}

impl Rows {
    /// The sort order of rows: lexicographic, a NaN element after every number (a total order, as
    /// sorting needs; torch's leaves rows with NaN unordered).
    fn order(&self, a: usize, b: usize) -> Ordering {
        match self {
            Rows::Float(v, m) => {
                for (x, y) in v[a * m..(a + 1) * m].iter().zip(&v[b * m..(b + 1) * m]) {
                    let by_value = match (x.is_nan(), y.is_nan()) {
                        (false, false) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
                        (nan_x, nan_y) => nan_x.cmp(&nan_y),
                    };
                    if by_value != Ordering::Equal {
                        return by_value;
                    }
                }
                Ordering::Equal
            }
            Rows::Int(v, m) => v[a * m..(a + 1) * m].cmp(&v[b * m..(b + 1) * m]),
        }
    }

    /// Rows equal element by element (a NaN equals nothing, so rows with one are all distinct).
    fn equal(&self, a: usize, b: usize) -> bool {
        match self {
            Rows::Float(v, m) => v[a * m..(a + 1) * m] == v[b * m..(b + 1) * m],
            Rows::Int(v, m) => v[a * m..(a + 1) * m] == v[b * m..(b + 1) * m],
        }
    }
}

impl Tensor {
    /// torch's `unique(dim=dim, return_inverse, return_counts)`: the distinct slices along `dim`,
    /// sorted lexicographically (a slice holding NaN is distinct from every other), the index of
    /// each input slice's distinct slice, and how many input slices each one stands for.
    pub fn unique_dim(
        &self,
        dim: isize,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        self.unique_slices(dim, false, return_inverse, return_counts)
    }

    /// torch's `unique_consecutive(dim=dim, ...)`: runs of equal consecutive slices along `dim`
    /// collapsed to one.
    pub fn unique_consecutive_dim(
        &self,
        dim: isize,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        self.unique_slices(dim, true, return_inverse, return_counts)
    }

    fn unique_slices(
        &self,
        dim: isize,
        consecutive: bool,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        let d = wrap_dim(dim, self.rank().max(1))?;
        if self.rank() == 0 {
            return Err(Error::msg(format!(
                "Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
            )));
        }
        let n = self.dims()[d];
        if self.numel() == 0 && n != 0 {
            return Err(Error::msg(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
            ));
        }
        let width = self.numel().checked_div(n).unwrap_or(0);
        let flat =
            self.detach().movedim(d as isize, 0)?.reshape([n, width])?.to(oxtorch_core::Device::Cpu)?;
        let rows = if self.is_floating_point() {
            Rows::Float(flat.to_dtype(DType::F64)?.to_vec::<f64>()?, width)
        } else {
            Rows::Int(flat.to_dtype(DType::I64)?.to_vec::<i64>()?, width)
        };
        let mut order: Vec<usize> = (0..n).collect();
        if !consecutive {
            order.sort_by(|&a, &b| rows.order(a, b));
        }
        let (mut firsts, mut counts, mut inverse) = (Vec::new(), Vec::<i64>::new(), vec![0i64; n]);
        for (k, &row) in order.iter().enumerate() {
            if k == 0 || !rows.equal(order[k - 1], row) {
                firsts.push(row as i64);
                counts.push(0);
            }
            inverse[row] = (firsts.len() - 1) as i64;
            *counts.last_mut().expect("a group was started") += 1;
        }
        let device = self.device();
        let picked = Tensor::from_vec(firsts.clone(), [firsts.len()])?.to(device)?;
        let values = self.index_select(d as isize, &picked)?;
        let inverse = return_inverse.then(|| Tensor::from_vec(inverse, [n])?.to(device)).transpose()?;
        let counts = return_counts
            .then(|| Tensor::from_vec(counts.clone(), [counts.len()])?.to(device))
            .transpose()?;
        Ok((values, inverse, counts))
    }
}
