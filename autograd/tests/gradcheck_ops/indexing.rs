//! Gather/scatter, index_* ops, masks, take and Python-style advanced indexing.

use oxtorch_tensor::{Ellipsis, NewAxis, Tensor, TensorIndex};

use crate::common::*;

/// The `gather_scatter` cases.
pub fn gather_scatter_cases() -> Vec<Case> {
    let s = [3, 4];
    // no position written twice
    let uniq = || ix(&[3, 0, 1, 2, 0, 3], &[2, 3]);
    let dup = || ix(&[0, 0, 2, 1, 2, 2, 0, 1], &[2, 4]);
    let mut cases = vec![
        case("index_select", vec![smooth(&s, 1)], |x| x[0].index_select(1, &ix(&[3, 0, 0, 2], &[4]))),
        case("index_select_dim0", vec![smooth(&s, 2)], |x| x[0].index_select(0, &ix(&[2, 2, 1], &[3]))),
        case("gather", vec![smooth(&s, 3)], move |x| x[0].gather(1, &dup())),
        case("gather_dim0", vec![smooth(&s, 4)], |x| x[0].gather(0, &ix(&[2, 0, 1, 1, 0, 0, 2, 2], &[2, 4]))),
        case("scatter", vec![smooth(&s, 5), smooth(&[2, 3], 6)], move |x| x[0].scatter(1, &uniq(), &x[1])),
        // src larger than index along a dim
        case("scatter_src_larger", vec![smooth(&s, 7), smooth(&[3, 4], 8)], move |x| {
            x[0].scatter(1, &uniq(), &x[1])
        }),
        case("scatter_value", vec![smooth(&s, 9)], move |x| x[0].scatter_value(1, &uniq(), 0.5)),
        case("scatter_add", vec![smooth(&s, 10), smooth(&[2, 4], 11)], move |x| {
            x[0].scatter_add(1, &dup(), &x[1])
        }),
        case("scatter_add_dim0", vec![smooth(&s, 12), smooth(&[2, 4], 13)], |x| {
            x[0].scatter_add(0, &ix(&[2, 0, 1, 1, 0, 0, 2, 2], &[2, 4]), &x[1])
        }),
    ];
    for reduce in ["sum", "amax", "amin", "prod", "mean"] {
        for include_self in [true, false] {
            let name = format!("scatter_reduce_{reduce}_{}", if include_self { "self" } else { "noself" });
            let (a, b) = if reduce == "prod" {
                (away(&s, 20), away(&[2, 4], 21))
            } else {
                (distinct(&s, 22), distinct(&[2, 4], 23))
            };
            cases.push(case(&name, vec![a, b], move |x| {
                x[0].scatter_reduce(1, &dup(), &x[1], reduce, include_self)
            }));
        }
    }
    // zeros in self and src
    for include_self in [true, false] {
        let a = leaf(t(&[1.5, 0.0, -0.7, 1.2, 0.8, 0.9, 0.3, -1.1, 0.6, 1.3, -0.8, 1.7], &s));
        let b = leaf(t(&[0.5, 0.0, 1.1, -0.9, 1.4, -0.6, 0.0, 0.0], &[2, 4]));
        let name = format!("scatter_reduce_prod_zeros_{include_self}");
        cases.push(case(&name, vec![a, b], move |x| {
            x[0].scatter_reduce(1, &dup(), &x[1], "prod", include_self)
        }));
    }
    cases
}

#[test]
fn gather_scatter() {
    run_family("gather_scatter", Check::Grad);
}

/// The `index_ops` cases.
pub fn index_ops_cases() -> Vec<Case> {
    let s = [4, 3];
    vec![
        case("index_add", vec![smooth(&s, 1), smooth(&[3, 3], 2)], |x| {
            x[0].index_add(0, &ix(&[1, 3, 1], &[3]), &x[1], 1.0)
        }),
        case("index_add_alpha_dim1", vec![smooth(&s, 3), smooth(&[4, 2], 4)], |x| {
            x[0].index_add(1, &ix(&[2, 2], &[2]), &x[1], -2.5)
        }),
        case("index_copy", vec![smooth(&s, 5), smooth(&[2, 3], 6)], |x| {
            x[0].index_copy(0, &ix(&[3, 0], &[2]), &x[1])
        }),
        case("index_fill", vec![smooth(&s, 7)], |x| x[0].index_fill(1, &ix(&[0, 2], &[2]), -1.0)),
        case("index_put", vec![smooth(&s, 8), smooth(&[3], 9)], |x| {
            x[0].index_put([&ix(&[0, 2, 3], &[3]), &ix(&[1, 1, 0], &[3])], &x[1], false)
        }),
        case("index_put_accumulate", vec![smooth(&s, 10), smooth(&[4], 11)], |x| {
            x[0].index_put([&ix(&[0, 2, 0, 0], &[4]), &ix(&[1, 1, 1, 2], &[4])], &x[1], true)
        }),
        case("index_put_rows_broadcast", vec![smooth(&s, 12), smooth(&[3], 13)], |x| {
            x[0].index_put([&ix(&[1, 3], &[2])], &x[1], false)
        }),
        case("index_put_mask", vec![smooth(&s, 14)], |x| {
            x[0].index_put([&mask(&[true, false, false, true], &[4])], 0.0, false)
        }),
        case("masked_fill", vec![smooth(&s, 15)], |x| {
            x[0].masked_fill(
                &mask(
                    &[true, false, true, false, false, true, true, false, false, true, false, true],
                    &[4, 3],
                ),
                2.0,
            )
        }),
        case("masked_fill_broadcast_tensor", vec![smooth(&s, 16), leaf(t(&[0.3], &[]))], |x| {
            x[0].masked_fill(&mask(&[true, false, true], &[3]), &x[1])
        }),
        case("masked_select", vec![smooth(&s, 17)], |x| {
            x[0].masked_select(&mask(
                &[true, false, true, false, false, true, true, false, false, true, false, true],
                &[4, 3],
            ))
        }),
        case("masked_select_broadcast", vec![smooth(&[3], 18)], |x| {
            x[0].masked_select(&mask(&[true, false, false, true, true, true], &[2, 3]))
        }),
        case("masked_scatter", vec![smooth(&s, 19), smooth(&[7], 20)], |x| {
            x[0].masked_scatter(
                &mask(
                    &[true, false, true, false, false, true, true, false, false, true, false, true],
                    &[4, 3],
                ),
                &x[1],
            )
        }),
        case("take", vec![smooth(&s, 21)], |x| x[0].take(&ix(&[0, 11, 5, 5, -1], &[5]))),
        case("take_2d_index", vec![smooth(&s, 22)], |x| x[0].take(&ix(&[0, 7, 3, 7], &[2, 2]))),
        case("take_along_dim", vec![smooth(&s, 23)], |x| {
            x[0].take_along_dim(&ix(&[2, 0, 1, 1, 0, 0, 2, 2], &[4, 2]), Some(1))
        }),
        case("take_along_dim_flat", vec![smooth(&s, 24)], |x| {
            x[0].take_along_dim(&ix(&[3, 3, 10], &[3]), None)
        }),
        case("i_tensor", vec![smooth(&s, 25)], |x| x[0].i(&ix(&[3, 0, 3], &[3]))),
        case("i_ellipsis_tensor", vec![smooth(&s, 26)], |x| x[0].i((Ellipsis, &ix(&[2, 2, 0], &[3])))),
        case("i_two_tensors", vec![smooth(&s, 27)], |x| {
            x[0].i((&ix(&[0, 3, 0], &[3]), &ix(&[2, 1, 2], &[3])))
        }),
        case("i_broadcast_tensors", vec![smooth(&s, 28)], |x| {
            x[0].i((&ix(&[0, 3], &[2, 1]), &ix(&[2, 1, 2], &[3])))
        }),
        case("i_mask", vec![smooth(&s, 29)], |x| x[0].i(&mask(&[true, false, true, true], &[4]))),
        case("i_full_mask", vec![smooth(&s, 30)], |x| {
            x[0].i(&mask(
                &[true, false, true, false, false, true, true, false, false, true, false, true],
                &[4, 3],
            ))
        }),
        case("i_basic", vec![smooth(&s, 31)], |x| x[0].i((1.., NewAxis, TensorIndex::slice(.., 2)))),
        case("i_int_and_tensor", vec![smooth(&[2, 4, 3], 32)], |x| x[0].i((1, .., &ix(&[2, 0], &[2])))),
        case("i_separated_tensors", vec![smooth(&[2, 4, 3], 33)], |x| {
            x[0].i((&ix(&[1, 0], &[2]), .., &ix(&[2, 0], &[2])))
        }),
    ]
}

#[test]
fn index_ops() {
    run_family("index_ops", Check::Grad);
}

/// The `where_family` cases.
pub fn where_family_cases() -> Vec<Case> {
    vec![
        case("where_both", vec![smooth(&[2, 3], 1), smooth(&[2, 3], 2)], |x| {
            Tensor::where_cond(&mask(&[true, false, true, false, false, true], &[2, 3]), &x[0], &x[1])
        }),
        case("where_broadcast", vec![smooth(&[3], 3), smooth(&[2, 1], 4)], |x| {
            Tensor::where_cond(&mask(&[true, false, true, false, false, true], &[2, 3]), &x[0], &x[1])
        }),
        case("where_self", vec![smooth(&[2, 3], 5)], |x| {
            mask(&[true, true, false, false, true, false], &[2, 3]).where_self(&x[0], -1.0)
        }),
    ]
}

#[test]
fn where_family() {
    run_family("where_family", Check::Grad);
}
