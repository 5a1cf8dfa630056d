//! `torch.distributions.MixtureSameFamily`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

use super::{torch_size, validate_sample, Categorical, Constraint, Distribution};

/// A mixture of `k` components of one family (torch's `MixtureSameFamily`): the rightmost batch
/// dim of `component_distribution` (of size `k`) indexes the components, weighted by the
/// `Categorical` `mixture_distribution`.
#[derive(Clone)]
pub struct MixtureSameFamily {
    /// The categorical distribution over the components.
    pub mixture_distribution: Categorical,
    /// The components: batch shape `batch_shape + [k]`.
    pub component_distribution: Arc<dyn Distribution>,
    batch: Vec<usize>,
    event_ndims: usize,
    validate: bool,
}

impl MixtureSameFamily {
    /// `MixtureSameFamily(mixture_distribution, component_distribution)`, validated by default.
    pub fn new(
        mixture_distribution: Categorical,
        component_distribution: Arc<dyn Distribution>,
    ) -> Result<Self> {
        Self::with_validate_args(mixture_distribution, component_distribution, None)
    }

    /// `MixtureSameFamily(mixture_distribution, component_distribution, validate_args)`.
    pub fn with_validate_args(
        mixture_distribution: Categorical,
        component_distribution: Arc<dyn Distribution>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let mdbs = mixture_distribution.batch_shape();
        let cbs = component_distribution.batch_shape();
        if cbs.is_empty() {
            return Err(Error::msg(
                "IndexError: component_distribution.batch_shape must have at least one dim",
            ));
        }
        let cdbs = cbs[..cbs.len() - 1].to_vec();
        for (s1, s2) in mdbs.iter().rev().zip(cdbs.iter().rev()) {
            if *s1 != 1 && *s2 != 1 && s1 != s2 {
                return Err(Error::msg(format!(
                    "`mixture_distribution.batch_shape` ({}) is not compatible with \
                     `component_distribution.batch_shape`({})",
                    torch_size(&mdbs),
                    torch_size(&cdbs)
                )));
            }
        }
        let km = mixture_distribution.num_events();
        let kc = cbs[cbs.len() - 1];
        if km != kc {
            return Err(Error::msg(format!(
                "`mixture_distribution component` ({km}) does not equal `component_distribution.batch_shape[-1]` \
                 ({kc})"
            )));
        }
        let event_ndims = component_distribution.event_shape().len();
        Ok(MixtureSameFamily {
            mixture_distribution,
            component_distribution,
            batch: cdbs,
            event_ndims,
            validate: super::resolve_validate(validate_args),
        })
    }

    /// `x.unsqueeze(-1 - event_ndims)` (torch's `_pad`).
    fn pad(&self, x: &Tensor) -> Result<Tensor> {
        x.unsqueeze(-1 - self.event_ndims as isize)
    }

    /// torch's `_pad_mixture_dimensions`: the mixture weights shaped to broadcast against the
    /// components' `batch + [k] + event` values.
    fn pad_mixture_dimensions(&self, x: &Tensor) -> Result<Tensor> {
        let dist_batch_ndims = self.batch.len();
        let cat_batch_ndims = self.mixture_distribution.batch_shape().len();
        let pad_ndims =
            if cat_batch_ndims == 1 { 0 } else { dist_batch_ndims.saturating_sub(cat_batch_ndims) };
        let xs = x.dims();
        let mut shape = xs[..xs.len() - 1].to_vec();
        shape.extend(std::iter::repeat_n(1, pad_ndims));
        shape.push(xs[xs.len() - 1]);
        shape.extend(std::iter::repeat_n(1, self.event_ndims));
        x.reshape(shape)
    }

    fn mixture_dim(&self) -> isize {
        -1 - self.event_ndims as isize
    }
}

impl Distribution for MixtureSameFamily {
    fn name(&self) -> &'static str {
        "MixtureSameFamily"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.batch.clone()
    }
    fn event_shape(&self) -> Vec<usize> {
        self.component_distribution.event_shape()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    /// torch's `MixtureSameFamilyConstraint(component_distribution.support)`: a value is in the
    /// support when it is in every component's.
    fn support(&self) -> Constraint {
        Constraint::MixtureSameFamily(Box::new(self.component_distribution.support()))
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// torch's `repr`: the two distributions on their own lines.
    fn repr(&self) -> String {
        format!(
            "MixtureSameFamily(\n  {},\n  {})",
            self.mixture_distribution.repr(),
            self.component_distribution.repr()
        )
    }
    /// Draws every component and gathers the one the mixture picks (torch's `sample`).
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let gather_dim = (sample_shape.len() + self.batch.len()) as isize;
        let es = self.event_shape();
        let mix_sample =
            self.mixture_distribution.sample_with(sample_shape, generator)?.to_dtype(DType::I64)?;
        let comp_samples = self.component_distribution.sample_with(sample_shape, generator)?.detach();
        let mix_shape = mix_sample.dims().to_vec();
        let mut r_shape = mix_shape.clone();
        r_shape.extend(std::iter::repeat_n(1, es.len() + 1));
        let mut reps = vec![1usize; mix_shape.len() + 1];
        reps.extend(&es);
        let idx = mix_sample.reshape(r_shape)?.repeat(reps)?;
        comp_samples.gather(gather_dim, &idx)?.squeeze_dim_copy(gather_dim)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let x = self.pad(value)?;
        let log_prob_x = self.component_distribution.log_prob(&x)?;
        let log_mix_prob = self.mixture_distribution.logits.log_softmax(-1, None)?;
        log_prob_x.add(&log_mix_prob)?.logsumexp(-1isize, false)
    }
    fn mean(&self) -> Result<Tensor> {
        let probs = self.pad_mixture_dimensions(&self.mixture_distribution.probs)?;
        probs.mul(&self.component_distribution.mean()?)?.sum(self.mixture_dim(), false)
    }
    fn mode(&self) -> Result<Tensor> {
        Err(super::not_implemented("MixtureSameFamily", "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        let probs = self.pad_mixture_dimensions(&self.mixture_distribution.probs)?;
        let dim = self.mixture_dim();
        let mean_cond_var = probs.mul(&self.component_distribution.variance()?)?.sum(dim, false)?;
        let dev = self.component_distribution.mean()?.sub(&self.pad(&self.mean()?)?)?;
        let var_cond_mean = probs.mul(&dev.square()?)?.sum(dim, false)?;
        mean_cond_var.add(&var_cond_mean)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let x = self.pad(value)?;
        let cdf_x = self.component_distribution.cdf(&x)?;
        cdf_x.mul(&self.mixture_distribution.probs)?.sum(-1isize, false)
    }
}
