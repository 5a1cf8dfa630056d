//! `linalg.ldl_factor_ex`, `linalg.ldl_factor` and `linalg.ldl_solve`: the Bunch–Kaufman
//! factorization of symmetric matrices as LAPACK's `dsytf2` (lower triangle) and the solve as
//! its `dsytrs`, on the host in float64. Not differentiable, as in torch.

use oxtorch_core::{broadcast_shapes, DType, Error, Result};

use super::batch::{build, check_float, check_kernel, check_square, rows_cols, Host};
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// Bunch–Kaufman's `alpha = (1 + √17) / 8`.
fn bk_alpha() -> f64 {
    (1.0 + 17f64.sqrt()) / 8.0
}

/// The first index of the largest `|x|` among `idx` (LAPACK's `idamax`: ties keep the first).
fn iamax(idx: impl Iterator<Item = usize>, value: impl Fn(usize) -> f64) -> usize {
    let mut best = usize::MAX;
    let mut best_v = -1.0;
    for i in idx {
        let v = value(i).abs();
        if best == usize::MAX || v > best_v {
            best = i;
            best_v = v;
        }
    }
    best
}

/// LAPACK's `dsytf2` with `uplo = 'L'` on a row-major `n × n` matrix, in place (only the lower
/// triangle is read and written). Returns the 1-based pivots (negative, repeated, for the two
/// rows of a 2 × 2 block) and `info` (the 1-based index of the first exactly-zero `D(k, k)`, 0 if
/// none).
fn sytf2_lower(a: &mut [f64], n: usize) -> (Vec<i32>, i32) {
    let at = |i: usize, j: usize| i * n + j;
    let alpha = bk_alpha();
    let mut ipiv = vec![0i32; n];
    let mut info = 0i32;
    let mut k = 0;
    while k < n {
        let mut kstep = 1;
        let absakk = a[at(k, k)].abs();
        let (imax, colmax) = if k + 1 < n {
            let imax = iamax(k + 1..n, |i| a[at(i, k)]);
            (imax, a[at(imax, k)].abs())
        } else {
            (k, 0.0)
        };
        let kp;
        if absakk.max(colmax) == 0.0 || absakk.is_nan() {
            if info == 0 {
                info = k as i32 + 1;
            }
            kp = k;
        } else {
            if absakk >= alpha * colmax {
                kp = k;
            } else {
                let jmax = iamax(k..imax, |j| a[at(imax, j)]);
                let mut rowmax = a[at(imax, jmax)].abs();
                if imax + 1 < n {
                    let jmax = iamax(imax + 1..n, |j| a[at(j, imax)]);
                    rowmax = rowmax.max(a[at(jmax, imax)].abs());
                }
                if absakk >= alpha * colmax * (colmax / rowmax) {
                    kp = k;
                } else if a[at(imax, imax)].abs() >= alpha * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                // Interchange rows and columns kk and kp of the trailing lower triangle.
                for i in kp + 1..n {
                    a.swap(at(i, kk), at(i, kp));
                }
                for j in kk + 1..kp {
                    a.swap(at(j, kk), at(kp, j));
                }
                a.swap(at(kk, kk), at(kp, kp));
                if kstep == 2 {
                    a.swap(at(k + 1, k), at(kp, k));
                }
            }
            if kstep == 1 {
                if k + 1 < n {
                    // dsyr: A22 -= d11 x xᵀ (lower), then x *= d11.
                    let d11 = 1.0 / a[at(k, k)];
                    let neg = -d11;
                    for j in k + 1..n {
                        if a[at(j, k)] != 0.0 {
                            let t = neg * a[at(j, k)];
                            for i in j..n {
                                a[at(i, j)] += a[at(i, k)] * t;
                            }
                        }
                    }
                    for i in k + 1..n {
                        a[at(i, k)] *= d11;
                    }
                }
            } else if k + 2 < n {
                let d21 = a[at(k + 1, k)];
                let d11 = a[at(k + 1, k + 1)] / d21;
                let d22 = a[at(k, k)] / d21;
                let t = 1.0 / (d11 * d22 - 1.0);
                let d21 = t / d21;
                for j in k + 2..n {
                    let wk = d21 * (d11 * a[at(j, k)] - a[at(j, k + 1)]);
                    let wkp1 = d21 * (d22 * a[at(j, k + 1)] - a[at(j, k)]);
                    for i in j..n {
                        a[at(i, j)] = a[at(i, j)] - a[at(i, k)] * wk - a[at(i, k + 1)] * wkp1;
                    }
                    a[at(j, k)] = wk;
                    a[at(j, k + 1)] = wkp1;
                }
            }
        }
        if kstep == 1 {
            ipiv[k] = kp as i32 + 1;
        } else {
            ipiv[k] = -(kp as i32 + 1);
            ipiv[k + 1] = -(kp as i32 + 1);
        }
        k += kstep;
    }
    // torch returns the strictly upper triangle zeroed.
    for i in 0..n {
        for j in i + 1..n {
            a[at(i, j)] = 0.0;
        }
    }
    (ipiv, info)
}

/// LAPACK's `dsytrs` with `uplo = 'L'`: solves `A X = B` in place for the row-major `n × r` `b`
/// from `dsytf2`'s `ld` (row-major `n × n`) and 1-based `ipiv`. `None` for pivots that are not a
/// valid `dsytf2` result.
fn sytrs_lower(ld: &[f64], ipiv: &[i64], b: &mut [f64], n: usize, r: usize) -> Option<()> {
    let l = |i: usize, j: usize| ld[i * n + j];
    let swap_rows = |b: &mut [f64], x: usize, y: usize| {
        if x != y {
            for c in 0..r {
                b.swap(x * r + c, y * r + c);
            }
        }
    };
    let pivot = |k: usize| -> Option<(bool, usize)> {
        let p = ipiv[k];
        let (one, idx) = if p > 0 { (true, p) } else { (false, -p) };
        if idx < 1 || idx as usize > n {
            return None;
        }
        Some((one, idx as usize - 1))
    };
    // Solve L D Y = B.
    let mut k = 0;
    while k < n {
        let (one, kp) = pivot(k)?;
        if one {
            swap_rows(b, k, kp);
            for i in k + 1..n {
                let f = l(i, k);
                for c in 0..r {
                    b[i * r + c] -= f * b[k * r + c];
                }
            }
            let d = 1.0 / l(k, k);
            for c in 0..r {
                b[k * r + c] *= d;
            }
            k += 1;
        } else {
            if k + 1 >= n {
                return None;
            }
            swap_rows(b, k + 1, kp);
            for i in k + 2..n {
                let (f0, f1) = (l(i, k), l(i, k + 1));
                for c in 0..r {
                    b[i * r + c] -= f0 * b[k * r + c];
                }
                for c in 0..r {
                    b[i * r + c] -= f1 * b[(k + 1) * r + c];
                }
            }
            let akm1k = l(k + 1, k);
            let akm1 = l(k, k) / akm1k;
            let ak = l(k + 1, k + 1) / akm1k;
            let denom = akm1 * ak - 1.0;
            for c in 0..r {
                let bkm1 = b[k * r + c] / akm1k;
                let bk = b[(k + 1) * r + c] / akm1k;
                b[k * r + c] = (ak * bkm1 - bk) / denom;
                b[(k + 1) * r + c] = (akm1 * bk - bkm1) / denom;
            }
            k += 2;
        }
    }
    // Solve Lᵀ X = Y.
    let mut k = n;
    while k > 0 {
        let kk = k - 1;
        let (one, kp) = pivot(kk)?;
        if one {
            for c in 0..r {
                let s: f64 = (k..n).map(|i| l(i, kk) * b[i * r + c]).sum();
                b[kk * r + c] -= s;
            }
            swap_rows(b, kk, kp);
            k -= 1;
        } else {
            if kk == 0 {
                return None;
            }
            for c in 0..r {
                let s: f64 = (k..n).map(|i| l(i, kk) * b[i * r + c]).sum();
                b[kk * r + c] -= s;
                let s: f64 = (k..n).map(|i| l(i, kk - 1) * b[i * r + c]).sum();
                b[(kk - 1) * r + c] -= s;
            }
            swap_rows(b, kk, kp);
            k -= 2;
        }
    }
    Some(())
}

/// torch's refusal to differentiate an op without a derivative formula: the outputs record a
/// `NotImplemented` node whose backward is `derivative for aten::{op} is not implemented`.
struct NotDifferentiable {
    op: &'static str,
    /// `ldl_factor_ex`: (LD, pivots, info); `ldl_solve`: X.
    solve: Option<SolveArgs>,
}

struct SolveArgs {
    /// The 1-based pivots, one row per matrix of the (broadcast) batch.
    pivots: Vec<i64>,
}

impl Function for NotDifferentiable {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        match &self.solve {
            None => {
                let a = &inputs[0];
                let h = Host::read(a)?;
                let n = h.n;
                let mut lds = Vec::with_capacity(h.data.len());
                let (mut pivs, mut infos) = (Vec::new(), Vec::new());
                for b in 0..h.count() {
                    let mut w = h.matrix(b).to_vec();
                    let (piv, info) = sytf2_lower(&mut w, n);
                    lds.extend(w);
                    pivs.extend(piv);
                    infos.push(info);
                }
                let ld = build(lds, a.dims().to_vec(), a)?;
                let piv = Tensor::from_vec_on(pivs, h.dims(&[n]), a.device())?;
                let info = Tensor::from_vec_on(infos, h.batch.clone(), a.device())?;
                ctx.mark_non_differentiable(&[&piv, &info]);
                Ok(vec![ld, piv, info])
            }
            Some(args) => {
                let (ld, b) = (&inputs[0], &inputs[1]);
                let hl = Host::read(ld)?;
                let hb = Host::read(b)?;
                let (n, r) = (hb.m, hb.n);
                let mut out = Vec::with_capacity(hb.data.len());
                for i in 0..hb.count() {
                    let mut x = hb.matrix(i).to_vec();
                    sytrs_lower(hl.matrix(i), &args.pivots[i * n..(i + 1) * n], &mut x, n, r).ok_or_else(
                        || Error::msg("torch.linalg.ldl_solve: pivots are not a valid LDL factorization"),
                    )?;
                    out.extend(x);
                }
                Ok(vec![build(out, b.dims().to_vec(), b)?])
            }
        }
    }

    fn backward(&self, _ctx: &FunctionCtx, _grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Err(Error::msg(format!("derivative for aten::{} is not implemented", self.op)))
    }

    fn name(&self) -> &'static str {
        "NotImplemented"
    }
}

fn factor_checks(op: &str, a: &Tensor) -> Result<()> {
    check_square(op, a, "A")?;
    check_float(op, a, true)?;
    check_kernel("ldl_factor_kernel_cpu", a)
}

/// `torch.linalg.ldl_factor_ex(A, hermitian=hermitian, check_errors=check_errors)`:
/// `(LD, pivots, info)`, the Bunch–Kaufman factorization `A = P L D Lᵀ Pᵀ` of each symmetric
/// matrix of `A` (`[*, n, n]`, float32/float64, only the lower triangle read) as LAPACK's
/// `sytrf`: `LD` holds `L` (unit diagonal implied) below the diagonal and the 1 × 1 and 2 × 2
/// blocks of `D` on and next to it (the strictly upper triangle zero), `pivots` (`[*, n]` int32)
/// LAPACK's 1-based interchanges (negative and repeated for a 2 × 2 block), `info` (`[*]` int32)
/// the 1-based index of the first zero block of `D` (0 if none). `hermitian` changes nothing for
/// real inputs. With `check_errors` a nonzero `info` is torch's error. Not differentiable:
/// `LD` of an input that requires grad records torch's `NotImplemented` node.
pub fn ldl_factor_ex(a: &Tensor, hermitian: bool, check_errors: bool) -> Result<(Tensor, Tensor, Tensor)> {
    const OP: &str = "torch.linalg.ldl_factor_ex";
    let _ = hermitian;
    factor_checks(OP, a)?;
    let factor = NotDifferentiable { op: "linalg_ldl_factor_ex", solve: None };
    let mut out = factor.apply(std::slice::from_ref(a))?;
    let info = out.remove(2);
    let piv = out.remove(1);
    if check_errors {
        check_info(OP, &info)?;
    }
    Ok((out.remove(0), piv, info))
}

/// torch's report of a nonzero `info` (its `_linalg_check_errors` has no case for the LDL ops).
fn check_info(op: &str, info: &Tensor) -> Result<()> {
    let infos = info.to_dtype(DType::I64)?.to_vec::<i64>()?;
    match infos.iter().find(|&&i| i != 0) {
        Some(i) => Err(Error::msg(format!("{op}: Unknown error code: {i}."))),
        None => Ok(()),
    }
}

/// `torch.linalg.ldl_factor(A, hermitian=hermitian)`: `(LD, pivots)` of [`ldl_factor_ex`] (its
/// checks and messages); a singular `D` is torch's error.
pub fn ldl_factor(a: &Tensor, hermitian: bool) -> Result<(Tensor, Tensor)> {
    let (ld, piv, info) = ldl_factor_ex(a, hermitian, false)?;
    check_info("torch.linalg.ldl_factor", &info)?;
    Ok((ld, piv))
}

/// `torch.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)`: the solution `X` of `A X = B`
/// from `A`'s factorization `(LD, pivots)` by [`ldl_factor`] (LAPACK's `sytrs`). `LD` is
/// `[*, n, n]`, `pivots` `[*, n]` (any integer dtype), `B` `[*, n, k]` of `LD`'s dtype; the batch
/// dims of `LD` and `B` broadcast. Not differentiable (torch's `NotImplemented` node).
pub fn ldl_solve(ld: &Tensor, pivots: &Tensor, b: &Tensor, hermitian: bool) -> Result<Tensor> {
    const OP: &str = "torch.linalg.ldl_solve";
    let _ = hermitian;
    check_square(OP, ld, "A")?;
    check_float(OP, ld, true)?;
    if b.rank() < 2 {
        let r = b.rank().max(1) as isize;
        return Err(Error::msg(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got -2)",
            -r,
            r - 1
        )));
    }
    if b.dtype() != ld.dtype() {
        return Err(Error::msg(format!(
            "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
            b.dtype().scalar_type_name(),
            ld.dtype().scalar_type_name()
        )));
    }
    let (n, _) = rows_cols(ld);
    let (bm, bk) = rows_cols(b);
    if bm != n {
        return Err(Error::shape(format!(
            "Incompatible matrix sizes for {OP}: each A matrix is {n} by {n} but each b matrix is {bm} by {bk}"
        )));
    }
    let ld_head = &ld.dims()[..ld.rank() - 1];
    if pivots.dims() != ld_head {
        return Err(Error::shape(format!(
            "{OP}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape {:?} instead",
            pivots.dims()
        )));
    }
    if !pivots.dtype().is_int() {
        return Err(Error::msg(format!(
            "{OP}: Expected pivots to be integers. Got {}",
            pivots.dtype().scalar_type_name()
        )));
    }
    check_kernel("ldl_solve_kernel_cpu", ld)?;
    let batch = broadcast_shapes(&ld.dims()[..ld.rank() - 2], &b.dims()[..b.rank() - 2])?;
    let with = |tail: &[usize]| -> Vec<usize> { batch.iter().chain(tail).copied().collect() };
    let ld_b = ld.expand(with(&[n, n]))?;
    let piv_b = pivots.expand(with(&[n]))?;
    let b_b = b.expand(with(&[n, bk]))?;
    let piv = piv_b.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()?;
    let solve = NotDifferentiable { op: "linalg_ldl_solve", solve: Some(SolveArgs { pivots: piv }) };
    Ok(solve.apply(&[ld_b, b_b])?.remove(0))
}
