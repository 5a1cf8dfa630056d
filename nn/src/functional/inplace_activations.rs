//! torch's in-place functional activations (`F.relu_`, `F.elu_`, ...): each writes its
//! out-of-place form into `input` through [`Tensor::apply_`], which applies torch's in-place rules
//! (a leaf that requires grad refuses; under autograd `input` takes the op's history) and returns
//! `input`.

use oxtorch_tensor::{Result, Tensor};

/// In-place `relu` (torch's `F.relu_`).
pub fn relu_(input: &Tensor) -> Result<&Tensor> {
    input.apply_(&[], |x| x.relu())
}

/// In-place `elu` (torch's `F.elu_(input, alpha=1.0)`).
pub fn elu_(input: &Tensor, alpha: f64) -> Result<&Tensor> {
    input.apply_(&[], |x| x.elu(alpha))
}

/// In-place `leaky_relu` (torch's `F.leaky_relu_(input, negative_slope=0.01)`).
pub fn leaky_relu_(input: &Tensor, negative_slope: f64) -> Result<&Tensor> {
    input.apply_(&[], |x| x.leaky_relu(negative_slope))
}

/// In-place `hardtanh` (torch's `F.hardtanh_(input, min_val=-1.0, max_val=1.0)`).
pub fn hardtanh_(input: &Tensor, min_val: f64, max_val: f64) -> Result<&Tensor> {
    input.apply_(&[], |x| x.hardtanh(min_val, max_val))
}

/// In-place `selu` (torch's `F.selu_`).
pub fn selu_(input: &Tensor) -> Result<&Tensor> {
    input.apply_(&[], |x| x.selu())
}

/// In-place `celu` (torch's `F.celu_(input, alpha=1.0)`).
pub fn celu_(input: &Tensor, alpha: f64) -> Result<&Tensor> {
    input.apply_(&[], |x| x.celu(alpha))
}

/// In-place `threshold` (torch's `F.threshold_(input, threshold, value)`): elements `<= threshold`
/// become `value`.
pub fn threshold_(input: &Tensor, threshold: f64, value: f64) -> Result<&Tensor> {
    input.apply_(&[], |x| super::threshold(x, threshold, value))
}

/// In-place `rrelu` (torch's `F.rrelu_(input, lower=1/8, upper=1/3, training=False)`): in
/// evaluation a leaky ReLU of slope `(lower + upper) / 2`, in training random slopes (oxtorch's
/// draws, not torch's).
pub fn rrelu_(input: &Tensor, lower: f64, upper: f64, training: bool) -> Result<&Tensor> {
    input.apply_(&[], |x| super::rrelu(x, lower, upper, training))
}
