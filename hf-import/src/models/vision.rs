//! What the image towers share: `image_size` / `patch_size` read as transformers reads them, the
//! patch embedding (a convolution whose stride is its kernel, computed as one matrix product over
//! the unfolded patches), and the checks on `pixel_values`.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Vars;

/// `key` of `cfg` as `(height, width)`: one number for both, or a `[height, width]` pair.
pub(crate) fn size_pair(cfg: &Config, key: &str, default: usize) -> Result<(usize, usize)> {
    let bad = || Error::Config(format!("{key} must be a positive integer or a [height, width] pair"));
    let positive = |v: &Value| v.as_u64().filter(|&n| n > 0).map(|n| n as usize);
    match cfg.get(key) {
        None | Some(Value::Null) => Ok((default, default)),
        Some(Value::Array(items)) => match items.as_slice() {
            [h, w] => Ok((positive(h).ok_or_else(bad)?, positive(w).ok_or_else(bad)?)),
            _ => Err(bad()),
        },
        Some(v) => positive(v).map(|n| (n, n)).ok_or_else(bad),
    }
}

/// `nn.Conv2d(channels, hidden, kernel_size=patch, stride=patch)` over an image of `image` pixels:
/// each patch's pixels, flattened in the weight's `(channel, row, column)` order, times the
/// weight viewed as `[hidden, channels · patch rows · patch columns]`.
#[derive(Debug, Clone)]
pub(crate) struct PatchEmbedding {
    /// `[hidden, channels · patch.0 · patch.1]`
    weight: Tensor,
    /// `[hidden]`
    bias: Option<Tensor>,
    channels: usize,
    patch: (usize, usize),
    image: (usize, usize),
    /// images of any size are taken (DINOv2 interpolates its positions), not just `image`
    any_size: bool,
}

impl PatchEmbedding {
    /// `vars.weight` `[hidden, channels, patch.0, patch.1]` and, when `bias`, `vars.bias`.
    pub(crate) fn load(
        vars: &Vars<'_>,
        hidden: usize,
        channels: usize,
        patch: (usize, usize),
        image: (usize, usize),
        bias: bool,
    ) -> Result<Self> {
        if image.0 < patch.0 || image.1 < patch.1 {
            return Err(Error::Config(format!(
                "image_size {image:?} is smaller than patch_size {patch:?}: the model has no patches"
            )));
        }
        let weight = vars.get("weight", &[hidden, channels, patch.0, patch.1])?;
        let weight = weight.reshape([hidden, channels * patch.0 * patch.1])?;
        let bias = if bias { Some(vars.get("bias", &[hidden])?) } else { None };
        Ok(PatchEmbedding { weight, bias, channels, patch, image, any_size: false })
    }

    /// This embedding taking images of any size (at least one patch), as DINOv2's does.
    pub(crate) fn any_size(self) -> Self {
        PatchEmbedding { any_size: true, ..self }
    }

    /// `(height, width)` of a patch.
    pub(crate) fn patch(&self) -> (usize, usize) {
        self.patch
    }

    /// Patches per image: `(image rows / patch rows) · (image columns / patch columns)` (saturated:
    /// a corrupt config's count then matches no checkpoint's table).
    pub(crate) fn num_patches(&self) -> usize {
        (self.image.0 / self.patch.0).saturating_mul(self.image.1 / self.patch.1)
    }

    /// The weight's dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        self.weight.dtype()
    }

    /// The weight's device.
    pub(crate) fn device(&self) -> oxtorch_tensor::Device {
        self.weight.device()
    }

    /// `pixels` `[batch, channels, height, width]` (the configured size, as transformers requires
    /// without `interpolate_pos_encoding`) → `[batch, patches, hidden]`, patches row by row.
    pub(crate) fn forward(&self, pixels: &Tensor) -> Result<Tensor> {
        let &[b, c, h, w] = pixels.dims() else {
            return Err(Error::Input(format!(
                "input 'pixel_values' must be [batch, channels, height, width], got {:?}",
                pixels.dims()
            )));
        };
        if c != self.channels {
            return Err(Error::Input(format!(
                "input 'pixel_values' has {c} channels, but the model's configuration has {} (shape {:?})",
                self.channels,
                pixels.dims()
            )));
        }
        if self.any_size && (h < self.patch.0 || w < self.patch.1) {
            return Err(Error::Input(format!(
                "input image size ({h}*{w}) is smaller than a patch ({}*{})",
                self.patch.0, self.patch.1
            )));
        }
        if !self.any_size && (h, w) != self.image {
            return Err(Error::Input(format!(
                "input image size ({h}*{w}) doesn't match model ({}*{})",
                self.image.0, self.image.1
            )));
        }
        let (ph, pw) = self.patch;
        let (rows, cols) = (h / ph, w / pw);
        // A strided convolution leaves out the pixels past the last whole patch.
        let x = pixels.narrow(2, 0, rows * ph)?.narrow(3, 0, cols * pw)?;
        let x = x.reshape([b, c, rows, ph, cols, pw])?.permute([0, 2, 4, 1, 3, 5])?;
        let x = x.reshape([b, rows * cols, c * ph * pw])?;
        Ok(x.linear(&self.weight, self.bias.as_ref())?)
    }
}

/// The one input of an image tower, `pixel_values` (float, `[batch, channels, height, width]`),
/// in `dtype`; any other input is an error naming the inputs the model takes.
pub(crate) fn pixel_values(inputs: &BTreeMap<String, Tensor>, dtype: DType) -> Result<Tensor> {
    if let Some(name) = inputs.keys().find(|k| k.as_str() != "pixel_values") {
        return Err(Error::Input(format!("unexpected input '{name}' (this model takes pixel_values)")));
    }
    let pixels =
        inputs.get("pixel_values").ok_or_else(|| Error::Input("missing input 'pixel_values'".into()))?;
    checked_pixels(pixels, dtype)
}

/// `pixels` checked as `pixel_values` (a float tensor `[batch, channels, height, width]`, batch > 0)
/// and cast to `dtype`.
pub(crate) fn checked_pixels(pixels: &Tensor, dtype: DType) -> Result<Tensor> {
    if !pixels.dtype().is_float() {
        return Err(Error::Input(format!(
            "input 'pixel_values' must be a floating-point tensor, got {:?}",
            pixels.dtype()
        )));
    }
    if pixels.rank() != 4 || pixels.dims()[0] == 0 {
        return Err(Error::Input(format!(
            "input 'pixel_values' must be [batch, channels, height, width] with batch > 0, got {:?}",
            pixels.dims()
        )));
    }
    Ok(pixels.to_dtype(dtype)?)
}

/// [`pixel_values`] on `device`, cast to `dtype`, refused unless they have the model's `channels`
/// (`num_channels`): the convolutional image models, which take any image size.
pub(crate) fn pixels_of(
    inputs: &BTreeMap<String, Tensor>,
    dtype: DType,
    device: Device,
    channels: usize,
) -> Result<Tensor> {
    let x = pixel_values(inputs, dtype)?.to(device)?;
    if x.dims()[1] != channels {
        return Err(Error::Input(format!(
            "input 'pixel_values' has {} channels, but the model takes {channels} (num_channels)",
            x.dims()[1]
        )));
    }
    Ok(x)
}

/// The outputs of a convolutional image model: with a `classifier` (`Some`; inside, none for 0
/// labels) its `logits` of the flattened `pooler_output`, else `last_hidden_state` and
/// `pooler_output`; then `hidden_states.*`.
pub(crate) fn pooled_outputs(
    classifier: Option<&Option<Linear>>,
    last_hidden_state: Tensor,
    pooler_output: Tensor,
    hidden_states: Vec<Tensor>,
) -> Result<Vec<(String, Tensor)>> {
    let mut out = Vec::new();
    match classifier {
        Some(head) => {
            let flat = pooler_output.flatten(1, -1)?;
            let logits = match head {
                Some(c) => c.forward(&flat)?,
                None => flat,
            };
            out.push(("logits".to_string(), logits));
        }
        None => {
            out.push(("last_hidden_state".to_string(), last_hidden_state));
            out.push(("pooler_output".to_string(), pooler_output));
        }
    }
    out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
    Ok(out)
}

/// `key`'s list of integers (each at least `min`; `default` where absent), with an entry for each
/// of the `n` stages that `counted_by` counts (longer lists' extra entries unread, as transformers).
pub(crate) fn per_stage(
    cfg: &Config,
    key: &str,
    default: &[usize],
    min: usize,
    (n, counted_by): (usize, &str),
) -> Result<Vec<usize>> {
    let v = cfg.usize_list_or(key, default, min)?;
    match v.len() >= n {
        true => Ok(v),
        false => Err(Error::Config(format!("{key} has {} entries for {counted_by} ({n})", v.len()))),
    }
}

/// `h` through `stages` of layers (`run` applies one), and with `output_hidden_states` the input
/// and every stage's output (a residual CNN's `hidden_states`: ResNet, RegNet, BiT).
pub(crate) fn run_stages<L>(
    mut h: Tensor,
    stages: &[Vec<L>],
    output_hidden_states: bool,
    run: impl Fn(&L, &Tensor) -> Result<Tensor>,
) -> Result<(Tensor, Vec<Tensor>)> {
    let mut hidden_states = Vec::new();
    for stage in stages {
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        for layer in stage {
            h = run(layer, &h)?;
        }
    }
    if output_hidden_states {
        hidden_states.push(h.clone());
    }
    Ok((h, hidden_states))
}
