"""Dev-time script: transformers 5's ids and texts for M2M100 tokenizer folders (facebook/m2m100_418M,
m2m100_1.2B, wmt21-dense-24-wide-*), which hold no `tokenizer.json` but a SentencePiece BPE
(`sentencepiece.bpe.model`) and fairseq's dictionary as `vocab.json`. `M2M100Tokenizer` cuts a text with
the model and looks each piece up in the dictionary (the unknown token for pieces it lacks), the
language tokens `__xx__` numbered after it; texts are framed `__src__ A </s>`; decoding joins the pieces
between special tokens as the model does.

    /work/.refenv/bin/python hf-import/tests/make_m2m100_tokenizer_golden.py

Writes
- `fixtures/tokenizers/m2m100/sentencepiece.bpe.model`: a small SentencePiece BPE trained on
  `make_xlmr_tokenizer_golden.py`'s corpus, its nmt_nfkc charsmap cut to the entries the texts reach
  (checked to normalize every text as the full one);
- `fixtures/tokenizers/m2m100/vocab.json`: fairseq's layout (`<s>`, `<pad>`, `</s>`, `<unk>`, then the
  pieces in an order of their own);
- `fixtures/m2m100_tokenizer_expected.json`: "texts", "configs" (tokenizer_config.json; config.json's
  model type where the class is not named: "model_types"; special_tokens_map.json where one is written:
  "special_tokens_maps") and per config "plain", "special", "batch",
  "decoded" (skipping special tokens), "decoded_raw" (keeping them), "decode_ids"/"decoded_ids" (ids
  around language tokens) and "french" (the texts' ids with the source language set to `fr` later).
"""

import json
import random
import tempfile
from pathlib import Path

from transformers import AutoTokenizer
from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import lay_out, record, trained_spm

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OUT = FIXTURES / "tokenizers" / "m2m100"
M2M_TEXTS = TEXTS + ["__fr__ Hello", "Hello __de__ world", "<s> x </s>", "a <pad> b <unk> c", "€ 5 and 漢字 ok",
                     "Größe", "  spaced   out  ", "Ａ\u0301A x\u3000\u0301y ▁\u0301h"]
BASE = dict(bos_token="<s>", eos_token="</s>", sep_token="</s>", pad_token="<pad>", unk_token="<unk>",
            language_codes="m2m100", num_madeup_words=8, model_max_length=1024)
CONFIGS = {
    "m2m100": BASE | {"tokenizer_class": "M2M100Tokenizer", "src_lang": None, "tgt_lang": None},
    # WMT21's eight languages, German as the source.
    "m2m100_wmt21": BASE | {"tokenizer_class": "M2M100Tokenizer", "language_codes": "wmt21", "src_lang": "de",
                            "tgt_lang": "en"},
    # No class named (config.json's model type picks it), the source language set.
    "m2m100_by_model_type": BASE | {"src_lang": "ja"},
}
MODEL_TYPES = {"m2m100_by_model_type": "m2m_100"}
# As the hub's folders: the language tokens listed in `special_tokens_map.json` (read when the config declares no
# `added_tokens_decoder`), which makes them special tokens texts may hold.
CONFIGS["m2m100_hub"] = BASE | {"tokenizer_class": "M2M100Tokenizer", "src_lang": None, "tgt_lang": None}
SPECIAL_TOKENS_MAPS = {"m2m100_hub": dict(
    bos_token="<s>", eos_token="</s>", sep_token="</s>", pad_token="<pad>", unk_token="<unk>",
    additional_special_tokens=[f"__{code}__" for code in FAIRSEQ_LANGUAGE_CODES["m2m100"]])}


def model():
    """The BPE model, its charsmap cut to what the texts reach."""
    return trained_spm(CORPUS, M2M_TEXTS + CORPUS, model_type="bpe", vocab_size=200, unk_id=0, bos_id=1, eos_id=2,
                       pad_id=-1)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    spm_model, pieces = model()
    (OUT / "sentencepiece.bpe.model").write_bytes(spm_model)
    random.Random(11).shuffle(pieces)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for piece in pieces:
        vocab[piece] = len(vocab)
    (OUT / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    out = {"texts": M2M_TEXTS, "configs": CONFIGS, "model_types": MODEL_TYPES,
           "special_tokens_maps": SPECIAL_TOKENS_MAPS, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in CONFIGS.items():
            folder = lay_out(root, name, OUT, ["sentencepiece.bpe.model", "vocab.json"], config, MODEL_TYPES.get(name),
                             SPECIAL_TOKENS_MAPS.get(name))
            tok = AutoTokenizer.from_pretrained(folder)
            ids = record(tok, M2M_TEXTS)
            ids["decoded_raw"] = [tok.decode(tok(t)["input_ids"]) for t in M2M_TEXTS]
            lang = tok.get_lang_id("en")
            ids["decode_ids"] = [[lang, vocab["▁"], 5, 6, 2, 7, lang + 1, 8, 3, 1], [2, 2], [0, 9, 0, 10]]
            ids["decoded_ids"] = [tok.decode(i) for i in ids["decode_ids"]]
            ids["decoded_ids_skipped"] = [tok.decode(i, skip_special_tokens=True) for i in ids["decode_ids"]]
            if "fr" in tok.lang_code_to_id:
                tok.src_lang = "fr"
                ids["french"] = [tok(t)["input_ids"] for t in M2M_TEXTS]
            out["ids"][name] = ids
            print(name, type(tok).__name__, ids["special"][0], ids["decoded_raw"][-7:], ids["decoded_ids"])
    (FIXTURES / "m2m100_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
