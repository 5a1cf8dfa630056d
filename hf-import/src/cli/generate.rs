//! `hf-import generate MODEL --prompt TEXT [sampling flags]` (streams text) and
//! `hf-import generate MODEL --inputs IN --output OUT --max-new-tokens N --greedy` (token ids; a
//! Whisper model takes `input_features` and `--language` / `--task`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use oxtorch_hf_import::audio::{read_clips, WhisperFeatureExtractor};
use oxtorch_hf_import::generate::{generate_whisper, WhisperPrompt};
use oxtorch_hf_import::weights::{read_safetensors, write_safetensors};
use oxtorch_hf_import::{
    generate, generate_recurrent, generate_seq2seq, generate_with_images, generate_with_tokenizer,
    resolve_model, AutoModel, CausalLm, ChatArgs, ChatTemplate, Config, EncoderDecoder, Error,
    GenerationConfig, HfTokenizer, Mamba, Message, PromptMedia, Result,
};
use oxtorch_tensor::{DType, Tensor};

/// The `generate` arguments (negative numbers are values, so that `--temperature -1` gets the
/// sampling checks' explanation rather than a parse error).
#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct GenerateArgs {
    /// model folder or cached hub id
    model: String,
    /// text to continue (needs tokenizer.json)
    #[arg(long, conflicts_with = "inputs")]
    prompt: Option<String>,
    /// treat the prompt as a user message and apply the model's chat template
    #[arg(long, requires = "prompt")]
    chat: bool,
    /// a JSON file with the conversation for the chat template: a list of messages (contents
    /// may be lists of parts), or {"messages": [...], "tools": [...], "documents": [...]}
    #[arg(long, conflicts_with_all = ["prompt", "inputs"])]
    messages: Option<PathBuf>,
    /// safetensors file with int64 `input_ids` [batch, seq] (and optionally `attention_mask`);
    /// for Whisper, float `input_features` [batch, mel bins, frames]
    #[arg(long, requires = "output")]
    inputs: Option<PathBuf>,
    /// Whisper, wav2vec 2.0 and HuBERT (CTC): a WAV file to transcribe (repeatable: one batch
    /// row each), at the feature extractor's sampling rate (preprocessor_config.json; 16 kHz);
    /// prints the text, or writes `output_ids` to --output (a CTC model's: per frame)
    #[arg(long, conflicts_with_all = ["prompt", "inputs", "messages"])]
    audio: Vec<PathBuf>,
    /// safetensors file to write `output_ids` (prompt + new tokens, int64) to
    #[arg(long)]
    output: Option<PathBuf>,
    /// new tokens at most (default: generation_config.json's, else 20 within the model's positions)
    #[arg(long)]
    max_new_tokens: Option<usize>,
    /// new tokens at least: no EOS before (default: generation_config.json's)
    #[arg(long)]
    min_new_tokens: Option<usize>,
    /// pick the most likely token (no sampling; a generation config that asks for beams keeps
    /// its beam search: `--num-beams 1` for greedy)
    #[arg(long)]
    greedy: bool,
    /// beams of beam search (1: greedy or sampling)
    #[arg(long)]
    num_beams: Option<usize>,
    /// sequences per prompt: beam search's best hypotheses, or samples
    #[arg(long)]
    num_return_sequences: Option<usize>,
    /// sample with this temperature
    #[arg(long)]
    temperature: Option<f64>,
    /// keep the k most likely tokens when sampling
    #[arg(long)]
    top_k: Option<usize>,
    /// nucleus sampling threshold
    #[arg(long)]
    top_p: Option<f64>,
    /// drop tokens below min_p times the top probability
    #[arg(long)]
    min_p: Option<f64>,
    /// penalty on tokens already present
    #[arg(long)]
    repetition_penalty: Option<f64>,
    /// no n-gram of this size repeats (0: off)
    #[arg(long)]
    no_repeat_ngram_size: Option<usize>,
    /// end a sequence once its text ends in this string (repeatable; replaces
    /// generation_config.json's stop_strings)
    #[arg(long = "stop", value_name = "STRING")]
    stop: Vec<String>,
    /// sampling seed
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Whisper: the spoken language (a code such as `fr`, a name, or a token `<|fr|>`; default:
    /// detected, on multilingual checkpoints)
    #[arg(long)]
    language: Option<String>,
    /// Whisper: `transcribe` or `translate` (to English)
    #[arg(long)]
    task: Option<String>,
    /// translation (NLLB-200, mBART, mBART-50, M2M100): the prompt's language, a language-code
    /// token such as `fra_Latn` or `fr_XX`, or M2M100's code `fr` (default: tokenizer_config.json's
    /// `src_lang`, else `eng_Latn` / `en_XX` / `en`)
    #[arg(long, requires = "prompt")]
    src_lang: Option<String>,
    /// translation (NLLB-200, M2M100, mBART-50, multilingual OPUS-MT): the language to translate
    /// into, forced as the first new token (`forced_bos_token_id`): a language-code token such as
    /// NLLB's `fra_Latn` or mBART-50's `fr_XX`, or M2M100's code `fr` (its token `__fr__`); for
    /// Marian (OPUS-MT) models, written before the prompt as their `>>fra<<` code token
    #[arg(long)]
    tgt_lang: Option<String>,
    /// cpu, tpu[:N] or xla[:N]
    #[arg(long, default_value = "cpu")]
    device: String,
    /// compute dtype (f32, bf16, f16); default: the checkpoint's
    #[arg(long)]
    dtype: Option<String>,
}

/// The model types of raw-audio models (wav2vec 2.0's family), which `--audio` transcribes with a
/// CTC head.
const SPEECH_MODEL_TYPES: &[&str] = &[
    "wav2vec2",
    "wav2vec2-conformer",
    "hubert",
    "data2vec-audio",
    "unispeech",
    "unispeech-sat",
    "wavlm",
    "sew",
];

/// Runs `generate`.
pub fn run(a: GenerateArgs) -> Result<()> {
    let device = super::device_arg(&a.device)?;
    let dir = resolve_model(&a.model)?;
    let cfg = Config::load(&dir)?;
    let mut g = GenerationConfig::from_model_dir(&dir, &cfg)?;
    if let Some(n) = a.min_new_tokens {
        g.min_new_tokens = n;
        g.min_length = None;
    }
    if let Some(n) = a.max_new_tokens {
        g.max_new_tokens = n;
        g.max_length = None;
        g.length_cap = None;
    }
    if a.greedy {
        g.do_sample = false;
    } else if a.temperature.is_some() || a.top_k.is_some() || a.top_p.is_some() || a.min_p.is_some() {
        g.do_sample = true;
    }
    if let Some(n) = a.num_beams {
        g.num_beams = n.max(1);
    }
    if let Some(n) = a.num_return_sequences {
        g.num_return_sequences = n.max(1);
    }
    g.temperature = a.temperature.unwrap_or(g.temperature);
    g.top_k = a.top_k.unwrap_or(g.top_k);
    g.top_p = a.top_p.unwrap_or(g.top_p);
    g.min_p = a.min_p.unwrap_or(g.min_p);
    g.repetition_penalty = a.repetition_penalty.unwrap_or(g.repetition_penalty);
    g.no_repeat_ngram_size = a.no_repeat_ngram_size.unwrap_or(g.no_repeat_ngram_size);
    g.seed = a.seed;
    if !a.stop.is_empty() {
        g.stop_strings = a.stop.clone();
    }
    // Bad settings fail before the weights are read and before any text is printed.
    g.validate()?;
    let speech_ctc = SPEECH_MODEL_TYPES.contains(&cfg.model_type()?);
    if (a.language.is_some() || a.task.is_some()) && cfg.model_type()? != "whisper" {
        return Err(Error::Input("--language and --task are Whisper's generation settings".into()));
    }
    if !a.audio.is_empty() && cfg.model_type()? != "whisper" && !speech_ctc {
        return Err(Error::Input(
            "--audio is for speech models (Whisper, and the CTC models: wav2vec 2.0, HuBERT, WavLM, ...)"
                .into(),
        ));
    }
    if a.inputs.is_some() && a.output.is_none() {
        return Err(Error::Input("--inputs needs --output".into()));
    }
    // Inputs are read before the weights, so that a bad file fails fast.
    let inputs = match &a.inputs {
        Some(path) => {
            let mut named = BTreeMap::new();
            read_safetensors(path, |n, t| {
                named.insert(n, t);
                Ok(())
            })?;
            let accepted: &[&str] = match cfg.model_type()? {
                "whisper" => &["input_features"],
                t if SPEECH_MODEL_TYPES.contains(&t) => &["input_values", "attention_mask"],
                // (Their images: the processor's pixel values.)
                "vipllava" | "aya_vision" | "internvl" => &["input_ids", "attention_mask", "pixel_values"],
                // (LLaVA over Pixtral: its images' sizes.)
                "llava" | "mistral3" => &["input_ids", "attention_mask", "pixel_values", "image_sizes"],
                // (LLaVA-NeXT's tiles: their images' sizes; OneVision's images per prompt.)
                "llava_next" => &["input_ids", "attention_mask", "pixel_values", "image_sizes"],
                // (Their videos' frames too.)
                "llava_next_video" => {
                    &["input_ids", "attention_mask", "pixel_values", "image_sizes", "pixel_values_videos"]
                }
                // (LFM2-VL's images of their own sizes: their grids of patches and their padding.)
                "lfm2_vl" => {
                    &["input_ids", "attention_mask", "pixel_values", "spatial_shapes", "pixel_attention_mask"]
                }
                "idefics3" | "smolvlm" => {
                    &["input_ids", "attention_mask", "pixel_values", "pixel_attention_mask"]
                }
                "llava_onevision" => &[
                    "input_ids",
                    "attention_mask",
                    "pixel_values",
                    "image_sizes",
                    "batch_num_images",
                    "pixel_values_videos",
                ],
                // (Qwen2-VL's patches: their grids, and the processor's marks of the image tokens.)
                "qwen2_vl" | "qwen2_5_vl" | "qwen3_vl" | "qwen3_vl_moe" => &[
                    "input_ids",
                    "attention_mask",
                    "pixel_values",
                    "image_grid_thw",
                    "mm_token_type_ids",
                    "pixel_values_videos",
                    "video_grid_thw",
                    "second_per_grid_ts",
                ],
                // (With their images, `token_type_ids`: Gemma 3's marking the images, PaliGemma's
                // its prefix, which attend both ways.)
                "gemma3" | "paligemma" => &["input_ids", "attention_mask", "pixel_values", "token_type_ids"],
                // (Audio: the log-mel features, Qwen2-Audio's with each audio's real frames.)
                "qwen2_audio" => &["input_ids", "attention_mask", "input_features", "feature_attention_mask"],
                "voxtral" => &["input_ids", "attention_mask", "input_features"],
                // (Llama 3.2 Vision's tiles: their layouts, the real ones, and which each token sees.)
                "mllama" => &[
                    "input_ids",
                    "attention_mask",
                    "pixel_values",
                    "aspect_ratio_ids",
                    "aspect_ratio_mask",
                    "cross_attention_mask",
                ],
                _ => &["input_ids", "attention_mask"],
            };
            for name in named.keys() {
                if !accepted.contains(&name.as_str()) {
                    return Err(Error::Input(format!(
                        "unexpected input '{name}' (generate takes {})",
                        accepted.join(", ")
                    )));
                }
            }
            Some(named)
        }
        None => None,
    };
    let weights = super::load_weights(&dir, super::dtype_arg(a.dtype.as_deref())?)?;
    // (Without what the model never reads: a multimodal checkpoint's vision tower is not moved.)
    let weights = AutoModel::weights_used(&cfg, weights).to_device(device)?;
    let model = AutoModel::load(&cfg, &weights)?;
    // The model holds what it uses (a decoder on the cpu, its own packed copy): the loaded set
    // goes, so a cast checkpoint is not kept twice.
    drop(weights);
    let arch = AutoModel::architecture_of(&cfg)?;
    match &model {
        AutoModel::Wav2Vec2(m) => return super::transcribe_ctc::run(m, &dir, inputs, &a.audio, a.output),
        AutoModel::Whisper(m) if m.can_generate() => {
            let mut prompt = WhisperPrompt::from_model_dir(&dir, &cfg)?;
            prompt.language = a.language.or(prompt.language);
            prompt.task = a.task.or(prompt.task);
            // As transformers' Whisper `generate`: sampling only with a temperature.
            g.do_sample = a.temperature.is_some_and(|t| t > 0.0);
            let features =
                match (inputs, a.audio.is_empty()) {
                    (Some(named), _) => named
                        .get("input_features")
                        .cloned()
                        .ok_or_else(|| Error::Input("missing input 'input_features'".into()))?,
                    (None, false) => audio_features(&dir, &a.audio)?,
                    (None, true) => return Err(Error::Input(
                        "generate with Whisper needs --audio FILE.wav or --inputs IN (float input_features \
                         [batch, mel bins, frames]) --output OUT"
                            .into(),
                    )),
                };
            let out = generate_whisper(m, &features, &prompt, &g, |_, _| {})?;
            return match a.output {
                Some(output) => write_safetensors(&output, &[("output_ids".to_string(), out)], None),
                None => {
                    let tok = HfTokenizer::load(&dir, None)?;
                    for row in out.to_vec2::<i64>()? {
                        let ids: Vec<u32> = row.iter().filter_map(|&t| u32::try_from(t).ok()).collect();
                        outln!("{}", tok.decode(&ids, true)?.trim());
                    }
                    Ok(())
                }
            };
        }
        AutoModel::T5(m) if m.can_generate() => {
            return run_seq2seq(m, &dir, inputs, a.output, a.prompt, (a.src_lang, a.tgt_lang), g)
        }
        AutoModel::Bart(m) if m.can_generate() => {
            return run_seq2seq(m, &dir, inputs, a.output, a.prompt, (a.src_lang, a.tgt_lang), g)
        }
        _ if a.src_lang.is_some() || a.tgt_lang.is_some() => {
            return Err(Error::Input(format!(
                "--src-lang and --tgt-lang are translation settings of encoder-decoders, not of {arch}"
            )))
        }
        _ => {}
    }
    let lm = match &model {
        AutoModel::Mamba(m) if m.can_generate() => Decoder::Recurrent(m),
        _ => Decoder::Causal(model.causal_lm().ok_or_else(|| {
            Error::Input(format!("generate needs a causal LM or an encoder-decoder, not {arch}"))
        })?),
    };
    match (inputs, a.output, a.prompt) {
        (Some(mut named), Some(output), _) => {
            // (The mask generation infers from the padding, which Qwen's image positions read too.)
            if let (Some(ids), None) = (named.get("input_ids"), named.get("attention_mask")) {
                if let Some(mask) = inferred_mask(ids, &g)? {
                    named.insert("attention_mask".into(), mask);
                }
            }
            let ids =
                named.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
            if ids.dtype().is_float() || ids.dtype() == DType::Bool {
                return Err(Error::Input(format!(
                    "input 'input_ids' must be an integer tensor, got {:?}",
                    ids.dtype()
                )));
            }
            g.resolve_length(ids.dims().last().copied().unwrap_or(0))?;
            let mask = named.get("attention_mask");
            // Stop strings are matched on the tokens' texts.
            let tok = if g.stop_strings.is_empty() { None } else { Some(HfTokenizer::load(&dir, None)?) };
            let out = match (named.get("pixel_values"), prompt_images(&model, &named, ids)?, &lm) {
                (_, Some(images), Decoder::Causal(lm)) => {
                    generate_with_images(lm, ids, mask, images.as_prompt(), &g, tok.as_ref(), |_, _| {})?
                }
                (None, _, _) if named.contains_key("token_type_ids") => {
                    return Err(Error::Input(
                        "input 'token_type_ids' marks images: it needs pixel_values".into(),
                    ))
                }
                _ => lm.generate(ids, mask, &g, tok.as_ref(), |_, _| {})?,
            };
            write_safetensors(&output, &[("output_ids".to_string(), out)], None)
        }
        (_, _, prompt) if prompt.is_some() || a.messages.is_some() => {
            let tok = HfTokenizer::load(&dir, None)?;
            let chat = a.chat || a.messages.is_some();
            let prompt = prompt.unwrap_or_default();
            let prompt_ids = if chat {
                let template = ChatTemplate::from_model_dir(&dir)?.ok_or_else(|| {
                    Error::Input(format!("{}: the model has no chat template", dir.display()))
                })?;
                // The template writes the special tokens itself, as `apply_chat_template` does.
                let text = match &a.messages {
                    Some(path) => render_conversation(&template, path)?,
                    None => template.render(&[Message::new("user", &prompt)], true)?,
                };
                tok.encode(&text, false)?
            } else {
                tok.encode(&prompt, true)?
            };
            let n = prompt_ids.len();
            g.resolve_length(n)?;
            let ids = Tensor::from_vec(prompt_ids.iter().map(|&i| i64::from(i)).collect::<Vec<_>>(), [1, n])?;
            if !chat {
                out!("{prompt}");
            }
            let mut stream = TextStream::new(prompt_ids);
            lm.generate(&ids, None, &g, Some(&tok), |_, t| {
                if let Some(fresh) = stream.push(&tok, u32::try_from(t).unwrap_or(0)) {
                    out!("{fresh}");
                }
            })?;
            if let Some(rest) = stream.finish(&tok) {
                out!("{rest}");
            }
            outln!();
            Ok(())
        }
        _ => Err(Error::Input(
            "generate needs --prompt TEXT, --messages FILE, or --inputs IN --output OUT".into(),
        )),
    }
}

/// The prompts' images (and videos) for inputs with `pixel_values` (or Qwen's
/// `pixel_values_videos`; `None` without); an error for a model that takes none, or for Gemma 3's
/// `token_type_ids` that do not mark the image tokens of `ids`.
fn prompt_images(
    model: &AutoModel,
    named: &BTreeMap<String, Tensor>,
    ids: &Tensor,
) -> Result<Option<PromptMedia>> {
    let m = match model {
        AutoModel::VisionLanguage(m) => return m.prompt_media(named),
        AutoModel::Gemma3ForConditionalGeneration(m) => m,
        _ if named.contains_key("pixel_values") => {
            return Err(Error::Input("input 'pixel_values': this model takes no images".into()))
        }
        _ => return Ok(None),
    };
    let Some(pixels) = named.get("pixel_values") else { return Ok(None) };
    let types = named.get("token_type_ids");
    let blocks = types.map(|t| m.attention_blocks(t)).transpose()?.map(|b| (b, true));
    let token = m.image_token().expect("a model that computed image rows has an image token");
    let rows = m.image_rows(pixels)?;
    if let Some(types) = types {
        let marked = ids.to_dtype(DType::I64)?.eq(token as f64)?.to_dtype(DType::I64)?;
        if types.dtype().is_float()
            || types.dims() != ids.dims()
            || !types.to_dtype(DType::I64)?.eq(&marked)?.all()?.item::<bool>()?
        {
            return Err(Error::Input(format!(
                "input 'token_type_ids' must be 1 at the image tokens ({token}) and 0 elsewhere, of the ids' shape {:?}",
                ids.dims()
            )));
        }
    }
    Ok(Some(PromptMedia { blocks, ..PromptMedia::new(token, rows) }))
}

/// The attention mask generation infers for integer prompts `ids` without one (their padding
/// hidden), where it hides any token.
fn inferred_mask(ids: &Tensor, g: &GenerationConfig) -> Result<Option<Tensor>> {
    if ids.dtype().is_float() || ids.dtype() == DType::Bool {
        return Ok(None);
    }
    let mask = g.inferred_mask(&ids.to_dtype(DType::I64)?.flatten(0, -1)?.to_vec::<i64>()?);
    Ok(mask.contains(&0).then(|| Tensor::from_vec(mask, ids.dims().to_vec())).transpose()?)
}

/// A decoder-only model that generates: a causal LM with its KV cache, or a recurrent one.
enum Decoder<'m> {
    Causal(&'m CausalLm),
    Recurrent(&'m Mamba),
}

impl Decoder<'_> {
    /// Generates after `ids`, with stop strings when the tokenizer is given.
    fn generate(
        &self,
        ids: &Tensor,
        mask: Option<&Tensor>,
        g: &GenerationConfig,
        tok: Option<&HfTokenizer>,
        on_token: impl FnMut(usize, i64),
    ) -> Result<Tensor> {
        match (self, tok) {
            (Decoder::Causal(lm), Some(tok)) => generate_with_tokenizer(lm, ids, mask, g, tok, on_token),
            (Decoder::Causal(lm), None) => generate(lm, ids, mask, g, on_token),
            (Decoder::Recurrent(m), tok) => generate_recurrent(*m, ids, mask, g, tok, on_token),
        }
    }
}

/// Whisper's input features `[clips, mel bins, frames]` of WAV files, as the model folder's
/// `preprocessor_config.json` computes them.
fn audio_features(dir: &std::path::Path, files: &[PathBuf]) -> Result<Tensor> {
    let extractor = WhisperFeatureExtractor::from_model_dir(dir)?;
    extractor.batch(&read_clips(files, extractor.sampling_rate)?)
}

/// `generate` with an encoder-decoder (T5, BART): `--inputs`' sources to `output_ids` (the decoder's
/// tokens from its start token, as transformers' `generate`), or `--prompt`'s text to the streamed
/// text of the decoder's tokens; `languages` are `--src-lang` (the prompt's) and `--tgt-lang`.
fn run_seq2seq(
    model: &impl EncoderDecoder,
    dir: &std::path::Path,
    inputs: Option<BTreeMap<String, Tensor>>,
    output: Option<PathBuf>,
    prompt: Option<String>,
    (source, target): (Option<String>, Option<String>),
    mut g: GenerationConfig,
) -> Result<()> {
    // Lengths count the decoder's tokens, its start token included.
    g.resolve_length(1)?;
    let tok = || -> Result<HfTokenizer> {
        let mut tok = HfTokenizer::load(dir, None)?;
        if let Some(code) = &source {
            tok.set_source_language(code)?;
        }
        Ok(tok)
    };
    let mut prompt = prompt;
    if let Some(code) = &target {
        let tok = tok()?;
        if tok.takes_target_language_in_text() {
            let code = marian_language_code(&tok, code)?;
            let Some(text) = &mut prompt else {
                return Err(Error::Input(format!(
                    "--tgt-lang on a Marian model writes {code} before --prompt's text; with --inputs, begin the ids with its id"
                )));
            };
            *text = format!("{code} {text}");
        } else {
            g.forced_bos_token_id = Some(i64::from(target_language_token(&tok, code)?));
        }
    }
    match (inputs, output, prompt) {
        (Some(named), Some(output), _) => {
            let ids = named.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
            let tok = if g.stop_strings.is_empty() { None } else { Some(tok()?) };
            let out = generate_seq2seq(model, ids, named.get("attention_mask"), &g, tok.as_ref(), |_, _| {})?;
            write_safetensors(&output, &[("output_ids".to_string(), out)], None)
        }
        (_, _, Some(prompt)) => {
            let tok = tok()?;
            let ids = tok.encode(&prompt, true)?;
            let n = ids.len();
            let ids = Tensor::from_vec(ids.iter().map(|&i| i64::from(i)).collect::<Vec<_>>(), [1, n])?;
            let mut stream = TextStream::new(Vec::new());
            generate_seq2seq(model, &ids, None, &g, Some(&tok), |_, t| {
                if let Some(fresh) = stream.push(&tok, u32::try_from(t).unwrap_or(0)) {
                    out!("{fresh}");
                }
            })?;
            if let Some(rest) = stream.finish(&tok) {
                out!("{rest}");
            }
            outln!();
            Ok(())
        }
        _ => Err(Error::Input("generate needs --prompt TEXT or --inputs IN --output OUT (no chat template for an encoder-decoder)".into())),
    }
}

/// The id of the target language `code`: the token itself (NLLB's `fra_Latn`, mBART-50's `fr_XX`),
/// else M2M100's `__code__`, as its tokenizer's `get_lang_id`.
fn target_language_token(tok: &HfTokenizer, code: &str) -> Result<u32> {
    tok.token_to_id(code).or_else(|| tok.token_to_id(&format!("__{code}__"))).ok_or_else(|| {
        Error::Input(format!(
            "the target language {code:?} is not a token of the tokenizer (such as NLLB's fra_Latn or \
             mBART-50's fr_XX; M2M100's codes are written fr for __fr__)"
        ))
    })
}

/// The `>>code<<` token of the target language `code` (written `fra` or `>>fra<<`) of a Marian
/// (OPUS-MT) tokenizer, which reads it at the start of the text.
fn marian_language_code(tok: &HfTokenizer, code: &str) -> Result<String> {
    let token = if code.starts_with(">>") { code.to_string() } else { format!(">>{code}<<") };
    match tok.token_to_id(&token) {
        Some(_) => Ok(token),
        None => Err(Error::Input(format!(
            "the target language {code:?} is not one of the tokenizer's >>lang<< codes (the model may translate into one language only)"
        ))),
    }
}

/// The chat template applied to the conversation in the JSON file `path` (a list of messages, or
/// an object with `messages` and optionally `tools` and `documents`), ending with the assistant's
/// turn.
fn render_conversation(template: &ChatTemplate, path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::format(path, e.to_string()))?;
    let (messages, tools, documents) = match &json {
        serde_json::Value::Object(o) => (
            o.get("messages").ok_or_else(|| Error::format(path, "no \"messages\" list"))?,
            o.get("tools").filter(|t| !t.is_null()),
            o.get("documents").filter(|d| !d.is_null()),
        ),
        list => (list, None, None),
    };
    let args = ChatArgs { add_generation_prompt: true, tools, documents, extra: Vec::new() };
    template.render_json(messages, &args).map_err(|e| match e {
        Error::Input(msg) => Error::format(path, msg),
        other => other,
    })
}

/// Incremental decoding for streaming (as text-generation-inference's `decode_token`): each new
/// token's text is the decoding of a short window of recent tokens past that of the window without
/// it, so that spaces between word pieces come out right; text ending in an unfinished character
/// (U+FFFD from a byte split across tokens) is held back until the character completes.
struct TextStream {
    tokens: Vec<u32>,
    /// where the window decoded for comparison starts
    prefix_offset: usize,
    /// the tokens before this one have been printed
    read_offset: usize,
}

impl TextStream {
    /// A stream after the prompt `tokens` (not printed by it).
    fn new(tokens: Vec<u32>) -> Self {
        let n = tokens.len();
        TextStream { tokens, prefix_offset: n.saturating_sub(5), read_offset: n }
    }

    /// Adds `token`; returns the text that is now complete.
    fn push(&mut self, tok: &HfTokenizer, token: u32) -> Option<String> {
        self.tokens.push(token);
        let fresh = self.fresh(tok)?;
        if fresh.ends_with('\u{FFFD}') {
            return None;
        }
        self.prefix_offset = self.read_offset;
        self.read_offset = self.tokens.len();
        Some(fresh)
    }

    /// What is left once generation ends (an unfinished character included).
    fn finish(&mut self, tok: &HfTokenizer) -> Option<String> {
        self.fresh(tok).filter(|s| !s.is_empty())
    }

    /// The text of the tokens past `read_offset`, or `None` while there is none.
    fn fresh(&self, tok: &HfTokenizer) -> Option<String> {
        let before = tok.decode(&self.tokens[self.prefix_offset..self.read_offset], true).ok()?;
        let now = tok.decode(&self.tokens[self.prefix_offset..], true).ok()?;
        (now.len() > before.len()).then(|| now.get(before.len()..).map(str::to_string)).flatten()
    }
}
