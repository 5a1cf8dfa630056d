//! Text generation with a KV cache: greedy, sampled (temperature, top-k, top-p, min-p, repetition
//! penalty, seed) or beam search, transformers' token bans (n-gram repeats, bad words, suppressed and forced
//! tokens), stopping at EOS tokens from `generation_config.json` or at stop strings, batched
//! prompts with left padding, tokens streamed to a callback as they come.

use oxtorch_backend_tpu::xla::{take_recorded, Recorded};
use oxtorch_tensor::{DType, Device, NoGradGuard, Tensor};

use crate::error::{Error, Result};
use crate::layers::{bucket, CrossAttentionStates, KvCache};
use crate::models::bucketing::fuse_forward;
use crate::models::{AttentionBlocks, CausalLm, ReplacedRows};
use crate::tokenizer::HfTokenizer;

mod beam;
mod config;
mod recurrent;
mod sampling;
mod seq2seq;
mod stop;
mod whisper;

pub use config::{CacheImplementation, EarlyStopping, GenerationConfig};
pub use recurrent::{generate_recurrent, Recurrent};
pub use seq2seq::{generate_seq2seq, EncoderDecoder};
pub use whisper::{generate_whisper, SpeechSeq2Seq, WhisperPrompt};

use beam::{beam_result, beam_search, repeat_rows, BeamModel};
use sampling::{pick, process, processes, Rng};
use stop::StopStrings;

/// The new tokens a generation's KV cache is first allocated for. A longer generation grows the
/// cache as its tokens come (doubling on the cpu, bucket by bucket with a static cache), so that a
/// huge `max_new_tokens` that ends at an EOS token early costs no more memory than its tokens.
const FIRST_NEW_SLOTS: usize = 256;

/// Generates up to `g.max_new_tokens` tokens after `input_ids` `[batch, seq]` (left-padded prompts
/// with `attention_mask`), calling `on_token(row, token)` for each new token of an unfinished row.
/// Returns the prompts followed by the new tokens (finished rows padded with
/// [`GenerationConfig::pad_token`] when EOS tokens are configured, else going on with their own
/// tokens until every row has finished: see [`GenerationConfig::pads_finished_rows`]), int64, on
/// the host; with `max_new_tokens` 0, the prompts unchanged. Runs on the model's device: the KV
/// cache stays there. Greedy decoding on xla/tpu picks tokens there too and downloads only them
/// (see `decode_greedy_on_device`); otherwise each step moves the new tokens up and the last
/// position's logits down. Stop strings need the tokenizer: see [`generate_with_tokenizer`].
///
/// With `g.num_beams` > 1 this is beam search (transformers' `_beam_search`: `g.length_penalty`,
/// `g.early_stopping`), each prompt's best `g.num_return_sequences` hypotheses returned (best
/// first), padded as transformers pads them; their tokens are reported to `on_token` once the
/// search ends. Sampling with `g.num_return_sequences` > 1 samples each prompt that many times
/// (consecutive rows).
pub fn generate(
    lm: &CausalLm,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    g: &GenerationConfig,
    on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    if !g.stop_strings.is_empty() {
        return Err(Error::Input(
            "There are one or more stop strings, either in the arguments to `generate` or in the model's \
             generation config, but we could not locate a tokenizer. When generating with stop strings, you \
             must pass the model's tokenizer (generate_with_tokenizer)."
                .into(),
        ));
    }
    generate_with(lm, input_ids, attention_mask, g, None, None, FIRST_NEW_SLOTS, on_token)
}

/// Image features for the image tokens of prompts (a vision-language model's: see
/// [`VisionLanguageForConditionalGeneration::image_rows`](crate::models::VisionLanguageForConditionalGeneration::image_rows)).
#[derive(Debug, Clone, Copy)]
pub struct PromptImages<'a> {
    /// the image token, whose embeddings the features replace
    pub token: i64,
    /// `[n, hidden]`: one row per image token of the prompts, in their order (prompt by prompt)
    pub rows: &'a Tensor,
    /// blocks of the prompts' tokens that attend to each other both ways in the prefill (`ids`
    /// `[batch, seq]` as the prompts: Gemma 3's images, PaliGemma's prefix, from the
    /// `token_type_ids` their processors write: see `attention_blocks` of those models); `None`:
    /// causal attention alone. The new tokens are in none.
    pub blocks: Option<AttentionBlocks<'a>>,
    /// the prompts' multimodal RoPE positions `[3, batch, seq]` (Qwen2-VL's: see
    /// [`VisionLanguageForConditionalGeneration::rope_positions`](crate::models::VisionLanguageForConditionalGeneration::rope_positions));
    /// each stream's new tokens go on from its last column, as transformers' `generate` does.
    /// `None`: the positions count the prompts' tokens.
    pub positions: Option<&'a Tensor>,
    /// rows added at the image tokens after the first layers in the prefill, one `[n, hidden]`
    /// (as `rows`) per layer: Qwen3-VL's deepstack features (see
    /// [`VisionLanguageForConditionalGeneration::image_features_of`](crate::models::VisionLanguageForConditionalGeneration::image_features_of));
    /// empty for none
    pub deepstack: &'a [Tensor],
    /// a second token whose embeddings the rows replace too (Qwen's video token): `rows` then
    /// follow the two tokens in the prompts' order; `None`: `token` alone
    pub video_token: Option<i64>,
    /// what the model's cross-attention layers attend to at every step, one row per prompt
    /// (Llama 3.2 Vision's images: see
    /// [`CausalLm::cross_attention_states`](crate::models::CausalLm::cross_attention_states));
    /// `None` for a model without them
    pub cross: Option<&'a CrossAttentionStates>,
}

/// The owned counterpart of [`PromptImages`]: what generation takes of prompts with images (and
/// videos), computed by the model
/// ([`VisionLanguageForConditionalGeneration::prompt_media`](crate::models::VisionLanguageForConditionalGeneration::prompt_media)),
/// lent by [`PromptMedia::as_prompt`].
#[derive(Debug, Clone)]
pub struct PromptMedia {
    /// the image token
    pub token: i64,
    /// the video token, where the prompts have videos (Qwen's)
    pub video_token: Option<i64>,
    /// `[tokens, hidden]`: the images' (and videos') features in the order of their tokens
    pub rows: Tensor,
    /// the attention blocks' ids `[batch, seq]` and whether a sliding window hides keys of a
    /// token's own block (see [`AttentionBlocks`])
    pub blocks: Option<(Tensor, bool)>,
    /// the multimodal RoPE positions `[3, batch, seq]` (Qwen's)
    pub positions: Option<Tensor>,
    /// Qwen3-VL's deepstack rows, one per layer
    pub deepstack: Vec<Tensor>,
    /// what the cross-attention layers attend to (Llama 3.2 Vision's images)
    pub cross: Option<CrossAttentionStates>,
}

impl PromptMedia {
    /// The features `rows` of the prompts' `token`s, nothing else.
    pub fn new(token: i64, rows: Tensor) -> Self {
        let (video_token, blocks, positions, deepstack, cross) = (None, None, None, Vec::new(), None);
        PromptMedia { token, video_token, rows, blocks, positions, deepstack, cross }
    }

    /// The prompts' images as [`generate_with_images`] takes them.
    pub fn as_prompt(&self) -> PromptImages<'_> {
        let blocks = self
            .blocks
            .as_ref()
            .map(|(ids, within_window)| AttentionBlocks { ids, within_window: *within_window });
        PromptImages {
            token: self.token,
            rows: &self.rows,
            blocks,
            positions: self.positions.as_ref(),
            deepstack: &self.deepstack,
            video_token: self.video_token,
            cross: self.cross.as_ref(),
        }
    }
}

impl PromptImages<'_> {
    /// Whether `id` is one of the tokens the rows replace.
    fn replaces(&self, id: i64) -> bool {
        id == self.token || Some(id) == self.video_token
    }
}

/// [`generate`] (with stop strings when `tokenizer` is given) from prompts with images: the
/// prefill takes `images.rows` in place of the image tokens' embeddings, as transformers'
/// `generate(pixel_values=...)` of LLaVA; the new tokens are text.
pub fn generate_with_images(
    lm: &CausalLm,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    images: PromptImages<'_>,
    g: &GenerationConfig,
    tokenizer: Option<&HfTokenizer>,
    on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    if tokenizer.is_none() && !g.stop_strings.is_empty() {
        // (`generate`'s error: stop strings need the tokenizer.)
        return generate(lm, input_ids, attention_mask, g, on_token);
    }
    if let Some(blocks) = images.blocks.filter(|b| b.ids.dims() != input_ids.dims()) {
        return Err(Error::Input(format!(
            "the attention blocks have shape {:?}, the prompts {:?}",
            blocks.ids.dims(),
            input_ids.dims()
        )));
    }
    if lm.recompute_cache_at().is_some() {
        return Err(Error::Unsupported(
            "generation with images from a model that recomputes its cache over the whole sequence \
             (long-context RoPE switching) is not supported"
                .into(),
        ));
    }
    generate_with(lm, input_ids, attention_mask, g, tokenizer, Some(images), FIRST_NEW_SLOTS, on_token)
}

/// [`generate`], also ending a sequence once its text ends in one of `g.stop_strings` (as
/// transformers' `generate(..., tokenizer=...)`): the token that completes a stop string is kept,
/// and the match is made on the tokens' own texts, so it ends inside the newest token.
pub fn generate_with_tokenizer(
    lm: &CausalLm,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    g: &GenerationConfig,
    tokenizer: &HfTokenizer,
    on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    generate_with(lm, input_ids, attention_mask, g, Some(tokenizer), None, FIRST_NEW_SLOTS, on_token)
}

/// The KV cache's first capacity: the prompt's `width` slots (a static cache's bucket padding
/// included) and room for `first_new_slots` new tokens at most. Fails when the whole sequence's
/// length (`width + max_new_tokens`) would overflow.
fn first_capacity(width: usize, max_new_tokens: usize, first_new_slots: usize) -> Result<usize> {
    if width.checked_add(max_new_tokens).is_none() {
        return Err(Error::Input(format!(
            "max_new_tokens ({max_new_tokens}) is too large: with the prompt's {width} tokens, the \
             sequence length overflows"
        )));
    }
    Ok(width + max_new_tokens.min(first_new_slots))
}

/// [`generate`] with a KV cache first allocated for `first_new_slots` new tokens, stop strings
/// when a tokenizer is given, and image features in the prefill when `images` are given.
#[allow(clippy::too_many_arguments)]
fn generate_with(
    lm: &CausalLm,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    g: &GenerationConfig,
    tokenizer: Option<&HfTokenizer>,
    images: Option<PromptImages<'_>>,
    first_new_slots: usize,
    mut on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    g.validate()?;
    let stop = match tokenizer {
        Some(tokenizer) => StopStrings::new(tokenizer, &g.stop_strings)?,
        None => None,
    };
    // Nothing here needs gradients, and the cache is written in place.
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
    let prompts = b;
    if b == 0 || g.max_new_tokens == 0 {
        return Ok(Tensor::from_vec(rows.concat(), [b, s])?);
    }
    // Each prompt's image features (checked against its image tokens before any repetition), and
    // its deepstack rows per layer.
    let image_rows = images.map(|i| rows_per_prompt(&rows, i)).transpose()?;
    let deepstack_rows: Vec<Vec<Tensor>> = match images {
        Some(i) => i
            .deepstack
            .iter()
            .map(|d| rows_per_prompt(&rows, PromptImages { rows: d, ..i }))
            .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let streams = images.and_then(|i| i.positions).map(|p| streams_per_prompt(p, b, s)).transpose()?;
    // Sampling `num_return_sequences` per prompt: each prompt repeated (beam search instead
    // returns its best hypotheses).
    let (rows, mask, b) = if g.num_return_sequences > 1 && g.num_beams == 1 {
        let n = g.num_return_sequences;
        let mask_rows: Vec<&[i64]> = mask.chunks(s).collect();
        (repeat_rows(&rows, n), repeat_rows(&mask_rows, n).concat(), b * n)
    } else {
        (rows, mask, b)
    };
    // Beam search runs each prompt once per beam, consecutively.
    let (sources, rows, mask) = if g.num_beams > 1 {
        let mask_rows: Vec<&[i64]> = mask.chunks(s).collect();
        (Some(rows.clone()), repeat_rows(&rows, g.num_beams), repeat_rows(&mask_rows, g.num_beams).concat())
    } else {
        (None, rows, mask)
    };
    let device = lm.device();
    // (A hybrid's recurrent layers would take a bucket's padding into their state: its prompts run
    // at their own length.)
    let fixed = g.cache_implementation.is_static(device) && !lm.has_recurrent_layers();
    // On xla/tpu each forward (the prefill, then every decode step) is recorded and runs as one
    // fused program (when its logits or tokens are read, or when launched), unless
    // `OXTORCH_XLA_MODE` chose a mode.
    let _fused = fuse_forward(device);
    let mut prompt = Prompt::new(&rows, &mask, fixed);
    if let Some(per_prompt) = &streams {
        let times = rows.len() / per_prompt.len().max(1);
        let per_row: Vec<&[i64]> =
            per_prompt.iter().flat_map(|p| std::iter::repeat_n(p.as_slice(), times)).collect();
        prompt.set_streams(&per_row);
    }
    // The cache, the mask and the ids stay on the model's device; each step uploads the new
    // positions (and, picking on the host, the new tokens). A static cache's capacity depends on
    // the prompt's bucket, not its length, so all the prompts of a bucket share their programs.
    let layers = lm.num_layers();
    if layers == 0 {
        // The KV cache is where generation keeps its positions; a model with no layer has none.
        return Err(Error::Config(
            "generation needs a model with at least one layer (num_hidden_layers is 0)".into(),
        ));
    }
    // Allocated for the first new tokens only; later ones grow it (and the mask with it).
    let capacity = first_capacity(prompt.width, g.max_new_tokens, first_new_slots)?;
    let mut cache =
        if fixed { KvCache::fixed(layers, capacity) } else { KvCache::with_capacity(layers, capacity) };
    if let Some(cross) = images.and_then(|i| i.cross) {
        if cross.mask_rows().is_some_and(|rows| rows != s) {
            return Err(Error::Input(format!(
                "the cross-attention mask has {} rows, the prompts {s} tokens",
                cross.mask_rows().unwrap_or(0)
            )));
        }
        cache.set_cross_attention(cross_rows(cross, prompts, rows.len())?);
    }
    let (mut ids_t, pos_t, mask_t) = prompt.tensors(cache.capacity(), device)?;
    // (An image token past the embedding table, whose rows are replaced, is looked up as id 0.)
    if let Some(images) = images {
        ids_t = lm.ids_in_vocabulary(&ids_t, images.token)?;
    }
    // Without padding, a cache read up to its filled length needs no attention mask beyond causality.
    let mask_t = (fixed || mask.contains(&0)).then_some(mask_t);
    // The image features of each row (a prompt repeated for its samples or beams repeats them).
    let replaced = match (images, image_rows) {
        (Some(images), Some(per_prompt)) => {
            let times = rows.len() / per_prompt.len().max(1);
            let repeated: Vec<&Tensor> =
                per_prompt.iter().flat_map(|r| std::iter::repeat_n(r, times)).collect();
            let image_mask: Vec<bool> = rows
                .iter()
                .flat_map(|row| {
                    let padding = std::iter::repeat_n(false, prompt.width - row.len());
                    row.iter().map(|&id| images.replaces(id)).chain(padding)
                })
                .collect();
            let blocks = match images.blocks {
                Some(blocks) => {
                    Some((padded_blocks(blocks.ids, times, prompt.width, device)?, blocks.within_window))
                }
                None => None,
            };
            let image_mask = Tensor::from_vec(image_mask, [rows.len(), prompt.width])?.to(device)?;
            let added = deepstack_rows
                .iter()
                .map(|per_prompt| {
                    let repeated: Vec<&Tensor> =
                        per_prompt.iter().flat_map(|r| std::iter::repeat_n(r, times)).collect();
                    Tensor::cat(&repeated, 0)
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Some((image_mask, Tensor::cat(&repeated, 0)?, blocks, added))
        }
        _ => None,
    };
    let replaced = replaced.as_ref().map(|(mask, rows, blocks, added)| ReplacedRows {
        mask,
        rows,
        blocks: blocks
            .as_ref()
            .map(|(ids, within_window)| AttentionBlocks { ids, within_window: *within_window }),
        added,
    });
    let logits = on_pool(device, || {
        lm.logits_at_with_rows(&ids_t, replaced, mask_t.as_ref(), Some(&pos_t), Some(&mut cache), s - 1)
    })?;
    cache.truncate(s);
    // (The new tokens read the cross-attention mask's last row alone.)
    if let Some(cross) = cache.cross_attention() {
        let kept = cross.after_prompt()?;
        cache.set_cross_attention(kept);
    }
    // As transformers' `prompt_ignore_length`: the position of each row's first unmasked token.
    let padding: Vec<usize> = mask.chunks(s).map(|m| m.iter().position(|&v| v != 0).unwrap_or(0)).collect();
    let mut step = Step { lm, device, mask: mask_t };
    if let Some(sources) = sources {
        let padding: Vec<usize> = padding.into_iter().step_by(g.num_beams).collect();
        let mut beamed = Beamed { step, cache, prompt, prefill: Some(logits), prompt_len: s };
        let best = beam_search(&mut beamed, &sources, &padding, None, stop, g)?;
        return beam_result(&best, s, g, on_token);
    }
    let mut rows = Rows { tokens: rows, done: vec![false; b], prompt_len: s, padding, stop };
    if greedy_on_device(lm, device, g) {
        decode_greedy_on_device(&mut step, logits, &mut cache, &mut prompt, &mut rows, g, &mut on_token)?;
    } else {
        decode_on_host(&mut step, logits, &mut cache, &mut prompt, &mut rows, g, &mut on_token)?;
    }
    let rows = rows.tokens;
    let width = rows[0].len();
    Ok(Tensor::from_vec(rows.concat(), [b, width])?)
}

/// The cross-attention states of `prompts` prompts for the `rows` rows generation runs (each
/// prompt repeated for its samples or beams, consecutively).
fn cross_rows(cross: &CrossAttentionStates, prompts: usize, rows: usize) -> Result<CrossAttentionStates> {
    if cross.batch() != prompts {
        return Err(Error::Input(format!(
            "the cross-attention states are for {} prompts, input_ids has {prompts}",
            cross.batch()
        )));
    }
    let times = rows / prompts.max(1);
    if times == 1 {
        return Ok(cross.clone());
    }
    let index: Vec<i64> = (0..prompts as i64).flat_map(|p| std::iter::repeat_n(p, times)).collect();
    cross.select_rows(&Tensor::from_vec(index, [rows])?)
}

/// The prompts' attention blocks `ids` `[prompts, seq]` for the rows generation runs: each prompt
/// `times` times (its samples or beams), padded with -1 to `width` columns, on `device`.
fn padded_blocks(ids: &Tensor, times: usize, width: usize, device: Device) -> Result<Tensor> {
    let prompts = ids.to_dtype(DType::I64)?.to_vec2::<i64>()?;
    let mut out = Vec::with_capacity(prompts.len() * times * width);
    for row in &prompts {
        if row.len() > width {
            return Err(Error::Input(format!(
                "attention blocks of {} columns for prompts of {width}",
                row.len()
            )));
        }
        for _ in 0..times {
            out.extend_from_slice(row);
            out.extend(std::iter::repeat_n(-1, width - row.len()));
        }
    }
    Ok(Tensor::from_vec(out, [prompts.len() * times, width])?.to(device)?)
}

/// The multimodal RoPE positions `[3, b, s]` of the prompts, each prompt's `[3 · s]` (stream by
/// stream), checked.
fn streams_per_prompt(positions: &Tensor, b: usize, s: usize) -> Result<Vec<Vec<i64>>> {
    if positions.dims() != [3, b, s] || positions.dtype().is_float() {
        return Err(Error::Input(format!(
            "the prompts' multimodal RoPE positions must be integers of shape [3, {b}, {s}], got {:?} {:?}",
            positions.dtype(),
            positions.dims()
        )));
    }
    let all = positions.to_dtype(DType::I64)?.to_vec::<i64>()?;
    // (Far from overflowing as generation counts on from them.)
    if let Some(p) = all.iter().find(|p| p.unsigned_abs() > 1 << 40) {
        return Err(Error::Input(format!(
            "the prompts' multimodal RoPE positions must be within ±2^40, got {p}"
        )));
    }
    Ok((0..b)
        .map(|r| (0..3).flat_map(|k| all[(k * b + r) * s..(k * b + r + 1) * s].to_vec()).collect())
        .collect())
}

/// `images.rows` split by prompt: as many rows for each prompt as it has image tokens (their
/// total must be the number of rows, transformers' check).
fn rows_per_prompt(prompts: &[Vec<i64>], images: PromptImages<'_>) -> Result<Vec<Tensor>> {
    let counts: Vec<usize> =
        prompts.iter().map(|p| p.iter().filter(|&&id| images.replaces(id)).count()).collect();
    let tokens: usize = counts.iter().sum();
    let features = images.rows.dims().first().copied().unwrap_or(0);
    if images.rows.rank() != 2 || tokens != features {
        return Err(Error::Input(format!(
            "Image features and image tokens do not match, tokens: {tokens}, features: {features} (features of shape {:?})",
            images.rows.dims()
        )));
    }
    let mut at = 0;
    let mut out = Vec::with_capacity(counts.len());
    for n in counts {
        out.push(images.rows.narrow(0, at as isize, n)?);
        at += n;
    }
    Ok(out)
}

/// The sequences being generated: prompts and new tokens, and which rows have finished.
struct Rows<'t> {
    tokens: Vec<Vec<i64>>,
    done: Vec<bool>,
    /// the prompts' length (padding included)
    prompt_len: usize,
    /// each row's left padding (the repetition penalty does not see it)
    padding: Vec<usize>,
    /// the stop strings, when generating with some
    stop: Option<StopStrings<'t>>,
}

impl Rows<'_> {
    /// Appends one new token per row (the pad token to finished rows when
    /// [`GenerationConfig::pads_finished_rows`], else their own token), tells `on_token` about the
    /// unfinished rows' tokens, and marks rows that produced an EOS token or completed a stop
    /// string finished. Returns whether every row has finished.
    fn push(&mut self, next: &[i64], g: &GenerationConfig, on_token: &mut impl FnMut(usize, i64)) -> bool {
        let pad = g.pads_finished_rows();
        for (r, (row, &token)) in self.tokens.iter_mut().zip(next).enumerate() {
            if self.done[r] {
                // Without EOS tokens transformers keeps a finished row's tokens (it only stops once
                // every row has finished).
                row.push(if pad { g.pad_token() } else { token });
                continue;
            }
            on_token(r, token);
            row.push(token);
            self.done[r] =
                g.eos_token_ids.contains(&token) || self.stop.as_mut().is_some_and(|s| s.matches(row));
        }
        self.done.iter().all(|&d| d)
    }
}

/// One decode forward on the model's device, with the cache and the attention mask of a
/// generation.
struct Step<'a> {
    lm: &'a CausalLm,
    device: Device,
    /// `[batch, capacity]` on the device, as wide as the cache (`None`: no padding, and a cache
    /// read up to its filled length)
    mask: Option<Tensor>,
}

impl Step<'_> {
    /// Widens the attention mask to the cache's capacity when a forward grew the cache past it (the
    /// forward takes a mask as wide as the filled positions or as the capacity). Returns the mask it
    /// replaced, which a step still running on the device may read.
    fn fit_mask(&mut self, cache: &KvCache, prompt: &Prompt) -> Result<Option<Tensor>> {
        let capacity = cache.capacity();
        match &self.mask {
            Some(m) if m.dims()[1] < capacity => {
                let wider = prompt.mask_tensor(capacity, self.device)?;
                Ok(self.mask.replace(wider))
            }
            _ => Ok(None),
        }
    }

    /// The rows' next positions `[batch, 1]` on the model's device (a multimodal RoPE's streams
    /// `[3, batch, 1]` where they differ), advancing them.
    fn positions(&self, prompt: &mut Prompt) -> Result<Tensor> {
        let next = prompt.advance();
        let b = next.len();
        match prompt.stream_offsets.as_ref().filter(|o| o.iter().any(|o| *o != [0; 3])) {
            Some(offsets) => {
                let streams = (0..3).flat_map(|k| next.iter().zip(offsets).map(move |(p, o)| p + o[k]));
                Ok(Tensor::from_vec(streams.collect(), [3, b, 1])?.to(self.device)?)
            }
            None => Ok(Tensor::from_vec(next, [b, 1])?.to(self.device)?),
        }
    }

    /// The logits `[batch, vocab]` after `ids` `[batch, 1]` (on the model's device) at the rows'
    /// next positions, which it advances; the new keys and values go into `cache`.
    fn next(&self, ids: &Tensor, cache: &mut KvCache, prompt: &mut Prompt) -> Result<Tensor> {
        let pos = self.positions(prompt)?;
        on_pool(self.device, || self.lm.logits_at(ids, self.mask.as_ref(), Some(&pos), Some(cache), 0))
    }
}

/// Whether greedy decoding can pick tokens on the model's device: on a compiling device (where a
/// step's program runs while the host records the next), greedy without any logits processor
/// (repetition penalty, token bans, minimum length: the argmax of the logits, nothing the host must
/// see first), and not a model that recomputes its cache at some length (Phi-3's LongRoPE switch).
fn greedy_on_device(lm: &CausalLm, device: Device, g: &GenerationConfig) -> bool {
    !device.is_cpu() && !g.do_sample && !processes(g) && lm.recompute_cache_at().is_none()
}

/// Greedy decoding with the argmax on the device, pipelined: while a helper thread computes step
/// n (one fused program), this thread records step n + 1 on step n's tokens, which are still
/// pending on the device. The host's work per step (recording, planning, launching, reading the
/// tokens) then overlaps with the device's, and each step downloads `batch` tokens instead of
/// `batch × vocab` logits. A finished row's input is its own argmax rather than the pad token;
/// rows never attend to each other, so the other rows' tokens are unchanged, and the finished
/// row's outputs are replaced by padding (or kept, without EOS tokens: see
/// [`GenerationConfig::pads_finished_rows`]). The step computed after the last row finished is
/// discarded. Unlike the host's pick, the device's argmax takes a NaN logit as the largest.
///
/// Every tensor a launched graph reads or returns stays held until that graph has run: were one
/// dropped while the helper plans the graph, whether its buffer is returned or donated would
/// depend on timing, and each way is another program. So is a mask that a grown cache replaced.
fn decode_greedy_on_device(
    step: &mut Step<'_>,
    prefill_logits: Tensor,
    cache: &mut KvCache,
    prompt: &mut Prompt,
    rows: &mut Rows,
    g: &GenerationConfig,
    on_token: &mut impl FnMut(usize, i64),
) -> Result<()> {
    let argmax = |logits: &Tensor| Ok::<_, Error>(logits.argmax(Some(-1), true)?);
    let launch = |graph: Recorded| graph.launch().map_err(Error::from);
    // A helper's panic is re-raised here, as if the step had run on this thread.
    let finish = |running: std::thread::ScopedJoinHandle<'_, Result<()>>| {
        running.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    };
    std::thread::scope(|scope| {
        // `ids`: step n's tokens `[batch, 1]`, computed by `running`. The prefill's logits are
        // dropped before its graph is taken: only the tokens are its result.
        let mut ids = argmax(&prefill_logits)?;
        drop(prefill_logits);
        let taken = take_recorded();
        let mut running = Some(scope.spawn(move || launch(taken)));
        // Step n - 1's tokens, read by the running step n.
        let mut read_by_running: Option<Tensor> = None;
        // Step n + 1's tokens when the rows finished at step n: that step was launched already.
        let mut discarded: Option<Tensor> = None;
        for n in 0..g.max_new_tokens {
            // Read by the running step when the step recorded before it grew the cache.
            let replaced_mask = step.fit_mask(cache, prompt)?;
            let following = if n + 1 < g.max_new_tokens {
                let pos = step.positions(prompt)?;
                Some(argmax(&step.lm.logits_after_own_tokens(&ids, step.mask.as_ref(), &pos, cache)?)?)
            } else {
                None
            };
            if let Some(done) = running.take() {
                finish(done)?;
            }
            drop(replaced_mask);
            if following.is_some() {
                let taken = take_recorded();
                running = Some(scope.spawn(move || launch(taken)));
            }
            let tokens: Vec<i64> = ids.to_vec()?;
            if rows.push(&tokens, g, on_token) {
                discarded = following;
                break;
            }
            let Some(following) = following else { break };
            read_by_running = Some(std::mem::replace(&mut ids, following));
        }
        // The step launched after the last row finished: its result is not needed, and an error
        // in it is not the caller's; a panic is re-raised.
        if let Some(extra) = running {
            let _ = finish(extra);
        }
        drop((read_by_running, discarded));
        Ok(())
    })
}

/// Decoding with the tokens picked on the host from each step's downloaded logits: sampling, the
/// logits processors (penalties and bans), the cpu, and models that recompute their cache.
fn decode_on_host(
    step: &mut Step<'_>,
    mut logits: Tensor,
    cache: &mut KvCache,
    prompt: &mut Prompt,
    rows: &mut Rows,
    g: &GenerationConfig,
    on_token: &mut impl FnMut(usize, i64),
) -> Result<()> {
    let mut rng = Rng(g.seed);
    for n in 0..g.max_new_tokens {
        let last = logits.to_dtype(DType::F32)?.to(Device::Cpu)?.to_vec2::<f32>()?;
        let next: Vec<i64> = last
            .into_iter()
            .enumerate()
            .map(|(r, mut logits)| {
                // A finished row without padding goes on as an unfinished one (transformers' rows
                // are only padded when EOS tokens are configured).
                if rows.done[r] && g.pads_finished_rows() {
                    g.pad_token()
                } else {
                    let row = &rows.tokens[r];
                    process(&mut logits, row, rows.padding[r], n, g, &row[..rows.prompt_len]);
                    pick(&mut logits, g, &mut rng)
                }
            })
            .collect();
        if rows.push(&next, g, on_token) || n + 1 == g.max_new_tokens {
            break;
        }
        let len = rows.tokens[0].len();
        // The previous step has run (its logits were read): a mask it replaces is not read again.
        step.fit_mask(cache, prompt)?;
        if step.lm.recompute_cache_at() == Some(len) && len > rows.prompt_len {
            // The whole sequence again on an emptied cache, as transformers does for Phi-3.
            prompt.advance();
            let (all_ids, all_pos) = prompt.whole(&rows.tokens)?;
            let (all_ids, all_pos) = (all_ids.to(step.device)?, all_pos.to(step.device)?);
            cache.truncate(0);
            logits = on_pool(step.device, || {
                step.lm.logits_at(&all_ids, step.mask.as_ref(), Some(&all_pos), Some(cache), len - 1)
            })?;
            continue;
        }
        let ids = Tensor::from_vec(next, [rows.tokens.len(), 1])?.to(step.device)?;
        logits = step.next(&ids, cache, prompt)?;
    }
    Ok(())
}

/// A causal LM under beam search: its cache, the prompt's positions and mask (the same for every
/// beam of a source, so a reordering of the beams leaves them alone), and the prefill's logits
/// until the search asks for its first step's.
struct Beamed<'a> {
    step: Step<'a>,
    cache: KvCache,
    prompt: Prompt,
    prefill: Option<Tensor>,
    /// the prompts' length (padding included)
    prompt_len: usize,
}

impl BeamModel for Beamed<'_> {
    fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor> {
        if let Some(logits) = self.prefill.take() {
            return Ok(logits);
        }
        let len = rows.first().map_or(0, |r| r.len());
        // The previous step has run (its logits were read): a mask it replaces is not read again.
        self.step.fit_mask(&self.cache, &self.prompt)?;
        let (step, cache) = (&self.step, &mut self.cache);
        if step.lm.recompute_cache_at() == Some(len) && len > self.prompt_len {
            // The whole sequence again on an emptied cache, as transformers does for Phi-3.
            self.prompt.advance();
            let rows: Vec<Vec<i64>> = rows.iter().map(|r| r.to_vec()).collect();
            let (all_ids, all_pos) = self.prompt.whole(&rows)?;
            let (all_ids, all_pos) = (all_ids.to(step.device)?, all_pos.to(step.device)?);
            cache.truncate(0);
            return on_pool(step.device, || {
                step.lm.logits_at(&all_ids, step.mask.as_ref(), Some(&all_pos), Some(cache), len - 1)
            });
        }
        let last: Vec<i64> = rows.iter().map(|r| r.last().copied().unwrap_or(0)).collect();
        let ids = Tensor::from_vec(last, [rows.len(), 1])?.to(step.device)?;
        step.next(&ids, cache, &mut self.prompt)
    }

    fn reorder(&mut self, from: &[i64]) -> Result<()> {
        self.cache.reorder_rows(&Tensor::from_vec(from.to_vec(), [from.len()])?)
    }
}

/// Runs `f` (a forward pass) on a thread of rayon's pool when the model is on the cpu. The CPU
/// kernels' parallel loops then share their work with the pool's other threads directly; called from
/// outside the pool, each of them (a step runs dozens) would wake the pool and block on a condition
/// variable until it finished, which measured a fifth of a batch-1 decode step of a 110M model on two
/// cores. Grad mode is per thread, so it is switched off there too; under autocast (also per thread)
/// `f` runs here.
fn on_pool<R: Send>(device: Device, f: impl FnOnce() -> R + Send) -> R {
    if !device.is_cpu() || oxtorch_tensor::autocast::autocast_dtype().is_some() {
        return f();
    }
    rayon::scope(|_| {
        let _no_grad = NoGradGuard::new();
        f()
    })
}

/// The prompt as the first forward takes it: right-padded with token 0 to a [`bucket`] for a static
/// cache (so that prompts of many lengths share a prefill program set), with positions
/// counting real tokens only (left padding), as transformers' `generate`.
struct Prompt {
    /// `[batch, width]` ids
    ids: Vec<i64>,
    /// `[batch, width]` positions, or a multimodal RoPE's `[3, batch, width]` (see
    /// [`Prompt::set_streams`])
    pos: Vec<i64>,
    /// `[batch, prompt length]` attention mask
    mask: Vec<i64>,
    /// the padded length
    width: usize,
    /// each row's next position (a multimodal RoPE's temporal one)
    next_pos: Vec<i64>,
    /// a multimodal RoPE's streams' next positions less the temporal one's, per row
    stream_offsets: Option<Vec<[i64; 3]>>,
}

impl Prompt {
    fn new(rows: &[Vec<i64>], mask: &[i64], bucketed: bool) -> Self {
        let s = rows[0].len();
        let width = if bucketed { bucket(s) } else { s };
        let mut p = Prompt {
            ids: Vec::new(),
            pos: Vec::new(),
            mask: mask.to_vec(),
            width,
            next_pos: Vec::new(),
            stream_offsets: None,
        };
        for (r, row) in rows.iter().enumerate() {
            let mut at = -1;
            for (c, &id) in row.iter().enumerate() {
                at += mask[r * s + c];
                p.ids.push(id);
                p.pos.push(if mask[r * s + c] == 0 { 1 } else { at });
            }
            // Padding slots: token 0; later queries overwrite their cache slots before they become
            // visible. Their position repeats the last one, so that the largest position (which
            // long-context RoPE scalings read as the sequence length) is the real prompt's.
            for _ in s..width {
                p.ids.push(0);
                p.pos.push(at.max(0));
            }
            p.next_pos.push(at + 1);
        }
        p
    }

    /// The prompt at a multimodal RoPE's positions: `per_row` `[3 · seq]` (temporal, height,
    /// width) for each row, a bucket's padding slots repeating the last column; each stream's new
    /// tokens go on from that column.
    fn set_streams(&mut self, per_row: &[&[i64]]) {
        let (b, w) = (per_row.len(), self.width);
        let s = per_row.first().map_or(0, |p| p.len() / 3);
        let mut pos = vec![0i64; 3 * b * w];
        let mut offsets = Vec::with_capacity(b);
        for (r, streams) in per_row.iter().enumerate() {
            let last = |k: usize| streams[k * s + s - 1];
            for k in 0..3 {
                let row = &mut pos[(k * b + r) * w..(k * b + r + 1) * w];
                row[..s].copy_from_slice(&streams[k * s..(k + 1) * s]);
                row[s..].fill(last(k));
            }
            self.next_pos[r] = last(0) + 1;
            offsets.push([0, last(1) - last(0), last(2) - last(0)]);
        }
        self.pos = pos;
        self.stream_offsets = Some(offsets);
    }

    /// `(ids, positions)` `[batch, width]` (a multimodal RoPE's positions `[3, batch, width]`) and
    /// the attention mask `[batch, capacity]` (see [`Prompt::mask_tensor`]) on `device`.
    fn tensors(&self, capacity: usize, device: Device) -> Result<(Tensor, Tensor, Tensor)> {
        let b = self.next_pos.len();
        let pos = match self.stream_offsets {
            Some(_) => Tensor::from_vec(self.pos.clone(), [3, b, self.width])?,
            None => Tensor::from_vec(self.pos.clone(), [b, self.width])?,
        };
        Ok((
            Tensor::from_vec(self.ids.clone(), [b, self.width])?.to(device)?,
            pos.to(device)?,
            self.mask_tensor(capacity, device)?,
        ))
    }

    /// The attention mask `[batch, capacity]` on `device`: the prompt's, then ones (causality hides
    /// the slots not yet written).
    fn mask_tensor(&self, capacity: usize, device: Device) -> Result<Tensor> {
        let (b, s) = (self.next_pos.len(), self.mask.len() / self.next_pos.len().max(1));
        let mut mask = vec![1i64; b * capacity];
        for r in 0..b {
            mask[r * capacity..r * capacity + s].copy_from_slice(&self.mask[r * s..(r + 1) * s]);
        }
        Ok(Tensor::from_vec(mask, [b, capacity])?.to(device)?)
    }

    /// `(ids, positions)` `[batch, len]` of the whole sequence so far (`rows`: the prompt and the
    /// tokens generated after it), positions as [`Prompt::new`] gives them.
    fn whole(&self, rows: &[Vec<i64>]) -> Result<(Tensor, Tensor)> {
        let (b, s) = (rows.len(), self.mask.len() / rows.len().max(1));
        let len = rows[0].len();
        let mut pos = Vec::with_capacity(b * len);
        for (r, &next) in self.next_pos.iter().enumerate() {
            // The prompt's own columns, without the bucket's padding slots.
            pos.extend_from_slice(&self.pos[r * self.width..r * self.width + s]);
            // `next` is already one past the newest token's position.
            pos.extend(next - (len - s) as i64..next);
        }
        Ok((Tensor::from_vec(rows.concat(), [b, len])?, Tensor::from_vec(pos, [b, len])?))
    }

    /// Each row's position for the next token, advancing them.
    fn advance(&mut self) -> Vec<i64> {
        let now = self.next_pos.clone();
        self.next_pos.iter_mut().for_each(|p| *p += 1);
        now
    }
}

#[cfg(test)]
mod tests;
