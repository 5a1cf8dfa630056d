//! `LPPool1d/2d/3d`: power-average pooling modules (stateless wrappers of
//! [`crate::functional::lp_pool1d`] and its 2-d and 3-d forms).

use oxtorch_tensor::{Result, Tensor};

use crate::functional as F;
use crate::module::{Forward, Member, MemberMut, Module};

/// torch's `nn.LPPool1d/2d/3d(norm_type, kernel_size, stride=None, ceil_mode=False)`; `N` is the
/// number of spatial dims and one kernel/stride value broadcasts over them. No state-dict entries.
#[derive(Clone, Debug)]
pub struct LPPoolNd<const N: usize> {
    /// the power `p` (`inf`: max pooling of `|x|`)
    pub norm_type: f64,
    /// window size
    pub kernel_size: Vec<usize>,
    /// window step (`None`: the kernel size)
    pub stride: Option<Vec<usize>>,
    /// round the output size up instead of down
    pub ceil_mode: bool,
}

/// torch's `nn.LPPool1d` (`[N, C, L]` or `[C, L]` inputs).
pub type LPPool1d = LPPoolNd<1>;
/// torch's `nn.LPPool2d` (`[N, C, H, W]` or `[C, H, W]` inputs).
pub type LPPool2d = LPPoolNd<2>;
/// torch's `nn.LPPool3d` (`[N, C, D, H, W]` or `[C, D, H, W]` inputs).
pub type LPPool3d = LPPoolNd<3>;

impl<const N: usize> LPPoolNd<N> {
    /// A pool with torch's defaults (`stride=None`, `ceil_mode=False`).
    pub fn new(norm_type: f64, kernel_size: &[usize]) -> Self {
        LPPoolNd { norm_type, kernel_size: kernel_size.to_vec(), stride: None, ceil_mode: false }
    }

    /// A pool with every argument.
    pub fn with_options(
        norm_type: f64,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        ceil_mode: bool,
    ) -> Self {
        LPPoolNd {
            norm_type,
            kernel_size: kernel_size.to_vec(),
            stride: stride.map(<[usize]>::to_vec),
            ceil_mode,
        }
    }
}

impl<const N: usize> Forward for LPPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let stride = self.stride.as_deref();
        match N {
            1 => F::lp_pool1d(x, self.norm_type, &self.kernel_size, stride, self.ceil_mode),
            2 => F::lp_pool2d(x, self.norm_type, &self.kernel_size, stride, self.ceil_mode),
            _ => F::lp_pool3d(x, self.norm_type, &self.kernel_size, stride, self.ceil_mode),
        }
    }
}

impl<const N: usize> Module for LPPoolNd<N> {
    fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
    fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        ["LPPool1d", "LPPool2d", "LPPool3d"].get(N.wrapping_sub(1)).copied().unwrap_or("LPPoolNd")
    }
    /// torch's `extra_repr`: `norm_type=2.0, kernel_size=3, stride=None, ceil_mode=False`.
    fn extra_repr(&self) -> String {
        format!(
            "norm_type={}, kernel_size={}, stride={}, ceil_mode={}",
            crate::module::py_float(self.norm_type),
            super::pool::py_size(&self.kernel_size),
            self.stride.as_deref().map_or_else(|| "None".to_string(), super::pool::py_size),
            crate::module::py_bool(self.ceil_mode)
        )
    }
}
