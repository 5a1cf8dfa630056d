//! `lp_pool1d/2d/3d` and `LPPool*`, `Softmax2d`, `UpsamplingNearest2d`, `UpsamplingBilinear2d`,
//! the in-place functional activations, `nn.utils.get_total_norm` / `clip_grads_with_norm_`, and
//! `nn.utils.fusion`, against PyTorch: in float64, the outputs and gradients of every case of
//! `nn_tier3_golden.rs` (written by `nn/tests/make_nn_tier3_golden.py`), and torch's errors in
//! its words.

use oxtorch_nn::functional as F;
use oxtorch_nn::utils;
use oxtorch_nn::{
    BatchNorm, Buffer, ConvNd, ConvOptions, Forward, LPPool1d, LPPool2d, LPPool3d, Linear, Module, Softmax2d,
    UpsamplingBilinear2d, UpsamplingNearest2d,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

use super::golden_case::{assert_close, ramp, Golden, Inputs, T};

include!("nn_tier3_golden.rs");

/// `y = input * 1` (a non-leaf), `op(y)` in place, `y`; checks that `op` returns `y` itself.
fn inplace(c: &Inputs, op: impl FnOnce(&Tensor) -> Result<&Tensor>) -> Result<Tensor> {
    let y = c.t("input").mul(1.0)?;
    let r = op(&y)?;
    assert!(r.is_same(&y), "the in-place op returns its input");
    Ok(y)
}

/// Parameters whose gradients are `a` and `b`, clipped by `clip_grads_with_norm_` with the total
/// norm of `get_total_norm`: the clipped gradients, flattened and concatenated.
fn clip(c: &Inputs, max_norm: f64, norm_type: f64) -> Result<Tensor> {
    let params: Vec<Tensor> = ["a", "b"]
        .iter()
        .map(|k| {
            let p = c.t(k).zeros_like()?.requires_grad_(true)?;
            p.set_grad(Some(c.t(k).detach().copy()?))?;
            Ok(p)
        })
        .collect::<Result<_>>()?;
    let grads: Vec<Tensor> = params.iter().map(|p| p.grad().unwrap()).collect();
    let total = utils::get_total_norm(&grads, norm_type, false, None)?;
    utils::clip_grads_with_norm_(&params, max_norm, &total, None)?;
    let flat: Vec<Tensor> = params.iter().map(|p| p.grad().unwrap().reshape([-1])).collect::<Result<_>>()?;
    let refs: Vec<&Tensor> = flat.iter().collect();
    Tensor::cat(&refs, 0)
}

const EPS: f64 = 1e-3;

fn fuse_conv(c: &Inputs, bias: bool, transpose: bool) -> Result<(Tensor, Tensor)> {
    utils::fuse_conv_bn_weights(
        c.t("conv_w"),
        bias.then(|| c.t("conv_b")),
        c.t("bn_rm"),
        c.t("bn_rv"),
        EPS,
        Some(c.t("bn_w")),
        Some(c.t("bn_b")),
        transpose,
    )
}

fn fuse_linear(c: &Inputs, bias: bool) -> Result<(Tensor, Tensor)> {
    utils::fuse_linear_bn_weights(
        c.t("linear_w"),
        bias.then(|| c.t("linear_b")),
        c.t("bn_rm"),
        c.t("bn_rv"),
        EPS,
        Some(c.t("bn_w")),
        Some(c.t("bn_b")),
    )
}

/// A float64 `BatchNorm2d(4, eps=1e-3)` in evaluation mode with the case's statistics and affine
/// parameters.
fn bn_of(c: &Inputs) -> Result<BatchNorm> {
    let mut bn = BatchNorm::new_2d(4)?;
    bn.weight = Some(c.t("bn_w").detach().requires_grad_(true)?);
    bn.bias = Some(c.t("bn_b").detach().requires_grad_(true)?);
    bn.running_mean = Some(Buffer(c.t("bn_rm").detach()));
    bn.running_var = Some(Buffer(c.t("bn_rv").detach()));
    bn.eps = EPS;
    bn.training = false;
    Ok(bn)
}

/// `Conv2d(3, 4, 3, padding=1)` in float64 with the case's weight and bias.
fn conv_of(c: &Inputs) -> ConvNd<2> {
    let options =
        ConvOptions { padding: Padding::Explicit(vec![1]), dtype: DType::F64, ..Default::default() };
    ConvNd {
        weight: c.t("conv_w").detach().requires_grad_(true).unwrap(),
        bias: Some(c.t("conv_b").detach().requires_grad_(true).unwrap()),
        options,
    }
}

/// The call each case makes (the same arguments as the script's).
fn call(name: &str, c: &Inputs) -> Result<Tensor> {
    let x = || c.t("input");
    let inf = f64::INFINITY;
    match name {
        "lp1_p2_k3_s2" => F::lp_pool1d(x(), 2.0, &[3], Some(&[2]), false),
        "lp1_p1p5_k2" => F::lp_pool1d(x(), 1.5, &[2], None, false),
        "lp1_p2_k3_ceil" => F::lp_pool1d(x(), 2.0, &[3], Some(&[2]), true),
        "lp1_inf_k3" => LPPool1d::new(inf, &[3]).forward(x()),
        "lp2_p2_k23_s12" => F::lp_pool2d(x(), 2.0, &[2, 3], Some(&[1, 2]), false),
        "lp2_p3_k2_pos" => F::lp_pool2d(x(), 3.0, &[2], None, false),
        "lp2_p2_k3_unbatched_ceil" => F::lp_pool2d(x(), 2.0, &[3], Some(&[2]), true),
        "lp2_neginf_k2" => F::lp_pool2d(x(), -inf, &[2], None, false),
        "lp3_p2_k2" => LPPool3d::new(2.0, &[2]).forward(x()),
        "lp3_p1p5_k232_s1" => F::lp_pool3d(x(), 1.5, &[2, 3, 2], Some(&[1]), false),
        "lppool2d_module" => LPPool2d::with_options(2.0, &[3, 2], Some(&[2]), false).forward(x()),
        "softmax2d_4d" | "softmax2d_3d" => Softmax2d.forward(x()),
        "up_nearest_scale2" => UpsamplingNearest2d::with_scale_factor(&[2.0]).forward(x()),
        "up_nearest_size57" => UpsamplingNearest2d::with_size(&[5, 7]).forward(x()),
        "up_bilinear_scale2" => UpsamplingBilinear2d::with_scale_factor(&[2.0]).forward(x()),
        "up_bilinear_size53" => UpsamplingBilinear2d::with_size(&[5, 3]).forward(x()),
        "relu_" => inplace(c, F::relu_),
        "elu_" => inplace(c, |y| F::elu_(y, 0.7)),
        "leaky_relu_" => inplace(c, |y| F::leaky_relu_(y, 0.2)),
        "hardtanh_" => inplace(c, |y| F::hardtanh_(y, -0.5, 0.8)),
        "selu_" => inplace(c, F::selu_),
        "celu_" => inplace(c, |y| F::celu_(y, 1.3)),
        "threshold_" => inplace(c, |y| F::threshold_(y, 0.1, -2.0)),
        "rrelu_eval" => inplace(c, |y| F::rrelu_(y, 0.1, 0.3, false)),
        "total_norm_p2" | "total_norm_p1" | "total_norm_p3" | "total_norm_inf" => {
            let p = match name {
                "total_norm_p2" => 2.0,
                "total_norm_p1" => 1.0,
                "total_norm_p3" => 3.0,
                _ => inf,
            };
            utils::get_total_norm(&[c.t("a").clone(), c.t("b").clone()], p, false, None)
        }
        "clip_with_norm_1" => clip(c, 1.0, 2.0),
        "clip_with_norm_p1_2" => clip(c, 2.0, 1.0),
        "clip_with_norm_large" => clip(c, 100.0, 2.0),
        "fuse_conv_w" => Ok(fuse_conv(c, true, false)?.0),
        "fuse_conv_b" => Ok(fuse_conv(c, true, false)?.1),
        "fuse_conv_nobias_b" => Ok(fuse_conv(c, false, false)?.1),
        "fuse_convt_w" => Ok(fuse_conv(c, true, true)?.0),
        "fuse_linear_w" => Ok(fuse_linear(c, true)?.0),
        "fuse_linear_b" => Ok(fuse_linear(c, true)?.1),
        "fuse_linear_nobias_b" => Ok(fuse_linear(c, false)?.1),
        "fuse_conv_eval_forward" => {
            let fused = utils::fuse_conv_bn_eval(&conv_of(c), &bn_of(c)?, false)?;
            Ok(fused.forward(c.t("x"))?.detach())
        }
        other => panic!("no call for golden case {other}"),
    }
}

#[test]
fn tier3_ops_match_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 40, "every case of the golden file");
    for g in GOLDEN {
        let c = g.input_tensors(&[]);
        let out = call(g.name, &c).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_close(&format!("{} out", g.name), &out, &g.out, 1e-10);
        if g.grads.is_empty() {
            continue;
        }
        out.mul(ramp(&out))?.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = c.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            // torch's in-place celu_ differentiates through elu_ with its input scale 1/alpha
            // rounded to float32 (its out-of-place celu does not); ours is the out-of-place one.
            let tol = if g.name == "celu_" { 1e-7 } else { 1e-10 };
            assert_close(&format!("{} grad {k}", g.name), &got, want, tol);
        }
    }
    Ok(())
}

fn golden(name: &str) -> Inputs {
    GOLDEN.iter().find(|g| g.name == name).unwrap().input_tensors(&[])
}

#[test]
fn tier3_modules_are_stateless_with_torch_names() {
    let names: Vec<&str> = vec![
        LPPool1d::new(2.0, &[2]).type_name(),
        LPPool2d::new(2.0, &[2]).type_name(),
        LPPool3d::new(2.0, &[2]).type_name(),
        Softmax2d.type_name(),
        UpsamplingNearest2d::with_size(&[2]).type_name(),
        UpsamplingBilinear2d::with_size(&[2]).type_name(),
    ];
    assert_eq!(
        names,
        ["LPPool1d", "LPPool2d", "LPPool3d", "Softmax2d", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
    );
    assert!(oxtorch_nn::ModuleExt::named_parameters(&LPPool2d::new(2.0, &[2])).is_empty());
}

#[test]
fn tier3_errors_in_torch_words() -> Result<()> {
    let x2 = Tensor::zeros([2, 3], DType::F64)?;
    let e = Softmax2d.forward(&x2).err().unwrap().to_string();
    assert!(e.contains("Softmax2d: expected input to be 3D or 4D, got 2D instead"), "{e}");
    let x3 = Tensor::ones([1, 2, 4], DType::F64)?;
    let e = F::lp_pool1d(&x3, 0.0, &[2], None, false).err().unwrap().to_string();
    assert!(e.contains("norm_type must be a non-zero value, but got 0"), "{e}");

    let nan = Tensor::from_vec(vec![1.0, f64::NAN], [2])?;
    let e = utils::get_total_norm(&[nan], 2.0, true, None).err().unwrap().to_string();
    assert!(e.contains("The total norm of order 2.0 for gradients from `parameters` is non-finite"), "{e}");
    let empty = utils::get_total_norm(&[], 2.0, false, None)?;
    assert_eq!((empty.dtype(), empty.item::<f64>()?), (DType::F32, 0.0));

    // A leaf that requires grad refuses an in-place op (torch's rule, through apply_).
    let leaf = Tensor::ones([3], DType::F64)?.requires_grad_(true)?;
    assert!(F::relu_(&leaf).is_err());

    let c = golden("fuse_conv_eval_forward");
    let mut bn = bn_of(&c)?;
    bn.training = true;
    let e = utils::fuse_conv_bn_eval(&conv_of(&c), &bn, false).err().unwrap().to_string();
    assert!(e.contains("Fusion only for eval!"), "{e}");
    let mut bn = bn_of(&c)?;
    bn.running_var = None;
    let e = utils::fuse_conv_bn_eval(&conv_of(&c), &bn, false).err().unwrap().to_string();
    assert!(e.contains("bn.running_mean and bn.running_var must not be None"), "{e}");
    let linear = Linear { weight: Tensor::ones([3, 2], DType::F64)?, bias: None };
    let e = utils::fuse_linear_bn_eval(&linear, &bn_of(&c)?).err().unwrap().to_string();
    assert!(
        e.contains("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got linear.out_features=3 and bn.num_features=4"),
        "{e}"
    );
    Ok(())
}

#[test]
fn fused_parameters_are_new_leaves_as_torch_makes_them() -> Result<()> {
    let c = golden("fuse_conv_eval_forward");
    let fused = utils::fuse_conv_bn_eval(&conv_of(&c), &bn_of(&c)?, false)?;
    assert!(fused.weight.is_leaf() && fused.weight.requires_grad());
    let bias = fused.bias.as_ref().unwrap();
    assert!(bias.is_leaf() && bias.requires_grad());
    let sd = oxtorch_nn::ModuleExt::state_dict(&fused);
    assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
    // Without a conv bias torch's fused bias is a parameter that does not require grad.
    let (_, b) = fuse_conv(&c, false, false)?;
    assert!(!b.requires_grad());
    Ok(())
}
