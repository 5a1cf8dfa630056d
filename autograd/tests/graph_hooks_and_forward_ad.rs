//! torch.autograd.graph's saved-tensors hooks (`saved_tensors_hooks`, `save_on_cpu`,
//! `disable_saved_tensors_hooks`), `register_multi_grad_hook`, `increment_version`,
//! `detect_anomaly`, `functional.hvp` / `vhp` and `forward_ad`, against torch's float64 values and
//! error texts (graph_hooks_and_forward_ad/golden.rs, from make_graph_hooks_and_forward_ad_golden.py).

#[path = "graph_hooks_and_forward_ad/golden.rs"]
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

/// Registers a multi-grad hook on `a = 2x`, `b = 3x` whose pass over `sum(a b)` runs, from a hook
/// on `b`, a nested `grad` over `sum(a a)`; returns x and what the multi-grad hook saw.
fn nested_multi(mode: MultiGradMode) -> Result<(Tensor, Vec<Vec<Option<Tensor>>>)> {
    let x = leaf(X);
    let a = x.mul(2.0)?;
    let b = x.mul(3.0)?;
    let seen: Arc<Mutex<Vec<Vec<Option<Tensor>>>>> = Arc::default();
    let s = seen.clone();
    let multi = register_multi_grad_hook(
        &[a.clone(), b.clone()],
        move |gs: &[Option<Tensor>]| s.lock().unwrap().push(gs.to_vec()),
        mode,
    )?;
    let (a2, x2) = (a.clone(), x.clone());
    let nest = b.register_hook(move |_: &Tensor| {
        // Hooks run with grad mode off (as torch's without create_graph): record under enable_grad.
        oxtorch_autograd::enable_grad(|| {
            let inner = a2.mul(&a2).unwrap().sum_all().unwrap();
            grad(&[inner], std::slice::from_ref(&x2), None, true, false, false).unwrap();
        });
        None
    })?;
    a.mul(&b)?.sum_all()?.backward()?;
    nest.remove();
    multi.remove();
    let seen = seen.lock().unwrap().clone();
    Ok((x, seen))
}

#[test]
fn multi_grad_hook_all_nested_pass_keeps_its_own_state() -> Result<()> {
    // The nested pass ends first: [d sum(a a)/da = 4x, None]; then the outer one:
    // [d sum(a b)/da = b = 3x, d/db = a = 2x]. Each pass fires once.
    let (x, seen) = nested_multi(MultiGradMode::All)?;
    assert_eq!(seen.len(), 2, "one call per pass");
    let xs = x.to_f64_vec()?;
    let scaled = |k: f64| -> Tensor {
        let v: Vec<f64> = xs.iter().map(|v| k * v).collect();
        Tensor::from_slice(&v, vec![v.len()]).unwrap()
    };
    let same = |got: &Option<Tensor>, want: Tensor| {
        let got = got.as_ref().expect("a gradient").to_f64_vec().unwrap();
        assert_eq!(got, want.to_f64_vec().unwrap());
    };
    assert_eq!(seen[0].len(), 2);
    same(&seen[0][0], scaled(4.0));
    assert!(seen[0][1].is_none());
    assert_eq!(seen[1].len(), 2);
    same(&seen[1][0], scaled(3.0));
    same(&seen[1][1], scaled(2.0));
    Ok(())
}

#[test]
fn multi_grad_hook_any_nested_pass_fires_once_each() -> Result<()> {
    let (_, seen) = nested_multi(MultiGradMode::Any)?;
    assert_eq!(seen.len(), 2, "once in the outer pass, once in the nested one");
    assert!(seen.iter().all(|gs| gs.len() == 1 && gs[0].is_some()));
    Ok(())
}

#[test]
fn packed_saved_tensors_skip_the_version_check() -> Result<()> {
    // torch: with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t): y = (x*x).sum();
    // an in-place write to x afterwards, and y.backward() gives 2x (no version error).
    let x = leaf(X);
    let y = {
        let _h = saved_tensors_hooks(|t: &Tensor| t.detach().copy(), |s: &Tensor| Ok(s.clone()))?;
        x.mul(&x)?.sum_all()?
    };
    increment_version(&x);
    y.backward()?;
    let want: Vec<f64> = X.1.iter().map(|v| 2.0 * v).collect();
    assert_eq!(x.grad().unwrap().to_f64_vec()?, want);
    Ok(())
}

#[test]
fn pack_hook_runs_without_grad() -> Result<()> {
    // torch: ops inside pack are not recorded (requires_grad False for each packed tensor).
    let recorded: Arc<Mutex<Vec<bool>>> = Arc::default();
    let r = recorded.clone();
    let x = leaf(X);
    let y = {
        let _h = saved_tensors_hooks(
            move |t: &Tensor| {
                let u = t.mul(2.0)?;
                r.lock().unwrap().push(u.requires_grad());
                Ok(u)
            },
            |s: &Tensor| s.mul(0.5),
        )?;
        x.mul(&x)?.sum_all()?
    };
    let recorded = recorded.lock().unwrap().clone();
    assert!(!recorded.is_empty());
    assert!(recorded.iter().all(|&r| !r), "{recorded:?}");
    y.backward()?;
    let want: Vec<f64> = X.1.iter().map(|v| 2.0 * v).collect();
    assert_eq!(x.grad().unwrap().to_f64_vec()?, want);
    Ok(())
}

#[test]
fn unpacked_tensor_gets_the_originals_history() -> Result<()> {
    // torch 2.15, float64: x = [1, 2, 3], w = [0.5, 2, -1] (both require grad);
    // with saved_tensors_hooks(lambda t: t.detach(), lambda t: t * w): y = (x * x).sum()
    // g = grad(y, x, create_graph=True) = [1, 8, -6] (requires grad);
    // grad(g.sum(), [x, w], allow_unused=True) = ([2, 2, 2], None): the unpacked tensor has x's
    // history, not that of `t * w`.
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0], vec![3])?.requires_grad_(true)?;
    let w = Tensor::from_slice(&[0.5f64, 2.0, -1.0], vec![3])?.requires_grad_(true)?;
    let w2 = w.clone();
    let y = {
        let _h = saved_tensors_hooks(|t: &Tensor| Ok(t.detach()), move |s: &Tensor| s.mul(&w2))?;
        x.mul(&x)?.sum_all()?
    };
    let g = grad(&[y], std::slice::from_ref(&x), None, true, true, false)?.remove(0).unwrap();
    assert!(g.requires_grad());
    assert_eq!(g.to_f64_vec()?, vec![1.0, 8.0, -6.0]);
    let gg = grad(&[g.sum_all()?], &[x.clone(), w.clone()], None, false, false, true)?;
    assert_eq!(gg[0].as_ref().unwrap().to_f64_vec()?, vec![2.0, 2.0, 2.0]);
    assert!(gg[1].is_none(), "no history through what unpack computed");
    Ok(())
}

#[test]
fn unpack_dual_keeps_history() -> Result<()> {
    let w = Tensor::from_slice(&[3.0f64, 4.0], vec![2])?.requires_grad_(true)?;
    let y = w.mul(2.0)?;
    {
        let _level = dual_level()?;
        let primal = Tensor::from_slice(&[1.0f64, 2.0], vec![2])?;
        let d = make_dual(&primal, &Tensor::from_slice(&[1.0f64, 1.0], vec![2])?)?;
        // torch: p, t = unpack_dual(make_dual([1, 2], [1, 1]) * w): p = [3, 8] with w's
        // history (p.sum().backward() gives w.grad = [1, 2]), t = [3, 4].
        let (p, tan) = unpack_dual(&d.mul(&w)?)?;
        assert_eq!(p.to_f64_vec()?, vec![3.0, 8.0]);
        assert!(p.requires_grad());
        assert_eq!(tan.unwrap().to_f64_vec()?, vec![3.0, 4.0]);
        p.sum_all()?.backward()?;
        assert_eq!(w.grad().unwrap().to_f64_vec()?, vec![1.0, 2.0]);
        // A tensor that depends on no dual comes back as it is.
        let (p, tan) = unpack_dual(&y)?;
        assert!(p.is_same(&y) && tan.is_none());
        // Only dual history: a plain value.
        assert!(!unpack_dual(&d.sin()?)?.0.requires_grad());
    }
    // No level: the tensor as it is, history kept (torch: `unpack_dual(y).primal is y`).
    let (p, tan) = unpack_dual(&y)?;
    assert!(p.is_same(&y) && p.grad_fn().is_some() && tan.is_none());
    Ok(())
}
