//! A call of a [`Hooked`] module (torch's `Module._call_impl`): the forward pre-hooks, the
//! backward hooks' identities, the forward pass and the forward hooks.

use std::sync::Arc;

use oxtorch_tensor::autograd::is_grad_enabled;
use oxtorch_tensor::{Result, Tensor};

use crate::module::{Forward, Module};

use super::backward::BackwardCall;
use super::{HookLists, Hooked};

/// What a call has reached, for the always-called forward hooks of a failed call.
struct CallState {
    /// the input as the forward pass is (or was to be) given it
    args: Tensor,
    /// the output so far
    result: Option<Tensor>,
    /// the always-called forward hooks that ran
    called: Vec<u64>,
}

impl<M: Module + 'static> Hooked<M> {
    /// Runs `f` (a single-tensor method of the module, such as its forward) with the hooks
    /// around it, as torch's `module(input)`: the forward pre-hooks (each may replace the input),
    /// `f` on the input, the forward hooks (each may replace the output); with backward hooks
    /// registered, the input (when it requires grad) and the output pass through the identities
    /// whose backward calls them.
    ///
    /// As torch, the backward hooks and forward pre-hooks are those registered when the call
    /// starts, the forward hooks those registered when `f` returns (a pre-hook may add or remove
    /// forward hooks for this very call; other changes take effect at the next call). An error of
    /// a hook or of `f` is the call's; the forward hooks registered with `always_call` then still
    /// run (their own errors ignored), as torch.
    pub fn call(&self, input: &Tensor, f: impl FnOnce(&M, &Tensor) -> Result<Tensor>) -> Result<Tensor> {
        let m: &M = &self.module;
        let hooks = self.hooks.snapshot();
        if hooks.is_empty() {
            return f(m, input);
        }
        let mut state = CallState { args: input.clone(), result: None, called: Vec::new() };
        match self.run(&hooks, &mut state, f) {
            Ok(out) => Ok(out),
            Err(e) => {
                let forward = self.hooks.snapshot().forward;
                for h in forward.iter().filter(|h| h.always_call && !state.called.contains(&h.id)) {
                    // torch silences such a hook's error (with a warning) and raises the call's
                    if let Ok(Some(out)) = (h.f)(m, &state.args, state.result.as_ref()) {
                        state.result = Some(out);
                    }
                }
                Err(e)
            }
        }
    }

    /// The call itself, leaving in `state` how far it got.
    fn run(
        &self,
        hooks: &HookLists<M>,
        state: &mut CallState,
        f: impl FnOnce(&M, &Tensor) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let m: &M = &self.module;
        for h in &hooks.forward_pre {
            if let Some(x) = (h.f)(m, &state.args)? {
                state.args = x;
            }
        }
        let backward = if hooks.backward_pre.is_empty() && hooks.backward.is_empty() {
            None
        } else {
            let hooks_input = state.args.requires_grad() && is_grad_enabled();
            Some(Arc::new(BackwardCall::new(
                Arc::clone(&self.link),
                hooks.backward_pre.clone(),
                hooks.backward.clone(),
                hooks_input,
            )))
        };
        if let Some(call) = backward.as_ref().filter(|c| c.hooks_input()) {
            state.args = call.wrap(&state.args, false)?;
        }
        let mut out = f(m, &state.args)?;
        state.result = Some(out.clone());
        for h in &self.hooks.snapshot().forward {
            if h.always_call {
                state.called.push(h.id);
            }
            if let Some(y) = (h.f)(m, &state.args, Some(&out))? {
                out = y;
                state.result = Some(out.clone());
            }
        }
        if let Some(call) = backward {
            if out.requires_grad() && is_grad_enabled() {
                out = call.wrap(&out, true)?;
            }
        }
        Ok(out)
    }
}

/// The module's forward with the hooks ([`Hooked::call`]).
impl<M: Module + Forward + 'static> Forward for Hooked<M> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.call(input, |m, x| m.forward(x))
    }
}
