//! Saying why a program had to be compiled again: which input's shape or dtype changed.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::pjrt::{parse_main_signature, TensorType};

/// Why `what` (an op name) is being compiled now: compares the input types of `text`'s `@main`
/// with those of the previous compile of the same op in this process. Only called when logging.
pub fn explain_recompile(what: &str, text: &str) -> String {
    static LAST: Mutex<Option<HashMap<String, Vec<TensorType>>>> = Mutex::new(None);
    let now = parse_main_signature(text).map(|s| s.args).unwrap_or_default();
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let last = last.get_or_insert_with(HashMap::new);
    let reason = explain_signature_change(last.get(what).map(Vec::as_slice), &now);
    last.insert(what.to_string(), now);
    reason
}

/// A sentence comparing the input types of the previous compile of the same program with the new
/// ones, e.g. `input 0 changed from tensor<8x128xf32> to tensor<8x129xf32>`.
pub fn explain_signature_change(previous: Option<&[TensorType]>, now: &[TensorType]) -> String {
    let Some(previous) = previous else {
        return "first compile".to_string();
    };
    if previous.len() != now.len() {
        return format!("the number of inputs changed from {} to {}", previous.len(), now.len());
    }
    let changes: Vec<String> = previous
        .iter()
        .zip(now)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| {
            let what = if a.element_type != b.element_type && a.dims == b.dims { "dtype" } else { "type" };
            format!("input {i} {what} changed from {a} to {b}")
        })
        .collect();
    if changes.is_empty() {
        "same input types, different program (parameters or guards changed)".to_string()
    } else {
        changes.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pjrt::ElementType;

    #[test]
    fn names_the_input_that_changed() {
        let a = TensorType::new(ElementType::F32, &[8, 128]);
        let b = TensorType::new(ElementType::F32, &[8, 129]);
        let c = TensorType::new(ElementType::BF16, &[8, 128]);
        assert_eq!(explain_signature_change(None, std::slice::from_ref(&a)), "first compile");
        assert_eq!(
            explain_signature_change(Some(&[a.clone(), a.clone()]), &[a.clone(), b]),
            "input 1 type changed from tensor<8x128xf32> to tensor<8x129xf32>"
        );
        assert_eq!(
            explain_signature_change(Some(std::slice::from_ref(&a)), &[c]),
            "input 0 dtype changed from tensor<8x128xf32> to tensor<8x128xbf16>"
        );
        assert!(explain_signature_change(Some(std::slice::from_ref(&a)), std::slice::from_ref(&a))
            .contains("different program"));
    }
}
