//! Printing under torch's print options against torch (print_options_golden.rs, from
//! make_print_options_golden.py): precision, threshold/edgeitems summarisation (edgeitems 0 included),
//! forced and forbidden scientific mode, line width and the 'short'/'full' profiles, for float,
//! double, half, int64 and bool tensors; and the process-wide set/get round trip.
//!
//! The golden strings are rendered under `with_printoptions` (a per-thread override), so other
//! tests of this binary printing with the defaults in parallel are unaffected; the one test that
//! changes the process-wide options holds `GLOBAL` and restores the defaults.

use std::sync::Mutex;

use oxtorch_tensor::{
    get_printoptions, set_printoptions, with_printoptions, DType, PrintOptions, Result, Tensor,
};

use crate::print_options_golden::{CASES, OPTIONS};

/// Serializes the tests that change the process-wide print options.
static GLOBAL: Mutex<()> = Mutex::new(());

fn dtype_of(name: &str) -> DType {
    match name {
        "f16" => DType::F16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

/// The options torch's `set_printoptions(...)` gives starting from the defaults.
fn options_of(k: usize) -> PrintOptions {
    let ((precision, threshold, edgeitems, linewidth, sci_mode, profile), _) = OPTIONS[k];
    PrintOptions::default().updated(precision, threshold, edgeitems, linewidth, sci_mode, profile)
}

#[test]
fn set_printoptions_rules_match_torch() {
    for (k, &(_, (precision, threshold, edgeitems, linewidth, sci_mode))) in OPTIONS.iter().enumerate() {
        let want = PrintOptions { precision, threshold, edgeitems, linewidth, sci_mode };
        assert_eq!(options_of(k), want, "options {k}: {:?}", OPTIONS[k].0);
    }
    // An unknown profile is ignored (torch), other fields still apply.
    let o = PrintOptions::default().updated(Some(3), None, None, None, None, Some("bogus"));
    assert_eq!(o, PrintOptions { precision: 3, ..PrintOptions::default() });
}

#[test]
fn printing_under_options_matches_torch() -> Result<()> {
    for &(dtype, shape, data, expected) in CASES {
        let t = Tensor::from_slice(data, shape.to_vec())?.to_dtype(dtype_of(dtype))?;
        for (k, &want) in expected.iter().enumerate() {
            let got = with_printoptions(options_of(k), || t.to_string());
            assert_eq!(got, want, "{dtype} {shape:?} under options {:?}", OPTIONS[k].0);
        }
        // The override is gone afterwards.
        assert_eq!(t.to_string(), expected_default(&t));
    }
    Ok(())
}

/// The tensor printed with the defaults, inside an explicit default override.
fn expected_default(t: &Tensor) -> String {
    with_printoptions(PrintOptions::default(), || t.to_string())
}

#[test]
fn nested_overrides_restore() {
    let t = Tensor::from_slice(&[0.123456f32, 2.5], [2]).unwrap();
    let short = options_of(5);
    let outer = with_printoptions(short, || {
        let inner = with_printoptions(PrintOptions { precision: 6, ..short }, || t.to_string());
        assert_eq!(inner, "tensor([0.123456, 2.500000])");
        t.to_string()
    });
    assert_eq!(outer, "tensor([0.12, 2.50])");
}

#[test]
fn global_options_round_trip() {
    let _lock = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = get_printoptions();
    assert_eq!(before, PrintOptions::default());
    // Values that leave the short tensors other tests print unchanged (no row near 80 columns,
    // no tensor between 1000 and 1500 elements).
    set_printoptions(None, Some(1500), None, Some(81), None, None);
    let now = get_printoptions();
    set_printoptions(None, None, None, None, None, Some("default"));
    assert_eq!(now, PrintOptions { threshold: 1500, linewidth: 81, ..PrintOptions::default() });
    assert_eq!(get_printoptions(), PrintOptions::default());
}

#[test]
fn autograd_suffixes_as_torch() -> oxtorch_tensor::Result<()> {
    // torch 2.15's repr of the same tensors.
    let x = Tensor::from_slice(&[1.0f32, 2.0], [2])?.requires_grad_(true)?;
    assert_eq!(expected_default(&x), "tensor([1., 2.], requires_grad=True)");
    assert_eq!(expected_default(&x.mul(2.0)?), "tensor([2., 4.], grad_fn=<MulBackward0>)");
    let y = Tensor::from_slice(&[1.0f64, 2.0], [2])?.requires_grad_(true)?;
    assert_eq!(expected_default(&y.sum_all()?), "tensor(3., dtype=torch.float64, grad_fn=<SumBackward0>)");
    let empty = Tensor::zeros([0], DType::F32)?.requires_grad_(true)?;
    assert_eq!(expected_default(&empty), "tensor([], requires_grad=True)");
    let m = Tensor::ones([2, 3], DType::F32)?.requires_grad_(true)?;
    assert_eq!(
        expected_default(&m.t()?),
        "tensor([[1., 1.],\n        [1., 1.],\n        [1., 1.]], grad_fn=<TBackward0>)"
    );
    Ok(())
}
