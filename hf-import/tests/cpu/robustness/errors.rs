//! Errors stay on one line where values hold line breaks; chat templates that ask for
//! allocations no service survives are refused.

use super::*;

/// Values holding a line break, where hf-import quotes them in an error: every such error must
/// still be one line (a service logs one line per failure; a log line must not be forgeable).
#[test]
fn errors_stay_on_one_line_with_line_breaks_in_values() {
    let root = ScratchRoot::new("lines");
    let mut rng = Rng(SEED ^ 3);
    let mut s = Sweep::default();
    let nl = |v: &str| json!(format!("{v}\nrobust35: forged line"));
    let config_case = |sc: &Scratch, path: &[&str], v: Value| {
        let path: JsonPath = path.iter().map(|k| Seg::Key(k.to_string())).collect();
        let json = with_value(&original_json(sc, "config.json"), &path, v);
        Case::write(format!("{}=<a line break>", path_label(&path)), "config.json", json_bytes(&json), &[])
    };
    let mut sc = Scratch::fixture(&root, "llama_tied");
    let mut cases = vec![
        config_case(&sc, &["model_type"], nl("llama")),
        config_case(&sc, &["architectures"], json!(["Llama\nForCausalLM"])),
        config_case(&sc, &["hidden_act"], nl("silu")),
        config_case(&sc, &["rope_parameters", "rope_type"], nl("default")),
        Case::write(
            "tokenizer.json version",
            "tokenizer.json",
            json_bytes(&with_value(
                &original_json(&sc, "tokenizer.json"),
                &[Seg::Key("version".into())],
                nl("1.0"),
            )),
            &[],
        ),
        Case::write(
            "chat template raising a line break",
            "chat_template.jinja",
            "{{ raise_exception('bad\\nrobust35: forged line') }}",
            &[],
        ),
    ];
    let (mut entries, meta) = read_st(&sc.original("model.safetensors"));
    let pick = rng.below(entries.len());
    entries[pick].name = "model.bad\nrobust35: forged line".into();
    entries[pick].dtype = "F8_E4M3".into();
    entries[pick].data = vec![0; entries[pick].numel()];
    cases.push(Case::write(
        "a tensor name with a line break",
        "model.safetensors",
        st_bytes(&entries, meta.as_ref()),
        &[],
    ));
    sweep_cases(&mut s, &mut rng, &mut sc, "llama_tied", cases);
    let dir = fixture("llama_tied");
    let template =
        s.call("llama_tied", "ChatTemplate::from_model_dir", &[], move || ChatTemplate::from_model_dir(&dir));
    if let Some(Some(template)) = template {
        s.call("llama_tied chat", "render(a role with a line break)", &[], move || {
            template.render(&[Message::new("user\nrobust35: forged line", "hi")], true)
        });
    }
    let mut sc = Scratch::fixture(&root, "bert");
    let cases = vec![config_case(&sc, &["position_embedding_type"], nl("absolute"))];
    sweep_cases(&mut s, &mut rng, &mut sc, "bert", cases);
    let mut sc = Scratch::fixture(&root, "sentence_dense");
    let modules = original_json(&sc, "modules.json");
    let cases = vec![
        Case::write(
            "pooling_mode",
            "1_Pooling/config.json",
            json_bytes(&json!({"pooling_mode": nl("mean")})),
            &[],
        ),
        Case::write(
            "a module type",
            "modules.json",
            json_bytes(&with_value(&modules, &[Seg::At(2), Seg::Key("type".into())], nl("Nope"))),
            &[],
        ),
        Case::write(
            "a Dense activation",
            "2_Dense/config.json",
            json_bytes(&with_value(
                &original_json(&sc, "2_Dense/config.json"),
                &[Seg::Key("activation_function".into())],
                nl("Nope"),
            )),
            &[],
        ),
    ];
    sweep_cases(&mut s, &mut rng, &mut sc, "sentence_dense", cases);
    let dir = fixture("sentence_tiny");
    let st = s.call("sentence_tiny", "SentenceTransformer::load", &[], move || {
        SentenceTransformer::load(&dir, None)
    });
    if let Some(st) = st {
        s.call(
            "sentence_tiny input",
            "encode_with_prompt(a prompt name with a line break)",
            &[],
            move || st.encode_with_prompt(&["a"], None, Some("nope\nrobust35: forged line")),
        );
    }
    s.finish("robustness one-line errors", 20);
}

/// Chat templates that ask for allocations no service survives: `tojson` indents of `i64::MAX`
/// and 10^12 spaces (refused above 1024 characters), and list repetition whose length overflows
/// (minijinja's arithmetic, contained by `render_json`).
#[test]
fn template_allocation_bombs_are_refused() {
    let mut s = Sweep::default();
    for (label, source) in [
        ("tojson indented i64::MAX", "{{ messages | tojson(indent=9223372036854775807) }}"),
        ("tojson indented 10^12", "{{ messages | tojson(indent=1000000000000) }}"),
        ("tojson indented by a long string", "{{ messages | tojson(indent='          ' * 200) }}"),
        ("a list repeated i64::MAX times", "{{ ([1, 2, 3] * 9223372036854775807) | length }}"),
    ] {
        let template = ChatTemplate::new(source, "<s>", "</s>");
        s.call("chat template", label, &["chat template"], move || {
            template.render(&[Message::new("user", "hi")], true)
        });
    }
    s.finish("robustness template allocation bombs", 4);
}
