//! `lower_vs_cpu`: runs one prim through `prim_program` on the PJRT CPU plugin and through
//! `CpuStorage::execute`, and compares every output (dtype, shape, values).

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::pjrt::{Buffer, Client, CompileOptions, ElementType, Executable, TensorType};
use oxtorch_backend_tpu::stablehlo::prim_program;
use oxtorch_core::ops::Prim;
use oxtorch_core::{bf16, f16, BackendStorage, DType, Layout};

/// A test input: a CPU storage and its (contiguous) dims.
pub type Input = (CpuStorage, Vec<usize>);

/// The float dtypes.
pub const FLOATS: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];
/// The integer dtypes.
pub const INTS: [DType; 5] = [DType::U8, DType::I8, DType::I16, DType::I32, DType::I64];
/// Every dtype.
pub const ALL: [DType; 10] = DType::ALL;

/// A deterministic generator (PCG-like LCG).
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 ^ (self.0 >> 29)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 16) % n.max(1)
    }
}

/// How special values are mixed into float inputs.
#[derive(Clone, Copy, PartialEq)]
pub enum Mix {
    /// Uniform values in [-4, 4) only.
    Plain,
    /// One in five elements is ±0, ±∞, NaN or a half-integer.
    Specials,
    /// Few distinct values (ties), no NaN.
    Ties,
}

/// Random values as f64 for a float input.
pub fn float_values(n: usize, seed: u64, mix: Mix) -> Vec<f64> {
    let specials = [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5, -2.5, 1.5, 1.0, -1.0];
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| match mix {
            Mix::Ties => (r.below(5) as f64) - 2.0,
            Mix::Specials if r.below(5) == 0 => specials[r.below(specials.len() as u64) as usize],
            _ => r.unit() * 8.0 - 4.0,
        })
        .collect()
}

/// A random storage of `dtype` with `n` elements: floats from [`float_values`], integers spread
/// over a small range around 0 (with the type's extremes mixed in unless `small`), bools half true.
pub fn random(dtype: DType, dims: &[usize], seed: u64, mix: Mix) -> Input {
    let n: usize = dims.iter().product();
    let mut r = Rng::new(seed ^ 0x9e37);
    let ints: Vec<i64> = (0..n)
        .map(|_| match mix {
            Mix::Ties => r.below(4) as i64 - 1,
            Mix::Specials if r.below(8) == 0 => [i64::MIN, i64::MAX, -1, 0][r.below(4) as usize],
            _ => r.below(41) as i64 - 20,
        })
        .collect();
    let f = float_values(n, seed, mix);
    let s = match dtype {
        DType::Bool => CpuStorage::Bool(ints.iter().map(|&v| v > 0).collect()),
        DType::U8 => CpuStorage::U8(ints.iter().map(|&v| v as u8).collect()),
        DType::I8 => CpuStorage::I8(ints.iter().map(|&v| v as i8).collect()),
        DType::I16 => CpuStorage::I16(ints.iter().map(|&v| v as i16).collect()),
        DType::I32 => CpuStorage::I32(ints.iter().map(|&v| v as i32).collect()),
        DType::I64 => CpuStorage::I64(ints.into()),
        DType::F16 => CpuStorage::F16(f.iter().map(|&v| f16::from_f64(v)).collect()),
        DType::BF16 => CpuStorage::BF16(f.iter().map(|&v| bf16::from_f64(v)).collect()),
        DType::F32 => CpuStorage::F32(f.iter().map(|&v| v as f32).collect()),
        DType::F64 => CpuStorage::F64(f.into()),
    };
    (s, dims.to_vec())
}

/// An int64 input with values in `lo..hi`.
pub fn indices(dims: &[usize], lo: i64, hi: i64, seed: u64) -> Input {
    let n: usize = dims.iter().product();
    let mut r = Rng::new(seed ^ 0x51ed);
    let v = (0..n).map(|_| lo + r.below((hi - lo).max(1) as u64) as i64).collect();
    (CpuStorage::I64(v), dims.to_vec())
}

/// Output values: exact integers (bools as 0/1) or floats.
#[derive(Debug)]
enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

fn values(dtype: DType, bytes: &[u8]) -> Values {
    fn chunks<const N: usize>(b: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
        b.chunks_exact(N).map(|c| c.try_into().unwrap())
    }
    match dtype {
        DType::Bool | DType::U8 => Values::Int(bytes.iter().map(|&b| b as i64).collect()),
        DType::I8 => Values::Int(bytes.iter().map(|&b| b as i8 as i64).collect()),
        DType::I16 => Values::Int(chunks::<2>(bytes).map(|c| i16::from_le_bytes(c) as i64).collect()),
        DType::I32 => Values::Int(chunks::<4>(bytes).map(|c| i32::from_le_bytes(c) as i64).collect()),
        DType::I64 => Values::Int(chunks::<8>(bytes).map(i64::from_le_bytes).collect()),
        DType::F16 => Values::Float(chunks::<2>(bytes).map(|c| f16::from_le_bytes(c).to_f64()).collect()),
        DType::BF16 => Values::Float(chunks::<2>(bytes).map(|c| bf16::from_le_bytes(c).to_f64()).collect()),
        DType::F32 => Values::Float(chunks::<4>(bytes).map(|c| f32::from_le_bytes(c) as f64).collect()),
        DType::F64 => Values::Float(chunks::<8>(bytes).map(f64::from_le_bytes).collect()),
    }
}

/// `(rtol, atol)` for a float dtype, scaled by `scale`.
fn tolerance(dtype: DType, scale: f64) -> (f64, f64) {
    let (r, a) = match dtype {
        DType::F64 => (1e-9, 1e-12),
        DType::F32 => (1e-5, 1e-6),
        DType::F16 => (2e-3, 1e-3),
        _ => (1e-2, 1e-2),
    };
    (r * scale, a * scale)
}

/// Compiles and runs `prim` on `inputs` on the plugin and on the CPU backend and compares every
/// output; returns a description of the first difference. `tol` scales the float tolerances.
#[allow(dead_code)]
pub fn lower_vs_cpu_tol(client: &Client, prim: &Prim, inputs: &[Input], tol: f64) -> Result<(), String> {
    program_vs_cpu(client, prim, prim, inputs, tol)
}

/// Runs the program of `lowered` against the CPU backend's `prim` (the same prim except in the
/// negative controls, which check that a wrong program is caught).
pub fn program_vs_cpu(
    client: &Client,
    lowered: &Prim,
    prim: &Prim,
    inputs: &[Input],
    tol: f64,
) -> Result<(), String> {
    let layouts: Vec<Layout> = inputs.iter().map(|(_, d)| Layout::contiguous(d.clone())).collect();
    let cpu_inputs: Vec<(&CpuStorage, &Layout)> =
        inputs.iter().zip(&layouts).map(|((s, _), l)| (s, l)).collect();
    let expected = CpuStorage::execute(prim, &cpu_inputs).map_err(|e| format!("cpu refused: {e}"))?;
    let dims_of = |d: &[usize]| d.iter().map(|&x| x as i64).collect::<Vec<_>>();
    let types: Vec<TensorType> =
        inputs.iter().map(|(s, d)| TensorType::new(s.dtype().into(), &dims_of(d))).collect();
    let program = prim_program(lowered, &types).map_err(|e| format!("not lowered: {e}"))?;
    let exe = Executable::compile(client, &program, &CompileOptions::default())
        .map_err(|e| format!("does not compile: {e}\n{program}"))?;
    let device = client.device(0).unwrap();
    let buffers: Vec<Buffer> = inputs
        .iter()
        .map(|(s, d)| Buffer::from_host(client, device, s.as_bytes(), s.dtype().into(), &dims_of(d)).unwrap())
        .collect();
    let args: Vec<&Buffer> = buffers.iter().collect();
    let outs = exe.execute(&args).map_err(|e| format!("execute failed: {e}"))?;
    if outs.len() != expected.len() {
        return Err(format!("{} outputs, cpu has {}", outs.len(), expected.len()));
    }
    let in_dims: Vec<&[usize]> = inputs.iter().map(|(_, d)| d.as_slice()).collect();
    let lens: Vec<usize> = expected.iter().map(|e| e.len()).collect();
    let shapes = prim.output_shapes(&in_dims, &lens);
    for (k, (out, want)) in outs.iter().zip(&expected).enumerate() {
        let dtype = want.dtype();
        let et: ElementType = dtype.into();
        if out.element_type() != et {
            return Err(format!("output {k}: dtype {}, cpu {dtype}", out.element_type()));
        }
        if out.dims() != dims_of(&shapes[k]) {
            return Err(format!("output {k}: dims {:?}, cpu {:?}", out.dims(), shapes[k]));
        }
        let got = values(dtype, &out.to_host().unwrap());
        let exp = values(dtype, want.as_bytes());
        match (got, exp) {
            (Values::Int(g), Values::Int(w)) => {
                if let Some(i) = (0..w.len()).find(|&i| g[i] != w[i]) {
                    return Err(format!("output {k} element {i}: xla {}, cpu {}", g[i], w[i]));
                }
            }
            (Values::Float(g), Values::Float(w)) => {
                let (rtol, atol) = tolerance(dtype, tol);
                for i in 0..w.len() {
                    let (a, b) = (g[i], w[i]);
                    let close =
                        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
                    if !close {
                        return Err(format!("output {k} element {i}: xla {a}, cpu {b}"));
                    }
                }
            }
            _ => unreachable!("one dtype"),
        }
    }
    Ok(())
}

/// [`lower_vs_cpu_tol`] with the default tolerances.
#[allow(dead_code)]
pub fn lower_vs_cpu(client: &Client, prim: &Prim, inputs: &[Input]) -> Result<(), String> {
    lower_vs_cpu_tol(client, prim, inputs, 1.0)
}

/// Collects failures of many cases and asserts none at the end.
pub struct Checker {
    client: Client,
    failures: Vec<String>,
    cases: usize,
}

impl Checker {
    /// A checker over a fresh CPU client, or `None` when the plugin is not configured.
    pub fn new() -> Option<Checker> {
        Some(Checker { client: crate::common::client()?, failures: Vec::new(), cases: 0 })
    }

    /// Checks one case.
    pub fn check(&mut self, prim: &Prim, inputs: &[Input]) {
        self.check_tol(prim, inputs, 1.0);
    }

    /// Checks one case with float tolerances scaled by `tol`.
    pub fn check_tol(&mut self, prim: &Prim, inputs: &[Input], tol: f64) {
        self.cases += 1;
        if let Err(e) = lower_vs_cpu_tol(&self.client, prim, inputs, tol) {
            let what: Vec<String> = inputs.iter().map(|(s, d)| format!("{}{d:?}", s.dtype())).collect();
            self.failures.push(format!("{prim:?} on {}: {e}", what.join(", ")));
        }
    }

    /// Checks one case when the CPU backend accepts it; when the CPU refuses it, the lowering must
    /// refuse it too (an error, never a program).
    pub fn check_or_refused(&mut self, prim: &Prim, inputs: &[Input], tol: f64) {
        let layouts: Vec<Layout> = inputs.iter().map(|(_, d)| Layout::contiguous(d.clone())).collect();
        let cpu: Vec<(&CpuStorage, &Layout)> =
            inputs.iter().zip(&layouts).map(|((s, _), l)| (s, l)).collect();
        if CpuStorage::execute(prim, &cpu).is_ok() {
            return self.check_tol(prim, inputs, tol);
        }
        self.cases += 1;
        let types: Vec<TensorType> = inputs
            .iter()
            .map(|(s, d)| TensorType::new(s.dtype().into(), &d.iter().map(|&x| x as i64).collect::<Vec<_>>()))
            .collect();
        if let Ok(program) = prim_program(prim, &types) {
            let what: Vec<String> = inputs.iter().map(|(s, d)| format!("{}{d:?}", s.dtype())).collect();
            self.failures.push(format!(
                "{prim:?} on {}: the cpu refuses it but it lowers to\n{program}",
                what.join(", ")
            ));
        }
    }

    /// Asserts that `prim` on inputs of `types` is refused with `Unsupported` (never a program).
    pub fn unsupported(&mut self, prim: &Prim, types: &[TensorType]) {
        self.cases += 1;
        match prim_program(prim, types) {
            Err(oxtorch_backend_tpu::pjrt::Error::Unsupported(_)) => {}
            other => self.failures.push(format!("{prim:?}: expected Unsupported, got {other:?}")),
        }
    }

    /// The client, for direct calls.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Panics with every failure.
    pub fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "{} of {} case(s) failed:\n{}",
            self.failures.len(),
            self.cases,
            self.failures.join("\n")
        );
        eprintln!("{} cases passed", self.cases);
    }
}
