// Written by nn/tests/make_module_repr_extra_layers_golden.py from torch 2.15.0+cu132; do not edit.

/// `(case, state-dict keys, child names)` after the Sequential edits.
const CONTAINER_KEYS: &[(&str, &[&str], &[&str])] = &[
    ("insert_1", &["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"], &["0", "1", "2", "3"]),
    ("insert_neg1", &["0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"], &["0", "1", "2", "3"]),
    ("insert_end", &["0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"], &["0", "1", "2", "3"]),
    ("pop_0", &["1.weight", "1.bias"], &["0", "1"]),
    ("pop_neg1", &["0.weight", "0.bias"], &["0", "1"]),
    ("extend", &["0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias", "4.weight", "4.bias"], &["0", "1", "2", "3", "4"]),
    ("named", &["conv1.weight", "conv1.bias", "fc.weight", "fc.bias"], &["conv1", "act", "fc"]),
    ("named_append", &["conv1.weight", "conv1.bias", "fc.weight", "fc.bias", "3.weight", "3.bias"], &["conv1", "act", "fc", "3"]),
    ("named_append_pop", &["0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"], &["0", "1", "2"]),
];

/// `(case, torch's error message)`.
const CONTAINER_ERRORS: &[(&str, &str)] = &[
    ("pop_5", r#"index 5 is out of range"#),
    ("pop_neg4", r#"index -4 is out of range"#),
    ("pop_empty", r#"index 0 is out of range"#),
    ("insert_5", r#"Index out of range: 5"#),
    ("insert_neg4", r#"Index out of range: -4"#),
    ("getitem_3", r#"index 3 is out of range"#),
    ("named_insert_0", r#"1"#),
    ("add_module_dot", r#"module name can't contain ".", got: x.y"#),
    ("add_module_empty", r#"module name can't be empty string """#),
    ("modulelist_pop_2", r#"index 2 is out of range"#),
];
