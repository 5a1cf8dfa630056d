//! Layers with torch's names, constructor defaults, initialisation and state-dict keys.

mod activation;
mod adaptive_softmax;
mod attention;
mod bilinear;
mod container;
mod conv;
mod conv_transpose;
mod dict;
mod dropout;
mod embedding;
mod embedding_bag;
mod fold;
mod fractional_max_pool;
mod instance_norm;
mod lazy;
mod linear;
mod lp_pool;
mod norm;
mod padding;
mod pool;
mod rnn;
pub(crate) mod rnn_cell;
mod shuffle;
mod transformer;
mod transformer_full;
mod unpool;
mod upsample;
mod upsampling_aliases;

pub use activation::*;
pub use adaptive_softmax::AdaptiveLogSoftmaxWithLoss;
pub use attention::{MultiheadAttention, MultiheadAttentionArgs, MultiheadAttentionOptions};
pub use bilinear::Bilinear;
pub use container::Sequential;
pub use conv::ConvNd;
pub use conv::{Conv1d, Conv2d, Conv3d, ConvOptions};
pub use conv_transpose::{
    ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, ConvTransposeNd, ConvTransposeOptions,
};
pub use dict::{ModuleDict, ModuleList, ParameterDict, ParameterList};
pub use dropout::{AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout};
pub use embedding::Embedding;
pub use embedding_bag::{EmbeddingBag, EmbeddingBagOptions};
pub use fold::{Fold, Unfold};
pub use fractional_max_pool::{FractionalMaxPool2d, FractionalMaxPool3d, FractionalMaxPoolNd};
pub use instance_norm::{InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm};
pub use lazy::{
    materialize_from_state_dict, Lazy, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyBatchNormSpec,
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvSpec, LazyConvTranspose1d, LazyConvTranspose2d,
    LazyConvTranspose3d, LazyConvTransposeSpec, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
    LazyInstanceNormSpec, LazyLinear, LazyLinearSpec, LazyRole, LazySpec,
};
pub use linear::{Flatten, Identity, Linear, Unflatten};
pub use lp_pool::{LPPool1d, LPPool2d, LPPool3d, LPPoolNd};
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm, RMSNorm};
pub use padding::{
    CircularPad1d, CircularPad2d, CircularPad3d, CircularPadNd, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    ConstantPadNd, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReflectionPadNd, ReplicationPad1d,
    ReplicationPad2d, ReplicationPad3d, ReplicationPadNd, ZeroPad1d, ZeroPad2d, ZeroPad3d, ZeroPadNd,
};
pub use pool::{
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveAvgPoolNd, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, AdaptiveMaxPoolNd, AvgPool1d, AvgPool2d, AvgPool3d, AvgPoolNd,
    MaxPool1d, MaxPool2d, MaxPool3d, MaxPoolNd,
};
pub use rnn::{RnnOptions, RnnWeights, GRU, LSTM, RNN};
pub use rnn_cell::{GRUCell, LSTMCell, RNNCell};
pub use shuffle::{ChannelShuffle, PixelShuffle, PixelUnshuffle};
pub use transformer::{
    ActivationFn, DecoderMasks, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer, TransformerLayerOptions,
};
pub use transformer_full::{Transformer, TransformerMasks, TransformerOptions};
pub use unpool::{MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, MaxUnpoolNd};
pub use upsample::Upsample;
pub use upsampling_aliases::{Softmax2d, UpsamplingBilinear2d, UpsamplingNearest2d};
