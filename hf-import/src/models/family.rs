//! A named decoder family: a newtype over [`super::decoder::CausalLm`] that loads with its spec.

/// Declares `$name`, a `*ForCausalLM` whose [`super::decoder::DecoderSpec`] comes from `$spec`.
macro_rules! causal_lm_family {
    ($(#[$doc:meta])* $name:ident, $spec:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub $crate::models::decoder::CausalLm);

        impl $name {
            /// Loads the model from a parsed config and its weights.
            pub fn load(cfg: &$crate::config::Config, weights: &$crate::weights::Weights) -> $crate::error::Result<Self> {
                let spec: fn(&$crate::config::Config) -> $crate::error::Result<$crate::models::decoder::DecoderSpec> = $spec;
                Ok($name($crate::models::decoder::CausalLm::load(cfg, weights, spec(cfg)?)?))
            }
        }

        impl std::ops::Deref for $name {
            type Target = $crate::models::decoder::CausalLm;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }
    };
}

/// Declares `$name`, a `*ForCausalLM` newtype over [`super::decoder::CausalLm`] that dereferences
/// to it, for a family whose `load` (written beside it) converts its config or checkpoint first.
macro_rules! causal_lm_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub $crate::models::decoder::CausalLm);

        impl std::ops::Deref for $name {
            type Target = $crate::models::decoder::CausalLm;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }
    };
}

pub(crate) use causal_lm_family;
pub(crate) use causal_lm_newtype;
