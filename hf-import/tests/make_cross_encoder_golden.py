"""Dev-time script: two tiny sentence-transformers CrossEncoder checkpoints and their goldens.

Run with the reference environment (torch + transformers 5 + sentence-transformers 6, no network):

    /work/.refenv/bin/python hf-import/tests/make_cross_encoder_golden.py

Each fixture is a random tiny `BertForSequenceClassification` (vocab 100, hidden 32, 2 layers,
max_position_embeddings 64, weights drawn as in `make_fixtures.py`'s `randomise`) with the WordPiece
tokenizer of `fixtures/sentence_tiny`, saved by `CrossEncoder(..., max_length=24).save()` (so the
tokenizer_config.json carries `model_max_length: 24`, which is how max_length persists), in one of
the two layouts a CrossEncoder checkpoint comes in:

* `cross_encoder_bert`: 1 label, the Hub layout of sentence-transformers v4/v5 checkpoints
  (e.g. cross-encoder/ms-marco-MiniLM-L6-v2): no modules.json, the activation in config.json under
  `"sentence_transformers": {"activation_fn": ..., "version": ...}`, here Identity (as the
  ms-marco rerankers), not the 1-label default Sigmoid.
* `cross_encoder_multi`: 3 labels, the layout sentence-transformers 6 writes: modules.json,
  sentence_bert_config.json, and the activation in config_sentence_transformers.json
  (`"activation_fn"`), here Sigmoid, not the >1-label default Identity.

`expected.safetensors` in each holds what `sentence_transformers.CrossEncoder(dir)` gives for `PAIRS`:
`input_ids` / `attention_mask` / `token_type_ids` (int64, padded to the batch's longest, truncated
`longest_first` to 24), `logits` (float32 [n, num_labels], the classifier's raw output), `scores`
(`predict(PAIRS)` with default arguments: [n] for 1 label, [n, 3] for 3), and `scores_sigmoid`
(1 label: `predict(PAIRS, activation_fn=Sigmoid())`) or `scores_softmax` (3 labels:
`predict(PAIRS, apply_softmax=True)`, a softmax applied after the activation); its metadata holds
`pairs` (JSON).
"""

import json
import shutil
import sys
from pathlib import Path

import torch
import transformers as tf
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_fixtures import COMMON, labels, randomise  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures"
TOKENIZER = OUT / "sentence_tiny"
MAX_LENGTH = 24
EAGER = {"attn_implementation": "eager"}

# Mixed lengths (padding), capitals (lowercased by the normalizer), subwords (cats -> cat ##s), an
# unknown word, and two pairs over 24 tokens: one where only the second text is cut, one where
# `longest_first` cuts both.
PAIRS = [
    ["How do I bake bread?", "Bake bread at home."],
    ["The cat sits on the mat.", "Cats and dogs run under the table!"],
    ["zebra", "The sun"],
    ["What is Rust?", "Rust is a fast language, and Python is a slow language for code."],
    ["Red car", "one two three four five six seven eight nine ten one two three four five six seven eight nine ten"],
    [
        "The big red car and the small blue car with the happy man",
        "The sad woman plays the piano and the guitar on the stage at the city",
    ],
    ["A man plays the guitar.", "A woman reads books"],
]


def build(name, num_labels, seed, activation, hub_layout):
    from sentence_transformers import CrossEncoder

    head = labels("contradiction", "entailment", "neutral") if num_labels == 3 else dict(num_labels=1)
    config = tf.BertConfig(**COMMON, max_position_embeddings=64, type_vocab_size=2, **head, **EAGER)
    torch.manual_seed(seed)
    model = tf.BertForSequenceClassification(config).eval()
    randomise(model, seed)
    work, path = OUT / f"_{name}_hf", OUT / name
    for p in (work, path):
        shutil.rmtree(p, ignore_errors=True)
    model.save_pretrained(work)
    for f in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(TOKENIZER / f, work / f)
    ce = CrossEncoder(str(work), max_length=MAX_LENGTH, activation_fn=activation, device="cpu", model_kwargs=EAGER)
    ce.save(str(path))
    shutil.rmtree(work)
    for extra in ["README.md", "vocab.txt", "special_tokens_map.json"]:
        (path / extra).unlink(missing_ok=True)
    act_name = json.loads((path / "config_sentence_transformers.json").read_text())["activation_fn"]
    if hub_layout:
        # What v4/v5 `CrossEncoder.save` wrote: the HF files only, the activation inside config.json.
        for f in ["modules.json", "config_sentence_transformers.json", "sentence_bert_config.json"]:
            (path / f).unlink()
        cfg = json.loads((path / "config.json").read_text())
        cfg["sentence_transformers"] = {"activation_fn": act_name, "version": "5.1.0"}
        (path / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")

    # Everything below comes from sentence-transformers reloading the folder.
    ce = CrossEncoder(str(path), device="cpu", model_kwargs=EAGER)
    assert type(ce.activation_fn) is type(activation), (name, ce.activation_fn)
    assert ce.num_labels == num_labels and ce.max_seq_length == MAX_LENGTH, (ce.num_labels, ce.max_seq_length)
    batch = ce.preprocess(PAIRS)
    x = {k: batch[k].contiguous() for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        logits = ce.model(**x).logits.float().contiguous()
    scores = torch.from_numpy(ce.predict(PAIRS)).float().contiguous()
    identity = torch.from_numpy(ce.predict(PAIRS, activation_fn=torch.nn.Identity()))
    assert torch.allclose(identity, logits.squeeze(-1) if num_labels == 1 else logits, atol=1e-6)
    out = {**x, "logits": logits, "scores": scores}
    if num_labels == 1:
        out["scores_sigmoid"] = torch.from_numpy(ce.predict(PAIRS, activation_fn=torch.nn.Sigmoid())).contiguous()
    else:
        out["scores_softmax"] = torch.from_numpy(ce.predict(PAIRS, apply_softmax=True)).contiguous()
    # A single pair gives that row alone (a 0-d value for 1 label, [num_labels] for more).
    single = ce.predict(PAIRS[0])
    assert single.shape == scores.shape[1:] and torch.allclose(torch.as_tensor(single), scores[0], atol=1e-6)
    # The default (sdpa) attention agrees.
    sdpa = CrossEncoder(str(path), device="cpu").predict(PAIRS)
    assert torch.allclose(torch.from_numpy(sdpa), scores, atol=1e-5)
    # One metadata key only: safetensors writes several in a random order, so reruns would differ.
    save_file(out, str(path / "expected.safetensors"), metadata={"pairs": json.dumps(PAIRS)})
    size = sum(f.stat().st_size for f in path.iterdir())
    print(f"{name}: {sorted(p.name for p in path.iterdir())} {size} bytes; ids {tuple(x['input_ids'].shape)}")


def build_deberta(name="cross_encoder_deberta", seed=33):
    """An NLI cross-encoder as cross-encoder/nli-deberta-v3-* ships it: `DebertaV2ForSequenceClassification`
    (v3's relative attention, 3 labels, no activation: Identity) and the DeBERTa tokenizer from `spm.model`
    alone (`fixtures/tokenizers/deberta_spm.model`, with the hub's special_tokens_map.json and
    added_tokens.json), max_length 24. Its golden is what sentence-transformers gives, as `build`'s."""
    from sentence_transformers import CrossEncoder

    config = tf.DebertaV2Config(**dict(COMMON, vocab_size=141), max_position_embeddings=64, type_vocab_size=0,
                                relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8,
                                max_relative_positions=16, norm_rel_ebd="layer_norm", share_att_key=True,
                                position_biased_input=False, **labels("contradiction", "entailment", "neutral"))
    torch.manual_seed(seed)
    model = tf.DebertaV2ForSequenceClassification(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    specials = dict(bos_token="[CLS]", eos_token="[SEP]", unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                    cls_token="[CLS]", mask_token="[MASK]")
    shutil.copy(OUT / "tokenizers" / "deberta_spm.model", path / "spm.model")
    (path / "tokenizer_config.json").write_text(json.dumps(
        {"do_lower_case": False, "vocab_type": "spm", "model_max_length": MAX_LENGTH}))
    (path / "special_tokens_map.json").write_text(json.dumps(specials))
    (path / "added_tokens.json").write_text(json.dumps({"[MASK]": 140}))
    ce = CrossEncoder(str(path), device="cpu", model_kwargs=EAGER)
    assert type(ce.activation_fn) is torch.nn.Identity and ce.max_seq_length == MAX_LENGTH, ce.activation_fn
    assert type(ce.tokenizer).__name__ == "DebertaV2Tokenizer", type(ce.tokenizer)
    batch = ce.preprocess(PAIRS)
    x = {k: batch[k].contiguous() for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        logits = ce.model(**x).logits.float().contiguous()
    scores = torch.from_numpy(ce.predict(PAIRS)).float().contiguous()
    assert torch.allclose(scores, logits, atol=1e-6)
    out = {**x, "logits": logits, "scores": scores,
           "scores_softmax": torch.from_numpy(ce.predict(PAIRS, apply_softmax=True)).contiguous()}
    save_file(out, str(path / "expected.safetensors"), metadata={"pairs": json.dumps(PAIRS)})
    size = sum(f.stat().st_size for f in path.iterdir())
    print(f"{name}: {sorted(p.name for p in path.iterdir())} {size} bytes; ids {tuple(x['input_ids'].shape)}")


if __name__ == "__main__":
    build("cross_encoder_bert", 1, 31, torch.nn.Identity(), hub_layout=True)
    build("cross_encoder_multi", 3, 32, torch.nn.Sigmoid(), hub_layout=False)
    build_deberta()
