//! What a service does with a model folder: loading, running, generating, each call guarded.

use super::*;

// ---------------------------------------------------------------------------------------------
// What a service does with a model folder.

/// The ids of a short prompt that every fixture's vocabulary holds.
pub(super) fn prompt() -> Result<Tensor> {
    Ok(Tensor::from_vec(vec![1i64, 5, 7], [1, 3])?)
}

/// The inputs of the golden in `dir` (`expected.safetensors`) where they hold images: a
/// vision-language model's prompts with their `pixel_values` (and image sizes).
fn prompts_with_images(dir: &Path) -> Option<BTreeMap<String, Tensor>> {
    let path = dir.join("expected.safetensors");
    if !path.is_file() {
        return None;
    }
    let mut inputs = BTreeMap::new();
    oxtorch_hf_import::weights::read_safetensors(&path, |name, t| {
        if crate::common::INPUT_NAMES.contains(&name.as_str()) {
            inputs.insert(name, t);
        }
        Ok(())
    })
    .ok()?;
    inputs.contains_key("pixel_values").then_some(inputs)
}

/// `input_ids` alone.
fn ids_only(ids: Tensor) -> BTreeMap<String, Tensor> {
    BTreeMap::from([("input_ids".to_string(), ids)])
}

/// The decoder inside `model`, or an error.
pub(super) fn decoder(model: &AutoModel) -> Result<&CausalLm> {
    model.causal_lm().ok_or_else(|| Error::Input("not a decoder".into()))
}

/// One of the dtypes weights are read as, chosen by `rng` (as stored, most often).
pub(super) fn pick_dtype(rng: &mut Rng) -> Option<DType> {
    rng.pick(&[None, None, Some(DType::F32), Some(DType::BF16)])
}

/// The payload with which a generation's token callback stops it.
struct BudgetSpent;

/// What a guarded generation came to.
enum Generated {
    /// It ended by itself.
    Done,
    /// The sweep stopped it after this many tokens.
    Stopped(usize),
}

/// What a generation stopped past its token budget means.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum OnStop {
    /// Expected: the settings ask for that many tokens, and the sweep only checks they start.
    Fine,
    /// A printed note: settings read from a file ask for that many tokens.
    Note,
    /// A failure: the generation should have ended (at its `max_new_tokens`, or at the model's
    /// `max_position_embeddings` where `resolve_length` caps the length).
    Failure,
}

/// A generation to run: prompts, mask, settings, and the tokens after which it is stopped.
pub(super) struct Gen {
    pub(super) ids: Tensor,
    pub(super) mask: Option<Tensor>,
    pub(super) g: GenerationConfig,
    pub(super) budget: usize,
    pub(super) on_stop: OnStop,
}

impl Gen {
    pub(super) fn new(ids: Tensor, mask: Option<Tensor>, g: GenerationConfig) -> Self {
        Gen { ids, mask, g, budget: 64, on_stop: OnStop::Failure }
    }
}

/// Generates as `gen` says, with the tokenizer when given (stop strings), stopping the generation
/// (a caught panic) once its rows produced more than `gen.budget` tokens.
fn generate_budgeted(model: &AutoModel, tok: Option<&HfTokenizer>, gen: &Gen) -> Result<Generated> {
    let lm = decoder(model)?;
    let count = Cell::new(0usize);
    let on_token = |_: usize, _: i64| {
        count.set(count.get() + 1);
        if count.get() > gen.budget {
            std::panic::panic_any(BudgetSpent);
        }
    };
    let run = catch_unwind(AssertUnwindSafe(|| match tok {
        Some(tok) => generate_with_tokenizer(lm, &gen.ids, gen.mask.as_ref(), &gen.g, tok, on_token),
        None => generate(lm, &gen.ids, gen.mask.as_ref(), &gen.g, on_token),
    }));
    match run {
        Ok(out) => out.map(|_| Generated::Done),
        Err(payload) if payload.is::<BudgetSpent>() => Ok(Generated::Stopped(count.get())),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Runs `gen` on `model` guarded, and judges a generation the sweep had to stop.
pub(super) fn run_generation(
    s: &mut Sweep,
    case: &str,
    call: &str,
    model: &Arc<AutoModel>,
    tok: Option<&Arc<HfTokenizer>>,
    gen: Gen,
) {
    let on_stop = gen.on_stop;
    let (m, t) = (model.clone(), tok.cloned());
    let out = s.call(case, call, &[], move || generate_budgeted(&m, t.as_deref(), &gen));
    if let Some(Generated::Stopped(n)) = out {
        let what = format!("{case} | {call}: still generating after {n} tokens (stopped by the sweep)");
        match on_stop {
            OnStop::Fine => {}
            OnStop::Note => s.notes.push(what),
            OnStop::Failure => s.failures.push(what),
        }
    }
}

/// Everything a service does with the model folder `dir`, each step guarded: the config, the
/// weights (floats read as `dtype`), the model, a forward pass, the generation settings and a
/// short generation (decoders), the tokenizer, the chat template and the sentence-transformers
/// pipeline where the folder has them. `extra`: what a load error may name besides the usual.
/// Returns whether the model loaded.
fn exercise(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str], dtype: Option<DType>) -> bool {
    let d = dir.to_path_buf();
    let cfg = s.call(case, "Config::load", &anchored(extra, CONFIG_ANCHORS), move || Config::load(&d));
    let d = dir.to_path_buf();
    let weights =
        s.call(case, "Weights::load", &anchored(extra, WEIGHTS_ANCHORS), move || Weights::load(&d, dtype));
    let cfg = cfg.map(Arc::new);
    // A sentence-transformers folder holds the base model, whatever head its config names.
    let sentence = dir.join("modules.json").is_file();
    let model = match (&cfg, weights) {
        (Some(cfg), Some(weights)) => {
            let cfg = cfg.clone();
            s.call(case, "AutoModel::load", &anchored(extra, MODEL_ANCHORS), move || {
                if sentence {
                    AutoModel::load_base(&cfg, &weights)
                } else {
                    AutoModel::load(&cfg, &weights)
                }
            })
            .map(Arc::new)
        }
        _ => None,
    };
    let tok = if dir.join("tokenizer.json").is_file() {
        let d = dir.to_path_buf();
        s.call(case, "HfTokenizer::load", &anchored(extra, TOKENIZER_ANCHORS), move || {
            HfTokenizer::load(&d, None)
        })
        .map(Arc::new)
    } else {
        None
    };
    if let (Some(cfg), Some(model)) = (&cfg, &model) {
        run_model(s, case, dir, cfg, model, tok.as_ref());
    }
    if let Some(tok) = &tok {
        run_tokenizer(s, case, tok);
    }
    run_chat(s, case, dir, extra);
    if dir.join("modules.json").is_file() {
        run_sentence(s, case, dir, extra, dtype);
    }
    model.is_some()
}

/// A forward pass of a loaded model; for a decoder, its generation settings read from `dir` as
/// a service does (`from_model_dir`, `resolve_length`) and two new tokens.
fn run_model(
    s: &mut Sweep,
    case: &str,
    dir: &Path,
    cfg: &Arc<Config>,
    model: &Arc<AutoModel>,
    tok: Option<&Arc<HfTokenizer>>,
) {
    if let Some([c, h, w]) = model.image_shape() {
        let m = model.clone();
        s.call(case, "forward_named(pixel_values)", &[], move || {
            let pixels = Tensor::zeros([1, c, h, w], DType::F32)?;
            m.forward_named(&[("pixel_values".to_string(), pixels)].into(), false)
        });
        return;
    }
    let m = model.clone();
    s.call(case, "forward_named([1, 3] ids)", &[], move || m.forward_named(&ids_only(prompt()?), false));
    if let Some(inputs) = prompts_with_images(dir) {
        let m = model.clone();
        s.call(case, "forward_named(the fixture's images)", &[], move || m.forward_named(&inputs, false));
    }
    if model.causal_lm().is_none() {
        let m = model.clone();
        s.call(case, "last_hidden_state", &[], move || m.last_hidden_state(&prompt()?, None, None));
        return;
    }
    let (d, c) = (dir.to_path_buf(), cfg.clone());
    let g = s.call(case, "GenerationConfig::from_model_dir", GENERATION_ANCHORS, move || {
        GenerationConfig::from_model_dir(&d, &c)
    });
    let Some(mut g) = g else { return };
    let resolved = s.call(case, "GenerationConfig::resolve_length(3)", &["max_length"], move || {
        g.resolve_length(3)?;
        Ok(g)
    });
    let Some(mut g) = resolved else { return };
    g.max_new_tokens = g.max_new_tokens.min(2);
    let ids = Tensor::from_vec(vec![1i64, 5, 7], [1, 3]).expect("a prompt");
    run_generation(s, case, "generate(2 new tokens)", model, tok, Gen::new(ids, None, g));
}

/// Encoding and decoding with a loaded tokenizer.
pub(super) fn run_tokenizer(s: &mut Sweep, case: &str, tok: &Arc<HfTokenizer>) {
    let t = tok.clone();
    s.call(case, "HfTokenizer::encode", &[], move || {
        t.encode("Hello, world! ünïcödé 日本語 \u{0}\u{FFFD} [CLS] ##x <0x41>", true)
    });
    let t = tok.clone();
    s.call(case, "HfTokenizer::encode_batch", &[], move || t.encode_batch(&["a b c", "", "Hello world"]));
    let t = tok.clone();
    s.call(case, "HfTokenizer::decode", &[], move || t.decode(&[0, 1, 2, 3, 4, 5, 60, u32::MAX], false));
    let t = tok.clone();
    s.call(case, "HfTokenizer::decode(special ids, skipped)", &[], move || t.decode(&[0, 1, 2, 3, 4], true));
}

/// The chat template of `dir` (if any), rendered.
pub(super) fn run_chat(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str]) {
    let d = dir.to_path_buf();
    let template = s.call(case, "ChatTemplate::from_model_dir", &anchored(extra, CHAT_ANCHORS), move || {
        ChatTemplate::from_model_dir(&d)
    });
    if let Some(Some(template)) = template {
        s.call(case, "ChatTemplate::render", &["chat template"], move || {
            template.render(&[Message::new("system", "Be brief."), Message::new("user", "Hi there")], true)
        });
    }
}

/// The sentence-transformers pipeline of `dir`: loaded, then encoding texts.
pub(super) fn run_sentence(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str], dtype: Option<DType>) {
    let d = dir.to_path_buf();
    let loaded = s.call(case, "SentenceTransformer::load", &anchored(extra, SENTENCE_ANCHORS), move || {
        SentenceTransformer::load(&d, dtype)
    });
    let Some(st) = loaded.map(Arc::new) else { return };
    let m = st.clone();
    s.call(case, "SentenceTransformer::encode", &[], move || m.encode(&["hello world", "a"]));
    s.call(case, "SentenceTransformer::encode_with_prompt", &[], move || {
        st.encode_with_prompt(&["hello"], Some("query: "), None)
    });
}

/// Applies each case to `sc`, exercises the folder, and puts it back.
pub(super) fn sweep_cases(s: &mut Sweep, rng: &mut Rng, sc: &mut Scratch, what: &str, cases: Vec<Case>) {
    for case in cases {
        sc.apply(&case.edits);
        let label = format!("{what} {}", case.label);
        exercise(s, &label, &sc.dir, &case.anchors(), pick_dtype(rng));
        sc.reset();
    }
}

/// `fixture` exercised as it is: it must load (else the cases built on it test nothing).
pub(super) fn baseline(s: &mut Sweep, name: &str, dir: &Path) {
    if !exercise(s, &format!("{name} (as it is)"), dir, &[], None) {
        s.failures.push(format!("{name}: the fixture itself does not load"));
    }
}
