//! The spectral decompositions on the host, in f64: the symmetric eigendecomposition by cyclic
//! Jacobi rotations and the SVD by one-sided (Hestenes) Jacobi, both accurate to a few ulps of the
//! matrix's norm.
//!
//! Signs are deterministic but not LAPACK's (whose eigen- and singular vector signs torch does not
//! promise either): each eigenvector, and each right singular vector (its left one following), has
//! its largest-magnitude entry (the first of equals) positive. Singular vectors that the singular
//! values do not determine (for zero singular values, or the extra columns of `full_matrices`)
//! complete the others to an orthonormal basis with the unit vectors, largest residual first.

#![allow(clippy::needless_range_loop)]

const EPS: f64 = f64::EPSILON;
const MAX_SWEEPS: usize = 100;

/// The rotation `(c, s)` that diagonalises the symmetric 2×2 `[[app, apq], [apq, aqq]]` with the
/// smaller angle (Golub & Van Loan's `sym.schur2`): the new columns are `c·p - s·q` and `s·p + c·q`.
fn rotation(app: f64, aqq: f64, apq: f64) -> (f64, f64) {
    let theta = (aqq - app) / (2.0 * apq);
    let t = if theta.abs() > 1e150 {
        0.5 / theta
    } else {
        let sign = if theta >= 0.0 { 1.0 } else { -1.0 };
        sign / (theta.abs() + (theta * theta + 1.0).sqrt())
    };
    let c = 1.0 / (t * t + 1.0).sqrt();
    (c, t * c)
}

/// Flips `x` so that its largest-magnitude entry (the first of equals) is positive; returns the
/// sign applied.
fn orient(x: &mut [f64]) -> f64 {
    let (mut big, mut best) = (0, -1.0);
    for (i, &e) in x.iter().enumerate() {
        if e.abs() > best {
            best = e.abs();
            big = i;
        }
    }
    if x.get(big).is_some_and(|&e| e < 0.0) {
        x.iter_mut().for_each(|e| *e = -*e);
        -1.0
    } else {
        1.0
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn unit(dim: usize, i: usize) -> Vec<f64> {
    let mut e = vec![0.0; dim];
    e[i] = 1.0;
    e
}

/// Applies the rotation `(c, s)` to the vectors `p < q` of `cols`.
fn rotate(cols: &mut [Vec<f64>], p: usize, q: usize, c: f64, s: f64) {
    let (left, right) = cols.split_at_mut(q);
    for (x, y) in left[p].iter_mut().zip(right[0].iter_mut()) {
        let (a, b) = (*x, *y);
        *x = c * a - s * b;
        *y = s * a + c * b;
    }
}

/// Extends the orthonormal vectors `cols` (of length `dim`) to `want` orthonormal vectors: each
/// new one is the unit vector with the largest residual against those already there (projected
/// out twice), normalised. The candidates' squared residuals `1 - Σ_c c[i]²` are kept and updated
/// once per added vector, so completing costs `O(dim · want²)`, not a projection of every
/// candidate per added vector.
fn complete(cols: &mut Vec<Vec<f64>>, dim: usize, want: usize) {
    if cols.len() >= want {
        return;
    }
    let mut residual = vec![1.0; dim];
    for c in cols.iter() {
        residual.iter_mut().zip(c).for_each(|(r, x)| *r -= x * x);
    }
    while cols.len() < want {
        let Some(i) = (0..dim).max_by(|&a, &b| residual[a].total_cmp(&residual[b]).then(b.cmp(&a))) else {
            return;
        };
        let mut w = unit(dim, i);
        for _ in 0..2 {
            for c in cols.iter() {
                let d = dot(c, &w);
                w.iter_mut().zip(c).for_each(|(x, y)| *x -= d * y);
            }
        }
        let norm = dot(&w, &w).sqrt();
        let w: Vec<f64> = w.into_iter().map(|x| x / norm).collect();
        residual.iter_mut().zip(&w).for_each(|(r, x)| *r -= x * x);
        // A chosen candidate is spent even where rounding leaves it a tiny residual.
        residual[i] = f64::NEG_INFINITY;
        cols.push(w);
    }
}

/// Eigenvalues (ascending) and eigenvectors (the columns of a row-major `n × n`) of the symmetric
/// row-major `n × n` matrix `a` (both triangles are read: symmetrise first).
pub(super) fn eigh(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = a.to_vec();
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                let (app, aqq) = (a[p * n + p], a[q * n + q]);
                if apq.abs() <= f64::MIN_POSITIVE || apq.abs() <= 0.5 * EPS * (app * aqq).abs().sqrt() {
                    continue;
                }
                rotated = true;
                let (c, s) = rotation(app, aqq, apq);
                for k in 0..n {
                    let (x, y) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * x - s * y;
                    a[k * n + q] = s * x + c * y;
                }
                for k in 0..n {
                    let (x, y) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * x - s * y;
                    a[q * n + k] = s * x + c * y;
                }
                for k in 0..n {
                    let (x, y) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * x - s * y;
                    v[k * n + q] = s * x + c * y;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let diag: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| diag[i].total_cmp(&diag[j]).then(i.cmp(&j)));
    let mut vectors = vec![0.0; n * n];
    for (jj, &j) in order.iter().enumerate() {
        let mut col: Vec<f64> = (0..n).map(|k| v[k * n + j]).collect();
        orient(&mut col);
        for k in 0..n {
            vectors[k * n + jj] = col[k];
        }
    }
    (order.iter().map(|&j| diag[j]).collect(), vectors)
}

/// An SVD as vectors: `u[j]` and `v[j]` are the `j`-th left and right singular vectors.
struct Factors {
    u: Vec<Vec<f64>>,
    s: Vec<f64>,
    v: Vec<Vec<f64>>,
}

/// One-sided Jacobi on the `n` columns (each of length `m >= n`) of a matrix: rotates pairs of
/// columns until all are orthogonal; their norms are the singular values (descending) and the
/// accumulated rotations the right singular vectors. Left vectors of singular values at most
/// `max(m, n) · eps · σ_max` are completed instead of normalised.
fn one_sided(cols: Vec<Vec<f64>>, m: usize, vectors: bool) -> Factors {
    let n = cols.len();
    let mut w = cols;
    let mut v: Vec<Vec<f64>> = (0..n).map(|j| unit(n, j)).collect();
    let tol = EPS * (m as f64).sqrt();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (alpha, beta, gamma) = (dot(&w[p], &w[p]), dot(&w[q], &w[q]), dot(&w[p], &w[q]));
                if gamma == 0.0 || gamma.abs() <= tol * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let (c, s) = rotation(alpha, beta, gamma);
                rotate(&mut w, p, q, c, s);
                rotate(&mut v, p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let sig: Vec<f64> = w.iter().map(|c| dot(c, c).sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| sig[j].total_cmp(&sig[i]).then(i.cmp(&j)));
    let threshold = order.first().map_or(0.0, |&j| sig[j]) * EPS * m as f64;
    let mut f = Factors { u: Vec::with_capacity(n), s: Vec::with_capacity(n), v: Vec::with_capacity(n) };
    for &j in &order {
        let mut vj = v[j].clone();
        let sign = orient(&mut vj);
        if sig[j] > threshold && sig[j] > 0.0 {
            f.u.push(w[j].iter().map(|x| sign * x / sig[j]).collect());
        }
        f.s.push(sig[j]);
        f.v.push(vj);
    }
    if vectors {
        complete(&mut f.u, m, n);
    }
    f
}

/// The SVD of a row-major `m × n` matrix: `(U, S, Vh)` with `U` row-major `m × u_cols` (`m` when
/// `full`, else `k = min(m, n)`), `S` the `k` singular values (descending) and `Vh` row-major
/// `vh_rows × n` (`n` when `full`, else `k`).
pub(super) fn svd(a: &[f64], m: usize, n: usize, full: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let (mut u, s, mut v) = if m >= n {
        let cols = (0..n).map(|j| (0..m).map(|i| a[i * n + j]).collect()).collect();
        let f = one_sided(cols, m, true);
        (f.u, f.s, f.v)
    } else {
        // A = (Aᵀ)ᵀ = (U' S V'ᵀ)ᵀ = V' S U'ᵀ
        let rows = (0..m).map(|i| a[i * n..(i + 1) * n].to_vec()).collect();
        let f = one_sided(rows, n, true);
        (f.v, f.s, f.u)
    };
    let (u_cols, vh_rows) = if full { (m, n) } else { (k, k) };
    complete(&mut u, m, u_cols);
    complete(&mut v, n, vh_rows);
    let mut um = vec![0.0; m * u_cols];
    for (j, col) in u.iter().enumerate().take(u_cols) {
        for i in 0..m {
            um[i * u_cols + j] = col[i];
        }
    }
    let vh: Vec<f64> = v.into_iter().take(vh_rows).flatten().collect();
    (um, s, vh)
}

/// The singular values (descending) of a row-major `m × n` matrix.
pub(super) fn singular_values(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    if m >= n {
        one_sided((0..n).map(|j| (0..m).map(|i| a[i * n + j]).collect()).collect(), m, false).s
    } else {
        one_sided((0..m).map(|i| a[i * n..(i + 1) * n].to_vec()).collect(), n, false).s
    }
}
