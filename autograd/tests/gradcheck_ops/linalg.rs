//! Matrix products and contractions.

use oxtorch_tensor::Tensor;

use crate::common::*;

/// The `linalg` cases.
pub fn linalg_cases() -> Vec<Case> {
    vec![
        case("mm", vec![smooth(&[2, 3], 1), smooth(&[3, 4], 2)], |x| x[0].mm(&x[1])),
        case("mm_transposed", vec![smooth(&[3, 2], 3), smooth(&[4, 3], 4)], |x| x[0].t()?.mm(&x[1].t()?)),
        case("bmm", vec![smooth(&[2, 2, 3], 5), smooth(&[2, 3, 2], 6)], |x| x[0].bmm(&x[1])),
        case("matmul_2d", vec![smooth(&[2, 3], 7), smooth(&[3, 2], 8)], |x| x[0].matmul(&x[1])),
        case("matmul_1d_1d", vec![smooth(&[3], 9), smooth(&[3], 10)], |x| x[0].matmul(&x[1])),
        case("matmul_1d_2d", vec![smooth(&[3], 11), smooth(&[3, 2], 12)], |x| x[0].matmul(&x[1])),
        case("matmul_2d_1d", vec![smooth(&[2, 3], 13), smooth(&[3], 14)], |x| x[0].matmul(&x[1])),
        case("matmul_3d_1d", vec![smooth(&[2, 2, 3], 15), smooth(&[3], 16)], |x| x[0].matmul(&x[1])),
        case("matmul_1d_3d", vec![smooth(&[3], 17), smooth(&[2, 3, 2], 18)], |x| x[0].matmul(&x[1])),
        case("matmul_3d_2d", vec![smooth(&[2, 2, 3], 19), smooth(&[3, 2], 20)], |x| x[0].matmul(&x[1])),
        case("matmul_broadcast_batch", vec![smooth(&[2, 1, 2, 3], 21), smooth(&[3, 3, 2], 22)], |x| {
            x[0].matmul(&x[1])
        }),
        case("matmul_expanded_operand", vec![smooth(&[3, 1], 75), smooth(&[2, 4, 2], 76)], |x| {
            x[0].expand([2, 3, 4])?.matmul(&x[1])
        }),
        case("addmm", vec![smooth(&[2, 4], 23), smooth(&[2, 3], 24), smooth(&[3, 4], 25)], |x| {
            x[0].addmm(&x[1], &x[2], 0.5, 2.0)
        }),
        case("addmm_broadcast_bias", vec![smooth(&[4], 26), smooth(&[2, 3], 27), smooth(&[3, 4], 28)], |x| {
            x[0].addmm(&x[1], &x[2], 1.0, 1.0)
        }),
        case("baddbmm", vec![smooth(&[2, 2, 2], 29), smooth(&[2, 2, 3], 30), smooth(&[2, 3, 2], 31)], |x| {
            x[0].baddbmm(&x[1], &x[2], 0.3, -1.5)
        }),
        case("addmv", vec![smooth(&[2], 32), smooth(&[2, 3], 33), smooth(&[3], 34)], |x| {
            x[0].addmv(&x[1], &x[2], 2.0, 0.5)
        }),
        case("addr", vec![smooth(&[2, 3], 35), smooth(&[2], 36), smooth(&[3], 37)], |x| {
            x[0].addr(&x[1], &x[2], 1.0, 3.0)
        }),
        case("linear", vec![smooth(&[2, 3], 38), smooth(&[4, 3], 39), smooth(&[4], 40)], |x| {
            x[0].linear(&x[1], Some(&x[2]))
        }),
        case("linear_3d_nobias", vec![smooth(&[2, 2, 3], 41), smooth(&[4, 3], 42)], |x| {
            x[0].linear(&x[1], None)
        }),
        case("linear_1d", vec![smooth(&[3], 43), smooth(&[2, 3], 44), smooth(&[2], 45)], |x| {
            x[0].linear(&x[1], Some(&x[2]))
        }),
        case("einsum_mm", vec![smooth(&[2, 3], 46), smooth(&[3, 4], 47)], |x| {
            Tensor::einsum("ij,jk->ik", &[&x[0], &x[1]])
        }),
        case("einsum_batch", vec![smooth(&[2, 2, 3], 48), smooth(&[2, 3, 2], 49)], |x| {
            Tensor::einsum("bij,bjk->bik", &[&x[0], &x[1]])
        }),
        case("einsum_trace", vec![smooth(&[3, 3], 50)], |x| Tensor::einsum("ii->", &[&x[0]])),
        case("einsum_diag", vec![smooth(&[3, 3], 51)], |x| Tensor::einsum("ii->i", &[&x[0]])),
        case("einsum_outer_sum", vec![smooth(&[2, 3], 52), smooth(&[4], 53)], |x| {
            Tensor::einsum("ij,k->jk", &[&x[0], &x[1]])
        }),
        case("einsum_three", vec![smooth(&[2, 3], 54), smooth(&[3, 4], 55), smooth(&[4, 2], 56)], |x| {
            Tensor::einsum("ij,jk,kl->il", &[&x[0], &x[1], &x[2]])
        }),
        case("einsum_ellipsis", vec![smooth(&[2, 2, 3], 57), smooth(&[3], 58)], |x| {
            Tensor::einsum("...j,j->...", &[&x[0], &x[1]])
        }),
        case("outer", vec![smooth(&[3], 59), smooth(&[4], 60)], |x| x[0].outer(&x[1])),
        case("dot", vec![smooth(&[4], 61), smooth(&[4], 62)], |x| x[0].dot(&x[1])),
        case("vdot", vec![smooth(&[4], 63), smooth(&[4], 64)], |x| x[0].vdot(&x[1])),
        case("tensordot_2", vec![smooth(&[2, 3, 4], 65), smooth(&[3, 4, 2], 66)], |x| {
            x[0].tensordot(&x[1], 2)
        }),
        case("tensordot_0", vec![smooth(&[2, 2], 67), smooth(&[3], 68)], |x| x[0].tensordot(&x[1], 0)),
        case("tensordot_dims", vec![smooth(&[2, 3, 4], 69), smooth(&[4, 2, 3], 70)], |x| {
            x[0].tensordot_dims(&x[1], &[0, 2], &[1, 0])
        }),
        case("kron", vec![smooth(&[2, 3], 71), smooth(&[2, 2], 72)], |x| x[0].kron(&x[1])),
        case("kron_mixed_rank", vec![smooth(&[3], 73), smooth(&[2, 2], 74)], |x| x[0].kron(&x[1])),
    ]
}

#[test]
fn linalg() {
    run_family("linalg", Check::Grad);
}
