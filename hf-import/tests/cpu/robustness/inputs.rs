//! The sweep of inputs of models that loaded: forward passes, KV caches, generation,
//! sentence embeddings, pooling and chat templates given hostile inputs.

use super::*;

/// An int64 tensor.
fn ints(values: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).expect("an input")
}

/// A float32 tensor.
fn floats(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).expect("an input")
}

/// `t` cast to `dtype`.
fn cast(t: Tensor, dtype: DType) -> Tensor {
    t.to_dtype(dtype).expect("a cast input")
}

type Inputs = BTreeMap<String, Tensor>;

/// A named call of the API of `A` (closures coerce to the pointer).
type Call<A> = (&'static str, fn(&A) -> Result<()>);

fn named(pairs: Vec<(&str, Tensor)>) -> Inputs {
    pairs.into_iter().map(|(k, t)| (k.to_string(), t)).collect()
}

/// Hostile inputs of `forward_named` (the model's `max_position_embeddings` is `max_pos`).
fn forward_cases(max_pos: i64) -> Vec<(String, Inputs)> {
    let ids = || ints(&[1, 5, 7], &[1, 3]);
    let with = |name: &str, t: Tensor| named(vec![("input_ids", ids()), (name, t)]);
    let only = |t: Tensor| named(vec![("input_ids", t)]);
    let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
    let mut cases: Vec<(String, Inputs)> = vec![
        ("ids [1, 3]".into(), only(ids())),
        (format!("id {VOCAB} (past the vocabulary)"), only(ints(&[1, VOCAB, 7], &[1, 3]))),
        ("a negative id".into(), only(ints(&[1, -5, 7], &[1, 3]))),
        ("id i64::MAX".into(), only(ints(&[1, i64::MAX, 7], &[1, 3]))),
        ("id i64::MIN".into(), only(ints(&[i64::MIN, 5, 7], &[1, 3]))),
        ("an empty sequence".into(), only(ints(&[], &[1, 0]))),
        ("an empty batch".into(), only(ints(&[], &[0, 3]))),
        ("1-D ids".into(), only(ints(&[1, 5, 7], &[3]))),
        ("3-D ids".into(), only(ints(&[1, 5, 7], &[1, 1, 3]))),
        ("0-d ids".into(), only(ints(&[5], &[]))),
        ("300 ids".into(), only(ints(&long, &[1, 300]))),
        ("no input_ids".into(), named(vec![("attention_mask", ints(&[1, 1, 1], &[1, 3]))])),
        ("an unexpected input".into(), with("pixel_values", floats(&[0.0; 12], &[1, 1, 3, 4]))),
        ("a mask [1, 2]".into(), with("attention_mask", ints(&[1, 1], &[1, 2]))),
        ("a mask [1, 4]".into(), with("attention_mask", ints(&[1, 1, 1, 1], &[1, 4]))),
        ("a mask [2, 3]".into(), with("attention_mask", ints(&[1; 6], &[2, 3]))),
        ("a 1-D mask".into(), with("attention_mask", ints(&[1, 1, 1], &[3]))),
        ("a 3-D mask".into(), with("attention_mask", ints(&[1, 1, 1], &[1, 1, 3]))),
        ("an all-zero mask".into(), with("attention_mask", ints(&[0, 0, 0], &[1, 3]))),
        ("a mask of 5, -1, i64::MIN".into(), with("attention_mask", ints(&[5, -1, i64::MIN], &[1, 3]))),
        ("a float mask with NaN".into(), with("attention_mask", floats(&[1.0, f32::NAN, 0.5], &[1, 3]))),
        ("a bool mask".into(), with("attention_mask", cast(ints(&[1, 0, 1], &[1, 3]), DType::Bool))),
        ("positions past 10^9".into(), with("position_ids", ints(&[0, 1, 1_000_000_000], &[1, 3]))),
        (
            "positions past max_position_embeddings".into(),
            with("position_ids", ints(&[max_pos, max_pos + 1, max_pos + 2], &[1, 3])),
        ),
        ("negative positions".into(), with("position_ids", ints(&[0, -1, 2], &[1, 3]))),
        ("positions i64::MAX".into(), with("position_ids", ints(&[0, 1, i64::MAX], &[1, 3]))),
        ("positions i64::MIN".into(), with("position_ids", ints(&[i64::MIN, 0, 1], &[1, 3]))),
        ("1-D positions".into(), with("position_ids", ints(&[0, 1, 2], &[3]))),
        (
            "positions [2, 3] for a batch of 1".into(),
            with("position_ids", ints(&[0, 1, 2, 0, 1, 2], &[2, 3])),
        ),
        ("positions [1, 2]".into(), with("position_ids", ints(&[0, 1], &[1, 2]))),
        ("float positions".into(), with("position_ids", floats(&[0.5, f32::NAN, f32::INFINITY], &[1, 3]))),
        ("bool positions".into(), with("position_ids", cast(ints(&[0, 1, 1], &[1, 3]), DType::Bool))),
        ("u8 positions".into(), with("position_ids", cast(ints(&[0, 1, 2], &[1, 3]), DType::U8))),
        ("token types out of range".into(), with("token_type_ids", ints(&[0, 5, 1], &[1, 3]))),
        ("negative token types".into(), with("token_type_ids", ints(&[-1, 0, 0], &[1, 3]))),
        ("token types [1, 2]".into(), with("token_type_ids", ints(&[0, 0], &[1, 2]))),
        ("float token types".into(), with("token_type_ids", floats(&[0.0; 3], &[1, 3]))),
        (
            "a left-padded batch of 2".into(),
            named(vec![
                ("input_ids", ints(&[0, 5, 7, 4, 5, 6], &[2, 3])),
                ("attention_mask", ints(&[0, 1, 1, 1, 1, 1], &[2, 3])),
            ]),
        ),
        (
            "a batch of 2 with one row fully masked".into(),
            named(vec![
                ("input_ids", ints(&[0, 5, 7, 4, 5, 6], &[2, 3])),
                ("attention_mask", ints(&[0, 0, 0, 1, 1, 1], &[2, 3])),
                ("position_ids", ints(&[0, 1, 2], &[1, 3])),
            ]),
        ),
    ];
    for dtype in [
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::Bool,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ] {
        cases.push((format!("ids of dtype {dtype:?}"), only(cast(ids(), dtype))));
    }
    cases
}

/// Hostile generations (prompt, mask, settings) of a decoder; `tokenizer`: it has one.
fn generate_cases(tokenizer: bool) -> Vec<(String, Gen)> {
    let base = GenerationConfig { max_new_tokens: 3, ..GenerationConfig::default() };
    let g = |f: fn(&mut GenerationConfig)| {
        let mut g = base.clone();
        f(&mut g);
        g
    };
    let sampled = |f: fn(&mut GenerationConfig)| {
        let mut g = GenerationConfig { do_sample: true, seed: 35, ..base.clone() };
        f(&mut g);
        g
    };
    let ids = || ints(&[1, 5, 7], &[1, 3]);
    let batch = || ints(&[0, 5, 7, 4, 5, 6], &[2, 3]);
    let padded = || Some(ints(&[0, 1, 1, 1, 1, 1], &[2, 3]));
    let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
    let mut huge = Gen::new(ids(), None, g(|g| g.max_new_tokens = 1 << 40));
    (huge.budget, huge.on_stop) = (8, OnStop::Fine);
    // Asked for explicitly, with no `length_cap`: transformers generates them too.
    let mut almost_max = Gen::new(ids(), None, g(|g| g.max_new_tokens = usize::MAX - 3));
    (almost_max.budget, almost_max.on_stop) = (8, OnStop::Fine);
    let mut cases = vec![
        ("max_new_tokens 0".to_string(), Gen::new(ids(), None, g(|g| g.max_new_tokens = 0))),
        ("max_new_tokens usize::MAX".into(), Gen::new(ids(), None, g(|g| g.max_new_tokens = usize::MAX))),
        ("max_new_tokens usize::MAX - 3 (the first 8 tokens)".into(), almost_max),
        ("max_new_tokens 2^40 (the first 8 tokens)".into(), huge),
        ("a prompt of 300 tokens".into(), Gen::new(ints(&long, &[1, 300]), None, base.clone())),
        (
            "a prompt id past the vocabulary".into(),
            Gen::new(ints(&[1, VOCAB, 7], &[1, 3]), None, base.clone()),
        ),
        ("a negative prompt id".into(), Gen::new(ints(&[1, -1, 7], &[1, 3]), None, base.clone())),
        ("an empty prompt".into(), Gen::new(ints(&[], &[1, 0]), None, base.clone())),
        ("an empty batch".into(), Gen::new(ints(&[], &[0, 3]), None, base.clone())),
        ("a 1-D prompt".into(), Gen::new(ints(&[1, 5, 7], &[3]), None, base.clone())),
        ("a float prompt".into(), Gen::new(floats(&[1.0, 5.0, 7.0], &[1, 3]), None, base.clone())),
        ("a mask [1, 2]".into(), Gen::new(ids(), Some(ints(&[1, 1], &[1, 2])), base.clone())),
        ("an all-zero mask".into(), Gen::new(ids(), Some(ints(&[0, 0, 0], &[1, 3])), base.clone())),
        (
            "a float mask with NaN".into(),
            Gen::new(ids(), Some(floats(&[f32::NAN, 1.0, 1.0], &[1, 3])), base.clone()),
        ),
        ("a left-padded batch of 2".into(), Gen::new(batch(), padded(), base.clone())),
        (
            "a batch of 2 with one row fully masked".into(),
            Gen::new(batch(), Some(ints(&[0, 0, 0, 1, 1, 1], &[2, 3])), base.clone()),
        ),
        (
            "a static cache, batch of 2".into(),
            Gen::new(
                batch(),
                padded(),
                g(|g| g.cache_implementation = oxtorch_hf_import::CacheImplementation::Static),
            ),
        ),
        (
            "a static cache, 40 tokens".into(),
            Gen::new(
                ids(),
                None,
                g(|g| {
                    g.cache_implementation = oxtorch_hf_import::CacheImplementation::Static;
                    g.max_new_tokens = 40;
                }),
            ),
        ),
        ("temperature NaN".into(), Gen::new(ids(), None, sampled(|g| g.temperature = f64::NAN))),
        ("temperature 0".into(), Gen::new(ids(), None, sampled(|g| g.temperature = 0.0))),
        ("temperature -1".into(), Gen::new(ids(), None, sampled(|g| g.temperature = -1.0))),
        ("temperature inf".into(), Gen::new(ids(), None, sampled(|g| g.temperature = f64::INFINITY))),
        ("temperature 1e-30".into(), Gen::new(ids(), None, sampled(|g| g.temperature = 1e-30))),
        ("top_p NaN".into(), Gen::new(ids(), None, sampled(|g| g.top_p = f64::NAN))),
        ("top_p 0".into(), Gen::new(ids(), None, sampled(|g| g.top_p = 0.0))),
        ("min_p NaN".into(), Gen::new(ids(), None, sampled(|g| g.min_p = f64::NAN))),
        ("min_p 1".into(), Gen::new(ids(), None, sampled(|g| g.min_p = 1.0))),
        ("top_k usize::MAX".into(), Gen::new(ids(), None, sampled(|g| g.top_k = usize::MAX))),
        ("top_k 1".into(), Gen::new(ids(), None, sampled(|g| g.top_k = 1))),
        ("repetition_penalty NaN".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = f64::NAN))),
        ("repetition_penalty 0".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = 0.0))),
        ("repetition_penalty 1e-30".into(), Gen::new(ids(), None, g(|g| g.repetition_penalty = 1e-30))),
        ("seed u64::MAX".into(), Gen::new(ids(), None, sampled(|g| g.seed = u64::MAX))),
        (
            "EOS ids i64::MIN, -1, i64::MAX".into(),
            Gen::new(ids(), None, g(|g| g.eos_token_ids = vec![i64::MIN, -1, i64::MAX])),
        ),
        (
            "pad id i64::MIN, every token an EOS".into(),
            Gen::new(
                batch(),
                padded(),
                g(|g| {
                    g.pad_token_id = Some(i64::MIN);
                    g.eos_token_ids = (0..VOCAB).collect();
                }),
            ),
        ),
        (
            "every token suppressed".into(),
            Gen::new(ids(), None, g(|g| g.suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "every token suppressed, sampled".into(),
            Gen::new(ids(), None, sampled(|g| g.suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "every token suppressed first".into(),
            Gen::new(ids(), None, g(|g| g.begin_suppress_tokens = (0..VOCAB).collect())),
        ),
        (
            "forced EOS ids -1, i64::MAX".into(),
            Gen::new(ids(), None, g(|g| g.forced_eos_token_ids = vec![-1, i64::MAX])),
        ),
        (
            "bad words [[i64::MAX], [1..8]]".into(),
            Gen::new(ids(), None, g(|g| g.bad_words_ids = vec![vec![i64::MAX], (1..9).collect()])),
        ),
        ("no_repeat_ngram_size 1".into(), Gen::new(ids(), None, g(|g| g.no_repeat_ngram_size = 1))),
        (
            "no_repeat_ngram_size usize::MAX".into(),
            Gen::new(ids(), None, g(|g| g.no_repeat_ngram_size = usize::MAX)),
        ),
        (
            "min_new_tokens usize::MAX".into(),
            Gen::new(
                ids(),
                None,
                g(|g| {
                    g.min_new_tokens = usize::MAX;
                    g.eos_token_ids = vec![2];
                }),
            ),
        ),
        ("an empty stop string".into(), Gen::new(ids(), None, g(|g| g.stop_strings = vec![String::new()]))),
    ];
    let stops = [
        ("a stop string", vec!["x".to_string()]),
        ("odd stop strings", vec!["\u{0}".into(), "##".into(), "a".repeat(10_000)]),
    ];
    for (label, strings) in stops {
        let mut g = base.clone();
        g.stop_strings = strings;
        // Without a tokenizer, `generate` refuses stop strings.
        let label = if tokenizer { label.to_string() } else { format!("{label} without a tokenizer") };
        cases.push((label, Gen::new(ids(), None, g)));
    }
    cases
}

/// The model's `max_position_embeddings` (at the top of the config or in `text_config`).
fn max_positions(cfg: &Config) -> usize {
    let nested =
        cfg.get("text_config").and_then(|t| t.get("max_position_embeddings")).and_then(Value::as_u64);
    cfg.get("max_position_embeddings").and_then(Value::as_u64).or(nested).unwrap_or(64) as usize
}

/// The decoder API below `forward_named` with hostile caches and positions.
fn causal_lm_cases(s: &mut Sweep, case: &str, model: &Arc<AutoModel>) {
    let calls: &[Call<CausalLm>] = &[
        ("forward with a KV cache of another layer count", |lm| {
            let mut cache = KvCache::new(lm.num_layers() + 1);
            lm.forward(&prompt()?, None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a KV cache then another batch size", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            lm.forward(&ints(&[1, 2, 3, 4], &[2, 2]), None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward of 40 tokens into a fixed cache of 1", |lm| {
            let mut cache = KvCache::fixed(lm.num_layers(), 1);
            let ids: Vec<i64> = (0..40).collect();
            lm.forward(&ints(&ids, &[1, 40]), None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward into a cache of 2^52 slots", |lm| {
            let mut cache = KvCache::with_capacity(lm.num_layers(), 1 << 52);
            lm.forward(&prompt()?, None, None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a cache and a mask of the wrong width", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            let mask = ints(&[1; 9], &[1, 9]);
            lm.forward(&ints(&[4], &[1, 1]), Some(&mask), None, Some(&mut cache), false).map(drop)
        }),
        ("forward with a cache and positions of the wrong shape", |lm| {
            let mut cache = KvCache::new(lm.num_layers());
            lm.forward(&prompt()?, None, None, Some(&mut cache), false)?;
            let pos = ints(&[3, 4], &[1, 2]);
            lm.forward(&ints(&[4], &[1, 1]), None, Some(&pos), Some(&mut cache), false).map(drop)
        }),
        ("logits_at(3) of 3 tokens", |lm| lm.logits_at(&prompt()?, None, None, None, 3).map(drop)),
        ("logits_at(usize::MAX)", |lm| lm.logits_at(&prompt()?, None, None, None, usize::MAX).map(drop)),
        ("logits_at with positions past 10^9", |lm| {
            let pos = ints(&[1_000_000_000, 1_000_000_001, i64::MAX], &[1, 3]);
            lm.logits_at(&prompt()?, None, Some(&pos), None, 2).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = model.clone();
        s.call(case, call, &[], move || f(decoder(&m)?));
    }
}

/// Hostile inputs of the encoder API below `forward_named`.
fn encoder_cases(s: &mut Sweep, case: &str, model: &Arc<AutoModel>) {
    let calls: &[Call<AutoModel>] = &[
        ("last_hidden_state with a mask [1, 2]", |m| {
            m.last_hidden_state(&prompt()?, Some(&ints(&[1, 1], &[1, 2])), None).map(drop)
        }),
        ("last_hidden_state with token types out of range", |m| {
            m.last_hidden_state(&prompt()?, None, Some(&ints(&[0, 9, 1], &[1, 3]))).map(drop)
        }),
        ("last_hidden_state with float token types", |m| {
            m.last_hidden_state(&prompt()?, None, Some(&floats(&[0.0; 3], &[1, 3]))).map(drop)
        }),
        ("last_hidden_state of 300 ids", |m| {
            let long: Vec<i64> = (0..300).map(|i| i % VOCAB).collect();
            m.last_hidden_state(&ints(&long, &[1, 300]), None, None).map(drop)
        }),
        ("last_hidden_state of ids [1, 0]", |m| {
            m.last_hidden_state(&ints(&[], &[1, 0]), None, None).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = model.clone();
        s.call(case, call, &[], move || f(&m));
    }
}

/// Hostile inputs of a sentence-transformers model and of the pooling functions.
fn sentence_input_cases(s: &mut Sweep, case: &str, st: &Arc<SentenceTransformer>) {
    let words = "word ".repeat(20_000);
    let texts: [(&str, Vec<String>); 4] = [
        ("encode of no texts", vec![]),
        ("encode of an empty text", vec![String::new()]),
        ("encode of 20000 words", vec![words]),
        ("encode of odd characters", vec!["\u{0}\u{FFFD}\u{1F600} [CLS] [SEP] [PAD] ##".into()]),
    ];
    for (call, texts) in texts {
        let m = st.clone();
        s.call(case, call, &[], move || m.encode(&texts.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    let calls: &[Call<SentenceTransformer>] = &[
        ("encode_with_prompt of an unknown prompt name", |m| {
            m.encode_with_prompt(&["a"], None, Some("nope")).map(drop)
        }),
        ("encode_with_prompt of a long prompt", |m| {
            m.encode_with_prompt(&["a"], Some(&"query: ".repeat(1000)), None).map(drop)
        }),
        ("embed_ids with a mask [1, 2]", |m| {
            m.embed_ids(&prompt()?, &ints(&[1, 1], &[1, 2]), None).map(drop)
        }),
        ("embed_ids with a 1-D mask", |m| m.embed_ids(&prompt()?, &ints(&[1, 1, 1], &[3]), None).map(drop)),
        ("embed_ids with an all-zero mask", |m| {
            m.embed_ids(&prompt()?, &ints(&[0, 0, 0], &[1, 3]), None).map(drop)
        }),
        ("embed_ids with a NaN mask", |m| {
            m.embed_ids(&prompt()?, &floats(&[f32::NAN, 1.0, 0.0], &[1, 3]), None).map(drop)
        }),
        ("embed_ids of 1-D ids", |m| {
            m.embed_ids(&ints(&[1, 5, 7], &[3]), &ints(&[1, 1, 1], &[3]), None).map(drop)
        }),
        ("embed_ids of ids [0, 0]", |m| {
            m.embed_ids(&ints(&[], &[0, 0]), &ints(&[], &[0, 0]), None).map(drop)
        }),
        ("embed_ids of ids past the vocabulary", |m| {
            m.embed_ids(&ints(&[1, VOCAB, 7], &[1, 3]), &ints(&[1, 1, 1], &[1, 3]), None).map(drop)
        }),
        ("embed_ids with token types out of range", |m| {
            m.embed_ids(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), Some(&ints(&[0, 7, -1], &[1, 3]))).map(drop)
        }),
        ("embed_ids_after_prompt(usize::MAX)", |m| {
            m.embed_ids_after_prompt(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), None, usize::MAX).map(drop)
        }),
        ("embed_ids_after_prompt(2^40)", |m| {
            m.embed_ids_after_prompt(&prompt()?, &ints(&[1, 1, 1], &[1, 3]), None, 1 << 40).map(drop)
        }),
    ];
    for (call, f) in calls {
        let m = st.clone();
        s.call(case, call, &[], move || f(&m));
    }
}

/// Every pooling mode on token embeddings and masks of the wrong rank or shape.
fn pooling_cases(s: &mut Sweep) {
    let modes = [
        PoolingMode::Cls,
        PoolingMode::Max,
        PoolingMode::Mean,
        PoolingMode::MeanSqrtLen,
        PoolingMode::LastToken,
        PoolingMode::WeightedMean,
    ];
    let shapes: [(&str, &[usize], &[usize]); 6] = [
        ("tokens [2, 3, 4], mask [2, 3]", &[2, 3, 4], &[2, 3]),
        ("tokens [2, 4] (rank 2)", &[2, 4], &[2, 4]),
        ("tokens [4] (rank 1)", &[4], &[1, 4]),
        ("tokens [2, 3, 4], mask [2, 5]", &[2, 3, 4], &[2, 5]),
        ("tokens [2, 3, 4], mask [3]", &[2, 3, 4], &[3]),
        ("tokens [0, 3, 4], mask [0, 3]", &[0, 3, 4], &[0, 3]),
    ];
    for mode in modes {
        for (label, tokens, mask) in shapes {
            let (tokens, mask) = (tokens.to_vec(), mask.to_vec());
            s.call("PoolingMode", &format!("{mode:?}.pool({label})"), &[], move || {
                let t = Tensor::ones(tokens.as_slice(), DType::F32)?;
                let m = Tensor::ones(mask.as_slice(), DType::I64)?;
                mode.pool(&t, &m)
            });
        }
    }
}

/// Hostile chat messages rendered with a model's template.
fn chat_input_cases(s: &mut Sweep, case: &str, template: &Arc<ChatTemplate>) {
    let tools = json!([{"type": "function", "function": {"name": 5, "parameters": [1, {"a": null}]}}]);
    let messages: [(&str, Value); 10] = [
        ("messages that are a number", json!(5)),
        ("no messages", json!([])),
        ("a message without a role", json!([{"content": "x"}])),
        ("a role that is a number", json!([{"role": 5, "content": "x"}])),
        ("an unknown role", json!([{"role": "robot", "content": "x"}])),
        ("content null", json!([{"role": "user", "content": null}])),
        ("content a number", json!([{"role": "user", "content": 5}])),
        (
            "content a list of parts",
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]}]),
        ),
        (
            "content nested 100 deep",
            json!([{"role": "user", "content": serde_json::from_str::<Value>(&deep_nesting(100)).expect("nested lists")}]),
        ),
        (
            "tool calls",
            json!([{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}]),
        ),
    ];
    for (call, messages) in messages {
        let (t, tools) = (template.clone(), tools.clone());
        s.call(case, &format!("ChatTemplate::render_json({call})"), &["chat"], move || {
            let args = ChatArgs { add_generation_prompt: true, tools: Some(&tools), ..ChatArgs::default() };
            t.render_json(&messages, &args)
        });
    }
}

#[test]
fn hostile_inputs_never_panic() {
    let mut s = Sweep::default();
    let decoders =
        ["llama_tied", "phi3_longrope", "gemma3", "gemma3_mm", "qwen2_yarn", "llama_dynamic", "mistral"];
    let encoders = ["bert", "roberta", "distilbert_mlm"];
    for name in decoders.iter().chain(&encoders) {
        let dir = fixture(name);
        let case = format!("{name} input");
        let loaded = s.call(name, "load config and model", &[], move || {
            let cfg = Config::load(&dir)?;
            let model = AutoModel::load(&cfg, &Weights::load(&dir, None)?)?;
            let tok = if dir.join("tokenizer.json").is_file() {
                Some(Arc::new(HfTokenizer::load(&dir, None)?))
            } else {
                None
            };
            Ok((Arc::new(cfg), Arc::new(model), tok))
        });
        let Some((cfg, model, tok)) = loaded else { continue };
        let max_pos = max_positions(&cfg);
        for (label, inputs) in forward_cases(max_pos as i64) {
            let m = model.clone();
            s.call(&case, &format!("forward_named({label})"), &[], move || m.forward_named(&inputs, true));
        }
        if model.causal_lm().is_none() {
            encoder_cases(&mut s, &case, &model);
            continue;
        }
        causal_lm_cases(&mut s, &case, &model);
        // The full set of generations on three decoders, a few on the others.
        let all = matches!(*name, "llama_tied" | "phi3_longrope" | "gemma3");
        for (i, (label, gen)) in generate_cases(tok.is_some()).into_iter().enumerate() {
            if all || i.is_multiple_of(8) {
                run_generation(&mut s, &case, &format!("generate({label})"), &model, tok.as_ref(), gen);
            }
        }
        // As a service bounds a generation: the settings of the model folder, a huge
        // max_new_tokens, and `resolve_length`, which caps the length at max_position_embeddings.
        for (label, max_new, prompt_len) in
            [("2^40", 1usize << 40, 3usize), ("usize::MAX", usize::MAX, 3), ("20", 20, 300)]
        {
            let (d, c) = (fixture(name), cfg.clone());
            let call = format!("from_model_dir, max_new_tokens {label}, resolve_length({prompt_len})");
            let g = s.call(&case, &call, &["max_length"], move || {
                let mut g = GenerationConfig::from_model_dir(&d, &c)?;
                g.max_new_tokens = max_new;
                g.resolve_length(prompt_len)?;
                Ok(g)
            });
            if let Some(g) = g {
                let ids: Vec<i64> = (0..prompt_len as i64).map(|i| i % VOCAB).collect();
                let gen = Gen {
                    ids: ints(&ids, &[1, prompt_len]),
                    mask: None,
                    g,
                    budget: max_pos,
                    on_stop: OnStop::Failure,
                };
                run_generation(&mut s, &case, &format!("generate after {call}"), &model, tok.as_ref(), gen);
            }
        }
        // Phi-3 recomputes its cache past its original length (8): cross it, batch of 2.
        if *name == "phi3_longrope" {
            let g = GenerationConfig { max_new_tokens: 12, ..GenerationConfig::default() };
            let gen =
                Gen::new(ints(&[0, 5, 7, 4, 5, 6], &[2, 3]), Some(ints(&[0, 1, 1, 1, 1, 1], &[2, 3])), g);
            run_generation(
                &mut s,
                &case,
                "generate(12 tokens across the cache recompute)",
                &model,
                None,
                gen,
            );
        }
    }
    // Tokenizer, chat template and sentence-transformers inputs.
    let dir = fixture("llama_tied");
    let tok = s.call("llama_tied", "HfTokenizer::load", &[], move || HfTokenizer::load(&dir, None));
    if let Some(tok) = tok.map(Arc::new) {
        let calls: &[Call<HfTokenizer>] = &[
            ("encode of an empty text", |t| t.encode("", true).map(drop)),
            ("encode of 1 MB", |t| t.encode(&"ab ".repeat(350_000), true).map(drop)),
            ("encode_batch of no texts", |t| t.encode_batch(&[]).map(drop)),
            ("decode of no ids", |t| t.decode(&[], true).map(drop)),
            ("decode of u32::MAX", |t| t.decode(&[u32::MAX, u32::MAX - 1], false).map(drop)),
            ("decode of special ids only, skipped", |t| t.decode(&[0, 2, 3], true).map(drop)),
        ];
        for (call, f) in calls {
            let t = tok.clone();
            s.call("llama_tied tokenizer", call, &[], move || f(&t));
        }
    }
    let dir = fixture("llama_tied");
    let template =
        s.call("llama_tied", "ChatTemplate::from_model_dir", &[], move || ChatTemplate::from_model_dir(&dir));
    if let Some(Some(template)) = template {
        chat_input_cases(&mut s, "llama_tied chat", &Arc::new(template));
    }
    for name in ["sentence_tiny", "sentence_dense"] {
        let dir = fixture(name);
        let st =
            s.call(name, "SentenceTransformer::load", &[], move || SentenceTransformer::load(&dir, None));
        if let Some(st) = st {
            sentence_input_cases(&mut s, &format!("{name} input"), &Arc::new(st));
        }
    }
    pooling_cases(&mut s);
    s.finish("robustness hostile inputs sweep", 700);
}
