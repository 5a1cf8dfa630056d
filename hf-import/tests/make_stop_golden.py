"""Dev-time script: goldens for stop strings (transformers' `StopStringCriteria`).

Run with the reference environment (no network):

    /work/.refenv/bin/python hf-import/tests/make_stop_golden.py

For each small tokenizer of `fixtures/tokenizers/` (byte-level BPE, SentencePiece-style BPE with
byte fallback, Unigram, WordPiece) and a few stop strings, it encodes texts that hold them (split
across tokens, overhanging a token's start or end, inside one token, or not at all), and records
whether transformers' criterion stops after each prefix of the ids, and of some random id
sequences. Writes `fixtures/stop_strings_expected.json`; the Rust test
(`hf-import/tests/cpu/generate.rs`) replays it.
"""

import json
import random
from pathlib import Path

import torch
from transformers import PreTrainedTokenizerFast
from transformers.generation.stopping_criteria import StopStringCriteria

HERE = Path(__file__).resolve().parent
TOKENIZERS = ["bpe_byte_level", "bpe_llama2_byte_fallback", "unigram", "unigram_byte_fallback", "word_piece_prefix"]
STOPS = [["fox"], ["quick", "jump"], ["o"], [" the lazy"], ["é"], [".\n", "!"], ["Zürich", "zebras jump"]]
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "How vexingly quick daft zebras jump; the five boxing wizards jump quickly.",
    "Déjà vu: naïve café owners serve crème brûlée in Zürich and São Paulo.",
    "Pack my box with five dozen liquor jugs!\nEmoji too 🙂 and foxes.",
]


def main():
    random.seed(0)
    cases = []
    for name in TOKENIZERS:
        tok = PreTrainedTokenizerFast(tokenizer_file=str(HERE / "fixtures" / "tokenizers" / f"{name}.json"))
        vocab = len(tok)
        for stops in STOPS:
            crit = StopStringCriteria(tokenizer=tok, stop_strings=stops)
            seqs = [tok(text, add_special_tokens=False)["input_ids"] for text in TEXTS]
            seqs.extend([random.randrange(vocab) for _ in range(12)] for _ in range(8))
            # stopped[k][n]: whether the criterion stops after the first n + 1 ids of sequence k
            stopped = [[bool(crit(torch.tensor([s[: n + 1]]), None)[0]) for n in range(len(s))] for s in seqs]
            cases.append({"tokenizer": name, "stop_strings": stops, "ids": seqs, "stopped": stopped})
            print(name, stops, sum(map(sum, stopped)), "of", sum(map(len, stopped)))
    (HERE / "fixtures" / "stop_strings_expected.json").write_text(json.dumps(cases))


if __name__ == "__main__":
    main()
