//! slice_scatter, select_scatter, diagonal_scatter, put/put_, index_reduce/index_reduce_, gcd,
//! lcm, renorm, addbmm and bernoulli_p against torch (scatter_put_index_reduce_golden.rs, from
//! make_scatter_put_index_reduce_golden.py): values, float64 gradients w.r.t. every input, and torch's errors.

use oxtorch_tensor::{DType, Result, Tensor};

use crate::scatter_put_index_reduce_golden::{
    ADDBMM, ERRORS, GCD_LCM, INDEX_REDUCE, INDEX_REDUCE_INT, PUT, RENORM, VIEW_SCATTER,
};

fn check(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

fn leaf(v: &[f64], shape: &[usize]) -> Result<Tensor> {
    Tensor::from_slice(v, shape.to_vec())?.requires_grad_(true)
}

/// Backpropagates sum(out * w) with w[i] = i + 1, as the generator does.
fn backward_weighted(out: &Tensor) -> Result<()> {
    let n = out.numel();
    let w: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let w = Tensor::from_slice(&w, out.dims().to_vec())?;
    out.mul(&w)?.sum_all()?.backward()
}

fn grad_of(t: &Tensor) -> Result<Vec<f64>> {
    match t.grad() {
        Some(g) => values(&g),
        None => Ok(vec![0.0; t.numel()]),
    }
}

fn opt(v: i64) -> Option<i64> {
    (v != i64::MIN).then_some(v)
}

#[test]
fn view_scatters_match_torch_with_gradients() -> Result<()> {
    for &(op, shape, x, sshape, s, p, want, gx, gs) in VIEW_SCATTER {
        let what = format!("{op} {shape:?} {p:?}");
        let (xt, st) = (leaf(x, shape)?, leaf(s, sshape)?);
        let y = match op {
            "slice" => xt.slice_scatter(&st, p[0] as isize, opt(p[1]), opt(p[2]), p[3])?,
            "select" => xt.select_scatter(&st, p[0] as isize, p[1])?,
            "diagonal" => xt.diagonal_scatter(&st, p[0] as isize, p[1] as isize, p[2] as isize)?,
            other => panic!("unknown op {other}"),
        };
        assert_eq!(y.dims(), shape, "{what}: shape");
        check(&what, &values(&y)?, want);
        backward_weighted(&y)?;
        check(&format!("{what} grad self"), &grad_of(&xt)?, gx);
        check(&format!("{what} grad src"), &grad_of(&st)?, gs);
    }
    Ok(())
}

#[test]
fn slice_scatter_casts_src_to_self_dtype() -> Result<()> {
    let x = Tensor::zeros([2, 4], DType::F32)?;
    let src = Tensor::from_slice(&[1i64, 2, 3, 4], [2, 2])?;
    let y = x.slice_scatter(&src, 1, Some(1), None, 2)?;
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(values(&y)?, vec![0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0]);
    Ok(())
}

#[test]
fn put_matches_torch_with_gradients() -> Result<()> {
    for &(x, idx, s, acc, want, gx, gs) in PUT {
        let what = format!("put {idx:?} {acc}");
        let (xt, st) = (leaf(x, &[2, 3])?, leaf(s, &[s.len()])?);
        let it = Tensor::from_slice(idx, [idx.len()])?;
        let y = xt.put(&it, &st, acc)?;
        check(&what, &values(&y)?, want);
        backward_weighted(&y)?;
        check(&format!("{what} grad self"), &grad_of(&xt)?, gx);
        check(&format!("{what} grad source"), &grad_of(&st)?, gs);
        // put_ writes the same values in place.
        let z = Tensor::from_slice(x, [2, 3])?;
        z.put_(&it, &Tensor::from_slice(s, [s.len()])?, acc)?;
        check(&format!("{what} in place"), &values(&z)?, want);
    }
    Ok(())
}

#[test]
fn index_reduce_matches_torch_with_gradients() -> Result<()> {
    for &(reduce, include_self, dim, shape, x, idx, sshape, s, want, gx, gs) in INDEX_REDUCE {
        let what = format!("index_reduce {reduce} {include_self} dim {dim} {shape:?}");
        let (xt, st) = (leaf(x, shape)?, leaf(s, sshape)?);
        let it = Tensor::from_slice(idx, [idx.len()])?;
        let y = xt.index_reduce(dim, &it, &st, reduce, include_self)?;
        check(&what, &values(&y)?, want);
        backward_weighted(&y)?;
        check(&format!("{what} grad self"), &grad_of(&xt)?, gx);
        check(&format!("{what} grad source"), &grad_of(&st)?, gs);
        let z = Tensor::from_slice(x, shape.to_vec())?;
        z.index_reduce_(
            dim,
            &it.to_dtype(DType::I32)?,
            &Tensor::from_slice(s, sshape.to_vec())?,
            reduce,
            include_self,
        )?;
        check(&format!("{what} in place, int32 index"), &values(&z)?, want);
    }
    Ok(())
}

#[test]
fn index_reduce_integers_match_torch() -> Result<()> {
    for &(reduce, include_self, x, idx, s, want) in INDEX_REDUCE_INT {
        let xt = Tensor::from_slice(x, [2, 3])?;
        let st = Tensor::from_slice(s, [idx.len(), 3])?;
        let y = xt.index_reduce(0, &Tensor::from_slice(idx, [idx.len()])?, &st, reduce, include_self)?;
        assert_eq!(y.dtype(), DType::I64);
        assert_eq!(y.to_vec::<i64>()?, want, "index_reduce {reduce} {include_self} int64");
    }
    Ok(())
}

fn int_dtype(name: &str) -> DType {
    match name {
        "i64" => DType::I64,
        "i32" => DType::I32,
        "i8" => DType::I8,
        "u8" => DType::U8,
        other => panic!("unknown dtype {other}"),
    }
}

#[test]
fn gcd_lcm_match_torch() -> Result<()> {
    for &(dt, a, b, g, l) in GCD_LCM {
        let dtype = int_dtype(dt);
        let at = Tensor::from_slice(a, [a.len()])?.to_dtype(dtype)?;
        let bt = Tensor::from_slice(b, [b.len()])?.to_dtype(dtype)?;
        let gt = at.gcd(&bt)?;
        let lt = at.lcm(&bt)?;
        assert_eq!(gt.dtype(), dtype, "gcd {dt}: dtype");
        assert_eq!(lt.dtype(), dtype, "lcm {dt}: dtype");
        assert_eq!(gt.to_dtype(DType::I64)?.to_vec::<i64>()?, g, "gcd {dt}");
        assert_eq!(lt.to_dtype(DType::I64)?.to_vec::<i64>()?, l, "lcm {dt}");
    }
    // Promotion and broadcasting: int32 with int64 is int64.
    let a = Tensor::from_slice(&[4i32, 9, -15], [3, 1])?;
    let b = Tensor::from_slice(&[6i64, 12], [2])?;
    let g = a.gcd(&b)?;
    assert_eq!(g.dtype(), DType::I64);
    assert_eq!(g.dims(), &[3, 2]);
    assert_eq!(g.to_vec::<i64>()?, vec![2, 4, 3, 3, 3, 3]);
    assert_eq!(a.lcm(&b)?.to_vec::<i64>()?, vec![12, 12, 18, 36, 30, 60]);
    let c = Tensor::from_slice(&[4i64, 0], [2])?;
    c.gcd_(&Tensor::from_slice(&[-6i64, -3], [2])?)?;
    assert_eq!(c.to_vec::<i64>()?, vec![2, 3]);
    Ok(())
}

#[test]
fn renorm_matches_torch_with_gradients() -> Result<()> {
    for &(p, dim, maxnorm, x, want, gx) in RENORM {
        let what = format!("renorm p {p} dim {dim} maxnorm {maxnorm}");
        let xt = leaf(x, &[3, 4])?;
        let y = xt.renorm(p, dim, maxnorm)?;
        check(&what, &values(&y)?, want);
        backward_weighted(&y)?;
        check(&format!("{what} grad"), &grad_of(&xt)?, gx);
    }
    Ok(())
}

#[test]
fn addbmm_matches_torch_with_gradients() -> Result<()> {
    for &(sshape, x, b1, b2, b, beta, alpha, want, gx, g1, g2) in ADDBMM {
        let what = format!("addbmm {sshape:?} b {b} beta {beta} alpha {alpha}");
        let xt = leaf(x, sshape)?;
        let (t1, t2) = (leaf(b1, &[b, 2, 3])?, leaf(b2, &[b, 3, 2])?);
        let y = xt.addbmm(&t1, &t2, beta, alpha)?;
        assert_eq!(y.dims(), &[2, 2], "{what}: shape");
        check(&what, &values(&y)?, want);
        backward_weighted(&y)?;
        check(&format!("{what} grad self"), &grad_of(&xt)?, gx);
        if b > 0 {
            check(&format!("{what} grad batch1"), &grad_of(&t1)?, g1);
            check(&format!("{what} grad batch2"), &grad_of(&t2)?, g2);
        }
    }
    Ok(())
}

#[test]
fn bernoulli_p_keeps_shape_and_dtype() -> Result<()> {
    for dtype in [DType::F32, DType::F64, DType::I64, DType::Bool] {
        let x = Tensor::zeros([3, 5], dtype)?;
        let ones = x.bernoulli_p(1.0)?;
        assert_eq!((ones.dtype(), ones.dims()), (dtype, &[3usize, 5][..]));
        assert_eq!(values(&ones)?, vec![1.0; 15], "{dtype:?} p = 1");
        assert_eq!(values(&x.bernoulli_p(0.0)?)?, vec![0.0; 15], "{dtype:?} p = 0");
    }
    let draws = values(&Tensor::zeros([4000], DType::F32)?.bernoulli_p(0.25)?)?;
    assert!(draws.iter().all(|&v| v == 0.0 || v == 1.0));
    let mean = draws.iter().sum::<f64>() / 4000.0;
    assert!((mean - 0.25).abs() < 0.05, "mean {mean}");
    Ok(())
}

fn error_case(name: &str) -> Result<()> {
    let x = Tensor::zeros([3, 4], DType::F32)?;
    let ones = |shape: &[usize]| Tensor::ones(shape.to_vec(), DType::F32);
    let long = |v: &[i64]| Tensor::from_slice(v, [v.len()]);
    let z5 = Tensor::zeros([5], DType::F32)?;
    match name {
        "slice_shape" => x.slice_scatter(&ones(&[3, 3])?, 1, Some(0), Some(4), 2).map(drop),
        "slice_step" => x.slice_scatter(&ones(&[3, 2])?, 1, Some(0), Some(4), 0).map(drop),
        "select_range" => x.select_scatter(&ones(&[3])?, 1, 5).map(drop),
        "select_shape" => x.select_scatter(&ones(&[4])?, 1, 0).map(drop),
        "select_0d" => Tensor::zeros((), DType::F32)?.select_scatter(&ones(&[])?, 0, 0).map(drop),
        "diagonal_shape" => x.diagonal_scatter(&ones(&[2])?, 0, 0, 1).map(drop),
        "put_range" => z5.put(&long(&[5])?, &ones(&[1])?, false).map(drop),
        "put_range_neg" => z5.put(&long(&[-6])?, &ones(&[1])?, false).map(drop),
        "put_numel" => z5.put(&long(&[1, 2])?, &ones(&[1])?, false).map(drop),
        "put_index_dtype" => z5.put(&long(&[1, 2])?.to_dtype(DType::I32)?, &ones(&[2])?, false).map(drop),
        "put_dtype" => z5.put(&long(&[1, 2])?, &ones(&[2])?.to_dtype(DType::F64)?, false).map(drop),
        "put_empty" => Tensor::zeros([0], DType::F32)?.put(&long(&[0])?, &ones(&[1])?, false).map(drop),
        "ir_reduce" => x.index_reduce(0, &long(&[0, 1])?, &ones(&[2, 4])?, "sum", true).map(drop),
        "ir_range" => x.index_reduce(0, &long(&[0, 3])?, &ones(&[2, 4])?, "prod", true).map(drop),
        "ir_negative" => x.index_reduce(0, &long(&[0, -1])?, &ones(&[2, 4])?, "prod", true).map(drop),
        "ir_count" => x.index_reduce(0, &long(&[0, 1])?, &ones(&[3, 4])?, "prod", true).map(drop),
        "ir_index_dtype" => {
            x.index_reduce(0, &long(&[0, 1])?.to_dtype(DType::F32)?, &ones(&[2, 4])?, "prod", true).map(drop)
        }
        "ir_vector" => {
            x.index_reduce(0, &long(&[0, 1])?.reshape([1, 2])?, &ones(&[2, 4])?, "prod", true).map(drop)
        }
        "ir_dtype" => {
            x.index_reduce(0, &long(&[0, 1])?, &ones(&[2, 4])?.to_dtype(DType::F64)?, "prod", true).map(drop)
        }
        "ir_shape" => x.index_reduce(0, &long(&[0, 1])?, &ones(&[2, 3])?, "prod", true).map(drop),
        "ir_bool_mean" => {
            let b = Tensor::zeros([3, 4], DType::Bool)?;
            b.index_reduce(0, &long(&[0, 0])?, &ones(&[2, 4])?.to_dtype(DType::Bool)?, "mean", true).map(drop)
        }
        "gcd_float" => ones(&[1])?.gcd(&ones(&[1])?).map(drop),
        "gcd_bool" => {
            let t = ones(&[1])?.to_dtype(DType::Bool)?;
            t.gcd(&t).map(drop)
        }
        "lcm_float" => ones(&[1])?.lcm(&long(&[2])?).map(drop),
        "renorm_p" => ones(&[2, 3])?.renorm(-1.0, 0, 1.0).map(drop),
        "renorm_maxnorm" => ones(&[2, 3])?.renorm(2.0, 0, -1.0).map(drop),
        "renorm_rank" => ones(&[3])?.renorm(2.0, 0, 1.0).map(drop),
        "addbmm_batches" => ones(&[2, 2])?.addbmm(&ones(&[3, 2, 4])?, &ones(&[2, 4, 2])?, 1, 1).map(drop),
        "addbmm_sizes" => ones(&[2, 2])?.addbmm(&ones(&[2, 2, 4])?, &ones(&[2, 3, 2])?, 1, 1).map(drop),
        "bernoulli_p" => ones(&[3])?.bernoulli_p(1.5).map(drop),
        "bernoulli_neg" => ones(&[3])?.bernoulli_p(-0.5).map(drop),
        other => panic!("unknown error case {other}"),
    }
}

#[test]
fn errors_match_torch() {
    for &(name, want) in ERRORS {
        match error_case(name) {
            Ok(()) => panic!("{name}: expected torch's error {want:?}"),
            Err(e) => assert_eq!(e.to_string(), want, "{name}"),
        }
    }
}
