//! Module hooks ([`Hooked`]) against PyTorch 2.15: a float64 `Linear(3, 2)` with forward
//! pre-hooks, forward hooks, full backward pre-hooks and full backward hooks replays the cases of
//! `module_hooks_golden.rs` (written by `nn/tests/make_module_hooks_golden.py`): its output, the gradients of
//! the input and parameters and the gradients the backward hooks were given. Plus the hooks' order
//! and `prepend`, removal (also from inside a hook, and of a backward hook after the forward
//! pass), registering from inside a hook, the wrapper's transparency (state-dict keys, type name,
//! training mode, loading), `always_call`, and torch's errors.

use std::sync::{Arc, Mutex};

use oxtorch_nn::hooks::{HookOptions, Hooked, RemovableHandle};
use oxtorch_nn::{Dropout, Forward, Linear, Module, ModuleExt, Sequential, StateDict};
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::golden_case::{assert_close, err, float64, leaf, ramp, T};

/// One golden case: torch's output, gradients, and the gradients its backward hooks were given
/// (those of the first-registered backward pre-hook and backward hook).
struct HookCase {
    out: T,
    x_grad: Option<T>,
    weight_grad: T,
    bias_grad: T,
    seen_pre_grad_output: T,
    seen_grad_input: Option<T>,
    seen_grad_output: T,
}

include!("module_hooks_golden.rs");

const TOL: f64 = 1e-12;

/// What the recording backward hooks were given.
#[derive(Default)]
struct Seen {
    pre_grad_output: Option<Tensor>,
    /// `Some(grad_input[0])` once the backward hook ran
    grad_input: Option<Option<Tensor>>,
    grad_output: Option<Tensor>,
}

type Shared = Arc<Mutex<Seen>>;

/// torch's `Linear(3, 2)` of the golden file, float64.
fn linear() -> Hooked<Linear> {
    Hooked::new(Linear::from_weights(leaf(&WEIGHT, true), Some(leaf(&BIAS, true))))
}

/// `Some(vec![Some(t)])`: one replaced gradient.
fn one(t: Tensor) -> Result<Option<Vec<Option<Tensor>>>> {
    Ok(Some(vec![Some(t)]))
}

/// The single gradient of a hook's argument.
fn first(g: &[Option<Tensor>]) -> Tensor {
    assert_eq!(g.len(), 1, "one gradient per input / output");
    g[0].clone().expect("a gradient")
}

/// A backward pre-hook that records `grad_output` and returns `scale * go + shift`.
fn recording_pre_hook(h: &Hooked<Linear>, seen: &Shared, scale: f64, shift: f64) -> RemovableHandle {
    let seen = Arc::clone(seen);
    h.register_full_backward_pre_hook(move |_, go| {
        let g = first(go);
        seen.lock().unwrap().pre_grad_output = Some(g.clone());
        one(g.mul(scale)?.add(shift)?)
    })
}

/// A backward hook that records `grad_input` and `grad_output` and returns `gi * scale` (nothing
/// when there is no `grad_input`).
fn recording_hook(h: &Hooked<Linear>, seen: &Shared, scale: f64) -> RemovableHandle {
    let seen = Arc::clone(seen);
    h.register_full_backward_hook(move |_, gi, go| {
        assert_eq!((gi.len(), go.len()), (1, 1));
        let mut s = seen.lock().unwrap();
        s.grad_input = Some(gi[0].clone());
        s.grad_output = Some(first(go));
        match &gi[0] {
            Some(g) => one(g.mul(scale)?),
            None => Ok(None),
        }
    })
}

/// Runs the case on `h` (the loss `(out * c).sum()`, `c = 1, 2, ...`) and compares with torch.
fn replay(
    name: &str,
    case: &HookCase,
    h: &Hooked<Linear>,
    x_requires_grad: bool,
    seen: &Shared,
) -> Result<()> {
    let x = leaf(&X, x_requires_grad);
    let out = h.forward(&x)?;
    assert_close(&format!("{name}.out"), &out, &case.out, TOL);
    out.mul(ramp(&out))?.sum_all()?.backward()?;
    match &case.x_grad {
        Some(want) => assert_close(&format!("{name}.x_grad"), &x.grad().expect("x.grad"), want, TOL),
        None => assert!(x.grad().is_none(), "{name}: x.grad"),
    }
    let lin = h.inner();
    assert_close(&format!("{name}.weight_grad"), &lin.weight.grad().unwrap(), &case.weight_grad, TOL);
    let bias_grad = lin.bias.as_ref().unwrap().grad().unwrap();
    assert_close(&format!("{name}.bias_grad"), &bias_grad, &case.bias_grad, TOL);
    let s = seen.lock().unwrap();
    let pre = s.pre_grad_output.as_ref().expect("the backward pre-hook ran");
    assert_close(&format!("{name}.seen_pre_grad_output"), pre, &case.seen_pre_grad_output, TOL);
    let gi = s.grad_input.as_ref().expect("the backward hook ran");
    match (gi, &case.seen_grad_input) {
        (Some(got), Some(want)) => assert_close(&format!("{name}.seen_grad_input"), got, want, TOL),
        (None, None) => {}
        (got, want) => panic!("{name}: grad_input {:?} vs torch's {}", got.is_some(), want.is_some()),
    }
    let go = s.grad_output.as_ref().unwrap();
    assert_close(&format!("{name}.seen_grad_output"), go, &case.seen_grad_output, TOL);
    Ok(())
}

#[test]
fn basic_hooks_match_pytorch() -> Result<()> {
    let h = linear();
    let seen = Shared::default();
    h.register_forward_pre_hook(|_, x| Ok(Some(x.mul(2.0)?)));
    h.register_forward_hook(|_, _, out| Ok(Some(out.add(1.0)?)));
    recording_pre_hook(&h, &seen, 0.5, 0.1);
    recording_hook(&h, &seen, 3.0);
    replay("BASIC", &BASIC, &h, true, &seen)
}

#[test]
fn chained_and_prepended_hooks_match_pytorch() -> Result<()> {
    let h = linear();
    let seen = Shared::default();
    let front = HookOptions { prepend: true };
    h.register_forward_pre_hook(|_, x| Ok(Some(x.mul(2.0)?)));
    h.register_forward_pre_hook(|_, x| Ok(Some(x.add(0.5)?)));
    h.register_forward_pre_hook_with(|_, x| Ok(Some(x.sub(1.0)?)), front);
    h.register_forward_hook(|_, _, out| Ok(Some(out.mul(3.0)?)));
    h.register_forward_hook(|_, _, out| Ok(Some(out.sub(1.0)?)));
    h.register_forward_hook_with(|_, _, out| Ok(Some(out.mul(0.5)?)), front);
    recording_pre_hook(&h, &seen, 2.0, 0.0);
    h.register_full_backward_pre_hook(|_, go| one(first(go).sub(1.0)?));
    h.register_full_backward_pre_hook_with(|_, go| one(first(go).add(0.25)?), front);
    recording_hook(&h, &seen, 3.0);
    h.register_full_backward_hook(|_, gi, _| one(first(gi).add(1.0)?));
    h.register_full_backward_hook_with(|_, gi, _| one(first(gi).mul(-0.5)?), front);
    replay("CHAIN", &CHAIN, &h, true, &seen)
}

#[test]
fn backward_hooks_without_input_grad_match_pytorch() -> Result<()> {
    let h = linear();
    let seen = Shared::default();
    recording_pre_hook(&h, &seen, 2.0, 0.0);
    recording_hook(&h, &seen, 3.0);
    replay("NO_INPUT_GRAD", &NO_INPUT_GRAD, &h, false, &seen)
}

#[test]
fn the_graph_passes_through_the_hook_identities() -> Result<()> {
    let h = linear();
    h.register_full_backward_hook(|_, _, _| Ok(None));
    let x = leaf(&X, true);
    let y = h.forward(&x)?;
    let name = |t: &Tensor| t.grad_fn().map(|g| g.name().to_string());
    assert_eq!(name(&y).as_deref(), Some("BackwardHookFunctionBackward"));
    // no backward hooks, no identity
    let plain = linear();
    let y = plain.forward(&x)?;
    assert_ne!(name(&y).as_deref(), Some("BackwardHookFunctionBackward"));
    Ok(())
}

/// A log the hooks write their names to.
type Log = Arc<Mutex<Vec<String>>>;

fn log(l: &Log, what: &str) {
    l.lock().unwrap().push(what.to_string());
}

fn take(l: &Log) -> Vec<String> {
    std::mem::take(&mut *l.lock().unwrap())
}

#[test]
fn hooks_run_in_registration_order_prepend_first() -> Result<()> {
    let h = linear();
    let l = Log::default();
    let front = HookOptions { prepend: true };
    for (name, opts) in
        [("pre_a", HookOptions::default()), ("pre_b", HookOptions::default()), ("pre_c", front)]
    {
        let l = Arc::clone(&l);
        h.register_forward_pre_hook_with(
            move |_, _| {
                log(&l, name);
                Ok(None)
            },
            opts,
        );
    }
    for (name, opts) in [("fwd_a", HookOptions::default()), ("fwd_b", front), ("fwd_c", front)] {
        let l = Arc::clone(&l);
        h.register_forward_hook_with(
            move |_, _, _| {
                log(&l, name);
                Ok(None)
            },
            opts,
        );
    }
    for (name, opts) in [("bpre_a", HookOptions::default()), ("bpre_b", front)] {
        let l = Arc::clone(&l);
        h.register_full_backward_pre_hook_with(
            move |_, _| {
                log(&l, name);
                Ok(None)
            },
            opts,
        );
    }
    for (name, opts) in [("bwd_a", front), ("bwd_b", HookOptions::default())] {
        let l = Arc::clone(&l);
        h.register_full_backward_hook_with(
            move |_, _, _| {
                log(&l, name);
                Ok(None)
            },
            opts,
        );
    }
    let x = leaf(&X, true);
    let y = h.forward(&x)?;
    assert_eq!(take(&l), ["pre_c", "pre_a", "pre_b", "fwd_c", "fwd_b", "fwd_a"]);
    y.sum_all()?.backward()?;
    assert_eq!(take(&l), ["bpre_b", "bpre_a", "bwd_a", "bwd_b"]);
    // hooks returning `None` change nothing
    let plain = h.inner().forward(&x)?;
    assert_eq!(y.to_f64_vec()?, plain.to_f64_vec()?);
    Ok(())
}

#[test]
fn hooks_get_the_module() -> Result<()> {
    let h = linear();
    let l = Log::default();
    let l2 = Arc::clone(&l);
    h.register_forward_hook(move |m: &Linear, _, _| {
        log(&l2, &format!("fwd {:?}", m.weight.dims()));
        Ok(None)
    });
    let l2 = Arc::clone(&l);
    h.register_full_backward_hook(move |m: &Linear, _, _| {
        log(&l2, &format!("bwd {}", m.bias.is_some()));
        Ok(None)
    });
    let y = h.forward(&leaf(&X, true))?;
    // the module outlives the wrapper while the graph needs it (as in torch)
    drop(h);
    y.sum_all()?.backward()?;
    assert_eq!(take(&l), ["fwd [2, 3]", "bwd true"]);
    Ok(())
}

#[test]
fn removed_hooks_do_not_run() -> Result<()> {
    let h = linear();
    let l = Log::default();
    let l2 = Arc::clone(&l);
    let pre = h.register_forward_pre_hook(move |_, _| {
        log(&l2, "pre");
        Ok(None)
    });
    let l2 = Arc::clone(&l);
    let fwd = h.register_forward_hook(move |_, _, out| {
        log(&l2, "fwd");
        Ok(Some(out.add(1.0)?))
    });
    let x = float64(&X);
    let y1 = h.forward(&x)?;
    assert_eq!(take(&l), ["pre", "fwd"]);
    assert!(pre.id() < fwd.id(), "ids increase");
    fwd.remove();
    fwd.remove(); // idempotent
    let y2 = h.forward(&x)?;
    assert_eq!(take(&l), ["pre"]);
    let diff: Vec<f64> = y1.sub(&y2)?.to_f64_vec()?;
    assert!(diff.iter().all(|d| (d - 1.0).abs() < 1e-12), "the removed hook no longer adds 1: {diff:?}");
    // dropping a handle keeps its hook (torch)
    drop(pre);
    h.forward(&x)?;
    assert_eq!(take(&l), ["pre"]);
    assert!(h.has_hooks());
    Ok(())
}

#[test]
fn a_hook_removing_a_later_hook_affects_the_next_call() -> Result<()> {
    // torch: ['a', 'b', 'a'] (a call runs the hooks registered when it started)
    let h = linear();
    let l = Log::default();
    let b_handle: Arc<Mutex<Option<RemovableHandle>>> = Arc::default();
    let (l2, bh) = (Arc::clone(&l), Arc::clone(&b_handle));
    let a = h.register_forward_pre_hook(move |_, _| {
        log(&l2, "a");
        if let Some(b) = bh.lock().unwrap().as_ref() {
            b.remove();
        }
        Ok(None)
    });
    let l2 = Arc::clone(&l);
    let b = h.register_forward_pre_hook(move |_, _| {
        log(&l2, "b");
        Ok(None)
    });
    *b_handle.lock().unwrap() = Some(b);
    let x = float64(&X);
    h.forward(&x)?;
    h.forward(&x)?;
    assert_eq!(take(&l), ["a", "b", "a"]);
    // a hook removing itself
    let own: Arc<Mutex<Option<RemovableHandle>>> = Arc::default();
    let (l2, me) = (Arc::clone(&l), Arc::clone(&own));
    let c = h.register_forward_hook(move |_, _, _| {
        log(&l2, "c");
        if let Some(me) = me.lock().unwrap().as_ref() {
            me.remove();
        }
        Ok(None)
    });
    *own.lock().unwrap() = Some(c);
    h.forward(&x)?;
    h.forward(&x)?;
    assert_eq!(take(&l), ["a", "c", "a"]);
    a.remove();
    assert!(!h.has_hooks());
    Ok(())
}

#[test]
fn a_hook_registering_a_hook_does_not_deadlock() -> Result<()> {
    let h = Arc::new(linear());
    let l = Log::default();
    let (l2, weak) = (Arc::clone(&l), Arc::downgrade(&h));
    h.register_forward_pre_hook(move |_, _| {
        log(&l2, "outer");
        if let Some(h) = weak.upgrade() {
            let l3 = Arc::clone(&l2);
            h.register_forward_hook(move |_, _, _| {
                log(&l3, "inner");
                Ok(None)
            });
        }
        Ok(None)
    });
    let x = float64(&X);
    // As torch: the forward hooks are read after the forward pass, so one a pre-hook registers
    // runs in the same call (torch 2.15 logs ['pre', 'fwd-new']).
    h.forward(&x)?;
    assert_eq!(take(&l), ["outer", "inner"]);
    h.forward(&x)?;
    assert_eq!(take(&l), ["outer", "inner", "inner"]);
    Ok(())
}

#[test]
fn a_backward_hook_removed_after_the_forward_pass_still_runs() -> Result<()> {
    // torch: the backward hooks are those of the forward pass
    let h = linear();
    let l = Log::default();
    let l2 = Arc::clone(&l);
    let handle = h.register_full_backward_hook(move |_, _, _| {
        log(&l2, "bwd");
        Ok(None)
    });
    let x = leaf(&X, true);
    let y = h.forward(&x)?;
    handle.remove();
    y.sum_all()?.backward()?;
    assert_eq!(take(&l), ["bwd"]);
    h.forward(&x)?.sum_all()?.backward()?;
    assert!(take(&l).is_empty());
    Ok(())
}

#[test]
fn the_wrapper_is_transparent() -> Result<()> {
    let mut h = linear();
    h.register_forward_hook(|_, _, out| Ok(Some(out.add(1.0)?)));
    let keys: Vec<String> = h.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, ["weight", "bias"]);
    assert_eq!(h.type_name(), "Linear");
    let names: Vec<String> = h.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["weight", "bias"]);
    // changing the module while a graph with backward hooks (which reaches the module) is
    // alive: the hooks of that graph see the change, as in torch
    let l = Log::default();
    let l2 = Arc::clone(&l);
    h.register_full_backward_hook(move |m: &Linear, _, _| {
        let bias = m.bias.as_ref().map(|b| b.to_f64_vec()).transpose()?;
        log(&l2, &format!("bwd {bias:?}"));
        Ok(None)
    });
    let x = leaf(&X, true);
    let y = h.forward(&x)?;
    h.inner_mut().bias = Some(Tensor::from_vec(vec![7.0f64, 8.0], [2])?);
    y.sum_all()?.backward()?;
    assert_eq!(take(&l), ["bwd Some([7.0, 8.0])"]);

    // loading through the wrapper reaches the module; the forward hook still runs
    let mut sd = StateDict::new();
    sd.insert("weight", Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])?);
    sd.insert("bias", Tensor::from_vec(vec![0.0f64, 0.0], [2])?);
    h.load_state_dict(&sd, true)?;
    assert_eq!(h.inner().weight.to_f64_vec()?, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = h.forward(&float64(&X))?;
    assert_eq!(out.to_f64_vec()?, [-0.5, -2.0, 2.75, 8.0]);

    // `to` and `inner_mut`
    h.float()?;
    assert_eq!(h.inner().weight.dtype(), DType::F32);
    h.inner_mut().bias = None;
    assert_eq!(h.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    let lin: Linear = h.into_inner();
    assert!(lin.bias.is_none());

    // training mode reaches the module
    let mut d = Hooked::new(Dropout::new(0.5)?);
    assert!(d.is_training());
    d.eval();
    assert!(!d.is_training());
    assert!(!d.inner().training);
    let ones = Tensor::ones([4, 5], DType::F64)?;
    assert_eq!(d.forward(&ones)?.to_f64_vec()?, ones.to_f64_vec()?);
    Ok(())
}

#[test]
fn a_hooked_layer_in_a_sequential() -> Result<()> {
    let h = linear();
    let l = Log::default();
    let l2 = Arc::clone(&l);
    h.register_forward_hook(move |_, _, _| {
        log(&l2, "fwd");
        Ok(None)
    });
    let seq = Sequential::new().add(h).add(Linear::from_weights(float64(&WEIGHT).narrow(1, 0, 2)?, None));
    let keys: Vec<String> = seq.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, ["0.weight", "0.bias", "1.weight"]);
    let out = seq.forward(&float64(&X))?;
    assert_eq!(out.dims(), [2, 2]);
    assert_eq!(take(&l), ["fwd"]);
    Ok(())
}

#[test]
fn errors_of_hooks_are_the_calls() -> Result<()> {
    let x = leaf(&X, true);

    // forward pre-hook and forward hook
    let h = linear();
    let pre = h.register_forward_pre_hook(|_, _| Err(Error::msg("pre-hook failed")));
    assert_eq!(err(h.forward(&x)), "pre-hook failed");
    pre.remove();
    h.register_forward_hook(|_, _, _| Err(Error::msg("forward hook failed")));
    assert_eq!(err(h.forward(&x)), "forward hook failed");

    // the forward pass's own error, with hooks registered
    let h = linear();
    h.register_forward_pre_hook(|_, _| Ok(None));
    let msg = err(h.forward(&float64(&WEIGHT).narrow(1, 0, 2)?));
    assert!(msg.contains("cannot be multiplied"), "{msg}");

    // a backward hook's error is backward's
    let h = linear();
    h.register_full_backward_hook(|_, _, _| Err(Error::msg("backward hook failed")));
    let e = h.forward(&x)?.sum_all()?.backward().unwrap_err().to_string();
    assert!(e.contains("backward hook failed"), "{e}");
    let h = linear();
    h.register_full_backward_pre_hook(|_, _| Err(Error::msg("backward pre-hook failed")));
    let e = h.forward(&x)?.sum_all()?.backward().unwrap_err().to_string();
    assert!(e.contains("backward pre-hook failed"), "{e}");

    // torch's errors for a wrong number of gradients
    let h = linear();
    h.register_full_backward_hook(|_, gi, _| Ok(Some(vec![gi[0].clone(), gi[0].clone()])));
    let e = h.forward(&x)?.sum_all()?.backward().unwrap_err().to_string();
    assert!(
        e.contains("Backward hook returned an invalid number of grad_input, got 2, but expected 1"),
        "{e}"
    );
    let h = linear();
    h.register_full_backward_pre_hook(|_, go| Ok(Some(vec![go[0].clone(), go[0].clone()])));
    let e = h.forward(&x)?.sum_all()?.backward().unwrap_err().to_string();
    assert!(
        e.contains("Backward pre hook returned an invalid number of grad_output, got 2, but expected 1"),
        "{e}"
    );

    // an input that does not require grad: the hook may not return a gradient (torch)
    let h = linear();
    h.register_full_backward_hook(|_, _, _| one(Tensor::ones([2, 3], DType::F64)?));
    let e = h.forward(&float64(&X))?.sum_all()?.backward().unwrap_err().to_string();
    assert!(
        e.contains(
            "Backward hook for Modules where no input requires gradient should always return None or None for all gradients."
        ),
        "{e}"
    );
    // ... `None`s are fine
    let h = linear();
    h.register_full_backward_hook(|_, gi, _| Ok(Some(gi.to_vec())));
    h.forward(&float64(&X))?.sum_all()?.backward()?;
    Ok(())
}

#[test]
fn always_called_forward_hooks_run_when_the_call_fails() -> Result<()> {
    // torch: a failing pre-hook; the always-called hook gets `output = None`, the plain one
    // does not run, the pre-hook's error is raised
    let h = linear();
    let l = Log::default();
    h.register_forward_pre_hook(|_, _| Err(Error::msg("boom")));
    let l2 = Arc::clone(&l);
    h.register_forward_hook_always_call(
        move |_, _, out| {
            log(&l2, &format!("always {}", out.is_some()));
            Err(Error::msg("ignored"))
        },
        HookOptions::default(),
    );
    let l2 = Arc::clone(&l);
    h.register_forward_hook(move |_, _, _| {
        log(&l2, "plain");
        Ok(None)
    });
    assert_eq!(err(h.forward(&float64(&X))), "boom");
    assert_eq!(take(&l), ["always false"]);

    // a forward hook failing after the always-called one ran: it does not run again; one after
    // it runs with the output so far
    let h = linear();
    let l2 = Arc::clone(&l);
    h.register_forward_hook_always_call(
        move |_, _, out| {
            log(&l2, &format!("first {}", out.is_some()));
            Ok(None)
        },
        HookOptions::default(),
    );
    h.register_forward_hook(|_, _, _| Err(Error::msg("late failure")));
    let l2 = Arc::clone(&l);
    h.register_forward_hook_always_call(
        move |_, _, out| {
            log(&l2, &format!("last {}", out.is_some()));
            Ok(None)
        },
        HookOptions::default(),
    );
    assert_eq!(err(h.forward(&float64(&X))), "late failure");
    assert_eq!(take(&l), ["first true", "last true"]);

    // on success it is an ordinary forward hook
    let h = linear();
    h.register_forward_hook_always_call(
        |_, _, out| Ok(Some(out.expect("an output").mul(0.0)?)),
        HookOptions::default(),
    );
    let out = h.forward(&float64(&X))?;
    assert!(out.to_f64_vec()?.iter().all(|&v| v == 0.0));
    Ok(())
}
