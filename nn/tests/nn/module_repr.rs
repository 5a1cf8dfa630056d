//! torch's `repr(module)` (`ModuleExt::repr`, `Display` for `dyn Module`) against the strings of
//! `module_repr_golden.rs` (written by `nn/tests/make_module_repr_golden.py` with torch), and torch's
//! `get_submodule` / `get_parameter` / `get_buffer` with their errors.

use oxtorch_nn::{
    BatchNorm, Conv1d, Conv2d, ConvOptions, ConvTranspose2d, ConvTransposeOptions, Dropout, Dropout2d,
    Embedding, Flatten, GroupNorm, Hardshrink, Hardtanh, Identity, Layer, LayerNorm, LeakyReLU, Linear,
    Module, ModuleExt, ModuleList, MultiheadAttention, MultiheadAttentionOptions, PReLU, RMSNorm, RReLU,
    ReLU, RnnOptions, Sequential, Softmax, Softplus, Threshold, TransformerEncoderLayer,
    TransformerLayerOptions, Unflatten, ELU, GELU, GRU, LSTM, RNN,
};
use oxtorch_tensor::{Padding, Result};

include!("module_repr_golden.rs");

/// The nested model of the generator (a `Vec` field is torch's `ModuleList`).
#[derive(Module)]
struct Net {
    features: Sequential,
    blocks: Vec<Linear>,
    rnn: LSTM,
    attn: MultiheadAttention,
    encoder: TransformerEncoderLayer,
}

fn net() -> Result<Net> {
    let conv = Conv2d::new(
        3,
        8,
        &[3, 3],
        ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() },
    )?;
    Ok(Net {
        features: Sequential::new().add(conv).add(BatchNorm::new_2d(8)?).add(ReLU {}),
        blocks: vec![
            Linear::new(4, 4, true)?,
            Linear::new(4, 4, true)?,
            Linear::new(4, 4, true)?,
            Linear::new(4, 2, false)?,
        ],
        rnn: lstm()?,
        attn: MultiheadAttention::new(16, 4, MultiheadAttentionOptions::default())?,
        encoder: TransformerEncoderLayer::new(
            16,
            4,
            TransformerLayerOptions { dim_feedforward: 32, ..Default::default() },
        )?,
    })
}

fn lstm() -> Result<LSTM> {
    LSTM::new(10, 20, RnnOptions { num_layers: 2, batch_first: true, ..Default::default() })
}

/// The module of each golden case, built as the generator builds it.
fn build(name: &str) -> Result<Box<dyn Module>> {
    Ok(match name {
        "linear" => Box::new(Linear::new(4, 3, true)?),
        "linear_nobias" => Box::new(Linear::new(4, 3, false)?),
        "sequential" => Box::new(Sequential::new().add(Linear::new(4, 3, true)?).add(ReLU {})),
        "conv2d" => Box::new(Conv2d::new(3, 8, &[3, 3], ConvOptions::default())?),
        "conv2d_full" => Box::new(Conv2d::new(
            4,
            8,
            &[3, 5],
            ConvOptions {
                stride: vec![2],
                padding: Padding::Explicit(vec![1, 2]),
                dilation: vec![2],
                groups: 2,
                bias: false,
                padding_mode: "reflect",
                ..Default::default()
            },
        )?),
        "conv1d_same" => {
            Box::new(Conv1d::new(2, 4, &[3], ConvOptions { padding: Padding::Same, ..Default::default() })?)
        }
        "conv_transpose2d" => Box::new(ConvTranspose2d::new(
            4,
            6,
            &[3, 3],
            ConvTransposeOptions {
                stride: vec![2],
                padding: vec![1],
                output_padding: vec![1],
                ..Default::default()
            },
        )?),
        "batchnorm2d" => Box::new(BatchNorm::new_2d(8)?),
        "batchnorm1d_none" => Box::new(BatchNorm::new_1d_with(5, 1e-3, None, false, true)?),
        "layernorm" => Box::new(LayerNorm::new(&[4], 1e-5, true, true)?),
        "layernorm2" => Box::new(LayerNorm::new(&[2, 3], 1e-6, false, true)?),
        "groupnorm" => Box::new(GroupNorm::new(2, 4, 1e-5, true)?),
        "rmsnorm" => Box::new(RMSNorm::new(&[4], None, true)?),
        "rmsnorm_eps" => Box::new(RMSNorm::new(&[4], Some(1e-6), true)?),
        "embedding" => Box::new(Embedding::new(10, 3, None)?),
        "embedding_pad" => {
            let mut e = Embedding::new(10, 3, Some(0))?;
            e.max_norm = Some(1.0);
            Box::new(e)
        }
        "dropout" => Box::new(Dropout::new(0.5)?),
        "dropout2d" => Box::new(Dropout2d::new(0.25)?),
        "relu" => Box::new(ReLU {}),
        "leaky_relu" => Box::new(LeakyReLU::default()),
        "elu" => Box::new(ELU { alpha: 1.0 }),
        "gelu" => Box::new(GELU::default()),
        "gelu_tanh" => Box::new(GELU { approximate: "tanh" }),
        "softmax" => Box::new(Softmax { dim: 1 }),
        "hardtanh" => Box::new(Hardtanh::default()),
        "softplus" => Box::new(Softplus::default()),
        "hardshrink" => Box::new(Hardshrink::default()),
        "rrelu" => Box::new(RReLU::default()),
        "threshold" => Box::new(Threshold { threshold: 0.1, value: 20.0 }),
        "prelu" => Box::new(PReLU::new(1, 0.25)?),
        "flatten" => Box::new(Flatten::default()),
        "unflatten" => Box::new(Unflatten { dim: 1, sizes: vec![2, 3] }),
        "identity" => Box::new(Identity),
        "lstm" => Box::new(lstm()?),
        "gru" => Box::new(GRU::new(
            8,
            16,
            RnnOptions { bidirectional: true, dropout: 0.5, num_layers: 2, ..Default::default() },
        )?),
        "rnn" => Box::new(RNN::new(4, 5, "tanh", RnnOptions { bias: false, ..Default::default() })?),
        "mha" => Box::new(MultiheadAttention::new(16, 4, MultiheadAttentionOptions::default())?),
        "modulelist_empty" => Box::new(ModuleList::<Box<dyn Layer>>::new(Vec::new())),
        "net" => Box::new(net()?),
        other => panic!("no module for golden case {other}"),
    })
}

#[test]
fn repr_matches_torch() -> Result<()> {
    for &(name, expected) in REPRS {
        let m = build(name)?;
        assert_eq!(m.repr(), expected, "repr of {name}");
        assert_eq!(format!("{}", &*m), expected, "Display of {name}");
    }
    Ok(())
}

#[test]
fn module_list_folds_only_equal_neighbours() -> Result<()> {
    let list = ModuleList::<Box<dyn Layer>>::new(vec![
        Box::new(ReLU {}),
        Box::new(Linear::new(2, 2, true)?),
        Box::new(ReLU {}),
        Box::new(ReLU {}),
    ]);
    assert_eq!(
        list.repr(),
        "ModuleList(\n  (0): ReLU()\n  (1): Linear(in_features=2, out_features=2, bias=True)\n  (2-3): 2 x ReLU()\n)"
    );
    Ok(())
}

/// The error message of a failed look-up.
fn err<T>(r: Result<T>) -> String {
    r.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn get_submodule_parameter_buffer() -> Result<()> {
    let m = net()?;
    assert_eq!(m.get_submodule("")?.type_name(), "Net");
    assert_eq!(m.get_submodule("features.1")?.type_name(), "BatchNorm2d");
    assert_eq!(m.get_submodule("blocks.3")?.repr(), "Linear(in_features=4, out_features=2, bias=False)");
    assert_eq!(m.get_submodule("encoder.self_attn.out_proj")?.type_name(), "Linear");
    let w = m.get_parameter("blocks.3.weight")?;
    assert!(w.is_same(&m.blocks[3].weight));
    assert_eq!(m.get_parameter("attn.in_proj_weight")?.dims(), &[48, 16]);
    assert_eq!(m.get_buffer("features.1.running_mean")?.dims(), &[8]);

    assert_eq!(err(m.get_submodule("features.foo")), "Sequential has no attribute `foo`");
    assert_eq!(err(m.get_submodule("blocks.0.weight")), "`weight` is not an nn.Module");
    assert_eq!(err(m.get_submodule("nothing.x")), "Net has no attribute `nothing`");
    assert_eq!(err(m.get_parameter("blocks.0.foo")), "Linear has no attribute `foo`");
    assert_eq!(err(m.get_parameter("features.1.running_var")), "`running_var` is not an nn.Parameter");
    assert_eq!(err(m.get_buffer("blocks.0.bias")), "`bias` is not a buffer");
    assert_eq!(err(m.get_buffer("attn.out_proj")), "`out_proj` is not a buffer");
    assert_eq!(err(m.get_parameter("blocks.9.weight")), "ModuleList has no attribute `9`");
    Ok(())
}
