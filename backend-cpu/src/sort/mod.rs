//! CPU kernels for [`SortOp`] prims: row ops along one dim (sort, topk, kthvalue, median, mode,
//! quantile, cumulative scans) run through [`rows::per_row`], in parallel over rows; the whole-tensor
//! ops (unique, searchsorted, histc, bincount) read a contiguous copy of their input.

mod hist;
mod order;
mod quantile;
mod rows;
mod scan;
mod search;
mod stl;
mod unique;

use oxtorch_core::ops::SortOp;
use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};

use crate::{with_storage, CpuStorage};

type Input<'a> = (&'a CpuStorage, &'a Layout);

fn pair<T: crate::CpuElement>((v, i): (Vec<T>, Vec<i64>)) -> Vec<CpuStorage> {
    vec![CpuStorage::from_vec(v), CpuStorage::from_vec(i)]
}

fn unsupported(op: &SortOp, dtype: DType) -> Error {
    Error::UnsupportedDType { op: op.name(), dtype }
}

/// Runs `$body` with `$v` bound to the typed vector of a float storage, else returns an error.
macro_rules! with_float {
    ($op:expr, $s:expr, $v:ident => $body:expr) => {
        match $s {
            CpuStorage::F16($v) => $body,
            CpuStorage::BF16($v) => $body,
            CpuStorage::F32($v) => $body,
            CpuStorage::F64($v) => $body,
            other => return Err(unsupported($op, other.dtype())),
        }
    };
}

/// Cumulative sum or product: floats in their own kernel, integers wrapping, bool refused (the tensor
/// layer accumulates bool in int64).
fn cum(op: &SortOp, (s, l): Input<'_>, dim: usize, prod: bool) -> Result<CpuStorage> {
    macro_rules! int {
        ($v:expr) => {
            CpuStorage::from_vec(if prod {
                scan::cumprod_int($v, l, dim)
            } else {
                scan::cumsum_int($v, l, dim)
            })
        };
    }
    macro_rules! float {
        ($v:expr) => {
            CpuStorage::from_vec(if prod {
                scan::cumprod_float($v, l, dim)
            } else {
                scan::cumsum_float($v, l, dim)
            })
        };
    }
    Ok(match s {
        CpuStorage::U8(v) => int!(v),
        CpuStorage::I8(v) => int!(v),
        CpuStorage::I16(v) => int!(v),
        CpuStorage::I32(v) => int!(v),
        CpuStorage::I64(v) => int!(v),
        CpuStorage::F16(v) => float!(v),
        CpuStorage::BF16(v) => float!(v),
        CpuStorage::F32(v) => float!(v),
        CpuStorage::F64(v) => float!(v),
        CpuStorage::Bool(_) => return Err(unsupported(op, DType::Bool)),
    })
}

fn bincount(op: &SortOp, inputs: &[Input<'_>], length: usize, weighted: bool) -> Result<Vec<CpuStorage>> {
    let (s, l) = inputs[0];
    macro_rules! run {
        ($v:expr) => {
            if !weighted {
                CpuStorage::from_vec(hist::bincount($v, l, length)?)
            } else {
                match inputs[1].0 {
                    CpuStorage::F32(w) => {
                        CpuStorage::from_vec(hist::bincount_weighted($v, l, (w, inputs[1].1), length)?)
                    }
                    CpuStorage::F64(w) => {
                        CpuStorage::from_vec(hist::bincount_weighted($v, l, (w, inputs[1].1), length)?)
                    }
                    other => return Err(unsupported(op, other.dtype())),
                }
            }
        };
    }
    Ok(vec![match s {
        CpuStorage::U8(v) => run!(v),
        CpuStorage::I8(v) => run!(v),
        CpuStorage::I16(v) => run!(v),
        CpuStorage::I32(v) => run!(v),
        CpuStorage::I64(v) => run!(v),
        other => return Err(unsupported(op, other.dtype())),
    }])
}

/// Checks that `dim` names a dim of `l`.
fn check_dim(op: &SortOp, l: &Layout, dim: usize) -> Result<()> {
    if dim >= l.rank() {
        return Err(Error::msg(format!("{}: dim {dim} out of range for rank {}", op.name(), l.rank())));
    }
    Ok(())
}

/// Checks that the row length along `dim` is at least `min`.
fn check_len(op: &SortOp, l: &Layout, dim: usize, min: usize) -> Result<()> {
    check_dim(op, l, dim)?;
    if l.dims()[dim] < min {
        return Err(Error::msg(format!(
            "{}: dim {dim} has size {} but {min} elements are needed",
            op.name(),
            l.dims()[dim]
        )));
    }
    Ok(())
}

/// Runs one [`SortOp`] on its inputs.
pub fn execute(op: &SortOp, inputs: &[Input<'_>]) -> Result<Vec<CpuStorage>> {
    let (s, l) = inputs[0];
    if op.arity() == 2 && inputs[1].0.dtype() != s.dtype() && !matches!(op, SortOp::Bincount { .. }) {
        return Err(Error::DTypeMismatch { op: op.name(), a: s.dtype(), b: inputs[1].0.dtype() });
    }
    match *op {
        SortOp::Sort { dim, descending } => {
            check_dim(op, l, dim)?;
            Ok(with_storage!(s, v => pair(order::sort(v, l, dim, descending))))
        }
        SortOp::TopK { k, dim, largest, sorted } => {
            check_len(op, l, dim, k)?;
            if k == 0 {
                return Ok(vec![CpuStorage::zeros(s.dtype(), 0), CpuStorage::zeros(DType::I64, 0)]);
            }
            Ok(with_storage!(s, v => pair(order::topk(v, l, dim, k, largest, sorted))))
        }
        SortOp::KthValue { k, dim } => {
            check_len(op, l, dim, k.max(1))?;
            if k == 0 {
                return Err(Error::msg("kthvalue(): selected number k out of range"));
            }
            Ok(with_storage!(s, v => pair(order::kthvalue(v, l, dim, k))))
        }
        SortOp::Median { dim, ignore_nan } => {
            check_len(op, l, dim, 1)?;
            if ignore_nan {
                Ok(with_storage!(s, v => pair(order::nanmedian(v, l, dim))))
            } else {
                Ok(with_storage!(s, v => pair(order::median(v, l, dim))))
            }
        }
        SortOp::Mode { dim } => {
            check_len(op, l, dim, 1)?;
            Ok(with_storage!(s, v => pair(order::mode(v, l, dim))))
        }
        SortOp::Quantile { dim, interpolation } => {
            check_len(op, l, dim, 1)?;
            let (qs, ql) = inputs[1];
            Ok(vec![with_float!(op, s, v => {
                let q = qs.as_slice()?;
                CpuStorage::from_vec(quantile::quantile(v, l, dim, (q, ql), interpolation))
            })])
        }
        SortOp::CumSum { dim } | SortOp::CumProd { dim } => {
            check_dim(op, l, dim)?;
            Ok(vec![cum(op, inputs[0], dim, matches!(op, SortOp::CumProd { .. }))?])
        }
        SortOp::CumMax { dim } | SortOp::CumMin { dim } => {
            check_dim(op, l, dim)?;
            let is_max = matches!(op, SortOp::CumMax { .. });
            Ok(with_storage!(s, v => pair(scan::cum_extreme(v, l, dim, is_max))))
        }
        SortOp::LogCumSumExp { dim } => {
            check_dim(op, l, dim)?;
            Ok(vec![with_float!(op, s, v => CpuStorage::from_vec(scan::logcumsumexp(v, l, dim)))])
        }
        SortOp::Unique { consecutive } => Ok(with_storage!(s, v => {
            let (u, inv, counts) = unique::unique(v, l, consecutive);
            vec![CpuStorage::from_vec(u), CpuStorage::from_vec(inv), CpuStorage::from_vec(counts)]
        })),
        SortOp::SearchSorted { right } => {
            let (vs, vl) = inputs[1];
            Ok(vec![with_storage!(s, v => {
                let vals = vs.as_slice()?;
                CpuStorage::from_vec(search::searchsorted((v, l), (vals, vl), right))
            })])
        }
        SortOp::Histc { bins, min, max } => {
            if bins == 0 || min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
                return Err(Error::msg(format!("histc: invalid bins {bins} or range [{min}, {max}]")));
            }
            Ok(vec![with_float!(op, s, v => CpuStorage::from_vec(hist::histc(v, l, bins, min, max)))])
        }
        SortOp::Bincount { length, weighted } => bincount(op, inputs, length, weighted),
    }
}
