//! `vmap` (torch.vmap / torch.func.vmap as a loop) against torch.vmap (vmap_golden.rs, from
//! make_vmap_golden.py: several inputs and outputs, unmapped inputs, negative and non-zero
//! in/out dims, nesting, an empty batch, and the gradients through each), against explicit
//! loops, `randomness` and `chunk_size`, and torch's messages for bad input.

use oxtorch_tensor::{manual_seed, vmap, vmap1, vmap_with, DType, Randomness, Result, Tensor, VmapOptions};

use crate::vmap_golden::*;

fn t(g: &G) -> Tensor {
    Tensor::from_slice(g.data, g.dims.to_vec()).unwrap()
}

fn leaf(g: &G) -> Tensor {
    t(g).requires_grad_(true).unwrap()
}

fn close(what: &str, got: &Tensor, want: &G) {
    assert_eq!(got.dims(), want.dims, "{what}: shape");
    let got = got.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    for (i, (g, w)) in got.iter().zip(want.data).enumerate() {
        assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{what}[{i}]: got {g}, torch {w}");
    }
}

fn same(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (g, w) = (got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
    assert_eq!(g, w, "{what}");
}

/// `sum_k (out_k * cot_k).sum()` backpropagated.
fn backward(outs: &[&Tensor], cots: &[&G]) -> Result<()> {
    let mut loss = outs[0].mul(t(cots[0]))?.sum_all()?;
    for (o, c) in outs.iter().zip(cots).skip(1) {
        loss = loss.add(&o.mul(t(c))?.sum_all()?)?;
    }
    loss.backward()
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn two_inputs_mapped_along_different_dims_match_torch() -> Result<()> {
    let (x, y) = (leaf(&A_X), leaf(&A_Y));
    let f = vmap(
        |xs: &[Tensor]| -> Result<Vec<Tensor>> {
            Ok(vec![xs[0].mul(&xs[1].sin()?)?.sum(-1, false)?.add(&xs[0].mean_all()?)?])
        },
        &[Some(0), Some(1)],
        &[0],
    );
    let out = f(&[x.clone(), y.clone()])?.remove(0);
    close("A.out", &out, &A_OUT);
    backward(&[&out], &[&A_COT0])?;
    close("A.grad.x", &x.grad().unwrap(), &A_GRAD_X);
    close("A.grad.y", &y.grad().unwrap(), &A_GRAD_Y);
    Ok(())
}

#[test]
fn unmapped_inputs_and_several_outputs_match_torch() -> Result<()> {
    let (x, w) = (leaf(&B_X), leaf(&B_W));
    let f = vmap(
        |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].matmul(&xs[1])?, xs[0].exp()?]) },
        &[Some(0), None],
        &[1, 0],
    );
    let outs = f(&[x.clone(), w.clone()])?;
    assert_eq!(outs.len(), 2);
    close("B.out0", &outs[0], &B_OUT0);
    close("B.out1", &outs[1], &B_OUT1);
    backward(&[&outs[0], &outs[1]], &[&B_COT0, &B_COT1])?;
    close("B.grad.x", &x.grad().unwrap(), &B_GRAD_X);
    close("B.grad.w", &w.grad().unwrap(), &B_GRAD_W);
    Ok(())
}

#[test]
fn nested_vmap_matches_torch() -> Result<()> {
    let (x, y) = (leaf(&C_X), leaf(&C_Y));
    let inner = vmap(
        |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].mul(&xs[1])?.add(&xs[0].tanh()?)?]) },
        &[Some(0), Some(0)],
        &[0],
    );
    let outer = vmap(inner, &[Some(1), None], &[-1]);
    let out = outer(&[x.clone(), y.clone()])?.remove(0);
    close("C.out", &out, &C_OUT);
    backward(&[&out], &[&C_COT0])?;
    close("C.grad.x", &x.grad().unwrap(), &C_GRAD_X);
    close("C.grad.y", &y.grad().unwrap(), &C_GRAD_Y);
    Ok(())
}

#[test]
fn vmap1_with_negative_in_dim_matches_torch() -> Result<()> {
    let x = leaf(&D_X);
    let f = vmap1(|a: &Tensor| a.softmax(0, None), -1, 1);
    let out = f(&x)?;
    close("D.out", &out, &D_OUT);
    backward(&[&out], &[&D_COT0])?;
    close("D.grad.x", &x.grad().unwrap(), &D_GRAD_X);
    Ok(())
}

#[test]
fn an_empty_batch_gives_torchs_output_shape() -> Result<()> {
    let f = vmap(
        |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].matmul(&xs[1])?]) },
        &[Some(1), None],
        &[1],
    );
    let x = Tensor::zeros([2, 0, 3], DType::F64)?;
    let m = Tensor::zeros([3, 4], DType::F64)?;
    close("E.out", &f(&[x, m])?[0], &E_OUT);
    Ok(())
}

#[test]
fn vmap_equals_an_explicit_loop() -> Result<()> {
    let x = Tensor::from_vec((0..24).map(|i| (i as f64).sin()).collect::<Vec<_>>(), [2, 3, 4])?;
    let y = Tensor::from_vec((0..8).map(|i| (i as f64).cos()).collect::<Vec<_>>(), [4, 2])?;
    let s = Tensor::from_slice(&[0.5f64, -2.0, 3.0], [3])?;
    let body = |a: &Tensor, b: &Tensor, c: &Tensor| -> Result<Vec<Tensor>> {
        // a [2, 3], b [2], c [3]
        let p = a.mul(c)?.sum(-1, false)?; // [2]
        Ok(vec![p.unsqueeze(1)?.mul(b)?, a.sum_all()?.add(&b.mean_all()?)?])
    };
    let f = vmap(|xs: &[Tensor]| body(&xs[0], &xs[1], &xs[2]), &[Some(2), Some(0), None], &[-2, 0]);
    let outs = f(&[x.clone(), y.clone(), s.clone()])?;
    let mut first = Vec::new();
    let mut second = Vec::new();
    for i in 0..4 {
        let o = body(&x.select(2, i)?, &y.select(0, i)?, &s)?;
        first.push(o[0].clone());
        second.push(o[1].clone());
    }
    let want0 = Tensor::stack(&first.iter().collect::<Vec<_>>(), -2)?;
    let want1 = Tensor::stack(&second.iter().collect::<Vec<_>>(), 0)?;
    assert_eq!(outs[0].dims(), [2, 4, 2]);
    assert_eq!(outs[1].dims(), [4]);
    same("loop.out0", &outs[0], &want0);
    same("loop.out1", &outs[1], &want1);
    // chunk_size changes nothing.
    let chunked = vmap_with(
        |xs: &[Tensor]| body(&xs[0], &xs[1], &xs[2]),
        &[Some(2), Some(0), None],
        &[-2, 0],
        VmapOptions { chunk_size: Some(3), ..VmapOptions::default() },
    );
    let outs = chunked(&[x, y, s])?;
    same("chunked.out0", &outs[0], &want0);
    same("chunked.out1", &outs[1], &want1);
    Ok(())
}

#[test]
fn randomness_same_repeats_the_draws_and_different_does_not() -> Result<()> {
    let draw =
        |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].add(&Tensor::rand([5], DType::F64)?)?]) };
    let x = Tensor::zeros([3, 5], DType::F64)?;
    manual_seed(32);
    let opts = VmapOptions { randomness: Randomness::Same, chunk_size: None };
    let out = vmap_with(draw, &[Some(0)], &[0], opts)(std::slice::from_ref(&x))?.remove(0);
    same("same.row1", &out.select(0, 1)?, &out.select(0, 0)?);
    same("same.row2", &out.select(0, 2)?, &out.select(0, 0)?);
    let opts = VmapOptions { randomness: Randomness::Different, chunk_size: None };
    let out = vmap_with(draw, &[Some(0)], &[0], opts)(&[x])?.remove(0);
    let (r0, r1) = (out.select(0, 0)?.to_vec::<f64>()?, out.select(0, 1)?.to_vec::<f64>()?);
    assert_ne!(r0, r1, "different: rows must differ");
    assert_eq!(Randomness::parse("same")?, Randomness::Same);
    assert_eq!(Randomness::parse("different")?, Randomness::Different);
    assert_eq!(Randomness::parse("error")?, Randomness::Error);
    assert_eq!(
        err(Randomness::parse("bad")),
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got bad"
    );
    Ok(())
}

#[test]
fn bad_input_gives_torchs_messages() -> Result<()> {
    let add = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].add(&xs[1])?]) };
    let (a, b) = (Tensor::ones([3, 2], DType::F32)?, Tensor::ones([4, 2], DType::F32)?);
    assert_eq!(
        err(vmap(add, &[Some(0)], &[0])(&[a.clone(), b])),
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [3, 4] for the \
         mapped dimension"
    );
    let c = Tensor::ones([3, 2], DType::F32)?;
    assert_eq!(
        err(vmap(add, &[None, None], &[0])(&[a.clone(), c.clone()])),
        "vmap: Expected at least one Tensor to vmap over"
    );
    assert_eq!(
        err(vmap(add, &[Some(2), Some(0)], &[0])(&[a.clone(), c.clone()])),
        "vmap(<fn>, in_dims=(2, 0), ...)(<inputs>): Got in_dim=2 for some input, but that input is a \
         Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
    );
    assert_eq!(
        err(vmap(add, &[Some(-3), Some(0)], &[0])(&[a.clone(), c.clone()])),
        "vmap(<fn>, in_dims=(-3, 0), ...)(<inputs>): Got in_dim=-3 for some input, but that input is a \
         Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
    );
    let scalar = Tensor::from_slice(&[1.0f32], Vec::<usize>::new())?;
    assert_eq!(
        err(vmap1(|x: &Tensor| x.exp(), 0, 0)(&scalar)),
        "vmap(<fn>, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a Tensor of \
         dimensionality 0 so expected in_dim to satisfy -0 <= in_dim < 0."
    );
    assert_eq!(
        err(vmap(add, &[Some(0), Some(0), Some(0)], &[0])(&[a.clone(), c.clone()])),
        "vmap(<fn>, in_dims=(0, 0, 0), ...)(<inputs>): in_dims is not compatible with the structure of \
         `inputs`. in_dims has 3 entries but inputs has 2."
    );
    assert_eq!(
        err(vmap(add, &[Some(0)], &[2])(&[a.clone(), c.clone()])),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    assert_eq!(
        err(vmap1(|x: &Tensor| x.sum_all(), 0, 1)(&a)),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    );
    let two = |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![xs[0].clone(), xs[0].mul(2.0)?]) };
    assert_eq!(
        err(vmap(two, &[Some(0)], &[0, 1, 2])(std::slice::from_ref(&a))),
        "vmap(<fn>, ..., out_dims=(0, 1, 2))(<inputs>): out_dims is not compatible with the structure of \
         `outputs`. out_dims has 3 entries but outputs has 2."
    );
    let opts = VmapOptions { chunk_size: Some(0), ..VmapOptions::default() };
    assert_eq!(
        err(vmap_with(add, &[Some(0)], &[0], opts)(&[a, c])),
        "vmap: chunk_size should be None or greater than 0. (got 0)"
    );
    Ok(())
}
