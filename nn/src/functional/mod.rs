//! `torch.nn.functional`: stateless ops written in tensor ops.

use oxtorch_tensor::{DType, Padding, Result, Tensor};

mod activations;
mod embedding_bag;
mod embedding_with;
mod fractional_max_pool;
mod grid_sample;
mod inplace_activations;
mod inplace_dropout;
mod interpolate_with;
mod linear_cross_entropy;
mod lp_pool;
mod mha;
mod normalize;
mod pool3d;
mod rnn_cells;
mod rnn_sequence;
mod shuffle;
mod stochastic;
mod unpool;

pub use activations::{
    hardshrink, logsigmoid, prelu, rrelu, softmin, softshrink, softsign, tanhshrink, threshold,
};
pub use embedding_bag::embedding_bag;
pub use embedding_with::{embedding_with, EmbeddingOptions};
pub use fractional_max_pool::{
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
};
pub use grid_sample::{affine_grid, grid_sample};
pub use inplace_activations::{celu_, elu_, hardtanh_, leaky_relu_, relu_, rrelu_, selu_, threshold_};
pub use inplace_dropout::{alpha_dropout_, dropout_, feature_alpha_dropout_};
pub use interpolate_with::{interpolate_with, InterpolateOptions};
pub use linear_cross_entropy::{linear_cross_entropy, LinearCrossEntropyOptions};
pub use lp_pool::{lp_pool1d, lp_pool2d, lp_pool3d};
pub use mha::{multi_head_attention_forward, MhaForwardOptions};
pub use normalize::{cosine_similarity, instance_norm, local_response_norm, normalize};
pub use pool3d::{
    adaptive_avg_pool3d, adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool3d, max_pool3d,
    max_pool3d_with_indices,
};
pub use rnn_cells::{gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell};
pub use rnn_sequence::{gru, lstm, rnn_relu, rnn_tanh};
pub use shuffle::{channel_shuffle, pixel_shuffle, pixel_unshuffle};
pub use stochastic::{alpha_dropout, feature_alpha_dropout, gumbel_softmax};
pub use unpool::{max_unpool1d, max_unpool2d, max_unpool3d};

pub use crate::loss::{
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cross_entropy, ctc_loss,
    gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss,
    multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, nll_loss, pairwise_distance,
    poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss,
};

/// `max(x, 0)`.
pub fn relu(x: &Tensor) -> Result<Tensor> {
    x.relu()
}

/// Logistic sigmoid.
pub fn sigmoid(x: &Tensor) -> Result<Tensor> {
    x.sigmoid()
}

/// Hyperbolic tangent.
pub fn tanh(x: &Tensor) -> Result<Tensor> {
    x.tanh()
}

/// Softmax along `dim` (one fused, numerically stable kernel); `dtype` casts the input first.
pub fn softmax(input: &Tensor, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
    input.softmax(dim, dtype)
}

/// Log-softmax along `dim` (fused); `dtype` casts the input first.
pub fn log_softmax(input: &Tensor, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
    input.log_softmax(dim, dtype)
}

/// `max(x, 0)` clipped at 6.
pub fn relu6(input: &Tensor) -> Result<Tensor> {
    input.relu6()
}

/// `x` for positive inputs, `negative_slope * x` otherwise (torch's default slope is 0.01).
pub fn leaky_relu(input: &Tensor, negative_slope: f64) -> Result<Tensor> {
    input.leaky_relu(negative_slope)
}

/// Exponential linear unit (torch's default `alpha` is 1.0).
pub fn elu(input: &Tensor, alpha: f64) -> Result<Tensor> {
    input.elu(alpha)
}

/// Scaled exponential linear unit.
pub fn selu(input: &Tensor) -> Result<Tensor> {
    input.selu()
}

/// Continuously differentiable ELU (torch's default `alpha` is 1.0).
pub fn celu(input: &Tensor, alpha: f64) -> Result<Tensor> {
    input.celu(alpha)
}

/// Gaussian error linear unit; `approximate` is `"none"` (exact, erf) or `"tanh"`.
pub fn gelu(input: &Tensor, approximate: &str) -> Result<Tensor> {
    input.gelu(approximate)
}

/// `x * sigmoid(x)`.
pub fn silu(input: &Tensor) -> Result<Tensor> {
    input.silu()
}

/// `x * tanh(softplus(x))`.
pub fn mish(input: &Tensor) -> Result<Tensor> {
    input.mish()
}

/// `log(1 + exp(beta * x)) / beta`, linear above `threshold` (torch's defaults: 1.0, 20.0).
pub fn softplus(input: &Tensor, beta: f64, threshold: f64) -> Result<Tensor> {
    input.softplus(beta, threshold)
}

/// Clamps to `[min_val, max_val]` (torch's defaults: -1.0, 1.0).
pub fn hardtanh(input: &Tensor, min_val: f64, max_val: f64) -> Result<Tensor> {
    input.hardtanh(min_val, max_val)
}

/// Piecewise-linear sigmoid.
pub fn hardsigmoid(input: &Tensor) -> Result<Tensor> {
    input.hardsigmoid()
}

/// `x * hardsigmoid(x)`.
pub fn hardswish(input: &Tensor) -> Result<Tensor> {
    input.hardswish()
}

/// Gated linear unit: the first half of `dim` times the sigmoid of the second half.
pub fn glu(input: &Tensor, dim: isize) -> Result<Tensor> {
    input.glu(dim)
}

/// `input @ weight.T + bias` (torch's `linear`).
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    input.linear(weight, bias)
}

/// `x1ᵀ A x2 + b` over the last dims: `input1 [..., in1]`, `input2 [..., in2]` (same leading
/// dims), `weight [out, in1, in2]`, `bias [out]` (torch's `bilinear`).
pub fn bilinear(input1: &Tensor, input2: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    if weight.rank() != 3 {
        return Err(oxtorch_tensor::Error::shape(format!(
            "bilinear(): weight must be 3-dimensional, got {}-D",
            weight.rank()
        )));
    }
    let (w1, w2) = (weight.dims()[1], weight.dims()[2]);
    let (r1, r2) = (input1.rank(), input2.rank());
    if r1 == 0 || r2 == 0 || input1.dims()[..r1 - 1] != input2.dims()[..r2 - 1] {
        return Err(oxtorch_tensor::Error::shape(format!(
            "bilinear(): input batch dimensions do not match: got {:?} and {:?}",
            input1.dims(),
            input2.dims()
        )));
    }
    if input1.dims()[r1 - 1] != w1 {
        return Err(oxtorch_tensor::Error::shape(format!(
            "bilinear(): input1 size does not match weight size: got {} but expected {w1}",
            input1.dims()[r1 - 1]
        )));
    }
    if input2.dims()[r2 - 1] != w2 {
        return Err(oxtorch_tensor::Error::shape(format!(
            "bilinear(): input2 size does not match weight size: got {} but expected {w2}",
            input2.dims()[r2 - 1]
        )));
    }
    if let Some(b) = bias {
        if b.rank() != 1 || b.dims()[0] != weight.dims()[0] {
            return Err(oxtorch_tensor::Error::shape(format!(
                "bilinear(): bias size does not match weight size: got {} but expected {}",
                b.dims().first().copied().unwrap_or(1),
                weight.dims()[0]
            )));
        }
    }
    let y = Tensor::einsum("...i,oij,...j->...o", &[input1, weight, input2])?;
    match bias {
        Some(b) => y.add(b),
        None => Ok(y),
    }
}

/// 1-D convolution; see [`Tensor::conv1d`].
pub fn conv1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: impl Into<Padding>,
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    input.conv1d(weight, bias, stride, padding, dilation, groups)
}

/// 2-D convolution; see [`Tensor::conv2d`].
pub fn conv2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: impl Into<Padding>,
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    input.conv2d(weight, bias, stride, padding, dilation, groups)
}

/// 3-D convolution; see [`Tensor::conv3d`].
pub fn conv3d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: impl Into<Padding>,
    dilation: &[usize],
    groups: usize,
) -> Result<Tensor> {
    input.conv3d(weight, bias, stride, padding, dilation, groups)
}

/// 1-D transposed convolution; see [`Tensor::conv_transpose1d`].
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    output_padding: &[usize],
    groups: usize,
    dilation: &[usize],
) -> Result<Tensor> {
    input.conv_transpose1d(weight, bias, stride, padding, output_padding, groups, dilation)
}

/// 2-D transposed convolution; see [`Tensor::conv_transpose2d`].
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    output_padding: &[usize],
    groups: usize,
    dilation: &[usize],
) -> Result<Tensor> {
    input.conv_transpose2d(weight, bias, stride, padding, output_padding, groups, dilation)
}

/// 3-D transposed convolution; see [`Tensor::conv_transpose3d`].
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose3d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[usize],
    padding: &[usize],
    output_padding: &[usize],
    groups: usize,
    dilation: &[usize],
) -> Result<Tensor> {
    input.conv_transpose3d(weight, bias, stride, padding, output_padding, groups, dilation)
}

/// 1-D max pooling (`stride` `None` means `kernel_size`).
pub fn max_pool1d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<Tensor> {
    input.max_pool1d(kernel_size, stride, padding, dilation, ceil_mode)
}

/// 1-D max pooling with the indices of the maxima (`return_indices=True`).
pub fn max_pool1d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    input.max_pool_nd_with_indices(1, kernel_size, stride, padding, dilation, ceil_mode)
}

/// 2-D max pooling (`stride` `None` means `kernel_size`).
pub fn max_pool2d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<Tensor> {
    input.max_pool2d(kernel_size, stride, padding, dilation, ceil_mode)
}

/// 2-D max pooling with the indices of the maxima (`return_indices=True`).
pub fn max_pool2d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    input.max_pool_nd_with_indices(2, kernel_size, stride, padding, dilation, ceil_mode)
}

/// 1-D average pooling.
pub fn avg_pool1d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    ceil_mode: bool,
    count_include_pad: bool,
) -> Result<Tensor> {
    input.avg_pool1d(kernel_size, stride, padding, ceil_mode, count_include_pad)
}

/// 2-D average pooling.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    input.avg_pool2d(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
}

/// 1-D adaptive average pooling.
pub fn adaptive_avg_pool1d(input: &Tensor, output_size: usize) -> Result<Tensor> {
    input.adaptive_avg_pool1d(output_size)
}

/// 2-D adaptive average pooling.
pub fn adaptive_avg_pool2d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    input.adaptive_avg_pool2d(output_size)
}

/// 1-D adaptive max pooling.
pub fn adaptive_max_pool1d(input: &Tensor, output_size: usize) -> Result<Tensor> {
    input.adaptive_max_pool1d(output_size)
}

/// 1-D adaptive max pooling with indices.
pub fn adaptive_max_pool1d_with_indices(input: &Tensor, output_size: usize) -> Result<(Tensor, Tensor)> {
    input.adaptive_max_pool_nd_with_indices(1, &[output_size])
}

/// 2-D adaptive max pooling.
pub fn adaptive_max_pool2d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    input.adaptive_max_pool2d(output_size)
}

/// 2-D adaptive max pooling with indices.
pub fn adaptive_max_pool2d_with_indices(input: &Tensor, output_size: &[usize]) -> Result<(Tensor, Tensor)> {
    input.adaptive_max_pool_nd_with_indices(2, output_size)
}

/// Resampling with `mode` `"nearest"`, `"nearest-exact"`, `"linear"`, `"bilinear"`, `"bicubic"` or
/// `"trilinear"`; see [`Tensor::interpolate`], and [`interpolate_with`] for torch's
/// `recompute_scale_factor` and `antialias`.
pub fn interpolate(
    input: &Tensor,
    size: Option<&[usize]>,
    scale_factor: Option<&[f64]>,
    mode: &str,
    align_corners: Option<bool>,
) -> Result<Tensor> {
    input.interpolate(size, scale_factor, mode, align_corners)
}

/// Pads `input` (torch's `F.pad`): `pad` lists `(before, after)` pairs from the last dim
/// backwards; `mode` is "constant" (with `value`, default 0), "reflect", "replicate" or "circular".
pub fn pad(input: &Tensor, pad: &[isize], mode: &str, value: Option<f64>) -> Result<Tensor> {
    input.pad(pad, mode, value)
}

/// Sliding blocks of `input` as columns (torch's `F.unfold`, im2col): `[N, C·kh·kw, L]`.
pub fn unfold(
    input: &Tensor,
    kernel_size: &[usize],
    dilation: &[usize],
    padding: &[usize],
    stride: &[usize],
) -> Result<Tensor> {
    input.im2col(kernel_size, dilation, padding, stride)
}

/// Columns of sliding blocks summed back into an image of `output_size` (torch's `F.fold`,
/// col2im).
pub fn fold(
    input: &Tensor,
    output_size: &[usize],
    kernel_size: &[usize],
    dilation: &[usize],
    padding: &[usize],
    stride: &[usize],
) -> Result<Tensor> {
    input.col2im(output_size, kernel_size, dilation, padding, stride)
}

/// Rows of `weight` picked by the indices `input`; [`embedding_with`] takes torch's other options
/// (`max_norm`, `norm_type`, `scale_grad_by_freq`, `sparse`).
pub fn embedding(input: &Tensor, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
    input.embedding(weight, padding_idx)
}

/// One-hot encoding (int64); `num_classes = -1` infers it.
pub fn one_hot(tensor: &Tensor, num_classes: i64) -> Result<Tensor> {
    tensor.one_hot(num_classes)
}

/// Layer normalisation over the trailing `normalized_shape` dims.
pub fn layer_norm(
    input: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    input.layer_norm(normalized_shape, weight, bias, eps)
}

/// Group normalisation.
pub fn group_norm(
    input: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    input.group_norm(num_groups, weight, bias, eps)
}

/// Batch normalisation; in training, given running stats are updated in place.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    input: &Tensor,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    input.batch_norm(running_mean, running_var, weight, bias, training, momentum, eps)
}

/// RMS normalisation (`eps` `None`: machine epsilon of the computation dtype, as torch).
pub fn rms_norm(
    input: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: Option<f64>,
) -> Result<Tensor> {
    input.rms_norm(normalized_shape, weight, eps)
}

/// Dropout with probability `p` when `training`.
pub fn dropout(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    input.dropout(p, training)
}

/// Channel dropout on `[N, C, L]` or unbatched `[C, L]` inputs (torch's `dropout1d`): each
/// channel is zeroed as a whole.
pub fn dropout1d(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    match input.rank() {
        3 => input.feature_dropout(p, training),
        2 => input.unsqueeze(0)?.feature_dropout(p, training)?.squeeze_dims(0),
        r => Err(oxtorch_tensor::Error::shape(format!(
            "dropout1d: Expected 2D or 3D input, but received a {r}D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
        ))),
    }
}

/// Channel dropout on `[N, C, H, W]` inputs (torch's `dropout2d`; like torch, a 3-D input is
/// taken as `[N, C, L]`).
pub fn dropout2d(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    input.feature_dropout(p, training)
}

/// Channel dropout on `[N, C, D, H, W]` or unbatched `[C, D, H, W]` inputs (torch's
/// `dropout3d`).
pub fn dropout3d(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    if input.rank() == 5 {
        input.feature_dropout(p, training)
    } else {
        input.unsqueeze(0)?.feature_dropout(p, training)?.squeeze_dims(0)
    }
}

/// `softmax(query @ key.T * scale + mask) @ value`; see [`Tensor::scaled_dot_product_attention`].
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<Tensor> {
    query.scaled_dot_product_attention(key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxtorch_tensor::tensor;

    #[test]
    fn softmax_rows_sum_to_one_and_match_reference() -> Result<()> {
        let x = tensor!([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]]);
        let s = softmax(&x, -1, None)?;
        let v = s.to_vec::<f32>()?;
        // torch.softmax(torch.tensor([1., 2., 3.]), 0)
        let expected = [0.090_030_57, 0.244_728_48, 0.665_240_94];
        for (a, b) in v[..3].iter().zip(expected) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        for a in &v[3..] {
            assert!((a - 1.0 / 3.0).abs() < 1e-6);
        }
        let ls = log_softmax(&x, 1, None)?.exp()?;
        assert!(ls.sub(&s)?.abs()?.max()?.item::<f32>()? < 1e-6);
        Ok(())
    }

    #[test]
    fn linear_matches_hand_computation() -> Result<()> {
        let x = tensor!([[1.0, 2.0]]);
        let w = tensor!([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        let b = tensor!([0.5, 0.5, 0.5]);
        assert_eq!(linear(&x, &w, Some(&b))?.to_vec::<f32>()?, vec![1.5, 2.5, 3.5]);
        Ok(())
    }

    #[test]
    fn dropout_zeroes_about_p_and_scales_the_rest() -> Result<()> {
        let _rng = crate::rng_lock();
        oxtorch_tensor::manual_seed(3);
        let x = Tensor::ones([20_000], ())?;
        let y = dropout(&x, 0.25, true)?;
        let v = y.to_vec::<f32>()?;
        let zeros = v.iter().filter(|&&e| e == 0.0).count() as f64 / v.len() as f64;
        assert!((zeros - 0.25).abs() < 0.02, "dropped fraction {zeros}");
        assert!(v.iter().all(|&e| e == 0.0 || (e - 1.0 / 0.75).abs() < 1e-6));
        // Same seed, same mask.
        oxtorch_tensor::manual_seed(3);
        assert!(dropout(&x, 0.25, true)?.equal(&y)?);
        assert!(dropout(&x, 0.25, false)?.equal(&x)?);
        assert!(dropout(&x, 1.0, true)?.equal(&x.zeros_like()?)?);
        assert!(dropout(&x, 1.5, true).is_err());
        assert!(dropout(&Tensor::ones([3], oxtorch_tensor::DType::I64)?, 0.5, true).is_err());
        Ok(())
    }

    #[test]
    fn attention_dropout_keeps_shapes_and_batch_norm_updates_running_stats() -> Result<()> {
        let _rng = crate::rng_lock();
        let q = Tensor::ones([2, 3, 4], ())?;
        let out = scaled_dot_product_attention(&q, &q, &q, None, 0.5, false, None, false)?;
        assert_eq!(out.dims(), &[2, 3, 4]);
        let x = tensor!([[1.0, 2.0], [3.0, 6.0]]);
        let (rm, rv) = (Tensor::zeros([2], ())?, Tensor::ones([2], ())?);
        batch_norm(&x, Some(&rm), Some(&rv), None, None, true, 0.5, 1e-5)?;
        // mean [2, 4]; unbiased var [2, 8]
        assert_eq!(rm.to_vec::<f32>()?, vec![1.0, 2.0]);
        assert_eq!(rv.to_vec::<f32>()?, vec![1.5, 4.5]);
        Ok(())
    }

    #[test]
    fn pad_and_activation_defaults_follow_torch() -> Result<()> {
        let x = tensor!([[1.0, 2.0, 3.0]]);
        assert_eq!(
            pad(&x, &[1, 2], "constant", Some(9.0))?.to_vec2::<f32>()?,
            vec![vec![9.0, 1.0, 2.0, 3.0, 9.0, 9.0]]
        );
        assert_eq!(pad(&x, &[1, 1], "reflect", None)?.to_vec2::<f32>()?, vec![vec![2.0, 1.0, 2.0, 3.0, 2.0]]);
        use crate::{Forward, CELU, ELU, GLU};
        assert_eq!((ELU::default().alpha, CELU::default().alpha, GLU::default().dim), (1.0, 1.0, -1));
        assert_eq!(GLU::default().forward(&tensor!([[1.0, 0.0]]))?.dims(), &[1, 1]);
        Ok(())
    }

    #[test]
    fn same_padding_keeps_the_size() -> Result<()> {
        let x = Tensor::ones([1, 1, 5, 6], ())?;
        let w = Tensor::ones([2, 1, 2, 3], ())?;
        let y = conv2d(&x, &w, None, &[1], Padding::Same, &[1], 1)?;
        assert_eq!(y.dims(), &[1, 2, 5, 6]);
        let valid: Padding = "valid".parse()?;
        assert_eq!(conv2d(&x, &w, None, &[1], valid, &[1], 1)?.dims(), &[1, 2, 4, 4]);
        assert!("full".parse::<Padding>().is_err());
        Ok(())
    }
}
