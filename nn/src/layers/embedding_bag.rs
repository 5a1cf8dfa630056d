//! `EmbeddingBag`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::functional as F;
use crate::init;
use crate::module::Forward;

/// The options of torch's `nn.EmbeddingBag` beyond the table's size, with torch's defaults
/// (`max_norm=None, norm_type=2.0, scale_grad_by_freq=False, mode="mean", sparse=False,
/// include_last_offset=False, padding_idx=None`, float32).
#[derive(Clone, Debug)]
pub struct EmbeddingBagOptions {
    /// renormalise the rows looked up whose norm exceeds this (`None`: never)
    pub max_norm: Option<f64>,
    /// the `p` of the norm compared with `max_norm`
    pub norm_type: f64,
    /// divide each row's gradient by its count in the input
    pub scale_grad_by_freq: bool,
    /// how a bag's rows combine: `"sum"`, `"mean"` or `"max"` (checked at the forward pass, as
    /// torch)
    pub mode: &'static str,
    /// torch's sparse gradient: accepted, the gradient stays dense (see
    /// [`crate::functional::embedding_bag`])
    pub sparse: bool,
    /// `offsets` has one more element, ending the last bag (CSR style)
    pub include_last_offset: bool,
    /// the row left out of every bag (negative counts from the end)
    pub padding_idx: Option<i64>,
    /// the weight's dtype
    pub dtype: DType,
}

impl Default for EmbeddingBagOptions {
    fn default() -> Self {
        EmbeddingBagOptions {
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
            mode: "mean",
            sparse: false,
            include_last_offset: false,
            padding_idx: None,
            dtype: DType::default_float(),
        }
    }
}

/// torch's `nn.EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
/// scale_grad_by_freq=False, mode="mean", sparse=False, include_last_offset=False,
/// padding_idx=None)`: a table `weight` drawn from `N(0, 1)` (the `padding_idx` row zero), each
/// bag of indices reduced to one row by [`crate::functional::embedding_bag`]. State dict:
/// `weight`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct EmbeddingBag {
    /// `[num_embeddings, embedding_dim]`
    pub weight: Tensor,
    /// renormalise the rows looked up whose norm exceeds this (`None`: never)
    #[module(skip)]
    pub max_norm: Option<f64>,
    /// the `p` of the norm compared with `max_norm`
    #[module(skip)]
    pub norm_type: f64,
    /// divide each row's gradient by its count in the input
    #[module(skip)]
    pub scale_grad_by_freq: bool,
    /// `"sum"`, `"mean"` or `"max"`
    #[module(skip)]
    pub mode: &'static str,
    /// torch's sparse gradient (accepted; the gradient stays dense)
    #[module(skip)]
    pub sparse: bool,
    /// `offsets` has one more element, ending the last bag
    #[module(skip)]
    pub include_last_offset: bool,
    /// the row left out of every bag (non-negative once constructed)
    #[module(skip)]
    pub padding_idx: Option<i64>,
}

/// `padding_idx` checked against `num_embeddings` and made non-negative, as torch's constructor
/// (whose message here starts in lower case, unlike `nn.Embedding`'s).
fn wrap_padding_idx(padding_idx: Option<i64>, num_embeddings: usize) -> Result<Option<i64>> {
    let v = num_embeddings as i64;
    match padding_idx {
        Some(p) if p >= v || p < -v => Err(Error::msg("padding_idx must be within num_embeddings")),
        Some(p) if p < 0 => Ok(Some(p + v)),
        p => Ok(p),
    }
}

impl EmbeddingBag {
    /// A table with torch's initialisation: `N(0, 1)`, the `padding_idx` row zeroed.
    pub fn new(num_embeddings: usize, embedding_dim: usize, options: EmbeddingBagOptions) -> Result<Self> {
        let padding_idx = wrap_padding_idx(options.padding_idx, num_embeddings)?;
        let weight = Tensor::empty([num_embeddings, embedding_dim], options.dtype)?;
        init::normal_(&weight, 0.0, 1.0)?;
        if let Some(p) = padding_idx {
            oxtorch_autograd::no_grad(|| weight.select(0, p as isize)?.fill_(0.0).map(|_| ()))?;
        }
        Ok(Self::over(weight.requires_grad_(true)?, padding_idx, &options))
    }

    /// torch's `nn.EmbeddingBag.from_pretrained(embeddings, freeze=True, ...)`: a layer whose
    /// weight shares `embeddings`' storage (detached from its graph), requiring grad unless
    /// `freeze`. Unlike [`EmbeddingBag::new`], the `padding_idx` row is not zeroed (it is still
    /// left out of the bags). `options.dtype` is unused.
    pub fn from_pretrained(embeddings: &Tensor, freeze: bool, options: EmbeddingBagOptions) -> Result<Self> {
        if embeddings.rank() != 2 {
            return Err(Error::msg("Embeddings parameter is expected to be 2-dimensional"));
        }
        let padding_idx = wrap_padding_idx(options.padding_idx, embeddings.dims()[0])?;
        let weight = embeddings.detach().requires_grad_(!freeze)?;
        Ok(Self::over(weight, padding_idx, &options))
    }

    fn over(weight: Tensor, padding_idx: Option<i64>, o: &EmbeddingBagOptions) -> Self {
        EmbeddingBag {
            weight,
            max_norm: o.max_norm,
            norm_type: o.norm_type,
            scale_grad_by_freq: o.scale_grad_by_freq,
            mode: o.mode,
            sparse: o.sparse,
            include_last_offset: o.include_last_offset,
            padding_idx,
        }
    }

    /// torch's `forward(input, offsets=None, per_sample_weights=None)`: `[B, N]` indices as `B`
    /// bags of `N`, or 1-D indices cut into bags at `offsets`; `per_sample_weights` (`"sum"`
    /// only) scales each looked-up row. Output `[bags, embedding_dim]`.
    pub fn forward_with_offsets(
        &self,
        input: &Tensor,
        offsets: Option<&Tensor>,
        per_sample_weights: Option<&Tensor>,
    ) -> Result<Tensor> {
        F::embedding_bag(
            input,
            &self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )
    }
}

impl EmbeddingBag {
    /// torch's `extra_repr`: `10, 3, mode='mean'`, with `max_norm`, `norm_type`,
    /// `scale_grad_by_freq` (before `mode`) and `padding_idx` (after it) when not the defaults.
    fn extra_repr_text(&self) -> String {
        let dims = self.weight.dims();
        let mut s = format!("{}, {}", dims.first().copied().unwrap_or(0), dims.get(1).copied().unwrap_or(0));
        if let Some(m) = self.max_norm {
            s += &format!(", max_norm={}", crate::module::py_float(m));
        }
        if self.norm_type != 2.0 {
            s += &format!(", norm_type={}", crate::module::py_float(self.norm_type));
        }
        if self.scale_grad_by_freq {
            s += ", scale_grad_by_freq=True";
        }
        s += &format!(", mode='{}'", self.mode);
        if let Some(p) = self.padding_idx {
            s += &format!(", padding_idx={p}");
        }
        s
    }
}

impl Forward for EmbeddingBag {
    /// `[B, N]` indices as `B` bags of `N` (a 1-D input needs
    /// [`EmbeddingBag::forward_with_offsets`]).
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_with_offsets(input, None, None)
    }
}
