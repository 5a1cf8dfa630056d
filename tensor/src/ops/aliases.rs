//! torch's convenience methods over other ops: dtype shortcuts (`x.float()`, `x.long()`), the
//! `*_as` and `new_*` forms, `ravel`, `trace`, `diag`, `mv`, and torch's alias names (`absolute`,
//! `arccos`, `multiply`, `greater`, ...).

use oxtorch_core::{DType, Error, Result, Scalar, Shape};

use super::Operand;
use crate::Tensor;

/// `name(&self)` as a cast to `dtype` (a no-op view when the dtype already matches).
macro_rules! dtype_shortcuts {
    ($($name:ident => $dtype:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("This tensor as `", stringify!($dtype), "` (torch's `x.", stringify!($name), "()`).")]
                pub fn $name(&self) -> Result<Tensor> {
                    self.to_dtype(DType::$dtype)
                }
            )*
        }
    };
}

dtype_shortcuts! {
    float => F32, double => F64, half => F16, bfloat16 => BF16, long => I64, int => I32,
    short => I16, char => I8, byte => U8, bool => Bool,
}

/// `alias(&self)` calling `op(&self)`.
macro_rules! unary_aliases {
    ($($alias:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("torch's alias `", stringify!($alias), "` of [`Tensor::", stringify!($op), "`].")]
                pub fn $alias(&self) -> Result<Tensor> {
                    self.$op()
                }
            )*
        }
    };
}

unary_aliases! {
    absolute => abs, negative => neg, arccos => acos, arcsin => asin, arctan => atan,
    arccosh => acosh, arcsinh => asinh, arctanh => atanh, fix => trunc,
}

/// `alias(&self, other)` calling `op(&self, other)` for an operand.
macro_rules! binary_aliases {
    ($($alias:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("torch's alias `", stringify!($alias), "` of [`Tensor::", stringify!($op), "`].")]
                pub fn $alias(&self, other: impl Into<Operand>) -> Result<Tensor> {
                    self.$op(other)
                }
            )*
        }
    };
}

binary_aliases! {
    multiply => mul, divide => div, true_divide => div, subtract => sub, arctan2 => atan2,
    greater => gt, greater_equal => ge, less => lt, less_equal => le, not_equal => ne,
}

impl Tensor {
    /// The number of dimensions (torch's `dim()`; also [`Tensor::rank`]).
    pub fn dim(&self) -> usize {
        self.rank()
    }

    /// The number of dimensions (torch's `ndimension()`).
    pub fn ndimension(&self) -> usize {
        self.rank()
    }

    /// The number of elements (torch's `nelement()`).
    pub fn nelement(&self) -> usize {
        self.numel()
    }

    /// This tensor cast to `other`'s dtype (torch's `type_as`).
    pub fn type_as(&self, other: &Tensor) -> Result<Tensor> {
        self.to_dtype(other.dtype())
    }

    /// A view with `other`'s shape (torch's `view_as`).
    pub fn view_as(&self, other: &Tensor) -> Result<Tensor> {
        self.view(other.dims())
    }

    /// This tensor reshaped to `other`'s shape (torch's `reshape_as`).
    pub fn reshape_as(&self, other: &Tensor) -> Result<Tensor> {
        self.reshape(other.dims())
    }

    /// The elements as a 1-D tensor, a view when possible (torch's `ravel`).
    pub fn ravel(&self) -> Result<Tensor> {
        self.reshape([-1])
    }

    /// Zeros of `shape` with this tensor's dtype and device (torch's `new_zeros`).
    pub fn new_zeros(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        Tensor::zeros(shape, self.same_options())
    }

    /// Ones of `shape` with this tensor's dtype and device (torch's `new_ones`).
    pub fn new_ones(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        Tensor::ones(shape, self.same_options())
    }

    /// `value` in a tensor of `shape` with this tensor's dtype and device (torch's `new_full`).
    pub fn new_full(&self, shape: impl Into<Shape>, value: impl Into<Scalar>) -> Result<Tensor> {
        Tensor::full(shape, value, self.same_options())
    }

    /// An (unspecified, zero-filled) tensor of `shape` with this tensor's dtype and device
    /// (torch's `new_empty`).
    pub fn new_empty(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        Tensor::zeros(shape, self.same_options())
    }

    /// The sum of the main diagonal of a matrix (torch's `trace`); integers sum to int64.
    pub fn trace(&self) -> Result<Tensor> {
        if self.rank() != 2 {
            return Err(Error::msg(format!(
                "trace: expected a matrix, but got tensor with dim {}",
                self.rank()
            )));
        }
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType { op: "trace", dtype: DType::Bool });
        }
        self.diagonal(0, 0, 1)?.sum_all()
    }

    /// torch's `diag`: a vector becomes a square matrix with it on diagonal `diagonal` (above the
    /// main one when positive); a matrix gives (a copy of) that diagonal.
    pub fn diag(&self, diagonal: i64) -> Result<Tensor> {
        match self.rank() {
            1 => {
                // The square result must be allocatable (an Err, never an abort or overflow).
                let n = self.dims()[0] as u128 + u128::from(diagonal.unsigned_abs());
                let bytes =
                    n.checked_mul(n).and_then(|e| e.checked_mul(self.dtype().size_in_bytes() as u128));
                if bytes.is_none_or(|b| b > isize::MAX as u128) {
                    return Err(Error::msg(format!(
                        "diag: the {n}x{n} result for diagonal {diagonal} is too large to allocate"
                    )));
                }
                self.diag_embed(diagonal, 0, 1)
            }
            2 => {
                let (rows, cols) = (self.dims()[0] as i64, self.dims()[1] as i64);
                // torch gives an empty diagonal for an offset past the matrix.
                if diagonal >= cols || diagonal <= -rows {
                    return Tensor::zeros([0], self.same_options());
                }
                self.diagonal(diagonal as isize, 0, 1)?.contiguous()
            }
            r => Err(Error::msg(format!("diag(): Supports 1D or 2D tensors. Got {r}D"))),
        }
    }

    /// Matrix × vector (torch's `mv`): `[n, m] @ [m] → [n]`, one dtype for both.
    pub fn mv(&self, vec: &Tensor) -> Result<Tensor> {
        if self.rank() != 2 || vec.rank() != 1 {
            return Err(Error::msg(format!(
                "vector + matrix @ vector expected, got 1, {}, {}",
                self.rank(),
                vec.rank()
            )));
        }
        if self.dims()[1] != vec.dims()[0] {
            return Err(Error::shape(format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                self.dims()[0],
                self.dims()[0],
                self.dims()[1],
                vec.dims()[0]
            )));
        }
        if self.dtype() != vec.dtype() {
            let (v, m) = (vec.dtype().scalar_type_name(), self.dtype().scalar_type_name());
            return Err(Error::msg(format!(
                "addmv input tensors must have the same dtype, but got {v}, {m}, and {v}"
            )));
        }
        self.matmul(vec)
    }

    /// Degrees to radians (torch's `deg2rad`); integers promote to the default float dtype.
    pub fn deg2rad(&self) -> Result<Tensor> {
        self.mul_float(std::f64::consts::PI / 180.0)
    }

    /// Radians to degrees (torch's `rad2deg`); integers promote to the default float dtype.
    pub fn rad2deg(&self) -> Result<Tensor> {
        self.mul_float(180.0 / std::f64::consts::PI)
    }

    /// `self * factor` with integers and bool promoted to the default float dtype first.
    fn mul_float(&self, factor: f64) -> Result<Tensor> {
        if self.is_floating_point() {
            self.mul(factor)
        } else {
            self.to_dtype(DType::default_float())?.mul(factor)
        }
    }

    /// `self - alpha * other` (torch's `sub(other, alpha=...)`), with [`Tensor::add_scaled`]'s
    /// dtype rules.
    pub fn sub_scaled(&self, other: &Tensor, alpha: impl Into<Scalar>) -> Result<Tensor> {
        if self.dtype() == DType::Bool || other.dtype() == DType::Bool {
            return Err(Error::msg(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ));
        }
        let alpha = match alpha.into() {
            Scalar::Int(a) => Scalar::Int(a.wrapping_neg()),
            Scalar::Float(a) => Scalar::Float(-a),
            Scalar::Bool(a) => Scalar::Int(-(a as i64)),
        };
        self.add_scaled(other, alpha)
    }

    /// True for a signed dtype (every float and signed integer; torch's `is_signed`).
    pub fn is_signed(&self) -> bool {
        !matches!(self.dtype(), DType::Bool | DType::U8)
    }

    /// True when `other` has this tensor's shape (torch's `is_same_size`).
    pub fn is_same_size(&self, other: &Tensor) -> bool {
        self.dims() == other.dims()
    }

    /// The truth of a one-element tensor (torch's `is_nonzero`): an error for other sizes.
    pub fn is_nonzero(&self) -> Result<bool> {
        match self.numel() {
            0 => Err(Error::msg("Boolean value of Tensor with no values is ambiguous")),
            1 => Ok(self.reshape([1])?.to_dtype(DType::Bool)?.to_vec::<bool>()?[0]),
            _ => Err(Error::msg("Boolean value of Tensor with more than one value is ambiguous")),
        }
    }

    /// The bytes the elements take (torch's `nbytes`: `numel · itemsize`).
    pub fn nbytes(&self) -> usize {
        self.numel() * self.element_size()
    }

    /// The bytes one element takes (torch's `itemsize`).
    pub fn itemsize(&self) -> usize {
        self.element_size()
    }

    /// The last two dims swapped (torch's `mT`): a view, for matrices and batches of them.
    pub fn mt(&self) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg(format!(
                "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.rank()
            )));
        }
        self.transpose(-2, -1)
    }

    /// The inner product over the last dim (torch's `inner`): `[..., n] × [..., n]` gives the
    /// leading dims of both; a 0-d operand multiplies.
    pub fn inner(&self, other: &Tensor) -> Result<Tensor> {
        if self.rank() == 0 || other.rank() == 0 {
            return self.mul(other);
        }
        let (m, n) = (self.dims()[self.rank() - 1], other.dims()[other.rank() - 1]);
        if m != n {
            return Err(Error::shape(format!(
                "inner() the last dimension must match on both input tensors but got shapes {} and {}",
                self.shape(),
                other.shape()
            )));
        }
        self.tensordot_dims(other, &[-1], &[-1])
    }

    /// The flattened input on diagonal `offset` of a square matrix (torch's `diagflat`).
    pub fn diagflat(&self, offset: i64) -> Result<Tensor> {
        self.reshape([-1])?.diag(offset)
    }

    /// torch's `concatenate`, an alias of [`Tensor::cat`].
    pub fn concatenate(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::cat(tensors, dim)
    }

    /// torch's `scatter(dim, index, src, reduce=)`: `"add"` or `"multiply"` onto the existing values
    /// ([`Tensor::scatter_reduce`] with `"sum"`/`"prod"` and `include_self`).
    pub fn scatter_with_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
    ) -> Result<Tensor> {
        let reduce = match reduce {
            "add" => "sum",
            "multiply" => "prod",
            _ => return Err(Error::msg("reduce argument must be either add or multiply.")),
        };
        self.scatter_reduce(dim, index, src, reduce, true)
    }

    /// The coordinates of flat indices in a tensor of `shape` (torch's `unravel_index`): one int64
    /// tensor per dim, each of the indices' shape. Indices wrap modulo the shape's size as torch
    /// 2.15's do (-1 is the last element).
    pub fn unravel_index(&self, shape: &[usize]) -> Result<Vec<Tensor>> {
        if self.is_floating_point() || self.dtype() == DType::Bool {
            return Err(Error::msg(format!(
                "expected 'indices' to be integer dtype, but got torch.{}",
                self.dtype().name()
            )));
        }
        // Every size and their product are int64 values in torch (never an overflow panic here).
        let numel = shape
            .iter()
            .try_fold(1usize, |acc, &s| acc.checked_mul(s))
            .filter(|&n| i64::try_from(n).is_ok() && shape.iter().all(|&s| i64::try_from(s).is_ok()))
            .ok_or_else(|| {
                Error::msg(format!(
                    "unravel_index: the product of 'shape' does not fit in int64, but got {shape:?}"
                ))
            })?;
        let indices = self.to_dtype(DType::I64)?;
        let mut rest = indices.remainder(numel.max(1) as i64)?;
        let mut out = Vec::with_capacity(shape.len());
        for d in (0..shape.len()).rev() {
            let size = shape[d].max(1) as i64;
            out.push(rest.remainder(size)?);
            rest = rest.floor_divide(size)?;
        }
        out.reverse();
        Ok(out)
    }
}
