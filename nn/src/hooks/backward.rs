//! The full backward hooks of one call (torch's `torch.utils.hooks.BackwardHook`): the module's
//! input and output pass through an identity autograd function whose backward calls the hooks.

use std::sync::{Arc, Mutex, PoisonError};

use oxtorch_tensor::autograd::{Function, FunctionCtx};
use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::Module;

use super::{BackwardFn, BackwardPreFn, Entry, Link};

/// The backward hooks of one call and what passes between the output's gradient and the input's.
pub(crate) struct BackwardCall<M> {
    /// the module, as the hooks are given it
    link: Link<M>,
    /// the backward pre-hooks registered when the call started
    pre_hooks: Vec<Entry<BackwardPreFn<M>>>,
    /// the backward hooks registered when the call started
    hooks: Vec<Entry<BackwardFn<M>>>,
    /// whether the input passes through the identity (it required grad)
    hooks_input: bool,
    /// the output's gradient (after the pre-hooks), from its arrival until the input's
    grad_outputs: Mutex<Option<Vec<Option<Tensor>>>>,
}

impl<M: Module + 'static> BackwardCall<M> {
    /// The hooks of a call whose input (after the forward pre-hooks) requires grad
    /// (`hooks_input`) or not.
    pub(crate) fn new(
        link: Link<M>,
        pre_hooks: Vec<Entry<BackwardPreFn<M>>>,
        hooks: Vec<Entry<BackwardFn<M>>>,
        hooks_input: bool,
    ) -> Self {
        BackwardCall { link, pre_hooks, hooks, hooks_input, grad_outputs: Mutex::new(None) }
    }

    /// Whether the call's input is to pass through the identity.
    pub(crate) fn hooks_input(&self) -> bool {
        self.hooks_input
    }

    /// `t` through the identity whose backward calls the hooks: the input's (`output` false)
    /// or the output's.
    pub(crate) fn wrap(self: &Arc<Self>, t: &Tensor, output: bool) -> Result<Tensor> {
        let f = BackwardHookFunction { call: Arc::clone(self), output };
        f.apply(std::slice::from_ref(t))?
            .pop()
            .ok_or_else(|| Error::msg("Error while setting up backward hooks: the identity gave no output"))
    }

    /// The output's gradient arrived: the pre-hooks see (and may replace) it; it is kept for the
    /// hooks, or, when the input does not require grad, the hooks run now with `grad_input =
    /// [None]` and may not return gradients (torch's errors).
    fn output_backward(&self, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let link = self.link.read().unwrap_or_else(PoisonError::into_inner);
        // (the wrapper gave the module back: its hooks no longer run)
        let Some(m) = link.as_deref() else { return Ok(grads.to_vec()) };
        let mut grad_outputs = grads.to_vec();
        for h in &self.pre_hooks {
            if let Some(new) = (h.f)(m, &grad_outputs)? {
                if new.len() != grad_outputs.len() {
                    return Err(Error::msg(format!(
                        "Backward pre hook returned an invalid number of grad_output, got {}, but expected {}",
                        new.len(),
                        grad_outputs.len()
                    )));
                }
                check_replaced(&grad_outputs, &new)?;
                grad_outputs = new;
            }
        }
        if self.hooks_input {
            *self.grad_outputs.lock().unwrap_or_else(PoisonError::into_inner) = Some(grad_outputs.clone());
        } else {
            let grad_inputs: Vec<Option<Tensor>> = vec![None];
            for h in &self.hooks {
                let res = (h.f)(m, &grad_inputs, &grad_outputs)?;
                if res.is_some_and(|r| r.iter().any(Option::is_some)) {
                    return Err(Error::msg(
                        "Backward hook for Modules where no input requires gradient should always return None or None for all gradients.",
                    ));
                }
            }
        }
        Ok(grad_outputs)
    }

    /// The input's gradient is computed: the hooks see it with the output's, and may replace it.
    /// A gradient that did not come through the output (a double backward) passes as it is.
    fn input_backward(&self, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let taken = self.grad_outputs.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some(grad_outputs) = taken else { return Ok(grads.to_vec()) };
        let link = self.link.read().unwrap_or_else(PoisonError::into_inner);
        let Some(m) = link.as_deref() else { return Ok(grads.to_vec()) };
        let mut res = grads.to_vec();
        for h in &self.hooks {
            if let Some(out) = (h.f)(m, &res, &grad_outputs)? {
                if out.len() != res.len() {
                    return Err(Error::msg(format!(
                        "Backward hook returned an invalid number of grad_input, got {}, but expected {}",
                        out.len(),
                        res.len()
                    )));
                }
                check_replaced(&res, &out)?;
                res = out;
            }
        }
        Ok(res)
    }
}

/// torch's `BackwardHookFunction`: the identity, its backward calling the hooks of one side.
struct BackwardHookFunction<M> {
    call: Arc<BackwardCall<M>>,
    /// the output's identity (else the input's)
    output: bool,
}

impl<M: Module + 'static> BackwardHookFunction<M> {
    fn run(&self, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        if self.output {
            self.call.output_backward(grads)
        } else {
            self.call.input_backward(grads)
        }
    }
}

impl<M: Module + 'static> Function for BackwardHookFunction<M> {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        // the hooks see `None` for a gradient that did not arrive, as torch's
        ctx.set_materialize_grads(false);
        Ok(inputs.to_vec())
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let grads: Vec<Option<Tensor>> = grads.iter().cloned().map(Some).collect();
        self.run(&grads)
    }

    fn backward_unmaterialized(
        &self,
        _ctx: &FunctionCtx,
        grads: &[Option<Tensor>],
    ) -> Result<Vec<Option<Tensor>>> {
        self.run(grads)
    }

    fn name(&self) -> &'static str {
        "BackwardHookFunctionBackward"
    }
}

/// torch's checks of the gradients a hook returns in place of others: the same size and dtype.
fn check_replaced(old: &[Option<Tensor>], new: &[Option<Tensor>]) -> Result<()> {
    for (old, new) in old.iter().zip(new) {
        if let (Some(old), Some(new)) = (old, new) {
            if old.dims() != new.dims() {
                return Err(Error::msg("hook 'hook' has changed the size of value"));
            }
            if old.dtype() != new.dtype() {
                return Err(Error::msg(format!(
                    "hook 'hook' has changed the type of value (was torch.{}Tensor got torch.{}Tensor)",
                    old.dtype().scalar_type_name(),
                    new.dtype().scalar_type_name()
                )));
            }
        }
    }
    Ok(())
}
