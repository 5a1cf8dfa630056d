//! # oxtorch-autograd
//!
//! torch's reverse-mode autograd for oxtorch: `backward`, `grad`, hooks, `no_grad`, higher-order
//! gradients, custom functions, gradient checkpointing, anomaly mode, the functional transforms
//! (`vjp`, `jvp`, `jacobian`, `hessian`) and numerical gradient checks.
//!
//! The graph itself lives in `oxtorch_tensor::autograd` (every op is recorded where it runs, in the
//! tensor crate's single dispatch path); this crate re-exports it and adds what is built on top.
//!
//! ```
//! use oxtorch_autograd as autograd;
//! use oxtorch_tensor::{tensor, Result};
//! # fn main() -> Result<()> {
//! let x = tensor!([1.0, 2.0, 3.0]).requires_grad_(true)?;
//! let y = x.square()?.sum_all()?;
//! let g = autograd::grad(&[y], std::slice::from_ref(&x), None, false, false, false)?;
//! assert_eq!(g[0].as_ref().unwrap().to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```

mod check;
mod checkpoint;
pub mod forward_ad;
pub mod func;
pub mod functional;
mod hessian_vector;

/// torch's `torch.autograd.graph`: saved-tensors hooks, multi-grad hooks, `increment_version`.
pub mod graph {
    pub use oxtorch_tensor::autograd::{
        current_graph_task_id, disable_saved_tensors_hooks, increment_version, register_multi_grad_hook,
        save_on_cpu, saved_tensors_hooks, saved_tensors_hooks_active, CpuSaved,
        DisableSavedTensorsHooksGuard, MultiGradHook, MultiGradHookHandle, MultiGradMode,
        SavedTensorsHooksGuard,
    };
}

pub use check::{gradcheck, gradgradcheck, GradcheckOptions};
pub use checkpoint::checkpoint;
pub use oxtorch_tensor::autograd::*;
