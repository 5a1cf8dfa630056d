//! torch's `amount` of the pruning functions ([`Amount`]), its checks and its rounding.

use std::fmt;

use oxtorch_tensor::{Error, Result};

/// How much to prune (torch's `amount`): a number of entries or channels (an `int` in torch), or a
/// fraction of them (a `float`), rounded half to even as Python's `round(amount * n)`.
///
/// Integer arguments convert to a count and floating-point ones to a fraction, as torch tells an
/// `int` from a `float`: `1` prunes one entry, `1.0` all of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// An absolute number (must not be negative).
    Count(i64),
    /// A fraction in `[0, 1]`.
    Fraction(f64),
}

impl From<i32> for Amount {
    fn from(n: i32) -> Self {
        Amount::Count(n.into())
    }
}

impl From<i64> for Amount {
    fn from(n: i64) -> Self {
        Amount::Count(n)
    }
}

impl From<usize> for Amount {
    fn from(n: usize) -> Self {
        Amount::Count(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Amount {
    fn from(f: f64) -> Self {
        Amount::Fraction(f)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Amount::Count(n) => write!(f, "{n}"),
            Amount::Fraction(x) => f.write_str(&python_float(x)),
        }
    }
}

/// Python's `repr` of a float (`1.5`, `-0.1`, `2.0`, `1e-05`, `inf`, `nan`).
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's Debug is the shortest round-trip string, in exponent form outside [1e-4, 1e16) as
    // Python's repr; only the exponent is spelled differently (`1e-5` for `1e-05`).
    let s = format!("{x:?}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

impl Amount {
    /// torch's `_validate_pruning_amount_init`: a non-negative count or a fraction in `[0, 1]`.
    pub fn validate(self) -> Result<()> {
        let bad = match self {
            Amount::Count(n) => n < 0,
            // (NaN passes, as in torch, and fails when rounded)
            Amount::Fraction(x) => !x.is_nan() && !(0.0..=1.0).contains(&x),
        };
        if bad {
            return Err(Error::msg(format!(
                "amount={self} should either be a float in the range [0, 1] or a non-negative integer"
            )));
        }
        Ok(())
    }

    /// How many of `tensor_size` units to prune (torch's `_compute_nparams_toprune`, then
    /// `_validate_pruning_amount`: a count may not exceed `tensor_size`).
    pub fn to_prune(self, tensor_size: usize) -> Result<usize> {
        let n = match self {
            Amount::Count(n) => n.max(0),
            Amount::Fraction(x) if x.is_nan() => {
                return Err(Error::msg("cannot convert float NaN to integer"));
            }
            Amount::Fraction(x) => (x * tensor_size as f64).round_ties_even() as i64,
        };
        if n > i64::try_from(tensor_size).unwrap_or(i64::MAX) {
            return Err(Error::msg(format!(
                "amount={n} should be smaller than the number of parameters to prune={tensor_size}"
            )));
        }
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_spelling() {
        assert_eq!(python_float(1.5), "1.5");
        assert_eq!(python_float(-0.1), "-0.1");
        assert_eq!(python_float(2.0), "2.0");
        assert_eq!(python_float(-1e-5), "-1e-05");
        assert_eq!(python_float(1e20), "1e+20");
        assert_eq!(python_float(f64::INFINITY), "inf");
    }

    #[test]
    fn amounts_round_half_to_even() -> Result<()> {
        assert_eq!(Amount::from(0.125).to_prune(20)?, 2); // round(2.5) = 2
        assert_eq!(Amount::from(0.375).to_prune(20)?, 8); // round(7.5) = 8
        assert_eq!(Amount::from(1.0).to_prune(7)?, 7);
        assert_eq!(Amount::from(3).to_prune(3)?, 3);
        assert!(Amount::from(4).to_prune(3).is_err());
        Ok(())
    }
}
