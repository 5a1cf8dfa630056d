"""Dev-time script: transformers 5's ids for Llama tokenizer folders that hold a SentencePiece
`tokenizer.model` and no `tokenizer.json` (older Llama 2 fine-tunes, OpenLLaMA, Vicuna), under several
`tokenizer_config.json`s. transformers 5 builds the tokenizer from the model's pieces (a BPE with
merges generated from the piece order) and rebuilds the class's pipeline.

    /work/.refenv/bin/python hf-import/tests/make_spm_tokenizer_golden.py

Writes
- `fixtures/tokenizers/llama_bpe.model`: a small SentencePiece BPE (byte fallback, a user-defined
  symbol) trained on `make_xlmr_tokenizer_golden.py`'s corpus;
- `fixtures/spm_tokenizer_expected.json`: laid out as `llama_v5_tokenizer_expected.json` ("texts",
  "configs", "ids" with "plain", "special", "batch" and "decoded" per config).
"""

import io
import json
import tempfile
from pathlib import Path

import sentencepiece as spm
from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CORPUS, TEXTS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPM_TEXTS = TEXTS + ["<s>Hello</s>", "a <sep> b", "tab\t\tand  spaces", "Ünïcödé 😀 ok", "a tensor of tensors <pad>"]
BASE = dict(tokenizer_class="LlamaTokenizer", bos_token="<s>", eos_token="</s>", unk_token="<unk>",
            pad_token=None, model_max_length=2048, clean_up_tokenization_spaces=False)
CONFIGS = {
    "llama": BASE | {"add_bos_token": True, "add_eos_token": False, "legacy": False},
    "llama_legacy_eos": BASE | {"add_bos_token": True, "add_eos_token": True, "legacy": True},
    "llama_no_prefix": BASE | {"add_bos_token": True, "legacy": False, "add_prefix_space": False},
    "llama_defaults": BASE,
    "llama_fast_unk_pad": BASE | {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True, "pad_token": "<unk>"},
    # A pad token of its own past the model's pieces, and a plain added word.
    "llama_added": BASE | {"add_bos_token": True, "pad_token": "<pad>", "added_tokens_decoder": {
        "360": {"content": "<pad>", "special": True, "normalized": False, "lstrip": False, "rstrip": False,
                "single_word": False},
        "361": {"content": "tensor", "special": False, "normalized": False, "lstrip": False, "rstrip": False,
                "single_word": False}}},
}


def main():
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=model, model_type="bpe",
                                   vocab_size=360, byte_fallback=True, character_coverage=1.0,
                                   user_defined_symbols=["<sep>"], unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   num_threads=1, minloglevel=2)
    path = FIXTURES / "tokenizers" / "llama_bpe.model"
    path.write_bytes(model.getvalue())
    out = {"texts": SPM_TEXTS, "configs": CONFIGS, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in CONFIGS.items():
            folder = Path(root) / name
            folder.mkdir()
            (folder / "tokenizer.model").write_bytes(path.read_bytes())
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
            tok = AutoTokenizer.from_pretrained(folder)
            batch = tok(SPM_TEXTS, padding=True) if tok.pad_token is not None else None
            out["ids"][name] = {
                "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in SPM_TEXTS],
                "special": [tok(t)["input_ids"] for t in SPM_TEXTS],
                "batch": batch and {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]},
                "decoded": [tok.decode(tok(t)["input_ids"], skip_special_tokens=True) for t in SPM_TEXTS],
            }
            print(name, type(tok).__name__, out["ids"][name]["special"][0], out["ids"][name]["plain"][2])
    (FIXTURES / "spm_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
