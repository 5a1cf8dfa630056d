//! Sort, topk, kthvalue, median and mode along one dim.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::rows::per_row;
use super::stl;
use crate::storage::CpuElement;
use crate::walk::PAR_MIN_CHUNK;
use oxtorch_core::Layout;

/// `a < b` with NaN the largest value (NaNs are equal to each other).
#[inline(always)]
pub(crate) fn lt_nan<T: CpuElement>(a: T, b: T) -> bool {
    (!a.is_nan_elem() && b.is_nan_elem()) || a < b
}

/// `a > b` with NaN the largest value (ATen's `gt_or_nan`).
#[inline(always)]
pub(crate) fn gt_nan<T: CpuElement>(a: T, b: T) -> bool {
    (a.is_nan_elem() && !b.is_nan_elem()) || a > b
}

/// A total order with NaN the largest value.
#[inline(always)]
pub(crate) fn cmp_nan<T: CpuElement>(a: T, b: T) -> Ordering {
    if lt_nan(a, b) {
        Ordering::Less
    } else if lt_nan(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

type Pair<T> = (T, i64);

fn pairs<T: Copy>(row: &[T]) -> Vec<Pair<T>> {
    row.iter().enumerate().map(|(i, &x)| (x, i as i64)).collect()
}

fn write<T: Copy>(src: &[Pair<T>], vals: &mut [T], idx: &mut [i64]) {
    for (j, &(x, i)) in src.iter().enumerate().take(vals.len()) {
        vals[j] = x;
        idx[j] = i;
    }
}

/// Stable sort of every row along `dim`.
pub(crate) fn sort<T: CpuElement>(v: &[T], l: &Layout, dim: usize, descending: bool) -> (Vec<T>, Vec<i64>) {
    let n = l.dims()[dim];
    per_row(v, l, dim, n, |row, vals, idx| {
        let mut p = pairs(row);
        let cmp = |a: &Pair<T>, b: &Pair<T>| {
            if descending {
                cmp_nan(b.0, a.0)
            } else {
                cmp_nan(a.0, b.0)
            }
        };
        if p.len() >= 2 * PAR_MIN_CHUNK {
            p.par_sort_by(cmp);
        } else {
            p.sort_by(cmp);
        }
        write(&p, vals, idx);
    })
}

/// torch's CPU topk: `std::partial_sort` when `k * 64 <= n`, else `std::nth_element` followed (when
/// `sorted`) by `std::sort` of the first `k - 1` elements.
pub(crate) fn topk<T: CpuElement>(
    v: &[T],
    l: &Layout,
    dim: usize,
    k: usize,
    largest: bool,
    sorted: bool,
) -> (Vec<T>, Vec<i64>) {
    let n = l.dims()[dim];
    per_row(v, l, dim, k, |row, vals, idx| {
        let mut q = pairs(row);
        let comp = |a: &Pair<T>, b: &Pair<T>| if largest { gt_nan(a.0, b.0) } else { lt_nan(a.0, b.0) };
        if k * 64 <= n {
            stl::partial_sort(&mut q, k, &comp);
        } else {
            stl::nth_element(&mut q, k - 1, &comp);
            if sorted {
                stl::sort(&mut q[..k - 1], &comp);
            }
        }
        write(&q[..k], vals, idx);
    })
}

/// The `k`-th smallest (1-based) of every row, by ATen's quickselect.
pub(crate) fn kthvalue<T: CpuElement>(v: &[T], l: &Layout, dim: usize, k: usize) -> (Vec<T>, Vec<i64>) {
    per_row(v, l, dim, 1, |row, vals, idx| {
        let mut q = pairs(row);
        stl::quick_select(&mut q, k - 1, &|a: &Pair<T>, b: &Pair<T>| gt_nan(a.0, b.0));
        write(&q[k - 1..k], vals, idx);
    })
}

/// The lower median of every row: the first NaN if there is one, else the element at position
/// `(n - 1) / 2` of a stable sort.
pub(crate) fn median<T: CpuElement>(v: &[T], l: &Layout, dim: usize) -> (Vec<T>, Vec<i64>) {
    per_row(v, l, dim, 1, |row, vals, idx| {
        if let Some(i) = row.iter().position(|x| x.is_nan_elem()) {
            vals[0] = row[i];
            idx[0] = i as i64;
            return;
        }
        let mut q = pairs(row);
        let mid = (q.len() - 1) / 2;
        q.select_nth_unstable_by(mid, |a, b| cmp_nan(a.0, b.0).then(a.1.cmp(&b.1)));
        write(&q[mid..=mid], vals, idx);
    })
}

/// torch's CPU nanmedian: `std::nth_element` over the row's indices to position
/// `(non_nan - 1) / 2` (C++ division, so 0 for an all-NaN row), NaN ordered last and equal values
/// by index.
pub(crate) fn nanmedian<T: CpuElement>(v: &[T], l: &Layout, dim: usize) -> (Vec<T>, Vec<i64>) {
    per_row(v, l, dim, 1, |row, vals, idx| {
        let non_nan = row.iter().filter(|x| !x.is_nan_elem()).count() as i64;
        let nth = ((non_nan - 1) / 2) as usize;
        let mut q = pairs(row);
        let comp = |a: &Pair<T>, b: &Pair<T>| {
            a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) || (b.0.is_nan_elem() && !a.0.is_nan_elem())
        };
        stl::nth_element(&mut q, nth, &comp);
        write(&q[nth..=nth], vals, idx);
    })
}

/// torch's CPU mode: `std::sort` by value, then the longest run of equal values (the first such run
/// wins) and the index of the run's last element.
pub(crate) fn mode<T: CpuElement>(v: &[T], l: &Layout, dim: usize) -> (Vec<T>, Vec<i64>) {
    per_row(v, l, dim, 1, |row, vals, idx| {
        let mut q = pairs(row);
        stl::sort(&mut q, &|a: &Pair<T>, b: &Pair<T>| a.0 < b.0);
        let (mut best, mut best_freq, mut freq) = (q[0], 0usize, 0usize);
        for i in 0..q.len() {
            freq += 1;
            if i == q.len() - 1 || q[i].0 != q[i + 1].0 {
                if freq > best_freq {
                    best = q[i];
                    best_freq = freq;
                }
                freq = 0;
            }
        }
        write(&[best], vals, idx);
    })
}
