//! torch's conventions for what is not differentiable (the expected values were read off torch
//! 2.15): piecewise-constant ops give zero gradients, comparisons, arg-reductions and every
//! integer output never require grad, and the ops torch refuses to differentiate are refused.

use oxtorch_tensor::{DType, Tensor};

/// An op under test.
type UnaryFn = fn(&Tensor) -> oxtorch_tensor::Result<Tensor>;

use crate::common::*;

#[test]
fn piecewise_constant_ops_give_zero_gradients() {
    let x = leaf(t(&[-1.5, -0.2, 0.0, 0.4, 2.5, 3.7], &[6]));
    let ops: Vec<(&str, UnaryFn)> = vec![
        ("round", Tensor::round),
        ("floor", Tensor::floor),
        ("ceil", Tensor::ceil),
        ("trunc", Tensor::trunc),
        ("sign", Tensor::sign),
    ];
    for (name, f) in &ops {
        let y = f(&x).unwrap();
        assert!(y.requires_grad(), "{name} output requires grad in torch");
        assert_close(&grad_of(&x, &y), &[0.0; 6], name);
    }
    assert_close(&grad_of(&x, &x.round_decimals(1).unwrap()), &[0.0; 6], "round_decimals");
    assert_eq!(ops.len(), 5);
}

#[test]
fn subgradients_at_kinks_match_torch() {
    // torch: relu'(0) = 0, abs'(0) = 0, clamp passes the gradient at the bounds, hardtanh does not,
    // maximum/minimum split ties evenly.
    let x = leaf(t(&[-1.0, 0.0, 1.0], &[3]));
    assert_close(&grad_of(&x, &x.relu().unwrap()), &[0.0, 0.0, 1.0], "relu");
    assert_close(&grad_of(&x, &x.abs().unwrap()), &[-1.0, 0.0, 1.0], "abs");
    // clamp: no gradient at a number bound; tensor bounds share ties as maximum/minimum
    let c = x.clamp(Some((-1.0).into()), Some(1.0.into())).unwrap();
    assert_close(&grad_of(&x, &c), &[0.0, 1.0, 0.0], "clamp at number bounds");
    assert_close(&grad_of(&x, &x.clamp_min(0.0).unwrap()), &[0.0, 0.0, 1.0], "clamp_min at its bound");
    let (lo, hi) = (leaf(t(&[-1.0; 3], &[3])), leaf(t(&[1.0; 3], &[3])));
    let c = x.clamp(Some((&lo).into()), Some((&hi).into())).unwrap();
    let g = oxtorch_autograd::grad(
        &[c.sum_all().unwrap()],
        &[x.clone(), lo.clone(), hi.clone()],
        None,
        false,
        false,
        false,
    )
    .unwrap();
    let g: Vec<Vec<f64>> = g.iter().map(|g| g.as_ref().unwrap().to_f64_vec().unwrap()).collect();
    assert_close(&g[0], &[0.5, 1.0, 0.5], "clamp tensor bounds: input");
    assert_close(&g[1], &[0.5, 0.0, 0.0], "clamp tensor bounds: min");
    assert_close(&g[2], &[0.0, 0.0, 0.5], "clamp tensor bounds: max");
    assert_close(&grad_of(&x, &x.hardtanh(-1.0, 1.0).unwrap()), &[0.0, 1.0, 0.0], "hardtanh at bounds");
    let y = leaf(t(&[0.0, 0.0, 0.0], &[3]));
    let m = x.maximum(&y).unwrap();
    let g =
        oxtorch_autograd::grad(&[m.sum_all().unwrap()], &[x.clone(), y.clone()], None, false, false, false)
            .unwrap();
    assert_close(&g[0].as_ref().unwrap().to_f64_vec().unwrap(), &[0.0, 0.5, 1.0], "maximum x");
    assert_close(&g[1].as_ref().unwrap().to_f64_vec().unwrap(), &[1.0, 0.5, 0.0], "maximum y");
    // torch's choices at the kinks of the activations
    let k = leaf(t(&[-3.0, 0.0, 3.0, 6.0], &[4]));
    assert_close(&grad_of(&k, &k.leaky_relu(0.1).unwrap()), &[0.1, 0.1, 1.0, 1.0], "leaky_relu");
    assert_close(&grad_of(&k, &k.relu6().unwrap()), &[0.0, 0.0, 1.0, 0.0], "relu6");
    assert_close(&grad_of(&k, &k.hardsigmoid().unwrap()), &[0.0, 1.0 / 6.0, 0.0, 0.0], "hardsigmoid");
    assert_close(&grad_of(&k, &k.hardswish().unwrap()), &[0.0, 0.5, 1.0, 1.0], "hardswish");
    assert_close(&grad_of(&k, &k.elu(0.5).unwrap())[1..2], &[0.5], "elu at 0");
    // sqrt at 0 gives inf, as torch
    let z = leaf(t(&[0.0], &[1]));
    assert!(grad_of(&z, &z.sqrt().unwrap())[0].is_infinite(), "sqrt'(0)");
}

#[test]
fn integer_and_bool_outputs_never_require_grad() {
    let x = distinct(&[3, 4], 1);
    let outs: Vec<(&str, Tensor)> = vec![
        ("argmax", x.argmax(Some(1), false).unwrap()),
        ("argmin", x.argmin(None, false).unwrap()),
        ("argsort", x.argsort(1, false).unwrap()),
        ("max_dim.indices", x.max_dim(0, false).unwrap().1),
        ("sort.indices", x.sort(1, true).unwrap().1),
        ("topk.indices", x.topk(2, 1, true, true).unwrap().1),
        ("kthvalue.indices", x.kthvalue(1, 1, false).unwrap().1),
        ("cummax.indices", x.cummax(1).unwrap().1),
        ("median.indices", x.median(1, false).unwrap().1),
        ("eq", x.eq(0.5).unwrap()),
        ("gt", x.gt(x.t().unwrap().t().unwrap()).unwrap()),
        ("isnan", x.isnan().unwrap()),
        ("isfinite", x.isfinite().unwrap()),
        ("logical_not", x.logical_not().unwrap()),
        ("nonzero", x.nonzero().unwrap()),
        ("count_nonzero", x.count_nonzero([1]).unwrap()),
        ("to_i64", x.to_dtype(DType::I64).unwrap()),
        ("to_bool", x.to_dtype(DType::Bool).unwrap()),
        ("bucketize", x.bucketize(&t(&[-0.5, 0.5], &[2]), false, false).unwrap()),
        (
            "searchsorted",
            t(&[-1.0, 0.0, 1.0], &[3]).searchsorted(x.reshape([-1]).unwrap(), false, None, false).unwrap(),
        ),
        ("all", x.gt(0.0).unwrap().all().unwrap()),
        ("one_hot", ix(&[1, 0], &[2]).one_hot(3).unwrap()),
    ];
    for (name, o) in &outs {
        assert!(!o.requires_grad(), "{name} must not require grad");
        assert!(o.grad_fn().is_none(), "{name} must have no grad_fn");
    }
    assert_eq!(outs.len(), 22);
    // A float value computed from integer indices still gets a gradient w.r.t. the float input.
    let (v, i) = x.max_dim(1, false).unwrap();
    assert!(v.requires_grad() && !i.requires_grad());
}

#[test]
fn refused_derivatives() {
    // torch raises "the derivative for 'X' is not implemented" for these.
    let x = distinct(&[6], 1);
    let err = |r: oxtorch_tensor::Result<Tensor>| -> String {
        match r.and_then(|y| y.sum_all()).and_then(|y| y.backward()) {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    let msg = err(x.histc(3, -1.0, 1.0));
    assert!(msg.contains("not implemented") || msg.contains("does not require grad"), "histc: {msg}");
    let msg = err(x.unique(true, false, false).map(|u| u.0));
    assert!(msg.contains("the derivative for 'unique' is not implemented"), "unique: {msg}");
    let msg = err(ix(&[0, 2, 2], &[3]).bincount(Some(&x.narrow(0, 0, 3).unwrap()), 0));
    assert!(msg.contains("not implemented"), "bincount: {msg}");
    let msg = err(x.floor_divide(0.7));
    assert!(msg.contains("the derivative for 'floor_divide' is not implemented"), "floor_divide: {msg}");
}

#[test]
fn zero_dim_and_empty_inputs() {
    // 0-d inputs through broadcasting ops
    let cases = vec![
        case("exp_0d", vec![leaf(t(&[0.3], &[]))], |x| x[0].exp()),
        case("mul_0d_by_vector", vec![leaf(t(&[0.3], &[])), smooth(&[3], 1)], |x| x[0].mul(&x[1])),
        case("sum_0d", vec![leaf(t(&[0.3], &[]))], |x| x[0].sum_all()),
        case("softmax_0d", vec![leaf(t(&[0.3], &[]))], |x| x[0].log_softmax(0, None)),
        case("unsqueeze_0d", vec![leaf(t(&[0.3], &[]))], |x| x[0].unsqueeze(0)?.expand([3])?.sin()),
    ];
    run("zero_dim", cases, 5, Check::Grad);
    // Empty inputs: gradients of the input's (empty) shape, no error.
    let e = leaf(Tensor::zeros([0, 3], DType::F64).unwrap());
    let w = smooth(&[3, 2], 2);
    let outs: Vec<(&str, Tensor)> = vec![
        ("sum", e.sum_all().unwrap()),
        ("matmul", e.matmul(&w).unwrap().sum_all().unwrap()),
        ("exp", e.exp().unwrap().sum_all().unwrap()),
        ("cat", Tensor::cat(&[&e, &smooth(&[1, 3], 3)], 0).unwrap().sum_all().unwrap()),
        ("softmax", e.softmax(1, None).unwrap().sum_all().unwrap()),
    ];
    for (name, y) in &outs {
        let g = oxtorch_autograd::grad(
            std::slice::from_ref(y),
            std::slice::from_ref(&e),
            None,
            true,
            false,
            true,
        )
        .unwrap();
        let g = g[0].as_ref().map(|g| g.dims().to_vec());
        assert!(g.is_none() || g.as_deref() == Some(&[0, 3][..]), "{name}: gradient shape {g:?}");
    }
    assert_eq!(outs.len(), 5);
    // the weight of an empty matmul gets a zero gradient
    let g = oxtorch_autograd::grad(
        &[e.matmul(&w).unwrap().sum_all().unwrap()],
        std::slice::from_ref(&w),
        None,
        false,
        false,
        false,
    )
    .unwrap();
    assert_close(&g[0].as_ref().unwrap().to_f64_vec().unwrap(), &[0.0; 6], "empty matmul weight");
}
