//! The factorizations on the host, in f64 on row-major slices, following LAPACK's conventions so
//! that results (and failure indices) are torch's: LU with partial pivoting (`getrf`), Cholesky
//! (`potrf`) and Householder QR (`geqrf` + `orgqr`).

#![allow(clippy::needless_range_loop)]

/// An LU factorization `P A = L U` of an `n × n` matrix: `lu` holds `L` below the diagonal (unit
/// diagonal implied) and `U` on and above it; row `k` was swapped with row `piv[k]` at step `k`.
pub(super) struct Lu {
    pub n: usize,
    pub lu: Vec<f64>,
    pub piv: Vec<usize>,
    /// LAPACK's `info`: the 1-based index of the first exactly-zero pivot, 0 if none.
    pub info: usize,
}

/// LAPACK's `getrf` on a row-major `m × n` matrix: the packed `L\U` factors, the pivot row chosen at
/// each of the `min(m, n)` steps (the first row with the largest `|a[i][k]|`, as `idamax`), and
/// `info`, the 1-based step of the first zero pivot (0 when none; its column is skipped, as `getrf`
/// continues past it).
pub(super) fn getrf(a: &[f64], m: usize, n: usize) -> (Vec<f64>, Vec<usize>, usize) {
    let mut lu = a.to_vec();
    let steps = m.min(n);
    let mut piv = vec![0; steps];
    let mut info = 0;
    for k in 0..steps {
        let mut p = k;
        let mut best = lu[k * n + k].abs();
        for i in k + 1..m {
            let v = lu[i * n + k].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv[k] = p;
        if p != k {
            for j in 0..n {
                lu.swap(k * n + j, p * n + j);
            }
        }
        let d = lu[k * n + k];
        if d == 0.0 {
            if info == 0 {
                info = k + 1;
            }
            continue;
        }
        for i in k + 1..m {
            let l = lu[i * n + k] / d;
            lu[i * n + k] = l;
            for j in k + 1..n {
                lu[i * n + j] -= l * lu[k * n + j];
            }
        }
    }
    (lu, piv, info)
}

impl Lu {
    /// Factors `a` (row-major `n × n`) with partial pivoting: at step `k` the first row with the
    /// largest `|a[i][k]|` (`i >= k`) becomes the pivot row, as LAPACK's `idamax` picks it. A zero
    /// pivot is recorded and its column skipped, as `getrf` continues past it.
    pub fn factor(a: &[f64], n: usize) -> Lu {
        let (lu, piv, info) = getrf(a, n, n);
        Lu { n, lu, piv, info }
    }

    /// `(-1)^(number of row swaps)`.
    pub fn perm_sign(&self) -> f64 {
        let swaps = self.piv.iter().enumerate().filter(|&(k, &p)| p != k).count();
        if swaps % 2 == 0 {
            1.0
        } else {
            -1.0
        }
    }

    /// The determinant: the product of `U`'s diagonal, times the permutation's sign.
    pub fn det(&self) -> f64 {
        let n = self.n;
        (0..n).map(|i| self.lu[i * n + i]).product::<f64>() * self.perm_sign()
    }

    /// `(sign, log|det|)`: the product of the signs of `U`'s diagonal (0 for a zero pivot) times the
    /// permutation's sign, and the sum of the logs of its magnitudes (`-inf` when singular).
    pub fn slogdet(&self) -> (f64, f64) {
        let n = self.n;
        let mut sign = 1.0;
        let mut log = 0.0;
        for i in 0..n {
            let d = self.lu[i * n + i];
            sign *= if d > 0.0 {
                1.0
            } else if d < 0.0 {
                -1.0
            } else {
                0.0
            };
            log += d.abs().ln();
        }
        (sign * self.perm_sign(), log)
    }

    /// Solves `A X = B` in place for `B` row-major `n × k` (`U`'s zero pivots give inf/NaN).
    pub fn solve(&self, b: &mut [f64], k: usize) {
        let (n, lu) = (self.n, &self.lu);
        for i in 0..n {
            let p = self.piv[i];
            if p != i {
                for j in 0..k {
                    b.swap(i * k + j, p * k + j);
                }
            }
        }
        for i in 0..n {
            for r in 0..i {
                let l = lu[i * n + r];
                for j in 0..k {
                    b[i * k + j] -= l * b[r * k + j];
                }
            }
        }
        for i in (0..n).rev() {
            for r in i + 1..n {
                let u = lu[i * n + r];
                for j in 0..k {
                    b[i * k + j] -= u * b[r * k + j];
                }
            }
            let d = lu[i * n + i];
            for j in 0..k {
                b[i * k + j] /= d;
            }
        }
    }

    /// `A⁻¹`, row-major (inf/NaN where `A` is singular).
    pub fn inverse(&self) -> Vec<f64> {
        let n = self.n;
        let mut x = vec![0.0; n * n];
        for i in 0..n {
            x[i * n + i] = 1.0;
        }
        self.solve(&mut x, n);
        x
    }
}

/// The Cholesky factor `L` (lower, row-major) of the symmetric matrix whose lower triangle is
/// `a`'s (the upper triangle is not read), or `Err(k)`: the leading minor of order `k` (1-based)
/// is not positive-definite, as LAPACK's `potrf` reports.
pub(super) fn cholesky(a: &[f64], n: usize) -> Result<Vec<f64>, usize> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d <= 0.0 || d.is_nan() {
            return Err(j + 1);
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    Ok(l)
}

/// Householder QR of a row-major `m × n` matrix as LAPACK's `geqrf` then `orgqr`: reflector `j`
/// is `I - tau v vᵀ` with `v[j] = 1`, `beta = -sign(alpha) ‖(alpha, x)‖` (`tau = 0`, no
/// reflection, when `x` is zero), so `R`'s diagonal has LAPACK's signs. Returns `(Q, R)`: `Q` is
/// `m × q_cols` (the first columns of `H_0 ⋯ H_{k-1}`), `R` is `r_rows × n`, upper triangular.
pub(super) fn qr(a: &[f64], m: usize, n: usize, q_cols: usize, r_rows: usize) -> (Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let mut w = a.to_vec();
    let mut taus = vec![0.0; k];
    for j in 0..k {
        let alpha = w[j * n + j];
        let xnorm = (j + 1..m).fold(0.0f64, |acc, i| acc.hypot(w[i * n + j]));
        if xnorm == 0.0 {
            continue;
        }
        let beta = -alpha.hypot(xnorm).copysign(alpha);
        let tau = (beta - alpha) / beta;
        taus[j] = tau;
        let scale = 1.0 / (alpha - beta);
        for i in j + 1..m {
            w[i * n + j] *= scale;
        }
        w[j * n + j] = beta;
        for c in j + 1..n {
            let s = tau * (w[j * n + c] + (j + 1..m).map(|i| w[i * n + j] * w[i * n + c]).sum::<f64>());
            w[j * n + c] -= s;
            for i in j + 1..m {
                w[i * n + c] -= s * w[i * n + j];
            }
        }
    }
    let mut q = vec![0.0; m * q_cols];
    for i in 0..m.min(q_cols) {
        q[i * q_cols + i] = 1.0;
    }
    for j in (0..k).rev() {
        let tau = taus[j];
        if tau == 0.0 {
            continue;
        }
        for c in 0..q_cols {
            let dot = (j + 1..m).map(|i| w[i * n + j] * q[i * q_cols + c]).sum::<f64>();
            let s = tau * (q[j * q_cols + c] + dot);
            q[j * q_cols + c] -= s;
            for i in j + 1..m {
                q[i * q_cols + c] -= s * w[i * n + j];
            }
        }
    }
    let mut r = vec![0.0; r_rows * n];
    for i in 0..r_rows.min(k) {
        for c in i..n {
            r[i * n + c] = w[i * n + c];
        }
    }
    (q, r)
}
