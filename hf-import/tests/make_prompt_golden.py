"""Dev-time script: sentence-transformers prompts on the tiny `sentence_tiny` fixture.

Run with the reference environment after `make_fixtures.py` (sentence-transformers 6, no network):

    /work/.refenv/bin/python hf-import/tests/make_prompt_golden.py

A copy of the fixture gets `prompts` and a `default_prompt_name` in
`config_sentence_transformers.json` (see `PROMPTS` below), with `include_prompt` true and then
false in `1_Pooling/config.json`; `encode` runs with the default prompt, a named one, an explicit
one and none. Writes `fixtures/sentence_tiny/prompts.safetensors` (`embeddings.<case>`, the
sentences in the metadata); `tests/cpu/sentence.rs` builds the same folders and replays them.
"""

import json
import shutil
import tempfile
from pathlib import Path

from safetensors.torch import save_file
from sentence_transformers import SentenceTransformer

SRC = Path(__file__).resolve().parent / "fixtures" / "sentence_tiny"
SENTENCES = ["the cat sits on the mat", "how do i bake bread ?", "red"]
PROMPTS = {"query": "what is it : ", "document": "", "title": "a book"}
EXPLICIT = "one two three "


def folder(root, include_prompt, mode="mean"):
    path = Path(root) / f"include_{include_prompt}_{mode}"
    shutil.copytree(SRC, path)
    (path / "prompts.safetensors").unlink(missing_ok=True)
    st = json.loads((path / "config_sentence_transformers.json").read_text())
    st.update(prompts=PROMPTS, default_prompt_name="query")
    (path / "config_sentence_transformers.json").write_text(json.dumps(st))
    pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
    pooling["include_prompt"] = include_prompt
    pooling["pooling_mode"] = mode
    (path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return SentenceTransformer(str(path), device="cpu")


def main():
    out = {}
    with tempfile.TemporaryDirectory() as root:
        for include in [True, False]:
            model = folder(root, include)
            cases = {
                "default": model.encode(SENTENCES, convert_to_tensor=True),
                "title": model.encode(SENTENCES, prompt_name="title", convert_to_tensor=True),
                "document": model.encode(SENTENCES, prompt_name="document", convert_to_tensor=True),
                "explicit": model.encode(SENTENCES, prompt=EXPLICIT, convert_to_tensor=True),
            }
            for name, emb in cases.items():
                out[f"embeddings.{name}.include_{str(include).lower()}"] = emb.float().contiguous()
        # Weighted mean without the prompt: weights count from the first token of the whole input.
        model = folder(root, False, "weightedmean")
        out["embeddings.weighted.include_false"] = model.encode(SENTENCES, convert_to_tensor=True).float().contiguous()
    meta = {"sentences": json.dumps(SENTENCES), "prompts": json.dumps(PROMPTS), "explicit": EXPLICIT}
    save_file(out, str(SRC / "prompts.safetensors"), metadata=meta)
    print(sorted(out))


if __name__ == "__main__":
    main()
