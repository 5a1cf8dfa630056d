//! The module forms of the losses in `extra` (torch's `nn.PoissonNLLLoss`, ...): the functional
//! forms with their arguments stored, torch's defaults from `Default`, and class weights
//! registered as buffers, as in [`super::modules`].

use oxtorch_tensor::{Operand, Result, Tensor};

use crate::module::Buffer;

/// torch's `nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-8, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct PoissonNLLLoss {
    /// whether the input is the log of the rate
    pub log_input: bool,
    /// whether to add the Stirling approximation term
    pub full: bool,
    /// added to the rate before its log when `log_input` is false
    pub eps: f64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for PoissonNLLLoss {
    fn default() -> Self {
        PoissonNLLLoss { log_input: true, full: false, eps: 1e-8, reduction: "mean" }
    }
}

impl PoissonNLLLoss {
    /// The loss of the (log-)rate `input` against counts `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::poisson_nll_loss(input, target, self.log_input, self.full, self.eps, self.reduction)
    }
}

/// torch's `nn.GaussianNLLLoss(full=False, eps=1e-6, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct GaussianNLLLoss {
    /// whether to add the constant `0.5 log(2π)`
    pub full: bool,
    /// the variance's lower clamp
    pub eps: f64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for GaussianNLLLoss {
    fn default() -> Self {
        GaussianNLLLoss { full: false, eps: 1e-6, reduction: "mean" }
    }
}

impl GaussianNLLLoss {
    /// The loss of means `input` and variances `var` (a tensor or a number) against `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor, var: impl Into<Operand>) -> Result<Tensor> {
        super::gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)
    }
}

/// torch's `nn.TripletMarginLoss(margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct TripletMarginLoss {
    /// required gap between the positive and the negative distance
    pub margin: f64,
    /// the norm degree of the pairwise distance
    pub p: f64,
    /// added to the differences before the norm
    pub eps: f64,
    /// use the positive-negative distance where it is smaller
    pub swap: bool,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for TripletMarginLoss {
    fn default() -> Self {
        TripletMarginLoss { margin: 1.0, p: 2.0, eps: 1e-6, swap: false, reduction: "mean" }
    }
}

impl TripletMarginLoss {
    /// The loss of the triplets `(anchor, positive, negative)`.
    pub fn forward(&self, anchor: &Tensor, positive: &Tensor, negative: &Tensor) -> Result<Tensor> {
        super::triplet_margin_loss(
            anchor,
            positive,
            negative,
            self.margin,
            self.p,
            self.eps,
            self.swap,
            self.reduction,
        )
    }
}

/// A distance between batches of embeddings, for [`TripletMarginWithDistanceLoss`].
pub type SharedDistanceFn = std::sync::Arc<dyn Fn(&Tensor, &Tensor) -> Result<Tensor> + Send + Sync>;

/// torch's `nn.TripletMarginWithDistanceLoss(distance_function=None, margin=1.0, swap=False,
/// reduction="mean")`: the triplet loss with a distance of your own (the pairwise Euclidean one
/// when `None`).
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct TripletMarginWithDistanceLoss {
    /// the distance, or `None` for `pairwise_distance` with p = 2
    #[module(skip)]
    pub distance_function: Option<SharedDistanceFn>,
    /// required gap between the positive and the negative distance
    pub margin: f64,
    /// use the positive-negative distance where it is smaller
    pub swap: bool,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for TripletMarginWithDistanceLoss {
    fn default() -> Self {
        TripletMarginWithDistanceLoss { distance_function: None, margin: 1.0, swap: false, reduction: "mean" }
    }
}

impl TripletMarginWithDistanceLoss {
    /// The loss of the triplets `(anchor, positive, negative)`.
    pub fn forward(&self, anchor: &Tensor, positive: &Tensor, negative: &Tensor) -> Result<Tensor> {
        let distance = self.distance_function.as_ref().map(|f| f.as_ref() as super::extra::DistanceFn<'_>);
        super::triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance,
            self.margin,
            self.swap,
            self.reduction,
        )
    }
}

/// torch's `nn.HingeEmbeddingLoss(margin=1.0, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct HingeEmbeddingLoss {
    /// margin for the `-1` targets
    pub margin: f64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for HingeEmbeddingLoss {
    fn default() -> Self {
        HingeEmbeddingLoss { margin: 1.0, reduction: "mean" }
    }
}

impl HingeEmbeddingLoss {
    /// The loss of distances `input` labelled `target` (1 similar, -1 dissimilar).
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::hinge_embedding_loss(input, target, self.margin, self.reduction)
    }
}

/// torch's `nn.SoftMarginLoss(reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct SoftMarginLoss {
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for SoftMarginLoss {
    fn default() -> Self {
        SoftMarginLoss { reduction: "mean" }
    }
}

impl SoftMarginLoss {
    /// The loss of scores `input` against targets `1` or `-1`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::soft_margin_loss(input, target, self.reduction)
    }
}

/// torch's `nn.MultiLabelSoftMarginLoss(weight=None, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct MultiLabelSoftMarginLoss {
    /// per-class weight (buffer)
    pub weight: Option<Buffer>,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for MultiLabelSoftMarginLoss {
    fn default() -> Self {
        MultiLabelSoftMarginLoss { weight: None, reduction: "mean" }
    }
}

impl MultiLabelSoftMarginLoss {
    /// The loss of logits `input` `[N, C]` against 0/1 labels `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::multilabel_soft_margin_loss(input, target, self.weight.as_deref(), self.reduction)
    }
}

/// torch's `nn.MultiMarginLoss(p=1, margin=1.0, weight=None, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct MultiMarginLoss {
    /// 1 or 2: the power of the hinge
    pub p: i64,
    /// required score gap
    pub margin: f64,
    /// per-class weight (buffer)
    pub weight: Option<Buffer>,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for MultiMarginLoss {
    fn default() -> Self {
        MultiMarginLoss { p: 1, margin: 1.0, weight: None, reduction: "mean" }
    }
}

impl MultiMarginLoss {
    /// The loss of scores `input` `[N, C]` at class indices `target` `[N]`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::multi_margin_loss(input, target, self.p, self.margin, self.weight.as_deref(), self.reduction)
    }
}

/// torch's `nn.MultiLabelMarginLoss(reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct MultiLabelMarginLoss {
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for MultiLabelMarginLoss {
    fn default() -> Self {
        MultiLabelMarginLoss { reduction: "mean" }
    }
}

impl MultiLabelMarginLoss {
    /// The loss of scores `input` `[N, C]` against label lists `target` `[N, C]` (ended by -1).
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::multilabel_margin_loss(input, target, self.reduction)
    }
}
