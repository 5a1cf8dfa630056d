//! A differential fuzz of the chat templates (`chat.rs`) against transformers 5's
//! `apply_chat_template(tokenize=False)`: fifteen templates with the constructs of popular models'
//! templates (Llama 3.1/3.2, Qwen2.5/3, Gemma 2/3, Phi-3.5, Mistral v0.3, DeepSeek-R1, SmolLM2,
//! Zephyr, Command-R-like, Granite-like, edge constructs, `tojson`'s arguments) on 315 random
//! conversations (`make_chat_template_fuzz_golden.py`, seed 34). A case renders transformers' text exactly,
//! or, where the template raised there, returns an error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use oxtorch_hf_import::{ChatArgs, ChatTemplate};
use serde_json::Value;

/// `text` around byte position `at` (on character boundaries), escaped for one line.
fn around(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(60).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 60).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    format!("{:?}", &text[start..end])
}

/// Where `got` first differs from `want` (a byte position), with both texts around it.
fn first_difference(want: &str, got: &str) -> String {
    let at = want
        .char_indices()
        .zip(got.chars())
        .find(|((_, w), g)| w != g)
        .map_or(want.len().min(got.len()), |((i, _), _)| i);
    format!(
        "first difference at byte {at} (lengths {} and {}):\n    want {}\n    got  {}",
        want.len(),
        got.len(),
        around(want, at),
        around(got, at)
    )
}

/// The text of `case` rendered by `ChatTemplate`, or its error; a panic is reported as such.
fn render(template: &ChatTemplate, case: &Value) -> Result<String, String> {
    let field = |name: &str| Some(&case[name]).filter(|v| !v.is_null());
    let extra: Vec<(&str, Value)> = case["extra"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.as_str(), v.clone())).collect())
        .unwrap_or_default();
    let args = ChatArgs {
        add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap_or(false),
        tools: field("tools"),
        documents: field("documents"),
        extra,
    };
    match catch_unwind(AssertUnwindSafe(|| template.render_json(&case["messages"], &args))) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("PANIC: {msg}"))
        }
    }
}

/// Every case renders as transformers: the same text, or an error where transformers raised.
#[test]
fn chat_templates_render_as_transformers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_template_fuzz.json");
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let templates = golden["templates"].as_object().expect("templates");
    let cases = golden["cases"].as_array().expect("cases");
    assert!(cases.len() >= 300, "{} cases", cases.len());
    let mut failures = Vec::new();
    let (mut texts, mut errors) = (0, 0);
    for case in cases {
        let id = &case["id"];
        let name = case["template"].as_str().unwrap();
        let source = templates[name].as_str().unwrap();
        let template = ChatTemplate::new(
            source,
            case["bos_token"].as_str().unwrap_or(""),
            case["eos_token"].as_str().unwrap_or(""),
        );
        let got = render(&template, case);
        match (case["expected"].as_str(), got) {
            (Some(want), Ok(got)) => {
                texts += 1;
                if want != got {
                    failures.push(format!("case {id} ({name}): {}", first_difference(want, &got)));
                }
            }
            (Some(_), Err(e)) => {
                failures.push(format!("case {id} ({name}): transformers renders, got error: {e}"))
            }
            (None, Ok(got)) => failures.push(format!(
                "case {id} ({name}): transformers raises {}, got text {:?}",
                case["error"],
                got.chars().take(200).collect::<String>()
            )),
            (None, Err(e)) => {
                errors += 1;
                if e.starts_with("PANIC") {
                    failures.push(format!("case {id} ({name}): {e}"));
                }
            }
        }
    }
    assert!(errors > 0 && texts > errors, "{texts} texts, {errors} errors");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from transformers:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
