//! `LazyBatchNorm1d/2d/3d` and `LazyInstanceNorm1d/2d/3d`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{Lazy, LazyRole, LazySpec};
use crate::layers::{BatchNorm, InstanceNorm};
use crate::module::ModuleExt;

/// torch's `nn.LazyBatchNorm1d`.
pub type LazyBatchNorm1d = Lazy<LazyBatchNormSpec<1>>;
/// torch's `nn.LazyBatchNorm2d`.
pub type LazyBatchNorm2d = Lazy<LazyBatchNormSpec<2>>;
/// torch's `nn.LazyBatchNorm3d`.
pub type LazyBatchNorm3d = Lazy<LazyBatchNormSpec<3>>;
/// torch's `nn.LazyInstanceNorm1d`.
pub type LazyInstanceNorm1d = Lazy<LazyInstanceNormSpec<1>>;
/// torch's `nn.LazyInstanceNorm2d`.
pub type LazyInstanceNorm2d = Lazy<LazyInstanceNormSpec<2>>;
/// torch's `nn.LazyInstanceNorm3d`.
pub type LazyInstanceNorm3d = Lazy<LazyInstanceNormSpec<3>>;

// --- LazyBatchNorm / LazyInstanceNorm ------------------------------------------------------------

/// The members of batch and instance norms: `weight`, `bias` (with `affine`), `running_mean`,
/// `running_var` (with `track_running_stats`) open; `num_batches_tracked` a 0-d int64 zero.
fn norm_members(affine: bool, track: bool) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
    let mut m = Vec::new();
    if affine {
        m.push(("weight", LazyRole::Param, None));
        m.push(("bias", LazyRole::Param, None));
    }
    if track {
        m.push(("running_mean", LazyRole::Buffer, None));
        m.push(("running_var", LazyRole::Buffer, None));
        m.push(("num_batches_tracked", LazyRole::Buffer, Some(Tensor::zeros([], DType::I64)?)));
    }
    Ok(m)
}

/// torch's `_NormBase.extra_repr` of a lazy norm before materialization (`num_features` 0):
/// `0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True`.
fn lazy_norm_repr(eps: f64, momentum: Option<f64>, affine: bool, track_running_stats: bool) -> String {
    format!(
        "0, eps={}, momentum={}, affine={}, bias={}, track_running_stats={}",
        crate::module::py_float(eps),
        momentum.map_or_else(|| "None".to_string(), crate::module::py_float),
        crate::module::py_bool(affine),
        crate::module::py_bool(affine),
        crate::module::py_bool(track_running_stats)
    )
}

/// The channel count read from a norm's checkpoint entry.
fn norm_infer_from(name: &str, dims: &[usize]) -> Option<usize> {
    (["weight", "bias", "running_mean", "running_var"].contains(&name) && dims.len() == 1).then(|| dims[0])
}

/// The hyper-parameters of [`LazyBatchNorm1d`], [`LazyBatchNorm2d`], [`LazyBatchNorm3d`]
/// (torch's defaults: `eps 1e-5, momentum 0.1, affine, track_running_stats`).
#[derive(Clone, Debug)]
pub struct LazyBatchNormSpec<const K: usize> {
    /// added to the variance
    pub eps: f64,
    /// running-statistics factor (`None`: cumulative average)
    pub momentum: Option<f64>,
    /// whether there are `weight` and `bias`
    pub affine: bool,
    /// whether running statistics are kept
    pub track_running_stats: bool,
}

impl<const K: usize> LazySpec for LazyBatchNormSpec<K> {
    type Module = BatchNorm;
    fn name(&self) -> &'static str {
        ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
            .get(K.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyBatchNorm")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        norm_members(self.affine, self.track_running_stats)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        let r = input.rank();
        let ok = match K {
            1 => r == 2 || r == 3,
            k => r == k + 2,
        };
        if !ok {
            return Err(Error::shape(match K {
                1 => format!("expected 2D or 3D input (got {r}D input)"),
                k => format!("expected {}D input (got {r}D input)", k + 2),
            }));
        }
        Ok(input.dims()[1])
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        norm_infer_from(name, dims)
    }
    fn build(&self, size: usize, dtype: DType) -> Result<BatchNorm> {
        let (eps, momentum, affine, track) = (self.eps, self.momentum, self.affine, self.track_running_stats);
        let mut m = match K {
            1 => BatchNorm::new_1d_with(size, eps, momentum, affine, track)?,
            2 => BatchNorm::new_2d_with(size, eps, momentum, affine, track)?,
            _ => BatchNorm::new_3d_with(size, eps, momentum, affine, track)?,
        };
        if dtype != DType::default_float() {
            m.to(dtype)?;
        }
        Ok(m)
    }
    fn has_training_flag(&self) -> bool {
        true
    }
    fn extra_repr(&self) -> String {
        lazy_norm_repr(self.eps, self.momentum, self.affine, self.track_running_stats)
    }
}

impl<const K: usize> Lazy<LazyBatchNormSpec<K>> {
    /// torch's `LazyBatchNorm{K}d()` with its defaults.
    pub fn new() -> Result<Self> {
        Self::new_with(1e-5, Some(0.1), true, true)
    }

    /// torch's `LazyBatchNorm{K}d(eps, momentum, affine, track_running_stats)`.
    pub fn new_with(
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::from_spec(LazyBatchNormSpec { eps, momentum, affine, track_running_stats })
    }
}

/// The hyper-parameters of [`LazyInstanceNorm1d`], [`LazyInstanceNorm2d`],
/// [`LazyInstanceNorm3d`] (torch's defaults: `eps 1e-5, momentum 0.1, affine,
/// track_running_stats`, unlike the eager instance norms).
#[derive(Clone, Debug)]
pub struct LazyInstanceNormSpec<const K: usize> {
    /// added to the variance
    pub eps: f64,
    /// running-statistics factor
    pub momentum: Option<f64>,
    /// whether there are `weight` and `bias`
    pub affine: bool,
    /// whether running statistics are kept
    pub track_running_stats: bool,
}

impl<const K: usize> LazySpec for LazyInstanceNormSpec<K> {
    type Module = InstanceNorm;
    fn name(&self) -> &'static str {
        ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
            .get(K.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyInstanceNorm")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        norm_members(self.affine, self.track_running_stats)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        // torch's `_LazyNormBase` reads `input.shape[1]` whatever the rank: for an unbatched
        // input that is a spatial dim, not the channels, and the forward then reports the
        // mismatch (with `affine`) as torch's does.
        let r = input.rank();
        if r != K + 1 && r != K + 2 {
            return Err(Error::shape(format!("expected {}D or {}D input (got {r}D input)", K + 1, K + 2)));
        }
        Ok(input.dims()[1])
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        norm_infer_from(name, dims)
    }
    fn build(&self, size: usize, dtype: DType) -> Result<InstanceNorm> {
        let mut m =
            InstanceNorm::new(K, size, self.eps, self.momentum, self.affine, self.track_running_stats)?;
        if dtype != DType::default_float() {
            m.to(dtype)?;
        }
        Ok(m)
    }
    fn has_training_flag(&self) -> bool {
        true
    }
    fn extra_repr(&self) -> String {
        lazy_norm_repr(self.eps, self.momentum, self.affine, self.track_running_stats)
    }
}

impl<const K: usize> Lazy<LazyInstanceNormSpec<K>> {
    /// torch's `LazyInstanceNorm{K}d()` with its defaults (`affine` and `track_running_stats`
    /// on, as torch's lazy instance norms have them).
    pub fn new() -> Result<Self> {
        Self::new_with(1e-5, Some(0.1), true, true)
    }

    /// torch's `LazyInstanceNorm{K}d(eps, momentum, affine, track_running_stats)`.
    pub fn new_with(
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::from_spec(LazyInstanceNormSpec { eps, momentum, affine, track_running_stats })
    }
}
