//! `nn::utils::prune` against PyTorch: for every case of `nn_prune_golden.rs` (written by
//! `nn/tests/make_nn_prune_golden.py`) a Linear or Conv2d loaded with torch's initial values is
//! pruned by the same calls, and its state dict (torch's keys in torch's order, the masks exactly),
//! its forward output and the gradients of `(out * cot).sum()` for its parameters (`weight_orig`
//! gets the masked gradient, the mask none) are compared with torch's. Plus iterative pruning mask
//! by mask, `remove`, `global_unstructured`, loading a torch state dict of a pruned model, the
//! random methods' counts and structure, `is_pruned`, and torch's error messages.

use oxtorch_nn::utils::prune::{self, Amount, PruneTarget, Pruned, PruningMethod};
use oxtorch_nn::{
    BatchNorm1d, Conv2d, ConvOptions, Forward, LazyLinear, Linear, Module, ModuleExt, StateDict,
};
use oxtorch_tensor::{DType, Result, Tensor};

include!("nn_prune_golden.rs");

fn entry(name: &str) -> Option<(&'static [usize], &'static [f64])> {
    TENSORS.iter().find(|(n, _, _)| *n == name).map(|(_, d, v)| (*d, *v))
}

/// A golden tensor as float64.
fn g(name: &str) -> Tensor {
    let (dims, data) = entry(name).unwrap_or_else(|| panic!("no golden tensor {name}"));
    Tensor::from_vec(data.to_vec(), dims).unwrap()
}

fn msg(name: &str) -> &'static str {
    MESSAGES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m).unwrap_or_else(|| panic!("no message {name}"))
}

fn names(table: &'static [(&str, &[&str])], case: &str) -> &'static [&'static str] {
    table.iter().find(|(n, _)| *n == case).map(|(_, k)| *k).unwrap_or_else(|| panic!("no keys for {case}"))
}

/// The golden entries `prefix<key>` as a state dict.
fn state_dict(prefix: &str) -> StateDict {
    let mut sd = StateDict::new();
    for (n, _, _) in TENSORS.iter().filter(|(n, _, _)| n.starts_with(prefix)) {
        sd.insert(&n[prefix.len()..], g(n));
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

/// The error of a call that must fail.
fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("no error"),
        Err(e) => e.to_string(),
    }
}

/// torch's message with its module repr spelled as our type name.
fn torch_msg(name: &str) -> String {
    msg(name).replace("Linear(in_features=5, out_features=4, bias=True)", "Linear")
}

/// A float64 Linear loaded with the case's initial values, wrapped for pruning.
fn lin(case: &str, i: usize, o: usize) -> Pruned<Linear> {
    let mut m = Linear::with_dtype(i, o, true, DType::F64).unwrap();
    m.load_state_dict(&state_dict(&format!("{case}.init.")), true).unwrap();
    Pruned::new(m)
}

/// A float64 `Conv2d(2, 4, 3)` loaded with the case's initial values, wrapped for pruning.
fn conv(case: &str) -> Pruned<Conv2d> {
    let mut m = Conv2d::new(2, 4, &[3], ConvOptions { dtype: DType::F64, ..Default::default() }).unwrap();
    m.load_state_dict(&state_dict(&format!("{case}.init.")), true).unwrap();
    Pruned::new(m)
}

/// Compares `m` with torch's module of the case: state-dict keys (in order) and values, and for a
/// case with an input, the forward output, the parameter names and their gradients.
fn check<M: Module + Forward>(case: &str, m: &Pruned<M>) -> Result<()> {
    let sd = m.state_dict();
    let keys: Vec<&str> = sd.keys().collect();
    assert_eq!(keys, names(KEYS, case), "{case}: state-dict keys");
    for k in keys {
        let what = format!("{case}.sd.{k}");
        let exact = if k.ends_with("_mask") { 0.0 } else { 1e-12 };
        close(&what, sd.get(k).unwrap(), &g(&what), exact);
    }
    if entry(&format!("{case}.x")).is_none() {
        return Ok(());
    }
    m.zero_grad()?;
    let out = m.forward(&g(&format!("{case}.x")))?;
    close(&format!("{case}.out"), &out, &g(&format!("{case}.out")), 1e-10);
    out.mul(g(&format!("{case}.cot")))?.sum_all()?.backward()?;
    let params = m.named_parameters();
    let got: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(got, names(PARAMS, case), "{case}: parameters");
    for (n, p) in &params {
        let grad = p.grad().unwrap_or_else(|| panic!("{case}: no gradient for {n}"));
        close(&format!("{case}.grad.{n}"), &grad, &g(&format!("{case}.grad.{n}")), 1e-10);
    }
    for (n, b) in m.named_buffers() {
        assert!(!b.requires_grad() && b.grad().is_none(), "{case}: the buffer {n} takes no gradient");
    }
    Ok(())
}

fn lin_case(case: &str, f: impl FnOnce(&mut Pruned<Linear>) -> Result<()>) -> Result<()> {
    let mut m = lin(case, 5, 4);
    f(&mut m)?;
    assert!(prune::is_pruned(&m) && m.is_pruned(), "{case}: pruned");
    check(case, &m)
}

fn conv_case(case: &str, f: impl FnOnce(&mut Pruned<Conv2d>) -> Result<()>) -> Result<()> {
    let mut m = conv(case);
    f(&mut m)?;
    check(case, &m)
}

#[test]
fn unstructured_methods_match_torch() -> Result<()> {
    lin_case("identity", |m| prune::identity(m, "weight"))?;
    lin_case("l1_frac", |m| prune::l1_unstructured(m, "weight", 0.3, None))?;
    lin_case("l1_count", |m| prune::l1_unstructured(m, "weight", 7, None))?;
    // round(0.125 * 20) = round(2.5) = 2, Python's half to even
    lin_case("l1_half_even", |m| prune::l1_unstructured(m, "weight", 0.125, None))?;
    lin_case("l1_all", |m| prune::l1_unstructured(m, "weight", 1.0, None))?;
    lin_case("l1_bias", |m| prune::l1_unstructured(m, "bias", 2, None))?;
    conv_case("l1_conv", |m| prune::l1_unstructured(m, "weight", 0.5, None))?;
    lin_case("l1_importance", |m| prune::l1_unstructured(m, "weight", 0.45, Some(&g("imp_lin"))))?;
    lin_case("custom", |m| prune::custom_from_mask(m, "weight", &g("custom_mask")))
}

/// Equal |w| at the boundary: torch's topk picks among them (nth_element / partial sort order),
/// which our topk follows.
#[test]
fn l1_unstructured_ties_pick_torch_entries() -> Result<()> {
    lin_case("l1_ties", |m| prune::l1_unstructured(m, "weight", 0.3, None))?;
    lin_case("l1_ties_count", |m| prune::l1_unstructured(m, "weight", 11, None))
}

#[test]
fn ln_structured_matches_torch() -> Result<()> {
    lin_case("ln_l2_dim0", |m| prune::ln_structured(m, "weight", 0.5, 2, 0, None))?;
    lin_case("ln_l1_dim1", |m| prune::ln_structured(m, "weight", 2, 1, -1, None))?;
    conv_case("ln_inf_conv", |m| prune::ln_structured(m, "weight", 0.25, f64::INFINITY, 0, None))?;
    conv_case("ln_fro_conv_dim1", |m| prune::ln_structured(m, "weight", 1, "fro", 1, None))?;
    conv_case("ln_l1_conv_dim3", |m| prune::ln_structured(m, "weight", 0.34, 1, 3, None))?;
    lin_case("ln_zero", |m| prune::ln_structured(m, "weight", 0.0, 2, 0, None))?;
    lin_case("ln_importance", |m| prune::ln_structured(m, "weight", 1, 2, 0, Some(&g("imp_lin"))))
}

/// One pruning step of an iterative case.
type Step<M> = Box<dyn Fn(&mut Pruned<M>) -> Result<()>>;

/// Each step's mask against torch's, then the final module.
fn steps<M: Module + Forward>(case: &str, m: &mut Pruned<M>, steps: Vec<Step<M>>) -> Result<()> {
    for (i, step) in steps.iter().enumerate() {
        step(m)?;
        let mask = m.pruning_mask("weight").expect("pruned");
        close(&format!("{case}.mask{i}"), &mask, &g(&format!("{case}.mask{i}")), 0.0);
    }
    assert_eq!(m.pruning_methods("weight").map(<[_]>::len), Some(steps.len()));
    check(case, m)
}

#[test]
fn iterative_pruning_prunes_the_unpruned_part() -> Result<()> {
    type Step<M> = Box<dyn Fn(&mut Pruned<M>) -> Result<()>>;
    let lin_steps: Vec<Step<Linear>> = vec![
        Box::new(|m: &mut Pruned<Linear>| prune::l1_unstructured(m, "weight", 0.3, None)),
        Box::new(|m: &mut Pruned<Linear>| prune::ln_structured(m, "weight", 0.5, 2, 0, None)),
        Box::new(|m: &mut Pruned<Linear>| prune::l1_unstructured(m, "weight", 0.25, None)),
    ];
    steps("iter_l1_ln", &mut lin("iter_l1_ln", 6, 5), lin_steps)?;
    let lin_steps: Vec<Step<Linear>> = vec![
        Box::new(|m: &mut Pruned<Linear>| prune::l1_unstructured(m, "weight", 12, None)),
        Box::new(|m: &mut Pruned<Linear>| prune::ln_structured(m, "weight", 2, f64::NEG_INFINITY, 1, None)),
        Box::new(|m: &mut Pruned<Linear>| prune::identity(m, "weight")),
    ];
    steps("iter_l1_ln_dim1", &mut lin("iter_l1_ln_dim1", 6, 5), lin_steps)?;
    let conv_steps: Vec<Step<Conv2d>> = vec![
        Box::new(|m: &mut Pruned<Conv2d>| prune::ln_structured(m, "weight", 1, 1, 0, None)),
        Box::new(|m: &mut Pruned<Conv2d>| prune::l1_unstructured(m, "weight", 10, None)),
        Box::new(|m: &mut Pruned<Conv2d>| prune::ln_structured(m, "weight", 0.5, 2, 1, None)),
        Box::new(|m: &mut Pruned<Conv2d>| {
            let ones = Tensor::ones([4, 2, 3, 3], DType::F32)?;
            let mask = ones.index_fill(3, &Tensor::from_vec(vec![1i64], [1])?, 0.0)?;
            prune::custom_from_mask(m, "weight", &mask)
        }),
    ];
    steps("iter_ln_l1_conv", &mut conv("iter_ln_l1_conv"), conv_steps)
}

#[test]
fn two_tensors_remove_and_prune_again() -> Result<()> {
    let mut m = conv("two");
    prune::l1_unstructured(&mut m, "weight", 0.4, None)?;
    prune::l1_unstructured(&mut m, "bias", 1, None)?;
    assert_eq!(m.pruned_names(), ["weight", "bias"]);
    check("two", &m)?;
    let orig = m.named_parameters().into_iter().find(|(n, _)| n == "weight_orig").unwrap().1;
    prune::remove(&mut m, "weight")?;
    // the parameter is weight_orig's tensor, now holding the pruned values
    let weight = m.named_parameters().into_iter().find(|(n, _)| n == "weight").unwrap().1;
    assert!(weight.is_same(&orig));
    check("two_removed_weight", &m)?;
    prune::l1_unstructured(&mut m, "weight", 0.5, None)?;
    check("two_repruned", &m)?;

    let mut m = lin("remove", 5, 4);
    prune::ln_structured(&mut m, "weight", 0.5, 2, 0, None)?;
    prune::remove(&mut m, "weight")?;
    assert!(!prune::is_pruned(&m) && !m.is_pruned());
    check("remove", &m)?;
    assert_eq!(err(prune::remove(&mut m, "weight")), torch_msg("remove_unpruned"));
    Ok(())
}

#[test]
fn global_unstructured_matches_torch() -> Result<()> {
    let (mut a, mut b) = (lin("global.a", 5, 4), lin("global.b", 4, 3));
    {
        let mut mods: [&mut dyn PruneTarget; 2] = [&mut a, &mut b];
        let params = [(0, "weight"), (1, "weight"), (1, "bias")];
        prune::global_unstructured(&mut mods, &params, PruningMethod::l1_unstructured(0.4), None)?;
    }
    check("global.a", &a)?;
    check("global.b", &b)?;

    // on top of an earlier pruning, with importance scores for one tensor
    let (mut a, mut b) = (lin("global2.a", 5, 4), lin("global2.b", 4, 3));
    prune::ln_structured(&mut a, "weight", 1, 2, 0, None)?;
    {
        let mut mods: [&mut dyn PruneTarget; 2] = [&mut a, &mut b];
        let scores = [None, Some(g("imp_b"))];
        let method = PruningMethod::l1_unstructured(11);
        prune::global_unstructured(&mut mods, &[(0, "weight"), (1, "weight")], method, Some(&scores))?;
    }
    check("global2.a", &a)?;
    check("global2.b", &b)
}

/// A torch state dict of a pruned model loads into ours pruned the same way (any method: the
/// mask is loaded).
#[test]
fn torch_state_dict_of_a_pruned_model_loads() -> Result<()> {
    let mut m = Pruned::new(Linear::with_dtype(5, 4, true, DType::F64)?);
    prune::identity(&mut m, "weight")?;
    m.load_state_dict(&state_dict("load.sd."), true)?;
    check("load", &m)?;
    // an unpruned module refuses it, as torch's
    let mut plain = Linear::with_dtype(5, 4, true, DType::F64)?;
    let e = err(plain.load_state_dict(&state_dict("load.sd."), true));
    assert!(e.contains("Missing key(s) in state_dict: \"weight\""), "{e}");
    assert!(e.contains("Unexpected key(s) in state_dict: \"weight_orig\", \"weight_mask\""), "{e}");
    Ok(())
}

fn zeros_of(t: &Tensor) -> usize {
    t.to_f64_vec().unwrap().iter().filter(|&&v| v == 0.0).count()
}

#[test]
fn random_methods_prune_the_right_counts() -> Result<()> {
    let mut m = Pruned::new(Linear::with_dtype(5, 4, true, DType::F64)?);
    prune::random_unstructured(&mut m, "weight", 0.3)?;
    let first = m.pruning_mask("weight").unwrap();
    assert_eq!(zeros_of(&first), 6);
    prune::random_unstructured(&mut m, "weight", 3)?;
    let second = m.pruning_mask("weight").unwrap();
    assert_eq!(zeros_of(&second), 9);
    // pruned entries stay pruned, and the values are 0 or 1
    for (a, b) in first.to_f64_vec()?.iter().zip(second.to_f64_vec()?) {
        assert!(b == 0.0 || b == 1.0);
        assert!(*a == 1.0 || b == 0.0);
    }
    let w = m.tensor("weight")?;
    assert_eq!(zeros_of(&w), 9);

    // structured: whole rows, then whole columns
    let mut m = Pruned::new(Linear::with_dtype(5, 4, true, DType::F64)?);
    prune::random_structured(&mut m, "weight", 2, 0)?;
    let rows = m.pruning_mask("weight").unwrap().to_vec2::<f64>()?;
    let zero_rows = rows.iter().filter(|r| r.iter().all(|&v| v == 0.0)).count();
    assert_eq!(zero_rows, 2);
    assert!(rows.iter().all(|r| r.iter().all(|&v| v == 0.0) || r.iter().all(|&v| v == 1.0)));
    prune::random_structured(&mut m, "weight", 0.25, -1)?; // round(0.25 * 5) = 1 column
    let mask = m.pruning_mask("weight").unwrap().to_vec2::<f64>()?;
    let zero_cols = (0..5).filter(|&j| (0..4).all(|i| mask[i][j] == 0.0)).count();
    assert_eq!(zero_cols, 1);
    assert_eq!(mask.iter().flatten().filter(|&&v| v == 0.0).count(), 2 * 5 + 2);

    // a conv's input channels
    let mut m = conv("l1_conv");
    prune::random_structured(&mut m, "weight", 0.5, 1)?;
    let mask = m.pruning_mask("weight").unwrap();
    assert_eq!(zeros_of(&mask), 4 * 9);
    let per_channel = mask.sum([0, 2, 3], false)?.to_f64_vec()?;
    assert!(per_channel.contains(&0.0) && per_channel.contains(&36.0), "{per_channel:?}");
    Ok(())
}

#[test]
fn pruning_method_prune_and_amounts() -> Result<()> {
    let w = g("l1_frac.init.weight");
    let pruned = PruningMethod::l1_unstructured(0.3).prune(&w, None, None)?;
    close("prune", &pruned, &g("l1_frac.sd.weight_orig").mul(g("l1_frac.sd.weight_mask"))?, 0.0);
    // an integer counts entries, a float is a fraction rounded half to even (Python's
    // `round(0.5 * 5) == 2`)
    assert_eq!(Amount::from(0.5).to_prune(5)?, 2);
    assert_eq!(Amount::from(0.5).to_prune(7)?, 4); // round(3.5) = 4
    assert_eq!(Amount::from(1).to_prune(5)?, 1);
    assert_eq!(Amount::from(1.0).to_prune(5)?, 5);
    // and so the pruning functions: half of a 5-entry bias is 2 entries
    let mut m = Pruned::new(Linear::with_dtype(4, 5, true, DType::F64)?);
    prune::l1_unstructured(&mut m, "bias", 0.5, None)?;
    assert_eq!(zeros_of(&m.pruning_mask("bias").unwrap()), 2);
    Ok(())
}

/// A lazy module can be wrapped before its first forward but not pruned (torch's error for an
/// uninitialized parameter); the first forward materializes it, after which the wrapper lists
/// and runs the materialized tensors and pruning works.
#[test]
fn lazy_module_is_pruned_after_its_first_forward() -> Result<()> {
    let mut m = Pruned::new(LazyLinear::new(2, true)?);
    let e = err(prune::l1_unstructured(&mut m, "weight", 0.5, None));
    assert!(e.starts_with("Attempted to use an uninitialized parameter"), "{e}");
    assert!(e.contains("Call `forward` with a dummy batch to initialize the parameters"), "{e}");
    assert!(err(prune::identity(&mut m, "weight")).starts_with("Attempted to use an uninitialized"));
    assert!(!m.is_pruned() && !prune::is_pruned(&m));
    assert_eq!(m.type_name(), "LazyLinear");

    let x = Tensor::ones([3, 4], DType::F32)?;
    let y0 = m.forward(&x)?;
    assert_eq!(y0.dims(), &[3, 2]);
    // the wrapper now lists the materialized members, under the module's new class name
    assert_eq!(m.type_name(), "Linear");
    let param = |m: &Pruned<LazyLinear>, name: &str| {
        m.named_parameters().into_iter().find(|(n, _)| n == name).map(|(_, t)| t)
    };
    let weight = param(&m, "weight").unwrap();
    assert_eq!(weight.dims(), &[2, 4]);
    assert_eq!(param(&m, "bias").unwrap().dims(), &[2]);
    // a second forward runs the same tensors (the placeholders are not put back)
    close("second forward", &m.forward(&x)?, &y0, 0.0);

    // pruning now works, and the forward runs the pruned weight
    prune::l1_unstructured(&mut m, "weight", 0.5, None)?;
    let keys: Vec<String> = m.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["bias", "weight_orig", "weight_mask"]);
    assert!(param(&m, "weight_orig").unwrap().is_same(&weight));
    assert_eq!(zeros_of(&m.pruning_mask("weight").unwrap()), 4);
    let want = x.matmul(&m.tensor("weight")?.t()?)?.add(&m.tensor("bias")?)?;
    let y = m.forward(&x)?;
    close("pruned forward", &y, &want, 1e-6);
    close("pruned forward again", &m.forward(&x)?, &y, 0.0);
    let plain = m.into_inner()?;
    assert_eq!(plain.type_name(), "Linear");
    assert_eq!(zeros_of(&plain.module().unwrap().weight), 4);
    Ok(())
}

/// `remove` keeps the parameter (the same tensor) and writes the pruned values into its storage.
/// torch gives the parameter a new storage (`orig.data = weight.data`), so a state dict taken
/// before keeps the unpruned values there; here its entry shares the storage and shows the pruned
/// ones (a copy of the entry keeps them).
#[test]
fn remove_writes_the_pruned_values_into_the_parameter() -> Result<()> {
    let mut m = lin("l1_frac", 5, 4);
    prune::l1_unstructured(&mut m, "weight", 0.3, None)?;
    let before = m.state_dict();
    let kept = before.get("weight_orig").unwrap().copy()?;
    let orig = m.named_parameters().into_iter().find(|(n, _)| n == "weight_orig").unwrap().1;
    prune::remove(&mut m, "weight")?;
    let weight = m.named_parameters().into_iter().find(|(n, _)| n == "weight").unwrap().1;
    assert!(weight.is_same(&orig));
    assert_eq!(zeros_of(&weight), 6);
    let entry = before.get("weight_orig").unwrap();
    assert!(entry.shares_storage(&weight));
    close("earlier state dict entry", entry, &weight.detach(), 0.0);
    close("its copy", &kept, &g("l1_frac.init.weight"), 0.0);
    Ok(())
}

#[test]
fn is_pruned_sees_nested_modules_and_keys_are_dotted() -> Result<()> {
    #[derive(Module)]
    struct Net {
        fc: Pruned<Linear>,
        out: Linear,
    }
    let mut net = Net { fc: Pruned::new(Linear::new(5, 4, true)?), out: Linear::new(4, 2, true)? };
    assert!(!prune::is_pruned(&net));
    let keys: Vec<String> = net.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["fc.weight", "fc.bias", "out.weight", "out.bias"]);
    prune::l1_unstructured(&mut net.fc, "weight", 0.5, None)?;
    assert!(prune::is_pruned(&net));
    let keys: Vec<String> = net.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["fc.bias", "fc.weight_orig", "fc.weight_mask", "out.weight", "out.bias"]);
    let y = net.out.forward(&net.fc.forward(&Tensor::ones([3, 5], DType::F32)?)?)?;
    assert_eq!(y.dims(), &[3, 2]);
    // made permanent, the module comes back with the pruned weight
    let expected = net.fc.tensor("weight")?.detach();
    let plain = net.fc.into_inner()?;
    close("into_inner", &plain.weight, &expected, 0.0);
    assert_eq!(zeros_of(&plain.weight), 10);
    Ok(())
}

#[test]
fn errors_are_torch_messages() {
    let m = || lin("l1_frac", 5, 4);
    assert_eq!(err(prune::l1_unstructured(&mut m(), "weight", -1, None)), msg("amount_negative_int"));
    assert_eq!(err(prune::l1_unstructured(&mut m(), "weight", 1.5, None)), msg("amount_above_one"));
    assert_eq!(err(prune::random_unstructured(&mut m(), "weight", -0.1)), msg("amount_negative_float"));
    assert_eq!(err(prune::l1_unstructured(&mut m(), "weight", 25, None)), msg("amount_too_many"));
    assert_eq!(err(prune::ln_structured(&mut m(), "weight", 5, 2, 0, None)), msg("amount_too_many_channels"));
    assert_eq!(err(prune::l1_unstructured(&mut m(), "weight", f64::NAN, None)), msg("amount_nan"));
    assert_eq!(err(prune::ln_structured(&mut m(), "bias", 1, 2, 0, None)), msg("structured_1d"));
    assert_eq!(err(prune::ln_structured(&mut m(), "weight", 1, 2, 2, None)), msg("structured_dim"));
    assert_eq!(err(prune::random_structured(&mut m(), "bias", 1, -1)), msg("random_structured_1d"));
    assert_eq!(err(prune::remove(&mut m(), "weight")), torch_msg("remove_unpruned"));
    assert_eq!(err(prune::l1_unstructured(&mut m(), "foo", 1, None)), msg("no_attribute"));
    let scores = Tensor::zeros([5, 4], DType::F64).unwrap();
    assert_eq!(
        err(prune::l1_unstructured(&mut m(), "weight", 1, Some(&scores))),
        torch_msg("importance_shape")
    );
    let mask = Tensor::ones([5, 4], DType::F32).unwrap();
    assert_eq!(err(prune::custom_from_mask(&mut m(), "weight", &mask)), msg("custom_shape"));
    let global = |method: PruningMethod| {
        let mut a = m();
        let mut mods: [&mut dyn PruneTarget; 1] = [&mut a];
        err(prune::global_unstructured(&mut mods, &[(0, "weight")], method, None))
    };
    assert_eq!(global(PruningMethod::ln_structured(1, 2, 0)), msg("global_structured"));
    let custom = PruningMethod::CustomFromMask { mask: Tensor::ones([4, 5], DType::F32).unwrap() };
    assert_eq!(global(custom), msg("global_custom"));
    assert_eq!(global(PruningMethod::l1_unstructured(21)), msg("global_amount"));
    // a second pruning counts the entries left
    let mut p = m();
    prune::l1_unstructured(&mut p, "weight", 6, None).unwrap();
    assert_eq!(err(prune::l1_unstructured(&mut p, "weight", 15, None)), msg("iter_amount_too_many"));
    assert_eq!(p.pruning_methods("weight").map(<[_]>::len), Some(1));
    // a buffer is not a parameter
    let mut bn = BatchNorm1d::new(3, 1e-5, Some(0.1), true, true).unwrap();
    bn.double().unwrap();
    assert_eq!(err(prune::identity(&mut Pruned::new(bn), "running_mean")), msg("prune_buffer"));
}

/// A failed first pruning leaves the module unpruned, its parameter registered again last
/// (torch's order).
#[test]
fn failed_pruning_leaves_the_module_unpruned() -> Result<()> {
    let mut m = lin("l1_frac", 5, 4);
    assert!(prune::l1_unstructured(&mut m, "weight", 25, None).is_err());
    assert!(!prune::is_pruned(&m));
    let sd = m.state_dict();
    let keys: Vec<&str> = sd.keys().collect();
    assert_eq!(keys, names(KEYS, "failed"));
    // and it still runs with its own weight
    let x = Tensor::ones([2, 5], DType::F64)?;
    let want = x.matmul(&g("l1_frac.init.weight").t()?)?.add(g("l1_frac.init.bias"))?;
    close("failed.forward", &m.forward(&x)?, &want, 1e-12);
    Ok(())
}
