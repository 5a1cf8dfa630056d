//! Every loss against PyTorch: outputs and input gradients (`tests/golden/losses.safetensors`,
//! written by `tests/golden/make_golden_losses.py`), f32 and f64, plus argument errors and the
//! module forms.

use std::collections::BTreeSet;

use oxtorch_nn::functional as F;
use oxtorch_nn::{
    BCELoss, BCEWithLogitsLoss, CTCLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, MSELoss, Module, ModuleExt,
    NLLLoss, StateDict,
};
use oxtorch_tensor::{tensor, DType, Result, Tensor};

type LossFn = fn(&Case) -> Result<Tensor>;

/// One golden case: its tensors by name.
struct Case<'a> {
    name: &'a str,
    sd: &'a StateDict,
}

impl Case<'_> {
    fn t(&self, k: &str) -> Tensor {
        self.sd
            .get(&format!("{}.{k}", self.name))
            .unwrap_or_else(|| panic!("{}: no tensor {k}", self.name))
            .clone()
    }
    fn has(&self, k: &str) -> bool {
        self.sd.get(&format!("{}.{k}", self.name)).is_some()
    }
}

fn red(name: &str) -> &'static str {
    ["mean", "sum", "none"].into_iter().find(|r| name.contains(&format!("_{r}_"))).unwrap_or("mean")
}

/// A number written in the case name after `key` (`huber_delta0.3_f32` → 0.3).
fn param(name: &str, key: &str) -> f64 {
    let rest = &name[name.find(key).unwrap() + key.len()..];
    rest[..rest.find('_').unwrap()].parse().unwrap()
}

/// The call each case family makes (the same arguments as the script's lambdas).
fn call(name: &str) -> LossFn {
    let family = |p: &str| name.starts_with(p);
    if family("ce_ignore2_weight_smooth") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), Some(&c.t("weight")), 2, red(c.name), 0.1)
    } else if family("ce_idx_weight") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), Some(&c.t("weight")), -100, "mean", 0.0)
    } else if family("ce_smooth") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), None, -100, "mean", 0.25)
    } else if family("ce_prob_weight_smooth") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), Some(&c.t("weight")), -100, "mean", 0.2)
    } else if family("ce_all_ignored_sum") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), None, -100, "sum", 0.0)
    } else if family("ce_") {
        |c| F::cross_entropy(&c.t("input"), &c.t("target"), None, -100, red(c.name), 0.0)
    } else if family("nll_weight_ignore_none") {
        |c| F::nll_loss(&c.t("input"), &c.t("target"), Some(&c.t("weight")), -100, "none")
    } else if family("nll_weight_mean") {
        |c| F::nll_loss(&c.t("input"), &c.t("target"), Some(&c.t("weight")), -100, "mean")
    } else if family("nll_kd_sum") {
        |c| F::nll_loss(&c.t("input"), &c.t("target"), None, -100, "sum")
    } else if family("nll_") {
        |c| F::nll_loss(&c.t("input"), &c.t("target"), None, -100, "mean")
    } else if family("mse_") {
        |c| F::mse_loss(&c.t("input"), &c.t("target"), red(c.name))
    } else if family("l1_") {
        |c| F::l1_loss(&c.t("input"), &c.t("target"), red(c.name))
    } else if family("smooth_l1_") {
        |c| F::smooth_l1_loss(&c.t("input"), &c.t("target"), "mean", param(c.name, "beta"))
    } else if family("huber_") {
        |c| F::huber_loss(&c.t("input"), &c.t("target"), "sum", param(c.name, "delta"))
    } else if family("bce_weight") {
        |c| F::binary_cross_entropy(&c.t("input"), &c.t("target"), Some(&c.t("weight")), "mean")
    } else if family("bce_saturated") {
        |c| F::binary_cross_entropy(&c.t("input"), &c.t("target"), None, "none")
    } else if family("bce_") {
        |c| F::binary_cross_entropy(&c.t("input"), &c.t("target"), None, red(c.name))
    } else if family("bcel_pos_weight") {
        |c| {
            F::binary_cross_entropy_with_logits(
                &c.t("input"),
                &c.t("target"),
                None,
                "mean",
                Some(&c.t("pos_weight")),
            )
        }
    } else if family("bcel_weight_pos_weight") {
        |c| {
            let (w, pw) = (c.t("weight"), c.t("pos_weight"));
            F::binary_cross_entropy_with_logits(&c.t("input"), &c.t("target"), Some(&w), "sum", Some(&pw))
        }
    } else if family("bcel_") {
        |c| F::binary_cross_entropy_with_logits(&c.t("input"), &c.t("target"), None, red(c.name), None)
    } else if family("kl_tgrad") {
        |c| F::kl_div(&c.t("input"), &c.t("target"), "sum", false)
    } else if family("kl_log_target") {
        |c| F::kl_div(&c.t("input"), &c.t("target"), "batchmean", true)
    } else if family("kl_") {
        |c| {
            let r = ["batchmean", "mean", "sum", "none"]
                .into_iter()
                .find(|r| c.name == format!("kl_{r}_{}", &c.name[c.name.len() - 3..]))
                .unwrap();
            F::kl_div(&c.t("input"), &c.t("target"), r, false)
        }
    } else if family("cosine_") {
        |c| {
            F::cosine_embedding_loss(
                &c.t("input1"),
                &c.t("input2"),
                &c.t("target"),
                param(c.name, "_m"),
                red(c.name),
            )
        }
    } else if family("ranking_") {
        |c| {
            F::margin_ranking_loss(
                &c.t("input1"),
                &c.t("input2"),
                &c.t("target"),
                param(c.name, "_m"),
                red(c.name),
            )
        }
    } else if family("ctc_") {
        |c| {
            let blank = if c.name.starts_with("ctc_blank1") { 1 } else { 0 };
            let reduction = if c.name.starts_with("ctc_concat") {
                "sum"
            } else if c.name.starts_with("ctc_infeasible") || c.name.starts_with("ctc_empty") {
                "none"
            } else {
                red(c.name)
            };
            let zero_infinity = c.name.contains("_zi1_");
            let (lp, tg, il, tl) =
                (c.t("log_probs"), c.t("targets"), c.t("input_lengths"), c.t("target_lengths"));
            F::ctc_loss(&lp, &tg, &il, &tl, blank, reduction, zero_infinity)
        }
    } else {
        panic!("no call for golden case {name}")
    }
}

/// torch's `allclose` rule with `rtol = atol = tol`; infinities and NaNs must match exactly.
fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let ok = if y.is_finite() {
            (x - y).abs() <= tol * (1.0 + y.abs())
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        assert!(ok, "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

fn golden() -> StateDict {
    StateDict::load(format!("{}/../tests/golden/losses.safetensors", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn every_loss_matches_pytorch_values_and_gradients() -> Result<()> {
    let sd = golden();
    let names: BTreeSet<String> =
        sd.keys().filter_map(|k| k.strip_suffix(".out")).map(str::to_string).collect();
    assert_eq!(names.len(), 126, "the golden file's case count changed");
    let mut grads_checked = 0;
    for name in &names {
        let case = Case { name, sd: &sd };
        let tol = if name.ends_with("f64") { 1e-10 } else { 1e-5 };
        let grad_names: Vec<String> =
            sd.keys().filter_map(|k| k.strip_prefix(&format!("{name}.grad."))).map(str::to_string).collect();
        // Re-register the tensors the case differentiates as leaves.
        let mut leaves = StateDict::new();
        for (k, v) in sd.iter() {
            if let Some(short) = k.strip_prefix(&format!("{name}.")) {
                let v = if grad_names.iter().any(|g| g == short) {
                    v.detach().requires_grad_(true)?
                } else {
                    v.clone()
                };
                leaves.insert(k, v);
            }
        }
        let case_leaves = Case { name, sd: &leaves };
        let out = call(name)(&case_leaves).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_close(&format!("{name}.out"), &out, &case.t("out"), tol);
        if grad_names.is_empty() {
            continue;
        }
        out.mul(case.t("gout"))?.sum_all()?.backward()?;
        for g in &grad_names {
            let got = case_leaves.t(g).grad().unwrap_or(case_leaves.t(g).zeros_like()?);
            assert_close(&format!("{name}.grad.{g}"), &got, &case.t(&format!("grad.{g}")), tol);
            grads_checked += 1;
        }
        assert!(case.has("gout"));
    }
    assert!(grads_checked > 150, "only {grads_checked} gradients checked");
    Ok(())
}

#[test]
fn modules_call_the_functional_forms_with_torch_defaults() -> Result<()> {
    let x = tensor!([[0.5, -1.0, 2.0], [0.0, 1.0, -0.5]]);
    let t = Tensor::from_vec(vec![2i64, -100], [2])?;
    let ce = CrossEntropyLoss::default();
    assert!(ce.forward(&x, &t)?.equal(&F::cross_entropy(&x, &t, None, -100, "mean", 0.0)?)?);
    let w = tensor!([1.0, 2.0, 3.0]);
    let weighted = CrossEntropyLoss { weight: Some(oxtorch_nn::Buffer(w.clone())), ..Default::default() };
    assert_eq!(weighted.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    assert_eq!(weighted.named_parameters().len(), 0);
    assert_eq!(weighted.type_name(), "CrossEntropyLoss");
    let lp = x.log_softmax(1, None)?;
    assert!(NLLLoss::default().forward(&lp, &t)?.equal(&F::nll_loss(&lp, &t, None, -100, "mean")?)?);
    let y = tensor!([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]);
    assert!(MSELoss::default().forward(&x, &y)?.equal(&F::mse_loss(&x, &y, "mean")?)?);
    assert!(HuberLoss { delta: 0.5, reduction: "sum" }
        .forward(&x, &y)?
        .equal(&F::huber_loss(&x, &y, "sum", 0.5)?)?);
    let p = x.sigmoid()?;
    assert!(BCELoss::default().forward(&p, &y)?.equal(&F::binary_cross_entropy(&p, &y, None, "mean")?)?);
    let bcel = BCEWithLogitsLoss { pos_weight: Some(oxtorch_nn::Buffer(w.clone())), ..Default::default() };
    assert!(bcel.forward(&x, &y)?.equal(&F::binary_cross_entropy_with_logits(
        &x,
        &y,
        None,
        "mean",
        Some(&w)
    )?)?);
    assert_eq!(bcel.state_dict().keys().collect::<Vec<_>>(), ["pos_weight"]);
    let kl = KLDivLoss { reduction: "batchmean", log_target: false };
    assert!(kl.forward(&lp, &p.softmax(1, None)?)?.equal(&F::kl_div(
        &lp,
        &p.softmax(1, None)?,
        "batchmean",
        false
    )?)?);
    assert_eq!(CTCLoss::default().blank, 0);
    Ok(())
}

#[test]
fn bad_arguments_are_torch_errors() -> Result<()> {
    let x = tensor!([[0.5, -1.0], [0.0, 1.0]]);
    let y = tensor!([[0.0, 1.0], [1.0, 1.0]]);
    let e = F::mse_loss(&x, &y, "avg").unwrap_err().to_string();
    assert!(e.contains("avg is not a valid value for reduction"), "{e}");
    let e = F::binary_cross_entropy(&x, &y, None, "mean").unwrap_err().to_string();
    assert!(e.contains("all elements of input should be between 0 and 1"), "{e}");
    let e =
        F::binary_cross_entropy(&x.sigmoid()?, &tensor!([1.0, 0.0]), None, "mean").unwrap_err().to_string();
    assert!(
        e.contains(
            "Using a target size (torch.Size([2])) that is different to the input size (torch.Size([2, 2]))"
        ),
        "{e}"
    );
    let e =
        F::binary_cross_entropy_with_logits(&x, &tensor!([1.0]), None, "mean", None).unwrap_err().to_string();
    assert!(
        e.contains("Target size (torch.Size([1])) must be the same as input size (torch.Size([2, 2]))"),
        "{e}"
    );
    assert!(F::smooth_l1_loss(&x, &y, "mean", -1.0).is_err());
    assert!(F::huber_loss(&x, &y, "mean", 0.0).is_err());
    let e = F::cosine_embedding_loss(&x, &x, &tensor!([[1.0]]), 0.0, "mean").unwrap_err().to_string();
    assert!(e.contains("0D or 1D target tensor expected"), "{e}");
    let e = F::cosine_embedding_loss(&x, &x, &tensor!(1.0), 0.0, "mean").unwrap_err().to_string();
    assert!(e.contains("0D target tensor expects 1D input tensors"), "{e}");
    let e = F::margin_ranking_loss(&x, &x, &tensor!([1.0]), 0.0, "mean").unwrap_err().to_string();
    assert!(e.contains("All input tensors should have same dimension"), "{e}");
    let e = F::cross_entropy(&x, &Tensor::from_vec(vec![0i64, 5], [2])?, None, -100, "mean", 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Target 5 is out of bounds."), "{e}");
    // CTC: lengths past the input, blank out of range, labels out of range, integer log-probs.
    let lp = Tensor::randn([4, 1, 3], ())?.log_softmax(2, None)?;
    let tg = Tensor::from_vec(vec![1i64, 2], [1, 2])?;
    let len = |v: i64| Tensor::from_vec(vec![v], [1]).unwrap();
    let e = F::ctc_loss(&lp, &tg, &len(5), &len(2), 0, "mean", false).unwrap_err().to_string();
    assert!(e.contains("Expected input_lengths to have value at most 4, but got value 5"), "{e}");
    let e = F::ctc_loss(&lp, &tg, &len(4), &len(2), 3, "mean", false).unwrap_err().to_string();
    assert!(e.contains("blank must be in label range"), "{e}");
    let bad = Tensor::from_vec(vec![1i64, 7], [1, 2])?;
    assert!(F::ctc_loss(&lp, &bad, &len(4), &len(2), 0, "mean", false).is_err());
    assert!(F::ctc_loss(&lp, &tg, &len(4), &len(3), 0, "mean", false).is_err());
    assert!(F::ctc_loss(&lp.to_dtype(DType::F16)?, &tg, &len(4), &len(2), 0, "mean", false).is_err());
    Ok(())
}

#[test]
fn losses_run_in_float16_through_their_float_paths() -> Result<()> {
    let x = tensor!([[0.5, -1.0], [0.0, 1.0]]).to_dtype(DType::F16)?;
    let y = tensor!([[0.0, 1.0], [1.0, 1.0]]).to_dtype(DType::F16)?;
    let l = F::binary_cross_entropy_with_logits(&x, &y, None, "mean", None)?;
    assert_eq!(l.dtype(), DType::F16);
    let want = F::binary_cross_entropy_with_logits(
        &x.to_dtype(DType::F32)?,
        &y.to_dtype(DType::F32)?,
        None,
        "mean",
        None,
    )?;
    assert!((l.to_dtype(DType::F32)?.item::<f32>()? - want.item::<f32>()?).abs() < 1e-2);
    Ok(())
}

/// binary_cross_entropy's gradients at saturation are torch's (`(x - t) / max(x (1 - x), 1e-12)`
/// for the input, `log(1 - x) - log(x)` for the target), and it differentiates twice; values
/// from torch 2.15 in f64.
#[test]
fn binary_cross_entropy_gradients_at_saturation_match_torch() -> Result<()> {
    let x = Tensor::from_slice(&[0.0f64, 0.0, 1.0, 1.0, 0.3], [5])?.requires_grad_(true)?;
    let t = Tensor::from_slice(&[1.0f64, 0.0, 0.0, 1.0, 0.8], [5])?.requires_grad_(true)?;
    let w = Tensor::from_slice(&[1.0f64, 2.0, 1.0, 1.0, 0.5], [5])?;
    let loss = F::binary_cross_entropy(&x, &t, Some(&w), "mean")?;
    assert!((loss.item::<f64>()? - 40.10345132322485).abs() < 1e-9);
    loss.backward()?;
    let gx = x.grad().unwrap().to_f64_vec()?;
    let want = [-200000000799.16058, 0.0, 200000000799.16058, 0.0, -0.23809523809523808];
    for (g, w) in gx.iter().zip(want) {
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{gx:?}");
    }
    let gt = t.grad().unwrap().to_f64_vec()?;
    assert_eq!(gt[..4], [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY]);
    assert!((gt[4] - 0.08472978603872036).abs() < 1e-12);
    // Second order: torch 1.5624999999804687, 2.0408163265111776.
    let x2 = Tensor::from_slice(&[0.2f64, 0.7], [2])?.requires_grad_(true)?;
    let t2 = Tensor::from_slice(&[0.0f64, 1.0], [2])?;
    let loss = F::binary_cross_entropy(&x2, &t2, None, "sum")?;
    let grad = oxtorch_tensor::autograd::grad;
    let g = grad(&[loss], std::slice::from_ref(&x2), None, true, true, false)?.remove(0).unwrap();
    let gg = grad(&[g.sum_all()?], std::slice::from_ref(&x2), None, false, false, false)?.remove(0).unwrap();
    let gg = gg.to_f64_vec()?;
    assert!((gg[0] - 1.5625).abs() < 1e-9 && (gg[1] - 2.0408163265306123).abs() < 1e-9, "{gg:?}");
    Ok(())
}

/// Edge inputs as torch 2.15 treats them: soft labels of another float dtype promote (float64
/// labels make a float64 loss), a NaN probability is out of BCE's range, and `kl_div` of a
/// negative target is NaN (`xlogy(t, t)`).
#[test]
fn mixed_dtypes_nan_and_negative_targets_follow_torch() -> Result<()> {
    let x = tensor!([[1.0f32, 2.0, 3.0]]);
    let t = tensor!([[0.2, 0.3, 0.5]], dtype = DType::F64);
    let l = F::cross_entropy(&x, &t, None, -100, "mean", 0.0)?;
    assert_eq!(l.dtype(), DType::F64);
    // (float32 log-probabilities: equal to torch's within their rounding)
    assert!((l.item::<f64>()? - 1.107605916261673).abs() < 1e-6, "{}", l.item::<f64>()?);
    let l = F::cross_entropy(&x.to_dtype(DType::F64)?, &t.to_dtype(DType::F32)?, None, -100, "mean", 0.0)?;
    assert!((l.item::<f64>()? - 1.1076059883995761).abs() < 1e-12, "{}", l.item::<f64>()?);
    let e = F::binary_cross_entropy(&tensor!([0.5f32, f32::NAN]), &tensor!([1.0f32, 0.0]), None, "mean")
        .unwrap_err()
        .to_string();
    assert!(e.contains("all elements of input should be between 0 and 1"), "{e}");
    let kl =
        F::kl_div(&tensor!([-1.0f32, -2.0]), &tensor!([-0.5f32, 0.5]), "none", false)?.to_vec::<f32>()?;
    assert!(kl[0].is_nan() && (kl[1] - 0.6534264).abs() < 1e-6, "{kl:?}");
    Ok(())
}
