//! Beam search, as transformers 5's `_beam_search`, for decoder-only models and encoder-decoders
//! alike: per source, `num_beams` running hypotheses scored by their summed log-probabilities;
//! each step the best `max(2, 1 + EOS tokens) × num_beams` continuations are taken, those ending
//! (EOS or the length limit) among the first `num_beams` enter the finished set with their score
//! divided by `new length ^ length_penalty`, the best `num_beams` unfinished ones go on;
//! `early_stopping` decides when a source is done. The logits processors apply to the
//! log-probabilities, as there.

use oxtorch_tensor::{DType, Device, Tensor};

use super::sampling::process;
use super::stop::StopStrings;
use super::{EarlyStopping, GenerationConfig};
use crate::error::Result;

/// transformers' stand-in for minus infinity in beam scores.
const NEG: f32 = -1.0e9;

/// A model under beam search: row `i × num_beams + k` of its cache holds source `i`'s hypothesis
/// `k`.
pub(super) trait BeamModel {
    /// The next-token logits `[sources × num_beams, vocab]` (any float dtype, on any device) after
    /// `rows`, the running hypotheses (each the whole sequence so far, prompt included), whose
    /// newest token the cache has not seen yet (on the first call, every token of the prompt may
    /// be new).
    fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor>;
    /// Moves the cache's rows: row `r` becomes what row `from[r]` was.
    fn reorder(&mut self, from: &[i64]) -> Result<()>;
}

/// One source's beams.
struct Beams {
    /// running hypotheses (the sequence so far) and their summed log-probabilities
    running: Vec<(Vec<i64>, f32)>,
    /// finished hypotheses: tokens, length-penalised score, whether a real one (not a placeholder)
    finished: Vec<(Vec<i64>, f32, bool)>,
    /// transformers' `is_early_stop_heuristic_unsatisfied`
    can_improve: bool,
}

/// Beam search after `prompts` (one per source, all as long; `padding`: each one's left padding,
/// which the repetition penalty does not see; `encoder_inputs`: each source's encoder input ids
/// for `encoder_no_repeat_ngram_size`, the prompts when `None`) for up to `g.max_new_tokens` new tokens, a
/// hypothesis also ending where it completes one of `stop`'s strings: the best
/// `g.num_return_sequences` hypotheses per source, best first, prompt included (see
/// [`beam_result`]). `model`'s cache holds each prompt `g.num_beams` times, consecutively
/// (transformers' `_expand_inputs_for_generation`).
pub(super) fn beam_search(
    model: &mut impl BeamModel,
    prompts: &[Vec<i64>],
    padding: &[usize],
    encoder_inputs: Option<&[Vec<i64>]>,
    mut stop: Option<StopStrings>,
    g: &GenerationConfig,
) -> Result<Vec<Vec<i64>>> {
    let encoder_inputs = encoder_inputs.unwrap_or(prompts);
    let nb = g.num_beams;
    let b = prompts.len();
    let prompt_len = prompts.first().map_or(0, Vec::len);
    let max_len = prompt_len + g.max_new_tokens;
    let keep = (2.max(1 + g.eos_token_ids.len())) * nb;
    let mut beams: Vec<Beams> = prompts
        .iter()
        .map(|prompt| Beams {
            running: (0..nb).map(|k| (prompt.clone(), if k == 0 { 0.0 } else { NEG })).collect(),
            // (transformers' placeholders hold the prompt: what a source gives when none finishes.)
            finished: vec![(prompt.clone(), NEG, false); nb],
            can_improve: true,
        })
        .collect();
    // (The divisor as Python computes `len ** length_penalty`, then float32 as torch divides;
    // `len` counts new tokens, an encoder-decoder's start token included.)
    let penalised = |score: f32, len: usize| score / (len as f64).powf(g.length_penalty) as f32;
    let mut cur_len = prompt_len;
    loop {
        let rows: Vec<&[i64]> = beams.iter().flat_map(|bm| bm.running.iter().map(|(t, _)| &t[..])).collect();
        let log_probs = model
            .next_logits(&rows)?
            .to_dtype(DType::F32)?
            .log_softmax(-1, None)?
            .to(Device::Cpu)?
            .to_vec2::<f32>()?;
        let n = cur_len - prompt_len;
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
                    process(&mut row, tokens, padding[i], n, g, &encoder_inputs[i]);
                }
                candidates.extend(row.iter().enumerate().map(|(t, &l)| (l + score, k, t as i64)));
            }
            // torch.topk: descending; equal scores in index order.
            candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
            candidates.truncate(keep);
            // transformers' stopping criteria on each candidate: EOS, the length, stop strings.
            let hits: Vec<bool> = candidates
                .iter()
                .map(|&(_, k, t)| {
                    g.eos_token_ids.contains(&t)
                        || cur_len + 1 >= max_len
                        || stop.as_mut().is_some_and(|stop| {
                            let mut tokens = bm.running[k].0.clone();
                            tokens.push(t);
                            stop.matches(&tokens)
                        })
                })
                .collect();
            all_hit &= hits.iter().all(|&h| h);
            // The finished set: the first `num_beams` candidates that ended, penalised by length.
            let full = bm.finished.iter().all(|f| f.2) && g.early_stopping == EarlyStopping::WhenFull;
            let mut merged = bm.finished.clone();
            for (j, (&(score, k, t), &hit)) in candidates.iter().zip(&hits).enumerate() {
                let mut sc = penalised(score, cur_len + 1 - prompt_len);
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
        cur_len += 1;
        let (mut improvable_anywhere, mut all_full) = (false, true);
        for bm in beams.iter_mut() {
            let hypothetical = if g.early_stopping == EarlyStopping::Never && g.length_penalty > 0.0 {
                max_len - prompt_len
            } else {
                cur_len - prompt_len
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
        model.reorder(&reorder)?;
    }
    // Each source's best `num_return_sequences` (the finished set is in score order).
    let n = g.num_return_sequences.clamp(1, nb);
    Ok(beams.into_iter().flat_map(|bm| bm.finished.into_iter().take(n).map(|f| f.0)).collect())
}

/// Each of `rows` `times` times in a row (transformers' `_expand_inputs_for_generation`).
pub(super) fn repeat_rows<T: Clone>(rows: &[T], times: usize) -> Vec<T> {
    rows.iter().flat_map(|row| std::iter::repeat_n(row.clone(), times)).collect()
}

/// Beam search's result: calls `on_token(row, token)` for each new token of each of the `best`
/// hypotheses (after the prompts' `prompt_len` tokens; the hypotheses are only known at the end),
/// and returns them as `[sources, longest]` int64, padded as transformers' `generate(num_beams=...)`
/// pads (see [`fill_value`]).
pub(super) fn beam_result(
    best: &[Vec<i64>],
    prompt_len: usize,
    g: &GenerationConfig,
    mut on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    for (r, row) in best.iter().enumerate() {
        row[prompt_len.min(row.len())..].iter().for_each(|&t| on_token(r, t));
    }
    let pad = fill_value(g);
    let width = best.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut out = Vec::with_capacity(best.len() * width);
    for row in best {
        out.extend(row.iter().copied());
        out.extend(std::iter::repeat_n(pad, width - row.len()));
    }
    Ok(Tensor::from_vec(out, [best.len(), width])?)
}

/// What finished hypotheses are padded with: transformers' `output_fill_value = pad_token_id or
/// eos_token_id[0] if eos_token_id is not None else -1`, where a pad id of 0 is falsy, so the first
/// EOS token fills (T5's pad id is 0).
pub(super) fn fill_value(g: &GenerationConfig) -> i64 {
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

    /// A model whose every next token is equally likely over a vocabulary of `vocab`.
    struct Uniform {
        vocab: usize,
    }

    impl BeamModel for Uniform {
        fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor> {
            Ok(Tensor::zeros([rows.len(), self.vocab], DType::F32)?)
        }
        fn reorder(&mut self, _from: &[i64]) -> Result<()> {
            Ok(())
        }
    }

    /// Where no hypothesis can finish (every token banned before EOS or the length limit), a
    /// source gives its prompt, as transformers' placeholders hold it.
    #[test]
    fn a_source_without_finished_hypotheses_gives_its_prompt() {
        let g = GenerationConfig {
            num_beams: 2,
            max_new_tokens: 8,
            no_repeat_ngram_size: 1,
            eos_token_ids: vec![],
            ..GenerationConfig::default()
        };
        let prompt = vec![0, 1, 2, 3];
        let best =
            beam_search(&mut Uniform { vocab: 4 }, std::slice::from_ref(&prompt), &[0], None, None, &g)
                .unwrap();
        assert_eq!(best, vec![prompt]);
    }
}
