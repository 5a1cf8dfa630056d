//! `embedding` (one `NnOp::Embedding` prim), `one_hot` (a comparison) and `dropout` (a seeded mask).

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use crate::dispatch::apply1;
use crate::Tensor;

impl Tensor {
    /// Rows of `weight` (`[num_embeddings, dim]`) picked by the integer indices `self` (int64 or int32):
    /// output `[*self, dim]`. `padding_idx` (negative counts from the end) only matters for gradients
    /// but is validated as torch does.
    pub fn embedding(&self, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
        if !matches!(self.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
                self.dtype().scalar_type_name()
            )));
        }
        if weight.rank() != 2 {
            return Err(Error::shape("'weight' must be 2-D"));
        }
        let v = weight.dims()[0] as i64;
        if let Some(p) = padding_idx {
            if p >= v || p < -v {
                return Err(Error::msg("Padding_idx must be within num_embeddings"));
            }
        }
        let idx = self.to_dtype(DType::I64)?;
        if idx.numel() > 0 {
            let (lo, hi) = crate::indexing::checks::min_max(&idx)?;
            if lo < 0 || hi >= v {
                return Err(Error::msg("index out of range in self"));
            }
        }
        let out = apply1(&Prim::Nn(NnOp::Embedding), &[weight, &idx], weight.device())?;
        match padding_idx {
            // The padding row gets no gradient (torch): the rows it fills are read from a detached
            // copy, which leaves the forward values unchanged.
            Some(p) if out.requires_grad() => {
                let p = if p < 0 { p + v } else { p };
                let is_pad = idx.eq(p)?.unsqueeze(-1)?;
                Tensor::where_cond(&is_pad, out.detach(), &out)
            }
            _ => Ok(out),
        }
    }

    /// [`Tensor::embedding`] for indices known to be in `[0, num_embeddings)`, such as an argmax
    /// over the rows of a table of the same size; no padding row. The bounds are not read back
    /// first: on a device that read waits until everything computing the indices has run, which
    /// would stop a decode loop from recording its next step while the device runs the previous
    /// one. The cpu backend still rejects an index out of range; a device's gather clamps it to the
    /// nearest row, so the promise is the caller's.
    pub fn embedding_in_range(&self, weight: &Tensor) -> Result<Tensor> {
        if !matches!(self.dtype(), DType::I64 | DType::I32) || weight.rank() != 2 {
            // For torch's messages on a wrong dtype or rank.
            return self.embedding(weight, None);
        }
        apply1(&Prim::Nn(NnOp::Embedding), &[weight, &self.to_dtype(DType::I64)?], weight.device())
    }

    /// One-hot encoding of int64 class indices: output `[*self, num_classes]` int64;
    /// `num_classes = -1` infers `max + 1`.
    pub fn one_hot(&self, num_classes: i64) -> Result<Tensor> {
        if self.dtype() != DType::I64 {
            return Err(Error::msg("one_hot is only applicable to index tensor of type LongTensor."));
        }
        let n = if self.numel() == 0 {
            if num_classes < 0 {
                return Err(Error::msg("Can not infer total number of classes from empty tensor."));
            }
            num_classes
        } else {
            let (lo, hi) = crate::indexing::checks::min_max(self)?;
            if lo < 0 {
                return Err(Error::msg("Class values must be non-negative."));
            }
            if num_classes == -1 {
                hi.checked_add(1).ok_or_else(|| {
                    Error::msg(format!(
                        "one_hot: a class value of {hi} needs more classes than an int64 counts"
                    ))
                })?
            } else if hi >= num_classes {
                return Err(Error::msg("Class values must be smaller than num_classes."));
            } else {
                num_classes
            }
        };
        let classes = Tensor::arange(n, (DType::I64, self.device()))?;
        self.unsqueeze(-1)?.eq(&classes)?.to_dtype(DType::I64)
    }

    /// Dropout: in training, each element is zeroed with probability `p` (from the default seeded
    /// generator) and the rest scaled by `1 / (1 - p)`; otherwise the input unchanged.
    pub fn dropout(&self, p: f64, training: bool) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::msg(format!("dropout probability has to be between 0 and 1, but got {p}")));
        }
        if !training || p == 0.0 || self.numel() == 0 {
            return Ok(self.clone());
        }
        if p == 1.0 {
            // (torch multiplies by a zero of the input's own type: integers and bools keep their
            // dtype, NaN stays NaN)
            return self.mul(&Tensor::zeros((), self.same_options())?);
        }
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "dropout", dtype: self.dtype() });
        }
        let keep = Tensor::rand(self.shape().clone(), (DType::F32, self.device()))?.lt(1.0 - p)?;
        self.scaled_by_mask(&keep, p)
    }

    /// `self * (keep / (1 - p))`, the mask in self's dtype, as torch's dropout multiplies: a NaN or
    /// infinite element dropped gives NaN, not 0.
    fn scaled_by_mask(&self, keep: &Tensor, p: f64) -> Result<Tensor> {
        self.mul(&keep.to_dtype(self.dtype())?.mul(1.0 / (1.0 - p))?)
    }

    /// torch's `feature_dropout` (channel dropout, behind `dropout1d/2d/3d`): each `[n, c]` slice
    /// of an input of rank ≥ 2 is zeroed as a whole with probability `p`, the kept ones scaled by
    /// `1/(1-p)`; the identity when not `training`.
    pub fn feature_dropout(&self, p: f64, training: bool) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::msg(format!("dropout probability has to be between 0 and 1, but got {p}")));
        }
        if !training || p == 0.0 {
            return Ok(self.clone());
        }
        if self.rank() < 2 {
            return Err(Error::shape("Feature dropout requires at least 2 dimensions in the input"));
        }
        if self.numel() == 0 {
            return Ok(self.clone());
        }
        if p == 1.0 {
            return self.mul(&Tensor::zeros((), self.same_options())?);
        }
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "feature_dropout", dtype: self.dtype() });
        }
        let mut mask_shape = vec![1usize; self.rank()];
        mask_shape[..2].copy_from_slice(&self.dims()[..2]);
        let keep = Tensor::rand(mask_shape, (DType::F32, self.device()))?.lt(1.0 - p)?;
        self.scaled_by_mask(&keep, p)
    }
}
