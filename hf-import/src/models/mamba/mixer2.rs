//! Mamba-2's mixer (transformers' `Mamba2Mixer`): one `in_proj` to the gate, the convolved
//! channels with `B` and `C`, and a step size per head; the scan's `A` is a scalar per head and
//! `B`, `C` are shared by the heads of a group; the output is gated by `silu(gate)` inside a
//! grouped RMS norm (`MambaRMSNormGated`) before `out_proj`.

use oxtorch_tensor::{DType, Tensor};

use super::mixer::{masked, CausalConv};
use super::{Dims, MambaConfig};
use crate::error::Result;
use crate::layers::{selective_scan, Linear, ScanInputs};
use crate::weights::Vars;

/// One block's Mamba-2 mixer.
#[derive(Debug, Clone)]
pub(super) struct Mamba2Mixer {
    in_proj: Linear,
    /// over the channels, then `B` and `C` (`channels + 2 × groups × states`)
    conv: CausalConv,
    /// `dt_bias` `[heads]`
    dt_bias: Tensor,
    /// `-exp(A_log)` per channel (its head's) `[channels, states]`, float32
    a: Tensor,
    /// `D` per channel (its head's) `[channels]`, float32
    d: Tensor,
    /// the gated norm's scale `[channels]` and epsilon
    norm_weight: Tensor,
    norm_eps: f64,
    out_proj: Linear,
    heads: usize,
    groups: usize,
    /// the step sizes' bounds (`time_step_limit`) over a sequence; a cached step does not clamp,
    /// as transformers' `mamba2_selective_state_update` does not
    dt_limit: (f64, f64),
}

impl Mamba2Mixer {
    pub(super) fn load(v: &Vars<'_>, cfg: &MambaConfig) -> Result<Self> {
        let Dims { hidden, channels, states, kernel, .. } = cfg.dims;
        let (heads, groups) = (cfg.heads, cfg.groups);
        let conv_channels = channels + 2 * groups * states;
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
            in_proj: Linear::load(&v.pp("in_proj"), hidden, channels + conv_channels + heads, cfg.use_bias)?,
            conv: CausalConv::load(&v.pp("conv1d"), conv_channels, kernel, cfg)?,
            dt_bias: v.get("dt_bias", &[heads])?,
            a: per_head(a, states)?.contiguous()?,
            d: per_head(d, 1)?.reshape([channels])?.contiguous()?,
            norm_weight: v.get("norm.weight", &[channels])?,
            norm_eps: cfg.eps,
            out_proj: Linear::load(&v.pp("out_proj"), channels, hidden, cfg.use_bias)?,
            heads,
            groups,
            dt_limit: cfg.dt_limit,
        })
    }

    /// The mixer on `h` `[batch, seq, hidden]` after the tokens `conv` and `ssm` hold, which it
    /// advances past these; `cached_step`: one token after earlier ones (transformers' recurrent
    /// form, whose step sizes are not clamped).
    pub(super) fn forward(
        &self,
        h: &Tensor,
        mask: Option<&Tensor>,
        conv: &mut Tensor,
        ssm: &mut Tensor,
        cached_step: bool,
    ) -> Result<Tensor> {
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
        // The gated, grouped RMS norm in float32.
        let y = y.transpose(1, 2)?.mul(&gate.to_dtype(DType::F32)?.silu()?)?;
        let y = y.reshape([batch, seq, groups, channels / groups])?;
        let rms = y.square()?.mean(-1, true)?.add(self.norm_eps)?.rsqrt()?;
        let normed = y.mul(&rms)?.reshape([batch, seq, channels])?.mul(&self.norm_weight)?;
        self.out_proj.forward(&normed.to_dtype(dtype)?)
    }
}
