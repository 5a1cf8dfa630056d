//! The feed-forward block of decoder LMs: gated, `down(act(gate(x)) * up(x))` (or gpt-oss's
//! clamped SwiGLU, [`Glu::Clamped`]), or plain (GPT-2), `down(act(up(x)))`.

use oxtorch_tensor::Tensor;

use super::{Activation, Arena, DecoderNorm, Linear};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// `down_proj(act(gate_proj(x)) * up_proj(x))`, or with a fused `gate_up_proj` (Phi-3).
#[derive(Debug, Clone)]
pub struct GatedMlp {
    gate_up: GateUp,
    down: Linear,
    act: Activation,
    glu: Glu,
    /// Apertus's xIELU in place of `act` (a plain block's activation with learned scalars)
    xielu: Option<Xielu>,
    /// A norm of `down`'s input (BitNet's `ffn_sub_norm`)
    inner_norm: Option<DecoderNorm>,
    /// The projections' inputs are fake-quantized to 8-bit integers per row (BitNet's
    /// `ActQuant`, see [`super::fake_quant_int8`])
    activation_quant: bool,
}

/// xIELU (transformers' `XIELUActivation`, Apertus): with `a_p = softplus(alpha_p)` and
/// `a_n = beta + softplus(alpha_n)`, `a_p·x·x + beta·x` for `x > 0`, else
/// `(expm1(min(x, eps)) − x)·a_n + beta·x`; the four scalars are each layer's (`mlp.act_fn.*`).
#[derive(Debug, Clone)]
pub struct Xielu {
    alpha_p: Tensor,
    alpha_n: Tensor,
    beta: Tensor,
    eps: Tensor,
}

impl Xielu {
    /// Loads `vars.{alpha_p, alpha_n}` (`[1]`) and `vars.{beta, eps}` (scalars).
    pub fn load(vars: &Vars<'_>) -> Result<Self> {
        Ok(Xielu {
            alpha_p: vars.get("alpha_p", &[1])?,
            alpha_n: vars.get("alpha_n", &[1])?,
            beta: vars.get("beta", &[])?,
            eps: vars.get("eps", &[])?,
        })
    }

    /// The activation of `x`, in the order transformers' Python version computes it.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let a_p = self.alpha_p.softplus(1.0, 20.0)?;
        let a_n = self.beta.add(&self.alpha_n.softplus(1.0, 20.0)?)?;
        let linear = self.beta.mul(x)?;
        let positive = a_p.mul(x)?.mul(x)?.add(&linear)?;
        let eps = self.eps.to_dtype(x.dtype())?;
        let negative = x.minimum(&eps)?.expm1()?.sub(x)?.mul(&a_n)?.add(&linear)?;
        Ok(Tensor::where_cond(&x.gt(0.0)?, &positive, &negative)?)
    }
}

/// How a gated block joins its gate and up projections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Glu {
    /// `act(gate) * up`
    Product,
    /// gpt-oss's experts: `gate` clamped to at most `limit`, `up` to `[-limit, limit]`, then
    /// `(up + 1) * gate * sigmoid(alpha * gate)` (the block's activation unused)
    Clamped {
        /// `swiglu_alpha`
        alpha: f64,
        /// `swiglu_limit`
        limit: f64,
    },
    /// Gemma 3n's activation sparsity: `act(relu(gate − (mean + std · multiplier))) * up`, the mean
    /// and (population) standard deviation over the gate's features, `multiplier` the standard
    /// normal's quantile of the sparsity `p` (roughly the top `1 − p` of the gate passes)
    GaussianTopK {
        /// `Normal(0, 1).icdf(p)`, rounded to float32 as transformers computes it
        multiplier: f64,
    },
}

/// The standard normal distribution's quantile at `p` in (0, 1) (Acklam's rational
/// approximation, relative error below 1.2e-9: exact once rounded to float32); ±∞ at 0 and 1.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    const LOW: f64 = 0.02425;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[derive(Debug, Clone)]
enum GateUp {
    Split {
        gate: Linear,
        up: Linear,
    },
    Fused(Linear),
    /// No gate: `down(act(up(x)))`.
    Plain(Linear),
}

impl GatedMlp {
    /// The MLP with `bias` added by its down projection (GTE's, whose gate and up projections
    /// have none).
    pub fn with_down_bias(mut self, bias: Tensor) -> Self {
        self.down.bias = Some(bias);
        self
    }

    /// `vars.{gate_proj,up_proj,down_proj}` or `vars.{gate_up_proj,down_proj}`.
    pub fn load(
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
        bias: bool,
    ) -> Result<Self> {
        let gate_up = if vars.pp("gate_up_proj").contains("weight") {
            let fused = intermediate.checked_mul(2).ok_or_else(|| {
                Error::Config(format!("an MLP of intermediate size {intermediate} is too large"))
            })?;
            GateUp::Fused(Linear::load(&vars.pp("gate_up_proj"), hidden, fused, bias)?)
        } else {
            GateUp::Split {
                gate: Linear::load(&vars.pp("gate_proj"), hidden, intermediate, bias)?,
                up: Linear::load(&vars.pp("up_proj"), hidden, intermediate, bias)?,
            }
        };
        let down = Linear::load(&vars.pp("down_proj"), intermediate, hidden, bias)?;
        Ok(GatedMlp {
            gate_up,
            down,
            act,
            glu: Glu::Product,
            xielu: None,
            inner_norm: None,
            activation_quant: false,
        })
    }

    /// The block with xIELU as its activation (a plain block's).
    pub fn with_xielu(self, xielu: Xielu) -> Self {
        GatedMlp { xielu: Some(xielu), ..self }
    }

    /// The block with `norm` applied to `down`'s input (BitNet's `ffn_sub_norm`).
    pub fn with_inner_norm(self, norm: DecoderNorm) -> Self {
        GatedMlp { inner_norm: Some(norm), ..self }
    }

    /// The block with its projections' inputs fake-quantized to 8-bit integers per row (BitNet).
    pub fn with_activation_quant(self) -> Self {
        GatedMlp { activation_quant: true, ..self }
    }

    /// `x` as the gate and up projections read it (see [`GatedMlp::with_activation_quant`]).
    fn projection_input(&self, x: &Tensor) -> Result<Tensor> {
        match self.activation_quant {
            true => super::fake_quant_int8(x),
            false => Ok(x.clone()),
        }
    }

    /// `down` of the activated `h` `[..., intermediate]`, normed and quantized first when the
    /// block asks for it.
    fn down(&self, h: &Tensor) -> Result<Tensor> {
        let h = match &self.inner_norm {
            Some(norm) => norm.forward(h)?,
            None => h.clone(),
        };
        self.down.forward(&self.projection_input(&h)?)
    }

    /// The block with its gate and up projections joined by `glu`.
    pub fn with_glu(self, glu: Glu) -> Self {
        GatedMlp { glu, ..self }
    }

    /// The gated block of a fused `gate_up` `[2 · intermediate, hidden]` (gate rows first) and
    /// `down` `[hidden, intermediate]` (an expert of a transformers 5 mixture).
    pub fn from_fused(gate_up: Tensor, down: Tensor, act: Activation) -> Self {
        GatedMlp {
            gate_up: GateUp::Fused(Linear { weight: gate_up, bias: None }),
            down: Linear { weight: down, bias: None },
            act,
            glu: Glu::Product,
            xielu: None,
            inner_norm: None,
            activation_quant: false,
        }
    }

    /// The ungated block from its matrices (`[intermediate, hidden]`, `[hidden, intermediate]`),
    /// without biases (a fused expert's part).
    pub fn from_plain(up: Tensor, down: Tensor, act: Activation) -> Self {
        GatedMlp {
            gate_up: GateUp::Plain(Linear { weight: up, bias: None }),
            down: Linear { weight: down, bias: None },
            act,
            glu: Glu::Product,
            xielu: None,
            inner_norm: None,
            activation_quant: false,
        }
    }

    /// The ungated block (GPT-2): `vars.{up_proj,down_proj}`, `down(act(up(x)))`.
    pub fn load_plain(
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
        bias: bool,
    ) -> Result<Self> {
        Ok(GatedMlp {
            gate_up: GateUp::Plain(Linear::load(&vars.pp("up_proj"), hidden, intermediate, bias)?),
            down: Linear::load(&vars.pp("down_proj"), intermediate, hidden, bias)?,
            act,
            glu: Glu::Product,
            xielu: None,
            inner_norm: None,
            activation_quant: false,
        })
    }

    /// The weights in the order [`GatedMlp::unpack`] takes them back: gate, up (or the fused
    /// gate_up), down.
    pub fn matrices(&self) -> Vec<&Tensor> {
        let mut m = match &self.gate_up {
            GateUp::Split { gate, up } => vec![&gate.weight, &up.weight],
            GateUp::Fused(l) | GateUp::Plain(l) => vec![&l.weight],
        };
        m.push(&self.down.weight);
        m
    }

    /// Takes the weights back from `arena` (packed from [`GatedMlp::matrices`]), fusing gate and up
    /// into one projection (their rows are neighbours there) when their biases agree.
    pub fn unpack(&mut self, arena: &mut Arena) -> Result<()> {
        let [inter, hidden] = [self.down.weight.dims()[1], self.down.weight.dims()[0]];
        self.gate_up = match &self.gate_up {
            GateUp::Split { gate, up } => match (&gate.bias, &up.bias) {
                (None, None) => {
                    GateUp::Fused(Linear { weight: arena.next(&[2 * inter, hidden])?, bias: None })
                }
                (Some(gb), Some(ub)) => GateUp::Fused(Linear {
                    weight: arena.next(&[2 * inter, hidden])?,
                    bias: Some(Tensor::cat(&[gb, ub], 0)?),
                }),
                _ => GateUp::Split {
                    gate: Linear { weight: arena.next(&[inter, hidden])?, bias: gate.bias.clone() },
                    up: Linear { weight: arena.next(&[inter, hidden])?, bias: up.bias.clone() },
                },
            },
            GateUp::Fused(l) => {
                GateUp::Fused(Linear { weight: arena.next(&[2 * inter, hidden])?, bias: l.bias.clone() })
            }
            GateUp::Plain(l) => {
                GateUp::Plain(Linear { weight: arena.next(&[inter, hidden])?, bias: l.bias.clone() })
            }
        };
        self.down.weight = arena.next(&[hidden, inter])?;
        Ok(())
    }

    /// Applies the block to `[..., hidden]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let x = &self.projection_input(x)?;
        if let GateUp::Plain(up) = &self.gate_up {
            let h = up.forward(x)?;
            let h = match &self.xielu {
                Some(xielu) => xielu.forward(&h)?,
                None => self.act.forward(&h)?,
            };
            return self.down(&h);
        }
        let (gate, up) = match &self.gate_up {
            GateUp::Split { gate, up } => (gate.forward(x)?, up.forward(x)?),
            GateUp::Fused(fused) => {
                let both = fused.forward(x)?;
                let halves = both.chunk(2, -1)?;
                (halves[0].clone(), halves[1].clone())
            }
            GateUp::Plain(_) => unreachable!("returned above"),
        };
        match self.glu {
            Glu::Product => self.down(&self.act.forward(&gate)?.mul(&up)?),
            Glu::GaussianTopK { multiplier } => {
                let mean = gate.mean(-1, true)?;
                let std = gate.sub(&mean)?.square()?.mean(-1, true)?.sqrt()?;
                // (The multiplier in the gate's dtype, as transformers casts it.)
                let multiplier = Tensor::full([], multiplier, (gate.dtype(), gate.device()))?;
                let cutoff = mean.add(&std.mul(&multiplier)?)?;
                let sparse = gate.sub(&cutoff)?.relu()?;
                self.down(&self.act.forward(&sparse)?.mul(&up)?)
            }
            Glu::Clamped { alpha, limit } => {
                let gate = gate.clamp(None, Some(limit.into()))?;
                let up = up.clamp(Some((-limit).into()), Some(limit.into()))?;
                let glu = gate.mul(&gate.mul(alpha)?.sigmoid()?)?;
                self.down(&up.add(1.0)?.mul(&glu)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantiles against scipy's `norm.ppf` (to 1e-9), in the centre and both tails.
    #[test]
    fn normal_quantiles() {
        for (p, z) in [
            (0.5, 0.0),
            (0.95, 1.6448536269514722),
            (0.6, 0.2533471031357997),
            (0.01, -2.3263478740408408),
            (0.999, 3.090232306167813),
        ] {
            assert!((normal_quantile(p) - z).abs() < 1e-8, "{p}: {} vs {z}", normal_quantile(p));
        }
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
    }
}
