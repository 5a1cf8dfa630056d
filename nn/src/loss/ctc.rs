//! Connectionist temporal classification loss: the forward (alpha) recursion over the alignment
//! lattice, in log space, written in tensor ops so that autograd yields the gradient.

use oxtorch_tensor::{DType, Error, Result, Tensor};

/// Stands in for `log 0` inside the recursion: finite, so that unreachable lattice states get zero
/// (not `NaN`) gradients; anything below `LOG_ZERO / 2` at the end is an impossible alignment.
const LOG_ZERO: f64 = -1e30;

/// torch's `ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
/// reduction="mean", zero_infinity=False)`.
///
/// `log_probs` is `[T, N, C]` (or `[T, C]` unbatched) log-softmax output; `targets` is `[N, S]`
/// padded or the 1-D concatenation of all targets; the lengths are int tensors `[N]` (0-d
/// unbatched). `"mean"` divides each loss by its target length, then averages over the batch.
/// Impossible alignments give `inf` (or `0` with a zero gradient when `zero_infinity`).
pub fn ctc_loss(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &Tensor,
    target_lengths: &Tensor,
    blank: usize,
    reduction: &str,
    zero_infinity: bool,
) -> Result<Tensor> {
    super::check_reduction(reduction)?;
    // Autocast runs the loss in f32, as torch does.
    let log_probs = &oxtorch_tensor::autocast::fp32(log_probs)?;
    if !matches!(log_probs.dtype(), DType::F32 | DType::F64) {
        return Err(Error::UnsupportedDType { op: "ctc_loss_cpu", dtype: log_probs.dtype() });
    }
    let unbatched = log_probs.rank() == 2;
    let (lp, targets) = if unbatched {
        (log_probs.unsqueeze(1)?, targets.unsqueeze(0)?)
    } else if log_probs.rank() == 3 {
        (log_probs.clone(), targets.clone())
    } else {
        return Err(Error::shape(format!(
            "ctc_loss: expected log_probs to be 2-D or 3-D, got {:?}",
            log_probs.dims()
        )));
    };
    let (t_max, n, c) = (lp.dims()[0], lp.dims()[1], lp.dims()[2]);
    if blank >= c {
        return Err(Error::msg("blank must be in label range"));
    }
    let input_lengths = lengths("input_lengths", input_lengths, n)?;
    let target_lengths = lengths("target_lengths", target_lengths, n)?;
    for &l in &input_lengths {
        if l > t_max {
            return Err(Error::msg(format!(
                "Expected input_lengths to have value at most {t_max}, but got value {l} (while checking arguments for ctc_loss_cpu)"
            )));
        }
    }
    let labels = padded_targets(&targets, &target_lengths, c)?;
    let s_max = target_lengths.iter().copied().max().unwrap_or(0);
    let width = 2 * s_max + 1;

    // Extended labels l' = (blank, l1, blank, l2, ..., blank) and where the skip s-2 → s is allowed.
    let mut ext = vec![blank as i64; n * width];
    let mut skip = vec![false; n * width];
    for b in 0..n {
        for s in 0..target_lengths[b] {
            ext[b * width + 2 * s + 1] = labels[b][s];
            skip[b * width + 2 * s + 1] = s > 0 && labels[b][s] != labels[b][s - 1];
        }
    }
    let device = lp.device();
    let ext = Tensor::from_vec(ext, [n, width])?.to(device)?;
    let skip = Tensor::from_vec(skip, [n, width])?.to(device)?;
    let lengths_t =
        Tensor::from_vec(input_lengths.iter().map(|&l| l as i64).collect::<Vec<_>>(), [n, 1])?.to(device)?;

    // Emissions e[t, b, s] = log_probs[t, b, l'_b(s)].
    let emit = lp.gather(2, &ext.unsqueeze(0)?.expand([t_max, n, width])?)?;
    let dt = lp.dtype();
    let neg = |cols: usize| Tensor::full([n, cols], LOG_ZERO, (dt, device));
    let start_mask = Tensor::arange(width as i64, (DType::I64, device))?.lt(2)?;
    let mut alpha =
        if t_max == 0 { neg(width)? } else { start_mask.where_self(&emit.select(0, 0)?, LOG_ZERO)? };
    for t in 1..t_max {
        let stay = alpha.clone();
        let step = Tensor::cat(&[&neg(1)?, &alpha.narrow(1, 0, width - 1)?], 1)?;
        let jump = if width > 2 {
            Tensor::cat(&[&neg(2)?, &alpha.narrow(1, 0, width - 2)?], 1)?
        } else {
            neg(width)?
        };
        let jump = skip.where_self(&jump, LOG_ZERO)?;
        let next = Tensor::stack(&[&stay, &step, &jump], -1)?
            .logsumexp(-1, false)?
            .add(&emit.select(0, t as isize)?)?;
        alpha = lengths_t.gt(t as i64)?.where_self(&next, &alpha)?;
    }
    // -log p(target) = -logsumexp(alpha[2L], alpha[2L - 1]) at each sample's last frame.
    let last: Vec<i64> = target_lengths.iter().map(|&l| 2 * l as i64).collect();
    let prev: Vec<i64> = target_lengths.iter().map(|&l| (2 * l as i64 - 1).max(0)).collect();
    let last = alpha.gather(1, &Tensor::from_vec(last, [n, 1])?.to(device)?)?;
    let prev = alpha.gather(1, &Tensor::from_vec(prev, [n, 1])?.to(device)?)?;
    let has_label =
        Tensor::from_vec(target_lengths.iter().map(|&l| l > 0).collect::<Vec<_>>(), [n, 1])?.to(device)?;
    let prev = has_label.where_self(&prev, LOG_ZERO)?;
    let ll = Tensor::cat(&[&last, &prev], 1)?.logsumexp(1, false)?;
    // No frames: the empty target has probability 1, any other none.
    let no_frames: Vec<bool> = input_lengths.iter().map(|&l| l == 0).collect();
    let empty_ok: Vec<bool> = (0..n).map(|b| no_frames[b] && target_lengths[b] == 0).collect();
    let no_frames = Tensor::from_vec(no_frames, [n])?.to(device)?;
    let empty_ok = Tensor::from_vec(empty_ok, [n])?.to(device)?;
    let impossible = ll.lt(LOG_ZERO / 2.0)?.logical_or(&no_frames)?.logical_and(&empty_ok.logical_not()?)?;
    let ll = empty_ok.where_self(0.0, &ll)?;
    let nll = ll.neg()?.add(&torch_gradient_term(&lp, &lengths_t)?)?;
    let mut loss = impossible.where_self(f64::INFINITY, &nll)?;
    if zero_infinity {
        loss = impossible.where_self(0.0, &loss)?;
    }
    let loss = match reduction {
        "mean" => {
            let tl =
                Tensor::from_vec(target_lengths.iter().map(|&l| l.max(1) as f64).collect::<Vec<_>>(), [n])?
                    .to(device)?
                    .to_dtype(dt)?;
            loss.div(&tl)?.mean_all()?
        }
        "sum" => loss.sum_all()?,
        _ if unbatched => loss.squeeze_dims(0)?,
        _ => loss,
    };
    Ok(loss)
}

/// Zero, with gradient `exp(log_probs)` over each sample's frames: torch's `ctc_loss` backward
/// returns the gradient with respect to the logits under a log-softmax (`exp(lp) - posterior`)
/// rather than with respect to `log_probs` (`-posterior`). The two agree once back-propagated
/// through `log_softmax`; this term makes the gradient at `log_probs` itself match torch's too.
fn torch_gradient_term(lp: &Tensor, lengths: &Tensor) -> Result<Tensor> {
    let (t_max, n) = (lp.dims()[0], lp.dims()[1]);
    let e = lp.exp()?;
    let zero = e.sub(e.detach())?;
    let frames = Tensor::arange(t_max as i64, (DType::I64, lp.device()))?.reshape([t_max as isize, 1, 1])?;
    let in_frame = frames.lt(&lengths.reshape([1, n as isize, 1])?)?;
    in_frame.where_self(&zero, 0.0)?.sum([0, 2], false)
}

/// Reads an integer lengths tensor (`[N]`, or 0-d for one sample) into sizes.
fn lengths(what: &str, t: &Tensor, n: usize) -> Result<Vec<usize>> {
    if t.dtype().is_float() || t.dtype() == DType::Bool {
        return Err(Error::msg(format!("ctc_loss: {what} must be an integer tensor")));
    }
    let v = t.to("cpu")?.to_dtype(DType::I64)?.reshape([-1])?.to_vec::<i64>()?;
    if v.len() != n {
        return Err(Error::shape(format!("{what} must be of size batch_size ({n}), got {}", v.len())));
    }
    v.into_iter()
        .map(|l| usize::try_from(l).map_err(|_| Error::msg(format!("ctc_loss: {what} must be non-negative"))))
        .collect()
}

/// Each sample's target labels, from padded `[N, S]` or concatenated 1-D targets.
fn padded_targets(targets: &Tensor, lengths: &[usize], c: usize) -> Result<Vec<Vec<i64>>> {
    let v = targets.to("cpu")?.to_dtype(DType::I64)?.contiguous()?.reshape([-1])?.to_vec::<i64>()?;
    let n = lengths.len();
    let rows: Vec<Vec<i64>> = if targets.rank() == 2 {
        let s = targets.dims()[1];
        if targets.dims()[0] != n {
            return Err(Error::shape(format!(
                "Expected tensor to have size at least {n} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                targets.dims()[0]
            )));
        }
        (0..n)
            .map(|b| {
                if lengths[b] > s {
                    return Err(Error::shape(format!(
                        "Expected tensor to have size at least {} at dimension 1, but got size {s} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                        lengths[b]
                    )));
                }
                Ok(v[b * s..b * s + lengths[b]].to_vec())
            })
            .collect::<Result<_>>()?
    } else if targets.rank() == 1 {
        let total: usize = lengths.iter().sum();
        if v.len() < total {
            return Err(Error::shape(format!(
                "ctc_loss: the concatenated targets have {} labels, the target lengths sum to {total}",
                v.len()
            )));
        }
        let mut off = 0;
        lengths
            .iter()
            .map(|&l| {
                off += l;
                v[off - l..off].to_vec()
            })
            .collect()
    } else {
        return Err(Error::shape(format!("ctc_loss: targets must be 1-D or 2-D, got {:?}", targets.dims())));
    };
    for &label in rows.iter().flatten() {
        if label < 0 || label as usize >= c {
            return Err(Error::msg(format!(
                "ctc_loss: target label {label} is not in the label range [0, {c})"
            )));
        }
    }
    Ok(rows)
}
