//! Neural-network kernels: convolution, pooling, interpolation, embedding, fused cross-entropy.
//!
//! The tensor layer checks arguments (with torch's messages) and computes the index geometry; these
//! prims only move and combine data. Convolutions are `Im2col` + matmul (and matmul + `Col2im` for the
//! transposed forms), every pooling op is one `MaxPool`/`AvgPool` over precomputed windows, and every
//! interpolation mode is one `Resample` over precomputed per-dim taps.

/// One pooling window along one spatial dim, `(start, step, len, divisor)`: input positions
/// `start + j * step` for `j < len` (those outside `[0, size)` are skipped), and the factor this dim
/// contributes to an average's divisor.
pub type PoolTap = (isize, usize, usize, usize);

/// Neural-network kernels: convolution, pooling, interpolation, embedding.
///
/// Each variant carries its parameters; inputs are listed in the variant's doc. `kernel`, `stride`,
/// `padding` and `dilation` hold one entry per spatial dim.
#[derive(Clone, Debug, PartialEq)]
pub enum NnOp {
    /// `unfold`/im2col: input `[B, C, *spatial]` (zero padded) to `[B, C * prod(kernel), L]`, rows
    /// ordered channel-major then kernel offsets, `L` the window positions in row-major order.
    Im2col {
        /// kernel size per spatial dim
        kernel: Vec<usize>,
        /// stride per spatial dim
        stride: Vec<usize>,
        /// zero padding on both sides per spatial dim
        padding: Vec<usize>,
        /// kernel dilation per spatial dim
        dilation: Vec<usize>,
    },
    /// `fold`/col2im, the adjoint of [`NnOp::Im2col`]: input `[B, C * prod(kernel), L]` to
    /// `[B, C, *output_size]` (column `l` is grid position `l` in row-major order), overlapping contributions summed (positions in the padding dropped).
    /// Sums are taken in f64 (floats) or i64 (integers) and rounded once, except f16, which rounds
    /// after every addition as torch's f16 kernel does.
    Col2im {
        /// spatial sizes of the output
        output_size: Vec<usize>,
        /// window positions per spatial dim (`L` is their product); may be fewer than fit the output
        grid: Vec<usize>,
        /// kernel size per spatial dim
        kernel: Vec<usize>,
        /// stride per spatial dim
        stride: Vec<usize>,
        /// padding per spatial dim
        padding: Vec<usize>,
        /// kernel dilation per spatial dim
        dilation: Vec<usize>,
    },
    /// Max pooling of input `[*lead, *spatial]` over `taps.len()` trailing spatial dims: output
    /// `(o_1, ..., o_n)` is the maximum over the window `taps[0][o_1] × ... × taps[n-1][o_n]` (NaN
    /// wins). Two outputs: `[*lead, *out]` values and i64 flat spatial indices of the maxima.
    MaxPool {
        /// per spatial dim, one window per output position
        taps: Vec<Vec<PoolTap>>,
    },
    /// Average pooling, windows as in [`NnOp::MaxPool`]: the window's sum divided by the product of
    /// its taps' divisors, or by `divisor_override`. Integer inputs divide with truncation (torch).
    AvgPool {
        /// per spatial dim, one window per output position
        taps: Vec<Vec<PoolTap>>,
        /// replaces the divisor
        divisor_override: Option<i64>,
    },
    /// Separable resampling of input `[*lead, *spatial]` over `taps.len()` trailing dims: output
    /// `(o_1, ..., o_n)` is `Σ w_1 ⋯ w_n · x[i_1, ..., i_n]` over the `(i, w)` pairs of `taps[d][o_d]`
    /// (nearest, linear and cubic interpolation). Computed in f64, rounded once.
    Resample {
        /// per spatial dim, per output position, the `(input index, weight)` pairs
        taps: Vec<Vec<Vec<(usize, f64)>>>,
    },
    /// Embedding lookup: inputs `(weight [V, D], indices)`; the indices are i64 (a documented
    /// exception to the shared-dtype rule) already validated to lie in `[0, V)`. Output `[*indices, D]`.
    Embedding,
    /// Cross-entropy of logit rows against class indices: `cross_entropy`'s `log_softmax` and
    /// `nll_loss` fused (no class weights, no label smoothing; measured to pay on a language model's
    /// `[tokens, vocab]` logits, which the composition walks about ten times). Inputs `(logits [N, C],
    /// target [N])`, the target i64 (a documented exception to the shared-dtype rule) already
    /// validated to lie in `[0, C)` or equal `ignore_index`. Two outputs: `[N]` losses
    /// `-log_softmax(x)[t]` (0 for ignored rows) and `[N, 2]` row statistics (the maximum and the log
    /// of the shifted exponentials' sum) for [`NnOp::CrossEntropyBackward`].
    CrossEntropy {
        /// target value whose rows are left out
        ignore_index: i64,
    },
    /// The gradient of [`NnOp::CrossEntropy`]'s losses: inputs `(logits [N, C], target [N] i64,
    /// stats [N, 2], grad [N])`, output `[N, C]` `(softmax(x) - onehot(t)) * grad`; an ignored row
    /// is `softmax(x) * 0` (zero, NaN where the softmax is NaN, as torch's composition gives).
    CrossEntropyBackward {
        /// target value whose rows are left out
        ignore_index: i64,
    },
    /// The gradient of the tanh-approximated gelu ([`UnaryOp::GeluTanh`](super::UnaryOp::GeluTanh))
    /// in one pass (the composition takes 13): inputs `(grad, x)` of one shape, output
    /// `grad * gelu_tanh'(x)`.
    GeluTanhBackward,
    /// 2-D convolution as one CPU kernel that never writes the whole im2col matrix: inputs
    /// `(x [B, C, H, W], weight [C_out, C / groups, kH, kW])` of one float dtype, output
    /// `[B, C_out, OH, OW]` (no bias). Its gradient recomputes the columns. Other devices take the
    /// [`NnOp::Im2col`] + matmul form, with the same values.
    Conv2d {
        /// stride per spatial dim
        stride: [usize; 2],
        /// zero padding on both sides per spatial dim
        padding: [usize; 2],
        /// kernel dilation per spatial dim
        dilation: [usize; 2],
        /// channel groups
        groups: usize,
    },
    /// `linear` with a bias, `x wᵀ + b`, as one CPU op: inputs `(x [M, K], weight [N, K], bias
    /// [N])` of one float dtype, output `[M, N]`. Where the CPU's f32 product kernel runs it, the
    /// bias is added as each output tile is first written instead of in a pass of its own. Other
    /// devices take matmul + add.
    Linear,
    /// Scaled dot-product attention as one CPU kernel that never writes the whole score matrix:
    /// inputs `(q [B, H, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev])` and, when `masked`, an additive
    /// mask `[B, H, L, S]` (usually an expanded view), all f32 (the CPU kernel's one dtype); `H` a multiple of
    /// `Hk` (query head `h` reads key/value head `h / (H / Hk)`). Output `[B, H, L, Ev]`:
    /// `softmax(q kᵀ · scale + mask) v` per head, with position `j > i` of row `i` left out when
    /// `causal`, and zeros for a row whose every position is masked (`-inf`), as the composition in
    /// `scaled_dot_product_attention` gives. Other devices, and autograd (which keeps the
    /// composition's probabilities for the backward pass), take that composition.
    Attention {
        /// the factor on `q kᵀ`
        scale: f64,
        /// query `i` attends to keys `j <= i` only
        causal: bool,
        /// a fourth input holds the additive mask
        masked: bool,
    },
    /// Layer normalisation of the rows of `x` `[R, C]` as one CPU kernel: `(x - mean) /
    /// sqrt(var + eps) · weight + bias` per row (biased variance), with `weight` `[C]` and `bias`
    /// `[C]` as the next inputs when present; all f32. Output `[R, C]`. `layer_norm` flattens its
    /// normalised trailing dims into `C`; other devices, and autograd, take its composition.
    LayerNorm {
        /// added to the variance
        eps: f64,
        /// an input holds the scale
        weight: bool,
        /// an input holds the shift
        bias: bool,
    },
}

impl NnOp {
    /// Number of sliding-window positions along one dim of size `size`.
    pub fn window_positions(
        size: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
        dilation: usize,
    ) -> usize {
        let span = dilation * (kernel.max(1) - 1) + 1;
        let padded = size + 2 * padding;
        if padded < span || stride == 0 {
            0
        } else {
            (padded - span) / stride + 1
        }
    }

    /// torch's name for the op.
    pub fn name(&self) -> &'static str {
        match self {
            NnOp::Im2col { .. } => "im2col",
            NnOp::Col2im { .. } => "col2im",
            NnOp::MaxPool { .. } => "max_pool",
            NnOp::AvgPool { .. } => "avg_pool",
            NnOp::Resample { .. } => "interpolate",
            NnOp::Embedding => "embedding",
            NnOp::CrossEntropy { .. } => "cross_entropy",
            NnOp::CrossEntropyBackward { .. } => "cross_entropy_backward",
            NnOp::GeluTanhBackward => "gelu_backward",
            NnOp::Conv2d { .. } => "conv2d",
            NnOp::Attention { .. } => "scaled_dot_product_attention",
            NnOp::Linear => "linear",
            NnOp::LayerNorm { .. } => "layer_norm",
        }
    }

    /// Number of tensor inputs.
    pub fn arity(&self) -> usize {
        match self {
            NnOp::Embedding | NnOp::CrossEntropy { .. } | NnOp::GeluTanhBackward | NnOp::Conv2d { .. } => 2,
            NnOp::CrossEntropyBackward { .. } => 4,
            NnOp::Attention { masked, .. } => 3 + usize::from(*masked),
            NnOp::Linear => 3,
            NnOp::LayerNorm { weight, bias, .. } => 1 + usize::from(*weight) + usize::from(*bias),
            _ => 1,
        }
    }

    /// Shapes of the outputs given the input shapes; `output_lens` (element counts of the outputs the
    /// backend produced) serves the ops whose output size depends on the data, such as `nonzero`.
    pub fn output_shapes(&self, inputs: &[&[usize]], _output_lens: &[usize]) -> Vec<Vec<usize>> {
        let x = inputs[0];
        let pooled = |n: usize, out: Vec<usize>| {
            let mut s = x[..x.len() - n].to_vec();
            s.extend(out);
            s
        };
        match self {
            NnOp::Im2col { kernel, stride, padding, dilation } => {
                let n = kernel.len();
                let sp = &x[x.len() - n..];
                let l: usize = (0..n)
                    .map(|d| Self::window_positions(sp[d], kernel[d], stride[d], padding[d], dilation[d]))
                    .product();
                vec![vec![x[0], x[1] * kernel.iter().product::<usize>(), l]]
            }
            NnOp::Col2im { output_size, kernel, .. } => {
                let k = kernel.iter().product::<usize>().max(1);
                let mut s = vec![x[0], x[1] / k];
                s.extend(output_size);
                vec![s]
            }
            NnOp::MaxPool { taps } => {
                let s = pooled(taps.len(), taps.iter().map(Vec::len).collect());
                vec![s.clone(), s]
            }
            NnOp::AvgPool { taps, .. } => vec![pooled(taps.len(), taps.iter().map(Vec::len).collect())],
            NnOp::Resample { taps } => vec![pooled(taps.len(), taps.iter().map(Vec::len).collect())],
            NnOp::Embedding => {
                let mut s = inputs[1].to_vec();
                s.push(x[1]);
                vec![s]
            }
            NnOp::CrossEntropy { .. } => vec![vec![x[0]], vec![x[0], 2]],
            NnOp::CrossEntropyBackward { .. } => vec![x.to_vec()],
            NnOp::GeluTanhBackward => vec![inputs[1].to_vec()],
            NnOp::Conv2d { stride, padding, dilation, .. } => {
                let w = inputs[1];
                let pos =
                    |d: usize| Self::window_positions(x[2 + d], w[2 + d], stride[d], padding[d], dilation[d]);
                vec![vec![x[0], w[0], pos(0), pos(1)]]
            }
            NnOp::Linear => vec![vec![x[0], inputs[1][0]]],
            NnOp::LayerNorm { .. } => vec![x.to_vec()],
            NnOp::Attention { .. } => {
                let mut s = x.to_vec();
                if let (Some(last), Some(&ev)) = (s.last_mut(), inputs[2].last()) {
                    *last = ev;
                }
                vec![s]
            }
        }
    }
}
