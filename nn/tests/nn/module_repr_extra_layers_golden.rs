// Written by nn/tests/make_module_repr_extra_layers_golden.py from torch 2.15.0+cu132; do not edit.

/// `(case, torch's repr)`.
const REPRS_B: &[(&str, &str)] = &[
    ("maxpool2d", r#"MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"#),
    ("maxpool2d_full", r#"MaxPool2d(kernel_size=(2, 3), stride=1, padding=1, dilation=2, ceil_mode=True)"#),
    ("maxpool1d", r#"MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"#),
    ("avgpool1d", r#"AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"#),
    ("avgpool2d", r#"AvgPool2d(kernel_size=2, stride=2, padding=0)"#),
    ("avgpool2d_full", r#"AvgPool2d(kernel_size=(2, 3), stride=(1, 2), padding=1)"#),
    ("avgpool3d", r#"AvgPool3d(kernel_size=2, stride=2, padding=0)"#),
    ("adaptive_avg2d", r#"AdaptiveAvgPool2d(output_size=7)"#),
    ("adaptive_avg2d_none", r#"AdaptiveAvgPool2d(output_size=(None, 7))"#),
    ("adaptive_max1d", r#"AdaptiveMaxPool1d(output_size=4)"#),
    ("adaptive_max2d", r#"AdaptiveMaxPool2d(output_size=(3, 4))"#),
    ("lppool1d", r#"LPPool1d(norm_type=2.0, kernel_size=3, stride=None, ceil_mode=False)"#),
    ("lppool2d", r#"LPPool2d(norm_type=1.5, kernel_size=(2, 3), stride=1, ceil_mode=True)"#),
    ("fractional2d", r#"FractionalMaxPool2d()"#),
    ("maxunpool1d", r#"MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"#),
    ("maxunpool2d", r#"MaxUnpool2d(kernel_size=(2, 3), stride=(1, 1), padding=(1, 1))"#),
    ("maxunpool3d", r#"MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"#),
    ("zeropad1d", r#"ZeroPad1d((2, 2))"#),
    ("zeropad2d", r#"ZeroPad2d((1, 2, 3, 4))"#),
    ("zeropad3d", r#"ZeroPad3d((1, 1, 1, 1, 1, 1))"#),
    ("constpad1d", r#"ConstantPad1d(padding=(2, 2), value=3.5)"#),
    ("constpad2d", r#"ConstantPad2d(padding=(1, 2, 3, 4), value=0.0)"#),
    ("reflpad2d", r#"ReflectionPad2d((1, 1, 2, 0))"#),
    ("replpad1d", r#"ReplicationPad1d((1, 2))"#),
    ("replpad3d", r#"ReplicationPad3d((1, 1, 1, 1, 1, 1))"#),
    ("circpad2d", r#"CircularPad2d((1, 1, 1, 1))"#),
    ("upsample_scale", r#"Upsample(scale_factor=2.0, mode='nearest')"#),
    ("upsample_size", r#"Upsample(size=(4, 5), mode='bilinear')"#),
    ("upsample_scales", r#"Upsample(scale_factor=(2.0, 1.5), mode='bicubic')"#),
    ("upsample_size1", r#"Upsample(size=4, mode='nearest')"#),
    ("upsampling_nearest", r#"UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"#),
    ("upsampling_bilinear", r#"UpsamplingBilinear2d(size=(3, 4), mode='bilinear')"#),
    ("instancenorm1d", r#"InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"#),
    ("instancenorm2d", r#"InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"#),
    ("instancenorm3d", r#"InstanceNorm3d(3, eps=0.001, momentum=None, affine=False, bias=False, track_running_stats=False)"#),
    ("lrn", r#"LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"#),
    ("lrn_full", r#"LocalResponseNorm(3, alpha=0.001, beta=0.5, k=2.0)"#),
    ("bilinear", r#"Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"#),
    ("bilinear_nobias", r#"Bilinear(in1_features=2, in2_features=3, out_features=4, bias=False)"#),
    ("pixel_shuffle", r#"PixelShuffle(upscale_factor=2)"#),
    ("pixel_unshuffle", r#"PixelUnshuffle(downscale_factor=3)"#),
    ("channel_shuffle", r#"ChannelShuffle(groups=2)"#),
    ("embedding_bag", r#"EmbeddingBag(10, 3, mode='mean')"#),
    ("embedding_bag_full", r#"EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, mode='sum', padding_idx=0)"#),
    ("rnn_cell", r#"RNNCell(3, 4)"#),
    ("rnn_cell_relu", r#"RNNCell(3, 4, bias=False, nonlinearity=relu)"#),
    ("lstm_cell", r#"LSTMCell(3, 4)"#),
    ("gru_cell", r#"GRUCell(3, 4, bias=False)"#),
    ("fold", r#"Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)"#),
    ("fold_full", r#"Fold(output_size=4, kernel_size=(2, 2), dilation=2, padding=1, stride=(1, 2))"#),
    ("unfold", r#"Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"#),
    ("unfold_full", r#"Unfold(kernel_size=(2, 3), dilation=1, padding=(1, 0), stride=2)"#),
    ("cosine_similarity", r#"CosineSimilarity()"#),
    ("pairwise_distance", r#"PairwiseDistance()"#),
    ("softmax2d", r#"Softmax2d()"#),
    ("threshold", r#"Threshold(threshold=0.5, value=1.0)"#),
    ("softshrink", r#"Softshrink(0.5)"#),
    ("tanhshrink", r#"Tanhshrink()"#),
    ("celu", r#"CELU(alpha=1.0)"#),
    ("glu", r#"GLU(dim=-1)"#),
    ("softmin", r#"Softmin(dim=0)"#),
    ("log_softmax", r#"LogSoftmax(dim=1)"#),
    ("lazy_linear", r#"LazyLinear(in_features=0, out_features=3, bias=True)"#),
    ("lazy_conv2d", r#"LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))"#),
    ("lazy_conv_transpose1d", r#"LazyConvTranspose1d(0, 4, kernel_size=(3,), stride=(2,), bias=False)"#),
    ("lazy_batchnorm1d", r#"LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"#),
    ("lazy_instancenorm2d", r#"LazyInstanceNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"#),
    ("adaptive_log_softmax", r#"AdaptiveLogSoftmaxWithLoss(
  (head): Linear(in_features=16, out_features=6, bias=False)
  (tail): ModuleList(
    (0): Sequential(
      (0): Linear(in_features=16, out_features=8, bias=False)
      (1): Linear(in_features=8, out_features=4, bias=False)
    )
    (1): Sequential(
      (0): Linear(in_features=16, out_features=4, bias=False)
      (1): Linear(in_features=4, out_features=2, bias=False)
    )
  )
)"#),
    ("transformer_decoder_layer", r#"TransformerDecoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
  )
  (multihead_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
  )
  (linear1): Linear(in_features=8, out_features=16, bias=True)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=16, out_features=8, bias=True)
  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm3): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
  (dropout3): Dropout(p=0.1, inplace=False)
)"#),
];
