//! [`DecoderSpec`]: what distinguishes one decoder family from another, with the Llama defaults
//! the families start from.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    Activation, DeltaNetDims, Glu, LatentDims, Mamba2Dims, MambaDims, OutputGate, RmsNormStyle, Routing,
};

use super::Alibi;

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
    /// The mixture's output (shared experts included) is normed by `mlp.post_mlp_layernorm`
    /// (A.X-K1).
    pub moe_output_norm: bool,
    /// The attention's output is normed before `o_proj` (`self_attn.attn_sub_norm`) and the MLP's
    /// product before `down_proj` (`mlp.ffn_sub_norm`) (BitNet).
    pub sub_norms: bool,
    /// Every projection's input but the LM head's is fake-quantized to 8-bit integers per row
    /// (BitNet's `ActQuant`, see [`crate::layers::fake_quant_int8`]).
    pub activation_quant: bool,
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
    /// [`DecoderSpec::embedding_multiplier`] scales the embeddings of ids, not `inputs_embeds`
    /// (transformers' scaled embedding modules: MiniCPM3, XGLM; Falcon-H1's forward): features put
    /// in place of some tokens' embeddings are not multiplied.
    pub embedding_multiplier_on_ids: bool,
    /// Each block's attention and MLP outputs are multiplied by this before their residual adds
    /// (Granite's `residual_multiplier`).
    pub residual_multiplier: Option<f64>,
    /// The logits are divided by this (Granite's `logits_scaling`).
    pub logits_scaling: Option<f64>,
    /// For each layer, whether it runs without RoPE (SmolLM3's NoPE layers).
    pub nope: Vec<bool>,
    /// The q/k norms have a scale per head, `[heads, head_dim]` (Cohere's `use_qk_norm`).
    pub qk_norm_per_head: bool,
    /// The q/k norms are layer norms with a bias (Persimmon's `q_layernorm`, `k_layernorm`).
    pub qk_layer_norm: bool,
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
    /// DeepSeek's multi-head latent attention (`num_key_value_heads` is then ignored: every head
    /// has its own keys and values, expanded from the latent; RoPE rotates `rope` dims).
    pub latent: Option<LatentDims>,
    /// Attention sinks: a learned logit per head in every softmax (gpt-oss's `self_attn.sinks`).
    pub sinks: bool,
    /// The per-head q/k norms apply after RoPE (HunYuan's `query_layernorm`, `key_layernorm`).
    pub qk_norm_after_rope: bool,
    /// The plain MLP's activation is xIELU with each layer's `mlp.act_fn` scalars (Apertus).
    pub xielu: bool,
    /// The hybrids' Mamba-2 layers in place of attention (Granite 4.0-H).
    pub mamba: Option<HybridSpec>,
    /// LFM2's gated short convolutions in place of attention.
    pub short_conv: Option<ShortConvSpec>,
    /// Attention's output gated by the layer's input (Qwen3.5, Qwen3-Next, AFMoE, Laguna).
    pub output_gate: Option<OutputGate>,
    /// Each layer's query head count where layers differ (Laguna's
    /// `num_attention_heads_per_layer`); `None`: `num_attention_heads` everywhere.
    pub heads_per_layer: Option<Vec<usize>>,
    /// Each layer's key/value head count where layers differ (MiMo-V2-Flash's sliding layers have
    /// twice as many); `None`: `num_key_value_heads` everywhere.
    pub kv_heads_per_layer: Option<Vec<usize>>,
    /// Which layers have the attention sinks where not all do (MiMo-V2-Flash's sliding layers);
    /// `None`: all, with [`DecoderSpec::sinks`].
    pub sink_layers: Option<Vec<bool>>,
    /// Each value head's width where narrower than the heads (MiMo-V2-Flash's `v_head_dim`).
    pub v_head_dim: Option<usize>,
    /// The values are multiplied by this (MiMo-V2-Flash's `attention_value_scale`).
    pub v_scale: Option<f64>,
    /// Each layer's head width where layers differ (Gemma 4's full layers: `global_head_dim`);
    /// `None`: `head_dim` everywhere.
    pub head_dims_per_layer: Option<Vec<usize>>,
    /// The values are RMS-normed per head without a scale (Gemma 4's `v_norm`).
    pub v_norm: bool,
    /// Which layers take their values from their keys' projection, with no `v_proj` (Gemma 4's
    /// `attention_k_eq_v`, on its full layers); `None`: none.
    pub values_from_keys: Option<Vec<bool>>,
    /// For each layer, the earlier layer whose keys and values (after its cache) it attends to
    /// instead of projecting its own (Gemma 4's `num_kv_shared_layers`); `None`: none.
    pub kv_sources: Option<Vec<Option<usize>>>,
    /// Each layer's MLP width where layers differ (Gemma 4's double-wide MLPs on the layers that
    /// share keys and values); `None`: `intermediate_size` everywhere.
    pub intermediate_per_layer: Option<Vec<usize>>,
    /// Inputs of every layer of their own, from the tokens and their embeddings (Gemma 4's
    /// per-layer embeddings).
    pub per_layer_inputs: Option<PerLayerInputsSpec>,
    /// Each layer's output is multiplied by its `layer_scalar` (Gemma 4).
    pub layer_scalar: bool,
    /// Differential attention (DiffLlama; see [`crate::layers::Differential`]).
    pub differential: bool,
    /// A mixture of experts beside each layer's dense MLP (Gemma 4's `enable_moe_block`).
    pub experts_beside: Option<ExpertsBesideSpec>,
    /// Gemma 3n's alternating updates over several hidden streams, and its low-rank residuals.
    pub altup: Option<AltUpSpec>,
    /// Each layer's MLP keeps the top of its gate, by this sparsity (Gemma 3n's
    /// `activation_sparsity_pattern`; 0: the whole gate); `None`: every layer keeps it all.
    pub activation_sparsity: Option<Vec<f64>>,
    /// Qwen3.5's gated delta nets (`layers.{i}.linear_attn`) in place of attention.
    pub delta_net: Option<DeltaNetSpec>,
    /// Per layer, which of the token mixer and the feed-forward it has (Nemotron-H's blocks have
    /// one of them); both when `None`.
    pub block_parts: Option<Vec<BlockParts>>,
    /// The rotated queries are multiplied by `1 + beta·ln(1 + floor(position / original_max))`
    /// (Ministral 3's Llama-4-style attention scaling for long contexts).
    pub query_scale: Option<QueryScale>,
    /// For each layer, its attention chunk (Llama 4's `chunked_attention` layers), if any.
    pub chunks: Vec<Option<AttentionChunk>>,
    /// Which layers have the q/k norms where not all do (Llama 4's, on its RoPE layers alone);
    /// `None`: all of them, with [`DecoderSpec::qk_norm`].
    pub qk_norm_layers: Option<Vec<bool>>,
    /// `token_type_ids` are taken, their rows of the token table added to the inputs' embeddings
    /// (GPT-2, GPT-Neo, GPT-J, CodeGen, GPTBigCode)
    pub token_types: bool,
    /// The first layer has no `input_layernorm` (ModernBERT decoder's `attn_norm` is an identity
    /// there: its embeddings are normed already).
    pub first_input_norm_identity: bool,
    /// A prediction head between the final norm and the LM head: `head_transform.dense` (a
    /// linear map of the hidden size, with a bias where the checkpoint has one), this activation,
    /// then `head_transform.norm` (ModernBERT decoder's `lm_head`).
    pub head_transform: Option<Activation>,
}

/// Ministral 3's per-position query scale (see [`DecoderSpec::query_scale`]): the rope
/// parameters' `llama_4_scaling_beta` and `original_max_position_embeddings`; or Llama 4's
/// attention temperature (`attn_scale`, `floor_scale`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryScale {
    /// `llama_4_scaling_beta` (Llama 4: `attn_scale`)
    pub beta: f64,
    /// `original_max_position_embeddings` (Llama 4: `floor_scale`)
    pub original_max: f64,
    /// Llama 4's temperature tuning: `1 + beta·ln(1 + floor((column + 1) / original_max))` of each
    /// token's column in the cache (past tokens plus its index, whatever its position id), on the
    /// layers without RoPE alone
    pub temperature: bool,
}

/// Llama 4's chunked attention (see [`DecoderSpec::chunks`]): a query sees the keys of its own
/// chunk of `size` tokens, chunks counted from each row's first kept token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionChunk {
    /// `attention_chunk_size`
    pub size: usize,
}

/// The sizes of Gemma 4's per-layer inputs (see [`DecoderSpec::per_layer_inputs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerLayerInputsSpec {
    /// each layer's input width (`hidden_size_per_layer_input`)
    pub width: usize,
    /// the rows of their token table (`vocab_size_per_layer_input`)
    pub vocab: usize,
    /// ids outside the table read its row 0 (Gemma 3n), rather than being refused
    pub clamp_ids: bool,
}

/// Gemma 3n's alternating updates (see [`DecoderSpec::altup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AltUpSpec {
    /// the number of hidden streams (`altup_num_inputs`)
    pub streams: usize,
    /// the stream each layer runs on (`altup_active_idx`)
    pub active: usize,
    /// the corrected active stream is scaled before the per-layer input's block
    /// (`altup_correct_scale`)
    pub correct_scale: bool,
    /// the rank of the low-rank residual beside attention (`laurel_rank`)
    pub laurel_rank: usize,
}

/// The mixture of experts beside each of Gemma 4's dense MLPs (see
/// [`DecoderSpec::experts_beside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpertsBesideSpec {
    /// `num_experts`
    pub experts: usize,
    /// `top_k_experts`
    pub top_k: usize,
    /// `moe_intermediate_size`
    pub intermediate: usize,
}

/// Which of a decoder's layers are gated delta nets (`layers.{i}.linear_attn`) instead of attention.
#[derive(Debug, Clone)]
pub struct DeltaNetSpec {
    /// their sizes
    pub dims: DeltaNetDims,
    /// for each layer, whether it is a gated delta net
    pub layers: Vec<bool>,
}

/// Which parts a decoder block has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockParts {
    /// the token mixer, then the feed-forward
    Both,
    /// the token mixer alone (`input_layernorm`, mixer, residual)
    MixerOnly,
    /// the feed-forward alone (`post_attention_layernorm`, MLP, residual)
    FeedForwardOnly,
}

/// Which of LFM2's layers are gated short convolutions (`layers.{i}.conv`) instead of attention.
#[derive(Debug, Clone)]
pub struct ShortConvSpec {
    /// the convolution's width (`conv_L_cache`)
    pub kernel: usize,
    /// the projections and the convolution have biases (`conv_bias`)
    pub bias: bool,
    /// for each layer, whether it is a convolution layer
    pub layers: Vec<bool>,
}

/// Which of a hybrid decoder's layers mix tokens with a Mamba mixer instead of attention.
#[derive(Debug, Clone)]
pub struct HybridSpec {
    /// the mixers and their sizes
    pub dims: HybridMixer,
    /// for each layer, whether it is a Mamba layer
    pub layers: Vec<bool>,
    /// the mixer's name in a layer (`model.layers.{i}.{prefix}`)
    pub prefix: &'static str,
    /// the mixer runs beside the layer's attention, on the same normed input, their outputs
    /// summed (Falcon-H1), instead of replacing it
    pub beside_attention: bool,
}

/// A hybrid decoder's state-space mixer.
#[derive(Debug, Clone, Copy)]
pub enum HybridMixer {
    /// Mamba's (Jamba)
    Mamba(MambaDims),
    /// Mamba-2's (Granite 4.0, Bamba)
    Mamba2(Mamba2Dims),
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
    /// the expert every token runs besides the routed ones
    pub shared: Option<SharedExpert>,
    /// the router and the experts' projections have biases (gpt-oss)
    pub biased: bool,
    /// the shared experts' projections have biases (ERNIE 4.5 MoE's `use_bias`)
    pub shared_bias: bool,
    /// how each expert joins its gate and up projections
    pub glu: Glu,
    /// the experts (and the shared ones) are ungated MLPs instead (Nemotron-H)
    pub ungated: Option<UngatedExperts>,
}

/// A mixture of ungated experts, `down(act(up(x)))` (Nemotron-H's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UngatedExperts {
    /// the routed experts' width between the latent projections (`moe_latent_size`), if any
    pub latent: Option<usize>,
    /// the shared experts' and the latent projections' biases (`mlp_bias`)
    pub bias: bool,
}

/// The expert of a mixture that every token runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedExpert {
    /// Qwen2-MoE's `shared_expert` of this intermediate size, scaled by
    /// `sigmoid(shared_expert_gate(x))`
    Gated(usize),
    /// DeepSeek's `shared_experts` of this intermediate size, unscaled
    Plain(usize),
    /// Cohere 2 MoE's `shared_experts` of this intermediate size, the block's output the mean of
    /// theirs and the routed experts' (`shared_expert_combination_strategy: "average"`)
    Averaged(usize),
}

impl MoeSpec {
    /// `experts` gated experts of `intermediate` (their gate and up projections multiplied, no
    /// biases, no shared expert) routed by `routing`, on the layers `sparse_layers` marks.
    pub fn routed(experts: usize, intermediate: usize, routing: Routing, sparse_layers: Vec<bool>) -> Self {
        MoeSpec {
            experts,
            intermediate,
            routing,
            sparse_layers,
            shared: None,
            biased: false,
            shared_bias: false,
            glu: Glu::Product,
            ungated: None,
        }
    }
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
            moe_output_norm: false,
            sub_norms: false,
            activation_quant: false,
            lm_head_bias: false,
            qk_norm_whole: false,
            clip_qkv: None,
            post_norms_only: false,
            parameterless_norms: false,
            embedding_multiplier: None,
            embedding_multiplier_on_ids: false,
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
            latent: None,
            sinks: false,
            qk_norm_after_rope: false,
            xielu: false,
            mamba: None,
            short_conv: None,
            block_parts: None,
            token_types: false,
            query_scale: None,
            chunks: vec![None; layers],
            qk_norm_layers: None,
            first_input_norm_identity: false,
            head_transform: None,
            qk_layer_norm: false,
            output_gate: None,
            heads_per_layer: None,
            kv_heads_per_layer: None,
            sink_layers: None,
            v_head_dim: None,
            v_scale: None,
            head_dims_per_layer: None,
            v_norm: false,
            values_from_keys: None,
            kv_sources: None,
            intermediate_per_layer: None,
            per_layer_inputs: None,
            layer_scalar: false,
            differential: false,
            experts_beside: None,
            altup: None,
            activation_sparsity: None,
            delta_net: None,
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
