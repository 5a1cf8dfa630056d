//! Pooling layers: `MaxPool1d/2d/3d`, `AvgPool1d/2d/3d`, `AdaptiveAvgPool1d/2d/3d`,
//! `AdaptiveMaxPool1d/2d/3d` (stateless wrappers of the tensor ops, with torch's constructor
//! defaults). The adaptive pools take torch's `None` in the output size
//! (`AdaptiveAvgPool2d((None, 7))`): that dim keeps the input's size.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module};

/// torch's `nn.MaxPool1d/2d/3d(kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)`;
/// `N` is the number of spatial dims and one value broadcasts over them.
#[derive(Clone, Debug)]
pub struct MaxPoolNd<const N: usize> {
    /// window size
    pub kernel_size: Vec<usize>,
    /// window step (`None`: the kernel size)
    pub stride: Option<Vec<usize>>,
    /// implicit `-inf` padding on each side
    pub padding: Vec<usize>,
    /// spacing between window elements
    pub dilation: Vec<usize>,
    /// round the output size up instead of down
    pub ceil_mode: bool,
}

/// torch's `nn.MaxPool1d`.
pub type MaxPool1d = MaxPoolNd<1>;
/// torch's `nn.MaxPool2d`.
pub type MaxPool2d = MaxPoolNd<2>;
/// torch's `nn.MaxPool3d` (`[N, C, D, H, W]` or unbatched `[C, D, H, W]` inputs).
pub type MaxPool3d = MaxPoolNd<3>;

impl<const N: usize> MaxPoolNd<N> {
    /// A pool with torch's defaults for everything but the kernel size.
    pub fn new(kernel_size: &[usize]) -> Self {
        MaxPoolNd {
            kernel_size: kernel_size.to_vec(),
            stride: None,
            padding: vec![0],
            dilation: vec![1],
            ceil_mode: false,
        }
    }
}

impl<const N: usize> MaxPoolNd<N> {
    /// The pooled values and the flat index of each maximum within its input plane (int64), as
    /// torch's module with `return_indices=True` gives (e.g. for `MaxUnpool`).
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        let stride = self.stride.as_deref();
        x.max_pool_nd_with_indices(
            N,
            &self.kernel_size,
            stride,
            &self.padding,
            &self.dilation,
            self.ceil_mode,
        )
    }
}

impl<const N: usize> Forward for MaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with_indices(x)?.0)
    }
}

/// torch's `nn.AvgPool1d/2d/3d(kernel_size, stride=None, padding=0, ceil_mode=False,
/// count_include_pad=True, divisor_override=None)` (`divisor_override` is 2-d and 3-d only in torch).
#[derive(Clone, Debug)]
pub struct AvgPoolNd<const N: usize> {
    /// window size
    pub kernel_size: Vec<usize>,
    /// window step (`None`: the kernel size)
    pub stride: Option<Vec<usize>>,
    /// implicit zero padding on each side
    pub padding: Vec<usize>,
    /// round the output size up instead of down
    pub ceil_mode: bool,
    /// whether padded zeros count in the average
    pub count_include_pad: bool,
    /// divide by this instead of the window size
    pub divisor_override: Option<i64>,
}

/// torch's `nn.AvgPool1d`.
pub type AvgPool1d = AvgPoolNd<1>;
/// torch's `nn.AvgPool2d`.
pub type AvgPool2d = AvgPoolNd<2>;
/// torch's `nn.AvgPool3d` (`[N, C, D, H, W]` or unbatched `[C, D, H, W]` inputs).
pub type AvgPool3d = AvgPoolNd<3>;

impl<const N: usize> AvgPoolNd<N> {
    /// A pool with torch's defaults for everything but the kernel size.
    pub fn new(kernel_size: &[usize]) -> Self {
        AvgPoolNd {
            kernel_size: kernel_size.to_vec(),
            stride: None,
            padding: vec![0],
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        }
    }
}

impl<const N: usize> Forward for AvgPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.avg_pool_nd(
            N,
            &self.kernel_size,
            self.stride.as_deref(),
            &self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )
    }
}

/// torch's `nn.AdaptiveAvgPool1d/2d/3d(output_size)`: windows chosen so the output has `output_size`.
#[derive(Clone, Debug)]
pub struct AdaptiveAvgPoolNd<const N: usize> {
    /// the output's spatial size (one value broadcasts); `None` keeps the input's size in that dim
    pub output_size: Vec<Option<usize>>,
}

/// torch's `nn.AdaptiveAvgPool1d`.
pub type AdaptiveAvgPool1d = AdaptiveAvgPoolNd<1>;
/// torch's `nn.AdaptiveAvgPool2d`.
pub type AdaptiveAvgPool2d = AdaptiveAvgPoolNd<2>;
/// torch's `nn.AdaptiveAvgPool3d`.
pub type AdaptiveAvgPool3d = AdaptiveAvgPoolNd<3>;

impl<const N: usize> AdaptiveAvgPoolNd<N> {
    /// A pool producing `output_size`.
    pub fn new(output_size: &[usize]) -> Self {
        AdaptiveAvgPoolNd { output_size: output_size.iter().map(|&s| Some(s)).collect() }
    }

    /// A pool producing `output_size`, where `None` keeps the input's size in that dim (torch's
    /// `AdaptiveAvgPool2d((None, 7))`).
    pub fn new_optional(output_size: &[Option<usize>]) -> Self {
        AdaptiveAvgPoolNd { output_size: output_size.to_vec() }
    }
}

impl<const N: usize> Forward for AdaptiveAvgPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.adaptive_avg_pool_nd(N, &resolve::<N>(&self.output_size, x)?)
    }
}

/// torch's `nn.AdaptiveMaxPool1d/2d/3d(output_size)`.
#[derive(Clone, Debug)]
pub struct AdaptiveMaxPoolNd<const N: usize> {
    /// the output's spatial size (one value broadcasts); `None` keeps the input's size in that dim
    pub output_size: Vec<Option<usize>>,
}

/// torch's `nn.AdaptiveMaxPool1d`.
pub type AdaptiveMaxPool1d = AdaptiveMaxPoolNd<1>;
/// torch's `nn.AdaptiveMaxPool2d`.
pub type AdaptiveMaxPool2d = AdaptiveMaxPoolNd<2>;
/// torch's `nn.AdaptiveMaxPool3d`.
pub type AdaptiveMaxPool3d = AdaptiveMaxPoolNd<3>;

impl<const N: usize> AdaptiveMaxPoolNd<N> {
    /// A pool producing `output_size`.
    pub fn new(output_size: &[usize]) -> Self {
        AdaptiveMaxPoolNd { output_size: output_size.iter().map(|&s| Some(s)).collect() }
    }

    /// A pool producing `output_size`, where `None` keeps the input's size in that dim (torch's
    /// `AdaptiveMaxPool2d((None, 7))`).
    pub fn new_optional(output_size: &[Option<usize>]) -> Self {
        AdaptiveMaxPoolNd { output_size: output_size.to_vec() }
    }

    /// The pooled values and the flat index of each maximum within its input plane (int64), as
    /// torch's module with `return_indices=True` gives.
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        x.adaptive_max_pool_nd_with_indices(N, &resolve::<N>(&self.output_size, x)?)
    }
}

impl<const N: usize> Forward for AdaptiveMaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with_indices(x)?.0)
    }
}

/// The output size for input `x`: one value broadcast over the `N` dims, and each `None` replaced
/// by the input's size in that dim (torch's `_list_with_default`, with its error when the input
/// has too few dims). Without `None` the sizes pass through unchanged, for the op to check.
fn resolve<const N: usize>(v: &[Option<usize>], x: &Tensor) -> Result<Vec<usize>> {
    if v.iter().all(Option::is_some) {
        let sizes: Vec<usize> = v.iter().flatten().copied().collect();
        return Ok(if sizes.len() == 1 { vec![sizes[0]; N] } else { sizes });
    }
    let v: Vec<Option<usize>> = if v.len() == 1 { vec![v[0]; N] } else { v.to_vec() };
    let r = x.rank();
    if r <= v.len() {
        return Err(Error::msg(format!("Input dimension should be at least {}", v.len() + 1)));
    }
    Ok(v.iter().enumerate().map(|(i, s)| s.unwrap_or(x.dims()[r - v.len() + i])).collect())
}

/// A size argument as torch prints what it was given (for `extra_repr`): one value as an int
/// (`2`), several as a tuple (`(2, 3)`).
pub(crate) fn py_size<T: std::fmt::Display>(v: &[T]) -> String {
    match v {
        [one] => one.to_string(),
        _ => crate::module::py_tuple(v),
    }
}

/// An output size with torch's `None` entries, as torch prints it: `7`, `(None, 7)`.
fn py_output_size(v: &[Option<usize>]) -> String {
    let items: Vec<String> =
        v.iter().map(|s| s.map_or_else(|| "None".to_string(), |s| s.to_string())).collect();
    py_size(&items)
}

/// `v` spread over `n` dims (one value repeated), as torch's `_single`/`_pair`/`_triple`.
pub(crate) fn per_dim<T: Copy>(v: &[T], n: usize) -> Vec<T> {
    if v.len() == 1 {
        vec![v[0]; n]
    } else {
        v.to_vec()
    }
}

impl<const N: usize> MaxPoolNd<N> {
    /// torch's `extra_repr`: `kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False`.
    fn extra_repr_text(&self) -> String {
        format!(
            "kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
            py_size(&self.kernel_size),
            py_size(self.stride.as_deref().unwrap_or(&self.kernel_size)),
            py_size(&self.padding),
            py_size(&self.dilation),
            crate::module::py_bool(self.ceil_mode)
        )
    }
}

impl<const N: usize> AvgPoolNd<N> {
    /// torch's `extra_repr`: `kernel_size=2, stride=2, padding=0` (`AvgPool1d` keeps its
    /// arguments as 1-tuples: `kernel_size=(3,), stride=(3,), padding=(0,)`).
    fn extra_repr_text(&self) -> String {
        let stride = self.stride.as_deref().unwrap_or(&self.kernel_size);
        let show = |v: &[usize]| if N == 1 { crate::module::py_tuple(&per_dim(v, 1)) } else { py_size(v) };
        format!(
            "kernel_size={}, stride={}, padding={}",
            show(&self.kernel_size),
            show(stride),
            show(&self.padding)
        )
    }
}

impl<const N: usize> AdaptiveAvgPoolNd<N> {
    /// torch's `extra_repr`: `output_size=7`, `output_size=(None, 7)`.
    fn extra_repr_text(&self) -> String {
        format!("output_size={}", py_output_size(&self.output_size))
    }
}

impl<const N: usize> AdaptiveMaxPoolNd<N> {
    /// torch's `extra_repr`: `output_size=7`, `output_size=(None, 7)`.
    fn extra_repr_text(&self) -> String {
        format!("output_size={}", py_output_size(&self.output_size))
    }
}

/// Implements `Module` for a parameterless N-d layer, with torch's type name per `N` and the
/// type's own `extra_repr_text`.
macro_rules! stateless_nd {
    ($ty:ident, $names:expr) => {
        impl<const N: usize> Module for $ty<N> {
            fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
            fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
            fn type_name(&self) -> &'static str {
                let names: [&'static str; 3] = $names;
                names.get(N.wrapping_sub(1)).copied().unwrap_or(stringify!($ty))
            }
            fn extra_repr(&self) -> String {
                self.extra_repr_text()
            }
        }
    };
}

stateless_nd!(MaxPoolNd, ["MaxPool1d", "MaxPool2d", "MaxPool3d"]);
stateless_nd!(AvgPoolNd, ["AvgPool1d", "AvgPool2d", "AvgPool3d"]);
stateless_nd!(AdaptiveAvgPoolNd, ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"]);
stateless_nd!(AdaptiveMaxPoolNd, ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]);
