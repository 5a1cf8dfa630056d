//! The decoder-only transformer shared by Llama, Mistral, Qwen2/3, Gemma and Phi-3: embeddings, a
//! stack of pre-norm blocks (RoPE self-attention + gated MLP), a final RMS norm and an LM head.
//! The families differ only in the [`DecoderSpec`] their config gives.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    bidirectional_mask, block_causal_mask, causal_mask, chunked_causal_mask, normal_quantile,
    packing_enabled, Arena, AttentionConfig, CrossAttentionLayer, CrossAttentionStates, DecoderNorm,
    Differential, Embedding, FeedForward, GatedDeltaNet, GatedMlp, Glu, KvCache, LayerNorm, Linear,
    Mamba2Mixer, MambaMixer, MultimodalRope, RmsNorm, Rotary, Routing, SelfAttention, ShortConv, SparseMoe,
    Xielu,
};
use crate::weights::{Vars, Weights};

mod alibi;
mod altup;
mod cross_layers;
mod experts_beside;
mod load;
mod mixer;
mod multimodal_rope;
mod packed;
mod passes;
mod per_layer;
mod replaced;
mod spec;

pub use alibi::Alibi;
use altup::{AltUpLayer, AltUpStreams};
use experts_beside::ExpertsBeside;
use mixer::{recurrent_step, TokenMixer};
use per_layer::{PerLayerBlock, PerLayerInputs};
use replaced::{add_rows_after, replace_rows};
pub use replaced::{AttentionBlocks, ReplacedRows};
pub use spec::{
    AltUpSpec, AttentionChunk, BlockParts, DecoderSpec, DeltaNetSpec, ExpertsBesideSpec, HybridMixer,
    HybridSpec, MoeSpec, PerLayerInputsSpec, QueryScale, SharedExpert, ShortConvSpec, UngatedExperts,
};

/// How a pass over the decoder reads its inputs and what it returns besides the final states.
#[derive(Debug, Clone, Copy, Default)]
struct Pass<'a> {
    /// also transformers' `hidden_states` (the embeddings, each layer's output)
    output_hidden_states: bool,
    /// the ids are known rows of the embedding table (not read back to check)
    ids_in_range: bool,
    /// token types whose embeddings are added to the inputs' (GPT-2's family)
    token_type_ids: Option<&'a Tensor>,
    /// rows of the token embeddings replaced by other features (a vision-language model's images)
    replaced: Option<ReplacedRows<'a>>,
    /// what the cross-attention layers attend to (else the cache's; see [`cross_layers`])
    cross: Option<&'a CrossAttentionStates>,
}

/// One pre-norm decoder block.
#[derive(Debug, Clone)]
struct DecoderLayer {
    input_norm: DecoderNorm,
    mixer: TokenMixer,
    /// A recurrent mixer beside the attention, on the same normed input, its output added to the
    /// attention's (Falcon-H1's Mamba-2).
    beside: Option<TokenMixer>,
    post_attn_norm: DecoderNorm,
    /// Gemma 2/3: norms before and after the MLP (`post_attn_norm` then closes the attention branch).
    ff_norms: Option<(DecoderNorm, DecoderNorm)>,
    /// `None`: a mixer-only block (Nemotron-H's `M` and `*`).
    mlp: Option<FeedForward>,
    window: Option<usize>,
    /// See [`DecoderSpec::chunks`].
    chunk: Option<AttentionChunk>,
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
    /// The earlier layer whose keys and values this one attends to (see
    /// [`DecoderSpec::kv_sources`]).
    kv_source: Option<usize>,
    /// The mixture beside the dense MLP (see [`DecoderSpec::experts_beside`]).
    experts_beside: Option<ExpertsBeside>,
    /// The use of the layer's own input (see [`DecoderSpec::per_layer_inputs`]).
    per_layer: Option<PerLayerBlock>,
    /// `layer_scalar` `[1]` (see [`DecoderSpec::layer_scalar`]).
    scalar: Option<Tensor>,
    /// Gemma 3n's alternating updates and low-rank residual (see [`DecoderSpec::altup`]).
    altup: Option<AltUpLayer>,
}

impl DecoderLayer {
    /// The block after attention: the residual (Gemma 2/3: through `post_attn_norm`), then the MLP
    /// with its norms and residual; or, parallel (GPT-NeoX), the MLP of the layer's input `h`; or,
    /// post-norm (OPT-350m), each residual add then its norm.
    fn after_attention(&self, h: &Tensor, attn: &Tensor) -> Result<Tensor> {
        let Some(mlp) = &self.mlp else {
            return Ok(h.add(attn)?);
        };
        if self.residual_from_norm {
            let normed = self.post_attn_norm.forward(&self.input_norm.forward(h)?.add(attn)?)?;
            return Ok(normed.add(&mlp.forward(&normed)?)?);
        }
        if let Some(attn_norm) = &self.post_norm {
            let h1 = attn_norm.forward(&h.add(attn)?)?;
            return self.post_attn_norm.forward(&h1.add(&mlp.forward(&h1)?)?);
        }
        if self.parallel {
            // As GPT-NeoX adds them: `mlp + attn + x`.
            return Ok(mlp.forward(&self.post_attn_norm.forward(h)?)?.add(attn)?.add(h)?);
        }
        Ok(match &self.ff_norms {
            None if self.residual_multiplier.is_some() => {
                let m = self.residual_multiplier.unwrap_or(1.0);
                let h1 = h.add(&attn.mul(m)?)?;
                h1.add(&mlp.forward(&self.post_attn_norm.forward(&h1)?)?.mul(m)?)?
            }
            None => {
                let h1 = h.add(attn)?;
                h1.add(&mlp.forward(&self.post_attn_norm.forward(&h1)?)?)?
            }
            Some((pre, post)) => {
                // (HyperCLOVAX scales the normed branches by its residual multiplier.)
                let scaled = |t: Tensor| -> Result<Tensor> {
                    Ok(match self.residual_multiplier {
                        Some(m) => t.mul(m)?,
                        None => t,
                    })
                };
                let h1 = h.add(&scaled(self.post_attn_norm.forward(attn)?)?)?;
                let mut ff = mlp.forward(&pre.forward(&h1)?)?;
                if let Some(experts) = &self.experts_beside {
                    ff = experts.combine(&h1, &ff)?;
                }
                h1.add(&scaled(post.forward(&ff)?)?)?
            }
        })
    }

    /// Gemma 3n's block after attention: the active stream `input` (normed: `normed`) plus the
    /// normed attention `attn` and LAuReL's residual, over `sqrt(2)`; then the MLP with its norms
    /// and residual; that output corrects every stream of `predictions`, and the per-layer input's
    /// block of the corrected active stream is added to the other streams.
    fn after_altup_attention(
        &self,
        altup: &AltUpLayer,
        predictions: &Tensor,
        (input, normed): (&Tensor, &Tensor),
        attn: &Tensor,
        layer_input: Option<&Tensor>,
    ) -> Result<Tensor> {
        let laurel = altup.laurel(normed)?;
        let attn = self.post_attn_norm.forward(attn)?;
        let mixed = input.add(&attn)?.add(&laurel)?.div(std::f64::consts::SQRT_2)?;
        let (Some((pre, post)), Some(mlp)) = (&self.ff_norms, &self.mlp) else {
            return Err(Error::Config("an AltUp layer needs its feed-forward norms and MLP".into()));
        };
        let out = mixed.add(&post.forward(&mlp.forward(&pre.forward(&mixed)?)?)?)?;
        let corrected = altup.correct(predictions, &out)?;
        let (Some(block), Some(layer_input)) = (&self.per_layer, layer_input) else {
            return Ok(corrected);
        };
        let delta = block.delta(&altup.scaled_active(&corrected)?, layer_input)?;
        let n = corrected.dims()[0];
        let rest = corrected.narrow(0, 1, n - 1)?.add(&delta.unsqueeze(0)?)?;
        Ok(Tensor::cat(&[&corrected.narrow(0, 0, 1)?, &rest], 0)?)
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

/// What a layer's attention mask depends on besides the inputs: its window and its chunk.
type MaskKind = (Option<usize>, Option<AttentionChunk>);

/// A prediction head before the LM head (see [`DecoderSpec::head_transform`]).
#[derive(Debug, Clone)]
pub(crate) struct HeadTransform {
    /// `head_transform.dense`
    pub dense: Linear,
    /// the activation after it
    pub act: crate::layers::Activation,
    /// `head_transform.norm`
    pub norm: DecoderNorm,
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
    spec: Box<DecoderSpec>,
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
    /// See [`DecoderSpec::head_transform`].
    head_transform: Option<HeadTransform>,
    /// ALiBi's slopes `[1, heads, 1, 1]` (float32; see [`DecoderSpec::alibi`]).
    alibi_slopes: Option<Tensor>,
    /// ALiBi counts keys over the kept tokens (else by column).
    alibi_by_kept_tokens: bool,
    /// Gemma 4's and 3n's per-layer inputs (see [`DecoderSpec::per_layer_inputs`]).
    per_layer_inputs: Option<PerLayerInputs>,
    /// Which layers' keys and values a later layer attends to (see [`DecoderSpec::kv_sources`]).
    kv_read_later: Vec<bool>,
    /// Gemma 3n's projections into and out of its hidden streams (see [`DecoderSpec::altup`]).
    streams: Option<AltUpStreams>,
    /// The multimodal RoPE of Qwen's vision-language models (see [`CausalLm::with_multimodal_rope`]).
    mrope: Option<MultimodalRope>,
    /// Cross-attention layers, each with the layer it runs before (see [`cross_layers`]).
    cross_layers: Vec<(usize, CrossAttentionLayer)>,
}

impl CausalLm {
    /// The width of the final hidden states (the hidden size, or OPT-350m's embedding width after
    /// `project_out`): what the LM head and a classifier's `score` read.
    pub fn hidden_size(&self) -> usize {
        self.project_out.as_ref().map_or(self.hidden, |p| p.weight.dims()[0])
    }

    /// The width of the token embeddings (what features replacing some of them must have: see
    /// [`CausalLm::forward_with_rows`]).
    pub fn embedding_width(&self) -> usize {
        self.embed.weight.dims()[1]
    }

    /// `ids` with `token` looked up as id 0 where it is past the embedding table (Gemma 3's image
    /// token may be: its embeddings are replaced anyway); `ids` itself otherwise.
    pub(crate) fn ids_in_vocabulary(&self, ids: &Tensor, token: i64) -> Result<Tensor> {
        if token < self.embed.weight.dims()[0] as i64 {
            return Ok(ids.clone());
        }
        let zeros = ids.zeros_like()?;
        Ok(ids.eq(token as f64)?.where_self(&zeros, ids)?)
    }

    /// The number of learned positions (GPT-2's `n_positions`); `None` under RoPE.
    pub fn position_table_len(&self) -> Option<usize> {
        self.positions.as_ref().map(|t| t.weight.dims()[0].saturating_sub(self.spec.position_offset))
    }

    /// Whether a forward without position ids rotates by its length (see [`Rotary::reads_length`]):
    /// padding it to a bucket would then change the real tokens' rotation.
    pub(crate) fn rope_reads_length(&self) -> bool {
        !self.spec.positions_from_mask
            && (self.rotary_global.reads_length() || self.rotary_local.reads_length())
    }

    /// The sequence length at which generation recomputes its KV cache over the whole sequence
    /// (see [`DecoderSpec::recompute_cache_at`]).
    pub fn recompute_cache_at(&self) -> Option<usize> {
        self.spec.recompute_cache_at
    }

    /// Whether some layers are recurrent (a hybrid's Mamba-2 layers), whose state takes every
    /// token it is given: generation then never pads a prompt.
    pub fn has_recurrent_layers(&self) -> bool {
        self.layers.iter().any(|l| l.mixer.is_recurrent() || l.beside.is_some())
    }

    /// Whether the hidden states between layers are several streams `[n, batch, seq, hidden]`
    /// (Gemma 3n's alternating updates), as its `hidden_states` are.
    pub fn has_hidden_streams(&self) -> bool {
        self.streams.is_some()
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

    /// The model with its LM head a plain projection: without soft-capping (Gemma 2's) or logit
    /// scaling (Granite's, Cohere's), as the vision-language classes apply their own `lm_head` to
    /// the language model's hidden states.
    pub(crate) fn with_plain_head(mut self) -> Self {
        self.spec.final_softcap = None;
        self.without_logit_scaling()
    }

    /// The model with its logits neither divided (Granite's `logits_scaling`) nor multiplied
    /// (Cohere's `logit_scale`), soft-capping kept (PaliGemma's head).
    pub(crate) fn without_logit_scaling(mut self) -> Self {
        self.spec.logits_scaling = None;
        self.spec.logit_scale = None;
        self
    }

    /// Whether the model takes `token_type_ids` (GPT-2, GPT-Neo, GPT-J, CodeGen, GPTBigCode: their
    /// embeddings are rows of the token table, added to the inputs').
    pub fn takes_token_types(&self) -> bool {
        self.spec.token_types
    }

    /// The embeddings of `ids` (on the weights' device), scaled by `sqrt(hidden)` in Gemma's
    /// families; `in_range`: the ids are known rows of the table (not read back to check).
    fn embed_tokens(&self, ids: &Tensor, in_range: bool) -> Result<Tensor> {
        self.embed_tokens_replacing(ids, in_range, None)
    }

    /// [`CausalLm::embed_tokens`] with the rows of `replaced` in place of the looked-up ones:
    /// after what transformers' embedding module computes (the table, Gemma's scale, MiniCPM3's,
    /// XGLM's and Falcon-H1's multipliers of the ids' embeddings), before what the model does to
    /// its `inputs_embeds` (BLOOM's norm, OPT's `project_in`, Granite's and AFMoE's multipliers).
    fn embed_tokens_replacing(
        &self,
        ids: &Tensor,
        in_range: bool,
        replaced: Option<ReplacedRows<'_>>,
    ) -> Result<Tensor> {
        let mut h = if in_range { self.embed.forward_in_range(ids)? } else { self.embed.forward(ids)? };
        if self.spec.scale_embeddings {
            let normalizer = Tensor::full([], (self.hidden as f64).sqrt(), (self.dtype, self.device()))?;
            h = h.mul(&normalizer)?;
        }
        let multiplier = self.spec.embedding_multiplier;
        if let Some(m) = multiplier.filter(|_| self.spec.embedding_multiplier_on_ids) {
            h = h.mul(m)?;
        }
        if let Some(r) = replaced {
            h = replace_rows(&h, r)?;
        }
        if let Some(norm) = &self.embed_norm {
            h = norm.forward(&h)?;
        }
        if let Some(p) = &self.project_in {
            return p.forward(&h);
        }
        match multiplier.filter(|_| !self.spec.embedding_multiplier_on_ids) {
            Some(m) => Ok(h.mul(m)?),
            None => Ok(h),
        }
    }

    /// The embeddings of `token_type_ids` `[b, s]`: rows of the token table (GPT-2's family).
    fn token_type_embeddings(&self, types: &Tensor, b: usize, s: usize) -> Result<Tensor> {
        if !self.spec.token_types {
            return Err(Error::Input("this model takes no token_type_ids".into()));
        }
        if types.dims() != [b, s] || types.dtype().is_float() || types.dtype() == DType::Bool {
            return Err(Error::Input(format!(
                "token_type_ids must be an integer tensor of shape [{b}, {s}], got {:?} of dtype {:?}",
                types.dims(),
                types.dtype()
            )));
        }
        self.embed.forward(&types.to_dtype(DType::I64)?.to(self.device())?)
    }

    /// The identity rotation (cos 1, sin 0) in the shape of `cos`, which NoPE layers take in place
    /// of RoPE's angles; `None` when every layer rotates.
    /// Ministral 3's scale of the rotated queries at `positions` `[batch, seq]` (see
    /// [`DecoderSpec::query_scale`]), `[batch, 1, seq, 1]` in the model dtype.
    fn query_scale(&self, positions: &Tensor) -> Result<Option<Tensor>> {
        let Some(QueryScale { beta, original_max, temperature }) = self.spec.query_scale else {
            return Ok(None);
        };
        // (In float32 from the integer positions, as transformers divides them; Llama 4 counts from 1.)
        let positions = positions.to_dtype(DType::F32)?;
        let positions = if temperature { positions.add(1.0)? } else { positions };
        let steps = positions.div(original_max)?.floor()?;
        let scale = steps.add(1.0)?.log()?.mul(beta)?.add(1.0)?;
        Ok(Some(scale.unsqueeze(1)?.unsqueeze(-1)?.to_dtype(self.dtype)?))
    }

    /// Whether the query scale is Llama 4's temperature, for the layers without RoPE alone.
    fn temperature_on_nope_only(&self) -> bool {
        self.spec.query_scale.is_some_and(|q| q.temperature)
    }

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

    /// Final hidden states through the prediction head before the LM head, where the model has one
    /// (see [`DecoderSpec::head_transform`]; a classifier over the decoder reads them so too).
    pub(crate) fn head_transformed(&self, h: &Tensor) -> Result<Tensor> {
        match &self.head_transform {
            Some(t) => Ok(t.norm.forward(&t.act.forward(&t.dense.forward(h)?)?)?),
            None => Ok(h.clone()),
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
        let mut logits = lm_head.forward(&self.head_transformed(h)?)?;
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
        pass: Pass<'_>,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let Pass { output_hidden_states, ids_in_range, token_type_ids, replaced, cross } = pass;
        let blocks = replaced.and_then(|r| r.blocks);
        let (b, s) = batch_seq(input_ids)?;
        let device = self.device();
        let input_ids = &input_ids.to(device)?;
        let attention_mask = attention_mask.map(|m| m.to(device)).transpose()?;
        let position_ids = position_ids.map(|p| p.to(device)).transpose()?;
        let position_ids = position_ids.as_ref();
        let past = cache.as_ref().map_or(0, |c| c.len());
        let cached_cross = cache.as_ref().and_then(|c| c.cross_attention().cloned());
        let cross = self.cross_pass(cross.or(cached_cross.as_ref()), past, s)?;
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
        // (A multimodal RoPE's three streams; the temporal one stands for the positions elsewhere.)
        let streams = self.position_streams(position_ids, b, s)?;
        let positions = match (position_ids, attention_mask) {
            (Some(_), _) if streams.is_some() => streams.as_ref().expect("streams").select(0, 0)?,
            (Some(p), _) => p.to_dtype(DType::I64)?.expand([b, s])?,
            (None, Some(m)) if self.spec.positions_from_mask => {
                let m = m.narrow(1, 0, past + s)?.to_dtype(DType::I64)?;
                m.cumsum(1, None)?.mul(&m)?.sub(1)?.narrow(1, past as isize, s)?.contiguous()?
            }
            (None, _) => Tensor::arange_step(past as i64, (past + s) as i64, 1, (DType::I64, device))?
                .unsqueeze(0)?
                .expand([b, s])?,
        };
        let embeddings = self.embed_tokens_replacing(input_ids, ids_in_range, replaced)?;
        let mut h = self.add_positions(embeddings, &positions)?;
        if let Some(types) = token_type_ids {
            h = h.add(&self.token_type_embeddings(types, b, s)?)?;
        }
        let per_layer_inputs = match &self.per_layer_inputs {
            Some(p) => Some(p.forward(input_ids, &h)?),
            None => None,
        };
        // (Gemma 3n's hidden state is its streams `[n, batch, seq, hidden]` between layers.)
        if let Some(streams) = &self.streams {
            h = streams.expand(&h)?;
        }
        // The keys and values of the layers later ones attend to (see `DecoderSpec::kv_sources`).
        let mut shared_kv: Vec<Option<(Tensor, Tensor)>> = vec![None; self.layers.len()];
        let (cos_g, sin_g) = self.global_cos_sin(&positions, streams.as_ref())?;
        let (cos_l, sin_l) = if self.spec.uses_local_rope() {
            self.rotary_local.cos_sin(&positions, self.dtype)?
        } else {
            (cos_g.clone(), sin_g.clone())
        };
        let identity = self.identity_rotation(&cos_g)?;
        // (Llama 4's temperature reads each token's column, not its position id.)
        let q_scale = match self.spec.query_scale {
            Some(QueryScale { temperature: true, .. }) => {
                let columns = Tensor::arange_step(past as i64, (past + s) as i64, 1, (DType::I64, device))?;
                self.query_scale(&columns.unsqueeze(0)?.expand([b, s])?)?
            }
            _ => self.query_scale(&positions)?,
        };
        let alibi = match &self.alibi_slopes {
            Some(slopes) => {
                let kept = attention_mask.filter(|_| self.alibi_by_kept_tokens);
                Some(alibi::bias(slopes, kept, keys, self.dtype)?)
            }
            None => None,
        };
        // (Layers of one window and chunk share their mask.)
        let mut masks: Vec<(MaskKind, Tensor)> = Vec::new();
        let mut hidden_states = Vec::new();
        // A recurrent layer's padding mask: the new tokens' columns, none for one new token (a
        // generated token is never padding), as transformers' `create_recurrent_attention_mask`.
        let recurrent_mask = match attention_mask {
            Some(m) if s > 1 => Some(m.narrow(1, past as isize, s)?),
            _ => None,
        };
        for (i, layer) in self.layers.iter().enumerate() {
            h = self.cross_layers_before(
                i,
                cross.as_ref(),
                h,
                output_hidden_states.then_some(&mut hidden_states),
            )?;
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            // (After the state is reported: transformers records the layer's own output.)
            h = add_rows_after(replaced, i.checked_sub(1), h)?;
            let attn = match &layer.mixer {
                TokenMixer::Attention(attn) => attn,
                TokenMixer::None => {
                    // A feed-forward block: its norm, MLP and residual (its cache slot counts the tokens).
                    if let Some(c) = cache.as_mut() {
                        c.layers[i].advance(s);
                    }
                    let mlp = layer.mlp.as_ref().expect("a block has a mixer or a feed-forward");
                    h = h.add(&mlp.forward(&layer.post_attn_norm.forward(&h)?)?)?;
                    continue;
                }
                recurrent => {
                    let normed = layer.input_norm.forward(&h)?;
                    let layer_cache = cache.as_mut().map(|c| &mut c.layers[i]);
                    let mask = recurrent_mask.as_ref();
                    let mixed = recurrent_step(recurrent, &normed, mask, layer_cache, self.dtype, false)?;
                    h = layer.after_attention(&h, &mixed)?;
                    continue;
                }
            };
            // One new query reading exactly the filled keys, without padding or a window, sees them
            // all: its mask would be zeros, so none is built or added.
            let unmasked = s == 1
                && keys == past + s
                && attention_mask.is_none()
                && layer.window.is_none()
                && layer.chunk.is_none()
                && alibi.is_none();
            let mask = match masks.iter().find(|(w, _)| *w == (layer.window, layer.chunk)) {
                _ if unmasked => None,
                Some((_, m)) => Some(m.clone()),
                None => {
                    let m = if let (Some(blocks), None) = (blocks, layer.chunk) {
                        block_causal_mask(
                            attention_mask,
                            blocks.ids,
                            s,
                            past,
                            keys,
                            layer.window,
                            blocks.within_window,
                            self.dtype,
                            device,
                        )?
                    } else if let Some(chunk) = layer.chunk {
                        chunked_causal_mask(attention_mask, s, past, keys, chunk.size, self.dtype, device)?
                    } else if self.spec.bidirectional {
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
                    masks.push(((layer.window, layer.chunk), m.clone()));
                    Some(m)
                }
            };
            // As transformers: the layer's type, not its window, picks the rotary embedding.
            let (cos, sin) = match &identity {
                Some((one, zero)) if layer.nope => (one, zero),
                _ if layer.local_rope => (&cos_l, &sin_l),
                _ => (&cos_g, &sin_g),
            };
            // (Gemma 3n's layer runs on its active stream, predicted from all of them.)
            let predictions = layer.altup.as_ref().map(|a| a.predict(&h)).transpose()?;
            let input = match (&predictions, &layer.altup) {
                (Some(p), Some(a)) => p.select(0, a.active as isize)?,
                _ => h.clone(),
            };
            let normed = layer.input_norm.forward(&input)?;
            // (The recurrent mixer beside it first: it reads whether the cache held tokens before.)
            let beside = match &layer.beside {
                Some(mixer) => {
                    let layer_cache = cache.as_mut().map(|c| &mut c.layers[i]);
                    let mask = recurrent_mask.as_ref();
                    Some(recurrent_step(mixer, &normed, mask, layer_cache, self.dtype, true)?)
                }
                None => None,
            };
            let mut layer_cache = cache.as_mut().map(|c| &mut c.layers[i]);
            // (Llama 4's temperature applies to the layers without RoPE alone.)
            let q_scale = q_scale.as_ref().filter(|_| layer.nope || !self.temperature_on_nope_only());
            let shared = match layer.kv_source {
                Some(j) => {
                    // (The layer's cache slot only counts the tokens: it reads layer `j`'s.)
                    if let Some(c) = layer_cache.take() {
                        c.advance(s);
                    }
                    Some(shared_kv[j].as_ref().ok_or_else(|| {
                        Error::Config(format!(
                            "layer {i} reads the keys and values of layer {j}, which has none"
                        ))
                    })?)
                }
                None => None,
            };
            let (mut attn, kv) =
                attn.forward_sharing(&normed, cos, sin, q_scale, mask.as_ref(), layer_cache, shared)?;
            if self.kv_read_later[i] {
                shared_kv[i] = Some(kv);
            }
            if let Some(beside) = beside {
                attn = attn.add(&beside)?;
            }
            let layer_input = per_layer_inputs.as_ref().map(|p| p.select(2, i as isize)).transpose()?;
            if let (Some(altup), Some(predictions)) = (&layer.altup, &predictions) {
                h = layer.after_altup_attention(
                    altup,
                    predictions,
                    (&input, &normed),
                    &attn,
                    layer_input.as_ref(),
                )?;
                continue;
            }
            h = layer.after_attention(&h, &attn)?;
            if let (Some(block), Some(input)) = (&layer.per_layer, &layer_input) {
                h = block.forward(&h, input)?;
            }
            if let Some(scalar) = &layer.scalar {
                h = h.mul(scalar)?;
            }
        }
        h = add_rows_after(replaced, self.layers.len().checked_sub(1), h)?;
        let last = self.layers.len();
        h = self.cross_layers_before(
            last,
            cross.as_ref(),
            h,
            output_hidden_states.then_some(&mut hidden_states),
        )?;
        // (Gemma 3n's last hidden states are its last layer's streams, then averaged and normed.)
        if let Some(streams) = &self.streams {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            return Ok((self.final_states(&streams.collapse(&h)?)?, hidden_states));
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
