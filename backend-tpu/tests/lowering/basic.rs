//! Where, Cast, Copy, Full, Reduce, ArgReduce, MatMul.

use oxtorch_core::ops::{ArgReduceOp, Prim, ReduceOp};
use oxtorch_core::{DType, Scalar};

use crate::harness::{indices, random, Checker, Mix, ALL, FLOATS, INTS};

const SHAPES: [&[usize]; 5] = [&[], &[7], &[3, 5], &[2, 3, 4], &[2, 0, 3]];

#[test]
fn where_copy_and_cast() {
    let Some(mut c) = Checker::new() else { return };
    for (s, dims) in SHAPES.iter().enumerate() {
        for (k, &dtype) in ALL.iter().enumerate() {
            let seed = (s * 10 + k) as u64;
            let cond = random(DType::Bool, dims, seed, Mix::Plain);
            let a = random(dtype, dims, seed + 100, Mix::Specials);
            let b = random(dtype, dims, seed + 200, Mix::Specials);
            c.check(&Prim::Where, &[cond, a.clone(), b]);
            c.check(&Prim::Copy, std::slice::from_ref(&a));
            for to in ALL {
                c.check(&Prim::Cast(to), std::slice::from_ref(&a));
            }
        }
    }
    // Floats far outside every integer range, and large integers into halves.
    for dtype in [DType::F32, DType::F64] {
        let big = match dtype {
            DType::F32 => oxtorch_backend_cpu::CpuStorage::F32(
                vec![3e9, -3e9, 1e19, -1e19, 300.0, -1.0, 2.5e9, 65504.0].into(),
            ),
            _ => oxtorch_backend_cpu::CpuStorage::F64(
                vec![3e9, -3e9, 1e19, -1e19, 300.7, -1.9, 9.3e18, -2147483648.5].into(),
            ),
        };
        for to in ALL {
            c.check(&Prim::Cast(to), &[(big.clone(), vec![8])]);
        }
    }
    let big = oxtorch_backend_cpu::CpuStorage::I64(
        vec![i64::MAX, i64::MIN, 16777217, 2049, -70000, 300, 257, -129].into(),
    );
    for to in ALL {
        c.check(&Prim::Cast(to), &[(big.clone(), vec![8])]);
    }
    c.finish();
}

#[test]
fn full() {
    let Some(mut c) = Checker::new() else { return };
    let values = [
        Scalar::Float(2.5),
        Scalar::Float(-1.7),
        Scalar::Float(f64::NAN),
        Scalar::Float(f64::NEG_INFINITY),
        Scalar::Float(300.9),
        Scalar::Int(-3),
        Scalar::Int(i64::MAX),
        Scalar::Int(1 << 40),
        Scalar::Bool(true),
        Scalar::Float(0.0),
    ];
    for dtype in ALL {
        for (i, &value) in values.iter().enumerate() {
            let shape = [vec![], vec![3], vec![2, 0], vec![2, 3]][i % 4].clone();
            c.check(&Prim::Full { shape, value, dtype }, &[]);
        }
    }
    c.finish();
}

#[test]
fn reductions() {
    let Some(mut c) = Checker::new() else { return };
    let ops = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::All, ReduceOp::Any];
    let cases: [(&[usize], &[usize]); 9] = [
        (&[], &[]),
        (&[], &[0]),
        (&[6], &[0]),
        (&[3, 5], &[0]),
        (&[3, 5], &[1]),
        (&[3, 5], &[0, 1]),
        (&[2, 3, 4], &[0, 2]),
        (&[2, 3, 4], &[1]),
        (&[2, 0, 3], &[1]),
    ];
    for (s, (dims, red)) in cases.iter().enumerate() {
        for (k, &dtype) in ALL.iter().enumerate() {
            let mix = if s % 2 == 0 { Mix::Specials } else { Mix::Plain };
            let x = random(dtype, dims, (s * 10 + k) as u64, mix);
            for op in ops {
                let prim = Prim::Reduce { op, dims: red.to_vec() };
                let float_or_bool = FLOATS.contains(&dtype) || dtype == DType::Bool;
                let refused = match op {
                    ReduceOp::All | ReduceOp::Any => dtype != DType::Bool,
                    ReduceOp::Sum | ReduceOp::Prod => dtype == DType::Bool,
                    _ => false,
                };
                if refused {
                    let t = oxtorch_backend_tpu::pjrt::TensorType::new(
                        dtype.into(),
                        &dims.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                    );
                    c.unsupported(&prim, &[t]);
                } else {
                    // Products of 20 floats in [-4, 4) grow large: relative error only.
                    let tol = if float_or_bool && op == ReduceOp::Prod { 4.0 } else { 1.0 };
                    c.check_tol(&prim, std::slice::from_ref(&x), tol);
                }
            }
        }
    }
    c.finish();
}

#[test]
fn arg_reductions() {
    let Some(mut c) = Checker::new() else { return };
    let cases: [(&[usize], usize); 6] =
        [(&[], 0), (&[9], 0), (&[4, 6], 0), (&[4, 6], 1), (&[2, 3, 5], 1), (&[2, 3, 5], 2)];
    for (s, (dims, dim)) in cases.iter().enumerate() {
        for (k, &dtype) in ALL.iter().enumerate() {
            for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (s * 100 + k * 10 + m) as u64, mix);
                for op in [ArgReduceOp::Max, ArgReduceOp::Min] {
                    c.check(&Prim::ArgReduce { op, dim: *dim }, std::slice::from_ref(&x));
                }
            }
        }
    }
    c.finish();
}

#[test]
fn matmul() {
    let Some(mut c) = Checker::new() else { return };
    let cases: [(&[usize], &[usize]); 6] = [
        (&[3, 4], &[4, 5]),
        (&[1, 7], &[7, 1]),
        (&[2, 3, 4], &[2, 4, 6]),
        (&[2, 2, 3, 5], &[2, 2, 5, 2]),
        (&[3, 0], &[0, 4]),
        (&[0, 3], &[3, 2]),
    ];
    for (s, (a, b)) in cases.iter().enumerate() {
        for (k, &dtype) in FLOATS.iter().chain(INTS.iter()).enumerate() {
            let x = random(dtype, a, (s * 10 + k) as u64, Mix::Plain);
            let y = random(dtype, b, (s * 10 + k + 5) as u64, Mix::Plain);
            c.check_tol(&Prim::MatMul, &[x, y], 2.0);
        }
    }
    let _ = indices;
    let t = oxtorch_backend_tpu::pjrt::TensorType::new(DType::Bool.into(), &[2, 2]);
    c.unsupported(&Prim::MatMul, &[t.clone(), t]);
    c.finish();
}

/// Negative controls: the harness catches a wrong value, a wrong index, a wrong order and a wrong
/// dtype (so the checks above can fail).
#[test]
fn the_harness_catches_wrong_programs() {
    let Some(c) = Checker::new() else { return };
    use crate::harness::program_vs_cpu;
    use oxtorch_core::ops::{SortOp, UnaryOp};
    let x = random(DType::F32, &[4, 6], 1, Mix::Plain);
    let ties = random(DType::I32, &[4, 6], 2, Mix::Ties);
    let wrong = [
        (Prim::Unary(UnaryOp::Neg), Prim::Unary(UnaryOp::Abs), x.clone()),
        (
            Prim::Reduce { op: ReduceOp::Sum, dims: vec![1] },
            Prim::Reduce { op: ReduceOp::Max, dims: vec![1] },
            x.clone(),
        ),
        (
            Prim::ArgReduce { op: ArgReduceOp::Max, dim: 1 },
            Prim::ArgReduce { op: ArgReduceOp::Min, dim: 1 },
            x.clone(),
        ),
        (
            Prim::Sort(SortOp::Sort { dim: 1, descending: true }),
            Prim::Sort(SortOp::Sort { dim: 1, descending: false }),
            ties.clone(),
        ),
        (Prim::Cast(DType::I32), Prim::Cast(DType::I64), x.clone()),
        (Prim::Sort(SortOp::CumMax { dim: 1 }), Prim::Sort(SortOp::CumMax { dim: 0 }), ties),
    ];
    for (lowered, prim, input) in wrong {
        let r = program_vs_cpu(c.client(), &lowered, &prim, std::slice::from_ref(&input), 1.0);
        assert!(r.is_err(), "{lowered:?} passed for {prim:?}");
    }
    // And the right program passes.
    program_vs_cpu(c.client(), &Prim::Unary(UnaryOp::Abs), &Prim::Unary(UnaryOp::Abs), &[x], 1.0).unwrap();
}
