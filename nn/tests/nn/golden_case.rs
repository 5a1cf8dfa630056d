//! The scaffolding the golden replay tests share: the tensor literal [`T`] the generated
//! `*_golden.rs` files are written in, the case layouts several files use ([`Golden`],
//! [`ModuleGolden`]), and the helpers that turn a golden tensor into a `Tensor`, name a case's
//! inputs and compare a result with torch's.
//!
//! A replay test imports what it needs (`use super::golden_case::{Golden, T};`) and then
//! `include!`s its golden file: `include!` expands in the including module, so the generated
//! code's bare `T { .. }` and `Golden { .. }` are these items (or a file's own case struct). The
//! generators (`nn/tests/make_*_golden.py`) write the literals with `nn/tests/golden_writer.py`.

use oxtorch_nn::{Module, ModuleExt, StateDict};
use oxtorch_tensor::{DType, Result, Tensor};

/// A tensor written out: its dims and row-major values (integers and booleans as whole floats).
pub struct T {
    pub dims: &'static [usize],
    pub data: &'static [f64],
}

/// A float64 tensor of a golden tensor's values.
pub fn float64(v: &T) -> Tensor {
    Tensor::from_vec(v.data.to_vec(), v.dims).unwrap()
}

/// An int64 tensor of a golden tensor's values.
pub fn int64(v: &T) -> Tensor {
    Tensor::from_vec(v.data.iter().map(|&x| x as i64).collect::<Vec<_>>(), v.dims).unwrap()
}

/// A float64 leaf of a golden tensor's values.
pub fn leaf(v: &T, requires_grad: bool) -> Tensor {
    float64(v).requires_grad_(requires_grad).unwrap()
}

/// One case of a file with one output per case: the inputs (float64, or integers written as
/// floats), torch's output, and the gradients for the differentiated inputs (of `out.sum()` or
/// `(out * c).sum()`, as the golden file's header says).
pub struct Golden {
    pub name: &'static str,
    /// `(name, values)`
    pub inputs: &'static [(&'static str, T)],
    pub out: T,
    /// `(input name, gradient)`
    pub grads: &'static [(&'static str, T)],
}

impl Golden {
    /// The case's inputs: those named in `ints` as int64 tensors, the others float64 leaves
    /// requiring grad when the case differentiates them.
    pub fn input_tensors(&self, ints: &[&str]) -> Inputs {
        Inputs(
            self.inputs
                .iter()
                .map(|(k, v)| {
                    let t = if ints.contains(k) {
                        int64(v)
                    } else {
                        leaf(v, self.grads.iter().any(|(n, _)| n == k))
                    };
                    (*k, t)
                })
                .collect(),
        )
    }
}

/// One case run through a module (or a function without parameters) with several outputs.
pub struct ModuleGolden {
    pub name: &'static str,
    /// `(name, values)`
    pub inputs: &'static [(&'static str, T)],
    /// torch's state dict, in its order
    pub params: &'static [(&'static str, T)],
    /// the outputs (integer ones written as floats)
    pub outs: &'static [T],
    /// one cotangent per output (zeros for integer outputs, which stay out of the loss)
    pub cots: &'static [T],
    /// `(input name, gradient of sum_k (out_k * cot_k).sum())`
    pub input_grads: &'static [(&'static str, T)],
    /// `(state-dict key, gradient of the loss)`
    pub param_grads: &'static [(&'static str, T)],
}

/// The outputs of a [`ModuleGolden`] case and the parameters of its module (by state-dict key).
pub type Run = (Vec<Tensor>, Vec<(String, Tensor)>);

/// Checks that `m` has torch's state-dict keys in torch's order, moves it to float64 and loads
/// torch's values (strict).
pub fn load<M: Module>(g: &ModuleGolden, mut m: M) -> M {
    let sd = m.state_dict();
    let keys: Vec<&str> = sd.keys().collect();
    let want: Vec<&str> = g.params.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, want, "{}: state-dict keys", g.name);
    m.double().unwrap();
    let mut torch_sd = StateDict::new();
    for (k, v) in g.params {
        torch_sd.insert(k, float64(v));
    }
    m.load_state_dict(&torch_sd, true).unwrap_or_else(|e| panic!("{}: {e}", g.name));
    m
}

/// Runs `f` on the module `m` loaded with the case's parameters.
pub fn module<M: Module>(g: &ModuleGolden, m: M, f: impl FnOnce(&M) -> Result<Vec<Tensor>>) -> Result<Run> {
    let m = load(g, m);
    let outs = f(&m)?;
    Ok((outs, m.named_parameters()))
}

/// A function of the inputs, without parameters.
pub fn stateless(outs: Result<Vec<Tensor>>) -> Result<Run> {
    Ok((outs?, Vec::new()))
}

impl ModuleGolden {
    /// Compares a run of the case with torch's: the float outputs within `rtol` (then
    /// `sum_k (out_k * cot_k).sum()` is backpropagated), the integer ones exactly (int64, on the
    /// cpu), and the gradients of the inputs and of every parameter within `rtol`.
    pub fn check(&self, inputs: &Inputs, (outs, params): Run, rtol: f64) -> Result<()> {
        assert_eq!(outs.len(), self.outs.len(), "{}: number of outputs", self.name);
        let mut loss: Option<Tensor> = None;
        for (k, ((out, want), cot)) in outs.iter().zip(self.outs).zip(self.cots).enumerate() {
            let what = format!("{}.out{k}", self.name);
            if out.dtype().is_float() {
                assert_close(&what, out, want, rtol);
                let term = out.mul(float64(cot))?.sum_all()?;
                loss = Some(match loss {
                    Some(l) => l.add(&term)?,
                    None => term,
                });
            } else {
                assert_eq!(out.dtype(), DType::I64, "{what}: dtype");
                assert!(out.device().is_cpu(), "{what}: device");
                assert_close(&what, &out.to_dtype(DType::F64)?, want, 0.0);
            }
        }
        loss.expect("a float output").backward()?;
        for (k, want) in self.input_grads {
            let got = inputs.t(k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", self.name));
            assert_close(&format!("{}.grad.{k}", self.name), &got, want, rtol);
        }
        assert_eq!(params.len(), self.param_grads.len(), "{}: parameters", self.name);
        for (k, want) in self.param_grads {
            let p = params.iter().find(|(n, _)| n == k).map(|(_, p)| p);
            let p = p.unwrap_or_else(|| panic!("{}: no parameter {k}", self.name));
            let got = p.grad().unwrap_or_else(|| panic!("{}: no gradient for parameter {k}", self.name));
            assert_close(&format!("{}.param_grad.{k}", self.name), &got, want, rtol);
        }
        Ok(())
    }
}

/// A case's input tensors by name.
pub struct Inputs(pub Vec<(&'static str, Tensor)>);

impl Inputs {
    /// The input `k`, if the case has one.
    pub fn get(&self, k: &str) -> Option<&Tensor> {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, t)| t)
    }

    /// The input `k` (panics when the case has none).
    pub fn t(&self, k: &str) -> &Tensor {
        self.get(k).unwrap_or_else(|| panic!("no input {k}"))
    }
}

/// torch's `allclose` rule with `rtol = atol = tol` (0: exact) for a float64 result: the shape,
/// the dtype and the element count must be torch's, infinities and NaNs match exactly.
pub fn assert_close(what: &str, got: &Tensor, want: &T, tol: f64) {
    assert_eq!(got.dims(), want.dims, "{what}: shape");
    assert_eq!(got.dtype(), DType::F64, "{what}: dtype");
    assert_values_close(what, &got.to_f64_vec().unwrap(), want, tol);
}

/// [`assert_close`] for a result of any dtype, compared after a cast to float64 (the dtype is the
/// caller's to check).
pub fn assert_close_as_f64(what: &str, got: &Tensor, want: &T, tol: f64) {
    assert_eq!(got.dims(), want.dims, "{what}: shape");
    assert_values_close(what, &got.to_f64_vec().unwrap(), want, tol);
}

/// The element count and the values of a result against torch's, as [`assert_close`] says.
fn assert_values_close(what: &str, a: &[f64], want: &T, tol: f64) {
    assert_eq!(a.len(), want.data.len(), "{what}: numel");
    for (i, (x, y)) in a.iter().zip(want.data).enumerate() {
        let ok = if y.is_finite() {
            (x - y).abs() <= tol * (1.0 + y.abs())
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        assert!(ok, "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

/// `c = 1, 2, 3, ...` shaped like `out` (the golden gradients of `(out * c).sum()`).
pub fn ramp(out: &Tensor) -> Tensor {
    let n = out.numel();
    Tensor::from_vec((1..=n).map(|i| i as f64).collect::<Vec<_>>(), out.dims().to_vec()).unwrap()
}

/// The error message of a call that must fail.
pub fn err<R: std::fmt::Debug>(r: Result<R>) -> String {
    r.unwrap_err().to_string()
}

/// A float64 tensor of `v` shaped `dims`.
pub fn f64s(v: &[f64], dims: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), dims).unwrap()
}

/// A tensor of zeros shaped `dims`, with the default options.
pub fn zeros(dims: &[usize]) -> Tensor {
    Tensor::zeros(dims.to_vec(), ()).unwrap()
}
