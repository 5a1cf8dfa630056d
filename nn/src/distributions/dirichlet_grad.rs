//! The reparameterized Dirichlet sampler (torch's `_Dirichlet` autograd function with its
//! implicit gradient `_dirichlet_grad`), behind `Dirichlet.rsample` and `Beta.rsample`.

use oxtorch_tensor::autograd::{Function, FunctionCtx};
use oxtorch_tensor::{DType, Result, Tensor};

/// torch's `_beta_grad_alpha_small`: the gradient for `x` close to zero (Taylor series).
/// `dg_alpha` and `dg_total` are `digamma(alpha)` and `digamma(alpha + beta)`.
fn beta_grad_alpha_small(x: f64, alpha: f64, beta: f64, dg_alpha: f64, dg_total: f64) -> f64 {
    let factor = dg_alpha - dg_total - x.ln();
    let mut numer = 1.0;
    let mut series = numer / alpha * (factor + 1.0 / alpha);
    for i in 1..=10 {
        let fi = i as f64;
        numer *= (fi - beta) * x / fi;
        let denom = alpha + fi;
        series += numer / denom * (factor + 1.0 / denom);
    }
    let result = x * (1.0 - x).powf(-beta) * series;
    if result.is_nan() {
        0.0
    } else {
        result
    }
}

/// torch's `_beta_grad_beta_small`: the gradient with respect to `beta` for `x` close to zero.
/// `dg_total` and `dg_beta` are `digamma(alpha + beta)` and `digamma(beta)`.
fn beta_grad_beta_small(x: f64, alpha: f64, beta: f64, dg_total: f64, dg_beta: f64) -> f64 {
    let factor = dg_total - dg_beta;
    let (mut numer, mut betas, mut dbetas) = (1.0, 1.0, 0.0);
    let mut series = factor / alpha;
    for i in 1..=8 {
        let fi = i as f64;
        numer *= -x / fi;
        dbetas = dbetas * (beta - fi) + betas;
        betas *= beta - fi;
        series += numer / (alpha + fi) * (dbetas + factor * betas);
    }
    let result = -(1.0 - x).powf(1.0 - beta) * series;
    if result.is_nan() {
        0.0
    } else {
        result
    }
}

/// torch's `_beta_grad_alpha_mid`: the Rice saddle-point expansion for large `alpha` and `beta`.
fn beta_grad_alpha_mid(x: f64, alpha: f64, beta: f64) -> f64 {
    let total = alpha + beta;
    let mean = alpha / total;
    let std = (alpha * beta / (total + 1.0)).sqrt() / total;
    if mean - 0.1 * std <= x && x <= mean + 0.1 * std {
        // Avoid the singularity at x = mean.
        let poly = 47.0 * x * (beta * beta) * (beta * beta)
            + alpha
                * ((43.0 + 20.0 * (16.0 + 27.0 * beta) * x) * (beta * beta) * beta
                    + alpha
                        * (3.0 * (59.0 + 180.0 * beta - 90.0 * x) * (beta * beta)
                            + alpha
                                * ((453.0 + 1620.0 * beta * (1.0 - x) - 455.0 * x) * beta
                                    + alpha * (8.0 * (1.0 - x) * (135.0 * beta - 11.0)))));
        let prefactor_num = (1.0 + 12.0 * alpha) * (1.0 + 12.0 * beta) / (total * total);
        let prefactor_den = 12960.0 * alpha * alpha * alpha * beta * beta * (1.0 + 12.0 * total);
        return prefactor_num / (1.0 - x) * poly / prefactor_den;
    }
    let prefactor = -x / (2.0 * alpha * beta / total).sqrt();
    let stirling = (1.0 + 1.0 / (12.0 * alpha) + 1.0 / (288.0 * alpha * alpha))
        * (1.0 + 1.0 / (12.0 * beta) + 1.0 / (288.0 * beta * beta))
        / (1.0 + 1.0 / (12.0 * total) + 1.0 / (288.0 * total * total));
    let term1_num = 2.0 * (alpha * alpha) * (x - 1.0) + alpha * beta * (x - 1.0) - x * (beta * beta);
    let axbx = alpha * (x - 1.0) + beta * x;
    let term1_den = (2.0 * alpha / beta).sqrt() * total.powf(1.5) * axbx * axbx;
    let term1 = term1_num / term1_den;
    let term2 = 0.5 * (alpha / (total * x)).ln();
    let term3_num = (8.0 * alpha * beta / total).sqrt();
    let term3_den = beta * x + alpha * (x - 1.0);
    let term3 = term3_num / term3_den;
    let term4_base = beta * (beta / (total * (1.0 - x))).ln() + alpha * (alpha / (total * x)).ln();
    let term4 = term4_base.powf(-1.5);
    let term1234 = term1 + term2 * (term3 + if x < mean { term4 } else { -term4 });
    stirling * prefactor * term1234
}

/// The rational-correction coefficients of torch's `dirichlet_grad_one`, `[p|q][i][j][k]`.
const COEF: [[[[f64; 4]; 3]; 3]; 2] = [
    [
        [
            [1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
            [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
            [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013],
        ],
        [
            [0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
            [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
            [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05],
        ],
        [
            [-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
            [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
            [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05],
        ],
    ],
    [
        [
            [1.0, -0.02924021934, -0.04438342661, 0.007285809825],
            [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
            [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149],
        ],
        [
            [0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
            [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
            [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05],
        ],
        [
            [0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
            [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
            [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06],
        ],
    ],
];

/// torch's `dirichlet_grad_one`: the scaled reparameterized gradient
/// `-(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x)` of a `Beta(alpha, beta)` draw
/// `x`, with `total = alpha + beta`. `dg` holds `digamma` of `(alpha, total)`.
fn dirichlet_grad_one(x: f64, alpha: f64, total: f64, dg: (f64, f64)) -> f64 {
    let (dg_alpha, dg_total) = dg;
    let beta = total - alpha;
    let boundary = total * x * (1.0 - x);
    // An asymptotic approximation for x close to 0.
    if x <= 0.5 && boundary < 2.5 {
        return beta_grad_alpha_small(x, alpha, beta, dg_alpha, dg_total);
    }
    // An asymptotic approximation for x close to 1.
    if x >= 0.5 && boundary < 0.75 {
        return -beta_grad_beta_small(1.0 - x, beta, alpha, dg_total, dg_alpha);
    }
    // An asymptotic approximation when alpha and (total - alpha) are both large.
    if alpha > 6.0 && beta > 6.0 {
        return beta_grad_alpha_mid(x, alpha, beta);
    }
    // A rational correction to an analytic approximation.
    let u = x.ln();
    let a = alpha.ln() - u;
    let b = total.ln() - a;
    let pow_u = [1.0, u, u * u];
    let pow_a = [1.0, a, a * a];
    let (mut p, mut q) = (0.0, 0.0);
    for (i, pu) in pow_u.iter().enumerate() {
        for (j, pa) in pow_a.iter().enumerate() {
            let ua = pu * pa;
            let c0 = &COEF[0][i][j];
            let c1 = &COEF[1][i][j];
            p += ua * (c0[0] + b * (c0[1] + b * (c0[2] + b * c0[3])));
            q += ua * (c1[0] + b * (c1[1] + b * (c1[2] + b * c1[3])));
        }
    }
    let approx = x * (dg_total - dg_alpha) / beta;
    p / q * approx
}

/// `torch._dirichlet_grad(x, alpha, total)`: elementwise, the reparameterized derivative of a
/// Dirichlet draw's coordinate `x` with respect to its concentration `alpha`, where `total` is the
/// sum of the concentrations (the arguments broadcast; the result in `x`'s dtype, computed in
/// float64).
pub fn dirichlet_grad(x: &Tensor, alpha: &Tensor, total: &Tensor) -> Result<Tensor> {
    let b = Tensor::broadcast_tensors(&[x, alpha, total])?;
    let f64v = |t: &Tensor| t.detach().to_dtype(DType::F64)?.contiguous();
    let (x64, a64, t64) = (f64v(&b[0])?, f64v(&b[1])?, f64v(&b[2])?);
    let dg_a = a64.digamma()?.to_f64_vec()?;
    let dg_t = t64.digamma()?.to_f64_vec()?;
    let (xs, a, t) = (x64.to_f64_vec()?, a64.to_f64_vec()?, t64.to_f64_vec()?);
    let out: Vec<f64> =
        (0..xs.len()).map(|i| dirichlet_grad_one(xs[i], a[i], t[i], (dg_a[i], dg_t[i]))).collect();
    Tensor::from_vec(out, b[0].dims().to_vec())?.to_dtype(x.dtype())
}

/// torch's `_Dirichlet_backward`: `grad * (grad_output - (x * grad_output).sum(-1, keepdim))`
/// with `grad = _dirichlet_grad(x, concentration, concentration.sum(-1, keepdim))`.
pub(crate) fn dirichlet_backward(x: &Tensor, concentration: &Tensor, grad_output: &Tensor) -> Result<Tensor> {
    let total = concentration.sum(-1isize, true)?.expand(concentration.dims().to_vec())?;
    let grad = dirichlet_grad(x, concentration, &total)?;
    grad.mul(&grad_output.sub(&x.mul(grad_output)?.sum(-1isize, true)?)?)
}

/// torch's `_Dirichlet` autograd function of `(concentration, drawn sample)`: forward passes the
/// draw through, backward is [`dirichlet_backward`] for the concentration.
struct DirichletFn;

impl Function for DirichletFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = inputs[1].detach();
        ctx.save_for_backward(&[&x, &inputs[0]]);
        Ok(vec![x])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        Ok(vec![Some(dirichlet_backward(&saved[0], &saved[1].detach(), &grads[0])?), None])
    }

    fn name(&self) -> &'static str {
        "_DirichletBackward"
    }
}

/// Attaches torch's Dirichlet reparameterization gradient to `x`, a Dirichlet draw from
/// `concentration` (of the same shape `[*, K]`): the result has `x`'s values and backpropagates
/// to `concentration` through [`dirichlet_grad`].
pub(crate) fn dirichlet_rsample_from(concentration: &Tensor, x: &Tensor) -> Result<Tensor> {
    Ok(DirichletFn.apply(&[concentration.clone(), x.clone()])?.remove(0))
}
