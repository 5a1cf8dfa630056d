//! Window functions (torch's `hann_window`, `hamming_window`, `blackman_window`,
//! `bartlett_window`, `kaiser_window`), built as torch's factories build them: an `arange` in the
//! requested float dtype, scaled, transformed, and for a periodic window one longer with the last
//! element dropped.

use std::f64::consts::PI;

use oxtorch_core::{DType, Result};

use crate::{Tensor, TensorOptions};

/// The name torch's `TypeMeta` prints for a dtype (`long int` for int64).
fn type_meta_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short int",
        DType::I32 => "int",
        DType::I64 => "long int",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// torch's `window_function_checks`: a float dtype (default float32) and a non-negative length.
/// Returns the dtype.
fn window_checks(name: &str, opts: &TensorOptions, n: i64) -> Result<DType> {
    let dtype = opts.dtype_or(DType::default_float());
    if !dtype.is_float() {
        return Err(oxtorch_core::Error::msg(format!(
            "{name} expects floating point dtypes, got: TensorOptions(dtype={}, device={}, layout=Strided (default), requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))",
            type_meta_name(dtype),
            opts.device
        )));
    }
    if n < 0 {
        return Err(oxtorch_core::Error::msg(format!(
            "{name} requires non-negative window_length, got window_length={n}"
        )));
    }
    Ok(dtype)
}

/// The shared start of every window: the checked dtype, and `Err(window)` for lengths 0 and 1
/// (empty, `[1]`) or `Ok(len)`, the length to build (one more when `periodic`).
fn window_start(
    name: &str,
    n: i64,
    periodic: bool,
    opts: TensorOptions,
) -> Result<(DType, std::result::Result<i64, Tensor>)> {
    let dtype = window_checks(name, &opts, n)?;
    let short = match n {
        0 => Some(Tensor::zeros([0], (dtype, opts.device))?),
        1 => Some(Tensor::ones([1], (dtype, opts.device))?),
        _ => None,
    };
    Ok((dtype, short.map_or(Ok(if periodic { n + 1 } else { n }), Err)))
}

/// The window of length `len`, without its last element when `periodic`.
fn finish(window: Tensor, len: i64, periodic: bool) -> Result<Tensor> {
    if periodic {
        window.narrow(0, 0, (len - 1) as usize)
    } else {
        Ok(window)
    }
}

impl Tensor {
    /// The Hann window `0.5 - 0.5 cos(2πk / (N - 1))` (torch's `hann_window`): `periodic` builds
    /// `N + 1` points and drops the last. `opts` must give a float dtype (default float32).
    pub fn hann_window(window_length: i64, periodic: bool, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let opts = opts.into();
        window_checks("hann_window", &opts, window_length)?;
        Self::hamming_like("hamming_window", window_length, periodic, 0.5, 0.5, opts)
    }

    /// The generalised Hamming window `alpha - beta cos(2πk / (N - 1))` (torch's
    /// `hamming_window`; torch's defaults are `alpha = 0.54`, `beta = 0.46`), with
    /// [`Tensor::hann_window`]'s conventions.
    pub fn hamming_window(
        window_length: i64,
        periodic: bool,
        alpha: f64,
        beta: f64,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        Self::hamming_like("hamming_window", window_length, periodic, alpha, beta, opts.into())
    }

    fn hamming_like(
        name: &str,
        n: i64,
        periodic: bool,
        alpha: f64,
        beta: f64,
        opts: TensorOptions,
    ) -> Result<Tensor> {
        let (dtype, len) = window_start(name, n, periodic, opts)?;
        let len = match len {
            Ok(len) => len,
            Err(short) => return Ok(short),
        };
        let window = Tensor::arange(len, (dtype, opts.device))?
            .mul(PI * 2.0 / (len - 1) as f64)?
            .cos()?
            .mul(-beta)?
            .add(alpha)?;
        finish(window, len, periodic)
    }

    /// The Blackman window `0.42 - 0.5 cos(2πk / (N - 1)) + 0.08 cos(4πk / (N - 1))` (torch's
    /// `blackman_window`), with [`Tensor::hann_window`]'s conventions.
    pub fn blackman_window(
        window_length: i64,
        periodic: bool,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let opts = opts.into();
        let (dtype, len) = window_start("blackman_window", window_length, periodic, opts)?;
        let len = match len {
            Ok(len) => len,
            Err(short) => return Ok(short),
        };
        let w = Tensor::arange(len, (dtype, opts.device))?.mul(PI / (len - 1) as f64)?;
        let window = w.mul(4.0)?.cos()?.mul(0.08)?.sub(&w.mul(2.0)?.cos()?.mul(0.5)?)?.add(0.42)?;
        finish(window, len, periodic)
    }

    /// The triangular Bartlett window `1 - |2k / (N - 1) - 1|` (torch's `bartlett_window`: the
    /// rising half `2k / (N - 1)`, the rest `2 - 2k / (N - 1)`), with [`Tensor::hann_window`]'s
    /// conventions.
    pub fn bartlett_window(
        window_length: i64,
        periodic: bool,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let opts = opts.into();
        let (dtype, len) = window_start("bartlett_window", window_length, periodic, opts)?;
        let len = match len {
            Ok(len) => len,
            Err(short) => return Ok(short),
        };
        let w = Tensor::arange(len, (dtype, opts.device))?.mul(2.0 / (len - 1) as f64)?;
        let first = ((len - 1) >> 1) + 1;
        let falling = w.narrow(0, first as isize, (len - first) as usize)?.neg()?.add(2.0)?;
        let window = Tensor::cat(&[&w.narrow(0, 0, first as usize)?, &falling], 0)?;
        finish(window, len, periodic)
    }

    /// The Kaiser window `i0(beta · sqrt(1 - ((k - α) / α)²)) / i0(beta)`, `α = (N - 1) / 2`
    /// (torch's `kaiser_window`; torch's default `beta` is 12), computed in float32 for half
    /// types as torch's kernel, with [`Tensor::hann_window`]'s conventions.
    pub fn kaiser_window(
        window_length: i64,
        periodic: bool,
        beta: f64,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let opts = opts.into();
        let (dtype, len) = window_start("kaiser_window", window_length, periodic, opts)?;
        let len = match len {
            Ok(len) => len,
            Err(short) => return Ok(short),
        };
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        let alpha = (len - 1) as f64 / 2.0;
        let ratio = Tensor::arange(len, (acc, opts.device))?.sub(alpha)?.div(alpha)?;
        let arg = ratio.mul(&ratio)?.neg()?.add(1.0)?.abs()?.sqrt()?.mul(beta)?;
        let scale = Tensor::scalar_tensor(beta, (acc, opts.device))?.i0()?;
        let window = arg.i0()?.div(&scale)?.to_dtype(dtype)?;
        finish(window, len, periodic)
    }
}
