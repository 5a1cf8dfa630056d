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

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import cut_charsmap, record_configs

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
    small = cut_charsmap(NLLB_TEXTS + CORPUS)
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
    record_configs(FIXTURES / "tokenizers" / "nllb_bpe.json", build(), CONFIGS, NLLB_TEXTS,
                   FIXTURES / "nllb_tokenizer_expected.json")


if __name__ == "__main__":
    main()
