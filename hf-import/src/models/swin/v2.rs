//! Swin Transformer V2's attention (model type `swinv2`: microsoft/swinv2-tiny-patch4-window8-256):
//! cosine similarity between queries and keys times a learned, clamped per-head logit scale, and a
//! continuous position bias — an MLP over the log-spaced offsets between the window's positions,
//! squashed to `16 · sigmoid` — in place of Swin's table. (Its blocks norm each branch's output
//! before the residual, and its patch merging norms after the reduction: see [`super`].)

use oxtorch_tensor::{DType, Tensor};

use super::windows;
use crate::error::Result;
use crate::layers::Linear;
use crate::weights::Vars;

/// `log(1 / 0.01)`, the logit scale's ceiling.
const MAX_LOGIT_SCALE: f64 = 4.605_170_185_988_092;

/// One block's cosine attention parts (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct CosineAttention {
    /// `continuous_position_bias_mlp.0` (2 → 512, bias) and `.2` (512 → heads, no bias)
    mlp: (Linear, Linear),
    /// the log-spaced offsets `[(2·window − 1)², 2]`
    coords: Tensor,
    /// each pair of the window's positions' row of the offsets
    index: Tensor,
    /// `logit_scale` `[heads, 1, 1]`
    logit_scale: Tensor,
}

impl CosineAttention {
    /// The parts under a block's `attention.self` for a `window` (its window after transformers
    /// clamps it to the stage's configured map) pretrained at `pretrained` (0: none).
    pub(super) fn load(att: &Vars<'_>, heads: usize, window: usize, pretrained: usize) -> Result<Self> {
        let cpb = att.pp("continuous_position_bias_mlp");
        let logit_scale = att.get("logit_scale", &[heads, 1, 1])?;
        let device = logit_scale.device();
        let index = windows::relative_index(window);
        let n = index.len();
        Ok(CosineAttention {
            mlp: (Linear::load(&cpb.pp(0), 2, 512, true)?, Linear::load(&cpb.pp(2), 512, heads, false)?),
            coords: coords_table(window, pretrained)?.to_dtype(logit_scale.dtype())?.to(device)?,
            index: Tensor::from_vec(index, [n])?.to(device)?,
            logit_scale,
        })
    }

    /// The scores `[windows, heads, area, area]` of queries `q` and keys `k` `[windows, heads, area,
    /// head_dim]`: cosine similarities times the clamped scale, plus the position bias.
    pub(super) fn scores(&self, q: &Tensor, k: &Tensor) -> Result<Tensor> {
        let unit = |x: &Tensor| -> Result<Tensor> {
            let norm = x.square()?.sum([-1], true)?.sqrt()?.clamp_min(1e-12)?;
            Ok(x.div(&norm)?)
        };
        let scale = self.logit_scale.clamp(None, Some(MAX_LOGIT_SCALE.into()))?.exp()?;
        let scores = unit(q)?.matmul(&unit(k)?.transpose(-2, -1)?)?.mul(&scale)?;
        let heads = self.logit_scale.dims()[0];
        let area = q.dims()[2];
        let table = self.mlp.1.forward(&self.mlp.0.forward(&self.coords)?.relu()?)?;
        let bias = table.index_select(0, &self.index)?.reshape([area, area, heads])?.permute([2, 0, 1])?;
        Ok(scores.add(&bias.sigmoid()?.mul(16.0)?.unsqueeze(0)?)?)
    }
}

/// The offsets `(dy, dx)` between a `window`'s positions, `[(2·window − 1)², 2]` row-major,
/// scaled to ±8 over the pretrained window (or this one) and log-spaced:
/// `sign(x) · log2(|x| + 1) / 3`, in float32 as transformers computes them.
fn coords_table(window: usize, pretrained: usize) -> Result<Tensor> {
    let span = 2 * window - 1;
    let divisor = match (pretrained, window) {
        (p, _) if p > 0 => Some((p - 1) as f32),
        (_, w) if w > 1 => Some((w - 1) as f32),
        _ => None,
    };
    let spaced = |offset: i64| {
        let mut x = offset as f32;
        if let Some(d) = divisor {
            x /= d;
        }
        x *= 8.0;
        let sign = if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        };
        sign * (x.abs() + 1.0).log2() / 3.0
    };
    let mut table = Vec::with_capacity(span * span * 2);
    for i in 0..span {
        for j in 0..span {
            table.push(spaced(i as i64 - (window as i64 - 1)));
            table.push(spaced(j as i64 - (window as i64 - 1)));
        }
    }
    Ok(Tensor::from_vec(table, [span * span, 2])?.to_dtype(DType::F32)?)
}

#[cfg(test)]
mod tests {
    use super::coords_table;

    /// A window of 3: offsets −2..2 scaled to ±8, log-spaced: ±8 → ±log2(9)/3, ±4 → ±log2(5)/3.
    #[test]
    fn offsets_are_log_spaced() {
        let t = coords_table(3, 0).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(t.len(), 25 * 2);
        let (far, near) = (9f32.log2() / 3.0, 5f32.log2() / 3.0);
        assert!((t[0] + far).abs() < 1e-6 && (t[1] + far).abs() < 1e-6);
        assert!((t[2] + far).abs() < 1e-6 && (t[3] + near).abs() < 1e-6);
        assert_eq!((t[24], t[25]), (0.0, 0.0));
    }
}
