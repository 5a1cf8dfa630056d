//! The CPU layer-norm kernel (`NnOp::LayerNorm`, taken by `layer_norm` on f32, f16 and bf16 CPU
//! inputs where autograd records nothing) against the composition, which runs for f64 inputs and
//! under autograd: every combination of weight and bias, one and several normalised dims, rows
//! split across tasks, rows longer than a task, non-contiguous inputs, empty inputs, NaN and
//! infinity, and the composition's error messages.

use oxtorch_tensor::{DType, Result, Tensor};

/// `(shape, normalized_shape)` pairs.
const SHAPES: [(&[usize], &[usize]); 7] = [
    (&[2, 5, 16], &[16]),
    // a row length that is not a multiple of the kernel's lanes
    (&[3, 7, 13], &[13]),
    // several normalised dims
    (&[4, 3, 6], &[3, 6]),
    // many rows: several tasks
    (&[300, 97], &[97]),
    // one row longer than a task's 16K elements
    (&[2, 20_000], &[20_000]),
    // a single element per row (zero variance)
    (&[5, 1], &[1]),
    // the whole tensor is one row
    (&[3, 4], &[3, 4]),
];

/// The layer norm with autograd recording it: the composition, in the input's computation dtype.
fn composed(x: &Tensor, nsh: &[usize], w: Option<&Tensor>, b: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    let xg = x.detach().requires_grad_(true)?;
    Ok(xg.layer_norm(nsh, w, b, eps)?.detach())
}

/// The largest `|a - b|` (NaN where exactly one of them is NaN at a position, 0 where both are).
fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (
        a.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        b.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(&b)
        .map(|(x, y)| match (x.is_nan(), y.is_nan()) {
            (true, true) => 0.0,
            (false, false) if x == y => 0.0,
            (false, false) => (x - y).abs(),
            _ => f64::NAN,
        })
        .fold(0.0, |m, d| if d.is_nan() || m.is_nan() { f64::NAN } else { m.max(d) })
}

#[test]
fn kernel_matches_the_composition() -> Result<()> {
    let mut failures = Vec::new();
    for (shape, nsh) in SHAPES {
        let cols: usize = nsh.iter().product();
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            // Offsets per row so that the means are far from zero (a one-pass variance would lose them).
            let x = Tensor::randn(shape.to_vec(), ())?.add(3.0)?.mul(2.0)?.to_dtype(dtype)?;
            let w = Tensor::randn(nsh.to_vec(), ())?.to_dtype(dtype)?;
            let b = Tensor::randn(nsh.to_vec(), ())?.to_dtype(dtype)?;
            for (wo, bo) in [(Some(&w), Some(&b)), (Some(&w), None), (None, Some(&b)), (None, None)] {
                for eps in [1e-5, 1e-12, 0.5] {
                    let fused = x.layer_norm(nsh, wo, bo, eps)?;
                    let reference = composed(&x, nsh, wo, bo, eps)?;
                    let exact = x.to_dtype(DType::F64)?.layer_norm(
                        nsh,
                        wo.map(|t| t.to_dtype(DType::F64).unwrap()).as_ref(),
                        bo.map(|t| t.to_dtype(DType::F64).unwrap()).as_ref(),
                        eps,
                    )?;
                    assert_eq!(fused.dims(), shape);
                    assert_eq!(fused.dtype(), dtype);
                    // f32: within a few ulps of the f64 result; half: at most one rounding step
                    // apart from the composition (both round one f32 value).
                    let (d, tol) = match dtype {
                        DType::F32 => (max_diff(&fused, &exact), 2e-5),
                        DType::F16 => (max_diff(&fused, &reference), 8e-3),
                        _ => (max_diff(&fused, &reference), 6e-2),
                    };
                    if d.is_nan() || d > tol {
                        failures.push(format!(
                            "{shape:?} over {nsh:?} ({cols} per row) {dtype:?} weight {} bias {} eps {eps}: max diff {d}",
                            wo.is_some(),
                            bo.is_some()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} cases differ:\n{}", failures.len(), failures.join("\n"));
    Ok(())
}

#[test]
fn non_contiguous_inputs_and_parameters() -> Result<()> {
    let x = Tensor::randn([6, 10, 8], ())?;
    let w = Tensor::randn([16], ())?.slice(0, 0..16, 2)?;
    let b = Tensor::randn([8, 2], ())?.select(1, 1)?;
    for xv in
        [x.transpose(0, 1)?, x.slice(2, 0..8, 1)?.expand([6, 10, 8])?, x.permute([2, 0, 1])?.transpose(0, 2)?]
    {
        let nsh = [xv.dims()[2]];
        let fused = xv.layer_norm(&nsh, Some(&w), Some(&b), 1e-5)?;
        let reference = composed(&xv, &nsh, Some(&w), Some(&b), 1e-5)?;
        let d = max_diff(&fused, &reference);
        assert!(d <= 1e-5, "{:?} strides {:?}: max diff {d}", xv.dims(), xv.strides());
    }
    Ok(())
}

#[test]
fn nan_and_infinity_poison_their_rows_only() -> Result<()> {
    let mut v: Vec<f32> = (0..24).map(|i| i as f32 * 0.25).collect();
    v[3] = f32::NAN;
    v[13] = f32::INFINITY;
    let x = Tensor::from_vec(v, [4, 6])?;
    let fused = x.layer_norm(&[6], None, None, 1e-5)?.to_vec::<f32>()?;
    let reference = composed(&x, &[6], None, None, 1e-5)?.to_vec::<f32>()?;
    for (i, (a, b)) in fused.iter().zip(&reference).enumerate() {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-5,
            "element {i}: {a} vs {b}"
        );
    }
    // rows 0 and 2 hold the NaN and the infinity: all NaN; rows 1 and 3 finite
    assert!(fused[..6].iter().all(|v| v.is_nan()) && fused[12..18].iter().all(|v| v.is_nan()));
    assert!(fused[6..12].iter().chain(&fused[18..]).all(|v| v.is_finite()));
    Ok(())
}

#[test]
fn empty_inputs_and_errors() -> Result<()> {
    let empty_rows = Tensor::zeros([0, 5], DType::F32)?.layer_norm(&[5], None, None, 1e-5)?;
    assert_eq!(empty_rows.dims(), [0, 5]);
    let empty_row = Tensor::zeros([3, 0], DType::F32)?.layer_norm(&[0], None, None, 1e-5)?;
    assert_eq!(empty_row.dims(), [3, 0]);
    let x = Tensor::randn([2, 4], ())?;
    let err = x.layer_norm(&[5], None, None, 1e-5).unwrap_err().to_string();
    assert!(err.contains("Given normalized_shape=[5], expected input with shape [*, 5]"), "{err}");
    let err = x.layer_norm(&[4], Some(&Tensor::ones([3], DType::F32)?), None, 1e-5).unwrap_err().to_string();
    assert!(err.contains("Expected weight to be of same shape as normalized_shape"), "{err}");
    Ok(())
}
