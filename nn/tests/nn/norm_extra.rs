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
