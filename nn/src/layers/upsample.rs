//! `Upsample`.

use oxtorch_tensor::{Result, Tensor};

use crate::module::Forward;

/// torch's `nn.Upsample(size=None, scale_factor=None, mode="nearest", align_corners=None)`:
/// `interpolate` with stored arguments (exactly one of `size` and `scale_factor`).
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct Upsample {
    /// the output's spatial size (one value broadcasts)
    pub size: Option<Vec<usize>>,
    /// the factor per spatial dim (one value broadcasts)
    pub scale_factor: Option<Vec<f64>>,
    /// `"nearest"`, `"linear"`, `"bilinear"`, `"bicubic"`, `"trilinear"`, ...
    pub mode: String,
    /// for the linear modes: align the corner pixels' centres
    pub align_corners: Option<bool>,
}

impl Upsample {
    /// Upsampling to a fixed `size`.
    pub fn with_size(size: &[usize], mode: &str, align_corners: Option<bool>) -> Self {
        Upsample { size: Some(size.to_vec()), scale_factor: None, mode: mode.into(), align_corners }
    }

    /// Upsampling by `scale_factor`.
    pub fn with_scale_factor(scale_factor: &[f64], mode: &str, align_corners: Option<bool>) -> Self {
        Upsample { size: None, scale_factor: Some(scale_factor.to_vec()), mode: mode.into(), align_corners }
    }
}

/// torch's `Upsample.extra_repr`: `scale_factor=2.0, mode='nearest'` (a float, or a tuple of
/// floats), else `size=4` / `size=(4, 5)` (`size=None` when neither is set).
pub(crate) fn upsample_repr(size: Option<&[usize]>, scale_factor: Option<&[f64]>, mode: &str) -> String {
    let info = match (scale_factor, size) {
        (Some(s), _) => {
            let floats: Vec<String> = s.iter().map(|&f| crate::module::py_float(f)).collect();
            format!("scale_factor={}", super::pool::py_size(&floats))
        }
        (None, Some(s)) => format!("size={}", super::pool::py_size(s)),
        (None, None) => "size=None".to_string(),
    };
    format!("{info}, mode='{mode}'")
}

impl Upsample {
    /// torch's `extra_repr`: `scale_factor=2.0, mode='nearest'`.
    fn extra_repr_text(&self) -> String {
        upsample_repr(self.size.as_deref(), self.scale_factor.as_deref(), &self.mode)
    }
}

impl Forward for Upsample {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let n = x.rank().saturating_sub(2);
        let size = self.size.as_ref().map(|s| if s.len() == 1 { vec![s[0]; n] } else { s.clone() });
        let scale = self.scale_factor.as_ref().map(|s| if s.len() == 1 { vec![s[0]; n] } else { s.clone() });
        x.interpolate(size.as_deref(), scale.as_deref(), &self.mode, self.align_corners)
    }
}
