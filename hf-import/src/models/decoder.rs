//! The decoder-only transformer shared by Llama, Mistral, Qwen2/3, Gemma and Phi-3: embeddings, a
//! stack of pre-norm blocks (RoPE self-attention + gated MLP), a final RMS norm and an LM head.
//! The families differ only in the [`DecoderSpec`] their config gives.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    bidirectional_mask, causal_mask, packing_enabled, Activation, Arena, AttentionConfig, DecoderNorm,
    Embedding, FeedForward, GatedMlp, KvCache, LayerNorm, Linear, RmsNorm, RmsNormStyle, Rotary, Routing,
    SelfAttention, SparseMoe,
};
use crate::weights::{Vars, Weights};

mod alibi;
mod packed;

pub use alibi::Alibi;

/// What distinguishes one decoder family from another.
#[derive(Debug, Clone)]
pub struct DecoderSpec {
    /// RMS norm variant.
    pub norm_style: RmsNormStyle,
    /// Per-head RMS norms on q and k (Qwen3, Gemma 3).
    pub qk_norm: bool,
    /// Bias on q, k, v (Qwen2).
    pub qkv_bias: bool,
    /// Bias on the attention output projection.
    pub o_bias: bool,
    /// Bias on the MLP projections.
    pub mlp_bias: bool,
    /// Embeddings multiplied by `sqrt(hidden)` rounded to the model dtype (Gemma).
    pub scale_embeddings: bool,
    /// Extra norms after attention and around the MLP (Gemma 2/3).
    pub sandwich_norms: bool,
    /// Score scale; `None` is `head_dim^-0.5`.
    pub attention_scale: Option<f64>,
    /// Attention logit soft-capping (Gemma 2).
    pub attn_softcap: Option<f64>,
    /// Final logit soft-capping (Gemma 2).
    pub final_softcap: Option<f64>,
    /// For each layer, its sliding window (`None` for global attention).
    pub windows: Vec<Option<usize>>,
    /// The MLP activation.
    pub act: Activation,
    /// For each layer, whether it takes the RoPE parameters of `sliding_attention` layers (Gemma 3,
    /// whose rotary embedding is chosen by `layer_types`, with or without a window).
    pub local_rope: Vec<bool>,
    /// The LM head is the embedding table (`tie_word_embeddings`, defaulting as the family's config
    /// class does).
    pub tie_word_embeddings: bool,
    /// Generation drops its KV cache and runs the whole sequence again once it reaches this many
    /// tokens (Phi-3, whose LongRoPE switches to its long factors past the pretraining length).
    pub recompute_cache_at: Option<usize>,
    /// The family config class's `head_dim` when the key is absent (`None`: `hidden / heads`, as a
    /// null value always is).
    pub default_head_dim: Option<usize>,
    /// The family config class's `num_key_value_heads` when the key is absent (`None`: one per
    /// attention head, as a null value always is).
    pub default_kv_heads: Option<usize>,
    /// The family config class's `rms_norm_eps`.
    pub default_rms_norm_eps: f64,
    /// Attention runs both ways (Gemma 3's `use_bidirectional_attention`, EmbeddingGemma): full
    /// layers see every token, sliding ones the tokens within half their window; no generation.
    pub bidirectional: bool,
    /// The norms are layer norms with a shift (GPT-2), not RMS norms.
    pub layer_norm: bool,
    /// Positions come from a learned table, `embed_positions`, added to the token embeddings
    /// (GPT-2), not from RoPE.
    pub learned_positions: bool,
    /// The MLP is ungated, `down(act(up(x)))` (GPT-2).
    pub plain_mlp: bool,
    /// Layer `i`'s attention scale is divided by `i + 1` (GPT-2's `scale_attn_by_inverse_layer_idx`).
    pub scale_by_inverse_layer: bool,
    /// Attention and MLP read the same input, `x + attn(norm1(x)) + mlp(norm2(x))` (GPT-NeoX's
    /// `use_parallel_residual`).
    pub parallel_residual: bool,
    /// Sparse mixture-of-experts layers (Mixtral, Qwen3-MoE).
    pub moe: Option<MoeSpec>,
    /// The LM head has a bias, `lm_head.bias` (Phi).
    pub lm_head_bias: bool,
    /// q and k normed over their whole projection, not per head (OLMo 2).
    pub qk_norm_whole: bool,
    /// q, k and v clamped to `[-c, c]` (OLMo's `clip_qkv`).
    pub clip_qkv: Option<f64>,
    /// Norms only after attention and the MLP, none before (OLMo 2): `x + norm(attn(x))`,
    /// `x + norm(mlp(x))`.
    pub post_norms_only: bool,
    /// The norms are layer norms without weight or bias (OLMo).
    pub parameterless_norms: bool,
    /// The token embeddings are multiplied by this (Granite's `embedding_multiplier`).
    pub embedding_multiplier: Option<f64>,
    /// Each block's attention and MLP outputs are multiplied by this before their residual adds
    /// (Granite's `residual_multiplier`).
    pub residual_multiplier: Option<f64>,
    /// The logits are divided by this (Granite's `logits_scaling`).
    pub logits_scaling: Option<f64>,
    /// For each layer, whether it runs without RoPE (SmolLM3's NoPE layers).
    pub nope: Vec<bool>,
    /// The q/k norms have a scale per head, `[heads, head_dim]` (Cohere's `use_qk_norm`).
    pub qk_norm_per_head: bool,
    /// The logits are multiplied by this (Cohere's `logit_scale`).
    pub logit_scale: Option<f64>,
    /// Learned positions index their table this far in (OPT's 2: the table has that many more
    /// rows than `max_position_embeddings`).
    pub position_offset: usize,
    /// Without `position_ids`, each token's position is its index among its row's kept tokens
    /// (`cumsum(mask) * mask - 1`, padding at -1), not its column (OPT).
    pub positions_from_mask: bool,
    /// A windowed layer's window is a mask of its own, added to the causal and padding one (GPT-Neo,
    /// whose `bias` buffer is applied before the attention mask): where a query's window holds only
    /// padding, it attends evenly to the keys that one of the two masks hides and the other does
    /// not, as transformers' does, instead of to every key.
    pub window_mask_added: bool,
    /// The norms come after the residual adds, `x = norm1(x + attn(x))`, `x = norm2(x + mlp(x))`
    /// (OPT-350m's `do_layer_norm_before: false`), not before attention and the MLP.
    pub post_norm: bool,
    /// The stack ends with the final norm `norm` (OPT without `do_layer_norm_before`, or with
    /// `_remove_final_layer_norm`, has none).
    pub final_norm: bool,
    /// The token embeddings' width where it is not the hidden size (OPT-350m's
    /// `word_embed_proj_dim`): embeddings go through `project_in` (`[hidden, width]`, no bias), the
    /// final hidden states through `project_out` (`[width, hidden]`) before the LM head, which is as
    /// wide as the embeddings.
    pub embed_width: Option<usize>,
    /// No positions: attention scores are biased by ALiBi (BLOOM, MPT; see [`Alibi`]);
    /// `position_ids` are ignored, as transformers' BLOOM and MPT ignore them.
    pub alibi: Option<Alibi>,
    /// A norm on the token embeddings, `embed_norm` (Bloom's `word_embeddings_layernorm`).
    pub embed_norm: bool,
    /// The residuals are the norms' outputs, not their inputs (Bloom's
    /// `apply_residual_connection_post_layernorm`): `n = norm1(x)`, `y = n + attn(n)`,
    /// `m = norm2(y)`, `out = m + mlp(m)`.
    pub residual_from_norm: bool,
    /// `clip_qkv` clamps q and k after their whole-projection norms, not before (OLMoE).
    pub clip_after_qk_norm: bool,
}

/// Where and how a decoder mixes experts.
#[derive(Debug, Clone)]
pub struct MoeSpec {
    /// the number of experts
    pub experts: usize,
    /// each expert's intermediate size
    pub intermediate: usize,
    /// how the router weighs them
    pub routing: Routing,
    /// for each layer, whether its MLP is the mixture (else a dense MLP of `intermediate_size`)
    pub sparse_layers: Vec<bool>,
    /// Qwen2-MoE's shared expert's intermediate size
    pub shared_intermediate: Option<usize>,
}

impl DecoderSpec {
    /// The Llama defaults read from `cfg` (`hidden_act`, `attention_bias`, `mlp_bias`,
    /// `tie_word_embeddings`, no window).
    pub fn llama(cfg: &Config) -> Result<Self> {
        let layers = cfg.layers("num_hidden_layers")?;
        let bias = cfg.bool_or("attention_bias", false)?;
        Ok(DecoderSpec {
            norm_style: RmsNormStyle::Llama,
            qk_norm: false,
            qkv_bias: bias,
            o_bias: bias,
            mlp_bias: cfg.bool_or("mlp_bias", false)?,
            scale_embeddings: false,
            sandwich_norms: false,
            attention_scale: None,
            attn_softcap: None,
            final_softcap: None,
            windows: vec![None; layers],
            act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
            local_rope: vec![false; layers],
            // `LlamaConfig` (and Mistral, Qwen2/3, Phi-3): `tie_word_embeddings: bool = False`.
            tie_word_embeddings: cfg.bool_or("tie_word_embeddings", false)?,
            recompute_cache_at: None,
            default_head_dim: None,
            default_kv_heads: None,
            default_rms_norm_eps: 1e-6,
            bidirectional: false,
            layer_norm: false,
            learned_positions: false,
            plain_mlp: false,
            scale_by_inverse_layer: false,
            parallel_residual: false,
            moe: None,
            lm_head_bias: false,
            qk_norm_whole: false,
            clip_qkv: None,
            post_norms_only: false,
            parameterless_norms: false,
            embedding_multiplier: None,
            residual_multiplier: None,
            logits_scaling: None,
            qk_norm_per_head: false,
            logit_scale: None,
            position_offset: 0,
            positions_from_mask: false,
            window_mask_added: false,
            post_norm: false,
            final_norm: true,
            embed_width: None,
            alibi: None,
            embed_norm: false,
            residual_from_norm: false,
            clip_after_qk_norm: false,
            nope: vec![false; layers],
        })
    }

    /// Which layers `layer_types` marks `sliding_attention`, `None` without `layer_types`; a list of
    /// another length than `num_hidden_layers` is an error (transformers' `validate_layer_type`).
    pub fn sliding_layers(cfg: &Config) -> Result<Option<Vec<bool>>> {
        let layers = cfg.layers("num_hidden_layers")?;
        match cfg.layer_types() {
            Some(types) if types.len() == layers => {
                Ok(Some(types.iter().map(|t| t == "sliding_attention").collect()))
            }
            Some(types) => {
                Err(Error::Config(format!("\"layer_types\" has {} entries for {layers} layers", types.len())))
            }
            None => Ok(None),
        }
    }

    /// Windows per layer from `layer_types` (`sliding_attention` layers get `window`; every layer
    /// does without `layer_types`).
    pub fn windows_from_layer_types(cfg: &Config, window: Option<usize>) -> Result<Vec<Option<usize>>> {
        Ok(match Self::sliding_layers(cfg)? {
            Some(sliding) => Self::sliding_windows(&sliding, window)?,
            None => vec![window; cfg.layers("num_hidden_layers")?],
        })
    }

    /// The window of each layer, `sliding` ones taking `window`. A sliding layer without a window
    /// (`sliding_window: null`, or Qwen's `use_sliding_window: false`) is refused: transformers 5
    /// fails on it (a `TypeError` building the mask) rather than attending to everything.
    pub fn sliding_windows(sliding: &[bool], window: Option<usize>) -> Result<Vec<Option<usize>>> {
        if window.is_none() {
            if let Some(i) = sliding.iter().position(|&s| s) {
                return Err(Error::Config(format!(
                    "layer {i} is a \"sliding_attention\" layer but the config sets no sliding_window \
                     (null, or use_sliding_window false)"
                )));
            }
        }
        Ok(sliding.iter().map(|&s| if s { window } else { None }).collect())
    }

    /// Whether any layer takes the local RoPE (so that its frequencies are needed).
    pub fn uses_local_rope(&self) -> bool {
        self.local_rope.iter().any(|&l| l)
    }
}

/// One pre-norm decoder block.
#[derive(Debug, Clone)]
struct DecoderLayer {
    input_norm: DecoderNorm,
    attn: SelfAttention,
    post_attn_norm: DecoderNorm,
    /// Gemma 2/3: norms before and after the MLP (`post_attn_norm` then closes the attention branch).
    ff_norms: Option<(DecoderNorm, DecoderNorm)>,
    mlp: FeedForward,
    window: Option<usize>,
    /// The layer takes the local (`sliding_attention`) RoPE.
    local_rope: bool,
    /// See [`DecoderSpec::parallel_residual`].
    parallel: bool,
    /// See [`DecoderSpec::residual_multiplier`].
    residual_multiplier: Option<f64>,
    /// The layer runs without RoPE (see [`DecoderSpec::nope`]).
    nope: bool,
    /// Post-norm blocks (see [`DecoderSpec::post_norm`]): the norm after the attention's residual
    /// add (`input_norm` is then the identity and `post_attn_norm` follows the MLP's add).
    post_norm: Option<DecoderNorm>,
    /// See [`DecoderSpec::residual_from_norm`].
    residual_from_norm: bool,
}

impl DecoderLayer {
    /// The block after attention: the residual (Gemma 2/3: through `post_attn_norm`), then the MLP
    /// with its norms and residual; or, parallel (GPT-NeoX), the MLP of the layer's input `h`; or,
    /// post-norm (OPT-350m), each residual add then its norm.
    fn after_attention(&self, h: &Tensor, attn: &Tensor) -> Result<Tensor> {
        if self.residual_from_norm {
            let normed = self.post_attn_norm.forward(&self.input_norm.forward(h)?.add(attn)?)?;
            return Ok(normed.add(&self.mlp.forward(&normed)?)?);
        }
        if let Some(attn_norm) = &self.post_norm {
            let h1 = attn_norm.forward(&h.add(attn)?)?;
            return self.post_attn_norm.forward(&h1.add(&self.mlp.forward(&h1)?)?);
        }
        if self.parallel {
            // As GPT-NeoX adds them: `mlp + attn + x`.
            return Ok(self.mlp.forward(&self.post_attn_norm.forward(h)?)?.add(attn)?.add(h)?);
        }
        Ok(match &self.ff_norms {
            None if self.residual_multiplier.is_some() => {
                let m = self.residual_multiplier.unwrap_or(1.0);
                let h1 = h.add(&attn.mul(m)?)?;
                h1.add(&self.mlp.forward(&self.post_attn_norm.forward(&h1)?)?.mul(m)?)?
            }
            None => {
                let h1 = h.add(attn)?;
                h1.add(&self.mlp.forward(&self.post_attn_norm.forward(&h1)?)?)?
            }
            Some((pre, post)) => {
                let h1 = h.add(&self.post_attn_norm.forward(attn)?)?;
                h1.add(&post.forward(&self.mlp.forward(&pre.forward(&h1)?)?)?)?
            }
        })
    }
}

/// Outputs of a decoder forward pass.
#[derive(Debug, Clone)]
pub struct DecoderOutput {
    /// `[batch, seq, vocab]` (float, the model dtype)
    pub logits: Tensor,
    /// With `output_hidden_states`: the embeddings, then each layer's output, the last one after the
    /// final norm (transformers' convention); empty otherwise.
    pub hidden_states: Vec<Tensor>,
}

/// A decoder-only causal language model (`*ForCausalLM`).
#[derive(Debug, Clone)]
pub struct CausalLm {
    embed: Embedding,
    /// GPT-2's learned position table (see [`DecoderSpec::learned_positions`]).
    positions: Option<Embedding>,
    layers: Vec<DecoderLayer>,
    norm: DecoderNorm,
    /// `None` for a base model's checkpoint (see [`CausalLm::load`]): hidden states, no logits.
    lm_head: Option<Linear>,
    rotary_global: Rotary,
    rotary_local: Rotary,
    spec: DecoderSpec,
    hidden: usize,
    dtype: DType,
    /// The LM head is the embedding table.
    tied: bool,
    /// OPT-350m's projections between the embeddings' width and the hidden size (see
    /// [`DecoderSpec::embed_width`]).
    project_in: Option<Linear>,
    project_out: Option<Linear>,
    /// See [`DecoderSpec::embed_norm`].
    embed_norm: Option<DecoderNorm>,
    /// ALiBi's slopes `[1, heads, 1, 1]` (float32; see [`DecoderSpec::alibi`]).
    alibi_slopes: Option<Tensor>,
    /// ALiBi counts keys over the kept tokens (else by column).
    alibi_by_kept_tokens: bool,
}

impl CausalLm {
    /// Loads the model from `weights` (names `model.*` and `lm_head.weight`, or the embeddings when
    /// tied or absent) with the shapes `cfg` implies. A base model's checkpoint (`Qwen3Model` and
    /// the like, saved without the `model.` prefix, as decoder embedding models are) without an
    /// `lm_head.weight` and with untied embeddings loads without an LM head: it gives hidden states
    /// (what sentence embeddings pool), and asking it for logits is an error.
    pub fn load(cfg: &Config, weights: &Weights, spec: DecoderSpec) -> Result<Self> {
        let hidden = cfg.usize("hidden_size")?;
        let vocab = cfg.usize("vocab_size")?;
        let heads = cfg.usize("num_attention_heads")?;
        let kv_heads = cfg.nullable_usize_or("num_key_value_heads", spec.default_kv_heads)?.unwrap_or(heads);
        let head_dim =
            cfg.nullable_usize_or("head_dim", spec.default_head_dim)?.unwrap_or(hidden / heads.max(1));
        let intermediate = cfg.usize("intermediate_size")?;
        let eps = cfg.f64_or("rms_norm_eps", spec.default_rms_norm_eps)?;
        let n_layers = cfg.layers("num_hidden_layers")?;
        if heads == 0 || kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return Err(Error::Config(format!(
                "num_attention_heads ({heads}) must be a positive multiple of num_key_value_heads ({kv_heads})"
            )));
        }
        // The projections' widths, fused or not, must exist before any tensor is checked against
        // them (a corrupt config's 2^62 heads would overflow the arithmetic).
        let qkv_width = kv_heads
            .checked_mul(2)
            .and_then(|kv| kv.checked_add(heads))
            .and_then(|n| n.checked_mul(head_dim));
        if qkv_width.is_none() || intermediate.checked_mul(2).is_none() {
            return Err(Error::Config(format!(
                "num_attention_heads ({heads}), num_key_value_heads ({kv_heads}), head_dim ({head_dim}) or intermediate_size ({intermediate}) is too large"
            )));
        }
        // LlamaConfig's and Gemma3TextConfig's `validate_architecture` (even with a `head_dim`).
        let model_type = cfg.get("model_type").and_then(serde_json::Value::as_str);
        if matches!(model_type, Some("llama" | "gemma3_text")) && !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "The hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})."
            )));
        }
        if spec.windows.len() != n_layers {
            return Err(Error::Config("one attention window per layer is needed".into()));
        }
        if spec.local_rope.len() != n_layers {
            return Err(Error::Config("one RoPE choice per layer is needed".into()));
        }
        // Packed matrices are cast on their way into the packed buffer (see `Arena`).
        let packing = packing_enabled(weights.device());
        let root = if packing { weights.vars("").deferring_matrix_casts() } else { weights.vars("") };
        let model =
            if weights.contains("model.embed_tokens.weight") { root.pp("model") } else { root.clone() };
        let width = spec.embed_width.unwrap_or(hidden);
        let embed = Embedding::load(&model.pp("embed_tokens"), vocab, width)?;
        let dtype = embed.weight.dtype();
        let rms = |v: &Vars<'_>, dim: usize| RmsNorm::load(v, dim, eps, spec.norm_style);
        let norm = |v: &Vars<'_>, dim: usize| -> Result<DecoderNorm> {
            Ok(if spec.parameterless_norms {
                let ones = Tensor::ones([dim], (dtype, embed.weight.device()))?;
                DecoderNorm::Layer(LayerNorm { weight: ones, bias: None, eps })
            } else if spec.layer_norm {
                DecoderNorm::Layer(LayerNorm::load(v, dim, eps)?)
            } else {
                DecoderNorm::Rms(rms(v, dim)?)
            })
        };
        let positions = if spec.learned_positions {
            let max_positions = cfg.usize("max_position_embeddings")? + spec.position_offset;
            Some(Embedding::load(&model.pp("embed_positions"), max_positions, hidden)?)
        } else {
            None
        };
        let attn_cfg = AttentionConfig {
            hidden,
            heads,
            kv_heads,
            head_dim,
            scale: spec.attention_scale.unwrap_or(1.0 / (head_dim as f64).sqrt()),
            qkv_bias: spec.qkv_bias,
            o_bias: spec.o_bias,
            softcap: spec.attn_softcap,
            qk_norm_whole: spec.qk_norm_whole,
            clip_qkv: spec.clip_qkv,
            clip_after_qk_norm: spec.clip_after_qk_norm,
        };
        let mut layers = Vec::with_capacity(n_layers);
        if spec.nope.len() != n_layers {
            return Err(Error::Config(format!(
                "{} NoPE flags for {n_layers} layers (no_rope_layers must have one per layer)",
                spec.nope.len()
            )));
        }
        for (i, (window, &local_rope)) in spec.windows.iter().zip(&spec.local_rope).enumerate() {
            let lv = model.pp("layers").pp(i);
            let qk_norm = spec.qk_norm.then_some(|v: &Vars<'_>, heads: usize, dim: usize| {
                if spec.qk_norm_per_head {
                    RmsNorm::load_shaped(v, &[heads, dim], eps, spec.norm_style)
                } else {
                    rms(v, dim)
                }
            });
            let mut attn_cfg = attn_cfg.clone();
            if spec.scale_by_inverse_layer {
                attn_cfg.scale /= (i + 1) as f64;
            }
            let mlp = match &spec.moe {
                Some(moe) if moe.sparse_layers.get(i) == Some(&true) => {
                    let mixture = SparseMoe::load(
                        &lv.pp("mlp"),
                        hidden,
                        moe.intermediate,
                        moe.experts,
                        moe.routing,
                        spec.act,
                    )?;
                    FeedForward::Sparse(match moe.shared_intermediate {
                        Some(shared) => {
                            mixture.with_shared_expert(&lv.pp("mlp"), hidden, shared, spec.act)?
                        }
                        None => mixture,
                    })
                }
                _ if spec.plain_mlp => FeedForward::Dense(GatedMlp::load_plain(
                    &lv.pp("mlp"),
                    hidden,
                    intermediate,
                    spec.act,
                    spec.mlp_bias,
                )?),
                _ => FeedForward::Dense(GatedMlp::load(
                    &lv.pp("mlp"),
                    hidden,
                    intermediate,
                    spec.act,
                    spec.mlp_bias,
                )?),
            };
            let ff_norms = if spec.post_norms_only {
                Some((DecoderNorm::Identity, norm(&lv.pp("post_feedforward_layernorm"), hidden)?))
            } else if spec.sandwich_norms {
                Some((
                    norm(&lv.pp("pre_feedforward_layernorm"), hidden)?,
                    norm(&lv.pp("post_feedforward_layernorm"), hidden)?,
                ))
            } else {
                None
            };
            layers.push(DecoderLayer {
                input_norm: if spec.post_norms_only || spec.post_norm {
                    DecoderNorm::Identity
                } else {
                    norm(&lv.pp("input_layernorm"), hidden)?
                },
                attn: SelfAttention::load(&lv.pp("self_attn"), attn_cfg, qk_norm)?,
                post_attn_norm: norm(&lv.pp("post_attention_layernorm"), hidden)?,
                ff_norms,
                mlp,
                window: *window,
                local_rope,
                parallel: spec.parallel_residual,
                residual_multiplier: spec.residual_multiplier,
                nope: spec.nope[i],
                post_norm: if spec.post_norm { Some(norm(&lv.pp("input_layernorm"), hidden)?) } else { None },
                residual_from_norm: spec.residual_from_norm,
            });
        }
        let embed_norm = if spec.embed_norm { Some(norm(&model.pp("embed_norm"), width)?) } else { None };
        let norm = if spec.final_norm { norm(&model.pp("norm"), hidden)? } else { DecoderNorm::Identity };
        // (Not packed, so read without the packing's deferred casts.)
        let (project_in, project_out) = match spec.embed_width.filter(|&w| w != hidden) {
            Some(w) => {
                let plain = weights.vars("");
                let plain =
                    if weights.contains("model.embed_tokens.weight") { plain.pp("model") } else { plain };
                (
                    Some(Linear { weight: plain.get_matrix("project_in.weight", &[hidden, w])?, bias: None }),
                    Some(Linear {
                        weight: plain.get_matrix("project_out.weight", &[w, hidden])?,
                        bias: None,
                    }),
                )
            }
            None => (None, None),
        };
        let tied = spec.tie_word_embeddings;
        let (lm_head, tied) = match root.get_matrix_opt("lm_head.weight", &[vocab, width])? {
            Some(w) if !tied || !weights.contains("model.embed_tokens.weight") => {
                (Some(Linear { weight: w, bias: None }), false)
            }
            _ if tied => (Some(Linear { weight: embed.weight.clone(), bias: None }), true),
            None if !weights.contains("model.embed_tokens.weight") => (None, false),
            _ => return Err(Error::Weight("tensor 'lm_head.weight' is missing from the checkpoint".into())),
        };
        let lm_head = match lm_head {
            Some(head) if spec.lm_head_bias => match root.pp("lm_head").get_opt("bias", &[vocab])? {
                Some(bias) => Some(Linear { bias: Some(bias), ..head }),
                // A base model's checkpoint (a classifier's decoder) has no LM head, tied or not.
                None if !weights.contains("model.embed_tokens.weight") => None,
                None => {
                    return Err(Error::Weight("tensor 'lm_head.bias' is missing from the checkpoint".into()))
                }
            },
            head => head,
        };
        // The frequencies live where the weights do.
        let device = embed.weight.device();
        let rotary_global = if spec.learned_positions || spec.alibi.is_some() {
            Rotary::none()?.to_device(device)?
        } else {
            Rotary::new(&cfg.rope(Some("full_attention"))?, head_dim)?.to_device(device)?
        };
        let rotary_local = if spec.uses_local_rope() {
            Rotary::new(&cfg.rope(Some("sliding_attention"))?, head_dim)?.to_device(device)?
        } else {
            rotary_global.clone()
        };
        let alibi_slopes = match &spec.alibi {
            Some(a) if a.slopes.len() != heads => {
                return Err(Error::Config(format!("{} ALiBi slopes for {heads} heads", a.slopes.len())))
            }
            Some(a) => Some(alibi::slope_tensor(a, device)?),
            None => None,
        };
        let alibi_by_kept_tokens = spec.alibi.as_ref().is_some_and(|a| a.by_kept_tokens);
        let mut lm = CausalLm {
            embed,
            positions,
            layers,
            norm,
            lm_head,
            rotary_global,
            rotary_local,
            spec,
            hidden,
            dtype,
            tied,
            project_in,
            project_out,
            embed_norm,
            alibi_slopes,
            alibi_by_kept_tokens,
        };
        if packing {
            lm.pack_weights()?;
        }
        Ok(lm)
    }

    /// Copies the projection weights and the LM head into one buffer in the order a forward pass reads
    /// them, q/k/v and gate/up fused (see [`Arena`]).
    fn pack_weights(&mut self) -> Result<()> {
        let mut parts: Vec<&Tensor> = Vec::new();
        for l in &self.layers {
            parts.extend(l.attn.matrices());
            parts.extend(l.mlp.matrices());
        }
        if let Some(head) = &self.lm_head {
            parts.push(&head.weight);
        }
        let mut arena = Arena::pack(&parts, self.dtype)?;
        for l in &mut self.layers {
            l.attn.unpack(&mut arena)?;
            l.mlp.unpack(&mut arena)?;
        }
        if let Some(head) = &mut self.lm_head {
            head.weight = arena.next(head.weight.dims())?;
            if self.tied {
                self.embed.weight = head.weight.clone();
            }
        }
        debug_assert!(arena.is_done());
        Ok(())
    }

    /// The width of the final hidden states (the hidden size, or OPT-350m's embedding width after
    /// `project_out`): what the LM head and a classifier's `score` read.
    pub fn hidden_size(&self) -> usize {
        self.project_out.as_ref().map_or(self.hidden, |p| p.weight.dims()[0])
    }

    /// The number of learned positions (GPT-2's `n_positions`); `None` under RoPE.
    pub fn position_table_len(&self) -> Option<usize> {
        self.positions.as_ref().map(|t| t.weight.dims()[0].saturating_sub(self.spec.position_offset))
    }

    /// The sequence length at which generation recomputes its KV cache over the whole sequence
    /// (see [`DecoderSpec::recompute_cache_at`]).
    pub fn recompute_cache_at(&self) -> Option<usize> {
        self.spec.recompute_cache_at
    }

    /// The number of layers (the length a [`KvCache`] needs).
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device of the weights, where inputs must be and outputs are.
    pub fn device(&self) -> Device {
        self.embed.weight.device()
    }

    /// A forward pass over `input_ids` `[batch, seq]` (int64). `attention_mask` (1 = token) and
    /// `position_ids` `[batch, seq]` are optional (positions default to `cached..cached + seq`); the
    /// mask is `[batch, cached + seq]`, or with a `cache` also `[batch, cache.capacity()]` (what
    /// [`generate`](fn@crate::generate) passes to keep shapes fixed; the entries past `cached + seq` are unused).
    /// With a `cache`, the new keys and values are written into it. Inputs on another device than the
    /// weights are moved there; the outputs stay on the weights' device.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        cache: Option<&mut KvCache>,
        output_hidden_states: bool,
    ) -> Result<DecoderOutput> {
        let (h, hidden_states) =
            self.hidden(input_ids, attention_mask, position_ids, cache, output_hidden_states, false)?;
        Ok(DecoderOutput { logits: self.head(&h)?, hidden_states })
    }

    /// The logits of position `at` alone, `[batch, vocab]`: [`CausalLm::forward`] with the LM head run
    /// on that one position (transformers' `logits_to_keep`), as generation's steps need.
    pub fn logits_at(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        cache: Option<&mut KvCache>,
        at: usize,
    ) -> Result<Tensor> {
        let (_, s) = batch_seq(input_ids)?;
        if at >= s {
            return Err(Error::Input(format!("logits_at: position {at} is out of range for {s} tokens")));
        }
        let (h, _) = self.hidden(input_ids, attention_mask, position_ids, cache, false, false)?;
        self.head(&h.select(1, at as isize)?)
    }

    /// The logits `[batch, vocab]` after one token per row that the model picked itself: `ids`
    /// `[batch, 1]` is the argmax of its logits, so every id is a row of the embedding table (both
    /// have `vocab` rows) and is not read back to check, which on a device would wait for the step
    /// that computed them. What a generation loop on a device records while that step runs.
    pub(crate) fn logits_after_own_tokens(
        &self,
        ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: &Tensor,
        cache: &mut KvCache,
    ) -> Result<Tensor> {
        debug_assert!(
            self.lm_head.as_ref().is_none_or(|h| h.weight.dims()[0] == self.embed.weight.dims()[0]),
            "logits as wide as the table"
        );
        let (h, _) = self.hidden(ids, attention_mask, Some(position_ids), Some(cache), false, true)?;
        self.head(&h.select(1, 0)?)
    }

    /// [`CausalLm::forward`] without a cache and without the LM head: the final hidden states
    /// `[batch, seq, hidden]` and, with `output_hidden_states`, transformers' `hidden_states` (the
    /// embeddings, each layer's output, the last one after the final norm), as a base model
    /// (`Qwen3Model`, ...) returns them.
    pub fn hidden_states(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        self.hidden(input_ids, attention_mask, position_ids, None, output_hidden_states, false)
    }

    /// The final hidden states `[batch, seq, hidden]` (after the final norm) of
    /// [`CausalLm::forward`] without a cache, without running the LM head: what an embedding model
    /// built on a decoder pools.
    pub fn last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        Ok(self.hidden(input_ids, attention_mask, position_ids, None, false, false)?.0)
    }

    /// The embeddings of `ids` (on the weights' device), scaled by `sqrt(hidden)` in Gemma's
    /// families; `in_range`: the ids are known rows of the table (not read back to check).
    fn embed_tokens(&self, ids: &Tensor, in_range: bool) -> Result<Tensor> {
        let mut h = if in_range { self.embed.forward_in_range(ids)? } else { self.embed.forward(ids)? };
        if let Some(norm) = &self.embed_norm {
            h = norm.forward(&h)?;
        }
        if let Some(p) = &self.project_in {
            return p.forward(&h);
        }
        if let Some(m) = self.spec.embedding_multiplier {
            return Ok(h.mul(m)?);
        }
        if !self.spec.scale_embeddings {
            return Ok(h);
        }
        let normalizer = Tensor::full([], (self.hidden as f64).sqrt(), (self.dtype, self.device()))?;
        Ok(h.mul(&normalizer)?)
    }

    /// The identity rotation (cos 1, sin 0) in the shape of `cos`, which NoPE layers take in place
    /// of RoPE's angles; `None` when every layer rotates.
    fn identity_rotation(&self, cos: &Tensor) -> Result<Option<(Tensor, Tensor)>> {
        if !self.spec.nope.contains(&true) {
            return Ok(None);
        }
        Ok(Some((cos.ones_like()?, cos.zeros_like()?)))
    }

    /// `h` plus the learned position embeddings of `positions` (int64, `h`'s leading dims) where
    /// the family has them (GPT-2); `h` itself under RoPE.
    fn add_positions(&self, h: Tensor, positions: &Tensor) -> Result<Tensor> {
        match &self.positions {
            Some(table) if self.spec.position_offset > 0 => {
                Ok(h.add(&table.forward(&positions.add(self.spec.position_offset as i64)?)?)?)
            }
            Some(table) => Ok(h.add(&table.forward(positions)?)?),
            None => Ok(h),
        }
    }

    /// The last layer's output `h` through the final norm and, where the model has it, `project_out`.
    fn final_states(&self, h: &Tensor) -> Result<Tensor> {
        let h = self.norm.forward(h)?;
        match &self.project_out {
            Some(p) => Ok(p.forward(&h)?),
            None => Ok(h),
        }
    }

    /// The LM head (with Gemma 2's final soft-capping) on final hidden states.
    fn head(&self, h: &Tensor) -> Result<Tensor> {
        let Some(lm_head) = &self.lm_head else {
            return Err(Error::Weight(
                "tensor 'lm_head.weight' is missing from the checkpoint: a base model's weights give hidden states, not logits"
                    .into(),
            ));
        };
        let mut logits = lm_head.forward(h)?;
        if let Some(c) = self.spec.final_softcap {
            logits = logits.div(c)?.tanh()?.mul(c)?;
        }
        if let Some(s) = self.spec.logits_scaling {
            logits = logits.div(s)?;
        }
        if let Some(s) = self.spec.logit_scale {
            logits = logits.mul(s)?;
        }
        Ok(logits)
    }

    /// The decoder stack: the final normed hidden states and, with `output_hidden_states`, every
    /// layer's input and the final one. `ids_in_range`: the ids are known rows of the embedding
    /// table (see [`CausalLm::logits_after_own_tokens`]).
    fn hidden(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        mut cache: Option<&mut KvCache>,
        output_hidden_states: bool,
        ids_in_range: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let (b, s) = batch_seq(input_ids)?;
        let device = self.device();
        let input_ids = &input_ids.to(device)?;
        let attention_mask = attention_mask.map(|m| m.to(device)).transpose()?;
        let position_ids = position_ids.map(|p| p.to(device)).transpose()?;
        let position_ids = position_ids.as_ref();
        let past = cache.as_ref().map_or(0, |c| c.len());
        if let Some(m) = &attention_mask {
            let capacity = cache.as_ref().map(|c| c.capacity());
            if m.dims().len() != 2
                || m.dims()[0] != b
                || (m.dims()[1] != past + s && Some(m.dims()[1]) != capacity)
            {
                let also = capacity.map_or(String::new(), |c| format!(" or [{b}, {c}]"));
                return Err(Error::Input(format!(
                    "attention_mask must have shape [{b}, {}]{also}, got {:?}",
                    past + s,
                    m.dims()
                )));
            }
        }
        if self.spec.bidirectional && cache.is_some() {
            return Err(Error::Unsupported(
                "generation with use_bidirectional_attention (an embedding model) is not supported".into(),
            ));
        }
        if let Some(c) = cache.as_ref() {
            if c.layers.len() != self.layers.len() {
                return Err(Error::Input(format!(
                    "KV cache has {} layers, the model {}",
                    c.layers.len(),
                    self.layers.len()
                )));
            }
        }
        // The key slots attention reads: the new ones, the cached prefix, or a fixed cache's every slot.
        let keys = cache.as_mut().map_or(s, |c| c.prepare(s));
        let attention_mask = attention_mask.map(|m| mask_width(&m, keys)).transpose()?;
        let attention_mask = attention_mask.as_ref();
        let positions = match (position_ids, attention_mask) {
            (Some(p), _) => p.to_dtype(DType::I64)?.expand([b, s])?,
            (None, Some(m)) if self.spec.positions_from_mask => {
                let m = m.narrow(1, 0, past + s)?.to_dtype(DType::I64)?;
                m.cumsum(1, None)?.mul(&m)?.sub(1)?.narrow(1, past as isize, s)?.contiguous()?
            }
            (None, _) => Tensor::arange_step(past as i64, (past + s) as i64, 1, (DType::I64, device))?
                .unsqueeze(0)?
                .expand([b, s])?,
        };
        let mut h = self.add_positions(self.embed_tokens(input_ids, ids_in_range)?, &positions)?;
        let (cos_g, sin_g) = self.rotary_global.cos_sin(&positions, self.dtype)?;
        let (cos_l, sin_l) = if self.spec.uses_local_rope() {
            self.rotary_local.cos_sin(&positions, self.dtype)?
        } else {
            (cos_g.clone(), sin_g.clone())
        };
        let identity = self.identity_rotation(&cos_g)?;
        let alibi = match &self.alibi_slopes {
            Some(slopes) => {
                let kept = attention_mask.filter(|_| self.alibi_by_kept_tokens);
                Some(alibi::bias(slopes, kept, keys, self.dtype)?)
            }
            None => None,
        };
        let mut masks: Vec<(Option<usize>, Tensor)> = Vec::new();
        let mut hidden_states = Vec::new();
        for (i, layer) in self.layers.iter().enumerate() {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            // One new query reading exactly the filled keys, without padding or a window, sees them
            // all: its mask would be zeros, so none is built or added.
            let unmasked = s == 1
                && keys == past + s
                && attention_mask.is_none()
                && layer.window.is_none()
                && alibi.is_none();
            let mask = match masks.iter().find(|(w, _)| *w == layer.window) {
                _ if unmasked => None,
                Some((_, m)) => Some(m.clone()),
                None => {
                    let m = if self.spec.bidirectional {
                        bidirectional_mask(attention_mask, s, layer.window, self.dtype, device)?
                    } else if self.spec.window_mask_added && layer.window.is_some() {
                        // (In the lowest value's sum, the keys both hide are -inf.)
                        let window = causal_mask(None, s, past, keys, layer.window, self.dtype, device)?;
                        causal_mask(attention_mask, s, past, keys, None, self.dtype, device)?.add(&window)?
                    } else {
                        causal_mask(attention_mask, s, past, keys, layer.window, self.dtype, device)?
                    };
                    // (ALiBi's biases per head `[b, heads, 1, keys]` join the mask.)
                    let m = match &alibi {
                        Some(bias) => m.add(bias)?,
                        None => m,
                    };
                    masks.push((layer.window, m.clone()));
                    Some(m)
                }
            };
            // As transformers: the layer's type, not its window, picks the rotary embedding.
            let (cos, sin) = match &identity {
                Some((one, zero)) if layer.nope => (one, zero),
                _ if layer.local_rope => (&cos_l, &sin_l),
                _ => (&cos_g, &sin_g),
            };
            let layer_cache = cache.as_mut().map(|c| &mut c.layers[i]);
            let attn =
                layer.attn.forward(&layer.input_norm.forward(&h)?, cos, sin, mask.as_ref(), layer_cache)?;
            h = layer.after_attention(&h, &attn)?;
        }
        let h = self.final_states(&h)?;
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        Ok((h, hidden_states))
    }
}

/// `mask` `[batch, width]` cut or extended (with ones: slots past the queries are hidden by causality
/// anyway) to `keys` columns.
fn mask_width(mask: &Tensor, keys: usize) -> Result<Tensor> {
    let (b, w) = (mask.dims()[0], mask.dims()[1]);
    if w >= keys {
        return Ok(mask.narrow(1, 0, keys)?);
    }
    let ones = Tensor::ones([b, keys - w], (mask.dtype(), mask.device()))?;
    Ok(Tensor::cat(&[mask, &ones], 1)?)
}

/// `(batch, seq)` of 2-D integer `input_ids`.
pub fn batch_seq(input_ids: &Tensor) -> Result<(usize, usize)> {
    match input_ids.dims() {
        [b, s] if !input_ids.dtype().is_float() && input_ids.dtype() != DType::Bool => Ok((*b, *s)),
        d => Err(Error::Input(format!(
            "input_ids must be a 2-D integer tensor [batch, seq], got {:?} of dtype {:?}",
            d,
            input_ids.dtype()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// `LlamaConfig` (whose spec Mistral, Qwen2/3 and Phi-3 start from) defaults
    /// `tie_word_embeddings` to false.
    #[test]
    fn llama_embeddings_are_untied_by_default() {
        assert!(!DecoderSpec::llama(&cfg(r#"{"num_hidden_layers": 1}"#)).unwrap().tie_word_embeddings);
        let tied = cfg(r#"{"num_hidden_layers": 1, "tie_word_embeddings": true}"#);
        assert!(DecoderSpec::llama(&tied).unwrap().tie_word_embeddings);
    }

    #[test]
    fn layer_types_mark_the_sliding_layers() {
        let typed =
            cfg(r#"{"num_hidden_layers": 2, "layer_types": ["sliding_attention", "full_attention"]}"#);
        assert_eq!(DecoderSpec::sliding_layers(&typed).unwrap(), Some(vec![true, false]));
        assert_eq!(DecoderSpec::windows_from_layer_types(&typed, Some(8)).unwrap(), vec![Some(8), None]);
        let untyped = cfg(r#"{"num_hidden_layers": 2}"#);
        assert_eq!(DecoderSpec::sliding_layers(&untyped).unwrap(), None);
        assert_eq!(DecoderSpec::windows_from_layer_types(&untyped, Some(8)).unwrap(), vec![Some(8); 2]);
        let spec = DecoderSpec::llama(&untyped).unwrap();
        assert_eq!(spec.local_rope, vec![false; 2]);
        assert!(!spec.uses_local_rope());
        let short = cfg(r#"{"num_hidden_layers": 3, "layer_types": ["full_attention"]}"#);
        assert_eq!(
            DecoderSpec::sliding_layers(&short).unwrap_err().to_string(),
            "config: \"layer_types\" has 1 entries for 3 layers"
        );
    }
}
