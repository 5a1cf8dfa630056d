"""Dev-time script: small `tokenizer.json` files, one per model type and file variant.

Run with the reference environment (no network):

    /work/.refenv/bin/python hf-import/tests/make_tokenizer_fixtures.py

Each tokenizer is trained with the `tokenizers` library on a small built-in corpus and saved as
`hf-import/tests/fixtures/tokenizers/<name>.json`. The Rust tests of the fast `tokenizer.json` reader
(`hf-import/src/tokenizer/fast_load/tests.rs`) check that it builds the same tokenizer from each of
them as `tokenizers::Tokenizer::from_file`; they need nothing from this script but the files.
"""

import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

OUT = Path(__file__).resolve().parent / "fixtures" / "tokenizers"

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Pack my box with five dozen liquor jugs!",
    "How vexingly quick daft zebras jump; the five boxing wizards jump quickly.",
    "Tokenizers split text into words, subwords and bytes: 1234 5678 90.",
    "Déjà vu: naïve café owners serve crème brûlée in Zürich and São Paulo.",
    "東京は日本の首都です。 Привет, мир! Γειά σου κόσμε. مرحبا بالعالم",
    "Emoji too 🙂🚀 and   several   spaces,\ttabs\nand newlines.",
    "Sentence embeddings compare meaning; language models predict the next token.",
    "oxtorch loads Hugging Face models without Python, tokenizer.json included.",
] * 4


def train(tok, trainer):
    tok.train_from_iterator(CORPUS, trainer=trainer)
    return tok


def byte_level_bpe():
    """GPT-2 / Qwen style: byte-level pre-tokenizer and decoder, no unk."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    train(tok, trainers.BpeTrainer(show_progress=False, 
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    tok.add_tokens([AddedToken("oxtorch", single_word=True)])
    return json.loads(tok.to_str())


def with_line_merges(data):
    """The same file with merges in the format of tokenizers < 0.20: `"a b"` strings."""
    data = json.loads(json.dumps(data))
    data["model"]["merges"] = [f"{a} {b}" for a, b in data["model"]["merges"]]
    return data


def llama2_bpe():
    """Llama 2 style: sentencepiece-like BPE with byte fallback, `▁` for spaces, `<s>` prepended."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    train(tok, trainers.BpeTrainer(show_progress=False, vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"]))
    data = json.loads(tok.to_str())
    # Byte pieces right after the special tokens, as in Llama 2's vocabulary.
    model = data["model"]
    order = sorted(model["vocab"], key=model["vocab"].get)
    order = order[:3] + [f"<0x{b:02X}>" for b in range(256)] + order[3:]
    model["vocab"] = {t: i for i, t in enumerate(order)}
    data["added_tokens"] = []
    tok = Tokenizer.from_str(json.dumps(data))
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return json.loads(tok.to_str())


def char_bpe():
    """BPE with a subword prefix, an end-of-word suffix and an unknown token (the model's options)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    train(tok, trainers.BpeTrainer(show_progress=False, 
        vocab_size=300, special_tokens=["<unk>"], continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = True
    return data


def word_level():
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    train(tok, trainers.WordLevelTrainer(show_progress=False, special_tokens=["[UNK]", "[PAD]"]))
    tok.enable_padding(pad_id=1, pad_token="[PAD]")
    return json.loads(tok.to_str())


def unigram():
    """T5 / ALBERT style: Unigram with scores, `▁` metaspace, an unknown id, `</s>` appended."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    train(tok, trainers.UnigramTrainer(show_progress=False, 
        vocab_size=200, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tok.enable_truncation(max_length=16)
    return json.loads(tok.to_str())


def unigram_byte_fallback():
    data = unigram()
    model = data["model"]
    model["vocab"] += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    model["byte_fallback"] = True
    return data


def word_piece_prefix():
    """WordPiece with a non-default subword prefix, padding and truncation stored in the file."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="@@", max_input_chars_per_word=20))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="@@")
    train(tok, trainers.WordPieceTrainer(show_progress=False, 
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        continuing_subword_prefix="@@"))
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tok.add_tokens([AddedToken("<ent>", lstrip=True, rstrip=True, normalized=False)])
    tok.enable_padding(pad_id=0, pad_token="[PAD]", pad_to_multiple_of=8)
    tok.enable_truncation(max_length=24, stride=2, strategy="only_first")
    return json.loads(tok.to_str())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    bpe = byte_level_bpe()
    files = {
        "bpe_byte_level": bpe,
        "bpe_byte_level_line_merges": with_line_merges(bpe),
        "bpe_llama2_byte_fallback": llama2_bpe(),
        "bpe_char_suffix": char_bpe(),
        "word_level": word_level(),
        "unigram": unigram(),
        "unigram_byte_fallback": unigram_byte_fallback(),
        "word_piece_prefix": word_piece_prefix(),
    }
    for name, data in files.items():
        Tokenizer.from_str(json.dumps(data))  # every file loads in the library
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"{path.name}: {path.stat().st_size} bytes, model {data['model']['type']}")


if __name__ == "__main__":
    main()
