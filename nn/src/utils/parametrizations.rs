//! torch's `nn.utils.parametrizations`: [`weight_norm`] and [`spectral_norm`], as
//! [`Parametrized`] wrappers with torch's state-dict keys (`parametrizations.weight.original0` /
//! `original1` for weight norm; `parametrizations.weight.original` and
//! `parametrizations.weight.0._u` / `_v` for spectral norm), and [`weight_norm_compat`] to load
//! checkpoints written with the old `nn.utils.weight_norm` (`weight_g` / `weight_v`, as
//! wav2vec2's and EnCodec's on the Hugging Face hub).
//!
//! ```
//! use oxtorch_nn::utils::parametrizations::weight_norm;
//! use oxtorch_nn::{Forward, Linear, Module, ModuleExt};
//! use oxtorch_tensor::{Result, Tensor};
//! # fn main() -> Result<()> {
//! let m = weight_norm(Linear::new(3, 4, true)?, "weight", Some(0))?;
//! let keys: Vec<String> = m.state_dict().keys().map(String::from).collect();
//! assert_eq!(keys, ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]);
//! assert_eq!(m.type_name(), "ParametrizedLinear");
//! let y = m.forward(&Tensor::randn([2, 3], ())?)?;
//! y.sum_all()?.backward()?;
//! assert!(m.parametrization().original0.grad().is_some());
//! # Ok(()) }
//! ```

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

pub use super::orthogonal::{orthogonal, Orthogonal, OrthogonalMap, OrthogonalParametrization};
use super::parametrize::{Parametrization, Parametrized};
use crate::functional::normalize;
use crate::module::{Buffer, Member, MemberMut, Module, ModuleExt};
use crate::state_dict::StateDict;

/// A module with weight normalisation on one tensor (what [`weight_norm`] returns).
pub type WeightNorm<M> = Parametrized<M, WeightNormParametrization>;

/// A module with spectral normalisation on one tensor (what [`spectral_norm`] returns).
pub type SpectralNorm<M> = Parametrized<M, SpectralNormParametrization>;

/// torch's range error for a dimension of a `rank`-d tensor.
fn dim_error(dim: isize, rank: usize, comma: bool) -> Error {
    let r = rank as isize;
    let sep = if comma { "," } else { "" };
    Error::msg(format!(
        "Dimension out of range (expected to be in range of [-{r}, {}]{sep} but got {dim})",
        r - 1
    ))
}

/// torch's `norm_except_dim(v, 2, dim)`: the 2-norm over every dim but `dim`, kept as size-1
/// dims (over everything, 0-d, for `None`).
fn norm_except_dim(v: &Tensor, dim: Option<usize>) -> Result<Tensor> {
    match dim {
        None => v.norm(2.0, Vec::<isize>::new(), false),
        Some(d) => {
            let dims: Vec<isize> = (0..v.rank()).filter(|&i| i != d).map(|i| i as isize).collect();
            // (no other dim: each element is its own norm)
            if dims.is_empty() {
                v.abs()
            } else {
                v.norm(2.0, dims, true)
            }
        }
    }
}

/// torch's `_WeightNorm` (the child `0`, no members).
struct WeightNormFn;

impl Module for WeightNormFn {
    fn visit<'m>(&'m self, _f: &mut dyn FnMut(&str, Member<'m>)) {}
    fn visit_mut(&mut self, _f: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        "_WeightNorm"
    }
}

/// Weight normalisation's `ParametrizationList`: `w = g * v / ‖v‖`, the norm over every dim but
/// `dim` (torch's `torch._weight_norm(v, g, dim)`).
pub struct WeightNormParametrization {
    /// `g`, the magnitude (torch's `original0`: `‖w‖` over every dim but `dim`, size-1 dims kept)
    pub original0: Tensor,
    /// `v`, the direction (torch's `original1`: the original weight)
    pub original1: Tensor,
    /// the dim kept by the norm (`None`: the norm of the whole tensor)
    dim: Option<usize>,
    func: WeightNormFn,
}

impl WeightNormParametrization {
    /// The dim the norm keeps (`None`: the whole tensor's norm).
    pub fn dim(&self) -> Option<usize> {
        self.dim
    }
}

impl Module for WeightNormParametrization {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f("original0", Member::Param(&self.original0));
        f("original1", Member::Param(&self.original1));
        f("0", Member::Child(&self.func));
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("original0", MemberMut::Param(&mut self.original0));
        f("original1", MemberMut::Param(&mut self.original1));
        f("0", MemberMut::Child(&mut self.func));
    }

    fn type_name(&self) -> &'static str {
        "ParametrizationList"
    }
}

impl Parametrization for WeightNormParametrization {
    fn compute(&self) -> Result<Tensor> {
        let (g, v) = (&self.original0, &self.original1);
        v.mul(&g.div(&norm_except_dim(v, self.dim)?)?)
    }

    fn original(&self) -> Option<Tensor> {
        None
    }
}

/// torch's `nn.utils.parametrizations.weight_norm(module, name="weight", dim=0)`: `name` (a
/// direct parameter of `module`) becomes `g * v / ‖v‖`, `g` (`original0`) and `v` (`original1`,
/// the current weight itself) the trained parameters. The norm is over every dim but `dim`;
/// `None` takes the whole tensor's norm, and so does `Some(-1)` (torch's `_weight_norm` reads
/// -1 so, not as the last dim); another negative dim counts from the end.
pub fn weight_norm<M: Module>(module: M, name: &str, dim: Option<isize>) -> Result<WeightNorm<M>> {
    Parametrized::register(
        module,
        name,
        |weight| {
            let rank = weight.rank();
            let dim = match dim {
                None | Some(-1) => None,
                Some(d) if d >= rank as isize || d < -(rank as isize) => {
                    return Err(dim_error(d, rank, true))
                }
                Some(d) => Some(if d < 0 { (d + rank as isize) as usize } else { d as usize }),
            };
            // g is trainable when the weight is (torch copies requires_grad to both originals).
            let g = no_grad(|| norm_except_dim(weight, dim))?.requires_grad_(weight.requires_grad())?;
            Ok(WeightNormParametrization { original0: g, original1: weight.clone(), dim, func: WeightNormFn })
        },
        true,
    )
}

/// torch's `_SpectralNorm` (the child `0`): the power-iteration vectors `_u`, `_v` (only for a
/// weight of 2 dims or more) and its training flag.
struct SpectralNormFn {
    u: Option<Buffer>,
    v: Option<Buffer>,
    dim: usize,
    eps: f64,
    n_power_iterations: usize,
    training: bool,
}

impl SpectralNormFn {
    /// The weight as a matrix, `dim` first (torch's `_reshape_weight_to_matrix`).
    fn to_matrix(&self, weight: &Tensor) -> Result<Tensor> {
        let weight = if self.dim != 0 {
            let mut order = vec![self.dim as isize];
            order.extend((0..weight.rank()).filter(|&d| d != self.dim).map(|d| d as isize));
            weight.permute(order)?
        } else {
            weight.clone()
        };
        weight.flatten(1, -1)
    }

    /// `n` power iterations, updating `_u` and `_v` in place (torch's `_power_method`).
    fn power_method(&self, weight_mat: &Tensor, n: usize) -> Result<()> {
        let (Some(u), Some(v)) = (&self.u, &self.v) else { return Ok(()) };
        no_grad(|| {
            for _ in 0..n {
                u.copy_(&normalize(&weight_mat.mv(v)?, 2.0, 0, self.eps)?)?;
                v.copy_(&normalize(&weight_mat.t()?.mv(u)?, 2.0, 0, self.eps)?)?;
            }
            Ok(())
        })
    }
}

impl Module for SpectralNormFn {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        if let (Some(u), Some(v)) = (&self.u, &self.v) {
            f("_u", Member::Buffer(&u.0));
            f("_v", Member::Buffer(&v.0));
        }
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        if let (Some(u), Some(v)) = (&mut self.u, &mut self.v) {
            f("_u", MemberMut::Buffer(&mut u.0));
            f("_v", MemberMut::Buffer(&mut v.0));
        }
    }

    fn type_name(&self) -> &'static str {
        "_SpectralNorm"
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }

    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
}

/// Spectral normalisation's `ParametrizationList`: `w / σ(w)`, `σ` estimated by power iteration
/// (one more round of `n_power_iterations` at every use in training mode), or `w / ‖w‖` for a
/// vector.
pub struct SpectralNormParametrization {
    /// the unnormalised weight (torch's `original`: the original weight itself)
    pub original: Tensor,
    func: SpectralNormFn,
}

impl SpectralNormParametrization {
    /// The left singular vector estimate `_u` (`None` for a 1-d weight).
    pub fn u(&self) -> Option<&Tensor> {
        self.func.u.as_deref()
    }

    /// The right singular vector estimate `_v` (`None` for a 1-d weight).
    pub fn v(&self) -> Option<&Tensor> {
        self.func.v.as_deref()
    }

    /// The dim of the outputs (first in the matrix whose norm is estimated).
    pub fn dim(&self) -> usize {
        self.func.dim
    }
}

impl Module for SpectralNormParametrization {
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

impl Parametrization for SpectralNormParametrization {
    fn compute(&self) -> Result<Tensor> {
        let (weight, sn) = (&self.original, &self.func);
        let (Some(u), Some(v)) = (&sn.u, &sn.v) else {
            // a vector: exact
            return normalize(weight, 2.0, 0, sn.eps);
        };
        let weight_mat = sn.to_matrix(weight)?;
        if sn.training {
            sn.power_method(&weight_mat, sn.n_power_iterations)?;
        }
        // copies, so that the next update leaves this graph's saved vectors alone
        let (u, v) = (u.copy()?, v.copy()?);
        let sigma = u.vdot(&weight_mat.mv(&v)?)?;
        weight.div(&sigma)
    }

    fn original(&self) -> Option<Tensor> {
        Some(self.original.clone())
    }
}

/// torch's `nn.utils.parametrizations.spectral_norm(module, name="weight", n_power_iterations=1,
/// eps=1e-12, dim=None)`: `name` (a direct parameter of `module`) becomes `w / σ(w)`. `dim`
/// `None` is 1 for the transposed convolutions, else 0. `_u` and `_v` start as normalised
/// normal draws improved by 15 power iterations (and, in training mode, one more round at
/// registration, as torch's consistency check runs the parametrization once); their draws come
/// from this library's generator, so they differ from torch's: load torch's by key.
pub fn spectral_norm<M: Module>(
    module: M,
    name: &str,
    n_power_iterations: usize,
    eps: f64,
    dim: Option<isize>,
) -> Result<SpectralNorm<M>> {
    let mut present = false;
    module.visit(&mut |n, member| present |= n == name && matches!(member, Member::Param(_)));
    if !present {
        return Err(Error::msg(format!(
            "Module '{}' has no parameter or buffer with name '{name}'",
            module.type_name()
        )));
    }
    let transposed = module.type_name().starts_with("ConvTranspose");
    let dim = dim.unwrap_or(if transposed { 1 } else { 0 });
    Parametrized::register(
        module,
        name,
        |weight| {
            let rank = weight.rank();
            if dim >= rank as isize || dim < -(rank as isize) {
                return Err(dim_error(dim, rank, false));
            }
            if n_power_iterations == 0 {
                return Err(Error::msg(format!(
                    "Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
                )));
            }
            let dim = if dim < 0 { (dim + rank as isize) as usize } else { dim as usize };
            let mut func = SpectralNormFn { u: None, v: None, dim, eps, n_power_iterations, training: true };
            if rank > 1 {
                let mat = no_grad(|| func.to_matrix(weight))?;
                let (h, w) = (mat.dims()[0], mat.dims()[1]);
                let draw = |n: usize| -> Result<Buffer> {
                    let t = Tensor::randn([n], (mat.dtype(), mat.device()))?;
                    Ok(Buffer(normalize(&t, 2.0, 0, eps)?))
                };
                func.u = Some(draw(h)?);
                func.v = Some(draw(w)?);
                func.power_method(&mat, 15)?;
            }
            Ok(SpectralNormParametrization { original: weight.clone(), func })
        },
        false,
    )
}

/// torch's `_weight_norm_compat_hook` for a whole model: a copy of `sd` in which every pair
/// `<prefix><name>_g`, `<prefix><name>_v` (the old `nn.utils.weight_norm`'s parameters) is
/// renamed `<prefix>parametrizations.<name>.original0` / `original1` where `model` has a weight
/// norm there (both old keys present, as torch requires). Load the result as usual:
/// `model.load_state_dict(&weight_norm_compat(&model, &sd), true)`.
pub fn weight_norm_compat(model: &dyn Module, sd: &StateDict) -> StateDict {
    let own = model.state_dict();
    let mut renames: Vec<(String, String)> = Vec::new();
    for key in own.keys() {
        let Some(base) = key.strip_suffix(".original0") else { continue };
        let Some(at) = base.rfind("parametrizations.") else { continue };
        let (prefix, name) = (&base[..at], &base[at + "parametrizations.".len()..]);
        let second = format!("{base}.original1");
        if (!prefix.is_empty() && !prefix.ends_with('.')) || own.get(&second).is_none() {
            continue;
        }
        let (g, v) = (format!("{prefix}{name}_g"), format!("{prefix}{name}_v"));
        if sd.get(&g).is_some() && sd.get(&v).is_some() {
            renames.push((g, key.to_string()));
            renames.push((v, second));
        }
    }
    let mut out = StateDict::new();
    for (key, t) in sd.iter() {
        let key = renames.iter().find(|(old, _)| old == key).map_or(key, |(_, new)| new.as_str());
        out.insert(key, t.clone());
    }
    out
}
