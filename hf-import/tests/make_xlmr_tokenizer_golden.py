"""Dev-time script: transformers 5's ids for an XLM-RoBERTa-style Unigram `tokenizer.json` under
several `tokenizer_config.json`s (transformers 5 rebuilds the pipeline for `XLMRobertaTokenizer`),
and BERT pair encodings of the `sentence_tiny` fixture.

    /work/.refenv/bin/python hf-import/tests/make_xlmr_tokenizer_golden.py

Writes
- `fixtures/tokenizers/xlmr_unigram.json`: a small Unigram trained on a fixed corpus, saved as
  XLM-R's converter writes it: normalizer Sequence[Precompiled, Replace(" {2,}", " ")], Metaspace
  (always) pre-tokenizer and decoder, `<s> <pad> </s> <unk>` first and `<mask>` last, template
  `<s> $A </s>` / `<s> $A </s> </s> $B </s>`. The Precompiled charsmap holds the entries of the real
  SentencePiece (nmt_nfkc) charsmap that the `spm_precompiled` crate tests with (read from the local
  cargo registry; the script fails without it) that the texts and corpus reach, rebuilt as a small
  double array, so that the file stays small (~12 KB, not ~320 KB) while normalizing every text here
  as the full charsmap does (checked).
- `fixtures/xlmr_tokenizer_expected.json`: laid out as `llama_v5_tokenizer_expected.json` ("texts",
  "configs", "model_types", "ids" with "plain" and "special" per config), plus "pairs" (batched
  text pairs, padded: ids, token type ids, attention masks per config; "returns_token_type_ids"
  says whether transformers returns type ids by default, the recorded ones are asked for) and
  "bert_pairs" (the same for `fixtures/sentence_tiny`, BERT-style).
"""

import base64
import glob
import json
import os
import struct
import tempfile
from itertools import count
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHARSMAP = os.path.join(os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")),
                        "registry/src/*/spm_precompiled-*/test.json")
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
CORPUS = [
    "Hello world, hello again: the quick brown fox jumps over the lazy dog.",
    "Café owners in Zürich and São Paulo serve crème brûlée; naïve résumé, déjà vu.",
    "Tokenizers split text into words and pieces: 1234 5678 90, $5 or 3.14 (yes) [no] {ok}!",
    "Leading and trailing spaces, tabs and new lines are whitespace to the tokenizer.",
    "Non breaking spaces, ligatures and combining accents are normalized first.",
    "ABC «quote» — don't stop… it's fine. How are you? I am fine, thanks.",
    "Sentence embeddings compare meaning; language models predict the next token.",
] * 8
TEXTS = ["Hello world", "Hello   world", "  leading and trailing  ", "tab\there", "new\nline\r\nx",
         "Café naïve résumé", "cafe\u0301 combining", "ﬁ ligature ① ＡＢＣ", "emoji 😀 🚀", "unknown 漢字 ☃",
         "", " ", "\t\n", "1234.56, $7! 2024", "x\u3000y", "non\u00a0breaking", "a <mask> b", "a<mask>b",
         "▁already ▁", "x <s>y", "</s> end </s>", "«quote» — ok…", "``quoted'' Çà et là", "CAFÉ Ölçü"]
# Config per case as written (hub-style for XLM-R), and config.json's model type (none: no file).
HUB = dict(bos_token="<s>", cls_token="<s>", eos_token="</s>", sep_token="</s>", mask_token="<mask>",
           pad_token="<pad>", unk_token="<unk>", model_max_length=512, clean_up_tokenization_spaces=True)
# T5's and ALBERT's settings over this vocabulary (no sentinel tokens; `<s>`/`</s>` as ALBERT's [CLS]/[SEP]).
T5 = dict(eos_token="</s>", pad_token="<pad>", unk_token="<unk>", extra_ids=0, model_max_length=512)
ALBERT = dict(bos_token="<s>", cls_token="<s>", eos_token="</s>", sep_token="</s>", mask_token="<mask>",
              pad_token="<pad>", unk_token="<unk>", model_max_length=512)
CONFIGS = {
    "xlmr": HUB | {"tokenizer_class": "XLMRobertaTokenizer"},
    "xlmr_no_prefix": HUB | {"tokenizer_class": "XLMRobertaTokenizer", "add_prefix_space": False},
    # The generic class uses the file as it is, whatever the model type.
    "fast_generic": HUB | {"tokenizer_class": "PreTrainedTokenizerFast"},
    "bert_type_xlmr_class": HUB | {"tokenizer_class": "XLMRobertaTokenizer"},
    "no_class_xlmr_type": HUB,
    # The other Unigram classes transformers 5 rebuilds, by class and by model type.
    "camembert": HUB | {"tokenizer_class": "CamembertTokenizer"},
    "no_class_camembert_type": HUB,
    "t5": T5 | {"tokenizer_class": "T5Tokenizer"},
    "t5_no_prefix_ignored": T5 | {"tokenizer_class": "T5Tokenizer", "add_prefix_space": False},
    "no_class_mt5_type": T5,
    "albert": ALBERT | {"tokenizer_class": "AlbertTokenizer"},
    "albert_cased_accents": ALBERT | {"tokenizer_class": "AlbertTokenizer", "do_lower_case": False,
                                      "keep_accents": True, "add_prefix_space": False},
    "no_class_albert_type": ALBERT,
}
MODEL_TYPES = {"xlmr": "xlm-roberta", "xlmr_no_prefix": "xlm-roberta", "fast_generic": "xlm-roberta",
               "bert_type_xlmr_class": "bert", "no_class_xlmr_type": "xlm-roberta",
               "no_class_camembert_type": "camembert", "no_class_mt5_type": "mt5", "no_class_albert_type": "albert",
               "t5": "t5", "albert": "albert"}
PAIRS = [["How are you?", "  I am   fine.  "], ["", "tab\tb <mask>"], ["Zürich café ①", "x"]]
BERT_PAIRS = [["The cat sits on the mat.", "A dog runs!"], ["How do I bake bread?", "rust"], ["", "Two big trees, hello"]]


def subset_charsmap(charsmap, texts):
    """The entries of a Precompiled charsmap that the chunks of `texts` reach, as a new charsmap."""
    size = struct.unpack_from("<I", charsmap)[0]
    array = list(struct.unpack_from(f"<{size // 4}I", charsmap, 4))
    blob = charsmap[4 + size:]
    offset = lambda unit: (unit >> 10) << ((unit & 512) >> 6)
    keys = {}
    for text in texts:
        for start in range(len(text)):  # every chunk (grapheme or char) starts at a char
            data, pos = text[start:].encode(), offset(array[0])
            for end, c in enumerate(data, 1):
                pos ^= c
                if pos >= len(array) or array[pos] & 0x800000FF != c:
                    break
                has_leaf, pos = array[pos] >> 8 & 1, pos ^ offset(array[pos])
                if has_leaf:
                    value = array[pos] & 0x7FFFFFFF
                    keys[data[:end]] = blob[value:blob.index(b"\0", value)]
    # A double array (darts-clone layout) of those keys: a child of the node at p with base b
    # (unit offset p ^ b) sits at b ^ label, the value of a key ending there at b ^ 0; bases are
    # unique, so a label found at b ^ c is the child of that node.
    trie, normalized = {}, b""
    for key in sorted(keys):
        node = trie
        for c in key:
            node = node.setdefault(c, {})
        node[0], normalized = len(normalized), normalized + keys[key] + b"\0"
    units, taken, bases = {}, {0}, set()

    def place(node, pos, label):
        base = next(b for b in count(1) if b not in bases and all(b ^ c not in taken for c in node))
        bases.add(base)
        taken.update(base ^ c for c in node)
        units[pos] = label | (0 in node) << 8 | (pos ^ base) << 10
        for c, child in sorted(node.items()):
            if c == 0:
                units[base] = child | 1 << 31
            else:
                place(child, base ^ c, c)

    place(trie, 0, 0)
    # `spm_precompiled` reads b ^ c unchecked for any byte c: whole blocks of 256 units, as darts-clone.
    array = [units.get(i, 0) for i in range((max(units | {b: 0 for b in bases}) // 256 + 1) * 256)]
    return struct.pack(f"<I{len(array)}I", 4 * len(array), *array) + normalized, len(keys)


def build(corpus):
    """The XLM-R-style tokenizer.json (as a dict)."""
    paths = sorted(glob.glob(CHARSMAP))
    if not paths:
        raise SystemExit(f"no SentencePiece charsmap at {CHARSMAP} (the spm_precompiled crate's test.json)")
    full = base64.b64decode(json.loads(Path(paths[-1]).read_text())["precompiled_charsmap"])
    small, n_keys = subset_charsmap(full, TEXTS + [t for p in PAIRS for t in p] + corpus)
    for text in TEXTS + [t for p in PAIRS for t in p] + corpus:
        want = normalizers.Precompiled(full).normalize_str(text)
        assert normalizers.Precompiled(small).normalize_str(text) == want, text
    print(f"charsmap: {n_keys} of the full one's entries, {len(small)} bytes (full {len(full)})")
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(small), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.train_from_iterator(corpus, trainers.UnigramTrainer(
        vocab_size=200, special_tokens=SPECIALS, unk_token="<unk>", show_progress=False))
    data = json.loads(tok.to_str())
    # The trainer's order of equal scores and their last digits vary from run to run.
    pieces = sorted((p, round(s, 6)) for p, s in data["model"]["vocab"][len(SPECIALS):])
    data["model"]["vocab"][len(SPECIALS):] = sorted(pieces, key=lambda p: -p[1]) + [["<mask>", 0.0]]
    mask_id = len(data["model"]["vocab"]) - 1
    data["added_tokens"] = [dict(id=i, content=t, single_word=False, lstrip=t == "<mask>", rstrip=False,
                                 normalized=False, special=True)
                            for i, t in list(enumerate(SPECIALS)) + [(mask_id, "<mask>")]]
    data["post_processor"] = json.loads(processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]).__getstate__())
    Tokenizer.from_str(json.dumps(data))  # loads in the library
    return data


def encode_pairs(tok, pairs):
    enc = tok([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_token_type_ids=True)
    default = tok([a for a, _ in pairs], [b for _, b in pairs], padding=True)
    return {"input_ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"],
            "attention_mask": enc["attention_mask"], "returns_token_type_ids": "token_type_ids" in default}


def main():
    data = build(CORPUS)
    tok_path = FIXTURES / "tokenizers" / "xlmr_unigram.json"
    tok_path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    decoder = {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in data["added_tokens"]}
    configs = {name: {"added_tokens_decoder": decoder} | cfg for name, cfg in CONFIGS.items()}
    out = {"texts": TEXTS, "configs": configs, "model_types": MODEL_TYPES, "ids": {},
           "pairs": {"texts": PAIRS, "ids": {}}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in configs.items():
            folder = Path(root) / name
            folder.mkdir()
            (folder / "tokenizer.json").write_text(tok_path.read_text(encoding="utf-8"), encoding="utf-8")
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
            if MODEL_TYPES.get(name):
                (folder / "config.json").write_text(json.dumps({"model_type": MODEL_TYPES[name]}))
            tok = AutoTokenizer.from_pretrained(folder)
            out["ids"][name] = {
                "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in TEXTS],
                "special": [tok(t)["input_ids"] for t in TEXTS],
            }
            out["pairs"]["ids"][name] = encode_pairs(tok, PAIRS)
            print(name, type(tok).__name__, out["ids"][name]["plain"][2])
    bert = AutoTokenizer.from_pretrained(FIXTURES / "sentence_tiny")
    print("sentence_tiny", type(bert).__name__)
    enc = encode_pairs(bert, BERT_PAIRS)
    assert enc.pop("returns_token_type_ids")
    out["bert_pairs"] = {"dir": "sentence_tiny", "texts": BERT_PAIRS} | enc
    (FIXTURES / "xlmr_tokenizer_expected.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
