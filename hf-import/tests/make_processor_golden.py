"""Dev-time script: transformers' greedy `generate` on the tiny `llama` fixture under the logits
processors that ban tokens (no_repeat_ngram_size, bad_words_ids, suppress_tokens,
begin_suppress_tokens, forced_eos_token_id, min_new_tokens with a repetition penalty).

Run with the reference environment after `make_fixtures.py` (torch + transformers 5, no network):

    /work/.refenv/bin/python hf-import/tests/make_processor_golden.py

The banned tokens are taken from the unconstrained output, so that every ban changes it. Writes
`fixtures/llama/generate_processors.safetensors`: the prompts, the settings as int64 tensors and,
per case, `output_ids.<case>`; `tests/cpu/generate_processors.rs` replays them.
"""

from pathlib import Path

import torch
import transformers as tf
from safetensors.torch import save_file

DIR = Path(__file__).resolve().parent / "fixtures" / "llama"


def main():
    model = tf.LlamaForCausalLM.from_pretrained(DIR, dtype=torch.float32, attn_implementation="eager").eval()
    ids = torch.tensor([[1, 17, 42, 5, 99, 23, 8], [0, 0, 3, 64, 12, 77, 30]], dtype=torch.int64)
    mask = torch.tensor([[1] * 7, [0, 0] + [1] * 5], dtype=torch.int64)

    def run(**kw):
        with torch.no_grad():
            return model.generate(
                input_ids=ids, attention_mask=mask, do_sample=False, pad_token_id=0, max_new_tokens=12, **kw
            )

    plain = run()
    new = plain[:, 7:]
    # Tokens of the unconstrained output: the first new token, a later one, and a later bigram.
    first, later = int(new[0, 0]), int(new[1, 3])
    bigram = [int(new[0, 4]), int(new[0, 5])]
    settings = {
        "begin_suppress_tokens": torch.tensor([first]),
        "suppress_tokens": torch.tensor([later]),
        "bad_words_ids.0": torch.tensor(bigram),
        "bad_words_ids.1": torch.tensor([int(new[1, 0])]),
        "forced_eos_token_id": torch.tensor([41]),
    }
    cases = {
        "plain": plain,
        "ngram": run(no_repeat_ngram_size=2),
        "bans": run(
            begin_suppress_tokens=[first],
            suppress_tokens=[later],
            bad_words_ids=[bigram, [int(new[1, 0])]],
        ),
        "forced": run(forced_eos_token_id=41, min_new_tokens=5, repetition_penalty=1.5, max_length=None),
    }
    for name, out in cases.items():
        print(name, out[:, 7:].tolist())
    out = {"input_ids": ids, "attention_mask": mask, **settings}
    out.update({f"output_ids.{k}": v.contiguous() for k, v in cases.items()})
    save_file(out, str(DIR / "generate_processors.safetensors"))


if __name__ == "__main__":
    main()
