//! How a decoder block mixes its tokens: attention, or one of the hybrids' recurrent mixers, which
//! keep a state per layer in the [`KvCache`](crate::layers::KvCache)'s [`LayerCache`].

use oxtorch_tensor::{DType, Tensor};

use crate::error::Result;
use crate::layers::{GatedDeltaNet, LayerCache, Mamba2Mixer, MambaMixer, SelfAttention, ShortConv, SsmState};

/// How a block mixes its tokens: self-attention, or a hybrid's recurrent mixer (Mamba, Mamba-2,
/// LFM2's gated short convolution).
#[derive(Debug, Clone)]
pub(super) enum TokenMixer {
    Attention(Box<SelfAttention>),
    Mamba(MambaMixer),
    Mamba2(Mamba2Mixer),
    ShortConv(ShortConv),
    /// Qwen3.5's gated delta net
    DeltaNet(GatedDeltaNet),
    /// none: a feed-forward block (Nemotron-H's `-`)
    None,
}

impl TokenMixer {
    /// The self-attention, `None` for a recurrent layer (or none).
    pub(super) fn attention(&self) -> Option<&SelfAttention> {
        match self {
            TokenMixer::Attention(a) => Some(a),
            _ => None,
        }
    }

    /// Whether it keeps a recurrent state between calls.
    pub(super) fn is_recurrent(&self) -> bool {
        matches!(
            self,
            TokenMixer::Mamba(_) | TokenMixer::Mamba2(_) | TokenMixer::ShortConv(_) | TokenMixer::DeltaNet(_)
        )
    }
}

/// A hybrid's recurrent layer (`mixer`, not attention) on its normed input `x`
/// `[batch, seq, hidden]`: from the state its `cache` holds (which it advances, and whose count of
/// positions it advances too unless the layer's attention counts them: `beside_attention`), or
/// from an empty one without a cache.
pub(super) fn recurrent_step(
    mixer: &TokenMixer,
    x: &Tensor,
    mask: Option<&Tensor>,
    cache: Option<&mut LayerCache>,
    dtype: DType,
    beside_attention: bool,
) -> Result<Tensor> {
    let b = x.dims()[0];
    let fresh = || -> Result<SsmState> {
        match mixer {
            TokenMixer::Mamba(m) => m.new_state(b, dtype),
            TokenMixer::Mamba2(m) => m.new_state(b, dtype),
            TokenMixer::DeltaNet(m) => m.new_state(b, dtype),
            TokenMixer::ShortConv(c) => {
                let conv = c.new_state(b, dtype)?;
                Ok(SsmState { ssm: Tensor::zeros([b, 0, 0], (dtype, conv.device()))?, conv })
            }
            TokenMixer::Attention(_) | TokenMixer::None => unreachable!("not a recurrent mixer"),
        }
    };
    let run = |state: &mut SsmState, cached_step: bool| -> Result<Tensor> {
        match mixer {
            TokenMixer::Mamba(m) => m.forward(x, mask, state),
            TokenMixer::Mamba2(m) => m.forward(x, mask, state, cached_step),
            TokenMixer::ShortConv(c) => c.forward(x, mask, &mut state.conv),
            TokenMixer::DeltaNet(m) => m.forward(x, mask, state),
            TokenMixer::Attention(_) | TokenMixer::None => unreachable!("not a recurrent mixer"),
        }
    };
    match cache {
        Some(cache) => {
            let (s, cached_step) = (x.dims()[1], !cache.is_empty() && x.dims()[1] == 1);
            let out = run(cache.recurrent_state(fresh)?, cached_step)?;
            if !beside_attention {
                cache.advance(s);
            }
            Ok(out)
        }
        None => run(&mut fresh()?, false),
    }
}
