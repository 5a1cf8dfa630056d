//! sentence-transformers' `CrossEncoder` (`make_cross_encoder_golden.py`): pair tokenization with
//! truncation of the longer text, logits and `predict` scores as sentence-transformers 6.2 gives
//! them, for a one-label reranker saved in the 4.x/5.x layout (activation in `config.json`) and a
//! three-label model saved by 6.2 (activation in `config_sentence_transformers.json`), and a
//! DeBERTa-v3 NLI model whose tokenizer is a SentencePiece model.

use crate::common;

use common::{assert_close, fixture, read_all};
use oxtorch_hf_import::{CrossEncoder, ScoreActivation};

/// The pairs stored in a golden file's metadata.
fn pairs(dir: &std::path::Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(dir.join("expected.safetensors")).unwrap();
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    serde_json::from_str(&meta.metadata().as_ref().unwrap()["pairs"]).unwrap()
}

fn check(name: &str, labels: usize, activation: ScoreActivation) {
    let dir = fixture(name);
    let expected = read_all(&dir.join("expected.safetensors"));
    let owned = pairs(&dir);
    let pairs: Vec<(&str, &str)> = owned.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let ce = CrossEncoder::load(&dir, None).unwrap();
    assert_eq!((ce.num_labels(), ce.activation()), (labels, activation), "{name}");
    let batch = ce.tokenizer().encode_pairs(&pairs).unwrap();
    for (key, got) in [
        ("input_ids", &batch.input_ids),
        ("attention_mask", &batch.attention_mask),
        ("token_type_ids", &batch.token_type_ids),
    ] {
        assert_eq!(got.to_vec2::<i64>().unwrap(), expected[key].to_vec2::<i64>().unwrap(), "{name} {key}");
    }
    assert_close(&format!("{name} logits"), &ce.logits(&pairs).unwrap(), &expected["logits"], 1e-5, 1e-5);
    let scores = ce.predict(&pairs).unwrap();
    assert_close(&format!("{name} scores"), &scores, &expected["scores"], 1e-5, 1e-5);
    // One pair alone scores as in the batch.
    let one = ce.predict(&pairs[..1]).unwrap();
    assert_close(&format!("{name} one pair"), &one, &scores.narrow(0, 0, 1).unwrap(), 1e-5, 1e-5);
    assert_eq!(ce.predict(&[]).unwrap().dims()[0], 0);
}

#[test]
fn one_label_reranker_with_its_activation_in_config_json() {
    check("cross_encoder_bert", 1, ScoreActivation::Identity);
}

#[test]
fn three_labels_with_the_activation_sentence_transformers_6_saves() {
    check("cross_encoder_multi", 3, ScoreActivation::Sigmoid);
}

/// An NLI cross-encoder as cross-encoder/nli-deberta-v3-* ships it: DeBERTa-v3 with its tokenizer
/// from `spm.model` alone (the hub's `special_tokens_map.json` and `added_tokens.json`), pairs of
/// token types 0 and 1, three labels, no activation.
#[test]
fn deberta_v3_nli_from_its_sentencepiece_model() {
    check("cross_encoder_deberta", 3, ScoreActivation::Identity);
}

#[test]
fn plain_models_are_refused_and_unknown_activations_named() {
    let err = CrossEncoder::load(&fixture("bert"), None).unwrap_err().to_string();
    assert!(err.contains("*ForSequenceClassification") && err.contains("BertModel"), "{err}");
    let src = fixture("cross_encoder_bert");
    let dir = std::env::temp_dir().join(format!("oxtorch-ce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.safetensors", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let config = std::fs::read_to_string(src.join("config.json")).unwrap();
    let config = config.replace("torch.nn.modules.linear.Identity", "my_package.Scaled");
    std::fs::write(dir.join("config.json"), config).unwrap();
    let err = CrossEncoder::load(&dir, None).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert!(err.contains("my_package.Scaled") && err.contains("not supported"), "{err}");
}

/// `hf-import rerank`: the library's scores for (query, passage) pairs as JSON, with the passages
/// ranked best first; a plain model is one error line.
#[test]
fn rerank_cli_prints_scores_and_ranking() {
    let dir = fixture("cross_encoder_bert");
    let query = "the cat reads";
    let passages = ["a book about cats", "the dog runs", "cats read books in the house"];
    let bin = env!("CARGO_BIN_EXE_hf-import");
    let out = std::process::Command::new(bin)
        .args(["rerank", dir.to_str().unwrap(), "--query", query])
        .args(passages)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scores: Vec<f32> = serde_json::from_value(json["scores"].clone()).unwrap();
    let ranking: Vec<usize> = serde_json::from_value(json["ranking"].clone()).unwrap();
    let pairs: Vec<(&str, &str)> = passages.iter().map(|p| (query, *p)).collect();
    let want = CrossEncoder::load(&dir, None).unwrap().predict(&pairs).unwrap().to_vec::<f32>().unwrap();
    for (g, w) in scores.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6, "scores {scores:?} vs {want:?}");
    }
    let mut sorted = ranking.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [0, 1, 2]);
    assert!(ranking.windows(2).all(|w| scores[w[0]] >= scores[w[1]]), "{ranking:?} for {scores:?}");
    let out = std::process::Command::new(bin)
        .args(["rerank", fixture("bert").to_str().unwrap(), "--query", "q", "p"])
        .output()
        .unwrap();
    assert!(!out.status.success() && out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
}
