//! `linalg.cond`: the condition number of each matrix, from its singular values (orders 2, -2 and
//! `'nuc'`) or as `‖A‖ ‖A⁻¹‖` (orders ±1, ±inf and `'fro'`), composed of differentiable ops as
//! torch's is.

use oxtorch_core::{Error, Result};

use super::batch::{check_square, per_matrix};
use super::matfn::inv_ex;
use super::norms::{matrix_norm, NormOrd};
use super::svd::svdvals;
use crate::Tensor;

/// How torch prints a numeric order in its square-matrix check (`linalg.cond(ord=1)`,
/// `linalg.cond(ord=-inf)`): the orders ±1 as integers.
fn ord_name(p: f64) -> String {
    if p.is_infinite() {
        (if p > 0.0 { "inf" } else { "-inf" }).to_string()
    } else {
        (p as i64).to_string()
    }
}

/// `‖A‖ ‖A⁻¹‖` in `ord`, the inverse of a singular matrix taken as all inf and `0 · inf` as inf
/// (torch's `_linalg_cond_helper`).
fn norm_times_inverse_norm(a: &Tensor, ord: NormOrd) -> Result<Tensor> {
    let (inv, info) = inv_ex(a)?;
    let inv = Tensor::where_cond(&per_matrix(&info.gt(0)?)?, f64::INFINITY, &inv)?;
    let norm_a = matrix_norm(a, ord.clone(), [-2isize, -1], false, None)?;
    let norm_inv = matrix_norm(&inv, ord, [-2isize, -1], false, None)?;
    norm_a.mul(&norm_inv)?.nan_to_num(Some(f64::INFINITY), Some(f64::INFINITY), Some(f64::NEG_INFINITY))
}

/// `torch.linalg.cond(A, p=p)`: the condition number of each matrix of `A` (`[*, m, n]` gives
/// `[*]`) in the norm `p`: `None` or 2 (`σ_max / σ_min`), -2 (`σ_min / σ_max`), `'nuc'`
/// (`Σσ · Σ1/σ`), and for square matrices 1, -1, inf, -inf and `'fro'` (`‖A‖ ‖A⁻¹‖` in that
/// [`matrix_norm`], inf for a singular matrix). Other orders are torch's error (`linalg.cond got an
/// invalid norm type: 3`). An empty `A` gives zeros of the batch shape. The singular-value orders
/// take float32/float64 (`svdvals`' errors), the others `inv`'s dtypes. Differentiable through
/// `svdvals`, `inv` and `matrix_norm`, as torch's.
pub fn cond(a: &Tensor, p: Option<NormOrd>) -> Result<Tensor> {
    let batch = a.dims()[..a.rank().saturating_sub(2)].to_vec();
    let empty = || Tensor::zeros(batch.clone(), a.same_options());
    let ord = p.unwrap_or(NormOrd::P(2.0));
    match ord {
        NormOrd::P(p) => {
            if a.rank() < 2 {
                return Err(Error::shape("linalg.cond: The input tensor must have at least 2 dimensions."));
            }
            let abs = p.abs();
            if abs != 2.0 && abs != 1.0 && abs != f64::INFINITY {
                return Err(Error::msg(format!("linalg.cond got an invalid norm type: {p}")));
            }
            if a.numel() == 0 {
                return empty();
            }
            if abs == 2.0 {
                let s = svdvals(a)?;
                let k = s.size(-1)?;
                let (s_max, s_min) = (s.narrow(-1, 0, 1)?, s.narrow(-1, k as isize - 1, 1)?);
                let ratio = if p > 0.0 { s_max.div(&s_min)? } else { s_min.div(&s_max)? };
                return ratio.squeeze_dims(-1);
            }
            check_square(&format!("linalg.cond(ord={})", ord_name(p)), a, "A")?;
            norm_times_inverse_norm(a, NormOrd::P(p))
        }
        NormOrd::Fro | NormOrd::Nuc | NormOrd::Other(_) => {
            let name = match &ord {
                NormOrd::Fro => "fro".to_string(),
                NormOrd::Nuc => "nuc".to_string(),
                NormOrd::Other(s) => s.clone(),
                NormOrd::P(_) => unreachable!("numeric orders are handled above"),
            };
            check_square(&format!("linalg.cond(ord={name})"), a, "A")?;
            if let NormOrd::Other(_) = ord {
                return Err(Error::msg(format!("linalg.cond got an invalid norm type: {name}")));
            }
            if a.numel() == 0 {
                return empty();
            }
            if ord == NormOrd::Nuc {
                let s = svdvals(a)?;
                return s.sum([-1isize], false)?.mul(&s.reciprocal()?.sum([-1isize], false)?);
            }
            norm_times_inverse_norm(a, ord)
        }
    }
}
