//! Walking the module tree: every member with its dotted name in torch's order, and direct member lookup.

use oxtorch_tensor::{Error, Result, Tensor};

use super::{Member, MemberMut, Module};

/// Recursively visits members with their full dotted names in torch's order (a module's own
/// parameters, then its own buffers, then each child entered in turn).
pub(super) fn walk<'m>(m: &'m dyn Module, prefix: &str, f: &mut dyn FnMut(&str, Member<'m>)) {
    let full = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    // torch's order: a module's own parameters, its own buffers, then its children in turn.
    m.visit(&mut |name, member| {
        if matches!(member, Member::Param(_)) {
            f(&full(name), member);
        }
    });
    m.visit(&mut |name, member| {
        if !matches!(member, Member::Param(_) | Member::Child(_)) {
            f(&full(name), member);
        }
    });
    m.visit(&mut |name, member| {
        if let Member::Child(c) = member {
            let full = full(name);
            f(&full, Member::Child(c));
            walk(c, &full, f);
        }
    });
}

/// [`walk`] under `prefix` (a name is `prefix.name`, as torch's `named_parameters(prefix)`), or,
/// without `recurse`, only the module's own parameters then its own buffers: the members whose
/// name has no dot (a `Vec` field's members, `layers.0`, belong to the list module torch has there).
pub(super) fn walk_with<'m>(
    m: &'m dyn Module,
    prefix: &str,
    recurse: bool,
    f: &mut dyn FnMut(&str, Member<'m>),
) {
    if recurse {
        walk(m, prefix, f);
        return;
    }
    let full = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    m.visit(&mut |name, member| {
        if matches!(member, Member::Param(_)) && !name.contains('.') {
            f(&full(name), member);
        }
    });
    m.visit(&mut |name, member| {
        if matches!(member, Member::Buffer(_) | Member::NonPersistentBuffer(_)) && !name.contains('.') {
            f(&full(name), member);
        }
    });
}

/// Mutable [`walk`]; `f` sees each child before its members.
pub(super) fn walk_mut(m: &mut dyn Module, prefix: &str, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
    let full = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    m.visit_mut(&mut |name, member| {
        if matches!(member, MemberMut::Param(_)) {
            f(&full(name), member);
        }
    });
    m.visit_mut(&mut |name, member| {
        if !matches!(member, MemberMut::Param(_) | MemberMut::Child(_)) {
            f(&full(name), member);
        }
    });
    m.visit_mut(&mut |name, member| {
        if let MemberMut::Child(c) = member {
            let full = full(name);
            f(&full, MemberMut::Child(&mut *c));
            walk_mut(c, &full, f);
        }
    });
}

/// The direct tensor member `name` of `m` and whether it is a parameter (for `get_parameter` and
/// `get_buffer`), `None` for a submodule of that name, or torch's error for a missing member.
pub(super) fn tensor_member(m: &dyn Module, name: &str) -> Result<Option<(Tensor, bool)>> {
    let mut found: Option<(Tensor, bool)> = None;
    let mut is_child = false;
    m.visit(&mut |n, member| {
        if n == name {
            match member {
                Member::Param(t) => found = Some((t.clone(), true)),
                Member::Buffer(t) | Member::NonPersistentBuffer(t) => found = Some((t.clone(), false)),
                Member::Child(_) => is_child = true,
            }
        }
    });
    match found {
        Some(hit) => Ok(Some(hit)),
        None if is_child => Ok(None),
        None => Err(Error::msg(format!("{} has no attribute `{name}`", m.type_name()))),
    }
}
