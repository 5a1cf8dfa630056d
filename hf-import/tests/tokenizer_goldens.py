"""Dev-time helpers shared by the tokenizer golden scripts (`make_nllb_tokenizer_golden.py`,
`make_mbart_tokenizer_golden.py`, `make_spm_tokenizer_golden.py`, the vocabulary-folder ones): a cut
SentencePiece charsmap, a config's folder laid out, and transformers' ids for each tokenizer config of one
`tokenizer.json`."""

import base64
import glob
import json
import tempfile
from pathlib import Path

from tokenizers import normalizers
from transformers import AutoTokenizer

from make_xlmr_tokenizer_golden import CHARSMAP, subset_charsmap


def cut_charsmap(texts):
    """The real nmt_nfkc charsmap (the `spm_precompiled` crate's test file) cut to the entries `texts` reach,
    checked to normalize each of them as the full one does."""
    paths = sorted(glob.glob(CHARSMAP))
    if not paths:
        raise SystemExit(f"no SentencePiece charsmap at {CHARSMAP} (the spm_precompiled crate's test.json)")
    full = base64.b64decode(json.loads(Path(paths[-1]).read_text())["precompiled_charsmap"])
    small, _ = subset_charsmap(full, texts)
    for text in texts:
        assert normalizers.Precompiled(small).normalize_str(text) == normalizers.Precompiled(full).normalize_str(text)
    return small


def trained_spm(corpus, texts, **trainer):
    """A SentencePiece model trained on `corpus` with the `trainer` settings, its charsmap cut to the entries `texts`
    reach (checked to normalize each as the full one): the serialized model and its normal pieces."""
    import io

    import sentencepiece as spm
    from transformers.convert_slow_tokenizer import import_protobuf

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=model, character_coverage=1.0,
                                   num_threads=1, minloglevel=2, **trainer)
    proto = import_protobuf().ModelProto()
    proto.ParseFromString(model.getvalue())
    full = proto.normalizer_spec.precompiled_charsmap
    small, _ = subset_charsmap(full, texts)
    for text in texts:
        assert normalizers.Precompiled(small).normalize_str(text) == normalizers.Precompiled(full).normalize_str(text)
    proto.normalizer_spec.precompiled_charsmap = small
    return proto.SerializeToString(), [p.piece for p in proto.pieces if p.type == 1]


def lay_out(root, name, source, files, config, model_type=None, special_tokens_map=None):
    """The folder `root/name` of one tokenizer config, as the Rust tests lay it out (`golden_folder`): `files` copied
    from `source`, `tokenizer_config.json`, and where given `config.json` with the model type and
    `special_tokens_map.json`."""
    folder = Path(root) / name
    folder.mkdir()
    for file in files:
        (folder / file).write_bytes((Path(source) / file).read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    if model_type is not None:
        (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    if special_tokens_map is not None:
        (folder / "special_tokens_map.json").write_text(json.dumps(special_tokens_map))
    return folder


def record(tok, texts):
    """`tok`'s ids of `texts` without and with special tokens, the latter decoded, and the texts as one padded
    batch (when the tokenizer has a pad token)."""
    batch = tok(texts, padding=True) if tok.pad_token is not None else None
    return {
        "plain": [tok(t, add_special_tokens=False)["input_ids"] for t in texts],
        "special": [tok(t)["input_ids"] for t in texts],
        "batch": batch and {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]},
        "decoded": [tok.decode(tok(t)["input_ids"], skip_special_tokens=True) for t in texts],
    }


def record_configs(tok_path, data, configs, texts, out_path, shown=2):
    """Writes `out_path`: `texts`, each of `configs` (with the file's added tokens as `added_tokens_decoder`) and
    transformers' ids under it for the `tokenizer.json` `data` saved at `tok_path`."""
    tok_path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    decoder = {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in data["added_tokens"]}
    configs = {name: {"added_tokens_decoder": decoder} | cfg for name, cfg in configs.items()}
    out = {"texts": texts, "configs": configs, "ids": {}}
    with tempfile.TemporaryDirectory() as root:
        for name, config in configs.items():
            folder = Path(root) / name
            folder.mkdir()
            (folder / "tokenizer.json").write_text(tok_path.read_text(encoding="utf-8"), encoding="utf-8")
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
            tok = AutoTokenizer.from_pretrained(folder)
            out["ids"][name] = record(tok, texts)
            print(name, type(tok).__name__, out["ids"][name]["special"][0], out["ids"][name]["plain"][shown])
    out_path.write_text(json.dumps(out, ensure_ascii=False) + "\n")
