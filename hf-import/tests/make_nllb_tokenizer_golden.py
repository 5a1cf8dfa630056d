"""Dev-time script: transformers 5's ids for an NLLB-200-style BPE `tokenizer.json` under several
`tokenizer_config.json`s (transformers 5 rebuilds the pipeline for `NllbTokenizer`).

    /work/.refenv/bin/python hf-import/tests/make_nllb_tokenizer_golden.py

Writes
- `fixtures/tokenizers/nllb_bpe.json`: a small BPE trained on `make_xlmr_tokenizer_golden.py`'s
  corpus, laid out as facebook/nllb-200's file: normalizer Sequence[Precompiled (that script's
  small charsmap), Replace(" {2,}", " ")], Metaspace (always) pre-tokenizer and decoder, `<s> <pad>
  </s> <unk>` first, then language codes and `<mask>` (lstrip, normalized) as added tokens, and
  the older suffix template `$A </s> eng_Latn` (transformers 5 replaces it).
- `fixtures/nllb_tokenizer_expected.json`: laid out as `llama_v5_tokenizer_expected.json` ("texts",
  "configs", "ids" with "plain", "special" and "batch" per config).
"""

import base64
import glob
import json
import tempfile
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CHARSMAP, CORPUS, TEXTS, subset_charsmap

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
CODES = ["eng_Latn", "fra_Latn", "deu_Latn", "zho_Hans"]
NLLB_TEXTS = TEXTS + ["fra_Latn Bonjour", "a <mask>b", "x</s>y eng_Latn"]
HUB = dict(bos_token="<s>", cls_token="<s>", eos_token="</s>", sep_token="</s>", mask_token="<mask>",
           pad_token="<pad>", unk_token="<unk>", model_max_length=1024, additional_special_tokens=CODES,
           src_lang=None, tgt_lang=None, legacy_behaviour=False, clean_up_tokenization_spaces=True)
CONFIGS = {
    "nllb": HUB | {"tokenizer_class": "NllbTokenizer"},
    "nllb_fast_fra": HUB | {"tokenizer_class": "NllbTokenizerFast", "src_lang": "fra_Latn"},
    "nllb_legacy_deu": HUB | {"tokenizer_class": "NllbTokenizer", "src_lang": "deu_Latn", "legacy_behaviour": True},
    # The generic class uses the file as it is.
    "fast_generic": HUB | {"tokenizer_class": "PreTrainedTokenizerFast"},
}


def build():
    paths = sorted(glob.glob(CHARSMAP))
    if not paths:
        raise SystemExit(f"no SentencePiece charsmap at {CHARSMAP} (the spm_precompiled crate's test.json)")
    full = base64.b64decode(json.loads(Path(paths[-1]).read_text())["precompiled_charsmap"])
    small, _ = subset_charsmap(full, NLLB_TEXTS + CORPUS)
    for text in NLLB_TEXTS + CORPUS:
        assert normalizers.Precompiled(small).normalize_str(text) == normalizers.Precompiled(full).normalize_str(text)
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(small), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=220, special_tokens=SPECIALS, show_progress=False))
    data = json.loads(tok.to_str())
    n = len(data["model"]["vocab"])
    added = [(i, t, False) for i, t in enumerate(SPECIALS)] + [(n + i, c, False) for i, c in enumerate(CODES)]
    added.append((n + len(CODES), "<mask>", True))
    for i, t, _ in added[len(SPECIALS):]:
        data["model"]["vocab"][t] = i
    data["added_tokens"] = [dict(id=i, content=t, single_word=False, lstrip=m, rstrip=False, normalized=m, special=True)
                            for i, t, m in added]
    data["post_processor"] = json.loads(processors.TemplateProcessing(
        single="$A </s> eng_Latn", pair="$A $B </s> eng_Latn",
        special_tokens=[("</s>", 2), ("eng_Latn", n)]).__getstate__())
    Tokenizer.from_str(json.dumps(data))  # loads in the library
    return data


def main():
    data = build()
    tok_path = FIXTURES / "tokenizers" / "nllb_bpe.json"
    tok_path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    decoder = {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in data["added_tokens"]}
    configs = {name: {"added_tokens_decoder": decoder} | cfg for name, cfg in CONFIGS.items()}
    out = {"texts": NLLB_TEXTS, "configs": configs, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in configs.items():
            folder = Path(root) / name
            folder.mkdir()
            (folder / "tokenizer.json").write_text(tok_path.read_text(encoding="utf-8"), encoding="utf-8")
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
            tok = AutoTokenizer.from_pretrained(folder)
            batch = tok(NLLB_TEXTS, padding=True)
            out["ids"][name] = {
                "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in NLLB_TEXTS],
                "special": [tok(t)["input_ids"] for t in NLLB_TEXTS],
                "batch": {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]},
                "decoded": [tok.decode(tok(t)["input_ids"], skip_special_tokens=True) for t in NLLB_TEXTS],
            }
            print(name, type(tok).__name__, out["ids"][name]["special"][0], out["ids"][name]["plain"][2])
    (FIXTURES / "nllb_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
