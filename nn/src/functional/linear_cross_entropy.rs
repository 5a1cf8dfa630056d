//! torch's `F.linear_cross_entropy`: the cross entropy of `linear(input, linear_weight,
//! linear_bias)` in one call, with torch's checks and messages. torch's chunked path
//! ([`LinearCrossEntropyOptions`]) only saves memory; here every call takes the reference path
//! (a linear, then [`cross_entropy`](crate::loss::cross_entropy)), so the options are validated
//! and accepted without changing the result.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::py_tuple;

/// torch's `nn.LinearCrossEntropyOptions` (the chunking configuration): validated as torch does,
/// then accepted without effect on the result (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LinearCrossEntropyOptions {
    /// allow `retain_graph=True` on backward (default `false`)
    pub allow_retain_graph: bool,
    /// batch rows per chunk (default `None`: one chunk); positive
    pub batch_chunk_size: Option<usize>,
    /// the chunk-size heuristic: `"auto"` (default), `"aspect_ratio"`, `"aspect_ratio:N"` (`N ≥ 1`)
    /// or `None`
    pub chunking_method: Option<String>,
    /// `"auto"` (default), `"accurate"` or `"compact"`
    pub acc_policy: String,
    /// the accumulation dtype (`None`: chosen by the op); float16/bfloat16/float32/float64
    pub acc_dtype: Option<DType>,
}

impl Default for LinearCrossEntropyOptions {
    fn default() -> Self {
        LinearCrossEntropyOptions {
            allow_retain_graph: false,
            batch_chunk_size: None,
            chunking_method: Some("auto".to_string()),
            acc_policy: "auto".to_string(),
            acc_dtype: None,
        }
    }
}

impl LinearCrossEntropyOptions {
    /// torch's `__post_init__` checks, in its order and words.
    pub fn validate(&self) -> Result<()> {
        if !["auto", "accurate", "compact"].contains(&self.acc_policy.as_str()) {
            return Err(Error::msg(format!(
                "invalid acc_policy: '{}'; expected one of 'auto', 'accurate', 'compact'",
                self.acc_policy
            )));
        }
        if let Some(method) = self.chunking_method.as_deref().filter(|m| *m != "auto") {
            let (name, factor) = method.split_once(':').unwrap_or((method, "1"));
            let digits = !factor.is_empty() && factor.bytes().all(|b| b.is_ascii_digit());
            let positive = digits && factor.bytes().any(|b| b != b'0');
            if name != "aspect_ratio" || !positive {
                return Err(Error::msg(format!("invalid chunking_method: '{method}'")));
            }
        }
        if self.batch_chunk_size == Some(0) {
            return Err(Error::msg("batch_chunk_size must be positive int or None, got 0"));
        }
        if let Some(dt) = self.acc_dtype {
            if !matches!(dt, DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
                return Err(Error::msg(format!(
                    "acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, torch.float64}}, got torch.{}. Pass acc_dtype=None to let the op pick automatically.",
                    dt.name()
                )));
            }
        }
        Ok(())
    }

    /// torch's `repr` of the options (`LinearCrossEntropyOptions(allow_retain_graph=False, ...)`).
    pub fn repr(&self) -> String {
        let opt_str = |s: &Option<String>| s.as_ref().map_or("None".to_string(), |s| format!("'{s}'"));
        format!(
            "LinearCrossEntropyOptions(allow_retain_graph={}, batch_chunk_size={}, chunking_method={}, acc_policy='{}', acc_dtype={})",
            crate::module::py_bool(self.allow_retain_graph),
            self.batch_chunk_size.map_or("None".to_string(), |n| n.to_string()),
            opt_str(&self.chunking_method),
            self.acc_policy,
            self.acc_dtype.map_or("None".to_string(), |d| format!("torch.{}", d.name()))
        )
    }
}

/// torch's `F.linear_cross_entropy(input, linear_weight, target, *, linear_bias=None,
/// weight=None, reduction="mean", ignore_index=None, label_smoothing=0.0, options=None)`:
/// `cross_entropy(linear(input, W, b).reshape(*batch, C, *out_features), target, ...)` for
/// `input` `[in_features]` or `[N, in_features]` and `linear_weight` `[C, *out_features,
/// in_features]` (`linear_bias` `[C, *out_features]`). `target` holds class indices (int64), or
/// class probabilities when shaped like the logits (then `ignore_index` must be `None`);
/// `ignore_index` `None` is torch's -100. With `options` (and no label smoothing) a float16/bfloat16
/// input is computed in the options' `acc_dtype` (float32 when unset) and rounded back once, as
/// torch's chunked path; the chunking itself (a memory saving) changes nothing.
#[allow(clippy::too_many_arguments)]
pub fn linear_cross_entropy(
    input: &Tensor,
    linear_weight: &Tensor,
    target: &Tensor,
    linear_bias: Option<&Tensor>,
    weight: Option<&Tensor>,
    reduction: &str,
    ignore_index: Option<i64>,
    label_smoothing: f64,
    options: Option<&LinearCrossEntropyOptions>,
) -> Result<Tensor> {
    if input.rank() < 1 || input.rank() > 2 {
        return Err(Error::msg(format!("expected input with dimensionality 1 or 2, got {}", input.rank())));
    }
    if linear_weight.rank() < 2 {
        return Err(Error::msg(format!(
            "expected linear_weight with dimensionality at least 2, got {}",
            linear_weight.rank()
        )));
    }
    let wdims = linear_weight.dims();
    let num_batches = &input.dims()[..input.rank() - 1];
    let in_features = input.dims()[input.rank() - 1];
    if in_features != wdims[wdims.len() - 1] {
        return Err(Error::msg(format!(
            "expected equal input and linear_weight last dimensions (in_features), got {} and {}, respectively",
            in_features,
            wdims[wdims.len() - 1]
        )));
    }
    let out_features = &wdims[1..wdims.len() - 1];
    let class_dims: Vec<usize> = wdims[..wdims.len() - 1].to_vec();
    if let Some(b) = linear_bias {
        if b.dims() != class_dims.as_slice() {
            return Err(Error::msg(format!(
                "expected linear_bias shape {}, got {}",
                py_tuple(&class_dims),
                py_tuple(b.dims())
            )));
        }
    }
    if !out_features.is_empty() && num_batches.is_empty() {
        return Err(Error::msg(format!(
            "K-dimensional loss defined by linear_weight shape {} requires batched input, (N, {in_features}), got unbatched input with shape {}",
            py_tuple(wdims),
            py_tuple(input.dims())
        )));
    }
    let mut logits_shape: Vec<usize> = num_batches.to_vec();
    logits_shape.extend_from_slice(&class_dims);
    let probabilities = target.dims() == logits_shape.as_slice();
    if probabilities && ignore_index.is_some() {
        return Err(Error::msg("ignore_index cannot be specified when target contains probabilities"));
    }
    if let Some(options) = options {
        options.validate()?;
    }
    let ignore_index = ignore_index.unwrap_or(-100);
    let classes: usize = class_dims.iter().product();
    let (w, b) = if out_features.is_empty() {
        (linear_weight.clone(), linear_bias.cloned())
    } else {
        (
            linear_weight.reshape([classes, in_features])?,
            linear_bias.map(|b| b.reshape([classes])).transpose()?,
        )
    };
    // torch takes its chunked path with `options` (and no label smoothing); for a half-precision
    // input it accumulates in `acc_dtype` (float32 when unset): the product and the loss in that
    // dtype, rounded back once.
    let half = matches!(input.dtype(), DType::F16 | DType::BF16);
    let acc = match options.map(|o| o.acc_dtype) {
        Some(acc) if half && label_smoothing == 0.0 => {
            Some(acc.unwrap_or(DType::F32)).filter(|&a| a != input.dtype())
        }
        _ => None,
    };
    if let Some(acc) = acc {
        let cast = |t: &Tensor| t.to_dtype(acc);
        let logits = cast(input)?
            .linear(&cast(&w)?, b.as_ref().map(cast).transpose()?.as_ref())?
            .reshape(logits_shape)?;
        let target = if probabilities { cast(target)? } else { target.clone() };
        let weight = weight.map(cast).transpose()?;
        let loss =
            crate::loss::cross_entropy(&logits, &target, weight.as_ref(), ignore_index, reduction, 0.0)?;
        return loss.to_dtype(input.dtype());
    }
    let logits = input.linear(&w, b.as_ref())?.reshape(logits_shape)?;
    crate::loss::cross_entropy(&logits, target, weight, ignore_index, reduction, label_smoothing)
}
