//! torch 2.15's `is_causal` hints of `MultiheadAttention`, `TransformerEncoderLayer`,
//! `TransformerEncoder`, `TransformerDecoderLayer`, `TransformerDecoder` and `Transformer`, and the
//! keyword `bias=False` of `GroupNorm`, `InstanceNorm1d/2d/3d` (and `LayerNorm`), against PyTorch in
//! float64: for every case of `causal_hints_and_norm_bias_golden.rs` (written by `nn/tests/make_causal_hints_and_norm_bias_golden.py`) the
//! module's state-dict keys must be torch's, in torch's order (no `bias` key without a bias),
//! torch's values are loaded by key (strict), and the outputs and the gradients of
//! `sum_k (out_k * cot_k).sum()` for the inputs and every parameter are compared. A causal hint
//! with a mask that is not causal shows torch's rule (the mask dropped for the causal attention
//! when there is no padding and no weights); a hint without its mask is torch's error.

use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{err, float64, module, Inputs, ModuleGolden as Golden, Run, T};

include!("causal_hints_and_norm_bias_golden.rs");

const D: usize = 8;
const H: usize = 2;
const FF: usize = 16;

/// torch's error message for the case `case`.
fn torch_error(case: &str) -> &'static str {
    ERRORS.iter().find(|(k, _)| *k == case).map(|(_, v)| *v).unwrap_or_else(|| panic!("no case {case}"))
}

/// `MultiheadAttention(8, 2, dropout=0)`.
fn mha(batch_first: bool) -> Result<MultiheadAttention> {
    MultiheadAttention::new(D, H, MultiheadAttentionOptions { batch_first, ..Default::default() })
}

/// The layer options of the golden cases: feed-forward 16, no dropout.
fn layer_options(norm_first: bool, batch_first: bool) -> TransformerLayerOptions {
    TransformerLayerOptions {
        dim_feedforward: FF,
        dropout: 0.0,
        norm_first,
        batch_first,
        ..Default::default()
    }
}

fn enc_layer(norm_first: bool, batch_first: bool) -> Result<TransformerEncoderLayer> {
    TransformerEncoderLayer::new(D, H, layer_options(norm_first, batch_first))
}

fn dec_layer(norm_first: bool, batch_first: bool) -> Result<TransformerDecoderLayer> {
    TransformerDecoderLayer::new(D, H, layer_options(norm_first, batch_first))
}

/// Two sequence-first encoder layers and a final `LayerNorm(8)`.
fn encoder(norm_first: bool) -> Result<TransformerEncoder> {
    TransformerEncoder::new(2, || enc_layer(norm_first, false), Some(LayerNorm::new(&[D], 1e-5, true, true)?))
}

/// Two sequence-first decoder layers and a final `LayerNorm(8)`.
fn decoder(norm_first: bool) -> Result<TransformerDecoder> {
    TransformerDecoder::new(2, || dec_layer(norm_first, false), Some(LayerNorm::new(&[D], 1e-5, true, true)?))
}

/// A one-layer encoder-decoder `Transformer` without dropout.
fn transformer(norm_first: bool, batch_first: bool) -> Result<Transformer> {
    Transformer::new(TransformerOptions {
        d_model: D,
        nhead: H,
        num_encoder_layers: 1,
        num_decoder_layers: 1,
        dim_feedforward: FF,
        dropout: 0.0,
        norm_first,
        batch_first,
        ..Default::default()
    })
}

/// A single-input layer applied to the input `input`.
fn layer<M: Module + Forward>(g: &Golden, c: &Inputs, m: M) -> Result<Run> {
    module(g, m, |m| Ok(vec![m.forward(c.t("input"))?]))
}

/// The mask input `name` (`name_fmask` float or `name_bmask` boolean), if the case has one.
fn mask<'a>(c: &'a Inputs, name: &str) -> Option<&'a Tensor> {
    c.get(&format!("{name}_fmask")).or_else(|| c.get(&format!("{name}_bmask")))
}

/// The module and call of each case (the same arguments as the script's).
fn run(g: &Golden, c: &Inputs) -> Result<Run> {
    let name = g.name;
    let t = |k: &str| c.t(k);
    let decoder_masks =
        || DecoderMasks { tgt_mask: mask(c, "tgt"), memory_mask: mask(c, "memory"), ..Default::default() };
    if name.starts_with("mha_") {
        // (batch_first, need_weights, average_attn_weights)
        let (bf, need_weights, average) = match name {
            "mha_causal_seq_first_weights" | "mha_causal_hint_weights_use_mask" => (false, true, true),
            "mha_causal_seq_first_no_weights"
            | "mha_causal_hint_drops_other_mask"
            | "mha_causal_unbatched" => (false, false, true),
            "mha_causal_batch_first_bool_no_weights" | "mha_causal_hint_padding_uses_mask" => {
                (true, false, true)
            }
            "mha_causal_batch_first_weights_per_head" => (true, true, false),
            other => panic!("unknown case {other}"),
        };
        let args = MultiheadAttentionArgs {
            key_padding_mask: c.get("kpm_bmask"),
            need_weights,
            attn_mask: mask(c, "attn"),
            average_attn_weights: average,
            is_causal: true,
        };
        return module(g, mha(bf)?, |m| {
            let x = t("x");
            let (out, w) = m.forward_with(x, x, x, args)?;
            assert_eq!(w.is_some(), need_weights, "{name}: weights");
            Ok([Some(out), w].into_iter().flatten().collect())
        });
    }
    // The layer cases' norm placement; their pre-norm ones are also batch-first.
    let nf = name.contains("pre_norm");
    if name.starts_with("encoder_layer_") {
        return module(g, enc_layer(nf, nf)?, |m| {
            Ok(vec![m.forward_with(t("src"), mask(c, "src"), None, true)?])
        });
    }
    if name.starts_with("decoder_layer_tgt_causal") {
        return module(g, dec_layer(nf, nf)?, |m| {
            Ok(vec![m.forward_with(t("tgt"), t("memory"), decoder_masks(), true, false)?])
        });
    }
    if name.starts_with("decoder_layer_memory_causal") {
        return module(g, dec_layer(nf, nf)?, |m| {
            Ok(vec![m.forward_with(t("tgt"), t("memory"), decoder_masks(), true, true)?])
        });
    }
    match name {
        "encoder_detects_causal_mask" => {
            module(g, encoder(false)?, |m| Ok(vec![m.forward_with(t("src"), mask(c, "src"), None, None)?]))
        }
        "encoder_other_mask_not_causal" => {
            module(g, encoder(true)?, |m| Ok(vec![m.forward_with(t("src"), mask(c, "src"), None, None)?]))
        }
        "encoder_causal_hint_other_mask" => module(g, encoder(true)?, |m| {
            Ok(vec![m.forward_with(t("src"), mask(c, "src"), None, Some(true))?])
        }),
        "decoder_detects_causal_mask" => module(g, decoder(false)?, |m| {
            Ok(vec![m.forward_with(t("tgt"), t("memory"), decoder_masks(), None, false)?])
        }),
        "decoder_causal_hints_other_masks" => module(g, decoder(true)?, |m| {
            Ok(vec![m.forward_with(t("tgt"), t("memory"), decoder_masks(), Some(true), true)?])
        }),
        "transformer_causal_flags_post_norm" => module(g, transformer(false, false)?, |m| {
            let masks =
                TransformerMasks { src_mask: mask(c, "src"), tgt_mask: mask(c, "tgt"), ..Default::default() };
            Ok(vec![m.forward_with(t("src"), t("tgt"), masks, Some(true), None, false)?])
        }),
        "transformer_causal_flags_pre_norm_batch_first" => module(g, transformer(true, true)?, |m| {
            let masks = TransformerMasks {
                tgt_mask: mask(c, "tgt"),
                memory_mask: mask(c, "memory"),
                ..Default::default()
            };
            Ok(vec![m.forward_with(t("src"), t("tgt"), masks, None, None, true)?])
        }),
        "groupnorm_no_bias" => layer(g, c, GroupNorm::new_with_bias(2, 4, 1e-5, true, false)?),
        "groupnorm_no_bias_eps" => layer(g, c, GroupNorm::new_with_bias(1, 3, 1e-3, true, false)?),
        "instancenorm1d_no_bias" => {
            layer(g, c, InstanceNorm::new_with_bias(1, 3, 1e-5, Some(0.1), true, false, false)?)
        }
        "instancenorm2d_no_bias_tracked" => {
            layer(g, c, InstanceNorm::new_with_bias(2, 2, 1e-5, Some(0.1), true, true, false)?)
        }
        "instancenorm3d_no_bias_unbatched" => {
            layer(g, c, InstanceNorm::new_with_bias(3, 2, 1e-5, Some(0.1), true, false, false)?)
        }
        "layernorm_no_bias" => layer(g, c, LayerNorm::new(&[3, 4], 1e-5, true, false)?),
        other => panic!("unknown case {other}"),
    }
}

#[test]
fn every_case_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 29, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = Inputs(
            g.inputs
                .iter()
                .map(|(k, v)| {
                    let t = float64(v);
                    let t = if k.ends_with("_bmask") {
                        t.to_dtype(DType::Bool).unwrap()
                    } else if k.ends_with("_fmask") {
                        t
                    } else {
                        t.requires_grad_(g.input_grads.iter().any(|(n, _)| n == k)).unwrap()
                    };
                    (*k, t)
                })
                .collect(),
        );
        let outs_and_params = run(g, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        g.check(&inputs, outs_and_params, 1e-9)?;
    }
    Ok(())
}

#[test]
fn causal_hints_without_their_masks_are_torch_s_error() -> Result<()> {
    let x = Tensor::randn([4, 2, D], DType::F32)?;
    let causal = MultiheadAttentionArgs { is_causal: true, ..Default::default() };
    let m = mha(false)?;
    let no_weights = MultiheadAttentionArgs { need_weights: false, ..causal };
    assert_eq!(err(m.forward_with(&x, &x, &x, no_weights)), torch_error("mha_is_causal_without_mask"));
    assert_eq!(
        err(m.forward_with(&x, &x, &x, causal)),
        torch_error("mha_is_causal_with_weights_without_mask")
    );
    assert_eq!(
        err(enc_layer(false, false)?.forward_with(&x, None, None, true)),
        torch_error("encoder_layer_is_causal_without_mask")
    );
    assert_eq!(
        err(encoder(false)?.forward_with(&x, None, None, Some(true))),
        torch_error("encoder_is_causal_without_mask")
    );
    assert_eq!(
        err(dec_layer(false, false)?.forward_with(&x, &x, DecoderMasks::default(), false, true)),
        torch_error("decoder_layer_memory_is_causal_without_mask")
    );
    assert_eq!(
        err(decoder(false)?.forward_with(&x, &x, DecoderMasks::default(), Some(true), false)),
        torch_error("decoder_tgt_is_causal_without_mask")
    );
    assert_eq!(
        err(transformer(false, false)?.forward_with(
            &x,
            &x,
            TransformerMasks::default(),
            Some(true),
            None,
            false
        )),
        torch_error("transformer_src_is_causal_without_mask")
    );
    // No hint: the same calls run.
    assert_eq!(encoder(false)?.forward_with(&x, None, None, None)?.dims(), &[4, 2, D]);
    assert_eq!(m.forward_with(&x, &x, &x, MultiheadAttentionArgs::default())?.0.dims(), &[4, 2, D]);
    Ok(())
}

#[test]
fn norms_without_bias_have_no_bias_parameter() -> Result<()> {
    let keys = |sd: StateDict| sd.keys().map(str::to_string).collect::<Vec<_>>();
    let g = GroupNorm::new_with_bias(2, 4, 1e-5, true, false)?;
    assert!(g.bias.is_none() && g.weight.is_some());
    assert_eq!(keys(g.state_dict()), ["weight"]);
    assert!(g.extra_repr().ends_with("affine=True, bias=False"), "{}", g.extra_repr());
    assert!(GroupNorm::new(2, 4, 1e-5, true)?.bias.is_some());
    let i = InstanceNorm::new_with_bias(2, 3, 1e-5, Some(0.1), true, true, false)?;
    let want = ["weight", "running_mean", "running_var", "num_batches_tracked"];
    assert_eq!(keys(i.state_dict()), want);
    assert!(i.extra_repr().contains("affine=True, bias=False"), "{}", i.extra_repr());
    assert!(InstanceNorm::new(1, 3, 1e-5, Some(0.1), true, false)?.bias.is_some());
    // bias=False without affine: no parameters at all, as torch's.
    assert_eq!(
        InstanceNorm::new_with_bias(1, 3, 1e-5, Some(0.1), false, false, false)?.parameters().len(),
        0
    );
    let l = LayerNorm::new(&[4], 1e-5, true, false)?;
    assert_eq!(keys(l.state_dict()), ["weight"]);
    Ok(())
}
