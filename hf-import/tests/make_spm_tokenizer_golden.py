"""Dev-time script: transformers 5's ids for Llama tokenizer folders that hold a SentencePiece
`tokenizer.model` and no `tokenizer.json` (older Llama 2 fine-tunes, OpenLLaMA, Vicuna), and for T5
folders that hold a `spiece.model` alone (google/t5-v1_1-*, google/mt5-*), under several
`tokenizer_config.json`s. transformers 5 builds the tokenizer from the model's pieces (a BPE with
merges generated from the piece order; a Unigram with the sentinels appended) and rebuilds the
class's pipeline.

    /work/.refenv/bin/python hf-import/tests/make_spm_tokenizer_golden.py

Writes
- `fixtures/tokenizers/llama_bpe.model`: a small SentencePiece BPE (byte fallback, a user-defined
  symbol) trained on `make_xlmr_tokenizer_golden.py`'s corpus;
- `fixtures/tokenizers/t5_unigram.model`: a small SentencePiece Unigram (T5's layout: pad, eos, unk
  first; a user-defined symbol), its nmt_nfkc charsmap cut to the entries the texts reach (as
  `make_xlmr_tokenizer_golden.py` cuts it; checked to normalize every text as the full one), also read
  by Pegasus configs;
- `fixtures/tokenizers/fairseq_unigram.model` (fairseq's layout: unk, bos, eos first) and
  `fixtures/tokenizers/albert_unigram.model` (ALBERT's: pad, unk, [CLS], [SEP], [MASK]): Unigrams
  cut alike, under XLM-R, CamemBERT and ALBERT configs;
- `fixtures/spm_tokenizer_expected.json`: laid out as `llama_v5_tokenizer_expected.json` ("texts",
  "configs", "ids" with "plain", "special", "batch" and "decoded" per config), plus "files" (the
  model file of each config) and "model_types" (config.json's, where one is written).
"""

import io
import json
import tempfile
from pathlib import Path

import sentencepiece as spm
from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import record, trained_spm

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


T5_BASE = dict(eos_token="</s>", unk_token="<unk>", pad_token="<pad>", model_max_length=512)
T5_CONFIGS = {
    "t5": T5_BASE | {"tokenizer_class": "T5Tokenizer", "extra_ids": 100},
    "t5_three_sentinels": T5_BASE | {"tokenizer_class": "T5TokenizerFast", "extra_ids": 3},
    "mt5_by_model_type": T5_BASE | {"extra_ids": 5},
}
T5_TEXTS = SPM_TEXTS + ["fill <extra_id_0> and <extra_id_2>.", "ＡＢＣ ① ﬁ x</s>", "<pad> <unk>",
                        "<mask_1> and <mask_2> <unk_2><unk_9>", "line\nbreak"]
# Pegasus over the same Unigram (its layout: pad, eos, unk first): the masks and the `<unk_i>` fillers put before the
# pieces, offset 103 unless configured.
PEGASUS_BASE = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=512)
PEGASUS_CONFIGS = {
    "pegasus": PEGASUS_BASE | {"tokenizer_class": "PegasusTokenizer"},
    # As google/pegasus-* save it: the masks named, the fillers listed.
    "pegasus_hub": PEGASUS_BASE | {"tokenizer_class": "PegasusTokenizer", "mask_token": "<mask_2>",
                                   "mask_token_sent": "<mask_1>", "offset": 103,
                                   "additional_special_tokens": ["<mask_1>"] + [f"<unk_{i}>" for i in range(2, 103)]},
    "pegasus_offset_by_model_type": {"offset": 6},
}
PEGASUS_MODEL_TYPES = {"pegasus_offset_by_model_type": "pegasus"}
# XLM-R's, CamemBERT's and ALBERT's classes over SentencePiece Unigrams in their layouts (fairseq's `<unk>`, `<s>`,
# `</s>` first, in `sentencepiece.bpe.model`; ALBERT's `<pad>`, `<unk>`, `[CLS]`, `[SEP]`, `[MASK]`, in
# `spiece.model`): transformers 5 reorders the pieces per class (`convert_from_spm`) and builds its pipeline.
FAIRSEQ_MODEL = "tokenizers/fairseq_unigram.model"
ALBERT_MODEL = "tokenizers/albert_unigram.model"
CLASS_CONFIGS = {
    "xlmr_spm": ({"tokenizer_class": "XLMRobertaTokenizer", "model_max_length": 512}, FAIRSEQ_MODEL,
                 "sentencepiece.bpe.model", None),
    "xlmr_spm_by_model_type": ({"add_prefix_space": False}, FAIRSEQ_MODEL, "sentencepiece.bpe.model", "xlm-roberta"),
    "camembert_spm": ({"tokenizer_class": "CamembertTokenizer"}, FAIRSEQ_MODEL, "sentencepiece.bpe.model", None),
    "albert_spm": ({"tokenizer_class": "AlbertTokenizer", "do_lower_case": True, "keep_accents": False},
                   ALBERT_MODEL, "spiece.model", None),
    "albert_spm_cased": ({"tokenizer_class": "AlbertTokenizerFast", "do_lower_case": False, "keep_accents": True},
                         ALBERT_MODEL, "spiece.model", None),
    "albert_spm_by_model_type": ({}, ALBERT_MODEL, "spiece.model", "albert"),
}


def t5_model():
    """The Unigram model, its charsmap cut to what the texts reach."""
    return trained_spm(CORPUS, T5_TEXTS + CORPUS, model_type="unigram", vocab_size=140, user_defined_symbols=["<sep>"],
                       pad_id=0, eos_id=1, unk_id=2, bos_id=-1)[0]


def main():
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=model, model_type="bpe",
                                   vocab_size=360, byte_fallback=True, character_coverage=1.0,
                                   user_defined_symbols=["<sep>"], unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   num_threads=1, minloglevel=2)
    path = FIXTURES / "tokenizers" / "llama_bpe.model"
    path.write_bytes(model.getvalue())
    t5_path = FIXTURES / "tokenizers" / "t5_unigram.model"
    t5_path.write_bytes(t5_model())
    (FIXTURES / FAIRSEQ_MODEL).write_bytes(
        trained_spm(CORPUS, T5_TEXTS + CORPUS, model_type="unigram", vocab_size=140, unk_id=0, bos_id=1, eos_id=2,
                    pad_id=-1)[0])
    (FIXTURES / ALBERT_MODEL).write_bytes(
        trained_spm(CORPUS, T5_TEXTS + CORPUS, model_type="unigram", vocab_size=140, pad_id=0, unk_id=1, bos_id=-1,
                    eos_id=-1, control_symbols=["[CLS]", "[SEP]"], user_defined_symbols=["[MASK]"])[0])
    configs = CONFIGS | T5_CONFIGS | PEGASUS_CONFIGS | {name: c[0] for name, c in CLASS_CONFIGS.items()}
    out = {"texts": T5_TEXTS, "configs": configs, "ids": {}, "files": {}, "model_types": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in configs.items():
            folder = Path(root) / name
            folder.mkdir()
            t5 = name in T5_CONFIGS or name in PEGASUS_CONFIGS
            file = "spiece.model" if t5 else "tokenizer.model"
            source = t5_path if t5 else path
            if name in CLASS_CONFIGS:
                _, model, file, model_type = CLASS_CONFIGS[name]
                source = FIXTURES / model
                if model_type:
                    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
                    out["model_types"][name] = model_type
            (folder / file).write_bytes(source.read_bytes())
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
            out["files"][name] = f"tokenizers/{source.name}:{file}"
            model_type = {"mt5_by_model_type": "mt5"} | PEGASUS_MODEL_TYPES
            if name in model_type:
                out["model_types"][name] = model_type[name]
                (folder / "config.json").write_text(json.dumps({"model_type": model_type[name]}))
            tok = AutoTokenizer.from_pretrained(folder)
            out["ids"][name] = record(tok, T5_TEXTS)
            print(name, type(tok).__name__, out["ids"][name]["special"][0], out["ids"][name]["plain"][-3])
    (FIXTURES / "spm_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
