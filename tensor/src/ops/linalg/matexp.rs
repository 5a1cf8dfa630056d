//! `linalg.matrix_exp`: the exponential of each square matrix, by scaling and squaring with a
//! degree-18 Taylor polynomial on the host in f64 (torch's largest degree and its norm bound),
//! with torch's backward (the upper-right block of the exponential of `[[Aᵀ, G], [0, Aᵀ]]`);
//! and the `Tensor::matrix_exp` method.

use oxtorch_core::Result;

use super::batch::{build, check_float, check_square, mt, Host};
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// torch's bound on the 1-norm for its degree-18 approximation in double precision: a matrix
/// with a larger norm is scaled by a power of two below it first.
const THETA_18: f64 = 1.090863719290036;

/// The degree of the Taylor polynomial.
const DEGREE: u32 = 18;

/// The product of two row-major `n × n` matrices.
fn product(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            let x = a[i * n + k];
            if x == 0.0 {
                continue;
            }
            for j in 0..n {
                out[i * n + j] += x * b[k * n + j];
            }
        }
    }
    out
}

/// The operator 1-norm (largest column sum of `|a|`) of a row-major `n × n` matrix.
fn one_norm(a: &[f64], n: usize) -> f64 {
    (0..n).map(|j| (0..n).map(|i| a[i * n + j].abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// `exp(a)` for a row-major `n × n` matrix: `a / 2^s` (with `s` the least power that brings the
/// 1-norm to at most [`THETA_18`]) through the Taylor polynomial of degree 18 (Horner's scheme),
/// then squared `s` times. A matrix with a NaN or an infinite entry gives all NaN.
fn expm(a: &[f64], n: usize) -> Vec<f64> {
    if a.iter().any(|x| !x.is_finite()) {
        return vec![f64::NAN; n * n];
    }
    let norm = one_norm(a, n);
    let squarings = if norm > THETA_18 { (norm / THETA_18).log2().ceil().max(0.0) as i32 } else { 0 };
    let scale = 0.5f64.powi(squarings);
    let x: Vec<f64> = a.iter().map(|v| v * scale).collect();
    // t = I + x (I + x/2 (I + x/3 (... (I + x/18))))
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        t[i * n + i] = 1.0;
    }
    for k in (1..=DEGREE).rev() {
        let mut xt = product(&x, &t, n);
        let k = f64::from(k);
        for v in &mut xt {
            *v /= k;
        }
        for i in 0..n {
            xt[i * n + i] += 1.0;
        }
        t = xt;
    }
    for _ in 0..squarings {
        t = product(&t, &t, n);
    }
    t
}

/// `exp(A)` for a batch of square matrices (`n ≥ 2`), computed in f64 and returned in `A`'s dtype.
struct MatrixExpFn;

impl Function for MatrixExpFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let n = h.n;
        let mut out = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            out.extend(expm(h.matrix(b), n));
        }
        let e = build(out, a.dims().to_vec(), a)?;
        ctx.save_for_backward(&[a]);
        Ok(vec![e])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let a = &ctx.saved_tensors()?[0];
        Ok(vec![Some(matrix_exp_backward(a, &grads[0])?)])
    }

    fn name(&self) -> &'static str {
        "LinalgMatrixExpBackward0"
    }
}

/// torch's `linalg_matrix_exp_differential`: the upper-right `n × n` block of
/// `exp([[Aᵀ, G], [0, Aᵀ]])`, itself differentiable (through [`matrix_exp`]).
fn matrix_exp_backward(a: &Tensor, g: &Tensor) -> Result<Tensor> {
    let n = a.size(-1)?;
    let at = mt(a)?;
    let zeros = at.zeros_like()?;
    let top = Tensor::cat(&[&at, g], -1)?;
    let bottom = Tensor::cat(&[&zeros, &at], -1)?;
    let block = Tensor::cat(&[&top, &bottom], -2)?;
    matrix_exp(&block)?.narrow(-2, 0, n)?.narrow(-1, n as isize, n)
}

/// `torch.linalg.matrix_exp(A)`: the matrix exponential `Σ Aᵏ/k!` of each square matrix of `A`
/// (`[*, n, n]`, float dtypes; integer inputs are torch's error). As torch, a `0 × 0` batch is
/// returned as it is and a `1 × 1` one is the elementwise `exp`; larger matrices are computed on
/// the host in f64 by scaling and squaring with a degree-18 Taylor polynomial (torch's norm bound
/// for its degree-18 approximation), so float16/bfloat16 results are the f64 values rounded
/// (torch's own half-precision kernel overflows). A matrix with a NaN or an infinity gives NaN.
/// The gradient is torch's: the upper-right block of `exp([[Aᵀ, G], [0, Aᵀ]])`.
pub fn matrix_exp(a: &Tensor) -> Result<Tensor> {
    const OP: &str = "linalg.matrix_exp";
    check_square(OP, a, "A")?;
    check_float(OP, a, true)?;
    match a.size(-1)? {
        0 => Ok(a.clone()),
        1 => a.exp(),
        _ => Ok(MatrixExpFn.apply(std::slice::from_ref(a))?.remove(0)),
    }
}

impl Tensor {
    /// `A.matrix_exp()`: [`linalg::matrix_exp`](crate::linalg::matrix_exp).
    pub fn matrix_exp(&self) -> Result<Tensor> {
        matrix_exp(self)
    }
}
