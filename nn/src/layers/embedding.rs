//! `Embedding`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::functional::{embedding_with, EmbeddingOptions};
use crate::init;
use crate::module::Forward;

/// torch's `nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
/// norm_type=2.0, scale_grad_by_freq=False, sparse=False)`: `weight` drawn from `N(0, 1)`, the
/// `padding_idx` row zero and never updated by gradients; with `max_norm`, each forward first
/// rescales in place (without recording it for autograd) the looked-up rows whose
/// `norm_type`-norm exceeds `max_norm` to norm `max_norm`; with `scale_grad_by_freq`, the gradient
/// of each lookup is divided by its row's count in the batch of indices. The forward pass is
/// [`crate::functional::embedding_with`].
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`
    pub weight: Tensor,
    /// the row that stays zero
    #[module(skip)]
    pub padding_idx: Option<i64>,
    /// renormalise looked-up rows whose norm exceeds this (default `None`: never)
    #[module(skip)]
    pub max_norm: Option<f64>,
    /// the `p` of the norm compared with `max_norm` (default 2)
    #[module(skip)]
    pub norm_type: f64,
    /// divide each row's gradient by its count in the indices (default `false`)
    #[module(skip)]
    pub scale_grad_by_freq: bool,
    /// torch's sparse gradient (default `false`): accepted, the gradient stays dense
    #[module(skip)]
    pub sparse: bool,
}

impl Embedding {
    /// torch's `extra_repr`: `10, 3, padding_idx=0` (settings other than the defaults).
    fn extra_repr_text(&self) -> String {
        let dims = self.weight.dims();
        let mut s = format!("{}, {}", dims.first().copied().unwrap_or(0), dims.get(1).copied().unwrap_or(0));
        if let Some(p) = self.padding_idx {
            s += &format!(", padding_idx={p}");
        }
        if let Some(m) = self.max_norm {
            s += &format!(", max_norm={}", crate::module::py_float(m));
        }
        if self.norm_type != 2.0 {
            s += &format!(", norm_type={}", crate::module::py_float(self.norm_type));
        }
        if self.scale_grad_by_freq {
            s += ", scale_grad_by_freq=True";
        }
        if self.sparse {
            s += ", sparse=True";
        }
        s
    }
}

/// `padding_idx` checked against `num_embeddings` and made non-negative, as torch's constructor.
fn wrap_padding_idx(padding_idx: Option<i64>, num_embeddings: usize) -> Result<Option<i64>> {
    let v = num_embeddings as i64;
    match padding_idx {
        Some(p) if p >= v || p < -v => Err(Error::msg("Padding_idx must be within num_embeddings")),
        Some(p) if p < 0 => Ok(Some(p + v)),
        p => Ok(p),
    }
}

impl Embedding {
    /// A float32 table with torch's initialisation.
    pub fn new(num_embeddings: usize, embedding_dim: usize, padding_idx: Option<i64>) -> Result<Self> {
        let weight = Tensor::empty([num_embeddings, embedding_dim], DType::default_float())?;
        init::normal_(&weight, 0.0, 1.0)?;
        let padding_idx = wrap_padding_idx(padding_idx, num_embeddings)?;
        if let Some(p) = padding_idx {
            oxtorch_autograd::no_grad(|| weight.select(0, p as isize)?.fill_(0.0).map(|_| ()))?;
        }
        Ok(Embedding::from_weights(weight.requires_grad_(true)?, padding_idx))
    }

    /// A layer over a given table.
    pub fn from_weights(weight: Tensor, padding_idx: Option<i64>) -> Self {
        Embedding {
            weight,
            padding_idx,
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
            sparse: false,
        }
    }

    /// torch's `nn.Embedding.from_pretrained(embeddings, freeze=True, padding_idx=None)`: a layer
    /// whose weight shares `embeddings`' storage (detached from its graph), requiring grad unless
    /// `freeze`. `padding_idx` (negative counts from the end) only stops gradients to that row;
    /// unlike [`Embedding::new`] the row is not zeroed.
    pub fn from_pretrained(embeddings: &Tensor, freeze: bool, padding_idx: Option<i64>) -> Result<Self> {
        if embeddings.rank() != 2 {
            return Err(Error::msg("Embeddings parameter is expected to be 2-dimensional"));
        }
        let padding_idx = wrap_padding_idx(padding_idx, embeddings.dims()[0])?;
        let weight = embeddings.detach().requires_grad_(!freeze)?;
        Ok(Embedding::from_weights(weight, padding_idx))
    }

    /// Sets torch's `max_norm` and `norm_type` options (see [`Embedding`]).
    pub fn with_max_norm(mut self, max_norm: f64, norm_type: f64) -> Self {
        self.max_norm = Some(max_norm);
        self.norm_type = norm_type;
        self
    }

    /// Sets torch's `scale_grad_by_freq` option (see [`Embedding`]).
    pub fn with_scale_grad_by_freq(mut self, scale_grad_by_freq: bool) -> Self {
        self.scale_grad_by_freq = scale_grad_by_freq;
        self
    }

    /// Sets torch's `sparse` option: accepted, the gradient stays dense (oxtorch has no sparse
    /// tensors).
    pub fn with_sparse(mut self, sparse: bool) -> Self {
        self.sparse = sparse;
        self
    }

    /// The options [`crate::functional::embedding_with`] takes for this layer.
    pub fn options(&self) -> EmbeddingOptions {
        EmbeddingOptions {
            padding_idx: self.padding_idx,
            max_norm: self.max_norm,
            norm_type: self.norm_type,
            scale_grad_by_freq: self.scale_grad_by_freq,
            sparse: self.sparse,
        }
    }

    /// torch's `embedding_renorm_(weight, indices, max_norm, norm_type)`, under no-grad: each
    /// distinct row of `weight` named in `indices` whose `norm_type`-norm exceeds `max_norm` is
    /// scaled in place by `max_norm / (norm + 1e-7)`.
    pub fn embedding_renorm_(weight: &Tensor, indices: &Tensor, max_norm: f64, norm_type: f64) -> Result<()> {
        if !matches!(indices.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding_renorm_)",
                indices.dtype().scalar_type_name()
            )));
        }
        if weight.rank() != 2 {
            return Err(Error::shape(format!(
                "Expected 2-dimensional tensor, but got {}-dimensional tensor for argument #1 'self' (while checking arguments for embedding_renorm_)",
                weight.rank()
            )));
        }
        if indices.numel() == 0 {
            return Ok(());
        }
        oxtorch_autograd::no_grad(|| -> Result<()> {
            let idx = indices.to_dtype(DType::I64)?.reshape([-1])?;
            let v = weight.dims()[0] as i64;
            let lo = idx.min()?.item::<i64>()?;
            let hi = idx.max()?.item::<i64>()?;
            if hi >= v {
                return Err(Error::msg(format!(
                    "select(): index {hi} out of range for tensor of size {:?} at dimension 0",
                    weight.dims()
                )));
            }
            if lo < 0 {
                return Err(Error::msg("index out of range in self"));
            }
            let (rows_idx, _, _) = idx.unique(true, false, false)?;
            let rows = weight.index_select(0, &rows_idx)?;
            // As torch: each row's norm read as a double, `max_norm / (norm + 1e-7)` in double,
            // rounded once to the row's dtype.
            let norms = rows.norm(norm_type, 1, true)?.to_dtype(DType::F64)?;
            let scale =
                Tensor::scalar_tensor(max_norm, (DType::F64, norms.device()))?.div(&norms.add(1e-7)?)?;
            let scale = norms.gt(max_norm)?.where_self(&scale, 1.0)?.to_dtype(rows.dtype())?;
            let scaled = rows.mul(&scale)?.to_dtype(weight.dtype())?;
            weight.index_put_([&rows_idx], &scaled, false)?;
            Ok(())
        })
    }
}

impl Forward for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        embedding_with(indices, &self.weight, self.options())
    }
}
