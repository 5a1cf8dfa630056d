//! `linalg.lu_factor`, `linalg.lu` and `linalg.lu_solve`: LU with partial pivoting of `m × n`
//! matrices on the host (LAPACK's `getrf` conventions: 1-based int32 pivots, `info` the first
//! exactly-zero pivot), with torch's `linalg_lu_backward` and `linalg_lu_solve_LU` formulas.

#![allow(clippy::needless_range_loop)]

use oxtorch_core::{broadcast_shapes, DType, Error, Result};

use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_matrix, check_square, mt, rows_cols, source_index,
    Host,
};
use super::triangular::{tri_solve, SolveTriangularFn};
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// `P A = L U` of a row-major `m × n` matrix: `lu` holds `L` (unit diagonal implied) below the
/// diagonal and `U` on and above it; `piv[k]` (0-based) is the row swapped with row `k` at step
/// `k` (`k < min(m, n)`); `info` is LAPACK's (1-based first zero pivot, 0 if none).
pub(super) struct RectLu {
    pub lu: Vec<f64>,
    pub piv: Vec<usize>,
    pub info: usize,
}

/// [`RectLu`] of a row-major `m × n` matrix (LAPACK's `getrf`).
pub(super) fn lu_rect(a: &[f64], m: usize, n: usize) -> RectLu {
    let (lu, piv, info) = super::decompose::getrf(a, m, n);
    RectLu { lu, piv, info }
}

/// The permutation of `m` rows that the swaps `piv` (0-based) apply: `perm[i]` is the original row
/// that ends at row `i` of `P⁻¹ A` (`A = P L U` with `P[perm[i], i] = 1`).
fn permutation(piv: &[usize], m: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..m).collect();
    for (k, &p) in piv.iter().enumerate() {
        perm.swap(k, p);
    }
    perm
}

/// `(P, L, U)` of one factorization: `P` `m × m`, `L` `m × k`, `U` `k × n`.
fn unpack(f: &RectLu, m: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let mut p = vec![0.0; m * m];
    for (i, &r) in permutation(&f.piv, m).iter().enumerate() {
        p[r * m + i] = 1.0;
    }
    let mut l = vec![0.0; m * k];
    for i in 0..m {
        for j in 0..k.min(i + 1) {
            l[i * k + j] = if i == j { 1.0 } else { f.lu[i * n + j] };
        }
    }
    let mut u = vec![0.0; k * n];
    for i in 0..k {
        for j in i..n {
            u[i * n + j] = f.lu[i * n + j];
        }
    }
    (p, l, u)
}

fn solve_tri(a: &Tensor, b: &Tensor, upper: bool, left: bool, unit: bool) -> Result<Tensor> {
    Ok(SolveTriangularFn { upper, left, unit }.apply(&[a.clone(), b.clone()])?.remove(0))
}

/// torch's `linalg_lu_backward`: the gradient of `A = P L U` given `gL`, `gU` (zeros for an unused
/// output; the formula is linear in them).
fn lu_backward(gl: &Tensor, gu: &Tensor, p: &Tensor, l: &Tensor, u: &Tensor) -> Result<Tensor> {
    let (m, n) = (l.size(-2)?, u.size(-1)?);
    let k = m.min(n);
    if m == n {
        // P L⁻ᴴ [Lᴴ gL ∘ 1_L + gU Uᴴ ∘ 1_U] U⁻ᴴ
        let g = mt(l)?.matmul(gl)?.tril(-1)?.add(&gu.matmul(&mt(u)?)?.triu(0)?)?;
        let g = solve_tri(&mt(u)?, &g, false, false, false)?;
        let g = solve_tri(&mt(l)?, &g, true, true, true)?;
        p.matmul(&g)
    } else if m < n {
        let u1 = u.narrow(-1, 0, k)?;
        let g = mt(l)?.matmul(gl)?.sub(&gu.triu(0)?.matmul(&mt(u)?)?)?;
        let g = solve_tri(&mt(&u1)?, &g.tril(-1)?, false, false, false)?;
        let (gu1, gu2) = (gu.narrow(-1, 0, k)?, gu.narrow(-1, k as isize, n - k)?);
        let g = Tensor::cat(&[&g.add(&gu1.triu(0)?)?, &gu2], -1)?;
        let g = solve_tri(&mt(l)?, &g, true, true, true)?;
        p.matmul(&g)
    } else {
        let l1 = l.narrow(-2, 0, k)?;
        let g = gu.matmul(&mt(u)?)?.sub(&mt(l)?.matmul(&gl.tril(-1)?)?)?;
        let g = solve_tri(&mt(&l1)?, &g.triu(0)?, true, true, true)?;
        let (gl1, gl2) = (gl.narrow(-2, 0, k)?, gl.narrow(-2, k as isize, m - k)?);
        let g = Tensor::cat(&[&g.add(&gl1.tril(-1)?)?, &gl2], -2)?;
        let g = solve_tri(&mt(u)?, &g, false, false, false)?;
        p.matmul(&g)
    }
}

/// `(P, L, U)` tensors from a packed `LU` and 0-based pivots, both for a whole batch.
struct Unpacked {
    p: Tensor,
    l: Tensor,
    u: Tensor,
}

fn factor_all(a: &Tensor) -> Result<(Host, Vec<RectLu>)> {
    let h = Host::read(a)?;
    let fs = (0..h.count()).map(|b| lu_rect(h.matrix(b), h.m, h.n)).collect();
    Ok((h, fs))
}

fn unpack_all(h: &Host, fs: &[RectLu], like: &Tensor) -> Result<Unpacked> {
    let (m, n) = (h.m, h.n);
    let k = m.min(n);
    let (mut ps, mut ls, mut us) = (Vec::new(), Vec::new(), Vec::new());
    for f in fs {
        let (p, l, u) = unpack(f, m, n);
        ps.extend(p);
        ls.extend(l);
        us.extend(u);
    }
    Ok(Unpacked {
        p: build(ps, h.dims(&[m, m]), like)?,
        l: build(ls, h.dims(&[m, k]), like)?,
        u: build(us, h.dims(&[k, n]), like)?,
    })
}

/// `(LU, pivots, info)` for `lu_factor`/`lu_factor_ex`.
struct LuFactorFn;

impl Function for LuFactorFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let (h, fs) = factor_all(a)?;
        let k = h.m.min(h.n);
        let lu: Vec<f64> = fs.iter().flat_map(|f| f.lu.iter().copied()).collect();
        let piv: Vec<i32> = fs.iter().flat_map(|f| f.piv.iter().map(|&p| p as i32 + 1)).collect();
        let info: Vec<i32> = fs.iter().map(|f| f.info as i32).collect();
        let lu = build(lu, a.dims().to_vec(), a)?;
        let piv = Tensor::from_vec_on(piv, h.dims(&[k]), a.device())?;
        let info = Tensor::from_vec_on(info, h.batch.clone(), a.device())?;
        let un = unpack_all(&h, &fs, a)?;
        ctx.save_for_backward(&[&un.p, &un.l, &un.u]);
        ctx.mark_non_differentiable(&[&piv, &info]);
        Ok(vec![lu, piv, info])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // torch's lu_factor_ex_backward: gL = tril(g, -1)[.., :k], gU = triu(g)[.., :k, :]
        let saved = ctx.saved_tensors()?;
        let (p, l, u) = (&saved[0], &saved[1], &saved[2]);
        let k = l.size(-1)?;
        let g = &grads[0];
        let gl = g.tril(-1)?.narrow(-1, 0, k)?;
        let gu = g.triu(0)?.narrow(-2, 0, k)?;
        Ok(vec![Some(lu_backward(&gl, &gu, p, l, u)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgLuFactorExBackward0"
    }
}

fn lu_factor_checks(op: &str, a: &Tensor) -> Result<()> {
    if a.rank() < 2 {
        return Err(Error::shape(format!(
            "{op}: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
            a.dims()
        )));
    }
    check_kernel("lu_cpu", a)
}

/// `torch.linalg.lu_factor_ex(A)`: `(LU, pivots, info)` for `A` `[*, m, n]` (float32/float64):
/// `LU` packs `L` (unit diagonal implied) and `U`, `pivots` `[*, min(m, n)]` are LAPACK's 1-based
/// int32 row swaps, `info` `[*]` int32 is the 1-based index of the first exactly-zero pivot of `U`
/// (0 if none). Never fails on a singular matrix. The gradient of `LU` is torch's.
pub fn lu_factor_ex(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    lu_factor_checks("torch.lu_factor", a)?;
    let mut out = LuFactorFn.apply(std::slice::from_ref(a))?;
    let info = out.remove(2);
    let piv = out.remove(1);
    Ok((out.remove(0), piv, info))
}

/// `torch.linalg.lu_factor(A)`: `(LU, pivots)` as [`lu_factor_ex`]; a zero pivot is torch's error
/// (`torch.linalg.lu_factor: U[2,2] is zero and using it on lu_solve would ...`).
pub fn lu_factor(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let (lu, piv, info) = lu_factor_ex(a)?;
    let infos = info.to_dtype(DType::I64)?.to_vec::<i64>()?;
    if let Some(b) = infos.iter().position(|&i| i != 0) {
        let i = infos[b];
        return Err(Error::msg(format!(
            "torch.linalg.lu_factor: {}U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
            batch_prefix(a, b)
        )));
    }
    Ok((lu, piv))
}

struct LuFn;

impl Function for LuFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let (h, fs) = factor_all(a)?;
        let un = unpack_all(&h, &fs, a)?;
        ctx.save_for_backward(&[&un.p, &un.l, &un.u]);
        ctx.mark_non_differentiable(&[&un.p]);
        Ok(vec![un.p, un.l, un.u])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        Ok(vec![Some(lu_backward(&grads[1], &grads[2], &saved[0], &saved[1], &saved[2])?)])
    }

    fn name(&self) -> &'static str {
        "LinalgLuBackward0"
    }
}

/// `torch.linalg.lu(A)` (`pivot=True`): `(P, L, U)` with `A = P L U` for `A` `[*, m, n]`
/// (float32/float64), `k = min(m, n)`: `P` `[*, m, m]` a permutation matrix (not
/// differentiable), `L` `[*, m, k]` unit lower triangular, `U` `[*, k, n]` upper triangular. A
/// singular matrix is factored without error. Gradients: torch's `linalg_lu_backward`.
pub fn lu(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    lu_factor_checks("linalg.lu", a)?;
    let mut out = LuFn.apply(std::slice::from_ref(a))?;
    let u = out.remove(2);
    let l = out.remove(1);
    Ok((out.remove(0), l, u))
}

/// `X` from a packed LU (`[*, n, n]`), its 0-based row permutation `perm` per matrix of the LU's
/// batch and `B`; batch dims broadcast.
struct LuSolveFn {
    left: bool,
    adjoint: bool,
    /// `perm[b][i]`: the row of `A` that is row `i` of `P⁻¹ A`, per LU matrix.
    perm: Vec<Vec<usize>>,
}

/// Solves `A X = B` (`trans = false`) or `Aᵀ X = B` in place for `B` `n × k`, `A = P L U`.
fn lu_apply(lu: &[f64], perm: &[usize], n: usize, b: &mut [f64], k: usize, trans: bool) {
    if !trans {
        // L U X = Pᵀ B: row i of Pᵀ B is row perm[i] of B
        let mut pb = vec![0.0; n * k];
        for i in 0..n {
            pb[i * k..(i + 1) * k].copy_from_slice(&b[perm[i] * k..(perm[i] + 1) * k]);
        }
        tri_solve(lu, n, &mut pb, k, false, true, false);
        tri_solve(lu, n, &mut pb, k, true, false, false);
        b.copy_from_slice(&pb);
    } else {
        // Uᵀ Lᵀ Pᵀ X = B: Y = Pᵀ X, X = P Y (row perm[i] of X is row i of Y)
        let mut y = b.to_vec();
        tri_solve(lu, n, &mut y, k, true, false, true);
        tri_solve(lu, n, &mut y, k, false, true, true);
        for i in 0..n {
            b[perm[i] * k..(perm[i] + 1) * k].copy_from_slice(&y[i * k..(i + 1) * k]);
        }
    }
}

impl Function for LuSolveFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (lu, b) = (&inputs[0], &inputs[1]);
        let (hl, hb) = (Host::read(lu)?, Host::read(b)?);
        let n = hl.n;
        let batch = broadcast_shapes(&hb.batch, &hl.batch)?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count * hb.m * hb.n);
        for i in 0..count {
            let li = source_index(i, &batch, &hl.batch);
            let (f, perm) = (hl.matrix(li), &self.perm[li]);
            let rhs = hb.matrix(source_index(i, &batch, &hb.batch));
            if self.left {
                // A X = B or Aᴴ X = B
                let mut x = rhs.to_vec();
                lu_apply(f, perm, n, &mut x, hb.n, self.adjoint);
                out.extend(x);
            } else {
                // X A = B is Aᵀ Xᵀ = Bᵀ; X Aᴴ = B is A Xᵀ = Bᵀ
                let k = hb.m;
                let mut x = super::batch::transposed(rhs, k, n);
                lu_apply(f, perm, n, &mut x, k, !self.adjoint);
                out.extend(super::batch::transposed(&x, n, k));
            }
        }
        let mut dims = batch;
        dims.extend_from_slice(&[hb.m, hb.n]);
        let x = build(out, dims, b)?;
        ctx.save_for_backward(&[lu, &x]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (lu, x) = (&saved[0], &saved[1]);
        let gx = &grads[0];
        let needs = ctx.needs_input_grad().to_vec();
        let need = |i: usize| needs.get(i).copied().unwrap_or(true);
        // gB = lu_solve(LU, pivots, gX, left, !adjoint)
        let gb = if need(1) {
            let f = LuSolveFn { left: self.left, adjoint: !self.adjoint, perm: self.perm.clone() };
            Some(f.apply(&[lu.clone(), gx.clone()])?.remove(0))
        } else {
            None
        };
        let glu = if need(0) {
            let n = lu.size(-1)?;
            let eye = Tensor::eye(n, None, lu.same_options())?;
            let l = lu.tril(-1)?.add(&eye)?;
            let u = lu.triu(0)?;
            if self.left != self.adjoint {
                // gR = U⁻ᴴ op(-gX) op(X)ᴴ; gLU = (L⁻ᴴ gR Uᴴ).tril(-1) + gR.triu()
                let rhs = if self.left { gx.matmul(&mt(x)?)? } else { mt(gx)?.matmul(x)? }.neg()?;
                let gr = solve_tri(&mt(&u)?, &rhs, false, true, false)?;
                let gl = solve_tri(&mt(&l)?, &gr.matmul(&mt(&u)?)?, true, true, true)?.tril(-1)?;
                Some(gl.add(&gr.triu(0)?)?)
            } else {
                // gR = -Pᵀ op(X) op(gX)ᴴ P L⁻ᴴ; gLU = gR.tril(-1) + (Lᴴ gR U⁻ᴴ).triu()
                let p = self.permutation_matrix(lu)?;
                let inner = if self.left { x.matmul(&mt(gx)?)? } else { mt(x)?.matmul(gx)? };
                let gr = mt(&p)?.matmul(&inner)?.matmul(&p)?.neg()?;
                let gr = solve_tri(&mt(&l)?, &gr, true, false, true)?;
                let gu = solve_tri(&mt(&u)?, &mt(&l)?.matmul(&gr)?, false, false, false)?.triu(0)?;
                Some(gr.tril(-1)?.add(&gu)?)
            }
        } else {
            None
        };
        Ok(vec![glu, gb])
    }

    fn name(&self) -> &'static str {
        "LinalgLuSolveBackward0"
    }
}

impl LuSolveFn {
    /// `P` `[*, n, n]` (the LU's batch) with `A = P L U`.
    fn permutation_matrix(&self, lu: &Tensor) -> Result<Tensor> {
        let n = lu.size(-1)?;
        let mut p = Vec::with_capacity(self.perm.len() * n * n);
        for perm in &self.perm {
            let mut m = vec![0.0; n * n];
            for (i, &r) in perm.iter().enumerate() {
                m[r * n + i] = 1.0;
            }
            p.extend(m);
        }
        build(p, lu.dims().to_vec(), lu)
    }
}

/// `torch.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)`: `X` with `A X = B`
/// (`left`, or `Aᴴ X = B` with `adjoint`) or `X A = B` (`X Aᴴ = B`), where `(LU, pivots)` is
/// [`lu_factor`]'s factorization of square `A` `[*, n, n]`. `pivots` must be int32 `[*, n]`
/// (1-based, as `lu_factor` gives them); `B` `[*, n, k]` (`[*, k, n]` when not `left`); batch dims
/// broadcast. Gradients of `LU` and `B` are torch's (`pivots` is not differentiable).
pub fn lu_solve(lu: &Tensor, pivots: &Tensor, b: &Tensor, left: bool, adjoint: bool) -> Result<Tensor> {
    const OP: &str = "linalg.lu_solve";
    check_matrix(OP, b, "B")?;
    check_square("torch.linalg.lu_solve", lu, "A")?;
    let ((n, _), (bm, bn)) = (rows_cols(lu), rows_cols(b));
    if (left && n != bm) || (!left && n != bn) {
        return Err(Error::shape(format!(
            "{OP}: Incompatible shapes of A and B for the equation {} ({n}x{n} and {bm}x{bn})",
            if left { "AX = B" } else { "XA = B" }
        )));
    }
    if pivots.dtype() != DType::I32 {
        return Err(Error::msg(format!("{OP}: pivots should be a Tensor of scalar type torch.int32")));
    }
    if pivots.rank() == 0 || pivots.dims()[pivots.rank() - 1] != n {
        return Err(Error::shape(format!(
            "{OP}: Number of pivots per batch should be same as the dimension of the matrix"
        )));
    }
    if pivots.dims()[..pivots.rank() - 1] != lu.dims()[..lu.rank() - 2] {
        return Err(Error::shape(format!(
            "{OP}: Expected LU.shape[:-2] == pivots.shape[:-1]. Got LU.shape = {:?} and pivots.shape = {:?}",
            lu.dims(),
            pivots.dims()
        )));
    }
    if lu.dtype() != b.dtype() {
        return Err(Error::msg(format!(
            "{OP}: Expected LU and B to have the same dtype, but found LU of type {} and B of type {} instead",
            lu.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    check_float(OP, lu, false)?;
    broadcast_shapes(&b.dims()[..b.rank() - 2], &lu.dims()[..lu.rank() - 2])?;
    check_kernel("lu_solve_cpu", lu)?;
    let piv = pivots.detach().to_dtype(DType::I64)?.to_vec::<i64>()?;
    let count: usize = lu.dims()[..lu.rank() - 2].iter().product();
    let perm: Vec<Vec<usize>> = (0..count)
        .map(|i| {
            // 1-based swaps, clamped into range (LAPACK does not check them either)
            let swaps: Vec<usize> =
                piv[i * n..(i + 1) * n].iter().map(|&p| (p.max(1) as usize - 1).min(n - 1)).collect();
            permutation(&swaps, n)
        })
        .collect();
    let f = LuSolveFn { left, adjoint, perm };
    Ok(f.apply(&[lu.clone(), b.clone()])?.remove(0))
}
