//! bf16 matrix products on the AVX512-BF16 dot-product instruction (`vdpbf16ps`), accumulating in f32.
//!
//! The classic blocked scheme: B is packed per `KC × NC` block into panels of `NR` columns in which
//! each 32-bit word holds the bf16 pair `(B[2p, j], B[2p+1, j])`; A is packed per `MC × KC` block into
//! panels of `MR` rows of pairs `(A[i, 2p], A[i, 2p+1])`. The micro-kernel keeps an `MR × NR` tile of
//! f32 accumulators in registers and, per k-pair, broadcasts one A pair per row against two B vectors.
//! Row blocks run in parallel on rayon's pool. Used only where the CPU has `avx512bf16`
//! ([`available`]); elsewhere bf16 products widen to f32 and use the f32 gemm.
//!
//! `KC` is large (most products take one pass over k), so each output tile leaves the registers
//! once, rounded straight to bf16. Longer products keep partial sums in an f32 scratch matrix whose
//! rows are padded (a power-of-two row stride would make every row of a tile share one cache set);
//! the last pass adds them in and rounds.

use half::bf16;
use std::mem::MaybeUninit;

use rayon::prelude::*;

pub(crate) use crate::aligned::Aligned;

/// Rows of the register tile.
const MR: usize = 12;
/// Columns of the register tile (two 16-lane vectors); also the width of the AMX kernel's B panels.
pub(crate) const NR: usize = 32;
/// Most k values per pass (even). A `KC × NR` B panel (128 KiB) and an `MC × KC` A block (384 KiB)
/// share the 1 MiB L2 of current x86 cores; the kernel streams both from there.
const KC: usize = 2048;
/// Most rows per packed A block (a multiple of `MR`).
const MC: usize = 96;
/// Columns per packed B block (a multiple of `NR`).
const NC: usize = 2048;
/// Padding of the f32 scratch rows, in elements (one cache line).
const SCRATCH_PAD: usize = 16;

/// True when this CPU runs the AVX512-BF16 kernel.
pub fn available() -> bool {
    crate::simd::capability() >= crate::simd::Capability::Avx512Bf16
}

/// A strided bf16 matrix operand: element `(i, j)` is `data[offset + i * rs + j * cs]`.
#[derive(Clone, Copy)]
pub struct MatRef<'a> {
    /// the storage
    pub data: &'a [bf16],
    /// offset of element (0, 0)
    pub offset: usize,
    /// row stride
    pub rs: usize,
    /// column stride
    pub cs: usize,
}

impl MatRef<'_> {
    #[inline(always)]
    fn bits(&self, i: usize, j: usize) -> u32 {
        self.data[self.offset + i * self.rs + j * self.cs].to_bits() as u32
    }
}

/// `c = a · b` for an `m × k` by `k × n` product; `c` is row-major `m × n` (overwritten), each entry
/// the f32 sum rounded once to bf16 (round to nearest even, as torch).
///
/// Callers must check [`available`] first.
pub fn gemm(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [bf16]) {
    // SAFETY: `MaybeUninit<bf16>` has bf16's layout, and `gemm_into` only stores initialised values.
    let c = unsafe { &mut *(c as *mut [bf16] as *mut [MaybeUninit<bf16>]) };
    gemm_into(m, n, k, a, b, c);
}

/// [`gemm`] into uninitialised memory (a fresh output buffer): every entry of `c` is written.
pub fn gemm_into(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [MaybeUninit<bf16>]) {
    assert!(available(), "gemm_bf16 needs avx512bf16");
    assert_eq!(c.len(), m * n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(MaybeUninit::new(bf16::ZERO));
        return;
    }
    if crate::gemv_bf16::applies(m, &a, &b) {
        let mut acc = vec![0f32; m * n];
        crate::gemv_bf16::gemv(m, n, k, a, b, &mut acc);
        for (o, x) in c.iter_mut().zip(&acc) {
            o.write(oxtorch_core::half_convert::f32_to_bf16(*x));
        }
        return;
    }
    if crate::gemm_amx::available() {
        crate::gemm_amx::gemm_into(m, n, k, a, b, c);
    } else {
        dot_product_gemm(m, n, k, a, b, c);
    }
}

/// [`gemm_into`] on the dot-product kernel (`m`, `n`, `k` ≥ 1, not a skinny product).
fn dot_product_gemm(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [MaybeUninit<bf16>]) {
    let passes = k.div_ceil(KC);
    // Equal passes, each an even number of k values (only the last may be odd).
    let kc_max = k.div_ceil(passes).next_multiple_of(2);
    let ldw = n + SCRATCH_PAD;
    let mut scratch = if passes > 1 { crate::pool::filled(m * ldw, 0f32) } else { Vec::new() };
    let bounds = row_blocks(m, MR, MC);
    // Taken out of the thread-local for the call: a nested call on this thread (rayon may run another
    // task here while it waits) then packs into a fresh buffer instead of sharing this one.
    let mut bpack = PACK_B.take();
    packed_product(n, k, a, b, c, &mut scratch, &bounds, kc_max, &mut bpack);
    PACK_B.set(bpack);
    if passes > 1 {
        crate::pool::give(scratch);
    }
}

/// The packed loops of [`gemm`]: `kc_max` k values per pass, rows `bounds[i]..bounds[i + 1]` in
/// parallel task `i`.
#[allow(clippy::too_many_arguments)]
fn packed_product(
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    c: &mut [MaybeUninit<bf16>],
    scratch: &mut [f32],
    bounds: &[usize],
    kc_max: usize,
    bpack: &mut Aligned<u32>,
) {
    let passes = k.div_ceil(kc_max);
    let ldw = n + SCRATCH_PAD;
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for (pass, pc) in (0..k).step_by(kc_max).enumerate() {
            let kc = kc_max.min(k - pc);
            pack_b(&b, pc, kc, jc, nc, kc.div_ceil(2), bpack);
            let bpack = bpack.as_slice();
            let sink = Sink { first: pass == 0, last: pass + 1 == passes };
            split_rows(c, scratch, bounds, n, ldw).into_par_iter().for_each(|(ic, crows, wrows)| {
                let rows_here = crows.len() / n;
                let mut apack = PACK_A.take();
                {
                    pack_a(&a, ic, rows_here, pc, kc, &mut apack);
                    let pairs = kc.div_ceil(2);
                    for (jp, jr) in (0..nc).step_by(NR).enumerate() {
                        let bpanel = &bpack[jp * pairs * NR..(jp + 1) * pairs * NR];
                        for (ip, ir) in (0..rows_here).step_by(MR).enumerate() {
                            let apanel = &apack[ip * pairs * MR..(ip + 1) * pairs * MR];
                            let rows = MR.min(rows_here - ir);
                            let cols = NR.min(nc - jr);
                            let col = jc + jr;
                            // Bounds of the tile in both outputs, checked before the kernel's raw writes.
                            let out = &mut crows[ir * n + col..(ir + rows - 1) * n + col + cols];
                            let work = if passes > 1 {
                                &mut wrows[ir * ldw + col..(ir + rows - 1) * ldw + col + cols]
                            } else {
                                &mut [][..]
                            };
                            let tile = TileOut { out, ld: n, work, ldw, rows, cols };
                            // SAFETY: `available()` was checked above; the panels hold `pairs` pairs each,
                            // and `tile`'s slices cover every entry the kernel writes or reads.
                            unsafe { kernel(pairs, apanel, bpanel, tile, sink) };
                        }
                    }
                }
                PACK_A.set(apack);
            });
        }
    }
}

/// Row boundaries of the parallel tasks: a multiple of the thread count of tasks of at most `mc`
/// rows, as equal as `mr`-row units allow (a short last task would leave one thread idle while
/// the other finishes).
pub(crate) fn row_blocks(m: usize, mr: usize, mc: usize) -> Vec<usize> {
    let units = m.div_ceil(mr);
    let threads = rayon::current_num_threads().max(1);
    let blocks = (threads * units.div_ceil(threads * (mc / mr))).min(units).max(1);
    let mut bounds: Vec<usize> = (0..=blocks).map(|b| (b * units / blocks * mr).min(m)).collect();
    bounds.dedup();
    bounds
}

/// Each parallel task's rows of the output and of the f32 scratch (rows of `ldw`; empty when the
/// product takes one pass), cut at `bounds`.
pub(crate) fn split_rows<'a>(
    c: &'a mut [MaybeUninit<bf16>],
    scratch: &'a mut [f32],
    bounds: &[usize],
    n: usize,
    ldw: usize,
) -> Vec<RowBlock<'a>> {
    let mut blocks: Vec<RowBlock> = Vec::with_capacity(bounds.len());
    let (mut c_rest, mut w_rest) = (c, scratch);
    for w in bounds.windows(2) {
        let rows = w[1] - w[0];
        let (cb, cr) = std::mem::take(&mut c_rest).split_at_mut(rows * n);
        let wlen = if w_rest.is_empty() { 0 } else { rows * ldw };
        let (wb, wr) = std::mem::take(&mut w_rest).split_at_mut(wlen);
        blocks.push((w[0], cb, wb));
        (c_rest, w_rest) = (cr, wr);
    }
    blocks
}

/// A parallel task's first row, and its rows of the output and of the f32 scratch.
pub(crate) type RowBlock<'a> = (usize, &'a mut [MaybeUninit<bf16>], &'a mut [f32]);

/// Which pass over k a kernel call makes.
#[derive(Clone, Copy)]
pub(crate) struct Sink {
    /// no partial sums exist yet
    pub first: bool,
    /// the tile is final: round to bf16 into the output (else add into the f32 scratch)
    pub last: bool,
}

/// The `rows × cols` tile of the output (row stride `ld`) and of the f32 scratch (row stride `ldw`,
/// empty when the product takes one pass), each slice starting at the tile's first entry.
pub(crate) struct TileOut<'a> {
    /// written only by the last pass over k
    pub out: &'a mut [MaybeUninit<bf16>],
    pub ld: usize,
    pub work: &'a mut [f32],
    pub ldw: usize,
    pub rows: usize,
    pub cols: usize,
}

/// Packs rows `ic..ic+mc`, k range `pc..pc+kc` of `a` into `MR`-row panels of k pairs (zero-padded).
///
/// `out` is reused scratch: every word of the packed block is written, padding included.
fn pack_a(a: &MatRef, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut Vec<u32>) {
    let pairs = kc.div_ceil(2);
    grow(out, mc.div_ceil(MR) * pairs * MR);
    for (ip, ir) in (0..mc).step_by(MR).enumerate() {
        let panel = &mut out[ip * pairs * MR..(ip + 1) * pairs * MR];
        let rows = MR.min(mc - ir);
        if a.cs == 1 {
            pack_a_rows(a, ic + ir, rows, pc, kc, panel);
            continue;
        }
        for r in 0..MR {
            if r >= rows {
                // Rows past the end of A: zeros.
                panel.iter_mut().skip(r).step_by(MR).for_each(|w| *w = 0);
                continue;
            }
            let i = ic + ir + r;
            for p in 0..pairs {
                let k0 = pc + 2 * p;
                let lo = a.bits(i, k0);
                let hi = if 2 * p + 1 < kc { a.bits(i, k0 + 1) } else { 0 };
                panel[p * MR + r] = lo | (hi << 16);
            }
        }
    }
}

/// One `MR`-row panel of a row-major A (`a.cs == 1`): rows `i0..i0 + rows`, k range `pc..pc + kc`.
///
/// Each pair is two neighbouring elements of one row, so the panel is written in order, one k pair
/// of every row at a time, reading `rows` row streams.
fn pack_a_rows(a: &MatRef, i0: usize, rows: usize, pc: usize, kc: usize, panel: &mut [u32]) {
    let row = |r: usize| &a.data[a.offset + (i0 + r) * a.rs + pc..][..kc];
    let word = |row: &[bf16], p: usize| row[2 * p].to_bits() as u32 | (row[2 * p + 1].to_bits() as u32) << 16;
    let whole = kc / 2;
    if rows == MR {
        let src: [&[bf16]; MR] = std::array::from_fn(row);
        for (p, dst) in panel.chunks_exact_mut(MR).take(whole).enumerate() {
            for (d, row) in dst.iter_mut().zip(&src) {
                *d = word(row, p);
            }
        }
    } else {
        for (p, dst) in panel.chunks_exact_mut(MR).take(whole).enumerate() {
            for (r, d) in dst.iter_mut().enumerate() {
                // Rows past the end of A: zeros.
                *d = if r < rows { word(row(r), p) } else { 0 };
            }
        }
    }
    if kc % 2 == 1 {
        // The last pair holds one k value.
        let dst = &mut panel[whole * MR..(whole + 1) * MR];
        for (r, d) in dst.iter_mut().enumerate() {
            *d = if r < rows { row(r)[kc - 1].to_bits() as u32 } else { 0 };
        }
    }
}

/// Packs k range `pc..pc+kc`, columns `jc..jc+nc` of `b` into `NR`-column panels of `pairs_out`
/// k pairs each (at least `kc / 2` rounded up; pairs past `kc` are zeros).
///
/// `out` is reused scratch: every word of the packed block is written, padding included. Each
/// parallel task packs a run of neighbouring panels, so that a row-major B is read in long runs.
pub(crate) fn pack_b(
    b: &MatRef,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    pairs_out: usize,
    out: &mut Aligned<u32>,
) {
    let pairs = pairs_out;
    debug_assert!(pairs >= kc.div_ceil(2));
    let panels = nc.div_ceil(NR);
    let len = panels * pairs * NR;
    let out = out.slice(len);
    let per_task = panels.div_ceil(rayon::current_num_threads().max(1));
    out.par_chunks_mut(per_task * pairs * NR).enumerate().for_each(|(t, group)| {
        let first = t * per_task;
        let cols = (nc - first * NR).min(per_task * NR);
        pack_b_group(b, pc, kc, jc + first * NR, cols, pairs, group);
    });
}

/// Packs the panels covering columns `j0..j0 + cols` of `b` (k range `pc..pc+kc`) into `group`,
/// exactly `cols.div_ceil(NR)` panels of `pairs_out` pairs, on this thread: one task of [`pack_b`].
pub(crate) fn pack_b_group(
    b: &MatRef,
    pc: usize,
    kc: usize,
    j0: usize,
    cols: usize,
    pairs_out: usize,
    group: &mut [u32],
) {
    let pairs = pairs_out;
    assert!(group.len() == cols.div_ceil(NR) * pairs * NR && pairs >= kc.div_ceil(2));
    if b.cs == 1 {
        // SAFETY: both bf16 kernels run only where `available()` holds, which includes avx512bw.
        unsafe { pack_b_rows(b, pc, kc, j0, cols, pairs, group) };
        return;
    }
    for (jp, panel) in group.chunks_mut(pairs * NR).take(cols.div_ceil(NR)).enumerate() {
        let j0 = j0 + jp * NR;
        let cols = NR.min(cols - jp * NR);
        for p in 0..pairs {
            let k0 = pc + 2 * p;
            for col in 0..NR {
                panel[p * NR + col] = if col < cols && 2 * p < kc {
                    let lo = b.bits(k0, j0 + col);
                    let hi = if 2 * p + 1 < kc { b.bits(k0 + 1, j0 + col) } else { 0 };
                    lo | (hi << 16)
                } else {
                    // Columns past the end of B: zeros.
                    0
                };
            }
        }
    }
}

/// Packs the panels of a row-major B (`b.cs == 1`) that cover columns `j0..j0 + cols`: for each k
/// pair, the two rows' slices are interleaved into every panel, 32 columns per two shuffles. Each
/// panel holds `pairs_out` pairs, those past `kc` zeros.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn pack_b_rows(
    b: &MatRef,
    pc: usize,
    kc: usize,
    j0: usize,
    cols: usize,
    pairs_out: usize,
    group: &mut [u32],
) {
    use std::arch::x86_64::*;
    let pairs = kc.div_ceil(2);
    // Word t of the first output vector is (lo[t], hi[t]); of the second, (lo[16 + t], hi[16 + t]).
    let first: [u16; 32] = std::array::from_fn(|w| (w / 2 + 32 * (w % 2)) as u16);
    let second: [u16; 32] = std::array::from_fn(|w| (16 + w / 2 + 32 * (w % 2)) as u16);
    let (first, second) =
        (_mm512_loadu_si512(first.as_ptr() as *const _), _mm512_loadu_si512(second.as_ptr() as *const _));
    let zero_row = [half::bf16::ZERO; NR];
    // Pairs per sweep over the panels: each panel then receives one contiguous run of words.
    const SWEEP: usize = 16;
    for panel in group.chunks_mut(pairs_out * NR) {
        panel[pairs * NR..].fill(0);
    }
    for p0 in (0..pairs).step_by(SWEEP) {
        for (jp, panel) in group.chunks_mut(pairs_out * NR).enumerate() {
            let here = NR.min(cols - jp * NR);
            for p in p0..pairs.min(p0 + SWEEP) {
                let k0 = pc + 2 * p;
                let lo = &b.data[b.offset + k0 * b.rs + j0 + jp * NR..][..here];
                // An odd last k value pairs with zeros.
                let hi = if 2 * p + 1 < kc {
                    &b.data[b.offset + (k0 + 1) * b.rs + j0 + jp * NR..][..here]
                } else {
                    &zero_row[..here]
                };
                let dst = &mut panel[p * NR..(p + 1) * NR];
                if here == NR {
                    // SAFETY: `lo` and `hi` hold 32 elements (64 bytes) each, `dst` 32 words.
                    let l = _mm512_loadu_si512(lo.as_ptr() as *const _);
                    let h = _mm512_loadu_si512(hi.as_ptr() as *const _);
                    _mm512_storeu_si512(dst.as_mut_ptr() as *mut _, _mm512_permutex2var_epi16(l, first, h));
                    _mm512_storeu_si512(
                        dst.as_mut_ptr().add(16) as *mut _,
                        _mm512_permutex2var_epi16(l, second, h),
                    );
                } else {
                    for (c, d) in dst.iter_mut().enumerate() {
                        // Columns past the end of B: zeros.
                        *d = if c < here {
                            lo[c].to_bits() as u32 | (hi[c].to_bits() as u32) << 16
                        } else {
                            0
                        };
                    }
                }
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn pack_b_rows(_: &MatRef, _: usize, _: usize, _: usize, _: usize, _: usize, _: &mut [u32]) {
    unreachable!("gemm_bf16::available() is false off x86-64")
}

/// Makes `buf` at least `len` long, zero-filling only what it adds.
pub(crate) fn grow<T: Copy + Default>(buf: &mut Vec<T>, len: usize) {
    if buf.len() < len {
        buf.resize(len, T::default());
    }
}

thread_local! {
    /// Each thread's packed A block and packed B block, kept between calls: allocating and
    /// faulting in fresh ones per call costs more than packing.
    static PACK_A: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
    pub(crate) static PACK_B: std::cell::Cell<Aligned<u32>> = const { std::cell::Cell::new(Aligned::new()) };
}

/// Multiplies one packed `MR`-row A panel by one packed `NR`-column B panel over `pairs` k pairs and
/// writes the first `rows × cols` entries of the result as [`Sink`] says.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
unsafe fn kernel(pairs: usize, a: &[u32], b: &[u32], tile: TileOut, sink: Sink) {
    use std::arch::x86_64::*;
    debug_assert!(a.len() >= pairs * MR && b.len() >= pairs * NR);
    let TileOut { out, ld, work, ldw, rows, cols } = tile;
    let work = work.as_mut_ptr();
    if !sink.first {
        // The partial sums are read after the loop: start fetching them now.
        for r in 0..rows {
            _mm_prefetch::<_MM_HINT_T0>(work.wrapping_add(r * ldw) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(work.wrapping_add(r * ldw + 16) as *const i8);
        }
    }
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    // One k pair into the tile: two B vectors against one broadcast A pair per row.
    // SAFETY (callers): `p < pairs`; the panels hold `pairs * MR` and `pairs * NR` words.
    let step = |acc: &mut [[__m512; 2]; MR], p: usize| {
        let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(p * NR) as *const _));
        let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(p * NR + 16) as *const _));
        for (r, acc) in acc.iter_mut().enumerate() {
            let av: __m512bh = std::mem::transmute(_mm512_set1_epi32(*ap.add(p * MR + r) as i32));
            acc[0] = _mm512_dpbf16_ps(acc[0], av, b0);
            acc[1] = _mm512_dpbf16_ps(acc[1], av, b1);
        }
    };
    // The first pair is peeled off the loop (`pairs` ≥ 1): with a loop that may not run, the
    // compiler zeroes a copy of the tile in memory on every call.
    let mut acc = [[_mm512_setzero_ps(); 2]; MR];
    step(&mut acc, 0);
    for p in 1..pairs {
        step(&mut acc, p);
    }
    // Lane masks of the two vectors of a row: `cols` ≤ 32 entries are written.
    let m0: __mmask16 = if cols >= 16 { 0xffff } else { (1u16 << cols) - 1 };
    let m1: __mmask16 = if cols >= 32 {
        0xffff
    } else if cols > 16 {
        (1u16 << (cols - 16)) - 1
    } else {
        0
    };
    let outp = out.as_mut_ptr() as *mut u16;
    for (r, acc) in acc.iter().enumerate().take(rows) {
        // SAFETY (all row accesses): `tile` covers `rows` rows of `cols` entries; the masks stop at `cols`.
        let w = work.wrapping_add(r * ldw);
        let (mut v0, mut v1) = (acc[0], acc[1]);
        if !sink.first {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, w));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, w.add(16)));
        }
        if sink.last {
            let o = outp.wrapping_add(r * ld);
            _mm256_mask_storeu_epi16(o as *mut _, m0, round_to_bf16(v0));
            _mm256_mask_storeu_epi16(o.wrapping_add(16) as *mut _, m1, round_to_bf16(v1));
        } else {
            _mm512_mask_storeu_ps(w, m0, v0);
            _mm512_mask_storeu_ps(w.add(16), m1, v1);
        }
    }
}

/// Rounds 16 f32 lanes to bf16 bits as `half::bf16::from_f32` does: to nearest, ties to even, NaN kept
/// (quieted), infinities and overflow to infinity, subnormals kept (unlike `vcvtneps2bf16`, which
/// flushes them to zero).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn round_to_bf16(v: std::arch::x86_64::__m512) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let bits = _mm512_castps_si512(v);
    let high = _mm512_srli_epi32::<16>(bits);
    let odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    let rounded =
        _mm512_srli_epi32::<16>(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))));
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
    let quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
    _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet))
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_: usize, _: &[u32], _: &[u32], _: TileOut, _: Sink) {
    unreachable!("gemm_bf16::available() is false off x86-64")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Operands of short dyadic values for an `[m, k] · [k, n]` product: A row-major, and B's
    /// columns one after another (`[n, k]` row-major). Every f32 sum of their products is exact,
    /// so a kernel's result is the exact sum rounded once to bf16 ([`assert_product`]).
    pub(crate) fn dyadic_operands(m: usize, n: usize, k: usize) -> (Vec<bf16>, Vec<bf16>) {
        let a = (0..m * k).map(|i| bf16::from_f32(((i * 7 % 13) as f32 - 6.0) / 4.0)).collect();
        let b = (0..k * n).map(|i| bf16::from_f32(((i * 5 % 11) as f32 - 5.0) / 8.0)).collect();
        (a, b)
    }

    /// Panics unless `c` (row-major `[m, n]`) is the product of [`dyadic_operands`] `a` and `b`,
    /// each entry the exact sum rounded once to bf16; `what` names the kernel in the message.
    pub(crate) fn assert_product(
        c: &[bf16],
        a: &[bf16],
        b: &[bf16],
        (m, n, k): (usize, usize, usize),
        what: &str,
    ) {
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64()).sum();
                let got = c[i * n + j];
                assert_eq!(got, bf16::from_f64(want), "{what} ({m},{n},{k}) [{i},{j}]: {got} vs {want}");
            }
        }
    }

    #[test]
    fn matches_f64_reference_on_odd_sizes_and_strides() {
        if !available() {
            return;
        }
        // (1, 130, 131) and (2, 65, 64) take the dot-product path; k > KC takes two or three passes.
        for &(m, n, k) in &[
            (1, 1, 1),
            (13, 33, 5),
            (50, 70, 385),
            (97, 31, 2),
            (1, 130, 131),
            (2, 65, 64),
            (1, 3, 33),
            (3, 3, 0),
            (14, 40, KC + 3),
            (25, 17, 2 * KC + 1),
        ] {
            let (av, bv) = dyadic_operands(m, n, k);
            let a = MatRef { data: &av, offset: 0, rs: k, cs: 1 };
            // b read transposed (column-major storage, the strided packing path) and row-major (the
            // slice packing path) must give the same product.
            let bt: Vec<bf16> = (0..k * n).map(|i| bv[(i % n) * k + i / n]).collect();
            for b in
                [MatRef { data: &bv, offset: 0, rs: 1, cs: k }, MatRef { data: &bt, offset: 0, rs: n, cs: 1 }]
            {
                let mut c = vec![bf16::NAN; m * n];
                gemm(m, n, k, a, b, &mut c);
                // The dot-product kernel itself too, where `gemm` chose the AMX one.
                assert_product(&c, &av, &bv, (m, n, k), "gemm");
                if m * n * k > 0 && !crate::gemv_bf16::applies(m, &a, &b) {
                    let mut dot = vec![MaybeUninit::new(bf16::NAN); m * n];
                    dot_product_gemm(m, n, k, a, b, &mut dot);
                    // SAFETY: every entry was initialised above.
                    let dot: Vec<bf16> = dot.iter().map(|v| unsafe { v.assume_init() }).collect();
                    assert_product(&dot, &av, &bv, (m, n, k), "dot-product kernel");
                }
            }
        }
    }

    #[test]
    fn rounds_like_half() {
        if !available() {
            return;
        }
        use std::arch::x86_64::{__m256i, _mm256_storeu_si256, _mm512_loadu_ps};
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            f32::from_bits(0x3f80_8000), // a tie, rounds down to even
            f32::from_bits(0x3f81_8000), // a tie, rounds up to even
            f32::from_bits(0x3f80_8001),
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0xffc0_0001), // a negative NaN with payload
            f32::from_bits(0x7f80_0001), // a signalling NaN
            f32::from_bits(0x0000_8001), // subnormals
            -f32::from_bits(0x0001_ffff),
            1e-40,
            -3.3e38,
        ];
        let mut got = [0u16; 16];
        // SAFETY: `available()` holds; `got` has 16 lanes.
        unsafe {
            let v = _mm512_loadu_ps(specials.as_ptr());
            _mm256_storeu_si256(got.as_mut_ptr() as *mut __m256i, round_to_bf16(v));
        }
        for (x, g) in specials.iter().zip(got) {
            let want = bf16::from_f32(*x);
            if x.is_nan() {
                assert!(bf16::from_bits(g).is_nan(), "{x:e}: {g:#x}");
            } else {
                assert_eq!(g, want.to_bits(), "{x:e}: {g:#x} vs {:#x}", want.to_bits());
            }
        }
    }
}
