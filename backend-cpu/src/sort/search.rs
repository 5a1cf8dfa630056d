//! `searchsorted`: positions of values in sorted rows.

use std::cmp::Ordering;

use oxtorch_core::Layout;

use super::rows::contiguous;
use crate::storage::CpuElement;
use crate::walk::par_collect;

/// torch's `cus_lower_bound` / `cus_upper_bound` over one sorted row.
#[inline]
fn bound<T: CpuElement>(row: &[T], val: T, right: bool) -> i64 {
    let (mut start, mut end) = (0usize, row.len());
    while start < end {
        let mid = start + ((end - start) >> 1);
        // `!(mid > val)` / `!(mid >= val)`: an unordered (NaN) comparison moves right.
        let ord = row[mid].partial_cmp(&val);
        let go_right = if right {
            ord != Some(Ordering::Greater)
        } else {
            !matches!(ord, Some(Ordering::Greater | Ordering::Equal))
        };
        if go_right {
            start = mid + 1;
        } else {
            end = mid;
        }
    }
    start as i64
}

/// The position of every value in its row of `seq`: the only row when `seq` is 1-D, else the row
/// with the same leading index as the value (the leading dims of both are equal).
pub(crate) fn searchsorted<T: CpuElement>(
    (sv, sl): (&[T], &Layout),
    (vv, vl): (&[T], &Layout),
    right: bool,
) -> Vec<i64> {
    let seq = contiguous(sv, sl);
    let vals = contiguous(vv, vl);
    let m = sl.dims().last().copied().unwrap_or(1);
    let per_row = if sl.rank() <= 1 { usize::MAX } else { vl.dims().last().copied().unwrap_or(1) };
    par_collect(vals.len(), |start, out| {
        for (k, o) in out.iter_mut().enumerate() {
            let i = start + k;
            let r = if per_row == usize::MAX { 0 } else { i / per_row.max(1) };
            let row = seq.get(r * m..(r + 1) * m).unwrap_or(&[]);
            o.write(bound(row, vals[i], right));
        }
    })
}
