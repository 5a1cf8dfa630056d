//! The rest of `torch.special` as Tensor methods: erfcx, log_ndtr, ndtri, the Hurwitz zeta
//! function, the regularized incomplete gamma functions (gammainc/gammaincc = igamma/igammac),
//! Bessel functions of the first and second kind (bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1,
//! scaled_modified_bessel_k0/k1, spherical_bessel_j0), airy_ai and the orthogonal polynomials
//! (Chebyshev T/U/V/W and their shifted forms, Hermite H/He, Laguerre L, Legendre P).
//!
//! Values are torch's CPU kernels (`special_kernels.rs`) evaluated elementwise on the host in the
//! tensor's own float type (f32 or f64; integers and bool promote to the default float), then put
//! back on the tensor's device. Half types are torch's refusal, except for gammainc/gammaincc,
//! which compute in f32. Gradients are derivatives.yaml's formulas as custom functions; the
//! functions torch does not differentiate return tensors without history, and the inputs torch
//! marks `not_implemented` error in backward with torch's message.
//!
//! Cost, as in torch: the polynomials run their three-term recurrence up to the degree `n` where
//! torch does (Laguerre for `x > 0`, Legendre inside `(-1, 1)`, Chebyshev just outside `[-1, 1]`),
//! and `zeta(x, q)` shifts a negative non-integer `q` one step at a time, so a degree or `|q|` of
//! 10⁹ takes seconds per element: a service taking them from users should bound them.

use oxtorch_core::ops::BinaryOp;
use oxtorch_core::{DType, Error, Result, ResultTypeState, Scalar};

use super::special_kernels::{self as k, Poly};
use crate::autograd::{Function, FunctionCtx};
use crate::ops::elementwise::{binary_dtype, prepare_pair};
use crate::ops::Operand;
use crate::Tensor;

/// A unary special function: torch's op name and its two kernels.
#[derive(Clone, Copy)]
struct Unary {
    name: &'static str,
    f64: fn(f64) -> f64,
    f32: fn(f32) -> f32,
}

/// `f` applied elementwise on the host to a float32 or float64 tensor (no history).
fn host_unary(x: &Tensor, f: Unary) -> Result<Tensor> {
    let dims = x.dims().to_vec();
    let x = x.detach();
    match x.dtype() {
        DType::F64 => {
            Tensor::from_vec_on(x.to_vec::<f64>()?.into_iter().map(f.f64).collect(), dims, x.device())
        }
        DType::F32 => {
            Tensor::from_vec_on(x.to_vec::<f32>()?.into_iter().map(f.f32).collect(), dims, x.device())
        }
        other => Err(Error::UnsupportedDType { op: f.name, dtype: other }),
    }
}

/// `f` applied elementwise on the host to two float32 or float64 tensors of one shape and dtype.
fn host_binary(
    a: &Tensor,
    b: &Tensor,
    name: &'static str,
    f64f: fn(f64, f64) -> f64,
    f32f: fn(f32, f32) -> f32,
) -> Result<Tensor> {
    let dims = a.dims().to_vec();
    let (a, b) = (a.detach(), b.detach());
    match a.dtype() {
        DType::F64 => {
            let v = a.to_vec::<f64>()?.into_iter().zip(b.to_vec::<f64>()?).map(|(x, y)| f64f(x, y)).collect();
            Tensor::from_vec_on(v, dims, a.device())
        }
        DType::F32 => {
            let v = a.to_vec::<f32>()?.into_iter().zip(b.to_vec::<f32>()?).map(|(x, y)| f32f(x, y)).collect();
            Tensor::from_vec_on(v, dims, a.device())
        }
        other => Err(Error::UnsupportedDType { op: name, dtype: other }),
    }
}

/// The float dtype a unary special function computes in: integers and bool promote to the default
/// float dtype; half types are torch's `"<op>_cpu" not implemented for 'Half'`.
fn unary_input(x: &Tensor, cpu_name: &'static str) -> Result<Tensor> {
    match x.dtype() {
        DType::F32 | DType::F64 => Ok(x.clone()),
        d if d.is_float() => Err(Error::UnsupportedDType { op: cpu_name, dtype: d }),
        _ => x.to_dtype(DType::default_float()),
    }
}

/// The unary functions with a gradient.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Diff {
    Erfcx,
    LogNdtr,
    Ndtri,
    J0,
    J1,
    Y0,
    Y1,
    I0,
    I1,
    K0,
    K1,
}

impl Diff {
    fn kernel(self) -> Unary {
        macro_rules! u {
            ($name:literal, $f:path) => {
                Unary { name: $name, f64: $f, f32: $f }
            };
        }
        match self {
            Diff::Erfcx => u!("erfcx_cpu", k::erfcx),
            Diff::LogNdtr => u!("log_ndtr_cpu", k::log_ndtr),
            Diff::Ndtri => u!("ndtri_cpu", k::ndtri),
            Diff::J0 => u!("bessel_j0_cpu", k::bessel_j0),
            Diff::J1 => u!("bessel_j1_cpu", k::bessel_j1),
            Diff::Y0 => u!("bessel_y0_cpu", k::bessel_y0),
            Diff::Y1 => u!("bessel_y1_cpu", k::bessel_y1),
            Diff::I0 => u!("modified_bessel_i0_cpu", k::modified_bessel_i0),
            Diff::I1 => u!("modified_bessel_i1_cpu", k::modified_bessel_i1),
            Diff::K0 => Unary {
                name: "modified_bessel_k0_cpu",
                f64: |x| k::modified_bessel_k0(x, false),
                f32: |x| k::modified_bessel_k0(x, false),
            },
            Diff::K1 => Unary {
                name: "modified_bessel_k1_cpu",
                f64: |x| k::modified_bessel_k1(x, false),
                f32: |x| k::modified_bessel_k1(x, false),
            },
        }
    }
}

/// One differentiable unary function with derivatives.yaml's formula.
struct DiffFn(Diff);

impl Function for DiffFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        Ok(vec![host_unary(&inputs[0], self.0.kernel())?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        let g = &grads[0];
        // The result, recomputed so that it carries history under create_graph.
        let result = || x.special_diff(self.0);
        let d = match self.0 {
            // (2 x erfcx(x) - 2/√π)
            Diff::Erfcx => x.mul(&result()?)?.mul(2.0)?.sub(std::f64::consts::FRAC_2_SQRT_PI)?,
            // exp(-(log_ndtr(x) + x²/2)) / √(2π)
            Diff::LogNdtr => result()?.add(&x.square()?.mul(0.5)?)?.neg()?.exp()?.mul(0.3989422804014327)?,
            // √(2π) exp(ndtri(x)²/2)
            Diff::Ndtri => result()?.square()?.mul(0.5)?.exp()?.mul(2.5066282746310002)?,
            Diff::J0 => x.special_bessel_j1()?.neg()?,
            Diff::Y0 => x.special_bessel_y1()?.neg()?,
            Diff::I0 => x.special_modified_bessel_i1()?,
            Diff::K0 => x.special_modified_bessel_k1()?.neg()?,
            // -(k0(x) + k1(x)/x)
            Diff::K1 => x.special_modified_bessel_k0()?.add(&result()?.div(x)?)?.neg()?,
            // y0(x) - y1(x)/x, +∞ at 0
            Diff::Y1 => {
                let v = x.special_bessel_y0()?.sub(&result()?.div(x)?)?;
                Tensor::where_cond(&x.eq(0.0)?, f64::INFINITY, &v)?
            }
            // torch's bessel_j1_backward / i1_backward: the formula at a safe x, 0.5 where |x| <= eps
            Diff::J1 | Diff::I1 => {
                let eps = if x.dtype() == DType::F64 { f64::EPSILON } else { f32::EPSILON as f64 };
                // (NaN is not tiny: its gradient is NaN, as torch's)
                let not_tiny = x.abs()?.le(eps)?.logical_not()?;
                let safe = Tensor::where_cond(&not_tiny, x, eps)?;
                let first = if self.0 == Diff::J1 {
                    safe.special_bessel_j0()?
                } else {
                    safe.special_modified_bessel_i0()?
                };
                let gradx = first.sub(&result()?.div(&safe)?)?;
                Tensor::where_cond(&not_tiny, &gradx, 0.5)?
            }
        };
        Ok(vec![Some(g.mul(&d)?)])
    }

    fn name(&self) -> &'static str {
        match self.0 {
            Diff::Erfcx => "SpecialErfcxBackward0",
            Diff::LogNdtr => "SpecialLogNdtrBackward0",
            Diff::Ndtri => "SpecialNdtriBackward0",
            Diff::J0 => "SpecialBesselJ0Backward0",
            Diff::J1 => "SpecialBesselJ1Backward0",
            Diff::Y0 => "SpecialBesselY0Backward0",
            Diff::Y1 => "SpecialBesselY1Backward0",
            Diff::I0 => "SpecialModifiedBesselI0Backward0",
            Diff::I1 => "SpecialModifiedBesselI1Backward0",
            Diff::K0 => "SpecialModifiedBesselK0Backward0",
            Diff::K1 => "SpecialModifiedBesselK1Backward0",
        }
    }
}

/// zeta / igamma / igammac: the gradient w.r.t. the second input; the first is not implemented.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pair {
    Zeta,
    Igamma,
    Igammac,
}

struct PairFn(Pair);

impl Function for PairFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0], &inputs[1]]);
        let (a, b) = (&inputs[0], &inputs[1]);
        let out = match self.0 {
            Pair::Zeta => host_binary(a, b, "zeta_cpu", k::zeta, |x, q| k::zeta(x, q) as f32)?,
            Pair::Igamma => host_binary(a, b, "igamma_cpu", k::igamma, k::igamma)?,
            Pair::Igammac => host_binary(a, b, "igammac_cpu", k::igammac, k::igammac)?,
        };
        Ok(vec![out])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (a, x) = (&saved[0], &saved[1]);
        let g = &grads[0];
        if ctx.needs_input_grad()[0] {
            let name = match self.0 {
                Pair::Zeta => "zeta",
                Pair::Igamma => "igamma: input",
                Pair::Igammac => "igammac: input",
            };
            return Err(Error::msg(format!("the derivative for '{name}' is not implemented.")));
        }
        let dx = match self.0 {
            // -s ζ(s + 1, q)
            Pair::Zeta => g.mul(&a.neg()?)?.mul(&a.add(1.0)?.special_zeta(x)?)?,
            // ± exp((a - 1) ln x - x - lgamma(a))
            Pair::Igamma | Pair::Igammac => {
                let d = a.sub(1.0)?.mul(&x.log()?)?.sub(x)?.sub(&a.lgamma()?)?.exp()?;
                let d = if self.0 == Pair::Igammac { d.neg()? } else { d };
                g.mul(&d)?
            }
        };
        Ok(vec![None, Some(dx)])
    }

    fn name(&self) -> &'static str {
        match self.0 {
            Pair::Zeta => "SpecialZetaBackward0",
            Pair::Igamma => "IgammaBackward0",
            Pair::Igammac => "IgammacBackward0",
        }
    }
}

impl Tensor {
    fn special_diff(&self, kind: Diff) -> Result<Tensor> {
        let x = unary_input(self, kind.kernel().name)?;
        Ok(DiffFn(kind).apply(&[x])?.remove(0))
    }

    fn special_plain(&self, f: Unary) -> Result<Tensor> {
        host_unary(&unary_input(self, f.name)?, f)
    }

    /// The scaled complementary error function `exp(x²) erfc(x)` (torch's `special.erfcx`);
    /// integers promote to the default float dtype, half types are torch's error. Gradient
    /// `2 x erfcx(x) - 2/√π`.
    pub fn special_erfcx(&self) -> Result<Tensor> {
        self.special_diff(Diff::Erfcx)
    }

    /// The log of the standard normal CDF (torch's `special.log_ndtr`), with
    /// [`Tensor::special_erfcx`]'s dtype rules; gradient `exp(-log_ndtr(x) - x²/2) / √(2π)`.
    pub fn special_log_ndtr(&self) -> Result<Tensor> {
        self.special_diff(Diff::LogNdtr)
    }

    /// The inverse of the standard normal CDF (torch's `special.ndtri`): ∓∞ at 0 and 1, NaN
    /// outside `[0, 1]`; gradient `√(2π) exp(ndtri(x)²/2)`.
    pub fn special_ndtri(&self) -> Result<Tensor> {
        self.special_diff(Diff::Ndtri)
    }

    /// The Bessel function of the first kind of order 0 (torch's `special.bessel_j0`); gradient
    /// `-J1(x)`.
    pub fn special_bessel_j0(&self) -> Result<Tensor> {
        self.special_diff(Diff::J0)
    }

    /// The Bessel function of the first kind of order 1 (torch's `special.bessel_j1`); gradient
    /// `J0(x) - J1(x)/x` (0.5 where `|x|` is at most the dtype's epsilon).
    pub fn special_bessel_j1(&self) -> Result<Tensor> {
        self.special_diff(Diff::J1)
    }

    /// The Bessel function of the second kind of order 0 (torch's `special.bessel_y0`): -∞ at 0,
    /// NaN below; gradient `-Y1(x)`.
    pub fn special_bessel_y0(&self) -> Result<Tensor> {
        self.special_diff(Diff::Y0)
    }

    /// The Bessel function of the second kind of order 1 (torch's `special.bessel_y1`); gradient
    /// `Y0(x) - Y1(x)/x`.
    pub fn special_bessel_y1(&self) -> Result<Tensor> {
        self.special_diff(Diff::Y1)
    }

    /// The modified Bessel function of the first kind of order 0 (torch's
    /// `special.modified_bessel_i0`); gradient `I1(x)`.
    pub fn special_modified_bessel_i0(&self) -> Result<Tensor> {
        self.special_diff(Diff::I0)
    }

    /// The modified Bessel function of the first kind of order 1 (torch's
    /// `special.modified_bessel_i1`); gradient `I0(x) - I1(x)/x` (0.5 near 0).
    pub fn special_modified_bessel_i1(&self) -> Result<Tensor> {
        self.special_diff(Diff::I1)
    }

    /// The modified Bessel function of the second kind of order 0 (torch's
    /// `special.modified_bessel_k0`): +∞ at 0, NaN below; gradient `-K1(x)`.
    pub fn special_modified_bessel_k0(&self) -> Result<Tensor> {
        self.special_diff(Diff::K0)
    }

    /// The modified Bessel function of the second kind of order 1 (torch's
    /// `special.modified_bessel_k1`); gradient `-(K0(x) + K1(x)/x)`.
    pub fn special_modified_bessel_k1(&self) -> Result<Tensor> {
        self.special_diff(Diff::K1)
    }

    /// `exp(x) K0(x)` (torch's `special.scaled_modified_bessel_k0`); not differentiable.
    pub fn special_scaled_modified_bessel_k0(&self) -> Result<Tensor> {
        self.special_plain(Unary {
            name: "scaled_modified_bessel_k0_cpu",
            f64: |x| k::modified_bessel_k0(x, true),
            f32: |x| k::modified_bessel_k0(x, true),
        })
    }

    /// `exp(x) K1(x)` (torch's `special.scaled_modified_bessel_k1`); not differentiable.
    pub fn special_scaled_modified_bessel_k1(&self) -> Result<Tensor> {
        self.special_plain(Unary {
            name: "scaled_modified_bessel_k1_cpu",
            f64: |x| k::modified_bessel_k1(x, true),
            f32: |x| k::modified_bessel_k1(x, true),
        })
    }

    /// The spherical Bessel function `sin(x)/x` (torch's `special.spherical_bessel_j0`); not
    /// differentiable.
    pub fn special_spherical_bessel_j0(&self) -> Result<Tensor> {
        self.special_plain(Unary {
            name: "spherical_bessel_j0_cpu",
            f64: k::spherical_bessel_j0,
            f32: k::spherical_bessel_j0,
        })
    }

    /// The Airy function Ai (torch's `special.airy_ai`); not differentiable.
    pub fn special_airy_ai(&self) -> Result<Tensor> {
        self.special_plain(Unary { name: "airy_ai_cpu", f64: k::airy_ai, f32: k::airy_ai })
    }

    /// The Hurwitz zeta function `ζ(self, q)` (torch's `special.zeta`); integers promote to the
    /// default float dtype, half types are torch's error. Differentiable in `q` only
    /// (`-x ζ(x + 1, q)`); a gradient for `self` is torch's "not implemented" error.
    pub fn special_zeta(&self, q: impl Into<Operand>) -> Result<Tensor> {
        let q = q.into();
        let dtype = binary_dtype(BinaryOp::Div, self, &q);
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(Error::UnsupportedDType { op: "zeta_cpu", dtype });
        }
        let (a, b) = prepare_pair(self, &q, dtype)?;
        PairFn(Pair::Zeta).apply(&[a, b]).map(|mut v| v.remove(0))
    }

    /// `ζ(x, q)` for a number `x` (torch's `special.zeta(scalar, tensor)`).
    pub fn special_zeta_scalar(x: impl Into<Scalar>, q: &Tensor) -> Result<Tensor> {
        let x = Operand::from(x.into());
        let dtype = binary_dtype(BinaryOp::Div, q, &x);
        x.to_tensor(dtype, q.device())?.special_zeta(q)
    }

    /// The regularized lower incomplete gamma function `P(self, x)` (torch's `special.gammainc`,
    /// `igamma`), in the promoted dtype of the two; integer results are torch's error, half types
    /// compute in float32. Differentiable in `x` only.
    pub fn special_gammainc(&self, x: &Tensor) -> Result<Tensor> {
        self.igamma_pair(x, Pair::Igamma, "igamma_cpu")
    }

    /// The regularized upper incomplete gamma function `Q(self, x)` (torch's `special.gammaincc`,
    /// `igammac`), with [`Tensor::special_gammainc`]'s rules.
    pub fn special_gammaincc(&self, x: &Tensor) -> Result<Tensor> {
        self.igamma_pair(x, Pair::Igammac, "igammac_cpu")
    }

    fn igamma_pair(&self, x: &Tensor, kind: Pair, name: &'static str) -> Result<Tensor> {
        let dtype =
            ResultTypeState::default().tensor(self.dtype(), self.rank()).tensor(x.dtype(), x.rank()).result();
        if !dtype.is_float() {
            return Err(Error::UnsupportedDType { op: name, dtype });
        }
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        let (a, b) = prepare_pair(self, &Operand::from(x), acc)?;
        PairFn(kind).apply(&[a, b])?.remove(0).to_dtype(dtype)
    }

    /// The orthogonal polynomial `kind` of degree `n` at `self` (torch's kernels: `n` truncated to
    /// an integer, 0 for negative `n`); not differentiable.
    fn special_polynomial(&self, n: Operand, kind: Poly, name: &'static str) -> Result<Tensor> {
        let dtype = binary_dtype(BinaryOp::Div, self, &n);
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(Error::UnsupportedDType { op: name, dtype });
        }
        let (x, n) = prepare_pair(self, &n, dtype)?;
        let (dims, device) = (x.dims().to_vec(), x.device());
        let (x, n) = (x.detach(), n.detach());
        if dtype == DType::F64 {
            let v = x
                .to_vec::<f64>()?
                .into_iter()
                .zip(n.to_vec::<f64>()?)
                .map(|(x, n)| k::polynomial(kind, x, n))
                .collect();
            Tensor::from_vec_on(v, dims, device)
        } else {
            let v = x
                .to_vec::<f32>()?
                .into_iter()
                .zip(n.to_vec::<f32>()?)
                .map(|(x, n)| k::polynomial(kind, x, n))
                .collect();
            Tensor::from_vec_on(v, dims, device)
        }
    }
}

/// Declares the twelve polynomial methods.
macro_rules! polynomials {
    ($($method:ident, $kind:ident, $cpu:literal, $doc:literal;)*) => {
        impl Tensor {
            $(
                #[doc = $doc]
                #[doc = ""]
                #[doc = "`n` is a tensor or a number (truncated to an integer; negative gives 0); integers promote"]
                #[doc = "to the default float dtype, half types are torch's error; not differentiable."]
                pub fn $method(&self, n: impl Into<Operand>) -> Result<Tensor> {
                    self.special_polynomial(n.into(), Poly::$kind, $cpu)
                }
            )*
        }
    };
}

polynomials! {
    special_chebyshev_polynomial_t, ChebyshevT, "chebyshev_polynomial_t_cpu", "The Chebyshev polynomial of the first kind `T_n(self)` (torch's `special.chebyshev_polynomial_t`).";
    special_chebyshev_polynomial_u, ChebyshevU, "chebyshev_polynomial_u_cpu", "The Chebyshev polynomial of the second kind `U_n(self)` (torch's `special.chebyshev_polynomial_u`).";
    special_chebyshev_polynomial_v, ChebyshevV, "chebyshev_polynomial_v_cpu", "The Chebyshev polynomial of the third kind `V_n(self)` (torch's `special.chebyshev_polynomial_v`).";
    special_chebyshev_polynomial_w, ChebyshevW, "chebyshev_polynomial_w_cpu", "The Chebyshev polynomial of the fourth kind `W_n(self)` (torch's `special.chebyshev_polynomial_w`).";
    special_shifted_chebyshev_polynomial_t, ShiftedT, "shifted_chebyshev_polynomial_t_cpu", "The shifted Chebyshev polynomial `T*_n(self) = T_n(2 self - 1)` (torch's `special.shifted_chebyshev_polynomial_t`).";
    special_shifted_chebyshev_polynomial_u, ShiftedU, "shifted_chebyshev_polynomial_u_cpu", "The shifted Chebyshev polynomial `U*_n(self)` (torch's `special.shifted_chebyshev_polynomial_u`).";
    special_shifted_chebyshev_polynomial_v, ShiftedV, "shifted_chebyshev_polynomial_v_cpu", "The shifted Chebyshev polynomial `V*_n(self)` (torch's `special.shifted_chebyshev_polynomial_v`).";
    special_shifted_chebyshev_polynomial_w, ShiftedW, "shifted_chebyshev_polynomial_w_cpu", "The shifted Chebyshev polynomial `W*_n(self)` (torch's `special.shifted_chebyshev_polynomial_w`).";
    special_hermite_polynomial_h, HermiteH, "hermite_polynomial_h_cpu", "The physicists' Hermite polynomial `H_n(self)` (torch's `special.hermite_polynomial_h`; NaN above degree 128 in f32, 512 in f64).";
    special_hermite_polynomial_he, HermiteHe, "hermite_polynomial_he_cpu", "The probabilists' Hermite polynomial `He_n(self)` (torch's `special.hermite_polynomial_he`; NaN above degree 128 in f32, 512 in f64).";
    special_laguerre_polynomial_l, Laguerre, "laguerre_polynomial_l_cpu", "The Laguerre polynomial `L_n(self)` (torch's `special.laguerre_polynomial_l`).";
    special_legendre_polynomial_p, Legendre, "legendre_polynomial_p_cpu", "The Legendre polynomial `P_n(self)` (torch's `special.legendre_polynomial_p`).";
}
