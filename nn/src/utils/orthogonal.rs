//! torch's `nn.utils.parametrizations.orthogonal`: a matrix (or a batch of matrices) kept with
//! orthonormal columns (tall) or rows (wide) through the matrix exponential or the Cayley map of a
//! skew-symmetric matrix, or a product of Householder reflectors, optionally on top of a stored
//! orthogonal `base` (the "dynamic trivialization"). State-dict keys are torch's:
//! `parametrizations.weight.original` and, with the trivialization,
//! `parametrizations.weight.0.base`.
//!
//! ```
//! use oxtorch_nn::utils::orthogonal::orthogonal;
//! use oxtorch_nn::{Linear, ModuleExt};
//! use oxtorch_tensor::Result;
//! # fn main() -> Result<()> {
//! let m = orthogonal(Linear::new(3, 3, true)?, "weight", None, true)?;
//! let keys: Vec<String> = m.state_dict().keys().map(String::from).collect();
//! assert_eq!(keys, ["bias", "parametrizations.weight.original", "parametrizations.weight.0.base"]);
//! let w = m.weight()?;
//! let gram = w.t()?.matmul(&w)?.to_f64_vec()?;
//! assert!((gram[0] - 1.0).abs() < 1e-5 && gram[1].abs() < 1e-5);
//! # Ok(()) }
//! ```

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{linalg, DType, Error, Result, Tensor};

use super::parametrize::{Parametrization, Parametrized};
use crate::module::{Buffer, Member, MemberMut, Module};

/// A module with an orthogonal parametrization on one tensor (what [`orthogonal`] returns).
pub type Orthogonal<M> = Parametrized<M, OrthogonalParametrization>;

/// How the orthogonal matrix is made from the original (torch's `_OrthMaps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrthogonalMap {
    /// `exp(A)` of the skew-symmetric `A` made of the lower triangle (`"matrix_exp"`)
    MatrixExp,
    /// the Cayley map `(I - A/2)⁻¹ (I + A/2)` of that `A` (`"cayley"`)
    Cayley,
    /// the Householder reflectors below the diagonal (`"householder"`)
    Householder,
}

impl OrthogonalMap {
    /// The map torch names `name`; another name is torch's error.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "matrix_exp" => Ok(OrthogonalMap::MatrixExp),
            "cayley" => Ok(OrthogonalMap::Cayley),
            "householder" => Ok(OrthogonalMap::Householder),
            other => Err(Error::msg(format!(
                "orthogonal_map has to be one of \"matrix_exp\", \"cayley\", \"householder\". Got: {other}"
            ))),
        }
    }

    /// torch's name of the map.
    pub fn name(self) -> &'static str {
        match self {
            OrthogonalMap::MatrixExp => "matrix_exp",
            OrthogonalMap::Cayley => "cayley",
            OrthogonalMap::Householder => "householder",
        }
    }
}

/// torch's `_Orthogonal` (the child `0`): the map and, with the trivialization, the buffer `base`.
struct OrthogonalFn {
    map: OrthogonalMap,
    /// torch's `use_trivialization` (the buffer `base` is registered, first as `None`)
    trivialization: bool,
    base: Option<Buffer>,
}

impl Module for OrthogonalFn {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        if let Some(base) = &self.base {
            f("base", Member::Buffer(&base.0));
        }
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        if let Some(base) = &mut self.base {
            f("base", MemberMut::Buffer(&mut base.0));
        }
    }

    fn type_name(&self) -> &'static str {
        "_Orthogonal"
    }
}

/// The rows and columns of a batch of matrices.
fn rows_cols(x: &Tensor) -> (usize, usize) {
    let d = x.dims();
    (d[d.len() - 2], d[d.len() - 1])
}

impl OrthogonalFn {
    /// torch's `_Orthogonal.forward(X)`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (n, k) = rows_cols(x);
        let transposed = n < k;
        let (x, n, k) = if transposed { (x.mT()?, k, n) } else { (x.clone(), n, k) };
        let q = match self.map {
            OrthogonalMap::MatrixExp | OrthogonalMap::Cayley => {
                let mut x = x.tril(0)?;
                if n != k {
                    let mut dims = x.dims().to_vec();
                    let last = dims.len() - 1;
                    dims[last] = n - k;
                    let zeros = Tensor::zeros(dims, x.same_options())?;
                    x = Tensor::cat(&[&x, &zeros], -1)?;
                }
                let a = x.sub(&x.mT()?)?;
                let q = if self.map == OrthogonalMap::MatrixExp {
                    a.matrix_exp()?
                } else {
                    let id = Tensor::eye(n, None, a.same_options())?;
                    linalg::solve(&id.sub(&a.mul(0.5)?)?, &id.add(&a.mul(0.5)?)?, true)?
                };
                if n != k {
                    q.narrow(-1, 0, k)?
                } else {
                    q
                }
            }
            OrthogonalMap::Householder => {
                let a = x.tril(-1)?;
                let tau = a.mul(&a)?.sum(-2isize, false)?.add(1.0)?.reciprocal()?.mul(2.0)?;
                let q = linalg::householder_product(&a, &tau)?;
                // torch's `X.diagonal(dim1=-2, dim2=-1).int()`: truncated, no gradient
                let signs = x.detach().diagonal(0, -2, -1)?.trunc()?.unsqueeze(-2)?;
                q.mul(&signs)?
            }
        };
        let q = match &self.base {
            Some(base) => base.matmul(&q)?,
            None => q,
        };
        if transposed {
            q.mT()
        } else {
            Ok(q)
        }
    }

    /// torch's `_Orthogonal.right_inverse(Q)` (under `no_grad`): the original to store for the
    /// value `q`; with the trivialization it sets `base` and returns `-I`. `None` for torch's
    /// `NotImplementedError` (matrix exponential or Cayley without trivialization), which
    /// registration reads as the identity.
    fn right_inverse(&mut self, q_init: &Tensor) -> Result<Option<Tensor>> {
        let (n, k) = rows_cols(q_init);
        let transpose = n < k;
        let (q, n, k) = if transpose { (q_init.mT()?, k, n) } else { (q_init.clone(), n, k) };
        if !self.trivialization {
            if self.map != OrthogonalMap::Householder {
                return Ok(None);
            }
            let a = geqrf_signs(&q)?;
            return Ok(Some(if transpose { a.mT()?.contiguous()? } else { a }));
        }
        let q = if n == k {
            if is_orthogonal(&q)? {
                q.copy()?
            } else {
                make_orthogonal(&q)?
            }
        } else {
            let mut dims = q.dims().to_vec();
            let last = dims.len() - 1;
            dims[last] = n - k;
            let noise = Tensor::randn(dims, q.same_options())?;
            make_orthogonal(&Tensor::cat(&[&q, &noise], -1)?)?
        };
        self.base = Some(Buffer(q.contiguous()?));
        // -I shaped like the value (each matrix of a batch)
        let (rows, cols) = rows_cols(q_init);
        let neg_id = Tensor::eye(rows, Some(cols), q_init.same_options())?.neg()?;
        Ok(Some(neg_id.broadcast_to(q_init.dims())?.contiguous()?))
    }
}

/// torch's `finfo(dtype).eps`.
fn finfo_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        DType::F16 => 0.0009765625,
        DType::BF16 => 0.0078125,
        _ => f64::from(f32::EPSILON),
    }
}

/// torch's `_is_orthogonal(Q)`: `allclose(Qᴴ Q, I, atol=10 n eps)` (default `rtol = 1e-5`).
fn is_orthogonal(q: &Tensor) -> Result<bool> {
    let (n, k) = rows_cols(q);
    if k == 0 {
        return Ok(true);
    }
    let eps = 10.0 * n as f64 * finfo_eps(q.dtype());
    let gram = q.mT()?.matmul(q)?.to_f64_vec()?;
    Ok(gram.iter().enumerate().all(|(i, &g)| {
        let within = i % (k * k);
        let id = if within / k == within % k { 1.0 } else { 0.0 };
        (g - id).abs() <= eps + 1e-5 * id
    }))
}

/// torch's `_make_orthogonal(A)` for a tall `A`: the `Q` of `A = QR` with `R`'s diagonal made
/// non-negative (`Q` times the signs of that diagonal).
fn make_orthogonal(a: &Tensor) -> Result<Tensor> {
    let (q, r) = linalg::qr(a, "reduced")?;
    let signs = r.diagonal(0, -2, -1)?.sign()?.unsqueeze(-2)?;
    q.mul(&signs)
}

/// What torch's right inverse of the Householder map without trivialization returns for a tall
/// `q` (`[*, n, k]`, `n ≥ k`): LAPACK's `geqrf` reflectors below the diagonal, the diagonal
/// replaced by the signs of `R`'s and negated where `tau` is 0. Computed on the host in float64
/// as LAPACK's unblocked `dgeqr2` / `dlarfg`.
fn geqrf_signs(q: &Tensor) -> Result<Tensor> {
    let (n, k) = rows_cols(q);
    let mut data = q.contiguous()?.to_f64_vec()?;
    let per = n * k;
    if per > 0 {
        for m in data.chunks_mut(per) {
            let at = |r: usize, c: usize| r * k + c;
            let mut taus = vec![0.0; k];
            for j in 0..k.min(n) {
                // dlarfg on column j, rows j..n
                let alpha = m[at(j, j)];
                let xnorm = (j + 1..n).map(|r| m[at(r, j)] * m[at(r, j)]).sum::<f64>().sqrt();
                if n - j <= 1 || xnorm == 0.0 {
                    taus[j] = 0.0;
                    continue;
                }
                let beta = -alpha.hypot(xnorm).copysign(alpha);
                let tau = (beta - alpha) / beta;
                let scale = 1.0 / (alpha - beta);
                for r in j + 1..n {
                    m[at(r, j)] *= scale;
                }
                m[at(j, j)] = beta;
                taus[j] = tau;
                // apply H = I - tau v vᵀ (v = [1; column j below]) to the columns right of j
                for c in j + 1..k {
                    let mut w = m[at(j, c)];
                    for r in j + 1..n {
                        w += m[at(r, j)] * m[at(r, c)];
                    }
                    m[at(j, c)] -= tau * w;
                    for r in j + 1..n {
                        m[at(r, c)] -= tau * w * m[at(r, j)];
                    }
                }
            }
            for (j, &tau) in taus.iter().enumerate().take(k.min(n)) {
                let d = m[at(j, j)];
                let sign = if d > 0.0 {
                    1.0
                } else if d < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                m[at(j, j)] = if tau == 0.0 { -sign } else { sign };
            }
        }
    }
    Tensor::from_vec_on(data, q.dims().to_vec(), q.device())?.to_dtype(q.dtype())
}

/// The orthogonal parametrization's `ParametrizationList`: the original tensor and the
/// `_Orthogonal` child (with its `base` under the trivialization).
pub struct OrthogonalParametrization {
    /// the unconstrained tensor (torch's `original`; `-I` right after registration with the
    /// trivialization)
    pub original: Tensor,
    func: OrthogonalFn,
}

impl OrthogonalParametrization {
    /// The map in use.
    pub fn orthogonal_map(&self) -> OrthogonalMap {
        self.func.map
    }

    /// The orthogonal `base` (`None` without the trivialization).
    pub fn base(&self) -> Option<&Tensor> {
        self.func.base.as_deref()
    }
}

impl Module for OrthogonalParametrization {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f("original", Member::Param(&self.original));
        f("0", Member::Child(&self.func));
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("original", MemberMut::Param(&mut self.original));
        f("0", MemberMut::Child(&mut self.func));
    }

    fn type_name(&self) -> &'static str {
        "ParametrizationList"
    }
}

impl Parametrization for OrthogonalParametrization {
    fn compute(&self) -> Result<Tensor> {
        self.func.forward(&self.original)
    }

    fn original(&self) -> Option<Tensor> {
        Some(self.original.clone())
    }
}

/// torch's `nn.utils.parametrizations.orthogonal(module, name="weight", orthogonal_map=None,
/// use_trivialization=True)`: the parameter `name` (a direct parameter of `module`, of 2 dims or
/// more: a batch of matrices) is kept orthogonal. `orthogonal_map` `None` takes
/// `"matrix_exp"` for square matrices and `"householder"` otherwise.
///
/// The original becomes what torch's `right_inverse` gives (in place, the parameter stays the same
/// tensor): with the trivialization `-I`, `base` the weight itself when orthogonal, else the
/// `Q` of its QR factorization (a tall matrix completed with normal draws, from this library's
/// generator, so a non-square `base` differs from torch's in its extra columns: load torch's state
/// dict to replay it); without it the weight unchanged (`"matrix_exp"`, `"cayley"`) or its
/// Householder reflectors (`"householder"`).
pub fn orthogonal<M: Module>(
    module: M,
    name: &str,
    orthogonal_map: Option<&str>,
    use_trivialization: bool,
) -> Result<Orthogonal<M>> {
    let mut weight = None;
    module.visit(&mut |n, member| {
        if let (true, Member::Param(t) | Member::Buffer(t)) = (n == name, member) {
            weight = Some(t.clone());
        }
    });
    let Some(weight) = weight else {
        return Err(Error::msg(format!(
            "Module '{}' has no parameter or buffer with name '{name}'",
            module.type_name()
        )));
    };
    if weight.rank() < 2 {
        return Err(Error::msg(format!(
            "Expected a matrix or batch of matrices. Got a tensor of {} dimensions.",
            weight.rank()
        )));
    }
    let map = match orthogonal_map {
        Some(name) => OrthogonalMap::from_name(name)?,
        None => {
            let (n, k) = rows_cols(&weight);
            if n == k {
                OrthogonalMap::MatrixExp
            } else {
                OrthogonalMap::Householder
            }
        }
    };
    Parametrized::register(
        module,
        name,
        |original| {
            let mut func = OrthogonalFn { map, trivialization: use_trivialization, base: None };
            let new = no_grad(|| func.right_inverse(&original.detach()))?;
            if let Some(new) = new {
                // in place: the parameter stays the same tensor (torch's `set_`)
                no_grad(|| original.copy_(&new).map(|_| ()))?;
            }
            Ok(OrthogonalParametrization { original: original.clone(), func })
        },
        true,
    )
}
