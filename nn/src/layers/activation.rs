//! Activation modules (torch's `nn.ReLU`, `nn.GELU`, ...): stateless wrappers of the functional forms.

use oxtorch_tensor::{Result, Tensor};

use crate::functional as F;
use crate::module::Forward;

/// A setting as Python's `repr` writes it, for `extra_repr`.
trait PyRepr {
    fn py_repr(&self) -> String;
}

impl PyRepr for f64 {
    fn py_repr(&self) -> String {
        crate::module::py_float(*self)
    }
}

impl PyRepr for isize {
    fn py_repr(&self) -> String {
        self.to_string()
    }
}

impl PyRepr for bool {
    fn py_repr(&self) -> String {
        crate::module::py_bool(*self).to_string()
    }
}

impl PyRepr for &'static str {
    fn py_repr(&self) -> String {
        format!("'{self}'")
    }
}

macro_rules! activation {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* } => |$s:ident, $x:ident| $body:expr) => {
        $(#[$doc])*
        #[derive(oxtorch_nn_derive::Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $name { $(#[doc = stringify!($field)] pub $field: $ty),* }

        impl $name {
            /// torch's `extra_repr`: `field=value` for each setting (the value alone for
            /// `Hardshrink`/`Softshrink`, no `training` flag).
            fn extra_repr_text(&self) -> String {
                #[allow(unused_mut)]
                let mut parts: Vec<String> = Vec::new();
                $(
                    if stringify!($field) != "training" {
                        let value = PyRepr::py_repr(&self.$field);
                        parts.push(if matches!(stringify!($name), "Hardshrink" | "Softshrink") {
                            value
                        } else {
                            format!("{}={value}", stringify!($field))
                        });
                    }
                )*
                parts.join(", ")
            }
        }

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

activation!(
    /// Softmin over `dim` (the softmax of `-x`).
    Softmin { dim: isize } => |s, x| F::softmin(x, s.dim, None)
);
activation!(
    /// `x` where `|x| > lambd`, else 0 (default `lambd` 0.5).
    Hardshrink { lambd: f64 } => |s, x| F::hardshrink(x, s.lambd)
);
activation!(
    /// `x ∓ lambd` outside `[-lambd, lambd]`, else 0 (default `lambd` 0.5).
    Softshrink { lambd: f64 } => |s, x| F::softshrink(x, s.lambd)
);
activation!(
    /// `x - tanh(x)`.
    Tanhshrink {} => |s, x| F::tanhshrink(x)
);
activation!(
    /// `x` where `x > threshold`, else `value` (no defaults, as torch).
    Threshold { threshold: f64, value: f64 } => |s, x| F::threshold(x, s.threshold, s.value)
);
activation!(
    /// `log(sigmoid(x))`.
    LogSigmoid {} => |s, x| F::logsigmoid(x)
);
activation!(
    /// `x / (1 + |x|)`.
    Softsign {} => |s, x| F::softsign(x)
);
activation!(
    /// Randomised leaky ReLU (defaults `lower` 1/8, `upper` 1/3): random slopes in training, their
    /// mean in evaluation (`training` is the module's own flag).
    RReLU { lower: f64, upper: f64, training: bool } => |s, x| F::rrelu(x, s.lower, s.upper, s.training)
);

impl Default for Hardshrink {
    fn default() -> Self {
        Hardshrink { lambd: 0.5 }
    }
}

impl Default for Softshrink {
    fn default() -> Self {
        Softshrink { lambd: 0.5 }
    }
}

impl Default for RReLU {
    fn default() -> Self {
        RReLU { lower: 1.0 / 8.0, upper: 1.0 / 3.0, training: true }
    }
}

/// torch's `nn.PReLU(num_parameters=1, init=0.25)`: a leaky ReLU whose slope is learned, one for
/// all channels or one per channel (dim 1).
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct PReLU {
    /// the slopes, `[num_parameters]`
    pub weight: Tensor,
}

impl PReLU {
    /// `num_parameters` slopes, each `init`.
    pub fn new(num_parameters: usize, init: f64) -> Result<Self> {
        let weight = Tensor::full([num_parameters], init, ())?.requires_grad_(true)?;
        Ok(PReLU { weight })
    }
}

impl PReLU {
    /// torch's `extra_repr`: `num_parameters=1`.
    fn extra_repr_text(&self) -> String {
        format!("num_parameters={}", self.weight.numel())
    }
}

impl Forward for PReLU {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        F::prelu(x, &self.weight)
    }
}

/// torch's `nn.CosineSimilarity(dim=1, eps=1e-8)`; call [`CosineSimilarity::forward`] with both
/// inputs.
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
pub struct CosineSimilarity {
    /// the dim the vectors lie along
    pub dim: isize,
    /// the smallest norm divided by
    pub eps: f64,
}

impl Default for CosineSimilarity {
    fn default() -> Self {
        CosineSimilarity { dim: 1, eps: 1e-8 }
    }
}

impl CosineSimilarity {
    /// The cosine similarity of `x1` and `x2`.
    pub fn forward(&self, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
        F::cosine_similarity(x1, x2, self.dim, self.eps)
    }
}

/// torch's `nn.PairwiseDistance(p=2, eps=1e-6, keepdim=False)`; call
/// [`PairwiseDistance::forward`] with both inputs.
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
pub struct PairwiseDistance {
    /// the norm's order
    pub p: f64,
    /// added to the differences
    pub eps: f64,
    /// keep the last dim
    pub keepdim: bool,
}

impl Default for PairwiseDistance {
    fn default() -> Self {
        PairwiseDistance { p: 2.0, eps: 1e-6, keepdim: false }
    }
}

impl PairwiseDistance {
    /// The `p`-norm distance between the rows of `x1` and `x2`.
    pub fn forward(&self, x1: &Tensor, x2: &Tensor) -> Result<Tensor> {
        F::pairwise_distance(x1, x2, self.p, self.eps, self.keepdim)
    }
}

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
