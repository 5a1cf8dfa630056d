//! bf16 matrix products on the AVX512-BF16 dot-product instruction (`vdpbf16ps`), accumulating in f32.
//!
//! The classic blocked scheme: B is packed per `KC × NC` block into panels of `NR` columns in which
//! each 32-bit word holds the bf16 pair `(B[2p, j], B[2p+1, j])`; A is packed per `MC × KC` block into
//! panels of `MR` rows of pairs `(A[i, 2p], A[i, 2p+1])`. The micro-kernel keeps an `MR × NR` tile of
//! f32 accumulators in registers and, per k-pair, broadcasts one A pair per row against two B vectors.
//! Row blocks run in parallel on rayon's pool. Used only where the CPU has `avx512bf16`
//! ([`available`]); elsewhere bf16 products widen to f32 and use the f32 gemm.

use half::bf16;
use rayon::prelude::*;

/// Rows of the register tile.
const MR: usize = 12;
/// Columns of the register tile (two 16-lane vectors).
const NR: usize = 32;
/// k values per packed block (even).
const KC: usize = 384;
/// Rows per packed A block (a multiple of `MR`).
const MC: usize = 96;
/// Columns per packed B block (a multiple of `NR`).
const NC: usize = 2048;

/// True when this CPU runs the AVX512-BF16 kernel.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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

/// `c = a · b` for an `m × k` by `k × n` product; `c` is row-major `m × n` f32 (overwritten).
///
/// Callers must check [`available`] first.
pub fn gemm(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [f32]) {
    assert!(available(), "gemm_bf16 needs avx512bf16");
    assert_eq!(c.len(), m * n);
    c.fill(0.0);
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    if crate::gemv_bf16::applies(m, &a, &b) {
        return crate::gemv_bf16::gemv(m, n, k, a, b, c);
    }
    let mut bpack = Vec::new();
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            pack_b(&b, pc, kc, jc, nc, &mut bpack);
            let bpack = &bpack;
            c.par_chunks_mut(MC * n).enumerate().for_each(|(blk, crows)| {
                let ic = blk * MC;
                let mc = crows.len() / n;
                let mut apack = Vec::new();
                pack_a(&a, ic, mc, pc, kc, &mut apack);
                for (jp, jr) in (0..nc).step_by(NR).enumerate() {
                    let bpanel = &bpack[jp * kc.div_ceil(2) * NR..];
                    for (ip, ir) in (0..mc).step_by(MR).enumerate() {
                        let apanel = &apack[ip * kc.div_ceil(2) * MR..];
                        let rows = MR.min(mc - ir);
                        let cols = NR.min(nc - jr);
                        let tile = &mut crows[ir * n + jc + jr..];
                        // SAFETY: `available()` was checked above; the panels hold `kc.div_ceil(2)` pairs.
                        unsafe { kernel(kc.div_ceil(2), apanel, bpanel, tile, n, rows, cols) };
                    }
                }
            });
        }
    }
}

/// Packs rows `ic..ic+mc`, k range `pc..pc+kc` of `a` into `MR`-row panels of k pairs (zero-padded).
fn pack_a(a: &MatRef, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut Vec<u32>) {
    let pairs = kc.div_ceil(2);
    out.clear();
    out.resize(mc.div_ceil(MR) * pairs * MR, 0);
    for (ip, ir) in (0..mc).step_by(MR).enumerate() {
        let panel = &mut out[ip * pairs * MR..(ip + 1) * pairs * MR];
        for r in 0..MR.min(mc - ir) {
            let i = ic + ir + r;
            if a.cs == 1 {
                // Row-major A: each pair is two neighbouring elements of one row.
                let row = &a.data[a.offset + i * a.rs + pc..][..kc];
                for (p, pair) in row.chunks(2).enumerate() {
                    let hi = pair.get(1).map_or(0, |h| h.to_bits() as u32);
                    panel[p * MR + r] = pair[0].to_bits() as u32 | (hi << 16);
                }
                continue;
            }
            for p in 0..pairs {
                let k0 = pc + 2 * p;
                let lo = a.bits(i, k0);
                let hi = if 2 * p + 1 < kc { a.bits(i, k0 + 1) } else { 0 };
                panel[p * MR + r] = lo | (hi << 16);
            }
        }
    }
}

/// Packs k range `pc..pc+kc`, columns `jc..jc+nc` of `b` into `NR`-column panels of k pairs.
fn pack_b(b: &MatRef, pc: usize, kc: usize, jc: usize, nc: usize, out: &mut Vec<u32>) {
    let pairs = kc.div_ceil(2);
    out.clear();
    out.resize(nc.div_ceil(NR) * pairs * NR, 0);
    out.par_chunks_mut(pairs * NR).enumerate().for_each(|(jp, panel)| {
        let jr = jp * NR;
        let cols = NR.min(nc - jr);
        for p in 0..pairs {
            let k0 = pc + 2 * p;
            if b.cs == 1 {
                // Row-major B: interleave two neighbouring rows' slices.
                let row0 = &b.data[b.offset + k0 * b.rs + jc + jr..][..cols];
                let dst = &mut panel[p * NR..p * NR + cols];
                if 2 * p + 1 < kc {
                    let row1 = &b.data[b.offset + (k0 + 1) * b.rs + jc + jr..][..cols];
                    for ((d, lo), hi) in dst.iter_mut().zip(row0).zip(row1) {
                        *d = lo.to_bits() as u32 | ((hi.to_bits() as u32) << 16);
                    }
                } else {
                    for (d, lo) in dst.iter_mut().zip(row0) {
                        *d = lo.to_bits() as u32;
                    }
                }
                continue;
            }
            for col in 0..cols {
                let j = jc + jr + col;
                let lo = b.bits(k0, j);
                let hi = if 2 * p + 1 < kc { b.bits(k0 + 1, j) } else { 0 };
                panel[p * NR + col] = lo | (hi << 16);
            }
        }
    });
}

/// Adds one packed `MR × NR` product to the tile of `c` at its start (row stride `ldc`), writing
/// only the first `rows × cols` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
unsafe fn kernel(pairs: usize, a: &[u32], b: &[u32], c: &mut [f32], ldc: usize, rows: usize, cols: usize) {
    use std::arch::x86_64::*;
    let mut acc = [[_mm512_setzero_ps(); 2]; MR];
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    for p in 0..pairs {
        // SAFETY: panels hold `pairs * MR` and `pairs * NR` words.
        let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(p * NR) as *const _));
        let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(p * NR + 16) as *const _));
        for r in 0..MR {
            let av: __m512bh = std::mem::transmute(_mm512_set1_epi32(*ap.add(p * MR + r) as i32));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
        }
    }
    if rows == MR && cols == NR {
        for r in 0..MR {
            let row = c.as_mut_ptr().add(r * ldc);
            _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[r][0]));
            _mm512_storeu_ps(row.add(16), _mm512_add_ps(_mm512_loadu_ps(row.add(16)), acc[r][1]));
        }
    } else {
        let mut tile = [0f32; MR * NR];
        for r in 0..MR {
            _mm512_storeu_ps(tile.as_mut_ptr().add(r * NR), acc[r][0]);
            _mm512_storeu_ps(tile.as_mut_ptr().add(r * NR + 16), acc[r][1]);
        }
        for r in 0..rows {
            for j in 0..cols {
                c[r * ldc + j] += tile[r * NR + j];
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_: usize, _: &[u32], _: &[u32], _: &mut [f32], _: usize, _: usize, _: usize) {
    unreachable!("gemm_bf16::available() is false off x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_f64_reference_on_odd_sizes_and_strides() {
        if !available() {
            return;
        }
        for &(m, n, k) in
            &[(1, 1, 1), (13, 33, 5), (50, 70, 385), (97, 31, 2), (1, 130, 131), (2, 65, 64), (1, 3, 33)]
        {
            let av: Vec<bf16> =
                (0..m * k).map(|i| bf16::from_f32(((i * 7 % 13) as f32 - 6.0) / 4.0)).collect();
            let bv: Vec<bf16> =
                (0..k * n).map(|i| bf16::from_f32(((i * 5 % 11) as f32 - 5.0) / 8.0)).collect();
            let a = MatRef { data: &av, offset: 0, rs: k, cs: 1 };
            // b read transposed (column-major storage, the strided packing path) and row-major (the
            // slice packing path) must give the same product.
            let bt: Vec<bf16> = (0..k * n).map(|i| bv[(i % n) * k + i / n]).collect();
            for b in
                [MatRef { data: &bv, offset: 0, rs: 1, cs: k }, MatRef { data: &bt, offset: 0, rs: n, cs: 1 }]
            {
                let mut c = vec![0f32; m * n];
                gemm(m, n, k, a, b, &mut c);
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k).map(|p| av[i * k + p].to_f64() * bv[j * k + p].to_f64()).sum();
                        assert!((c[i * n + j] as f64 - want).abs() < 1e-3, "({m},{n},{k}) [{i},{j}]");
                    }
                }
            }
        }
    }
}
