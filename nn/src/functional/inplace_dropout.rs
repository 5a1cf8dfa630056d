//! torch's in-place dropouts `torch.dropout_`, `torch.alpha_dropout_` and
//! `torch.feature_alpha_dropout_`: each writes its out-of-place form into `input` through
//! [`Tensor::apply_`] (torch's in-place rules: a leaf that requires grad refuses; under autograd
//! `input` takes the op's history) and returns `input`.

use oxtorch_tensor::{Result, Tensor};

use super::stochastic::{alpha_dropout, feature_alpha_dropout};

/// In-place `dropout` (torch's `torch.dropout_(input, p, train)`): in training each element is
/// zeroed with probability `p` and the rest scaled by `1 / (1 - p)`.
pub fn dropout_(input: &Tensor, p: f64, train: bool) -> Result<&Tensor> {
    input.apply_(&[], |x| x.dropout(p, train))
}

/// In-place [`alpha_dropout`] (torch's `torch.alpha_dropout_(input, p, train)`).
pub fn alpha_dropout_(input: &Tensor, p: f64, train: bool) -> Result<&Tensor> {
    input.apply_(&[], |x| alpha_dropout(x, p, train))
}

/// In-place [`feature_alpha_dropout`] (torch's `torch.feature_alpha_dropout_(input, p, train)`).
pub fn feature_alpha_dropout_(input: &Tensor, p: f64, train: bool) -> Result<&Tensor> {
    input.apply_(&[], |x| feature_alpha_dropout(x, p, train))
}
