//! Exact ports of the selection and sorting algorithms torch's CPU kernels call, so that the order of
//! equal elements (and hence the returned indices) matches torch's:
//!
//! * [`sort`], [`nth_element`] and [`partial_sort`] follow GNU libstdc++'s `std::sort` (introsort),
//!   `std::nth_element` (introselect) and `std::partial_sort` (heap select + heap sort);
//! * [`quick_select`] follows ATen's `quick_select_template` (used by `kthvalue`).
//!
//! `comp(a, b)` is the "less" predicate. Where the C++ code relies on a sentinel (unguarded loops),
//! the ports add bounds checks that never trigger for a strict weak order, so that an inconsistent
//! predicate cannot index out of bounds.

const THRESHOLD: usize = 16;

/// `floor(log2(n))` for `n >= 1`.
fn lg(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// libstdc++'s `std::sort`.
pub(crate) fn sort<E: Copy>(v: &mut [E], comp: &impl Fn(&E, &E) -> bool) {
    if v.len() > 1 {
        introsort_loop(v, 0, v.len(), 2 * lg(v.len()), comp);
        final_insertion_sort(v, comp);
    }
}

/// libstdc++'s `std::nth_element`: `v[nth]` becomes the element a sort would put there.
pub(crate) fn nth_element<E: Copy>(v: &mut [E], nth: usize, comp: &impl Fn(&E, &E) -> bool) {
    if v.is_empty() || nth >= v.len() {
        return;
    }
    let (mut first, mut last) = (0, v.len());
    let mut depth = 2 * lg(v.len());
    while last - first > 3 {
        if depth == 0 {
            heap_select(&mut v[first..last], nth + 1 - first, comp);
            v.swap(first, nth);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, comp);
        if cut <= nth {
            first = cut;
        } else {
            last = cut;
        }
    }
    insertion_sort(&mut v[first..last], comp);
}

/// libstdc++'s `std::partial_sort`: the first `middle` elements become the smallest, sorted.
pub(crate) fn partial_sort<E: Copy>(v: &mut [E], middle: usize, comp: &impl Fn(&E, &E) -> bool) {
    heap_select(v, middle, comp);
    sort_heap(&mut v[..middle], comp);
}

fn introsort_loop<E: Copy>(
    v: &mut [E],
    first: usize,
    mut last: usize,
    mut depth: usize,
    comp: &impl Fn(&E, &E) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            partial_sort(&mut v[first..last], last - first, comp);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, comp);
        introsort_loop(v, cut, last, depth, comp);
        last = cut;
    }
}

fn partition_pivot<E: Copy>(v: &mut [E], first: usize, last: usize, comp: &impl Fn(&E, &E) -> bool) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, comp);
    unguarded_partition(v, first + 1, last, first, comp)
}

fn move_median_to_first<E: Copy>(
    v: &mut [E],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    comp: &impl Fn(&E, &E) -> bool,
) {
    let pick = if comp(&v[a], &v[b]) {
        if comp(&v[b], &v[c]) {
            b
        } else if comp(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if comp(&v[a], &v[c]) {
        a
    } else if comp(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<E: Copy>(
    v: &mut [E],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    comp: &impl Fn(&E, &E) -> bool,
) -> usize {
    loop {
        while first < v.len() - 1 && comp(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while last > 0 && comp(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<E: Copy>(v: &mut [E], comp: &impl Fn(&E, &E) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], comp);
        for i in THRESHOLD..v.len() {
            linear_insert(v, i, comp);
        }
    } else {
        insertion_sort(v, comp);
    }
}

fn insertion_sort<E: Copy>(v: &mut [E], comp: &impl Fn(&E, &E) -> bool) {
    for i in 1..v.len() {
        if comp(&v[i], &v[0]) {
            let val = v[i];
            v.copy_within(0..i, 1);
            v[0] = val;
        } else {
            linear_insert(v, i, comp);
        }
    }
}

/// `__unguarded_linear_insert`, with a bound at the front.
fn linear_insert<E: Copy>(v: &mut [E], mut last: usize, comp: &impl Fn(&E, &E) -> bool) {
    let val = v[last];
    while last > 0 && comp(&val, &v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = val;
}

fn heap_select<E: Copy>(v: &mut [E], middle: usize, comp: &impl Fn(&E, &E) -> bool) {
    if middle == 0 {
        return;
    }
    make_heap(&mut v[..middle], comp);
    for i in middle..v.len() {
        if comp(&v[i], &v[0]) {
            // __pop_heap(first, middle, i)
            let value = v[i];
            v[i] = v[0];
            adjust_heap(&mut v[..middle], 0, value, comp);
        }
    }
}

fn make_heap<E: Copy>(v: &mut [E], comp: &impl Fn(&E, &E) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[parent];
        adjust_heap(v, parent, value, comp);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

fn sort_heap<E: Copy>(v: &mut [E], comp: &impl Fn(&E, &E) -> bool) {
    let mut last = v.len();
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, value, comp);
    }
}

fn adjust_heap<E: Copy>(v: &mut [E], mut hole: usize, value: E, comp: &impl Fn(&E, &E) -> bool) {
    let len = v.len();
    let top = hole;
    let mut second = hole;
    while len >= 1 && second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if comp(&v[second], &v[second - 1]) {
            second -= 1;
        }
        v[hole] = v[second];
        hole = second;
    }
    if len >= 2 && len.is_multiple_of(2) && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[hole] = v[second - 1];
        hole = second - 1;
    }
    // __push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !comp(&v[parent], &value) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = value;
}

/// ATen's `quick_select_template`: partially orders `v` so that `v[k]` is the element of rank `k`
/// under `gt` (a "greater, or NaN" predicate).
pub(crate) fn quick_select<E: Copy>(v: &mut [E], k: usize, gt: &impl Fn(&E, &E) -> bool) {
    if v.is_empty() {
        return;
    }
    let (mut l, mut r) = (0usize, v.len() - 1);
    loop {
        if r <= l {
            return;
        }
        if r == l + 1 {
            if gt(&v[l], &v[r]) {
                v.swap(l, r);
            }
            return;
        }
        let p = l + (r - l) / 2;
        v.swap(p, l + 1);
        if gt(&v[l + 1], &v[r]) {
            v.swap(l + 1, r);
        }
        if gt(&v[l], &v[r]) {
            v.swap(l, r);
        }
        if gt(&v[l + 1], &v[l]) {
            v.swap(l + 1, l);
        }
        let (mut i, mut j) = (l + 1, r);
        let piv = v[l];
        loop {
            i += 1;
            while i < r && gt(&piv, &v[i]) {
                i += 1;
            }
            j -= 1;
            while j > l && gt(&v[j], &piv) {
                j -= 1;
            }
            if j < i {
                break;
            }
            v.swap(i, j);
        }
        v.swap(l, j);
        if j <= k {
            l = i;
        }
        if j >= k {
            if j == 0 {
                return;
            }
            r = j - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator of tie-heavy rows.
    fn rows() -> impl Iterator<Item = Vec<(i32, usize)>> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        (0..300).map(move |r| {
            let n = r % 70;
            (0..n)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    ((state % 7) as i32, i)
                })
                .collect()
        })
    }

    fn less(a: &(i32, usize), b: &(i32, usize)) -> bool {
        a.0 < b.0
    }

    #[test]
    fn sort_orders_and_keeps_elements() {
        for mut v in rows() {
            let mut want: Vec<i32> = v.iter().map(|e| e.0).collect();
            want.sort();
            sort(&mut v, &less);
            assert_eq!(v.iter().map(|e| e.0).collect::<Vec<_>>(), want);
        }
    }

    #[test]
    fn partial_sort_gives_the_smallest_sorted() {
        for mut v in rows() {
            let mut want: Vec<i32> = v.iter().map(|e| e.0).collect();
            want.sort();
            let k = v.len() / 3;
            partial_sort(&mut v, k, &less);
            assert_eq!(v[..k].iter().map(|e| e.0).collect::<Vec<_>>(), want[..k]);
        }
    }

    #[test]
    fn selections_put_the_right_rank_in_place() {
        for v in rows().filter(|v| !v.is_empty()) {
            let mut want: Vec<i32> = v.iter().map(|e| e.0).collect();
            want.sort();
            for k in [0, v.len() / 2, v.len() - 1] {
                let mut a = v.clone();
                nth_element(&mut a, k, &less);
                assert_eq!(a[k].0, want[k]);
                assert!(a[..k].iter().all(|e| e.0 <= want[k]) && a[k..].iter().all(|e| e.0 >= want[k]));
                let mut b = v.clone();
                quick_select(&mut b, k, &|x: &(i32, usize), y: &(i32, usize)| x.0 > y.0);
                assert_eq!(b[k].0, want[k]);
            }
        }
    }
}
