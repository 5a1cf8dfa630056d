//! Mamba-2's mixer (transformers' `Mamba2Mixer`): one `in_proj` to the gate, the convolved
//! channels with `B` and `C`, and a step size per head; the scan's `A` is a scalar per head and
//! `B`, `C` are shared by the heads of a group; the output is gated by `silu(gate)` inside a
//! grouped RMS norm (`MambaRMSNormGated`) before `out_proj`.

use oxtorch_tensor::{DType, Tensor};

use super::{masked, selective_scan, Activation, CausalConv, Linear, ScanInputs};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// A Mamba-2 mixer's sizes and options (transformers' `Mamba2Config` keys, or the `mamba_*` keys
/// of the hybrid models).
#[derive(Debug, Clone, Copy)]
pub struct Mamba2Dims {
    /// the model's hidden size
    pub hidden: usize,
    /// heads (`num_heads`) of `head_dim` channels each
    pub heads: usize,
    pub head_dim: usize,
    /// groups of heads sharing `B` and `C` (`n_groups`)
    pub groups: usize,
    /// the scan's states per channel (`state_size`)
    pub states: usize,
    /// the convolution's width (`conv_kernel`)
    pub kernel: usize,
    /// `in_proj` has a bias (`use_bias`)
    pub proj_bias: bool,
    /// `out_proj` has a bias (`use_bias`; Falcon-H1's `projectors_bias`)
    pub out_bias: bool,
    /// how the gate and the norm close the mixer
    pub gated_norm: GatedNorm,
    /// the convolution has a bias (`use_conv_bias`)
    pub conv_bias: bool,
    /// the convolution's activation (`hidden_act`)
    pub act: Activation,
    /// the gated norm's epsilon
    pub eps: f64,
    /// the step sizes' bounds (`time_step_limit`)
    pub dt_limit: (f64, f64),
}

/// How a Mamba-2 mixer's output is gated by `silu(gate)` and normed (transformers'
/// `MambaRMSNormGated`, grouped, in float32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatedNorm {
    /// gated, then the grouped RMS norm (Mamba-2, the hybrids)
    GateThenNorm,
    /// the grouped RMS norm, then gated (Falcon-H1's `mamba_norm_before_gate`)
    NormThenGate,
    /// gated, no norm (Falcon-H1 without `mamba_rms_norm`)
    GateOnly,
}

impl Mamba2Dims {
    /// The channels (`heads × head_dim`).
    pub fn channels(&self) -> usize {
        self.heads * self.head_dim
    }

    /// The channels the convolution runs over: the channels, then `B` and `C`.
    pub fn conv_channels(&self) -> usize {
        self.channels() + 2 * self.groups * self.states
    }

    /// Checks the sizes: all positive, the groups dividing the heads, the widths they imply
    /// representable.
    pub fn check(&self) -> Result<()> {
        let Mamba2Dims { hidden, heads, head_dim, groups, states, kernel, .. } = *self;
        let widths = heads.checked_mul(head_dim).and_then(|c| {
            groups.checked_mul(states)?.checked_mul(2)?.checked_add(c.checked_mul(2)?)?.checked_add(heads)
        });
        if widths.is_none() {
            return Err(Error::Config(format!(
                "a Mamba-2 mixer of {heads} heads of {head_dim} in {groups} groups of {states} states is too large"
            )));
        }
        if [hidden, heads, head_dim, groups, states, kernel].contains(&0) || heads % groups != 0 {
            return Err(Error::Config(format!(
                "a Mamba-2 mixer needs positive sizes and groups dividing its heads, got hidden size {hidden}, \
                 {heads} heads of {head_dim}, {groups} groups, {states} states, a convolution of {kernel}"
            )));
        }
        Ok(())
    }
}

/// A Mamba-2 mixer's state between calls: the convolution's last inputs
/// `[batch, conv channels, kernel - 1]` and the scan's states `[batch, channels, states]`
/// (float32).
#[derive(Debug, Clone)]
pub struct SsmState {
    /// the convolution's last inputs
    pub conv: Tensor,
    /// the scan's states
    pub ssm: Tensor,
}

impl SsmState {
    /// Moves the rows: row `r` becomes what row `from[r]` was (beam search).
    pub fn reorder(&mut self, from: &Tensor) -> Result<()> {
        let from = from.to(self.ssm.device())?;
        self.conv = self.conv.index_select(0, &from)?;
        self.ssm = self.ssm.index_select(0, &from)?;
        Ok(())
    }
}

/// One block's Mamba-2 mixer.
#[derive(Debug, Clone)]
pub struct Mamba2Mixer {
    in_proj: Linear,
    /// over the channels, then `B` and `C` (`channels + 2 × groups × states`)
    conv: CausalConv,
    /// `dt_bias` `[heads]`
    dt_bias: Tensor,
    /// `-exp(A_log)` per channel (its head's) `[channels, states]`, float32
    a: Tensor,
    /// `D` per channel (its head's) `[channels]`, float32
    d: Tensor,
    /// the gated norm's scale `[channels]` (none without a norm) and epsilon
    norm_weight: Option<Tensor>,
    norm_eps: f64,
    gated_norm: GatedNorm,
    out_proj: Linear,
    heads: usize,
    groups: usize,
    /// the step sizes' bounds (`time_step_limit`) over a sequence; a cached step does not clamp,
    /// as transformers' `mamba2_selective_state_update` does not
    dt_limit: (f64, f64),
}

impl Mamba2Mixer {
    /// `v.in_proj`, `v.conv1d`, `v.dt_bias`, `v.A_log`, `v.D`, `v.norm.weight`, `v.out_proj`.
    pub fn load(v: &Vars<'_>, dims: &Mamba2Dims) -> Result<Self> {
        dims.check()?;
        let Mamba2Dims { hidden, heads, groups, states, kernel, .. } = *dims;
        let (channels, conv_channels) = (dims.channels(), dims.conv_channels());
        let per_head = |t: Tensor, width: usize| -> Result<Tensor> {
            let t = t.to_dtype(DType::F32)?.unsqueeze(-1)?;
            Ok(t.expand([heads, channels / heads])?
                .reshape([channels])?
                .unsqueeze(-1)?
                .expand([channels, width])?)
        };
        let a = v.get_as_stored("A_log", &[heads])?.to_dtype(DType::F32)?.exp()?.neg()?;
        let d = v.get_as_stored("D", &[heads])?;
        Ok(Mamba2Mixer {
            in_proj: Linear::load(
                &v.pp("in_proj"),
                hidden,
                channels + conv_channels + heads,
                dims.proj_bias,
            )?,
            conv: CausalConv::load(&v.pp("conv1d"), conv_channels, kernel, dims.conv_bias, dims.act)?,
            dt_bias: v.get("dt_bias", &[heads])?,
            a: per_head(a, states)?.contiguous()?,
            d: per_head(d, 1)?.reshape([channels])?.contiguous()?,
            norm_weight: match dims.gated_norm {
                GatedNorm::GateOnly => None,
                _ => Some(v.get("norm.weight", &[channels])?),
            },
            norm_eps: dims.eps,
            gated_norm: dims.gated_norm,
            out_proj: Linear::load(&v.pp("out_proj"), channels, hidden, dims.out_bias)?,
            heads,
            groups,
            dt_limit: dims.dt_limit,
        })
    }

    /// An empty state for `batch` new sequences (the convolution's inputs in `dtype`).
    pub fn new_state(&self, batch: usize, dtype: DType) -> Result<SsmState> {
        let device = self.d.device();
        let (conv_channels, kernel) = (self.conv.channels(), self.conv.kernel());
        Ok(SsmState {
            conv: Tensor::zeros([batch, conv_channels, kernel - 1], (dtype, device))?,
            ssm: Tensor::zeros([batch, self.d.dims()[0], self.a.dims()[1]], (DType::F32, device))?,
        })
    }

    /// The mixer on `h` `[batch, seq, hidden]` (`mask` `[batch, seq]`: the padded tokens' zeros)
    /// after the tokens `state` holds, which it advances past these; `cached_step`: one token
    /// after earlier ones (transformers' recurrent form, whose step sizes are not clamped).
    pub fn forward(
        &self,
        h: &Tensor,
        mask: Option<&Tensor>,
        state: &mut SsmState,
        cached_step: bool,
    ) -> Result<Tensor> {
        let (conv, ssm) = (&mut state.conv, &mut state.ssm);
        let dtype = h.dtype();
        let (batch, seq) = (h.dims()[0], h.dims()[1]);
        let (channels, states, heads, groups) = (self.d.dims()[0], self.a.dims()[1], self.heads, self.groups);
        let projected = self.in_proj.forward(&masked(h, mask)?)?;
        let conv_channels = channels + 2 * groups * states;
        let gate = projected.narrow(-1, 0, channels)?;
        let xbc = projected.narrow(-1, channels as isize, conv_channels)?.transpose(1, 2)?;
        let dt = projected.narrow(-1, (channels + conv_channels) as isize, heads)?;
        // [batch, seq, conv channels]
        let xbc = masked(&self.conv.forward(&xbc, conv)?.transpose(1, 2)?, mask)?;
        let x = xbc.narrow(-1, 0, channels)?;
        let grouped = |at: usize| -> Result<Tensor> {
            Ok(xbc
                .narrow(-1, at as isize, groups * states)?
                .contiguous()?
                .reshape([batch, seq, groups, states])?)
        };
        let (b, c) = (grouped(channels)?, grouped(channels + groups * states)?);
        // Δ per head in the model's dtype, then each head's channels.
        let mut dt =
            dt.add(&self.dt_bias.to_dtype(dt.dtype())?)?.softplus(1.0, 20.0)?.to_dtype(DType::F32)?;
        if !cached_step {
            dt = dt.clamp(Some(self.dt_limit.0.into()), Some(self.dt_limit.1.into()))?;
        }
        let dt = dt
            .unsqueeze(-1)?
            .expand([batch, seq, heads, channels / heads])?
            .reshape([batch, seq, channels])?;
        let (x_t, dt_t) = (x.transpose(1, 2)?, dt.transpose(1, 2)?);
        let y = selective_scan(
            &ScanInputs { x: &x_t, dt: &dt_t, z: None, b: &b, c: &c, a: &self.a, d: &self.d },
            ssm,
        )?;
        // The gate and the grouped RMS norm in float32.
        let gate = gate.to_dtype(DType::F32)?.silu()?;
        let y = y.transpose(1, 2)?;
        let norm = |y: &Tensor, weight: &Tensor| -> Result<Tensor> {
            let y = y.reshape([batch, seq, groups, channels / groups])?;
            let rms = y.square()?.mean(-1, true)?.add(self.norm_eps)?.rsqrt()?;
            Ok(y.mul(&rms)?.reshape([batch, seq, channels])?.mul(weight)?)
        };
        let out = match (&self.norm_weight, self.gated_norm) {
            (Some(w), GatedNorm::GateThenNorm) => norm(&y.mul(&gate)?, w)?,
            (Some(w), GatedNorm::NormThenGate) => norm(&y, w)?.mul(&gate)?,
            _ => y.mul(&gate)?,
        };
        self.out_proj.forward(&out.to_dtype(dtype)?)
    }
}
