//! Fractional max pooling, `AdaptiveLogSoftmaxWithLoss`, the lazy modules and `functional_call`
//! against PyTorch: the values, indices and gradients of `lazy_modules_and_fractional_pool_golden.rs` (written by
//! `nn/tests/make_lazy_modules_and_fractional_pool_golden.py`), state-dict names, materialization on the first forward
//! and on loading, and torch's error messages.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_nn::functional as F;
use oxtorch_nn::utils::{
    functional_call, functional_call_forward, functional_call_with, FunctionalCallOptions,
};
use oxtorch_nn::{
    AdaptiveLogSoftmaxWithLoss, ConvOptions, ConvTransposeOptions, Forward, FractionalMaxPool2d,
    FractionalMaxPool3d, Lazy, LazyBatchNorm1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyLinear, LazySpec, Linear, Member, MemberMut, Module,
    ModuleExt, Sequential, StateDict, Tanh,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

include!("lazy_modules_and_fractional_pool_golden.rs");

fn entry(name: &str) -> (&'static [usize], &'static [f64]) {
    TENSORS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, d, v)| (*d, *v))
        .unwrap_or_else(|| panic!("no golden tensor {name}"))
}

/// A golden tensor as float64.
fn g(name: &str) -> Tensor {
    let (dims, data) = entry(name);
    Tensor::from_vec(data.to_vec(), dims).unwrap()
}

/// A golden tensor as int64.
fn gi(name: &str) -> Tensor {
    let (dims, data) = entry(name);
    Tensor::from_vec(data.iter().map(|&v| v as i64).collect::<Vec<_>>(), dims).unwrap()
}

fn msg(name: &str) -> &'static str {
    MESSAGES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m).unwrap_or_else(|| panic!("no message {name}"))
}

/// The golden entries `prefix<key>` as a state dict (`num_batches_tracked` as int64).
fn state_dict(prefix: &str) -> StateDict {
    let mut sd = StateDict::new();
    for (n, _, _) in TENSORS.iter().filter(|(n, _, _)| n.starts_with(prefix)) {
        let key = &n[prefix.len()..];
        sd.insert(key, if key.ends_with("num_batches_tracked") { gi(n) } else { g(n) });
    }
    sd
}

/// torch's `allclose` with `rtol = atol = tol`.
fn close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

fn ints(t: &Tensor) -> Vec<i64> {
    t.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap()
}

fn assert_err<T>(what: &str, r: Result<T>) {
    let e = r.err().unwrap_or_else(|| panic!("{what}: no error")).to_string();
    assert!(e.contains(msg(what)), "{what}: got {e:?}, PyTorch {:?}", msg(what));
}

// --- fractional max pooling ---------------------------------------------------------------------

#[test]
fn fractional_max_pool_matches_torch() -> Result<()> {
    type Case =
        (&'static str, usize, &'static [usize], Option<&'static [usize]>, Option<&'static [f64]>, DType);
    let cases: [Case; 5] = [
        ("fmp2d_size", 2, &[2, 3], Some(&[4, 5]), None, DType::F64),
        ("fmp2d_ratio", 2, &[2], None, Some(&[0.5, 0.7]), DType::F64),
        ("fmp2d_f32", 2, &[3], Some(&[5, 6]), None, DType::F32),
        ("fmp3d_size", 3, &[2, 2, 3], Some(&[3, 4, 3]), None, DType::F64),
        ("fmp3d_ratio", 3, &[2], None, Some(&[0.5]), DType::F64),
    ];
    for (name, n, k, size, ratio, dtype) in cases {
        let tol = if dtype == DType::F32 { 1e-6 } else { 1e-12 };
        let x = g(&format!("{name}.x")).to_dtype(dtype)?.requires_grad_(true)?;
        let samples = g(&format!("{name}.samples")).to_dtype(dtype)?;
        let (out, idx) = if n == 2 {
            F::fractional_max_pool2d_with_indices(&x, k, size, ratio, Some(&samples))?
        } else {
            F::fractional_max_pool3d_with_indices(&x, k, size, ratio, Some(&samples))?
        };
        close(&format!("{name} out"), &out, &g(&format!("{name}.out")), tol);
        assert_eq!(idx.dtype(), DType::I64);
        assert_eq!(ints(&idx), ints(&gi(&format!("{name}.idx"))), "{name} indices");
        let cot = g(&format!("{name}.cot")).to_dtype(dtype)?;
        out.mul(&cot)?.sum_all()?.backward()?;
        close(&format!("{name} grad"), &x.grad().unwrap(), &g(&format!("{name}.grad")), tol);
        // The modules, with the samples as their buffer.
        let y = if n == 2 {
            FractionalMaxPool2d::new(k, size, ratio)?
                .with_random_samples(samples.clone())
                .forward(&x.detach())?
        } else {
            FractionalMaxPool3d::new(k, size, ratio)?
                .with_random_samples(samples.clone())
                .forward(&x.detach())?
        };
        close(&format!("{name} module"), &y, &g(&format!("{name}.out")), tol);
    }
    Ok(())
}

#[test]
fn fractional_max_pool_draws_samples_and_checks_like_torch() -> Result<()> {
    // Drawn windows: each output is the input at its index.
    let x = Tensor::randn([2, 3, 9, 8], DType::F64)?;
    let (out, idx) = F::fractional_max_pool2d_with_indices(&x, &[2], Some(&[4]), None, None)?;
    assert_eq!(out.dims(), &[2, 3, 4, 4]);
    let picked = x.reshape([2, 3, 72])?.gather(2, &idx.reshape([2, 3, 16])?)?;
    close("drawn", &picked, &out.reshape([2, 3, 16])?, 0.0);
    let m = FractionalMaxPool2d::new(&[2], None, Some(&[0.5]))?
        .with_random_samples(Tensor::rand([2, 3, 2], DType::F64)?);
    assert_eq!(m.state_dict().keys().collect::<Vec<_>>(), ["_random_samples"]);
    assert_eq!(m.forward(&x)?.dims(), &[2, 3, 4, 4]);

    let x4 = Tensor::randn([1, 1, 7, 9], DType::F32)?;
    let s4 = Tensor::rand([1, 1, 2], DType::F32)?;
    assert_err("fmp2d_too_large", F::fractional_max_pool2d(&x4, &[2, 3], Some(&[7, 5]), None, Some(&s4)));
    let s2 = Tensor::rand([1, 2, 2], DType::F32)?;
    assert_err("fmp2d_channels", F::fractional_max_pool2d(&x4, &[2], Some(&[3]), None, Some(&s2)));
    assert_err(
        "fmp2d_dtype",
        F::fractional_max_pool2d(&x4, &[2], Some(&[3]), None, Some(&s4.to_dtype(DType::F64)?)),
    );
    let x5 = Tensor::randn([2, 2, 1, 7, 9], DType::F32)?;
    assert_err(
        "fmp2d_rank",
        F::fractional_max_pool2d(&x5, &[2], Some(&[3]), None, Some(&Tensor::rand([2, 2, 2], DType::F32)?)),
    );
    let empty = Tensor::randn([2, 1, 0, 4], DType::F32)?;
    assert_err("fmp2d_empty", F::fractional_max_pool2d(&empty, &[2], Some(&[1, 1]), None, None));
    assert_err("fmp2d_none", F::fractional_max_pool2d(&x4, &[2], None, None, None));
    let x3 = Tensor::randn([1, 1, 4, 4, 4], DType::F32)?;
    let s3 = Tensor::rand([1, 1, 3], DType::F32)?;
    assert_err("fmp3d_too_large", F::fractional_max_pool3d(&x3, &[2], Some(&[3, 2, 2]), None, Some(&s3)));
    assert_err("FractionalMaxPool2d_ratio", FractionalMaxPool2d::new(&[2], None, Some(&[0.5, 1.5])));
    assert_err("FractionalMaxPool2d_none", FractionalMaxPool2d::new(&[2], None, None));
    assert_err("FractionalMaxPool2d_both", FractionalMaxPool2d::new(&[2], Some(&[3]), Some(&[0.5])));
    Ok(())
}

// --- AdaptiveLogSoftmaxWithLoss -----------------------------------------------------------------

#[test]
fn adaptive_log_softmax_matches_torch() -> Result<()> {
    for (tag, head_bias) in [("asm", false), ("asm_hb", true)] {
        let mut m = AdaptiveLogSoftmaxWithLoss::new(8, 20, &[5, 12], 2.0, head_bias)?;
        m.to(DType::F64)?;
        let sd = state_dict(&format!("{tag}.sd."));
        assert_eq!(m.state_dict().keys().collect::<Vec<_>>(), sd.keys().collect::<Vec<_>>(), "{tag} keys");
        m.load_state_dict(&sd, true)?;
        assert_eq!(m.tail[1].get(0).unwrap().type_name(), "Linear");
        assert_eq!(m.tail.type_name(), "ModuleList");

        let x = g(&format!("{tag}.x")).requires_grad_(true)?;
        let target = gi(&format!("{tag}.target"));
        let (out, loss) = m.forward(&x, &target)?;
        close(&format!("{tag} out"), &out, &g(&format!("{tag}.out")), 1e-12);
        close(&format!("{tag} loss"), &loss, &g(&format!("{tag}.loss")), 1e-12);
        out.mul(g(&format!("{tag}.cot")))?.sum_all()?.add(&loss)?.backward()?;
        close(&format!("{tag} grad x"), &x.grad().unwrap(), &g(&format!("{tag}.grad.x")), 1e-10);
        for (name, p) in m.named_parameters() {
            close(
                &format!("{tag} grad {name}"),
                &p.grad().unwrap(),
                &g(&format!("{tag}.grad.{name}")),
                1e-10,
            );
        }

        x.set_grad(None)?;
        let lp = m.log_prob(&x)?;
        close(&format!("{tag} log_prob"), &lp, &g(&format!("{tag}.log_prob")), 1e-12);
        lp.mul(g(&format!("{tag}.cot2")))?.sum_all()?.backward()?;
        close(
            &format!("{tag} log_prob grad"),
            &x.grad().unwrap(),
            &g(&format!("{tag}.log_prob_grad.x")),
            1e-10,
        );

        let xp = g(&format!("{tag}.xp"));
        assert_eq!(ints(&m.predict(&xp)?), ints(&gi(&format!("{tag}.predict"))), "{tag} predict");
        assert_eq!(ints(&m.predict(&xp)?), ints(&m.log_prob(&xp)?.argmax(Some(1), false)?));

        let (o1, l1) = m.forward(&x.detach().select(0, 3)?, &target.select(0, 3)?)?;
        assert_eq!(o1.rank(), 0);
        close(&format!("{tag} out1"), &o1, &g(&format!("{tag}.out1")), 1e-12);
        close(&format!("{tag} loss1"), &l1, &g(&format!("{tag}.loss1")), 1e-12);
    }
    Ok(())
}

#[test]
fn adaptive_log_softmax_checks_like_torch() -> Result<()> {
    assert_err("asm_cutoffs_empty", AdaptiveLogSoftmaxWithLoss::new(8, 20, &[], 4.0, false));
    assert_err("asm_cutoffs_order", AdaptiveLogSoftmaxWithLoss::new(8, 20, &[12, 5], 4.0, false));
    assert_err("asm_cutoffs_range", AdaptiveLogSoftmaxWithLoss::new(8, 20, &[5, 20], 4.0, false));
    let m = AdaptiveLogSoftmaxWithLoss::new(8, 20, &[5, 12], 2.0, false)?;
    let names: Vec<String> = m.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["head.weight", "tail.0.0.weight", "tail.0.1.weight", "tail.1.0.weight", "tail.1.1.weight"]
    );
    assert_eq!(m.tail[0].parameters()[1].dims(), &[7, 4]);
    assert_eq!(m.tail[1].parameters()[0].dims(), &[2, 8]);
    let x = Tensor::randn([3, 8], ())?;
    let t = |v: &[i64]| Tensor::from_slice(v, [v.len()]).unwrap();
    assert_err("asm_target_range", m.forward(&x, &t(&[0, 20, -1])));
    assert_err("asm_batch", m.forward(&x, &t(&[0, 1])));
    assert_err("asm_input_rank", m.forward(&Tensor::randn([3, 8, 1], ())?, &t(&[0, 1, 2])));
    assert_err("asm_input_rank0", m.forward(&x, &Tensor::from_slice(&[1i64], [])?));
    assert_err("asm_target_rank", m.forward(&x, &Tensor::zeros([3, 1], DType::I64)?));
    Ok(())
}

// --- lazy modules -------------------------------------------------------------------------------

/// A lazy module: placeholders under torch's names before the first forward; after it, the
/// concrete module of the input's size; with torch's weights loaded, torch's output; and a fresh
/// one loaded before any forward materializes from the checkpoint's shapes.
fn check_lazy<S: LazySpec>(
    tag: &str,
    make: impl Fn() -> Result<Lazy<S>>,
    concrete: &str,
    random_init: bool,
) -> Result<()> {
    let sd = state_dict(&format!("{tag}.sd."));
    let x = g(&format!("{tag}.x"));
    let want = g(&format!("{tag}.out"));
    let mut lazy = make()?;
    lazy.to(DType::F64)?;
    assert!(lazy.has_uninitialized_params());
    assert!(lazy.type_name().starts_with("Lazy"), "{tag}: {}", lazy.type_name());
    assert_eq!(
        lazy.state_dict().keys().collect::<Vec<_>>(),
        sd.keys().collect::<Vec<_>>(),
        "{tag} keys before"
    );
    let y = lazy.forward(&x)?;
    assert!(!lazy.has_uninitialized_params());
    assert_eq!(lazy.type_name(), concrete);
    assert_eq!(y.dims(), want.dims(), "{tag} output shape");
    let own = lazy.state_dict();
    assert_eq!(own.keys().collect::<Vec<_>>(), sd.keys().collect::<Vec<_>>(), "{tag} keys after");
    for (k, t) in sd.iter() {
        assert_eq!(own.get(k).unwrap().dims(), t.dims(), "{tag} {k} shape");
        if t.is_floating_point() {
            assert_eq!(own.get(k).unwrap().dtype(), DType::F64, "{tag} {k} dtype");
        }
    }
    if !random_init {
        // Norms: no random draw, so torch's output and statistics as they are.
        close(&format!("{tag} out"), &y, &want, 1e-12);
        for (k, t) in sd.iter() {
            close(&format!("{tag} {k}"), own.get(k).unwrap(), t, 1e-12);
        }
    }
    lazy.load_state_dict(&sd, true)?;
    lazy.eval();
    let y = lazy.forward(&x)?;
    if random_init {
        close(&format!("{tag} out after load"), &y, &want, 1e-12);
    }
    // Loaded before the first forward.
    let mut fresh = make()?;
    fresh.to(DType::F64)?;
    fresh.load_state_dict(&sd, true)?;
    assert!(!fresh.has_uninitialized_params(), "{tag}: load materializes");
    // torch keeps the lazy class until the first forward.
    assert!(fresh.type_name().starts_with("Lazy"), "{tag}: {}", fresh.type_name());
    fresh.eval();
    close(&format!("{tag} out loaded first"), &fresh.forward(&x)?, &y, 0.0);
    assert_eq!(fresh.type_name(), concrete);
    Ok(())
}

#[test]
fn lazy_modules_match_torch() -> Result<()> {
    check_lazy("lazy_linear", || LazyLinear::new(5, true), "Linear", true)?;
    let pad1 = ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() };
    check_lazy("lazy_conv2d", || LazyConv2d::new(4, &[3], pad1.clone()), "Conv2d", true)?;
    check_lazy("lazy_conv3d", || LazyConv3d::new(2, &[2], ConvOptions::default()), "Conv3d", true)?;
    let s2 = ConvTransposeOptions { stride: vec![2], ..Default::default() };
    check_lazy("lazy_convt1d", || LazyConvTranspose1d::new(3, &[2], s2.clone()), "ConvTranspose1d", true)?;
    check_lazy("lazy_bn1d", LazyBatchNorm1d::new, "BatchNorm1d", false)?;
    check_lazy(
        "lazy_in2d",
        || LazyInstanceNorm2d::new_with(1e-5, Some(0.1), true, true),
        "InstanceNorm2d",
        false,
    )?;
    Ok(())
}

#[test]
fn lazy_modules_initialise_and_nest_like_torch() -> Result<()> {
    // torch's Linear initialisation bounds, in the default dtype.
    let lazy = LazyLinear::new(3, true)?;
    lazy.forward(&Tensor::randn([2, 16], ())?)?;
    let w = lazy.module().unwrap().weight.clone();
    assert_eq!((w.dims(), w.dtype(), w.requires_grad()), (&[3usize, 16][..], DType::F32, true));
    assert!(w.to_f64_vec()?.iter().all(|v| v.abs() <= 0.25));
    // A frozen placeholder stays frozen.
    let frozen = LazyLinear::new(3, false)?;
    frozen.requires_grad_(false)?;
    frozen.forward(&Tensor::randn([2, 4], ())?)?;
    assert!(!frozen.module().unwrap().weight.requires_grad());
    // Inside a tree: loading materializes by the dotted names.
    let mut seq = Sequential::new().add(LazyLinear::new(5, true)?).add(Tanh {});
    seq.to(DType::F64)?;
    let mut sd = StateDict::new();
    for (k, t) in state_dict("lazy_linear.sd.").iter() {
        sd.insert(&format!("0.{k}"), t.clone());
    }
    seq.load_state_dict(&sd, true)?;
    assert_eq!(seq.get(0).unwrap().type_name(), "LazyLinear");
    let want = g("lazy_linear.out").tanh()?;
    close("nested", &seq.forward(&g("lazy_linear.x"))?, &want, 1e-12);
    assert_eq!(seq.get(0).unwrap().type_name(), "Linear");
    assert_err(
        "lazy_conv2d_rank",
        LazyConv2d::new(4, &[3], ConvOptions::default())?.forward(&Tensor::randn([3, 5], ())?),
    );
    Ok(())
}

// --- functional_call ----------------------------------------------------------------------------

fn mlp() -> Result<Sequential> {
    let mut m = Sequential::new().add(Linear::new(4, 6, true)?).add(Tanh {}).add(Linear::new(6, 3, true)?);
    m.to(DType::F64)?;
    m.load_state_dict(&state_dict("fc.own."), true)?;
    Ok(m)
}

#[test]
fn functional_call_matches_torch() -> Result<()> {
    let mut m = mlp()?;
    let own = m.parameters();
    let names = ["0.weight", "0.bias", "2.weight", "2.bias"];
    let params: Vec<(&str, Tensor)> =
        names.iter().map(|&n| (n, g(&format!("fc.p.{n}")).requires_grad_(true).unwrap())).collect();
    let x = g("fc.x").requires_grad_(true)?;
    let out = functional_call_forward(&mut m, params.iter().map(|(k, v)| (*k, v)), &x)?;
    close("fc out", &out, &g("fc.out"), 1e-12);
    out.mul(g("fc.cot"))?.sum_all()?.backward()?;
    close("fc grad x", &x.grad().unwrap(), &g("fc.grad.x"), 1e-12);
    for (n, p) in &params {
        close(&format!("fc grad {n}"), &p.grad().unwrap(), &g(&format!("fc.grad.{n}")), 1e-12);
    }
    // The module keeps its own tensors, untouched by the backward pass.
    for (p, q) in own.iter().zip(m.parameters()) {
        assert!(p.is_same(&q));
        assert!(q.grad().is_none());
    }
    for (k, t) in state_dict("fc.own.").iter() {
        close(&format!("fc own {k}"), m.state_dict().get(k).unwrap(), t, 0.0);
    }
    // Only some given: the others are the module's own.
    let partial = vec![("2.weight", params[2].1.clone()), ("2.bias", params[3].1.clone())];
    let y = functional_call(&mut m, partial.clone(), |m| m.forward(&x))?;
    close("fc partial", &y, &g("fc.out_partial"), 1e-12);
    let strict = FunctionalCallOptions { strict: true, ..Default::default() };
    assert_err("fc_strict_missing", functional_call_with(&mut m, partial.clone(), strict, |m| m.forward(&x)));
    let mut extra: Vec<(&str, Tensor)> = params.clone();
    extra.push(("3.weight", x.clone()));
    assert_err("fc_strict_unexpected", functional_call_with(&mut m, extra, strict, |m| m.forward(&x)));
    // Restored after an error and after a panic.
    let r: Result<()> =
        functional_call(&mut m, partial.clone(), |_| Err(oxtorch_tensor::Error::msg("inner")));
    assert!(r.is_err());
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let _ =
            functional_call(&mut m, partial.clone(), |_| -> Result<()> { panic!("inside functional_call") });
    }));
    assert!(panicked.is_err());
    for (p, q) in own.iter().zip(m.parameters()) {
        assert!(p.is_same(&q), "restored");
    }
    Ok(())
}

// --- review fixes -------------------------------------------------------------------------------

/// torch 2.15: `functional_call(LazyLinear(2), {weight: ones(2, 3), bias: zeros(2)}, ones(1, 3))`
/// is `[[3, 3]]`; the module is left lazy (torch leaves a broken `Linear`) and works afterwards.
#[test]
fn functional_call_on_a_lazy_module_runs_the_given_tensors() -> Result<()> {
    let x = Tensor::ones([1, 3], ())?;
    let (w, b) = (Tensor::ones([2, 3], ())?, Tensor::zeros([2], ())?);
    let mut lazy = LazyLinear::new(2, true)?;
    let y = functional_call_forward(&mut lazy, [("weight", &w), ("bias", &b)], &x)?;
    assert_eq!(y.dims(), [1, 2]);
    assert_eq!(y.to_f64_vec()?, vec![3.0, 3.0]);
    assert!(lazy.has_uninitialized_params());
    assert_eq!(lazy.type_name(), "LazyLinear");
    assert_eq!(lazy.state_dict().get("weight").unwrap().dims(), [0]);
    // Materializing while the slots hold the given tensors is refused (no placeholder can then
    // be put back into a concrete module).
    let r = functional_call(&mut lazy, [("weight", &w), ("bias", &b)], |m| {
        m.initialize_parameters(&x).map(|_| ())
    });
    assert!(r.is_err());
    assert!(lazy.has_uninitialized_params());
    assert_eq!(lazy.forward(&x)?.dims(), [1, 2]);
    assert_eq!(lazy.module().unwrap().weight.dims(), [2, 3]);
    assert_eq!(lazy.module().unwrap().bias.as_ref().unwrap().dims(), [2]);
    // Only some of the open members: an error naming the others, the module left as it was.
    let mut lazy = LazyLinear::new(2, true)?;
    let e = functional_call_forward(&mut lazy, [("weight", &w)], &x).unwrap_err().to_string();
    assert!(e.contains("'bias'"), "{e}");
    assert!(lazy.has_uninitialized_params());
    assert_eq!(lazy.state_dict().get("weight").unwrap().dims(), [0]);
    lazy.forward(&x)?;
    assert_eq!(lazy.module().unwrap().weight.dims(), [2, 3]);
    Ok(())
}

/// torch 2.15: hidden sizes by Python's float floor division (`11 // 1.1 == 9.0`), and its
/// errors for a zero, NaN or negative `div_value`.
#[test]
fn adaptive_log_softmax_hidden_sizes_are_python_floor_division() -> Result<()> {
    let a = AdaptiveLogSoftmaxWithLoss::new(11, 20, &[5, 12], 1.1, false)?;
    let sd = a.state_dict();
    let shapes: Vec<Vec<usize>> = sd.iter().map(|(_, t)| t.dims().to_vec()).collect();
    assert_eq!(shapes, vec![vec![7, 11], vec![9, 11], vec![7, 9], vec![9, 11], vec![8, 9]]);
    let a = AdaptiveLogSoftmaxWithLoss::new(8, 20, &[5, 12], 0.5, false)?;
    let shapes: Vec<Vec<usize>> = a.state_dict().iter().map(|(_, t)| t.dims().to_vec()).collect();
    assert_eq!(shapes, vec![vec![7, 8], vec![16, 8], vec![7, 16], vec![32, 8], vec![8, 32]]);
    for (dv, want) in [
        (0.0, "float floor division by zero"),
        (-2.0, "Trying to create tensor with negative dimension -4: [-4, 8]"),
        (f64::NAN, "cannot convert float NaN to integer"),
        (1e200, "Numerical result out of range"),
    ] {
        let e =
            AdaptiveLogSoftmaxWithLoss::new(8, 20, &[5, 12], dv, false).err().expect("an error").to_string();
        assert!(e.contains(want), "{dv}: {e}");
    }
    Ok(())
}

/// Huge kernel or output sizes are torch's "too large" error, not an overflow.
#[test]
fn fractional_max_pool_huge_sizes_do_not_overflow() -> Result<()> {
    let x = Tensor::randn([1, 1, 5, 5], ())?;
    for (k, o) in [([usize::MAX, 2], [2, 2]), ([2, 2], [usize::MAX, 2]), ([2, usize::MAX], [usize::MAX, 2])] {
        let e = F::fractional_max_pool2d(&x, &k, Some(&o), None, None).unwrap_err().to_string();
        assert!(e.contains("too large relative to input height"), "{k:?} {o:?}: {e}");
    }
    let x3 = Tensor::randn([1, 1, 5, 5, 5], ())?;
    let e =
        F::fractional_max_pool3d(&x3, &[usize::MAX, 2, 2], Some(&[2]), None, None).unwrap_err().to_string();
    assert!(e.contains(&format!("pool time {} too large relative to input time 5", usize::MAX)), "{e}");
    let e =
        F::fractional_max_pool3d(&x3, &[2], Some(&[2, 2, usize::MAX]), None, None).unwrap_err().to_string();
    assert!(e.contains("pool width 2 too large relative to input width 5"), "{e}");
    Ok(())
}

/// torch 2.15: the last NaN of a window is taken (`val > max || isnan(val)`), ties otherwise go
/// to the first maximum; the gradient goes to the taken position.
#[test]
fn fractional_max_pool_takes_the_last_nan() -> Result<()> {
    let x = Tensor::from_vec(vec![f64::NAN, 1.0, f64::NAN, 0.0], [1, 1, 2, 2])?.requires_grad_(true)?;
    let (v, i) = F::fractional_max_pool2d_with_indices(&x, &[2], Some(&[1]), None, None)?;
    assert!(v.to_f64_vec()?[0].is_nan());
    assert_eq!(ints(&i), vec![2]);
    v.sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, vec![0.0, 0.0, 1.0, 0.0]);
    let y = Tensor::from_vec(vec![1.0f32, 1.0, 0.0, 1.0], [1, 2, 2])?;
    let (v, i) = F::fractional_max_pool2d_with_indices(&y, &[2], Some(&[1]), None, None)?;
    assert_eq!((v.to_f64_vec()?, ints(&i)), (vec![1.0], vec![0]));
    // 3-D: the one window of a 3x3x3 input is its last 2x2x2 corner (flat 13, 14, 16, 17, 22, ...).
    let mut data = vec![0.0f64; 27];
    for p in [13, 17, 23] {
        data[p] = f64::NAN;
    }
    data[26] = 5.0;
    let z = Tensor::from_vec(data, [1, 1, 3, 3, 3])?;
    let (_, i) = F::fractional_max_pool3d_with_indices(&z, &[2], Some(&[1]), None, None)?;
    assert_eq!(ints(&i), vec![23]);
    Ok(())
}

/// torch 2.15: the lazy instance norms default to `affine` and running statistics, and read
/// `input.shape[1]` also from an unbatched input (then torch's mismatch error).
#[test]
fn lazy_instance_norm_reads_dim_one_like_torch() -> Result<()> {
    let m = LazyInstanceNorm1d::new()?;
    assert_eq!(
        m.state_dict().keys().collect::<Vec<_>>(),
        ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    );
    let e = m.forward(&Tensor::randn([3, 5], ())?).unwrap_err().to_string();
    assert!(e.contains("expected input's size at dim=0 to match num_features (5), but got: 3."), "{e}");
    let m = LazyInstanceNorm1d::new()?;
    assert_eq!(m.forward(&Tensor::randn([2, 3, 5], ())?)?.dims(), [2, 3, 5]);
    assert_eq!(m.state_dict().get("running_mean").unwrap().dims(), [3]);
    Ok(())
}

/// A module whose visit loads a state dict into a lazy module of its own (a load inside a load).
struct LoadsWhenVisited {
    inner: std::sync::Mutex<LazyLinear>,
    sd: StateDict,
}

impl Module for LoadsWhenVisited {
    fn visit<'m>(&'m self, _f: &mut dyn FnMut(&str, Member<'m>)) {
        let mut inner = self.inner.lock().unwrap();
        inner.load_state_dict(&self.sd, true).unwrap();
    }
    fn visit_mut(&mut self, _f: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        "LoadsWhenVisited"
    }
}

struct Pair {
    a: LoadsWhenVisited,
    b: LazyLinear,
}

impl Module for Pair {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f("a", Member::Child(&self.a));
        f("b", Member::Child(&self.b));
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("a", MemberMut::Child(&mut self.a));
        f("b", MemberMut::Child(&mut self.b));
    }
    fn type_name(&self) -> &'static str {
        "Pair"
    }
}

/// A load run while another is under way leaves the outer one's state in place.
#[test]
fn nested_loads_keep_the_outer_state() -> Result<()> {
    let mut inner_sd = StateDict::new();
    inner_sd.insert("weight", Tensor::zeros([2, 4], ())?);
    inner_sd.insert("bias", Tensor::zeros([2], ())?);
    let mut pair = Pair {
        a: LoadsWhenVisited { inner: std::sync::Mutex::new(LazyLinear::new(2, true)?), sd: inner_sd },
        b: LazyLinear::new(3, true)?,
    };
    let mut sd = StateDict::new();
    sd.insert("b.weight", Tensor::ones([3, 5], ())?);
    sd.insert("b.bias", Tensor::ones([3], ())?);
    pair.load_state_dict(&sd, true)?;
    assert_eq!(pair.b.module().unwrap().weight.dims(), [3, 5]);
    assert_eq!(pair.b.module().unwrap().weight.to_f64_vec()?, vec![1.0; 15]);
    assert_eq!(pair.a.inner.lock().unwrap().module().unwrap().weight.dims(), [2, 4]);
    Ok(())
}

/// torch 2.15: `LazyLinear(2).load_state_dict({'bias': zeros(2)}, strict=False)` reports
/// `missing_keys=['weight']`, leaves the module lazy and loads the bias (its shape
/// `[out_features]` is known); strict, the missing key is the error (the bias still loaded).
/// (torch's forward then fails with an `AttributeError`; ours materializes from the input and
/// keeps the loaded bias.)
#[test]
fn partial_checkpoint_into_a_lazy_module() -> Result<()> {
    let mut sd = StateDict::new();
    sd.insert("bias", Tensor::zeros([2], ())?);
    let mut m = LazyLinear::new(2, true)?;
    let keys = m.load_state_dict(&sd, false)?;
    assert_eq!(keys.missing_keys, vec!["weight".to_string()]);
    assert!(keys.unexpected_keys.is_empty());
    assert!(m.has_uninitialized_params());
    assert_eq!(m.type_name(), "LazyLinear");
    assert_eq!(m.state_dict().get("weight").unwrap().dims(), [0]);
    assert_eq!(m.state_dict().get("bias").unwrap().to_f64_vec()?, vec![0.0, 0.0]);
    let e = m.load_state_dict(&sd, true).unwrap_err().to_string();
    assert!(e.contains("Error(s) in loading state_dict for LazyLinear"), "{e}");
    assert!(e.contains("Missing key(s) in state_dict: \"weight\"."), "{e}");
    assert!(!e.contains("size mismatch"), "{e}");
    // strict, as torch: the entries that fit are copied before the error.
    let mut strict = LazyLinear::new(2, true)?;
    let mut five_six = StateDict::new();
    five_six.insert("bias", Tensor::from_vec(vec![5.0f32, 6.0], [2])?);
    assert!(strict.load_state_dict(&five_six, true).is_err());
    assert_eq!(strict.state_dict().get("bias").unwrap().to_f64_vec()?, vec![5.0, 6.0]);
    assert_eq!(m.forward(&Tensor::ones([1, 3], ())?)?.dims(), [1, 2]);
    assert_eq!(m.module().unwrap().bias.as_ref().unwrap().to_f64_vec()?, vec![0.0, 0.0]);
    // A module that is not lazy still reports the mismatch of an empty tensor.
    let mut empty = Linear::new(3, 0, true)?;
    let e = empty.load_state_dict(&sd, false).unwrap_err().to_string();
    assert!(e.contains("size mismatch for bias"), "{e}");
    // A bias of another shape than `[out_features]` is a size mismatch (torch takes it as it
    // is and fails later).
    let mut m = LazyLinear::new(2, true)?;
    let mut bad = StateDict::new();
    bad.insert("bias", Tensor::zeros([3], ())?);
    let e = m.load_state_dict(&bad, false).unwrap_err().to_string();
    assert!(
        e.contains("size mismatch for bias: copying a param with shape torch.Size([3]) from checkpoint, the shape in current model is torch.Size([2])."),
        "{e}"
    );
    Ok(())
}

/// torch 2.15: a checkpoint split in shards, loaded one at a time into a lazy module.
/// `LazyLinear(2)` given `{bias: [5, 6]}` (`strict=False`) reports `missing_keys=['weight']`
/// and keeps the bias; `{weight: ones(2, 3)}` then reports `missing_keys=['bias']`, and the
/// forward of `ones(1, 3)` is `[[8, 9]]`. The same inside a `Sequential`, for `LazyConv2d`,
/// after `double()` between the shards, and through `functional_call` giving only the weight.
#[test]
fn sharded_checkpoint_into_a_lazy_module_keeps_every_shard() -> Result<()> {
    let x = Tensor::ones([1, 3], ())?;
    let five_six = || Tensor::from_vec(vec![5.0f32, 6.0], [2]);
    let mut bias_sd = StateDict::new();
    bias_sd.insert("bias", five_six()?);
    let mut weight_sd = StateDict::new();
    weight_sd.insert("weight", Tensor::ones([2, 3], ())?);

    let mut m = LazyLinear::new(2, true)?;
    let keys = m.load_state_dict(&bias_sd, false)?;
    assert_eq!(keys.missing_keys, vec!["weight".to_string()]);
    assert!(keys.unexpected_keys.is_empty());
    assert!(m.has_uninitialized_params());
    let sd = m.state_dict();
    assert_eq!(sd.get("weight").unwrap().dims(), [0]);
    assert_eq!(sd.get("bias").unwrap().to_f64_vec()?, vec![5.0, 6.0]);
    let params = m.named_parameters();
    let loaded_bias = params.iter().find(|(n, _)| n == "bias").unwrap().1.clone();
    assert!(loaded_bias.requires_grad());
    let keys = m.load_state_dict(&weight_sd, false)?;
    assert_eq!(keys.missing_keys, vec!["bias".to_string()]);
    assert!(keys.unexpected_keys.is_empty());
    assert!(!m.has_uninitialized_params());
    assert_eq!(m.type_name(), "LazyLinear");
    let y = m.forward(&x)?;
    assert_eq!(y.dims(), [1, 2]);
    assert_eq!(y.to_f64_vec()?, vec![8.0, 9.0]);
    assert_eq!(m.type_name(), "Linear");
    // The materialized module holds the very tensor the first shard filled (an optimizer built
    // over it in between trains the module's bias).
    let bias = m.module().unwrap().bias.clone().unwrap();
    assert!(bias.is_same(&loaded_bias));
    assert!(bias.requires_grad());

    // A forward after the first shard alone materializes from the input and keeps the bias.
    let mut m = LazyLinear::new(2, true)?;
    m.load_state_dict(&bias_sd, false)?;
    assert_eq!(m.forward(&Tensor::zeros([1, 3], ())?)?.to_f64_vec()?, vec![5.0, 6.0]);
    assert_eq!(m.module().unwrap().weight.dims(), [2, 3]);

    // In a container, under the dotted names.
    let mut seq = Sequential::new().add(LazyLinear::new(2, true)?);
    let mut sd = StateDict::new();
    sd.insert("0.bias", five_six()?);
    assert_eq!(seq.load_state_dict(&sd, false)?.missing_keys, vec!["0.weight".to_string()]);
    let mut sd = StateDict::new();
    sd.insert("0.weight", Tensor::ones([2, 3], ())?);
    assert_eq!(seq.load_state_dict(&sd, false)?.missing_keys, vec!["0.bias".to_string()]);
    assert_eq!(seq.forward(&x)?.to_f64_vec()?, vec![8.0, 9.0]);

    // A convolution's bias (`[out_channels]`).
    let mut c = LazyConv2d::new(2, &[1], ConvOptions::default())?;
    assert_eq!(c.load_state_dict(&bias_sd, false)?.missing_keys, vec!["weight".to_string()]);
    let mut sd = StateDict::new();
    sd.insert("weight", Tensor::ones([2, 3, 1, 1], ())?);
    assert_eq!(c.load_state_dict(&sd, false)?.missing_keys, vec!["bias".to_string()]);
    let y = c.forward(&Tensor::ones([1, 3, 1, 1], ())?)?;
    assert_eq!(y.dims(), [1, 2, 1, 1]);
    assert_eq!(y.to_f64_vec()?, vec![8.0, 9.0]);

    // `double()` between the shards converts the loaded bias with the placeholders.
    let mut m = LazyLinear::new(2, true)?;
    m.load_state_dict(&bias_sd, false)?;
    m.to(DType::F64)?;
    assert_eq!(m.state_dict().get("bias").unwrap().dtype(), DType::F64);
    m.load_state_dict(&weight_sd, false)?;
    let y = m.forward(&x.to(DType::F64)?)?;
    assert_eq!(y.dtype(), DType::F64);
    assert_eq!(y.to_f64_vec()?, vec![8.0, 9.0]);

    // torch 2.15: `functional_call` giving only the weight runs the loaded bias (`[[8, 9]]`).
    let mut m = LazyLinear::new(2, true)?;
    m.load_state_dict(&bias_sd, false)?;
    let w = Tensor::ones([2, 3], ())?;
    assert_eq!(functional_call_forward(&mut m, [("weight", &w)], &x)?.to_f64_vec()?, vec![8.0, 9.0]);
    assert!(m.has_uninitialized_params());
    assert_eq!(m.state_dict().get("weight").unwrap().dims(), [0]);
    assert_eq!(m.state_dict().get("bias").unwrap().to_f64_vec()?, vec![5.0, 6.0]);
    Ok(())
}

/// torch 2.15: a lazy module materialized by a load keeps its lazy class (and the load errors
/// name it) until its first forward.
#[test]
fn loaded_lazy_module_keeps_its_lazy_name_until_forward() -> Result<()> {
    let mut m = LazyLinear::new(2, true)?;
    let mut sd = StateDict::new();
    sd.insert("weight", Tensor::zeros([2, 3], ())?);
    sd.insert("bias", Tensor::zeros([2], ())?);
    m.load_state_dict(&sd, true)?;
    assert!(!m.has_uninitialized_params());
    assert_eq!(m.type_name(), "LazyLinear");
    let mut bad = StateDict::new();
    bad.insert("weight", Tensor::zeros([2, 4], ())?);
    bad.insert("bias", Tensor::zeros([2], ())?);
    let e = m.load_state_dict(&bad, true).unwrap_err().to_string();
    assert!(e.contains("Error(s) in loading state_dict for LazyLinear:\n\tsize mismatch for weight"), "{e}");
    m.forward(&Tensor::ones([1, 3], ())?)?;
    assert_eq!(m.type_name(), "Linear");
    Ok(())
}
