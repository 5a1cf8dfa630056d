//! Advanced indexing: index tensors broadcast together, turned into one linear index over the
//! indexed dims, gathered, and the broadcast dims placed where torch puts them.

use oxtorch_core::{broadcast_shapes, DType, Error, Result};

use super::{checked_indices, oob};
use crate::Tensor;

/// The broadcast shape of all index tensors, with torch's message when they do not broadcast.
pub(crate) fn broadcast_indices(adv: &[(usize, Tensor)]) -> Result<Vec<usize>> {
    let mut shape: Vec<usize> = Vec::new();
    for (_, t) in adv {
        shape = broadcast_shapes(&shape, t.dims()).map_err(|_| {
            let shapes: Vec<String> = adv.iter().map(|(_, t)| format!("{:?}", t.dims())).collect();
            Error::msg(format!(
                "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                shapes.join(", ")
            ))
        })?;
    }
    Ok(shape)
}

/// `view[..., idx_1, ..., idx_k, ...]` for index tensors `adv` (int64) at increasing dims of `view`.
pub(crate) fn gather_advanced(view: &Tensor, adv: &[(usize, Tensor)]) -> Result<Tensor> {
    let b = broadcast_indices(adv)?;
    let n_b: usize = b.iter().product();
    let dims: Vec<usize> = adv.iter().map(|(d, _)| *d).collect();
    let sizes: Vec<usize> = dims.iter().map(|&d| view.dims()[d]).collect();

    // One linear index over the indexed dims (row-major in their order), checked per dim.
    let mut linear = vec![0i64; n_b];
    for ((d, idx), &size) in adv.iter().zip(&sizes) {
        let vals =
            checked_indices(&idx.broadcast_to(&b)?, size, true, |v| oob(v, *d, size))?.to_vec::<i64>()?;
        for (l, v) in linear.iter_mut().zip(vals) {
            *l = *l * size as i64 + v;
        }
    }

    // Indexed dims first, the others after them in order.
    let rest: Vec<usize> = (0..view.rank()).filter(|d| !dims.contains(d)).collect();
    let perm: Vec<usize> = dims.iter().chain(&rest).copied().collect();
    let rest_sizes: Vec<usize> = rest.iter().map(|&d| view.dims()[d]).collect();
    let mut flat_shape = vec![sizes.iter().product::<usize>()];
    flat_shape.extend(&rest_sizes);
    let flat = view.permute(perm)?.reshape(flat_shape)?;

    let mut out_shape = vec![n_b];
    out_shape.extend(&rest_sizes);
    let mut idx_view = vec![1usize; out_shape.len()];
    idx_view[0] = n_b;
    let idx = Tensor::from_vec_on(linear, idx_view, view.device())?.broadcast_to(&out_shape)?;
    let mut full_shape = b.clone();
    full_shape.extend(&rest_sizes);
    let out = flat.gather_raw(0, &idx)?.reshape(full_shape)?;

    // Adjacent advanced indices keep their place; separated ones go first.
    let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
    let first = dims[0];
    if !adjacent || first == 0 {
        return Ok(out);
    }
    let nb = b.len();
    let perm: Vec<usize> = (nb..nb + first).chain(0..nb).chain(nb + first..out.rank()).collect();
    out.permute(perm)?.contiguous()
}

/// Flat offsets (into a contiguous tensor of `shape`) of the elements `indices` select.
pub(crate) fn selected_offsets(
    shape: &[usize],
    indices: &[super::TensorIndex],
    device: oxtorch_core::Device,
) -> Result<Tensor> {
    let n = shape.iter().product::<usize>();
    let offsets = Tensor::arange(n as i64, (DType::I64, device))?.reshape(shape.to_vec())?;
    let super::Basic { view, advanced } = super::apply_basic(&offsets, indices)?;
    if advanced.is_empty() {
        Ok(view)
    } else {
        gather_advanced(&view, &advanced)
    }
}
