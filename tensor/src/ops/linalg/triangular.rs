//! `linalg.solve_triangular` and `cholesky_solve` (substitution on the host, batch dims broadcast)
//! with torch's backward formulas (`linalg_solve_triangular_backward`, `cholesky_solve_backward`).

#![allow(clippy::needless_range_loop)]

use oxtorch_core::{broadcast_shapes, promote_types, Error, Result};

use super::batch::{build, check_kernel, check_matrix, check_square, mt, rows_cols, source_index, Host};
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// Solves `op(T) X = B` in place for the `n × n` row-major `a` read as a triangle (`upper` or
/// lower, the other triangle never read; `unit`: an implied unit diagonal) and `B` row-major
/// `n × k`. With `trans`, `op(T) = Tᵀ` (the transpose of the triangle `upper` names). A zero
/// diagonal gives inf/NaN, as LAPACK's `trtrs` without its check.
pub(super) fn tri_solve(a: &[f64], n: usize, b: &mut [f64], k: usize, upper: bool, unit: bool, trans: bool) {
    // element (i, j) of op(T)
    let at = |i: usize, j: usize| if trans { a[j * n + i] } else { a[i * n + j] };
    // op(T) is upper when exactly one of (upper, trans) holds
    let eff_upper = upper != trans;
    let rows: Vec<usize> = if eff_upper { (0..n).rev().collect() } else { (0..n).collect() };
    for &i in &rows {
        let others: Vec<usize> = if eff_upper { (i + 1..n).collect() } else { (0..i).collect() };
        for &r in &others {
            let t = at(i, r);
            if t != 0.0 {
                for j in 0..k {
                    b[i * k + j] -= t * b[r * k + j];
                }
            }
        }
        if !unit {
            let d = at(i, i);
            for j in 0..k {
                b[i * k + j] /= d;
            }
        }
    }
}

/// `X` with `A X = B` (`left`) or `X A = B` for triangular `A` (`[*, n, n]`) and `B` (`[*, n, k]` /
/// `[*, k, n]`), batch dims broadcast, in the common dtype of `A` and `B`.
pub(super) struct SolveTriangularFn {
    pub upper: bool,
    pub left: bool,
    pub unit: bool,
}

impl Function for SolveTriangularFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let (ha, hb) = (Host::read(a)?, Host::read(b)?);
        let n = ha.n;
        let batch = broadcast_shapes(&hb.batch, &ha.batch)?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count * hb.m * hb.n);
        for i in 0..count {
            let t = ha.matrix(source_index(i, &batch, &ha.batch));
            let rhs = hb.matrix(source_index(i, &batch, &hb.batch));
            if self.left {
                let k = hb.n;
                let mut x = rhs.to_vec();
                tri_solve(t, n, &mut x, k, self.upper, self.unit, false);
                out.extend(x);
            } else {
                // X A = B is Aᵀ Xᵀ = Bᵀ
                let k = hb.m;
                let mut x = super::batch::transposed(rhs, k, n);
                tri_solve(t, n, &mut x, k, self.upper, self.unit, true);
                out.extend(super::batch::transposed(&x, n, k));
            }
        }
        let mut dims = batch;
        dims.extend_from_slice(&[hb.m, hb.n]);
        let x = build(out, dims, b)?;
        ctx.save_for_backward(&[a, &x]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // gB = solve_triangular(Aᴴ, gX, !upper), gA = -gB Xᴴ (left) or -Xᴴ gB, restricted to A's
        // triangle (strictly, when unitriangular).
        let saved = ctx.saved_tensors()?;
        let (a, x) = (&saved[0], &saved[1]);
        let f = SolveTriangularFn { upper: !self.upper, left: self.left, unit: self.unit };
        let gb = f.apply(&[mt(a)?, grads[0].clone()])?.remove(0);
        let ga = if self.left { gb.matmul(&mt(x)?)? } else { mt(x)?.matmul(&gb)? }.neg()?;
        let unit = i64::from(self.unit);
        let ga = if self.upper { ga.triu(unit)? } else { ga.tril(-unit)? };
        let needs = ctx.needs_input_grad().to_vec();
        let keep = |i: usize, t: Tensor| if needs.get(i).copied().unwrap_or(true) { Some(t) } else { None };
        Ok(vec![keep(0, ga), keep(1, gb)])
    }

    fn name(&self) -> &'static str {
        "LinalgSolveTriangularBackward0"
    }
}

/// `torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)`:
/// `X` with `A X = B` (`left`) or `X A = B` for triangular `A` `[*, n, n]`, reading only the
/// triangle `upper` names (and, with `unitriangular`, taking its diagonal to be ones). `B` is
/// `[*, n, k]` (`[*, k, n]` when not `left`); batch dims broadcast; the result has the promoted
/// dtype of `A` and `B` (float32/float64). A zero on the diagonal gives inf/NaN, as torch's.
/// Gradients: `gB = A⁻ᴴ gX`, `gA = -(gB Xᴴ)` restricted to `A`'s triangle.
pub fn solve_triangular(
    a: &Tensor,
    b: &Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
) -> Result<Tensor> {
    const OP: &str = "linalg.solve_triangular";
    check_matrix(OP, b, "B")?;
    check_square(OP, a, "A")?;
    let ((an, _), (bm, bn)) = (rows_cols(a), rows_cols(b));
    if (left && an != bm) || (!left && an != bn) {
        return Err(Error::shape(format!(
            "{OP}: Incompatible shapes of A and B for the equation {} ({an}x{an} and {bm}x{bn})",
            if left { "AX = B" } else { "XA = B" }
        )));
    }
    broadcast_shapes(&b.dims()[..b.rank() - 2], &a.dims()[..a.rank() - 2])?;
    let dtype = promote_types(a.dtype(), b.dtype());
    let (a, b) = (a.to_dtype(dtype)?, b.to_dtype(dtype)?);
    check_kernel("triangular_solve_cpu", &a)?;
    Ok(SolveTriangularFn { upper, left, unit: unitriangular }.apply(&[a, b])?.remove(0))
}

/// `X = (L Lᴴ)⁻¹ B` (or `(Uᴴ U)⁻¹ B`), batch dims broadcast.
pub(super) struct CholeskySolveFn {
    pub upper: bool,
}

impl Function for CholeskySolveFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (b, l) = (&inputs[0], &inputs[1]);
        let (hb, hl) = (Host::read(b)?, Host::read(l)?);
        let (n, k) = (hl.n, hb.n);
        let batch = broadcast_shapes(&hb.batch, &hl.batch)?;
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count * n * k);
        for i in 0..count {
            let f = hl.matrix(source_index(i, &batch, &hl.batch));
            let mut x = hb.matrix(source_index(i, &batch, &hb.batch)).to_vec();
            if self.upper {
                // Uᵀ U X = B
                tri_solve(f, n, &mut x, k, true, false, true);
                tri_solve(f, n, &mut x, k, true, false, false);
            } else {
                // L Lᵀ X = B
                tri_solve(f, n, &mut x, k, false, false, false);
                tri_solve(f, n, &mut x, k, false, false, true);
            }
            out.extend(x);
        }
        let mut dims = batch;
        dims.extend_from_slice(&[n, k]);
        let x = build(out, dims, b)?;
        ctx.save_for_backward(&[l, &x]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // torch's cholesky_solve_backward: gB = cholesky_solve(gX, L), C = gB Xᴴ + X gBᴴ,
        // gL = -C L (lower) or -U C (upper).
        let saved = ctx.saved_tensors()?;
        let (l, x) = (&saved[0], &saved[1]);
        let gb = CholeskySolveFn { upper: self.upper }.apply(&[grads[0].clone(), l.clone()])?.remove(0);
        let c = gb.matmul(&mt(x)?)?;
        let c = c.add(&mt(&c)?)?;
        let gl = if self.upper { l.matmul(&c)? } else { c.matmul(l)? }.neg()?;
        let needs = ctx.needs_input_grad().to_vec();
        let keep = |i: usize, t: Tensor| if needs.get(i).copied().unwrap_or(true) { Some(t) } else { None };
        Ok(vec![keep(0, gb), keep(1, gl)])
    }

    fn name(&self) -> &'static str {
        "CholeskySolveBackward0"
    }
}

/// `torch.cholesky_solve(B, L, upper=upper)`: `X` with `A X = B` where `A = L Lᵀ` (`L` lower
/// triangular, only its lower triangle read) or, with `upper`, `A = Uᵀ U`. `B` is `[*, n, k]`,
/// `L` `[*, n, n]`, batch dims broadcast; both of one float32/float64 dtype. Gradients are
/// torch's `cholesky_solve_backward` (the gradient of `L` is not restricted to its triangle).
pub fn cholesky_solve(b: &Tensor, l: &Tensor, upper: bool) -> Result<Tensor> {
    if b.dtype() != l.dtype() {
        return Err(Error::msg(format!(
            "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
            b.dtype().scalar_type_name(),
            l.dtype().scalar_type_name()
        )));
    }
    if b.rank() < 2 {
        return Err(Error::shape(format!(
            "b should have at least 2 dimensions, but has {} dimensions instead",
            b.rank()
        )));
    }
    if l.rank() < 2 {
        return Err(Error::shape(format!(
            "u should have at least 2 dimensions, but has {} dimensions instead",
            l.rank()
        )));
    }
    let ((lm, ln), (bm, bn)) = (rows_cols(l), rows_cols(b));
    if lm != ln {
        return Err(Error::shape(format!(
            "A must be batches of square matrices, but they are {lm} by {ln} matrices"
        )));
    }
    if ln != bm {
        return Err(Error::shape(format!(
            "Incompatible matrix sizes for cholesky_solve: each A matrix is {lm} by {ln} but each b matrix is {bm} by {bn}"
        )));
    }
    broadcast_shapes(&b.dims()[..b.rank() - 2], &l.dims()[..l.rank() - 2])?;
    check_kernel("cholesky_solve_cpu", b)?;
    Ok(CholeskySolveFn { upper }.apply(&[b.clone(), l.clone()])?.remove(0))
}
