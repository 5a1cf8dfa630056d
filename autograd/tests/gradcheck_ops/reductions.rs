//! Reductions, statistics, scans and the ordering ops.

use oxtorch_tensor::Tensor;

use crate::common::*;

/// The `reductions` cases.
pub fn reductions_cases() -> Vec<Case> {
    let s = [2, 3, 4];
    let e: [isize; 0] = [];
    // a row with one zero and a row with two zeros
    let zeros = || leaf(t(&[1.5, 0.0, -0.7, 1.2, 0.0, 0.9, 0.0, -1.1, 0.6, 1.3, -0.8, 1.7], &[3, 4]));
    vec![
        case("sum_all", vec![smooth(&s, 1)], |x| x[0].sum_all()),
        case("sum_dims", vec![smooth(&s, 2)], |x| x[0].sum([0, 2], false)),
        case("sum_keepdim", vec![smooth(&s, 3)], |x| x[0].sum([-1], true)),
        case("sum_empty_dims", vec![smooth(&s, 4)], move |x| x[0].sum(e, false)),
        case("mean_all", vec![smooth(&s, 5)], |x| x[0].mean_all()),
        case("mean_dims", vec![smooth(&s, 6)], |x| x[0].mean([1], false)),
        case("mean_keepdim", vec![smooth(&s, 7)], |x| x[0].mean([0, 1], true)),
        case("prod_all", vec![away(&[2, 3], 8)], |x| x[0].prod_all()),
        case("prod_dim", vec![away(&s, 9)], |x| x[0].prod([1], false)),
        case("prod_zeros_rows", vec![zeros()], |x| x[0].prod([1], false)),
        case("prod_zeros_all", vec![leaf(t(&[1.5, 0.0, -0.7, 1.2, 0.9, 1.1], &[2, 3]))], |x| x[0].prod_all()),
        case("prod_two_zeros_all", vec![zeros()], |x| x[0].prod_all()),
        case("var_unbiased", vec![smooth(&s, 10)], |x| x[0].var([1], 1.0, false)),
        case("var_biased", vec![smooth(&s, 11)], |x| x[0].var([0, 2], 0.0, true)),
        case("var_correction2", vec![smooth(&s, 12)], |x| x[0].var([2], 2.0, false)),
        case("var_all", vec![smooth(&s, 13)], move |x| x[0].var(e, 1.0, false)),
        case("std_unbiased", vec![smooth(&s, 14)], |x| x[0].std([1], 1.0, false)),
        case("std_biased", vec![smooth(&s, 15)], |x| x[0].std([-1], 0.0, true)),
        case_n("var_mean", vec![smooth(&s, 16)], |x| {
            let (v, m) = x[0].var_mean([2], 1.0, false)?;
            Ok(vec![v, m])
        }),
        case_n("std_mean", vec![smooth(&s, 17)], |x| {
            let (v, m) = x[0].std_mean([0], 0.0, false)?;
            Ok(vec![v, m])
        }),
        case("norm_1", vec![away(&s, 18)], |x| x[0].norm(1.0, [2], false)),
        case("norm_2", vec![smooth(&s, 19)], |x| x[0].norm(2.0, [1], false)),
        case("norm_3", vec![away(&s, 20)], |x| x[0].norm(3.0, [1], true)),
        case("norm_inf", vec![distinct(&s, 21)], |x| x[0].norm(f64::INFINITY, [2], false)),
        case("norm_neg_inf", vec![distinct(&s, 22)], |x| x[0].norm(f64::NEG_INFINITY, [2], false)),
        case("norm_fro", vec![smooth(&s, 23)], |x| x[0].norm(2.0, [1, 2], false)),
        case("norm_all", vec![smooth(&s, 24)], move |x| x[0].norm(2.0, e, false)),
        // p < 1 (and p < 0) at a zero entry: torch's gradient there is 0, not NaN.
        case("norm_half_zero", vec![leaf(t(&[0.0, 1.0, -2.0, 0.5, -0.3, 0.8], &[2, 3]))], |x| {
            x[0].norm(0.5, [1], false)
        }),
        case("norm_neg_zero", vec![leaf(t(&[0.0, 1.0, -2.0, 0.5, -0.3, 0.8], &[2, 3]))], |x| {
            x[0].norm(-1.0, [1], false)
        }),
        // torch's convention at a zero norm / std: zero gradient (the central difference agrees)
        case("norm_2_zero_row", vec![leaf(t(&[0.0, 0.0, 0.0, 0.5, -1.2, 0.7], &[2, 3]))], |x| {
            x[0].norm(2.0, [1], false)
        }),
        case("norm_3_zero_row", vec![leaf(t(&[0.0, 0.0, 0.0, 0.5, -1.2, 0.7], &[2, 3]))], |x| {
            x[0].norm(3.0, [1], false)
        }),
        case("std_constant_row", vec![leaf(t(&[0.4, 0.4, 0.4, 0.5, -1.2, 0.7], &[2, 3]))], |x| {
            x[0].std([1], 1.0, false)
        }),
        case("logsumexp", vec![smooth(&s, 25)], |x| x[0].logsumexp([1], false)),
        case("logsumexp_dims", vec![smooth(&s, 26)], |x| x[0].logsumexp([0, 2], true)),
        case("max_all", vec![distinct(&s, 27)], |x| x[0].max()),
        case("min_all", vec![distinct(&s, 28)], |x| x[0].min()),
        case_n("max_dim", vec![distinct(&s, 29)], |x| {
            let (v, i) = x[0].max_dim(1, false)?;
            Ok(vec![v, i])
        }),
        case_n("min_dim_keepdim", vec![distinct(&s, 30)], |x| {
            let (v, i) = x[0].min_dim(-1, true)?;
            Ok(vec![v, i])
        }),
        case("amax", vec![distinct(&s, 31)], |x| x[0].amax([0, 2], false)),
        case("amin", vec![distinct(&s, 32)], |x| x[0].amin([1], true)),
    ]
}

#[test]
fn reductions() {
    run_family("reductions", Check::Grad);
}

#[test]
fn reductions_at_ties() {
    // amax/amin and the all-reduce max/min share the gradient evenly among tied maxima (torch's
    // rule); max(dim) sends it to the returned index only.
    let x = leaf(t(&[1.0, 3.0, 3.0, 2.0, 2.0, 0.0], &[2, 3]));
    assert_close(&grad_of(&x, &x.amax([1], false).unwrap()), &[0.0, 0.5, 0.5, 0.5, 0.5, 0.0], "amax");
    assert_close(&grad_of(&x, &x.amin([1], false).unwrap()), &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0], "amin");
    assert_close(&grad_of(&x, &x.max().unwrap()), &[0.0, 0.5, 0.5, 0.0, 0.0, 0.0], "max");
    let y = leaf(t(&[1.0, 0.5, 0.5, 2.0, 0.5, 3.0], &[2, 3]));
    assert_close(&grad_of(&y, &y.min().unwrap()), &[0.0, 1.0 / 3.0, 1.0 / 3.0, 0.0, 1.0 / 3.0, 0.0], "min");
    let (v, i) = x.max_dim(1, false).unwrap();
    let mut want = vec![0.0; 6];
    for (row, &k) in i.to_vec::<i64>().unwrap().iter().enumerate() {
        want[row * 3 + k as usize] = 1.0;
    }
    assert_close(&grad_of(&x, &v), &want, "max_dim");
    // The all-reduce median shares the gradient among its ties (torch); median(dim) sends it
    // to the returned index.
    let m = leaf(t(&[1.0, 2.0, 2.0, 3.0, 2.0], &[5]));
    let third = 1.0 / 3.0;
    assert_close(&grad_of(&m, &m.median_all().unwrap()), &[0.0, third, third, 0.0, third], "median_all");
    assert_close(
        &grad_of(&m, &m.nanmedian_all().unwrap()),
        &[0.0, third, third, 0.0, third],
        "nanmedian_all",
    );
    assert_eq!(m.median_all().unwrap().item::<f64>().unwrap(), 2.0);
    let (v, i) = m.median(0, false).unwrap();
    let mut want = vec![0.0; 5];
    want[i.item::<i64>().unwrap() as usize] = 1.0;
    assert_close(&grad_of(&m, &v), &want, "median(dim)");
    // zero norms and a constant std give zero gradients, not NaN
    let z = leaf(t(&[0.0; 4], &[2, 2]));
    assert_close(&grad_of(&z, &z.norm(2.0, [1], false).unwrap()), &[0.0; 4], "norm at zero");
    assert_close(&grad_of(&z, &z.std([1], 1.0, false).unwrap()), &[0.0; 4], "std of a constant");
    // amax over several dims
    let z = leaf(t(&[2.0, 1.0, 2.0, 2.0], &[2, 2]));
    assert_close(
        &grad_of(&z, &z.amax([0, 1], false).unwrap()),
        &[1.0 / 3.0, 0.0, 1.0 / 3.0, 1.0 / 3.0],
        "amax_all",
    );
}

/// The `scans_and_orderings` cases.
pub fn scans_and_orderings_cases() -> Vec<Case> {
    let s = [3, 4];
    vec![
        case("cumsum_dim0", vec![smooth(&s, 1)], |x| x[0].cumsum(0, None)),
        case("cumsum_dim1", vec![smooth(&s, 2)], |x| x[0].cumsum(-1, None)),
        case("cumprod", vec![away(&s, 3)], |x| x[0].cumprod(1, None)),
        case("cumprod_dim0", vec![away(&s, 4)], |x| x[0].cumprod(0, None)),
        case(
            "cumprod_one_zero",
            vec![leaf(t(&[1.5, 0.0, -0.7, 1.2, 0.8, 0.9, 0.0, -1.1, 0.6, 1.3, -0.8, 1.7], &s))],
            |x| x[0].cumprod(1, None),
        ),
        case(
            "cumprod_two_zeros",
            vec![leaf(t(&[1.5, 0.0, -0.7, 0.0, 0.8, 0.9, 0.0, -1.1, 0.0, 1.3, -0.8, 1.7], &s))],
            |x| x[0].cumprod(1, None),
        ),
        case_n("cummax", vec![distinct(&s, 5)], |x| {
            let (v, i) = x[0].cummax(1)?;
            Ok(vec![v, i])
        }),
        case_n("cummin", vec![distinct(&s, 6)], |x| {
            let (v, i) = x[0].cummin(0)?;
            Ok(vec![v, i])
        }),
        case("logcumsumexp", vec![smooth(&s, 7)], |x| x[0].logcumsumexp(1)),
        case("logcumsumexp_dim0", vec![smooth(&s, 8)], |x| x[0].logcumsumexp(0)),
        case("logcumsumexp_large", vec![uniform(&s, 300.0, 310.0, 9)], |x| x[0].logcumsumexp(1)),
        // A slice spanning a wide range: the gradient is summed in log space (torch: [1, 1.2689, 0.7311]
        // for a unit gradient on [-1000, 0, 1]).
        case("logcumsumexp_wide", vec![leaf(t(&[-1000.0, 0.0, 1.0, 2.0, -60.0, 3.0], &[2, 3]))], |x| {
            x[0].logcumsumexp(1)
        }),
        case("median_all", vec![distinct(&[3, 5], 10)], |x| x[0].median_all()),
        case("median_all_even", vec![distinct(&s, 11)], |x| x[0].median_all()),
        case_n("median_dim", vec![distinct(&[3, 5], 12)], |x| {
            let (v, i) = x[0].median(1, false)?;
            Ok(vec![v, i])
        }),
        case_n("nanmedian_dim", vec![distinct(&[3, 5], 13)], |x| {
            let (v, i) = x[0].nanmedian(0, true)?;
            Ok(vec![v, i])
        }),
        case_n("kthvalue", vec![distinct(&s, 14)], |x| {
            let (v, i) = x[0].kthvalue(2, 1, false)?;
            Ok(vec![v, i])
        }),
        case_n("kthvalue_keepdim", vec![distinct(&s, 15)], |x| {
            let (v, i) = x[0].kthvalue(3, 0, true)?;
            Ok(vec![v, i])
        }),
        case_n("topk_largest", vec![distinct(&s, 16)], |x| {
            let (v, i) = x[0].topk(2, 1, true, true)?;
            Ok(vec![v, i])
        }),
        case_n("topk_smallest_dim0", vec![distinct(&s, 17)], |x| {
            let (v, i) = x[0].topk(2, 0, false, true)?;
            Ok(vec![v, i])
        }),
        case_n("sort", vec![distinct(&s, 18)], |x| {
            let (v, i) = x[0].sort(1, false)?;
            Ok(vec![v, i])
        }),
        case_n("sort_descending_dim0", vec![distinct(&s, 19)], |x| {
            let (v, i) = x[0].sort(0, true)?;
            Ok(vec![v, i])
        }),
        case("msort", vec![distinct(&s, 20)], |x| x[0].msort()),
        case_n("mode", vec![distinct(&s, 21)], |x| {
            let (v, i) = x[0].mode(1, false)?;
            Ok(vec![v, i])
        }),
        case("quantile", vec![distinct(&[9], 22)], |x| x[0].quantile(0.3, None, false, "linear")),
        case("quantile_lower", vec![distinct(&[3, 5], 25)], |x| x[0].quantile(0.3, Some(1), true, "lower")),
        case("quantile_higher", vec![distinct(&[3, 5], 26)], |x| {
            x[0].quantile(0.3, Some(1), false, "higher")
        }),
        case("quantile_nearest", vec![distinct(&[3, 5], 27)], |x| {
            x[0].quantile(0.6, Some(0), false, "nearest")
        }),
        case("quantile_midpoint", vec![distinct(&[3, 5], 28)], |x| {
            x[0].quantile(0.3, Some(1), false, "midpoint")
        }),
        case("quantile_dim", vec![distinct(&[3, 5], 23)], |x| {
            x[0].quantile(t(&[0.1, 0.5, 0.9], &[3]), Some(1), false, "linear")
        }),
        case("sort_noncontiguous", vec![distinct(&[4, 3], 24)], |x| Ok(x[0].t()?.sort(1, false)?.0)),
    ]
}

#[test]
fn scans_and_orderings() {
    run_family("scans_and_orderings", Check::Grad);
}

/// Gradients at ties of the selecting ops, as torch 2.15 computes them (values read off torch):
/// they follow the index each op returns, except the norms and all-reductions, which share.
#[test]
fn selections_at_ties_match_torch() {
    let w5 = t(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 5]);
    let c = leaf(t(&[1.0, 2.0, 2.0, 0.5, 2.0], &[1, 5]));
    let weighted = |y: Tensor, w: &Tensor| grad_of(&c, &y.mul(w).unwrap());
    assert_close(&weighted(c.cummax(1).unwrap().0, &w5), &[1.0, 2.0, 7.0, 0.0, 5.0], "cummax");
    assert_close(&weighted(c.cummin(1).unwrap().0, &w5), &[6.0, 0.0, 0.0, 9.0, 0.0], "cummin");
    assert_close(&weighted(c.sort(1, false).unwrap().0, &w5), &[2.0, 3.0, 4.0, 1.0, 5.0], "sort");
    let w2 = t(&[1.0, 2.0], &[1, 2]);
    assert_close(&weighted(c.topk(2, 1, true, true).unwrap().0, &w2), &[0.0, 0.0, 1.0, 0.0, 2.0], "topk");
    assert_close(&grad_of(&c, &c.kthvalue(3, 1, false).unwrap().0), &[0.0, 0.0, 1.0, 0.0, 0.0], "kthvalue");
    assert_close(&grad_of(&c, &c.max_dim(1, false).unwrap().0), &[0.0, 1.0, 0.0, 0.0, 0.0], "max_dim");
    assert_close(&grad_of(&c, &c.mode(1, false).unwrap().0), &[0.0, 0.0, 0.0, 0.0, 1.0], "mode");
    let third = 1.0 / 3.0;
    let inf_norm = c.norm(f64::INFINITY, [0isize; 0], false).unwrap();
    assert_close(&grad_of(&c, &inf_norm), &[0.0, third, third, 0.0, third], "norm inf");
    // scatter_reduce amax/amin: ties between self and src share
    let s = leaf(t(&[1.0, 2.0, 2.0], &[1, 3]));
    let src = leaf(t(&[2.0, 0.5], &[1, 2]));
    let y = s.scatter_reduce(1, &ix(&[1, 1], &[1, 2]), &src, "amax", true).unwrap();
    let g =
        oxtorch_autograd::grad(&[y.sum_all().unwrap()], &[s.clone(), src.clone()], None, false, false, false)
            .unwrap();
    assert_close(&g[0].as_ref().unwrap().to_f64_vec().unwrap(), &[1.0, 0.5, 1.0], "scatter amax self");
    assert_close(&g[1].as_ref().unwrap().to_f64_vec().unwrap(), &[0.5, 0.0], "scatter amax src");
    let src = leaf(t(&[2.0, 2.0], &[1, 2]));
    let y = s.scatter_reduce(1, &ix(&[0, 0], &[1, 2]), &src, "amin", false).unwrap();
    let g =
        oxtorch_autograd::grad(&[y.sum_all().unwrap()], &[s.clone(), src.clone()], None, false, false, false)
            .unwrap();
    assert_close(&g[0].as_ref().unwrap().to_f64_vec().unwrap(), &[0.0, 1.0, 1.0], "scatter amin self");
    assert_close(&g[1].as_ref().unwrap().to_f64_vec().unwrap(), &[0.5, 0.5], "scatter amin src");
    // max pooling picks the first maximum of a window
    let p = leaf(t(&[1.0, 1.0, 1.0, 0.0], &[1, 1, 2, 2]));
    let y = p.max_pool2d(&[2, 2], None, &[0, 0], &[1, 1], false).unwrap();
    assert_close(&grad_of(&p, &y), &[1.0, 0.0, 0.0, 0.0], "max_pool2d");
    assert_close(
        &grad_of(&p, &p.adaptive_max_pool2d(&[1, 1]).unwrap()),
        &[1.0, 0.0, 0.0, 0.0],
        "adaptive_max_pool2d",
    );
    // softplus at its threshold is still the sigmoid; pow's base and exponent at a zero base
    let k = leaf(t(&[1.0, 2.0, 0.0], &[3]));
    assert_close(&grad_of(&k, &k.softplus(2.0, 2.0).unwrap()), &[0.8807970779778824, 1.0, 0.5], "softplus");
    let (z, e) = (leaf(t(&[0.0; 4], &[4])), leaf(t(&[0.0, 2.0, 0.5, -1.0], &[4])));
    let g = oxtorch_autograd::grad(
        &[z.pow(&e).unwrap().sum_all().unwrap()],
        &[z.clone(), e.clone()],
        None,
        false,
        false,
        false,
    )
    .unwrap();
    let (gz, ge) =
        (g[0].as_ref().unwrap().to_f64_vec().unwrap(), g[1].as_ref().unwrap().to_f64_vec().unwrap());
    assert_eq!(gz, vec![0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY], "pow base at 0");
    assert_eq!(ge, vec![0.0, 0.0, 0.0, f64::NEG_INFINITY], "pow exponent at 0");
}
