//! Mamba's mixer (transformers' `MambaMixer`; Falcon-Mamba's with weightless RMS norms on the
//! step sizes, `B` and `C`, Jamba's with learned ones).

use oxtorch_tensor::{DType, Tensor};

use super::{
    masked, selective_scan, Activation, CausalConv, Linear, RmsNorm, RmsNormStyle, ScanInputs, SsmState,
};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// RMS norms on a Mamba mixer's step sizes, `B` and `C` (after `x_proj`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepNorms {
    /// none (Mamba)
    None,
    /// without weights, this epsilon (Falcon-Mamba's `mixer_rms_eps`)
    Weightless(f64),
    /// `dt_layernorm`, `b_layernorm`, `c_layernorm` with weights, this epsilon (Jamba)
    Learned(f64),
}

/// A Mamba mixer's sizes and options.
#[derive(Debug, Clone, Copy)]
pub struct MambaDims {
    /// the model's hidden size
    pub hidden: usize,
    /// the channels (`expand × hidden`)
    pub channels: usize,
    /// the scan's states per channel (`state_size`)
    pub states: usize,
    /// the step sizes' rank (`time_step_rank`)
    pub rank: usize,
    /// the convolution's width (`conv_kernel`)
    pub kernel: usize,
    /// `in_proj` and `out_proj` have biases (`use_bias`)
    pub proj_bias: bool,
    /// the convolution has a bias (`use_conv_bias`)
    pub conv_bias: bool,
    /// the convolution's activation (`hidden_act`)
    pub act: Activation,
    /// the norms on the step sizes, `B` and `C`
    pub step_norms: StepNorms,
}

impl MambaDims {
    /// Checks the sizes are positive and the widths they imply representable.
    pub fn check(&self) -> Result<()> {
        let MambaDims { hidden, channels, states, rank, kernel, .. } = *self;
        if channels.checked_mul(2).is_none()
            || states.checked_mul(2).and_then(|s| s.checked_add(rank)).is_none()
        {
            return Err(Error::Config(format!(
                "a Mamba mixer of {channels} channels, {states} states and a step-size rank of {rank} is too large"
            )));
        }
        if [hidden, channels, states, rank, kernel].contains(&0) {
            return Err(Error::Config(format!(
                "a Mamba mixer needs positive sizes, got hidden size {hidden}, {channels} channels, {states} \
                 states, a step-size rank of {rank}, a convolution of {kernel}"
            )));
        }
        Ok(())
    }
}

/// The learned norms of Jamba's mixer.
#[derive(Debug, Clone)]
struct LearnedNorms {
    dt: RmsNorm,
    b: RmsNorm,
    c: RmsNorm,
}

/// One block's selective state-space mixer.
#[derive(Debug, Clone)]
pub struct MambaMixer {
    in_proj: Linear,
    conv: CausalConv,
    x_proj: Linear,
    /// `dt_proj`'s weight (its bias is added in float32, after the product)
    dt_weight: Tensor,
    dt_bias: Tensor,
    /// `-exp(A_log)` `[channels, states]`, float32
    a: Tensor,
    /// `D` `[channels]`, float32
    d: Tensor,
    out_proj: Linear,
    /// Falcon-Mamba's weightless RMS norms on the step sizes, `B` and `C` (their epsilon)
    weightless_eps: Option<f64>,
    /// Jamba's learned ones
    learned: Option<LearnedNorms>,
}

impl MambaMixer {
    /// `v.in_proj`, `v.conv1d`, `v.x_proj`, `v.dt_proj`, `v.A_log`, `v.D`, `v.out_proj` (and
    /// Jamba's `v.{dt,b,c}_layernorm`).
    pub fn load(v: &Vars<'_>, dims: &MambaDims) -> Result<Self> {
        dims.check()?;
        let MambaDims { hidden, channels, states, rank, kernel, .. } = *dims;
        let dt_proj = Linear::load(&v.pp("dt_proj"), rank, channels, true)?;
        let a_log = v.get_as_stored("A_log", &[channels, states])?.to_dtype(DType::F32)?;
        Ok(MambaMixer {
            in_proj: Linear::load(&v.pp("in_proj"), hidden, 2 * channels, dims.proj_bias)?,
            conv: CausalConv::load(&v.pp("conv1d"), channels, kernel, dims.conv_bias, dims.act)?,
            x_proj: Linear::load(&v.pp("x_proj"), channels, rank + 2 * states, false)?,
            dt_weight: dt_proj.weight,
            dt_bias: dt_proj.bias.expect("loaded with a bias").to_dtype(DType::F32)?,
            a: a_log.exp()?.neg()?,
            d: v.get_as_stored("D", &[channels])?.to_dtype(DType::F32)?,
            out_proj: Linear::load(&v.pp("out_proj"), channels, hidden, dims.proj_bias)?,
            weightless_eps: match dims.step_norms {
                StepNorms::Weightless(eps) => Some(eps),
                _ => None,
            },
            learned: match dims.step_norms {
                StepNorms::Learned(eps) => {
                    let norm =
                        |name: &str, dim: usize| RmsNorm::load(&v.pp(name), dim, eps, RmsNormStyle::Llama);
                    Some(LearnedNorms {
                        dt: norm("dt_layernorm", rank)?,
                        b: norm("b_layernorm", states)?,
                        c: norm("c_layernorm", states)?,
                    })
                }
                _ => None,
            },
        })
    }

    /// An empty state for `batch` new sequences (the convolution's inputs in `dtype`).
    pub fn new_state(&self, batch: usize, dtype: DType) -> Result<SsmState> {
        let device = self.d.device();
        let (channels, kernel) = (self.conv.channels(), self.conv.kernel());
        Ok(SsmState {
            conv: Tensor::zeros([batch, channels, kernel - 1], (dtype, device))?,
            ssm: Tensor::zeros([batch, channels, self.a.dims()[1]], (DType::F32, device))?,
        })
    }

    /// The mixer on `h` `[batch, seq, hidden]` after the tokens `state` holds, which it advances
    /// past these.
    pub fn forward(&self, h: &Tensor, mask: Option<&Tensor>, state: &mut SsmState) -> Result<Tensor> {
        let (conv, ssm) = (&mut state.conv, &mut state.ssm);
        let dtype = h.dtype();
        let channels = self.d.dims()[0];
        // [batch, 2 × channels, seq]
        let projected = self.in_proj.forward(&masked(h, mask)?)?.transpose(1, 2)?;
        let (x, z) = (projected.narrow(1, 0, channels)?, projected.narrow(1, channels as isize, channels)?);
        // [batch, seq, channels]
        let x = masked(&self.conv.forward(&x, conv)?.transpose(1, 2)?, mask)?;
        let params = self.x_proj.forward(&x)?;
        let (rank, states) = (self.dt_weight.dims()[1], self.a.dims()[1]);
        let mut step = params.narrow(-1, 0, rank)?;
        let mut b = params.narrow(-1, rank as isize, states)?;
        let mut c = params.narrow(-1, (rank + states) as isize, states)?;
        if let Some(norms) = &self.learned {
            (step, b, c) = (norms.dt.forward(&step)?, norms.b.forward(&b)?, norms.c.forward(&c)?);
        }
        if let Some(eps) = self.weightless_eps {
            let norm = |t: &Tensor| -> Result<Tensor> {
                let t32 = t.to_dtype(DType::F32)?;
                let rms = t32.square()?.mean(-1, true)?.add(eps)?.rsqrt()?;
                Ok(t32.mul(&rms)?.to_dtype(t.dtype())?)
            };
            (step, b, c) = (norm(&step)?, norm(&b)?, norm(&c)?);
        }
        // Δ: the product in the model's dtype, its bias and softplus in float32.
        let dt = step
            .matmul(&self.dt_weight.t()?)?
            .to_dtype(DType::F32)?
            .add(&self.dt_bias)?
            .softplus(1.0, 20.0)?;
        let (x_t, dt_t, z) = (x.transpose(1, 2)?, dt.transpose(1, 2)?, z);
        let y = selective_scan(
            &ScanInputs { x: &x_t, dt: &dt_t, z: Some(&z), b: &b, c: &c, a: &self.a, d: &self.d },
            ssm,
        )?;
        self.out_proj.forward(&y.transpose(1, 2)?.to_dtype(dtype)?)
    }
}
