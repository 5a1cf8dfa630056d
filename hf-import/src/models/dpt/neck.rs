//! The neck DPT and Depth Anything share: reassemble a backbone's token maps into images at four
//! scales (a 1×1 projection, then a transposed convolution up, nothing, or a strided convolution
//! down), bring each to the fusion width (a 3×3 convolution without bias), and fuse them coarse
//! to fine: each fusion layer adds the next finer map through a residual unit, runs a second
//! unit, upsamples bilinearly (corners aligned) and projects.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{BatchNorm2d, Conv2d};
use crate::weights::Vars;

/// How a reassemble layer resizes its map.
#[derive(Debug, Clone)]
enum Resize {
    /// a transposed convolution whose kernel and stride are the factor (factor > 1)
    Up { weight: Tensor, bias: Tensor, factor: usize },
    /// factor 1
    Same,
    /// a 3×3 convolution of stride `1 / factor` (factor < 1)
    Down(Conv2d),
}

/// One reassemble layer: the 1×1 projection to its neck width and the resize.
#[derive(Debug, Clone)]
pub(crate) struct Reassemble {
    projection: Conv2d,
    resize: Resize,
}

impl Reassemble {
    /// `vars.projection` (`hidden → channels`) and `vars.resize` for `factor`.
    pub(crate) fn load(vars: &Vars<'_>, hidden: usize, channels: usize, factor: f64) -> Result<Self> {
        let resize = if factor > 1.0 {
            let r = vars.pp("resize");
            // (`nn.ConvTranspose2d` takes whole kernels only.)
            if factor.fract() != 0.0 || factor > 64.0 {
                return Err(Error::Config(format!(
                    "reassemble factors above 1 must be whole numbers up to 64, got {factor}"
                )));
            }
            let f = factor as usize;
            Resize::Up {
                weight: r.get("weight", &[channels, channels, f, f])?,
                bias: r.get("bias", &[channels])?,
                factor: f,
            }
        } else if factor == 1.0 {
            Resize::Same
        } else if factor > 0.0 {
            let stride = (1.0 / factor) as usize;
            Resize::Down(Conv2d::load(&vars.pp("resize"), (channels, channels), 3, (stride, 1, 1), true)?)
        } else {
            return Err(Error::Config(format!("reassemble factors must be positive, got {factor}")));
        };
        Ok(Reassemble {
            projection: Conv2d::load(&vars.pp("projection"), (hidden, channels), 1, (1, 0, 1), true)?,
            resize,
        })
    }

    /// `x` `[batch, hidden, rows, cols]` → `[batch, channels, rows', cols']`.
    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let x = self.projection.forward(x)?;
        Ok(match &self.resize {
            Resize::Up { weight, bias, factor } => {
                x.conv_transpose2d(weight, Some(bias), &[*factor], &[0], &[0], 1, &[1])?
            }
            Resize::Same => x,
            Resize::Down(conv) => conv.forward(&x)?,
        })
    }
}

/// A pre-activated residual unit: `x + conv2(relu(norm1(conv1(relu x))))` (norms optional).
#[derive(Debug, Clone)]
struct ResidualUnit {
    conv1: Conv2d,
    norm1: Option<BatchNorm2d>,
    conv2: Conv2d,
    norm2: Option<BatchNorm2d>,
}

impl ResidualUnit {
    fn load(vars: &Vars<'_>, width: usize, batch_norm: bool, bias: bool) -> Result<Self> {
        let conv =
            |i: usize| Conv2d::load(&vars.pp(format!("convolution{i}")), (width, width), 3, (1, 1, 1), bias);
        let norm = |i: usize| -> Result<Option<BatchNorm2d>> {
            match batch_norm {
                true => Ok(Some(BatchNorm2d::load(&vars.pp(format!("batch_norm{i}")), width, 1e-5)?)),
                false => Ok(None),
            }
        };
        Ok(ResidualUnit { conv1: conv(1)?, norm1: norm(1)?, conv2: conv(2)?, norm2: norm(2)? })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = self.conv1.forward(&x.relu()?)?;
        if let Some(n) = &self.norm1 {
            h = n.forward(&h)?;
        }
        h = self.conv2.forward(&h.relu()?)?;
        if let Some(n) = &self.norm2 {
            h = n.forward(&h)?;
        }
        Ok(h.add(x)?)
    }
}

/// One fusion layer.
#[derive(Debug, Clone)]
struct FusionLayer {
    projection: Conv2d,
    residual1: ResidualUnit,
    residual2: ResidualUnit,
}

impl FusionLayer {
    /// `x` (the coarser fused map, or the coarsest map), `skip` (this scale's map), upsampled to
    /// `size` (else twice the size).
    fn forward(&self, x: &Tensor, skip: Option<&Tensor>, size: Option<[usize; 2]>) -> Result<Tensor> {
        let mut h = x.clone();
        if let Some(skip) = skip {
            let skip = match skip.dims()[2..] == x.dims()[2..] {
                true => skip.clone(),
                false => skip.interpolate(Some(&x.dims()[2..]), None, "bilinear", Some(false))?,
            };
            h = h.add(&self.residual1.forward(&skip)?)?;
        }
        h = self.residual2.forward(&h)?;
        let size = size.unwrap_or([h.dims()[2] * 2, h.dims()[3] * 2]);
        let h = h.interpolate(Some(&size), None, "bilinear", Some(true))?;
        self.projection.forward(&h)
    }
}

/// How the fusion layers upsample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upsample {
    /// always twice the size (DPT)
    Double,
    /// to the next finer map's size, the last twice its size (Depth Anything)
    ToNext,
}

/// The neck after reassembly: the width convolutions and the fusion stage.
#[derive(Debug, Clone)]
pub(crate) struct Neck {
    convs: Vec<Conv2d>,
    fusion: Vec<FusionLayer>,
    upsample: Upsample,
}

/// How the fusion's residual units are built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FusionStyle {
    /// `use_batch_norm_in_fusion_residual`
    pub batch_norm: bool,
    /// whether the units' convolutions carry biases
    pub bias: bool,
    pub upsample: Upsample,
}

impl Neck {
    /// `vars.convs.i` and `vars.fusion_stage.layers.i` for `sizes` (`neck_hidden_sizes`) fused at
    /// `width` (`fusion_hidden_size`).
    pub(crate) fn load(vars: &Vars<'_>, sizes: &[usize], width: usize, style: FusionStyle) -> Result<Self> {
        let convs = sizes
            .iter()
            .enumerate()
            .map(|(i, &c)| Conv2d::load(&vars.pp("convs").pp(i), (c, width), 3, (1, 1, 1), false))
            .collect::<Result<Vec<_>>>()?;
        let fusion = (0..sizes.len())
            .map(|i| {
                let l = vars.pp("fusion_stage.layers").pp(i);
                Ok(FusionLayer {
                    projection: Conv2d::load(&l.pp("projection"), (width, width), 1, (1, 0, 1), true)?,
                    residual1: ResidualUnit::load(
                        &l.pp("residual_layer1"),
                        width,
                        style.batch_norm,
                        style.bias,
                    )?,
                    residual2: ResidualUnit::load(
                        &l.pp("residual_layer2"),
                        width,
                        style.batch_norm,
                        style.bias,
                    )?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Neck { convs, fusion, upsample: style.upsample })
    }

    /// The reassembled `maps` (finest first) → the fused maps, coarsest first.
    pub(crate) fn forward(&self, maps: &[Tensor]) -> Result<Vec<Tensor>> {
        let features = maps.iter().zip(&self.convs).map(|(m, c)| c.forward(m)).collect::<Result<Vec<_>>>()?;
        let mut fused: Vec<Tensor> = Vec::with_capacity(features.len());
        for (i, (feature, layer)) in features.iter().rev().zip(&self.fusion).enumerate() {
            // (Depth Anything upsamples to the next finer map; the finest to twice its size.)
            let size = match (self.upsample, i + 1 < features.len()) {
                (Upsample::ToNext, true) => {
                    let next = &features[features.len() - 2 - i];
                    Some([next.dims()[2], next.dims()[3]])
                }
                _ => None,
            };
            let out = match fused.last() {
                None => layer.forward(feature, None, size)?,
                Some(prev) => layer.forward(prev, Some(feature), size)?,
            };
            fused.push(out);
        }
        Ok(fused)
    }
}

/// `key` as a list of positive numbers (`reassemble_factors`), `default` when absent.
pub(crate) fn factors(cfg: &Config, key: &str, default: &[f64]) -> Result<Vec<f64>> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(default.to_vec()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_f64()
                    .filter(|f| f.is_finite() && *f > 0.0)
                    .ok_or_else(|| Error::Config(format!("{key} must hold positive numbers, got {v}")))
            })
            .collect(),
        Some(v) => Err(Error::Config(format!("{key} must be a list of numbers, got {v}"))),
    }
}

/// The neck's map of tokens `x` `[batch, 1 + rows · cols, hidden]` (the class token first,
/// dropped): `[batch, hidden, rows, cols]`.
pub(crate) fn token_map(x: &Tensor, rows: usize, cols: usize) -> Result<Tensor> {
    let (b, n, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    if n != rows * cols + 1 {
        return Err(Error::Input(format!(
            "the backbone gave {} patch tokens for a {rows}×{cols} grid",
            n.saturating_sub(1)
        )));
    }
    Ok(x.narrow(1, 1, rows * cols)?.reshape([b, rows, cols, h])?.permute([0, 3, 1, 2])?)
}
