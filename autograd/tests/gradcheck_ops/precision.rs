//! Every case again in f32: gradients keep their input's dtype and shape, and agree with the
//! f64 gradients to f32 accuracy (a formula that loses precision, or computes in the wrong dtype,
//! shows here).

use oxtorch_tensor::{manual_seed, DType, Result, Tensor};

use crate::common::*;

/// `sum_k sum(out_k * w_k)` for fixed weights `w_k`, and its gradients w.r.t. the inputs that
/// require grad.
fn weighted_grads(c: &Case, inputs: &[Tensor]) -> Result<Option<Vec<Tensor>>> {
    let outs = match (c.f)(inputs) {
        Ok(o) => o,
        // (mixed-dtype arguments some ops refuse, such as an f64 weight with an f32 input)
        Err(_) => return Ok(None),
    };
    let mut loss: Option<Tensor> = None;
    for o in outs.iter().filter(|o| o.requires_grad() && o.numel() > 0) {
        let n = o.numel();
        let w: Vec<f64> = (0..n).map(|i| (0.7 * i as f64 + 0.3).cos()).collect();
        let w = Tensor::from_slice(&w, o.dims().to_vec())?.to_dtype(o.dtype())?;
        let term = o.mul(&w)?.sum_all()?;
        loss = Some(match loss {
            Some(l) => l.add(&term)?,
            None => term,
        });
    }
    let Some(loss) = loss else { return Ok(None) };
    let wrt: Vec<Tensor> = inputs.iter().filter(|t| t.requires_grad()).cloned().collect();
    let gs = oxtorch_autograd::grad(&[loss], &wrt, None, false, false, true)?;
    Ok(Some(wrt.iter().zip(gs).map(|(x, g)| g.unwrap_or_else(|| x.zeros_like().unwrap())).collect()))
}

/// The inputs cast to `dtype` (leaves again where they required grad).
fn cast(inputs: &[Tensor], dtype: DType) -> Vec<Tensor> {
    inputs
        .iter()
        .map(|x| {
            let y = x.detach().to_dtype(dtype).unwrap();
            if x.requires_grad() {
                leaf(y)
            } else {
                y
            }
        })
        .collect()
}

#[test]
fn f32_gradients_match_f64() {
    let _rng = RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (mut compared, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for (family, cases, _) in crate::FAMILIES {
        for c in cases() {
            manual_seed(3);
            let want = weighted_grads(&c, &c.inputs).unwrap().expect("the f64 case runs");
            manual_seed(3);
            let x32 = cast(&c.inputs, DType::F32);
            let Some(got) = weighted_grads(&c, &x32).unwrap() else {
                refused += 1;
                continue;
            };
            compared += 1;
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                if g.dtype() != DType::F32 || g.dims() != w.dims() {
                    failures.push(format!(
                        "  {family}/{}: input {k} gradient {:?} {}",
                        c.name,
                        g.dims(),
                        g.dtype()
                    ));
                    continue;
                }
                let (g, w) = (g.to_f64_vec().unwrap(), w.to_f64_vec().unwrap());
                let scale = w.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                if let Some((i, (a, b))) = g
                    .iter()
                    .zip(&w)
                    .enumerate()
                    .find(|(_, (a, b))| (*a - *b).abs() > 1e-5 * scale || a.is_nan() != b.is_nan())
                {
                    failures
                        .push(format!("  {family}/{}: input {k} element {i}: f32 {a} vs f64 {b}", c.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} f32 gradients differ:\n{}", failures.len(), failures.join("\n"));
    let total: usize = crate::FAMILIES.iter().map(|f| f.2).sum();
    eprintln!("f32 gradients: {compared} cases compared, {refused} refused in f32");
    assert_eq!(compared + refused, total);
    assert!(compared >= total * 9 / 10, "only {compared} of {total} cases ran in f32");
}
