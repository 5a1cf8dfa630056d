//! Matrix functions built from the other ops (autograd through them): `linalg.matrix_power`,
//! `linalg.multi_dot` (torch's optimal chain order), and the `_ex` variants `inv_ex` and
//! `solve_ex`, which report LAPACK's `info` instead of failing on a singular matrix.

use oxtorch_core::{Error, Result};

use super::batch::{check_float, check_square, transposed, Host};
use super::decompose::Lu;
use super::inverse::{inv, inv_unchecked};
use super::solve::{solve, SolveFn};
use crate::autograd::Function;
use crate::Tensor;

/// `torch.linalg.matrix_power(A, n)`: `A` multiplied by itself `n` times for square `A`
/// `[*, m, m]` (any dtype `matmul` takes). `n = 0` gives the identity (in `A`'s shape); `n < 0`
/// inverts first (float dtypes only, [`inv`]'s errors). Powers are taken as torch does (`A A`,
/// `(A A) A`, then binary decomposition from the least significant bit), so results round as
/// torch's. Differentiable through `matmul` and `inv`.
pub fn matrix_power(a: &Tensor, n: i64) -> Result<Tensor> {
    check_square("linalg.matrix_power", a, "A")?;
    if n == 0 {
        let m = a.dims()[a.rank() - 1];
        let eye = Tensor::eye(m, None, a.same_options())?.expand(a.dims())?.contiguous()?;
        return crate::autograd::record::with_zero_grad_to(eye, a);
    }
    let a = if n < 0 { inv(a)? } else { a.clone() };
    let mut n = n.unsigned_abs();
    match n {
        1 => return a.contiguous(),
        2 => return a.matmul(&a),
        3 => return a.matmul(&a)?.matmul(&a),
        _ => {}
    }
    let (mut z, mut result): (Option<Tensor>, Option<Tensor>) = (None, None);
    while n > 0 {
        let bit = n % 2;
        n /= 2;
        let zz = match &z {
            Some(z) => z.matmul(z)?,
            None => a.clone(),
        };
        if bit == 1 {
            result = Some(match &result {
                Some(r) => r.matmul(&zz)?,
                None => zz.clone(),
            });
        }
        z = Some(zz);
    }
    Ok(result.expect("n > 0 has a set bit"))
}

/// torch's `matrix_chain_order`: `s[i][j]`, the split of the product of matrices `i..=j`.
fn chain_order(p: &[usize]) -> Vec<Vec<usize>> {
    let n = p.len() - 1;
    let mut cost = vec![vec![0u128; n]; n];
    let mut split = vec![vec![0usize; n]; n];
    for l in 1..n {
        for i in 0..n - l {
            let j = i + l;
            cost[i][j] = u128::MAX;
            for k in i..j {
                let q = cost[i][k] + cost[k + 1][j] + (p[i] * p[k + 1] * p[j + 1]) as u128;
                if q < cost[i][j] {
                    cost[i][j] = q;
                    split[i][j] = k;
                }
            }
        }
    }
    split
}

fn chain(ts: &[Tensor], split: &[Vec<usize>], i: usize, j: usize) -> Result<Tensor> {
    if i == j {
        return Ok(ts[i].clone());
    }
    let k = split[i][j];
    chain(ts, split, i, k)?.mm(&chain(ts, split, k + 1, j)?)
}

/// `torch.linalg.multi_dot(tensors)`: the product of two or more matrices, multiplied in the order
/// with the fewest scalar multiplications (torch's rule: compared directly for three, dynamic
/// programming beyond). The first may be a vector `[k]` (a row) and the last a vector (a
/// column); the result drops those dims. All of one dtype; torch's messages for wrong ranks,
/// dtypes and shapes.
pub fn multi_dot(tensors: &[&Tensor]) -> Result<Tensor> {
    let n = tensors.len();
    if n < 2 {
        return Err(Error::msg(format!("multi_dot(): expected at least 2 tensors but got {n}")));
    }
    let (first, last) = (tensors[0], tensors[n - 1]);
    if first.rank() != 1 && first.rank() != 2 {
        return Err(Error::shape(format!(
            "multi_dot(): the first tensor must be 1D or 2D but got {}D",
            first.rank()
        )));
    }
    for (i, t) in tensors.iter().enumerate().take(n - 1).skip(1) {
        if t.rank() != 2 {
            return Err(Error::shape(format!("multi_dot(): tensor {i} must be 2D but got {}D", t.rank())));
        }
    }
    if last.rank() != 1 && last.rank() != 2 {
        return Err(Error::shape(format!(
            "multi_dot(): the last tensor must be 1D or 2D but got {}D",
            last.rank()
        )));
    }
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.dtype() != first.dtype() {
            return Err(Error::msg(format!(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {i} {}",
                super::cpp_name(first.dtype()),
                super::cpp_name(t.dtype())
            )));
        }
    }
    let mut ts: Vec<Tensor> = tensors.iter().map(|t| (*t).clone()).collect();
    let (row, col) = (first.rank() == 1, last.rank() == 1);
    if row {
        ts[0] = ts[0].unsqueeze(0)?;
    }
    if col {
        ts[n - 1] = ts[n - 1].unsqueeze(-1)?;
    }
    for i in 0..n - 1 {
        if ts[i].dims()[1] != ts[i + 1].dims()[0] {
            return Err(Error::shape(format!(
                "multi_dot(): tensors {i} and {} with shapes {:?} and {:?} cannot be multiplied",
                i + 1,
                tensors[i].dims(),
                tensors[i + 1].dims()
            )));
        }
    }
    let out = if n == 2 {
        ts[0].mm(&ts[1])?
    } else if n == 3 {
        let (a, b, c, d) = (ts[0].dims()[0], ts[1].dims()[0], ts[2].dims()[0], ts[2].dims()[1]);
        let cost1 = (a * c) as u128 * (b + d) as u128; // (AB)C
        let cost2 = (b * d) as u128 * (a + c) as u128; // A(BC)
        if cost1 > cost2 {
            ts[0].mm(&ts[1].mm(&ts[2])?)?
        } else {
            ts[0].mm(&ts[1])?.mm(&ts[2])?
        }
    } else {
        let mut p: Vec<usize> = ts.iter().map(|t| t.dims()[0]).collect();
        p.push(ts[n - 1].dims()[1]);
        let split = chain_order(&p);
        chain(&ts, &split, 0, n - 1)?
    };
    match (row, col) {
        (true, true) => out.reshape(Vec::<usize>::new()),
        (true, false) => out.squeeze_dims(0),
        (false, true) => out.squeeze_dims(-1),
        (false, false) => Ok(out),
    }
}

/// LAPACK's `getrf` info (1-based first zero pivot, 0 if none) of each matrix of square `a`,
/// factored as given (`transpose = false`) or transposed.
fn lu_infos(a: &Tensor, transpose: bool) -> Result<Vec<i32>> {
    let h = Host::read(a)?;
    Ok((0..h.count())
        .map(|b| {
            let m = if transpose { transposed(h.matrix(b), h.n, h.n) } else { h.matrix(b).to_vec() };
            Lu::factor(&m, h.n).info as i32
        })
        .collect())
}

/// `torch.linalg.inv_ex(A)`: `(inverse, info)` with `info` `[*]` int32, LAPACK's (the 1-based
/// index of the first zero pivot of the LU factorization, 0 when invertible); a singular matrix is
/// not an error (its inverse holds inf/NaN, not necessarily in LAPACK's pattern). The other
/// checks and the gradient are [`inv`]'s.
pub fn inv_ex(a: &Tensor) -> Result<(Tensor, Tensor)> {
    const OP: &str = "linalg.inv";
    check_square(OP, a, "A")?;
    check_float(OP, a, false)?;
    let info = lu_infos(a, false)?;
    let info = Tensor::from_vec_on(info, a.dims()[..a.rank() - 2].to_vec(), a.device())?;
    Ok((inv_unchecked(a)?, info))
}

/// `torch.linalg.solve_ex(A, B, left=left)`: `(result, info)`: [`solve`] whose singular `A` is
/// reported in `info` (`[*]` of `A`'s batch, int32, LAPACK's first zero pivot) instead of an
/// error (the result then holds inf/NaN, not necessarily in LAPACK's pattern). Other errors and
/// the gradient are [`solve`]'s.
pub fn solve_ex(a: &Tensor, b: &Tensor, left: bool) -> Result<(Tensor, Tensor)> {
    match solve(a, b, left) {
        Ok(x) => {
            let info = vec![0i32; a.dims()[..a.rank() - 2].iter().product()];
            let info = Tensor::from_vec_on(info, a.dims()[..a.rank() - 2].to_vec(), a.device())?;
            Ok((x, info))
        }
        Err(e) if e.to_string().contains("The solver failed because the input matrix is singular.") => {
            let info = lu_infos(a, !left)?;
            let info = Tensor::from_vec_on(info, a.dims()[..a.rank() - 2].to_vec(), a.device())?;
            let vector = b.rank() == 1 || (b.rank() == a.rank() - 1 && b.dims() == &a.dims()[..a.rank() - 1]);
            let b_ = if vector { b.unsqueeze(-1)? } else { b.clone() };
            let x = SolveFn { left, check: false }.apply(&[a.clone(), b_])?.remove(0);
            let x = if vector { x.squeeze_dims(-1)? } else { x };
            Ok((x, info))
        }
        Err(e) => Err(e),
    }
}
