//! `cholesky_inverse`: `(L Lᵀ)⁻¹` (or `(Uᵀ U)⁻¹`) from a Cholesky factor, by triangular
//! inversion on the host (reading only the factor's triangle, as LAPACK's `potri`), with torch's
//! `cholesky_inverse_backward`.

use oxtorch_core::{Error, Result};

use super::batch::{batch_prefix, build, check_kernel, check_square, mt, Host};
use super::triangular::tri_solve;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// `(L Lᵀ)⁻¹` (`upper`: `(Uᵀ U)⁻¹`) of each factor, row-major `n × n`; a zero on the diagonal is
/// torch's error naming it.
struct CholeskyInverseFn {
    upper: bool,
}

impl CholeskyInverseFn {
    /// The inverse for one factor `t` (row-major `n × n`), or the 1-based index of a zero pivot.
    fn invert(&self, t: &[f64], n: usize) -> std::result::Result<Vec<f64>, usize> {
        if let Some(i) = (0..n).find(|&i| t[i * n + i] == 0.0) {
            return Err(i + 1);
        }
        // x = T⁻¹ (the triangle `upper` names)
        let mut x = vec![0.0; n * n];
        for i in 0..n {
            x[i * n + i] = 1.0;
        }
        tri_solve(t, n, &mut x, n, self.upper, false, false);
        let mut out = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                // lower: (L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹ = xᵀ x; upper: (Uᵀ U)⁻¹ = U⁻¹ U⁻ᵀ = x xᵀ
                out[i * n + j] =
                    (0..n)
                        .map(|k| {
                            if self.upper {
                                x[i * n + k] * x[j * n + k]
                            } else {
                                x[k * n + i] * x[k * n + j]
                            }
                        })
                        .sum();
            }
        }
        Ok(out)
    }
}

impl Function for CholeskyInverseFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let l = &inputs[0];
        let h = Host::read(l)?;
        let n = h.n;
        let mut out = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            let inv = self.invert(h.matrix(b), n).map_err(|i| {
                Error::msg(format!(
                    "cholesky_inverse: {}The diagonal element {i} is zero, the inversion could not be completed because the input matrix is singular.",
                    batch_prefix(l, b)
                ))
            })?;
            out.extend(inv);
        }
        let inv = build(out, l.dims().to_vec(), l)?;
        ctx.save_for_backward(&[l, &inv]);
        Ok(vec![inv])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // common = A⁻¹ (g + gᴴ) A⁻¹; gL = -common L, gU = -U common
        let saved = ctx.saved_tensors()?;
        let (l, inv) = (&saved[0], &saved[1]);
        let g = &grads[0];
        let common = inv.matmul(&g.add(&mt(g)?)?.matmul(inv)?)?;
        let gl = if self.upper { l.matmul(&common)? } else { common.matmul(l)? };
        Ok(vec![Some(gl.neg()?)])
    }

    fn name(&self) -> &'static str {
        "CholeskyInverseBackward0"
    }
}

/// `torch.cholesky_inverse(L, upper=upper)`: the inverse of `A = L Lᵀ` from its lower-triangular
/// Cholesky factor `L` (`[*, n, n]`, only its lower triangle read) or, with `upper`, of
/// `A = Uᵀ U` from `U` (its upper triangle read); float32/float64. A zero on the diagonal is
/// torch's error (`cholesky_inverse: The diagonal element 2 is zero, ...`). The gradient is
/// torch's `cholesky_inverse_backward`, `-A⁻¹ (g + gᵀ) A⁻¹ L` (`-U A⁻¹ (g + gᵀ) A⁻¹`), which, as
/// torch's, is not restricted to the factor's triangle.
pub fn cholesky_inverse(l: &Tensor, upper: bool) -> Result<Tensor> {
    const OP: &str = "cholesky_inverse";
    check_square(OP, l, "A")?;
    check_kernel("cholesky_inverse_out_cpu", l)?;
    Ok(CholeskyInverseFn { upper }.apply(std::slice::from_ref(l))?.remove(0))
}

impl Tensor {
    /// `L.cholesky_inverse(upper)`: [`cholesky_inverse`](crate::linalg::cholesky_inverse).
    pub fn cholesky_inverse(&self, upper: bool) -> Result<Tensor> {
        cholesky_inverse(self, upper)
    }
}
