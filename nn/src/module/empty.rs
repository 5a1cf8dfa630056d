//! Modules with their tensors replaced by zeros: `to_empty` and `skip_init`.

use oxtorch_tensor::{Device, Result, Tensor};

use super::{walk_mut, MemberMut, Module};

/// Replaces every parameter and buffer of `m` by zeros of its shape and dtype on `device` (each
/// tensor's own device for `None`): what [`super::ModuleExt::to_empty`] and [`skip_init`] do. A tensor
/// registered under several names stays shared; parameters keep `requires_grad`, and a `.grad`
/// is replaced alike.
pub(super) fn replace_with_empty(m: &mut dyn Module, device: Option<Device>) -> Result<()> {
    let mut result = Ok(());
    let mut done: Vec<(Tensor, Tensor)> = Vec::new();
    walk_mut(m, "", &mut |_, member| {
        let (t, is_param) = match member {
            MemberMut::Param(t) => (t, true),
            MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t) => (t, false),
            MemberMut::Child(_) => return,
        };
        if result.is_err() {
            return;
        }
        if let Some((_, new)) = done.iter().find(|(old, _)| old.is_same(t)) {
            *t = new.clone();
            return;
        }
        let device = device.unwrap_or(t.device());
        let empty = |x: &Tensor| Tensor::zeros(x.dims().to_vec(), (x.dtype(), device));
        let new = empty(t).and_then(|new| {
            let new = if is_param && t.requires_grad() { new.requires_grad_(true)? } else { new };
            if let Some(g) = t.grad() {
                new.set_grad(Some(empty(&g)?))?;
            }
            Ok(new)
        });
        match new {
            Ok(new) => {
                done.push((t.clone(), new.clone()));
                *t = new;
            }
            Err(e) => result = Err(e),
        }
    });
    result
}

/// torch's `nn.utils.skip_init(module_cls, ...)`: the module `construct` builds, with every
/// parameter and buffer replaced by a new tensor of zeros of the same shape, dtype and device
/// (parameters keep `requires_grad`), ready to be filled (by `load_state_dict` or `nn::init`).
///
/// torch builds the module on its `meta` device, so no initialiser runs, and leaves the memory
/// uninitialised; oxtorch has no meta device and never exposes uninitialised memory, so the module
/// is built as usual (its initialisers do run and draw from the default generator) and then
/// zeroed: the values are zeros, where torch's are unspecified.
pub fn skip_init<M: Module>(construct: impl FnOnce() -> Result<M>) -> Result<M> {
    let mut m = construct()?;
    replace_with_empty(&mut m, None)?;
    Ok(m)
}
