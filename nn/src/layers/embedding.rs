//! `Embedding`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;
use crate::module::Forward;

/// torch's `nn.Embedding(num_embeddings, embedding_dim, padding_idx=None)`: `weight` drawn from
/// `N(0, 1)`, the `padding_idx` row zero and never updated by gradients.
#[derive(oxtorch_nn_derive::Module)]
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`
    pub weight: Tensor,
    /// the row that stays zero
    #[module(skip)]
    pub padding_idx: Option<i64>,
}

impl Embedding {
    /// A float32 table with torch's initialisation.
    pub fn new(num_embeddings: usize, embedding_dim: usize, padding_idx: Option<i64>) -> Result<Self> {
        let weight = Tensor::empty([num_embeddings, embedding_dim], DType::F32)?;
        init::normal_(&weight, 0.0, 1.0)?;
        let padding_idx = match padding_idx {
            Some(p) if p >= num_embeddings as i64 || p < -(num_embeddings as i64) => {
                return Err(Error::msg("Padding_idx must be within num_embeddings"))
            }
            Some(p) if p < 0 => Some(p + num_embeddings as i64),
            p => p,
        };
        if let Some(p) = padding_idx {
            oxtorch_autograd::no_grad(|| weight.select(0, p as isize)?.fill_(0.0).map(|_| ()))?;
        }
        Ok(Embedding { weight: weight.requires_grad_(true)?, padding_idx })
    }

    /// A layer over a given table.
    pub fn from_weights(weight: Tensor, padding_idx: Option<i64>) -> Self {
        Embedding { weight, padding_idx }
    }
}

impl Forward for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        indices.embedding(&self.weight, self.padding_idx)
    }
}
