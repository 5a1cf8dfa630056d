//! torch's `torch.testing`: [`assert_close`] (with torch's default tolerances and its mismatch
//! messages) and [`make_tensor`] (random test inputs in torch's default ranges).

use oxtorch_core::{promote_types, DType, Device, Error, Result};

use crate::Tensor;

/// The keyword arguments of [`assert_close_with`] (torch's `assert_close(..., rtol=, atol=,
/// equal_nan=, check_device=, check_dtype=, check_stride=)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AssertCloseOptions {
    /// Relative tolerance; `None` takes the dtypes' default (give both or neither, as in torch).
    pub rtol: Option<f64>,
    /// Absolute tolerance; `None` takes the dtypes' default (give both or neither, as in torch).
    pub atol: Option<f64>,
    /// NaNs compare equal to NaNs (default false).
    pub equal_nan: bool,
    /// The dtypes must match (default true); otherwise both are promoted to a common dtype.
    pub check_dtype: bool,
    /// The devices must match (default true); otherwise both are compared on the cpu.
    pub check_device: bool,
    /// The strides must match (default false).
    pub check_stride: bool,
}

impl Default for AssertCloseOptions {
    /// torch's defaults: dtype tolerances, NaN unequal, dtype and device checked, stride not.
    fn default() -> Self {
        AssertCloseOptions {
            rtol: None,
            atol: None,
            equal_nan: false,
            check_dtype: true,
            check_device: true,
            check_stride: false,
        }
    }
}

/// torch's default `(rtol, atol)` for a dtype: float16 `(1e-3, 1e-5)`, bfloat16 `(1.6e-2, 1e-5)`,
/// float32 `(1.3e-6, 1e-5)`, float64 `(1e-7, 1e-7)`, integers and bool `(0, 0)`.
pub fn default_tolerances(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (1e-3, 1e-5),
        DType::BF16 => (1.6e-2, 1e-5),
        DType::F32 => (1.3e-6, 1e-5),
        DType::F64 => (1e-7, 1e-7),
        _ => (0.0, 0.0),
    }
}

/// torch's `torch.testing.assert_close(actual, expected)` with the default options: `Ok(())` when
/// shapes, dtypes and devices match and every element satisfies `|a - e| <= atol + rtol · |e|`,
/// otherwise an error carrying torch's message.
pub fn assert_close(actual: &Tensor, expected: &Tensor) -> Result<()> {
    assert_close_with(actual, expected, &AssertCloseOptions::default())
}

/// [`assert_close`] with explicit options.
pub fn assert_close_with(actual: &Tensor, expected: &Tensor, options: &AssertCloseOptions) -> Result<()> {
    let (rtol, atol) = match (options.rtol, options.atol) {
        (Some(r), Some(a)) => (r, a),
        (None, None) => {
            let (r1, a1) = default_tolerances(actual.dtype());
            let (r2, a2) = default_tolerances(expected.dtype());
            (r1.max(r2), a1.max(a2))
        }
        (Some(_), None) => return Err(tolerance_pair("atol")),
        (None, Some(_)) => return Err(tolerance_pair("rtol")),
    };
    if actual.dims() != expected.dims() {
        return Err(attribute_mismatch("shape", torch_size(actual.dims()), torch_size(expected.dims())));
    }
    if options.check_stride && actual.strides() != expected.strides() {
        return Err(attribute_mismatch("stride()", py_tuple(actual.strides()), py_tuple(expected.strides())));
    }
    if options.check_device && actual.device() != expected.device() {
        return Err(attribute_mismatch("device", actual.device(), expected.device()));
    }
    if options.check_dtype && actual.dtype() != expected.dtype() {
        return Err(attribute_mismatch("dtype", actual.dtype(), expected.dtype()));
    }
    // Equalize: a common device (the cpu) and a common dtype.
    let (mut a, mut e) = (actual.detach(), expected.detach());
    if a.device() != e.device() {
        a = a.to(Device::Cpu)?;
        e = e.to(Device::Cpu)?;
    }
    if a.dtype() != e.dtype() {
        let dtype = promote_types(a.dtype(), e.dtype());
        a = a.to_dtype(dtype)?;
        e = e.to_dtype(dtype)?;
    }
    let matches = a.isclose(&e, rtol, atol, options.equal_nan)?;
    let matches: Vec<bool> =
        matches.to_dtype(DType::U8)?.to_vec::<u8>()?.into_iter().map(|m| m != 0).collect();
    if matches.iter().all(|&m| m) {
        return Ok(());
    }
    let message = if a.rank() == 0 {
        scalar_mismatch(&a, &e, rtol, atol)?
    } else {
        tensor_mismatch(&a, &e, &matches, rtol, atol)?
    };
    Err(Error::msg(message))
}

/// torch's error for a tolerance given without the other one (`missing` is its name).
fn tolerance_pair(missing: &str) -> Error {
    Error::msg(format!("Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."))
}

/// torch's "The values for attribute '...' do not match: a != b." message.
fn attribute_mismatch(name: &str, actual: impl std::fmt::Display, expected: impl std::fmt::Display) -> Error {
    Error::msg(format!("The values for attribute '{name}' do not match: {actual} != {expected}."))
}

/// `torch.Size([2, 3])`.
fn torch_size(dims: &[usize]) -> String {
    let items: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("torch.Size([{}])", items.join(", "))
}

/// A Python tuple of integers: `()`, `(2,)`, `(1, 3)`.
fn py_tuple(values: &[usize]) -> String {
    match values {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        _ => {
            let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            format!("({})", items.join(", "))
        }
    }
}

/// Python's `repr` of a float: shortest round-trip digits, `1e-07` / `1.5e+16` outside
/// `[1e-4, 1e16)`, `2.0` for integral values.
pub(crate) fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".to_string() } else { "-inf".to_string() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0".to_string() } else { "0.0".to_string() };
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let fixed = format!("{v}");
        if fixed.contains('.') {
            fixed
        } else {
            fixed + ".0"
        }
    } else {
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// A Python number as `item()` gives it (bool, int or float), for torch's scalar messages.
#[derive(Clone, Copy)]
enum PyNumber {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl PyNumber {
    /// The single value of a one-element tensor.
    fn of(t: &Tensor) -> Result<PyNumber> {
        Ok(match t.dtype() {
            DType::Bool => PyNumber::Bool(t.to_dtype(DType::U8)?.to_vec::<u8>()?[0] != 0),
            d if d.is_float() => PyNumber::Float(t.to_dtype(DType::F64)?.to_vec::<f64>()?[0]),
            _ => PyNumber::Int(t.to_dtype(DType::I64)?.to_vec::<i64>()?[0]),
        })
    }

    fn as_f64(self) -> f64 {
        match self {
            PyNumber::Bool(b) => f64::from(u8::from(b)),
            PyNumber::Int(i) => i as f64,
            PyNumber::Float(f) => f,
        }
    }

    fn as_i64(self) -> i64 {
        match self {
            PyNumber::Bool(b) => i64::from(b),
            PyNumber::Int(i) => i,
            PyNumber::Float(f) => f as i64,
        }
    }
}

impl std::fmt::Display for PyNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PyNumber::Bool(true) => write!(f, "True"),
            PyNumber::Bool(false) => write!(f, "False"),
            PyNumber::Int(i) => write!(f, "{i}"),
            PyNumber::Float(x) => write!(f, "{}", py_float(*x)),
        }
    }
}

/// torch's `_make_mismatch_msg`.
fn mismatch_message(
    identifier: &str,
    extra: &str,
    abs: (String, Option<String>),
    rel: (String, Option<String>),
    rtol: f64,
    atol: f64,
) -> String {
    let equality = rtol == 0.0 && atol == 0.0;
    let diff = |kind: &str, title: &str, (value, index): (String, Option<String>), tol: f64| {
        let mut msg = match index {
            None => format!("{title} difference: {value}"),
            Some(index) => format!("Greatest {kind} difference: {value} at index {index}"),
        };
        if !equality {
            msg += &format!(" (up to {} allowed)", py_float(tol));
        }
        msg
    };
    format!(
        "{identifier} are not {}!\n\n{extra}\n{}\n{}",
        if equality { "equal" } else { "close" },
        diff("absolute", "Absolute", abs, atol),
        diff("relative", "Relative", rel, rtol)
    )
}

/// torch's `make_scalar_mismatch_msg` for 0-dim tensors.
fn scalar_mismatch(actual: &Tensor, expected: &Tensor, rtol: f64, atol: f64) -> Result<String> {
    let (a, e) = (PyNumber::of(actual)?, PyNumber::of(expected)?);
    let abs_diff = match (a, e) {
        (PyNumber::Float(_), _) | (_, PyNumber::Float(_)) => PyNumber::Float((a.as_f64() - e.as_f64()).abs()),
        _ => PyNumber::Int(a.as_i64().wrapping_sub(e.as_i64()).wrapping_abs()),
    };
    let rel_diff = if e.as_f64() == 0.0 { f64::INFINITY } else { abs_diff.as_f64() / e.as_f64().abs() };
    Ok(mismatch_message(
        "Scalars",
        &format!("Expected {e} but got {a}."),
        (abs_diff.to_string(), None),
        (py_float(rel_diff), None),
        rtol,
        atol,
    ))
}

/// A flat index unravelled over `dims`, as a Python tuple.
fn unravel(mut flat: usize, dims: &[usize]) -> String {
    let mut index = vec![0; dims.len()];
    for (slot, &size) in index.iter_mut().zip(dims).rev() {
        if size > 0 {
            *slot = flat % size;
            flat /= size;
        }
    }
    py_tuple(&index)
}

/// The position of the greatest value (the first NaN if any, else the first maximum), as torch's
/// `max(dim=0)` picks it.
fn argmax_nan_first(values: &[f64]) -> usize {
    if let Some(i) = values.iter().position(|v| v.is_nan()) {
        return i;
    }
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// torch's `make_tensor_mismatch_msg`: mismatch count and the greatest absolute and relative
/// differences among the mismatches, computed in the inputs' dtype (integers in int64).
fn tensor_mismatch(
    actual: &Tensor,
    expected: &Tensor,
    matches: &[bool],
    rtol: f64,
    atol: f64,
) -> Result<String> {
    let total = matches.len();
    let mismatched = matches.iter().filter(|&&m| !m).count();
    let percent = mismatched as f64 / total as f64 * 100.0;
    let extra = format!("Mismatched elements: {mismatched} / {total} ({percent:.1}%)");
    let is_float = actual.dtype().is_float();
    let (mut a, mut e) = (actual.reshape([-1])?, expected.reshape([-1])?);
    if !is_float {
        a = a.to_dtype(DType::I64)?;
        e = e.to_dtype(DType::I64)?;
    }
    let abs_diff = a.sub(&e)?.abs()?;
    let rel_diff = abs_diff.div(&e.abs()?)?;
    let zero_matched = |mut v: Vec<f64>| {
        for (x, &m) in v.iter_mut().zip(matches) {
            if m {
                *x = 0.0;
            }
        }
        v
    };
    let (abs_text, abs_at) = if is_float {
        let v = zero_matched(abs_diff.to_dtype(DType::F64)?.to_vec::<f64>()?);
        let i = argmax_nan_first(&v);
        (py_float(v[i]), i)
    } else {
        let mut v = abs_diff.to_vec::<i64>()?;
        for (x, &m) in v.iter_mut().zip(matches) {
            if m {
                *x = 0;
            }
        }
        let mut best = 0;
        for (i, &x) in v.iter().enumerate() {
            if x > v[best] {
                best = i;
            }
        }
        (v[best].to_string(), best)
    };
    let rel = zero_matched(rel_diff.to_dtype(DType::F64)?.to_vec::<f64>()?);
    let rel_at = argmax_nan_first(&rel);
    let dims = actual.dims();
    Ok(mismatch_message(
        "Tensor-likes",
        &extra,
        (abs_text, Some(unravel(abs_at, dims))),
        (py_float(rel[rel_at]), Some(unravel(rel_at, dims))),
        rtol,
        atol,
    ))
}

/// Shows a `low`/`high` bound as torch's message would: the caller's float, or torch's integer
/// default.
fn show_bound(value: Option<f64>, default: i64) -> String {
    value.map_or(default.to_string(), py_float)
}

/// torch's `torch.testing.make_tensor(*shape, dtype=, low=, high=, requires_grad=,
/// noncontiguous=)` on the default device: values drawn uniformly from `[low, high)` (the
/// generator is oxtorch's, so the values differ from torch's; ranges, shape and layout match).
///
/// Default ranges: bool `[0, 2)`, unsigned `[0, 10)`, signed integers `[-9, 10)`, floats `[-9, 9)`;
/// bounds outside the dtype's range are clamped to it, and integer bounds are rounded up.
/// `noncontiguous` (with more than one element) returns every other element of a tensor twice as
/// long in the last dim (`[..., 1::2]`). Only float tensors may require grad.
pub fn make_tensor(
    shape: &[usize],
    dtype: DType,
    low: Option<f64>,
    high: Option<f64>,
    requires_grad: bool,
    noncontiguous: bool,
) -> Result<Tensor> {
    if requires_grad && !dtype.is_float() {
        return Err(Error::msg(format!(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )));
    }
    let numel: usize = shape.iter().product();
    let noncontiguous = noncontiguous && numel > 1;
    let mut dims = shape.to_vec();
    if noncontiguous {
        if let Some(last) = dims.last_mut() {
            *last *= 2;
        }
    }
    let (default_low, default_high, lowest, highest) = match dtype {
        DType::Bool => (0, 2, 0.0, 2.0),
        d if d.is_float() => {
            let info = oxtorch_core::finfo(d)?;
            (-9, 9, info.min, info.max)
        }
        d => {
            let info = oxtorch_core::iinfo(d)?;
            let top = if d == DType::I64 { info.max as f64 } else { (info.max + 1) as f64 };
            (-9, 10, info.min as f64, top)
        }
    };
    let (lo, hi) = (low.unwrap_or(default_low as f64), high.unwrap_or(default_high as f64));
    let (shown_lo, shown_hi) = (show_bound(low, default_low), show_bound(high, default_high));
    if lo.is_nan() || hi.is_nan() {
        return Err(Error::msg(format!(
            "`low` and `high` cannot be NaN, but got low={shown_lo} and high={shown_hi}"
        )));
    }
    if !(lo == hi && dtype.is_float()) && lo >= hi {
        return Err(Error::msg(format!("`low` must be less than `high`, but got {shown_lo} >= {shown_hi}")));
    }
    if hi < lowest || lo >= highest {
        let (l, h) = if dtype.is_float() {
            (py_float(lowest), py_float(highest))
        } else {
            ((lowest as i64).to_string(), (highest as i64).to_string())
        };
        return Err(Error::msg(format!(
            "The value interval specified by `low` and `high` is [{shown_lo}, {shown_hi}), but {dtype} only supports [{l}, {h})"
        )));
    }
    let (lo, hi) = (lo.clamp(lowest, highest), hi.clamp(lowest, highest));
    let result = if dtype.is_float() {
        let t = Tensor::empty(dims, dtype)?;
        if hi - lo >= highest {
            t.uniform_(lo / 2.0, hi / 2.0)?;
            t.mul(2.0)?
        } else {
            t.uniform_(lo, hi)?;
            t
        }
    } else {
        Tensor::randint(lo.ceil() as i64, hi.ceil() as i64, dims, dtype)?
    };
    let result = if noncontiguous { result.slice_bounds(-1, Some(1), None, 2)? } else { result };
    if dtype.is_float() && requires_grad {
        return result.requires_grad_(true);
    }
    Ok(result)
}
