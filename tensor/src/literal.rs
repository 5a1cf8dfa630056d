//! Tensors from nested Rust arrays: the `tensor!` macro.

use oxtorch_backend_cpu::CpuElement;
use oxtorch_core::{DType, Element, Error, Result};

use crate::Tensor;

/// Nested arrays (or `Vec`s) of numbers or bools that describe a tensor's values and shape.
pub trait TensorLiteral {
    /// The element type at the leaves.
    type Leaf: CpuElement;
    /// Appends this level's sizes (and those below) to `shape`; errors on ragged `Vec`s.
    fn literal_shape(&self, shape: &mut Vec<usize>) -> Result<()>;
    /// Appends the leaves in row-major order.
    fn literal_flatten(&self, out: &mut Vec<Self::Leaf>);
}

macro_rules! leaf {
    ($($t:ty),*) => {$(
        impl TensorLiteral for $t {
            type Leaf = $t;
            fn literal_shape(&self, _: &mut Vec<usize>) -> Result<()> { Ok(()) }
            fn literal_flatten(&self, out: &mut Vec<$t>) { out.push(*self) }
        }
    )*};
}
leaf!(bool, u8, i8, i16, i32, i64, f32, f64, half::f16, half::bf16);

fn nested_shape<T: TensorLiteral>(items: &[T], shape: &mut Vec<usize>) -> Result<()> {
    shape.push(items.len());
    let Some(first) = items.first() else {
        return Ok(());
    };
    let mut inner = Vec::new();
    first.literal_shape(&mut inner)?;
    for (i, item) in items.iter().enumerate().skip(1) {
        let mut other = Vec::new();
        item.literal_shape(&mut other)?;
        if other != inner {
            return Err(Error::shape(format!(
                "expected sequence of length {:?} at dim {} (got {:?} at index {i})",
                inner,
                shape.len(),
                other
            )));
        }
    }
    shape.extend(inner);
    Ok(())
}

impl<T: TensorLiteral, const N: usize> TensorLiteral for [T; N] {
    type Leaf = T::Leaf;
    fn literal_shape(&self, shape: &mut Vec<usize>) -> Result<()> {
        nested_shape(self, shape)
    }
    fn literal_flatten(&self, out: &mut Vec<T::Leaf>) {
        self.iter().for_each(|x| x.literal_flatten(out));
    }
}

impl<T: TensorLiteral> TensorLiteral for Vec<T> {
    type Leaf = T::Leaf;
    fn literal_shape(&self, shape: &mut Vec<usize>) -> Result<()> {
        nested_shape(self, shape)
    }
    fn literal_flatten(&self, out: &mut Vec<T::Leaf>) {
        self.iter().for_each(|x| x.literal_flatten(out));
    }
}

impl Tensor {
    /// A tensor from nested arrays, with torch's `torch.tensor` dtype choice: floats become float32
    /// (the default dtype), Rust's default integers (i32) and i64 become int64, other leaf types
    /// (bool, u8, i8, i16, f16, bf16) keep their dtype. Use [`Tensor::from_vec`] for exact f64 data.
    pub fn from_literal<L: TensorLiteral>(data: L) -> Result<Tensor> {
        let mut shape = Vec::new();
        data.literal_shape(&mut shape)?;
        let mut flat = Vec::new();
        data.literal_flatten(&mut flat);
        let t = Tensor::from_vec(flat, shape)?;
        match L::Leaf::DTYPE {
            DType::F64 => t.to_dtype(DType::default_float()),
            DType::I32 => t.to_dtype(DType::I64),
            _ => Ok(t),
        }
    }
}

/// Builds a cpu tensor from nested array literals, like `torch.tensor`:
///
/// ```
/// use oxtorch_tensor::{tensor, DType};
/// let a = tensor!([[1.0, 2.0], [3.0, 4.0]]);     // float32, shape [2, 2]
/// let b = tensor!([1, 2, 3]);                      // int64
/// let c = tensor!([true, false]);                  // bool
/// let d = tensor!([0.5, 1.5], dtype = DType::F16); // float16
/// let e = tensor!(3.5);                            // 0-dim float32
/// assert_eq!(a.dims(), &[2, 2]);
/// assert_eq!(b.dtype(), DType::I64);
/// assert_eq!(d.dtype(), DType::F16);
/// assert_eq!(e.rank(), 0);
/// # let _ = c;
/// ```
///
/// Panics on ragged `Vec` data, like `vec!` panics on allocation failure; use
/// [`Tensor::from_literal`] for a `Result`.
#[macro_export]
macro_rules! tensor {
    ($data:expr, dtype = $dtype:expr $(,)?) => {
        $crate::Tensor::from_literal($data)
            .and_then(|t| t.to_dtype($dtype))
            .unwrap_or_else(|e| panic!("tensor!: {e}"))
    };
    ($data:expr $(,)?) => {
        $crate::Tensor::from_literal($data).unwrap_or_else(|e| panic!("tensor!: {e}"))
    };
}
