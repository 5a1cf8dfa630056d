//! Gradients of composite functions against PyTorch (float64), from
//! `tests/golden/make_golden_autograd.py`: an MLP with cross-entropy, masked and causal GQA
//! attention, the norms, conv/pool chains, and a Hessian-vector product.

use std::collections::HashMap;

use oxtorch_autograd::grad;
use oxtorch_tensor::{DType, Result, Tensor};
use safetensors::{Dtype, SafeTensors};

/// Every tensor of the golden file, by name.
fn load() -> HashMap<String, Tensor> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/autograd.safetensors");
    let bytes = std::fs::read(path).expect("golden file");
    let st = SafeTensors::deserialize(&bytes).expect("safetensors");
    st.tensors()
        .into_iter()
        .map(|(name, v)| {
            let shape = v.shape().to_vec();
            let data = v.data();
            let t = match v.dtype() {
                Dtype::F64 => Tensor::from_vec(
                    data.chunks_exact(8)
                        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                        .collect::<Vec<_>>(),
                    shape,
                ),
                Dtype::I64 => Tensor::from_vec(
                    data.chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                        .collect::<Vec<_>>(),
                    shape,
                ),
                Dtype::BOOL => Tensor::from_vec(data.iter().map(|&b| b != 0).collect::<Vec<_>>(), shape),
                d => panic!("unexpected dtype {d:?}"),
            };
            (name, t.unwrap())
        })
        .collect()
}

/// Runs `f` on the case's inputs (as leaves) and compares the loss and every gradient.
fn check(
    g: &HashMap<String, Tensor>,
    case: &str,
    names: &[&str],
    f: impl Fn(&HashMap<&str, Tensor>) -> Result<Tensor>,
) {
    let mut inputs: HashMap<&str, Tensor> = HashMap::new();
    for &n in names {
        let t = g[&format!("{case}.in.{n}")].requires_grad_(true).unwrap();
        inputs.insert(n, t);
    }
    for (k, v) in g {
        if let Some(n) = k.strip_prefix(&format!("{case}.const.")) {
            let n: &'static str = Box::leak(n.to_string().into_boxed_str());
            inputs.insert(n, v.clone());
        }
    }
    let loss = f(&inputs).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_close(case, "out", &loss.reshape([1]).unwrap(), &g[&format!("{case}.out")]);
    loss.backward().unwrap();
    for &n in names {
        let got = inputs[n].grad().unwrap_or_else(|| panic!("{case}: no gradient for {n}"));
        assert_close(case, n, &got, &g[&format!("{case}.grad.{n}")]);
    }
}

fn assert_close(case: &str, what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dims(), want.dims(), "{case}.{what}: shape");
    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= 1e-10 + 1e-7 * y.abs(), "{case}.{what}[{i}]: got {x}, PyTorch {y}");
    }
}

#[test]
fn composites_match_pytorch() {
    let g = load();
    check(&g, "mlp", &["x", "w1", "b1", "w2", "b2"], |t| {
        let h = t["x"].linear(&t["w1"], Some(&t["b1"]))?.gelu("none")?;
        h.linear(&t["w2"], Some(&t["b2"]))?.cross_entropy(&t["target"], None, -100, "mean", 0.0)
    });
    check(&g, "attn_mask", &["q", "k", "v", "rw"], |t| {
        t["q"]
            .scaled_dot_product_attention(&t["k"], &t["v"], Some(&t["mask"]), 0.0, false, None, false)?
            .mul(&t["rw"])?
            .sum_all()
    });
    check(&g, "attn_causal_gqa", &["q", "k", "v", "rw"], |t| {
        t["q"]
            .scaled_dot_product_attention(&t["k"], &t["v"], None, 0.0, true, None, true)?
            .mul(&t["rw"])?
            .sum_all()
    });
    check(&g, "layer_norm", &["x", "w", "b", "rw"], |t| {
        t["x"].layer_norm(&[6], Some(&t["w"]), Some(&t["b"]), 1e-5)?.mul(&t["rw"])?.sum_all()
    });
    check(&g, "group_norm", &["x", "w", "b", "rw"], |t| {
        t["x"].group_norm(3, Some(&t["w"]), Some(&t["b"]), 1e-5)?.mul(&t["rw"])?.sum_all()
    });
    check(&g, "rms_norm", &["x", "w", "rw"], |t| {
        t["x"].rms_norm(&[8], Some(&t["w"]), Some(1e-6))?.mul(&t["rw"])?.sum_all()
    });
    check(&g, "batch_norm", &["x", "w", "b", "rw"], |t| {
        t["x"].batch_norm(None, None, Some(&t["w"]), Some(&t["b"]), true, 0.1, 1e-5)?.mul(&t["rw"])?.sum_all()
    });
    check(&g, "conv_pool", &["x", "w", "b", "rw"], |t| {
        let y = t["x"].conv2d(&t["w"], Some(&t["b"]), &[1], 1, &[1], 1)?.relu()?;
        let y = y.max_pool2d(&[2], None, &[0], &[1], false)?;
        y.avg_pool2d(&[2], None, &[0], false, true, None)?.mul(&t["rw"])?.sum_all()
    });
    check(&g, "conv_transpose_interp", &["x", "w", "rw"], |t| {
        let y = t["x"].conv_transpose2d(&t["w"], None, &[2], &[0], &[0], 1, &[1])?;
        y.interpolate(None, Some(&[2.0, 2.0]), "bilinear", Some(false))?.mul(&t["rw"])?.sum_all()
    });
}

#[test]
fn hessian_vector_product_matches_pytorch() -> Result<()> {
    let g = load();
    let w = g["hvp.in.w"].requires_grad_(true)?;
    let (x, v) = (&g["hvp.const.x"], &g["hvp.const.v"]);
    let loss = x.matmul(&w)?.tanh()?.pow(2.0)?.sum_all()?.add(w.sin()?.mul(&w)?.sum_all()?)?;
    let gw = grad(&[loss], std::slice::from_ref(&w), None, true, true, false)?.remove(0).unwrap();
    let hvp = grad(&[gw.mul(v)?.sum_all()?], std::slice::from_ref(&w), None, false, false, false)?
        .remove(0)
        .unwrap();
    assert_close("hvp", "w", &hvp, &g["hvp.grad.w"]);
    assert_eq!(hvp.dtype(), DType::F64);
    Ok(())
}
