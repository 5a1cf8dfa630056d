//! Activation functions named as in transformers' `ACT2FN`.

use oxtorch_tensor::Tensor;

use crate::error::{Error, Result};

/// The `hidden_act` names [`Activation::from_name`] knows (transformers' `ACT2FN` less the ones
/// with parameters, `prelu` and `xielu`).
const SUPPORTED: &str = "silu, swish, gelu, gelu_python, gelu_new, gelu_pytorch_tanh, gelu_python_tanh, gelu_fast, \
    gelu_accurate, gelu_10, quick_gelu, relu, relu2, relu6, leaky_relu, sigmoid, tanh, mish, hardswish, linear, laplace, \
    sqrtsoftplus";

/// The centre of transformers' `LaplaceActivation`, which rounds `1/sqrt 2` to six places.
#[allow(clippy::approx_constant)]
const LAPLACE_MU: f64 = 0.707107;

/// An activation from a config's `hidden_act` / `hidden_activation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `x * sigmoid(x)` (`silu`, `swish`).
    Silu,
    /// Exact, erf-based GELU (`gelu`).
    Gelu,
    /// tanh-approximated GELU (`gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`).
    GeluTanh,
    /// `max(x, 0)`.
    Relu,
    /// Hyperbolic tangent.
    Tanh,
    /// `x * sigmoid(1.702 x)` (`quick_gelu`).
    QuickGelu,
    /// `sigmoid(x)`.
    Sigmoid,
    /// `min(max(x, 0), 6)`.
    Relu6,
    /// `max(x, 0)^2` (`relu2`).
    ReluSquared,
    /// `leaky_relu` with torch's default slope 0.01.
    LeakyRelu,
    /// `x * tanh(softplus(x))`.
    Mish,
    /// `x * relu6(x + 3) / 6`.
    Hardswish,
    /// The identity (`linear`).
    Linear,
    /// Exact GELU clipped to `[-10, 10]` (`gelu_10`).
    Gelu10,
    /// `0.5 (1 + erf((x - 0.707107) / (0.282095 sqrt 2)))` (`laplace`).
    Laplace,
    /// `sqrt(softplus(x))` (`sqrtsoftplus`).
    SqrtSoftplus,
}

impl Activation {
    /// The activation transformers calls `name`.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "silu" | "swish" => Activation::Silu,
            "gelu" | "gelu_python" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_python_tanh" | "gelu_fast" | "gelu_accurate" => {
                Activation::GeluTanh
            }
            "relu" => Activation::Relu,
            "tanh" => Activation::Tanh,
            "quick_gelu" => Activation::QuickGelu,
            "sigmoid" => Activation::Sigmoid,
            "relu6" => Activation::Relu6,
            "relu2" => Activation::ReluSquared,
            "leaky_relu" => Activation::LeakyRelu,
            "mish" => Activation::Mish,
            "hardswish" => Activation::Hardswish,
            "linear" => Activation::Linear,
            "gelu_10" => Activation::Gelu10,
            "laplace" => Activation::Laplace,
            "sqrtsoftplus" => Activation::SqrtSoftplus,
            other => {
                return Err(Error::Unsupported(format!(
                    "activation \"{other}\" is not supported (supported: {SUPPORTED})"
                )))
            }
        })
    }

    /// Applies the activation.
    pub fn forward(self, x: &Tensor) -> Result<Tensor> {
        Ok(match self {
            Activation::Silu => x.silu()?,
            Activation::Gelu => x.gelu("none")?,
            Activation::GeluTanh => x.gelu("tanh")?,
            Activation::Relu => x.relu()?,
            Activation::Tanh => x.tanh()?,
            Activation::QuickGelu => x.mul(&x.mul(1.702)?.sigmoid()?)?,
            Activation::Sigmoid => x.sigmoid()?,
            Activation::Relu6 => x.relu6()?,
            Activation::ReluSquared => x.relu()?.square()?,
            Activation::LeakyRelu => x.leaky_relu(0.01)?,
            Activation::Mish => x.mish()?,
            Activation::Hardswish => x.hardswish()?,
            Activation::Linear => x.clone(),
            Activation::Gelu10 => x.gelu("none")?.clamp(Some((-10.0).into()), Some(10.0.into()))?,
            Activation::Laplace => {
                // transformers' constants (mu = 0.707107 is its rounded 1/sqrt 2, kept as written).
                let (mu, sigma) = (LAPLACE_MU, 0.282095);
                x.sub(mu)?.div(sigma * std::f64::consts::SQRT_2)?.erf()?.add(1.0)?.mul(0.5)?
            }
            Activation::SqrtSoftplus => x.softplus(1.0, 20.0)?.sqrt()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxtorch_tensor::DType;

    /// transformers 5.24's `ACT2FN[name]` of `X` in float64.
    #[test]
    fn every_named_activation_matches_transformers() {
        const X: [f64; 7] = [-12.0, -3.0, -0.5, 0.0, 0.7, 2.5, 11.0];
        #[rustfmt::skip]
        let want: [(&str, [f64; 7]); 14] = [
            ("quick_gelu", [-1.6186417835847626e-08, -0.01807130970778597, -0.1496115633936199, 0.0, 0.5368939517231501, 2.46501383495143, 10.99999991861743]),
            ("sigmoid", [6.144174602214718e-06, 0.04742587317756678, 0.3775406687981454, 0.5, 0.6681877721681662, 0.9241418199787566, 0.999983298578152]),
            ("relu6", [0.0, 0.0, 0.0, 0.0, 0.7, 2.5, 6.0]),
            ("relu2", [0.0, 0.0, 0.0, 0.0, 0.48999999999999994, 6.25, 121.0]),
            ("leaky_relu", [-0.12, -0.03, -0.005, 0.0, 0.7, 2.5, 11.0]),
            ("mish", [-7.373032173186587e-05, -0.1456474612756246, -0.22074377465173, 0.0, 0.5611483776438518, 2.471392304557881, 10.999999993863375]),
            ("hardswish", [-0.0, -0.0, -0.20833333333333334, 0.0, 0.43166666666666664, 2.2916666666666665, 11.0]),
            ("linear", [-12.0, -3.0, -0.5, 0.0, 0.7, 2.5, 11.0]),
            ("gelu_10", [-0.0, -0.00404969409489031, -0.15426876936299344, 0.0, 0.5306254434438489, 2.4844758366855597, 10.0]),
            ("laplace", [0.0, 0.0, 9.383381167682447e-06, 0.006094459617935588, 0.4899502547706289, 0.9999999998962167, 1.0]),
            ("sqrtsoftplus", [0.002478748369184094, 0.2204253877704246, 0.6885324859293908, 0.8325546111576978, 1.050326639139205, 1.6058921926121161, 3.316627308209549]),
            ("gelu_accurate", [-0.0, -0.0036373920817729943, -0.15428599017485606, 0.0, 0.5305701347051167, 2.484915733910001, 11.0]),
            ("gelu_python", [-0.0, -0.00404969409489031, -0.15426876936299344, 0.0, 0.5306254434438489, 2.4844758366855597, 11.0]),
            ("gelu_python_tanh", [-0.0, -0.0036373920817729943, -0.15428599017485606, 0.0, 0.5305701347051167, 2.484915733910001, 11.0]),
        ];
        let x = Tensor::from_vec(X.to_vec(), [7]).unwrap().to_dtype(DType::F64).unwrap();
        for (name, want) in want {
            let got = Activation::from_name(name).unwrap().forward(&x).unwrap().to_f64_vec().unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{name}: got {got:?}, want {want:?}");
            }
        }
        let err = Activation::from_name("prelu").unwrap_err().to_string();
        assert!(err.contains("\"prelu\" is not supported") && err.contains("quick_gelu"), "{err}");
    }
}
