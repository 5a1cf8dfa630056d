//! The `common!` macro, shared by Gumbel, Weibull, Pareto, Kumaraswamy, FisherSnedecor,
//! ContinuousBernoulli and VonMises: the `Distribution` methods they write the same way (`name`,
//! `batch_shape`, `validate_args`, `as_any`). The expansion names `Any`, so a user imports
//! `std::any::Any`.

/// The methods every family using it shares: `name`, the shape of the field `$batch`, `self.validate`
/// and `self` as `Any`.
macro_rules! common {
    ($name:literal, $batch:ident) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn batch_shape(&self) -> Vec<usize> {
            self.$batch.dims().to_vec()
        }
        fn validate_args(&self) -> bool {
            self.validate
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    };
}
pub(super) use common;
