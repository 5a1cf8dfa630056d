//! Gradients at the points where torch 2.15's formulas make a choice: NaN inputs, ties, zeros of
//! a power, the origin of atan2, logit outside its domain. Expected values are torch's (float64,
//! quoted in each test).

use oxtorch_tensor::{Result, Tensor};

const NAN: f64 = f64::NAN;

/// The gradient of `f(x...).sum()` for each input.
fn grads(xs: &[&[f64]], f: impl Fn(&[Tensor]) -> Result<Tensor>) -> Vec<Vec<f64>> {
    let ts: Vec<Tensor> = xs
        .iter()
        .map(|x| Tensor::from_vec(x.to_vec(), [x.len()]).unwrap().requires_grad_(true).unwrap())
        .collect();
    f(&ts).unwrap().sum(Vec::<isize>::new(), false).unwrap().backward().unwrap();
    ts.iter().map(|t| t.grad().unwrap().to_f64_vec().unwrap()).collect()
}

/// Equal as torch prints them: NaN where NaN, and the sign of zeros and infinities.
fn same(got: &[Vec<f64>], want: &[&[f64]]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g.len() == w.len()
                && g.iter()
                    .zip(w.iter())
                    .all(|(a, b)| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits())
        })
}

macro_rules! check {
    ($name:expr, $got:expr, $want:expr) => {{
        let (got, want): (Vec<Vec<f64>>, &[&[f64]]) = ($got, $want);
        assert!(same(&got, want), "{}: got {got:?}, torch {want:?}", $name);
    }};
}

/// `torch.maximum([nan, 1, 2, 3], [1, nan, 2, 1])`: both sides get the whole gradient where
/// either is NaN, half each on a tie, nothing on the losing side; `minimum` alike.
#[test]
fn maximum_and_minimum_pass_nan_and_split_ties() {
    let (a, b): (&[f64], &[f64]) = (&[NAN, 1.0, 2.0, 3.0], &[1.0, NAN, 2.0, 1.0]);
    check!(
        "maximum",
        grads(&[a, b], |t| t[0].maximum(&t[1])),
        &[&[1.0, 1.0, 0.5, 1.0], &[1.0, 1.0, 0.5, 0.0]]
    );
    check!(
        "minimum",
        grads(&[a, b], |t| t[0].minimum(&t[1])),
        &[&[1.0, 1.0, 0.5, 0.0], &[1.0, 1.0, 0.5, 1.0]]
    );
}

/// `x ** -2` at `[0, -0, 2]` gives `[-inf, inf, -0.25]`, `x ** -0.5` at `[-0, 4]` gives `[-inf,
/// -0.0625]`, `x ** 3` at `[0, 2]` gives `[0, 12]` (pow's formula, though the values come from
/// the shortcuts).
#[test]
fn powers_by_shortcut_take_pows_gradient() {
    check!(
        "x**-2",
        grads(&[&[0.0, -0.0, 2.0]], |t| t[0].pow(-2)),
        &[&[f64::NEG_INFINITY, f64::INFINITY, -0.25]]
    );
    check!("x**-0.5", grads(&[&[-0.0, 4.0]], |t| t[0].pow(-0.5)), &[&[f64::NEG_INFINITY, -0.0625]]);
    check!("x**3", grads(&[&[0.0, 2.0]], |t| t[0].pow(3)), &[&[0.0, 12.0]]);
}

/// `atan2([0, 1], [0, 1])`: `[0, 0.5]` and `[-0, -0.5]`; `remainder(1, 0.1)`'s divisor gradient is
/// -9 (the floor quotient the forward takes), not -floor(1 / 0.1) = -10.
#[test]
fn atan2_at_the_origin_and_remainders_divisor() {
    check!("atan2", grads(&[&[0.0, 1.0], &[0.0, 1.0]], |t| t[0].atan2(&t[1])), &[&[0.0, 0.5], &[-0.0, -0.5]]);
    check!("remainder", grads(&[&[1.0], &[0.1]], |t| t[0].remainder(&t[1])), &[&[1.0], &[-9.0]]);
}

/// A NaN input passes the gradient of relu (`[nan, 0, 1]` → `[1, 0, 1]`), hardtanh (`[nan, -1, 1,
/// 0]` → `[1, 0, 0, 1]`), relu6 (`[nan, 6, 0]` → `[1, 0, 0]`), elu (`[nan, 0, -1]` → `[1, 1, e^-1]`),
/// selu (1.0507009873554805) and hardswish (`[nan, -3, 3, 0]` → `[1, 0, 1, 0.5]`).
#[test]
fn activations_pass_the_gradient_of_a_nan_input() {
    check!("relu", grads(&[&[NAN, 0.0, 1.0]], |t| t[0].relu()), &[&[1.0, 0.0, 1.0]]);
    check!(
        "hardtanh",
        grads(&[&[NAN, -1.0, 1.0, 0.0]], |t| t[0].hardtanh(-1.0, 1.0)),
        &[&[1.0, 0.0, 0.0, 1.0]]
    );
    check!("relu6", grads(&[&[NAN, 6.0, 0.0]], |t| t[0].relu6()), &[&[1.0, 0.0, 0.0]]);
    check!("elu", grads(&[&[NAN, 0.0, -1.0]], |t| t[0].elu(1.0)), &[&[1.0, 1.0, 0.36787944117144233]]);
    check!("selu", grads(&[&[NAN]], |t| t[0].selu()), &[&[1.0507009873554805]]);
    check!("hardswish", grads(&[&[NAN, -3.0, 3.0, 0.0]], |t| t[0].hardswish()), &[&[1.0, 0.0, 1.0, 0.5]]);
}

/// `logit` outside [0, 1] without eps (or with a negative one) has a NaN gradient: `[2, -1, 0.5]`
/// gives `[nan, nan, 4]`.
#[test]
fn logit_outside_its_domain() {
    check!("logit", grads(&[&[2.0, -1.0, 0.5]], |t| t[0].logit(None)), &[&[NAN, NAN, 4.0]]);
    check!("logit eps -1", grads(&[&[1.5, 0.5]], |t| t[0].logit(Some(-1.0))), &[&[NAN, 4.0]]);
}

/// `clamp` by numbers gives a NaN or boundary input no gradient (`[nan, 0, 0.5, 1].clamp(0, 1)` →
/// `[0, 0, 1, 0]`); by tensors, NaN on either side passes it to both (`clamp_min([nan, 0.5], [0,
/// nan])` → `[1, 1]` and `[1, 1]`).
#[test]
fn clamp_at_nan_and_its_bounds() {
    let x: &[f64] = &[NAN, 0.0, 0.5, 1.0];
    check!(
        "clamp(0, 1)",
        grads(&[x], |t| t[0].clamp(Some(0.0.into()), Some(1.0.into()))),
        &[&[0.0, 0.0, 1.0, 0.0]]
    );
    check!(
        "clamp_min(tensor)",
        grads(&[&[NAN, 0.5], &[0.0, NAN]], |t| t[0].clamp_min(&t[1])),
        &[&[1.0, 1.0], &[1.0, 1.0]]
    );
}

/// torch's fused backward kernels compute half-precision gradients in f32 and round once: f16
/// tanh, bf16 sigmoid and f16 silu at inputs where a chain of half-precision ops rounds to the
/// next value (torch 2.15's gradients for the given `x` and output gradient `g`).
#[test]
fn half_precision_activation_gradients_round_once() {
    use oxtorch_tensor::DType;
    type Case = (&'static str, DType, [f64; 4], [f64; 4], [f64; 4]);
    let cases: [Case; 3] = [
        (
            "tanh",
            DType::F16,
            [-2.3046875, 1.697265625, 1.3837890625, -0.6318359375],
            [0.9560546875, 0.49609375, -0.265869140625, -0.494140625],
            [0.0369873046875, 0.062347412109375, -0.059112548828125, -0.339599609375],
        ),
        (
            "sigmoid",
            DType::BF16,
            [-3.1875, 0.466796875, 2.890625, -3.125],
            [2.328125, -0.6484375, -0.9765625, 0.65625],
            [0.08837890625, -0.1533203125, -0.047119140625, 0.0263671875],
        ),
        (
            "silu",
            DType::F16,
            [-3.248046875, 0.480712890625, 0.452392578125, -0.316162109375],
            [0.630859375, 0.10260009765625, -0.58203125, 0.7470703125],
            [-0.0501708984375, 0.0750732421875, -0.418212890625, 0.25732421875],
        ),
    ];
    for (name, dt, x, g, want) in cases {
        let x =
            Tensor::from_vec(x.to_vec(), [4]).unwrap().to_dtype(dt).unwrap().requires_grad_(true).unwrap();
        let g = Tensor::from_vec(g.to_vec(), [4]).unwrap().to_dtype(dt).unwrap();
        let y = match name {
            "tanh" => x.tanh(),
            "sigmoid" => x.sigmoid(),
            _ => x.silu(),
        }
        .unwrap();
        y.backward_with(Some(&g), false, false).unwrap();
        let got = x.grad().unwrap();
        assert_eq!(got.dtype(), dt);
        assert_eq!(got.to_f64_vec().unwrap(), want, "{name}");
    }
}

/// The gradient of a power by a number is torch's `g * (e * x ** (e - 1))` with that power taken
/// by a number again (its shortcuts included): `x ** 0.5` at `[-0, -inf, 4]` gives `[-inf, nan,
/// 0.25]`, `x ** 1.5` gives `[-0, nan, 3]`, `x ** 0` gives 0, `x ** 4` at 1.1 gives
/// 5.324000000000002 (`4 * (x * x * x)`), and twice through `x ** 3` at 1.5: 6.75, then 9.
#[test]
fn powers_by_numbers_differentiate_through_powers_by_numbers() -> Result<()> {
    let inf = f64::INFINITY;
    check!("x**0.5", grads(&[&[-0.0, -inf, 4.0]], |t| t[0].pow(0.5)), &[&[-inf, NAN, 0.25]]);
    check!("x**1.5", grads(&[&[-0.0, -inf, 4.0]], |t| t[0].pow(1.5)), &[&[-0.0, NAN, 3.0]]);
    check!("x**0", grads(&[&[2.0]], |t| t[0].pow(0)), &[&[0.0]]);
    check!("x**4", grads(&[&[1.1]], |t| t[0].pow(4)), &[&[5.324000000000002]]);
    let x = Tensor::from_vec(vec![1.5f64], [1])?.requires_grad_(true)?;
    let y = x.pow(3)?.sum(Vec::<isize>::new(), false)?;
    let gx = oxtorch_tensor::autograd::grad(&[y], std::slice::from_ref(&x), None, true, true, false)?
        .remove(0)
        .unwrap();
    assert_eq!(gx.to_f64_vec()?, [6.75]);
    gx.sum(Vec::<isize>::new(), false)?.backward()?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, [9.0]);
    Ok(())
}
