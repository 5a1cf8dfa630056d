//! Loss modules (torch's `nn.CrossEntropyLoss`, ...): the functional forms with their arguments
//! stored, torch's defaults from `Default`/`new`, and class weights registered as buffers (so they
//! appear in the state dict and move with `to`, as in torch).

use oxtorch_tensor::{Result, Tensor};

use crate::module::Buffer;

/// torch's `nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction="mean", label_smoothing=0)`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct CrossEntropyLoss {
    /// per-class weight (buffer)
    pub weight: Option<Buffer>,
    /// target value that is left out
    pub ignore_index: i64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
    /// label smoothing in `[0, 1]`
    pub label_smoothing: f64,
}

impl Default for CrossEntropyLoss {
    fn default() -> Self {
        CrossEntropyLoss { weight: None, ignore_index: -100, reduction: "mean", label_smoothing: 0.0 }
    }
}

impl CrossEntropyLoss {
    /// The loss of logits `input` against class indices or probabilities `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::cross_entropy(
            input,
            target,
            self.weight.as_deref(),
            self.ignore_index,
            self.reduction,
            self.label_smoothing,
        )
    }
}

/// torch's `nn.NLLLoss(weight=None, ignore_index=-100, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct NLLLoss {
    /// per-class weight (buffer)
    pub weight: Option<Buffer>,
    /// target value that is left out
    pub ignore_index: i64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for NLLLoss {
    fn default() -> Self {
        NLLLoss { weight: None, ignore_index: -100, reduction: "mean" }
    }
}

impl NLLLoss {
    /// The loss of log-probabilities `input` at class indices `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::nll_loss(input, target, self.weight.as_deref(), self.ignore_index, self.reduction)
    }
}

macro_rules! pointwise_loss {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty = $default:expr),* }
        => |$s:ident, $x:ident, $y:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(oxtorch_nn_derive::Module, Clone)]
        pub struct $name {
            /// `"none"`, `"mean"` or `"sum"`
            pub reduction: &'static str,
            $($(#[$fdoc])* pub $field: $ty),*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { reduction: "mean", $($field: $default),* }
            }
        }

        impl $name {
            /// The loss of `input` against `target`.
            pub fn forward(&self, $x: &Tensor, $y: &Tensor) -> Result<Tensor> {
                let $s = self;
                $body
            }
        }
    };
}

pointwise_loss!(
    /// torch's `nn.MSELoss(reduction="mean")`.
    MSELoss {} => |s, x, y| super::mse_loss(x, y, s.reduction)
);
pointwise_loss!(
    /// torch's `nn.L1Loss(reduction="mean")`.
    L1Loss {} => |s, x, y| super::l1_loss(x, y, s.reduction)
);
pointwise_loss!(
    /// torch's `nn.SmoothL1Loss(reduction="mean", beta=1.0)`.
    SmoothL1Loss {
        /// where the loss turns from quadratic to linear
        beta: f64 = 1.0
    } => |s, x, y| super::smooth_l1_loss(x, y, s.reduction, s.beta)
);
pointwise_loss!(
    /// torch's `nn.HuberLoss(reduction="mean", delta=1.0)`.
    HuberLoss {
        /// where the loss turns from quadratic to linear
        delta: f64 = 1.0
    } => |s, x, y| super::huber_loss(x, y, s.reduction, s.delta)
);
pointwise_loss!(
    /// torch's `nn.KLDivLoss(reduction="mean", log_target=False)`; `reduction` also takes
    /// `"batchmean"`.
    KLDivLoss {
        /// whether the target is given as log-probabilities
        log_target: bool = false
    } => |s, x, y| super::kl_div(x, y, s.reduction, s.log_target)
);

/// torch's `nn.BCELoss(weight=None, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct BCELoss {
    /// element weight (buffer), broadcast against the input
    pub weight: Option<Buffer>,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for BCELoss {
    fn default() -> Self {
        BCELoss { weight: None, reduction: "mean" }
    }
}

impl BCELoss {
    /// The loss of probabilities `input` against `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::binary_cross_entropy(input, target, self.weight.as_deref(), self.reduction)
    }
}

/// torch's `nn.BCEWithLogitsLoss(weight=None, reduction="mean", pos_weight=None)`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct BCEWithLogitsLoss {
    /// element weight (buffer)
    pub weight: Option<Buffer>,
    /// weight of the positive class per class (buffer)
    pub pos_weight: Option<Buffer>,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for BCEWithLogitsLoss {
    fn default() -> Self {
        BCEWithLogitsLoss { weight: None, pos_weight: None, reduction: "mean" }
    }
}

impl BCEWithLogitsLoss {
    /// The loss of logits `input` against `target`.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::binary_cross_entropy_with_logits(
            input,
            target,
            self.weight.as_deref(),
            self.reduction,
            self.pos_weight.as_deref(),
        )
    }
}

/// torch's `nn.CosineEmbeddingLoss(margin=0.0, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct CosineEmbeddingLoss {
    /// margin for dissimilar pairs
    pub margin: f64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for CosineEmbeddingLoss {
    fn default() -> Self {
        CosineEmbeddingLoss { margin: 0.0, reduction: "mean" }
    }
}

impl CosineEmbeddingLoss {
    /// The loss of the pair `(input1, input2)` labelled `target` (1 similar, -1 dissimilar).
    pub fn forward(&self, input1: &Tensor, input2: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)
    }
}

/// torch's `nn.MarginRankingLoss(margin=0.0, reduction="mean")`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct MarginRankingLoss {
    /// required score gap
    pub margin: f64,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
}

impl Default for MarginRankingLoss {
    fn default() -> Self {
        MarginRankingLoss { margin: 0.0, reduction: "mean" }
    }
}

impl MarginRankingLoss {
    /// The loss of scores `input1`, `input2` ranked by `target` (1: first higher, -1: second).
    pub fn forward(&self, input1: &Tensor, input2: &Tensor, target: &Tensor) -> Result<Tensor> {
        super::margin_ranking_loss(input1, input2, target, self.margin, self.reduction)
    }
}

/// torch's `nn.CTCLoss(blank=0, reduction="mean", zero_infinity=False)`.
#[derive(oxtorch_nn_derive::Module, Clone)]
pub struct CTCLoss {
    /// the blank label
    pub blank: usize,
    /// `"none"`, `"mean"` or `"sum"`
    pub reduction: &'static str,
    /// replace impossible alignments' infinite losses (and their gradients) by zero
    pub zero_infinity: bool,
}

impl Default for CTCLoss {
    fn default() -> Self {
        CTCLoss { blank: 0, reduction: "mean", zero_infinity: false }
    }
}

impl CTCLoss {
    /// The loss of `log_probs` `[T, N, C]` against `targets`; see [`super::ctc_loss`].
    pub fn forward(
        &self,
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &Tensor,
        target_lengths: &Tensor,
    ) -> Result<Tensor> {
        super::ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )
    }
}
