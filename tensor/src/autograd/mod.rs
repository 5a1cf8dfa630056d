//! Reverse-mode autograd, as in torch.
//!
//! * Every op reaches a backend through `dispatch::apply`; when an input requires grad (and grad
//!   mode is on) it records a [`node::Node`] holding the prim's derivative formula
//!   ([`formulas`], written in tensor ops) and edges to the nodes of its inputs.
//! * View ops record view nodes ([`record::ViewKind`]); in-place ops rewrite the history of the
//!   tensor they modify (and of its base, for a view), and saved tensors carry storage versions so
//!   that a stale saved value is an error, never a wrong gradient.
//! * [`engine`] runs a graph backwards: `Tensor::backward` accumulates into leaves' `.grad`,
//!   [`grad`] returns the gradients of chosen inputs. With `create_graph` the backward ops are
//!   themselves recorded, giving higher-order gradients.

mod backward_pass;
mod engine;
mod formulas;
mod function;
mod grad_mode;
pub(crate) use grad_mode::is_recording;
mod meta;
mod node;
pub(crate) mod record;
mod saved_hooks;

pub use backward_pass::{
    current_graph_task_id, detect_anomaly, increment_version, register_multi_grad_hook, DetectAnomalyGuard,
    MultiGradHook, MultiGradHookHandle, MultiGradMode,
};
pub use engine::{
    backward, backward_inputs, grad, grad_materialized, is_anomaly_enabled, set_detect_anomaly,
};
pub use function::{Function, FunctionCtx};
pub use grad_mode::{
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
    with_grad_enabled, EnableGradGuard, GradModeGuard, InferenceMode, NoGradGuard,
};
pub use meta::{HookHandle, PostAccumulateHook, TensorHook};
pub use node::{live_nodes, Backward, GradFn, SavedTensor};
pub use saved_hooks::{
    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks, saved_tensors_hooks_active, CpuSaved,
    DisableSavedTensorsHooksGuard, SavedTensorsHooksGuard,
};

/// The autograd state type, for the tensor's definition.
pub(crate) mod meta_type {
    pub(crate) use super::meta::AutogradMeta;
}
