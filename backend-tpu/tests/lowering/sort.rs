//! Sort, median, cumulative scans, searchsorted, histc, bincount; the selection ops stay on the host.

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::pjrt::TensorType;
use oxtorch_core::ops::{Prim, SortOp};
use oxtorch_core::DType;

use crate::harness::{indices, random, Checker, Mix, ALL, FLOATS};

const SHAPES: [(&[usize], usize); 5] =
    [(&[9], 0), (&[4, 6], 0), (&[4, 6], 1), (&[2, 3, 5], 1), (&[2, 3, 5], 2)];

#[test]
fn sort_and_median() {
    let Some(mut c) = Checker::new() else { return };
    for (s, (dims, dim)) in SHAPES.iter().enumerate() {
        for (k, dtype) in ALL.into_iter().enumerate() {
            for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (s * 100 + k * 10 + m) as u64, mix);
                for descending in [false, true] {
                    c.check_or_refused(
                        &Prim::Sort(SortOp::Sort { dim: *dim, descending }),
                        std::slice::from_ref(&x),
                        1.0,
                    );
                }
                for ignore_nan in [false, true] {
                    c.check_or_refused(
                        &Prim::Sort(SortOp::Median { dim: *dim, ignore_nan }),
                        std::slice::from_ref(&x),
                        1.0,
                    );
                }
            }
        }
    }
    // All-NaN rows for nanmedian.
    let nan = (CpuStorage::F32(vec![f32::NAN, f32::NAN, 1.0, f32::NAN, 2.0, f32::NAN].into()), vec![2, 3]);
    c.check(&Prim::Sort(SortOp::Median { dim: 1, ignore_nan: true }), std::slice::from_ref(&nan));
    c.check(&Prim::Sort(SortOp::Median { dim: 1, ignore_nan: false }), &[nan]);
    c.finish();
}

#[test]
fn scans() {
    let Some(mut c) = Checker::new() else { return };
    for (s, (dims, dim)) in SHAPES.iter().enumerate() {
        for (k, dtype) in ALL.into_iter().enumerate() {
            for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (s * 100 + k * 10 + m) as u64, mix);
                let dim = *dim;
                for op in [
                    SortOp::CumSum { dim },
                    SortOp::CumProd { dim },
                    SortOp::CumMax { dim },
                    SortOp::CumMin { dim },
                    SortOp::LogCumSumExp { dim },
                ] {
                    c.check_or_refused(&Prim::Sort(op), std::slice::from_ref(&x), 4.0);
                }
            }
        }
    }
    c.finish();
}

/// `x` sorted along its last dim (NaN last), as searchsorted expects.
fn sorted_rows(x: (CpuStorage, Vec<usize>)) -> (CpuStorage, Vec<usize>) {
    let (s, d) = x;
    let row = *d.last().unwrap();
    if row == 0 {
        return (s, d);
    }
    let sort = |v: &mut [f64]| {
        v.sort_by(|a, b| {
            a.partial_cmp(b).unwrap_or(if a.is_nan() {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            })
        })
    };
    let s = match &s {
        CpuStorage::F32(v) => {
            let mut w: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            w.chunks_mut(row).for_each(sort);
            CpuStorage::F32(w.iter().map(|&x| x as f32).collect())
        }
        CpuStorage::I64(v) => {
            let mut w = v.clone();
            w.chunks_mut(row).for_each(|r| r.sort());
            CpuStorage::I64(w)
        }
        CpuStorage::I32(v) => {
            let mut w = v.clone();
            w.chunks_mut(row).for_each(|r| r.sort());
            CpuStorage::I32(w)
        }
        other => other.clone(),
    };
    (s, d)
}

#[test]
fn searchsorted_histc_bincount() {
    let Some(mut c) = Checker::new() else { return };
    for (k, dtype) in [DType::F32, DType::I64, DType::I32].into_iter().enumerate() {
        for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
            let seed = (k * 10 + m) as u64;
            for (sd, vd) in [
                (vec![7], vec![3, 4]),
                (vec![3, 6], vec![3, 5]),
                (vec![1], vec![4]),
                (vec![8], vec![]),
                (vec![0], vec![3]),
            ] {
                let seq = sorted_rows(random(dtype, &sd, seed, mix));
                let vals = random(dtype, &vd, seed + 1, mix);
                for right in [false, true] {
                    c.check(&Prim::Sort(SortOp::SearchSorted { right }), &[seq.clone(), vals.clone()]);
                }
            }
            // Unsorted rows (with NaN anywhere): torch's search path is followed exactly.
            let seq = random(dtype, &[9], seed + 2, mix);
            let vals = random(dtype, &[6], seed + 3, mix);
            c.check(&Prim::Sort(SortOp::SearchSorted { right: false }), &[seq, vals]);
        }
    }
    for (k, dtype) in FLOATS.into_iter().enumerate() {
        let x = random(dtype, &[5, 8], k as u64, Mix::Specials);
        for (bins, min, max) in [(4, -2.0, 2.0), (7, -4.0, 4.0), (1, 0.0, 1.0), (10, -1.3, 2.9)] {
            c.check(&Prim::Sort(SortOp::Histc { bins, min, max }), std::slice::from_ref(&x));
        }
    }
    for (k, dtype) in [DType::U8, DType::I16, DType::I32, DType::I64].into_iter().enumerate() {
        let (ix, d) = indices(&[13], 0, 6, k as u64);
        let CpuStorage::I64(v) = &ix else { unreachable!() };
        let x = match dtype {
            DType::U8 => CpuStorage::U8(v.iter().map(|&i| i as u8).collect()),
            DType::I16 => CpuStorage::I16(v.iter().map(|&i| i as i16).collect()),
            DType::I32 => CpuStorage::I32(v.iter().map(|&i| i as i32).collect()),
            _ => ix.clone(),
        };
        let x = (x, d);
        c.check(&Prim::Sort(SortOp::Bincount { length: 8, weighted: false }), std::slice::from_ref(&x));
        for wt in [DType::F32, DType::F64] {
            let w = random(wt, &[13], k as u64 + 7, Mix::Plain);
            c.check(&Prim::Sort(SortOp::Bincount { length: 6, weighted: true }), &[x.clone(), w]);
        }
    }
    c.finish();
}

#[test]
fn selection_ops_stay_on_the_host() {
    let Some(mut c) = Checker::new() else { return };
    let t = TensorType::new(DType::F32.into(), &[4, 5]);
    for op in [
        SortOp::TopK { k: 2, dim: 1, largest: true, sorted: true },
        SortOp::KthValue { k: 2, dim: 1 },
        SortOp::Mode { dim: 1 },
        SortOp::Unique { consecutive: false },
    ] {
        c.unsupported(&Prim::Sort(op), std::slice::from_ref(&t));
    }
    c.finish();
}

#[test]
fn quantile() {
    let Some(mut c) = Checker::new() else { return };
    for (s, (dims, dim)) in SHAPES.iter().enumerate() {
        for (k, dtype) in FLOATS.into_iter().enumerate() {
            for (m, mix) in [Mix::Specials, Mix::Ties, Mix::Plain].into_iter().enumerate() {
                let x = random(dtype, dims, (s * 100 + k * 10 + m) as u64, mix);
                let q = match dtype {
                    DType::F32 => CpuStorage::F32(vec![0.0, 0.25, 0.5, 0.9, 1.0, 0.33].into()),
                    DType::F64 => CpuStorage::F64(vec![0.0, 0.25, 0.5, 0.9, 1.0, 0.33].into()),
                    DType::F16 => CpuStorage::F16(
                        [0.0, 0.25, 0.5, 0.9, 1.0, 0.33].map(oxtorch_core::f16::from_f64).to_vec().into(),
                    ),
                    _ => CpuStorage::BF16(
                        [0.0, 0.25, 0.5, 0.9, 1.0, 0.33].map(oxtorch_core::bf16::from_f64).to_vec().into(),
                    ),
                };
                for interpolation in ["linear", "lower", "higher", "midpoint", "nearest"] {
                    let prim = Prim::Sort(SortOp::Quantile { dim: *dim, interpolation });
                    c.check(&prim, &[x.clone(), (q.clone(), vec![6])]);
                }
            }
        }
    }
    c.finish();
}
