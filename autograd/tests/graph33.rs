//! torch.autograd.graph's saved-tensors hooks (`saved_tensors_hooks`, `save_on_cpu`,
//! `disable_saved_tensors_hooks`), `register_multi_grad_hook`, `increment_version`,
//! `detect_anomaly`, `functional.hvp` / `vhp` and `forward_ad`, against torch's float64 values and
//! error texts (graph33/golden.rs, from make_graph33_golden.py).

#[path = "graph33/golden.rs"]
mod golden;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use golden::*;
use oxtorch_autograd::forward_ad::{dual_level, make_dual, unpack_dual};
use oxtorch_autograd::functional::{hvp, vhp};
use oxtorch_autograd::graph::{
    disable_saved_tensors_hooks, increment_version, register_multi_grad_hook, save_on_cpu,
    saved_tensors_hooks, MultiGradMode,
};
use oxtorch_autograd::{detect_anomaly, grad, is_anomaly_enabled, set_detect_anomaly, Function, FunctionCtx};
use oxtorch_tensor::{Error, Result, Tensor};

type Golden = (&'static [usize], &'static [f64]);

fn t(g: Golden) -> Tensor {
    Tensor::from_slice(g.1, g.0.to_vec()).unwrap()
}

fn leaf(g: Golden) -> Tensor {
    t(g).requires_grad_(true).unwrap()
}

fn close(a: &Tensor, want: Golden) {
    assert_eq!(a.dims(), want.0, "shape");
    let got = a.to_f64_vec().unwrap();
    assert_eq!(got.len(), want.1.len());
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

/// `x^3`, saving its input.
struct Cube;

impl Function for Cube {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        Ok(vec![inputs[0].pow(3.0)?])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        Ok(vec![Some(grads[0].mul(x.mul(x)?.mul(3.0)?)?)])
    }
}

/// Runs `f(x, w)` under counting hooks whose unpack doubles the saved value; returns (packs
/// before backward, unpacks before backward, unpacks after, x.grad, w.grad).
fn doubled(f: impl Fn(&Tensor, &Tensor) -> Result<Tensor>) -> (usize, usize, usize, Tensor, Option<Tensor>) {
    let packs = Arc::new(AtomicUsize::new(0));
    let unpacks = Arc::new(AtomicUsize::new(0));
    let (p, u) = (packs.clone(), unpacks.clone());
    let (x, w) = (leaf(X), leaf(W));
    let loss = {
        let _hooks = saved_tensors_hooks(
            move |t: &Tensor| {
                p.fetch_add(1, Ordering::SeqCst);
                t.detach().copy()
            },
            move |s: &Tensor| {
                u.fetch_add(1, Ordering::SeqCst);
                s.mul(2.0)
            },
        )
        .unwrap();
        f(&x, &w).unwrap()
    };
    let (p0, u0) = (packs.load(Ordering::SeqCst), unpacks.load(Ordering::SeqCst));
    loss.backward().unwrap();
    (p0, u0, unpacks.load(Ordering::SeqCst), x.grad().unwrap(), w.grad())
}

#[test]
fn hooks_on_custom_function_save_for_backward() {
    let (packs, unpacks_before, unpacks, gx, _) =
        doubled(|x, _| Cube.apply(std::slice::from_ref(x))?.remove(0).sum_all());
    assert_eq!(packs, CUBE_PACKS);
    assert_eq!(unpacks_before, 0);
    assert_eq!(unpacks, CUBE_UNPACKS);
    close(&gx, CUBE_GRAD_DOUBLED);
}

#[test]
fn hooks_on_builtin_ops() {
    let (packs, unpacks_before, unpacks, gx, gw) = doubled(|x, w| x.mul(w)?.sin()?.sum_all());
    assert_eq!(packs, CHAIN_PACKS);
    assert_eq!(unpacks_before, 0);
    assert_eq!(unpacks, CHAIN_UNPACKS);
    close(&gx, CHAIN_GX_DOUBLED);
    close(&gw.unwrap(), CHAIN_GW_DOUBLED);
}

#[test]
fn hooks_are_scoped() -> Result<()> {
    let packs = Arc::new(AtomicUsize::new(0));
    let p = packs.clone();
    let x = leaf(X);
    {
        let _hooks = saved_tensors_hooks(
            move |t: &Tensor| {
                p.fetch_add(1, Ordering::SeqCst);
                Ok(t.clone())
            },
            |s: &Tensor| Ok(s.clone()),
        )?;
        let _ = x.sin()?;
    }
    let _ = x.sin()?.cos()?;
    assert_eq!(packs.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn pack_error_is_reported_by_backward() -> Result<()> {
    let x = leaf(X);
    let pack = |_: &Tensor| -> Result<u8> { Err(Error::msg("pack refused")) };
    let unpack = |_: &u8| -> Result<Tensor> { Err(Error::msg("never unpacked")) };
    let y = {
        let _hooks = saved_tensors_hooks(pack, unpack)?;
        x.sin()?.sum_all()?
    };
    assert!(err_text(y.backward()).contains("pack refused"));
    Ok(())
}

#[test]
fn save_on_cpu_values() -> Result<()> {
    let (x, w) = (leaf(X), leaf(W));
    let loss = {
        let _g = save_on_cpu()?;
        x.mul(&w)?.sin()?.mul(&x)?.sum_all()?
    };
    loss.backward()?;
    close(&x.grad().unwrap(), CPU_GX);
    close(&w.grad().unwrap(), CPU_GW);
    Ok(())
}

#[test]
fn save_on_cpu_keeps_higher_order_gradients() -> Result<()> {
    // d/dx sum(d/dx sum(x^3)) = 6x, with the saved x given back its history by unpack.
    let x = leaf(X);
    let y = {
        let _g = save_on_cpu()?;
        x.mul(&x)?.mul(&x)?.sum_all()?
    };
    let g = grad(&[y], std::slice::from_ref(&x), None, true, true, false)?.remove(0).unwrap();
    let gg = grad(&[g.sum_all()?], std::slice::from_ref(&x), None, false, false, false)?.remove(0).unwrap();
    let want: Vec<f64> = X.1.iter().map(|v| 6.0 * v).collect();
    for (a, b) in gg.to_f64_vec()?.iter().zip(&want) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    Ok(())
}

#[test]
fn disable_saved_tensors_hooks_errors() -> Result<()> {
    {
        let _d = disable_saved_tensors_hooks("no hooks here please")?;
        let r = saved_tensors_hooks(|t: &Tensor| Ok(t.clone()), |s: &Tensor| Ok(s.clone()));
        assert_eq!(err_text(r), DISABLED_MSG);
    }
    // Allowed again after the scope; and disabling while hooks are registered fails (as torch).
    let _h = saved_tensors_hooks(|t: &Tensor| Ok(t.clone()), |s: &Tensor| Ok(s.clone()))?;
    assert_eq!(err_text(disable_saved_tensors_hooks("busy")), "busy");
    Ok(())
}

#[test]
fn increment_version_invalidates_saved_tensors() -> Result<()> {
    let x = leaf(X);
    let y = x.mul(&x)?;
    let v = x.version();
    increment_version(&x);
    assert_eq!(x.version(), v + 1);
    let e = err_text(y.sum_all()?.backward());
    let prefix =
        "one of the variables needed for gradient computation has been modified by an inplace operation";
    assert!(VERSION_MSG.starts_with(prefix) && e.starts_with(prefix), "{e}");
    Ok(())
}

#[test]
fn detect_anomaly_guard_restores() {
    set_detect_anomaly(false);
    {
        let _g = detect_anomaly();
        assert!(is_anomaly_enabled());
    }
    assert!(!is_anomaly_enabled());
}

#[test]
fn multi_grad_hook_all() -> Result<()> {
    let x = leaf(X);
    let a = x.mul(2.0)?;
    let b = x.mul(3.0)?;
    let seen: Arc<Mutex<Vec<Vec<Option<Tensor>>>>> = Arc::default();
    let s = seen.clone();
    let handle = register_multi_grad_hook(
        &[a.clone(), b.clone()],
        move |gs: &[Option<Tensor>]| s.lock().unwrap().push(gs.to_vec()),
        MultiGradMode::All,
    )?;
    a.mul(&a)?.sum_all()?.backward_with(None, true, false)?;
    a.mul(&b)?.sum_all()?.backward_with(None, true, false)?;
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        close(seen[0][0].as_ref().unwrap(), MULTI_1_A);
        assert!(seen[0][1].is_none());
        close(seen[1][0].as_ref().unwrap(), MULTI_2_A);
        close(seen[1][1].as_ref().unwrap(), MULTI_2_B);
    }
    handle.remove();
    a.mul(&b)?.sum_all()?.backward()?;
    assert_eq!(seen.lock().unwrap().len(), 2);
    Ok(())
}

#[test]
fn multi_grad_hook_any_fires_once_per_backward() -> Result<()> {
    let x = leaf(X);
    let a = x.mul(2.0)?;
    let b = x.mul(3.0)?;
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let _h = register_multi_grad_hook(
        &[a.clone(), b.clone(), t(W)],
        move |gs: &[Option<Tensor>]| {
            assert_eq!(gs.len(), 1);
            c.fetch_add(1, Ordering::SeqCst);
        },
        MultiGradMode::Any,
    )?;
    a.mul(&b)?.sum_all()?.backward_with(None, true, false)?;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    a.add(&b)?.sum_all()?.backward()?;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // "all" needs every tensor to require grad, as torch's register_hook.
    assert!(
        register_multi_grad_hook(&[a.clone(), t(W)], |_: &[Option<Tensor>]| {}, MultiGradMode::All).is_err()
    );
    Ok(())
}

/// sum(sin(x) exp(y)) + sum(x²) sum(y³).
fn f2(xs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (x, y) = (&xs[0], &xs[1]);
    let a = x.sin()?.mul(&y.exp()?)?.sum_all()?;
    let b = x.mul(x)?.sum_all()?.mul(&y.mul(y)?.mul(y)?.sum_all()?)?;
    Ok(vec![a.add(&b)?])
}

#[test]
fn hvp_vhp_values() -> Result<()> {
    let (out, h) = hvp(&f2, &[t(X), t(Y)], Some(&[t(VX), t(VY)]), false, false)?;
    close(&out, F2_OUT);
    close(&h[0], HVP_X);
    close(&h[1], HVP_Y);
    assert!(!h[0].requires_grad());
    let (_, v) = vhp(&f2, &[t(X), t(Y)], Some(&[t(VX), t(VY)]), false, false)?;
    close(&v[0], VHP_X);
    close(&v[1], VHP_Y);

    let f1 = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].sin()?.mul(&xs[0])?.sum_all()?]) };
    let (_, h1) = hvp(&f1, &[t(X1)], None, false, false)?;
    close(&h1[0], HVP1);

    let lin = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(2.0)?.sum_all()?]) };
    let (_, z) = vhp(&lin, &[t(X)], Some(&[t(VX)]), false, false)?;
    close(&z[0], VHP_LINEAR);
    Ok(())
}

#[test]
fn hvp_create_graph() -> Result<()> {
    let x = leaf(X);
    let f = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        Ok(vec![xs[0].sin()?.mul(&xs[0])?.mul(&xs[0])?.sum_all()?])
    };
    let (_, hv) = hvp(&f, std::slice::from_ref(&x), Some(&[t(VX)]), true, false)?;
    assert!(hv[0].requires_grad());
    let g = grad(&[hv[0].sum_all()?], std::slice::from_ref(&x), None, false, false, false)?;
    close(g[0].as_ref().unwrap(), HVP_CG_GRAD);
    Ok(())
}

#[test]
fn hvp_vhp_errors() {
    let sq = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&xs[0])?.sum_all()?]) };
    let elementwise = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&xs[0])?]) };
    let lin = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(2.0)?.sum_all()?]) };
    let vx2 = t(VX).narrow(0, 0, 2).unwrap();
    assert_eq!(err_text(hvp(&sq, &[t(X)], Some(&[vx2]), false, false)), HVP_SIZE_MSG);
    assert_eq!(err_text(hvp(&f2, &[t(X), t(Y)], Some(&[t(VX)]), false, false)), HVP_LEN_MSG);
    assert_eq!(err_text(hvp(&elementwise, &[t(X)], Some(&[t(VX)]), false, false)), HVP_SCALAR_MSG);
    assert_eq!(err_text(vhp(&elementwise, &[t(X)], Some(&[t(VX)]), false, false)), VHP_SCALAR_MSG);
    assert_eq!(err_text(hvp(&sq, &[t(X)], None, false, false)), HVP_NONE_MSG);
    assert_eq!(err_text(hvp(&lin, &[t(X)], Some(&[t(VX)]), false, true)), HVP_STRICT_MSG);
}

#[test]
fn forward_ad_tangents() -> Result<()> {
    let y = {
        let _level = dual_level()?;
        let dx = make_dual(&t(X), &t(VX))?;
        let dm = make_dual(&t(M), &t(TM))?;
        let y = dx.sin()?.matmul(&dm)?.exp()?;
        let (p, tan) = unpack_dual(&y)?;
        close(&p, FW_Y);
        assert!(!p.requires_grad());
        close(&tan.unwrap(), FW_Y_T);
        close(&unpack_dual(&y.sum_all()?)?.1.unwrap(), FW_S_T);
        close(&unpack_dual(&dx.sin()?)?.1.unwrap(), FW_SIN_T);
        close(&unpack_dual(&dx)?.1.unwrap(), VX);
        let plain = Tensor::from_slice(&[1.0f64, 1.0], vec![2])?;
        assert!(unpack_dual(&plain)?.1.is_none());
        assert!(unpack_dual(&plain.mul(2.0)?)?.1.is_none());
        assert_eq!(err_text(make_dual(&t(X), &t(VX).narrow(0, 0, 2)?)), FW_SIZE_MSG);
        assert_eq!(err_text(dual_level()), FW_NESTED_MSG);
        y
    };
    // The level is gone: no tangent, and no new duals.
    assert!(unpack_dual(&y)?.1.is_none());
    assert_eq!(err_text(make_dual(&t(X), &t(VX))), FW_LEVEL_MSG);
    Ok(())
}
