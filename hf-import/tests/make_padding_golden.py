"""Dev-time script: how transformers 5 pads a batch (`padding=True`) when `tokenizer.json` and
`tokenizer_config.json` disagree: the config's `pad_token` and `padding_side` win over the file's
`padding` section, the file's apply where the config is silent, and a `pad_token` outside the
vocabulary is added to it as a special token.

    /work/.refenv/bin/python hf-import/tests/make_padding_golden.py

Reads `fixtures/tokenizers/word_piece_prefix.json` (a WordPiece file padding on the right with
`[PAD]` = 0 to a multiple of 8; other files for the tokenizer classes' own defaults) and writes
`fixtures/tokenizer_padding_expected.json`: for each case, the source file, its `padding` section
as set, the `tokenizer_config.json`, and transformers' ids, attention masks and token type ids of
a batch, plus the ids of a text holding the pad token's string. The pad token is the config's,
else the tokenizer class's (`BertTokenizer`: `[PAD]`, `XLMRobertaTokenizer`: `<pad>`), else the
file's, its id always looked up; the side is the config's, else the file's, else the class's
(`LlamaTokenizer`: left; `Qwen2Tokenizer`: `<|endoftext|>`); token types pad with 0.
(`RobertaTokenizer` rebuilds its whole pipeline, which is not ported; `GemmaTokenizer` is `tokenizer/gemma.rs`.)
"""

import json
import tempfile
from pathlib import Path

from transformers import AutoTokenizer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WORD_PIECE = "tokenizers/word_piece_prefix.json"
TEXTS = ["abcdef", "The quick brown fox jumps", "ab"]
LEFT_UNK = {"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": None,
            "pad_id": 1, "pad_type_id": 0, "pad_token": "[UNK]"}
GENERIC = {"tokenizer_class": "PreTrainedTokenizerFast"}
# (name, source file, the file's padding ("keep": as in the fixture), tokenizer_config.json)
CASES = [
    ("file_only", WORD_PIECE, LEFT_UNK, GENERIC),
    ("config_pad_wins", WORD_PIECE, LEFT_UNK, dict(GENERIC, pad_token="[MASK]")),
    ("config_side_wins", WORD_PIECE, LEFT_UNK, dict(GENERIC, padding_side="right")),
    ("config_both", WORD_PIECE, "keep", dict(GENERIC, pad_token="!", padding_side="left")),
    ("no_file_padding", WORD_PIECE, None, dict(GENERIC, pad_token="[MASK]", padding_side="left")),
    ("pad_outside_vocab", WORD_PIECE, "keep", dict(GENERIC, pad_token="<newpad>")),
    ("pad_object", WORD_PIECE, None, dict(GENERIC, pad_token={"__type": "AddedToken", "content": "[SEP]", "special": True})),
    ("file_pad_id_from_its_token", WORD_PIECE, dict(LEFT_UNK, pad_token="[MASK]", pad_id=0), GENERIC),
    ("file_pad_type_id_ignored", WORD_PIECE, dict(LEFT_UNK, pad_type_id=1), GENERIC),
    ("bert_class_pad_wins_over_file", "sentence_tiny/tokenizer.json", dict(LEFT_UNK, pad_token="[MASK]", pad_id=4), {"tokenizer_class": "BertTokenizer"}),
    ("llama_class_pads_left", "tokenizers/bpe_llama2_byte_fallback.json", None, {"tokenizer_class": "LlamaTokenizer", "pad_token": "<unk>"}),
    ("xlmr_class_pad", "tokenizers/xlmr_unigram.json", None, {"tokenizer_class": "XLMRobertaTokenizer"}),
    ("qwen2_class_pad", "tokenizers/bpe_byte_level.json", None, {"tokenizer_class": "Qwen2Tokenizer"}),
    ("qwen2_class_pad_over_file", "tokenizers/bpe_byte_level.json", LEFT_UNK, {"tokenizer_class": "Qwen2TokenizerFast"}),
]


def main():
    out = {"texts": TEXTS, "cases": {}}
    for name, source_name, file_padding, config in CASES:
        tokenizer_json = json.loads((FIXTURES / source_name).read_text())
        if file_padding != "keep":
            tokenizer_json["padding"] = file_padding
        with tempfile.TemporaryDirectory() as d:
            Path(d, "tokenizer.json").write_text(json.dumps(tokenizer_json))
            Path(d, "tokenizer_config.json").write_text(json.dumps(config))
            tok = AutoTokenizer.from_pretrained(d)
            enc = tok(TEXTS, padding=True, return_token_type_ids=True)
            pad = tok.pad_token
            out["cases"][name] = {
                "source": source_name,
                "class": type(tok).__name__,
                "file_padding": tokenizer_json.get("padding"),
                "tokenizer_config": config,
                "input_ids": enc["input_ids"],
                "attention_mask": enc["attention_mask"],
                "token_type_ids": enc["token_type_ids"],
                "pad_text": f"ab {pad} ab",
                "pad_text_ids": tok(f"ab {pad} ab")["input_ids"],
            }
    (FIXTURES / "tokenizer_padding_expected.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
