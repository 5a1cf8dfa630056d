//! `unique` (sorted) and `unique_consecutive` of a flattened tensor.

use oxtorch_core::Layout;

use super::order::cmp_nan;
use super::rows::contiguous;
use crate::storage::CpuElement;
use crate::walk::PAR_MIN_CHUNK;
use rayon::prelude::*;

/// Distinct values, the inverse index of every input element and the count of every value. Sorted
/// ascending (a stable sort, NaN last and never equal to another NaN) unless `consecutive`.
pub(crate) fn unique<T: CpuElement>(v: &[T], l: &Layout, consecutive: bool) -> (Vec<T>, Vec<i64>, Vec<i64>) {
    let x = contiguous(v, l);
    let mut order: Vec<usize> = (0..x.len()).collect();
    if !consecutive {
        let cmp = |a: &usize, b: &usize| cmp_nan(x[*a], x[*b]);
        if x.len() >= 2 * PAR_MIN_CHUNK {
            order.par_sort_by(cmp);
        } else {
            order.sort_by(cmp);
        }
    }
    let (mut vals, mut counts) = (Vec::new(), Vec::new());
    let mut inverse = crate::pool::checked_vec(x.len(), 0i64);
    for (j, &i) in order.iter().enumerate() {
        if j == 0 || x[i] != x[order[j - 1]] {
            vals.push(x[i]);
            counts.push(0i64);
        }
        *counts.last_mut().expect("a group") += 1;
        inverse[i] = vals.len() as i64 - 1;
    }
    (vals, inverse, counts)
}
