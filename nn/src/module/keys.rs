//! Load-time key checks: [`IncompatibleKeys`] and the tree that finds torch's unexpected keys.

use super::{Member, Module};

/// What `load_state_dict` with `strict = false` reports (torch's `_IncompatibleKeys`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IncompatibleKeys {
    /// keys the module has and the state dict lacks
    pub missing_keys: Vec<String>,
    /// keys the state dict has and the module lacks
    pub unexpected_keys: Vec<String>,
}

/// A module as torch's `load_state_dict` sees it: the names of its own parameters and persistent
/// buffers, and its children (a `Vec` field's members, `layers.0`, go into the list module
/// `layers` that torch has there).
#[derive(Default)]
pub(super) struct KeyTree {
    local: Vec<String>,
    children: Vec<(String, KeyTree)>,
}

/// A member as [`KeyTree`] records it.
enum KeyNode {
    /// a parameter or persistent buffer
    Saved,
    /// a non-persistent buffer (only the list holding it, if any, is made)
    NotSaved,
    Child(KeyTree),
}

impl KeyTree {
    pub(super) fn of(m: &dyn Module) -> KeyTree {
        let mut tree = KeyTree::default();
        m.visit(&mut |name, member| {
            let node = match member {
                Member::Param(_) | Member::Buffer(_) => KeyNode::Saved,
                Member::NonPersistentBuffer(_) => KeyNode::NotSaved,
                Member::Child(c) => KeyNode::Child(KeyTree::of(c)),
            };
            tree.insert(name, node);
        });
        tree
    }

    /// Adds the member `path` (dotted for a list's members).
    fn insert(&mut self, path: &str, node: KeyNode) {
        match path.split_once('.') {
            Some((first, rest)) => {
                let at = match self.children.iter().position(|(n, _)| n == first) {
                    Some(at) => at,
                    None => {
                        self.children.push((first.to_string(), KeyTree::default()));
                        self.children.len() - 1
                    }
                };
                self.children[at].1.insert(rest, node);
            }
            None => match node {
                KeyNode::Saved => self.local.push(path.to_string()),
                KeyNode::Child(child) => self.children.push((path.to_string(), child)),
                KeyNode::NotSaved => {}
            },
        }
    }

    /// torch's unexpected keys: each module (before its children) lists, in the state dict's
    /// order, the keys under its prefix that name neither one of its children nor one of its own
    /// tensors (`_load_from_state_dict` with `strict`).
    pub(super) fn unexpected(&self, prefix: &str, keys: &[&str], out: &mut Vec<String>) {
        for &key in keys {
            let Some(rest) = key.strip_prefix(prefix) else { continue };
            let known = match rest.split_once('.') {
                Some((first, _)) => self.children.iter().any(|(n, _)| n == first),
                None => self.local.iter().any(|n| n == rest),
            };
            if !known {
                out.push(key.to_string());
            }
        }
        for (name, child) in &self.children {
            let child_prefix = format!("{prefix}{name}.");
            let under: Vec<&str> = keys.iter().copied().filter(|k| k.starts_with(&child_prefix)).collect();
            if !under.is_empty() {
                child.unexpected(&child_prefix, &under, out);
            }
        }
    }
}
