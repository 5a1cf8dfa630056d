//! The pre-training heads of BERT's family against transformers: `BertForPreTraining` (its decoder
//! tied and untied), `BertForNextSentencePrediction`, `AlbertForPreTraining` (three sentence-order
//! labels), Megatron-BERT's (pre-norm) and ERNIE's (task-type embeddings) under BERT's heads; and
//! what a checkpoint without a head, without part of one, or without the pooler gives.

use crate::common;

use common::{check, fixture};
use oxtorch_hf_import::{AutoModel, Config, Weights};

#[test]
fn pretraining_heads_match_transformers() {
    for name in [
        "bert_pretraining",
        "bert_pretraining_untied",
        "bert_nsp",
        "albert_pretraining",
        "megatron_bert_pretraining",
        "ernie_nsp",
    ] {
        check(name);
    }
}

/// `fixture`'s config and weights, less the tensors whose names `drop` picks.
fn without(name: &str, drop: impl Fn(&str) -> bool) -> (Config, Weights) {
    let dir = fixture(name);
    let weights = Weights::load(&dir, None).unwrap().renamed(|n| (!drop(n)).then(|| n.to_string()));
    (Config::load(&dir).unwrap(), weights)
}

/// A checkpoint saved without any of the heads' tensors runs as the base model (with a note), as
/// transformers' `AutoModel` loads it; one missing part of a head, or the pooler that the
/// sentence-pair heads read, is an error naming the tensor.
#[test]
fn missing_heads_and_poolers() {
    let (cfg, weights) = without("bert_pretraining", |n| n.starts_with("cls."));
    let (model, note) = AutoModel::load_or_base(&cfg, &weights).unwrap();
    assert!(note.unwrap().contains("BertForPreTraining"));
    assert!(matches!(model, AutoModel::Bert(_)));

    let (cfg, weights) = without("albert_pretraining", |n| n.starts_with("sop_classifier."));
    let err = AutoModel::load_or_base(&cfg, &weights).unwrap_err().to_string();
    assert!(err.contains("sop_classifier.classifier.weight"), "{err}");

    let (cfg, weights) = without("bert_nsp", |n| n.starts_with("bert.pooler."));
    let err = AutoModel::load(&cfg, &weights).unwrap_err().to_string();
    assert!(
        err.contains("bert.pooler.dense.weight") && err.contains("BertForNextSentencePrediction"),
        "{err}"
    );

    let (cfg, weights) = without("bert_pretraining", |n| n == "cls.predictions.transform.dense.weight");
    let err = AutoModel::load(&cfg, &weights).unwrap_err().to_string();
    assert!(err.contains("cls.predictions.transform.dense.weight"), "{err}");
}

/// Megatron-BERT's and ERNIE's pre-training architectures are supported under their own names;
/// the RoBERTa-style families have none.
#[test]
fn pretraining_architecture_names() {
    let arch = |json: &str| AutoModel::architecture_of(&Config::from_json_str(json).unwrap());
    for (model_type, name) in [
        ("bert", "BertForPreTraining"),
        ("bert", "BertForNextSentencePrediction"),
        ("albert", "AlbertForPreTraining"),
        ("megatron-bert", "MegatronBertForPreTraining"),
        ("megatron-bert", "MegatronBertForNextSentencePrediction"),
        ("ernie", "ErnieForPreTraining"),
        ("ernie", "ErnieForNextSentencePrediction"),
    ] {
        let json = format!(r#"{{"model_type": "{model_type}", "architectures": ["{name}"]}}"#);
        assert_eq!(arch(&json).unwrap(), name);
    }
    let err = arch(r#"{"model_type": "roberta", "architectures": ["RobertaForPreTraining"]}"#).unwrap_err();
    assert!(err.to_string().contains("RobertaForPreTraining"));
}
