//! wav2vec 2.0, HuBERT, data2vec-audio, WavLM, UniSpeech(-SAT) against transformers: raw audio with a padded row, the feature encoder's
//! two norms, post-norm and pre-norm blocks, even and odd positional kernels, the positional weight
//! norm under both of its names, the base model's `extract_features`, the CTC heads and the
//! sequence classifier over the weighted hidden states; and the inputs they refuse.

use std::collections::BTreeMap;

use crate::common;

use common::{check, fixture, golden};
use oxtorch_hf_import::{AutoModel, Config, Weights};
use oxtorch_tensor::{DType, Tensor};

#[test]
fn wav2vec2_and_hubert_match_transformers() {
    for name in [
        "wav2vec2_ctc",
        "wav2vec2_ctc_stable",
        "wav2vec2_ctc_weight_g",
        "wav2vec2_base",
        "wav2vec2_cls",
        "hubert_ctc",
        "hubert_base",
        "data2vec_audio_ctc",
        "data2vec_audio_base",
        "wav2vec2_frames",
    ] {
        check(name);
    }
}

/// WavLM's gated relative position bias (exact, log-spaced and clamped buckets; post-norm and
/// pre-norm blocks), UniSpeech and UniSpeech-SAT, and the x-vector heads (dilated TDNN layers,
/// statistics over each row's frames as transformers counts them, the weighted hidden states).
#[test]
fn wavlm_and_unispeech_match_transformers() {
    for name in [
        "wavlm_base",
        "wavlm_ctc_stable",
        "wavlm_xvector",
        "unispeech_ctc",
        "unispeech_sat_base",
        "unispeech_sat_xvector",
    ] {
        check(name);
    }
}

/// The pre-training heads at inference: `mask_time_indices` puts `masked_spec_embed` in its frames,
/// the quantizer's argmax codevectors, the projections, and the perplexity over the masked frames
/// (wav2vec 2.0) or every frame (UniSpeech); UniSpeech-SAT's plain outputs.
#[test]
fn speech_pretraining_heads_match_transformers() {
    for name in ["wav2vec2_pretraining", "unispeech_pretraining", "unispeech_sat_pretraining"] {
        check(name);
    }
}

/// Wav2Vec2-Conformer: relative (Transformer-XL), rotary or no positions, the convolution module
/// with its batch norm, the half-step feed-forwards; the CTC, base and x-vector heads.
#[test]
fn wav2vec2_conformer_matches_transformers() {
    for name in ["wav2vec2_conformer_rel", "wav2vec2_conformer_rope", "wav2vec2_conformer_plain"] {
        check(name);
    }
}

/// SEW: blocks on frames averaged in windows of the squeeze factor beside the strided positional
/// convolution, the padded row's windows kept where any frame is, widened back and zero-padded;
/// the CTC head, the base model without a projection, the sequence classifier.
#[test]
fn sew_matches_transformers() {
    for name in ["sew_ctc", "sew_base", "sew_cls"] {
        check(name);
    }
}

/// An x-vector head refuses clips too short for its TDNN layers' statistics, and a WavLM config
/// whose buckets miss the table fails as transformers' lookup does.
#[test]
fn xvector_and_bucket_errors() {
    let m = model("wavlm_xvector");
    // 160 samples give 7 frames: the TDNN layers span 7, leaving one.
    let err = error(&m, &[("input_values", Tensor::zeros([1, 160], DType::F32).unwrap())]);
    assert!(err.contains("at least 8 frames") && err.contains("got 7"), "{err}");
    // 120 kept samples give 5 frames, of which transformers counts 4 off: one left, refused.
    let mut mask = vec![1i64; 800];
    mask[400 + 120..].fill(0);
    let values = Tensor::zeros([2, 400], DType::F32).unwrap();
    let err =
        error(&m, &[("input_values", values), ("attention_mask", Tensor::from_vec(mask, [2, 400]).unwrap())]);
    assert!(err.contains("row 1 keeps 5 frames"), "{err}");

    let dir = fixture("wavlm_base");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    cfg["max_bucket_distance"] = serde_json::json!(4);
    let cfg = Config::from_json_str(&cfg.to_string()).unwrap();
    let m = AutoModel::load(&cfg, &Weights::load(&dir, None).unwrap()).unwrap();
    let (inputs, _) = golden("wavlm_base");
    let named = BTreeMap::from([("input_values".to_string(), inputs["input_values"].clone())]);
    let err = m.forward_named(&named, false).unwrap_err().to_string();
    assert!(err.contains("max_bucket_distance (4)") && err.contains("outside"), "{err}");
}

fn model(name: &str) -> AutoModel {
    let dir = fixture(name);
    AutoModel::load(&Config::load(&dir).unwrap(), &Weights::load(&dir, None).unwrap()).unwrap()
}

fn error(model: &AutoModel, inputs: &[(&str, Tensor)]) -> String {
    let named: BTreeMap<String, Tensor> = inputs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    model.forward_named(&named, false).unwrap_err().to_string()
}

/// Without `attention_mask` every frame is attended to (the first row's golden, which has no
/// padding, is reproduced alone); bad inputs are errors naming them.
#[test]
fn speech_inputs() {
    let m = model("wav2vec2_ctc");
    let (inputs, expected) = golden("wav2vec2_ctc");
    let first = inputs["input_values"].narrow(0, 0, 1).unwrap();
    let named = BTreeMap::from([("input_values".to_string(), first)]);
    let out = m.forward_named(&named, false).unwrap();
    let want = expected["logits"].narrow(0, 0, 1).unwrap();
    common::assert_close("unmasked row", &out[0].1, &want, 1e-4, 1e-4);

    let values = Tensor::zeros([1, 400], DType::F32).unwrap();
    let err = error(&m, &[("input_values", Tensor::zeros([1, 400], DType::I64).unwrap())]);
    assert!(err.contains("input_values") && err.contains("float"), "{err}");
    let err = error(&m, &[("input_values", Tensor::zeros([1, 12], DType::F32).unwrap())]);
    assert!(err.contains("12 samples"), "{err}");
    let err = error(&m, &[("input_values", Tensor::zeros([400], DType::F32).unwrap())]);
    assert!(err.contains("[batch, samples]"), "{err}");
    let err = error(
        &m,
        &[("input_values", values.clone()), ("attention_mask", Tensor::ones([1, 300], DType::I64).unwrap())],
    );
    assert!(err.contains("attention_mask") && err.contains("[1, 400]"), "{err}");
    let mut short = vec![0i64; 400];
    short[..5].fill(1);
    let err = error(
        &m,
        &[("input_values", values.clone()), ("attention_mask", Tensor::from_vec(short, [1, 400]).unwrap())],
    );
    assert!(err.contains("keeps 5 samples"), "{err}");
    let twos = Tensor::full([1, 400], 2i64, DType::I64).unwrap();
    let err = error(&m, &[("input_values", values.clone()), ("attention_mask", twos)]);
    assert!(err.contains("ones and zeros"), "{err}");
    // An empty batch runs to empty outputs.
    let empty = BTreeMap::from([("input_values".to_string(), Tensor::zeros([0, 400], DType::F32).unwrap())]);
    let out = m.forward_named(&empty, false).unwrap();
    assert_eq!(out[0].1.dims(), [0, 19, 12]);
    let err = error(&m, &[("input_ids", Tensor::zeros([1, 4], DType::I64).unwrap())]);
    assert!(err.contains("input_ids"), "{err}");
}

/// Configurations it does not run are refused by name.
#[test]
fn unsupported_speech_configs() {
    let dir = fixture("wav2vec2_ctc");
    let weights = Weights::load(&dir, None).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    for (key, value, says) in [
        ("add_adapter", serde_json::json!(true), "add_adapter"),
        ("adapter_attn_dim", serde_json::json!(16), "adapter_attn_dim"),
        ("feat_extract_norm", serde_json::json!("batch"), "feat_extract_norm"),
        ("conv_kernel", serde_json::json!([10, 3]), "conv_kernel"),
        ("num_conv_pos_embedding_groups", serde_json::json!(3), "num_conv_pos_embedding_groups"),
    ] {
        let mut j = json.clone();
        j[key] = value;
        let cfg = Config::from_json_str(&j.to_string()).unwrap();
        let err = AutoModel::load(&cfg, &weights).unwrap_err().to_string();
        assert!(err.contains(says), "{key}: {err}");
    }
}

/// Transcription from WAV files: the feature extractor's `input_values` (normalised per clip,
/// padded, with the attention mask where `preprocessor_config.json` asks for one), the CTC head's
/// ids at every frame and the CTC tokenizer's text equal transformers' processor and
/// `batch_decode`, through the library and through `generate --audio`.
#[test]
fn ctc_transcription_from_wav_files() {
    use oxtorch_hf_import::audio::{read_wav, RawAudioFeatureExtractor};
    use oxtorch_hf_import::tokenizer::CtcTokenizer;
    for name in ["wav2vec2_ctc", "wav2vec2_ctc_stable"] {
        let dir = fixture(name);
        let golden = common::read_all(&dir.join("transcribe.safetensors"));
        let texts: Vec<String> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("transcribe.json")).unwrap()).unwrap();
        let clips: Vec<_> = (0..2).map(|i| dir.join(format!("clip{i}.wav"))).collect();
        let extractor = RawAudioFeatureExtractor::from_model_dir(&dir).unwrap();
        let samples: Vec<Vec<f32>> = clips.iter().map(|c| read_wav(c).unwrap().samples).collect();
        let (values, mask) = extractor.batch(&samples).unwrap();
        common::assert_close(&format!("{name} input_values"), &values, &golden["input_values"], 1e-5, 1e-5);
        match (&mask, golden.get("attention_mask")) {
            (Some(m), Some(want)) => {
                assert_eq!(
                    m.to_vec2::<i64>().unwrap(),
                    want.to_dtype(DType::I64).unwrap().to_vec2::<i64>().unwrap()
                )
            }
            (None, None) => {}
            (m, want) => panic!("{name}: attention mask {m:?}, want {want:?}"),
        }
        let AutoModel::Wav2Vec2(m) = model(name) else { panic!("{name} is not a wav2vec 2.0 model") };
        let ids = m.ctc_ids(&values, mask.as_ref()).unwrap();
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert_eq!(ids.to_vec2::<i64>().unwrap(), want, "{name}: ids");
        let tok = CtcTokenizer::from_model_dir(&dir).unwrap();
        let got: Vec<String> = want.iter().map(|row| tok.decode(row)).collect();
        assert_eq!(got, texts, "{name}: text");

        let mut args = vec!["generate".to_string(), dir.display().to_string()];
        for c in &clips {
            args.extend(["--audio".to_string(), c.display().to_string()]);
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hf-import")).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let printed: Vec<String> =
            String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
        assert_eq!(printed, texts, "{name}: generate --audio");
    }
    // A base model has no CTC head to transcribe with.
    let AutoModel::Wav2Vec2(base) = model("wav2vec2_base") else { panic!() };
    let err = base.ctc_ids(&Tensor::zeros([1, 400], DType::F32).unwrap(), None).unwrap_err().to_string();
    assert!(err.contains("CTC"), "{err}");
}

/// The Audio Spectrogram Transformer: overlapping patches of a spectrogram, the class and
/// distillation tokens, the base model's `pooler_output` (their mean) and the audio classifier; a
/// spectrogram of another shape than the positions were made for is refused by name.
#[test]
fn audio_spectrogram_transformer() {
    check("ast");
    check("ast_cls");
    let m = model("ast_cls");
    let err = error(&m, &[("input_values", Tensor::zeros([1, 24, 10], DType::F32).unwrap())]);
    assert!(err.contains("[batch, 20, 10]"), "{err}");
    let err = error(
        &m,
        &[
            ("input_values", Tensor::zeros([1, 20, 10], DType::F32).unwrap()),
            ("attention_mask", Tensor::ones([1, 20], DType::I64).unwrap()),
        ],
    );
    assert!(err.contains("attention_mask"), "{err}");
}
