//! InstanceNorm, PReLU and the other modules over the extra functional forms, against torch 2.15
//! (values quoted in each test, float64).

use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

fn close(what: &str, got: &Tensor, want: &[f64]) {
    let got = got.to_f64_vec().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: numel");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{what}[{i}]: got {a}, torch {b}");
    }
}

/// `x = arange(24).reshape(2, 3, 4) ** 1.5 / 10` in float64.
fn input() -> Tensor {
    Tensor::arange(24, DType::F64).unwrap().reshape([2, 3, 4]).unwrap().pow(1.5).unwrap().div(10.0).unwrap()
}

/// torch: `InstanceNorm1d(3, affine=True, track_running_stats=True).double()`: state dict `weight,
/// bias, running_mean, running_var, num_batches_tracked`; one training step leaves the running
/// statistics below and `num_batches_tracked` 0; in evaluation the first two columns normalise by
/// them. `InstanceNorm1d(3)` takes an unbatched `[3, 4]` input.
#[test]
fn instance_norm_tracks_running_statistics_as_torch() -> Result<()> {
    let mut m = InstanceNorm1d::new(1, 3, 1e-5, Some(0.1), true, true)?;
    m.double()?;
    let keys: Vec<String> = m.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
    let x = input();
    m.forward(&x)?;
    close(
        "running_mean",
        m.running_mean.as_ref().unwrap(),
        &[0.25992989889760526, 0.4320961818157129, 0.6461289334249187],
    );
    close(
        "running_var",
        m.running_var.as_ref().unwrap(),
        &[0.9279022211989814, 0.9430702893898413, 0.9580904990646788],
    );
    assert_eq!(m.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 0);
    m.eval();
    let z = m.forward(&x.narrow(2, 0, 2)?)?;
    close(
        "eval",
        &z,
        &[
            -0.2698378019546831,
            -0.16602604228444182,
            0.3788436053427085,
            0.7063344792188264,
            1.651583254553758,
            2.0983003048902273,
            4.04553601017302,
            4.596044290378911,
            6.145362149209716,
            6.77275891735443,
            8.47764799900691,
            9.171476107804207,
        ],
    );
    let plain = InstanceNorm1d::new_1d(3)?;
    let u = plain.forward(&x.select(0, 0)?)?;
    assert_eq!(u.dims(), [3, 4]);
    close(
        "unbatched",
        &u.select(0, 0)?,
        &[-1.1408633105278654, -0.6351939640374251, 0.2893855852383754, 1.4866716893269152],
    );
    Ok(())
}

/// torch's errors: an affine instance norm checks the channels; training needs more than one
/// spatial element.
#[test]
fn instance_norm_errors_are_torchs() -> Result<()> {
    let affine = InstanceNorm1d::new(1, 3, 1e-5, Some(0.1), true, false)?;
    let e = affine.forward(&Tensor::zeros([2, 4, 5], ())?).unwrap_err().to_string();
    assert!(e.contains("expected input's size at dim=1 to match num_features (3), but got: 4."), "{e}");
    let e = InstanceNorm1d::new_1d(3)?.forward(&Tensor::zeros([2, 3, 1], ())?).unwrap_err().to_string();
    assert!(
        e.contains("Expected more than 1 spatial element when training, got input size [2, 3, 1]"),
        "{e}"
    );
    Ok(())
}

/// `nn.PReLU(3)`: state dict `weight` (0.25 each); `[[-1, 2, -3]]` gives `[[-0.25, 2, -0.75]]`.
/// The other modules wrap their functional forms.
#[test]
fn prelu_and_the_wrapping_modules() -> Result<()> {
    let p = PReLU::new(3, 0.25)?;
    assert_eq!(p.state_dict().keys().collect::<Vec<_>>(), ["weight"]);
    let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0], [1, 3])?;
    assert_eq!(p.forward(&x)?.to_f64_vec()?, [-0.25, 2.0, -0.75]);
    assert!(p.weight.requires_grad());
    let mut r = RReLU::default();
    r.eval();
    assert_eq!(r.forward(&x)?.to_f64_vec()?, F::rrelu(&x, 1.0 / 8.0, 1.0 / 3.0, false)?.to_f64_vec()?);
    assert_eq!(Hardshrink::default().forward(&x)?.to_f64_vec()?, [-1.0, 2.0, -3.0]);
    assert_eq!(Threshold { threshold: 0.0, value: 9.0 }.forward(&x)?.to_f64_vec()?, [9.0, 2.0, 9.0]);
    let c = CosineSimilarity::default().forward(&x, &x)?;
    assert!((c.to_f64_vec()?[0] - 1.0).abs() < 1e-6);
    let lrn = LocalResponseNorm::new(2).forward(&x.unsqueeze(2)?)?;
    assert_eq!(lrn.dims(), [1, 3, 1]);
    Ok(())
}

use oxtorch_nn::functional as F;

/// torch 2.15 on layers' edge inputs: dropout multiplies by its mask (a dropped NaN or inf is NaN,
/// not 0) and takes integers at p = 1 (zeros) and empty tensors; batch norm on an empty batch in
/// training gives an empty output and keeps its running statistics (`num_batches_tracked` 1);
/// reflect padding to nothing, flattening a scalar past dim 0, a bilinear bias of another size,
/// and a linear bias with a vector weight are errors.
#[test]
fn edge_inputs_of_existing_layers() -> Result<()> {
    let ints = Tensor::ones([3], DType::I64)?;
    let zeros = F::dropout(&ints, 1.0, true)?;
    assert_eq!((zeros.dtype(), zeros.to_f64_vec()?), (DType::I64, vec![0.0; 3]));
    assert_eq!(F::dropout(&Tensor::ones([0], DType::I64)?, 0.5, true)?.numel(), 0);
    let odd: Vec<f32> = [f32::NAN, f32::INFINITY].repeat(200);
    let dropped = F::dropout(&Tensor::from_vec(odd, [400])?, 0.5, true)?.to_f64_vec()?;
    assert!(dropped.iter().all(|v| v.is_nan() || v.is_infinite()), "a dropped NaN or inf is NaN");
    assert!(dropped.iter().any(|v| v.is_nan()) && dropped.iter().any(|v| v.is_infinite()));

    let mut bn = BatchNorm1d::new_1d(3)?;
    assert_eq!(bn.forward(&Tensor::zeros([0, 3], ())?)?.dims(), [0, 3]);
    assert_eq!(bn.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 1);
    assert_eq!(bn.running_mean.as_ref().unwrap().to_f64_vec()?, [0.0; 3]);
    bn.eval();

    let row = Tensor::arange(5, DType::F32)?.reshape([1, 1, 5])?;
    let e = F::pad(&row, &[-5, 0], "reflect", None).unwrap_err().to_string();
    assert!(e.contains("input (W: 5) is too small. Calculated output W: 0"), "{e}");
    assert!(F::pad(&row, &[-5, 0], "replicate", None).is_err());

    let scalar = Tensor::scalar_tensor(1.0, DType::F32)?;
    let e = Flatten::default().forward(&scalar).unwrap_err().to_string();
    assert!(e.contains("Dimension out of range (expected to be in range of [-1, 0], but got 1)"), "{e}");
    assert_eq!(scalar.flatten(0, -1)?.dims(), [1]);

    let (x1, x2, w) = (Tensor::ones([5, 3], ())?, Tensor::ones([5, 4], ())?, Tensor::ones([2, 3, 4], ())?);
    let e = F::bilinear(&x1, &x2, &w, Some(&Tensor::ones([1], ())?)).unwrap_err().to_string();
    assert!(e.contains("bilinear(): bias size does not match weight size: got 1 but expected 2"), "{e}");

    let (v, wv) = (Tensor::ones([2, 3], ())?, Tensor::ones([3], ())?);
    let e = F::linear(&v, &wv, Some(&Tensor::ones([2], ())?)).unwrap_err().to_string();
    assert!(e.contains("addmm: mat2 must be a matrix, got 1-D tensor"), "{e}");
    assert_eq!(F::linear(&v, &wv, None)?.dims(), [2]);
    Ok(())
}

/// `nn.Embedding.from_pretrained(w, max_norm=1.5)` with `w = arange(24).reshape(6, 4) * 0.37 - 4`
/// (float32) after looking up rows 0, 2 and 5: torch's scale `max_norm / (norm + 1e-7)` is taken in
/// double and rounded once, so the rows are bit for bit torch's.
#[test]
fn embedding_renorm_scales_in_double_as_torch() -> Result<()> {
    let w = Tensor::arange(24, DType::F32)?.reshape([6, 4])?.mul(0.37)?.sub(4.0)?;
    let mut e = Embedding::from_pretrained(&w, true, None)?;
    e.max_norm = Some(1.5);
    e.forward(&Tensor::from_vec(vec![0i64, 2, 5], [3])?)?;
    let want: [f64; 24] = [
        -0.8646161556243896,
        -0.7846391797065735,
        -0.7046621441841125,
        -0.6246851682662964,
        -2.5199999809265137,
        -2.1500000953674316,
        -1.7799999713897705,
        -1.4099998474121094,
        -1.0399999618530273,
        -0.6700000762939453,
        -0.2999999523162842,
        0.07000017166137695,
        0.440000057220459,
        0.809999942779541,
        1.1800003051757812,
        1.5500001907348633,
        1.9200000762939453,
        2.2899999618530273,
        2.6599998474121094,
        3.0300002098083496,
        0.6412553191184998,
        0.7110389471054077,
        0.7808226943016052,
        0.850606381893158,
    ];
    // (torch's f32 values printed as doubles)
    assert_eq!(e.weight.to_f64_vec()?, want);
    Ok(())
}

/// Batch norm on an empty training batch keeps its parameters in the graph (torch: zero
/// gradients, not none); `threshold` keeps an integer input's dtype (`[-2, 0, 3]` by 1.5 → 0.5 is
/// int64 `[0, 0, 3]`), float-only activations refuse integers as torch does, and a local response
/// norm over no channel is an error.
#[test]
fn empty_batches_integer_inputs_and_zero_windows() -> Result<()> {
    let bn = BatchNorm1d::new_1d(3)?;
    bn.forward(&Tensor::zeros([0, 3], ())?)?.sum_all()?.backward()?;
    assert_eq!(bn.weight.as_ref().unwrap().grad().unwrap().to_f64_vec()?, [0.0; 3]);
    assert_eq!(bn.bias.as_ref().unwrap().grad().unwrap().to_f64_vec()?, [0.0; 3]);
    let ints = Tensor::from_vec(vec![-2i64, 0, 3], [3])?;
    let t = F::threshold(&ints, 1.5, 0.5)?;
    assert_eq!((t.dtype(), t.to_f64_vec()?), (DType::I64, vec![0.0, 0.0, 3.0]));
    let e = F::threshold(&Tensor::ones([2], DType::F16)?, 1.5, 1e6).unwrap_err().to_string();
    assert!(e.contains("c10::Half without overflow"), "{e}");
    let e = F::hardshrink(&ints, 0.5).unwrap_err().to_string();
    assert!(e.contains("\"hardshrink_cpu\" not implemented for 'Long'"), "{e}");
    assert!(F::logsigmoid(&ints).is_err() && F::prelu(&ints, &Tensor::ones([1], ())?).is_err());
    assert!(F::local_response_norm(&Tensor::ones([1, 2, 3], ())?, 0, 1e-4, 0.75, 1.0).is_err());
    Ok(())
}

/// torch 2.15's constructor and loading behaviour: `load_state_dict` copies the entries that fit
/// before reporting the rest (`Linear(2, 2)` given only a weight of 7s holds them after the error);
/// kaiming's mode is case-insensitive (`Mode fan not supported, please use one of ['fan_in',
/// 'fan_out']`); `Bilinear(0, ..)`, `RNN(0, ..)` and conv groups give torch's errors in its
/// order; an instance norm names its class; a shuffled empty loader and a 0-d dataset tensor are
/// torch's errors.
#[test]
fn constructor_and_loading_errors_are_torchs() -> Result<()> {
    let mut lin = Linear::new(2, 2, true)?;
    let mut sd = oxtorch_nn::StateDict::new();
    sd.insert("weight", Tensor::full([2, 2], 7.0, DType::F32)?);
    let e = lin.load_state_dict(&sd, true).unwrap_err().to_string();
    assert!(e.contains("Missing key(s) in state_dict: \"bias\""), "{e}");
    assert_eq!(lin.weight.to_f64_vec()?, [7.0; 4]);

    let w = Tensor::empty([3, 3], DType::F32)?;
    init::kaiming_uniform_(&w, 0.0, "FAN_IN", "relu")?;
    let e = init::kaiming_uniform_(&w, 0.0, "fan", "relu").unwrap_err().to_string();
    assert!(e.contains("Mode fan not supported, please use one of ['fan_in', 'fan_out']"), "{e}");

    let e = Bilinear::new(0, 2, 3, true).err().unwrap().to_string();
    assert!(e.contains("in1_features must be > 0, but got (in1_features=0)"), "{e}");
    let e = RNN::new(0, 3, "tanh", RnnOptions::default()).err().unwrap().to_string();
    assert!(e.contains("input_size must be greater than zero"), "{e}");
    let groups = |g, i, o| Conv2d::new(i, o, &[3], ConvOptions { groups: g, ..Default::default() });
    assert!(groups(0, 3, 4).err().unwrap().to_string().contains("groups must be a positive integer"));
    assert!(groups(2, 3, 4).err().unwrap().to_string().contains("in_channels must be divisible by groups"));
    assert!(groups(2, 4, 3).err().unwrap().to_string().contains("out_channels must be divisible by groups"));

    let mut inorm = InstanceNorm2d::new_2d(3)?;
    let mut with_stats = oxtorch_nn::StateDict::new();
    with_stats.insert("running_mean", Tensor::zeros([3], DType::F32)?);
    let e = inorm.load_state_dict(&with_stats, true).unwrap_err().to_string();
    assert!(e.contains("state_dict for InstanceNorm2d"), "{e}");

    use oxtorch_nn::data::{DataLoader, TensorDataset};
    let empty = TensorDataset::new(vec![Tensor::zeros([0, 2], DType::F32)?])?;
    let loader = DataLoader::new(empty, 4)?.shuffle(0);
    let e = loader.epoch(0).err().unwrap().to_string();
    assert!(e.contains("num_samples should be a positive integer value, but got num_samples=0"), "{e}");
    let e = TensorDataset::new(vec![Tensor::scalar_tensor(1.0, DType::F32)?]).err().unwrap().to_string();
    assert!(e.contains("Dimension specified as 0 but tensor has no dimensions"), "{e}");
    Ok(())
}
