//! `torch.nn.init`: in-place initialisers with torch's formulas (fan computation, gains), drawing
//! from the default seeded generator, or, through the `*_with_` forms, from a given [`Generator`]
//! (torch's `generator=` argument). They run under `no_grad`, so they work on parameters.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

/// torch's `_calculate_fan_in_and_fan_out`.
pub fn calculate_fan_in_and_fan_out(t: &Tensor) -> Result<(usize, usize)> {
    if t.rank() < 2 {
        return Err(Error::msg(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
        ));
    }
    // (saturating: sizes whose product overflows only occur with a zero-size dim, no elements)
    let receptive = t.dims()[2..].iter().fold(1usize, |acc, &d| acc.saturating_mul(d));
    Ok((t.dims()[1].saturating_mul(receptive), t.dims()[0].saturating_mul(receptive)))
}

/// torch's `calculate_gain(nonlinearity, param)`.
pub fn calculate_gain(nonlinearity: &str, param: Option<f64>) -> Result<f64> {
    Ok(match nonlinearity {
        "linear" | "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d" | "conv_transpose2d"
        | "conv_transpose3d" | "sigmoid" => 1.0,
        "tanh" => 5.0 / 3.0,
        "relu" => 2f64.sqrt(),
        "leaky_relu" => {
            let slope = param.unwrap_or(0.01);
            (2.0 / (1.0 + slope * slope)).sqrt()
        }
        "selu" => 0.75,
        other => return Err(Error::msg(format!("Unsupported nonlinearity {other}"))),
    })
}

/// Fills with `U(a, b)`.
pub fn uniform_(t: &Tensor, a: f64, b: f64) -> Result<()> {
    uniform_with_(t, a, b, None)
}

/// Fills with `U(a, b)` drawn from `generator` (the default one for `None`; torch's
/// `uniform_(t, a, b, generator=g)`).
pub fn uniform_with_(t: &Tensor, a: f64, b: f64, generator: Option<&Generator>) -> Result<()> {
    no_grad(|| t.uniform_with_(a, b, generator).map(|_| ()))
}

/// Fills with `N(mean, std²)`.
pub fn normal_(t: &Tensor, mean: f64, std: f64) -> Result<()> {
    normal_with_(t, mean, std, None)
}

/// Fills with `N(mean, std²)` drawn from `generator` (the default one for `None`; torch's
/// `normal_(t, mean, std, generator=g)`).
pub fn normal_with_(t: &Tensor, mean: f64, std: f64, generator: Option<&Generator>) -> Result<()> {
    no_grad(|| t.normal_with_(mean, std, generator).map(|_| ()))
}

/// Fills with `value`.
pub fn constant_(t: &Tensor, value: f64) -> Result<()> {
    no_grad(|| t.fill_(value).map(|_| ()))
}

/// Fills with ones.
pub fn ones_(t: &Tensor) -> Result<()> {
    constant_(t, 1.0)
}

/// Fills with zeros.
pub fn zeros_(t: &Tensor) -> Result<()> {
    constant_(t, 0.0)
}

/// The identity matrix, for a 2-D tensor (torch's `eye_`).
pub fn eye_(t: &Tensor) -> Result<()> {
    if t.rank() != 2 {
        return Err(Error::msg("Only tensors with 2 dimensions are supported"));
    }
    let (rows, cols) = (t.dims()[0], t.dims()[1]);
    no_grad(|| t.copy_(&Tensor::eye(rows, Some(cols), (t.dtype(), t.device()))?).map(|_| ()))
}

/// The Dirac delta of a convolution weight `[out, in, k...]` (3 to 5 dims): each of the `groups`
/// output blocks passes its first input channels through at the kernel's centre (torch's
/// `dirac_`), so a convolution with it keeps as many channels as it can unchanged.
pub fn dirac_(t: &Tensor, groups: usize) -> Result<()> {
    if !(3..=5).contains(&t.rank()) {
        return Err(Error::msg("Only tensors with 3, 4, or 5 dimensions are supported"));
    }
    let dims = t.dims().to_vec();
    if groups == 0 || !dims[0].is_multiple_of(groups) {
        return Err(Error::msg("dim 0 must be divisible by groups"));
    }
    let per_group = dims[0] / groups;
    let channels = per_group.min(dims[1]);
    let kernel = &dims[2..];
    let kernel_size: usize = kernel.iter().product();
    // Row-major offset of the kernel's centre (`k // 2` in each dim).
    let centre = kernel.iter().fold(0, |acc, &k| acc * k + k / 2);
    let mut values = vec![0.0f64; t.numel()];
    for g in 0..groups {
        for d in 0..channels {
            values[((g * per_group + d) * dims[1] + d) * kernel_size + centre] = 1.0;
        }
    }
    let delta = Tensor::from_vec(values, dims)?.to((t.device(), t.dtype()))?;
    no_grad(|| t.copy_(&delta).map(|_| ()))
}

/// A sparse normal matrix: `N(0, std)` with a `sparsity` fraction of each column (rounded up)
/// set to zero at random rows, for a 2-D tensor (torch's `sparse_`, `std` 0.01 by default there).
pub fn sparse_(t: &Tensor, sparsity: f64, std: f64) -> Result<()> {
    sparse_with_(t, sparsity, std, None)
}

/// [`sparse_`] drawing the values and the cleared rows from `generator` (the default one for
/// `None`; torch's `sparse_(t, sparsity, std, generator=g)`).
pub fn sparse_with_(t: &Tensor, sparsity: f64, std: f64, generator: Option<&Generator>) -> Result<()> {
    if t.rank() != 2 {
        return Err(Error::msg("Only tensors with 2 dimensions are supported"));
    }
    let (rows, cols) = (t.dims()[0], t.dims()[1]);
    let zeros = ((sparsity * rows as f64).ceil().max(0.0) as usize).min(rows);
    no_grad(|| -> Result<()> {
        t.normal_with_(0.0, std, generator)?;
        if zeros == 0 || cols == 0 {
            return Ok(());
        }
        // A random permutation of the rows of each column: the first `zeros` of it are cleared.
        let order =
            Tensor::rand_with([rows, cols], (DType::F32, t.device()), generator)?.argsort(0, false)?;
        let cleared = t.scatter_value(0, &order.narrow(0, 0, zeros)?, 0.0)?;
        t.copy_(&cleared)?;
        Ok(())
    })
}

/// Xavier/Glorot uniform: `U(-a, a)` with `a = gain * sqrt(6 / (fan_in + fan_out))`.
pub fn xavier_uniform_(t: &Tensor, gain: f64) -> Result<()> {
    xavier_uniform_with_(t, gain, None)
}

/// [`xavier_uniform_`] drawing from `generator` (the default one for `None`).
pub fn xavier_uniform_with_(t: &Tensor, gain: f64, generator: Option<&Generator>) -> Result<()> {
    let (fan_in, fan_out) = calculate_fan_in_and_fan_out(t)?;
    let a = 3f64.sqrt() * gain * (2.0 / (fan_in + fan_out) as f64).sqrt();
    uniform_with_(t, -a, a, generator)
}

/// Xavier/Glorot normal: `N(0, std²)` with `std = gain * sqrt(2 / (fan_in + fan_out))`.
pub fn xavier_normal_(t: &Tensor, gain: f64) -> Result<()> {
    xavier_normal_with_(t, gain, None)
}

/// [`xavier_normal_`] drawing from `generator` (the default one for `None`).
pub fn xavier_normal_with_(t: &Tensor, gain: f64, generator: Option<&Generator>) -> Result<()> {
    let (fan_in, fan_out) = calculate_fan_in_and_fan_out(t)?;
    normal_with_(t, 0.0, gain * (2.0 / (fan_in + fan_out) as f64).sqrt(), generator)
}

fn kaiming_std(t: &Tensor, a: f64, mode: &str, nonlinearity: &str) -> Result<f64> {
    let (fan_in, fan_out) = calculate_fan_in_and_fan_out(t)?;
    // (torch lowercases the mode first)
    let fan = match mode.to_lowercase().as_str() {
        "fan_in" => fan_in,
        "fan_out" => fan_out,
        _ => {
            return Err(Error::msg(format!(
                "Mode {mode} not supported, please use one of ['fan_in', 'fan_out']"
            )))
        }
    };
    Ok(calculate_gain(nonlinearity, Some(a))? / (fan.max(1) as f64).sqrt())
}

/// He/Kaiming uniform (torch's defaults: `a = 0`, `mode = "fan_in"`, `nonlinearity = "leaky_relu"`).
pub fn kaiming_uniform_(t: &Tensor, a: f64, mode: &str, nonlinearity: &str) -> Result<()> {
    kaiming_uniform_with_(t, a, mode, nonlinearity, None)
}

/// [`kaiming_uniform_`] drawing from `generator` (the default one for `None`).
pub fn kaiming_uniform_with_(
    t: &Tensor,
    a: f64,
    mode: &str,
    nonlinearity: &str,
    generator: Option<&Generator>,
) -> Result<()> {
    let bound = 3f64.sqrt() * kaiming_std(t, a, mode, nonlinearity)?;
    uniform_with_(t, -bound, bound, generator)
}

/// He/Kaiming normal.
pub fn kaiming_normal_(t: &Tensor, a: f64, mode: &str, nonlinearity: &str) -> Result<()> {
    kaiming_normal_with_(t, a, mode, nonlinearity, None)
}

/// [`kaiming_normal_`] drawing from `generator` (the default one for `None`).
pub fn kaiming_normal_with_(
    t: &Tensor,
    a: f64,
    mode: &str,
    nonlinearity: &str,
    generator: Option<&Generator>,
) -> Result<()> {
    normal_with_(t, 0.0, kaiming_std(t, a, mode, nonlinearity)?, generator)
}

/// Refuses a tensor that is not floating point, with torch's message for the kernel `op`.
fn float_only(t: &Tensor, op: &'static str) -> Result<()> {
    if t.is_floating_point() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType { op, dtype: t.dtype() })
    }
}

/// Normal truncated to `[a, b]` (by the inverse CDF; float tensors only, as torch's).
pub fn trunc_normal_(t: &Tensor, mean: f64, std: f64, a: f64, b: f64) -> Result<()> {
    trunc_normal_with_(t, mean, std, a, b, None)
}

/// [`trunc_normal_`] drawing from `generator` (the default one for `None`; torch's
/// `trunc_normal_(t, mean, std, a, b, generator=g)`).
pub fn trunc_normal_with_(
    t: &Tensor,
    mean: f64,
    std: f64,
    a: f64,
    b: f64,
    generator: Option<&Generator>,
) -> Result<()> {
    float_only(t, "normal_kernel_cpu")?;
    let cdf = |x: f64| (1.0 + libm_erf(x / 2f64.sqrt())) / 2.0;
    let (l, u) = (cdf((a - mean) / std), cdf((b - mean) / std));
    no_grad(|| -> Result<()> {
        let u01 = Tensor::empty(t.dims().to_vec(), (DType::F64, t.device()))?;
        u01.uniform_with_(2.0 * l - 1.0, 2.0 * u - 1.0, generator)?;
        let v = u01.erfinv()?.mul(std * 2f64.sqrt())?.add(mean)?.clamp(Some(a.into()), Some(b.into()))?;
        t.copy_(&v)?;
        Ok(())
    })
}

/// A (semi-)orthogonal matrix scaled by `gain` (torch's `orthogonal_`; QR of a normal matrix with
/// the signs of R's diagonal folded in).
pub fn orthogonal_(t: &Tensor, gain: f64) -> Result<()> {
    orthogonal_with_(t, gain, None)
}

/// [`orthogonal_`] drawing its normal matrix from `generator` (the default one for `None`; torch's
/// `orthogonal_(t, gain, generator=g)`).
pub fn orthogonal_with_(t: &Tensor, gain: f64, generator: Option<&Generator>) -> Result<()> {
    float_only(t, "normal_kernel_cpu")?;
    if t.rank() < 2 {
        return Err(Error::msg("Only tensors with 2 or more dimensions are supported"));
    }
    let rows = t.dims()[0];
    let cols = t.numel() / rows.max(1);
    let (m, n) = if rows < cols { (cols, rows) } else { (rows, cols) };
    let a = Tensor::randn_with([m, n], DType::F64, generator)?.to_vec::<f64>()?;
    // Modified Gram-Schmidt on the columns of the m x n matrix `a` (m >= n).
    let mut q = a.clone();
    for j in 0..n {
        for k in 0..j {
            let dot: f64 = (0..m).map(|i| q[i * n + k] * q[i * n + j]).sum();
            for i in 0..m {
                q[i * n + j] -= dot * q[i * n + k];
            }
        }
        let norm = (0..m).map(|i| q[i * n + j] * q[i * n + j]).sum::<f64>().sqrt();
        // R's diagonal is positive here, which is what torch's sign correction produces.
        for i in 0..m {
            q[i * n + j] = if norm > 0.0 { q[i * n + j] / norm } else { 0.0 };
        }
    }
    let q = Tensor::from_vec(q, [m, n])?;
    let q = if rows < cols { q.t()? } else { q };
    no_grad(|| {
        t.copy_(&q.mul(gain)?.reshape(t.dims().iter().map(|&d| d as isize).collect::<Vec<_>>())?).map(|_| ())
    })
}

/// erf of one number, by the tensor kernel (the truncation bounds' CDF values).
fn libm_erf(x: f64) -> f64 {
    Tensor::from_slice(&[x], [1]).and_then(|t| t.erf()).and_then(|t| t.item::<f64>()).unwrap_or(0.0)
}
