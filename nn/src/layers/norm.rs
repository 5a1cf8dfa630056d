//! `LayerNorm`, `RMSNorm`, `GroupNorm`, `BatchNorm1d/2d` with torch's parameters and buffers.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::{Buffer, Forward, Member, MemberMut, Module};

fn ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::ones(shape.to_vec(), dtype)?.requires_grad_(true)
}

fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::zeros(shape.to_vec(), dtype)?.requires_grad_(true)
}

/// torch's `nn.LayerNorm`: normalises the trailing `normalized_shape` dims; `weight` ones, `bias`
/// zeros when `elementwise_affine`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct LayerNorm {
    /// scale
    pub weight: Option<Tensor>,
    /// shift
    pub bias: Option<Tensor>,
    /// the normalised trailing shape
    pub normalized_shape: Vec<usize>,
    /// added to the variance
    pub eps: f64,
}

impl LayerNorm {
    /// torch's `LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)`.
    pub fn new(normalized_shape: &[usize], eps: f64, elementwise_affine: bool, bias: bool) -> Result<Self> {
        Ok(LayerNorm {
            weight: if elementwise_affine {
                Some(ones(normalized_shape, DType::default_float())?)
            } else {
                None
            },
            bias: if elementwise_affine && bias {
                Some(zeros(normalized_shape, DType::default_float())?)
            } else {
                None
            },
            normalized_shape: normalized_shape.to_vec(),
            eps,
        })
    }
}

impl Forward for LayerNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.layer_norm(&self.normalized_shape, self.weight.as_ref(), self.bias.as_ref(), self.eps)
    }
}

/// torch's `nn.RMSNorm`: `x / sqrt(mean(x²) + eps) * weight` (eps defaults to the dtype's epsilon).
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
#[allow(clippy::upper_case_acronyms)]
pub struct RMSNorm {
    /// scale
    pub weight: Option<Tensor>,
    /// the normalised trailing shape
    pub normalized_shape: Vec<usize>,
    /// added to the mean square (`None`: the dtype's machine epsilon, as torch)
    #[module(skip)]
    pub eps: Option<f64>,
}

impl RMSNorm {
    /// torch's `RMSNorm(normalized_shape, eps=None, elementwise_affine=True)`.
    pub fn new(normalized_shape: &[usize], eps: Option<f64>, elementwise_affine: bool) -> Result<Self> {
        Ok(RMSNorm {
            weight: if elementwise_affine {
                Some(ones(normalized_shape, DType::default_float())?)
            } else {
                None
            },
            normalized_shape: normalized_shape.to_vec(),
            eps,
        })
    }
}

impl LayerNorm {
    /// torch's `extra_repr`: `(4,), eps=1e-05, elementwise_affine=True, bias=True`.
    fn extra_repr_text(&self) -> String {
        format!(
            "{}, eps={}, elementwise_affine={}, bias={}",
            crate::module::py_tuple(&self.normalized_shape),
            crate::module::py_float(self.eps),
            crate::module::py_bool(self.weight.is_some()),
            crate::module::py_bool(self.bias.is_some())
        )
    }
}

impl RMSNorm {
    /// torch's `extra_repr`: `(4,), eps=None, elementwise_affine=True`.
    fn extra_repr_text(&self) -> String {
        format!(
            "{}, eps={}, elementwise_affine={}",
            crate::module::py_tuple(&self.normalized_shape),
            self.eps.map_or_else(|| "None".to_string(), crate::module::py_float),
            crate::module::py_bool(self.weight.is_some())
        )
    }
}

impl GroupNorm {
    /// torch's `extra_repr`: `2, 4, eps=1e-05, affine=True, bias=True` (the channel count read
    /// from the affine parameters).
    fn extra_repr_text(&self) -> String {
        format!(
            "{}, {}, eps={}, affine={}, bias={}",
            self.num_groups,
            self.num_channels,
            crate::module::py_float(self.eps),
            crate::module::py_bool(self.weight.is_some()),
            crate::module::py_bool(self.bias.is_some())
        )
    }
}

impl Forward for RMSNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.rms_norm(&self.normalized_shape, self.weight.as_ref(), self.eps)
    }
}

/// torch's `nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, *, bias=True)`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct GroupNorm {
    /// per-channel scale
    pub weight: Option<Tensor>,
    /// per-channel shift
    pub bias: Option<Tensor>,
    /// number of groups
    pub num_groups: usize,
    /// number of channels (torch's `num_channels`)
    pub num_channels: usize,
    /// added to the variance
    pub eps: f64,
}

impl GroupNorm {
    /// A layer with ones/zeros affine parameters.
    pub fn new(num_groups: usize, num_channels: usize, eps: f64, affine: bool) -> Result<Self> {
        Self::new_with_bias(num_groups, num_channels, eps, affine, true)
    }

    /// torch's `GroupNorm(num_groups, num_channels, eps, affine, bias=bias)`: with `bias` false
    /// there is no `bias` parameter (nor state-dict key), only the `weight` scale (when `affine`).
    pub fn new_with_bias(
        num_groups: usize,
        num_channels: usize,
        eps: f64,
        affine: bool,
        bias: bool,
    ) -> Result<Self> {
        if num_groups == 0 || !num_channels.is_multiple_of(num_groups) {
            return Err(Error::msg(format!(
                "num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )));
        }
        Ok(GroupNorm {
            weight: if affine { Some(ones(&[num_channels], DType::default_float())?) } else { None },
            bias: if affine && bias { Some(zeros(&[num_channels], DType::default_float())?) } else { None },
            num_groups,
            num_channels,
            eps,
        })
    }
}

impl Forward for GroupNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.group_norm(self.num_groups, self.weight.as_ref(), self.bias.as_ref(), self.eps)
    }
}

/// torch's `nn.BatchNorm1d/2d`: batch statistics in training (updating the running ones with
/// `momentum`), running statistics in evaluation. State dict: `weight`, `bias`, `running_mean`,
/// `running_var`, `num_batches_tracked`.
pub struct BatchNorm {
    /// per-channel scale
    pub weight: Option<Tensor>,
    /// per-channel shift
    pub bias: Option<Tensor>,
    /// running mean (buffer)
    pub running_mean: Option<Buffer>,
    /// running variance (buffer)
    pub running_var: Option<Buffer>,
    /// batches seen in training (int64 buffer)
    pub num_batches_tracked: Option<Buffer>,
    /// running-statistics factor (`None`: cumulative average)
    pub momentum: Option<f64>,
    /// added to the variance
    pub eps: f64,
    /// training mode
    pub training: bool,
    /// number of channels (torch's `num_features`)
    pub num_features: usize,
    name: &'static str,
}

/// torch's `nn.BatchNorm1d`.
pub type BatchNorm1d = BatchNorm;
/// torch's `nn.BatchNorm2d`.
pub type BatchNorm2d = BatchNorm;

impl BatchNorm {
    /// torch's `BatchNorm*d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)`.
    pub fn new(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        let buf = |t: Tensor| Some(Buffer(t));
        Ok(BatchNorm {
            weight: if affine { Some(ones(&[num_features], DType::default_float())?) } else { None },
            bias: if affine { Some(zeros(&[num_features], DType::default_float())?) } else { None },
            running_mean: if track_running_stats {
                buf(Tensor::zeros([num_features], DType::default_float())?)
            } else {
                None
            },
            running_var: if track_running_stats {
                buf(Tensor::ones([num_features], DType::default_float())?)
            } else {
                None
            },
            num_batches_tracked: if track_running_stats { buf(Tensor::zeros([], DType::I64)?) } else { None },
            momentum,
            eps,
            training: true,
            num_features,
            name: "BatchNorm",
        })
    }

    /// `BatchNorm1d(num_features)` with torch's defaults.
    pub fn new_1d(num_features: usize) -> Result<Self> {
        Self::new_1d_with(num_features, 1e-5, Some(0.1), true, true)
    }

    /// `BatchNorm2d(num_features)` with torch's defaults.
    pub fn new_2d(num_features: usize) -> Result<Self> {
        Self::new_2d_with(num_features, 1e-5, Some(0.1), true, true)
    }

    /// `BatchNorm3d(num_features)` with torch's defaults.
    pub fn new_3d(num_features: usize) -> Result<Self> {
        Self::new_3d_with(num_features, 1e-5, Some(0.1), true, true)
    }

    /// `BatchNorm1d(num_features, eps, momentum, affine, track_running_stats)`: `[N, C]` or
    /// `[N, C, L]` inputs.
    pub fn new_1d_with(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::named("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats)
    }

    /// `BatchNorm2d(num_features, eps, momentum, affine, track_running_stats)`: `[N, C, H, W]`
    /// inputs.
    pub fn new_2d_with(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::named("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats)
    }

    /// `BatchNorm3d(num_features, eps, momentum, affine, track_running_stats)`: `[N, C, D, H, W]`
    /// inputs.
    pub fn new_3d_with(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::named("BatchNorm3d", num_features, eps, momentum, affine, track_running_stats)
    }

    /// [`BatchNorm::new`] under torch's class name `name`, whose input ranks `forward` checks.
    fn named(
        name: &'static str,
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Ok(BatchNorm { name, ..Self::new(num_features, eps, momentum, affine, track_running_stats)? })
    }

    /// torch's `_check_input_dim`: the ranks each kind accepts (any for [`BatchNorm::new`]).
    fn check_input_dim(&self, x: &Tensor) -> Result<()> {
        let r = x.rank();
        let msg = match self.name {
            "BatchNorm1d" if r != 2 && r != 3 => format!("expected 2D or 3D input (got {r}D input)"),
            "BatchNorm2d" if r != 4 => format!("expected 4D input (got {r}D input)"),
            "BatchNorm3d" if r != 5 => format!("expected 5D input (got {r}D input)"),
            _ => return Ok(()),
        };
        Err(Error::shape(msg))
    }
}

/// torch's `nn.BatchNorm3d`.
pub type BatchNorm3d = BatchNorm;

impl Forward for BatchNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.check_input_dim(x)?;
        let use_batch_stats = self.training || self.running_mean.is_none();
        let mut momentum = self.momentum.unwrap_or(0.0);
        if self.training {
            if let Some(n) = &self.num_batches_tracked {
                oxtorch_autograd::no_grad(|| n.add_(1).map(|_| ()))?;
                if self.momentum.is_none() {
                    momentum = 1.0 / n.item::<f64>()?;
                }
            }
        }
        x.batch_norm(
            self.running_mean.as_deref(),
            self.running_var.as_deref(),
            self.weight.as_ref(),
            self.bias.as_ref(),
            use_batch_stats,
            momentum,
            self.eps,
        )
    }
}

/// The members batch and instance norms share, in torch's order and names: the affine `weight`
/// and `bias` (parameters, when present), then `running_mean`, `running_var` and
/// `num_batches_tracked` (buffers, when the statistics are tracked).
pub(crate) fn visit_norm_members<'m>(
    params: [&'m Option<Tensor>; 2],
    buffers: [&'m Option<Buffer>; 3],
    f: &mut dyn FnMut(&str, Member<'m>),
) {
    for (n, t) in ["weight", "bias"].into_iter().zip(params) {
        if let Some(t) = t {
            f(n, Member::Param(t));
        }
    }
    for (n, b) in NORM_BUFFERS.into_iter().zip(buffers) {
        if let Some(b) = b {
            f(n, Member::Buffer(&b.0));
        }
    }
}

/// [`visit_norm_members`], mutably.
pub(crate) fn visit_norm_members_mut(
    params: [&mut Option<Tensor>; 2],
    buffers: [&mut Option<Buffer>; 3],
    f: &mut dyn FnMut(&str, MemberMut<'_>),
) {
    for (n, t) in ["weight", "bias"].into_iter().zip(params) {
        if let Some(t) = t {
            f(n, MemberMut::Param(t));
        }
    }
    for (n, b) in NORM_BUFFERS.into_iter().zip(buffers) {
        if let Some(b) = b {
            f(n, MemberMut::Buffer(&mut b.0));
        }
    }
}

/// The running-statistics buffers' names.
const NORM_BUFFERS: [&str; 3] = ["running_mean", "running_var", "num_batches_tracked"];

impl Module for BatchNorm {
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
    fn type_name(&self) -> &'static str {
        self.name
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
    fn batch_norm_momentum(&mut self, f: &mut dyn FnMut(&mut Option<f64>)) -> bool {
        f(&mut self.momentum);
        true
    }
}
