"""Dev-time differential fuzzer: random tiny configs per family, transformers vs the `hf-import` CLI.

Run with the reference environment (torch + transformers 5, no network) and a built binary:

    /work/.refenv/bin/python hf-import/tests/diff_fuzz.py --bin target/release/hf-import \
        [--seed 0] [--cases 10] [--family llama,gemma2,...] [--keep DIR] [--no-generate]

For each case it draws a random but valid tiny config of the family, builds the transformers model
with random weights (`torch.manual_seed`, then every parameter redrawn as in make_fixtures.py),
saves it (`save_pretrained`; sometimes a bfloat16 checkpoint, sometimes `pytorch_model.bin`,
sometimes a 4.x-style config.json), reloads it with `from_pretrained(dtype=float32)` as the
reference, draws random inputs (batch 1-3, left or right padding, explicit `position_ids` sometimes,
`token_type_ids` for BERT), runs `hf-import forward --hidden-states --dtype f32` and compares every
output tensor on the non-padded positions (max abs diff / max(1, max |ref|)), then greedy
`generate` of a left-padded batch and compares the token ids. Mismatches are printed at the end with
the config keys that differ from the family's defaults; the exit status is the mismatch count.

Derived families (`BASE`) draw their configs, inputs and checkpoint variants as their base family
does and swap the model class: `bert_cls`, `roberta_cls`, `distilbert_cls`, `xlm_roberta_cls`, `mpnet_cls`,
`modernbert_cls`, the decoders' `llama_cls`, `mistral_cls`, `qwen2_cls`, `qwen3_cls`, `gemma_cls`, `gemma2_cls`,
`phi3_cls`, `gpt2_cls`, `gpt_neox_cls`; the per-token heads `bert_tok`, `bert_qa`, `roberta_qa`,
`xlm_roberta_tok`, `distilbert_tok`, `distilbert_qa`, `mpnet_qa`, `modernbert_tok`, `modernbert_qa`
(`*ForSequenceClassification`, with random labels: transformers' default 2, `num_labels` 1-6 or named
`id2label`, sometimes a `problem_type`; some checkpoints rewrite config.json's labels as a bare
`num_labels` key or as 4.x wrote them) and `xlm_roberta` (`XLMRobertaModel` / `XLMRobertaForMaskedLM`).
`images` runs the vision-language classes with images, `qwen_images` Qwen2-VL and Qwen2.5-VL with images of random
grids (their multimodal RoPE positions), `mllama_images` Llama 3.2 Vision with tiled images of random layouts and
cross-attention masks, `audio` Qwen2-Audio and Voxtral with audio of random lengths, `anyres` LLaVA-NeXT / -Video / OneVision with tiled
images of random sizes (`image_sizes`, OneVision's `batch_num_images`). The image families `vit`, `clip`, `siglip` and `dinov2` (images of other sizes too) get `pixel_values` (and CLIP's texts: ids ending in its eos, right-padded
with it) and no generation; `t5` (T5 and mT5, their three heads) and `bart` (BART and mBART) get sources and `decoder_input_ids`
(BART's sometimes none: the shifted sources), and their generation models generate from the decoder start token;
`whisper` gets mel `input_features` and `decoder_input_ids`; its generation gets random Whisper generation
settings (languages, tasks, `forced_decoder_ids`, suppressed tokens, EOS and pad, lengths) and `--language` /
`--task`.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import torch
import transformers as tf
from safetensors.torch import load_file, save_file

tf.logging.set_verbosity_error()
tf.utils.logging.disable_progress_bar()

TOL = 1e-4  # relative max-abs difference that counts as a mismatch (float32 compute)
GEN_NEW = 8

ACTS = ["silu", "gelu", "gelu_new", "relu", "gelu_pytorch_tanh", "tanh", "gelu_fast", "swish"]


def pick(r, *xs):
    return r.choice(xs)


def heads(r, hidden_choices=(16, 32, 48)):
    h = r.choice(hidden_choices)
    nh = r.choice([n for n in (1, 2, 4, 8) if h % n == 0 and h // n >= 4])
    kv = r.choice([k for k in (1, 2, 4, 8) if nh % k == 0])
    return h, nh, kv


def rope_for(r, head_dim, max_pos, kinds=("default", "linear", "dynamic", "yarn", "llama3")):
    kind = r.choice(kinds)
    theta = r.choice([100.0, 10000.0, 500000.0])
    p = {"rope_type": kind, "rope_theta": theta}
    if kind == "linear":
        p["factor"] = r.choice([2.0, 4.0, 0.5 + r.random() * 4])
    elif kind == "dynamic":
        p["factor"] = r.choice([2.0, 3.0, 1.5])
    elif kind == "yarn":
        p["factor"] = r.choice([2.0, 4.0, 8.0])
        if r.random() < 0.6:
            p["original_max_position_embeddings"] = r.choice([4, 8, 16])
        if r.random() < 0.5:
            p["beta_fast"] = r.choice([4.0, 8.0, 32.0])
            p["beta_slow"] = r.choice([0.25, 1.0])
        if r.random() < 0.3:
            p["attention_factor"] = r.choice([0.8, 1.3])
        if r.random() < 0.3:
            p["mscale"] = 1.0
            p["mscale_all_dim"] = r.choice([0.0, 1.0])
        if r.random() < 0.3:
            p["truncate"] = r.choice([True, False])
    elif kind == "llama3":
        p.update(factor=r.choice([2.0, 8.0]), low_freq_factor=1.0, high_freq_factor=r.choice([2.0, 4.0]),
                 original_max_position_embeddings=r.choice([4, 8, 16]))
    return p


def decoder_common(r, family):
    h, nh, kv = heads(r)
    cfg = dict(
        vocab_size=r.choice([16, 64, 100, 128]),
        hidden_size=h,
        num_hidden_layers=r.randint(1, 3),
        num_attention_heads=nh,
        num_key_value_heads=kv,
        intermediate_size=r.choice([24, 40, 64]),
        max_position_embeddings=r.choice([8, 16, 32, 64]),
        rms_norm_eps=r.choice([1e-6, 1e-5, 1e-3]),
        tie_word_embeddings=r.random() < 0.5,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=r.choice([2, 2, [2, 5], None]),
    )
    if r.random() < 0.4:
        cfg["head_dim"] = r.choice([4, 8, 12, 16])
    return cfg


def gen_llama(r):
    c = decoder_common(r, "llama")
    c["attention_bias"] = r.random() < 0.4
    c["mlp_bias"] = r.random() < 0.3
    c["hidden_act"] = r.choice(ACTS)
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    return tf.LlamaForCausalLM, tf.LlamaConfig, c


def gen_mistral(r):
    c = decoder_common(r, "mistral")
    c["sliding_window"] = r.choice([None, 2, 3, 4, 6])
    c["hidden_act"] = r.choice(["silu", "gelu", "relu"])
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 1e6])}
    return tf.MistralForCausalLM, tf.MistralConfig, c


def gen_qwen2(r):
    c = decoder_common(r, "qwen2")
    c.pop("head_dim", None)  # Qwen2 has no head_dim key
    n = c["num_hidden_layers"]
    if r.random() < 0.6:
        c["use_sliding_window"] = True
        c["sliding_window"] = r.choice([2, 3, 5])
        c["max_window_layers"] = r.randint(0, n)
    if r.random() < 0.3:
        c["use_sliding_window"] = True
        c["sliding_window"] = r.choice([2, 3, 5])
        c["layer_types"] = [r.choice(["full_attention", "sliding_attention"]) for _ in range(n)]
    c["rope_parameters"] = rope_for(r, 0, c["max_position_embeddings"], ("default", "yarn", "linear", "dynamic"))
    return tf.Qwen2ForCausalLM, tf.Qwen2Config, c


def gen_qwen3(r):
    c = decoder_common(r, "qwen3")
    c["head_dim"] = r.choice([4, 8, 16])
    c["attention_bias"] = r.random() < 0.4
    n = c["num_hidden_layers"]
    if r.random() < 0.4:
        c["use_sliding_window"] = True
        c["sliding_window"] = r.choice([2, 3, 5])
        c["max_window_layers"] = r.randint(0, n)
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"], ("default", "yarn", "linear"))
    return tf.Qwen3ForCausalLM, tf.Qwen3Config, c


def gen_mixtral(r):
    """MixtralForCausalLM: Mistral with 2 to 6 experts in every layer, top-k renormalised."""
    c = decoder_common(r, "mixtral")
    c["sliding_window"] = r.choice([None, None, 2, 4])
    c["hidden_act"] = r.choice(["silu", "gelu"])
    c["num_local_experts"] = r.randint(2, 6)
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_local_experts"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 1e6])}
    return tf.MixtralForCausalLM, tf.MixtralConfig, c


def gen_phimoe(r):
    """PhimoeForCausalLM (its classifier: `phimoe_cls`): layer norms, biases at random, 2 to 6 experts under the
    sparsemixer at a random jitter, LongRoPE with PhiMoE's short/long mscales or none."""
    c = decoder_common(r, "phimoe")
    c.pop("head_dim", None)
    hd = c["hidden_size"] // c["num_attention_heads"]
    c["sliding_window"] = r.choice([None, None, 2, 4])
    c["hidden_act"] = r.choice(["silu", "gelu"])
    c["attention_bias"] = r.random() < 0.5
    c["lm_head_bias"] = r.random() < 0.5
    c["num_local_experts"] = r.randint(2, 6)
    c["num_experts_per_tok"] = r.randint(1, 2)
    c["router_jitter_noise"] = r.choice([0.01, 0.1, 0.3, 0.6])
    p = {"rope_type": r.choice(["default", "longrope", "longrope"]), "rope_theta": r.choice([100.0, 10000.0, 1e6])}
    if p["rope_type"] == "longrope":
        p["original_max_position_embeddings"] = r.choice([4, 6, 8])
        p["short_factor"] = [round(1 + r.random() * 3, 3) for _ in range(hd // 2)]
        p["long_factor"] = [round(1 + r.random() * 20, 3) for _ in range(hd // 2)]
        p["short_mscale"] = r.choice([1.0, 1.1, 1.243])
        p["long_mscale"] = r.choice([1.243, 1.3, 0.9])
    c["rope_parameters"] = p
    return tf.PhimoeForCausalLM, tf.PhimoeConfig, c


def gen_qwen3_moe(r):
    """Qwen3MoeForCausalLM: sparse layers by decoder_sparse_step and mlp_only_layers, raw or renormalised top-k."""
    c = decoder_common(r, "qwen3_moe")
    c["head_dim"] = r.choice([4, 8, 16])
    c["attention_bias"] = r.random() < 0.3
    n = c["num_hidden_layers"]
    c.update(num_experts=r.randint(2, 6), moe_intermediate_size=r.choice([16, 24]), norm_topk_prob=r.random() < 0.5,
             decoder_sparse_step=r.choice([1, 1, 2]), mlp_only_layers=sorted(r.sample(range(n), r.randint(0, n - 1))))
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_experts"]))
    if r.random() < 0.3:
        c.update(use_sliding_window=True, sliding_window=r.choice([2, 3, 5]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    return tf.Qwen3MoeForCausalLM, tf.Qwen3MoeConfig, c


def gen_qwen2_moe(r):
    """Qwen2MoeForCausalLM: Qwen2's windows and biases with a mixture plus the gated shared expert."""
    _, _, c = gen_qwen2(r)
    n = c["num_hidden_layers"]
    c.update(num_experts=r.randint(2, 6), moe_intermediate_size=r.choice([16, 24]), norm_topk_prob=r.random() < 0.5,
             shared_expert_intermediate_size=r.choice([16, 40]), decoder_sparse_step=r.choice([1, 1, 2]),
             mlp_only_layers=sorted(r.sample(range(n), r.randint(0, n - 1))), qkv_bias=r.random() < 0.8)
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_experts"]))
    return tf.Qwen2MoeForCausalLM, tf.Qwen2MoeConfig, c


def gen_starcoder2(r):
    """Starcoder2ForCausalLM: layer norms, `use_bias`, the ungated MLP, windows, activations, tying."""
    c = decoder_common(r, "starcoder2")
    c.pop("rms_norm_eps")
    c.update(norm_epsilon=r.choice([1e-5, 1e-6]), use_bias=r.random() < 0.7, sliding_window=r.choice([None, 2, 4]),
             hidden_act=r.choice(["gelu_pytorch_tanh", "gelu", "silu"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 100000.0])}
    return tf.Starcoder2ForCausalLM, tf.Starcoder2Config, c


def gen_phi(r):
    """PhiForCausalLM: the parallel block on one layer norm, RoPE over a share of each head (PhiConfig's 0.5 when
    unset), activations, tying, layer-norm epsilon."""
    c = decoder_common(r, "phi")
    c.pop("rms_norm_eps")
    c.update(layer_norm_eps=r.choice([1e-5, 1e-6]), hidden_act=r.choice(["gelu_new", "gelu", "relu"]))
    rope = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    # (An odd number of rotated dims is refused: transformers' rotation is not defined there.)
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    shares = [p for p in (0.25, 0.5, 1.0) if int(hd * p) % 2 == 0]
    if r.random() < 0.7 or int(hd * 0.5) % 2:
        rope["partial_rotary_factor"] = r.choice(shares)
    c["rope_parameters"] = rope
    return tf.PhiForCausalLM, tf.PhiConfig, c


def gen_gemma(r):
    c = decoder_common(r, "gemma")
    c["head_dim"] = r.choice([4, 8, 16])
    c["hidden_activation"] = r.choice(["gelu_pytorch_tanh", "gelu", "silu"])
    c.pop("tie_word_embeddings")
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    if r.random() < 0.3:
        c["attention_bias"] = True
    return tf.GemmaForCausalLM, tf.GemmaConfig, c


def gen_gemma2(r):
    c = decoder_common(r, "gemma2")
    c["head_dim"] = r.choice([4, 8, 16])
    c["hidden_activation"] = r.choice(["gelu_pytorch_tanh", "gelu"])
    c.pop("tie_word_embeddings")
    c["sliding_window"] = r.choice([2, 3, 4, 6])
    c["query_pre_attn_scalar"] = r.choice([8, 16, 64])
    c["attn_logit_softcapping"] = r.choice([None, 2.0, 50.0])
    c["final_logit_softcapping"] = r.choice([None, 5.0, 30.0])
    if r.random() < 0.4:
        c["layer_types"] = [r.choice(["full_attention", "sliding_attention"]) for _ in range(c["num_hidden_layers"])]
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    return tf.Gemma2ForCausalLM, tf.Gemma2Config, c


def gen_vaultgemma(r):
    """VaultGemmaForCausalLM: Gemma 2's config in plain pre-norm blocks."""
    _, _, c = gen_gemma2(r)
    return tf.VaultGemmaForCausalLM, tf.VaultGemmaConfig, c


def gen_hunyuan(r):
    """HunYuanDenseV1ForCausalLM (its classifier: `hunyuan_cls`): q/k norms after RoPE, the "dynamic" RoPE with a
    fixed alpha or another kind."""
    c = decoder_common(r, "hunyuan_v1_dense")
    c["head_dim"] = r.choice([4, 8, 16])
    c["attention_bias"] = r.random() < 0.3
    if r.random() < 0.6:
        c["rope_parameters"] = {"rope_type": "dynamic", "alpha": r.choice([2.0, 8.0, 1000.0]), "factor": 1.0,
                                "rope_theta": r.choice([100.0, 10000.0])}
    else:
        c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.HunYuanDenseV1ForCausalLM, tf.HunYuanDenseV1Config, c


def gen_granitemoeshared(r):
    """GraniteMoeSharedForCausalLM: Granite-MoE with a shared MLP (or none, shared_intermediate_size 0)."""
    _, _, c = gen_granitemoe(r)
    c["shared_intermediate_size"] = r.choice([0, 8, 16])
    return tf.GraniteMoeSharedForCausalLM, tf.GraniteMoeSharedConfig, c


def gen_apertus(r):
    """ApertusForCausalLM: q/k norms, the ungated MLP under xIELU (its scalars drawn at random too) or another
    activation, RoPE of several kinds."""
    c = decoder_common(r, "apertus")
    c["head_dim"] = r.choice([4, 8, 16])
    c.update(attention_bias=r.random() < 0.3, hidden_act=r.choice(["xielu", "xielu", "relu2", "gelu"]))
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.ApertusForCausalLM, tf.ApertusConfig, c


def gen_mamba(r, falcon=False):
    """MambaForCausalLM (three times in four) or MambaModel, FalconMambaForCausalLM / FalconMambaModel with `falcon`:
    the selective scan over 4-16 states per channel, 1-3 × hidden channels, convolutions of 2-4 with or without a
    bias, biased projections, the step sizes' rank "auto" or explicit, the residual in float32 or not, tied or not."""
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=r.choice([16, 24, 32]), num_hidden_layers=r.randint(1, 3),
             state_size=r.choice([4, 8, 16]), expand=r.choice([1, 2, 3]), conv_kernel=r.choice([2, 3, 4]),
             use_bias=r.random() < 0.3, use_conv_bias=r.random() < 0.8, hidden_act=r.choice(["silu", "silu", "gelu"]),
             residual_in_fp32=r.random() < 0.7, time_step_rank=r.choice(["auto", "auto", 2, 5]),
             layer_norm_epsilon=r.choice([1e-5, 1e-6, 1e-3]), tie_word_embeddings=r.random() < 0.6, pad_token_id=0,
             bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    if falcon:
        c["mixer_rms_eps"] = r.choice([1e-6, 1e-3])
        causal, base, config_cls = tf.FalconMambaForCausalLM, tf.FalconMambaModel, tf.FalconMambaConfig
    else:
        causal, base, config_cls = tf.MambaForCausalLM, tf.MambaModel, tf.MambaConfig
    return r.choice([causal, causal, causal, base]), config_cls, c


def gen_mamba2(r):
    """Mamba2ForCausalLM (three times in four) or Mamba2Model: heads of 4-16 channels in groups sharing B and C, the
    chunked scan over chunks of 2-8 (or the default 256), the step sizes clamped or not, the gated grouped norm."""
    hidden, expand = r.choice([16, 24, 32]), r.choice([1, 2])
    channels = hidden * expand
    head_dim = r.choice([d for d in (4, 8, 16) if channels % d == 0])
    heads = channels // head_dim
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=hidden, expand=expand, num_heads=heads, head_dim=head_dim,
             n_groups=r.choice([g for g in (1, 2, 4) if heads % g == 0]), num_hidden_layers=r.randint(1, 3),
             state_size=r.choice([4, 8, 16]), conv_kernel=r.choice([2, 3, 4]), chunk_size=r.choice([2, 3, 4, 8, 256]),
             use_bias=r.random() < 0.3, use_conv_bias=r.random() < 0.8, residual_in_fp32=r.random() < 0.7,
             layer_norm_epsilon=r.choice([1e-5, 1e-6, 1e-3]), tie_word_embeddings=r.random() < 0.4, pad_token_id=0,
             bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    if r.random() < 0.3:
        c["time_step_limit"] = (r.choice([0.0, 0.01, 0.05]), r.choice([0.5, 1.0, 4.0]))
    return r.choice([tf.Mamba2ForCausalLM] * 3 + [tf.Mamba2Model]), tf.Mamba2Config, c


def gen_gemma3_text(r):
    c = decoder_common(r, "gemma3_text")
    c["head_dim"] = r.choice([4, 8, 16])
    c["hidden_activation"] = r.choice(["gelu_pytorch_tanh", "gelu"])
    c["sliding_window"] = r.choice([2, 3, 4, 6])
    c["query_pre_attn_scalar"] = r.choice([8, 16, 64])
    n = c["num_hidden_layers"]
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["full_attention", "sliding_attention"]) for _ in range(n)]
    else:
        c["sliding_window_pattern"] = r.choice([1, 2, 3, 6])
    if r.random() < 0.3:
        c["final_logit_softcapping"] = 5.0
    if r.random() < 0.3:
        c["attn_logit_softcapping"] = 3.0
    full = rope_for(r, c["head_dim"], c["max_position_embeddings"], ("default", "linear", "yarn", "dynamic"))
    local = {"rope_type": "default", "rope_theta": r.choice([10.0, 100.0, 10000.0])}
    c["rope_parameters"] = {"full_attention": full, "sliding_attention": local}
    return tf.Gemma3ForCausalLM, tf.Gemma3TextConfig, c


def gen_phi3(r):
    c = decoder_common(r, "phi3")
    c.pop("head_dim", None)
    hd = c["hidden_size"] // c["num_attention_heads"]
    prf = r.choice([1.0, 0.5, 0.75]) if hd % 8 == 0 else 1.0
    rot = int(hd * prf)
    if rot % 2:
        prf, rot = 1.0, hd
    c["hidden_act"] = r.choice(["silu", "gelu"])
    c["sliding_window"] = r.choice([None, 3, 5])
    c["max_position_embeddings"] = r.choice([16, 32, 64])
    kind = r.choice(["default", "longrope", "longrope"])
    p = {"rope_type": kind, "rope_theta": r.choice([100.0, 10000.0]), "partial_rotary_factor": prf}
    if kind == "longrope":
        c["original_max_position_embeddings"] = r.choice([4, 6, 8])
        p["short_factor"] = [round(1 + r.random() * 3, 3) for _ in range(rot // 2)]
        p["long_factor"] = [round(1 + r.random() * 20, 3) for _ in range(rot // 2)]
        if r.random() < 0.3:
            p["attention_factor"] = r.choice([0.9, 1.2])
    c["rope_parameters"] = p
    return tf.Phi3ForCausalLM, tf.Phi3Config, c


def gen_bert(r):
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), max_position_embeddings=r.choice([16, 32]),
             type_vocab_size=r.choice([1, 2, 3]), hidden_act=r.choice(["gelu", "relu", "gelu_new", "silu", "tanh"]),
             layer_norm_eps=r.choice([1e-12, 1e-5, 1e-3]), pad_token_id=0)
    cls = r.choice([tf.BertModel, tf.BertForMaskedLM])
    if cls is tf.BertForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.BertConfig, c


def gen_ernie(r):
    """ERNIE (its heads: `ernie_cls`, `ernie_tok`, `ernie_qa`, `ernie_mc`): BERT's config with task-type embeddings
    (use_task_id) sometimes; the base model or the masked LM."""
    _, _, c = gen_bert(r)
    if r.random() < 0.7:
        c.update(use_task_id=True, task_type_vocab_size=r.choice([1, 3]))
    cls = r.choice([tf.ErnieModel, tf.ErnieForMaskedLM])
    if cls is tf.ErnieModel:
        c.pop("tie_word_embeddings", None)
    return cls, tf.ErnieConfig, c


def gen_electra(r):
    """ELECTRA: BERT's config with `embedding_size` narrower than the model (projected), as wide, or left to
    ElectraConfig's 128 default; the base model, the discriminator or the generator (tied or not)."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    choice = r.choice(["narrow", "same", "default"])
    if choice == "narrow":
        c["embedding_size"] = r.choice([4, 8, 12])
    elif choice == "same":
        c["embedding_size"] = c["hidden_size"]
    cls = r.choice([tf.ElectraModel, tf.ElectraForPreTraining, tf.ElectraForMaskedLM])
    if cls is tf.ElectraForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.ElectraConfig, c


def gen_albert(r):
    """ALBERT: BERT's config with narrow embeddings, 1-3 groups of 1-2 shared blocks over the layers; the base model
    (with its pooler) or the MLM head (tied or not)."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    c["embedding_size"] = r.choice([4, 8, c["hidden_size"]])
    c["num_hidden_groups"] = r.randint(1, c["num_hidden_layers"])
    c["inner_group_num"] = r.choice([1, 1, 2])
    if r.random() < 0.3:
        c.pop("hidden_act")  # AlbertConfig's gelu_new
    cls = r.choice([tf.AlbertModel, tf.AlbertForMaskedLM])
    if cls is tf.AlbertForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.AlbertConfig, c


def gen_albert_cls(r):
    _, config_cls, c = gen_albert(r)
    c.pop("tie_word_embeddings", None)
    return tf.AlbertForSequenceClassification, config_cls, with_labels(r, c)


def gen_electra_cls(r):
    _, config_cls, c = gen_electra(r)
    c.pop("tie_word_embeddings", None)
    return tf.ElectraForSequenceClassification, config_cls, with_labels(r, c)


def gen_deberta(r):
    """DebertaV2Model or DebertaV2ForMaskedLM: relative attention or not, a random `pos_att_type` (a list or a `|`
    string), log buckets and spans small enough for the inputs to reach past them, shared or separate position
    projections, normed relative embeddings, absolute positions, token types, narrow embeddings and the first
    layer's convolution at random; the legacy MLM head (tied or not) or v3's `lm_predictions`."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    types = r.sample(["c2p", "p2c"], r.randint(0, 2))
    c.update(layer_norm_eps=r.choice([1e-7, 1e-5]), relative_attention=r.random() < 0.85,
             pos_att_type=types if r.random() < 0.6 else "|".join(types), position_buckets=r.choice([-1, 4, 6, 8]),
             max_relative_positions=r.choice([-1, 4, 8, 12]), share_att_key=r.random() < 0.5,
             norm_rel_ebd=r.choice(["none", "layer_norm"]), position_biased_input=r.random() < 0.5,
             type_vocab_size=r.choice([0, 0, 2]), pooler_hidden_act=r.choice(["gelu", "tanh", "relu"]))
    if r.random() < 0.4:
        c["embedding_size"] = r.choice([8, 12])
    if r.random() < 0.4:
        c.update(conv_kernel_size=r.choice([1, 3, 5]), conv_groups=r.choice([1, 2, 4]),
                 conv_act=r.choice(["tanh", "gelu"]))
    cls = r.choice([tf.DebertaV2Model, tf.DebertaV2ForMaskedLM])
    if cls is tf.DebertaV2ForMaskedLM:
        c["legacy"] = r.random() < 0.7
        if c["legacy"]:
            c["tie_word_embeddings"] = r.random() < 0.5
        else:
            c.pop("embedding_size", None)
    return cls, tf.DebertaV2Config, c


def gen_deberta_v1(r):
    """DeBERTa v1 (DebertaModel, ForMaskedLM, ForSequenceClassification, ForTokenClassification, ForQuestionAnswering):
    the fused `in_proj`, relative attention or not, `pos_att_type` entries v1 only counts in the scale, the span
    clamped below the inputs' lengths at times."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    types = r.sample(["c2p", "p2c", "p2p"], r.randint(0, 3))
    c.update(layer_norm_eps=r.choice([1e-7, 1e-5]), relative_attention=r.random() < 0.85,
             pos_att_type=types if r.random() < 0.6 else "|".join(types), max_relative_positions=r.choice([-1, 3, 6]),
             position_biased_input=r.random() < 0.7, type_vocab_size=r.choice([0, 2]),
             pooler_hidden_act=r.choice(["gelu", "tanh"]))
    if r.random() < 0.3:
        c["embedding_size"] = r.choice([8, 12])
    cls = r.choice([tf.DebertaModel, tf.DebertaForMaskedLM, tf.DebertaForSequenceClassification,
                    tf.DebertaForTokenClassification, tf.DebertaForQuestionAnswering])
    if cls is tf.DebertaForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    if cls in (tf.DebertaForSequenceClassification, tf.DebertaForTokenClassification):
        c = with_labels(r, c)
    return cls, tf.DebertaConfig, c


def gen_nomic_bert(r):
    """NomicBertModel (nomic-embed-text): rotary positions of any RoPE type over the heads, SwiGLU with random
    activations, token types or not, or NomicBertConfig's defaults where a key is left out."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    c["hidden_act"] = r.choice(["silu", "gelu", "gelu_new", "relu"])
    c["max_position_embeddings"] = r.choice([32, 64])
    c["rope_parameters"] = rope_for(r, c["hidden_size"] // c["num_attention_heads"], c["max_position_embeddings"])
    return tf.NomicBertModel, tf.NomicBertConfig, c



def gen_gte(r):
    """GteModel (gte-multilingual-base, gte-*-en-v1.5): NomicBERT's rotary blocks with biases, a gated MLP of random
    activation, token types or none (`type_vocab_size` 0), any RoPE type; saved under the hub's names."""
    _, _, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    c["hidden_act"] = r.choice(["gelu", "silu", "gelu_new", "relu"])
    c["type_vocab_size"] = r.choice([0, 1, 2])
    c["max_position_embeddings"] = r.choice([32, 64])
    c["rope_parameters"] = rope_for(r, c["hidden_size"] // c["num_attention_heads"], c["max_position_embeddings"])
    return tf.GteModel, tf.GteConfig, c



def gen_eurobert(r):
    """EuroBertModel or EuroBertForMaskedLM: a random Llama configuration attending both ways, MLP and head biases at
    random, tied or not."""
    _, _, c = gen_llama(r)
    c.update(mlp_bias=r.random() < 0.4, pad_token_id=0, mask_token_id=3)
    cls = r.choice([tf.EuroBertModel, tf.EuroBertForMaskedLM])
    return cls, tf.EuroBertConfig, c


def gen_esm(r):
    """EsmForMaskedLM (ESM-2 and ESM-1b): rotary or absolute positions, token dropout with a mask id the inputs may
    hold, the embeddings' norm at random, the head tied or not."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), max_position_embeddings=64, pad_token_id=1,
             mask_token_id=r.choice([3, 5, 7]), layer_norm_eps=r.choice([1e-5, 1e-12]),
             position_embedding_type=r.choice(["rotary", "rotary", "absolute"]), token_dropout=r.random() < 0.7,
             emb_layer_norm_before=r.random() < 0.3, tie_word_embeddings=r.random() < 0.8)
    return tf.EsmForMaskedLM, tf.EsmConfig, c


def gen_esm_cls(r):
    _, config_cls, c = gen_esm(r)
    c.pop("tie_word_embeddings", None)
    return tf.EsmForSequenceClassification, config_cls, with_labels(r, c)


def gen_deberta_cls(r):
    _, config_cls, c = gen_deberta(r)
    for k in ("tie_word_embeddings", "legacy"):
        c.pop(k, None)
    return tf.DebertaV2ForSequenceClassification, config_cls, with_labels(r, c)


def gen_roberta(r):
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), max_position_embeddings=r.choice([16, 32]),
             type_vocab_size=r.choice([1, 2]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-12, 1e-5]), pad_token_id=1, bos_token_id=0, eos_token_id=2)
    cls = r.choice([tf.RobertaModel, tf.RobertaForMaskedLM])
    if cls is tf.RobertaForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.RobertaConfig, c


def gen_data2vec_text(r):
    """data2vec-text (its heads: `data2vec_text_cls`, `_tok`, `_qa`, `_mc`): RoBERTa's config on Data2VecTextConfig;
    the base model or the masked LM."""
    _, _, c = gen_roberta(r)
    cls = r.choice([tf.Data2VecTextModel, tf.Data2VecTextForMaskedLM])
    if cls is tf.Data2VecTextModel:
        c.pop("tie_word_embeddings", None)
    return cls, tf.Data2VecTextConfig, c


def gen_gpt2(r):
    """GPT2LMHeadModel: GPT2Config's own key names, learned positions, Conv1D weights, a fused c_attn, random
    activation, inner size, layer-number scaling and tying."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([16, 64, 100]), n_embd=h, n_layer=r.randint(1, 3), n_head=nh, n_positions=64,
             activation_function=r.choice(["gelu_new", "gelu", "relu", "gelu_pytorch_tanh"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-6]), scale_attn_by_inverse_layer_idx=r.random() < 0.3,
             tie_word_embeddings=r.random() < 0.7, bos_token_id=1, eos_token_id=r.choice([2, [2, 5], None]),
             pad_token_id=0)
    if r.random() < 0.4:
        c["n_inner"] = r.choice([24, 40])
    if r.random() < 0.1:
        c["scale_attn_weights"] = False
    return tf.GPT2LMHeadModel, tf.GPT2Config, c


def gen_gpt_neox(r):
    """GPTNeoXForCausalLM: RoPE over a share of each head (4.x `rotary_pct` / `rotary_emb_base` keys or a scaled
    `rope_parameters`), parallel or sequential residuals, attention biases, activations, tying."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 40, 64]), max_position_embeddings=r.choice([32, 64]),
             hidden_act=r.choice(["gelu", "gelu_new", "relu", "silu"]), layer_norm_eps=r.choice([1e-5, 1e-6]),
             use_parallel_residual=r.random() < 0.7, attention_bias=r.random() < 0.7,
             tie_word_embeddings=r.random() < 0.2, bos_token_id=1, eos_token_id=r.choice([2, [2, 5], None]),
             pad_token_id=0)
    pct = r.choice([p for p in (0.25, 0.5, 1.0) if int(h // nh * p) % 2 == 0])
    base = r.choice([100.0, 10000.0])
    if r.random() < 0.5:
        c.update(rotary_pct=pct, rotary_emb_base=base)
    else:
        # (transformers' dynamic NTK divides by rotary dims - 2: none of 2.)
        kinds = ["default", "default", "linear"] + (["dynamic"] if h // nh * pct > 2 else [])
        c["rope_parameters"] = {"rope_type": r.choice(kinds), "rope_theta": base, "partial_rotary_factor": pct}
        if c["rope_parameters"]["rope_type"] != "default":
            c["rope_parameters"]["factor"] = r.choice([2.0, 4.0])
    return tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig, c


def gen_falcon(r):
    """FalconForCausalLM: multi-query (Falcon-7B), grouped `new_decoder_architecture` with one or two norms
    (Falcon-40B/180B) or per-head `query_key_value`; parallel or sequential blocks, biases, activations, RoPE
    scalings, the 4.x `n_head` / `n_layer` keys, tying."""
    h, nh, kv = heads(r)
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             max_position_embeddings=r.choice([32, 64]), activation=r.choice(["gelu", "relu", "silu", "gelu_new"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), bias=r.random() < 0.4, tie_word_embeddings=r.random() < 0.6,
             bos_token_id=1, eos_token_id=r.choice([2, [2, 5], None]), pad_token_id=0)
    kind = r.choice(["7b", "40b", "plain"])
    if kind == "40b":
        c.update(new_decoder_architecture=True, num_kv_heads=kv)
        if r.random() < 0.3:
            c["num_ln_in_parallel_attn"] = 1
    elif kind == "plain":
        c.update(multi_query=False, parallel_attn=r.random() < 0.5)
    else:
        c["parallel_attn"] = r.random() < 0.8
    if r.random() < 0.3:
        c["ffn_hidden_size"] = r.choice([24, 40])
    if r.random() < 0.3:
        c["rope_parameters"] = {"rope_type": r.choice(["linear", "dynamic"]), "rope_theta": r.choice([100.0, 10000.0]),
                                "factor": r.choice([2.0, 4.0])}
    return tf.FalconForCausalLM, tf.FalconConfig, c


def gen_granite(r):
    """GraniteForCausalLM: Llama's config with random multipliers (embeddings, attention, residuals, logits)."""
    _, _, c = gen_llama(r)
    c.update(embedding_multiplier=r.choice([1.0, 12.0, 0.5]), attention_multiplier=r.choice([1.0, 0.0156, 0.2]),
             residual_multiplier=r.choice([1.0, 0.22, 1.7]), logits_scaling=r.choice([1.0, 8.0, 0.25]))
    return tf.GraniteForCausalLM, tf.GraniteConfig, c


def gen_granitemoe(r):
    """GraniteMoeForCausalLM: Granite's multipliers with a mixture of experts in every layer."""
    _, _, c = gen_granite(r)
    c.pop("mlp_bias", None)
    c.update(num_local_experts=r.randint(2, 6))
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_local_experts"]))
    return tf.GraniteMoeForCausalLM, tf.GraniteMoeConfig, c


def gen_granitemoehybrid(r):
    """GraniteMoeHybridForCausalLM (Granite 4.0): Granite-MoE-Shared's config whose layers are Mamba-2 (heads of 4-16
    channels in 1-2 groups, 4-16 states, convolutions of 2-4, chunks of 2-8, biased or not, step sizes clamped or not)
    or attention at random, NoPE or RoPE, the mixture or (no experts) the shared MLP alone; the legacy layer names
    sometimes."""
    _, _, c = gen_granitemoe(r)
    c.pop("rope_parameters", None)
    c.pop("head_dim", None)
    layers = c["num_hidden_layers"]
    names = r.choice([("linear_attention", "full_attention"), ("mamba", "attention")])
    c["layer_types"] = [names[0] if r.random() < 0.6 else names[1] for _ in range(layers)]
    # (transformers' forward fails without an attention layer: its cache has no length.)
    c["layer_types"][r.randrange(layers)] = names[1]
    heads = r.choice([h for h in (2, 4, 8) if (2 * c["hidden_size"]) % h == 0])
    c.update(mamba_n_heads=heads, mamba_n_groups=r.choice([g for g in (1, 2) if heads % g == 0]),
             mamba_d_state=r.choice([4, 8, 16]), mamba_d_conv=r.choice([2, 3, 4]), mamba_chunk_size=r.choice([2, 3, 8]),
             mamba_proj_bias=r.random() < 0.3, mamba_conv_bias=r.random() < 0.8,
             shared_intermediate_size=r.choice([8, 16, 24]))
    if r.random() < 0.3:
        c["num_local_experts"] = 0
    if r.random() < 0.5:
        c["position_embedding_type"] = "rope"
    if r.random() < 0.3:
        c["time_step_limit"] = (r.choice([0.0, 0.05]), r.choice([0.9, 2.0]))
    return tf.GraniteMoeHybridForCausalLM, tf.GraniteMoeHybridConfig, c


def gen_bamba(r):
    """BambaForCausalLM: Llama's config whose layers are Mamba-2 (as gen_granitemoehybrid's) except the random
    `attn_layer_indices`, RoPE over half of each head or the share the rope dict gives."""
    _, _, c = gen_llama(r)
    c.pop("head_dim", None)
    layers = c["num_hidden_layers"]
    # (At least one attention layer: transformers' forward fails without one.)
    c["attn_layer_indices"] = sorted(r.sample(range(layers), r.randint(1, layers)))
    if r.random() < 0.5:
        c.pop("rope_parameters", None)
    elif "rope_parameters" in c and c["rope_parameters"].get("rope_type", "default") == "default":
        c["rope_parameters"]["partial_rotary_factor"] = r.choice([0.5, 1.0])
    # (An odd count of rotated dims is refused, and 4.x configs rotate half of each head: heads of 8 then.)
    if (c["hidden_size"] // c["num_attention_heads"]) % 4:
        c["num_attention_heads"] = c["hidden_size"] // 8
        c["num_key_value_heads"] = r.choice([1, c["num_attention_heads"]])
    heads = r.choice([h for h in (2, 4, 8) if (2 * c["hidden_size"]) % h == 0])
    c.update(mamba_n_heads=heads, mamba_n_groups=r.choice([g for g in (1, 2) if heads % g == 0]),
             mamba_d_state=r.choice([4, 8, 16]), mamba_d_conv=r.choice([2, 3, 4]), mamba_chunk_size=r.choice([2, 3, 8]),
             mamba_proj_bias=r.random() < 0.3, mamba_conv_bias=r.random() < 0.8)
    if r.random() < 0.3:
        c["time_step_limit"] = (r.choice([0.0, 0.05]), r.choice([0.9, 2.0]))
    return tf.BambaForCausalLM, tf.BambaConfig, c


def gen_falcon_h1(r):
    """FalconH1ForCausalLM: Mamba-2 beside the attention in every layer; random µP multipliers, biases, the mixer's
    channels from mamba_d_ssm or mamba_expand, its grouped norm before or after the gate or none; tied or not."""
    c = decoder_common(r, "falcon_h1")
    c.pop("head_dim", None)
    hd = c["hidden_size"] // c["num_attention_heads"]
    c["hidden_act"] = r.choice(["silu", "gelu"])
    c["attention_bias"] = r.random() < 0.4
    c["mlp_bias"] = r.random() < 0.4
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"], kinds=("default", "default", "linear", "yarn"))
    heads = r.choice([2, 4, 8])
    if r.random() < 0.5:
        c.update(mamba_d_ssm=None, mamba_expand=r.choice([1, 2]))
        channels = c["mamba_expand"] * c["hidden_size"]
        if channels % heads:
            heads = 2
    else:
        c["mamba_d_ssm"] = heads * r.choice([4, 8, 12])
    c.update(mamba_n_heads=heads, mamba_n_groups=r.choice([g for g in (1, 2) if heads % g == 0]),
             mamba_d_state=r.choice([4, 8, 16]), mamba_d_conv=r.choice([2, 3, 4]), mamba_chunk_size=r.choice([2, 3, 8]),
             mamba_proj_bias=r.random() < 0.3, mamba_conv_bias=r.random() < 0.8, projectors_bias=r.random() < 0.3,
             mamba_rms_norm=r.random() < 0.5, mamba_norm_before_gate=r.random() < 0.5)
    if r.random() < 0.3:
        c["time_step_limit"] = (r.choice([0.0, 0.05]), r.choice([0.9, 2.0]))
    m = lambda: r.choice([1.0, 0.5, 0.8, 1.3, 2.0])
    if r.random() < 0.8:
        c.update(key_multiplier=m(), attention_in_multiplier=m(), attention_out_multiplier=m(), ssm_in_multiplier=m(),
                 ssm_out_multiplier=m(), embedding_multiplier=m(), lm_head_multiplier=m(),
                 ssm_multipliers=[m() for _ in range(5)], mlp_multipliers=[m(), m()])
    return tf.FalconH1ForCausalLM, tf.FalconH1Config, c


def gen_lfm2(r):
    """Lfm2ForCausalLM: gated short convolutions (widths 2-4, biased or not) or attention with q/k norms on each layer
    (at least one attention layer: transformers' forward fails without one), the SwiGLU width derived or given, tied or
    not; the older keys (`full_attn_idxs`, `block_ff_dim`) sometimes."""
    h, nh, kv = heads(r)
    layers = r.randint(1, 3)
    types = [r.choice(["conv", "full_attention"]) for _ in range(layers)]
    types[r.randrange(layers)] = "full_attention"
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=layers, num_attention_heads=nh,
             num_key_value_heads=kv, max_position_embeddings=r.choice([16, 32, 64]), norm_eps=r.choice([1e-5, 1e-3]),
             conv_L_cache=r.choice([2, 3, 4]), conv_bias=r.random() < 0.3, tie_word_embeddings=r.random() < 0.6,
             block_auto_adjust_ff_dim=r.random() < 0.7, block_multiple_of=r.choice([1, 8, 16]),
             block_ffn_dim_multiplier=r.choice([1.0, 1.5]), pad_token_id=0, bos_token_id=1,
             eos_token_id=r.choice([2, 2, None]))
    if r.random() < 0.3:
        c["full_attn_idxs"] = [i for i, t in enumerate(types) if t == "full_attention"]
    else:
        c["layer_types"] = types
    if r.random() < 0.3:
        c["block_ff_dim"] = r.choice([24, 48, 64])
    else:
        c["intermediate_size"] = r.choice([24, 48, 64])
    if r.random() < 0.4:
        c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 1000000.0])}
    return tf.Lfm2ForCausalLM, tf.Lfm2Config, c


def gen_jamba(r):
    """JambaForCausalLM (its classifier: `jamba_cls`): Mamba layers (learned step-size, B and C norms; 4-16 states,
    convolutions of 2-4, the rank "auto" or explicit, biased or not) and attention at a random period and offset (at
    least one attention layer: transformers' forward fails without one), mixtures of 2-6 experts at another period or
    none."""
    _, _, c = gen_llama(r)
    for k in ("head_dim", "rope_parameters", "attention_bias", "mlp_bias"):
        c.pop(k, None)
    layers = r.randint(2, 4)
    period = r.randint(1, layers)
    c.update(num_hidden_layers=layers, attn_layer_period=period, attn_layer_offset=r.randrange(period),
             expert_layer_period=r.randint(1, 3), mamba_d_state=r.choice([4, 8, 16]), mamba_d_conv=r.choice([2, 3, 4]),
             mamba_expand=r.choice([1, 2]), mamba_dt_rank=r.choice(["auto", "auto", 3]),
             mamba_proj_bias=r.random() < 0.3, mamba_conv_bias=r.random() < 0.8,
             num_experts=r.choice([1, 2, 4, 6]))
    c["expert_layer_offset"] = r.randrange(c["expert_layer_period"])
    c["num_experts_per_tok"] = r.randint(1, min(2, c["num_experts"]))
    return tf.JambaForCausalLM, tf.JambaConfig, c


def gen_nemotron_h(r):
    """NemotronHForCausalLM: 2-5 blocks of Mamba-2 (heads of 4-8 channels in 1-2 groups, 4-16 states, convolutions of 2-4,
    chunks of 2-8, the step sizes' floor), attention without positions (at least one: transformers' forward fails without
    one), the ungated MLP (squared ReLU or another activation) or (Nemotron 3) a mixture of ungated experts under grouped
    sigmoid routing with a shared expert, in a latent width sometimes; the pattern in the older key sometimes."""
    h, nh, kv = heads(r)
    n = r.randint(2, 5)
    types = [r.choice(["linear_attention", "full_attention", "mlp", "moe"]) for _ in range(n)]
    types[r.randrange(n)] = "full_attention"
    head_dim = r.choice([4, 8])
    mheads = r.choice([2, 4, 8])
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_attention_heads=nh, num_key_value_heads=kv,
             head_dim=r.choice([4, 8, 16]), intermediate_size=r.choice([24, 48]), max_position_embeddings=64,
             mamba_num_heads=mheads, mamba_head_dim=head_dim, n_groups=r.choice([g for g in (1, 2) if mheads % g == 0]),
             ssm_state_size=r.choice([4, 8, 16]), conv_kernel=r.choice([2, 3, 4]), chunk_size=r.choice([2, 3, 8]),
             time_step_min=r.choice([0.001, 0.05]), use_bias=r.random() < 0.3, use_conv_bias=r.random() < 0.8,
             mlp_hidden_act=r.choice(["relu2", "relu2", "silu", "gelu"]), mlp_bias=r.random() < 0.3,
             attention_bias=r.random() < 0.3, layer_norm_epsilon=r.choice([1e-5, 1e-3]),
             tie_word_embeddings=r.random() < 0.4, pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    if "moe" in types:
        groups, per = r.choice([1, 2]), r.choice([2, 3])
        c.update(n_routed_experts=groups * per, moe_intermediate_size=r.choice([8, 16]),
                 moe_shared_expert_intermediate_size=r.choice([8, 24]), n_group=groups, topk_group=r.randint(1, groups),
                 norm_topk_prob=r.random() < 0.6, routed_scaling_factor=r.choice([1.0, 2.5]))
        c["num_experts_per_tok"] = r.randint(1, min(3, c["topk_group"] * per))
        if r.random() < 0.3:
            c["moe_latent_size"] = r.choice([8, 16])
    if r.random() < 0.3:
        c["hybrid_override_pattern"] = "".join({"linear_attention": "M", "full_attention": "*", "mlp": "-", "moe": "E"}[t]
                                               for t in types)
    else:
        c["layers_block_type"] = types
    return tf.NemotronHForCausalLM, tf.NemotronHConfig, c


def gen_qwen3_5(r):
    """Qwen3_5ForCausalLM: gated delta nets (1-2 key heads of 4-16, value heads a multiple of them, convolutions of
    2-4) and gated attention (at least one layer) from `layer_types` or the default interval, q/k norms, RoPE over a
    quarter of each head (or another share), attention biases, tied or not."""
    h, nh, kv = heads(r)
    layers = r.randint(1, 4)
    kh = r.choice([1, 2])
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=layers, num_attention_heads=nh,
             num_key_value_heads=kv, head_dim=r.choice([8, 16]), intermediate_size=r.choice([24, 48]),
             max_position_embeddings=r.choice([32, 64]), rms_norm_eps=r.choice([1e-6, 1e-3]),
             linear_num_key_heads=kh, linear_key_head_dim=r.choice([4, 8, 16]),
             linear_num_value_heads=kh * r.choice([1, 2]), linear_value_head_dim=r.choice([4, 8]),
             linear_conv_kernel_dim=r.choice([2, 3, 4]), attention_bias=r.random() < 0.3,
             tie_word_embeddings=r.random() < 0.4, pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    if r.random() < 0.6:
        types = [r.choice(["linear_attention", "full_attention"]) for _ in range(layers)]
        types[r.randrange(layers)] = "full_attention"
        c["layer_types"] = types
    else:
        c["num_hidden_layers"] = 4
    if r.random() < 0.3:
        c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([10000.0, 1e7]),
                                "partial_rotary_factor": r.choice([0.25, 0.5, 1.0])}
    return tf.Qwen3_5ForCausalLM, tf.Qwen3_5TextConfig, c


def gen_qwen3_next(r):
    """Qwen3NextForCausalLM: gen_qwen3_5's layers with a mixture of 2-6 experts (top 1-3, renormalised or not, the gated
    shared expert) every `decoder_sparse_step`-th layer outside `mlp_only_layers`."""
    _, _, c = gen_qwen3_5(r)
    n = r.randint(2, 6)
    c.update(num_experts=n, num_experts_per_tok=r.randint(1, min(3, n)), moe_intermediate_size=r.choice([8, 16]),
             shared_expert_intermediate_size=r.choice([8, 24]), norm_topk_prob=r.random() < 0.7,
             decoder_sparse_step=r.choice([1, 1, 2]))
    if r.random() < 0.3:
        c["mlp_only_layers"] = [0]
    return tf.Qwen3NextForCausalLM, tf.Qwen3NextConfig, c


def gen_qwen3_5_moe(r):
    """Qwen3_5MoeForCausalLM: gen_qwen3_5's layers with a mixture of 2-6 experts (top 1-3, renormalised, the gated shared
    expert) on every layer."""
    _, _, c = gen_qwen3_5(r)
    n = r.randint(2, 6)
    c.update(num_experts=n, num_experts_per_tok=r.randint(1, min(3, n)), moe_intermediate_size=r.choice([8, 16]),
             shared_expert_intermediate_size=r.choice([8, 24]))
    c.pop("intermediate_size", None)
    return tf.Qwen3_5MoeForCausalLM, tf.Qwen3_5MoeTextConfig, c


def gen_hunyuan_moe(r):
    """HunYuanMoEV1ForCausalLM: gen_hunyuan's blocks with a mixture of 1-6 experts (top 1-3 renormalised, `moe_topk` a
    number or a per-layer list of one value) plus the shared MLP."""
    _, _, c = gen_hunyuan(r)
    n = r.randint(1, 6)
    k = r.randint(1, min(3, n))
    layers = c["num_hidden_layers"]
    c["num_experts"] = n
    c["moe_topk"] = [k] * layers if r.random() < 0.3 else k
    return tf.HunYuanMoEV1ForCausalLM, tf.HunYuanMoEV1Config, c


def gen_smollm3(r):
    """SmolLM3ForCausalLM: Llama's config with NoPE layers (a random list, or an interval) and, at times, windows on
    them."""
    _, _, c = gen_llama(r)
    n = c["num_hidden_layers"]
    if r.random() < 0.5:
        c["no_rope_layers"] = [r.choice([0, 1]) for _ in range(n)]
    else:
        c["no_rope_layer_interval"] = r.choice([1, 2, 4])
    if r.random() < 0.4:
        c.update(use_sliding_window=True, sliding_window=r.choice([2, 3, 5]))
    c["tie_word_embeddings"] = r.random() < 0.6
    return tf.SmolLM3ForCausalLM, tf.SmolLM3Config, c


def gen_cohere(r):
    """CohereForCausalLM (the parallel block on one weight-only layer norm, interleaved RoPE of any type, per-head
    q/k norms at times, the logit scale) or Cohere2ForCausalLM (random layer types or a `sliding_window_pattern`,
    windows with RoPE, full layers without)."""
    c = decoder_common(r, "cohere")
    c["layer_norm_eps"] = c.pop("rms_norm_eps")
    c.update(attention_bias=r.random() < 0.4, hidden_act=r.choice(ACTS),
             logit_scale=r.choice([0.0625, 0.25, 1.0, 3.0]), tie_word_embeddings=r.random() < 0.7)
    if r.random() < 0.5:
        hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
        c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
        c["use_qk_norm"] = r.random() < 0.5
        return tf.CohereForCausalLM, tf.CohereConfig, c
    if r.random() < 0.7:  # (Cohere 2 reads an explicit head_dim, else hidden_size / num_attention_heads)
        c.pop("head_dim", None)
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    c["sliding_window"] = r.choice([2, 3, 5])
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(c["num_hidden_layers"])]
    else:
        c["sliding_window_pattern"] = r.choice([1, 2, 4])
    return tf.Cohere2ForCausalLM, tf.Cohere2Config, c


def gen_opt(r):
    """OPTForCausalLM (its classifier: `opt_cls`): biases or not, norm parameters or not, random activations,
    learned positions offset by 2 and counted over the kept tokens; at times opt-350m's post-norm blocks, projected
    embeddings (`word_embed_proj_dim`, or null: the hidden size) and no final norm."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100, 128]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             ffn_dim=r.choice([24, 64]), max_position_embeddings=r.choice([16, 32, 64]),
             word_embed_proj_dim=r.choice([h, h, None, 8, 24]), do_layer_norm_before=r.random() < 0.6,
             enable_bias=r.random() < 0.7, layer_norm_elementwise_affine=r.random() < 0.8,
             activation_function=r.choice(["relu", "gelu", "silu", "gelu_new"]), tie_word_embeddings=r.random() < 0.8,
             pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    if r.random() < 0.15:
        c["_remove_final_layer_norm"] = True
    return tf.OPTForCausalLM, tf.OPTConfig, c


def gen_gptj(r):
    """GPTJForCausalLM (its classifier: `gptj_cls`): interleaved RoPE over an even share of each head (or all of
    it), the parallel block, random activations and MLP widths, tied or untied."""
    h, nh, _ = heads(r)
    hd = h // nh
    c = dict(vocab_size=r.choice([64, 100, 128]), n_embd=h, n_layer=r.randint(1, 3), n_head=nh,
             n_positions=r.choice([32, 64]), rotary_dim=r.choice([d for d in range(2, hd + 1, 2)]),
             n_inner=r.choice([None, 24, 64]), activation_function=r.choice(["gelu_new", "gelu", "relu", "silu"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), tie_word_embeddings=r.random() < 0.3,
             pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.GPTJForCausalLM, tf.GPTJConfig, c


def gen_gpt_neo(r):
    """GPTNeoForCausalLM (its classifier: `gpt_neo_cls`): unscaled scores, q/k/v without biases, a random mix of
    global and local layers (`attention_types` of one or two entries) with windows the inputs cross or not, random
    activations and MLP widths, tied or untied."""
    h, nh, _ = heads(r)
    layers = r.randint(1, 4)
    kinds = [r.choice(["global", "local"]) for _ in range(layers)]
    if layers > 1 and r.random() < 0.5:
        # (One entry repeated, as the released configs write theirs.)
        kinds = (kinds[:1] + ["local" if kinds[0] == "global" else "global"]) * (layers // 2)
        if len(kinds) < layers:
            kinds.append("global")
        types = [[kinds[:2], layers // 2]] + ([[["global"], 1]] if layers % 2 else [])
    else:
        types = [[[k], 1] for k in kinds]
    c = dict(vocab_size=r.choice([64, 100, 128]), hidden_size=h, num_layers=layers, num_heads=nh,
             max_position_embeddings=r.choice([32, 64]), attention_types=types, window_size=r.choice([1, 2, 3, 5, 256]),
             intermediate_size=r.choice([None, 24, 64]), activation_function=r.choice(["gelu_new", "gelu", "relu", "silu"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), tie_word_embeddings=r.random() < 0.7,
             pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.GPTNeoForCausalLM, tf.GPTNeoConfig, c


def gen_bloom(r):
    """BloomForCausalLM (its classifier: `bloom_cls`): ALiBi over head counts on and off a power of two, the
    embeddings' norm, residuals after the norms at random, the old `n_embed` name, tied or untied."""
    h = r.choice([24, 32, 48])
    nh = r.choice([n for n in (1, 2, 3, 4, 6, 8) if h % n == 0 and h // n >= 4])
    c = dict(vocab_size=r.choice([64, 100, 128]), n_layer=r.randint(1, 3), n_head=nh,
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), apply_residual_connection_post_layernorm=r.random() < 0.3,
             tie_word_embeddings=r.random() < 0.7, pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    c["n_embed" if r.random() < 0.2 else "hidden_size"] = h
    return tf.BloomForCausalLM, tf.BloomConfig, c


def gen_gpt_bigcode(r):
    """GPTBigCodeForCausalLM (its classifier: `gpt_bigcode_cls`): multi-query attention or the per-head layout,
    scaled scores or not, random activations and MLP widths, tied or untied."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100, 128]), n_embd=h, n_layer=r.randint(1, 3), n_head=nh,
             n_positions=r.choice([32, 64]), n_inner=r.choice([None, 24, 64]), multi_query=r.random() < 0.6,
             scale_attn_weights=r.random() < 0.8,
             activation_function=r.choice(["gelu_pytorch_tanh", "gelu", "relu", "gelu_new"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), tie_word_embeddings=r.random() < 0.7,
             pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.GPTBigCodeForCausalLM, tf.GPTBigCodeConfig, c


def gen_mpt(r):
    """MptForCausalLM (its classifier: `mpt_cls`): ALiBi by column over head counts on and off a power of two,
    clip_qkv and softmax_scale at random, tied or untied."""
    h = r.choice([24, 32, 48])
    nh = r.choice([n for n in (1, 2, 3, 4, 6, 8) if h % n == 0 and h // n >= 4])
    attn = {}
    if r.random() < 0.3:
        attn["clip_qkv"] = r.choice([0.3, 1.0, 6.0])
    if r.random() < 0.3:
        attn["softmax_scale"] = r.choice([0.1, 0.5])
    c = dict(vocab_size=r.choice([64, 100, 128]), d_model=h, n_layers=r.randint(1, 3), n_heads=nh,
             max_seq_len=r.choice([32, 64]), layer_norm_epsilon=r.choice([1e-5, 1e-3]), attn_config=attn or None,
             tie_word_embeddings=r.random() < 0.7, pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.MptForCausalLM, tf.MptConfig, c


def gen_codegen(r):
    """CodeGenForCausalLM: GPT-J's block from the four-shard `qkv_proj`, interleaved RoPE over an even share of
    each head, random activations and MLP widths, tied or untied."""
    h, nh, _ = heads(r)
    hd = h // nh
    c = dict(vocab_size=r.choice([64, 100, 128]), n_embd=h, n_layer=r.randint(1, 3), n_head=nh,
             n_positions=r.choice([32, 64]), rotary_dim=r.choice([d for d in range(2, hd + 1, 2)]),
             n_inner=r.choice([None, 24, 64]), activation_function=r.choice(["gelu_new", "gelu", "relu", "silu"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), tie_word_embeddings=r.random() < 0.3,
             pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.CodeGenForCausalLM, tf.CodeGenConfig, c


def gen_olmoe(r):
    """OlmoeForCausalLM: whole-projection q/k norms then clip_qkv at random, a mixture in every layer, raw or
    renormalised top-k, attention biases at random."""
    c = decoder_common(r, "olmoe")
    c.pop("head_dim", None)
    c.update(num_experts=r.randint(2, 6), norm_topk_prob=r.random() < 0.5, attention_bias=r.random() < 0.3,
             clip_qkv=r.choice([None, None, 0.5, 3.0]))
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_experts"]))
    return tf.OlmoeForCausalLM, tf.OlmoeConfig, c


def gen_flex_olmo(r):
    """FlexOlmoForCausalLM: OLMo 2's post-norm blocks with OLMoE's mixture, raw or renormalised top-k."""
    c = decoder_common(r, "flex_olmo")
    c.pop("head_dim", None)
    c.update(num_experts=r.randint(2, 6), norm_topk_prob=r.random() < 0.5, attention_bias=r.random() < 0.3)
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_experts"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 500000.0])}
    return tf.FlexOlmoForCausalLM, tf.FlexOlmoConfig, c


def gen_nemotron(r):
    """NemotronForCausalLM (its classifier: `nemotron_cls`): LayerNorm1P norms, an ungated MLP (relu2 or another
    activation), RoPE over a random share of each head (half by default), biases at random."""
    c = decoder_common(r, "nemotron")
    c["norm_eps"] = c.pop("rms_norm_eps")
    c.update(attention_bias=r.random() < 0.3, mlp_bias=r.random() < 0.3, hidden_act=r.choice(["relu2", "relu2", "gelu"]))
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    shares = [f for f in (0.25, 0.5, 1.0) if int(hd * f) % 2 == 0 and int(hd * f) > 0]
    if r.random() < 0.5:
        c["partial_rotary_factor"] = r.choice(shares)
    elif 0.5 not in shares:
        c["partial_rotary_factor"] = 1.0
    return tf.NemotronForCausalLM, tf.NemotronConfig, c


def gen_glm(r, glm4=False):
    """GlmForCausalLM (with `glm4`: Glm4ForCausalLM; the classifier: `glm_cls`): q/k/v biases or not, the fused
    gate_up_proj, interleaved RoPE over a random even share of each head (half by default)."""
    c = decoder_common(r, "glm")
    c["head_dim"] = r.choice([4, 8, 12, 16])
    c.update(attention_bias=r.random() < 0.7, hidden_act=r.choice(["silu", "gelu", "silu"]))
    shares = [f for f in (0.25, 0.5, 1.0) if int(c["head_dim"] * f) % 2 == 0 and int(c["head_dim"] * f) > 0]
    if r.random() < 0.5:
        c["partial_rotary_factor"] = r.choice(shares)
    elif 0.5 not in shares:
        c["partial_rotary_factor"] = 1.0
    if glm4:
        return tf.Glm4ForCausalLM, tf.Glm4Config, c
    return tf.GlmForCausalLM, tf.GlmConfig, c


def gen_biogpt(r):
    """BioGptForCausalLM (its classifier: `biogpt_cls`): scaled embeddings or not, random activations, learned
    positions offset by 2, tied or untied."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100, 128]), hidden_size=h, num_hidden_layers=r.randint(1, 3),
             num_attention_heads=nh, intermediate_size=r.choice([24, 64]), max_position_embeddings=r.choice([32, 64]),
             scale_embedding=r.random() < 0.7, hidden_act=r.choice(["gelu", "relu", "gelu_new", "silu"]),
             tie_word_embeddings=r.random() < 0.7, pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.BioGptForCausalLM, tf.BioGptConfig, c


def gen_xglm(r):
    """XGLMForCausalLM: sinusoidal positions offset by 2 with the padding id's row zeroed (a padding id at random),
    scaled embeddings or not, random activations and MLP widths, tied or untied."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100, 128]), d_model=h, num_layers=r.randint(1, 3), attention_heads=nh,
             ffn_dim=r.choice([24, 64]), max_position_embeddings=r.choice([32, 64]), scale_embedding=r.random() < 0.7,
             activation_function=r.choice(["gelu", "relu", "gelu_new", "silu"]), tie_word_embeddings=r.random() < 0.7,
             pad_token_id=r.choice([0, 1, 1, 4]), bos_token_id=1, eos_token_id=r.choice([2, 2, None]))
    return tf.XGLMForCausalLM, tf.XGLMConfig, c


def gen_arcee(r):
    """ArceeForCausalLM (its classifier: `arcee_cls`): Llama's config with the ungated MLP (relu2 or another
    activation), biases at random."""
    c = decoder_common(r, "arcee")
    c.update(attention_bias=r.random() < 0.3, mlp_bias=r.random() < 0.3, hidden_act=r.choice(["relu2", "relu2", "silu"]))
    return tf.ArceeForCausalLM, tf.ArceeConfig, c


def gen_ernie4_5(r):
    """Ernie4_5ForCausalLM: Llama's config with interleaved whole-head RoPE and biases on every projection at
    random."""
    c = decoder_common(r, "ernie4_5")
    c["head_dim"] = r.choice([4, 8, 12, 16])
    c.update(use_bias=r.random() < 0.4, hidden_act=r.choice(["silu", "gelu"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 500000.0])}
    return tf.Ernie4_5ForCausalLM, tf.Ernie4_5Config, c


def deepseek_common(r, family):
    """What DeepSeek-V2 and V3 share: latent attention of random widths (low-rank or full q, values narrower or
    wider than the keys), RoPE of several kinds (YaRN with mscale_all_dim scaling the scores), dense layers then
    routed and shared experts."""
    c = decoder_common(r, family)
    c.pop("head_dim", None)
    c["num_key_value_heads"] = c["num_attention_heads"]
    c.update(kv_lora_rank=r.choice([4, 8, 16]), q_lora_rank=r.choice([None, 8, 12]), qk_nope_head_dim=r.choice([2, 4, 8]),
             qk_rope_head_dim=r.choice([2, 4, 8]), v_head_dim=r.choice([2, 4, 8, 12]), attention_bias=r.random() < 0.3,
             moe_intermediate_size=r.choice([8, 16]), n_shared_experts=r.choice([1, 2]),
             first_k_dense_replace=r.randint(0, c["num_hidden_layers"]), hidden_act=r.choice(["silu", "gelu"]),
             routed_scaling_factor=r.choice([1.0, 1.0, 2.5]))
    rope = rope_for(r, c["qk_rope_head_dim"], c["max_position_embeddings"], kinds=("default", "yarn", "yarn", "linear"))
    if rope["rope_type"] == "yarn" and r.random() < 0.5:
        rope.update(mscale=r.choice([0.707, 1.0]), mscale_all_dim=r.choice([0.707, 1.0]))
    c["rope_parameters"] = rope
    return c


def gen_deepseek_v3(r):
    """DeepseekV3ForCausalLM (its classifier: `deepseek_v3_cls`): sigmoid routing biased by a random
    e_score_correction_bias among the best groups, renormalised or not, interleaved RoPE or not."""
    c = deepseek_common(r, "deepseek_v3")
    groups, per = r.choice([1, 2, 4]), r.choice([2, 3])
    c.update(n_routed_experts=groups * per, n_group=groups, topk_group=r.randint(1, groups),
             norm_topk_prob=r.random() < 0.7, rope_interleave=r.random() < 0.6)
    c["num_experts_per_tok"] = r.randint(1, min(4, c["topk_group"] * per))
    return tf.DeepseekV3ForCausalLM, tf.DeepseekV3Config, c


def gen_deepseek_v2(r):
    """DeepseekV2ForCausalLM: greedy or group-limited softmax routing (never renormalised)."""
    c = deepseek_common(r, "deepseek_v2")
    groups, per = r.choice([1, 2, 4]), r.choice([1, 2, 3])
    c.update(n_routed_experts=groups * per, norm_topk_prob=r.random() < 0.5)
    if r.random() < 0.5:
        c.update(topk_method="group_limited_greedy", n_group=groups, topk_group=r.randint(1, groups))
        c["num_experts_per_tok"] = r.randint(1, min(4, c["topk_group"] * per))
    else:
        c["num_experts_per_tok"] = r.randint(1, min(4, groups * per))
    return tf.DeepseekV2ForCausalLM, tf.DeepseekV2Config, c


def v3_routing(r, c):
    """DeepSeek-V3-style routing at random: groups of 2 or 3 experts, some of the groups, normalised or not, scaled."""
    groups, per = r.choice([1, 2, 4]), r.choice([2, 3])
    c.update(n_routed_experts=groups * per, n_group=groups, topk_group=r.randint(1, groups),
             norm_topk_prob=r.random() < 0.6, routed_scaling_factor=r.choice([1.0, 2.5]),
             moe_intermediate_size=r.choice([8, 16]), n_shared_experts=r.choice([1, 2]),
             first_k_dense_replace=r.randint(0, c["num_hidden_layers"]))
    c["num_experts_per_tok"] = r.randint(1, min(4, c["topk_group"] * per))


def gen_glm4_moe(r):
    """Glm4MoeForCausalLM: partial half-split RoPE (the class's 0.5 or another share), biases and q/k norms at
    random, DeepSeek-V3's routing."""
    c = decoder_common(r, "glm4_moe")
    c.update(attention_bias=r.random() < 0.5, use_qk_norm=r.random() < 0.5)
    v3_routing(r, c)
    rope = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    if r.random() < 0.5:  # (shares that rotate an even number of dims: transformers' rotation needs pairs)
        rope["partial_rotary_factor"] = r.choice([f for f in (0.25, 0.5, 1.0) if int(hd * f) % 2 == 0 and hd * f >= 2])
    elif int(hd * 0.5) % 2 == 1:
        rope["partial_rotary_factor"] = 1.0
    c["rope_parameters"] = rope
    return tf.Glm4MoeForCausalLM, tf.Glm4MoeConfig, c


def gen_dots1(r):
    """Dots1ForCausalLM: Qwen3's attention, windows from max_window_layers or layer types, DeepSeek-V3's routing."""
    c = decoder_common(r, "dots1")
    c["attention_bias"] = r.random() < 0.3
    v3_routing(r, c)
    c.update(sliding_window=r.choice([None, 2, 3, 5]), max_window_layers=r.randint(0, c["num_hidden_layers"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    return tf.Dots1ForCausalLM, tf.Dots1Config, c


def gen_ministral(r):
    """MinistralForCausalLM (its classifier: `ministral_cls`): no biases, windows on random layer types."""
    c = decoder_common(r, "ministral")
    c["head_dim"] = r.choice([4, 8, 16])
    c.update(sliding_window=r.choice([None, 2, 3, 5]), hidden_act=r.choice(["silu", "gelu"]))
    if c["sliding_window"] is not None and r.random() < 0.7:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(c["num_hidden_layers"])]
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.MinistralForCausalLM, tf.MinistralConfig, c


def gen_ministral3(r):
    """Ministral3ForCausalLM (its classifiers: `ministral3_cls`, `ministral3_tok`): Mistral's decoder, one window or
    none, the rotated queries scaled by position (a random beta over a random original length), RoPE of several
    kinds; the class's YaRN (scale 1 this short) where the config names none."""
    c = decoder_common(r, "ministral3")
    c["head_dim"] = r.choice([4, 8, 16])
    c.update(sliding_window=r.choice([None, None, 2, 3, 5]), hidden_act=r.choice(["silu", "gelu"]))
    if r.random() < 0.85:
        rope = rope_for(r, c["head_dim"], c["max_position_embeddings"])
        rope.update(llama_4_scaling_beta=r.choice([0.1, 0.5, 1.3]),
                    original_max_position_embeddings=r.choice([2, 3, 4, 8, 16]))
        c["rope_parameters"] = rope
    return tf.Ministral3ForCausalLM, tf.Ministral3Config, c


def gen_mistral3(r):
    """Mistral3ForConditionalGeneration on text: a random Mistral or Ministral 3 text model (its model_type nested)
    beside a tiny Pixtral tower, the head tied by the outer flag or not."""
    kind = r.choice(["mistral", "ministral3"])
    _, _, text = gen_mistral(r) if kind == "mistral" else gen_ministral3(r)
    text["model_type"] = kind
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=32,
                  patch_size=8, head_dim=8)
    tie = text.pop("tie_word_embeddings")
    return tf.Mistral3ForConditionalGeneration, tf.Mistral3Config, dict(text_config=text, vision_config=vision,
                                                                         tie_word_embeddings=tie)



def mrope(r, rope, head_dim):
    """`rope` with multimodal RoPE sections (three, summing to half the head) added."""
    half = head_dim // 2
    a = r.randint(0, half)
    b = r.randint(0, half - a)
    return dict(rope, mrope_section=[a, b, half - a - b])


def gen_qwen2_vl(r):
    """Qwen2VLForConditionalGeneration or Qwen2_5_VLForConditionalGeneration on text: a random Qwen2 text model with
    multimodal RoPE sections (default RoPE) beside a tiny vision tower, the head tied by the outer flag or the nested
    one."""
    _, _, text = gen_qwen2(r)
    theta = r.choice([100.0, 10000.0, 1e6])
    text["rope_parameters"] = mrope(r, {"rope_type": "default", "rope_theta": theta},
                                    text["hidden_size"] // text["num_attention_heads"])
    cls, config_cls = r.choice([(tf.Qwen2VLForConditionalGeneration, tf.Qwen2VLConfig),
                                (tf.Qwen2_5_VLForConditionalGeneration, tf.Qwen2_5_VLConfig)])
    tie = text.pop("tie_word_embeddings")
    outer = dict(tie_word_embeddings=tie) if r.random() < 0.5 else {}
    if not outer:
        text["tie_word_embeddings"] = tie
    vision = dict(depth=1, hidden_size=16, num_heads=2, patch_size=2, spatial_merge_size=1, temporal_patch_size=1)
    vision.update(dict(embed_dim=16, mlp_ratio=2) if cls is tf.Qwen2VLForConditionalGeneration
                  else dict(intermediate_size=16, out_hidden_size=text["hidden_size"], fullatt_block_indexes=[0]))
    return cls, config_cls, dict(text_config=text, vision_config=vision, **outer)


def gen_qwen_images(r):
    """Qwen2-VL, Qwen2.5-VL, Qwen3-VL or Qwen3-VL-MoE with images: a random Qwen2 (Qwen3, Qwen3-MoE) text model with
    multimodal RoPE sections over a random tower (1-3 blocks, patches of 1-2 frames, `spatial_merge_size` 1-3;
    Qwen2.5-VL's windows of 1-3 merged patches, some blocks attending to whole frames; Qwen3-VL's learned positions of
    tables of 1-20 entries and 0-3 deepstack blocks), the image token the vocabulary's last id."""
    qwen3 = r.random() < 0.4
    cls, config_cls, c = gen_qwen3_vl(r) if qwen3 else gen_qwen2_vl(r)
    text = c["text_config"]
    merge = r.choice([1, 2, 2, 3])
    patch = r.choice([1, 2])
    vision = dict(depth=r.randint(1, 3), num_heads=2, patch_size=patch, spatial_merge_size=merge,
                  temporal_patch_size=r.choice([1, 2]),
                  hidden_act=r.choice(["silu", "gelu", "quick_gelu", "gelu_pytorch_tanh"]))
    width = r.choice([8, 16])
    if qwen3:
        vision.update(hidden_size=width, intermediate_size=r.choice([8, 24]), out_hidden_size=text["hidden_size"],
                      num_position_embeddings=r.choice([1, 4, 9, 16, 20]),
                      deepstack_visual_indexes=sorted(r.sample(range(vision["depth"]), r.randint(0, vision["depth"]))))
    elif cls is tf.Qwen2VLForConditionalGeneration:
        vision.update(embed_dim=width, hidden_size=text["hidden_size"], mlp_ratio=r.randint(1, 3))
    else:
        vision.update(hidden_size=width, intermediate_size=r.choice([8, 24]), out_hidden_size=text["hidden_size"],
                      window_size=merge * patch * r.randint(1, 3) + r.choice([0, 0, 1]),
                      fullatt_block_indexes=sorted(r.sample(range(vision["depth"]), r.randint(0, vision["depth"]))))
    vocab = text["vocab_size"]
    c.update(vision_config=vision, image_token_id=vocab - 1, video_token_id=vocab - 2, vision_start_token_id=vocab - 3)
    return cls, config_cls, c


def qwen_image_inputs(r, cfg, side=None, model_cls=None):
    """Prompts with Qwen2-VL's images: each row's text ids (never a special one) with 0-2 images (at least one in all,
    text between a row's images) of random grids `[t, h, w]` (1-2 frames, rows and columns multiples of the merge),
    their runs of `t · h · w / merge²` image tokens, the rows padded on either side; `pixel_values` the flattened
    patches, `image_grid_thw`, and `mm_token_type_ids` marking the image tokens; with `model_cls` some images are
    videos (`pixel_values_videos`, `video_grid_thw`, Qwen2.5-VL's `second_per_grid_ts` sometimes; Qwen3-VL's frames
    each a run of tokens after a timestamp token)."""
    text, vision = cfg["text_config"], cfg["vision_config"]
    vocab, token, merge = text["vocab_size"], cfg["image_token_id"], vision["spatial_merge_size"]
    b = r.randint(1, 3)
    per_row = [r.randint(0, 2) for _ in range(b)]
    if sum(per_row) == 0:
        per_row[r.randrange(b)] = 1
    rows, grids = [], []
    # (Qwen2-VL's and Qwen2.5-VL's prompts take videos too, in forward passes: some of the images are videos of
    # 1-4 frame pairs.)
    videos = model_cls is not None
    qwen3 = videos and model_cls.__name__.startswith("Qwen3")
    kinds, video_grids = [], []
    for n in per_row:
        row = [r.randrange(3, vocab - 3) for _ in range(r.randint(0, 3))]
        for i in range(n):
            video = videos and r.random() < 0.4
            grid = [r.randint(1, 4 if video else 2), merge * r.randint(1, 3), merge * r.randint(1, 3)]
            (video_grids if video else grids).append(grid)
            kinds.append(video)
            if video and qwen3:
                # (Qwen3-VL's frames: each its own run of video tokens after its timestamp's text.)
                for _ in range(grid[0]):
                    row += [r.randrange(3, vocab - 3)] + [cfg["video_token_id"]] * (grid[1] * grid[2] // merge ** 2)
            else:
                row += [cfg["video_token_id"] if video else token] * (grid[0] * grid[1] * grid[2] // merge ** 2)
            row += [r.randrange(3, vocab - 3) for _ in range(r.randint(1 if i + 1 < n else 0, 3))]
        if not row:
            row = [r.randrange(3, vocab - 3)]
        rows.append(row)
    l = max(len(row) for row in rows)
    side = side or r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, row in enumerate(rows):
        at = 0 if side == "right" else l - len(row)
        ids[i, at:at + len(row)] = torch.tensor(row)
        mask[i, at:at + len(row)] = 1
    patch = 3 * vision["temporal_patch_size"] * vision["patch_size"] ** 2
    x = {"input_ids": ids, "attention_mask": mask,
         "mm_token_type_ids": (ids == token).long() + 2 * (ids == cfg.get("video_token_id", -1)).long()}
    if grids:
        grid = torch.tensor(grids, dtype=torch.int64)
        x.update(pixel_values=torch.randn(int(grid.prod(-1).sum()), patch), image_grid_thw=grid)
    desc = f"b={b} l={l} pad={side} grids={grids}"
    if video_grids:
        grid = torch.tensor(video_grids, dtype=torch.int64)
        x.update(pixel_values_videos=torch.randn(int(grid.prod(-1).sum()), patch), video_grid_thw=grid)
        desc += f" video_grids={video_grids}"
        if model_cls.__name__.startswith("Qwen2_5") and r.random() < 0.7:
            x["second_per_grid_ts"] = torch.tensor([r.choice([0.3, 0.5, 1.0, 2.0]) for _ in video_grids])
            desc += f" seconds={x['second_per_grid_ts'].tolist()}"
    return x, desc


def gen_qwen3_vl(r):
    """Qwen3VLForConditionalGeneration or Qwen3VLMoeForConditionalGeneration on text: a random Qwen3 or Qwen3-MoE text
    model (no windows; the mixture's top-k always renormalised) with interleaved multimodal RoPE sections beside a
    tiny vision tower, the head tied by the outer flag."""
    moe = r.random() < 0.5
    _, _, text = gen_qwen3_moe(r) if moe else gen_qwen3(r)
    for k in ("use_sliding_window", "sliding_window", "max_window_layers", "norm_topk_prob"):
        text.pop(k, None)
    theta = r.choice([100.0, 10000.0, 5e5])
    text["rope_parameters"] = mrope(r, {"rope_type": "default", "rope_theta": theta, "mrope_interleaved": True},
                                    text["head_dim"])
    tie = text.pop("tie_word_embeddings", False)
    vision = dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=text["hidden_size"],
                  patch_size=2, spatial_merge_size=1, temporal_patch_size=1, deepstack_visual_indexes=[0],
                  num_position_embeddings=16)
    c = dict(text_config=text, vision_config=vision, tie_word_embeddings=tie)
    if moe:
        return tf.Qwen3VLMoeForConditionalGeneration, tf.Qwen3VLMoeConfig, c
    return tf.Qwen3VLForConditionalGeneration, tf.Qwen3VLConfig, c



def gen_vision_language(r):
    """A vision-language class on text (LLaVA, LLaVA-NeXT, LLaVA-OneVision, VipLLaVA, Aya Vision, InternVL, Idefics3,
    SmolVLM, PaliGemma, LFM2-VL) or an audio-language one (Qwen2-Audio, Voxtral) beside a tiny vision tower, over a random language model of its own model type (Gemma 2's
    soft-capping, Granite's and Cohere's logit scaling among them, which the classes' own head leaves out), the head
    tied by the outer flag, the nested one, or the defaults."""
    clip = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, image_size=8, patch_size=4)
    siglip = dict(clip, model_type="siglip_vision_model")
    small = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
    classes = [
        (tf.LlavaForConditionalGeneration, tf.LlavaConfig, dict(vision_config=clip)),
        (tf.LlavaNextForConditionalGeneration, tf.LlavaNextConfig, dict(vision_config=clip)),
        (tf.LlavaOnevisionForConditionalGeneration, tf.LlavaOnevisionConfig, dict(vision_config=siglip)),
        (tf.VipLlavaForConditionalGeneration, tf.VipLlavaConfig, dict(vision_config=clip, vision_feature_layers=[-1])),
        (tf.AyaVisionForConditionalGeneration, tf.AyaVisionConfig, dict(vision_config=siglip, downsample_factor=2)),
        (tf.InternVLForConditionalGeneration, tf.InternVLConfig,
         dict(vision_config=dict(small, image_size=[8, 8], patch_size=[4, 4]))),
        (tf.Idefics3ForConditionalGeneration, tf.Idefics3Config,
         dict(vision_config=dict(small, image_size=8, patch_size=4), scale_factor=1)),
        (tf.SmolVLMForConditionalGeneration, tf.SmolVLMConfig,
         dict(vision_config=dict(small, image_size=8, patch_size=4), scale_factor=1)),
        (tf.PaliGemmaForConditionalGeneration, tf.PaliGemmaConfig, dict(vision_config=dict(siglip, projection_dim=16))),
        (tf.Qwen2AudioForConditionalGeneration, tf.Qwen2AudioConfig,
         dict(audio_config=dict(d_model=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32,
                                num_mel_bins=8, max_source_positions=16))),
        (tf.VoxtralForConditionalGeneration, tf.VoxtralConfig,
         dict(audio_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                                num_mel_bins=8, max_source_positions=16))),
        (tf.Lfm2VlForConditionalGeneration, tf.Lfm2VlConfig,
         dict(vision_config=dict(small, model_type="siglip2_vision_model", patch_size=4, num_patches=16),
              projector_hidden_size=16)),
    ]
    cls, config_cls, c = r.choice(classes)
    gen = r.choice([gen_llama, gen_mistral, gen_qwen2, gen_qwen3, gen_gemma2, gen_granite, gen_cohere, gen_lfm2])
    _, text_config_cls, text = gen(r)
    text["model_type"] = text_config_cls.model_type
    tie = text.pop("tie_word_embeddings", None)
    where = r.choice(["outer", "inner", "none"])
    if where == "inner" and tie is not None:
        text["tie_word_embeddings"] = tie
    elif where == "outer" and tie is not None:
        c["tie_word_embeddings"] = tie
    return cls, config_cls, dict(c, text_config=text)



def gen_images(r):
    """A vision-language model run with images: LLaVA (a CLIP or SigLIP tower, one or several feature layers, the
    class token dropped or kept, the projector's bias and activation), VipLLaVA (several layers, its projector norm) or
    Gemma 3 (SigLIP, its pooled projector), over a random language model (Gemma 3's own for Gemma 3), the image token
    the vocabulary's last id."""
    kind = r.choice(["llava", "llava", "vipllava", "gemma3", "paligemma", "aya_vision", "idefics3", "smolvlm",
                     "internvl", "pixtral", "mistral3", "lfm2_vl"])
    tower = r.choice(["clip_vision_model", "siglip_vision_model"]) if kind == "llava" else "clip_vision_model"
    layers = r.randint(1, 3)
    image, patch = r.choice([(8, 4), (8, 2), (12, 4)])
    vision = dict(model_type=tower, hidden_size=r.choice([8, 16]), intermediate_size=16, num_hidden_layers=layers,
                  num_attention_heads=2, image_size=image, patch_size=patch)
    if r.random() < 0.3:
        vision["hidden_act"] = r.choice(["gelu", "quick_gelu", "gelu_pytorch_tanh"])
    if kind == "lfm2_vl":
        # LFM2-VL: a SigLIP2 NaFlex tower (position tables of 1-20 entries), its blocks unshuffled by 1-3, over LFM2.
        _, _, text = gen_lfm2(r)
        text.update(model_type="lfm2", vocab_size=100)
        text.pop("tie_word_embeddings", None)
        siglip2 = dict(model_type="siglip2_vision_model", hidden_size=r.choice([8, 16]), intermediate_size=16,
                       num_hidden_layers=layers, num_attention_heads=2, patch_size=r.choice([1, 2]),
                       num_patches=r.choice([1, 4, 9, 16, 20]), vision_use_head=False)
        c = dict(text_config=text, vision_config=siglip2, image_token_id=99, downsample_factor=r.randint(1, 3),
                 projector_hidden_size=r.choice([8, 24]), projector_bias=r.random() < 0.7,
                 projector_use_layernorm=r.random() < 0.7,
                 projector_hidden_act=r.choice(["gelu", "silu", "gelu_pytorch_tanh"]))
        return tf.Lfm2VlForConditionalGeneration, tf.Lfm2VlConfig, c
    if kind == "gemma3":
        _, _, text = gen_gemma3_text(r)
        vision.update(model_type="siglip_vision_model", vision_use_head=False)
        side = image // patch
        tokens = r.choice([t * t for t in range(1, side + 1) if side % t == 0])
        text.pop("tie_word_embeddings", None)
        c = dict(text_config=text, vision_config=vision, mm_tokens_per_image=tokens,
                 image_token_index=text["vocab_size"] - 1, boi_token_index=text["vocab_size"] - 3,
                 eoi_token_index=text["vocab_size"] - 2)
        return tf.Gemma3ForConditionalGeneration, tf.Gemma3Config, c
    if kind == "aya_vision":
        _, text_config_cls, text = r.choice([gen_cohere, gen_llama, gen_qwen2])(r)
        text["model_type"] = text_config_cls.model_type
        vision.update(model_type="siglip_vision_model", vision_use_head=False)
        side = image // patch
        c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
                 downsample_factor=r.choice([f for f in (1, 2, 3) if side % f == 0]),
                 alignment_intermediate_size=r.choice([16, 32, 48]))
        if r.random() < 0.3:
            c["vision_feature_layer"] = r.randint(-layers - 1, layers)
        return tf.AyaVisionForConditionalGeneration, tf.AyaVisionConfig, c
    if kind == "mistral3":
        _, text_config_cls, text = gen_mistral(r)
        text["model_type"] = "mistral"
        vision = dict(model_type="pixtral", hidden_size=r.choice([8, 16]), intermediate_size=16,
                      num_hidden_layers=layers, num_attention_heads=2, image_size=16, patch_size=2,
                      hidden_act=r.choice(["silu", "gelu"]),
                      rope_parameters={"rope_type": "axial", "rope_theta": r.choice([10000.0, 100.0])})
        c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
                 vision_feature_layer=r.choice([-1, -1, -2]), spatial_merge_size=r.choice([1, 2, 3]),
                 projector_hidden_act=r.choice(["gelu", "silu"]), multimodal_projector_bias=r.random() < 0.5)
        return tf.Mistral3ForConditionalGeneration, tf.Mistral3Config, c
    if kind == "pixtral":
        _, text_config_cls, text = r.choice([gen_llama, gen_mistral, gen_qwen2])(r)
        text["model_type"] = text_config_cls.model_type
        vision = dict(model_type="pixtral", hidden_size=r.choice([8, 16]), intermediate_size=16,
                      num_hidden_layers=layers, num_attention_heads=2, image_size=16, patch_size=r.choice([2, 4]),
                      hidden_act=r.choice(["silu", "gelu"]),
                      rope_parameters={"rope_type": "axial", "rope_theta": r.choice([10000.0, 100.0])})
        layer = r.choice([-1, -1, -2, 1])
        c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
                 vision_feature_select_strategy="full", vision_feature_layer=layer,
                 projector_hidden_act=r.choice(["gelu", "silu"]), multimodal_projector_bias=r.random() < 0.7)
        return tf.LlavaForConditionalGeneration, tf.LlavaConfig, c
    if kind == "internvl":
        _, text_config_cls, text = r.choice([gen_llama, gen_qwen2, gen_qwen3, gen_granite])(r)
        text["model_type"] = text_config_cls.model_type
        vision.update(model_type="internvl_vision", norm_type=r.choice(["layer_norm", "rms_norm"]),
                      use_qk_norm=r.random() < 0.4, attention_bias=r.random() < 0.5,
                      use_mean_pooling=r.random() < 0.5, layer_scale_init_value=r.choice([0.1, 1.0]),
                      hidden_act=r.choice(["gelu", "gelu_pytorch_tanh", "quick_gelu"]))
        side = image // patch
        layer = r.choice([-1, -1, -2, layers, -layers])
        c = dict(text_config=text, vision_config=vision, image_token_id=text["vocab_size"] - 1,
                 downsample_ratio=r.choice([r_ for r_ in (0.5, 1.0) if side % int(1 / r_) == 0]),
                 projector_hidden_act=r.choice(["gelu", "silu"]), vision_feature_layer=layer)
        return tf.InternVLForConditionalGeneration, tf.InternVLConfig, c
    if kind in ("idefics3", "smolvlm"):
        _, text_config_cls, text = r.choice([gen_llama, gen_qwen2, gen_mistral])(r)
        text["model_type"] = text_config_cls.model_type
        vision.pop("model_type")
        side = image // patch
        c = dict(text_config=text, vision_config=vision, image_token_id=text["vocab_size"] - 1,
                 scale_factor=r.choice([f for f in (1, 2, 3) if side % f == 0]))
        if kind == "smolvlm":
            return tf.SmolVLMForConditionalGeneration, tf.SmolVLMConfig, c
        return tf.Idefics3ForConditionalGeneration, tf.Idefics3Config, c
    if kind == "paligemma":
        _, text_config_cls, text = r.choice([gen_gemma, gen_gemma2])(r)
        text["model_type"] = text_config_cls.model_type
        vision.update(model_type="siglip_vision_model", vision_use_head=False)
        c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
                 projection_dim=text["hidden_size"], hidden_size=text["hidden_size"])
        return tf.PaliGemmaForConditionalGeneration, tf.PaliGemmaConfig, c
    gen = r.choice([gen_llama, gen_mistral, gen_qwen2, gen_qwen3, gen_gemma2, gen_granite])
    _, text_config_cls, text = gen(r)
    text["model_type"] = text_config_cls.model_type
    states = layers + 1
    chosen = [r.randint(-states, states - 1) for _ in range(r.randint(1, 3))]
    c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
             projector_hidden_act=r.choice(["gelu", "silu", "gelu_pytorch_tanh"]))
    if kind == "vipllava":
        c["vision_feature_layers"] = chosen
        return tf.VipLlavaForConditionalGeneration, tf.VipLlavaConfig, c
    c["vision_feature_layer"] = chosen[0] if r.random() < 0.5 else chosen
    c["vision_feature_select_strategy"] = r.choice(["default", "full"])
    c["multimodal_projector_bias"] = r.random() < 0.7
    return tf.LlavaForConditionalGeneration, tf.LlavaConfig, c


def gen_anyres(r):
    """LLaVA-NeXT, LLaVA-NeXT-Video or LLaVA-OneVision with "anyres" images: a CLIP tower without its class token or a
    SigLIP one whole, one or several feature layers, random `image_grid_pinpoints` (multiples of the tile, some tall,
    some wide), OneVision's `anyres_max_N`, over a random language model, the image token the vocabulary's last id."""
    kind = r.choice(["next", "next", "next_video", "onevision", "onevision"])
    tower = r.choice(["clip_vision_model", "siglip_vision_model"])
    layers = r.randint(1, 3)
    image, patch = r.choice([(8, 4), (8, 2), (12, 4), (6, 2)])
    vision = dict(model_type=tower, hidden_size=r.choice([8, 16]), intermediate_size=16, num_hidden_layers=layers,
                  num_attention_heads=2, image_size=image, patch_size=patch)
    if tower == "siglip_vision_model":
        vision["vision_use_head"] = False
    gen = r.choice([gen_llama, gen_mistral, gen_qwen2, gen_qwen3, gen_gemma2, gen_granite])
    _, text_config_cls, text = gen(r)
    text["model_type"] = text_config_cls.model_type
    grid = [(h, w) for h in range(1, 4) for w in range(1, 4)]
    pinpoints = [[image * h, image * w] for h, w in r.sample(grid, r.randint(1, 5))]
    states = layers + 1
    chosen = [r.randint(-states, states - 1) for _ in range(r.randint(1, 3))]
    c = dict(text_config=text, vision_config=vision, image_token_index=text["vocab_size"] - 1,
             image_grid_pinpoints=pinpoints, projector_hidden_act=r.choice(["gelu", "silu", "gelu_pytorch_tanh"]),
             # (transformers reads an int layer as `output_hidden_states`: layer 0 alone would ask for none.)
             vision_feature_layer=chosen[0] if r.random() < 0.5 and chosen[0] != 0 else chosen,
             vision_feature_select_strategy="default" if tower == "clip_vision_model" else "full",
             multimodal_projector_bias=r.random() < 0.7)
    if kind == "onevision":
        c["vision_aspect_ratio"] = f"anyres_max_{r.choice([1, 2, 4, 9])}"
        c["video_token_index"] = text["vocab_size"] - 2
        return tf.LlavaOnevisionForConditionalGeneration, tf.LlavaOnevisionConfig, c
    if kind == "next_video":
        c["video_token_index"] = text["vocab_size"] - 2
        c.update(spatial_pool_mode=r.choice(["average", "max"]), spatial_pool_stride=r.choice([1, 2, 2]))
        return tf.LlavaNextVideoForConditionalGeneration, tf.LlavaNextVideoConfig, c
    return tf.LlavaNextForConditionalGeneration, tf.LlavaNextConfig, c


def anyres_prompt_inputs(r, model_cls, cfg, model, pad=None):
    """Prompts with anyres images: 0-2 images per row at random places (at least one in all), each of a random size
    (`image_sizes`, some far from the pinpoints' aspects), their tiles padded to the most in `pixel_values`
    `[images, tiles, 3, side, side]`; OneVision's `batch_num_images` sometimes (its prompts of several images then
    untiled). The image tokens per image: what transformers' `get_image_features` of `model` packs. LLaVA-NeXT-Video's
    and OneVision's prompts hold a video of 1-3 frames sometimes (`pixel_values_videos`), its tokens as many as
    `get_video_features` gives."""
    text, vision = cfg["text_config"], cfg["vision_config"]
    vocab, token, side = text["vocab_size"], cfg["image_token_index"], vision["image_size"]
    b = r.randint(1, 3)
    per_row = [r.randint(0, 2) for _ in range(b)]
    if sum(per_row) == 0:
        per_row[0] = 1
    images = sum(per_row)
    sizes = torch.tensor([[r.randint(1, 4 * side), r.randint(1, 4 * side)] for _ in range(images)], dtype=torch.int64)
    extra = {}
    if model_cls.__name__.startswith("LlavaOnevision") and r.random() < 0.5:
        extra["batch_num_images"] = torch.tensor(per_row, dtype=torch.int64)
    from transformers.models.llava_next.modeling_llava_next import image_size_to_num_patches
    most = max(image_size_to_num_patches(s.tolist(), cfg["image_grid_pinpoints"], side) for s in sizes)
    pixels = torch.randn(images, most, 3, side, side)
    with torch.no_grad():
        lens = [f.shape[0] for f in model.model.get_image_features(pixels, sizes, **extra).pooler_output]
    video_rows = [0] * b
    if model_cls.__name__.startswith(("LlavaNextVideo", "LlavaOnevision")) and r.random() < 0.5:
        video_rows = [r.randint(0, 1) for _ in range(b)]
    vlens = []
    if sum(video_rows):
        videos = torch.randn(sum(video_rows), r.randint(1, 3), 3, side, side)
        with torch.no_grad():
            vlens = [f.shape[0] for f in model.model.get_video_features(videos).pooler_output]
    rows, at, vat = [], 0, 0
    for n, v in zip(per_row, video_rows):
        row = [r.randrange(3, vocab - 3) for _ in range(r.randint(1, 6))]
        for _ in range(n):
            where = r.randint(0, len(row))
            row[where:where] = [token] * lens[at]
            at += 1
        for _ in range(v):
            row += [cfg["video_token_index"]] * vlens[vat] + [r.randrange(3, vocab - 3)]
            vat += 1
        rows.append(row)
    l = max(len(row) for row in rows)
    pad = pad or r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, row in enumerate(rows):
        start = 0 if pad == "right" else l - len(row)
        ids[i, start:start + len(row)] = torch.tensor(row)
        mask[i, start:start + len(row)] = 1
    x = {"input_ids": ids, "attention_mask": mask, "pixel_values": pixels, "image_sizes": sizes, **extra}
    if vlens:
        x["pixel_values_videos"] = videos
    desc = f"b={b} l={l} pad={pad} images={per_row} sizes={sizes.tolist()} tokens={lens} videos={vlens}"
    return x, desc + (" batch_num_images" if extra else "")


def lfm2_image_inputs(r, cfg):
    """Prompts with LFM2-VL's images of their own sizes: 0-2 per row (at least one in all), each a random grid of
    patches (at least the downsample factor each way), their `(h // f) · (w // f)` image tokens at random places, the
    rows padded on either side; `pixel_values` `[images, most patches, 3 · patch²]` padded with zeros,
    `spatial_shapes` and `pixel_attention_mask` (bool or int)."""
    text, vision = cfg["text_config"], cfg["vision_config"]
    vocab, token, f = text["vocab_size"], cfg["image_token_id"], cfg["downsample_factor"]
    b = r.randint(1, 3)
    per_row = [r.randint(0, 2) for _ in range(b)]
    if sum(per_row) == 0:
        per_row[r.randrange(b)] = 1
    rows, shapes = [], []
    for n in per_row:
        row = [r.randrange(3, vocab - 3) for _ in range(r.randint(1, 5))]
        after = 0
        for _ in range(n):
            h, w = r.randint(f, 3 * f + 1), r.randint(f, 3 * f + 1)
            shapes.append((h, w))
            at = r.randint(after, len(row))
            k = (h // f) * (w // f)
            row[at:at] = [token] * k
            after = at + k
        rows.append(row)
    l = max(len(row) for row in rows)
    side = r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, row in enumerate(rows):
        at = 0 if side == "right" else l - len(row)
        ids[i, at:at + len(row)] = torch.tensor(row)
        mask[i, at:at + len(row)] = 1
    most = max(h * w for h, w in shapes) + r.choice([0, 0, 3])
    patch = 3 * vision["patch_size"] ** 2
    pixels = torch.zeros(len(shapes), most, patch)
    pmask = torch.zeros(len(shapes), most, dtype=torch.int64)
    for i, (h, w) in enumerate(shapes):
        pixels[i, : h * w] = torch.randn(h * w, patch)
        pmask[i, : h * w] = 1
    x = {"input_ids": ids, "attention_mask": mask, "pixel_values": pixels,
         "spatial_shapes": torch.tensor(shapes, dtype=torch.int64),
         "pixel_attention_mask": pmask.bool() if r.random() < 0.5 else pmask}
    return x, f"b={b} l={l} pad={side} shapes={shapes} most={most}"


def image_prompt_inputs(r, model_cls, cfg):
    """Prompts with images: each row's text ids (never the image token) with 0-2 images' runs of image tokens at
    random places, the rows padded on either side, the images' `pixel_values` in order; Gemma 3's `token_type_ids`
    marking the image tokens, sometimes."""
    text, vision = cfg["text_config"], cfg["vision_config"]
    vocab, token = text["vocab_size"], cfg.get("image_token_index", cfg.get("image_token_id"))
    patches = (vision["image_size"] // vision["patch_size"]) ** 2
    name = model_cls.__name__
    idefics = name.startswith(("Idefics3", "SmolVLM"))
    pixtral = vision.get("model_type") == "pixtral"
    sizes = []
    if pixtral:
        # each image's own: (height // p) · (width // p), Mistral 3's merged squares of p · spatial_merge_size
        p = vision["patch_size"] * cfg.get("spatial_merge_size", 1)
        per_image = None
    elif idefics:
        per_image = patches // cfg["scale_factor"] ** 2
    elif name.startswith("InternVL"):
        per_image = patches // int(1 / cfg["downsample_ratio"]) ** 2
    elif name.startswith("Gemma3"):
        per_image = cfg["mm_tokens_per_image"]
    elif name.startswith("PaliGemma"):
        per_image = patches
    elif name.startswith("AyaVision"):
        per_image = patches // cfg["downsample_factor"] ** 2
    elif name.startswith("VipLlava") or cfg.get("vision_feature_select_strategy", "default") == "default":
        per_image = patches if vision["model_type"] == "clip_vision_model" else patches - 1
    else:
        per_image = patches + 1 if vision["model_type"] == "clip_vision_model" else patches
    b = r.randint(1, 3)
    rows, images, per_row = [], 0, []
    for _ in range(b):
        row = [r.randrange(3, vocab - 3) for _ in range(r.randint(1, 6))]
        per_row.append(r.randint(0, 2))
        after = 0  # (each image after the row's earlier ones: the features replace the tokens in order)
        for _ in range(per_row[-1]):
            at = r.randint(after, len(row)) if pixtral else r.randint(0, len(row))
            if pixtral:
                sizes.append((r.randint(p, vision["image_size"]), r.randint(p, vision["image_size"])))
            n = (sizes[-1][0] // p) * (sizes[-1][1] // p) if pixtral else per_image
            row[at:at] = [token] * n
            after = at + n
            images += 1
        rows.append(row)
    if images == 0:
        if pixtral:
            sizes.append((vision["image_size"], vision["image_size"]))
        n = (sizes[-1][0] // p) * (sizes[-1][1] // p) if pixtral else per_image
        rows[0][1:1] = [token] * n
        images, per_row[0] = 1, 1
    l = max(len(row) for row in rows)
    side = r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, row in enumerate(rows):
        at = 0 if side == "right" else l - len(row)
        ids[i, at:at + len(row)] = torch.tensor(row)
        mask[i, at:at + len(row)] = 1
    size = vision["image_size"]
    x = {"input_ids": ids, "attention_mask": mask, "pixel_values": torch.randn(images, 3, size, size)}
    desc = f"b={b} l={l} pad={side} images={images}x{per_image}"
    if pixtral:
        # Each image of its own size, the pixels padded with zeros to the largest height and width.
        hmax, wmax = max(h for h, _ in sizes), max(w for _, w in sizes)
        pixels = torch.zeros(images, 3, hmax, wmax)
        for i, (h, w) in enumerate(sizes):
            pixels[i, :, :h, :w] = torch.randn(3, h, w)
        x["pixel_values"] = pixels
        x["image_sizes"] = torch.tensor(sizes, dtype=torch.int64)
        desc = f"b={b} l={l} pad={side} images={per_row} sizes={sizes}"
    if idefics:
        # Each prompt's images padded with images of zeros; sometimes a pixel mask keeping a top-left corner of each.
        most = max(per_row)
        pixels = torch.zeros(b, most, 3, size, size)
        pmask = torch.zeros(b, most, size, size, dtype=torch.int64)
        for i, n in enumerate(per_row):
            for j in range(n):
                h, w = (r.randint(1, size), r.randint(1, size)) if r.random() < 0.5 else (size, size)
                pixels[i, j, :, :h, :w] = torch.randn(3, h, w)
                pmask[i, j, :h, :w] = 1
        x["pixel_values"] = pixels
        desc = f"b={b} l={l} pad={side} images={per_row}x{per_image}"
        if r.random() < 0.6:
            x["pixel_attention_mask"] = pmask.bool() if r.random() < 0.5 else pmask
            desc += " pixel_mask"
    if name.startswith("Gemma3") and r.random() < 0.7:
        x["token_type_ids"] = (ids == token).long()
        desc += " token_types"
    if name.startswith("PaliGemma") and r.random() < 0.7:
        # A prefix, then a suffix of the last 0-3 tokens of each row (padding in neither).
        types = torch.zeros_like(ids)
        for i in range(b):
            kept = mask[i].nonzero().flatten().tolist()
            for j in kept[len(kept) - r.randint(0, min(3, len(kept))):]:
                types[i, j] = 1
        x["token_type_ids"] = types
        desc += " prefix"
    return x, desc


def gen_mllama(r):
    """MllamaForConditionalGeneration (Llama 3.2 Vision) on text: a random Llama text model of 2-4 layers, a random
    set of them cross-attention layers (skipped without an image), beside a tiny vision tower."""
    _, _, text = gen_llama(r)
    n = r.randint(2, 4)
    # (Never layer 0, as in the published models: transformers' text-only generation reads the cache length from
    # layer 0, which a skipped cross-attention layer leaves empty.)
    text.update(num_hidden_layers=n, cross_attention_layers=sorted(r.sample(range(1, n), r.randint(1, n - 1))))
    text.pop("tie_word_embeddings", None)
    text.pop("head_dim", None)  # (MllamaTextConfig derives it)
    vision = dict(hidden_size=16, intermediate_size=32, num_attention_heads=2, num_hidden_layers=2,
                  num_global_layers=1, image_size=8, patch_size=4, vision_output_dim=text["hidden_size"],
                  intermediate_layers_indices=[0], max_num_tiles=4)
    return tf.MllamaForConditionalGeneration, tf.MllamaConfig, dict(text_config=text, vision_config=vision)


def gen_mllama_images(r):
    """Llama 3.2 Vision with images: `gen_mllama`'s text model (2-5 layers, some of them cross-attention layers, never
    the first) over a random tiled tower (tiles of 4-8 pixels in patches of 2-4, 1-4 tiles per image with every layout
    of at most that many, 1-3 local and 1-2 global layers, 1-2 intermediate layers kept, GELU or others), the image
    token one of the table's rows past the vocabulary."""
    _, _, text = gen_llama(r)
    n = r.randint(2, 5)
    text.update(num_hidden_layers=n, cross_attention_layers=sorted(r.sample(range(1, n), r.randint(1, n - 1))))
    text.pop("tie_word_embeddings", None)
    text.pop("head_dim", None)
    tiles = r.randint(1, 4)
    layers = r.randint(1, 3)
    width = r.choice([8, 16])
    kept = sorted(r.sample(range(layers), r.randint(1, min(2, layers))))
    if kept and r.random() < 0.3:
        kept[0] -= layers  # (a Python index from the end)
    patch = r.choice([2, 4])
    vision = dict(hidden_size=width, intermediate_size=r.choice([8, 24]), attention_heads=2, num_hidden_layers=layers,
                  num_global_layers=r.randint(1, 2), image_size=patch * r.randint(1, 2) + r.choice([0, 0, 1]), patch_size=patch,
                  vision_output_dim=width * (len(kept) + 1), intermediate_layers_indices=kept, max_num_tiles=tiles,
                  supported_aspect_ratios=[[w, h] for w in range(1, tiles + 1) for h in range(1, tiles + 1)
                                           if w * h <= tiles],
                  hidden_act=r.choice(["gelu", "gelu", "silu", "gelu_pytorch_tanh"]))
    token = text["vocab_size"] + r.randint(0, 7)
    return (tf.MllamaForConditionalGeneration, tf.MllamaConfig,
            dict(text_config=text, vision_config=vision, image_token_index=token))


def mllama_image_inputs(r, cfg, side=None):
    """Prompts with Llama 3.2 Vision's images: each row's text ids with 0-2 image tokens (at least one in all), each
    image a random layout (its aspect ratio id, its tiles marked in `aspect_ratio_mask`), rows with fewer images
    given padding images (id 0); `cross_attention_mask` as the processor writes it (each image's tiles from its token
    on), or random, or none; the rows padded on either side."""
    text, vision = cfg["text_config"], cfg["vision_config"]
    vocab, token = text["vocab_size"], cfg["image_token_index"]
    ratios, tiles = vision["supported_aspect_ratios"], vision["max_num_tiles"]
    b = r.randint(1, 3)
    per_row = [r.randint(0, 2) for _ in range(b)]
    if sum(per_row) == 0:
        per_row[r.randrange(b)] = 1
    m = max(per_row)
    rows, starts = [], []
    for n in per_row:
        row, at = [r.randrange(3, vocab) for _ in range(r.randint(0, 3))], []
        for _ in range(n):
            at.append(len(row))
            row += [token] + [r.randrange(3, vocab) for _ in range(r.randint(0, 3))]
        rows.append(row or [r.randrange(3, vocab)])
        starts.append(at)
    l = max(len(row) for row in rows)
    side = side or r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    ratio_ids = torch.zeros(b, m, dtype=torch.int64)
    ratio_mask = torch.zeros(b, m, tiles, dtype=torch.int64)
    cross = torch.zeros(b, l, m, tiles, dtype=torch.int64)
    for i, row in enumerate(rows):
        pad = l - len(row)
        off = pad if side == "left" else 0
        ids[i, off:off + len(row)] = torch.tensor(row)
        mask[i, off:off + len(row)] = 1
        for k, at in enumerate(starts[i]):
            ratio = r.randrange(len(ratios))
            ratio_ids[i, k] = ratio + 1
            used = ratios[ratio][0] * ratios[ratio][1]
            ratio_mask[i, k, :used] = 1
            cross[i, off + at:off + len(row), k, :used] = 1
    size = vision["image_size"]
    x = {"input_ids": ids, "attention_mask": mask, "pixel_values": torch.randn(b, m, tiles, 3, size, size),
         "aspect_ratio_ids": ratio_ids, "aspect_ratio_mask": ratio_mask}
    how = r.choice(["processor", "processor", "processor", "random", "none"])
    if how == "random":
        cross = torch.randint(0, 2, cross.shape, dtype=torch.int64)
    if how != "none":
        x["cross_attention_mask"] = cross
    return x, f"b={b} l={l} images={per_row} tiles={tiles} pad={side} cross_mask={how}"


def gen_audio(r):
    """Qwen2-Audio (over a random Qwen2) or Voxtral (over a random Llama) with audio: a random Whisper-style tower
    (1-2 layers, 4-8 mel bins, 8-24 frames; Voxtral's frames projected 1-4 at a time), the audio token the
    vocabulary's last id."""
    layers, width, mel = r.randint(1, 2), r.choice([8, 16]), r.choice([4, 8])
    act = r.choice(["gelu", "gelu", "relu", "gelu_new"])
    if r.random() < 0.5:
        _, _, text = gen_qwen2(r)
        positions = r.randint(4, 12)
        audio = dict(d_model=width, encoder_layers=layers, encoder_attention_heads=2, encoder_ffn_dim=r.choice([16, 32]),
                     num_mel_bins=mel, max_source_positions=positions, activation_function=act)
        c = dict(text_config=text, audio_config=audio, audio_token_id=text["vocab_size"] - 1)
        return tf.Qwen2AudioForConditionalGeneration, tf.Qwen2AudioConfig, c
    _, _, text = gen_llama(r)
    positions = r.choice([4, 6, 8, 12])
    group = r.choice([g for g in (1, 2, 3, 4) if positions % g == 0])
    audio = dict(hidden_size=width, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=width * group,
                 num_mel_bins=mel, max_source_positions=positions, activation_function=act)
    c = dict(text_config=text, audio_config=audio, audio_token_id=text["vocab_size"] - 1,
             projector_hidden_act=r.choice(["gelu", "silu", "relu"]))
    return tf.VoxtralForConditionalGeneration, tf.VoxtralConfig, c


def audio_inputs(r, cfg, side=None):
    """Prompts with audio: each row's text ids with 0-2 audios' runs of audio tokens (at least one in all), one per
    feature; `input_features` of random values; Qwen2-Audio's audios of random lengths (`feature_attention_mask`,
    at least one long enough for two features, so that the prompts are not transformers' legacy ones), Voxtral's
    `max_source_positions / (intermediate_size / width)` features each; the rows padded on either side."""
    text, audio = cfg["text_config"], cfg["audio_config"]
    vocab, token = text["vocab_size"], cfg["audio_token_id"]
    qwen2 = "d_model" in audio
    positions, mel = audio["max_source_positions"], audio["num_mel_bins"]
    frames = 2 * positions
    b = r.randint(1, 3)
    per_row = [r.randint(0, 2) for _ in range(b)]
    if sum(per_row) == 0:
        per_row[r.randrange(b)] = 1
    n = sum(per_row)
    if qwen2:
        lengths = [r.randint(1, frames) for _ in range(n)]
        lengths[r.randrange(n)] = r.randint(min(7, frames), frames)
        counts = [(((l - 1) // 2 + 1) - 2) // 2 + 1 for l in lengths]
    else:
        counts = [positions // (audio["intermediate_size"] // audio["hidden_size"])] * n
    rows, k = [], 0
    for m in per_row:
        row = [r.randrange(3, vocab - 1) for _ in range(r.randint(0, 3))]
        for _ in range(m):
            row += [token] * counts[k] + [r.randrange(3, vocab - 1) for _ in range(r.randint(0, 2))]
            k += 1
        rows.append(row or [r.randrange(3, vocab - 1)])
    l = max(len(row) for row in rows)
    side = side or r.choice(["right", "left"])
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, row in enumerate(rows):
        off = l - len(row) if side == "left" else 0
        ids[i, off:off + len(row)] = torch.tensor(row)
        mask[i, off:off + len(row)] = 1
    x = {"input_ids": ids, "attention_mask": mask, "input_features": torch.randn(n, mel, frames)}
    desc = f"b={b} l={l} audios={per_row} features={counts} pad={side}"
    if qwen2:
        fmask = torch.zeros(n, frames, dtype=torch.int64)
        for i, length in enumerate(lengths):
            fmask[i, :length] = 1
        x["feature_attention_mask"] = fmask
        desc += f" lengths={lengths}"
    return x, desc


def gen_seed_oss(r):
    """SeedOssForCausalLM: q/k/v, output and MLP biases at random."""
    c = decoder_common(r, "seed_oss")
    c["head_dim"] = r.choice([4, 8, 16])
    c.update(attention_bias=r.random() < 0.7, attention_out_bias=r.random() < 0.4, mlp_bias=r.random() < 0.3)
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.SeedOssForCausalLM, tf.SeedOssConfig, c


def gen_helium(r):
    """HeliumForCausalLM: interleaved whole-head RoPE, float32 norm scales, q/k/v biases at random (o_proj is
    [hidden, hidden], so heads * head_dim = hidden)."""
    c = decoder_common(r, "helium")
    c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    c.update(attention_bias=r.random() < 0.4, mlp_bias=r.random() < 0.3)
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 100000.0])}
    return tf.HeliumForCausalLM, tf.HeliumConfig, c


def gen_exaone4(r):
    """Exaone4ForCausalLM (its classifier: `exaone4_cls`): post-norm blocks with q/k norms, hybrid attention from a
    pattern or layer types (global layers without RoPE), or no window at all."""
    c = decoder_common(r, "exaone4")
    n = c["num_hidden_layers"]
    c["sliding_window"] = r.choice([None, 2, 3, 5])
    if c["sliding_window"] is None or r.random() < 0.4:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) if c["sliding_window"] else "full_attention"
                            for _ in range(n)]
    else:
        c["sliding_window_pattern"] = r.choice([1, 2, 3, 4])
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    return tf.Exaone4ForCausalLM, tf.Exaone4Config, c


class LlamaViaAuto:
    """The model of a config class transformers runs as LlamaForCausalLM (EXAONE 3, InternLM3, IQuestCoder), as the
    Auto classes give it: built from, and read back with, its own config class (`LlamaForCausalLM.from_pretrained`
    would read the config as a LlamaConfig, whose defaults differ)."""
    generate = tf.LlamaForCausalLM.generate

    def __new__(cls, config):
        return tf.LlamaForCausalLM(config)

    @staticmethod
    def from_pretrained(path, **kwargs):
        return tf.AutoModelForCausalLM.from_pretrained(path, **kwargs)


def via_auto(model_cls):
    """`model_cls` built from, and read back with, a config class of its own (Sarvam's on DeepSeek-V3 and GLM-4-MoE),
    as the Auto classes give it (see `LlamaViaAuto`)."""
    return type(f"{model_cls.__name__}ViaAuto", (), {
        "generate": model_cls.generate,
        "__new__": lambda cls, config: model_cls(config),
        "from_pretrained": staticmethod(lambda path, **kw: tf.AutoModelForCausalLM.from_pretrained(path, **kw)),
    })


def gen_sarvam_mla(r):
    """Sarvam-MLA (`sarvam_mla`, run as DeepseekV3ForCausalLM): DeepSeek-V3's random latent attention and routing on
    SarvamMLAConfig; the remote code's `deepseek_yarn` rope_scaling sometimes."""
    _, _, c = gen_deepseek_v3(r)
    rope = c.get("rope_parameters", {})
    if rope.get("rope_type") == "yarn" and r.random() < 0.5:
        rope = dict(c.pop("rope_parameters"))
        rope.pop("rope_type")
        c["rope_theta"] = rope.pop("rope_theta")
        c["rope_scaling"] = dict(rope, type="deepseek_yarn")
    return via_auto(tf.DeepseekV3ForCausalLM), tf.SarvamMLAConfig, c


def gen_sarvam_moe(r):
    """Sarvam-MoE (`sarvam_moe`, run as Glm4MoeForCausalLM): GLM-4-MoE's random config on SarvamMoEConfig (whole-head
    RoPE unless a share is given)."""
    _, _, c = gen_glm4_moe(r)
    if r.random() < 0.5:
        c["rope_parameters"].pop("partial_rotary_factor", None)
    return via_auto(tf.Glm4MoeForCausalLM), tf.SarvamMoEConfig, c


def gen_nanochat(r):
    """NanoChatForCausalLM: weightless norms, q/k norms after the reversed RoPE (of several kinds), the ungated MLP
    under a random activation, attention biases and final soft-capping at random."""
    c = decoder_common(r, "nanochat")
    c.update(attention_bias=r.random() < 0.3, hidden_act=r.choice(["relu2", "relu2", "gelu", "silu"]),
             final_logit_softcapping=r.choice([None, 2.0, 15.0]))
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    return tf.NanoChatForCausalLM, tf.NanoChatConfig, c


def gen_glm4_moe_lite(r):
    """Glm4MoeLiteForCausalLM: DeepSeek-V3's random latent attention and grouped routing, the layer kinds from
    mlp_layer_types or the class's default (the first dense)."""
    _, _, c = gen_deepseek_v3(r)
    c.pop("first_k_dense_replace")
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(c["num_hidden_layers"])]
    return tf.Glm4MoeLiteForCausalLM, tf.Glm4MoeLiteConfig, c


def gen_lfm2_moe(r):
    """Lfm2MoeForCausalLM: LFM2's random layers (layer_types given: transformers needs them) with mixtures after
    0-3 dense layers, sigmoid routing biased or not, renormalised or not, scaled."""
    h, nh, kv = heads(r)
    layers = r.randint(1, 3)
    types = [r.choice(["conv", "full_attention"]) for _ in range(layers)]
    types[r.randrange(layers)] = "full_attention"
    experts = r.randint(2, 6)
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=layers, num_attention_heads=nh,
             num_key_value_heads=kv, max_position_embeddings=r.choice([16, 32, 64]), norm_eps=r.choice([1e-5, 1e-3]),
             conv_L_cache=r.choice([2, 3, 4]), conv_bias=r.random() < 0.3, tie_word_embeddings=r.random() < 0.6,
             layer_types=types, intermediate_size=r.choice([24, 48]), moe_intermediate_size=r.choice([8, 16]),
             num_dense_layers=r.randint(0, 3), num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)),
             use_expert_bias=r.random() < 0.7, norm_topk_prob=r.random() < 0.7,
             routed_scaling_factor=r.choice([1.0, 2.5]), pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, None]))
    if r.random() < 0.4:
        c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    return tf.Lfm2MoeForCausalLM, tf.Lfm2MoeConfig, c


def gen_minimax_m2(r):
    """MiniMaxM2ForCausalLM: whole-projection q/k norms, RoPE over a random rotary_dim (or the rope dict's share, or
    whole heads), a sigmoid-routed mixture biased by a random e_score_correction_bias in every layer."""
    c = decoder_common(r, "minimax_m2")
    c["head_dim"] = r.choice([4, 8, 16])
    experts = r.randint(2, 8)
    c.update(num_local_experts=experts, num_experts_per_tok=r.randint(1, min(4, experts)),
             hidden_act=r.choice(["silu", "gelu"]))
    rope = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 5e6])}
    roll = r.random()
    if roll < 0.4:
        c["rotary_dim"] = r.choice([d for d in (2, 4, 8, 16) if d <= c["head_dim"]])
    elif roll < 0.6:
        rope["partial_rotary_factor"] = 0.5
    c["rope_parameters"] = rope
    return tf.MiniMaxM2ForCausalLM, tf.MiniMaxM2Config, c


def gen_openai_gpt(r):
    """OpenAIGPTLMHeadModel (its classifier: `openai_gpt_cls`): GPT-2's post-norm block without a final norm, random
    widths, depth, activation, epsilon."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([16, 64, 100, 128]), n_positions=r.choice([16, 32, 64]), n_embd=h,
             n_layer=r.randint(1, 3), n_head=nh, afn=r.choice(["gelu", "gelu", "relu", "silu", "swish"]),
             layer_norm_epsilon=r.choice([1e-5, 1e-3]), pad_token_id=0)
    return tf.OpenAIGPTLMHeadModel, tf.OpenAIGPTConfig, c


def gen_exaone(r):
    """EXAONE 3/3.5 (`exaone`): transformers runs it as LlamaForCausalLM, its checkpoints under GPT-2-style names."""
    _, _, c = gen_llama(r)
    c.pop("mlp_bias", None)
    c.pop("attention_bias", None)
    return LlamaViaAuto, tf.ExaoneConfig, c


def gen_internlm3(r):
    """InternLM3 (`internlm3`, run as LlamaForCausalLM): Llama with its config class's defaults (heads of 128, 2
    key/value heads), the attention and MLP biases together."""
    _, _, c = gen_llama(r)
    c["mlp_bias"] = c["attention_bias"]
    return LlamaViaAuto, tf.InternLM3Config, c


def gen_iquestcoder(r):
    """IQuestCoder (`iquestcoder`, run as LlamaForCausalLM): Llama with its config class's defaults."""
    _, _, c = gen_llama(r)
    return LlamaViaAuto, tf.IQuestCoderConfig, c


def gen_cwm(r):
    """CwmForCausalLM: Llama without attention biases, windows on the class's pattern (every fourth layer full) or on
    random layer types, the class's llama3 RoPE where the config names none."""
    c = decoder_common(r, "cwm")
    c.update(mlp_bias=r.random() < 0.3, sliding_window=r.choice([2, 3, 5]))
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(c["num_hidden_layers"])]
    if r.random() < 0.6:
        hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
        c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    return tf.CwmForCausalLM, tf.CwmConfig, c


def rope_per_layer_type(r, hd, max_pos, types, partial=False):
    """A rope dict per layer type used (Mellum, Laguna): random bases, sometimes a scaled RoPE, with `partial` a
    random share of each head."""
    rope = {}
    for t in sorted(set(types)):
        p = rope_for(r, hd, max_pos) if r.random() < 0.4 else {"rope_type": "default",
                                                                "rope_theta": r.choice([50.0, 10000.0, 5e5])}
        if partial and r.random() < 0.6:
            p["partial_rotary_factor"] = r.choice([0.5, 0.25, 1.0])
        rope[t] = p
    return rope


def layer_types_for(r, c):
    """Random layer types (some sliding) and a window, or none (all full)."""
    if r.random() < 0.7:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(c["num_hidden_layers"])]
    c["sliding_window"] = r.choice([2, 3, 5])
    return c.get("layer_types", ["full_attention"] * c["num_hidden_layers"])


def gen_mellum(r):
    """MellumForCausalLM: Qwen3-MoE's attention (biases at random) windowed on random sliding layers, a random rope
    dict per layer type (or the class's), softmax mixtures on random mlp_layer_types, renormalised or not."""
    c = decoder_common(r, "mellum")
    c["head_dim"] = r.choice([4, 8, 16])
    types = layer_types_for(r, c)
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), moe_intermediate_size=r.choice([8, 12]),
             norm_topk_prob=r.random() < 0.6, attention_bias=r.random() < 0.3, hidden_act=r.choice(["silu", "gelu"]))
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(c["num_hidden_layers"])]
    if r.random() < 0.7:
        c["rope_parameters"] = rope_per_layer_type(r, c["head_dim"], c["max_position_embeddings"], types)
    return tf.MellumForCausalLM, tf.MellumConfig, c


def gen_laguna(r):
    """LagunaForCausalLM: random head counts per layer, a softplus gate per head or channel, random rope dicts per
    layer type over random shares of each head (or the class's), mixtures of (soft-capped) sigmoid scores with a
    random correction bias, scaled, beside a shared expert, on random mlp_layer_types."""
    c = decoder_common(r, "laguna")
    c["head_dim"] = r.choice([4, 8, 16])
    types = layer_types_for(r, c)
    kv = c["num_key_value_heads"]
    if r.random() < 0.6:
        c["num_attention_heads_per_layer"] = [kv * r.randint(1, 3) for _ in range(c["num_hidden_layers"])]
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), moe_intermediate_size=r.choice([8, 12]),
             shared_expert_intermediate_size=r.choice([8, 16]), attention_bias=r.random() < 0.3,
             gating=r.choice([True, "per-head", "per-element", False]),
             moe_router_logit_softcapping=r.choice([0.0, 0.0, 1.0, 3.0]),
             moe_routed_scaling_factor=r.choice([1.0, 1.5, 2.5]))
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(c["num_hidden_layers"])]
    if r.random() < 0.7:
        c["rope_parameters"] = rope_per_layer_type(r, c["head_dim"], c["max_position_embeddings"], types, partial=True)
    return tf.LagunaForCausalLM, tf.LagunaConfig, c


def gen_afmoe(r):
    """AfmoeForCausalLM: random sliding layers (the class's pattern of every n-th layer full, or given) with RoPE on
    those alone, sigmoid gates, sandwich norms, 0-3 dense layers then sigmoid mixtures steered by a random
    expert_bias, scaled, beside 0-2 shared experts, µP's embedding scale at random."""
    c = decoder_common(r, "afmoe")
    c["head_dim"] = r.choice([4, 8, 16])
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(c["num_hidden_layers"])]
    else:
        c["global_attn_every_n_layers"] = r.choice([1, 2, 3, 4])
    experts = r.randint(2, 6)
    c.update(sliding_window=r.choice([2, 3, 5]), num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)),
             moe_intermediate_size=r.choice([8, 12]), num_dense_layers=r.randint(0, 3),
             num_shared_experts=r.choice([0, 1, 2]), route_scale=r.choice([1.0, 1.5, 2.5]),
             mup_enabled=r.random() < 0.5, attention_bias=r.random() < 0.3, hidden_act=r.choice(["silu", "gelu"]))
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.AfmoeForCausalLM, tf.AfmoeConfig, c


def gen_llama4(r):
    """Llama4ForCausalLM: random RoPE / NoPE layers (no_rope_layers or the interval), q/k norms or none, chunks of
    2-5 tokens (or none) on random layers, the temperature at random scales, mixtures on random layers (listed or
    every n-th) with 1-3 experts a token, wider dense MLPs, a random RoPE."""
    c = decoder_common(r, "llama4")
    c["head_dim"] = r.choice([4, 8, 16])
    layers = c["num_hidden_layers"]
    experts = r.randint(2, 6)
    c.update(num_local_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)),
             intermediate_size=r.choice([8, 12]), intermediate_size_mlp=r.choice([16, 24]),
             use_qk_norm=r.random() < 0.7, attn_temperature_tuning=r.random() < 0.7,
             floor_scale=r.choice([1, 2, 3, 8192]), attn_scale=r.choice([0.1, 0.5, 1.0]),
             attention_chunk_size=r.choice([None, 2, 3, 5, 8192]), attention_bias=r.random() < 0.2)
    if r.random() < 0.5:
        c["no_rope_layers"] = [r.choice([0, 1]) for _ in range(layers)]
    else:
        c["no_rope_layer_interval"] = r.choice([1, 2, 3, 4])
    if r.random() < 0.4:
        c["moe_layers"] = [i for i in range(layers) if r.random() < 0.6]
    else:
        c["interleave_moe_layer_step"] = r.choice([1, 2])
    if c["attention_chunk_size"] is not None and r.random() < 0.3:
        c["layer_types"] = [r.choice(["chunked_attention", "full_attention"]) for _ in range(layers)]
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.Llama4ForCausalLM, tf.Llama4TextConfig, c


def gen_hy_v3(r):
    """HYV3ForCausalLM: q/k norms, DeepSeek-V3-style sigmoid mixtures (a random correction bias) on random
    mlp_layer_types or the default (the first dense), 0-2 shared experts, a random scale."""
    c = decoder_common(r, "hy_v3")
    c["head_dim"] = r.choice([4, 8, 16])
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), moe_intermediate_size=r.choice([8, 12]),
             num_shared_experts=r.choice([0, 1, 2]), router_scaling_factor=r.choice([1.0, 2.826]),
             attention_bias=r.random() < 0.2, mlp_bias=r.random() < 0.2, hidden_act=r.choice(["silu", "gelu"]))
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(c["num_hidden_layers"])]
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.HYV3ForCausalLM, tf.HYV3Config, c


def gen_cohere2_moe(r):
    """Cohere2MoeForCausalLM: Cohere 2's parallel blocks (layer or RMS norms) with 0-2 dense prefix layers (RoPE kept
    or not), random window patterns, mixtures by softmax over the top logits or sigmoids (renormalised or not), 0-2
    shared experts averaged or summed, a random logit scale."""
    c = decoder_common(r, "cohere2_moe")
    c.pop("rms_norm_eps")
    c["head_dim"] = r.choice([4, 8, 16])
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), intermediate_size=r.choice([8, 12]),
             num_shared_experts=r.choice([0, 1, 2]), expert_selection_fn=r.choice(["softmax", "sigmoid"]),
             shared_expert_combination_strategy=r.choice(["average", "sum"]), norm_topk_prob=r.random() < 0.6,
             first_k_dense_replace=r.randint(0, 2), prefix_dense_sliding_window_pattern=r.choice([1, 2]),
             sliding_window_pattern=r.choice([1, 2, 4]), sliding_window=r.choice([2, 3, 5]),
             logit_scale=r.choice([0.0625, 1.0, 0.5]), attention_bias=r.random() < 0.2,
             layer_norm_eps=r.choice([1e-5, 1e-3]), rope_theta=r.choice([100.0, 10000.0]))
    if r.random() < 0.4:
        c["rms_norm_eps"] = r.choice([1e-6, 1e-5])
    if r.random() < 0.4:
        c["prefix_dense_intermediate_size"] = r.choice([8, 16])
    return tf.Cohere2MoeForCausalLM, tf.Cohere2MoeConfig, c


def gen_granite_swa(r):
    """GraniteSWAForCausalLM: Granite's random multipliers, sinks, random layer types (or the default pattern), a
    random window, layer_rope_theta with up to two bases and NoPE layers (or the global base)."""
    c = decoder_common(r, "granite_swa")
    layers = c["num_hidden_layers"]
    c.update(sliding_window=r.choice([2, 3, 5]), embedding_multiplier=r.choice([1.0, 2.0, 12.0]),
             attention_multiplier=r.choice([0.1, 0.3, 1.0]), residual_multiplier=r.choice([0.2, 1.0]),
             logits_scaling=r.choice([1.0, 4.0]), attention_bias=r.random() < 0.2, mlp_bias=r.random() < 0.2)
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    if r.random() < 0.6:
        bases = [0.0] + r.sample([50.0, 3000.0, 10000.0, 5e5], 2)
        c["layer_rope_theta"] = [r.choice(bases) for _ in range(layers)]
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
    return tf.GraniteSWAForCausalLM, tf.GraniteSWAConfig, c


def gen_minicpm3(r):
    """MiniCPM3ForCausalLM (its classifier: `minicpm3_cls`): random latent widths (a low-rank q or none), random
    embedding, depth and logit scales (or none), a random RoPE (YaRN's mscale reaching the attention scale)."""
    c = decoder_common(r, "minicpm3")
    c["num_key_value_heads"] = c["num_attention_heads"]
    c.pop("head_dim", None)
    c.update(q_lora_rank=r.choice([None, 8, 16]), kv_lora_rank=r.choice([4, 8]), qk_nope_head_dim=r.choice([2, 4, 8]),
             qk_rope_head_dim=r.choice([2, 4, 8]), v_head_dim=r.choice([None, 4, 8]),
             scale_emb=r.choice([1.0, 3.0, 12.0]), scale_depth=r.choice([None, 1.4, 2.0]),
             dim_model_base=r.choice([None, 8, 16]), attention_bias=r.random() < 0.2, mlp_bias=r.random() < 0.2)
    c["rope_parameters"] = rope_for(r, c["qk_rope_head_dim"], c["max_position_embeddings"],
                                    kinds=("default", "linear", "yarn"))
    return tf.MiniCPM3ForCausalLM, tf.MiniCPM3Config, c


def gen_dbrx(r):
    """DbrxForCausalLM: random widths and key/value heads, a clamp (transformers 5.24 needs one) that bites or not,
    2-5 experts with 1-3 a token, normalised or not, a random activation and RoPE base."""
    h, nh, kv = heads(r)
    experts = r.randint(2, 5)
    c = dict(d_model=h, n_heads=nh, n_layers=r.randint(1, 3), max_seq_len=r.choice([16, 32, 64]),
             vocab_size=r.choice([16, 64, 100]), pad_token_id=0, bos_token_id=1, eos_token_id=r.choice([2, None]),
             attn_config={"kv_n_heads": kv, "clip_qkv": r.choice([0.5, 2.0, 8.0]), "rope_theta": 5e5},
             ffn_config={"ffn_hidden_size": r.choice([8, 12]), "moe_num_experts": experts,
                         "moe_top_k": r.randint(1, min(3, experts)), "ffn_act_fn": {"name": r.choice(["silu", "gelu"])},
                         "moe_normalize_expert_weights": r.choice([1.0, None])},
             rope_parameters={"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])})
    return tf.DbrxForCausalLM, tf.DbrxConfig, c


def gen_persimmon(r):
    """PersimmonForCausalLM (its classifiers: `persimmon_cls`, `persimmon_tok`): random widths, q/k layer norms or
    none, a random share of each head rotated, a random activation and epsilon."""
    h, nh, _ = heads(r)
    hd = h // nh
    c = dict(vocab_size=r.choice([16, 64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 40, 64]), max_position_embeddings=r.choice([16, 32, 64]),
             layer_norm_eps=r.choice([1e-5, 1e-3]), qk_layernorm=r.random() < 0.7,
             hidden_act=r.choice(["relu2", "gelu", "silu"]), tie_word_embeddings=r.random() < 0.2, pad_token_id=0,
             bos_token_id=1, eos_token_id=r.choice([2, None]),
             rope_parameters={"rope_type": "default", "rope_theta": r.choice([100.0, 25000.0]),
                              "partial_rotary_factor": r.choice([f for f in (0.25, 0.5, 1.0) if int(hd * f) % 2 == 0])})
    return tf.PersimmonForCausalLM, tf.PersimmonConfig, c


def gen_mimo_v2_flash(r):
    """MiMoV2FlashForCausalLM: random head and value widths, a value scale, random layer types (or the class's
    pattern), doubled key/value heads and sinks on sliding layers, random rope dicts per layer type over random shares
    of each head (or the class's), a grouped sigmoid mixture on random MLP kinds."""
    c = decoder_common(r, "mimo_v2_flash")
    c["head_dim"] = r.choice([8, 12, 16, 24])
    c["v_head_dim"] = r.choice([d for d in (4, 8, 12) if d <= c["head_dim"]])
    layers = c["num_hidden_layers"]
    experts = r.choice([4, 6, 8])
    groups = r.choice([g for g in (1, 2) if experts % g == 0])
    c.update(n_routed_experts=experts, num_experts_per_tok=r.randint(1, 2), moe_intermediate_size=r.choice([8, 12]),
             n_group=groups, topk_group=r.randint(1, groups), norm_topk_prob=r.random() < 0.7,
             routed_scaling_factor=r.choice([1.0, 2.5]), attention_value_scale=r.choice([0.707, 1.0, 0.5]),
             sliding_window=r.choice([2, 3, 5]), attention_bias=r.random() < 0.3, hidden_act=r.choice(["silu", "gelu"]))
    types = ["full_attention" if (i == 0 or not (i + 1) % 6) else "sliding_attention" for i in range(layers)]
    if r.random() < 0.5:
        types = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
        c["layer_types"] = types
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(layers)]
    if r.random() < 0.5:
        rope = {}
        for t in sorted(set(types)):
            rope[t] = {"rope_type": "default", "rope_theta": r.choice([50.0, 10000.0, 5e6]),
                       "partial_rotary_factor": r.choice([0.334, 0.5, 1.0])}
        c["rope_parameters"] = rope
    return tf.MiMoV2FlashForCausalLM, tf.MiMoV2FlashConfig, c


def gen_gemma4(r, bidirectional=False):
    """Gemma4ForCausalLM: random layer types (the last forced full) and head widths, the full layers' own width and
    key/value heads with values from their keys at random, random RoPE per layer type (proportional over random
    shares, scaled or not), per-layer inputs of random width (or none), a random number of layers sharing earlier
    layers' keys and values (MLPs doubled at random), a mixture beside each dense MLP at random, soft-capping at
    random; with `bidirectional`, attention both ways."""
    c = decoder_common(r, "gemma4")
    c.pop("head_dim", None)
    layers = r.randint(2, 5)
    heads = c["num_attention_heads"]
    types = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers - 1)] + ["full_attention"]
    k_eq_v = r.random() < 0.5
    c.update(num_hidden_layers=layers, layer_types=types, head_dim=r.choice([4, 8, 16]), sliding_window=r.choice([2, 3, 5]),
             global_head_dim=r.choice([4, 8, 12, 16]), attention_k_eq_v=k_eq_v,
             hidden_activation=r.choice(["gelu_pytorch_tanh", "gelu_pytorch_tanh", "silu"]),
             final_logit_softcapping=r.choice([None, None, 5.0, 30.0]), attention_bias=r.random() < 0.2)
    if k_eq_v and r.random() < 0.7:
        c["num_global_key_value_heads"] = r.choice([d for d in (1, 2, heads) if heads % d == 0])
    # Sharing: the last n layers read the last earlier layer of their type (every type must have one).
    shared = [n for n in range(layers) if set(types[: layers - n]) == set(types)]
    c["num_kv_shared_layers"] = 0 if bidirectional else r.choice(shared)
    # (transformers 5.24's `generate` fails on sharing without per-layer inputs, which its models always have.)
    if c["num_kv_shared_layers"] > 0 or r.random() < 0.6:
        c["hidden_size_per_layer_input"] = r.choice([2, 4, 8])
        c["vocab_size_per_layer_input"] = c["vocab_size"] + r.choice([0, 0, 7])
    else:
        c["hidden_size_per_layer_input"] = 0
    c["use_double_wide_mlp"] = r.random() < 0.5
    if r.random() < 0.4:
        experts = r.randint(2, 6)
        c.update(enable_moe_block=True, num_experts=experts, top_k_experts=r.randint(1, min(3, experts)),
                 moe_intermediate_size=r.choice([8, 12]))
    if r.random() < 0.7:
        full = {"rope_type": "proportional", "partial_rotary_factor": r.choice([0.25, 0.5, 1.0]),
                "rope_theta": r.choice([100.0, 10000.0, 1e6])}
        if r.random() < 0.3:
            full["factor"] = r.choice([2.0, 8.0])
        if r.random() < 0.2:
            full = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])}
        c["rope_parameters"] = {"full_attention": full,
                                "sliding_attention": {"rope_type": "default", "rope_theta": r.choice([10.0, 10000.0])}}
    if bidirectional:
        c["use_bidirectional_attention"] = "all"
    elif r.random() < 0.2:
        c["use_bidirectional_attention"] = "vision"
    return tf.Gemma4ForCausalLM, tf.Gemma4TextConfig, c


def gen_gemma3n(r):
    """Gemma3nForCausalLM: 1-4 hidden streams with a random active one (output scale or not), random LAuReL ranks,
    per-layer inputs of random width over a table smaller or larger than the vocabulary, random layer types and
    sharing, per-layer MLP widths or one, random activation sparsities, random RoPE bases (4.x style at random)."""
    c = decoder_common(r, "gemma3n")
    c.pop("head_dim", None)
    layers = r.randint(1, 5)
    types = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    streams = r.randint(1, 4)
    shared = [n for n in range(layers) if set(types[: layers - n]) == set(types)]
    c.update(num_hidden_layers=layers, layer_types=types, head_dim=r.choice([4, 8, 16]),
             sliding_window=r.choice([2, 3, 5]), altup_num_inputs=streams, altup_active_idx=r.randrange(streams),
             altup_correct_scale=r.random() < 0.7, laurel_rank=r.choice([1, 2, 4]),
             hidden_size_per_layer_input=r.choice([2, 4, 8]),
             vocab_size_per_layer_input=max(4, c["vocab_size"] + r.choice([-10, 0, 7])),
             num_kv_shared_layers=r.choice(shared),
             activation_sparsity_pattern=[r.choice([0.0, 0.0, 0.5, 0.95]) for _ in range(layers)],
             hidden_activation=r.choice(["gelu_pytorch_tanh", "gelu_pytorch_tanh", "silu"]),
             final_logit_softcapping=r.choice([5.0, 30.0]), attention_bias=r.random() < 0.2)
    if r.random() < 0.5:
        c["intermediate_size"] = [r.choice([16, 24, 40]) for _ in range(layers)]
    if r.random() < 0.5:
        c["rope_parameters"] = {"full_attention": rope_for(r, c["head_dim"], c["max_position_embeddings"],
                                                           ("default", "linear", "yarn")),
                                "sliding_attention": {"rope_type": "default", "rope_theta": r.choice([10.0, 10000.0])}}
    elif r.random() < 0.5:
        c.update(rope_theta=r.choice([100.0, 1e6]), rope_local_base_freq=r.choice([10.0, 10000.0]))
    return tf.Gemma3nForCausalLM, tf.Gemma3nTextConfig, c


def gen_mistral4(r):
    """Mistral4ForCausalLM: random latent widths (q at full or low rank, RoPE interleaved or over halves), YaRN with or
    without mscale and the query scale at random positions, dense first layers, a softmax router over random groups,
    renormalised or not, scaled, with 1-2 shared experts."""
    c = decoder_common(r, "mistral4")
    c.pop("head_dim", None)
    c["num_key_value_heads"] = c["num_attention_heads"]
    experts = r.choice([4, 6, 8])
    groups = r.choice([g for g in (1, 2) if experts % g == 0 and experts // g >= 2])
    c.update(q_lora_rank=r.choice([None, 8, 16]), kv_lora_rank=r.choice([4, 8]), qk_nope_head_dim=r.choice([4, 8]),
             qk_rope_head_dim=r.choice([2, 4, 8]), v_head_dim=r.choice([4, 8, 12]), rope_interleave=r.random() < 0.6,
             n_routed_experts=experts, num_experts_per_tok=r.randint(1, 3), n_group=groups, topk_group=r.randint(1, groups),
             n_shared_experts=r.choice([1, 2]), moe_intermediate_size=r.choice([8, 12]),
             first_k_dense_replace=r.choice([0, 1]), norm_topk_prob=r.random() < 0.8,
             routed_scaling_factor=r.choice([1.0, 2.5]), attention_bias=r.random() < 0.2)
    # (No more experts a token than its groups hold: transformers would pick the rest among masked ties, and
    # hf-import refuses the config.)
    c["num_experts_per_tok"] = min(c["num_experts_per_tok"], c["topk_group"] * experts // groups)
    rope = {"rope_type": "yarn", "rope_theta": r.choice([100.0, 10000.0]), "factor": r.choice([2.0, 8.0]),
            "original_max_position_embeddings": r.choice([2, 4, 8]), "beta_fast": 32.0, "beta_slow": 1.0,
            "llama_4_scaling_beta": r.choice([0.1, 0.5])}
    if r.random() < 0.5:
        rope.update(mscale_all_dim=1.0, mscale=1.0)
    c["rope_parameters"] = rope
    return tf.Mistral4ForCausalLM, tf.Mistral4Config, c


def gen_flint(r):
    """FlintForCausalLM: random layer types (or the class's), sinks, dense layers listed (or the class's first two),
    float32 sigmoid routing renormalised or not, a shared expert of random width."""
    c = decoder_common(r, "flint")
    c["head_dim"] = r.choice([4, 8, 16])
    layers = c["num_hidden_layers"] = r.randint(1, 5)
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), moe_intermediate_size=r.choice([8, 12]),
             shared_expert_intermediate_size=r.choice([8, 16]), norm_topk_prob=r.random() < 0.7,
             sliding_window=r.choice([2, 3, 5]), attention_bias=r.random() < 0.2)
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    if r.random() < 0.5:
        c["mlp_only_layers"] = [i for i in range(layers) if r.random() < 0.4]
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.FlintForCausalLM, tf.FlintConfig, c


def gen_axk1(r):
    """AXK1ForCausalLM: random latent widths (q always through its low rank), a grouped sigmoid mixture with its output
    normed, layer kinds from mlp_layer_types or the legacy first_k_dense_replace / moe_layer_freq."""
    c = decoder_common(r, "axk1")
    c.pop("head_dim", None)
    c["num_key_value_heads"] = c["num_attention_heads"]
    experts = r.choice([4, 6, 8])
    groups = r.choice([g for g in (1, 2) if experts % g == 0])
    c.update(q_lora_rank=r.choice([8, 16]), kv_lora_rank=r.choice([4, 8]), qk_nope_head_dim=r.choice([4, 8]),
             qk_rope_head_dim=r.choice([2, 4, 8]), v_head_dim=r.choice([4, 8, 12]), rope_interleave=r.random() < 0.6,
             n_routed_experts=experts, num_experts_per_tok=r.randint(1, 2), n_group=groups, topk_group=r.randint(1, groups),
             n_shared_experts=r.choice([1, 2]), moe_intermediate_size=r.choice([8, 12]), norm_topk_prob=r.random() < 0.8,
             routed_scaling_factor=r.choice([1.0, 2.5]), attention_bias=r.random() < 0.2)
    layers = c["num_hidden_layers"]
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(layers)]
    else:
        c.update(first_k_dense_replace=r.choice([0, 1]), moe_layer_freq=r.choice([1, 2]))
    c["rope_parameters"] = rope_for(r, c["qk_rope_head_dim"], c["max_position_embeddings"], ("default", "linear", "yarn"))
    return tf.AXK1ForCausalLM, tf.AXK1Config, c


def gen_kolibri1(r):
    """Kolibri1ForCausalLM: random layer types (or the class's), windows, a mixture on every layer choosing by biased
    logits, renormalised or not, beside a shared expert of random width."""
    c = decoder_common(r, "kolibri1")
    c["head_dim"] = r.choice([4, 8, 16])
    layers = c["num_hidden_layers"]
    experts = r.randint(2, 6)
    c.update(num_experts=experts, num_experts_per_tok=r.randint(1, min(3, experts)), moe_intermediate_size=r.choice([8, 12]),
             shared_expert_intermediate_size=r.choice([8, 16]), norm_topk_prob=r.random() < 0.6,
             sliding_window=r.choice([2, 3, 5]))
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(layers)]
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.Kolibri1ForCausalLM, tf.Kolibri1Config, c


def gen_lfm3(r):
    """Lfm3ForCausalLM: random layer types (or the class's pattern), windows and convolution widths, gates and sandwich
    norms at random, RoPE per layer type (proportional over random shares, or default)."""
    c = decoder_common(r, "lfm3")
    c["head_dim"] = r.choice([4, 8, 16])
    layers = c["num_hidden_layers"] = r.randint(1, 6)
    c["norm_eps"] = c.pop("rms_norm_eps")
    c.update(sliding_window=r.choice([2, 3, 5]), conv_L_cache=r.choice([2, 3, 4]), conv_bias=r.random() < 0.3,
             use_sandwich_norm=r.random() < 0.7, use_attention_gate=r.random() < 0.7)
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["conv", "sliding_attention", "full_attention"]) for _ in range(layers)]
    if r.random() < 0.5:
        c["rope_parameters"] = {
            "sliding_attention": {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0])},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": r.choice([0.25, 0.5, 1.0]),
                               "rope_theta": r.choice([1000.0, 1e6])}}
    return tf.Lfm3ForCausalLM, tf.Lfm3Config, c


def gen_diffllama(r):
    """DiffLlamaForCausalLM: an even number of key/value heads (and heads), random head widths, biases at random."""
    c = decoder_common(r, "diffllama")
    heads = r.choice([2, 4, 8])
    c.update(num_attention_heads=heads, num_key_value_heads=r.choice([k for k in (2, 4) if heads % k == 0]),
             head_dim=r.choice([4, 8, 16]), attention_bias=r.random() < 0.3, lambda_std_dev=r.choice([0.1, 0.5]))
    c["rope_parameters"] = rope_for(r, c["head_dim"], c["max_position_embeddings"])
    return tf.DiffLlamaForCausalLM, tf.DiffLlamaConfig, c


def gen_bitnet(r):
    """BitNetForCausalLM: ReLU² (or another activation), the sub-norms; unquantized, or quantized online (full
    weights made ternary when loaded, int8 activations: transformers' `AutoBitLinear`)."""
    c = decoder_common(r, "bitnet")
    # (Its attention is `hidden_size` wide: no head_dim of its own.)
    c.pop("head_dim", None)
    c["hidden_act"] = r.choice(["relu2", "relu2", "silu"])
    c["rope_parameters"] = rope_for(r, c["hidden_size"] // c["num_attention_heads"], c["max_position_embeddings"])
    if r.random() < 0.6:
        c["quantization_config"] = {"quant_method": "bitnet", "linear_class": "autobitlinear",
                                    "quantization_mode": "online"}
    return tf.BitNetForCausalLM, tf.BitNetConfig, c


def gen_modernbert_decoder(r):
    """ModernBertDecoderForCausalLM: ModernBERT's layers run causally (the first without its input norm), global
    layers every n from the first and the others windowed (local_attention / 2 keys), a RoPE base per layer type,
    biases and the norms' biases at random, the prediction head (its activation at random) before the decoder (tied
    or not, with or without bias); 4.x-style keys or transformers 5's."""
    c = decoder_common(r, "modernbert_decoder")
    for key in ["num_key_value_heads", "head_dim", "rms_norm_eps"]:
        c.pop(key, None)
    c["norm_eps"] = r.choice([1e-6, 1e-5, 1e-3])
    c["hidden_activation"] = r.choice(["gelu", "silu", "gelu_new", "relu"])
    c["classifier_activation"] = r.choice(["gelu", "silu", "tanh"])
    for key in ["attention_bias", "mlp_bias", "norm_bias", "classifier_bias"]:
        c[key] = r.random() < 0.4
    c["decoder_bias"] = r.random() < 0.7
    # (A window of one key, local_attention 2, makes transformers' sliding cache keep every key and its one-column
    # decoding mask broadcast over them all: its generation then attends to the whole past.)
    c["local_attention"] = r.choice([4, 6, 8, 128])
    c["global_attn_every_n_layers"] = r.choice([1, 2, 3])
    if r.random() < 0.5:
        c["rope_parameters"] = {"full_attention": {"rope_type": "default", "rope_theta": r.choice([100.0, 1000.0])},
                                "sliding_attention": {"rope_type": "default", "rope_theta": r.choice([50.0, 500.0])}}
    else:
        c["global_rope_theta"] = r.choice([100.0, 160000.0])
        c["local_rope_theta"] = r.choice([50.0, 10000.0])
    return tf.ModernBertDecoderForCausalLM, tf.ModernBertDecoderConfig, c


def gen_gemma4_mm(r):
    """Gemma4ForConditionalGeneration on text: a random Gemma 4 text model without vision or audio towers, the head
    tied by the outer flag or not."""
    _, _, text = gen_gemma4(r)
    text["model_type"] = "gemma4_text"
    tie = text.pop("tie_word_embeddings")
    return tf.Gemma4ForConditionalGeneration, tf.Gemma4Config, dict(text_config=text, tie_word_embeddings=tie)


def gen_jais2(r):
    """Jais2ForCausalLM: layer norms with biases, the ungated MLP (relu² or another activation), biases at random."""
    c = decoder_common(r, "jais2")
    c["layer_norm_eps"] = c.pop("rms_norm_eps")
    c.update(attention_bias=r.random() < 0.7, mlp_bias=r.random() < 0.7,
             hidden_act=r.choice(["relu2", "relu2", "gelu", "silu"]))
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    return tf.Jais2ForCausalLM, tf.Jais2Config, c


def gen_hyperclovax(r):
    """HyperCLOVAXForCausalLM: Granite's random multipliers (the attention's absent sometimes: head_dim^-0.5), post
    norms or not, the logits multiplied."""
    _, _, c = gen_granite(r)
    c["use_post_norm"] = r.random() < 0.7
    if r.random() < 0.5:
        c.pop("attention_multiplier")
    return tf.HyperCLOVAXForCausalLM, tf.HyperCLOVAXConfig, c


def gen_solar_open(r):
    """SolarOpenForCausalLM: Llama's attention (q/k/v biases at random, heads of the class's 128 sometimes), DeepSeek-V3's
    routing in every layer."""
    c = decoder_common(r, "solar_open")
    c["attention_bias"] = r.random() < 0.5
    v3_routing(r, c)
    c.pop("first_k_dense_replace")
    c.pop("intermediate_size")
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 1e6])}
    return tf.SolarOpenForCausalLM, tf.SolarOpenConfig, c


def gen_youtu(r):
    """YoutuForCausalLM: DeepSeek-V3's latent attention (random widths, RoPE kinds, interleaved or not) with dense
    MLPs, tied by default."""
    c = deepseek_common(r, "youtu")
    for k in ("moe_intermediate_size", "n_shared_experts", "first_k_dense_replace", "routed_scaling_factor"):
        c.pop(k)
    c["rope_interleave"] = r.random() < 0.6
    if r.random() < 0.5:
        c.pop("tie_word_embeddings")
    return tf.YoutuForCausalLM, tf.YoutuConfig, c


def gen_exaone_moe(r):
    """ExaoneMoeForCausalLM: EXAONE 4's hybrid attention in pre-norm blocks with DeepSeek-V3's grouped sigmoid mixture
    (random groups, scaling, renormalised or not, shared experts) on the layers mlp_layer_types or
    first_k_dense_replace marks."""
    c = decoder_common(r, "exaone_moe")
    n = c["num_hidden_layers"]
    c["sliding_window"] = r.choice([2, 3, 5])
    if r.random() < 0.4:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    else:
        c["sliding_window_pattern"] = r.choice([1, 2, 3, 4])
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"])
    groups, per = r.choice([1, 2]), r.choice([2, 3])
    c.update(num_experts=groups * per, moe_intermediate_size=r.choice([8, 16]), num_shared_experts=r.choice([1, 2]),
             n_group=groups, topk_group=r.randint(1, groups), norm_topk_prob=r.random() < 0.6,
             routed_scaling_factor=r.choice([1.0, 1.5, 2.5]))
    # (No more experts than the kept groups hold: transformers would weigh masked ones, in its top-k's tie order.)
    c["num_experts_per_tok"] = r.randint(1, min(3, c["topk_group"] * per))
    if r.random() < 0.5:
        c["mlp_layer_types"] = [r.choice(["dense", "sparse"]) for _ in range(n)]
    else:
        c["first_k_dense_replace"] = r.randint(0, n)
    return tf.ExaoneMoeForCausalLM, tf.ExaoneMoeConfig, c


def gen_gpt_oss(r):
    """GptOssForCausalLM (its classifier: `gpt_oss_cls`): attention sinks, biases at random, random layer types and
    windows, RoPE of several kinds, a mixture with the clamped SwiGLU at limits that clamp often or never."""
    c = decoder_common(r, "gpt_oss")
    n = c["num_hidden_layers"]
    c.update(attention_bias=r.random() < 0.7, num_local_experts=r.randint(2, 6), sliding_window=r.choice([2, 3, 5, 128]),
             swiglu_limit=r.choice([0.5, 1.0, 7.0]), swiglu_alpha=r.choice([1.702, 1.0]),
             layer_types=[r.choice(["sliding_attention", "full_attention"]) for _ in range(n)])
    c["num_experts_per_tok"] = r.randint(1, min(3, c["num_local_experts"]))
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = rope_for(r, hd, c["max_position_embeddings"], kinds=("default", "yarn", "yarn", "linear"))
    return tf.GptOssForCausalLM, tf.GptOssConfig, c


def gen_ernie4_5_moe(r):
    """Ernie4_5_MoeForCausalLM: ERNIE 4.5's attention, biases at random (the LM head's too), the mixture on the
    layers the moe_layer_* keys pick, biased softmax routing, zero to two shared experts."""
    c = decoder_common(r, "ernie4_5_moe")
    c["head_dim"] = r.choice([4, 8, 12, 16])
    n = c["num_hidden_layers"]
    c.update(use_bias=r.random() < 0.4, moe_num_experts=r.randint(2, 6), moe_intermediate_size=r.choice([8, 16]),
             moe_num_shared_experts=r.choice([0, 1, 2]), moe_layer_start_index=r.randint(0, n - 1),
             moe_layer_interval=r.choice([1, 1, 2]), moe_layer_end_index=r.choice([-1, n - 1]))
    c["moe_k"] = r.randint(1, min(3, c["moe_num_experts"]))
    c["rope_parameters"] = {"rope_type": "default", "rope_theta": r.choice([100.0, 10000.0, 500000.0])}
    return tf.Ernie4_5_MoeForCausalLM, tf.Ernie4_5_MoeConfig, c


def gen_stablelm(r):
    """StableLmForCausalLM: layer norms, a random rotary share (0.25 by default), q/k/v biases, per-head q/k layer
    norms and the parallel block at random."""
    c = decoder_common(r, "stablelm")
    c["layer_norm_eps"] = c.pop("rms_norm_eps")
    c.pop("head_dim", None)
    c.update(use_qkv_bias=r.random() < 0.5, qk_layernorm=r.random() < 0.4, use_parallel_residual=r.random() < 0.4,
             hidden_act=r.choice(ACTS))
    # (Shares that rotate an odd number of dims are refused, where transformers broadcasts wrongly.)
    hd = c["hidden_size"] // c["num_attention_heads"]
    shares = [f for f in (0.25, 0.5, 1.0) if int(hd * f) % 2 == 0 and int(hd * f) > 0]
    if r.random() < 0.6 or 0.25 not in shares:
        c["partial_rotary_factor"] = r.choice(shares)
    return tf.StableLmForCausalLM, tf.StableLmConfig, c


def gen_olmo3(r):
    """Olmo3ForCausalLM: OLMo 2's blocks, random layer types and window, a RoPE of its own per layer type."""
    c = decoder_common(r, "llama")
    n = c["num_hidden_layers"]
    if r.random() < 0.7:
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    c["sliding_window"] = r.choice([2, 3, 5, 4096])
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    c["rope_parameters"] = {"sliding_attention": rope_for(r, hd, c["max_position_embeddings"], ("default", "linear")),
                            "full_attention": rope_for(r, hd, c["max_position_embeddings"])}
    if r.random() < 0.4:
        c["attention_bias"] = True
    return tf.Olmo3ForCausalLM, tf.Olmo3Config, c


def gen_olmo(r):
    """OlmoForCausalLM (parameterless layer norms, clip_qkv) or Olmo2ForCausalLM (post-norms, whole-projection q/k
    norms): GQA, biases, RoPE scalings, tying."""
    c = decoder_common(r, "llama")
    olmo2 = r.random() < 0.5
    if not olmo2 and r.random() < 0.6:
        c["clip_qkv"] = r.choice([0.3, 1.0, 8.0])
    if not olmo2:  # (OLMo's norms take a fixed epsilon)
        c.pop("rms_norm_eps", None)
    if r.random() < 0.4:
        c["attention_bias"] = True
    return (tf.Olmo2ForCausalLM, tf.Olmo2Config, c) if olmo2 else (tf.OlmoForCausalLM, tf.OlmoConfig, c)


def gen_mpnet(r):
    """MPNetModel or MPNetForMaskedLM: RoBERTa-style positions (padding id 1), the relative-position bias (a table of 32
    or more buckets); up to 160 positions so that long inputs reach the log-spaced buckets."""
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), max_position_embeddings=r.choice([16, 64, 160]),
             relative_attention_num_buckets=r.choice([32, 40]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-12, 1e-5]), pad_token_id=1, bos_token_id=0, eos_token_id=2)
    cls = r.choice([tf.MPNetModel, tf.MPNetForMaskedLM])
    if cls is tf.MPNetForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.MPNetConfig, c


def gen_modernbert(r):
    """ModernBertModel or ModernBertForMaskedLM: random biases and norm shifts, layer types (given, or by
    global_attn_every_n_layers), windows, RoPE bases, activations; up to 40 tokens so that sliding
    windows of 1 to 8 matter."""
    h, nh, _ = heads(r)
    n = r.randint(1, 4)
    c = dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=n, num_attention_heads=nh,
             intermediate_size=r.choice([24, 48]), max_position_embeddings=r.choice([16, 64]),
             local_attention=r.choice([2, 4, 6, 16]), norm_eps=r.choice([1e-5, 1e-6]),
             norm_bias=r.random() < 0.5, attention_bias=r.random() < 0.5, mlp_bias=r.random() < 0.5,
             hidden_activation=r.choice(["gelu", "gelu_new", "silu", "relu"]), pad_token_id=0,
             bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
    if r.random() < 0.5:
        c["layer_types"] = [r.choice(["full_attention", "sliding_attention"]) for _ in range(n)]
    else:
        c["global_attn_every_n_layers"] = r.choice([1, 2, 3])
    if r.random() < 0.5:
        c["rope_parameters"] = {"full_attention": {"rope_type": "default", "rope_theta": r.choice([100.0, 160000.0])},
                                "sliding_attention": {"rope_type": "default", "rope_theta": r.choice([10.0, 10000.0])}}
    cls = r.choice([tf.ModernBertModel, tf.ModernBertForMaskedLM])
    if cls is tf.ModernBertForMaskedLM:
        c.update(tie_word_embeddings=r.random() < 0.5, decoder_bias=r.random() < 0.5,
                 classifier_bias=r.random() < 0.5, classifier_activation=r.choice(["gelu", "silu", "tanh"]))
    return cls, tf.ModernBertConfig, c


def gen_distilbert(r):
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([64, 100]), dim=h, n_heads=nh, n_layers=r.randint(1, 3), hidden_dim=r.choice([24, 64]),
             max_position_embeddings=r.choice([16, 32]), sinusoidal_pos_embds=r.random() < 0.5,
             activation=r.choice(["gelu", "relu"]))
    cls = r.choice([tf.DistilBertModel, tf.DistilBertForMaskedLM])
    if cls is tf.DistilBertForMaskedLM:
        c["tie_word_embeddings"] = r.random() < 0.5
    return cls, tf.DistilBertConfig, c


# Label names for named `id2label` maps (drawn without repeats).
LABEL_NAMES = ["negative", "positive", "neutral", "entailment", "contradiction", "toxic", "spam", "joy",
               "colère", "中性", "LABEL_7", "0", "label with spaces"]
PROBLEM_TYPES = ["regression", "single_label_classification", "multi_label_classification"]


def with_labels(r, c):
    """Random sequence-classification labels on a config dict: none (transformers' default of 2),
    `num_labels` 1-6 (saved as `id2label` LABEL_i) or a named `id2label`; sometimes a `problem_type`
    (only the loss reads it)."""
    roll = r.random()
    if roll < 0.4:
        c["num_labels"] = r.randint(1, 6)
    elif roll < 0.75:
        c["id2label"] = dict(enumerate(r.sample(LABEL_NAMES, r.randint(1, 6))))
    n = c.get("num_labels", len(c.get("id2label", {})) or 2)
    if r.random() < 0.3:  # transformers refuses single_label_classification with one label
        c["problem_type"] = r.choice([p for p in PROBLEM_TYPES if n > 1 or p != "single_label_classification"])
    return c


def gen_bert_cls(r):
    _, config_cls, c = gen_bert(r)
    c.pop("tie_word_embeddings", None)
    return tf.BertForSequenceClassification, config_cls, with_labels(r, c)


def gen_roberta_cls(r):
    _, config_cls, c = gen_roberta(r)
    c.pop("tie_word_embeddings", None)
    return tf.RobertaForSequenceClassification, config_cls, with_labels(r, c)


def gen_mpnet_cls(r):
    _, config_cls, c = gen_mpnet(r)
    c.pop("tie_word_embeddings", None)
    return tf.MPNetForSequenceClassification, config_cls, with_labels(r, c)


def gen_modernbert_cls(r):
    """ModernBertForSequenceClassification: its head's bias and activation, pooling the first token or the mean."""
    _, config_cls, c = gen_modernbert(r)
    for k in ("tie_word_embeddings", "decoder_bias"):
        c.pop(k, None)
    c.update(classifier_bias=r.random() < 0.5, classifier_activation=r.choice(["gelu", "silu", "tanh", "relu"]),
             classifier_pooling=r.choice(["cls", "mean"]))
    return tf.ModernBertForSequenceClassification, config_cls, with_labels(r, c)


def decoder_cls(gen, model_cls):
    """A decoder's `*ForSequenceClassification` (reward models): the base family's config with random labels and
    padding id (none at times: transformers then scores the last token of a single row and refuses a batch)."""
    def make(r):
        _, config_cls, c = gen(r)
        c["pad_token_id"] = r.choice([0, 0, 3, None])
        return model_cls, config_cls, with_labels(r, c)
    return make


def decoder_tok(gen, model_cls):
    """A decoder's `*ForTokenClassification`: the base family's config with random labels and, for the generic head
    `score`, `token_classification_bias` sometimes off (the GPT-2-style `classifier` ignores it)."""
    def make(r):
        _, config_cls, c = gen(r)
        if r.random() < 0.3:
            c["token_classification_bias"] = False
        return model_cls, config_cls, with_labels(r, c)
    return make


def multiple_choice(gen, model_cls):
    """An encoder's `*ForMultipleChoice` on the base family's config (one score per choice, whatever labels the
    config declares)."""
    def make(r):
        _, config_cls, c = gen(r)
        for k in ("tie_word_embeddings", "decoder_bias", "legacy"):
            c.pop(k, None)
        if config_cls is tf.ModernBertConfig:
            c.update(classifier_bias=r.random() < 0.5, classifier_activation=r.choice(["gelu", "silu", "tanh"]),
                     classifier_pooling=r.choice(["cls", "mean"]))
        if config_cls is tf.ElectraConfig and r.random() < 0.5:
            c.update(summary_type=r.choice(["first", "last", "mean"]), summary_use_proj=r.random() < 0.7,
                     summary_activation=r.choice(["gelu", "tanh", "relu", ""]))
        return model_cls, config_cls, with_labels(r, c) if r.random() < 0.3 else c
    return make


def per_token(gen, model_cls, config_cls=None):
    """An encoder's `*ForTokenClassification` (random labels) or `*ForQuestionAnswering` (two labels, as transformers
    requires) on the base family's config; ModernBERT's prediction head with a random bias and activation."""
    def make(r):
        _, base_config_cls, c = gen(r)
        for k in ("tie_word_embeddings", "decoder_bias"):
            c.pop(k, None)
        if base_config_cls is tf.ModernBertConfig:
            c.update(classifier_bias=r.random() < 0.5, classifier_activation=r.choice(["gelu", "silu", "tanh"]))
        if model_cls.__name__.endswith("TokenClassification"):
            c = with_labels(r, c)
        return model_cls, config_cls or base_config_cls, c
    return make


def gen_distilbert_cls(r):
    _, config_cls, c = gen_distilbert(r)
    c.pop("tie_word_embeddings", None)
    return tf.DistilBertForSequenceClassification, config_cls, with_labels(r, c)


def gen_xlm_roberta(r):
    """RoBERTa's configs as `xlm-roberta` (the same network)."""
    cls, _, c = gen_roberta(r)
    xlmr = {tf.RobertaModel: tf.XLMRobertaModel, tf.RobertaForMaskedLM: tf.XLMRobertaForMaskedLM}
    return xlmr[cls], tf.XLMRobertaConfig, c


def gen_xlm_roberta_cls(r):
    _, _, c = gen_roberta_cls(r)
    return tf.XLMRobertaForSequenceClassification, tf.XLMRobertaConfig, c


def image_size(r):
    """An image side (or a [height, width] pair) and a patch side: sometimes not dividing the image."""
    patch = r.choice([2, 4, 5])
    side = lambda: patch * r.randint(1, 4) + (r.choice([0, 0, 1, 3]) if r.random() < 0.4 else 0)
    return (side() if r.random() < 0.7 else [side(), side()]), patch


def gen_vit(r):
    """ViTModel (its pooler's width and activation) or ViTForImageClassification, or ViT-MSN's or I-JEPA's: image and
    patch sizes (non-square, not dividing), channels, biases on q/k/v or none."""
    h, nh, _ = heads(r)
    img, patch = image_size(r)
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["gelu", "relu", "gelu_new", "quick_gelu"]),
             layer_norm_eps=r.choice([1e-12, 1e-6, 1e-3]), image_size=img, patch_size=patch,
             num_channels=r.choice([1, 3, 4]), qkv_bias=r.random() < 0.7)
    prefix = r.choice(["ViT", "ViT", "ViTMSN", "IJepa"])  # (ViT-MSN: no pooler; I-JEPA: no class token either)
    cls = getattr(tf, prefix + r.choice(["Model", "ForImageClassification"]))
    if cls is tf.ViTModel and r.random() < 0.4:
        c.update(pooler_output_size=r.choice([8, 20]), pooler_act=r.choice(["tanh", "relu", "gelu"]))
    if cls.__name__.endswith("Classification"):
        c = with_labels(r, c)
    return cls, getattr(tf, prefix + "Config"), c


def gen_vit_mae(r):
    """ViTMAEModel or ViTMAEForPreTraining: a random ViT (square images of square patches for pre-training, as
    transformers' patchify needs), mask ratios (none masked for the base model), the decoder's width, depth and heads,
    the loss on normalised patches or raw pixels; the noise given."""
    h, nh, _ = heads(r)
    patch = r.choice([2, 4, 5])
    cls = r.choice([tf.ViTMAEModel, tf.ViTMAEForPreTraining])
    side = lambda: patch * r.randint(1, 4)
    img = side() if cls is tf.ViTMAEForPreTraining or r.random() < 0.6 else [side(), side()]
    dh, dnh, _ = heads(r)
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-12, 1e-6]), image_size=img, patch_size=patch,
             num_channels=r.choice([1, 3]), qkv_bias=r.random() < 0.7,
             mask_ratio=r.choice([0.25, 0.5, 0.75, 0.9] + ([0.0] if cls is tf.ViTMAEModel else [])),
             decoder_hidden_size=dh, decoder_num_attention_heads=dnh, decoder_num_hidden_layers=r.randint(1, 2),
             decoder_intermediate_size=r.choice([16, 32]), norm_pix_loss=r.random() < 0.5)
    return cls, tf.ViTMAEConfig, c


def gen_yolos(r):
    """YolosModel or YolosForObjectDetection: a random ViT, 1-5 detection tokens, positions stored for a random grid
    and resampled bicubically to other images' grids, mid-position tables or none."""
    h, nh, _ = heads(r)
    patch = r.choice([4, 8])
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-12, 1e-6]), image_size=[patch * r.randint(1, 4), patch * r.randint(1, 4)],
             patch_size=patch, num_channels=r.choice([1, 3]), qkv_bias=r.random() < 0.7,
             num_detection_tokens=r.randint(1, 5), use_mid_position_embeddings=r.random() < 0.6)
    cls = r.choice([tf.YolosModel, tf.YolosForObjectDetection])
    if cls is tf.YolosForObjectDetection:
        c = with_labels(r, c)
    return cls, tf.YolosConfig, c


def gen_dinov2(r):
    """Dinov2Model or Dinov2ForImageClassification: MLP or SwiGLU blocks, mlp_ratio, layer scales, and images of
    other sizes than the configured one (positions resampled bicubically)."""
    h, nh, _ = heads(r)
    patch = r.choice([2, 4])
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh, mlp_ratio=r.choice([2, 3, 4]),
             hidden_act=r.choice(["gelu", "relu", "gelu_new"]), layer_norm_eps=r.choice([1e-6, 1e-3]),
             image_size=patch * r.randint(2, 5), patch_size=patch, num_channels=r.choice([1, 3]),
             qkv_bias=r.random() < 0.8, use_swiglu_ffn=r.random() < 0.3, layerscale_value=r.choice([1.0, 0.1]))
    cls = r.choice([tf.Dinov2Model, tf.Dinov2ForImageClassification])
    if cls is tf.Dinov2ForImageClassification:
        c = with_labels(r, c)
    return cls, tf.Dinov2Config, c


def gen_siglip(r):
    """SiglipModel (texts and images), SiglipTextModel or SiglipVisionModel (with or without its attention-pooling
    head): random towers, text heads, activations."""
    cls = r.choice([tf.SiglipModel, tf.SiglipModel, tf.SiglipTextModel, tf.SiglipVisionModel])
    text, vision = clip_text(r), clip_vision(r)
    text.pop("projection_dim")
    vision.pop("projection_dim")
    text.update(hidden_act=r.choice(["gelu_pytorch_tanh", "gelu"]), layer_norm_eps=1e-6)
    vision.update(hidden_act=r.choice(["gelu_pytorch_tanh", "gelu"]), layer_norm_eps=1e-6)
    if cls is tf.SiglipTextModel:
        text["projection_size"] = r.choice([8, text["hidden_size"]])
        return cls, tf.SiglipTextConfig, text
    if cls is tf.SiglipVisionModel:
        vision["vision_use_head"] = r.random() < 0.7
        return cls, tf.SiglipVisionConfig, vision
    text["projection_size"] = vision["hidden_size"]
    return cls, tf.SiglipConfig, dict(text_config=text, vision_config=vision)


def clip_text(r):
    h, nh, _ = heads(r)
    return dict(vocab_size=r.choice([64, 100]), hidden_size=h, num_hidden_layers=r.randint(1, 3),
                num_attention_heads=nh, intermediate_size=r.choice([24, 64]),
                max_position_embeddings=r.choice([16, 32]), hidden_act=r.choice(["quick_gelu", "gelu", "gelu_new"]),
                layer_norm_eps=r.choice([1e-5, 1e-3]), eos_token_id=r.choice([2, 60, 63]), bos_token_id=1,
                pad_token_id=r.choice([0, 1]), projection_dim=r.choice([8, 24]))


def clip_vision(r):
    h, nh, _ = heads(r)
    img, patch = image_size(r)
    img = img if isinstance(img, int) else img[0]  # CLIP's embeddings compare the sides to one number
    return dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
                intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["quick_gelu", "gelu"]),
                layer_norm_eps=r.choice([1e-5, 1e-3]), image_size=img, patch_size=patch,
                num_channels=r.choice([1, 3]), projection_dim=r.choice([8, 24]))


def gen_clip(r):
    """CLIPModel (texts, images or both), CLIPTextModel / CLIPVisionModel with or without their projections,
    CLIPForImageClassification: random towers, eos ids (the legacy 2: pooled at the highest id), temperatures."""
    cls = r.choice([tf.CLIPModel, tf.CLIPModel, tf.CLIPTextModel, tf.CLIPTextModelWithProjection, tf.CLIPVisionModel,
                    tf.CLIPVisionModelWithProjection, tf.CLIPForImageClassification])
    if cls is tf.CLIPTextModel or cls is tf.CLIPTextModelWithProjection:
        return cls, tf.CLIPTextConfig, clip_text(r)
    if cls is tf.CLIPVisionModel or cls is tf.CLIPVisionModelWithProjection:
        return cls, tf.CLIPVisionConfig, clip_vision(r)
    c = dict(text_config=clip_text(r), vision_config=clip_vision(r), projection_dim=r.choice([8, 16]),
             logit_scale_init_value=r.choice([0.5, 2.6592]))
    if cls is tf.CLIPForImageClassification:
        c = with_labels(r, c)
    return cls, tf.CLIPConfig, c


def gen_t5(r):
    """T5ForConditionalGeneration, T5Model, T5EncoderModel and the MT5 and UMT5 names (UMT5: a bias table per block):
    ReLU or gated MLPs, heads narrower or wider than d_model, bucket counts and distances (some reached by short
    inputs), output scaling by tie_word_embeddings or scale_decoder_outputs, a deeper decoder for the models that do
    not generate."""
    d = r.choice([16, 32, 48])
    c = dict(vocab_size=r.choice([64, 100]), d_model=d, d_kv=r.choice([4, 6, 8, 16]), d_ff=r.choice([24, 64]),
             num_layers=r.randint(1, 3), num_heads=r.choice([1, 2, 4]),
             relative_attention_num_buckets=r.choice([4, 8, 32]), relative_attention_max_distance=r.choice([6, 20, 128]),
             feed_forward_proj=r.choice(["relu", "gated-gelu", "gated-silu", "gelu_new", "gated-relu"]),
             layer_norm_epsilon=r.choice([1e-6, 1e-3]), decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    if r.random() < 0.4:
        c["tie_word_embeddings"] = False
    kind = r.choice(["t5", "t5", "t5", "mt5", "mt5", "umt5", "umt5"])
    cls = r.choice({"mt5": [tf.MT5ForConditionalGeneration, tf.MT5Model, tf.MT5EncoderModel],
                    "umt5": [tf.UMT5ForConditionalGeneration, tf.UMT5Model, tf.UMT5EncoderModel],
                    "t5": [tf.T5ForConditionalGeneration, tf.T5ForConditionalGeneration, tf.T5Model,
                           tf.T5EncoderModel]}[kind])
    if not cls.__name__.endswith("ForConditionalGeneration") and r.random() < 0.5:
        c["num_decoder_layers"] = r.randint(1, 4)
    return cls, {"mt5": tf.MT5Config, "umt5": tf.UMT5Config, "t5": tf.T5Config}[kind], c


def t5_head(config_cls, head):
    """The `head` class (`ForSequenceClassification`, ...) of the T5 flavour `config_cls` configures."""
    prefix = {tf.MT5Config: "MT5", tf.UMT5Config: "UMT5"}.get(config_cls, "T5")
    return getattr(tf, prefix + head)


def gen_t5_cls(r):
    """T5ForSequenceClassification / MT5ForSequenceClassification on gen_t5's configs."""
    _, config_cls, c = gen_t5(r)
    return t5_head(config_cls, "ForSequenceClassification"), config_cls, with_labels(r, c)


def gen_t5_tok(r):
    """T5ForTokenClassification / MT5ForTokenClassification (an encoder under `transformer.`) on gen_t5's configs."""
    _, config_cls, c = gen_t5(r)
    return t5_head(config_cls, "ForTokenClassification"), config_cls, with_labels(r, c)


def gen_t5_qa(r):
    """T5ForQuestionAnswering / MT5ForQuestionAnswering on gen_t5's configs (start and end logits on the decoder)."""
    _, config_cls, c = gen_t5(r)
    return t5_head(config_cls, "ForQuestionAnswering"), config_cls, c


def gen_bart(r):
    """BartForConditionalGeneration, BartModel and the MBart, Marian, Pegasus, M2M100, PLBart, Blenderbot and
    BlenderbotSmall names: post-norm (BART, Marian, PLBart, BlenderbotSmall) or pre-norm (mBART, Pegasus, M2M100,
    Blenderbot) blocks, learned or sinusoidal positions (M2M100's counted from the
    non-padding ids, of odd widths too), Marian's own decoder vocabulary, encoder and decoder of their own depths,
    heads and widths, scaled embeddings, activations."""
    d = r.choice([16, 32, 48])
    c = dict(vocab_size=r.choice([64, 100]), d_model=d, encoder_layers=r.randint(1, 3), decoder_layers=r.randint(1, 3),
             encoder_attention_heads=r.choice([n for n in (1, 2, 4) if d % n == 0]),
             decoder_attention_heads=r.choice([n for n in (1, 2, 4, 8) if d % n == 0]),
             encoder_ffn_dim=r.choice([24, 64]), decoder_ffn_dim=r.choice([24, 64]), max_position_embeddings=r.choice([32, 40]),
             activation_function=r.choice(["gelu", "relu", "gelu_new", "silu"]), scale_embedding=r.random() < 0.5,
             pad_token_id=r.choice([0, 1]), bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
             forced_eos_token_id=r.choice([2, None]))
    kind = r.choice(["bart", "bart", "mbart", "marian", "pegasus", "m2m_100", "plbart", "blenderbot",
                     "blenderbot_small"])
    if kind == "plbart":
        return (r.choice([tf.PLBartForConditionalGeneration, tf.PLBartModel]), tf.PLBartConfig, c)
    if kind in ("blenderbot", "blenderbot_small"):
        c.update(pad_token_id=0, bos_token_id=1, decoder_start_token_id=1)
        if kind == "blenderbot":
            return r.choice([tf.BlenderbotForConditionalGeneration, tf.BlenderbotModel]), tf.BlenderbotConfig, c
        return (r.choice([tf.BlenderbotSmallForConditionalGeneration, tf.BlenderbotSmallModel]),
                tf.BlenderbotSmallConfig, c)
    if kind == "m2m_100":
        if r.random() < 0.3:
            c.update(d_model=33, encoder_attention_heads=r.choice([1, 3]), decoder_attention_heads=r.choice([3, 11]))
        c.update(pad_token_id=r.choice([0, 1, 5]))
        return r.choice([tf.M2M100ForConditionalGeneration, tf.M2M100Model]), tf.M2M100Config, c
    if kind == "marian":
        c.update(pad_token_id=r.choice([0, 1]), eos_token_id=2)
        c["decoder_start_token_id"] = c["pad_token_id"]
        if r.random() < 0.4:
            c.update(share_encoder_decoder_embeddings=False, decoder_vocab_size=r.choice([40, 64]))
        return r.choice([tf.MarianMTModel, tf.MarianModel]), tf.MarianConfig, c
    if kind == "pegasus":
        return r.choice([tf.PegasusForConditionalGeneration, tf.PegasusModel]), tf.PegasusConfig, c
    cls = r.choice([tf.MBartForConditionalGeneration, tf.MBartModel] if kind == "mbart" else
                   [tf.BartForConditionalGeneration, tf.BartForConditionalGeneration, tf.BartModel])
    return cls, (tf.MBartConfig if kind == "mbart" else tf.BartConfig), c


def gen_whisper(r):
    """WhisperForConditionalGeneration or WhisperModel: mel bins, source and target lengths, depths, heads, widths,
    activations."""
    d = r.choice([16, 32, 48])
    c = dict(vocab_size=r.choice([64, 100]), num_mel_bins=r.choice([4, 8, 13]), d_model=d,
             encoder_layers=r.randint(1, 3), decoder_layers=r.randint(1, 3),
             encoder_attention_heads=r.choice([n for n in (1, 2, 4) if d % n == 0]),
             decoder_attention_heads=r.choice([n for n in (1, 2, 4, 8) if d % n == 0]),
             encoder_ffn_dim=r.choice([24, 64]), decoder_ffn_dim=r.choice([24, 64]),
             max_source_positions=r.choice([3, 6, 10]), max_target_positions=r.choice([16, 24]),
             activation_function=r.choice(["gelu", "relu", "gelu_new"]), decoder_start_token_id=1, pad_token_id=0,
             bos_token_id=1, eos_token_id=2, begin_suppress_tokens=None)
    return r.choice([tf.WhisperForConditionalGeneration, tf.WhisperModel]), tf.WhisperConfig, c


FAMILIES = {
    "llama": gen_llama, "mistral": gen_mistral, "qwen2": gen_qwen2, "qwen3": gen_qwen3, "gemma": gen_gemma,
    "gemma2": gen_gemma2, "gemma3_text": gen_gemma3_text, "phi3": gen_phi3, "bert": gen_bert,
    "roberta": gen_roberta, "distilbert": gen_distilbert, "bert_cls": gen_bert_cls, "roberta_cls": gen_roberta_cls,
    "distilbert_cls": gen_distilbert_cls, "xlm_roberta": gen_xlm_roberta, "xlm_roberta_cls": gen_xlm_roberta_cls,
    "gpt2": gen_gpt2, "gpt_neox": gen_gpt_neox, "mixtral": gen_mixtral, "qwen3_moe": gen_qwen3_moe, "qwen2_moe": gen_qwen2_moe, "starcoder2": gen_starcoder2, "phi": gen_phi, "mpnet": gen_mpnet, "modernbert": gen_modernbert, "mpnet_cls": gen_mpnet_cls, "modernbert_cls": gen_modernbert_cls,
    "llama_cls": decoder_cls(gen_llama, tf.LlamaForSequenceClassification),
    "mistral_cls": decoder_cls(gen_mistral, tf.MistralForSequenceClassification),
    "qwen2_cls": decoder_cls(gen_qwen2, tf.Qwen2ForSequenceClassification),
    "qwen3_cls": decoder_cls(gen_qwen3, tf.Qwen3ForSequenceClassification),
    "gemma_cls": decoder_cls(gen_gemma, tf.GemmaForSequenceClassification),
    "gemma2_cls": decoder_cls(gen_gemma2, tf.Gemma2ForSequenceClassification),
    "phi3_cls": decoder_cls(gen_phi3, tf.Phi3ForSequenceClassification),
    "gpt2_cls": decoder_cls(gen_gpt2, tf.GPT2ForSequenceClassification),
    "gpt_neox_cls": decoder_cls(gen_gpt_neox, tf.GPTNeoXForSequenceClassification),
    "bert_tok": per_token(gen_bert, tf.BertForTokenClassification),
    "ernie": gen_ernie,
    "data2vec_text": gen_data2vec_text,
    "data2vec_text_cls": lambda r: (tf.Data2VecTextForSequenceClassification, tf.Data2VecTextConfig,
                                    with_labels(r, {k: v for k, v in gen_data2vec_text(r)[2].items()
                                                    if k != "tie_word_embeddings"})),
    "data2vec_text_tok": per_token(gen_data2vec_text, tf.Data2VecTextForTokenClassification),
    "data2vec_text_qa": per_token(gen_data2vec_text, tf.Data2VecTextForQuestionAnswering),
    "data2vec_text_mc": multiple_choice(gen_data2vec_text, tf.Data2VecTextForMultipleChoice),
    "ernie_cls": lambda r: (tf.ErnieForSequenceClassification, tf.ErnieConfig,
                            with_labels(r, {k: v for k, v in gen_ernie(r)[2].items() if k != "tie_word_embeddings"})),
    "ernie_tok": per_token(gen_ernie, tf.ErnieForTokenClassification),
    "ernie_qa": per_token(gen_ernie, tf.ErnieForQuestionAnswering),
    "ernie_mc": multiple_choice(gen_ernie, tf.ErnieForMultipleChoice),
    "qwen2_vl": gen_qwen2_vl,
    "qwen3_vl": gen_qwen3_vl,
    "vision_language": gen_vision_language,
    "images": gen_images,
    "anyres": gen_anyres,
    "qwen_images": gen_qwen_images,
    "mllama": gen_mllama, "mllama_images": gen_mllama_images, "audio": gen_audio,
    "bert_qa": per_token(gen_bert, tf.BertForQuestionAnswering),
    "roberta_qa": per_token(gen_roberta, tf.RobertaForQuestionAnswering),
    "xlm_roberta_tok": per_token(gen_roberta, tf.XLMRobertaForTokenClassification, tf.XLMRobertaConfig),
    "distilbert_tok": per_token(gen_distilbert, tf.DistilBertForTokenClassification),
    "distilbert_qa": per_token(gen_distilbert, tf.DistilBertForQuestionAnswering),
    "mpnet_qa": per_token(gen_mpnet, tf.MPNetForQuestionAnswering),
    "modernbert_tok": per_token(gen_modernbert, tf.ModernBertForTokenClassification),
    "modernbert_qa": per_token(gen_modernbert, tf.ModernBertForQuestionAnswering),
    "vit": gen_vit, "vit_mae": gen_vit_mae, "yolos": gen_yolos, "clip": gen_clip, "t5": gen_t5, "bart": gen_bart, "whisper": gen_whisper, "falcon": gen_falcon, "olmo": gen_olmo, "dinov2": gen_dinov2, "siglip": gen_siglip,
    "falcon_cls": decoder_cls(gen_falcon, tf.FalconForSequenceClassification),
    "olmo3": gen_olmo3, "granite": gen_granite, "smollm3": gen_smollm3, "cohere": gen_cohere, "opt": gen_opt, "gptj": gen_gptj, "stablelm": gen_stablelm,
    "gpt_neo": gen_gpt_neo, "gpt_neo_cls": decoder_cls(gen_gpt_neo, tf.GPTNeoForSequenceClassification),
    "bloom": gen_bloom, "bloom_cls": decoder_cls(gen_bloom, tf.BloomForSequenceClassification),
    "gpt_bigcode": gen_gpt_bigcode, "codegen": gen_codegen, "olmoe": gen_olmoe, "granitemoe": gen_granitemoe,
    "xglm": gen_xglm, "ernie4_5": gen_ernie4_5, "ernie4_5_moe": gen_ernie4_5_moe, "flex_olmo": gen_flex_olmo, "vaultgemma": gen_vaultgemma, "apertus": gen_apertus, "granitemoeshared": gen_granitemoeshared, "hunyuan": gen_hunyuan, "hunyuan_cls": decoder_cls(gen_hunyuan, tf.HunYuanDenseV1ForSequenceClassification), "gpt_oss": gen_gpt_oss, "ministral": gen_ministral, "ministral_cls": decoder_cls(gen_ministral, tf.MinistralForSequenceClassification), "seed_oss": gen_seed_oss, "helium": gen_helium, "exaone4": gen_exaone4, "exaone4_cls": decoder_cls(gen_exaone4, tf.Exaone4ForSequenceClassification), "glm4_moe": gen_glm4_moe, "dots1": gen_dots1, "gpt_oss_cls": decoder_cls(gen_gpt_oss, tf.GptOssForSequenceClassification), "deepseek_v3": gen_deepseek_v3, "deepseek_v2": gen_deepseek_v2, "deepseek_v3_cls": decoder_cls(gen_deepseek_v3, tf.DeepseekV3ForSequenceClassification), "arcee": gen_arcee, "arcee_cls": decoder_cls(gen_arcee, tf.ArceeForSequenceClassification), "biogpt": gen_biogpt, "biogpt_cls": decoder_cls(gen_biogpt, tf.BioGptForSequenceClassification), "glm": gen_glm, "glm4": lambda r: gen_glm(r, glm4=True),
    "glm_cls": decoder_cls(gen_glm, tf.GlmForSequenceClassification), "nemotron": gen_nemotron, "nemotron_cls": decoder_cls(gen_nemotron, tf.NemotronForSequenceClassification), "mpt": gen_mpt, "mpt_cls": decoder_cls(gen_mpt, tf.MptForSequenceClassification),
    "gpt_bigcode_cls": decoder_cls(gen_gpt_bigcode, tf.GPTBigCodeForSequenceClassification),
    "opt_cls": decoder_cls(gen_opt, tf.OPTForSequenceClassification),
    "gptj_cls": decoder_cls(gen_gptj, tf.GPTJForSequenceClassification), "electra": gen_electra, "electra_cls": gen_electra_cls, "albert": gen_albert,
    "albert_cls": gen_albert_cls, "albert_tok": per_token(gen_albert, tf.AlbertForTokenClassification),
    "albert_qa": per_token(gen_albert, tf.AlbertForQuestionAnswering),
    "electra_tok": per_token(gen_electra, tf.ElectraForTokenClassification),
    "electra_qa": per_token(gen_electra, tf.ElectraForQuestionAnswering),
    "esm": gen_esm, "esm_cls": gen_esm_cls, "esm_tok": per_token(gen_esm, tf.EsmForTokenClassification),
    "deberta": gen_deberta, "deberta_cls": gen_deberta_cls, "deberta_v1": gen_deberta_v1, "nomic_bert": gen_nomic_bert, "gte": gen_gte, "eurobert": gen_eurobert,
    "eurobert_cls": lambda r: (tf.EuroBertForSequenceClassification, tf.EuroBertConfig,
                               with_labels(r, dict(gen_eurobert(r)[2], classifier_pooling=r.choice(["bos", "mean", "late"])))),
    "eurobert_tok": per_token(gen_eurobert, tf.EuroBertForTokenClassification),
    "gte_cls": lambda r: (tf.GteForSequenceClassification, tf.GteConfig, with_labels(r, gen_gte(r)[2])),
    "gte_tok": per_token(gen_gte, tf.GteForTokenClassification),
    "deberta_tok": per_token(gen_deberta, tf.DebertaV2ForTokenClassification),
    "deberta_qa": per_token(gen_deberta, tf.DebertaV2ForQuestionAnswering),
    "bert_mc": multiple_choice(gen_bert, tf.BertForMultipleChoice),
    "roberta_mc": multiple_choice(gen_roberta, tf.RobertaForMultipleChoice),
    "distilbert_mc": multiple_choice(gen_distilbert, tf.DistilBertForMultipleChoice),
    "mpnet_mc": multiple_choice(gen_mpnet, tf.MPNetForMultipleChoice),
    "albert_mc": multiple_choice(gen_albert, tf.AlbertForMultipleChoice),
    "deberta_mc": multiple_choice(gen_deberta, tf.DebertaV2ForMultipleChoice),
    "electra_mc": multiple_choice(gen_electra, tf.ElectraForMultipleChoice),
    "modernbert_mc": multiple_choice(gen_modernbert, tf.ModernBertForMultipleChoice),
    "t5_cls": gen_t5_cls,
    "t5_tok": gen_t5_tok,
    "t5_qa": gen_t5_qa,
    "mamba": gen_mamba,
    "falcon_mamba": lambda r: gen_mamba(r, falcon=True),
    "mamba2": gen_mamba2,
    "granitemoehybrid": gen_granitemoehybrid,
    "bamba": gen_bamba,
    "lfm2": gen_lfm2,
    "jamba": gen_jamba,
    "nemotron_h": gen_nemotron_h,
    "qwen3_5": gen_qwen3_5,
    "qwen3_next": gen_qwen3_next,
    "qwen3_5_moe": gen_qwen3_5_moe,
    "hunyuan_moe": gen_hunyuan_moe,
    "phimoe": gen_phimoe,
    "falcon_h1": gen_falcon_h1,
    "exaone_moe": gen_exaone_moe,
    "exaone": gen_exaone,
    "internlm3": gen_internlm3,
    "iquestcoder": gen_iquestcoder,
    "ministral3": gen_ministral3,
    "mistral3": gen_mistral3,
    "sarvam_mla": gen_sarvam_mla,
    "sarvam_moe": gen_sarvam_moe,
    "nanochat": gen_nanochat,
    "glm4_moe_lite": gen_glm4_moe_lite,
    "lfm2_moe": gen_lfm2_moe,
    "minimax_m2": gen_minimax_m2,
    "openai_gpt": gen_openai_gpt,
    "openai_gpt_cls": decoder_cls(gen_openai_gpt, tf.OpenAIGPTForSequenceClassification),
    "ministral3_cls": decoder_cls(gen_ministral3, tf.Ministral3ForSequenceClassification),
    "ministral3_tok": decoder_tok(gen_ministral3, tf.Ministral3ForTokenClassification),
    "cwm": gen_cwm,
    "jais2": gen_jais2,
    "hyperclovax": gen_hyperclovax,
    "solar_open": gen_solar_open,
    "youtu": gen_youtu,
    "mellum": gen_mellum,
    "llama4": gen_llama4,
    "hy_v3": gen_hy_v3,
    "cohere2_moe": gen_cohere2_moe,
    "granite_swa": gen_granite_swa,
    "minicpm3": gen_minicpm3,
    "dbrx": gen_dbrx,
    "mimo_v2_flash": gen_mimo_v2_flash,
    "gemma4": gen_gemma4,
    "gemma4_bidir": lambda r: gen_gemma4(r, bidirectional=True),
    "gemma4_mm": gen_gemma4_mm,
    "gemma3n": gen_gemma3n,
    "mistral4": gen_mistral4,
    "flint": gen_flint,
    "axk1": gen_axk1,
    "kolibri1": gen_kolibri1,
    "lfm3": gen_lfm3,
    "diffllama": gen_diffllama,
    "bitnet": gen_bitnet,
    "modernbert_decoder": gen_modernbert_decoder,
    "diffllama_cls": decoder_cls(gen_diffllama, tf.DiffLlamaForSequenceClassification),
    "diffllama_tok": decoder_tok(gen_diffllama, tf.DiffLlamaForTokenClassification),
    "axk1_cls": decoder_cls(gen_axk1, tf.AXK1ForSequenceClassification),
    "mistral4_cls": decoder_cls(gen_mistral4, tf.Mistral4ForSequenceClassification),
    "mistral4_tok": decoder_tok(gen_mistral4, tf.Mistral4ForTokenClassification),
    "persimmon": gen_persimmon,
    "persimmon_cls": decoder_cls(gen_persimmon, tf.PersimmonForSequenceClassification),
    "persimmon_tok": decoder_tok(gen_persimmon, tf.PersimmonForTokenClassification),
    "minicpm3_cls": decoder_cls(gen_minicpm3, tf.MiniCPM3ForSequenceClassification),
    "laguna": gen_laguna,
    "afmoe": gen_afmoe,
    "phimoe_cls": decoder_cls(gen_phimoe, tf.PhimoeForSequenceClassification),
    "jamba_cls": decoder_cls(gen_jamba, tf.JambaForSequenceClassification),
    "llama_tok": decoder_tok(gen_llama, tf.LlamaForTokenClassification),
    "mistral_tok": decoder_tok(gen_mistral, tf.MistralForTokenClassification),
    "qwen2_tok": decoder_tok(gen_qwen2, tf.Qwen2ForTokenClassification),
    "qwen3_tok": decoder_tok(gen_qwen3, tf.Qwen3ForTokenClassification),
    "gemma_tok": decoder_tok(gen_gemma, tf.GemmaForTokenClassification),
    "gemma2_tok": decoder_tok(gen_gemma2, tf.Gemma2ForTokenClassification),
    "phi3_tok": decoder_tok(gen_phi3, tf.Phi3ForTokenClassification),
    "gpt2_tok": decoder_tok(gen_gpt2, tf.GPT2ForTokenClassification),
    "gpt_neox_tok": decoder_tok(gen_gpt_neox, tf.GPTNeoXForTokenClassification),
    "falcon_tok": decoder_tok(gen_falcon, tf.FalconForTokenClassification),
    "bloom_tok": decoder_tok(gen_bloom, tf.BloomForTokenClassification),
    "mpt_tok": decoder_tok(gen_mpt, tf.MptForTokenClassification),
    "gpt_neo_tok": decoder_tok(gen_gpt_neo, tf.GPTNeoForTokenClassification),
    "gpt_bigcode_tok": decoder_tok(gen_gpt_bigcode, tf.GPTBigCodeForTokenClassification),
    "biogpt_tok": decoder_tok(gen_biogpt, tf.BioGptForTokenClassification),
    "mixtral_tok": decoder_tok(gen_mixtral, tf.MixtralForTokenClassification),
    "qwen3_moe_tok": decoder_tok(gen_qwen3_moe, tf.Qwen3MoeForTokenClassification),
    "qwen2_moe_tok": decoder_tok(gen_qwen2_moe, tf.Qwen2MoeForTokenClassification),
    "stablelm_tok": decoder_tok(gen_stablelm, tf.StableLmForTokenClassification),
    "starcoder2_tok": decoder_tok(gen_starcoder2, tf.Starcoder2ForTokenClassification),
    "phi_tok": decoder_tok(gen_phi, tf.PhiForTokenClassification),
    "nemotron_tok": decoder_tok(gen_nemotron, tf.NemotronForTokenClassification),
    "glm_tok": decoder_tok(gen_glm, tf.GlmForTokenClassification),
    "deepseek_v3_tok": decoder_tok(gen_deepseek_v3, tf.DeepseekV3ForTokenClassification),
    "gpt_oss_tok": decoder_tok(gen_gpt_oss, tf.GptOssForTokenClassification),
    "smollm3_tok": decoder_tok(gen_smollm3, tf.SmolLM3ForTokenClassification),
    "exaone4_tok": decoder_tok(gen_exaone4, tf.Exaone4ForTokenClassification),
    "apertus_tok": decoder_tok(gen_apertus, tf.ApertusForTokenClassification),
    "seed_oss_tok": decoder_tok(gen_seed_oss, tf.SeedOssForTokenClassification),
    "helium_tok": decoder_tok(gen_helium, tf.HeliumForTokenClassification),
    "ministral_tok": decoder_tok(gen_ministral, tf.MinistralForTokenClassification),
    "arcee_tok": decoder_tok(gen_arcee, tf.ArceeForTokenClassification),
    "glm4_tok": decoder_tok(lambda r: gen_glm(r, glm4=True), tf.Glm4ForTokenClassification),
}
# Derived family -> the family whose inputs and checkpoint variants it shares.
BASE = {"diffllama_cls": "diffllama", "diffllama_tok": "diffllama", "axk1_cls": "axk1", "gemma4_bidir": "gemma4", "mistral4_cls": "mistral4", "mistral4_tok": "mistral4", "phimoe_cls": "phimoe", "bert_cls": "bert", "roberta_cls": "roberta", "distilbert_cls": "distilbert", "xlm_roberta": "roberta",
        "xlm_roberta_cls": "roberta", "mpnet_cls": "mpnet", "modernbert_cls": "modernbert", "llama_cls": "llama",
        "mistral_cls": "mistral", "qwen2_cls": "qwen2", "qwen3_cls": "qwen3", "gemma_cls": "gemma",
        "gemma2_cls": "gemma2", "phi3_cls": "phi3", "gpt2_cls": "gpt2",
        "gpt_neox_cls": "gpt_neox", "falcon_cls": "falcon", "bert_tok": "bert", "bert_qa": "bert", "roberta_qa": "roberta",
        "xlm_roberta_tok": "roberta", "distilbert_tok": "distilbert", "distilbert_qa": "distilbert", "mpnet_qa": "mpnet",
        "modernbert_tok": "modernbert", "modernbert_qa": "modernbert", "electra": "bert", "electra_cls": "bert",
        "electra_tok": "bert", "electra_qa": "bert", "albert": "bert", "albert_cls": "bert", "albert_tok": "bert",
        "albert_qa": "bert", "opt_cls": "opt", "gptj_cls": "gptj", "gpt_neo_cls": "gpt_neo", "bloom_cls": "bloom", "gpt_bigcode_cls": "gpt_bigcode", "mpt_cls": "mpt", "nemotron_cls": "nemotron", "glm_cls": "glm", "biogpt_cls": "biogpt", "arcee_cls": "arcee", "deepseek_v3_cls": "deepseek_v3", "gpt_oss_cls": "gpt_oss", "hunyuan_cls": "hunyuan", "jamba_cls": "jamba", "ministral_cls": "ministral", "exaone4_cls": "exaone4", "esm": "modernbert", "esm_cls": "modernbert", "esm_tok": "modernbert", "deberta": "bert", "deberta_v1": "bert", "nomic_bert": "bert", "eurobert": "modernbert", "eurobert_cls": "modernbert", "eurobert_tok": "modernbert", "gte": "bert", "gte_cls": "bert", "gte_tok": "bert", "deberta_cls": "bert", "deberta_tok": "bert", "deberta_qa": "bert",
        "bert_mc": "bert", "ernie": "bert", "data2vec_text": "roberta", "data2vec_text_cls": "roberta", "data2vec_text_tok": "roberta", "data2vec_text_qa": "roberta", "data2vec_text_mc": "roberta", "ernie_cls": "bert", "ernie_tok": "bert", "ernie_qa": "bert", "ernie_mc": "bert", "roberta_mc": "roberta", "distilbert_mc": "distilbert", "mpnet_mc": "mpnet",
        "albert_mc": "bert", "deberta_mc": "bert", "electra_mc": "bert", "modernbert_mc": "modernbert",
        "llama_tok": "llama", "mistral_tok": "mistral", "qwen2_tok": "qwen2", "qwen3_tok": "qwen3", "gemma_tok": "gemma", "gemma2_tok": "gemma2", "phi3_tok": "phi3", "gpt2_tok": "gpt2", "gpt_neox_tok": "gpt_neox", "falcon_tok": "falcon", "bloom_tok": "bloom", "mpt_tok": "mpt", "gpt_neo_tok": "gpt_neo", "gpt_bigcode_tok": "gpt_bigcode", "biogpt_tok": "biogpt", "mixtral_tok": "mixtral", "qwen3_moe_tok": "qwen3_moe", "qwen2_moe_tok": "qwen2_moe", "stablelm_tok": "stablelm", "starcoder2_tok": "starcoder2", "phi_tok": "phi", "nemotron_tok": "nemotron", "glm_tok": "glm", "deepseek_v3_tok": "deepseek_v3", "gpt_oss_tok": "gpt_oss", "smollm3_tok": "smollm3", "exaone4_tok": "exaone4", "apertus_tok": "apertus", "seed_oss_tok": "seed_oss", "helium_tok": "helium", "ministral_tok": "ministral", "arcee_tok": "arcee", "glm4_tok": "glm4", "ministral3_cls": "ministral3", "ministral3_tok": "ministral3", "openai_gpt_cls": "openai_gpt", "minicpm3_cls": "minicpm3", "persimmon_cls": "persimmon", "persimmon_tok": "persimmon"}
# Multimodal checkpoints run as their language model on text (`text_config` holds its sizes).
MULTIMODAL_TEXT = {"mistral3", "gemma4_mm", "qwen2_vl", "qwen3_vl", "vision_language", "mllama", "images", "anyres",
                   "qwen_images", "mllama_images", "audio"}
# Multiple-choice models: inputs `[batch, choices, seq]`.
MULTIPLE_CHOICE = {"ernie_mc", "data2vec_text_mc", "bert_mc", "roberta_mc", "distilbert_mc", "mpnet_mc", "albert_mc", "deberta_mc", "electra_mc",
                   "modernbert_mc"}
# (Token classifiers relabel as the sequence classifiers do.)
CLASSIFIERS = {"eurobert_cls", "eurobert_tok", "gte_cls", "gte_tok", "diffllama_cls", "diffllama_tok", "axk1_cls", "mistral4_cls", "mistral4_tok", "persimmon_cls", "persimmon_tok", "minicpm3_cls", "phimoe_cls", "jamba_cls", "arcee_cls", "hunyuan_cls", "ministral_cls", "exaone4_cls", "gpt_oss_cls", "deepseek_v3_cls", "biogpt_cls", "esm_cls", "esm_tok", "glm_cls", "nemotron_cls", "mpt_cls", "gpt_bigcode_cls", "bloom_cls", "gpt_neo_cls", "t5_cls", "t5_tok", "t5_qa", "opt_cls", "gptj_cls", "deberta_cls", "deberta_tok", "deberta_v1", "vit", "clip", "dinov2", "falcon_cls", "electra_cls", "electra_tok", "albert_cls", "albert_tok", "bert_tok", "xlm_roberta_tok", "distilbert_tok", "modernbert_tok", "bert_cls", "roberta_cls", "distilbert_cls", "xlm_roberta_cls", "mpnet_cls", "modernbert_cls",
               "llama_cls", "mistral_cls", "qwen2_cls", "qwen3_cls", "gemma_cls", "gemma2_cls", "phi3_cls", "gpt2_cls",
               "gpt_neox_cls",
               # The decoders' token classifiers.
               "llama_tok", "mistral_tok", "qwen2_tok", "qwen3_tok", "gemma_tok", "gemma2_tok", "phi3_tok", "gpt2_tok", "gpt_neox_tok", "falcon_tok", "bloom_tok", "mpt_tok", "gpt_neo_tok", "gpt_bigcode_tok", "biogpt_tok", "mixtral_tok", "qwen3_moe_tok", "qwen2_moe_tok", "stablelm_tok", "starcoder2_tok", "phi_tok", "nemotron_tok", "glm_tok", "deepseek_v3_tok", "gpt_oss_tok", "smollm3_tok", "exaone4_tok", "apertus_tok", "seed_oss_tok", "helium_tok", "ministral_tok", "arcee_tok", "glm4_tok", "ministral3_cls", "ministral3_tok", "openai_gpt_cls", "ernie_cls", "ernie_tok", "data2vec_text_cls", "data2vec_text_tok"}



def pre_norm_encoder(gen, prefix, config_cls):
    """A pre-norm encoder (RoBERTa-PreLayerNorm, XLM-RoBERTa-XL, Megatron-BERT) on the config of the family it runs
    as (`gen`'s: RoBERTa's or BERT's); the base model or the masked LM."""
    def make(r):
        _, _, c = gen(r)
        cls = r.choice([getattr(tf, prefix + "Model"), getattr(tf, prefix + "ForMaskedLM")])
        if cls.__name__.endswith("Model"):
            c.pop("tie_word_embeddings", None)
        return cls, config_cls, c
    return make


# The pre-norm encoders and every head of theirs (`_cls`, `_tok`, `_qa`, `_mc`).
for _name, _gen, _prefix, _base in [("roberta_prelayernorm", gen_roberta, "RobertaPreLayerNorm", "roberta"),
                                    ("xlm_roberta_xl", gen_roberta, "XLMRobertaXL", "roberta"),
                                    ("megatron_bert", gen_bert, "MegatronBert", "bert")]:
    _config_cls = getattr(tf, _prefix + "Config")
    _make = pre_norm_encoder(_gen, _prefix, _config_cls)
    FAMILIES[_name] = _make
    FAMILIES[_name + "_cls"] = (lambda make, cls, config_cls: lambda r: (
        cls, config_cls, with_labels(r, {k: v for k, v in make(r)[2].items() if k != "tie_word_embeddings"})))(
        _make, getattr(tf, _prefix + "ForSequenceClassification"), _config_cls)
    FAMILIES[_name + "_tok"] = per_token(_make, getattr(tf, _prefix + "ForTokenClassification"))
    FAMILIES[_name + "_qa"] = per_token(_make, getattr(tf, _prefix + "ForQuestionAnswering"))
    FAMILIES[_name + "_mc"] = multiple_choice(_make, getattr(tf, _prefix + "ForMultipleChoice"))
    BASE.update({_name + suffix: _base for suffix in ("", "_cls", "_tok", "_qa", "_mc")})
    MULTIPLE_CHOICE.add(_name + "_mc")
    CLASSIFIERS.update({_name + "_cls", _name + "_tok"})


def gen_pretraining(r):
    """The pre-training heads: BERT's (masked LM and next sentence, or next sentence alone), Megatron-BERT's and
    ERNIE's under BERT's names, ALBERT's (masked LM and sentence order over 2 or 3 labels); decoders tied or not."""
    kind = r.choice(["bert", "bert_nsp", "megatron", "megatron_nsp", "ernie", "ernie_nsp", "albert"])
    if kind == "albert":
        _, config_cls, c = gen_albert(r)
        c.update(tie_word_embeddings=r.random() < 0.5, num_labels=r.choice([2, 3]))
        return tf.AlbertForPreTraining, config_cls, c
    if kind.startswith("ernie"):
        _, config_cls, c = gen_ernie(r)
        prefix = "Ernie"
    else:
        _, config_cls, c = gen_bert(r)
        prefix = "Bert"
        if kind.startswith("megatron"):
            config_cls, prefix = tf.MegatronBertConfig, "MegatronBert"
    nsp = kind.endswith("_nsp")
    c.pop("tie_word_embeddings", None)
    if not nsp:
        c["tie_word_embeddings"] = r.random() < 0.5
    return getattr(tf, prefix + ("ForNextSentencePrediction" if nsp else "ForPreTraining")), config_cls, c


FAMILIES["pretraining"] = gen_pretraining
BASE["pretraining"] = "bert"


def gen_speech(r):
    """wav2vec 2.0, HuBERT, data2vec-audio, WavLM, UniSpeech, UniSpeech-SAT, Wav2Vec2-Conformer (relative, rotary or
    no positions) or SEW (squeezed by 1-4) on raw audio: 1-4 convolutions of random
    widths, kernels and strides (biased or not), group- or layer-normed, post- or pre-norm blocks, positional kernels
    even and odd over 1-4 groups, HuBERT's projection with or without its norm, WavLM's relative position buckets (few
    or many, near or far), SpecAugment off sometimes; the base model, the CTC head, the sequence or per-frame
    classifier (over the weighted hidden states sometimes), the x-vector head (1-3 TDNN layers, kernels 1-3, dilations
    1-2) or a pre-training head (1-2 codevector groups of 2-320); `speech_inputs` adds a `mask_time_indices` sometimes."""
    family = r.choice(["Wav2Vec2", "Wav2Vec2", "Hubert", "Data2VecAudio", "WavLM", "WavLM", "UniSpeech", "UniSpeechSat",
                       "Wav2Vec2Conformer", "Wav2Vec2Conformer", "SEW", "SEW"])
    hubert = family == "Hubert"
    n = r.randint(1, 4)
    h, nh, _ = heads(r)
    c = dict(vocab_size=r.choice([8, 32]), hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([16, 40]), conv_dim=[r.choice([4, 8, 12]) for _ in range(n)],
             conv_kernel=[r.choice([2, 3, 5, 10]) for _ in range(n)], conv_stride=[r.choice([1, 2, 3, 5]) for _ in range(n)],
             conv_bias=r.random() < 0.5, feat_extract_norm=r.choice(["group", "layer"]),
             do_stable_layer_norm=r.random() < 0.5, num_conv_pos_embeddings=r.choice([2, 3, 4, 5, 8]),
             num_conv_pos_embedding_groups=r.choice([g for g in (1, 2, 4) if h % g == 0]),
             hidden_act=r.choice(["gelu", "relu", "gelu_new"]), feat_extract_activation=r.choice(["gelu", "relu"]),
             layer_norm_eps=r.choice([1e-5, 1e-3]), pad_token_id=0)
    if hubert:
        c["feat_proj_layer_norm"] = r.random() < 0.7
    if family == "Data2VecAudio":  # a stack of positional convolutions, each layer-normed
        c.update(num_conv_pos_embeddings=r.randint(1, 3), conv_pos_kernel_size=r.choice([2, 3, 4, 5, 8]))
        c.pop("do_stable_layer_norm")
        c.pop("feat_extract_norm")
    if family == "Wav2Vec2Conformer":  # relative, rotary or no positions; the convolution module's kernel
        c.update(position_embeddings_type=r.choice(["relative", "rotary", None]),
                 conv_depthwise_kernel_size=r.choice([1, 3, 5, 7]), hidden_act=r.choice(["swish", "gelu", "relu"]))
    if family == "SEW":  # blocks on squeezed frames; features as wide as the model sometimes (no projection)
        c.update(squeeze_factor=r.choice([1, 2, 3, 4]))
        c.pop("do_stable_layer_norm")
        if r.random() < 0.3:
            c["conv_dim"][-1] = h
    if family == "WavLM":
        buckets = r.choice([4, 8, 16, 40, 320])
        c.update(num_buckets=buckets, max_bucket_distance=r.choice([buckets // 4 + 1, buckets // 4 + 5, 20, 800]))
    kind = r.choice(["Model", "ForCTC", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                     "ForXVector", "ForPreTraining"])
    if kind == "ForPreTraining" and family not in ("Wav2Vec2", "UniSpeech", "UniSpeechSat", "Wav2Vec2Conformer"):
        kind = "Model"
    if kind == "ForPreTraining":
        groups = r.choice([1, 2])
        c.update(num_codevector_groups=groups, num_codevectors_per_group=r.choice([2, 5, 320]),
                 codevector_dim=groups * r.choice([1, 3]), proj_codevector_dim=r.choice([3, 8]))
    if r.random() < 0.2:
        c["apply_spec_augment"] = False
    if kind in ("ForAudioFrameClassification", "ForXVector") and family in ("Hubert", "UniSpeech", "SEW"):
        kind = "ForSequenceClassification"  # (HuBERT, UniSpeech and SEW have neither)
    if kind == "ForXVector":
        t = r.randint(1, 3)
        c.update(tdnn_dim=[r.choice([4, 8]) for _ in range(t)], tdnn_kernel=[r.choice([1, 2, 3]) for _ in range(t)],
                 tdnn_dilation=[r.choice([1, 2]) for _ in range(t)], xvector_output_dim=r.choice([4, 6]),
                 use_weighted_layer_sum=r.random() < 0.5)
        c = with_labels(r, c)
    if kind.endswith("Classification"):
        c.update(use_weighted_layer_sum=r.random() < 0.5, classifier_proj_size=r.choice([4, 8]))
        c = with_labels(r, c)
    return getattr(tf, family + kind), getattr(tf, family + "Config"), c


def speech_inputs(r, cfg):
    """1-3 rows of raw audio long enough for a few frames; sometimes an `attention_mask` whose rows keep their first
    samples (at least one frame's worth), the rest zeros."""
    def frames(n):
        for k, s in zip(cfg["conv_kernel"], cfg["conv_stride"]):
            if n < k:
                return 0
            n = (n - k) // s + 1
        return n
    # The x-vector head's statistics need two frames past its TDNN layers' reach, and past the widths transformers
    # counts off each row's length.
    need = 1
    if "tdnn_kernel" in cfg:
        reach = sum(d * (k - 1) for k, d in zip(cfg["tdnn_kernel"], cfg["tdnn_dilation"]))
        need = max(reach, sum(k - 1 for k in cfg["tdnn_kernel"])) + 2
    least = next(n for n in range(1, 10_000) if frames(n) >= need)
    most = least
    while frames(most) < r.randint(need + 1, need + 11) and most < 4000:
        most += 1
    b = r.randint(1, 3)
    samples = r.randint(most, most + 60)
    x = {"input_values": torch.randn(b, samples)}
    desc = f"b={b} samples={samples} frames={frames(samples)}"
    if r.random() < 0.6:
        mask = torch.ones(b, samples, dtype=torch.int64)
        for i in range(b):
            if r.random() < 0.6:
                keep = r.randint(least, samples)
                mask[i, keep:] = 0
                x["input_values"][i, keep:] = 0.0
        x["attention_mask"] = mask
        desc += f" kept={mask.sum(-1).tolist()}"
    if r.random() < 0.4:  # (a frame mask for SpecAugment's embedding and the pre-training perplexity)
        n = frames(samples)
        x["mask_time_indices"] = torch.rand(b, n) < r.choice([0.2, 0.5])
        x["mask_time_indices"][0, 0] = True  # (none masked: the perplexity is NaN, in transformers and here)
        desc += f" masked={x['mask_time_indices'].sum().item()}"
    return x, desc


FAMILIES["speech"] = gen_speech


def gen_resnet(r):
    """ResNet: 1-4 stages of 1-2 basic or bottleneck layers (the stride in the 3x3 or the first 1x1), the first stage
    downsampling or not, relu or gelu after the sums, 1 or 3 channels; the base model or the classifier."""
    n = r.randint(1, 4)
    c = dict(num_channels=r.choice([1, 3]), embedding_size=r.choice([4, 8]), hidden_sizes=[4 * r.randint(1, 6) for _ in range(n)],
             depths=[r.randint(1, 2) for _ in range(n)], layer_type=r.choice(["basic", "bottleneck"]),
             hidden_act=r.choice(["relu", "gelu"]), downsample_in_first_stage=r.random() < 0.5,
             downsample_in_bottleneck=r.random() < 0.5)
    cls = r.choice([tf.ResNetModel, tf.ResNetForImageClassification])
    if cls is tf.ResNetForImageClassification:
        c = with_labels(r, c)
    return cls, tf.ResNetConfig, c


FAMILIES["resnet"] = gen_resnet


def gen_deit(r):
    """DeiT on ViT's random configs: the base model (its pooler), the classifier or the teacher-distilled one."""
    _, _, c = gen_vit(r)
    for k in ("id2label", "label2id", "num_labels"):
        c.pop(k, None)
    cls = r.choice([tf.DeiTModel, tf.DeiTForImageClassification, tf.DeiTForImageClassificationWithTeacher])
    if cls is not tf.DeiTModel:
        c = with_labels(r, {k: v for k, v in c.items() if not k.startswith("pooler")})
    return cls, tf.DeiTConfig, c


FAMILIES["deit"] = gen_deit


def gen_convnext(r):
    """ConvNeXt V1 or V2: 1-4 stages of 1-2 layers, patch sizes 1-4, layer scales on or off (V1), 1 or 3 channels;
    the base model or the classifier."""
    n = r.randint(1, 4)
    c = dict(num_channels=r.choice([1, 3]), patch_size=r.randint(1, 4), num_stages=n,
             hidden_sizes=[4 * r.randint(1, 4) for _ in range(n)], depths=[r.randint(1, 2) for _ in range(n)],
             hidden_act=r.choice(["gelu", "relu", "gelu_new"]), layer_norm_eps=r.choice([1e-12, 1e-6]))
    v2 = r.random() < 0.4
    if not v2:
        c["layer_scale_init_value"] = r.choice([0.0, 1e-6])
    prefix = "ConvNextV2" if v2 else "ConvNext"
    cls = getattr(tf, prefix + r.choice(["Model", "ForImageClassification"]))
    if cls.__name__.endswith("Classification"):
        c = with_labels(r, c)
    return cls, getattr(tf, prefix + "Config"), c


FAMILIES["convnext"] = gen_convnext


def gen_swin(r):
    """Swin: 1-4 stages of 0-3 blocks (shifted windows from the second), windows of 1-5, patches of 1-4, heads
    dividing each stage's width, absolute position embeddings (then the image at `image_size`) or any image size,
    query/key/value biases or not, MLP ratios whole and fractional; the base model or the classifier. Images whose
    later maps are smaller than a window are ones transformers fails on (skipped)."""
    n = r.randint(1, 4)
    embed = r.choice([4, 6, 8])
    heads = [r.choice([h for h in (1, 2, 4) if (embed << i) % h == 0]) for i in range(n)]
    patch = r.randint(1, 4)
    c = dict(embed_dim=embed, depths=[r.randint(0 if i else 1, 3) for i in range(n)], num_heads=heads,
             window_size=r.randint(1, 5), patch_size=patch, num_channels=r.choice([1, 3]),
             use_absolute_embeddings=r.random() < 0.3, qkv_bias=r.random() < 0.7,
             mlp_ratio=r.choice([1.0, 2.0, 2.5, 4.0]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-5, 1e-6]),
             image_size=[patch * r.randint(2, 12) + r.choice([0, 0, 1]), patch * r.randint(2, 12)])
    v2 = r.random() < 0.4  # Swin V2: cosine attention, continuous position bias, post-norm; pretrained windows
    if v2:
        c.update(use_absolute_embeddings=False, pretrained_window_sizes=[r.choice([0, 0, 3, 6]) for _ in range(n)],
                 image_size=patch * (1 << (n - 1)) * r.randint(1, 3))  # (every stage has patches, as V2 needs)
    prefix = "Swinv2" if v2 else "Swin"
    cls = getattr(tf, prefix + r.choice(["Model", "ForImageClassification"]))
    if cls.__name__.endswith("Classification"):
        c = with_labels(r, c)
    return cls, getattr(tf, prefix + "Config"), c


FAMILIES["swin"] = gen_swin


def gen_beit(r):
    """BEiT or data2vec-vision: a square grid of 2-5 patches a side, relative position biases per block, shared, both
    or none, absolute positions or not, layer scales or not, mean or class-token pooling; the base model or the
    classifier. `image_inputs` gives images of the configured size or (60%) another (biases and positions
    resampled)."""
    h, nh, _ = heads(r)
    patch = r.randint(2, 4)
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             layer_norm_eps=r.choice([1e-12, 1e-6]), patch_size=patch, image_size=patch * r.randint(2, 5),
             num_channels=r.choice([1, 3]), use_relative_position_bias=r.random() < 0.5,
             use_shared_relative_position_bias=r.random() < 0.4, use_absolute_position_embeddings=r.random() < 0.4,
             layer_scale_init_value=r.choice([0.0, 0.1]), use_mean_pooling=r.random() < 0.6)
    prefix = r.choice(["Beit", "Beit", "Data2VecVision"])
    cls = getattr(tf, prefix + r.choice(["Model", "ForImageClassification"]))
    if cls.__name__.endswith("Classification"):
        c = with_labels(r, c)
    return cls, getattr(tf, prefix + "Config"), c


FAMILIES["beit"] = gen_beit


def gen_segformer(r):
    """SegFormer: 1-4 stages of 0-2 blocks, patch sizes 1-7 with strides 1-4, key/value reductions 0-4, 1-4 heads
    (not always dividing the widths), MLP ratios 1-4, the last stage as a map or a sequence; the base model, the classifier or the
    segmentation head (any image size)."""
    n = r.randint(1, 4)
    hidden = [r.choice([4, 8, 12]) for _ in range(n)]
    c = dict(num_encoder_blocks=n, depths=[r.randint(0, 2) for _ in range(n)],
             sr_ratios=[r.randint(0, 4) for _ in range(n)], hidden_sizes=hidden,
             patch_sizes=[r.choice([1, 2, 3, 7]) for _ in range(n)], strides=[r.randint(1, 4) for _ in range(n)],
             num_attention_heads=[r.choice([1, 2, 3, 4]) for d in hidden],
             mlp_ratios=[r.randint(1, 4) for _ in range(n)], hidden_act=r.choice(["gelu", "relu", "gelu_new"]),
             decoder_hidden_size=r.choice([4, 8]), reshape_last_stage=r.random() < 0.8, num_channels=r.choice([1, 3]))
    cls = r.choice([tf.SegformerModel, tf.SegformerForImageClassification, tf.SegformerForSemanticSegmentation])
    if cls is not tf.SegformerModel:
        c = with_labels(r, c)
    return cls, tf.SegformerConfig, c


FAMILIES["segformer"] = gen_segformer


def gen_dinov3(r):
    """DINOv3's ViT: 0-4 register tokens, head widths multiples of 4, biases on or off per projection, the plain or
    gated MLP, RoPE bases; any image size (the rotary grid follows it)."""
    h = r.choice([16, 32, 48])
    nh = r.choice([n for n in (1, 2, 4) if (h // n) % 4 == 0])
    c = dict(hidden_size=h, num_hidden_layers=r.randint(1, 3), num_attention_heads=nh,
             intermediate_size=r.choice([24, 64]), hidden_act=r.choice(["gelu", "silu", "relu"]),
             patch_size=r.randint(2, 5), image_size=16, num_channels=r.choice([1, 3]),
             num_register_tokens=r.randint(0, 4), query_bias=r.random() < 0.7, key_bias=r.random() < 0.3,
             value_bias=r.random() < 0.7, proj_bias=r.random() < 0.7, mlp_bias=r.random() < 0.7,
             use_gated_mlp=r.random() < 0.4, rope_theta=r.choice([100.0, 10.0, 1000.0]),
             layerscale_value=r.choice([1.0, 0.1]), layer_norm_eps=r.choice([1e-5, 1e-6]))
    return tf.DINOv3ViTModel, tf.DINOv3ViTConfig, c


FAMILIES["dinov3"] = gen_dinov3


def dense_neck(r, k):
    """DPT's and Depth Anything's neck for `k` maps: widths, reassemble factors (up by a transposed convolution,
    down by a strided one), the fusion width, the head's map."""
    return dict(neck_hidden_sizes=[r.choice([4, 6, 8]) for _ in range(k)],
                reassemble_factors=[r.choice([4, 3, 2, 1, 1, 0.5, 0.25]) for _ in range(k)],
                fusion_hidden_size=r.choice([4, 8]), head_in_index=r.choice([-1, -1, r.randrange(k)]))


def gen_depth_anything(r):
    """Depth Anything on a random DINOv2 (SwiGLU or not, layer scales): 1-4 of its hidden states (the embeddings
    among the candidates) by `out_indices` or `out_features`, the neck, the relative or metric head; any image
    size (positions resampled)."""
    h, nh, _ = heads(r, (16, 32))
    layers, patch = r.randint(1, 4), r.randint(2, 5)
    k = r.randint(1, min(4, layers + 1))
    picked = sorted(r.sample(range(layers + 1), k))
    backbone = dict(model_type="dinov2", hidden_size=h, num_hidden_layers=layers, num_attention_heads=nh,
                    mlp_ratio=r.choice([1, 2, 4]), patch_size=patch, image_size=patch * r.randint(2, 5),
                    use_swiglu_ffn=r.random() < 0.3, layerscale_value=r.choice([1.0, 0.5]), apply_layernorm=r.random() < 0.8,
                    hidden_act=r.choice(["gelu", "relu"]), reshape_hidden_states=False,
                    layer_norm_eps=r.choice([1e-6, 1e-5]), num_channels=r.choice([1, 3]))
    if r.random() < 0.5:
        backbone["out_indices"] = picked
    else:
        backbone["out_features"] = ["stem" if i == 0 else f"stage{i}" for i in picked]
    c = dict(backbone_config=backbone, patch_size=patch, reassemble_hidden_size=h, head_hidden_size=r.randint(2, 8),
             depth_estimation_type=r.choice(["relative", "metric"]), max_depth=r.choice([1, 10, 80]),
             **dense_neck(r, k))
    return tf.DepthAnythingForDepthEstimation, tf.DepthAnythingConfig, c


FAMILIES["depth_anything"] = gen_depth_anything


def gen_dpt(r):
    """DPT on a random ViT (a square grid of 2-5 patches a side stored): the base model, or 1-4 blocks' outputs read
    out (class token ignored, added or projected), the neck (fusion units with batch norms and biases or not), the
    depth or the segmentation head; square grids of any side for the heads (as transformers needs), any images for
    the base model. Or DPT-Hybrid: a random BiT backbone (2-4 stages, pre- or post-activation, symmetric or SAME
    padding) whose three picked maps (the stem among the candidates) give the neck its first two and the ViT its
    tokens (the patch the last map's stride), 1-2 blocks read after them; images of `image_size` (as transformers
    needs)."""
    _, _, c = gen_vit(r)
    for key in ("id2label", "label2id", "num_labels", "encoder_stride"):
        c.pop(key, None)
    patch = r.randint(2, 5)
    c.update(patch_size=patch, image_size=patch * r.randint(2, 5))
    cls = r.choice([tf.DPTModel, tf.DPTForDepthEstimation, tf.DPTForSemanticSegmentation])
    if cls is tf.DPTForDepthEstimation and r.random() < 0.35:
        # On a DINOv2 backbone: 1-4 of its hidden states (the embeddings among them), normed or not.
        h, nh, _ = heads(r, (16, 32))
        layers, patch = r.randint(1, 4), r.randint(2, 5)
        k = r.randint(1, min(4, layers + 1))
        backbone = dict(model_type="dinov2", hidden_size=h, num_hidden_layers=layers, num_attention_heads=nh,
                        mlp_ratio=r.choice([1, 2]), patch_size=patch, image_size=patch * r.randint(2, 5),
                        out_indices=sorted(r.sample(range(layers + 1), k)), reshape_hidden_states=False,
                        apply_layernorm=r.random() < 0.8, layer_norm_eps=r.choice([1e-6, 1e-5]),
                        num_channels=c.get("num_channels", 3))
        c.update(backbone_config=backbone, **dense_neck(r, k), readout_type=r.choice(["ignore", "add", "project"]),
                 use_batch_norm_in_fusion_residual=r.random() < 0.3,
                 use_bias_in_fusion_residual=r.choice([None, True, False]))
        return cls, tf.DPTConfig, c
    if r.random() < 0.4:
        n = r.randint(2, 4)
        widths = [r.choice([8, 16])] + [r.choice([8, 16, 24, 32]) for _ in range(n)]
        picked = sorted(r.sample(range(n + 1), 3))
        patch = 4 << max(picked[2] - 1, 0)
        layers = c["num_hidden_layers"]
        k = r.randint(1, min(2, layers))
        c.update(is_hybrid=True, patch_size=patch, image_size=patch * r.randint(1, 3), readout_type="project",
                 backbone_config=dict(embedding_size=widths[0], hidden_sizes=widths[1:],
                                      depths=[r.randint(1, 2) for _ in range(n)], num_groups=r.choice([1, 2, 4]),
                                      layer_type=r.choice(["preactivation", "bottleneck"]),
                                      global_padding=r.choice([None, "SAME", "same"]),
                                      embedding_dynamic_padding=r.random() < 0.5,
                                      hidden_act=r.choice(["relu", "gelu"]), out_indices=picked,
                                      num_channels=c.get("num_channels", 3)),
                 backbone_featmap_shape=[1, widths[picked[2]], 1, 1],
                 backbone_out_indices=[0, 0] + sorted(r.sample(range(layers), k)))
        if cls is not tf.DPTModel:
            neck = dense_neck(r, k + 2)
            neck["neck_hidden_sizes"][:2] = [widths[picked[0]], widths[picked[1]]]
            neck["reassemble_factors"][:2] = [1, 1]
            c.update(**neck, use_batch_norm_in_fusion_residual=r.random() < 0.3,
                     use_bias_in_fusion_residual=r.choice([None, True, False]))
    elif cls is not tf.DPTModel:
        layers = c["num_hidden_layers"]
        k = r.randint(1, min(4, layers))
        c.update(backbone_out_indices=sorted(r.sample(range(layers), k)), **dense_neck(r, k),
                 readout_type=r.choice(["ignore", "add", "project"]),
                 use_batch_norm_in_fusion_residual=r.random() < 0.3,
                 use_bias_in_fusion_residual=r.choice([None, True, False]))
    if cls is tf.DPTForSemanticSegmentation:
        c = with_labels(r, c)
    return cls, tf.DPTConfig, c


FAMILIES["dpt"] = gen_dpt


def gen_mobilenet(r):
    """MobileNet V1 or V2: width multipliers, rounding, minimum widths, TensorFlow's SAME or symmetric padding,
    activations; V2's expansion ratios, stem expansion, fine-grained last layer, output strides (dilations); the base
    model, the classifier or V2's DeepLabV3 segmenter; any image size."""
    act = r.choice(["relu6", "relu6", "relu", "gelu"])
    common = dict(tf_padding=r.random() < 0.6, hidden_act=act, layer_norm_eps=r.choice([1e-3, 1e-5]),
                  num_channels=r.choice([1, 3]))
    if r.random() < 0.4:
        c = dict(common, depth_multiplier=r.choice([0.125, 0.25]), min_depth=r.choice([4, 8]))
        cls = r.choice([tf.MobileNetV1Model, tf.MobileNetV1ForImageClassification])
        config = tf.MobileNetV1Config
    else:
        c = dict(common, depth_multiplier=r.choice([0.125, 0.25, 0.35]), depth_divisible_by=r.choice([4, 8]),
                 min_depth=r.choice([4, 8]), expand_ratio=r.choice([1, 2, 3]), output_stride=r.choice([8, 16, 32]),
                 first_layer_is_expansion=r.random() < 0.5, finegrained_output=r.random() < 0.3)
        cls = r.choice([tf.MobileNetV2Model, tf.MobileNetV2ForImageClassification,
                        tf.MobileNetV2ForSemanticSegmentation])
        config = tf.MobileNetV2Config
    if cls.__name__.startswith("MobileNetV2For") or cls.__name__.endswith("Classification"):
        c = with_labels(r, c)
    return cls, config, c


FAMILIES["mobilenet"] = gen_mobilenet


def gen_mobilevit(r):
    """MobileViT: widths, heads, expansion and MLP ratios, patch sides 1-3 (maps resized to whole patches), odd
    local/fusion kernels, output strides (dilations), query/key/value biases, activations; the base model, the
    classifier or the DeepLabV3 segmenter (atrous rates, its width); any image size."""
    heads = r.choice([1, 2, 4])
    c = dict(neck_hidden_sizes=[r.choice([8, 16, 24]) for _ in range(7)],
             hidden_sizes=[heads * r.choice([4, 8]) for _ in range(3)], num_attention_heads=heads,
             expand_ratio=r.choice([1.0, 2.0, 2.5, 3.0]), mlp_ratio=r.choice([1.0, 2.0, 2.5]),
             patch_size=r.randint(1, 3), conv_kernel_size=r.choice([1, 3, 5]), output_stride=r.choice([8, 16, 32]),
             qkv_bias=r.random() < 0.7, hidden_act=r.choice(["silu", "gelu", "relu"]),
             layer_norm_eps=r.choice([1e-5, 1e-6]), num_channels=r.choice([1, 3]),
             atrous_rates=[r.randint(1, 4) for _ in range(3)], aspp_out_channels=r.choice([8, 16]))
    cls = r.choice([tf.MobileViTModel, tf.MobileViTForImageClassification, tf.MobileViTForSemanticSegmentation])
    if cls is not tf.MobileViTModel:
        c = with_labels(r, c)
    return cls, tf.MobileViTConfig, c


FAMILIES["mobilevit"] = gen_mobilevit


def gen_mobilevitv2(r):
    """MobileViTV2: width multipliers, attention units and block counts, expansion and FFN multipliers, patch sides
    1-3, odd depthwise kernels, output strides (dilations), activations; the base model, the classifier or the
    DeepLabV3 segmenter; images large enough for a whole patch in the last map."""
    c = dict(width_multiplier=r.choice([0.125, 0.25, 0.5]), n_attn_blocks=[r.randint(0, 2) for _ in range(3)],
             base_attn_unit_dims=[r.choice([32, 64, 96]) for _ in range(3)], expand_ratio=r.choice([1.0, 2.0, 2.5]),
             ffn_multiplier=r.choice([1, 2]), patch_size=r.randint(1, 3), conv_kernel_size=r.choice([1, 3, 5]),
             output_stride=r.choice([8, 16, 32]), hidden_act=r.choice(["swish", "gelu", "relu"]),
             layer_norm_eps=r.choice([1e-5, 1e-6]), num_channels=r.choice([1, 3]),
             atrous_rates=[r.randint(1, 4) for _ in range(3)], aspp_out_channels=r.choice([8, 16]))
    cls = r.choice([tf.MobileViTV2Model, tf.MobileViTV2ForImageClassification, tf.MobileViTV2ForSemanticSegmentation])
    if cls is not tf.MobileViTV2Model:
        c = with_labels(r, c)
    return cls, tf.MobileViTV2Config, c


FAMILIES["mobilevitv2"] = gen_mobilevitv2


def gen_cvt(r):
    """CvT: 1-3 stages (transformers needs stage s to hold more than s blocks), patch kernels, strides and paddings,
    widths and heads, MLP ratios, query/key/value kernels with the padding that keeps the query's map, key/value
    strides, biases, class tokens in the last stage or none; the base model or the classifier; any image size."""
    n = r.randint(1, 3)
    heads = [r.choice([1, 2]) for _ in range(n)]
    kernels = [r.choice([1, 3, 5]) for _ in range(n)]
    c = dict(patch_sizes=[r.choice([3, 5, 7]) for _ in range(n)], patch_stride=[r.choice([1, 2, 4]) for _ in range(n)],
             patch_padding=[r.randint(0, 2) for _ in range(n)], embed_dim=[h * r.choice([4, 8]) for h in heads],
             num_heads=heads, depth=[s + r.randint(1, 2) for s in range(n)],
             mlp_ratio=[r.choice([1.0, 2.0, 2.5]) for _ in range(n)], qkv_bias=[r.random() < 0.7 for _ in range(n)],
             cls_token=[False] * (n - 1) + [r.random() < 0.6], qkv_projection_method=["dw_bn"] * n,
             kernel_qkv=kernels, padding_q=[k // 2 for k in kernels], stride_q=[1] * n,
             padding_kv=[r.randint(0, k // 2) for k in kernels], stride_kv=[r.choice([1, 2, 3]) for _ in range(n)],
             num_channels=r.choice([1, 3]), attention_drop_rate=[0.0] * n, drop_rate=[0.0] * n,
             drop_path_rate=[0.0] * n)
    cls = r.choice([tf.CvtModel, tf.CvtForImageClassification])
    if cls is tf.CvtForImageClassification:
        c = with_labels(r, c)
    return cls, tf.CvtConfig, c


FAMILIES["cvt"] = gen_cvt


def gen_pvt_v2(r):
    """PVTv2: 1-4 stages of 0-2 blocks, patch sizes and strides, widths and heads, spatial-reduction ratios, MLP
    ratios, query/key/value biases, linear attention (keys and values pooled to 7x7) or not, norm epsilons,
    activations; the base model or the classifier; any image size."""
    n = r.randint(1, 4)
    heads = [r.choice([1, 2]) for _ in range(n)]
    c = dict(num_encoder_blocks=n, depths=[r.randint(0, 2) for _ in range(n)],
             sr_ratios=[r.choice([1, 2, 4]) for _ in range(n)], hidden_sizes=[h * r.choice([4, 8]) for h in heads],
             patch_sizes=[r.choice([3, 5, 7]) for _ in range(n)], strides=[r.choice([1, 2, 4]) for _ in range(n)],
             num_attention_heads=heads, mlp_ratios=[r.randint(1, 4) for _ in range(n)], qkv_bias=r.random() < 0.7,
             linear_attention=r.random() < 0.4, layer_norm_eps=r.choice([1e-6, 1e-5]),
             hidden_act=r.choice(["gelu", "relu", "gelu_new"]), num_channels=r.choice([1, 3]))
    cls = r.choice([tf.PvtV2Model, tf.PvtV2ForImageClassification])
    if cls is tf.PvtV2ForImageClassification:
        c = with_labels(r, c)
    return cls, tf.PvtV2Config, c


FAMILIES["pvt_v2"] = gen_pvt_v2


def gen_levit(r):
    """LeViT: 1-3 stages (widths multiples of 8 that key_dim[0] divides), heads, key widths, depths 0-2, MLP and
    attention ratios (no MLPs too), embedding kernels/strides/paddings that reach a grid of image / patch; the base
    model, the classifier or the teacher-distilled one; images of image_size."""
    n = r.randint(1, 3)
    k0 = r.choice([4, 8])
    c = dict(hidden_sizes=sorted(8 * k0 // 4 * r.randint(1, 3) for _ in range(n + 2))[:max(n, min(n, 2) + 1)],
             num_attention_heads=[r.randint(1, 3) for _ in range(n)], depths=[r.randint(0, 2) for _ in range(n)],
             key_dim=[k0] + [r.choice([4, 8]) for _ in range(n - 1)], mlp_ratio=[r.randint(0, 2) for _ in range(n)],
             attention_ratio=[r.randint(1, 3) for _ in range(n)], num_channels=r.choice([1, 3]), patch_size=16,
             image_size=16 * r.randint(1, 5), kernel_size=3, stride=2, padding=1)
    cls = r.choice([tf.LevitModel, tf.LevitForImageClassification, tf.LevitForImageClassificationWithTeacher])
    if cls is not tf.LevitModel:
        c = with_labels(r, c)
    return cls, tf.LevitConfig, c


FAMILIES["levit"] = gen_levit


def gen_efficientnet(r):
    """EfficientNet: 1-4 stages (kernels 1-5, strides 1-2, repeats, expansion ratios 1-3), width and depth
    coefficients, the divisor, blocks with symmetric depthwise padding, the squeeze ratio, mean or max pooling,
    activations; the base model or the classifier; images of 24-48 pixels a side."""
    n = r.randint(1, 4)
    width, divisor = r.choice([0.125, 0.25, 0.5]), r.choice([2, 4, 8])
    c = dict(width_coefficient=width, depth_coefficient=r.choice([0.5, 1.0, 1.5]), depth_divisor=divisor,
             out_channels=[r.choice([8, 16, 24]) for _ in range(n)],
             kernel_sizes=[r.choice([2, 3, 5]) for _ in range(n)], strides=[r.choice([1, 2]) for _ in range(n)],
             num_block_repeats=[r.randint(1, 2) for _ in range(n)], expand_ratios=[r.randint(1, 3) for _ in range(n)],
             depthwise_padding=sorted(r.sample(range(6), r.randint(0, 2))),
             squeeze_expansion_ratio=r.choice([0.25, 0.5]), pooling_type=r.choice(["mean", "max"]),
             hidden_act=r.choice(["swish", "relu", "gelu"]), batch_norm_eps=r.choice([1e-3, 1e-5]),
             num_channels=r.choice([1, 3]))
    c["in_channels"] = [32] + c["out_channels"][:-1]  # (each stage takes the last one's width, the first the stem's)
    # (transformers' top batch norm takes `hidden_dim` channels: the last convolution's, as released configs have.)
    scaled = 1280 * width
    hidden = max(divisor, int(scaled + divisor / 2) // divisor * divisor)
    c["hidden_dim"] = hidden + divisor if hidden < 0.9 * scaled else hidden
    cls = r.choice([tf.EfficientNetModel, tf.EfficientNetForImageClassification])
    if cls is tf.EfficientNetForImageClassification:
        c = with_labels(r, c)
    return cls, tf.EfficientNetConfig, c


FAMILIES["efficientnet"] = gen_efficientnet


def gen_regnet(r):
    """RegNet: 1-4 stages of 0-2 X or Y layers, widths, group widths (dividing them or not: at least one group),
    the first stage strided or not, activations; the base model or the classifier; any image size."""
    n = r.randint(1, 4)
    c = dict(embedding_size=r.choice([4, 8]), hidden_sizes=[r.choice([8, 12, 16]) for _ in range(n)],
             depths=[r.randint(0, 2) for _ in range(n)], groups_width=r.choice([2, 4, 8, 64]),
             layer_type=r.choice(["x", "y"]), hidden_act=r.choice(["relu", "gelu", "silu"]),
             downsample_in_first_stage=r.random() < 0.7, num_channels=r.choice([1, 3]))
    cls = r.choice([tf.RegNetModel, tf.RegNetForImageClassification])
    if cls is tf.RegNetForImageClassification:
        c = with_labels(r, c)
    return cls, tf.RegNetConfig, c


FAMILIES["regnet"] = gen_regnet


def gen_glpn(r):
    """GLPN: SegFormer's random encoder (any image size for the base model); the depth head with stages past the
    first halving (odd kernels), the decoder's width, the head's map and max_depth — `image_inputs` gives sides
    that halve evenly, as transformers' decoder needs."""
    cls, _, c = gen_segformer(r)
    for key in ("id2label", "label2id", "num_labels", "reshape_last_stage"):
        c.pop(key, None)
    n = c["num_encoder_blocks"]
    c.update(strides=[r.choice([1, 2, 4])] + [2] * (n - 1), patch_sizes=[r.choice([1, 3, 7]) for _ in range(n)],
             decoder_hidden_size=r.choice([4, 8, 12]), max_depth=r.choice([1, 10]),
             head_in_index=r.choice([-1, -1, r.randrange(n)]),
             # (GLPN's heads must divide the widths.)
             num_attention_heads=[r.choice([k for k in (1, 2, 4) if h % k == 0]) for h in c["hidden_sizes"]])
    return r.choice([tf.GLPNModel, tf.GLPNForDepthEstimation]), tf.GLPNConfig, c


FAMILIES["glpn"] = gen_glpn


def gen_bit(r):
    """BiT: 1-4 stages of 1-2 pre- or post-activation bottlenecks (transformers' final norm and classifier read the
    unscaled last width, so no width factor; an empty stage breaks its next), widths, group counts,
    symmetric, SAME or VALID padding, the max pool's dynamic padding, output strides (dilations), activations; the
    base model or the classifier; any image size."""
    n = r.randint(1, 4)
    groups = r.choice([1, 2, 4])
    c = dict(embedding_size=r.choice([8, 16]), hidden_sizes=[r.choice([32, 64]) for _ in range(n)],
             depths=[r.randint(1, 2) for _ in range(n)], num_groups=groups,
             layer_type=r.choice(["preactivation", "bottleneck"]),
             global_padding=r.choice([None, "SAME", "same", "VALID"]), embedding_dynamic_padding=r.random() < 0.4,
             output_stride=r.choice([8, 16, 32]), width_factor=1,
             hidden_act=r.choice(["relu", "gelu"]), num_channels=r.choice([1, 3]))
    cls = r.choice([tf.BitModel, tf.BitForImageClassification])
    if cls is tf.BitForImageClassification:
        c = with_labels(r, c)
    return cls, tf.BitConfig, c


FAMILIES["bit"] = gen_bit


def gen_poolformer(r):
    """PoolFormer: 1-4 stages of 0-2 blocks, patch sizes, strides and paddings, odd pool sizes, MLP ratios, layer
    scales or none, activations; the base model or the classifier; any image size."""
    n = r.randint(1, 4)
    c = dict(num_encoder_blocks=n, depths=[r.randint(0, 2) for _ in range(n)],
             hidden_sizes=[r.choice([4, 8, 12]) for _ in range(n)], patch_sizes=[r.choice([1, 3, 7]) for _ in range(n)],
             strides=[r.randint(1, 4) for _ in range(n)], padding=[r.randint(0, 2) for _ in range(n)],
             pool_size=r.choice([1, 3, 5]), mlp_ratio=r.choice([1.0, 2.0, 4.0]), use_layer_scale=r.random() < 0.6,
             layer_scale_init_value=r.choice([1e-5, 0.5]), hidden_act=r.choice(["gelu", "relu"]),
             num_channels=r.choice([1, 3]))
    cls = r.choice([tf.PoolFormerModel, tf.PoolFormerForImageClassification])
    if cls is tf.PoolFormerForImageClassification:
        c = with_labels(r, c)
    return cls, tf.PoolFormerConfig, c


FAMILIES["poolformer"] = gen_poolformer


def gen_ast(r):
    """The Audio Spectrogram Transformer on ViT's random blocks: patch sizes, frequency and time strides (overlapping
    or not), spectrogram shapes; the base model or the audio classifier."""
    _, _, c = gen_vit(r)
    for k in ("id2label", "label2id", "num_labels", "image_size", "patch_size", "num_channels", "pooler_output_size",
              "pooler_act"):
        c.pop(k, None)
    patch = r.randint(2, 6)
    c.update(patch_size=patch, frequency_stride=r.randint(1, patch), time_stride=r.randint(1, patch),
             num_mel_bins=r.randint(patch, 16), max_length=r.randint(patch, 24))
    cls = r.choice([tf.ASTModel, tf.ASTForAudioClassification])
    if cls is tf.ASTForAudioClassification:
        c = with_labels(r, c)
    return cls, tf.ASTConfig, c


FAMILIES["ast"] = gen_ast


def base_of(family):
    return BASE.get(family, family)


ENCODERS = {f for f in FAMILIES if base_of(f) in ("bert", "roberta", "distilbert", "mpnet", "modernbert")}
# Image and image-text models: their own inputs, no generation.
IMAGES = {"vit", "clip", "dinov2", "siglip", "speech", "resnet", "deit", "convnext", "ast", "swin", "beit",
          "segformer", "dinov3", "depth_anything", "dpt", "mobilenet", "efficientnet", "regnet", "glpn", "bit",
          "poolformer", "mobilevit", "mobilevitv2", "vit_mae", "cvt", "levit", "yolos", "pvt_v2"}
# Encoder-decoders: sources and targets; generation from the decoder start token.
SEQ2SEQ = {"t5", "bart", "whisper", "t5_cls", "t5_tok", "t5_qa"}


def randomise(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            # (A norm's scale: its own module's name says so, not an outer one's, as DBRX's `norm_attn_norm.attn`.)
            if "norm" in ("." + name).split(".")[-2].lower() and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * noise)
            elif name.endswith("bias"):
                p.copy_(0.1 * noise)
            else:
                p.copy_(0.2 * noise)
        # Buffers a checkpoint stores that steer the model: DeepSeek-V3's router bias, Apertus's xIELU scalars.
        for name, b in model.named_buffers():
            if name.endswith(("e_score_correction_bias", "expert_bias")):  # (LFM2-MoE's: expert_bias)
                b.copy_(0.1 * torch.randn(b.shape, generator=g))
            elif name.endswith("act_fn.beta"):
                b.copy_(0.5 + 0.1 * torch.randn(b.shape, generator=g))
            elif name.endswith("act_fn.eps"):
                b.copy_(-1e-6 * (1.0 + torch.randn(b.shape, generator=g).abs()))


def flatten(out, prefix=""):
    flat = {}
    for key, value in out.items():
        name = f"{prefix}{key}"
        if value is None:
            continue
        if isinstance(value, (tuple, list)):  # (LLaVA's image features are a list, one per image)
            for i, v in enumerate(value):
                if isinstance(v, (tuple, list)):  # (Qwen3-VL's deepstack features: per block, per image)
                    flat.update(flatten({str(i): v}, f"{name}."))
                elif v is not None:
                    flat[f"{name}.{i}"] = v.detach().float().clone().contiguous()
        elif isinstance(value, torch.Tensor):
            flat[name] = value.detach().float().clone().contiguous()
        elif isinstance(value, tf.utils.ModelOutput):  # a nested output (CLIP's text_model_output)
            flat.update(flatten(value, f"{name}."))
    return flat


def image_inputs(r, model_cls, cfg):
    """Pixels for the image side and, for CLIP's text side, ids with an eos (as CLIP's tokenizer
    ends every text, right-padded with it) and a mask; a CLIPModel gets both."""
    vision = cfg.get("vision_config", cfg)
    text = cfg.get("text_config", cfg)
    name = model_cls.__name__
    # (transformers' CLIPModel forward needs both: one side alone is tests/cpu/vision.rs's.)
    sides = ("text", "image") if name in ("CLIPModel", "SiglipModel") else ("text",) if "Text" in name else ("image",)
    x, desc = {}, []
    if "image" in sides:
        img = vision.get("image_size", 224)
        hgt, wid = (img, img) if isinstance(img, int) else img
        if name.startswith("Dinov2") and r.random() < 0.6:  # another size: positions resampled
            p = vision["patch_size"]
            hgt, wid = p * r.randint(1, 6) + r.choice([0, 1]), p * r.randint(1, 6) + r.choice([0, 1])
        if name.startswith(("ResNet", "ConvNext", "Segformer", "DINOv3", "MobileNet", "MobileViT", "RegNet", "Bit", "PoolFormer")) or (name.startswith("Swin") and not cfg["use_absolute_embeddings"]):
            hgt, wid = r.randint(8, 48), r.randint(8, 48)  # any size
        if name.startswith(("Beit", "Data2VecVision")) and r.random() < 0.6:  # another grid: resampled
            p = vision["patch_size"]
            hgt, wid = p * r.randint(1, 6) + r.choice([0, 1]), p * r.randint(1, 6) + r.choice([0, 1])
        if name.startswith("DepthAnything"):  # any size: positions resampled
            vision = cfg["backbone_config"]
            p = vision["patch_size"]
            hgt, wid = p * r.randint(1, 6) + r.choice([0, 1]), p * r.randint(1, 6) + r.choice([0, 1])
        if name.startswith("DPT"):  # the heads need a square grid; the base model takes any
            p = vision["patch_size"]
            hgt = p * r.randint(1, 6) + r.choice([0, 1])
            wid = hgt if name != "DPTModel" else p * r.randint(1, 6) + r.choice([0, 1])
            if cfg.get("is_hybrid"):  # (transformers' hybrid takes image_size only)
                hgt = wid = img
            if cfg.get("backbone_config") and not cfg.get("is_hybrid"):  # DINOv2's patches, any grid
                p = cfg["backbone_config"]["patch_size"]
                hgt, wid = p * r.randint(1, 6) + r.choice([0, 1]), p * r.randint(1, 6) + r.choice([0, 1])
        if name.startswith("GLPN"):  # any size for the base model; sides that halve evenly for the decoder
            unit = cfg["strides"][0] << (cfg["num_encoder_blocks"] - 1)
            hgt, wid = unit * r.randint(1, 3), unit * r.randint(1, 3)
            if name == "GLPNModel":
                hgt, wid = r.randint(8, 48), r.randint(8, 48)
        if name.startswith("Yolos"):  # any grid: positions resampled
            p = vision["patch_size"]
            hgt, wid = p * r.randint(1, 5) + r.choice([0, 1]), p * r.randint(1, 5) + r.choice([0, 1])
        if name.startswith("MobileViTV2"):  # (a whole patch in the last map)
            hgt, wid = r.randint(96, 128), r.randint(96, 128)
        if name.startswith("PvtV2"):  # any size large enough for the strided stages' kernels
            hgt, wid = r.randint(16, 64), r.randint(16, 64)
        if name.startswith("Cvt"):  # any size large enough for the strided stages' kernels
            hgt, wid = r.randint(24, 64), r.randint(24, 64)
        if name.startswith("EfficientNet"):  # (large enough for the strided kernels transformers pads by hand)
            hgt, wid = r.randint(24, 48), r.randint(24, 48)
        b = r.randint(1, 3)
        x["pixel_values"] = torch.randn(b, vision.get("num_channels", 3), hgt, wid)
        if name.startswith("ViTMAE"):  # (the patches kept: the lowest noise)
            p = vision["patch_size"]
            x["noise"] = torch.rand(b, (hgt // p) * (wid // p))
        desc.append(f"images={b}")
    if "text" in sides:
        b, l = r.randint(1, 3), r.randint(2, min(12, text["max_position_embeddings"]))
        eos = text["eos_token_id"]
        ids = torch.randint(3, text["vocab_size"], (b, l), dtype=torch.int64)
        mask = torch.ones(b, l, dtype=torch.int64)
        for i in range(b):
            n = r.randint(1, l)
            if r.random() < 0.8:
                ids[i, n - 1] = eos if eos != 2 else text["vocab_size"] - 1
            ids[i, n:] = eos if eos != 2 else text["pad_token_id"]
            mask[i, n:] = 0
        x["input_ids"], x["attention_mask"] = ids, mask
        desc.append(f"texts b={b} l={l}")
    return x, " ".join(desc)


def text_of(family, cfg):
    """The text model's config of a multimodal checkpoint run on text (Mistral 3), else `cfg`."""
    return cfg["text_config"] if family in MULTIMODAL_TEXT else cfg


def make_inputs(r, family, cfg, model_cls=None, model=None):
    """Random forward inputs and a description of them (a derived family's as its base family's); `model` (the
    reference) for the families whose inputs depend on it."""
    if family == "anyres":
        return anyres_prompt_inputs(r, model_cls, cfg, model)
    if family == "images" and model_cls.__name__.startswith("Lfm2Vl"):
        return lfm2_image_inputs(r, cfg)
    if family == "images":
        return image_prompt_inputs(r, model_cls, cfg)
    if family == "qwen_images":
        return qwen_image_inputs(r, cfg, model_cls=model_cls)
    if family == "mllama_images":
        return mllama_image_inputs(r, cfg)
    if family == "audio":
        return audio_inputs(r, cfg)
    if family == "speech":
        return speech_inputs(r, cfg)
    if family == "ast":
        b = r.randint(1, 3)
        return {"input_values": torch.randn(b, cfg["max_length"], cfg["num_mel_bins"])}, f"b={b}"
    if family in IMAGES:
        return image_inputs(r, model_cls, cfg)
    if family in SEQ2SEQ:
        return seq2seq_inputs(r, model_cls, cfg)
    if family in MULTIPLE_CHOICE:
        # The rows as the choices of one example, or of two (the second with the rows reversed).
        x, desc = make_inputs(r, base_of(family), cfg, model_cls)
        two = r.random() < 0.5
        x = {k: torch.stack([v, v.flip(0)]) if two else v.unsqueeze(0) for k, v in x.items()}
        return x, f"{'2' if two else '1'} x choices {desc}"
    cfg = text_of(family, cfg)
    enc = family in ENCODERS
    # (transformers' Falcon classifiers take no position_ids.)
    takes_positions = family not in ("falcon_cls", "falcon_tok", "mamba", "falcon_mamba", "mamba2")
    family = base_of(family)
    vocab = cfg.get("vocab_size")
    max_pos = cfg.get("max_position_embeddings", 64)
    limit = max_pos - 2 if family in ("roberta", "mpnet") else max_pos
    b = r.randint(1, 3)
    # Sequences past original_max_position_embeddings for long-context ropes (but within max_pos);
    # MPNet's up to 150 tokens, past its exact buckets (8) and its last log-spaced one (128).
    longest = {"mpnet": 150, "modernbert": 40}.get(family, 12) if r.random() < 0.5 else 12
    l = r.randint(2, max(2, min(longest, limit))) if enc else r.randint(2, 20)
    pad_id = cfg.get("pad_token_id")
    if pad_id is None:
        pad_id = 1 if family in ("roberta", "mpnet") else 0
    side = r.choice(["none", "right", "left"]) if b > 1 or r.random() < 0.3 else "none"
    if enc and side == "left" and r.random() < 0.5:
        side = "right"
    ids = torch.randint(0 if r.random() < 0.3 else 3, vocab, (b, l), dtype=torch.int64)
    mask = torch.ones(b, l, dtype=torch.int64)
    if side == "none" and l > 2 and r.random() < 0.15:
        side = "holes"
        for i in range(b):
            mask[i, r.randint(1, l - 1)] = 0
    elif side != "none":
        for i in range(1, b) if b > 1 else [0]:
            n = r.randint(1, l)
            if side == "right":
                mask[i, n:] = 0
            else:
                mask[i, : l - n] = 0
    if r.random() < 0.8:
        ids[mask == 0] = pad_id
    else:
        side += "(non-pad ids)"
    x = {"input_ids": ids, "attention_mask": mask}
    desc = f"b={b} l={l} pad={side}"
    if family == "bert" and cfg.get("type_vocab_size", 2) > 1 and r.random() < 0.7:
        x["token_type_ids"] = torch.randint(0, cfg["type_vocab_size"], (b, l), dtype=torch.int64)
        desc += " token_types"
    # GPT-2's family adds the token table's rows of its token types.
    if family in ("gpt2", "gpt_neo", "gptj", "codegen", "gpt_bigcode") and r.random() < 0.3:
        x["token_type_ids"] = torch.randint(0, min(vocab, 4), (b, l), dtype=torch.int64)
        desc += " token_types"
    if family != "distilbert" and takes_positions and r.random() < 0.3:
        if family in ("roberta", "mpnet"):
            pos = (torch.cumsum(mask, 1) * mask + pad_id).clamp(max=max_pos - 1)
        elif r.random() < 0.5:
            pos = (torch.cumsum(mask, 1) - 1).clamp(min=0)
        else:
            off = r.randint(0, max(0, limit - l)) if enc else r.randint(0, 12)
            pos = torch.arange(off, off + l).expand(b, l).contiguous()
        x["position_ids"] = pos.to(torch.int64)
        desc += " position_ids"
    if r.random() < 0.1 and side == "none":
        del x["attention_mask"]
        desc += " no_mask"
    return x, desc


def seq2seq_inputs(r, model_cls, cfg):
    """Sources (padded on either side, T5 takes both; Whisper's mel features of the one length it takes) and, but
    for the encoder alone, targets from the decoder start token, right-padded with a `decoder_attention_mask`
    sometimes."""
    vocab = cfg["vocab_size"]
    b, l = r.randint(1, 3), r.randint(1, 24)
    if "Whisper" in model_cls.__name__:
        x = {"input_features": torch.randn(b, cfg["num_mel_bins"], 2 * cfg["max_source_positions"])}
        t = r.randint(1, cfg["max_target_positions"])
        dec = torch.randint(2, vocab, (b, t), dtype=torch.int64)
        dec[:, 0] = 1
        x["decoder_input_ids"] = dec
        desc = f"b={b} targets={t}"
        if r.random() < 0.4 and t > 1:
            dmask = torch.ones(b, t, dtype=torch.int64)
            dmask[-1, r.randint(1, t - 1):] = 0
            x["decoder_attention_mask"] = dmask
            desc += " decoder_mask"
        return x, desc
    ids = torch.randint(2, vocab, (b, l), dtype=torch.int64)
    mask = torch.ones(b, l, dtype=torch.int64)
    side = r.choice(["none", "right", "left"])
    if side != "none":
        for i in range(1, b) if b > 1 else [0]:
            n = r.randint(1, l)
            if side == "right":
                mask[i, n:] = 0
            else:
                mask[i, : l - n] = 0
        ids[mask == 0] = 0
    m2m = "M2M100" in model_cls.__name__
    if m2m:
        # M2M100 counts positions from the non-padding ids: padding ids where the mask drops, and one inside.
        ids[mask == 0] = cfg["pad_token_id"]
        if r.random() < 0.4:
            ids[0, r.randrange(l)] = cfg["pad_token_id"]
    x = {"input_ids": ids, "attention_mask": mask}
    desc = f"b={b} l={l} pad={side}"
    if model_cls.__name__.endswith("T5ForSequenceClassification"):
        # One EOS (id 1) closing each row's kept tokens, as the classifier requires; no targets (the
        # sources shifted right).
        for i in range(b):
            ids[i, int(mask[i].nonzero().max())] = 1
        return x, desc + " eos"
    # (BART's decoder reads the shifted input_ids without them.)
    bart = "Bart" in model_cls.__name__
    encoder_only = model_cls.__name__.endswith(("EncoderModel", "TokenClassification"))
    if not encoder_only and not (bart and r.random() < 0.3):
        t = r.randint(1, 16)
        dec = torch.randint(2, cfg.get("decoder_vocab_size") or vocab, (b, t), dtype=torch.int64)
        dec[:, 0] = cfg.get("decoder_start_token_id", 0)
        if m2m and r.random() < 0.4:
            dec[-1, r.randrange(t)] = cfg["pad_token_id"]
            desc += " decoder_pad"
        x["decoder_input_ids"] = dec
        desc += f" targets={t}"
        if r.random() < 0.4 and t > 1:
            dmask = torch.ones(b, t, dtype=torch.int64)
            dmask[-1, r.randint(1, t - 1):] = 0
            x["decoder_attention_mask"] = dmask
            desc += " decoder_mask"
    return x, desc


def diff_from_defaults(config_cls, cfg):
    try:
        defaults = config_cls().to_dict()
    except Exception:
        defaults = {}
    return {k: v for k, v in cfg.items() if defaults.get(k, object()) != v}


def to_v4(path):
    """Rewrites config.json in transformers 4.x key style (torch_dtype, rope_theta, rope_scaling); False (nothing
    written) for the model types transformers 4.x never had."""
    cfg = json.loads((path / "config.json").read_text())
    if cfg.get("model_type") in ("mellum", "laguna", "mimo_v2_flash", "gemma4_text", "gemma4", "mistral4", "flint", "axk1", "kolibri1", "lfm3"):
        return False
    rope = cfg.get("rope_parameters")
    if isinstance(rope, dict) and "rope_type" in rope:
        rope = dict(rope)
        cfg.pop("rope_parameters")
        cfg["rope_theta"] = rope.pop("rope_theta")
        if "partial_rotary_factor" in rope:
            cfg["partial_rotary_factor"] = rope.pop("partial_rotary_factor")
        if cfg.get("model_type") == "gpt_neox":  # GPT-NeoX's 4.x names
            cfg["rotary_emb_base"] = cfg.pop("rope_theta")
            if "partial_rotary_factor" in cfg:
                cfg["rotary_pct"] = cfg.pop("partial_rotary_factor")
        if rope.get("rope_type", "default") != "default":
            if rope["rope_type"] == "longrope":
                rope["type"] = "longrope"
            cfg["rope_scaling"] = rope
    elif isinstance(rope, dict) and "full_attention" in rope:
        cfg.pop("rope_parameters")
        full = dict(rope["full_attention"])
        cfg["rope_theta"] = full.pop("rope_theta")
        if full.get("rope_type", "default") != "default":
            cfg["rope_scaling"] = full
        cfg["rope_local_base_freq"] = rope["sliding_attention"]["rope_theta"]
    if "dtype" in cfg:
        cfg["torch_dtype"] = cfg.pop("dtype")
    cfg["transformers_version"] = "4.46.0"
    (path / "config.json").write_text(json.dumps(cfg, indent=2))
    return True


def relabel(path, how, n):
    """Rewrites config.json's labels (n of them): as a bare `num_labels` key (as configs of
    transformers 2.x, or hand-written ones, have them; sometimes next to an `id2label` of null or {}),
    or as transformers 4.x saved them (`id2label` and `label2id` even for the default 2 labels)."""
    cfg = json.loads((path / "config.json").read_text())
    if how.startswith("num_labels"):
        cfg.pop("id2label", None)
        cfg.pop("label2id", None)
        cfg["num_labels"] = n
        if how == "num_labels+null":
            cfg["id2label"] = None
        elif how == "num_labels+{}":
            cfg["id2label"] = {}
    elif how == "v4":
        if not cfg.get("id2label"):
            cfg["id2label"] = {str(i): f"LABEL_{i}" for i in range(n)}
        if not cfg.get("label2id"):
            cfg["label2id"] = {name: int(i) for i, name in cfg["id2label"].items()}
    (path / "config.json").write_text(json.dumps(cfg, indent=2, ensure_ascii=False))


def minimal(path, config_cls):
    """Rewrites config.json with only the keys that differ from the config class's defaults (as
    hand-written or old configs are), plus model_type and architectures."""
    cfg = json.loads((path / "config.json").read_text())
    defaults = config_cls().to_dict()
    keep = {"model_type", "architectures", "transformers_version", "torch_dtype", "dtype"}
    out = {k: v for k, v in cfg.items() if k in keep or k not in defaults or defaults[k] != v}
    (path / "config.json").write_text(json.dumps(out, indent=2))


class Runner:
    def __init__(self, binary, work, keep):
        self.binary, self.work, self.keep = binary, Path(work), keep
        self.results = []  # (case id, family, kind, message, cfg diff, extra)

    def cli(self, args):
        p = subprocess.run([self.binary] + args, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stderr.strip()

    def case(self, family, seed, do_generate):
        r = random.Random(seed)
        model_cls, config_cls, cfg = FAMILIES[family](r)
        cid = f"{family}#{seed}"
        diff = diff_from_defaults(config_cls, cfg)
        variant = []
        try:
            config = config_cls(**cfg, attn_implementation="eager")
        except Exception as e:  # transformers refuses it: not a valid case
            return ("skip", cid, f"transformers rejects config: {e}")
        torch.manual_seed(seed)
        model = model_cls(config).eval()
        randomise(model, seed)
        path = self.work / cid.replace("#", "_")
        shutil.rmtree(path, ignore_errors=True)
        roll = r.random()
        if roll < 0.2:
            model = model.to(torch.bfloat16)
            variant.append("bf16")
        if r.random() < 0.15:
            model.save_pretrained(path)
            (path / "model.safetensors").unlink()
            torch.save(model.state_dict(), path / "pytorch_model.bin")
            variant.append("bin")
        else:
            model.save_pretrained(path)
        if family not in ENCODERS and family not in IMAGES and family not in SEQ2SEQ and r.random() < 0.25:
            if to_v4(path):
                variant.append("v4cfg")
        if family in CLASSIFIERS and r.random() < 0.4:
            how = r.choice(["num_labels", "num_labels", "num_labels+null", "num_labels+{}", "v4", "v4"])
            relabel(path, how, config.num_labels)
            variant.append(f"labels={how}")
        if r.random() < 0.3:
            minimal(path, config_cls)
            variant.append("minimal")
        try:
            ref = model_cls.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
        except Exception as e:
            return ("skip", cid, f"transformers cannot reload: {e}")
        x, desc = make_inputs(r, family, cfg, model_cls, ref)
        info = dict(diff=diff, variant=variant, inputs=desc, cls=model_cls.__name__)
        with torch.no_grad():
            try:
                expected = flatten(ref(**x, output_hidden_states=True))
            except Exception as e:
                return ("skip", cid, f"transformers forward fails: {e}")
        inp, out = path / "in.safetensors", path / "out.safetensors"
        save_file({k: v.contiguous() for k, v in x.items()}, str(inp))
        rc, err = self.cli(["forward", str(path), "--inputs", str(inp), "--output", str(out), "--hidden-states",
                            "--dtype", "f32"])
        if rc != 0:
            self.results.append((cid, family, "cli-error(forward)", err[-400:], info))
        else:
            got = load_file(str(out))
            ids = x.get("input_ids", x.get("decoder_input_ids", torch.ones(1, 1, dtype=torch.int64)))
            valid = x.get("attention_mask", torch.ones_like(ids)).bool()
            for key, ref_t in expected.items():
                if key not in got:
                    self.results.append((cid, family, "missing-output", key, info))
                    continue
                g = got[key]
                if tuple(g.shape) != tuple(ref_t.shape):
                    self.results.append((cid, family, "shape", f"{key}: ours {tuple(g.shape)} ref {tuple(ref_t.shape)}", info))
                    continue
                d = (g - ref_t).abs()
                # Only [batch, seq, ...] outputs are compared at the kept tokens alone: a classifier's
                # [batch, num_labels] logits can have num_labels == seq.
                per_token = ref_t.dim() >= 3 and tuple(ref_t.shape[:2]) == tuple(valid.shape)
                if per_token:
                    dv = d[valid]
                    scale = ref_t[valid].abs().max().item() if valid.any() else 1.0
                else:
                    dv, scale = d, ref_t.abs().max().item() if ref_t.numel() else 1.0
                rel = (dv.max().item() if dv.numel() else 0.0) / max(1.0, scale)
                if not (rel <= TOL):  # NaN counts
                    where = ""
                    if per_token:
                        per_pos = d.flatten(2).amax(-1) * valid
                        bad = (per_pos / max(1.0, scale) > TOL).nonzero().tolist()
                        where = f" at [b,t]={bad[:6]}{'...' if len(bad) > 6 else ''}"
                    elif ref_t.dim() == 2 and ref_t.shape[0] == valid.shape[0]:
                        # Per-sequence outputs (pooler_output, a classifier's logits) read the first
                        # token, padding where a row is left-padded.
                        bad = (d.amax(-1) / max(1.0, scale) > TOL).nonzero().flatten().tolist()
                        padded = [i for i in bad if not valid[i, 0]]
                        where = f" in rows {bad}" + (f" (first token padded in rows {padded})" if padded else "")
                    self.results.append((cid, family, "forward", f"{key}: rel {rel:.3g}{where}", info))
            extra = set(got) - set(expected)
            if extra:
                self.results.append((cid, family, "extra-output", sorted(extra), info))
        can_generate = (family not in SEQ2SEQ or model_cls.__name__.endswith("ForConditionalGeneration")) and hasattr(
            model_cls, "generate")
        # (Attention both ways is an encoder's: generation is refused.)
        both_ways = text_of(family, cfg).get("use_bidirectional_attention") == "all"
        if (do_generate and family not in ENCODERS and family not in CLASSIFIERS and family not in IMAGES and can_generate
                and not both_ways):
            # A fresh model: dynamic RoPE keeps state (the longest length seen) across calls.
            # (Through the family's class: a wrapper reads the config back with its own config class.)
            fresh = lambda: model_cls.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
            self.generate(r, cid, family, cfg, fresh, path, info)
        if not self.keep:
            shutil.rmtree(path, ignore_errors=True)
        return ("ok", cid, "")

    def generate(self, r, cid, family, cfg, fresh, path, info):
        if family == "whisper":
            return self.generate_whisper(r, cid, family, cfg, fresh, path, info)
        if family in ("qwen_images", "mllama_images", "audio", "anyres") and r.random() < 0.6:
            return self.generate_with_images(r, cid, family, cfg, fresh, path, info)
        cfg = text_of(family, cfg)
        b = r.randint(1, 3)
        vocab = cfg["vocab_size"]
        max_pos = cfg.get("max_position_embeddings", 64)
        l = r.randint(2, 12)
        new = r.choice([GEN_NEW, GEN_NEW, 16])
        ids = torch.randint(3, vocab, (b, l), dtype=torch.int64)
        mask = torch.ones(b, l, dtype=torch.int64)
        for i in range(1, b):
            n = r.randint(1, l)
            mask[i, : l - n] = 0
        ids[mask == 0] = 0
        gpath = path / "generation_config.json"
        gcfg = json.loads(gpath.read_text()) if gpath.exists() else {}
        extras = {}
        for key, values in [("repetition_penalty", [1.3, 0.7]), ("no_repeat_ngram_size", [1, 2, 3]),
                            ("min_new_tokens", [2, 5]), ("suppress_tokens", [[4, 5, 6]]),
                            ("begin_suppress_tokens", [[3, 7]]), ("bad_words_ids", [[[4]], [[5, 6]]]),
                            ("forced_eos_token_id", [2]), ("cache_implementation", ["static"]),
                            ("min_length", [6, 14]), ("encoder_no_repeat_ngram_size", [1, 2, 3])]:
            if r.random() < 0.12:
                extras[key] = r.choice(values)
        if family in ("gpt_neo", "mamba", "falcon_mamba", "mamba2"):
            # (GPT-Neo's local layers slice their window from the cache's length, which a static cache makes its
            # capacity: transformers' own static generation then differs from its dynamic one. Mamba keeps a
            # recurrent state, not a KV cache.)
            extras.pop("cache_implementation", None)
        if r.random() < (0.4 if family in SEQ2SEQ else 0.25):  # beam search
            extras["num_beams"] = r.choice([2, 3, 4])
            extras["length_penalty"] = r.choice([1.0, 0.6, 2.0])
            extras["early_stopping"] = r.choice([False, True, "never"])
            if r.random() < 0.4:
                extras["num_return_sequences"] = r.randint(2, extras["num_beams"])
        if extras:
            gcfg.update(extras)
            gpath.write_text(json.dumps(gcfg, indent=2))
        with torch.no_grad():
            # (An encoder-decoder's finished rows get its own pad token, as the CLI's.)
            pad = (cfg.get("pad_token_id") or 0) if family in SEQ2SEQ else 0
            try:
                want = fresh().generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, do_sample=False,
                                        pad_token_id=pad)
            except Exception as e:  # transformers' own generate fails (PaliGemma's text-only masks): nothing to compare
                print(f"[skip generate] {cid}: transformers fails: {str(e)[:200]}")
                return
        inp, out = path / "gen_in.safetensors", path / "gen_out.safetensors"
        save_file({"input_ids": ids, "attention_mask": mask}, str(inp))
        rc, err = self.cli(["generate", str(path), "--inputs", str(inp), "--output", str(out), "--max-new-tokens",
                            str(new), "--greedy", "--dtype", "f32"])
        ginfo = dict(info, gen=f"b={b} l={l} new={new} left-pad gen_cfg={extras}")
        if rc != 0:
            self.results.append((cid, family, "cli-error(generate)", err[-400:], ginfo))
            return
        got = load_file(str(out))["output_ids"]
        if got.shape != want.shape or not torch.equal(got, want):
            # Where it diverges, and whether transformers' own choice there was a near tie.
            msg = f"ours {got.tolist()} ref {want.tolist()}"
            if got.shape[0] == want.shape[0] and family not in SEQ2SEQ and "num_beams" not in extras:
                n = min(got.shape[1], want.shape[1])
                for i in range(want.shape[0]):
                    neq = (got[i, :n] != want[i, :n]).nonzero()
                    if len(neq):
                        t = neq[0].item()
                        ref = fresh()
                        with torch.no_grad():
                            pre = want[i : i + 1, :t]
                            m = torch.ones_like(pre)
                            m[:, :l] = mask[i : i + 1]
                            lg = ref(input_ids=pre, attention_mask=m,
                                     position_ids=(m.cumsum(1) - 1).clamp(min=0)).logits[0, -1]
                        pen = extras.get("repetition_penalty")
                        if pen:  # the margin transformers' greedy choice had, after the penalty
                            seen = pre[0].unique()
                            sc = lg[seen]
                            lg[seen] = torch.where(sc < 0, sc * pen, sc / pen)
                        top = lg.topk(2)
                        margin = (top.values[0] - top.values[1]).item()
                        msg += f" | row {i} diverges at {t}, ref top2 margin {margin:.3g}"
                        break
            self.results.append((cid, family, "generate", msg, ginfo))


    def generate_with_images(self, r, cid, family, cfg, fresh, path, info):
        """Greedy generation from left-padded prompts with Qwen's images and videos (some ending in image tokens: the
        multimodal RoPE streams then go on apart) or Llama 3.2 Vision's, with the dynamic or the static cache."""
        if family == "mllama_images":
            x, desc = mllama_image_inputs(r, cfg, side="left")
        elif family == "audio":
            x, desc = audio_inputs(r, cfg, side="left")
        elif family == "anyres":
            x, desc = anyres_prompt_inputs(r, getattr(tf, info["cls"]), cfg, fresh(), pad="left")
        else:
            x, desc = qwen_image_inputs(r, cfg, side="left", model_cls=getattr(tf, info["cls"]))
        new = r.choice([GEN_NEW, 16])
        gpath = path / "generation_config.json"
        gcfg = json.loads(gpath.read_text()) if gpath.exists() else {}
        if r.random() < 0.3:
            gcfg["cache_implementation"] = "static"
            gpath.write_text(json.dumps(gcfg, indent=2))
        with torch.no_grad():
            want = fresh().generate(**x, max_new_tokens=new, do_sample=False, pad_token_id=0)
        inp, out = path / "gen_in.safetensors", path / "gen_out.safetensors"
        save_file(x, str(inp))
        rc, err = self.cli(["generate", str(path), "--inputs", str(inp), "--output", str(out), "--max-new-tokens",
                            str(new), "--greedy", "--dtype", "f32"])
        ginfo = dict(info, gen=f"images {desc} new={new} cache={gcfg.get('cache_implementation', 'dynamic')}")
        if rc != 0:
            self.results.append((cid, family, "cli-error(generate)", err[-400:], ginfo))
            return
        got = load_file(str(out))["output_ids"]
        if got.shape != want.shape or not torch.equal(got, want):
            self.results.append((cid, family, "generate", f"ours {got.tolist()} ref {want.tolist()}", ginfo))

    def generate_whisper(self, r, cid, family, cfg, fresh, path, info):
        """Whisper's `generate` on random features, with a multilingual or English-only generation config."""
        vocab, b = cfg["vocab_size"], r.randint(1, 3)
        langs = {"<|en|>": vocab - 8, "<|fr|>": vocab - 7, "<|de|>": vocab - 6}
        tasks = {"translate": vocab - 5, "transcribe": vocab - 4}
        eos = r.choice([2, r.randint(3, vocab - 9)])
        gen = dict(decoder_start_token_id=1, bos_token_id=1, eos_token_id=eos,
                   pad_token_id=r.choice([eos, 0]), no_timestamps_token_id=vocab - 1)
        args = []
        if r.random() < 0.7:  # multilingual
            gen.update(lang_to_id=langs, task_to_id=tasks, is_multilingual=True)
            gen["forced_decoder_ids"] = r.choice([None, [[1, None], [2, vocab - 4]], [[1, vocab - 7], [2, vocab - 5]]])
            if r.random() < 0.5:
                args += ["--language", r.choice(["en", "french", "<|de|>", "DE"])]
            if r.random() < 0.4:
                args += ["--task", r.choice(["transcribe", "translate"])]
        else:
            gen["is_multilingual"] = False
        if r.random() < 0.5:
            gen["suppress_tokens"] = r.sample(range(3, vocab - 9), 3)
        if r.random() < 0.5:
            gen["begin_suppress_tokens"] = [r.randint(3, vocab - 9), eos]
        if r.random() < 0.3:
            gen.update(num_beams=r.choice([2, 3, 4]), length_penalty=r.choice([1.0, 0.5, 2.0]),
                       early_stopping=r.choice([False, True, "never"]))
        new = None
        if r.random() < 0.5:
            gen["max_length"] = r.randint(3, cfg["max_target_positions"])
        else:
            new = r.randint(1, cfg["max_target_positions"] - 5)
        (path / "generation_config.json").write_text(json.dumps(gen, indent=2))
        x = torch.randn(b, cfg["num_mel_bins"], 2 * cfg["max_source_positions"])
        kwargs = {}
        for flag, value in zip(args[::2], args[1::2]):
            kwargs[flag.lstrip("-")] = value
        if new is not None:
            kwargs["max_new_tokens"] = new
            args += ["--max-new-tokens", str(new)]
        ginfo = dict(info, gen=f"b={b} whisper gen_cfg={gen} args={args}")
        try:
            with torch.no_grad():
                want = fresh().generate(input_features=x, **kwargs)
        except Exception as e:  # transformers refuses: so must we
            want = e
        inp, out = path / "gen_in.safetensors", path / "gen_out.safetensors"
        save_file({"input_features": x}, str(inp))
        rc, err = self.cli(["generate", str(path), "--inputs", str(inp), "--output", str(out), "--dtype", "f32"] + args)
        if isinstance(want, IndexError):  # transformers' own crash on a row stripped empty (not a refusal)
            return
        if isinstance(want, Exception):
            if rc == 0:
                self.results.append((cid, family, "generate", f"transformers refused ({want}), we did not", ginfo))
            return
        if rc != 0:
            self.results.append((cid, family, "cli-error(generate)", err[-400:], ginfo))
            return
        got = load_file(str(out))["output_ids"]
        if got.shape != want.shape or not torch.equal(got, want.to(got.dtype)):
            self.results.append((cid, family, "generate", f"ours {got.tolist()} ref {want.tolist()}", ginfo))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(Path(__file__).resolve().parents[2] / "target" / "release" / "hf-import"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=10, help="cases per family")
    ap.add_argument("--family", default=",".join(FAMILIES), help="comma-separated: " + ",".join(FAMILIES))
    ap.add_argument("--keep", help="keep the checkpoints under this folder")
    ap.add_argument("--no-generate", action="store_true")
    a = ap.parse_args()
    families = [f for f in a.family.split(",") if f]
    for f in families:
        if f not in FAMILIES:
            ap.error(f"unknown family {f}")
    work = a.keep or tempfile.mkdtemp(prefix="oxtorch-diff-")
    Path(work).mkdir(parents=True, exist_ok=True)
    runner = Runner(os.path.abspath(a.bin), work, bool(a.keep))
    counts = {}
    for f in families:
        for i in range(a.cases):
            seed = a.seed * 100000 + i
            try:
                status, cid, msg = runner.case(f, seed, not a.no_generate)
            except Exception:
                status, cid, msg = "crash", f"{f}#{seed}", traceback.format_exc()[-600:]
            counts.setdefault(f, {}).setdefault(status, 0)
            counts[f][status] += 1
            if status != "ok":
                print(f"[{status}] {cid}: {msg}", flush=True)
            else:
                bad = [x for x in runner.results if x[0] == cid]
                print(f"[{'MISMATCH' if bad else 'ok'}] {cid}", flush=True)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("\n== cases:", json.dumps(counts))
    print(f"== {len(runner.results)} mismatches")
    for cid, family, kind, msg, info in runner.results:
        print(f"- {cid} [{kind}] {msg}")
        print(f"    {info['cls']} {info.get('variant')} inputs: {info['inputs']} {info.get('gen', '')}")
        print(f"    config diff: {json.dumps(info['diff'], default=str)}")
    sys.exit(min(len(runner.results), 255))


if __name__ == "__main__":
    main()
