//! `nn.Linear` and `nn.Embedding` over checkpoint tensors.

use oxtorch_tensor::{DType, Tensor};

use crate::error::{Error, Result};
use crate::weights::Vars;

/// `y = x Wᵀ + b` with `weight` `[out, in]`.
#[derive(Debug, Clone)]
pub struct Linear {
    /// `[out_features, in_features]`
    pub weight: Tensor,
    /// `[out_features]`
    pub bias: Option<Tensor>,
}

impl Linear {
    /// `vars.weight` `[out, in]` (a matrix, see [`Vars::get_matrix`]) and, when `bias`, `vars.bias`
    /// `[out]`.
    pub fn load(vars: &Vars<'_>, in_features: usize, out_features: usize, bias: bool) -> Result<Self> {
        let weight = vars.get_matrix("weight", &[out_features, in_features])?;
        let bias = if bias { Some(vars.get("bias", &[out_features])?) } else { None };
        Ok(Linear { weight, bias })
    }

    /// Applies the layer to the last dim of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.linear(&self.weight, self.bias.as_ref())?)
    }
}

/// A lookup table `[num_embeddings, dim]`.
#[derive(Debug, Clone)]
pub struct Embedding {
    /// `[num_embeddings, dim]`
    pub weight: Tensor,
}

impl Embedding {
    /// `vars.weight` `[num, dim]`.
    pub fn load(vars: &Vars<'_>, num: usize, dim: usize) -> Result<Self> {
        Ok(Embedding { weight: vars.get("weight", &[num, dim])? })
    }

    /// The rows of `ids` (int64, any shape): `[..., dim]`; an id outside the table is an error.
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let rows = self.weight.dims()[0];
        if ids.numel() > 0 {
            // One read of both bounds (one transfer when `ids` is on a device).
            let bounds =
                Tensor::stack(&[&ids.min()?, &ids.max()?], 0)?.to_dtype(DType::I64)?.to_vec::<i64>()?;
            let (lo, hi) = (bounds[0], bounds[1]);
            if lo < 0 || hi as u64 >= rows as u64 {
                let bad = if lo < 0 { lo } else { hi };
                return Err(Error::Input(format!(
                    "id {bad} is out of range for an embedding table of {rows} rows"
                )));
            }
        }
        Ok(ids.embedding(&self.weight, None)?)
    }

    /// [`Embedding::forward`] for ids known to be rows of the table (the argmax of logits no wider
    /// than it), without reading their bounds back from the device.
    pub fn forward_in_range(&self, ids: &Tensor) -> Result<Tensor> {
        Ok(ids.embedding_in_range(&self.weight)?)
    }
}
