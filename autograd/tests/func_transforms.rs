//! torch.func's closure transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
//! hessian, and their compositions with each other, with vmap and with ordinary autograd) against
//! torch's float64 values and error texts (func_transforms/golden.rs, from make_func_transforms_golden.py).

#[path = "func_transforms/golden.rs"]
mod golden;

use golden::*;
use oxtorch_autograd::func::{
    grad, grad1, grad_and_value, hessian, hessian1, jacfwd, jacrev, jacrev1, jvp, linearize, vjp,
};
use oxtorch_tensor::{vmap, Result, Tensor};

type Golden = (&'static [usize], &'static [f64]);

fn t(g: Golden) -> Tensor {
    Tensor::from_slice(g.1, g.0.to_vec()).unwrap()
}

fn close(a: &Tensor, want: Golden) {
    assert_eq!(a.dims(), want.0, "shape");
    let got = a.to_f64_vec().unwrap();
    for (x, y) in got.iter().zip(want.1) {
        assert!((x - y).abs() <= 1e-10 * (1.0 + y.abs()), "{got:?} vs {:?}", want.1);
    }
}

fn err_text<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// sin(x).sum() * y.
fn f_sin(xs: &[Tensor]) -> Result<Vec<Tensor>> {
    Ok(vec![xs[0].sin()?.sum_all()?.mul(&xs[1])?])
}

/// (x * y.sum(), exp(x[:2] * y)).
fn fv(xs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (x, y) = (&xs[0], &xs[1]);
    Ok(vec![x.mul(&y.sum_all()?)?, x.narrow(0, 0, 2)?.mul(y)?.exp()?])
}

/// (x² · y.sum()).sum() + sin(x).prod() · y[0]³.
fn h(xs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (x, y) = (&xs[0], &xs[1]);
    let a = x.square()?.mul(&y.sum_all()?)?.sum_all()?;
    let b = x.sin()?.prod_all()?.mul(&y.select(0, 0)?.pow(3.0)?)?;
    Ok(vec![a.add(&b)?])
}

#[test]
fn grad_with_argnums_and_value() -> Result<()> {
    let (x, y) = (t(X), t(Y));
    let g = grad(f_sin, &[0, 1], false)(&[x.clone(), y.clone()])?;
    assert_eq!(g.len(), 2);
    close(&g[0], GRAD_SIN_X);
    close(&g[1], GRAD_SIN_Y);
    assert!(!g[0].requires_grad() && !g[1].requires_grad());
    // Inputs are untouched plain tensors.
    assert!(!x.requires_grad() && x.grad().is_none());
    close(&x, X);
    // Negative argnums count from the end.
    let g = grad(f_sin, &[-1], false)(&[x.clone(), y.clone()])?;
    close(&g[0], GRAD_SIN_Y);
    let gv = grad_and_value(f_sin, &[0], false)(&[x, y])?;
    assert_eq!(gv.len(), 2);
    close(&gv[0], GRAD_AND_VALUE_X);
    close(&gv[1], GRAD_AND_VALUE_V);
    assert!(!gv[1].requires_grad());
    Ok(())
}

#[test]
fn grad_has_aux() -> Result<()> {
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].square()?.sum_all()?, xs[0].cos()?]) };
    let r = grad(f, &[0], true)(&[t(X)])?;
    assert_eq!(r.len(), 2);
    close(&r[0], AUX_GRAD);
    close(&r[1], AUX_AUX);
    let r = grad_and_value(f, &[0], true)(&[t(X)])?;
    assert_eq!(r.len(), 3);
    close(&r[0], AUX_GRAD);
    close(&r[2], AUX_AUX);
    Ok(())
}

#[test]
fn grad_of_grad() -> Result<()> {
    let g3 = |x: &Tensor| -> Result<Tensor> { x.pow(3.0)?.mul(&x.sin()?) };
    let s = Tensor::from_slice(&[0.7f64], Vec::<usize>::new())?;
    close(&grad1(grad1(g3))(&s)?, GRADGRAD);
    close(&grad1(grad1(grad1(g3)))(&s)?, GRADGRADGRAD);
    let gg = grad1(grad1(g3))(&s)?;
    assert!(!gg.requires_grad());
    // A nested function capturing the outer input: d/dx [d/dy (x y²)]_{y=x} = d/dx 2x² = 4x.
    let outer = grad1(|x: &Tensor| -> Result<Tensor> {
        let xc = x.clone();
        grad1(move |y: &Tensor| -> Result<Tensor> { xc.mul(y)?.mul(y) })(x)
    });
    let v = outer(&s)?.to_f64_vec()?;
    assert!((v[0] - 2.8).abs() < 1e-12, "{v:?}");
    // An output independent of the input: zeros.
    let z = grad1(|_x: &Tensor| Tensor::from_slice(&[2.0f64], Vec::<usize>::new()))(&s)?;
    assert_eq!(z.to_f64_vec()?, vec![0.0]);
    Ok(())
}

#[test]
fn jacrev_jacfwd_of_two_outputs() -> Result<()> {
    let inputs = [t(X), t(Y2)];
    let want = [JAC_00, JAC_01, JAC_10, JAC_11];
    for j in [jacrev(fv, &[0, 1])(&inputs)?, jacfwd(fv, &[0, 1])(&inputs)?] {
        assert_eq!(j.len(), 4);
        for (got, want) in j.iter().zip(want) {
            close(got, want);
            assert!(!got.requires_grad());
        }
    }
    let j = jacrev(fv, &[1])(&inputs)?;
    assert_eq!(j.len(), 2);
    close(&j[0], JAC_01);
    close(&j[1], JAC_11);
    let f1 = |x: &Tensor| -> Result<Tensor> { x.sin()?.mul(&x.sum_all()?) };
    close(&jacrev1(jacrev1(f1))(&t(X))?, JACJAC);
    let f1s = move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![f1(&xs[0])?]) };
    close(&jacfwd(f1s, &[0])(&[t(X)])?[0], JACFWD1);
    Ok(())
}

#[test]
fn hessians() -> Result<()> {
    let inputs = [t(X), t(Y2)];
    let hs = hessian(h, &[0, 1])(&inputs)?;
    assert_eq!(hs.len(), 4);
    for (got, want) in hs.iter().zip([HESS_00, HESS_01, HESS_10, HESS_11]) {
        close(got, want);
    }
    close(&hessian(h, &[0])(&inputs)?[0], HESS_X);
    let y2 = t(Y2);
    let hx =
        hessian1(move |x: &Tensor| -> Result<Tensor> { Ok(h(&[x.clone(), y2.clone()])?.remove(0)) })(&t(X))?;
    close(&hx, HESS_X);
    Ok(())
}

#[test]
fn vjp_jvp_linearize() -> Result<()> {
    let inputs = [t(X), t(Y2)];
    let (outs, vjp_fn) = vjp(fv, &inputs)?;
    close(&outs[0], OUT0);
    close(&outs[1], OUT1);
    assert!(!outs[0].requires_grad());
    // The pullback can be called more than once.
    for _ in 0..2 {
        let g = vjp_fn(&[t(CT0), t(CT1)])?;
        close(&g[0], VJP_X);
        close(&g[1], VJP_Y);
    }
    assert_eq!(err_text(vjp_fn(&[t(CT0)])), ERR_VJP_STRUCT);
    assert!(err_text(vjp_fn(&[t(CT0), t(CT0)])).starts_with("Mismatch in shape: grad_output[1]"));

    let (outs, tans) = jvp(fv, &inputs, &[t(TX), t(TY)])?;
    close(&outs[0], OUT0);
    close(&outs[1], OUT1);
    close(&tans[0], JVP0);
    close(&tans[1], JVP1);
    assert_eq!(err_text(jvp(fv, &inputs, &[t(TX)])), ERR_JVP_STRUCT);
    assert_eq!(err_text(jvp(fv, &inputs, &[t(TX), t(TX)])), ERR_JVP_SHAPE);

    let (outs, jvp_fn) = linearize(fv, &inputs)?;
    close(&outs[1], OUT1);
    let tans = jvp_fn(&[t(TX), t(TY)])?;
    close(&tans[0], JVP0);
    close(&tans[1], JVP1);
    Ok(())
}

#[test]
fn vmap_of_grad_per_sample_gradients() -> Result<()> {
    let loss = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let (w, b, xi, yi) = (&xs[0], &xs[1], &xs[2], &xs[3]);
        Ok(vec![xi.mul(w)?.sum_all()?.add(b)?.sub(yi)?.square()?])
    };
    let per_sample = vmap(grad(loss, &[0, 1], false), &[None, None, Some(0), Some(0)], &[0]);
    let r = per_sample(&[t(W), t(B), t(XS), t(YS)])?;
    assert_eq!(r.len(), 2);
    close(&r[0], PER_SAMPLE_W);
    close(&r[1], PER_SAMPLE_B);
    Ok(())
}

#[test]
fn composes_with_outer_autograd() -> Result<()> {
    let x = t(X).requires_grad_(true)?;
    let g = grad1(|x: &Tensor| -> Result<Tensor> { x.sin()?.mul(x)?.sum_all() })(&x)?;
    assert!(g.requires_grad());
    let w = Tensor::from_slice(&[1.0f64, 2.0, 3.0], vec![3])?;
    g.mul(&w)?.sum_all()?.backward()?;
    close(&x.grad().expect("x.grad"), OUTER_GRAD);
    Ok(())
}

#[test]
fn error_texts() {
    let x = t(X);
    let outer = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].outer(&xs[0])?]) };
    assert_eq!(err_text(grad(outer, &[0], false)(std::slice::from_ref(&x))), ERR_NOT_SCALAR);
    let keep = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].sum(0, true)?]) };
    assert_eq!(err_text(grad(keep, &[0], false)(std::slice::from_ref(&x))), ERR_NOT_SCALAR_1D);
    let xy = [t(X), t(Y)];
    assert_eq!(err_text(grad(f_sin, &[2], false)(&xy)), ERR_ARGNUM);
    assert_eq!(err_text(grad(f_sin, &[], false)(&xy)), ERR_ARGNUMS_EMPTY);
    assert_eq!(err_text(grad(f_sin, &[0, 0], false)(&xy)), ERR_ARGNUMS_DUP);
    let lone = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].sum_all()?]) };
    assert_eq!(err_text(grad(lone, &[0], true)(std::slice::from_ref(&x))), ERR_AUX);
    assert_eq!(err_text(jacrev(fv, &[5])(&[t(X), t(Y2)])), "Got argnum=5, but only 2 positional inputs");
}

#[test]
fn integer_inputs_and_outputs_as_torch_func() -> Result<()> {
    use oxtorch_autograd::func::{grad, jacrev, jvp};
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0], [3])?;
    let ints = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0].gt(0.0)?.to_dtype(oxtorch_tensor::DType::I64)?])
    };
    // torch: jvp of an integer output gives zero (integer) tangents.
    let (out, tan) = jvp(ints, std::slice::from_ref(&x), std::slice::from_ref(&x))?;
    assert_eq!(out[0].to_vec::<i64>()?, vec![1, 1, 1]);
    assert_eq!(tan[0].to_vec::<i64>()?, vec![0, 0, 0]);
    let e = jacrev(ints, &[0])(std::slice::from_ref(&x)).err().unwrap().to_string();
    assert_eq!(
        e,
        "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype torch.int64"
    );
    let i = Tensor::from_slice(&[1i64, 2], [2])?;
    let sin = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].sin()?]) };
    let e = jvp(sin, std::slice::from_ref(&i), std::slice::from_ref(&i)).err().unwrap().to_string();
    assert_eq!(e, "Expected primal to be floating point or complex, but got: torch.int64");
    let e = jvp(sin, std::slice::from_ref(&x), &[Tensor::from_slice(&[1i64, 2, 3], [3])?])
        .err()
        .unwrap()
        .to_string();
    assert_eq!(e, "Expected tangent to be floating point or complex, but got: torch.int64");
    let sum = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].sum_all()?]) };
    let e = grad(sum, &[0], false)(std::slice::from_ref(&i)).err().unwrap().to_string();
    assert_eq!(e, "only Tensors of floating point dtype can require gradients");
    Ok(())
}
