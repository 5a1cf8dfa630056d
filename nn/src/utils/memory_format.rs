//! torch's `module.to(memory_format=...)`: converting a module's 4-d and 5-d parameters and
//! buffers to a memory format (usually `channels_last` for a convolutional network).

use oxtorch_tensor::{MemoryFormat, Result, Tensor};

use crate::module::{Member, MemberMut, Module};

/// Calls `f` with every parameter (`true`) and buffer (`false`) of the tree.
fn for_each_tensor(m: &dyn Module, f: &mut dyn FnMut(&Tensor, bool) -> Result<()>) -> Result<()> {
    let mut result = Ok(());
    m.visit(&mut |_, member| {
        if result.is_err() {
            return;
        }
        result = match member {
            Member::Param(t) => f(t, true),
            Member::Buffer(t) | Member::NonPersistentBuffer(t) => f(t, false),
            Member::Child(c) => for_each_tensor(c, f),
        };
    });
    result
}

/// Calls `f` with every parameter and buffer of the tree, mutably.
fn for_each_tensor_mut(m: &mut dyn Module, f: &mut dyn FnMut(&mut Tensor)) {
    m.visit_mut(&mut |_, member| match member {
        MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t) => f(t),
        MemberMut::Child(c) => for_each_tensor_mut(c, f),
    });
}

/// torch's `module.to(memory_format=fmt)`: every 4-d and 5-d parameter and buffer becomes
/// `t.to(memory_format=fmt)` ([`Tensor::to_memory_format`]: unchanged when its strides already
/// suggest `fmt`, else a copy with the format's strides); tensors of other ranks are untouched.
/// As torch, `ChannelsLast` on a module holding a 5-d tensor (a `Conv3d`) is the error "required
/// rank 4 tensor to use channels_last format", and `ChannelsLast3d` on a 4-d one the rank-5 error;
/// here nothing changes when that happens.
///
/// As [`crate::ModuleExt::to`], a converted tensor is a new tensor (re-take `parameters()` for an
/// optimizer made before) that keeps `requires_grad` and its `.grad` (converted alike); a tensor
/// registered under several names (tied weights) is converted once and stays shared.
pub fn to_memory_format(module: &mut dyn Module, fmt: MemoryFormat) -> Result<()> {
    // First every conversion, so that a refused one leaves the module as it was.
    let mut converted: Vec<(Tensor, Tensor)> = Vec::new();
    for_each_tensor(module, &mut |t, is_param| {
        if !matches!(t.rank(), 4 | 5) || converted.iter().any(|(old, _)| old.is_same(t)) {
            return Ok(());
        }
        let new = t.detach().to_memory_format(fmt)?;
        if new.shares_storage(t) {
            return Ok(());
        }
        let new = if is_param && t.requires_grad() { new.requires_grad_(true)? } else { new };
        if let Some(g) = t.grad() {
            new.set_grad(Some(g.detach().to_memory_format(fmt)?))?;
        }
        converted.push((t.clone(), new));
        Ok(())
    })?;
    if converted.is_empty() {
        return Ok(());
    }
    for_each_tensor_mut(module, &mut |t| {
        if let Some((_, new)) = converted.iter().find(|(old, _)| old.is_same(t)) {
            *t = new.clone();
        }
    });
    Ok(())
}
