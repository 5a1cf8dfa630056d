//! `FractionalMaxPool2d`, `FractionalMaxPool3d` (torch's constructor checks, `_random_samples`
//! buffer and forward).

use oxtorch_tensor::{Error, Result, Tensor};

use crate::functional as F;
use crate::module::{Buffer, Forward, Member, MemberMut, Module};

/// torch's `nn.FractionalMaxPool2d/3d(kernel_size, output_size=None, output_ratio=None,
/// return_indices=False, _random_samples=None)`: fractional max pooling (see
/// [`crate::functional::fractional_max_pool2d`]). Fixed samples are a buffer named
/// `_random_samples` (in the state dict when set, as torch's); without them every forward draws
/// new windows from the default generator.
pub struct FractionalMaxPoolNd<const N: usize> {
    /// the window size per spatial dim (one value broadcasts)
    pub kernel_size: Vec<usize>,
    /// the output's spatial size (one value broadcasts)
    pub output_size: Option<Vec<usize>>,
    /// the output's size as a fraction of the input's, each in `(0, 1)`
    pub output_ratio: Option<Vec<f64>>,
    /// whether [`Forward::forward`] callers want indices (torch's flag; use
    /// [`FractionalMaxPoolNd::forward_with_indices`] to get them)
    pub return_indices: bool,
    /// fixed samples `[N, C, dims]` (torch's `_random_samples` buffer)
    pub random_samples: Option<Buffer>,
}

/// torch's `nn.FractionalMaxPool2d`.
pub type FractionalMaxPool2d = FractionalMaxPoolNd<2>;
/// torch's `nn.FractionalMaxPool3d`.
pub type FractionalMaxPool3d = FractionalMaxPoolNd<3>;

/// Python's `repr` of a float (`1.0`, `0.25`).
fn py_float(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

impl<const N: usize> FractionalMaxPoolNd<N> {
    /// torch's constructor: exactly one of `output_size` and `output_ratio`, every ratio in
    /// `(0, 1)`.
    pub fn new(
        kernel_size: &[usize],
        output_size: Option<&[usize]>,
        output_ratio: Option<&[f64]>,
    ) -> Result<Self> {
        let class = if N == 2 { "FractionalMaxPool2d" } else { "FractionalMaxPool3d" };
        if output_size.is_none() && output_ratio.is_none() {
            return Err(Error::msg(format!(
                "{class} requires specifying either an output size, or a pooling ratio"
            )));
        }
        if output_size.is_some() && output_ratio.is_some() {
            return Err(Error::msg("only one of output_size and output_ratio may be specified"));
        }
        if let Some(r) = output_ratio {
            if r.len() != 1 && r.len() != N {
                return Err(Error::msg(format!("output_ratio must have 1 or {N} values, got {}", r.len())));
            }
            if !r.iter().all(|&v| 0.0 < v && v < 1.0) {
                let shown = if r.len() == 1 {
                    py_float(r[0])
                } else {
                    format!("({})", r.iter().map(|&v| py_float(v)).collect::<Vec<_>>().join(", "))
                };
                return Err(Error::msg(format!("output_ratio must be between 0 and 1 (got {shown})")));
            }
        }
        Ok(FractionalMaxPoolNd {
            kernel_size: kernel_size.to_vec(),
            output_size: output_size.map(<[usize]>::to_vec),
            output_ratio: output_ratio.map(<[f64]>::to_vec),
            return_indices: false,
            random_samples: None,
        })
    }

    /// Sets torch's `return_indices` flag (builder style).
    pub fn with_return_indices(mut self, return_indices: bool) -> Self {
        self.return_indices = return_indices;
        self
    }

    /// Fixes the samples (`[N, C, N]`, the input's dtype; torch's `_random_samples`).
    pub fn with_random_samples(mut self, samples: Tensor) -> Self {
        self.random_samples = Some(Buffer(samples));
        self
    }

    /// The pooled values and the flat spatial index (int64) of each maximum.
    pub fn forward_with_indices(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        let (k, size, ratio) = (&self.kernel_size, self.output_size.as_deref(), self.output_ratio.as_deref());
        let samples = self.random_samples.as_deref();
        if N == 2 {
            F::fractional_max_pool2d_with_indices(x, k, size, ratio, samples)
        } else {
            F::fractional_max_pool3d_with_indices(x, k, size, ratio, samples)
        }
    }
}

impl<const N: usize> Forward for FractionalMaxPoolNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with_indices(x)?.0)
    }
}

impl<const N: usize> Module for FractionalMaxPoolNd<N> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        if let Some(b) = &self.random_samples {
            f("_random_samples", Member::Buffer(&b.0));
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        if let Some(b) = &mut self.random_samples {
            f("_random_samples", MemberMut::Buffer(&mut b.0));
        }
    }
    fn type_name(&self) -> &'static str {
        if N == 2 {
            "FractionalMaxPool2d"
        } else {
            "FractionalMaxPool3d"
        }
    }
}
