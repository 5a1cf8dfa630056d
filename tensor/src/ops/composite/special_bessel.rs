//! Modified Bessel functions of the first kind, evaluated as torch's CPU kernels do (Cephes'
//! Chebyshev expansions over `[0, 8]` and `(8, ∞)`, the two branches picked with `where`): `i0`,
//! `special.i0e`, `special.i1`, `special.i1e`, with torch's gradients; and `ldexp`.

#![allow(clippy::excessive_precision)]

use oxtorch_core::{DType, Error, Result};

use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// Chebyshev coefficients of `exp(-x) I0(x)` on `[0, 8]` (Cephes; torch's
/// `chebyshev_coefficients_i0e_A`, used for float too).
const I0E_A: [f64; 30] = [
    -4.41534164647933937950E-18,
    3.33079451882223809783E-17,
    -2.43127984654795469359E-16,
    1.71539128555513303061E-15,
    -1.16853328779934516808E-14,
    7.67618549860493561688E-14,
    -4.85644678311192946090E-13,
    2.95505266312963983461E-12,
    -1.72682629144155570723E-11,
    9.67580903537323691224E-11,
    -5.18979560163526290666E-10,
    2.65982372468238665035E-9,
    -1.30002500998624804212E-8,
    6.04699502254191894932E-8,
    -2.67079385394061173391E-7,
    1.11738753912010371815E-6,
    -4.41673835845875056359E-6,
    1.64484480707288970893E-5,
    -5.75419501008210370398E-5,
    1.88502885095841655729E-4,
    -5.76375574538582365885E-4,
    1.63947561694133579842E-3,
    -4.32430999505057594430E-3,
    1.05464603945949983183E-2,
    -2.37374148058994688156E-2,
    4.93052842396707084878E-2,
    -9.49010970480476444210E-2,
    1.71620901522208775349E-1,
    -3.04682672343198398683E-1,
    6.76795274409476084995E-1,
];

/// Chebyshev coefficients of `exp(-x) sqrt(x) I0(x)` on `(8, ∞)` (torch's
/// `chebyshev_coefficients_i0e_B`, used for float too).
const I0E_B: [f64; 25] = [
    -7.23318048787475395456E-18,
    -4.83050448594418207126E-18,
    4.46562142029675999901E-17,
    3.46122286769746109310E-17,
    -2.82762398051658348494E-16,
    -3.42548561967721913462E-16,
    1.77256013305652638360E-15,
    3.81168066935262242075E-15,
    -9.55484669882830764870E-15,
    -4.15056934728722208663E-14,
    1.54008621752140982691E-14,
    3.85277838274214270114E-13,
    7.18012445138366623367E-13,
    -1.79417853150680611778E-12,
    -1.32158118404477131188E-11,
    -3.14991652796324136454E-11,
    1.18891471078464383424E-11,
    4.94060238822496958910E-10,
    3.39623202570838634515E-9,
    2.26666899049817806459E-8,
    2.04891858946906374183E-7,
    2.89137052083475648297E-6,
    6.88975834691682398426E-5,
    3.36911647825569408990E-3,
    8.04490411014108831608E-1,
];

/// Chebyshev coefficients of `exp(-x) I1(x) / x` on `[0, 8]` (torch's double
/// `chebyshev_coefficients_i1e_A`).
const I1E_A: [f64; 29] = [
    2.77791411276104639959E-18,
    -2.11142121435816608115E-17,
    1.55363195773620046921E-16,
    -1.10559694773538630805E-15,
    7.60068429473540693410E-15,
    -5.04218550472791168711E-14,
    3.22379336594557470981E-13,
    -1.98397439776494371520E-12,
    1.17361862988909016308E-11,
    -6.66348972350202774223E-11,
    3.62559028155211703701E-10,
    -1.88724975172282928790E-9,
    9.38153738649577178388E-9,
    -4.44505912879632808065E-8,
    2.00329475355213526229E-7,
    -8.56872026469545474066E-7,
    3.47025130813767847674E-6,
    -1.32731636560394358279E-5,
    4.78156510755005422638E-5,
    -1.61760815825896745588E-4,
    5.12285956168575772895E-4,
    -1.51357245063125314899E-3,
    4.15642294431288815669E-3,
    -1.05640848946261981558E-2,
    2.47264490306265168283E-2,
    -5.29459812080949914269E-2,
    1.02643658689847095384E-1,
    -1.76416518357834055153E-1,
    2.52587186443633654823E-1,
];

/// torch's float `chebyshev_coefficients_i1e_A`: the last 17 of [`I1E_A`], written as float
/// literals (rounded once from decimal, as C++'s `f` suffix does).
const I1E_A_F32: [f32; 17] = [
    9.38153738649577178388E-9,
    -4.44505912879632808065E-8,
    2.00329475355213526229E-7,
    -8.56872026469545474066E-7,
    3.47025130813767847674E-6,
    -1.32731636560394358279E-5,
    4.78156510755005422638E-5,
    -1.61760815825896745588E-4,
    5.12285956168575772895E-4,
    -1.51357245063125314899E-3,
    4.15642294431288815669E-3,
    -1.05640848946261981558E-2,
    2.47264490306265168283E-2,
    -5.29459812080949914269E-2,
    1.02643658689847095384E-1,
    -1.76416518357834055153E-1,
    2.52587186443633654823E-1,
];

/// Chebyshev coefficients of `exp(-x) sqrt(x) I1(x)` on `(8, ∞)` (torch's double
/// `chebyshev_coefficients_i1e_B`).
const I1E_B: [f64; 25] = [
    7.51729631084210481353E-18,
    4.41434832307170791151E-18,
    -4.65030536848935832153E-17,
    -3.20952592199342395980E-17,
    2.96262899764595013876E-16,
    3.30820231092092828324E-16,
    -1.88035477551078244854E-15,
    -3.81440307243700780478E-15,
    1.04202769841288027642E-14,
    4.27244001671195135429E-14,
    -2.10154184277266431302E-14,
    -4.08355111109219731823E-13,
    -7.19855177624590851209E-13,
    2.03562854414708950722E-12,
    1.41258074366137813316E-11,
    3.25260358301548823856E-11,
    -1.89749581235054123450E-11,
    -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,
    -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,
    -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
];

/// torch's float `chebyshev_coefficients_i1e_B`: the last 7 of [`I1E_B`] as float literals.
const I1E_B_F32: [f32; 7] = [
    -3.83538038596423702205E-9,
    -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,
    -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
];

/// Which of the four functions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bessel {
    I0,
    I0e,
    I1,
    I1e,
}

/// Cephes' `chbevl`: the Chebyshev series `coeffs` (highest order first) at `y`, with the same
/// operations in the same order as torch's kernel (`b0 = y·b1 - b2 + c`), in `y`'s dtype.
fn chbevl(y: &Tensor, coeffs: &[f64]) -> Result<Tensor> {
    let mut b0 = y.full_like(coeffs[0])?;
    let mut b1 = y.zeros_like()?;
    let mut b2 = y.zeros_like()?;
    for &c in &coeffs[1..] {
        b2 = b1;
        b1 = b0;
        b0 = y.mul(&b1)?.sub(&b2)?.add(c)?;
    }
    b0.sub(&b2)?.mul(0.5)
}

/// The coefficient tables (`[0, 8]`, `(8, ∞)`) torch's kernel uses for `kind` in `dtype`.
fn tables(kind: Bessel, dtype: DType) -> (Vec<f64>, Vec<f64>) {
    match kind {
        Bessel::I0 | Bessel::I0e => (I0E_A.to_vec(), I0E_B.to_vec()),
        Bessel::I1 | Bessel::I1e if dtype == DType::F32 => {
            (I1E_A_F32.iter().map(|&c| c as f64).collect(), I1E_B_F32.iter().map(|&c| c as f64).collect())
        }
        Bessel::I1 | Bessel::I1e => (I1E_A.to_vec(), I1E_B.to_vec()),
    }
}

/// torch's `calc_i0`/`calc_i0e`/`calc_i1`/`calc_i1e` on a float32 or float64 tensor, both branches
/// computed everywhere and the one for `|x| <= 8` (else the other, NaN included) selected.
fn bessel_value(x_signed: &Tensor, kind: Bessel) -> Result<Tensor> {
    let (a, b) = tables(kind, x_signed.dtype());
    let x = x_signed.abs()?;
    let near = chbevl(&x.div(2.0)?.sub(2.0)?, &a)?;
    let far = chbevl(&x.full_like(32.0)?.div(&x)?.sub(2.0)?, &b)?;
    let root = x.sqrt()?;
    let (near, far) = match kind {
        Bessel::I0 => (x.exp()?.mul(&near)?, x.exp()?.mul(&far)?.div(&root)?),
        Bessel::I0e => (near, far.div(&root)?),
        Bessel::I1 => (x.exp()?.mul(&x)?.mul(&near)?, x.exp()?.mul(&far)?.div(&root)?),
        Bessel::I1e => (near.mul(&x)?, far.div(&root)?),
    };
    let out = Tensor::where_cond(&x.le(8.0)?, &near, &far)?;
    match kind {
        Bessel::I1 | Bessel::I1e => Tensor::where_cond(&x_signed.lt(0.0)?, &out.neg()?, &out),
        _ => Ok(out),
    }
}

/// One of the four functions with torch's backward formula (derivatives.yaml).
struct BesselFn(Bessel);

impl Function for BesselFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        Ok(vec![bessel_value(&inputs[0], self.0)?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        let g = &grads[0];
        let d = match self.0 {
            // i0' = i1
            Bessel::I0 => x.i1()?,
            // i0e' = i1e - sgn(x) i0e
            Bessel::I0e => x.i1e()?.sub(&x.sign()?.mul(&x.i0e()?)?)?,
            // torch's i1_backward / i1e_backward: the formula at a safe `x`, 0.5 where |x| <= eps.
            Bessel::I1 | Bessel::I1e => {
                let eps = if x.dtype() == DType::F64 { f64::EPSILON } else { f32::EPSILON as f64 };
                // (NaN is not tiny: its gradient is NaN, as torch's)
                let not_tiny = x.abs()?.le(eps)?.logical_not()?;
                let safe = Tensor::where_cond(&not_tiny, x, eps)?;
                let gradx = if self.0 == Bessel::I1 {
                    safe.i0()?.sub(&x.i1()?.mul(&safe.reciprocal()?)?)?
                } else {
                    safe.i0e()?.sub(&x.i1e()?.mul(&safe.sign()?.add(&safe.reciprocal()?)?)?)?
                };
                Tensor::where_cond(&not_tiny, &gradx, 0.5)?
            }
        };
        Ok(vec![Some(g.mul(&d)?)])
    }

    fn name(&self) -> &'static str {
        match self.0 {
            Bessel::I0 => "I0Backward0",
            Bessel::I0e => "SpecialI0EBackward0",
            Bessel::I1 => "SpecialI1Backward0",
            Bessel::I1e => "SpecialI1EBackward0",
        }
    }
}

impl Tensor {
    /// The modified Bessel function of the first kind of order 0 (torch's `i0`), by Cephes'
    /// Chebyshev expansions as torch's CPU kernel; integers and bool promote to the default float
    /// dtype, half types compute in float32. The gradient is [`Tensor::i1`].
    pub fn i0(&self) -> Result<Tensor> {
        self.bessel(Bessel::I0)
    }

    /// The exponentially scaled `exp(-|x|) · i0(x)` (torch's `special.i0e`), with [`Tensor::i0`]'s
    /// conventions; the gradient is `i1e(x) - sgn(x) · i0e(x)`.
    pub fn i0e(&self) -> Result<Tensor> {
        self.bessel(Bessel::I0e)
    }

    /// The modified Bessel function of the first kind of order 1 (torch's `special.i1`), odd in
    /// `x`, with [`Tensor::i0`]'s conventions; the gradient is `i0(x) - i1(x) / x` (0.5 where
    /// `|x|` is at most the dtype's epsilon).
    pub fn i1(&self) -> Result<Tensor> {
        self.bessel(Bessel::I1)
    }

    /// The exponentially scaled `exp(-|x|) · i1(x)` (torch's `special.i1e`), with
    /// [`Tensor::i0`]'s conventions; the gradient is `i0e(x) - i1e(x) · (sgn(x) + 1/x)` (0.5 where
    /// `|x|` is at most the dtype's epsilon).
    pub fn i1e(&self) -> Result<Tensor> {
        self.bessel(Bessel::I1e)
    }

    /// `self · 2^other` (torch's `ldexp`). A float `other` is `self * pow(2.0, other)` with the
    /// usual promotion, differentiable in both. An integer `other` keeps `self`'s float dtype (the
    /// default float one for an integer `self`) and scales exactly, as torch's kernel: computed in
    /// float64 in two halves, so that neither `2^other` overflows where the product does not
    /// (`ldexp(1e-30f32, 130)` is 1.36e9). A bool `other` is torch's error.
    pub fn ldexp(&self, other: &Tensor) -> Result<Tensor> {
        if other.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType { op: "ldexp_cpu_exp", dtype: other.dtype() });
        }
        if other.dtype().is_float() {
            return self.mul(&Tensor::pow_scalar_base(2.0, other)?);
        }
        let dtype = if self.is_floating_point() { self.dtype() } else { DType::default_float() };
        let n = other.to_dtype(DType::F64)?;
        let half = n.div(2.0)?.floor()?;
        let rest = n.sub(&half)?;
        let scaled = self
            .to_dtype(DType::F64)?
            .mul(&Tensor::pow_scalar_base(2.0, &half)?)?
            .mul(&Tensor::pow_scalar_base(2.0, &rest)?)?;
        scaled.to_dtype(dtype)
    }

    /// i0/i0e/i1/i1e in the computing dtype (float32 for half types), cast back.
    fn bessel(&self, kind: Bessel) -> Result<Tensor> {
        let x = if self.is_floating_point() { self.clone() } else { self.to_dtype(DType::default_float())? };
        let dtype = x.dtype();
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        BesselFn(kind).apply(&[x.to_dtype(acc)?])?.remove(0).to_dtype(dtype)
    }
}
