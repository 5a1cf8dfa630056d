//! The CPU storage: one typed buffer per dtype.

use std::sync::Arc;

use half::{bf16, f16};
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, DType, Device, Element, Error, Layout, Result, Scalar};

use crate::buffer::{Buffer, SharedBytes};

/// A flat host buffer holding elements of one dtype, owned or (zero-copy) shared: see [`Buffer`].
#[derive(Clone, Debug, PartialEq)]
pub enum CpuStorage {
    /// bool elements
    Bool(Buffer<bool>),
    /// uint8 elements
    U8(Buffer<u8>),
    /// int8 elements
    I8(Buffer<i8>),
    /// int16 elements
    I16(Buffer<i16>),
    /// int32 elements
    I32(Buffer<i32>),
    /// int64 elements
    I64(Buffer<i64>),
    /// float16 elements
    F16(Buffer<f16>),
    /// bfloat16 elements
    BF16(Buffer<bf16>),
    /// float32 elements
    F32(Buffer<f32>),
    /// float64 elements
    F64(Buffer<f64>),
}

/// Runs `$body` with `$v` bound to the typed [`Buffer`] inside a [`CpuStorage`] (by reference; it
/// derefs to a slice).
#[macro_export]
macro_rules! with_storage {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            $crate::CpuStorage::Bool($v) => $body,
            $crate::CpuStorage::U8($v) => $body,
            $crate::CpuStorage::I8($v) => $body,
            $crate::CpuStorage::I16($v) => $body,
            $crate::CpuStorage::I32($v) => $body,
            $crate::CpuStorage::I64($v) => $body,
            $crate::CpuStorage::F16($v) => $body,
            $crate::CpuStorage::BF16($v) => $body,
            $crate::CpuStorage::F32($v) => $body,
            $crate::CpuStorage::F64($v) => $body,
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust element type of a [`DType`].
#[macro_export]
macro_rules! with_dtype {
    ($d:expr, $T:ident => $body:expr) => {
        match $d {
            oxtorch_core::DType::Bool => {
                type $T = bool;
                $body
            }
            oxtorch_core::DType::U8 => {
                type $T = u8;
                $body
            }
            oxtorch_core::DType::I8 => {
                type $T = i8;
                $body
            }
            oxtorch_core::DType::I16 => {
                type $T = i16;
                $body
            }
            oxtorch_core::DType::I32 => {
                type $T = i32;
                $body
            }
            oxtorch_core::DType::I64 => {
                type $T = i64;
                $body
            }
            oxtorch_core::DType::F16 => {
                type $T = half::f16;
                $body
            }
            oxtorch_core::DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            oxtorch_core::DType::F32 => {
                type $T = f32;
                $body
            }
            oxtorch_core::DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Element types that can live in a [`CpuStorage`].
pub trait CpuElement: Element {
    /// Wraps a vector into a storage.
    fn into_storage(v: Vec<Self>) -> CpuStorage;
    /// Wraps a buffer into a storage.
    fn buffer_into_storage(b: Buffer<Self>) -> CpuStorage;
    /// The typed elements inside `s`, if it has this type.
    fn slice(s: &CpuStorage) -> Option<&[Self]>;
    /// The typed elements inside `s`, mutably, if it has this type (a shared buffer is copied first).
    fn slice_mut(s: &mut CpuStorage) -> Option<&mut [Self]>;
    /// True for NaN (never for integers).
    fn is_nan_elem(self) -> bool;
}

macro_rules! cpu_element {
    ($t:ty, $v:ident, $nan:expr) => {
        impl CpuElement for $t {
            #[inline]
            fn into_storage(v: Vec<Self>) -> CpuStorage {
                CpuStorage::$v(Buffer::Owned(v))
            }
            #[inline]
            fn buffer_into_storage(b: Buffer<Self>) -> CpuStorage {
                CpuStorage::$v(b)
            }
            #[inline]
            fn slice(s: &CpuStorage) -> Option<&[Self]> {
                match s {
                    CpuStorage::$v(v) => Some(&v[..]),
                    _ => None,
                }
            }
            #[inline]
            fn slice_mut(s: &mut CpuStorage) -> Option<&mut [Self]> {
                match s {
                    CpuStorage::$v(v) => Some(&mut v[..]),
                    _ => None,
                }
            }
            #[inline(always)]
            fn is_nan_elem(self) -> bool {
                let f: fn($t) -> bool = $nan;
                f(self)
            }
        }
    };
}
cpu_element!(bool, Bool, |_| false);
cpu_element!(u8, U8, |_| false);
cpu_element!(i8, I8, |_| false);
cpu_element!(i16, I16, |_| false);
cpu_element!(i32, I32, |_| false);
cpu_element!(i64, I64, |_| false);
cpu_element!(f16, F16, |x| x.is_nan());
cpu_element!(bf16, BF16, |x| x.is_nan());
cpu_element!(f32, F32, |x| x.is_nan());
cpu_element!(f64, F64, |x| x.is_nan());

impl CpuStorage {
    /// A storage owning `v`.
    pub fn from_vec<T: CpuElement>(v: Vec<T>) -> Self {
        T::into_storage(v)
    }

    /// A zero-copy storage of `len` elements of `dtype` at byte `offset` of `owner`'s bytes (native
    /// endianness), or an error when they are out of range, misaligned or (bool) not 0/1; the first
    /// write copies them (see [`Buffer`]).
    pub fn shared(dtype: DType, owner: Arc<dyn SharedBytes>, offset: usize, len: usize) -> Result<Self> {
        with_dtype!(dtype, T => Ok(T::buffer_into_storage(Buffer::<T>::shared(owner, offset, len)?)))
    }

    /// True when the elements are a zero-copy window on shared memory (not yet written).
    pub fn is_shared(&self) -> bool {
        with_storage!(self, v => v.is_shared())
    }

    /// For a zero-copy window on shared memory (a memory-mapped checkpoint), lets the OS drop the
    /// pages behind `elements` (indices into this storage) from this process's resident memory;
    /// they are read back on the next access.
    pub fn release_shared_pages(&self, elements: std::ops::Range<usize>) {
        with_storage!(self, v => v.release_pages(elements.clone()))
    }

    /// `n` elements of `dtype`, all equal to `value` (cast with torch's rules).
    pub fn full(dtype: DType, n: usize, value: Scalar) -> Self {
        with_dtype!(dtype, T => {
            let x = T::from_scalar(value);
            T::into_storage(crate::walk::par_collect(n, |_, out| {
                for o in out {
                    o.write(x);
                }
            }))
        })
    }

    /// `n` zeros of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Self {
        Self::full(dtype, n, Scalar::Int(0))
    }

    /// The elements as a slice of `T`, or a dtype error.
    pub fn as_slice<T: CpuElement>(&self) -> Result<&[T]> {
        T::slice(self).ok_or(Error::DTypeMismatch { op: "as_slice", a: T::DTYPE, b: self.dtype() })
    }

    /// The elements as a mutable slice of `T`, or a dtype error.
    pub fn as_slice_mut<T: CpuElement>(&mut self) -> Result<&mut [T]> {
        let d = self.dtype();
        T::slice_mut(self).ok_or(Error::DTypeMismatch { op: "as_slice_mut", a: T::DTYPE, b: d })
    }

    /// The raw bytes of the buffer (native endianness).
    pub fn as_bytes(&self) -> &[u8] {
        fn bytes<T>(v: &[T]) -> &[u8] {
            // SAFETY: every element type here is plain old data without padding; u8 has alignment 1.
            unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        }
        with_storage!(self, v => bytes(v))
    }
}

impl Drop for CpuStorage {
    /// Large buffers go back to the [`crate::pool`] for the next op of the same size.
    fn drop(&mut self) {
        fn give<T: Send + 'static>(b: &mut Buffer<T>) {
            if let Buffer::Owned(v) = b {
                crate::pool::give(std::mem::take(v));
            }
        }
        with_storage!(self, v => give(v))
    }
}

impl CpuStorage {
    /// Runs a prim that always has one output (elementwise ops, reductions, matmul, casts, copies,
    /// fills) and returns it directly, skipping the output list of [`BackendStorage::execute`] (a
    /// small op's dispatch cost matters); `None` for the other prims.
    pub fn execute_single(prim: &Prim, inputs: &[(&Self, &Layout)]) -> Option<Result<Self>> {
        let run = || -> Result<Self> {
            check_inputs(prim, inputs)?;
            Ok(match prim {
                Prim::Unary(op) => crate::unary::unary(*op, inputs[0].0, inputs[0].1)?,
                Prim::Binary(op) => crate::binary::binary(*op, inputs[0], inputs[1])?,
                Prim::Compare(op) => crate::compare::compare(*op, inputs[0], inputs[1])?,
                Prim::Where => crate::where_cond::where_cond(inputs[0], inputs[1], inputs[2])?,
                Prim::Reduce { op, dims } => crate::reduce::reduce(*op, inputs[0].0, inputs[0].1, dims)?,
                Prim::MatMul => crate::matmul::matmul(inputs[0], inputs[1])?,
                Prim::Cast(dtype) => crate::copy::to_contiguous(inputs[0].0, inputs[0].1, *dtype)?,
                Prim::Copy => {
                    let (s, l) = inputs[0];
                    crate::copy::to_contiguous(s, l, s.dtype())?
                }
                Prim::Full { shape, value, dtype } => {
                    CpuStorage::full(*dtype, shape.iter().product(), *value)
                }
                _ => unreachable!("only single-output prims get here"),
            })
        };
        match prim {
            Prim::Unary(_)
            | Prim::Binary(_)
            | Prim::Compare(_)
            | Prim::Where
            | Prim::Reduce { .. }
            | Prim::MatMul
            | Prim::Cast(_)
            | Prim::Copy
            | Prim::Full { .. } => Some(run()),
            _ => None,
        }
    }
}

/// The checks every prim's inputs pass first: the arity, and one shape for elementwise prims.
fn check_inputs(prim: &Prim, inputs: &[(&CpuStorage, &Layout)]) -> Result<()> {
    let arity = prim.arity();
    if inputs.len() != arity {
        return Err(Error::msg(format!("{}: expected {arity} inputs but got {}", prim.name(), inputs.len())));
    }
    let same_dims = |a: &[usize], b: &[usize]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y);
    if matches!(prim, Prim::Binary(_) | Prim::Compare(_) | Prim::Where)
        && inputs.iter().any(|(_, l)| !same_dims(l.dims(), inputs[0].1.dims()))
    {
        let shapes: Vec<_> = inputs.iter().map(|(_, l)| l.shape().clone()).collect();
        return Err(Error::shape(format!("{}: operands must share one shape, got {shapes:?}", prim.name())));
    }
    Ok(())
}

impl BackendStorage for CpuStorage {
    fn dtype(&self) -> DType {
        match self {
            CpuStorage::Bool(_) => DType::Bool,
            CpuStorage::U8(_) => DType::U8,
            CpuStorage::I8(_) => DType::I8,
            CpuStorage::I16(_) => DType::I16,
            CpuStorage::I32(_) => DType::I32,
            CpuStorage::I64(_) => DType::I64,
            CpuStorage::F16(_) => DType::F16,
            CpuStorage::BF16(_) => DType::BF16,
            CpuStorage::F32(_) => DType::F32,
            CpuStorage::F64(_) => DType::F64,
        }
    }

    fn device(&self) -> Device {
        Device::Cpu
    }

    fn len(&self) -> usize {
        with_storage!(self, v => v.len())
    }

    fn execute(prim: &Prim, inputs: &[(&Self, &Layout)]) -> Result<Vec<Self>> {
        if let Some(out) = CpuStorage::execute_single(prim, inputs) {
            return Ok(vec![out?]);
        }
        check_inputs(prim, inputs)?;
        match prim {
            Prim::ArgReduce { op, dim } => {
                let (v, i) = crate::arg_reduce::arg_reduce(*op, inputs[0].0, inputs[0].1, *dim)?;
                Ok(vec![v, i])
            }
            Prim::Index(op) => crate::index::execute(op, inputs),
            Prim::Shape(op) => crate::shape::execute(op, inputs),
            Prim::Sort(op) => crate::sort::execute(op, inputs),
            Prim::Nn(op) => crate::nn::execute(op, inputs),
            _ => unreachable!("execute_single runs every single-output prim"),
        }
    }

    fn copy_from(&mut self, dst_layout: &Layout, src: &Self, src_layout: &Layout) -> Result<()> {
        crate::copy::copy_from(self, dst_layout, src, src_layout)
    }

    fn fill(&mut self, layout: &Layout, value: Scalar) -> Result<()> {
        crate::copy::fill(self, layout, value)
    }
}
