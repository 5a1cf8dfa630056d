//! torch's variants of the module API: `named_parameters` / `named_buffers` with `prefix`,
//! `recurse` and `remove_duplicate`, `parameters(recurse)`, `state_dict(prefix, keep_vars)`,
//! `load_state_dict(..., assign=True)`, `to_empty`, `skip_init`; optimizers' `step(closure)`; and
//! `nn.init` with an explicit generator. Values from PyTorch 2.15 (nn/tests/make_module_api_variants_golden.py).

use oxtorch_nn::optim::{LbfgsOptions, Optimizer, SgdOptions, LBFGS, SGD};
use oxtorch_nn::{
    init, BatchNorm, Buffer, Embedding, Forward, Linear, Module, ModuleExt, NonPersistentBuffer, StateDict,
};
use oxtorch_tensor::{DType, Device, Error, Generator, Result, Tensor};

use super::golden_case::{assert_close, err, float64, T};

include!("module_api_variants_golden.rs");

/// The golden generator's `Tied`: an own parameter and buffers, an embedding whose weight is also
/// the head's, a batch norm whose running variance is its running mean.
#[derive(Module)]
struct Tied {
    scale: Tensor,
    embed: Embedding,
    head: Linear,
    buf: Buffer,
    np: NonPersistentBuffer,
    bn: BatchNorm,
}

fn tied() -> Result<Tied> {
    let embed = Embedding::new(10, 4, None)?;
    let mut head = Linear::new(4, 10, true)?;
    head.weight = embed.weight.clone();
    let mut bn = BatchNorm::new_1d(3)?;
    bn.running_var = bn.running_mean.clone();
    Ok(Tied {
        scale: Tensor::ones([2], ())?.requires_grad_(true)?,
        embed,
        head,
        buf: Buffer(Tensor::ones([2], ())?),
        np: NonPersistentBuffer(Tensor::zeros([1], ())?),
        bn,
    })
}

fn names(pairs: Vec<(String, Tensor)>) -> Vec<String> {
    pairs.into_iter().map(|(n, _)| n).collect()
}

/// Key lists with a prefix, without recursion and with the duplicates of tied tensors, as torch's.
#[test]
fn named_members_with_prefix_recurse_and_duplicates() -> Result<()> {
    let m = tied()?;
    assert_eq!(names(m.named_parameters()), PARAMS);
    assert_eq!(names(m.named_parameters_with("", true, true)), PARAMS);
    assert_eq!(names(m.named_parameters_with("model", true, false)), PARAMS_ALL);
    assert_eq!(names(m.named_parameters_with("model", false, true)), PARAMS_OWN);
    assert_eq!(names(m.named_buffers()), BUFFERS);
    assert_eq!(names(m.named_buffers_with("p", true, false)), BUFFERS_ALL);
    assert_eq!(names(m.named_buffers_with("", false, true)), BUFFERS_OWN);
    assert_eq!(m.parameters_with(false).len(), NUM_PARAMS_OWN);
    assert_eq!(m.parameters_with(true).len(), NUM_PARAMS);
    assert!(m.parameters_with(false)[0].is_same(&m.scale));
    // the duplicate names list the same tensor
    let all = m.named_parameters_with("", true, false);
    let weight = |k: &str| all.iter().find(|(n, _)| n == k).map(|(_, t)| t.clone()).unwrap();
    assert!(weight("embed.weight").is_same(&weight("head.weight")));
    Ok(())
}

/// `state_dict(prefix)` prefixes every key as given (no dot added); `keep_vars` gives the module's
/// own tensors, the plain call detached ones sharing their storage.
#[test]
fn state_dict_prefix_and_keep_vars() -> Result<()> {
    let m = tied()?;
    let sd = m.state_dict_with("pre.", false);
    assert_eq!(sd.keys().collect::<Vec<_>>(), STATE_DICT_PREFIXED);
    let kept = m.state_dict_with("", true);
    assert!(kept.get("embed.weight").unwrap().is_same(&m.embed.weight));
    assert!(kept.get("embed.weight").unwrap().requires_grad());
    let plain = m.state_dict();
    let w = plain.get("embed.weight").unwrap();
    assert!(!w.is_same(&m.embed.weight) && !w.requires_grad());
    oxtorch_autograd::no_grad(|| m.embed.weight.fill_(2.5).map(|_| ()))?;
    assert!(w.to_vec::<f32>()?.iter().all(|&v| v == 2.5), "the detached entry shares the storage");
    assert_eq!(plain.keys().collect::<Vec<_>>(), m.state_dict_with("", false).keys().collect::<Vec<_>>());
    Ok(())
}

fn linear_sd(weight: Tensor, bias: Tensor) -> StateDict {
    let mut sd = StateDict::new();
    sd.insert("weight", weight);
    sd.insert("bias", bias);
    sd
}

/// `assign=True`: the module takes the entries (their values, dtypes and storage) and keeps its
/// parameters' `requires_grad`; without it, entries are copied and cast.
#[test]
fn load_state_dict_assign() -> Result<()> {
    let w = Tensor::from_vec(ASSIGN_W.data.iter().map(|&v| v as f32).collect::<Vec<_>>(), ASSIGN_W.dims)?;
    let b = float64(&ASSIGN_B);
    let mut lin = Linear::new(2, 3, true)?;
    let keys = lin.load_state_dict_with(&linear_sd(w.clone(), b.clone()), true, true)?;
    assert!(keys.missing_keys.is_empty() && keys.unexpected_keys.is_empty());
    let bias = lin.bias.clone().unwrap();
    assert_eq!(format!("torch.{}", lin.weight.dtype().name()), ASSIGN_W_DTYPE);
    assert_eq!(format!("torch.{}", bias.dtype().name()), ASSIGN_B_DTYPE);
    assert_close("bias", &bias, &ASSIGN_B, 0.0);
    assert_eq!(lin.weight.to_f64_vec()?, ASSIGN_W.data);
    assert_eq!(lin.weight.requires_grad(), ASSIGN_REQUIRES_GRAD);
    assert_eq!(bias.requires_grad(), ASSIGN_REQUIRES_GRAD);
    // (a new leaf sharing the entry's storage: the entry itself does not require grad)
    assert!(!lin.weight.is_same(&w) && !w.requires_grad());
    oxtorch_autograd::no_grad(|| w.fill_(7.0).map(|_| ()))?;
    assert!(lin.weight.to_vec::<f32>()?.iter().all(|&v| v == 7.0), "the weight shares the entry's storage");

    // A frozen weight stays frozen (torch sets the module's flag on what it assigns).
    let mut lin = Linear::new(2, 3, true)?;
    lin.weight.requires_grad_(false)?;
    let src = Tensor::from_vec(vec![1f32; 6], [3, 2])?.requires_grad_(true)?;
    lin.load_state_dict_with(&linear_sd(src.clone(), Tensor::zeros([3], ())?), true, true)?;
    assert_eq!(lin.weight.requires_grad(), FROZEN_W_REQUIRES_GRAD);
    assert_eq!(lin.bias.as_ref().unwrap().requires_grad(), FROZEN_B_REQUIRES_GRAD);
    // A parameter-like entry (a leaf that requires grad, torch's `nn.Parameter`) is taken itself.
    assert!(lin.weight.is_same(&src));

    // Without assign the module's tensors stay and take the values, cast to their dtype.
    let mut lin = Linear::new(2, 3, true)?;
    let before = lin.weight.clone();
    lin.load_state_dict_with(&linear_sd(float64(&ASSIGN_W), float64(&ASSIGN_B)), true, false)?;
    assert!(lin.weight.is_same(&before));
    assert_eq!(lin.weight.dtype(), DType::F32);
    assert_eq!(lin.bias.as_ref().unwrap().dtype(), DType::F32);
    Ok(())
}

/// Buffers become the entries themselves; parameters shared through `keep_vars` stay shared.
#[test]
fn load_state_dict_assign_buffers_and_shared_parameters() -> Result<()> {
    let mut bn = BatchNorm::new_1d(2)?;
    let mean = Tensor::from_vec(vec![1f32, 2.0], [2])?;
    let mut sd = StateDict::new();
    sd.insert("weight", Tensor::ones([2], ())?);
    sd.insert("bias", Tensor::zeros([2], ())?);
    sd.insert("running_mean", mean.clone());
    sd.insert("running_var", Tensor::ones([2], ())?);
    sd.insert("num_batches_tracked", Tensor::from_vec(vec![3i64], Vec::<usize>::new())?);
    bn.load_state_dict_with(&sd, true, true)?;
    assert_eq!(bn.running_mean.as_ref().unwrap().is_same(&mean), BUFFER_IS_ENTRY);
    assert_eq!(bn.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 3);
    assert!(bn.weight.as_ref().unwrap().requires_grad());

    let source = Linear::new(2, 3, true)?;
    let mut target = Linear::new(2, 3, true)?;
    target.load_state_dict_with(&source.state_dict_with("", true), true, true)?;
    assert!(target.weight.is_same(&source.weight));
    assert!(target.bias.as_ref().unwrap().is_same(source.bias.as_ref().unwrap()));

    // tied parameters given separate entries become separate tensors, as torch's
    let mut m = tied()?;
    let sd = m.state_dict();
    let mut fresh = StateDict::new();
    for (k, t) in sd.iter() {
        fresh.insert(k, t.copy()?);
    }
    m.load_state_dict_with(&fresh, true, true)?;
    assert!(!m.embed.weight.is_same(&m.head.weight));
    Ok(())
}

/// torch's errors with `assign`: a size mismatch (nothing of the wrong shape is assigned), an
/// integer entry for a parameter that requires grad, missing keys with `strict`.
#[test]
fn load_state_dict_assign_errors() -> Result<()> {
    let mut lin = Linear::new(2, 3, true)?;
    let before = lin.weight.clone();
    let bad = linear_sd(Tensor::ones([2, 2], ())?, Tensor::zeros([3], ())?);
    assert_eq!(err(lin.load_state_dict_with(&bad, true, true)), ASSIGN_MISMATCH);
    assert!(lin.weight.is_same(&before));
    let ints = Tensor::from_vec(vec![1i64; 6], [3, 2])?;
    let e = err(lin.load_state_dict_with(&linear_sd(ints, Tensor::zeros([3], ())?), true, true));
    assert!(e.contains("floating point"), "{e}");
    let mut sd = StateDict::new();
    sd.insert("weight", Tensor::zeros([3, 2], ())?);
    let e = err(lin.load_state_dict_with(&sd, true, true));
    let want = "Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: \"bias\". ";
    assert_eq!(e, want);
    // (as torch: the entries that fit are assigned before the error is reported)
    assert!(lin.weight.to_vec::<f32>()?.iter().all(|&v| v == 0.0));
    assert!(lin.weight.requires_grad());
    Ok(())
}

/// `to_empty`: new tensors of zeros of the same shapes and dtypes, `requires_grad` and ties kept.
#[test]
fn to_empty_replaces_every_tensor() -> Result<()> {
    let mut m = tied()?;
    let before = m.embed.weight.clone();
    m.head.forward(&Tensor::ones([1, 4], ())?)?.sum_all()?.backward()?;
    m.to_empty(Device::Cpu)?;
    assert!(!m.embed.weight.is_same(&before));
    assert!(m.embed.weight.is_same(&m.head.weight), "ties are kept");
    assert!(m.bn.running_mean.as_ref().unwrap().is_same(m.bn.running_var.as_ref().unwrap()));
    for (name, t) in m.named_parameters() {
        assert!(t.to_f64_vec()?.iter().all(|&v| v == 0.0), "{name}");
        assert!(t.requires_grad(), "{name}");
    }
    for (name, t) in m.named_buffers() {
        assert!(t.to_f64_vec()?.iter().all(|&v| v == 0.0), "{name}");
        assert!(!t.requires_grad(), "{name}");
    }
    assert_eq!(m.bn.num_batches_tracked.as_ref().unwrap().dtype(), DType::I64);
    let g = m.embed.weight.grad().expect("the gradient is replaced alike");
    assert_eq!(g.dims(), [10, 4]);
    assert!(g.to_f64_vec()?.iter().all(|&v| v == 0.0));
    assert_eq!(m.parameters().len(), NUM_PARAMS);
    Ok(())
}

/// `skip_init`: the constructed module with zeros everywhere (torch's values are unspecified).
#[test]
fn skip_init_zeroes_the_module() -> Result<()> {
    let lin = oxtorch_nn::skip_init(|| Linear::new(3, 2, true))?;
    assert_eq!(lin.weight.dims(), [2, 3]);
    assert!(lin.weight.requires_grad());
    assert!(lin.weight.to_f64_vec()?.iter().all(|&v| v == 0.0));
    assert!(lin.bias.as_ref().unwrap().to_f64_vec()?.iter().all(|&v| v == 0.0));
    let failed = oxtorch_nn::skip_init(|| -> Result<Linear> { Err(Error::msg("construction failed")) });
    assert_eq!(failed.err().map(|e| e.to_string()).as_deref(), Some("construction failed"));
    Ok(())
}

fn sgd_model() -> Result<Linear> {
    let mut m = Linear::new(3, 2, true)?;
    m.weight = float64(&SGD_W).requires_grad_(true)?;
    m.bias = Some(float64(&SGD_B).requires_grad_(true)?);
    Ok(m)
}

fn mse(m: &Linear) -> Result<Tensor> {
    oxtorch_nn::loss::mse_loss(&m.forward(&float64(&SGD_X))?, &float64(&SGD_Y), "mean")
}

/// `step(closure)` returns the closure's loss and updates as torch's; it matches a plain step.
#[test]
fn step_with_closure_matches_torch_and_plain_step() -> Result<()> {
    let opts = SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() };
    let m = sgd_model()?;
    let mut opt = SGD::new(m.parameters(), opts)?;
    let params = m.parameters();
    for want in SGD_LOSSES {
        let mut closure = || -> Result<Tensor> {
            params.iter().try_for_each(|p| p.set_grad(None))?;
            let loss = mse(&m)?;
            loss.backward()?;
            Ok(loss)
        };
        let loss = opt.step_with_closure(&mut closure)?.expect("the closure's loss");
        let got = loss.item::<f64>()?;
        assert!((got - want).abs() <= 1e-12 * (1.0 + want.abs()), "loss {got}, PyTorch {want}");
    }
    assert_close("weight", &m.weight, &SGD_W_AFTER, 1e-12);
    assert_close("bias", m.bias.as_ref().unwrap(), &SGD_B_AFTER, 1e-12);

    // The same two steps without a closure give the same bits.
    let plain = sgd_model()?;
    let mut opt = SGD::new(plain.parameters(), opts)?;
    for _ in 0..2 {
        opt.zero_grad()?;
        mse(&plain)?.backward()?;
        opt.step()?;
    }
    assert_eq!(plain.weight.to_f64_vec()?, m.weight.to_f64_vec()?);
    assert_eq!(plain.bias.as_ref().unwrap().to_f64_vec()?, m.bias.as_ref().unwrap().to_f64_vec()?);
    Ok(())
}

/// The closure runs with gradients enabled (torch's `enable_grad`), and its error leaves the
/// parameters as they were.
#[test]
fn step_with_closure_enables_grad_and_reports_errors() -> Result<()> {
    let m = sgd_model()?;
    let mut opt = SGD::new(m.parameters(), SgdOptions { lr: 0.1, ..Default::default() })?;
    let loss = oxtorch_autograd::no_grad(|| {
        opt.step_with_closure(&mut || {
            let loss = mse(&m)?;
            loss.backward()?;
            Ok(loss)
        })
    })?;
    assert!(loss.unwrap().requires_grad());
    assert_ne!(m.weight.to_f64_vec()?, SGD_W.data, "the step ran");
    let w = m.weight.to_f64_vec()?;
    let e = err(opt.step_with_closure(&mut || Err(Error::msg("closure failed"))));
    assert!(e.contains("closure failed"), "{e}");
    assert_eq!(m.weight.to_f64_vec()?, w);
    Ok(())
}

/// LBFGS keeps its own closure-driven step behind the trait method (needs the `step_with_closure`
/// override in `impl Optimizer for LBFGS`).
#[test]
fn lbfgs_step_with_closure_is_its_step() -> Result<()> {
    let run = |through_trait: bool| -> Result<(f64, Vec<f64>)> {
        let m = sgd_model()?;
        let params = m.parameters();
        let mut opt = LBFGS::new(params.clone(), LbfgsOptions { max_iter: 3, ..Default::default() })?;
        let mut closure = || -> Result<Tensor> {
            params.iter().try_for_each(|p| p.set_grad(None))?;
            let loss = mse(&m)?;
            loss.backward()?;
            Ok(loss)
        };
        let loss = if through_trait {
            Optimizer::step_with_closure(&mut opt, &mut closure)?.expect("a loss")
        } else {
            opt.step(&mut closure)?
        };
        Ok((loss.item::<f64>()?, m.weight.to_f64_vec()?))
    };
    let (a, b) = (run(true)?, run(false)?);
    assert_eq!(a, b);
    let want = SGD_LOSSES[0];
    assert!((a.0 - want).abs() <= 1e-12 * (1.0 + want), "the first evaluation's loss: {} vs {want}", a.0);
    Ok(())
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// A seeded generator makes every initialiser reproducible, independently of the default stream.
#[test]
fn init_with_generator_is_reproducible() -> Result<()> {
    type Init = fn(&Tensor, Option<&Generator>) -> Result<()>;
    fn uniform(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::uniform_with_(t, -0.5, 0.5, g)
    }
    fn normal(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::normal_with_(t, 1.0, 2.0, g)
    }
    fn trunc_normal(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::trunc_normal_with_(t, 0.0, 1.0, -2.0, 2.0, g)
    }
    fn xavier_uniform(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::xavier_uniform_with_(t, 1.0, g)
    }
    fn xavier_normal(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::xavier_normal_with_(t, 1.0, g)
    }
    fn kaiming_uniform(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::kaiming_uniform_with_(t, 0.0, "fan_in", "leaky_relu", g)
    }
    fn kaiming_normal(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::kaiming_normal_with_(t, 0.0, "fan_out", "relu", g)
    }
    fn orthogonal(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::orthogonal_with_(t, 1.0, g)
    }
    fn sparse(t: &Tensor, g: Option<&Generator>) -> Result<()> {
        init::sparse_with_(t, 0.5, 0.01, g)
    }
    let inits: [(&str, Init); 9] = [
        ("uniform", uniform),
        ("normal", normal),
        ("trunc_normal", trunc_normal),
        ("xavier_uniform", xavier_uniform),
        ("xavier_normal", xavier_normal),
        ("kaiming_uniform", kaiming_uniform),
        ("kaiming_normal", kaiming_normal),
        ("orthogonal", orthogonal),
        ("sparse", sparse),
    ];
    for (name, f) in inits {
        let draw = |g: Option<&Generator>| -> Result<Vec<f32>> {
            let t = Tensor::zeros([6, 5], ())?.requires_grad_(true)?;
            f(&t, g)?;
            assert!(t.is_leaf() && t.requires_grad(), "{name}: runs under no_grad");
            Ok(f32s(&t))
        };
        let g = Generator::new(1234);
        let first = draw(Some(&g))?;
        let next = draw(Some(&g))?;
        assert_ne!(first, next, "{name}: the generator's stream moves on");
        assert_eq!(draw(Some(&Generator::new(1234)))?, first, "{name}: same seed, same values");
        assert_ne!(draw(Some(&Generator::new(99)))?, first, "{name}: another seed");
        assert_ne!(draw(None)?, first, "{name}: the default stream differs");
        g.manual_seed(1234);
        assert_eq!(draw(Some(&g))?, first, "{name}: reseeded");
    }
    Ok(())
}

/// The `_with_` forms are the plain ones' formulas: kaiming uniform is uniform in `±sqrt(2)` for a
/// fan-in of 3 (leaky_relu with slope 0), from the same draws; trunc_normal stays in `[a, b]`;
/// orthogonal rows are orthonormal. Errors are the plain forms'.
#[test]
fn init_with_generator_formulas_and_errors() -> Result<()> {
    let (a, b) = (Tensor::zeros([4, 3], ())?, Tensor::zeros([4, 3], ())?);
    init::kaiming_uniform_with_(&a, 0.0, "fan_in", "leaky_relu", Some(&Generator::new(5)))?;
    let bound = 2f64.sqrt();
    init::uniform_with_(&b, -bound, bound, Some(&Generator::new(5)))?;
    for (x, y) in f32s(&a).iter().zip(f32s(&b)) {
        assert!((x - y).abs() <= 1e-6, "{x} vs {y}");
    }
    let t = Tensor::zeros([200], DType::F64)?;
    init::trunc_normal_with_(&t, 0.5, 1.0, -0.25, 1.0, Some(&Generator::new(3)))?;
    assert!(t.to_vec::<f64>()?.iter().all(|v| (-0.25..=1.0).contains(v)));
    let q = Tensor::zeros([3, 5], DType::F64)?;
    init::orthogonal_with_(&q, 1.0, Some(&Generator::new(8)))?;
    let q = q.to_vec::<f64>()?;
    for i in 0..3 {
        for j in 0..3 {
            let dot: f64 = (0..5).map(|k| q[i * 5 + k] * q[j * 5 + k]).sum();
            assert!((dot - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12, "row {i} . row {j} = {dot}");
        }
    }
    let s = Tensor::zeros([4, 3], ())?;
    init::sparse_with_(&s, 0.5, 1.0, Some(&Generator::new(2)))?;
    let s = f32s(&s);
    for c in 0..3 {
        assert_eq!((0..4).filter(|r| s[r * 3 + c] == 0.0).count(), 2, "column {c}: ceil(0.5 * 4) zeros");
    }
    let g = Generator::new(1);
    let one_d = Tensor::zeros([3], ())?;
    assert_eq!(
        err(init::xavier_uniform_with_(&one_d, 1.0, Some(&g))),
        "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
    );
    assert_eq!(
        err(init::kaiming_normal_with_(&Tensor::zeros([2, 2], ())?, 0.0, "fan_avg", "relu", Some(&g))),
        "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']"
    );
    assert!(err(init::normal_with_(&one_d, 0.0, -1.0, Some(&g))).starts_with("normal expects std >= 0.0"));
    let e = err(init::uniform_with_(&one_d, 1.0, 0.0, Some(&g)));
    assert!(e.starts_with("uniform_ expects to return a [from, to) range"), "{e}");
    assert_eq!(g.get_state(), (1, 0), "a refused call draws nothing");
    Ok(())
}
