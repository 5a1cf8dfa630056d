//! `nll_loss` and `cross_entropy` forward, with class indices or class probabilities, class weights,
//! `ignore_index`, `label_smoothing` and torch's weighted-mean rule.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::promote::promote_types;
use oxtorch_core::{DType, Error, Result};

use crate::dispatch::apply1;
use crate::ops::linalg::opmath;
use crate::Tensor;

/// Reduces per-element losses: `"none"`, `"sum"`, or `"mean"` (divided by `denom`).
fn reduce(loss: Tensor, reduction: &str, denom: Option<&Tensor>) -> Result<Tensor> {
    match reduction {
        "none" => Ok(loss),
        "sum" => loss.sum_all(),
        "mean" => match denom {
            Some(d) => loss.sum_all()?.div(d),
            None => loss.mean_all(),
        },
        other => Err(Error::msg(format!("{other} is not a valid value for reduction"))),
    }
}

/// Moves the class dim (1, or 0 for unbatched) last: `[N, C, d...]` → `[N, d..., C]`.
fn classes_last(x: &Tensor) -> Result<Tensor> {
    if x.rank() < 2 {
        return Ok(x.clone());
    }
    x.movedim_1_last()
}

/// Refuses class indices outside `[0, c)` other than `ignore_index` (torch's message); returns the
/// mask of the kept entries.
fn check_target_values(target: &Tensor, c: usize, ignore_index: i64) -> Result<Tensor> {
    let valid = target.ne(ignore_index)?;
    let bad = valid.logical_and(&target.lt(0)?.logical_or(&target.ge(c as i64)?)?)?;
    if bad.any()?.item::<bool>()? {
        let t = bad.where_self(target, 0)?;
        let v = t.abs()?.max()?.item::<i64>()?;
        let v = if target.lt(0)?.logical_and(&bad)?.any()?.item::<bool>()? {
            t.min()?.item::<i64>()?
        } else {
            v
        };
        return Err(Error::msg(format!("Target {v} is out of bounds.")));
    }
    Ok(valid)
}

impl Tensor {
    /// Cross-entropy of `[N, C]` logits against int64 class indices as one fused prim
    /// ([`NnOp::CrossEntropy`], a CPU kernel and an XLA lowering): the same values as
    /// `log_softmax` + `nll_loss`, with one read of the logits forward and one read and write
    /// backward instead of about ten full-size passes.
    fn cross_entropy_rows(&self, target: &Tensor, ignore_index: i64, reduction: &str) -> Result<Tensor> {
        let (_, c) = self.check_class_target(target)?;
        let valid = check_target_values(target, c, ignore_index)?;
        let cdt = opmath(self.dtype());
        let x = self.to_dtype(cdt)?;
        let loss = apply1(&Prim::Nn(NnOp::CrossEntropy { ignore_index }), &[&x, target], x.device())?;
        let denom = valid.to_dtype(cdt)?.sum_all()?;
        reduce(loss, reduction, Some(&denom))?.to_dtype(self.dtype())
    }

    fn movedim_1_last(&self) -> Result<Tensor> {
        let mut perm: Vec<usize> = (0..self.rank()).filter(|&d| d != 1).collect();
        perm.push(1);
        self.permute(perm)
    }

    /// Checks the target of a class-index loss; returns `(input with classes last, class count)`.
    fn check_class_target(&self, target: &Tensor) -> Result<(Tensor, usize)> {
        if !matches!(target.dtype(), DType::I64 | DType::U8) {
            return Err(Error::msg(format!(
                "expected target dtype to be Long or Byte, but got {}",
                target.dtype().scalar_type_name()
            )));
        }
        let r = self.rank();
        if r == 0 {
            return Err(Error::shape("input tensor should be 1D or 2D"));
        }
        let expect: Vec<usize> = if r == 1 {
            vec![]
        } else {
            self.dims().iter().enumerate().filter(|&(d, _)| d != 1).map(|(_, &s)| s).collect()
        };
        if target.dims() != expect.as_slice() {
            return Err(Error::shape(
                if r >= 2 && target.rank() >= 1 && target.dims()[0] != self.dims()[0] {
                    format!(
                        "Expected input batch_size ({}) to match target batch_size ({}).",
                        self.dims()[0],
                        target.dims()[0]
                    )
                } else {
                    format!("expected target of size {:?}, got {:?}", expect, target.dims())
                },
            ));
        }
        let c = if r == 1 { self.dims()[0] } else { self.dims()[1] };
        Ok((classes_last(self)?, c))
    }

    /// Negative log-likelihood loss of log-probabilities `self` (`[N, C, d...]`, `[C]`) and int64
    /// class indices `target` (`[N, d...]`, `[]`): `-weight[t] * self[t]`, entries with
    /// `target == ignore_index` left out; `"mean"` divides by the summed weights of the kept targets.
    pub fn nll_loss(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        ignore_index: i64,
        reduction: &str,
    ) -> Result<Tensor> {
        if crate::autocast::autocast_dtype().is_some()
            && self.dtype().is_float()
            && self.dtype() != DType::F32
            && self.dtype() != DType::F64
        {
            let w = weight.map(crate::autocast::fp32).transpose()?;
            return crate::autocast::fp32(self)?.nll_loss(target, w.as_ref(), ignore_index, reduction);
        }
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "nll_loss_out_frame", dtype: self.dtype() });
        }
        let (x, c) = self.check_class_target(target)?;
        if let Some(w) = weight {
            if w.rank() != 1 || w.numel() != c {
                return Err(Error::shape(format!(
                    "weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {:?}",
                    w.dims()
                )));
            }
        }
        let valid = check_target_values(target, c, ignore_index)?;
        let cdt = opmath(self.dtype());
        let x = x.to_dtype(cdt)?;
        let classes = Tensor::arange(c as i64, (DType::I64, self.device()))?;
        let hit = target.unsqueeze(-1)?.eq(&classes)?;
        let picked = hit.where_self(&x, 0.0)?.sum(-1, false)?;
        let w = match weight {
            Some(w) => hit.where_self(&w.to_dtype(cdt)?, 0.0)?.sum(-1, false)?,
            None => Tensor::ones(target.shape().clone(), (cdt, self.device()))?,
        };
        let w = valid.where_self(&w, 0.0)?;
        let loss = picked.mul(&w)?.neg()?;
        let denom = w.sum_all()?;
        reduce(loss, reduction, Some(&denom))?.to_dtype(self.dtype())
    }

    /// Cross-entropy of logits `self` (`[N, C, d...]` or `[C]`) against class indices (int64
    /// `target`) or class probabilities (float `target` shaped like `self`), with class `weight`,
    /// `ignore_index` (indices only), `reduction` and `label_smoothing`, as torch's `cross_entropy`.
    pub fn cross_entropy(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        ignore_index: i64,
        reduction: &str,
        label_smoothing: f64,
    ) -> Result<Tensor> {
        if crate::autocast::autocast_dtype().is_some()
            && self.dtype().is_float()
            && self.dtype() != DType::F32
            && self.dtype() != DType::F64
        {
            let w = weight.map(crate::autocast::fp32).transpose()?;
            return crate::autocast::fp32(self)?.cross_entropy(
                target,
                w.as_ref(),
                ignore_index,
                reduction,
                label_smoothing,
            );
        }
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: "log_softmax_lastdim_kernel_impl",
                dtype: self.dtype(),
            });
        }
        if !(0.0..=1.0).contains(&label_smoothing) {
            return Err(Error::msg(format!(
                "label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )));
        }
        if !matches!(reduction, "none" | "mean" | "sum") {
            return Err(Error::msg(format!("{reduction} is not a valid value for reduction")));
        }
        if self.rank() == 2 && target.dtype() == DType::I64 && weight.is_none() && label_smoothing == 0.0 {
            return self.cross_entropy_rows(target, ignore_index, reduction);
        }
        let cdim: isize = if self.rank() == 1 { 0 } else { 1 };
        // Probabilities of another float dtype (float64 soft labels from numpy): as torch, the
        // log-probabilities in the input's dtype times the target, promoted.
        let mixed = target.dtype().is_float() && target.dtype() != self.dtype();
        let out_dtype = if mixed { promote_types(self.dtype(), target.dtype()) } else { self.dtype() };
        let cdt = opmath(out_dtype);
        let logp = if mixed {
            self.log_softmax_dim(cdim)?.to_dtype(cdt)?
        } else {
            self.to_dtype(cdt)?.log_softmax_dim(cdim)?
        };
        let c = self.dims().get(cdim as usize).copied().unwrap_or(0);
        let wshape = |w: &Tensor| -> Result<Tensor> {
            let mut s = vec![1usize; self.rank()];
            s[cdim as usize] = c;
            w.to_dtype(cdt)?.reshape(s)
        };
        if target.dtype().is_float() {
            if target.dims() != self.dims() {
                return Err(Error::shape(format!(
                    "Expected target size {:?}, got {:?}",
                    self.dims(),
                    target.dims()
                )));
            }
            if ignore_index >= 0 {
                return Err(Error::msg("ignore_index is not supported for floating point target"));
            }
            if let Some(w) = weight {
                if w.rank() != 1 || w.numel() != c {
                    return Err(Error::shape(format!(
                        "cross_entropy: weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {:?}",
                        w.dims()
                    )));
                }
            }
            let mut t = target.to_dtype(cdt)?;
            if label_smoothing > 0.0 {
                t = t.mul(1.0 - label_smoothing)?.add(label_smoothing / c as f64)?;
            }
            let mut prod = logp.mul(&t)?;
            if let Some(w) = weight {
                prod = prod.mul(&wshape(w)?)?;
            }
            let loss = prod.sum(cdim, false)?.neg()?;
            let out = match reduction {
                "mean" => loss.sum_all()?.div((self.numel() / c.max(1)) as f64)?,
                r => reduce(loss, r, None)?,
            };
            return out.to_dtype(out_dtype);
        }
        let nll = logp.nll_loss(target, weight, ignore_index, reduction)?;
        if label_smoothing == 0.0 {
            return nll.to_dtype(self.dtype());
        }
        let valid = target.ne(ignore_index)?;
        let smooth = match weight {
            Some(w) => logp.mul(&wshape(w)?)?.sum(cdim, false)?.neg()?,
            None => logp.sum(cdim, false)?.neg()?,
        };
        let smooth = valid.where_self(&smooth, 0.0)?;
        let ret = match reduction {
            "mean" => {
                let denom = match weight {
                    Some(w) => {
                        let classes = Tensor::arange(c as i64, (DType::I64, self.device()))?;
                        let hit = target.unsqueeze(-1)?.eq(&classes)?;
                        let wt = hit.where_self(&w.to_dtype(cdt)?, 0.0)?.sum(-1, false)?;
                        valid.where_self(&wt, 0.0)?.sum_all()?
                    }
                    None => valid.to_dtype(cdt)?.sum_all()?,
                };
                smooth.sum_all()?.div(&denom)?
            }
            "sum" => smooth.sum_all()?,
            _ => smooth,
        };
        nll.to_dtype(cdt)?
            .mul(1.0 - label_smoothing)?
            .add(&ret.mul(label_smoothing / c as f64)?)?
            .to_dtype(self.dtype())
    }
}
