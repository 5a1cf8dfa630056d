"""Dev-time script: transformers 5's ids and texts for Marian (opus-mt) tokenizer folders, which hold
no `tokenizer.json` but two SentencePiece models (`source.spm`, `target.spm`) and a `vocab.json`
(`target_vocab.json` too when the vocabularies are separate). `MarianTokenizer` cuts a text with the
source model and looks each piece up in `vocab.json` (the unknown token for pieces it lacks), a
leading `>>lang<<` code kept whole, `</s>` appended; it decodes through the vocabulary (the target
one when separate) and the SentencePiece model's piece joining.

    /work/.refenv/bin/python hf-import/tests/make_marian_tokenizer_golden.py

Writes, under `fixtures/tokenizers/marian/`:
- `source.spm`: a small SentencePiece Unigram trained on English (`make_xlmr_tokenizer_golden.py`'s
  corpus), opus-mt's layout (`<unk>`, `<s>`, `</s>` first), its nmt_nfkc charsmap cut to the
  entries the texts reach (checked to normalize every text as the full one);
- `target.spm`: the same on a German corpus;
- `vocab.json`: both models' pieces in one vocabulary as the opus-mt conversion lays it out
  (`</s>` 0, `<unk>` 1, the pieces, two target-language codes, `<pad>` last), in an order unlike
  either model's;
- `target_vocab.json`: the target model's pieces alone (for `separate_vocabs`);
- `fixtures/marian_tokenizer_expected.json`: "texts", "configs" (tokenizer_config.json, with
  config.json's model type where the class is not named), "files" (which vocabularies a config's
  folder holds) and per config "plain", "special", "batch", "decoded" (skipping special tokens),
  "decoded_raw" (keeping them), "decode_ids" (target-side ids: pieces, special tokens, a code) and
  "decoded_ids" (their texts, special tokens kept).
"""

import json
import random
import tempfile
from pathlib import Path

from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CORPUS, TEXTS
from tokenizer_goldens import lay_out, record, trained_spm

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OUT = FIXTURES / "tokenizers" / "marian"
GERMAN = [
    "Hallo Welt, noch einmal hallo: der schnelle braune Fuchs springt über den faulen Hund.",
    "Die Größe der Straße ist mäßig; Bäume blühen im Frühling, Vögel singen.",
    "Ein Satzteiler zerlegt Text in Wörter und Stücke: 1234 5678 90, 5 € oder 3,14 (ja) [nein]!",
    "Führende und folgende Leerzeichen sind für den Zerleger Weißraum.",
    "Wie geht es dir? Mir geht es gut, danke. «Zitat» — hör nicht auf… es ist gut.",
    "Satzvektoren vergleichen Bedeutung; Sprachmodelle sagen das nächste Stück voraus.",
] * 8
MARIAN_TEXTS = TEXTS + [
    ">>deu<< Hello world", ">>fra<<Hello", ">>xyz<< an unknown code", "Hello >>deu<< in the middle",
    "</s>>>deu<< after a special token", ">>deu<<", ">> not a code", "Größe der Straße ß ẞ", "<unk> and <pad> x",
    "a </s> b", "Hello</s>", "€ 5 and 漢", "a <sep> b", "x<sep>y", "a tensor of tensors, tensor", "tensor",
    # (SentencePiece applies its charsmap's longest rule at each place: a fullwidth letter and an accent make `Á`,
    # an accent after a space stays; the tokenizers crate's grapheme-wide lookup drops the accents.)
    "Ａ\u0301A x\u3000\u0301y ▁\u0301h",
]
CODES = [">>deu<<", ">>fra<<"]
BASE = dict(source_lang="en", target_lang="de", model_max_length=512)
CONFIGS = {
    # As the hub's opus-mt folders: no class named (config.json's model type picks it).
    "marian": BASE,
    "marian_named": BASE | {"tokenizer_class": "MarianTokenizer", "separate_vocabs": False,
                            "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    "marian_separate": BASE | {"tokenizer_class": "MarianTokenizer", "separate_vocabs": True},
    # Added tokens past the vocabulary: one stripping the spaces around it, one kept inside words.
    "marian_added": BASE | {"tokenizer_class": "MarianTokenizer", "added_tokens_decoder": {
        "194": {"content": "<sep>", "special": True, "normalized": False, "lstrip": True, "rstrip": True,
                "single_word": False},
        "195": {"content": "tensor", "special": False, "normalized": False, "lstrip": False, "rstrip": False,
                "single_word": True}}},
}
MODEL_TYPES = {"marian": "marian"}


def train(corpus, size):
    """A Unigram in opus-mt's layout, its charsmap cut to what the texts reach."""
    return trained_spm(corpus, MARIAN_TEXTS + CORPUS + GERMAN, model_type="unigram", vocab_size=size, unk_id=0,
                       bos_id=1, eos_id=2, pad_id=-1)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    source, source_pieces = train(CORPUS, 140)
    target, target_pieces = train(GERMAN, 120)
    (OUT / "source.spm").write_bytes(source)
    (OUT / "target.spm").write_bytes(target)
    pieces = sorted(set(source_pieces) | set(target_pieces))
    random.Random(7).shuffle(pieces)
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in pieces + CODES + ["<pad>"]:
        vocab[piece] = len(vocab)
    target_vocab = {"</s>": 0, "<unk>": 1}
    for piece in target_pieces + ["<pad>"]:
        target_vocab[piece] = len(target_vocab)
    (OUT / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (OUT / "target_vocab.json").write_text(json.dumps(target_vocab, ensure_ascii=False, indent=2) + "\n",
                                           encoding="utf-8")
    def decode_ids(vocab):
        """Target-side ids to decode: pieces, special tokens between them, a code, a source piece."""
        last = len(vocab) - 1
        # Target pieces the source model lacks (joined as written when the source model decodes).
        own = [vocab[p] for p in target_pieces if p.startswith("▁") and p not in source_pieces][:2]
        return [[0, vocab["▁"], vocab.get("▁a", 1), 0] + own + [0, vocab["▁"], vocab["▁"]], [vocab[p] for p in target_pieces[:12]] + [0, 1, last, vocab.get(">>deu<<", 1)], [0],
                [last, vocab[target_pieces[3]], 0], [vocab[target_pieces[5]], 1, vocab.get(source_pieces[7], 1)]]
    out = {"texts": MARIAN_TEXTS, "configs": CONFIGS, "model_types": MODEL_TYPES, "files": {}, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in CONFIGS.items():
            files = ["source.spm", "target.spm", "vocab.json"]
            if config.get("separate_vocabs"):
                files.append("target_vocab.json")
            out["files"][name] = files
            folder = lay_out(root, name, OUT, files, config, MODEL_TYPES.get(name))
            tok = AutoTokenizer.from_pretrained(folder)
            if config.get("separate_vocabs"):
                # Source ids decoded through the target vocabulary mean nothing (and may be out of its range).
                batch = tok(MARIAN_TEXTS, padding=True)
                ids = {"plain": [tok(t, add_special_tokens=False)["input_ids"] for t in MARIAN_TEXTS],
                       "special": [tok(t)["input_ids"] for t in MARIAN_TEXTS], "decoded": None, "decoded_raw": None,
                       "batch": {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}}
            else:
                ids = record(tok, MARIAN_TEXTS)
                ids["decoded_raw"] = [tok.decode(tok(t)["input_ids"]) for t in MARIAN_TEXTS]
            ids["decode_ids"] = decode_ids(target_vocab if config.get("separate_vocabs") else vocab)
            ids["decoded_ids"] = [tok.decode(i) for i in ids["decode_ids"]]
            out["ids"][name] = ids
            print(name, type(tok).__name__, ids["special"][0], ids["plain"][-10], (ids["decoded_raw"] or [])[-8:], ids["decoded_ids"][:2])
    (FIXTURES / "marian_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
