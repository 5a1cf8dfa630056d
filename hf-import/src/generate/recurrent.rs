//! Generation with a recurrent model (Mamba, Falcon-Mamba): the prompt runs once into the model's
//! state (with its attention mask), then each new token advances the state by one step without a
//! mask, as transformers' `generate` runs them; no KV cache, so a step costs the same at any
//! length. The tokens are picked on the host as in [`super::generate`] (greedy or sampled, the same
//! logits processors, stopping rules and beam search).

use oxtorch_tensor::{DType, Device, NoGradGuard, Tensor};

use super::beam::{beam_result, beam_search, repeat_rows, BeamModel};
use super::sampling::{pick, process, Rng};
use super::stop::StopStrings;
use super::{on_pool, GenerationConfig, Rows};
use crate::error::{Error, Result};
use crate::tokenizer::HfTokenizer;

/// A model that generates from a recurrent state.
pub trait Recurrent: Sync {
    /// What the model carries from token to token.
    type State: Send;
    /// The device the model runs on.
    fn device(&self) -> Device;
    /// Runs the prompts `input_ids` (int64 `[batch, seq]` on the model's device; `attention_mask`
    /// int64 ones and zeros, `None` when nothing is padded) into a new state, and gives the
    /// next-token logits `[batch, vocab]` at their last position.
    fn start(&self, input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<(Tensor, Self::State)>;
    /// The next-token logits `[batch, vocab]` after `ids` `[batch, 1]`, advancing `state`.
    fn next_logits(&self, ids: &Tensor, state: &mut Self::State) -> Result<Tensor>;
    /// Moves the state's rows: row `r` becomes what row `from[r]` was.
    fn reorder(&self, state: &mut Self::State, from: &Tensor) -> Result<()>;
}

/// Generates up to `g.max_new_tokens` tokens after `input_ids` `[batch, seq]` (left-padded
/// prompts with `attention_mask`, inferred from the pad token when absent), calling
/// `on_token(row, token)` for each new token of an unfinished row; with a `tokenizer`,
/// `g.stop_strings` end a row too. Returns the prompts followed by the new tokens, int64, padded
/// as [`super::generate`] pads them. With `g.num_beams` > 1 this is beam search, its tokens
/// reported once it ends.
pub fn generate_recurrent<M: Recurrent>(
    model: &M,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    g: &GenerationConfig,
    tokenizer: Option<&HfTokenizer>,
    mut on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    g.validate()?;
    let stop = match tokenizer {
        Some(tokenizer) => StopStrings::new(tokenizer, &g.stop_strings)?,
        None if !g.stop_strings.is_empty() => {
            return Err(Error::Input("generating with stop strings needs the model's tokenizer".into()))
        }
        None => None,
    };
    let _no_grad = NoGradGuard::new();
    let ids = crate::models::ids_as_i64("input_ids", input_ids)?;
    let (b, s) = match ids.dims() {
        [b, s] if *s > 0 => (*b, *s),
        d => return Err(Error::Input(format!("input_ids must be [batch, seq] with seq > 0, got {d:?}"))),
    };
    let mask: Vec<i64> = match attention_mask {
        Some(m) if m.dims() == [b, s] => m.ne(0.0)?.to_dtype(DType::I64)?.to_vec()?,
        Some(m) => {
            return Err(Error::Input(format!(
                "attention_mask must have shape [{b}, {s}], got {:?}",
                m.dims()
            )))
        }
        None => g.inferred_mask(&ids.to_vec::<i64>()?),
    };
    let rows: Vec<Vec<i64>> = ids.to_vec2::<i64>()?;
    if b == 0 || g.max_new_tokens == 0 {
        return Ok(Tensor::from_vec(rows.concat(), [b, s])?);
    }
    // Sampling `num_return_sequences` per prompt repeats each prompt; beam search runs each
    // prompt once per beam (both consecutively).
    let times = match (g.num_beams, g.num_return_sequences) {
        (1, n) => n.max(1),
        (beams, _) => beams,
    };
    let sources = (g.num_beams > 1).then(|| rows.clone());
    let mask_rows: Vec<&[i64]> = mask.chunks(s).collect();
    let (rows, mask) = (repeat_rows(&rows, times), repeat_rows(&mask_rows, times).concat());
    let b = rows.len();
    let device = model.device();
    let ids_t = Tensor::from_vec(rows.concat(), [b, s])?.to(device)?;
    let mask_t =
        if mask.contains(&0) { Some(Tensor::from_vec(mask.clone(), [b, s])?.to(device)?) } else { None };
    let (logits, state) = on_pool(device, || model.start(&ids_t, mask_t.as_ref()))?;
    // As transformers' `prompt_ignore_length`: the position of each row's first unmasked token.
    let padding: Vec<usize> = mask.chunks(s).map(|m| m.iter().position(|&v| v != 0).unwrap_or(0)).collect();
    if let Some(sources) = sources {
        let padding: Vec<usize> = padding.into_iter().step_by(g.num_beams).collect();
        let mut beamed = Beamed { model, state, prefill: Some(logits) };
        let best = beam_search(&mut beamed, &sources, &padding, None, stop, g)?;
        return beam_result(&best, s, g, on_token);
    }
    let mut state = state;
    let mut rows = Rows { tokens: rows, done: vec![false; b], prompt_len: s, padding, stop };
    let mut rng = Rng(g.seed);
    let mut logits = logits;
    for n in 0..g.max_new_tokens {
        let last = logits.to_dtype(DType::F32)?.to(Device::Cpu)?.to_vec2::<f32>()?;
        let next: Vec<i64> = last
            .into_iter()
            .enumerate()
            .map(|(r, mut logits)| {
                if rows.done[r] && g.pads_finished_rows() {
                    g.pad_token()
                } else {
                    let row = &rows.tokens[r];
                    process(&mut logits, row, rows.padding[r], n, g, &row[..rows.prompt_len]);
                    pick(&mut logits, g, &mut rng)
                }
            })
            .collect();
        if rows.push(&next, g, &mut on_token) || n + 1 == g.max_new_tokens {
            break;
        }
        let ids = Tensor::from_vec(next, [b, 1])?.to(device)?;
        logits = on_pool(device, || model.next_logits(&ids, &mut state))?;
    }
    let width = rows.tokens[0].len();
    Ok(Tensor::from_vec(rows.tokens.concat(), [b, width])?)
}

/// A recurrent model under beam search: its state, and the prompt's logits until the search asks
/// for its first step's.
struct Beamed<'m, M: Recurrent> {
    model: &'m M,
    state: M::State,
    prefill: Option<Tensor>,
}

impl<M: Recurrent> BeamModel for Beamed<'_, M> {
    fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor> {
        if let Some(logits) = self.prefill.take() {
            return Ok(logits);
        }
        let last: Vec<i64> = rows.iter().map(|r| r.last().copied().unwrap_or(0)).collect();
        let device = self.model.device();
        let ids = Tensor::from_vec(last, [rows.len(), 1])?.to(device)?;
        let (model, state) = (self.model, &mut self.state);
        on_pool(device, || model.next_logits(&ids, state))
    }

    fn reorder(&mut self, from: &[i64]) -> Result<()> {
        self.model.reorder(&mut self.state, &Tensor::from_vec(from.to_vec(), [from.len()])?)
    }
}
