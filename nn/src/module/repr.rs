//! torch's printing of modules: `Module.__repr__` with each module's `extra_repr`, `_addindent`,
//! `ModuleList`'s folding of equal neighbours, and the Python spellings (`1e-05`, `True`, `(3,)`)
//! that `extra_repr` texts use.

use super::{Member, Module, ModuleExt};

/// A module wrapped for `{}` formatting with torch's `repr` (see [`ModuleExt::repr`]):
/// `println!("{}", DisplayModule(&model))`.
pub struct DisplayModule<'a>(pub &'a dyn Module);

impl std::fmt::Display for DisplayModule<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.repr())
    }
}

impl std::fmt::Display for dyn Module + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

/// What [`ModuleExt::repr`] prints: a module, or the `ModuleList` torch has for a `Vec` field of
/// modules (its members named `field.0`, `field.1`, ...).
pub(super) enum ReprNode<'m> {
    Module(&'m dyn Module),
    List(Vec<(String, ReprNode<'m>)>),
}

/// Adds the child at `path` (dotted for a `Vec` field's members) to `nodes`.
fn insert_repr_child<'m>(nodes: &mut Vec<(String, ReprNode<'m>)>, path: &str, child: &'m dyn Module) {
    match path.split_once('.') {
        Some((first, rest)) => {
            let at = match nodes.iter().position(|(n, node)| n == first && matches!(node, ReprNode::List(_)))
            {
                Some(at) => at,
                None => {
                    nodes.push((first.to_string(), ReprNode::List(Vec::new())));
                    nodes.len() - 1
                }
            };
            if let ReprNode::List(items) = &mut nodes[at].1 {
                insert_repr_child(items, rest, child);
            }
        }
        None => nodes.push((path.to_string(), ReprNode::Module(child))),
    }
}

/// torch's `_addindent`: indents every line but the first by `n` spaces (blank lines stay empty).
fn add_indent(s: &str, n: usize) -> String {
    let mut lines = s.split('\n');
    let mut out = lines.next().unwrap_or_default().to_string();
    for line in lines {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str(&" ".repeat(n));
            out.push_str(line);
        }
    }
    out
}

/// torch's `Module.__repr__` (and `ModuleList.__repr__` for lists); `parent` is the type name of
/// the module holding this one, for torch's `MultiheadAttention.out_proj` spelling.
pub(super) fn repr_node(node: &ReprNode<'_>, parent: &str) -> String {
    let (name, extra, children, is_list) = match node {
        ReprNode::Module(m) => {
            let mut children = Vec::new();
            m.visit(&mut |n, member| {
                if let Member::Child(c) = member {
                    insert_repr_child(&mut children, n, c);
                }
            });
            let mut name = m.type_name();
            // torch's attention keeps its output projection as a `NonDynamicallyQuantizableLinear`.
            if parent == "MultiheadAttention" && name == "Linear" {
                name = "NonDynamicallyQuantizableLinear";
            }
            (name, m.extra_repr(), children, name == "ModuleList")
        }
        ReprNode::List(items) => {
            let items: Vec<(String, ReprNode<'_>)> =
                items.iter().map(|(n, node)| (n.clone(), node_ref(node))).collect();
            ("ModuleList", String::new(), items, true)
        }
    };
    let child_reprs: Vec<(String, String)> =
        children.iter().map(|(key, child)| (key.clone(), repr_node(child, name))).collect();
    if is_list && extra.is_empty() {
        if child_reprs.is_empty() {
            return format!("{name}()");
        }
        // runs of equal neighbours: (first key, last key, count, repr)
        let mut blocks: Vec<(&str, &str, usize, &str)> = Vec::new();
        for (key, r) in &child_reprs {
            match blocks.last_mut() {
                Some(last) if last.3 == r.as_str() => {
                    last.1 = key.as_str();
                    last.2 += 1;
                }
                _ => blocks.push((key.as_str(), key.as_str(), 1, r.as_str())),
            }
        }
        let lines: Vec<String> = blocks
            .iter()
            .map(|&(first, last, n, r)| {
                let line =
                    if n == 1 { format!("({first}): {r}") } else { format!("({first}-{last}): {n} x {r}") };
                add_indent(&line, 2)
            })
            .collect();
        return format!("{name}(\n  {}\n)", lines.join("\n  "));
    }
    let extra_lines: Vec<&str> = if extra.is_empty() { Vec::new() } else { extra.split('\n').collect() };
    let mut lines: Vec<String> = extra_lines.iter().map(|l| l.to_string()).collect();
    lines.extend(child_reprs.iter().map(|(key, r)| format!("({key}): {}", add_indent(r, 2))));
    if lines.is_empty() {
        format!("{name}()")
    } else if extra_lines.len() == 1 && child_reprs.is_empty() {
        format!("{name}({})", extra_lines[0])
    } else {
        format!("{name}(\n  {}\n)", lines.join("\n  "))
    }
}

/// A borrowed copy of a [`ReprNode`] (the tree is rebuilt per level, so lists are cloned shallowly).
fn node_ref<'m>(node: &ReprNode<'m>) -> ReprNode<'m> {
    match node {
        ReprNode::Module(m) => ReprNode::Module(*m),
        ReprNode::List(items) => {
            ReprNode::List(items.iter().map(|(n, i)| (n.clone(), node_ref(i))).collect())
        }
    }
}

/// A float as Python's `repr` writes it (what torch's `extra_repr` prints): the shortest digits
/// that read back the same, `1.0`, `0.01`, `1e-05`, `1e+16`, `inf`, `nan`.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    if !(-4..16).contains(&exp) {
        let e_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{e_sign}{:02}", exp.abs());
    }
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// A bool as Python writes it (`True`, `False`).
pub fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// A list of sizes as a Python tuple: `(3, 3)`, `(3,)`.
pub fn py_tuple<T: std::fmt::Display>(items: &[T]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")),
    }
}
