"""Dev-time script: goldens for batched generation with stop strings (transformers' `generate`).

Run with the reference environment (no network):

    /work/.refenv/bin/python hf-import/tests/make_stop_generate_golden.py

Greedy `generate` of the `llama` fixture on its two prompts (the second left-padded), with the
byte-level BPE tokenizer of `fixtures/tokenizers/` for the stop strings, with and without an EOS
token and a pad token. transformers pads a row that completed a stop string only when an EOS token
is configured (`has_eos_stopping_criteria`); without one the row goes on with its own tokens, and
the batch stops once every row has finished either way. Writes
`fixtures/stop_strings_generate.json`; the Rust test (`src/generate.rs`,
`batched_stop_strings_pad_rows_as_transformers`) replays it.
"""

import json
from pathlib import Path

import torch
import transformers as tf
from transformers import PreTrainedTokenizerFast

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
MAX_NEW_TOKENS = 12
# (stop strings, eos_token_id, pad_token_id); the fixture's new tokens read "8WJJJJJJJ7Jh" and
# "iKiKiKi&d/r<|endoftext|>", and its EOS token (2) is never generated.
CASES = [
    (["W", "d"], None, 0),
    (["W"], None, None),
    (["W", "&"], None, 5),
    (["W", "d"], [2], 0),
    (["W", "&"], [2], None),
    (["J"], [2], 5),
]


def main():
    model = tf.LlamaForCausalLM.from_pretrained(FIXTURES / "llama", attn_implementation="eager").eval()
    # The checkpoint's EOS token (config.json) would otherwise fill in an unset one.
    model.generation_config.eos_token_id = None
    tok = PreTrainedTokenizerFast(tokenizer_file=str(FIXTURES / "tokenizers" / "bpe_byte_level.json"))
    ids = torch.tensor([[1, 17, 42, 5, 99, 23, 8], [0, 0, 3, 64, 12, 77, 30]], dtype=torch.int64)
    mask = torch.tensor([[1] * 7, [0, 0] + [1] * 5], dtype=torch.int64)
    cases = []
    for stops, eos, pad in CASES:
        gc = tf.GenerationConfig(
            max_new_tokens=MAX_NEW_TOKENS, do_sample=False, stop_strings=stops, eos_token_id=eos, pad_token_id=pad
        )
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=gc, tokenizer=tok)
        cases.append({"stop_strings": stops, "eos_token_id": eos, "pad_token_id": pad, "output_ids": out.tolist()})
        print(stops, eos, pad, out.tolist())
    golden = {
        "input_ids": ids.tolist(),
        "attention_mask": mask.tolist(),
        "max_new_tokens": MAX_NEW_TOKENS,
        "cases": cases,
    }
    (FIXTURES / "stop_strings_generate.json").write_text(json.dumps(golden) + "\n")


if __name__ == "__main__":
    main()
