//! Skinny products without packing: `m` ≤ [`SKINNY_MAX_M`] rows of A times B, where A's rows and B's
//! columns are both contiguous along k: `linear` at batch 1 or over a short prompt (a few rows times a
//! transposed `[out, in]` weight) and attention scores (queries times transposed keys).
//!
//! Such products are bound by streaming B (the weight) from memory once; the packing gemm would first
//! copy all of it. Each output is one dot product; a kernel computes a block of `m` rows × a range of
//! columns at a time (reusing each loaded stretch of B for all rows), and this driver splits the
//! columns of every batch into contiguous ranges run on rayon's pool. The element kernels live in
//! [`crate::gemv_f32`] and [`crate::gemv_bf16`].

use std::mem::MaybeUninit;

/// Products with at most this many rows of A take the skinny path.
pub const SKINNY_MAX_M: usize = 16;

/// Below this many multiply-adds a product runs on the calling thread (waking the pool costs more).
const SERIAL_MACS: usize = 1 << 16;
/// Each parallel task gets at least this many multiply-adds.
const MIN_TASK_MACS: usize = 1 << 15;
/// At most this many tasks per thread (a few, so that a thread slowed by other work is helped).
const TASKS_PER_THREAD: usize = 4;

/// A batch of products `c[i] = a[i] · b[i]`, `m × k` times `k × n`: row `r` of batch `i` of A is
/// `a[a_offs[i] + r * ars..][..k]`, column `j` of B is `b[b_offs[i] + j * bcs..][..k]`.
pub struct Skinny<'a, T> {
    /// A's storage
    pub a: &'a [T],
    /// offset of each batch's A
    pub a_offs: &'a [usize],
    /// A's row stride
    pub ars: usize,
    /// B's storage
    pub b: &'a [T],
    /// offset of each batch's B (as many as `a_offs`)
    pub b_offs: &'a [usize],
    /// B's column stride
    pub bcs: usize,
    /// rows of A
    pub m: usize,
    /// columns of B
    pub n: usize,
    /// the shared dim
    pub k: usize,
}

/// An output element: f32 accumulators are stored as `Self`.
pub trait FromF32: Copy + Send + 'static {
    /// `x` as `Self` (rounded to nearest, ties to even).
    fn from_f32(x: f32) -> Self;
}

impl FromF32 for f32 {
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        x
    }
}

impl FromF32 for half::bf16 {
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        oxtorch_core::half_convert::f32_to_bf16(x)
    }
}

impl FromF32 for half::f16 {
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        oxtorch_core::half_convert::f32_to_f16(x)
    }
}

/// A block kernel: `out[r * ldo + j] = Σ_p a[r * ars + p] · b[j * bcs + p]` for `r < m`, `j < n`.
///
/// # Safety
/// Every element those indices name, with `p < k`, must lie inside its allocation, and no other
/// thread may access the written outputs.
pub type Block<T, O> = unsafe fn(
    a: *const T,
    ars: usize,
    m: usize,
    b: *const T,
    bcs: usize,
    n: usize,
    k: usize,
    out: *mut O,
    ldo: usize,
);

/// How far ahead of the column it multiplies a one-row product fetches the weight into L1.
///
/// A batch-1 `linear` streams its weight once, column after column, and the hardware prefetchers
/// alone keep too few lines in flight: a loop over 100 bf16 `[2048, 768]` weights (150 MB, more
/// than L2) read 23 GB/s without this and 33–35 GB/s with it on the AMX host (2 threads, 3–12 KiB
/// ahead alike, 30 KiB less).
#[cfg(target_arch = "x86_64")]
const PREFETCH_BYTES: usize = 12 * 1024;

/// For a one-row product over columns `bcs` elements of `T` apart: how many columns ahead
/// [`prefetch_column`] fetches (at least one).
#[cfg(target_arch = "x86_64")]
pub(crate) fn prefetch_columns_ahead<T>(bcs: usize) -> usize {
    PREFETCH_BYTES.div_ceil(bcs.max(1).saturating_mul(std::mem::size_of::<T>())).max(1)
}

/// Asks for the first `k` elements of the column at `col` (at most [`PREFETCH_BYTES`]) in L1, every
/// cache line they touch. A hint: it never faults and makes no architectural read. Skipped where
/// columns overlap (`bcs < k`): the tiles then read lines already fetched.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch_column<T>(col: *const T, k: usize, bcs: usize) {
    if bcs < k {
        return;
    }
    let bytes = (k * std::mem::size_of::<T>()).min(PREFETCH_BYTES);
    let (first, end) = (col as usize & !63, col as usize + bytes);
    let mut line = col.cast::<i8>().wrapping_sub(col as usize - first);
    let mut at = first;
    while at < end {
        // SAFETY: a prefetch never faults; the address is only computed (`wrapping_add`).
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line) };
        line = line.wrapping_add(64);
        at += 64;
    }
}

/// A pointer to the output that tasks write disjoint parts of.
struct OutPtr<O>(*mut O);
// Not derived: those would require `O: Copy`.
impl<O> Clone for OutPtr<O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O> Copy for OutPtr<O> {}
// SAFETY: tasks write disjoint elements (distinct batches or column ranges) and the buffer outlives them.
unsafe impl<O> Send for OutPtr<O> {}
// SAFETY: as above.
unsafe impl<O> Sync for OutPtr<O> {}

impl<O> OutPtr<O> {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    fn get(self) -> *mut O {
        self.0
    }
}

/// Runs `block` over every batch, returning the row-major `[batches, m, n]` result.
///
/// Panics when an operand reaches outside its storage (callers validate layouts first).
pub fn run<T: Sync, O: Send + 'static>(p: &Skinny<T>, block: Block<T, O>) -> Vec<O> {
    let total = p.a_offs.len() * p.m * p.n;
    let mut out: Vec<O> = crate::pool::take(total);
    run_into(p, block, &mut out.spare_capacity_mut()[..total]);
    // SAFETY: `run_into` wrote every element of every batch.
    unsafe { out.set_len(total) };
    out
}

/// [`run`] into `out`, which holds exactly the row-major `[batches, m, n]` result and is written
/// entirely.
///
/// Panics when an operand reaches outside its storage or `out` has another length.
pub fn run_into<T: Sync, O: Send>(p: &Skinny<T>, block: Block<T, O>, out: &mut [MaybeUninit<O>]) {
    let (m, n, k) = (p.m, p.n, p.k);
    let batches = p.a_offs.len();
    assert_eq!(p.b_offs.len(), batches);
    assert!(m > 0 && n > 0 && k > 0);
    let reach = |offs: &[usize], count: usize, stride: usize, len: usize| {
        offs.iter().all(|&o| {
            let end =
                (count - 1).checked_mul(stride).and_then(|e| e.checked_add(o)).and_then(|e| e.checked_add(k));
            end.is_some_and(|e| e <= len)
        })
    };
    assert!(reach(p.a_offs, m, p.ars, p.a.len()) && reach(p.b_offs, n, p.bcs, p.b.len()));
    let total = batches * m * n;
    assert_eq!(out.len(), total, "a product of {total} elements into {} outputs", out.len());
    let dst = OutPtr(out.as_mut_ptr().cast::<O>());
    // A task: batch `i`, columns `j0..j1`.
    let task = |i: usize, j0: usize, j1: usize| {
        // SAFETY: the bounds were checked above; the task writes rows `0..m`, columns `j0..j1` of batch
        // `i` only, inside the `total` elements reserved.
        unsafe {
            block(
                p.a.as_ptr().add(p.a_offs[i]),
                p.ars,
                m,
                p.b.as_ptr().add(p.b_offs[i] + j0 * p.bcs),
                p.bcs,
                j1 - j0,
                k,
                dst.get().add(i * m * n + j0),
                n,
            )
        }
    };
    let macs = total * k;
    let threads = rayon::current_num_threads();
    if macs < SERIAL_MACS || threads == 1 {
        (0..batches).for_each(|i| task(i, 0, n));
    } else {
        // Equal contiguous column ranges, a multiple of 4 columns each (the kernels' column tile).
        let tasks = (macs / MIN_TASK_MACS).clamp(1, threads * TASKS_PER_THREAD);
        let per_batch = tasks.div_ceil(batches).min(n.div_ceil(4));
        let width = n.div_ceil(per_batch).next_multiple_of(4);
        let ranges = n.div_ceil(width);
        crate::par::for_each_task(batches * ranges, &|t| {
            let (i, r) = (t / ranges, t % ranges);
            task(i, r * width, n.min((r + 1) * width));
        });
    }
}

/// `(batches, m, k, n)` shapes every block kernel is tested on: single rows and tiles, k and n
/// around the vector widths, many batches, long k.
#[cfg(test)]
pub const KERNEL_TEST_CASES: [(usize, usize, usize, usize); 12] = [
    (1, 1, 1, 1),
    (1, 1, 7, 3),
    (1, 1, 64, 130),
    (1, 1, 200, 33),
    (2, 3, 17, 9),
    (1, 4, 96, 70),
    (3, 5, 40, 5),
    (1, 16, 300, 67),
    (1, 13, 31, 129),
    (2, 2, 2000, 300),
    (40, 3, 200, 5),
    (7, 1, 1000, 41),
];

/// `n` pseudo-random multiples of 0.001 in [-1, 1] from `seed` (xorshift), for the kernel tests.
#[cfg(test)]
pub fn test_values(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// The plain reference of a block kernel, for tests: f64 sums of `f64` values.
#[cfg(test)]
pub fn reference(p: &Skinny<f64>) -> Vec<f64> {
    let mut out = Vec::new();
    for (&ao, &bo) in p.a_offs.iter().zip(p.b_offs) {
        for r in 0..p.m {
            for j in 0..p.n {
                out.push((0..p.k).map(|q| p.a[ao + r * p.ars + q] * p.b[bo + j * p.bcs + q]).sum());
            }
        }
    }
    out
}
