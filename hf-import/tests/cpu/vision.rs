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

/// The checkpoints cast to bfloat16 on load run in bfloat16 close to the float32 goldens.
#[test]
fn vit_and_clip_in_bfloat16() {
    for (name, output) in [("vit_cls", "logits"), ("clip", "logits_per_image"), ("clip_cls", "logits")] {
        let dir = fixture(name);
        let cfg = Config::load(&dir).unwrap();
        let model = AutoModel::load(&cfg, &Weights::load(&dir, Some(DType::BF16)).unwrap()).unwrap();
        let (inputs, expected) = golden(name);
        let out: BTreeMap<_, _> = model.forward_named(&inputs, false).unwrap().into_iter().collect();
        let got = &out[output];
        assert_eq!(got.dtype(), DType::BF16, "{name}");
        let worst = assert_close(&format!("{name} bf16 {output}"), got, &expected[output], 0.15, 0.05);
        eprintln!("{name} bf16 {output}: max abs diff {worst:.3}");
    }
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

#[test]
fn clip_model_texts_and_images_against_transformers() {
    check("clip");
}

#[test]
fn clip_towers_alone_with_and_without_projections() {
    for name in ["clip_text", "clip_text_legacy_eos", "clip_vision", "clip_vision_proj"] {
        check(name);
    }
}

#[test]
fn clip_for_image_classification_on_the_mean_patch() {
    check("clip_cls");
}

/// `CLIPModel` given only texts or only images gives that side's embeddings and tower outputs
/// (as `get_text_features` / `get_image_features`, normalised under `*_embeds`); given neither,
/// an error naming both.
#[test]
fn clip_model_on_one_modality() {
    let dir = fixture("clip");
    let cfg = Config::load(&dir).unwrap();
    let model = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, expected) = golden("clip");
    for side in ["text", "vision"] {
        let keep = |k: &str| if side == "text" { k != "pixel_values" } else { k == "pixel_values" };
        let one: BTreeMap<_, _> =
            inputs.iter().filter(|(k, _)| keep(k)).map(|(k, t)| (k.clone(), t.clone())).collect();
        let out = model.forward_named(&one, true).unwrap();
        let embeds = if side == "text" { "text_embeds" } else { "image_embeds" };
        let mut names: Vec<_> = out.iter().map(|(k, _)| k.as_str()).collect();
        names.sort();
        let want: Vec<_> = expected
            .keys()
            .map(String::as_str)
            .filter(|k| *k == embeds || k.starts_with(&format!("{side}_model_output.")))
            .collect();
        assert_eq!(names, want, "{side}");
        for (k, t) in &out {
            assert_close(&format!("clip {side} only {k}"), t, &expected[k], 1e-4, 1e-4);
        }
    }
    let err = model.forward_named(&BTreeMap::new(), false).unwrap_err().to_string();
    assert!(err.contains("input_ids, pixel_values or both"), "{err}");
    // The text tower's states, as the embedding paths read them.
    let text = model.last_hidden_state(&inputs["input_ids"], Some(&inputs["attention_mask"]), None).unwrap();
    assert_close(
        "clip text last_hidden_state",
        &text,
        &expected["text_model_output.last_hidden_state"],
        1e-4,
        1e-4,
    );
}

/// Hub checkpoints of `CLIPTextModel` hold the tower under `text_model.` (transformers 5 saves it
/// at the top): both load; a `clip` config's checkpoint runs as its text tower alone.
#[test]
fn clip_text_model_under_either_prefix() {
    let dir = fixture("clip_text");
    let cfg = Config::load(&dir).unwrap();
    let top = Weights::load(&dir, None).unwrap();
    let prefixed = top.renamed(|n| Some(format!("text_model.{n}")));
    check_with("clip_text", &cfg, &prefixed);
    // The `clip` fixture's text tower as `CLIPTextModel`: the same states as its text_model_output.
    let dir = fixture("clip");
    let mut json = Config::load(&dir).unwrap().json().clone();
    json.insert("architectures".into(), serde_json::json!(["CLIPTextModelWithProjection"]));
    let model = AutoModel::load(&Config::from_map(json), &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, expected) = golden("clip");
    let text: BTreeMap<_, _> = inputs.into_iter().filter(|(k, _)| k != "pixel_values").collect();
    let out: BTreeMap<_, _> = model.forward_named(&text, false).unwrap().into_iter().collect();
    assert_close(
        "clip as text model",
        &out["last_hidden_state"],
        &expected["text_model_output.last_hidden_state"],
        1e-4,
        1e-4,
    );
    assert_close(
        "clip as text model",
        &out["text_embeds"],
        &expected["text_model_output.pooler_output"],
        1e-4,
        1e-4,
    );
}

/// CLIP's inputs get errors naming the problem: a text longer than the position table, a tower's
/// input given to the other, ids as floats.
#[test]
fn clip_bad_inputs_get_clear_errors() {
    let load = |name: &str| {
        let dir = fixture(name);
        AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap()
    };
    let run = |model: &AutoModel, inputs: Vec<(&str, Tensor)>| {
        let named = inputs.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
        model.forward_named(&named, false).map(|_| ()).unwrap_err().to_string()
    };
    let text = load("clip_text");
    assert_eq!(text.input_names(), ["input_ids", "attention_mask", "position_ids"]);
    assert!(!text.is_image_model());
    let err = run(&text, vec![("input_ids", Tensor::zeros([1, 17], DType::I64).unwrap())]);
    assert!(err.contains("got 17 tokens") && err.contains("16"), "{err}");
    let err = run(&text, vec![("pixel_values", Tensor::zeros([1, 3, 16, 16], DType::F32).unwrap())]);
    assert!(err.contains("unexpected input 'pixel_values'"), "{err}");
    let err = run(&text, vec![("input_ids", Tensor::zeros([1, 4], DType::F32).unwrap())]);
    assert!(err.contains("input 'input_ids' must be an integer tensor"), "{err}");
    let err = run(&text, vec![("input_ids", Tensor::full([1, 4], 100.0, DType::I64).unwrap())]);
    assert!(err.contains("id 100 is out of range"), "{err}");
    let vision = load("clip_vision");
    assert!(vision.is_image_model());
    assert_eq!(vision.image_shape(), Some([3, 16, 16]));
    let err = run(&vision, vec![("input_ids", Tensor::zeros([1, 4], DType::I64).unwrap())]);
    assert!(err.contains("unexpected input 'input_ids'"), "{err}");
    let err = run(&vision, vec![("pixel_values", Tensor::zeros([1, 3, 15, 16], DType::F32).unwrap())]);
    assert!(err.contains("(15*16) doesn't match model (16*16)"), "{err}");
    let clip = load("clip");
    let err = run(
        &clip,
        vec![
            ("input_ids", Tensor::zeros([2, 4], DType::I64).unwrap()),
            ("attention_mask", Tensor::ones([3, 4], DType::I64).unwrap()),
        ],
    );
    assert!(err.contains("input 'attention_mask' has shape [3, 4]"), "{err}");
}

/// SigLIP: bidirectional text tower pooled at its last token through a head, vision tower pooled by
/// attention from a probe, sigmoid logits with a bias; the towers alone.
#[test]
fn siglip_model_and_towers() {
    check("siglip");
    check("siglip_vision");
    check("siglip_text");
}

/// DINOv2: layer scales, positions resampled bicubically for an image of another size, the
/// classifier's SwiGLU blocks (the Hub's fused `weights_in`) at the configured size.
#[test]
fn dinov2_interpolated_positions_and_swiglu_classifier() {
    check("dinov2");
    check("dinov2_cls");
}

/// DINOv2 with registers: the register tokens after the class token, positions resampled
/// antialiased (down one side, up the other), the classifier's patch mean without the registers.
#[test]
fn dinov2_with_registers() {
    check("dinov2_reg");
    check("dinov2_reg_cls");
}

/// ResNet: basic and bottleneck layers, the stride in the 3×3 or (`downsample_in_bottleneck`) the
/// first 1×1, the first stage downsampling, batch norms with drawn running statistics, an image
/// of odd sides; the base model's `pooler_output` `[b, c, 1, 1]`, the classifier's logits.
#[test]
fn resnet_basic_and_bottleneck_layers() {
    for name in ["resnet", "resnet_cls", "resnet_bottleneck_stride"] {
        check(name);
    }
    // Pixels of another channel count are refused by name.
    let dir = fixture("resnet");
    let model = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let inputs =
        BTreeMap::from([("pixel_values".to_string(), Tensor::zeros([1, 1, 16, 16], DType::F32).unwrap())]);
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("1 channels") && err.contains("num_channels"), "{err}");
    // A stage deeper than the checkpoint is a missing tensor, however deep.
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["depths"] = serde_json::json!([1usize << 60, 2, 1]);
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let err = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("stages.0.layers.1"), "{err}");
}

/// DeiT: ViT with a distillation token after the class token (the base model with its pooler),
/// the classifier on the class token, and the teacher-distilled head (`logits` the mean of
/// `cls_logits` and `distillation_logits`).
#[test]
fn deit_distillation_token_and_teacher_head() {
    for name in ["deit", "deit_cls", "deit_teacher"] {
        check(name);
    }
}

/// Swin against transformers: padding to whole patches and windows, shifted windows with their
/// mask, odd maps merged with padding, a last stage of one unshifted window; the classifier with
/// absolute positions, and the same checkpoint under transformers 5's weight names.
#[test]
fn swin_windows_and_merging() {
    for name in ["swin", "swin_cls", "swin_cls_renamed", "swinv2", "swinv2_cls"] {
        check(name);
    }
}

/// BEiT and data2vec-vision against transformers: relative position biases per block and shared
/// (resampled for another grid), layer scales, absolute positions resampled, mean or class-token
/// pooling.
#[test]
fn beit_and_data2vec_vision() {
    for name in ["beit", "beit_renamed", "beit_cls_shared", "data2vec_vision_cls"] {
        check(name);
    }
}

/// SegFormer against transformers: overlapping patch embeddings, shrunk keys and values, the
/// Mix-FFN; the classifier and the segmentation head (upsampled, fused, batch-normed), under both
/// weight namings.
#[test]
fn segformer_classification_and_segmentation() {
    for name in ["segformer", "segformer_cls", "segformer_seg", "segformer_seg_renamed"] {
        check(name);
    }
}

/// DINOv3's ViT against transformers: register tokens, the 2-D rotary embedding of the patch
/// centres on a non-square grid, layer scales, the plain and the gated MLP.
#[test]
fn dinov3_vit_rotary_patches() {
    for name in ["dinov3", "dinov3_gated"] {
        check(name);
    }
}

/// ViT-MSN's classifier (no pooler) and I-JEPA's model and classifier (no class token, the
/// classifier on the mean of every token) against transformers.
#[test]
fn vit_msn_and_ijepa() {
    for name in ["vit_msn_cls", "ijepa", "ijepa_cls"] {
        check(name);
    }
}

/// MobileNet V1 and V2 against transformers: TensorFlow's SAME padding on odd sides (and the
/// symmetric kind), widths scaled and rounded, V2's inverted residuals, dilations past the output
/// stride and the DeepLabV3 head.
#[test]
fn mobilenet_v1_and_v2() {
    for name in ["mobilenet_v1_cls", "mobilenet_v2_cls", "mobilenet_v2", "mobilenet_v2_seg"] {
        check(name);
    }
}

/// EfficientNet against transformers: the stem padded after, strided depthwise convolutions padded
/// by hand (and symmetrically where listed), squeeze-and-excitation, residuals past each stage's
/// first block, widths and repeats scaled; mean and max pooling.
#[test]
fn efficientnet_classifier_and_model() {
    for name in ["efficientnet_cls", "efficientnet"] {
        check(name);
    }
}

/// RegNet against transformers: Y layers (squeeze-and-excitation, grouped convolutions) and X
/// layers, projecting shortcuts, the first stage strided or not.
#[test]
fn regnet_x_and_y() {
    for name in ["regnet_cls", "regnet"] {
        check(name);
    }
}

/// GLPN against transformers: SegFormer's encoder under `glpn.`, the decoder's selective feature
/// fusion coarse to fine (a stage already at the decoder's width unprojected), the depth head.
#[test]
fn glpn_model_and_depth() {
    for name in ["glpn", "glpn_depth"] {
        check(name);
    }
}

/// BiT against transformers: weight-standardized convolutions and group norms, pre- and
/// post-activation layers, symmetric and TensorFlow SAME padding, a dilated last stage.
#[test]
fn bit_pre_and_post_activation() {
    for name in ["bit_cls", "bit"] {
        check(name);
    }
}

/// PoolFormer against transformers: average pooling as the token mixer (its padding out of the
/// counts), with and without layer scales, the classifier's norm and mean.
#[test]
fn poolformer_model_and_classifier() {
    for name in ["poolformer_cls", "poolformer"] {
        check(name);
    }
}

/// BiT with many empty stages past its output stride (dilations that double every stage) loads
/// and runs as transformers does, without an overflow.
#[test]
fn bit_dilations_saturate() {
    let dir = fixture("bit");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["hidden_sizes"] = serde_json::json!(vec![16; 90]);
    json["depths"] = serde_json::json!(vec![0; 90]);
    let cfg = Config::from_json_str(&json.to_string()).unwrap();
    let m = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let pixels =
        BTreeMap::from([("pixel_values".to_string(), Tensor::zeros([1, 3, 16, 16], DType::F32).unwrap())]);
    let out = m.forward_named(&pixels, true).unwrap();
    assert_eq!(out.iter().filter(|(k, _)| k.starts_with("hidden_states.")).count(), 91);
}

/// Depth Anything against transformers: DINOv2's chosen blocks normed and reassembled (up by a
/// transposed convolution, down by a strided one), fused to the next finer map's size, the
/// relative and the metric head; blocks chosen by `out_indices` and by `out_features`, positions
/// resampled for a non-square grid.
#[test]
fn depth_anything_relative_and_metric() {
    for name in ["depth_anything", "depth_anything_metric"] {
        check(name);
    }
}

/// DPT against transformers: the ViT with positions resampled bilinearly (and its pooler), the
/// depth head on every block's output with the class token projected in, the segmentation head
/// on two blocks with it added and batch-normed fusion units.
#[test]
fn dpt_depth_and_segmentation() {
    for name in ["dpt", "dpt_depth", "dpt_seg"] {
        check(name);
    }
}

/// Depth Anything and DPT refuse images smaller than a patch, naming the sizes; their heads take
/// non-square grids, the depth following the image's shape.
#[test]
fn dense_prediction_checks_image_sizes() {
    for (name, output) in
        [("depth_anything", "predicted_depth"), ("dpt_depth", "predicted_depth"), ("dpt_seg", "logits")]
    {
        let dir = fixture(name);
        let m = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
        let run = |dims: [usize; 4]| {
            let named =
                BTreeMap::from([("pixel_values".to_string(), Tensor::zeros(dims, DType::F32).unwrap())]);
            m.forward_named(&named, false).map_err(|e| e.to_string())
        };
        let err = run([1, 3, 3, 12]).unwrap_err();
        assert!(err.contains("3×12") && err.contains("4×4 patch"), "{name}: {err}");
        let out = run([1, 3, 8, 16]).unwrap();
        let (key, t) = &out[0];
        assert_eq!(key, output);
        // (2×4 patches of 4: Depth Anything's depth at the patch grid times 4; DPT's fused maps
        // double from the coarsest (1×2 here), once per map, and the head doubles again.)
        let want: &[usize] = match name {
            "depth_anything" => &[1, 8, 16],
            "dpt_depth" => &[1, 32, 64],
            _ => &[1, 3, 8, 16],
        };
        assert_eq!(t.dims(), want, "{name}");
    }
}

/// CvT: the base model (the last stage's class token) and the classifier on the normed map's
/// mean (no class token; a stage without query/key/value biases, 5×5 key and value kernels of
/// stride 3), on an odd image.
#[test]
fn cvt_model_and_classifier() {
    for name in ["cvt", "cvt_cls"] {
        check(name);
    }
}

/// LeViT: the base model, the classifier (a stage without MLPs, another attention ratio) and the
/// teacher-distilled classifier, on a 6×6 grid shrunk to 3×3 and 2×2, every batch norm's
/// statistics drawn; an image of another size is an error naming the grids.
#[test]
fn levit_model_and_classifiers() {
    for name in ["levit", "levit_cls", "levit_teacher"] {
        check(name);
    }
    let dir = fixture("levit");
    let m = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let named =
        BTreeMap::from([("pixel_values".to_string(), Tensor::zeros([1, 3, 64, 96], DType::F32).unwrap())]);
    let err = m.forward_named(&named, false).unwrap_err().to_string();
    assert!(err.contains("6×6") && err.contains("4×6"), "{err}");
}

/// YOLOS: the base model (its pooler, no mid-position tables) and the detector (every block but
/// the last adding its resampled table; class logits and boxes of 3 detection tokens), on images
/// of other sizes than the stored grid's.
#[test]
fn yolos_model_and_detector() {
    for name in ["yolos", "yolos_det"] {
        check(name);
    }
}

/// MobileViTV2: the classifier, the base model (5×5 depthwise kernels, 3-pixel patches) and the
/// DeepLabV3 segmenter (output stride 8), on an odd image whose maps hold pixels past their whole
/// patches.
#[test]
fn mobilevitv2_classifier_model_and_segmenter() {
    for name in ["mobilevitv2_cls", "mobilevitv2", "mobilevitv2_seg"] {
        check(name);
    }
}

/// PVTv2: the base model (keys and values from shrunk maps, no query/key/value biases) and the
/// classifier with linear attention (keys and values pooled to 7×7, a ReLU in the MLP).
#[test]
fn pvt_v2_model_and_classifier() {
    for name in ["pvt_v2", "pvt_v2_cls"] {
        check(name);
    }
}

/// ViT-MAE on a given `noise`: the base model (half the patches kept) and the pre-training
/// model (a quarter kept; the decoder's pixels and the loss on normalised patches).
#[test]
fn vit_mae_model_and_pretraining() {
    for name in ["vit_mae", "vit_mae_pretrain"] {
        check(name);
    }
}

/// Without `noise` ViT-MAE draws its own: each image keeps half its patches (`mask` marks the
/// other half, `ids_restore` is a permutation), and the class token's output, which attends to
/// the kept patches in any order, is the same as with a noise that keeps the same patches.
/// Images of another size, a misshapen `noise` and unknown inputs are errors.
#[test]
fn vit_mae_draws_noise_and_checks_inputs() {
    let dir = fixture("vit_mae");
    let m = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, _) = golden("vit_mae");
    let pixels = inputs["pixel_values"].clone();
    let run = |named: Vec<(&str, Tensor)>| {
        let named = named.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<BTreeMap<_, _>>();
        m.forward_named(&named, false).map_err(|e| e.to_string())
    };
    let drawn = run(vec![("pixel_values", pixels.clone())]).unwrap();
    let get = |out: &[(String, Tensor)], key: &str| out.iter().find(|(k, _)| k == key).unwrap().1.clone();
    let mask = get(&drawn, "mask").to_dtype(DType::F32).unwrap();
    assert_eq!(mask.dims(), [2, 16]);
    assert_eq!(mask.sum([1], false).unwrap().to_vec::<f32>().unwrap(), vec![8.0, 8.0]);
    let restore = get(&drawn, "ids_restore").to_dtype(DType::I64).unwrap();
    let mut rows = restore.to_vec::<i64>().unwrap();
    for row in rows.chunks_mut(16) {
        row.sort();
        assert_eq!(row, (0..16).collect::<Vec<i64>>());
    }
    // A noise that ranks the same patches first (kept in another order): the class token agrees.
    let noise = mask.add(Tensor::rand([2, 16], DType::F32).unwrap().mul(0.5).unwrap()).unwrap();
    let given = run(vec![("pixel_values", pixels.clone()), ("noise", noise)]).unwrap();
    let cls = |out: &[(String, Tensor)]| get(out, "last_hidden_state").select(1, 0).unwrap();
    assert_close("class token", &cls(&given), &cls(&drawn), 1e-5, 1e-5);
    let err = run(vec![("pixel_values", Tensor::zeros([1, 3, 16, 12], DType::F32).unwrap())]).unwrap_err();
    assert!(err.contains("16×16") && err.contains("16×12"), "{err}");
    let err =
        run(vec![("pixel_values", pixels.clone()), ("noise", Tensor::zeros([2, 15], DType::F32).unwrap())])
            .unwrap_err();
    assert!(err.contains("noise") && err.contains("[2, 16]"), "{err}");
    let err =
        run(vec![("pixel_values", pixels), ("labels", Tensor::zeros([2], DType::I64).unwrap())]).unwrap_err();
    assert!(err.contains("unexpected input 'labels'"), "{err}");
}

/// DPT's depth model on a DINOv2 `backbone_config`: the backbone's normed tokens of blocks 1-4,
/// the class token projected in, positions resampled to a 5×6 grid.
#[test]
fn dpt_on_a_dinov2_backbone() {
    check("dpt_dinov2");
}

/// DPT-Hybrid: the base model (a pre-activation BiT, its stem and second stage handed on as
/// `intermediate_activations`) and the depth head (a post-activation BiT with SAME padding, its
/// first two stages fed to the neck).
#[test]
fn dpt_hybrid_on_bit() {
    for name in ["dpt_hybrid", "dpt_hybrid_depth"] {
        check(name);
    }
}

/// DPT-Hybrid takes images of other sizes whose sides are multiples of the patch (transformers
/// takes `image_size` only), its depth following the grid; others fail naming the sizes.
#[test]
fn dpt_hybrid_checks_image_sizes() {
    let dir = fixture("dpt_hybrid_depth");
    let m = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let run = |dims: [usize; 4]| {
        let named = BTreeMap::from([("pixel_values".to_string(), Tensor::zeros(dims, DType::F32).unwrap())]);
        m.forward_named(&named, false).map_err(|e| e.to_string())
    };
    let out = run([1, 3, 32, 64]).unwrap();
    // (2×4 patches of 16; the coarsest map 1×2, doubled by each of 4 fusions and the head.)
    assert_eq!(out[0].1.dims(), [1, 32, 64]);
    let err = run([1, 3, 40, 48]).unwrap_err();
    assert!(err.contains("40×48") && err.contains("2×3 grid") && err.contains("3×3"), "{err}");
    assert!(run([1, 2, 48, 48]).unwrap_err().contains("channels"));
}

/// MobileViT: the classifier, the base model (5×5 kernels, 3-pixel patches, no query/key/value
/// biases) and the DeepLabV3 segmenter (output stride 8), on an odd image whose maps the blocks
/// resize to whole patches and back.
#[test]
fn mobilevit_classifier_model_and_segmenter() {
    for name in ["mobilevit_cls", "mobilevit", "mobilevit_seg"] {
        check(name);
    }
}

/// DPT-Hybrid's config errors name what is wrong: the backbone's `out_indices` and
/// `out_features` disagreeing, a neck that would reassemble the backbone's maps, a feature-map
/// shape that is not the backbone's.
#[test]
fn dpt_hybrid_config_errors() {
    let dir = fixture("dpt_hybrid_depth");
    let weights = Weights::load(&dir, None).unwrap();
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let load = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut json = original.clone();
        edit(&mut json);
        AutoModel::load(&Config::from_json_str(&json.to_string()).unwrap(), &weights)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    load(&|_| {}).unwrap();
    let err = load(&|j| j["backbone_config"]["out_indices"] = serde_json::json!([0, 2, 3])).unwrap_err();
    assert!(err.contains("disagree"), "{err}");
    // (Listed in another order, or with stages past the neck's, they are the same.)
    load(&|j| j["neck_ignore_stages"] = serde_json::json!([1, 0, 9])).unwrap();
    let err = load(&|j| j["neck_ignore_stages"] = serde_json::json!([0])).unwrap_err();
    assert!(err.contains("neck_ignore_stages"), "{err}");
    let err = load(&|j| j["backbone_featmap_shape"] = serde_json::json!([1, 16, 3, 3])).unwrap_err();
    assert!(err.contains("24 channels"), "{err}");
}

/// An image whose later stage is smaller than a window fails (as transformers' bias does not fit
/// it), naming the stage; wrong channels fail too.
#[test]
fn swin_refuses_maps_smaller_than_a_window() {
    let dir = fixture("swin");
    let m = AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap();
    let run = |dims: [usize; 4]| {
        let named = BTreeMap::from([("pixel_values".to_string(), Tensor::zeros(dims, DType::F32).unwrap())]);
        m.forward_named(&named, false).map(|_| ()).map_err(|e| e.to_string())
    };
    let err = run([1, 3, 8, 8]).unwrap_err();
    assert!(err.contains("stage 1") && err.contains("2×2") && err.contains("window_size (3)"), "{err}");
    assert!(run([1, 1, 27, 23]).unwrap_err().contains("channels"));
    run([1, 3, 18, 18]).unwrap();
}

/// ConvNeXt: the base model with layer scales (`pooler_output` the normed mean over positions),
/// its classifier, and V2's (global response normalisation); an image of odd sides.
#[test]
fn convnext_v1_and_v2() {
    for name in ["convnext", "convnext_cls", "convnextv2_cls"] {
        check(name);
    }
}
