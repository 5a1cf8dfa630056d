//! nanquantile: quantiles of the non-NaN elements, from a sort, a count, two gathers and a lerp
//! (torch's `quantile_impl` with `ignore_nan`), so that autograd reaches the selected elements
//! through the sort and gather gradients.

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::{Operand, Tensor};

/// The interpolation names torch's quantile accepts.
const INTERPOLATIONS: [&str; 5] = ["linear", "lower", "higher", "midpoint", "nearest"];

impl Tensor {
    /// `torch.nanquantile(self, q, dim, keepdim, interpolation)`: the `q`-quantiles (a number or a
    /// 0-d/1-d tensor of the input's dtype, each in `[0, 1]`) along `dim` (`None`: of the flattened
    /// input) of the elements that are not NaN; a row of NaN only gives NaN. `interpolation` is
    /// "linear", "lower", "higher", "midpoint" or "nearest", between the order statistics at
    /// `q * (count - 1)` (the rank computed in f64 on the cpu, as torch's kernel). A 1-d `q` adds a
    /// leading dim of its length. f32/f64 inputs only.
    pub fn nanquantile(
        &self,
        q: impl Into<Operand>,
        dim: Option<isize>,
        keepdim: bool,
        interpolation: &str,
    ) -> Result<Tensor> {
        if !matches!(self.dtype(), DType::F32 | DType::F64) {
            return Err(Error::msg("quantile() input tensor must be either float or double dtype"));
        }
        let q = q.into();
        let (qt, q_dim) = match &q {
            Operand::Scalar(s) => (Tensor::full_unchecked([1], *s, (self.dtype(), self.device()))?, false),
            Operand::Tensor(t) => {
                if t.rank() > 1 {
                    return Err(Error::msg("quantile() q must be a scalar or 1D tensor"));
                }
                if t.dtype() != self.dtype() {
                    return Err(Error::msg("quantile() q tensor must be same dtype as the input tensor"));
                }
                (t.reshape([-1])?, t.rank() == 1)
            }
        };
        for v in qt.to_dtype(DType::F64)?.to_vec::<f64>()? {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::msg(format!("quantile() q must be in the range [0, 1] but got {v}")));
            }
        }
        if self.numel() == 0 {
            return Err(Error::msg("quantile() input tensor must be non-empty"));
        }
        if !INTERPOLATIONS.contains(&interpolation) {
            return Err(Error::msg(format!(
                "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
            )));
        }
        let (x, d) = match dim {
            Some(dim) => {
                let d = wrap_dim(dim, self.rank())?;
                (if self.rank() == 0 { self.reshape([1])? } else { self.clone() }, d)
            }
            None => (self.reshape([-1])?, 0),
        };
        // Each row last: x's shape with `d` made 1, then the row (torch's
        // `unsqueeze(-1).transpose(dim, -1)`); NaN sorts last.
        let rows = x.unsqueeze(-1)?.transpose(d as isize, -1)?;
        let sorted = rows.sort(-1, false)?.0;
        let nq = qt.numel();
        // Ranks `q * (count - 1)`, one per (q, row): shape [nq, ..rows.., 1]. A row of NaN only has
        // rank -q, taken as 0: its first entry, NaN.
        let wide = if self.device().is_cpu() { DType::F64 } else { self.dtype() };
        let last = sorted.isnan()?.logical_not()?.sum([-1], true)?.sub(1)?.to_dtype(wide)?;
        let mut q_shape = vec![1usize; sorted.rank() + 1];
        q_shape[0] = nq;
        let ranks = qt.to_dtype(wide)?.reshape(q_shape)?.mul(&last.unsqueeze(0)?)?;
        let ranks = Tensor::where_cond(&ranks.lt(0.0)?, 0.0, &ranks)?;
        let ranks = match interpolation {
            "lower" => ranks.floor()?,
            "higher" => ranks.ceil()?,
            "nearest" => ranks.round()?,
            _ => ranks,
        };
        let mut full = vec![nq];
        full.extend_from_slice(sorted.dims());
        let sorted = sorted.unsqueeze(0)?.broadcast_to(&full)?;
        let below = ranks.floor()?;
        let lower = crate::ops::trusted_indices(|| sorted.gather(-1, &below.to_dtype(DType::I64)?))?;
        let out = match interpolation {
            "linear" | "midpoint" => {
                let upper =
                    crate::ops::trusted_indices(|| sorted.gather(-1, &ranks.ceil()?.to_dtype(DType::I64)?))?;
                if interpolation == "midpoint" {
                    lower.lerp(&upper, 0.5)?
                } else {
                    lower.lerp(&upper, ranks.sub(&below)?.to_dtype(self.dtype())?)?
                }
            }
            _ => lower,
        };
        // out: [nq] + x's shape with d = 1, + [1].
        let mut shape: Vec<usize> = Vec::new();
        if q_dim {
            shape.push(nq);
        }
        match dim {
            Some(_) if self.rank() > 0 => {
                for (i, &s) in x.dims().iter().enumerate() {
                    if i != d {
                        shape.push(s);
                    } else if keepdim {
                        shape.push(1);
                    }
                }
            }
            Some(_) => {}
            None if keepdim => shape.extend(std::iter::repeat_n(1, self.rank())),
            None => {}
        }
        out.reshape(shape)
    }
}
