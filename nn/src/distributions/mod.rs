//! `torch.distributions` for oxtorch: parameterized probability distributions with torch's
//! formulas for `log_prob`, `entropy`, moments, `cdf`/`icdf`, sampling (`rsample` reparameterized
//! and differentiable where torch has `has_rsample`), argument validation with torch's messages,
//! and [`kl_divergence`] for the common pairs.
//!
//! Parameters broadcast against each other as torch's `broadcast_all`. Validation is on by default
//! (torch's `Distribution._validate_args`); every constructor has a `*_with_validate_args`
//! variant taking `Option<bool>` (`None`: the default of [`set_default_validate_args`]).

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

mod bernoulli;
mod binomial;
mod categorical;
mod cauchy;
mod chi2;
mod closed_form;
mod common_methods;
mod continuous_bernoulli;
mod dirichlet;
mod dirichlet_grad;
mod exponential;
mod fisher_snedecor;
mod gamma;
mod gamma_rsample;
mod geometric;
mod gumbel;
mod half_cauchy;
mod half_normal;
mod independent;
mod inverse_gamma;
mod kl;
mod kumaraswamy;
mod laplace;
mod lowrank_mvn;
mod mixture;
mod multinomial;
mod multivariate_normal;
mod negative_binomial;
mod normal;
mod pareto;
mod poisson;
mod relaxed;
mod student_t;
mod transformed;
mod transforms;
mod uniform;
mod von_mises;
mod weibull;

pub use bernoulli::Bernoulli;
pub use binomial::Binomial;
pub use categorical::{Categorical, OneHotCategorical};
pub use cauchy::Cauchy;
pub use chi2::Chi2;
pub use continuous_bernoulli::ContinuousBernoulli;
pub use dirichlet::{Beta, Dirichlet};
pub use dirichlet_grad::dirichlet_grad;
pub use exponential::Exponential;
pub use fisher_snedecor::FisherSnedecor;
pub use gamma::{standard_gamma, Gamma};
pub use gamma_rsample::{gamma_rsample, standard_gamma_grad, standard_gamma_rsample};
pub use geometric::Geometric;
pub use gumbel::Gumbel;
pub use half_cauchy::HalfCauchy;
pub use half_normal::HalfNormal;
pub use independent::Independent;
pub use inverse_gamma::InverseGamma;
pub use kl::kl_divergence;
pub use kumaraswamy::Kumaraswamy;
pub use laplace::Laplace;
pub use lowrank_mvn::LowRankMultivariateNormal;
pub use mixture::MixtureSameFamily;
pub use multinomial::Multinomial;
pub use multivariate_normal::MultivariateNormal;
pub use negative_binomial::NegativeBinomial;
pub use normal::Normal;
pub use pareto::Pareto;
pub use poisson::Poisson;
pub use relaxed::{ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli, RelaxedOneHotCategorical};
pub use student_t::StudentT;
pub use transformed::{LogNormal, TransformedDistribution};
pub use transforms::{
    AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
    SoftmaxTransform, TanhTransform, Transform,
};
pub use uniform::Uniform;
pub use von_mises::VonMises;
pub use weibull::Weibull;

static DEFAULT_VALIDATE_ARGS: AtomicBool = AtomicBool::new(true);

/// `torch.distributions.Distribution.set_default_validate_args`: whether distributions built
/// without an explicit `validate_args` check their parameters and `log_prob` values (default
/// `true`, as torch's).
pub fn set_default_validate_args(value: bool) {
    DEFAULT_VALIDATE_ARGS.store(value, Ordering::Relaxed);
}

/// The `validate_args` a constructor uses: the explicit one, else the default.
pub(crate) fn resolve_validate(validate_args: Option<bool>) -> bool {
    validate_args.unwrap_or_else(|| DEFAULT_VALIDATE_ARGS.load(Ordering::Relaxed))
}

/// A probability distribution (torch's `torch.distributions.Distribution`).
///
/// Shapes: a sample has shape `sample_shape + batch_shape + event_shape`; `log_prob` returns
/// `sample_shape + batch_shape` values.
pub trait Distribution: Send + Sync {
    /// The class name torch prints (`"Normal"`).
    fn name(&self) -> &'static str;
    /// The shape over which parameters are batched.
    fn batch_shape(&self) -> Vec<usize>;
    /// The shape of a single sample (empty for univariate distributions).
    fn event_shape(&self) -> Vec<usize> {
        Vec::new()
    }
    /// The parameters as torch's `repr` lists them (`(name, value)`).
    fn params(&self) -> Vec<(&'static str, Tensor)>;
    /// The support of the distribution.
    fn support(&self) -> Constraint;
    /// Whether parameters and `log_prob` values are validated.
    fn validate_args(&self) -> bool;
    /// The distribution as `Any`, for [`kl_divergence`]'s dispatch.
    fn as_any(&self) -> &dyn Any;

    /// Draws a sample of shape `sample_shape + batch_shape + event_shape` (no gradient) from
    /// `generator` (or the default one).
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor>;
    /// [`Distribution::sample_with`] from the default generator.
    fn sample(&self, sample_shape: &[usize]) -> Result<Tensor> {
        self.sample_with(sample_shape, None)
    }
    /// Whether [`Distribution::rsample`] is available (torch's `has_rsample`).
    fn has_rsample(&self) -> bool {
        false
    }
    /// A reparameterized sample: differentiable with respect to the parameters.
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let _ = (sample_shape, generator);
        Err(Error::msg(format!("NotImplementedError: {} does not implement rsample", self.name())))
    }
    /// [`Distribution::rsample_with`] from the default generator.
    fn rsample(&self, sample_shape: &[usize]) -> Result<Tensor> {
        self.rsample_with(sample_shape, None)
    }
    /// The log of the probability density/mass at `value`.
    fn log_prob(&self, value: &Tensor) -> Result<Tensor>;
    /// The entropy, of shape `batch_shape`.
    fn entropy(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "entropy"))
    }
    /// The mean.
    fn mean(&self) -> Result<Tensor>;
    /// The mode.
    fn mode(&self) -> Result<Tensor>;
    /// The variance.
    fn variance(&self) -> Result<Tensor>;
    /// The standard deviation.
    fn stddev(&self) -> Result<Tensor> {
        self.variance()?.sqrt()
    }
    /// The cumulative distribution function at `value`.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let _ = value;
        Err(not_implemented(self.name(), "cdf"))
    }
    /// The inverse cumulative distribution function at `value`.
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let _ = value;
        Err(not_implemented(self.name(), "icdf"))
    }
    /// torch's `expand(batch_shape)`: the same distribution with its parameters expanded (as
    /// `Tensor::expand`, no copy) to the batch shape `batch_shape`, validated as this one is.
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        let _ = batch_shape;
        Err(not_implemented(self.name(), "expand"))
    }
    /// `sample_shape + batch_shape + event_shape` (torch's `_extended_shape`).
    fn extended_shape(&self, sample_shape: &[usize]) -> Vec<usize> {
        let mut s = sample_shape.to_vec();
        s.extend(self.batch_shape());
        s.extend(self.event_shape());
        s
    }
    /// torch's `repr(distribution)`: `Normal(loc: torch.Size([2]), scale: torch.Size([2]))`.
    fn repr(&self) -> String {
        dist_repr(self.name(), &self.params())
    }
}

/// torch's `NotImplementedError` for a method a distribution lacks.
pub(crate) fn not_implemented(name: &str, what: &str) -> Error {
    Error::msg(format!("NotImplementedError: {name}.{what} is not implemented"))
}

/// A Python float as torch prints it (`0.0`, `1.5`).
pub(crate) fn py_float(x: f64) -> String {
    if x.is_finite() && x != 0.0 && (x.abs() < 1e-4 || x.abs() >= 1e16) {
        // (Python's repr switches to `1e-05` / `1e+16` outside `[1e-4, 1e16)`)
        let s = format!("{x:e}");
        match s.split_once('e') {
            Some((mantissa, exp)) => {
                let e: i32 = exp.parse().unwrap_or(0);
                let sign = if e < 0 { '-' } else { '+' };
                format!("{mantissa}e{sign}{:02}", e.unsigned_abs())
            }
            None => s,
        }
    } else if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.1}")
    } else if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{x}")
    }
}

/// A shape as a Python tuple: `()`, `(2,)`, `(2, 3)`.
pub(crate) fn shape_tuple(dims: &[usize]) -> String {
    match dims {
        [] => "()".into(),
        [d] => format!("({d},)"),
        _ => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// A shape as `torch.Size([2, 3])`.
pub(crate) fn torch_size(dims: &[usize]) -> String {
    format!("torch.Size([{}])", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "))
}

/// torch's `Distribution.__repr__`: a one-element parameter by value, the others by size.
pub(crate) fn dist_repr(name: &str, params: &[(&'static str, Tensor)]) -> String {
    let args: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            if v.numel() == 1 {
                format!("{k}: {}", py_format(v))
            } else {
                format!("{k}: {}", torch_size(v.dims()))
            }
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

/// A tensor as Python's `f"{t}"` writes it: a 0-dim one as its number, others as `tensor(...)`.
pub(crate) fn py_format(t: &Tensor) -> String {
    if t.rank() == 0 {
        if let Ok(x) = t.to_dtype(DType::F64).and_then(|x| x.item::<f64>()) {
            return if t.dtype().is_float() { py_float(x) } else { format!("{}", x as i64) };
        }
    }
    format!("{t}")
}

/// torch's `broadcast_all` for tensors: the arguments broadcast to one shape.
pub(crate) fn broadcast_all(ts: &[&Tensor]) -> Result<Vec<Tensor>> {
    Tensor::broadcast_tensors(ts)
}

/// The broadcast of two shapes (torch's `torch.broadcast_shapes`).
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let x = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let y = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        *o = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::shape(format!(
                    "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between \
                     {} and {}",
                    shape_tuple(a),
                    shape_tuple(b)
                )))
            }
        };
    }
    Ok(out)
}

/// Sums the rightmost `n` dims (torch's `_sum_rightmost`).
pub(crate) fn sum_rightmost(t: &Tensor, n: usize) -> Result<Tensor> {
    if n == 0 {
        return Ok(t.clone());
    }
    let dims: Vec<isize> = (1..=n as isize).map(|k| -k).collect();
    t.sum(dims, false)
}

/// `all` along the last dim of a bool tensor.
pub(crate) fn all_last(t: &Tensor) -> Result<Tensor> {
    let n = t.dims().last().copied().unwrap_or(1);
    if t.rank() == 0 {
        return Ok(t.clone());
    }
    t.to_dtype(DType::F64)?.sum(-1isize, false)?.eq(n as f64)
}

/// Whether every element of a bool tensor is true.
pub(crate) fn all_true(t: &Tensor) -> Result<bool> {
    if t.numel() == 0 {
        return Ok(true);
    }
    t.all()?.item::<bool>()
}

/// The options (dtype and device) of a parameter, for drawing noise like it.
pub(crate) fn like(t: &Tensor) -> (DType, oxtorch_tensor::Device) {
    (t.dtype(), t.device())
}

/// torch's `_validate_args` check of one parameter against its constraint.
pub(crate) fn check_param(
    dist: &str,
    params: &[(&'static str, Tensor)],
    name: &str,
    value: &Tensor,
    constraint: &Constraint,
) -> Result<()> {
    if all_true(&constraint.check(value)?)? {
        return Ok(());
    }
    Err(Error::msg(format!(
        "Expected parameter {name} (Tensor of shape {}) of distribution {} to satisfy the constraint {}, but found \
         invalid values:\n{}",
        shape_tuple(value.dims()),
        dist_repr(dist, params),
        constraint,
        py_format(value)
    )))
}

/// Checks every `(name, value, constraint)` of a distribution being built.
pub(crate) fn check_params(
    dist: &str,
    params: &[(&'static str, Tensor)],
    checks: &[(&str, &Tensor, Constraint)],
) -> Result<()> {
    for (name, value, c) in checks {
        check_param(dist, params, name, value, c)?;
    }
    Ok(())
}

/// torch's `Distribution._validate_sample`: `value`'s rightmost dims must be the event shape, the
/// rest broadcastable with the batch shape, and every value within the support.
pub(crate) fn validate_sample<D: Distribution + ?Sized>(d: &D, value: &Tensor) -> Result<()> {
    if !d.validate_args() {
        return Ok(());
    }
    let (batch, event) = (d.batch_shape(), d.event_shape());
    let vs = value.dims();
    if vs.len() < event.len() || vs[vs.len() - event.len()..] != event[..] {
        return Err(Error::msg(format!(
            "The right-most size of value must match event_shape: {} vs {}.",
            torch_size(vs),
            torch_size(&event)
        )));
    }
    let mut expected = batch.clone();
    expected.extend(&event);
    for (i, j) in vs.iter().rev().zip(expected.iter().rev()) {
        if *i != 1 && *j != 1 && i != j {
            return Err(Error::msg(format!(
                "Value is not broadcastable with batch_shape+event_shape: {} vs {}.",
                torch_size(vs),
                torch_size(&expected)
            )));
        }
    }
    let support = d.support();
    if !all_true(&support.check(value)?)? {
        return Err(Error::msg(format!(
            "Expected value argument (Tensor of shape {}) to be within the support ({support}) of the distribution \
             {}, but found invalid values:\n{}",
            shape_tuple(vs),
            d.repr(),
            py_format(value)
        )));
    }
    Ok(())
}

/// A constraint on parameters or values (torch's `torch.distributions.constraints`).
#[derive(Clone)]
pub enum Constraint {
    /// `constraints.real`: not NaN.
    Real,
    /// `constraints.greater_than(lb)`.
    GreaterThan(f64),
    /// `constraints.greater_than(lb)` with a tensor bound (Uniform's `high`).
    GreaterThanTensor(Tensor),
    /// `constraints.less_than(ub)` with a tensor bound (Uniform's `low`).
    LessThanTensor(Tensor),
    /// `constraints.greater_than_eq(lb)`.
    GreaterThanEq(f64),
    /// `constraints.greater_than_eq(lb)` with a tensor bound (Pareto's support `scale`).
    GreaterThanEqTensor(Tensor),
    /// `constraints.interval(lb, ub)` with number bounds (`unit_interval` is `(0, 1)`).
    Interval(f64, f64),
    /// `constraints.half_open_interval(lb, ub)`: `lb <= v < ub`.
    HalfOpenInterval(f64, f64),
    /// `constraints.interval(low, high)` with tensor bounds (Uniform's support).
    TensorInterval(Tensor, Tensor),
    /// `constraints.boolean`: 0 or 1.
    Boolean,
    /// `constraints.integer_interval(lb, ub)`.
    IntegerInterval(i64, i64),
    /// `constraints.integer_interval(0, total_count)` with a tensor bound (Binomial's support).
    TensorIntegerInterval(f64, Tensor),
    /// `constraints.integer_greater_than(lb)` (`nonnegative_integer` is `0`).
    IntegerGreaterThan(i64),
    /// `constraints.simplex`: nonnegative, summing to 1 over the last dim.
    Simplex,
    /// `constraints.one_hot`.
    OneHot,
    /// `constraints.positive_definite`.
    PositiveDefinite,
    /// `constraints.lower_cholesky`.
    LowerCholesky,
    /// `constraints.independent(base, n)`: `base` holding over the rightmost `n` dims.
    Independent(Box<Constraint>, usize),
    /// torch's `MixtureSameFamilyConstraint(base)` (MixtureSameFamily's support): `base` checked
    /// on the value unsqueezed at the mixture dim, all-reduced over the components.
    MixtureSameFamily(Box<Constraint>),
}

/// `constraints.positive`.
pub const POSITIVE: Constraint = Constraint::GreaterThan(0.0);
/// `constraints.nonnegative`.
pub const NONNEGATIVE: Constraint = Constraint::GreaterThanEq(0.0);
/// `constraints.unit_interval`.
pub const UNIT_INTERVAL: Constraint = Constraint::Interval(0.0, 1.0);

impl Constraint {
    /// `constraint.check(value)`: a bool tensor, true where `value` satisfies the constraint
    /// (of shape `value.shape[:-event_dim]`).
    pub fn check(&self, v: &Tensor) -> Result<Tensor> {
        // (torch's `value % 1 == 0`: false for ±inf and NaN)
        let is_int = |v: &Tensor| {
            if v.dtype().is_float() {
                v.floor()?.eq(v)?.logical_and(&v.isfinite()?)
            } else {
                v.eq(v)
            }
        };
        match self {
            Constraint::Real => v.eq(v),
            Constraint::GreaterThan(lb) => v.gt(*lb),
            Constraint::GreaterThanTensor(lb) => v.gt(lb),
            Constraint::LessThanTensor(ub) => v.lt(ub),
            Constraint::GreaterThanEq(lb) => v.ge(*lb),
            Constraint::GreaterThanEqTensor(lb) => v.ge(lb),
            Constraint::Interval(lb, ub) => v.ge(*lb)?.logical_and(&v.le(*ub)?),
            Constraint::HalfOpenInterval(lb, ub) => v.ge(*lb)?.logical_and(&v.lt(*ub)?),
            Constraint::TensorInterval(lb, ub) => v.ge(lb)?.logical_and(&v.le(ub)?),
            Constraint::Boolean => v.eq(0.0)?.logical_or(&v.eq(1.0)?),
            Constraint::IntegerInterval(lb, ub) => {
                is_int(v)?.logical_and(&v.ge(*lb as f64)?)?.logical_and(&v.le(*ub as f64)?)
            }
            Constraint::TensorIntegerInterval(lb, ub) => {
                is_int(v)?.logical_and(&v.ge(*lb)?)?.logical_and(&v.le(ub)?)
            }
            Constraint::IntegerGreaterThan(lb) => is_int(v)?.logical_and(&v.ge(*lb as f64)?),
            Constraint::Simplex => {
                let nonneg = all_last(&v.ge(0.0)?)?;
                nonneg.logical_and(&v.sum(-1isize, false)?.sub(1.0)?.abs()?.lt(1e-6)?)
            }
            Constraint::OneHot => {
                let boolean = all_last(&v.eq(0.0)?.logical_or(&v.eq(1.0)?)?)?;
                boolean.logical_and(&v.sum(-1isize, false)?.eq(1.0)?)
            }
            Constraint::PositiveDefinite => {
                let sym = all_last(&all_last(&symmetric_close(v)?)?)?;
                let low = oxtorch_tensor::linalg::eigvalsh(v, "L")?.select(-1, 0)?.gt(0.0)?;
                sym.logical_and(&low)
            }
            Constraint::LowerCholesky => {
                let lower = all_last(&all_last(&v.tril(0)?.eq(v)?)?)?;
                lower.logical_and(&all_last(&v.diagonal(0, -2, -1)?.gt(0.0)?)?)
            }
            Constraint::Independent(base, n) => {
                let mut r = base.check(v)?;
                for _ in 0..*n {
                    r = all_last(&r)?;
                }
                Ok(r)
            }
            Constraint::MixtureSameFamily(base) => {
                let event_dim = transforms::constraint_event_dim(base);
                let unsqueezed = v.unsqueeze(-1 - event_dim as isize)?;
                let result = base.check(&unsqueezed)?;
                if v.rank() < event_dim {
                    return Err(Error::msg(format!(
                        "Expected value.dim() >= {event_dim} but got {}",
                        v.rank()
                    )));
                }
                // (torch's `result.reshape(result.shape[:value.dim() - event_dim] + (-1,)).all(-1)`)
                let keep = (v.rank() - event_dim).min(result.rank());
                let mut shape = result.dims()[..keep].to_vec();
                shape.push(result.dims()[keep..].iter().product());
                all_last(&result.reshape(shape)?)
            }
        }
    }
}

/// torch's `_Symmetric` test: `isclose(value, value.mT, atol=1e-6)` elementwise.
fn symmetric_close(v: &Tensor) -> Result<Tensor> {
    let t = v.transpose(-2, -1)?;
    let tol = t.abs()?.mul(1e-5)?.add(1e-6)?;
    v.sub(&t)?.abs()?.le(&tol)
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constraint::Real => write!(f, "Real()"),
            Constraint::GreaterThan(lb) => write!(f, "GreaterThan(lower_bound={})", py_float(*lb)),
            Constraint::GreaterThanTensor(lb) => write!(f, "GreaterThan(lower_bound={})", py_format(lb)),
            Constraint::LessThanTensor(ub) => write!(f, "LessThan(upper_bound={})", py_format(ub)),
            Constraint::GreaterThanEq(lb) => write!(f, "GreaterThanEq(lower_bound={})", py_float(*lb)),
            Constraint::GreaterThanEqTensor(lb) => write!(f, "GreaterThanEq(lower_bound={})", py_format(lb)),
            Constraint::Interval(lb, ub) => {
                write!(f, "Interval(lower_bound={}, upper_bound={})", py_float(*lb), py_float(*ub))
            }
            Constraint::TensorInterval(lb, ub) => {
                write!(f, "Interval(lower_bound={}, upper_bound={})", py_format(lb), py_format(ub))
            }
            Constraint::HalfOpenInterval(lb, ub) => {
                write!(f, "HalfOpenInterval(lower_bound={}, upper_bound={})", py_float(*lb), py_float(*ub))
            }
            Constraint::Boolean => write!(f, "Boolean()"),
            Constraint::IntegerInterval(lb, ub) => {
                write!(f, "IntegerInterval(lower_bound={lb}, upper_bound={ub})")
            }
            Constraint::TensorIntegerInterval(lb, ub) => {
                write!(f, "IntegerInterval(lower_bound={}, upper_bound={})", *lb as i64, py_format(ub))
            }
            Constraint::IntegerGreaterThan(lb) => write!(f, "IntegerGreaterThan(lower_bound={lb})"),
            Constraint::Simplex => write!(f, "Simplex()"),
            Constraint::OneHot => write!(f, "OneHot()"),
            Constraint::PositiveDefinite => write!(f, "PositiveDefinite()"),
            Constraint::LowerCholesky => write!(f, "LowerCholesky()"),
            Constraint::Independent(base, n) => write!(f, "IndependentConstraint({base}, {n})"),
            Constraint::MixtureSameFamily(base) => write!(f, "MixtureSameFamilyConstraint({base})"),
        }
    }
}

impl fmt::Debug for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `torch.finfo(dtype).eps`.
pub(crate) fn finfo_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        DType::F16 => 0.0009765625,
        DType::BF16 => 0.0078125,
        _ => f32::EPSILON as f64,
    }
}

/// `torch.finfo(dtype).tiny`.
pub(crate) fn finfo_tiny(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::MIN_POSITIVE,
        DType::F16 => 6.103515625e-05,
        DType::BF16 => 1.1754943508222875e-38,
        _ => f32::MIN_POSITIVE as f64,
    }
}

/// torch's `clamp_probs`: probabilities clamped to `[eps, 1 - eps]`.
pub(crate) fn clamp_probs(p: &Tensor) -> Result<Tensor> {
    let eps = finfo_eps(p.dtype());
    p.clamp(Some(eps.into()), Some((1.0 - eps).into()))
}
