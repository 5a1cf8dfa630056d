//! The gated feed-forward block of decoder LMs: `down(act(gate(x)) * up(x))`.

use oxtorch_tensor::Tensor;

use super::{Activation, Linear};
use crate::error::Result;
use crate::weights::Vars;

/// `down_proj(act(gate_proj(x)) * up_proj(x))`, or with a fused `gate_up_proj` (Phi-3).
#[derive(Debug, Clone)]
pub struct GatedMlp {
    gate_up: GateUp,
    down: Linear,
    act: Activation,
}

#[derive(Debug, Clone)]
enum GateUp {
    Split { gate: Linear, up: Linear },
    Fused(Linear),
}

impl GatedMlp {
    /// `vars.{gate_proj,up_proj,down_proj}` or `vars.{gate_up_proj,down_proj}`.
    pub fn load(
        vars: &Vars<'_>,
        hidden: usize,
        intermediate: usize,
        act: Activation,
        bias: bool,
    ) -> Result<Self> {
        let gate_up = if vars.pp("gate_up_proj").contains("weight") {
            GateUp::Fused(Linear::load(&vars.pp("gate_up_proj"), hidden, 2 * intermediate, bias)?)
        } else {
            GateUp::Split {
                gate: Linear::load(&vars.pp("gate_proj"), hidden, intermediate, bias)?,
                up: Linear::load(&vars.pp("up_proj"), hidden, intermediate, bias)?,
            }
        };
        let down = Linear::load(&vars.pp("down_proj"), intermediate, hidden, bias)?;
        Ok(GatedMlp { gate_up, down, act })
    }

    /// Applies the block to `[..., hidden]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (gate, up) = match &self.gate_up {
            GateUp::Split { gate, up } => (gate.forward(x)?, up.forward(x)?),
            GateUp::Fused(fused) => {
                let both = fused.forward(x)?;
                let halves = both.chunk(2, -1)?;
                (halves[0].clone(), halves[1].clone())
            }
        };
        self.down.forward(&self.act.forward(&gate)?.mul(&up)?)
    }
}
