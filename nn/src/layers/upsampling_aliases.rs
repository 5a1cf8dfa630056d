//! `Softmax2d`, `UpsamplingNearest2d` and `UpsamplingBilinear2d` (torch's deprecated
//! `Upsample` aliases: nearest, and bilinear with `align_corners=True`).

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module};

/// torch's `nn.Softmax2d()`: softmax over the channels (dim -3) of a `[N, C, H, W]` or
/// `[C, H, W]` input.
#[derive(Clone, Debug, Default)]
pub struct Softmax2d;

impl Forward for Softmax2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if !matches!(x.rank(), 3 | 4) {
            return Err(Error::msg(format!(
                "Softmax2d: expected input to be 3D or 4D, got {}D instead",
                x.rank()
            )));
        }
        x.softmax(-3, None)
    }
}

impl Module for Softmax2d {
    fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
    fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        "Softmax2d"
    }
}

/// The spatial size or scale of an upsampling alias, broadcast over the input's spatial dims.
fn upsample(
    x: &Tensor,
    size: &Option<Vec<usize>>,
    scale_factor: &Option<Vec<f64>>,
    mode: &str,
    align_corners: Option<bool>,
) -> Result<Tensor> {
    let n = x.rank().saturating_sub(2);
    let size = size.as_ref().map(|s| if s.len() == 1 { vec![s[0]; n] } else { s.clone() });
    let scale = scale_factor.as_ref().map(|s| if s.len() == 1 { vec![s[0]; n] } else { s.clone() });
    x.interpolate(size.as_deref(), scale.as_deref(), mode, align_corners)
}

macro_rules! upsampling_alias {
    ($(#[$doc:meta])* $name:ident, $mode:expr, $align:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            /// the output's spatial size (one value broadcasts)
            pub size: Option<Vec<usize>>,
            /// the factor per spatial dim (one value broadcasts)
            pub scale_factor: Option<Vec<f64>>,
        }

        impl $name {
            /// Upsampling to a fixed `size`.
            pub fn with_size(size: &[usize]) -> Self {
                $name { size: Some(size.to_vec()), scale_factor: None }
            }

            /// Upsampling by `scale_factor`.
            pub fn with_scale_factor(scale_factor: &[f64]) -> Self {
                $name { size: None, scale_factor: Some(scale_factor.to_vec()) }
            }
        }

        impl Forward for $name {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                upsample(x, &self.size, &self.scale_factor, $mode, $align)
            }
        }

        impl Module for $name {
            fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
            fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
            fn type_name(&self) -> &'static str {
                stringify!($name)
            }
            fn extra_repr(&self) -> String {
                super::upsample::upsample_repr(self.size.as_deref(), self.scale_factor.as_deref(), $mode)
            }
        }
    };
}

upsampling_alias!(
    /// torch's `nn.UpsamplingNearest2d(size=None, scale_factor=None)`: `Upsample` with
    /// `mode="nearest"`.
    UpsamplingNearest2d,
    "nearest",
    None
);
upsampling_alias!(
    /// torch's `nn.UpsamplingBilinear2d(size=None, scale_factor=None)`: `Upsample` with
    /// `mode="bilinear"` and `align_corners=True`.
    UpsamplingBilinear2d,
    "bilinear",
    Some(true)
);
