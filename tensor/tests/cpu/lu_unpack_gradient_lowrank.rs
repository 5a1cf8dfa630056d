//! lu_unpack, linalg.cholesky_ex, gradient, pinverse, igamma/igammac, nonzero_static against torch
//! (lu_unpack_gradient_lowrank_golden.rs, from make_lu_unpack_gradient_lowrank_golden.py: batched and rectangular LU with gradients,
//! matrices that are not positive-definite, every spacing form of gradient with both edge orders,
//! dims and non-uniform coordinates, with gradients), binomial's statistics and edge cases,
//! svd_lowrank/pca_lowrank on exactly low-rank matrices, and torch's messages for bad input.

use oxtorch_tensor::{linalg, DType, Generator, Result, Tensor};

use crate::lu_unpack_gradient_lowrank_golden::{
    CHOLESKY_EX, GRADIENT, IGAMMA, LU_UNPACK, NONZERO_STATIC, PINVERSE,
};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i64" => DType::I64,
        other => panic!("unknown dtype {other}"),
    }
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

fn tensor(v: &[f64], dims: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::from_slice(v, dims)?.to_dtype(dtype)
}

/// Relative comparison (NaN where NaN, infinities equal).
fn close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= rtol * w.abs() + atol
        };
        assert!(ok, "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

fn tol(dtype: DType) -> (f64, f64) {
    if dtype == DType::F64 {
        (1e-10, 1e-12)
    } else {
        (1e-4, 1e-5)
    }
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// `1, 2, ..., n` shaped as `t`.
fn ramp(t: &Tensor) -> Result<Tensor> {
    Tensor::arange(t.numel() as f64, t.dtype())?.add(1.0)?.reshape(t.dims())
}

#[test]
fn lu_unpack_matches_torch_with_gradients() -> Result<()> {
    for &(dt, dims, lu, piv, p, l, u, grad) in LU_UNPACK {
        let dtype = dtype_of(dt);
        let lu_t = tensor(lu, dims, dtype)?.requires_grad_(true)?;
        let mut pdims = dims[..dims.len() - 1].to_vec();
        let k = dims[dims.len() - 2].min(dims[dims.len() - 1]);
        *pdims.last_mut().unwrap() = k;
        let piv_t = tensor(piv, &pdims, DType::I32)?;
        let (pt, lt, ut) = lu_t.lu_unpack(&piv_t, true, true)?;
        assert_eq!(pt.dtype(), dtype);
        assert!(!pt.requires_grad());
        close(&format!("lu_unpack {dt} {dims:?} P"), &values(&pt)?, p, 0.0, 0.0);
        close(&format!("lu_unpack {dt} {dims:?} L"), &values(&lt)?, l, 0.0, 0.0);
        close(&format!("lu_unpack {dt} {dims:?} U"), &values(&ut)?, u, 0.0, 0.0);
        lt.mul(&ramp(&lt)?)?.sum_all()?.add(&ut.mul(&ramp(&ut)?)?.sum_all()?)?.backward()?;
        close(&format!("lu_unpack {dt} {dims:?} grad"), &values(&lu_t.grad().unwrap())?, grad, 0.0, 0.0);
        // P L U reconstructs the factored matrix: P⁻¹ A = L U.
        let (p2, l2, u2) = lu_t.detach().lu_unpack(&piv_t, false, true)?;
        assert_eq!((l2.dims(), u2.dims()), (&[0usize][..], &[0usize][..]));
        assert_eq!(values(&p2)?, p);
        let (p3, ..) = lu_t.detach().lu_unpack(&piv_t.to_dtype(DType::I64)?, true, false)?;
        assert_eq!(p3.dims(), &[0]);
    }
    Ok(())
}

#[test]
fn lu_unpack_round_trips_lu_factor() -> Result<()> {
    let a = Tensor::randn_with([2, 4, 3], DType::F64, Some(&Generator::new(5)))?;
    let (lu, piv) = linalg::lu_factor(&a)?;
    let (p, l, u) = lu.lu_unpack(&piv, true, true)?;
    close("P L U = A", &values(&p.matmul(&l)?.matmul(&u)?)?, &values(&a)?, 1e-12, 1e-12);
    Ok(())
}

#[test]
fn lu_unpack_refuses_bad_input_as_torch() -> Result<()> {
    let lu = Tensor::zeros([3, 4], DType::F64)?;
    let piv = Tensor::from_slice(&[1i32, 2, 3], [3])?;
    assert_eq!(
        err(lu.select(0, 0)?.lu_unpack(&piv, true, true)),
        "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: [4] instead"
    );
    let e = err(lu.lu_unpack(&piv.to_dtype(DType::I64)?, true, true));
    let want = "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.";
    assert!(e.starts_with(want), "{e}");
    assert_eq!(
        err(lu.lu_unpack(&piv.narrow(0, 0, 2)?, true, true)),
        "Expected LU_pivots to have shape [3] but got [2] instead."
    );
    for bad in [[1i32, 4, 3], [0, 2, 3]] {
        assert_eq!(
            err(lu.lu_unpack(&Tensor::from_slice(&bad, [3])?, true, true)),
            "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the result of lu_factor?"
        );
    }
    Ok(())
}

#[test]
fn cholesky_ex_matches_torch_including_partial_factors() -> Result<()> {
    for &(dt, upper, dims, a, l, info) in CHOLESKY_EX {
        let dtype = dtype_of(dt);
        let (lt, it) = tensor(a, dims, dtype)?.linalg_cholesky_ex(upper, false)?;
        assert_eq!(it.dtype(), DType::I32);
        assert_eq!(it.dims(), &dims[..dims.len() - 2]);
        assert_eq!(values(&it)?, info, "cholesky_ex {dt} {upper} {dims:?} info");
        let (rtol, atol) = tol(dtype);
        close(&format!("cholesky_ex {dt} {upper} {dims:?} L"), &values(&lt)?, l, rtol, atol);
    }
    Ok(())
}

#[test]
fn cholesky_ex_checks_errors_and_differentiates_on_success() -> Result<()> {
    let &(_, _, dims, a, ..) = CHOLESKY_EX.iter().find(|c| c.2.len() == 3 && c.2[1] == 4).unwrap();
    let batch = tensor(a, dims, DType::F64)?;
    assert_eq!(
        err(batch.linalg_cholesky_ex(false, true)),
        "linalg.cholesky_ex: (Batch element 0): The factorization could not be completed because the input is not positive-definite (the leading minor of order 3 is not positive-definite)."
    );
    assert_eq!(
        err(Tensor::zeros([2, 3], DType::F64)?.linalg_cholesky_ex(false, false)),
        "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices"
    );
    assert_eq!(
        err(Tensor::zeros([3], DType::F64)?.linalg_cholesky_ex(false, false)),
        "linalg.cholesky: The input tensor A must have at least 2 dimensions."
    );
    assert_eq!(
        err(Tensor::zeros([2, 2], DType::I64)?.linalg_cholesky_ex(false, false)),
        "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long"
    );
    // The positive-definite matrix: the factor and its gradient are linalg.cholesky's.
    let spd = batch.select(0, 1)?.requires_grad_(true)?;
    let (l, info) = spd.linalg_cholesky_ex(false, true)?;
    assert_eq!(values(&info)?, vec![0.0]);
    assert_eq!(l.grad_fn().unwrap().name(), "LinalgCholeskyExBackward0");
    l.mul(&ramp(&l)?)?.sum_all()?.backward()?;
    let spd2 = spd.detach().requires_grad_(true)?;
    let l2 = linalg::cholesky(&spd2, false)?;
    l2.mul(&ramp(&l2)?)?.sum_all()?.backward()?;
    close("cholesky_ex grad", &values(&spd.grad().unwrap())?, &values(&spd2.grad().unwrap())?, 1e-12, 1e-12);
    Ok(())
}

#[test]
fn gradient_matches_torch_for_every_spacing_form() -> Result<()> {
    for &(name, dt, dims, x, kind, scalars, cdt, cvals, clens, dim, edge, outs, grad) in GRADIENT {
        let dtype = dtype_of(dt);
        let float = dtype != DType::I64;
        let mut xt = tensor(x, dims, dtype)?;
        if float {
            xt = xt.requires_grad_(true)?;
        }
        let dim_opt: Option<Vec<isize>> =
            (!dim.is_empty()).then(|| dim.iter().map(|&d| d as isize).collect());
        let dim_ref = dim_opt.as_deref();
        let got = match kind {
            "none" => xt.gradient(None, dim_ref, edge)?,
            "scalar" => xt.gradient(Some(scalars[0]), dim_ref, edge)?,
            "scalars" => xt.gradient_spacings(scalars, dim_ref, edge)?,
            "coords" => {
                let mut coords = Vec::new();
                let mut at = 0;
                for &len in clens {
                    coords.push(tensor(&cvals[at..at + len], &[len], dtype_of(cdt))?);
                    at += len;
                }
                xt.gradient_coordinates(&coords, dim_ref, edge)?
            }
            other => panic!("unknown spacing kind {other}"),
        };
        assert_eq!(got.len(), outs.len(), "gradient {name}: outputs");
        let mut loss: Option<Tensor> = None;
        for (i, (g, &(odt, odims, want))) in got.iter().zip(outs).enumerate() {
            let odtype = dtype_of(odt);
            assert_eq!(g.dtype(), odtype, "gradient {name}[{i}]: dtype");
            assert_eq!(g.dims(), odims, "gradient {name}[{i}]: dims");
            let (rtol, atol) = tol(odtype);
            close(&format!("gradient {name}[{i}]"), &values(g)?, want, rtol, atol);
            if float {
                let term = g.mul(&ramp(g)?)?.sum_all()?.mul((i + 1) as f64)?;
                loss = Some(match loss {
                    Some(l) => l.add(&term)?,
                    None => term,
                });
            }
        }
        if let Some(loss) = loss {
            loss.backward()?;
            let (rtol, atol) = tol(dtype);
            close(&format!("gradient {name}: d/dx"), &values(&xt.grad().unwrap())?, grad, rtol, atol * 10.0);
        }
    }
    Ok(())
}

#[test]
fn gradient_refuses_bad_input_as_torch() -> Result<()> {
    let x = Tensor::ones([3, 4], DType::F32)?;
    assert_eq!(
        err(Tensor::arange(5.0, DType::F32)?.gradient(None, None, 3)),
        "torch.gradient only supports edge_order=1 and edge_order=2."
    );
    let small = "torch.gradient expected each dimension size to be at least edge_order+1";
    assert_eq!(err(Tensor::ones([1], DType::F32)?.gradient(None, None, 1)), small);
    assert_eq!(err(Tensor::ones([2], DType::F32)?.gradient(None, None, 2)), small);
    assert_eq!(Tensor::ones([2], DType::F32)?.gradient(None, None, 1)?[0].dims(), &[2]);
    assert_eq!(
        err(x.gradient(None, Some(&[0isize, 0][..]), 1)),
        "dim 0 appears multiple times in the list of dims"
    );
    assert!(err(x.gradient(None, Some(&[2isize][..]), 1)).contains("Dimension out of range"));
    assert_eq!(
        err(x.gradient_spacings(&[1.0, 2.0, 3.0], None, 1)),
        "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() = 2', since dim argument was not given, but got a list of length 3"
    );
    assert_eq!(
        err(x.gradient_spacings(&[1.0, 2.0], Some(&[0isize][..]), 1)),
        "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length 2 and a dim argument of length 1."
    );
    assert_eq!(
        err(x.gradient_coordinates(&[Tensor::ones([3, 1], DType::F32)?], Some(&[0isize][..]), 1)),
        "torch.gradient expected each element of spacing to have one dimension, but got an element with 2 dimensions!"
    );
    assert!(Tensor::from_slice(&[3.0f32], [0usize; 0])?.gradient(None, None, 1)?.is_empty());
    Ok(())
}

#[test]
fn pinverse_matches_torch() -> Result<()> {
    for &(dt, rcond, dims, a, want) in PINVERSE {
        let dtype = dtype_of(dt);
        let got = tensor(a, dims, dtype)?.pinverse(rcond)?;
        let (rtol, atol) = if dtype == DType::F64 { (1e-7, 1e-9) } else { (2e-3, 2e-4) };
        close(&format!("pinverse {dt} {rcond} {dims:?}"), &values(&got)?, want, rtol, atol);
    }
    assert_eq!(
        err(Tensor::ones([3], DType::F32)?.pinverse(1e-15)),
        "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types"
    );
    Ok(())
}

#[test]
fn igamma_aliases_match_torch() -> Result<()> {
    for &(da, dx, a, x, ig, igc, rdt) in IGAMMA {
        let at = tensor(a, &[a.len()], dtype_of(da))?;
        let xt = tensor(x, &[x.len()], dtype_of(dx))?;
        let (rtol, atol) = tol(dtype_of(rdt));
        let r = at.igamma(&xt)?;
        assert_eq!(r.dtype(), dtype_of(rdt));
        close(&format!("igamma {da} {dx}"), &values(&r)?, ig, rtol, atol);
        close(&format!("igammac {da} {dx}"), &values(&at.igammac(&xt)?)?, igc, rtol, atol);
        // In place: computed in the promoted dtype, written in `a`'s.
        let a2 = at.copy()?;
        a2.igamma_(&xt)?;
        assert_eq!(a2.dtype(), dtype_of(da));
        let (rtol, atol) = tol(dtype_of(da));
        close(&format!("igamma_ {da} {dx}"), &values(&a2)?, ig, rtol, atol);
        let a3 = at.copy()?;
        a3.igammac_(&xt)?;
        close(&format!("igammac_ {da} {dx}"), &values(&a3)?, igc, rtol, atol);
    }
    let i = Tensor::from_slice(&[1i64, 2], [2])?;
    assert_eq!(err(i.igamma(&i)), "\"igamma_cpu\" not implemented for 'Long'");
    let e = err(i.igammac_(&Tensor::ones([2], DType::F32)?));
    assert_eq!(e, "result type Float can't be cast to the desired output type Long");
    let e = err(Tensor::ones([3], DType::F64)?.igamma_(&Tensor::ones([2, 3], DType::F64)?));
    assert!(e.contains("output with shape [3] doesn't match the broadcast shape [2, 3]"), "{e}");
    Ok(())
}

#[test]
fn nonzero_static_matches_torch() -> Result<()> {
    for &(dims, x, size, fill, rdims, want) in NONZERO_STATIC {
        let got = tensor(x, dims, DType::F32)?.nonzero_static(size, fill)?;
        assert_eq!(got.dtype(), DType::I64);
        assert_eq!(got.dims(), rdims, "nonzero_static {dims:?} {size} {fill}: dims");
        assert_eq!(values(&got)?, want, "nonzero_static {dims:?} {size} {fill}");
    }
    assert_eq!(
        err(Tensor::ones([3], DType::F32)?.nonzero_static(-1, -1)),
        "nonzero_static: 'size' must be an non-negative integer"
    );
    Ok(())
}

#[test]
fn binomial_has_the_right_mean_and_variance() -> Result<()> {
    let g = Generator::new(32);
    let n = 20_000usize;
    // Both algorithms (inversion below count·p = 10, BTRS above) and both sides of p = 1/2.
    let cases = [
        (DType::F64, 5.0, 0.3),
        (DType::F64, 100.0, 0.4),
        (DType::F32, 40.0, 0.9),
        (DType::F64, 1000.0, 0.55),
        (DType::F32, 12.0, 0.97),
    ];
    for (dtype, count, p) in cases {
        let c = Tensor::full([n], count, dtype)?;
        let pr = Tensor::full([n], p, dtype)?;
        let draws = c.binomial_with(&pr, Some(&g))?;
        assert_eq!(draws.dtype(), dtype);
        let v = values(&draws)?;
        assert!(
            v.iter().all(|&d| (0.0..=count).contains(&d) && d.fract() == 0.0),
            "binomial({count}, {p}): support"
        );
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (n - 1) as f64;
        let (m, s2) = (count * p, count * p * (1.0 - p));
        // 6 standard errors of the mean; the variance to within 10%.
        assert!(
            (mean - m).abs() < 6.0 * (s2 / n as f64).sqrt(),
            "binomial({count}, {p}): mean {mean} vs {m}"
        );
        assert!((var - s2).abs() < 0.1 * s2, "binomial({count}, {p}): variance {var} vs {s2}");
    }
    Ok(())
}

#[test]
fn binomial_edge_cases_and_checks_follow_torch() -> Result<()> {
    let c = Tensor::from_slice(&[0.0f64, 7.0, 7.0, -1.0, 1.0, 1.0, 1.5, 2.7, 3.0], [9])?;
    let p = Tensor::from_slice(&[0.5f64, 0.0, 1.0, 0.5, 1.5, -0.5, 1.0, 1.0, f64::NAN], [9])?;
    let got = values(&c.binomial(&p)?)?;
    close("binomial edges", &got, &[0.0, 0.0, 7.0, 0.0, 1.0, 0.0, 1.5, 2.7, f64::NAN], 0.0, 0.0);
    // Broadcasting count [2] with prob [2, 1].
    let b =
        Tensor::from_slice(&[1.0f32, 2.0], [2])?.binomial(&Tensor::from_slice(&[1.0f32, 0.0], [2, 1])?)?;
    assert_eq!(b.dims(), &[2, 2]);
    assert_eq!(b.to_vec::<f32>()?, vec![1.0, 2.0, 0.0, 0.0]);
    // Same generator state, same draws.
    let (g1, g2) = (Generator::new(3), Generator::new(3));
    let c = Tensor::full([50], 30.0, DType::F64)?;
    let p = Tensor::full([50], 0.5, DType::F64)?;
    assert_eq!(values(&c.binomial_with(&p, Some(&g1))?)?, values(&c.binomial_with(&p, Some(&g2))?)?);
    let i = Tensor::from_slice(&[1i64], [1])?;
    assert_eq!(err(i.binomial(&i)), "binomial only supports floating-point dtypes for count, got: Long");
    let f = Tensor::from_slice(&[1.0f32], [1])?;
    assert_eq!(err(f.binomial(&f.to_dtype(DType::F64)?)), "Found dtype Double but expected Float");
    let h = f.to_dtype(DType::F16)?;
    assert_eq!(err(h.binomial(&h)), "\"binomial_cpu\" not implemented for 'Half'");
    let e = err(Tensor::ones([2], DType::F32)?.binomial(&Tensor::ones([3], DType::F32)?));
    assert!(e.contains("must match the size of tensor b (3)"), "{e}");
    Ok(())
}

/// An exactly rank-`r` `[*, m, n]` float64 matrix batch.
fn low_rank(batch: &[usize], m: usize, n: usize, r: usize, seed: u64) -> Result<Tensor> {
    let g = Generator::new(seed);
    let mut da = batch.to_vec();
    da.extend([m, r]);
    let mut db = batch.to_vec();
    db.extend([r, n]);
    Tensor::randn_with(da, DType::F64, Some(&g))?.matmul(&Tensor::randn_with(db, DType::F64, Some(&g))?)
}

fn top_singular_values(a: &Tensor, q: usize) -> Result<Vec<f64>> {
    values(&linalg::svdvals(a)?.narrow(-1, 0, q)?.contiguous()?)
}

#[test]
fn svd_lowrank_recovers_an_exactly_low_rank_matrix() -> Result<()> {
    let g = Generator::new(9);
    for (batch, m, n) in [(vec![], 30usize, 12usize), (vec![2], 10, 25)] {
        let a = low_rank(&batch, m, n, 3, 11)?;
        let (u, s, v) = a.svd_lowrank(5, 2, None, Some(&g))?;
        assert_eq!(u.dims()[u.rank() - 2..], [m, 5]);
        assert_eq!(v.dims()[v.rank() - 2..], [n, 5]);
        let back = u.mul(&s.unsqueeze(-2)?)?.matmul(&v.mT()?)?;
        close("svd_lowrank: U diag(S) Vᵀ", &values(&back)?, &values(&a)?, 0.0, 1e-8);
        let top = values(&s.narrow(-1, 0, 3)?.contiguous()?)?;
        close("svd_lowrank: S", &top, &top_singular_values(&a, 3)?, 1e-8, 1e-8);
        // With M: the SVD of A - M.
        let mm = Tensor::ones([n], DType::F64)?;
        let (u, s, v) = a.add(&mm)?.svd_lowrank(5, 2, Some(&mm), Some(&g))?;
        let back = u.mul(&s.unsqueeze(-2)?)?.matmul(&v.mT()?)?;
        close("svd_lowrank(M)", &values(&back)?, &values(&a)?, 0.0, 1e-8);
    }
    Ok(())
}

#[test]
fn pca_lowrank_centers_and_checks_q() -> Result<()> {
    let g = Generator::new(10);
    let a = low_rank(&[], 40, 8, 2, 12)?;
    let shifted = a.add(&Tensor::arange(8.0, DType::F64)?)?;
    let centered = shifted.sub(&shifted.mean(-2isize, true)?)?;
    let (u, s, v) = shifted.pca_lowrank(Some(4), true, 2, Some(&g))?;
    assert_eq!((u.dims(), s.dims(), v.dims()), (&[40usize, 4][..], &[4usize][..], &[8usize, 4][..]));
    let back = u.mul(&s.unsqueeze(-2)?)?.matmul(&v.mT()?)?;
    close("pca_lowrank", &values(&back)?, &values(&centered)?, 0.0, 1e-8);
    close("pca_lowrank S", &values(&s)?, &top_singular_values(&centered, 4)?, 1e-8, 1e-8);
    let (_, s, _) = shifted.pca_lowrank(None, false, 2, Some(&g))?;
    assert_eq!(s.dims(), &[6]);
    assert_eq!(
        err(a.pca_lowrank(Some(9), true, 2, None)),
        "q(=9) must be non-negative integer and not greater than min(m, n)=8"
    );
    Ok(())
}
