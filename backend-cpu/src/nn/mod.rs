//! CPU kernels for [`NnOp`] prims.
//!
//! The kernels read contiguous copies of their inputs; pooling, col2im and resampling compute in f64
//! (floats) or i64 (integers), which hold every input value exactly, and round once at the end.

mod attention;
mod conv2d;
pub(crate) mod cross_entropy;
mod embedding;
mod im2col;
mod layer_norm;
mod linear;
mod pool;
mod resample;

use oxtorch_core::ops::NnOp;
use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};

use crate::CpuStorage;

/// Runs one [`NnOp`] on its inputs.
pub fn execute(op: &NnOp, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<CpuStorage>> {
    let (x, lx) = inputs[0];
    match op {
        NnOp::Im2col { kernel, stride, padding, dilation } => {
            Ok(vec![im2col::im2col(x, lx, kernel, stride, padding, dilation)?])
        }
        NnOp::Col2im { output_size, grid, kernel, stride, padding, dilation } => {
            let window = im2col::WindowArgs { kernel, stride, padding, dilation };
            Ok(vec![im2col::col2im(x, lx, output_size, grid, &window)?])
        }
        NnOp::MaxPool { taps } => pool::max_pool(x, lx, taps),
        NnOp::AvgPool { taps, divisor_override } => Ok(vec![pool::avg_pool(x, lx, taps, *divisor_override)?]),
        NnOp::Resample { taps } => Ok(vec![resample::resample(x, lx, taps)?]),
        NnOp::Embedding => Ok(vec![embedding::embedding(inputs[0], inputs[1])?]),
        NnOp::CrossEntropy { ignore_index } => cross_entropy::forward(inputs[0], inputs[1], *ignore_index),
        NnOp::GeluTanhBackward => {
            Ok(vec![crate::math::activation::gelu_tanh_backward(inputs[0], inputs[1])?])
        }
        NnOp::Conv2d { stride, padding, dilation, groups } => {
            let args =
                conv2d::ConvArgs { stride: *stride, padding: *padding, dilation: *dilation, groups: *groups };
            Ok(vec![conv2d::conv2d(inputs[0], inputs[1], &args)?])
        }
        NnOp::Linear => Ok(vec![linear::linear(inputs[0], inputs[1], inputs[2])?]),
        NnOp::LayerNorm { eps, weight, bias } => {
            let w = weight.then(|| inputs[1]);
            let b = bias.then(|| inputs[1 + usize::from(*weight)]);
            Ok(vec![layer_norm::layer_norm(inputs[0], w, b, *eps)?])
        }
        NnOp::Attention { scale, causal, masked } => {
            let args = attention::AttentionArgs { scale: *scale, causal: *causal };
            let mask = if *masked { Some(inputs[3]) } else { None };
            Ok(vec![attention::attention(inputs[0], inputs[1], inputs[2], mask, &args)?])
        }
        NnOp::CrossEntropyBackward { ignore_index } => {
            Ok(vec![cross_entropy::backward(inputs[0], inputs[1], inputs[2], inputs[3], *ignore_index)?])
        }
    }
}

/// A contiguous copy of an input in its computation type.
pub(crate) enum Wide {
    /// floats, widened to f64
    F(Vec<f64>),
    /// integers, widened to i64
    I(Vec<i64>),
}

/// Widens `(s, l)` to a contiguous f64 (floats) or i64 (integers) buffer; bool is refused.
pub(crate) fn widen(op: &'static str, s: &CpuStorage, l: &Layout) -> Result<Wide> {
    let dtype = s.dtype();
    if dtype == DType::Bool {
        return Err(Error::UnsupportedDType { op, dtype });
    }
    Ok(if dtype.is_float() {
        Wide::F(crate::copy::to_contiguous(s, l, DType::F64)?.as_slice::<f64>()?.to_vec())
    } else {
        Wide::I(crate::copy::to_contiguous(s, l, DType::I64)?.as_slice::<i64>()?.to_vec())
    })
}

/// Rounds a widened result back to `dtype`.
pub(crate) fn narrow(w: Wide, dtype: DType) -> Result<CpuStorage> {
    let s = match w {
        Wide::F(v) => CpuStorage::F64(v.into()),
        Wide::I(v) => CpuStorage::I64(v.into()),
    };
    if s.dtype() == dtype {
        return Ok(s);
    }
    crate::copy::to_contiguous(&s, &Layout::contiguous([s.len()]), dtype)
}

/// Strides of a contiguous row-major array of shape `dims`.
pub(crate) fn contiguous_strides(dims: &[usize]) -> Vec<usize> {
    let mut st = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * dims[d + 1];
    }
    st
}

/// Calls `f(flat, index)` for every multi-index of `dims` in row-major order.
pub(crate) fn for_each_index(dims: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let total: usize = dims.iter().product();
    let mut idx = vec![0usize; dims.len()];
    for flat in 0..total {
        f(flat, &idx);
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}
