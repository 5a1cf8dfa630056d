//! `Sequential`.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Layer, Member, MemberMut, Module};

/// Layers applied in order (torch's `nn.Sequential`); children are named `0`, `1`, ... or, built
/// with [`Sequential::from_named`] (torch's `OrderedDict` form), by their own names.
///
/// Slicing (torch's `seq[1:3]`, a new `Sequential` sharing the modules) has no counterpart: the
/// layers are owned, not shared.
#[derive(Default)]
pub struct Sequential {
    layers: Vec<NamedLayer>,
}

/// torch's `add_module` checks on a child's name.
fn check_name(name: &str) -> Result<()> {
    if name.contains('.') {
        return Err(Error::msg(format!("module name can't contain \".\", got: {name}")));
    }
    if name.is_empty() {
        return Err(Error::msg("module name can't be empty string \"\""));
    }
    Ok(())
}

impl Sequential {
    /// An empty sequence.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sequence of named layers (torch's `Sequential(OrderedDict([("conv1", ...), ...]))`):
    /// state-dict keys are `conv1.weight` rather than `0.weight`. A repeated name replaces the
    /// earlier layer in its place, as in an `OrderedDict`; names with `.` or empty names are
    /// refused with torch's `add_module` errors.
    pub fn from_named<S: Into<String>>(
        layers: impl IntoIterator<Item = (S, Box<dyn Layer>)>,
    ) -> Result<Self> {
        let mut seq = Sequential::new();
        for (name, layer) in layers {
            let name = name.into();
            check_name(&name)?;
            seq.set_key(name, layer);
        }
        Ok(seq)
    }

    /// Appends a layer (builder style): `Sequential::new().add(Linear::new(4, 8, true)?).add(ReLU {})`.
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, layer: impl Layer + 'static) -> Self {
        self.append(Box::new(layer));
        self
    }

    /// Appends a layer in place.
    pub fn push(&mut self, layer: impl Layer + 'static) {
        self.append(Box::new(layer));
    }

    /// torch's `append`: adds `layer` under the name `len()` (replacing a child of that name in
    /// its place, as torch's `add_module` does).
    pub fn append(&mut self, layer: Box<dyn Layer>) -> &mut Self {
        let key = self.layers.len().to_string();
        self.set_key(key, layer);
        self
    }

    /// torch's `add_module(name, module)`: adds `layer` under `name` (replacing a child of that
    /// name in its place).
    pub fn push_named(&mut self, name: &str, layer: Box<dyn Layer>) -> Result<&mut Self> {
        check_name(name)?;
        self.set_key(name.to_string(), layer);
        Ok(self)
    }

    /// torch's `extend`: appends each layer in turn (see [`Sequential::append`]); another
    /// `Sequential` can be passed as it is.
    pub fn extend(&mut self, layers: impl IntoIterator<Item = Box<dyn Layer>>) -> &mut Self {
        for layer in layers {
            self.append(layer);
        }
        self
    }

    /// torch's `insert(index, module)`: `index` in `-len..=len` (negative counts from the end);
    /// the children from `index` on move one name up (`"1"` becomes `"2"`, ...), as torch
    /// renames them. Outside that range torch's `Index out of range: {index}`; with named
    /// children, torch's `KeyError` for the numeric name it looks for.
    pub fn insert(&mut self, index: isize, layer: Box<dyn Layer>) -> Result<&mut Self> {
        let n = self.layers.len() as isize;
        if !(-n..=n).contains(&index) {
            return Err(Error::msg(format!("Index out of range: {index}")));
        }
        let index = (if index < 0 { index + n } else { index }) as usize;
        let n = n as usize;
        // torch moves `str(i - 1)` to `str(i)` for i = n down to index + 1: every name from
        // `index` to `n - 1` must exist
        // (looked up from the top down, as torch reads them)
        let mut positions = Vec::with_capacity(n - index);
        for j in (index..n).rev() {
            let key = j.to_string();
            match self.layers.iter().position(|(k, _)| *k == key) {
                Some(p) => positions.push(p),
                None => return Err(Error::msg(format!("KeyError: '{key}'"))),
            }
        }
        positions.reverse();
        let mut carry = layer;
        for p in positions {
            carry = std::mem::replace(&mut self.layers[p].1, carry);
        }
        self.set_key(n.to_string(), carry);
        Ok(self)
    }

    /// torch's `pop(index)`: removes and returns the layer at `index` (negative counts from the
    /// end), then renames the children `0`, `1`, ... as torch does after a deletion. Outside
    /// `-len..len`, torch's `index {index} is out of range`.
    pub fn pop(&mut self, index: isize) -> Result<Box<dyn Layer>> {
        let i = self.position(index)?;
        let (_, layer) = self.layers.remove(i);
        for (j, (k, _)) in self.layers.iter_mut().enumerate() {
            *k = j.to_string();
        }
        Ok(layer)
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The layer at `i`.
    pub fn get(&self, i: usize) -> Option<&dyn Layer> {
        self.layers.get(i).map(|(_, l)| &**l)
    }

    /// The layer at `i`, mutably.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut (dyn Layer + 'static)> {
        self.layers.get_mut(i).map(|(_, l)| &mut **l)
    }

    /// torch's `seq[index]`: the layer at `index`, negative counting from the end; outside
    /// `-len..len`, torch's `index {index} is out of range`.
    pub fn at(&self, index: isize) -> Result<&dyn Layer> {
        let i = self.position(index)?;
        Ok(&*self.layers[i].1)
    }

    /// torch's `seq[index] = module`: replaces the layer at `index` (negative counting from the
    /// end) under the same name, returning the old one.
    pub fn set(&mut self, index: isize, layer: Box<dyn Layer>) -> Result<Box<dyn Layer>> {
        let i = self.position(index)?;
        Ok(std::mem::replace(&mut self.layers[i].1, layer))
    }

    /// The layers in order (torch's `iter(seq)`).
    pub fn iter(&self) -> impl Iterator<Item = &dyn Layer> {
        self.layers.iter().map(|(_, l)| &**l as &dyn Layer)
    }

    /// The layers in order, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut (dyn Layer + 'static)> {
        self.layers.iter_mut().map(|(_, l)| &mut **l)
    }

    /// Names and layers in order (torch's `named_children`).
    pub fn named_layers(&self) -> impl Iterator<Item = (&str, &dyn Layer)> {
        self.layers.iter().map(|(k, l)| (k.as_str(), &**l as &dyn Layer))
    }

    /// The children's names in order (`0`, `1`, ... or those given to [`Sequential::from_named`]).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.layers.iter().map(|(k, _)| k.as_str())
    }

    /// torch's `_get_item_by_idx`: `index` (negative from the end) as a position, or torch's
    /// `IndexError`.
    fn position(&self, index: isize) -> Result<usize> {
        let n = self.layers.len() as isize;
        if !(-n..n).contains(&index) {
            return Err(Error::msg(format!("index {index} is out of range")));
        }
        Ok(index.rem_euclid(n.max(1)) as usize)
    }

    /// `self._modules[key] = layer`: replaces the child named `key` in its place, else appends.
    fn set_key(&mut self, key: String, layer: Box<dyn Layer>) {
        match self.layers.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = layer,
            None => self.layers.push((key, layer)),
        }
    }
}

/// A named child of a [`Sequential`].
type NamedLayer = (String, Box<dyn Layer>);

/// The layers of a consumed [`Sequential`], in order.
pub type SequentialIntoIter =
    std::iter::Map<std::vec::IntoIter<NamedLayer>, fn(NamedLayer) -> Box<dyn Layer>>;

impl IntoIterator for Sequential {
    type Item = Box<dyn Layer>;
    type IntoIter = SequentialIntoIter;
    /// The layers in order (so that `a.extend(b)` appends `b`'s layers, as torch's `extend`).
    fn into_iter(self) -> SequentialIntoIter {
        let layer: fn(NamedLayer) -> Box<dyn Layer> = |(_, l)| l;
        self.layers.into_iter().map(layer)
    }
}

impl std::ops::Index<usize> for Sequential {
    type Output = dyn Layer;
    /// The layer at `i` (panics past the end, as slice indexing; see [`Sequential::at`]).
    fn index(&self, i: usize) -> &(dyn Layer + 'static) {
        &*self.layers[i].1
    }
}

impl std::ops::IndexMut<usize> for Sequential {
    /// The layer at `i`, mutably (panics past the end).
    fn index_mut(&mut self, i: usize) -> &mut (dyn Layer + 'static) {
        &mut *self.layers[i].1
    }
}

impl Forward for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for (_, l) in &self.layers {
            y = l.forward(&y)?;
        }
        Ok(y)
    }
}

impl Module for Sequential {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (k, l) in &self.layers {
            f(k, Member::Child(&**l as &dyn Module));
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (k, l) in self.layers.iter_mut() {
            f(k, MemberMut::Child(&mut **l as &mut dyn Module));
        }
    }
    fn type_name(&self) -> &'static str {
        "Sequential"
    }
}
