//! f32 matrix products on AVX2 + FMA, for x86 processors without AVX-512.
//!
//! The classic blocked scheme: B is packed per `KC × NC` block into panels of `NR` columns (one
//! 64-byte line per k), A per `MC × KC` block into panels of `MR` rows. The micro-kernel keeps an
//! `MR × NR` tile in twelve of the sixteen ymm registers and, per k, loads two B vectors and
//! broadcasts one A value per row: twelve FMAs for eight loads. A `KC × NR` B panel (24 KiB) stays
//! mostly in the 32 KiB L1 while the A panels of a row block (at most `MC × KC`, 216 KiB) stream from
//! L2.
//!
//! Products over more than `KC` values of k take several passes; the first writes the output (plus
//! a bias row, for `linear`, at no extra pass over it), the later ones add to it. Row blocks run in
//! parallel ([`crate::par`], so a host kernel called from an XLA thread works on them too).
//!
//! On AVX2 machines this kernel replaces the gemm crate's, whose 16 × 6 AVX2 kernel reached
//! 100–107 GFLOP/s on a two-core Zen 3 (`[1024, 1024]²`), against 135 for XLA's.

use std::mem::MaybeUninit;

/// Rows of the register tile.
const MR: usize = 6;
/// Columns of the register tile (two 8-lane vectors).
const NR: usize = 16;
/// Most k values per pass.
const KC: usize = 384;
/// Most rows per packed A block (a multiple of `MR`).
const MC: usize = 144;
/// Columns per packed B block (a multiple of `NR`).
const NC: usize = 4096;

/// True when this CPU can run the kernel (AVX2 and FMA, see [`crate::simd::level`]).
pub fn available() -> bool {
    crate::simd::level() != crate::simd::Level::Baseline
}

/// True when an `m × k` by `k × n` product should take this kernel: the CPU has AVX2 but not
/// AVX-512 (whose gemm-crate kernel is faster), and the product has at least [`MIN_M`] rows and
/// [`MIN_MACS`] multiply-adds. Shorter products spend relatively more on packing the whole of B
/// (the gemm crate reads it in place): on a two-core Zen 3, `[32, 768] · [768, 3072]` ran at 41
/// GFLOP/s here and 60 in the gemm crate, `[64, 768] · [768, 2048]` 58 against 74, while
/// `[1024, 1024]²` ran at 121–130 against 98–106 and `[4096, 384] · [384, 1536]` 114–133 against
/// 89–107.
pub fn preferred_for(m: usize, n: usize, k: usize) -> bool {
    crate::simd::level() == crate::simd::Level::Avx2
        && m >= MIN_M
        && m.saturating_mul(n).saturating_mul(k) >= MIN_MACS
}

/// Fewest rows of a product that takes this kernel (see [`preferred_for`]).
pub const MIN_M: usize = 96;

/// Fewest multiply-adds of a product that takes this kernel (see [`preferred_for`]).
pub const MIN_MACS: usize = 1 << 21;

/// A strided f32 matrix operand: element `(i, j)` is `data[offset + i * rs + j * cs]`.
#[derive(Clone, Copy)]
pub struct MatRef<'a> {
    /// the storage
    pub data: &'a [f32],
    /// offset of element (0, 0)
    pub offset: usize,
    /// row stride
    pub rs: usize,
    /// column stride
    pub cs: usize,
}

impl MatRef<'_> {
    /// Panics unless every element of a `rows × cols` matrix lies inside `data`.
    fn check(&self, rows: usize, cols: usize, name: &str) {
        let last = (rows - 1)
            .checked_mul(self.rs)
            .and_then(|r| (cols - 1).checked_mul(self.cs).and_then(|c| r.checked_add(c)))
            .and_then(|x| x.checked_add(self.offset));
        assert!(
            last.is_some_and(|l| l < self.data.len()),
            "gemm_f32_avx2: {name} of {rows}×{cols} (offset {}, strides {}, {}) reaches outside {} elements",
            self.offset,
            self.rs,
            self.cs,
            self.data.len()
        );
    }
}

/// One 64-byte line of a packed buffer: a B panel's 16 columns at one k.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; NR]);

const ZERO_LINE: Line = Line([0.0; NR]);

/// `c = a · b` for an `m × k` by `k × n` product into `c`, row-major `m × n`, every entry written.
/// With `parallel`, row blocks run on rayon's threads (and the calling one).
///
/// Panics unless [`available`], or when an operand reaches outside its storage.
pub fn gemm_into(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    c: &mut [MaybeUninit<f32>],
    parallel: bool,
) {
    assert!(m.checked_mul(n) == Some(c.len()), "gemm_f32_avx2: output of the wrong length");
    // SAFETY: `c` holds the `m × n` row-major output and is borrowed mutably for the call.
    unsafe { product(m, n, k, a, b, None, c.as_mut_ptr() as *mut f32, n, parallel) }
}

/// [`gemm_into`] plus `bias` (`n` values) on every row: `linear`'s `x wᵀ + b`, the bias added as
/// the product's first pass over k writes each tile.
#[allow(clippy::too_many_arguments)]
pub fn gemm_bias_into(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    bias: &[f32],
    c: &mut [MaybeUninit<f32>],
    parallel: bool,
) {
    assert!(m.checked_mul(n) == Some(c.len()), "gemm_f32_avx2: output of the wrong length");
    assert_eq!(bias.len(), n, "gemm_f32_avx2: a bias of {} values for {n} columns", bias.len());
    // SAFETY: `c` holds the `m × n` row-major output and is borrowed mutably for the call.
    unsafe { product(m, n, k, a, b, Some(bias), c.as_mut_ptr() as *mut f32, n, parallel) }
}

/// [`gemm_into`] into the `m × n` matrix at `c` with row stride `ldc` ≥ `n` (a block of a larger
/// output, as a convolution's output channels × positions).
///
/// # Safety
/// `c` addresses `m` rows of `n` writable f32 entries at row stride `ldc`, which nothing else
/// reads or writes during the call; they need not be initialised.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_raw(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    c: *mut f32,
    ldc: usize,
    parallel: bool,
) {
    // SAFETY: as the caller promises.
    unsafe { product(m, n, k, a, b, None, c, ldc, parallel) }
}

/// [`gemm_raw`] with an optional bias row (`n` values) added to every output row.
///
/// # Safety
/// As [`gemm_raw`].
#[allow(clippy::too_many_arguments)]
unsafe fn product(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    bias: Option<&[f32]>,
    c: *mut f32,
    ldc: usize,
    parallel: bool,
) {
    assert!(available(), "gemm_f32_avx2 needs AVX2 and FMA");
    assert!(bias.is_none_or(|b| b.len() == n), "gemm_f32_avx2: a bias of the wrong length");
    assert!(ldc >= n, "gemm_f32_avx2: row stride {ldc} below {n} columns");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            // SAFETY (caller): row `i` has `n` writable entries.
            unsafe {
                match bias {
                    Some(bias) => std::ptr::copy_nonoverlapping(bias.as_ptr(), c.add(i * ldc), n),
                    None => std::ptr::write_bytes(c.add(i * ldc), 0, n),
                }
            }
        }
        return;
    }
    a.check(m, k, "A");
    b.check(k, n, "B");
    let passes = k.div_ceil(KC);
    // Equal passes.
    let kc_max = k.div_ceil(passes);
    let threads = if parallel { rayon::current_num_threads().max(1) } else { 1 };
    let block_rows = block_rows(m, threads);
    let blocks = m.div_ceil(block_rows);
    // Shared by the tasks, each of which writes only its own row block.
    let out = crate::par::SendPtr(c);
    // Taken out of the thread-local for the call: a nested call on this thread (rayon may run another
    // task here while it waits) then packs into a fresh buffer instead of sharing this one.
    let mut bpack = PACK_B.take();
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for (pass, pc) in (0..k).step_by(kc_max).enumerate() {
            let kc = kc_max.min(k - pc);
            pack_b(&b, pc, kc, jc, nc, &mut bpack, threads);
            let bp = &bpack[..];
            let task = |i: usize| {
                let ic = i * block_rows;
                let rows = block_rows.min(m - ic);
                let mut apack = PACK_A.take();
                // The first pass adds the bias (its columns of this B block).
                let bias = bias.filter(|_| pass == 0).map(|b| &b[jc..jc + nc]);
                let block = Block { ic, rows, pc, kc, jc, nc, first: pass == 0, bias };
                pack_a(&a, &block, &mut apack);
                // SAFETY (caller): the block's rows of `c`; each task has its own rows.
                unsafe { block_product(&block, &apack, bp, out.get().add(ic * ldc), ldc) };
                PACK_A.set(apack);
            };
            if threads > 1 {
                crate::par::for_each_task(blocks, &task);
            } else {
                (0..blocks).for_each(task);
            }
        }
    }
    PACK_B.set(bpack);
}

/// Rows per parallel task: tasks of at most `MC` rows, as equal as `MR`-row units allow, and as
/// many as a multiple of `threads` where there are enough units.
fn block_rows(m: usize, threads: usize) -> usize {
    let units = m.div_ceil(MR);
    let blocks = (threads * units.div_ceil(threads * (MC / MR))).clamp(1, units);
    units.div_ceil(blocks) * MR
}

/// Where one task's packed A block sits in the product.
struct Block<'a> {
    /// first row
    ic: usize,
    /// rows
    rows: usize,
    /// first k
    pc: usize,
    /// k values
    kc: usize,
    /// first column of the packed B block
    jc: usize,
    /// its columns
    nc: usize,
    /// the first pass over k: the output is written, not added to
    first: bool,
    /// on the first pass, the bias of the block's `nc` columns
    bias: Option<&'a [f32]>,
}

/// The product of one packed A block with the packed B block into `out`, the block's first row of
/// the output (row stride `ldc`).
///
/// # Safety
/// AVX2 and FMA are available; `out` addresses the block's `rows` rows of the output's columns,
/// initialised unless this is the first pass.
unsafe fn block_product(blk: &Block, apack: &[f32], bpack: &[Line], out: *mut f32, ldc: usize) {
    let kc = blk.kc;
    for (jp, jr) in (0..blk.nc).step_by(NR).enumerate() {
        let bpanel = &bpack[jp * kc..(jp + 1) * kc];
        let cols = NR.min(blk.nc - jr);
        let col = blk.jc + jr;
        // A full panel's 16 bias values, or null (the kernel then adds none).
        let bias = blk.bias.map(|b| &b[jr..jr + cols]);
        let bias_ptr = bias.filter(|b| b.len() == NR).map_or(std::ptr::null(), <[f32]>::as_ptr);
        for (ip, ir) in (0..blk.rows).step_by(MR).enumerate() {
            let apanel = &apack[ip * kc * MR..(ip + 1) * kc * MR];
            let rows = MR.min(blk.rows - ir);
            // SAFETY (caller): the tile's rows and columns lie inside the block.
            let tile = unsafe { out.add(ir * ldc + col) };
            if rows == MR && cols == NR {
                // SAFETY: the panels hold `kc` k values; the tile spans `MR` rows of `NR` entries;
                // `bias_ptr` is null or `NR` values.
                unsafe { kernel(kc, apanel.as_ptr(), bpanel.as_ptr(), tile, ldc, blk.first, bias_ptr) };
            } else {
                let mut buf = [ZERO_LINE; MR];
                // SAFETY: as above, into a full `MR × NR` scratch tile.
                unsafe {
                    let buf = buf.as_mut_ptr() as *mut f32;
                    kernel(kc, apanel.as_ptr(), bpanel.as_ptr(), buf, NR, true, std::ptr::null())
                };
                for (r, line) in buf.iter().enumerate().take(rows) {
                    for (j, &v) in line.0.iter().enumerate().take(cols) {
                        // SAFETY: entry (r, j) of the tile; a later pass adds to what the first wrote.
                        unsafe {
                            let d = tile.add(r * ldc + j);
                            *d = match (blk.first, bias) {
                                (true, Some(bias)) => v + bias[j],
                                (true, None) => v,
                                (false, _) => *d + v,
                            };
                        }
                    }
                }
            }
        }
    }
}

/// Packs rows `ic..ic + rows`, k range `pc..pc + kc` of `a` into `MR`-row panels, each `kc` groups
/// of `MR` values (rows past the end of A are zeros). `out` is reused scratch.
fn pack_a(a: &MatRef, blk: &Block, out: &mut Vec<f32>) {
    let (kc, pc) = (blk.kc, blk.pc);
    let len = blk.rows.div_ceil(MR) * kc * MR;
    if out.len() < len {
        out.resize(len, 0.0);
    }
    for (ip, ir) in (0..blk.rows).step_by(MR).enumerate() {
        let panel = &mut out[ip * kc * MR..(ip + 1) * kc * MR];
        let rows = MR.min(blk.rows - ir);
        let i0 = blk.ic + ir;
        if a.cs == 1 {
            // Row-major: `rows` streams along k, transposed eight k values at a time.
            let row = |r: usize| &a.data[a.offset + (i0 + r) * a.rs + pc..][..kc];
            let src: [&[f32]; MR] = std::array::from_fn(|r| if r < rows { row(r) } else { &[] });
            let whole = if rows == MR { kc / 8 * 8 } else { 0 };
            if whole > 0 {
                // SAFETY: `gemm_raw` asserted available(); each row holds `kc` ≥ `whole` values
                // and the panel `kc * MR`.
                unsafe { pack_a_rows_avx2(&src, whole, panel) };
            }
            for (p, dst) in panel.chunks_exact_mut(MR).enumerate().skip(whole) {
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = if r < rows { src[r][p] } else { 0.0 };
                }
            }
        } else if a.rs == 1 {
            // Column-major (a transposed operand): each k's rows are neighbours.
            for (p, dst) in panel.chunks_exact_mut(MR).enumerate() {
                let src = &a.data[a.offset + i0 + (pc + p) * a.cs..][..rows];
                if let Ok(whole) = <&[f32; MR]>::try_from(src) {
                    dst.copy_from_slice(whole);
                } else {
                    dst[..rows].copy_from_slice(src);
                    dst[rows..].fill(0.0);
                }
            }
        } else {
            for (p, dst) in panel.chunks_exact_mut(MR).enumerate() {
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = if r < rows { a.data[a.offset + (i0 + r) * a.rs + (pc + p) * a.cs] } else { 0.0 };
                }
            }
        }
    }
}

/// Packs k range `pc..pc + kc`, columns `jc..jc + nc` of `b` into `NR`-column panels of `kc` lines
/// (columns past the end of B are zeros), on up to `threads` threads. `out` is reused scratch.
fn pack_b(b: &MatRef, pc: usize, kc: usize, jc: usize, nc: usize, out: &mut Vec<Line>, threads: usize) {
    let panels = nc.div_ceil(NR);
    let len = panels * kc;
    if out.len() < len {
        out.resize(len, ZERO_LINE);
    }
    let pack_panel = |jp: usize, panel: &mut [Line]| {
        let j0 = jc + jp * NR;
        let cols = NR.min(jc + nc - j0);
        if b.cs == 1 {
            // Row-major: one contiguous run per k.
            for (p, line) in panel.iter_mut().enumerate() {
                let src = &b.data[b.offset + (pc + p) * b.rs + j0..][..cols];
                if let Ok(whole) = <&[f32; NR]>::try_from(src) {
                    line.0 = *whole;
                } else {
                    line.0[..cols].copy_from_slice(src);
                    line.0[cols..].fill(0.0);
                }
            }
        } else if b.rs == 1 && cols == NR && kc >= 8 {
            // Column-major (a transposed weight, as `linear` passes it): sixteen streams along k,
            // transposed eight k values at a time.
            let src: [&[f32]; NR] =
                std::array::from_fn(|col| &b.data[b.offset + (j0 + col) * b.cs + pc..][..kc]);
            let whole = kc / 8 * 8;
            // SAFETY: `gemm_raw` asserted available(); each column holds `kc` values, the
            // panel `kc` lines.
            unsafe { pack_b_columns_avx2(&src, whole, panel) };
            for (p, line) in panel.iter_mut().enumerate().skip(whole) {
                for (d, s) in line.0.iter_mut().zip(&src) {
                    *d = s[p];
                }
            }
        } else if b.rs == 1 {
            // Column-major, a partial panel: one stream along k per column.
            for col in 0..NR {
                if col < cols {
                    let src = &b.data[b.offset + (j0 + col) * b.cs + pc..][..kc];
                    for (line, &v) in panel.iter_mut().zip(src) {
                        line.0[col] = v;
                    }
                } else {
                    panel.iter_mut().for_each(|line| line.0[col] = 0.0);
                }
            }
        } else {
            for (p, line) in panel.iter_mut().enumerate() {
                for (col, d) in line.0.iter_mut().enumerate() {
                    *d =
                        if col < cols { b.data[b.offset + (pc + p) * b.rs + (j0 + col) * b.cs] } else { 0.0 };
                }
            }
        }
    };
    let out = &mut out[..len];
    if threads > 1 && panels > 1 && kc * nc >= 1 << 15 {
        let per_task = panels.div_ceil(threads);
        crate::par::for_each_chunk_mut(out, per_task * kc, &|t, group| {
            for (i, panel) in group.chunks_mut(kc).enumerate() {
                pack_panel(t * per_task + i, panel);
            }
        });
    } else {
        out.chunks_mut(kc).enumerate().for_each(|(jp, panel)| pack_panel(jp, panel));
    }
}

/// Transposes eight vectors: lane `j` of output `i` is lane `i` of input `j`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn transpose8(r: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::*;
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let s1 = _mm256_shuffle_ps::<0xee>(t0, t2);
    let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let s3 = _mm256_shuffle_ps::<0xee>(t1, t3);
    let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let s5 = _mm256_shuffle_ps::<0xee>(t4, t6);
    let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let s7 = _mm256_shuffle_ps::<0xee>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ]
}

/// The first `whole` (a multiple of 8) k values of a full A panel from its `MR` row slices: the
/// values of k `p` go to `panel[p * MR..][..MR]`.
///
/// # Safety
/// AVX2 is available; every row holds at least `whole` values and `panel` at least `whole * MR`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn pack_a_rows_avx2(rows: &[&[f32]; MR], whole: usize, panel: &mut [f32]) {
    use std::arch::x86_64::*;
    debug_assert!(rows.iter().all(|r| r.len() >= whole) && panel.len() >= whole * MR);
    let out = panel.as_mut_ptr();
    for p0 in (0..whole).step_by(8) {
        let mut r = [_mm256_setzero_ps(); 8];
        for (v, row) in r.iter_mut().zip(rows) {
            *v = _mm256_loadu_ps(row.as_ptr().add(p0));
        }
        for (p, v) in transpose8(r).into_iter().enumerate() {
            // Lanes 0..6 hold the six rows' values at k = p0 + p: four, then two.
            let dst = out.add((p0 + p) * MR);
            _mm_storeu_ps(dst, _mm256_castps256_ps128(v));
            _mm_storel_epi64(dst.add(4) as *mut __m128i, _mm_castps_si128(_mm256_extractf128_ps::<1>(v)));
        }
    }
}

/// The first `whole` (a multiple of 8) lines of a full B panel from its `NR` column slices: line `p`
/// holds every column's value at k `p`.
///
/// # Safety
/// AVX2 is available; every column holds at least `whole` values and `panel` at least `whole` lines.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn pack_b_columns_avx2(cols: &[&[f32]; NR], whole: usize, panel: &mut [Line]) {
    use std::arch::x86_64::*;
    debug_assert!(cols.iter().all(|c| c.len() >= whole) && panel.len() >= whole);
    let out = panel.as_mut_ptr() as *mut f32;
    for p0 in (0..whole).step_by(8) {
        for half in 0..2 {
            let mut r = [_mm256_setzero_ps(); 8];
            for (v, col) in r.iter_mut().zip(&cols[8 * half..]) {
                *v = _mm256_loadu_ps(col.as_ptr().add(p0));
            }
            for (p, v) in transpose8(r).into_iter().enumerate() {
                _mm256_store_ps(out.add((p0 + p) * NR + 8 * half), v);
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn pack_a_rows_avx2(_: &[&[f32]; MR], _: usize, _: &mut [f32]) {
    unreachable!("gemm_f32_avx2::available() is false off x86-64")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn pack_b_columns_avx2(_: &[&[f32]; NR], _: usize, _: &mut [Line]) {
    unreachable!("gemm_f32_avx2::available() is false off x86-64")
}

thread_local! {
    /// Each thread's packed A block and packed B block, kept between calls: allocating and
    /// faulting in fresh ones per call costs more than packing.
    static PACK_A: std::cell::Cell<Vec<f32>> = const { std::cell::Cell::new(Vec::new()) };
    static PACK_B: std::cell::Cell<Vec<Line>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Multiplies one packed `MR`-row A panel by one packed `NR`-column B panel over `kc` ≥ 1 values of
/// k into the `MR × NR` tile at `c` (row stride `ldc`), writing it (`first`, plus the `NR` values
/// at `bias` on every row unless it is null) or adding to it.
///
/// # Safety
/// AVX2 and FMA are available; `a` holds `kc * MR` values, `b` `kc` lines, `bias` is null or
/// `NR` values, and `c` addresses `MR` rows of `NR` writable entries, initialised unless `first`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel(
    kc: usize,
    a: *const f32,
    b: *const Line,
    c: *mut f32,
    ldc: usize,
    first: bool,
    bias: *const f32,
) {
    use std::arch::x86_64::*;
    for r in 0..MR {
        _mm_prefetch::<_MM_HINT_T0>(c.wrapping_add(r * ldc) as *const i8);
        _mm_prefetch::<_MM_HINT_T0>(c.wrapping_add(r * ldc + NR - 1) as *const i8);
    }
    let b = b as *const f32;
    let step = |acc: &mut [[__m256; 2]; MR], p: usize| {
        let b0 = _mm256_load_ps(b.add(p * NR));
        let b1 = _mm256_load_ps(b.add(p * NR + 8));
        for (r, acc) in acc.iter_mut().enumerate() {
            let av = _mm256_broadcast_ss(&*a.add(p * MR + r));
            acc[0] = _mm256_fmadd_ps(av, b0, acc[0]);
            acc[1] = _mm256_fmadd_ps(av, b1, acc[1]);
        }
    };
    let mut acc = [[_mm256_setzero_ps(); 2]; MR];
    // The first k is peeled off the loop (`kc` ≥ 1): with a loop that may not run, the compiler
    // zeroes a copy of the tile in memory on every call.
    step(&mut acc, 0);
    for p in 1..kc {
        step(&mut acc, p);
    }
    let with_bias = first && !bias.is_null();
    let (b0, b1) = if with_bias {
        (_mm256_loadu_ps(bias), _mm256_loadu_ps(bias.add(8)))
    } else {
        (_mm256_setzero_ps(), _mm256_setzero_ps())
    };
    for (r, acc) in acc.iter().enumerate() {
        let dst = c.add(r * ldc);
        let (mut v0, mut v1) = (acc[0], acc[1]);
        if !first {
            v0 = _mm256_add_ps(v0, _mm256_loadu_ps(dst));
            v1 = _mm256_add_ps(v1, _mm256_loadu_ps(dst.add(8)));
        } else if with_bias {
            v0 = _mm256_add_ps(v0, b0);
            v1 = _mm256_add_ps(v1, b1);
        }
        _mm256_storeu_ps(dst, v0);
        _mm256_storeu_ps(dst.add(8), v1);
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_: usize, _: *const f32, _: *const Line, _: *mut f32, _: usize, _: bool, _: *const f32) {
    unreachable!("gemm_f32_avx2::available() is false off x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: usize) -> Vec<f32> {
        (0..n).map(|i| (((i * 7 + seed * 13) % 17) as f32 - 8.0) / 4.0).collect()
    }

    /// An operand's storage and view in one of three layouts: row-major, column-major (a
    /// transposed matrix) or strided both ways, at an offset.
    fn operand(rows: usize, cols: usize, layout: usize, seed: usize) -> (Vec<f32>, usize, usize, usize) {
        let offset = 3;
        let (rs, cs, len) = match layout {
            0 => (cols, 1, rows * cols),
            1 => (1, rows, rows * cols),
            _ => (2 * cols + 1, 2, rows * (2 * cols + 1)),
        };
        (values(len + offset, seed), offset, rs, cs)
    }

    /// Every layout pair on odd sizes, partial tiles, several passes over k, with and without
    /// threads, with and without a bias row: the exact sums (the values are multiples of 1/4, the
    /// sums exact in f32).
    #[test]
    fn matches_exact_sums_on_every_layout() {
        if !available() {
            return;
        }
        for &(m, n, k) in &[
            (1, 1, 1),
            (6, 16, 8),
            (13, 33, 5),
            (50, 70, 17),
            (7, 200, KC + 9),
            (300, 20, 2 * KC + 3),
            (145, 47, 64),
            (3, 3, 0),
            (0, 4, 5),
        ] {
            for la in 0..3 {
                for lb in 0..3 {
                    let (av, ao, ars, acs) = operand(m, k, la, 1);
                    let (bv, bo, brs, bcs) = operand(k, n, lb, 2);
                    let a = MatRef { data: &av, offset: ao, rs: ars, cs: acs };
                    let b = MatRef { data: &bv, offset: bo, rs: brs, cs: bcs };
                    let bias = values(n, 5);
                    for (parallel, with_bias) in [(false, false), (true, false), (false, true), (true, true)]
                    {
                        let mut c = vec![MaybeUninit::new(f32::NAN); m * n];
                        if with_bias {
                            gemm_bias_into(m, n, k, a, b, &bias, &mut c, parallel);
                        } else {
                            gemm_into(m, n, k, a, b, &mut c, parallel);
                        }
                        for i in 0..m {
                            for j in 0..n {
                                let bias = if with_bias { bias[j] as f64 } else { 0.0 };
                                let want: f64 = bias
                                    + (0..k)
                                        .map(|p| {
                                            av[ao + i * ars + p * acs] as f64
                                                * bv[bo + p * brs + j * bcs] as f64
                                        })
                                        .sum::<f64>();
                                // SAFETY: initialised above.
                                let got = unsafe { c[i * n + j].assume_init() };
                                let case = format!("({m},{n},{k}) layouts {la},{lb} bias {with_bias}");
                                assert_eq!(got as f64, want, "{case} [{i},{j}]");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Products wider than one packed B block (`NC` columns, then a partial block; with a bias
    /// too), and a block
    /// of a wider output (`gemm_raw` with a row stride above `n`) that leaves the rest untouched.
    #[test]
    fn wide_products_and_strided_outputs() {
        if !available() {
            return;
        }
        let (m, n, k) = (7, NC + 37, 20);
        let (av, ao, ars, acs) = operand(m, k, 0, 3);
        let (bv, bo, brs, bcs) = operand(k, n, 1, 4);
        let a = MatRef { data: &av, offset: ao, rs: ars, cs: acs };
        let b = MatRef { data: &bv, offset: bo, rs: brs, cs: bcs };
        let want = |i: usize, j: usize| -> f64 {
            (0..k).map(|p| av[ao + i * ars + p * acs] as f64 * bv[bo + p * brs + j * bcs] as f64).sum()
        };
        let mut c = vec![MaybeUninit::new(f32::NAN); m * n];
        gemm_into(m, n, k, a, b, &mut c, true);
        // A bias on each block's own columns.
        let bias = values(n, 6);
        let mut cb = vec![MaybeUninit::new(f32::NAN); m * n];
        gemm_bias_into(m, n, k, a, b, &bias, &mut cb, true);
        for i in 0..m {
            for j in 0..n {
                // SAFETY: initialised above.
                let (got, got_b) = unsafe { (c[i * n + j].assume_init(), cb[i * n + j].assume_init()) };
                assert_eq!(got as f64, want(i, j), "[{i},{j}]");
                assert_eq!(got_b as f64, want(i, j) + bias[j] as f64, "with bias [{i},{j}]");
            }
        }
        let (n, ldc) = (40, 53);
        let mut out = vec![-7f32; (m - 1) * ldc + n + 5];
        // SAFETY: `out` holds `m` rows of `n` entries at row stride `ldc`.
        unsafe { gemm_raw(m, n, k, a, b, out.as_mut_ptr(), ldc, true) };
        for (x, &v) in out.iter().enumerate() {
            let (i, j) = (x / ldc, x % ldc);
            let expect = if i < m && j < n { want(i, j) as f32 } else { -7.0 };
            assert_eq!(v, expect, "entry {x}");
        }
    }

    /// An operand that does not fit its storage is refused before any raw access.
    #[test]
    fn refuses_an_operand_outside_its_storage() {
        if !available() {
            return;
        }
        let (av, bv) = (vec![1f32; 12], vec![1f32; 11]);
        let a = MatRef { data: &av, offset: 0, rs: 4, cs: 1 };
        let b = MatRef { data: &bv, offset: 0, rs: 3, cs: 1 };
        let mut c = vec![MaybeUninit::new(0f32); 9];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            gemm_into(3, 3, 4, a, b, &mut c, false)
        }));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(msg.contains("B of 4×3") && msg.contains("outside 11 elements"), "{msg}");
    }
}
