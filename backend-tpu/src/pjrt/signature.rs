//! Reads the argument and result types of `func.func @main` from StableHLO text, so that
//! arguments can be checked before execution (the CPU plugin checks only byte sizes).

use super::element_type::{ElementType, TensorType};
use super::error::{Error, Result};

/// The types of `@main`'s arguments and results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Argument types, in order.
    pub args: Vec<TensorType>,
    /// Result types, in order.
    pub results: Vec<TensorType>,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidArgument(format!("cannot read the signature of func.func @main: {}", reason.into()))
}

/// Parses the `func.func [public] @main(%a: tensor<..>, ...) -> (...)` header in `text`.
pub fn parse_main_signature(text: &str) -> Result<Signature> {
    let start = text
        .match_indices("@main(")
        .map(|(i, _)| i)
        .find(|&i| text[..i].trim_end().ends_with("func.func") || text[..i].trim_end().ends_with("public"))
        .ok_or_else(|| bad("no `func.func @main(` in the program"))?;
    let open = start + "@main".len();
    let close = matching(text, open).ok_or_else(|| bad("unbalanced argument list"))?;
    let args = split_top_level(&text[open + 1..close])
        .into_iter()
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            let (_, ty) =
                a.split_once(':').ok_or_else(|| bad(format!("argument `{}` has no type", a.trim())))?;
            parse_tensor_type(ty.trim())
        })
        .collect::<Result<Vec<_>>>()?;
    let rest = text[close + 1..].trim_start();
    let results = match rest.strip_prefix("->") {
        None => Vec::new(),
        Some(r) => {
            let r = r.trim_start();
            if r.starts_with('(') {
                let end = matching(r, 0).ok_or_else(|| bad("unbalanced result list"))?;
                split_top_level(&r[1..end])
                    .into_iter()
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| parse_tensor_type(t.trim()))
                    .collect::<Result<Vec<_>>>()?
            } else {
                vec![parse_tensor_type(r)?]
            }
        }
    };
    Ok(Signature { args, results })
}

/// Parses `tensor<2x3xf32>` at the start of `s` (anything after its closing `>` is ignored,
/// e.g. an attribute dictionary).
pub fn parse_tensor_type(s: &str) -> Result<TensorType> {
    let body = s.strip_prefix("tensor<").ok_or_else(|| bad(format!("`{s}` is not a ranked tensor type")))?;
    let mut depth = 1usize;
    let end = body
        .char_indices()
        .find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })
        .ok_or_else(|| bad(format!("unterminated type `{s}`")))?;
    // Drop an encoding (`tensor<4xf32, #enc>`): only shape and element type matter here.
    let inner = split_top_level(&body[..end]).into_iter().next().unwrap_or("").trim();
    let mut parts: Vec<&str> = inner.split('x').collect();
    let element = parts.pop().unwrap_or("");
    let element_type = ElementType::from_mlir_name(element)
        .ok_or_else(|| bad(format!("unsupported element type `{element}` in `{s}`")))?;
    let dims = parts
        .iter()
        .map(|d| d.parse::<i64>().map_err(|_| bad(format!("dimension `{d}` of `{s}` is not static"))))
        .collect::<Result<Vec<_>>>()?;
    Ok(TensorType { element_type, dims })
}

/// The index of the bracket closing the one at `open`.
fn matching(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_string = false;
    for (i, c) in text[open..].char_indices() {
        match c {
            '"' => in_string = !in_string,
            '(' | '<' | '{' | '[' if !in_string => depth += 1,
            ')' | '>' | '}' | ']' if !in_string && !text[..open + i].ends_with('-') => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits at commas outside brackets and strings.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut start) = (0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '(' | '<' | '{' | '[' if !in_string => depth += 1,
            ')' | '>' | '}' | ']' if !in_string && !s[..i].ends_with('-') => depth -= 1,
            ',' if !in_string && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_generic_and_pretty_headers() {
        let sig = parse_main_signature(
            "module @m {\n  func.func @main(%a: tensor<2x3xf32>, %s: tensor<i32> {mhlo.sharding = \"{replicated}\"}) \
             -> (tensor<2xf32>, tensor<4xi1>) {\n",
        )
        .unwrap();
        assert_eq!(
            sig.args,
            vec![TensorType::new(ElementType::F32, &[2, 3]), TensorType::new(ElementType::S32, &[])]
        );
        assert_eq!(
            sig.results,
            vec![TensorType::new(ElementType::F32, &[2]), TensorType::new(ElementType::Pred, &[4])]
        );
        let sig =
            parse_main_signature("func.func public @main(%x: tensor<4xui32>) -> tensor<4xbf16> {").unwrap();
        assert_eq!(sig.args, vec![TensorType::new(ElementType::U32, &[4])]);
        assert_eq!(sig.results, vec![TensorType::new(ElementType::BF16, &[4])]);
        let sig = parse_main_signature("func.func @main() -> (tensor<i32>, tensor<i32>) {").unwrap();
        assert!(sig.args.is_empty());
        assert_eq!(sig.results.len(), 2);
    }

    #[test]
    fn refuses_what_it_cannot_check() {
        assert!(parse_main_signature("func.func @other(%a: tensor<2xf32>)").is_err());
        assert!(parse_main_signature("func.func @main(%a: tensor<?x2xf32>) -> tensor<2xf32>").is_err());
        assert!(parse_main_signature("func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32>").is_err());
        assert!(parse_main_signature("func.func @main(%a: tensor<2xf32>").is_err());
    }
}
