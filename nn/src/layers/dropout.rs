//! `Dropout`, the channel dropouts, and the alpha dropouts (for SELU networks).

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
    fn extra_repr(&self) -> String {
        format!("p={}, inplace=False", crate::module::py_float(self.p))
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
}

/// torch's `nn.Dropout1d` / `Dropout2d` / `Dropout3d` / `AlphaDropout` / `FeatureAlphaDropout`
/// `(p=0.5)`: the layer over its `functional` form, given `p` and the training flag (the identity
/// in evaluation).
macro_rules! functional_dropout {
    ($($(#[$doc:meta])* $name:ident => $f:ident),*) => {$(
        $(#[$doc])*
        pub struct $name {
            /// drop probability (of an element, or of a whole channel)
            pub p: f64,
            /// training mode
            pub training: bool,
        }

        impl $name {
            /// A layer dropping with probability `p` (in training mode); `p` outside `[0, 1]` is
            /// torch's error.
            pub fn new(p: f64) -> Result<Self> {
                Dropout::new(p).map(|d| $name { p: d.p, training: true })
            }
        }

        impl Forward for $name {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                crate::functional::$f(x, self.p, self.training)
            }
        }

        impl Module for $name {
            fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
            fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
            fn type_name(&self) -> &'static str {
                stringify!($name)
            }
            fn extra_repr(&self) -> String {
                format!("p={}, inplace=False", crate::module::py_float(self.p))
            }
            fn set_training(&mut self, training: bool) {
                self.training = training;
            }
            fn training_flag(&self) -> Option<bool> {
                Some(self.training)
            }
        }
    )*};
}

functional_dropout!(
    /// torch's `nn.Dropout1d`: channels of `[N, C, L]` / `[C, L]` inputs.
    Dropout1d => dropout1d,
    /// torch's `nn.Dropout2d`: channels of `[N, C, H, W]` inputs.
    Dropout2d => dropout2d,
    /// torch's `nn.Dropout3d`: channels of `[N, C, D, H, W]` / `[C, D, H, W]` inputs.
    Dropout3d => dropout3d,
    /// torch's `nn.AlphaDropout`: elements set to SELU's saturation value, then scaled and shifted
    /// to keep a mean of 0 and a variance of 1 (see [`crate::functional::alpha_dropout`]).
    AlphaDropout => alpha_dropout,
    /// torch's `nn.FeatureAlphaDropout`: [`AlphaDropout`] of whole channels (each `[n, c]` slice
    /// of an input of two or more dims; see [`crate::functional::feature_alpha_dropout`]).
    FeatureAlphaDropout => feature_alpha_dropout
);
