//! `InstanceNorm1d/2d/3d` and `LocalResponseNorm`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::norm::{visit_norm_members, visit_norm_members_mut};
use crate::functional as F;
use crate::module::{Buffer, Forward, Member, MemberMut, Module};

/// torch's `nn.InstanceNorm1d/2d/3d(num_features, eps=1e-5, momentum=0.1, affine=False,
/// track_running_stats=False, *, bias=True)`: each sample's channels normalised over their own spatial dims.
/// With `track_running_stats`, training updates running statistics that evaluation then uses.
/// State dict as batch norm's: `weight`, `bias`, `running_mean`, `running_var`,
/// `num_batches_tracked`.
pub struct InstanceNorm {
    /// per-channel scale (with `affine`)
    pub weight: Option<Tensor>,
    /// per-channel shift (with `affine`)
    pub bias: Option<Tensor>,
    /// running mean (buffer, with `track_running_stats`)
    pub running_mean: Option<Buffer>,
    /// running variance (buffer, with `track_running_stats`)
    pub running_var: Option<Buffer>,
    /// kept for torch's state dict (instance norm does not count batches)
    pub num_batches_tracked: Option<Buffer>,
    /// running-statistics factor (`None`: 0, as torch passes it)
    pub momentum: Option<f64>,
    /// added to the variance
    pub eps: f64,
    /// training mode
    pub training: bool,
    /// the channels
    num_features: usize,
    /// the rank of an unbatched input (2, 3 or 4 for the 1d, 2d and 3d kinds)
    unbatched_rank: usize,
}

/// torch's `nn.InstanceNorm1d`: `[N, C, L]` or unbatched `[C, L]` inputs.
pub type InstanceNorm1d = InstanceNorm;
/// torch's `nn.InstanceNorm2d`: `[N, C, H, W]` or `[C, H, W]`.
pub type InstanceNorm2d = InstanceNorm;
/// torch's `nn.InstanceNorm3d`: `[N, C, D, H, W]` or `[C, D, H, W]`.
pub type InstanceNorm3d = InstanceNorm;

impl InstanceNorm {
    /// An instance norm over `spatial_dims` (1, 2 or 3) with torch's options.
    pub fn new(
        spatial_dims: usize,
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::new_with_bias(spatial_dims, num_features, eps, momentum, affine, track_running_stats, true)
    }

    /// [`InstanceNorm::new`] with torch's keyword `bias`: when false (with `affine`) there is no
    /// `bias` parameter (nor state-dict key), only the `weight` scale.
    pub fn new_with_bias(
        spatial_dims: usize,
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
        bias: bool,
    ) -> Result<Self> {
        if !(1..=3).contains(&spatial_dims) {
            return Err(Error::msg(format!("InstanceNorm: 1, 2 or 3 spatial dims, got {spatial_dims}")));
        }
        let track = |t: Result<Tensor>| t.map(|t| track_running_stats.then_some(Buffer(t)));
        let param = |v: f64, present: bool| -> Result<Option<Tensor>> {
            if present {
                Ok(Some(Tensor::full([num_features], v, DType::default_float())?.requires_grad_(true)?))
            } else {
                Ok(None)
            }
        };
        Ok(InstanceNorm {
            weight: param(1.0, affine)?,
            bias: param(0.0, affine && bias)?,
            running_mean: track(Tensor::zeros([num_features], DType::default_float()))?,
            running_var: track(Tensor::ones([num_features], DType::default_float()))?,
            num_batches_tracked: track(Tensor::zeros([], DType::I64))?,
            momentum,
            eps,
            training: true,
            num_features,
            unbatched_rank: spatial_dims + 1,
        })
    }

    /// `InstanceNorm1d(num_features)` with torch's defaults.
    pub fn new_1d(num_features: usize) -> Result<Self> {
        Self::new(1, num_features, 1e-5, Some(0.1), false, false)
    }

    /// `InstanceNorm2d(num_features)` with torch's defaults.
    pub fn new_2d(num_features: usize) -> Result<Self> {
        Self::new(2, num_features, 1e-5, Some(0.1), false, false)
    }

    /// `InstanceNorm3d(num_features)` with torch's defaults.
    pub fn new_3d(num_features: usize) -> Result<Self> {
        Self::new(3, num_features, 1e-5, Some(0.1), false, false)
    }
}

impl Forward for InstanceNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (r, unbatched) = (x.rank(), self.unbatched_rank);
        if r != unbatched && r != unbatched + 1 {
            return Err(Error::shape(format!(
                "expected {}D or {}D input (got {r}D input)",
                unbatched,
                unbatched + 1
            )));
        }
        let feature_dim = r - unbatched;
        if self.weight.is_some() && x.dims()[feature_dim] != self.num_features {
            return Err(Error::shape(format!(
                "expected input's size at dim={feature_dim} to match num_features ({}), but got: {}.",
                self.num_features,
                x.dims()[feature_dim]
            )));
        }
        let batched = if r == unbatched { x.unsqueeze(0)? } else { x.clone() };
        let out = F::instance_norm(
            &batched,
            self.running_mean.as_deref(),
            self.running_var.as_deref(),
            self.weight.as_ref(),
            self.bias.as_ref(),
            self.training || self.running_mean.is_none(),
            self.momentum.unwrap_or(0.0),
            self.eps,
        )?;
        if r == unbatched {
            out.squeeze_dims([0])
        } else {
            Ok(out)
        }
    }
}

impl Module for InstanceNorm {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        visit_norm_members(
            [&self.weight, &self.bias],
            [&self.running_mean, &self.running_var, &self.num_batches_tracked],
            f,
        );
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        visit_norm_members_mut(
            [&mut self.weight, &mut self.bias],
            [&mut self.running_mean, &mut self.running_var, &mut self.num_batches_tracked],
            f,
        );
    }
    /// torch's class name: `InstanceNorm1d`, `InstanceNorm2d` or `InstanceNorm3d`.
    fn type_name(&self) -> &'static str {
        ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"][self.unbatched_rank - 2]
    }
    /// torch's `extra_repr` (its `_NormBase`'s):
    /// `4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False`.
    fn extra_repr(&self) -> String {
        format!(
            "{}, eps={}, momentum={}, affine={}, bias={}, track_running_stats={}",
            self.num_features,
            crate::module::py_float(self.eps),
            self.momentum.map_or_else(|| "None".to_string(), crate::module::py_float),
            crate::module::py_bool(self.weight.is_some()),
            crate::module::py_bool(self.bias.is_some()),
            crate::module::py_bool(self.running_mean.is_some())
        )
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
}

/// torch's `nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)`: each value divided by
/// `(k + alpha * mean of the squares of `size` neighbouring channels)^beta`.
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct LocalResponseNorm {
    /// channels in the window
    pub size: usize,
    /// the squares' factor
    pub alpha: f64,
    /// the exponent
    pub beta: f64,
    /// the additive constant
    pub k: f64,
}

impl LocalResponseNorm {
    /// A window of `size` channels with torch's default `alpha`, `beta` and `k`.
    pub fn new(size: usize) -> Self {
        LocalResponseNorm { size, alpha: 1e-4, beta: 0.75, k: 1.0 }
    }
}

impl LocalResponseNorm {
    /// torch's `extra_repr`: `2, alpha=0.0001, beta=0.75, k=1.0`.
    fn extra_repr_text(&self) -> String {
        format!(
            "{}, alpha={}, beta={}, k={}",
            self.size,
            crate::module::py_float(self.alpha),
            crate::module::py_float(self.beta),
            crate::module::py_float(self.k)
        )
    }
}

impl Forward for LocalResponseNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        F::local_response_norm(x, self.size, self.alpha, self.beta, self.k)
    }
}
