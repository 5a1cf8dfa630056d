//! The neural-network kernels: convolutions, pooling, resampling, embedding, normalisation,
//! attention, losses and dropout.

use oxtorch_tensor::{manual_seed, Tensor};

use crate::common::*;

/// The `convolutions` cases.
pub fn convolutions_cases() -> Vec<Case> {
    vec![
        case("conv1d", vec![smooth(&[2, 2, 7], 1), smooth(&[3, 2, 3], 2), smooth(&[3], 3)], |x| {
            x[0].conv1d(&x[1], Some(&x[2]), &[1], 0, &[1], 1)
        }),
        case("conv1d_stride_pad_dilation", vec![smooth(&[1, 2, 9], 4), smooth(&[2, 2, 3], 5)], |x| {
            x[0].conv1d(&x[1], None, &[2], 2, &[2], 1)
        }),
        case("conv1d_groups", vec![smooth(&[1, 4, 6], 6), smooth(&[4, 2, 2], 7), smooth(&[4], 8)], |x| {
            x[0].conv1d(&x[1], Some(&x[2]), &[1], 1, &[1], 2)
        }),
        case("conv2d", vec![smooth(&[1, 2, 5, 5], 9), smooth(&[3, 2, 3, 3], 10), smooth(&[3], 11)], |x| {
            x[0].conv2d(&x[1], Some(&x[2]), &[1, 1], 0, &[1, 1], 1)
        }),
        case("conv2d_stride_pad", vec![smooth(&[2, 2, 5, 6], 12), smooth(&[2, 2, 3, 2], 13)], |x| {
            x[0].conv2d(&x[1], None, &[2, 3], [1, 2], &[1, 1], 1)
        }),
        case(
            "conv2d_dilation_groups",
            vec![smooth(&[1, 4, 6, 6], 14), smooth(&[2, 2, 2, 2], 15), smooth(&[2], 16)],
            |x| x[0].conv2d(&x[1], Some(&x[2]), &[1, 1], 1, &[2, 2], 2),
        ),
        case("conv2d_depthwise", vec![smooth(&[1, 3, 4, 4], 17), smooth(&[3, 1, 3, 3], 18)], |x| {
            x[0].conv2d(&x[1], None, &[1, 1], 1, &[1, 1], 3)
        }),
        case("conv2d_same", vec![smooth(&[1, 1, 4, 5], 19), smooth(&[2, 1, 2, 3], 20)], |x| {
            x[0].conv2d(&x[1], None, &[1, 1], "same".parse::<oxtorch_tensor::Padding>()?, &[1, 1], 1)
        }),
        case(
            "conv3d",
            vec![smooth(&[1, 2, 3, 4, 4], 21), smooth(&[2, 2, 2, 2, 2], 22), smooth(&[2], 23)],
            |x| x[0].conv3d(&x[1], Some(&x[2]), &[1, 2, 1], [1, 0, 1], &[1, 1, 2], 1),
        ),
        case("conv3d_groups", vec![smooth(&[1, 2, 3, 3, 3], 24), smooth(&[2, 1, 2, 2, 2], 25)], |x| {
            x[0].conv3d(&x[1], None, &[1, 1, 1], 0, &[1, 1, 1], 2)
        }),
        case("conv2d_strided_input", vec![smooth(&[1, 4, 4, 2], 36), smooth(&[2, 2, 2, 2], 37)], |x| {
            x[0].permute([0, 3, 1, 2])?.conv2d(&x[1], None, &[1, 1], 0, &[1, 1], 1)
        }),
        case(
            "conv_transpose1d",
            vec![smooth(&[2, 2, 4], 26), smooth(&[2, 3, 3], 27), smooth(&[3], 28)],
            |x| x[0].conv_transpose1d(&x[1], Some(&x[2]), &[2], &[1], &[1], 1, &[1]),
        ),
        case("conv_transpose1d_groups_dilation", vec![smooth(&[1, 4, 3], 29), smooth(&[4, 1, 2], 30)], |x| {
            x[0].conv_transpose1d(&x[1], None, &[1], &[0], &[0], 2, &[2])
        }),
        case(
            "conv_transpose2d",
            vec![smooth(&[1, 2, 3, 3], 31), smooth(&[2, 2, 3, 3], 32), smooth(&[2], 33)],
            |x| x[0].conv_transpose2d(&x[1], Some(&x[2]), &[2, 2], &[1, 1], &[1, 0], 1, &[1, 1]),
        ),
        case(
            "conv_transpose3d",
            vec![smooth(&[1, 2, 2, 2, 3], 38), smooth(&[2, 1, 2, 2, 2], 39), smooth(&[1], 40)],
            |x| x[0].conv_transpose3d(&x[1], Some(&x[2]), &[2, 1, 1], &[0, 0, 1], &[1, 0, 0], 1, &[1, 1, 1]),
        ),
        case("conv_transpose2d_groups", vec![smooth(&[1, 4, 3, 2], 34), smooth(&[4, 1, 2, 2], 35)], |x| {
            x[0].conv_transpose2d(&x[1], None, &[1, 2], &[0, 1], &[0, 1], 2, &[1, 1])
        }),
    ]
}

#[test]
fn convolutions() {
    run_family("convolutions", Check::Grad);
}

/// The `pooling` cases.
pub fn pooling_cases() -> Vec<Case> {
    let x3 = || distinct(&[1, 2, 7], 1);
    let x4 = || distinct(&[1, 2, 5, 5], 2);
    vec![
        case("max_pool1d", vec![x3()], |x| x[0].max_pool1d(&[2], None, &[0], &[1], false)),
        case("max_pool1d_stride_pad_dilation", vec![x3()], |x| {
            x[0].max_pool1d(&[3], Some(&[2]), &[1], &[2], false)
        }),
        case("max_pool1d_ceil", vec![x3()], |x| x[0].max_pool1d(&[2], Some(&[2]), &[0], &[1], true)),
        case("max_pool2d", vec![x4()], |x| x[0].max_pool2d(&[2, 2], None, &[0, 0], &[1, 1], false)),
        case("max_pool2d_overlapping", vec![x4()], |x| {
            x[0].max_pool2d(&[3, 2], Some(&[1, 2]), &[1, 1], &[1, 1], true)
        }),
        case_n("max_pool2d_with_indices", vec![x4()], |x| {
            let (v, i) = x[0].max_pool_nd_with_indices(2, &[2, 2], Some(&[2, 1]), &[1, 0], &[1, 1], false)?;
            Ok(vec![v, i])
        }),
        case("avg_pool1d", vec![x3()], |x| x[0].avg_pool1d(&[3], None, &[0], false, true)),
        case("avg_pool1d_pad_ceil", vec![x3()], |x| x[0].avg_pool1d(&[3], Some(&[2]), &[1], true, true)),
        case("avg_pool1d_exclude_pad", vec![x3()], |x| x[0].avg_pool1d(&[3], Some(&[2]), &[1], true, false)),
        case("avg_pool2d", vec![x4()], |x| x[0].avg_pool2d(&[2, 2], None, &[0, 0], false, true, None)),
        case("avg_pool2d_pad_exclude", vec![x4()], |x| {
            x[0].avg_pool2d(&[3, 3], Some(&[2, 2]), &[1, 1], false, false, None)
        }),
        case("avg_pool2d_ceil", vec![x4()], |x| {
            x[0].avg_pool2d(&[2, 2], Some(&[2, 2]), &[1, 0], true, true, None)
        }),
        case("avg_pool2d_ceil_exclude", vec![x4()], |x| {
            x[0].avg_pool2d(&[2, 3], Some(&[2, 2]), &[1, 1], true, false, None)
        }),
        case("avg_pool2d_divisor", vec![x4()], |x| {
            x[0].avg_pool2d(&[2, 2], Some(&[1, 2]), &[0, 1], false, true, Some(3))
        }),
        case("adaptive_avg_pool1d", vec![x3()], |x| x[0].adaptive_avg_pool1d(3)),
        case("adaptive_avg_pool2d", vec![x4()], |x| x[0].adaptive_avg_pool2d(&[2, 3])),
        case("adaptive_max_pool1d", vec![x3()], |x| x[0].adaptive_max_pool1d(3)),
        case("max_pool3d", vec![distinct(&[1, 1, 3, 4, 4], 3)], |x| {
            x[0].max_pool3d(&[2, 2, 2], Some(&[1, 2, 2]), &[0, 1, 0], &[1, 1, 1], false)
        }),
        case("adaptive_max_pool2d", vec![x4()], |x| x[0].adaptive_max_pool2d(&[3, 2])),
    ]
}

#[test]
fn pooling() {
    run_family("pooling", Check::Grad);
}

/// The `interpolation` cases.
pub fn interpolation_cases() -> Vec<Case> {
    let x4 = || smooth(&[1, 2, 3, 4], 1);
    let mut cases = vec![
        case("nearest_size", vec![x4()], |x| x[0].interpolate(Some(&[5, 7]), None, "nearest", None)),
        case("nearest_scale", vec![x4()], |x| x[0].interpolate(None, Some(&[2.0, 1.5]), "nearest", None)),
        case("nearest_down", vec![x4()], |x| x[0].interpolate(Some(&[2, 3]), None, "nearest", None)),
        case("nearest_exact", vec![x4()], |x| x[0].interpolate(Some(&[5, 3]), None, "nearest-exact", None)),
        case("nearest_1d", vec![smooth(&[1, 2, 4], 2)], |x| {
            x[0].interpolate(Some(&[7]), None, "nearest", None)
        }),
        case("area", vec![x4()], |x| x[0].interpolate(Some(&[2, 3]), None, "area", None)),
    ];
    for align in [false, true] {
        let tag = if align { "align" } else { "noalign" };
        cases.push(case(&format!("linear_{tag}"), vec![smooth(&[1, 2, 4], 3)], move |x| {
            x[0].interpolate(Some(&[7]), None, "linear", Some(align))
        }));
        cases.push(case(&format!("bilinear_up_{tag}"), vec![x4()], move |x| {
            x[0].interpolate(Some(&[5, 6]), None, "bilinear", Some(align))
        }));
        cases.push(case(&format!("bilinear_down_scale_{tag}"), vec![x4()], move |x| {
            x[0].interpolate(None, Some(&[0.7, 0.6]), "bilinear", Some(align))
        }));
        cases.push(case(&format!("bicubic_up_{tag}"), vec![x4()], move |x| {
            x[0].interpolate(Some(&[6, 5]), None, "bicubic", Some(align))
        }));
        cases.push(case(&format!("bicubic_scale_{tag}"), vec![x4()], move |x| {
            x[0].interpolate(None, Some(&[1.5, 0.75]), "bicubic", Some(align))
        }));
        cases.push(case(&format!("trilinear_{tag}"), vec![smooth(&[1, 1, 2, 3, 2], 4)], move |x| {
            x[0].interpolate(Some(&[3, 4, 3]), None, "trilinear", Some(align))
        }));
    }
    // Antialiased downsampling (windows wider than the plain kernels').
    for (mode, align) in [("bilinear", false), ("bilinear", true), ("bicubic", false), ("lanczos", false)] {
        let tag = if align { "align" } else { "noalign" };
        cases.push(case(&format!("{mode}_antialias_{tag}"), vec![smooth(&[1, 2, 7, 5], 5)], move |x| {
            x[0].interpolate_antialias(Some(&[3, 2]), None, mode, Some(align))
        }));
    }
    cases
}

#[test]
fn interpolation() {
    run_family("interpolation", Check::Grad);
}

/// The `embedding` cases.
pub fn embedding_cases() -> Vec<Case> {
    vec![
        case("embedding", vec![smooth(&[5, 3], 1)], move |x| idx().embedding(&x[0], None)),
        case("embedding_1d", vec![smooth(&[5, 2], 2)], |x| ix(&[3, 3, 1], &[3]).embedding(&x[0], None)),
        case("one_hot_matmul", vec![smooth(&[4, 2], 3)], |x| {
            ix(&[1, 3], &[2]).one_hot(4)?.to_dtype(oxtorch_tensor::DType::F64)?.matmul(&x[0])
        }),
    ]
}

#[test]
fn embedding() {
    run_family("embedding", Check::Grad);
    // padding_idx: the padding row gets zero gradient although the forward reads it (torch).
    for p in [2i64, -3] {
        let w = smooth(&[5, 3], 4);
        let y = idx().embedding(&w, Some(p)).unwrap();
        let expect_rows = no_pad_rows(&idx(), 2);
        let got = grad_of(&w, &y);
        assert_close(&got, &expect_rows, &format!("embedding padding_idx={p}"));
        // forward unchanged by the padding index
        assert_close(
            &y.to_f64_vec().unwrap(),
            &idx().embedding(&w, None).unwrap().to_f64_vec().unwrap(),
            "forward",
        );
    }
}

/// The embedding indices of the cases.
fn idx() -> Tensor {
    ix(&[0, 2, 4, 2, 1, 0], &[2, 3])
}

/// The gradient of `embedding(idx, w).sum()` w.r.t. a `[5, 3]` weight with row `pad` masked.
fn no_pad_rows(idx: &Tensor, pad: i64) -> Vec<f64> {
    let mut g = vec![0.0; 15];
    for &i in &idx.to_vec::<i64>().unwrap() {
        if i != pad {
            for c in 0..3 {
                g[i as usize * 3 + c] += 1.0;
            }
        }
    }
    g
}

/// The `normalization` cases.
pub fn normalization_cases() -> Vec<Case> {
    vec![
        case("layer_norm", vec![smooth(&[2, 3, 4], 1), smooth(&[4], 2), smooth(&[4], 3)], |x| {
            x[0].layer_norm(&[4], Some(&x[1]), Some(&x[2]), 1e-5)
        }),
        case("layer_norm_2d_shape", vec![smooth(&[2, 3, 4], 4), smooth(&[3, 4], 5)], |x| {
            x[0].layer_norm(&[3, 4], Some(&x[1]), None, 1e-5)
        }),
        case("layer_norm_plain", vec![smooth(&[3, 5], 6)], |x| x[0].layer_norm(&[5], None, None, 1e-5)),
        case("layer_norm_strided", vec![smooth(&[4, 3], 22), smooth(&[3], 23)], |x| {
            x[0].t()?.layer_norm(&[4], None, None, 1e-5)?.mul(&x[1].unsqueeze(1)?)
        }),
        case("rms_norm", vec![smooth(&[2, 3, 4], 7), smooth(&[4], 8)], |x| {
            x[0].rms_norm(&[4], Some(&x[1]), Some(1e-6))
        }),
        case("rms_norm_plain", vec![smooth(&[3, 4], 9)], |x| x[0].rms_norm(&[3, 4], None, None)),
        case("group_norm", vec![smooth(&[2, 4, 3], 10), smooth(&[4], 11), smooth(&[4], 12)], |x| {
            x[0].group_norm(2, Some(&x[1]), Some(&x[2]), 1e-5)
        }),
        case("group_norm_4d", vec![smooth(&[1, 6, 2, 2], 13)], |x| x[0].group_norm(3, None, None, 1e-5)),
        case("batch_norm_train", vec![smooth(&[4, 3, 2], 14), smooth(&[3], 15), smooth(&[3], 16)], |x| {
            let (rm, rv) = (
                Tensor::zeros([3], oxtorch_tensor::DType::F64)?,
                Tensor::ones([3], oxtorch_tensor::DType::F64)?,
            );
            x[0].batch_norm(Some(&rm), Some(&rv), Some(&x[1]), Some(&x[2]), true, 0.1, 1e-5)
        }),
        case("batch_norm_train_no_stats", vec![smooth(&[3, 2, 2, 2], 17)], |x| {
            x[0].batch_norm(None, None, None, None, true, 0.1, 1e-5)
        }),
        case("batch_norm_eval", vec![smooth(&[4, 3], 18), smooth(&[3], 19), smooth(&[3], 20)], |x| {
            let rm = t(&[0.1, -0.2, 0.3], &[3]);
            let rv = t(&[0.5, 1.5, 2.0], &[3]);
            x[0].batch_norm(Some(&rm), Some(&rv), Some(&x[1]), Some(&x[2]), false, 0.1, 1e-5)
        }),
    ]
}

#[test]
fn normalization() {
    run_family("normalization", Check::Grad);
}

/// The `attention` cases.
pub fn attention_cases() -> Vec<Case> {
    let q = |s| smooth(&[1, 2, 3, 4], s);
    let kv = |s| smooth(&[1, 2, 5, 4], s);
    vec![
        case("sdpa", vec![q(1), kv(2), kv(3)], |x| {
            x[0].scaled_dot_product_attention(&x[1], &x[2], None, 0.0, false, None, false)
        }),
        case("sdpa_bool_mask", vec![q(4), kv(5), kv(6)], |x| {
            let m = mask(
                &[
                    true, false, true, true, false, true, true, false, false, true, false, true, true, true,
                    true,
                ],
                &[3, 5],
            );
            x[0].scaled_dot_product_attention(&x[1], &x[2], Some(&m), 0.0, false, None, false)
        }),
        case("sdpa_float_mask", vec![q(7), kv(8), kv(9), smooth(&[3, 5], 10)], |x| {
            x[0].scaled_dot_product_attention(&x[1], &x[2], Some(&x[3]), 0.0, false, Some(0.3), false)
        }),
        case(
            "sdpa_causal",
            vec![smooth(&[1, 2, 4, 3], 11), smooth(&[1, 2, 4, 3], 12), smooth(&[1, 2, 4, 2], 13)],
            |x| x[0].scaled_dot_product_attention(&x[1], &x[2], None, 0.0, true, None, false),
        ),
        case(
            "sdpa_gqa",
            vec![smooth(&[1, 4, 3, 2], 14), smooth(&[1, 2, 3, 2], 15), smooth(&[1, 2, 3, 2], 16)],
            |x| x[0].scaled_dot_product_attention(&x[1], &x[2], None, 0.0, true, None, true),
        ),
        case("sdpa_3d", vec![smooth(&[2, 3, 4], 17), smooth(&[2, 2, 4], 18), smooth(&[2, 2, 3], 19)], |x| {
            x[0].scaled_dot_product_attention(&x[1], &x[2], None, 0.0, false, Some(0.5), false)
        }),
    ]
}

#[test]
fn attention() {
    run_family("attention", Check::Grad);
}

/// The `losses` cases.
pub fn losses_cases() -> Vec<Case> {
    let target = || ix(&[2, 0, 3, 1], &[4]);
    let w = || t(&[0.5, 1.5, 1.0, 2.0], &[4]);
    let mut cases = Vec::new();
    for red in ["mean", "sum", "none"] {
        cases.push(case(&format!("cross_entropy_{red}"), vec![smooth(&[4, 4], 1)], move |x| {
            x[0].cross_entropy(&target(), None, -100, red, 0.0)
        }));
        cases.push(case(&format!("cross_entropy_weight_ignore_{red}"), vec![smooth(&[4, 4], 2)], move |x| {
            x[0].cross_entropy(&target(), Some(&w()), 3, red, 0.0)
        }));
        cases.push(case(&format!("cross_entropy_smoothing_{red}"), vec![smooth(&[4, 4], 3)], move |x| {
            x[0].cross_entropy(&target(), Some(&w()), 0, red, 0.1)
        }));
        cases.push(case(
            &format!("cross_entropy_probs_{red}"),
            vec![smooth(&[4, 4], 4), uniform(&[4, 4], 0.0, 1.0, 5)],
            move |x| x[0].cross_entropy(&x[1].softmax(1, None)?, None, -100, red, 0.0),
        ));
        cases.push(case(&format!("nll_loss_{red}"), vec![smooth(&[4, 4], 6)], move |x| {
            x[0].log_softmax(1, None)?.nll_loss(&target(), Some(&w()), 1, red)
        }));
    }
    cases.push(case(
        "cross_entropy_probs_smoothing_weight",
        vec![smooth(&[3, 4], 7), uniform(&[3, 4], 0.0, 1.0, 8)],
        move |x| x[0].cross_entropy(&x[1], Some(&w()), -100, "mean", 0.2),
    ));
    cases.push(case("cross_entropy_spatial", vec![smooth(&[2, 3, 2], 9)], |x| {
        x[0].cross_entropy(&ix(&[0, 2, 1, 1], &[2, 2]), None, -100, "mean", 0.05)
    }));
    cases.push(case("cross_entropy_unbatched", vec![smooth(&[4], 10)], |x| {
        x[0].cross_entropy(&ix(&[2], &[]), None, -100, "mean", 0.0)
    }));
    cases.push(case("nll_loss_raw", vec![smooth(&[4, 4], 11)], move |x| {
        x[0].nll_loss(&target(), None, -100, "mean")
    }));
    cases
}

#[test]
fn losses() {
    run_family("losses", Check::Grad);
}

/// The `dropout` cases.
pub fn dropout_cases() -> Vec<Case> {
    vec![
        case("dropout", vec![smooth(&[4, 5], 1)], |x| {
            manual_seed(7);
            x[0].dropout(0.3, true)
        }),
        case("dropout_eval", vec![smooth(&[4, 5], 2)], |x| x[0].dropout(0.3, false)),
        case("dropout_all", vec![smooth(&[3], 3)], |x| x[0].dropout(1.0, true)),
    ]
}

#[test]
fn dropout() {
    let _rng = RNG_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    run_family("dropout", Check::Grad);
}
