//! The members of a module held outside it, by the wrappers that keep the module itself behind a
//! lock ([`super::parametrize::Parametrized`], [`super::prune::Pruned`]).

use oxtorch_tensor::Tensor;

use crate::module::{Member, MemberMut, Module};

/// One member of a module, held outside it (the same tensor objects).
pub(crate) enum Slot {
    Param(Tensor),
    Buffer(Tensor),
    NonPersistent(Tensor),
    Child(Mirror),
}

/// A module's members held by a wrapper while the module itself sits behind a lock: listing them
/// hands out references into the wrapper, and each call puts them back into the module (so that
/// `to`, `load_state_dict` and a replaced tensor reach it).
pub(crate) struct Mirror {
    type_name: &'static str,
    training: Option<bool>,
    members: Vec<(String, Slot)>,
}

impl Mirror {
    /// `m`'s members, `skip` (a direct member) left out.
    pub(crate) fn capture(m: &dyn Module, skip: Option<&str>) -> Mirror {
        let mut members = Vec::new();
        m.visit(&mut |name, member| {
            if skip == Some(name) {
                return;
            }
            let slot = match member {
                Member::Param(t) => Slot::Param(t.clone()),
                Member::Buffer(t) => Slot::Buffer(t.clone()),
                Member::NonPersistentBuffer(t) => Slot::NonPersistent(t.clone()),
                Member::Child(c) => Slot::Child(Mirror::capture(c, None)),
            };
            members.push((name.to_string(), slot));
        });
        Mirror { type_name: m.type_name(), training: m.training_flag(), members }
    }

    /// Puts the held tensors back into `m`, member by member.
    pub(crate) fn install(&self, m: &mut dyn Module) {
        m.visit_mut(&mut |name, member| {
            let Some(slot) = self.slot(name) else { return };
            match (member, slot) {
                (MemberMut::Param(t), Slot::Param(s))
                | (MemberMut::Buffer(t), Slot::Buffer(s))
                | (MemberMut::NonPersistentBuffer(t), Slot::NonPersistent(s)) => *t = s.clone(),
                (MemberMut::Child(c), Slot::Child(sub)) => sub.install(c),
                _ => {}
            }
        });
    }

    /// Whether each tensor member of `m` (through its children) that this mirror also holds has
    /// the held tensor's shape; false once a lazy module has been materialized (its `[0]`
    /// placeholders replaced by sized tensors) since it was captured. Members held under other
    /// names (a pruned tensor's `name_orig`) are not compared.
    pub(crate) fn shapes_match(&self, m: &dyn Module) -> bool {
        let mut ok = true;
        m.visit(&mut |name, member| {
            if !ok {
                return;
            }
            match (member, self.slot(name)) {
                (
                    Member::Param(t) | Member::Buffer(t) | Member::NonPersistentBuffer(t),
                    Some(Slot::Param(s) | Slot::Buffer(s) | Slot::NonPersistent(s)),
                ) => ok = t.dims() == s.dims(),
                (Member::Child(c), Some(Slot::Child(sub))) => ok = sub.shapes_match(c),
                _ => {}
            }
        });
        ok
    }

    /// The index of member `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|(n, _)| n == name)
    }

    /// The member `name`.
    pub(crate) fn slot(&self, name: &str) -> Option<&Slot> {
        self.members.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// The tensor member `name` (a parameter or buffer).
    pub(crate) fn tensor(&self, name: &str) -> Option<&Tensor> {
        match self.slot(name)? {
            Slot::Param(t) | Slot::Buffer(t) | Slot::NonPersistent(t) => Some(t),
            Slot::Child(_) => None,
        }
    }

    /// Removes member `name` and returns it.
    pub(crate) fn take(&mut self, name: &str) -> Option<Slot> {
        let at = self.position(name)?;
        Some(self.members.remove(at).1)
    }

    /// Replaces the member at index `at`, keeping its name and place.
    pub(crate) fn replace(&mut self, at: usize, slot: Slot) {
        self.members[at].1 = slot;
    }

    /// Appends a member (last in the listing order, as torch's `register_*`).
    pub(crate) fn push(&mut self, name: String, slot: Slot) {
        self.members.push((name, slot));
    }
}

impl Module for Mirror {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (name, slot) in &self.members {
            let name = name.as_str();
            match slot {
                Slot::Param(t) => f(name, Member::Param(t)),
                Slot::Buffer(t) => f(name, Member::Buffer(t)),
                Slot::NonPersistent(t) => f(name, Member::NonPersistentBuffer(t)),
                Slot::Child(c) => f(name, Member::Child(c)),
            }
        }
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (name, slot) in self.members.iter_mut() {
            let name = name.as_str();
            match slot {
                Slot::Param(t) => f(name, MemberMut::Param(t)),
                Slot::Buffer(t) => f(name, MemberMut::Buffer(t)),
                Slot::NonPersistent(t) => f(name, MemberMut::NonPersistentBuffer(t)),
                Slot::Child(c) => f(name, MemberMut::Child(c)),
            }
        }
    }

    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn set_training(&mut self, training: bool) {
        if self.training.is_some() {
            self.training = Some(training);
        }
    }

    fn training_flag(&self) -> Option<bool> {
        self.training
    }
}
