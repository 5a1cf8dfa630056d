//! torch's `repr(module)` of the pools, paddings, upsampling layers, instance and local-response
//! norms, shuffles, `EmbeddingBag`, the RNN cells, `Fold`/`Unfold`, the lazy modules before
//! materialization and children-only modules, against the strings of `module_repr_extra_layers_golden.rs`
//! (written by `nn/tests/make_module_repr_extra_layers_golden.py` with torch).

use oxtorch_nn::{
    AdaptiveAvgPool2d, AdaptiveLogSoftmaxWithLoss, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d,
    AvgPool2d, AvgPool3d, Bilinear, ChannelShuffle, CircularPad2d, ConstantPad1d, ConstantPad2d, ConvOptions,
    ConvTransposeOptions, CosineSimilarity, EmbeddingBag, EmbeddingBagOptions, Fold, FractionalMaxPool2d,
    GRUCell, InstanceNorm, LPPool1d, LPPool2d, LSTMCell, LazyBatchNorm1d, LazyConv2d, LazyConvTranspose1d,
    LazyInstanceNorm2d, LazyLinear, LocalResponseNorm, LogSoftmax, MaxPool1d, MaxPool2d, MaxUnpool1d,
    MaxUnpool2d, MaxUnpool3d, Module, ModuleExt, PairwiseDistance, PixelShuffle, PixelUnshuffle, RNNCell,
    ReflectionPad2d, ReplicationPad1d, ReplicationPad3d, Softmax2d, Softmin, Softshrink, Tanhshrink,
    Threshold, TransformerDecoderLayer, TransformerLayerOptions, Unfold, Upsample, UpsamplingBilinear2d,
    UpsamplingNearest2d, ZeroPad1d, ZeroPad2d, ZeroPad3d, CELU, GLU,
};
use oxtorch_tensor::{Result, Tensor};

include!("module_repr_extra_layers_golden.rs");

/// The module of each golden case, built as the generator builds it.
fn build(name: &str) -> Result<Box<dyn Module>> {
    Ok(match name {
        "maxpool2d" => Box::new(MaxPool2d::new(&[2])),
        "maxpool2d_full" => Box::new(MaxPool2d {
            kernel_size: vec![2, 3],
            stride: Some(vec![1]),
            padding: vec![1],
            dilation: vec![2],
            ceil_mode: true,
        }),
        "maxpool1d" => Box::new(MaxPool1d::new(&[3])),
        "avgpool1d" => Box::new(AvgPool1d::new(&[3])),
        "avgpool2d" => Box::new(AvgPool2d::new(&[2])),
        "avgpool2d_full" => Box::new(AvgPool2d {
            kernel_size: vec![2, 3],
            stride: Some(vec![1, 2]),
            padding: vec![1],
            ceil_mode: true,
            count_include_pad: false,
            divisor_override: None,
        }),
        "avgpool3d" => Box::new(AvgPool3d::new(&[2])),
        "adaptive_avg2d" => Box::new(AdaptiveAvgPool2d::new(&[7])),
        "adaptive_avg2d_none" => Box::new(AdaptiveAvgPool2d::new_optional(&[None, Some(7)])),
        "adaptive_max1d" => Box::new(AdaptiveMaxPool1d::new(&[4])),
        "adaptive_max2d" => Box::new(AdaptiveMaxPool2d::new(&[3, 4])),
        "lppool1d" => Box::new(LPPool1d::new(2.0, &[3])),
        "lppool2d" => Box::new(LPPool2d::with_options(1.5, &[2, 3], Some(&[1][..]), true)),
        "fractional2d" => Box::new(FractionalMaxPool2d::new(&[3], Some(&[5][..]), None)?),
        "maxunpool1d" => Box::new(MaxUnpool1d::new(&[2])),
        "maxunpool2d" => {
            Box::new(MaxUnpool2d { kernel_size: vec![2, 3], stride: Some(vec![1]), padding: vec![1] })
        }
        "maxunpool3d" => Box::new(MaxUnpool3d::new(&[2])),
        "zeropad1d" => Box::new(ZeroPad1d::new(&[2])),
        "zeropad2d" => Box::new(ZeroPad2d::new(&[1, 2, 3, 4])),
        "zeropad3d" => Box::new(ZeroPad3d::new(&[1])),
        "constpad1d" => Box::new(ConstantPad1d::new(&[2], 3.5)),
        "constpad2d" => Box::new(ConstantPad2d::new(&[1, 2, 3, 4], 0.0)),
        "reflpad2d" => Box::new(ReflectionPad2d::new(&[1, 1, 2, 0])),
        "replpad1d" => Box::new(ReplicationPad1d::new(&[1, 2])),
        "replpad3d" => Box::new(ReplicationPad3d::new(&[1])),
        "circpad2d" => Box::new(CircularPad2d::new(&[1])),
        "upsample_scale" => Box::new(Upsample::with_scale_factor(&[2.0], "nearest", None)),
        "upsample_size" => Box::new(Upsample::with_size(&[4, 5], "bilinear", None)),
        "upsample_scales" => Box::new(Upsample::with_scale_factor(&[2.0, 1.5], "bicubic", Some(true))),
        "upsample_size1" => Box::new(Upsample::with_size(&[4], "nearest", None)),
        "upsampling_nearest" => Box::new(UpsamplingNearest2d::with_scale_factor(&[2.0])),
        "upsampling_bilinear" => Box::new(UpsamplingBilinear2d::with_size(&[3, 4])),
        "instancenorm1d" => Box::new(InstanceNorm::new(1, 4, 1e-5, Some(0.1), false, false)?),
        "instancenorm2d" => Box::new(InstanceNorm::new(2, 4, 1e-5, Some(0.1), true, true)?),
        "instancenorm3d" => Box::new(InstanceNorm::new(3, 3, 1e-3, None, false, false)?),
        "lrn" => Box::new(LocalResponseNorm::new(2)),
        "lrn_full" => Box::new(LocalResponseNorm { size: 3, alpha: 1e-3, beta: 0.5, k: 2.0 }),
        "bilinear" => Box::new(Bilinear::new(2, 3, 4, true)?),
        "bilinear_nobias" => Box::new(Bilinear::new(2, 3, 4, false)?),
        "pixel_shuffle" => Box::new(PixelShuffle::new(2)),
        "pixel_unshuffle" => Box::new(PixelUnshuffle::new(3)),
        "channel_shuffle" => Box::new(ChannelShuffle::new(2)),
        "embedding_bag" => Box::new(EmbeddingBag::new(10, 3, EmbeddingBagOptions::default())?),
        "embedding_bag_full" => Box::new(EmbeddingBag::new(
            10,
            3,
            EmbeddingBagOptions {
                mode: "sum",
                padding_idx: Some(0),
                max_norm: Some(1.0),
                norm_type: 1.0,
                scale_grad_by_freq: true,
                ..Default::default()
            },
        )?),
        "rnn_cell" => Box::new(RNNCell::new(3, 4, true, "tanh")?),
        "rnn_cell_relu" => Box::new(RNNCell::new(3, 4, false, "relu")?),
        "lstm_cell" => Box::new(LSTMCell::new(3, 4, true)?),
        "gru_cell" => Box::new(GRUCell::new(3, 4, false)?),
        "fold" => Box::new(Fold::new(&[4, 5], &[2])),
        "fold_full" => Box::new(Fold {
            output_size: vec![4],
            kernel_size: vec![2, 2],
            dilation: vec![2],
            padding: vec![1],
            stride: vec![1, 2],
        }),
        "unfold" => Box::new(Unfold::new(&[2])),
        "unfold_full" => Box::new(Unfold {
            kernel_size: vec![2, 3],
            dilation: vec![1],
            padding: vec![1, 0],
            stride: vec![2],
        }),
        "cosine_similarity" => Box::new(CosineSimilarity::default()),
        "pairwise_distance" => Box::new(PairwiseDistance::default()),
        "softmax2d" => Box::new(Softmax2d),
        "threshold" => Box::new(Threshold { threshold: 0.5, value: 1.0 }),
        "softshrink" => Box::new(Softshrink { lambd: 0.5 }),
        "tanhshrink" => Box::new(Tanhshrink {}),
        "celu" => Box::new(CELU { alpha: 1.0 }),
        "glu" => Box::new(GLU { dim: -1 }),
        "softmin" => Box::new(Softmin { dim: 0 }),
        "log_softmax" => Box::new(LogSoftmax { dim: 1 }),
        "lazy_linear" => Box::new(LazyLinear::new(3, true)?),
        "lazy_conv2d" => Box::new(LazyConv2d::new(4, &[3], ConvOptions::default())?),
        "lazy_conv_transpose1d" => Box::new(LazyConvTranspose1d::new(
            4,
            &[3],
            ConvTransposeOptions { stride: vec![2], bias: false, ..Default::default() },
        )?),
        "lazy_batchnorm1d" => Box::new(LazyBatchNorm1d::new()?),
        "lazy_instancenorm2d" => Box::new(LazyInstanceNorm2d::new()?),
        "adaptive_log_softmax" => Box::new(AdaptiveLogSoftmaxWithLoss::new(16, 10, &[4, 8], 2.0, false)?),
        "transformer_decoder_layer" => Box::new(TransformerDecoderLayer::new(
            8,
            2,
            TransformerLayerOptions { dim_feedforward: 16, ..Default::default() },
        )?),
        other => panic!("no module for golden case {other}"),
    })
}

#[test]
fn repr_matches_torch_b() -> Result<()> {
    for &(name, expected) in REPRS_B {
        let m = build(name)?;
        assert_eq!(m.repr(), expected, "repr of {name}");
        assert_eq!(format!("{}", &*m), expected, "Display of {name}");
    }
    Ok(())
}

/// A lazy module prints the materialized module's settings after its first forward (torch's
/// `LazyLinear` becomes `Linear(in_features=5, ...)`).
#[test]
fn lazy_repr_after_materialization() -> Result<()> {
    let lazy = LazyLinear::new(3, true)?;
    assert_eq!(lazy.repr(), "LazyLinear(in_features=0, out_features=3, bias=True)");
    oxtorch_nn::Forward::forward(&lazy, &Tensor::ones([2, 5], ())?)?;
    assert_eq!(lazy.repr(), "Linear(in_features=5, out_features=3, bias=True)");
    Ok(())
}
