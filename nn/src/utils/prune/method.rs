//! torch's pruning methods ([`PruningMethod`]): how each computes its mask, and how a new mask is
//! combined with an earlier one (torch's `PruningContainer`).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::linalg::NormOrd;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::torch_size;

use super::amount::Amount;
use super::mask::{channel_dim, channel_mask, channel_norm, unstructured};

/// What a method's new mask is computed on when the tensor is already pruned (torch's
/// `PRUNING_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruningType {
    /// the entries still unpruned, as one vector
    Unstructured,
    /// the channels (along the method's `dim`) with an unpruned entry
    Structured,
    /// the whole tensor
    Global,
}

impl PruningType {
    /// torch's spelling (`"unstructured"`, `"structured"`, `"global"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PruningType::Unstructured => "unstructured",
            PruningType::Structured => "structured",
            PruningType::Global => "global",
        }
    }
}

/// torch's pruning methods (`prune.Identity`, `prune.L1Unstructured`, ...) with their arguments.
#[derive(Clone, Debug)]
pub enum PruningMethod {
    /// Prunes nothing (a mask of ones).
    Identity,
    /// Prunes `amount` of the (unpruned) entries at random.
    RandomUnstructured {
        /// how many entries
        amount: Amount,
    },
    /// Prunes the `amount` (unpruned) entries of smallest absolute value.
    L1Unstructured {
        /// how many entries
        amount: Amount,
    },
    /// Prunes `amount` of the (unpruned) channels along `dim` at random.
    RandomStructured {
        /// how many channels
        amount: Amount,
        /// the channel dim
        dim: isize,
    },
    /// Prunes the `amount` (unpruned) channels along `dim` of smallest `n`-norm.
    LnStructured {
        /// how many channels
        amount: Amount,
        /// the norm's order (a number, `'fro'` or `'nuc'`, as `torch.norm`)
        n: NormOrd,
        /// the channel dim
        dim: isize,
    },
    /// Prunes where `mask` is 0.
    CustomFromMask {
        /// the mask (the tensor's shape)
        mask: Tensor,
    },
}

impl PruningMethod {
    /// `L1Unstructured(amount)`.
    pub fn l1_unstructured(amount: impl Into<Amount>) -> Self {
        PruningMethod::L1Unstructured { amount: amount.into() }
    }

    /// `RandomUnstructured(amount)`.
    pub fn random_unstructured(amount: impl Into<Amount>) -> Self {
        PruningMethod::RandomUnstructured { amount: amount.into() }
    }

    /// `RandomStructured(amount, dim)`.
    pub fn random_structured(amount: impl Into<Amount>, dim: isize) -> Self {
        PruningMethod::RandomStructured { amount: amount.into(), dim }
    }

    /// `LnStructured(amount, n, dim)`.
    pub fn ln_structured(amount: impl Into<Amount>, n: impl Into<NormOrd>, dim: isize) -> Self {
        PruningMethod::LnStructured { amount: amount.into(), n: n.into(), dim }
    }

    /// torch's class name (`"L1Unstructured"`, ...).
    pub fn class_name(&self) -> &'static str {
        match self {
            PruningMethod::Identity => "Identity",
            PruningMethod::RandomUnstructured { .. } => "RandomUnstructured",
            PruningMethod::L1Unstructured { .. } => "L1Unstructured",
            PruningMethod::RandomStructured { .. } => "RandomStructured",
            PruningMethod::LnStructured { .. } => "LnStructured",
            PruningMethod::CustomFromMask { .. } => "CustomFromMask",
        }
    }

    /// torch's `PRUNING_TYPE` of the method.
    pub fn pruning_type(&self) -> PruningType {
        match self {
            PruningMethod::Identity
            | PruningMethod::RandomUnstructured { .. }
            | PruningMethod::L1Unstructured { .. } => PruningType::Unstructured,
            PruningMethod::RandomStructured { .. } | PruningMethod::LnStructured { .. } => {
                PruningType::Structured
            }
            PruningMethod::CustomFromMask { .. } => PruningType::Global,
        }
    }

    /// The channel dim of a structured method.
    pub fn dim(&self) -> Option<isize> {
        match self {
            PruningMethod::RandomStructured { dim, .. } | PruningMethod::LnStructured { dim, .. } => {
                Some(*dim)
            }
            _ => None,
        }
    }

    /// The checks torch makes when it builds the method (`_validate_pruning_amount_init`).
    pub fn validate(&self) -> Result<()> {
        match self {
            PruningMethod::RandomUnstructured { amount }
            | PruningMethod::L1Unstructured { amount }
            | PruningMethod::RandomStructured { amount, .. }
            | PruningMethod::LnStructured { amount, .. } => amount.validate(),
            PruningMethod::Identity | PruningMethod::CustomFromMask { .. } => Ok(()),
        }
    }

    /// torch's `compute_mask(t, default_mask)`: the mask of `t` (the importance scores) on top of
    /// `default_mask` (ones for a tensor not pruned yet), computed on the whole of `t`.
    pub fn compute_mask(&self, t: &Tensor, default_mask: &Tensor) -> Result<Tensor> {
        match self {
            PruningMethod::Identity => Ok(default_mask.clone()),
            PruningMethod::RandomUnstructured { amount } => unstructured(t, default_mask, *amount, true),
            PruningMethod::L1Unstructured { amount } => unstructured(t, default_mask, *amount, false),
            PruningMethod::RandomStructured { amount, dim } => {
                let d = channel_dim(t, *dim)?;
                let size = t.dims()[d];
                let k = amount.to_prune(size)?;
                if k == 0 {
                    return Ok(default_mask.clone());
                }
                // torch: a uniform number per channel (float32, on the CPU); the k lowest are pruned
                let prob = Tensor::rand([size], DType::F32)?;
                let threshold = prob.kthvalue(k as i64, 0, false)?.0;
                let keep = prob.gt(&threshold)?;
                let mask = channel_mask(t, d, &keep)?;
                mask.mul(&default_mask.to_dtype(mask.dtype())?)
            }
            PruningMethod::LnStructured { amount, n, dim } => {
                let d = channel_dim(t, *dim)?;
                let size = t.dims()[d];
                let k = amount.to_prune(size)?;
                let norm = channel_norm(t, n, d)?;
                if k == 0 {
                    return Ok(default_mask.clone());
                }
                // torch keeps the `size - k` channels of largest norm
                let keep_n = size - k;
                let mut keep = Tensor::zeros(vec![size], (t.dtype(), t.device()))?;
                if keep_n > 0 {
                    let (_, idx) = norm.topk(keep_n as i64, -1, true, true)?;
                    keep = keep.index_fill(0, &idx.reshape([-1])?, 1.0)?;
                }
                let mask = channel_mask(t, d, &keep)?;
                mask.mul(&default_mask.to_dtype(mask.dtype())?)
            }
            PruningMethod::CustomFromMask { mask } => {
                if default_mask.dims() != mask.dims() {
                    return Err(Error::msg(format!(
                        "default_mask shape {} must match self.mask shape {}",
                        torch_size(default_mask.dims()),
                        torch_size(mask.dims())
                    )));
                }
                default_mask.mul(&mask.to(default_mask.device())?.to_dtype(default_mask.dtype())?)
            }
        }
    }

    /// torch's `PruningContainer.compute_mask` with this method last: the new mask is computed on
    /// the part of `t` that `mask` leaves unpruned (the entries still 1 as one vector, the channels
    /// with an unpruned entry, or all of `t`, by [`PruningMethod::pruning_type`]) and written over
    /// that part of `mask` (as `t`'s dtype).
    ///
    /// torch gives a structured method on a 1-D tensor, or with `dim` out of range, odd results
    /// here (a 1-D tensor is indexed with a 0-d boolean); this refuses them with the messages of a
    /// first pruning.
    pub fn combine_mask(&self, t: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let new_mask = mask.to_dtype(t.dtype())?;
        match self.pruning_type() {
            PruningType::Unstructured => {
                let slc = mask.eq(1.0)?;
                let partial = self.compute_mask(&t.masked_select(&slc)?, &mask.masked_select(&slc)?)?;
                new_mask.masked_scatter(&slc, &partial.to_dtype(new_mask.dtype())?)
            }
            PruningType::Structured => {
                let d = channel_dim(t, self.dim().unwrap_or(-1))?;
                let others: Vec<isize> = (0..t.rank()).filter(|&i| i != d).map(|i| i as isize).collect();
                let keep = mask.sum(others, false)?.ne(0.0)?;
                let idx = keep.nonzero()?.reshape([-1])?;
                let d = d as isize;
                let partial = self.compute_mask(&t.index_select(d, &idx)?, &mask.index_select(d, &idx)?)?;
                new_mask.index_copy(d, &idx, &partial.to_dtype(new_mask.dtype())?)
            }
            PruningType::Global => self.compute_mask(t, mask)?.to_dtype(new_mask.dtype()),
        }
    }

    /// torch's `method.prune(t, default_mask, importance_scores)`: `t` times the mask computed from
    /// `importance_scores` (`t` without) on top of `default_mask` (ones without).
    pub fn prune(
        &self,
        t: &Tensor,
        default_mask: Option<&Tensor>,
        importance_scores: Option<&Tensor>,
    ) -> Result<Tensor> {
        self.validate()?;
        if let Some(s) = importance_scores {
            if s.dims() != t.dims() {
                return Err(Error::msg(format!(
                    "importance_scores should have the same shape as tensor t, got {} vs {}",
                    torch_size(s.dims()),
                    torch_size(t.dims())
                )));
            }
        }
        let scores = importance_scores.unwrap_or(t);
        let mask = match default_mask {
            Some(m) => no_grad(|| self.compute_mask(scores, m))?,
            None => no_grad(|| -> Result<Tensor> { self.compute_mask(scores, &t.ones_like()?) })?,
        };
        t.mul(&mask)
    }
}
