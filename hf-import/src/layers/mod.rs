//! Building blocks shared by the families: linear layers, norms, activations, rotary embeddings,
//! attention masks and self-attention with grouped KV heads, a preallocated KV cache, gated MLPs,
//! MPNet's relative-position bias, the pre-norm blocks of vision and CLIP towers.

mod activation;
mod arena;
mod attention;
mod causal_conv;
mod conv2d;
mod cross_attention;
mod encoder;
mod gated_delta;
mod kv_cache;
mod latent_attention;
mod linear;
mod mamba;
mod mamba2;
mod mask;
mod mlp;
mod moe;
mod norm;
mod packed_rows;
mod pre_norm;
mod quant;
mod relative_bias;
mod rotary;
mod selective_scan;
mod seq2seq_cache;
mod short_conv;

pub use activation::Activation;
pub use arena::{packing_enabled, Arena};
pub use attention::{eager_attention, AttentionConfig, Differential, OutputGate, SelfAttention};
pub use causal_conv::{masked, CausalConv};
pub use conv2d::Conv2d;
pub(crate) use cross_attention::CrossAttentionPass;
pub use cross_attention::{CrossAttentionDims, CrossAttentionLayer, CrossAttentionStates};
pub use encoder::EncoderLayer;
pub use gated_delta::{DeltaNetDims, GatedDeltaNet};
pub use kv_cache::{bucket, fixed_shapes, KvCache, LayerCache};
pub use latent_attention::{LatentDims, LatentQkv};
pub use linear::{Embedding, Linear};
pub use mamba::{MambaDims, MambaMixer, StepNorms};
pub use mamba2::{GatedNorm, Mamba2Dims, Mamba2Mixer, SsmState};
pub(crate) use mask::lowest;
pub use mask::{
    bidirectional_mask, block_causal_mask, block_diagonal_mask, causal_mask, chunked_causal_mask,
    packed_row_mask, padding_mask, pair_padding_mask,
};
pub use mlp::{normal_quantile, GatedMlp, Glu, Xielu};
pub use moe::{FeedForward, Routing, Scoring, SparseMoe};
pub use norm::{rms_normalized, BatchNorm2d, DecoderNorm, LayerNorm, RmsNorm, RmsNormStyle};
pub use packed_rows::{attend_rows, PackedRows};
pub use pre_norm::PreNormEncoderLayer;
pub use quant::fake_quant_int8;
pub use relative_bias::{bucket as relative_bucket, t5_bucket, RelativeBias};
pub use rotary::{apply_rotary, halves_from_interleaved, MultimodalRope, Rotary};
pub use selective_scan::{selective_scan, ScanInputs};
pub use seq2seq_cache::{EncoderDecoderCache, Step as DecoderStep};
pub use short_conv::ShortConv;
