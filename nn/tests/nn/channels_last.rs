//! Channels-last inputs and `module.to(memory_format=...)` against PyTorch 2.15.
//!
//! The CPU kernels read any strided input (they copy it row-major first), so a channels-last
//! input must give the values of its row-major twin in every layer. PyTorch's outputs for a
//! channels-last input are channels last; oxtorch's are row-major (the values are what is
//! checked here). The module conversion's expected strides were printed by torch:
//! ```python
//! m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2))
//! m.to(memory_format=torch.channels_last)
//! [(n, p.stride()) for n, p in m.named_parameters()]   # 0.weight (27, 1, 9, 3), the rest as before
//! ```

use oxtorch_nn::utils::to_memory_format;
use oxtorch_nn::{
    AdaptiveAvgPool2d, BatchNorm2d, Conv2d, Conv3d, ConvOptions, Flatten, Forward, Linear, MaxPool2d,
    ModuleExt, ReLU, Sequential,
};
use oxtorch_tensor::{DType, MemoryFormat, Result, Tensor};

const CL: MemoryFormat = MemoryFormat::ChannelsLast;

/// Deterministic values in about [-1, 1]: `sin(0.37 i + phase)` with `dims`.
fn wave(dims: &[usize], phase: f64) -> Tensor {
    let n: usize = dims.iter().product();
    Tensor::arange(n, DType::F32)
        .unwrap()
        .mul(0.37)
        .unwrap()
        .add(phase)
        .unwrap()
        .sin()
        .unwrap()
        .reshape(dims.to_vec())
        .unwrap()
}

/// The same values within float32 rounding (the kernels may sum in another order).
fn close(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in g.iter().zip(&w).enumerate() {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{what}[{i}]: channels last {x}, row-major {y}");
    }
}

#[test]
fn layers_give_the_same_values_on_channels_last_inputs() -> Result<()> {
    let x = wave(&[2, 3, 8, 8], 0.0);
    let xc = x.contiguous_format(CL)?;
    // torch: x.contiguous(memory_format=torch.channels_last).stride() == (192, 1, 24, 3)
    assert_eq!(xc.strides(), [192, 1, 24, 3]);
    let w = wave(&[4, 3, 3, 3], 1.0).mul(0.3)?;
    let wc = w.contiguous_format(CL)?;
    let b = wave(&[4], 2.0);

    let conv = x.conv2d(&w, Some(&b), &[1], 1usize, &[1], 1)?;
    close("conv2d", &xc.conv2d(&w, Some(&b), &[1], 1usize, &[1], 1)?, &conv);
    close("conv2d, channels-last weight", &xc.conv2d(&wc, Some(&b), &[1], 1usize, &[1], 1)?, &conv);
    close(
        "conv2d, strided",
        &xc.conv2d(&wc, None, &[2], 0usize, &[1], 1)?,
        &x.conv2d(&w, None, &[2], 0usize, &[1], 1)?,
    );

    let (g, beta) = (wave(&[3], 0.5), wave(&[3], 1.5));
    close(
        "batch_norm (training)",
        &xc.batch_norm(None, None, Some(&g), Some(&beta), true, 0.1, 1e-5)?,
        &x.batch_norm(None, None, Some(&g), Some(&beta), true, 0.1, 1e-5)?,
    );
    let (rm, rv) = (wave(&[3], 0.2), wave(&[3], 0.7).abs()?.add(0.5)?);
    close(
        "batch_norm (eval)",
        &xc.batch_norm(Some(&rm), Some(&rv), Some(&g), Some(&beta), false, 0.1, 1e-5)?,
        &x.batch_norm(Some(&rm), Some(&rv), Some(&g), Some(&beta), false, 0.1, 1e-5)?,
    );
    close(
        "max_pool2d",
        &xc.max_pool2d(&[2], None, &[0], &[1], false)?,
        &x.max_pool2d(&[2], None, &[0], &[1], false)?,
    );
    close(
        "max_pool2d 3x3 stride 2 pad 1",
        &xc.max_pool2d(&[3], Some(&[2]), &[1], &[1], true)?,
        &x.max_pool2d(&[3], Some(&[2]), &[1], &[1], true)?,
    );
    close(
        "interpolate bilinear",
        &xc.interpolate(Some(&[5, 7]), None, "bilinear", Some(false))?,
        &x.interpolate(Some(&[5, 7]), None, "bilinear", Some(false))?,
    );
    close(
        "interpolate nearest",
        &xc.interpolate(None, Some(&[2.0]), "nearest", None)?,
        &x.interpolate(None, Some(&[2.0]), "nearest", None)?,
    );
    close(
        "interpolate bicubic align_corners",
        &xc.interpolate(Some(&[11, 6]), None, "bicubic", Some(true))?,
        &x.interpolate(Some(&[11, 6]), None, "bicubic", Some(true))?,
    );
    close("adaptive_avg_pool2d", &xc.adaptive_avg_pool2d(&[2, 3])?, &x.adaptive_avg_pool2d(&[2, 3])?);
    close("adaptive_avg_pool2d 1", &xc.adaptive_avg_pool2d(&[1])?, &x.adaptive_avg_pool2d(&[1])?);
    close("relu", &xc.relu()?, &x.relu()?);
    close("exp", &xc.exp()?, &x.exp()?);
    close("add", &xc.add(&x)?, &x.mul(2.0)?);
    close("mul", &xc.mul(&xc)?, &x.mul(&x)?);
    close(
        "sub broadcast",
        &xc.sub(&b.reshape([1, 4, 1, 1])?.narrow(1, 0, 3)?)?,
        &x.sub(&b.reshape([1, 4, 1, 1])?.narrow(1, 0, 3)?)?,
    );
    close("sum over channels", &xc.sum([1], false)?, &x.sum([1], false)?);
    Ok(())
}

/// A small network: conv, batch norm, relu, max pool, conv, adaptive average pool, linear.
fn net() -> Result<Sequential> {
    let pad1 = ConvOptions { padding: 1usize.into(), ..ConvOptions::default() };
    Ok(Sequential::new()
        .add(Conv2d::new(3, 4, &[3], pad1.clone())?)
        .add(BatchNorm2d::new_2d(4)?)
        .add(ReLU {})
        .add(MaxPool2d::new(&[2]))
        .add(Conv2d::new(4, 5, &[3], pad1)?)
        .add(AdaptiveAvgPool2d::new(&[2, 2]))
        .add(Flatten::default())
        .add(Linear::new(20, 2, true)?))
}

#[test]
fn a_conv_net_gives_the_same_values_and_gradients_in_either_format() -> Result<()> {
    let mut m = net()?;
    let x = wave(&[2, 3, 8, 8], 0.3);
    let want = m.forward(&x)?;
    // The input in channels last.
    close("net, channels-last input", &m.forward(&x.contiguous_format(CL)?)?, &want);
    // Gradients through the conversion and the network.
    let xg = x.requires_grad_(true)?;
    m.forward(&xg)?.sum_all()?.backward()?;
    let want_grad = xg.grad().expect("x.grad");
    let xg2 = x.detach().requires_grad_(true)?;
    m.forward(&xg2.contiguous_format(CL)?)?.sum_all()?.backward()?;
    close("input gradient through channels last", &xg2.grad().expect("x.grad"), &want_grad);
    // The module converted too.
    m.zero_grad()?;
    to_memory_format(&mut m, CL)?;
    close("converted net, channels-last input", &m.forward(&x.contiguous_format(CL)?)?, &want);
    close("converted net, row-major input", &m.forward(&x)?, &want);
    // It still trains: gradients reach the converted weights.
    m.forward(&x.contiguous_format(CL)?)?.sum_all()?.backward()?;
    for (name, p) in m.named_parameters() {
        let g = p.grad().unwrap_or_else(|| panic!("{name} has no gradient"));
        assert_eq!(g.dims(), p.dims(), "{name}");
    }
    Ok(())
}

#[test]
fn module_conversion_changes_only_four_d_tensors() -> Result<()> {
    let mut m = Sequential::new()
        .add(Conv2d::new(3, 4, &[3], ConvOptions::default())?)
        .add(BatchNorm2d::new_2d(4)?)
        .add(ReLU {})
        .add(Flatten::default())
        .add(Linear::new(64, 2, true)?);
    let before: Vec<(String, Tensor)> = m.named_parameters().into_iter().chain(m.named_buffers()).collect();
    let x = wave(&[2, 3, 6, 6], 0.1);
    let want = m.forward(&x)?;
    to_memory_format(&mut m, CL)?;
    let after: Vec<(String, Tensor)> = m.named_parameters().into_iter().chain(m.named_buffers()).collect();
    assert_eq!(before.len(), after.len());
    for ((name, old), (name2, new)) in before.iter().zip(&after) {
        assert_eq!(name, name2);
        if name == "0.weight" {
            // torch: 0.weight (4, 3, 3, 3) stride (27, 1, 9, 3)
            assert_eq!(new.strides(), [27, 1, 9, 3]);
            assert_eq!(old.strides(), [27, 9, 3, 1]);
            assert!(!new.is_same(old));
            assert!(new.requires_grad() && new.is_leaf());
            assert_eq!(new.to_vec::<f32>()?, old.to_vec::<f32>()?);
        } else {
            // torch: 0.bias (1,), 1.weight (1,), 4.weight (64, 1), 1.running_mean (1,), ...
            assert!(new.is_same(old), "{name} must stay the same tensor");
        }
    }
    close("converted module", &m.forward(&x)?, &want);
    // Converting again changes nothing: the weight already suggests channels last.
    let w = m.named_parameters()[0].1.clone();
    to_memory_format(&mut m, CL)?;
    assert!(m.named_parameters()[0].1.is_same(&w));
    // And back to row-major.
    to_memory_format(&mut m, MemoryFormat::Contiguous)?;
    assert_eq!(m.named_parameters()[0].1.strides(), [27, 9, 3, 1]);
    Ok(())
}

#[test]
fn module_conversion_follows_torchs_ambiguous_cases_and_errors() -> Result<()> {
    // torch: nn.Conv2d(2, 3, 1).weight.stride() == (2, 1, 1, 1); after .to(channels_last): (2, 1, 2, 2)
    let mut c = Conv2d::new(2, 3, &[1], ConvOptions::default())?;
    assert_eq!(c.weight.strides(), [2, 1, 1, 1]);
    to_memory_format(&mut c, CL)?;
    assert_eq!(c.weight.strides(), [2, 1, 2, 2]);
    // torch: nn.Conv2d(1, 3, 2): (4, 4, 2, 1) becomes (4, 1, 2, 1)
    let mut c = Conv2d::new(1, 3, &[2], ConvOptions::default())?;
    assert_eq!(c.weight.strides(), [4, 4, 2, 1]);
    to_memory_format(&mut c, CL)?;
    assert_eq!(c.weight.strides(), [4, 1, 2, 1]);
    // torch converts the gradient too: c.weight.grad.stride() == (8, 1, 4, 2)
    let mut c = Conv2d::new(2, 3, &[2], ConvOptions::default())?;
    c.weight.set_grad(Some(Tensor::ones([3, 2, 2, 2], DType::F32)?))?;
    to_memory_format(&mut c, CL)?;
    assert_eq!(c.weight.grad().expect("grad kept").strides(), [8, 1, 4, 2]);
    assert!(c.weight.requires_grad());

    // torch: nn.Conv3d(2, 3, 2).to(memory_format=torch.channels_last) raises; nothing changes here.
    let mut c3 = Conv3d::new(2, 3, &[2], ConvOptions::default())?;
    let w3 = c3.weight.clone();
    assert_eq!(
        to_memory_format(&mut c3, CL).unwrap_err().to_string(),
        "required rank 4 tensor to use channels_last format"
    );
    assert!(c3.weight.is_same(&w3));
    // torch: nn.Conv3d(2, 3, 2).to(memory_format=torch.channels_last_3d).weight.stride() == (16, 1, 8, 4, 2)
    to_memory_format(&mut c3, MemoryFormat::ChannelsLast3d)?;
    assert_eq!(c3.weight.strides(), [16, 1, 8, 4, 2]);
    // torch: nn.Conv2d(2, 3, 2).to(memory_format=torch.channels_last_3d) raises.
    let mut c = Conv2d::new(2, 3, &[2], ConvOptions::default())?;
    assert_eq!(
        to_memory_format(&mut c, MemoryFormat::ChannelsLast3d).unwrap_err().to_string(),
        "required rank 5 tensor to use channels_last_3d format"
    );
    // Preserve changes nothing.
    let w = c.weight.clone();
    to_memory_format(&mut c, MemoryFormat::Preserve)?;
    assert!(c.weight.is_same(&w));
    Ok(())
}
