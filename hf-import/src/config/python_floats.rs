//! The non-finite floats Python writes into `config.json`: `json.dumps` writes bare `Infinity`,
//! `-Infinity` and `NaN` (transformers 4.x configs, e.g. Mamba-2's `time_step_limit`), which JSON
//! has no token for, and transformers 5 writes `{"__float__": "Infinity"}`. Both read as the same
//! value here.

use std::borrow::Cow;

use serde_json::Value;

/// `text` with Python's bare `Infinity`, `-Infinity` and `NaN` (outside strings) written as
/// transformers 5 writes them, `{"__float__": "Infinity"}`; the text itself when it has none.
pub(super) fn with_tagged_floats(text: &str) -> Cow<'_, str> {
    if !text.contains("Infinity") && !text.contains("NaN") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["-Infinity", "Infinity", "NaN"].into_iter().find(|t| rest.starts_with(t))
        {
            out.push_str(&format!("{{\"__float__\": \"{token}\"}}"));
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// A float value: a JSON number, transformers 5's `{"__float__": "Infinity"}`, or such a string
/// (`"Infinity"`, `"-Infinity"`, `"inf"`, `"NaN"`).
pub fn float_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "Infinity" | "inf" | "+inf" => Some(f64::INFINITY),
            "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
            "NaN" | "nan" => Some(f64::NAN),
            other => other.parse().ok(),
        },
        Value::Object(map) => map.get("__float__").and_then(float_of),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_constants_read_as_tagged_floats() {
        let text = r#"{"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "s": "NaN Infinity \" Infinity"}"#;
        let v: Value = serde_json::from_str(&with_tagged_floats(text)).unwrap();
        assert_eq!(float_of(&v["a"][1]), Some(f64::INFINITY));
        assert_eq!(float_of(&v["b"]), Some(f64::NEG_INFINITY));
        assert!(float_of(&v["c"]).unwrap().is_nan());
        assert_eq!(v["s"], "NaN Infinity \" Infinity");
        let tagged: Value = serde_json::from_str(r#"{"__float__": "Infinity"}"#).unwrap();
        assert_eq!(float_of(&tagged), Some(f64::INFINITY));
        assert!(matches!(with_tagged_floats(r#"{"a": 1}"#), Cow::Borrowed(_)));
    }
}
