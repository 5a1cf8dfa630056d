//! Joins, splits, repeats, reorders, padding and every view op.

use oxtorch_tensor::Tensor;

use crate::common::*;

/// All parts of a split as outputs.
fn parts(v: Vec<Tensor>) -> Vec<Tensor> {
    v
}

/// The `joins_and_splits` cases.
pub fn joins_and_splits_cases() -> Vec<Case> {
    vec![
        case("cat", vec![smooth(&[2, 3], 1), smooth(&[1, 3], 2)], |x| Tensor::cat(&[&x[0], &x[1]], 0)),
        case("cat_dim1_three", vec![smooth(&[2, 1], 3), smooth(&[2, 3], 4), smooth(&[2, 2], 5)], |x| {
            Tensor::cat(&[&x[0], &x[1], &x[2]], -1)
        }),
        case("cat_same_tensor", vec![smooth(&[2, 2], 6)], |x| Tensor::cat(&[&x[0], &x[0]], 0)),
        case("stack", vec![smooth(&[2, 3], 7), smooth(&[2, 3], 8)], |x| Tensor::stack(&[&x[0], &x[1]], 1)),
        case("hstack", vec![smooth(&[2, 3], 9), smooth(&[2, 1], 10)], |x| Tensor::hstack(&[&x[0], &x[1]])),
        case("hstack_1d", vec![smooth(&[3], 11), smooth(&[2], 12)], |x| Tensor::hstack(&[&x[0], &x[1]])),
        case("dstack", vec![smooth(&[2, 3], 26), smooth(&[2, 3, 2], 27)], |x| {
            Tensor::dstack(&[&x[0], &x[1]])
        }),
        case("vstack", vec![smooth(&[3], 13), smooth(&[2, 3], 14)], |x| Tensor::vstack(&[&x[0], &x[1]])),
        case_n("split", vec![smooth(&[5, 2], 15)], |x| Ok(parts(x[0].split(2, 0)?))),
        case_n("split_with_sizes", vec![smooth(&[2, 5], 16)], |x| {
            Ok(parts(x[0].split_with_sizes(&[1, 4], 1)?))
        }),
        case_n("chunk", vec![smooth(&[2, 5], 17)], |x| Ok(parts(x[0].chunk(3, 1)?))),
        case_n("tensor_split", vec![smooth(&[7], 18)], |x| Ok(parts(x[0].tensor_split(3, 0)?))),
        case_n("tensor_split_indices", vec![smooth(&[2, 6], 19)], |x| {
            Ok(parts(x[0].tensor_split_indices(&[1, 4], 1)?))
        }),
        case_n("unbind", vec![smooth(&[3, 2], 20)], |x| Ok(parts(x[0].unbind(0)?))),
        // only one part used downstream: the others get no gradient
        case("split_one_part", vec![smooth(&[4, 2], 21)], |x| x[0].split(2, 0)?[1].exp()),
        // two of six rows used: the gradients go into zero fills of the input, not a stack
        case("unbind_two_of_six", vec![smooth(&[6, 2], 28)], |x| {
            let rows = x[0].unbind(0)?;
            rows[1].exp()?.add(&rows[4].mul(&rows[4])?)
        }),
        case_n("meshgrid", vec![smooth(&[2], 22), smooth(&[3], 23)], |x| {
            Tensor::meshgrid(&[&x[0], &x[1]], "ij")
        }),
        case_n("broadcast_tensors", vec![smooth(&[2, 1], 24), smooth(&[3], 25)], |x| {
            Tensor::broadcast_tensors(&[&x[0], &x[1]])
        }),
    ]
}

#[test]
fn joins_and_splits() {
    run_family("joins_and_splits", Check::Grad);
}

/// The `repeats_and_reorders` cases.
pub fn repeats_and_reorders_cases() -> Vec<Case> {
    let s = [2, 3];
    vec![
        case("repeat", vec![smooth(&s, 1)], |x| x[0].repeat([2, 1, 2])),
        case("repeat_interleave", vec![smooth(&s, 2)], |x| x[0].repeat_interleave(2, Some(1))),
        case("repeat_interleave_flat", vec![smooth(&s, 3)], |x| x[0].repeat_interleave(3, None)),
        case("repeat_interleave_tensor", vec![smooth(&s, 4)], |x| {
            x[0].repeat_interleave_tensor(&ix(&[1, 0, 3], &[3]), Some(1))
        }),
        case("tile", vec![smooth(&s, 5)], |x| x[0].tile([3])),
        case("tile_more_dims", vec![smooth(&s, 6)], |x| x[0].tile([2, 1, 2])),
        case("flip", vec![smooth(&s, 7)], |x| x[0].flip([0, 1])),
        case("fliplr", vec![smooth(&s, 8)], |x| x[0].fliplr()),
        case("roll", vec![smooth(&s, 9)], |x| x[0].roll([1], [1])),
        case("roll_multi", vec![smooth(&s, 10)], |x| x[0].roll([-1, 2], [0, 1])),
        case("roll_flat", vec![smooth(&s, 11)], |x| x[0].roll([4], [0isize; 0])),
        case("rot90", vec![smooth(&s, 12)], |x| x[0].rot90(1, [0, 1])),
        case("rot90_k3", vec![smooth(&[2, 3, 2], 13)], |x| x[0].rot90(3, [1, 2])),
        case("rot90_k2", vec![smooth(&s, 14)], |x| x[0].rot90(2, [0, 1])),
        case("tril", vec![smooth(&[3, 4], 15)], |x| x[0].tril(0)),
        case("triu", vec![smooth(&[3, 4], 16)], |x| x[0].triu(1)),
        case("tril_neg_batched", vec![smooth(&[2, 3, 3], 17)], |x| x[0].tril(-1)),
    ]
}

#[test]
fn repeats_and_reorders() {
    run_family("repeats_and_reorders", Check::Grad);
}

/// The `padding` cases.
pub fn padding_cases() -> Vec<Case> {
    let x3 = || smooth(&[1, 2, 5], 1);
    let x4 = || smooth(&[1, 2, 3, 4], 2);
    vec![
        case("pad_constant", vec![x3()], |x| x[0].pad(&[1, 2], "constant", Some(0.5))),
        case("pad_constant_negative", vec![x4()], |x| x[0].pad(&[-1, 2, 1, 0], "constant", None)),
        case("pad_reflect_1d", vec![x3()], |x| x[0].pad(&[2, 3], "reflect", None)),
        case("pad_reflect_2d", vec![x4()], |x| x[0].pad(&[2, 1, 1, 2], "reflect", None)),
        case("pad_replicate_1d", vec![x3()], |x| x[0].pad(&[3, 1], "replicate", None)),
        case("pad_replicate_2d", vec![x4()], |x| x[0].pad(&[1, 2, 2, 1], "replicate", None)),
        case("pad_circular_1d", vec![x3()], |x| x[0].pad(&[2, 3], "circular", None)),
        case("pad_circular_2d", vec![x4()], |x| x[0].pad(&[1, 2, 2, 1], "circular", None)),
    ]
}

#[test]
fn padding() {
    run_family("padding", Check::Grad);
}

/// The `views` cases.
pub fn views_cases() -> Vec<Case> {
    let s = [2, 3, 4];
    vec![
        case("unfold", vec![smooth(&[2, 7], 1)], |x| x[0].unfold(1, 3, 3)),
        case("unfold_gaps", vec![smooth(&[2, 7], 2)], |x| x[0].unfold(1, 2, 3)),
        case("expand", vec![smooth(&[3, 1], 3)], |x| x[0].expand([2, 3, 4])),
        case("expand_as", vec![smooth(&[4], 4)], |x| {
            x[0].expand_as(&Tensor::zeros([3, 4], oxtorch_tensor::DType::F64)?)
        }),
        case("permute", vec![smooth(&s, 5)], |x| x[0].permute([2, 0, 1])),
        case("transpose", vec![smooth(&s, 6)], |x| x[0].transpose(0, 2)),
        case("t", vec![smooth(&[2, 3], 7)], |x| x[0].t()),
        case("narrow", vec![smooth(&s, 8)], |x| x[0].narrow(2, 1, 2)),
        case("slice_step", vec![smooth(&s, 9)], |x| x[0].slice(2, 0..4, 2)),
        case("select", vec![smooth(&s, 10)], |x| x[0].select(1, -1)),
        case("diagonal", vec![smooth(&[3, 4], 11)], |x| x[0].diagonal(0, 0, 1)),
        case("diagonal_offset_batched", vec![smooth(&s, 12)], |x| x[0].diagonal(1, 1, 2)),
        case("as_strided", vec![smooth(&[3, 4], 13)], |x| x[0].as_strided(&[2, 2], &[4, 2], Some(1))),
        case("reshape", vec![smooth(&s, 15)], |x| x[0].reshape([4, -1])),
        case("reshape_noncontiguous", vec![smooth(&s, 16)], |x| x[0].transpose(0, 1)?.reshape([-1])),
        case("view", vec![smooth(&s, 17)], |x| x[0].view([6, 4])),
        case("flatten", vec![smooth(&s, 18)], |x| x[0].flatten(1, 2)),
        case("unflatten", vec![smooth(&[2, 6], 19)], |x| x[0].unflatten(1, [3, 2])),
        case("squeeze", vec![smooth(&[2, 1, 3, 1], 20)], |x| x[0].squeeze()),
        case("squeeze_dims", vec![smooth(&[2, 1, 3, 1], 21)], |x| x[0].squeeze_dims([1])),
        case("unsqueeze", vec![smooth(&[2, 3], 22)], |x| x[0].unsqueeze(1)),
        case("movedim", vec![smooth(&s, 23)], |x| x[0].movedim([0, 1], [2, 0])),
        case("swapaxes", vec![smooth(&s, 24)], |x| x[0].swapaxes(0, 1)),
        case("view_chain", vec![smooth(&s, 25)], |x| {
            x[0].permute([1, 0, 2])?.narrow(0, 1, 2)?.select(2, 1)?.mul(2.0)
        }),
        case("atleast_3d", vec![smooth(&[3], 26)], |x| x[0].atleast_3d()),
    ]
}

#[test]
fn views() {
    run_family("views", Check::Grad);
}

/// Views whose elements overlap in the input: the gradient of an element read several times must
/// be the sum over its reads.
#[test]
fn overlapping_views() {
    let cases = vec![
        case("unfold_overlapping", vec![smooth(&[2, 5], 1)], |x| x[0].unfold(1, 3, 1)),
        case("unfold_overlapping_step2", vec![smooth(&[2, 7], 2)], |x| x[0].unfold(1, 3, 2)),
        case("as_strided_overlapping", vec![smooth(&[6], 3)], |x| x[0].as_strided(&[3, 3], &[1, 1], None)),
    ];
    run("overlapping_views", cases, 3, Check::Grad);
}
