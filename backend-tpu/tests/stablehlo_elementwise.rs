//! Emitted elementwise programs compile on the CPU plugin and compute what the CPU backend
//! computes, on random inputs with special values (±0, ±∞, NaN, halves).

mod common;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::pjrt::{Buffer, Client, CompileOptions, ElementType, Executable, TensorType};
use oxtorch_backend_tpu::stablehlo::{binary_program, compare_program, unary_program};
use oxtorch_core::ops::{BinaryOp, CmpOp, Prim, UnaryOp};
use oxtorch_core::{BackendStorage, DType, Layout};

const DIMS: [usize; 2] = [4, 8];

/// Deterministic pseudo-random values in [-4, 4) with special values mixed in.
fn random_f64(seed: u64, n: usize) -> Vec<f64> {
    let specials = [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5, -2.5, 1.5, 1.0, -1.0];
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|i| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if i % 5 == 0 {
                specials[(state >> 33) as usize % specials.len()]
            } else {
                ((state >> 11) as f64 / (1u64 << 53) as f64) * 8.0 - 4.0
            }
        })
        .collect()
}

fn storage(dtype: DType, seed: u64) -> CpuStorage {
    let v = random_f64(seed, DIMS.iter().product());
    match dtype {
        DType::F32 => CpuStorage::F32(v.iter().map(|&x| x as f32).collect()),
        DType::F64 => CpuStorage::F64(v.into()),
        // Integers: small values (and a 0) so that products stay in range.
        DType::I32 => {
            CpuStorage::I32(v.iter().map(|&x| if x.is_finite() { (x * 3.0) as i32 } else { 7 }).collect())
        }
        DType::Bool => CpuStorage::Bool(v.iter().map(|&x| x > 0.0).collect()),
        other => panic!("no generator for {other}"),
    }
}

fn to_bytes(s: &CpuStorage) -> Vec<u8> {
    match s {
        CpuStorage::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        CpuStorage::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        CpuStorage::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        CpuStorage::Bool(v) => v.iter().map(|&x| x as u8).collect(),
        other => panic!("unexpected output {other:?}"),
    }
}

/// Values as f64 for comparison.
fn values(ty: ElementType, bytes: &[u8]) -> Vec<f64> {
    match ty {
        ElementType::F32 => {
            bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect()
        }
        ElementType::F64 => {
            bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
        }
        ElementType::S32 => {
            bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f64).collect()
        }
        ElementType::Pred => bytes.iter().map(|&b| b as f64).collect(),
        other => panic!("unexpected type {other}"),
    }
}

fn tensor_type(dtype: DType) -> TensorType {
    TensorType::new(dtype.into(), &DIMS.map(|d| d as i64))
}

/// Runs `program` on the plugin and `prim` on the CPU backend; compares the results.
fn check(
    client: &Client,
    what: &str,
    program: &str,
    prim: Prim,
    inputs: &[CpuStorage],
    failures: &mut Vec<String>,
) {
    let layout = Layout::contiguous(DIMS.to_vec());
    let cpu_inputs: Vec<(&CpuStorage, &Layout)> = inputs.iter().map(|s| (s, &layout)).collect();
    let expected = CpuStorage::execute(&prim, &cpu_inputs).unwrap().remove(0);
    let exe = match Executable::compile(client, program, &CompileOptions::default()) {
        Ok(exe) => exe,
        Err(e) => {
            failures.push(format!("{what}: does not compile: {e}\n{program}"));
            return;
        }
    };
    let device = client.device(0).unwrap();
    let buffers: Vec<Buffer> = inputs
        .iter()
        .map(|s| {
            Buffer::from_host(client, device, &to_bytes(s), s.dtype().into(), &DIMS.map(|d| d as i64))
                .unwrap()
        })
        .collect();
    let args: Vec<&Buffer> = buffers.iter().collect();
    let out = exe.execute(&args).unwrap().remove(0);
    let out_type: ElementType = expected.dtype().into();
    assert_eq!(out.element_type(), out_type, "{what}");
    let got = values(out_type, &out.to_host().unwrap());
    let want = values(out_type, &to_bytes(&expected));
    let input_values: Vec<Vec<f64>> = inputs.iter().map(|s| values(s.dtype().into(), &to_bytes(s))).collect();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let close = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-6 + 1e-5 * w.abs();
        if !close {
            let ins: Vec<f64> = input_values.iter().map(|v| v[i]).collect();
            failures.push(format!("{what}: element {i} of inputs {ins:?}: xla {g}, cpu {w}"));
            return;
        }
    }
}

const FLOAT_UNARY: &[UnaryOp] = &[
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
    UnaryOp::Tan,
    UnaryOp::Tanh,
    UnaryOp::Sigmoid,
    UnaryOp::Relu,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Round,
    UnaryOp::Trunc,
    UnaryOp::Frac,
    UnaryOp::Expm1,
    UnaryOp::Log1p,
    UnaryOp::Exp2,
    UnaryOp::Log2,
    UnaryOp::Log10,
    UnaryOp::Atan,
    UnaryOp::Erf,
    UnaryOp::IsNan,
    UnaryOp::IsFinite,
    UnaryOp::IsInf,
    UnaryOp::IsPosInf,
    UnaryOp::IsNegInf,
    UnaryOp::Silu,
    UnaryOp::Gelu,
    UnaryOp::LeakyRelu(0.01),
    UnaryOp::Hardtanh { min: -1.0, max: 2.0 },
    UnaryOp::Hardsigmoid,
    UnaryOp::Hardswish,
];

const INT_UNARY: &[UnaryOp] =
    &[UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sign, UnaryOp::Square, UnaryOp::Relu, UnaryOp::BitNot];

const FLOAT_BINARY: &[BinaryOp] = &[
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::Atan2,
    BinaryOp::Fmod,
    BinaryOp::Remainder,
];

const INT_BINARY: &[BinaryOp] = &[
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
];

const COMPARISONS: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

#[test]
fn unary_ops_match_the_cpu_backend() {
    let Some(client) = common::client() else { return };
    let mut failures = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        let x = storage(dtype, 1);
        for &op in FLOAT_UNARY {
            let program = unary_program(op, &tensor_type(dtype)).unwrap();
            check(
                &client,
                &format!("{op:?} {dtype}"),
                &program,
                Prim::Unary(op),
                std::slice::from_ref(&x),
                &mut failures,
            );
        }
    }
    let x = storage(DType::I32, 2);
    for &op in INT_UNARY {
        let program = unary_program(op, &tensor_type(DType::I32)).unwrap();
        check(
            &client,
            &format!("{op:?} int32"),
            &program,
            Prim::Unary(op),
            std::slice::from_ref(&x),
            &mut failures,
        );
    }
    let x = storage(DType::Bool, 3);
    let program = unary_program(UnaryOp::BitNot, &tensor_type(DType::Bool)).unwrap();
    check(&client, "BitNot bool", &program, Prim::Unary(UnaryOp::BitNot), &[x], &mut failures);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn binary_ops_and_comparisons_match_the_cpu_backend() {
    let Some(client) = common::client() else { return };
    let mut failures = Vec::new();
    for dtype in [DType::F32, DType::F64, DType::I32] {
        let inputs = [storage(dtype, 10), storage(dtype, 11)];
        let ops = if dtype == DType::I32 { INT_BINARY } else { FLOAT_BINARY };
        for &op in ops {
            let program = binary_program(op, &tensor_type(dtype)).unwrap();
            check(&client, &format!("{op:?} {dtype}"), &program, Prim::Binary(op), &inputs, &mut failures);
        }
        for op in COMPARISONS {
            let program = compare_program(op, &tensor_type(dtype)).unwrap();
            check(&client, &format!("{op:?} {dtype}"), &program, Prim::Compare(op), &inputs, &mut failures);
        }
    }
    let inputs = [storage(DType::Bool, 12), storage(DType::Bool, 13)];
    for op in [BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor] {
        let program = binary_program(op, &tensor_type(DType::Bool)).unwrap();
        check(&client, &format!("{op:?} bool"), &program, Prim::Binary(op), &inputs, &mut failures);
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn ops_not_lowered_are_errors() {
    let err = unary_program(UnaryOp::BitNot, &tensor_type(DType::F32)).unwrap_err().to_string();
    assert_eq!(err, "the xla backend does not lower \"bitwise_not\" for f32 yet");
    assert!(binary_program(BinaryOp::Div, &tensor_type(DType::I32)).is_err());
    assert!(unary_program(UnaryOp::Neg, &tensor_type(DType::Bool)).is_err());
}
