//! `grid_sample`, `affine_grid`, `max_unpool1d/2d/3d` and `MaxUnpool1d/2d/3d` against PyTorch: in
//! float64, the outputs and gradients of every case of `grid_sample_and_max_unpool_golden.rs` (written by
//! `nn/tests/make_grid_sample_and_max_unpool_golden.py`), the interpolating cases again in float32, the modules'
//! round trips with max pooling, empty inputs, and torch's argument errors, in its words.

use oxtorch_nn::functional as F;
use oxtorch_nn::{MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, Module, ModuleExt};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, float64, int64, Inputs, T};

/// One case of the golden file (the integer inputs are listed in [`INTS`], the others float64).
struct Golden {
    name: &'static str,
    /// `(name, values)`
    inputs: &'static [(&'static str, T)],
    out: T,
    /// the cotangent: the golden gradients are those of `(out * cot).sum()`
    cot: T,
    /// `(input name, gradient of (out * cot).sum())`
    grads: &'static [(&'static str, T)],
}

include!("grid_sample_and_max_unpool_golden.rs");

/// The inputs that are integers: int64 tensors, or integer arguments of the call.
const INTS: &[&str] = &["indices", "size", "kernel", "stride", "padding", "osize"];

impl Inputs {
    /// An integer input as a list of sizes.
    fn ints(&self, k: &str) -> Vec<usize> {
        self.t(k).to_vec::<i64>().unwrap().into_iter().map(|v| v as usize).collect()
    }
}

/// The inputs of a case: the integer ones as int64, the others leaves of `dtype` (requiring grad
/// when differentiated).
fn inputs_in(g: &Golden, dtype: DType) -> Inputs {
    Inputs(
        g.inputs
            .iter()
            .map(|(k, v)| {
                let t = if INTS.contains(k) {
                    int64(v)
                } else {
                    let t = float64(v).to_dtype(dtype).unwrap();
                    t.requires_grad_(g.grads.iter().any(|(n, _)| n == k)).unwrap()
                };
                (*k, t)
            })
            .collect(),
    )
}

/// `max_unpool{n}d`, or the round trip `max_unpool{n}d(max_pool{n}d_with_indices(x))`.
fn unpool(n: usize, c: &Inputs) -> Result<Tensor> {
    let (k, s, p) = (c.ints("kernel"), c.ints("stride"), c.ints("padding"));
    let osize = c.get("osize").map(|_| c.ints("osize"));
    let stride = Some(s.as_slice());
    let (o, i) = match c.get("indices") {
        Some(i) => (c.t("input").clone(), i.clone()),
        None => {
            let x = c.t("x");
            match n {
                1 => F::max_pool1d_with_indices(x, &k, stride, &p, &[1], false)?,
                2 => F::max_pool2d_with_indices(x, &k, stride, &p, &[1], false)?,
                _ => F::max_pool3d_with_indices(x, &k, stride, &p, &[1], false)?,
            }
        }
    };
    match n {
        1 => F::max_unpool1d(&o, &i, &k, stride, &p, osize.as_deref()),
        2 => F::max_unpool2d(&o, &i, &k, stride, &p, osize.as_deref()),
        _ => F::max_unpool3d(&o, &i, &k, stride, &p, osize.as_deref()),
    }
}

/// The call each case makes (the same arguments as the script's), read from its name.
fn call(name: &str, c: &Inputs) -> Result<Tensor> {
    let parts: Vec<&str> = name.split('_').collect();
    let ac = name.ends_with("_ac1");
    match parts[0] {
        "gs2d" | "gs3d" => F::grid_sample(c.t("input"), c.t("grid"), parts[1], parts[2], ac),
        "ag4d" | "ag5d" => F::affine_grid(c.t("theta"), &c.ints("size"), ac),
        "stn" => {
            let grid = F::affine_grid(c.t("theta"), &c.ints("size"), ac)?;
            F::grid_sample(c.t("input"), &grid, "bilinear", "zeros", ac)
        }
        "mu1d" => unpool(1, c),
        "mu2d" => unpool(2, c),
        "mu3d" => unpool(3, c),
        other => panic!("no call for golden case {other}"),
    }
}

/// Unpooling moves values and gradients without arithmetic: exact, but for overlapping pooling
/// windows, whose shared maximum sums its gradients (maybe in another order than torch's). The
/// rest may round in another order than torch's kernels.
fn tol(name: &str) -> f64 {
    if name.contains("overlap") {
        1e-14
    } else if name.starts_with("mu") {
        0.0
    } else {
        1e-12
    }
}

#[test]
fn vision_ops_match_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 63, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = inputs_in(g, DType::F64);
        let out = call(g.name, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_close(&format!("{}.out", g.name), &out, &g.out, tol(g.name));
        out.mul(float64(&g.cot))?.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            assert_close(&format!("{}.grad.{k}", g.name), &got, want, tol(g.name));
        }
    }
    Ok(())
}

/// The interpolating cases in float32 (nearest is left out: a coordinate on a half pixel in
/// float64 may round the other way in float32).
#[test]
fn vision_ops_in_float32() -> Result<()> {
    let mut seen = 0;
    for g in GOLDEN.iter().filter(|g| !g.name.contains("nearest") && !g.name.starts_with("mu")) {
        let inputs = inputs_in(g, DType::F32);
        let out = call(g.name, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(out.dtype(), DType::F32, "{}", g.name);
        assert_close(&format!("{}.out (f32)", g.name), &out.to_dtype(DType::F64)?, &g.out, 1e-4);
        out.mul(float64(&g.cot).to_dtype(DType::F32)?)?.sum_all()?.backward()?;
        for (k, want) in g.grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
            assert_eq!(got.dtype(), DType::F32);
            assert_close(&format!("{}.grad.{k} (f32)", g.name), &got.to_dtype(DType::F64)?, want, 1e-4);
        }
        seen += 1;
    }
    assert_eq!(seen, 24 + 8 + 2);
    Ok(())
}

/// The grid's gradient alone (the input not requiring one), and the input's alone.
#[test]
fn grid_sample_gradients_one_input_at_a_time() -> Result<()> {
    for name in ["gs2d_bilinear_reflection_ac0", "gs3d_bicubic_border_ac1", "gs2d_nearest_zeros_ac1"] {
        let g = GOLDEN.iter().find(|g| g.name == name).expect("a golden case");
        let find = |k: &str| &g.inputs.iter().find(|(n, _)| *n == k).expect("an input").1;
        let want = |k: &str| &g.grads.iter().find(|(n, _)| *n == k).expect("a gradient").1;
        let (mode, pad, ac) =
            (name.split('_').nth(1).unwrap(), name.split('_').nth(2).unwrap(), name.ends_with('1'));
        let grid = float64(find("grid")).requires_grad_(true)?;
        let out = F::grid_sample(&float64(find("input")), &grid, mode, pad, ac)?;
        out.mul(float64(&g.cot))?.sum_all()?.backward()?;
        assert_close(
            &format!("{name}: grid alone"),
            &grid.grad().expect("a grid gradient"),
            want("grid"),
            1e-12,
        );
        let input = float64(find("input")).requires_grad_(true)?;
        let out = F::grid_sample(&input, &float64(find("grid")), mode, pad, ac)?;
        out.mul(float64(&g.cot))?.sum_all()?.backward()?;
        assert_close(
            &format!("{name}: input alone"),
            &input.grad().expect("an input gradient"),
            want("input"),
            1e-12,
        );
    }
    Ok(())
}

fn err(r: Result<Tensor>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn grid_sample_argument_errors_are_torchs() -> Result<()> {
    let x = Tensor::zeros([2, 3, 4, 5], DType::F32)?;
    let g = Tensor::zeros([2, 6, 7, 2], DType::F32)?;
    let gs = |x: &Tensor, g: &Tensor| F::grid_sample(x, g, "bilinear", "zeros", false);
    // torch: ValueError: nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or
    // 'bicubic', but got: 'foo'
    assert_eq!(
        err(F::grid_sample(&x, &g, "foo", "zeros", false)),
        "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'foo'"
    );
    assert_eq!(
        err(F::grid_sample(&x, &g, "bilinear", "foo", false)),
        "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'foo'"
    );
    // torch: RuntimeError: grid_sampler(): expected grid and input to have same batch size, ...
    assert_eq!(
        err(gs(&x, &Tensor::zeros([1, 6, 7, 2], DType::F32)?)),
        "grid_sampler(): expected grid and input to have same batch size, but got input with sizes [2, 3, 4, 5] and grid with sizes [1, 6, 7, 2]"
    );
    // (the batch size is checked before the dtype)
    assert_eq!(
        err(gs(&x.to_dtype(DType::F64)?, &Tensor::zeros([1, 6, 7, 2], DType::F32)?)),
        "grid_sampler(): expected grid and input to have same batch size, but got input with sizes [2, 3, 4, 5] and grid with sizes [1, 6, 7, 2]"
    );
    assert_eq!(
        err(gs(&x, &Tensor::zeros([2, 6, 7, 3], DType::F32)?)),
        "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes [2, 6, 7, 3]"
    );
    assert_eq!(
        err(gs(&x, &Tensor::zeros([2, 6, 2], DType::F32)?)),
        "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes [2, 3, 4, 5] and grid with sizes [2, 6, 2]"
    );
    assert_eq!(
        err(gs(&Tensor::zeros([2, 3, 4], DType::F32)?, &Tensor::zeros([2, 6, 2], DType::F32)?)),
        "grid_sampler(): expected grid to have size 1 in last dimension, but got grid with sizes [2, 6, 2]"
    );
    assert_eq!(
        err(gs(&Tensor::zeros([2, 3, 4, 5, 6], DType::F32)?, &Tensor::zeros([2, 6, 7, 3], DType::F32)?)),
        "grid_sampler(): expected 5D input and grid with same number of dimensions, but got input with sizes [2, 3, 4, 5, 6] and grid with sizes [2, 6, 7, 3]"
    );
    assert_eq!(
        err(gs(&Tensor::zeros([2, 3, 0, 5], DType::F32)?, &g)),
        "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes [2, 3, 0, 5] with dimension 2 being empty"
    );
    // torch: RuntimeError: expected scalar type Float but found Double
    assert_eq!(err(gs(&x, &g.to_dtype(DType::F64)?)), "expected scalar type Float but found Double");
    assert_eq!(err(gs(&x.to_dtype(DType::F64)?, &g)), "expected scalar type Double but found Float");
    // torch: NotImplementedError: "grid_sampler_2d_cpu_kernel_impl" not implemented for 'Long'
    assert_eq!(
        err(gs(&x.to_dtype(DType::I64)?, &g)),
        "\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Long'"
    );
    assert_eq!(
        err(gs(&Tensor::zeros([2, 3, 4, 5, 6], DType::I32)?, &Tensor::zeros([2, 6, 7, 4, 3], DType::I32)?)),
        "\"grid_sampler3d_cpu\" not implemented for 'Int'"
    );
    // Empty channels, batches or grids: torch's shapes.
    assert_eq!(gs(&Tensor::zeros([2, 0, 4, 5], DType::F32)?, &g)?.dims(), &[2, 0, 6, 7]);
    assert_eq!(gs(&x, &Tensor::zeros([2, 0, 7, 2], DType::F32)?)?.dims(), &[2, 3, 0, 7]);
    assert_eq!(
        gs(&Tensor::zeros([0, 3, 4, 5], DType::F32)?, &Tensor::zeros([0, 6, 7, 2], DType::F32)?)?.dims(),
        &[0, 3, 6, 7]
    );
    Ok(())
}

#[test]
fn affine_grid_argument_errors_are_torchs() -> Result<()> {
    let t = Tensor::zeros([2, 2, 3], DType::F32)?;
    // torch: ValueError: Expected theta to have floating point type, but got torch.int64
    assert_eq!(
        err(F::affine_grid(&t.to_dtype(DType::I64)?, &[2, 3, 4, 5], false)),
        "Expected theta to have floating point type, but got torch.int64"
    );
    assert_eq!(
        err(F::affine_grid(&t, &[2, 3, 4, 5, 6], false)),
        "Expected a batch of 3D affine matrices of shape Nx3x4 for size [2, 3, 4, 5, 6]. Got torch.Size([2, 2, 3])."
    );
    assert_eq!(
        err(F::affine_grid(&Tensor::zeros([2, 3, 4], DType::F32)?, &[2, 3, 4, 5], false)),
        "Expected a batch of 2D affine matrices of shape Nx2x3 for size [2, 3, 4, 5]. Got torch.Size([2, 3, 4])."
    );
    assert_eq!(
        err(F::affine_grid(&Tensor::zeros([2, 2, 3, 4], DType::F32)?, &[2, 3, 4, 5], false)),
        "Expected a batch of 2D affine matrices of shape Nx2x3 for size [2, 3, 4, 5]. Got torch.Size([2, 2, 3, 4])."
    );
    // torch: NotImplementedError
    assert_eq!(
        err(F::affine_grid(&t, &[2, 3, 4], false)),
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size [2, 3, 4]."
    );
    assert_eq!(
        err(F::affine_grid(&t, &[2, 3, 0, 5], false)),
        "Expected non-zero, positive output size. Got [2, 3, 0, 5]"
    );
    assert_eq!(
        err(F::affine_grid(&t, &[2, 0, 4, 5], true)),
        "Expected non-zero, positive output size. Got [2, 0, 4, 5]"
    );
    // With align_corners and a unit spatial size torch only warns, and checks nothing else.
    assert_eq!(F::affine_grid(&t, &[2, 0, 1, 5], true)?.dims(), &[2, 1, 5, 2]);
    // A batch other than theta's: bmm's error.
    assert_eq!(
        err(F::affine_grid(&t, &[3, 3, 4, 5], false)),
        "Expected size for first two dimensions of batch2 tensor to be: [3, 3] but got: [2, 3]."
    );
    assert_eq!(
        err(F::affine_grid(&Tensor::zeros([2, 3, 4], DType::F32)?, &[3, 3, 4, 5, 6], false)),
        "Expected size for first two dimensions of batch2 tensor to be: [3, 4] but got: [2, 4]."
    );
    // float16 and float32 thetas give grids of their dtype.
    for dtype in [DType::F16, DType::F32] {
        let grid = F::affine_grid(&t.to_dtype(dtype)?, &[2, 3, 4, 5], false)?;
        assert_eq!((grid.dims(), grid.dtype()), (&[2usize, 4, 5, 2][..], dtype));
    }
    Ok(())
}

#[test]
fn max_unpool_argument_errors_are_torchs() -> Result<()> {
    let x = Tensor::from_vec((0..32).map(|i| ((i * 13) % 32) as f32).collect::<Vec<_>>(), [1, 2, 4, 4])?;
    let (o, i) = F::max_pool2d_with_indices(&x, &[2], None, &[0], &[1], false)?;
    let un2 =
        |o: &Tensor, i: &Tensor, k: &[usize], s: Option<&[usize]>, p: &[usize], os: Option<&[usize]>| {
            F::max_unpool2d(o, i, k, s, p, os)
        };
    // torch: RuntimeError: elements in indices should be type int64 but got: Int
    assert_eq!(
        err(un2(&o, &i.to_dtype(DType::I32)?, &[2], None, &[0], None)),
        "elements in indices should be type int64 but got: Int"
    );
    // torch: ValueError (the Python front end's checks of output_size)
    assert_eq!(
        err(un2(&o, &i, &[2], None, &[0], Some(&[5][..]))),
        "output_size should be a sequence containing 2 or 4 elements, but it has a length of '1'"
    );
    assert_eq!(
        err(un2(&o, &i, &[2], None, &[0], Some(&[6, 4][..]))),
        "invalid output_size \"[6, 4]\" (dim 0 must be between 2 and 6)"
    );
    assert_eq!(
        err(un2(&o, &i, &[2], None, &[0], Some(&[1, 2, 4, 2][..]))),
        "invalid output_size \"[4, 2]\" (dim 1 must be between 2 and 6)"
    );
    assert_eq!(
        err(un2(&o, &i, &[2], None, &[3], None)),
        "max_unpooling: output_size must contain non-negative spatial dimensions, but got output_size[0]=-2"
    );
    assert_eq!(
        err(un2(&o, &i.narrow(1, 0, 1)?, &[2], None, &[0], None)),
        "Expected shape of indices to be same as that of the input tensor ([1, 2, 2, 2]) but got indices tensor with shape: [1, 1, 2, 2]"
    );
    assert_eq!(
        err(un2(
            &o.reshape([2, 2, 2])?.select(0, 0)?,
            &i.reshape([2, 2, 2])?.select(0, 0)?,
            &[2],
            None,
            &[0],
            None
        )),
        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 dimensions."
    );
    assert_eq!(
        err(un2(&o.unsqueeze(0)?, &i.unsqueeze(0)?, &[2], None, &[0], None)),
        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 5 dimensions."
    );
    // torch's kernel reports the last invalid index it meets (in a single thread: with several,
    // whichever thread writes last).
    assert_eq!(
        err(un2(&o, &i.add(10i64)?, &[2], None, &[0], None)),
        format!(
            "Found an invalid max index: {} (output volumes are of size 4x4)",
            i.to_vec::<i64>()?.last().unwrap() + 10
        )
    );
    assert_eq!(
        err(un2(&o, &i.sub(20i64)?, &[2], None, &[0], None)),
        format!(
            "Found an invalid max index: {} (output volumes are of size 4x4)",
            i.to_vec::<i64>()?[7] - 20
        )
    );
    // torch: NotImplementedError: "max_unpool2d" not implemented for 'Long'
    assert_eq!(
        err(un2(&o.to_dtype(DType::I64)?, &i, &[2], None, &[0], None)),
        "\"max_unpool2d\" not implemented for 'Long'"
    );
    let empty = Tensor::zeros([1, 0, 2, 2], DType::F32)?;
    assert_eq!(
        err(un2(&empty, &empty.to_dtype(DType::I64)?, &[2], None, &[0], None)),
        "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 0, 2, 2] with dimension 1 being empty"
    );
    // An empty batch, and (unchecked by torch) empty unbatched channels, give empty outputs; so
    // does an empty output size, whatever the indices.
    let e = Tensor::zeros([0, 2, 2, 2], DType::F32)?;
    assert_eq!(un2(&e, &e.to_dtype(DType::I64)?, &[2], None, &[0], None)?.dims(), &[0, 2, 4, 4]);
    let e = Tensor::zeros([0, 2, 2], DType::F32)?;
    assert_eq!(un2(&e, &e.to_dtype(DType::I64)?, &[2], None, &[0], None)?.dims(), &[0, 4, 4]);
    assert_eq!(un2(&o, &i.add(100i64)?, &[1], None, &[1], None)?.dims(), &[1, 2, 0, 0]);

    // 1-D runs as 2-D on a trailing unit dim: torch's messages name that op and those shapes.
    let x1 = Tensor::from_vec((0..16).map(|i| ((i * 5) % 16) as f32).collect::<Vec<_>>(), [1, 2, 8])?;
    let (o1, i1) = F::max_pool1d_with_indices(&x1, &[2], None, &[0], &[1], false)?;
    assert_eq!(
        err(F::max_unpool1d(&o1, &i1.narrow(1, 0, 1)?, &[2], None, &[0], None)),
        "Expected shape of indices to be same as that of the input tensor ([1, 2, 4, 1]) but got indices tensor with shape: [1, 1, 4, 1]"
    );
    assert_eq!(
        err(F::max_unpool1d(&o1.unsqueeze(0)?, &i1.unsqueeze(0)?, &[2], None, &[0], None)),
        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 5 dimensions."
    );
    assert_eq!(
        err(F::max_unpool1d(&o1, &i1.add(20i64)?, &[2], None, &[0], None)),
        format!(
            "Found an invalid max index: {} (output volumes are of size 8x1)",
            i1.to_vec::<i64>()?.last().unwrap() + 20
        )
    );
    assert_eq!(
        err(F::max_unpool1d(&o1, &i1, &[2], None, &[0], Some(&[3][..]))),
        "invalid output_size \"[3]\" (dim 0 must be between 6 and 10)"
    );
    assert_eq!(
        err(F::max_unpool1d(&o1, &i1, &[2], None, &[0], Some(&[1, 9][..]))),
        "output_size should be a sequence containing 1 or 3 elements, but it has a length of '2'"
    );
    assert_eq!(
        err(F::max_unpool1d(&o1.to_dtype(DType::I64)?, &i1, &[2], None, &[0], None)),
        "\"max_unpool2d\" not implemented for 'Long'"
    );

    // 3-D: its own messages, and its check of the stride.
    let x3 =
        Tensor::from_vec((0..128).map(|i| ((i * 37) % 128) as f32).collect::<Vec<_>>(), [1, 2, 4, 4, 4])?;
    let (o3, i3) = F::max_pool3d_with_indices(&x3, &[2], None, &[0], &[1], false)?;
    assert_eq!(
        err(F::max_unpool3d(
            &o3.select(0, 0)?.select(0, 0)?,
            &i3.select(0, 0)?.select(0, 0)?,
            &[2],
            None,
            &[0],
            None
        )),
        "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 dimensions."
    );
    assert_eq!(
        err(F::max_unpool3d(&o3, &i3.narrow(1, 0, 1)?, &[2], Some(&[0][..]), &[0], None)),
        "Expected shape of indices to be same as that of the input tensor ([1, 2, 2, 2, 2]) but got indices tensor with shape: [1, 1, 2, 2, 2]"
    );
    assert_eq!(
        err(F::max_unpool3d(&o3, &i3, &[2], Some(&[1, 0, 1][..]), &[0], None)),
        "strides should be greater than zero, but got stride: [1, 0, 1]"
    );
    assert_eq!(
        err(F::max_unpool3d(&o3, &i3, &[2], None, &[0], Some(&[3, 4, 4][..]))),
        format!(
            "Found an invalid max index: {} (output volumes are of size 3x4x4)",
            i3.to_vec::<i64>()?.iter().rev().find(|&&v| v >= 48).unwrap()
        )
    );
    assert_eq!(
        err(F::max_unpool3d(&o3.to_dtype(DType::I64)?, &i3, &[2], None, &[0], None)),
        "\"max_unpool3d\" not implemented for 'Long'"
    );
    let e3 = Tensor::zeros([1, 0, 2, 2, 2], DType::F32)?;
    assert_eq!(
        err(F::max_unpool3d(&e3, &e3.to_dtype(DType::I64)?, &[2], Some(&[0][..]), &[0], None)),
        "max_unpooling3d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 0, 2, 2, 2] with dimension 1 being empty"
    );
    // A size list of another length.
    assert_eq!(
        err(F::max_unpool3d(&o3, &i3, &[2, 2], None, &[0], None)),
        "max_unpool3d: kernel_size must be either a single int, or a tuple of 3 ints, got 2 values"
    );
    Ok(())
}

/// `nn.MaxUnpool1d/2d/3d`: no state, torch's names and defaults, the inverse of `MaxPool{N}d`'s
/// `return_indices` (each maximum back in its place, zeros elsewhere), the functional forms.
#[test]
fn max_unpool_modules_round_trip_max_pool() -> Result<()> {
    let x = Tensor::from_vec((0..50).map(|i| ((i * 7) % 50) as f32 + 1.0).collect::<Vec<_>>(), [1, 2, 5, 5])?;
    let (o, i) = MaxPool2d::new(&[2]).forward_with_indices(&x)?;
    let un = MaxUnpool2d::new(&[2]);
    assert_eq!(un.type_name(), "MaxUnpool2d");
    assert_eq!((un.stride.clone(), un.padding.clone()), (None, vec![0]));
    assert!(un.state_dict().keys().next().is_none() && un.named_parameters().is_empty());
    let y = un.forward(&o, &i, Some(&[5, 5][..]))?;
    assert_eq!(y.dims(), &[1, 2, 5, 5]);
    let (xv, yv) = (x.to_vec::<f32>()?, y.to_vec::<f32>()?);
    assert!(xv.iter().zip(&yv).all(|(a, b)| *b == 0.0 || a == b));
    assert_eq!(yv.iter().filter(|v| **v != 0.0).count(), 8);
    // Pooling the unpooled output gives the pooled values back.
    assert!(MaxPool2d::new(&[2]).forward_with_indices(&y)?.0.equal(&o)?);
    // The default output size: 4 x 4 for a 4 x 4 input.
    let x4 = x.narrow(2, 0, 4)?.narrow(3, 0, 4)?;
    let (o4, i4) = MaxPool2d::new(&[2]).forward_with_indices(&x4)?;
    let y4 = un.forward(&o4, &i4, None)?;
    assert_eq!(y4.dims(), &[1, 2, 4, 4]);
    assert!(y4.equal(&F::max_unpool2d(&o4, &i4, &[2], None, &[0], None)?)?);
    assert!(MaxPool2d::new(&[2]).forward_with_indices(&y4)?.1.equal(&i4)?);

    let x1 = Tensor::from_vec((0..12).map(|i| ((i * 5) % 12) as f64).collect::<Vec<_>>(), [2, 6])?;
    let mut pool1 = MaxPool1d::new(&[3]);
    pool1.stride = Some(vec![2]);
    pool1.padding = vec![1];
    let (o1, i1) = pool1.forward_with_indices(&x1)?;
    let mut un1 = MaxUnpool1d::new(&[3]);
    un1.stride = Some(vec![2]);
    un1.padding = vec![1];
    assert_eq!(un1.type_name(), "MaxUnpool1d");
    let y1 = un1.forward(&o1, &i1, None)?;
    assert_eq!(y1.dims(), &[2, 5]);
    assert!(y1.equal(&F::max_unpool1d(&o1, &i1, &[3], Some(&[2][..]), &[1], None)?)?);
    assert_eq!(un1.forward(&o1, &i1, Some(&[6][..]))?.dims(), &[2, 6]);

    let x3 = Tensor::from_vec((0..64).map(|i| ((i * 29) % 64) as f32).collect::<Vec<_>>(), [1, 4, 4, 4])?;
    let (o3, i3) = MaxPool3d::new(&[2]).forward_with_indices(&x3)?;
    let un3 = MaxUnpool3d::new(&[2]);
    assert_eq!(un3.type_name(), "MaxUnpool3d");
    let y3 = un3.forward(&o3, &i3, None)?;
    assert_eq!(y3.dims(), &[1, 4, 4, 4]);
    assert_eq!(y3.sum_all()?.item::<f32>()?, o3.sum_all()?.item::<f32>()?);
    assert!(MaxPool3d::new(&[2]).forward_with_indices(&y3)?.1.equal(&i3)?);
    Ok(())
}
