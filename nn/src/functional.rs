//! `torch.nn.functional`: stateless ops written in tensor ops.

use oxtorch_tensor::{Result, Tensor};

/// `max(x, 0)`.
pub fn relu(x: &Tensor) -> Result<Tensor> {
    x.relu()
}

/// Logistic sigmoid.
pub fn sigmoid(x: &Tensor) -> Result<Tensor> {
    x.sigmoid()
}

/// Hyperbolic tangent.
pub fn tanh(x: &Tensor) -> Result<Tensor> {
    x.tanh()
}

/// Softmax along `dim`, computed stably as `exp(x - max) / sum(exp(x - max))`.
pub fn softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    let shifted = x.sub(&x.amax(dim, true)?)?;
    let e = shifted.exp()?;
    e.div(&e.sum(dim, true)?)
}

/// Log-softmax along `dim`: `x - max - log(sum(exp(x - max)))`.
pub fn log_softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    let shifted = x.sub(&x.amax(dim, true)?)?;
    shifted.sub(&shifted.exp()?.sum(dim, true)?.log()?)
}

/// `x @ weight.T + bias` (torch's `linear`).
pub fn linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let y = x.matmul(&weight.t()?)?;
    match bias {
        Some(b) => y.add(b),
        None => Ok(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxtorch_tensor::tensor;

    #[test]
    fn softmax_rows_sum_to_one_and_match_reference() -> Result<()> {
        let x = tensor!([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]]);
        let s = softmax(&x, -1)?;
        let v = s.to_vec::<f32>()?;
        // torch.softmax(torch.tensor([1., 2., 3.]), 0)
        let expected = [0.090_030_57, 0.244_728_48, 0.665_240_94];
        for (a, b) in v[..3].iter().zip(expected) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        for a in &v[3..] {
            assert!((a - 1.0 / 3.0).abs() < 1e-6);
        }
        let ls = log_softmax(&x, 1)?.exp()?;
        assert!(ls.sub(&s)?.abs()?.max()?.item::<f32>()? < 1e-6);
        Ok(())
    }

    #[test]
    fn linear_matches_hand_computation() -> Result<()> {
        let x = tensor!([[1.0, 2.0]]);
        let w = tensor!([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        let b = tensor!([0.5, 0.5, 0.5]);
        assert_eq!(linear(&x, &w, Some(&b))?.to_vec::<f32>()?, vec![1.5, 2.5, 3.5]);
        Ok(())
    }
}
