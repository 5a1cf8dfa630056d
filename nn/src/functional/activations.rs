//! The activations of `torch.nn.functional` that are compositions of tensor ops: shrinkage
//! (hardshrink, softshrink, tanhshrink), threshold, logsigmoid, softsign, softmin, and the
//! learned or randomised leaky slopes (prelu, rrelu). Gradients come from the compositions, with
//! torch's values at the points where the pieces meet.

use oxtorch_tensor::{DType, Error, Result, Scalar, Tensor};

/// torch's error for a float-only activation given integers or bools, under its kernel's name.
fn floats_only(input: &Tensor, op: &'static str) -> Result<()> {
    if input.is_floating_point() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType { op, dtype: input.dtype() })
    }
}

/// Softmax of `-input` along `dim` (torch's `softmin`); `dtype` casts the input first.
pub fn softmin(input: &Tensor, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
    if dtype.is_none() {
        floats_only(input, "softmax_lastdim_kernel_impl")?;
    }
    input.neg()?.softmax(dim, dtype)
}

/// `x` where `|x| > lambd`, else 0 (torch's default `lambd` is 0.5); NaN stays NaN.
pub fn hardshrink(input: &Tensor, lambd: f64) -> Result<Tensor> {
    floats_only(input, "hardshrink_cpu")?;
    let inside = input.ge(-lambd)?.logical_and(&input.le(lambd)?)?;
    Tensor::where_cond(&inside, 0.0, input)
}

/// `x - lambd` above `lambd`, `x + lambd` below `-lambd`, else 0 (default `lambd` 0.5).
pub fn softshrink(input: &Tensor, lambd: f64) -> Result<Tensor> {
    floats_only(input, "softshrink_check")?;
    if lambd < 0.0 {
        return Err(Error::msg(format!("lambda must be greater or equal to 0, but found to be {lambd}.")));
    }
    // (`x * 0` in the middle, as torch's kernel: a NaN input stays NaN)
    let below = Tensor::where_cond(&input.lt(-lambd)?, &input.add(lambd)?, &input.mul(0.0)?)?;
    Tensor::where_cond(&input.gt(lambd)?, &input.sub(lambd)?, &below)
}

/// `x - tanh(x)`.
pub fn tanhshrink(input: &Tensor) -> Result<Tensor> {
    input.sub(&input.tanh()?)
}

/// `x` where `x > threshold`, else `value` (torch's `threshold`), in the input's dtype (`value`
/// converted to it, checked: an integer input truncates it).
pub fn threshold(input: &Tensor, threshold: f64, value: f64) -> Result<Tensor> {
    Scalar::Float(value).check_converts(input.dtype())?;
    let value = Tensor::full((), value, input.same_options())?;
    Tensor::where_cond(&input.le(threshold)?, &value, input)
}

/// `log(sigmoid(x))`, computed stably as `min(x, 0) - log1p(exp(-|x|))` (its gradient at 0 is
/// 1/2, as torch's).
pub fn logsigmoid(input: &Tensor) -> Result<Tensor> {
    floats_only(input, "log_sigmoid_cpu")?;
    input.minimum(0.0)?.sub(&input.abs()?.neg()?.exp()?.log1p()?)
}

/// `x / (1 + |x|)`.
pub fn softsign(input: &Tensor) -> Result<Tensor> {
    input.div(&input.abs()?.add(1.0)?)
}

/// Randomised leaky ReLU (torch's defaults `lower` 1/8, `upper` 1/3): in training each
/// non-positive element takes its own slope drawn uniformly from `[lower, upper]`, in evaluation
/// the mean slope `(lower + upper) / 2`.
pub fn rrelu(input: &Tensor, lower: f64, upper: f64, training: bool) -> Result<Tensor> {
    if !training {
        return input.leaky_relu((lower + upper) / 2.0);
    }
    floats_only(input, "rrelu_with_noise_out_cpu")?;
    let slopes = Tensor::rand(input.dims().to_vec(), (input.dtype(), input.device()))?;
    let slopes = slopes.mul(upper - lower)?.add(lower)?;
    Tensor::where_cond(&input.le(0.0)?, &input.mul(&slopes)?, input)
}

/// `x` where positive, else `weight * x` (torch's `prelu`): `weight` has one element, or one per
/// channel (dim 1 of an input of two or more dims).
pub fn prelu(input: &Tensor, weight: &Tensor) -> Result<Tensor> {
    floats_only(input, "prelu_cpu")?;
    let channels = if input.rank() >= 2 { input.dims()[1] } else { 1 };
    let n = weight.numel();
    if weight.rank() > 1 {
        return Err(Error::msg(format!(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}",
            weight.rank()
        )));
    }
    if n != 1 && n != channels {
        return Err(Error::msg(format!(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} and channel size = {channels}."
        )));
    }
    let w = if n == 1 {
        weight.reshape(Vec::<usize>::new())?
    } else {
        let mut shape = vec![1; input.rank()];
        shape[1] = channels;
        weight.reshape(shape)?
    };
    Tensor::where_cond(&input.gt(0.0)?, input, &input.mul(&w)?)
}
