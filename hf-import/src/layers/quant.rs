//! BitNet b1.58's activation quantization (transformers' `ActQuant`, inside `AutoBitLinear` and
//! `BitLinear`): each row of a projection's input rounded to 8-bit integers at its own scale and
//! back, so that a product with dequantized ternary weights gives what the integer product scaled
//! back gives.

use oxtorch_tensor::{DType, Tensor};

use crate::error::Result;

/// `x` `[..., in]` fake-quantized per row: in float32, `s = 127 / max(|x|, 1e-5)` over the last
/// dim, `round(x · s)` clamped to `[-128, 127]` (ties to even, as torch), divided by `s`; back in
/// `x`'s dtype.
pub fn fake_quant_int8(x: &Tensor) -> Result<Tensor> {
    let xf = x.to_dtype(DType::F32)?;
    let peak = xf.abs()?.amax(-1, true)?.clamp(Some(1e-5.into()), None)?;
    let scale = Tensor::full([], 127.0, (DType::F32, x.device()))?.div(&peak)?;
    let q = xf.mul(&scale)?.round()?.clamp(Some((-128.0).into()), Some(127.0.into()))?;
    Ok(q.div(&scale)?.to_dtype(x.dtype())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's values on its 127 steps of its largest magnitude; ties rounded to even; a zero row
    /// stays zero.
    #[test]
    fn rows_take_their_own_int8_steps() {
        let x = Tensor::from_vec(vec![1.0f32, -0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0], [2, 4]).unwrap();
        let y = fake_quant_int8(&x).unwrap().to_vec2::<f32>().unwrap();
        let step = 1.0 / 127.0;
        let want = |v: f32| (v / step).round_ties_even() * step;
        assert_eq!(y[0], [want(1.0), want(-0.5), want(0.25), 0.0]);
        assert_eq!(y[1], [0.0; 4]);
        assert!((y[0][1] + 64.0 / 127.0).abs() < 1e-7, "-63.5 rounds to -64 (even): {}", y[0][1]);
    }
}
