"""Writes nn/tests/nn/dataloader_worker_seeds_golden.rs: torch 2.15's DataLoader worker semantics that
nn/tests/nn/dataloader_worker_seeds.rs checks oxtorch's worker threads against: which worker makes each batch,
each worker's seed as an offset from the epoch's base seed, the worker_init_fn calls a worker has
seen, grad mode on the worker while the main process is under no_grad, the grad/inference/autocast
modes workers take from the main process (forked, Linux's default start method: the modes when
the iterator is made), `get_worker_info()` on the main process, and the messages of a negative
and of an expired timeout.

torch's random streams are not oxtorch's (Philox), so no random value is compared; the seeds are
compared as offsets from the base seed.

Run with the reference python: /work/.refenv/bin/python nn/tests/make_dataloader_worker_seeds_golden.py
"""

import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, write_golden  # noqa: E402

INIT_CALLS = 0


def count_init(worker_id):
    global INIT_CALLS
    INIT_CALLS += 1


class Facts(Dataset):
    """Sample i: (worker id, worker seed, init calls seen by the worker, grad enabled)."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        info = get_worker_info()
        return torch.tensor([info.id, info.seed, INIT_CALLS, int(torch.is_grad_enabled())])


class Modes(Dataset):
    """Sample i: (grad enabled, inference mode, cpu autocast) on the worker."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.tensor(
            [torch.is_grad_enabled(), torch.is_inference_mode_enabled(), torch.is_autocast_enabled("cpu")]
        )


def worker_modes():
    """`(scenario, grad, inference, autocast)` as the workers see them."""
    loader = DataLoader(Modes(), batch_size=1, num_workers=1)
    seen = {}
    with torch.no_grad():
        seen["no_grad"] = [b[0].tolist() for b in loader]
    it = iter(loader)
    with torch.no_grad():
        seen["made_outside_no_grad"] = [b[0].tolist() for b in it]
    with torch.inference_mode():
        seen["inference_mode"] = [b[0].tolist() for b in loader]
    with torch.autocast("cpu"):
        seen["autocast"] = [b[0].tolist() for b in loader]
    seen["plain"] = [b[0].tolist() for b in loader]
    out = []
    for name, rows in seen.items():
        assert all(r == rows[0] for r in rows)
        out.append((name, *(bool(v) for v in rows[0])))
    return out


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(2.0)
        return torch.tensor([i])


def worker_facts(num_workers):
    """Per batch of one sample: (worker id, seed - base seed, init calls seen, grad enabled)."""
    loader = DataLoader(Facts(), batch_size=1, num_workers=num_workers, worker_init_fn=count_init)
    with torch.no_grad():
        it = iter(loader)
        base = it._base_seed
        rows = [b[0].tolist() for b in it]
    return [(w, s - base, calls, grad) for w, s, calls, grad in rows]


def main():
    lines = [generated_header("make_dataloader_worker_seeds_golden.py", "DataLoader workers"), ""]
    assert get_worker_info() is None
    lines.append("/// `torch.utils.data.get_worker_info()` on the main process is `None`.")
    lines.append("const MAIN_WORKER_INFO_IS_NONE: bool = true;")
    lines.append("")
    lines.append("/// `(num_workers, per batch of one sample: (worker id, seed - base_seed, worker_init_fn")
    lines.append("/// calls seen by the worker, grad enabled on the worker under the main's no_grad))`.")
    lines.append("const WORKER_FACTS: &[(usize, &[(usize, u64, usize, bool)])] = &[")
    for n in (1, 3):
        rows = ", ".join(f"({w}, {d}, {c}, {'true' if g else 'false'})" for w, d, c, g in worker_facts(n))
        lines.append(f"    ({n}, &[{rows}]),")
    lines.append("];")
    lines.append("")
    lines.append("/// `(scenario, grad enabled, inference mode, autocast)` on the workers (see dataloader_worker_seeds.rs).")
    lines.append("const WORKER_MODES: &[(&str, bool, bool, bool)] = &[")
    for name, g, i, a in worker_modes():
        lines.append(f'    ("{name}", {str(g).lower()}, {str(i).lower()}, {str(a).lower()}),')
    lines.append("];")
    lines.append("")
    try:
        DataLoader(Facts(), timeout=-1)
        raise AssertionError("a negative timeout must fail")
    except ValueError as e:
        negative = str(e)
    lines.append("/// torch's error for `DataLoader(ds, timeout=-1)`.")
    lines.append(f"const TIMEOUT_NEGATIVE: &str = {rust_str(negative)};")
    try:
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.25)))
        raise AssertionError("the batch must time out")
    except RuntimeError as e:
        expired = str(e)
    lines.append("/// torch's error for a batch that takes longer than `timeout=0.25`.")
    lines.append(f"const TIMED_OUT: &str = {rust_str(expired)};")
    print(write_golden("dataloader_worker_seeds_golden.rs", lines))


if __name__ == "__main__":
    main()
