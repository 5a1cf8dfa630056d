//! Text generation with a KV cache: greedy or sampled (temperature, top-k, top-p, min-p, repetition
//! penalty, seed), stopping at EOS tokens from `generation_config.json`, batched prompts with left
//! padding, tokens streamed to a callback as they come.

use std::path::Path;

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::KvCache;
use crate::models::CausalLm;

/// How to pick tokens and when to stop (transformers' `GenerationConfig` fields).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationConfig {
    /// new tokens at most
    pub max_new_tokens: usize,
    /// sample (true) or take the most likely token (false)
    pub do_sample: bool,
    /// logits divided by this before sampling
    pub temperature: f64,
    /// keep the `top_k` most likely tokens (0: all)
    pub top_k: usize,
    /// keep the smallest set of tokens whose probability reaches `top_p`
    pub top_p: f64,
    /// drop tokens less likely than `min_p` times the most likely one (0: off)
    pub min_p: f64,
    /// CTRL-style penalty on tokens already present (1: off)
    pub repetition_penalty: f64,
    /// sampling seed
    pub seed: u64,
    /// tokens that end a sequence
    pub eos_token_ids: Vec<i64>,
    /// token appended to finished sequences
    pub pad_token_id: i64,
}

impl Default for GenerationConfig {
    fn default() -> Self {
        GenerationConfig {
            max_new_tokens: 20,
            do_sample: false,
            temperature: 1.0,
            top_k: 50,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            seed: 0,
            eos_token_ids: Vec::new(),
            pad_token_id: 0,
        }
    }
}

fn ids_of(v: Option<&Value>) -> Vec<i64> {
    match v {
        Some(Value::Number(n)) => n.as_i64().into_iter().collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_i64).collect(),
        _ => Vec::new(),
    }
}

impl GenerationConfig {
    /// Reads `generation_config.json` of `dir` (sampling settings, `eos_token_id` as a number or list,
    /// `pad_token_id`), falling back to the model config's `eos_token_id` / `pad_token_id`; a missing
    /// pad token becomes the first EOS token, as transformers does.
    pub fn from_model_dir(dir: &Path, cfg: &Config) -> Result<Self> {
        let path = dir.join("generation_config.json");
        let json: Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?,
            Err(_) => Value::Null,
        };
        let mut g = GenerationConfig::default();
        let num = |k: &str| json.get(k).and_then(Value::as_f64);
        g.do_sample = json.get("do_sample").and_then(Value::as_bool).unwrap_or(false);
        g.temperature = num("temperature").unwrap_or(1.0);
        g.top_k = num("top_k").map_or(50, |k| k as usize);
        g.top_p = num("top_p").unwrap_or(1.0);
        g.min_p = num("min_p").unwrap_or(0.0);
        g.repetition_penalty = num("repetition_penalty").unwrap_or(1.0);
        if let Some(n) = json.get("max_new_tokens").and_then(Value::as_u64) {
            g.max_new_tokens = n as usize;
        }
        g.eos_token_ids = ids_of(json.get("eos_token_id"));
        if g.eos_token_ids.is_empty() {
            g.eos_token_ids = ids_of(cfg.get("eos_token_id"));
        }
        let pad = ids_of(json.get("pad_token_id"))
            .first()
            .copied()
            .or_else(|| ids_of(cfg.get("pad_token_id")).first().copied());
        g.pad_token_id = pad.or(g.eos_token_ids.first().copied()).unwrap_or(0);
        Ok(g)
    }
}

/// A small deterministic generator for sampling (SplitMix64).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Picks the next token from one row of float32 logits, after the penalties and filters of `g` in
/// transformers' order (repetition penalty, temperature, top-k, top-p, min-p).
fn pick(logits: &mut [f32], seen: &[i64], g: &GenerationConfig, rng: &mut Rng) -> i64 {
    if g.repetition_penalty != 1.0 {
        let p = g.repetition_penalty as f32;
        for &t in seen {
            if let Some(l) = usize::try_from(t).ok().and_then(|t| logits.get_mut(t)) {
                *l = if *l < 0.0 { *l * p } else { *l / p };
            }
        }
    }
    let argmax = |v: &[f32]| v.iter().enumerate().fold(0, |best, (i, &x)| if x > v[best] { i } else { best });
    if !g.do_sample {
        return argmax(logits) as i64;
    }
    if g.temperature > 0.0 && g.temperature != 1.0 {
        logits.iter_mut().for_each(|l| *l /= g.temperature as f32);
    }
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
    if g.top_k > 0 && g.top_k < order.len() {
        order.truncate(g.top_k);
    }
    let max = logits[order[0]];
    let weights: Vec<f64> = order.iter().map(|&i| f64::from(logits[i] - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut keep = order.len();
    if g.top_p < 1.0 {
        let mut acc = 0.0;
        for (n, w) in weights.iter().enumerate() {
            acc += w / total;
            if acc >= g.top_p {
                keep = n + 1;
                break;
            }
        }
    }
    if g.min_p > 0.0 {
        let floor = g.min_p * weights[0];
        keep = keep.min(weights.iter().take_while(|&&w| w >= floor).count().max(1));
    }
    let kept = &weights[..keep];
    let mut r = rng.next_f64() * kept.iter().sum::<f64>();
    for (n, w) in kept.iter().enumerate() {
        r -= w;
        if r <= 0.0 {
            return order[n] as i64;
        }
    }
    order[keep - 1] as i64
}

/// Generates up to `g.max_new_tokens` tokens after `input_ids` `[batch, seq]` (left-padded prompts
/// with `attention_mask`), calling `on_token(row, token)` for each new token of an unfinished row.
/// Returns the prompts followed by the new tokens (finished rows padded with `g.pad_token_id`), int64,
/// on the host. Runs on the model's device: the KV cache stays there, and each step moves only the new
/// tokens up and the last position's logits down.
pub fn generate(
    lm: &CausalLm,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    g: &GenerationConfig,
    mut on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    let ids = input_ids.to_dtype(DType::I64)?;
    let (b, s) = match ids.dims() {
        [b, s] if *s > 0 => (*b, *s),
        d => return Err(Error::Input(format!("input_ids must be [batch, seq] with seq > 0, got {d:?}"))),
    };
    let mask: Vec<i64> = match attention_mask {
        Some(m) if m.dims() == [b, s] => m.to_dtype(DType::I64)?.to_vec()?,
        Some(m) => {
            return Err(Error::Input(format!(
                "attention_mask must have shape [{b}, {s}], got {:?}",
                m.dims()
            )))
        }
        None => vec![1; b * s],
    };
    let mut rows: Vec<Vec<i64>> = ids.to_vec2::<i64>()?;
    // Positions count real tokens only (left padding), as transformers' `generate`.
    let mut next_pos = vec![0i64; b];
    let mut pos = Vec::with_capacity(b * s);
    for r in 0..b {
        let mut p = -1;
        for c in 0..s {
            p += mask[r * s + c];
            pos.push(if mask[r * s + c] == 0 { 1 } else { p });
        }
        next_pos[r] = p + 1;
    }
    // The cache and the mask stay on the model's device; each step uploads the new tokens and their
    // positions and downloads the last position's logits.
    let device = lm.device();
    let mut cache = KvCache::new(lm.num_layers());
    let mut step_ids = ids.to(device)?;
    let mut step_pos = Tensor::from_vec(pos, [b, s])?.to(device)?;
    let mut mask_t = Tensor::from_vec(mask, [b, s])?.to(device)?;
    let ones = Tensor::ones([b, 1], (DType::I64, device))?;
    let mut done = vec![false; b];
    let mut rng = Rng(g.seed);
    for _ in 0..g.max_new_tokens {
        let out = lm.forward(&step_ids, Some(&mask_t), Some(&step_pos), Some(&mut cache), false)?;
        let last = out.logits.select(1, -1)?.to_dtype(DType::F32)?.to(Device::Cpu)?.to_vec2::<f32>()?;
        let mut next = Vec::with_capacity(b);
        for (r, mut logits) in last.into_iter().enumerate() {
            let token = if done[r] { g.pad_token_id } else { pick(&mut logits, &rows[r], g, &mut rng) };
            if !done[r] {
                on_token(r, token);
                done[r] = g.eos_token_ids.contains(&token);
            }
            next.push(token);
        }
        for (row, &token) in rows.iter_mut().zip(&next) {
            row.push(token);
        }
        mask_t = Tensor::cat(&[&mask_t, &ones], 1)?;
        step_ids = Tensor::from_vec(next, [b, 1])?.to(device)?;
        step_pos = Tensor::from_vec(next_pos.clone(), [b, 1])?.to(device)?;
        next_pos.iter_mut().for_each(|p| *p += 1);
        if done.iter().all(|&d| d) {
            break;
        }
    }
    let width = rows[0].len();
    Ok(Tensor::from_vec(rows.concat(), [b, width])?)
}
