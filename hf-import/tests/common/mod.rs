//! Helpers shared by the hf-import tests: fixture paths, golden files, torch's `allclose`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use oxtorch_hf_import::weights::read_safetensors;
use oxtorch_hf_import::{AutoModel, CausalLm, Config, PromptImages, PromptMedia, Weights};
use oxtorch_tensor::{DType, Device, Tensor};

/// The folder of a fixture made by `make_fixtures.py`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join(name)
}

/// Every tensor of a safetensors file.
pub fn read_all(path: &std::path::Path) -> BTreeMap<String, Tensor> {
    let mut map = BTreeMap::new();
    read_safetensors(path, |n, t| {
        map.insert(n, t);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    map
}

/// The `__metadata__` of a safetensors file (settings a fixture script recorded), each value parsed
/// as JSON.
pub fn read_metadata(path: &std::path::Path) -> BTreeMap<String, serde_json::Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta = meta.metadata().clone().unwrap_or_default();
    meta.into_iter().map(|(k, v)| (k, serde_json::from_str(&v).unwrap())).collect()
}

/// The golden file of a fixture split into its inputs and transformers' outputs.
pub fn golden(name: &str) -> (BTreeMap<String, Tensor>, BTreeMap<String, Tensor>) {
    let all = read_all(&fixture(name).join("expected.safetensors"));
    all.into_iter().partition(|(k, _)| INPUT_NAMES.contains(&k.as_str()))
}

/// The names of a golden's inputs (the rest are outputs).
pub const INPUT_NAMES: [&str; 23] = [
    "input_ids",
    "input_values",
    "feature_attention_mask",
    "aspect_ratio_ids",
    "aspect_ratio_mask",
    "cross_attention_mask",
    "attention_mask",
    "token_type_ids",
    "pixel_values",
    "image_sizes",
    "batch_num_images",
    "pixel_attention_mask",
    "image_grid_thw",
    "mm_token_type_ids",
    "pixel_values_videos",
    "video_grid_thw",
    "second_per_grid_ts",
    "spatial_shapes",
    "decoder_input_ids",
    "decoder_attention_mask",
    "input_features",
    "mask_time_indices",
    "noise",
];

/// Panics unless `|a - b| <= atol + rtol |b|` everywhere and the shapes agree; returns the largest
/// absolute difference.
pub fn assert_close(what: &str, actual: &Tensor, expected: &Tensor, atol: f64, rtol: f64) -> f64 {
    assert_eq!(actual.dims(), expected.dims(), "{what}: shape");
    let a = actual.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    let b = expected.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    let mut worst = 0.0f64;
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let d = (x - y).abs();
        assert!(d <= atol + rtol * y.abs(), "{what}: element {i}: {x} vs {y} (diff {d})");
        worst = worst.max(d);
    }
    worst
}

/// `xla:0`, or `None` (with a loud message, once) when `OXTORCH_PJRT_PLUGIN` is unset.
pub fn xla() -> Option<Device> {
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        static BANNER: std::sync::Once = std::sync::Once::new();
        BANNER.call_once(|| {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset, so the hf-import XLA tests did not run.\n\
                 !!! Run `export OXTORCH_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu.sh)` (scripts/test.sh does).\n"
            );
        });
        return None;
    }
    Some(Device::Xla(0))
}

/// Loads fixture `name` (cast to float32), runs it on the golden inputs and compares every output.
pub fn check(name: &str) {
    let dir = fixture(name);
    let cfg = Config::load(&dir).unwrap();
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    check_with(name, &cfg, &weights);
}

/// [`check`] at `tol` (atol and rtol) in place of 1e-4: for a fixture whose float32 outputs are
/// that sensitive to rounding, as transformers' own differ from its float64 ones (say so where
/// it is called, with the figures).
pub fn check_within(name: &str, tol: f64) {
    let dir = fixture(name);
    let weights = Weights::load(&dir, Some(DType::F32)).unwrap();
    check_at(name, &Config::load(&dir).unwrap(), &weights, tol);
}

/// Runs `cfg` + `weights` on the golden inputs of fixture `name` and compares every output.
pub fn check_with(name: &str, cfg: &Config, weights: &Weights) {
    check_at(name, cfg, weights, 1e-4);
}

/// [`check_with`] at `tol` (atol and rtol).
fn check_at(name: &str, cfg: &Config, weights: &Weights, tol: f64) {
    let model = AutoModel::load(cfg, weights).unwrap();
    let (inputs, expected) = golden(name);
    let outputs = model.forward_named(&inputs, true).unwrap();
    // An output under an input's name (Qwen2-Audio's `attention_mask`) echoes that input.
    let (echoed, outputs): (Vec<_>, Vec<_>) = outputs.into_iter().partition(|(k, _)| inputs.contains_key(k));
    for (key, actual) in &echoed {
        assert_close(&format!("{name} {key}"), actual, &inputs[key].to_dtype(DType::F32).unwrap(), 0.0, 0.0);
    }
    let names: Vec<_> = outputs.iter().map(|(k, _)| k.clone()).collect();
    let want: Vec<_> = expected.keys().cloned().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, want, "{name}: output names");
    let mut worst = 0.0f64;
    for (key, actual) in &outputs {
        worst = worst.max(assert_close(&format!("{name} {key}"), actual, &expected[key], tol, tol));
    }
    eprintln!("{name}: {} outputs, max abs diff {worst:.2e}", outputs.len());
}

/// What generation from a golden's prompts with images takes from `model` (a vision-language
/// model or Gemma 3): its language model and the prompts' media (the image features of the
/// golden's `pixel_values`, the attention blocks of its `token_type_ids` where it has them: Gemma 3's
/// images within the window, PaliGemma's prefix across it; Qwen's positions and deepstack rows).
pub struct ImagePrompt<'m> {
    pub lm: &'m CausalLm,
    pub media: PromptMedia,
}

impl<'m> ImagePrompt<'m> {
    pub fn of(model: &'m AutoModel, golden: &BTreeMap<String, Tensor>) -> Self {
        match model {
            AutoModel::VisionLanguage(m) => {
                ImagePrompt { lm: m, media: m.prompt_media(golden).unwrap().unwrap() }
            }
            AutoModel::Gemma3ForConditionalGeneration(m) => {
                let rows = m.image_rows(&golden["pixel_values"]).unwrap();
                let types = golden.get("token_type_ids");
                let blocks = types.map(|t| (m.attention_blocks(t).unwrap(), true));
                ImagePrompt {
                    lm: m,
                    media: PromptMedia { blocks, ..PromptMedia::new(m.image_token().unwrap(), rows) },
                }
            }
            _ => panic!("not a model that takes images: {model:?}"),
        }
    }

    /// The prompts' images as generation takes them.
    pub fn images(&self) -> PromptImages<'_> {
        self.media.as_prompt()
    }
}
