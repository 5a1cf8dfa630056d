//! Every unary and binary op and comparison on every dtype: lowered where the CPU backend runs
//! it, refused where the CPU refuses it.

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::ops::{BinaryOp, CmpOp, Prim, UnaryOp};
use oxtorch_core::DType;

use crate::harness::{random, Checker, Input, Mix, ALL};

const UNARY: &[UnaryOp] = &[
    UnaryOp::Neg,
    UnaryOp::Abs,
    UnaryOp::Sign,
    UnaryOp::Square,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sqrt,
    UnaryOp::Rsqrt,
    UnaryOp::Reciprocal,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tanh,
    UnaryOp::Sigmoid,
    UnaryOp::Relu,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Round,
    UnaryOp::Trunc,
    UnaryOp::BitNot,
    UnaryOp::IsNan,
    UnaryOp::Exp2,
    UnaryOp::Expm1,
    UnaryOp::Log2,
    UnaryOp::Log10,
    UnaryOp::Log1p,
    UnaryOp::Tan,
    UnaryOp::Asin,
    UnaryOp::Acos,
    UnaryOp::Atan,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Asinh,
    UnaryOp::Acosh,
    UnaryOp::Atanh,
    UnaryOp::Erf,
    UnaryOp::Erfc,
    UnaryOp::Erfinv,
    UnaryOp::Lgamma,
    UnaryOp::Polygamma(0),
    UnaryOp::Frac,
    UnaryOp::Logit { eps: None },
    UnaryOp::Logit { eps: Some(0.1) },
    UnaryOp::RoundDecimals(2),
    UnaryOp::RoundDecimals(-1),
    UnaryOp::NanToNum { nan: 0.5, posinf: 100.0, neginf: -7.0 },
    UnaryOp::IsInf,
    UnaryOp::IsPosInf,
    UnaryOp::IsNegInf,
    UnaryOp::IsFinite,
    UnaryOp::LeakyRelu(0.01),
    UnaryOp::Elu { alpha: 1.0, scale: 1.0, input_scale: 1.0 },
    UnaryOp::Elu { alpha: 1.6732632423543772, scale: 1.0507009873554805, input_scale: 1.0 },
    UnaryOp::Elu { alpha: 2.0, scale: 1.0, input_scale: 0.5 },
    UnaryOp::Gelu,
    UnaryOp::GeluTanh,
    UnaryOp::Silu,
    UnaryOp::Mish,
    UnaryOp::Softplus { beta: 1.0, threshold: 20.0 },
    UnaryOp::Softplus { beta: 2.0, threshold: 3.0 },
    UnaryOp::Hardtanh { min: -1.0, max: 2.0 },
    UnaryOp::Hardtanh { min: -2.5, max: 1e10 },
    UnaryOp::Hardsigmoid,
    UnaryOp::Hardswish,
    UnaryOp::Softmax { dim: 0, log: false },
    UnaryOp::Softmax { dim: 1, log: false },
    UnaryOp::Softmax { dim: 1, log: true },
    UnaryOp::Softmax { dim: 0, log: true },
];

const BINARY: &[BinaryOp] = &[
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::Remainder,
    BinaryOp::FloorDivide,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::Atan2,
    BinaryOp::Fmod,
    BinaryOp::Hypot,
    BinaryOp::CopySign,
    BinaryOp::ShiftLeft,
    BinaryOp::ShiftRight,
];

/// Inputs in (-1, 1) as well, for the ops defined there (asin, atanh, erfinv, logit).
fn inputs(dtype: DType, seed: u64) -> Vec<Input> {
    let dims = [4, 9];
    let mut out = vec![random(dtype, &dims, seed, Mix::Specials)];
    let (s, d) = random(dtype, &dims, seed + 1, Mix::Plain);
    let squashed = match &s {
        CpuStorage::F32(v) => CpuStorage::F32(v.iter().map(|x| x / 4.1).collect()),
        CpuStorage::F64(v) => CpuStorage::F64(v.iter().map(|x| x / 4.1).collect()),
        CpuStorage::F16(v) => {
            CpuStorage::F16(v.iter().map(|x| oxtorch_core::f16::from_f32(x.to_f32() / 4.1)).collect())
        }
        CpuStorage::BF16(v) => {
            CpuStorage::BF16(v.iter().map(|x| oxtorch_core::bf16::from_f32(x.to_f32() / 4.1)).collect())
        }
        other => other.clone(),
    };
    out.push((squashed, d));
    out
}

#[test]
fn unary_ops_on_every_dtype() {
    let Some(mut c) = Checker::new() else { return };
    for (k, dtype) in ALL.into_iter().enumerate() {
        for x in inputs(dtype, 10 * k as u64) {
            for &op in UNARY {
                // XLA's f32 transcendental approximations are a few ulp off libm's.
                let tol = if matches!(op, UnaryOp::Erfinv | UnaryOp::Acosh | UnaryOp::Asinh | UnaryOp::Atanh)
                {
                    10.0
                } else {
                    2.0
                };
                c.check_or_refused(&Prim::Unary(op), std::slice::from_ref(&x), tol);
            }
        }
        // Higher polygamma orders away from the negative axis's poles, where torch's float
        // trigamma rounds sin(πx) to a tiny number instead of zero (a huge finite value, where XLA
        // gives ∞); ±∞ and 0 included.
        let (s, d) = random(dtype, &[4, 9], 70 + k as u64, Mix::Plain);
        let shifted = match &s {
            CpuStorage::F32(v) => CpuStorage::F32(v.iter().map(|x| x.abs() + 0.01).collect()),
            CpuStorage::F64(v) => CpuStorage::F64(v.iter().map(|x| x.abs() + 0.01).collect()),
            other => other.clone(),
        };
        let edge_values = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.5, -2.5, 1.5, 7.0];
        let edges = match dtype {
            DType::F32 => CpuStorage::F32(edge_values.iter().map(|&v| v as f32).collect()),
            DType::F64 => CpuStorage::F64(edge_values.to_vec().into()),
            DType::F16 => {
                CpuStorage::F16(edge_values.iter().map(|&v| oxtorch_core::f16::from_f64(v)).collect())
            }
            DType::BF16 => {
                CpuStorage::BF16(edge_values.iter().map(|&v| oxtorch_core::bf16::from_f64(v)).collect())
            }
            _ => shifted.clone(),
        };
        let n = edge_values.len();
        for op in [UnaryOp::Polygamma(1), UnaryOp::Polygamma(2), UnaryOp::Polygamma(3)] {
            for x in [(shifted.clone(), d.clone()), (edges.clone(), vec![n])] {
                c.check_or_refused(&Prim::Unary(op), std::slice::from_ref(&x), 10.0);
            }
        }
        // 0-d and empty inputs.
        for dims in [&[][..], &[0, 3][..]] {
            let x = random(dtype, dims, k as u64, Mix::Specials);
            for op in [UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Softmax { dim: 0, log: false }, UnaryOp::IsNan] {
                c.check_or_refused(&Prim::Unary(op), std::slice::from_ref(&x), 2.0);
            }
        }
    }
    c.finish();
}

/// `y` with its zeros replaced by 3 (integer division by zero is a CPU error, not a value).
fn no_zeros(y: Input) -> Input {
    let (s, d) = y;
    let s = match &s {
        CpuStorage::U8(v) => CpuStorage::U8(v.iter().map(|&x| if x == 0 { 3 } else { x }).collect()),
        CpuStorage::I8(v) => CpuStorage::I8(v.iter().map(|&x| if x == 0 { 3 } else { x }).collect()),
        CpuStorage::I16(v) => CpuStorage::I16(v.iter().map(|&x| if x == 0 { 3 } else { x }).collect()),
        CpuStorage::I32(v) => CpuStorage::I32(v.iter().map(|&x| if x == 0 { 3 } else { x }).collect()),
        CpuStorage::I64(v) => CpuStorage::I64(v.iter().map(|&x| if x == 0 { 3 } else { x }).collect()),
        other => other.clone(),
    };
    (s, d)
}

#[test]
fn binary_ops_and_comparisons_on_every_dtype() {
    let Some(mut c) = Checker::new() else { return };
    for (k, dtype) in ALL.into_iter().enumerate() {
        for (m, mix) in [Mix::Specials, Mix::Plain, Mix::Ties].into_iter().enumerate() {
            let seed = (k * 10 + m) as u64 * 2;
            let x = random(dtype, &[5, 7], seed, mix);
            let y = no_zeros(random(dtype, &[5, 7], seed + 1, mix));
            for &op in BINARY {
                c.check_or_refused(&Prim::Binary(op), &[x.clone(), y.clone()], 2.0);
            }
            for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
                c.check_or_refused(&Prim::Compare(op), &[x.clone(), y.clone()], 1.0);
            }
        }
    }
    c.finish();
}
