//! The fused `[N, C]` cross-entropy (`NnOp::CrossEntropy` and its gradient) against the composed
//! `log_softmax` + `nll_loss` path, which `[N, C, 1]` logits still take: values, gradients,
//! double backward, every float dtype, strided logits, `ignore_index` and the reductions.

use oxtorch_tensor::autograd;
use oxtorch_tensor::{DType, Result, Tensor};

/// Logits `[n, c]` requiring grad, laid out as `view` says (`dense`, `transposed`, or `rows`: a
/// column range of wider rows, which the kernel reads in place), and targets with some `ignore`
/// entries.
fn case(n: usize, c: usize, dtype: DType, view: &str, ignore: i64) -> Result<(Tensor, Tensor)> {
    oxtorch_tensor::manual_seed(7);
    let x = match view {
        "transposed" => Tensor::randn([c, n], ())?.mul(3.0)?.to_dtype(dtype)?.t()?,
        "rows" => Tensor::randn([n, c + 5], ())?.mul(3.0)?.to_dtype(dtype)?.narrow(1, 2, c)?,
        _ => Tensor::randn([n, c], ())?.mul(3.0)?.to_dtype(dtype)?,
    };
    let x = x.detach().requires_grad_(true)?;
    let t: Vec<i64> = (0..n).map(|i| if i % 5 == 3 { ignore } else { ((i * 7 + 3) % c) as i64 }).collect();
    Ok((x, Tensor::from_slice(&t, [n])?))
}

/// The composed path: the same logits with a trailing size-1 dim.
fn composed(x: &Tensor, t: &Tensor, ignore: i64, reduction: &str) -> Result<Tensor> {
    x.unsqueeze(-1)?.cross_entropy(&t.unsqueeze(-1)?, None, ignore, reduction, 0.0)?.reshape([-1])
}

fn close(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, what: &str) {
    assert_eq!(a.dtype(), b.dtype(), "{what}: dtype");
    assert_eq!(a.dims(), b.dims(), "{what}: shape");
    let (a, b) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= atol + rtol * y.abs(), "{what}: element {i}: {x} vs {y}");
    }
}

fn tolerances(dtype: DType) -> (f64, f64) {
    match dtype {
        // the fused gradient uses the vectorised exp (about 1 ulp from libm's); the composition's
        // picked log-probability can be 1 ulp off the log-softmax value that the fused loss returns
        DType::F32 => (1e-6, 1e-9),
        DType::F64 => (1e-14, 1e-300),
        _ => (1e-2, 1e-3),
    }
}

#[test]
fn fused_matches_composition_values_and_gradients() -> Result<()> {
    // A stream of this test's own: `manual_seed` here must give the same draws twice, which
    // tests drawing from the process-wide generator at the same time would break.
    oxtorch_tensor::random::with_thread_generator(&oxtorch_tensor::Generator::default(), || -> Result<()> {
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            let (rtol, atol) = tolerances(dtype);
            for view in ["dense", "transposed", "rows"] {
                for ignore in [-100, 2] {
                    for reduction in ["mean", "sum", "none"] {
                        let what = format!("{dtype:?} {view} ignore={ignore} {reduction}");
                        // 37 classes: rows longer than a vector with a masked tail.
                        let (x, t) = case(23, 37, dtype, view, ignore)?;
                        let fused = x.cross_entropy(&t, None, ignore, reduction, 0.0)?;
                        let (x2, _) = case(23, 37, dtype, view, ignore)?;
                        let reference = composed(&x2, &t, ignore, reduction)?;
                        close(&fused.reshape([-1])?, &reference, rtol, atol, &format!("{what}: loss"));
                        let w = Tensor::randn(fused.dims().to_vec(), ())?.to_dtype(dtype)?;
                        fused.mul(&w)?.sum_all()?.backward()?;
                        reference.mul(&w.reshape([-1])?)?.sum_all()?.backward()?;
                        let (g, g2) = (x.grad().unwrap(), x2.grad().unwrap());
                        close(&g, &g2, rtol, atol, &format!("{what}: grad"));
                    }
                }
            }
        }
        Ok(())
    })
}

#[test]
fn fused_gradient_is_differentiable_again() -> Result<()> {
    // A stream of this test's own: `manual_seed` here must give the same draws twice, which
    // tests drawing from the process-wide generator at the same time would break.
    oxtorch_tensor::random::with_thread_generator(&oxtorch_tensor::Generator::default(), || -> Result<()> {
        for dtype in [DType::F32, DType::F64] {
            let (x, t) = case(9, 12, dtype, "dense", 4)?;
            let (x2, _) = case(9, 12, dtype, "dense", 4)?;
            let gg = |x: &Tensor, loss: Tensor| -> Result<Tensor> {
                let g = autograd::grad(&[loss], std::slice::from_ref(x), None, true, true, false)?[0]
                    .clone()
                    .unwrap();
                let v = autograd::grad(
                    &[g.square()?.sum_all()?],
                    std::slice::from_ref(x),
                    None,
                    false,
                    false,
                    false,
                )?;
                Ok(v[0].clone().unwrap())
            };
            let a = gg(&x, x.cross_entropy(&t, None, 4, "mean", 0.0)?)?;
            let b = gg(&x2, composed(&x2, &t, 4, "mean")?)?;
            // f32: both second derivatives lie within 5e-6 of the f64 value (measured: 1.2e-6 and
            // 5.2e-6 off it, the composition's log-softmax holding its maximum out of the graph).
            let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
            close(&a, &b, rtol, 1e-12, &format!("{dtype:?}: second derivative"));
        }
        Ok(())
    })
}

#[test]
fn fused_edge_cases() -> Result<()> {
    // Every row ignored: a "mean" of nothing is NaN, as in torch; the gradient is zero.
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], [2, 2])?.requires_grad_(true)?;
    let t = Tensor::from_slice(&[-100i64, -100], [2])?;
    let loss = x.cross_entropy(&t, None, -100, "mean", 0.0)?;
    assert!(loss.item::<f32>()?.is_nan());
    x.cross_entropy(&t, None, -100, "sum", 0.0)?.backward()?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, vec![0.0; 4]);
    // No rows.
    let e = Tensor::zeros([0, 5], DType::F32)?.requires_grad_(true)?;
    let none = Tensor::zeros([0], DType::I64)?;
    assert_eq!(e.cross_entropy(&none, None, -100, "sum", 0.0)?.item::<f32>()?, 0.0);
    // Out-of-range targets keep torch's message.
    let bad = Tensor::from_slice(&[0i64, 2], [2])?;
    let err = x.cross_entropy(&bad, None, -100, "mean", 0.0).unwrap_err();
    assert_eq!(err.to_string(), "Target 2 is out of bounds.");
    // Infinite logits: the same NaN/∞ pattern as the composition.
    let inf = Tensor::from_slice(&[f32::NEG_INFINITY, 0.0, f32::INFINITY, 1.0], [2, 2])?;
    let ok = Tensor::from_slice(&[1i64, 0], [2])?;
    let a = inf.cross_entropy(&ok, None, -100, "none", 0.0)?.to_f64_vec()?;
    let b = composed(&inf, &ok, -100, "none")?.to_f64_vec()?;
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    // Ignored rows holding NaN or +inf: loss 0 and a NaN gradient row, as torch 2.x gives
    // (`0 - softmax · 0` in its log-softmax backward); the kept row's gradient is
    // `softmax - onehot`.
    let x = Tensor::from_slice(&[f32::NAN, 1.0, 2.0, 0.5, 1.0, 2.0, f32::INFINITY, 0.0, 1.0], [3, 3])?
        .requires_grad_(true)?;
    let t = Tensor::from_slice(&[-100i64, 1, -100], [3])?;
    let loss = x.cross_entropy(&t, None, -100, "none", 0.0)?;
    let l = loss.to_f64_vec()?;
    assert_eq!((l[0], l[2]), (0.0, 0.0));
    loss.sum_all()?.backward()?;
    let g = x.grad().unwrap().to_f64_vec()?;
    assert!(g[..3].iter().chain(&g[6..]).all(|v| v.is_nan()), "{g:?}");
    let e = [0.5f64.exp(), 1.0f64.exp(), 2.0f64.exp()];
    let s: f64 = e.iter().sum();
    let want = [e[0] / s, e[1] / s - 1.0, e[2] / s]; // torch: 0.1402, -0.7688, 0.6285
    for (i, w) in want.iter().enumerate() {
        assert!((g[3 + i] - w).abs() < 1e-6, "kept row {i}: {} vs {w}", g[3 + i]);
    }
    Ok(())
}

/// Rows holding +inf, all -inf or NaN give NaN losses and NaN gradient rows in both paths (the
/// fused one, and the composition that label smoothing takes), as torch 2.x gives; a finite row
/// keeps torch's values (from `torch.nn.functional.cross_entropy`, printed to 4 places).
#[test]
fn non_finite_rows_follow_torch() -> Result<()> {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let vals = [inf, 0.0, 1.0, -inf, -inf, -inf, 0.5, 1.0, nan, 1.0, 2.0, 3.0];
    let t = Tensor::from_slice(&[1i64, 0, 2, 1], [4])?;
    for (smoothing, want_grad) in [(0.0, [0.0900, -0.7553, 0.6652]), (0.1, [0.0567, -0.6886, 0.6319])] {
        let x = Tensor::from_slice(&vals, [4, 3])?.requires_grad_(true)?;
        let loss = x.cross_entropy(&t, None, -100, "none", smoothing)?;
        let l = loss.to_f64_vec()?;
        assert!(l[..3].iter().all(|v| v.is_nan()), "smoothing {smoothing}: {l:?}");
        assert!((l[3] - 1.4076).abs() < 1e-4, "smoothing {smoothing}: {l:?}");
        loss.sum_all()?.backward()?;
        let g = x.grad().unwrap().to_f64_vec()?;
        assert!(g[..9].iter().all(|v| v.is_nan()), "smoothing {smoothing}: {g:?}");
        for (i, w) in want_grad.iter().enumerate() {
            assert!((g[9 + i] - w).abs() < 1e-4, "smoothing {smoothing}: {g:?}");
        }
    }
    Ok(())
}
