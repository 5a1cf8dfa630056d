//! Multiple-choice models against transformers: inputs `[batch, num_choices, seq]`, logits
//! `[batch, num_choices]`, hidden states over the `[batch * num_choices, seq]` sequences.

use std::collections::BTreeMap;

use crate::common;
use common::{check, fixture};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

/// BERT, ALBERT, RoBERTa, MPNet (their classifier on the pooler), DistilBERT and DeBERTa-v2 (their
/// sequence classifiers' heads with one output), ELECTRA (its sequence summary), ModernBERT (each
/// row's first kept token under left padding, or the kept tokens' mean); a padded choice among
/// full ones.
#[test]
fn multiple_choice_heads() {
    for name in [
        "bert_mc",
        "albert_mc",
        "roberta_mc",
        "mpnet_mc",
        "distilbert_mc",
        "deberta_mc",
        "electra_mc",
        "modernbert_mc",
        "modernbert_mc_mean",
    ] {
        check(name);
    }
}

/// Inputs of the wrong rank or shape are errors naming them; a checkpoint without the pooler its
/// head reads is an error naming the tensor.
#[test]
fn multiple_choice_inputs_are_checked() {
    let dir = fixture("bert_mc");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let run = |ids: Tensor, mask: Option<Tensor>| {
        let mut inputs = BTreeMap::from([("input_ids".to_string(), ids)]);
        if let Some(mask) = mask {
            inputs.insert("attention_mask".to_string(), mask);
        }
        model.forward_named(&inputs, false)
    };
    let ids = |dims: &[usize]| Tensor::ones(dims, DType::I64).unwrap();
    let out = run(ids(&[2, 4, 5]), None).unwrap();
    assert_eq!(out.iter().find(|(k, _)| k == "logits").unwrap().1.dims(), [2, 4]);
    let err = run(ids(&[2, 5]), None).unwrap_err().to_string();
    assert!(err.contains("input_ids' must be [batch, num_choices, seq] with seq > 0"), "{err}");
    let err = run(ids(&[2, 4, 5]), Some(ids(&[2, 5]))).unwrap_err().to_string();
    assert!(
        err.contains("'attention_mask' has shape [2, 5], which does not fit input_ids of shape [2, 4, 5]"),
        "{err}"
    );
    // The library call checks them too.
    let AutoModel::SequenceClassifier(m) = &model else { panic!("a classifier") };
    assert!(m.is_multiple_choice());
    let err = m.forward(&ids(&[2, 5]), None, None, None, false).unwrap_err().to_string();
    assert!(err.contains("input_ids must be a 3-D tensor [batch, num_choices, seq]"), "{err}");
    let err = m.forward(&ids(&[2, 4, 5]), Some(&ids(&[2, 4, 6])), None, None, false).unwrap_err().to_string();
    assert!(err.contains("attention_mask must have shape [2, 4, 5], got [2, 4, 6]"), "{err}");
    let weights = Weights::load(&dir, None)
        .unwrap()
        .renamed(|name| (!name.contains("pooler")).then(|| name.to_string()));
    let err = AutoModel::load(&Config::load(&dir).unwrap(), &weights).unwrap_err().to_string();
    assert!(err.contains("bert.pooler.dense.weight"), "{err}");
}
