//! `ModuleDict` and `ModuleList` (and their parameter forms `ParameterDict`, `ParameterList`):
//! containers that register their modules or parameters under torch's names.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Layer, Member, MemberMut, Module, ModuleField};

/// Modules under string keys, in insertion order (torch's `nn.ModuleDict`); state-dict names are
/// `<key>.<param>`. The element type defaults to any single-input layer; use a concrete type
/// (`ModuleDict<Linear>`) or `Box<dyn Module>` for others.
pub struct ModuleDict<T: ModuleField = Box<dyn Layer>> {
    entries: Vec<(String, T)>,
}

impl<T: ModuleField> Default for ModuleDict<T> {
    fn default() -> Self {
        ModuleDict { entries: Vec::new() }
    }
}

impl<T: ModuleField> ModuleDict<T> {
    /// An empty dict.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `module` under `key`, replacing (in place, keeping its position) an existing entry as
    /// torch's `__setitem__` does. Keys containing `.` or empty keys are refused, as in torch.
    pub fn insert(&mut self, key: &str, module: T) -> Result<()> {
        if key.is_empty() || key.contains('.') {
            return Err(Error::msg(format!("module name can't contain \".\", got: {key}")));
        }
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = module,
            None => self.entries.push((key.to_string(), module)),
        }
        Ok(())
    }

    /// The module under `key`.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, m)| m)
    }

    /// The module under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        self.entries.iter_mut().find(|(k, _)| k == key).map(|(_, m)| m)
    }

    /// Removes and returns the module under `key` (torch's `pop`).
    pub fn remove(&mut self, key: &str) -> Option<T> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Keys and modules, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.entries.iter().map(|(k, m)| (k.as_str(), m))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Parameters under string keys, in insertion order (torch's `nn.ParameterDict`): state-dict names
/// are the keys themselves.
pub type ParameterDict = ModuleDict<Tensor>;

/// Parameters in a list (torch's `nn.ParameterList`): state-dict names `0`, `1`, ...
pub type ParameterList = ModuleList<Tensor>;

/// True when the container holds parameters (its torch class is `Parameter*`).
fn holds_parameters<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<Tensor>()
}

impl<T: ModuleField + Send + Sync + 'static> Module for ModuleDict<T> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (k, m) in &self.entries {
            m.visit_field(k, f);
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (k, m) in &mut self.entries {
            m.visit_field_mut(k, f);
        }
    }
    fn type_name(&self) -> &'static str {
        if holds_parameters::<T>() {
            "ParameterDict"
        } else {
            "ModuleDict"
        }
    }
}

/// Modules in a numbered list (torch's `nn.ModuleList`): state-dict names `0.<param>`, `1.<param>`.
pub struct ModuleList<T: ModuleField = Box<dyn Layer>> {
    /// the modules
    pub modules: Vec<T>,
}

impl<T: ModuleField> Default for ModuleList<T> {
    fn default() -> Self {
        ModuleList { modules: Vec::new() }
    }
}

impl<T: ModuleField> ModuleList<T> {
    /// A list of `modules`.
    pub fn new(modules: Vec<T>) -> Self {
        ModuleList { modules }
    }

    /// torch's `ModuleList.pop(index)`: removes and returns the module at `index` (negative
    /// counting from the end); the ones after it move down a name. Outside `-len..len`, torch's
    /// `index {index} is out of range`. (`Vec::pop`, without an index, stays reachable as
    /// `list.modules.pop()`.)
    pub fn pop(&mut self, index: isize) -> Result<T> {
        let n = self.modules.len() as isize;
        if !(-n..n).contains(&index) {
            return Err(Error::msg(format!("index {index} is out of range")));
        }
        Ok(self.modules.remove(index.rem_euclid(n) as usize))
    }

    /// torch's `ModuleList.insert(index, module)` for `index` in `0..=len`: the modules from
    /// `index` on move up a name. torch leaves the list misnumbered (past the end) or raises a
    /// `KeyError` (negative) elsewhere; here that is the error `index {index} is out of range`.
    pub fn insert(&mut self, index: isize, module: T) -> Result<()> {
        if !(0..=self.modules.len() as isize).contains(&index) {
            return Err(Error::msg(format!("index {index} is out of range")));
        }
        self.modules.insert(index as usize, module);
        Ok(())
    }

    /// torch's `ModuleList.append(module)`.
    pub fn append(&mut self, module: T) -> &mut Self {
        self.modules.push(module);
        self
    }
}

impl<T: ModuleField> std::ops::Deref for ModuleList<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.modules
    }
}

impl<T: ModuleField> std::ops::DerefMut for ModuleList<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.modules
    }
}

impl<T: ModuleField + Send + Sync + 'static> Module for ModuleList<T> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (i, m) in self.modules.iter().enumerate() {
            m.visit_field(&i.to_string(), f);
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (i, m) in self.modules.iter_mut().enumerate() {
            m.visit_field_mut(&i.to_string(), f);
        }
    }
    fn type_name(&self) -> &'static str {
        if holds_parameters::<T>() {
            "ParameterList"
        } else {
            "ModuleList"
        }
    }
}
