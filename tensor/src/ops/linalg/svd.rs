//! `linalg.svd` and `linalg.svdvals` (one-sided Jacobi on the host) with torch's `svd_backward`,
//! and what is built on singular values: `linalg.pinv` (with torch's `pinv_backward`) and
//! `linalg.matrix_rank`.

use oxtorch_core::{DType, Error, Result};

use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_matrix, check_square, eye_like, is_zero, mt,
    rows_cols,
};
use super::batch::{transposed, Host};
use super::eigen::symmetric;
use super::jacobi;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// torch's refusal of a NaN in the matrix `b` of an SVD's input (LAPACK reports a convergence
/// failure; infinities pass and give NaNs).
fn check_no_nan(h: &Host, b: usize, a: &Tensor) -> Result<()> {
    if h.matrix(b).iter().any(|x| x.is_nan()) {
        return Err(Error::msg(format!(
            "linalg.svd: {}The algorithm failed to converge because the input matrix contained non-finite values.",
            batch_prefix(a, b)
        )));
    }
    Ok(())
}

/// `(U, S, Vh)` of each matrix of `a`.
fn decompose(a: &Tensor, full: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let h = Host::read(a)?;
    let (m, n) = (h.m, h.n);
    let k = m.min(n);
    let (u_cols, vh_rows) = if full { (m, n) } else { (k, k) };
    let (mut us, mut ss, mut vhs) = (Vec::new(), Vec::new(), Vec::new());
    for b in 0..h.count() {
        check_no_nan(&h, b, a)?;
        let (u, s, vh) = jacobi::svd(h.matrix(b), m, n, full);
        us.extend(u);
        ss.extend(s);
        vhs.extend(vh);
    }
    Ok((
        build(us, h.dims(&[m, u_cols]), a)?,
        build(ss, h.dims(&[k]), a)?,
        build(vhs, h.dims(&[vh_rows, n]), a)?,
    ))
}

/// torch's `svd_backward` for the thin factors `U` `[*, m, k]`, `S`, `Vh` `[*, k, n]`. An all-zero
/// `gU` or `gVh` counts as undefined (the output was not used), as in torch, whose formula then
/// leaves out its terms (which would divide by zero at repeated singular values).
fn svd_backward(
    gu: &Tensor,
    gs: &Tensor,
    gvh: &Tensor,
    u: &Tensor,
    s: &Tensor,
    vh: &Tensor,
) -> Result<Tensor> {
    let (m, n) = (u.size(-2)?, vh.size(-1)?);
    let (u_used, v_used) = (!is_zero(gu)?, !is_zero(gvh)?);
    if !u_used && !v_used {
        // U diag(gS) Vh
        return if m >= n {
            u.matmul(&gs.unsqueeze(-1)?.mul(vh)?)
        } else {
            u.mul(&gs.unsqueeze(-2)?)?.matmul(vh)
        };
    }
    let skew = |x: Tensor| -> Result<Tensor> { x.sub(&mt(&x)?) };
    let (s_row, s_col) = (s.unsqueeze(-2)?, s.unsqueeze(-1)?);
    let s2 = s.mul(s)?;
    // E_ij = S_j² - S_i², 1 on the diagonal
    let gaps = s2.unsqueeze(-2)?.sub(&s2.unsqueeze(-1)?)?.add(&eye_like(s.size(-1)?, s)?)?;
    let uhgu = || skew(mt(u)?.matmul(gu)?);
    let vhgv = || skew(vh.matmul(&mt(gvh)?)?);
    let inner = if u_used && v_used {
        uhgu()?.mul(&s_row)?.add(&s_col.mul(&vhgv()?)?)?.div(&gaps)?
    } else if u_used {
        uhgu()?.div(&gaps)?.mul(&s_row)?
    } else {
        s_col.mul(&vhgv()?.div(&gaps)?)?
    };
    let inner = inner.add(&gs.diag_embed(0, -2, -1)?)?;
    if m > n && u_used {
        // [U inner + (I - U Uᵀ) gU S⁻¹] Vh
        let gu_sinv = gu.div(&s_row)?;
        let g = u.matmul(&inner)?.add(&gu_sinv)?.sub(&u.matmul(&mt(u)?.matmul(&gu_sinv)?)?)?;
        g.matmul(vh)
    } else if m < n && v_used {
        // U [inner Vh + S⁻¹ gVh (I - Vhᵀ Vh)]
        let sinv_gvh = gvh.div(&s_col)?;
        let g = inner.matmul(vh)?.add(&sinv_gvh)?.sub(&sinv_gvh.matmul(&mt(vh)?)?.matmul(vh)?)?;
        u.matmul(&g)
    } else {
        u.matmul(&inner)?.matmul(vh)
    }
}

struct SvdFn {
    full: bool,
}

impl Function for SvdFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (u, s, vh) = decompose(&inputs[0], self.full)?;
        ctx.save_for_backward(&[&u, &s, &vh]);
        Ok(vec![u, s, vh])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (u, s, vh) = (&saved[0], &saved[1], &saved[2]);
        let k = s.size(-1)?;
        // With full matrices only the first k singular vectors are determined (torch narrows too).
        let thin = |t: &Tensor, dim: isize| if self.full { t.narrow(dim, 0, k) } else { Ok(t.clone()) };
        let (gu, gvh) = (thin(&grads[0], -1)?, thin(&grads[2], -2)?);
        let (u, vh) = (thin(u, -1)?, thin(vh, -2)?);
        Ok(vec![Some(svd_backward(&gu, &grads[1], &gvh, &u, s, &vh)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgSvdBackward0"
    }
}

struct SvdvalsFn;

impl Function for SvdvalsFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (u, s, vh) = decompose(&inputs[0], false)?;
        ctx.save_for_backward(&[&u, &vh]);
        Ok(vec![s])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (u, vh) = (&saved[0], &saved[1]);
        let gs = &grads[0];
        let (m, n) = (u.size(-2)?, vh.size(-1)?);
        let ga = if m >= n {
            u.matmul(&gs.unsqueeze(-1)?.mul(vh)?)?
        } else {
            u.mul(&gs.unsqueeze(-2)?)?.matmul(vh)?
        };
        Ok(vec![Some(ga)])
    }

    fn name(&self) -> &'static str {
        "LinalgSvdBackward0"
    }
}

fn svd_checks(a: &Tensor) -> Result<()> {
    const OP: &str = "linalg.svd";
    check_matrix(OP, a, "A")?;
    check_float(OP, a, true)?;
    check_kernel("linalg_svd_cpu", a)
}

/// `torch.linalg.svd(A, full_matrices=full_matrices)`: `(U, S, Vh)` with `A = U diag(S) Vh` for
/// `A` `[*, m, n]` (float32/float64), `k = min(m, n)`: `S` `[*, k]` descending; `U` `[*, m, m]` and
/// `Vh` `[*, n, n]` with `full_matrices`, else `[*, m, k]` and `[*, k, n]`. Each pair of singular
/// vectors has the sign that makes the right one's largest-magnitude entry positive (torch does
/// not promise LAPACK's signs). Gradients are torch's `svd_backward` (only the first `k` vectors
/// count with `full_matrices`); they are NaN/inf where singular values repeat (or are zero, for a
/// rectangular `A`) and the loss depends on the vectors, as torch's are.
pub fn svd(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    svd_checks(a)?;
    let mut out = SvdFn { full: full_matrices }.apply(std::slice::from_ref(a))?;
    let vh = out.remove(2);
    let s = out.remove(1);
    Ok((out.remove(0), s, vh))
}

/// `torch.linalg.svdvals(A)`: the singular values `[*, k]` (descending) of each matrix of `A`;
/// gradient `U diag(g) Vh`.
pub fn svdvals(a: &Tensor) -> Result<Tensor> {
    svd_checks(a)?;
    Ok(SvdvalsFn.apply(std::slice::from_ref(a))?.remove(0))
}

/// The cutoff below which singular values count as zero: `max(atol, rtol · σ_max)`, where `rtol`
/// defaults to `eps(dtype) · max(m, n)`, or to 0 when `atol` is given and positive (torch's rule).
fn cutoff(dtype: DType, m: usize, n: usize, atol: Option<f64>, rtol: Option<f64>, s_max: f64) -> f64 {
    let eps = if dtype == DType::F32 { f64::from(f32::EPSILON) } else { f64::EPSILON };
    let default_rtol = if atol.is_some_and(|t| t > 0.0) { 0.0 } else { eps * m.max(n) as f64 };
    atol.unwrap_or(0.0).max(rtol.unwrap_or(default_rtol) * s_max)
}

/// The spectrum `pinv` and `matrix_rank` threshold, and the pseudo-inverse it gives, for one
/// row-major `m × n` matrix: singular values with `U`, `Vh`, or with `hermitian` the eigenvalues
/// of the symmetric matrix of `a`'s lower triangle (their magnitudes compared to the cutoff).
struct Spectrum {
    values: Vec<f64>,
    /// `m × k`, row-major
    left: Vec<f64>,
    /// `k × n`, row-major
    right: Vec<f64>,
}

impl Spectrum {
    fn of(a: &[f64], m: usize, n: usize, hermitian: bool) -> Spectrum {
        if hermitian {
            let (w, v) = jacobi::eigh(&symmetric(a, n, false), n);
            // A = V diag(w) Vᵀ
            Spectrum { values: w, right: transposed(&v, n, n), left: v }
        } else {
            let (u, s, vh) = jacobi::svd(a, m, n, false);
            Spectrum { values: s, left: u, right: vh }
        }
    }

    fn max_magnitude(&self) -> f64 {
        self.values.iter().fold(0.0, |acc: f64, x| acc.max(x.abs()))
    }

    /// `right.T diag(1/values where |value| > cutoff) left.T`, row-major `n × m`.
    fn pseudo_inverse(&self, m: usize, n: usize, cutoff: f64) -> Vec<f64> {
        let k = self.values.len();
        let mut out = vec![0.0; n * m];
        for (l, &w) in self.values.iter().enumerate() {
            if w.abs() <= cutoff || w == 0.0 {
                continue;
            }
            for j in 0..n {
                let r = self.right[l * n + j] / w;
                for i in 0..m {
                    out[j * m + i] += r * self.left[i * k + l];
                }
            }
        }
        out
    }
}

struct PinvFn {
    atol: Option<f64>,
    rtol: Option<f64>,
    hermitian: bool,
}

impl Function for PinvFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let (m, n) = (h.m, h.n);
        let mut out = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            if !self.hermitian {
                check_no_nan(&h, b, a)?;
            }
            let sp = Spectrum::of(h.matrix(b), m, n, self.hermitian);
            let cut = cutoff(a.dtype(), m, n, self.atol, self.rtol, sp.max_magnitude());
            out.extend(sp.pseudo_inverse(m, n, cut));
        }
        let p = build(out, h.dims(&[n, m]), a)?;
        ctx.save_for_backward(&[a, &p]);
        Ok(vec![p])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // torch's pinv_backward
        let saved = ctx.saved_tensors()?;
        let (a, p) = (&saved[0], &saved[1]);
        let (m, n) = rows_cols(a);
        let (ph, gh) = (mt(p)?, mt(&grads[0])?);
        let ga = if m <= n {
            let k = gh.matmul(p)?;
            let kph = k.matmul(&ph)?;
            let t1 = mt(&p.matmul(&k)?)?.neg()?.add(&kph)?;
            let t2 = a.matmul(p)?.matmul(&kph)?;
            let t3 = ph.matmul(p)?.matmul(&gh.sub(&k.matmul(a)?)?)?;
            t1.sub(&t2)?.add(&t3)?
        } else {
            let k = p.matmul(&gh)?;
            let phk = ph.matmul(&k)?;
            let t1 = mt(&k.matmul(p)?)?.neg()?;
            let t2 = gh.sub(&a.matmul(&k)?)?.matmul(p)?.matmul(&ph)?;
            let t3 = phk.sub(&phk.matmul(p)?.matmul(a)?)?;
            t1.add(&t2)?.add(&t3)?
        };
        Ok(vec![Some(ga)])
    }

    fn name(&self) -> &'static str {
        "LinalgPinvBackward0"
    }
}

/// `torch.linalg.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)`: the Moore-Penrose
/// pseudo-inverse `[*, n, m]` of each matrix of `A` `[*, m, n]` (float32/float64), from its SVD
/// (from the eigendecomposition of its lower triangle's symmetric matrix with `hermitian`), the
/// singular values (eigenvalue magnitudes) at most `max(atol, rtol · σ_max)` treated as zero;
/// `rtol` defaults to `eps · max(m, n)`, or to 0 when a positive `atol` is given. The gradient is
/// torch's `pinv_backward`.
pub fn pinv(a: &Tensor, atol: Option<f64>, rtol: Option<f64>, hermitian: bool) -> Result<Tensor> {
    if a.rank() < 2 || !matches!(a.dtype(), DType::F32 | DType::F64) {
        return Err(Error::msg(format!(
            "linalg.pinv({}{{{:?}}}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types",
            a.dtype().scalar_type_name(),
            a.dims()
        )));
    }
    if hermitian {
        check_square("linalg.eigh", a, "A")?;
    }
    Ok(PinvFn { atol, rtol, hermitian }.apply(std::slice::from_ref(a))?.remove(0))
}

/// `torch.linalg.matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian)`: the number (int64,
/// `[*]`) of singular values of each matrix of `A` (eigenvalue magnitudes with `hermitian`, reading
/// the lower triangle) above `max(atol, rtol · σ_max)`, with [`pinv`]'s defaults.
pub fn matrix_rank(a: &Tensor, atol: Option<f64>, rtol: Option<f64>, hermitian: bool) -> Result<Tensor> {
    check_matrix("torch.linalg.matrix_rank", a, "input")?;
    if !matches!(a.dtype(), DType::F32 | DType::F64) {
        return Err(Error::msg("This function doesn't handle types other than float and double"));
    }
    if hermitian {
        check_square("linalg.eigh", a, "A")?;
    }
    let h = Host::read(a)?;
    let (m, n) = (h.m, h.n);
    let ranks = (0..h.count())
        .map(|b| {
            let values = if hermitian {
                jacobi::eigh(&symmetric(h.matrix(b), n, false), n).0
            } else {
                check_no_nan(&h, b, a)?;
                jacobi::singular_values(h.matrix(b), m, n)
            };
            let s_max = values.iter().fold(0.0, |acc: f64, x| acc.max(x.abs()));
            let cut = cutoff(a.dtype(), m, n, atol, rtol, s_max);
            Ok(values.iter().filter(|x| x.abs() > cut).count() as i64)
        })
        .collect::<Result<Vec<i64>>>()?;
    Tensor::from_vec_on(ranks, h.batch.clone(), a.device())
}
