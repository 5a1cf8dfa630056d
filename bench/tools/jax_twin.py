"""JAX twins of oxtorch's compiled/fused XLA bench cases (issue 8's yardstick): the same work as
`oxtorch-bench xla_mlp_train_step_b256_fused` as one `jax.jit` step with donated parameters and
optimizer state. Run with the reference venv's python (`/work/.refenv/bin/python`, jax installed
there) in the same session as the bench runner. Prints one JSON object per line like
`../shared/bench/torch_baseline.py`: {"case": ..., "value": ..., "unit": ...}.

`--plugin PATH` runs the twins on a PJRT plugin instead of jaxlib's own XLA (case names get a
`jax_plugin_` prefix): with oxtorch's `OXTORCH_PJRT_PLUGIN`, JAX and oxtorch then run on the same XLA
build, which separates what oxtorch adds from what the plugin's build costs."""
import json
import os
import statistics
import sys
import time

PLUGIN = None
if "--plugin" in sys.argv:
    i = sys.argv.index("--plugin")
    if i + 1 >= len(sys.argv):
        sys.exit("usage: jax_twin.py [--plugin PATH_TO_PJRT_PLUGIN.so] [mlp] [gemm] [gemm8192] [sweep]")
    PLUGIN = sys.argv[i + 1]
    del sys.argv[i : i + 2]
    os.environ["JAX_PLATFORMS"] = "oxtorch_plugin"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

if PLUGIN:
    # JAX's plugin registration (what `jax_plugins` packages call); a private module in JAX 0.10.
    from jax._src import xla_bridge

    xla_bridge.register_plugin("oxtorch_plugin", priority=500, library_path=PLUGIN, options=None)


def emit(case, value, unit):
    if PLUGIN:
        case = case.replace("jax_", "jax_plugin_", 1)
    print(json.dumps({"case": case, "value": round(value, 4), "unit": unit}), flush=True)


def timeit(fn, reps=5, warm=2, inner=1):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t) / inner)
    return statistics.median(ts)


def linear_init(key, fan_in, fan_out):
    # torch.nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias.
    kw, kb = jax.random.split(key)
    bound = 1.0 / fan_in**0.5
    w = jax.random.uniform(kw, (fan_out, fan_in), jnp.float32, -bound, bound)
    b = jax.random.uniform(kb, (fan_out,), jnp.float32, -bound, bound)
    return w, b


def mlp_train_step():
    """MLP 784-1024-1024-10, batch 256, AdamW(lr=1e-3, torch defaults), cross-entropy (mean)."""
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    params = [linear_init(keys[0], 784, 1024), linear_init(keys[1], 1024, 1024), linear_init(keys[2], 1024, 10)]
    x = jax.random.normal(keys[3], (256, 784), jnp.float32)
    y = jax.random.randint(keys[4], (256,), 0, 10)

    def loss_fn(params):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    lr, b1, b2, eps, wd = 1e-3, 0.9, 0.999, 1e-8, 1e-2

    def step(params, m, v, t):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        t = t + 1
        new_p, new_m, new_v = [], [], []
        for p, g, mm, vv in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(grads),
                                jax.tree_util.tree_leaves(m), jax.tree_util.tree_leaves(v)):
            p = p * (1 - lr * wd)
            mm = b1 * mm + (1 - b1) * g
            vv = b2 * vv + (1 - b2) * g * g
            mhat = mm / (1 - b1**t)
            vhat = vv / (1 - b2**t)
            new_p.append(p - lr * mhat / (jnp.sqrt(vhat) + eps))
            new_m.append(mm)
            new_v.append(vv)
        tree = jax.tree_util.tree_structure(params)
        return (jax.tree_util.tree_unflatten(tree, new_p), jax.tree_util.tree_unflatten(tree, new_m),
                jax.tree_util.tree_unflatten(tree, new_v), t, loss)

    step = jax.jit(step, donate_argnums=(0, 1, 2))
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = [params, m, v, jnp.float32(0.0)]

    def run():
        p, mm, vv, t, loss = step(*state)
        state[:] = [p, mm, vv, t]
        jax.tree_util.tree_leaves(p)[0].block_until_ready()

    t = timeit(run, reps=7, warm=2, inner=5)
    emit("jax_mlp_train_step_b256", 1.0 / t, "steps/s")


def gemm():
    """`xla_gemm_float32_1024`'s twin: one jitted 1024 x 1024 float32 matmul, inputs on the device."""
    a = jax.random.normal(jax.random.PRNGKey(0), (1024, 1024), jnp.float32)
    b = jax.random.normal(jax.random.PRNGKey(1), (1024, 1024), jnp.float32)
    f = jax.jit(lambda x, y: x @ y)
    t = timeit(lambda: f(a, b).block_until_ready(), reps=9, warm=2, inner=5)
    emit("jax_gemm_float32_1024", 2 * 1024**3 / t / 1e9, "GFLOP/s")


def gemm8192():
    """`xla_gemm_bfloat16_8192`'s twin: one jitted 8192 x 8192 bfloat16 matmul, inputs on the device
    (sized for a GPU)."""
    n = 8192
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.bfloat16)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n), jnp.bfloat16)
    f = jax.jit(lambda x, y: x @ y)
    t = timeit(lambda: f(a, b).block_until_ready(), reps=9, warm=2, inner=5)
    emit("jax_gemm_bfloat16_8192", 2 * n**3 / t / 1e9, "GFLOP/s")


def batch_sweep():
    """`xla_mlp_infer_batch_sweep_1_128`'s twin: the jitted 256 -> 512 -> 10 MLP head on every batch
    size from 1 to 128, each batch from the host, read back. `jax.jit` specialises on the shape, so
    it compiles once per size (JAX has no bounded dynamism; `jax.export` shape polymorphism is
    re-specialised per shape at call time). Wall seconds of the sweep, compiles included."""
    import numpy as np

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    w1 = jax.random.normal(k1, (512, 256), jnp.float32)
    w2 = jax.random.normal(k2, (10, 512), jnp.float32)
    head = jax.jit(lambda x: jax.nn.softmax(jax.nn.relu(x @ w1.T) @ w2.T, axis=-1))
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((n, 256), dtype=np.float32) for n in range(1, 129)]
    start = time.perf_counter()
    for x in batches:
        np.asarray(head(x))
    emit("jax_mlp_infer_batch_sweep_1_128", time.perf_counter() - start, "s")


CASES = {"mlp": mlp_train_step, "gemm": gemm, "gemm8192": gemm8192, "sweep": batch_sweep}

if __name__ == "__main__":
    for name in sys.argv[1:] or [c for c in CASES if c != "gemm8192"]:
        CASES[name]()
