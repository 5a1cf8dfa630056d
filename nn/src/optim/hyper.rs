//! Every hyper-parameter of an optimizer's options as named numbers, so that a state dict keeps
//! them all and loading one restores them, as torch's `param_groups` do (a resumed run then uses
//! the saved `weight_decay`, `betas`, ... whatever options the optimizer was built with).

use super::{
    AdadeltaOptions, AdagradOptions, AdamOptions, AdamaxOptions, AsgdOptions, NAdamOptions, RAdamOptions,
    RMSpropOptions, RpropOptions, SgdOptions,
};

/// Options whose fields are named numbers (flags as 0/1, pairs as `name.0` and `name.1`).
pub trait HyperParams {
    /// Every field, by torch's name.
    fn hyper_params(&self) -> Vec<(String, f64)>;
    /// Sets the field `name` (an unknown name is ignored).
    fn set_hyper_param(&mut self, name: &str, value: f64);
}

/// Implements [`HyperParams`] for an options struct from its number, flag and pair fields.
macro_rules! hyper_params {
    ($t:ty { $($num:ident),* } flags { $($flag:ident),* } pairs { $($pair:ident),* }) => {
        impl HyperParams for $t {
            fn hyper_params(&self) -> Vec<(String, f64)> {
                #[allow(unused_mut)]
                let mut out: Vec<(String, f64)> = vec![
                    $((stringify!($num).to_string(), self.$num),)*
                    $((stringify!($flag).to_string(), f64::from(u8::from(self.$flag))),)*
                ];
                $(
                    out.extend([
                        (concat!(stringify!($pair), ".0").to_string(), self.$pair.0),
                        (concat!(stringify!($pair), ".1").to_string(), self.$pair.1),
                    ]);
                )*
                out
            }

            fn set_hyper_param(&mut self, name: &str, value: f64) {
                match name {
                    $(stringify!($num) => self.$num = value,)*
                    $(stringify!($flag) => self.$flag = value != 0.0,)*
                    $(
                        concat!(stringify!($pair), ".0") => self.$pair.0 = value,
                        concat!(stringify!($pair), ".1") => self.$pair.1 = value,
                    )*
                    _ => {}
                }
            }
        }
    };
}

hyper_params!(SgdOptions { lr, momentum, dampening, weight_decay } flags { nesterov, maximize } pairs {});
hyper_params!(AdamOptions { lr, eps, weight_decay } flags { amsgrad, maximize } pairs { betas });
hyper_params!(RMSpropOptions { lr, alpha, eps, weight_decay, momentum } flags { centered, maximize } pairs {});
hyper_params!(AdagradOptions { lr, lr_decay, weight_decay, initial_accumulator_value, eps } flags { maximize } pairs {});
hyper_params!(NAdamOptions { lr, eps, weight_decay, momentum_decay } flags { decoupled_weight_decay, maximize } pairs { betas });
hyper_params!(RAdamOptions { lr, eps, weight_decay } flags { decoupled_weight_decay, maximize } pairs { betas });
hyper_params!(AdamaxOptions { lr, eps, weight_decay } flags { maximize } pairs { betas });
hyper_params!(AdadeltaOptions { lr, rho, eps, weight_decay } flags { maximize } pairs {});
hyper_params!(RpropOptions { lr } flags { maximize } pairs { etas, step_sizes });
hyper_params!(AsgdOptions { lr, lambd, alpha, t0, weight_decay } flags { maximize } pairs {});
