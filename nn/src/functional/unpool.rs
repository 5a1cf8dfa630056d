//! torch's `F.max_unpool1d/2d/3d`: the partial inverse of max pooling, which puts each value at
//! the flat spatial index its `max_pool*d_with_indices` recorded and zeros elsewhere. One
//! `scatter` into zeros, so the gradient is the output's gradient gathered at the indices
//! (torch's `max_pool_double_backward`). Like torch's, `max_unpool1d` runs as the 2-D op on a
//! trailing unit dim, and its errors name that op and those shapes.

use oxtorch_tensor::{trusted_indices, DType, Error, Result, Tensor};

/// One value for all `n` dims, or one per dim.
fn spread(op: &str, name: &str, v: &[usize], n: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        l => Err(Error::msg(format!(
            "{op}: {name} must be either a single int, or a tuple of {n} ints, got {l} values"
        ))),
    }
}

/// torch's `_unpool_output_size`: `(in - 1) * stride + kernel - 2 * padding` per dim, or the
/// given `output_size` (`n` values, or `n + 2` whose first two are ignored), which must lie
/// strictly within `stride` of that default.
fn unpool_output_size(
    input: &Tensor,
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    output_size: Option<&[usize]>,
) -> Result<Vec<usize>> {
    let n = kernel.len();
    let dims = input.dims();
    let spatial = &dims[dims.len() - n..];
    let default: Vec<i64> = (0..n)
        .map(|d| {
            let (size, s, k, p) =
                (spatial[d] as i128, stride[d] as i128, kernel[d] as i128, padding[d] as i128);
            (size - 1)
                .checked_mul(s)
                .and_then(|v| v.checked_add(k - 2 * p))
                .and_then(|v| i64::try_from(v).ok())
                .ok_or_else(|| {
                    Error::msg(format!(
                        "max_unpooling: the output size of dim {d} overflows (input {size}, kernel {k}, stride {s}, padding {p})"
                    ))
                })
        })
        .collect::<Result<_>>()?;
    let sizes: Vec<i64> = match output_size {
        None => default,
        Some(given) => {
            let given = if given.len() == n + 2 { &given[2..] } else { given };
            if given.len() != n {
                return Err(Error::msg(format!(
                    "output_size should be a sequence containing {n} or {} elements, but it has a length of '{}'",
                    n + 2,
                    given.len()
                )));
            }
            for (d, (&v, &def)) in given.iter().zip(&default).enumerate() {
                let s = i64::try_from(stride[d]).unwrap_or(i64::MAX);
                let (min, max, v) =
                    (def.saturating_sub(s), def.saturating_add(s), i64::try_from(v).unwrap_or(i64::MAX));
                if !(min + 1..max).contains(&v) {
                    return Err(Error::msg(format!(
                        "invalid output_size \"{given:?}\" (dim {d} must be between {min} and {max})"
                    )));
                }
            }
            given.iter().map(|&v| v as i64).collect()
        }
    };
    if let Some(d) = sizes.iter().position(|&v| v < 0) {
        return Err(Error::msg(format!(
            "max_unpooling: output_size must contain non-negative spatial dimensions, but got output_size[{d}]={}",
            sizes[d]
        )));
    }
    Ok(sizes.into_iter().map(|v| v as usize).collect())
}

/// torch's `max_unpool2d` (`n = 2`) or `max_unpool3d` (`n = 3`) on `[N, C, *in]` or `[C, *in]`
/// with the output's spatial size `out`: its checks in its order, then the scatter.
fn unpool(n: usize, input: &Tensor, indices: &Tensor, out: &[usize], stride: &[usize]) -> Result<Tensor> {
    if indices.dtype() != DType::I64 {
        return Err(Error::msg(format!(
            "elements in indices should be type int64 but got: {}",
            indices.dtype().scalar_type_name()
        )));
    }
    let dims = input.dims();
    let r = dims.len();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "Input to max_unpooling{n}d should be a {}d or {}d Tensor, but got a tensor with {r} dimensions.",
            n + 1,
            n + 2
        )));
    }
    if indices.dims() != dims {
        return Err(Error::shape(format!(
            "Expected shape of indices to be same as that of the input tensor ({dims:?}) but got indices tensor with shape: {:?}",
            indices.dims()
        )));
    }
    // (dim 0 is not checked, whether it is the batch or, unbatched, the channels)
    if let Some(d) = (1..r).find(|&d| dims[d] == 0) {
        return Err(Error::shape(format!(
            "max_unpooling{n}d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {dims:?} with dimension {d} being empty"
        )));
    }
    if n == 3 && stride.contains(&0) {
        return Err(Error::msg(format!("strides should be greater than zero, but got stride: {stride:?}")));
    }
    if !input.dtype().is_float() {
        let op = if n == 3 { "max_unpool3d" } else { "max_unpool2d" };
        return Err(Error::UnsupportedDType { op, dtype: input.dtype() });
    }
    let lead = &dims[..r - n];
    let rows: usize = lead.iter().product();
    let len_in: usize = dims[r - n..].iter().product();
    let len_out = out.iter().try_fold(1usize, |acc, &v| acc.checked_mul(v)).ok_or_else(|| {
        Error::msg(format!(
            "max_unpooling: an output of spatial size {out:?} has more elements than memory can hold"
        ))
    })?;
    let mut shape = lead.to_vec();
    shape.extend_from_slice(out);
    let zeros = Tensor::zeros(shape.clone(), input.same_options())?;
    if zeros.numel() == 0 || input.numel() == 0 {
        return Ok(zeros);
    }
    let index = indices.reshape([rows, len_in])?;
    let bad = index.lt(0i64)?.logical_or(&index.ge(len_out as i64)?)?;
    if bad.any()?.item::<bool>()? {
        // torch's kernel reports the last invalid index it meets.
        let all = index.to_vec::<i64>()?;
        let last = all.iter().rev().copied().find(|&i| i < 0 || i >= len_out as i64).unwrap_or(-1);
        let sizes: Vec<String> = out.iter().map(|s| s.to_string()).collect();
        return Err(Error::msg(format!(
            "Found an invalid max index: {last} (output volumes are of size {})",
            sizes.join("x")
        )));
    }
    let src = input.reshape([rows, len_in])?;
    let scattered = trusted_indices(|| zeros.reshape([rows, len_out])?.scatter(1, &index, &src))?;
    scattered.reshape(shape)
}

/// Shared by the three: the sizes spread over `n` dims, the output size, the op.
fn max_unpool_nd(
    n: usize,
    input: &Tensor,
    indices: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    output_size: Option<&[usize]>,
) -> Result<Tensor> {
    let op = ["max_unpool1d", "max_unpool2d", "max_unpool3d"][n - 1];
    let kernel = spread(op, "kernel_size", kernel_size, n)?;
    let stride = match stride {
        Some(s) if !s.is_empty() => spread(op, "stride", s, n)?,
        _ => kernel.clone(),
    };
    let padding = spread(op, "padding", padding, n)?;
    if input.rank() < n {
        // (torch's Python front end fails indexing the input's size here)
        let cpp = n.max(2);
        return Err(Error::shape(format!(
            "Input to max_unpooling{cpp}d should be a {}d or {}d Tensor, but got a tensor with {} dimensions.",
            cpp + 1,
            cpp + 2,
            input.rank() + cpp - n
        )));
    }
    let out = unpool_output_size(input, &kernel, &stride, &padding, output_size)?;
    if n == 1 {
        let y = unpool(2, &input.unsqueeze(-1)?, &indices.unsqueeze(-1)?, &[out[0], 1], &[stride[0], 1])?;
        return y.squeeze_dims(-1);
    }
    unpool(n, input, indices, &out, &stride)
}

/// torch's `F.max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None)`:
/// `input` `[N, C, L]` or `[C, L]` and the `indices` of `max_pool1d_with_indices` (int64, the same
/// shape) give `[N, C, L_out]` with each value at its index and zeros elsewhere. `L_out` is
/// `(L - 1) * stride + kernel_size - 2 * padding` unless `output_size` (`[L_out]` or
/// `[N, C, L_out]`) picks one within `stride` of it; `stride` `None` means `kernel_size`.
pub fn max_unpool1d(
    input: &Tensor,
    indices: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    output_size: Option<&[usize]>,
) -> Result<Tensor> {
    max_unpool_nd(1, input, indices, kernel_size, stride, padding, output_size)
}

/// torch's `F.max_unpool2d`: as [`max_unpool1d`] over `[N, C, H, W]` or `[C, H, W]` with the flat
/// `H·W` indices of `max_pool2d_with_indices`; one value in a size list serves both dims.
pub fn max_unpool2d(
    input: &Tensor,
    indices: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    output_size: Option<&[usize]>,
) -> Result<Tensor> {
    max_unpool_nd(2, input, indices, kernel_size, stride, padding, output_size)
}

/// torch's `F.max_unpool3d`: as [`max_unpool1d`] over `[N, C, D, H, W]` or `[C, D, H, W]` with the
/// flat `D·H·W` indices of `max_pool3d_with_indices`.
pub fn max_unpool3d(
    input: &Tensor,
    indices: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    output_size: Option<&[usize]>,
) -> Result<Tensor> {
    max_unpool_nd(3, input, indices, kernel_size, stride, padding, output_size)
}
