"""Writes tests/fixtures/pytorch_checkpoints/: small PyTorch checkpoints for the differential test of
`read_pytorch` (tests/cpu/pytorch_checkpoints.rs), with `manifest.json` and `expected.safetensors`.

Good files are written by `torch.save` (every dtype oxtorch has, shared storages and views, 0-d and
empty tensors, nested checkpoints, a full module, pickle protocols 1/2/4/5, the legacy format, a
renamed archive, parameters) and read back with `torch.load`: what torch reads, flattened to dotted
names as oxtorch does ({"a": {"b": t}} -> "a.b", lists by index), is stored contiguous in
`expected.safetensors` under `<file>/<key>`. Bad files (unsupported dtypes, sparse/quantized
tensors, a root that is not a dict, code-running globals, corrupt zips and pickles, huge claimed
sizes, unknown opcodes) must be an `Err` whose text holds every `error_contains` substring.

Dev-time only (needs torch, numpy and safetensors): `python hf-import/tests/make_pytorch_checkpoints_fixtures.py`.
"""

import argparse
import io
import json
import os
import pickle
import shutil
import struct
import tempfile
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch
import torch.utils.serialization
from safetensors.torch import save_file

OUT = Path(__file__).resolve().parent / "fixtures" / "pytorch_checkpoints"
torch.manual_seed(34)

RUST_DTYPE = {
    torch.float32: "F32",
    torch.float64: "F64",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.bool: "Bool",
}

files = []  # manifest entries
expected = {}  # "<file>/<key>" -> contiguous tensor


# ---------------------------------------------------------------------------------------------
# Good files: torch.save, then torch.load for the expected values.
# ---------------------------------------------------------------------------------------------


def flatten(obj, prefix, out):
    """The tensors of `obj` under dotted names, the walk oxtorch's reader makes."""
    if isinstance(obj, torch.Tensor):
        out[".".join(prefix)] = obj
    elif isinstance(obj, torch.nn.Module):
        flatten(obj.state_dict(keep_vars=True), prefix, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, prefix + [str(k)], out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, prefix + [str(i)], out)


def tied_pairs(tensors):
    """Pairs of keys that view the same elements of one storage (tied weights)."""
    keys = sorted(tensors)
    pairs = []
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            ta, tb = tensors[a], tensors[b]
            if (
                ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()
                and ta.storage_offset() == tb.storage_offset()
                and ta.shape == tb.shape
                and ta.stride() == tb.stride()
                and ta.dtype == tb.dtype
            ):
                pairs.append([a, b])
    return pairs


def record_ok(name, note):
    """Reads `name` back with torch.load and records its tensors as what oxtorch must read."""
    loaded = torch.load(OUT / name, weights_only=False)
    tensors = {}
    flatten(loaded, [], tensors)
    entry = {"file": name, "ok": True, "note": note, "tensors": {}, "tied": tied_pairs(tensors)}
    for key, t in sorted(tensors.items()):
        t = t.detach()
        entry["tensors"][key] = {"dtype": RUST_DTYPE[t.dtype], "shape": list(t.shape)}
        expected[f"{name}/{key}"] = t.contiguous().clone()
    files.append(entry)


def save_ok(name, obj, note, **kw):
    torch.save(obj, OUT / name, **kw)
    record_ok(name, note)


def special(dtype):
    """A 3x4 tensor of `dtype` with its edge values (NaN, infinities, -0, subnormals, min/max)."""
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        vals = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"), fi.max, fi.min, fi.tiny,
                fi.smallest_normal / 4, 3.0e-3]
        return torch.tensor(vals, dtype=torch.float64).to(dtype).reshape(3, 4)
    if dtype == torch.bool:
        return torch.tensor([True, False, True, True, False, False, True, False, False, True, True, False]).reshape(3, 4)
    ii = torch.iinfo(dtype)
    vals = [0, 1, -1 if ii.min < 0 else 2, ii.min, ii.max, 7, 100, ii.max - 1, ii.min + 1, 42, 3, 5]
    return torch.tensor(vals, dtype=torch.int64).to(dtype).reshape(3, 4)


def good_files():
    for dtype, rust in RUST_DTYPE.items():
        x = special(dtype)
        save_ok(f"dt_{rust.lower()}.pt", {"x": x, "scalar": x[1, 2].clone(), "row": x[2].clone()},
                f"dtype {dtype}: edge values, a 0-d tensor")

    save_ok("all_dtypes.bin", {f"w_{r.lower()}": special(d) for d, r in RUST_DTYPE.items()},
            "every supported dtype in one file (a pytorch_model.bin)")

    w = torch.randn(5, 4)
    save_ok("tied.pt", {"embed.weight": w, "lm_head.weight": w, "norm.weight": torch.ones(4)},
            "tied weights: two keys on one storage")

    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    cube = torch.arange(60, dtype=torch.int64).reshape(3, 4, 5)
    vec = torch.arange(4, dtype=torch.float16)
    save_ok(
        "views.pt",
        {
            "base": base,
            "offset_view": base[1:],
            "row": base[2],
            "col": base[:, 3],
            "t": base.t(),
            "step": base[::2, 1::2],
            "block": base[1:3, 2:5],
            "expand": vec.expand(3, 4),
            "expand_col": vec.unsqueeze(1).expand(4, 3),
            "permute": cube.permute(2, 0, 1),
            "cube_step": cube[:, ::3, 1::2],
            "flip_t": cube[1].t(),
        },
        "views of shared storages: offsets, transposes, steps, expands, permutes",
    )
    save_ok("view_alone.pt", {"block": torch.arange(40, dtype=torch.float64).reshape(5, 8)[1:4, 2:7]},
            "a view saved alone: the whole storage is written, the tensor has an offset and strides")
    big = torch.randn(70, 40)
    save_ok("big_transpose.pt", {"lin.weight": big.t(), "lin.bias": torch.randn(70)},
            "a 40x70 transposed matrix (tiled transpose path)")

    save_ok(
        "zero_d_empty.pt",
        {
            "scalar_f": torch.tensor(3.5),
            "scalar_i": torch.tensor(-7),
            "scalar_b": torch.tensor(True),
            "empty": torch.zeros(0, 3),
            "empty1": torch.zeros(0, dtype=torch.int64),
            "empty_mid": torch.zeros(2, 0, 3, dtype=torch.float16),
            "one": torch.ones(1),
            "ones_dims": torch.full((1, 1, 1), 2.0, dtype=torch.bfloat16),
        },
        "0-d, empty and size-1 tensors",
    )

    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2),
                              torch.nn.BatchNorm1d(2))
    save_ok("state_dict.pt", net.state_dict(), "an OrderedDict state_dict with _metadata and num_batches_tracked")

    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.randn(5, 4)).sum().backward()
    opt.step()
    ckpt = {
        "model": net.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": 3,
        "args": argparse.Namespace(lr=0.1, name="run"),
        "best_acc": np.float64(0.5),
        "layers": [torch.randn(2), (torch.randn(3), torch.arange(2))],
        "int_keys": {0: torch.randn(2, 2), 1: torch.ones(1, dtype=torch.int32)},
        "meta": {"tags": {"a", "b"}, "device": torch.device("cpu"), "dtype": torch.float16, "none": None},
    }
    save_ok("nested_ckpt.pt", ckpt,
            "a training checkpoint: model + optimizer dicts, Namespace, numpy scalar, lists, int keys")

    save_ok("full_module.pt", torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)),
            "torch.save(module): read as its state_dict")

    proto = {"w": torch.randn(3, 2), "b": torch.arange(3, dtype=torch.int32), "t": torch.randn(2, 3).t()}
    for p in (1, 2, 4, 5):
        save_ok(f"proto{p}.pt", proto, f"pickle_protocol={p}", pickle_protocol=p)
    save_ok("proto5_bytearray.pt", {"w": torch.randn(2), "blob": bytearray(b"xyz" * 10)},
            "protocol 5 with a bytearray (BYTEARRAY8) beside the tensor", pickle_protocol=5)

    lw = torch.randn(3, 4)
    save_ok(
        "legacy.pt",
        {"w": lw, "tied": lw, "view": lw[1:], "t": lw.t(), "i": torch.arange(5), "h": torch.randn(2, dtype=torch.float16),
         "b": torch.tensor([True, False])},
        "_use_new_zipfile_serialization=False (the legacy stream)",
        _use_new_zipfile_serialization=False,
    )

    # torch names the zip's top folder after the file stem: renamed after saving.
    tmp = Path(tempfile.mkdtemp())
    torch.save({"w": torch.randn(2, 3)}, tmp / "inner_name.pt")
    shutil.move(tmp / "inner_name.pt", OUT / "renamed_archive.bin")
    shutil.rmtree(tmp)
    record_ok("renamed_archive.bin", "zip whose top folder (inner_name/) is not the file stem")
    buf = io.BytesIO()
    torch.save({"w": torch.randn(2, 3)}, buf)
    (OUT / "buffer_saved.pt").write_bytes(buf.getvalue())
    record_ok("buffer_saved.pt", "saved to a BytesIO: top folder archive/")

    # The zip's top folder is the file stem: one of 21 characters once made the archive unreadable.
    save_ok("model_checkpoint_best.pt", {"w": torch.randn(2, 3), "b": torch.zeros(2)},
            "a file stem (zip top folder) of exactly 21 characters")

    p = torch.nn.Parameter(torch.randn(2, 3))
    save_ok(
        "params.pt",
        {"p": p, "frozen": torch.nn.Parameter(torch.randn(3), requires_grad=False), "g": torch.randn(3, requires_grad=True),
         "p_again": p},
        "nn.Parameter (_rebuild_parameter) and requires_grad tensors",
    )

    torch.utils.serialization.config.save.compute_crc32 = False
    save_ok("no_crc32.pt", {"w": torch.randn(4)}, "saved with compute_crc32=False (CRC 0 in the zip)")
    torch.utils.serialization.config.save.compute_crc32 = True

    save_ok("odd_keys.pt", {"a.b": torch.ones(1), "": torch.zeros(1), "ü/ß key": torch.arange(2)},
            "keys with a dot, empty and non-ASCII")

    write_zip("crafted_ok.pt", {"w": FakeTensor(FakeStorage("0", 6), 0, (2, 3), (3, 1)),
                                "wt": FakeTensor(FakeStorage("0", 6), 0, (3, 2), (1, 3))},
              {"0": np.arange(6, dtype="<f4").tobytes()})
    assert torch.load(OUT / "crafted_ok.pt", weights_only=True)["wt"].tolist() == [[0, 3], [1, 4], [2, 5]]
    record_ok("crafted_ok.pt", "control for the hand-written zips below (torch.load reads it)")

    (OUT / "plain_pickle.pkl").write_bytes(pickle.dumps({"lr": 0.1, "layers": [1, 2]}, protocol=2))
    files.append({"file": "plain_pickle.pkl", "ok": True, "tensors": {}, "tied": [],
                  "note": "a plain pickle of a dict without tensors: nothing to read, not an error"})


# ---------------------------------------------------------------------------------------------
# Hand-written checkpoints: a pickler whose globals, storages and raw opcodes are chosen freely.
# ---------------------------------------------------------------------------------------------


class Glob:
    """A GLOBAL `module name`, written as is (nothing is imported)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise RuntimeError("never called")


class Raw:
    """Pickle bytes written verbatim; they must push exactly one object."""

    def __init__(self, data):
        self.data = data


class Call:
    """`func(*args)` as a REDUCE."""

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


class FakeStorage:
    def __init__(self, key, numel, stype="FloatStorage"):
        self.key, self.numel, self.stype = key, numel, stype


class FakeTensor:
    def __init__(self, storage, offset, shape, stride, v3_dtype=None):
        self.storage, self.offset, self.shape, self.stride, self.v3_dtype = storage, offset, shape, stride, v3_dtype

    def __reduce__(self):
        args = (self.storage, self.offset, tuple(self.shape), tuple(self.stride), False, OrderedDict())
        if self.v3_dtype is not None:
            return (Glob("torch._utils", "_rebuild_tensor_v3"), args + (Glob("torch", self.v3_dtype),))
        return (Glob("torch._utils", "_rebuild_tensor_v2"), args)


class CraftPickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)

    def save_glob(self, obj):
        self.write(b"c" + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")

    def save_raw(self, obj):
        self.write(obj.data)

    dispatch[Glob] = save_glob
    dispatch[Raw] = save_raw

    def persistent_id(self, obj):
        if isinstance(obj, FakeStorage):
            stype = Glob("torch", obj.stype) if isinstance(obj.stype, str) else obj.stype
            return ("storage", stype, obj.key, "cpu", obj.numel)
        return None


def craft_pickle(obj, protocol=2):
    buf = io.BytesIO()
    CraftPickler(buf, protocol=protocol).dump(obj)
    return buf.getvalue()


def write_zip(name, obj, storages, pkl=None, archive="archive"):
    """A torch-style zip: archive/data.pkl (crafted from `obj`, or the bytes `pkl`), data/<key>."""
    with zipfile.ZipFile(OUT / name, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{archive}/data.pkl", craft_pickle(obj) if pkl is None else pkl)
        z.writestr(f"{archive}/byteorder", b"little")
        for key, data in storages.items():
            z.writestr(f"{archive}/data/{key}", data)
        z.writestr(f"{archive}/version", b"3\n")


def rezip(src, name, transform):
    """A copy of the zip `src` with each entry passed through `transform(name, bytes)` (None drops it)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(OUT / name, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = transform(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)


def bad(name, contains, note):
    files.append({"file": name, "ok": False, "error_contains": contains, "note": note})


F32_6 = {"0": np.arange(6, dtype="<f4").tobytes()}


def w6():
    return FakeTensor(FakeStorage("0", 6), 0, (2, 3), (3, 1))


def bad_files():
    # Dtypes torch saves that oxtorch lacks: the error must name the tensor and its dtype.
    for dtype, key, what in [
        (torch.complex64, "zcomplex64_weight", "Complex"),
        (torch.complex128, "zcomplex128_weight", "Complex"),
        (torch.float8_e4m3fn, "zfp8_e4m3_weight", "float8_e4m3fn"),
        (torch.float8_e5m2, "zfp8_e5m2_weight", "float8_e5m2"),
        (torch.uint16, "zu16_weight", "U16"),
        (torch.uint32, "zu32_weight", "U32"),
        (torch.uint64, "zu64_weight", "U64"),
    ]:
        # Stems stay off 21 characters, a case of its own (model_checkpoint_best.pt).
        name = f"unsup_{str(dtype).removeprefix('torch.')}.pt"
        t = torch.arange(6).reshape(2, 3).to(dtype) if not dtype.is_complex else torch.randn(2, 3, dtype=dtype)
        torch.save({"a_ok": torch.ones(2), key: t}, OUT / name)
        # Complex and float8 storages are refused while the pickle is parsed, before the tensor
        # has a name: their error names the dtype only.
        named = not (dtype.is_complex or "float8" in str(dtype))
        bad(name, [key, what] if named else [what], f"dtype {dtype}, which oxtorch does not support")

    torch.save({"sp": torch.eye(3).to_sparse()}, OUT / "sparse.pt")
    bad("sparse.pt", ["sparse"], "a sparse COO tensor (_rebuild_sparse_tensor)")
    q = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)
    torch.save({"q": q}, OUT / "quantized.pt")
    bad("quantized.pt", ["QInt8"], "a quantized tensor (QInt8Storage)")
    torch.save(torch.randn(3), OUT / "root_tensor.pt")
    bad("root_tensor.pt", ["dictionary", "torch.Tensor"], "torch.save(tensor): the root is not a dict")
    torch.save([torch.randn(3)], OUT / "root_list.pt")
    bad("root_list.pt", ["dictionary", "list"], "torch.save([tensor]): the root is not a dict")

    # Code-running globals: reading must never call them, and must refuse them by name.
    write_zip("evil_os_system.pt", {"w": w6(), "evil": Call(Glob("os", "system"), ("touch /tmp/pytorch_checkpoints_pwned",))},
              F32_6)
    bad("evil_os_system.pt", ["os.system"], "GLOBAL os.system + REDUCE beside a good tensor")
    write_zip("evil_eval.pt", {"w": w6(), "cfg": {"x": Call(Glob("builtins", "eval"), ("__import__('os')",))}}, F32_6)
    bad("evil_eval.pt", ["builtins.eval"], "GLOBAL builtins.eval + REDUCE nested in a dict")
    write_zip("evil_popen_newobj.pt",
              {"w": w6(), "p": Raw(b"csubprocess\nPopen\nX\x04\x00\x00\x00true\x85\x81")}, F32_6)
    bad("evil_popen_newobj.pt", ["subprocess.Popen"], "GLOBAL subprocess.Popen + NEWOBJ")
    write_zip("evil_on_tensor.pt", {"w": Call(Glob("os", "system"), (w6(),))}, F32_6)
    bad("evil_on_tensor.pt", ["os.system"], "os.system called on a tensor")
    write_zip("evil_root.pt", Call(Glob("os", "system"), ("true",)), {})
    bad("evil_root.pt", ["os.system"], "the root object is os.system(...)")

    # Corrupt containers.
    good = (OUT / "proto2.pt").read_bytes()
    (OUT / "truncated_zip.pt").write_bytes(good[: len(good) * 6 // 10])
    bad("truncated_zip.pt", ["zip archive error"], "a zip cut at 60%: no central directory")
    (OUT / "truncated_header.pt").write_bytes(good[:10])
    bad("truncated_header.pt", ["zip archive error"], "the first 10 bytes of a zip")
    (OUT / "empty_file.bin").write_bytes(b"")
    bad("empty_file.bin", ["not a PyTorch checkpoint"], "an empty file")
    (OUT / "not_a_checkpoint.bin").write_bytes(b"hello, this is not a checkpoint\n" * 4)
    bad("not_a_checkpoint.bin", ["not a PyTorch checkpoint"], "text")
    legacy = (OUT / "legacy.pt").read_bytes()
    (OUT / "legacy_truncated.pt").write_bytes(legacy[: len(legacy) - 20])
    bad("legacy_truncated.pt", ["beyond the end of the file"], "the legacy stream without its last 20 bytes")

    write_zip("short_storage.pt", {"w": w6()}, {"0": np.arange(3, dtype="<f4").tobytes()})
    bad("short_storage.pt", ["'w'", "available"], "storage 0 holds 3 of the 6 floats the pickle declares")
    write_zip("missing_storage.pt", {"a": FakeTensor(FakeStorage("0", 6), 0, (6,), (1,)),
                                     "b": FakeTensor(FakeStorage("1", 6), 0, (6,), (1,))}, F32_6)
    bad("missing_storage.pt", ["'b'", "not found"], "data/1 is referenced but absent")
    write_zip("no_data_pkl.pt", {}, F32_6, pkl=b"")
    rezip(OUT / "no_data_pkl.pt", "no_data_pkl.pt.tmp", lambda n, d: None if n.endswith("data.pkl") else d)
    os.replace(OUT / "no_data_pkl.pt.tmp", OUT / "no_data_pkl.pt")
    bad("no_data_pkl.pt", ["data.pkl"], "a zip without data.pkl")
    rezip(OUT / "proto2.pt", "wrong_dtype_string.pt",
          lambda n, d: d.replace(b"FloatStorage", b"FlortStorage") if n.endswith("data.pkl") else d)
    bad("wrong_dtype_string.pt", ["FlortStorage"], "storage class torch.FlortStorage")
    rezip(OUT / "proto2.pt", "truncated_pickle.pt", lambda n, d: d[: len(d) // 2] if n.endswith("data.pkl") else d)
    bad("truncated_pickle.pt", ["pickle"], "data.pkl cut in half")
    write_zip("crc_mismatch.pt", {"w": w6()}, F32_6)
    with zipfile.ZipFile(OUT / "crc_mismatch.pt") as z:
        info = z.getinfo("archive/data/0")
    data = bytearray((OUT / "crc_mismatch.pt").read_bytes())
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    data[info.header_offset + 30 + name_len + extra_len] ^= 0x40  # first byte of the storage
    (OUT / "crc_mismatch.pt").write_bytes(bytes(data))
    bad("crc_mismatch.pt", ["'w'", "checksum"], "a storage byte flipped after the CRC was written")

    # Sizes the file cannot back: an error, never a huge allocation.
    write_zip("huge_numel.pt", {"w": FakeTensor(FakeStorage("0", 1 << 40), 0, (1 << 40,), (1,))}, F32_6)
    bad("huge_numel.pt", ["byte limit"], "4 TiB claimed, 24 bytes stored")
    write_zip("huge_expand.pt", {"w": FakeTensor(FakeStorage("0", 1), 0, (1 << 20, 1 << 20), (0, 0))}, F32_6)
    bad("huge_expand.pt", ["byte limit"], "a 2^20 x 2^20 expand (stride 0) of one float: 4 TiB to materialize")
    write_zip("big_claim_small_data.pt", {"w": FakeTensor(FakeStorage("0", 1 << 30), 0, (1 << 30,), (1,))}, F32_6)
    bad("big_claim_small_data.pt", ["'w'", "available"], "4 GiB claimed (under the size limit), 24 bytes stored")
    write_zip("overflow_shape.pt", {"w": FakeTensor(FakeStorage("0", 6), 0, (1 << 62, 1 << 62), (0, 0))}, F32_6)
    bad("overflow_shape.pt", ["overflows"], "a shape whose element count overflows usize")
    write_zip("offset_out_of_range.pt", {"w": FakeTensor(FakeStorage("0", 6), 100, (2,), (1,))}, F32_6)
    bad("offset_out_of_range.pt", ["declares 6"], "storage offset 100 in a storage of 6")
    write_zip("negative_dim.pt", {"w": FakeTensor(FakeStorage("0", 6), 0, (-1,), (1,))}, F32_6)
    bad("negative_dim.pt", ["non-negative"], "shape (-1,)")
    write_zip("stride_rank.pt", {"w": FakeTensor(FakeStorage("0", 6), 0, (2, 3), (1,))}, F32_6)
    bad("stride_rank.pt", ["rank"], "a 2-d shape with a 1-d stride")
    write_zip("v3_dtype_mismatch.pt", {"w": FakeTensor(FakeStorage("0", 6), 0, (6,), (1,), v3_dtype="int64")},
              F32_6)
    bad("v3_dtype_mismatch.pt", ["F32", "I64"], "_rebuild_tensor_v3: FloatStorage read as torch.int64")

    # Pickle streams the reader must refuse.
    write_zip("bad_opcode.pt", None, {}, pkl=b"\x80\x02}q\x00\xff.")
    bad("bad_opcode.pt", ["0xff"], "byte 0xff is no pickle opcode")
    write_zip("next_buffer.pt", None, {}, pkl=b"\x80\x05\x95\x03\x00\x00\x00\x00\x00\x00\x00\x97\x94.")
    bad("next_buffer.pt", ["NextBuffer"], "protocol 5 NEXT_BUFFER (an out-of-band buffer)")
    write_zip("readonly_buffer.pt", None, {}, pkl=b"\x80\x05}\x98.")
    bad("readonly_buffer.pt", ["ReadonlyBuffer"], "protocol 5 READONLY_BUFFER")
    write_zip("ext1.pt", None, {}, pkl=b"\x80\x02\x82\x01.")
    bad("ext1.pt", ["Ext1"], "EXT1 (the copyreg extension registry)")
    write_zip("protocol9.pt", None, {}, pkl=b"\x80\x09}.")
    bad("protocol9.pt", ["protocol"], "pickle protocol 9")
    write_zip("stack_underflow.pt", None, {}, pkl=b"\x80\x02s.")
    bad("stack_underflow.pt", ["stack underflow"], "SETITEM on an empty stack")
    # 1001 ints memoized, then fetched 2000 times: 2 million copied nodes.
    bomb = b"\x80\x02(" + b"K\x01" * 1000 + b"lq\x00(" + b"h\x00" * 2000 + b"l."
    write_zip("memo_bomb.pt", None, {}, pkl=bomb)
    bad("memo_bomb.pt", ["memo bomb"], "a memo fetched until it would copy 2 million nodes")
    deep = b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b"."
    write_zip("deep_nesting.pt", None, {}, pkl=deep)
    bad("deep_nesting.pt", ["nesting exceeds"], "lists nested 5000 deep")
    (OUT / "plain_pickle_persid.pkl").write_bytes(b"\x80\x02}X\x01\x00\x00\x00wX\x01\x00\x00\x000Qs.")
    bad("plain_pickle_persid.pkl", ["no tensor data"], "a plain pickle naming a storage it cannot hold")


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    good_files()
    bad_files()
    save_file(expected, str(OUT / "expected.safetensors"))
    manifest = {
        "about": "pytorch_checkpoints: read_pytorch against torch.load; expected tensors in expected.safetensors "
        "under '<file>/<key>' (contiguous). Failing files must give an Err holding every error_contains "
        "substring. Dtypes safetensors cannot hold appear only in failing files.",
        "torch": torch.__version__,
        "files": files,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    stems = [f["file"].rsplit(".", 1)[0] for f in files]
    assert [s for s in stems if len(s) == 21] == ["model_checkpoint_best"], "only one 21-character stem"
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{len(files)} files ({sum(f['ok'] for f in files)} good), {len(expected)} tensors, {total} bytes")


if __name__ == "__main__":
    main()
