//! torch's full `F.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
//! sparse)`, and the gradient scaling by frequency it shares with `embedding_bag`.

use oxtorch_tensor::autograd::{Function, FunctionCtx};
use oxtorch_tensor::{DType, Error, Result, Tensor};

/// The identity whose backward multiplies the gradient by a fixed factor (broadcast), one per row
/// looked up: torch's `scale_grad_by_freq`, one over the row's count in the input.
pub(crate) struct ScaleGrad {
    /// the factors, broadcastable to the input (in its dtype)
    pub(crate) scale: Tensor,
    /// the `grad_fn` name (torch's op whose backward divides by the counts)
    pub(crate) name: &'static str,
}

impl Function for ScaleGrad {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].clone()])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].mul(&self.scale)?)])
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

impl ScaleGrad {
    /// `x` unchanged, its gradient multiplied by `scale`.
    pub(crate) fn scale(x: &Tensor, scale: Tensor, name: &'static str) -> Result<Tensor> {
        Ok(ScaleGrad { scale, name }.apply(std::slice::from_ref(x))?.swap_remove(0))
    }
}

/// The identity whose backward is an error: torch's sparse embedding gradient refuses
/// `scale_grad_by_freq` when it is computed, not at the lookup.
pub(crate) struct RefuseGrad {
    /// torch's message
    pub(crate) msg: &'static str,
    /// the node's name
    pub(crate) name: &'static str,
}

impl Function for RefuseGrad {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].clone()])
    }

    fn backward(&self, _ctx: &FunctionCtx, _grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Err(Error::msg(self.msg))
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

/// The options of torch's `F.embedding` beyond the indices and the table, with torch's defaults
/// (`padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmbeddingOptions {
    /// the row that gets no gradient (negative counts from the end)
    pub padding_idx: Option<i64>,
    /// first renormalise, in place and without recording it for autograd, the rows looked up whose
    /// `norm_type`-norm exceeds this (`None`: never)
    pub max_norm: Option<f64>,
    /// the `p` of the norm compared with `max_norm`
    pub norm_type: f64,
    /// divide each row's gradient by the number of times it appears in the input
    pub scale_grad_by_freq: bool,
    /// torch's sparse gradient: accepted, the gradient stays dense (oxtorch has no sparse
    /// tensors), with the same values; torch's backward refuses it with `scale_grad_by_freq`, and
    /// so does this one
    pub sparse: bool,
}

impl Default for EmbeddingOptions {
    fn default() -> Self {
        EmbeddingOptions {
            padding_idx: None,
            max_norm: None,
            norm_type: 2.0,
            scale_grad_by_freq: false,
            sparse: false,
        }
    }
}

/// torch's `F.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
/// sparse)`: the rows of `weight` (`[num_embeddings, embedding_dim]`) picked by the int64 or int32
/// indices `input`, `[*input, embedding_dim]`.
///
/// - `padding_idx` (negative counts from the end; within `num_embeddings`) gets no gradient; its
///   row is read as it is.
/// - `max_norm` first rescales in place, under no-grad, each distinct row named in `input` whose
///   `norm_type`-norm exceeds it, by `max_norm / (norm + 1e-7)` (torch's `embedding_renorm_`, see
///   [`crate::Embedding::embedding_renorm_`]): `weight` itself changes, as torch's does.
/// - `scale_grad_by_freq` divides the gradient of each lookup by the number of times its row
///   appears in `input` (padding lookups counted, as torch's backward counts them).
/// - `sparse` is accepted; the gradient is dense, with the same values. With
///   `scale_grad_by_freq` too, the backward pass fails, as torch's sparse gradient does.
///
/// Errors are torch's, in its order.
pub fn embedding_with(input: &Tensor, weight: &Tensor, options: EmbeddingOptions) -> Result<Tensor> {
    // torch's Python wrapper: padding_idx checked against weight.size(0) and made non-negative.
    let padding_idx = match options.padding_idx {
        Some(p) => {
            let Some(&v) = weight.dims().first() else {
                return Err(Error::msg("Dimension specified as 0 but tensor has no dimensions"));
            };
            let v = v as i64;
            if p >= v || p < -v {
                return Err(Error::msg("Padding_idx must be within num_embeddings"));
            }
            Some(if p < 0 { p + v } else { p })
        }
        None => None,
    };
    if let Some(max_norm) = options.max_norm {
        crate::Embedding::embedding_renorm_(weight, input, max_norm, options.norm_type)?;
    }
    let out = input.embedding(weight, padding_idx)?;
    if !(options.scale_grad_by_freq && out.requires_grad()) {
        return Ok(out);
    }
    if options.sparse {
        let msg = "embedding_backward: scale_grad_by_freq not supported with sparse gradients";
        let refuse = RefuseGrad { msg, name: "EmbeddingBackward0" };
        return Ok(refuse.apply(std::slice::from_ref(&out))?.swap_remove(0));
    }
    // Each lookup's count: a histogram of the indices over the rows, read back at the indices
    // (tensor ops: no read back to the host).
    let idx = input.to_dtype(DType::I64)?.reshape([-1])?;
    let ones = Tensor::ones([idx.numel()], (DType::F64, weight.device()))?;
    let counts =
        Tensor::zeros([weight.dims()[0]], (DType::F64, weight.device()))?.index_add(0, &idx, &ones, 1.0)?;
    // As torch's backward: the factor `1 / count` in double, then in the weight's dtype.
    let mut shape = input.dims().to_vec();
    shape.push(1);
    let scale = counts.index_select(0, &idx)?.reciprocal()?.reshape(shape)?.to_dtype(weight.dtype())?;
    ScaleGrad::scale(&out, scale, "EmbeddingBackward0")
}
