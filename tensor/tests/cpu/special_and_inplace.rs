//! torch 2.15's choices in the special functions' gradients (values quoted from torch, float64),
//! the in-place forms' rules (shape, dtype, leaves, views), the convenience methods, and the random
//! sampling ops (randperm, multinomial, exponential_, random_).

use oxtorch_tensor::{manual_seed, DType, Generator, Operand, Result, Tensor};

use std::f64::consts::LN_2;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// A float64 leaf that requires grad.
fn leaf(v: &[f64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap().requires_grad_(true).unwrap()
}

/// The gradients of `f(inputs).sum()`.
fn grads(xs: &[&[f64]], f: impl Fn(&[Tensor]) -> Result<Tensor>) -> Vec<Vec<f64>> {
    let ts: Vec<Tensor> = xs.iter().map(|x| leaf(x)).collect();
    f(&ts).unwrap().sum_all().unwrap().backward().unwrap();
    ts.iter().map(|t| t.grad().unwrap().to_f64_vec().unwrap()).collect()
}

/// Bit-equal as torch prints them (NaN where NaN), else within 1e-15 relative.
fn assert_same(got: &[Vec<f64>], want: &[&[f64]], what: &str) {
    let ok = got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g.len() == w.len()
                && g.iter()
                    .zip(w.iter())
                    .all(|(a, b)| (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-15 * b.abs())
        });
    assert!(ok, "{what}: got {got:?}, torch {want:?}");
}

/// `torch.xlogy([0, 0, 2, 0], [0.5, 0, 3, nan])`: the x-gradient is `xlogy(g, y)` (the slope
/// log y even at x = 0) except where x = 0 and y <= 0; the y-gradient is `g x / y` (0/0 = NaN).
#[test]
fn xlogy_gradients_are_torch_formulas() {
    let g = grads(&[&[0.0, 0.0, 2.0, 0.0], &[0.5, 0.0, 3.0, NAN]], |t| t[0].xlogy(&t[1]));
    assert_same(&g, &[&[-LN_2, 0.0, 1.0986122886681098, NAN], &[0.0, NAN, 0.6666666666666666, NAN]], "xlogy");
    let g = grads(&[&[0.0, 0.0, 2.0, -1.0], &[0.5, -1.0, -0.5, NAN]], |t| t[0].xlog1py(&t[1]));
    assert_same(&g, &[&[0.4054651081081644, 0.0, -LN_2, NAN], &[0.0, NAN, 4.0, NAN]], "xlog1py");
    // A number as `other`: `xlogy(x, 0.0)` masks x = 0; `xlogy(x, 2.0)` does not.
    let g = grads(&[&[0.0, 3.0, 0.0]], |t| t[0].xlogy(0.0));
    assert_same(&g, &[&[0.0, -INF, 0.0]], "xlogy(x, 0.0)");
    let g = grads(&[&[0.0, 3.0, 0.0]], |t| t[0].xlogy(2.0));
    assert_same(&g, &[&[LN_2; 3]], "xlogy(x, 2.0)");
}

/// `torch.fmax([1, nan, 2, nan], [1, 3, nan, nan])`: a tie splits the gradient, a NaN side loses
/// to a number, both NaN give it to `self`. Values `[1, 3, 2, nan]`.
#[test]
fn fmax_and_fmin_split_ties_and_skip_nan() {
    let (a, b): (&[f64], &[f64]) = (&[1.0, NAN, 2.0, NAN], &[1.0, 3.0, NAN, NAN]);
    let y = leaf(a).fmax(&leaf(b)).unwrap().to_f64_vec().unwrap();
    assert_eq!(&y[..3], &[1.0, 3.0, 2.0]);
    assert!(y[3].is_nan());
    let want: &[&[f64]] = &[&[0.5, 0.0, 1.0, 1.0], &[0.5, 1.0, 0.0, 0.0]];
    assert_same(&grads(&[a, b], |t| t[0].fmax(&t[1])), want, "fmax");
    assert_same(&grads(&[a, b], |t| t[0].fmin(&t[1])), want, "fmin");
}

/// torch's sinc (0 at 0), entr (`-(1 + ln x)`: +inf at 0, NaN below) and lgamma (digamma: NaN
/// at the poles of the negative axis, -inf at +0) gradients.
#[test]
fn special_function_gradients_at_their_edges() {
    assert_same(&grads(&[&[0.0, 1.0, -1.0]], |t| t[0].sinc()), &[&[0.0, -1.0, 1.0]], "sinc");
    assert_same(
        &grads(&[&[0.0, 1.0, -1.0, 2.0]], |t| t[0].entr()),
        &[&[INF, -1.0, NAN, -1.6931471805599454]],
        "entr",
    );
    assert_same(
        &grads(&[&[-1.0, -2.5, 0.0]], |t| t[0].lgamma()),
        &[&[NAN, 1.1031566406452433, -INF]],
        "lgamma",
    );
    // addcdiv(a, b, c, value=-1.5): b gets g·v/c, c gets -g·v·b/c².
    let g =
        grads(&[&[1.0, 2.0, 5.0], &[1.0, 3.0, 4.0], &[2.0, 3.0, 4.0]], |t| t[0].addcdiv(&t[1], &t[2], -1.5));
    assert_same(&g, &[&[1.0; 3], &[-0.75, -0.5, -0.375], &[0.375, 0.5, 0.375]], "addcdiv");
}

#[test]
fn polygamma_refuses_negative_orders() {
    let e = Tensor::from_vec(vec![1.0f32], [1]).unwrap().polygamma(-1).unwrap_err();
    assert_eq!(e.to_string(), "polygamma(n, x) does not support negative n.");
}

/// torch's in-place rules: the result keeps `self`'s shape and casts to its dtype.
#[test]
fn inplace_forms_follow_torch_rules() -> Result<()> {
    let ints = Tensor::from_vec(vec![1i64, 2], [2])?;
    let e = ints.exp_().unwrap_err();
    assert_eq!(e.to_string(), "result type Float can't be cast to the desired output type Long");
    let e = ints.pow_(0.5).unwrap_err();
    assert_eq!(e.to_string(), "result type Float can't be cast to the desired output type Long");
    let e =
        Tensor::zeros([3], DType::F32)?.masked_fill_(&Tensor::ones([2, 3], DType::Bool)?, 1.0).unwrap_err();
    assert_eq!(e.to_string(), "output with shape [3] doesn't match the broadcast shape [2, 3]");
    // A half tensor updated with a float64 operand computes in float64 and rounds once.
    let h = Tensor::zeros([3], DType::F16)?;
    h.addcmul_(&Tensor::full([3], 0.1, DType::F64)?, &Tensor::ones([3], DType::F64)?, 1)?;
    assert_eq!(h.dtype(), DType::F16);
    assert_eq!(h.to_f64_vec()?, vec![0.0999755859375; 3]);
    // Comparisons write 0/1 in self's dtype (torch: `tensor([3., 4]).eq_(tensor([3., 1]))`).
    let x = Tensor::from_vec(vec![3.0f32, 4.0], [2])?;
    x.eq_(&Tensor::from_vec(vec![3.0f32, 1.0], [2])?)?;
    assert_eq!(x.to_f64_vec()?, vec![1.0, 0.0]);
    // A leaf that requires grad refuses; a view writes through to its base.
    let w = leaf(&[1.0, 2.0]);
    assert!(w.sqrt_().unwrap_err().to_string().contains("a leaf Variable that requires grad"));
    let base = Tensor::from_vec(vec![1.0, 4.0, 9.0, 16.0], [2, 2])?;
    base.select(0, 1)?.sqrt_()?;
    assert_eq!(base.to_f64_vec()?, vec![1.0, 4.0, 3.0, 4.0]);
    // clamp_, index_fill_, scatter_ and lerp_ in place.
    let y = Tensor::from_vec(vec![-2.0, 0.5, 3.0], [3])?;
    y.clamp_(Some(Operand::from(-1.0)), Some(Operand::from(1.0)))?;
    assert_eq!(y.to_f64_vec()?, vec![-1.0, 0.5, 1.0]);
    y.index_fill_(0, &Tensor::from_vec(vec![2i64], [1])?, 7.0)?;
    assert_eq!(y.to_f64_vec()?, vec![-1.0, 0.5, 7.0]);
    y.lerp_(&Tensor::zeros([3], DType::F64)?, 0.5)?;
    assert_eq!(y.to_f64_vec()?, vec![-0.5, 0.25, 3.5]);
    Ok(())
}

/// An in-place op on a non-leaf keeps the graph: `y = x * 1; y.exp_(); y.sum()` differentiates to
/// `exp(x)`; an operand that requires grad gets its gradient too.
#[test]
fn inplace_forms_record_history() -> Result<()> {
    let x = leaf(&[0.0, 1.0]);
    let y = x.mul(1.0)?;
    y.exp_()?;
    y.sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, vec![1.0, 1.0f64.exp()]);
    let (a, w) = (leaf(&[1.0, 2.0]), leaf(&[3.0, 5.0]));
    let b = Tensor::zeros([2], DType::F64)?;
    b.addcmul_(&a, &w, 2.0)?;
    assert!(b.requires_grad());
    b.sum_all()?.backward()?;
    assert_eq!(a.grad().unwrap().to_f64_vec()?, vec![6.0, 10.0]);
    assert_eq!(w.grad().unwrap().to_f64_vec()?, vec![2.0, 4.0]);
    Ok(())
}

#[test]
fn convenience_methods_match_torch() -> Result<()> {
    let m = Tensor::from_vec((0..6i64).collect(), [2, 3])?;
    assert_eq!(m.trace()?.item::<i64>()?, 4);
    assert_eq!(m.trace()?.dtype(), DType::I64);
    assert_eq!(m.diag(-1)?.to_vec::<i64>()?, vec![3]);
    assert_eq!(m.diag(5)?.dims(), &[0]);
    let d = Tensor::from_vec(vec![1i64, 2], [2])?.diag(1)?;
    assert_eq!(d.to_vec2::<i64>()?, vec![vec![0, 1, 0], vec![0, 0, 2], vec![0, 0, 0]]);
    assert_eq!(
        Tensor::zeros([2, 2, 2], DType::F32)?.diag(0).unwrap_err().to_string(),
        "diag(): Supports 1D or 2D tensors. Got 3D"
    );
    assert_eq!(
        Tensor::zeros([3], DType::F32)?.trace().unwrap_err().to_string(),
        "trace: expected a matrix, but got tensor with dim 1"
    );
    let mv = Tensor::ones([2, 3], DType::F32)?.mv(&Tensor::ones([4], DType::F32)?).unwrap_err();
    assert_eq!(mv.to_string(), "size mismatch, got input (2), mat (2x3), vec (4)");
    let v = Tensor::ones([2, 3], DType::F32)?.mv(&Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])?)?;
    assert_eq!(v.to_vec::<f32>()?, vec![6.0, 6.0]);
    assert_eq!(m.float()?.dtype(), DType::F32);
    assert_eq!(m.half()?.dtype(), DType::F16);
    assert_eq!(m.new_full([2], 7)?.to_vec::<i64>()?, vec![7, 7]);
    assert_eq!(m.new_zeros([1, 2])?.dtype(), DType::I64);
    assert_eq!(m.view_as(&Tensor::zeros([3, 2], DType::F32)?)?.dims(), &[3, 2]);
    assert_eq!(m.type_as(&Tensor::zeros([1], DType::F64)?)?.dtype(), DType::F64);
    assert_eq!(m.t()?.ravel()?.to_vec::<i64>()?, vec![0, 3, 1, 4, 2, 5]);
    assert!(Tensor::from_vec(vec![1.0f32, 2.0], [2])?.allclose(
        &Tensor::from_vec(vec![1.000001f32, 2.0], [2])?,
        1e-5,
        1e-8,
        false
    )?);
    let e = Tensor::ones([2], DType::F32)?
        .isclose(&Tensor::ones([2], DType::F64)?, 1e-5, 1e-8, false)
        .unwrap_err();
    assert_eq!(e.to_string(), "Float did not match Double");
    Ok(())
}

#[test]
fn randperm_is_a_seeded_permutation() -> Result<()> {
    // A stream of this test's own: `manual_seed` here must give the same draws twice, which
    // tests drawing from the process-wide generator at the same time would break.
    oxtorch_tensor::random::with_thread_generator(&oxtorch_tensor::Generator::default(), || -> Result<()> {
        manual_seed(7);
        let p = Tensor::randperm(1000, ())?;
        assert_eq!(p.dtype(), DType::I64);
        let mut v = p.to_vec::<i64>()?;
        assert_ne!(v, (0..1000).collect::<Vec<_>>(), "not shuffled");
        v.sort();
        assert_eq!(v, (0..1000).collect::<Vec<_>>());
        manual_seed(7);
        assert_eq!(Tensor::randperm(1000, ())?.to_vec::<i64>()?, p.to_vec::<i64>()?);
        assert_eq!(Tensor::randperm(0, ())?.dims(), &[0]);
        assert_eq!(Tensor::randperm(5, DType::F32)?.dtype(), DType::F32);
        assert_eq!(
            Tensor::randperm(3000, DType::F16).unwrap_err().to_string(),
            "n cannot be greater than 2049 for Half type."
        );
        assert!(Tensor::randperm(300, DType::U8).is_err());
        Ok(())
    })
}

#[test]
fn multinomial_draws_follow_the_weights() -> Result<()> {
    let g = Generator::new(3);
    let w = Tensor::from_vec(vec![1.0f32, 0.0, 3.0], [3])?;
    let draws = w.multinomial_with(4000, true, Some(&g))?.to_vec::<i64>()?;
    let twos = draws.iter().filter(|&&d| d == 2).count() as f64 / 4000.0;
    assert!(!draws.contains(&1), "a zero-weight category was drawn");
    assert!((twos - 0.75).abs() < 0.03, "category 2 drawn {twos} of the time, weight 0.75");
    // Without replacement: distinct per row; zero weights come last (torch takes them when it must).
    let rows = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 0.0, 1.0], [2, 4])?;
    let d = rows.multinomial_with(4, false, Some(&g))?.to_vec2::<i64>()?;
    for row in &d {
        let mut r = row.clone();
        r.sort();
        assert_eq!(r, vec![0, 1, 2, 3]);
    }
    assert!(d[1][2] == 0 || d[1][2] == 2, "zero-weight categories come after the others: {d:?}");
    let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(w.multinomial(4, false)),
        "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
    );
    assert_eq!(msg(w.multinomial(0, true)), "cannot sample n_sample <= 0 samples");
    assert_eq!(
        msg(Tensor::zeros([2], DType::F32)?.multinomial(1, true)),
        "invalid multinomial distribution (sum of probabilities <= 0)"
    );
    assert_eq!(
        msg(Tensor::from_vec(vec![1.0f32, -1.0], [2])?.multinomial(1, true)),
        "probability tensor contains either `inf`, `nan` or element < 0"
    );
    assert_eq!(
        msg(Tensor::from_vec(vec![1i64, 2], [2])?.multinomial(1, true)),
        "multinomial only supports floating-point dtypes for input, got: Long"
    );
    Ok(())
}

#[test]
fn exponential_and_random_fill_in_range() -> Result<()> {
    manual_seed(11);
    let e = Tensor::zeros([20000], DType::F64)?;
    e.exponential_(2.0)?;
    let v = e.to_f64_vec()?;
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!(v.iter().all(|&x| x >= 0.0) && (mean - 0.5).abs() < 0.02, "mean {mean}");
    let r = Tensor::zeros([5000], DType::I32)?;
    r.random_(-3, 4)?;
    let v = r.to_vec::<i32>()?;
    assert!(v.iter().all(|&x| (-3..4).contains(&x)));
    assert!((-3..4).all(|k| v.contains(&k)), "every value drawn");
    assert_eq!(
        r.random_(3, 1).unwrap_err().to_string(),
        "random_ expects 'from' to be less than 'to', but got from=3 >= to=1"
    );
    Ok(())
}

/// `torch.clamp(x, lo, hi)` with two tensor bounds (torch 2.15's `clamp_backward_min_max`): rows
/// `(x, lo, hi)` and the gradients torch gives x, lo and hi.
#[test]
fn clamp_between_tensors_follows_torch_table() {
    // Every combination of 0, 1, 2 and NaN (torch 2.15, float64).
    #[rustfmt::skip]
    let table: &[([f64; 3], [f64; 3])] = &[
        ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([0.0, 0.0, 1.0], [0.5, 0.5, 0.0]),
        ([0.0, 0.0, 2.0], [0.5, 0.5, 0.0]),
        ([0.0, 0.0, NAN], [1.0, 0.0, 0.0]),
        ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 1.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 2.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, NAN], [0.0, 0.0, 0.0]),
        ([0.0, 2.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 2.0, 1.0], [0.0, 0.0, 1.0]),
        ([0.0, 2.0, 2.0], [0.0, 1.0, 0.0]),
        ([0.0, 2.0, NAN], [0.0, 0.0, 0.0]),
        ([0.0, NAN, 0.0], [1.0, 0.0, 0.0]),
        ([0.0, NAN, 1.0], [1.0, 0.0, 0.0]),
        ([0.0, NAN, 2.0], [1.0, 0.0, 0.0]),
        ([0.0, NAN, NAN], [1.0, 0.0, 0.0]),
        ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([1.0, 0.0, 1.0], [0.5, 0.0, 0.5]),
        ([1.0, 0.0, 2.0], [1.0, 0.0, 0.0]),
        ([1.0, 0.0, NAN], [1.0, 0.0, 0.0]),
        ([1.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
        ([1.0, 1.0, 1.0], [1.0, 0.0, 0.0]),
        ([1.0, 1.0, 2.0], [0.5, 0.5, 0.0]),
        ([1.0, 1.0, NAN], [1.0, 0.0, 0.0]),
        ([1.0, 2.0, 0.0], [0.0, 0.0, 1.0]),
        ([1.0, 2.0, 1.0], [0.0, 0.0, 1.0]),
        ([1.0, 2.0, 2.0], [0.0, 1.0, 0.0]),
        ([1.0, 2.0, NAN], [0.0, 0.0, 0.0]),
        ([1.0, NAN, 0.0], [0.0, 0.0, 0.0]),
        ([1.0, NAN, 1.0], [1.0, 0.0, 0.0]),
        ([1.0, NAN, 2.0], [1.0, 0.0, 0.0]),
        ([1.0, NAN, NAN], [1.0, 0.0, 0.0]),
        ([2.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([2.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
        ([2.0, 0.0, 2.0], [0.5, 0.0, 0.5]),
        ([2.0, 0.0, NAN], [1.0, 0.0, 0.0]),
        ([2.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
        ([2.0, 1.0, 1.0], [0.0, 0.0, 1.0]),
        ([2.0, 1.0, 2.0], [0.5, 0.0, 0.5]),
        ([2.0, 1.0, NAN], [1.0, 0.0, 0.0]),
        ([2.0, 2.0, 0.0], [0.0, 0.0, 1.0]),
        ([2.0, 2.0, 1.0], [0.0, 0.0, 1.0]),
        ([2.0, 2.0, 2.0], [1.0, 0.0, 0.0]),
        ([2.0, 2.0, NAN], [1.0, 0.0, 0.0]),
        ([2.0, NAN, 0.0], [0.0, 0.0, 0.0]),
        ([2.0, NAN, 1.0], [0.0, 0.0, 0.0]),
        ([2.0, NAN, 2.0], [1.0, 0.0, 0.0]),
        ([2.0, NAN, NAN], [1.0, 0.0, 0.0]),
        ([NAN, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([NAN, 0.0, 1.0], [1.0, 0.0, 0.0]),
        ([NAN, 0.0, 2.0], [1.0, 0.0, 0.0]),
        ([NAN, 0.0, NAN], [1.0, 0.0, 0.0]),
        ([NAN, 1.0, 0.0], [1.0, 0.0, 1.0]),
        ([NAN, 1.0, 1.0], [1.0, 0.0, 0.0]),
        ([NAN, 1.0, 2.0], [1.0, 0.0, 0.0]),
        ([NAN, 1.0, NAN], [1.0, 0.0, 0.0]),
        ([NAN, 2.0, 0.0], [1.0, 0.0, 1.0]),
        ([NAN, 2.0, 1.0], [1.0, 0.0, 1.0]),
        ([NAN, 2.0, 2.0], [1.0, 0.0, 0.0]),
        ([NAN, 2.0, NAN], [1.0, 0.0, 0.0]),
        ([NAN, NAN, 0.0], [1.0, 0.0, 0.0]),
        ([NAN, NAN, 1.0], [1.0, 0.0, 0.0]),
        ([NAN, NAN, 2.0], [1.0, 0.0, 0.0]),
        ([NAN, NAN, NAN], [1.0, 0.0, 0.0]),
    ];
    let col = |k: usize| table.iter().map(|(r, _)| r[k]).collect::<Vec<f64>>();
    let (x, lo, hi) = (col(0), col(1), col(2));
    let g = grads(&[&x, &lo, &hi], |t| t[0].clamp(Some(Operand::from(&t[1])), Some(Operand::from(&t[2]))));
    let want: Vec<Vec<f64>> = (0..3).map(|k| table.iter().map(|(_, w)| w[k]).collect()).collect();
    assert_same(&g, &[&want[0], &want[1], &want[2]], "clamp(x, lo, hi)");
    // A bound broadcast over the input sums its gradient: lo = 1 below three of four entries.
    let g = grads(&[&[0.0, 0.5, 2.0, -1.0], &[1.0], &[3.0, 3.0, 3.0, 3.0]], |t| {
        t[0].clamp(Some(Operand::from(&t[1])), Some(Operand::from(&t[2])))
    });
    assert_same(&g, &[&[0.0, 0.0, 1.0, 0.0], &[3.0], &[0.0; 4]], "broadcast lo");
}

/// The review's findings, each against torch 2.15's value or message (torch's float32 values
/// printed in full).
#[test]
#[allow(clippy::excessive_precision)]
fn review_edges_match_torch() -> Result<()> {
    // float32 digamma on the negative axis: the reflection term in double, as torch's kernel.
    let x = Tensor::from_vec(vec![-0.5f32, -1.3, -2.7, -3.9, -0.01], [5])?;
    let want = [
        0.03648991510272026f32,
        2.8825414180755615,
        -1.1153477430343628,
        -8.185099601745605,
        99.40621948242188,
    ];
    assert_eq!(x.digamma()?.to_vec::<f32>()?, want.to_vec());
    // logspace: one step is base^start; integer dtypes truncate the ends; float32 steps in f32.
    assert_eq!(Tensor::logspace(0.0, 2.0, 1, 10.0, ())?.to_vec::<f32>()?, vec![1.0]);
    assert_eq!(Tensor::logspace(0.5, 2.5, 3, 10.0, DType::I64)?.to_vec::<i64>()?, vec![1, 10, 100]);
    let l = Tensor::logspace(0.0, 1.0, 5, 3.0, ())?.to_vec::<f32>()?;
    assert_eq!(l, vec![1.0, 1.316074013710022, 1.7320507764816284, 2.2795071601867676, 3.0]);
    // xlogy(-0.0, y) is +0.0; sinc's gradient is 0 where x²π underflows.
    let z = Tensor::from_vec(vec![-0.0f32], [1])?.xlogy(2.0)?.to_vec::<f32>()?;
    assert!(z[0] == 0.0 && z[0].is_sign_positive());
    let s = Tensor::from_vec(vec![1e-30f32, 0.0, 1e-20], [3])?.requires_grad_(true)?;
    s.sinc()?.sum_all()?.backward()?;
    assert_eq!(s.grad().unwrap().to_vec::<f32>()?, vec![0.0; 3]);
    // normal(mean, std) takes the mean's dtype.
    let n = Tensor::normal(&Tensor::zeros([2], DType::F32)?, &Tensor::ones([2], DType::F64)?)?;
    assert_eq!(n.dtype(), DType::F32);
    let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(Tensor::normal(0.0, &Tensor::from_vec(vec![1.0f32, f32::NAN], [2])?)),
        "normal expects all elements of std >= 0.0"
    );
    // Refusals torch makes.
    assert_eq!(
        msg(Tensor::zeros([0], DType::F32)?.multinomial(1, true)),
        "invalid multinomial distribution (sum of probabilities <= 0)"
    );
    let b = Tensor::ones([1], DType::Bool)?;
    assert_eq!(
        msg(b.isin(&Tensor::ones([1], DType::I64)?, false)),
        "Unsupported input type encountered for isin(): Bool"
    );
    assert_eq!(msg(b.mvlgamma(1)), "The input tensor may not be a boolean tensor.");
    let f = Tensor::zeros([2], DType::F32)?;
    assert_eq!(
        f.exponential_(f64::NAN).unwrap_err().to_string(),
        "exponential_ expects lambda > 0.0, but found lambda=NaN"
    );
    assert!(f.log_normal_(0.0, f64::NAN).is_err());
    assert!(f.isclose(&f, f64::NAN, 0.0, false).is_err());
    let u8s = Tensor::zeros([3], DType::U8)?;
    assert_eq!(u8s.random_(0, 1000).unwrap_err().to_string(), "to - 1 is out of bounds for unsigned char");
    let i8s = Tensor::zeros([3], DType::I8)?;
    assert_eq!(i8s.random_(-200, 3).unwrap_err().to_string(), "from is out of bounds for signed char");
    assert_eq!(
        Tensor::zeros([3], DType::Bool)?.random_(0, 3).unwrap_err().to_string(),
        "to - 1 is out of bounds for bool"
    );
    let big = Tensor::zeros([64], DType::I64)?;
    big.random_(-10, i64::MAX)?;
    assert!(big.to_vec::<i64>()?.iter().all(|&v| v >= -10));
    Ok(())
}

/// SVD, rank and pseudo-inverse of rank-deficient and tall matrices complete their singular
/// vectors in `O(dim · k²)` (this ran for minutes with the first completion).
#[test]
fn svd_of_tall_and_rank_deficient_matrices_is_quick() -> Result<()> {
    let tall = Tensor::randn([400, 5], DType::F64)?;
    let (u, s, _) = oxtorch_tensor::linalg::svd(&tall, true)?;
    assert_eq!((u.dims(), s.dims()), (&[400, 400][..], &[5][..]));
    // U is orthogonal: UᵀU = I.
    let gram = u.t()?.matmul(&u)?.sub(&Tensor::eye(400, None, DType::F64)?)?.abs()?.max()?.item::<f64>()?;
    assert!(gram < 1e-12, "UᵀU - I = {gram}");
    let v = Tensor::randn([200], DType::F64)?;
    let rank1 = v.unsqueeze(1)?.matmul(&v.unsqueeze(0)?)?;
    assert_eq!(oxtorch_tensor::linalg::matrix_rank(&rank1, None, None, false)?.item::<i64>()?, 1);
    Ok(())
}
