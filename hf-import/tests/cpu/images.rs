//! The vision-language classes with images against transformers: LLaVA, VipLLaVA, Aya Vision,
//! PaliGemma 1 and 2 and Gemma 3 on the tiny checkpoints of `make_fixtures.py` (their text-only
//! paths are in `decoder_families.rs`).

use crate::common;

use common::{check, check_with, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

/// The fixture `name`'s model, its weights as stored.
fn load(name: &str) -> AutoModel {
    let dir = fixture(name);
    AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap()
}

/// The fixture `name`'s model from a checkpoint without its vision tower's weights.
fn without_vision_tower(name: &str) -> AutoModel {
    let dir = fixture(name);
    let weights = Weights::load(&dir, None).unwrap();
    let text_only: Vec<(String, Tensor)> = weights
        .names()
        .filter(|n| !n.contains("vision_tower"))
        .map(|n| (n.clone(), weights.get(n).unwrap().unwrap()))
        .collect();
    let tmp = std::env::temp_dir().join(format!("oxtorch-{name}-text-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(dir.join("config.json"), tmp.join("config.json")).unwrap();
    oxtorch_hf_import::weights::write_safetensors(&tmp.join("model.safetensors"), &text_only, None).unwrap();
    let model = AutoModel::load(&Config::load(&tmp).unwrap(), &Weights::load(&tmp, None).unwrap()).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    model
}

/// The largest absolute difference between the `logits` of `outputs` and `expected`.
fn logits_diff(outputs: &[(String, Tensor)], expected: &Tensor) -> f32 {
    let logits = &outputs.iter().find(|(k, _)| k == "logits").unwrap().1;
    let diff = logits.sub(expected).unwrap().abs().unwrap().to_vec::<f32>().unwrap();
    diff.into_iter().fold(0f32, f32::max)
}

/// Gemma 3 with images: SigLIP's last hidden state averaged over 2 × 2 patches, Gemma's norm and
/// the projection, the features in place of the image tokens' scaled embeddings, each image's
/// tokens attending both ways (the sliding window still hiding keys past it), against
/// transformers; without `token_type_ids` the attention stays causal (transformers' logits then
/// differ, which `make_fixtures.py` checks), and the ids then give other logits here too.
#[test]
fn gemma3_with_images() {
    check("gemma3_images");
    // The class's head never soft-caps (transformers' `Gemma3ForConditionalGeneration`), whatever
    // the text config's `final_logit_softcapping` (found by diff_fuzz).
    let dir = fixture("gemma3_images");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    json["text_config"]["final_logit_softcapping"] = serde_json::Value::from(0.5);
    let capped = Config::from_json_str(&json.to_string()).unwrap();
    check_with("gemma3_images", &capped, &Weights::load(&dir, Some(DType::F32)).unwrap());
    let model = load("gemma3_images");
    let (mut inputs, expected) = golden("gemma3_images");
    inputs.remove("token_type_ids");
    let causal = model.forward_named(&inputs, false).unwrap();
    let diff = logits_diff(&causal, &expected["logits"]);
    assert!(diff > 1e-3, "the image blocks change the logits ({diff})");
    let mut one = inputs.clone();
    one.insert("pixel_values".into(), inputs["pixel_values"].narrow(0, 0, 1).unwrap());
    let err = model.forward_named(&one, false).unwrap_err().to_string();
    assert!(err.contains("Image features and image tokens do not match, tokens: 8, features: 4"), "{err}");
}

/// PaliGemma 1 and 2 with images: SigLIP's last hidden state through one linear projection, the
/// features in place of the image tokens' scaled embeddings, the prefix (`token_type_ids` 0)
/// attending both ways (across PaliGemma 2's sliding window), the suffix causally; against
/// transformers (whose logits without the `token_type_ids` differ, which `make_fixtures.py`
/// checks).
#[test]
fn paligemma_with_images() {
    check("paligemma_images");
    check("paligemma2_images");
    let model = load("paligemma2_images");
    let (mut inputs, _) = golden("paligemma2_images");
    inputs.insert("image_sizes".into(), Tensor::zeros([2, 2], DType::I64).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("unexpected input 'image_sizes'"), "{err}");
}

/// LLaVA, VipLLaVA and Aya Vision with images: the vision tower's hidden states (CLIP's without
/// the class token, SigLIP's whole, one layer or several concatenated), the projector (VipLLaVA's
/// norm first, LLaVA's without biases, Aya Vision's pixel shuffle and SwiGLU), the features in place of the image tokens' embeddings, against
/// transformers' logits, hidden states and `image_outputs`. Images that do not match the prompt's
/// image tokens, other image inputs, and a checkpoint without its vision tower get clear errors.
#[test]
fn llava_with_images() {
    for name in ["llava_images", "llava_siglip_images", "vipllava_images", "aya_vision_images"] {
        check(name);
    }
    let model = load("llava_images");
    let (inputs, _) = golden("llava_images");
    // Without hidden states asked for, transformers reports the tower's selected one alone.
    let names: Vec<String> =
        model.forward_named(&inputs, false).unwrap().into_iter().map(|(k, _)| k).collect();
    let states: Vec<&String> =
        names.iter().filter(|k| k.starts_with("image_outputs.hidden_states")).collect();
    assert_eq!(states, ["image_outputs.hidden_states.1"]);
    // One image for the prompts' two images' tokens.
    let mut one = inputs.clone();
    one.insert("pixel_values".into(), inputs["pixel_values"].narrow(0, 0, 1).unwrap());
    let err = model.forward_named(&one, false).unwrap_err().to_string();
    assert!(err.contains("Image features and image tokens do not match, tokens: 8, features: 4"), "{err}");
    // Images of another size than the tower's.
    let mut big = inputs.clone();
    big.insert("pixel_values".into(), Tensor::zeros([2, 3, 16, 16], DType::F32).unwrap());
    let err = model.forward_named(&big, false).unwrap_err().to_string();
    assert!(err.contains("input image size (16*16) doesn't match model (8*8)"), "{err}");
    let mut sizes = inputs.clone();
    sizes.insert("image_sizes".into(), Tensor::zeros([2, 2], DType::I64).unwrap());
    let err = model.forward_named(&sizes, false).unwrap_err().to_string();
    assert!(err.contains("unexpected input 'image_sizes'"), "{err}");
    // Without its vision tower's weights, the language model runs on text and images are refused.
    let err = without_vision_tower("llava_images").forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("this checkpoint has no vision tower"), "{err}");
}

/// LLaVA-NeXT, LLaVA-NeXT-Video (on images) and LLaVA-OneVision with "anyres" images: each image's
/// tiles through the tower (the padding tile of the shorter image ignored), the base's features
/// then the tiles' laid out as the image's grid, the resize's padding cut off (rows of a wide
/// image, columns of a tall one), OneVision's grid resized bilinearly to `anyres_max_1` and its
/// prompt of two images untiled, `image_newline` after each row; against transformers' logits,
/// hidden states and `image_outputs`. Missing or inconsistent sizes get clear errors.
#[test]
fn llava_next_anyres_images() {
    for name in ["llava_next_images", "llava_next_video_images", "llava_onevision_images"] {
        check(name);
    }
    let model = load("llava_next_images");
    let (inputs, _) = golden("llava_next_images");
    let error = |change: &dyn Fn(&mut std::collections::BTreeMap<String, Tensor>)| {
        let mut changed = inputs.clone();
        change(&mut changed);
        model.forward_named(&changed, false).unwrap_err().to_string()
    };
    let err = error(&|i| {
        i.remove("image_sizes");
    });
    assert!(err.contains("missing input 'image_sizes'"), "{err}");
    // All the tiles in one 4-D batch must be those the sizes make (4 + 5, not the padded 10).
    let err = error(&|i| {
        let all = i["pixel_values"].reshape([10, 3, 8, 8]).unwrap();
        i.insert("pixel_values".into(), all);
    });
    assert!(err.contains("does not hold the images' tiles: their sizes make [4, 5] tiles"), "{err}");
    let err = error(&|i| {
        let tiles = i["pixel_values"].narrow(1, 0, 4).unwrap();
        i.insert("pixel_values".into(), tiles);
    });
    assert!(err.contains("does not hold the images' tiles: their sizes make [4, 5] tiles"), "{err}");
    // Another image's size: as many tiles (2 × 2), other features after the unpadding.
    let err = error(&|i| {
        i.insert("image_sizes".into(), Tensor::from_vec(vec![5i64, 40, 20, 30], [2, 2]).unwrap());
    });
    assert!(
        err.contains("Image features and image tokens do not match, tokens: 114, features: 112"),
        "{err}"
    );
    let err = error(&|i| {
        i.insert("image_sizes".into(), Tensor::from_vec(vec![5.0f32, 40.0, 30.0, 20.0], [2, 2]).unwrap());
    });
    assert!(err.contains("input 'image_sizes' must be an integer tensor of shape [images, 2]"), "{err}");
    // Extreme sizes: an error, never an overflow.
    for hw in [[i64::MAX, 1], [1, i64::MAX], [i64::MAX, i64::MAX]] {
        let err = error(&|i| {
            let sizes = [5, 40].into_iter().chain(hw).collect();
            i.insert("image_sizes".into(), Tensor::from_vec(sizes, [2, 2]).unwrap());
        });
        assert!(err.contains("Image features and image tokens do not match"), "{hw:?}: {err}");
    }
    let err = error(&|i| {
        i.insert("batch_num_images".into(), Tensor::from_vec(vec![1i64, 1], [2]).unwrap());
    });
    assert!(err.contains("unexpected input 'batch_num_images'"), "{err}");
    // OneVision's images per prompt must count the images.
    let model = load("llava_onevision_images");
    let (mut inputs, _) = golden("llava_onevision_images");
    inputs.insert("batch_num_images".into(), Tensor::from_vec(vec![1i64, 1], [2]).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("input 'batch_num_images' [1, 1] must count the 3 images"), "{err}");
}

/// Idefics3 and SmolVLM with images: each prompt's images (a padding image of zeros dropped)
/// through the tower, the patches' positions bucketed over the kept part of an image that
/// `pixel_attention_mask` pads (its padded patches hidden as keys), the pixel shuffle and the
/// projection, against transformers' logits, hidden states and `image_outputs`; a mask of
/// another shape is an error.
#[test]
fn idefics3_and_smolvlm_with_images() {
    check("idefics3_images");
    check("smolvlm_images");
    let model = load("idefics3_images");
    let (mut inputs, expected) = golden("idefics3_images");
    // Without the pixel mask the padded corner's patches count: other logits.
    let mut whole = inputs.clone();
    whole.remove("pixel_attention_mask");
    let out = model.forward_named(&whole, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the pixel mask changes the logits");
    let mask = inputs["pixel_attention_mask"].narrow(3, 0, 4).unwrap();
    inputs.insert("pixel_attention_mask".into(), mask);
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(
        err.contains("input 'pixel_attention_mask' must be an integer or bool tensor of shape [2, 2, 8, 8]"),
        "{err}"
    );
}

/// InternVL with images: InternViT (a class token, absolute positions, per-channel layer scales;
/// layer norms or RMS norms with q/k norms), the class token dropped from the final state or a
/// block's output, the pixel shuffle and the normed MLP projector, against transformers' logits,
/// hidden states and `image_outputs`; a checkpoint without its tower refuses images.
#[test]
fn internvl_with_images() {
    check("internvl_images");
    check("internvl_rms_images");
    let (inputs, _) = golden("internvl_images");
    let err = without_vision_tower("internvl_images").forward_named(&inputs, false).unwrap_err().to_string();
    assert!(err.contains("this checkpoint has no vision tower"), "{err}");
}

/// LLaVA over a Pixtral tower (Pixtral-12B's layout) with images of their own sizes
/// (`image_sizes`): each cut to its whole patches, all in one sequence (2-D rotary positions, each
/// image attending to itself), against transformers' logits, hidden states and `image_outputs`;
/// sizes past the pixels are an error.
#[test]
fn llava_pixtral_images_of_their_own_sizes() {
    check("llava_pixtral_images");
    let model = load("llava_pixtral_images");
    let (mut inputs, _) = golden("llava_pixtral_images");
    inputs.insert("image_sizes".into(), Tensor::from_vec(vec![16i64, 12, 8, 20], [2, 2]).unwrap());
    let err = model.forward_named(&inputs, false).unwrap_err().to_string();
    assert!(
        err.contains("input 'image_sizes' [(16, 12), (8, 20)] must give each of the 2 images a size within"),
        "{err}"
    );
}

/// Mistral 3 with images of their own sizes: Pixtral's features normed, each image's 2 × 2
/// squares of patches merged (an odd column left out), the MLP, against transformers' logits,
/// hidden states and `image_outputs`.
#[test]
fn mistral3_with_images() {
    check("mistral3_images");
}

/// Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3-VL-MoE with images: the flattened patches of
/// `image_grid_thw`'s grids (one of two frames) through the towers (Qwen2.5-VL's windows,
/// Qwen3-VL's interpolated learned positions), the merged features in place of the image tokens
/// (Qwen3-VL's deepstack features added after the first layers), at the multimodal RoPE positions
/// `get_rope_index` gives (Qwen3-VL's interleaved; read from
/// `mm_token_type_ids`, or from the image tokens when they are not given), against transformers'
/// logits, hidden states and `image_outputs`; the positions matter (plain ones give other logits),
/// and grids that do not fit the patches or the tokens are errors.
#[test]
fn qwen2_vl_with_images() {
    check("qwen2_vl_images");
    check("qwen2_5_vl_images");
    check("qwen3_vl_images");
    check("qwen3_vl_moe_images");
    // A video beside an image: its frames' temporal positions (Qwen2.5-VL's spaced by
    // `second_per_grid_ts`), the image and video features each in place of their own tokens.
    check("qwen2_vl_video");
    check("qwen2_5_vl_video");
    // Qwen3-VL's video: each frame its own run of tokens, the deepstack features of both in order.
    check("qwen3_vl_video");
    let (inputs, expected) = golden("qwen2_5_vl_video");
    let mut unspaced = inputs.clone();
    unspaced.remove("second_per_grid_ts");
    let out = load("qwen2_5_vl_video").forward_named(&unspaced, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the video's frames' spacing changes the logits");
    let model = load("qwen2_vl_images");
    let (inputs, expected) = golden("qwen2_vl_images");
    let mut untyped = inputs.clone();
    untyped.remove("mm_token_type_ids");
    let out = model.forward_named(&untyped, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) < 1e-4, "the image tokens mark the images");
    let mut plain = inputs.clone();
    let (b, s) = (2usize, inputs["input_ids"].dims()[1]);
    let arange: Vec<i64> = (0..b).flat_map(|_| 0..s as i64).collect();
    plain.insert("position_ids".into(), Tensor::from_vec(arange, [b, s]).unwrap());
    let out = model.forward_named(&plain, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the multimodal positions change the logits");
    let mut bad = inputs.clone();
    bad.insert(
        "image_grid_thw".into(),
        Tensor::from_vec(vec![1i64, 4, 6, 1, 2, 4, 1, 4, 4], [3, 3]).unwrap(),
    );
    let err = model.forward_named(&bad, false).unwrap_err().to_string();
    assert!(err.contains("does not hold the patches of image_grid_thw"), "{err}");
    let mut bad = inputs.clone();
    bad.insert(
        "image_grid_thw".into(),
        Tensor::from_vec(vec![1i64, 2, 4, 1, 4, 6, 2, 4, 4], [3, 3]).unwrap(),
    );
    let err = model.forward_named(&bad, false).unwrap_err().to_string();
    assert!(
        err.contains(
            "image 0 (grid [1, 2, 4]) has 2 features, but its run of image tokens in prompt 0 has 6"
        ),
        "{err}"
    );
}

/// LFM2-VL with images of their own sizes: SigLIP2's NaFlex tower (flattened patches, the position
/// table resized to each grid with antialiasing, the padding hidden by `pixel_attention_mask`), the
/// patches' 2 × 2 blocks unshuffled (an odd row left out), the normed projector, against
/// transformers' logits, hidden states and `image_outputs`; without the mask the padding counts.
#[test]
fn lfm2_vl_with_images() {
    check("lfm2_vl_images");
    let (inputs, expected) = golden("lfm2_vl_images");
    let mut unmasked = inputs.clone();
    unmasked.insert("pixel_attention_mask".into(), inputs["pixel_attention_mask"].ones_like().unwrap());
    let out = load("lfm2_vl_images").forward_named(&unmasked, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the pixel mask changes the logits");
}

/// Llama 3.2 Vision: the tiled tower (two images of 2 and 4 tiles, one of 1 tile and a padding
/// image), the cross-attention layers (one among the self-attention layers, one after the last)
/// under the processor's `cross_attention_mask`; without the mask every token sees every tile.
#[test]
fn mllama_with_images() {
    check("mllama_images");
    let (inputs, expected) = golden("mllama_images");
    let model = load("mllama_images");
    let mut unmasked = inputs.clone();
    unmasked.remove("cross_attention_mask");
    let out = model.forward_named(&unmasked, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the cross-attention mask changes the logits");
    let mut text = inputs.clone();
    for name in ["pixel_values", "aspect_ratio_ids", "aspect_ratio_mask", "cross_attention_mask"] {
        text.remove(name);
    }
    let out = model.forward_named(&text, true).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the images change the logits");
    let states = out.iter().filter(|(k, _)| k.starts_with("hidden_states.")).count();
    assert_eq!(states, 4, "on text the cross-attention layers are skipped");
    let mut tiles = inputs.clone();
    tiles.insert("aspect_ratio_mask".into(), inputs["aspect_ratio_mask"].ones_like().unwrap());
    let out = model.forward_named(&tiles, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "the tile mask changes the logits");
    // Hostile image inputs are clear errors.
    let ids = |v: Vec<i64>| Tensor::from_vec(v, [2, 2]).unwrap();
    let pixels = inputs["pixel_values"].narrow(2, 0, 3).unwrap();
    let cross = inputs["cross_attention_mask"].narrow(1, 0, 2).unwrap();
    let twos = inputs["cross_attention_mask"].mul(2.0).unwrap();
    for (name, value, want) in [
        ("aspect_ratio_ids", ids(vec![2, 99, 1, 0]), "id 99 is out of range"),
        ("aspect_ratio_ids", ids(vec![2, -1, 1, 0]), "id -1 is out of range"),
        ("pixel_values", pixels, "pixel_values must be [batch, images, 4, 3, 8, 8]"),
        ("cross_attention_mask", cross, "cross_attention_mask must be [2, 8, 2, 4]"),
        ("cross_attention_mask", twos, "input 'cross_attention_mask' must hold ones and zeros"),
    ] {
        let mut bad = inputs.clone();
        bad.insert(name.into(), value);
        let err = model.forward_named(&bad, false).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
    }
}

/// Qwen2-Audio and Voxtral with audio: Whisper's encoder over `input_features` (Qwen2-Audio's
/// padding frames hidden by `feature_attention_mask`, its frames pooled in pairs; Voxtral's frames
/// projected four by four), the features in place of the audio tokens.
#[test]
fn audio_language_with_audio() {
    check("qwen2_audio_audio");
    check("voxtral_audio");
    let (inputs, expected) = golden("qwen2_audio_audio");
    let model = load("qwen2_audio_audio");
    let mut unmasked = inputs.clone();
    unmasked.insert("feature_attention_mask".into(), inputs["feature_attention_mask"].ones_like().unwrap());
    let err = model.forward_named(&unmasked, false).unwrap_err().to_string();
    assert!(err.contains("Audio features and audio tokens do not match, tokens: 13, features: 16"), "{err}");
    // The padding frames are hidden from the tower's attention: other values there change nothing
    // (from frame 21 on, which no kept position's convolutions read).
    let mut noisy = inputs.clone();
    let features = inputs["input_features"].clone();
    let tail = features.narrow(2, 21, 11).unwrap().mul(3.0).unwrap();
    let changed = Tensor::cat(&[&features.narrow(2, 0, 21).unwrap(), &tail], 2).unwrap();
    let second = changed.narrow(0, 1, 1).unwrap();
    noisy.insert(
        "input_features".into(),
        Tensor::cat(&[&features.narrow(0, 0, 1).unwrap(), &second], 0).unwrap(),
    );
    let out = model.forward_named(&noisy, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) < 1e-4, "the padding frames are hidden");
    let mut twos = inputs.clone();
    twos.insert("feature_attention_mask".into(), inputs["feature_attention_mask"].mul(2.0).unwrap());
    let err = model.forward_named(&twos, false).unwrap_err().to_string();
    assert!(err.contains("input 'feature_attention_mask' must hold ones and zeros"), "{err}");
    let mut bad = inputs.clone();
    bad.insert("input_features".into(), features.narrow(2, 0, 30).unwrap());
    let err = model.forward_named(&bad, false).unwrap_err().to_string();
    assert!(
        err.contains("Qwen2Audio expects the mel input features to be of length 32, but found 30"),
        "{err}"
    );
}

/// LLaVA-NeXT-Video's and LLaVA-OneVision's videos beside an image: each frame through the tower,
/// NeXT-Video's grids pooled before the projector, OneVision's resized after it with a newline
/// after each video; the image's and the videos' features each in place of their own tokens.
#[test]
fn llava_videos_with_an_image() {
    check("llava_next_video_video");
    check("llava_onevision_video");
    let (inputs, expected) = golden("llava_onevision_video");
    let model = load("llava_onevision_video");
    let mut swapped = inputs.clone();
    swapped.insert("pixel_values_videos".into(), inputs["pixel_values_videos"].flip([0]).unwrap());
    let out = model.forward_named(&swapped, false).unwrap();
    assert!(logits_diff(&out, &expected["logits"]) > 1e-3, "each video's features go to its own tokens");
    let mut one = inputs.clone();
    one.insert("pixel_values_videos".into(), inputs["pixel_values_videos"].narrow(0, 0, 1).unwrap());
    let err = model.forward_named(&one, false).unwrap_err().to_string();
    assert!(err.contains("Video features and video tokens do not match, tokens: 26, features: 13"), "{err}");
    // Videos without images: the image tokens keep their own embeddings.
    let AutoModel::VisionLanguage(m) = &model else { panic!("a vision-language model") };
    let mut videos = inputs.clone();
    videos.remove("pixel_values");
    videos.remove("image_sizes");
    let media = m.prompt_media(&videos).unwrap().expect("prompts with videos");
    assert_eq!((media.token, media.video_token, media.rows.dims()[0]), (98, None, 26));
}
