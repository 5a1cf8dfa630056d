//! The module tree: derive, torch's names, state dicts (including a checkpoint written by PyTorch),
//! load errors, train/eval, `to`, freezing.

use oxtorch_nn::{
    BatchNorm, Conv2d, ConvOptions, Flatten, Forward, LayerNorm, Linear, Module, ModuleExt, ReLU, Sequential,
    StateDict,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

/// The same architecture as `Net` in `tests/golden/make_golden_nn_module.py`.
#[derive(Module)]
struct Net {
    conv: Conv2d,
    bn: BatchNorm,
    fc: Sequential,
    ln: LayerNorm,
}

impl Net {
    fn new() -> Result<Net> {
        Ok(Net {
            conv: Conv2d::new(
                1,
                4,
                &[3],
                ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() },
            )?,
            bn: BatchNorm::new_2d(4)?,
            fc: Sequential::new()
                .add(Flatten::default())
                .add(Linear::new(64, 16, true)?)
                .add(ReLU {})
                .add(Linear::new(16, 3, true)?),
            ln: LayerNorm::new(&[3], 1e-5, true, true)?,
        })
    }
}

impl Forward for Net {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.ln.forward(&self.fc.forward(&self.bn.forward(&self.conv.forward(x)?)?.relu()?)?)
    }
}

fn golden(name: &str) -> StateDict {
    StateDict::load(format!("{}/../tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

#[test]
fn names_match_torch() -> Result<()> {
    let net = Net::new()?;
    let keys: Vec<String> = net.state_dict().keys().map(str::to_string).collect();
    // `Net().state_dict().keys()` as PyTorch prints it (the script prints it too).
    let torch_order = [
        "conv.weight",
        "conv.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
        "fc.1.weight",
        "fc.1.bias",
        "fc.3.weight",
        "fc.3.bias",
        "ln.weight",
        "ln.bias",
    ];
    assert_eq!(keys, torch_order);
    let mut file_keys = golden("nn_module_state.safetensors").keys().map(str::to_string).collect::<Vec<_>>();
    file_keys.sort();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, file_keys);
    assert_eq!(net.named_parameters().len(), 10);
    assert_eq!(net.named_buffers().len(), 3);
    let children: Vec<(String, &str)> =
        net.named_children().into_iter().map(|(n, c)| (n, c.type_name())).collect();
    assert_eq!(
        children,
        vec![
            ("conv".into(), "Conv2d"),
            ("bn".into(), "BatchNorm2d"),
            ("fc".into(), "Sequential"),
            ("ln".into(), "LayerNorm")
        ]
    );
    let modules: Vec<(String, &str)> =
        net.named_modules().into_iter().map(|(n, m)| (n, m.type_name())).collect();
    assert_eq!(modules.len(), 1 + 4 + 4);
    assert_eq!(modules[0], (String::new(), "Net"));
    assert_eq!(modules[3], ("fc".to_string(), "Sequential"));
    assert_eq!(modules[5], ("fc.1".to_string(), "Linear"));
    assert_eq!(net.children().len(), 4);
    // A child is the module itself: its own parameters are reachable from it.
    assert_eq!(net.children()[2].named_parameters().len(), 4);
    assert_eq!(net.modules().len(), 9);
    assert_eq!(net.num_parameters(), 4 * 9 + 4 + 4 + 4 + 64 * 16 + 16 + 16 * 3 + 3 + 3 + 3);
    Ok(())
}

#[test]
fn pytorch_checkpoint_runs_like_pytorch() -> Result<()> {
    let mut net = Net::new()?;
    let keys = net.load_state_dict(&golden("nn_module_state.safetensors"), true)?;
    assert!(keys.missing_keys.is_empty() && keys.unexpected_keys.is_empty());
    let io = golden("nn_module_io.safetensors");
    let x = io.get("x").unwrap();
    net.eval();
    assert!(!net.is_training());
    assert_close("y_eval", &net.forward(x)?, io.get("y_eval").unwrap(), 1e-5);
    net.train(true);
    let y = net.forward(x)?;
    assert_close("y_train", &y, io.get("y_train").unwrap(), 1e-5);
    assert_close(
        "running_mean",
        net.bn.running_mean.as_ref().unwrap(),
        io.get("running_mean").unwrap(),
        1e-6,
    );
    assert_close("running_var", net.bn.running_var.as_ref().unwrap(), io.get("running_var").unwrap(), 1e-6);
    assert_eq!(net.bn.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 1);
    assert!(
        !net.bn.running_mean.as_ref().unwrap().requires_grad(),
        "running stats must stay out of the graph"
    );
    y.sum_all()?.backward()?;
    for (name, p) in net.named_parameters() {
        assert_close(
            &format!("grad.{name}"),
            &p.grad().unwrap(),
            io.get(&format!("grad.{name}")).unwrap(),
            1e-4,
        );
    }
    Ok(())
}

#[test]
fn save_load_round_trip_is_exact() -> Result<()> {
    let net = Net::new()?;
    let dir = std::env::temp_dir().join(format!("oxtorch-nn-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("net.safetensors");
    net.state_dict().save(&path)?;
    let mut other = Net::new()?;
    other.load_state_dict(&StateDict::load(&path)?, true)?;
    for ((n, a), (_, b)) in net.state_dict().iter().zip(other.state_dict().iter()) {
        assert!(a.equal(b)?, "{n} differs after the round trip");
    }
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

#[test]
fn load_errors_list_every_problem() -> Result<()> {
    let mut net = Net::new()?;
    let mut sd = net.state_dict();
    sd.insert("fc.1.weight", Tensor::zeros([3, 3], DType::F32)?);
    sd.insert("extra.weight", Tensor::zeros([1], DType::F32)?);
    let mut partial = StateDict::new();
    for (k, v) in sd.iter().filter(|(k, _)| *k != "ln.bias") {
        partial.insert(k, v.clone());
    }
    let e = net.load_state_dict(&partial, true).unwrap_err().to_string();
    assert!(e.contains("Error(s) in loading state_dict for Net"), "{e}");
    // torch's text, the space after each list's period included.
    assert!(e.contains("Missing key(s) in state_dict: \"ln.bias\". \n\t"), "{e}");
    assert!(e.contains("Unexpected key(s) in state_dict: \"extra.weight\". \n\t"), "{e}");
    assert!(e.contains("size mismatch for fc.1.weight: copying a param with shape torch.Size([3, 3]) from checkpoint, the shape in current model is torch.Size([16, 64])."), "{e}");
    // Non-strict: only the size mismatch remains an error.
    partial.insert("fc.1.weight", Tensor::zeros([16, 64], DType::F32)?);
    let keys = net.load_state_dict(&partial, false)?;
    assert_eq!(keys.missing_keys, vec!["ln.bias".to_string()]);
    assert_eq!(keys.unexpected_keys, vec!["extra.weight".to_string()]);
    // As torch's batch norm: a checkpoint without the batch counter loads strictly, keeping the
    // module's; a one-element entry loads into a 0-d buffer.
    let mut no_counter = StateDict::new();
    for (k, v) in net.state_dict().iter().filter(|(k, _)| !k.ends_with("num_batches_tracked")) {
        no_counter.insert(k, v.clone());
    }
    net.load_state_dict(&no_counter, true)?;
    let mut one = net.state_dict();
    one.insert("bn.num_batches_tracked", Tensor::from_vec(vec![7i64], [1])?);
    net.load_state_dict(&one, true)?;
    assert_eq!(net.bn.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 7);
    Ok(())
}

#[test]
fn to_dtype_freeze_and_zero_grad() -> Result<()> {
    let mut net = Net::new()?;
    net.to(DType::F64)?;
    assert!(net.parameters().iter().all(|p| p.dtype() == DType::F64 && p.requires_grad()));
    assert_eq!(net.bn.num_batches_tracked.as_ref().unwrap().dtype(), DType::I64);
    let y = net.forward(&Tensor::randn([2, 1, 4, 4], DType::F64)?)?;
    y.sum_all()?.backward()?;
    assert!(net.parameters().iter().all(|p| p.grad().is_some()));
    net.zero_grad()?;
    assert!(net.parameters().iter().all(|p| p.grad().is_none()));
    net.conv.requires_grad_(false)?;
    let y = net.forward(&Tensor::randn([2, 1, 4, 4], DType::F64)?)?;
    y.sum_all()?.backward()?;
    assert!(net.conv.weight.grad().is_none());
    assert!(net.ln.weight.as_ref().unwrap().grad().is_some());
    Ok(())
}

/// A weight shared by two layers (an embedding tied to the output projection) is one parameter, as
/// in torch's `named_parameters()`: listed once under its first name, so an optimizer updates it
/// once; the state dict still has both keys.
#[test]
fn tied_weights_are_one_parameter() -> Result<()> {
    #[derive(Module)]
    struct Tied {
        embed: oxtorch_nn::Embedding,
        head: Linear,
    }
    let embed = oxtorch_nn::Embedding::new(10, 4, None)?;
    let mut head = Linear::new(4, 10, false)?;
    head.weight = embed.weight.clone();
    let m = Tied { embed, head };
    let names: Vec<String> = m.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["embed.weight".to_string()]);
    assert_eq!(m.parameters().len(), 1);
    assert_eq!(m.num_parameters(), 40);
    let keys: Vec<String> = m.state_dict().keys().map(str::to_string).collect();
    assert!(
        keys.contains(&"embed.weight".to_string()) && keys.contains(&"head.weight".to_string()),
        "{keys:?}"
    );
    // Moving or casting the module keeps the tie (torch's `module.to`).
    let mut m = m;
    m.to(DType::F64)?;
    assert!(m.embed.weight.is_same(&m.head.weight));
    assert_eq!(m.embed.weight.dtype(), DType::F64);
    assert_eq!(m.parameters().len(), 1);
    Ok(())
}

/// `to()` to where a tensor already is keeps the same tensor (an optimizer made before still
/// updates it, as torch's Parameter stays the same object); a cast keeps `.grad`, cast too; an
/// integer dtype is torch's error and changes nothing.
#[test]
fn to_keeps_tensors_already_there_and_their_grads() -> oxtorch_tensor::Result<()> {
    use oxtorch_nn::optim::{Optimizer, SgdOptions, SGD};
    use oxtorch_nn::{Forward, Linear, ModuleExt};
    use oxtorch_tensor::{DType, Device, Tensor};
    let mut m = Linear::new(2, 1, true)?;
    let mut opt = SGD::new(m.parameters(), SgdOptions { lr: 1.0, ..Default::default() })?;
    m.to(Device::Cpu)?;
    m.to(DType::F32)?;
    let w0 = m.weight.to_vec::<f32>()?;
    m.forward(&Tensor::ones([1, 2], ())?)?.sum_all()?.backward()?;
    opt.step()?;
    let w1 = m.weight.to_vec::<f32>()?;
    assert_eq!(w1, w0.iter().map(|w| w - 1.0).collect::<Vec<_>>(), "the optimizer still updates the weight");
    m.to(DType::F64)?;
    assert_eq!(m.weight.dtype(), DType::F64);
    let g = m.weight.grad().expect("the gradient moves with the weight");
    assert_eq!((g.dtype(), g.to_vec::<f64>()?), (DType::F64, vec![1.0, 1.0]));
    m.half()?;
    assert_eq!(m.weight.dtype(), DType::F16);
    m.bfloat16()?;
    assert_eq!(m.weight.dtype(), DType::BF16);
    m.double()?;
    let e = m.to(DType::I64).err().unwrap().to_string();
    assert!(
        e.contains(
            "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.int64"
        ),
        "{e}"
    );
    assert_eq!(m.weight.dtype(), DType::F64);
    Ok(())
}

/// A derived module's `training: bool` field is its own flag: `eval()` clears it, `is_training()`
/// reads it (torch's `self.training`), whatever its children say.
#[test]
fn a_training_field_is_the_modules_own_flag() -> oxtorch_tensor::Result<()> {
    use oxtorch_nn::{Dropout, Linear, ModuleExt};
    #[derive(oxtorch_nn_derive::Module)]
    #[module(crate = "oxtorch_nn")]
    struct Net {
        fc: Linear,
        drop: Dropout,
        training: bool,
    }
    let mut n = Net { fc: Linear::new(2, 2, true)?, drop: Dropout::new(0.5)?, training: true };
    n.eval();
    assert!(!n.training && !n.is_training() && !n.drop.training);
    n.train(true);
    n.drop.eval();
    assert!(n.training && n.is_training(), "the root's own flag, not its children's");
    Ok(())
}

/// torch's member order: a module's own parameters, then its own buffers, then its children
/// (torch 2.15 with `fc`, `rb`, `scale` registered in that order gives `scale, fc.weight, fc.bias`
/// and a state dict `scale, rb, fc.weight, fc.bias`), which optimizer state indices follow.
#[test]
fn own_members_come_before_children() -> oxtorch_tensor::Result<()> {
    use oxtorch_nn::{Buffer, Linear, ModuleExt};
    use oxtorch_tensor::Tensor;
    #[derive(oxtorch_nn_derive::Module)]
    #[module(crate = "oxtorch_nn")]
    struct Net {
        fc: Linear,
        rb: Buffer,
        scale: Tensor,
    }
    let net = Net {
        fc: Linear::new(2, 2, true)?,
        rb: Buffer(Tensor::zeros([2], ())?),
        scale: Tensor::ones([2], ())?,
    };
    let names: Vec<String> = net.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["scale", "fc.weight", "fc.bias"]);
    let sd = net.state_dict();
    assert_eq!(sd.keys().collect::<Vec<_>>(), ["scale", "rb", "fc.weight", "fc.bias"]);
    Ok(())
}

/// A buffer registered with `persistent=False` is listed by `named_buffers` and moves with the
/// module, but is not in the state dict, and a checkpoint entry under its name is unexpected
/// (torch 2.15: named_buffers `rb, cache`, state dict `rb, fc.weight, fc.bias`, loading the state
/// dict plus `cache` with strict=False reports `unexpected_keys=['cache']`, `to(float64)` casts it).
#[test]
fn non_persistent_buffers_stay_out_of_the_state_dict() -> oxtorch_tensor::Result<()> {
    use oxtorch_nn::{Buffer, Linear, ModuleExt, NonPersistentBuffer};
    use oxtorch_tensor::{DType, Tensor};
    #[derive(oxtorch_nn_derive::Module)]
    #[module(crate = "oxtorch_nn")]
    struct Net {
        fc: Linear,
        rb: Buffer,
        cache: NonPersistentBuffer,
    }
    let mut net = Net {
        fc: Linear::new(2, 2, true)?,
        rb: Buffer(Tensor::zeros([2], ())?),
        cache: NonPersistentBuffer(Tensor::arange(3.0, DType::F32)?),
    };
    let names: Vec<String> = net.named_buffers().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["rb", "cache"]);
    let mut sd = net.state_dict();
    assert_eq!(sd.keys().collect::<Vec<_>>(), ["rb", "fc.weight", "fc.bias"]);
    sd.insert("cache", Tensor::zeros([3], ())?);
    let err = net.load_state_dict(&sd, true).unwrap_err().to_string();
    assert!(err.contains("Unexpected key(s) in state_dict: \"cache\""), "{err}");
    let keys = net.load_state_dict(&sd, false)?;
    assert!(keys.missing_keys.is_empty());
    assert_eq!(keys.unexpected_keys, ["cache"]);
    assert_eq!(net.cache.to_vec::<f32>()?, [0.0, 1.0, 2.0], "not loaded");
    net.to(DType::F64)?;
    assert_eq!(net.cache.dtype(), DType::F64);
    Ok(())
}
