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

/// torch's `nn.Dropout1d` / `Dropout2d` / `Dropout3d(p=0.5)`: channel dropout (whole feature maps
/// zeroed) in training, the identity in evaluation.
macro_rules! channel_dropout {
    ($(#[$doc:meta] $name:ident => $f:ident),*) => {$(
        #[$doc]
        pub struct $name {
            /// probability of zeroing a channel
            pub p: f64,
            /// training mode
            pub training: bool,
        }

        impl $name {
            /// A channel-dropout layer (in training mode).
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
            fn set_training(&mut self, training: bool) {
                self.training = training;
            }
            fn training_flag(&self) -> Option<bool> {
                Some(self.training)
            }
        }
    )*};
}

channel_dropout!(
    /// torch's `nn.Dropout1d`: channels of `[N, C, L]` / `[C, L]` inputs.
    Dropout1d => dropout1d,
    /// torch's `nn.Dropout2d`: channels of `[N, C, H, W]` inputs.
    Dropout2d => dropout2d,
    /// torch's `nn.Dropout3d`: channels of `[N, C, D, H, W]` / `[C, D, H, W]` inputs.
    Dropout3d => dropout3d
);
