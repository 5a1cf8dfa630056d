//! Picking the next token from a row of logits: transformers' logits processors (penalties and
//! bans) and warpers in their order, then greedy or seeded sampling.

use super::GenerationConfig;

/// A small deterministic generator for sampling (SplitMix64).
#[derive(Debug, Clone)]
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The logits processors of transformers that ban or penalise tokens, in its order, on one row of
/// logits: repetition penalty, `no_repeat_ngram_size`, `encoder_no_repeat_ngram_size`,
/// `bad_words_ids`, EOS before `min_new_tokens`, `forced_eos_token_id` at the last new token,
/// `suppress_tokens`, `begin_suppress_tokens` at the first. `row` is the sequence so far (prompt,
/// padding included, and new tokens), `padding` its left padding (which the repetition penalty
/// does not see), `n` the number of new tokens before this one, `source` the row's encoder input
/// ids (a decoder-only model's prompt, padding included; empty for Whisper's features).
pub(super) fn process(
    logits: &mut [f32],
    row: &[i64],
    padding: usize,
    n: usize,
    g: &GenerationConfig,
    source: &[i64],
) {
    let ban = |logits: &mut [f32], t: i64| {
        if let Some(l) = usize::try_from(t).ok().and_then(|t| logits.get_mut(t)) {
            *l = f32::NEG_INFINITY;
        }
    };
    if g.repetition_penalty != 1.0 {
        // Once per distinct token, however often it occurs (transformers gathers, then scatters).
        let mut distinct = row[padding.min(row.len())..].to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let p = g.repetition_penalty as f32;
        for &t in &distinct {
            if let Some(l) = usize::try_from(t).ok().and_then(|t| logits.get_mut(t)) {
                *l = if *l < 0.0 { *l * p } else { *l / p };
            }
        }
    }
    let size = g.no_repeat_ngram_size;
    if size > 0 && row.len() + 1 >= size {
        // Every token that followed the current last `size - 1` tokens before.
        let tail = &row[row.len() + 1 - size..];
        for gram in row.windows(size) {
            if &gram[..size - 1] == tail {
                ban(logits, gram[size - 1]);
            }
        }
    }
    let size = g.encoder_no_repeat_ngram_size;
    if size > 0 && row.len() + 1 >= size {
        // Every token that follows the row's last `size - 1` tokens somewhere in the source.
        let tail = &row[row.len() + 1 - size..];
        for gram in source.windows(size) {
            if &gram[..size - 1] == tail {
                ban(logits, gram[size - 1]);
            }
        }
    }
    for words in &g.bad_words_ids {
        let Some((last, prefix)) = words.split_last() else { continue };
        if row.ends_with(prefix) {
            ban(logits, *last);
        }
    }
    if n < g.min_new_tokens {
        g.eos_token_ids.iter().for_each(|&t| ban(logits, t));
    }
    if !g.forced_eos_token_ids.is_empty() && n + 1 == g.max_new_tokens {
        for (i, l) in logits.iter_mut().enumerate() {
            let forced = i64::try_from(i).is_ok_and(|i| g.forced_eos_token_ids.contains(&i));
            *l = if forced { 0.0 } else { f32::NEG_INFINITY };
        }
    }
    g.suppress_tokens.iter().for_each(|&t| ban(logits, t));
    if n == 0 {
        g.begin_suppress_tokens.iter().for_each(|&t| ban(logits, t));
    }
}

/// Whether [`process`] changes any logits with the settings of `g`.
pub(super) fn processes(g: &GenerationConfig) -> bool {
    g.repetition_penalty != 1.0
        || g.no_repeat_ngram_size > 0
        || g.encoder_no_repeat_ngram_size > 0
        || !g.bad_words_ids.is_empty()
        || g.min_new_tokens > 0
        || !g.forced_eos_token_ids.is_empty()
        || !g.suppress_tokens.is_empty()
        || !g.begin_suppress_tokens.is_empty()
}

/// Picks the next token from one row of float32 logits (already [`process`]ed): the most likely,
/// or sampled after transformers' warpers in its order (temperature, top-k, top-p, min-p).
pub(super) fn pick(logits: &mut [f32], g: &GenerationConfig, rng: &mut Rng) -> i64 {
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
        // Tokens tied with the k-th stay (transformers drops only those below it).
        let kth = logits[order[g.top_k - 1]];
        let kept = g.top_k + order[g.top_k..].iter().take_while(|&&i| logits[i] == kth).count();
        order.truncate(kept);
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
