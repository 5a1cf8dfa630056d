//! The fused gradient of the tanh gelu (`NnOp::GeluTanhBackward`, taken when the backward pass is
//! not recorded) against the composed formula (taken under `create_graph`): every float dtype,
//! strided and broadcast gradients.

use oxtorch_tensor::autograd;
use oxtorch_tensor::{DType, Result, Tensor};

/// The gradient of `sum(gelu(x) * w)` with and without `create_graph`.
fn both(x: &Tensor, w: &Tensor) -> Result<(Tensor, Tensor)> {
    let run = |create: bool| -> Result<Tensor> {
        let x = x.detach().requires_grad_(true)?;
        let y = x.gelu("tanh")?.mul(w)?.sum_all()?;
        Ok(autograd::grad(&[y], &[x], None, false, create, false)?[0].clone().unwrap().detach())
    };
    Ok((run(false)?, run(true)?))
}

#[test]
fn fused_gelu_tanh_backward_matches_composition() -> Result<()> {
    oxtorch_tensor::manual_seed(3);
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let base = Tensor::randn([37, 29], ())?.mul(4.0)?;
        let special = Tensor::from_slice(&[0.0f64, -0.0, 1e-30, -12.0, 12.0, 80.0, -80.0], [7])?;
        let cases = [
            (base.to_dtype(dtype)?, Tensor::randn([37, 29], ())?.to_dtype(dtype)?),
            // a transposed input and a broadcast (stride-0) gradient
            (base.t()?.to_dtype(dtype)?.contiguous()?.t()?, Tensor::randn([29], ())?.to_dtype(dtype)?),
            (special.to_dtype(dtype)?, Tensor::ones([7], dtype)?),
        ];
        for (i, (x, w)) in cases.iter().enumerate() {
            let (fused, composed) = both(x, w)?;
            // f16/bf16 against the f32 composition rounded once (torch computes them in f32): the
            // composition in f16 overflows where the fused kernel does not.
            let composed = if matches!(dtype, DType::F16 | DType::BF16) {
                both(&x.to_dtype(DType::F32)?, &w.to_dtype(DType::F32)?)?.1.to_dtype(dtype)?
            } else {
                composed
            };
            assert_eq!((fused.dtype(), fused.dims()), (composed.dtype(), composed.dims()));
            let (a, b) = (fused.to_f64_vec()?, composed.to_f64_vec()?);
            for (j, (p, q)) in a.iter().zip(&b).enumerate() {
                // f32/f64: the same operations in the same order; f16/bf16: one rounding apart.
                let tol = match dtype {
                    DType::F32 | DType::F64 => 0.0,
                    DType::F16 => 1e-3 * q.abs(),
                    _ => 8e-3 * q.abs(),
                };
                assert!((p - q).abs() <= tol, "{dtype:?} case {i} element {j}: {p} vs {q}");
            }
        }
    }
    Ok(())
}
