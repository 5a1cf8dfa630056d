//! Chat templates: the Jinja template of `chat_template.jinja` or `tokenizer_config.json`, rendered
//! with minijinja (plus Python string methods) as transformers' `apply_chat_template(tokenize=False)`.

use std::path::Path;

use minijinja::{Environment, ErrorKind};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant`, ...
    pub role: String,
    /// the text
    pub content: String,
}

impl Message {
    /// A message from `role` saying `content`.
    pub fn new(role: &str, content: &str) -> Self {
        Message { role: role.to_string(), content: content.to_string() }
    }
}

/// The instructions a chat template may run (minijinja's fuel): real templates on long
/// conversations take well under a hundredth of it.
const TEMPLATE_FUEL: u64 = 10_000_000;

/// The longest indentation unit `tojson` accepts: each nesting level repeats it, so an unbounded
/// one (`tojson(indent=10**12)`) would be an allocation no service survives.
const MAX_INDENT: usize = 1024;

/// What `apply_chat_template` passes to a template besides the messages.
#[derive(Debug, Clone, Default)]
pub struct ChatArgs<'a> {
    /// end with the assistant's turn
    pub add_generation_prompt: bool,
    /// tool definitions (JSON schemas), `None` when not given
    pub tools: Option<&'a Value>,
    /// documents for retrieval-augmented templates
    pub documents: Option<&'a Value>,
    /// further template variables (transformers' `**kwargs`, e.g. `enable_thinking`)
    pub extra: Vec<(&'a str, Value)>,
}

/// A model's chat template and the special tokens it refers to.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    source: String,
    bos_token: String,
    eos_token: String,
    /// The other special tokens transformers passes to the template (`pad_token`, `unk_token`,
    /// `sep_token`, `cls_token`, `mask_token`), by name.
    special_tokens: Vec<(String, String)>,
}

/// The special tokens besides BOS and EOS that a template can name.
const OTHER_SPECIAL_TOKENS: [&str; 5] = ["pad_token", "unk_token", "sep_token", "cls_token", "mask_token"];

/// A special token as `tokenizer_config.json` stores it: a string or `{"content": ...}`.
fn token_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

/// The `chat_template` string of `dir/chat_template.json`, if the file is there.
fn processor_template(dir: &Path) -> Result<Option<String>> {
    let path = dir.join("chat_template.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
    match json.get("chat_template") {
        Some(Value::String(s)) => Ok(Some(s.clone())),
        _ => Err(Error::format(&path, "expected an object with a \"chat_template\" string")),
    }
}

impl ChatTemplate {
    /// The template of the model in `dir`: `chat_template.jinja` (transformers 5), else the
    /// `chat_template` of `tokenizer_config.json` (a string, or a list of named templates of which
    /// `default` is taken), else that of `chat_template.json` (where the processors of
    /// multimodal checkpoints saved before transformers 5 keep theirs: Qwen2-VL, LLaVA); `None`
    /// when the model has none.
    pub fn from_model_dir(dir: &Path) -> Result<Option<Self>> {
        let cfg_path = dir.join("tokenizer_config.json");
        let cfg: Value = match std::fs::read_to_string(&cfg_path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| Error::format(&cfg_path, e.to_string()))?,
            Err(_) => Value::Null,
        };
        let jinja = dir.join("chat_template.jinja");
        let source = if jinja.is_file() {
            Some(std::fs::read_to_string(&jinja).map_err(|e| Error::io(&jinja, e))?)
        } else {
            match cfg.get("chat_template") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Array(named)) => named
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
                    .and_then(|t| t.get("template").and_then(Value::as_str))
                    .map(str::to_string),
                _ => processor_template(dir)?,
            }
        };
        // Special tokens from tokenizer_config.json, else special_tokens_map.json (transformers
        // reads both).
        let map_path = dir.join("special_tokens_map.json");
        let map: Value = std::fs::read_to_string(&map_path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        let special = |name: &str| {
            let text = token_text(cfg.get(name));
            if text.is_empty() {
                token_text(map.get(name))
            } else {
                text
            }
        };
        Ok(source.map(|source| ChatTemplate {
            source,
            bos_token: special("bos_token"),
            eos_token: special("eos_token"),
            special_tokens: OTHER_SPECIAL_TOKENS.iter().map(|n| (n.to_string(), special(n))).collect(),
        }))
    }

    /// A template from its source text.
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Self {
        ChatTemplate {
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
            special_tokens: OTHER_SPECIAL_TOKENS.iter().map(|n| (n.to_string(), String::new())).collect(),
        }
    }

    /// The prompt text for `messages`, ending with the assistant's turn when `add_generation_prompt`.
    ///
    /// The environment is transformers': blocks trimmed (`trim_blocks`, `lstrip_blocks`), `break`
    /// and `continue`, `raise_exception`, `strftime_now` (UTC), a `tojson` that writes Python's
    /// `json.dumps` text, and the `{% generation %}` markers as no-ops.
    pub fn render(&self, messages: &[Message], add_generation_prompt: bool) -> Result<String> {
        let messages =
            serde_json::to_value(messages).map_err(|e| Error::Input(format!("chat messages: {e}")))?;
        self.render_json(&messages, &ChatArgs { add_generation_prompt, ..ChatArgs::default() })
    }

    /// [`ChatTemplate::render`] for messages as JSON, as `apply_chat_template` takes them: a list of
    /// objects with a `role` and a `content` that may be a string or a list of parts (`{"type":
    /// "text", "text": ...}`), `tool_calls`, and whatever else the template reads; with `args`'
    /// tools, documents and extra variables.
    ///
    /// The messages are normalized as `apply_chat_template` does: keys whose value is `null` are
    /// dropped, and a message's reasoning (`reasoning_content`, `thinking` or `reasoning`) is given
    /// under both `thinking` and `reasoning_content`.
    pub fn render_json(&self, messages: &Value, args: &ChatArgs) -> Result<String> {
        let Some(list) = messages.as_array() else {
            return Err(Error::Input(format!("chat messages must be a list of messages, got {messages}")));
        };
        for (i, m) in list.iter().enumerate() {
            if m.get("role").and_then(Value::as_str).is_none() {
                return Err(Error::Input(format!("chat message {i} has no \"role\" string: {m}")));
            }
        }
        let mut env = Environment::new();
        // A bounded amount of work: a template that loops for ever (or over `range(10**12)`)
        // fails with an error instead of hanging a service. Real templates use a small fraction.
        env.set_fuel(Some(TEMPLATE_FUEL));
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> std::result::Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_function("strftime_now", |format: String| strftime_utc_now(&format));
        env.add_filter("tojson", tojson);
        let source = without_generation_markers(&self.source);
        env.add_template("chat", &source).map_err(|e| Error::Input(format!("chat template: {e}")))?;
        let mut ctx: std::collections::BTreeMap<&str, minijinja::Value> = std::collections::BTreeMap::new();
        // Only the tokens the tokenizer has: `pad_token is defined` is false otherwise.
        for (name, text) in self.special_tokens.iter().filter(|(_, t)| !t.is_empty()) {
            ctx.insert(name, minijinja::Value::from(text.as_str()));
        }
        ctx.insert("bos_token", minijinja::Value::from(self.bos_token.as_str()));
        ctx.insert("eos_token", minijinja::Value::from(self.eos_token.as_str()));
        // As transformers (`{**special_tokens_map, **kwargs}`): extra variables override the tokens.
        for (name, value) in &args.extra {
            ctx.insert(name, minijinja::Value::from_serialize(value));
        }
        ctx.insert("messages", minijinja::Value::from_serialize(transformers_messages(list)));
        // As transformers: `tools` and `documents` are always defined, `None` when not given.
        ctx.insert("tools", args.tools.map_or(minijinja::Value::from(()), minijinja::Value::from_serialize));
        ctx.insert(
            "documents",
            args.documents.map_or(minijinja::Value::from(()), minijinja::Value::from_serialize),
        );
        ctx.insert("add_generation_prompt", minijinja::Value::from(args.add_generation_prompt));
        let tmpl = env.get_template("chat").map_err(|e| Error::Input(format!("chat template: {e}")))?;
        // minijinja's own arithmetic can overflow on hostile templates (`[1] * 2**62`), which is
        // a panic where overflow checks are on: an error for the template, never a crash.
        let rendered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tmpl.render(ctx)));
        match rendered {
            Ok(text) => text.map_err(|e| Error::Input(format!("chat template: {e}"))),
            Err(_) => Err(Error::Input("chat template: rendering failed inside the template engine".into())),
        }
    }
}

/// The names a message's reasoning is passed under; the first is the one templates read.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// The messages as transformers hands them to the template: keys whose value is `null` dropped
/// (`_normalize_chat_messages`), and a message's reasoning, from the first of
/// [`REASONING_FIELDS`] that it has, also under `thinking` (first key) and `reasoning_content`
/// (`_alias_reasoning_fields`: `{"thinking": r, **message, "reasoning_content": r}`).
fn transformers_messages(list: &[Value]) -> Vec<Value> {
    list.iter()
        .map(|m| {
            let Value::Object(map) = m else { return m.clone() };
            let kept: serde_json::Map<String, Value> =
                map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
            let Some(reasoning) = REASONING_FIELDS.iter().find_map(|f| kept.get(*f)).cloned() else {
                return Value::Object(kept);
            };
            let mut out = serde_json::Map::new();
            out.insert("thinking".to_string(), reasoning.clone());
            for (k, v) in kept {
                out.insert(k, v);
            }
            out.insert("reasoning_content".to_string(), reasoning);
            Value::Object(out)
        })
        .collect()
}

/// The template with transformers' `{% generation %}` / `{% endgeneration %}` markers (which only
/// track assistant tokens there) as an always-true `if` block, so that their whitespace control
/// and block trimming act as in transformers.
fn without_generation_markers(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        let Some(len) = rest[start..].find("%}") else { break };
        let tag = &rest[start + 2..start + len];
        let word = tag.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        out.push_str(&rest[..start]);
        let replacement = match word {
            "generation" => Some("if true"),
            "endgeneration" => Some("endif"),
            _ => None,
        };
        match replacement {
            Some(r) => out.push_str(&format!("{{%{}%}}", tag.replacen(word, r, 1))),
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// transformers' `tojson` filter: `json.dumps(value, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)` with those arguments by position or keyword, so Python's
/// separators (`", "` and `": "`, or `","` with an indent), float text (`1e-05`, `3.0`) and no
/// HTML escaping.
fn tojson(
    value: minijinja::Value,
    args: minijinja::value::Rest<minijinja::Value>,
    kwargs: minijinja::value::Kwargs,
) -> std::result::Result<String, minijinja::Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > NAMES.len() {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!("tojson takes at most {} arguments besides the value", NAMES.len()),
        ));
    }
    let mut opts: [Option<minijinja::Value>; 4] = Default::default();
    for (i, name) in NAMES.iter().enumerate() {
        let by_name = kwargs.get::<Option<minijinja::Value>>(name)?;
        let by_position = args.get(i).filter(|v| !v.is_none() && !v.is_undefined()).cloned();
        if by_name.is_some() && i < args.len() {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson got multiple values for argument '{name}'"),
            ));
        }
        opts[i] = by_name.or(by_position);
    }
    kwargs.assert_all_used()?;
    let [ensure_ascii, indent, separators, sort_keys] = opts;
    let bad = |what: &str| minijinja::Error::new(ErrorKind::InvalidOperation, format!("tojson: {what}"));
    // An int indents by that many spaces (none below 1, but still on new lines), a string by itself.
    let indent = match indent {
        None => None,
        Some(v) => match (v.as_str(), v.as_i64()) {
            (Some(s), _) => Some(s.to_string()),
            (None, Some(n)) => Some(" ".repeat(usize::try_from(n).unwrap_or(0).min(MAX_INDENT + 1))),
            _ => return Err(bad(&format!("indent must be an int or a string, got {v}"))),
        },
    };
    if indent.as_ref().is_some_and(|unit| unit.len() > MAX_INDENT) {
        return Err(bad(&format!("an indent over {MAX_INDENT} characters is not supported")));
    }
    let (item_sep, key_sep) = match separators {
        None if indent.is_some() => (",".to_string(), ": ".to_string()),
        None => (", ".to_string(), ": ".to_string()),
        Some(v) => {
            let parts: Vec<String> = v
                .try_iter()
                .map_err(|_| bad("separators must be an (item_separator, key_separator) pair"))?
                .map(|p| p.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| bad("separators must be strings"))?;
            match <[String; 2]>::try_from(parts) {
                Ok([item, key]) => (item, key),
                Err(_) => return Err(bad("separators must be an (item_separator, key_separator) pair")),
            }
        }
    };
    let json = serde_json::to_value(&value).map_err(|e| bad(&e.to_string()))?;
    let layout = JsonLayout {
        indent,
        item_sep,
        key_sep,
        ensure_ascii: ensure_ascii.is_some_and(|v| v.is_true()),
        sort_keys: sort_keys.is_some_and(|v| v.is_true()),
    };
    let mut out = String::new();
    write_python_json(&json, &layout, 0, &mut out);
    Ok(out)
}

/// The `json.dumps` options of a [`tojson`] call.
struct JsonLayout {
    /// the text of one indentation level; `None`: all on one line
    indent: Option<String>,
    /// between items
    item_sep: String,
    /// between a key and its value
    key_sep: String,
    /// non-ASCII characters as `\uXXXX` escapes
    ensure_ascii: bool,
    /// object keys in sorted order
    sort_keys: bool,
}

/// `json.dumps` text of `v` at nesting `level`.
fn write_python_json(v: &Value, layout: &JsonLayout, level: usize, out: &mut String) {
    let newline = |out: &mut String, level: usize| {
        if let Some(unit) = &layout.indent {
            out.push('\n');
            out.push_str(&unit.repeat(level));
        }
    };
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&layout.item_sep);
                }
                newline(out, level + 1);
                write_python_json(item, layout, level + 1, out);
            }
            newline(out, level);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if layout.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(&layout.item_sep);
                }
                newline(out, level + 1);
                write_json_string(k, layout.ensure_ascii, out);
                out.push_str(&layout.key_sep);
                write_python_json(item, layout, level + 1, out);
            }
            newline(out, level);
            out.push('}');
        }
        Value::String(s) => write_json_string(s, layout.ensure_ascii, out),
        Value::Number(n) if n.is_f64() => out.push_str(&python_float(n.as_f64().unwrap_or(f64::NAN))),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string as `json.dumps` writes it (the escapes of serde_json, which are Python's), with
/// every non-ASCII character as `\uXXXX` (surrogate pairs beyond the BMP) when `ensure_ascii`.
fn write_json_string(s: &str, ensure_ascii: bool, out: &mut String) {
    let quoted = Value::String(s.to_string()).to_string();
    if !ensure_ascii {
        out.push_str(&quoted);
        return;
    }
    for c in quoted.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
}

/// Python's `repr` of a float, as `json.dumps` writes it: the shortest digits that read back, positional
/// for decimal exponents -4 to 15 (`0.0001`, `3.0`), else `1e-05`, `2.5e+16`.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    // Rust's `{:e}` writes the shortest round-trip digits: `-2.5e16`, `1e-5`, `0e0`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    if !(-4..16).contains(&exp) {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{exp_sign}{:02}", exp.unsigned_abs());
    }
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let body = if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else if exp + 1 >= n {
        format!("{digits}{}.0", "0".repeat((exp + 1 - n) as usize))
    } else {
        let (int, frac) = digits.split_at((exp + 1) as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// Python's `datetime.now().strftime(format)` for the directives chat templates use, in UTC.
fn strftime_utc_now(format: &str) -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    strftime(format, secs)
}

/// `format` with `%d %m %Y %y %b %B %a %A %H %I %M %S %p %j %%` filled in for the UTC time
/// `secs` after the epoch; other directives are kept as written.
fn strftime(format: &str, secs: i64) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let before: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = before[(month - 1) as usize] + day + i64::from(leap && month > 2);
    let weekday = (days + 3).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str(&format!("{day:02}")),
            Some('m') => out.push_str(&format!("{month:02}")),
            Some('Y') => out.push_str(&year.to_string()),
            Some('y') => out.push_str(&format!("{:02}", year % 100)),
            Some('b') => out.push_str(&MONTHS[(month - 1) as usize][..3]),
            Some('B') => out.push_str(MONTHS[(month - 1) as usize]),
            Some('a') => out.push_str(&DAYS[weekday][..3]),
            Some('A') => out.push_str(DAYS[weekday]),
            Some('H') => out.push_str(&format!("{hour:02}")),
            Some('I') => out.push_str(&format!("{:02}", if hour % 12 == 0 { 12 } else { hour % 12 })),
            Some('M') => out.push_str(&format!("{minute:02}")),
            Some('S') => out.push_str(&format!("{second:02}")),
            Some('p') => out.push_str(if hour < 12 { "AM" } else { "PM" }),
            Some('j') => out.push_str(&format!("{yday:03}")),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod environment_tests {
    use super::*;

    /// `chat_template.jinja` wins over `tokenizer_config.json`'s template, which wins over
    /// `chat_template.json`'s; a malformed `chat_template.json` is an error naming it.
    #[test]
    fn templates_come_from_the_files_in_transformers_order() {
        let dir = std::env::temp_dir().join(format!("oxtorch_chat_files_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let source = |dir: &Path| ChatTemplate::from_model_dir(dir).unwrap().map(|t| t.source);
        assert_eq!(source(&dir), None);
        std::fs::write(dir.join("chat_template.json"), r#"{"chat_template": "processor"}"#).unwrap();
        assert_eq!(source(&dir).as_deref(), Some("processor"));
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"chat_template": "tokenizer"}"#).unwrap();
        assert_eq!(source(&dir).as_deref(), Some("tokenizer"));
        std::fs::write(dir.join("chat_template.jinja"), "jinja").unwrap();
        assert_eq!(source(&dir).as_deref(), Some("jinja"));
        std::fs::remove_file(dir.join("chat_template.jinja")).unwrap();
        std::fs::remove_file(dir.join("tokenizer_config.json")).unwrap();
        std::fs::write(dir.join("chat_template.json"), r#"{"template": 3}"#).unwrap();
        let err = ChatTemplate::from_model_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("chat_template.json") && err.contains("\"chat_template\" string"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn strftime_fills_python_directives() {
        // 2024-07-26 13:05:09 UTC was a Friday, day 208 of a leap year.
        let t = 1_721_999_109;
        assert_eq!(strftime("%d %b %Y", t), "26 Jul 2024");
        assert_eq!(strftime("%A %B %j %H:%M:%S %I%p %y %% %Q", t), "Friday July 208 13:05:09 01PM 24 % %Q");
        assert_eq!(strftime("%Y-%m-%d", 0), "1970-01-01");
    }

    #[test]
    fn templates_render_in_transformers_environment() {
        let t = ChatTemplate::new(
            "{% for m in messages %}\n    <{{ m.role }}>{{ m.content | tojson }}\n{% if loop.index > 0 %}{% break %}{% endif %}{% endfor %}{% generation %}[{{ pad_token }}]{% endgeneration %}{{ {'a': [1, 'é<'], 'b': {}} | tojson }}",
            "<s>",
            "</s>",
        );
        let out = t.render(&[Message::new("user", "hi"), Message::new("assistant", "no")], false).unwrap();
        assert_eq!(out, "    <user>\"hi\"\n[]{\"a\": [1, \"é<\"], \"b\": {}}");
        // The markers' whitespace control and block trimming act as transformers' (values from
        // transformers 5); a token the tokenizer lacks is undefined.
        for (src, want) in [
            ("A\n{% generation %}\nB {{- \"x\" }}\n{%- endgeneration %}\nC", "A\nBxC"),
            ("A\n    {% generation %}\nB{% endgeneration %}\nC", "A\nBC"),
            ("{% if pad_token is defined %}P{% else %}N{% endif %}", "N"),
        ] {
            assert_eq!(ChatTemplate::new(src, "", "").render(&[], false).unwrap(), want, "{src}");
        }
        let indented = ChatTemplate::new("{{ {'a': [1, 2]} | tojson(indent=2) }}", "", "");
        assert_eq!(indented.render(&[], false).unwrap(), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
    }
}

#[cfg(test)]
mod json_messages_tests {
    use super::*;

    /// Content lists, tool calls, `tools`, `documents` left `None` and an extra variable render as
    /// transformers' `apply_chat_template` (`make_chat_golden.py`).
    #[test]
    fn json_messages_with_tools_match_transformers() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_tools.json");
        let golden: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let template = ChatTemplate::new(golden["template"].as_str().unwrap(), "", "");
        let args = ChatArgs {
            add_generation_prompt: true,
            tools: Some(&golden["tools"]),
            documents: None,
            extra: vec![("enable_thinking", Value::Bool(false))],
        };
        let text = template.render_json(&golden["messages"], &args).unwrap();
        assert_eq!(text, golden["text"].as_str().unwrap());
        let err =
            template.render_json(&serde_json::json!([{"content": "hi"}]), &args).unwrap_err().to_string();
        assert!(err.contains("has no \"role\""), "{err}");
        // A runaway template ends with an error.
        let endless = ChatTemplate::new(
            "{% for i in range(99999) %}{% for j in range(99999) %}{{ j }}{% endfor %}{% endfor %}",
            "",
            "",
        );
        let err = endless.render(&[Message::new("user", "hi")], true).unwrap_err().to_string();
        assert!(err.contains("fuel"), "{err}");
    }
}
