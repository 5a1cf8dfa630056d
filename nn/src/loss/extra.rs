//! More of torch's losses: `poisson_nll_loss`, `gaussian_nll_loss`, `triplet_margin_loss` (with
//! `pairwise_distance` and `triplet_margin_with_distance_loss`), `hinge_embedding_loss`,
//! `soft_margin_loss`, `multilabel_soft_margin_loss`, `multi_margin_loss` and
//! `multilabel_margin_loss`. Each follows torch's definition (its Python code, or the C++ kernel's
//! reference decomposition) op for op, with torch's argument checks and messages, and is made of
//! tensor ops, so autograd gives torch's gradients.

use std::f64::consts::PI;

use oxtorch_tensor::autocast::fp32;
use oxtorch_tensor::autograd::{is_grad_enabled, Function, FunctionCtx};
use oxtorch_tensor::{DType, Error, Operand, Result, Tensor};

use super::{check_reduction, reduce};

/// torch's error for an input that its kernel has no derivative for.
fn not_differentiable(function: &str, argument: &str) -> Error {
    Error::msg(format!(
        "The function '{function}' is not differentiable with respect to argument '{argument}'. This input cannot have requires_grad True."
    ))
}

/// torch's C++ dtype check for an int64 (or `expected`-typed) argument.
fn check_dtype(t: &Tensor, expected: DType) -> Result<()> {
    if t.dtype() == expected {
        Ok(())
    } else {
        Err(Error::msg(format!(
            "expected scalar type {} but found {}",
            expected.scalar_type_name(),
            t.dtype().scalar_type_name()
        )))
    }
}

/// torch's `poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8,
/// reduction="mean")`: `exp(input) - target * input` with `log_input`, else
/// `input - target * log(input + eps)`; with `full`, plus the Stirling term
/// `target * log(target) - target + 0.5 * log(2π target)` where `target > 1`.
pub fn poisson_nll_loss(
    input: &Tensor,
    target: &Tensor,
    log_input: bool,
    full: bool,
    eps: f64,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    let mut loss = if log_input {
        input.exp()?.sub(&target.mul(input)?)?
    } else {
        input.sub(&target.mul(&input.add(eps)?.log()?)?)?
    };
    if full {
        let stirling =
            target.mul(&target.log()?)?.sub(target)?.add(&target.mul(2.0 * PI)?.log()?.mul(0.5)?)?;
        loss = loss.add(&target.le(1.0)?.where_self(0.0, &stirling)?)?;
    }
    reduce(loss, reduction)
}

/// `clamp_min(x, min)` whose gradient passes through unchanged, also where the clamp applies:
/// torch's `gaussian_nll_loss` clamps a clone of `var` in place under `no_grad`, so the gradient
/// reaches `var` through the clone as it is.
struct ClampMinKeepGrad {
    min: f64,
}

impl Function for ClampMinKeepGrad {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].clamp_min(self.min)?])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].clone())])
    }

    fn name(&self) -> &'static str {
        "CloneBackward0"
    }
}

/// torch's `gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean")`:
/// `0.5 * (log(var) + (input - target)² / var)`, plus `0.5 * log(2π)` with `full`. `var` is a
/// tensor (non-negative) shaped like `input`, like `input` without its last dim (one variance per
/// sample), or like `input` with one dim of size 1; or a number for every element. It is clamped
/// below at `eps` for the value only: its gradient is taken at the clamped value and passed on
/// unchanged, as torch's `no_grad` in-place clamp does.
pub fn gaussian_nll_loss(
    input: &Tensor,
    target: &Tensor,
    var: impl Into<Operand>,
    full: bool,
    eps: f64,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    let negative = || Error::msg("var has negative entry/entries");
    let var = match var.into() {
        Operand::Scalar(v) => {
            let v = v.to_f64();
            if v < 0.0 {
                return Err(negative());
            }
            input.ones_like()?.mul(v)?
        }
        Operand::Tensor(v) => {
            let v = fp32(&v)?;
            if v.lt(0.0)?.any()?.item::<bool>()? {
                return Err(negative());
            }
            v
        }
    };
    let (in_dims, var_dims) = (input.dims(), var.dims().to_vec());
    let var = if var_dims == in_dims {
        var
    } else if !in_dims.is_empty() && in_dims[..in_dims.len() - 1] == var_dims[..] {
        // One variance per sample: broadcast it over the last dim.
        var.unsqueeze(-1)?
    } else if in_dims.len() == var_dims.len()
        && in_dims.iter().zip(&var_dims).filter(|(x, y)| x != y).map(|(_, &y)| y).sum::<usize>() == 1
    {
        // Broadcastable with one mismatched dim (of size 1 in `var`).
        var
    } else {
        return Err(Error::shape("var is of incorrect size"));
    };
    if !matches!(reduction, "none" | "mean" | "sum") {
        return Err(Error::msg(format!("{reduction} is not valid")));
    }
    let var = ClampMinKeepGrad { min: eps }.apply(&[var])?.remove(0);
    let mut loss = var.log()?.add(&input.sub(target)?.square()?.div(&var)?)?.mul(0.5)?;
    if full {
        loss = loss.add(0.5 * (2.0 * PI).ln())?;
    }
    reduce(loss, reduction)
}

/// torch's `pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False)`: the `p`-norm of
/// `x1 - x2 + eps` over the last dim (after broadcasting).
pub fn pairwise_distance(x1: &Tensor, x2: &Tensor, p: f64, eps: f64, keepdim: bool) -> Result<Tensor> {
    x1.sub(x2)?.add(eps)?.norm(p, -1, keepdim)
}

/// The triplet loss `max(0, margin + d(a, p) - d(a, n))`, `d(a, n)` replaced by `d(p, n)` where
/// that is smaller with `swap`.
fn triplet_loss(
    anchor: &Tensor,
    positive: &Tensor,
    negative: &Tensor,
    distance: &dyn Fn(&Tensor, &Tensor) -> Result<Tensor>,
    margin: f64,
    swap: bool,
    reduction: &str,
) -> Result<Tensor> {
    let (a, p, n) = (anchor.rank(), positive.rank(), negative.rank());
    if a != p || p != n {
        return Err(Error::shape(format!(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )));
    }
    let dist_pos = distance(anchor, positive)?;
    let mut dist_neg = distance(anchor, negative)?;
    if swap {
        dist_neg = dist_neg.minimum(&distance(positive, negative)?)?;
    }
    reduce(dist_pos.add(margin)?.sub(&dist_neg)?.clamp_min(0.0)?, reduction)
}

fn check_margin(margin: f64) -> Result<()> {
    if margin <= 0.0 {
        return Err(Error::msg(format!("margin must be greater than 0, got {margin:?}")));
    }
    Ok(())
}

/// torch's `triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6,
/// swap=False, reduction="mean")`: `max(0, margin + d(a, p) - d(a, n))` with
/// `d = pairwise_distance(·, ·, p, eps)`; with `swap`, `d(a, n)` is replaced by `d(p, n)` where that
/// is smaller. The three inputs are `[N, D]` (or `[D]`).
#[allow(clippy::too_many_arguments)]
pub fn triplet_margin_loss(
    anchor: &Tensor,
    positive: &Tensor,
    negative: &Tensor,
    margin: f64,
    p: f64,
    eps: f64,
    swap: bool,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (anchor, positive, negative) = (&fp32(anchor)?, &fp32(positive)?, &fp32(negative)?);
    check_reduction(reduction)?;
    check_margin(margin)?;
    let distance = |x: &Tensor, y: &Tensor| pairwise_distance(x, y, p, eps, false);
    triplet_loss(anchor, positive, negative, &distance, margin, swap, reduction)
}

/// A distance between two batches of vectors (`triplet_margin_with_distance_loss`'s
/// `distance_function`).
pub type DistanceFn<'a> = &'a dyn Fn(&Tensor, &Tensor) -> Result<Tensor>;

/// torch's `triplet_margin_with_distance_loss(anchor, positive, negative, *,
/// distance_function=None, margin=1.0, swap=False, reduction="mean")`: the triplet loss with
/// `distance_function` (torch's default: `pairwise_distance` with `p = 2`, `eps = 1e-6`).
pub fn triplet_margin_with_distance_loss(
    anchor: &Tensor,
    positive: &Tensor,
    negative: &Tensor,
    distance_function: Option<DistanceFn<'_>>,
    margin: f64,
    swap: bool,
    reduction: &str,
) -> Result<Tensor> {
    check_reduction(reduction)?;
    check_margin(margin)?;
    let default = |x: &Tensor, y: &Tensor| pairwise_distance(x, y, 2.0, 1e-6, false);
    let distance = distance_function.unwrap_or(&default);
    triplet_loss(anchor, positive, negative, distance, margin, swap, reduction)
}

/// torch's `hinge_embedding_loss(input, target, margin=1.0, reduction="mean")`: `input` where
/// `target == 1`, `max(0, margin - input)` where `target == -1` (and their sum for any other
/// target value, as torch's `where(target != 1, ...) + where(target != -1, ...)` gives).
pub fn hinge_embedding_loss(input: &Tensor, target: &Tensor, margin: f64, reduction: &str) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    let zeros = input.zeros_like()?;
    let margin_clamp = input.neg()?.add(margin)?.clamp_min(0.0)?;
    let output_margin = target.ne(1.0)?.where_self(&margin_clamp, &zeros)?;
    let output_self = target.ne(-1.0)?.where_self(input, &zeros)?;
    reduce(output_margin.add(&output_self)?, reduction)
}

/// torch's `soft_margin_loss(input, target, reduction="mean")`: `log(1 + exp(-target * input))`
/// (targets `1` or `-1`). As in torch, `target` may not require grad.
pub fn soft_margin_loss(input: &Tensor, target: &Tensor, reduction: &str) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    check_reduction(reduction)?;
    if target.requires_grad() && is_grad_enabled() {
        return Err(not_differentiable("soft_margin_loss", "target"));
    }
    reduce(input.neg()?.mul(target)?.exp()?.log1p()?, reduction)
}

/// torch's `logsigmoid`: `min(x, 0) - log1p(exp(-|x|))`, with its gradient (`1/2` at 0).
fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    // `-|x|` written so that its slope at 0 is -1 (not abs's 0): the two terms' slopes then sum to
    // torch's 1/2 there.
    let neg_abs = x.lt(0.0)?.where_self(x, &x.neg()?)?;
    x.clamp_max(0.0)?.sub(&neg_abs.exp()?.log1p()?)
}

/// torch's `multilabel_soft_margin_loss(input, target, weight=None, reduction="mean")`:
/// `-(t logsigmoid(x) + (1 - t) logsigmoid(-x))`, times `weight`, averaged over the classes (the
/// last dim), so `"none"` gives one loss per sample.
pub fn multilabel_soft_margin_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let (input, target) = (&fp32(input)?, &fp32(target)?);
    let weight = weight.map(fp32).transpose()?;
    if input.rank() == 0 {
        return Err(Error::msg("Dimension specified as -1 but tensor has no dimensions"));
    }
    let pos = target.mul(&log_sigmoid(input)?)?;
    let neg = target.neg()?.add(1.0)?.mul(&log_sigmoid(&input.neg()?)?)?;
    let mut loss = pos.add(&neg)?.neg()?;
    if let Some(w) = &weight {
        loss = loss.mul(w)?;
    }
    let class_dim = input.rank() - 1;
    let classes = input.dims()[class_dim];
    let loss = loss.sum(class_dim, false)?.div(classes as f64)?;
    match reduction {
        "none" => Ok(loss),
        "mean" => loss.mean_all(),
        "sum" => loss.sum_all(),
        other => Err(Error::msg(format!("{other} is not valid"))),
    }
}

/// `(nframe, dim)` of a margin loss's input (`[N, C]`, `[C]` or a scalar), or torch's error.
fn frames_and_classes(input: &Tensor) -> Result<(usize, usize)> {
    let dims = input.dims();
    match dims {
        [] => Ok((1, 1)),
        &[c] if c != 0 => Ok((1, c)),
        &[n, c] if c != 0 => Ok((n, c)),
        _ => Err(Error::shape(format!(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {dims:?}"
        ))),
    }
}

/// torch's `multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean")`:
/// for each sample (`input` `[N, C]` or `[C]`, int64 `target` `[N]` or a scalar), the mean over
/// the classes `i != y` of `weight[y] * max(0, margin - x[y] + x[i])^p`, `p` 1 or 2. `"none"`
/// gives one loss per sample (a scalar for a 0-d target).
pub fn multi_margin_loss(
    input: &Tensor,
    target: &Tensor,
    p: i64,
    margin: f64,
    weight: Option<&Tensor>,
    reduction: &str,
) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let input = &fp32(input)?;
    let weight = weight.map(fp32).transpose()?;
    check_reduction(reduction)?;
    if p != 1 && p != 2 {
        return Err(Error::msg("only p == 1 and p == 2 supported"));
    }
    if let Some(w) = &weight {
        if w.rank() != 1 {
            return Err(Error::shape("weight must be one-dimensional"));
        }
        if w.requires_grad() && is_grad_enabled() {
            return Err(not_differentiable("multi_margin_loss", "weight"));
        }
    }
    let (nframe, dim) = frames_and_classes(input)?;
    if target.rank() > 1 || target.numel() != nframe {
        return Err(Error::shape(format!(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). Expected target size [{nframe}], but got {:?}. Input has shape {:?}.",
            target.dims(),
            input.dims()
        )));
    }
    if let Some(w) = &weight {
        if w.numel() != dim {
            return Err(Error::shape(format!(
                "inconsistent weight size, expected {dim} but got {:?}",
                w.dims()
            )));
        }
    }
    if !input.dtype().is_float() {
        return Err(Error::UnsupportedDType { op: "multi_margin_loss_cpu_kernel", dtype: input.dtype() });
    }
    check_dtype(target, DType::I64)?;
    if let Some(w) = &weight {
        check_dtype(w, input.dtype())?;
    }
    if target.lt(0i64)?.logical_or(&target.ge(dim as i64)?)?.any()?.item::<bool>()? {
        return Err(Error::msg("target out of range"));
    }
    let x = input.reshape([nframe, dim])?;
    let y = target.reshape([nframe, 1])?;
    // margin - x[y] + x[i], then the power and the weight of the target class.
    let z = x.gather(1, &y)?.neg()?.add(margin)?.add(&x)?.clamp_min(0.0)?;
    let mut z = if p == 1 { z } else { z.mul(&z)? };
    if let Some(w) = &weight {
        z = z.mul(&w.index_select(0, &target.reshape([nframe])?)?.unsqueeze(1)?)?;
    }
    let classes = Tensor::arange(dim as i64, (DType::I64, input.device()))?;
    let per_sample = classes.ne(&y)?.where_self(&z, 0.0)?.sum(1, false)?.div(dim as f64)?;
    match reduction {
        "none" if target.rank() == 0 => per_sample.squeeze(),
        r => reduce(per_sample, r),
    }
}

/// torch's `multilabel_margin_loss(input, target, reduction="mean")`: `input` `[N, C]` or `[C]`,
/// int64 `target` of the same shape holding each sample's class indices, ended by the first `-1`.
/// Each sample's loss is `sum over its labels j and the other classes i of max(0, 1 - x[j] + x[i])`
/// divided by `C`; `"none"` gives one per sample (a scalar for an unbatched input).
pub fn multilabel_margin_loss(input: &Tensor, target: &Tensor, reduction: &str) -> Result<Tensor> {
    // Autocast runs losses in f32, as torch does.
    let input = &fp32(input)?;
    check_reduction(reduction)?;
    let (nframe, dim) = frames_and_classes(input)?;
    let target_ok = if input.rank() <= 1 {
        target.rank() <= 1 && target.numel() == dim
    } else {
        target.dims() == [nframe, dim].as_slice()
    };
    if !target_ok {
        return Err(Error::shape(format!(
            "inconsistent target size: {:?} for input of size: {:?}",
            target.dims(),
            input.dims()
        )));
    }
    if !input.dtype().is_float() {
        return Err(Error::UnsupportedDType {
            op: "multilabel_margin_loss_forward_out_frame",
            dtype: input.dtype(),
        });
    }
    check_dtype(target, DType::I64)?;
    if target.lt(-1i64)?.logical_or(&target.ge(dim as i64)?)?.any()?.item::<bool>()? {
        return Err(Error::msg("argument #2 'target' is out of range"));
    }
    let x = input.reshape([nframe, dim])?;
    let t = target.reshape([nframe, dim])?;
    let classes = Tensor::arange(dim as i64, (DType::I64, input.device()))?;
    // Slots before the first -1 hold labels.
    let end = t.eq(-1i64)?.where_self(&classes, dim as i64)?.amin(-1, true)?;
    let is_label_slot = classes.lt(&end)?;
    // x at each slot's label `[N, slot]`, and which classes are labels `[N, class]`.
    let x_label = x.gather(1, &is_label_slot.where_self(&t, 0i64)?)?;
    let slot_class = is_label_slot.where_self(&t, -1i64)?;
    let is_target = slot_class.unsqueeze(2)?.eq(&classes)?.any_dim(1, false)?;
    // `[N, slot, class]`: 1 - x[label] + x[class], kept for label slots and non-label classes.
    let z = x_label.neg()?.add(1.0)?.unsqueeze(2)?.add(&x.unsqueeze(1)?)?.clamp_min(0.0)?;
    let kept = is_label_slot.unsqueeze(2)?.logical_and(&is_target.logical_not()?.unsqueeze(1)?)?;
    let per_sample = kept.where_self(&z, 0.0)?.sum([1isize, 2], false)?.div(dim as f64)?;
    match reduction {
        "none" if input.rank() <= 1 => per_sample.squeeze(),
        // torch's kernel divides the summed losses by the batch size (a zero loss for no samples).
        "mean" => per_sample.sum_all()?.div(nframe.max(1) as f64),
        r => reduce(per_sample, r),
    }
}
