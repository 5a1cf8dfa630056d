//! Reductions where torch's CPU kernels carry more precision than the input (scans and variances
//! of float32 in float64, one rounding for half `std`, quantile ranks), and the gradients of
//! whole-tensor max/min/median at NaN and infinite values. Values from torch 2.15.

use oxtorch_tensor::{tensor, DType, Result, Tensor};

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

#[test]
fn float32_scans_run_in_float64() -> Result<()> {
    assert_eq!(f32s(&tensor!([1e8f32, 1.0, -1e8]).cumsum(0, None)?), vec![1e8, 1e8, 1.0]);
    let big = tensor!([16777216.0f32, 1.0, 1.0, 1.0, 1.0]).cumsum(0, None)?;
    assert_eq!(f32s(&big), vec![16777216.0, 16777216.0, 16777218.0, 16777220.0, 16777220.0]);
    let p = f32s(&tensor!([3e38f32, 10.0, 1e-38]).cumprod(0, None)?);
    assert_eq!(p[0], 3.000_000_005_497_755_8e38_f64 as f32);
    assert!(p[1].is_infinite());
    assert_eq!(f64::from(p[2]), 29.999_998_092_651_367);
    Ok(())
}

#[test]
fn float32_variances_run_in_float64_and_half_std_rounds_once() -> Result<()> {
    let x = tensor!([1e7f32, 1e7 + 1.0, 1e7 + 2.0, 1e7 + 3.0]);
    let rows = Tensor::stack(&[&x, &x], 0)?;
    assert_eq!(f32s(&rows.var(1, 1.0, false)?), vec![1.666_666_6_f32; 2]);
    assert_eq!(f32s(&rows.std(1, 1.0, false)?), vec![1.290_994_4_f32; 2]);
    let (v, m) = x.var_mean(Vec::<isize>::new(), 1.0, false)?;
    assert_eq!((v.item::<f32>()?, m.item::<f32>()?), (1.666_666_6, 10_000_002.0));
    // A single output: the mean in float32 first (torch's `std_var_all_cpu`).
    assert_eq!(x.var(Vec::<isize>::new(), 1.0, false)?.item::<f32>()?, 2.0);
    for (vals, want) in [([0.0, 1.0, 7.0], 3.785_156_25), ([0.0, 2.0, 5.0], 2.517_578_125)] {
        let h = tensor!(vals, dtype = DType::F16);
        assert_eq!(h.std(Vec::<isize>::new(), 1.0, false)?.to_dtype(DType::F64)?.item::<f64>()?, want);
    }
    Ok(())
}

#[test]
fn quantile_ranks_follow_torch() -> Result<()> {
    let x = tensor!([0.0f32, 1.0, 2.0, 3.0]);
    let q = Tensor::scalar_tensor(1.0 / 6.0, DType::F32)?;
    assert_eq!(x.quantile(&q, None, false, "nearest")?.item::<f32>()?, 1.0);
    let y = tensor!([-1.5f32, 0.1, 0.7, 3.3]);
    let q = Tensor::scalar_tensor(0.4, DType::F32)?;
    let got = y.quantile(&q, None, false, "linear")?.item::<f32>()?;
    assert_eq!(f64::from(got), 0.219_999_998_807_907_1);
    Ok(())
}

/// torch's `evenly_distribute_backward`: the NaN elements share a NaN max's gradient; an infinite
/// or NaN median's gradient goes to the elements equal to it.
#[test]
fn whole_tensor_extremes_share_gradients_at_nan_and_inf() -> Result<()> {
    type Reduce = fn(&Tensor) -> Result<Tensor>;
    let inf = f32::INFINITY;
    let cases: [(&str, Reduce, Vec<f32>, Vec<f32>); 6] = [
        ("max", Tensor::max, vec![1.0, f32::NAN, 3.0, f32::NAN], vec![0.0, 0.5, 0.0, 0.5]),
        ("min", Tensor::min, vec![1.0, f32::NAN, 3.0, f32::NAN], vec![0.0, 0.5, 0.0, 0.5]),
        ("median inf", Tensor::median_all, vec![inf; 3], vec![1.0 / 3.0; 3]),
        ("median -inf", Tensor::median_all, vec![-inf, -inf, 5.0], vec![0.5, 0.5, 0.0]),
        ("median nan", Tensor::median_all, vec![1.0, f32::NAN, f32::NAN], vec![0.0, 0.5, 0.5]),
        ("nanmedian", Tensor::nanmedian_all, vec![f32::NAN; 2], vec![0.5, 0.5]),
    ];
    for (name, f, x, want) in cases {
        let n = x.len();
        let x = Tensor::from_vec(x, [n])?.requires_grad_(true)?;
        let y = f(&x)?;
        assert!(y.grad_fn().is_some(), "{name}");
        y.backward()?;
        assert_eq!(f32s(&x.grad().unwrap()), want, "{name}");
    }
    // Ties of an ordinary maximum share it too, and the node keeps torch's name.
    let x = tensor!([2.0f32, 5.0, 5.0]).requires_grad_(true)?;
    let m = x.max()?;
    assert_eq!(m.grad_fn().unwrap().name(), "MaxBackward1");
    m.backward()?;
    assert_eq!(f32s(&x.grad().unwrap()), vec![0.0, 0.5, 0.5]);
    Ok(())
}

/// Norms without an identity (inf, -inf, p < 0) of an empty input are torch's errors: over all
/// dims "on an empty tensor", over an empty dim "on the dimension d"; over a non-empty dim of an
/// empty tensor they are empty.
#[test]
fn norms_of_nothing_follow_torch() -> Result<()> {
    let x = Tensor::zeros([0, 3], ())?;
    for (p, which) in [(f64::INFINITY, "inf"), (f64::NEG_INFINITY, "-inf"), (-1.0, "-1"), (-0.5, "-0.5")] {
        let e = x.norm(p, Vec::<isize>::new(), false).unwrap_err().to_string();
        assert!(e.contains(&format!("cannot compute the {which} norm on an empty tensor")), "{e}");
        let e = x.norm(p, 0, false).unwrap_err().to_string();
        assert!(e.contains(&format!("cannot compute the {which} norm on the dimension 0because")), "{e}");
        assert_eq!(x.norm(p, 1, false)?.dims(), &[0]);
    }
    assert_eq!(x.norm(2.0, Vec::<isize>::new(), false)?.item::<f32>()?, 0.0);
    Ok(())
}
