//! Rotary position embeddings (RoPE), with transformers' frequency scalings.

use std::f64::consts::PI;

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::{RopeParams, RopeScaling};
use crate::error::{Error, Result};

/// Which of a multimodal RoPE's three position streams (temporal, height, width) turns each
/// frequency: `mrope_section`'s counts of frequencies, in runs (Qwen2-VL, Qwen2.5-VL) or
/// interleaved (Qwen3-VL's `mrope_interleaved`: height and width take every third frequency from
/// the second and third up to three times their counts, temporal the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultimodalRope {
    /// frequencies per stream
    pub sections: [usize; 3],
    /// Qwen3-VL's interleaved layout
    pub interleaved: bool,
}

impl MultimodalRope {
    /// The streams of a RoPE with `half` frequencies (`rotary_dim / 2`): in runs, the sections must
    /// count them all (transformers splits the frequencies by the sections), an error otherwise.
    pub fn new(sections: [usize; 3], interleaved: bool, half: usize) -> Result<Self> {
        // (Interleaved, a section past the frequencies is cut short, as transformers' slices are.)
        let total = sections.iter().try_fold(0usize, |a, &n| a.checked_add(n));
        if !interleaved && total != Some(half) {
            return Err(Error::Config(format!(
                "mrope_section {sections:?} does not split the {half} RoPE frequencies of a head ({} dims)",
                half * 2
            )));
        }
        Ok(MultimodalRope { sections, interleaved })
    }

    /// `[3, half]` ones and zeros: row `k` marks the frequencies stream `k` turns.
    fn picks(&self, half: usize) -> Vec<f32> {
        let [t, h, w] = self.sections;
        let stream = |j: usize| -> usize {
            if self.interleaved {
                match j % 3 {
                    1 if j < h.saturating_mul(3) => 1,
                    2 if j < w.saturating_mul(3) => 2,
                    _ => 0,
                }
            } else if j < t {
                0
            } else if j < t + h {
                1
            } else {
                2
            }
        };
        (0..3).flat_map(|k| (0..half).map(move |j| if stream(j) == k { 1.0 } else { 0.0 })).collect()
    }
}

/// The inverse frequencies of one RoPE configuration.
#[derive(Debug, Clone)]
pub struct Rotary {
    inv_freq: Tensor,
    /// What replaces `inv_freq` for a forward whose positions run past a length.
    long: Option<LongSequences>,
    attention_scaling: f64,
    rotary_dim: usize,
}

/// Frequencies that depend on a forward's sequence length, `max(position_ids) + 1` (transformers'
/// `dynamic_rope_update`, computed on the positions' device without reading them back).
#[derive(Debug, Clone)]
enum LongSequences {
    /// LongRoPE: `inv_freq` once the length exceeds `threshold`.
    Switch { inv_freq: Tensor, threshold: i64 },
    /// PhiMoE: the same frequencies, cos and sin scaled by `scaling` instead of the short length's
    /// once the length exceeds `threshold`.
    Mscale { scaling: f64, threshold: i64 },
    /// Dynamic NTK: past `max_positions`, the frequencies of the base
    /// `base * (factor * len / max_positions - (factor - 1)) ^ (dim / (dim - 2))`.
    Ntk { base: f64, factor: f64, max_positions: i64, exponents: Tensor, dim: usize },
}

impl Rotary {
    /// No rotation at all (models with learned absolute positions, GPT-2): angles of zero dims,
    /// which [`apply_rotary`] passes through.
    pub fn none() -> Result<Self> {
        Ok(Rotary {
            inv_freq: Tensor::zeros([0], DType::F32)?,
            long: None,
            attention_scaling: 1.0,
            rotary_dim: 0,
        })
    }

    /// RoPE over the first `partial_rotary_factor * head_dim` dims of each head.
    pub fn new(params: &RopeParams, head_dim: usize) -> Result<Self> {
        let dim = (head_dim as f64 * params.partial_rotary_factor) as usize;
        if dim % 2 == 1 && !params.odd_rounds_up {
            // (transformers' frequencies then cover dim + 1 dims and its rotation broadcasts them
            // over the wrong ones.)
            return Err(Error::Config(format!(
                "RoPE would rotate {dim} of each head's {head_dim} dims (partial_rotary_factor {}): it rotates \
                 pairs of dims, an odd count is not supported",
                params.partial_rotary_factor
            )));
        }
        let base = params.theta as f32;
        // As transformers: base^(i / dim) in float32 for even i < dim.
        let exponents: Vec<f32> = (0..dim).step_by(2).map(|i| i as f32 / dim as f32).collect();
        let pos_freqs: Vec<f32> = exponents.iter().map(|e| base.powf(*e)).collect();
        let mut inv: Vec<f32> = pos_freqs.iter().map(|p| 1.0 / p).collect();
        let n = inv.len();
        let mut attention_scaling = 1.0;
        let mut long = None;
        match &params.scaling {
            RopeScaling::Default => {}
            RopeScaling::Proportional { factor, share } => {
                // (`int(share * head_dim // 2)` angles turn; `dim` is the whole head here.)
                let turning = (share * head_dim as f64 / 2.0).floor() as usize;
                for (j, f) in inv.iter_mut().enumerate() {
                    *f = if j < turning { *f / *factor as f32 } else { 0.0 };
                }
            }
            RopeScaling::Linear { factor } => inv.iter_mut().for_each(|f| *f /= *factor as f32),
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
            RopeScaling::Dynamic { factor, max_position_embeddings } => {
                long = Some(LongSequences::Ntk {
                    base: params.theta,
                    factor: *factor,
                    max_positions: *max_position_embeddings as i64,
                    exponents: Tensor::from_vec(exponents, [n])?,
                    dim,
                });
            }
            RopeScaling::Yarn {
                factor,
                original_max_position_embeddings,
                beta_fast,
                beta_slow,
                truncate,
                attention_factor,
            } => {
                inv = yarn(
                    &pos_freqs,
                    *factor,
                    params.theta,
                    *original_max_position_embeddings,
                    (*beta_fast, *beta_slow),
                    *truncate,
                );
                attention_scaling = *attention_factor;
            }
            RopeScaling::LongRope {
                short_factor,
                long_factor,
                original_max_position_embeddings,
                attention_factor,
                mscales,
            } => {
                let divided = |factors: &[f64]| -> Result<Vec<f32>> {
                    if factors.len() != n {
                        return Err(Error::Config(format!(
                            "rope scaling \"longrope\": the factor lists need {n} entries (rotary dim {dim} / 2), got {}",
                            factors.len()
                        )));
                    }
                    Ok(factors.iter().zip(&pos_freqs).map(|(f, p)| 1.0 / (*f as f32 * p)).collect())
                };
                inv = divided(short_factor)?;
                let threshold = *original_max_position_embeddings as i64;
                (long, attention_scaling) = match *mscales {
                    Some((short, scaling)) => (Some(LongSequences::Mscale { scaling, threshold }), short),
                    None => (
                        Some(LongSequences::Switch {
                            inv_freq: Tensor::from_vec(divided(long_factor)?, [n])?,
                            threshold,
                        }),
                        *attention_factor,
                    ),
                };
            }
        }
        // (An odd `dim` that rounds up rotates the `2 · n` dims its frequencies cover.)
        Ok(Rotary { inv_freq: Tensor::from_vec(inv, [n])?, long, attention_scaling, rotary_dim: 2 * n })
    }

    /// These plain frequencies replaced by a checkpoint's stored `inv_freq` (as a model that keeps
    /// them as a persistent buffer reads them back: rounded to the checkpoint's dtype).
    pub fn with_inv_freq(self, inv_freq: &Tensor) -> Result<Self> {
        let n = self.inv_freq.dims()[0];
        if inv_freq.dims() != [n] || self.long.is_some() {
            return Err(Error::Weight(format!(
                "rotary inv_freq of shape {:?} does not replace {n} plain frequencies",
                inv_freq.dims()
            )));
        }
        let inv_freq = inv_freq.to_dtype(DType::F32)?.to(self.inv_freq.device())?;
        Ok(Rotary { inv_freq, ..self })
    }

    /// The same frequencies on `device` (where the positions given to [`Rotary::cos_sin`] live).
    pub fn to_device(self, device: Device) -> Result<Self> {
        let long = match self.long {
            Some(LongSequences::Switch { inv_freq, threshold }) => {
                Some(LongSequences::Switch { inv_freq: inv_freq.to(device)?, threshold })
            }
            Some(mscale @ LongSequences::Mscale { .. }) => Some(mscale),
            Some(LongSequences::Ntk { base, factor, max_positions, exponents, dim }) => {
                Some(LongSequences::Ntk {
                    base,
                    factor,
                    max_positions,
                    exponents: exponents.to(device)?,
                    dim,
                })
            }
            None => None,
        };
        Ok(Rotary { inv_freq: self.inv_freq.to(device)?, long, ..self })
    }

    /// The inverse frequencies for a forward at `position_ids`.
    fn inv_freq(&self, position_ids: &Tensor) -> Result<Tensor> {
        let Some(long) = &self.long else { return Ok(self.inv_freq.clone()) };
        if matches!(long, LongSequences::Mscale { .. }) {
            return Ok(self.inv_freq.clone());
        }
        if position_ids.numel() == 0 {
            return Ok(self.inv_freq.clone());
        }
        let len = position_ids.max()?.add(1)?;
        Ok(match long {
            LongSequences::Switch { inv_freq, threshold } => {
                Tensor::where_cond(&len.gt(*threshold)?, inv_freq, &self.inv_freq)?
            }
            LongSequences::Mscale { .. } => self.inv_freq.clone(),
            LongSequences::Ntk { base, factor, max_positions, exponents, dim } => {
                // In float32 from the integer length, as transformers' tensor arithmetic.
                let stretch =
                    len.maximum(*max_positions)?.mul(*factor)?.div(*max_positions)?.sub(factor - 1.0)?;
                let grown = stretch.pow(*dim as f64 / (*dim as f64 - 2.0))?.mul(*base)?;
                let inv = grown.pow(exponents)?.reciprocal()?;
                Tensor::where_cond(&len.gt(*max_positions)?, &inv, &self.inv_freq)?
            }
        })
    }

    /// `(cos, sin)` `[batch, seq, rotary_dim]` in `dtype` for int64 `position_ids` `[batch, seq]`.
    pub fn cos_sin(&self, position_ids: &Tensor, dtype: DType) -> Result<(Tensor, Tensor)> {
        let inv_freq = self.inv_freq(position_ids)?;
        let freqs = position_ids.to_dtype(DType::F32)?.unsqueeze(-1)?.mul(&inv_freq)?;
        self.cos_sin_of(freqs, position_ids, dtype)
    }

    /// `(cos, sin)` `[batch, seq, rotary_dim]` in `dtype` for the three position streams
    /// `position_ids` `[3, batch, seq]` (temporal, height, width) of a multimodal RoPE: each
    /// frequency turns by the position of the stream `streams` gives it (transformers' Qwen2-VL
    /// and Qwen3-VL rotary embeddings: the angles are each stream's, selected, not mixed).
    pub fn cos_sin_multimodal(
        &self,
        position_ids: &Tensor,
        streams: &MultimodalRope,
        dtype: DType,
    ) -> Result<(Tensor, Tensor)> {
        let inv_freq = self.inv_freq(position_ids)?;
        let half = self.inv_freq.dims()[0];
        let picks = Tensor::from_vec(streams.picks(half), [3, 1, 1, half])?.to(position_ids.device())?;
        // (Ones and zeros: the sum over the streams is the picked stream's angle exactly.)
        let freqs = position_ids.to_dtype(DType::F32)?.unsqueeze(-1)?.mul(&inv_freq)?;
        let freqs = freqs.mul(&picks)?.sum(0, false)?;
        self.cos_sin_of(freqs, position_ids, dtype)
    }

    /// `(cos, sin)` of the angles `freqs` `[batch, seq, rotary_dim / 2]` (each pair's angle, used
    /// for both halves), scaled as the configuration says.
    fn cos_sin_of(&self, freqs: Tensor, position_ids: &Tensor, dtype: DType) -> Result<(Tensor, Tensor)> {
        let emb = Tensor::cat(&[&freqs, &freqs], -1)?;
        let (mut cos, mut sin) = (emb.cos()?, emb.sin()?);
        if let Some(LongSequences::Mscale { scaling, threshold }) = &self.long {
            // The short length's scaling, or `scaling` once `max(position_ids) + 1` passes
            // `threshold` (computed where the positions live, without reading them back).
            let long = if position_ids.numel() == 0 {
                Tensor::zeros([], (DType::F32, position_ids.device()))?
            } else {
                position_ids.max()?.add(1)?.gt(*threshold)?.to_dtype(DType::F32)?
            };
            // (long · l + (1 − long) · s: either factor exact in float32.)
            let short = long.neg()?.add(1.0)?.mul(self.attention_scaling)?;
            let scale = long.mul(*scaling)?.add(&short)?;
            cos = cos.mul(&scale)?;
            sin = sin.mul(&scale)?;
        } else if self.attention_scaling != 1.0 {
            cos = cos.mul(self.attention_scaling)?;
            sin = sin.mul(self.attention_scaling)?;
        }
        Ok((cos.to_dtype(dtype)?, sin.to_dtype(dtype)?))
    }

    /// Whether the rotation depends on a forward's length, `max(position_ids) + 1` (LongRoPE,
    /// dynamic NTK, PhiMoE's mscales).
    pub fn reads_length(&self) -> bool {
        self.long.is_some()
    }

    /// The number of rotated dims per head.
    pub fn rotary_dim(&self) -> usize {
        self.rotary_dim
    }
}

/// YaRN's frequencies (transformers' `_compute_yarn_parameters`): for `pos_freqs` = base^(i/dim),
/// a blend of `1 / pos_freqs` (kept for dims that rotate more than `beta_fast` times over the
/// original context) and `1 / (factor * pos_freqs)` (for fewer than `beta_slow` rotations), linear
/// in between; float32 elementwise as in transformers, the bounds in f64.
fn yarn(
    pos_freqs: &[f32],
    factor: f64,
    base: f64,
    original: f64,
    (beta_fast, beta_slow): (f64, f64),
    truncate: bool,
) -> Vec<f32> {
    let dim = (pos_freqs.len() * 2) as f64;
    let correction_dim =
        |rotations: f64| (dim * (original / (rotations * 2.0 * PI)).ln()) / (2.0 * base.ln());
    let (mut low, mut high) = (correction_dim(beta_fast), correction_dim(beta_slow));
    if truncate {
        (low, high) = (low.floor(), high.ceil());
    }
    let (low, mut high) = (low.max(0.0), high.min(dim - 1.0));
    if low == high {
        high += 0.001;
    }
    let factor = factor as f32;
    pos_freqs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ramp = ((i as f32 - low as f32) / (high as f32 - low as f32)).clamp(0.0, 1.0);
            let extrapolation = 1.0 - ramp;
            let interpolated = 1.0 / (factor * p);
            interpolated * (1.0 - extrapolation) + (1.0 / p) * extrapolation
        })
        .collect()
}

/// `[x1, x2] -> [-x2, x1]` over the last dim.
fn rotate_half(x: &Tensor) -> Result<Tensor> {
    let halves = x.chunk(2, -1)?;
    Ok(Tensor::cat(&[&halves[1].neg()?, &halves[0]], -1)?)
}

/// `x * cos + rotate_half(x) * sin` for `x` `[batch, heads, seq, head_dim]` and `cos`/`sin`
/// `[batch, seq, rotary_dim]`; dims past `rotary_dim` pass through.
pub fn apply_rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let rot = *cos.dims().last().unwrap_or(&0);
    if rot == 0 {
        // No rotation ([`Rotary::none`]: learned positions).
        return Ok(x.clone());
    }
    let (cos, sin) = (cos.unsqueeze(1)?, sin.unsqueeze(1)?);
    let head = *x.dims().last().unwrap_or(&0);
    if rot == head {
        return Ok(x.mul(&cos)?.add(&rotate_half(x)?.mul(&sin)?)?);
    }
    let (x_rot, x_pass) = (x.narrow(-1, 0, rot)?, x.narrow(-1, rot as isize, head - rot)?);
    let rotated = x_rot.mul(&cos)?.add(&rotate_half(&x_rot)?.mul(&sin)?)?;
    Ok(Tensor::cat(&[&rotated, &x_pass], -1)?)
}

/// Reorders the leading dim of `t` (a q/k projection's `[heads * head_dim, ...]` rows or bias, or a
/// per-head norm's `[heads, head_dim]`) so that the half-split rotation of the first `rotary_dim`
/// dims of each head ([`apply_rotary`]) rotates what an interleaved one (GPT-J's and Cohere's
/// `rotate_every_two`: dims `2i` and `2i + 1` together) would: within each head, dims
/// `0, 2, 4, ...` then `1, 3, 5, ...` of the rotated part, the rest as it was. Applied to both q and
/// k, it leaves every attention score as it was.
pub fn halves_from_interleaved(
    t: &Tensor,
    heads: usize,
    head_dim: usize,
    rotary_dim: usize,
) -> std::result::Result<Tensor, String> {
    let dims = t.dims().to_vec();
    // (A corrupt config's head count or width may overflow: no tensor has that many rows.)
    let Some(width) = heads.checked_mul(head_dim) else {
        return Err(format!("{heads} heads of {head_dim} rows is too many for shape {dims:?}"));
    };
    let per_head_norm = dims.len() == 2 && dims[0] == heads && dims[1] == head_dim;
    let rows = if per_head_norm { width } else { dims.first().copied().unwrap_or(0) };
    if rows != width || !rotary_dim.is_multiple_of(2) || rotary_dim > head_dim {
        return Err(format!(
            "expected {heads} heads of {head_dim} rows (rotating {rotary_dim}), got shape {dims:?}"
        ));
    }
    let rest: usize = if per_head_norm { 1 } else { dims[1..].iter().product() };
    let out = (|| -> oxtorch_tensor::Result<Tensor> {
        let x = t.reshape([heads, head_dim, rest])?;
        let rot = x.narrow(1, 0, rotary_dim)?.reshape([heads, rotary_dim / 2, 2, rest])?.transpose(1, 2)?;
        let rot = rot.contiguous()?.reshape([heads, rotary_dim, rest])?;
        let pass = x.narrow(1, rotary_dim as isize, head_dim - rotary_dim)?;
        Tensor::cat(&[&rot, &pass], 1)?.reshape(dims.clone())
    })();
    out.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An odd number of rotated dims (a partial share of an odd-sized part of the head) is refused.
    #[test]
    fn an_odd_rotary_width_is_an_error() {
        let params = |p: f64| RopeParams {
            theta: 10000.0,
            scaling: RopeScaling::Default,
            partial_rotary_factor: p,
            odd_rounds_up: false,
        };
        assert_eq!(Rotary::new(&params(0.5), 16).unwrap().rotary_dim(), 8);
        let err = Rotary::new(&params(0.25), 12).unwrap_err().to_string();
        assert!(err.contains("RoPE would rotate 3 of each head's 12 dims"), "{err}");
        assert!(Rotary::new(&params(1.0), 7).is_err());
        // (Laguna's and MiMo-V2-Flash's: 3 dims take the 4 their two frequencies cover.)
        let rounding = RopeParams { odd_rounds_up: true, ..params(0.25) };
        assert_eq!(Rotary::new(&rounding, 12).unwrap().rotary_dim(), 4);
    }
}
