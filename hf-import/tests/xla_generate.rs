//! Generation on the XLA runtime (`xla:0`) with the static KV cache: greedy ids equal the cpu's and
//! transformers' token for token on several families, the decode steps after the first compile
//! nothing, prompts of one bucket share their programs, and the prompts of lengths 1..=512 need at
//! most one prefill program set per bucket.
//!
//! Without `OXTORCH_PJRT_PLUGIN` every test prints a SKIPPED banner and returns (`scripts/test.sh`
//! always sets it). Program counts are `new_programs()` (compiled, or loaded from the persistent
//! cache), so they do not depend on what earlier runs left in `~/.cache/oxtorch/xla`.

mod common;

use common::{fixture, read_all, xla, ImagePrompt};
use oxtorch_backend_tpu::xla::metrics;
use oxtorch_hf_import::layers::bucket;
use oxtorch_hf_import::{
    generate, generate_seq2seq, generate_with_images, AutoModel, CausalLm, Config, GenerationConfig, Weights,
};
use oxtorch_tensor::{DType, Device, Tensor};

/// Held by each test, so that no other test compiles programs between a test's metric reads.
static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    DEVICE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Fixture `name` in float32 on `dev`.
fn load(name: &str, dev: Device) -> (Config, AutoModel) {
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    let model = AutoModel::load_on_device(&cfg, &weights, dev).unwrap();
    (cfg, model)
}

/// Greedy, `n` new tokens, no EOS (every step runs).
fn greedy(n: usize) -> GenerationConfig {
    GenerationConfig { max_new_tokens: n, eos_token_ids: Vec::new(), ..GenerationConfig::default() }
}

/// Programs this process has built so far.
fn programs() -> u64 {
    metrics().new_programs()
}

#[test]
fn static_cache_greedy_generate_on_xla_equals_cpu_and_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    // llama: GQA and llama3 RoPE; mistral: a sliding window of 3 crossed; gemma2: windows, soft-capping
    // and sandwich norms; qwen3: q/k norms; phi3_longrope: the RoPE factors switch (on the device)
    // and the cache is recomputed mid-generation; llama_dynamic: frequencies from the length.
    for name in [
        "llama",
        "mistral",
        "gemma2",
        "qwen3",
        "phi3_longrope",
        "llama_dynamic",
        "gpt2",
        "gpt_neox",
        "mixtral",
        "qwen3_moe",
        "olmo3",
        "granite",
        "smollm3_swa",
        "cohere_qk",
        "cohere2",
        "opt",
        "opt_350m",
        "gptj",
        "gpt_neo_local",
        "bloom",
        "gpt_bigcode",
        "mpt",
        "codegen",
        "olmoe",
        "granitemoe",
        "nemotron",
        "glm4",
        "biogpt",
        "xglm",
        "stablelm_qk",
        "deepseek_v3",
        "deepseek_v2_group",
        "gpt_oss",
        // (PhiMoE's cache recomputed past the original length, its mscale switched.)
        "phimoe",
        // (A hybrid's prompt at its own length, its Mamba-2 states beside the attention's cache.)
        "granite_hybrid",
        "qwen3_5",
        "falcon_h1",
        // (Ministral 3's query scale follows each generated token's position.)
        "ministral3",
        "nanochat",
        "minimax_m2",
        "laguna",
        // (Llama 4's chunks and temperature follow each generated token's column.)
        "llama4",
        // (Gemma 4's last layers read the fixed cache of earlier ones.)
        "gemma4",
        // (Gemma 3n's streams around the shared cache.)
        "gemma3n",
    ] {
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let (cfg, on_xla) = load(name, dev);
        let (_, on_cpu) = load(name, Device::Cpu);
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        g.max_new_tokens = 10;
        g.pad_token_id = Some(0);
        let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
        let run = |m: &AutoModel| generate(m.causal_lm().unwrap(), ids, mask, &g, |_, _| {}).unwrap();
        let (x, c) = (run(&on_xla).to_vec2::<i64>().unwrap(), run(&on_cpu).to_vec2::<i64>().unwrap());
        assert_eq!(x, c, "{name}: xla vs cpu");
        assert_eq!(x, golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}: xla vs transformers");
    }
}

/// Generation from prompts with images on xla (the features gathered into the prefill's
/// embeddings there; Gemma 3's images attending both ways; Qwen2.5-VL's and Qwen3-VL's
/// multimodal RoPE positions, Qwen3-VL's deepstack features; Llama 3.2 Vision's cross-attention
/// states kept in the cache) equals transformers' greedy ids.
#[test]
fn greedy_generate_with_images_on_xla_matches_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let names = [
        "llava_images",
        "gemma3_images",
        "paligemma2_images",
        "llava_onevision_images",
        "qwen2_5_vl_images",
        "qwen3_vl_images",
        "mllama_images",
        "qwen2_audio_audio",
        "voxtral_audio",
        "llava_next_video_video",
    ];
    for name in names {
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let (cfg, model) = load(name, dev);
        let prompt = ImagePrompt::of(&model, &golden);
        let (lm, images) = (prompt.lm, prompt.images());
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        g.max_new_tokens = 10;
        g.pad_token_id = Some(0);
        let mask = Some(&golden["attention_mask"]);
        let out = generate_with_images(lm, &golden["input_ids"], mask, images, &g, None, |_, _| {}).unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
    }
}

#[test]
fn greedy_decoding_reads_back_only_tokens_and_stops_rows_at_eos_like_the_cpu() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let golden = read_all(&fixture("llama").join("generate.safetensors"));
    let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
    let (b, s) = (ids.dims()[0], ids.dims()[1]);
    assert!(b >= 2, "the fixture's prompts are a batch");
    let (_, on_xla) = load("llama", dev);
    let (_, on_cpu) = load("llama", Device::Cpu);
    let run = |m: &AutoModel, g: &GenerationConfig| {
        let mut streamed = Vec::new();
        let out = generate(m.causal_lm().unwrap(), ids, mask, g, |r, t| streamed.push((r, t))).unwrap();
        (out.to_vec2::<i64>().unwrap(), streamed)
    };
    // Row 0's third new token becomes an EOS token: row 0 stops at its first occurrence and is
    // padded after it while the other rows go on (on the device, the finished row keeps feeding its
    // own argmax, which must not change the others).
    let free = run(&on_cpu, &greedy(12)).0;
    let eos = free[0][s + 2];
    let stop = free[0][s..].iter().position(|&t| t == eos).unwrap();
    let mut g = greedy(12);
    g.eos_token_ids = vec![eos];
    g.pad_token_id = Some(0);
    let before = metrics();
    let (x, x_streamed) = run(&on_xla, &g);
    let after = metrics();
    let (c, c_streamed) = run(&on_cpu, &g);
    assert_eq!(x, c, "xla vs cpu with an EOS token");
    assert_eq!(x_streamed, c_streamed, "tokens streamed to the callback");
    assert_eq!(x[0][s + stop], eos);
    assert!(x[0][s + stop + 1..].iter().all(|&t| t == 0), "row 0 after its EOS: {:?}", &x[0][s..]);
    assert!(x[1..].iter().any(|row| row[s + stop + 1..].iter().any(|&t| t != 0)), "the other rows went on");
    // One download per step (its tokens): no logits, and no read of the new ids' bounds before the
    // next step (which would wait for the step computing them). The prompt's ids are checked: two
    // reads, the model's and the embedding op's.
    let steps = (x[0].len() - s) as u64;
    let downloads = after.transfers_from_device - before.transfers_from_device;
    assert!(downloads <= steps + 2, "{steps} greedy steps read back {downloads} device buffers");
    // Every row's second new token ends it: the generation stops after two steps, with a step
    // already launched on the device, and the same again builds no program (a graph planned while
    // this thread drops what it reads would differ by timing).
    g.eos_token_ids = free.iter().map(|row| row[s + 1]).collect();
    let mut built = Vec::new();
    for _ in 0..2 {
        let before = programs();
        let (x, x_streamed) = run(&on_xla, &g);
        built.push(programs() - before);
        let (c, c_streamed) = run(&on_cpu, &g);
        assert_eq!((&x, &x_streamed), (&c, &c_streamed), "xla vs cpu, every row ending early");
        assert!(x[0].len() <= s + 2, "stopped after two steps: {:?}", x[0]);
    }
    assert_eq!(built[1], 0, "the same early-ending generation again built programs: {built:?}");
    // One new token: the prefill alone.
    let one = greedy(1);
    assert_eq!(run(&on_xla, &one), run(&on_cpu, &one), "one new token");
}

/// Past the new tokens its first allocation holds (256, in a bucket of 512 slots here), the static
/// cache grows to the next bucket during greedy decoding on the device, and the padded batch's mask
/// with it: the tokens stay the cpu's (whose cache grows twice, by doubling).
#[test]
fn long_generations_grow_the_cache_like_the_cpu() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let golden = read_all(&fixture("llama").join("generate.safetensors"));
    let (ids, mask) = (&golden["input_ids"], Some(&golden["attention_mask"]));
    let (_, on_xla) = load("llama", dev);
    let (_, on_cpu) = load("llama", Device::Cpu);
    let g = greedy(600);
    let run = |m: &AutoModel| {
        generate(m.causal_lm().unwrap(), ids, mask, &g, |_, _| {}).unwrap().to_vec2::<i64>().unwrap()
    };
    let (x, c) = (run(&on_xla), run(&on_cpu));
    assert_eq!(x[0].len(), ids.dims()[1] + 600);
    assert_eq!(x, c, "600 greedy tokens: xla vs cpu");
}

/// `[1, len]` prompt ids below the fixtures' vocabulary of 100.
fn prompt(len: usize) -> Tensor {
    Tensor::from_vec((0..len as i64).map(|i| (i * 37 + 11) % 97 + 1).collect(), [1, len]).unwrap()
}

#[test]
fn decode_steps_after_the_first_compile_nothing() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (_, model) = load("llama", dev);
    let lm = model.causal_lm().unwrap();
    let start = programs();
    // Programs built when token `i` (1-based) came out.
    let mut at = Vec::new();
    let out = generate(lm, &prompt(9), None, &greedy(64), |_, _| at.push(programs())).unwrap();
    let end = programs();
    assert_eq!(out.dims(), [1, 9 + 64]);
    let (prefill, first_steps, later) = (at[0] - start, at[2] - at[0], end - at[2]);
    eprintln!(
        "64 greedy tokens on {dev}: new programs: prefill {prefill}, first two decode steps \
         {first_steps}, the 61 later steps {later}"
    );
    // generate runs fused on xla: the prefill is one program (plus the ids' range check), the
    // first decode step another, and the second one more (from then on the previous step's cache
    // buffers are donated to the step); every later step repeats it.
    assert_eq!(later, 0, "decode steps after the second compiled {later} programs");
    assert!(end - start <= 12, "64 greedy tokens built {} programs", end - start);
    // Same again: a second generation of the same bucket builds nothing at all.
    let before = programs();
    generate(lm, &prompt(9), None, &greedy(64), |_, _| {}).unwrap();
    assert_eq!(programs(), before, "a second identical generation built programs");
}

#[test]
fn prompts_of_one_bucket_share_their_programs() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (_, model) = load("llama", dev);
    let lm = model.causal_lm().unwrap();
    let cpu_model = load("llama", Device::Cpu).1;
    let cpu = cpu_model.causal_lm().unwrap();
    let run = |lm: &CausalLm, len: usize| generate(lm, &prompt(len), None, &greedy(6), |_, _| {}).unwrap();
    run(lm, 17);
    let before = programs();
    for len in [18, 23, 30, 32] {
        assert_eq!(bucket(len), 32);
        let ids = run(lm, len).to_vec::<i64>().unwrap();
        assert_eq!(ids, run(cpu, len).to_vec::<i64>().unwrap(), "prompt of {len}: xla vs cpu");
    }
    assert_eq!(programs(), before, "prompts of one bucket built new programs");
}

#[test]
fn prompts_of_1_to_512_tokens_need_one_prefill_program_set_per_bucket() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (_, model) = load("llama", dev);
    let lm = model.causal_lm().unwrap();
    // Every bucket's first and last length, and a stride through the rest (one new token: prefill only).
    let mut lens: Vec<usize> = (1..=512).step_by(13).collect();
    for b in [16usize, 32, 64, 128, 256, 512] {
        lens.extend([b / 2 + 1, b]);
    }
    lens.sort_unstable();
    lens.dedup();
    let mut builds = Vec::new();
    for &len in &lens {
        let before = programs();
        generate(lm, &prompt(len), None, &greedy(1), |_, _| {}).unwrap();
        if programs() > before {
            builds.push((len, programs() - before));
        }
    }
    eprintln!("prefill program sets over {} prompt lengths: {builds:?}", lens.len());
    // One set per bucket (6), plus the lm-head read at offset 0 that only a 1-token prompt takes.
    assert!(builds.len() <= 7, "{} prompt lengths built programs: {builds:?}", builds.len());
}

/// An encoder-decoder (T5 v1.1's layout) generates greedily on xla as transformers does: the
/// encoder once, then one decoder step per token with its keys and values cached on the device.
#[test]
fn t5_greedy_generate_on_xla_matches_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (cfg, model) = load("t5_v11", dev);
    let AutoModel::T5(t5) = &model else { panic!("not T5") };
    let golden = read_all(&fixture("t5_v11").join("generate.safetensors"));
    let mut g = GenerationConfig::from_model_dir(&fixture("t5_v11"), &cfg).unwrap();
    g.max_new_tokens = 8;
    let run = || {
        generate_seq2seq(t5, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
            .unwrap()
    };
    assert_eq!(run().to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap());
    // The decoder's cache has fixed, bucketed shapes: a second generation compiles nothing.
    let before = programs();
    assert_eq!(run().to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap());
    assert_eq!(programs() - before, 0, "a repeated generation compiled new programs");
}

/// BART's beam search on xla equals transformers' (the cache reordered on the device; the two best
/// hypotheses per source).
#[test]
fn bart_beam_search_on_xla_matches_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (cfg, model) = load("bart", dev);
    let AutoModel::Bart(bart) = &model else { panic!("not BART") };
    let golden = read_all(&fixture("bart").join("beam.safetensors"));
    let mut g = GenerationConfig::from_model_dir(&fixture("bart"), &cfg).unwrap();
    (g.max_new_tokens, g.num_beams, g.length_penalty, g.num_return_sequences) = (10, 4, 2.0, 2);
    g.early_stopping = oxtorch_hf_import::generate::EarlyStopping::WhenFull;
    let out =
        generate_seq2seq(bart, &golden["input_ids"], Some(&golden["attention_mask"]), &g, None, |_, _| {})
            .unwrap();
    assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap());
}

/// Decoder beam search on xla equals transformers' (the static cache reordered on the device,
/// Phi-3's LongRoPE switch recomputing it mid-search), and a repeated search compiles nothing.
#[test]
fn decoder_beam_search_on_xla_matches_transformers() {
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    for (name, beams, eos) in [("llama", 3, Some(vec![42])), ("phi3_longrope", 2, None)] {
        let (cfg, model) = load(name, dev);
        let golden = read_all(&fixture(name).join("beam.safetensors"));
        let mut g = GenerationConfig::from_model_dir(&fixture(name), &cfg).unwrap();
        (g.max_new_tokens, g.num_beams, g.pad_token_id) = (10, beams, Some(0));
        if let Some(eos) = eos {
            g.eos_token_ids = eos;
        }
        let run = || {
            let lm = model.causal_lm().unwrap();
            generate(lm, &golden["input_ids"], Some(&golden["attention_mask"]), &g, |_, _| {}).unwrap()
        };
        assert_eq!(run().to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{name}");
        let before = programs();
        run();
        assert_eq!(programs() - before, 0, "{name}: a repeated beam search compiled new programs");
    }
}

/// Whisper's generation on xla (greedy and beam search, the cross-attention cache on the device)
/// equals transformers'.
#[test]
fn whisper_generation_on_xla_matches_transformers() {
    use oxtorch_hf_import::generate::{generate_whisper, WhisperPrompt};
    let Some(dev) = xla() else { return };
    let _only = exclusive();
    let (cfg, model) = load("whisper_gen", dev);
    let AutoModel::Whisper(whisper) = &model else { panic!("not Whisper") };
    for (case, beams) in [("de", 1), ("beams", 3)] {
        let golden = read_all(&fixture("whisper_gen").join(format!("generate_{case}.safetensors")));
        let mut prompt = WhisperPrompt::from_model_dir(&fixture("whisper_gen"), &cfg).unwrap();
        prompt.language = Some("de".into());
        let mut g = GenerationConfig::from_model_dir(&fixture("whisper_gen"), &cfg).unwrap();
        g.num_beams = beams;
        let out = generate_whisper(whisper, &golden["input_features"], &prompt, &g, |_, _| {}).unwrap();
        assert_eq!(out.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap(), "{case}");
    }
}
