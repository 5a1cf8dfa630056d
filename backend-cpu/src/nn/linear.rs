//! `linear` with its bias ([`NnOp::Linear`]): `x wᵀ + b` without a separate pass for the bias.
//!
//! Composed, the bias is an add over the whole `[M, N]` output after the product wrote it: for a
//! BERT-small layer on 32 × 128 tokens, 14M elements read twice and written once more per layer.
//! Where our AVX2 kernel takes the product (f32, large enough), the bias joins each output tile as
//! the product's first pass over k stores it. Elsewhere the product runs as `matmul` does and the
//! bias is added after, as composed.
//!
//! [`NnOp::Linear`]: oxtorch_core::ops::NnOp::Linear

use oxtorch_core::ops::BinaryOp;
use oxtorch_core::{DType, Error, Layout, Result};

use crate::gemm_f32_avx2::{self as avx2, MatRef};
use crate::CpuStorage;

/// `x wᵀ + b` for `x` `[M, K]`, `w` `[N, K]`, `b` `[N]` of one dtype: `[M, N]`.
pub fn linear(
    (x, lx): (&CpuStorage, &Layout),
    (w, lw): (&CpuStorage, &Layout),
    (b, lb): (&CpuStorage, &Layout),
) -> Result<CpuStorage> {
    let (xd, wd, bd) = (lx.dims(), lw.dims(), lb.dims());
    if xd.len() != 2 || wd.len() != 2 || bd.len() != 1 || xd[1] != wd[1] || bd[0] != wd[0] {
        return Err(Error::shape(format!(
            "linear: input {}, weight {} and bias {} do not fit (expected [M, K], [N, K], [N])",
            lx.shape(),
            lw.shape(),
            lb.shape()
        )));
    }
    let (m, k, n) = (xd[0], xd[1], wd[0]);
    let wt = lw.transpose(0, 1)?;
    if let (CpuStorage::F32(xs), CpuStorage::F32(ws), CpuStorage::F32(_)) = (x, w, b) {
        if avx2::preferred_for(m, n, k) {
            for (len, l) in [(xs.len(), lx), (ws.len(), lw)] {
                crate::matmul::check_bounds("linear", len, l)?;
            }
            let bias = crate::copy::to_contiguous(b, lb, DType::F32)?;
            let a = MatRef { data: xs, offset: lx.offset(), rs: lx.strides()[0], cs: lx.strides()[1] };
            let bt = MatRef { data: ws, offset: wt.offset(), rs: wt.strides()[0], cs: wt.strides()[1] };
            let len = m.checked_mul(n).ok_or_else(|| Error::shape("linear: output too large"))?;
            let mut out: Vec<f32> = crate::pool::take(len);
            let dst = &mut out.spare_capacity_mut()[..len];
            avx2::gemm_bias_into(m, n, k, a, bt, bias.as_slice::<f32>()?, dst, true);
            // SAFETY: `gemm_bias_into` wrote all `m × n` entries.
            unsafe { out.set_len(len) };
            return Ok(CpuStorage::from_vec(out));
        }
    }
    let product = crate::matmul::matmul((x, lx), (w, &wt))?;
    let rows = Layout::contiguous([m, n]);
    crate::binary::binary(BinaryOp::Add, (&product, &rows), (b, &lb.broadcast_to(&[m, n])?))
}
