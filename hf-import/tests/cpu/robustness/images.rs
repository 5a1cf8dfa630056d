//! Hostile `pixel_values` for every image model: images of one pixel, one row, empty, of other
//! sizes than configured, odd sides, a batch of none, the wrong channels, rank or dtype, NaN
//! and half precision. Each call must return `Ok` or a clean `Err`.

use super::*;

/// One fixture of each image family and head.
const IMAGE_FIXTURES: &[&str] = &[
    "vit",
    "vit_cls",
    "deit_teacher",
    "dinov2",
    "dinov2_reg_cls",
    "resnet_cls",
    "convnext",
    "convnextv2_cls",
    "swin",
    "swinv2_cls",
    "beit_cls_shared",
    "data2vec_vision_cls",
    "segformer_seg",
    "dinov3",
    "depth_anything",
    "depth_anything_metric",
    "dpt",
    "dpt_depth",
    "dpt_seg",
    "dpt_hybrid",
    "dpt_hybrid_depth",
    "dpt_dinov2",
    "mobilenet_v1_cls",
    "mobilenet_v2_cls",
    "mobilenet_v2_seg",
    "mobilevit",
    "mobilevit_cls",
    "mobilevit_seg",
    "vit_mae",
    "vit_mae_pretrain",
    "cvt",
    "cvt_cls",
    "levit",
    "levit_cls",
    "levit_teacher",
    "yolos",
    "yolos_det",
    "mobilevitv2",
    "mobilevitv2_cls",
    "mobilevitv2_seg",
    "pvt_v2",
    "pvt_v2_cls",
    "efficientnet_cls",
    "efficientnet",
    "regnet_cls",
    "regnet",
    "ijepa_cls",
    "vit_msn_cls",
    "glpn",
    "glpn_depth",
    "bit",
    "bit_cls",
    "poolformer_cls",
];

/// `pixel_values` of `shape` filled with `value` (a ramp for `None`) in `dtype`.
fn pixels(shape: &[usize], value: Option<f32>, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|i| value.unwrap_or(((i % 17) as f32 - 8.0) / 8.0)).collect();
    Tensor::from_vec(data, shape.to_vec()).unwrap().to_dtype(dtype).unwrap()
}

/// The hostile cases for a model of `c` channels.
fn image_cases(c: usize) -> Vec<(String, Tensor)> {
    let f = DType::F32;
    let mut cases: Vec<(String, Tensor)> = [
        [1, c, 1, 1],
        [1, c, 1, 40],
        [1, c, 40, 1],
        [1, c, 3, 17],
        [2, c, 5, 5],
        [1, c, 17, 23],
        [1, c, 64, 48],
        [1, c, 0, 8],
        [0, c, 16, 16],
        [1, c + 1, 16, 16],
    ]
    .into_iter()
    .map(|s| (format!("{s:?}"), pixels(&s, None, f)))
    .collect();
    cases.push(("rank 3".into(), pixels(&[c, 16, 16], None, f)));
    cases.push(("int64".into(), pixels(&[1, c, 16, 16], Some(1.0), DType::I64)));
    cases.push(("NaN".into(), pixels(&[1, c, 16, 16], Some(f32::NAN), f)));
    cases.push(("bf16".into(), pixels(&[1, c, 16, 16], None, DType::BF16)));
    cases.push(("f16 infinities".into(), pixels(&[1, c, 16, 16], Some(f32::INFINITY), DType::F16)));
    cases
}

/// The image channels `cfg` names (at the top, or in its backbone's config).
fn channels(cfg: &Config) -> usize {
    let nested = cfg.get("backbone_config").and_then(|b| b.get("num_channels"));
    nested.or(cfg.get("num_channels")).and_then(Value::as_u64).unwrap_or(3) as usize
}

#[test]
fn hostile_pixel_values_never_panic() {
    let mut s = Sweep::default();
    for name in IMAGE_FIXTURES {
        let dir = fixture(name);
        let loaded = s.call(name, "load config and model", &[], move || {
            let cfg = Config::load(&dir)?;
            let model = AutoModel::load(&cfg, &Weights::load(&dir, None)?)?;
            Ok((channels(&cfg), Arc::new(model)))
        });
        let Some((c, model)) = loaded else { continue };
        for (label, pixels) in image_cases(c) {
            let m = model.clone();
            let inputs = BTreeMap::from([("pixel_values".to_string(), pixels)]);
            s.call(name, &format!("forward_named(pixel_values {label})"), &[], move || {
                m.forward_named(&inputs, true)
            });
        }
    }
    s.finish("robustness image inputs", IMAGE_FIXTURES.len() * 15);
}
