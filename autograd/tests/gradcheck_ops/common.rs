//! The case table, the runner and the input helpers shared by every family.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use oxtorch_autograd::{gradcheck, gradgradcheck, GradcheckOptions};
use oxtorch_tensor::{Result, Tensor};

/// Serialises the cases that draw from the default generator (dropout, gradgradcheck's seeds).
pub static RNG_LOCK: Mutex<()> = Mutex::new(());

/// The function under test: inputs to outputs.
pub type Fun = Box<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>>;

/// One numerical gradient check.
pub struct Case {
    pub name: String,
    pub f: Fun,
    pub inputs: Vec<Tensor>,
}

/// A case with one output.
pub fn case(name: &str, inputs: Vec<Tensor>, f: impl Fn(&[Tensor]) -> Result<Tensor> + 'static) -> Case {
    Case { name: name.to_string(), f: Box::new(move |xs| Ok(vec![f(xs)?])), inputs }
}

/// A case with several outputs (integer outputs are skipped by the check).
pub fn case_n(
    name: &str,
    inputs: Vec<Tensor>,
    f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>> + 'static,
) -> Case {
    Case { name: name.to_string(), f: Box::new(f), inputs }
}

/// Which check a family runs.
#[derive(Clone, Copy, PartialEq)]
pub enum Check {
    Grad,
    GradGrad,
}

/// Runs every case (a failure or panic does not stop the others), then fails with the list of
/// failing cases; `expected` is the number of cases the family must have run.
pub fn run(family: &str, cases: Vec<Case>, expected: usize, check: Check) {
    // 100x tighter than torch's defaults (atol 1e-5, rtol 1e-3): f64 central differences of these
    // small, well-scaled cases are accurate to about 1e-8.
    let opts = GradcheckOptions { eps: 1e-6, atol: 1e-7, rtol: 1e-6 };
    let mut failures = Vec::new();
    let mut ran = 0;
    for c in &cases {
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
            // A case that differentiates nothing would pass vacuously.
            assert!(c.inputs.iter().any(Tensor::requires_grad), "no input requires grad");
            let outs = (c.f)(&c.inputs)?;
            assert!(
                outs.iter().any(|o| o.requires_grad() && o.numel() > 0),
                "no non-empty output requires grad"
            );
            match check {
                Check::Grad => gradcheck(&*c.f, &c.inputs, opts),
                Check::GradGrad => gradgradcheck(&*c.f, &c.inputs, opts),
            }
        }));
        ran += 1;
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("  {}: {e}", c.name)),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("  {}: panicked: {msg}", c.name))
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{family}: {} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(ran, expected, "{family}: number of cases run");
}

/// Runs the family `name` of [`crate::FAMILIES`].
pub fn run_family(name: &str, check: Check) {
    let (_, cases, expected) =
        crate::FAMILIES.iter().find(|f| f.0 == name).unwrap_or_else(|| panic!("no family {name}"));
    run(name, cases(), *expected, check);
}

/// A small deterministic generator (splitmix64), so that inputs do not depend on test order.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1))
    }

    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// An f64 tensor from values.
pub fn t(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape.to_vec()).unwrap()
}

/// An int64 tensor from values.
pub fn ix(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape.to_vec()).unwrap()
}

/// A bool tensor from values.
pub fn mask(v: &[bool], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape.to_vec()).unwrap()
}

/// Marks a tensor as a leaf that requires grad.
pub fn leaf(x: Tensor) -> Tensor {
    x.requires_grad_(true).unwrap()
}

/// Uniform values in [lo, hi), as a leaf.
pub fn uniform(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let mut r = Rng::new(seed);
    let v: Vec<f64> = (0..numel(shape)).map(|_| lo + (hi - lo) * r.next()).collect();
    leaf(t(&v, shape))
}

/// Standard-ish values in [-2, 2), as a leaf.
pub fn smooth(shape: &[usize], seed: u64) -> Tensor {
    uniform(shape, -2.0, 2.0, seed)
}

/// Values in [lo, hi) at least 0.05 away from every kink, as a leaf.
pub fn avoid(shape: &[usize], lo: f64, hi: f64, kinks: &[f64], seed: u64) -> Tensor {
    let mut r = Rng::new(seed);
    let v: Vec<f64> = (0..numel(shape))
        .map(|_| loop {
            let x = lo + (hi - lo) * r.next();
            if kinks.iter().all(|k| (x - k).abs() > 0.05) {
                break x;
            }
        })
        .collect();
    leaf(t(&v, shape))
}

/// Values with |x| in [0.2, 2), random signs (away from the kink at zero), as a leaf.
pub fn away(shape: &[usize], seed: u64) -> Tensor {
    avoid(shape, -2.0, 2.0, &[-0.15, 0.0, 0.15], seed)
}

/// Positive values in [0.5, 2), as a leaf.
pub fn pos(shape: &[usize], seed: u64) -> Tensor {
    uniform(shape, 0.5, 2.0, seed)
}

/// Pairwise distinct values (gaps of at least 0.1: no ties for orderings), random order, as a leaf.
pub fn distinct(shape: &[usize], seed: u64) -> Tensor {
    let n = numel(shape);
    let mut r = Rng::new(seed);
    let mut v: Vec<f64> = (0..n).map(|i| (i as f64 - n as f64 / 2.0) * 0.17 + 0.03 * r.next()).collect();
    for i in (1..n).rev() {
        let j = (r.next() * (i + 1) as f64) as usize;
        v.swap(i, j);
    }
    leaf(t(&v, shape))
}

/// Values away from the integers and half-integers (where rounding ops jump), as a leaf.
pub fn off_grid(shape: &[usize], seed: u64) -> Tensor {
    let kinks: Vec<f64> = (-8..=8).map(|k| k as f64 * 0.5).collect();
    avoid(shape, -3.7, 3.7, &kinks, seed)
}

/// A plain f64 constant (no grad).
pub fn constant(shape: &[usize], seed: u64) -> Tensor {
    uniform(shape, -2.0, 2.0, seed).detach()
}

/// The gradient of `sum(f(x) * w)` w.r.t. `x` for fixed weights `w` (1 by default).
pub fn grad_of(x: &Tensor, y: &Tensor) -> Vec<f64> {
    let g =
        oxtorch_autograd::grad(&[y.sum_all().unwrap()], std::slice::from_ref(x), None, false, false, true)
            .unwrap();
    match &g[0] {
        Some(g) => g.to_f64_vec().unwrap(),
        None => vec![0.0; x.numel()],
    }
}

/// Exact comparison for small hand-made gradients.
pub fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (a, b) in got.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{what}: got {got:?}, want {want:?}");
    }
}
