//! The image models against transformers (`make_vision_fixtures.py`): ViT's `last_hidden_state`,
//! `pooler_output`, classifier `logits` and every hidden state at atol = rtol = 1e-4 (f32), both
//! tensor layouts, low-precision weights, and the errors bad pixels get.

use std::collections::BTreeMap;

use crate::common;

use common::{assert_close, check, check_with, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

#[test]
fn vit_model_with_pooler_on_a_non_square_image() {
    check("vit");
}

#[test]
fn vit_for_image_classification_patches_not_dividing_the_image() {
    check("vit_cls");
}

/// transformers 5's module names (`layers.N.attention.q_proj`, `mlp.fc1`, ...: what a `torch.save`
/// of its in-memory state dict holds) load to the same model as the Hub's.
#[test]
fn vit_under_transformers_5_module_names() {
    for name in ["vit", "vit_cls"] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let hub = Weights::load(&dir, Some(DType::F32)).unwrap();
        let renamed = hub.renamed(|n| {
            let n = n
                .replace("encoder.layer.", "layers.")
                .replace("attention.attention.query", "attention.q_proj")
                .replace("attention.attention.key", "attention.k_proj")
                .replace("attention.attention.value", "attention.v_proj")
                .replace("attention.output.dense", "attention.o_proj")
                .replace("intermediate.dense", "mlp.fc1")
                .replace("output.dense", "mlp.fc2");
            Some(n)
        });
        assert!(
            renamed.contains("layers.1.mlp.fc2.weight") || renamed.contains("vit.layers.1.mlp.fc2.weight")
        );
        check_with(name, &cfg, &renamed);
    }
}

/// The checkpoint cast to bfloat16 on load runs in bfloat16 close to the float32 goldens.
#[test]
fn vit_in_bfloat16() {
    let dir = fixture("vit_cls");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, Some(DType::BF16)).unwrap()).unwrap();
    let (inputs, expected) = golden("vit_cls");
    let out: BTreeMap<_, _> = model.forward_named(&inputs, false).unwrap().into_iter().collect();
    let logits = &out["logits"];
    assert_eq!(logits.dtype(), DType::BF16);
    assert_close("vit_cls bf16 logits", logits, &expected["logits"], 0.15, 0.05);
}

/// Pixels of the wrong size, channels, rank or dtype, token inputs and a missing `pixel_values`
/// each get an error naming the problem.
#[test]
fn bad_pixels_get_clear_errors() {
    let dir = fixture("vit");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    assert!(model.is_image_model());
    assert_eq!(model.input_names(), ["pixel_values"]);
    let run = |inputs: Vec<(&str, Tensor)>| {
        let named = inputs.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
        model.forward_named(&named, false).map(|_| ()).unwrap_err().to_string()
    };
    let err = run(vec![("pixel_values", Tensor::zeros([1, 3, 16, 16], DType::F32).unwrap())]);
    assert!(err.contains("input image size (16*16) doesn't match model (16*12)"), "{err}");
    let err = run(vec![("pixel_values", Tensor::zeros([1, 1, 16, 12], DType::F32).unwrap())]);
    assert!(err.contains("has 1 channels") && err.contains("configuration has 3"), "{err}");
    let err = run(vec![("pixel_values", Tensor::zeros([3, 16, 12], DType::F32).unwrap())]);
    assert!(err.contains("[batch, channels, height, width]") && err.contains("[3, 16, 12]"), "{err}");
    let err = run(vec![("pixel_values", Tensor::zeros([1, 3, 16, 12], DType::I64).unwrap())]);
    assert!(err.contains("must be a floating-point tensor") && err.contains("I64"), "{err}");
    let err = run(vec![("input_ids", Tensor::zeros([1, 4], DType::I64).unwrap())]);
    assert!(err.contains("unexpected input 'input_ids'") && err.contains("pixel_values"), "{err}");
    let err = run(vec![]);
    assert!(err.contains("missing input 'pixel_values'"), "{err}");
    let ids = Tensor::zeros([1, 4], DType::I64).unwrap();
    let err = model.last_hidden_state(&ids, None, None).unwrap_err().to_string();
    assert!(err.contains("image model") && err.contains("pixel_values"), "{err}");
}

/// A config whose images are smaller than a patch, or a checkpoint whose patch weights disagree
/// with the config, is refused when loading.
#[test]
fn vit_config_and_checkpoint_disagreements() {
    let dir = fixture("vit");
    let weights = Weights::load(&dir, None).unwrap();
    let mut json = Config::load(&dir).unwrap().json().clone();
    json.insert("image_size".into(), 2.into());
    let err = AutoModel::load(&Config::from_map(json.clone()), &weights).unwrap_err().to_string();
    assert!(err.contains("smaller than patch_size"), "{err}");
    json.insert("image_size".into(), serde_json::json!([16, 12]));
    json.insert("patch_size".into(), 2.into());
    let err = AutoModel::load(&Config::from_map(json.clone()), &weights).unwrap_err().to_string();
    assert!(err.contains("patch_embeddings.projection.weight") && err.contains("[32, 3, 4, 4]"), "{err}");
    json.insert("patch_size".into(), serde_json::json!([4, 4, 4]));
    let err = AutoModel::load(&Config::from_map(json), &weights).unwrap_err().to_string();
    assert!(err.contains("patch_size must be"), "{err}");
}
