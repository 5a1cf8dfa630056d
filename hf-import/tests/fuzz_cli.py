"""Dev-time robustness sweep of the `hf-import` binary: bad config values and bad inputs must give
one clear error line and a non-zero exit (or a normal run), never a panic, an abort, a hang or a
partial output file. Needs only Python's standard library.

    cargo build -p oxtorch-hf-import --bin hf-import
    python3 hf-import/tests/fuzz_cli.py [--bin target/debug/hf-import] [FIXTURE ...]

Each numeric key of a fixture's `config.json` (and of its nested objects, such as
`rope_parameters`) is set in turn to hostile values, and the model is run with `forward` and
`generate` (`embed` for sentence-transformers fixtures). Then the first fixture is run on hostile
`input_ids` / `attention_mask` / `position_ids` files. Problems are listed at the end; the exit
status is the number of problems (0: clean).
"""

import argparse
import copy
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
HOSTILE = [0, -1, 10**12, "x", None, 2.5, True, [], [1e30]]


def write_safetensors(path, tensors):
    """`tensors`: name -> (dtype name, shape, raw little-endian bytes)."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def i64(*values):
    return struct.pack(f"<{len(values)}q", *values)


HOSTILE_INPUTS = {
    "empty sequence": {"input_ids": ("I64", [1, 0], b"")},
    "empty batch": {"input_ids": ("I64", [0, 3], b"")},
    "1-D ids": {"input_ids": ("I64", [3], i64(1, 2, 3))},
    "3-D ids": {"input_ids": ("I64", [1, 1, 3], i64(1, 2, 3))},
    "negative id": {"input_ids": ("I64", [1, 3], i64(1, -5, 3))},
    "huge id": {"input_ids": ("I64", [1, 3], i64(1, 2**62, 3))},
    "long sequence": {"input_ids": ("I64", [1, 300], i64(*([1] * 300)))},
    "all masked": {"input_ids": ("I64", [1, 3], i64(1, 2, 3)), "attention_mask": ("I64", [1, 3], i64(0, 0, 0))},
    "mask shape": {"input_ids": ("I64", [1, 3], i64(1, 2, 3)), "attention_mask": ("I64", [1, 2], i64(1, 1))},
    "float mask": {
        "input_ids": ("I64", [1, 3], i64(1, 2, 3)),
        "attention_mask": ("F32", [1, 3], struct.pack("<3f", 1, 1, 1)),
    },
    "huge position": {"input_ids": ("I64", [1, 3], i64(1, 2, 3)), "position_ids": ("I64", [1, 3], i64(0, 1, 10**9))},
    "negative position": {"input_ids": ("I64", [1, 3], i64(1, 2, 3)), "position_ids": ("I64", [1, 3], i64(0, -1, 2))},
    "u8 ids": {"input_ids": ("U8", [1, 3], bytes([1, 2, 3]))},
    "no ids": {"attention_mask": ("I64", [1, 3], i64(1, 1, 1))},
}


class Sweep:
    def __init__(self, binary, work):
        self.binary, self.work, self.problems, self.runs = binary, work, [], 0
        self.inputs = os.path.join(work, "inputs.safetensors")
        self.output = os.path.join(work, "output.safetensors")

    def run(self, label, args):
        """Runs `hf-import ARGS` and records what a user must never see."""
        if os.path.exists(self.output):
            os.remove(self.output)
        self.runs += 1
        try:
            p = subprocess.run([self.binary] + args, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            self.problems.append((label, "no answer within 120 s"))
            return
        err = p.stderr.strip()
        if "panicked" in err or p.returncode not in (0, 1):
            self.problems.append((label, f"exit {p.returncode}: {err[-300:]}"))
        elif p.returncode == 1 and len(err.splitlines()) != 1:
            self.problems.append((label, f"an error of {len(err.splitlines())} lines: {err[-300:]}"))
        elif p.returncode == 1 and os.path.exists(self.output):
            self.problems.append((label, "an error, and an output file anyway"))

    def commands(self, model, sentence):
        if sentence:
            return [["embed", model, "--output", self.output, "hello world", "a b c"]]
        io = ["--inputs", self.inputs, "--output", self.output]
        return [["forward", model] + io, ["generate", model] + io + ["--max-new-tokens", "3", "--greedy"]]

    def configs(self, fixture):
        source = os.path.join(FIXTURES, fixture)
        with open(os.path.join(source, "config.json")) as f:
            config = json.load(f)
        sentence = os.path.exists(os.path.join(source, "modules.json"))
        write_safetensors(self.inputs, {"input_ids": ("I64", [1, 3], i64(1, 5, 7))})
        paths = [(k,) for k, v in config.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        for k, v in config.items():
            if isinstance(v, dict):
                paths += [(k, kk) for kk, vv in v.items() if isinstance(vv, (int, float, list)) and not isinstance(vv, bool)]
        model = os.path.join(self.work, "model")
        for path in paths:
            for value in HOSTILE:
                shutil.rmtree(model, ignore_errors=True)
                shutil.copytree(source, model)
                changed = copy.deepcopy(config)
                target = changed
                for key in path[:-1]:
                    target = target[key]
                target[path[-1]] = value
                with open(os.path.join(model, "config.json"), "w") as f:
                    json.dump(changed, f)
                for args in self.commands(model, sentence):
                    self.run(f"{fixture} {'.'.join(path)}={value!r} {args[0]}", args)

    def inputs_sweep(self, fixture):
        model = os.path.join(FIXTURES, fixture)
        for label, tensors in HOSTILE_INPUTS.items():
            write_safetensors(self.inputs, tensors)
            for args in self.commands(model, False):
                self.run(f"{fixture} input {label} {args[0]}", args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "..", "target", "debug", "hf-import"))
    parser.add_argument("fixtures", nargs="*", default=["llama_tied", "qwen2_yarn", "phi3_longrope", "gemma3", "bert", "sentence_tiny"])
    a = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="oxtorch-fuzz-") as work:
        sweep = Sweep(os.path.abspath(a.bin), work)
        for fixture in a.fixtures:
            sweep.configs(fixture)
        causal = [f for f in a.fixtures if not os.path.exists(os.path.join(FIXTURES, f, "modules.json"))]
        if causal:
            sweep.inputs_sweep(causal[0])
    print(f"{sweep.runs} runs, {len(sweep.problems)} problems")
    for label, what in sweep.problems:
        print(f"  {label}: {what}")
    sys.exit(min(len(sweep.problems), 255))


if __name__ == "__main__":
    main()
