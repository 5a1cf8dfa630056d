//! More of torch's small conveniences: the in-place matrix products (`addmm_`, `addmv_`, `addr_`,
//! `baddbmm_`), in-place alias names (`absolute_`, `arccos_`, `multiply_`, `greater_`, ...),
//! `sgn`/`positive`, the index forms of `hsplit`/`vsplit`/`dsplit`, `trapz`, `empty_strided`,
//! `new_tensor`, `cpu()` and torch's `x.where(condition, y)`.

use oxtorch_backend_cpu::CpuElement;
use oxtorch_core::{DType, Device, Error, Result, Scalar, Shape};

use super::Operand;
use crate::options::TensorOptions;
use crate::Tensor;

/// The tensor inside an operand, for [`Tensor::apply_`]'s autograd check.
fn operand_tensors(operand: &Operand) -> Vec<&Tensor> {
    match operand {
        Operand::Tensor(t) => vec![t],
        Operand::Scalar(_) => vec![],
    }
}

/// torch's check for in-place matrix products: the out-of-place result must have self's shape.
fn check_inplace_size(input: &Tensor, output: &[usize]) -> Result<()> {
    if input.dims() != output {
        return Err(Error::shape(format!(
            "Bad in-place call: input tensor size {:?} and output tensor size {:?} should match",
            input.dims(),
            output
        )));
    }
    Ok(())
}

/// `name_(&self)` writing `self.op()` in place.
macro_rules! unary_inplace_aliases {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("In-place [`Tensor::", stringify!($op), "`] (torch's `", stringify!($name), "`).")]
                pub fn $name(&self) -> Result<&Tensor> {
                    self.apply_(&[], |x| x.$op())
                }
            )*
        }
    };
}

unary_inplace_aliases! {
    absolute_ => abs, negative_ => neg, fix_ => trunc, arccos_ => acos, arcsin_ => asin,
    arctan_ => atan, arccosh_ => acosh, arcsinh_ => asinh, arctanh_ => atanh, deg2rad_ => deg2rad,
    rad2deg_ => rad2deg, i0_ => i0, sgn_ => sgn,
}

/// `name_(&self, other)` writing `self.op(other)` in place, for an operand (tensor or number).
macro_rules! binary_inplace_aliases {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("In-place [`Tensor::", stringify!($op), "`] (torch's `", stringify!($name), "`).")]
                pub fn $name(&self, other: impl Into<Operand>) -> Result<&Tensor> {
                    let other = other.into();
                    self.apply_(&operand_tensors(&other), |x| x.$op(other.clone()))
                }
            )*
        }
    };
}

binary_inplace_aliases! {
    arctan2_ => atan2, divide_ => div, multiply_ => mul, subtract_ => sub, greater_ => gt,
    greater_equal_ => ge, less_ => lt, less_equal_ => le, not_equal_ => ne,
}

impl Tensor {
    /// In-place [`Tensor::addmm`] (torch's `addmm_`): `self = beta · self + alpha · mat1 @ mat2`;
    /// the product's shape must be self's.
    pub fn addmm_(
        &self,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        if mat1.rank() == 2 && mat2.rank() == 2 {
            check_inplace_size(self, &[mat1.dims()[0], mat2.dims()[1]])?;
        }
        let (beta, alpha) = (beta.into(), alpha.into());
        self.apply_(&[mat1, mat2], |x| x.addmm(mat1, mat2, beta, alpha))
    }

    /// In-place [`Tensor::addmv`] (torch's `addmv_`): `self = beta · self + alpha · mat @ vec`;
    /// self must have the product's shape `[n]`.
    pub fn addmv_(
        &self,
        mat: &Tensor,
        vec: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        if mat.rank() == 2 && vec.rank() == 1 {
            check_inplace_size(self, &[mat.dims()[0]])?;
        }
        let (beta, alpha) = (beta.into(), alpha.into());
        self.apply_(&[mat, vec], |x| x.addmv(mat, vec, beta, alpha))
    }

    /// In-place [`Tensor::addr`] (torch's `addr_`): `self = beta · self + alpha · outer(vec1,
    /// vec2)`; self must be the `[n, m]` matrix.
    pub fn addr_(
        &self,
        vec1: &Tensor,
        vec2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        if self.rank() != 2 {
            return Err(Error::msg(format!("2D tensor expected, got {}D tensor for input", self.rank())));
        }
        if vec1.rank() == 1 && vec2.rank() == 1 && self.dims() != [vec1.dims()[0], vec2.dims()[0]] {
            return Err(Error::shape(format!(
                "size mismatch, input: {:?}, v1: {:?}, v2: {:?}",
                self.dims(),
                vec1.dims(),
                vec2.dims()
            )));
        }
        let (beta, alpha) = (beta.into(), alpha.into());
        self.apply_(&[vec1, vec2], |x| x.addr(vec1, vec2, beta, alpha))
    }

    /// In-place [`Tensor::baddbmm`] (torch's `baddbmm_`): `self = beta · self + alpha · batch1 @
    /// batch2` batch by batch; self must be the `[b, n, p]` result.
    pub fn baddbmm_(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        if batch1.rank() == 3 && batch2.rank() == 3 {
            check_inplace_size(self, &[batch1.dims()[0], batch1.dims()[1], batch2.dims()[2]])?;
        }
        let (beta, alpha) = (beta.into(), alpha.into());
        self.apply_(&[batch1, batch2], |x| x.baddbmm(batch1, batch2, beta, alpha))
    }

    /// In-place [`Tensor::ldexp`] (torch's `ldexp_`): `self *= 2^other`; self must be floating
    /// (the result is).
    pub fn ldexp_(&self, other: &Tensor) -> Result<&Tensor> {
        if !self.is_floating_point() {
            return Err(Error::msg(format!(
                "ldexp can't be cast to the desired output type {}",
                self.dtype().scalar_type_name()
            )));
        }
        self.apply_(&[other], |x| x.ldexp(other))
    }

    /// In-place [`Tensor::mvlgamma`] (torch's `mvlgamma_(p)`).
    pub fn mvlgamma_(&self, p: i64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.mvlgamma(p))
    }

    /// The sign of each element (torch's `sgn`): [`Tensor::sign`] for real tensors (oxtorch has no
    /// complex dtypes, where `sgn` would be `x / |x|`); a bool tensor is copied unchanged.
    pub fn sgn(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return self.copy();
        }
        self.sign()
    }

    /// This tensor itself (torch's `positive`, unary `+`): the same tensor, not a copy; an error
    /// for bool tensors, as in torch.
    pub fn positive(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::msg("The `+` operator, on a bool tensor is not supported."));
        }
        Ok(self.clone())
    }

    /// torch's `hsplit(indices)`: views split before each index along dim 1 (dim 0 of a vector),
    /// as [`Tensor::tensor_split_indices`].
    pub fn hsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        self.check_split_min_rank("hsplit", 1)?;
        let dim = if self.rank() == 1 { 0 } else { 1 };
        self.tensor_split_indices(indices, dim)
    }

    /// torch's `vsplit(indices)`: views split before each index along dim 0 of a tensor of 2 or
    /// more dims.
    pub fn vsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        self.check_split_min_rank("vsplit", 2)?;
        self.tensor_split_indices(indices, 0)
    }

    /// torch's `dsplit(indices)`: views split before each index along dim 2 of a tensor of 3 or
    /// more dims.
    pub fn dsplit_indices(&self, indices: &[isize]) -> Result<Vec<Tensor>> {
        self.check_split_min_rank("dsplit", 3)?;
        self.tensor_split_indices(indices, 2)
    }

    /// torch's rank check of `hsplit`/`vsplit`/`dsplit`.
    fn check_split_min_rank(&self, name: &str, min_rank: usize) -> Result<()> {
        if self.rank() < min_rank {
            return Err(Error::msg(format!(
                "torch.{name} requires a tensor with at least {min_rank} dimension, but got a tensor with {} dimensions!",
                self.rank()
            )));
        }
        Ok(())
    }

    /// torch's `trapz(y, dim=)`, the old name of [`Tensor::trapezoid_dx`] with unit spacing.
    pub fn trapz(&self, dim: isize) -> Result<Tensor> {
        self.trapezoid_dx(1.0, dim)
    }

    /// torch's `trapz(y, x, dim=)`, the old name of [`Tensor::trapezoid_x`].
    pub fn trapz_x(&self, x: &Tensor, dim: isize) -> Result<Tensor> {
        self.trapezoid_x(x, dim)
    }

    /// torch's `empty_strided(size, stride)`: a (zero-filled) tensor of `size` whose elements are
    /// laid out with `stride` over a storage just large enough for them.
    pub fn empty_strided(size: &[usize], stride: &[usize], opts: impl Into<TensorOptions>) -> Result<Tensor> {
        if size.len() != stride.len() {
            return Err(Error::msg(format!(
                "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                size.len(),
                stride.len()
            )));
        }
        let overflow = || {
            Error::msg(format!(
                "Storage size calculation overflowed with sizes={size:?} and strides={stride:?}"
            ))
        };
        let storage = if size.contains(&0) {
            0
        } else {
            size.iter()
                .zip(stride)
                .try_fold(1usize, |acc, (&n, &s)| (n - 1).checked_mul(s).and_then(|e| acc.checked_add(e)))
                .filter(|&n| n.checked_mul(8).is_some_and(|bytes| bytes <= isize::MAX as usize))
                .ok_or_else(overflow)?
        };
        let opts: TensorOptions = opts.into();
        let opts = opts.dtype(opts.dtype_or(DType::default_float()));
        Tensor::zeros([storage], opts)?.as_strided(size, stride, Some(0))
    }

    /// torch's `new_empty_strided(size, stride)`: [`Tensor::empty_strided`] with this tensor's
    /// dtype and device.
    pub fn new_empty_strided(&self, size: &[usize], stride: &[usize]) -> Result<Tensor> {
        Tensor::empty_strided(size, stride, self.same_options())
    }

    /// torch's `new_tensor(data)`: `data` in a tensor of `shape` with this tensor's dtype and
    /// device (values cast as `to_dtype` casts them).
    pub fn new_tensor_from_vec<T: CpuElement>(
        &self,
        data: Vec<T>,
        shape: impl Into<Shape>,
    ) -> Result<Tensor> {
        Tensor::from_vec(data, shape)?.to_dtype(self.dtype())?.to(self.device())
    }

    /// This tensor on the CPU (torch's `cpu()`): itself when already there.
    pub fn cpu(&self) -> Result<Tensor> {
        self.to(Device::Cpu)
    }

    /// torch's `x.where(condition, y)`: `x` where `condition` is true, else `y` (that is,
    /// `torch.where(condition, x, y)`). Note the receiver: here it is the values, while in
    /// [`Tensor::where_self`] it is the condition.
    pub fn r#where(&self, condition: &Tensor, other: impl Into<Operand>) -> Result<Tensor> {
        Tensor::where_cond(condition, self, other)
    }
}
