//! Plumbing shared by the decompositions: torch's argument checks and messages, reading a batch
//! of matrices to the host in f64, and building results on the input's device and dtype.

use oxtorch_core::{DType, Error, Result};

use crate::Tensor;

/// `A.mT`: the last two dims swapped (a view).
pub(super) fn mt(t: &Tensor) -> Result<Tensor> {
    t.transpose(-2, -1)
}

/// torch's `checkIsMatrix`: `{op}: The input tensor {name} must have at least 2 dimensions.`
pub(super) fn check_matrix(op: &str, t: &Tensor, name: &str) -> Result<()> {
    if t.rank() < 2 {
        return Err(Error::shape(format!("{op}: The input tensor {name} must have at least 2 dimensions.")));
    }
    Ok(())
}

/// torch's `squareCheckInputs`: a batch of square matrices.
pub(super) fn check_square(op: &str, t: &Tensor, name: &str) -> Result<()> {
    check_matrix(op, t, name)?;
    let (m, n) = rows_cols(t);
    if m != n {
        return Err(Error::shape(format!(
            "{op}: {name} must be batches of square matrices, but they are {m} by {n} matrices"
        )));
    }
    Ok(())
}

/// torch's `checkFloatingOrComplex`: integers and bool are refused, and f16/bf16 too unless
/// `low_precision`.
pub(super) fn check_float(op: &str, t: &Tensor, low_precision: bool) -> Result<()> {
    let dtype = t.dtype();
    if !dtype.is_float() {
        return Err(Error::msg(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            dtype.scalar_type_name()
        )));
    }
    if !low_precision && matches!(dtype, DType::F16 | DType::BF16) {
        return Err(Error::msg(format!(
            "{op}: Low precision dtypes not supported. Got {}",
            dtype.scalar_type_name()
        )));
    }
    Ok(())
}

/// The refusal of a LAPACK kernel that has float32 and float64 only (`"lu_cpu" not implemented
/// for 'Half'`).
pub(super) fn check_kernel(kernel: &'static str, t: &Tensor) -> Result<()> {
    match t.dtype() {
        DType::F32 | DType::F64 => Ok(()),
        dtype => Err(Error::UnsupportedDType { op: kernel, dtype }),
    }
}

/// torch's prefix for an error in one matrix of a batch: `(Batch element 3): `, nothing for a
/// single matrix (a 2-D input).
pub(super) fn batch_prefix(t: &Tensor, index: usize) -> String {
    if t.rank() > 2 {
        format!("(Batch element {index}): ")
    } else {
        String::new()
    }
}

/// The sizes of the last two dims.
pub(super) fn rows_cols(t: &Tensor) -> (usize, usize) {
    let d = t.dims();
    (d[d.len() - 2], d[d.len() - 1])
}

/// A batch of `m × n` matrices read to the host in f64, row-major, one after another.
pub(super) struct Host {
    /// The batch dims (all but the last two).
    pub batch: Vec<usize>,
    pub m: usize,
    pub n: usize,
    pub data: Vec<f64>,
}

impl Host {
    /// Reads `t` (at least 2-D, any float dtype and device) without recording anything.
    pub fn read(t: &Tensor) -> Result<Host> {
        let (m, n) = rows_cols(t);
        let data = t.detach().to_dtype(DType::F64)?.to_vec::<f64>()?;
        Ok(Host { batch: t.dims()[..t.rank() - 2].to_vec(), m, n, data })
    }

    /// The number of matrices.
    pub fn count(&self) -> usize {
        self.batch.iter().product()
    }

    /// Matrix `b`, row-major.
    pub fn matrix(&self, b: usize) -> &[f64] {
        let size = self.m * self.n;
        &self.data[b * size..(b + 1) * size]
    }

    /// `batch` followed by `tail`: the dims of a per-matrix result.
    pub fn dims(&self, tail: &[usize]) -> Vec<usize> {
        let mut d = self.batch.clone();
        d.extend_from_slice(tail);
        d
    }
}

/// A tensor of `dims` holding `values`, on `like`'s device and with its dtype.
pub(super) fn build(values: Vec<f64>, dims: Vec<usize>, like: &Tensor) -> Result<Tensor> {
    Tensor::from_vec_on(values, dims, like.device())?.to_dtype(like.dtype())
}

/// The transpose of a row-major `m × n` matrix (`n × m`).
pub(super) fn transposed(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut t = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            t[j * m + i] = a[i * n + j];
        }
    }
    t
}

/// The flat index into a batch of dims `src` of the element that broadcasting places at flat
/// index `i` of the batch `out` (`src` right-aligned against `out`, its size-1 dims repeated).
pub(super) fn source_index(i: usize, out: &[usize], src: &[usize]) -> usize {
    let offset = out.len() - src.len();
    let (mut rem, mut idx, mut stride) = (i, 0, 1);
    for (d, &size_out) in out.iter().enumerate().rev() {
        let coord = rem % size_out;
        rem /= size_out;
        if d >= offset {
            let size = src[d - offset];
            if size != 1 {
                idx += coord * stride;
            }
            stride *= size;
        }
    }
    idx
}

/// Whether every element of `t` is zero: an output whose gradient is all zeros was not used,
/// which torch's formulas treat as an undefined gradient (the terms it feeds are left out).
pub(super) fn is_zero(t: &Tensor) -> Result<bool> {
    if t.numel() == 0 {
        return Ok(true);
    }
    Ok(t.detach().abs()?.sum_all()?.to_dtype(DType::F64)?.item::<f64>()? == 0.0)
}

/// The identity matrix of size `n` with `like`'s dtype and device.
pub(super) fn eye_like(n: usize, like: &Tensor) -> Result<Tensor> {
    Tensor::eye(n, None, like.same_options())
}

/// `x[..., None, None]`: a per-matrix value broadcast against the matrices.
pub(super) fn per_matrix(x: &Tensor) -> Result<Tensor> {
    x.unsqueeze(-1)?.unsqueeze(-1)
}
