//! Integer number theory composed from elementwise ops: gcd and lcm (torch's `gcd`, `lcm`), with
//! torch's sign conventions (results are non-negative; gcd(0, 0) = 0, lcm(x, 0) = 0).

use oxtorch_core::{Error, Result, ResultTypeState, Scalar};

use crate::ops::elementwise::prepare_pair;
use crate::ops::Operand;
use crate::Tensor;

impl Tensor {
    /// Both operands promoted to their common integer dtype and broadcast, or torch's error for a
    /// non-integer dtype.
    fn integer_pair(&self, other: &Tensor, op: &str) -> Result<(Tensor, Tensor)> {
        let dtype = ResultTypeState::default()
            .tensor(self.dtype(), self.rank())
            .tensor(other.dtype(), other.rank())
            .result();
        if !dtype.is_int() {
            return Err(Error::msg(format!(
                "\"{op}_cpu\" not implemented for '{}'",
                dtype.scalar_type_name()
            )));
        }
        prepare_pair(self, &Operand::from(other), dtype)
    }

    /// The elementwise greatest common divisor of integer tensors (torch's `gcd`): always
    /// non-negative (Euclid on the absolute values), `gcd(x, 0) = |x|`, `gcd(0, 0) = 0`. The
    /// operands promote to a common integer dtype; float and bool are errors.
    pub fn gcd(&self, other: &Tensor) -> Result<Tensor> {
        let (a, b) = self.integer_pair(other, "gcd")?;
        gcd_of(&a, &b)
    }

    /// The elementwise least common multiple of integer tensors (torch's `lcm`):
    /// `|a / gcd(a, b) · b|`, 0 when either is 0.
    pub fn lcm(&self, other: &Tensor) -> Result<Tensor> {
        let (a, b) = self.integer_pair(other, "lcm")?;
        let g = gcd_of(&a, &b)?;
        let zero = g.eq(0)?;
        let safe = Tensor::where_cond(&zero, Scalar::Int(1), &g)?;
        let l = a.floor_divide(&safe)?.mul(&b)?;
        let l = if l.dtype().is_signed() { l.abs()? } else { l };
        Tensor::where_cond(&zero, Scalar::Int(0), &l)
    }

    /// In-place [`Tensor::gcd`] (torch's `gcd_`).
    pub fn gcd_(&self, other: &Tensor) -> Result<&Tensor> {
        self.apply_(&[other], |x| x.gcd(other))
    }

    /// In-place [`Tensor::lcm`] (torch's `lcm_`).
    pub fn lcm_(&self, other: &Tensor) -> Result<&Tensor> {
        self.apply_(&[other], |x| x.lcm(other))
    }
}

/// Euclid's algorithm on `|a|`, `|b|` (same dtype and shape), run elementwise until every
/// divisor is 0 (at most some 92 rounds for int64: consecutive Fibonacci numbers are the worst).
fn gcd_of(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let signed = a.dtype().is_signed();
    let (mut a, mut b) = if signed { (a.abs()?, b.abs()?) } else { (a.clone(), b.clone()) };
    // Invariant (torch's calc_gcd): the gcd is gcd(a, b); a round maps (a, b) to (b % a, a).
    for _ in 0..200 {
        let done = a.eq(0)?;
        if a.numel() == 0 || !a.ne(0)?.any()?.item::<bool>()? {
            break;
        }
        let safe = Tensor::where_cond(&done, Scalar::Int(1), &a)?;
        let r = b.remainder(&safe)?;
        let next_b = Tensor::where_cond(&done, &b, &a)?;
        a = Tensor::where_cond(&done, Scalar::Int(0), &r)?;
        b = next_b;
    }
    Ok(b)
}
