"""Dev-time script: transformers 5's `LlamaTokenizer` on the old-style Llama 2 `tokenizer.json`
fixture (its normalizer prepends `▁` to every piece; transformers 5 rebuilds the pipeline with a
`Metaspace` pre-tokenizer instead), under three `tokenizer_config.json`s.

    /work/.refenv/bin/python hf-import/tests/make_llama_tokenizer_golden.py

Writes `fixtures/llama_v5_tokenizer_expected.json`: the configs, the texts (with special tokens
between pieces, as chat templates write them, and leading spaces) and transformers' ids without and
with special tokens, and the texts as one padded batch; `tokenizer/llama.rs`'s test replays them.
`GemmaTokenizer` folders too (it rebuilds its pipeline as well, and pads on the left).
"""

import json
import shutil
import tempfile
from pathlib import Path

from transformers import AutoTokenizer

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tokenizers"
CONFIGS = {
    "default": {"tokenizer_class": "LlamaTokenizer"},
    "legacy": {"tokenizer_class": "LlamaTokenizer", "legacy": True},
    "no_prefix_space": {"tokenizer_class": "LlamaTokenizer", "add_prefix_space": False},
    "llama_model": {"tokenizer_class": "LlamaTokenizer"},
    # transformers 5 uses the file as it is for these: Mistral's and Phi-3's model types map to
    # its generic backend, and a folder naming no class gets it too.
    "mistral_model": {"tokenizer_class": "LlamaTokenizer"},
    "phi3_model": {"tokenizer_class": "LlamaTokenizer"},
    "no_class": {},
    # `GemmaTokenizer` rebuilds its pipeline too (no `▁` prepended) and pads on the left with `<pad>`,
    # which it adds to this vocabulary.
    "gemma": {"tokenizer_class": "GemmaTokenizer"},
    "gemma_right": {"tokenizer_class": "GemmaTokenizerFast", "padding_side": "right"},
    "gemma3_model_no_class": {},
}
# `config.json`'s model type per case (none: no config.json).
MODEL_TYPES = {"llama_model": "llama", "mistral_model": "mistral", "phi3_model": "phi3", "no_class": "llama",
               "gemma3_model_no_class": "gemma3_text"}
TEXTS = ["The quick fox", "</s>The quick fox</s> jumps", " leading space", "<s>Pack my box</s>"]


def main():
    out = {"configs": CONFIGS, "model_types": MODEL_TYPES, "texts": TEXTS, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in CONFIGS.items():
            folder = Path(root) / name
            folder.mkdir()
            shutil.copy(FIXTURES / "bpe_llama2_byte_fallback.json", folder / "tokenizer.json")
            cfg = dict(config, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
            (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
            if name in MODEL_TYPES:
                (folder / "config.json").write_text(json.dumps({"model_type": MODEL_TYPES[name]}))
            tok = AutoTokenizer.from_pretrained(folder)
            # (A tokenizer without a pad token cannot pad: no batch then.)
            batch = tok(TEXTS, padding=True) if tok.pad_token is not None else None
            out["ids"][name] = {
                "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in TEXTS],
                "special": [tok(t)["input_ids"] for t in TEXTS],
                "batch": batch and {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]},
            }
            print(name, type(tok).__name__, out["ids"][name]["plain"][1])
    (FIXTURES.parent / "llama_v5_tokenizer_expected.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
