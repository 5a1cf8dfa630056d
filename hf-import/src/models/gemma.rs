//! Gemma, Gemma 2 and Gemma 3 (text): `(1 + w)` RMS norms in float32, embeddings scaled by
//! `sqrt(hidden)` in the model dtype, GELU-tanh MLP, tied embeddings. Gemma 2 adds norms after
//! attention and around the MLP, `query_pre_attn_scalar`, attention and final logit soft-capping and
//! alternating sliding/global layers; Gemma 3 adds per-head q/k norms and its own RoPE base for the
//! sliding layers. VaultGemma is Gemma 2 without the norms closing each branch.

use super::decoder::{CausalLm, DecoderSpec};
use super::family::{causal_lm_family, causal_lm_newtype};
use crate::config::Config;
use crate::error::Result;
use crate::layers::{Activation, RmsNormStyle};
use crate::weights::Weights;

/// The default `sliding_window` of `Gemma2Config` and `Gemma3TextConfig` (`int | None = 4096`).
const DEFAULT_WINDOW: Option<usize> = Some(4096);

/// What every Gemma shares: Llama with Gemma's norm and embedding scale, embeddings tied unless the
/// config says otherwise (`tie_word_embeddings: bool = True`), and the MLP activation `act`.
fn gemma_common(cfg: &Config, act: Activation) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::Gemma;
    spec.scale_embeddings = true;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.act = act;
    // Gemma's MLPs have no biases; every Gemma config class has `head_dim = 256`.
    spec.mlp_bias = false;
    spec.default_head_dim = Some(256);
    Ok(spec)
}

/// Gemma (1)'s activation, as `GemmaConfig` reads it: `hidden_act` (default `gelu_pytorch_tanh`), its
/// legacy `"gelu"` meaning the tanh approximation. `hidden_activation` is not a `GemmaConfig` field.
fn gemma_act(cfg: &Config) -> Result<Activation> {
    match cfg.str_or("hidden_act", "gelu_pytorch_tanh")? {
        "gelu" => Ok(Activation::GeluTanh),
        act => Activation::from_name(act),
    }
}

/// Gemma 2 and 3's activation: `hidden_activation` (default `gelu_pytorch_tanh`), taken as is
/// (`"gelu"` is the exact GELU; `hidden_act` is not read).
fn gemma2_act(cfg: &Config) -> Result<Activation> {
    Activation::from_name(cfg.str_or("hidden_activation", "gelu_pytorch_tanh")?)
}

/// Gemma (1): Llama with Gemma's norm, embedding scale and activation (`GemmaConfig`: 16
/// key/value heads).
fn gemma(cfg: &Config) -> Result<DecoderSpec> {
    refuse_bidirectional(cfg, "Gemma")?;
    let mut spec = gemma_common(cfg, gemma_act(cfg)?)?;
    spec.default_kv_heads = Some(16);
    Ok(spec)
}

/// transformers' Gemma attention is bidirectional with `use_bidirectional_attention` (an encoder
/// use): not supported here for Gemma (1), rather than run causally (Gemma 3 runs it).
fn refuse_bidirectional(cfg: &Config, family: &str) -> Result<()> {
    if cfg.bool_or("use_bidirectional_attention", false)? {
        return Err(crate::error::Error::Unsupported(format!(
            "{family} with use_bidirectional_attention is not supported"
        )));
    }
    Ok(())
}

/// Gemma 2: sandwich norms, soft-capping (`Gemma2Config`: 50 on the scores and 30 on the logits
/// unless null), `query_pre_attn_scalar` (default 256), 4 key/value heads, sliding layers from
/// `layer_types` (every other layer when absent).
fn gemma2(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = gemma_common(cfg, gemma2_act(cfg)?)?;
    spec.sandwich_norms = true;
    spec.default_kv_heads = Some(4);
    spec.attn_softcap = cfg.nullable_f64_or("attn_logit_softcapping", Some(50.0))?;
    spec.final_softcap = cfg.nullable_f64_or("final_logit_softcapping", Some(30.0))?;
    let scalar = cfg.nullable_f64_or("query_pre_attn_scalar", Some(256.0))?;
    spec.attention_scale = scalar.map(|s| s.powf(-0.5));
    let window = cfg.nullable_usize_or("sliding_window", DEFAULT_WINDOW)?;
    spec.windows = if cfg.layer_types().is_some() {
        DecoderSpec::windows_from_layer_types(cfg, window)?
    } else {
        let sliding: Vec<bool> = (0..cfg.layers("num_hidden_layers")?).map(|i| i % 2 == 0).collect();
        DecoderSpec::sliding_windows(&sliding, window)?
    };
    Ok(spec)
}

/// Which Gemma 3 layers are `sliding_attention` layers, as `Gemma3TextConfig` sets `layer_types`:
/// from the config, or (4.x style) every layer but each `sliding_window_pattern`-th.
fn gemma3_sliding_layers(cfg: &Config) -> Result<Vec<bool>> {
    if let Some(sliding) = DecoderSpec::sliding_layers(cfg)? {
        return Ok(sliding);
    }
    let pattern = cfg.usize_or("sliding_window_pattern", 6)?.max(1);
    Ok((0..cfg.layers("num_hidden_layers")?).map(|i| (i + 1) % pattern != 0).collect())
}

/// Gemma 3 text: Gemma 2 plus q/k norms and local RoPE. The sliding layers take `sliding_window` and
/// the local RoPE parameters; the latter even when the window is null, as transformers picks a
/// layer's rotary embedding by its type.
///
/// With `use_bidirectional_attention` (EmbeddingGemma) every layer attends both ways: full layers
/// to every token, sliding ones within `|query − key| ≤ sliding_window / 2` (transformers sets the
/// window to `sliding_window // 2 + 1`, exclusive).
fn gemma3(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = gemma2(cfg)?;
    spec.bidirectional = cfg.bool_or("use_bidirectional_attention", false)?;
    spec.qk_norm = true;
    // `Gemma3TextConfig` keeps `attn_logit_softcapping` but its attention never applies it; its
    // final soft-capping defaults to none.
    spec.attn_softcap = None;
    spec.final_softcap = cfg.opt_f64("final_logit_softcapping")?;
    let sliding = gemma3_sliding_layers(cfg)?;
    let window = cfg.nullable_usize_or("sliding_window", DEFAULT_WINDOW)?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding;
    Ok(spec)
}

/// VaultGemma: Gemma 2's attention (soft-capping, alternating windows) in plain pre-norm blocks,
/// the MLP's norm named `pre_feedforward_layernorm` (read as the decoder's
/// `post_attention_layernorm`).
fn vault_gemma(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = gemma2(cfg)?;
    spec.sandwich_norms = false;
    Ok(spec)
}

causal_lm_newtype!(
    /// transformers' `VaultGemmaForCausalLM`.
    VaultGemmaForCausalLM
);

impl VaultGemmaForCausalLM {
    /// Loads the model from a VaultGemma config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights =
            weights.renamed(|n| Some(n.replace(".pre_feedforward_layernorm.", ".post_attention_layernorm.")));
        Ok(VaultGemmaForCausalLM(CausalLm::load(cfg, &weights, vault_gemma(cfg)?)?))
    }
}

causal_lm_family!(
    /// transformers' `GemmaForCausalLM`.
    GemmaForCausalLM,
    gemma
);

causal_lm_family!(
    /// transformers' `Gemma2ForCausalLM`.
    Gemma2ForCausalLM,
    gemma2
);

causal_lm_family!(
    /// transformers' `Gemma3ForCausalLM` (the text model, `model_type` `gemma3_text`).
    Gemma3ForCausalLM,
    gemma3
);

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// `GemmaConfig` reads `hidden_act` and maps its legacy `"gelu"` to the tanh approximation;
    /// `Gemma2Config` and `Gemma3TextConfig` read `hidden_activation` and keep `"gelu"` exact.
    #[test]
    fn each_gemma_reads_its_own_activation_key() {
        fn act(f: fn(&Config) -> Result<DecoderSpec>, json: &str) -> Activation {
            f(&cfg(json)).unwrap().act
        }
        let n = r#""num_hidden_layers": 2"#;
        assert_eq!(act(gemma, &format!(r#"{{{n}, "hidden_act": "gelu"}}"#)), Activation::GeluTanh);
        assert_eq!(act(gemma, &format!(r#"{{{n}, "hidden_activation": "silu"}}"#)), Activation::GeluTanh);
        assert_eq!(act(gemma, &format!(r#"{{{n}, "hidden_act": "silu"}}"#)), Activation::Silu);
        for f in [gemma2, gemma3] {
            assert_eq!(act(f, &format!(r#"{{{n}, "hidden_activation": "gelu"}}"#)), Activation::Gelu);
            assert_eq!(act(f, &format!(r#"{{{n}, "hidden_act": "silu"}}"#)), Activation::GeluTanh);
            assert_eq!(act(f, &format!("{{{n}}}")), Activation::GeluTanh);
        }
    }

    /// `sliding_attention` layers take the local RoPE (`position_embeddings[config.layer_types[i]]`
    /// in transformers) and the window; with `sliding_window: null` transformers 5.24 fails (a
    /// `TypeError` building the mask), and so does loading here, for Gemma 2 too.
    #[test]
    fn gemma3_sliding_layers_use_the_local_rope_and_need_a_window() {
        let layers = r#""num_hidden_layers": 3, "rope_local_base_freq": 123.0,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]"#;
        let c = cfg(&format!(r#"{{"model_type": "gemma3_text", "sliding_window": 5, {layers}}}"#));
        let spec = gemma3(&c).unwrap();
        assert_eq!(spec.windows, vec![Some(5), None, Some(5)]);
        assert_eq!(spec.local_rope, vec![true, false, true]);
        assert!(spec.uses_local_rope());
        assert_eq!(c.rope(Some("sliding_attention")).unwrap().theta, 123.0);
        let null = cfg(&format!(r#"{{"model_type": "gemma3_text", "sliding_window": null, {layers}}}"#));
        let err = gemma3(&null).unwrap_err().to_string();
        assert!(
            err.contains("layer 0 is a \"sliding_attention\" layer but the config sets no sliding_window"),
            "{err}"
        );
        assert!(gemma2(&cfg(r#"{"num_hidden_layers": 2, "sliding_window": null}"#)).is_err());
        // 4.x style: the pattern, and `sliding_window` defaulting to 4096 when absent.
        let spec = gemma3(&cfg(r#"{"num_hidden_layers": 4, "sliding_window_pattern": 2}"#)).unwrap();
        assert_eq!(spec.local_rope, vec![true, false, true, false]);
        assert_eq!(spec.windows, vec![Some(4096), None, Some(4096), None]);
        let err = gemma3(&cfg(r#"{"num_hidden_layers": 2, "layer_types": ["full_attention"]}"#));
        assert!(err.unwrap_err().to_string().contains("\"layer_types\" has 1 entries for 2 layers"));
    }

    /// Absent keys take the config classes' defaults (`Gemma2Config`: soft-capping 50 / 30,
    /// `query_pre_attn_scalar` 256; null turns them off); `Gemma3TextConfig` keeps
    /// `attn_logit_softcapping` but its attention ignores it, and has no final capping by default.
    #[test]
    fn gemma_defaults_follow_the_config_classes() {
        let n = r#""num_hidden_layers": 2"#;
        let g2 = gemma2(&cfg(&format!("{{{n}}}"))).unwrap();
        assert_eq!((g2.attn_softcap, g2.final_softcap), (Some(50.0), Some(30.0)));
        assert_eq!(g2.attention_scale, Some(1.0 / 16.0));
        assert_eq!((g2.default_head_dim, g2.default_kv_heads), (Some(256), Some(4)));
        let off = format!(
            r#"{{{n}, "attn_logit_softcapping": null, "final_logit_softcapping": null, "query_pre_attn_scalar": 64}}"#
        );
        let g2 = gemma2(&cfg(&off)).unwrap();
        assert_eq!((g2.attn_softcap, g2.final_softcap, g2.attention_scale), (None, None, Some(0.125)));
        let g3 = gemma3(&cfg(&format!(r#"{{{n}, "attn_logit_softcapping": 20.0}}"#))).unwrap();
        assert_eq!((g3.attn_softcap, g3.final_softcap), (None, None));
        let g3 = gemma3(&cfg(&format!(r#"{{{n}, "final_logit_softcapping": 30.0}}"#))).unwrap();
        assert_eq!(g3.final_softcap, Some(30.0));
        let g1 = gemma(&cfg(&format!("{{{n}}}"))).unwrap();
        assert_eq!((g1.default_head_dim, g1.default_kv_heads, g1.attn_softcap), (Some(256), Some(16), None));
        let bi = gemma(&cfg(&format!(r#"{{{n}, "use_bidirectional_attention": true}}"#)));
        assert!(bi.unwrap_err().to_string().contains("use_bidirectional_attention is not supported"));
        let bi = gemma3(&cfg(&format!(r#"{{{n}, "use_bidirectional_attention": true}}"#))).unwrap();
        assert!(bi.bidirectional && !g3.bidirectional);
    }

    /// Every Gemma config class defaults `tie_word_embeddings` to true.
    #[test]
    fn gemma_embeddings_are_tied_by_default() {
        for f in [gemma, gemma2, gemma3] {
            assert!(f(&cfg(r#"{"num_hidden_layers": 1}"#)).unwrap().tie_word_embeddings);
            let untied = cfg(r#"{"num_hidden_layers": 1, "tie_word_embeddings": false}"#);
            assert!(!f(&untied).unwrap().tie_word_embeddings);
        }
    }
}
