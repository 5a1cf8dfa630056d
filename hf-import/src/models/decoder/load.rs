//! Building a [`CausalLm`] from a config, its [`DecoderSpec`] and the checkpoint's tensors, and
//! packing its projection weights into one buffer on the cpu.

use super::*;

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
        // Latent attention expands its keys and values for every head, each head as wide as the
        // widest of its parts; RoPE rotates only the `rope` dims.
        let (kv_heads, head_dim, rotary_width) = match spec.latent {
            Some(d) => (heads, d.padded(), d.rope),
            None => (kv_heads, head_dim, head_dim),
        };
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
        if matches!(model_type, Some("llama" | "gemma3_text" | "gemma3n_text"))
            && !hidden.is_multiple_of(heads)
        {
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
            scale: spec
                .attention_scale
                .unwrap_or(1.0 / (spec.latent.map_or(head_dim, |d| d.qk()) as f64).sqrt()),
            qkv_bias: spec.qkv_bias,
            o_bias: spec.o_bias,
            softcap: spec.attn_softcap,
            qk_norm_whole: spec.qk_norm_whole,
            clip_qkv: spec.clip_qkv,
            clip_after_qk_norm: spec.clip_after_qk_norm,
            latent: spec.latent,
            sinks: spec.sinks,
            qk_norm_after_rope: spec.qk_norm_after_rope,
            output_gate: spec.output_gate,
            v_head_dim: spec.v_head_dim,
            v_scale: spec.v_scale,
            v_norm: spec.v_norm.then_some(eps),
            values_from_keys: false,
            query_only: false,
            differential: None,
            activation_quant: spec.activation_quant,
        };
        check_gemma4_layers(&spec, n_layers, heads, kv_heads, head_dim, intermediate)?;
        let mut layers = Vec::with_capacity(n_layers);
        if spec.mamba.as_ref().is_some_and(|m| m.layers.len() != n_layers)
            || spec.short_conv.as_ref().is_some_and(|c| c.layers.len() != n_layers)
            || spec.delta_net.as_ref().is_some_and(|d| d.layers.len() != n_layers)
        {
            return Err(Error::Config(format!("one layer type per layer is needed ({n_layers} layers)")));
        }
        if let Some(per_layer) = &spec.kv_heads_per_layer {
            let bad = per_layer.iter().find(|&&kv| {
                kv == 0
                    || !heads.is_multiple_of(kv)
                    || kv.checked_mul(head_dim).and_then(|w| w.checked_mul(2)).is_none()
            });
            if per_layer.len() != n_layers || bad.is_some() || spec.heads_per_layer.is_some() {
                return Err(Error::Config(format!(
                    "the key/value heads per layer ({per_layer:?}) need one divisor of num_attention_heads ({heads}) per layer ({n_layers} layers)"
                )));
            }
        }
        if spec.sink_layers.as_ref().is_some_and(|l| l.len() != n_layers) {
            return Err(Error::Config(format!(
                "one attention-sink choice per layer is needed ({n_layers} layers)"
            )));
        }
        if spec.v_head_dim.is_some_and(|v| v == 0 || v > head_dim)
            || (spec.v_head_dim.is_some() && spec.latent.is_some())
        {
            return Err(Error::Unsupported(format!(
                "v_head_dim ({}) must be between 1 and head_dim ({head_dim}): value heads narrower than the query/key \
                 heads are supported, not wider ones",
                spec.v_head_dim.unwrap_or(0)
            )));
        }
        if let Some(per_layer) = &spec.heads_per_layer {
            // (Each layer's projections' widths must exist, as `qkv_width` above.)
            let too_wide =
                |h: usize| h.checked_add(2 * kv_heads).and_then(|n| n.checked_mul(head_dim)).is_none();
            let bad = per_layer.iter().find(|&&h| h == 0 || !h.is_multiple_of(kv_heads) || too_wide(h));
            if per_layer.len() != n_layers || bad.is_some() {
                return Err(Error::Config(format!(
                    "num_attention_heads_per_layer ({per_layer:?}) needs one positive multiple of \
                     num_key_value_heads ({kv_heads}) per layer ({n_layers} layers)"
                )));
            }
        }
        if spec.chunks.len() != n_layers || spec.qk_norm_layers.as_ref().is_some_and(|l| l.len() != n_layers)
        {
            return Err(Error::Config(format!(
                "one attention chunk and q/k norm choice per layer is needed ({n_layers} layers)"
            )));
        }
        if spec.nope.len() != n_layers {
            return Err(Error::Config(format!(
                "{} NoPE flags for {n_layers} layers (no_rope_layers must have one per layer)",
                spec.nope.len()
            )));
        }
        for (i, (window, &local_rope)) in spec.windows.iter().zip(&spec.local_rope).enumerate() {
            let lv = model.pp("layers").pp(i);
            let has_qk_norm = spec.qk_norm && spec.qk_norm_layers.as_ref().is_none_or(|l| l[i]);
            let qk_norm = has_qk_norm.then_some(|v: &Vars<'_>, heads: usize, dim: usize| {
                Ok(if spec.qk_layer_norm {
                    DecoderNorm::Layer(LayerNorm::load(v, dim, eps)?)
                } else if spec.qk_norm_per_head {
                    DecoderNorm::Rms(RmsNorm::load_shaped(v, &[heads, dim], eps, spec.norm_style)?)
                } else {
                    DecoderNorm::Rms(rms(v, dim)?)
                })
            });
            let mut attn_cfg = attn_cfg.clone();
            if let Some(per_layer) = &spec.heads_per_layer {
                attn_cfg.heads = per_layer[i];
            }
            if let Some(per_layer) = &spec.kv_heads_per_layer {
                attn_cfg.kv_heads = per_layer[i];
            }
            if let Some(per_layer) = &spec.head_dims_per_layer {
                attn_cfg.head_dim = per_layer[i];
                // (An explicit scale stays; else the layer's own width sets it.)
                if spec.attention_scale.is_none() {
                    attn_cfg.scale = 1.0 / (per_layer[i] as f64).sqrt();
                }
            }
            attn_cfg.values_from_keys = spec.values_from_keys.as_ref().is_some_and(|l| l[i]);
            if spec.differential {
                attn_cfg.differential =
                    Some(Differential { lambda_init: 0.8 - 0.6 * (-0.3 * i as f64).exp(), eps });
            }
            let kv_source = spec.kv_sources.as_ref().and_then(|s| s[i]);
            attn_cfg.query_only = kv_source.is_some();
            if let Some(with_sinks) = &spec.sink_layers {
                attn_cfg.sinks = spec.sinks && with_sinks[i];
            }
            if spec.scale_by_inverse_layer {
                attn_cfg.scale /= (i + 1) as f64;
            }
            let parts = spec.block_parts.as_ref().map_or(BlockParts::Both, |p| p[i]);
            let mlp = match &spec.moe {
                _ if parts == BlockParts::MixerOnly => None,
                Some(moe) if moe.sparse_layers.get(i) == Some(&true) => {
                    // (A mixture keeps its own matrices, cast as they are read.)
                    let mlp = lv.pp("mlp").casting_matrices();
                    let mixture = match moe.ungated {
                        Some(u) => SparseMoe::load_ungated(
                            &mlp,
                            hidden,
                            moe.intermediate,
                            moe.experts,
                            moe.routing,
                            spec.act,
                            u.latent.map(|width| (width, u.bias)),
                        )?,
                        None => SparseMoe::load(
                            &mlp,
                            hidden,
                            moe.intermediate,
                            moe.experts,
                            moe.routing,
                            spec.act,
                            moe.biased,
                        )?
                        .with_expert_glu(moe.glu),
                    };
                    let mixture = match spec.moe_output_norm {
                        true => mixture.with_output_norm(norm(&mlp.pp("post_mlp_layernorm"), hidden)?),
                        false => mixture,
                    };
                    Some(FeedForward::Sparse(match moe.shared {
                        Some(SharedExpert::Plain(width)) if moe.ungated.is_some() => mixture
                            .with_ungated_shared_experts(&mlp, hidden, width, spec.act, moe.shared_bias)?,
                        Some(SharedExpert::Gated(width)) => {
                            mixture.with_shared_expert(&mlp, hidden, width, spec.act)?
                        }
                        Some(SharedExpert::Plain(width)) => {
                            mixture.with_shared_experts(&mlp, hidden, width, spec.act, moe.shared_bias)?
                        }
                        Some(SharedExpert::Averaged(width)) => mixture
                            .with_shared_experts(&mlp, hidden, width, spec.act, moe.shared_bias)?
                            .averaged_with_shared(),
                        None => mixture,
                    }))
                }
                _ if spec.plain_mlp => {
                    let mlp =
                        GatedMlp::load_plain(&lv.pp("mlp"), hidden, intermediate, spec.act, spec.mlp_bias)?;
                    Some(FeedForward::Dense(match spec.xielu {
                        true => mlp.with_xielu(Xielu::load(&lv.pp("mlp").pp("act_fn").casting_matrices())?),
                        false => mlp,
                    }))
                }
                _ => {
                    let mlp = GatedMlp::load(
                        &lv.pp("mlp"),
                        hidden,
                        spec.intermediate_per_layer.as_ref().map_or(intermediate, |w| w[i]),
                        spec.act,
                        spec.mlp_bias,
                    )?;
                    let mlp = match spec.activation_sparsity.as_ref().map(|s| s[i]) {
                        Some(p) if p > 0.0 => {
                            // (The quantile in float32, as transformers computes it.)
                            mlp.with_glu(Glu::GaussianTopK { multiplier: normal_quantile(p) as f32 as f64 })
                        }
                        _ => mlp,
                    };
                    let width = spec.intermediate_per_layer.as_ref().map_or(intermediate, |w| w[i]);
                    let mlp = match spec.sub_norms {
                        true => mlp.with_inner_norm(norm(&lv.pp("mlp").pp("ffn_sub_norm"), width)?),
                        false => mlp,
                    };
                    Some(FeedForward::Dense(match spec.activation_quant {
                        true => mlp.with_activation_quant(),
                        false => mlp,
                    }))
                }
            };
            let altup = match spec.altup {
                Some(a) => {
                    let alt = lv.pp("altup").casting_matrices();
                    let laurel = lv.pp("laurel").casting_matrices();
                    let n = a.streams;
                    Some(AltUpLayer {
                        prediction_coefs: Linear::load(&alt.pp("prediction_coefs"), n, n * n, false)?,
                        correction_coefs: Linear::load(&alt.pp("correction_coefs"), n, n, false)?,
                        router: Linear::load(&alt.pp("modality_router"), hidden, n, false)?,
                        router_norm: norm(&alt.pp("router_norm"), hidden)?,
                        output_scale: match a.correct_scale {
                            true => Some(alt.get("correct_output_scale", &[hidden])?),
                            false => None,
                        },
                        laurel_left: Linear::load(&laurel.pp("linear_left"), hidden, a.laurel_rank, false)?,
                        laurel_right: Linear::load(&laurel.pp("linear_right"), a.laurel_rank, hidden, false)?,
                        laurel_norm: norm(&laurel.pp("post_laurel_norm"), hidden)?,
                        active: a.active,
                    })
                }
                None => None,
            };
            let experts_beside = match spec.experts_beside {
                Some(moe) => {
                    // (A mixture keeps its own matrices, cast as they are read.)
                    let lv = lv.clone().casting_matrices();
                    let router = lv.pp("router");
                    let experts = SparseMoe::load_experts(
                        &lv.pp("experts"),
                        hidden,
                        moe.intermediate,
                        moe.experts,
                        spec.act,
                        false,
                    )?;
                    let scale = router
                        .get_as_stored("per_expert_scale", &[moe.experts])?
                        .to_dtype(DType::F32)?
                        .to(Device::Cpu)?
                        .contiguous()?
                        .to_vec::<f32>()?;
                    let routing = Routing::softmax(moe.top_k, true, false);
                    let proj = Linear::load(&router.pp("proj"), hidden, moe.experts, false)?;
                    Some(ExpertsBeside {
                        moe: SparseMoe::from_parts(proj, experts, routing)?.with_expert_scale(scale),
                        router_scale: router.get("scale", &[hidden])?,
                        pre_norm: norm(&lv.pp("pre_feedforward_layernorm_2"), hidden)?,
                        post_norm_dense: norm(&lv.pp("post_feedforward_layernorm_1"), hidden)?,
                        post_norm_experts: norm(&lv.pp("post_feedforward_layernorm_2"), hidden)?,
                        eps,
                    })
                }
                None => None,
            };
            let per_layer = match spec.per_layer_inputs {
                Some(p) => Some(PerLayerBlock {
                    gate: Linear::load(
                        &lv.pp("per_layer_input_gate").casting_matrices(),
                        hidden,
                        p.width,
                        false,
                    )?,
                    projection: Linear::load(
                        &lv.pp("per_layer_projection").casting_matrices(),
                        p.width,
                        hidden,
                        false,
                    )?,
                    norm: norm(&lv.pp("post_per_layer_input_norm"), hidden)?,
                    act: spec.act,
                }),
                None => None,
            };
            let scalar = if spec.layer_scalar { Some(lv.get("layer_scalar", &[1])?) } else { None };
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
                input_norm: if spec.post_norms_only
                    || spec.post_norm
                    || parts == BlockParts::FeedForwardOnly
                    || (spec.first_input_norm_identity && i == 0)
                {
                    DecoderNorm::Identity
                } else {
                    norm(&lv.pp("input_layernorm"), hidden)?
                },
                // (A recurrent mixer keeps its own matrices, cast as they are read.)
                mixer: match (&spec.mamba, &spec.short_conv) {
                    _ if parts == BlockParts::FeedForwardOnly => TokenMixer::None,
                    _ if spec.delta_net.as_ref().is_some_and(|d| d.layers[i]) => {
                        let dims = &spec.delta_net.as_ref().expect("checked").dims;
                        TokenMixer::DeltaNet(GatedDeltaNet::load(
                            &lv.pp("linear_attn").casting_matrices(),
                            dims,
                        )?)
                    }
                    (Some(hybrid), _) if hybrid.layers[i] && !hybrid.beside_attention => {
                        let v = lv.pp(hybrid.prefix).casting_matrices();
                        match &hybrid.dims {
                            HybridMixer::Mamba(dims) => TokenMixer::Mamba(MambaMixer::load(&v, dims)?),
                            HybridMixer::Mamba2(dims) => TokenMixer::Mamba2(Mamba2Mixer::load(&v, dims)?),
                        }
                    }
                    (_, Some(conv)) if conv.layers[i] => TokenMixer::ShortConv(ShortConv::load(
                        &lv.pp("conv").casting_matrices(),
                        hidden,
                        conv.kernel,
                        conv.bias,
                    )?),
                    _ => {
                        let attn = SelfAttention::load(&lv.pp("self_attn"), attn_cfg, qk_norm)?;
                        TokenMixer::Attention(Box::new(match spec.sub_norms {
                            true => {
                                attn.with_output_norm(norm(&lv.pp("self_attn").pp("attn_sub_norm"), hidden)?)
                            }
                            false => attn,
                        }))
                    }
                },
                beside: match &spec.mamba {
                    Some(hybrid) if hybrid.layers[i] && hybrid.beside_attention => {
                        let v = lv.pp(hybrid.prefix).casting_matrices();
                        Some(match &hybrid.dims {
                            HybridMixer::Mamba(dims) => TokenMixer::Mamba(MambaMixer::load(&v, dims)?),
                            HybridMixer::Mamba2(dims) => TokenMixer::Mamba2(Mamba2Mixer::load(&v, dims)?),
                        })
                    }
                    _ => None,
                },
                post_attn_norm: match parts {
                    BlockParts::MixerOnly => DecoderNorm::Identity,
                    _ => norm(&lv.pp("post_attention_layernorm"), hidden)?,
                },
                ff_norms,
                mlp,
                window: *window,
                local_rope,
                parallel: spec.parallel_residual,
                residual_multiplier: spec.residual_multiplier,
                nope: spec.nope[i],
                chunk: spec.chunks[i],
                post_norm: if spec.post_norm { Some(norm(&lv.pp("input_layernorm"), hidden)?) } else { None },
                residual_from_norm: spec.residual_from_norm,
                kv_source,
                experts_beside,
                per_layer,
                scalar,
                altup,
            });
        }
        let per_layer_inputs = match spec.per_layer_inputs {
            Some(p) => {
                let all = p.width.checked_mul(n_layers).ok_or_else(|| {
                    Error::Config(format!(
                        "hidden_size_per_layer_input ({}) times num_hidden_layers ({n_layers}) is too large",
                        p.width
                    ))
                })?;
                let plain = model.clone().casting_matrices();
                Some(PerLayerInputs {
                    embed: Embedding::load(&plain.pp("embed_tokens_per_layer"), p.vocab, all)?,
                    projection: Linear::load(&plain.pp("per_layer_model_projection"), hidden, all, false)?,
                    norm: norm(&model.pp("per_layer_projection_norm"), p.width)?,
                    layers: n_layers,
                    width: p.width,
                    clamp_ids: p.clamp_ids,
                })
            }
            None => None,
        };
        let streams = match spec.altup {
            Some(a) => {
                let plain = model.clone().casting_matrices();
                let linears = |name: &str| -> Result<Vec<Linear>> {
                    (0..a.streams.saturating_sub(1))
                        .map(|j| Linear::load(&plain.pp(name).pp(j), hidden, hidden, false))
                        .collect()
                };
                Some(AltUpStreams {
                    projections: linears("altup_projections")?,
                    unembed: linears("altup_unembed_projections")?,
                })
            }
            None => None,
        };
        let embed_norm = if spec.embed_norm { Some(norm(&model.pp("embed_norm"), width)?) } else { None };
        let head_vars = root.pp("head_transform");
        let head_parts = match spec.head_transform.is_some() && head_vars.pp("dense").contains("weight") {
            true => Some((
                Linear::load(&head_vars.pp("dense"), width, width, head_vars.pp("dense").contains("bias"))?,
                norm(&head_vars.pp("norm"), width)?,
            )),
            false => None,
        };
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
        let has_embed = weights.contains("model.embed_tokens.weight");
        let (lm_head, tied) = match root.get_matrix_opt("lm_head.weight", &[vocab, width])? {
            // (transformers 5 ties a head the checkpoint holds only when it equals the embeddings:
            // a config that says tied beside a different `lm_head.weight` keeps that head.)
            Some(w) if !tied || !has_embed || !same_values(&w, &embed.weight)? => {
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
        // (A base model's checkpoint has neither the LM head nor the prediction head before it.)
        let head_transform = match (spec.head_transform, head_parts) {
            (Some(act), Some((dense, norm))) => Some(HeadTransform { dense, act, norm }),
            (Some(_), None) if lm_head.is_some() => {
                return Err(Error::Weight(
                    "tensor 'head_transform.dense.weight' is missing from the checkpoint".into(),
                ))
            }
            _ => None,
        };
        // The frequencies live where the weights do.
        let device = embed.weight.device();
        let rotary_global = if spec.learned_positions || spec.alibi.is_some() {
            Rotary::none()?.to_device(device)?
        } else {
            let width = rotary_width_of(&spec, false).unwrap_or(rotary_width);
            Rotary::new(&cfg.rope(Some("full_attention"))?, width)?.to_device(device)?
        };
        let rotary_local = if spec.uses_local_rope() {
            let width = rotary_width_of(&spec, true).unwrap_or(rotary_width);
            Rotary::new(&cfg.rope(Some("sliding_attention"))?, width)?.to_device(device)?
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
        let mut kv_read_later = vec![false; n_layers];
        for j in spec.kv_sources.iter().flatten().flatten() {
            kv_read_later[*j] = true;
        }
        let mut lm = CausalLm {
            embed,
            positions,
            layers,
            norm,
            lm_head,
            rotary_global,
            rotary_local,
            spec: Box::new(spec),
            hidden,
            dtype,
            tied,
            project_in,
            project_out,
            embed_norm,
            head_transform,
            alibi_slopes,
            alibi_by_kept_tokens,
            per_layer_inputs,
            kv_read_later,
            streams,
            mrope: None,
            cross_layers: Vec::new(),
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
            if let TokenMixer::Attention(attn) = &l.mixer {
                parts.extend(attn.matrices());
            }
            if let Some(mlp) = &l.mlp {
                parts.extend(mlp.matrices());
            }
        }
        if let Some(head) = &self.lm_head {
            parts.push(&head.weight);
        }
        let mut arena = Arena::pack(&parts, self.dtype)?;
        for l in &mut self.layers {
            if let TokenMixer::Attention(attn) = &mut l.mixer {
                attn.unpack(&mut arena)?;
            }
            if let Some(mlp) = &mut l.mlp {
                mlp.unpack(&mut arena)?;
            }
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
}

/// The head width of the layers that take the local (`local`) or the global RoPE, where layers
/// differ in width (see [`DecoderSpec::head_dims_per_layer`]; checked to agree within each kind).
fn rotary_width_of(spec: &DecoderSpec, local: bool) -> Option<usize> {
    let widths = spec.head_dims_per_layer.as_ref()?;
    widths.iter().zip(&spec.local_rope).find(|(_, &l)| l == local).map(|(&w, _)| w)
}

/// Checks Gemma 4's per-layer settings against each other and the model's sizes: one entry per
/// layer, widths whose projections exist, the same head width for the layers of one RoPE, and
/// layers that share keys and values reading an earlier layer of their own shape and window.
fn check_gemma4_layers(
    spec: &DecoderSpec,
    n_layers: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    intermediate: usize,
) -> Result<()> {
    let lengths = [
        spec.activation_sparsity.as_ref().map(Vec::len),
        spec.head_dims_per_layer.as_ref().map(Vec::len),
        spec.values_from_keys.as_ref().map(Vec::len),
        spec.kv_sources.as_ref().map(Vec::len),
        spec.intermediate_per_layer.as_ref().map(Vec::len),
    ];
    if let Some(p) = spec.activation_sparsity.iter().flatten().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(Error::Config(format!("activation_sparsity_pattern values must be in [0, 1], got {p}")));
    }
    if let Some(a) = spec
        .altup
        .filter(|a| a.streams == 0 || a.active >= a.streams || a.streams.checked_mul(a.streams).is_none())
    {
        return Err(Error::Config(format!(
            "altup_active_idx ({}) must be below altup_num_inputs ({}), a positive number of streams",
            a.active, a.streams
        )));
    }
    if lengths.iter().flatten().any(|&n| n != n_layers) {
        return Err(Error::Config(format!(
            "the per-layer head widths, value choices, key/value sources, MLP widths and activation sparsities need one \
             entry per layer ({n_layers} layers)"
        )));
    }
    let head_dim_of = |i: usize| spec.head_dims_per_layer.as_ref().map_or(head_dim, |w| w[i]);
    let kv_heads_of = |i: usize| spec.kv_heads_per_layer.as_ref().map_or(kv_heads, |k| k[i]);
    for i in 0..n_layers {
        let (hd, kv) = (head_dim_of(i), kv_heads_of(i));
        let width = kv.checked_mul(2).and_then(|n| n.checked_add(heads)).and_then(|n| n.checked_mul(hd));
        if hd == 0 || width.is_none() {
            return Err(Error::Config(format!(
                "layer {i}: num_attention_heads ({heads}), its key/value heads ({kv}) and head width ({hd}) must be positive and not too large"
            )));
        }
        let mlp = spec.intermediate_per_layer.as_ref().map_or(intermediate, |w| w[i]);
        if mlp.checked_mul(2).is_none() {
            return Err(Error::Config(format!("layer {i}: the MLP width ({mlp}) is too large")));
        }
        if spec.head_dims_per_layer.is_some()
            && (0..i).any(|j| spec.local_rope[j] == spec.local_rope[i] && head_dim_of(j) != hd)
        {
            return Err(Error::Unsupported(format!(
                "layer {i} has heads of {hd}, unlike an earlier layer of its attention type (layer_types, \
                 per_layer_config): RoPE is one per layer type"
            )));
        }
        if let Some(j) = spec.kv_sources.as_ref().and_then(|s| s[i]) {
            let source_reads = spec.kv_sources.as_ref().and_then(|s| s[j]);
            let same = (head_dim_of(j), kv_heads_of(j), spec.windows[j], spec.local_rope[j])
                == (hd, kv, spec.windows[i], spec.local_rope[i]);
            if j >= i || source_reads.is_some() || !same {
                return Err(Error::Config(format!(
                    "layer {i} cannot attend to the keys and values of layer {j}: it must be an earlier layer of the same                      type and shape that projects its own"
                )));
            }
        }
    }
    Ok(())
}

/// Whether `a` holds exactly `b`'s values (`torch.equal`; `a` read in `b`'s dtype).
fn same_values(a: &Tensor, b: &Tensor) -> Result<bool> {
    Ok(a.dims() == b.dims() && a.to_dtype(b.dtype())?.to(b.device())?.equal(b)?)
}
