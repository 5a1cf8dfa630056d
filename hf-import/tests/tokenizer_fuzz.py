"""Dev-time differential fuzz of hf-import's tokenizers against transformers 5: random texts (odd spaces, accents,
scripts, emoji, special tokens and language codes mixed in) through folders built without `tokenizer.json` (the
fixtures' Marian, M2M100, GPT-2, OPT, RoBERTa, Blenderbot, DeBERTa, Pegasus, T5, XLM-R, CamemBERT, ALBERT, Llama
and DeBERTa-v2 models and vocabularies) and `tokenizer.json` ones whose pipeline transformers rebuilds per class
(XLM-R, NLLB, mBART, Llama, DeBERTa-v2), each text's ids (special tokens added) and their decoding compared.

    /work/.refenv/bin/python hf-import/tests/tokenizer_fuzz.py [--seed N] [--texts K]

The Rust side is the ignored test `golden_check::tokenizer_fuzz_dump` (run through cargo here).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from transformers import AutoTokenizer

from tokenizer_goldens import lay_out

HERE = Path(__file__).resolve().parent
TOK = HERE / "fixtures" / "tokenizers"
FOLDERS = [  # (name, source folder, files as (file there, name in the folder), tokenizer_config.json)
    ("marian", TOK / "marian", [("source.spm",) * 2, ("target.spm",) * 2, ("vocab.json",) * 2],
     {"tokenizer_class": "MarianTokenizer", "source_lang": "en", "target_lang": "de"}),
    ("m2m100", TOK / "m2m100", [("sentencepiece.bpe.model",) * 2, ("vocab.json",) * 2],
     {"tokenizer_class": "M2M100Tokenizer"}),
    ("gpt2", TOK / "byte_level_bpe", [("vocab.json",) * 2, ("merges.txt",) * 2], {"tokenizer_class": "GPT2Tokenizer"}),
    ("roberta", TOK / "byte_level_bpe", [("vocab.json",) * 2, ("merges.txt",) * 2],
     {"tokenizer_class": "RobertaTokenizer"}),
    ("opt", TOK / "byte_level_bpe", [("vocab.json",) * 2, ("merges.txt",) * 2],
     {"tokenizer_class": "GPT2Tokenizer", "bos_token": "</s>", "eos_token": "</s>", "unk_token": "</s>",
      "pad_token": "<pad>", "add_bos_token": True}),
    ("blenderbot", TOK / "byte_level_bpe", [("vocab.json",) * 2, ("merges.txt",) * 2],
     {"tokenizer_class": "BlenderbotTokenizer"}),
    ("deberta", TOK / "byte_level_bpe", [("vocab.json",) * 2, ("merges.txt",) * 2],
     {"tokenizer_class": "DebertaTokenizer"}),
    ("pegasus", TOK, [("t5_unigram.model", "spiece.model")], {"tokenizer_class": "PegasusTokenizer"}),
    ("t5", TOK, [("t5_unigram.model", "spiece.model")], {"tokenizer_class": "T5Tokenizer"}),
    ("camembert", TOK, [("fairseq_unigram.model", "sentencepiece.bpe.model")], {"tokenizer_class": "CamembertTokenizer"}),
    ("xlmr", TOK, [("fairseq_unigram.model", "sentencepiece.bpe.model")], {"tokenizer_class": "XLMRobertaTokenizer"}),
    ("albert", TOK, [("albert_unigram.model", "spiece.model")], {"tokenizer_class": "AlbertTokenizer"}),
    ("llama", TOK, [("llama_bpe.model", "tokenizer.model")],
     {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "legacy": False}),
    ("llama_legacy", TOK, [("llama_bpe.model", "tokenizer.model")],
     {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "legacy": True}),
    ("deberta_v2", TOK, [("deberta_spm.model", "spm.model")], {"tokenizer_class": "DebertaV2Tokenizer"}),
    # (`tokenizer.json` files whose pipeline transformers 5 rebuilds from the class.)
    ("xlmr_json", TOK, [("xlmr_unigram.json", "tokenizer.json")], {"tokenizer_class": "XLMRobertaTokenizer"}),
    ("nllb_json", TOK, [("nllb_bpe.json", "tokenizer.json")], {"tokenizer_class": "NllbTokenizer"}),
    ("mbart_json", TOK, [("mbart_unigram.json", "tokenizer.json")], {"tokenizer_class": "MBartTokenizer"}),
    ("llama_json", TOK, [("bpe_llama2_byte_fallback.json", "tokenizer.json")],
     {"tokenizer_class": "LlamaTokenizerFast", "legacy": False, "add_bos_token": True}),
    ("deberta_v2_json", TOK, [("deberta_unigram.json", "tokenizer.json")], {"tokenizer_class": "DebertaV2Tokenizer"}),
]
ALPHABET = list("abcdefghij ABC  xyz\t\n\r.,;:!?'\"`-_()[]{}<>/\\|@#$%^&*+=~0123456789éüßçñ漢字😀€"
                "\u00a0\u3000\u200b\u0301ﬁ①Ａ▁") + ["</s>", "<unk>", "<pad>", "<s>", ">>deu<<", "__fr__", "<mask>",
                                                    "<|endoftext|>", "  ", "Hello", " world", "the"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--texts", type=int, default=300)
    args = ap.parse_args()
    r = random.Random(args.seed)
    texts = ["".join(r.choice(ALPHABET) for _ in range(r.randint(0, 25))) for _ in range(args.texts)]
    with tempfile.TemporaryDirectory() as root:
        dirs = []
        for name, source, files, config in FOLDERS:
            folder = lay_out(root, name, source, [], config)
            for there, here in files:
                shutil.copy(source / there, folder / here)
            dirs.append(str(folder))
        (Path(root) / "spec.json").write_text(json.dumps({"texts": texts, "dirs": dirs}))
        subprocess.run(["cargo", "test", "-q", "-p", "oxtorch-hf-import", "--lib", "tokenizer_fuzz_dump", "--",
                        "--ignored"], cwd=HERE.parent.parent, check=True, capture_output=True,
                       env={**os.environ, "TOKENIZER_FUZZ_DIR": root})
        ours = json.loads((Path(root) / "ours.json").read_text())
        total = 0
        for d in dirs:
            tok = AutoTokenizer.from_pretrained(d)
            bad = 0
            for i, text in enumerate(texts):
                want, got = tok(text)["input_ids"], ours[d]["ids"][i]
                if want != got:
                    bad += 1
                    if bad <= 3:
                        print(f"{Path(d).name} {text!r}: transformers {want}, ours {got}")
                    continue
                want_text, got_text = tok.decode(want, skip_special_tokens=True), ours[d]["decoded"][i]
                if want_text != got_text:
                    bad += 1
                    if bad <= 3:
                        print(f"{Path(d).name} decode {text!r}: transformers {want_text!r}, ours {got_text!r}")
            print(f"{Path(d).name}: {bad} mismatches in {len(texts)} texts")
            total += bad
        raise SystemExit(1 if total else 0)


if __name__ == "__main__":
    main()
