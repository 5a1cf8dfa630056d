//! Review 31's fixes, against PyTorch 2.15 (values in `grid_sample_and_parametrization_edges_golden.rs`, written by
//! `nn/tests/make_grid_sample_and_parametrization_edges_golden.py`): `grid_sample` on non-finite grid coordinates, spectral
//! norm's evaluation mode, a re-entrant `Parametrized::call` (an error, not a deadlock), and the
//! order of `load_state_dict`'s unexpected keys.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use oxtorch_nn::functional::grid_sample;
use oxtorch_nn::utils::parametrizations::{spectral_norm, weight_norm};
use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

/// A tensor written out: its dims and row-major values.
struct G {
    dims: &'static [usize],
    data: &'static [f64],
}

include!("grid_sample_and_parametrization_edges_golden.rs");

fn tensor(v: &G) -> Tensor {
    Tensor::from_vec(v.data.to_vec(), v.dims).unwrap()
}

/// torch's `allclose` rule with `rtol = atol = tol`, NaN matching NaN (`equal_nan`).
fn check(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (x, y)) in got.iter().zip(want).enumerate() {
        let ok = if y.is_nan() { x.is_nan() } else { (x - y).abs() <= tol * (1.0 + y.abs()) };
        assert!(ok, "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_f64_vec().unwrap()
}

// --- grid_sample with NaN and infinite coordinates -------------------------------------------------

#[test]
fn grid_sample_non_finite_coordinates_match_pytorch() -> Result<()> {
    assert_eq!(GS_NONFINITE.len(), 36);
    for (nd, mode, pad, align, want) in GS_NONFINITE {
        let (input, grid) = if *nd == 2 { (&GS_INPUT_2D, &GS_GRID_2D) } else { (&GS_INPUT_3D, &GS_GRID_3D) };
        let what = format!("{nd}-d {mode} {pad} align_corners={align}");
        let out = grid_sample(&tensor(input), &tensor(grid), mode, pad, *align)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(out.dims(), want.dims, "{what}: shape");
        check(&what, &values(&out), want.data, 1e-12);
    }
    Ok(())
}

/// With non-finite points in the grid, the gradients at the finite points are torch's (taken on
/// the finite points alone); so is the input's gradient, the non-finite points given a zero
/// cotangent (except bicubic with border/reflection padding, whose NaN weights reach the clipped
/// taps: torch's gradient is NaN there too).
#[test]
fn grid_sample_gradients_at_finite_points_are_pytorch_s() -> Result<()> {
    assert_eq!(GS_GRADS.len(), 36);
    let rows = GS_FINITE_ROWS;
    for (nd, mode, pad, align, want_grid, want_input) in GS_GRADS {
        let what = format!("{nd}-d {mode} {pad} align_corners={align}");
        let (input, grid) =
            if *nd == 2 { (&GS_INPUT_2D, &GS_GRAD_GRID_2D) } else { (&GS_INPUT_3D, &GS_GRAD_GRID_3D) };
        let input = tensor(input).requires_grad_(true)?;
        let grid = tensor(grid).requires_grad_(true)?;
        let points = grid.numel() / nd;
        let out = grid_sample(&input, &grid, mode, pad, *align).unwrap_or_else(|e| panic!("{what}: {e}"));
        // torch's cotangent, linspace(-1, 1.5) over [C, finite points], zero at the other points
        let channels = out.dims()[1];
        let n = channels * rows.len();
        let mut cot = vec![0.0f64; channels * points];
        for c in 0..channels {
            for (j, &r) in rows.iter().enumerate() {
                let k = c * rows.len() + j;
                cot[c * points + r] = -1.0 + 2.5 * k as f64 / (n - 1) as f64;
            }
        }
        let cot = Tensor::from_vec(cot, out.dims())?;
        out.mul(&cot)?.sum_all()?.backward()?;
        let g = values(&grid.grad().expect("grid gradient"));
        let finite: Vec<f64> = rows.iter().flat_map(|&r| g[r * nd..(r + 1) * nd].to_vec()).collect();
        check(&format!("{what}: grid gradient"), &finite, want_grid.data, 1e-10);
        if !(*mode == "bicubic" && *pad != "zeros") {
            let gi = input.grad().expect("input gradient");
            assert_eq!(gi.dims(), want_input.dims, "{what}: input gradient shape");
            check(&format!("{what}: input gradient"), &values(&gi), want_input.data, 1e-10);
        }
    }
    Ok(())
}

// --- spectral norm: evaluation mode uses the stored vectors, training iterates ------------------

#[test]
fn spectral_norm_eval_keeps_u_v_and_train_iterates_as_pytorch() -> Result<()> {
    let conv = Conv2d::new(2, 3, &[2], ConvOptions::default())?;
    let mut m = spectral_norm(conv, "weight", 3, 1e-12, None)?;
    m.double()?;
    let mut sd = StateDict::new();
    for (k, v) in SN_STATE {
        sd.insert(k, tensor(v));
    }
    m.load_state_dict(&sd, true)?;
    let u0 = values(m.parametrization().u().unwrap());
    let v0 = values(m.parametrization().v().unwrap());
    let x = tensor(&SN_X);
    m.eval();
    for pass in 0..2 {
        let out = m.forward(&x)?;
        check(&format!("eval pass {pass}"), &values(&out), SN_EVAL_OUT.data, 1e-10);
        assert_eq!(values(m.parametrization().u().unwrap()), u0, "eval pass {pass}: _u moved");
        assert_eq!(values(m.parametrization().v().unwrap()), v0, "eval pass {pass}: _v moved");
    }
    // (the parametrized weight alone, too)
    let _w = m.weight()?;
    assert_eq!(values(m.parametrization().u().unwrap()), u0, "eval weight(): _u moved");
    m.train(true);
    for (pass, (out, u, v)) in SN_TRAIN.iter().enumerate() {
        let got = m.forward(&x)?;
        check(&format!("train pass {pass}"), &values(&got), out.data, 1e-10);
        check(&format!("train pass {pass} _u"), &values(m.parametrization().u().unwrap()), u.data, 1e-10);
        check(&format!("train pass {pass} _v"), &values(m.parametrization().v().unwrap()), v.data, 1e-10);
    }
    Ok(())
}

// --- a re-entrant Parametrized::call ------------------------------------------------------------

/// Runs `f` on a thread and waits at most 20 s for it, so that a deadlock fails the test.
fn within_time<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (send, recv) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    recv.recv_timeout(Duration::from_secs(20)).expect("deadlocked (no answer within 20 s)")
}

#[test]
fn reentrant_parametrized_call_is_an_error_not_a_deadlock() {
    let outcome = within_time(|| -> Result<(String, bool, bool)> {
        let m = Arc::new(weight_norm(Linear::new(3, 2, true)?, "weight", Some(0))?);
        let x = Tensor::randn([4, 3], ())?;
        let inner = Arc::clone(&m);
        let x2 = x.clone();
        // forward from inside the module's own call
        let nested = m.call(move |lin| {
            let err = inner.forward(&x2).err().map(|e| e.to_string()).unwrap_or_default();
            // the parametrized tensor itself can still be computed
            let w_ok = inner.weight().is_ok();
            lin.forward(&x2).map(|_| (err, w_ok))
        })?;
        // and the module works normally afterwards (nothing left marked as running)
        let after = m.forward(&x).is_ok();
        Ok((nested.0, nested.1, after))
    });
    let (err, w_ok, after) = outcome.expect("the outer call");
    assert!(err.contains("re-entrant call"), "expected the re-entrancy error, got {err:?}");
    assert!(w_ok && after);
}

/// Two threads calling one module take turns (the lock still serialises them).
#[test]
fn parametrized_calls_from_two_threads_take_turns() {
    let ok = within_time(|| -> Result<bool> {
        let m = Arc::new(weight_norm(Linear::new(3, 2, true)?, "weight", Some(0))?);
        let x = Tensor::randn([4, 3], ())?;
        let want = m.forward(&x)?.to_f64_vec()?;
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (m, x) = (Arc::clone(&m), x.clone());
                std::thread::spawn(move || -> Result<Vec<f64>> {
                    let mut last = Vec::new();
                    for _ in 0..20 {
                        last = m.forward(&x)?.to_f64_vec()?;
                    }
                    Ok(last)
                })
            })
            .collect();
        let mut same = true;
        for h in handles {
            same &= h.join().expect("thread")? == want;
        }
        Ok(same)
    });
    assert!(ok.expect("calls"));
}

// --- load_state_dict: unexpected keys module by module -----------------------------------------

/// torch 2.15:
/// ```python
/// m = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1)))
/// sd = m.state_dict()
/// new = {"1.0.bogus": z, "0.weight": sd["0.weight"], "extra": z, "0.weight.x": z, "1.zzz": z,
///        "0.bias": sd["0.bias"], "0.foo": z, "1.0.weight": sd["1.0.weight"], "1": z}
/// m.load_state_dict(new)
/// ```
#[test]
fn unexpected_keys_are_listed_module_by_module() -> Result<()> {
    let mut m =
        Sequential::new().add(Linear::new(2, 3, true)?).add(Sequential::new().add(Linear::new(3, 1, true)?));
    let own = m.state_dict();
    let z = Tensor::zeros([1], ())?;
    let mut sd = StateDict::new();
    sd.insert("1.0.bogus", z.clone());
    sd.insert("0.weight", own.get("0.weight").unwrap().clone());
    sd.insert("extra", z.clone());
    sd.insert("0.weight.x", z.clone());
    sd.insert("1.zzz", z.clone());
    sd.insert("0.bias", own.get("0.bias").unwrap().clone());
    sd.insert("0.foo", z.clone());
    sd.insert("1.0.weight", own.get("1.0.weight").unwrap().clone());
    sd.insert("1", z);
    let err = m.load_state_dict(&sd, true).expect_err("strict loading fails").to_string();
    assert_eq!(
        err,
        "Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: \"1.0.bias\". \n\tUnexpected key(s) in state_dict: \"extra\", \"1\", \"0.weight.x\", \"0.foo\", \"1.zzz\", \"1.0.bogus\". "
    );
    let keys = m.load_state_dict(&sd, false)?;
    assert_eq!(keys.missing_keys, ["1.0.bias"]);
    assert_eq!(keys.unexpected_keys, ["extra", "1", "0.weight.x", "0.foo", "1.zzz", "1.0.bogus"]);
    Ok(())
}

/// A lazy module is parametrized only once materialized (torch 2.15 refuses its uninitialized
/// parameters with this message); after a forward, weight norm wraps the real weight.
#[test]
fn parametrizing_a_lazy_module_waits_for_its_first_forward() -> Result<()> {
    let err = weight_norm(LazyLinear::new(2, true)?, "weight", Some(0)).err().expect("refused").to_string();
    assert!(err.starts_with("Can't access the shape of an uninitialized parameter or buffer."), "{err}");
    let lazy = LazyLinear::new(2, true)?;
    lazy.forward(&Tensor::ones([1, 3], DType::F32)?)?;
    let wn = weight_norm(lazy, "weight", Some(0))?;
    assert_eq!(wn.weight()?.dims(), &[2, 3]);
    Ok(())
}
