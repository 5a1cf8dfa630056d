//! `Transformer`: torch's full encoder-decoder model (`nn.Transformer`), a [`TransformerEncoder`]
//! and a [`TransformerDecoder`] of the existing layers, each ending in a `LayerNorm`, with torch's
//! state-dict names (`encoder.layers.0.self_attn.in_proj_weight`, ..., `encoder.norm.weight`,
//! `decoder.layers.0.multihead_attn.in_proj_weight`, ..., `decoder.norm.weight`) and
//! initialisation (Xavier-uniform for every parameter of two or more dims).

use oxtorch_tensor::{Error, Result, Tensor, TensorOptions};

use crate::init;
use crate::layers::norm::LayerNorm;
use crate::layers::transformer::{
    ActivationFn, DecoderMasks, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer, TransformerLayerOptions,
};
use crate::module::ModuleExt;

/// Constructor options of [`Transformer`], with torch's defaults.
#[derive(Clone, Debug)]
pub struct TransformerOptions {
    /// features of the encoder and decoder inputs (default 512)
    pub d_model: usize,
    /// attention heads (default 8)
    pub nhead: usize,
    /// encoder layers (default 6)
    pub num_encoder_layers: usize,
    /// decoder layers (default 6)
    pub num_decoder_layers: usize,
    /// feed-forward width (default 2048)
    pub dim_feedforward: usize,
    /// dropout everywhere (default 0.1)
    pub dropout: f64,
    /// `"relu"` (default) or `"gelu"`
    pub activation: &'static str,
    /// a function used instead of `activation` (torch's callable `activation`)
    pub activation_fn: Option<ActivationFn>,
    /// layer norm epsilon (default 1e-5)
    pub layer_norm_eps: f64,
    /// `[batch, seq, feature]` inputs and output (default false)
    pub batch_first: bool,
    /// normalise before each block instead of after (default false)
    pub norm_first: bool,
    /// biases in the linear layers and norms (default true)
    pub bias: bool,
}

impl Default for TransformerOptions {
    fn default() -> Self {
        TransformerOptions {
            d_model: 512,
            nhead: 8,
            num_encoder_layers: 6,
            num_decoder_layers: 6,
            dim_feedforward: 2048,
            dropout: 0.1,
            activation: "relu",
            activation_fn: None,
            layer_norm_eps: 1e-5,
            batch_first: false,
            norm_first: false,
            bias: true,
        }
    }
}

impl TransformerOptions {
    /// The options of each encoder and decoder layer.
    fn layer_options(&self) -> TransformerLayerOptions {
        TransformerLayerOptions {
            dim_feedforward: self.dim_feedforward,
            dropout: self.dropout,
            activation: self.activation,
            layer_norm_eps: self.layer_norm_eps,
            batch_first: self.batch_first,
            norm_first: self.norm_first,
            bias: self.bias,
            activation_fn: self.activation_fn.clone(),
        }
    }
}

/// The masks of [`Transformer::forward_masked`] (torch's keyword arguments); boolean masks are
/// true where attention is not allowed, float masks are added to the scores.
#[derive(Clone, Copy, Default)]
pub struct TransformerMasks<'a> {
    /// `[S, S]` or `[N·nhead, S, S]` mask of the encoder's self-attention
    pub src_mask: Option<&'a Tensor>,
    /// `[T, T]` or `[N·nhead, T, T]` mask of the decoder's self-attention (e.g.
    /// [`Transformer::generate_square_subsequent_mask`])
    pub tgt_mask: Option<&'a Tensor>,
    /// `[T, S]` mask of the decoder's attention over the encoder's output
    pub memory_mask: Option<&'a Tensor>,
    /// `[N, S]` (`[S]` unbatched) padding of the source
    pub src_key_padding_mask: Option<&'a Tensor>,
    /// `[N, T]` (`[T]` unbatched) padding of the target
    pub tgt_key_padding_mask: Option<&'a Tensor>,
    /// `[N, S]` (`[S]` unbatched) padding of the memory (usually the source's padding)
    pub memory_key_padding_mask: Option<&'a Tensor>,
}

/// torch's `nn.Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
/// dim_feedforward=2048, dropout=0.1, activation=relu, custom_encoder=None, custom_decoder=None,
/// layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)`: the encoder turns `src`
/// into a memory that the decoder attends to while transforming `tgt`. A custom encoder or decoder
/// is a struct literal with other parts.
#[derive(oxtorch_nn_derive::Module)]
pub struct Transformer {
    /// the encoder layers and their final norm (`encoder.norm`)
    pub encoder: TransformerEncoder,
    /// the decoder layers and their final norm (`decoder.norm`)
    pub decoder: TransformerDecoder,
    /// features of the inputs
    pub d_model: usize,
    /// attention heads
    pub nhead: usize,
    /// `[batch, seq, feature]` inputs and output
    pub batch_first: bool,
}

impl Transformer {
    /// A model with torch's construction: every encoder (decoder) layer a copy of one layer, a
    /// final `LayerNorm` after each stack, then every parameter of two or more dims redrawn from
    /// Xavier-uniform (torch's `_reset_parameters`; the biases and norms keep their layers'
    /// initialisation).
    pub fn new(options: TransformerOptions) -> Result<Self> {
        let o = &options;
        let (d_model, nhead) = (o.d_model, o.nhead);
        let layer = o.layer_options();
        let norm = || LayerNorm::new(&[d_model], o.layer_norm_eps, true, o.bias);
        let encoder = TransformerEncoder::new(
            o.num_encoder_layers,
            || TransformerEncoderLayer::new(d_model, nhead, layer.clone()),
            Some(norm()?),
        )?;
        let decoder = TransformerDecoder::new(
            o.num_decoder_layers,
            || TransformerDecoderLayer::new(d_model, nhead, layer.clone()),
            Some(norm()?),
        )?;
        let model = Transformer { encoder, decoder, d_model, nhead, batch_first: o.batch_first };
        for p in model.parameters() {
            if p.rank() > 1 {
                init::xavier_uniform_(&p, 1.0)?;
            }
        }
        Ok(model)
    }

    /// torch's `forward(src, tgt)` without masks: `src` is `[S, N, E]` (`[N, S, E]` with
    /// `batch_first`, `[S, E]` unbatched) and `tgt` `[T, N, E]`; returns the decoder's output,
    /// shaped as `tgt`.
    pub fn forward(&self, src: &Tensor, tgt: &Tensor) -> Result<Tensor> {
        self.forward_masked(src, tgt, TransformerMasks::default())
    }

    /// torch's `forward(src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask,
    /// tgt_key_padding_mask, memory_key_padding_mask)`.
    pub fn forward_masked(&self, src: &Tensor, tgt: &Tensor, masks: TransformerMasks<'_>) -> Result<Tensor> {
        self.forward_with(src, tgt, masks, None, None, false)
    }

    /// torch's `forward(src, tgt, ..., src_is_causal=None, tgt_is_causal=None,
    /// memory_is_causal=False)`: a `None` flag detects whether its mask is the causal mask; a
    /// `true` flag without its mask is torch's error (from the attention).
    pub fn forward_with(
        &self,
        src: &Tensor,
        tgt: &Tensor,
        masks: TransformerMasks<'_>,
        src_is_causal: Option<bool>,
        tgt_is_causal: Option<bool>,
        memory_is_causal: bool,
    ) -> Result<Tensor> {
        let batch_dim = if self.batch_first { 0 } else { 1 };
        if src.rank() == 3 && src.dims()[batch_dim] != tgt.dims().get(batch_dim).copied().unwrap_or(0) {
            return Err(Error::shape("the batch number of src and tgt must be equal"));
        }
        if src.dims().last() != Some(&self.d_model) || tgt.dims().last() != Some(&self.d_model) {
            return Err(Error::shape("the feature number of src and tgt must be equal to d_model"));
        }
        let memory =
            self.encoder.forward_with(src, masks.src_mask, masks.src_key_padding_mask, src_is_causal)?;
        self.decoder.forward_with(
            tgt,
            &memory,
            DecoderMasks {
                tgt_mask: masks.tgt_mask,
                memory_mask: masks.memory_mask,
                tgt_key_padding_mask: masks.tgt_key_padding_mask,
                memory_key_padding_mask: masks.memory_key_padding_mask,
            },
            tgt_is_causal,
            memory_is_causal,
        )
    }

    /// torch's `Transformer.generate_square_subsequent_mask(sz, device=None, dtype=None)`: the
    /// `[sz, sz]` causal mask, `-inf` above the diagonal and `0` on and below it, float32 unless
    /// `options` gives a dtype (an integer dtype is torch's overflow error).
    pub fn generate_square_subsequent_mask(sz: usize, options: impl Into<TensorOptions>) -> Result<Tensor> {
        let options: TensorOptions = options.into();
        let options = options.dtype(options.dtype_or(oxtorch_tensor::DType::default_float()));
        Tensor::full([sz, sz], f64::NEG_INFINITY, options)?.triu(1)
    }
}
