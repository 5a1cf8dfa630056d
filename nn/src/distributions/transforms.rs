//! `torch.distributions.transforms`: invertible (or not) maps between constrained spaces with
//! their log absolute Jacobian determinants, as torch defines them.

use std::sync::Arc;

use oxtorch_tensor::{Error, Result, Tensor};

use super::{broadcast_shapes, finfo_eps, finfo_tiny, sum_rightmost, Constraint, POSITIVE, UNIT_INTERVAL};

/// The event dim of a constraint (torch's `constraint.event_dim`).
pub(crate) fn constraint_event_dim(c: &Constraint) -> usize {
    match c {
        Constraint::Independent(base, n) => constraint_event_dim(base) + n,
        Constraint::MixtureSameFamily(base) => constraint_event_dim(base),
        Constraint::Simplex | Constraint::OneHot => 1,
        Constraint::PositiveDefinite | Constraint::LowerCholesky => 2,
        _ => 0,
    }
}

/// torch's `constraints.independent(c, n)`, `c` itself for `n == 0`.
pub(crate) fn independent(c: Constraint, n: usize) -> Constraint {
    if n == 0 {
        c
    } else {
        Constraint::Independent(Box::new(c), n)
    }
}

fn not_impl(name: &str, what: &str) -> Error {
    Error::msg(format!("NotImplementedError: {name}.{what} is not implemented"))
}

/// A transform `y = f(x)` (torch's `torch.distributions.transforms.Transform`).
pub trait Transform: Send + Sync {
    /// The class name (`"ExpTransform"`).
    fn name(&self) -> &'static str;
    /// `y = transform(x)`.
    fn call(&self, x: &Tensor) -> Result<Tensor>;
    /// `x = transform.inv(y)` (a pseudo-inverse for non-bijective transforms).
    fn inv(&self, y: &Tensor) -> Result<Tensor>;
    /// `log |dy/dx|` (summed over the transform's event dims).
    fn log_abs_det_jacobian(&self, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        let _ = (x, y);
        Err(not_impl(self.name(), "log_abs_det_jacobian"))
    }
    /// The constraint of valid inputs.
    fn domain(&self) -> Constraint;
    /// The constraint of outputs.
    fn codomain(&self) -> Constraint;
    /// The event dims of the domain.
    fn domain_event_dim(&self) -> usize {
        constraint_event_dim(&self.domain())
    }
    /// The event dims of the codomain.
    fn codomain_event_dim(&self) -> usize {
        constraint_event_dim(&self.codomain())
    }
    /// Whether the transform is bijective.
    fn bijective(&self) -> bool {
        true
    }
    /// The sign of the Jacobian for monotone univariate transforms (`1`/`-1`, or a tensor).
    fn sign(&self) -> Result<Tensor> {
        Err(not_impl(self.name(), "sign"))
    }
    /// The output shape for an input shape.
    fn forward_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        Ok(shape.to_vec())
    }
    /// The input shape for an output shape.
    fn inverse_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        Ok(shape.to_vec())
    }
}

fn one() -> Result<Tensor> {
    Tensor::from_vec(vec![1.0f64], Vec::<usize>::new())
}

/// `y = exp(x)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpTransform;

impl Transform for ExpTransform {
    fn name(&self) -> &'static str {
        "ExpTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        x.exp()
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        y.log()
    }
    fn log_abs_det_jacobian(&self, x: &Tensor, _y: &Tensor) -> Result<Tensor> {
        Ok(x.clone())
    }
    fn domain(&self) -> Constraint {
        Constraint::Real
    }
    fn codomain(&self) -> Constraint {
        POSITIVE
    }
    fn sign(&self) -> Result<Tensor> {
        one()
    }
}

/// `y = loc + scale * x` over `event_dim` event dims (torch's `AffineTransform`).
#[derive(Clone)]
pub struct AffineTransform {
    /// The shift.
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    /// The event dims (0 for elementwise).
    pub event_dim: usize,
}

impl AffineTransform {
    /// `AffineTransform(loc, scale, event_dim)`.
    pub fn new(loc: &Tensor, scale: &Tensor, event_dim: usize) -> Self {
        AffineTransform { loc: loc.clone(), scale: scale.clone(), event_dim }
    }
}

impl Transform for AffineTransform {
    fn name(&self) -> &'static str {
        "AffineTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        self.loc.add(&self.scale.mul(x)?)
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        y.sub(&self.loc)?.div(&self.scale)
    }
    fn log_abs_det_jacobian(&self, x: &Tensor, _y: &Tensor) -> Result<Tensor> {
        let mut result = self.scale.abs()?.log()?;
        let mut shape = x.dims().to_vec();
        if self.event_dim > 0 {
            let r = result.dims().to_vec();
            let keep = r.len().saturating_sub(self.event_dim);
            let mut view: Vec<isize> = r[..keep].iter().map(|&d| d as isize).collect();
            view.push(-1);
            result = result.reshape(view)?.sum(-1isize, false)?;
            shape.truncate(shape.len().saturating_sub(self.event_dim));
        }
        result.expand(shape)
    }
    fn domain(&self) -> Constraint {
        independent(Constraint::Real, self.event_dim)
    }
    fn codomain(&self) -> Constraint {
        independent(Constraint::Real, self.event_dim)
    }
    fn sign(&self) -> Result<Tensor> {
        self.scale.sign()
    }
    fn forward_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        broadcast_shapes(&broadcast_shapes(shape, self.loc.dims())?, self.scale.dims())
    }
    fn inverse_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        broadcast_shapes(&broadcast_shapes(shape, self.loc.dims())?, self.scale.dims())
    }
}

/// `y = sigmoid(x)`, clipped to `[tiny, 1 - eps]` as torch's `_clipped_sigmoid`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SigmoidTransform;

impl Transform for SigmoidTransform {
    fn name(&self) -> &'static str {
        "SigmoidTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        let dt = x.dtype();
        x.sigmoid()?.clamp(Some(finfo_tiny(dt).into()), Some((1.0 - finfo_eps(dt)).into()))
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        let dt = y.dtype();
        let y = y.clamp(Some(finfo_tiny(dt).into()), Some((1.0 - finfo_eps(dt)).into()))?;
        y.log()?.sub(&y.neg()?.log1p()?)
    }
    fn log_abs_det_jacobian(&self, x: &Tensor, _y: &Tensor) -> Result<Tensor> {
        x.neg()?.softplus(1.0, 20.0)?.neg()?.sub(&x.softplus(1.0, 20.0)?)
    }
    fn domain(&self) -> Constraint {
        Constraint::Real
    }
    fn codomain(&self) -> Constraint {
        UNIT_INTERVAL
    }
    fn sign(&self) -> Result<Tensor> {
        one()
    }
}

/// `y = tanh(x)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TanhTransform;

impl Transform for TanhTransform {
    fn name(&self) -> &'static str {
        "TanhTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        x.tanh()
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        y.atanh()
    }
    /// torch's stable `2 (log 2 - x - softplus(-2x))`.
    fn log_abs_det_jacobian(&self, x: &Tensor, _y: &Tensor) -> Result<Tensor> {
        let sp = x.mul(-2.0)?.softplus(1.0, 20.0)?;
        x.rsub(std::f64::consts::LN_2)?.sub(&sp)?.mul(2.0)
    }
    fn domain(&self) -> Constraint {
        Constraint::Real
    }
    fn codomain(&self) -> Constraint {
        Constraint::Interval(-1.0, 1.0)
    }
    fn sign(&self) -> Result<Tensor> {
        one()
    }
}

/// `y = softmax(x)` over the last dim (not bijective; no Jacobian).
#[derive(Clone, Copy, Debug, Default)]
pub struct SoftmaxTransform;

impl Transform for SoftmaxTransform {
    fn name(&self) -> &'static str {
        "SoftmaxTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        let probs = x.sub(&x.amax(-1isize, true)?)?.exp()?;
        probs.div(&probs.sum(-1isize, true)?)
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        y.log()
    }
    fn domain(&self) -> Constraint {
        independent(Constraint::Real, 1)
    }
    fn codomain(&self) -> Constraint {
        Constraint::Simplex
    }
    fn bijective(&self) -> bool {
        false
    }
}

/// `y = x^exponent` on positive numbers.
#[derive(Clone)]
pub struct PowerTransform {
    /// The exponent.
    pub exponent: Tensor,
}

impl PowerTransform {
    /// `PowerTransform(exponent)`.
    pub fn new(exponent: &Tensor) -> Self {
        PowerTransform { exponent: exponent.clone() }
    }
}

impl Transform for PowerTransform {
    fn name(&self) -> &'static str {
        "PowerTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        x.pow(&self.exponent)
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        y.pow(&self.exponent.reciprocal()?)
    }
    fn log_abs_det_jacobian(&self, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        self.exponent.mul(y)?.div(x)?.abs()?.log()
    }
    fn domain(&self) -> Constraint {
        POSITIVE
    }
    fn codomain(&self) -> Constraint {
        POSITIVE
    }
    fn sign(&self) -> Result<Tensor> {
        self.exponent.sign()
    }
    fn forward_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        broadcast_shapes(shape, self.exponent.dims())
    }
    fn inverse_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        broadcast_shapes(shape, self.exponent.dims())
    }
}

/// `y = |x|` (not bijective; `inv` is the identity, as torch's).
#[derive(Clone, Copy, Debug, Default)]
pub struct AbsTransform;

impl Transform for AbsTransform {
    fn name(&self) -> &'static str {
        "AbsTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        x.abs()
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        Ok(y.clone())
    }
    fn domain(&self) -> Constraint {
        Constraint::Real
    }
    fn codomain(&self) -> Constraint {
        POSITIVE
    }
    fn bijective(&self) -> bool {
        false
    }
}

/// Transforms applied in order (torch's `ComposeTransform`).
#[derive(Clone)]
pub struct ComposeTransform {
    /// The parts, applied first to last.
    pub parts: Vec<Arc<dyn Transform>>,
}

impl ComposeTransform {
    /// `ComposeTransform(parts)`.
    pub fn new(parts: Vec<Arc<dyn Transform>>) -> Self {
        ComposeTransform { parts }
    }
}

impl Transform for ComposeTransform {
    fn name(&self) -> &'static str {
        "ComposeTransform"
    }
    fn call(&self, x: &Tensor) -> Result<Tensor> {
        let mut x = x.clone();
        for p in &self.parts {
            x = p.call(&x)?;
        }
        Ok(x)
    }
    fn inv(&self, y: &Tensor) -> Result<Tensor> {
        let mut y = y.clone();
        for p in self.parts.iter().rev() {
            y = p.inv(&y)?;
        }
        Ok(y)
    }
    fn log_abs_det_jacobian(&self, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        if self.parts.is_empty() {
            return x.zeros_like();
        }
        let mut xs = vec![x.clone()];
        for p in &self.parts[..self.parts.len() - 1] {
            let next = p.call(xs.last().unwrap_or(x))?;
            xs.push(next);
        }
        xs.push(y.clone());
        let mut event_dim = self.domain_event_dim() as isize;
        let mut total: Option<Tensor> = None;
        for (k, p) in self.parts.iter().enumerate() {
            let n = (event_dim - p.domain_event_dim() as isize).max(0) as usize;
            let term = sum_rightmost(&p.log_abs_det_jacobian(&xs[k], &xs[k + 1])?, n)?;
            total = Some(match total {
                None => term,
                Some(t) => t.add(&term)?,
            });
            event_dim += p.codomain_event_dim() as isize - p.domain_event_dim() as isize;
        }
        total.ok_or_else(|| Error::msg("ComposeTransform: no parts"))
    }
    fn domain(&self) -> Constraint {
        match self.parts.first() {
            None => Constraint::Real,
            Some(first) => {
                let d = first.domain();
                independent(d, self.domain_event_dim() - first.domain_event_dim())
            }
        }
    }
    fn codomain(&self) -> Constraint {
        match self.parts.last() {
            None => Constraint::Real,
            Some(last) => {
                let c = last.codomain();
                independent(c, self.codomain_event_dim() - last.codomain_event_dim())
            }
        }
    }
    fn domain_event_dim(&self) -> usize {
        let Some(last) = self.parts.last() else { return 0 };
        let mut e = last.codomain_event_dim() as isize;
        for p in self.parts.iter().rev() {
            e = e - p.codomain_event_dim() as isize + p.domain_event_dim() as isize;
            e = e.max(p.domain_event_dim() as isize);
        }
        e.max(0) as usize
    }
    fn codomain_event_dim(&self) -> usize {
        let Some(first) = self.parts.first() else { return 0 };
        let mut e = first.domain_event_dim() as isize;
        for p in &self.parts {
            e = e - p.domain_event_dim() as isize + p.codomain_event_dim() as isize;
            e = e.max(p.codomain_event_dim() as isize);
        }
        e.max(0) as usize
    }
    fn bijective(&self) -> bool {
        self.parts.iter().all(|p| p.bijective())
    }
    fn sign(&self) -> Result<Tensor> {
        let mut s = one()?;
        for p in &self.parts {
            s = s.mul(&p.sign()?)?;
        }
        Ok(s)
    }
    fn forward_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        let mut s = shape.to_vec();
        for p in &self.parts {
            s = p.forward_shape(&s)?;
        }
        Ok(s)
    }
    fn inverse_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        let mut s = shape.to_vec();
        for p in self.parts.iter().rev() {
            s = p.inverse_shape(&s)?;
        }
        Ok(s)
    }
}
