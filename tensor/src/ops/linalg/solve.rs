//! `linalg.solve`: `A X = B` (or `X A = B`) by LU on the host, batch dims broadcast, with torch's
//! rules for a vector right-hand side and its backward formula.

use oxtorch_core::{broadcast_shapes, Error, Result};

use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_matrix, check_square, mt, rows_cols,
};
use super::batch::{source_index, transposed, Host};
use super::decompose::Lu;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// `X` with `A X = B` (`left`) or `X A = B` for `A` `[*, n, n]` and a matrix `B` `[*, n, k]`
/// (`[*, k, n]` when not `left`), the batch dims broadcast. With `check`, a singular `A` is torch's
/// error; without, it gives inf/NaN (for backward formulas).
pub(super) struct SolveFn {
    pub left: bool,
    pub check: bool,
}

impl Function for SolveFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (a, b) = (&inputs[0], &inputs[1]);
        let (ha, hb) = (Host::read(a)?, Host::read(b)?);
        let n = ha.n;
        let factors: Vec<Lu> = (0..ha.count())
            .map(|i| {
                let m = ha.matrix(i);
                // X A = B is Aᵀ Xᵀ = Bᵀ
                if self.left {
                    Lu::factor(m, n)
                } else {
                    Lu::factor(&transposed(m, n, n), n)
                }
            })
            .collect();
        if self.check {
            if let Some(i) = factors.iter().position(|f| f.info != 0) {
                return Err(Error::msg(format!(
                    "torch.linalg.solve: {}The solver failed because the input matrix is singular.",
                    batch_prefix(a, i)
                )));
            }
        }
        let batch = broadcast_shapes(&hb.batch, &ha.batch)?;
        let count: usize = batch.iter().product();
        let k = if self.left { hb.n } else { hb.m };
        let mut out = Vec::with_capacity(count * n * k);
        for i in 0..count {
            let rhs = hb.matrix(source_index(i, &batch, &hb.batch));
            let f = &factors[source_index(i, &batch, &ha.batch)];
            if self.left {
                let mut x = rhs.to_vec();
                f.solve(&mut x, k);
                out.extend(x);
            } else {
                let mut x = transposed(rhs, k, n);
                f.solve(&mut x, k);
                out.extend(transposed(&x, n, k));
            }
        }
        let mut dims = batch;
        dims.extend_from_slice(&[hb.m, hb.n]);
        let x = build(out, dims, b)?;
        ctx.save_for_backward(&[a, &x]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // left: gB = A⁻ᴴ gX, gA = -gB Xᴴ; right (X = B A⁻¹): gB = gX A⁻ᴴ, gA = -Xᴴ gB. Gradients
        // of broadcast batch dims are summed back to each input's shape by the caller.
        let saved = ctx.saved_tensors()?;
        let (a, x) = (&saved[0], &saved[1]);
        let solve = |lhs: &Tensor, rhs: &Tensor| -> Result<Tensor> {
            let f = SolveFn { left: self.left, check: false };
            Ok(f.apply(&[lhs.clone(), rhs.clone()])?.remove(0))
        };
        let gb = solve(&mt(a)?, &grads[0])?;
        let ga = if self.left { gb.matmul(&mt(x)?)? } else { mt(x)?.matmul(&gb)? };
        let needs = ctx.needs_input_grad().to_vec();
        let keep = |i: usize, t: Tensor| if needs.get(i).copied().unwrap_or(true) { Some(t) } else { None };
        Ok(vec![keep(0, ga.neg()?), keep(1, gb)])
    }

    fn name(&self) -> &'static str {
        "LinalgSolveExBackward0"
    }
}

/// torch's `linalg_solve_is_vector_rhs`: `B` is a (batch of) vector(s) when it is 1-D, or when its
/// shape is `A`'s without the last dim.
fn is_vector_rhs(a: &Tensor, b: &Tensor) -> bool {
    b.rank() == 1 || (a.rank() >= 1 && b.rank() == a.rank() - 1 && b.dims() == &a.dims()[..a.rank() - 1])
}

/// `torch.linalg.solve(A, B, left=left)`: `X` with `A X = B` (`left`) or `X A = B`, for square
/// `A` `[*, n, n]`. `B` is a vector `[n]` (or a batch `[*, n]` of the shape of `A` without its last
/// dim), solved as a one-column matrix and returned as a vector, or a matrix `[*, n, k]` (`[*, k, n]`
/// when not `left`); batch dims broadcast. `A` and `B` must have one float dtype. A singular `A`
/// is torch's error (`torch.linalg.solve: The solver failed because the input matrix is
/// singular.`). Gradients: `gB = A⁻ᵀ gX`, `gA = -gB Xᵀ` (transposed for `left = false`).
pub fn solve(a: &Tensor, b: &Tensor, left: bool) -> Result<Tensor> {
    const OP: &str = "linalg.solve";
    check_float(OP, a, true)?;
    if a.dtype() != b.dtype() {
        return Err(Error::msg(format!(
            "{OP}: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    let vector = is_vector_rhs(a, b);
    let b_ = if vector { b.unsqueeze(-1)? } else { b.clone() };
    check_square(OP, a, "A")?;
    check_matrix(OP, &b_, "B")?;
    let ((an, _), (bm, bn)) = (rows_cols(a), rows_cols(&b_));
    if (left && an != bm) || (!left && an != bn) {
        return Err(Error::shape(format!(
            "{OP}: Incompatible shapes of A and B for the equation {} ({an}x{an} and {bm}x{bn})",
            if left { "AX = B" } else { "XA = B" }
        )));
    }
    broadcast_shapes(&b_.dims()[..b_.rank() - 2], &a.dims()[..a.rank() - 2])?;
    if !left && vector {
        return Err(Error::shape(format!(
            "{OP}: Vector broadcasting of the left hand side is not supported for left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)"
        )));
    }
    check_kernel("lu_cpu", a)?;
    let x = SolveFn { left, check: true }.apply(&[a.clone(), b_])?.remove(0);
    if vector {
        x.squeeze_dims(-1)
    } else {
        Ok(x)
    }
}
