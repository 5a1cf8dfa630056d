//! `Sequential`.

use oxtorch_tensor::{Result, Tensor};

use crate::module::{Forward, Layer, Member, MemberMut, Module};

/// Layers applied in order (torch's `nn.Sequential`); children are named `0`, `1`, ...
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Layer>>,
}

impl Sequential {
    /// An empty sequence.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a layer (builder style): `Sequential::new().add(Linear::new(4, 8, true)?).add(ReLU {})`.
    #[allow(clippy::should_implement_trait)]
    pub fn add(mut self, layer: impl Layer + 'static) -> Self {
        self.layers.push(Box::new(layer));
        self
    }

    /// Appends a layer in place.
    pub fn push(&mut self, layer: impl Layer + 'static) {
        self.layers.push(Box::new(layer));
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
        self.layers.get(i).map(|l| &**l)
    }
}

impl Forward for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for l in &self.layers {
            y = l.forward(&y)?;
        }
        Ok(y)
    }
}

impl Module for Sequential {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for (i, l) in self.layers.iter().enumerate() {
            f(&i.to_string(), Member::Child(&**l as &dyn Module));
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for (i, l) in self.layers.iter_mut().enumerate() {
            f(&i.to_string(), MemberMut::Child(&mut **l as &mut dyn Module));
        }
    }
    fn type_name(&self) -> &'static str {
        "Sequential"
    }
}
