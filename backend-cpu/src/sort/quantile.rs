//! Quantiles along one dim with torch's interpolation rules.

use oxtorch_core::Layout;

use super::order::cmp_nan;
use super::rows::{contiguous, move_last_to, per_row_raw};
use crate::float::{AccFloat, Float};

/// torch's CPU `lerp`: `a + w (b - a)`, computed from the nearer end with a fused multiply-add
/// (as its kernels are compiled).
#[inline(always)]
fn lerp<A: AccFloat>(a: A, b: A, w: A) -> A {
    let half = A::ONE / (A::ONE + A::ONE);
    if w.abs() < half {
        w.mul_add(b - a, a)
    } else {
        (-(b - a)).mul_add(A::ONE - w, b)
    }
}

/// The quantiles `q` (each in `[0, 1]`) of every row of `(v, l)` along `dim`; the output is
/// `[q.len(), rows...]` (the shape of the input with `dim` = 1, after a leading `q` dim). A row
/// holding NaN gives NaN.
pub(crate) fn quantile<T: Float>(
    v: &[T],
    l: &Layout,
    dim: usize,
    (qv, ql): (&[T], &Layout),
    interpolation: &str,
) -> Vec<T> {
    let q: Vec<f64> = contiguous(qv, ql).into_iter().map(T::to_f64).collect();
    let nq = q.len();
    let (out, _) = per_row_raw(v, l, dim, nq, |row, out, _: &mut [()]| {
        if let Some(&nan) = row.iter().find(|x| x.is_nan_elem()) {
            out.fill(nan);
            return;
        }
        row.sort_unstable_by(|a, b| cmp_nan(*a, *b));
        let last = row.len() - 1;
        // Ranks exact (in f64: torch's rank arithmetic carries more than float32), the
        // interpolation weight rounded to the computation type.
        let at = |r: f64| -> T::Acc {
            let i = if r.is_nan() || r < 0.0 { 0 } else { (r as usize).min(last) };
            row[i].to_acc()
        };
        for (o, &p) in out.iter_mut().zip(&q) {
            let rank = if std::mem::size_of::<T>() == 2 {
                // Half precision (not torch's: its quantile refuses it): the rank in f32, rounded
                // to the type, as the XLA lowering computes it.
                let product = T::Acc::from_f64_acc(p) * T::Acc::from_f64_acc(last as f64);
                T::from_acc(product).to_f64()
            } else {
                p * last as f64
            };
            let r = match interpolation {
                "lower" => at(rank.floor()),
                "higher" => at(rank.ceil()),
                "nearest" => at(rank.round_ties_even()),
                "midpoint" => {
                    let half = T::Acc::ONE / (T::Acc::ONE + T::Acc::ONE);
                    lerp(at(rank.floor()), at(rank.ceil()), half)
                }
                _ => {
                    let below = rank.floor();
                    lerp(at(below), at(rank.ceil()), T::Acc::from_f64_acc(rank - below))
                }
            };
            *o = T::from_acc(r);
        }
    });
    let rows = out.len() / nq.max(1);
    if nq > 1 && rows > 1 {
        move_last_to(out, nq, rows)
    } else {
        out
    }
}
