//! torch.linalg.matrix_sqrth, torch.linalg.polar, torch.lobpcg, torch.linalg.cholesky_ex (the free
//! function), torch.native_layer_norm / native_batch_norm / native_group_norm, torch.constant_pad_nd
//! and torch.convolution against torch (native_ops_golden.rs, from make_native_ops_golden.py): values
//! and the gradients of `sum_k (out_k * cot_k).sum()`, the running statistics native_batch_norm
//! updates, and torch's messages for bad input.

use oxtorch_tensor::{linalg, DType, Result, Tensor};

use crate::native_ops_golden::{Case, CASES, G};

fn t(g: &G) -> Tensor {
    Tensor::from_vec(g.data.to_vec(), g.dims).unwrap()
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn close(what: &str, got: &Tensor, want: &G, tol: f64) {
    assert_eq!(got.dims(), want.dims, "{what}: shape");
    let got = got.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    for (i, (&g, &w)) in got.iter().zip(want.data).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

/// `B Bᵀ + n I`, the symmetric positive-definite matrices the linalg cases are built from.
fn sym(b: &Tensor) -> Result<Tensor> {
    let n = b.dims()[b.rank() - 1];
    let eye = Tensor::full([n], n as f64, DType::F64)?.diag_embed(0, -2, -1)?;
    b.matmul(&b.transpose(-2, -1)?)?.add(&eye)
}

/// Flips each column of `[*, n, k]` so that its largest-magnitude entry is positive (as the golden
/// eigenvectors are written).
fn sign_fix(v: &Tensor) -> Result<Tensor> {
    let dims = v.dims().to_vec();
    let (n, k) = (dims[dims.len() - 2], dims[dims.len() - 1]);
    let mut data = v.detach().to_dtype(DType::F64)?.to_vec::<f64>()?;
    for m in data.chunks_mut(n * k) {
        for j in 0..k {
            let big = (0..n).map(|i| m[i * k + j]).fold(0.0f64, |a, x| if x.abs() > a.abs() { x } else { a });
            if big < 0.0 {
                for i in 0..n {
                    m[i * k + j] = -m[i * k + j];
                }
            }
        }
    }
    Tensor::from_vec(data, dims)
}

/// Runs one case's op on its inputs.
fn run(c: &Case, x: &[Tensor]) -> Result<Vec<Tensor>> {
    let tuple3 = |r: (Tensor, Tensor, Tensor)| vec![r.0, r.1, r.2];
    Ok(match c.name {
        "matrix_sqrth_4" | "matrix_sqrth_batch" => vec![linalg::matrix_sqrth(&sym(&x[0])?)?],
        "polar_square" | "polar_tall_batch" => {
            let (u, h) = linalg::polar(&x[0])?;
            vec![u, h]
        }
        "lobpcg_largest" => {
            let (e, v) = sym(&x[0])?.lobpcg(2, true)?;
            vec![e, sign_fix(&v)?]
        }
        "lobpcg_smallest" => {
            let (e, v) = sym(&x[0])?.lobpcg(3, false)?;
            vec![e, sign_fix(&v)?]
        }
        "native_layer_norm" => tuple3(x[0].native_layer_norm(&[3, 4], Some(&x[1]), Some(&x[2]), 1e-5)?),
        "native_layer_norm_noaffine" => tuple3(x[0].native_layer_norm(&[5], None, None, 1e-3)?),
        "native_batch_norm_train" => {
            let (rm, rv) = (x[3].copy()?, x[4].copy()?);
            let (w, b) = (Some(&x[1]), Some(&x[2]));
            let mut out = tuple3(x[0].native_batch_norm(w, b, Some(&rm), Some(&rv), true, 0.2, 1e-5)?);
            out.extend([rm, rv]);
            out
        }
        "native_batch_norm_eval" => {
            let (w, b, rm, rv) = (Some(&x[1]), Some(&x[2]), Some(&x[3]), Some(&x[4]));
            tuple3(x[0].native_batch_norm(w, b, rm, rv, false, 0.1, 1e-5)?)
        }
        "native_group_norm" => tuple3(x[0].native_group_norm(Some(&x[1]), Some(&x[2]), 2, 6, 5, 3, 1e-5)?),
        "native_group_norm_flat" => tuple3(x[0].native_group_norm(None, None, 2, 4, 3, 2, 1e-5)?),
        "constant_pad_nd" => vec![x[0].constant_pad_nd(&[1, 2, -1, 1], 0.5)?],
        "convolution_1d" => vec![x[0].convolution(&x[1], Some(&x[2]), &[2], &[1], &[1], false, &[0], 1)?],
        "convolution_2d_groups" => {
            vec![x[0].convolution(&x[1], None, &[1, 2], &[1, 0], &[2, 1], false, &[0, 0], 2)?]
        }
        "convolution_transposed_1d" => {
            vec![x[0].convolution(&x[1], Some(&x[2]), &[2], &[1], &[1], true, &[1], 1)?]
        }
        other => panic!("unknown case {other}"),
    })
}

#[test]
fn native_ops_ops_match_torch_values_and_gradients() -> Result<()> {
    assert_eq!(CASES.len(), 16);
    for c in CASES {
        let inputs: Vec<Tensor> = c
            .keys
            .iter()
            .zip(c.inputs)
            .map(|(k, g)| t(g).requires_grad_(c.grad_keys.contains(k)).unwrap())
            .collect();
        let outs = run(c, &inputs)?;
        assert_eq!(outs.len(), c.outs.len(), "{}: number of outputs", c.name);
        let mut loss: Option<Tensor> = None;
        for (k, (out, (want, cot))) in outs.iter().zip(c.outs.iter().zip(c.cots)).enumerate() {
            close(&format!("{}.out{k}", c.name), out, want, 1e-9);
            if cot.data.iter().all(|&v| v == 0.0) {
                continue;
            }
            let term = out.mul(t(cot))?.sum_all()?;
            loss = Some(match loss {
                Some(l) => l.add(&term)?,
                None => term,
            });
        }
        if c.grad_keys.is_empty() {
            continue;
        }
        loss.expect("a differentiable output").backward()?;
        for (want, key) in c.grads.iter().zip(c.grad_keys) {
            let i = c.keys.iter().position(|k| k == key).expect("a named input");
            let got = inputs[i].grad().unwrap_or_else(|| panic!("{}: no gradient for {key}", c.name));
            close(&format!("{}.grad.{key}", c.name), &got, want, 1e-8);
        }
    }
    Ok(())
}

#[test]
fn native_ops_saved_statistics_carry_no_grad() -> Result<()> {
    let data: Vec<f64> = (0..24).map(|v| v as f64 * 0.3).collect();
    let x = Tensor::from_vec(data, [2, 3, 4])?.requires_grad_(true)?;
    let (out, mean, rstd) = x.native_layer_norm(&[4], None, None, 1e-5)?;
    assert!(out.requires_grad() && !mean.requires_grad() && !rstd.requires_grad());
    assert_eq!((mean.dims(), rstd.dims()), (&[2usize, 3, 1][..], &[2usize, 3, 1][..]));
    let (_, m, r) = x.native_batch_norm(None, None, None, None, true, 0.1, 1e-5)?;
    assert_eq!((m.dims(), r.dims()), (&[3usize][..], &[3usize][..]));
    assert!(!m.requires_grad());
    let (_, m, r) = x.native_group_norm(None, None, 2, 3, 4, 3, 1e-5)?;
    assert_eq!((m.dims(), r.dims()), (&[2usize, 3][..], &[2usize, 3][..]));
    // f32 in, f32 statistics.
    let h = x.detach().to_dtype(DType::F32)?;
    let (_, m, _) = h.native_layer_norm(&[4], None, None, 1e-5)?;
    assert_eq!(m.dtype(), DType::F32);
    Ok(())
}

#[test]
fn native_ops_ops_give_torch_messages_for_bad_input() -> Result<()> {
    let x = Tensor::from_vec((0..24).map(|v| v as f64).collect::<Vec<_>>(), [2, 3, 4])?;
    // linalg
    assert_eq!(
        err(linalg::matrix_sqrth(&Tensor::zeros([2, 3], DType::F64)?)),
        "linalg.matrix_sqrth: A must be batches of square matrices, but they are 2 by 3 matrices"
    );
    assert_eq!(
        err(linalg::matrix_sqrth(&Tensor::zeros([3], DType::F64)?)),
        "linalg.matrix_sqrth: The input tensor A must have at least 2 dimensions."
    );
    assert_eq!(
        err(linalg::matrix_sqrth(&Tensor::zeros([2, 2], DType::I64)?)),
        "linalg.matrix_sqrth: Expected a floating point or complex tensor as input. Got Long"
    );
    // A negative-definite input: eigenvalues clamped at zero, as torch's zeros.
    let neg = Tensor::full([2], -1.0, DType::F64)?.diag_embed(0, -2, -1)?;
    assert_eq!(linalg::matrix_sqrth(&neg)?.to_vec::<f64>()?, vec![0.0; 4]);
    assert_eq!(
        err(linalg::polar(&Tensor::zeros([2, 3], DType::F64)?)),
        "linalg.polar: input must have at least as many rows as columns, but got 2 by 3 matrices"
    );
    assert_eq!(
        err(linalg::polar(&Tensor::zeros([3, 2], DType::I64)?)),
        "linalg.polar: Expected a floating point or complex tensor as input. Got Long"
    );
    assert_eq!(
        err(Tensor::zeros([3, 3], DType::F64)?.lobpcg(2, true)),
        "LOBPCG algorithm is not applicable when the number of A rows (=3) is smaller than 3 x the number of requested eigenpairs (=2)"
    );
    assert_eq!(
        err(Tensor::zeros([9, 8], DType::F64)?.lobpcg(1, true)),
        "A must be square, got shape torch.Size([9, 8])"
    );
    // cholesky_ex as a free function: the factor and info of torch.
    let spd = Tensor::from_vec(vec![4.0, 2.0, 2.0, 3.0], [2, 2])?;
    let (l, info) = linalg::cholesky_ex(&spd, false, false)?;
    let want = [2.0, 0.0, 1.0, 2f64.sqrt()];
    for (g, w) in l.to_vec::<f64>()?.iter().zip(want) {
        assert!((g - w).abs() < 1e-12);
    }
    assert_eq!(info.to_dtype(DType::I64)?.to_vec::<i64>()?, vec![0]);
    // norms
    assert_eq!(
        err(x.native_layer_norm(&[5], None, None, 1e-5)),
        "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 3, 4]"
    );
    assert_eq!(
        err(x.native_group_norm(None, None, 2, 3, 5, 1, 1e-5)),
        "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
    );
    assert_eq!(
        err(x.native_group_norm(None, None, 2, 3, 4, 2, 1e-5)),
        "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 3, 4] and num_groups=2"
    );
    let ints = x.to_dtype(DType::I64)?;
    assert!(err(ints.native_group_norm(None, None, 2, 3, 4, 1, 1e-5)).contains("GroupNormKernelImpl"));
    assert_eq!(
        err(x.native_batch_norm(None, None, None, None, false, 0.1, 1e-5)),
        "running_mean must be defined in evaluation mode"
    );
    assert_eq!(
        err(Tensor::zeros([0, 3, 4], DType::F64)?.native_batch_norm(None, None, None, None, true, 0.1, 1e-5)),
        "input tensor must have at least one element, but got input_sizes = [0, 3, 4]"
    );
    // constant_pad_nd
    assert_eq!(err(x.constant_pad_nd(&[1], 0.0)), "Length of pad must be even but instead it equals 1");
    assert_eq!(
        err(x.constant_pad_nd(&[1, 1, 1, 1, 1, 1, 1, 1], 0.0)),
        "Length of pad should be no more than twice the number of dimensions of the input. Pad length is 8while the input has 3dimensions."
    );
    assert_eq!(err(x.constant_pad_nd(&[-3, -2], 0.0)), "narrow(): length must be non-negative.");
    // convolution
    let w4 = Tensor::zeros([5, 3, 2, 2], DType::F64)?;
    assert_eq!(
        err(x.convolution(&w4, None, &[1], &[0], &[1], false, &[0], 1)),
        "Expected 4-dimensional input for 4-dimensional weight [5, 3, 2, 2], but got 3-dimensional input of size [2, 3, 4] instead"
    );
    let w3 = Tensor::zeros([5, 3, 2], DType::F64)?;
    assert_eq!(
        err(x.convolution(&w3, None, &[1, 1], &[0], &[1], false, &[0], 1)),
        "expected stride to be a single integer value or a list of 1 values to match the convolution dimensions, but got stride=[1, 1]"
    );
    Ok(())
}

/// `v` (float64 values) shaped `dims` in `dtype`.
fn tensor_as(v: &[f64], dims: &[usize], dtype: DType) -> Tensor {
    Tensor::from_vec(v.to_vec(), dims).unwrap().to_dtype(dtype).unwrap()
}

/// `got` (any dtype, read as f64) against `want` within `tol` absolute; NaN matches NaN.
fn near(what: &str, got: &Tensor, want: &[f64], tol: f64) {
    let got = got.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: numel");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= tol || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}[{i}]: got {g}, torch {w}");
    }
}

#[test]
fn native_batch_norm_one_value_per_channel_and_mixed_dtypes() -> Result<()> {
    // torch.native_batch_norm(x.reshape(1, 3, 1), w, b, rm, rv, True, 0.1, 1e-5) with
    // x = [1, 2, 3], w = [2, 3, 4], b = [.5, .6, .7], rm = zeros(3), rv = ones(3) (torch 2.15):
    // output [.5, .6, .7] (torch's is .7001 from rounding noise), save_mean [1, 2, 3], save_invstd
    // 316.2278 each, rm [.1, .2, .3], rv NaN; no "Expected more than 1 value per channel" error.
    let x = tensor_as(&[1.0, 2.0, 3.0], &[1, 3, 1], DType::F32);
    let w = tensor_as(&[2.0, 3.0, 4.0], &[3], DType::F32);
    let b = tensor_as(&[0.5, 0.6, 0.7], &[3], DType::F32);
    let rm = Tensor::zeros([3usize], DType::F32)?;
    let rv = Tensor::ones([3usize], DType::F32)?;
    let (o, m, s) = x.native_batch_norm(Some(&w), Some(&b), Some(&rm), Some(&rv), true, 0.1, 1e-5)?;
    assert_eq!(o.dims(), &[1, 3, 1]);
    near("single.out", &o, &[0.5, 0.6, 0.7], 1e-3);
    near("single.save_mean", &m, &[1.0, 2.0, 3.0], 1e-6);
    near("single.save_invstd", &s, &[316.2278; 3], 1e-3);
    near("single.running_mean", &rm, &[0.1, 0.2, 0.3], 1e-6);
    near("single.running_var", &rv, &[f64::NAN; 3], 0.0);

    // torch.native_batch_norm(xb, w, b, rm, rv, True, 0.1, 1e-5), xb = [[1.1, 2.3], [3.7, 5.3],
    // [.3, -1.7]] in bfloat16, w = [1.5, -.5], b = [.1, .2], rm = zeros(2), rv = ones(2) float32:
    // the saved statistics are float32 (torch's mixed CPU path).
    let xb = tensor_as(&[1.1, 2.3, 3.7, 5.3, 0.3, -1.7], &[3, 2], DType::BF16);
    let w = tensor_as(&[1.5, -0.5], &[2], DType::F32);
    let b = tensor_as(&[0.1, 0.2], &[2], DType::F32);
    let rm = Tensor::zeros([2usize], DType::F32)?;
    let rv = Tensor::ones([2usize], DType::F32)?;
    let (o, m, s) = xb.native_batch_norm(Some(&w), Some(&b), Some(&rm), Some(&rv), true, 0.1, 1e-5)?;
    assert_eq!((o.dtype(), m.dtype(), s.dtype()), (DType::BF16, DType::F32, DType::F32));
    near("mixed.out", &o, &[-0.5195, 0.1426, 2.1719, -0.3809, -1.3438, 0.8398], 2e-2);
    near("mixed.save_mean", &m, &[1.7018, 1.9688], 1e-3);
    near("mixed.save_invstd", &s, &[0.6885, 0.3480], 1e-3);
    near("mixed.running_mean", &rm, &[0.1702, 0.1969], 1e-3);
    near("mixed.running_var", &rv, &[1.2164, 2.1385], 1e-3);
    // Evaluation: empty float32 statistics (torch's `tensor([])` of float32).
    let (_, m, s) = xb.native_batch_norm(None, None, Some(&rm), Some(&rv), false, 0.1, 1e-5)?;
    assert_eq!((m.dims(), m.dtype(), s.dtype()), (&[0usize][..], DType::F32, DType::F32));
    // Not mixed (bfloat16 running statistics): bfloat16 statistics.
    let rmb = Tensor::zeros([2usize], DType::BF16)?;
    let rvb = Tensor::ones([2usize], DType::BF16)?;
    let (_, m, _) = xb.native_batch_norm(None, None, Some(&rmb), Some(&rvb), true, 0.1, 1e-5)?;
    assert_eq!(m.dtype(), DType::BF16);
    // torch's mixed-dtype checks.
    assert_eq!(
        err(xb.native_batch_norm(Some(&w), None, Some(&rmb), Some(&rvb), true, 0.1, 1e-5)),
        "mixed dtype (CPU): expect parameter to have scalar type of Float"
    );
    let xd = tensor_as(&[1.0, 2.0, 3.0, 5.0], &[2, 2], DType::F64);
    assert_eq!(
        err(xd.native_batch_norm(Some(&w), None, None, None, true, 0.1, 1e-5)),
        "mixed dtype (CPU): all inputs must share same datatype."
    );
    Ok(())
}
