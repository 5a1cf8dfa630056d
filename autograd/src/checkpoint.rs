//! Gradient checkpointing (torch's `torch.utils.checkpoint`): run a block without keeping its
//! intermediate values, and recompute them during backward.

use std::sync::Arc;

use oxtorch_tensor::autograd::{EnableGradGuard, Function, FunctionCtx};
use oxtorch_tensor::{default_generator, Result, Tensor};

use crate::backward;

/// The block being checkpointed.
type Block = Arc<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync>;

struct Checkpoint {
    block: Block,
    /// The random generator's state at the forward, restored for the recomputation so that
    /// dropout masks match.
    rng_state: (u64, u64),
}

impl Function for Checkpoint {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let refs: Vec<&Tensor> = inputs.iter().collect();
        ctx.save_for_backward(&refs);
        (self.block)(inputs)
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let _grad = EnableGradGuard::new();
        let inputs: Vec<Tensor> = saved
            .iter()
            .map(|t| if t.requires_grad() { t.detach().requires_grad_(true) } else { Ok(t.detach()) })
            .collect::<Result<_>>()?;
        let gen = default_generator();
        let now = gen.get_state();
        gen.set_state(self.rng_state);
        let outs = (self.block)(&inputs);
        gen.set_state(now);
        let outs = outs?;
        let (outs, seeds): (Vec<Tensor>, Vec<Tensor>) =
            outs.into_iter().zip(grads.iter().cloned()).filter(|(o, _)| o.requires_grad()).unzip();
        let mut result = vec![None; inputs.len()];
        if !outs.is_empty() {
            // As torch's checkpoint: parameters used inside the block get their `.grad` too.
            backward(&outs, Some(&seeds), false, false)?;
        }
        for (r, t) in result.iter_mut().zip(&inputs) {
            *r = t.grad();
        }
        Ok(result)
    }

    fn name(&self) -> &'static str {
        "CheckpointFunctionBackward"
    }
}

/// Runs `block(inputs)` without saving its intermediate tensors; backward recomputes them (with
/// the same random numbers) and gives the same gradients as running `block` directly.
pub fn checkpoint(
    block: impl Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>> {
    let rng_state = default_generator().get_state();
    Checkpoint { block: Arc::new(block), rng_state }.apply(inputs)
}
