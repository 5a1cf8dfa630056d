//! `Dropout`.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module};

/// torch's `nn.Dropout(p=0.5)`: zeroes elements with probability `p` in training, scaling the rest
/// by `1/(1-p)`; the identity in evaluation.
pub struct Dropout {
    /// drop probability
    pub p: f64,
    /// training mode
    pub training: bool,
}

impl Dropout {
    /// A dropout layer (in training mode).
    pub fn new(p: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::msg(format!("dropout probability has to be between 0 and 1, but got {p}")));
        }
        Ok(Dropout { p, training: true })
    }
}

impl Forward for Dropout {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.dropout(self.p, self.training)
    }
}

impl Module for Dropout {
    fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
    fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        "Dropout"
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
}
