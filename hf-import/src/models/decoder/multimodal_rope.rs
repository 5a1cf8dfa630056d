//! The decoder's multimodal RoPE (Qwen's vision-language models): the three position streams
//! its rotary embedding turns the frequencies by.

use oxtorch_tensor::{DType, Tensor};

use super::CausalLm;
use crate::error::{Error, Result};
use crate::layers::MultimodalRope;

impl CausalLm {
    /// The model with a multimodal RoPE of `sections` (`mrope_section`, interleaved for
    /// Qwen3-VL): its forward then also takes `position_ids` `[3, batch, seq]`, the temporal,
    /// height and width positions (or transformers' `[4, batch, seq]`, text positions first, which
    /// only its masks read), each frequency turning by its stream's; 2-D positions stand for
    /// three equal streams, which turn every frequency as the plain RoPE does.
    pub(crate) fn with_multimodal_rope(mut self, sections: [usize; 3], interleaved: bool) -> Result<Self> {
        let half = self.rotary_global.rotary_dim() / 2;
        self.mrope = Some(MultimodalRope::new(sections, interleaved, half)?);
        Ok(self)
    }

    /// Whether the model rotates by the three position streams of a multimodal RoPE.
    pub fn has_multimodal_rope(&self) -> bool {
        self.mrope.is_some()
    }

    /// `position_ids` of 3 dims, `[3 or 4, batch, seq]`, as the multimodal RoPE's streams `[3,
    /// batch, seq]` (int64, transformers' text row dropped), checked against the inputs' `[b, s]`;
    /// `None` for other positions.
    pub(super) fn position_streams(
        &self,
        position_ids: Option<&Tensor>,
        b: usize,
        s: usize,
    ) -> Result<Option<Tensor>> {
        let Some(position_ids) = position_ids.filter(|p| p.rank() == 3) else { return Ok(None) };
        let dims = position_ids.dims();
        if self.mrope.is_none() {
            return Err(Error::Input(format!(
                "position_ids of shape {dims:?}: only a model with a multimodal RoPE (mrope_section) takes \
                 positions per stream, this one takes [batch, seq]"
            )));
        }
        match dims {
            &[n @ (3 | 4), rows, cols] if rows == b && cols == s => {
                Ok(Some(position_ids.narrow(0, (n - 3) as isize, 3)?.to_dtype(DType::I64)?))
            }
            _ => Err(Error::Input(format!(
                "position_ids of shape {dims:?} do not fit the inputs [{b}, {s}]: the multimodal RoPE's \
                 streams are [3, {b}, {s}] (or [4, {b}, {s}], text positions first)"
            ))),
        }
    }

    /// The global RoPE's `(cos, sin)` at `positions` `[batch, seq]`, or at the multimodal RoPE's
    /// `streams` `[3, batch, seq]` where given.
    pub(super) fn global_cos_sin(
        &self,
        positions: &Tensor,
        streams: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor)> {
        match (streams, &self.mrope) {
            (Some(streams), Some(mrope)) => self.rotary_global.cos_sin_multimodal(streams, mrope, self.dtype),
            _ => self.rotary_global.cos_sin(positions, self.dtype),
        }
    }
}
