//! `linalg.eigh` and `linalg.eigvalsh`: the symmetric eigendecomposition (Jacobi on the host) of
//! the matrix one triangle describes, with torch's backward (`linalg_eig_backward`, hermitian).

use oxtorch_core::{Error, Result};

use super::batch::{build, check_kernel, check_square, eye_like, is_zero, mt, Host};
use super::jacobi;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// `UPLO`: `"L"` (false) or `"U"` (true), either case, as torch accepts them.
fn parse_uplo(uplo: &str) -> Result<bool> {
    match uplo {
        "L" | "l" => Ok(false),
        "U" | "u" => Ok(true),
        other => Err(Error::msg(format!("Expected UPLO argument to be 'L' or 'U', but got {other}"))),
    }
}

/// The symmetric matrix whose lower (or `upper`) triangle is `a`'s.
pub(super) fn symmetric(a: &[f64], n: usize, upper: bool) -> Vec<f64> {
    let mut s = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let own = if upper { j >= i } else { j <= i };
            s[i * n + j] = if own { a[i * n + j] } else { a[j * n + i] };
        }
    }
    s
}

/// Eigenvalues `[*, n]` and eigenvectors `[*, n, n]` of each matrix of `a`.
fn decompose(a: &Tensor, upper: bool) -> Result<(Tensor, Tensor)> {
    let h = Host::read(a)?;
    let n = h.n;
    let (mut values, mut vectors) = (Vec::with_capacity(h.count() * n), Vec::with_capacity(h.data.len()));
    for b in 0..h.count() {
        let (w, v) = jacobi::eigh(&symmetric(h.matrix(b), n, upper), n);
        values.extend(w);
        vectors.extend(v);
    }
    Ok((build(values, h.dims(&[n]), a)?, build(vectors, h.dims(&[n, n]), a)?))
}

/// `V diag(gL) Vᵀ`: the gradient through the eigenvalues alone.
fn eigenvalues_backward(v: &Tensor, gl: &Tensor) -> Result<Tensor> {
    v.mul(&gl.unsqueeze(-2)?)?.matmul(&mt(v)?)
}

struct EighFn {
    upper: bool,
}

impl Function for EighFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (l, v) = decompose(&inputs[0], self.upper)?;
        ctx.save_for_backward(&[&l, &v]);
        Ok(vec![l, v])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // gA = V (skew(Vᵀ gV) / E + diag(gL)) Vᵀ, E_ij = L_j - L_i (torch's linalg_eig_backward)
        let saved = ctx.saved_tensors()?;
        let (l, v) = (&saved[0], &saved[1]);
        let (gl, gv) = (&grads[0], &grads[1]);
        if is_zero(gv)? {
            return Ok(vec![Some(eigenvalues_backward(v, gl)?)]);
        }
        let vt = mt(v)?;
        let x = vt.matmul(gv)?;
        let skew = x.sub(&mt(&x)?)?.mul(0.5)?;
        let eye = eye_like(l.dims()[l.rank() - 1], l)?;
        let gaps = l.unsqueeze(-2)?.sub(&l.unsqueeze(-1)?)?.add(&eye)?;
        let inner = skew.div(&gaps)?.add(&gl.diag_embed(0, -2, -1)?)?;
        Ok(vec![Some(v.matmul(&inner)?.matmul(&vt)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgEighBackward0"
    }
}

struct EigvalshFn {
    upper: bool,
}

impl Function for EigvalshFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (l, v) = decompose(&inputs[0], self.upper)?;
        ctx.save_for_backward(&[&v]);
        Ok(vec![l])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let v = &ctx.saved_tensors()?[0];
        Ok(vec![Some(eigenvalues_backward(v, &grads[0])?)])
    }

    fn name(&self) -> &'static str {
        "LinalgEighBackward0"
    }
}

/// torch's checks of `eigh`/`eigvalsh`; returns whether the upper triangle is read.
fn checks(a: &Tensor, uplo: &str) -> Result<bool> {
    const OP: &str = "linalg.eigh";
    check_square(OP, a, "A")?;
    let upper = parse_uplo(uplo)?;
    check_kernel("linalg_eigh_cpu", a)?;
    Ok(upper)
}

/// `torch.linalg.eigh(A, UPLO=uplo)`: `(eigenvalues, eigenvectors)` of each symmetric matrix of
/// `A` (`[*, n, n]`, float32/float64), of which only the lower (`"L"`) or upper (`"U"`) triangle is
/// read: eigenvalues `[*, n]` ascending, eigenvectors the columns of `[*, n, n]`. Each
/// eigenvector's sign is chosen so that its largest-magnitude entry is positive (torch leaves the
/// sign to LAPACK and does not promise one). Gradients are torch's; they are NaN/inf where
/// eigenvalues repeat and the loss depends on the eigenvectors, as torch's are.
pub fn eigh(a: &Tensor, uplo: &str) -> Result<(Tensor, Tensor)> {
    let upper = checks(a, uplo)?;
    let mut out = EighFn { upper }.apply(std::slice::from_ref(a))?;
    let v = out.remove(1);
    Ok((out.remove(0), v))
}

/// `torch.linalg.eigvalsh(A, UPLO=uplo)`: the eigenvalues (ascending, `[*, n]`) of each symmetric
/// matrix of `A` described by its lower (`"L"`) or upper (`"U"`) triangle; gradient `V diag(g) Vᵀ`.
pub fn eigvalsh(a: &Tensor, uplo: &str) -> Result<Tensor> {
    let upper = checks(a, uplo)?;
    Ok(EigvalshFn { upper }.apply(std::slice::from_ref(a))?.remove(0))
}
