//! The sweep of tokenizers, chat templates, generation settings and sentence-transformers
//! files: truncated, garbage, values of the wrong type or range, templates that fail.

use super::*;

/// The corruptions of a `tokenizer.json`: the file broken, its parts of the wrong type, and
/// random values in it (the vocabulary, merges, settings) set to hostile ones.
fn tokenizer_cases(json: &Value, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let t = "tokenizer.json";
    let set = |path: &[Seg], v: Value| json_bytes(&with_value(json, path, v));
    let key = |k: &str| vec![Seg::Key(k.into())];
    let model = |k: &str| vec![Seg::Key("model".into()), Seg::Key(k.into())];
    let mut cases = vec![
        Case::of("tokenizer.json removed", vec![Edit::Remove(t.into())], &[]),
        Case::write("tokenizer.json truncated", t, half(bytes), &[]),
        Case::write("tokenizer.json empty", t, Vec::new(), &[]),
        Case::write("tokenizer.json garbage", t, vec![0xC3; 64], &[]),
        Case::write("tokenizer.json a list", t, b"[]".to_vec(), &[]),
        Case::write("tokenizer.json an empty object", t, b"{}".to_vec(), &[]),
        Case::write(
            "tokenizer.json nested 5000 deep",
            t,
            format!("{{\"normalizer\": {}}}", deep_nesting(5000)),
            &[],
        ),
        Case::write("version 2.0", t, set(&key("version"), json!("2.0")), &[]),
        Case::write("model removed", t, json_bytes(&without(json, &key("model"))), &[]),
        Case::write("model type unknown", t, set(&model("type"), json!("Nope")), &[]),
        Case::write("model type removed", t, json_bytes(&without(json, &model("type"))), &[]),
        Case::write("model vocab a string", t, set(&model("vocab"), json!("x")), &[]),
        Case::write("model vocab empty", t, set(&model("vocab"), json!({})), &[]),
        Case::write("model vocab empty list", t, set(&model("vocab"), json!([])), &[]),
        Case::write(
            "model merges unknown tokens",
            t,
            set(&model("merges"), json!([["\u{1F600}", "zz"]])),
            &[],
        ),
        Case::write(
            "model unk_token not in the vocabulary",
            t,
            set(&model("unk_token"), json!("<nope>")),
            &[],
        ),
        Case::write("added_tokens a string", t, set(&key("added_tokens"), json!("x")), &[]),
        Case::write(
            "an added token of a huge id",
            t,
            set(&key("added_tokens"), json!([{"id": 4294967295u64, "content": "zz", "special": true}])),
            &[],
        ),
        Case::write(
            "an added token with empty content",
            t,
            set(&key("added_tokens"), json!([{"id": 0, "content": "", "special": true}])),
            &[],
        ),
        Case::write("normalizer unknown", t, set(&key("normalizer"), json!({"type": "Nope"})), &[]),
        Case::write("pre_tokenizer a number", t, set(&key("pre_tokenizer"), json!(5)), &[]),
        Case::write("decoder unknown", t, set(&key("decoder"), json!({"type": "Nope"})), &[]),
        Case::write(
            "a template with an undefined special token",
            t,
            set(
                &key("post_processor"),
                json!({"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[NOPE]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {}}),
            ),
            &[],
        ),
        Case::write(
            "a template special token of no ids",
            t,
            set(
                &key("post_processor"),
                json!({"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[X]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {"[X]": {"id": "[X]", "ids": [], "tokens": []}}}),
            ),
            &[],
        ),
        Case::write(
            "padding to a huge pad id",
            t,
            set(
                &key("padding"),
                json!({"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": 1000000,
                                        "pad_id": 4294967295u64, "pad_type_id": 7, "pad_token": "zz"}),
            ),
            &[],
        ),
        Case::write(
            "truncation of length 0",
            t,
            set(
                &key("truncation"),
                json!({"direction": "Right", "max_length": 0, "strategy": "LongestFirst", "stride": 5}),
            ),
            &[],
        ),
    ];
    let leaves: Vec<JsonPath> = nodes(json, true)
        .into_iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .map(|(p, _)| p)
        .collect();
    for path in rng.sample(&leaves, 6) {
        for text in rng.sample(HOSTILE, 4) {
            cases.push(Case::write(
                format!("{}={text}", path_label(&path)),
                t,
                set(&path, hostile(text)),
                &[],
            ));
        }
    }
    cases
}

/// Loads the tokenizer of `dir` (also with truncation to 1 token and to `usize::MAX`) and uses it.
fn exercise_tokenizer(s: &mut Sweep, case: &str, dir: &Path, extra: &[&str]) {
    let d = dir.to_path_buf();
    let tok = s.call(case, "HfTokenizer::load", &anchored(extra, TOKENIZER_ANCHORS), move || {
        HfTokenizer::load(&d, None)
    });
    if let Some(tok) = tok {
        run_tokenizer(s, case, &Arc::new(tok));
    }
    for max in [1, usize::MAX] {
        let d = dir.to_path_buf();
        let call = format!("HfTokenizer::load(max_length {max})");
        let tok = s
            .call(case, &call, &anchored(extra, TOKENIZER_ANCHORS), move || HfTokenizer::load(&d, Some(max)));
        if let Some(tok) = tok {
            s.call(case, "HfTokenizer::encode(truncated)", &[], move || tok.encode("a b c d e f g h", true));
        }
    }
}

/// Chat templates that fail to parse, raise, loop for ever, recurse, or ask for huge strings.
const BAD_TEMPLATES: &[(&str, &str)] = &[
    ("a syntax error", "{% for %}{{ messages }}"),
    ("an unclosed block", "{% if messages %}x"),
    ("raise_exception", "{{ raise_exception('no chat here') }}"),
    ("an unknown filter", "{{ messages | nope }}"),
    ("a method of undefined", "{{ messages[10].content.strip() }}"),
    ("a method of none", "{{ none.strip() }}"),
    ("10^10 loop steps", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
    ("a range of 10^12", "{% for i in range(1000000000000) %}x{% endfor %}"),
    ("endless recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
    ("a string repeated 10^12 times", "{{ 'x' * 1000000000000 }}"),
    ("bos_token repeated 10^8 times", "{{ bos_token * 100000000 }}"),
    ("a list repeated 10^12 times", "{{ (messages * 1000000000000) | length }}"),
    ("a list repeated i64::MAX times", "{{ ([1, 2, 3] * 9223372036854775807) | length }}"),
    ("integer overflow", "{{ 9223372036854775807 + 1 }}{{ 9223372036854775807 * 9223372036854775807 }}"),
    ("division by zero", "{{ 1 // 0 }}{{ 1 % 0 }}{{ 1 / 0 }}"),
    (
        "tojson of huge floats",
        "{{ [1e308 * 10, -1e308 * 10, 1e-320, 0.1, 123456789012345678901234567890.0] | tojson }}",
    ),
    ("tojson with odd arguments", "{{ messages | tojson(indent='\\t', separators=[1, 2], sort_keys=5) }}"),
    ("tojson indented -5", "{{ messages | tojson(indent=-5) }}"),
    (
        "strftime_now of odd formats",
        "{{ strftime_now('%') }}{{ strftime_now('%Q%-d%%%') }}{{ strftime_now('') }}",
    ),
    ("a namespace chain", "{% set ns = namespace(a=1) %}{{ ns.a.b.c }}"),
    ("a NUL byte", "\u{0}{{ bos_token }}"),
];

/// The corruptions of `tokenizer_config.json`, `chat_template.jinja` and the template in it.
fn chat_and_tokenizer_config_cases(json: &Value, bytes: &[u8]) -> Vec<Case> {
    let tc = "tokenizer_config.json";
    let jinja = "chat_template.jinja";
    let set = |k: &str, v: Value| json_bytes(&with_value(json, &[Seg::Key(k.into())], v));
    let mut cases = vec![
        Case::write("tokenizer_config.json truncated", tc, half(bytes), &[tc]),
        Case::write("tokenizer_config.json garbage", tc, vec![0xFF; 16], &[tc]),
        Case::write("tokenizer_config.json a list", tc, b"[]".to_vec(), &[tc]),
        Case::write("tokenizer_config.json a number", tc, b"5".to_vec(), &[tc]),
    ];
    for (key, v) in [
        ("bos_token", json!(5)),
        ("bos_token", json!({"content": 7})),
        ("eos_token", json!([])),
        ("pad_token", json!({})),
        ("tokenizer_class", json!(5)),
        ("tokenizer_class", json!("T5Tokenizer")),
        ("tokenizer_class", json!("LlamaTokenizerFast")),
        ("do_lower_case", json!("x")),
        ("strip_accents", json!(5)),
        ("tokenize_chinese_chars", json!([])),
        ("model_max_length", json!(-1)),
        ("model_max_length", json!(1e30)),
        ("model_max_length", json!("x")),
        ("legacy", json!("x")),
        ("add_prefix_space", json!(5)),
    ] {
        cases.push(Case::write(format!("{key}={v}"), tc, set(key, v), &[key]));
    }
    // Templates from tokenizer_config.json (the .jinja file wins, so it is removed).
    for (label, v) in [
        ("a number", json!(5)),
        ("an empty list", json!([])),
        ("a list without a default", json!([{"name": "tool_use", "template": "x"}])),
        ("a default that is a number", json!([{"name": "default", "template": 5}])),
        ("failing", json!("{{ raise_exception('no') }}")),
    ] {
        let edits = vec![Edit::Remove(jinja.into()), Edit::Write(tc.into(), set("chat_template", v))];
        cases.push(Case::of(format!("chat_template {label}"), edits, &["chat_template"]));
    }
    cases.push(Case::write("chat_template.jinja not UTF-8", jinja, vec![0xFF, 0xFE, b'{'], &[jinja]));
    cases.push(Case::of("chat_template.jinja a folder", vec![Edit::MakeDir(jinja.into())], &[jinja]));
    for (label, template) in BAD_TEMPLATES {
        cases.push(Case::write(format!("chat template with {label}"), jinja, template.as_bytes(), &[]));
    }
    cases
}

/// `generation_config.json` files that are broken or ask for impossible or huge generations.
fn generation_config_cases() -> Vec<Case> {
    let g = "generation_config.json";
    let texts: &[&str] = &[
        r#"{"eos_token_id": "x"}"#,
        r#"{"eos_token_id": 1000000000000}"#,
        r#"{"eos_token_id": -1}"#,
        r#"{"eos_token_id": 9223372036854775808}"#,
        r#"{"eos_token_id": []}"#,
        r#"{"eos_token_id": [2, "x"]}"#,
        r#"{"eos_token_id": [[2]]}"#,
        r#"{"eos_token_id": 2.5}"#,
        r#"{"eos_token_id": [5, 6, 7], "pad_token_id": -9223372036854775808}"#,
        r#"{"eos_token_id": 5, "pad_token_id": 1000000000000}"#,
        r#"{"pad_token_id": "x"}"#,
        r#"{"bad_words_ids": [[1000000000000]]}"#,
        r#"{"bad_words_ids": [[]]}"#,
        r#"{"bad_words_ids": [3]}"#,
        r#"{"bad_words_ids": [[-1]]}"#,
        r#"{"bad_words_ids": "x"}"#,
        r#"{"suppress_tokens": [-1, 1000000000000, 9223372036854775807]}"#,
        r#"{"begin_suppress_tokens": "x"}"#,
        r#"{"forced_eos_token_id": 1000000000000}"#,
        r#"{"forced_eos_token_id": -1, "max_new_tokens": 1}"#,
        r#"{"max_new_tokens": 0}"#,
        r#"{"max_new_tokens": -1}"#,
        r#"{"max_new_tokens": "x"}"#,
        r#"{"max_new_tokens": 18446744073709551615}"#,
        r#"{"max_new_tokens": 1000000000000}"#,
        r#"{"max_new_tokens": 1000000000000, "cache_implementation": "static"}"#,
        r#"{"max_length": 0}"#,
        r#"{"max_length": 3}"#,
        r#"{"max_length": 1000000000000}"#,
        r#"{"min_length": 1000000000000}"#,
        r#"{"min_new_tokens": 1000000000000, "eos_token_id": 2}"#,
        r#"{"do_sample": true, "top_k": 0}"#,
        r#"{"do_sample": true, "top_k": 1000000000000}"#,
        r#"{"do_sample": true, "top_p": -1}"#,
        r#"{"do_sample": true, "top_p": 2}"#,
        r#"{"do_sample": true, "min_p": 2}"#,
        r#"{"do_sample": true, "temperature": 0}"#,
        r#"{"do_sample": true, "temperature": -1}"#,
        r#"{"do_sample": true, "temperature": 1e-300}"#,
        r#"{"do_sample": true, "temperature": 1e300}"#,
        r#"{"repetition_penalty": 0}"#,
        r#"{"repetition_penalty": 1e300}"#,
        r#"{"repetition_penalty": 1e-300}"#,
        r#"{"do_sample": "x"}"#,
        r#"{"num_beams": 4}"#,
        r#"{"num_beams": "x"}"#,
        r#"{"stop_strings": [""]}"#,
        r#"{"stop_strings": "x"}"#,
        r#"{"stop_strings": 5}"#,
        r###"{"stop_strings": ["\u0000", "##", "[SEP]"]}"###,
        r#"{"cache_implementation": "static"}"#,
        r#"{"cache_implementation": 5}"#,
        r#"{"no_repeat_ngram_size": 1}"#,
        r#"{"no_repeat_ngram_size": 1000000000000}"#,
        r#"{}"#,
        r#"[]"#,
        r#"null"#,
        r#"{"eos_token_id": "#,
    ];
    let mut cases: Vec<Case> = texts.iter().map(|t| Case::write(*t, g, t.as_bytes(), &[])).collect();
    cases.push(Case::write("generation_config.json garbage", g, vec![0xFF; 8], &[]));
    cases.push(Case::of("generation_config.json a folder", vec![Edit::MakeDir(g.into())], &[]));
    let every: Vec<i64> = (0..VOCAB).collect();
    let suppressed = json!({"suppress_tokens": every, "do_sample": true});
    cases.push(Case::write("every token suppressed, sampled", g, json_bytes(&suppressed), &[]));
    cases.push(Case::write(
        "stop string of 10000 characters",
        g,
        json_bytes(&json!({"stop_strings": ["a".repeat(10_000)]})),
        &[],
    ));
    cases
}

/// Reads the generation settings of `dir` as a service does and generates with them, batch 2
/// left-padded: the tokens are counted against the model's `max_position_embeddings`
/// (`max_positions`), a runaway a failure where `resolve_length` promised that cap.
fn exercise_generation(
    s: &mut Sweep,
    case: &str,
    dir: &Path,
    cfg: &Arc<Config>,
    model: &Arc<AutoModel>,
    tok: &Arc<HfTokenizer>,
    max_positions: usize,
) {
    let (d, c) = (dir.to_path_buf(), cfg.clone());
    let g = s.call(case, "GenerationConfig::from_model_dir", GENERATION_ANCHORS, move || {
        GenerationConfig::from_model_dir(&d, &c)
    });
    let Some(mut g) = g else { return };
    let capped = g.length_cap.is_some();
    let resolved = s.call(case, "GenerationConfig::resolve_length(3)", &["max_length"], move || {
        g.resolve_length(3)?;
        Ok(g)
    });
    let Some(g) = resolved else { return };
    let ids = Tensor::from_vec(vec![0i64, 5, 7, 4, 5, 6], [2, 3]).expect("prompts");
    let mask = Tensor::from_vec(vec![0i64, 1, 1, 1, 1, 1], [2, 3]).expect("a mask");
    let on_stop = if capped { OnStop::Failure } else { OnStop::Note };
    let gen = Gen { ids, mask: Some(mask), g, budget: 2 * max_positions, on_stop };
    run_generation(s, case, "generate_with_tokenizer(batch 2)", model, Some(tok), gen);
}

/// The corruptions of the sentence-transformers files of `sc` (a folder with `modules.json`).
fn sentence_cases(sc: &Scratch) -> Vec<Case> {
    let modules = original_json(sc, "modules.json");
    let set_module =
        |i: usize, k: &str, v: Value| json_bytes(&with_value(&modules, &[Seg::At(i), Seg::Key(k.into())], v));
    let m = "modules.json";
    let pooling = "1_Pooling/config.json";
    let st = "sentence_bert_config.json";
    let prompts = "config_sentence_transformers.json";
    let mut cases = vec![
        Case::write("modules.json truncated", m, half(&sc.original(m)), &[m]),
        Case::write("modules.json garbage", m, vec![0xFF; 8], &[m]),
        Case::write("modules.json an object", m, b"{}".to_vec(), &[]),
        Case::write("modules.json [5]", m, b"[5]".to_vec(), &[]),
        Case::write("a module of unknown type", m, set_module(1, "type", json!("Nope")), &[m]),
        Case::write("a module type that is a number", m, set_module(1, "type", json!(5)), &[m]),
        Case::write("the pooling path escaping", m, set_module(1, "path", json!("../../../../..")), &[]),
        Case::write(
            "the pooling path absolute",
            m,
            set_module(1, "path", json!("/nonexistent/robustness")),
            &[],
        ),
        Case::write("the pooling path a number", m, set_module(1, "path", json!(5)), &[]),
        Case::write(
            "a Dense module without its folder",
            m,
            set_module(1, "type", json!("sentence_transformers.models.Dense")),
            &["dense", "config.json"],
        ),
        Case::write(pooling, pooling, b"{\"pooling_mode\": ".to_vec(), &["Pooling"]),
        Case::of(format!("{pooling} removed"), vec![Edit::Remove(pooling.into())], &[]),
        Case::write(st, st, b"[1, 2".to_vec(), &[st]),
        Case::write(prompts, prompts, b"{\"prompts\": ".to_vec(), &[prompts]),
    ];
    for v in
        [json!("nope"), json!([5]), json!([]), json!(5), json!(["lasttoken", "cls", "weightedmean", "max"])]
    {
        let text = json_bytes(&json!({"pooling_mode": v, "include_prompt": true}));
        cases.push(Case::write(format!("pooling_mode {v}"), pooling, text, &["pooling"]));
    }
    for mode in ["cls", "lasttoken", "weightedmean", "max", "mean_sqrt_len_tokens"] {
        let text = json_bytes(&json!({"pooling_mode": mode, "include_prompt": false}));
        cases.push(Case::write(format!("pooling {mode} without the prompt"), pooling, text, &[]));
    }
    cases.push(Case::write(
        "include_prompt \"x\"",
        pooling,
        json_bytes(&json!({"include_prompt": "x"})),
        &["include_prompt"],
    ));
    for (key, v) in [
        ("max_seq_length", json!(0)),
        ("max_seq_length", json!(1)),
        ("max_seq_length", json!(2)),
        ("max_seq_length", json!(1000000000000u64)),
        ("max_seq_length", json!(-1)),
        ("max_seq_length", json!("x")),
        ("do_lower_case", json!("x")),
        ("processor_kwargs", json!({"model_max_length": 0})),
        ("processor_kwargs", json!({"model_max_length": "x"})),
    ] {
        let mut settings = Map::new();
        settings.insert(key.to_string(), v.clone());
        cases.push(Case::write(format!("{key}={v}"), st, json_bytes(&Value::Object(settings)), &[key]));
    }
    for (label, v) in [
        ("prompts a string", json!({"prompts": "x"})),
        ("a prompt that is a number", json!({"prompts": {"query": 5}})),
        ("default_prompt_name missing", json!({"prompts": {"query": "q: "}, "default_prompt_name": "nope"})),
        ("default_prompt_name a number", json!({"prompts": {}, "default_prompt_name": 5})),
        (
            "a long default prompt",
            json!({"prompts": {"query": "query: ".repeat(500)}, "default_prompt_name": "query"}),
        ),
    ] {
        cases.push(Case::write(label, prompts, json_bytes(&v), &["prompt"]));
    }
    cases
}

/// The corruptions of a sentence-transformers `Dense` module folder `dense` (`2_Dense`).
fn dense_cases(sc: &Scratch, dense: &str, rng: &mut Rng) -> Vec<Case> {
    let cfg_name = format!("{dense}/config.json");
    let cfg = original_json(sc, &cfg_name);
    let set = |k: &str, v: Value| json_bytes(&with_value(&cfg, &[Seg::Key(k.into())], v));
    let mut cases = Vec::new();
    for (key, v) in [
        ("in_features", json!(0)),
        ("in_features", json!(1000000000000u64)),
        ("in_features", json!("x")),
        ("out_features", json!(0)),
        ("out_features", json!(-1)),
        ("activation_function", json!("torch.nn.Nope")),
        ("activation_function", json!(5)),
        ("bias", json!("x")),
        ("bias", json!(false)),
        ("use_residual", json!(true)),
    ] {
        cases.push(Case::write(format!("{dense} {key}={v}"), &cfg_name, set(key, v), &[key, dense]));
    }
    let weights = format!("{dense}/model.safetensors");
    for case in safetensors_cases(&weights, &sc.original(&weights), rng).into_iter().step_by(3) {
        cases.push(Case { label: format!("{dense} {}", case.label), ..case });
    }
    cases
}

#[test]
fn corrupt_tokenizer_chat_generation_and_sentence_files_never_panic() {
    let root = ScratchRoot::new("text");
    let mut rng = Rng(SEED ^ 2);
    let mut s = Sweep::default();
    // tokenizer.json: the fixtures' tokenizers, and each of tests/fixtures/tokenizers alone (the
    // Llama one with the tokenizer_config.json that rebuilds its pipeline).
    let mut tokenizer_dirs =
        vec![Scratch::fixture(&root, "llama_tied"), Scratch::fixture(&root, "sentence_tiny")];
    let files = std::fs::read_dir(fixture("tokenizers")).expect("tests/fixtures/tokenizers");
    // (The SentencePiece models there are swept by the tokenizer's own unit tests.)
    let mut names: Vec<String> = files
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    for name in names {
        let pristine = root.0.join(format!("pristine-{name}"));
        std::fs::create_dir_all(&pristine).expect("a pristine folder");
        std::fs::copy(fixture("tokenizers").join(&name), pristine.join("tokenizer.json"))
            .expect("a tokenizer");
        if name.contains("llama") {
            let config =
                r#"{"tokenizer_class": "LlamaTokenizerFast", "legacy": false, "add_prefix_space": true}"#;
            std::fs::write(pristine.join("tokenizer_config.json"), config).expect("a tokenizer config");
        }
        tokenizer_dirs.push(Scratch::copy_of(&root, &format!("tok-{name}"), &pristine));
    }
    for sc in &mut tokenizer_dirs {
        let what =
            format!("{} ", sc.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        exercise_tokenizer(&mut s, &format!("{what}(as it is)"), &sc.dir, &[]);
        let cases =
            tokenizer_cases(&original_json(sc, "tokenizer.json"), &sc.original("tokenizer.json"), &mut rng);
        for case in cases {
            sc.apply(&case.edits);
            exercise_tokenizer(&mut s, &format!("{what}{}", case.label), &sc.dir, &case.anchors());
            sc.reset();
        }
    }
    drop(tokenizer_dirs);
    // tokenizer_config.json and the chat template of llama_tied.
    let mut sc = Scratch::fixture(&root, "llama_tied");
    let cases = chat_and_tokenizer_config_cases(
        &original_json(&sc, "tokenizer_config.json"),
        &sc.original("tokenizer_config.json"),
    );
    for case in cases {
        sc.apply(&case.edits);
        let label = format!("llama_tied {}", case.label);
        exercise_tokenizer(&mut s, &label, &sc.dir, &case.anchors());
        run_chat(&mut s, &label, &sc.dir, &case.anchors());
        sc.reset();
    }
    // generation_config.json, with llama_tied loaded once.
    let dir = fixture("llama_tied");
    let loaded = s.call("llama_tied (as it is)", "load config, weights, model, tokenizer", &[], move || {
        let cfg = Config::load(&dir)?;
        let model = AutoModel::load(&cfg, &Weights::load(&dir, None)?)?;
        Ok((Arc::new(cfg), Arc::new(model), Arc::new(HfTokenizer::load(&dir, None)?)))
    });
    if let Some((cfg, model, tok)) = loaded {
        exercise_generation(&mut s, "llama_tied (as it is)", &sc.dir, &cfg, &model, &tok, 64);
        for case in generation_config_cases() {
            sc.apply(&case.edits);
            let label = format!("llama_tied generation_config.json {}", case.label);
            exercise_generation(&mut s, &label, &sc.dir, &cfg, &model, &tok, 64);
            sc.reset();
        }
    }
    // sentence-transformers files.
    for name in ["sentence_tiny", "sentence_dense"] {
        let mut sc = Scratch::fixture(&root, name);
        baseline(&mut s, name, &sc.dir);
        let mut cases = sentence_cases(&sc);
        if name == "sentence_dense" {
            cases.extend(dense_cases(&sc, "2_Dense", &mut rng));
        }
        for case in cases {
            sc.apply(&case.edits);
            run_sentence(
                &mut s,
                &format!("{name} {}", case.label),
                &sc.dir,
                &case.anchors(),
                pick_dtype(&mut rng),
            );
            sc.reset();
        }
    }
    s.finish("robustness tokenizer, chat, generation and sentence-transformers files sweep", 1500);
}

/// The corruptions of a folder whose tokenizer is built from vocabularies and models of its own
/// (no `tokenizer.json`): each of `files` removed, truncated, emptied or garbage (the JSON ones
/// also of the wrong shape), and `tokenizer_config.json` settings of the wrong type or value.
fn vocab_folder_cases(files: &[&str], original: &dyn Fn(&str) -> Vec<u8>) -> Vec<Case> {
    let mut cases = Vec::new();
    for &f in files {
        let bytes = original(f);
        cases.push(Case::of(format!("{f} removed"), vec![Edit::Remove(f.into())], &[f]));
        cases.push(Case::write(format!("{f} truncated"), f, half(&bytes), &[f]));
        cases.push(Case::write(format!("{f} empty"), f, Vec::new(), &[f]));
        cases.push(Case::write(format!("{f} garbage"), f, vec![0xC3; 64], &[f]));
        if f.ends_with(".json") {
            for (what, json) in [
                ("a list", "[]"),
                ("string ids", r#"{"</s>": "0", "<unk>": "1"}"#),
                ("ids past u32", r#"{"</s>": 0, "<unk>": 99999999999}"#),
                ("two pieces", r#"{"</s>": 0, "<unk>": 1}"#),
            ] {
                cases.push(Case::write(format!("{f} {what}"), f, json, &[f]));
            }
        }
    }
    let tc = "tokenizer_config.json";
    let config: Value = serde_json::from_slice(&original(tc)).expect("a tokenizer config");
    for (key, value) in [
        ("separate_vocabs", json!(true)),
        ("separate_vocabs", json!("yes")),
        ("language_codes", json!("xx")),
        ("language_codes", json!(5)),
        ("src_lang", json!(5)),
        ("src_lang", json!("zz")),
        ("add_prefix_space", json!("x")),
        ("add_bos_token", json!(true)),
        ("eos_token", json!(7)),
        ("unk_token", json!("<never>")),
        ("pad_token", json!({"content": 5})),
        ("mask_token", json!({"content": "<mask>", "lstrip": "yes"})),
        ("additional_special_tokens", json!(5)),
        ("additional_special_tokens", json!([5, ">>deu<<", "__fr__"])),
        ("added_tokens_decoder", json!({"x": {"content": "a"}})),
        ("added_tokens_decoder", json!({"999999": {"content": "<big>", "special": true, "lstrip": true}})),
        ("padding_side", json!("up")),
        ("offset", json!(-3)),
        ("offset", json!(1)),
        ("offset", json!(1u64 << 40)),
        ("mask_token", json!("None")),
        ("mask_token_sent", json!("<pad>")),
    ] {
        let mut changed = config.clone();
        changed[key] = value.clone();
        cases.push(Case::write(format!("{tc} {key}={value}"), tc, json_bytes(&changed), &[tc]));
    }
    cases
}

/// Marian's, M2M100's and OPT's tokenizer folders (SentencePiece models or `merges.txt` beside a
/// `vocab.json`, no `tokenizer.json`) and Pegasus, XLM-R and ALBERT ones (a SentencePiece model alone): loaded and used as they are and with each file or setting
/// corrupted, errors naming what is wrong, never a panic.
#[test]
fn corrupt_vocab_folders_never_panic() {
    let root = ScratchRoot::new("vocab-folders");
    let mut s = Sweep::default();
    let folders: [(&str, &[&str]); 3] = [
        ("opus_mt", &["source.spm", "target.spm", "vocab.json"]),
        ("m2m_100_spm", &["sentencepiece.bpe.model", "vocab.json", "special_tokens_map.json"]),
        ("opt_bpe", &["vocab.json", "merges.txt"]),
    ];
    // (SentencePiece models alone, under the classes that read them.)
    let spm_only: [(&str, &str, &str, &str); 3] = [
        (
            "pegasus",
            "t5_unigram.model",
            "spiece.model",
            r#"{"tokenizer_class": "PegasusTokenizer", "offset": 103}"#,
        ),
        (
            "xlmr",
            "fairseq_unigram.model",
            "sentencepiece.bpe.model",
            r#"{"tokenizer_class": "XLMRobertaTokenizer"}"#,
        ),
        ("albert", "albert_unigram.model", "spiece.model", r#"{"tokenizer_class": "AlbertTokenizer"}"#),
    ];
    let mut scratches = Vec::new();
    for (name, model, file, config) in spm_only {
        let pristine = root.0.join(format!("pristine-{name}"));
        std::fs::create_dir_all(&pristine).expect("a pristine folder");
        std::fs::copy(fixture("tokenizers").join(model), pristine.join(file)).expect("a model");
        std::fs::write(pristine.join("tokenizer_config.json"), config).expect("a tokenizer config");
        scratches.push((Scratch::copy_of(&root, name, &pristine), name, vec![file]));
    }
    let folders =
        folders.into_iter().map(|(name, files)| (Scratch::fixture(&root, name), name, files.to_vec()));
    for (mut sc, name, files) in folders.chain(scratches) {
        exercise_tokenizer(&mut s, &format!("{name} (as it is)"), &sc.dir, &[]);
        let cases = vocab_folder_cases(&files, &|f| sc.original(f));
        for case in cases {
            sc.apply(&case.edits);
            exercise_tokenizer(&mut s, &format!("{name} {}", case.label), &sc.dir, &case.anchors());
            sc.reset();
        }
    }
    s.finish("robustness vocabulary-folder tokenizers sweep", 300);
}
