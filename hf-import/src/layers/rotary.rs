//! Rotary position embeddings (RoPE), with transformers' frequency scalings.

use std::f64::consts::PI;

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::{RopeParams, RopeScaling};
use crate::error::Result;

/// The inverse frequencies of one RoPE configuration.
#[derive(Debug, Clone)]
pub struct Rotary {
    inv_freq: Tensor,
    attention_scaling: f64,
    rotary_dim: usize,
}

impl Rotary {
    /// RoPE over the first `partial_rotary_factor * head_dim` dims of each head.
    pub fn new(params: &RopeParams, head_dim: usize) -> Result<Self> {
        let dim = (head_dim as f64 * params.partial_rotary_factor) as usize;
        let base = params.theta as f32;
        // As transformers: 1 / base^(i / dim) in float32 for even i < dim.
        let mut inv: Vec<f32> = (0..dim).step_by(2).map(|i| 1.0 / base.powf(i as f32 / dim as f32)).collect();
        match params.scaling {
            RopeScaling::Default => {}
            RopeScaling::Linear { factor } => inv.iter_mut().for_each(|f| *f /= factor as f32),
            RopeScaling::Llama3 {
                factor,
                low_freq_factor,
                high_freq_factor,
                original_max_position_embeddings,
            } => {
                let low_wavelen = original_max_position_embeddings / low_freq_factor;
                let high_wavelen = original_max_position_embeddings / high_freq_factor;
                for f in inv.iter_mut() {
                    let freq = *f as f64;
                    let wavelen = 2.0 * PI / freq;
                    let scaled = if wavelen > low_wavelen { freq / factor } else { freq };
                    let medium = wavelen >= high_wavelen && wavelen <= low_wavelen; // never NaN: freq > 0
                    *f = if medium {
                        let smooth = (original_max_position_embeddings / wavelen - low_freq_factor)
                            / (high_freq_factor - low_freq_factor);
                        ((1.0 - smooth) * scaled / factor + smooth * scaled) as f32
                    } else {
                        scaled as f32
                    };
                }
            }
        }
        let n = inv.len();
        Ok(Rotary { inv_freq: Tensor::from_vec(inv, [n])?, attention_scaling: 1.0, rotary_dim: dim })
    }

    /// The same frequencies on `device` (where the positions given to [`Rotary::cos_sin`] live).
    pub fn to_device(self, device: Device) -> Result<Self> {
        Ok(Rotary { inv_freq: self.inv_freq.to(device)?, ..self })
    }

    /// `(cos, sin)` `[batch, seq, rotary_dim]` in `dtype` for int64 `position_ids` `[batch, seq]`.
    pub fn cos_sin(&self, position_ids: &Tensor, dtype: DType) -> Result<(Tensor, Tensor)> {
        let freqs = position_ids.to_dtype(DType::F32)?.unsqueeze(-1)?.mul(&self.inv_freq)?;
        let emb = Tensor::cat(&[&freqs, &freqs], -1)?;
        let (mut cos, mut sin) = (emb.cos()?, emb.sin()?);
        if self.attention_scaling != 1.0 {
            cos = cos.mul(self.attention_scaling)?;
            sin = sin.mul(self.attention_scaling)?;
        }
        Ok((cos.to_dtype(dtype)?, sin.to_dtype(dtype)?))
    }

    /// The number of rotated dims per head.
    pub fn rotary_dim(&self) -> usize {
        self.rotary_dim
    }
}

/// `[x1, x2] -> [-x2, x1]` over the last dim.
fn rotate_half(x: &Tensor) -> Result<Tensor> {
    let halves = x.chunk(2, -1)?;
    Ok(Tensor::cat(&[&halves[1].neg()?, &halves[0]], -1)?)
}

/// `x * cos + rotate_half(x) * sin` for `x` `[batch, heads, seq, head_dim]` and `cos`/`sin`
/// `[batch, seq, rotary_dim]`; dims past `rotary_dim` pass through.
pub fn apply_rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let (cos, sin) = (cos.unsqueeze(1)?, sin.unsqueeze(1)?);
    let rot = *cos.dims().last().unwrap_or(&0);
    let head = *x.dims().last().unwrap_or(&0);
    if rot == head {
        return Ok(x.mul(&cos)?.add(&rotate_half(x)?.mul(&sin)?)?);
    }
    let (x_rot, x_pass) = (x.narrow(-1, 0, rot)?, x.narrow(-1, rot as isize, head - rot)?);
    let rotated = x_rot.mul(&cos)?.add(&rotate_half(&x_rot)?.mul(&sin)?)?;
    Ok(Tensor::cat(&[&rotated, &x_pass], -1)?)
}
