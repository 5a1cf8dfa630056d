"""Dev-time script: transformers 5's ids for DeBERTa-v2/v3 tokenizers (`DebertaV2Tokenizer`, which
rebuilds its pipeline whatever the files hold) from a SentencePiece `spm.model` alone (as
microsoft/deberta-v3-base ships it: no tokenizer.json) and from a `tokenizer.json` whose own
pipeline differs, under several settings.

    /work/.refenv/bin/pip install sentencepiece protobuf   # once, for the training and the reference
    /work/.refenv/bin/python hf-import/tests/make_deberta_tokenizer_golden.py

Writes
- `fixtures/tokenizers/deberta_spm.model`: a small Unigram SentencePiece model trained on a fixed
  corpus with DeBERTa-v3's specials (`[PAD]` 0, `[CLS]` 1, `[SEP]` 2, `[UNK]` 3), a user-defined
  symbol and the identity normalization rule (the charsmap transformers 5 ignores here stays out).
- `fixtures/tokenizers/deberta_unigram.json`: the same vocabulary as a `tokenizer.json` with a
  pipeline of its own (no normalizer, a bare `Metaspace`, `[CLS] $A [SEP] [SEP] $B [SEP]`).
- `fixtures/deberta_tokenizer_expected.json`: "texts", "cases" (files and settings per case), "ids"
  ("plain" and "special" per case), "pairs" (padded pair batches per case).
"""

import json
import shutil
import tempfile
from pathlib import Path

import sentencepiece as spm
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import AutoTokenizer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS = [
    "Hello world, hello again: the quick brown fox jumps over the lazy dog.",
    "Café owners in Zürich and São Paulo serve crème brûlée; naïve résumé, déjà vu.",
    "Tokenizers split text into words and pieces: 1234 5678 90, $5 or 3.14 (yes) [no] {ok}!",
    "Leading and trailing spaces, tabs and new lines are whitespace to the tokenizer.",
    "Natural language inference: does the premise entail the hypothesis, or contradict it?",
    "ABC «quote» — don't stop… it's fine. How are you? I am fine, thanks.",
    "DeBERTa improves BERT and RoBERTa with disentangled attention and an enhanced mask decoder.",
] * 8
TEXTS = ["Hello world", "Hello   world", "  leading and trailing  ", "tab\there", "new\nline\r\nx",
         "Café naïve résumé", "cafe\u0301 combining", "HELLO World", "don't,stop!now", "unknown 漢字 ☃",
         "", " ", "\t\n", "1234.56, $7! 2024", "a [MASK] b", "a[MASK]b", "x [CLS]y", "[SEP] end [SEP]",
         "user <uds> symbol", "▁already ▁"]
PAIRS = [["How are you?", "  I am   fine.  "], ["", "tab\tb [MASK]"], ["Zürich café", "x"]]
SPECIALS = dict(bos_token="[CLS]", eos_token="[SEP]", unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                cls_token="[CLS]", mask_token="[MASK]")
# Per case: the files ("spm": spm.model alone; "json": tokenizer.json alone; "both"), tokenizer_config.json
# (None: no file), special_tokens_map.json, added_tokens.json and config.json's model type.
CASES = {
    # microsoft/deberta-v3-base's files: a bare tokenizer_config, the legacy maps, the model type.
    "hub_v3": dict(files="spm", config={"do_lower_case": False, "vocab_type": "spm"}, special_map=SPECIALS,
                   added={"[MASK]": "VOCAB"}, model_type="deberta-v2"),
    "class_spm": dict(files="spm", config={"tokenizer_class": "DebertaV2Tokenizer", **SPECIALS,
                                           "added_tokens_decoder": "MASK"}),
    "lower_punct": dict(files="spm", config={"tokenizer_class": "DebertaV2Tokenizer", "do_lower_case": True,
                                             "split_by_punct": True, **SPECIALS}),
    "no_prefix": dict(files="spm", config={"tokenizer_class": "DebertaV2Tokenizer", "add_prefix_space": False,
                                           **SPECIALS}),
    "json": dict(files="json", config={"tokenizer_class": "DebertaV2Tokenizer", **SPECIALS,
                                       "added_tokens_decoder": "MASK"}),
    "json_type_only": dict(files="json", config={**SPECIALS, "added_tokens_decoder": "MASK"},
                           model_type="deberta-v2"),
}


def train(path):
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS), model_prefix=str(path), vocab_size=140, model_type="unigram",
        pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]", eos_id=2, eos_piece="[SEP]", unk_id=3,
        unk_piece="[UNK]", user_defined_symbols=["<uds>"], normalization_rule_name="identity",
        character_coverage=1.0, num_threads=1, seed_sentencepiece_size=1000, shuffle_input_sentence=False,
        minloglevel=2)


def as_json(model_path):
    """The spm vocabulary as a tokenizer.json with a pipeline of its own."""
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] [SEP] $B [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tok.add_special_tokens(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"])
    return json.loads(tok.to_str()), len(vocab)


def encode_pairs(tok, pairs):
    enc = tok([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_token_type_ids=True)
    return {"input_ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"],
            "attention_mask": enc["attention_mask"]}


def main():
    out_dir = FIXTURES / "tokenizers"
    with tempfile.TemporaryDirectory() as tmp:
        train(Path(tmp) / "m")
        shutil.copy(Path(tmp) / "m.model", out_dir / "deberta_spm.model")
    data, vocab_size = as_json(out_dir / "deberta_spm.model")
    (out_dir / "deberta_unigram.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    mask = {str(vocab_size): dict(content="[MASK]", lstrip=False, normalized=False, rstrip=False, single_word=False,
                                  special=True)}
    out = {"texts": TEXTS, "pairs": {"texts": PAIRS, "ids": {}}, "cases": {}, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, case in CASES.items():
            folder = Path(root) / name
            folder.mkdir()
            written = {}
            if case["files"] in ("spm", "both"):
                shutil.copy(out_dir / "deberta_spm.model", folder / "spm.model")
            if case["files"] in ("json", "both"):
                shutil.copy(out_dir / "deberta_unigram.json", folder / "tokenizer.json")
            config = dict(case["config"])
            if config.get("added_tokens_decoder") == "MASK":
                config["added_tokens_decoder"] = mask
            written["tokenizer_config.json"] = config
            if case.get("special_map"):
                written["special_tokens_map.json"] = case["special_map"]
            if case.get("added"):
                written["added_tokens.json"] = {k: vocab_size for k in case["added"]}
            if case.get("model_type"):
                written["config.json"] = {"model_type": case["model_type"]}
            for file, content in written.items():
                (folder / file).write_text(json.dumps(content))
            tok = AutoTokenizer.from_pretrained(folder)
            out["cases"][name] = {"files": case["files"], "written": written}
            out["ids"][name] = {
                "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in TEXTS],
                "special": [tok(t)["input_ids"] for t in TEXTS],
            }
            out["pairs"]["ids"][name] = encode_pairs(tok, PAIRS)
            print(name, type(tok).__name__, len(tok), out["ids"][name]["special"][14], out["ids"][name]["plain"][2])
    (FIXTURES / "deberta_tokenizer_expected.json").write_text(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
