//! bf16 matrix products on the AMX tile unit (`tdpbf16ps`), accumulating in f32.
//!
//! An AMX tile is 16 rows of 64 bytes. One `tdpbf16ps` multiplies a 16 × 32 bf16 A tile by a
//! 32 × 16 B tile held as 16 rows of column pairs `(B[2p, j], B[2p+1, j])` and adds the product
//! into a 16 × 16 f32 tile: 16 384 flops per instruction. The kernel keeps a 32 × 32 block of the
//! output in four accumulator tiles and, per 32 k values, loads two A tiles and two B tiles. The
//! operands stream from L2 (that, not the tile unit, bounds the kernel), so the loop loads each
//! operand tile as soon as its last product has issued, and prefetches the next B panel from L3
//! into L2 while the block's A panels meet the current one, 256 bytes a tile step each (all of
//! it in a full block of 8 A panels, part of it in smaller blocks; measured: +5–7 % at
//! `[2048, 2048]²`).
//!
//! B is packed as for the AVX512-BF16 kernel ([`crate::gemm_bf16::pack_b`]: panels of 32 columns
//! of k pairs, a B tile read from them with a 128-byte row stride), its k pairs padded with zeros
//! to whole tiles. A is packed per 32-row panel into tile order: for each 32 k values, the 32 rows'
//! runs of 32 elements (two A tiles back to back) — or, where A is row-major with its rows on
//! cache lines and the block meets few B panels, not packed at all: the tiles are loaded from A's
//! rows in place ([`reads_a_in_place`]; 64-byte rows need [`crate::AlignedAllocator`] or luck, as
//! `malloc` aligns to 16). Blocking, the split of rows across threads and
//! the f32 scratch of long products are [`crate::gemm_bf16`]'s, except that products of at most
//! 256 rows split B's panels between the threads instead ([`columns_per_thread`]); each task
//! configures the tiles of its thread, and releases them when done.
//!
//! Used only where the processor has AMX-BF16 and Linux granted this process its tile state
//! ([`available`]); elsewhere [`crate::gemm_bf16`] runs its dot-product kernel.

use half::bf16;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::gemm_bf16::{
    pack_b, pack_b_group, round_to_bf16, row_blocks, split_rows, Aligned, MatRef, Sink, TileOut, NR, PACK_B,
};
use crate::par::SendPtr;

/// Rows of an A panel and of the output block the kernel keeps in tiles (two 16-row tiles).
const MR: usize = 32;
/// k values per tile step (the 64 bytes of an A tile's row).
const KB: usize = 32;
/// Most k values per pass (a multiple of `KB`). A `KC × NR` B panel (128 KiB) and an `MC × KC`
/// A block (1 MiB) stay in the 2 MiB L2 of the cores that have AMX.
const KC: usize = 2048;
/// Most rows per packed A block (a multiple of `MR`).
const MC: usize = 256;
/// Columns per packed B block (a multiple of `NR`).
const NC: usize = 2048;
/// Padding of the f32 scratch rows, in elements (one cache line).
const SCRATCH_PAD: usize = 16;

/// True when this process runs the AMX kernel.
pub fn available() -> bool {
    crate::simd::capability() >= crate::simd::Capability::AmxBf16
}

/// `c = a · b` as [`crate::gemm_bf16::gemm_into`], on the tile unit. Callers check [`available`].
pub(crate) fn gemm_into(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [MaybeUninit<bf16>]) {
    assert!(available(), "gemm_amx needs AMX-BF16");
    debug_assert!(c.len() == m * n && m > 0 && n > 0 && k > 0);
    let passes = k.div_ceil(KC);
    let kc_max = k.div_ceil(passes).next_multiple_of(KB);
    let passes = k.div_ceil(kc_max);
    let ldw = n + SCRATCH_PAD;
    let mut scratch = if passes > 1 { crate::pool::filled(m * ldw, 0f32) } else { Vec::new() };
    if m <= MC && n.div_ceil(NR) >= rayon::current_num_threads() {
        columns_per_thread(m, n, k, a, b, c, kc_max, &mut scratch);
        if passes > 1 {
            crate::pool::give(scratch);
        }
        return;
    }
    let bounds = row_blocks(m, MR, MC);
    // Taken out of the thread-local for the call, as in `gemm_bf16`.
    let mut bpack = PACK_B.take();
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for (pass, pc) in (0..k).step_by(kc_max).enumerate() {
            let kc = kc_max.min(k - pc);
            let steps = kc.div_ceil(KB);
            pack_b(&b, pc, kc, jc, nc, steps * KB / 2, &mut bpack);
            let bpack = bpack.as_slice();
            let sink = Sink { first: pass == 0, last: pass + 1 == passes };
            split_rows(c, &mut scratch, &bounds, n, ldw).into_par_iter().for_each(|(ic, crows, wrows)| {
                let rows_here = crows.len() / n;
                let mut apack = PACK_A.take();
                let in_place = reads_a_in_place(&a, rows_here, kc, nc);
                if in_place {
                    count_in_place();
                } else {
                    pack_a(&a, ic, rows_here, pc, kc, steps, &mut apack);
                }
                let a_len = steps * MR * KB;
                let b_len = steps * KB / 2 * NR;
                let mut acc = Block([0.0; MR * NR]);
                // SAFETY: `available()` holds (the processor has AMX and the process its tile state).
                let tiles = unsafe { Tiles::configure() };
                // Each B panel meets every A panel of the block while it is in L2; each output block
                // stays in tiles for the whole pass over k.
                for (jp, jr) in (0..nc).step_by(NR).enumerate() {
                    let bpanel = &bpack[jp * b_len..(jp + 1) * b_len];
                    let next = if jr + NR < nc { jp + 1 } else { jp };
                    let next_bpanel = bpack[next * b_len..].as_ptr() as *const u8;
                    for (ip, ir) in (0..rows_here).step_by(MR).enumerate() {
                        let apanel = if in_place {
                            APanel::in_place(&a, ic + ir, pc, steps)
                        } else {
                            APanel::packed(&apack.as_slice()[ip * a_len..(ip + 1) * a_len], steps)
                        };
                        // The A panels of the block share the prefetching of the next B panel into
                        // L2 (from L3, where every row block reads it), 256 bytes a tile step each.
                        let prefetch = next_bpanel.wrapping_add(ip * steps * 256);
                        let rows = MR.min(rows_here - ir);
                        let cols = NR.min(nc - jr);
                        let col = jc + jr;
                        // Bounds of the tile in both outputs, checked before the raw writes.
                        let out = &mut crows[ir * n + col..(ir + rows - 1) * n + col + cols];
                        let work = if passes > 1 {
                            &mut wrows[ir * ldw + col..(ir + rows - 1) * ldw + col + cols]
                        } else {
                            &mut [][..]
                        };
                        // SAFETY: the tiles are configured on this thread; the panels hold `steps`
                        // tile steps each; `out`/`work` cover every entry `store` writes or reads.
                        unsafe {
                            kernel(&tiles, steps, apanel, bpanel, &mut acc, prefetch);
                            store(&acc, TileOut { out, ld: n, work, ldw, rows, cols }, sink);
                        }
                    }
                }
                drop(tiles);
                PACK_A.set(apack);
            });
        }
    }
    PACK_B.set(bpack);
    if passes > 1 {
        crate::pool::give(scratch);
    }
}

/// B panels a thread of [`columns_per_thread`] packs at a time (512 KiB at k = 2 048, beside the
/// packed A block in L2).
const GROUP: usize = 4;

/// [`gemm_into`] for products of at most [`MC`] rows (one A block, such as a prompt's tokens
/// through a weight): each thread takes a run of B panels, packs the whole A block and then its
/// panels, [`GROUP`] at a time, and multiplies each while it is still in L2. Splitting the rows
/// instead would have every thread read every packed panel back from L3 for a few A panels.
/// `scratch` holds the f32 partial sums (`m` rows of `n + SCRATCH_PAD`) when k takes several passes.
#[allow(clippy::too_many_arguments)]
fn columns_per_thread(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef,
    b: MatRef,
    c: &mut [MaybeUninit<bf16>],
    kc_max: usize,
    scratch: &mut [f32],
) {
    let passes = k.div_ceil(kc_max);
    let ldw = n + SCRATCH_PAD;
    assert!(c.len() == m * n && (passes == 1 || scratch.len() >= m * ldw));
    let panels = n.div_ceil(NR);
    let tasks = rayon::current_num_threads().clamp(1, panels);
    let (out, work) = (SendPtr(c.as_mut_ptr() as *mut u16), SendPtr(scratch.as_mut_ptr()));
    for (pass, pc) in (0..k).step_by(kc_max).enumerate() {
        let kc = kc_max.min(k - pc);
        let steps = kc.div_ceil(KB);
        let (a_len, b_len) = (steps * MR * KB, steps * KB / 2 * NR);
        let sink = Sink { first: pass == 0, last: pass + 1 == passes };
        crate::par::for_each_task(tasks, &|t| {
            let (out, work) = (out.get(), work.get());
            let mut apack = PACK_A.take();
            let mut bgroup = PACK_B_GROUP.take();
            let (first, last) = (t * panels / tasks, (t + 1) * panels / tasks);
            let in_place = reads_a_in_place(&a, m, kc, (last - first) * NR);
            if in_place {
                count_in_place();
            } else {
                pack_a(&a, 0, m, pc, kc, steps, &mut apack);
            }
            let mut acc = Block([0.0; MR * NR]);
            // SAFETY: `available()` holds (the processor has AMX and the process its tile state).
            let tiles = unsafe { Tiles::configure() };
            for g in (first..last).step_by(GROUP) {
                let group_end = (g + GROUP).min(last);
                let bpack = bgroup.slice((group_end - g) * b_len);
                pack_b_group(&b, pc, kc, g * NR, (group_end * NR).min(n) - g * NR, steps * KB / 2, bpack);
                for jp in g..group_end {
                    let bpanel = &bpack[(jp - g) * b_len..(jp - g + 1) * b_len];
                    for (ip, ir) in (0..m).step_by(MR).enumerate() {
                        let apanel = if in_place {
                            APanel::in_place(&a, ir, pc, steps)
                        } else {
                            APanel::packed(&apack.as_slice()[ip * a_len..(ip + 1) * a_len], steps)
                        };
                        let (rows, col) = (MR.min(m - ir), jp * NR);
                        let cols = NR.min(n - col);
                        // SAFETY: the tiles are configured on this thread; the panels hold `steps`
                        // tile steps each (the panel just packed is in L2: it prefetches itself).
                        // The tile's `rows × cols` entries lie inside `c` (and `scratch`) and in
                        // columns of this task's panels only, which no other task writes.
                        unsafe {
                            kernel(&tiles, steps, apanel, bpanel, &mut acc, bpanel.as_ptr() as *const u8);
                            store_at(
                                &acc,
                                out.add(ir * n + col),
                                n,
                                work.wrapping_add(ir * ldw + col),
                                ldw,
                                (rows, cols),
                                sink,
                            );
                        }
                    }
                }
            }
            drop(tiles);
            PACK_A.set(apack);
            PACK_B_GROUP.set(bgroup);
        });
    }
}

/// A 32 × 32 f32 block of the output, row-major, aligned for the tile stores.
#[repr(C, align(64))]
struct Block([f32; MR * NR]);

/// Where [`kernel`] reads a 32-row A panel: `steps` runs of `KB` k values, its rows `row` elements
/// apart and its runs `step` elements apart — [`pack_a`]'s tile order, or the rows of a row-major
/// A in place.
#[derive(Clone, Copy)]
struct APanel<'a> {
    ptr: *const u16,
    row: usize,
    step: usize,
    steps: usize,
    _data: std::marker::PhantomData<&'a [u16]>,
}

impl<'a> APanel<'a> {
    /// A panel of [`pack_a`]'s block.
    fn packed(panel: &'a [u16], steps: usize) -> Self {
        assert!(panel.len() >= steps * MR * KB, "gemm_amx: a packed A panel holds too few steps");
        APanel { ptr: panel.as_ptr(), row: KB, step: MR * KB, steps, _data: std::marker::PhantomData }
    }

    /// Rows `i..i + MR` and k values `k0..k0 + steps * KB` of a row-major `a`, read in place.
    fn in_place(a: &MatRef<'a>, i: usize, k0: usize, steps: usize) -> Self {
        assert!(a.cs == 1, "gemm_amx: only a row-major A is read in place");
        let first = a.offset + i * a.rs + k0;
        let end = first + (MR - 1) * a.rs + steps * KB;
        let rows = &a.data[first..end];
        APanel {
            ptr: rows.as_ptr() as *const u16,
            row: a.rs,
            step: KB,
            steps,
            _data: std::marker::PhantomData,
        }
    }
}

/// True when the kernel reads A's `rows × kc` block in place rather than packing it, for a block
/// of B `nc` columns wide: A row-major with its rows on 64-byte boundaries (each tile row one
/// cache line; straddling two costs more than packing), whole panels and tile steps, and few
/// enough B panels that packing, done once per block, is not amortised over many (measured on
/// `[4096, k] · [k, n]`: +5–11 % up to n = 1 536, even at 2 048, −2 % at 4 096).
fn reads_a_in_place(a: &MatRef, rows: usize, kc: usize, nc: usize) -> bool {
    let start = a.data.as_ptr() as usize + 2 * a.offset;
    a.cs == 1
        && rows.is_multiple_of(MR)
        && kc.is_multiple_of(KB)
        && start.is_multiple_of(64)
        && (2 * a.rs).is_multiple_of(64)
        && nc.div_ceil(NR) <= IN_PLACE_MAX_PANELS
}

/// A blocks read in place so far (tests check that their cases take the path).
#[cfg(test)]
static IN_PLACE_BLOCKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a block read in place (tests only).
fn count_in_place() {
    #[cfg(test)]
    IN_PLACE_BLOCKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Most B panels a block may have for its A block to be read in place ([`reads_a_in_place`]).
const IN_PLACE_MAX_PANELS: usize = 48;

/// Packs rows `ic..ic+mc`, k range `pc..pc+kc` of `a` into `MR`-row panels in tile order: for each
/// of the `steps` runs of `KB` k values, the panel's rows one after another (zeros past `kc` and
/// past the last row).
///
/// `out` is reused scratch: every element of the packed block is written, padding included.
fn pack_a(a: &MatRef, ic: usize, mc: usize, pc: usize, kc: usize, steps: usize, out: &mut Aligned<u16>) {
    let panel_len = steps * MR * KB;
    let out = out.slice(mc.div_ceil(MR) * panel_len);
    for (ip, ir) in (0..mc).step_by(MR).enumerate() {
        let panel = &mut out[ip * panel_len..(ip + 1) * panel_len];
        for r in 0..MR {
            let i = ic + ir + r;
            for s in 0..steps {
                let dst = &mut panel[(s * MR + r) * KB..(s * MR + r + 1) * KB];
                let here = if ir + r < mc { KB.min(kc - s * KB) } else { 0 };
                let k0 = pc + s * KB;
                if a.cs == 1 && here == KB {
                    // A whole run: one fixed-size copy, inlined (a `copy_from_slice` of a run-time
                    // length is a call to `memmove` per 64 bytes).
                    let src: &[bf16; KB] = a.data[a.offset + i * a.rs + k0..][..KB].try_into().unwrap();
                    let dst: &mut [u16; KB] = dst.try_into().unwrap();
                    for (d, s) in dst.iter_mut().zip(src) {
                        *d = s.to_bits();
                    }
                    continue;
                }
                if a.cs == 1 && here > 0 {
                    let src = &a.data[a.offset + i * a.rs + k0..][..here];
                    // SAFETY: `bf16` is a transparent wrapper of its `u16` bits.
                    let src = unsafe { std::slice::from_raw_parts(src.as_ptr() as *const u16, here) };
                    dst[..here].copy_from_slice(src);
                } else {
                    for (j, d) in dst[..here].iter_mut().enumerate() {
                        *d = a.data[a.offset + i * a.rs + (k0 + j) * a.cs].to_bits();
                    }
                }
                dst[here..].fill(0);
            }
        }
    }
}

thread_local! {
    /// Each thread's packed A block, kept between calls (as in `gemm_bf16`).
    static PACK_A: std::cell::Cell<Aligned<u16>> = const { std::cell::Cell::new(Aligned::new()) };
    /// Each thread's group of packed B panels in [`columns_per_thread`].
    static PACK_B_GROUP: std::cell::Cell<Aligned<u32>> = const { std::cell::Cell::new(Aligned::new()) };
}

/// The tile configuration of this thread while it lives: tiles 0–7 as 16 rows of 64 bytes.
/// Dropping it releases the tile state (`tilerelease`).
struct Tiles(std::marker::PhantomData<*const ()>);

/// `ldtilecfg`'s 64-byte operand: palette 1, then each tile's bytes per row and rows.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

const TILE_CONFIG: TileConfig = TileConfig({
    let mut cfg = [0u8; 64];
    cfg[0] = 1; // palette 1
    let mut t = 0;
    while t < 8 {
        cfg[16 + 2 * t] = 64; // bytes per row (little-endian u16)
        cfg[48 + t] = 16; // rows
        t += 1;
    }
    cfg
});

impl Tiles {
    /// Loads the tile configuration on this thread.
    ///
    /// # Safety
    /// The processor has AMX and the process its tile state ([`available`]).
    #[cfg(target_arch = "x86_64")]
    unsafe fn configure() -> Tiles {
        let cfg = &TILE_CONFIG;
        std::arch::asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
        Tiles(std::marker::PhantomData)
    }

    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn configure() -> Tiles {
        unreachable!("gemm_amx::available() is false off x86-64")
    }
}

impl Drop for Tiles {
    fn drop(&mut self) {
        // SAFETY: the tiles were configured on this thread by `configure`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::asm!("tilerelease", options(nostack, nomem));
        }
    }
}

/// Multiplies `steps` tile steps (`KB` k values each) of a 32-row A panel (packed or in place,
/// [`APanel`]) by those of a packed 32-column B panel and stores the f32 product into `acc` (row-major, 32 × 32), while
/// prefetching 256 bytes a step after the first from `prefetch` into L2 (part of the next B panel,
/// or of this one where it is already in L2; any address is valid: prefetches never fault).
///
/// # Safety
/// `_tiles` is this thread's configuration; `a` covers at least `steps` steps (its constructors
/// check the slice behind it) and `b` holds `steps * KB / 2 * NR` words.
#[cfg(target_arch = "x86_64")]
unsafe fn kernel(_tiles: &Tiles, steps: usize, a: APanel, b: &[u32], acc: &mut Block, prefetch: *const u8) {
    use std::arch::asm;
    assert!(steps > 0 && steps <= a.steps && b.len() >= steps * KB / 2 * NR);
    const _: () = assert!(KB / 2 * NR * 4 == 2048 && NR * 4 == 128);
    // One asm block from the zeroing to the stores: the compiler does not know the tile registers,
    // so no code of its own may come between instructions that keep values in them.
    // Byte offsets: a step of B is 2 048 bytes, the second B tile (columns 16–31) 64 bytes in; A's
    // step and row stride are the panel's, its second tile (rows 16–31) read through `a16`; the
    // output block's rows are 128 bytes.
    // Software-pipelined: the operand tiles of step s + 1 are loaded as soon as step s's last
    // product reading each of them has issued, so the loads overlap the products.
    asm!(
        "tilezero tmm0",
        "tilezero tmm1",
        "tilezero tmm2",
        "tilezero tmm3",
        "tileloadd tmm4, [{a} + {sa}*1]",
        "tileloadd tmm6, [{b} + {sb}*1]",
        "tileloadd tmm7, [{b} + {sb}*1 + 64]",
        "tileloadd tmm5, [{a16} + {sa}*1]",
        "dec {steps}",
        "jz 3f",
        "2:",
        "add {a}, {astep}",
        "add {a16}, {astep}",
        "add {b}, 2048",
        "tdpbf16ps tmm0, tmm4, tmm6",
        "tdpbf16ps tmm1, tmm4, tmm7",
        "tileloadd tmm4, [{a} + {sa}*1]",
        "tdpbf16ps tmm2, tmm5, tmm6",
        "tileloadd tmm6, [{b} + {sb}*1]",
        "tdpbf16ps tmm3, tmm5, tmm7",
        "tileloadd tmm5, [{a16} + {sa}*1]",
        "tileloadd tmm7, [{b} + {sb}*1 + 64]",
        "prefetcht1 [{pf}]",
        "prefetcht1 [{pf} + 64]",
        "prefetcht1 [{pf} + 128]",
        "prefetcht1 [{pf} + 192]",
        "add {pf}, 256",
        "dec {steps}",
        "jnz 2b",
        "3:",
        "tdpbf16ps tmm0, tmm4, tmm6",
        "tdpbf16ps tmm1, tmm4, tmm7",
        "tdpbf16ps tmm2, tmm5, tmm6",
        "tdpbf16ps tmm3, tmm5, tmm7",
        "tilestored [{c} + {sc}*1], tmm0",
        "tilestored [{c} + {sc}*1 + 64], tmm1",
        "tilestored [{c} + {sc}*1 + 2048], tmm2",
        "tilestored [{c} + {sc}*1 + 2112], tmm3",
        a = inout(reg) a.ptr => _,
        a16 = inout(reg) a.ptr.wrapping_add(16 * a.row) => _,
        astep = in(reg) a.step * 2,
        b = inout(reg) b.as_ptr() => _,
        steps = inout(reg) steps => _,
        pf = inout(reg) prefetch => _,
        c = in(reg) acc.0.as_mut_ptr(),
        sa = in(reg) a.row * 2,
        sb = in(reg) NR * 4,
        sc = in(reg) NR * 4,
        options(nostack),
    );
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_: &Tiles, _: usize, _: APanel, _: &[u32], _: &mut Block, _: *const u8) {
    unreachable!("gemm_amx::available() is false off x86-64")
}

/// Writes the first `rows × cols` entries of `acc` as [`Sink`] says: added to the f32 partial sums
/// unless first, then rounded to bf16 into the output if last, else stored as partial sums.
///
/// # Safety
/// The processor has AVX-512 (implied by [`available`]); `tile` covers `rows` rows of `cols` ≤ 32.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn store(acc: &Block, tile: TileOut, sink: Sink) {
    let TileOut { out, ld, work, ldw, rows, cols } = tile;
    store_at(acc, out.as_mut_ptr() as *mut u16, ld, work.as_mut_ptr(), ldw, (rows, cols), sink)
}

/// [`store`] through raw pointers: the tile's first entry of the output (bf16 bits, row stride
/// `ld`) and of the f32 partial sums (row stride `ldw`; never touched when the pass is both first
/// and last).
///
/// # Safety
/// The processor has AVX-512; the `rows × cols` (`cols` ≤ 32) entries from `outp` (and `work`,
/// unless the pass is first and last) are valid for writes (and reads), and no other thread
/// accesses them meanwhile.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn store_at(
    acc: &Block,
    outp: *mut u16,
    ld: usize,
    work: *mut f32,
    ldw: usize,
    (rows, cols): (usize, usize),
    sink: Sink,
) {
    use std::arch::x86_64::*;
    let m0: __mmask16 = if cols >= 16 { 0xffff } else { (1u16 << cols) - 1 };
    let m1: __mmask16 = if cols >= 32 {
        0xffff
    } else if cols > 16 {
        (1u16 << (cols - 16)) - 1
    } else {
        0
    };
    for r in 0..rows {
        // SAFETY (all row accesses): the caller makes `rows` rows of `cols` entries valid; the masks
        // stop at `cols`.
        let mut v0 = _mm512_loadu_ps(acc.0.as_ptr().add(r * NR));
        let mut v1 = _mm512_loadu_ps(acc.0.as_ptr().add(r * NR + 16));
        let w = work.wrapping_add(r * ldw);
        if !sink.first {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, w));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, w.wrapping_add(16)));
        }
        if sink.last {
            let o = outp.wrapping_add(r * ld);
            _mm256_mask_storeu_epi16(o as *mut _, m0, round_to_bf16(v0));
            _mm256_mask_storeu_epi16(o.wrapping_add(16) as *mut _, m1, round_to_bf16(v1));
        } else {
            _mm512_mask_storeu_ps(w, m0, v0);
            _mm512_mask_storeu_ps(w.wrapping_add(16), m1, v1);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn store(_: &Block, _: TileOut, _: Sink) {
    unreachable!("gemm_amx::available() is false off x86-64")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn store_at(_: &Block, _: *mut u16, _: usize, _: *mut f32, _: usize, _: (usize, usize), _: Sink) {
    unreachable!("gemm_amx::available() is false off x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm_bf16::tests::{assert_product, dyadic_operands};

    /// The tile kernel against an f64 reference, on sizes that leave partial tiles in every
    /// direction, several passes over k, and strided operands.
    #[test]
    fn matches_f64_reference_on_odd_sizes_and_strides() {
        if !available() {
            return;
        }
        for &(m, n, k) in &[
            (1, 1, 1),
            (13, 33, 5),
            (50, 70, 385),
            (97, 31, 2),
            (32, 32, 32),
            (33, 65, 31),
            (3, 200, 64),
            (140, 40, KC + 3),
            (25, 17, 2 * KC + 33),
            (600, 40, 100),
            (270, 70, KC + 5),
            (256, 9 * NR + 3, 64),
            (31, 11 * NR + 7, KC + 40),
            (27, 5 * NR + 1, 2 * KC + 33),
            (3, NC + 40, 40),
        ] {
            let (av, bv) = dyadic_operands(m, n, k);
            // A read row-major and column-major (the strided packing path); B likewise.
            let at: Vec<bf16> = (0..m * k).map(|i| av[(i % m) * k + i / m]).collect();
            let bt: Vec<bf16> = (0..k * n).map(|i| bv[(i % n) * k + i / n]).collect();
            // A inside a padded buffer: an offset and a row stride past k.
            let lda = k + 3;
            let apad: Vec<bf16> = (0..5 + m * lda)
                .map(|i| {
                    if i >= 5 && (i - 5) % lda < k {
                        av[(i - 5) / lda * k + (i - 5) % lda]
                    } else {
                        bf16::NAN
                    }
                })
                .collect();
            let a_views = [
                MatRef { data: &apad, offset: 5, rs: lda, cs: 1 },
                MatRef { data: &av, offset: 0, rs: k, cs: 1 },
                MatRef { data: &at, offset: 0, rs: 1, cs: m },
            ];
            let b_views = [
                MatRef { data: &bv, offset: 0, rs: 1, cs: k },
                MatRef { data: &bt, offset: 0, rs: n, cs: 1 },
            ];
            for a in a_views {
                for b in b_views {
                    let mut c = vec![MaybeUninit::new(bf16::NAN); m * n];
                    // One thread too: then a task holds several 32-row panels.
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(1 + (m % 2)).build().unwrap();
                    pool.install(|| gemm_into(m, n, k, a, b, &mut c));
                    // SAFETY: every entry started initialised (and `gemm_into` writes each).
                    let c: Vec<bf16> = c.iter().map(|v| unsafe { v.assume_init() }).collect();
                    assert_product(&c, &av, &bv, (m, n, k), "AMX kernel");
                }
            }
        }
    }

    /// A row-major A whose rows start on cache lines is read in place (no packing), on the column
    /// split and the row split, over one and several passes over k, on one and two threads, and
    /// beside packed blocks (a last pass or row block that is not whole tile steps or panels): the
    /// same exact products. Each row's padding past k holds NaN, which a read past k would spread.
    #[test]
    fn reads_an_aligned_row_major_a_in_place() {
        use std::sync::atomic::Ordering::Relaxed;
        if !available() {
            return;
        }
        for &(m, n, k) in &[
            (64, 5 * NR + 7, 96),
            (32, 3 * NR, KC + 64),
            (288, 2 * NR + 5, 160),
            (320, 40, 2 * KC + 64),
            // Passes of 1 056 and 1 040 k values (the second packed); row blocks of 160 and 144.
            (320, 40, KC + 48),
            (304, 40, 160),
        ] {
            let (av, bv) = dyadic_operands(m, n, k);
            let lda = k.next_multiple_of(KB) + KB;
            let mut buf = vec![bf16::NAN; m * lda + KB];
            // The first element on a 64-byte boundary (bf16 elements are 2-aligned).
            let offset = (64 - buf.as_ptr() as usize % 64) % 64 / 2;
            for i in 0..m {
                buf[offset + i * lda..][..k].copy_from_slice(&av[i * k..][..k]);
            }
            let a = MatRef { data: &buf, offset, rs: lda, cs: 1 };
            let b = MatRef { data: &bv, offset: 0, rs: 1, cs: k };
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut c = vec![MaybeUninit::new(bf16::NAN); m * n];
                let before = IN_PLACE_BLOCKS.load(Relaxed);
                pool.install(|| gemm_into(m, n, k, a, b, &mut c));
                let read_in_place = IN_PLACE_BLOCKS.load(Relaxed) - before;
                assert!(read_in_place > 0, "({m},{n},{k}) on {threads} threads: no A block read in place");
                // SAFETY: every entry started initialised (and `gemm_into` writes each).
                let c: Vec<bf16> = c.iter().map(|v| unsafe { v.assume_init() }).collect();
                assert_product(&c, &av, &bv, (m, n, k), "AMX kernel, A in place");
            }
        }
    }
}
