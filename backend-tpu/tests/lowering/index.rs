//! Cat, Gather, Scatter (every reduction, with and without self), Embedding.

use oxtorch_backend_tpu::pjrt::TensorType;
use oxtorch_core::ops::{IndexOp, NnOp, Prim, ReduceOp, ShapeOp};
use oxtorch_core::DType;

use crate::harness::{indices, random, Checker, Mix, ALL};

#[test]
fn cat() {
    let Some(mut c) = Checker::new() else { return };
    for (k, dtype) in ALL.into_iter().enumerate() {
        let s = k as u64 * 7;
        let a = random(dtype, &[2, 3, 4], s, Mix::Specials);
        let b = random(dtype, &[2, 1, 4], s + 1, Mix::Specials);
        let e = random(dtype, &[2, 0, 4], s + 2, Mix::Specials);
        c.check(&Prim::Shape(ShapeOp::Cat { dim: 1, n: 3 }), &[a.clone(), b, e]);
        let d = random(dtype, &[5, 3, 4], s + 3, Mix::Specials);
        c.check(&Prim::Shape(ShapeOp::Cat { dim: 0, n: 2 }), &[a.clone(), d]);
        let f = random(dtype, &[2, 3, 1], s + 4, Mix::Specials);
        c.check(&Prim::Shape(ShapeOp::Cat { dim: 2, n: 2 }), &[a.clone(), f]);
        c.check(&Prim::Shape(ShapeOp::Cat { dim: 2, n: 1 }), &[a]);
    }
    c.finish();
}

#[test]
fn gather_and_embedding() {
    let Some(mut c) = Checker::new() else { return };
    for (k, dtype) in ALL.into_iter().enumerate() {
        let s = k as u64 * 11;
        let src = random(dtype, &[4, 5, 3], s, Mix::Specials);
        for dim in 0..3 {
            let size = [4, 5, 3][dim];
            let mut idims = vec![3, 4, 2];
            idims[dim] = 6;
            c.check(
                &Prim::Index(IndexOp::Gather { dim }),
                &[src.clone(), indices(&idims, 0, size, s + dim as u64)],
            );
            c.check(
                &Prim::Index(IndexOp::Gather { dim }),
                &[src.clone(), indices(&[4, 5, 3], 0, size, s + 9)],
            );
        }
        let one = random(dtype, &[7], s + 1, Mix::Plain);
        c.check(&Prim::Index(IndexOp::Gather { dim: 0 }), &[one.clone(), indices(&[0], 0, 7, 1)]);
        c.check(&Prim::Index(IndexOp::Gather { dim: 0 }), &[one, indices(&[10], 0, 7, 2)]);
        let table = random(dtype, &[6, 4], s + 2, Mix::Specials);
        for idims in [vec![5], vec![2, 3], vec![], vec![0]] {
            c.check(&Prim::Nn(NnOp::Embedding), &[table.clone(), indices(&idims, 0, 6, s + 3)]);
        }
    }
    c.finish();
}

#[test]
fn scatter() {
    let Some(mut c) = Checker::new() else { return };
    let reduces = [None, Some(ReduceOp::Sum), Some(ReduceOp::Prod), Some(ReduceOp::Max), Some(ReduceOp::Min)];
    for (k, dtype) in ALL.into_iter().enumerate() {
        let s = k as u64 * 13;
        for dim in 0..2 {
            let this = random(dtype, &[4, 5], s, Mix::Specials);
            let src = random(dtype, &[6, 6], s + 1, Mix::Specials);
            let size = [4, 5][dim];
            // Index dims: duplicates along `dim` (6 > size), smaller elsewhere.
            let idims = if dim == 0 { [6, 3] } else { [3, 6] };
            let idx = indices(&idims, 0, size, s + 2 + dim as u64);
            for reduce in reduces {
                for include_self in [true, false] {
                    let prim = Prim::Index(IndexOp::Scatter { dim, reduce, include_self });
                    c.check_tol(&prim, &[this.clone(), idx.clone(), src.clone()], 4.0);
                }
            }
        }
        let empty = indices(&[0, 5], 0, 4, 1);
        let this = random(dtype, &[4, 5], s, Mix::Plain);
        let src = random(dtype, &[4, 5], s + 5, Mix::Plain);
        c.check(
            &Prim::Index(IndexOp::Scatter { dim: 0, reduce: None, include_self: true }),
            &[this, empty, src],
        );
    }
    c.unsupported(&Prim::Index(IndexOp::Nonzero), &[TensorType::new(DType::F32.into(), &[3])]);
    c.finish();
}
