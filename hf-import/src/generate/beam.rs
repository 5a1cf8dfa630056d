//! Beam search for encoder-decoders, as transformers 5's `_beam_search`: per source, `num_beams`
//! running hypotheses scored by their summed log-probabilities; each step the best
//! `max(2, 1 + EOS tokens) × num_beams` continuations are taken, those ending (EOS or the length
//! limit) among the first `num_beams` enter the finished set with their score divided by
//! `length ^ length_penalty`, the best `num_beams` unfinished ones go on; `early_stopping` decides
//! when a source is done. The logits processors apply to the log-probabilities, as there.

use oxtorch_tensor::{DType, Device, NoGradGuard, Tensor};

use super::sampling::process;
use super::seq2seq::EncoderDecoder;
use super::{EarlyStopping, GenerationConfig};
use crate::error::{Error, Result};

/// transformers' stand-in for minus infinity in beam scores.
const NEG: f32 = -1.0e9;

/// One source's beams.
struct Beams {
    /// running hypotheses (decoder tokens so far) and their summed log-probabilities
    running: Vec<(Vec<i64>, f32)>,
    /// finished hypotheses: tokens, length-penalised score, whether a real one (not a placeholder)
    finished: Vec<(Vec<i64>, f32, bool)>,
    /// transformers' `is_early_stop_heuristic_unsatisfied`
    can_improve: bool,
}

/// Beam search from `decoder_start_token_id` over each source of `input_ids` `[batch, seq]` (with
/// `attention_mask`): the best hypothesis per source, `[batch, 1 + generated]` int64 padded as
/// transformers' `generate(num_beams=...)` pads (its pad id, or its first EOS id where the pad id
/// is 0 or unset, -1 without EOS ids).
pub(super) fn beam_search(
    model: &impl EncoderDecoder,
    ids: &Tensor,
    mask: &Tensor,
    start: i64,
    g: &GenerationConfig,
) -> Result<Tensor> {
    if g.do_sample {
        return Err(Error::Input("beam sampling (num_beams > 1 with do_sample) is not supported".into()));
    }
    let _no_grad = NoGradGuard::new();
    let nb = g.num_beams;
    let b = ids.dims()[0];
    // Each source once per beam, consecutive (transformers' `_expand_inputs_for_generation`).
    let rows: Vec<i64> = (0..b as i64).flat_map(|r| std::iter::repeat_n(r, nb)).collect();
    let rows = Tensor::from_vec(rows, [b * nb])?;
    let device = model.device();
    let expanded_ids = ids.index_select(0, &rows)?.to(device)?;
    let expanded_mask = mask.index_select(0, &rows)?.to(device)?;
    let mut cache = model.start_generation(&expanded_ids, Some(&expanded_mask))?;
    let max_len = 1 + g.max_new_tokens;
    let keep = (2.max(1 + g.eos_token_ids.len())) * nb;
    let placeholder = (Vec::new(), NEG, false);
    let mut beams: Vec<Beams> = (0..b)
        .map(|_| Beams {
            running: (0..nb).map(|k| (vec![start], if k == 0 { 0.0 } else { NEG })).collect(),
            finished: vec![placeholder.clone(); nb],
            can_improve: true,
        })
        .collect();
    // (The divisor as Python computes `len ** length_penalty`, then float32 as torch divides.)
    let penalised = |score: f32, len: usize| score / (len as f64).powf(g.length_penalty) as f32;
    let mut cur_len = 1;
    loop {
        let last: Vec<i64> =
            beams.iter().flat_map(|bm| bm.running.iter().map(|(t, _)| *t.last().unwrap_or(&start))).collect();
        let logits = model.next_logits(&Tensor::from_vec(last, [b * nb, 1])?.to(device)?, &mut cache)?;
        let log_probs =
            logits.to_dtype(DType::F32)?.log_softmax(-1, None)?.to(Device::Cpu)?.to_vec2::<f32>()?;
        let n = cur_len - 1;
        let mut reorder = Vec::with_capacity(b * nb);
        let mut all_hit = true;
        for (i, bm) in beams.iter_mut().enumerate() {
            // Every continuation of every beam, by accumulated score.
            let mut candidates: Vec<(f32, usize, i64)> = Vec::new();
            for (k, (tokens, score)) in bm.running.iter().enumerate() {
                let mut row = log_probs[i * nb + k].clone();
                if let (0, Some(bos)) = (n, g.forced_bos_token_id) {
                    row.iter_mut()
                        .enumerate()
                        .for_each(|(t, l)| *l = if t as i64 == bos { 0.0 } else { f32::NEG_INFINITY });
                } else {
                    process(&mut row, tokens, 0, n, g);
                }
                candidates.extend(row.iter().enumerate().map(|(t, &l)| (l + score, k, t as i64)));
            }
            // torch.topk: descending; equal scores in index order.
            candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
            candidates.truncate(keep);
            let hits: Vec<bool> = candidates
                .iter()
                .map(|&(_, _, t)| g.eos_token_ids.contains(&t) || cur_len + 1 >= max_len)
                .collect();
            all_hit &= hits.iter().all(|&h| h);
            // The finished set: the first `num_beams` candidates that ended, penalised by length.
            let full = bm.finished.iter().all(|f| f.2) && g.early_stopping == EarlyStopping::WhenFull;
            let mut merged = bm.finished.clone();
            for (j, (&(score, k, t), &hit)) in candidates.iter().zip(&hits).enumerate() {
                let mut sc = penalised(score, cur_len);
                let real = hit && j < nb;
                if full {
                    sc += NEG;
                }
                if !bm.can_improve {
                    sc += NEG;
                }
                if !real {
                    sc += NEG;
                }
                let mut tokens = bm.running[k].0.clone();
                tokens.push(t);
                merged.push((tokens, sc, real));
            }
            stable_top(&mut merged, nb, |m| m.1);
            bm.finished = merged;
            // The running set: the best `num_beams` candidates that did not end.
            let mut next: Vec<(f32, usize, i64)> = candidates
                .iter()
                .zip(&hits)
                .map(|(&(sc, k, t), &hit)| (if hit { sc + NEG } else { sc }, k, t))
                .collect();
            stable_top(&mut next, nb, |c| c.0);
            let old = std::mem::take(&mut bm.running);
            for &(sc, k, t) in &next {
                let mut tokens = old[k].0.clone();
                tokens.push(t);
                bm.running.push((tokens, sc));
                reorder.push((i * nb + k) as i64);
            }
        }
        cache.reorder(&reorder)?;
        cur_len += 1;
        let (mut improvable_anywhere, mut all_full) = (false, true);
        for bm in beams.iter_mut() {
            let hypothetical = if g.early_stopping == EarlyStopping::Never && g.length_penalty > 0.0 {
                max_len - 1
            } else {
                cur_len - 1
            };
            let best_running = penalised(bm.running[0].1, hypothetical);
            let worst = bm.finished.iter().map(|f| f.1).fold(f32::INFINITY, f32::min);
            let improvable = bm.finished.iter().any(|f| best_running > if f.2 { worst } else { NEG });
            bm.can_improve &= improvable;
            improvable_anywhere |= bm.can_improve;
            all_full &= bm.finished.iter().all(|f| f.2);
        }
        // transformers' `_beam_search_has_unfinished_sequences`, over the whole batch.
        let done_when_full = all_full && g.early_stopping == EarlyStopping::WhenFull;
        if !improvable_anywhere || done_when_full || all_hit || cur_len >= max_len {
            break;
        }
    }
    let pad = fill_value(g);
    let best: Vec<Vec<i64>> = beams.into_iter().map(|bm| bm.finished[0].0.clone()).collect();
    let width = best.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut out = Vec::with_capacity(b * width);
    for row in &best {
        out.extend(row.iter().copied());
        out.extend(std::iter::repeat_n(pad, width - row.len()));
    }
    Ok(Tensor::from_vec(out, [b, width])?)
}

/// What finished hypotheses are padded with: transformers' `output_fill_value = pad_token_id or
/// eos_token_id[0] if eos_token_id is not None else -1`, where a pad id of 0 is falsy, so the first
/// EOS token fills (T5's pad id is 0).
fn fill_value(g: &GenerationConfig) -> i64 {
    match (g.pad_token_id, g.eos_token_ids.first()) {
        (_, None) => -1,
        (Some(p), _) if p != 0 => p,
        (_, Some(&eos)) => eos,
    }
}

/// Keeps the `k` items with the largest `key`, in descending order; equal keys keep their order
/// (torch.topk's on CPU for these sizes).
fn stable_top<T>(items: &mut Vec<T>, k: usize, key: impl Fn(&T) -> f32) {
    let mut indexed: Vec<(usize, T)> = items.drain(..).enumerate().collect();
    indexed.sort_by(|a, b| key(&b.1).total_cmp(&key(&a.1)).then(a.0.cmp(&b.0)));
    items.extend(indexed.into_iter().take(k).map(|(_, t)| t));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's `pad or eos[0] if eos is not None else -1`, with its falsy 0.
    #[test]
    fn finished_hypotheses_are_padded_as_transformers_pads_them() {
        let g = |pad: Option<i64>, eos: Vec<i64>| GenerationConfig {
            pad_token_id: pad,
            eos_token_ids: eos,
            ..GenerationConfig::default()
        };
        assert_eq!(fill_value(&g(Some(5), vec![2])), 5);
        assert_eq!(fill_value(&g(Some(0), vec![1])), 1);
        assert_eq!(fill_value(&g(None, vec![3, 4])), 3);
        assert_eq!(fill_value(&g(Some(5), vec![])), -1);
    }
}
