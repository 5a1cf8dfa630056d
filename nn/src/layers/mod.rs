//! Layers with torch's names, constructor defaults, initialisation and state-dict keys.

mod activation;
mod attention;
mod bilinear;
mod container;
mod conv;
mod conv_transpose;
mod dict;
mod dropout;
mod embedding;
mod fold;
mod instance_norm;
mod linear;
mod norm;
mod pool;
mod rnn;
mod transformer;
mod upsample;

pub use activation::*;
pub use attention::{MultiheadAttention, MultiheadAttentionOptions};
pub use bilinear::Bilinear;
pub use container::Sequential;
pub use conv::{Conv1d, Conv2d, Conv3d, ConvOptions};
pub use conv_transpose::{
    ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, ConvTransposeNd, ConvTransposeOptions,
};
pub use dict::{ModuleDict, ModuleList};
pub use dropout::{Dropout, Dropout1d, Dropout2d, Dropout3d};
pub use embedding::Embedding;
pub use fold::{Fold, Unfold};
pub use instance_norm::{InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm};
pub use linear::{Flatten, Identity, Linear, Unflatten};
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm, RMSNorm};
pub use pool::{
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPoolNd, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
    AdaptiveMaxPoolNd, AvgPool1d, AvgPool2d, AvgPoolNd, MaxPool1d, MaxPool2d, MaxPoolNd,
};
pub use rnn::{RnnOptions, RnnWeights, GRU, LSTM, RNN};
pub use transformer::{
    ActivationFn, DecoderMasks, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer, TransformerLayerOptions,
};
pub use upsample::Upsample;
