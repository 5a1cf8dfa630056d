//! What the wrappers that keep their module behind a lock ([`super::parametrize::Parametrized`],
//! [`super::prune::Pruned`]) share for a call: putting a computed tensor into the module, and
//! telling a re-entrant call (one made on the same wrapper from inside its own call, on the same
//! thread) from a call that only has to wait for the lock.

use std::cell::RefCell;

use oxtorch_tensor::Tensor;

use crate::module::{MemberMut, Module};

/// Sets `m`'s direct tensor member (parameter or buffer) `name` to `value`; a child of that
/// name, or no member, is left alone.
pub(crate) fn set_member(m: &mut dyn Module, name: &str, value: &Tensor) {
    m.visit_mut(&mut |n, member| {
        if let (true, MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t)) =
            (n == name, member)
        {
            *t = value.clone();
        }
    });
}

/// A wrapper as the thread-local list knows it: its address and its type's name (so that a
/// wrapper nested inside another at the same address is still told apart).
type Key = (usize, &'static str);

fn key<W>(wrapper: &W) -> Key {
    (wrapper as *const W as usize, std::any::type_name::<W>())
}

thread_local! {
    /// The wrappers whose call is running on this thread: a second call on one of them would
    /// wait for its own lock.
    static ACTIVE_CALLS: RefCell<Vec<Key>> = const { RefCell::new(Vec::new()) };
}

/// Marks a wrapper's call as running on this thread until dropped (also when the call's closure
/// panics).
///
/// The mark is per thread: a thread pool (rayon) can run another outer item on a worker that
/// is inside a call (waiting in a nested parallel kernel); a call on the same wrapper there is
/// reported as re-entrant (see the wrappers' docs).
pub(crate) struct ActiveCall(Key);

impl ActiveCall {
    /// Whether a call on `wrapper` is running on this thread.
    pub(crate) fn is_active<W>(wrapper: &W) -> bool {
        let k = key(wrapper);
        ACTIVE_CALLS.with(|active| active.borrow().contains(&k))
    }

    /// Marks a call on `wrapper` as running on this thread until the guard is dropped.
    pub(crate) fn enter<W>(wrapper: &W) -> ActiveCall {
        let k = key(wrapper);
        ACTIVE_CALLS.with(|active| active.borrow_mut().push(k));
        ActiveCall(k)
    }
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        ACTIVE_CALLS.with(|active| {
            let mut active = active.borrow_mut();
            if let Some(i) = active.iter().rposition(|&a| a == self.0) {
                active.remove(i);
            }
        });
    }
}
