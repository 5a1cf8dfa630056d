//! A seeded random fuzz (seed 34) of tensor printing against torch's `repr(tensor)`
//! (print_fuzz_golden.rs, from make_print_fuzz_golden.py): every dtype, shapes of rank 0-4 with
//! empty and size-1 dims, awkward values (1e-8 next to 1e8, integer-valued floats, -0.0, NaN,
//! +-inf, values rounding differently at 4 decimals, integer extremes), summarised tensors,
//! non-contiguous inputs (transposed, permuted, step-sliced), autograd suffixes and print-option
//! variations. All mismatches are collected and reported together at the end.
//!
//! Every case prints under `with_printoptions` (a per-thread override, defaults included), so
//! tests that change the process-wide options in parallel cannot interfere.

use oxtorch_tensor::{with_printoptions, DType, PrintOptions, Result, Tensor};

use crate::common::{panic_message, quietly};
use crate::print_fuzz_golden::{Case, CASES};

fn dtype_of(name: &str) -> DType {
    match name {
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i8" => DType::I8,
        "u8" => DType::U8,
        "i16" => DType::I16,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn nums(text: &str) -> Vec<i64> {
    text.split(',').filter(|s| !s.is_empty()).map(|s| s.trim().parse().expect("an integer")).collect()
}

/// `pattern` repeated cyclically to `numel` values.
fn cycled<T: Copy>(pattern: &[T], numel: usize) -> Vec<T> {
    if pattern.is_empty() {
        return Vec::new();
    }
    (0..numel).map(|i| pattern[i % pattern.len()]).collect()
}

/// Rebuilds the case's tensor: the contiguous base (requiring grad if asked), its layout ops,
/// then the final op.
fn build(case: &Case) -> Result<Tensor> {
    let numel: usize = case.base.iter().product();
    let dtype = dtype_of(case.dtype);
    let base = if dtype.is_float() {
        Tensor::from_slice(&cycled(case.vals, numel), case.base.to_vec())?.to_dtype(dtype)?
    } else {
        Tensor::from_slice(&cycled(case.ints, numel), case.base.to_vec())?.to_dtype(dtype)?
    };
    let mut t = if case.grad == "rg" { base.requires_grad_(true)? } else { base };
    for op in case.layout.split('|').filter(|s| !s.is_empty()) {
        let (kind, rest) = op.split_at(1);
        let n = nums(rest.trim());
        t = match kind {
            "t" => t.transpose(n[0] as isize, n[1] as isize)?,
            "p" => t.permute(n.iter().map(|&d| d as isize).collect::<Vec<_>>())?,
            "s" => t.slice(n[0] as isize, n[1]..n[2], n[3] as usize)?,
            other => panic!("unknown layout op {other}"),
        };
    }
    match case.op {
        "" => Ok(t),
        "add" => t.add(1.0),
        "mul" => t.mul(2.0),
        "neg" => t.neg(),
        other => panic!("unknown op {other}"),
    }
}

/// The case's print options.
fn options(case: &Case) -> PrintOptions {
    let (precision, threshold, edgeitems, linewidth, sci_mode) = case.opts;
    PrintOptions { precision, threshold, edgeitems, linewidth, sci_mode }
}

/// One line naming the case.
fn describe(case: &Case) -> String {
    format!(
        "case {} {} {:?} ({}) layout {:?} grad {:?} op {:?} opts {:?}",
        case.id, case.dtype, case.base, case.kind, case.layout, case.grad, case.op, case.opts
    )
}

/// `None` when oxtorch prints the case as torch does, else the failure line.
fn check(case: &Case) -> Option<String> {
    let t = match build(case) {
        Ok(t) => t,
        Err(e) => return Some(format!("{}: ERROR building the tensor: {e}", describe(case))),
    };
    let got = with_printoptions(options(case), || format!("{t}"));
    (got != case.repr).then(|| format!("{}:\n    got:  {got:?}\n    want: {:?}", describe(case), case.repr))
}

#[test]
fn printing_matches_torch_repr() {
    let mut failures = Vec::new();
    for case in CASES {
        match quietly(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case)))) {
            Ok(None) => {}
            Ok(Some(line)) => failures.push(line),
            Err(p) => failures.push(format!("{}: PANIC {}", describe(case), panic_message(&*p))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} print cases differ from torch:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Whether some case satisfies `f`.
fn has(f: impl Fn(&Case) -> bool) -> bool {
    CASES.iter().any(f)
}

#[test]
fn cases_cover_the_fuzz_space() {
    // Guards the generator: the golden file keeps its spread of dtypes and features.
    for name in ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"] {
        assert!(has(|c| c.dtype == name), "no {name} case");
    }
    assert!(CASES.len() >= 300);
    assert!(has(|c| c.repr.contains("...")), "no summarised case");
    assert!(has(|c| c.repr.contains("grad_fn=<AddBackward0>")), "no grad_fn case");
    assert!(has(|c| c.repr.contains("requires_grad=True")), "no requires_grad case");
    assert!(has(|c| c.layout.starts_with('t') || c.layout.starts_with('p')), "no transposed case");
    assert!(has(|c| c.base.contains(&0)), "no empty case");
    assert!(has(|c| c.base.is_empty()), "no 0-dim case");
    assert!(has(|c| c.base.len() == 4), "no rank-4 case");
    assert!(has(|c| c.opts.4 == Some(true)) && has(|c| c.opts.4 == Some(false)), "no sci_mode case");
}
