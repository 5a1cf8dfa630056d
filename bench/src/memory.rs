//! `llama110m_f32_generate_peak_memory`: the peak resident memory of a process that loads the
//! Llama-125M-config checkpoint from a safetensors file (memory-mapped, as `hf-import` loads it)
//! and greedily generates 64 tokens after a 16-token prompt, as a multiple of the weights plus the
//! KV cache (issue 6: at most 1.2x). `llama110m_bf16_cast_generate_peak_memory` loads the same f32
//! file cast to bf16 (`--dtype bf16`), against the bf16 weights and cache. The checkpoint is
//! written to a temporary folder first; the load and generation run in a child process (this
//! binary with [`CHILD_FLAG`]), so that nothing the parent allocated counts.

use std::path::Path;
use std::process::Command;

use oxtorch as torch;
use oxtorch_hf_import::weights::write_safetensors;
use oxtorch_hf_import::{generate, AutoModel, Config, GenerationConfig, Weights};
use torch::{DType, Tensor};

use crate::emit_with;
use crate::hf::{llama110m_weights, LLAMA110M_CONFIG};

/// The argument that makes this binary the measured child: `--peak-memory-child DIR DTYPE`.
pub const CHILD_FLAG: &str = "--peak-memory-child";

const PROMPT: usize = 16;
const NEW_TOKENS: usize = 64;

/// `llama110m_f32_generate_peak_memory`.
pub fn llama110m_f32_peak_memory() {
    peak_memory("llama110m_f32_generate_peak_memory", DType::F32);
}

/// `llama110m_bf16_cast_generate_peak_memory`.
pub fn llama110m_bf16_cast_peak_memory() {
    peak_memory("llama110m_bf16_cast_generate_peak_memory", DType::BF16);
}

/// The parent: writes the f32 checkpoint, runs the child loading it as `dtype`, reports its peak.
fn peak_memory(case: &str, dtype: DType) {
    let dir = std::env::temp_dir().join(format!("oxtorch-bench-llama110m-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let weights = llama110m_weights(DType::F32);
    let weight_bytes: usize = weights.iter().map(|(_, t)| t.numel() * dtype.size_in_bytes()).sum();
    write_safetensors(&dir.join("model.safetensors"), &weights, None).unwrap();
    drop(weights);
    std::fs::write(dir.join("config.json"), LLAMA110M_CONFIG).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .arg(CHILD_FLAG)
        .arg(&dir)
        .arg(dtype.name())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{case}: the child failed: {}", String::from_utf8_lossy(&out.stderr));
    let peak_kb: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PEAK_KB "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{case}: no PEAK_KB line in {stdout}"));
    // 12 layers x (k, v) x 4 kv heads x 64 dims x (prompt + new) positions.
    let kv_bytes = 12 * 2 * 4 * 64 * (PROMPT + NEW_TOKENS) * dtype.size_in_bytes();
    let peak = peak_kb * 1024.0;
    let extra = format!(
        "\"peak_mb\": {:.1}, \"weights_mb\": {:.1}, \"kv_cache_mb\": {:.2}",
        peak / 1e6,
        weight_bytes as f64 / 1e6,
        kv_bytes as f64 / 1e6
    );
    emit_with(case, peak / (weight_bytes + kv_bytes) as f64, "x weights+kv", &extra);
}

/// The child: load as `dtype` (a torch name, `float32`), generate, print `PEAK_KB <VmHWM>`.
pub fn child(dir: &Path, dtype: &str) {
    let cfg = Config::load(dir).unwrap();
    let dtype = [DType::F32, DType::BF16].into_iter().find(|d| d.name() == dtype).expect("a dtype name");
    // As the CLI: the weights are dropped once the model holds what it needs.
    let weights = Weights::load(dir, Some(dtype)).unwrap();
    let model = AutoModel::load(&cfg, &weights).unwrap();
    drop(weights);
    let lm = model.causal_lm().unwrap();
    let ids = Tensor::randint(0, 32000, [1, PROMPT], DType::I64).unwrap();
    let g = GenerationConfig { max_new_tokens: NEW_TOKENS, ..GenerationConfig::default() };
    let out = generate(lm, &ids, None, &g, |_, _| {}).unwrap();
    assert_eq!(out.dims()[1], PROMPT + NEW_TOKENS);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap_or("0 kB");
    println!("PEAK_KB {}", hwm.trim().trim_end_matches("kB").trim());
}
