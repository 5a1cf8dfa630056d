//! `linalg.matrix_exp`: the exponential of each square matrix by torch's CPU scheme (Bader,
//! Blanes and Casas, "Computing the Matrix Exponential with an Optimized Taylor Polynomial
//! Approximation", 2019): the degree of the Taylor approximation (1, 2, 4, 8, 12 or 18) picked by
//! the 1-norm, degrees 8, 12 and 18 through their optimized evaluation schemes, and scaling and
//! squaring beyond the degree-18 bound; all products are the tensor library's `matmul` (so large
//! matrices use the GEMM kernels and device tensors stay on their device). With torch's backward
//! (the upper-right block of the exponential of `[[Aᵀ, G], [0, Aᵀ]]`); and the
//! `Tensor::matrix_exp` method.

// The coefficients are torch's literals, digit for digit.
#![allow(clippy::excessive_precision)]

use oxtorch_core::{DType, Result};

use super::batch::{check_float, check_square, eye_like, mt};
use crate::autocast::AutocastGuard;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// torch's bounds on the 1-norm for the degrees 1, 2, 4, 8, 12 and 18 in single precision (held
/// as `float`, so rounded to f32 before they are compared).
const THETAS_F32: [f64; 6] = [
    1.192092800768788e-07,
    5.978858893805233e-04,
    5.116619363445086e-02,
    5.800524627688768e-01,
    1.461661507209034e+00,
    3.010066362817634e+00,
];

/// torch's bounds on the 1-norm for the degrees 1, 2, 4, 8, 12 and 18 in double precision.
const THETAS_F64: [f64; 6] = [
    2.220446049250313e-16,
    2.580956802971767e-08,
    3.397168839976962e-04,
    4.991228871115323e-02,
    2.996158913811580e-01,
    1.090863719290036e+00,
];

/// torch's `compute_T12` coefficients: `B_i = Σ_j b[i][j] P_j` with `P = [I, A, A², A³]`.
const B12: [[f64; 4]; 4] = [
    [9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740],
    [5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989],
    [0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230],
    [-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359],
];

/// torch's `compute_T18` coefficients: `B_i = Σ_j b[i][j] P_j` with `P = [I, A, A², A³, A⁶]`.
const B18: [[f64; 5]; 5] = [
    [0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.0],
    [
        0.0,
        3.97849749499645077844e-01,
        1.36783778460411720168e+00,
        4.98289622525382669416e-01,
        -6.37898194594723280150e-04,
    ],
    [
        -1.09676396052962061844e+01,
        1.68015813878906206114e+00,
        5.71779846478865511061e-02,
        -6.98210122488052056106e-03,
        3.34975017086070470649e-05,
    ],
    [
        -9.04316832390810593223e-02,
        -6.76404519071381882256e-02,
        6.75961301770459654925e-02,
        2.95552570429315521194e-02,
        -1.39180257516060693404e-05,
    ],
    [0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05],
];

/// The precision of the computation: torch's `scalar_t`, f32 for float32 inputs and f64 for the
/// others (float16/bfloat16 are computed in f64, see [`matrix_exp`]).
#[derive(Clone, Copy)]
struct Precision {
    single: bool,
}

impl Precision {
    /// `v` as the computation's scalar type holds it.
    fn round(self, v: f64) -> f64 {
        if self.single {
            f64::from(v as f32)
        } else {
            v
        }
    }

    /// The norm bound of degree index `i` (0..6 for degrees 1, 2, 4, 8, 12, 18).
    fn theta(self, i: usize) -> f64 {
        self.round(if self.single { THETAS_F32[i] } else { THETAS_F64[i] })
    }

    /// torch's number of squarings `ceil(log2(norm / θ₁₈))` clamped at 0, in the scalar type.
    fn squarings(self, norm: f64) -> u32 {
        let s = if self.single {
            f64::from(((norm as f32) / (self.theta(5) as f32)).log2().ceil())
        } else {
            (norm / self.theta(5)).log2().ceil()
        };
        s.max(0.0) as u32
    }
}

/// torch's `_linear_combination`: `Σ c_i M_i`, accumulated left to right (a zero coefficient's
/// term, which adds a zero, is left out; a unit coefficient multiplies nothing). The coefficients
/// are already in the scalar type; at least one is non-zero.
fn combination(mats: &[&Tensor], coefs: &[f64]) -> Result<Tensor> {
    let mut acc: Option<Tensor> = None;
    for (m, &c) in mats.iter().zip(coefs) {
        if c == 0.0 {
            continue;
        }
        let term = if c == 1.0 { (*m).clone() } else { m.mul(c)? };
        acc = Some(match acc {
            None => term,
            Some(a) => a.add(&term)?,
        });
    }
    Ok(acc.expect("a combination with a non-zero coefficient"))
}

/// torch's `compute_T{degree}` for a batch `x` (`[k, n, n]`): the Taylor approximation of
/// `exp(x)` of that degree (1, 2, 4, 8, 12 or 18), through torch's evaluation schemes, products
/// and sums in the same order.
fn taylor(x: &Tensor, degree: u32, p: Precision) -> Result<Tensor> {
    let eye = eye_like(x.size(-1)?, x)?;
    // I + A
    if degree == 1 {
        return eye.add(x);
    }
    let a2 = x.matmul(x)?;
    let r = |v: f64| p.round(v);
    match degree {
        // I + A + A²/2
        2 => eye.add(x)?.add(&a2.mul(0.5)?),
        // I + A + A² (I/2 + A/6 + A²/24)
        4 => {
            let tail =
                a2.matmul(&combination(&[&eye, x, &a2], &[r(1.0 / 2.0), r(1.0 / 6.0), r(1.0 / 24.0)])?)?;
            combination(&[&eye, x, &tail], &[1.0, 1.0, 1.0])
        }
        8 => {
            let sqrt_177 = r(0.1330413469565007072504e+2);
            let x3 = r(2.0 / 3.0);
            let x1 = r(x3 * ((1.0 + sqrt_177) / 88.0));
            let x2 = r(x3 * ((1.0 + sqrt_177) / 352.0));
            let x4 = r((-271.0 + 29.0 * sqrt_177) / (315.0 * x3));
            let x5 = r((-11.0 + 11.0 * sqrt_177) / (1260.0 * x3));
            let x6 = r((-99.0 + 11.0 * sqrt_177) / (5040.0 * x3));
            let x7 = r((89.0 - sqrt_177) / (5040.0 * x3 * x3));
            let y2 = r((857.0 - 58.0 * sqrt_177) / 630.0);
            // A4 = A² (x1 A + x2 A²); A8 = (x3 A² + A4)(x4 I + x5 A + x6 A² + x7 A4)
            let a4 = a2.matmul(&combination(&[x, &a2], &[x1, x2])?)?;
            let left = combination(&[&a2, &a4], &[x3, 1.0])?;
            let a8 = left.matmul(&combination(&[&eye, x, &a2, &a4], &[x4, x5, x6, x7])?)?;
            // I + A + y2 A² + A8
            combination(&[&eye, x, &a2, &a8], &[1.0, 1.0, y2, 1.0])
        }
        12 => {
            let a3 = x.matmul(&a2)?;
            let powers = [&eye, x, &a2, &a3];
            let b = B12.iter().map(|row| combination(&powers, &row.map(r))).collect::<Result<Vec<_>>>()?;
            // A6 = B2 + B3²; B0 + (B1 + A6) A6
            let a6 = b[2].add(&b[3].matmul(&b[3])?)?;
            b[0].add(&b[1].add(&a6)?.matmul(&a6)?)
        }
        _ => {
            let a3 = x.matmul(&a2)?;
            let a6 = a3.matmul(&a3)?;
            let powers = [&eye, x, &a2, &a3, &a6];
            let b = B18.iter().map(|row| combination(&powers, &row.map(r))).collect::<Result<Vec<_>>>()?;
            // A9 = B0 B4 + B3; B1 + (B2 + A9) A9
            let a9 = b[3].add(&b[0].matmul(&b[4])?)?;
            b[1].add(&b[2].add(&a9)?.matmul(&a9)?)
        }
    }
}

/// An int64 index vector on `like`'s device.
fn index(values: Vec<i64>, like: &Tensor) -> Result<Tensor> {
    let len = values.len();
    Tensor::from_vec_on(values, [len], like.device())
}

/// torch's `compute_T18_scale_square` for a batch `x` (`[k, n, n]`) with 1-norms `norms`: each
/// matrix scaled by `2^-s` (`s` its [`Precision::squarings`]), the degree-18 approximation, then
/// squared `s` times, the matrices sorted by `s` so that those still to square are squared
/// together.
fn scale_square(x: &Tensor, norms: &[f64], p: Precision) -> Result<Tensor> {
    let k = norms.len();
    let s: Vec<u32> = norms.iter().map(|&norm| p.squarings(norm)).collect();
    let scaled = if s.iter().all(|&v| v == 0) {
        x.clone()
    } else {
        let scales: Vec<f64> = s.iter().map(|&v| 0.5f64.powi(v as i32)).collect();
        x.mul(&Tensor::from_vec_on(scales, [k, 1, 1], x.device())?.to_dtype(x.dtype())?)?
    };
    let t = taylor(&scaled, 18, p)?;
    if s.iter().all(|&v| v == 0) {
        return Ok(t);
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by_key(|&i| s[i]);
    let sorted = order.iter().enumerate().all(|(pos, &i)| pos == i);
    let mut acc =
        if sorted { t } else { t.index_select(0, &index(order.iter().map(|&i| i as i64).collect(), x)?)? };
    let mut pieces = Vec::new();
    let (mut done, mut start) = (0u32, 0usize);
    while start < k {
        let level = s[order[start]];
        let end = start + order[start..].iter().take_while(|&&i| s[i] == level).count();
        for _ in done..level {
            acc = acc.matmul(&acc)?;
        }
        done = level;
        let len = end - start;
        pieces.push(acc.narrow(0, 0, len)?);
        if end < k {
            acc = acc.narrow(0, len as isize, k - end)?;
        }
        start = end;
    }
    let out = if pieces.len() == 1 {
        pieces.remove(0)
    } else {
        Tensor::cat(&pieces.iter().collect::<Vec<_>>(), 0)?
    };
    if sorted {
        return Ok(out);
    }
    let mut inverse = vec![0i64; k];
    for (pos, &i) in order.iter().enumerate() {
        inverse[i] = pos as i64;
    }
    out.index_select(0, &index(inverse, x)?)
}

/// torch's `mexp_impl` for a batch `x` (`[k, n, n]`, finite) with 1-norms `norms`: a single
/// matrix takes the least degree whose bound holds its norm (scaling and squaring from the
/// degree-12 bound on), a batch of several is all scaled and squared with degree 18 (as torch).
fn expm(x: &Tensor, norms: &[f64], p: Precision) -> Result<Tensor> {
    if let [norm] = norms {
        if *norm < p.theta(4) {
            let i = (0..4).find(|&i| *norm <= p.theta(i)).unwrap_or(4);
            return taylor(x, [1, 2, 4, 8, 12][i], p);
        }
    }
    scale_square(x, norms, p)
}

/// `exp(A)` for a batch of square matrices (`n ≥ 2`), in f32 for float32 and in f64 otherwise
/// (rounded to `A`'s dtype).
struct MatrixExpFn;

impl Function for MatrixExpFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        // As torch (which calls `matmul_out`), the products are not autocast.
        let _no_autocast = AutocastGuard::new(DType::BF16, false)?;
        let dims = a.dims().to_vec();
        let n = a.size(-1)?;
        let count: usize = dims[..dims.len() - 2].iter().product();
        if count == 0 {
            let e = Tensor::zeros(dims, a.same_options())?;
            ctx.save_for_backward(&[a]);
            return Ok(vec![e]);
        }
        let p = Precision { single: a.dtype() == DType::F32 };
        let work = if p.single { DType::F32 } else { DType::F64 };
        let x = a.detach().to_dtype(work)?.reshape([count, n, n])?;
        // 1-norms (largest column sum of |A|), computed in the scalar type; a matrix with a NaN
        // or an infinity (or whose norm overflows) gives NaN.
        let sums = x.abs()?.sum(-2, false)?.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let norms: Vec<f64> = sums
            .chunks(n)
            .map(|c| {
                if c.iter().all(|v| v.is_finite()) {
                    c.iter().copied().fold(0.0, f64::max)
                } else {
                    f64::NAN
                }
            })
            .collect();
        let finite: Vec<usize> = (0..count).filter(|&b| norms[b].is_finite()).collect();
        let e = if finite.len() == count {
            expm(&x, &norms, p)?
        } else {
            let nan = Tensor::full([count, n, n], f64::NAN, x.same_options())?;
            if finite.is_empty() {
                nan
            } else {
                let idx = index(finite.iter().map(|&b| b as i64).collect(), &x)?;
                let sub_norms: Vec<f64> = finite.iter().map(|&b| norms[b]).collect();
                let sub = expm(&x.index_select(0, &idx)?, &sub_norms, p)?;
                nan.index_copy(0, &idx, &sub)?
            }
        };
        let e = e.reshape(dims)?.to_dtype(a.dtype())?;
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
/// returned as it is and a `1 × 1` one is the elementwise `exp`; larger matrices follow torch's
/// CPU scheme (see the module docs): a single matrix takes the Taylor degree its 1-norm allows, a
/// batch of several is scaled and squared with degree 18, as torch does. float32 is computed in
/// f32 with torch's float bounds, float64 in f64; float16/bfloat16 are computed in f64 (with the
/// double bounds) and rounded (torch's own half-precision kernel overflows). A matrix with a NaN
/// or an infinity gives NaN.
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
