//! Batched matrix products: gemm for floats, a blocked loop for integers.

use std::mem::MaybeUninit;

use gemm::Parallelism;
use half::{bf16, f16};
use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};
use rayon::prelude::*;

use crate::binary::dtype_mismatch;
use crate::gemv::{Skinny, SKINNY_MAX_M};
use crate::storage::{CpuElement, CpuStorage};
use crate::unary::Int;
use crate::walk::Plan;

type Operand<'a> = (&'a CpuStorage, &'a Layout);

/// Shapes of a batched product: batch dims, then `m`, `k`, `n`.
pub struct Dims {
    batch: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
}

fn dims(la: &Layout, lb: &Layout) -> Result<Dims> {
    let (ra, rb) = (la.rank(), lb.rank());
    let bad = || {
        Error::shape(format!(
            "matmul: expected [..., m, k] and [..., k, n] with equal batch dims, got {} and {}",
            la.shape(),
            lb.shape()
        ))
    };
    if ra < 2
        || ra != rb
        || la.dims()[..ra - 2] != lb.dims()[..rb - 2]
        || la.dims()[ra - 1] != lb.dims()[rb - 2]
    {
        return Err(bad());
    }
    Ok(Dims {
        batch: la.dims()[..ra - 2].to_vec(),
        m: la.dims()[ra - 2],
        k: la.dims()[ra - 1],
        n: lb.dims()[rb - 1],
    })
}

/// Storage offsets of every batch's first element for `l` (batch dims are all but the last two).
fn batch_offsets(l: &Layout) -> Vec<usize> {
    let r = l.rank();
    let bl = Layout::new(l.dims()[..r - 2].to_vec(), l.strides()[..r - 2].to_vec(), l.offset())
        .expect("same rank");
    let plan = Plan::new([&bl]);
    let [s] = plan.inner_strides();
    let mut offs = Vec::with_capacity(bl.numel());
    plan.for_runs(0, bl.numel(), |[o], len| offs.extend((0..len).map(|i| o + i * s)));
    offs
}

/// Row and column strides of the last two dims of `l`, as gemm wants them (column stride first);
/// the stride of a size-1 dim is never used, so it is passed as 0 (it may not fit in `isize`).
fn mat_strides(l: &Layout) -> (isize, isize) {
    let r = l.rank();
    let stride = |d: usize| if l.dims()[d] <= 1 { 0 } else { l.strides()[d] as isize };
    (stride(r - 1), stride(r - 2))
}

/// Checks that every element `layout` addresses lies inside a buffer of `len` elements (with
/// overflow-checked arithmetic) and that its strides fit gemm's `isize`: the raw-pointer gemm calls
/// below rely on it, whatever layout a caller passes.
pub(crate) fn check_bounds(op: &str, len: usize, l: &Layout) -> Result<()> {
    if l.numel() == 0 {
        // Addresses nothing: an empty view may start anywhere, as in torch.
        return Ok(());
    }
    let extent = l.checked_storage_extent();
    let strides_fit = l.dims().iter().zip(l.strides()).all(|(&d, &s)| d <= 1 || s <= isize::MAX as usize);
    if extent.is_none_or(|e| e > len) || !strides_fit {
        return Err(Error::shape(format!(
            "{op}: layout {:?} reaches outside its storage of {len} elements",
            l
        )));
    }
    Ok(())
}

/// Most rows of a product that copies any large column-major B first (see [`copies_b_first`]).
const SHORT_M: usize = 48;

/// Fewest elements of a column-major B that a short product copies first.
const SHORT_M_MIN_B: usize = 1 << 16;

/// True when a column-major B (a transposed weight, as `linear` passes it: unit stride along k)
/// is better transposed into a row-major copy before gemm, which otherwise reads it in place,
/// several strided columns at a time:
///
/// - when its column stride is a multiple of 1 KiB, those columns fall into the same few cache sets:
///   `[256, 1024] @ [1024, 1024]ᵀ` ran at 115 GFLOP/s, 186 with the copy, and `[32, 1024] @ [1024,
///   1024]ᵀ` took 2.5 ms, 0.66 ms with the copy (measured on the bench machine);
/// - for a short product (`m` ≤ [`SHORT_M`]) of a large B at any stride, which gains less:
///   `[32, 768] @ [3072, 768]ᵀ` took 1.8 ms, 1.6 ms with the copy, `[17, 384] @ [1536, 384]ᵀ` 0.23 ms,
///   0.20 ms with it.
///
/// Never for one row (gemm's vector path), nor for a B broadcast along a batch dim (the copy would
/// repeat it).
fn copies_b_first<T>(lb: &Layout, d: &Dims) -> bool {
    let r = lb.rank();
    let (k_stride, n_stride) = (lb.strides()[r - 2], lb.strides()[r - 1]);
    let batch_broadcast = lb.strides()[..r - 2].iter().zip(lb.dims()).any(|(&s, &n)| s == 0 && n > 1);
    let aliased = (n_stride * std::mem::size_of::<T>()).is_multiple_of(1024);
    let short = d.m <= SHORT_M && d.k.saturating_mul(d.n) >= SHORT_M_MIN_B;
    d.m >= 2 && d.n > 1 && d.k > 1 && k_stride == 1 && !batch_broadcast && (aliased || short)
}

fn gemm_typed<T: CpuElement>(a: &[T], la: &Layout, b: &[T], lb: &Layout, d: &Dims) -> Vec<T> {
    // gemm overwrites the whole output without reading it (`read_dst = false`), so it starts
    // uninitialised rather than zero-filled (a memset per product).
    let total = d.batch.iter().product::<usize>() * d.m * d.n;
    let mut out: Vec<T> = crate::pool::take(total);
    gemm_into(a, la, b, lb, d, &mut out.spare_capacity_mut()[..total]);
    // SAFETY: `gemm_into` wrote every element of every batch.
    unsafe { out.set_len(total) };
    out
}

/// [`gemm_typed`] into `out`, which holds exactly the row-major `[batches, m, n]` result and is
/// written entirely.
fn gemm_into<T: CpuElement>(
    a: &[T],
    la: &Layout,
    b: &[T],
    lb: &Layout,
    d: &Dims,
    out: &mut [MaybeUninit<T>],
) {
    let (m, k, n) = (d.m, d.k, d.n);
    assert_eq!(out.len(), d.batch.iter().product::<usize>() * m * n, "gemm: output of the wrong length");
    if m * n == 0 {
        return;
    }
    if k == 0 {
        out.fill(MaybeUninit::new(T::ZERO));
        return;
    }
    // f32 on AVX2 machines: our kernel, which packs transposed and strided operands itself.
    let avx2 = f32_slice(a).is_some() && crate::gemm_f32_avx2::preferred_for(m, n, k);
    if !avx2 && copies_b_first::<T>(lb, d) {
        let row_major = crate::copy::contiguous_same(b, lb);
        gemm_into(a, la, &row_major, &Layout::contiguous(lb.shape()), d, out);
        crate::pool::give(row_major);
        return;
    }
    let batches = out.len() / (m * n);
    let (a_off, b_off) = (batch_offsets(la), batch_offsets(lb));
    let (acs, ars) = mat_strides(la);
    let (bcs, brs) = mat_strides(lb);
    let flops = m * n * k;
    let run = |(i, dst): (usize, &mut [MaybeUninit<T>]), par: Parallelism| {
        if let (true, Some(a), Some(b), Some(dst)) = (avx2, f32_slice(a), f32_slice(b), f32_out(dst)) {
            use crate::gemm_f32_avx2::{gemm_into as avx2_gemm_into, MatRef};
            // Strides are non-negative (`mat_strides` passes `usize` strides, or 0).
            let am = MatRef { data: a, offset: a_off[i], rs: ars as usize, cs: acs as usize };
            let bm = MatRef { data: b, offset: b_off[i], rs: brs as usize, cs: bcs as usize };
            avx2_gemm_into(m, n, k, am, bm, dst, matches!(par, Parallelism::Rayon(_)));
            return;
        }
        // SAFETY: the layouts were validated against their storages, so every (row, col) of each
        // batch addresses an element inside `a` and `b`; `dst` is an m×n row-major block that gemm
        // writes entirely and, with `read_dst = false`, never reads.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                dst.as_mut_ptr() as *mut T,
                1,
                n as isize,
                false,
                a.as_ptr().add(a_off[i]),
                acs,
                ars,
                b.as_ptr().add(b_off[i]),
                bcs,
                brs,
                T::ZERO,
                T::ONE,
                false,
                false,
                false,
                par,
            )
        }
    };
    let threads = rayon::current_num_threads();
    // Batches run in parallel (each product on one thread, no synchronisation inside) when they keep
    // every thread equally busy: always for small products, and for large ones when the batches
    // divide evenly among the threads or there are several per thread (the imbalance is then at most
    // one batch in four). Otherwise each product is split across the threads in turn.
    let even = batches.is_multiple_of(threads) || batches >= 4 * threads;
    if batches >= threads && (flops < (1 << 21) || even) {
        crate::par::for_each_chunk_mut(out, m * n, &|i, c| run((i, c), Parallelism::None));
    } else {
        let par = if flops >= (1 << 15) { Parallelism::Rayon(threads) } else { Parallelism::None };
        out.chunks_mut(m * n).enumerate().for_each(|c| run(c, par));
    }
}

/// `x` as f32 values when `T` is f32.
fn f32_slice<T: 'static>(x: &[T]) -> Option<&[f32]> {
    // SAFETY: `T` is f32, so the slice is one of f32 values.
    (std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>())
        .then(|| unsafe { &*(x as *const [T] as *const [f32]) })
}

/// `out` as uninitialised f32 values when `T` is f32.
fn f32_out<T: 'static>(out: &mut [MaybeUninit<T>]) -> Option<&mut [MaybeUninit<f32>]> {
    // SAFETY: `T` is f32, so the slice is one of (uninitialised) f32 values.
    (std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>())
        .then(|| unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [MaybeUninit<f32>]) })
}

fn int_typed<T: Int>(a: &[T], la: &Layout, b: &[T], lb: &Layout, d: &Dims) -> Vec<T> {
    let batches: usize = d.batch.iter().product();
    let (m, k, n) = (d.m, d.k, d.n);
    let mut out = crate::pool::filled(batches * m * n, T::ZERO);
    if m * n == 0 {
        return out;
    }
    let (a_off, b_off) = (batch_offsets(la), batch_offsets(lb));
    let r = la.rank();
    let (ars, acs) = (la.strides()[r - 2], la.strides()[r - 1]);
    let (brs, bcs) = (lb.strides()[r - 2], lb.strides()[r - 1]);
    out.par_chunks_mut(n).enumerate().for_each(|(row, dst)| {
        let (bi, i) = (row / m, row % m);
        for p in 0..k {
            let x = a[a_off[bi] + i * ars + p * acs];
            let brow = b_off[bi] + p * brs;
            for (j, o) in dst.iter_mut().enumerate() {
                *o = o.wadd(x.wmul(b[brow + j * bcs]));
            }
        }
    });
    out
}

/// True for a skinny product (`m` ≤ [`SKINNY_MAX_M`]) whose A rows and B columns are both contiguous
/// along k, as `linear` at batch 1 or over a short prompt (rows times a transposed weight): a
/// memory-bound product that the packing gemm would slow down by copying the whole weight first.
fn skinny_applies(la: &Layout, lb: &Layout, d: &Dims) -> bool {
    let r = la.rank();
    (1..=SKINNY_MAX_M).contains(&d.m)
        && d.k > 0
        && d.n > 0
        && la.strides()[r - 1] == 1
        && lb.strides()[r - 2] == 1
}

/// The operands of a skinny product (see [`crate::gemv`]), with `offs` holding A's and B's batch
/// offsets.
fn skinny<'a, T>(
    a: &'a [T],
    la: &Layout,
    b: &'a [T],
    lb: &Layout,
    d: &Dims,
    offs: &'a (Vec<usize>, Vec<usize>),
) -> Skinny<'a, T> {
    let r = la.rank();
    Skinny {
        a,
        a_offs: &offs.0,
        ars: la.strides()[r - 2],
        b,
        b_offs: &offs.1,
        bcs: lb.strides()[r - 1],
        m: d.m,
        n: d.n,
        k: d.k,
    }
}

/// bf16 products on the AVX512-BF16 kernel, batch by batch, accumulating in f32 and rounding once.
fn bf16_dot(a: &[bf16], la: &Layout, b: &[bf16], lb: &Layout, d: &Dims) -> Vec<bf16> {
    use crate::gemm_bf16::{gemm_into, MatRef};
    let (m, k, n) = (d.m, d.k, d.n);
    let (a_off, b_off) = (batch_offsets(la), batch_offsets(lb));
    let r = la.rank();
    let (ars, acs) = (la.strides()[r - 2], la.strides()[r - 1]);
    let (brs, bcs) = (lb.strides()[r - 2], lb.strides()[r - 1]);
    let total = a_off.len() * m * n;
    if total == 0 {
        return Vec::new();
    }
    // Each product writes its whole block, so the output starts uninitialised (no memset).
    let mut out: Vec<bf16> = crate::pool::take(total);
    let blocks = out.spare_capacity_mut()[..total].chunks_mut(m * n);
    for (c, (&ao, &bo)) in blocks.zip(a_off.iter().zip(&b_off)) {
        let am = MatRef { data: a, offset: ao, rs: ars, cs: acs };
        let bm = MatRef { data: b, offset: bo, rs: brs, cs: bcs };
        gemm_into(m, n, k, am, bm, c);
    }
    // SAFETY: `gemm_into` wrote every entry of every batch.
    unsafe { out.set_len(total) };
    out
}

/// Fewest products per element converted ([`widening_pays`]).
const WIDEN_MIN_REUSE: usize = 128;

/// True when an f16 product runs faster as an f32 one on widened copies ([`widened_product`]) than
/// on gemm's f16 path: when each element widened or narrowed takes part in at least
/// [`WIDEN_MIN_REUSE`] products (`m·n·k ≥ 128·(m·k + k·n + m·n)`), and no operand is broadcast along
/// a batch dim (its copy would repeat it). gemm's f16 path converts while packing and ran at 286
/// GFLOP/s on `[2048, 2048]²`, widened 381 (the f32 product runs at 440; an Intel Xeon with
/// AVX-512), and both paths ran at the same speed just below the threshold (`[128, 2048] · [2048,
/// 2048]`). The copies hold the operands and the result in f32 at once.
fn widening_pays(la: &Layout, lb: &Layout, d: &Dims) -> bool {
    let broadcast = |l: &Layout| {
        let r = l.rank();
        l.strides()[..r - 2].iter().zip(l.dims()).any(|(&s, &n)| s == 0 && n > 1)
    };
    let (m, k, n) = (d.m as u128, d.k as u128, d.n as u128);
    // Sizes past 2^64 are empty products (`checked_dims` bounds the others): nothing to widen.
    let products = m.checked_mul(n).and_then(|mn| mn.checked_mul(k));
    let pays = products.is_some_and(|p| p >= WIDEN_MIN_REUSE as u128 * (m * k + k * n + m * n));
    pays && !broadcast(la) && !broadcast(lb)
}

/// `a · b` of half-precision operands as an f32 product of widened contiguous copies, each result
/// rounded once by `narrow` (the products are exact in f32 and sum in f32, as gemm's half paths).
fn widened_product<T: Copy + Send + Sync + 'static>(
    a: &CpuStorage,
    la: &Layout,
    b: &CpuStorage,
    lb: &Layout,
    d: &Dims,
    narrow: impl Fn(f32) -> T + Sync + Copy,
) -> Result<Vec<T>> {
    let wa = crate::copy::to_contiguous(a, la, DType::F32)?;
    let wb = crate::copy::to_contiguous(b, lb, DType::F32)?;
    let (ca, cb) = (Layout::contiguous(la.shape()), Layout::contiguous(lb.shape()));
    let r = gemm_typed(wa.as_slice::<f32>()?, &ca, wb.as_slice::<f32>()?, &cb, d);
    let out = crate::walk::map1(&r, &Layout::contiguous([r.len()]), narrow);
    crate::pool::give(r);
    Ok(out)
}

/// Multiplies `[..., m, k]` by `[..., k, n]` (equal batch dims, any strides, stride 0 allowed).
pub fn matmul((a, la): Operand, (b, lb): Operand) -> Result<CpuStorage> {
    let (d, _) = checked_dims((a.len(), la), (b.len(), lb))?;
    use CpuStorage as S;
    Ok(match (a, b) {
        (S::F32(x), S::F32(y)) if skinny_applies(la, lb, &d) => {
            let offs = (batch_offsets(la), batch_offsets(lb));
            S::F32(crate::gemv_f32::matmul(&skinny(x, la, y, lb, &d, &offs)).into())
        }
        (S::F32(x), S::F32(y)) => S::F32(gemm_typed(x, la, y, lb, &d).into()),
        (S::F64(x), S::F64(y)) => S::F64(gemm_typed(x, la, y, lb, &d).into()),
        (S::F16(x), S::F16(y)) if skinny_applies(la, lb, &d) => {
            let offs = (batch_offsets(la), batch_offsets(lb));
            S::F16(crate::gemv_half::matmul(&skinny(x, la, y, lb, &d, &offs)).into())
        }
        (S::F16(_), S::F16(_)) if widening_pays(la, lb, &d) => {
            S::F16(widened_product(a, la, b, lb, &d, oxtorch_core::half_convert::f32_to_f16)?.into())
        }
        (S::F16(x), S::F16(y)) => S::F16(gemm_typed::<f16>(x, la, y, lb, &d).into()),
        (S::BF16(x), S::BF16(y)) if skinny_applies(la, lb, &d) => {
            let offs = (batch_offsets(la), batch_offsets(lb));
            let p = skinny(x, la, y, lb, &d, &offs);
            S::BF16(
                if crate::gemm_bf16::available() {
                    crate::gemv_bf16::matmul(&p)
                } else {
                    crate::gemv_half::matmul(&p)
                }
                .into(),
            )
        }
        (S::BF16(x), S::BF16(y)) if crate::gemm_bf16::available() => {
            S::BF16(bf16_dot(x, la, y, lb, &d).into())
        }
        (S::BF16(_), S::BF16(_)) => {
            // No bf16 dot-product instructions.
            S::BF16(widened_product(a, la, b, lb, &d, oxtorch_core::half_convert::f32_to_bf16)?.into())
        }
        (S::U8(x), S::U8(y)) => S::U8(int_typed(x, la, y, lb, &d).into()),
        (S::I8(x), S::I8(y)) => S::I8(int_typed(x, la, y, lb, &d).into()),
        (S::I16(x), S::I16(y)) => S::I16(int_typed(x, la, y, lb, &d).into()),
        (S::I32(x), S::I32(y)) => S::I32(int_typed(x, la, y, lb, &d).into()),
        (S::I64(x), S::I64(y)) => S::I64(int_typed(x, la, y, lb, &d).into()),
        (S::Bool(_), S::Bool(_)) => return Err(Error::UnsupportedDType { op: "matmul", dtype: a.dtype() }),
        _ => return Err(dtype_mismatch("matmul", a, b)),
    })
}

/// A float whose products run on borrowed slices ([`matmul_slices`], [`matmul_slices_into`]).
pub trait SliceMatmul: CpuElement {
    /// The product of validated operands into `out`, exactly its length (see
    /// [`matmul_slices_into`]).
    #[doc(hidden)]
    fn product_into(
        a: &[Self],
        la: &Layout,
        b: &[Self],
        lb: &Layout,
        d: &Dims,
        out: &mut [MaybeUninit<Self>],
    );
}

impl SliceMatmul for f32 {
    fn product_into(a: &[f32], la: &Layout, b: &[f32], lb: &Layout, d: &Dims, out: &mut [MaybeUninit<f32>]) {
        if skinny_applies(la, lb, d) {
            let offs = (batch_offsets(la), batch_offsets(lb));
            crate::gemv_f32::matmul_into(&skinny(a, la, b, lb, d, &offs), out)
        } else {
            gemm_into(a, la, b, lb, d, out)
        }
    }
}

impl SliceMatmul for f64 {
    fn product_into(a: &[f64], la: &Layout, b: &[f64], lb: &Layout, d: &Dims, out: &mut [MaybeUninit<f64>]) {
        gemm_into(a, la, b, lb, d, out)
    }
}

/// [`matmul`] on borrowed slices: `[..., m, k] × [..., k, n]` over the storages `a` and `b` seen
/// through `la` and `lb`, as a row-major `Vec` (taken from [`crate::pool`]; hand it back with
/// [`crate::pool::give`]). For another runtime's buffers: XLA programs on the CPU plugin call it
/// from a custom call without copying their operands.
pub fn matmul_slices<T: SliceMatmul>(a: &[T], la: &Layout, b: &[T], lb: &Layout) -> Result<Vec<T>> {
    let (d, total) = checked_dims((a.len(), la), (b.len(), lb))?;
    let mut out: Vec<T> = crate::pool::take(total);
    T::product_into(a, la, b, lb, &d, &mut out.spare_capacity_mut()[..total]);
    // SAFETY: `product_into` wrote all `total` elements.
    unsafe { out.set_len(total) };
    Ok(out)
}

/// [`matmul_slices`] into `out`, which must hold exactly the row-major result (`[..., m, n]`) and
/// is written entirely: the result buffer of a custom call in an XLA program, with no copy.
pub fn matmul_slices_into<T: SliceMatmul>(
    a: &[T],
    la: &Layout,
    b: &[T],
    lb: &Layout,
    out: &mut [MaybeUninit<T>],
) -> Result<()> {
    let (d, total) = checked_dims((a.len(), la), (b.len(), lb))?;
    if out.len() != total {
        return Err(Error::shape(format!(
            "matmul: a result of {} elements for a product of {total} ({} × {})",
            out.len(),
            la.shape(),
            lb.shape()
        )));
    }
    T::product_into(a, la, b, lb, &d, out);
    Ok(())
}

/// The dims of the product of storages of `(len, layout)`, after checking the shapes, that the
/// layouts stay inside their storages, and that the result's element count (returned too) fits.
fn checked_dims((a_len, la): (usize, &Layout), (b_len, lb): (usize, &Layout)) -> Result<(Dims, usize)> {
    let d = dims(la, lb)?;
    check_bounds("matmul", a_len, la)?;
    check_bounds("matmul", b_len, lb)?;
    let batches = oxtorch_core::checked_numel(&d.batch)?;
    let total = oxtorch_core::checked_numel(&[batches, d.m, d.n])?;
    Ok((d, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    /// The skinny path against the packing gemm, on odd sizes, batches and offsets.
    #[test]
    fn skinny_matches_gemm() {
        for (batch, m, k, n) in [
            (1, 1, 1, 1),
            (1, 1, 17, 65),
            (1, 2, 100, 130),
            (3, 1, 33, 7),
            (2, 2, 16, 64),
            (2, 7, 130, 70),
            (1, 16, 768, 300),
        ] {
            let a = values(batch * m * k + 3, 1);
            let w = values(batch * n * k + 5, 2);
            // A: row-major [batch, m, k] at offset 3; B: the transpose of row-major [batch, n, k] at offset 5.
            let la = Layout::new([batch, m, k], vec![m * k, k, 1], 3).unwrap();
            let lb = Layout::new([batch, k, n], vec![n * k, 1, k], 5).unwrap();
            let d = dims(&la, &lb).unwrap();
            assert!(skinny_applies(&la, &lb, &d));
            let offs = (batch_offsets(&la), batch_offsets(&lb));
            let fast = crate::gemv_f32::matmul(&skinny(&a, &la, &w, &lb, &d, &offs));
            let reference = gemm_typed(&a, &la, &w, &lb, &d);
            assert_eq!(fast.len(), reference.len());
            for (i, (x, y)) in fast.iter().zip(&reference).enumerate() {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "({batch},{m},{k},{n})[{i}]: {x} vs {y}");
            }
        }
        // A B that is not contiguous along k takes the gemm.
        let la = Layout::contiguous([1, 4]);
        let lb = Layout::contiguous([4, 3]);
        assert!(!skinny_applies(&la, &lb, &dims(&la, &lb).unwrap()));
        // Neither does a product of more than SKINNY_MAX_M rows.
        let la = Layout::contiguous([SKINNY_MAX_M + 1, 4]);
        let lb = Layout::new([4, 3], vec![1, 4], 0).unwrap();
        assert!(!skinny_applies(&la, &lb, &dims(&la, &lb).unwrap()));
    }

    /// A column-major B with a 1 KiB column stride, or a large one in a short product, is copied
    /// before the product; the result is the product's, for batches, an offset and odd sizes.
    #[test]
    fn column_major_b_copied_first_gives_the_product() {
        for (batch, m, k, n, stride) in [(2, 67, 256, 33, 256), (1, 20, 300, 260, 301)] {
            let a = values(batch * m * k, 3);
            let w = values(batch * n * stride + 5, 4);
            let la = Layout::contiguous([batch, m, k]);
            let lb = Layout::new([batch, k, n], vec![n * stride, 1, stride], 5).unwrap();
            let d = dims(&la, &lb).unwrap();
            assert!(copies_b_first::<f32>(&lb, &d));
            let got = gemm_typed(&a, &la, &w, &lb, &d);
            for bi in 0..batch {
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k)
                            .map(|p| {
                                a[(bi * m + i) * k + p] as f64
                                    * w[5 + bi * n * stride + j * stride + p] as f64
                            })
                            .sum();
                        let x = got[(bi * m + i) * n + j] as f64;
                        assert!(
                            (x - want).abs() <= 1e-4 * (1.0 + want.abs()),
                            "[{bi},{i},{j}]: {x} vs {want}"
                        );
                    }
                }
            }
        }
        let (batch, k, n) = (2, 256, 33);
        let lb = Layout::new([batch, k, n], vec![n * k, 1, k], 5).unwrap();
        let d = dims(&Layout::contiguous([batch, 67, k]), &lb).unwrap();
        // Other strides in long products, one-row products and broadcast batches go to gemm as
        // they are.
        let odd = Layout::new([batch, k, n], vec![n * 300, 1, 300], 0).unwrap();
        assert!(!copies_b_first::<f32>(&odd, &d));
        let one_row = dims(&Layout::contiguous([batch, 1, k]), &lb).unwrap();
        assert!(!copies_b_first::<f32>(&lb, &one_row));
        let broadcast = Layout::new([batch, k, n], vec![0, 1, k], 0).unwrap();
        assert!(!copies_b_first::<f32>(&broadcast, &d));
    }

    /// f16 products large enough to be widened to f32: batched, at offsets, with a transposed B,
    /// against exact sums rounded once to f16. The values are multiples of 1/64 in [-2, 2], so
    /// every product and partial sum is exact in f32 in any order while the results need
    /// rounding to f16: the widened path and gemm's f16 path must both give them bit for bit. A B
    /// broadcast along the batch is not widened.
    #[test]
    fn f16_products_widened_to_f32_round_once_to_f16() {
        let (batch, m, k, n) = (2, 390, 400, 410);
        let sixty_fourths = |len: usize, seed: u32| -> Vec<f16> {
            values(len, seed).iter().map(|v| f16::from_f32((v * 128.0).round() / 64.0)).collect()
        };
        let (a, w) = (sixty_fourths(batch * m * k + 3, 7), sixty_fourths(batch * n * k + 5, 8));
        let la = Layout::new([batch, m, k], vec![m * k, k, 1], 3).unwrap();
        let lb = Layout::new([batch, k, n], vec![n * k, 1, k], 5).unwrap();
        let d = dims(&la, &lb).unwrap();
        assert!(widening_pays(&la, &lb, &d));
        let (sa, sb) = (CpuStorage::F16(a.clone().into()), CpuStorage::F16(w.clone().into()));
        let widened = matmul((&sa, &la), (&sb, &lb)).unwrap().as_slice::<f16>().unwrap().to_vec();
        let direct = gemm_typed(&a, &la, &w, &lb, &d);
        assert_eq!(widened.len(), batch * m * n);
        for bi in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let exact: f64 = (0..k)
                        .map(|p| a[3 + (bi * m + i) * k + p].to_f64() * w[5 + (bi * n + j) * k + p].to_f64())
                        .sum();
                    let want = f16::from_f32(exact as f32); // `exact` is an f32 value
                    let at = (bi * m + i) * n + j;
                    assert_eq!(widened[at], want, "widened [{bi},{i},{j}]: {exact}");
                    assert_eq!(direct[at], want, "gemm's f16 path [{bi},{i},{j}]: {exact}");
                }
            }
        }
        let broadcast = Layout::new([batch, k, n], vec![0, 1, k], 0).unwrap();
        assert!(!widening_pays(&la, &broadcast, &d));
        let small = Layout::contiguous([batch, 100, k]);
        assert!(!widening_pays(&small, &lb, &dims(&small, &lb).unwrap()));
    }

    /// Products large enough for the AVX2 kernel on AVX2 machines (and the gemm crate elsewhere),
    /// batched, at offsets, with a transposed B, a transposed A and a B broadcast along the batch:
    /// the f64 sums within f32 rounding.
    #[test]
    fn large_products_match_f64_sums_on_every_path() {
        let (batch, m, k, n) = (2, 130, 150, 120);
        assert!(m >= crate::gemm_f32_avx2::MIN_M && m * n * k >= crate::gemm_f32_avx2::MIN_MACS);
        let a = values(batch * m * k + 3, 5);
        let w = values(batch * n * k + 7, 6);
        let cases = [
            // A row-major, B the transpose of row-major [batch, n, k].
            (
                Layout::new([batch, m, k], vec![m * k, k, 1], 3).unwrap(),
                Layout::new([batch, k, n], vec![n * k, 1, k], 7).unwrap(),
            ),
            // A the transpose of row-major [batch, k, m], B row-major.
            (
                Layout::new([batch, m, k], vec![m * k, 1, m], 3).unwrap(),
                Layout::new([batch, k, n], vec![n * k, n, 1], 7).unwrap(),
            ),
            // B broadcast along the batch.
            (
                Layout::new([batch, m, k], vec![m * k, k, 1], 0).unwrap(),
                Layout::new([batch, k, n], vec![0, n, 1], 7).unwrap(),
            ),
        ];
        for (la, lb) in cases {
            let got = matmul_slices(&a, &la, &w, &lb).unwrap();
            let (ls, ws) = (la.strides(), lb.strides());
            for bi in 0..batch {
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k)
                            .map(|p| {
                                a[la.offset() + bi * ls[0] + i * ls[1] + p * ls[2]] as f64
                                    * w[lb.offset() + bi * ws[0] + p * ws[1] + j * ws[2]] as f64
                            })
                            .sum();
                        let x = got[(bi * m + i) * n + j] as f64;
                        assert!(
                            (x - want).abs() <= 1e-4 * (1.0 + want.abs()),
                            "{la:?} {lb:?} [{bi},{i},{j}]: {x} vs {want}"
                        );
                    }
                }
            }
        }
    }

    /// Products written into a caller's buffer equal the allocated ones on every path (skinny,
    /// gemm with a transposed B, batched, k = 0), and a buffer of another length is refused.
    #[test]
    fn slices_into_a_buffer_match_allocated_products() {
        for (batch, m, k, n) in
            [(1, 1, 64, 130), (1, 40, 33, 70), (3, 5, 17, 9), (2, 64, 128, 96), (2, 3, 0, 4)]
        {
            let a = values(batch * m * k, 3);
            let w = values(batch * n * k, 4);
            let la = Layout::contiguous([batch, m, k]);
            // B: the transpose of row-major [batch, n, k] (a linear weight).
            let lb = Layout::new([batch, k, n], vec![n * k, 1, k], 0).unwrap();
            let want = matmul_slices(&a, &la, &w, &lb).unwrap();
            let mut out = vec![MaybeUninit::new(f32::NAN); batch * m * n];
            matmul_slices_into(&a, &la, &w, &lb, &mut out).unwrap();
            // SAFETY: every element was initialised (NaN, then the product).
            let got: Vec<f32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
            assert_eq!(got, want, "{batch}x{m}x{k}x{n}");
            let mut short = vec![MaybeUninit::new(0.0f32); batch * m * n + 1];
            let e = matmul_slices_into(&a, &la, &w, &lb, &mut short).unwrap_err().to_string();
            assert!(e.contains("a result of"), "{e}");
        }
    }
}
