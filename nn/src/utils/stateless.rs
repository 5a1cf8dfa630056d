//! `functional_call` (torch's `torch.func.functional_call` /
//! `torch.nn.utils.stateless.functional_call`): runs a module with given tensors in place of some
//! of its parameters and buffers, and puts the module's own back afterwards.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module};

/// Options of [`functional_call_with`] (torch's keyword arguments and defaults).
#[derive(Clone, Copy, Debug)]
pub struct FunctionalCallOptions {
    /// A tensor given for one name of tied members (one tensor registered under several names)
    /// replaces it under all of them (torch's default `True`).
    pub tie_weights: bool,
    /// Every parameter and buffer must be given, and nothing else (torch's default `False`).
    pub strict: bool,
}

impl Default for FunctionalCallOptions {
    fn default() -> Self {
        FunctionalCallOptions { tie_weights: true, strict: false }
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Every parameter and buffer (persistent or not) of the tree with its dotted name, tied ones
/// under each of their names (torch's `named_parameters/named_buffers(remove_duplicate=False)`).
fn named_tensors<M: Module + ?Sized>(m: &M, prefix: &str, out: &mut Vec<(String, Tensor)>) {
    m.visit(&mut |name, member| match member {
        Member::Param(t) | Member::Buffer(t) | Member::NonPersistentBuffer(t) => {
            out.push((join(prefix, name), t.clone()));
        }
        Member::Child(c) => named_tensors(c, &join(prefix, name), out),
    });
}

/// Calls `f` with each parameter and buffer of the tree, mutably, by dotted name.
fn for_each_tensor_mut<M: Module + ?Sized>(m: &mut M, prefix: &str, f: &mut dyn FnMut(&str, &mut Tensor)) {
    m.visit_mut(&mut |name, member| match member {
        MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t) => {
            f(&join(prefix, name), t)
        }
        MemberMut::Child(c) => for_each_tensor_mut(c, &join(prefix, name), f),
    });
}

/// Python's `repr` of a list of names: `['a', 'b']`.
fn py_list(names: &[String]) -> String {
    format!("[{}]", names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", "))
}

/// [`functional_call_with`] with torch's defaults (`tie_weights = true`, `strict = false`).
pub fn functional_call<M, R, I, K, V>(
    module: &mut M,
    params_and_buffers: I,
    f: impl FnOnce(&M) -> Result<R>,
) -> Result<R>
where
    M: Module + ?Sized,
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: Borrow<Tensor>,
{
    functional_call_with(module, params_and_buffers, FunctionalCallOptions::default(), f)
}

/// `functional_call(module, params_and_buffers, input)` for a single-input module: its forward
/// with the given tensors in place of its own.
pub fn functional_call_forward<M, I, K, V>(
    module: &mut M,
    params_and_buffers: I,
    input: &Tensor,
) -> Result<Tensor>
where
    M: Module + Forward + ?Sized,
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: Borrow<Tensor>,
{
    functional_call(module, params_and_buffers, |m| m.forward(input))
}

/// torch's `functional_call`: runs `f` on `module` with each tensor of `params_and_buffers`
/// (dotted name → tensor, e.g. `fc1.weight`) in place of the parameter or buffer of that name;
/// members not named keep their tensors. The given tensors are used as they are, so gradients
/// flow to them (and not to the module's own), and in-place updates (batch norm's running
/// statistics in training) land in them. The module's own tensors are put back afterwards,
/// also when `f` errs or panics (the panic then continues).
///
/// With `strict`, the names must be exactly the module's parameters and buffers (torch's
/// "Error(s) in reparametrizing for ..." otherwise); without, names the module lacks are
/// ignored. With `tie_weights`, a tensor given for one name of tied members replaces all of
/// them; different tensors for the same tied members are an error.
pub fn functional_call_with<M, R, I, K, V>(
    module: &mut M,
    params_and_buffers: I,
    options: FunctionalCallOptions,
    f: impl FnOnce(&M) -> Result<R>,
) -> Result<R>
where
    M: Module + ?Sized,
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: Borrow<Tensor>,
{
    let mut given: HashMap<String, Tensor> = HashMap::new();
    let mut repeated: Vec<String> = Vec::new();
    for (k, v) in params_and_buffers {
        let k = k.as_ref().to_string();
        if given.insert(k.clone(), v.borrow().clone()).is_some() && !repeated.contains(&k) {
            repeated.push(k);
        }
    }
    if !repeated.is_empty() {
        return Err(Error::msg(format!(
            "{} appeared in multiple dictionaries; behavior of functional call is ambiguous",
            py_list(&repeated)
        )));
    }
    let mut own = Vec::new();
    named_tensors(module, "", &mut own);
    if options.tie_weights {
        // Groups of names sharing one tensor.
        let mut groups: Vec<Vec<String>> = Vec::new();
        for (i, (_, t)) in own.iter().enumerate() {
            if own[..i].iter().any(|(_, seen)| seen.is_same(t)) {
                continue;
            }
            let names: Vec<String> =
                own.iter().filter(|(_, u)| u.is_same(t)).map(|(n, _)| n.clone()).collect();
            if names.len() > 1 {
                groups.push(names);
            }
        }
        for names in groups {
            let values: Vec<&Tensor> = names.iter().filter_map(|n| given.get(n)).collect();
            let Some(first) = values.first().copied() else { continue };
            if values.iter().any(|v| !v.is_same(first)) {
                let mut sorted = names.clone();
                sorted.sort();
                return Err(Error::msg(format!(
                    "functional_call got multiple values for keys {}, which are tied. Consider using tie_weights=False",
                    py_list(&sorted)
                )));
            }
            let first = first.clone();
            for n in names {
                given.entry(n).or_insert_with(|| first.clone());
            }
        }
    }
    if options.strict {
        let valid: BTreeSet<&str> = own.iter().map(|(n, _)| n.as_str()).collect();
        let keys: BTreeSet<&str> = given.keys().map(String::as_str).collect();
        let quote = |v: Vec<&str>| v.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ");
        let unexpected: Vec<&str> = keys.difference(&valid).copied().collect();
        let missing: Vec<&str> = valid.difference(&keys).copied().collect();
        let mut msgs = Vec::new();
        if !unexpected.is_empty() {
            msgs.push(format!("Unexpected key(s): {}.", quote(unexpected)));
        }
        if !missing.is_empty() {
            msgs.push(format!("Missing key(s): {}.", quote(missing)));
        }
        if !msgs.is_empty() {
            return Err(Error::msg(format!(
                "Error(s) in reparametrizing for {}:\n\t{}",
                module.type_name(),
                msgs.join("\n\t")
            )));
        }
    }
    // Swap the given tensors in, keeping the module's own by name.
    let mut originals: HashMap<String, Tensor> = HashMap::new();
    for_each_tensor_mut(module, "", &mut |name, t| {
        if let Some(new) = given.get(name) {
            originals.insert(name.to_string(), std::mem::replace(t, new.clone()));
        }
    });
    let outcome = {
        let m: &M = module;
        catch_unwind(AssertUnwindSafe(|| f(m)))
    };
    for_each_tensor_mut(module, "", &mut |name, t| {
        if let Some(old) = originals.get(name) {
            // A lazy module's placeholder (`[0]`) goes back only into the slot it came from: if
            // the module put a tensor of its own there (it materialized during the call), the
            // placeholder would break it.
            if old.dims() == [0] && !given.get(name).is_some_and(|g| g.is_same(&*t)) {
                return;
            }
            *t = old.clone();
        }
    });
    match outcome {
        Ok(result) => result,
        Err(panic) => resume_unwind(panic),
    }
}
