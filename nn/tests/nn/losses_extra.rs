//! The losses of `nn/src/loss/extra.rs` against PyTorch in float64: the output and the gradients
//! of `out.sum()` for every case of `loss_extra_golden.rs` (written by
//! `nn/tests/make_loss_extra_golden.py`), torch's argument errors, and the module forms.

use oxtorch_nn::functional as F;
use oxtorch_nn::{
    Buffer, GaussianNLLLoss, HingeEmbeddingLoss, Module, ModuleExt, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, err, f64s, float64, int64, Inputs, T};

/// One case of the golden file.
struct Golden {
    name: &'static str,
    /// `(name, int64?, values)`
    inputs: &'static [(&'static str, bool, T)],
    out: T,
    /// `(input name, gradient of out.sum())`
    grads: &'static [(&'static str, T)],
}

include!("loss_extra_golden.rs");

/// An input of a case: an int64 tensor, or a float64 leaf requiring grad or not.
fn leaf(v: &T, int: bool, requires_grad: bool) -> Tensor {
    if int {
        int64(v)
    } else {
        float64(v).requires_grad_(requires_grad).unwrap()
    }
}

/// The reduction a case name ends with.
fn red(name: &str) -> &'static str {
    ["mean", "sum", "none"].into_iter().find(|r| name.ends_with(*r)).unwrap()
}

/// The call each case makes (the same arguments as the script's lambdas).
fn call(name: &str, c: &Inputs) -> Result<Tensor> {
    let t = |k: &str| c.t(k);
    let poisson =
        |log_input, full, eps, r| F::poisson_nll_loss(t("input"), t("target"), log_input, full, eps, r);
    let gaussian = |full, eps, r| F::gaussian_nll_loss(t("input"), t("target"), t("var"), full, eps, r);
    let triplet = |margin, p, eps, swap, r| {
        F::triplet_margin_loss(t("anchor"), t("positive"), t("negative"), margin, p, eps, swap, r)
    };
    let with_distance = |distance, margin, swap, r| {
        F::triplet_margin_with_distance_loss(
            t("anchor"),
            t("positive"),
            t("negative"),
            distance,
            margin,
            swap,
            r,
        )
    };
    let sq_distance = |x: &Tensor, y: &Tensor| -> Result<Tensor> { x.sub(y)?.square()?.sum(-1, false) };
    let sq_distance: &dyn Fn(&Tensor, &Tensor) -> Result<Tensor> = &sq_distance;
    let hinge = |margin, r| F::hinge_embedding_loss(t("input"), t("target"), margin, r);
    let multi_margin = |p, margin, weight: Option<&Tensor>, r| {
        F::multi_margin_loss(t("input"), t("target"), p, margin, weight, r)
    };
    match name {
        "poisson_log_mean" => poisson(true, false, 1e-8, "mean"),
        "poisson_log_full_sum" => poisson(true, true, 1e-8, "sum"),
        "poisson_rate_none" => poisson(false, false, 1e-8, "none"),
        "poisson_rate_full_eps_mean" => poisson(false, true, 0.1, "mean"),
        "gaussian_hetero_mean" => gaussian(false, 1e-6, "mean"),
        "gaussian_short_var_full_sum" => gaussian(true, 1e-6, "sum"),
        "gaussian_bcast_var_eps_none" => gaussian(false, 0.5, "none"),
        "gaussian_scalar_var_mean" => F::gaussian_nll_loss(t("input"), t("target"), 0.7, true, 1e-6, "mean"),
        "triplet_default_mean" => triplet(1.0, 2.0, 1e-6, false, "mean"),
        "triplet_p1_swap_sum" => triplet(0.5, 1.0, 1e-6, true, "sum"),
        "triplet_p3_eps_none" => triplet(2.0, 3.0, 1e-3, false, "none"),
        "triplet_unbatched_swap_mean" => triplet(3.0, 2.0, 1e-6, true, "mean"),
        "triplet_distance_default_mean" => with_distance(None, 1.0, false, "mean"),
        "triplet_distance_sq_swap_none" => with_distance(Some(sq_distance), 1.5, true, "none"),
        "hinge_mean" => hinge(1.0, "mean"),
        "hinge_margin_other_target_sum" => hinge(2.5, "sum"),
        "hinge_none" => hinge(0.5, "none"),
        n if n.starts_with("soft_margin_") => F::soft_margin_loss(t("input"), t("target"), red(n)),
        "multilabel_soft_margin_weight_sum" => {
            F::multilabel_soft_margin_loss(t("input"), t("target"), Some(t("weight")), "sum")
        }
        n if n.starts_with("multilabel_soft_margin_") => {
            F::multilabel_soft_margin_loss(t("input"), t("target"), None, red(n))
        }
        "multi_margin_mean" => multi_margin(1, 1.0, None, "mean"),
        "multi_margin_p2_weight_sum" => multi_margin(2, 0.7, Some(t("weight")), "sum"),
        "multi_margin_margin2_none" => multi_margin(1, 2.0, None, "none"),
        "multi_margin_unbatched_none" => multi_margin(1, 1.0, None, "none"),
        n if n.starts_with("multilabel_margin_") => {
            F::multilabel_margin_loss(t("input"), t("target"), red(n))
        }
        other => panic!("no call for golden case {other}"),
    }
}

#[test]
fn every_extra_loss_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 32, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = Inputs(
            g.inputs
                .iter()
                .map(|(k, int, v)| (*k, leaf(v, *int, g.grads.iter().any(|(n, _)| n == k))))
                .collect(),
        );
        let out = call(g.name, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_close(&format!("{}.out", g.name), &out, &g.out, 1e-10);
        out.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            assert_close(&format!("{}.grad.{k}", g.name), &got, want, 1e-10);
        }
    }
    Ok(())
}

fn i64s(v: &[i64], dims: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), dims).unwrap()
}

#[test]
fn bad_arguments_are_torch_errors() -> Result<()> {
    let x = f64s(&[0.5, -1.0, 2.0, 0.0, 1.0, -0.5], &[2, 3]);
    let y = f64s(&[1.0, -1.0, 1.0, -1.0, -1.0, 1.0], &[2, 3]);
    let cls = i64s(&[1, 2], &[2]);
    let labels = i64s(&[2, -1, 0, 1, 0, -1], &[2, 3]);
    // Reductions, checked before anything else: torch's two messages.
    let invalid = "avg is not a valid value for reduction";
    assert_eq!(err(F::poisson_nll_loss(&x, &y, true, false, 1e-8, "avg")), invalid);
    assert_eq!(err(F::triplet_margin_loss(&x, &x, &x, 1.0, 2.0, 1e-6, false, "avg")), invalid);
    assert_eq!(err(F::triplet_margin_with_distance_loss(&x, &x, &x, None, 1.0, false, "avg")), invalid);
    assert_eq!(err(F::hinge_embedding_loss(&x, &y, 1.0, "avg")), invalid);
    assert_eq!(err(F::soft_margin_loss(&x, &y, "avg")), invalid);
    assert_eq!(err(F::multi_margin_loss(&x, &cls, 1, 1.0, None, "avg")), invalid);
    assert_eq!(err(F::multilabel_margin_loss(&x, &labels, "avg")), invalid);
    assert_eq!(err(F::gaussian_nll_loss(&x, &y, &x.abs()?, false, 1e-6, "avg")), "avg is not valid");
    assert_eq!(err(F::multilabel_soft_margin_loss(&x, &y, None, "avg")), "avg is not valid");
    // gaussian_nll_loss's variance checks.
    let e = err(F::gaussian_nll_loss(&x, &y, f64s(&[1.0, 2.0, 3.0], &[3]), false, 1e-6, "mean"));
    assert_eq!(e, "var is of incorrect size");
    let e = err(F::gaussian_nll_loss(&x, &y, &x, false, 1e-6, "mean"));
    assert_eq!(e, "var has negative entry/entries");
    assert_eq!(
        err(F::gaussian_nll_loss(&x, &y, -1.0, false, 1e-6, "mean")),
        "var has negative entry/entries"
    );
    // triplet_margin_loss: dims and margin.
    let a = f64s(&[0.5, -1.0, 2.0], &[3]);
    assert_eq!(
        err(F::triplet_margin_loss(&a, &a, &x, 1.0, 2.0, 1e-6, false, "mean")),
        "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor 1D, positive 1D, and negative 2D inputs"
    );
    let e = err(F::triplet_margin_loss(&x, &x, &x, 0.0, 2.0, 1e-6, false, "mean"));
    assert!(e.starts_with("margin must be greater than 0, got 0"), "{e}");
    // multi_margin_loss: p, weight, target size, range and dtype.
    assert_eq!(err(F::multi_margin_loss(&x, &cls, 3, 1.0, None, "mean")), "only p == 1 and p == 2 supported");
    let w2 = f64s(&[1.0, 2.0], &[2]);
    assert_eq!(
        err(F::multi_margin_loss(&x, &cls, 1, 1.0, Some(&w2), "mean")),
        "inconsistent weight size, expected 3 but got [2]"
    );
    let w = f64s(&[1.0, 2.0, 3.0], &[1, 3]);
    assert_eq!(
        err(F::multi_margin_loss(&x, &cls, 1, 1.0, Some(&w), "mean")),
        "weight must be one-dimensional"
    );
    assert_eq!(
        err(F::multi_margin_loss(&x, &i64s(&[1, 2], &[2, 1]), 1, 1.0, None, "mean")),
        "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). Expected target size [2], but got [2, 1]. Input has shape [2, 3]."
    );
    assert_eq!(
        err(F::multi_margin_loss(&x, &i64s(&[1, 5], &[2]), 1, 1.0, None, "mean")),
        "target out of range"
    );
    let float_cls = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
    assert_eq!(
        err(F::multi_margin_loss(&x, &float_cls, 1, 1.0, None, "mean")),
        "expected scalar type Long but found Float"
    );
    // multilabel_margin_loss: target size, range, input rank.
    assert_eq!(
        err(F::multilabel_margin_loss(&x, &i64s(&[1, 2], &[1, 2]), "mean")),
        "inconsistent target size: [1, 2] for input of size: [2, 3]"
    );
    let out_of_range = i64s(&[2, -1, 5, 1, 0, -1], &[2, 3]);
    assert_eq!(
        err(F::multilabel_margin_loss(&x, &out_of_range, "mean")),
        "argument #2 'target' is out of range"
    );
    let x3 = x.reshape([1, 2, 3])?;
    assert_eq!(
        err(F::multilabel_margin_loss(&x3, &labels.reshape([1, 2, 3])?, "mean")),
        "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [1, 2, 3]"
    );
    // soft_margin_loss is not differentiable in its target; shapes must broadcast.
    let y_grad = y.detach().requires_grad_(true)?;
    assert_eq!(
        err(F::soft_margin_loss(&x, &y_grad, "mean")),
        "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. This input cannot have requires_grad True."
    );
    assert!(F::hinge_embedding_loss(&x, &f64s(&[1.0, -1.0], &[2]), 1.0, "mean").is_err());
    Ok(())
}

/// `pairwise_distance` broadcasts and norms the last dim of `x1 - x2 + eps`, as torch's.
#[test]
fn pairwise_distance_matches_torch() -> Result<()> {
    let ones = Tensor::ones([3], DType::F64)?;
    let d = F::pairwise_distance(&ones, &Tensor::ones([2, 3], DType::F64)?, 2.0, 1e-6, false)?;
    assert_eq!(d.dims(), [2]);
    let want = (3.0f64 * 1e-12).sqrt(); // torch: 1.7321e-06
    for v in d.to_vec::<f64>()? {
        assert!((v - want).abs() <= 1e-12 * want, "{v}");
    }
    let d = F::pairwise_distance(&ones, &ones.mul(3.0)?, 1.0, 1e-6, true)?;
    assert_eq!(d.dims(), [1]);
    assert!((d.item::<f64>()? - 3.0 * (2.0 - 1e-6)).abs() < 1e-12);
    Ok(())
}

#[test]
fn modules_call_the_functional_forms_with_torch_defaults() -> Result<()> {
    let x = f64s(&[0.5, -1.0, 2.0, 0.0, 1.0, -0.5], &[2, 3]);
    let y = f64s(&[1.0, -1.0, 1.0, -1.0, -1.0, 1.0], &[2, 3]);
    let counts = f64s(&[0.0, 1.0, 2.0, 3.0, 1.0, 0.0], &[2, 3]);
    let bits = f64s(&[1.0, 0.0, 1.0, 0.0, 0.0, 1.0], &[2, 3]);
    let cls = i64s(&[2, 0], &[2]);
    let labels = i64s(&[2, -1, 0, 1, 0, -1], &[2, 3]);
    let w = f64s(&[1.0, 2.0, 0.5], &[3]);
    let same = |a: Tensor, b: Tensor| assert!(a.equal(&b).unwrap());

    let m = PoissonNLLLoss::default();
    assert!(m.log_input && !m.full && m.eps == 1e-8 && m.reduction == "mean");
    same(m.forward(&x, &counts)?, F::poisson_nll_loss(&x, &counts, true, false, 1e-8, "mean")?);

    let m = GaussianNLLLoss::default();
    assert!(!m.full && m.eps == 1e-6 && m.reduction == "mean");
    let var = x.abs()?;
    same(m.forward(&x, &y, &var)?, F::gaussian_nll_loss(&x, &y, &var, false, 1e-6, "mean")?);
    same(m.forward(&x, &y, 0.5)?, F::gaussian_nll_loss(&x, &y, 0.5, false, 1e-6, "mean")?);

    let m = TripletMarginLoss::default();
    assert!(m.margin == 1.0 && m.p == 2.0 && m.eps == 1e-6 && !m.swap && m.reduction == "mean");
    same(
        m.forward(&x, &y, &counts)?,
        F::triplet_margin_loss(&x, &y, &counts, 1.0, 2.0, 1e-6, false, "mean")?,
    );

    let m = HingeEmbeddingLoss::default();
    assert!(m.margin == 1.0 && m.reduction == "mean");
    same(m.forward(&x, &y)?, F::hinge_embedding_loss(&x, &y, 1.0, "mean")?);

    let m = SoftMarginLoss::default();
    assert_eq!(m.reduction, "mean");
    same(m.forward(&x, &y)?, F::soft_margin_loss(&x, &y, "mean")?);

    let m = MultiLabelSoftMarginLoss::default();
    assert!(m.weight.is_none() && m.reduction == "mean");
    let m = MultiLabelSoftMarginLoss { weight: Some(Buffer(w.clone())), ..Default::default() };
    assert_eq!(m.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    assert_eq!(m.named_parameters().len(), 0);
    same(m.forward(&x, &bits)?, F::multilabel_soft_margin_loss(&x, &bits, Some(&w), "mean")?);

    let m = MultiMarginLoss::default();
    assert!(m.p == 1 && m.margin == 1.0 && m.weight.is_none() && m.reduction == "mean");
    same(m.forward(&x, &cls)?, F::multi_margin_loss(&x, &cls, 1, 1.0, None, "mean")?);
    let m = MultiMarginLoss { p: 2, weight: Some(Buffer(w.clone())), reduction: "sum", ..Default::default() };
    assert_eq!(m.type_name(), "MultiMarginLoss");
    assert_eq!(m.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    same(m.forward(&x, &cls)?, F::multi_margin_loss(&x, &cls, 2, 1.0, Some(&w), "sum")?);

    let m = MultiLabelMarginLoss::default();
    assert_eq!(m.reduction, "mean");
    same(m.forward(&x, &labels)?, F::multilabel_margin_loss(&x, &labels, "mean")?);
    Ok(())
}

/// `nn.TripletMarginWithDistanceLoss` with a cosine distance, swap and no reduction, and with its
/// defaults (torch 2.15's values, float64).
#[test]
fn triplet_margin_with_distance_module_matches_pytorch() -> Result<()> {
    let a = f64s(&[1.0, 2.0, 0.5, 0.0, -1.0, 2.0], &[2, 3]);
    let p = f64s(&[1.5, 1.0, 0.0, 0.5, -1.0, 1.0], &[2, 3]);
    let n = f64s(&[-1.0, 2.0, 1.0, 1.0, 1.0, 1.0], &[2, 3]);
    let cosine: oxtorch_nn::SharedDistanceFn =
        std::sync::Arc::new(|x: &Tensor, y: &Tensor| F::cosine_similarity(x, y, 1, 1e-8)?.neg()?.add(1.0));
    let loss = oxtorch_nn::TripletMarginWithDistanceLoss {
        distance_function: Some(cosine),
        margin: 0.5,
        swap: true,
        reduction: "none",
    };
    let got = loss.forward(&a, &p, &n)?.to_f64_vec()?;
    assert!((got[0] - 0.27629101872600015).abs() < 1e-14 && got[1] == 0.0, "{got:?}");
    let default = oxtorch_nn::TripletMarginWithDistanceLoss::default().forward(&a, &p, &n)?;
    assert!((default.item::<f64>()? - 0.08159607373640898).abs() < 1e-14);
    Ok(())
}
