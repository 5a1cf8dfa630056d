//! `linalg.vector_norm`, `linalg.matrix_norm` and `linalg.norm`, which dispatches between them as
//! torch does; the spectral matrix norms go through `svdvals`.

use oxtorch_core::{promote_types, wrap_dim, DType, Error, Result};

use super::batch::{check_float, check_matrix};
use super::svd::svdvals;
use crate::{IntoDims, Tensor};

/// A norm's `ord`: a number (`f64::INFINITY` for inf) or torch's string orders `'fro'` and
/// `'nuc'`. Made from `f64`, `i32` or `&str` (any other string is [`NormOrd::Other`], refused by
/// the matrix norms as torch refuses it).
#[derive(Clone, Debug, PartialEq)]
pub enum NormOrd {
    /// `'fro'`: the Frobenius norm.
    Fro,
    /// `'nuc'`: the nuclear norm (sum of singular values).
    Nuc,
    /// A numeric order.
    P(f64),
    /// Any other string.
    Other(String),
}

impl From<f64> for NormOrd {
    fn from(p: f64) -> Self {
        NormOrd::P(p)
    }
}

impl From<i32> for NormOrd {
    fn from(p: i32) -> Self {
        NormOrd::P(f64::from(p))
    }
}

impl From<&str> for NormOrd {
    fn from(s: &str) -> Self {
        match s {
            "fro" => NormOrd::Fro,
            "nuc" => NormOrd::Nuc,
            other => NormOrd::Other(other.to_string()),
        }
    }
}

/// torch's `check_linalg_norm_dtype`: `dtype` must be a float dtype the input widens to.
fn check_dtype(op: &str, input: DType, dtype: Option<DType>) -> Result<()> {
    let Some(dtype) = dtype else { return Ok(()) };
    if !dtype.is_float() {
        return Err(Error::msg(format!(
            "{op}: dtype should be floating point or complex, but got {}",
            dtype.scalar_type_name()
        )));
    }
    if promote_types(input, dtype) != dtype {
        return Err(Error::msg(format!(
            "{op}: the dtype of the input ({}) should be convertible without narrowing to the specified dtype ({})",
            input.scalar_type_name(),
            dtype.scalar_type_name()
        )));
    }
    Ok(())
}

/// `torch.linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype)`: the `ord`-norm of `x` over `dim`
/// (an empty list means all dims): `ord` 2, 1, inf (max `|x|`), -inf (min `|x|`), 0 (count of
/// non-zeros) or any other `p` as `sum(|x|^p)^(1/p)`. Float inputs only; `dtype` (a float dtype
/// `x`'s widens to) casts `x` before computing.
pub fn vector_norm(
    x: &Tensor,
    ord: f64,
    dim: impl IntoDims,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    const OP: &str = "linalg.vector_norm";
    check_float(OP, x, true)?;
    check_dtype(OP, x.dtype(), dtype)?;
    x.to_dtype(dtype.unwrap_or(x.dtype()))?.norm(ord, dim, keepdim)
}

/// `torch.linalg.matrix_norm(A, ord, dim, keepdim, dtype=dtype)`: the matrix norm of the
/// matrices in dims `dim` (two distinct dims, `[-2, -1]` in torch's default) of `A`: `'fro'`,
/// `'nuc'` (sum of singular values), 2/-2 (largest/smallest singular value), 1/-1 (max/min
/// column sum of `|A|`), inf/-inf (max/min row sum). The singular-value orders need float32 or
/// float64; `dtype` casts `A` first, as in [`vector_norm`].
pub fn matrix_norm(
    a: &Tensor,
    ord: impl Into<NormOrd>,
    dim: impl IntoDims,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    const OP: &str = "linalg.matrix_norm";
    let ord = ord.into();
    let spectral = match &ord {
        NormOrd::Fro => false,
        NormOrd::Nuc => true,
        NormOrd::P(p) if p.abs() == 2.0 => true,
        NormOrd::P(p) if p.abs() == 1.0 || p.abs() == f64::INFINITY => false,
        NormOrd::P(p) => return Err(Error::msg(format!("{OP}: Order {p} not supported."))),
        NormOrd::Other(s) => return Err(Error::msg(format!("{OP}: Order {s} not supported."))),
    };
    check_matrix(OP, a, "A")?;
    check_float(OP, a, !spectral)?;
    let dims = dim.into_dims();
    if dims.len() != 2 {
        let shown: Vec<String> = dims.iter().map(isize::to_string).collect();
        return Err(Error::msg(format!("{OP}: dim must be a 2-tuple. Got {}", shown.join(" "))));
    }
    let (d0, d1) = (wrap_dim(dims[0], a.rank())?, wrap_dim(dims[1], a.rank())?);
    if d0 == d1 {
        return Err(Error::msg(format!("{OP}: dims must be different. Got ({d0}, {d1})")));
    }
    check_dtype(OP, a.dtype(), dtype)?;
    let a = a.to_dtype(dtype.unwrap_or(a.dtype()))?;
    match ord {
        NormOrd::Fro => a.norm(2.0, [d0 as isize, d1 as isize], keepdim),
        NormOrd::P(p) if !spectral => {
            // max/min over one dim of the 1-norms over the other (inf: the rows' sums)
            let (sum_dim, mut max_dim) = if p.abs() == 1.0 { (d0, d1) } else { (d1, d0) };
            if !keepdim && sum_dim < max_dim {
                max_dim -= 1;
            }
            let sums = a.norm(1.0, [sum_dim as isize], keepdim)?;
            if p > 0.0 {
                sums.amax([max_dim as isize], keepdim)
            } else {
                sums.amin([max_dim as isize], keepdim)
            }
        }
        ord => {
            let mut perm: Vec<usize> = (0..a.rank()).filter(|&d| d != d0 && d != d1).collect();
            perm.extend([d0, d1]);
            let s = svdvals(&a.permute(perm)?)?;
            let empty = s.size(-1)? == 0;
            let out = match ord {
                NormOrd::Nuc => s.sum([-1], false)?,
                NormOrd::P(p) if p > 0.0 && empty => {
                    // torch's 2-norm of an empty matrix is 0
                    Tensor::zeros(s.dims()[..s.rank() - 1].to_vec(), s.same_options())?
                }
                NormOrd::P(_) if empty => {
                    return Err(Error::msg("amin(): Expected reduction dim -1 to have non-zero size."));
                }
                NormOrd::P(p) if p > 0.0 => s.amax([-1], false)?,
                _ => s.amin([-1], false)?,
            };
            if keepdim {
                out.unsqueeze(d0.min(d1) as isize)?.unsqueeze(d0.max(d1) as isize)
            } else {
                Ok(out)
            }
        }
    }
}

/// `torch.linalg.norm(A, ord, dim, keepdim, dtype=dtype)`: a matrix norm ([`matrix_norm`]) when
/// `ord` is a string, or `ord` is given and either `dim` has two entries or `dim` is `None` and
/// `A` is 2-D (then over dims `(0, 1)`); otherwise the vector norm ([`vector_norm`]) of order
/// `ord` (2 by default) over `dim` (all dims when `None`). A given `dim` must have 1 or 2
/// entries, and without `dim` a given `ord` needs a 1-D or 2-D `A`.
pub fn norm(
    a: &Tensor,
    ord: Option<NormOrd>,
    dim: Option<&[isize]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    const OP: &str = "linalg.norm";
    match dim {
        Some(d) if d.len() != 1 && d.len() != 2 => {
            return Err(Error::msg(format!(
                "{OP}: If dim is specified, it must be of length 1 or 2. Got {d:?}"
            )));
        }
        None if ord.is_some() && a.rank() != 1 && a.rank() != 2 => {
            return Err(Error::msg(format!(
                "{OP}: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D.",
                a.rank()
            )));
        }
        _ => {}
    }
    let dims = |default: &[isize]| dim.map_or_else(|| default.to_vec(), <[isize]>::to_vec);
    let matrix = match &ord {
        None => false,
        Some(NormOrd::P(_)) => dim.map_or(a.rank() == 2, |d| d.len() == 2),
        Some(_) => true,
    };
    match ord {
        Some(ord) if matrix => matrix_norm(a, ord, dims(&[0, 1]), keepdim, dtype),
        Some(NormOrd::P(p)) => vector_norm(a, p, dims(&[]), keepdim, dtype),
        _ => vector_norm(a, 2.0, dims(&[]), keepdim, dtype),
    }
}
