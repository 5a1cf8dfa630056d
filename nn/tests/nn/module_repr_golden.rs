// Written by nn/tests/make_module_repr_golden.py from torch 2.15.0+cu132; do not edit.

/// `(case, torch's repr)`.
const REPRS: &[(&str, &str)] = &[
    ("linear", r#"Linear(in_features=4, out_features=3, bias=True)"#),
    ("linear_nobias", r#"Linear(in_features=4, out_features=3, bias=False)"#),
    ("sequential", r#"Sequential(
  (0): Linear(in_features=4, out_features=3, bias=True)
  (1): ReLU()
)"#),
    ("conv2d", r#"Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))"#),
    ("conv2d_full", r#"Conv2d(4, 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 2), dilation=(2, 2), groups=2, bias=False, padding_mode=reflect)"#),
    ("conv1d_same", r#"Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same)"#),
    ("conv_transpose2d", r#"ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))"#),
    ("batchnorm2d", r#"BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"#),
    ("batchnorm1d_none", r#"BatchNorm1d(5, eps=0.001, momentum=None, affine=False, bias=False, track_running_stats=True)"#),
    ("layernorm", r#"LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"#),
    ("layernorm2", r#"LayerNorm((2, 3), eps=1e-06, elementwise_affine=False, bias=False)"#),
    ("groupnorm", r#"GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"#),
    ("rmsnorm", r#"RMSNorm((4,), eps=None, elementwise_affine=True)"#),
    ("rmsnorm_eps", r#"RMSNorm((4,), eps=1e-06, elementwise_affine=True)"#),
    ("embedding", r#"Embedding(10, 3)"#),
    ("embedding_pad", r#"Embedding(10, 3, padding_idx=0, max_norm=1.0)"#),
    ("dropout", r#"Dropout(p=0.5, inplace=False)"#),
    ("dropout2d", r#"Dropout2d(p=0.25, inplace=False)"#),
    ("relu", r#"ReLU()"#),
    ("leaky_relu", r#"LeakyReLU(negative_slope=0.01)"#),
    ("elu", r#"ELU(alpha=1.0)"#),
    ("gelu", r#"GELU(approximate='none')"#),
    ("gelu_tanh", r#"GELU(approximate='tanh')"#),
    ("softmax", r#"Softmax(dim=1)"#),
    ("hardtanh", r#"Hardtanh(min_val=-1.0, max_val=1.0)"#),
    ("softplus", r#"Softplus(beta=1.0, threshold=20.0)"#),
    ("hardshrink", r#"Hardshrink(0.5)"#),
    ("rrelu", r#"RReLU(lower=0.125, upper=0.3333333333333333)"#),
    ("threshold", r#"Threshold(threshold=0.1, value=20.0)"#),
    ("prelu", r#"PReLU(num_parameters=1)"#),
    ("flatten", r#"Flatten(start_dim=1, end_dim=-1)"#),
    ("unflatten", r#"Unflatten(dim=1, unflattened_size=(2, 3))"#),
    ("identity", r#"Identity()"#),
    ("lstm", r#"LSTM(10, 20, num_layers=2, batch_first=True)"#),
    ("gru", r#"GRU(8, 16, num_layers=2, dropout=0.5, bidirectional=True)"#),
    ("rnn", r#"RNN(4, 5, bias=False)"#),
    ("mha", r#"MultiheadAttention(
  (out_proj): NonDynamicallyQuantizableLinear(in_features=16, out_features=16, bias=True)
)"#),
    ("modulelist_empty", r#"ModuleList()"#),
    ("net", r#"Net(
  (features): Sequential(
    (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    (2): ReLU()
  )
  (blocks): ModuleList(
    (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
    (3): Linear(in_features=4, out_features=2, bias=False)
  )
  (rnn): LSTM(10, 20, num_layers=2, batch_first=True)
  (attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=16, out_features=16, bias=True)
  )
  (encoder): TransformerEncoderLayer(
    (self_attn): MultiheadAttention(
      (out_proj): NonDynamicallyQuantizableLinear(in_features=16, out_features=16, bias=True)
    )
    (linear1): Linear(in_features=16, out_features=32, bias=True)
    (dropout): Dropout(p=0.1, inplace=False)
    (linear2): Linear(in_features=32, out_features=16, bias=True)
    (norm1): LayerNorm((16,), eps=1e-05, elementwise_affine=True, bias=True)
    (norm2): LayerNorm((16,), eps=1e-05, elementwise_affine=True, bias=True)
    (dropout1): Dropout(p=0.1, inplace=False)
    (dropout2): Dropout(p=0.1, inplace=False)
  )
)"#),
];
