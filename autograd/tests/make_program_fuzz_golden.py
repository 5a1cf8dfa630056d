"""Writes autograd/tests/program_fuzz/golden.rs: randomized straight-line autograd programs (views,
in-place ops on intermediates and on views of them, out-of-place ops, detach, clone, retain_grad)
over 1-3 float64 leaves, with torch's loss, leaf gradients, retained gradients, second-order
gradients, or the step at which torch raised, as Rust literals for autograd/tests/program_fuzz.rs.

Each program is a list of text lines that both this script and the Rust replay interpret:

    v3 = slice v1 0 1 3 2        out-of-place op: register v3 = op(args)
    add_ v3 v5                   in-place op on register v3 (name ends with `_`)
    retain_grad v3

Run with a torch install: python autograd/tests/make_program_fuzz_golden.py
"""
import math
import os
import random

import torch

torch.set_default_dtype(torch.float64)
OUT = os.path.join(os.path.dirname(__file__), "program_fuzz", "golden.rs")
SEED = 33
N_CASES = 250

# Errors torch raises that the programs are meant to exercise (anything else means the generator
# built an invalid op: it is dropped and another one drawn).
KEEP = ["leaf Variable", "inplace", "in-place", "view", "memory location", "require grad",
        "backward through the graph", "version"]


# ----------------------------------------------------------------------------------------------
# The interpreter (mirrored by the Rust replay).

def il(t):
    return [] if t == "_" else [int(v) for v in t.split(",")]


def fl(t):
    return [] if t == "_" else [float(v) for v in t.split(",")]


class State:
    def __init__(self, leaves):
        self.leaves = leaves
        self.regs = {}
        self.retained = []


def exec_line(S, line):
    toks = line.split()
    if len(toks) > 1 and toks[1] == "=":
        dst, op, a = int(toks[0][1:]), toks[2], toks[3:]
    else:
        dst, op, a = None, toks[0], toks[1:]

    def R(i):
        return S.regs[int(a[i][1:])]

    out = None
    if op == "leaf":
        out = S.leaves[int(a[0])]
    elif op == "constf":
        out = torch.tensor(fl(a[1]), dtype=torch.float64).reshape(il(a[0]))
    elif op == "consti":
        out = torch.tensor(il(a[1]), dtype=torch.int64).reshape(il(a[0]))
    elif op == "constb":
        out = torch.tensor([v != 0 for v in il(a[1])], dtype=torch.bool).reshape(il(a[0]))
    elif op == "slice":
        x = R(0)
        d = int(a[1]) % x.dim()
        out = x[tuple([slice(None)] * d + [slice(int(a[2]), int(a[3]), int(a[4]))])]
    elif op == "select":
        out = R(0).select(int(a[1]), int(a[2]))
    elif op == "narrow":
        out = R(0).narrow(int(a[1]), int(a[2]), int(a[3]))
    elif op == "transpose":
        out = R(0).transpose(int(a[1]), int(a[2]))
    elif op == "permute":
        out = R(0).permute(il(a[1]))
    elif op == "expand":
        out = R(0).expand(il(a[1]))
    elif op == "unsqueeze":
        out = R(0).unsqueeze(int(a[1]))
    elif op == "squeeze":
        out = R(0).squeeze()
    elif op == "view":
        out = R(0).view(il(a[1]))
    elif op == "reshape":
        out = R(0).reshape(il(a[1]))
    elif op == "diagonal":
        out = R(0).diagonal(int(a[1]), int(a[2]), int(a[3]))
    elif op == "unbind":
        out = R(0).unbind(int(a[1]))[int(a[2])]
    elif op == "split":
        out = R(0).split(int(a[1]), int(a[2]))[int(a[3])]
    elif op == "chunk":
        out = R(0).chunk(int(a[1]), int(a[2]))[int(a[3])]
    elif op == "as_strided":
        out = R(0).as_strided(il(a[1]), il(a[2]))
    elif op == "detach":
        out = R(0).detach()
    elif op == "clone":
        out = R(0).clone()
    elif op in ("exp", "sin", "sigmoid", "tanh"):
        out = getattr(R(0), op)()
    elif op == "pow":
        out = R(0).pow(float(a[1]))
    elif op in ("add", "mul", "sub", "div", "matmul"):
        out = getattr(R(0), op)(R(1))
    elif op == "adds":
        out = R(0).add(float(a[1]))
    elif op == "muls":
        out = R(0).mul(float(a[1]))
    elif op == "sum":
        out = R(0).sum(il(a[1]), keepdim=a[2] == "1")
    elif op == "mean":
        out = R(0).mean(il(a[1]), keepdim=a[2] == "1")
    elif op == "sum_all":
        out = R(0).sum()
    elif op == "mean_all":
        out = R(0).mean()
    elif op == "softmax":
        out = R(0).softmax(int(a[1]))
    elif op == "where":
        out = torch.where(R(0), R(1), R(2))
    elif op == "cat":
        out = torch.cat([S.regs[int(t[1:])] for t in a[1:]], int(a[0]))
    elif op == "stack":
        out = torch.stack([S.regs[int(t[1:])] for t in a[1:]], int(a[0]))
    elif op == "gather":
        out = R(0).gather(int(a[1]), R(2))
    elif op == "index_select":
        out = R(0).index_select(int(a[1]), R(2))
    elif op == "maxv":
        out = R(0).max(int(a[1]), keepdim=a[2] == "1").values
    elif op == "cumsum":
        out = R(0).cumsum(int(a[1]))
    elif op == "sortv":
        out = R(0).sort(int(a[1]), descending=a[2] == "1").values
    elif op == "norm":
        out = torch.linalg.vector_norm(R(0), ord=float(a[1]), dim=il(a[2]), keepdim=a[3] == "1")
    # in-place
    elif op in ("add_", "sub_", "mul_", "div_", "copy_"):
        getattr(R(0), op)(R(1))
    elif op in ("adds_", "subs_", "muls_", "divs_"):
        getattr(R(0), op[:3] + "_")(float(a[1]))
    elif op == "clamp_":
        R(0).clamp_(float(a[1]), float(a[2]))
    elif op in ("exp_", "sin_", "sigmoid_", "zero_"):
        getattr(R(0), op)()
    elif op == "fill_":
        R(0).fill_(float(a[1]))
    elif op == "pow_":
        R(0).pow_(float(a[1]))
    elif op == "masked_fill_":
        R(0).masked_fill_(R(1), float(a[2]))
    elif op == "index_add_":
        R(0).index_add_(int(a[1]), R(2), R(3))
    elif op == "scatter_":
        R(0).scatter_(int(a[1]), R(2), R(3))
    elif op == "retain_grad":
        R(0).retain_grad()
        S.retained.append(int(a[0][1:]))
    else:
        raise ValueError("unknown op " + op)
    if dst is not None:
        S.regs[dst] = out


# ----------------------------------------------------------------------------------------------
# The generator.

def sl(v):
    return ",".join(str(int(x)) for x in v) if len(v) else "_"


def ffmt(v):
    return repr(float(v))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def poisoned(t):
    """torch refuses any use of a multi-output view whose base was later written in place."""
    try:
        _ = t.grad_fn
        return False
    except RuntimeError:
        return True


def leafish(t):
    """A leaf requiring grad, or a view of one (in-place writes to them are torch errors)."""
    base = t._base if t._base is not None else t
    return base.is_leaf and base.requires_grad


def no_ties(x, d):
    if x.numel() == 0:
        return False
    s = x.detach().sort(d).values
    if s.shape[d] < 2:
        return True
    return bool((s.diff(dim=d).abs() > 1e-9).all())


class Gen:
    def __init__(self, rng, mode):
        self.rng = rng
        self.mode = mode
        nleaf = rng.randint(1, 3)
        shapes = [(3,), (4,), (2, 3), (3, 4), (3, 3), (2, 3, 2), (2, 2, 3), (4, 2)]
        self.inputs = []
        for _ in range(nleaf):
            shp = rng.choice(shapes)
            vals = [round(rng.uniform(-2, 2), 3) for _ in range(numel(shp))]
            self.inputs.append((shp, vals))
        self.leaves = [torch.tensor(v).reshape(s).clone().requires_grad_() for s, v in self.inputs]
        self.S = State(self.leaves)
        self.lines = []
        self.floats = []  # float registers
        self.nreg = 0
        self.pending = []
        self.error = None
        for i in range(nleaf):
            self.commit_line(f"v{self.alloc()} = leaf {i}", True)
        # torch's idiom before in-place edits: work on clones of the leaves.
        for i in range(nleaf):
            if rng.random() < 0.7:
                self.commit_line(f"v{self.nreg} = clone v{i}", True)
                self.alloc()

    # register / line bookkeeping
    def alloc(self):
        self.nreg += 1
        return self.nreg - 1

    def commit_line(self, line, is_float):
        exec_line(self.S, line)
        self.lines.append(line)
        toks = line.split()
        if toks[1] == "=" and is_float:
            self.floats.append(int(toks[0][1:]))

    def t(self, r):
        return self.S.regs[r]

    def pend(self, text, is_float=True):
        """An out-of-place helper line (a constant, an operand) run before the drawn op."""
        r = self.nreg + len(self.pending)
        self.pending.append((f"v{r} = {text}", is_float))
        return r

    def constf(self, shape, lo=-1.5, hi=1.5, away=0.0):
        vals = []
        for _ in range(numel(shape)):
            v = round(self.rng.uniform(lo, hi), 3)
            if away and abs(v) < away:
                v = away if v >= 0 else -away
            vals.append(v)
        return self.pend(f"constf {sl(shape)} {','.join(ffmt(v) for v in vals) or '_'}")

    def consti(self, shape, vals):
        return self.pend(f"consti {sl(shape)} {sl(vals)}", False)

    def constb(self, shape):
        vals = [self.rng.random() < 0.5 for _ in range(numel(shape))]
        return self.pend(f"constb {sl(shape)} {sl([int(v) for v in vals])}", False)

    def pick(self, pred=lambda t: True, leaf_weight=1.0):
        cands = [r for r in self.floats if not poisoned(self.t(r)) and pred(self.t(r))]
        if not cands:
            return None
        w = [(0.15 * leaf_weight if self.t(r).is_leaf and self.t(r).requires_grad else 1.0) * (1 + i)
             for i, r in enumerate(cands)]
        return self.rng.choices(cands, weights=w)[0]

    def partner(self, shape, exact=False, target=None):
        """A register whose shape broadcasts to `shape` (sometimes a fresh constant); one sharing
        `target`'s storage only rarely (torch refuses partial overlap)."""
        def ok(t):
            if exact:
                return tuple(t.shape) == tuple(shape)
            try:
                return tuple(torch.broadcast_shapes(t.shape, shape)) == tuple(shape)
            except RuntimeError:
                return False
        if self.rng.random() < 0.7:
            r = self.pick(ok)
            if r is not None and target is not None and self.rng.random() < 0.85 and \
                    self.t(r).untyped_storage().data_ptr() == target.untyped_storage().data_ptr():
                r = None
            if r is not None:
                return r
        return self.constf(shape)

    def index_shape_slices(self, shape, d, m):
        """consti of `shape` with dim d of length m, each line along d distinct in [0, shape[d])."""
        ishape = list(shape)
        ishape[d] = m
        idx = torch.empty(ishape, dtype=torch.int64)
        moved = idx.movedim(d, -1).reshape(-1, m)
        for row in range(moved.shape[0]):
            perm = list(range(shape[d]))
            self.rng.shuffle(perm)
            moved[row] = torch.tensor(perm[:m])
        idx = moved.reshape([s for i, s in enumerate(ishape) if i != d] + [m]).movedim(-1, d)
        return ishape, idx.reshape(-1).tolist()

    # op builders: each returns the op's text (after `vK = ` when out-of-place) or None.
    def b_view(self):
        rng = self.rng
        x = self.pick(lambda t: t.dim() >= 1 and t.numel() > 0)
        if x is None:
            return None
        X = self.t(x)
        nd = X.dim()
        d = rng.randrange(nd)
        n = X.shape[d]
        dd = d - nd if rng.random() < 0.3 else d
        kind = rng.choice(["slice", "select", "narrow", "transpose", "permute", "expand", "unsqueeze",
                           "squeeze", "view", "reshape", "diagonal", "unbind", "split", "chunk",
                           "as_strided", "detach", "clone"])
        if kind == "slice":
            s = rng.randrange(n)
            e = rng.randint(s + 1, n)
            return f"slice v{x} {dd} {s} {e} {rng.choice([1, 1, 2, 3])}"
        if kind == "select":
            return f"select v{x} {dd} {rng.randint(-n, n - 1)}"
        if kind == "narrow":
            s = rng.randrange(n)
            return f"narrow v{x} {dd} {s} {rng.randint(1, n - s)}"
        if kind == "transpose" and nd >= 2:
            a, b = rng.sample(range(nd), 2)
            return f"transpose v{x} {a} {b - nd if rng.random() < 0.3 else b}"
        if kind == "permute" and nd >= 2:
            p = list(range(nd))
            rng.shuffle(p)
            return f"permute v{x} {sl(p)}"
        if kind == "expand" and X.numel() * 3 <= 40:
            shp = list(X.shape)
            ones = [i for i, s in enumerate(shp) if s == 1]
            if ones and rng.random() < 0.5:
                shp[rng.choice(ones)] = rng.randint(2, 3)
            else:
                shp = [rng.randint(2, 3)] + shp
            return f"expand v{x} {sl(shp)}"
        if kind == "unsqueeze":
            return f"unsqueeze v{x} {rng.randint(0, nd)}"
        if kind == "squeeze" and 1 in X.shape:
            return f"squeeze v{x}"
        if kind in ("view", "reshape"):
            if kind == "view" and not X.is_contiguous() and rng.random() < 0.8:
                kind = "reshape"
            m = X.numel()
            divs = [k for k in range(1, m + 1) if m % k == 0]
            k = rng.choice(divs)
            shp = rng.choice([[m], [k, m // k], [m // k, k, 1]])
            return f"{kind} v{x} {sl(shp)}"
        if kind == "diagonal" and nd >= 2:
            a, b = rng.sample(range(nd), 2)
            off = rng.choice([0, 0, 1, -1])
            if min(X.shape[a] - max(off, 0), X.shape[b] + min(off, 0)) <= 0 or \
                    min(X.shape[b] - max(off, 0), X.shape[a] + min(off, 0)) <= 0:
                off = 0
            return f"diagonal v{x} {off} {a} {b}"
        if kind == "unbind":
            return f"unbind v{x} {dd} {rng.randrange(n)}"
        if kind == "split":
            s = rng.randint(1, n)
            return f"split v{x} {s} {dd} {rng.randrange(-(-n // s))}"
        if kind == "chunk":
            c = rng.randint(1, n)
            k = len(X.chunk(c, d))
            return f"chunk v{x} {c} {dd} {rng.randrange(k)}"
        if kind == "as_strided" and X.is_contiguous() and X.numel() >= 2:
            m = X.numel()
            a = rng.randint(1, min(3, m))
            s0 = rng.randint(1, max(1, (m - 1) // max(a - 1, 1))) if a > 1 else 1
            rem = m - 1 - (a - 1) * s0
            b = rng.randint(1, min(3, rem + 1))
            s1 = rng.randint(1, max(1, rem // max(b - 1, 1))) if b > 1 else 1
            if (a - 1) * s0 + (b - 1) * s1 <= m - 1:
                return f"as_strided v{x} {sl([a, b])} {sl([s0, s1])}"
            return None
        if kind == "detach":
            return f"detach v{x}"
        if kind == "clone":
            return f"clone v{x}"
        return None

    def b_out(self):
        rng = self.rng
        x = self.pick(lambda t: t.numel() > 0)
        if x is None:
            return None
        X = self.t(x)
        nd = X.dim()
        shape = list(X.shape)
        kind = rng.choice(["unary", "pow", "binary", "binary", "div", "scalar", "matmul", "sum", "mean",
                           "sum_all", "softmax", "where", "cat", "stack", "gather", "index_select",
                           "maxv", "cumsum", "sortv", "norm"])
        d = rng.randrange(nd) if nd else 0
        if kind == "unary":
            op = rng.choice(["exp", "sin", "sigmoid", "tanh"])
            if op == "exp" and X.detach().abs().max() > 3:
                op = "sin"
            return f"{op} v{x}"
        if kind == "pow" and X.detach().abs().max() < 3:
            return f"pow v{x} {rng.choice([2.0, 3.0])}"
        if kind == "binary":
            y = self.partner(shape) if rng.random() < 0.8 else x
            a, b = (x, y) if rng.random() < 0.5 else (y, x)
            return f"{rng.choice(['add', 'mul', 'sub'])} v{a} v{b}"
        if kind == "div":
            y = self.constf(shape, 0.5, 2.0) if rng.random() < 0.5 else self.constf(shape, -2.0, -0.5)
            return f"div v{x} v{y}"
        if kind == "scalar":
            return f"{rng.choice(['adds', 'muls'])} v{x} {ffmt(round(rng.uniform(-2, 2), 2))}"
        if kind == "matmul" and 1 <= nd <= 2:
            k = shape[-1]
            want = [k] if rng.random() < 0.3 else [k, rng.randint(1, 3)]
            y = self.partner(want, exact=True)
            return f"matmul v{x} v{y}"
        if kind in ("sum", "mean") and nd >= 1:
            dims = sorted(rng.sample(range(nd), rng.randint(1, nd)))
            return f"{kind} v{x} {sl(dims)} {rng.randint(0, 1)}"
        if kind == "sum_all":
            return f"{rng.choice(['sum_all', 'mean_all'])} v{x}"
        if kind == "softmax" and nd >= 1:
            return f"softmax v{x} {d}"
        if kind == "where":
            c = self.constb(shape)
            y = self.partner(shape)
            return f"where v{c} v{x} v{y}"
        if kind in ("cat", "stack") and nd >= 1:
            others = []
            for _ in range(rng.randint(1, 2)):
                if kind == "cat" and rng.random() < 0.4:
                    shp = list(shape)
                    shp[d] = rng.randint(1, 2)
                    others.append(self.constf(shp))
                elif rng.random() < 0.3:
                    others.append(x)
                else:
                    others.append(self.partner(shape, exact=True))
            regs = [x] + others
            rng.shuffle(regs)
            return f"{kind} {d} " + " ".join(f"v{r}" for r in regs)
        if kind == "gather" and nd >= 1:
            ishape = [rng.randint(1, s) for s in shape]
            ishape[d] = rng.randint(1, 4)
            vals = [rng.randrange(shape[d]) for _ in range(numel(ishape))]
            i = self.consti(ishape, vals)
            return f"gather v{x} {d} v{i}"
        if kind == "index_select" and nd >= 1:
            m = rng.randint(1, 4)
            i = self.consti([m], [rng.randrange(shape[d]) for _ in range(m)])
            return f"index_select v{x} {d} v{i}"
        if kind == "maxv" and nd >= 1 and no_ties(X, d):
            return f"maxv v{x} {d} {rng.randint(0, 1)}"
        if kind == "cumsum" and nd >= 1:
            return f"cumsum v{x} {d}"
        if kind == "sortv" and nd >= 1 and no_ties(X, d):
            return f"sortv v{x} {d} {rng.randint(0, 1)}"
        if kind == "norm" and nd >= 1:
            p = rng.choice([2.0, 1.0, 3.0])
            dims = sorted(rng.sample(range(nd), rng.randint(1, nd)))
            if X.detach().abs().min() < 1e-6:
                return None
            return f"norm v{x} {ffmt(p)} {sl(dims)} {rng.randint(0, 1)}"
        return None

    def b_inplace(self):
        rng = self.rng
        # Mostly targets torch accepts; sometimes a leaf or a view of one (torch's error).
        allow_leaf = rng.random() < 0.025
        x = self.pick(lambda t: t.numel() > 0 and (allow_leaf or not leafish(t)), leaf_weight=5.0)
        if x is None:
            return None
        X = self.t(x)
        nd = X.dim()
        shape = list(X.shape)
        kind = rng.choice(["binary", "binary", "scalar", "div", "clamp", "unary", "fill", "pow", "copy",
                           "masked_fill", "index_add", "scatter", "retain_grad"])
        if kind == "binary":
            y = self.partner(shape, target=X)
            return f"{rng.choice(['add_', 'sub_', 'mul_'])} v{x} v{y}"
        if kind == "scalar":
            op = rng.choice(["adds_", "subs_", "muls_", "divs_"])
            v = round(rng.uniform(0.5, 2), 2) * rng.choice([-1, 1])
            return f"{op} v{x} {ffmt(v)}"
        if kind == "div":
            return f"div_ v{x} v{self.constf(shape, -2.0, 2.0, away=0.5)}"
        if kind == "clamp":
            lo = round(rng.uniform(-1.5, 0), 3) + 0.0004
            hi = round(rng.uniform(0, 1.5), 3) + 0.0004
            return f"clamp_ v{x} {ffmt(lo)} {ffmt(hi)}"
        if kind == "unary":
            op = rng.choice(["exp_", "sin_", "sigmoid_", "zero_"])
            if op == "exp_" and X.detach().abs().max() > 3:
                op = "sin_"
            return f"{op} v{x}"
        if kind == "fill":
            return f"fill_ v{x} {ffmt(round(rng.uniform(-2, 2), 2))}"
        if kind == "pow" and X.detach().abs().max() < 3:
            return f"pow_ v{x} {rng.choice([2.0, 3.0])}"
        if kind == "copy":
            return f"copy_ v{x} v{self.partner(shape, target=X)}"
        if kind == "masked_fill" and not any(st == 0 and n > 1 for st, n in zip(X.stride(), shape)):
            # (torch only warns when writing an expanded tensor here; other in-place ops refuse it)
            return f"masked_fill_ v{x} v{self.constb(shape)} {ffmt(round(rng.uniform(-2, 2), 2))}"
        if kind == "index_add" and nd >= 1:
            d = rng.randrange(nd)
            m = rng.randint(1, 3)
            i = self.consti([m], [rng.randrange(shape[d]) for _ in range(m)])
            if rng.random() < 0.5:
                # the source read from a register (gradient flows into it)
                y = self.pick(lambda t: t.dim() == nd and all(
                    t.shape[k] == shape[k] for k in range(nd) if k != d))
                i2 = self.consti([m], [rng.randrange(self.t(y).shape[d]) for _ in range(m)])
                src = self.pend(f"index_select v{y} {d} v{i2}")
            else:
                sshape = list(shape)
                sshape[d] = m
                src = self.constf(sshape)
            return f"index_add_ v{x} {d} v{i} v{src}"
        if kind == "scatter" and nd >= 1:
            d = rng.randrange(nd)
            m = rng.randint(1, shape[d])
            ishape, vals = self.index_shape_slices(shape, d, m)
            i = self.consti(ishape, vals)
            y = self.pick(lambda t: list(t.shape) == ishape)
            ptr = X.untyped_storage().data_ptr()
            shares = y is not None and self.t(y).untyped_storage().data_ptr() == ptr
            if y is None or rng.random() < 0.3 or (shares and rng.random() < 0.85):
                src = self.constf(ishape)
            else:
                src = y
            return f"scatter_ v{x} {d} v{i} v{src}"
        if kind == "retain_grad" and self.mode != "grad2" and X.requires_grad and not X.is_leaf:
            return f"retain_grad v{x}"
        return None

    def step(self):
        """Draws and runs one op; returns False when the program ended with torch's error."""
        for _ in range(50):
            self.pending = []
            bad = [r for r in self.floats if poisoned(self.t(r))]
            if bad and self.rng.random() < 0.5:
                text = f"muls v{self.rng.choice(bad)} 2.0"
            else:
                r = self.rng.random()
                text = self.b_view() if r < 0.35 else self.b_out() if r < 0.6 else self.b_inplace()
            if text is None:
                continue
            inplace = text.split()[0].endswith("_") or text.startswith("retain_grad")
            line = text if inplace else f"v{self.nreg + len(self.pending)} = {text}"
            # Dry run on copies is impossible (aliasing matters): run for real; pending helpers
            # never fail, and torch checks its arguments before it writes.
            for pl, isf in self.pending:
                self.commit_line(pl, isf)
                self.alloc()
            self.pending = []
            try:
                exec_line(self.S, line)
            except (RuntimeError, IndexError, ValueError) as e:
                msg = str(e).split("\n")[0]
                if any(k in msg for k in KEEP):
                    self.lines.append(line)
                    self.error = (len(self.lines) - 1, msg)
                    return False
                DROPPED.append((text, msg))
                continue
            self.lines.append(line)
            if not inplace:
                dst = self.alloc()
                if self.t(dst).dtype == torch.float64:
                    self.floats.append(dst)
            return True
        return True

    def run_line(self, line):
        """A loss-building line; False when torch raised."""
        try:
            exec_line(self.S, line)
        except RuntimeError as e:
            self.lines.append(line)
            self.error = (len(self.lines) - 1, str(e).split("\n")[0])
            return False
        self.lines.append(line)
        self.alloc()
        return True

    def build_loss(self):
        rng = self.rng
        req = [r for r in self.floats
               if not poisoned(self.t(r)) and self.t(r).requires_grad and self.t(r).numel() > 0]
        if not req:
            req = [0]
        picks = []
        for _ in range(rng.randint(1, 3)):
            w = [1 + 2 * i for i in range(len(req))]
            picks.append(rng.choices(req, weights=w)[0])
        terms = []
        for r in picks:
            kind = rng.choice(["sum", "mean", "weighted", "square"])
            if kind == "weighted":
                c = self.constf(list(self.t(r).shape))
                for pl, isf in self.pending:
                    self.commit_line(pl, isf)
                    self.alloc()
                self.pending = []
                if not self.run_line(f"v{self.nreg} = mul v{r} v{c}"):
                    return None
                r = self.nreg - 1
                kind = "sum"
            if kind == "square":
                if not self.run_line(f"v{self.nreg} = pow v{r} 2.0"):
                    return None
                r = self.nreg - 1
                kind = "sum"
            if not self.run_line(f"v{self.nreg} = {kind}_all v{r}"):
                return None
            terms.append(self.nreg - 1)
        acc = terms[0]
        for t in terms[1:]:
            if not self.run_line(f"v{self.nreg} = add v{acc} v{t}"):
                return None
            acc = self.nreg - 1
        return acc


DROPPED = []


def gen_case(cid, rng):
    mode = rng.choices(["backward", "backward_twice", "grad2", "backward_twice_noretain"],
                       weights=[55, 15, 25, 5])[0]
    g = Gen(rng, mode)
    for _ in range(rng.randint(3, 12)):
        if not g.step():
            break
    case = {"id": cid, "inputs": g.inputs, "mode": mode, "loss_reg": 0, "loss": 0.0,
            "grads": [], "retained": [], "second": []}
    if g.error is None:
        lr = g.build_loss()
        if lr is not None:
            case["loss_reg"] = lr
    n = len(g.lines)
    case["lines"] = g.lines
    if g.error is not None:
        case["error"] = g.error
        return case
    loss = g.t(case["loss_reg"])
    case["loss"] = float(loss.detach())
    leaves = g.leaves
    try:
        stage = n
        if mode == "backward":
            loss.backward()
        elif mode == "backward_twice":
            loss.backward(retain_graph=True)
            stage = n + 1
            loss.backward()
        elif mode == "backward_twice_noretain":
            loss.backward()
            stage = n + 1
            loss.backward()
        else:
            first = torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
            stage = n + 1
            s = None
            for gi, leaf in zip(first, leaves):
                if gi is not None:
                    term = (gi * leaf).sum()
                    s = term if s is None else s + term
            if s is None:
                raise RuntimeError("no first-order gradient")
            second = torch.autograd.grad(s, leaves, allow_unused=True)
            case["grads"] = [None if gi is None else gi.detach().clone() for gi in first]
            case["second"] = [None if gi is None else gi.detach().clone() for gi in second]
    except RuntimeError as e:
        case["error"] = (stage, str(e).split("\n")[0])
        return case
    if mode != "grad2":
        case["grads"] = [leaf.grad for leaf in leaves]
        case["retained"] = [(r, g.S.regs[r].grad) for r in dict.fromkeys(g.S.retained)]
    return case


# ----------------------------------------------------------------------------------------------
# Writing.

def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


def g_shaped(t):
    if t is None:
        return "None"
    return "Some((&[" + ", ".join(str(d) for d in t.shape) + "], &[" + \
        ", ".join(lit(v) for v in t.detach().reshape(-1).tolist()) + "]))"


def main():
    rng = random.Random(SEED)
    cases = [gen_case(i, rng) for i in range(N_CASES)]
    out = [
        "//! Generated by autograd/tests/make_program_fuzz_golden.py from torch " + torch.__version__
        + "; do not edit.",
        "",
        "#![allow(clippy::approx_constant)]",
        "",
        "/// A tensor literal: shape and row-major values.",
        "pub type G = (&'static [usize], &'static [f64]);",
        "",
        "/// One random program and what torch computed for it.",
        "pub struct Case {",
        "    /// The case's index.",
        "    pub id: usize,",
        "    /// The leaves (float64, requiring grad), as `leaf i` reads them.",
        "    pub inputs: &'static [G],",
        "    /// The program's lines, separated by newlines.",
        "    pub program: &'static str,",
        "    /// `backward`, `backward_twice`, `backward_twice_noretain` or `grad2`.",
        "    pub finish: &'static str,",
        "    /// The register holding the scalar loss.",
        "    pub loss_reg: usize,",
        "    /// Where torch raised (a line index; the line count for the first backward stage, one",
        "    /// more for the second) and its message.",
        "    pub error: Option<(usize, &'static str)>,",
        "    /// The loss value.",
        "    pub loss: f64,",
        "    /// The leaves' gradients (`.grad`, or the first-order `grad` for `grad2`).",
        "    pub grads: &'static [Option<G>],",
        "    /// Retained intermediate gradients: (register, `.grad`).",
        "    pub retained: &'static [(usize, Option<G>)],",
        "    /// `grad2`: the gradients of `sum_i (g_i * leaf_i).sum()` w.r.t. the leaves.",
        "    pub second: &'static [Option<G>],",
        "}",
        "",
        "/// The cases.",
        "pub const CASES: &[Case] = &[",
    ]
    for c in cases:
        inputs = ", ".join("(&[" + ", ".join(str(d) for d in s) + "], &[" + ", ".join(lit(v) for v in vals)
                           + "])" for s, vals in c["inputs"])
        err = "None"
        if "error" in c:
            msg = c["error"][1].replace("\\", "\\\\").replace('"', '\\"')
            err = f'Some(({c["error"][0]}, "{msg}"))'
        out.append("    Case {")
        out.append(f"        id: {c['id']},")
        out.append(f"        inputs: &[{inputs}],")
        out.append('        program: "' + "\\n".join(c["lines"]) + '",')
        out.append(f'        finish: "{c["mode"]}",')
        out.append(f"        loss_reg: {c['loss_reg']},")
        out.append(f"        error: {err},")
        out.append(f"        loss: {lit(c['loss'])},")
        out.append("        grads: &[" + ", ".join(g_shaped(g) for g in c["grads"]) + "],")
        kept = ", ".join(f"({r}, {g_shaped(g)})" for r, g in c["retained"])
        out.append("        retained: &[" + kept + "],")
        out.append("        second: &[" + ", ".join(g_shaped(g) for g in c["second"]) + "],")
        out.append("    },")
    out.append("];")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    # a summary for the developer
    errs = [c for c in cases if "error" in c]
    print(f"{len(cases)} cases, {len(errs)} ending in torch errors; modes:",
          {m: sum(c["mode"] == m for c in cases) for m in ["backward", "backward_twice", "grad2",
                                                            "backward_twice_noretain"]})
    kinds = {}
    for c in cases:
        for line in c["lines"]:
            toks = line.split()
            op = toks[2] if len(toks) > 1 and toks[1] == "=" else toks[0]
            kinds[op] = kinds.get(op, 0) + 1
    print("ops:", dict(sorted(kinds.items())))
    msgs = {}
    for c in errs:
        k = c["error"][1][:90]
        msgs[k] = msgs.get(k, 0) + 1
    for k, v in sorted(msgs.items(), key=lambda kv: -kv[1]):
        print(f"  {v:3d} x {k}")
    print(f"dropped ops (invalid draws): {len(DROPPED)}")
    for t, m in DROPPED[:15]:
        print("   ", t[:60], "->", m[:100])


if __name__ == "__main__":
    main()
