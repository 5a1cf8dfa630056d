//! `torch.optim.Muon`: momentum (optionally Nesterov), then the update orthogonalised by a quintic
//! Newton–Schulz iteration computed in bfloat16 (as torch's `_zeropower_via_newtonschulz`), a
//! decoupled weight decay and a learning rate adjusted to the matrix's shape. Only 2-d parameters.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::py_float;

use super::state::{ParamState, StateReader, StateWriter};
use super::{
    group_methods, state_dict_methods, zero_grads, HyperParams, Optimizer, OptimizerState, ParamGroup,
};

/// How Muon scales the learning rate by the shape `A × B` of a parameter (torch's `adjust_lr_fn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MuonAdjustLr {
    /// `"original"` (Keller Jordan's, torch's default for `None`): `lr * sqrt(max(1, A / B))`
    Original,
    /// `"match_rms_adamw"` (Moonshot's): `lr * 0.2 * sqrt(max(A, B))`
    MatchRmsAdamW,
    /// `"spectral_unclamped"` (Bernstein's): `lr * sqrt(A / B)`
    SpectralUnclamped,
}

impl MuonAdjustLr {
    /// The adjustment torch names `name` (`"original"`, `"match_rms_adamw"`,
    /// `"spectral_unclamped"`); another name is torch's error.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "original" => Ok(MuonAdjustLr::Original),
            "match_rms_adamw" => Ok(MuonAdjustLr::MatchRmsAdamW),
            "spectral_unclamped" => Ok(MuonAdjustLr::SpectralUnclamped),
            other => Err(Error::msg(format!("Adjust learning rate function {other} is not supported"))),
        }
    }

    /// torch's name of the adjustment.
    pub fn name(self) -> &'static str {
        match self {
            MuonAdjustLr::Original => "original",
            MuonAdjustLr::MatchRmsAdamW => "match_rms_adamw",
            MuonAdjustLr::SpectralUnclamped => "spectral_unclamped",
        }
    }

    /// The code [`HyperParams`] stores for an adjustment (`None`: 0, then 1, 2, 3 in the order of
    /// the variants).
    fn code(adjust: Option<Self>) -> f64 {
        match adjust {
            None => 0.0,
            Some(MuonAdjustLr::Original) => 1.0,
            Some(MuonAdjustLr::MatchRmsAdamW) => 2.0,
            Some(MuonAdjustLr::SpectralUnclamped) => 3.0,
        }
    }

    /// The adjustment of a [`MuonAdjustLr::code`] (an unknown code reads as `None`).
    fn from_code(code: f64) -> Option<Self> {
        match code as i64 {
            1 => Some(MuonAdjustLr::Original),
            2 => Some(MuonAdjustLr::MatchRmsAdamW),
            3 => Some(MuonAdjustLr::SpectralUnclamped),
            _ => None,
        }
    }
}

/// torch's `_adjust_lr(lr, adjust_lr_fn, shape)` for a parameter of shape `a × b`.
fn adjust_lr(lr: f64, adjust: Option<MuonAdjustLr>, a: usize, b: usize) -> f64 {
    let (a, b) = (a as f64, b as f64);
    let ratio = match adjust {
        None | Some(MuonAdjustLr::Original) => (a / b).max(1.0).sqrt(),
        Some(MuonAdjustLr::MatchRmsAdamW) => 0.2 * a.max(b).sqrt(),
        Some(MuonAdjustLr::SpectralUnclamped) => (a / b).sqrt(),
    };
    lr * ratio
}

/// Muon's hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct MuonOptions {
    /// learning rate (default `1e-3`)
    pub lr: f64,
    /// decoupled weight decay (default `0.1`)
    pub weight_decay: f64,
    /// momentum factor (default `0.95`)
    pub momentum: f64,
    /// Nesterov momentum (default `true`)
    pub nesterov: bool,
    /// the Newton–Schulz coefficients `(a, b, c)` (default `(3.4445, -4.7750, 2.0315)`)
    pub ns_coefficients: (f64, f64, f64),
    /// the floor of the norm the update is divided by (default `1e-7`)
    pub eps: f64,
    /// Newton–Schulz iterations (default 5; 100 or more is torch's error at `step`)
    pub ns_steps: usize,
    /// the learning-rate adjustment (`None`: `"original"`, torch's default)
    pub adjust_lr_fn: Option<MuonAdjustLr>,
}

impl Default for MuonOptions {
    fn default() -> Self {
        MuonOptions {
            lr: 1e-3,
            weight_decay: 0.1,
            momentum: 0.95,
            nesterov: true,
            ns_coefficients: (3.4445, -4.7750, 2.0315),
            eps: 1e-7,
            ns_steps: 5,
            adjust_lr_fn: None,
        }
    }
}

/// The fields by torch's names (`ns_coefficients.0` .. `.2`, the flag as 0/1, `adjust_lr_fn` as
/// 0 for `None`, 1 `"original"`, 2 `"match_rms_adamw"`, 3 `"spectral_unclamped"`).
impl HyperParams for MuonOptions {
    fn hyper_params(&self) -> Vec<(String, f64)> {
        vec![
            ("lr".to_string(), self.lr),
            ("weight_decay".to_string(), self.weight_decay),
            ("momentum".to_string(), self.momentum),
            ("nesterov".to_string(), f64::from(u8::from(self.nesterov))),
            ("ns_coefficients.0".to_string(), self.ns_coefficients.0),
            ("ns_coefficients.1".to_string(), self.ns_coefficients.1),
            ("ns_coefficients.2".to_string(), self.ns_coefficients.2),
            ("eps".to_string(), self.eps),
            ("ns_steps".to_string(), self.ns_steps as f64),
            ("adjust_lr_fn".to_string(), MuonAdjustLr::code(self.adjust_lr_fn)),
        ]
    }

    fn set_hyper_param(&mut self, name: &str, value: f64) {
        match name {
            "lr" => self.lr = value,
            "weight_decay" => self.weight_decay = value,
            "momentum" => self.momentum = value,
            "nesterov" => self.nesterov = value != 0.0,
            "ns_coefficients.0" => self.ns_coefficients.0 = value,
            "ns_coefficients.1" => self.ns_coefficients.1 = value,
            "ns_coefficients.2" => self.ns_coefficients.2 = value,
            "eps" => self.eps = value,
            "ns_steps" if value >= 0.0 => self.ns_steps = value as usize,
            "adjust_lr_fn" => self.adjust_lr_fn = MuonAdjustLr::from_code(value),
            _ => {}
        }
    }
}

/// torch's `_zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps)`: the quintic
/// Newton–Schulz iteration in bfloat16 (a wide copy when `grad` is tall, as torch's), returned in
/// bfloat16.
pub fn zeropower_via_newtonschulz(
    grad: &Tensor,
    ns_coefficients: (f64, f64, f64),
    ns_steps: usize,
    eps: f64,
) -> Result<Tensor> {
    if ns_steps >= 100 {
        return Err(Error::msg("Number of steps must be less than 100 for computational efficiency"));
    }
    if grad.rank() != 2 {
        return Err(Error::msg("Input tensor gradient must be a 2D matrix"));
    }
    let (a, b, c) = ns_coefficients;
    let tall = grad.dims()[0] > grad.dims()[1];
    let mut x = grad.to_dtype(DType::BF16)?;
    if tall {
        x = x.t()?;
    }
    // spectral norm at most 1
    let norm = x.norm(2.0, Vec::<isize>::new(), false)?.clamp_min(eps)?;
    x = x.div(&norm)?;
    for _ in 0..ns_steps {
        let gram = x.mm(&x.t()?)?;
        let update = gram.addmm(&gram, &gram, b, c)?;
        x = x.addmm(&update, &x, a, 1.0)?;
    }
    if tall {
        x = x.t()?;
    }
    Ok(x)
}

/// A parameter's momentum buffer (torch's `momentum_buffer`).
#[derive(Clone)]
struct MomentumBuffer(Tensor);

impl ParamState for MomentumBuffer {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.tensor("momentum_buffer", &self.0)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        Ok(entries.tensor("momentum_buffer")?.map(MomentumBuffer))
    }
}

/// torch's `Muon` (single-tensor implementation): for each 2-d parameter with a gradient `g`,
/// `buf.lerp_(g, 1 - momentum)`, the update `g.lerp(buf, momentum)` (Nesterov) or `buf`,
/// orthogonalised by [`zeropower_via_newtonschulz`] (in bfloat16), then
/// `p *= 1 - lr * weight_decay` and `p -= adjusted_lr * update`.
pub struct Muon {
    groups: Vec<ParamGroup<MuonOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<MomentumBuffer>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: MuonOptions,
}

impl Muon {
    /// One group of parameters (every one 2-d).
    pub fn new(params: Vec<Tensor>, options: MuonOptions) -> Result<Self> {
        Self::build(vec![ParamGroup { params, options }], options)
    }

    /// Several groups (added groups start from [`MuonOptions::default`]).
    pub fn with_groups(groups: Vec<ParamGroup<MuonOptions>>) -> Result<Self> {
        Self::build(groups, MuonOptions::default())
    }

    /// torch's checks in its order and words: the learning rate, momentum and weight decay not
    /// negative, then every parameter 2-d.
    fn build(groups: Vec<ParamGroup<MuonOptions>>, defaults: MuonOptions) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            // (NaN fails too, as torch's `0.0 <= lr`)
            if o.lr < 0.0 || o.lr.is_nan() {
                return Err(Error::msg(format!("Learning rate should be >= 0 but is: {}", py_float(o.lr))));
            }
            if o.momentum < 0.0 || o.momentum.is_nan() {
                return Err(Error::msg(format!("momentum should be >= 0 but is: {}", py_float(o.momentum))));
            }
            if o.weight_decay < 0.0 || o.weight_decay.is_nan() {
                return Err(Error::msg(format!(
                    "weight decay should be >= 0 but is: {}",
                    py_float(o.weight_decay)
                )));
            }
        }
        for p in groups.iter().flat_map(|g| &g.params) {
            if p.rank() != 2 {
                return Err(Error::msg(format!(
                    "Muon only supports 2D parameters whereas we found a parameter with size: {}",
                    crate::module::torch_size(p.dims())
                )));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Muon { initial_lrs: Vec::new(), groups, state: vec![None; n], defaults })
    }
}

impl Optimizer for Muon {
    fn step(&mut self) -> Result<()> {
        let _end = super::StepEnd;
        no_grad(|| {
            let mut index = 0;
            for group in &self.groups {
                let o = group.options;
                for p in &group.params {
                    let i = index;
                    index += 1;
                    let Some(g) = p.grad() else { continue };
                    let buf = match &self.state[i] {
                        Some(b) => b.0.clone(),
                        None => {
                            let b = g.zeros_like()?;
                            self.state[i] = Some(MomentumBuffer(b.clone()));
                            b
                        }
                    };
                    if g.rank() != 2 {
                        return Err(Error::msg("Param gradient must be a 2D matrix"));
                    }
                    buf.lerp_(&g, 1.0 - o.momentum)?;
                    let update = if o.nesterov { g.lerp(&buf, o.momentum)? } else { buf.clone() };
                    let update = zeropower_via_newtonschulz(&update, o.ns_coefficients, o.ns_steps, o.eps)?;
                    let (rows, cols) = (p.dims()[0], p.dims()[1]);
                    let adjusted_lr = adjust_lr(o.lr, o.adjust_lr_fn, rows, cols);
                    p.mul_(1.0 - o.lr * o.weight_decay)?;
                    p.add_(&update.to_dtype(p.dtype())?.mul(-adjusted_lr)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    fn momentum(&self, group: usize) -> Option<f64> {
        Some(self.groups[group].options.momentum)
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) {
        self.groups[group].options.momentum = momentum;
    }

    state_dict_methods!();
}
