//! Scaled dot-product attention in one kernel ([`NnOp::Attention`]).
//!
//! The composition `softmax(q kᵀ · scale + mask) v` writes the `[B, H, L, S]` scores to memory and
//! walks them five times (product, scale, mask, softmax, product): for a BERT-base-sized batch of 32
//! sentences of 128 tokens that is 25 MB per pass, and each head's product is too small to run
//! well on its own. Here each task takes one head and a block of query rows, computes that block's
//! scores into a buffer that stays in the core's L2 cache, scales, masks and normalises each row
//! there, and multiplies the probabilities by `v` straight into the output. A causal block stops at
//! its last row's diagonal: the keys after it are never computed (so an inf or NaN in a later value
//! row does not reach it, where the composition's `0 · NaN` would). Likewise the keys before the
//! first and after the last that a block's mask lets through are skipped (padding on either side),
//! where every row of the block lets some key through and the call's queries, keys, values and
//! scores are finite and bounded: a key hidden by `-inf` or by a value at most half the float's
//! lowest (transformers' `finfo.min`) then gets an exact zero weight from the softmax.
//!
//! [`NnOp::Attention`]: oxtorch_core::ops::NnOp::Attention

use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};

use crate::gemm_f32_avx2::MatRef;
use crate::math::softmax_row::safe_softmax_in_place;
use crate::CpuStorage;

/// Scores held per task (floats): a block of query rows times the keys, sized for L2.
const BLOCK_SCORES: usize = 32 << 10;

/// Fewest and most query rows per task (the product kernel's tiles are six rows high).
const MIN_ROWS: usize = 24;
const MAX_ROWS: usize = 96;

/// The parameters of [`NnOp::Attention`](oxtorch_core::ops::NnOp::Attention).
pub struct AttentionArgs {
    /// the factor on `q kᵀ`
    pub scale: f64,
    /// query `i` attends to keys `j <= i` only
    pub causal: bool,
}

/// One rank-4 f32 operand: its storage and its layout's strides.
#[derive(Clone, Copy)]
struct Operand<'a> {
    data: &'a [f32],
    offset: usize,
    strides: [usize; 4],
}

impl<'a> Operand<'a> {
    fn new((s, l): (&'a CpuStorage, &Layout)) -> Result<Self> {
        let strides = l.strides().try_into().expect("rank checked");
        Ok(Operand { data: s.as_slice::<f32>()?, offset: l.offset(), strides })
    }

    /// The `[.., .., rows, cols]` matrix of batch `b`, head `h`, from row `row`.
    fn matrix(&self, b: usize, h: usize, row: usize) -> MatRef<'a> {
        let [sb, sh, sr, sc] = self.strides;
        MatRef { data: self.data, offset: self.offset + b * sb + h * sh + row * sr, rs: sr, cs: sc }
    }

    /// That matrix from row `row`, transposed.
    fn transposed(&self, b: usize, h: usize, row: usize) -> MatRef<'a> {
        let m = self.matrix(b, h, row);
        MatRef { rs: m.cs, cs: m.rs, ..m }
    }
}

/// A mask value at or below this hides its key: `-inf`, and the lowest float (transformers fills
/// with `finfo.min`), whose weight is an exact zero as long as the row has a visible key (its score
/// sits ~1.7e38 below that key's).
const HIDDEN: f32 = f32::MIN / 2.0;

/// The keys `[first, last]` that the mask of rows `i0..i0 + rows` of head `(b, h)` lets through
/// among keys `0..end` (for a causal row `i`, among `0..=i`), as the range `first..last + 1`;
/// `(0, end)` if some row hides all of its keys (such a row's softmax is over all of them: uniform
/// for `finfo.min`, zeros for `-inf`). A NaN counts as visible.
fn visible_keys(
    mask: &Operand,
    (b, h): (usize, usize),
    i0: usize,
    rows: usize,
    end: usize,
    causal: bool,
) -> (usize, usize) {
    // A mask broadcast along the queries (`[B, 1, 1, S]` expanded) needs one row looked at, unless
    // causality makes each row's keys differ.
    let rows = if mask.strides[2] == 0 && !causal { 1 } else { rows };
    let (mut first, mut last) = (end, 0);
    for i in i0..i0 + rows {
        let m = mask.matrix(b, h, i);
        let visible = |j: &usize| {
            let x = m.data[m.offset + j * m.cs];
            x > HIDDEN || x.is_nan()
        };
        let row_end = if causal { end.min(i + 1) } else { end };
        let Some(f) = (0..row_end).find(visible) else { return (0, end) };
        let l = (f..row_end).rev().find(visible).unwrap_or(f);
        (first, last) = (first.min(f), last.max(l));
    }
    (first, last + 1)
}

/// The largest magnitude among the elements of the rank-4 operand `x` of dims `d`, or `None`
/// where one is NaN or infinite (0 for an empty operand). It is the largest of the magnitudes' bit
/// patterns, which order as the magnitudes do, with infinity and NaN above every finite value: an
/// integer maximum, which vectorises (a float one does not).
fn finite_bound(x: &Operand, d: &[usize]) -> Option<f32> {
    if d.contains(&0) {
        return Some(0.0);
    }
    let [sb, sh, sr, sc] = x.strides;
    // the middle dim with the smaller stride innermost
    let ((n1, s1), (n2, s2)) = if sh >= sr { ((d[1], sh), (d[2], sr)) } else { ((d[2], sr), (d[1], sh)) };
    let magnitude = |v: &f32| v.to_bits() & 0x7fff_ffff;
    let mut max = 0u32;
    for b in 0..d[0] {
        for i in 0..n1 {
            for j in 0..n2 {
                let start = x.offset + b * sb + i * s1 + j * s2;
                max = if sc == 1 {
                    x.data[start..start + d[3]].iter().map(magnitude).fold(max, u32::max)
                } else {
                    (0..d[3]).map(|c| magnitude(&x.data[start + c * sc])).fold(max, u32::max)
                };
            }
        }
    }
    let max = f32::from_bits(max);
    max.is_finite().then_some(max)
}

/// Whether skipping hidden keys gives the composition's result for this call: q, k, v and the
/// scale finite (a NaN or infinite score or value poisons its rows even where the mask hides it:
/// the composition's `NaN + mask`, `inf + mask`, `0 · NaN`), and every score at most 1e30 in
/// magnitude (`e · max|q| · max|k| · |scale|`), far above any visible score and far below the gap
/// of ~1.7e38 that a hidden key's mask opens.
fn skipping_is_exact(
    q: (&Operand, &[usize]),
    k: (&Operand, &[usize]),
    v: (&Operand, &[usize]),
    scale: f32,
) -> bool {
    let bound = || {
        let (mq, mk) = (finite_bound(q.0, q.1)?, finite_bound(k.0, k.1)?);
        finite_bound(v.0, v.1)?;
        Some(q.1[3] as f64 * mq as f64 * mk as f64 * (scale as f64).abs())
    };
    scale.is_finite() && bound().is_some_and(|b| b <= 1e30)
}

/// `softmax(q kᵀ · scale + mask) v` for `q` `[B, H, L, E]`, `k` `[B, Hk, S, E]`, `v`
/// `[B, Hk, S, Ev]` and an optional additive `mask` `[B, H, L, S]`, all f32; output `[B, H, L, Ev]`.
pub fn attention(
    q: (&CpuStorage, &Layout),
    k: (&CpuStorage, &Layout),
    v: (&CpuStorage, &Layout),
    mask: Option<(&CpuStorage, &Layout)>,
    args: &AttentionArgs,
) -> Result<CpuStorage> {
    let (qd, kd, vd) = (q.1.dims(), k.1.dims(), v.1.dims());
    let shapes_fit = qd.len() == 4
        && kd.len() == 4
        && vd.len() == 4
        && kd[0] == qd[0]
        && vd[..3] == kd[..3]
        && kd[3] == qd[3]
        && (kd[1] == qd[1] || (kd[1] > 0 && qd[1] % kd[1] == 0));
    let mask_fits = mask.is_none_or(|(_, lm)| lm.dims() == [qd[0], qd[1], qd[2], kd[2]]);
    if !shapes_fit || !mask_fits {
        return Err(Error::shape(format!(
            "scaled_dot_product_attention: query {}, key {}, value {}{} do not fit",
            q.1.shape(),
            k.1.shape(),
            v.1.shape(),
            mask.map(|(_, lm)| format!(", mask {}", lm.shape())).unwrap_or_default()
        )));
    }
    for (s, l) in [Some(q), Some(k), Some(v), mask].into_iter().flatten() {
        if s.dtype() != DType::F32 {
            return Err(Error::UnsupportedDType { op: "scaled_dot_product_attention", dtype: s.dtype() });
        }
        // The products read the operands through raw pointers.
        crate::matmul::check_bounds("scaled_dot_product_attention", s.len(), l)?;
    }
    let (batch, heads, l, e) = (qd[0], qd[1], qd[2], qd[3]);
    let (kv_heads, s, ev) = (kd[1], kd[2], vd[3]);
    let n = batch * heads * l * ev;
    if n == 0 || s == 0 {
        // No keys: every row is masked, and zeros are what the composition gives.
        return Ok(CpuStorage::from_vec(crate::pool::filled(n, 0f32)));
    }
    let (q, k, v) = (Operand::new(q)?, Operand::new(k)?, Operand::new(v)?);
    let mask = mask.map(Operand::new).transpose()?;
    let rows = block_rows(l, s);
    let blocks = l.div_ceil(rows);
    let group = heads / kv_heads;
    let (scale, causal) = (args.scale as f32, args.causal);
    let exact_skip = std::sync::OnceLock::new();
    let mut out: Vec<f32> = crate::pool::take(n);
    let dst = crate::par::SendPtr(out.spare_capacity_mut().as_mut_ptr() as *mut f32);
    crate::par::for_each_task(batch * heads * blocks, &|task| {
        let (bh, block) = (task / blocks, task % blocks);
        let (b, h) = (bh / heads, bh % heads);
        let i0 = block * rows;
        let rows = rows.min(l - i0);
        // A causal block's last row sees keys up to its own position; the mask may hide more.
        let end = if causal { s.min(i0 + rows) } else { s };
        let (j0, end) = match mask {
            Some(m) => {
                let (j0, visible_end) = visible_keys(&m, (b, h), i0, rows, end, causal);
                // The first block that would skip keys scans q, k and v once for the whole call
                // (`skipping_is_exact`); where skipping could differ, every block reads every key.
                let skips = j0 > 0 || visible_end < end;
                let exact = || skipping_is_exact((&q, qd), (&k, kd), (&v, vd), scale);
                if !skips || *exact_skip.get_or_init(exact) {
                    (j0, visible_end)
                } else {
                    (0, end)
                }
            }
            None => (0, end),
        };
        let keys = end - j0;
        let mut scores = SCORES.take();
        scores.resize(rows * keys, 0.0);
        if e == 0 {
            scores.fill(0.0);
        } else {
            // SAFETY: `scores` holds `rows × keys` entries; the operands' layouts were checked
            // against their storages above.
            unsafe {
                let (qm, kt) = (q.matrix(b, h, i0), k.transposed(b, h / group, j0));
                product(rows, keys, e, qm, kt, scores.as_mut_ptr(), keys)
            };
        }
        for (r, row) in scores.chunks_exact_mut(keys).enumerate() {
            let i = i0 + r;
            match mask.map(|m| m.matrix(b, h, i)) {
                Some(m) if m.cs == 1 => {
                    let m = &m.data[m.offset + j0..][..keys];
                    row.iter_mut().zip(m).for_each(|(x, &m)| *x = *x * scale + m);
                }
                Some(m) => {
                    for (j, x) in row.iter_mut().enumerate() {
                        *x = *x * scale + m.data[m.offset + (j0 + j) * m.cs];
                    }
                }
                None => row.iter_mut().for_each(|x| *x *= scale),
            }
            if causal && i + 1 < end {
                // the keys after `i` (every row sees a key at or before it, so `j0 <= i`)
                debug_assert!(j0 <= i);
                row[i + 1 - j0..].fill(f32::NEG_INFINITY);
            }
            safe_softmax_in_place(row);
        }
        let probs = MatRef { data: &scores, offset: 0, rs: keys, cs: 1 };
        // SAFETY: the task's `rows × ev` block of the output, written by this task only.
        unsafe {
            let out = dst.get().add(((bh * l) + i0) * ev);
            product(rows, ev, keys, probs, v.matrix(b, h / group, j0), out, ev)
        };
        SCORES.set(scores);
    });
    // SAFETY: the tasks wrote all `n` entries.
    unsafe { out.set_len(n) };
    Ok(CpuStorage::from_vec(out))
}

/// Query rows per task: about [`BLOCK_SCORES`] scores (a cap between [`MIN_ROWS`] and
/// [`MAX_ROWS`] rows), as equal as the `l` rows allow, rounded up to a multiple of six.
fn block_rows(l: usize, s: usize) -> usize {
    let cap = (BLOCK_SCORES / s).clamp(MIN_ROWS, MAX_ROWS);
    let blocks = l.div_ceil(cap);
    l.div_ceil(blocks).div_ceil(6) * 6
}

thread_local! {
    /// Each thread's score block, kept between calls.
    static SCORES: std::cell::Cell<Vec<f32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// `c = a · b` for an `m × k` by `k × n` product (`k` ≥ 1) into `c` with row stride `ldc`, on this
/// thread: our AVX2 kernel wherever the CPU runs it (AVX-512 machines too: for these small
/// products it is not measured against the gemm crate there), the gemm crate elsewhere.
///
/// # Safety
/// `c` addresses `m` rows of `n` writable entries at row stride `ldc`, and every element of `a` and
/// `b` lies inside its storage.
unsafe fn product(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: *mut f32, ldc: usize) {
    if crate::gemm_f32_avx2::available() {
        // SAFETY: as the caller promises; `gemm_raw` checks the operands' extents again.
        unsafe { crate::gemm_f32_avx2::gemm_raw(m, n, k, a, b, c, ldc, false) };
        return;
    }
    // SAFETY: as the caller promises: gemm writes the `m × n` block of `c` without reading it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c,
            1,
            ldc as isize,
            false,
            a.data.as_ptr().add(a.offset),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr().add(b.offset),
            b.cs as isize,
            b.rs as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}
