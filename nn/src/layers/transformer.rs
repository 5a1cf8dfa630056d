//! `TransformerEncoderLayer` and `TransformerDecoderLayer` with torch's submodule names
//! (`self_attn`, `multihead_attn`, `linear1`, `linear2`, `norm1..3`), post- or pre-norm.

use std::sync::Arc;

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::layers::attention::{
    additive, MultiheadAttention, MultiheadAttentionArgs, MultiheadAttentionOptions,
};
use crate::layers::dropout::Dropout;
use crate::layers::linear::Linear;
use crate::layers::norm::LayerNorm;
use crate::module::Forward;

/// Constructor options shared by the encoder and decoder layers, with torch's defaults.
#[derive(Clone, Debug)]
pub struct TransformerLayerOptions {
    /// feed-forward width (default 2048)
    pub dim_feedforward: usize,
    /// dropout everywhere (default 0.1)
    pub dropout: f64,
    /// `"relu"` (default) or `"gelu"`
    pub activation: &'static str,
    /// layer norm epsilon (default 1e-5)
    pub layer_norm_eps: f64,
    /// `[batch, seq, feature]` inputs (default false)
    pub batch_first: bool,
    /// normalise before each block instead of after (default false)
    pub norm_first: bool,
    /// biases in the linear layers and norms (default true)
    pub bias: bool,
    /// a function used instead of `activation` (torch's callable `activation`, e.g. SiLU)
    pub activation_fn: Option<ActivationFn>,
}

/// An elementwise function of a tensor.
pub type TensorFn = dyn Fn(&Tensor) -> Result<Tensor> + Send + Sync;

/// A feed-forward activation given as a function (torch's `activation=` callable).
#[derive(Clone)]
pub struct ActivationFn(pub Arc<TensorFn>);

impl ActivationFn {
    /// Wraps `f`.
    pub fn new(f: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static) -> Self {
        ActivationFn(Arc::new(f))
    }
}

impl std::fmt::Debug for ActivationFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActivationFn(..)")
    }
}

impl Default for TransformerLayerOptions {
    fn default() -> Self {
        TransformerLayerOptions {
            dim_feedforward: 2048,
            dropout: 0.1,
            activation: "relu",
            layer_norm_eps: 1e-5,
            batch_first: false,
            norm_first: false,
            bias: true,
            activation_fn: None,
        }
    }
}

/// The feed-forward activation of a layer: its function, else the named one.
fn feed_forward_activation(name: &str, custom: Option<&ActivationFn>, x: &Tensor) -> Result<Tensor> {
    match custom {
        Some(f) => (f.0)(x),
        None => activation(name, x),
    }
}

fn activation(name: &str, x: &Tensor) -> Result<Tensor> {
    match name {
        "relu" => x.relu(),
        "gelu" => x.gelu("none"),
        other => Err(Error::msg(format!("activation should be relu/gelu, not {other}"))),
    }
}

fn check_activation(name: &str) -> Result<()> {
    activation(name, &Tensor::zeros([0], ())?).map(|_| ())
}

fn attention(d_model: usize, nhead: usize, o: &TransformerLayerOptions) -> Result<MultiheadAttention> {
    MultiheadAttention::new(
        d_model,
        nhead,
        MultiheadAttentionOptions {
            dropout: o.dropout,
            bias: o.bias,
            batch_first: o.batch_first,
            ..Default::default()
        },
    )
}

/// The feed-forward block's parts, shared by both layers.
fn feed_forward(d_model: usize, o: &TransformerLayerOptions) -> Result<(Linear, Dropout, Linear)> {
    Ok((
        Linear::new(d_model, o.dim_feedforward, o.bias)?,
        Dropout::new(o.dropout)?,
        Linear::new(o.dim_feedforward, d_model, o.bias)?,
    ))
}

/// torch's `nn.TransformerEncoderLayer(d_model, nhead, ...)`: self-attention and a feed-forward
/// block, each with a residual connection and layer norm.
#[derive(oxtorch_nn_derive::Module)]
pub struct TransformerEncoderLayer {
    /// self-attention
    pub self_attn: MultiheadAttention,
    /// first feed-forward projection
    pub linear1: Linear,
    /// dropout inside the feed-forward block
    pub dropout: Dropout,
    /// second feed-forward projection
    pub linear2: Linear,
    /// norm of the attention block
    pub norm1: LayerNorm,
    /// norm of the feed-forward block
    pub norm2: LayerNorm,
    /// dropout after attention
    pub dropout1: Dropout,
    /// dropout after the feed-forward block
    pub dropout2: Dropout,
    /// pre-norm instead of post-norm
    pub norm_first: bool,
    /// `"relu"` or `"gelu"`
    pub activation: &'static str,
    /// a function used instead of `activation`
    #[module(skip)]
    pub activation_fn: Option<ActivationFn>,
}

impl TransformerEncoderLayer {
    /// A layer with torch's initialisation of each part.
    pub fn new(d_model: usize, nhead: usize, options: TransformerLayerOptions) -> Result<Self> {
        check_activation(options.activation)?;
        let o = &options;
        let self_attn = attention(d_model, nhead, o)?;
        let (linear1, dropout, linear2) = feed_forward(d_model, o)?;
        let norm = || LayerNorm::new(&[d_model], o.layer_norm_eps, true, o.bias);
        Ok(TransformerEncoderLayer {
            self_attn,
            linear1,
            dropout,
            linear2,
            norm1: norm()?,
            norm2: norm()?,
            dropout1: Dropout::new(o.dropout)?,
            dropout2: Dropout::new(o.dropout)?,
            norm_first: o.norm_first,
            activation: o.activation,
            activation_fn: o.activation_fn.clone(),
        })
    }

    /// torch's `forward(src, src_mask=None, src_key_padding_mask=None)`.
    pub fn forward_masked(
        &self,
        src: &Tensor,
        src_mask: Option<&Tensor>,
        src_key_padding_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        self.forward_with(src, src_mask, src_key_padding_mask, false)
    }

    /// torch's `forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)`:
    /// `is_causal` hints that `src_mask` is the causal mask (torch's error without one).
    pub fn forward_with(
        &self,
        src: &Tensor,
        src_mask: Option<&Tensor>,
        src_key_padding_mask: Option<&Tensor>,
        is_causal: bool,
    ) -> Result<Tensor> {
        let sa = |x: &Tensor| -> Result<Tensor> {
            let args = self_attention_args(src_mask, src_key_padding_mask, is_causal);
            let (y, _) = self.self_attn.forward_with(x, x, x, args)?;
            self.dropout1.forward(&y)
        };
        let ff = |x: &Tensor| -> Result<Tensor> {
            let y = self.linear1.forward(x)?;
            let y = self.linear2.forward(&self.dropout.forward(&feed_forward_activation(
                self.activation,
                self.activation_fn.as_ref(),
                &y,
            )?)?)?;
            self.dropout2.forward(&y)
        };
        if self.norm_first {
            let x = src.add(&sa(&self.norm1.forward(src)?)?)?;
            x.add(&ff(&self.norm2.forward(&x)?)?)
        } else {
            let x = self.norm1.forward(&src.add(&sa(src)?)?)?;
            self.norm2.forward(&x.add(&ff(&x)?)?)
        }
    }
}

impl Forward for TransformerEncoderLayer {
    fn forward(&self, src: &Tensor) -> Result<Tensor> {
        self.forward_masked(src, None, None)
    }
}

/// torch's `nn.TransformerDecoderLayer(d_model, nhead, ...)`: self-attention, attention over the
/// encoder's output (`memory`), and a feed-forward block, each with a residual and layer norm.
#[derive(oxtorch_nn_derive::Module)]
pub struct TransformerDecoderLayer {
    /// self-attention
    pub self_attn: MultiheadAttention,
    /// attention over the memory
    pub multihead_attn: MultiheadAttention,
    /// first feed-forward projection
    pub linear1: Linear,
    /// dropout inside the feed-forward block
    pub dropout: Dropout,
    /// second feed-forward projection
    pub linear2: Linear,
    /// norm of the self-attention block
    pub norm1: LayerNorm,
    /// norm of the memory-attention block
    pub norm2: LayerNorm,
    /// norm of the feed-forward block
    pub norm3: LayerNorm,
    /// dropout after self-attention
    pub dropout1: Dropout,
    /// dropout after memory attention
    pub dropout2: Dropout,
    /// dropout after the feed-forward block
    pub dropout3: Dropout,
    /// pre-norm instead of post-norm
    pub norm_first: bool,
    /// `"relu"` or `"gelu"`
    pub activation: &'static str,
    /// a function used instead of `activation`
    #[module(skip)]
    pub activation_fn: Option<ActivationFn>,
}

/// The masks of [`TransformerDecoderLayer::forward_masked`] (torch's keyword arguments).
#[derive(Clone, Copy, Default)]
pub struct DecoderMasks<'a> {
    /// `[T, T]` mask of the self-attention (e.g. causal)
    pub tgt_mask: Option<&'a Tensor>,
    /// `[T, S]` mask of the memory attention
    pub memory_mask: Option<&'a Tensor>,
    /// `[N, T]` padding of the target
    pub tgt_key_padding_mask: Option<&'a Tensor>,
    /// `[N, S]` padding of the memory
    pub memory_key_padding_mask: Option<&'a Tensor>,
}

impl TransformerDecoderLayer {
    /// A layer with torch's initialisation of each part.
    pub fn new(d_model: usize, nhead: usize, options: TransformerLayerOptions) -> Result<Self> {
        check_activation(options.activation)?;
        let o = &options;
        let (linear1, dropout, linear2) = feed_forward(d_model, o)?;
        let norm = || LayerNorm::new(&[d_model], o.layer_norm_eps, true, o.bias);
        Ok(TransformerDecoderLayer {
            self_attn: attention(d_model, nhead, o)?,
            multihead_attn: attention(d_model, nhead, o)?,
            linear1,
            dropout,
            linear2,
            norm1: norm()?,
            norm2: norm()?,
            norm3: norm()?,
            dropout1: Dropout::new(o.dropout)?,
            dropout2: Dropout::new(o.dropout)?,
            dropout3: Dropout::new(o.dropout)?,
            norm_first: o.norm_first,
            activation: o.activation,
            activation_fn: o.activation_fn.clone(),
        })
    }

    /// torch's `forward(tgt, memory)` without masks.
    pub fn forward(&self, tgt: &Tensor, memory: &Tensor) -> Result<Tensor> {
        self.forward_masked(tgt, memory, DecoderMasks::default())
    }

    /// torch's `forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
    /// memory_key_padding_mask)`.
    pub fn forward_masked(&self, tgt: &Tensor, memory: &Tensor, masks: DecoderMasks<'_>) -> Result<Tensor> {
        self.forward_with(tgt, memory, masks, false, false)
    }

    /// torch's `forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
    /// memory_key_padding_mask, tgt_is_causal=False, memory_is_causal=False)`: the flags hint
    /// that `tgt_mask` / `memory_mask` are causal masks (torch's error without them).
    pub fn forward_with(
        &self,
        tgt: &Tensor,
        memory: &Tensor,
        masks: DecoderMasks<'_>,
        tgt_is_causal: bool,
        memory_is_causal: bool,
    ) -> Result<Tensor> {
        let sa = |x: &Tensor| -> Result<Tensor> {
            let args = self_attention_args(masks.tgt_mask, masks.tgt_key_padding_mask, tgt_is_causal);
            let (y, _) = self.self_attn.forward_with(x, x, x, args)?;
            self.dropout1.forward(&y)
        };
        let mha = |x: &Tensor| -> Result<Tensor> {
            let args =
                self_attention_args(masks.memory_mask, masks.memory_key_padding_mask, memory_is_causal);
            let (y, _) = self.multihead_attn.forward_with(x, memory, memory, args)?;
            self.dropout2.forward(&y)
        };
        let ff = |x: &Tensor| -> Result<Tensor> {
            let y = self.linear1.forward(x)?;
            let y = self.linear2.forward(&self.dropout.forward(&feed_forward_activation(
                self.activation,
                self.activation_fn.as_ref(),
                &y,
            )?)?)?;
            self.dropout3.forward(&y)
        };
        if self.norm_first {
            let x = tgt.add(&sa(&self.norm1.forward(tgt)?)?)?;
            let x = x.add(&mha(&self.norm2.forward(&x)?)?)?;
            x.add(&ff(&self.norm3.forward(&x)?)?)
        } else {
            let x = self.norm1.forward(&tgt.add(&sa(tgt)?)?)?;
            let x = self.norm2.forward(&x.add(&mha(&x)?)?)?;
            self.norm3.forward(&x.add(&ff(&x)?)?)
        }
    }
}

/// The attention arguments of the layers' blocks: no weights returned, as torch's `_sa_block` and
/// `_mha_block`.
fn self_attention_args<'a>(
    attn_mask: Option<&'a Tensor>,
    key_padding_mask: Option<&'a Tensor>,
    is_causal: bool,
) -> MultiheadAttentionArgs<'a> {
    MultiheadAttentionArgs {
        key_padding_mask,
        need_weights: false,
        attn_mask,
        average_attn_weights: true,
        is_causal,
    }
}

/// torch's `_get_seq_len`: the sequence length of an unbatched `[S, E]` or batched input.
fn seq_len(x: &Tensor, batch_first: bool) -> usize {
    let d = x.dims();
    let pos = if d.len() == 2 { 0 } else { usize::from(batch_first) };
    d.get(pos).copied().unwrap_or(0)
}

/// torch's `_detect_is_causal_mask`: the hint when given, else whether `mask` (as an additive mask
/// of `dtype`) is exactly the `[size, size]` causal mask.
fn detect_is_causal_mask(
    mask: Option<&Tensor>,
    is_causal: Option<bool>,
    size: usize,
    dtype: DType,
) -> Result<bool> {
    match (is_causal, mask) {
        (Some(hint), _) => Ok(hint),
        (None, None) => Ok(false),
        (None, Some(m)) => {
            let m = additive(m, dtype)?;
            if m.dims() != [size, size] {
                return Ok(false);
            }
            let causal = Tensor::full([size, size], f64::NEG_INFINITY, (m.dtype(), m.device()))?.triu(1)?;
            m.equal(&causal)
        }
    }
}

/// Builds `num_layers` layers with `make` and gives them all the first one's weights, as torch's
/// deep copies of one `encoder_layer` / `decoder_layer` start identical.
fn clones<L: crate::module::Module>(
    num_layers: usize,
    mut make: impl FnMut() -> Result<L>,
) -> Result<Vec<L>> {
    use crate::module::ModuleExt;
    let mut layers = (0..num_layers).map(|_| make()).collect::<Result<Vec<L>>>()?;
    if let Some((first, rest)) = layers.split_first_mut() {
        let sd = first.state_dict();
        for l in rest {
            l.load_state_dict(&sd, true)?;
        }
    }
    Ok(layers)
}

/// torch's `nn.TransformerEncoder(encoder_layer, num_layers, norm=None)`: the layers in turn, then
/// the optional final norm; state-dict names `layers.0.self_attn.in_proj_weight`, `norm.weight`.
#[derive(oxtorch_nn_derive::Module)]
pub struct TransformerEncoder {
    /// the stacked layers
    pub layers: Vec<TransformerEncoderLayer>,
    /// the final norm
    pub norm: Option<LayerNorm>,
}

impl TransformerEncoder {
    /// `num_layers` layers from `make`, all starting from the first one's weights (torch clones
    /// one layer), and an optional final norm.
    pub fn new(
        num_layers: usize,
        make: impl FnMut() -> Result<TransformerEncoderLayer>,
        norm: Option<LayerNorm>,
    ) -> Result<Self> {
        Ok(TransformerEncoder { layers: clones(num_layers, make)?, norm })
    }

    /// torch's `forward(src, mask=None, src_key_padding_mask=None)`.
    pub fn forward_masked(
        &self,
        src: &Tensor,
        mask: Option<&Tensor>,
        src_key_padding_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        self.forward_with(src, mask, src_key_padding_mask, None)
    }

    /// torch's `forward(src, mask=None, src_key_padding_mask=None, is_causal=None)`: `is_causal`
    /// `None` detects whether `mask` is the causal mask (torch's `_detect_is_causal_mask`); `true`
    /// without a mask is torch's error.
    pub fn forward_with(
        &self,
        src: &Tensor,
        mask: Option<&Tensor>,
        src_key_padding_mask: Option<&Tensor>,
        is_causal: Option<bool>,
    ) -> Result<Tensor> {
        let batch_first = self.layers.first().is_some_and(|l| l.self_attn.options.batch_first);
        let is_causal = detect_is_causal_mask(mask, is_causal, seq_len(src, batch_first), src.dtype())?;
        let mut x = src.clone();
        for layer in &self.layers {
            x = layer.forward_with(&x, mask, src_key_padding_mask, is_causal)?;
        }
        match &self.norm {
            Some(n) => n.forward(&x),
            None => Ok(x),
        }
    }
}

impl Forward for TransformerEncoder {
    fn forward(&self, src: &Tensor) -> Result<Tensor> {
        self.forward_masked(src, None, None)
    }
}

/// torch's `nn.TransformerDecoder(decoder_layer, num_layers, norm=None)`.
#[derive(oxtorch_nn_derive::Module)]
pub struct TransformerDecoder {
    /// the stacked layers
    pub layers: Vec<TransformerDecoderLayer>,
    /// the final norm
    pub norm: Option<LayerNorm>,
}

impl TransformerDecoder {
    /// `num_layers` layers from `make`, all starting from the first one's weights, and an
    /// optional final norm.
    pub fn new(
        num_layers: usize,
        make: impl FnMut() -> Result<TransformerDecoderLayer>,
        norm: Option<LayerNorm>,
    ) -> Result<Self> {
        Ok(TransformerDecoder { layers: clones(num_layers, make)?, norm })
    }

    /// torch's `forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
    /// memory_key_padding_mask)`.
    pub fn forward_masked(&self, tgt: &Tensor, memory: &Tensor, masks: DecoderMasks<'_>) -> Result<Tensor> {
        self.forward_with(tgt, memory, masks, None, false)
    }

    /// torch's `forward(tgt, memory, ..., tgt_is_causal=None, memory_is_causal=False)`:
    /// `tgt_is_causal` `None` detects whether `tgt_mask` is the causal mask; a `true` flag without
    /// its mask is torch's error.
    pub fn forward_with(
        &self,
        tgt: &Tensor,
        memory: &Tensor,
        masks: DecoderMasks<'_>,
        tgt_is_causal: Option<bool>,
        memory_is_causal: bool,
    ) -> Result<Tensor> {
        let batch_first = self.layers.first().is_some_and(|l| l.self_attn.options.batch_first);
        let size = seq_len(tgt, batch_first);
        let tgt_is_causal = detect_is_causal_mask(masks.tgt_mask, tgt_is_causal, size, tgt.dtype())?;
        let mut x = tgt.clone();
        for layer in &self.layers {
            x = layer.forward_with(&x, memory, masks, tgt_is_causal, memory_is_causal)?;
        }
        match &self.norm {
            Some(n) => n.forward(&x),
            None => Ok(x),
        }
    }
}
