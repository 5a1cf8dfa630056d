//! Mamba's mixer (`MambaMixer`, and Falcon-Mamba's with its weightless norms).

use oxtorch_tensor::{DType, Tensor};

use super::{Dims, MambaConfig};
use crate::error::Result;
use crate::layers::{masked, selective_scan, CausalConv, Linear, ScanInputs, SsmState};
use crate::weights::Vars;

/// One block's selective state-space mixer.
#[derive(Debug, Clone)]
pub(super) struct MambaMixer {
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
    bcdt_norm_eps: Option<f64>,
}

impl MambaMixer {
    pub(super) fn load(v: &Vars<'_>, cfg: &MambaConfig) -> Result<Self> {
        let Dims { hidden, channels, states, kernel, .. } = cfg.dims;
        let rank = cfg.rank;
        let dt_proj = Linear::load(&v.pp("dt_proj"), rank, channels, true)?;
        let a_log = v.get_as_stored("A_log", &[channels, states])?.to_dtype(DType::F32)?;
        Ok(MambaMixer {
            in_proj: Linear::load(&v.pp("in_proj"), hidden, 2 * channels, cfg.use_bias)?,
            conv: CausalConv::load(&v.pp("conv1d"), channels, kernel, cfg.use_conv_bias, cfg.act)?,
            x_proj: Linear::load(&v.pp("x_proj"), channels, rank + 2 * states, false)?,
            dt_weight: dt_proj.weight,
            dt_bias: dt_proj.bias.expect("loaded with a bias").to_dtype(DType::F32)?,
            a: a_log.exp()?.neg()?,
            d: v.get_as_stored("D", &[channels])?.to_dtype(DType::F32)?,
            out_proj: Linear::load(&v.pp("out_proj"), channels, hidden, cfg.use_bias)?,
            bcdt_norm_eps: cfg.bcdt_norm_eps,
        })
    }

    /// The mixer on `h` `[batch, seq, hidden]` after the tokens `state` holds, which it advances
    /// past these.
    pub(super) fn forward(&self, h: &Tensor, mask: Option<&Tensor>, state: &mut SsmState) -> Result<Tensor> {
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
        if let Some(eps) = self.bcdt_norm_eps {
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
