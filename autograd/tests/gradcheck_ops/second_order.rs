//! Second derivatives (`gradgradcheck`) of a representative subset.

use oxtorch_tensor::manual_seed;

use crate::common::*;

#[test]
fn second_order() {
    let _rng = RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    manual_seed(0); // gradgradcheck's random seeds
    let s = [2, 3];
    let cases = vec![
        case("mul", vec![smooth(&s, 1), smooth(&s, 2)], |x| x[0].mul(&x[1])),
        case("div", vec![smooth(&s, 3), away(&s, 4)], |x| x[0].div(&x[1])),
        case("exp", vec![smooth(&s, 5)], |x| x[0].exp()),
        case("tanh", vec![smooth(&s, 6)], |x| x[0].tanh()),
        case("sigmoid", vec![smooth(&s, 7)], |x| x[0].sigmoid()),
        case("softmax", vec![smooth(&s, 8)], |x| x[0].softmax(1, None)),
        case("log_softmax", vec![smooth(&s, 9)], |x| x[0].log_softmax(0, None)),
        case("matmul", vec![smooth(&[2, 3], 10), smooth(&[3, 2], 11)], |x| x[0].matmul(&x[1])),
        case("matmul_batched_broadcast", vec![smooth(&[2, 2, 3], 12), smooth(&[3], 13)], |x| {
            x[0].matmul(&x[1])
        }),
        case("sum", vec![smooth(&s, 14)], |x| x[0].square()?.sum([1], false)),
        case("mean", vec![smooth(&s, 15)], |x| x[0].pow(3.0)?.mean_all()),
        case("pow_scalar", vec![pos(&s, 16)], |x| x[0].pow(2.5)),
        case("pow_tensor", vec![pos(&s, 17), smooth(&s, 18)], |x| x[0].pow(&x[1])),
        case("layer_norm", vec![smooth(&[2, 4], 19), smooth(&[4], 20), smooth(&[4], 21)], |x| {
            x[0].layer_norm(&[4], Some(&x[1]), Some(&x[2]), 1e-5)
        }),
        case("conv2d", vec![smooth(&[1, 2, 4, 4], 22), smooth(&[2, 2, 2, 2], 23), smooth(&[2], 24)], |x| {
            x[0].conv2d(&x[1], Some(&x[2]), &[1, 1], 1, &[1, 1], 1)
        }),
        case("gelu", vec![smooth(&s, 25)], |x| x[0].gelu("none")),
        case("gelu_tanh", vec![smooth(&s, 26)], |x| x[0].gelu("tanh")),
        case("silu", vec![smooth(&s, 27)], |x| x[0].silu()),
        case("views_and_broadcast", vec![smooth(&[3, 2], 28), smooth(&[2], 29)], |x| {
            x[0].t()?.narrow(0, 0, 1)?.mul(&x[1].unsqueeze(1)?)?.exp()
        }),
        // the join of `unbind` (all rows used) and of a sparse `split` (one piece of three)
        case("unbind_and_split_joins", vec![smooth(&[3, 2], 33), smooth(&[6], 34)], |x| {
            let rows = x[0].unbind(0)?;
            let part = x[1].split(2, 0)?[1].exp()?;
            rows[0].mul(&rows[1])?.mul(&rows[2])?.mul(&part)
        }),
        case("cross_entropy", vec![smooth(&[3, 4], 30)], |x| {
            x[0].cross_entropy(&ix(&[0, 3, 1], &[3]), None, -100, "mean", 0.1)
        }),
        case("max_pool2d", vec![distinct(&[1, 1, 4, 4], 31)], |x| {
            x[0].max_pool2d(&[2, 2], None, &[0, 0], &[1, 1], false)?.square()
        }),
        case("gather_index_select", vec![smooth(&[3, 3], 32)], |x| {
            x[0].gather(1, &ix(&[0, 0, 2], &[3, 1]))?
                .square()?
                .add(x[0].index_select(0, &ix(&[1, 2], &[2]))?.sum_all()?)
        }),
        case("log_sqrt", vec![pos(&s, 33)], |x| x[0].log()?.mul(x[0].sqrt()?)),
        case("cumsum_cumprod", vec![away(&s, 34)], |x| x[0].cumsum(1, None)?.mul(x[0].cumprod(1, None)?)),
    ];
    run("second_order", cases, 25, Check::GradGrad);
}

/// Cases whose second-order check is known to fail for a reason outside the formulas.
const SECOND_ORDER_SKIP: &[(&str, &str)] = &[
    ("norm_2_zero_row", "the first derivative jumps at a zero norm"),
    ("norm_3_zero_row", "the first derivative jumps at a zero norm"),
    ("std_constant_row", "the first derivative jumps at a zero std"),
    ("norm_half_zero", "the first derivative is unbounded beside a zero entry for p < 1"),
    ("norm_neg_zero", "the first derivative is unbounded beside a zero entry for p < 0"),
];

/// Every first-order case, to second order.
#[test]
fn all_families() {
    let _rng = RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    manual_seed(0); // gradgradcheck's random seeds
    let mut total = 0;
    for (name, cases, expected) in crate::FAMILIES {
        let all = cases();
        assert_eq!(all.len(), *expected, "{name}: number of cases");
        let kept: Vec<Case> =
            all.into_iter().filter(|c| !SECOND_ORDER_SKIP.iter().any(|(s, _)| *s == c.name)).collect();
        let n = kept.len();
        total += n;
        run(&format!("{name} (second order)"), kept, n, Check::GradGrad);
    }
    let first_order: usize = crate::FAMILIES.iter().map(|f| f.2).sum();
    assert_eq!(total + SECOND_ORDER_SKIP.len(), first_order);
}

/// `add`'s two input gradients are one tensor; gradcheck must seed its outputs by position.
#[test]
fn second_order_of_aliased_gradients() {
    let _rng = RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    manual_seed(0); // gradgradcheck's random seeds
    let cases = vec![case("add", vec![smooth(&[2, 3], 1), smooth(&[2, 3], 2)], |x| x[0].add(&x[1]))];
    run("second_order_of_aliased_gradients", cases, 1, Check::GradGrad);
}
