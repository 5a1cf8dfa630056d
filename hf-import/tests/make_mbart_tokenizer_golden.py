"""Dev-time script: transformers 5's ids for an mBART-style Unigram `tokenizer.json` under
`MBartTokenizer` (mbart-large-cc25) and `MBart50Tokenizer` (mbart-large-50) configs; transformers 5
rebuilds both classes' pipelines.

    /work/.refenv/bin/python hf-import/tests/make_mbart_tokenizer_golden.py

Writes
- `fixtures/tokenizers/mbart_unigram.json`: a small Unigram trained on `make_xlmr_tokenizer_golden.py`'s
  corpus, laid out as the mBART files: `<s> <pad> </s> <unk>` first, the fairseq language codes and
  `<mask>` as added tokens, normalizer Sequence[Precompiled (that script's cut charsmap), Replace(" {2,}",
  " ")], Metaspace (always), the template `$A </s> en_XX`;
- `fixtures/mbart_tokenizer_expected.json`: laid out as `nllb_tokenizer_expected.json`.
"""

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers.models.mbart50.tokenization_mbart50 import FAIRSEQ_LANGUAGE_CODES

from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import cut_charsmap, record_configs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
MBART_TEXTS = TEXTS + ["fr_XX Bonjour", "a <mask>b", "x</s>y en_XX", "  two  spaces  ", "ＡＢＣ ①"]
HUB = dict(bos_token="<s>", cls_token="<s>", eos_token="</s>", sep_token="</s>", mask_token="<mask>",
           pad_token="<pad>", unk_token="<unk>", model_max_length=1024, src_lang=None, tgt_lang=None)
CONFIGS = {
    "mbart": HUB | {"tokenizer_class": "MBartTokenizer"},
    "mbart_fr": HUB | {"tokenizer_class": "MBartTokenizerFast", "src_lang": "fr_XX"},
    "mbart50": HUB | {"tokenizer_class": "MBart50Tokenizer"},
    "mbart50_de": HUB | {"tokenizer_class": "MBart50TokenizerFast", "src_lang": "de_DE"},
}


def build():
    small = cut_charsmap(MBART_TEXTS + CORPUS)
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(small), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.train_from_iterator(CORPUS, trainers.UnigramTrainer(
        vocab_size=200, special_tokens=SPECIALS, unk_token="<unk>", show_progress=False))
    data = json.loads(tok.to_str())
    pieces = sorted((p, round(s, 6)) for p, s in data["model"]["vocab"][len(SPECIALS):])
    extra = [[c, 0.0] for c in FAIRSEQ_LANGUAGE_CODES] + [["<mask>", 0.0]]
    data["model"]["vocab"][len(SPECIALS):] = sorted(pieces, key=lambda p: -p[1]) + extra
    n = len(data["model"]["vocab"])
    data["model"]["unk_id"] = 3
    data["added_tokens"] = [dict(id=i, content=t, single_word=False, lstrip=False, rstrip=False, normalized=False,
                                 special=True) for i, t in enumerate(SPECIALS)]
    data["added_tokens"] += [dict(id=n - len(extra) + i, content=t, single_word=False, lstrip=t == "<mask>",
                                  rstrip=False, normalized=False, special=True) for i, (t, _) in enumerate(extra)]
    en = data["model"]["vocab"].index(["en_XX", 0.0])
    data["post_processor"] = json.loads(processors.TemplateProcessing(
        single="$A </s> en_XX", pair="$A $B </s> en_XX", special_tokens=[("</s>", 2), ("en_XX", en)]).__getstate__())
    Tokenizer.from_str(json.dumps(data))
    return data


def main():
    record_configs(FIXTURES / "tokenizers" / "mbart_unigram.json", build(), CONFIGS, MBART_TEXTS,
                   FIXTURES / "mbart_tokenizer_expected.json", shown=-2)


if __name__ == "__main__":
    main()
