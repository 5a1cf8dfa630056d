//! Activation modules (torch's `nn.ReLU`, `nn.GELU`, ...): stateless wrappers of the functional forms.

use oxtorch_tensor::{Result, Tensor};

use crate::module::Forward;

macro_rules! activation {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* } => |$s:ident, $x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(oxtorch_nn_derive::Module, Clone, Debug)]
        pub struct $name { $(#[doc = stringify!($field)] pub $field: $ty),* }

        impl Forward for $name {
            fn forward(&self, $x: &Tensor) -> Result<Tensor> {
                let $s = self;
                let _ = $s;
                $body
            }
        }
    };
}

activation!(
    /// `max(x, 0)`.
    ReLU {} => |s, x| x.relu()
);
activation!(
    /// `min(max(x, 0), 6)`.
    ReLU6 {} => |s, x| x.relu6()
);
activation!(
    /// `x` or `negative_slope * x` (torch's default slope 0.01).
    LeakyReLU { negative_slope: f64 } => |s, x| x.leaky_relu(s.negative_slope)
);
activation!(
    /// ELU with `alpha` (default 1).
    ELU { alpha: f64 } => |s, x| x.elu(s.alpha)
);
activation!(
    /// SELU.
    SELU {} => |s, x| x.selu()
);
activation!(
    /// CELU with `alpha` (default 1).
    CELU { alpha: f64 } => |s, x| x.celu(s.alpha)
);
activation!(
    /// GELU, exact (`approximate = "none"`) or `"tanh"`.
    GELU { approximate: &'static str } => |s, x| x.gelu(s.approximate)
);
activation!(
    /// `x * sigmoid(x)`.
    SiLU {} => |s, x| x.silu()
);
activation!(
    /// `x * tanh(softplus(x))`.
    Mish {} => |s, x| x.mish()
);
activation!(
    /// `ln(1 + e^(βx)) / β` (defaults β = 1, threshold = 20).
    Softplus { beta: f64, threshold: f64 } => |s, x| x.softplus(s.beta, s.threshold)
);
activation!(
    /// `clamp(x, min_val, max_val)` (defaults -1, 1).
    Hardtanh { min_val: f64, max_val: f64 } => |s, x| x.hardtanh(s.min_val, s.max_val)
);
activation!(
    /// `relu6(x + 3) / 6`.
    Hardsigmoid {} => |s, x| x.hardsigmoid()
);
activation!(
    /// `x * relu6(x + 3) / 6`.
    Hardswish {} => |s, x| x.hardswish()
);
activation!(
    /// `tanh(x)`.
    Tanh {} => |s, x| x.tanh()
);
activation!(
    /// `1 / (1 + e^-x)`.
    Sigmoid {} => |s, x| x.sigmoid()
);
activation!(
    /// Gated linear unit over `dim` (default -1).
    GLU { dim: isize } => |s, x| x.glu(s.dim)
);
activation!(
    /// Softmax over `dim`.
    Softmax { dim: isize } => |s, x| x.softmax(s.dim, None)
);
activation!(
    /// Log-softmax over `dim`.
    LogSoftmax { dim: isize } => |s, x| x.log_softmax(s.dim, None)
);

impl Default for LeakyReLU {
    fn default() -> Self {
        LeakyReLU { negative_slope: 0.01 }
    }
}

impl Default for GELU {
    fn default() -> Self {
        GELU { approximate: "none" }
    }
}

impl Default for Softplus {
    fn default() -> Self {
        Softplus { beta: 1.0, threshold: 20.0 }
    }
}

impl Default for Hardtanh {
    fn default() -> Self {
        Hardtanh { min_val: -1.0, max_val: 1.0 }
    }
}

impl Default for ELU {
    fn default() -> Self {
        ELU { alpha: 1.0 }
    }
}

impl Default for CELU {
    fn default() -> Self {
        CELU { alpha: 1.0 }
    }
}

impl Default for GLU {
    fn default() -> Self {
        GLU { dim: -1 }
    }
}
