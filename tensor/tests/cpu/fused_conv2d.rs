//! The CPU convolution kernel (`NnOp::Conv2d`, taken by 1-D and 2-D convolutions on the CPU) against
//! the im2col + matmul form that 3-D convolutions take (a 2-D convolution is a 3-D one of depth 1):
//! strides, padding, dilation, groups, bias, non-contiguous inputs, every float dtype, shapes that
//! split the output into several row bands, and the gradients of its backward formula.

use oxtorch_tensor::{DType, Padding, Result, Tensor};

/// One convolution geometry: input `[b, c, h, w]`, `cout`, kernel, stride, padding, dilation, groups.
struct Case {
    x: [usize; 4],
    cout: usize,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    groups: usize,
}

const CASES: [Case; 7] = [
    // the bench shape, shrunk
    Case {
        x: [2, 8, 14, 14],
        cout: 8,
        kernel: [3, 3],
        stride: [1, 1],
        padding: [1, 1],
        dilation: [1, 1],
        groups: 1,
    },
    Case {
        x: [1, 6, 11, 9],
        cout: 4,
        kernel: [3, 2],
        stride: [2, 3],
        padding: [2, 0],
        dilation: [1, 2],
        groups: 2,
    },
    Case {
        x: [3, 4, 7, 7],
        cout: 6,
        kernel: [1, 1],
        stride: [1, 1],
        padding: [0, 0],
        dilation: [1, 1],
        groups: 1,
    },
    // depthwise
    Case {
        x: [2, 5, 9, 8],
        cout: 10,
        kernel: [3, 3],
        stride: [1, 2],
        padding: [1, 1],
        dilation: [2, 1],
        groups: 5,
    },
    // a kernel as large as the padded input: one output position
    Case {
        x: [1, 2, 4, 5],
        cout: 3,
        kernel: [6, 5],
        stride: [1, 1],
        padding: [1, 0],
        dilation: [1, 1],
        groups: 1,
    },
    // one input channel and a wide image: several row bands of at least 256 columns
    Case {
        x: [1, 1, 40, 300],
        cout: 2,
        kernel: [3, 3],
        stride: [1, 1],
        padding: [1, 1],
        dilation: [1, 1],
        groups: 1,
    },
    // many channels and narrow rows: bands of a few rows
    Case {
        x: [1, 96, 12, 5],
        cout: 7,
        kernel: [3, 3],
        stride: [1, 1],
        padding: [1, 1],
        dilation: [1, 1],
        groups: 1,
    },
];

/// conv2d of `x` by the kernel and by the depth-1 conv3d composition: (fused, composed).
fn both(x: &Tensor, w: &Tensor, b: Option<&Tensor>, c: &Case) -> Result<(Tensor, Tensor)> {
    let run = |x: &Tensor| {
        let pad = Padding::Explicit(c.padding.to_vec());
        x.conv2d(w, b, &c.stride, pad, &c.dilation, c.groups)
    };
    let fused = run(x)?;
    Ok((fused, as_conv3d(x, w, b, c)?))
}

/// The same convolution as a 3-D one of depth 1 (the im2col + matmul form).
fn as_conv3d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, c: &Case) -> Result<Tensor> {
    let pad = Padding::Explicit(vec![0, c.padding[0], c.padding[1]]);
    let (stride, dilation) = ([1, c.stride[0], c.stride[1]], [1, c.dilation[0], c.dilation[1]]);
    x.unsqueeze(2)?.conv3d(&w.unsqueeze(2)?, b, &stride, pad, &dilation, c.groups)?.squeeze_dims(2)
}

/// Asserts equal dtype and shape, and values within the dtype's tolerance (relative to 1 + |value|).
fn assert_close(fused: &Tensor, composed: &Tensor, what: &str) -> Result<()> {
    let dtype = fused.dtype();
    assert_eq!((dtype, fused.dims()), (composed.dtype(), composed.dims()), "{what}");
    let tol = match dtype {
        DType::F64 => 1e-12,
        DType::F32 => 1e-4,
        _ => 2e-2,
    };
    let (a, e) = (fused.to_f64_vec()?, composed.to_f64_vec()?);
    assert!(!a.is_empty(), "{what}: empty output");
    for (k, (a, e)) in a.iter().zip(&e).enumerate() {
        assert!(
            (a - e).abs() <= tol * (1.0 + e.abs()),
            "{what} {dtype}: element {k}: fused {a} vs composed {e}"
        );
    }
    Ok(())
}

#[test]
fn fused_conv2d_matches_im2col_matmul() -> Result<()> {
    oxtorch_tensor::manual_seed(11);
    for (i, c) in CASES.iter().enumerate() {
        let x = Tensor::randn(c.x, ())?;
        let w = Tensor::randn([c.cout, c.x[1] / c.groups, c.kernel[0], c.kernel[1]], ())?;
        let bias = Tensor::randn([c.cout], ())?;
        for dtype in [DType::F32, DType::F64, DType::BF16, DType::F16] {
            let (x, w, bias) = (x.to_dtype(dtype)?, w.to_dtype(dtype)?, bias.to_dtype(dtype)?);
            // a non-contiguous input with the same values: H and W swapped twice
            let xt = x.transpose(2, 3)?.contiguous()?.transpose(2, 3)?;
            assert!(!xt.is_contiguous());
            for (j, (x, b)) in [(&x, None), (&xt, Some(&bias))].into_iter().enumerate() {
                let (fused, composed) = both(x, &w, b, c)?;
                assert_close(&fused, &composed, &format!("case {i}.{j}"))?;
            }
        }
    }
    Ok(())
}

#[test]
fn fused_conv2d_gradients_match_im2col_matmul() -> Result<()> {
    oxtorch_tensor::manual_seed(13);
    for (i, c) in CASES.iter().enumerate() {
        let leaf = |t: Tensor| t.to_dtype(DType::F64)?.requires_grad_(true);
        let x = leaf(Tensor::randn(c.x, ())?)?;
        let w = leaf(Tensor::randn([c.cout, c.x[1] / c.groups, c.kernel[0], c.kernel[1]], ())?)?;
        let b = leaf(Tensor::randn([c.cout], ())?)?;
        let pad = Padding::Explicit(c.padding.to_vec());
        let fused = x.conv2d(&w, Some(&b), &c.stride, pad, &c.dilation, c.groups)?;
        let composed = as_conv3d(&x, &w, Some(&b), c)?;
        // A weighted sum, so that every output element gets its own gradient.
        let weights = Tensor::randn(fused.dims().to_vec(), ())?.to_dtype(DType::F64)?;
        let grads = |y: &Tensor| -> Result<Vec<Tensor>> {
            let gs = oxtorch_tensor::autograd::grad(
                &[y.mul(&weights)?.sum_all()?],
                &[x.clone(), w.clone(), b.clone()],
                None,
                false,
                false,
                false,
            )?;
            Ok(gs.into_iter().map(|g| g.unwrap()).collect())
        };
        for (name, (a, e)) in
            ["x", "weight", "bias"].iter().zip(grads(&fused)?.iter().zip(&grads(&composed)?))
        {
            assert_close(a, e, &format!("case {i}: grad of {name}"))?;
        }
    }
    Ok(())
}

#[test]
fn fused_conv1d_matches_im2col_matmul() -> Result<()> {
    oxtorch_tensor::manual_seed(12);
    // (input [b, c, l], cout, kernel, stride, padding, dilation, groups)
    let cases = [
        ([2, 4, 50], 6, 3, 1, 1, 1, 1),
        ([1, 6, 33], 4, 5, 2, 3, 2, 2),
        ([3, 8, 700], 8, 3, 1, 1, 1, 8),
        ([1, 3, 4], 2, 4, 1, 0, 1, 1),
    ];
    for (i, &(xd, cout, k, stride, padding, dilation, groups)) in cases.iter().enumerate() {
        for dtype in [DType::F32, DType::F64] {
            let x = Tensor::randn(xd, ())?.to_dtype(dtype)?;
            let w = Tensor::randn([cout, xd[1] / groups, k], ())?.to_dtype(dtype)?;
            let b = Tensor::randn([cout], ())?.to_dtype(dtype)?;
            let run = |x: &Tensor| {
                x.conv1d(&w, Some(&b), &[stride], Padding::Explicit(vec![padding]), &[dilation], groups)
            };
            let fused = run(&x)?;
            let case = Case {
                x: [xd[0], xd[1], 1, xd[2]],
                cout,
                kernel: [1, k],
                stride: [1, stride],
                padding: [0, padding],
                dilation: [1, dilation],
                groups,
            };
            let composed = as_conv3d(&x.unsqueeze(2)?, &w.unsqueeze(2)?, Some(&b), &case)?.squeeze_dims(2)?;
            assert_close(&fused, &composed, &format!("conv1d case {i}"))?;
        }
    }
    Ok(())
}
