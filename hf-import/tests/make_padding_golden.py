"""Dev-time script: how transformers 5 pads a batch (`padding=True`) when `tokenizer.json` and
`tokenizer_config.json` disagree: the config's `pad_token` and `padding_side` win over the file's
`padding` section, the file's apply where the config is silent, and a `pad_token` outside the
vocabulary is added to it as a special token.

    /work/.refenv/bin/python hf-import/tests/make_padding_golden.py

Reads `fixtures/tokenizers/word_piece_prefix.json` (a WordPiece file padding on the right with
`[PAD]` = 0 to a multiple of 8) and writes `fixtures/tokenizer_padding_expected.json`: for each
case, the file's `padding` section as set, the `tokenizer_config.json`, and transformers' ids and
attention masks of a batch, plus the ids of a text holding the pad token's string.
"""

import json
import tempfile
from pathlib import Path

from transformers import AutoTokenizer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SOURCE = FIXTURES / "tokenizers" / "word_piece_prefix.json"
TEXTS = ["abcdef", "The quick brown fox jumps", "ab"]
LEFT_UNK = {"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": None,
            "pad_id": 1, "pad_type_id": 0, "pad_token": "[UNK]"}
# (name, the file's padding ("keep": as in the fixture), tokenizer_config.json)
CASES = [
    ("file_only", LEFT_UNK, {}),
    ("config_pad_wins", LEFT_UNK, {"pad_token": "[MASK]"}),
    ("config_side_wins", LEFT_UNK, {"padding_side": "right"}),
    ("config_both", "keep", {"pad_token": "!", "padding_side": "left"}),
    ("no_file_padding", None, {"pad_token": "[MASK]", "padding_side": "left"}),
    ("pad_outside_vocab", "keep", {"pad_token": "<newpad>"}),
    ("pad_object", None, {"pad_token": {"__type": "AddedToken", "content": "[SEP]", "special": True}}),
]


def main():
    source = json.loads(SOURCE.read_text())
    out = {"source": "tokenizers/word_piece_prefix.json", "texts": TEXTS, "cases": {}}
    for name, file_padding, config in CASES:
        tokenizer_json = dict(source)
        if file_padding != "keep":
            tokenizer_json["padding"] = file_padding
        with tempfile.TemporaryDirectory() as d:
            Path(d, "tokenizer.json").write_text(json.dumps(tokenizer_json))
            Path(d, "tokenizer_config.json").write_text(
                json.dumps(dict(config, tokenizer_class="PreTrainedTokenizerFast")))
            tok = AutoTokenizer.from_pretrained(d)
            enc = tok(TEXTS, padding=True)
            pad = tok.pad_token
            out["cases"][name] = {
                "file_padding": tokenizer_json.get("padding"),
                "tokenizer_config": config,
                "input_ids": enc["input_ids"],
                "attention_mask": enc["attention_mask"],
                "pad_text": f"ab {pad} ab",
                "pad_text_ids": tok(f"ab {pad} ab")["input_ids"],
            }
    (FIXTURES / "tokenizer_padding_expected.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
