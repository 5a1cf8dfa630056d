//! The row driver shared by the kernels that work along one dim: every row is gathered into a
//! contiguous buffer, handed to a closure that fills the row's outputs, and the outputs are laid out
//! contiguously with the dim in its place. Rows run in parallel on rayon's pool.

use oxtorch_core::Layout;
use rayon::prelude::*;

use crate::reduce::split_layout;
use crate::walk::{Plan, PAR_MIN_CHUNK};

/// Storage offsets of the first element of every row along `dim`, in row-major order of the other
/// dims, and the stride along `dim`.
fn row_offsets(l: &Layout, dim: usize) -> (Vec<usize>, usize) {
    let (kl, _) = split_layout(l, &[dim]);
    let plan = Plan::new([&kl]);
    let [ks] = plan.inner_strides();
    let mut offs = Vec::with_capacity(kl.numel());
    plan.for_runs(0, kl.numel(), |[o], len| offs.extend((0..len).map(|i| o + i * ks)));
    (offs, l.strides()[dim])
}

/// The elements of a layout as a contiguous vector (row-major).
pub(crate) fn contiguous<T: Copy + Send + Sync + 'static>(v: &[T], l: &Layout) -> Vec<T> {
    crate::walk::map1(v, l, |x| x)
}

/// Runs `f(row, out_a, out_b)` for every row of `(v, l)` along `dim`, where `row` is a contiguous copy
/// of the row and `out_a`, `out_b` are that row's `m` output slots. Returns both outputs laid out
/// contiguously with shape `l.dims()` but `m` at `dim`. `B = ()` gives a single-output kernel.
pub(crate) fn per_row<T, A, B>(
    v: &[T],
    l: &Layout,
    dim: usize,
    m: usize,
    f: impl Fn(&mut Vec<T>, &mut [A], &mut [B]) + Sync,
) -> (Vec<A>, Vec<B>)
where
    T: Copy + Send + Sync,
    A: Copy + Default + Send + Sync,
    B: Copy + Default + Send + Sync,
{
    let (a, b) = per_row_raw(v, l, dim, m, f);
    // Rows are stored [outer, inner, m]; the output wants [outer, m, inner].
    let inner: usize = l.dims()[dim + 1..].iter().product();
    if inner > 1 && m > 1 {
        (move_last_to(a, m, inner), move_last_to(b, m, inner))
    } else {
        (a, b)
    }
}

/// [`per_row`] without the final reordering: the outputs are `[rows, m]`, rows in row-major order of
/// the other dims.
pub(crate) fn per_row_raw<T, A, B>(
    v: &[T],
    l: &Layout,
    dim: usize,
    m: usize,
    f: impl Fn(&mut Vec<T>, &mut [A], &mut [B]) + Sync,
) -> (Vec<A>, Vec<B>)
where
    T: Copy + Send + Sync,
    A: Copy + Default + Send + Sync,
    B: Copy + Default + Send + Sync,
{
    let (offs, stride) = row_offsets(l, dim);
    let n = l.dims()[dim];
    let rows = offs.len();
    let mut a = crate::pool::checked_vec(rows * m, A::default());
    let mut b = crate::pool::checked_vec(rows * m, B::default());
    if m > 0 {
        let work = |(r, (oa, ob)): (usize, (&mut [A], &mut [B])), buf: &mut Vec<T>| {
            buf.clear();
            buf.extend((0..n).map(|j| v[offs[r] + j * stride]));
            f(buf, oa, ob);
        };
        let iter = a.chunks_mut(m).zip(b.chunks_mut(m)).enumerate();
        if rows > 1 && rows * n.max(m) >= PAR_MIN_CHUNK {
            let pairs: Vec<_> = iter.collect();
            pairs.into_par_iter().for_each_init(|| Vec::with_capacity(n), |buf, item| work(item, buf));
        } else {
            let mut buf = Vec::with_capacity(n);
            iter.for_each(|item| work(item, &mut buf));
        }
    }
    (a, b)
}

/// Reorders `[outer, inner, m]` into `[outer, m, inner]`.
pub(crate) fn move_last_to<A: Copy + Default + Send + Sync>(src: Vec<A>, m: usize, inner: usize) -> Vec<A> {
    let block = m * inner;
    let mut out = crate::pool::checked_vec(src.len(), A::default());
    let fill = |(dst, s): (&mut [A], &[A])| {
        for i in 0..inner {
            for j in 0..m {
                dst[j * inner + i] = s[i * m + j];
            }
        }
    };
    if block > 0 && src.len() >= PAR_MIN_CHUNK {
        out.par_chunks_mut(block).zip(src.par_chunks(block)).for_each(fill);
    } else if block > 0 {
        out.chunks_mut(block).zip(src.chunks(block)).for_each(fill);
    }
    out
}
