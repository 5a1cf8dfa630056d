//! Creation functions: from data, filled, ranges, identity, and `*_like`.

use half::{bf16, f16};
use oxtorch_backend_cpu::{CpuElement, CpuStorage, SharedBytes};
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Device, Element, Error, Result, Scalar, Shape};

use crate::dispatch::apply1;
use crate::options::TensorOptions;
use crate::storage::Storage;
use crate::Tensor;

/// Builds a tensor from a host buffer, placed on `device` (uploaded for `xla`/`tpu` devices).
pub(crate) fn from_cpu(storage: CpuStorage, shape: impl Into<Shape>, device: Device) -> Result<Tensor> {
    let storage = if device.is_cpu() {
        Storage::Cpu(storage)
    } else {
        Storage::Xla(XlaStorage::from_cpu(&storage, device)?)
    };
    Ok(Tensor::from_storage(storage, shape))
}

fn check_numel(len: usize, shape: &Shape) -> Result<()> {
    if len != shape.checked_numel()? {
        return Err(Error::shape(format!("shape '{shape}' is invalid for input of size {len}")));
    }
    Ok(())
}

impl Tensor {
    /// A cpu tensor holding a copy of `data`, viewed with `shape`.
    pub fn from_slice<T: CpuElement>(data: &[T], shape: impl Into<Shape>) -> Result<Tensor> {
        Self::from_vec(data.to_vec(), shape)
    }

    /// A cpu tensor owning `data` (no copy), viewed with `shape`.
    pub fn from_vec<T: CpuElement>(data: Vec<T>, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        check_numel(data.len(), &shape)?;
        from_cpu(CpuStorage::from_vec(data), shape, Device::Cpu)
    }

    /// A CPU tensor of `dtype` and `shape` whose elements are the bytes of `owner` from byte `offset`
    /// on (row-major, native endianness), without copying them: how checkpoints are loaded from a
    /// memory map. The first write to the tensor (or a view of it) copies the elements, so `owner`'s
    /// bytes are never changed. Errors when the bytes are too few, misaligned for `dtype`, or not 0/1
    /// for bool; callers then copy instead.
    pub fn from_shared_bytes(
        owner: std::sync::Arc<dyn SharedBytes>,
        offset: usize,
        dtype: DType,
        shape: impl Into<Shape>,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let storage = CpuStorage::shared(dtype, owner, offset, shape.checked_numel()?)?;
        Ok(Tensor::from_storage(Storage::Cpu(storage), shape))
    }

    /// A tensor on `device` holding a copy of `data`, viewed with `shape` (torch's
    /// `torch.tensor(data, device=...)`): `Tensor::from_slice_on(&[1.0f32, 2.0], [2], Device::Xla(0))`.
    pub fn from_slice_on<T: CpuElement>(
        data: &[T],
        shape: impl Into<Shape>,
        device: Device,
    ) -> Result<Tensor> {
        Self::from_vec_on(data.to_vec(), shape, device)
    }

    /// A tensor on `device` made from `data`, viewed with `shape` (no copy on cpu; one upload on
    /// an `xla`/`tpu` device).
    pub fn from_vec_on<T: CpuElement>(
        data: Vec<T>,
        shape: impl Into<Shape>,
        device: Device,
    ) -> Result<Tensor> {
        let shape = shape.into();
        check_numel(data.len(), &shape)?;
        from_cpu(CpuStorage::from_vec(data), shape, device)
    }

    /// A 0-dim tensor holding `value`, of the default float dtype unless `opts` gives one (torch's
    /// `scalar_tensor(2)` is float32, as its `scalar_tensor(True)`).
    pub fn scalar_tensor(value: impl Into<Scalar>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let opts = opts.into();
        Self::full((), value, opts.dtype(opts.dtype_or(DType::default_float())))
    }

    /// A tensor of `shape` filled with `value`; the dtype defaults to the value's (bool, int64,
    /// float32). A value the dtype cannot hold is torch's overflow error (300 as uint8, NaN as
    /// int64).
    pub fn full(
        shape: impl Into<Shape>,
        value: impl Into<Scalar>,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (shape, value, opts) = (shape.into(), value.into(), opts.into());
        value.check_fits(opts.dtype_or(value.wrapped_dtype()))?;
        Self::full_unchecked(shape, value, opts)
    }

    /// [`Tensor::full`] converting the value as a cast does (integers wrap): the operand of a
    /// binary op (`u8 + 300` is 44 in torch).
    pub(crate) fn full_unchecked(
        shape: impl Into<Shape>,
        value: impl Into<Scalar>,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (shape, value, opts) = (shape.into(), value.into(), opts.into());
        let dtype = opts.dtype_or(value.wrapped_dtype());
        shape.checked_numel()?;
        apply1(&Prim::Full { shape: shape.into_dims(), value, dtype }, &[], opts.device)
    }

    /// A tensor of zeros (float32 unless `opts` says otherwise).
    pub fn zeros(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let opts = opts.into();
        Self::full(shape, 0, opts.dtype(opts.dtype_or(DType::default_float())))
    }

    /// A tensor of ones (float32 unless `opts` says otherwise).
    pub fn ones(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let opts = opts.into();
        Self::full(shape, 1, opts.dtype(opts.dtype_or(DType::default_float())))
    }

    /// A tensor whose values are unspecified (oxtorch zero-fills it: never uninitialised memory).
    pub fn empty(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        Self::zeros(shape, opts)
    }

    /// `[0, 1, ..., end-1]` as int64 (torch's `arange(end)`).
    pub fn arange(end: impl Into<Scalar>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        Self::arange_step(0, end, 1, opts)
    }

    /// Values from `start` (inclusive) to `end` (exclusive) by `step`; int64 when all three are
    /// integers, float32 otherwise, unless `opts` gives a dtype.
    pub fn arange_step(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (start, end, step, opts) = (start.into(), end.into(), step.into(), opts.into());
        let all_int = !(start.is_float() || end.is_float() || step.is_float());
        let dtype = opts.dtype_or(if all_int { DType::I64 } else { DType::default_float() });
        let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
        if st == 0.0 {
            return Err(Error::msg("step must be nonzero"));
        }
        if !st.is_finite() {
            let shown = if st.is_nan() {
                "nan"
            } else if st > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            return Err(Error::msg(format!("step must be finite but got {shown}")));
        }
        if !(s.is_finite() && e.is_finite()) {
            return Err(Error::msg(format!("unsupported range: {s} -> {e}")));
        }
        if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
            return Err(Error::msg("upper bound and larger bound inconsistent with step sign"));
        }
        // In integers when all three are (2^62 + 10 has no f64 of its own), else in double.
        let n = if all_int {
            let (s, e, st) = (start.to_i64() as i128, end.to_i64() as i128, step.to_i64() as i128);
            let span = e - s;
            let n = span / st + i128::from(span % st != 0);
            n.max(0) as f64
        } else {
            ((e - s) / st).ceil().max(0.0)
        };
        if n > (isize::MAX as usize / dtype.size_in_bytes()) as f64 {
            return Err(Error::msg(format!(
                "arange: the range {s} to {e} by {st} holds {n:e} elements, more than memory can address"
            )));
        }
        let n = n as usize;
        crate::dispatch::check_allocatable(n * dtype.size_in_bytes())?;
        // An integer dtype counts from the start and step made integers (torch: `arange(0.5, 5,
        // 1.5, dtype=int64)` is [0, 1, 2]), the length still taken from the float range.
        let storage = if !dtype.is_float() {
            let (s, st) = (start.to_i64(), step.to_i64());
            int_range(dtype, n, |i| s.wrapping_add(st.wrapping_mul(i as i64)))
        } else if dtype == DType::F32 {
            // torch's CPU kernel, vectorised 8 wide and unrolled twice: within each 16-element
            // block, each group of 8 starts from a base rounded to float32 and adds `j * step` to
            // it; the last `n % 16` values are `start + i * step`. (Bit for bit torch's values
            // while torch runs it as one chunk: up to 32768 elements, or on one thread.)
            let blocked = n / 16 * 16;
            float_range(dtype, n, |i| {
                if i < blocked {
                    let j = i % 8;
                    let base = (s + st * (i - j) as f64) as f32;
                    f64::from(base) + j as f64 * st
                } else {
                    s + st * i as f64
                }
            })
        } else if dtype == DType::F64 {
            // The same kernel on float64: groups of 4 in blocks of 8, each value a fused
            // multiply-add (`base = fma(step, i - j, start)`, then `fma(j, step, base)`).
            let blocked = n / 8 * 8;
            float_range(dtype, n, |i| {
                if i < blocked {
                    let j = i % 4;
                    let base = st.mul_add((i - j) as f64, s);
                    (j as f64).mul_add(st, base)
                } else {
                    st.mul_add(i as f64, s)
                }
            })
        } else if matches!(dtype, DType::F16 | DType::BF16) {
            // The same kernel on the half types, computing in float32: 16 wide (unrolled twice),
            // each group of 16 from a base `start + step * i` rounded to the half type, then
            // `base + j * step`; the last `n % 32` values are `start + step * i`; each rounded once
            // to the half type at the end.
            let round = |v: f32| {
                if dtype == DType::F16 {
                    f16::from_f32(v).to_f32()
                } else {
                    bf16::from_f32(v).to_f32()
                }
            };
            let (s, st) = (s as f32, st as f32);
            let blocked = n / 32 * 32;
            float_range(dtype, n, |i| {
                f64::from(if i < blocked {
                    let j = i % 16;
                    round(s + st * (i - j) as f32) + j as f32 * st
                } else {
                    s + st * i as f32
                })
            })
        } else {
            unreachable!("every float dtype has its rule above")
        };
        from_cpu(storage, [n], opts.device)
    }

    /// `steps` evenly spaced values from `start` to `end` inclusive (float32 by default).
    pub fn linspace(start: f64, end: f64, steps: usize, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let opts = opts.into();
        let dtype = opts.dtype_or(DType::default_float());
        check_steps("linspace", steps, dtype.size_in_bytes())?;
        // An integer dtype takes its endpoints as integers first (torch: `linspace(0.5, 9.7, 5,
        // dtype=int64)` is [0, 2, 4, 6, 9]).
        let (start, end) = if dtype.is_float() { (start, end) } else { (start.trunc(), end.trunc()) };
        let step = if steps > 1 { (end - start) / (steps - 1) as f64 } else { 0.0 };
        // Fill symmetrically from both ends, as torch does, so the last value is exactly `end`.
        let half = steps / 2;
        let first_half = |i: usize| steps == 1 || i < half;
        let value = |i: usize| {
            if first_half(i) {
                start + step * i as f64
            } else {
                end - step * (steps - 1 - i) as f64
            }
        };
        let storage = match dtype {
            // torch's kernel computes float32 and float64 in their own type, each value one fused
            // multiply-add from its end (bit for bit torch's on CPUs with FMA, as these all are).
            DType::F32 => {
                let (s, e) = (start as f32, end as f32);
                let step = if steps > 1 { (e - s) / (steps - 1) as f32 } else { 0.0 };
                float_range(dtype, steps, |i| {
                    f64::from(if first_half(i) {
                        step.mul_add(i as f32, s)
                    } else {
                        (-step).mul_add((steps - 1 - i) as f32, e)
                    })
                })
            }
            DType::F64 => float_range(dtype, steps, |i| {
                if first_half(i) {
                    step.mul_add(i as f64, start)
                } else {
                    (-step).mul_add((steps - 1 - i) as f64, end)
                }
            }),
            // float16/bfloat16 as torch's kernel: the ends rounded to the dtype, the step and each
            // value in float32 from its end (a multiply and an add for float16, one fused
            // multiply-add for bfloat16), then rounded once.
            DType::F16 | DType::BF16 => {
                let round = |v: f64| {
                    if dtype == DType::F16 {
                        f64::from(f16::from_f64(v))
                    } else {
                        f64::from(bf16::from_f64(v))
                    }
                };
                let (s, e) = (round(start) as f32, round(end) as f32);
                let step = if steps > 1 { (e - s) / (steps - 1) as f32 } else { 0.0 };
                let fused = dtype == DType::BF16;
                float_range(dtype, steps, |i| {
                    let (from, k, step) =
                        if first_half(i) { (s, i as f32, step) } else { (e, (steps - 1 - i) as f32, -step) };
                    f64::from(if fused { step.mul_add(k, from) } else { from + step * k })
                })
            }
            _ => int_range(dtype, steps, |i| value(i) as i64),
        };
        from_cpu(storage, [steps], opts.device)
    }

    /// An `n × m` matrix with ones on the diagonal (`m = n` when `None`).
    pub fn eye(n: usize, m: Option<usize>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
        let m = m.unwrap_or(n);
        let t = Self::zeros([n, m], opts)?;
        t.diagonal(0, 0, 1)?.fill_(1)?;
        Ok(t)
    }

    /// Zeros with this tensor's shape, dtype and device.
    pub fn zeros_like(&self) -> Result<Tensor> {
        Self::zeros(self.shape(), self.same_options())
    }

    /// Ones with this tensor's shape, dtype and device.
    pub fn ones_like(&self) -> Result<Tensor> {
        Self::ones(self.shape(), self.same_options())
    }

    /// `value` everywhere, with this tensor's shape, dtype and device.
    pub fn full_like(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        Self::full(self.shape(), value, self.same_options())
    }

    /// An (unspecified, zero-filled) tensor with this tensor's shape, dtype and device.
    pub fn empty_like(&self) -> Result<Tensor> {
        self.zeros_like()
    }

    /// Zeros with this tensor's shape and device, of `dtype` (torch's `zeros_like(x, dtype=)`).
    pub fn zeros_like_dtype(&self, dtype: DType) -> Result<Tensor> {
        Self::zeros(self.shape(), (dtype, self.device()))
    }

    /// Ones with this tensor's shape and device, of `dtype` (torch's `ones_like(x, dtype=)`).
    pub fn ones_like_dtype(&self, dtype: DType) -> Result<Tensor> {
        Self::ones(self.shape(), (dtype, self.device()))
    }

    /// `value` everywhere, with this tensor's shape and device, of `dtype` (torch's
    /// `full_like(x, value, dtype=)`).
    pub fn full_like_dtype(&self, value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        Self::full(self.shape(), value, (dtype, self.device()))
    }

    /// An (unspecified, zero-filled) tensor with this tensor's shape and device, of `dtype`.
    pub fn empty_like_dtype(&self, dtype: DType) -> Result<Tensor> {
        self.zeros_like_dtype(dtype)
    }

    /// `steps` values `base^e` for exponents evenly spaced from `start` to `end` (torch's
    /// `logspace`), by torch's kernel: the exponents step from each end in the output's type (an
    /// integer dtype truncates `start` and `end` first and steps in f64), the power is taken in
    /// f64 and rounded to the dtype; one step gives `base^start`.
    pub fn logspace(
        start: f64,
        end: f64,
        steps: usize,
        base: f64,
        opts: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let opts = opts.into();
        let dtype = opts.dtype_or(DType::default_float());
        // (the exponents and powers are float64 before the cast)
        check_steps("logspace", steps, dtype.size_in_bytes().max(8))?;
        let half = steps / 2;
        let exponents: Vec<f64> = if steps == 1 {
            vec![start]
        } else if dtype == DType::F64 || !dtype.is_float() {
            let (start, end) = if dtype.is_float() { (start, end) } else { (start.trunc(), end.trunc()) };
            let step = (end - start) / (steps - 1) as f64;
            (0..steps)
                .map(|i| if i < half { start + step * i as f64 } else { end - step * (steps - i - 1) as f64 })
                .collect()
        } else {
            let (start, end) = (start as f32, end as f32);
            let step = (end - start) / (steps - 1) as f32;
            (0..steps)
                .map(|i| {
                    let e =
                        if i < half { start + step * i as f32 } else { end - step * (steps - i - 1) as f32 };
                    e as f64
                })
                .collect()
        };
        let values: Vec<f64> = exponents.into_iter().map(|e| base.powf(e)).collect();
        from_cpu(CpuStorage::from_vec(values), [steps], opts.device)?.to_dtype(dtype)
    }

    /// This tensor's dtype and device as creation options.
    pub fn same_options(&self) -> TensorOptions {
        TensorOptions { dtype: Some(self.dtype()), device: self.device() }
    }
}

/// Refuses a `steps` count whose buffer of `itemsize`-byte values could not be allocated at all
/// (more than `isize::MAX` bytes), before anything is allocated.
fn check_steps(op: &str, steps: usize, itemsize: usize) -> Result<()> {
    if let Some(bytes) = steps.checked_mul(itemsize).filter(|&bytes| bytes <= isize::MAX as usize) {
        return crate::dispatch::check_allocatable(bytes);
    }
    Err(Error::msg(format!(
        "{op}: number of steps {steps} is too large: {steps} values of {itemsize} bytes exceed the maximum allocation size"
    )))
}

/// `n` values `f(0), f(1), ...` of a float dtype, in a buffer from the CPU pool (a size the
/// machine cannot hold is torch's out-of-memory panic, not the allocator's abort).
fn float_range(dtype: DType, n: usize, f: impl Fn(usize) -> f64) -> CpuStorage {
    oxtorch_backend_cpu::with_dtype!(dtype, T => {
        let mut v: Vec<T> = oxtorch_backend_cpu::pool::take(n);
        v.extend((0..n).map(|i| T::from_f64(f(i))));
        CpuStorage::from_vec(v)
    })
}

/// [`float_range`] of an integer dtype.
fn int_range(dtype: DType, n: usize, f: impl Fn(usize) -> i64) -> CpuStorage {
    oxtorch_backend_cpu::with_dtype!(dtype, T => {
        let mut v: Vec<T> = oxtorch_backend_cpu::pool::take(n);
        v.extend((0..n).map(|i| T::from_i64(f(i))));
        CpuStorage::from_vec(v)
    })
}
