//! Generation with an encoder-decoder (T5, BART): the source encoded once, then the decoder one token at a
//! time from `decoder_start_token_id`, its keys and values cached; the tokens picked on the host as
//! in [`super::generate`] (greedy or sampled, the same logits processors and stopping rules).

use oxtorch_tensor::{DType, Device, NoGradGuard, Tensor};

use super::beam::{beam_result, beam_search, repeat_rows, BeamModel};
use super::sampling::{pick, process, Rng};
use super::stop::StopStrings;
use super::{GenerationConfig, Rows};
use crate::error::{Error, Result};
use crate::layers::EncoderDecoderCache;
use crate::tokenizer::HfTokenizer;

/// An encoder-decoder that generates: the source encoded into a cache once, then one decoder
/// step per token.
pub trait EncoderDecoder {
    /// The first decoder token (`decoder_start_token_id`).
    fn decoder_start_token(&self) -> Option<i64>;
    /// The device the model runs on.
    fn device(&self) -> Device;
    /// Encodes `input_ids` (int64 `[batch, seq]`, on the model's device, with `attention_mask` as
    /// int64 ones and zeros) and starts a generation's cache.
    fn start_generation(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<EncoderDecoderCache>;
    /// The next-token logits `[batch, vocab]` after `ids` `[batch, 1]`, extending `cache`.
    fn next_logits(&self, ids: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor>;
}

/// Generates up to `g.max_new_tokens` decoder tokens for each source of `input_ids` `[batch, seq]`
/// (padded as `attention_mask` says, inferred from the pad token when absent), calling
/// `on_token(row, token)` for each new token of an unfinished row. Returns transformers'
/// `generate` output: `[batch, 1 + steps]` int64, each row starting with `decoder_start_token_id`,
/// finished rows padded with [`GenerationConfig::pad_token`]. `g`'s lengths count the decoder's
/// tokens, the start token included (as transformers' `max_length` for encoder-decoders).
/// With a `tokenizer`, `g.stop_strings` end a row too. With `g.num_beams` > 1 this is beam search
/// (`generate/beam.rs`), its tokens reported once it ends.
pub fn generate_seq2seq(
    model: &impl EncoderDecoder,
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
    let mask = match attention_mask {
        Some(m) if m.dims() == [b, s] => m.ne(0.0)?.to_dtype(DType::I64)?,
        Some(m) => {
            return Err(Error::Input(format!(
                "attention_mask must have shape [{b}, {s}], got {:?}",
                m.dims()
            )))
        }
        None => Tensor::from_vec(g.inferred_mask(&ids.to_vec::<i64>()?), [b, s])?,
    };
    let start = model.decoder_start_token().ok_or_else(|| {
        Error::Config("encoder-decoder generation needs decoder_start_token_id (or pad_token_id)".into())
    })?;
    if b == 0 || g.max_new_tokens == 0 {
        return Ok(Tensor::from_vec(vec![start; b], [b, 1])?);
    }
    // Sampling `num_return_sequences` per source: each source repeated.
    let (ids, mask, b) = if g.num_return_sequences > 1 && g.num_beams == 1 {
        let n = g.num_return_sequences;
        let rows = Tensor::from_vec(repeat_rows(&(0..b as i64).collect::<Vec<_>>(), n), [b * n])?;
        (ids.index_select(0, &rows)?, mask.index_select(0, &rows)?, b * n)
    } else {
        (ids, mask, b)
    };
    let tokens = vec![vec![start]; b];
    // The sources' ids, for `encoder_no_repeat_ngram_size`.
    let sources = ids.to_vec2::<i64>()?;
    if g.num_beams > 1 {
        let device = model.device();
        // Each source once per beam, consecutive.
        let rows: Vec<i64> = repeat_rows(&(0..b as i64).collect::<Vec<_>>(), g.num_beams);
        let rows = Tensor::from_vec(rows, [b * g.num_beams])?;
        let (ids, mask) = (ids.index_select(0, &rows)?.to(device)?, mask.index_select(0, &rows)?.to(device)?);
        let cache = model.start_generation(&ids, Some(&mask))?;
        let best = beam_search(&mut Beamed { model, cache }, &tokens, &vec![0; b], Some(&sources), stop, g)?;
        return beam_result(&best, 1, g, on_token);
    }
    let device = model.device();
    let mut cache = model.start_generation(&ids.to(device)?, Some(&mask.to(device)?))?;
    let mut rows = Rows { tokens, done: vec![false; b], prompt_len: 1, padding: vec![0; b], stop };
    let mut rng = Rng(g.seed);
    let mut last = Tensor::from_vec(vec![start; b], [b, 1])?;
    for n in 0..g.max_new_tokens {
        let logits = model.next_logits(&last.to(device)?, &mut cache)?;
        let logits = logits.to_dtype(DType::F32)?.to(Device::Cpu)?.to_vec2::<f32>()?;
        let next: Vec<i64> = logits
            .into_iter()
            .enumerate()
            .map(|(r, mut logits)| {
                if rows.done[r] && g.pads_finished_rows() {
                    g.pad_token()
                } else if let (0, Some(bos)) = (n, g.forced_bos_token_id) {
                    // transformers' `ForcedBOSTokenLogitsProcessor`: the first new token.
                    bos
                } else {
                    process(&mut logits, &rows.tokens[r], rows.padding[r], n, g, &sources[r]);
                    pick(&mut logits, g, &mut rng)
                }
            })
            .collect();
        if rows.push(&next, g, &mut on_token) {
            break;
        }
        last = Tensor::from_vec(next, [b, 1])?;
    }
    let width = rows.tokens[0].len();
    Ok(Tensor::from_vec(rows.tokens.concat(), [b, width])?)
}

/// An encoder-decoder under beam search: its cache and the decoder's newest tokens.
struct Beamed<'m, M> {
    model: &'m M,
    cache: EncoderDecoderCache,
}

impl<M: EncoderDecoder> BeamModel for Beamed<'_, M> {
    fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor> {
        let last: Vec<i64> = rows.iter().map(|r| r.last().copied().unwrap_or(0)).collect();
        let ids = Tensor::from_vec(last, [rows.len(), 1])?.to(self.model.device())?;
        self.model.next_logits(&ids, &mut self.cache)
    }

    fn reorder(&mut self, from: &[i64]) -> Result<()> {
        self.cache.reorder(from)
    }
}
