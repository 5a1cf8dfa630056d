//! torch's trailing-underscore methods: each writes its out-of-place op's result into `self`
//! through [`Tensor::apply_`], which checks torch's in-place rules (the result keeps `self`'s
//! shape and casts to its dtype) and gives `self` the op's history under autograd.

use oxtorch_core::{DType, Result, Scalar};

use super::Operand;
use crate::Tensor;

/// The tensor inside an operand, for [`Tensor::apply_`]'s autograd check.
fn tensors(operand: &Operand) -> Vec<&Tensor> {
    match operand {
        Operand::Tensor(t) => vec![t],
        Operand::Scalar(_) => vec![],
    }
}

/// `name_(&self)` writing `self.name()` in place.
macro_rules! unary_inplace {
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

unary_inplace! {
    abs_ => abs, neg_ => neg, sign_ => sign, square_ => square, exp_ => exp, log_ => log,
    sqrt_ => sqrt, rsqrt_ => rsqrt, reciprocal_ => reciprocal, sin_ => sin, cos_ => cos, tan_ => tan,
    tanh_ => tanh, sigmoid_ => sigmoid, relu_ => relu, floor_ => floor, ceil_ => ceil,
    round_ => round, trunc_ => trunc, frac_ => frac, exp2_ => exp2, expm1_ => expm1, log2_ => log2,
    log10_ => log10, log1p_ => log1p, asin_ => asin, acos_ => acos, atan_ => atan, sinh_ => sinh,
    cosh_ => cosh, asinh_ => asinh, acosh_ => acosh, atanh_ => atanh, erf_ => erf, erfc_ => erfc,
    erfinv_ => erfinv, lgamma_ => lgamma, digamma_ => digamma, bitwise_not_ => bitwise_not,
    logical_not_ => logical_not, sinc_ => sinc,
}

/// `name_(&self, other)` writing `self.name(other)` in place, for an operand (tensor or number).
macro_rules! binary_inplace {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("In-place [`Tensor::", stringify!($op), "`] (torch's `", stringify!($name), "`).")]
                pub fn $name(&self, other: impl Into<Operand>) -> Result<&Tensor> {
                    let other = other.into();
                    self.apply_(&tensors(&other), |x| x.$op(other.clone()))
                }
            )*
        }
    };
}

binary_inplace! {
    pow_ => pow, remainder_ => remainder, fmod_ => fmod, atan2_ => atan2, hypot_ => hypot,
    floor_divide_ => floor_divide, bitwise_and_ => bitwise_and, bitwise_or_ => bitwise_or,
    bitwise_xor_ => bitwise_xor, bitwise_left_shift_ => bitwise_left_shift,
    bitwise_right_shift_ => bitwise_right_shift, copysign_ => copysign, xlogy_ => xlogy,
    eq_ => eq, ne_ => ne, lt_ => lt, le_ => le, gt_ => gt, ge_ => ge, clamp_min_ => clamp_min,
    clamp_max_ => clamp_max, true_divide_ => div,
}

/// `name_(&self, other: &Tensor)` writing `self.name(other)` in place.
macro_rules! tensor_binary_inplace {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {
            $(
                #[doc = concat!("In-place [`Tensor::", stringify!($op), "`] (torch's `", stringify!($name), "`).")]
                pub fn $name(&self, other: &Tensor) -> Result<&Tensor> {
                    self.apply_(&[other], |x| x.$op(other))
                }
            )*
        }
    };
}

tensor_binary_inplace! {
    logical_and_ => logical_and, logical_or_ => logical_or, logical_xor_ => logical_xor,
    heaviside_ => heaviside,
}

impl Tensor {
    /// In-place [`Tensor::clamp`] (torch's `clamp_`).
    pub fn clamp_(&self, min: Option<Operand>, max: Option<Operand>) -> Result<&Tensor> {
        let others: Vec<Tensor> = [&min, &max].into_iter().flatten().flat_map(tensors).cloned().collect();
        self.apply_(&others.iter().collect::<Vec<_>>(), |x| x.clamp(min, max))
    }

    /// In-place [`Tensor::clip`] (torch's `clip_`).
    pub fn clip_(&self, min: Option<Operand>, max: Option<Operand>) -> Result<&Tensor> {
        self.clamp_(min, max)
    }

    /// In-place [`Tensor::float_power`] (torch's `float_power_`): `self` must be float64, the
    /// dtype the result has.
    pub fn float_power_(&self, exponent: impl Into<Operand>) -> Result<&Tensor> {
        if self.dtype() != DType::F64 {
            return Err(oxtorch_core::Error::msg(format!(
                "the base given to float_power_ has dtype {} but the operation's result requires dtype Double",
                self.dtype().scalar_type_name()
            )));
        }
        let exponent = exponent.into();
        self.apply_(&tensors(&exponent), |x| x.float_power(exponent.clone()))
    }

    /// In-place [`Tensor::lerp`] (torch's `lerp_`).
    pub fn lerp_(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<&Tensor> {
        let weight = weight.into();
        let mut others = vec![end];
        others.extend(tensors(&weight));
        self.apply_(&others, |x| x.lerp(end, weight.clone()))
    }

    /// In-place [`Tensor::addcmul`] (torch's `addcmul_`): `self += value * tensor1 * tensor2`.
    pub fn addcmul_(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Result<&Tensor> {
        let value = value.into();
        self.apply_(&[tensor1, tensor2], |x| x.addcmul(tensor1, tensor2, value))
    }

    /// In-place [`Tensor::addcdiv`] (torch's `addcdiv_`): `self += value * tensor1 / tensor2`.
    pub fn addcdiv_(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Result<&Tensor> {
        let value = value.into();
        self.apply_(&[tensor1, tensor2], |x| x.addcdiv(tensor1, tensor2, value))
    }

    /// In-place [`Tensor::masked_fill`] (torch's `masked_fill_`): the mask broadcasts to `self`.
    pub fn masked_fill_(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<&Tensor> {
        let value = value.into();
        let mut others = vec![mask];
        others.extend(tensors(&value));
        self.apply_(&others, |x| x.masked_fill(mask, value.clone()))
    }

    /// In-place [`Tensor::masked_scatter`] (torch's `masked_scatter_`).
    pub fn masked_scatter_(&self, mask: &Tensor, source: &Tensor) -> Result<&Tensor> {
        self.apply_(&[source], |x| x.masked_scatter(mask, source))
    }

    /// In-place [`Tensor::nan_to_num`] (torch's `nan_to_num_`).
    pub fn nan_to_num_(&self, nan: Option<f64>, posinf: Option<f64>, neginf: Option<f64>) -> Result<&Tensor> {
        self.apply_(&[], |x| x.nan_to_num(nan, posinf, neginf))
    }

    /// In-place [`Tensor::logit`] (torch's `logit_`).
    pub fn logit_(&self, eps: Option<f64>) -> Result<&Tensor> {
        self.apply_(&[], |x| x.logit(eps))
    }

    /// In-place [`Tensor::round_decimals`] (torch's `round_(decimals=)`).
    pub fn round_decimals_(&self, decimals: i64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.round_decimals(decimals))
    }

    /// In-place [`Tensor::polygamma`] (torch's `polygamma_(n)`).
    pub fn polygamma_(&self, n: i64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.polygamma(n))
    }

    /// In-place [`Tensor::tril`] (torch's `tril_`).
    pub fn tril_(&self, diagonal: i64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.tril(diagonal))
    }

    /// In-place [`Tensor::triu`] (torch's `triu_`).
    pub fn triu_(&self, diagonal: i64) -> Result<&Tensor> {
        self.apply_(&[], |x| x.triu(diagonal))
    }

    /// In-place [`Tensor::cumsum`] (torch's `cumsum_`).
    pub fn cumsum_(&self, dim: isize) -> Result<&Tensor> {
        self.apply_(&[], |x| x.cumsum(dim, Some(x.dtype())))
    }

    /// In-place [`Tensor::cumprod`] (torch's `cumprod_`).
    pub fn cumprod_(&self, dim: isize) -> Result<&Tensor> {
        self.apply_(&[], |x| x.cumprod(dim, Some(x.dtype())))
    }

    /// In-place [`Tensor::scatter`] (torch's `scatter_(dim, index, src)`).
    pub fn scatter_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<&Tensor> {
        self.apply_(&[src], |x| x.scatter(dim, index, src))
    }

    /// In-place [`Tensor::scatter_value`] (torch's `scatter_(dim, index, value)`).
    pub fn scatter_value_(&self, dim: isize, index: &Tensor, value: impl Into<Scalar>) -> Result<&Tensor> {
        let value = value.into();
        self.apply_(&[], |x| x.scatter_value(dim, index, value))
    }

    /// In-place [`Tensor::scatter_add`] (torch's `scatter_add_`).
    pub fn scatter_add_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<&Tensor> {
        self.apply_(&[src], |x| x.scatter_add(dim, index, src))
    }

    /// In-place [`Tensor::scatter_reduce`] (torch's `scatter_reduce_`).
    pub fn scatter_reduce_(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<&Tensor> {
        self.apply_(&[src], |x| x.scatter_reduce(dim, index, src, reduce, include_self))
    }

    /// In-place [`Tensor::index_add`] (torch's `index_add_`).
    pub fn index_add_(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: impl Into<Scalar>,
    ) -> Result<&Tensor> {
        let alpha = alpha.into();
        self.apply_(&[source], |x| x.index_add(dim, index, source, alpha))
    }

    /// In-place [`Tensor::index_copy`] (torch's `index_copy_`).
    pub fn index_copy_(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<&Tensor> {
        self.apply_(&[source], |x| x.index_copy(dim, index, source))
    }

    /// In-place [`Tensor::index_fill`] (torch's `index_fill_`).
    pub fn index_fill_(&self, dim: isize, index: &Tensor, value: impl Into<Scalar>) -> Result<&Tensor> {
        let value = value.into();
        self.apply_(&[], |x| x.index_fill(dim, index, value))
    }

    /// Writes `value` on the main diagonal in place (torch's `fill_diagonal_`): a matrix, or a
    /// tensor whose dims are all equal; with `wrap`, a tall matrix's diagonal restarts every
    /// `columns + 1` rows.
    pub fn fill_diagonal_(&self, value: impl Into<Scalar>, wrap: bool) -> Result<&Tensor> {
        let dims = self.dims().to_vec();
        if dims.len() < 2 {
            return Err(oxtorch_core::Error::msg("dimensions must larger than 1"));
        }
        if dims.len() > 2 && dims.iter().any(|&d| d != dims[0]) {
            return Err(oxtorch_core::Error::msg("all dimensions of input must be of equal length"));
        }
        let value = value.into();
        if dims.len() == 2 && !(wrap && dims[0] > dims[1]) {
            // The diagonal view alone is written.
            self.diagonal(0, 0, 1)?.fill_(value)?;
            return Ok(self);
        }
        // Positions in the row-major flattening: one step moves one along every dim.
        let step: usize = (0..dims.len()).map(|d| dims[d + 1..].iter().product::<usize>()).sum();
        let numel = self.numel();
        let end =
            if dims.len() == 2 && wrap { numel } else { dims.iter().min().copied().unwrap_or(0) * step };
        let positions: Vec<i64> = (0..end.min(numel)).step_by(step.max(1)).map(|p| p as i64).collect();
        let index = Tensor::from_vec(positions.clone(), [positions.len()])?.to(self.device())?;
        self.apply_(&[], |x| x.reshape([-1])?.index_fill(0, &index, value)?.reshape(&dims[..]))
    }
}
