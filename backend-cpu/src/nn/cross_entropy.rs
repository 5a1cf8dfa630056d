//! Fused cross-entropy of logit rows against class indices ([`NnOp::CrossEntropy`] and its
//! gradient).
//!
//! The forward reads each row once (its maximum and exponential sum, as the log-softmax kernel
//! computes them, so the loss `-log_softmax(x)[t]` is that kernel's value bit for bit) and writes
//! one loss and two statistics per row. The backward reads each row once more and writes
//! `softmax(x) * g - onehot(t) * g` directly, where the composition wrote the log-probabilities, a
//! one-hot mask, a masked copy, and four more full-size tensors for the log-softmax gradient.
//!
//! [`NnOp::CrossEntropy`]: oxtorch_core::ops::NnOp::CrossEntropy

use std::mem::MaybeUninit;

use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};
use rayon::prelude::*;

use crate::float::{AccFloat, Float};
use crate::math::softmax::log_stats;
use crate::CpuStorage;

type Operand<'a> = (&'a CpuStorage, &'a Layout);

/// Rows per parallel task: at least ~32K elements each.
fn rows_per_task(c: usize) -> usize {
    ((1 << 15) / c.max(1)).max(1)
}

/// The `[N, C]` logits as a storage and a view of it whose rows the kernel reads in place (any
/// row stride, classes adjacent); other views are copied to a contiguous buffer first.
fn rows<'a, T: crate::storage::CpuElement>(
    s: &'a [T],
    l: &Layout,
    copy: &'a mut Vec<T>,
) -> Result<(&'a [T], Layout)> {
    if l.rank() != 2 {
        return Err(Error::shape(format!("cross_entropy expects [N, C] logits, got {}", l.shape())));
    }
    if l.dims()[1] <= 1 || l.strides()[1] == 1 {
        return Ok((s, l.clone()));
    }
    *copy = crate::walk::map1(s, l, |x: T| x);
    Ok((copy, Layout::contiguous(l.dims().to_vec())))
}

/// The targets as a contiguous i64 buffer.
fn targets(t: Operand, n: usize) -> Result<Vec<i64>> {
    let (s, l) = t;
    if l.numel() != n {
        return Err(Error::shape(format!("cross_entropy expects {n} targets, got {}", l.shape())));
    }
    let v = crate::copy::to_contiguous(s, l, DType::I64)?;
    Ok(v.as_slice::<i64>()?.to_vec())
}

/// The per-row losses `[N]` and statistics `[N, 2]` (max, log-sum) of `(logits, target)`.
pub fn forward(x: Operand, t: Operand, ignore_index: i64) -> Result<Vec<CpuStorage>> {
    match x.0 {
        CpuStorage::F32(v) => forward_t(v, x.1, t, ignore_index),
        CpuStorage::F64(v) => forward_t(v, x.1, t, ignore_index),
        other => Err(Error::UnsupportedDType { op: "cross_entropy", dtype: other.dtype() }),
    }
}

fn forward_t<T: Float + crate::storage::CpuElement>(
    v: &[T],
    l: &Layout,
    t: Operand,
    ignore_index: i64,
) -> Result<Vec<CpuStorage>> {
    let mut copy = Vec::new();
    let (x, view) = rows(v, l, &mut copy)?;
    let (n, c) = (l.dims()[0], l.dims()[1]);
    let t = targets(t, n)?;
    check_targets(&t, c, ignore_index)?;
    let mut loss = crate::pool::checked_vec(n, T::ZERO);
    let mut stats = crate::pool::checked_vec(2 * n, T::ZERO);
    T::cross_entropy_rows(x, &view, &t, ignore_index, &mut loss, &mut stats)?;
    Ok(vec![CpuStorage::from_vec(loss), CpuStorage::from_vec(stats)])
}

/// The cross-entropy forward on plain slices, for kernels outside this backend (the XLA backend's
/// host kernels), for every float type of the backend.
pub trait CrossEntropyRows: Sized {
    /// `view`: the logits in `x`, `[..., C]` with the classes adjacent (stride 1), one row per
    /// target (the leading dims' product is `t.len()`, rows in row-major order, so a narrowed
    /// `[B, T - 1, C]` view of a language model's logits is read in place); `t`: the targets.
    /// Writes `loss` (`N`: `-log_softmax(x)[t]`) and `stats` (`[N, 2]`: each row's maximum and
    /// log of its shifted exponentials' sum), the values of
    /// [`NnOp::CrossEntropy`](oxtorch_core::ops::NnOp::CrossEntropy) bit for bit. A row whose
    /// target is `ignore_index` or outside `[0, C)` gets loss 0, with no error: the caller checks
    /// its targets (the tensor layer does), and the rows that bounded dynamism pads a batch with
    /// hold whatever targets the padding computed. Fails on a view that leaves `x` or does not
    /// match the targets, and on mismatched lengths.
    fn cross_entropy_rows(
        x: &[Self],
        view: &Layout,
        t: &[i64],
        ignore_index: i64,
        loss: &mut [Self],
        stats: &mut [Self],
    ) -> Result<()>;
}

/// Where row `r` of `view` (`[..., C]`, rows in row-major order of the leading dims) starts.
fn row_start(view: &Layout, mut r: usize) -> usize {
    let lead = view.rank() - 1;
    let mut at = view.offset();
    for d in (0..lead).rev() {
        let n = view.dims()[d];
        at += (r % n) * view.strides()[d];
        r /= n;
    }
    at
}

/// Checks that `view` holds `n` rows of adjacent classes inside `len` elements; returns `C`.
fn check_rows(view: &Layout, len: usize, n: usize) -> Result<usize> {
    let c = view.dims().last().copied().unwrap_or(0);
    let lead = &view.dims()[..view.rank().saturating_sub(1)];
    let rows = lead.iter().try_fold(1usize, |p, &d| p.checked_mul(d));
    let numel = rows.and_then(|r| r.checked_mul(c));
    let adjacent = c <= 1 || view.strides().last() == Some(&1);
    let inside = numel == Some(0) || view.checked_storage_extent().is_some_and(|e| e <= len);
    if view.rank() < 1 || rows != Some(n) || numel.is_none() || !adjacent || !inside {
        return Err(Error::shape(format!(
            "cross_entropy: logits {view:?} in {len} elements for {n} targets (expected [..., C] rows of \
             adjacent classes, one per target)"
        )));
    }
    Ok(c)
}

impl<T: Float> CrossEntropyRows for T {
    fn cross_entropy_rows(
        x: &[T],
        view: &Layout,
        t: &[i64],
        ignore_index: i64,
        loss: &mut [T],
        stats: &mut [T],
    ) -> Result<()> {
        let n = t.len();
        let c = check_rows(view, x.len(), n)?;
        if loss.len() != n || stats.len() != 2 * n {
            return Err(Error::shape(format!(
                "cross_entropy: {n} rows, {} losses and {} statistics",
                loss.len(),
                stats.len()
            )));
        }
        if c == 0 || n == 0 {
            loss.fill(T::ZERO);
            stats.fill(T::ZERO);
            return Ok(());
        }
        let per = rows_per_task(c);
        loss.par_chunks_mut(per)
            .zip(stats.par_chunks_mut(2 * per))
            .zip(t.par_chunks(per))
            .enumerate()
            .for_each_init(Vec::new, |scratch, (task, ((loss, stats), t))| {
                let rows = t.iter().zip(loss.iter_mut()).zip(stats.chunks_exact_mut(2));
                for (i, ((&ti, li), st)) in rows.enumerate() {
                    let at = row_start(view, task * per + i);
                    let row = &x[at..at + c];
                    let (max, log_sum) = log_stats(row, scratch);
                    st[0] = T::from_acc(max);
                    st[1] = T::from_acc(log_sum);
                    *li = match usize::try_from(ti) {
                        Ok(k) if ti != ignore_index && k < c => {
                            let logp = T::from_acc((row[k].to_acc() - max) - log_sum);
                            T::from_acc(-logp.to_acc())
                        }
                        _ => T::ZERO,
                    };
                }
            });
        Ok(())
    }
}

/// Refuses a target outside `[0, C)` that is not `ignore_index` (the tensor layer checks first,
/// with torch's message; this keeps the kernel's indexing in bounds for any caller).
fn check_targets(t: &[i64], c: usize, ignore_index: i64) -> Result<()> {
    match t.iter().find(|&&ti| ti != ignore_index && (ti < 0 || ti as usize >= c)) {
        Some(bad) => Err(Error::msg(format!("Target {bad} is out of bounds."))),
        None => Ok(()),
    }
}

/// `(softmax(x) - onehot(t)) * g` for `(logits, target, stats, grad)`; an ignored row is
/// `softmax(x) * 0` (zero, NaN where the softmax is NaN, as torch's composition gives).
pub fn backward(x: Operand, t: Operand, stats: Operand, g: Operand, ignore_index: i64) -> Result<CpuStorage> {
    match (x.0, stats.0, g.0) {
        (CpuStorage::F32(v), CpuStorage::F32(s), CpuStorage::F32(gv)) => {
            backward_t(v, x.1, t, (s, stats.1), (gv, g.1), ignore_index)
        }
        (CpuStorage::F64(v), CpuStorage::F64(s), CpuStorage::F64(gv)) => {
            backward_t(v, x.1, t, (s, stats.1), (gv, g.1), ignore_index)
        }
        (x, s, g) if x.dtype() != s.dtype() || x.dtype() != g.dtype() => Err(Error::msg(format!(
            "cross_entropy_backward: expected one dtype, got {}, {} and {}",
            x.dtype().name(),
            s.dtype().name(),
            g.dtype().name()
        ))),
        (other, _, _) => Err(Error::UnsupportedDType { op: "cross_entropy_backward", dtype: other.dtype() }),
    }
}

fn backward_t<T: Float + crate::storage::CpuElement>(
    v: &[T],
    l: &Layout,
    t: Operand,
    (s, ls): (&[T], &Layout),
    (gv, lg): (&[T], &Layout),
    ignore_index: i64,
) -> Result<CpuStorage> {
    let mut copy = Vec::new();
    let (x, view) = rows(v, l, &mut copy)?;
    let (n, c) = (l.dims()[0], l.dims()[1]);
    let t = targets(t, n)?;
    check_targets(&t, c, ignore_index)?;
    if ls.numel() != 2 * n || lg.numel() != n {
        return Err(Error::shape(format!(
            "cross_entropy_backward: expected stats [{n}, 2] and grad [{n}], got {} and {}",
            ls.shape(),
            lg.shape()
        )));
    }
    let stats = crate::walk::map1(s, ls, |x: T| x);
    let g = crate::walk::map1(gv, lg, |x: T| x);
    let len = n * c;
    let mut out = crate::pool::take::<T>(len);
    if len > 0 {
        let per = rows_per_task(c);
        out.spare_capacity_mut()[..len]
            .par_chunks_mut(per * c)
            .zip(t.par_chunks(per).zip(stats.par_chunks(2 * per)).zip(g.par_chunks(per)))
            .enumerate()
            .for_each(|(task, (o, ((t, st), g)))| {
                let rows = o.chunks_exact_mut(c).zip(t).zip(st.chunks_exact(2)).zip(g);
                for (i, (((o, &ti), st), &gi)) in rows.enumerate() {
                    let at = row_start(&view, task * per + i);
                    backward_row(&x[at..at + c], o, ti, (st[0], st[1]), gi, ignore_index);
                }
            });
    }
    // SAFETY: every row of the output was written by `backward_row`; `T: Copy` needs no drop.
    unsafe { out.set_len(len) };
    Ok(CpuStorage::from_vec(out))
}

/// One row of the gradient. With `p = -g` the gradient of the picked log-probability, the
/// log-softmax gradient is `onehot * p - e^logp * p`, i.e. `e^logp * g` off the target and
/// `e^logp * g - g` on it (the same roundings as the composition, with the vectorised `exp`).
fn backward_row<T: Float>(
    x: &[T],
    out: &mut [MaybeUninit<T>],
    t: i64,
    (max, log_sum): (T, T),
    g: T,
    ignore_index: i64,
) {
    let (max, log_sum, g) = (max.to_acc(), log_sum.to_acc(), g.to_acc());
    if t == ignore_index {
        // torch's log-softmax gradient of a zero row, `0 - softmax(x) · 0`: zero, or NaN where
        // the row's softmax is NaN (a NaN or +inf logit).
        crate::simd::map1(x, out, move |v: T| {
            let logp = T::from_acc((v.to_acc() - max) - log_sum);
            T::from_acc(logp.to_acc().exp_fast() * T::Acc::from_f64(0.0))
        });
        return;
    }
    crate::simd::map1(x, out, move |v: T| {
        let logp = T::from_acc((v.to_acc() - max) - log_sum);
        T::from_acc(logp.to_acc().exp_fast() * g)
    });
    let t = t as usize;
    let logp = T::from_acc((x[t].to_acc() - max) - log_sum);
    out[t] = MaybeUninit::new(T::from_acc(logp.to_acc().exp_fast() * g - g));
}

#[cfg(test)]
mod tests {
    use oxtorch_core::Layout;

    use super::CrossEntropyRows;

    /// On slices, a target outside the classes (a padded row's) gives loss 0 and no error, like an
    /// ignored one; the statistics are still the row's, and the other rows' losses are exact.
    #[test]
    fn slice_rows_give_zero_for_targets_outside_the_classes() {
        let x = [1.0f32, 2.0, 3.0, 0.0, 0.0, 0.0, 5.0, -1.0, 2.0, 1.0, 1.0, 1.0];
        let t = [2i64, -100, 7, -3];
        let (mut loss, mut stats) = ([9.0f32; 4], [9.0f32; 8]);
        let rows = Layout::contiguous(vec![4, 3]);
        f32::cross_entropy_rows(&x, &rows, &t, -100, &mut loss, &mut stats).unwrap();
        let lse = |r: &[f32]| r.iter().map(|v| v.exp()).sum::<f32>().ln();
        assert!((loss[0] - (lse(&x[..3]) - 3.0)).abs() < 1e-6, "{loss:?}");
        assert_eq!(&loss[1..], &[0.0, 0.0, 0.0]);
        assert_eq!(stats[4], 5.0, "row 2's maximum");
        assert!(f32::cross_entropy_rows(&x, &rows, &t[..3], -100, &mut loss, &mut stats).is_err());
    }

    /// Rows of a strided view (a narrowed `[B, T - 1, C]` slice of `[B, T, C]` logits) are read
    /// in place, in row-major order of the leading dims, with the values of the dense rows; views
    /// that leave the slice, or whose classes are not adjacent, are refused.
    #[test]
    fn slice_rows_read_a_narrowed_view_in_place() {
        let x: Vec<f32> = (0..2 * 3 * 4).map(|i| ((i * 7) % 11) as f32 * 0.25).collect();
        let narrowed = Layout::new(vec![2, 2, 4], vec![12, 4, 1], 0).unwrap(); // x[:, :2, :]
        let t = [1i64, 3, 0, 2];
        let (mut loss, mut stats) = ([0.0f32; 4], [0.0f32; 8]);
        f32::cross_entropy_rows(&x, &narrowed, &t, -100, &mut loss, &mut stats).unwrap();
        let dense: Vec<f32> = [0, 4, 12, 16].iter().flat_map(|&s| x[s..s + 4].to_vec()).collect();
        let (mut want, mut want_stats) = ([0.0f32; 4], [0.0f32; 8]);
        let rows = Layout::contiguous(vec![4, 4]);
        f32::cross_entropy_rows(&dense, &rows, &t, -100, &mut want, &mut want_stats).unwrap();
        assert_eq!((loss, stats), (want, want_stats));
        let outside = Layout::new(vec![2, 2, 4], vec![12, 4, 1], 9).unwrap();
        assert!(f32::cross_entropy_rows(&x, &outside, &t, -100, &mut loss, &mut stats).is_err());
        let strided = Layout::new(vec![4, 2], vec![2, 8], 0).unwrap();
        assert!(f32::cross_entropy_rows(&x, &strided, &t, -100, &mut loss, &mut stats).is_err());
    }
}
