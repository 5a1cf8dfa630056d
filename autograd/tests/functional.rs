//! Functional transforms, checkpointing, anomaly mode and custom functions.

use oxtorch_autograd::functional::{hessian, jacobian, jvp, vjp};
use oxtorch_autograd::{checkpoint, gradcheck, gradgradcheck, GradcheckOptions};
use oxtorch_tensor::{DType, Result, Tensor};

fn t(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape.to_vec()).unwrap()
}

fn close(a: &Tensor, b: &[f64]) {
    let a = a.to_f64_vec().unwrap();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-9, "{a:?} vs {b:?}");
    }
}

#[test]
fn vjp_jvp_jacobian_hessian() -> Result<()> {
    // f(x) = [x0 * x1, x1^2]
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let x = &xs[0];
        let (a, b) = (x.select(0, 0)?, x.select(0, 1)?);
        Ok(vec![Tensor::stack(&[&a.mul(&b)?, &b.square()?], 0)?])
    };
    let x = t(&[2.0, 3.0], &[2]);
    let (_, g) = vjp(&f, std::slice::from_ref(&x), &[t(&[1.0, 1.0], &[2])])?;
    close(&g[0], &[3.0, 2.0 + 6.0]);
    let (_, jv) = jvp(&f, std::slice::from_ref(&x), &[t(&[1.0, 0.0], &[2])])?;
    close(&jv[0], &[3.0, 0.0]);
    let j = jacobian(&f, std::slice::from_ref(&x))?;
    assert_eq!(j[0][0].dims(), &[2, 2]);
    close(&j[0][0], &[3.0, 2.0, 0.0, 6.0]);
    // h(x) = x0^2 x1 + x1^3 : H = [[2 x1, 2 x0], [2 x0, 6 x1]]
    let h = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let x = &xs[0];
        let (a, b) = (x.select(0, 0)?, x.select(0, 1)?);
        Ok(vec![a.square()?.mul(&b)?.add(b.pow(3.0)?)?])
    };
    let hs = hessian(&h, &[x])?;
    close(&hs[0][0], &[6.0, 4.0, 4.0, 18.0]);
    Ok(())
}

#[test]
fn checkpoint_matches_direct() -> Result<()> {
    let w = Tensor::randn([4, 4], DType::F64)?.requires_grad_(true)?;
    let x = Tensor::randn([3, 4], DType::F64)?.requires_grad_(true)?;
    let block = {
        let w = w.clone();
        move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].matmul(&w)?.tanh()?.matmul(&w)?]) }
    };
    let direct = block(std::slice::from_ref(&x))?[0].sum_all()?;
    direct.backward()?;
    let (gx, gw) = (x.grad().unwrap(), w.grad().unwrap());
    x.set_grad(None)?;
    w.set_grad(None)?;
    let out = checkpoint(block, std::slice::from_ref(&x))?;
    assert_eq!(out[0].grad_fn().unwrap().name(), "CheckpointFunctionBackward");
    out[0].sum_all()?.backward()?;
    close(&x.grad().unwrap(), &gx.to_f64_vec()?);
    close(&w.grad().unwrap(), &gw.to_f64_vec()?);
    Ok(())
}

#[test]
fn anomaly_mode_names_the_op() -> Result<()> {
    let x = Tensor::from_slice(&[0.0f64, 1.0], [2])?.requires_grad_(true)?;
    oxtorch_autograd::set_detect_anomaly(true);
    let r = x.sqrt()?.mul(0.0)?.sum_all()?.backward();
    oxtorch_autograd::set_detect_anomaly(false);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("SqrtBackward0") && e.contains("nan"), "{e}");
    Ok(())
}

#[test]
fn gradcheck_catches_a_wrong_formula() -> Result<()> {
    use oxtorch_autograd::{Function, FunctionCtx};
    struct WrongSquare;
    impl Function for WrongSquare {
        fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
            ctx.save_for_backward(&[&inputs[0]]);
            Ok(vec![inputs[0].square()?])
        }
        fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
            Ok(vec![Some(grads[0].mul(&ctx.saved_tensors()?[0])?)]) // missing the factor 2
        }
    }
    let x = Tensor::randn([3], DType::F64)?.requires_grad_(true)?;
    let wrong = |xs: &[Tensor]| WrongSquare.apply(xs);
    assert!(gradcheck(&wrong, std::slice::from_ref(&x), GradcheckOptions::default()).is_err());
    let right = |xs: &[Tensor]| Ok(vec![xs[0].square()?]);
    gradcheck(&right, std::slice::from_ref(&x), GradcheckOptions::default())?;
    gradgradcheck(&right, &[x], GradcheckOptions::default())
}

/// As torch's engine: a custom function's gradient that broadcasts to its input is summed down to
/// the input's shape, another shape is an error naming the function, and a function that saved
/// nothing can be differentiated twice without `retain_graph`.
#[test]
fn custom_function_gradients_are_fitted_to_their_inputs() -> Result<()> {
    use oxtorch_autograd::{Function, FunctionCtx};
    /// `y = x`, whose backward returns ones of the given shape.
    struct Expanding(Vec<usize>);
    impl Function for Expanding {
        fn forward(&self, _: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
            Ok(vec![inputs[0].copy()?])
        }
        fn backward(&self, _: &FunctionCtx, _: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
            Ok(vec![Some(Tensor::ones(self.0.clone(), DType::F64)?)])
        }
        fn name(&self) -> &'static str {
            "ExpandingBackward"
        }
    }
    let x = Tensor::ones([3], DType::F64)?.requires_grad_(true)?;
    let y = Expanding(vec![2, 3]).apply(std::slice::from_ref(&x))?.remove(0);
    let s = y.sum_all()?;
    s.backward()?;
    close(&x.grad().unwrap(), &[2.0, 2.0, 2.0]);
    // Nothing saved: a second backward through the same graph works.
    s.backward()?;
    close(&x.grad().unwrap(), &[4.0, 4.0, 4.0]);
    let y = Expanding(vec![5]).apply(std::slice::from_ref(&x))?.remove(0);
    let err = y.sum_all()?.backward().unwrap_err().to_string();
    assert!(err.contains("Function ExpandingBackward returned an invalid gradient at index 0"), "{err}");
    Ok(())
}
