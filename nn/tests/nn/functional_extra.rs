//! `normalize`, `cosine_similarity`, `softmin`, `hardshrink`, `softshrink`, `tanhshrink`, `threshold`,
//! `logsigmoid`, `softsign`, `rrelu`, `prelu`, `local_response_norm` and `instance_norm` against
//! PyTorch in float64: the output and the gradients of `out.sum()` for every case of
//! `functional_extra_golden.rs` (written by `nn/tests/make_functional_extra_golden.py`), rrelu's
//! random slopes in training, and torch's argument errors.

use oxtorch_nn::functional as F;
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, err, f64s, Golden, Inputs, T};

include!("functional_extra_golden.rs");

/// The ops built from reductions may round differently from torch's composition: 1e-9 for them,
/// 1e-10 for the elementwise ones.
fn tol(name: &str) -> f64 {
    let composed = ["normalize_", "cosine_", "lrn_", "instance_norm_"];
    if composed.iter().any(|p| name.starts_with(p)) {
        1e-9
    } else {
        1e-10
    }
}

/// The call each case makes (the same arguments as the script's lambdas).
fn call(name: &str, c: &Inputs) -> Result<Tensor> {
    let t = |k: &str| c.t(k);
    let normalize = |p, dim, eps| F::normalize(t("input"), p, dim, eps);
    let cosine = |dim, eps| F::cosine_similarity(t("x1"), t("x2"), dim, eps);
    let lrn = |size, alpha, beta, k| F::local_response_norm(t("input"), size, alpha, beta, k);
    let instance = |weight: Option<&Tensor>, bias: Option<&Tensor>, eps| {
        F::instance_norm(t("input"), None, None, weight, bias, true, 0.1, eps)
    };
    match name {
        "normalize_p2_dim1" => normalize(2.0, 1, 1e-12),
        "normalize_p2_eps_dim_neg1" => normalize(2.0, -1, 0.5),
        "normalize_p1_dim1" => normalize(1.0, 1, 1e-12),
        "normalize_p1_eps_dim_neg1" => normalize(1.0, -1, 0.5),
        "normalize_p3_dim0" => normalize(3.0, 0, 1e-12),
        "cosine_bcast_dim_neg1" => cosine(-1, 1e-8),
        "cosine_bcast_dim0" => cosine(0, 1e-8),
        "cosine_rank_bcast_dim1" => cosine(1, 1e-8),
        "softmin_dim0" => F::softmin(t("input"), 0, None),
        "softmin_dim_neg1" => F::softmin(t("input"), -1, None),
        "hardshrink_default" => F::hardshrink(t("input"), 0.5),
        "hardshrink_lambd1" => F::hardshrink(t("input"), 1.0),
        "hardshrink_lambd0_25" => F::hardshrink(t("input"), 0.25),
        "softshrink_default" => F::softshrink(t("input"), 0.5),
        "softshrink_lambd1" => F::softshrink(t("input"), 1.0),
        "softshrink_lambd0_25" => F::softshrink(t("input"), 0.25),
        "tanhshrink" => F::tanhshrink(t("input")),
        "logsigmoid" => F::logsigmoid(t("input")),
        "softsign" => F::softsign(t("input")),
        "threshold_half_to_neg2" => F::threshold(t("input"), 0.5, -2.0),
        "threshold_neg1_to_0" => F::threshold(t("input"), -1.0, 0.0),
        "rrelu_eval_default" => F::rrelu(t("input"), 1.0 / 8.0, 1.0 / 3.0, false),
        "rrelu_eval_0_1_0_9" => F::rrelu(t("input"), 0.1, 0.9, false),
        n if n.starts_with("prelu_") => F::prelu(t("input"), t("weight")),
        "lrn_3d_size3" | "lrn_4d_size3" => lrn(3, 0.9, 0.75, 1.0),
        "lrn_3d_size2" | "lrn_4d_size2" => lrn(2, 0.5, 0.6, 2.0),
        "lrn_3d_size3_defaults" => lrn(3, 1e-4, 0.75, 1.0),
        "lrn_3d_size5_of_3" => lrn(5, 0.7, 0.8, 1.5),
        "instance_norm_3d" | "instance_norm_4d" => instance(None, None, 1e-5),
        "instance_norm_3d_affine" | "instance_norm_4d_affine" => {
            instance(Some(t("weight")), Some(t("bias")), 1e-5)
        }
        "instance_norm_3d_weight_eps" => instance(Some(t("weight")), None, 0.5),
        other => panic!("no call for golden case {other}"),
    }
}

#[test]
fn every_extra_functional_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 40, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = g.input_tensors(&[]);
        let rtol = tol(g.name);
        let out = call(g.name, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_close(&format!("{}.out", g.name), &out, &g.out, rtol);
        out.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            assert_close(&format!("{}.grad.{k}", g.name), &got, want, rtol);
        }
    }
    Ok(())
}

/// In training, rrelu multiplies each negative element by its own slope drawn from
/// `U(lower, upper)` and keeps the others; the gradient is that slope (1 for the kept ones).
#[test]
fn rrelu_training_draws_slopes_between_lower_and_upper() -> Result<()> {
    let (lower, upper) = (0.125, 1.0 / 3.0);
    let data: Vec<f64> =
        (0..64).map(|i| if i % 4 == 3 { 0.25 * i as f64 + 0.5 } else { -0.1 * (i + 1) as f64 }).collect();
    let x = Tensor::from_vec(data.clone(), [4, 16])?.requires_grad_(true)?;
    let out = F::rrelu(&x, lower, upper, true)?;
    assert_eq!(out.dims(), [4, 16]);
    assert_eq!(out.dtype(), DType::F64);
    let values = out.to_vec::<f64>()?;
    out.sum_all()?.backward()?;
    let grad = x.grad().expect("rrelu passes a gradient in training").to_vec::<f64>()?;
    let mut slopes = Vec::new();
    for (i, ((&xi, &yi), &gi)) in data.iter().zip(&values).zip(&grad).enumerate() {
        if xi > 0.0 {
            assert_eq!(yi, xi, "[{i}]: a positive input is kept");
            assert_eq!(gi, 1.0, "[{i}]: gradient of a kept input");
        } else {
            let a = yi / xi;
            assert!(a >= lower * (1.0 - 1e-12) && a <= upper * (1.0 + 1e-12), "[{i}]: slope {a} for {xi}");
            assert!((gi - a).abs() <= 1e-12, "[{i}]: gradient {gi}, slope {a}");
            slopes.push(a);
        }
    }
    assert_eq!(slopes.len(), 48);
    assert!(slopes.iter().any(|&a| (a - slopes[0]).abs() > 1e-6), "one slope per element: {slopes:?}");
    Ok(())
}

#[test]
fn bad_arguments_are_torch_errors() -> Result<()> {
    let x = f64s(&[0.5, -1.0, 2.0, 0.0, 1.0, -0.5], &[2, 3]);
    // prelu: a weight of neither 1 nor C elements.
    let x4 = Tensor::from_vec((0..24).map(|i| i as f64 - 11.5).collect::<Vec<_>>(), [2, 4, 3])?;
    let w3 = f64s(&[0.25, 0.5, 0.75], &[3]);
    assert_eq!(
        err(F::prelu(&x4, &w3)),
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 4."
    );
    // softmin and normalize: dims out of range.
    assert_eq!(
        err(F::softmin(&x, 2, None)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    assert_eq!(
        err(F::softmin(&x, -3, None)),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"
    );
    assert_eq!(
        err(F::normalize(&x, 2.0, 2, 1e-12)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    assert_eq!(
        err(F::normalize(&x, 1.0, -3, 1e-12)),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"
    );
    // local_response_norm needs a channel dim after the batch dim.
    let e = err(F::local_response_norm(&x, 2, 1e-4, 0.75, 1.0));
    assert!(e.starts_with("Expected 3D or higher dimensionality") && e.contains("(got 2 dimensions)"), "{e}");
    // cosine_similarity: shapes that do not broadcast.
    assert!(F::cosine_similarity(&x, &f64s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]), 1, 1e-8).is_err());
    Ok(())
}
