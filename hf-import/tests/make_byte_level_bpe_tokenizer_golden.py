"""Dev-time script: transformers 5's ids and texts for byte-level BPE tokenizer folders that hold
`vocab.json` and `merges.txt` but no `tokenizer.json` (OPT's checkpoints, older GPT-2, RoBERTa and BART
fine-tunes). transformers 5 builds `GPT2Tokenizer` (a BPE behind a byte-level pre-tokenizer, special tokens
per `add_bos_token` / `add_eos_token`), `RobertaTokenizer` / `BartTokenizer` (the same with RoBERTa's
`<s> A </s></s> B </s>` framing), `BlenderbotTokenizer` or `DebertaTokenizer` from them.

    /work/.refenv/bin/python hf-import/tests/make_byte_level_bpe_tokenizer_golden.py

Writes
- `fixtures/tokenizers/byte_level_bpe/vocab.json`, `merges.txt`: a small byte-level BPE trained with the
  `tokenizers` library on `make_xlmr_tokenizer_golden.py`'s corpus, RoBERTa's special tokens first and
  GPT-2's `<|endoftext|>` after them;
- `fixtures/byte_level_bpe_tokenizer_expected.json`: "texts", "pairs", "configs" (tokenizer_config.json),
  "model_types" (config.json's, where one is written), "special_tokens_maps" (special_tokens_map.json,
  where one is written) and per config "plain", "special", "batch", "decoded" and "pairs" (the pairs'
  ids, padded).
"""

import json
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import lay_out, record

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OUT = FIXTURES / "tokenizers" / "byte_level_bpe"
BPE_TEXTS = TEXTS + ["<s>Hello</s>", "a <mask> b<pad>", "<|endoftext|>x<|endoftext|>", "  two  spaces", "oxtorch!"]
PAIRS = [["Hello world", "how are you?"], ["a", " b <mask>"]]
GPT2 = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>", model_max_length=1024)
ROBERTA = dict(bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>", unk_token="<unk>",
               pad_token="<pad>", mask_token="<mask>", model_max_length=512)
CONFIGS = {
    "gpt2": GPT2 | {"tokenizer_class": "GPT2Tokenizer"},
    # As OPT's checkpoints: </s> for everything, <s>-less BOS added, a pad token.
    "opt": {"errors": "replace", "unk_token": "</s>", "bos_token": "</s>", "eos_token": "</s>", "pad_token": "<pad>",
            "add_prefix_space": False, "add_bos_token": True},
    "gpt2_prefix_space": GPT2 | {"tokenizer_class": "GPT2TokenizerFast", "add_prefix_space": True,
                                 "pad_token": "<|endoftext|>", "add_eos_token": True},
    "roberta": ROBERTA | {"tokenizer_class": "RobertaTokenizer", "add_prefix_space": False, "trim_offsets": True},
    "roberta_by_model_type": {},
    # A word of its own past the vocabulary.
    "bart": ROBERTA | {"tokenizer_class": "BartTokenizerFast", "added_tokens_decoder": {
        "305": {"content": "oxtorch", "special": False, "normalized": False, "lstrip": False, "rstrip": False,
                "single_word": False}}},
    # As transformers 4.x saved them: the mask token an AddedToken object that strips the space before it.
    "roberta_4x": ROBERTA | {"tokenizer_class": "RobertaTokenizer", "mask_token": {
        "__type": "AddedToken", "content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False,
        "single_word": False}},
    # Blenderbot (transformers 5 frames its texts with nothing here): a prefix space, <mask> stripping the space
    # before it; by model type.
    "blenderbot": ROBERTA | {"tokenizer_class": "BlenderbotTokenizer"},
    "blenderbot_by_model_type": {"add_prefix_space": False},
    # DeBERTa v1 (BERT's special tokens, past this vocabulary): by class, and by model type.
    "deberta": {"tokenizer_class": "DebertaTokenizer", "do_lower_case": False, "model_max_length": 512},
    "deberta_by_model_type": {},
}
# A GPT-2 fine-tune saved by transformers 4.x: its pad token only in special_tokens_map.json (read when the config
# declares no added_tokens_decoder, winning over the config's tokens).
CONFIGS["gpt2_legacy_map"] = GPT2 | {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<s>"}
MODEL_TYPES = {"opt": "opt", "roberta_by_model_type": "roberta", "blenderbot_by_model_type": "blenderbot",
               "deberta_by_model_type": "deberta"}
SPECIAL_TOKENS_MAPS = {"roberta_by_model_type": {k: v for k, v in ROBERTA.items() if k != "model_max_length"},
                       "gpt2_legacy_map": {"pad_token": "<|endoftext|>", "bos_token": "<|endoftext|>",
                                           "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainer=trainers.BpeTrainer(
        show_progress=False, vocab_size=305, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model = json.loads(tok.to_str())["model"]
    assert len(model["vocab"]) == 305, len(model["vocab"])
    (OUT / "vocab.json").write_text(json.dumps(model["vocab"], ensure_ascii=False) + "\n", encoding="utf-8")
    merges = ["#version: 0.2"] + [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    (OUT / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    out = {"texts": BPE_TEXTS, "pairs": PAIRS, "configs": CONFIGS, "model_types": MODEL_TYPES,
           "special_tokens_maps": SPECIAL_TOKENS_MAPS, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in CONFIGS.items():
            folder = lay_out(root, name, OUT, ["vocab.json", "merges.txt"], config, MODEL_TYPES.get(name),
                             SPECIAL_TOKENS_MAPS.get(name))
            tok = AutoTokenizer.from_pretrained(folder)
            ids = record(tok, BPE_TEXTS)
            if tok.pad_token is not None:
                pairs = tok([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True)
                ids["pairs"] = {"input_ids": pairs["input_ids"], "attention_mask": pairs["attention_mask"]}
            out["ids"][name] = ids
            print(name, type(tok).__name__, ids["special"][0], ids["special"][-5:], ids.get("pairs"))
    (FIXTURES / "byte_level_bpe_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
