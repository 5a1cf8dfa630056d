//! Loss functions (torch's `torch.nn.functional.*_loss`) with torch's names, argument order,
//! reductions (`"none"`, `"mean"`, `"sum"`) and error messages. Every loss is a composition of
//! tensor ops, so autograd differentiates it and it runs on every device. The module forms
//! (`CrossEntropyLoss`, ...) are in [`modules`].

mod ctc;
mod extra;
mod extra_modules;
mod linear_cross_entropy;
pub mod modules;

pub use ctc::ctc_loss;
pub use extra::{
    gaussian_nll_loss, hinge_embedding_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, pairwise_distance, poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss,
};
pub use extra_modules::{
    GaussianNLLLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
    PoissonNLLLoss, SharedDistanceFn, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
};
pub use linear_cross_entropy::LinearCrossEntropyLoss;

use oxtorch_tensor::autocast::fp32;
use oxtorch_tensor::autograd::{Function, FunctionCtx};
use oxtorch_tensor::{Error, Result, Tensor};

/// Applies a reduction to per-element losses.
pub(crate) fn reduce(loss: Tensor, reduction: &str) -> Result<Tensor> {
    match reduction {
        "none" => Ok(loss),
        "mean" => loss.mean_all(),
        "sum" => loss.sum_all(),
        other => Err(invalid_reduction(other)),
    }
}

fn invalid_reduction(reduction: &str) -> Error {
    Error::msg(format!("{reduction} is not a valid value for reduction"))
}

fn check_reduction(reduction: &str) -> Result<()> {
    match reduction {
        "none" | "mean" | "sum" => Ok(()),
        other => Err(invalid_reduction(other)),
    }
}

fn check_float(op: &'static str, t: &Tensor) -> Result<()> {
    if t.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType { op, dtype: t.dtype() })
    }
}

/// Cross-entropy of logits `input` (`[N, C, d...]` or `[C]`) against class indices (int64 `target`,
/// `[N, d...]`) or class probabilities (float `target` shaped like `input`), with per-class
/// `weight`, `ignore_index` (indices only; torch's default -100), and `label_smoothing` in `[0, 1]`.
pub fn cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: &str,
    label_smoothing: f64,
) -> Result<Tensor> {
    input.cross_entropy(target, weight, ignore_index, reduction, label_smoothing)
}

/// Negative log-likelihood of log-probabilities `input` (`[N, C, d...]` or `[C]`) at class indices
/// `target`; `"mean"` divides by the summed weights of the targets not equal to `ignore_index`.
pub fn nll_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: &str,
) -> Result<Tensor> {
    input.nll_loss(target, weight, ignore_index, reduction)
}

/// Squared error `(input - target)²` (broadcasting as torch does).
pub fn mse_loss(input: &Tensor, target: &Tensor, reduction: &str) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    reduce(input.sub(target)?.square()?, reduction)
}

/// Absolute error `|input - target|`.
pub fn l1_loss(input: &Tensor, target: &Tensor, reduction: &str) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    reduce(input.sub(target)?.abs()?, reduction)
}

/// `0.5 d² / beta` where `d = |input - target| < beta`, else `d - 0.5 beta` (torch's default
/// `beta = 1`; `beta = 0` is the L1 loss).
pub fn smooth_l1_loss(input: &Tensor, target: &Tensor, reduction: &str, beta: f64) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    if beta < 0.0 {
        return Err(Error::msg("smooth_l1_loss does not support negative values for beta."));
    }
    let d = input.sub(target)?.abs()?;
    if beta == 0.0 {
        return reduce(d, reduction);
    }
    let quadratic = d.square()?.mul(0.5 / beta)?;
    let linear = d.sub(0.5 * beta)?;
    reduce(d.lt(beta)?.where_self(&quadratic, &linear)?, reduction)
}

/// `0.5 d²` where `d = |input - target| < delta`, else `delta (d - 0.5 delta)` (torch's default
/// `delta = 1`).
pub fn huber_loss(input: &Tensor, target: &Tensor, reduction: &str, delta: f64) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    if delta <= 0.0 {
        return Err(Error::msg("huber_loss does not support non-positive values for delta."));
    }
    let d = input.sub(target)?.abs()?;
    let quadratic = d.square()?.mul(0.5)?;
    let linear = d.sub(0.5 * delta)?.mul(delta)?;
    reduce(d.lt(delta)?.where_self(&quadratic, &linear)?, reduction)
}

/// `log(x)` clamped below at -100 as torch's `binary_cross_entropy` does, with a finite gradient
/// (zero) where the clamp applies instead of `0 / 0`.
fn clamped_log(x: &Tensor) -> Result<Tensor> {
    let floor = (-100f64).exp();
    let ok = x.gt(floor)?;
    let safe = ok.where_self(x, 1.0)?;
    ok.where_self(&safe.log()?, -100.0)
}

/// The elementwise binary cross-entropy `-(t log x + (1 - t) log(1 - x))`, the logs clamped at
/// -100, with torch's gradients: `(x - t) / max(x (1 - x), 1e-12)` (an f32 epsilon) for `x`, so that a saturated
/// wrong prediction (x = 0, t = 1) is pushed back hard (-1e12) where the clamped logs' own
/// derivative is zero, and `log(1 - x) - log(x)` for `t`. The backward is made of ops, so it
/// differentiates again.
struct BinaryCrossEntropy;

impl Function for BinaryCrossEntropy {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (x, t) = (&inputs[0], &inputs[1]);
        ctx.save_for_backward(&[x, t]);
        let pos = t.mul(&clamped_log(x)?)?;
        let neg = t.neg()?.add(1.0)?.mul(&clamped_log(&x.neg()?.add(1.0)?)?)?;
        Ok(vec![pos.add(&neg)?.neg()?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (x, t, g) = (&saved[0], &saved[1], &grads[0]);
        let slope = x.mul(&x.neg()?.add(1.0)?)?.clamp_min(1e-12f32 as f64)?;
        let dx = g.mul(&x.sub(t)?.div(&slope)?)?;
        let dt = g.mul(&x.neg()?.log1p()?.sub(&x.log()?)?)?;
        Ok(vec![Some(dx), Some(dt)])
    }

    fn name(&self) -> &'static str {
        "BinaryCrossEntropyBackward0"
    }
}

/// Binary cross-entropy of probabilities `input` in `[0, 1]` and `target` of the same shape:
/// `-weight (t log x + (1 - t) log(1 - x))`, the logs clamped at -100 as torch does.
pub fn binary_cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    let weight = weight.map(fp32).transpose()?;
    let weight = weight.as_ref();
    check_reduction(reduction)?;
    check_float("binary_cross_entropy", input)?;
    if target.dims() != input.dims() {
        return Err(Error::shape(format!(
            "Using a target size ({}) that is different to the input size ({}) is deprecated. Please ensure they have the same size.",
            crate::module::torch_size(target.dims()),
            crate::module::torch_size(input.dims())
        )));
    }
    // NaN is out of range too (torch's `x >= 0 && x <= 1` check).
    let out_of_range = input.ge(0.0)?.logical_and(&input.le(1.0)?)?.logical_not()?;
    if out_of_range.any()?.item::<bool>()? {
        return Err(Error::msg("all elements of input should be between 0 and 1"));
    }
    let mut loss = BinaryCrossEntropy.apply(&[input.clone(), target.clone()])?.remove(0);
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduce(loss, reduction)
}

/// `softplus(-x) = -log(sigmoid(x))`, exact and stable for every `x`, with the exact gradient
/// `sigmoid(x) - 1` (a two-term `logsumexp`).
fn neg_log_sigmoid(x: &Tensor) -> Result<Tensor> {
    Tensor::stack(&[&x.zeros_like()?, &x.neg()?], -1)?.logsumexp(-1, false)
}

/// Binary cross-entropy of logits: `(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)`, times
/// `weight`; numerically stable for any logit. `pos_weight` broadcasts over the last dim (classes).
pub fn binary_cross_entropy_with_logits(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: &str,
    pos_weight: Option<&Tensor>,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    let (weight, pos_weight) = (weight.map(fp32).transpose()?, pos_weight.map(fp32).transpose()?);
    let (weight, pos_weight) = (weight.as_ref(), pos_weight.as_ref());
    check_reduction(reduction)?;
    check_float("binary_cross_entropy_with_logits", input)?;
    if target.dims() != input.dims() {
        return Err(Error::shape(format!(
            "Target size ({}) must be the same as input size ({})",
            crate::module::torch_size(target.dims()),
            crate::module::torch_size(input.dims())
        )));
    }
    let sp = neg_log_sigmoid(input)?;
    let log_weight = match pos_weight {
        Some(pw) => pw.sub(1.0)?.mul(target)?.add(1.0)?,
        None => target.ones_like()?,
    };
    let mut loss = target.neg()?.add(1.0)?.mul(input)?.add(&log_weight.mul(&sp)?)?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduce(loss, reduction)
}

/// Kullback-Leibler divergence of log-probabilities `input` from `target` (probabilities, or
/// log-probabilities with `log_target`): `t (log t - x)`, zero where `t = 0`. `reduction` also
/// takes `"batchmean"` (sum divided by the batch size, the mathematical KL divergence).
pub fn kl_div(input: &Tensor, target: &Tensor, reduction: &str, log_target: bool) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    let loss = if log_target {
        target.exp()?.mul(&target.sub(input)?)?
    } else {
        // torch's `xlogy(t, t)`: zero at t = 0, NaN for a negative target.
        let zero = target.eq(0.0)?;
        let safe = zero.where_self(1.0, target)?;
        let xlogx = zero.where_self(0.0, &target.mul(&safe.log()?)?)?;
        xlogx.sub(&target.mul(input)?)?
    };
    match reduction {
        "batchmean" if input.rank() == 0 => loss.sum_all(),
        "batchmean" => loss.sum_all()?.div(input.dims()[0] as f64),
        r => reduce(loss, r),
    }
}

/// `1 - cos(x1, x2)` where `target == 1`, `max(0, cos(x1, x2) - margin)` where `target == -1`;
/// inputs `[N, D]` with target `[N]`, or `[D]` with a 0-d target.
pub fn cosine_embedding_loss(
    input1: &Tensor,
    input2: &Tensor,
    target: &Tensor,
    margin: f64,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input1, input2, target) = (&fp32(input1)?, &fp32(input2)?, &fp32(target)?);
    check_reduction(reduction)?;
    let tr = target.rank();
    if tr > 1 {
        return Err(Error::shape(format!(
            "0D or 1D target tensor expected, multi-target not supported, but got target of size: {:?}",
            target.dims()
        )));
    }
    let expect = tr + 1;
    if input1.rank() != expect || input2.rank() != expect {
        return Err(Error::shape(format!(
            "{tr}D target tensor expects {expect}D input tensors, but found inputs with sizes {:?} and {:?}.",
            input1.dims(),
            input2.dims()
        )));
    }
    const EPSILON: f64 = 1e-12;
    let d = tr as isize;
    let prod = input1.mul(input2)?.sum(d, false)?;
    let mag1 = input1.square()?.sum(d, false)?.add(EPSILON)?;
    let mag2 = input2.square()?.sum(d, false)?.add(EPSILON)?;
    let cos = prod.div(&mag1.mul(&mag2)?.sqrt()?)?;
    let pos = target.eq(1.0)?.where_self(&cos.neg()?.add(1.0)?, 0.0)?;
    let neg = target.eq(-1.0)?.where_self(&cos.sub(margin)?.clamp_min(0.0)?, 0.0)?;
    reduce(pos.add(&neg)?, reduction)
}

/// `max(0, -target (x1 - x2) + margin)`, target `1` meaning `x1` should rank higher.
pub fn margin_ranking_loss(
    input1: &Tensor,
    input2: &Tensor,
    target: &Tensor,
    margin: f64,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input1, input2, target) = (&fp32(input1)?, &fp32(input2)?, &fp32(target)?);
    check_reduction(reduction)?;
    if input1.rank() != input2.rank() || input1.rank() != target.rank() {
        return Err(Error::shape(format!(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: {}, input2: {}, target: {} ",
            crate::module::torch_size(input1.dims()),
            crate::module::torch_size(input2.dims()),
            crate::module::torch_size(target.dims())
        )));
    }
    let loss = target.neg()?.mul(&input1.sub(input2)?)?.add(margin)?.clamp_min(0.0)?;
    reduce(loss, reduction)
}
