//! `pdist`: the `p`-norm distances between the rows of a matrix, upper triangle only, with
//! torch's `_pdist_backward` (its per-`p` kernels) as the gradient.

use oxtorch_core::{DType, Error, Result};

use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

impl Tensor {
    /// `torch.pdist(self, p)` (`torch.nn.functional.pdist`): for an `[N, M]` float32/float64
    /// input, the `p`-norm distance between rows `i < j` in row-major order (`[N(N-1)/2]`);
    /// `p >= 0` (0 counts differing coordinates, inf takes the largest). Fewer than two rows give
    /// an empty result, no columns zeros.
    ///
    /// The gradient is torch's: zero for `p = 0`; `g·sign(d)` for `p = 1`; for `p < 2`
    /// `g·sign(d)|d|^(p-1) / dist^(p-1)`, 0 where the distance is 0 or (for `p < 1`) `d = 0`;
    /// `g·d / dist` for `p = 2` and `g·d|d|^(p-2) / dist^(p-1)` beyond, 0 at zero distances; for
    /// `p = inf` the whole `g·sign(d)` to every coordinate whose `|d|` is the distance (ties
    /// included).
    pub fn pdist(&self, p: f64) -> Result<Tensor> {
        if self.rank() != 2 {
            return Err(Error::msg(format!("pdist only supports 2D tensors, got: {}D", self.rank())));
        }
        if !self.is_floating_point() {
            return Err(Error::msg("pdist only supports floating-point dtypes"));
        }
        if p.is_nan() || p < 0.0 {
            return Err(Error::msg("pdist only supports non-negative p values"));
        }
        let (n, m) = (self.dims()[0], self.dims()[1]);
        if n > 1 && m > 0 && matches!(self.dtype(), DType::F16 | DType::BF16) {
            // (torch returns the empty and zero results before dispatching on the dtype)
            return Err(Error::UnsupportedDType { op: "pdist", dtype: self.dtype() });
        }
        Ok(Pdist { p }.apply(std::slice::from_ref(self))?.remove(0))
    }
}

/// The row pairs `i < j` of an `n`-row matrix, row-major: (first rows, second rows), int64.
fn pairs(x: &Tensor) -> Result<(Tensor, Tensor)> {
    let n = x.dims()[0] as i64;
    let idx = Tensor::triu_indices(n, n, 1, x.device())?;
    Ok((idx.select(0, 0)?, idx.select(0, 1)?))
}

/// The differences `x[i] - x[j]` of every pair `i < j`: `[N(N-1)/2, M]`.
fn differences(x: &Tensor) -> Result<Tensor> {
    let (first, second) = pairs(x)?;
    x.index_select(0, &first)?.sub(&x.index_select(0, &second)?)
}

struct Pdist {
    p: f64,
}

impl Function for Pdist {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = &inputs[0];
        let (n, m) = (x.dims()[0], x.dims()[1]);
        let count = if n > 1 { n * (n - 1) / 2 } else { 0 };
        let out = if count == 0 || m == 0 {
            Tensor::zeros([count], x.same_options())?
        } else {
            differences(x)?.norm(self.p, [1], false)?
        };
        ctx.save_for_backward(&[x, &out]);
        Ok(vec![out])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (x, dist) = (&saved[0], &saved[1]);
        let p = self.p;
        if p == 0.0 || dist.numel() == 0 || x.numel() == 0 {
            return Ok(vec![Some(x.zeros_like()?)]);
        }
        let d = differences(x)?;
        let g = grads[0].unsqueeze(1)?;
        let dist = dist.unsqueeze(1)?;
        let zero_dist = dist.eq(0.0)?;
        // Safe stand-ins where the result is masked to 0 anyway (no inf or NaN, even in a second
        // derivative, from the unused branch).
        let dist_safe = Tensor::where_cond(&zero_dist, 1.0, &dist)?;
        let abs = d.abs()?;
        let per_pair = if p == 1.0 {
            g.mul(&d.sign()?)?
        } else if p < 2.0 {
            let zero_d = d.eq(0.0)?;
            let abs_safe = Tensor::where_cond(&zero_d, 1.0, &abs)?;
            let value = d.sign()?.mul(&abs_safe.pow(p - 1.0)?)?.mul(&g)?.div(&dist_safe.pow(p - 1.0)?)?;
            // (for p >= 1, |d|^(p-1) at d = 0 is 0, and so is sign(d))
            let masked = if p < 1.0 { zero_dist.logical_or(&zero_d)? } else { zero_dist };
            Tensor::where_cond(&masked, 0.0, &value)?
        } else if p == 2.0 {
            Tensor::where_cond(&zero_dist, 0.0, &g.mul(&d)?.div(&dist_safe)?)?
        } else if p.is_infinite() {
            g.mul(&d.sign()?)?.mul(&abs.eq(&dist)?.to_dtype(d.dtype())?)?
        } else {
            let value = d.mul(&abs.pow(p - 2.0)?)?.mul(&g)?.div(&dist_safe.pow(p - 1.0)?)?;
            Tensor::where_cond(&zero_dist, 0.0, &value)?
        };
        let (first, second) = pairs(x)?;
        let gx =
            x.zeros_like()?.index_add(0, &first, &per_pair, 1.0)?.index_add(0, &second, &per_pair, -1.0)?;
        Ok(vec![Some(gx)])
    }

    fn name(&self) -> &'static str {
        "PdistBackward0"
    }
}
